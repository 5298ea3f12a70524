//! The PostgreSQL store: one shared table for many instances.
//!
//! ```no_run
//! # async fn example() -> Result<(), sms_sdk::idempotency::StoreError> {
//! use sms_sdk::idempotency::postgres::PostgresStore;
//!
//! let store = PostgresStore::builder("postgres://sms@db.internal/app").table("sms_idempotency").connect().await?;
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
//! As a [`DedupeStore`] it also creates, under the same lock, the webhook dedupe table
//! `sms_webhook_dedupe` (for a custom table `T`: `T_dedupe`): `key TEXT PRIMARY KEY, seen_at
//! BIGINT NOT NULL, expires_at BIGINT NOT NULL` (epoch milliseconds). `first_seen` is one
//! `INSERT … ON CONFLICT (key) DO UPDATE … WHERE expires_at <= now RETURNING key`.

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use super::row::{Row, expiry, payload};
use super::sql::{Statements, dedupe_times};
use super::{
    Entry, Filter, FinalRecord, Finalized, Fingerprint, IdempotencyStore, Operator, Record, Reservation, ReservationId,
    Resolution, Resolved, StoreError, millis, resolved_receipt,
};
use crate::adapter::BoxFuture;
use crate::webhook::dedupe::DedupeStore;

/// Idempotency records and webhook dedupe keys in PostgreSQL tables. Cheap to clone.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    sql: Arc<Statements>,
}

/// Configures a [`PostgresStore`].
#[derive(Debug)]
#[must_use]
pub struct PostgresStoreBuilder {
    url: String,
    table: String,
    pool_size: usize,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(error: tokio_postgres::Error) -> Self {
        Self::new(error)
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        Self::new(error)
    }
}

impl PostgresStore {
    /// Connects to `url` with the default table and pool size, creating the tables if needed.
    ///
    /// # Errors
    /// A [`StoreError`] when the URL is malformed or the server unreachable.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// A store for the database at `url` (`postgres://user:password@host:port/db`).
    pub fn builder(url: impl Into<String>) -> PostgresStoreBuilder {
        PostgresStoreBuilder { url: url.into(), table: "sms_idempotency".into(), pool_size: 8 }
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

    /// Connects and creates the tables if needed.
    ///
    /// # Errors
    /// A [`StoreError`] when the URL or table name is malformed or the server unreachable.
    pub async fn connect(self) -> Result<PostgresStore, StoreError> {
        let sql = Statements::new(&self.table)?;
        let mut config = tokio_postgres::Config::from_str(&self.url)?;
        config.connect_timeout(Duration::from_secs(5));
        let manager = Manager::from_config(config, NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager).max_size(self.pool_size).build().map_err(StoreError::new)?;
        let client = pool.get().await?;
        // Concurrent CREATE TABLE IF NOT EXISTS can fail on the catalog's unique index: serialize it.
        client.execute("SELECT pg_advisory_lock(7325901)", &[]).await?;
        let created = async {
            client.batch_execute(&sql.create).await?;
            client.batch_execute(&sql.dedupe_create).await
        }
        .await;
        client.execute("SELECT pg_advisory_unlock(7325901)", &[]).await?;
        created?;
        drop(client);
        Ok(PostgresStore { pool, sql: Arc::new(sql) })
    }
}

fn read_row(row: &tokio_postgres::Row) -> Row {
    Row {
        key: row.get(0),
        state: row.get(1),
        fingerprint: row.get(2),
        reservation_id: row.get(3),
        reserved_at: row.get(4),
        payload: row.get(5),
        expires_at: row.get(6),
    }
}

impl IdempotencyStore for PostgresStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        Box::pin(async move {
            let client = self.pool.get().await?;
            let row = client.query_opt(&self.sql.get, &[&key, &millis(SystemTime::now())]).await?;
            row.map(|r| read_row(&r).record()).transpose()
        })
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &'a Fingerprint,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        Box::pin(async move {
            let client = self.pool.get().await?;
            let id = ReservationId::new();
            let values: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
                [&key, &fingerprint.as_str(), &id.as_str(), &millis(now)];
            let claimed = client.query_opt(&self.sql.reserve, &values).await?;
            if claimed.is_some_and(|r| r.get::<_, String>(0) == id.as_str()) {
                return Ok(Reservation::Acquired(id));
            }
            let row = client.query_opt(&self.sql.select, &[&key]).await?;
            let row = row.ok_or_else(|| StoreError::new("the record vanished during reserve"))?;
            Ok(Reservation::Existing(Box::new(read_row(&row).record()?)))
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
            let client = self.pool.get().await?;
            let (state, json, expires) = (record.state().as_str(), payload(&record)?, expiry(&record, ttl, now));
            let values: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
                [&key, &reservation.as_str(), &state, &json, &expires];
            let written = client.execute(&self.sql.finalize, &values).await?;
            Ok(if written == 1 { Finalized::Written } else { Finalized::NotOwner })
        })
    }
}

impl Operator for PostgresStore {
    fn list<'a>(&'a self, filter: Filter, now: SystemTime) -> BoxFuture<'a, Result<Vec<Entry>, StoreError>> {
        Box::pin(async move {
            let client = self.pool.get().await?;
            let rows = client.query(&self.sql.list, &[&millis(now)]).await?;
            let entries = rows.iter().map(|r| read_row(r).entry()).collect::<Result<Vec<_>, _>>()?;
            Ok(entries.into_iter().filter(|e| filter.matches(&e.record, now)).collect())
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
            let client = self.pool.get().await?;
            let cutoff = millis(now) - i64::try_from(stale_after.as_millis()).unwrap_or(i64::MAX);
            let changed = match resolution {
                Resolution::NotSent => client.execute(&self.sql.resolve_not_sent, &[&key, &cutoff]).await?,
                Resolution::Sent { provider, provider_id, ttl } => {
                    let result = FinalRecord::Accepted(resolved_receipt(provider, provider_id));
                    let (json, expires) = (payload(&result)?, expiry(&result, ttl, now));
                    let values: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [&key, &cutoff, &json, &expires];
                    client.execute(&self.sql.resolve_sent, &values).await?
                }
            };
            if changed > 0 {
                return Ok(Resolved::Done);
            }
            let row = client.query_opt(&self.sql.get, &[&key, &millis(now)]).await?;
            Ok(match row {
                None => Resolved::NotFound,
                Some(row) => Resolved::Refused(Box::new(read_row(&row).record()?)),
            })
        })
    }
}

impl DedupeStore for PostgresStore {
    fn first_seen<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let client = self.pool.get().await?;
            let (seen_at, expires_at) = dedupe_times(now, retention);
            let recorded = client.query_opt(&self.sql.dedupe_first_seen, &[&key, &seen_at, &expires_at]).await?;
            Ok(recorded.is_some())
        })
    }
}
