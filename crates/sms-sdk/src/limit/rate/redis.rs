//! A rate limit shared through Redis: every client that uses the same server and prefix takes
//! its turns from the same GCRA, so many instances together stay under the provider's rate.
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use sms_sdk::rate::{RateLimit, redis::RedisRateLimiter};
//! # use sms_sdk::testing::MemoryAdapter;
//!
//! let shared = RedisRateLimiter::builder("redis://127.0.0.1:6379/0").prefix("myapp:rate:").connect().await?;
//! let client = sms_sdk::Client::builder()
//!     # .adapter(MemoryAdapter::builder().name("twilio").build())
//!     .rate_limit(Some(RateLimit::per_second(100)))
//!     .shared_rate_limiter(Arc::new(shared))
//!     .build()?;
//! # let _ = client; Ok(()) }
//! ```
//!
//! One Lua script decides each request (`EVALSHA`, loaded again after a `NOSCRIPT`, as after a
//! failover or a `SCRIPT FLUSH`). Its state is one string key per bucket, the bucket's
//! theoretical arrival time in microseconds, at `{<prefix><bucket>}` (the whole name is a hash
//! tag, so a script touches one slot of a Redis Cluster), expiring once the bucket is fully
//! replenished. Time is the Redis server's (`TIME`), so the clocks of the instances do not
//! matter. The URL is any the Redis store takes: `redis://`, `rediss://` (TLS),
//! `redis-cluster://` and `rediss-cluster://` ([`crate::store::redis`] has their parameters). A Redis that restarts without persistence forgets the state: at worst one burst goes
//! out early.

use std::sync::Arc;
use std::time::Duration;

use redis::Script;

use super::{Admit, RateLimit, SharedRateLimiter};
use crate::redact::redact_url_userinfo;
use crate::store::redis::{Connection, RedisTls, Target};
use crate::store::timeouts::Timeouts;
use crate::store::{DEFAULT_CONNECT_TIMEOUT, DEFAULT_OPERATION_TIMEOUT, StoreError};
use futures_util::future::BoxFuture;

/// The GCRA. KEYS[1]: the bucket's arrival time (µs). ARGV: now in µs (empty: the server's
/// `TIME`), the interval in µs, the burst tolerance in µs. Returns 0 when admitted (and moves
/// the arrival time on by one interval), else the microseconds to wait (nothing is taken).
const GCRA: &str = r"
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(ARGV[1])
end
local interval = tonumber(ARGV[2])
local tolerance = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat or tat < now then tat = now end
local wait = tat - tolerance - now
if wait > 0 then return wait end
local next = tat + interval
redis.call('SET', KEYS[1], string.format('%d', next), 'PX', math.floor((next - now) / 1000) + 1)
return 0
";

/// A [`SharedRateLimiter`] in Redis. Cheap to clone; reconnects by itself.
#[derive(Clone)]
pub struct RedisRateLimiter {
    connection: Connection,
    script: Arc<Script>,
    prefix: String,
    place: Arc<str>,
    operation_timeout: Duration,
}

/// Configures a [`RedisRateLimiter`].
#[must_use]
pub struct RedisRateLimiterBuilder {
    url: String,
    prefix: String,
    connect_timeout: Duration,
    operation_timeout: Duration,
    tls: Option<RedisTls>,
}

impl RedisRateLimiter {
    /// A limiter on the server or cluster at `url` (`redis://host:port/db`, `rediss://…`,
    /// `redis-cluster://…`, `rediss-cluster://…`), with the key prefix
    /// `sms-sdk:rate:`, a 5 s connect timeout and a 10 s operation timeout.
    pub fn builder(url: impl Into<String>) -> RedisRateLimiterBuilder {
        RedisRateLimiterBuilder {
            url: url.into(),
            prefix: "sms-sdk:rate:".into(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            operation_timeout: DEFAULT_OPERATION_TIMEOUT,
            tls: None,
        }
    }

    /// The decision for one request of `bucket` under `limit` at `now` (microseconds on any
    /// clock the callers share; `None`: the Redis server's clock). For tests and tools; the
    /// client calls it with `None`.
    ///
    /// # Errors
    /// A [`StoreError`] when Redis fails or does not answer within the operation timeout.
    pub async fn admit_at(&self, bucket: &str, limit: &RateLimit, now: Option<u64>) -> Result<Admit, StoreError> {
        let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let mut invocation = self.script.key(format!("{{{}{bucket}}}", self.prefix));
        invocation.arg(now.map(|n| n.to_string()).unwrap_or_default());
        invocation.arg(micros(limit.interval()).max(1)).arg(micros(limit.tolerance()));
        let mut connection = self.connection.clone();
        let call = invocation.invoke_async::<i64>(&mut connection);
        let wait = match tokio::time::timeout(self.operation_timeout, call).await {
            Ok(result) => result.map_err(|e| StoreError::new(format!("{}: rate limit script: {e}", self.place)))?,
            Err(_elapsed) => {
                return Err(StoreError::new(format!(
                    "{}: the rate limit script took longer than {:?}",
                    self.place, self.operation_timeout
                )));
            }
        };
        Ok(match u64::try_from(wait) {
            Ok(0) | Err(_) => Admit::Now,
            Ok(micros) => Admit::After(Duration::from_micros(micros)),
        })
    }
}

impl SharedRateLimiter for RedisRateLimiter {
    fn admit<'a>(&'a self, bucket: &'a str, limit: &'a RateLimit) -> BoxFuture<'a, Result<Admit, StoreError>> {
        Box::pin(self.admit_at(bucket, limit, None))
    }
}

impl RedisRateLimiterBuilder {
    /// The prefix of every key the limiter writes (inside the hash tag).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// How long connecting (and each reconnection) may take; default 5 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one decision may take; default 10 s.
    pub fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.operation_timeout = timeout;
        self
    }

    /// TLS material (CA certificates, a client certificate) for a `rediss` URL, over its
    /// `sslrootcert`, `sslcert` and `sslkey` parameters.
    pub fn tls(mut self, tls: RedisTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Connects.
    ///
    /// # Errors
    /// A [`StoreError`] when the URL or a timeout is malformed, or the server unreachable within
    /// the connect timeout.
    pub async fn connect(self) -> Result<RedisRateLimiter, StoreError> {
        if self.connect_timeout.is_zero() || self.operation_timeout.is_zero() {
            return Err(StoreError::new("rate limiter timeouts must be longer than zero"));
        }
        let target = Target::parse(&self.url, self.tls.as_ref())?;
        let timeouts = Timeouts { connect: self.connect_timeout, operation: self.operation_timeout };
        let connection = target.connect(timeouts).await?;
        let place = target.place;
        Ok(RedisRateLimiter {
            connection,
            script: Arc::new(Script::new(GCRA)),
            prefix: self.prefix,
            place,
            operation_timeout: self.operation_timeout,
        })
    }
}

impl std::fmt::Debug for RedisRateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateLimiter")
            .field("at", &self.place)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for RedisRateLimiterBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateLimiterBuilder")
            .field("url", &redact_url_userinfo(&self.url))
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}
