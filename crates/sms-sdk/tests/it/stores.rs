//! Every shipped store passes the one contract suite; the durable ones also survive a race of
//! separate OS processes, and a store that goes away fails sends with a typed error.

#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
use std::collections::HashMap;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
use std::fmt::Write as _;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
use std::process::Command;
use std::sync::Arc;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
use std::time::Duration;
use std::time::SystemTime;

use sms_sdk::store::{self, MemoryStore, Store};
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
use sms_sdk::store::{Fingerprint, Reservation};
use sms_sdk::testing::store_contract;

#[cfg(feature = "redis")]
mod cluster;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
mod corrupt;
#[cfg(all(feature = "twilio", any(feature = "sqlite", feature = "postgres", feature = "redis")))]
mod crash;
#[cfg(feature = "dynamodb")]
mod dynamodb;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
mod errors;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
// The DynamoDB tests use only its frozen-server check.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres", feature = "redis")), allow(dead_code, unused_imports))]
mod faults;
#[cfg(all(feature = "sqlite", feature = "postgres", feature = "redis"))]
mod golden;
#[cfg(feature = "redis")]
mod redis_tls;
#[cfg(feature = "redis")]
mod scripts;
#[cfg(any(feature = "postgres", feature = "redis"))]
// Each server is used by the tests of its own store feature.
#[cfg_attr(not(all(feature = "postgres", feature = "redis")), allow(dead_code, unused_imports))]
mod servers;
#[cfg(feature = "sqlite")]
mod throughput;
mod times;
#[cfg(feature = "postgres")]
mod tls;

async fn assert_contract(name: &str, store: Arc<dyn Store>) {
    let report = store_contract::run(name, store).await;
    assert!(report.passed, "{}", report.failures());
}

#[cfg(feature = "redis")]
/// The store, dedupe and suppression contracts on one Redis store (a TLS server, a cluster).
async fn assert_redis_contracts(name: &str, store: sms_sdk::store::redis::RedisStore) {
    use sms_sdk::testing::{dedupe_contract, suppression_contract};
    assert_contract(name, Arc::new(store.clone()) as Arc<dyn Store>).await;
    let report = dedupe_contract::run(name, Arc::new(store.clone())).await;
    assert!(report.passed, "{}", report.failures());
    let list = sms_sdk::store::suppression::RedisSuppressionStore::new(store);
    let report = suppression_contract::run(name, Arc::new(list)).await;
    assert!(report.passed, "{}", report.failures());
}

#[cfg(any(feature = "postgres", feature = "redis", feature = "dynamodb"))]
/// A store server's URL from the environment the test command sets; fails loudly without it.
pub(crate) fn server_url(var: &str) -> String {
    std::env::var(var).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| {
        panic!(
            "{var} is not set: run `scripts/test.sh`, which starts PostgreSQL, PgBouncer, Redis and moto (DynamoDB) for the store tests"
        )
    })
}

#[cfg(feature = "postgres")]
/// The URL of PgBouncer in transaction pooling mode in front of the test server, with the
/// statement cache off (as the store's documentation says to set it for a pooler without
/// prepared statements); fails loudly without it.
pub(crate) fn pgbouncer_url() -> String {
    let url = server_url("SMS_SDK_TEST_PGBOUNCER_URL");
    format!("{url}{}statement_cache=off", if url.contains('?') { '&' } else { '?' })
}

#[cfg(feature = "sqlite")]
/// A fresh temporary path for a SQLite file.
pub(crate) fn temp_db() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("sms-sdk-test-{}", uuid_suffix())).join("state.db")
}

pub(crate) fn uuid_suffix() -> String {
    format!(
        "{:x}{:x}",
        SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos(),
        std::process::id()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_passes_the_contract() {
    assert_contract("memory", Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_open_from_urls() {
    assert!(store::open("memory").await.is_ok());
    assert!(store::open("ftp://x").await.is_err());
}

#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
const RACE_PROCESSES: usize = 4;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
const RACE_KEYS: usize = 1000;

#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
/// The cross-process race: this test binary runs itself `RACE_PROCESSES` times as workers (the
/// same test, with `SMS_SDK_RACE_URL` set), which all reserve the same keys at the same instant.
async fn cross_process_race(test: &str, url: &str) {
    if let Ok(url) = std::env::var("SMS_SDK_RACE_URL") {
        return race_worker(&url).await;
    }
    let prefix = format!("race:{}:", uuid_suffix());
    let start_at = SystemTime::now() + Duration::from_millis(1500);
    let start_ms = start_at.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_millis().to_string();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..RACE_PROCESSES)
        .map(|_| {
            Command::new(&exe)
                .args([test, "--exact", "--nocapture", "--test-threads=1"])
                .env("SMS_SDK_RACE_URL", url)
                .env("SMS_SDK_RACE_PREFIX", &prefix)
                .env("SMS_SDK_RACE_START_MS", &start_ms)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut winners: HashMap<String, usize> = HashMap::new();
    for child in children {
        let output = tokio::task::spawn_blocking(move || child.wait_with_output()).await.unwrap().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "a worker failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains("RACE-DONE"), "a worker did not finish: {stdout}");
        assert!(!stdout.contains("RACE-ERROR"), "a worker saw store errors: {stdout}");
        // libtest's own "test … ..." may share a line with the first report line.
        for key in stdout.lines().filter_map(|l| l.split("RACE-WON ").nth(1)) {
            *winners.entry(key.to_owned()).or_default() += 1;
        }
    }
    assert_eq!(winners.len(), RACE_KEYS, "every key has a winner");
    assert!(winners.values().all(|&n| n == 1), "a key had two winners");
}

#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis"))]
async fn race_worker(url: &str) {
    let prefix = std::env::var("SMS_SDK_RACE_PREFIX").unwrap();
    let start_ms: u64 = std::env::var("SMS_SDK_RACE_START_MS").unwrap().parse().unwrap();
    let store = store::open(url).await.unwrap();
    let start = SystemTime::UNIX_EPOCH + Duration::from_millis(start_ms);
    if let Ok(wait) = start.duration_since(SystemTime::now()) {
        tokio::time::sleep(wait).await;
    }
    let fingerprint = Fingerprint::from_canonical("race");
    let now = SystemTime::now();
    let mut report = String::new();
    for i in 0..RACE_KEYS {
        let key = format!("{prefix}{i}");
        match store.reserve(&key, sms_sdk::store::Claim::new(&fingerprint), now).await {
            Ok(Reservation::Acquired(_)) => writeln!(report, "RACE-WON {key}").unwrap(),
            Ok(Reservation::Existing(_)) => {}
            Err(error) => writeln!(report, "RACE-ERROR {error}").unwrap(),
        }
    }
    println!("\n{report}RACE-DONE");
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use super::*;
    use sms_sdk::store::sqlite::SqliteStore;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_store_passes_the_contract() {
        let store = SqliteStore::open(temp_db()).await.unwrap();
        assert_contract("sqlite", Arc::new(store)).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_cross_process_race() {
        let url = std::env::var("SMS_SDK_RACE_URL").unwrap_or_else(|_| format!("sqlite:{}", temp_db().display()));
        cross_process_race("stores::sqlite::sqlite_cross_process_race", &url).await;
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;
    use sms_sdk::store::postgres::PostgresStore;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_store_passes_the_contract() {
        let store = PostgresStore::connect(&server_url("SMS_SDK_TEST_POSTGRES_URL")).await.unwrap();
        assert_contract("postgres", Arc::new(store)).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_table_name_is_configurable() {
        let url = server_url("SMS_SDK_TEST_POSTGRES_URL");
        let store = PostgresStore::builder(&url).table("sms_idempotency_custom").connect().await.unwrap();
        assert_contract("postgres (custom table)", Arc::new(store)).await;
        assert!(PostgresStore::builder(&url).table("bad name").connect().await.is_err());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_store_passes_the_contract_with_the_statement_cache_off() {
        let url = server_url("SMS_SDK_TEST_POSTGRES_URL");
        let store = PostgresStore::builder(&url).statement_cache(false).connect().await.unwrap();
        assert!(format!("{store:?}").contains("statement_cache: false"), "{store:?}");
        assert_contract("postgres (statement cache off)", Arc::new(store)).await;
    }

    /// scripts/test.sh starts PgBouncer 1.18 (Debian's), which has no prepared statements, in
    /// transaction pooling mode: consecutive statements of one connection may run on different
    /// server connections.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_store_passes_the_contract_through_pgbouncer_in_transaction_mode() {
        let store = store::open(&pgbouncer_url()).await.unwrap();
        assert_contract("postgres through PgBouncer (statement cache off)", store).await;
        let custom = PostgresStore::builder(pgbouncer_url()).table("sms_idempotency_custom").connect().await.unwrap();
        assert_contract("postgres through PgBouncer (custom table)", Arc::new(custom)).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_cross_process_race_through_pgbouncer() {
        cross_process_race("stores::postgres::postgres_cross_process_race_through_pgbouncer", &pgbouncer_url()).await;
    }

    /// A reserve that waits on another transaction's uncommitted row for its key answers with
    /// that row once it commits (a statement whose snapshot was taken before the commit cannot
    /// see the row).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_reserve_behind_a_concurrent_insert_answers_with_its_row() {
        use sms_sdk::store::{IdempotencyStore, Record};

        let url = server_url("SMS_SDK_TEST_POSTGRES_URL");
        let (mut raw, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        for cache in [true, false] {
            let name = format!("behind-{}", uuid_suffix());
            let store = PostgresStore::builder(format!("{url}?application_name={name}"))
                .statement_cache(cache)
                .connect()
                .await
                .unwrap();
            let (key, fingerprint) = (format!("behind:{}", uuid_suffix()), Fingerprint::from_canonical("behind"));
            let now = i64::try_from(SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_millis());
            let other = raw.transaction().await.unwrap();
            let insert = "INSERT INTO sms_idempotency (key, fingerprint, state, reservation_id, reserved_at)
                          VALUES ($1, $2, 'reserved', 'other', $3)";
            other.execute(insert, &[&key, &fingerprint.as_str(), &now.unwrap()]).await.unwrap();
            let reserve = tokio::spawn({
                let (store, key, fingerprint) = (store.clone(), key.clone(), fingerprint.clone());
                async move { store.reserve(&key, sms_sdk::store::Claim::new(&fingerprint), SystemTime::now()).await }
            });
            let waiting =
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'";
            let mut polls = 0;
            while other.query_one(waiting, &[&name]).await.unwrap().get::<_, i64>(0) == 0 {
                polls += 1;
                assert!(polls < 500, "the reserve never waited on the uncommitted row");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other.commit().await.unwrap();
            let Reservation::Existing(record) = reserve.await.unwrap().unwrap() else {
                panic!("the key was claimed twice (statement cache {cache})")
            };
            let Record::Reserved { reservation_id, .. } = *record else {
                panic!("another record: {:?}", record.state())
            };
            assert_eq!(reservation_id.as_str(), "other");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_bad_statement_cache_parameter_is_refused() {
        let url = format!("{}?statement_cache=maybe", server_url("SMS_SDK_TEST_POSTGRES_URL"));
        let error = store::open(&url).await.err().unwrap().to_string();
        assert!(error.contains("statement_cache must be `on` or `off`"), "{error}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_cross_process_race() {
        cross_process_race("stores::postgres::postgres_cross_process_race", &server_url("SMS_SDK_TEST_POSTGRES_URL"))
            .await;
    }
}

#[cfg(feature = "redis")]
mod redis {
    use super::*;
    use sms_sdk::store::redis::RedisStore;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_store_passes_the_contract() {
        let store = RedisStore::connect(&quiet_database(11)).await.unwrap();
        assert_contract("redis", Arc::new(store)).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_key_prefix_is_configurable() {
        let store = RedisStore::builder(quiet_database(12)).prefix("custom:idem:").connect().await.unwrap();
        assert_contract("redis (custom prefix)", Arc::new(store)).await;
    }

    /// The test server's database `db`, which no other test writes to. The contract checks that
    /// a listing in pages of one lists each key exactly once; `SCAN` may return a key twice while
    /// other writers make the keyspace grow (a rehash), which the tests sharing database 0 do.
    fn quiet_database(db: u8) -> String {
        let url = server_url("SMS_SDK_TEST_REDIS_URL");
        let base = url.rsplit_once('/').filter(|(_, path)| path.parse::<u8>().is_ok()).map_or(url.as_str(), |(b, _)| b);
        format!("{base}/{db}")
    }

    /// A TCP proxy to `upstream` that can be cut: every connection drops and new ones are refused.
    async fn cuttable_proxy(upstream: std::net::SocketAddr) -> (String, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let proxy = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                connections.spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        (format!("redis://{address}/0"), proxy)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn store_fault_redis_connection_cut() {
        use sms_sdk::testing::MemoryAdapter;
        use sms_sdk::{Client, ErrorKind, Message};

        let url = server_url("SMS_SDK_TEST_REDIS_URL");
        let upstream = url.trim_start_matches("redis://").split('/').next().unwrap().parse().unwrap();
        let (proxied, proxy) = cuttable_proxy(upstream).await;
        let store = RedisStore::connect(&proxied).await.unwrap();
        let memory = MemoryAdapter::new();
        let client = Client::builder().adapter(memory.clone()).idempotency(store).build().unwrap();
        let message = |key: &str| Message::new(crate::TO, "x").idempotency_key(format!("{key}:{}", uuid_suffix()));
        client.send(&message("before")).await.unwrap();
        proxy.abort();
        let _ = proxy.await;
        let err = client.send(&message("after")).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Store);
        assert_eq!(err.code(), "store");
        assert!(err.is_retry_safe());
        assert!(std::error::Error::source(&err).is_some());
        assert_eq!(memory.sent().len(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_cross_process_race() {
        cross_process_race("stores::redis::redis_cross_process_race", &server_url("SMS_SDK_TEST_REDIS_URL")).await;
    }
}
