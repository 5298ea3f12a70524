//! The SQLite store: the embedded default, safe for several processes on one host.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::time::Duration;
//! use sms_sdk::store::sqlite::SqliteStore;
//!
//! let path = std::env::temp_dir().join(format!("sms-sdk-doc-{}", std::process::id())).join("state.db");
//! let store = SqliteStore::open(&path).await?;
//! // Another handle on the same file, waiting longer for a busy database.
//! let patient = SqliteStore::builder(path.clone()).operation_timeout(Duration::from_secs(30)).open().await?;
//! # drop((store, patient));
//! # let _ = std::fs::remove_dir_all(path.parent().unwrap());
//! # Ok::<(), sms_sdk::store::StoreError>(()) }).unwrap();
//! ```
//!
//! The file is opened in WAL mode with `synchronous = FULL`: every reservation and record is on
//! disk before the call returns, so neither a killed process nor a power loss can forget a key
//! that was already sent (with `NORMAL`, a power loss could drop the last commits and let a send
//! go out twice). On first use it gets the table `sms_idempotency (key TEXT
//! PRIMARY KEY, fingerprint, state, reservation_id, reserved_at, record, expires_at, recipient)`
//! (a table made before the `recipient` column gets it when opened). `reserve`
//! is one `INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING` (and, for a key it cannot claim,
//! the same again with a `SELECT` of the record in one immediate transaction); `finalize` is one
//! `UPDATE`. One thread of the store's own owns the connection and runs the calls, with its
//! statements prepared once (cached).
//!
//! **Group commit.** Writes that wait for that thread together are committed together: it takes
//! every call already queued (at most 64), runs the reads among them first, alone, then the
//! writes in one `BEGIN IMMEDIATE` transaction, each in a `SAVEPOINT` of its own (a call that
//! fails rolls back alone, the others go on), and commits once: one `fsync` for the batch instead
//! of one per write. Each caller gets its answer only after that `COMMIT`, so the durability
//! above holds for every call; when `BEGIN` or `COMMIT` fails, every call of the batch gets a
//! [`StoreError`] (its writes are gone, and a send that gets it makes no request). A write that
//! waits alone runs alone, its statements committing as they end; the more calls wait, the more
//! share one `fsync`.
//!
//! Opening gives up after the connect timeout (default 5 s), and each operation after the
//! operation timeout (default 10 s), waiting for another process's lock included (a batch's
//! `BEGIN` waits for each of its calls until that call's own deadline): the caller then gets a
//! timeout [`StoreError`], and a call still queued behind a stuck one gives up without touching
//! the file.
//!
//! As a [`DedupeStore`](crate::store::DedupeStore) it also creates the table
//! `sms_webhook_dedupe (key TEXT PRIMARY KEY, seen_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
//! claim TEXT)` (epoch milliseconds; `claim` is the token of the claim that holds the key until
//! `expires_at`, NULL for a key done until then; a table made before the `claim` column gets it
//! when opened, and its rows are done). `first_seen_at`, `claim_at` and `commit_at` are each one
//! `INSERT … ON CONFLICT (key) DO UPDATE …` (the first two only `WHERE expires_at <= now`, with
//! `RETURNING`; a claim that does not claim reads the key's row in the same immediate
//! transaction as a second try); `release` is one `DELETE … WHERE claim = token`.

mod dedupe;
mod reference;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use rusqlite::{Connection, ErrorCode, OptionalExtension, params};

pub(crate) use self::worker::Atomic;
use self::worker::{Access, Budget, Worker};

use super::error::Limit;
use super::row::{Row, expiry, payload, payload_to};
use super::sql::{Statements, list_filter, list_limit, listing};
use super::timeouts::{Timeouts, timeout_setters};
use super::{
    Claim, Filter, FinalRecord, Finalized, IdempotencyStore, Listing, Operator, Page, Record, Reservation,
    ReservationId, Resolution, Resolved, StoreError, millis, resolved_receipt, stale_cutoff,
};
use futures_util::future::BoxFuture;

mod worker;

/// SQLite's busy timeout takes whole milliseconds in an `i32`: wait at most a day at once.
const MAX_BUSY_WAIT: Duration = Duration::from_hours(24);
/// The longest sleep between two tries for another connection's lock.
const MAX_LOCK_POLL: Duration = Duration::from_millis(32);
/// How many prepared statements the connection keeps: the store's (idempotency, dedupe,
/// correlation and suppression: about 20) and the batches' transaction statements.
const STATEMENT_CACHE: usize = 48;

thread_local! {
    /// When the call running on this thread stops waiting for another connection's lock.
    static LOCK_DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The busy handler of the store's connection: tries again for another connection's lock, after
/// a sleep that doubles from 1 ms to 32 ms, until the running call's deadline by the clock.
/// (SQLite's own busy timeout adds up the sleeps it asked for; on a loaded machine each one runs
/// long, the wait outlasts the operation timeout, and the error no longer says that the lock was
/// why.)
fn wait_for_lock(attempt: i32) -> bool {
    let Some(deadline) = LOCK_DEADLINE.get() else { return false };
    let left = deadline.saturating_duration_since(Instant::now());
    let doublings = u32::try_from(attempt).unwrap_or(0).min(5);
    std::thread::sleep(Duration::from_millis(1 << doublings).min(MAX_LOCK_POLL).min(left));
    !left.is_zero()
}

/// Sets this thread's lock deadline while it lives.
struct LockDeadline;

impl LockDeadline {
    fn until(deadline: Instant) -> Self {
        LOCK_DEADLINE.set(Some(deadline));
        Self
    }
}

impl Drop for LockDeadline {
    fn drop(&mut self) {
        LOCK_DEADLINE.set(None);
    }
}

/// Idempotency records and webhook dedupe keys in a SQLite file. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    worker: Worker,
    sql: Arc<Statements>,
    place: Arc<str>,
    timeouts: Timeouts,
}

/// Configures a [`SqliteStore`].
#[derive(Debug)]
#[must_use]
pub struct SqliteStoreBuilder {
    path: PathBuf,
    timeouts: Timeouts,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("at", &self.place).field("timeouts", &self.timeouts).finish_non_exhaustive()
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        Self::new(error)
    }
}

impl SqliteStore {
    /// Opens (creating it and its parent folder when missing) the database at `path`, with the
    /// default timeouts.
    ///
    /// # Errors
    /// A [`StoreError`] when the file cannot be opened or the schema created in time.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::builder(path).open().await
    }

    /// A store in the database file at `path`.
    pub fn builder(path: impl AsRef<Path>) -> SqliteStoreBuilder {
        SqliteStoreBuilder { path: path.as_ref().to_owned(), timeouts: Timeouts::default() }
    }

    /// Runs `f`, which only reads, with the connection on the store's thread, within the
    /// operation timeout: alone, and never waiting for another connection's write lock.
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut Connection, &Statements) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.call(Access::Read, what, f).await
    }

    /// Runs `f`, which writes, with the connection on the store's thread, within the operation
    /// timeout: with the writes waiting with it, committed together (the connection thread's
    /// group commit). Statements of `f` that must hold together take an [`Atomic`].
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut Connection, &Statements) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.call(Access::Write, what, f).await
    }

    async fn call<T: Send + 'static>(
        &self,
        access: Access,
        what: &'static str,
        f: impl FnOnce(&mut Connection, &Statements) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (sql, place) = (Arc::clone(&self.sql), Arc::clone(&self.place));
        let (limit, budget) = (self.timeouts.operation, Budget::new(self.timeouts.operation));
        let call = self.worker.call(access, budget, move |connection| {
            // The caller may have given up while this call waited for the connection.
            if budget.left().is_zero() {
                return Err(StoreError::timeout(&place, what, Limit::Operation, limit));
            }
            let _deadline = LockDeadline::until(budget.lock_deadline());
            f(connection, &sql)
        });
        // A lock wait that ran out, the call's own or its batch's `BEGIN`, is a timeout.
        let answer = async { call.await.map_err(|e| locked(e, &self.place, Limit::Operation, limit)) };
        self.timeouts.operation(&self.place, what, answer).await
    }
}

impl SqliteStoreBuilder {
    timeout_setters! {
        connect: "How long opening the file (and waiting for another process that holds it) may take; default 5 s.",
        operation: "How long one operation may take, waiting for another process's lock included; default 10 s.",
    }

    /// Opens (creating it and its parent folder when missing) the database.
    ///
    /// # Errors
    /// A [`StoreError`] when a timeout is zero, or the file cannot be opened or the schema
    /// created within the connect timeout.
    pub async fn open(self) -> Result<SqliteStore, StoreError> {
        let timeouts = self.timeouts.checked()?;
        let place: Arc<str> = Arc::from(format!("SQLite at {}", self.path.display()));
        let sql = Statements::new("sms_idempotency")?.for_sqlite();
        let schema = [sql.create.clone(), sql.dedupe.create.clone(), sql.reference_create.clone()];
        let (path, limit) = (self.path, timeouts.connect);
        let task = tokio::task::spawn_blocking(move || -> Result<Connection, StoreError> {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(StoreError::new)?;
            }
            // Switching to WAL needs a moment alone with the file: when several processes open a
            // new database at once, some get SQLITE_BUSY before the busy timeout applies. Retry
            // until the connect timeout.
            let started = Instant::now();
            loop {
                let left = limit.saturating_sub(started.elapsed());
                match prepare(&path, &schema, left.min(MAX_BUSY_WAIT)) {
                    Err(rusqlite::Error::SqliteFailure(e, _)) if is_busy(e.code) && !left.is_zero() => {
                        std::thread::sleep(Duration::from_millis(20).min(left));
                    }
                    result => return Ok(result?),
                }
            }
        });
        let opening =
            async { task.await.map_err(StoreError::new)?.map_err(|e| locked(e, &place, Limit::Connect, limit)) };
        let worker = Worker::start(timeouts.connect(&place, opening).await?)?;
        Ok(SqliteStore { worker, sql: Arc::new(sql), place, timeouts })
    }
}

/// Opens the file in WAL mode with a busy timeout, creates the tables, and hands lock waits to
/// [`wait_for_lock`].
fn prepare(path: &Path, schema: &[String], busy: Duration) -> rusqlite::Result<Connection> {
    let connection = Connection::open(path)?;
    connection.busy_timeout(busy)?;
    connection.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", "FULL")?;
    for create in schema {
        connection.execute_batch(create)?;
    }
    add_missing_columns(&connection)?;
    connection.busy_handler(Some(wait_for_lock))?;
    Ok(connection)
}

/// The columns added to tables after their first release, by table: a table created before
/// gets them when the store opens. Stored format version 1 added the records' `recipient`; the
/// dedupe claims added the dedupe table's `claim` (its rows keep NULL there: done).
const ADDED_COLUMNS: [(&str, &str, &str); 2] =
    [("sms_idempotency", "recipient", "TEXT"), ("sms_webhook_dedupe", "claim", "TEXT")];

/// Adds the [`ADDED_COLUMNS`] a table lacks, when there is the table (another process adding
/// one at the same time is no error).
fn add_missing_columns(connection: &Connection) -> rusqlite::Result<()> {
    for (table, column, kind) in ADDED_COLUMNS {
        let mut statement = connection.prepare("SELECT name FROM pragma_table_info(?1)")?;
        let present = statement.query_map([table], |row| row.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
        if present.is_empty() || present.iter().any(|p| p == column) {
            continue;
        }
        match connection.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}")) {
            Err(rusqlite::Error::SqliteFailure(_, Some(message))) if message.contains("duplicate column") => {}
            other => other?,
        }
    }
    Ok(())
}

fn is_busy(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
}

/// A database still busy or locked after the busy timeout: a timeout of the lock wait.
fn locked(error: StoreError, place: &str, limit: Limit, after: Duration) -> StoreError {
    let busy = std::error::Error::source(&error)
        .and_then(|e| e.downcast_ref::<rusqlite::Error>())
        .and_then(rusqlite::Error::sqlite_error_code)
        .is_some_and(is_busy);
    if busy { StoreError::timeout(place, "waiting for the database lock", limit, after) } else { error }
}

/// A row of [`super::row::COLUMNS`]; a column of the wrong type is a corrupt record of its key.
fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Result<Row, StoreError>> {
    Ok(Row::read(row.get(0)?, |i| row.get(i), |i| row.get(i)))
}

fn select(connection: &Connection, sql: &str, values: impl rusqlite::Params) -> Result<Option<Record>, StoreError> {
    let row = connection.prepare_cached(sql)?.query_row(values, read_row).optional()?.transpose()?;
    row.map(|r| r.record()).transpose()
}

/// Runs `sql`, a write with `RETURNING` one text column at most, to its end: the text it returned.
///
/// Outside a transaction (a call that runs alone) the statement commits when it ends, after
/// handing out its row, so a commit that fails (a failed write to the disk) shows only on the step
/// after the row; rusqlite's `query_row` never takes that step and would report a write that did
/// not happen. Inside a batch's transaction the batch's one `COMMIT` makes it durable, and a
/// `COMMIT` that fails reaches every call of the batch as its error (see `worker`).
fn write_returning(
    connection: &Connection,
    sql: &str,
    values: impl rusqlite::Params,
) -> rusqlite::Result<Option<String>> {
    let mut statement = connection.prepare_cached(sql)?;
    let mut rows = statement.query(values)?;
    let returned = match rows.next()? {
        Some(row) => Some(row.get(0)?),
        None => return Ok(None),
    };
    match rows.next()? {
        None => Ok(returned),
        Some(_) => Err(rusqlite::Error::QueryReturnedMoreThanOneRow),
    }
}

impl IdempotencyStore for SqliteStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        let key = key.to_owned();
        Box::pin(self.read("get", move |c, sql| select(c, &sql.get, params![key, millis(SystemTime::now())])))
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        claim: Claim<'a>,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        let (key, fingerprint, id) = (key.to_owned(), claim.fingerprint.as_str().to_owned(), ReservationId::new());
        let to = claim.to.map(str::to_owned);
        Box::pin(self.write("reserve", move |c, sql| {
            let values = params![key, fingerprint, id.as_str(), millis(now), to];
            // Usually the key is new: the statement alone claims it, in its own transaction (or
            // its batch's).
            if write_returning(c, &sql.reserve, values)?.as_deref() == Some(id.as_str()) {
                return Ok(Reservation::Acquired(id));
            }
            // Otherwise try again and read the record the key holds, in one transaction (the
            // record may have changed between the two statements).
            let tx = Atomic::begin(c)?;
            let result = if write_returning(&tx, &sql.reserve, values)?.as_deref() == Some(id.as_str()) {
                Reservation::Acquired(id)
            } else {
                let record = select(&tx, &sql.select, params![key])?;
                Reservation::Existing(Box::new(
                    record.ok_or_else(|| StoreError::new("record vanished during reserve"))?,
                ))
            };
            tx.commit()?;
            Ok(result)
        }))
    }

    fn finalize<'a>(
        &'a self,
        key: &'a str,
        reservation: &'a ReservationId,
        record: FinalRecord,
        ttl: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Finalized, StoreError>> {
        let (key, id) = (key.to_owned(), reservation.as_str().to_owned());
        Box::pin(self.write("finalize", move |c, sql| {
            let values = params![key, id, record.state().as_str(), payload(&record)?, expiry(&record, ttl, now)];
            let written = c.prepare_cached(&sql.finalize)?.execute(values)?;
            Ok(if written == 1 { Finalized::Written } else { Finalized::NotOwner })
        }))
    }
    fn references(&self) -> Option<&dyn crate::store::ReferenceIndex> {
        Some(self)
    }
}

impl Operator for SqliteStore {
    fn list(&self, filter: Filter, now: SystemTime, page: Page) -> BoxFuture<'_, Result<Listing, StoreError>> {
        Box::pin(self.read("list", move |c, sql| {
            let ((state, cutoff), (limit, sql_limit)) = (list_filter(filter, now), list_limit(&page));
            let values = params![millis(now), page.cursor, page.prefix, state, cutoff, sql_limit];
            let mut statement = c.prepare_cached(&sql.list)?;
            let rows = statement.query_map(values, read_row)?.collect::<Result<Vec<_>, _>>()?;
            listing(rows.into_iter().collect::<Result<_, _>>()?, limit)
        }))
    }

    fn resolve<'a>(
        &'a self,
        key: &'a str,
        resolution: Resolution,
        stale_after: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Resolved, StoreError>> {
        let key = key.to_owned();
        Box::pin(self.write("resolve", move |c, sql| {
            let cutoff = stale_cutoff(now, stale_after);
            let tx = Atomic::begin(c)?;
            let changed = match resolution {
                Resolution::NotSent => tx.prepare_cached(&sql.resolve_not_sent)?.execute(params![key, cutoff])?,
                Resolution::Sent { provider, provider_id, ttl, endpoint } => {
                    let result = FinalRecord::Accepted(resolved_receipt(provider, provider_id));
                    let json = payload_to(&result, endpoint.as_deref())?;
                    let values = params![key, cutoff, json, expiry(&result, ttl, now)];
                    tx.prepare_cached(&sql.resolve_sent)?.execute(values)?
                }
            };
            let resolved = match changed {
                0 => match select(&tx, &sql.get, params![key, millis(now)])? {
                    None => Resolved::NotFound,
                    Some(record) => Resolved::Refused(Box::new(record)),
                },
                _ => Resolved::Done,
            };
            tx.commit()?;
            Ok(resolved)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_commit_is_synced_to_disk() {
        let dir = std::env::temp_dir().join(format!("sms-sdk-sync-{}", crate::ids::uuid_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let connection = prepare(&dir.join("state.db"), &[], Duration::from_secs(1)).unwrap();
        let synchronous: i64 = connection.pragma_query_value(None, "synchronous", |row| row.get(0)).unwrap();
        assert_eq!(synchronous, 2, "synchronous = FULL");
        let mode: String = connection.pragma_query_value(None, "journal_mode", |row| row.get(0)).unwrap();
        assert_eq!(mode, "wal");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_lock_wait_ends_at_its_deadline_by_the_clock() {
        assert!(!wait_for_lock(0), "without a deadline nothing waits");
        let started = Instant::now();
        let deadline = LockDeadline::until(Instant::now() + Duration::from_millis(150));
        let tries = (0..i32::MAX).take_while(|&attempt| wait_for_lock(attempt)).count();
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(150), "gave up after {waited:?}");
        assert!(waited < Duration::from_secs(2), "waited {waited:?}");
        assert!(tries >= 5, "{tries} tries");
        drop(deadline);
        assert_eq!(LOCK_DEADLINE.get(), None);
    }
}
