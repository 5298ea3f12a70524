//! Crash safety: a sending process killed (SIGKILL) inside `reserve`, with its request in flight,
//! after the provider's answer but before `finalize`, or at a random moment of a run of sends.
//! After each kill the store reads without error (SQLite's file passes its integrity check; a
//! Redis killed and started again on its append-only file has every record as it was), a
//! leftover reservation reads as in progress and then, past the stale limit, as unresolved, and
//! no rerun of a key makes a second request for a message the provider got.
//!
//! The sending process is this test binary run again as a child (`worker.rs`); the provider is a
//! Twilio API on loopback in the parent that counts every request (`provider.rs`), so its record
//! outlives the child. Random moments come from a seeded generator: `SMS_SDK_CRASH_SEED` replays a run,
//! `SMS_SDK_CRASH_TRIALS` sets how many kills each store gets (20, or 200 with `SMS_SDK_LONG=1`).

mod provider;
mod worker;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use sms_sdk::store::{self, DEFAULT_STALE_RESERVATION, Filter, Page, Record, State, Store};
use sms_sdk::{Error, ErrorKind, Receipt, UnknownReason};

use self::provider::Provider;
use self::worker::{HOLD, Phase, TO, message};
use super::uuid_suffix;

const SEED_VAR: &str = "SMS_SDK_CRASH_SEED";
const DEFAULT_SEED: u64 = 20_261_201;
const TRIALS_VAR: &str = "SMS_SDK_CRASH_TRIALS";
const DEFAULT_TRIALS: u64 = 20;
/// A random kill comes this long at most after the worker starts sending.
const KILL_WINDOW: Duration = Duration::from_millis(40);
/// The stale limit of the reruns that must see a leftover reservation as unresolved.
const SHORT_STALE: Duration = Duration::from_millis(50);
/// How long a worker may take to reach the point where it is killed.
const WAIT: Duration = Duration::from_secs(30);

/// The store under test.
enum Backend {
    #[cfg(feature = "sqlite")]
    Sqlite(std::path::PathBuf),
    #[cfg(feature = "postgres")]
    Postgres(String),
    #[cfg(feature = "redis")]
    Redis(super::servers::RedisServer),
}

impl Backend {
    fn url(&self) -> String {
        match self {
            #[cfg(feature = "sqlite")]
            Self::Sqlite(path) => format!("sqlite:{}", path.display()),
            #[cfg(feature = "postgres")]
            Self::Postgres(url) => url.clone(),
            #[cfg(feature = "redis")]
            Self::Redis(server) => server.url.clone(),
        }
    }

    /// The store's URL for the worker on keys `prefix`: on PostgreSQL its connections carry the
    /// prefix as their application name, for [`after_kill`](Self::after_kill) to find them.
    fn worker_url(&self, prefix: &str) -> String {
        match self {
            #[cfg(feature = "postgres")]
            Self::Postgres(url) => {
                format!("{url}{}application_name={prefix}", if url.contains('?') { '&' } else { '?' })
            }
            #[allow(unreachable_patterns)] // only PostgreSQL names connections
            _ => self.url(),
        }
    }

    async fn open(&self) -> Arc<dyn Store> {
        store::open(&self.url()).await.unwrap_or_else(|e| panic!("opening the store after the crash: {e}"))
    }

    /// What the kill may have done to the store itself: SQLite's file passes its integrity
    /// check; Redis, killed too (SIGKILL) and started again, has every record of the trial as it
    /// was (the leftover reservation included). On PostgreSQL, waits until the server has ended
    /// the worker's sessions: a statement the worker sent just before it died runs to its end
    /// first, so that no write lands after the checks began.
    async fn after_kill(&self, prefix: &str) {
        match self {
            #[cfg(feature = "sqlite")]
            Self::Sqlite(path) => {
                let connection = rusqlite::Connection::open(path).unwrap();
                let check: String = connection.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
                assert_eq!(check, "ok", "the SQLite file is corrupt after the crash");
            }
            #[cfg(feature = "postgres")]
            Self::Postgres(url) => {
                let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
                tokio::spawn(connection);
                let sessions = "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1";
                let deadline = Instant::now() + WAIT;
                while client.query_one(sessions, &[&prefix]).await.unwrap().get::<_, i64>(0) > 0 {
                    assert!(Instant::now() < deadline, "the killed worker's sessions did not end");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
            #[cfg(feature = "redis")]
            Self::Redis(server) => {
                let before = records(&*self.open().await, Filter::All, prefix).await;
                tokio::task::block_in_place(|| {
                    server.kill();
                    server.start_again();
                });
                let after = records(&*self.open().await, Filter::All, prefix).await;
                assert_eq!(before, after, "a Redis restart lost or changed records");
            }
        }
    }
}

/// Every live record matching `filter` whose key starts with `prefix`, page after page.
async fn records(store: &dyn Store, filter: Filter, prefix: &str) -> BTreeMap<String, (Record, Option<SystemTime>)> {
    let mut all = BTreeMap::new();
    let mut page = Page::prefixed(prefix);
    loop {
        let listing = store.list(filter, SystemTime::now(), page.clone()).await.unwrap();
        all.extend(listing.entries.into_iter().map(|e| (e.key, (e.record, e.expires_at))));
        match listing.next {
            Some(next) => page.cursor = Some(next),
            None => return all,
        }
    }
}

/// Whether `filter` lists `key`.
async fn listed(store: &dyn Store, filter: Filter, key: &str) -> bool {
    records(store, filter, key).await.contains_key(key)
}

/// A worker process.
struct Worker {
    child: Child,
    lines: tokio::sync::mpsc::UnboundedReceiver<String>,
    said: Vec<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Worker {
    /// Runs `test` of this binary again, as the worker of `phase` on keys `prefix`.
    fn spawn(test: &str, phase: Phase, backend: &Backend, provider: &Provider, prefix: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([test, "--exact", "--nocapture", "--test-threads=1"])
            .env(worker::PHASE, phase.name())
            .env(worker::STORE_URL, backend.worker_url(prefix))
            .env(worker::PROVIDER_URL, provider.url())
            .env(worker::KEYS, prefix)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let (sender, lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // libtest's "test … ..." may share a line with the first thing said.
                if let Some((_, said)) = line.split_once(worker::SAYS) {
                    let _ = sender.send(said.to_owned());
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Self { child, lines, said: Vec::new(), stderr: Some(stderr) }
    }

    /// Waits until the worker says `line`.
    async fn wait_for(&mut self, line: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !self.said.iter().any(|said| said == line) {
            match tokio::time::timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(said)) => self.said.push(said),
                Ok(None) => self.fail(&format!("the worker ended before it said {line:?}")),
                Err(_) => self.fail(&format!("the worker did not say {line:?} in {WAIT:?}")),
            }
        }
    }

    fn fail(&mut self, why: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = self.stderr.take().map(|t| t.join().unwrap_or_default()).unwrap_or_default();
        panic!("{why}; it said {:?}; its stderr:\n{stderr}", self.said)
    }

    /// Kills the worker (SIGKILL) and returns everything it said.
    async fn kill(&mut self) -> Vec<String> {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        if status.signal() != Some(9) {
            self.fail(&format!("the worker ended ({status}) before it was killed"));
        }
        while let Some(said) = self.lines.recv().await {
            self.said.push(said);
        }
        self.said.clone()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends message `i` of `prefix` to `to` again, as a new process would, over a fresh store.
async fn rerun(
    store: &Arc<dyn Store>,
    provider: &Provider,
    prefix: &str,
    i: usize,
    to: &str,
    stale: Duration,
) -> Result<Receipt, Error> {
    // Short: a rerun that wrongly sends to HOLD fails in time, and the count then shows it.
    let client = worker::sender(&provider.url(), Arc::clone(store), stale, Duration::from_secs(2));
    client.send(&message(prefix, i, to)).await
}

/// A reservation a killed worker left for message `i` of `prefix`: in progress until the stale
/// limit, then unresolved; a rerun is refused either way (in progress, then an unknown outcome)
/// and makes no request, and the record stays as it was.
async fn leftover(store: &Arc<dyn Store>, provider: &Provider, prefix: &str, i: usize, to: &str) {
    let key = format!("{prefix}{i}");
    let made = provider.requests_for(&key);
    let Some(Record::Reserved { reserved_at, .. }) = store.get(&key).await.unwrap() else {
        panic!("{key} is not reserved")
    };
    assert!(listed(&**store, Filter::State(State::Reserved), &key).await, "{key} is not listed as in progress");
    let unresolved = |stale_after| Filter::Unresolved { stale_after };
    assert!(!listed(&**store, unresolved(DEFAULT_STALE_RESERVATION), &key).await, "{key} is stale at once");
    let error = rerun(store, provider, prefix, i, to, DEFAULT_STALE_RESERVATION).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::IdempotencyInProgress, "{error}");

    if let Ok(left) = (reserved_at + SHORT_STALE + Duration::from_millis(5)).duration_since(SystemTime::now()) {
        tokio::time::sleep(left).await;
    }
    assert!(listed(&**store, unresolved(SHORT_STALE), &key).await, "{key} is not listed as unresolved");
    let error = rerun(store, provider, prefix, i, to, SHORT_STALE).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unknown(UnknownReason::StaleReservation), "{error}");
    assert!(!error.is_retry_safe());
    assert_eq!(provider.requests_for(&key), made, "a rerun sent {key} again");
    assert!(matches!(store.get(&key).await.unwrap(), Some(Record::Reserved { .. })), "a rerun changed {key}");
}

/// The path of this module's test `name`, as libtest filters it.
fn test_path(name: &str) -> String {
    let module = module_path!();
    format!("{}::{name}", module.split_once("::").map_or(module, |(_, rest)| rest))
}

/// One kill at a fixed point: the worker reaches `phase` with message 0 and is killed there.
async fn phase_trial(name: &str, backend: impl FnOnce() -> Backend, phase: Phase) {
    if let Some(phase) = Phase::of_this_process() {
        return worker::run(phase).await;
    }
    let (backend, provider) = (backend(), Provider::start().await);
    let prefix = format!("crash-{}-{}-", phase.name(), uuid_suffix());
    let key = format!("{prefix}0");
    let mut worker = Worker::spawn(&test_path(name), phase, &backend, &provider, &prefix);
    match phase {
        Phase::BeforeReserve => worker.wait_for(&format!("reserve {key}")).await,
        Phase::InFlight => {
            worker.wait_for(&format!("reserved {key}")).await;
            let deadline = Instant::now() + WAIT;
            while provider.requests_for(&key) == 0 {
                assert!(Instant::now() < deadline, "the request never reached the provider");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        Phase::BeforeFinalize => worker.wait_for(&format!("finalize {key}")).await,
        Phase::Random => unreachable!("random kills are `random_trials`"),
    }
    worker.kill().await;
    provider.settle().await;
    backend.after_kill(&prefix).await;

    let store = backend.open().await;
    let record = store.get(&key).await.unwrap_or_else(|e| panic!("reading {key} after the crash: {e}"));
    let made = provider.requests_for(&key);
    if phase == Phase::BeforeReserve {
        assert_eq!((record, made), (None, 0), "a worker killed before its reservation left something");
        let first = rerun(&store, &provider, &prefix, 0, TO, DEFAULT_STALE_RESERVATION).await.unwrap();
        let again = rerun(&store, &provider, &prefix, 0, TO, DEFAULT_STALE_RESERVATION).await.unwrap();
        assert!(!first.replayed && again.replayed);
        assert_eq!(provider.requests_for(&key), 1);
    } else {
        assert!(matches!(record, Some(Record::Reserved { .. })), "{key}: {record:?}");
        assert_eq!(made, 1, "the provider got {made} requests for {key}");
        let to = if phase == Phase::InFlight { HOLD } else { TO };
        leftover(&store, &provider, &prefix, 0, to).await;
    }
}

/// Kills at random moments of a run of sends, `SMS_SDK_CRASH_TRIALS` times (seeded). After
/// each: every send that returned is accepted with one request; the one the kill interrupted is
/// absent (no request), reserved (refused on rerun, no second request) or accepted (replayed);
/// nothing after it exists.
async fn random_trials(name: &str, backend: impl FnOnce() -> Backend) {
    if let Some(phase) = Phase::of_this_process() {
        return worker::run(phase).await;
    }
    let number = |var: &str, default: u64| std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let long = std::env::var("SMS_SDK_LONG").is_ok_and(|v| v == "1");
    let default_trials = if long { DEFAULT_TRIALS * 10 } else { DEFAULT_TRIALS };
    let (seed, trials) = (number(SEED_VAR, DEFAULT_SEED), number(TRIALS_VAR, default_trials));
    // Shown when the test fails.
    eprintln!("{name}: seed {seed} ({SEED_VAR}), {trials} trials ({TRIALS_VAR})");
    let mut random = fastrand::Rng::with_seed(seed);
    let (backend, provider) = (backend(), Provider::start().await);
    let (mut phases, mut sends): (BTreeMap<&str, u64>, usize) = (BTreeMap::new(), 0);
    for trial in 0..trials {
        let delay = KILL_WINDOW.mul_f64(random.f64());
        eprintln!("trial {trial}: kill {delay:?} after the worker is ready");
        let prefix = format!("crash-random-{}-{trial}-", uuid_suffix());
        let mut worker = Worker::spawn(&test_path(name), Phase::Random, &backend, &provider, &prefix);
        worker.wait_for("ready").await;
        tokio::time::sleep(delay).await;
        let said = worker.kill().await;
        provider.settle().await;
        backend.after_kill(&prefix).await;

        let store = backend.open().await;
        let counts = provider.requests_per_key();
        let count = |i: usize| counts.get(&format!("{prefix}{i}")).copied().unwrap_or(0);
        let returned = said.iter().filter(|line| line.starts_with("sent ")).count();
        eprintln!("trial {trial}: {returned} sends returned before the kill");
        sends += returned + 1;
        for i in 0..returned {
            let record = store.get(&format!("{prefix}{i}")).await.unwrap();
            assert!(matches!(record, Some(Record::Accepted { .. })), "send {i} returned, and reads {record:?}");
            assert_eq!(count(i), 1, "send {i}");
            let replay = rerun(&store, &provider, &prefix, i, TO, SHORT_STALE).await.unwrap();
            assert!(replay.replayed, "send {i} was not replayed");
        }
        let key = format!("{prefix}{returned}");
        let record = store.get(&key).await.unwrap_or_else(|e| panic!("reading {key} after the crash: {e}"));
        // Where the kill fell, by what it left (a store call the kill interrupted may have been
        // carried out by the server).
        let phase = match (&record, count(returned)) {
            (None, 0) => "1 before reserve: nothing stored",
            (Some(Record::Reserved { .. }), 0) => "2 reserved, no request yet",
            (Some(Record::Reserved { .. }), 1) if said.contains(&format!("finalize {key}")) => {
                "4 after the response, before finalize"
            }
            (Some(Record::Reserved { .. }), 1) => "3 request in flight",
            (Some(Record::Accepted { .. }), 1) => "5 finalized, before the send returned",
            (record, made) => panic!("the interrupted send {key} reads {record:?} after {made} requests"),
        };
        *phases.entry(phase).or_default() += 1;
        if matches!(record, Some(Record::Reserved { .. })) {
            leftover(&store, &provider, &prefix, returned, TO).await;
        } else {
            let receipt = rerun(&store, &provider, &prefix, returned, TO, SHORT_STALE).await.unwrap();
            assert_eq!(receipt.replayed, record.is_some());
            assert_eq!(provider.requests_for(&key), 1);
        }
        let next = format!("{prefix}{}", returned + 1);
        assert_eq!(store.get(&next).await.unwrap(), None, "{next} was never sent");
    }
    let duplicates = provider.requests_per_key().into_values().filter(|&n| n > 1).count();
    assert_eq!(duplicates, 0, "keys sent twice");
    eprintln!("{name}: {trials} kills (seed {seed}) in {sends} sends, by phase: {phases:#?}; keys sent twice: 0");
}

/// The four trials of one store: a kill at each phase, and kills at random moments.
macro_rules! crash_tests {
    ($feature:literal, $backend:ident: $before:ident, $in_flight:ident, $finalize:ident, $random:ident) => {
        #[cfg(feature = $feature)]
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $before() {
            phase_trial(stringify!($before), $backend, Phase::BeforeReserve).await;
        }

        #[cfg(feature = $feature)]
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $in_flight() {
            phase_trial(stringify!($in_flight), $backend, Phase::InFlight).await;
        }

        #[cfg(feature = $feature)]
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $finalize() {
            phase_trial(stringify!($finalize), $backend, Phase::BeforeFinalize).await;
        }

        #[cfg(feature = $feature)]
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $random() {
            random_trials(stringify!($random), $backend).await;
        }
    };
}

#[cfg(feature = "sqlite")]
fn sqlite() -> Backend {
    Backend::Sqlite(super::temp_db())
}

crash_tests!("sqlite", sqlite: crash_sqlite_before_reserve, crash_sqlite_request_in_flight,
    crash_sqlite_after_response_before_finalize, crash_sqlite_at_random_moments);

/// The shared test server.
#[cfg(feature = "postgres")]
fn postgres() -> Backend {
    Backend::Postgres(super::server_url("SMS_SDK_TEST_POSTGRES_URL"))
}

crash_tests!("postgres", postgres: crash_postgres_before_reserve, crash_postgres_request_in_flight,
    crash_postgres_after_response_before_finalize, crash_postgres_at_random_moments);

/// A Redis of the test's own that fsyncs every write to its append-only file before it answers.
#[cfg(feature = "redis")]
fn redis() -> Backend {
    use super::servers::{Persistence, RedisServer};
    Backend::Redis(RedisServer::start_with(Persistence::AofAlways))
}

crash_tests!("redis", redis: crash_redis_before_reserve, crash_redis_request_in_flight,
    crash_redis_after_response_before_finalize, crash_redis_at_random_moments);

/// What the Redis store's docs warn of: a Redis that keeps nothing on disk forgets every
/// reservation and record when it restarts, so a key sent before sends again; with the
/// append-only file the same restart replays.
#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_redis_without_persistence_sends_again_after_a_restart() {
    use super::servers::{Persistence, RedisServer};
    use sms_sdk::Client;
    use sms_sdk::store::redis::RedisStore;
    use sms_sdk::testing::MemoryAdapter;

    for (persistence, sends) in [(Persistence::None, 2), (Persistence::AofAlways, 1)] {
        let server = tokio::task::spawn_blocking(move || RedisServer::start_with(persistence)).await.unwrap();
        let memory = MemoryAdapter::new();
        let client = |store| Client::builder().adapter(memory.clone()).idempotency(store).build().unwrap();
        let message = message("restart-", 0, TO);
        client(RedisStore::connect(&server.url).await.unwrap()).send(&message).await.unwrap();
        tokio::task::block_in_place(|| {
            server.kill();
            server.start_again();
        });
        // The application starts again too.
        let second = client(RedisStore::connect(&server.url).await.unwrap()).send(&message).await.unwrap();
        assert_eq!(memory.sent().len(), sends, "{persistence:?}");
        assert_eq!(second.replayed, sends == 1, "{persistence:?}");
    }
}
