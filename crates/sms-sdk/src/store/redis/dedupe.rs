//! The Redis store's webhook dedupe keys: one string key per dedupe key, `<prefix>dedupe:<key>`,
//! holding the epoch milliseconds of a done sighting, or `c:<token>` for a claim, with a key
//! expiry of the retention or the lease (on the Redis server's clock).

use std::time::{Duration, SystemTime};

use super::{RedisStore, SCRIPTS, expiry_ms};
use crate::store::{ClaimToken, DedupeClaim, DedupeStore, StoreError, millis};
use futures_util::future::BoxFuture;

/// Where dedupe keys live under the prefix.
const DEDUPE_NAMESPACE: &str = "dedupe:";

/// What a claim's value starts with (a done sighting's value is digits).
const CLAIM_PREFIX: &str = "c:";

/// Claims a dedupe key when it is absent (unseen, or its lease or retention ran out): 0 claimed,
/// 1 held by a claim, 2 done (any other value: a sighting, as every release wrote it).
/// ARGV: the claim's value (`c:<token>`), the lease in milliseconds.
pub(super) const CLAIM: &str = r"
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 0
end
if string.sub(held, 1, 2) == 'c:' then return 1 end
return 2
";

/// Deletes a dedupe key while it holds this claim: 1 deleted, else 0. ARGV: the claim's value.
pub(super) const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

impl RedisStore {
    fn dedupe_key(&self, key: &str) -> String {
        format!("{}{DEDUPE_NAMESPACE}{key}", self.prefix)
    }

    /// `SET` of `key`'s done sighting at `now`, forgotten after `retention`; `NX` when `only_new`.
    /// Answers whether it was written.
    async fn sighting(
        &self,
        what: &str,
        key: &str,
        now: SystemTime,
        retention: Duration,
        only_new: bool,
    ) -> Result<bool, StoreError> {
        let mut command = redis::cmd("SET");
        command.arg(self.dedupe_key(key)).arg(millis(now));
        if only_new {
            command.arg("NX");
        }
        command.arg("PX").arg(expiry_ms(retention));
        let reply: Option<String> = self.run(what, command.query_async(&mut self.connection.clone())).await?;
        match reply.as_deref() {
            Some("OK") => Ok(true),
            None => Ok(false),
            Some(other) => Err(StoreError::new(format!("unexpected reply from SET: {other:?}")).at(&self.place)),
        }
    }
}

/// The value of a claim of `token`.
fn claim_value(token: &ClaimToken) -> String {
    format!("{CLAIM_PREFIX}{}", token.as_str())
}

impl DedupeStore for RedisStore {
    fn first_seen_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.sighting("first_seen", key, now, retention, true))
    }

    fn claim_at<'a>(
        &'a self,
        key: &'a str,
        _now: SystemTime,
        lease: Duration,
    ) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
        Box::pin(async move {
            let token = ClaimToken::new();
            let script = &SCRIPTS.claim;
            let mut command = script.on_keys(&[self.dedupe_key(key)]);
            command.arg(claim_value(&token)).arg(expiry_ms(lease));
            let answer: i64 = self.eval("claim", script, &command).await?;
            match answer {
                0 => Ok(DedupeClaim::Claimed(token)),
                1 => Ok(DedupeClaim::InFlight),
                2 => Ok(DedupeClaim::Done),
                other => {
                    Err(StoreError::new(format!("unexpected reply from the claim script: {other}")).at(&self.place))
                }
            }
        })
    }

    fn commit_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.sighting("commit", key, now, retention, false).await?;
            Ok(())
        })
    }

    fn release<'a>(&'a self, key: &'a str, token: &'a ClaimToken) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let script = &SCRIPTS.release;
            let mut command = script.on_keys(&[self.dedupe_key(key)]);
            command.arg(claim_value(token));
            let deleted: i64 = self.eval("release", script, &command).await?;
            Ok(deleted == 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_told_from_a_sighting_by_its_prefix() {
        let value = claim_value(&ClaimToken::new());
        assert!(value.starts_with(CLAIM_PREFIX) && value.len() == 34, "{value}");
        assert!(CLAIM.contains(&format!("'{CLAIM_PREFIX}'")), "the script tests the same prefix");
        // A sighting is digits: never taken for a claim.
        assert!(!millis(SystemTime::now()).to_string().starts_with(CLAIM_PREFIX));
    }
}
