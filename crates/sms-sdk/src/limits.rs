//! The limit setters of [`ClientBuilder`]: requests in flight, the queue timeout, and rate limits
//! (kept in `gate` and `rate`; here so that those modules need nothing from `client`).

use std::sync::Arc;
use std::time::Duration;

use crate::client::ClientBuilder;
use crate::rate::{RateLimit, SharedRateLimiter};

impl ClientBuilder {
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
}
