//! [`ClientBuilder`]: the adapters, the failover and retry policies, timeouts, the
//! idempotency store, correlation, hooks and the limits on requests, checked together by
//! [`ClientBuilder::build`].

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::BoxError;
use crate::adapter::{Adapter, AnyAdapter, DynAdapter};
use crate::client::single_flight::Flights;
use crate::correlation::CorrelationSecret;
use crate::error::Error;
use crate::hooks::{AcceptedEvent, AttemptEvent, BeforeSend, BeforeSendContext, FailureEvent, Hooks, PolicyDecision};
use crate::rate::{RateLimit, SharedRateLimiter};
use crate::retry::RetryPolicy;
use crate::store::{DEFAULT_REFERENCE_RETENTION, DEFAULT_STALE_RESERVATION, DEFAULT_TTL, IdempotencyStore};

use super::{BeforeSendFn, Client, Correlation, DEFAULT_TIMEOUT, Failover, Idempotency, Inner, MAX_DURATION};

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
    pub(crate) limits: crate::limit::admission::LimitOptions,
    correlation: Option<CorrelationSecret>,
    correlation_retention: Duration,
}

impl ClientBuilder {
    /// The builder [`Client::builder`] returns.
    pub(super) fn new() -> Self {
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
            limits: crate::limit::admission::LimitOptions::default(),
            correlation: None,
            correlation_retention: DEFAULT_REFERENCE_RETENTION,
        }
    }

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

    /// Sets the policy gate, called once per send before any request, to an async closure
    /// (`|cx| async move { Ok::<_, E>(PolicyDecision::Allow) }`). For a ready policy such as
    /// [`SuppressionPolicy`](crate::suppression::SuppressionPolicy), use
    /// [`policy`](Self::policy).
    ///
    /// Returning `Err` stops the send: nothing is sent, no failure hook fires, and the caller
    /// gets `ErrorKind::BeforeSend` with the error as its source.
    pub fn before_send<F, Fut, E>(self, policy: F) -> Self
    where
        F: Fn(BeforeSendContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<PolicyDecision, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        self.policy(policy)
    }

    /// Sets the policy gate to `policy`, anything that is [`BeforeSend`]: a ready policy such as
    /// [`SuppressionPolicy`](crate::suppression::SuppressionPolicy)
    /// (`.policy(SuppressionPolicy::new(list))`), or a closure as
    /// [`before_send`](Self::before_send) takes. One gate per client: the last call wins.
    pub fn policy(mut self, policy: impl BeforeSend) -> Self {
        self.before_send = Some(Arc::new(policy));
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

    /// Sets the most requests each adapter has in flight at once: 100 by default, `None` for no
    /// limit. A send waits for a free slot before each request; the wait is not an attempt, can
    /// be cancelled (`Aborted`) and is bounded by [`queue_timeout`](Self::queue_timeout).
    /// [`adapter_max_in_flight`](Self::adapter_max_in_flight) sets one adapter's own limit.
    ///
    /// Each request in flight holds an HTTP connection (or an HTTP/2 stream): the limit bounds
    /// the memory of many concurrent sends, and keeps a burst under a provider's concurrency
    /// limit (Twilio's error 20429). `Some(0)` is refused by [`build`](Self::build).
    pub fn max_in_flight(mut self, limit: Option<usize>) -> Self {
        self.limits.max_in_flight = limit;
        self
    }

    /// Sets the limit on requests in flight of the adapter called `adapter` (see
    /// [`max_in_flight`](Self::max_in_flight)); [`build`](Self::build) refuses a name no adapter
    /// has.
    pub fn adapter_max_in_flight(mut self, adapter: impl Into<String>, limit: Option<usize>) -> Self {
        self.limits.per_adapter.push((adapter.into(), limit));
        self
    }

    /// Sets the longest a send may wait for request slots, in total over all its attempts (120 s
    /// by default, at most 10 years; zero never waits). A send still waiting then fails with
    /// [`ErrorKind::QueueTimeout`](crate::ErrorKind::QueueTimeout), retry-safe, before the
    /// request it waited for. Keep it, plus the time of the requests, under the
    /// [`stale_reservation`](Self::stale_reservation) limit.
    pub fn queue_timeout(mut self, timeout: Duration) -> Self {
        self.limits.queue_timeout = timeout;
        self
    }

    /// Sets the rate limit of every adapter (none by default): its requests start at most at
    /// this rate, whatever the number of concurrent sends (see [`rate`](crate::rate)).
    /// [`adapter_rate_limit`](Self::adapter_rate_limit) sets one adapter's own. A send waits
    /// for its turn after taking a request slot; the wait is not an attempt, can be cancelled
    /// (`Aborted`) and counts against the [`queue_timeout`](Self::queue_timeout)
    /// ([`Limit::Rate`](crate::Limit::Rate)). [`build`](Self::build) refuses a limit of zero.
    pub fn rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.limits.rate = limit;
        self
    }

    /// Sets the rate limit of the adapter called `adapter` (see
    /// [`rate_limit`](Self::rate_limit)); `None` removes it. [`build`](Self::build) refuses a
    /// name no adapter has.
    pub fn adapter_rate_limit(mut self, adapter: impl Into<String>, limit: Option<RateLimit>) -> Self {
        self.limits.per_adapter_rate.push((adapter.into(), limit));
        self
    }

    /// Sets a rate limit per sender (number, short code, sender ID or service) of each adapter,
    /// for providers that limit each number (a US long code: about 1 message per second). A
    /// send waits for it after the adapter's own limit ([`Limit::SenderRate`](crate::Limit::SenderRate)).
    pub fn sender_rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.limits.sender_rate = limit;
        self
    }

    /// Keeps the rate limits ([`rate_limit`](Self::rate_limit),
    /// [`sender_rate_limit`](Self::sender_rate_limit)) in `shared` instead of in this process,
    /// so that every client using the same limiter shares them (for example
    /// `rate::redis::RedisRateLimiter`, `redis` feature). Its failure fails the send
    /// with a `store` error before the request (nothing was sent).
    pub fn shared_rate_limiter(mut self, shared: Arc<dyn SharedRateLimiter>) -> Self {
        self.limits.shared = Some(shared);
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
        let admissions = self.limits.build(&names)?;
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
                admissions,
            }),
        })
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
