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
//! reserved_at BIGINT, record TEXT, expires_at BIGINT, recipient TEXT` (times in epoch milliseconds;
//! a table made before the `recipient` column gets it, `ADD COLUMN IF NOT EXISTS`). `reserve`
//! is one `INSERT … ON CONFLICT (key) DO UPDATE … WHERE … RETURNING` statement when it claims the
//! key; when it does not, a second statement claims or answers with the key's record atomically
//! (the same upsert inside a `WITH` that also returns the existing row; the upsert alone costs the
//! server less on the common path, a new key). `finalize` is an `UPDATE … WHERE reservation_id =
//! $2`. Connections come from a small pool (8).
//!
//! # TLS
//! The connection string (a URL, or libpq's `key=value` form given to
//! [`PostgresStore::builder`]) takes libpq's TLS parameters with libpq's meaning; TLS is rustls
//! on ring (no OpenSSL), set on the store's own configuration.
//!
//! * `sslmode`: `disable` (plain text), `allow` (plain text, then TLS when the server refuses
//!   it), `prefer` (the default: TLS when the server offers it, else plain text), `require` (TLS,
//!   the server not verified, unless `sslrootcert` is given: then its chain is, as in libpq, not
//!   its name), `verify-ca` (the chain against `sslrootcert`, not the name), `verify-full` (the
//!   chain and the host name, or the IP address against the certificate's IP SANs). Only `allow`
//!   and `prefer` fall back to plain text; with an `sslrootcert` file, their TLS connections
//!   verify the chain too, as in libpq.
//! * `sslrootcert`: a PEM file of CA certificates, or `system` for the platform's trust store
//!   (as in libpq, `system` makes `verify-full` the default and refuses weaker modes).
//!   `verify-ca` and `verify-full` need it: nothing is read from `~/.postgresql/`.
//! * `sslcert` and `sslkey`: a PEM client certificate (chain) and its private key, both or
//!   neither.
//!
//! ```no_run
//! # async fn example() -> Result<(), sms_sdk::store::StoreError> {
//! use sms_sdk::store::postgres::PostgresStore;
//!
//! let store = PostgresStore::connect(
//!     "postgres://sms@app.abc123.eu-west-1.rds.amazonaws.com/app?sslmode=verify-full&sslrootcert=/etc/ssl/rds-global-bundle.pem",
//! )
//! .await?;
//! # let _ = store; Ok(()) }
//! ```
//!
//! Over TLS, SCRAM-SHA-256 passwords are bound to the connection (SCRAM-SHA-256-PLUS with
//! `tls-server-end-point`) for a server certificate signed with RSA PKCS#1 or ECDSA;
//! `channel_binding=require` refuses a server that does not bind.
//!
//! The files are read when the store connects. An invalid value, a file that cannot be read or
//! parsed (named, its content never shown), a certificate that does not verify, or a server that
//! offers no TLS under `require` or `verify-*` is a [`StoreError`] saying why, within the connect
//! timeout. The store's place in errors and `Debug` shows the mode (`PostgreSQL at
//! db.internal:5432/app (sslmode=verify-full)`), never a password or key.
//!
//! # Statements, and poolers in front of PostgreSQL
//! By default each pooled connection prepares a statement the first time it runs it and keeps it
//! for as long as the connection lives, so that a claiming `reserve` and `finalize` are one round
//! trip each.
//! That works on PostgreSQL directly and behind PgBouncer 1.21 or later in transaction pooling
//! mode with `max_prepared_statements` set. For a pooler without prepared statements (PgBouncer
//! before 1.21 in transaction or statement mode, or with `max_prepared_statements = 0`), turn the
//! cache off with the URL parameter `statement_cache=off`
//! (`postgres://sms@pgbouncer.internal:6432/app?statement_cache=off`, also through
//! [`store::open`](super::open)) or [`PostgresStoreBuilder::statement_cache`]: each statement is
//! then sent unnamed with its parameter types, and parsed, bound and run in the same round trip.
//! Either way the store keeps no session state: every operation is single statements, each its own
//! transaction (the schema is created in one).
//!
//! Every wait is bounded: opening a connection by the connect timeout (default 5 s), waiting for
//! a pooled connection and each operation's statements by the operation timeout (default 10 s).
//! A connection whose operation timed out is closed, never handed out again; so is one whose
//! server no longer knows a statement it prepared.
//!
//! As a [`DedupeStore`](crate::store::DedupeStore) it also creates, under the same lock, the
//! webhook dedupe table `sms_webhook_dedupe` (for a custom table `T`: `T_dedupe`): `key TEXT
//! PRIMARY KEY, seen_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, claim TEXT` (epoch
//! milliseconds; `claim` is the token of the claim that holds the key until `expires_at`, NULL
//! for a key done until then; a table made before the `claim` column gets it, `ADD COLUMN IF NOT
//! EXISTS` under the lock, and its rows are done). `first_seen_at` is one `INSERT … ON CONFLICT
//! (key) DO UPDATE … WHERE expires_at <= now RETURNING key`; `claim_at` is the same upsert of a
//! claim inside a `WITH` that also returns the `claim` of a live row it did not take over (one
//! statement answers claimed, in flight or done); `commit_at` an unconditional upsert of a done
//! row; `release` a `DELETE … WHERE claim = token`.
//!
//! As a [`ReferenceIndex`](crate::store::ReferenceIndex) (settling unknown outcomes from
//! webhooks, [`reconcile`](crate::reconcile)) it creates a third table, `sms_correlation` (for a
//! custom table `T`: `T_references`): `reference TEXT PRIMARY KEY, key TEXT NOT NULL,
//! expires_at BIGINT NOT NULL`. All three are created on the first connection, so the database
//! user needs `CREATE` on the schema once.

mod conninfo;
mod dedupe;
mod reference;
mod tls;

use std::pin::pin;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use deadpool_postgres::{
    ClientWrapper, Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod, Runtime, TimeoutType,
};
use futures_util::TryStreamExt;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{ToSql, Type};

use super::error::Limit;
use super::row::{Row, expiry, payload, payload_to};
use super::sql::{Statements, list_filter, list_limit, listing};
use super::timeouts::{Timeouts, timeout_setters};
use super::{
    Claim, Filter, FinalRecord, Finalized, IdempotencyStore, Listing, Operator, Page, Record, Reservation,
    ReservationId, Resolution, Resolved, StoreError, millis, resolved_receipt, stale_cutoff,
};
use crate::redact::redact_url;
use futures_util::future::BoxFuture;

/// The URL parameter that turns the statement cache on or off.
const CACHE_PARAMETER: &str = "statement_cache";
/// How many times `reserve` runs its statement while another transaction commits the key's row
/// after the statement's snapshot was taken (so that the statement cannot answer).
const CLAIM_ATTEMPTS: usize = 3;

/// Idempotency records and webhook dedupe keys in PostgreSQL tables. Cheap to clone.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    queries: Arc<Queries>,
    cache: bool,
    place: Arc<str>,
    timeouts: Timeouts,
}

/// Configures a [`PostgresStore`].
#[must_use]
pub struct PostgresStoreBuilder {
    url: String,
    table: String,
    pool_size: usize,
    statement_cache: bool,
    timeouts: Timeouts,
}

impl std::fmt::Debug for PostgresStoreBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStoreBuilder")
            .field("url", &redact_url(&self.url))
            .field("table", &self.table)
            .field("pool_size", &self.pool_size)
            .field("statement_cache", &self.statement_cache)
            .field("timeouts", &self.timeouts)
            .finish()
    }
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("at", &self.place)
            .field("statement_cache", &self.cache)
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(error: tokio_postgres::Error) -> Self {
        Self::new(error)
    }
}

/// One statement of the store, with the types of its parameters (sent along when the statement
/// is not prepared).
pub(crate) struct Query {
    sql: String,
    types: &'static [Type],
}

impl Query {
    /// `sql` taking parameters of `types`.
    pub(crate) fn new(sql: String, types: &'static [Type]) -> Self {
        Self { sql, types }
    }
}

/// The statements the store runs, for its tables.
struct Queries {
    get: Query,
    reserve: Query,
    claim: Query,
    finalize: Query,
    list: Query,
    resolve_sent: Query,
    resolve_not_sent: Query,
    first_seen: Query,
    dedupe_claim: Query,
    dedupe_commit: Query,
    dedupe_release: Query,
    reference_remember: Query,
    reference_find: Query,
    /// The schema, created under an advisory lock (one implicit transaction).
    schema: String,
}

impl Queries {
    fn new(sql: Statements) -> Self {
        use Type as T;
        let query = Query::new;
        Self {
            get: query(sql.get, &[T::TEXT, T::INT8]),
            reserve: query(sql.reserve, &[T::TEXT, T::TEXT, T::TEXT, T::INT8, T::TEXT]),
            claim: query(sql.claim, &[T::TEXT, T::TEXT, T::TEXT, T::INT8, T::TEXT]),
            finalize: query(sql.finalize, &[T::TEXT, T::TEXT, T::TEXT, T::TEXT, T::INT8]),
            list: query(sql.list, &[T::INT8, T::TEXT, T::TEXT, T::TEXT, T::INT8, T::INT8]),
            resolve_sent: query(sql.resolve_sent, &[T::TEXT, T::INT8, T::TEXT, T::INT8]),
            resolve_not_sent: query(sql.resolve_not_sent, &[T::TEXT, T::INT8]),
            first_seen: query(sql.dedupe.first_seen, &[T::TEXT, T::INT8, T::INT8]),
            dedupe_claim: query(sql.dedupe.claim_or_held, &[T::TEXT, T::INT8, T::INT8, T::TEXT]),
            dedupe_commit: query(sql.dedupe.commit, &[T::TEXT, T::INT8, T::INT8]),
            dedupe_release: query(sql.dedupe.release, &[T::TEXT, T::TEXT]),
            reference_remember: query(sql.reference_remember, &[T::TEXT, T::TEXT, T::INT8]),
            reference_find: query(sql.reference_find, &[T::TEXT, T::INT8]),
            schema: format!(
                "SELECT pg_advisory_xact_lock(7325901); {}; {}; {}; {}; {}",
                sql.create, sql.migrate, sql.dedupe.create, sql.dedupe.migrate, sql.reference_create
            ),
        }
    }
}

/// A pooled connection lent to one operation: runs the store's statements, prepared once per
/// connection or unnamed.
pub(crate) struct Session<'a> {
    client: &'a ClientWrapper,
    cache: bool,
    /// The server no longer knows a statement this connection prepared (a pooler moved it to
    /// another server connection, or someone deallocated it): the connection is not pooled again.
    lost_statement: AtomicBool,
}

impl Session<'_> {
    /// Runs `query` with `params` in one round trip (after the first on this connection, which
    /// also prepares it): the rows it returned, and how many rows it changed.
    pub(crate) async fn run(
        &self,
        query: &Query,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<(Vec<tokio_postgres::Row>, u64), StoreError> {
        let result = async {
            let stream = if self.cache {
                let statement = self.client.prepare_typed_cached(&query.sql, query.types).await?;
                self.client.query_raw(&statement, params.iter().copied()).await?
            } else {
                let typed = params.iter().copied().zip(query.types.iter().cloned());
                self.client.query_typed_raw(&query.sql, typed).await?
            };
            let mut stream = pin!(stream);
            let mut rows = Vec::new();
            while let Some(row) = stream.try_next().await? {
                rows.push(row);
            }
            Ok::<_, tokio_postgres::Error>((rows, stream.rows_affected().unwrap_or(0)))
        }
        .await;
        if let Err(error) = &result
            && error.code() == Some(&SqlState::INVALID_SQL_STATEMENT_NAME)
        {
            self.lost_statement.store(true, Ordering::Relaxed);
        }
        Ok(result?)
    }

    /// The first row `query` returns, if any.
    pub(crate) async fn row(
        &self,
        query: &Query,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<tokio_postgres::Row>, StoreError> {
        Ok(self.run(query, params).await?.0.into_iter().next())
    }

    /// How many rows `query` changed.
    pub(crate) async fn changed(&self, query: &Query, params: &[&(dyn ToSql + Sync)]) -> Result<u64, StoreError> {
        Ok(self.run(query, params).await?.1)
    }

    /// Runs `sql` (statements separated by `;`, no parameters) as one simple query: one implicit
    /// transaction, nothing prepared.
    pub(crate) async fn batch(&self, sql: &str) -> Result<(), StoreError> {
        Ok(self.client.batch_execute(sql).await?)
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

    /// A store for the database at `url` (`postgres://user:password@host:port/db`, or libpq's
    /// `key=value` form), optionally with `statement_cache=off` and the TLS parameters `sslmode`,
    /// `sslrootcert`, `sslcert` and `sslkey`: see the [module documentation](self).
    pub fn builder(url: impl Into<String>) -> PostgresStoreBuilder {
        PostgresStoreBuilder {
            url: url.into(),
            table: "sms_idempotency".into(),
            pool_size: 8,
            statement_cache: true,
            timeouts: Timeouts::default(),
        }
    }

    /// Runs `work` on a pooled connection within the operation timeout. A connection whose work
    /// timed out may still owe the server's answer, and one that lost a prepared statement would
    /// fail again: either is closed rather than pooled again.
    pub(crate) async fn run<T>(
        &self,
        what: &str,
        work: impl AsyncFnOnce(&Session<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let client = self.pool.get().await.map_err(|e| self.pool_error(e))?;
        let session = Session { client: &client, cache: self.cache, lost_statement: AtomicBool::new(false) };
        let outcome = tokio::time::timeout(self.timeouts.operation, work(&session)).await;
        if outcome.is_err() || session.lost_statement.load(Ordering::Relaxed) {
            drop(Object::take(client));
        }
        let Ok(result) = outcome else {
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

    /// Whether each connection prepares its statements once and keeps them (`true`, the
    /// default), or sends every statement unnamed, for poolers without prepared statements such
    /// as PgBouncer before 1.21 in transaction mode (`false`). The URL parameter
    /// `statement_cache=on|off`, when present, wins over this setting.
    pub fn statement_cache(mut self, on: bool) -> Self {
        self.statement_cache = on;
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
        let queries = Queries::new(Statements::new(&self.table)?);
        let (url, cache, tls) = parameters(&self.url).map_err(|e| e.at("PostgreSQL"))?;
        let mut config = tokio_postgres::Config::from_str(&url).map_err(|e| StoreError::new(e).at("PostgreSQL"))?;
        config.ssl_mode(tls.mode.driver());
        let place: Arc<str> = Arc::from(format!("PostgreSQL at {} (sslmode={})", location(&config), tls.mode));
        let connector = tls::Connector { tls: tls.connector().map_err(|e| e.at(&place))?, mode: tls.mode };
        let manager =
            Manager::from_connect(config, connector, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(self.pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(timeouts.operation))
            .create_timeout(Some(timeouts.connect))
            .recycle_timeout(Some(timeouts.connect))
            .build()
            .map_err(|e| StoreError::new(e).at(&place))?;
        let cache = cache.unwrap_or(self.statement_cache);
        let store = PostgresStore { pool, queries: Arc::new(queries), cache, place, timeouts };
        // Concurrent CREATE TABLE IF NOT EXISTS can fail on the catalog's unique index: serialize
        // it. The batch is one implicit transaction, which holds the lock until it ends.
        store.run("creating the tables", async |c| c.batch(&store.queries.schema).await).await?;
        Ok(store)
    }
}

/// The connection string without the store's own parameters (`statement_cache` and the TLS
/// ones), `statement_cache` (when present), and the TLS settings.
fn parameters(conninfo: &str) -> Result<(String, Option<bool>, tls::TlsSettings), StoreError> {
    let (rest, cache) = cache_parameter(conninfo)?;
    let (rest, taken) = conninfo::take_parameters(&rest, &tls::PARAMETERS)?;
    Ok((rest, cache, tls::TlsSettings::from_parameters(&taken)?))
}

/// `url` without its `statement_cache` parameter, and that parameter's value (`on` or `off`)
/// when present; another value is an error that names the parameter.
fn cache_parameter(url: &str) -> Result<(String, Option<bool>), StoreError> {
    let (rest, taken) = conninfo::take_parameters(url, &[CACHE_PARAMETER])?;
    let Some((_, value)) = taken.last() else { return Ok((rest, None)) };
    let cache = match value.as_str() {
        "on" => true,
        "off" => false,
        _ => return Err(StoreError::new(format!("the URL parameter {CACHE_PARAMETER} must be `on` or `off`"))),
    };
    Ok((rest, Some(cache)))
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

/// Text that may hold a phone number (a recipient, a sender's scope) as a statement parameter:
/// the text itself, but with its numbers masked in `Debug`, which the driver's logs print.
pub(crate) struct Masked<'a>(pub(crate) &'a str);

impl std::fmt::Debug for Masked<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", crate::redact::redact_text(self.0))
    }
}

impl ToSql for Masked<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        self.0.to_sql(ty, out)
    }

    fn accepts(ty: &Type) -> bool {
        <&str as ToSql>::accepts(ty)
    }

    tokio_postgres::types::to_sql_checked!();
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
            record(c.row(&self.queries.get, &[&key, &millis(SystemTime::now())]).await?.as_ref())
        }))
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        claim: Claim<'a>,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        Box::pin(self.run("reserve", async move |c| {
            let id = ReservationId::new();
            let to = claim.to.map(Masked);
            let values: [&(dyn ToSql + Sync); 5] = [&key, &claim.fingerprint.as_str(), &id.as_str(), &millis(now), &to];
            // Only this reserve can have written this reservation id (both statements return it).
            let claimed = |row: &tokio_postgres::Row| {
                Ok::<_, StoreError>(row.try_get::<_, Option<&str>>("reservation_id")? == Some(id.as_str()))
            };
            if let Some(row) = c.row(&self.queries.reserve, &values).await?
                && claimed(&row)?
            {
                return Ok(Reservation::Acquired(id));
            }
            for _ in 0..CLAIM_ATTEMPTS {
                let Some(row) = c.row(&self.queries.claim, &values).await? else { continue };
                if claimed(&row)? {
                    return Ok(Reservation::Acquired(id));
                }
                return Ok(Reservation::Existing(Box::new(read_row(&row)?.record()?)));
            }
            Err(StoreError::new(format!(
                "the key's record changed under each of {CLAIM_ATTEMPTS} attempts to reserve it"
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
            let written = c.changed(&self.queries.finalize, &values).await?;
            Ok(if written == 1 { Finalized::Written } else { Finalized::NotOwner })
        }))
    }
    fn references(&self) -> Option<&dyn crate::store::ReferenceIndex> {
        Some(self)
    }
}

impl Operator for PostgresStore {
    fn list(&self, filter: Filter, now: SystemTime, page: Page) -> BoxFuture<'_, Result<Listing, StoreError>> {
        Box::pin(self.run("list", async move |c| {
            let ((state, cutoff), (limit, sql_limit)) = (list_filter(filter, now), list_limit(&page));
            let values: [&(dyn ToSql + Sync); 6] =
                [&millis(now), &page.cursor, &page.prefix, &state, &cutoff, &sql_limit];
            let (rows, _) = c.run(&self.queries.list, &values).await?;
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
                Resolution::NotSent => c.changed(&self.queries.resolve_not_sent, &[&key, &cutoff]).await?,
                Resolution::Sent { provider, provider_id, ttl, endpoint } => {
                    let result = FinalRecord::Accepted(resolved_receipt(provider, provider_id));
                    let (json, expires) = (payload_to(&result, endpoint.as_deref())?, expiry(&result, ttl, now));
                    let values: [&(dyn ToSql + Sync); 4] = [&key, &cutoff, &json, &expires];
                    c.changed(&self.queries.resolve_sent, &values).await?
                }
            };
            if changed > 0 {
                return Ok(Resolved::Done);
            }
            Ok(match record(c.row(&self.queries.get, &[&key, &millis(now)]).await?.as_ref())? {
                None => Resolved::NotFound,
                Some(record) => Resolved::Refused(Box::new(record)),
            })
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_parameter_is_taken_out_of_the_url() {
        let cases = [
            ("postgres://h/db", "postgres://h/db", None),
            ("postgres://h/db?statement_cache=off", "postgres://h/db", Some(false)),
            ("postgres://h/db?statement_cache=on&connect_timeout=3", "postgres://h/db?connect_timeout=3", Some(true)),
            ("postgres://h/db?sslmode=disable&statement_cache=off", "postgres://h/db?sslmode=disable", Some(false)),
            ("postgres://h/db?a=1&statement_cache=off&b=2", "postgres://h/db?a=1&b=2", Some(false)),
            // Not a parameter: inside a password, or a longer name.
            ("postgres://u:xstatement_cache=off@h/db", "postgres://u:xstatement_cache=off@h/db", None),
            ("postgres://h/db?my_statement_cache=off", "postgres://h/db?my_statement_cache=off", None),
        ];
        for (url, without, cache) in cases {
            let (rest, found) = cache_parameter(url).unwrap();
            assert_eq!((rest.as_str(), found), (without, cache), "{url}");
        }
        for bad in ["postgres://h/db?statement_cache=", "postgres://h/db?statement_cache=no&x=1"] {
            let error = cache_parameter(bad).unwrap_err().to_string();
            assert!(error.contains("statement_cache must be `on` or `off`"), "{error}");
        }
    }
}
