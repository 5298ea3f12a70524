//! The in-memory suppression list: one process, gone when it exits (tests, examples).

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use super::{
    Action, Applied, Change, EVENT_RETENTION, Scope, StoreError, SuppressionEntry, SuppressionListing, SuppressionPage,
    SuppressionStore, bounded, supersedes,
};
use crate::PhoneNumber;
use crate::store::later;
use crate::store::memory::Sweep;
use futures_util::future::BoxFuture;

/// What is recorded for one recipient in one scope.
#[derive(Debug, Clone)]
struct Recorded {
    action: Action,
    at: SystemTime,
    reason: String,
    event: Option<String>,
}

#[derive(Debug, Default)]
struct Lists {
    /// By (recipient, scope key): ordered as listings are.
    entries: BTreeMap<(String, String), Recorded>,
    /// Event dedupe keys and when they are forgotten.
    events: HashMap<String, SystemTime>,
    /// When forgotten event keys are swept.
    sweep: Sweep,
}

/// A suppression list in this process's memory. Cheap to clone (clones share the list).
#[derive(Debug, Clone, Default)]
pub struct MemorySuppressionStore {
    lists: Arc<Mutex<Lists>>,
}

impl MemorySuppressionStore {
    /// An empty list.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

impl Lists {
    fn apply(&mut self, change: &Change, now: SystemTime) -> Result<Applied, StoreError> {
        let key = (change.recipient().as_str().to_owned(), change.scope().key()?);
        if let Some(event) = change.event_key() {
            if self.events.get(event).is_some_and(|forget_at| *forget_at > now) {
                return Ok(Applied::Replayed);
            }
            self.events.insert(event.to_owned(), later(now, EVENT_RETENTION));
        }
        let newer =
            self.entries.get(&key).is_none_or(|old| supersedes((change.at(), change.action()), (old.at, old.action)));
        if !newer {
            return Ok(Applied::Stale);
        }
        let recorded = Recorded {
            action: change.action(),
            at: change.at(),
            reason: change.reason().to_owned(),
            event: change.event_key().map(str::to_owned),
        };
        self.entries.insert(key, recorded);
        Ok(Applied::Recorded)
    }
}

fn entry((recipient, scope): &(String, String), recorded: &Recorded) -> Result<SuppressionEntry, StoreError> {
    let at = crate::store::idempotency::millis(recorded.at);
    SuppressionEntry::read(recipient, scope, at, recorded.reason.clone(), recorded.event.clone())
}

impl SuppressionStore for MemorySuppressionStore {
    fn apply<'a>(&'a self, changes: &'a [Change], now: SystemTime) -> BoxFuture<'a, Result<Vec<Applied>, StoreError>> {
        Box::pin(async move {
            bounded(changes.len(), 0)?;
            // A malformed scope refuses the whole batch before anything is written, as the
            // durable stores do.
            for change in changes {
                change.scope().key()?;
            }
            let mut lists = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
            let Lists { events, sweep, .. } = &mut *lists;
            sweep.when_due(events.len(), now, |now| {
                events.retain(|_, forget_at| *forget_at > now);
                events.len()
            });
            changes.iter().map(|change| lists.apply(change, now)).collect()
        })
    }

    fn check<'a>(
        &'a self,
        recipient: &'a PhoneNumber,
        scopes: &'a [Scope],
    ) -> BoxFuture<'a, Result<Option<SuppressionEntry>, StoreError>> {
        Box::pin(async move {
            bounded(0, scopes.len())?;
            let keys = scopes.iter().map(Scope::key).collect::<Result<Vec<_>, _>>()?;
            let lists = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
            let mut found: Option<SuppressionEntry> = None;
            for scope in keys {
                let key = (recipient.as_str().to_owned(), scope);
                if let Some(recorded) = lists.entries.get(&key).filter(|r| r.action.suppresses())
                    && found.as_ref().is_none_or(|f| f.at < recorded.at)
                {
                    found = Some(entry(&key, recorded)?);
                }
            }
            Ok(found)
        })
    }

    fn list(&self, page: SuppressionPage) -> BoxFuture<'_, Result<SuppressionListing, StoreError>> {
        Box::pin(async move {
            let size = page.size();
            let start = match &page.after {
                Some(cursor) => Bound::Excluded((cursor.recipient.clone(), cursor.scope.clone())),
                None => Bound::Unbounded,
            };
            let lists = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
            let entries = lists
                .entries
                .range((start, Bound::Unbounded))
                .filter(|(_, recorded)| recorded.action.suppresses())
                .take(size)
                .map(|(key, recorded)| entry(key, recorded))
                .collect::<Result<Vec<_>, _>>()?;
            SuppressionListing::of(entries, size)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn forgotten_event_keys_are_swept_when_the_map_doubles() {
        let list = MemorySuppressionStore::new();
        let long_ago = SystemTime::now() - EVENT_RETENTION - Duration::from_mins(1);
        let to = PhoneNumber::parse("+14155550100").unwrap();
        let change = |event: &str, at| Change::opt_out(to.clone(), Scope::Account, at, "keyword:STOP").event(event);
        let old: Vec<Change> = (0..1024).map(|i| change(&format!("old-{i}"), long_ago)).collect();
        list.apply(&old, long_ago).await.unwrap();
        let events = || list.lists.lock().unwrap().events.len();
        assert_eq!(events(), 1024, "not swept on every apply");
        let now = SystemTime::now();
        assert_eq!(list.apply(&[change("new", now)], now).await.unwrap(), [Applied::Recorded]);
        assert_eq!(events(), 1, "the forgotten keys are swept once the map is due");
        // A forgotten key is new again, swept or not.
        assert_eq!(list.apply(&[change("old-0", now)], now).await.unwrap(), [Applied::Stale]);
        assert_eq!(list.apply(&[change("new", now)], now).await.unwrap(), [Applied::Replayed]);
    }
}
