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

mod builder;
pub(crate) mod failover;
mod send;
pub(crate) mod single_flight;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::adapter::{AdapterInfo, DynAdapter};
use crate::client::single_flight::Flights;
use crate::correlation::CorrelationSecret;
use crate::error::Error;
use crate::hooks::Hooks;
use crate::message::Message;
use crate::metrics;
use crate::receipt::Receipt;
use crate::retry::RetryPolicy;
use crate::store::IdempotencyStore;
use crate::validate::{self, Validation};

pub use self::builder::ClientBuilder;

/// Whether a rejected send moves on to the next adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Failover {
    /// Only the primary adapter sends (the default).
    #[default]
    Off,
    /// After a proven rejection that another provider might accept (`Auth`, `RateLimited` once
    /// retries are used up, `Sender`, `Account`, `Unreachable`), try the next adapter that can
    /// send the message.
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
    /// [`BeforeSendContext::policy_override`](crate::hooks::BeforeSendContext::policy_override); the suppression policy then lets the message
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

type BeforeSendFn = Arc<dyn crate::hooks::BeforeSend>;

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
    admissions: crate::limit::admission::Admissions,
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

/// The request timeout of a client built without [`ClientBuilder::timeout`]: 10 s.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest duration a client accepts (timeouts, TTLs, stale limits): 10 years. Longer ones
/// are mistakes, and would overflow clocks and stored expiry times.
pub(crate) const MAX_DURATION: Duration = Duration::from_hours(10 * 366 * 24);

impl Client {
    /// A builder with no adapters, failover off, the default retry policy and a 10 s timeout.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// The configured adapters, in priority order.
    #[must_use]
    pub fn adapters(&self) -> Vec<&AdapterInfo> {
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
    /// conflict. [`Error::next_step`] says what to do with it.
    pub async fn send(&self, message: &Message) -> Result<Receipt, Error> {
        self.send_with(message, SendOptions::default()).await
    }

    /// Sends `message` with per-send options (cancellation).
    ///
    /// # Errors
    /// As [`Client::send`], plus `Aborted` and `Unknown(Aborted)` on cancellation.
    pub async fn send_with(&self, message: &Message, options: SendOptions) -> Result<Receipt, Error> {
        let result = send::dispatch(&self.inner, message, options).await;
        metrics::send_finished(&result);
        result
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
            .field("max_in_flight", &self.inner.admissions)
            .field("correlation", &self.inner.idempotency.as_ref().is_some_and(|i| i.correlation.is_some()))
            .field("hooks", &self.inner.hooks)
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
