//! Admission before each provider request: every adapter has a limit on its requests in flight,
//! and a send waits for one of its adapter's slots before each attempt, then for its turn under
//! the adapter's rate limits when it has any (`rate`: the adapter's own, then the sender's).
//!
//! Each request in flight holds a connection (HTTP/1.1) or a stream (HTTP/2) and its buffers;
//! without a limit, 10,000 concurrent sends open 10,000 connections. With one, the sends beyond
//! it wait in a queue that costs little more than their futures.
//!
//! Waiting is not an attempt: no request, no attempt record, no hook. It can be cancelled (the
//! send ends `Aborted`, retry-safe, as a cancellation before any request does), and it is bounded:
//! a send waits at most its queue timeout in total, over all its attempts, then fails with
//! [`ErrorKind::QueueTimeout`](crate::ErrorKind::QueueTimeout) before the request it was waiting
//! to make. A retry after a rate limit gives the slot back during its backoff and queues again.
//!
//! Defaults, and why:
//! - **100 requests in flight per adapter** ([`DEFAULT_MAX_IN_FLIGHT`]). Twilio limits the
//!   concurrent REST requests of an account (error 20429, "too many concurrent requests") and
//!   HTTP/2 servers commonly allow 100 to 128 streams per connection; 100 requests take a few
//!   megabytes, and at a provider's usual 100–300 ms per request they still allow hundreds of
//!   messages per second per adapter, more than the documented message rates of most senders.
//! - **120 s of queueing per send** ([`DEFAULT_QUEUE_TIMEOUT`]): enough to drain a burst of
//!   10,000 sends through 100 slots at 1 s per request, and short enough that the slowest send of
//!   a full failover chain (queueing, four adapters × two attempts × the 10 s request timeout,
//!   backoffs) stays under the 300 s after which a reservation reads as stale.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Limit};
use crate::metrics;
use crate::rate::{AdapterRate, Phase, RateLimit, SharedRateLimiter};

/// The requests each adapter has in flight at most, by default.
pub(crate) const DEFAULT_MAX_IN_FLIGHT: usize = 100;
/// The longest a send waits for request slots by default, over all its attempts.
pub(crate) const DEFAULT_QUEUE_TIMEOUT: Duration = Duration::from_mins(2);

/// The limits a [`ClientBuilder`](crate::ClientBuilder) collects (its setters are in `limits`).
#[derive(Debug, Clone)]
pub(crate) struct LimitOptions {
    /// Every adapter's limit, unless it has its own.
    pub(crate) max_in_flight: Option<usize>,
    /// Limits of single adapters, by name (the last one set wins).
    pub(crate) per_adapter: Vec<(String, Option<usize>)>,
    /// A send's whole queue budget (checked against the longest duration by the builder).
    pub(crate) queue_timeout: Duration,
    /// Every adapter's rate, unless it has its own.
    pub(crate) rate: Option<RateLimit>,
    /// Rates of single adapters, by name (the last one set wins).
    pub(crate) per_adapter_rate: Vec<(String, Option<RateLimit>)>,
    /// Each sender's rate, within its adapter.
    pub(crate) sender_rate: Option<RateLimit>,
    /// A rate shared with other processes (through Redis).
    pub(crate) shared: Option<Arc<dyn SharedRateLimiter>>,
}

impl Default for LimitOptions {
    fn default() -> Self {
        Self {
            max_in_flight: Some(DEFAULT_MAX_IN_FLIGHT),
            per_adapter: Vec::new(),
            queue_timeout: DEFAULT_QUEUE_TIMEOUT,
            rate: None,
            per_adapter_rate: Vec::new(),
            sender_rate: None,
            shared: None,
        }
    }
}

/// The setting of `name` in `own` (the last one wins), else `default`.
fn own_or<T: Copy>(own: &[(String, T)], name: &str, default: T) -> T {
    own.iter().rev().find(|(adapter, _)| adapter == name).map_or(default, |(_, value)| *value)
}

/// A configuration error when a per-adapter setting (`what`) names no adapter.
fn check_names<T>(own: &[(String, T)], names: &[&str], what: &str) -> Result<(), Error> {
    match own.iter().find(|(name, _)| !names.contains(&name.as_str())) {
        None => Ok(()),
        Some((name, _)) => Err(Error::configuration(format!(
            "{what} names no configured adapter: {name} (configured: {}).",
            names.join(", ")
        ))),
    }
}

impl LimitOptions {
    /// The limits of the adapters called `names`.
    pub(crate) fn build(self, names: &[&str]) -> Result<Admissions, Error> {
        check_names(&self.per_adapter, names, "adapter_max_in_flight")?;
        check_names(&self.per_adapter_rate, names, "adapter_rate_limit")?;
        let adapters = names
            .iter()
            .map(|name| {
                let rate = own_or(&self.per_adapter_rate, name, self.rate);
                let rate = AdapterRate::new(name, rate, self.sender_rate, self.shared.as_ref())?;
                AdapterLimits::new(name, own_or(&self.per_adapter, name, self.max_in_flight), rate)
            })
            .collect::<Result<_, _>>()?;
        Ok(Admissions { adapters, queue_timeout: self.queue_timeout })
    }
}

/// The per-adapter limits of a client, and how long one send may wait for them.
pub(crate) struct Admissions {
    adapters: Vec<AdapterLimits>,
    queue_timeout: Duration,
}

/// One adapter's request slots (`None` when it has no limit) and rate limits.
struct AdapterLimits {
    name: String,
    slots: Option<Semaphore>,
    limit: usize,
    rate: Option<AdapterRate>,
}

impl AdapterLimits {
    fn new(name: &str, limit: Option<usize>, rate: Option<AdapterRate>) -> Result<Self, Error> {
        let slots = match limit {
            None => None,
            Some(0) => {
                return Err(Error::configuration(format!(
                    "The {name} limit on requests in flight must be at least 1 (None for no limit)."
                )));
            }
            Some(n) if n > Semaphore::MAX_PERMITS => {
                return Err(Error::configuration(format!(
                    "The {name} limit on requests in flight must be at most {}.",
                    Semaphore::MAX_PERMITS
                )));
            }
            Some(n) => Some(Semaphore::new(n)),
        };
        Ok(Self { name: name.to_owned(), slots, limit: limit.unwrap_or(0), rate })
    }

    /// What a send still waiting for `limit` waited for, for its error.
    fn describe(&self, limit: Limit) -> String {
        match (limit, &self.rate) {
            (Limit::Rate | Limit::SenderRate, Some(rate)) => rate.describe(limit),
            _ => format!("one of the {} request slots of {} (max_in_flight)", self.limit, self.name),
        }
    }
}

/// A slot held for one request; dropping it frees the slot.
#[derive(Debug)]
#[must_use = "the slot is freed when the admission is dropped"]
pub(crate) struct Admission<'a>(#[allow(dead_code)] Option<SemaphorePermit<'a>>);

/// Why a send was not admitted.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The caller cancelled while the send waited.
    Cancelled,
    /// The send's queue budget ran out (the error says which limit), or a shared rate limiter
    /// failed (a store error): nothing was sent.
    Stopped(Error),
}

impl Admissions {
    /// A send's whole queue budget.
    pub(crate) fn queue_timeout(&self) -> Duration {
        self.queue_timeout
    }

    /// Waits for a slot of `adapter`, then for a turn under its rate limits (its own, then
    /// `sender`'s), for at most `budget`, which is reduced by the time waited. The slot is
    /// taken first so the rate counts requests as they start. A free slot and no rate limit
    /// are taken at once, without reading the clock. An adapter the client does not know
    /// (never the case) has no limit.
    pub(crate) async fn admit(
        &self,
        adapter: &str,
        sender: &str,
        cancel: Option<&CancellationToken>,
        budget: &mut Duration,
    ) -> Result<Admission<'_>, Refusal> {
        let Some(limits) = self.adapters.iter().find(|limits| limits.name == adapter) else {
            return Ok(Admission(None));
        };
        let free = match &limits.slots {
            None => Some(None),
            Some(slots) => slots.try_acquire().ok().map(Some),
        };
        let free = match (free, &limits.rate) {
            (Some(permit), None) => {
                metrics::queue_wait(adapter, Duration::ZERO);
                return Ok(Admission(permit));
            }
            (free, _) => free,
        };
        let waiting = Phase::default();
        let wait = async {
            let permit = match (free, &limits.slots) {
                (Some(permit), _) => permit,
                // The semaphore is never closed; were it, the request would go without a slot.
                (None, Some(slots)) => slots.acquire().await.ok(),
                (None, None) => None,
            };
            if let Some(rate) = &limits.rate {
                rate.wait(sender, &waiting).await.map_err(Refusal::Stopped)?;
            }
            Ok(Admission(permit))
        };
        let started = Instant::now();
        let waited = tokio::select! {
            biased;
            () = cancelled(cancel) => Err(Refusal::Cancelled),
            waited = tokio::time::timeout(*budget, wait) => match waited {
                Ok(admitted) => admitted,
                Err(_elapsed) => {
                    let limit = waiting.get();
                    let what = limits.describe(limit);
                    Err(Refusal::Stopped(Error::queue_timeout(limit, adapter, &what, self.queue_timeout)))
                }
            },
        };
        let elapsed = started.elapsed();
        *budget = budget.saturating_sub(elapsed);
        metrics::queue_wait(adapter, elapsed);
        tracing::debug!(provider = adapter, waited = ?elapsed, admitted = waited.is_ok(), "waited for a request slot");
        waited
    }
}

/// Resolves when `cancel` is cancelled; never without a token (nothing to watch, nothing to
/// register with).
pub(crate) async fn cancelled(cancel: Option<&CancellationToken>) {
    match cancel {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

impl fmt::Debug for Admissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for limits in &self.adapters {
            match &limits.rate {
                None => map.entry(&limits.name, &limits.slots.as_ref().map(|_| limits.limit)),
                Some(rate) => map.entry(&limits.name, &(limits.slots.as_ref().map(|_| limits.limit), rate)),
            };
        }
        map.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admissions(options: LimitOptions) -> Result<Admissions, Error> {
        options.build(&["a", "b"])
    }

    #[test]
    fn limits_are_checked_when_the_client_is_built() {
        let zero = LimitOptions { max_in_flight: Some(0), ..LimitOptions::default() };
        assert!(admissions(zero).unwrap_err().to_string().contains("at least 1"));
        let unknown = LimitOptions { per_adapter: vec![("c".into(), Some(1))], ..LimitOptions::default() };
        assert!(admissions(unknown).unwrap_err().to_string().contains("names no configured adapter: c"));
        let huge = LimitOptions { max_in_flight: Some(usize::MAX), ..LimitOptions::default() };
        assert!(admissions(huge).is_err());
    }

    #[test]
    fn each_adapter_gets_the_default_or_its_own_limit() {
        let options = LimitOptions { per_adapter: vec![("b".into(), None)], ..LimitOptions::default() };
        let built = admissions(options).unwrap();
        assert_eq!(format!("{built:?}"), r#"{"a": Some(100), "b": None}"#);
        assert_eq!(built.queue_timeout(), DEFAULT_QUEUE_TIMEOUT);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_gate_times_out_within_the_budget_and_a_cancel_wins() {
        let options = LimitOptions { max_in_flight: Some(1), ..LimitOptions::default() };
        let admissions = admissions(options).unwrap();
        let cancel = CancellationToken::new();
        let mut budget = Duration::from_secs(5);
        let held = admissions.admit("a", "", Some(&cancel), &mut budget).await.unwrap();
        assert_eq!(budget, Duration::from_secs(5), "a free slot costs no budget");
        let Err(Refusal::Stopped(error)) = admissions.admit("a", "", Some(&cancel), &mut budget).await else {
            panic!()
        };
        assert_eq!(error.kind(), crate::ErrorKind::QueueTimeout(Limit::InFlight));
        assert_eq!(budget, Duration::ZERO);
        let _other = admissions.admit("b", "", Some(&cancel), &mut budget).await.unwrap();
        cancel.cancel();
        let mut budget = Duration::from_secs(5);
        assert!(matches!(admissions.admit("a", "", Some(&cancel), &mut budget).await, Err(Refusal::Cancelled)));
        drop(held);
        let mut none_left = Duration::ZERO;
        assert!(
            admissions.admit("a", "", Some(&CancellationToken::new()), &mut none_left).await.is_ok(),
            "a free slot needs no budget"
        );
    }
}
