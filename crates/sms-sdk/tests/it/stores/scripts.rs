//! The Redis store's scripts on a server of the test's own: loaded once and run by `EVALSHA`,
//! loaded again after `SCRIPT FLUSH` (as after a restart or failover), and each call touching
//! the one key of its idempotency key (one hash slot, for Redis Cluster); and the shared rate
//! limiter's script, reloaded after `SCRIPT FLUSH` too.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use redis::aio::MultiplexedConnection;
use sms_sdk::store::redis::RedisStore;
use sms_sdk::store::{
    DedupeClaim, DedupeStore, FinalRecord, Finalized, Fingerprint, IdempotencyStore, Operator, Reservation, Resolution,
    Resolved,
};
use sms_sdk::testing::store_contract;

use super::servers::RedisServer;

/// The calls of each command the server has run (`INFO commandstats`), by lowercase name.
async fn command_calls(raw: &mut MultiplexedConnection) -> HashMap<String, u64> {
    let info: String = redis::cmd("INFO").arg("commandstats").query_async(raw).await.unwrap();
    info.lines()
        .filter_map(|line| line.strip_prefix("cmdstat_"))
        .filter_map(|line| {
            let (name, stats) = line.split_once(':')?;
            let calls = stats.split(',').find_map(|s| s.strip_prefix("calls="))?;
            Some((name.to_owned(), calls.parse().ok()?))
        })
        .collect()
}

/// Every key on the server.
async fn keys(raw: &mut MultiplexedConnection) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(raw).await.unwrap();
    keys.sort();
    keys
}

/// A reserve and a finalize of `key`, which must both succeed.
async fn pair(store: &RedisStore, key: &str) {
    let fingerprint = Fingerprint::from_canonical("scripts");
    let now = SystemTime::now();
    let Reservation::Acquired(id) = store.reserve(key, sms_sdk::store::Claim::new(&fingerprint), now).await.unwrap()
    else {
        panic!("{key} was taken")
    };
    let record = FinalRecord::Rejected(store_contract::sample_error("provider_rejected"));
    let written = store.finalize(key, &id, record, Duration::from_mins(1), now).await.unwrap();
    assert_eq!(written, Finalized::Written);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_scripts_run_by_evalsha_and_reload_after_script_flush() {
    let server = RedisServer::start();
    let mut raw = redis::Client::open(server.url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let store = RedisStore::connect(&server.url).await.unwrap();
    let loaded = command_calls(&mut raw).await;
    assert_eq!(loaded.get("script|load"), Some(&5), "the five scripts are loaded on connect: {loaded:?}");

    for i in 0..5 {
        pair(&store, &format!("before-{i}")).await;
    }
    let calls = command_calls(&mut raw).await;
    assert_eq!(calls.get("evalsha"), Some(&10), "{calls:?}");
    assert_eq!(calls.get("eval"), None, "the script text is never sent again: {calls:?}");
    assert_eq!(calls.get("script|load"), Some(&5), "{calls:?}");

    // As after a failover to a replica that never saw the scripts.
    let () = redis::cmd("SCRIPT").arg("FLUSH").query_async(&mut raw).await.unwrap();
    pair(&store, "after").await;
    let resolved = store.resolve("after", Resolution::NotSent, Duration::ZERO, SystemTime::now()).await.unwrap();
    assert!(matches!(resolved, Resolved::Refused(_)), "a final record is refused: {resolved:?}");
    let DedupeClaim::Claimed(token) = store.claim("evt-after").await.unwrap() else { panic!("not claimed") };
    assert!(store.release("evt-after", &token).await.unwrap());
    let calls = command_calls(&mut raw).await;
    // Each script answered NOSCRIPT once, was loaded, and ran again.
    assert_eq!(calls.get("script|load"), Some(&(5 + 5)), "{calls:?}");
    assert_eq!(calls.get("evalsha"), Some(&(10 + 2 * 5)), "{calls:?}");
    assert!(store.get("after").await.unwrap().is_some());
}

/// A dedupe key is one string key under the prefix: a done sighting's epoch milliseconds, or a
/// claim's `c:<token>` with the lease as its expiry; each script call touches that one key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_dedupe_keys_are_one_string_each_a_claim_told_by_its_prefix() {
    let server = RedisServer::start();
    let mut raw = redis::Client::open(server.url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let store = RedisStore::builder(&server.url).prefix("app:").connect().await.unwrap();
    let DedupeClaim::Claimed(token) =
        store.claim_at("with {tag}", SystemTime::now(), Duration::from_secs(30)).await.unwrap()
    else {
        panic!("not claimed")
    };
    let value: String = redis::cmd("GET").arg("app:dedupe:with {tag}").query_async(&mut raw).await.unwrap();
    assert_eq!(value, format!("c:{}", token.as_str()));
    let ttl: i64 = redis::cmd("PTTL").arg("app:dedupe:with {tag}").query_async(&mut raw).await.unwrap();
    assert!(ttl > 25_000 && ttl <= 30_000, "the lease is the key's expiry: {ttl} ms");
    store.commit_at("with {tag}", SystemTime::now(), Duration::from_hours(1)).await.unwrap();
    let value: String = redis::cmd("GET").arg("app:dedupe:with {tag}").query_async(&mut raw).await.unwrap();
    assert!(value.parse::<u64>().is_ok(), "a done key holds its sighting's epoch ms, as before: {value}");
    assert!(!store.release("with {tag}", &token).await.unwrap(), "a done key is never released");
    // A sighting as an older release wrote it (any value but a claim's) is done.
    let () = redis::cmd("SET").arg("app:dedupe:old").arg("1700000000000").query_async(&mut raw).await.unwrap();
    assert_eq!(store.claim("old").await.unwrap(), DedupeClaim::Done);
    assert_eq!(keys(&mut raw).await, ["app:dedupe:old", "app:dedupe:with {tag}"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_each_key_is_one_hash_under_the_prefix() {
    let server = RedisServer::start();
    let mut raw = redis::Client::open(server.url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let store = RedisStore::builder(&server.url).prefix("app:").connect().await.unwrap();
    // Braces in a key only choose its slot: still one key per call.
    for key in ["plain", "with {tag} in it", "{}", "a:b:c"] {
        pair(&store, key).await;
    }
    let resolved = store.resolve("missing", Resolution::NotSent, Duration::ZERO, SystemTime::now()).await.unwrap();
    assert_eq!(resolved, Resolved::NotFound);
    assert_eq!(
        keys(&mut raw).await,
        ["app:idempotency:a:b:c", "app:idempotency:plain", "app:idempotency:with {tag} in it", "app:idempotency:{}"],
    );
    let fields: HashMap<String, String> =
        redis::cmd("HGETALL").arg("app:idempotency:plain").query_async(&mut raw).await.unwrap();
    let mut names: Vec<_> = fields.keys().map(String::as_str).collect();
    names.sort_unstable();
    // The final record keeps its reservation id: a finalize re-sent after a lost reply finds it.
    assert_eq!(names, ["expires_at", "fingerprint", "record", "reservation_id", "reserved_at", "state"]);
}

/// The shared rate limiter's script after `SCRIPT FLUSH` (a failover to a replica that never
/// saw it): the next decision reloads it and is still right.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_redis_script_reloads_after_script_flush() {
    use sms_sdk::rate::redis::RedisRateLimiter;
    use sms_sdk::rate::{Admit, RateLimit};

    let server = RedisServer::start();
    let mut raw = redis::Client::open(server.url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let limiter = RedisRateLimiter::builder(server.url.as_str()).connect().await.unwrap();
    let limit = RateLimit::per_second(10).burst(1);
    let at = |ms: u64| Some(ms * 1000 + 1_000_000_000);
    assert_eq!(limiter.admit_at("a", &limit, at(0)).await.unwrap(), Admit::Now);
    let before = command_calls(&mut raw).await;
    let () = redis::cmd("SCRIPT").arg("FLUSH").query_async(&mut raw).await.unwrap();
    assert_eq!(limiter.admit_at("a", &limit, at(0)).await.unwrap(), Admit::After(Duration::from_millis(100)));
    assert_eq!(limiter.admit_at("a", &limit, at(100)).await.unwrap(), Admit::Now);
    let after = command_calls(&mut raw).await;
    let loads = |calls: &HashMap<String, u64>| calls.get("script|load").copied().unwrap_or(0);
    assert_eq!(loads(&after), loads(&before) + 1, "loaded once more after the flush: {after:?}");
    assert_eq!(after.get("eval"), None, "the script text is not sent with each call: {after:?}");
}

/// The Redis suppression list's script: loaded once (on the first change, which the server
/// answers `NOSCRIPT`) and then run by `EVALSHA` without its text; after `SCRIPT FLUSH` the next
/// batch loads it once more, and each change in it is applied exactly once (a replayed event
/// still reads as replayed, a new one as recorded).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_suppression_script_is_loaded_once_and_reloads_after_script_flush() {
    use sms_sdk::PhoneNumber;
    use sms_sdk::store::suppression::{Applied, Change, RedisSuppressionStore, Scope, SuppressionStore};

    let server = RedisServer::start();
    let mut raw = redis::Client::open(server.url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let list = RedisSuppressionStore::new(RedisStore::connect(&server.url).await.unwrap());
    let loads = |calls: &HashMap<String, u64>| calls.get("script|load").copied().unwrap_or(0);
    let connected = loads(&command_calls(&mut raw).await);
    let now = SystemTime::now();
    let change = |to: &str, event: &str| {
        Change::opt_out(PhoneNumber::parse(to).unwrap(), Scope::Account, now, "keyword:STOP").event(event)
    };
    let (a, b, c) = ("+14155550101", "+14155550102", "+14155550103");

    let first = list.apply(&[change(a, "e1"), change(b, "e2")], now).await.unwrap();
    assert_eq!(first, [Applied::Recorded, Applied::Recorded]);
    let second = list.apply(&[change(a, "e1"), change(c, "e3")], now).await.unwrap();
    assert_eq!(second, [Applied::Replayed, Applied::Recorded]);
    let calls = command_calls(&mut raw).await;
    assert_eq!(loads(&calls), connected + 1, "loaded once, on the first change: {calls:?}");
    assert_eq!(calls.get("eval"), None, "the script text is not sent with each call: {calls:?}");

    let () = redis::cmd("SCRIPT").arg("FLUSH").query_async(&mut raw).await.unwrap();
    let third = list.apply(&[change(b, "e2"), change(c, "e4")], now).await.unwrap();
    assert_eq!(third, [Applied::Replayed, Applied::Stale], "each change applied once after the reload");
    let calls = command_calls(&mut raw).await;
    assert_eq!(loads(&calls), connected + 2, "loaded once more after the flush: {calls:?}");
    assert_eq!(calls.get("zadd"), Some(&3), "each batch's opt-outs indexed by one command: {calls:?}");
    assert!(list.check(&PhoneNumber::parse(c).unwrap(), &[Scope::Account]).await.unwrap().is_some());
}
