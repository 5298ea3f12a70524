//! The SQLite store's correlation index: the table `sms_correlation` (for a custom table `T`:
//! `T_references`), `reference TEXT PRIMARY KEY, key TEXT NOT NULL, expires_at BIGINT NOT NULL`.

use std::time::{Duration, SystemTime};

use rusqlite::{OptionalExtension as _, params};

use super::SqliteStore;
use crate::store::{ReferenceIndex, StoreError, later, millis};
use futures_util::future::BoxFuture;

impl ReferenceIndex for SqliteStore {
    fn remember_reference<'a>(
        &'a self,
        reference: &'a str,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let (reference, key, expires_at) = (reference.to_owned(), key.to_owned(), millis(later(now, retention)));
        Box::pin(self.write("remember_reference", move |c, sql| {
            c.prepare_cached(&sql.reference_remember)?.execute(params![reference, key, expires_at])?;
            Ok(())
        }))
    }

    fn find_reference<'a>(
        &'a self,
        reference: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        let reference = reference.to_owned();
        Box::pin(self.read("find_reference", move |c, sql| {
            Ok(c.prepare_cached(&sql.reference_find)?
                .query_row(params![reference, millis(now)], |r| r.get(0))
                .optional()?)
        }))
    }
}
