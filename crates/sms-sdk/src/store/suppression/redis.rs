//! The Redis suppression list, on a [`RedisStore`]'s connection.

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::SystemTime;

use redis::Value;

use super::{
    Applied, Change, Cursor, EVENT_RETENTION, Scope, StoreError, SuppressionEntry, SuppressionListing, SuppressionPage,
    SuppressionStore, bounded,
};
use crate::PhoneNumber;
use crate::redact::mask_phone_number;
use crate::store::idempotency::millis;
use crate::store::redis::{Lua, RedisStore};
use futures_util::future::BoxFuture;

/// Applies one change: 1 recorded, 0 stale, 2 replayed. KEYS: the recipient's hash, the event's
/// key. ARGV: scope, suppressed (`1`/`0`), at, the field's value, has an event (`1`/`0`), now,
/// the event's retention (ms).
const APPLY: &str = r"
if ARGV[5] == '1' and not redis.call('SET', KEYS[2], ARGV[6], 'NX', 'PX', ARGV[7]) then
  return 2
end
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local flag, at = string.match(old, '^([01])|(%d+)|')
  local new_at, old_at = tonumber(ARGV[3]), tonumber(at)
  if old_at and (new_at < old_at or (new_at == old_at and not (ARGV[2] == '1' and flag == '0'))) then
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
return 1
";

/// [`APPLY`] and its SHA1, computed once.
static APPLY_SCRIPT: LazyLock<Lua> = LazyLock::new(|| Lua::new(APPLY));

/// The most index reads of one page: over many opted-in recipients a page ends early, with a
/// cursor.
const MAX_ROUNDS: usize = 64;
/// Sorts after every scope (scopes are printable ASCII): a cursor past all of a recipient's.
const AFTER_ALL_SCOPES: &str = "\u{7f}";

/// A suppression list in Redis, beside a [`RedisStore`]'s records and with its connection,
/// prefix and timeouts: one hash per recipient, `<prefix>suppression:{<recipient>}`, whose
/// fields are scopes (`account`, `sender:<id>`, `service:<id>`) and whose values are
/// `<suppressed>|<at ms>|<JSON [reason, event]>`; event dedupe keys at
/// `<prefix>suppression:{<recipient>}:event:<key>` (`SET NX PX`); and a sorted set of every
/// opted-out recipient, `<prefix>suppression-index`, that orders listings.
///
/// A change is one Lua script over the recipient's keys, which share a hash tag (one cluster
/// slot); a batch is one `ZADD` of the opted-out recipients to the index, then one pipeline of
/// the scripts (on a Redis Cluster, the scripts run each on its own slot's master, all at once).
/// `check` is one `HMGET`; a listing reads the index, one key, so it sees every master's
/// entries. Cheap to clone.
///
/// ```no_run
/// # async fn example() -> Result<(), sms_sdk::store::StoreError> {
/// use sms_sdk::store::redis::RedisStore;
/// use sms_sdk::store::suppression::RedisSuppressionStore;
///
/// let list = RedisSuppressionStore::new(RedisStore::connect("redis://127.0.0.1:6379/0").await?);
/// # let _ = list; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct RedisSuppressionStore {
    store: RedisStore,
}

impl RedisSuppressionStore {
    /// The list beside `store`'s records, under its prefix.
    #[must_use]
    pub fn new(store: RedisStore) -> Self {
        Self { store }
    }

    fn hash(&self, recipient: &str) -> String {
        format!("{}suppression:{{{recipient}}}", self.store.prefix)
    }

    fn index(&self) -> String {
        format!("{}suppression-index", self.store.prefix)
    }

    /// The recipients' hashes, in one pipeline.
    async fn hashes(&self, recipients: &[String]) -> Result<Vec<HashMap<String, String>>, StoreError> {
        if recipients.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for recipient in recipients {
            pipe.cmd("HGETALL").arg(self.hash(recipient));
        }
        let replies = self.store.run("list", self.store.connection.each(pipe)).await?;
        replies.into_iter().map(|reply| redis::from_redis_value(reply?).map_err(StoreError::new)).collect()
    }
}

/// A hash field's value for `change`.
fn value(change: &Change) -> Result<String, StoreError> {
    let detail = serde_json::to_string(&(change.reason(), change.event_key()))?;
    Ok(format!("{}|{}|{detail}", u8::from(change.action().suppresses()), change.at_millis()))
}

/// The entry of a hash field, `None` for an opt-in.
fn entry(recipient: &str, scope: &str, value: &str) -> Result<Option<SuppressionEntry>, StoreError> {
    let corrupt = || StoreError::corrupt(&mask_phone_number(recipient), "a suppression value does not parse");
    let mut parts = value.splitn(3, '|');
    let (Some(flag), Some(at), Some(detail)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(corrupt());
    };
    let at: i64 = at.parse().map_err(|_| corrupt())?;
    let (reason, event): (String, Option<String>) = serde_json::from_str(detail).map_err(|_| corrupt())?;
    match flag {
        "1" => SuppressionEntry::read(recipient, scope, at, reason, event).map(Some),
        "0" => Ok(None),
        _ => Err(corrupt()),
    }
}

impl SuppressionStore for RedisSuppressionStore {
    fn apply<'a>(&'a self, changes: &'a [Change], now: SystemTime) -> BoxFuture<'a, Result<Vec<Applied>, StoreError>> {
        Box::pin(async move {
            bounded(changes.len(), 0)?;
            if changes.is_empty() {
                return Ok(Vec::new());
            }
            let script = &*APPLY_SCRIPT;
            let retention = u64::try_from(EVENT_RETENTION.as_millis()).unwrap_or(u64::MAX);
            // Indexed first: a crash in between leaves a recipient listed with nothing to list,
            // never an opt-out that listings miss. One command on the index's one key.
            let suppressed: Vec<&str> =
                changes.iter().filter(|c| c.action().suppresses()).map(|c| c.recipient().as_str()).collect();
            if !suppressed.is_empty() {
                let mut index = redis::cmd("ZADD");
                index.arg(self.index());
                for recipient in suppressed {
                    index.arg(0).arg(recipient);
                }
                let _: i64 = self.store.run("apply", index.query_async(&mut self.store.connection.clone())).await?;
            }
            let mut pipe = redis::pipe();
            for change in changes {
                let hash = self.hash(change.recipient().as_str());
                let event = format!("{hash}:event:{}", change.event_key().unwrap_or_default());
                let mut invocation = script.on_keys(&[hash, event]);
                invocation.arg(change.scope().key()?).arg(u8::from(change.action().suppresses()));
                invocation.arg(change.at_millis()).arg(value(change)?);
                invocation.arg(u8::from(change.event_key().is_some())).arg(millis(now)).arg(retention);
                pipe.add_command(invocation);
            }
            // A server that lost the script (a restart, a failover) runs it all the same: the
            // changes it answered NOSCRIPT are run again once it is loaded.
            let mut replies = self.store.eval_each("apply", script, pipe).await?.into_iter();
            changes
                .iter()
                .map(|_| match replies.next() {
                    Some(Value::Int(1)) => Ok(Applied::Recorded),
                    Some(Value::Int(0)) => Ok(Applied::Stale),
                    Some(Value::Int(2)) => Ok(Applied::Replayed),
                    Some(Value::Int(other)) => {
                        Err(StoreError::new(format!("unexpected answer {other} from the suppression script")))
                    }
                    _ => Err(StoreError::new("unexpected answer from the suppression script")),
                })
                .collect()
        })
    }

    fn check<'a>(
        &'a self,
        recipient: &'a PhoneNumber,
        scopes: &'a [Scope],
    ) -> BoxFuture<'a, Result<Option<SuppressionEntry>, StoreError>> {
        Box::pin(async move {
            bounded(0, scopes.len())?;
            if scopes.is_empty() {
                return Ok(None);
            }
            let keys = scopes.iter().map(Scope::key).collect::<Result<Vec<_>, _>>()?;
            let mut command = redis::cmd("HMGET");
            command.arg(self.hash(recipient.as_str())).arg(&keys);
            let values: Vec<Option<String>> =
                self.store.run("check", command.query_async(&mut self.store.connection.clone())).await?;
            let mut found: Option<SuppressionEntry> = None;
            for (scope, value) in keys.iter().zip(values) {
                let Some(value) = value else { continue };
                if let Some(entry) = entry(recipient.as_str(), scope, &value)?
                    && found.as_ref().is_none_or(|f| f.at < entry.at)
                {
                    found = Some(entry);
                }
            }
            Ok(found)
        })
    }

    fn list(&self, page: SuppressionPage) -> BoxFuture<'_, Result<SuppressionListing, StoreError>> {
        Box::pin(async move {
            let size = page.size();
            let after = page.after.as_ref().map(|c| (c.recipient.as_str(), c.scope.as_str()));
            let mut from = after.map_or_else(|| "-".to_owned(), |(recipient, _)| format!("[{recipient}"));
            let mut entries = Vec::new();
            for _ in 0..MAX_ROUNDS {
                let mut command = redis::cmd("ZRANGEBYLEX");
                command.arg(self.index()).arg(&from).arg("+").arg("LIMIT").arg(0).arg(size);
                let recipients: Vec<String> =
                    self.store.run("list", command.query_async(&mut self.store.connection.clone())).await?;
                for (recipient, fields) in recipients.iter().zip(self.hashes(&recipients).await?) {
                    let mut fields: Vec<_> = fields.into_iter().collect();
                    fields.sort_unstable();
                    for (scope, value) in fields {
                        if after.is_some_and(|cursor| (recipient.as_str(), scope.as_str()) <= cursor) {
                            continue;
                        }
                        if let Some(entry) = entry(recipient, &scope, &value)? {
                            entries.push(entry);
                            if entries.len() >= size {
                                return SuppressionListing::of(entries, size);
                            }
                        }
                    }
                }
                let Some(last) = recipients.last().filter(|_| recipients.len() >= size) else {
                    return Ok(SuppressionListing { entries, next: None });
                };
                from = format!("({last}");
            }
            // Out of rounds: go on after the last recipient read.
            let next = from
                .strip_prefix('(')
                .map(|recipient| Cursor { recipient: recipient.to_owned(), scope: AFTER_ALL_SCOPES.to_owned() });
            Ok(SuppressionListing { entries, next })
        })
    }
}
