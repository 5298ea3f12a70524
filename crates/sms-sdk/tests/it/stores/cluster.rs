//! The Redis store on a Redis Cluster of the test's own (`redis-server --cluster-enabled yes`,
//! slots assigned by `redis-cli --cluster create`): the contract suites, listings over every
//! master, a command re-sent after its reply was lost, and a master that dies.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use sms_sdk::rate::redis::RedisRateLimiter;
use sms_sdk::store::redis::RedisStore;
use sms_sdk::store::{
    Claim, Filter, FinalRecord, Finalized, Fingerprint, IdempotencyStore as _, Operator as _, Page, Record, Reservation,
};
use sms_sdk::testing::{MemoryAdapter, accepted_outcome};
use sms_sdk::{Client, Message};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::servers::RedisCluster;
use super::uuid_suffix;

async fn connect(url: &str) -> RedisStore {
    RedisStore::builder(url).prefix(format!("cluster:{}:", uuid_suffix())).connect().await.unwrap()
}

/// A receipt to store, from a send without a store.
async fn receipt(provider_id: &str) -> sms_sdk::Receipt {
    let memory = MemoryAdapter::builder().outcomes(vec![accepted_outcome(provider_id)]).build();
    let client = Client::builder().adapter(memory).build().unwrap();
    client.send(&Message::new(crate::TO, "x")).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_contracts_pass_on_three_masters() {
    let cluster = RedisCluster::start(3);
    let store = connect(&cluster.url).await;
    assert!(format!("{store:?}").contains("Redis Cluster at 127.0.0.1:"), "{store:?}");
    super::assert_redis_contracts("redis cluster", store).await;
    crate::rate::shared::admits_and_denies_at_given_times(&cluster.url).await;
    // Through `store::open`, as the command opens it.
    sms_sdk::store::open(&cluster.url).await.unwrap();

    // A plain `redis://` URL naming one node: refused when it connects (its keys would go to that
    // node alone), saying what URL to write instead; the rate limiter likewise.
    let plain = format!("redis://127.0.0.1:{}/0", cluster.nodes[0].port);
    let refused = RedisStore::builder(&plain).connect().await.unwrap_err();
    let hint = "(this server is a node of a Redis Cluster: use a redis-cluster:// URL)";
    assert!(refused.to_string().ends_with(hint), "{refused}");
    assert!(!refused.is_timeout(), "{refused}");
    let limiter = RedisRateLimiter::builder(&plain).connect().await.unwrap_err();
    assert!(limiter.to_string().ends_with(hint), "{limiter}");
}

/// Keys on every master, `{…}` in them included, are all listed once over small pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_listing_walks_every_master() {
    let cluster = RedisCluster::start(3);
    let prefix = format!("list:{}:", uuid_suffix());
    let store = RedisStore::builder(&cluster.url).prefix(prefix.clone()).connect().await.unwrap();
    let fingerprint = Fingerprint::from_canonical("list");
    let now = SystemTime::now();
    let keys: BTreeSet<String> = (0..60).map(|i| format!("order:{i}:{{tenant-{}}}", i % 7)).collect();
    for key in &keys {
        assert!(matches!(store.reserve(key, Claim::new(&fingerprint), now).await.unwrap(), Reservation::Acquired(_)));
    }
    let masters: BTreeSet<u16> =
        keys.iter().map(|key| cluster.node_of(&format!("{prefix}idempotency:{key}")).port).collect();
    assert!(masters.len() > 1, "the keys are spread over masters");
    let (mut listed, mut cursor, mut pages) = (Vec::new(), None, 0);
    loop {
        let mut page = Page::prefixed("");
        (page.cursor, page.limit) = (cursor.take(), 7);
        let listing = store.list(Filter::All, now, page).await.unwrap();
        listed.extend(listing.entries.into_iter().map(|entry| entry.key));
        pages += 1;
        assert!(pages < 200, "the listing ends");
        match listing.next {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(listed.len(), keys.len(), "each key once: {listed:?}");
    assert_eq!(listed.into_iter().collect::<BTreeSet<_>>(), keys);
    let mut garbage = Page::prefixed("");
    garbage.cursor = Some("no-slash".into());
    assert!(store.list(Filter::All, now, garbage).await.is_err());
}

/// A proxy in front of one server that, when armed, lets the next `EVALSHA` run on the server
/// and then drops its reply with the connection, as a network failure would.
struct DroppingProxy {
    armed: Arc<AtomicBool>,
    dropped: Arc<Mutex<usize>>,
    task: tokio::task::JoinHandle<()>,
}

impl DroppingProxy {
    fn start(listener: TcpListener, upstream: u16) -> Self {
        let armed = Arc::new(AtomicBool::new(false));
        let dropped = Arc::new(Mutex::new(0));
        let (arm, count) = (Arc::clone(&armed), Arc::clone(&dropped));
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else { continue };
                tokio::spawn(relay(client, server, Arc::clone(&arm), Arc::clone(&count)));
            }
        });
        Self { armed, dropped, task }
    }

    fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    fn dropped(&self) -> usize {
        *self.dropped.lock().unwrap()
    }
}

impl Drop for DroppingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(mut client: TcpStream, mut server: TcpStream, armed: Arc<AtomicBool>, dropped: Arc<Mutex<usize>>) {
    let (mut to_client, mut to_server) = ([0u8; 16384], [0u8; 16384]);
    let mut doomed = false;
    loop {
        tokio::select! {
            read = client.read(&mut to_server) => {
                let Ok(n @ 1..) = read else { return };
                let chunk = &to_server[..n];
                if chunk.windows(7).any(|w| w == b"EVALSHA") && armed.swap(false, Ordering::SeqCst) {
                    doomed = true;
                }
                if server.write_all(chunk).await.is_err() { return }
            }
            read = server.read(&mut to_client) => {
                let Ok(n @ 1..) = read else { return };
                if doomed {
                    // The command ran; its reply is lost with the connection.
                    *dropped.lock().unwrap() += 1;
                    return;
                }
                if client.write_all(&to_client[..n]).await.is_err() { return }
            }
        }
    }
}

/// The cluster client re-sends a command whose connection dropped before the reply: `reserve`
/// must then find its own reservation (acquired, not held by another), `finalize` its own record
/// (written, not lost), and a send makes one request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_resent_reserve_and_finalize_after_a_dropped_reply() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let announced = listener.local_addr().unwrap().port();
    let cluster = RedisCluster::start_behind(announced);
    let proxy = DroppingProxy::start(listener, cluster.nodes[0].port);
    let store = connect(&cluster.url).await;
    let (fingerprint, now) = (Fingerprint::from_canonical("resent"), SystemTime::now());

    proxy.arm();
    let reservation = match store.reserve("k1", Claim::new(&fingerprint), now).await.unwrap() {
        Reservation::Acquired(id) => id,
        Reservation::Existing(record) => panic!("the re-sent reserve saw {record:?}"),
    };
    assert_eq!(proxy.dropped(), 1, "a reply was dropped");
    assert!(matches!(store.get("k1").await.unwrap(), Some(Record::Reserved { .. })));

    proxy.arm();
    let record = FinalRecord::Accepted(receipt("SM1").await);
    let written = store.finalize("k1", &reservation, record, Duration::from_hours(1), now).await.unwrap();
    assert_eq!(written, Finalized::Written);
    assert_eq!(proxy.dropped(), 2, "a reply was dropped");
    assert!(matches!(store.get("k1").await.unwrap(), Some(Record::Accepted { .. })));
    // Another reservation id is still refused.
    let other = match store.reserve("k2", Claim::new(&fingerprint), now).await.unwrap() {
        Reservation::Acquired(id) => id,
        Reservation::Existing(_) => unreachable!(),
    };
    let record = FinalRecord::Accepted(receipt("SM2").await);
    assert_eq!(store.finalize("k1", &other, record, Duration::from_mins(1), now).await.unwrap(), Finalized::NotOwner);

    // A whole send, both of its store calls losing their replies: one request, accepted.
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).idempotency(store).build().unwrap();
    proxy.arm();
    let message = Message::new(crate::TO, "x").idempotency_key("send-1");
    let receipt = client.send(&message).await.unwrap();
    assert!(!receipt.replayed);
    let again = client.send(&message).await.unwrap();
    assert!(again.replayed);
    assert_eq!(memory.sent().len(), 1);
}

/// A master killed: a call on its slots ends with a store error within the operation timeout
/// (the cluster client's reconnects and retries included), never a long wait; the other
/// masters' keys still work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_dead_master_is_a_bounded_store_error() {
    let cluster = RedisCluster::start(3);
    let prefix = format!("dead:{}:", uuid_suffix());
    let store = RedisStore::builder(&cluster.url)
        .prefix(prefix.clone())
        .operation_timeout(Duration::from_secs(2))
        .connect()
        .await
        .unwrap();
    let slot_key = |key: &str| format!("{prefix}idempotency:{key}");
    let dead = cluster.node_of(&slot_key("a")).port;
    let alive = (0..100).map(|i| format!("b{i}")).find(|k| cluster.node_of(&slot_key(k)).port != dead).unwrap();
    cluster.nodes.iter().find(|n| n.port == dead).unwrap().kill();
    let (fingerprint, now) = (Fingerprint::from_canonical("dead"), SystemTime::now());
    let started = Instant::now();
    let error = store.reserve("a", Claim::new(&fingerprint), now).await.expect_err("the master is dead");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}: {error}", started.elapsed());
    assert!(matches!(store.reserve(&alive, Claim::new(&fingerprint), now).await, Ok(Reservation::Acquired(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_cross_process_race() {
    const TEST: &str = "stores::cluster::cluster_cross_process_race";
    if std::env::var_os("SMS_SDK_RACE_URL").is_some() {
        return super::cross_process_race(TEST, "").await;
    }
    let cluster = RedisCluster::start(3);
    super::cross_process_race(TEST, &cluster.url).await;
}
