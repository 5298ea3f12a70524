//! The Redis store: one hash per key, shared by many instances.
//!
//! ```no_run
//! # async fn example() -> Result<(), sms_sdk::store::StoreError> {
//! use sms_sdk::store::redis::RedisStore;
//!
//! let store = RedisStore::builder("redis://127.0.0.1:6379/0").prefix("myapp:sms:idem:").connect().await?;
//! # let _ = store; Ok(()) }
//! ```
//!
//! Each key is a hash at `<prefix>idempotency:<key>` (default prefix `sms-sdk:`) with the fields
//! `state`, `fingerprint`, `reservation_id`, `reserved_at`, `record`, `expires_at` (epoch
//! milliseconds) and `recipient`; a final record keeps its reservation's `reserved_at` and
//! `recipient` (records of stored format version 0 have neither), and, from this release,
//! `finalize`'s its `reservation_id` (which earlier releases ignore on a final record). `reserve`, `finalize` and the
//! operator's `resolve` are Lua scripts, so each is atomic, and each is one round trip; accepted
//! and rejected records also get a key expiry of their TTL (at most a century), while reserved and
//! unknown records never expire.
//!
//! The scripts are loaded when the store connects and run by `EVALSHA` (their SHA1 is computed
//! once per process). A server that no longer has them (restarted, failed over, or after
//! `SCRIPT FLUSH`) answers `NOSCRIPT`: the store loads the script again and runs the call once
//! more, within the same operation timeout.
//!
//! # URLs, TLS and Redis Cluster
//!
//! | URL | what it reaches |
//! | --- | --- |
//! | `redis://[user:password@]host[:port][/db]` | one server, plain text |
//! | `rediss://…` | one server over TLS |
//! | `redis-cluster://[user:password@]host[:port][?node=host:port&node=…]` | a Redis Cluster, plain text |
//! | `rediss-cluster://…` | a Redis Cluster over TLS |
//!
//! TLS verifies the server's certificate and name against the platform's trust store (so
//! `SSL_CERT_FILE` and `SSL_CERT_DIR` work), or against the CA certificates of the URL's
//! `sslrootcert=PATH`; `sslcert=PATH` and `sslkey=PATH` present a client certificate (the
//! parameters are named as libpq names them; [`RedisStoreBuilder::tls`] gives the same as bytes).
//! `#insecure` at the end of the URL turns the checks off, and the store's place in `Debug` and
//! errors then says `certificate NOT verified`. A certificate that does not verify is a store
//! error within the connect timeout, before any provider request.
//!
//! A cluster URL's host and `node=`s are seed nodes; the client learns the masters and their
//! slots from the cluster, follows `MOVED`/`ASK` redirects and reconnects to a failed-over
//! master, trying a command at most 3 times, all within the operation timeout. Every script
//! touches exactly one key, passed in `KEYS[1]`: the hash of its idempotency key (or the string of
//! its dedupe key), so each call lives in one hash slot whatever the key's text (a `{…}` in it
//! only picks that slot; no script has a second key to be split from) and needs no hash tag. The
//! suppression list's keys of one recipient share the hash tag `{<recipient>}`. The layout is
//! part of the stored format, which stays readable from release to release (the golden fixtures
//! of the store tests hold it). Listing (`SCAN`) walks every master in turn.
//!
//! A client re-sends a command when its connection drops before the reply (the cluster client
//! does): the scripts make that harmless. `reserve` finds its own reservation id and answers
//! acquired again; `finalize` finds its own record (final records keep their reservation id)
//! and answers written again.
//!
//! Connecting gives up after the connect timeout (default 5 s), and every command or script
//! after the operation timeout (default 10 s), a cluster's redirects and retries included; the
//! connection then reconnects by itself.
//!
//! As a [`DedupeStore`](crate::store::DedupeStore) it writes one string key per webhook dedupe
//! key, `<prefix>dedupe:<key>` (a namespace apart from the records, so the two never collide).
//! A key done holds the sighting's epoch milliseconds (as every release wrote it); a key claimed
//! holds `c:<token>`, the claim's token, with a key expiry of the lease. `first_seen_at` is `SET
//! … NX PX <retention>` (a claim blocks it as a sighting does), `commit_at` the same `SET`
//! without `NX`; `claim_at` and `release` are Lua scripts on that one key (claim: `SET … PX
//! <lease>` when the key is absent, else answer in flight or done by its value; release: `DEL`
//! only while it holds this token's claim). Leases and retentions run out on the Redis server's
//! clock (not at the `now` passed in).
//!
//! # Durability: run this Redis with the append-only file
//!
//! The store keeps only what the server keeps. A Redis without persistence (`appendonly no` and
//! no snapshots, a usual cache setting) forgets every reservation and record when it restarts:
//! a key whose send was in flight, whose outcome was unknown or whose message was accepted then
//! reads as never used, the next send with it goes out again (the duplicate text the key was
//! meant to prevent), and the unknown outcomes an operator had to reconcile are gone from
//! `list`. Snapshots alone (`save`) lose the same way everything written since the last one.
//!
//! - `appendonly yes` with `appendfsync always`: every reservation and outcome is on disk before
//!   Redis answers, so a restart, a killed server or a power loss loses nothing Redis has
//!   confirmed. Each write waits for a disk flush, two per send.
//! - `appendfsync everysec` (the usual AOF setting): a restarted or killed Redis process keeps
//!   every write (it is in the operating system's cache), but a crash or power loss of its
//!   machine may lose about the last second of writes (two when the disk is slow), and a key sent
//!   in that second may be sent again.
//!
//! Replication does not replace this: writes reach replicas asynchronously, so a replica promoted
//! after a failover (Sentinel, a cluster's own, a managed service's) may lack the newest
//! reservations, with the same risk as `everysec`. `min-replicas-to-write 1` makes a master
//! without a replica in reach refuse writes (a store error, nothing sent); `docs/deploying.md`
//! has what each managed service keeps.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, SystemTime};

use redis::{Cmd, ErrorKind, FromRedisValue, Pipeline, RedisError, RedisWrite, ServerErrorKind, Value};

use super::error::Limit;
use super::row::{Row, expiry, payload_to, write_payload};
use super::timeouts::{Timeouts, timeout_setters};
use super::{
    Claim, Filter, FinalRecord, Finalized, IdempotencyStore, Listing, Operator, Page, Record, Reservation,
    ReservationId, Resolution, Resolved, StoreError, millis, resolved_receipt, stale_cutoff,
};
use crate::redact::redact_url_userinfo;
use futures_util::future::BoxFuture;

mod connection;
mod dedupe;
mod list;
mod reference;

pub use connection::RedisTls;
pub(crate) use connection::{Connection, Target};

/// Where idempotency records live under the prefix.
const RECORD_NAMESPACE: &str = "idempotency:";

/// The longest key expiry Redis is asked for (a century, in milliseconds): longer ones would
/// overflow the server's expiry time.
const MAX_EXPIRY_MS: u64 = 100 * 365 * 24 * 3600 * 1000;

/// Claims a key: returns 1, or the existing hash when it is not claimable (or not readable).
/// ARGV: fingerprint, reservation id, now, the recipient (or empty). The same call again (a
/// client that re-sent it after a dropped reply) finds its own reservation and answers 1 again.
const RESERVE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  local state = redis.call('HGET', KEYS[1], 'state')
  if state == 'reserved' and redis.call('HGET', KEYS[1], 'reservation_id') == ARGV[2] then
    return 1
  end
  local expires = tonumber(redis.call('HGET', KEYS[1], 'expires_at'))
  local expired = expires and expires <= tonumber(ARGV[3])
  local retry = state == 'rejected' and redis.call('HGET', KEYS[1], 'fingerprint') == ARGV[1]
  if not (expired or retry) then
    return redis.call('HGETALL', KEYS[1])
  end
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 'state', 'reserved', 'fingerprint', ARGV[1], 'reservation_id', ARGV[2], 'reserved_at', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'recipient', ARGV[4]) end
return 1
";

/// Keeps what a reservation's final record inherits from it (its recipient and time), across
/// the `DEL` that clears the rest: a Lua fragment run before it.
const KEEP: &str = r"
local kept = {}
for _, field in ipairs({'recipient', 'reserved_at'}) do
  local value = redis.call('HGET', KEYS[1], field)
  if value then table.insert(kept, field) table.insert(kept, value) end
end
";

/// Writes back what [`KEEP`] kept: a Lua fragment run after the new fields.
const RESTORE: &str = r"
if #kept > 0 then redis.call('HSET', KEYS[1], unpack(kept)) end
";

/// Writes a final record if the reservation still owns the key: returns 1, else 0. The record
/// keeps the reservation id, so that the same call again (a client that re-sent it after a
/// dropped reply) finds its own record written and answers 1 again.
static FINALIZE: LazyLock<String> = LazyLock::new(|| {
    format!(
        r"
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'reserved' or redis.call('HGET', KEYS[1], 'reservation_id') ~= ARGV[1] then
  local same = state == ARGV[2] and redis.call('HGET', KEYS[1], 'reservation_id') == ARGV[1]
  if same and redis.call('HGET', KEYS[1], 'record') == ARGV[3] then return 1 end
  return 0
end
local fingerprint = redis.call('HGET', KEYS[1], 'fingerprint')
{KEEP}
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'fingerprint', fingerprint, 'record', ARGV[3], 'reservation_id', ARGV[1])
{RESTORE}
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'expires_at', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
end
return 1
"
    )
});

/// Settles an unresolved key: 1 done, 0 not found, or the hash when refused (or not readable).
/// ARGV: cutoff, sent?, record, `expires_at`, ttl, now.
static RESOLVE: LazyLock<String> = LazyLock::new(|| {
    format!(
        r"
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return 0 end
local expires = tonumber(redis.call('HGET', KEYS[1], 'expires_at'))
if expires and expires <= tonumber(ARGV[6]) then return 0 end
local reserved_at = tonumber(redis.call('HGET', KEYS[1], 'reserved_at'))
local stale = state == 'reserved' and reserved_at and reserved_at < tonumber(ARGV[1])
if not (state == 'unknown' or stale) then return redis.call('HGETALL', KEYS[1]) end
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
  return 1
end
local fingerprint = redis.call('HGET', KEYS[1], 'fingerprint')
{KEEP}
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', 'accepted', 'fingerprint', fingerprint, 'record', ARGV[3], 'expires_at', ARGV[4])
{RESTORE}
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
"
    )
});

/// The server's answer to an `EVALSHA` of a script it does not have.
const NO_SCRIPT: ServerErrorKind = ServerErrorKind::NoScript;

/// A Lua script and its SHA1, computed once.
pub(crate) struct Lua {
    code: &'static str,
    sha: String,
}

impl Lua {
    pub(crate) fn new(code: &'static str) -> Self {
        Self { code, sha: redis::Script::new(code).get_hash().to_owned() }
    }

    /// `EVALSHA` of this script on `keys` (its arguments follow).
    pub(crate) fn on_keys(&self, keys: &[String]) -> Cmd {
        let mut command = redis::cmd("EVALSHA");
        command.arg(&self.sha).arg(keys.len()).arg(keys);
        command
    }

    /// `EVALSHA` of this script on the one key `key` (its arguments follow).
    #[cfg(test)]
    fn on(&self, key: &str) -> Cmd {
        self.on_key(RecordKey { prefix: "", key }, 0)
    }

    /// `EVALSHA` of this script on the one key written by `key` (its arguments follow, about
    /// `room` bytes of them): the command's buffers are sized once and the key and arguments are
    /// written straight into them, with no text built on the side.
    fn on_key(&self, key: RecordKey<'_>, room: usize) -> Cmd {
        let mut command = Cmd::with_capacity(10, 128 + room);
        command.arg("EVALSHA").arg(&self.sha).arg(1).arg(key);
        command
    }

    /// `SCRIPT LOAD` of this script.
    fn load(&self) -> Cmd {
        let mut command = redis::cmd("SCRIPT");
        command.arg("LOAD").arg(self.code);
        command
    }
}

/// The Redis key of a record, `<prefix>idempotency:<key>`, written into a command as one
/// argument without building the text first.
#[derive(Clone, Copy)]
struct RecordKey<'a> {
    prefix: &'a str,
    key: &'a str,
}

impl redis::ToRedisArgs for RecordKey<'_> {
    fn write_redis_args<W: ?Sized + RedisWrite>(&self, out: &mut W) {
        use std::io::Write as _;
        let mut arg = out.writer_for_next_arg();
        for part in [self.prefix, RECORD_NAMESPACE, self.key] {
            // Writing into a command's buffer cannot fail.
            let _ = arg.write_all(part.as_bytes());
        }
    }
}

/// The store's scripts.
struct Scripts {
    reserve: Lua,
    finalize: Lua,
    resolve: Lua,
    claim: Lua,
    release: Lua,
}

static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
    reserve: Lua::new(RESERVE),
    finalize: Lua::new(FINALIZE.as_str()),
    resolve: Lua::new(RESOLVE.as_str()),
    claim: Lua::new(dedupe::CLAIM),
    release: Lua::new(dedupe::RELEASE),
});

/// Idempotency records and webhook dedupe keys in Redis. Cheap to clone; reconnects by itself.
#[derive(Clone)]
pub struct RedisStore {
    pub(crate) connection: Connection,
    pub(crate) prefix: String,
    pub(crate) place: Arc<str>,
    timeouts: Timeouts,
}

/// Configures a [`RedisStore`].
#[must_use]
pub struct RedisStoreBuilder {
    url: String,
    prefix: String,
    timeouts: Timeouts,
    tls: Option<RedisTls>,
}

impl std::fmt::Debug for RedisStoreBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStoreBuilder")
            .field("url", &redact_url_userinfo(&self.url))
            .field("prefix", &self.prefix)
            .field("timeouts", &self.timeouts)
            .field("tls", &self.tls)
            .finish()
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("at", &self.place)
            .field("prefix", &self.prefix)
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

impl From<RedisError> for StoreError {
    /// The driver's error; a redirect says that the URL names one node of a cluster.
    fn from(error: RedisError) -> Self {
        let redirected = matches!(error.kind(), ErrorKind::Server(ServerErrorKind::Moved | ServerErrorKind::Ask));
        let error = Self::new(error);
        if redirected { error.hint(connection::CLUSTER_NODE) } else { error }
    }
}

impl RedisStore {
    /// Connects to `url` with the default key prefix and timeouts.
    ///
    /// # Errors
    /// A [`StoreError`] when the URL is malformed or the server unreachable.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// A store on the server or cluster at `url`: `redis://host:port/db`, `rediss://…` (TLS),
    /// `redis-cluster://host:port?node=host:port…` or `rediss-cluster://…` (the URLs and their TLS
    /// parameters are in the [module's documentation](self#urls-tls-and-redis-cluster)).
    pub fn builder(url: impl Into<String>) -> RedisStoreBuilder {
        RedisStoreBuilder { url: url.into(), prefix: "sms-sdk:".into(), timeouts: Timeouts::default(), tls: None }
    }

    /// The Redis key of `key`'s record, in parts to write into a command as one argument.
    fn record_key<'a>(&'a self, key: &'a str) -> RecordKey<'a> {
        RecordKey { prefix: &self.prefix, key }
    }

    /// Runs one command or script, `what`, within the operation timeout.
    pub(crate) async fn run<T>(
        &self,
        what: &str,
        command: impl Future<Output = Result<T, RedisError>>,
    ) -> Result<T, StoreError> {
        let (place, limit) = (&self.place, self.timeouts.operation);
        let timed_out = || StoreError::timeout(place, what, Limit::Operation, limit);
        let work = async { command.await.map_err(|e| if e.is_timeout() { timed_out() } else { StoreError::from(e) }) };
        self.timeouts.operation(place, what, work).await
    }

    /// Runs `command`, an `EVALSHA` of `script`, within the operation timeout; when the server
    /// does not have the script (`NOSCRIPT`), loads it and runs the command once more.
    async fn eval<T: FromRedisValue>(&self, what: &str, script: &Lua, command: &Cmd) -> Result<T, StoreError> {
        let mut connection = self.connection.clone();
        let work = async {
            match command.query_async(&mut connection).await {
                Err(e) if e.kind() == ErrorKind::Server(NO_SCRIPT) => {
                    script.load().query_async::<()>(&mut connection).await?;
                    command.query_async(&mut connection).await
                }
                result => result,
            }
        };
        self.run(what, work).await
    }

    /// Runs `pipe` (none of its commands ignored) within the operation timeout and answers each
    /// command's reply. The `EVALSHA`s of `script` the server answered `NOSCRIPT` (it lost its
    /// scripts, or never had this one) run once more, after loading it, and only they: every
    /// other command ran once. Any other error fails the whole call.
    pub(crate) async fn eval_each(&self, what: &str, script: &Lua, pipe: Pipeline) -> Result<Vec<Value>, StoreError> {
        let work = async {
            let mut replies = self.connection.each(pipe.clone()).await?;
            let lost =
                |reply: &Result<Value, RedisError>| matches!(reply, Err(e) if e.kind() == ErrorKind::Server(NO_SCRIPT));
            if replies.iter().any(lost) {
                script.load().query_async::<()>(&mut self.connection.clone()).await?;
                let mut again = redis::pipe();
                for (command, _) in pipe.cmd_iter().zip(&replies).filter(|(_, reply)| lost(reply)) {
                    again.add_command(command.clone());
                }
                let rerun = self.connection.each(again).await?;
                for (reply, answer) in replies.iter_mut().filter(|reply| lost(reply)).zip(rerun) {
                    *reply = answer;
                }
            }
            replies.into_iter().collect()
        };
        self.run(what, work).await
    }

    /// The row of `key`'s hash, read for the operation `what`; `None` when there is no hash.
    async fn hash(&self, what: &str, key: &str) -> Result<Option<Row>, StoreError> {
        let mut command = redis::cmd("HGETALL");
        command.arg(self.record_key(key));
        let value: Value = self.run(what, command.query_async(&mut self.connection.clone())).await?;
        row(key, value).map_err(|e| e.at(&self.place))
    }
}

impl RedisStoreBuilder {
    /// The prefix of every Redis key the store writes.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    timeout_setters! {
        connect: "How long connecting (and each reconnection) may take; default 5 s.",
        operation: "How long one command or script may take, a cluster's redirects and retries included; default 10 s.",
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
    pub async fn connect(self) -> Result<RedisStore, StoreError> {
        let timeouts = self.timeouts.checked()?;
        let target = Target::parse(&self.url, self.tls.as_ref())?;
        let connection = target.connect(timeouts).await?;
        let place = target.place;
        // Load the scripts now (on every master of a cluster), so that the first calls need not.
        let mut loading = redis::pipe();
        for script in [&SCRIPTS.reserve, &SCRIPTS.finalize, &SCRIPTS.resolve, &SCRIPTS.claim, &SCRIPTS.release] {
            loading.add_command(script.load());
        }
        let loaded = async {
            for reply in connection.each(loading).await? {
                reply?;
            }
            Ok(())
        };
        timeouts.operation(&place, "loading the scripts", loaded).await?;
        Ok(RedisStore { connection, prefix: self.prefix, place, timeouts })
    }
}

/// The row of a hash read back (`HGETALL`, or the reserve script's reply); `None` for no hash.
fn row(key: &str, value: Value) -> Result<Option<Row>, StoreError> {
    let mut fields: HashMap<String, String> = redis::from_redis_value(value)
        .map_err(|e| StoreError::corrupt(key, format_args!("the hash is not text: {e}")))?;
    if fields.is_empty() {
        return Ok(None);
    }
    let mut number = |field: &str| {
        fields
            .remove(field)
            .map(|v| v.parse().map_err(|_| StoreError::corrupt(key, format_args!("{field} is not a number"))))
            .transpose()
    };
    let (reserved_at, expires_at) = (number("reserved_at")?, number("expires_at")?);
    Ok(Some(Row {
        key: key.to_owned(),
        state: fields.remove("state"),
        fingerprint: fields.remove("fingerprint"),
        reservation_id: fields.remove("reservation_id"),
        reserved_at,
        payload: fields.remove("record"),
        expires_at,
        recipient: fields.remove("recipient"),
    }))
}

/// The bytes a finalize command is sized for beyond its key: the record of a usual send (a
/// receipt with one attempt is about 1 KB) and the other arguments.
const FINALIZE_ROOM: usize = 2048;

/// A key expiry for Redis: at least a millisecond, at most [`MAX_EXPIRY_MS`].
fn expiry_ms(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).clamp(1, MAX_EXPIRY_MS)
}

impl IdempotencyStore for RedisStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        Box::pin(async move {
            let now = millis(SystemTime::now());
            let row = self.hash("get", key).await?.filter(|row| row.is_live(now));
            row.map(|r| r.record()).transpose().map_err(|e| e.at(&self.place))
        })
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        claim: Claim<'a>,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        Box::pin(async move {
            let id = ReservationId::new();
            let script = &SCRIPTS.reserve;
            let mut command = script.on_key(self.record_key(key), self.prefix.len() + key.len() + 192);
            command.arg(claim.fingerprint.as_str()).arg(id.as_str()).arg(millis(now)).arg(claim.to.unwrap_or_default());
            let reply: Value = self.eval("reserve", script, &command).await?;
            if let Value::Int(1) = reply {
                return Ok(Reservation::Acquired(id));
            }
            let record = row(key, reply)?.ok_or_else(|| StoreError::new("empty record")).and_then(|r| r.record());
            Ok(Reservation::Existing(Box::new(record.map_err(|e| e.at(&self.place))?)))
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
            let script = &SCRIPTS.finalize;
            let mut command = script.on_key(self.record_key(key), self.prefix.len() + key.len() + FINALIZE_ROOM);
            command.arg(reservation.as_str()).arg(record.state().as_str());
            // The record's JSON is written straight into the command (the same text `payload`
            // returns).
            write_payload(command.writer_for_next_arg(), &record)?;
            match expiry(&record, ttl, now) {
                Some(at) => command.arg(at),
                None => command.arg(""),
            };
            command.arg(expiry_ms(ttl));
            let written: i64 = self.eval("finalize", script, &command).await?;
            Ok(if written == 1 { Finalized::Written } else { Finalized::NotOwner })
        })
    }

    fn references(&self) -> Option<&dyn crate::store::ReferenceIndex> {
        Some(self)
    }
}

impl Operator for RedisStore {
    fn list(&self, filter: Filter, now: SystemTime, page: Page) -> BoxFuture<'_, Result<Listing, StoreError>> {
        Box::pin(list::page(self, filter, now, page))
    }

    fn resolve<'a>(
        &'a self,
        key: &'a str,
        resolution: Resolution,
        stale_after: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Resolved, StoreError>> {
        Box::pin(async move {
            let (sent, json, expires, ttl) = match resolution {
                Resolution::NotSent => ("0", String::new(), String::new(), 1),
                Resolution::Sent { provider, provider_id, ttl, endpoint } => {
                    let result = FinalRecord::Accepted(resolved_receipt(provider, provider_id));
                    let expires = expiry(&result, ttl, now).map(|at| at.to_string()).unwrap_or_default();
                    ("1", payload_to(&result, endpoint.as_deref())?, expires, expiry_ms(ttl))
                }
            };
            let script = &SCRIPTS.resolve;
            let mut command = script.on_key(self.record_key(key), self.prefix.len() + key.len() + FINALIZE_ROOM);
            command.arg(stale_cutoff(now, stale_after)).arg(sent).arg(json).arg(expires).arg(ttl).arg(millis(now));
            let outcome: Value = self.eval("resolve", script, &command).await?;
            if let Value::Int(done @ (0 | 1)) = outcome {
                return Ok(if done == 1 { Resolved::Done } else { Resolved::NotFound });
            }
            // Refused: the reply is the key's hash.
            Ok(match row(key, outcome).map_err(|e| e.at(&self.place))? {
                Some(row) => Resolved::Refused(Box::new(row.record().map_err(|e| e.at(&self.place))?)),
                None => Resolved::NotFound,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_touches_only_its_one_key() {
        for script in [RESERVE, FINALIZE.as_str(), RESOLVE.as_str(), dedupe::CLAIM, dedupe::RELEASE] {
            let mentions = script.matches("KEYS[").count();
            assert!(mentions > 0 && script.matches("KEYS[1]").count() == mentions, "{script}");
            // Every call names its key first: no key built inside the script.
            for call in script.split("redis.call(").skip(1) {
                let argument = call.split_once(',').map_or("", |(_, rest)| rest.trim_start());
                assert!(argument.starts_with("KEYS[1]"), "{call}");
            }
        }
        let command = SCRIPTS.reserve.on("k");
        assert_eq!(command.args_iter().count(), 4, "EVALSHA, the SHA1, one key and the key");
    }
}
