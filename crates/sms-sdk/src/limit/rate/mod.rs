//! Rate limits on the client: at most so many requests per second per adapter, and per sender
//! where providers limit each number, waited for before each request, after its slot (`limit::admission`).
//!
//! ```
//! use std::time::Duration;
//! use sms_sdk::rate::RateLimit;
//! use sms_sdk::testing::MemoryAdapter;
//! use sms_sdk::Client;
//!
//! let client = Client::builder()
//!     .adapter(MemoryAdapter::builder().name("twilio").build())
//!     // 100 messages per second for the adapter, 1 per second per sender number.
//!     .rate_limit(Some(RateLimit::per_second(100)))
//!     .sender_rate_limit(Some(RateLimit::per_second(1)))
//!     .build()?;
//! # let _ = client; Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! In process, each limit is a GCRA (`governor`, with a clock on tokio's time so a paused test
//! clock drives it). Sends waiting for one limit take turns in arrival order (a fair queue in
//! front of it), so a burst of sends neither spins nor overtakes. With a
//! [`SharedRateLimiter`] (the Redis one behind the `redis` feature), the same limits are kept in
//! one place for every instance, so that many workers together stay under the provider's rate.
//!
//! Waiting is not an attempt, can be cancelled (`Aborted`) and counts against the send's queue
//! timeout; a send that runs out of it fails with
//! [`ErrorKind::QueueTimeout`](crate::ErrorKind::QueueTimeout) naming the limit
//! ([`Limit::Rate`], [`Limit::SenderRate`]).

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use tokio::time::Instant;

use crate::error::{Error, Limit};
use crate::store::StoreError;
use futures_util::future::BoxFuture;

#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;

/// The most senders whose own limits are kept at once, per adapter (a bound on memory: the
/// limits of senders idle long enough to be fully replenished are forgotten first).
const MAX_SENDERS: usize = 10_000;
/// The longest period of a limit (10 years, as every duration of a client).
const MAX_PERIOD: Duration = Duration::from_hours(10 * 366 * 24);
/// The fastest rate a limit may have (one request per microsecond): the shared limiter counts
/// in microseconds.
const MIN_INTERVAL: Duration = Duration::from_micros(1);

/// A rate: at most `count` requests per `period`, evenly spaced, with bursts of at most `burst`
/// requests at once (1 by default: strictly spaced).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    count: u32,
    period: Duration,
    burst: u32,
}

impl RateLimit {
    /// `count` requests per second.
    #[must_use]
    pub const fn per_second(count: u32) -> Self {
        Self::new(count, Duration::from_secs(1))
    }

    /// `count` requests per `period` (for example 1 per 3 s). A count or period of zero is
    /// refused when the client is built.
    #[must_use]
    pub const fn new(count: u32, period: Duration) -> Self {
        Self { count, period, burst: 1 }
    }

    /// Allows bursts of up to `burst` requests at once after an idle time (the rate over time is
    /// unchanged). Zero is refused when the client is built.
    ///
    /// Timers fire on whole milliseconds, so a strictly spaced limit (burst 1) of a few hundred
    /// per second or more runs below its rate: a turn taken late is lost. A burst worth about
    /// 20 ms of requests (`rate / 50`) lets late turns be made up, and keeps any second at most
    /// that many requests over the rate (`sms-sdk batch --rate` does this).
    #[must_use]
    pub const fn burst(mut self, burst: u32) -> Self {
        self.burst = burst;
        self
    }

    /// The time between two requests at the steady rate.
    #[must_use]
    pub fn interval(&self) -> Duration {
        self.period.checked_div(self.count).unwrap_or(Duration::ZERO)
    }

    /// The largest burst.
    #[must_use]
    pub const fn burst_size(&self) -> u32 {
        self.burst
    }

    /// How far ahead of the steady schedule a burst may run: `(burst - 1) × interval`.
    #[must_use]
    pub fn tolerance(&self) -> Duration {
        self.interval().saturating_mul(self.burst.saturating_sub(1))
    }

    /// The limit as a quota, or a configuration error saying what is wrong with it.
    fn quota(self, what: &str) -> Result<Quota, Error> {
        let burst = NonZeroU32::new(self.burst);
        if self.count == 0 || self.period.is_zero() || self.period > MAX_PERIOD || burst.is_none() {
            return Err(Error::configuration(format!(
                "The {what} must allow at least 1 request per period (period above zero, at most 10 years, burst at \
                 least 1)."
            )));
        }
        if self.interval() < MIN_INTERVAL {
            return Err(Error::configuration(format!("The {what} must be at most 1,000,000 requests per second.")));
        }
        let quota = Quota::with_period(self.interval()).zip(burst).map(|(quota, burst)| quota.allow_burst(burst));
        quota.ok_or_else(|| Error::configuration(format!("The {what} is out of range.")))
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} per {:?}", self.count, self.period)?;
        if self.burst > 1 {
            write!(f, ", bursts of {}", self.burst)?;
        }
        Ok(())
    }
}

/// What a shared limiter decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Admit {
    /// The request may go now; its turn is taken.
    Now,
    /// Not yet: ask again after this long (nothing was taken).
    After(Duration),
}

/// A rate limit kept outside the process, shared by every client that uses the same one (for
/// example `redis::RedisRateLimiter`, `redis` feature). One call decides one request of
/// `bucket` (an adapter's name, or an adapter's name and a sender) under `limit`, atomically for
/// all instances.
pub trait SharedRateLimiter: fmt::Debug + Send + Sync + 'static {
    /// Takes a turn of `bucket` under `limit` now, or says how long to wait before asking again.
    fn admit<'a>(&'a self, bucket: &'a str, limit: &'a RateLimit) -> BoxFuture<'a, Result<Admit, StoreError>>;
}

/// A monotonic clock on tokio's time (so a paused test runtime drives the limits).
#[derive(Debug, Clone, Copy)]
struct TokioClock(Instant);

impl Clock for TokioClock {
    type Instant = Duration;

    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

type Governor = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<Duration>>;

/// One limit in process, and the queue of sends waiting for it.
struct Local {
    governor: Governor,
    clock: TokioClock,
    /// Waiters take turns in arrival order (tokio's mutex is fair).
    turn: tokio::sync::Mutex<()>,
}

impl Local {
    fn new(quota: Quota) -> Self {
        let clock = TokioClock(Instant::now());
        Self { governor: RateLimiter::direct_with_clock(quota, clock), clock, turn: tokio::sync::Mutex::new(()) }
    }

    /// Waits for this limit's next turn.
    async fn wait(&self) {
        let _turn = self.turn.lock().await;
        while let Err(not_until) = self.governor.check() {
            tokio::time::sleep(not_until.wait_time_from(self.clock.now())).await;
        }
    }
}

/// The limits of one sender.
struct SenderEntry {
    local: Arc<Local>,
    last_used: Instant,
}

/// Where one limit is kept.
enum Keeper {
    /// In this process.
    Local(Local),
    /// In the shared limiter, under this bucket; waiters of this process queue on `turn` first.
    Shared { shared: Arc<dyn SharedRateLimiter>, bucket: String, turn: tokio::sync::Mutex<()> },
}

/// One rate limit, kept in this process or in a [`SharedRateLimiter`]: [`wait`](Self::wait)
/// returns when the next request may start. The client keeps one per adapter; a batch keeps
/// one for all its messages ([`BatchOptions::rate`](crate::batch::BatchOptions::rate)).
pub struct Pacer {
    limit: RateLimit,
    keeper: Keeper,
}

impl Pacer {
    /// A limit kept in this process.
    ///
    /// # Errors
    /// `Configuration` when the limit allows nothing (a count, period or burst of zero) or more
    /// than 1,000,000 requests per second.
    pub fn new(limit: RateLimit) -> Result<Self, Error> {
        let quota = limit.quota("rate limit")?;
        Ok(Self { limit, keeper: Keeper::Local(Local::new(quota)) })
    }

    /// A limit kept in `shared` under `bucket`: every pacer with the same limiter and bucket, in
    /// any process, shares it.
    ///
    /// # Errors
    /// As [`Pacer::new`].
    pub fn shared(
        limit: RateLimit,
        shared: Arc<dyn SharedRateLimiter>,
        bucket: impl Into<String>,
    ) -> Result<Self, Error> {
        limit.quota("rate limit")?;
        let keeper = Keeper::Shared { shared, bucket: bucket.into(), turn: tokio::sync::Mutex::new(()) };
        Ok(Self { limit, keeper })
    }

    /// The limit.
    #[must_use]
    pub fn limit(&self) -> RateLimit {
        self.limit
    }

    /// Waits for the next turn; callers of this process take turns in arrival order. Dropping
    /// the future gives the place up (nothing is taken).
    ///
    /// # Errors
    /// `Store` when the shared limiter fails.
    pub async fn wait(&self) -> Result<(), Error> {
        match &self.keeper {
            Keeper::Local(local) => {
                local.wait().await;
                Ok(())
            }
            Keeper::Shared { shared, bucket, turn } => {
                let _turn = turn.lock().await;
                wait_shared(shared.as_ref(), bucket, &self.limit).await
            }
        }
    }
}

impl fmt::Debug for Pacer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = matches!(self.keeper, Keeper::Shared { .. });
        f.debug_struct("Pacer").field("limit", &self.limit).field("shared", &shared).finish()
    }
}

/// The rate limits of one adapter: its own, and each sender's.
pub(crate) struct AdapterRate {
    adapter: String,
    own: Option<Pacer>,
    sender: Option<(RateLimit, Quota)>,
    senders: Mutex<HashMap<String, SenderEntry>>,
    shared: Option<Arc<dyn SharedRateLimiter>>,
    shared_senders: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Which limit a send is waiting for (so a queue timeout can name it).
#[derive(Debug, Default)]
pub(crate) struct Phase(AtomicU8);

impl Phase {
    pub(crate) fn set(&self, limit: Limit) {
        let value = match limit {
            Limit::Rate => 1,
            Limit::SenderRate => 2,
            Limit::InFlight => 0,
        };
        self.0.store(value, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> Limit {
        match self.0.load(Ordering::Relaxed) {
            1 => Limit::Rate,
            2 => Limit::SenderRate,
            _ => Limit::InFlight,
        }
    }
}

impl AdapterRate {
    /// The limits of `adapter`; `None` when it has none.
    pub(crate) fn new(
        adapter: &str,
        own: Option<RateLimit>,
        sender: Option<RateLimit>,
        shared: Option<&Arc<dyn SharedRateLimiter>>,
    ) -> Result<Option<Self>, Error> {
        if own.is_none() && sender.is_none() {
            return Ok(None);
        }
        let own = match (own, shared) {
            (None, _) => None,
            (Some(limit), None) => {
                let quota = limit.quota(&format!("rate limit of {adapter}"))?;
                Some(Pacer { limit, keeper: Keeper::Local(Local::new(quota)) })
            }
            (Some(limit), Some(shared)) => {
                limit.quota(&format!("rate limit of {adapter}"))?;
                Some(Pacer::shared(limit, Arc::clone(shared), adapter)?)
            }
        };
        let sender = match sender {
            None => None,
            Some(limit) => Some((limit, limit.quota(&format!("per-sender rate limit of {adapter}"))?)),
        };
        Ok(Some(Self {
            adapter: adapter.to_owned(),
            own,
            sender,
            senders: Mutex::default(),
            shared: shared.cloned(),
            shared_senders: Mutex::default(),
        }))
    }

    /// The limit a send waits for, described for an error.
    pub(crate) fn describe(&self, waiting: Limit) -> String {
        let shared = if self.shared.is_some() { ", shared" } else { "" };
        match (waiting, &self.own, &self.sender) {
            (Limit::Rate, Some(pacer), _) => {
                format!("a turn under the rate limit of {} ({}{shared})", self.adapter, pacer.limit)
            }
            (Limit::SenderRate, _, Some((limit, _))) => {
                format!("a turn under the per-sender rate limit of {} ({limit}{shared})", self.adapter)
            }
            _ => format!("a turn under a rate limit of {}", self.adapter),
        }
    }

    /// Waits for a turn of the adapter's limit, then of `sender`'s; `waiting` says which one the
    /// send is waiting for at each moment. A shared limiter's failure is a store error (nothing
    /// was sent).
    pub(crate) async fn wait(&self, sender: &str, waiting: &Phase) -> Result<(), Error> {
        waiting.set(Limit::Rate);
        if let Some(pacer) = &self.own {
            pacer.wait().await?;
        }
        let Some((limit, quota)) = &self.sender else { return Ok(()) };
        waiting.set(Limit::SenderRate);
        if let Some(shared) = &self.shared {
            let turn = self.shared_turn(sender)?;
            let _turn = turn.lock().await;
            let bucket = format!("{}:sender:{sender}", self.adapter);
            return wait_shared(shared.as_ref(), &bucket, limit).await;
        }
        let local = self.sender_limit(sender, *quota, limit)?;
        local.wait().await;
        Ok(())
    }

    /// `sender`'s limit in process, made on first use. Senders idle long enough to be fully
    /// replenished are forgotten when the map is full (forgetting them loses nothing).
    fn sender_limit(&self, sender: &str, quota: Quota, limit: &RateLimit) -> Result<Arc<Local>, Error> {
        let mut senders = self.senders.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if let Some(entry) = senders.get_mut(sender) {
            entry.last_used = now;
            return Ok(Arc::clone(&entry.local));
        }
        if senders.len() >= MAX_SENDERS {
            let replenished = limit.interval().saturating_mul(limit.burst.max(1));
            senders.retain(|_, entry| {
                Arc::strong_count(&entry.local) > 1 || now.duration_since(entry.last_used) <= replenished
            });
            if senders.len() >= MAX_SENDERS {
                return Err(self.too_many_senders());
            }
        }
        let local = Arc::new(Local::new(quota));
        senders.insert(sender.to_owned(), SenderEntry { local: Arc::clone(&local), last_used: now });
        Ok(local)
    }

    /// The queue in this process in front of `sender`'s shared limit.
    fn shared_turn(&self, sender: &str) -> Result<Arc<tokio::sync::Mutex<()>>, Error> {
        let mut turns = self.shared_senders.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(turn) = turns.get(sender) {
            return Ok(Arc::clone(turn));
        }
        if turns.len() >= MAX_SENDERS {
            turns.retain(|_, turn| Arc::strong_count(turn) > 1);
            if turns.len() >= MAX_SENDERS {
                return Err(self.too_many_senders());
            }
        }
        let turn: Arc<tokio::sync::Mutex<()>> = Arc::default();
        turns.insert(sender.to_owned(), Arc::clone(&turn));
        Ok(turn)
    }

    fn too_many_senders(&self) -> Error {
        Error::configuration(format!(
            "More than {MAX_SENDERS} senders of {} are waiting for their rate limits at once.",
            self.adapter
        ))
    }
}

/// Asks the shared limiter until it admits.
async fn wait_shared(shared: &dyn SharedRateLimiter, bucket: &str, limit: &RateLimit) -> Result<(), Error> {
    loop {
        match shared.admit(bucket, limit).await {
            Ok(Admit::Now) => return Ok(()),
            Ok(Admit::After(wait)) => tokio::time::sleep(wait.max(MIN_INTERVAL)).await,
            Err(error) => return Err(Error::store(Box::new(error))),
        }
    }
}

impl fmt::Debug for AdapterRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdapterRate")
            .field("limit", &self.own.as_ref().map(|pacer| pacer.limit))
            .field("per_sender", &self.sender.as_ref().map(|(limit, _)| limit))
            .field("shared", &self.shared.is_some())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_checked() {
        assert!(RateLimit::per_second(0).quota("rate limit").is_err());
        assert!(RateLimit::per_second(1).burst(0).quota("rate limit").is_err());
        assert!(RateLimit::new(1, Duration::ZERO).quota("rate limit").is_err());
        assert!(RateLimit::per_second(2_000_000).quota("rate limit").is_err());
        assert!(RateLimit::per_second(500).quota("rate limit").is_ok());
        assert_eq!(RateLimit::per_second(500).interval(), Duration::from_millis(2));
        assert_eq!(RateLimit::per_second(10).burst(3).tolerance(), Duration::from_millis(200));
        assert_eq!(RateLimit::per_second(10).burst(3).to_string(), "10 per 1s, bursts of 3");
    }

    #[tokio::test(start_paused = true)]
    async fn a_local_limit_spaces_turns_evenly() {
        let local = Local::new(RateLimit::per_second(10).quota("rate limit").unwrap());
        let started = Instant::now();
        for _ in 0..21 {
            local.wait().await;
        }
        assert_eq!(started.elapsed(), Duration::from_secs(2), "21 turns at 10/s: the first at once");
    }
}
