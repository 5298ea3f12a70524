//! The Redis store: one hash per key, shared by many instances.
//!
//! ```no_run
//! # async fn example() -> Result<(), sms_sdk::idempotency::StoreError> {
//! use sms_sdk::idempotency::redis::RedisStore;
//!
//! let store = RedisStore::builder("redis://127.0.0.1:6379/0").prefix("myapp:sms:idem:").connect().await?;
//! # let _ = store; Ok(()) }
//! ```
//!
//! Each key is a hash at `<prefix>idempotency:<key>` (default prefix `sms-sdk:`) with the fields
//! `state`, `fingerprint`, `reservation_id`, `reserved_at`, `record` and `expires_at` (epoch
//! milliseconds). `reserve`, `finalize` and the operator's `resolve` are Lua scripts, so each is
//! atomic; accepted and rejected records also get a key expiry of their TTL, while reserved and
//! unknown records never expire.
//!
//! As a [`DedupeStore`] it writes one string key per webhook dedupe key, `<prefix>dedupe:<key>`
//! (a namespace apart from the records, so the two never collide),
//! holding the sighting's epoch milliseconds: `first_seen` is `SET … NX PX <retention>`, so the
//! sighting is forgotten once `retention` has passed on the Redis server's clock (not at the
//! `now` passed in).

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script, Value};

use super::row::{Row, expiry, payload};
use super::{
    Entry, Filter, FinalRecord, Finalized, Fingerprint, IdempotencyStore, Operator, Record, Reservation, ReservationId,
    Resolution, Resolved, StoreError, millis, resolved_receipt,
};
use crate::adapter::BoxFuture;
use crate::webhook::dedupe::DedupeStore;

/// Where idempotency records live under the prefix.
const RECORD_NAMESPACE: &str = "idempotency:";
/// Where dedupe keys live under the prefix.
const DEDUPE_NAMESPACE: &str = "dedupe:";

/// The longest dedupe retention Redis is asked for (a century, in milliseconds): longer ones would
/// overflow the server's expiry time.
const MAX_DEDUPE_RETENTION_MS: u64 = 100 * 365 * 24 * 3600 * 1000;

/// Claims a key: returns 1, or the existing hash when it is not claimable.
const RESERVE: &str = r"
local state = redis.call('HGET', KEYS[1], 'state')
if state then
  local expires = redis.call('HGET', KEYS[1], 'expires_at')
  local expired = expires and expires ~= '' and tonumber(expires) <= tonumber(ARGV[3])
  local retry = state == 'rejected' and redis.call('HGET', KEYS[1], 'fingerprint') == ARGV[1]
  if not (expired or retry) then
    return redis.call('HGETALL', KEYS[1])
  end
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 'state', 'reserved', 'fingerprint', ARGV[1], 'reservation_id', ARGV[2], 'reserved_at', ARGV[3])
return 1
";

/// Writes a final record if the reservation still owns the key: returns 1, else 0.
const FINALIZE: &str = r"
if redis.call('HGET', KEYS[1], 'state') ~= 'reserved' or redis.call('HGET', KEYS[1], 'reservation_id') ~= ARGV[1] then
  return 0
end
local fingerprint = redis.call('HGET', KEYS[1], 'fingerprint')
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'fingerprint', fingerprint, 'record', ARGV[3])
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'expires_at', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[5]), 1))
end
return 1
";

/// Settles an unresolved key: 1 done, 0 not found, -1 refused. ARGV: cutoff, sent?, record,
/// expires_at, ttl.
const RESOLVE: &str = r"
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 0 end
local expires = redis.call('HGET', KEYS[1], 'expires_at')
if expires and expires ~= '' and tonumber(expires) <= tonumber(ARGV[6]) then return 0 end
local stale = state == 'reserved' and tonumber(redis.call('HGET', KEYS[1], 'reserved_at')) < tonumber(ARGV[1])
if not (state == 'unknown' or stale) then return -1 end
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
  return 1
end
local fingerprint = redis.call('HGET', KEYS[1], 'fingerprint')
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'accepted', 'fingerprint', fingerprint, 'record', ARGV[3], 'expires_at', ARGV[4])
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[5]), 1))
return 1
";

/// Idempotency records and webhook dedupe keys in Redis. Cheap to clone; reconnects by itself.
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    prefix: String,
}

/// Configures a [`RedisStore`].
#[derive(Debug)]
#[must_use]
pub struct RedisStoreBuilder {
    url: String,
    prefix: String,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl From<redis::RedisError> for StoreError {
    fn from(error: redis::RedisError) -> Self {
        Self::new(error)
    }
}

impl RedisStore {
    /// Connects to `url` with the default key prefix.
    ///
    /// # Errors
    /// A [`StoreError`] when the URL is malformed or the server unreachable.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// A store on the server at `url` (`redis://host:port/db`).
    pub fn builder(url: impl Into<String>) -> RedisStoreBuilder {
        RedisStoreBuilder { url: url.into(), prefix: "sms-sdk:".into() }
    }

    fn key(&self, key: &str) -> String {
        format!("{}{RECORD_NAMESPACE}{key}", self.prefix)
    }

    fn dedupe_key(&self, key: &str) -> String {
        format!("{}{DEDUPE_NAMESPACE}{key}", self.prefix)
    }

    async fn hash(&self, key: &str) -> Result<Option<Row>, StoreError> {
        let fields: HashMap<String, String> = self.connection.clone().hgetall(self.key(key)).await?;
        Ok(row(key, fields))
    }
}

impl RedisStoreBuilder {
    /// The prefix of every Redis key the store writes.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Connects.
    ///
    /// # Errors
    /// A [`StoreError`] when the URL is malformed or the server unreachable.
    pub async fn connect(self) -> Result<RedisStore, StoreError> {
        let client = redis::Client::open(self.url.as_str())?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(Duration::from_secs(10)))
            .set_number_of_retries(1);
        let connection = ConnectionManager::new_with_config(client, config).await?;
        Ok(RedisStore { connection, prefix: self.prefix })
    }
}

/// The row of a hash's fields; `None` for an empty hash (no key).
fn row(key: &str, mut fields: HashMap<String, String>) -> Option<Row> {
    let state = fields.remove("state")?;
    let number = |v: Option<String>| v.and_then(|v| v.parse().ok());
    Some(Row {
        key: key.to_owned(),
        state,
        fingerprint: fields.remove("fingerprint").unwrap_or_default(),
        reservation_id: fields.remove("reservation_id"),
        reserved_at: number(fields.remove("reserved_at")),
        payload: fields.remove("record"),
        expires_at: number(fields.remove("expires_at")),
    })
}

/// The fields of a flat `HGETALL` reply.
fn fields(values: Vec<Value>) -> Result<HashMap<String, String>, StoreError> {
    let texts = values
        .into_iter()
        .map(|v| redis::from_redis_value::<String>(v).map_err(StoreError::new))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(texts.chunks(2).filter_map(|pair| Some((pair.first()?.clone(), pair.get(1)?.clone()))).collect())
}

impl IdempotencyStore for RedisStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        Box::pin(async move {
            let now = millis(SystemTime::now());
            match self.hash(key).await? {
                Some(row) if row.expires_at.is_none_or(|at| at > now) => row.record().map(Some),
                Some(_) | None => Ok(None),
            }
        })
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a Fingerprint,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        Box::pin(async move {
            let id = ReservationId::new();
            let reply: Value = Script::new(RESERVE)
                .key(self.key(key))
                .arg(fingerprint.as_str())
                .arg(id.as_str())
                .arg(millis(now))
                .invoke_async(&mut self.connection.clone())
                .await?;
            if let Value::Int(1) = reply {
                return Ok(Reservation::Acquired(id));
            }
            let Value::Array(values) = reply else {
                return Err(StoreError::new(format!("unexpected reply from the reserve script: {reply:?}")));
            };
            let row = row(key, fields(values)?).ok_or_else(|| StoreError::new("empty record"))?;
            Ok(Reservation::Existing(Box::new(row.record()?)))
        })
    }

    fn finalize<'a>(
        &'a self,
        key: &'a str,
        reservation: &'a ReservationId,
        record: FinalRecord,
        ttl: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Finalized, StoreError>> {
        Box::pin(async move {
            let expires = expiry(&record, ttl, now).map(|at| at.to_string()).unwrap_or_default();
            let written: i64 = Script::new(FINALIZE)
                .key(self.key(key))
                .arg(reservation.as_str())
                .arg(record.state().as_str())
                .arg(payload(&record)?)
                .arg(expires)
                .arg(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
                .invoke_async(&mut self.connection.clone())
                .await?;
            Ok(if written == 1 { Finalized::Written } else { Finalized::NotOwner })
        })
    }
}

impl Operator for RedisStore {
    fn list<'a>(&'a self, filter: Filter, now: SystemTime) -> BoxFuture<'a, Result<Vec<Entry>, StoreError>> {
        Box::pin(async move {
            let mut connection = self.connection.clone();
            let records = format!("{}{RECORD_NAMESPACE}", self.prefix);
            let escaped: String = records
                .chars()
                .flat_map(|c| match c {
                    '*' | '?' | '[' | ']' | '\\' => vec!['\\', c],
                    c => vec![c],
                })
                .collect();
            let pattern = format!("{escaped}*");
            let mut keys: Vec<String> = Vec::new();
            {
                let mut iter = connection.scan_match::<_, String>(pattern).await?;
                while let Some(key) = futures_util::StreamExt::next(&mut iter).await {
                    keys.push(key?);
                }
            }
            keys.sort();
            let mut entries = Vec::new();
            for full in keys {
                let key = full.strip_prefix(&records).unwrap_or(&full);
                if let Some(row) = self.hash(key).await?
                    && row.expires_at.is_none_or(|at| at > millis(now))
                {
                    let entry = row.entry()?;
                    if filter.matches(&entry.record, now) {
                        entries.push(entry);
                    }
                }
            }
            Ok(entries)
        })
    }

    fn resolve<'a>(
        &'a self,
        key: &'a str,
        resolution: Resolution,
        stale_after: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Resolved, StoreError>> {
        Box::pin(async move {
            let cutoff = millis(now) - i64::try_from(stale_after.as_millis()).unwrap_or(i64::MAX);
            let (sent, json, expires, ttl) = match resolution {
                Resolution::NotSent => ("0", String::new(), String::new(), 0),
                Resolution::Sent { provider, provider_id, ttl } => {
                    let result = FinalRecord::Accepted(resolved_receipt(provider, provider_id));
                    let expires = expiry(&result, ttl, now).map(|at| at.to_string()).unwrap_or_default();
                    ("1", payload(&result)?, expires, u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX))
                }
            };
            let outcome: i64 = Script::new(RESOLVE)
                .key(self.key(key))
                .arg(cutoff)
                .arg(sent)
                .arg(json)
                .arg(expires)
                .arg(ttl)
                .arg(millis(now))
                .invoke_async(&mut self.connection.clone())
                .await?;
            Ok(match outcome {
                1 => Resolved::Done,
                0 => Resolved::NotFound,
                _ => match self.hash(key).await? {
                    Some(row) => Resolved::Refused(Box::new(row.record()?)),
                    None => Resolved::NotFound,
                },
            })
        })
    }
}

impl DedupeStore for RedisStore {
    fn first_seen<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let retention_ms =
                u64::try_from(retention.as_millis()).unwrap_or(u64::MAX).clamp(1, MAX_DEDUPE_RETENTION_MS);
            let reply: Option<String> = redis::cmd("SET")
                .arg(self.dedupe_key(key))
                .arg(millis(now))
                .arg("NX")
                .arg("PX")
                .arg(retention_ms)
                .query_async(&mut self.connection.clone())
                .await?;
            match reply.as_deref() {
                Some("OK") => Ok(true),
                None => Ok(false),
                Some(other) => Err(StoreError::new(format!("unexpected reply from SET NX: {other:?}"))),
            }
        })
    }
}
