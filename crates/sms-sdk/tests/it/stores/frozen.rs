//! A store whose server stops answering (SIGSTOP) or whose file another connection locks fails
//! every call within its timeout with a typed error, sends nothing, and works again, the same
//! store object, once the server answers; an endpoint that accepts connections and never says
//! a word fails the connect within the connect timeout, without showing the URL's password.

use std::fmt::Debug;
use std::future::Future;
use std::time::{Duration, Instant, SystemTime};

use sms_sdk::idempotency::{Filter, Fingerprint, IdempotencyStore, Operator, Page, Reservation, StoreError};
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::webhook::dedupe::DedupeStore;
use sms_sdk::{Client, ErrorKind, Message};

use super::uuid_suffix;

/// The connect and operation timeouts of the stores under test.
const BOUND: Duration = Duration::from_secs(1);

/// Awaits `call`, which must fail with a timeout error within twice the bound.
async fn times_out<T: Debug>(what: &str, call: impl Future<Output = Result<T, StoreError>>) -> StoreError {
    let started = Instant::now();
    let outcome = tokio::time::timeout(4 * BOUND, call).await;
    let elapsed = started.elapsed();
    let error = outcome.unwrap_or_else(|_| panic!("{what} still waited after {:?}", 4 * BOUND)).expect_err(what);
    assert!(elapsed < 2 * BOUND, "{what} took {elapsed:?}: {error}");
    assert!(error.is_timeout(), "{what}: {error}");
    assert!(error.to_string().contains("timed out after 1 s"), "{what}: {error}");
    error
}

/// Awaits `call`, which must succeed within a few seconds.
async fn succeeds<T>(what: &str, call: impl Future<Output = Result<T, StoreError>>) -> T {
    let outcome = tokio::time::timeout(Duration::from_secs(5), call).await;
    outcome.unwrap_or_else(|_| panic!("{what} still waited")).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn keyed(name: &str) -> Message {
    Message::new(crate::TO, "x").idempotency_key(format!("{name}:{}", uuid_suffix()))
}

/// A client over `store` and the adapter it would send through.
fn client(store: impl IdempotencyStore) -> (Client, MemoryAdapter) {
    let memory = MemoryAdapter::new();
    (Client::builder().adapter(memory.clone()).idempotency(store).build().unwrap(), memory)
}

/// A keyed send fails as a store timeout within the bound, and nothing is sent.
async fn send_fails_in_time(client: &Client, memory: &MemoryAdapter) {
    let started = Instant::now();
    let outcome = tokio::time::timeout(4 * BOUND, client.send(&keyed("frozen-send"))).await;
    let error = outcome.expect("the send still waited").expect_err("the send went through");
    assert!(started.elapsed() < 2 * BOUND, "the send took {:?}", started.elapsed());
    assert_eq!(error.kind(), ErrorKind::Store);
    let store_error = std::error::Error::source(&error).and_then(|s| s.downcast_ref::<StoreError>());
    assert!(store_error.is_some_and(StoreError::is_timeout), "{store_error:?}");
    assert!(memory.sent().is_empty(), "a send went out without its reservation");
}

/// After the server answers again, the same store and client work.
async fn recovers(store: &(impl IdempotencyStore + Operator), client: &Client, memory: &MemoryAdapter) {
    let fingerprint = Fingerprint::from_canonical("after");
    let key = format!("after:{}", uuid_suffix());
    let reserved = succeeds("reserve after", store.reserve(&key, &fingerprint, SystemTime::now())).await;
    assert!(matches!(reserved, Reservation::Acquired(_)), "{reserved:?}");
    succeeds("list after", store.list(Filter::All, SystemTime::now(), Page::default())).await;
    client.send(&keyed("after-send")).await.unwrap();
    assert_eq!(memory.sent().len(), 1);
}

/// Freezes the server under `store` (at `place`): the call on its open connection times out,
/// and so does every call after it, a new connection (`connect`) and a send included. After
/// `thaw`, the same store works again.
#[cfg(any(feature = "postgres", feature = "redis"))]
async fn freeze_and_thaw<S, F>(store: S, place: &str, connect: impl FnOnce() -> F, freeze: impl Fn(), thaw: impl Fn())
where
    S: sms_sdk::idempotency::Store + Clone + Debug,
    F: Future<Output = Result<S, StoreError>>,
{
    let (client, memory) = client(store.clone());
    let (fingerprint, now) = (Fingerprint::from_canonical("frozen"), SystemTime::now());
    succeeds("warm-up", store.reserve("warm", &fingerprint, now)).await;
    freeze();
    let error = times_out("reserve", store.reserve("k", &fingerprint, now)).await;
    let expected = format!("{place}: reserve timed out after 1 s (the operation timeout)");
    assert!(error.to_string().contains(&expected), "{error}");
    let (_, _, _, connect, ()) = tokio::join!(
        times_out("get", store.get("k")),
        times_out("list", store.list(Filter::All, now, Page::default())),
        times_out("first_seen", store.first_seen("evt", now, Duration::from_secs(60))),
        times_out("connect", connect()),
        send_fails_in_time(&client, &memory),
    );
    assert!(connect.to_string().contains(&format!("{place}: connect timed out after 1 s (the connect timeout)")));
    thaw();
    recovers(&store, &client, &memory).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_a_frozen_postgres_fails_every_call_in_time_and_recovers() {
    use sms_sdk::idempotency::postgres::PostgresStore;

    let server = tokio::task::spawn_blocking(super::servers::PgServer::start).await.unwrap();
    let builder = || PostgresStore::builder(&server.url).connect_timeout(BOUND).operation_timeout(BOUND);
    let store = builder().connect().await.unwrap();
    // The pooled connection's statement times out; every later call waits for a new connection.
    let place = format!("PostgreSQL at 127.0.0.1:{}/postgres", server.port);
    freeze_and_thaw(store, &place, || builder().connect(), || server.freeze(), || server.thaw()).await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_a_frozen_redis_fails_every_call_in_time_and_recovers() {
    use sms_sdk::idempotency::redis::RedisStore;

    let server = tokio::task::spawn_blocking(super::servers::RedisServer::start).await.unwrap();
    let builder = || RedisStore::builder(&server.url).connect_timeout(BOUND).operation_timeout(BOUND);
    let store = builder().connect().await.unwrap();
    let place = format!("Redis at 127.0.0.1:{}/0", server.port);
    freeze_and_thaw(store, &place, || builder().connect(), || server.freeze(), || server.thaw()).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_a_locked_sqlite_file_fails_writes_in_time_and_recovers() {
    use sms_sdk::idempotency::sqlite::SqliteStore;
    use sms_sdk::idempotency::{FinalRecord, Resolution};
    use sms_sdk::testing::store_contract::sample_error;

    let path = super::temp_db();
    let store = SqliteStore::builder(&path).connect_timeout(BOUND).operation_timeout(BOUND).open().await.unwrap();
    let (client, memory) = client(store.clone());
    let (fingerprint, now) = (Fingerprint::from_canonical("locked"), SystemTime::now());
    let Reservation::Acquired(id) = succeeds("reserve", store.reserve("held", &fingerprint, now)).await else {
        panic!("the key was taken")
    };
    let locker = rusqlite::Connection::open(&path).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let error = times_out("reserve", store.reserve("k", &fingerprint, now)).await;
    let place = format!("SQLite at {}", path.display());
    assert!(
        error.to_string().contains(&format!("{place}: waiting for the database lock timed out after 1 s")),
        "{error}"
    );
    // Calls queued behind one that waits for the lock give up in time too.
    let unknown = FinalRecord::Unknown(sample_error("handoff_unknown"));
    tokio::join!(
        times_out("finalize", store.finalize("held", &id, unknown, Duration::from_secs(60), now)),
        times_out("resolve", store.resolve("held", Resolution::NotSent, Duration::ZERO, now)),
        times_out("first_seen", store.first_seen("evt", now, Duration::from_secs(60))),
        send_fails_in_time(&client, &memory),
    );
    // In WAL mode readers never wait for the writer.
    let held = succeeds("get while locked", store.get("held")).await;
    assert!(held.is_some_and(|r| r.state() == sms_sdk::idempotency::State::Reserved));
    locker.execute_batch("COMMIT").unwrap();
    recovers(&store, &client, &memory).await;
    // Opening a file another connection holds retries its switch to WAL until the connect timeout.
    let fresh = super::temp_db();
    std::fs::create_dir_all(fresh.parent().unwrap()).unwrap();
    let locker = rusqlite::Connection::open(&fresh).unwrap();
    locker.execute_batch("CREATE TABLE t (x); BEGIN EXCLUSIVE").unwrap();
    let error = times_out("open", SqliteStore::builder(&fresh).connect_timeout(BOUND).open()).await;
    assert!(error.to_string().contains("(the connect timeout)"), "{error}");
    locker.execute_batch("COMMIT").unwrap();
    succeeds("open after", SqliteStore::builder(&fresh).connect_timeout(BOUND).open()).await;
}

/// The password of the silent endpoints' URLs: never in an error.
#[cfg(any(feature = "postgres", feature = "redis"))]
const SILENT_PASSWORD: &str = "silent-endpoint-password-5150";

#[cfg(feature = "postgres")]
#[tokio::test]
async fn timeout_a_postgres_endpoint_that_never_answers_fails_to_connect_in_time() {
    use sms_sdk::idempotency::postgres::PostgresStore;

    let url = format!("postgres://app:{SILENT_PASSWORD}@{}/db", crate::silent_endpoint().await);
    let builder = PostgresStore::builder(&url).connect_timeout(BOUND).operation_timeout(BOUND);
    let error = times_out("connect", builder.connect()).await;
    assert!(error.to_string().contains("connect timed out after 1 s (the connect timeout)"), "{error}");
    assert!(!format!("{error} {error:?}").contains(SILENT_PASSWORD), "{error:?}");
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn timeout_a_redis_endpoint_that_never_answers_fails_to_connect_in_time() {
    use sms_sdk::idempotency::redis::RedisStore;

    let url = format!("redis://app:{SILENT_PASSWORD}@{}/0", crate::silent_endpoint().await);
    let builder = RedisStore::builder(&url).connect_timeout(BOUND).operation_timeout(BOUND);
    let error = times_out("connect", builder.connect()).await;
    assert!(error.to_string().contains("connect timed out after 1 s (the connect timeout)"), "{error}");
    assert!(!format!("{error} {error:?}").contains(SILENT_PASSWORD), "{error:?}");
}
