//! A measurement, not a timed test (ignored by default): keyed reserve + finalize pairs and
//! keyed sends through a `SqliteStore`, 8 in flight, on a file on the disk the build uses
//! (`target/tmp`: not a tmpfs, so every commit waits for a real `fsync`).
//!
//! `cargo test -p sms-sdk --all-features --test it stores::throughput -- --ignored --nocapture`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use sms_sdk::store::sqlite::SqliteStore;
use sms_sdk::store::{Claim, FinalRecord, Finalized, Fingerprint, IdempotencyStore, Reservation};
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::testing::store_contract::sample_receipt;
use sms_sdk::{Client, Message};

const IN_FLIGHT: usize = 8;
const FOR: Duration = Duration::from_secs(3);

/// Runs `op` (given a sequence number) from `IN_FLIGHT` tasks for `FOR`: operations per second.
async fn rate<F, Fut>(op: F) -> f64
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let (op, next, started) = (Arc::new(op), Arc::new(AtomicUsize::new(0)), Instant::now());
    let tasks: Vec<_> = (0..IN_FLIGHT)
        .map(|_| {
            let (op, next) = (Arc::clone(&op), Arc::clone(&next));
            tokio::spawn(async move {
                while started.elapsed() < FOR {
                    op(next.fetch_add(1, Ordering::Relaxed)).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    #[allow(clippy::cast_precision_loss)] // a count of operations
    let done = next.load(Ordering::Relaxed) as f64;
    done / started.elapsed().as_secs_f64()
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "a measurement of the SQLite store on the disk: run it with --ignored --nocapture"]
async fn sqlite_pairs_and_sends_on_disk() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("throughput-{}", super::uuid_suffix()));
    let store = Arc::new(SqliteStore::open(path.join("state.db")).await.unwrap());
    let (fingerprint, run) = (Arc::new(Fingerprint::from_canonical("throughput")), super::uuid_suffix());
    let pairs = {
        let (store, fingerprint, run) = (Arc::clone(&store), Arc::clone(&fingerprint), run.clone());
        rate(move |n| {
            let (store, fingerprint, key) = (Arc::clone(&store), Arc::clone(&fingerprint), format!("pair:{run}:{n}"));
            async move {
                let Ok(Reservation::Acquired(id)) =
                    store.reserve(&key, Claim::new(&fingerprint), SystemTime::now()).await
                else {
                    panic!("the key {key} was not new")
                };
                let record = FinalRecord::Accepted(sample_receipt("SM1"));
                let written = store.finalize(&key, &id, record, Duration::from_hours(1), SystemTime::now()).await;
                assert_eq!(written.unwrap(), Finalized::Written);
            }
        })
        .await
    };
    let sends = |client: Client, run: String| {
        rate(move |n| {
            let client = client.clone();
            let message = Message::new(crate::TO, "x").idempotency_key(format!("send:{run}:{n}"));
            async move {
                client.send(&message).await.unwrap();
            }
        })
    };
    let stored = Client::builder().adapter(MemoryAdapter::new()).idempotency(Arc::clone(&store)).build().unwrap();
    let with_store = sends(stored, run.clone()).await;
    let without = sends(Client::builder().adapter(MemoryAdapter::new()).build().unwrap(), run).await;
    println!(
        "SQLite at {}, {IN_FLIGHT} in flight: {pairs:.0} reserve+finalize pairs/s; keyed sends {with_store:.0}/s with \
         the store, {without:.0}/s without ({:.2}x)",
        path.display(),
        with_store / without
    );
    let _ = std::fs::remove_dir_all(path);
}
