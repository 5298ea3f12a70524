//! Store faults in the middle of a run: a server that stops answering (SIGSTOP), is stopped or is
//! killed, a file another connection locks or that becomes read-only. Every call fails within
//! its bound with a typed store error that says why, nothing is sent for a send that failed, and
//! the same store and client objects work again once the store is back. An endpoint that
//! accepts connections and never says a word fails the connect within the connect timeout,
//! without showing the URL's password.

use std::collections::HashMap;
use std::fmt::Debug;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

#[cfg(feature = "sqlite")]
use sms_sdk::store::DedupeStore;
use sms_sdk::store::{Filter, Fingerprint, IdempotencyStore, Operator, Page, Reservation, StoreError};
use sms_sdk::testing::MemoryAdapter;
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
    let reserved =
        succeeds("reserve after", store.reserve(&key, sms_sdk::store::Claim::new(&fingerprint), SystemTime::now()))
            .await;
    assert!(matches!(reserved, Reservation::Acquired(_)), "{reserved:?}");
    succeeds("list after", store.list(Filter::All, SystemTime::now(), Page::default())).await;
    client.send(&keyed("after-send")).await.unwrap();
    assert_eq!(memory.sent().len(), 1);
}

/// Freezes the server under `store` (at `place`): the call on its open connection times out,
/// and so does every call after it, a new connection (`connect`) and a send included. After
/// `thaw`, the same store works again.
#[cfg(any(feature = "postgres", feature = "redis", feature = "dynamodb"))]
pub(super) async fn freeze_and_thaw<S, F>(
    store: S,
    place: &str,
    connect: impl FnOnce() -> F,
    freeze: impl Fn(),
    thaw: impl Fn(),
) where
    S: sms_sdk::store::Store + Clone + Debug,
    F: Future<Output = Result<S, StoreError>>,
{
    let (client, memory) = client(store.clone());
    let (fingerprint, now) = (Fingerprint::from_canonical("frozen"), SystemTime::now());
    succeeds("warm-up", store.reserve("warm", sms_sdk::store::Claim::new(&fingerprint), now)).await;
    freeze();
    let error = times_out("reserve", store.reserve("k", sms_sdk::store::Claim::new(&fingerprint), now)).await;
    let expected = format!("{place}: reserve timed out after 1 s (the operation timeout)");
    assert!(error.to_string().contains(&expected), "{error}");
    let token = sms_sdk::store::ClaimToken::new();
    let (_, _, _, _, _, _, connect, ()) = tokio::join!(
        times_out("get", store.get("k")),
        times_out("list", store.list(Filter::All, now, Page::default())),
        times_out("first_seen", store.first_seen_at("evt", now, Duration::from_mins(1))),
        times_out("claim", store.claim_at("evt", now, Duration::from_mins(1))),
        times_out("commit", store.commit_at("evt", now, Duration::from_mins(1))),
        times_out("release", store.release("evt", &token)),
        times_out("connect", connect()),
        send_fails_in_time(&client, &memory),
    );
    assert!(connect.to_string().contains(&format!("{place}: connect timed out after 1 s (the connect timeout)")));
    thaw();
    recovers(&store, &client, &memory).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fault_postgres_frozen() {
    use sms_sdk::store::postgres::PostgresStore;

    let server = tokio::task::spawn_blocking(super::servers::PgServer::start).await.unwrap();
    let builder = || PostgresStore::builder(&server.url).connect_timeout(BOUND).operation_timeout(BOUND);
    let store = builder().connect().await.unwrap();
    // The pooled connection's statement times out; every later call waits for a new connection.
    let place = format!("PostgreSQL at 127.0.0.1:{}/postgres (sslmode=prefer)", server.port);
    freeze_and_thaw(store, &place, || builder().connect(), || server.freeze(), || server.thaw()).await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fault_redis_frozen() {
    use sms_sdk::store::redis::RedisStore;

    let server = tokio::task::spawn_blocking(super::servers::RedisServer::start).await.unwrap();
    let builder = || RedisStore::builder(&server.url).connect_timeout(BOUND).operation_timeout(BOUND);
    let store = builder().connect().await.unwrap();
    let place = format!("Redis at 127.0.0.1:{}/0", server.port);
    freeze_and_thaw(store, &place, || builder().connect(), || server.freeze(), || server.thaw()).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fault_sqlite_locked() {
    use sms_sdk::store::sqlite::SqliteStore;
    use sms_sdk::store::{FinalRecord, Resolution};
    use sms_sdk::testing::store_contract::sample_error;

    let path = super::temp_db();
    let store = SqliteStore::builder(&path).connect_timeout(BOUND).operation_timeout(BOUND).open().await.unwrap();
    let (client, memory) = client(store.clone());
    let (fingerprint, now) = (Fingerprint::from_canonical("locked"), SystemTime::now());
    let Reservation::Acquired(id) =
        succeeds("reserve", store.reserve("held", sms_sdk::store::Claim::new(&fingerprint), now)).await
    else {
        panic!("the key was taken")
    };
    let locker = rusqlite::Connection::open(&path).unwrap();
    locker.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let error = times_out("reserve", store.reserve("k", sms_sdk::store::Claim::new(&fingerprint), now)).await;
    let place = format!("SQLite at {}", path.display());
    assert!(
        error.to_string().contains(&format!("{place}: waiting for the database lock timed out after 1 s")),
        "{error}"
    );
    // Calls queued behind one that waits for the lock give up in time too.
    let unknown = FinalRecord::Unknown(sample_error("handoff_unknown"));
    let token = sms_sdk::store::ClaimToken::new();
    tokio::join!(
        times_out("finalize", store.finalize("held", &id, unknown, Duration::from_mins(1), now)),
        times_out("resolve", store.resolve("held", Resolution::NotSent, Duration::ZERO, now)),
        times_out("first_seen", store.first_seen_at("evt", now, Duration::from_mins(1))),
        times_out("claim", store.claim_at("evt", now, Duration::from_mins(1))),
        times_out("commit", store.commit_at("evt", now, Duration::from_mins(1))),
        times_out("release", store.release("evt", &token)),
        send_fails_in_time(&client, &memory),
    );
    // In WAL mode readers never wait for the writer.
    let held = succeeds("get while locked", store.get("held")).await;
    assert!(held.is_some_and(|r| r.state() == sms_sdk::store::State::Reserved));
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

/// One send of a [`SendLoop`].
struct Sent {
    body: String,
    started: Instant,
    took: Duration,
    outcome: Result<(), sms_sdk::Error>,
}

/// A client that sends keyed messages one after another, a few milliseconds apart, until stopped.
struct SendLoop {
    sent: Arc<Mutex<Vec<Sent>>>,
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl SendLoop {
    fn start(client: Client) -> Self {
        let (sent, stop) = (Arc::new(Mutex::new(Vec::new())), Arc::new(AtomicBool::new(false)));
        let (log, stopped) = (Arc::clone(&sent), Arc::clone(&stop));
        let run = uuid_suffix();
        let task = tokio::spawn(async move {
            for i in 0.. {
                if stopped.load(Ordering::Relaxed) {
                    break;
                }
                let body = format!("fault {run} {i}");
                let started = Instant::now();
                let outcome = client.send(&Message::new(crate::TO, &body).idempotency_key(&body)).await.map(drop);
                log.lock().unwrap().push(Sent { body, started, took: started.elapsed(), outcome });
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        Self { sent, stop, task }
    }

    /// Waits (at most 30 s) until `count` sends that started at `since` or later have ended, and
    /// succeeded when `ok` (failed otherwise).
    async fn wait_for(&self, count: usize, since: Instant, ok: bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seen =
                self.sent.lock().unwrap().iter().filter(|s| s.started >= since && s.outcome.is_ok() == ok).count();
            if seen >= count {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "only {seen} of {count} sends {} in 30 s",
                if ok { "succeeded" } else { "failed" }
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn stop(self) -> Vec<Sent> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap();
        std::mem::take(&mut *self.sent.lock().unwrap())
    }
}

/// A run through a fault: a client over `store` sends in a loop; `fault` starts it (and returns
/// once it is in place); every send that starts then fails within the bound with a store error
/// whose text holds one of `reasons`, and reaches no adapter; `heal` ends the fault, and the same
/// client sends again. Returns how many sends failed during the fault.
async fn through_fault<G>(
    store: impl IdempotencyStore,
    fault: impl FnOnce() -> G,
    heal: impl FnOnce(G),
    reasons: &[String],
) -> usize {
    let (client, memory) = client(store);
    let sends = SendLoop::start(client);
    let begun = Instant::now();
    sends.wait_for(3, begun, true).await;
    let guard = tokio::task::block_in_place(fault);
    let faulted = Instant::now();
    sends.wait_for(3, faulted, false).await;
    let healing = Instant::now();
    tokio::task::block_in_place(|| heal(guard));
    let healed = Instant::now();
    sends.wait_for(3, healed, true).await;
    let sent = sends.stop().await;

    let during: Vec<&Sent> = sent.iter().filter(|s| s.started >= faulted && s.started + s.took <= healing).collect();
    assert!(during.len() >= 3, "{} sends during the fault", during.len());
    for send in &during {
        let error = send.outcome.as_ref().expect_err("a send went through while the store was down");
        assert_eq!((error.kind(), error.code(), error.is_retry_safe()), (ErrorKind::Store, "store", true), "{error}");
        let store_error = std::error::Error::source(error).and_then(|s| s.downcast_ref::<StoreError>());
        assert!(store_error.is_some(), "the source is not a StoreError: {error:?}");
        assert!(send.took < 2 * BOUND, "a send took {:?} to fail: {error}", send.took);
        let text = error.to_string();
        assert!(reasons.iter().any(|reason| text.contains(reason)), "the error does not say why ({reasons:?}): {text}");
    }
    let mut texts: Vec<String> =
        during.iter().filter_map(|s| s.outcome.as_ref().err().map(ToString::to_string)).collect();
    texts.dedup();
    eprintln!("during the fault: {texts:#?}");
    // A send that failed on the store made no request; one that succeeded made exactly one.
    let mut requests: HashMap<String, usize> = HashMap::new();
    for request in memory.sent() {
        *requests.entry(request.message.body).or_default() += 1;
    }
    for send in &sent {
        let made = requests.get(&send.body).copied().unwrap_or(0);
        match &send.outcome {
            Ok(()) => assert_eq!(made, 1, "{}: accepted after {made} requests", send.body),
            Err(error) if error.kind() == ErrorKind::Store => assert_eq!(made, 0, "{}: {error}", send.body),
            Err(error) => panic!("{}: not a store error: {error}", send.body),
        }
    }
    // The same client works again, from the first send after the store is back.
    let after: Vec<&Sent> = sent.iter().filter(|s| s.started >= healed).collect();
    assert!(
        after.iter().all(|s| s.outcome.is_ok()),
        "a send failed after the store came back: {:?}",
        after.iter().find_map(|s| s.outcome.as_ref().err())
    );
    during.len()
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fault_postgres_stopped() {
    use sms_sdk::store::postgres::PostgresStore;

    let server = tokio::task::spawn_blocking(super::servers::PgServer::start).await.unwrap();
    let builder = PostgresStore::builder(&server.url).connect_timeout(BOUND).operation_timeout(BOUND);
    let store = builder.connect().await.unwrap();
    let place = format!("PostgreSQL at 127.0.0.1:{}/postgres (sslmode=prefer)", server.port);
    // A send that took a pooled connection as the server went down reads why it was closed.
    let reasons = [
        format!("{place}: error connecting to server: Connection refused"),
        format!("{place}: db error: FATAL: terminating connection due to administrator command"),
    ];
    let failed = through_fault(store, || server.stop(), |()| server.start_again(), &reasons).await;
    eprintln!("store_fault_postgres_stopped: {failed} sends failed while the server was down");
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fault_redis_killed() {
    use sms_sdk::store::redis::RedisStore;

    let server = tokio::task::spawn_blocking(super::servers::RedisServer::start).await.unwrap();
    let builder = RedisStore::builder(&server.url).connect_timeout(BOUND).operation_timeout(BOUND);
    let store = builder.connect().await.unwrap();
    let place = format!("Redis at 127.0.0.1:{}/0", server.port);
    // The first command on the connection the server left finds it broken; then reconnecting
    // is refused.
    let reasons = [format!("{place}: broken pipe"), format!("{place}: Connection refused")];
    let failed = through_fault(store, || server.kill(), |()| server.start_again(), &reasons).await;
    eprintln!("store_fault_redis_killed: {failed} sends failed while the server was down");
}

/// Files made immutable (`chattr +i`): writing them fails, through descriptors already open too,
/// and for root as well (root ignores permission bits, not this attribute). Dropping the guard
/// makes them writable again.
#[cfg(feature = "sqlite")]
struct Immutable(Vec<std::path::PathBuf>);

#[cfg(feature = "sqlite")]
impl Immutable {
    fn set(paths: Vec<std::path::PathBuf>) -> Self {
        let output = std::process::Command::new("chattr").arg("+i").args(&paths).output();
        let made = output.as_ref().is_ok_and(|o| o.status.success());
        let guard = Self(paths);
        assert!(
            made,
            "making the SQLite files read-only needs `chattr +i` (e2fsprogs), run as root (or with \
             CAP_LINUX_IMMUTABLE) on a filesystem with the immutable attribute (ext4, xfs, btrfs): {:?}",
            output.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        );
        guard
    }

    /// Makes the files writable again.
    fn clear(self) {
        let status = std::process::Command::new("chattr").arg("-i").args(&self.0).status();
        assert!(status.is_ok_and(|s| s.success()), "chattr -i {:?} failed", self.0);
    }
}

#[cfg(feature = "sqlite")]
impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr").arg("-i").args(&self.0).status();
    }
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fault_sqlite_read_only() {
    use sms_sdk::store::sqlite::SqliteStore;

    let path = super::temp_db();
    let store = SqliteStore::builder(&path).connect_timeout(BOUND).operation_timeout(BOUND).open().await.unwrap();
    // The database and its write-ahead log; the shared-memory index stays writable (SQLite maps
    // it into memory, and a write to a mapped immutable file would kill the process).
    let files = vec![path.clone(), path.with_extension("db-wal")];
    // SQLite does not say which system error failed the write; it says that writing failed.
    let reasons = [format!("SQLite at {}: disk I/O error: Error code 778: Error writing to disk", path.display())];
    let failed = through_fault(store, || Immutable::set(files), Immutable::clear, &reasons).await;
    eprintln!("store_fault_sqlite_read_only: {failed} sends failed while the file was read-only");
}

/// The password of the silent endpoints' URLs: never in an error.
#[cfg(any(feature = "postgres", feature = "redis"))]
const SILENT_PASSWORD: &str = "silent-endpoint-password-5150";

#[cfg(feature = "postgres")]
#[tokio::test]
async fn timeout_a_postgres_endpoint_that_never_answers_fails_to_connect_in_time() {
    use sms_sdk::store::postgres::PostgresStore;

    let url = format!("postgres://app:{SILENT_PASSWORD}@{}/db", crate::silent_endpoint().await);
    let builder = PostgresStore::builder(&url).connect_timeout(BOUND).operation_timeout(BOUND);
    let error = times_out("connect", builder.connect()).await;
    assert!(error.to_string().contains("connect timed out after 1 s (the connect timeout)"), "{error}");
    assert!(!format!("{error} {error:?}").contains(SILENT_PASSWORD), "{error:?}");
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn timeout_a_redis_endpoint_that_never_answers_fails_to_connect_in_time() {
    use sms_sdk::store::redis::RedisStore;

    let url = format!("redis://app:{SILENT_PASSWORD}@{}/0", crate::silent_endpoint().await);
    let builder = RedisStore::builder(&url).connect_timeout(BOUND).operation_timeout(BOUND);
    let error = times_out("connect", builder.connect()).await;
    assert!(error.to_string().contains("connect timed out after 1 s (the connect timeout)"), "{error}");
    assert!(!format!("{error} {error:?}").contains(SILENT_PASSWORD), "{error:?}");
}
