//! The SQLite suppression list, on a [`SqliteStore`]'s connection.

use std::sync::Arc;
use std::time::SystemTime;

use rusqlite::{Connection, OptionalExtension, params};

use super::sql::{DEFAULT_TABLE, SuppressionSql, check_params, limit, listing};
use super::{
    Applied, Change, EVENT_RETENTION, Scope, StoreError, SuppressionEntry, SuppressionListing, SuppressionPage,
    SuppressionStore, bounded,
};
use crate::PhoneNumber;
use crate::store::sql::dedupe_times;
use crate::store::sqlite::{Atomic, SqliteStore};
use futures_util::future::BoxFuture;

/// A suppression list in a SQLite file: the tables `sms_suppression (recipient, scope,
/// suppressed, at, reason, event, PRIMARY KEY (recipient, scope))` and `sms_suppression_events
/// (key PRIMARY KEY, seen_at, expires_at)`, beside the idempotency records of the same
/// [`SqliteStore`], with its file settings (WAL, `synchronous = FULL`), lock waits and timeouts.
///
/// A batch of changes is one immediate transaction (a savepoint of the store's batch, when it is
/// committed with other writes: see [`SqliteStore`]'s group commit); `check` is one lookup on the
/// primary key.
/// Cheap to clone.
///
/// ```no_run
/// # async fn example() -> Result<(), sms_sdk::store::StoreError> {
/// use sms_sdk::store::sqlite::SqliteStore;
/// use sms_sdk::store::suppression::SqliteSuppressionStore;
///
/// let list = SqliteSuppressionStore::open(SqliteStore::open(".sms-sdk/state.db").await?).await?;
/// # let _ = list; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteSuppressionStore {
    store: SqliteStore,
    sql: Arc<SuppressionSql>,
}

impl SqliteSuppressionStore {
    /// The list in `store`'s file, creating its tables if needed.
    ///
    /// # Errors
    /// A [`StoreError`] when the tables cannot be created within the operation timeout.
    pub async fn open(store: SqliteStore) -> Result<Self, StoreError> {
        Self::open_named(store, DEFAULT_TABLE).await
    }

    /// The list in the table `table` (a plain SQL identifier; its events table adds `_events`).
    ///
    /// # Errors
    /// A [`StoreError`] when the name is not a plain identifier, or the tables cannot be
    /// created within the operation timeout.
    pub async fn open_named(store: SqliteStore, table: &str) -> Result<Self, StoreError> {
        let sql = Arc::new(SuppressionSql::new(table)?.for_sqlite());
        let create = sql.create.join(";\n");
        store.write("creating the suppression tables", move |c, _| Ok(c.execute_batch(&create)?)).await?;
        Ok(Self { store, sql })
    }

    /// Runs `f`, which only reads, on the store's connection, on the store's own thread, within
    /// its operation timeout ([`SqliteStore::read`]).
    async fn read<T: Send + 'static>(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut Connection, &SuppressionSql) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let sql = Arc::clone(&self.sql);
        self.store.read(what, move |c, _| f(c, &sql)).await
    }

    /// Runs `f`, which writes, likewise, committed with the writes waiting with it
    /// ([`SqliteStore::write`]).
    async fn write<T: Send + 'static>(
        &self,
        what: &'static str,
        f: impl FnOnce(&mut Connection, &SuppressionSql) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let sql = Arc::clone(&self.sql);
        self.store.write(what, move |c, _| f(c, &sql)).await
    }
}

/// An entry of a row of [`super::sql::COLUMNS`].
fn read_entry(row: &rusqlite::Row<'_>) -> rusqlite::Result<Result<SuppressionEntry, StoreError>> {
    let (recipient, scope): (String, String) = (row.get(0)?, row.get(1)?);
    Ok(SuppressionEntry::read(&recipient, &scope, row.get(2)?, row.get(3)?, row.get(4)?))
}

/// Applies one change inside the batch's transaction.
fn apply_one(c: &Connection, sql: &SuppressionSql, change: &Change, now: SystemTime) -> Result<Applied, StoreError> {
    if let Some(event) = change.event_key() {
        let (seen_at, expires_at) = dedupe_times(now, EVENT_RETENTION);
        let mut statement = c.prepare_cached(&sql.first_seen)?;
        let first: Option<String> =
            statement.query_row(params![event, seen_at, expires_at], |r| r.get(0)).optional()?;
        if first.is_none() {
            return Ok(Applied::Replayed);
        }
    }
    let values = params![
        change.recipient().as_str(),
        change.scope().key()?,
        change.action().suppresses(),
        change.at_millis(),
        change.reason(),
        change.event_key(),
    ];
    let mut statement = c.prepare_cached(&sql.upsert)?;
    let written: Option<String> = statement.query_row(values, |r| r.get(0)).optional()?;
    Ok(if written.is_some() { Applied::Recorded } else { Applied::Stale })
}

impl SuppressionStore for SqliteSuppressionStore {
    fn apply<'a>(&'a self, changes: &'a [Change], now: SystemTime) -> BoxFuture<'a, Result<Vec<Applied>, StoreError>> {
        Box::pin(async move {
            bounded(changes.len(), 0)?;
            let changes = changes.to_vec();
            self.write("apply", move |c, sql| {
                let tx = Atomic::begin(c)?;
                let applied =
                    changes.iter().map(|change| apply_one(&tx, sql, change, now)).collect::<Result<_, _>>()?;
                tx.commit()?;
                Ok(applied)
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
            let recipient = recipient.as_str().to_owned();
            self.read("check", move |connection, sql| {
                let mut statement = connection.prepare_cached(&sql.check)?;
                statement.query_row(params![recipient, a, b, c, d], read_entry).optional()?.transpose()
            })
            .await
        })
    }

    fn list(&self, page: SuppressionPage) -> BoxFuture<'_, Result<SuppressionListing, StoreError>> {
        Box::pin(self.read("list", move |c, sql| {
            let rows = match &page.after {
                None => c.prepare_cached(&sql.list_first)?.query_map(params![limit(&page)], read_entry)?.collect(),
                Some(cursor) => c
                    .prepare_cached(&sql.list_after)?
                    .query_map(params![cursor.recipient, cursor.scope, limit(&page)], read_entry)?
                    .collect::<Result<Vec<_>, _>>(),
            };
            let entries = rows?.into_iter().collect::<Result<_, _>>()?;
            listing(entries, &page)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_is_one_lookup_on_the_primary_key() {
        let connection = Connection::open_in_memory().unwrap();
        let sql = SuppressionSql::new(DEFAULT_TABLE).unwrap().for_sqlite();
        connection.execute_batch(&sql.create.join(";\n")).unwrap();
        let plan: Vec<String> = connection
            .prepare(&format!("EXPLAIN QUERY PLAN {}", sql.check))
            .unwrap()
            .query_map(params!["+14155550123", "account", "sender:x", None::<String>, None::<String>], |r| {
                r.get::<_, String>(3)
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(plan.iter().any(|step| step.contains("USING INDEX sqlite_autoindex_sms_suppression_1")), "{plan:?}");
        assert!(!plan.iter().any(|step| step.starts_with("SCAN")), "{plan:?}");
    }

    #[test]
    fn later_pages_are_a_range_of_the_primary_key() {
        let connection = Connection::open_in_memory().unwrap();
        let sql = SuppressionSql::new(DEFAULT_TABLE).unwrap().for_sqlite();
        connection.execute_batch(&sql.create.join(";\n")).unwrap();
        let plan: Vec<String> = connection
            .prepare(&format!("EXPLAIN QUERY PLAN {}", sql.list_after))
            .unwrap()
            .query_map(params!["+14155550123", "account", 500], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter().any(|step| step
                .starts_with("SEARCH sms_suppression USING INDEX sqlite_autoindex_sms_suppression_1 (recipient>?)")),
            "{plan:?}"
        );
        assert!(!plan.iter().any(|step| step.contains("TEMP B-TREE")), "{plan:?}");
    }
}
