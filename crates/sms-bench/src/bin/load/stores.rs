//! The stores' reserve + finalize pair: through the store API, and the same SQL or Lua run by a
//! minimal client (statements prepared once, scripts loaded once), plus `pgbench -M prepared`.
//!
//! The Redis minimal client runs the store's scripts read from its source ([`lua_script`]). The
//! SQL one runs copies of the store's statements (the store builds them with `format!`), checked
//! against the store source this binary was built from ([`in_sync`]): a store that changed its SQL
//! (or lost a script) shows up as "out of sync" in the report instead of being compared with stale
//! text.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sms_sdk::Receipt;
use sms_sdk::store::{FinalRecord, Fingerprint, IdempotencyStore, Reservation};

/// The table the stores use by default (the minimal clients use it too).
pub(crate) const TABLE: &str = "sms_idempotency";
/// The TTL of finalized records (the client's default, 24 h).
pub(crate) const TTL: Duration = Duration::from_hours(24);

/// The insert-or-take-over of `store/sql.rs` that its reserve statements start with (`$1` key,
/// `$2` fingerprint, `$3` reservation id, `$4` now ms).
const SQL_UPSERT: &str =
    "INSERT INTO {table} (key, fingerprint, state, reservation_id, reserved_at, record, expires_at)
                 VALUES ($1, $2, 'reserved', $3, $4, NULL, NULL)
                 ON CONFLICT (key) DO UPDATE SET
                    fingerprint = excluded.fingerprint, state = 'reserved', reservation_id = excluded.reservation_id,
                    reserved_at = excluded.reserved_at, record = NULL, expires_at = NULL
                 WHERE ({table}.expires_at IS NOT NULL AND {table}.expires_at <= $4)
                    OR ({table}.state = 'rejected' AND {table}.fingerprint = excluded.fingerprint)";
/// `reserve` of `store/sql.rs`: the statement of a reserve that claims a new key.
const SQL_RESERVE: &str = "{upsert} RETURNING reservation_id";
/// `finalize` of `store/sql.rs` (`$1` key, `$2` reservation id, `$3` state, `$4` record JSON,
/// `$5` expiry ms).
const SQL_FINALIZE: &str =
    "UPDATE {table} SET state = $3, record = $4, expires_at = $5, reservation_id = NULL, reserved_at = NULL
                 WHERE key = $1 AND state = 'reserved' AND reservation_id = $2";
/// The table of `store/sql.rs`, for a database the store has not created it in yet.
const SQL_CREATE: &str = "CREATE TABLE IF NOT EXISTS {table} (
                    key TEXT PRIMARY KEY,
                    fingerprint TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('reserved', 'accepted', 'rejected', 'unknown')),
                    reservation_id TEXT,
                    reserved_at BIGINT,
                    record TEXT,
                    expires_at BIGINT
                )";

/// The key prefix of the Redis store's records (default prefix + record namespace).
const REDIS_PREFIX: &str = "sms-sdk:idempotency:";

/// The store sources this binary was built from.
const SQL_SOURCE: &str = include_str!("../../../../sms-sdk/src/store/sql.rs");
const REDIS_SOURCE: &str = include_str!("../../../../sms-sdk/src/store/redis/mod.rs");

/// The Lua script the Redis store runs as `name`, read from the store's source: a constant
/// (`const NAME: &str = r"…";`) as written, or a script the store composes
/// (`static NAME: LazyLock<String>` of a `format!` template) with its `{FRAGMENT}`s replaced by
/// those constants. The minimal client runs the very same text.
pub(crate) fn lua_script(name: &str) -> Option<String> {
    if let Some((_, rest)) = REDIS_SOURCE.split_once(&format!("const {name}: &str = r\"")) {
        return rest.split_once("\";").map(|(script, _)| script.to_owned());
    }
    let (_, rest) = REDIS_SOURCE.split_once(&format!("static {name}: LazyLock<String> = "))?;
    let (_, template) = rest.split_once("r\"")?;
    let (template, _) = template.split_once("\"\n")?;
    let mut script = String::new();
    let mut rest = template;
    while let Some((before, after)) = rest.split_once('{') {
        script.push_str(before);
        let (fragment, after) = after.split_once('}')?;
        script.push_str(&lua_script(fragment)?);
        rest = after;
    }
    script.push_str(rest);
    Some(script)
}

fn squeeze(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Which copies still match the store sources: `(what, in sync)`.
pub(crate) fn in_sync() -> Vec<(&'static str, bool)> {
    let sql = squeeze(SQL_SOURCE);
    vec![
        ("SQL reserve (store/sql.rs)", sql.contains(&squeeze(SQL_UPSERT)) && sql.contains(&squeeze(SQL_RESERVE))),
        ("SQL finalize (store/sql.rs)", sql.contains(&squeeze(SQL_FINALIZE))),
        ("Lua reserve (store/redis/mod.rs)", lua_script("RESERVE").is_some()),
        ("Lua finalize (store/redis/mod.rs)", lua_script("FINALIZE").is_some()),
    ]
}

fn sql(template: &str) -> String {
    template.replace("{upsert}", SQL_UPSERT).replace("{table}", TABLE)
}

/// `$N` → `?N`, as the SQLite store converts its statements.
fn sqlite_sql(template: &str) -> String {
    let text = sql(template);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) { '?' } else { c });
    }
    out
}

fn millis(at: SystemTime) -> i64 {
    i64::try_from(at.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(i64::MAX)
}

/// What every pair writes: a key's fingerprint and the accepted record (a real receipt).
#[derive(Clone)]
pub(crate) struct PairData {
    pub(crate) fingerprint: Fingerprint,
    pub(crate) receipt: Receipt,
    /// The receipt as the stores store it (JSON).
    pub(crate) record_json: Arc<str>,
}

impl PairData {
    pub(crate) fn new(fingerprint: Fingerprint, receipt: Receipt) -> Self {
        let record_json = serde_json::to_string(&receipt).expect("a receipt serializes").into();
        Self { fingerprint, receipt, record_json }
    }
}

/// One reserve + finalize of a new key through the store API, as the client calls them.
pub(crate) async fn store_pair<S: IdempotencyStore + ?Sized>(
    store: &S,
    data: &PairData,
    key: String,
) -> Result<(), String> {
    let now = SystemTime::now();
    let id = match store.reserve(&key, sms_sdk::store::Claim::new(&data.fingerprint), now).await {
        Ok(Reservation::Acquired(id)) => id,
        Ok(Reservation::Existing(_)) => return Err(format!("key {key} was already taken")),
        Err(error) => return Err(format!("reserve: {error}")),
    };
    let record = FinalRecord::Accepted(data.receipt.clone());
    match store.finalize(&key, &id, record, TTL, SystemTime::now()).await {
        Ok(sms_sdk::store::Finalized::Written) => Ok(()),
        Ok(sms_sdk::store::Finalized::NotOwner) => Err("finalize: not the owner".to_owned()),
        Err(error) => Err(format!("finalize: {error}")),
    }
}

/// PostgreSQL: the minimal client (one `tokio-postgres` connection per worker, both statements
/// prepared once per connection).
pub(crate) mod postgres {
    use super::{PairData, SQL_CREATE, SQL_FINALIZE, SQL_RESERVE, TTL, millis, sql};
    use std::time::SystemTime;
    use tokio_postgres::{Client, NoTls, Statement};

    pub(crate) struct Minimal {
        client: Client,
        reserve: Statement,
        finalize: Statement,
    }

    pub(crate) async fn connect(url: &str) -> Result<Client, String> {
        let (client, connection) = tokio_postgres::connect(url, NoTls).await.map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(client)
    }

    /// Empties the table between runs (so every run starts from the same state).
    pub(crate) async fn reset(admin: &Client) -> Result<(), String> {
        admin.batch_execute(&sql(SQL_CREATE)).await.map_err(|e| e.to_string())?;
        admin.batch_execute(&format!("TRUNCATE {}", super::TABLE)).await.map_err(|e| e.to_string())
    }

    impl Minimal {
        pub(crate) async fn connect(url: &str) -> Result<Self, String> {
            let client = connect(url).await?;
            let reserve = client.prepare(&sql(SQL_RESERVE)).await.map_err(|e| e.to_string())?;
            let finalize = client.prepare(&sql(SQL_FINALIZE)).await.map_err(|e| e.to_string())?;
            Ok(Self { client, reserve, finalize })
        }

        /// The pair: two round trips of prepared statements.
        pub(crate) async fn pair(&self, data: &PairData, key: &str) -> Result<(), String> {
            let now = millis(SystemTime::now());
            let id = key;
            let row = self
                .client
                .query_opt(&self.reserve, &[&key, &data.fingerprint.as_str(), &id, &now])
                .await
                .map_err(|e| e.to_string())?;
            let claimed: Option<String> = row.and_then(|r| r.get(0));
            if claimed.as_deref() != Some(id) {
                return Err(format!("key {key} was not claimed"));
            }
            let expires = now + i64::try_from(TTL.as_millis()).unwrap_or(i64::MAX);
            let written = self
                .client
                .execute(&self.finalize, &[&key, &id, &"accepted", &&*data.record_json, &expires])
                .await
                .map_err(|e| e.to_string())?;
            if written == 1 { Ok(()) } else { Err("finalize wrote nothing".to_owned()) }
        }
    }

    /// The pgbench script of the same two statements: `:k` is a random key (also the
    /// reservation id), the other values come from `-D` (strings are parameters with
    /// `-M prepared`).
    pub(crate) fn pgbench_script() -> String {
        let reserve =
            sql(SQL_RESERVE).replace("$1", ":k").replace("$2", ":fp").replace("$3", ":k").replace("$4", ":now");
        let finalize = sql(SQL_FINALIZE)
            .replace("$1", ":k")
            .replace("$2", ":k")
            .replace("$3", ":state")
            .replace("$4", ":record")
            .replace("$5", ":expires");
        // pgbench ends a command at the end of its line: one line per statement.
        format!("\\set k random(1, 1000000000000)\n{};\n{};\n", super::squeeze(&reserve), super::squeeze(&finalize))
    }
}

/// Redis: the minimal client (one multiplexed connection, both scripts loaded once, `EVALSHA`).
pub(crate) mod redis_min {
    use super::{PairData, REDIS_PREFIX, TTL, lua_script, millis};
    use redis::aio::MultiplexedConnection;
    use std::time::SystemTime;

    #[derive(Clone)]
    pub(crate) struct Minimal {
        connection: MultiplexedConnection,
        reserve: String,
        finalize: String,
    }

    pub(crate) async fn connect(url: &str) -> Result<MultiplexedConnection, String> {
        let client = redis::Client::open(url).map_err(|e| e.to_string())?;
        client.get_multiplexed_async_connection().await.map_err(|e| e.to_string())
    }

    pub(crate) async fn reset(admin: &mut MultiplexedConnection) -> Result<(), String> {
        redis::cmd("FLUSHDB").query_async::<()>(admin).await.map_err(|e| e.to_string())
    }

    impl Minimal {
        pub(crate) async fn connect(url: &str) -> Result<Self, String> {
            let mut connection = connect(url).await?;
            let script = |name: &str| lua_script(name).ok_or(format!("store/redis/mod.rs has no {name} script"));
            let load = |script: &str| redis::cmd("SCRIPT").arg("LOAD").arg(script).clone();
            let reserve: String =
                load(&script("RESERVE")?).query_async(&mut connection).await.map_err(|e| e.to_string())?;
            let finalize: String =
                load(&script("FINALIZE")?).query_async(&mut connection).await.map_err(|e| e.to_string())?;
            Ok(Self { connection, reserve, finalize })
        }

        /// The pair: two `EVALSHA` round trips.
        pub(crate) async fn pair(&self, data: &PairData, key: &str) -> Result<(), String> {
            let mut connection = self.connection.clone();
            let now = millis(SystemTime::now());
            let hash = format!("{REDIS_PREFIX}{key}");
            let claimed: i64 = redis::cmd("EVALSHA")
                .arg(&self.reserve)
                .arg(1)
                .arg(&hash)
                .arg(data.fingerprint.as_str())
                .arg(key)
                .arg(now)
                .query_async(&mut connection)
                .await
                .map_err(|e| format!("reserve: {e}"))?;
            if claimed != 1 {
                return Err(format!("key {key} was not claimed"));
            }
            let ttl = u64::try_from(TTL.as_millis()).unwrap_or(u64::MAX);
            let expires = now + i64::try_from(ttl).unwrap_or(i64::MAX);
            let written: i64 = redis::cmd("EVALSHA")
                .arg(&self.finalize)
                .arg(1)
                .arg(&hash)
                .arg(key)
                .arg("accepted")
                .arg(&*data.record_json)
                .arg(expires)
                .arg(ttl)
                .query_async(&mut connection)
                .await
                .map_err(|e| format!("finalize: {e}"))?;
            if written == 1 { Ok(()) } else { Err("finalize wrote nothing".to_owned()) }
        }
    }
}

/// SQLite: the minimal client (one `rusqlite` connection with the store's pragmas, statements
/// cached; reserve in an immediate transaction as the store runs it, finalize on its own).
pub(crate) mod sqlite_min {
    use super::{PairData, SQL_CREATE, SQL_FINALIZE, SQL_RESERVE, TTL, millis, sqlite_sql};
    use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
    use std::path::Path;
    use std::time::SystemTime;

    pub(crate) struct Minimal {
        connection: Connection,
        reserve: String,
        finalize: String,
    }

    impl Minimal {
        pub(crate) fn open(path: &Path) -> Result<Self, String> {
            let connection = Connection::open(path).map_err(|e| e.to_string())?;
            connection.busy_timeout(std::time::Duration::from_secs(10)).map_err(|e| e.to_string())?;
            connection.pragma_update(None, "journal_mode", "WAL").map_err(|e| e.to_string())?;
            connection.pragma_update(None, "synchronous", "FULL").map_err(|e| e.to_string())?;
            connection.execute_batch(&sqlite_sql(SQL_CREATE)).map_err(|e| e.to_string())?;
            Ok(Self { connection, reserve: sqlite_sql(SQL_RESERVE), finalize: sqlite_sql(SQL_FINALIZE) })
        }

        pub(crate) fn reset(&self) -> Result<(), String> {
            self.connection.execute_batch(&format!("DELETE FROM {}", super::TABLE)).map_err(|e| e.to_string())
        }

        pub(crate) fn pair(&mut self, data: &PairData, key: &str) -> Result<(), String> {
            let now = millis(SystemTime::now());
            let tx =
                self.connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| e.to_string())?;
            let claimed: Option<String> = tx
                .prepare_cached(&self.reserve)
                .and_then(|mut s| {
                    s.query_row(params![key, data.fingerprint.as_str(), key, now], |r| r.get(0)).optional()
                })
                .map_err(|e| e.to_string())?;
            tx.commit().map_err(|e| e.to_string())?;
            if claimed.as_deref() != Some(key) {
                return Err(format!("key {key} was not claimed"));
            }
            let expires = now + i64::try_from(TTL.as_millis()).unwrap_or(i64::MAX);
            let written = self
                .connection
                .prepare_cached(&self.finalize)
                .and_then(|mut s| s.execute(params![key, key, "accepted", &*data.record_json, expires]))
                .map_err(|e| e.to_string())?;
            if written == 1 { Ok(()) } else { Err("finalize wrote nothing".to_owned()) }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_store_scripts_are_read_from_its_source() {
        let reserve = super::lua_script("RESERVE").expect("the store has a RESERVE script");
        assert!(reserve.contains("'reserved'") && reserve.trim_end().ends_with("return 1"), "{reserve}");
        assert!(super::lua_script("FINALIZE").is_some_and(|s| s.contains("PEXPIRE")));
        let finalize = super::lua_script("FINALIZE").unwrap_or_default();
        assert!(finalize.contains("local kept = {}") && !finalize.contains("{KEEP}"), "{finalize}");
        assert_eq!(super::lua_script("NO_SUCH"), None);
    }
}
