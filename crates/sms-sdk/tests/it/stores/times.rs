//! Any duration and any clock reading (before 1970, after 9999, `Duration::MAX`) goes through
//! every store operation without a panic or an overflow, and what a store writes reads back.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use sms_sdk::store::{
    DedupeClaim, Filter, FinalRecord, Fingerprint, MemoryStore, Page, Reservation, Resolution, Store, StoreError,
};
use sms_sdk::testing::store_contract::{sample_error, sample_receipt};

use super::uuid_suffix;

fn any_duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        (0u64..100_000_000_000, 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

/// A time `seconds` from the epoch (before it when negative), as far as `SystemTime` reaches.
fn time(seconds: i64, nanos: u32) -> SystemTime {
    let offset = Duration::new(seconds.unsigned_abs(), nanos);
    let at = if seconds < 0 { UNIX_EPOCH.checked_sub(offset) } else { UNIX_EPOCH.checked_add(offset) };
    at.unwrap_or(UNIX_EPOCH)
}

fn any_time() -> impl Strategy<Value = SystemTime> {
    prop_oneof![
        Just(UNIX_EPOCH),
        (-10_000_000_000i64..400_000_000_000, 0u32..1_000_000_000).prop_map(|(s, n)| time(s, n)),
        (any::<i64>(), 0u32..1_000_000_000).prop_map(|(s, n)| time(s, n)),
    ]
}

/// Times and durations for one run of every operation.
#[derive(Debug, Clone)]
struct Clocks {
    times: [SystemTime; 6],
    ttl: Duration,
    stale_after: Duration,
    retention: Duration,
}

fn any_clocks() -> impl Strategy<Value = Clocks> {
    (proptest::array::uniform6(any_time()), any_duration(), any_duration(), any_duration())
        .prop_map(|(times, ttl, stale_after, retention)| Clocks { times, ttl, stale_after, retention })
}

/// Every operation on a fresh key at the given clocks: each one answers, none fails.
async fn every_operation(store: &dyn Store, clocks: Clocks) -> Result<(), StoreError> {
    let Clocks { times: [reserved, finalized, again, resolved, seen, listed], ttl, stale_after, retention } = clocks;
    let key = format!("times:{}", uuid_suffix());
    let fingerprint = Fingerprint::from_canonical(&key);
    let Reservation::Acquired(id) = store.reserve(&key, sms_sdk::store::Claim::new(&fingerprint), reserved).await?
    else {
        panic!("a new key was not claimed")
    };
    let record = if ttl.as_secs() % 2 == 0 {
        FinalRecord::Accepted(sample_receipt("p"))
    } else {
        FinalRecord::Rejected(sample_error("provider_rejected"))
    };
    store.finalize(&key, &id, record, ttl, finalized).await?;
    store.reserve(&key, sms_sdk::store::Claim::new(&fingerprint), again).await?;
    store.get(&key).await?;
    let sent = Resolution::Sent { provider: "memory".into(), provider_id: "p".into(), ttl, endpoint: None };
    store.resolve(&key, sent, stale_after, resolved).await?;
    store.resolve(&key, Resolution::NotSent, stale_after, resolved).await?;
    store.first_seen_at(&key, seen, retention).await?;
    store.first_seen_at(&key, seen, retention).await?;
    let claimed = format!("{key}:claimed");
    if let DedupeClaim::Claimed(token) = store.claim_at(&claimed, seen, retention).await? {
        store.release(&claimed, &token).await?;
    }
    store.claim_at(&claimed, listed, ttl).await?;
    store.commit_at(&claimed, resolved, retention).await?;
    store.claim_at(&claimed, seen, stale_after).await?;
    let page = Page::prefixed(key.clone());
    store.list(Filter::Unresolved { stale_after }, listed, page.clone()).await?;
    store.list(Filter::All, listed, page).await?;
    Ok(())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

proptest! {
    #[test]
    fn any_clock_through_the_memory_store(clocks in any_clocks()) {
        let store = MemoryStore::new();
        runtime().block_on(every_operation(&store, clocks)).unwrap();
    }
}

#[cfg(feature = "sqlite")]
#[test]
fn any_clock_through_the_sqlite_store() {
    use std::sync::Arc;

    use sms_sdk::store::sqlite::SqliteStore;

    let runtime = runtime();
    let store: Arc<dyn Store> = Arc::new(runtime.block_on(SqliteStore::open(super::temp_db())).unwrap());
    let config = ProptestConfig { cases: 64, ..ProptestConfig::default() };
    proptest!(config, |(clocks in any_clocks())| {
        runtime.block_on(every_operation(&*store, clocks)).unwrap();
    });
}
