//! What `serve` does with one verified event, in order: claim its dedupe key, settle an unknown
//! send through its correlation reference, apply STOP/START to the suppression list, hand it on
//! (a flushed stdout line, a forward answered 2xx), then mark the key done. Any failure frees
//! the key, so the provider's redelivery is handled; a key handled already is a duplicate.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sms_sdk::reconcile::{Observed, Reconciler};
use sms_sdk::store::suppression::{Action, Applied};
use sms_sdk::store::{ClaimToken, DEFAULT_LEASE, DEFAULT_RETENTION, DedupeClaim, Settled, Store, Stores};
use sms_sdk::suppression::{Fed, Feeder};
use sms_sdk::webhook::SmsEvent;
use tokio::sync::{mpsc, oneshot};

use super::forward::Forwarder;

/// A line for the command's stdout, and who waits for it to be flushed.
pub(crate) type StdoutLine = (Vec<u8>, oneshot::Sender<bool>);

/// Where verified events go.
#[derive(Debug, Clone)]
pub(crate) struct Outputs {
    /// JSON lines on stdout, written (and flushed) by the command's main task.
    pub(crate) stdout: Option<mpsc::Sender<StdoutLine>>,
    /// A POST to the application.
    pub(crate) forward: Option<Forwarder>,
}

/// What became of an event that was not refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Handled {
    /// Settled, fed and handed on; its key is done. `settled` names the idempotency key whose
    /// unknown send the event settled, if it did.
    HandedOn {
        /// The key settled as accepted.
        settled: Option<String>,
        /// What the event did to the suppression list, when it changed it: `added to` or
        /// `removed from`.
        suppression: Option<&'static str>,
    },
    /// Handled before: answered 2xx, not handed on again.
    Duplicate,
    /// Another delivery of it is being handled right now: answered 409, so the provider tries again.
    InFlight,
}

/// Why an event was not handled (answered 503; its key stays free).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failed {
    /// The step that failed: `dedupe`, `settle`, `suppression` or `hand-on`.
    pub(crate) step: &'static str,
    /// What went wrong (no secret, no number).
    pub(crate) reason: String,
}

impl Failed {
    fn new(step: &'static str, reason: &dyn std::fmt::Display) -> Self {
        Self { step, reason: reason.to_string() }
    }
}

/// The steps every verified event takes.
#[derive(Clone)]
pub(crate) struct Pipeline {
    dedupe: Arc<dyn Store>,
    reconciler: Reconciler,
    feeder: Feeder,
    outputs: Outputs,
    lease: Duration,
}

impl Pipeline {
    /// The pipeline over `stores` (dedupe keys and records in one, the suppression list beside
    /// them) handing events to `outputs`.
    pub(crate) fn new(stores: &Stores, outputs: Outputs) -> Self {
        Self {
            dedupe: Arc::clone(&stores.records),
            reconciler: Reconciler::new(Arc::clone(&stores.records)),
            feeder: Feeder::new(Arc::clone(&stores.suppression)),
            outputs,
            lease: DEFAULT_LEASE,
        }
    }

    /// Handles `event`, received at `url` (the signed URL: its query may carry the send's
    /// correlation reference).
    ///
    /// # Errors
    /// The step that failed; the event's key is free again.
    pub(crate) async fn handle(&self, event: &SmsEvent, url: &str) -> Result<Handled, Failed> {
        let key = event.dedupe_key.as_str();
        let token = match self.dedupe.claim_at(key, SystemTime::now(), self.lease).await {
            Ok(DedupeClaim::Claimed(token)) => token,
            Ok(DedupeClaim::Done) => return Ok(Handled::Duplicate),
            // `DedupeClaim` is non-exhaustive: anything but a claim or done is someone else's.
            #[allow(clippy::wildcard_enum_match_arm)]
            Ok(_) => return Ok(Handled::InFlight),
            Err(error) => return Err(Failed::new("dedupe", &error)),
        };
        let claim = Claim { store: Arc::clone(&self.dedupe), key: key.to_owned(), token: Some(token) };
        let observed = self.reconciler.observe(event, url).await.map_err(|e| Failed::new("settle", &e))?;
        let settled = match observed {
            Observed::Reference(Settled::Accepted { key }) => Some(key),
            // Nothing settled (or an outcome added later): nothing to say.
            Observed::Ignored | Observed::Reference(_) | _ => None,
        };
        let fed = self.feeder.feed(event, SystemTime::now()).await.map_err(|e| Failed::new("suppression", &e))?;
        let suppression = match fed {
            Fed::Applied { action: Action::OptOut, applied: Applied::Recorded } => Some("added to"),
            Fed::Applied { action: Action::OptIn, applied: Applied::Recorded } => Some("removed from"),
            // Stale, replayed, ignored (or a kind added later): the list is as it was.
            Fed::Ignored | Fed::Applied { .. } | _ => None,
        };
        self.hand_on(event).await.map_err(|e| Failed::new("hand-on", &e))?;
        // A failed commit leaves the claim to run out (see `Claim::commit`); the event was handed on.
        let _ = claim.commit().await;
        Ok(Handled::HandedOn { settled, suppression })
    }

    /// Writes the event to stdout and posts it to the application, as configured.
    async fn hand_on(&self, event: &SmsEvent) -> Result<(), String> {
        let body = serde_json::to_vec(event).map_err(|e| format!("the event cannot be written as JSON: {e}"))?;
        if let Some(stdout) = &self.outputs.stdout {
            let mut line = body.clone();
            line.push(b'\n');
            let (flushed, written) = oneshot::channel();
            stdout.send((line, flushed)).await.map_err(|_| "stdout is closed".to_owned())?;
            if !written.await.unwrap_or(false) {
                return Err("stdout could not be written".to_owned());
            }
        }
        if let Some(forward) = &self.outputs.forward {
            forward.forward(&event.dedupe_key, &body).await?;
        }
        Ok(())
    }
}

/// A claimed dedupe key: committed once the event was handed on, released otherwise (also
/// when the request's future is dropped: the deadline, a client gone, a shutdown).
struct Claim {
    store: Arc<dyn Store>,
    key: String,
    token: Option<ClaimToken>,
}

impl Claim {
    /// Marks the key done. A failed commit leaves the claim to run out: a redelivery after its
    /// lease is handed on again (at least once), never lost.
    async fn commit(mut self) -> Result<(), sms_sdk::store::StoreError> {
        self.token = None;
        self.store.commit_at(&self.key, SystemTime::now(), DEFAULT_RETENTION).await
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let Some(token) = self.token.take() else { return };
        let (store, key) = (Arc::clone(&self.store), std::mem::take(&mut self.key));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = store.release(&key, &token).await;
            });
        }
    }
}
