//! Golden fixtures of the stored format: rows exactly as each release wrote them, in every store,
//! read back by today's code.
//!
//! `tests/fixtures/stored/v<N>/` holds what the code of format version N wrote: `sqlite.db` (the
//! SQLite file), `postgres.sql` (`pg_dump --inserts` of the tables) and `redis.json` (every key
//! under the prefix, with its type and value). Version 0 (no `v` field) was written by commit
//! 0c92c03, the last code that stored the public `Receipt` and `ErrorRecord` as they are.
//!
//! A change of the stored format adds a directory, written by the ignored test below on the new
//! code, and never edits an old one:
//!
//! ```sh
//! scripts/test.sh   # or start the servers, then:
//! cargo test -p sms-sdk --all-features --test it stores::golden::write -- --ignored
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use sms_sdk::adapter::{Adapter, AdapterInfo, Outcome, SendContext};
use sms_sdk::store::postgres::PostgresStore;
use sms_sdk::store::redis::RedisStore;
use sms_sdk::store::sqlite::SqliteStore;
use sms_sdk::store::suppression::{
    Change, PostgresSuppressionStore, RedisSuppressionStore, Scope, SqliteSuppressionStore, SuppressionStore,
};
use sms_sdk::store::{
    Claim, DedupeClaim, DedupeStore as _, FinalRecord, Fingerprint, IdempotencyStore as _, MemoryStore, Operator as _,
    Record, ReferenceIndex as _, Reservation, Resolution, Store,
};
use sms_sdk::testing::{MemoryAdapter, RejectedOptions, accepted_outcome, rejected_outcome, unknown_outcome};
use sms_sdk::{Category, Client, Failover, Issue, Message, OutboundMessage, PhoneNumber, UnknownReason};

use super::server_url;

/// The format version the code writes today.
const WRITES: u32 = 1;

/// A time every fixture keeps: far enough that nothing written with it expires.
const KEEP: Duration = Duration::from_hours(10 * 365 * 24);

/// The fixtures' directory of format `version`.
fn dir(version: u32) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stored").join(format!("v{version}"))
}

/// A memory adapter that says where its requests go, as the HTTP adapters do.
#[derive(Debug, Clone)]
struct Endpointed {
    inner: MemoryAdapter,
    info: AdapterInfo,
}

impl Endpointed {
    fn new(name: &str, outcomes: Vec<Outcome>) -> Self {
        let inner = MemoryAdapter::builder().name(name).outcomes(outcomes).build();
        let info = inner.info().clone().endpoint(format!("https://api.{name}.example"));
        Self { inner, info }
    }
}

impl Adapter for Endpointed {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        self.inner.send(message, cx).await
    }

    fn validate(&self, message: &OutboundMessage) -> Vec<Issue> {
        self.inner.validate(message)
    }
}

fn code(code: &str) -> RejectedOptions {
    RejectedOptions { code: Some(code.into()), ..RejectedOptions::default() }
}

/// The records of real sends, made through a client on a memory store: every final state, a
/// failover, every provider rejected, and a key that is not ASCII.
async fn sent_records() -> Vec<(String, Record)> {
    let store = Arc::new(MemoryStore::new());
    let send = |key: &str, body: &str, adapters: Vec<Endpointed>| {
        let store = Arc::clone(&store);
        let message = Message::new("+14155550123", body).idempotency_key(key);
        async move {
            let builder = Client::builder().failover(Failover::OnEligibleRejection).idempotency(store);
            let client = adapters.into_iter().fold(builder, sms_sdk::ClientBuilder::adapter).build().unwrap();
            let _ = client.send(&message).await;
        }
    };
    send("accepted", "Your order has shipped.", vec![Endpointed::new("twilio", vec![accepted_outcome("SM1")])]).await;
    let failover = vec![
        Endpointed::new("twilio", vec![rejected_outcome(Category::Sender, code("21606"))]),
        Endpointed::new("telnyx", vec![accepted_outcome("40317f5e-0000-4000-8000-000000000001")]),
    ];
    send("failed-over", "Your code is 1234.", failover).await;
    let rejected = vec![Endpointed::new("twilio", vec![rejected_outcome(Category::Recipient, code("21211"))])];
    send("rejected", "Hello", rejected).await;
    let everyone = vec![
        Endpointed::new("twilio", vec![rejected_outcome(Category::Sender, code("21606"))]),
        Endpointed::new("telnyx", vec![rejected_outcome(Category::Account, code("10009"))]),
    ];
    send("all-rejected", "Hello", everyone).await;
    send("unknown", "Hello", vec![Endpointed::new("twilio", vec![unknown_outcome(UnknownReason::Timeout)])]).await;
    send("clé ünïcode", "Grüße 👋", vec![Endpointed::new("vonage", vec![accepted_outcome("aaaaaaaa-bbbb")])]).await;
    let mut records = Vec::new();
    for key in ["accepted", "failed-over", "rejected", "all-rejected", "unknown", "clé ünïcode"] {
        records.push((key.to_owned(), store.get(key).await.unwrap().unwrap()));
    }
    records
}

/// Writes every state into `store`, and the other tables: a settled key, a fresh and a stale
/// reservation, a dedupe key, a correlation reference, and suppression entries.
async fn fill(store: &dyn Store, suppression: &dyn SuppressionStore) {
    let now = SystemTime::now();
    for (key, record) in sent_records().await {
        let claim = Claim::new(record.fingerprint()).to("+14155550123");
        let Reservation::Acquired(id) = store.reserve(&key, claim, now).await.unwrap() else {
            panic!("{key} was already there")
        };
        let last = match record {
            Record::Accepted { result, .. } => FinalRecord::Accepted(result),
            Record::Rejected { error, .. } => FinalRecord::Rejected(error),
            Record::Unknown { error, .. } => FinalRecord::Unknown(error),
            Record::Reserved { .. } => unreachable!("sends finish"),
        };
        store.finalize(&key, &id, last, KEEP, now).await.unwrap();
    }
    let fingerprint = Fingerprint::from_canonical("golden");
    let claim = Claim::new(&fingerprint).to("+14155550123");
    store.reserve("reserved", claim, now).await.unwrap();
    store.reserve("stale", claim, now - Duration::from_hours(1)).await.unwrap();
    store.reserve("settled", claim, now - Duration::from_hours(1)).await.unwrap();
    let endpoint = Some("http://127.0.0.1:4010".to_owned());
    let sent = Resolution::Sent { provider: "twilio".into(), provider_id: "SM2".into(), ttl: KEEP, endpoint };
    store.resolve("settled", sent, Duration::from_mins(5), now).await.unwrap();
    assert!(store.first_seen_at("twilio:SM1:delivered", now, KEEP).await.unwrap());
    store.remember_reference("ref-unknown", "unknown", now, KEEP).await.unwrap();
    let number = PhoneNumber::parse("+14155550123").unwrap();
    let other = PhoneNumber::parse("+447700900123").unwrap();
    #[allow(clippy::duration_suboptimal_units)] // a point in time, in epoch seconds
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_547_200);
    let changes = [
        Change::opt_out(number.clone(), Scope::Account, at, "keyword:STOP"),
        Change::opt_out(other.clone(), "sender:+15005550006".parse().unwrap(), at, "operator"),
        Change::opt_in(other, Scope::Account, at, "keyword:START"),
    ];
    suppression.apply(&changes, now).await.unwrap();
}

/// Writes the fixtures of format [`WRITES`] (never over an existing directory).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes the golden fixtures of a new stored format version"]
async fn write() {
    let dir = dir(WRITES);
    assert!(!dir.exists(), "{} exists: a format version's fixtures are never rewritten", dir.display());
    std::fs::create_dir_all(&dir).unwrap();

    let sqlite = SqliteStore::open(dir.join("sqlite.db")).await.unwrap();
    fill(&sqlite, &SqliteSuppressionStore::open(sqlite.clone()).await.unwrap()).await;
    drop(sqlite);
    // Everything into the one file (the store's connection closes on its own thread).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let file = rusqlite::Connection::open(dir.join("sqlite.db")).unwrap();
    file.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    drop(file);
    for extra in ["sqlite.db-wal", "sqlite.db-shm"] {
        let _ = std::fs::remove_file(dir.join(extra));
    }

    let (admin, database) = (server_url("SMS_SDK_TEST_POSTGRES_URL"), format!("golden_v{WRITES}"));
    let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client.batch_execute(&format!("DROP DATABASE IF EXISTS {database}")).await.unwrap();
    client.batch_execute(&format!("CREATE DATABASE {database}")).await.unwrap();
    let url = format!("{}/{database}", admin.rsplit_once('/').unwrap().0);
    let postgres = PostgresStore::connect(&url).await.unwrap();
    fill(&postgres, &PostgresSuppressionStore::open(postgres.clone()).await.unwrap()).await;
    drop(postgres);
    let dump = std::process::Command::new(pg_dump())
        .args(["--inserts", "--no-owner", "--no-privileges", "--dbname", &url])
        .output()
        .unwrap();
    assert!(dump.status.success(), "{}", String::from_utf8_lossy(&dump.stderr));
    std::fs::write(dir.join("postgres.sql"), dump.stdout).unwrap();
    client.batch_execute(&format!("DROP DATABASE {database}")).await.unwrap();

    let prefix = format!("golden-v{WRITES}:");
    let url = server_url("SMS_SDK_TEST_REDIS_URL");
    let redis = RedisStore::builder(url.as_str()).prefix(prefix.as_str()).connect().await.unwrap();
    fill(&redis, &RedisSuppressionStore::new(redis.clone())).await;
    let dumped = dump_redis(&url, &prefix).await;
    std::fs::write(dir.join("redis.json"), serde_json::to_string_pretty(&dumped).unwrap() + "\n").unwrap();
}

/// The newest installed PostgreSQL's `pg_dump`.
fn pg_dump() -> PathBuf {
    let mut bins: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|dirs| dirs.filter_map(Result::ok).map(|d| d.path().join("bin/pg_dump")).collect())
        .unwrap_or_default();
    bins.sort();
    bins.pop().filter(|p| p.exists()).unwrap_or_else(|| PathBuf::from("pg_dump"))
}

/// Every key under `prefix` (removed from the name) with its type and value; the keys are
/// deleted afterwards.
async fn dump_redis(url: &str, prefix: &str) -> Value {
    let client = redis::Client::open(url).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{prefix}*")).query_async(&mut c).await.unwrap();
    let mut out = BTreeMap::new();
    for key in keys {
        let kind: String = redis::cmd("TYPE").arg(&key).query_async(&mut c).await.unwrap();
        let value = match kind.as_str() {
            "hash" => {
                let map: BTreeMap<String, String> = redis::cmd("HGETALL").arg(&key).query_async(&mut c).await.unwrap();
                json!(map)
            }
            "string" => json!(redis::cmd("GET").arg(&key).query_async::<String>(&mut c).await.unwrap()),
            "zset" => {
                let members: Vec<(String, f64)> =
                    redis::cmd("ZRANGE").arg(&key).arg(0).arg(-1).arg("WITHSCORES").query_async(&mut c).await.unwrap();
                json!(members)
            }
            other => panic!("{key}: a {other} key; the dump knows hash, string and zset"),
        };
        let name = key.strip_prefix(prefix).unwrap().to_owned();
        out.insert(name, json!({"type": kind, "value": value}));
        let _: () = redis::cmd("DEL").arg(&key).query_async(&mut c).await.unwrap();
    }
    json!(out)
}

/// Every format version whose fixtures are committed.
fn versions() -> Vec<u32> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stored");
    let mut versions: Vec<u32> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.strip_prefix('v')?.parse().ok())
        .collect();
    versions.sort_unstable();
    assert!(versions.contains(&0), "the version 0 fixtures are missing");
    versions
}

/// What every version's fixtures hold, read through the store's public operations.
async fn check(version: u32, store: Arc<dyn Store>, suppression: &dyn SuppressionStore) {
    let at = |key: &str| format!("v{version}: {key}");
    let get = |key: &'static str| {
        let store = Arc::clone(&store);
        async move { store.get(key).await.unwrap().unwrap_or_else(|| panic!("{key}")) }
    };
    let accepted = |record: Record| match record {
        Record::Accepted { result, .. } => result,
        other @ (Record::Reserved { .. } | Record::Rejected { .. } | Record::Unknown { .. }) => {
            panic!("not accepted: {other:?}")
        }
    };
    let error = |record: Record| match record {
        Record::Rejected { error, .. } | Record::Unknown { error, .. } => error,
        other @ (Record::Reserved { .. } | Record::Accepted { .. }) => panic!("not an error: {other:?}"),
    };
    let receipt = accepted(get("accepted").await);
    assert_eq!((receipt.provider.as_str(), receipt.provider_id.as_str()), ("twilio", "SM1"), "{}", at("accepted"));
    assert_eq!(receipt.attempts[0].endpoint.as_deref(), Some("https://api.twilio.example"));
    let receipt = accepted(get("failed-over").await);
    assert_eq!(receipt.attempted_providers, ["twilio", "telnyx"], "{}", at("failed-over"));
    assert_eq!(receipt.attempts.len(), 2);
    let receipt = accepted(get("clé ünïcode").await);
    assert_eq!((receipt.provider.as_str(), receipt.encoding.as_str()), ("vonage", "ucs2"), "{}", at("unicode"));
    let settled = accepted(get("settled").await);
    assert_eq!((settled.provider.as_str(), settled.provider_id.as_str()), ("twilio", "SM2"), "{}", at("settled"));
    let Record::Accepted { endpoint, .. } = get("settled").await else { unreachable!() };
    let Record::Accepted { endpoint: sent_to, .. } = get("accepted").await else { unreachable!() };
    assert_eq!(sent_to.as_deref(), Some("https://api.twilio.example"), "{}: from its attempt", at("accepted"));
    if version >= 1 {
        assert_eq!(endpoint.as_deref(), Some("http://127.0.0.1:4010"), "{}: settled for", at("settled"));
        for key in ["accepted", "rejected", "unknown", "reserved", "settled"] {
            let record = get(key).await;
            assert_eq!(record.to().map(PhoneNumber::as_str), Some("+14155550123"), "{}: the recipient", at(key));
            assert!(record.reserved_at().is_some(), "{}: the reservation time", at(key));
        }
    } else {
        assert_eq!(endpoint, None, "{}: version 0 kept no endpoint", at("settled"));
        assert_eq!(get("unknown").await.to(), None, "{}: version 0 kept no recipient", at("unknown"));
    }

    let record = get("rejected").await;
    assert_eq!(record.state().as_str(), "rejected");
    let rejected = error(record);
    assert_eq!((rejected.code.as_str(), rejected.category), ("provider_rejected", Some(Category::Recipient)));
    let everyone = error(get("all-rejected").await);
    assert_eq!((everyone.code.as_str(), everyone.errors.len()), ("all_providers_rejected", 2), "{}", at("all"));
    let record = get("unknown").await;
    assert_eq!(record.state().as_str(), "unknown");
    assert_eq!(error(record).attempts[0].endpoint.as_deref(), Some("https://api.twilio.example"));
    for key in ["reserved", "stale"] {
        assert!(matches!(get(key).await, Record::Reserved { .. }), "{}", at(key));
    }

    let mut keys = Vec::new();
    let mut page = sms_sdk::store::Page::default();
    loop {
        let listing = store.list(sms_sdk::store::Filter::All, SystemTime::now(), page.clone()).await.unwrap();
        keys.extend(listing.entries.into_iter().map(|e| e.key));
        match listing.next {
            Some(cursor) => page.cursor = Some(cursor),
            None => break,
        }
    }
    keys.sort();
    let expected = [
        "accepted",
        "all-rejected",
        "clé ünïcode",
        "failed-over",
        "rejected",
        "reserved",
        "settled",
        "stale",
        "unknown",
    ];
    assert_eq!(keys, expected, "v{version}: the listing");

    let now = SystemTime::now();
    assert!(!store.first_seen_at("twilio:SM1:delivered", now, KEEP).await.unwrap(), "v{version}: the dedupe key");
    // A sighting written before claims existed is done to a claim.
    let claim = store.claim_at("twilio:SM1:delivered", now, Duration::from_mins(1)).await.unwrap();
    assert_eq!(claim, DedupeClaim::Done, "v{version}: the dedupe key is done");
    assert_eq!(store.find_reference("ref-unknown", now).await.unwrap().as_deref(), Some("unknown"));

    let number = PhoneNumber::parse("+14155550123").unwrap();
    let other = PhoneNumber::parse("+447700900123").unwrap();
    let sender: Scope = "sender:+15005550006".parse().unwrap();
    assert_eq!(suppression.check(&number, &[Scope::Account]).await.unwrap().unwrap().reason, "keyword:STOP");
    assert!(suppression.check(&other, &[Scope::Account]).await.unwrap().is_none(), "v{version}: opted in");
    assert!(suppression.check(&other, &[Scope::Account, sender]).await.unwrap().is_some(), "v{version}: sender");

    // A replay of the accepted key makes no request.
    let twilio = Endpointed::new("twilio", Vec::new());
    let client = Client::builder().adapter(twilio.clone()).idempotency(store).build().unwrap();
    let message = Message::new("+14155550123", "Your order has shipped.").idempotency_key("accepted");
    let replayed = client.send(&message).await.unwrap();
    assert!(replayed.replayed && replayed.provider_id == "SM1", "v{version}: the replay");
    assert!(twilio.inner.sent().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_version_reads_in_sqlite() {
    for version in versions() {
        let path = super::temp_db();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::copy(dir(version).join("sqlite.db"), &path).unwrap();
        let store = SqliteStore::open(&path).await.unwrap();
        let suppression = SqliteSuppressionStore::open(store.clone()).await.unwrap();
        check(version, Arc::new(store), &suppression).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_version_reads_in_postgres() {
    let admin = server_url("SMS_SDK_TEST_POSTGRES_URL");
    let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    for version in versions() {
        let database = format!("golden_read_v{version}_{}", super::uuid_suffix());
        client.batch_execute(&format!("CREATE DATABASE {database}")).await.unwrap();
        let url = format!("{}/{database}", admin.rsplit_once('/').unwrap().0);
        // The dump as psql would run it, without psql's own commands (`\restrict`).
        let dump = std::fs::read_to_string(dir(version).join("postgres.sql")).unwrap();
        let sql = dump.lines().filter(|l| !l.starts_with('\\')).collect::<Vec<_>>().join("\n");
        let (loader, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
        let running = tokio::spawn(connection);
        loader.batch_execute(&sql).await.unwrap();
        drop(loader);
        let _ = running.await;
        let store = PostgresStore::connect(&url).await.unwrap();
        let suppression = PostgresSuppressionStore::open(store.clone()).await.unwrap();
        check(version, Arc::new(store), &suppression).await;
        drop(suppression);
        client.batch_execute(&format!("DROP DATABASE {database} WITH (FORCE)")).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_version_reads_in_redis() {
    let url = server_url("SMS_SDK_TEST_REDIS_URL");
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    for version in versions() {
        let prefix = format!("golden-read-v{version}-{}:", super::uuid_suffix());
        let text = std::fs::read_to_string(dir(version).join("redis.json")).unwrap();
        let keys: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
        for (name, entry) in &keys {
            let key = format!("{prefix}{name}");
            let value = &entry["value"];
            let command = match entry["type"].as_str().unwrap() {
                "hash" => {
                    let mut command = redis::cmd("HSET");
                    command.arg(&key);
                    for (field, value) in value.as_object().unwrap() {
                        command.arg(field).arg(value.as_str().unwrap());
                    }
                    command
                }
                "string" => redis::cmd("SET").arg(&key).arg(value.as_str().unwrap()).clone(),
                "zset" => {
                    let mut command = redis::cmd("ZADD");
                    command.arg(&key);
                    for pair in value.as_array().unwrap() {
                        command.arg(pair[1].as_f64().unwrap()).arg(pair[0].as_str().unwrap());
                    }
                    command
                }
                other => panic!("{name}: {other}"),
            };
            let _: () = command.query_async(&mut c).await.unwrap();
        }
        let store = RedisStore::builder(url.as_str()).prefix(prefix.as_str()).connect().await.unwrap();
        let suppression = RedisSuppressionStore::new(store.clone());
        check(version, Arc::new(store), &suppression).await;
        for name in keys.keys() {
            let _: () = redis::cmd("DEL").arg(format!("{prefix}{name}")).query_async(&mut c).await.unwrap();
        }
    }
}

/// A row of a format newer than this code's, in each store: a typed error naming the version
/// from every operation that reads it, and the key is never taken for free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_format_is_a_typed_error_in_every_store() {
    const NEWER: &str = r#"{"v":99,"id":"sms_x","provider":"twilio","provider_id":"SM1","shape":"of the future"}"#;
    let fingerprint = Fingerprint::from_canonical("from the future").as_str().to_owned();
    let far = 253_402_300_799_000_i64;

    let path = super::temp_db();
    let sqlite = SqliteStore::open(&path).await.unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute(
        "INSERT INTO sms_idempotency (key, state, fingerprint, record, expires_at) VALUES ('next', 'accepted', ?1, ?2, ?3)",
        rusqlite::params![fingerprint, NEWER, far],
    )
    .unwrap();
    refuses_newer("SQLite", &sqlite).await;

    let url = server_url("SMS_SDK_TEST_POSTGRES_URL");
    let table = format!("sms_newer_{}", super::uuid_suffix());
    let postgres = PostgresStore::builder(&url).table(&table).connect().await.unwrap();
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let insert = format!(
        "INSERT INTO {table} (key, state, fingerprint, record, expires_at) VALUES ('next', 'accepted', $1, $2, $3)"
    );
    client.execute(&insert, &[&fingerprint, &NEWER, &far]).await.unwrap();
    refuses_newer("PostgreSQL", &postgres).await;

    let url = server_url("SMS_SDK_TEST_REDIS_URL");
    let prefix = format!("newer-{}:", super::uuid_suffix());
    let redis = RedisStore::builder(url.as_str()).prefix(prefix.as_str()).connect().await.unwrap();
    let mut c = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("HSET")
        .arg(format!("{prefix}idempotency:next"))
        .arg("state")
        .arg("accepted")
        .arg("fingerprint")
        .arg(&fingerprint)
        .arg("record")
        .arg(NEWER)
        .arg("expires_at")
        .arg(far)
        .query_async(&mut c)
        .await
        .unwrap();
    refuses_newer("Redis", &redis).await;
    let _: () = redis::cmd("DEL").arg(format!("{prefix}idempotency:next")).query_async(&mut c).await.unwrap();
}

async fn refuses_newer(name: &str, store: &(impl sms_sdk::store::IdempotencyStore + sms_sdk::store::Operator)) {
    let newer = |what: &str, error: sms_sdk::store::StoreError| {
        assert!(error.is_newer_format() && !error.is_corrupt(), "{name} {what}: {error}");
        assert!(error.to_string().contains("version 99"), "{name} {what}: {error}");
    };
    newer("get", store.get("next").await.unwrap_err());
    let fingerprint = Fingerprint::from_canonical("from the future");
    newer("reserve", store.reserve("next", Claim::new(&fingerprint), SystemTime::now()).await.unwrap_err());
    let page = sms_sdk::store::Page::prefixed("next");
    newer("list", store.list(sms_sdk::store::Filter::All, SystemTime::now(), page).await.unwrap_err());
}
