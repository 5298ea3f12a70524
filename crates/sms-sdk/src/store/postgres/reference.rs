//! The PostgreSQL store's correlation index: the table `sms_correlation` (for a custom table `T`:
//! `T_references`), `reference TEXT PRIMARY KEY, key TEXT NOT NULL, expires_at BIGINT NOT NULL`,
//! created with the others under the advisory lock.

use std::time::{Duration, SystemTime};

use tokio_postgres::types::ToSql;

use super::PostgresStore;
use crate::store::{ReferenceIndex, StoreError, later, millis};
use futures_util::future::BoxFuture;

impl ReferenceIndex for PostgresStore {
    fn remember_reference<'a>(
        &'a self,
        reference: &'a str,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.run("remember_reference", async move |c| {
            let expires_at = millis(later(now, retention));
            let values: [&(dyn ToSql + Sync); 3] = [&reference, &key, &expires_at];
            c.changed(&self.queries.reference_remember, &values).await?;
            Ok(())
        }))
    }

    fn find_reference<'a>(
        &'a self,
        reference: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(self.run("find_reference", async move |c| {
            let row = c.row(&self.queries.reference_find, &[&reference, &millis(now)]).await?;
            Ok(row.map(|row| row.try_get::<_, String>(0)).transpose()?)
        }))
    }
}
