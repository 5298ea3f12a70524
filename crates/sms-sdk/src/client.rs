//! The client: validation, idempotency, policy, then the provider chain, in the reference's order.
//!
//! ```
//! use sms_sdk::testing::MemoryAdapter;
//! use sms_sdk::{Client, Failover, Message};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let client = Client::builder()
//!     .adapter(MemoryAdapter::builder().name("primary").build())
//!     .adapter(MemoryAdapter::builder().name("backup").build())
//!     .failover(Failover::OnEligibleRejection)
//!     .build()?;
//! let receipt = client.send(&Message::new("+14155550123", "Your order has shipped.")).await?;
//! assert_eq!(receipt.provider, "primary");
//! assert_eq!(receipt.segments, 1);
//! # Ok::<(), sms_sdk::Error>(()) }).unwrap();
//! ```

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use futures_util::FutureExt;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::adapter::{Adapter, AdapterInfo, AnyAdapter, DynAdapter, UnknownReason};
use crate::boxed::BoxFuture;
use crate::coalesce::{Flight, Flights, follow};
use crate::correlation::CorrelationSecret;
use crate::encoding::{SegmentPreview, estimate_segments};
use crate::error::{Attempt, BoxError, Error};
use crate::failover::Chain;
use crate::hooks::{AcceptedEvent, AttemptEvent, BeforeSendContext, FailureEvent, HookBase, Hooks, PolicyDecision};
use crate::message::Message;
use crate::metrics;
use crate::receipt::{Receipt, new_send_id};
use crate::redact::mask_phone_number;
use crate::retry::RetryPolicy;
use crate::store::{
    Claim, DEFAULT_REFERENCE_RETENTION, DEFAULT_STALE_RESERVATION, DEFAULT_TTL, FinalRecord, Finalized, Fingerprint,
    IdempotencyStore, Record, Reservation, ReservationId,
};
use crate::validate::{self, Candidate, Validation};

/// Whether a rejected send moves on to the next adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Failover {
    /// Only the primary adapter sends (the default).
    #[default]
    Off,
    /// After a proven rejection that another provider might accept (`Auth`, `RateLimited` once
    /// retries are used up, `Sender`, `Account`), try the next adapter that can send the message.
    OnEligibleRejection,
}

/// Per-send options.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct SendOptions {
    /// Cancels the send: before any request, while waiting for a request slot or during a
    /// rate-limit wait the send fails with `Aborted` (retry-safe); while a request is in flight,
    /// with `Unknown(Aborted)`.
    pub cancel: Option<CancellationToken>,
    /// Stops the send from starting any new request, without abandoning one in flight: once it
    /// is cancelled, a send that has not made its first request yet (waiting for a slot or a
    /// rate limit included), or waits between attempts (a rate-limit backoff, a failover), ends
    /// `Aborted` (retry-safe); a request already in flight finishes and its outcome stands. A
    /// batch's first Ctrl-C.
    pub stop: Option<CancellationToken>,
    /// An explicit override of the `before_send` policy for this message, with the reason (for
    /// example the one confirmation a regulator allows after STOP). The policy sees it in
    /// [`BeforeSendContext::policy_override`]; the suppression policy then lets the message
    /// through to a suppressed recipient and logs it.
    pub policy_override: Option<String>,
}

impl SendOptions {
    /// Options with a cancellation token.
    #[must_use]
    pub fn cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Options with a stop token ([`SendOptions::stop`]).
    #[must_use]
    pub fn stop(mut self, token: CancellationToken) -> Self {
        self.stop = Some(token);
        self
    }

    /// Options that override the `before_send` policy for this message, saying why.
    #[must_use]
    pub fn policy_override(mut self, reason: impl Into<String>) -> Self {
        self.policy_override = Some(reason.into());
        self
    }
}

type BeforeSendFn =
    Arc<dyn Fn(BeforeSendContext) -> BoxFuture<'static, Result<PolicyDecision, BoxError>> + Send + Sync>;

/// Sends messages through its adapters. Cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    adapters: Vec<Arc<dyn DynAdapter>>,
    failover: Failover,
    retry: RetryPolicy,
    timeout: Duration,
    before_send: Option<BeforeSendFn>,
    hooks: Hooks,
    flights: Flights,
    idempotency: Option<Idempotency>,
    gates: crate::gate::Gates,
}

/// The idempotency store and its timings.
struct Idempotency {
    store: Arc<dyn IdempotencyStore>,
    ttl: Duration,
    stale_after: Duration,
    correlation: Option<Correlation>,
}

/// The correlation secret and how long the store remembers each reference.
struct Correlation {
    secret: CorrelationSecret,
    retention: Duration,
}

/// Builds a [`Client`]; problems are reported by [`ClientBuilder::build`].
#[must_use]
pub struct ClientBuilder {
    adapters: Vec<Arc<dyn DynAdapter>>,
    failover: Failover,
    retry: RetryPolicy,
    timeout: Duration,
    before_send: Option<BeforeSendFn>,
    hooks: Hooks,
    store: Option<Arc<dyn IdempotencyStore>>,
    ttl: Duration,
    stale_after: Duration,
    pub(crate) limits: crate::gate::LimitOptions,
    correlation: Option<CorrelationSecret>,
    correlation_retention: Duration,
}

/// The request timeout of a client built without [`ClientBuilder::timeout`]: 10 s.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest duration a client accepts (timeouts, TTLs, stale limits): 10 years. Longer ones
/// are mistakes, and would overflow clocks and stored expiry times.
pub(crate) const MAX_DURATION: Duration = Duration::from_secs(10 * 366 * 24 * 60 * 60);

impl Client {
    /// A builder with no adapters, failover off, the default retry policy and a 10 s timeout.
    pub fn builder() -> ClientBuilder {
        ClientBuilder {
            adapters: Vec::new(),
            failover: Failover::Off,
            retry: RetryPolicy::default(),
            timeout: DEFAULT_TIMEOUT,
            before_send: None,
            hooks: Hooks::default(),
            store: None,
            ttl: DEFAULT_TTL,
            stale_after: DEFAULT_STALE_RESERVATION,
            limits: crate::gate::LimitOptions::default(),
            correlation: None,
            correlation_retention: DEFAULT_REFERENCE_RETENTION,
        }
    }

    /// The configured adapters, in priority order.
    #[must_use]
    pub fn capabilities(&self) -> Vec<&AdapterInfo> {
        self.inner.adapters.iter().map(|a| a.info()).collect()
    }

    /// Checks `message` against every adapter, locally: no request, no store, no hook.
    #[must_use]
    pub fn validate(&self, message: &Message) -> Validation {
        validate::validation(message, &self.inner.adapters)
    }

    /// Sends `message`. Resolves only when a provider accepted it.
    ///
    /// # Errors
    /// Every failure is an [`Error`]: invalid input before any request, a provider's proven
    /// rejection, an unknown outcome (never resend it automatically), or an idempotency
    /// conflict. See [`Error::is_retry_safe`].
    pub async fn send(&self, message: &Message) -> Result<Receipt, Error> {
        self.send_with(message, SendOptions::default()).await
    }

    /// Sends `message` with per-send options (cancellation).
    ///
    /// # Errors
    /// As [`Client::send`], plus `Aborted` and `Unknown(Aborted)` on cancellation.
    pub async fn send_with(&self, message: &Message, options: SendOptions) -> Result<Receipt, Error> {
        let result = self.dispatch(message, options).await;
        metrics::send_finished(&result);
        result
    }

    /// The send itself, as [`Client::send_with`] describes it.
    async fn dispatch(&self, message: &Message, options: SendOptions) -> Result<Receipt, Error> {
        let inner = &self.inner;
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

/// Gives every candidate the key's correlation reference, once the store remembers it. Only a
/// send that has somewhere for it gets one: a candidate with a per-message callback URL, or
/// Vonage (whose `client_ref` reaches the application's own status URL). Without a secret, or a
/// store without a correlation index, the chain is unchanged; a store failure here is logged and
/// the send goes on without a reference (only automatic reconciliation is lost, never the send).
async fn correlate(idempotency: &Idempotency, key: &str, mut chain: Vec<Candidate>, now: SystemTime) -> Vec<Candidate> {
    let (Some(correlation), Some(index)) = (&idempotency.correlation, idempotency.store.references()) else {
        return chain;
    };
    let echoed = |(adapter, outbound): &Candidate| outbound.webhook_url.is_some() || adapter.info().name == "vonage";
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
            match AssertUnwindSafe(policy(cx)).catch_unwind().await {
                Ok(Ok(PolicyDecision::Allow)) => {}
                Ok(Ok(PolicyDecision::Reject { reason })) => {
                    return Err(self.fail(&id, held.as_ref(), Error::policy_rejected(Some(reason))).await);
                }
                Ok(Ok(PolicyDecision::Refuse { category, reason })) => {
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
            gates: &self.inner.gates,
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

impl ClientBuilder {
    /// Adds an adapter; the first one added is the primary.
    pub fn adapter(mut self, adapter: impl Adapter) -> Self {
        self.adapters.push(Arc::new(adapter));
        self
    }

    /// Adds boxed adapters (chosen at run time), in order, after those already added.
    pub fn adapters(mut self, adapters: impl IntoIterator<Item = AnyAdapter>) -> Self {
        self.adapters.extend(adapters.into_iter().map(|any| any.0));
        self
    }

    /// Sets the failover mode (off by default).
    pub fn failover(mut self, failover: Failover) -> Self {
        self.failover = failover;
        self
    }

    /// Sets the retry policy for rate-limited requests.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the timeout of each provider request (10 s by default; above zero and at most 10
    /// years).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the policy gate, called once per send before any request.
    ///
    /// Returning `Err` stops the send: nothing is sent, no failure hook fires, and the caller
    /// gets `ErrorKind::BeforeSend` with the error as its source.
    pub fn before_send<F, Fut, E>(mut self, policy: F) -> Self
    where
        F: Fn(BeforeSendContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PolicyDecision, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        self.before_send = Some(Arc::new(move |cx| {
            let decision = policy(cx);
            Box::pin(async move { decision.await.map_err(Into::into) })
        }));
        self
    }

    /// Turns on durable idempotency: keyed sends reserve their key in `store` before any
    /// request and record the outcome after it.
    pub fn idempotency(mut self, store: impl IdempotencyStore) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// How long accepted and rejected records are kept (24 h by default, at most 10 years).
    /// Unknown records are kept until an operator settles them.
    pub fn idempotency_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Age after which a reservation counts as an unknown outcome (300 s by default, at most 10
    /// years). Keep it above the slowest possible send: timeout × attempts × adapters, plus
    /// backoff, plus the [`queue_timeout`](Self::queue_timeout).
    pub fn stale_reservation(mut self, after: Duration) -> Self {
        self.stale_after = after;
        self
    }

    /// Turns on correlation (see [`crate::correlation`]): each keyed send remembers the
    /// reference derived from its key with `secret` in the idempotency store, and carries it
    /// where its provider echoes it in status webhooks (a query parameter of the message's status
    /// callback URL for Twilio, Telnyx and Plivo; `client_ref` for Vonage), so a
    /// [`Reconciler`](crate::reconcile::Reconciler) can settle an unknown outcome. Needs
    /// [`idempotency`](Self::idempotency) with a store that has a correlation index (every
    /// shipped store); otherwise nothing is attached. The reference is not part of the
    /// fingerprint.
    pub fn correlation(mut self, secret: CorrelationSecret) -> Self {
        self.correlation = Some(secret);
        self
    }

    /// How long the store remembers a correlation reference (7 days by default, at most 10
    /// years): status webhooks that arrive later no longer settle anything.
    pub fn correlation_retention(mut self, retention: Duration) -> Self {
        self.correlation_retention = retention;
        self
    }

    /// Called after every provider request.
    pub fn on_attempt(mut self, hook: impl Fn(&AttemptEvent) + Send + Sync + 'static) -> Self {
        self.hooks.attempt = Some(Arc::new(hook));
        self
    }

    /// Called once when a send is accepted (not for replays).
    pub fn on_accepted(mut self, hook: impl Fn(&AcceptedEvent) + Send + Sync + 'static) -> Self {
        self.hooks.accepted = Some(Arc::new(hook));
        self
    }

    /// Called once when a send fails after validation and the idempotency step.
    pub fn on_failure(mut self, hook: impl Fn(&FailureEvent) + Send + Sync + 'static) -> Self {
        self.hooks.failure = Some(Arc::new(hook));
        self
    }

    /// Builds the client. Makes no request.
    ///
    /// # Errors
    /// `Configuration` when there is no adapter, two adapters share a name, the timeout is zero,
    /// a duration (timeout, idempotency TTL, stale limit, queue timeout) is over 10 years, a
    /// limit on requests in flight is zero, or one names no adapter.
    pub fn build(self) -> Result<Client, Error> {
        if self.adapters.is_empty() {
            return Err(Error::configuration("A client needs at least one adapter."));
        }
        let names: Vec<&str> = self.adapters.iter().map(|a| a.info().name.as_str()).collect();
        let mut seen = std::collections::HashSet::new();
        if !names.iter().all(|name| seen.insert(*name)) {
            return Err(Error::configuration(format!(
                "Adapter names must be unique; configured: {}.",
                names.join(", ")
            )));
        }
        if self.timeout.is_zero() {
            return Err(Error::configuration("The request timeout must be greater than zero."));
        }
        for (name, value) in [
            ("timeout", self.timeout),
            ("idempotency_ttl", self.ttl),
            ("stale_reservation", self.stale_after),
            ("queue_timeout", self.limits.queue_timeout),
            ("correlation_retention", self.correlation_retention),
        ] {
            if value > MAX_DURATION {
                return Err(Error::configuration(format!("{name} must be at most 10 years.")));
            }
        }
        let gates = self.limits.build(&names)?;
        Ok(Client {
            inner: Arc::new(Inner {
                adapters: self.adapters,
                failover: self.failover,
                retry: self.retry,
                timeout: self.timeout,
                before_send: self.before_send,
                hooks: self.hooks,
                flights: Flights::default(),
                idempotency: self.store.map(|store| Idempotency {
                    store,
                    ttl: self.ttl,
                    stale_after: self.stale_after,
                    correlation: self
                        .correlation
                        .map(|secret| Correlation { secret, retention: self.correlation_retention }),
                }),
                gates,
            }),
        })
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.inner.adapters.iter().map(|a| a.info().name.as_str()).collect();
        f.debug_struct("Client")
            .field("adapters", &names)
            .field("failover", &self.inner.failover)
            .field("retry", &self.inner.retry)
            .field("timeout", &self.inner.timeout)
            .field("before_send", &self.inner.before_send.is_some())
            .field("idempotency", &self.inner.idempotency.is_some())
            .field("max_in_flight", &self.inner.gates)
            .field("correlation", &self.inner.idempotency.as_ref().is_some_and(|i| i.correlation.is_some()))
            .field("hooks", &self.inner.hooks)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.adapters.iter().map(|a| a.info().name.as_str()).collect();
        f.debug_struct("ClientBuilder")
            .field("adapters", &names)
            .field("failover", &self.failover)
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _assert_impls() {
        fn send_sync_clone<T: std::marker::Send + Sync + Clone + 'static>() {}
        send_sync_clone::<Client>();
    }
}
