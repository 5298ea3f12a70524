//! The SQLite store: the embedded default, safe for several processes on one host.
//!
//! ```no_run
//! # async fn example() -> Result<(), sms_sdk::idempotency::StoreError> {
//! use sms_sdk::idempotency::sqlite::SqliteStore;
//!
//! let store = SqliteStore::open(".sms-sdk/state.db").await?;
//! # let _ = store; Ok(()) }
//! ```
//!
//! The file is opened in WAL mode with a 10 s busy timeout, and on first use gets the table
//! `sms_idempotency (key TEXT PRIMARY KEY, fingerprint, state, reservation_id, reserved_at,
//! record, expires_at)`. `reserve` is one `INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING`
//! inside an immediate transaction; every call runs on tokio's blocking pool.
//!
//! As a [`DedupeStore`] it also creates the table `sms_webhook_dedupe (key TEXT PRIMARY KEY,
//! seen_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)` (epoch milliseconds); `first_seen` is one
//! `INSERT … ON CONFLICT (key) DO UPDATE … WHERE expires_at <= now RETURNING key`.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::row::{Row, expiry, payload};
use super::sql::{Statements, dedupe_times};
use super::{
    Entry, Filter, FinalRecord, Finalized, Fingerprint, IdempotencyStore, Operator, Record, Reservation, ReservationId,
    Resolution, Resolved, StoreError, millis, resolved_receipt,
};
use crate::adapter::BoxFuture;
use crate::webhook::dedupe::DedupeStore;

/// Idempotency records and webhook dedupe keys in a SQLite file. Cheap to clone.
#[derive(Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    sql: Arc<Statements>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").finish_non_exhaustive()
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        Self::new(error)
    }
}

impl SqliteStore {
    /// Opens (creating it and its parent folder when missing) the database at `path`.
    ///
    /// # Errors
    /// A [`StoreError`] when the file cannot be opened or the schema created.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_owned();
        let sql = Statements::new("sms_idempotency")?.for_sqlite();
        let schema = [sql.create.clone(), sql.dedupe_create.clone()];
        let connection = tokio::task::spawn_blocking(move || -> Result<Connection, StoreError> {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(StoreError::new)?;
            }
            // Switching to WAL needs a moment alone with the file: when several processes open a
            // new database at once, some get SQLITE_BUSY before the busy timeout applies. Retry.
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            loop {
                match prepare(&path, &schema) {
                    Err(rusqlite::Error::SqliteFailure(e, _))
                        if matches!(
                            e.code,
                            rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                        ) && std::time::Instant::now() < deadline =>
                    {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    result => return Ok(result?),
                }
            }
        })
        .await
        .map_err(StoreError::new)??;
        Ok(Self { connection: Arc::new(Mutex::new(connection)), sql: Arc::new(sql) })
    }

    /// Runs `f` with the connection on the blocking pool.
    async fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection, &Statements) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (connection, sql) = (Arc::clone(&self.connection), Arc::clone(&self.sql));
        tokio::task::spawn_blocking(move || f(&mut connection.lock().unwrap_or_else(PoisonError::into_inner), &sql))
            .await
            .map_err(StoreError::new)?
    }
}

/// Opens the file in WAL mode with a busy timeout and creates the tables.
fn prepare(path: &Path, schema: &[String]) -> rusqlite::Result<Connection> {
    let connection = Connection::open(path)?;
    connection.busy_timeout(Duration::from_secs(10))?;
    connection.pragma_update(None, "journal_mode", "WAL")?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    for create in schema {
        connection.execute_batch(create)?;
    }
    Ok(connection)
}

fn read_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok(Row {
        key: row.get(0)?,
        state: row.get(1)?,
        fingerprint: row.get(2)?,
        reservation_id: row.get(3)?,
        reserved_at: row.get(4)?,
        payload: row.get(5)?,
        expires_at: row.get(6)?,
    })
}

fn select(connection: &Connection, sql: &Statements, key: &str) -> Result<Option<Row>, StoreError> {
    Ok(connection.query_row(&sql.select, params![key], read_row).optional()?)
}

impl IdempotencyStore for SqliteStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        let key = key.to_owned();
        Box::pin(self.with(move |c, sql| {
            let row = c.query_row(&sql.get, params![key, millis(SystemTime::now())], read_row).optional()?;
            row.map(|r| r.record()).transpose()
        }))
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a Fingerprint,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        let (key, fingerprint, id) = (key.to_owned(), fingerprint.as_str().to_owned(), ReservationId::new());
        Box::pin(self.with(move |c, sql| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let claimed: Option<String> = tx
                .query_row(&sql.reserve, params![key, fingerprint, id.as_str(), millis(now)], |r| r.get(0))
                .optional()?;
            let result = if claimed.as_deref() == Some(id.as_str()) {
                Reservation::Acquired(id)
            } else {
                let row = select(&tx, sql, &key)?.ok_or_else(|| StoreError::new("record vanished during reserve"))?;
                Reservation::Existing(Box::new(row.record()?))
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
        Box::pin(self.with(move |c, sql| {
            let values = params![key, id, record.state().as_str(), payload(&record)?, expiry(&record, ttl, now)];
            let written = c.execute(&sql.finalize, values)?;
            Ok(if written == 1 { Finalized::Written } else { Finalized::NotOwner })
        }))
    }
}

impl Operator for SqliteStore {
    fn list<'a>(&'a self, filter: Filter, now: SystemTime) -> BoxFuture<'a, Result<Vec<Entry>, StoreError>> {
        Box::pin(self.with(move |c, sql| {
            let mut statement = c.prepare(&sql.list)?;
            let rows = statement.query_map(params![millis(now)], read_row)?.collect::<Result<Vec<_>, _>>()?;
            let entries = rows.into_iter().map(Row::entry).collect::<Result<Vec<_>, _>>()?;
            Ok(entries.into_iter().filter(|e| filter.matches(&e.record, now)).collect())
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
        Box::pin(self.with(move |c, sql| {
            let cutoff = millis(now) - i64::try_from(stale_after.as_millis()).unwrap_or(i64::MAX);
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let changed = match resolution {
                Resolution::NotSent => tx.execute(&sql.resolve_not_sent, params![key, cutoff])?,
                Resolution::Sent { provider, provider_id, ttl } => {
                    let result = FinalRecord::Accepted(resolved_receipt(provider, provider_id));
                    let values = params![key, cutoff, payload(&result)?, expiry(&result, ttl, now)];
                    tx.execute(&sql.resolve_sent, values)?
                }
            };
            let resolved = match changed {
                0 => match tx.query_row(&sql.get, params![key, millis(now)], read_row).optional()? {
                    None => Resolved::NotFound,
                    Some(row) => Resolved::Refused(Box::new(row.record()?)),
                },
                _ => Resolved::Done,
            };
            tx.commit()?;
            Ok(resolved)
        }))
    }
}

impl DedupeStore for SqliteStore {
    fn first_seen<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let key = key.to_owned();
        let (seen_at, expires_at) = dedupe_times(now, retention);
        Box::pin(self.with(move |c, sql| {
            let recorded: Option<String> =
                c.query_row(&sql.dedupe_first_seen, params![key, seen_at, expires_at], |r| r.get(0)).optional()?;
            Ok(recorded.is_some())
        }))
    }
}
