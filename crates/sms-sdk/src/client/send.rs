//! One send through the pipeline: the key (joining a send in flight, or the store's record),
//! correlation, the `before_send` policy, the provider chain, then the record and the hooks.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use futures_util::FutureExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::adapter::UnknownReason;
use crate::client::failover::Chain;
use crate::client::single_flight::{Flight, follow};
use crate::encoding::{SegmentPreview, estimate_segments};
use crate::error::{Attempt, Error};
use crate::hooks::{AcceptedEvent, AttemptEvent, BeforeSendContext, FailureEvent, HookBase, Hooks, PolicyDecision};
use crate::message::Message;
use crate::metrics;
use crate::receipt::{Receipt, new_send_id};
use crate::redact::mask_phone_number;
use crate::store::{Claim, FinalRecord, Finalized, Fingerprint, IdempotencyStore, Record, Reservation, ReservationId};
use crate::validate::{self, Candidate};

use super::{Failover, Idempotency, Inner, SendOptions};

/// The send itself, as [`Client::send_with`](super::Client::send_with) describes it: validation, the key
/// (joining a send in flight with it, or the store), then the provider chain.
pub(super) async fn dispatch(inner: &Inner, message: &Message, options: SendOptions) -> Result<Receipt, Error> {
    let preview = estimate_segments(&message.body);
    let chain = validate::candidates(message, &inner.adapters, inner.failover == Failover::OnEligibleRejection)?;
    let (cancel, stop) = (options.cancel.as_ref(), options.stop.as_ref());
    if [cancel, stop].into_iter().flatten().any(CancellationToken::is_cancelled) {
        return Err(Error::aborted(Vec::new()));
    }
    let requested = AtomicBool::new(false);
    let policy_override = options.policy_override;
    let send = Dispatch {
        inner,
        message,
        preview: &preview,
        cancel,
        stop,
        requested: &requested,
        policy_override: &policy_override,
    };
    let Some(key) = message.idempotency_key.as_deref() else {
        return send.execute(chain, None).await;
    };
    let fingerprint = Fingerprint::of_message(message, |name| inner.adapters.iter().any(|a| a.info().name == name));
    match inner.flights.join(key, &fingerprint, &requested)? {
        Flight::Follow(receiver) => follow(receiver).await,
        Flight::Lead(lead) => {
            let result = send.with_key(key, &fingerprint, chain).await;
            lead.finish(&result);
            result
        }
    }
}

/// One logical send in progress.
struct Dispatch<'a> {
    inner: &'a Inner,
    message: &'a Message,
    preview: &'a SegmentPreview,
    /// The caller's cancellation, when it gave one.
    cancel: Option<&'a CancellationToken>,
    /// The caller's stop (no new request), when it gave one.
    stop: Option<&'a CancellationToken>,
    /// Set when the first request starts (see [`Flights::join`]).
    requested: &'a AtomicBool,
    /// Why the caller overrides the `before_send` policies' refusals, if it does.
    policy_override: &'a Option<String>,
}

/// A reservation this send holds in the store.
struct Held<'a> {
    key: &'a str,
    id: ReservationId,
    idempotency: &'a Idempotency,
}

impl Held<'_> {
    /// Records the outcome. A store failure here is logged and ignored: the outcome stands, and
    /// the leftover reservation reads as in progress, then as unknown, never as free.
    async fn finalize(&self, record: FinalRecord) {
        let Idempotency { store, ttl, .. } = self.idempotency;
        let timer = metrics::StoreTimer::start();
        let finalized = store.finalize(self.key, &self.id, record, *ttl, SystemTime::now()).await;
        timer.finish("finalize", finalized.is_ok());
        match finalized {
            Ok(Finalized::Written) => {}
            Ok(Finalized::NotOwner) => tracing::warn!("idempotency reservation lost before finalize"),
            Err(error) => tracing::warn!(%error, "idempotency finalize failed; the outcome stands"),
        }
    }
}

/// The providers that carry the reference in the message itself and echo it in every status
/// webhook, whichever URL receives them (Vonage's `client_ref`, Sinch's `client_reference`,
/// AWS's `Context`, Bandwidth's `tag`, Infobip's `callbackData` and `messageId`).
const BODY_REFERENCES: [&str; 5] = ["vonage", "sinch", "aws", "bandwidth", "infobip"];

/// Gives every candidate the key's correlation reference, once the store remembers it. Only a
/// send that has somewhere for it gets one: a candidate with a per-message callback URL, or
/// a provider of [`BODY_REFERENCES`]. Without a secret, or a store without a correlation index,
/// the chain is unchanged; a store failure here is logged and
/// the send goes on without a reference (only automatic reconciliation is lost, never the send).
async fn correlate(idempotency: &Idempotency, key: &str, mut chain: Vec<Candidate>, now: SystemTime) -> Vec<Candidate> {
    let (Some(correlation), Some(index)) = (&idempotency.correlation, idempotency.store.references()) else {
        return chain;
    };
    let echoed = |(adapter, outbound): &Candidate| {
        outbound.webhook_url.is_some() || BODY_REFERENCES.contains(&adapter.info().name.as_str())
    };
    if !chain.iter().any(echoed) {
        return chain;
    }
    let reference = crate::correlation::reference(&correlation.secret, key);
    let timer = metrics::StoreTimer::start();
    let remembered = index.remember_reference(&reference, key, now, correlation.retention).await;
    timer.finish("remember_reference", remembered.is_ok());
    if let Err(error) = remembered {
        tracing::warn!(%error, "correlation reference not stored; sending without one");
        return chain;
    }
    for (_, outbound) in &mut chain {
        outbound.correlation = Some(reference.clone());
    }
    chain
}

impl Dispatch<'_> {
    /// The store step of a keyed send: reserve the key, or answer from its record.
    async fn with_key(&self, key: &str, fingerprint: &Fingerprint, chain: Vec<Candidate>) -> Result<Receipt, Error> {
        let Some(idempotency) = &self.inner.idempotency else { return self.execute(chain, None).await };
        let now = SystemTime::now();
        let timer = metrics::StoreTimer::start();
        let reserved = idempotency.store.reserve(key, Claim::new(fingerprint).to(&self.message.to), now).await;
        timer.finish("reserve", reserved.is_ok());
        match reserved {
            Ok(Reservation::Acquired(id)) => {
                let chain = correlate(idempotency, key, chain, now).await;
                self.execute(chain, Some(Held { key, id, idempotency })).await
            }
            Ok(Reservation::Existing(record)) => self.replay(key, fingerprint, *record, now, idempotency.stale_after),
            Err(error) => Err(Error::store(Box::new(error))),
        }
    }

    /// The decision table for a key that could not be reserved.
    fn replay(
        &self,
        key: &str,
        fingerprint: &Fingerprint,
        record: Record,
        now: SystemTime,
        stale_after: Duration,
    ) -> Result<Receipt, Error> {
        if record.fingerprint() != fingerprint {
            return Err(Error::idempotency_conflict(key));
        }
        match record {
            Record::Accepted { result, endpoint, .. } => {
                self.same_endpoint(key, endpoint.as_deref())?;
                Ok(Receipt {
                    replayed: true,
                    encoding: self.preview.encoding,
                    segments: self.preview.segments,
                    ..result
                })
            }
            Record::Unknown { error, .. } => {
                self.same_endpoint(key, error.attempts.last().and_then(|a| a.endpoint.as_deref()))?;
                Err(Error::unknown_replay(UnknownReason::ReplayedUnknown, error.attempts))
            }
            Record::Reserved { reserved_at, .. }
                if now.duration_since(reserved_at).is_ok_and(|age| age > stale_after) =>
            {
                Err(Error::unknown_replay(UnknownReason::StaleReservation, Vec::new()))
            }
            Record::Reserved { .. } | Record::Rejected { .. } => Err(Error::idempotency_in_progress(key)),
        }
    }

    /// Refuses to replay a result recorded for an endpoint none of this client's adapters sends
    /// to (a result from an emulator is not a message sent by a real provider): the last
    /// request's endpoint, or the one an operator settled the key for. Records without an
    /// endpoint, and clients whose adapters do not say theirs, pass.
    fn same_endpoint(&self, key: &str, recorded: Option<&str>) -> Result<(), Error> {
        let Some(recorded) = recorded else { return Ok(()) };
        let current: Vec<&str> = self.inner.adapters.iter().filter_map(|a| a.info().endpoint.as_deref()).collect();
        if current.is_empty() || current.contains(&recorded) {
            return Ok(());
        }
        Err(Error::endpoint_conflict(key, recorded, &current))
    }

    /// Runs one send inside its own tracing span (id and masked recipient, masked only when the
    /// span is recorded).
    async fn execute(&self, chain: Vec<Candidate>, held: Option<Held<'_>>) -> Result<Receipt, Error> {
        let id = new_send_id();
        let span = tracing::debug_span!("sms_send", id = %id, to = %mask_phone_number(&self.message.to));
        self.run(id, chain, held).instrument(span).await
    }

    /// The fields every hook event of send `id` has: built for each event, so a send that no
    /// hook listens to builds none.
    fn hook_base(&self, id: &str) -> HookBase {
        HookBase {
            id: id.to_owned(),
            to: mask_phone_number(&self.message.to),
            encoding: self.preview.encoding,
            segments: self.preview.segments,
            idempotency_key: self.message.idempotency_key.clone(),
        }
    }

    /// The policy gate, the provider chain, then the result, recorded and reported.
    async fn run(&self, id: String, chain: Vec<Candidate>, held: Option<Held<'_>>) -> Result<Receipt, Error> {
        if let Some(policy) = &self.inner.before_send {
            let cx = BeforeSendContext {
                id: id.clone(),
                message: self.message.clone(),
                encoding: self.preview.encoding,
                segments: self.preview.segments,
                policy_override: self.policy_override.clone(),
            };
            // Called inside the future, so that a policy that panics before returning one is caught too.
            match AssertUnwindSafe(async { policy.decide(cx).await }).catch_unwind().await {
                Ok(Ok(PolicyDecision::Allow)) => {}
                Ok(Ok(PolicyDecision::Reject { reason, category: None })) => {
                    return Err(self.fail(&id, held.as_ref(), Error::policy_rejected(Some(reason))).await);
                }
                Ok(Ok(PolicyDecision::Reject { reason, category: Some(category) })) => {
                    return Err(self.fail(&id, held.as_ref(), Error::policy_refused(category, reason)).await);
                }
                Ok(Err(error)) => return Err(self.policy_failed(held.as_ref(), Error::before_send(error)).await),
                Err(_panic) => {
                    return Err(self
                        .policy_failed(held.as_ref(), Error::before_send("before_send panicked".into()))
                        .await);
                }
            }
        }

        let hooks = &self.inner.hooks;
        let on_attempt = |attempt: &Attempt| {
            Hooks::fire(hooks.attempt.as_deref(), || AttemptEvent {
                base: self.hook_base(&id),
                attempt: attempt.clone(),
            });
        };
        let runner = Chain {
            retry: self.inner.retry,
            timeout: self.inner.timeout,
            cancel: self.cancel,
            stop: self.stop,
            idempotency_key: self.message.idempotency_key.as_deref(),
            on_attempt: &on_attempt,
            admissions: &self.inner.admissions,
            requested: self.requested,
        };
        let success = match runner.run(chain).await {
            Ok(success) => success,
            Err(error) => return Err(self.fail(&id, held.as_ref(), error).await),
        };

        let mut attempted_providers: Vec<String> = Vec::new();
        for attempt in &success.attempts {
            if !attempted_providers.contains(&attempt.provider) {
                attempted_providers.push(attempt.provider.clone());
            }
        }
        let receipt = Receipt {
            id,
            provider: success.provider,
            provider_id: success.accepted.provider_id,
            delivery: success.accepted.delivery,
            encoding: self.preview.encoding,
            segments: self.preview.segments,
            attempted_providers,
            attempts: success.attempts,
            replayed: false,
        };
        tracing::info!(provider = %receipt.provider, attempts = receipt.attempts.len(), "sms accepted");
        if let Some(held) = &held {
            held.finalize(FinalRecord::Accepted(receipt.clone())).await;
        }
        Hooks::fire(hooks.accepted.as_deref(), || AcceptedEvent {
            base: self.hook_base(&receipt.id),
            provider: receipt.provider.clone(),
            provider_id: receipt.provider_id.clone(),
            attempts: receipt.attempts.clone(),
        });
        Ok(receipt)
    }

    /// Records a failed send, reports it to the failure hook and hands the error back.
    async fn fail(&self, id: &str, held: Option<&Held<'_>>, error: Error) -> Error {
        tracing::info!(code = error.code(), retry_safe = error.is_retry_safe(), "sms send failed");
        if let Some(held) = held {
            let record = error.to_record();
            let unknown = matches!(error.kind(), crate::ErrorKind::Unknown(_));
            held.finalize(if unknown { FinalRecord::Unknown(record) } else { FinalRecord::Rejected(record) }).await;
        }
        Hooks::fire(self.inner.hooks.failure.as_deref(), || FailureEvent {
            base: self.hook_base(id),
            error_code: error.code(),
            retry_safe: error.is_retry_safe(),
            attempts: error.attempts().to_vec(),
        });
        error
    }

    /// `before_send` returned an error: nothing was sent, so the key is released as rejected (the
    /// record holds a policy rejection, never the caller's error); no failure hook fires.
    async fn policy_failed(&self, held: Option<&Held<'_>>, error: Error) -> Error {
        if let Some(held) = held {
            held.finalize(FinalRecord::Rejected(Error::policy_rejected(None).to_record())).await;
        }
        error
    }
}
