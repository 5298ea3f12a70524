//! The PostgreSQL suppression list, on a [`PostgresStore`]'s pool.

use std::sync::Arc;
use std::time::SystemTime;

use tokio_postgres::types::{ToSql, Type};

use crate::store::postgres::Masked;

use super::sql::{DEFAULT_TABLE, SuppressionSql, check_params, limit, listing};
use super::{
    Applied, Change, EVENT_RETENTION, Scope, StoreError, SuppressionEntry, SuppressionListing, SuppressionPage,
    SuppressionStore, bounded,
};
use crate::PhoneNumber;
use crate::store::postgres::{PostgresStore, Query};
use crate::store::sql::dedupe_times;
use futures_util::future::BoxFuture;

/// A suppression list in PostgreSQL: the tables `sms_suppression (recipient, scope, suppressed,
/// at, reason, event, PRIMARY KEY (recipient, scope))` and `sms_suppression_events (key PRIMARY
/// KEY, seen_at, expires_at)`, created under an advisory lock, on the pool and with the timeouts
/// of a [`PostgresStore`].
///
/// Applying a change is one statement (the event's dedupe key and the ordered upsert together);
/// a batch is pipelined on one connection. `check` is one lookup on the primary key. Cheap to
/// clone.
///
/// ```no_run
/// # async fn example() -> Result<(), sms_sdk::store::StoreError> {
/// use sms_sdk::store::postgres::PostgresStore;
/// use sms_sdk::store::suppression::PostgresSuppressionStore;
///
/// let list = PostgresSuppressionStore::open(PostgresStore::connect("postgres://sms@db/app").await?).await?;
/// # let _ = list; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PostgresSuppressionStore {
    store: PostgresStore,
    queries: Arc<Queries>,
}

/// The list's statements with their parameter types: run prepared once per connection, or
/// unnamed with their types when the store's statement cache is off (for poolers).
struct Queries {
    apply: Query,
    check: Query,
    list_first: Query,
    list_after: Query,
}

impl Queries {
    fn new(sql: &SuppressionSql) -> Self {
        use Type as T;
        Self {
            apply: Query::new(
                sql.apply.clone(),
                &[T::TEXT, T::TEXT, T::BOOL, T::INT8, T::TEXT, T::TEXT, T::INT8, T::INT8],
            ),
            check: Query::new(sql.check.clone(), &[T::TEXT, T::TEXT, T::TEXT, T::TEXT, T::TEXT]),
            list_first: Query::new(sql.list_first.clone(), &[T::INT8]),
            list_after: Query::new(sql.list_after.clone(), &[T::TEXT, T::TEXT, T::INT8]),
        }
    }
}

impl std::fmt::Debug for Queries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queries(..)")
    }
}

impl PostgresSuppressionStore {
    /// The list beside `store`'s records, creating its tables if needed.
    ///
    /// # Errors
    /// A [`StoreError`] when the tables cannot be created within the timeouts.
    pub async fn open(store: PostgresStore) -> Result<Self, StoreError> {
        Self::open_named(store, DEFAULT_TABLE).await
    }

    /// The list in the table `table` (a plain SQL identifier; its events table adds `_events`).
    ///
    /// # Errors
    /// A [`StoreError`] when the name is not a plain identifier, or the tables cannot be
    /// created within the timeouts.
    pub async fn open_named(store: PostgresStore, table: &str) -> Result<Self, StoreError> {
        let sql = SuppressionSql::new(table)?;
        // Concurrent CREATE TABLE IF NOT EXISTS can fail on the catalog's unique index: serialize
        // it (the batch is one implicit transaction, which holds the lock until it ends).
        let schema = format!("SELECT pg_advisory_xact_lock(7325902); {}", sql.create.join(";\n"));
        store.run("creating the suppression tables", async move |c| c.batch(&schema).await).await?;
        Ok(Self { store, queries: Arc::new(Queries::new(&sql)) })
    }
}

/// An entry of a row of [`super::sql::COLUMNS`].
fn read_entry(row: &tokio_postgres::Row) -> Result<SuppressionEntry, StoreError> {
    let recipient: &str = row.try_get(0)?;
    let scope: &str = row.try_get(1)?;
    SuppressionEntry::read(recipient, scope, row.try_get(2)?, row.try_get(3)?, row.try_get(4)?)
}

/// The parameters of one change, held while its statement runs.
struct Values<'a> {
    recipient: &'a str,
    scope: String,
    suppressed: bool,
    at: i64,
    reason: &'a str,
    event: Option<&'a str>,
}

impl SuppressionStore for PostgresSuppressionStore {
    fn apply<'a>(&'a self, changes: &'a [Change], now: SystemTime) -> BoxFuture<'a, Result<Vec<Applied>, StoreError>> {
        Box::pin(async move {
            bounded(changes.len(), 0)?;
            if changes.is_empty() {
                return Ok(Vec::new());
            }
            let values = changes
                .iter()
                .map(|c| {
                    Ok(Values {
                        recipient: c.recipient().as_str(),
                        scope: c.scope().key()?,
                        suppressed: c.action().suppresses(),
                        at: c.at_millis(),
                        reason: c.reason(),
                        event: c.event_key(),
                    })
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            let (seen_at, forget_at) = dedupe_times(now, EVENT_RETENTION);
            self.store
                .run("apply", async move |c| {
                    // Pipelined: each statement is sent in order on first poll, and answered in order.
                    let runs = values.iter().map(|v| async move {
                        let (recipient, scope) = (Masked(v.recipient), Masked(&v.scope));
                        let params: [&(dyn ToSql + Sync); 8] =
                            [&recipient, &scope, &v.suppressed, &v.at, &v.reason, &v.event, &seen_at, &forget_at];
                        let row = c
                            .row(&self.queries.apply, &params)
                            .await?
                            .ok_or_else(|| StoreError::new("the suppression upsert returned no row"))?;
                        let (seen, written): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
                        Ok::<_, StoreError>(match (v.event, seen, written) {
                            (Some(_), 0, _) => Applied::Replayed,
                            (_, _, 0) => Applied::Stale,
                            _ => Applied::Recorded,
                        })
                    });
                    futures_util::future::try_join_all(runs).await
                })
                .await
        })
    }

    fn check<'a>(
        &'a self,
        recipient: &'a PhoneNumber,
        scopes: &'a [Scope],
    ) -> BoxFuture<'a, Result<Option<SuppressionEntry>, StoreError>> {
        Box::pin(async move {
            bounded(0, scopes.len())?;
            let [a, b, c, d] = check_params(scopes)?;
            self.store
                .run("check", async move |client| {
                    let [a, b, c, d] = [&a, &b, &c, &d].map(|scope| scope.as_deref().map(Masked));
                    let params: [&(dyn ToSql + Sync); 5] = [&Masked(recipient.as_str()), &a, &b, &c, &d];
                    client.row(&self.queries.check, &params).await?.as_ref().map(read_entry).transpose()
                })
                .await
        })
    }

    fn list(&self, page: SuppressionPage) -> BoxFuture<'_, Result<SuppressionListing, StoreError>> {
        Box::pin(self.store.run("list", async move |c| {
            let rows = match &page.after {
                None => c.run(&self.queries.list_first, &[&limit(&page)]).await?.0,
                Some(cursor) => {
                    c.run(&self.queries.list_after, &[&cursor.recipient, &cursor.scope, &limit(&page)]).await?.0
                }
            };
            listing(rows.iter().map(read_entry).collect::<Result<_, _>>()?, &page)
        }))
    }
}
