//! The PostgreSQL store: one shared table for many instances.
//!
//! ```no_run
//! # async fn example() -> Result<(), sms_sdk::store::StoreError> {
//! use std::time::Duration;
//! use sms_sdk::store::postgres::PostgresStore;
//!
//! let store = PostgresStore::builder("postgres://sms@db.internal/app")
//!     .table("sms_idempotency")
//!     .operation_timeout(Duration::from_secs(5))
//!     .connect()
//!     .await?;
//! # let _ = store; Ok(()) }
//! ```
//!
//! On first use it creates, under an advisory lock, the table (default `sms_idempotency`):
//! `key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, state TEXT NOT NULL, reservation_id TEXT,
//! reserved_at BIGINT, record TEXT, expires_at BIGINT` (times in epoch milliseconds). `reserve`
//! is a single `INSERT … ON CONFLICT (key) DO UPDATE … WHERE … RETURNING` statement; `finalize`
//! an `UPDATE … WHERE reservation_id = $2`. Connections come from a small pool (8); TLS is not
//! supported yet (`sslmode=disable`, or a local proxy).
//!
//! Every wait is bounded: opening a connection by the connect timeout (default 5 s), waiting for
//! a pooled connection and each operation's statements by the operation timeout (default 10 s).
//! A connection whose operation timed out is closed, never handed out again.
//!
//! As a [`DedupeStore`] it also creates, under the same lock, the webhook dedupe table
//! `sms_webhook_dedupe` (for a custom table `T`: `T_dedupe`): `key TEXT PRIMARY KEY, seen_at
//! BIGINT NOT NULL, expires_at BIGINT NOT NULL` (epoch milliseconds). `first_seen` is one
//! `INSERT … ON CONFLICT (key) DO UPDATE … WHERE expires_at <= now RETURNING key`.

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime, TimeoutType};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls};

use super::error::Limit;
use super::row::{Row, expiry, payload};
use super::sql::{Statements, dedupe_times, list_filter, list_limit, listing};
use super::timeouts::{Timeouts, timeout_setters};
use super::{
    Filter, FinalRecord, Finalized, Fingerprint, IdempotencyStore, Listing, Operator, Page, Record, Reservation,
    ReservationId, Resolution, Resolved, StoreError, millis, resolved_receipt, stale_cutoff,
};
use crate::boxed::BoxFuture;
use crate::redact::redact_url;
use crate::store::DedupeStore;

/// Idempotency records and webhook dedupe keys in PostgreSQL tables. Cheap to clone.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    sql: Arc<Statements>,
    place: Arc<str>,
    timeouts: Timeouts,
}

/// Configures a [`PostgresStore`].
#[must_use]
pub struct PostgresStoreBuilder {
    url: String,
    table: String,
    pool_size: usize,
    timeouts: Timeouts,
}

impl std::fmt::Debug for PostgresStoreBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStoreBuilder")
            .field("url", &redact_url(&self.url))
            .field("table", &self.table)
            .field("pool_size", &self.pool_size)
            .field("timeouts", &self.timeouts)
            .finish()
    }
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("at", &self.place)
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(error: tokio_postgres::Error) -> Self {
        Self::new(error)
    }
}

impl PostgresStore {
    /// Connects to `url` with the default table, pool size and timeouts, creating the tables if
    /// needed.
    ///
    /// # Errors
    /// A [`StoreError`] when the URL is malformed or the server unreachable.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// A store for the database at `url` (`postgres://user:password@host:port/db`).
    pub fn builder(url: impl Into<String>) -> PostgresStoreBuilder {
        PostgresStoreBuilder {
            url: url.into(),
            table: "sms_idempotency".into(),
            pool_size: 8,
            timeouts: Timeouts::default(),
        }
    }

    /// Runs `work` on a pooled connection within the operation timeout. A connection whose work
    /// timed out may still owe the server's answer: it is closed rather than pooled again.
    pub(crate) async fn run<T>(
        &self,
        what: &str,
        work: impl AsyncFnOnce(&Client) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let client = self.pool.get().await.map_err(|e| self.pool_error(e))?;
        let Ok(result) = tokio::time::timeout(self.timeouts.operation, work(&client)).await else {
            drop(Object::take(client));
            return Err(StoreError::timeout(&self.place, what, Limit::Operation, self.timeouts.operation));
        };
        result.map_err(|e| e.at(&self.place))
    }

    fn pool_error(&self, error: PoolError) -> StoreError {
        let Self { place, timeouts, .. } = self;
        match error {
            PoolError::Timeout(TimeoutType::Wait) => {
                StoreError::timeout(place, "waiting for a pooled connection", Limit::Operation, timeouts.operation)
            }
            PoolError::Timeout(TimeoutType::Create | TimeoutType::Recycle) => {
                StoreError::timeout(place, "connect", Limit::Connect, timeouts.connect)
            }
            // The driver's own reason, without the pool's "Error occurred while creating a new
            // object" around it.
            PoolError::Backend(error) => StoreError::new(error).at(place),
            error @ (PoolError::Closed | PoolError::NoRuntimeSpecified | PoolError::PostCreateHook(_)) => {
                StoreError::new(error).at(place)
            }
        }
    }
}

impl PostgresStoreBuilder {
    /// The idempotency table's name (a plain SQL identifier); the dedupe table is named after it
    /// (`<table>_dedupe`, or `sms_webhook_dedupe` for the default `sms_idempotency`).
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.table = table.into();
        self
    }

    /// The most connections to hold.
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size.max(1);
        self
    }

    timeout_setters! {
        connect: "How long opening one connection (TCP, startup and authentication) may take; default 5 s.",
        operation: "How long waiting for a pooled connection, and then an operation's statements, may each \
                    take; default 10 s.",
    }

    /// Connects and creates the tables if needed.
    ///
    /// # Errors
    /// A [`StoreError`] when the URL, table name or a timeout is malformed, or the server
    /// unreachable within the timeouts.
    pub async fn connect(self) -> Result<PostgresStore, StoreError> {
        let timeouts = self.timeouts.checked()?;
        let sql = Statements::new(&self.table)?;
        let config = tokio_postgres::Config::from_str(&self.url).map_err(|e| StoreError::new(e).at("PostgreSQL"))?;
        let place: Arc<str> = Arc::from(format!("PostgreSQL at {}", location(&config)));
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(self.pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(timeouts.operation))
            .create_timeout(Some(timeouts.connect))
            .recycle_timeout(Some(timeouts.connect))
            .build()
            .map_err(|e| StoreError::new(e).at(&place))?;
        let store = PostgresStore { pool, sql: Arc::new(sql), place, timeouts };
        // Concurrent CREATE TABLE IF NOT EXISTS can fail on the catalog's unique index: serialize
        // it. The batch is one implicit transaction, which holds the lock until it ends.
        let schema =
            format!("SELECT pg_advisory_xact_lock(7325901); {}; {}", store.sql.create, store.sql.dedupe_create);
        store.run("creating the tables", async move |c| Ok(c.batch_execute(&schema).await?)).await?;
        Ok(store)
    }
}

/// `host:port/db` of a configuration (hosts joined by `,`), without user or password.
fn location(config: &tokio_postgres::Config) -> String {
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = ports.get(i).or(ports.first()).copied().unwrap_or(5432);
            match host {
                tokio_postgres::config::Host::Tcp(name) => format!("{name}:{port}"),
                tokio_postgres::config::Host::Unix(path) => format!("{}:{port}", path.display()),
            }
        })
        .collect();
    let hosts = if hosts.is_empty() { "localhost".to_owned() } else { hosts.join(",") };
    format!("{hosts}/{}", config.get_dbname().unwrap_or_default())
}

/// A row of [`super::row::COLUMNS`]; a column of another type is a corrupt record of its key.
fn read_row(row: &tokio_postgres::Row) -> Result<Row, StoreError> {
    let key = row.try_get(0).map_err(|e| StoreError::corrupt("", format_args!("column key: {e}")))?;
    Row::read(key, |i| row.try_get(i), |i| row.try_get(i))
}

/// The record of an optional row.
fn record(row: Option<&tokio_postgres::Row>) -> Result<Option<Record>, StoreError> {
    row.map(|r| read_row(r)?.record()).transpose()
}

impl IdempotencyStore for PostgresStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        Box::pin(self.run("get", async move |c| {
            record(c.query_opt(&self.sql.get, &[&key, &millis(SystemTime::now())]).await?.as_ref())
        }))
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a Fingerprint,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        Box::pin(self.run("reserve", async move |c| {
            let id = ReservationId::new();
            let values: [&(dyn ToSql + Sync); 4] = [&key, &fingerprint.as_str(), &id.as_str(), &millis(now)];
            if let Some(claimed) = c.query_opt(&self.sql.reserve, &values).await?
                && claimed.try_get::<_, Option<&str>>(0)? == Some(id.as_str())
            {
                return Ok(Reservation::Acquired(id));
            }
            let existing = record(c.query_opt(&self.sql.select, &[&key]).await?.as_ref())?;
            Ok(Reservation::Existing(Box::new(
                existing.ok_or_else(|| StoreError::new("the record vanished during reserve"))?,
            )))
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
        Box::pin(self.run("finalize", async move |c| {
            let (state, json, expires) = (record.state().as_str(), payload(&record)?, expiry(&record, ttl, now));
            let values: [&(dyn ToSql + Sync); 5] = [&key, &reservation.as_str(), &state, &json, &expires];
            let written = c.execute(&self.sql.finalize, &values).await?;
            Ok(if written == 1 { Finalized::Written } else { Finalized::NotOwner })
        }))
    }
}

impl Operator for PostgresStore {
    fn list(&self, filter: Filter, now: SystemTime, page: Page) -> BoxFuture<'_, Result<Listing, StoreError>> {
        Box::pin(self.run("list", async move |c| {
            let ((state, cutoff), (limit, sql_limit)) = (list_filter(filter, now), list_limit(&page));
            let values: [&(dyn ToSql + Sync); 6] =
                [&millis(now), &page.cursor, &page.prefix, &state, &cutoff, &sql_limit];
            let rows = c.query(&self.sql.list, &values).await?;
            listing(rows.iter().map(read_row).collect::<Result<_, _>>()?, limit)
        }))
    }

    fn resolve<'a>(
        &'a self,
        key: &'a str,
        resolution: Resolution,
        stale_after: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Resolved, StoreError>> {
        Box::pin(self.run("resolve", async move |c| {
            let cutoff = stale_cutoff(now, stale_after);
            let changed = match resolution {
                Resolution::NotSent => c.execute(&self.sql.resolve_not_sent, &[&key, &cutoff]).await?,
                Resolution::Sent { provider, provider_id, ttl } => {
                    let result = FinalRecord::Accepted(resolved_receipt(provider, provider_id));
                    let (json, expires) = (payload(&result)?, expiry(&result, ttl, now));
                    let values: [&(dyn ToSql + Sync); 4] = [&key, &cutoff, &json, &expires];
                    c.execute(&self.sql.resolve_sent, &values).await?
                }
            };
            if changed > 0 {
                return Ok(Resolved::Done);
            }
            Ok(match record(c.query_opt(&self.sql.get, &[&key, &millis(now)]).await?.as_ref())? {
                None => Resolved::NotFound,
                Some(record) => Resolved::Refused(Box::new(record)),
            })
        }))
    }
}

impl DedupeStore for PostgresStore {
    fn first_seen<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.run("first_seen", async move |c| {
            let (seen_at, expires_at) = dedupe_times(now, retention);
            Ok(c.query_opt(&self.sql.dedupe_first_seen, &[&key, &seen_at, &expires_at]).await?.is_some())
        }))
    }
}
