//! The PostgreSQL store's webhook dedupe keys: the table `sms_webhook_dedupe` (for a custom table
//! `T`: `T_dedupe`), `key, seen_at, expires_at, claim`, a row per key, done (`claim` NULL) or
//! claimed until `expires_at`; created (and given its `claim` column) with the others under the
//! advisory lock.

use std::time::{Duration, SystemTime};

use tokio_postgres::types::ToSql;

use super::{CLAIM_ATTEMPTS, PostgresStore};
use crate::store::sql::dedupe_times;
use crate::store::{ClaimToken, DedupeClaim, DedupeStore, StoreError};
use futures_util::future::BoxFuture;

impl DedupeStore for PostgresStore {
    fn first_seen_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.run("first_seen", async move |c| {
            let (seen_at, expires_at) = dedupe_times(now, retention);
            Ok(c.row(&self.queries.first_seen, &[&key, &seen_at, &expires_at]).await?.is_some())
        }))
    }

    fn claim_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        lease: Duration,
    ) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
        Box::pin(self.run("claim", async move |c| {
            let token = ClaimToken::new();
            let (claimed_at, until) = dedupe_times(now, lease);
            let values: [&(dyn ToSql + Sync); 4] = [&key, &claimed_at, &until, &token.as_str()];
            for _ in 0..CLAIM_ATTEMPTS {
                let Some(row) = c.row(&self.queries.dedupe_claim, &values).await? else { continue };
                return Ok(match row.try_get::<_, Option<&str>>(0)? {
                    Some(held) if held == token.as_str() => DedupeClaim::Claimed(token),
                    Some(_) => DedupeClaim::InFlight,
                    None => DedupeClaim::Done,
                });
            }
            Err(StoreError::new(format!(
                "the dedupe key's row changed under each of {CLAIM_ATTEMPTS} attempts to claim it"
            )))
        }))
    }

    fn commit_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.run("commit", async move |c| {
            let (seen_at, expires_at) = dedupe_times(now, retention);
            c.changed(&self.queries.dedupe_commit, &[&key, &seen_at, &expires_at]).await?;
            Ok(())
        }))
    }

    fn release<'a>(&'a self, key: &'a str, token: &'a ClaimToken) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.run("release", async move |c| {
            Ok(c.changed(&self.queries.dedupe_release, &[&key, &token.as_str()]).await? > 0)
        }))
    }
}
