//! The in-memory store: one process, lost on restart. For tests and single-process tools.
//!
//! It is also a [`DedupeStore`]: webhook dedupe keys live in a second map, apart from the
//! idempotency records, each key done or claimed (with its claim's token) until its retention or
//! lease runs out at the `now` of the call that asks.
//!
//! Records are kept in a map ordered by key (a listing page is a range of it). Expired records are
//! removed when their key is used, and all at once whenever the map has grown to twice its size
//! after the last sweep, so the map holds about as many records as are live.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use super::{
    Claim, Entry, Filter, FinalRecord, Finalized, IdempotencyStore, Listing, Operator, Page, Record, Reservation,
    ReservationId, Resolution, Resolved, StoreError, later, resolved_receipt,
};
use crate::PhoneNumber;
use crate::store::{ClaimToken, DedupeClaim, DedupeStore, ReferenceIndex};
use futures_util::future::BoxFuture;

/// What a webhook dedupe key holds: handled, or claimed by a handler still running.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Sighting {
    Done,
    Claimed(ClaimToken),
}

/// Each webhook dedupe key's sighting and when it runs out (never, when `None`).
#[derive(Debug, Default)]
struct Sightings {
    by_key: HashMap<String, (Sighting, Option<SystemTime>)>,
    sweep: Sweep,
}

impl Sightings {
    /// The live sighting of `key` at `now`.
    fn live(&self, key: &str, now: SystemTime) -> Option<&Sighting> {
        self.by_key.get(key).filter(|(_, until)| !is_expired(*until, now)).map(|(sighting, _)| sighting)
    }

    /// Writes `key`'s sighting, live for `kept` after `now` (a duration too long to add never
    /// runs out); sweeps the run-out ones once the map has doubled since the last sweep.
    fn write(&mut self, key: &str, sighting: Sighting, now: SystemTime, kept: Duration) {
        let by_key = &mut self.by_key;
        self.sweep.when_due(by_key.len(), now, |now| {
            by_key.retain(|_, (_, until)| !is_expired(*until, now));
            by_key.len()
        });
        by_key.insert(key.to_owned(), (sighting, now.checked_add(kept)));
    }
}

/// Each correlation reference's key and expiry.
#[derive(Debug, Default)]
struct References {
    by_reference: HashMap<String, (String, SystemTime)>,
    sweep: Sweep,
}

/// The fewest items a map holds before its expired ones are swept all at once.
const FIRST_SWEEP: usize = 1024;

/// When a map of expiring items sweeps its expired ones all at once: when it has grown to twice
/// the size the last sweep left (at least [`FIRST_SWEEP`]), so sweeping costs a constant per
/// item inserted. Readers still skip an expired item that is not swept yet.
#[derive(Debug)]
pub(crate) struct Sweep {
    /// The number of items at which the next sweep runs.
    at: usize,
}

impl Default for Sweep {
    fn default() -> Self {
        Self { at: FIRST_SWEEP }
    }
}

impl Sweep {
    /// Runs `sweep` when a map of `len` items is due: it removes the items expired at the time
    /// it is given and answers how many are left. That time is `now`, but never later than the
    /// system's clock: a caller's clock ahead of it never removes an item that is live now.
    pub(crate) fn when_due(&mut self, len: usize, now: SystemTime, sweep: impl FnOnce(SystemTime) -> usize) {
        if len >= self.at {
            let left = sweep(now.min(SystemTime::now()));
            self.at = left.saturating_mul(2).max(FIRST_SWEEP);
        }
    }
}

/// Each key's record and expiry.
#[derive(Debug, Default)]
struct Entries {
    records: BTreeMap<String, (Record, Option<SystemTime>)>,
    sweep: Sweep,
}

impl Entries {
    /// The live record of `key` at `now`, sweeping it when it expired.
    fn live(&mut self, key: &str, now: SystemTime) -> Option<&Record> {
        if self.records.get(key).is_some_and(|(_, expires_at)| is_expired(*expires_at, now)) {
            self.records.remove(key);
            return None;
        }
        self.records.get(key).map(|(record, _)| record)
    }

    /// Removes every record expired at `now` once the map has doubled since the last sweep.
    fn sweep(&mut self, now: SystemTime) {
        let records = &mut self.records;
        self.sweep.when_due(records.len(), now, |now| {
            records.retain(|_, (_, expires_at)| !is_expired(*expires_at, now));
            records.len()
        });
    }
}

/// Whether a record expiring at `expires_at` (never, when `None`) has expired at `now`.
fn is_expired(expires_at: Option<SystemTime>, now: SystemTime) -> bool {
    expires_at.is_some_and(|at| at <= now)
}

/// Idempotency records and webhook dedupe keys in this process's memory. Clones share both.
///
/// ```
/// use sms_sdk::store::MemoryStore;
///
/// let store = MemoryStore::new();
/// assert_eq!(store.len(), 0);
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    entries: Arc<Mutex<Entries>>,
    sightings: Arc<Mutex<Sightings>>,
    references: Arc<Mutex<References>>,
}

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Removes `key`'s record (after reconciling it); true when there was one.
    #[allow(clippy::must_use_candidate)] // it removes the record: a caller may ignore the answer
    pub fn delete(&self, key: &str) -> bool {
        self.lock().records.remove(key).is_some()
    }

    /// Idempotency records held, counting expired ones not yet swept (dedupe keys not counted).
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().records.len()
    }

    /// True when no idempotency record is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_references(&self) -> MutexGuard<'_, References> {
        self.references.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_sightings(&self) -> MutexGuard<'_, Sightings> {
        self.sightings.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl IdempotencyStore for MemoryStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        Box::pin(async move { Ok(self.lock().live(key, SystemTime::now()).cloned()) })
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        claim: Claim<'a>,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        Box::pin(async move {
            let mut entries = self.lock();
            let fingerprint = claim.fingerprint;
            // A new reservation (its id is made only when the key is claimed, not for a replay).
            let reserve = || {
                let id = ReservationId::new();
                let record = Record::Reserved {
                    fingerprint: fingerprint.clone(),
                    reservation_id: id.clone(),
                    reserved_at: now,
                    to: claim.to.and_then(|to| PhoneNumber::parse(to).ok()),
                };
                (id, record)
            };
            // The key is claimed where it is found, or inserted where it is missing.
            let reservation_id = if let Some((held, expires_at)) = entries.records.get_mut(key) {
                let claimable = match held {
                    _ if is_expired(*expires_at, now) => true,
                    Record::Rejected { fingerprint: rejected, .. } => rejected == fingerprint,
                    Record::Reserved { .. } | Record::Accepted { .. } | Record::Unknown { .. } => false,
                };
                if !claimable {
                    return Ok(Reservation::Existing(Box::new(held.clone())));
                }
                let (id, record) = reserve();
                (*held, *expires_at) = (record, None);
                id
            } else {
                let (id, record) = reserve();
                entries.sweep(now);
                entries.records.insert(key.to_owned(), (record, None));
                id
            };
            Ok(Reservation::Acquired(reservation_id))
        })
    }

    fn finalize<'a>(
        &'a self,
        key: &'a str,
        reservation: &'a ReservationId,
        record: FinalRecord,
        ttl: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Finalized, StoreError>> {
        Box::pin(async move {
            let mut entries = self.lock();
            // The record is replaced where it is: one lookup, and the key is not copied again.
            let Some((held, expires_at)) = entries.records.get_mut(key) else { return Ok(Finalized::NotOwner) };
            let Record::Reserved { reservation_id, .. } = held else { return Ok(Finalized::NotOwner) };
            if reservation_id != reservation {
                return Ok(Finalized::NotOwner);
            }
            *expires_at = record.expires_at(ttl, now);
            *held = record.into_record(held);
            Ok(Finalized::Written)
        })
    }

    fn references(&self) -> Option<&dyn ReferenceIndex> {
        Some(self)
    }
}

impl ReferenceIndex for MemoryStore {
    fn remember_reference<'a>(
        &'a self,
        reference: &'a str,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut references = self.lock_references();
            let References { by_reference, sweep } = &mut *references;
            // Sweep expired references now and then, so the map stays as large as the live ones.
            sweep.when_due(by_reference.len(), now, |now| {
                by_reference.retain(|_, (_, expires_at)| *expires_at > now);
                by_reference.len()
            });
            by_reference.insert(reference.to_owned(), (key.to_owned(), later(now, retention)));
            Ok(())
        })
    }

    fn find_reference<'a>(
        &'a self,
        reference: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            let references = self.lock_references();
            Ok(references
                .by_reference
                .get(reference)
                .filter(|(_, expires_at)| *expires_at > now)
                .map(|(key, _)| key.clone()))
        })
    }
}

impl DedupeStore for MemoryStore {
    fn first_seen_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut sightings = self.lock_sightings();
            if sightings.live(key, now).is_some() {
                return Ok(false);
            }
            sightings.write(key, Sighting::Done, now, retention);
            Ok(true)
        })
    }

    fn claim_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        lease: Duration,
    ) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
        Box::pin(async move {
            let mut sightings = self.lock_sightings();
            match sightings.live(key, now) {
                Some(Sighting::Done) => return Ok(DedupeClaim::Done),
                Some(Sighting::Claimed(_)) => return Ok(DedupeClaim::InFlight),
                None => {}
            }
            let token = ClaimToken::new();
            sightings.write(key, Sighting::Claimed(token.clone()), now, lease);
            Ok(DedupeClaim::Claimed(token))
        })
    }

    fn commit_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.lock_sightings().write(key, Sighting::Done, now, retention);
            Ok(())
        })
    }

    fn release<'a>(&'a self, key: &'a str, token: &'a ClaimToken) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut sightings = self.lock_sightings();
            let held = matches!(sightings.by_key.get(key), Some((Sighting::Claimed(holder), _)) if holder == token);
            if held {
                sightings.by_key.remove(key);
            }
            Ok(held)
        })
    }
}

impl Operator for MemoryStore {
    fn list(&self, filter: Filter, now: SystemTime, page: Page) -> BoxFuture<'_, Result<Listing, StoreError>> {
        Box::pin(async move {
            let entries = self.lock();
            let limit = page.limit.max(1);
            let start = match page.cursor {
                Some(cursor) if cursor >= page.prefix => Bound::Excluded(cursor),
                Some(_) | None => Bound::Included(page.prefix.clone()),
            };
            let listed: Vec<Entry> = entries
                .records
                .range((start, Bound::Unbounded))
                .take_while(|(key, _)| key.starts_with(&page.prefix))
                .filter(|(_, (record, expires_at))| !is_expired(*expires_at, now) && filter.matches(record, now))
                .take(limit)
                .map(|(key, (record, expires_at))| Entry {
                    key: key.clone(),
                    record: record.clone(),
                    expires_at: *expires_at,
                })
                .collect();
            let next = if listed.len() == limit { listed.last().map(|e| e.key.clone()) } else { None };
            Ok(Listing { entries: listed, next })
        })
    }

    fn resolve<'a>(
        &'a self,
        key: &'a str,
        resolution: Resolution,
        stale_after: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Resolved, StoreError>> {
        Box::pin(async move {
            let mut entries = self.lock();
            let Some(record) = entries.live(key, now) else { return Ok(Resolved::NotFound) };
            if !record.is_unresolved(stale_after, now) {
                return Ok(Resolved::Refused(Box::new(record.clone())));
            }
            let (fingerprint, to, reserved_at) =
                (record.fingerprint().clone(), record.to().cloned(), record.reserved_at());
            match resolution {
                Resolution::NotSent => {
                    entries.records.remove(key);
                }
                Resolution::Sent { provider, provider_id, ttl, endpoint } => {
                    let result = resolved_receipt(provider, provider_id);
                    let accepted = Record::Accepted { fingerprint, result, endpoint, to, reserved_at };
                    entries.records.insert(key.to_owned(), (accepted, Some(later(now, ttl))));
                }
            }
            Ok(Resolved::Done)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Fingerprint, State};

    #[test]
    fn filter_matches_states_and_unresolved_records() {
        let now = SystemTime::now();
        let reserved = |age: u64| Record::Reserved {
            fingerprint: Fingerprint::from_canonical("f"),
            reservation_id: ReservationId::new(),
            reserved_at: now - Duration::from_secs(age),
            to: None,
        };
        let stale = Filter::Unresolved { stale_after: Duration::from_mins(5) };
        assert!(stale.matches(&reserved(301), now));
        assert!(!stale.matches(&reserved(300), now));
        assert!(Filter::State(State::Reserved).matches(&reserved(0), now));
        assert!(Filter::All.matches(&reserved(0), now));
    }

    #[tokio::test]
    async fn dedupe_keys_are_first_once_per_retention() {
        let store = MemoryStore::new();
        let (now, retention) = (SystemTime::now(), Duration::from_secs(10));
        assert!(store.first_seen_at("evt", now, retention).await.unwrap());
        assert!(!store.first_seen_at("evt", now + Duration::from_millis(9_999), retention).await.unwrap());
        assert!(store.first_seen_at("evt", now + retention, retention).await.unwrap());
        assert!(!store.first_seen_at("evt", now + retention, retention).await.unwrap());
        assert!(!store.clone().first_seen_at("evt", now + retention, Duration::MAX).await.unwrap());
        assert!(store.first_seen_at("other", now, retention).await.unwrap());
        assert!(store.is_empty(), "dedupe keys are not idempotency records");
    }

    async fn acquire(store: &MemoryStore, key: &str, now: SystemTime) -> ReservationId {
        match store.reserve(key, crate::store::Claim::new(&Fingerprint::from_canonical("f")), now).await.unwrap() {
            Reservation::Acquired(id) => id,
            Reservation::Existing(record) => panic!("{key} is held: {record:?}"),
        }
    }

    #[tokio::test]
    async fn expired_records_are_swept_when_the_map_doubles() {
        let store = MemoryStore::new();
        let hour_ago = SystemTime::now() - Duration::from_hours(1);
        let accepted = || FinalRecord::Accepted(resolved_receipt("p".into(), "SM1".into()));
        for i in 0..FIRST_SWEEP - 2 {
            let key = format!("old-{i}");
            let id = acquire(&store, &key, hour_ago).await;
            store.finalize(&key, &id, accepted(), Duration::from_mins(1), hour_ago).await.unwrap();
        }
        let id = acquire(&store, "unknown", hour_ago).await;
        let unknown = FinalRecord::Unknown(crate::Error::policy_rejected(None).to_record());
        store.finalize("unknown", &id, unknown, Duration::from_mins(1), hour_ago).await.unwrap();
        let id = acquire(&store, "live", hour_ago).await;
        store.finalize("live", &id, accepted(), Duration::from_hours(2), hour_ago).await.unwrap();
        assert_eq!(store.len(), FIRST_SWEEP, "nothing is swept below the first threshold");
        acquire(&store, "new", SystemTime::now()).await;
        let mut left: Vec<String> = store
            .list(Filter::All, hour_ago, Page::default())
            .await
            .unwrap()
            .entries
            .into_iter()
            .map(|e| e.key)
            .collect();
        left.sort();
        assert_eq!(left, ["live", "new", "unknown"], "only expired records are swept");
        assert_eq!(store.len(), 3);
    }

    #[tokio::test]
    async fn expired_references_are_swept_when_the_map_doubles() {
        let store = MemoryStore::new();
        let hour_ago = SystemTime::now() - Duration::from_hours(1);
        let minute = Duration::from_mins(1);
        for i in 0..FIRST_SWEEP - 1 {
            store.remember_reference(&format!("old-{i}"), "k", hour_ago, minute).await.unwrap();
        }
        store.remember_reference("live", "k-live", hour_ago, Duration::from_hours(2)).await.unwrap();
        assert_eq!(store.lock_references().by_reference.len(), FIRST_SWEEP, "nothing is swept below the threshold");
        store.remember_reference("new", "k-new", SystemTime::now(), minute).await.unwrap();
        assert_eq!(store.lock_references().by_reference.len(), 2, "only expired references are swept");
        assert_eq!(store.find_reference("old-0", hour_ago).await.unwrap(), None, "swept");
        assert_eq!(store.find_reference("live", SystemTime::now()).await.unwrap().as_deref(), Some("k-live"));
        assert_eq!(store.find_reference("new", SystemTime::now()).await.unwrap().as_deref(), Some("k-new"));
        // Expired but not swept yet: still not found.
        let soon = SystemTime::now() + Duration::from_mins(2);
        assert_eq!(store.find_reference("new", soon).await.unwrap(), None);
        assert_eq!(store.lock_references().by_reference.len(), 2);
    }

    #[tokio::test]
    async fn forgotten_dedupe_keys_are_swept_when_the_map_doubles() {
        let store = MemoryStore::new();
        let hour_ago = SystemTime::now() - Duration::from_hours(1);
        let minute = Duration::from_mins(1);
        for i in 0..FIRST_SWEEP - 1 {
            assert!(store.first_seen_at(&format!("old-{i}"), hour_ago, minute).await.unwrap());
        }
        let held = store.claim_at("held", hour_ago, Duration::from_hours(2)).await.unwrap();
        assert!(matches!(held, DedupeClaim::Claimed(_)), "{held:?}");
        assert_eq!(store.lock_sightings().by_key.len(), FIRST_SWEEP, "nothing is swept below the threshold");
        assert!(store.first_seen_at("new", SystemTime::now(), minute).await.unwrap());
        assert_eq!(store.lock_sightings().by_key.len(), 2, "only forgotten keys are swept");
        assert_eq!(store.claim("held").await.unwrap(), DedupeClaim::InFlight, "a live claim is kept");
        assert!(!store.first_seen_at("new", SystemTime::now(), minute).await.unwrap(), "a remembered key is not new");
        assert!(store.first_seen_at("old-0", SystemTime::now(), minute).await.unwrap(), "a forgotten key is new again");
    }

    #[test]
    fn a_sweep_runs_when_the_map_has_doubled_and_never_ahead_of_the_clock() {
        let mut sweep = Sweep::default();
        let mut runs = Vec::new();
        let later = SystemTime::now() + Duration::from_hours(1);
        sweep.when_due(FIRST_SWEEP - 1, later, |_| unreachable!("not due below the first threshold"));
        sweep.when_due(FIRST_SWEEP, later, |now| {
            runs.push(now);
            FIRST_SWEEP - 24
        });
        assert!(runs.len() == 1 && runs[0] <= SystemTime::now(), "a caller's later clock is capped: {runs:?}");
        sweep.when_due(FIRST_SWEEP + 1, later, |_| unreachable!("swept at 1000: due again at 2000"));
        sweep.when_due(2 * (FIRST_SWEEP - 24), later, |_| 0);
        sweep.when_due(FIRST_SWEEP - 1, later, |_| unreachable!("never due below the first threshold"));
    }

    #[tokio::test]
    async fn pages_list_keys_in_order() {
        let store = MemoryStore::new();
        let now = SystemTime::now();
        for i in (0..50).rev() {
            acquire(&store, &format!("a:{i:02}"), now).await;
            acquire(&store, &format!("b:{i:02}"), now).await;
        }
        for (cursor, expected) in [(None, 0), (Some("0".to_owned()), 0), (Some("a:09".to_owned()), 10)] {
            let mut page = Page { prefix: "a:".into(), cursor, limit: 7 };
            let mut keys = Vec::new();
            loop {
                let listing = store.list(Filter::All, now, page.clone()).await.unwrap();
                assert!(listing.entries.len() <= 7);
                keys.extend(listing.entries.into_iter().map(|e| e.key));
                match listing.next {
                    Some(next) => page.cursor = Some(next),
                    None => break,
                }
            }
            let wanted: Vec<String> = (expected..50).map(|i| format!("a:{i:02}")).collect();
            assert_eq!(keys, wanted);
        }
    }
}
