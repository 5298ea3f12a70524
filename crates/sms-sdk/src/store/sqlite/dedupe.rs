//! The SQLite store's webhook dedupe keys: the table `sms_webhook_dedupe (key, seen_at,
//! expires_at, claim)`, a row per key, done (`claim` NULL) or claimed until `expires_at`.

use std::time::{Duration, SystemTime};

use rusqlite::{OptionalExtension as _, params};

use super::{Atomic, SqliteStore, write_returning};
use crate::store::sql::dedupe_times;
use crate::store::{ClaimToken, DedupeClaim, DedupeStore, StoreError};
use futures_util::future::BoxFuture;

impl DedupeStore for SqliteStore {
    fn first_seen_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        let key = key.to_owned();
        let (seen_at, expires_at) = dedupe_times(now, retention);
        Box::pin(self.write("first_seen", move |c, sql| {
            Ok(write_returning(c, &sql.dedupe.first_seen, params![key, seen_at, expires_at])?.is_some())
        }))
    }

    fn claim_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        lease: Duration,
    ) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
        let (key, token) = (key.to_owned(), ClaimToken::new());
        let (claimed_at, until) = dedupe_times(now, lease);
        Box::pin(self.write("claim", move |c, sql| {
            let values = params![key, claimed_at, until, token.as_str()];
            // Usually the key is new: the statement alone claims it, in its own transaction (or
            // its batch's).
            if write_returning(c, &sql.dedupe.claim, values)?.is_some() {
                return Ok(DedupeClaim::Claimed(token));
            }
            // Otherwise try again and read what holds the key, in one transaction (the row may
            // have been released, committed or run out between the two statements).
            let tx = Atomic::begin(c)?;
            let answer = if write_returning(&tx, &sql.dedupe.claim, values)?.is_some() {
                DedupeClaim::Claimed(token)
            } else {
                let held: Option<Option<String>> = tx
                    .prepare_cached(&sql.dedupe.held)?
                    .query_row(params![key, claimed_at], |r| r.get(0))
                    .optional()?;
                match held {
                    Some(Some(_)) => DedupeClaim::InFlight,
                    Some(None) => DedupeClaim::Done,
                    None => return Err(StoreError::new("the dedupe key's row vanished during claim")),
                }
            };
            tx.commit()?;
            Ok(answer)
        }))
    }

    fn commit_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let key = key.to_owned();
        let (seen_at, expires_at) = dedupe_times(now, retention);
        Box::pin(self.write("commit", move |c, sql| {
            c.prepare_cached(&sql.dedupe.commit)?.execute(params![key, seen_at, expires_at])?;
            Ok(())
        }))
    }

    fn release<'a>(&'a self, key: &'a str, token: &'a ClaimToken) -> BoxFuture<'a, Result<bool, StoreError>> {
        let (key, token) = (key.to_owned(), token.as_str().to_owned());
        Box::pin(self.write("release", move |c, sql| {
            Ok(c.prepare_cached(&sql.dedupe.release)?.execute(params![key, token])? > 0)
        }))
    }
}
