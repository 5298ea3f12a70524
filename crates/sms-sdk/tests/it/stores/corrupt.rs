//! Rows a store could not have written (another program's, or damaged ones) read back as typed
//! corrupt-record errors that name their key: never a panic, in `get`, `reserve`, `list` or the
//! error's `Debug`.

use std::fmt::Debug;
use std::time::SystemTime;

use sms_sdk::store::{Filter, Fingerprint, IdempotencyStore, Operator, Page, StoreError};
use sms_sdk::testing::store_contract::sample_receipt;

#[cfg(any(feature = "postgres", feature = "redis"))]
use super::uuid_suffix;

/// One stored row, column by column.
struct Bad {
    name: String,
    state: &'static str,
    fingerprint: String,
    reservation_id: Option<&'static str>,
    reserved_at: Option<i64>,
    record: Option<String>,
    expires_at: Option<i64>,
}

/// Rows that no store writes: a fingerprint cut inside a character, an unknown state, a result
/// that does not parse, times out of range, a reservation without its id, and a long key.
fn bad_rows() -> Vec<Bad> {
    let hex = Fingerprint::from_canonical("corrupt").as_str().to_owned();
    let now = i64::try_from(SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_millis()).unwrap();
    let receipt = serde_json::to_string(&sample_receipt("p")).unwrap();
    let reserved = |name: &str, fingerprint: String, reserved_at: Option<i64>| Bad {
        name: name.to_owned(),
        state: "reserved",
        fingerprint,
        reservation_id: Some("r1"),
        reserved_at,
        record: None,
        expires_at: None,
    };
    vec![
        reserved("fingerprint-split", format!("{}é{}", &hex[..11], &hex[13..]), Some(now)),
        reserved("fingerprint-short", "abc".into(), Some(now)),
        reserved("reserved-before-1970", hex.clone(), Some(-5)),
        reserved("reserved-after-9999", hex.clone(), Some(i64::MAX)),
        Bad { reservation_id: None, ..reserved("no-reservation-id", hex.clone(), Some(now)) },
        Bad { state: "sent", ..reserved("unknown-state", hex.clone(), Some(now)) },
        Bad { state: "accepted", record: Some("{not json".into()), ..reserved("bad-json", hex.clone(), None) },
        Bad {
            state: "accepted",
            record: Some(receipt),
            expires_at: Some(i64::MAX),
            ..reserved("expires-after-9999", hex.clone(), None)
        },
        Bad { state: "unknown", record: Some("[]".into()), ..reserved(&"x".repeat(100), hex, None) },
    ]
}

/// `result` is a corrupt-record error naming `key` (cut to 64 characters).
fn assert_corrupt<T: Debug>(what: &str, key: &str, result: Result<T, StoreError>) {
    let error = result.expect_err(&format!("{what} {key}: a corrupt row read back"));
    let shown = error.to_string();
    assert!(error.is_corrupt(), "{what} {key}: {shown}");
    let named: String = key.chars().take(64).collect();
    assert!(shown.contains(&format!("{named:?}")), "{what}: {shown} does not name {key:?}");
    assert!(key.chars().count() <= 64 || !shown.contains(key), "{what}: the whole long key is in {shown}");
    let _ = format!("{error:?}");
}

/// `get`, `reserve` and `list` over the rows of [`bad_rows`] and the `extra` keys (a store of
/// its own: nothing else is listed).
async fn check(store: &(impl IdempotencyStore + Operator), extra: &[&str]) {
    let fingerprint = Fingerprint::from_canonical("another message");
    let names: Vec<String> =
        bad_rows().into_iter().map(|b| b.name).chain(extra.iter().map(|&n| n.to_owned())).collect();
    for key in names {
        assert_corrupt("get", &key, store.get(&key).await);
        assert_corrupt(
            "reserve",
            &key,
            store.reserve(&key, sms_sdk::store::Claim::new(&fingerprint), SystemTime::now()).await,
        );
    }
    let listed = store.list(Filter::All, SystemTime::now(), Page::default()).await;
    let error = listed.expect_err("a listing of corrupt rows");
    assert!(error.is_corrupt(), "{error}");
    let _ = format!("{error:?}");
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_sqlite_rows_are_typed_errors() {
    use sms_sdk::store::sqlite::SqliteStore;

    let path = super::temp_db();
    let store = SqliteStore::open(&path).await.unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch("PRAGMA ignore_check_constraints = ON").unwrap();
    let insert =
        "INSERT INTO sms_idempotency (key, state, fingerprint, reservation_id, reserved_at, record, expires_at)
                  VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    for b in bad_rows() {
        let values =
            rusqlite::params![b.name, b.state, b.fingerprint, b.reservation_id, b.reserved_at, b.record, b.expires_at];
        raw.execute(insert, values).unwrap();
    }
    // SQLite keeps any type in any column: a time that is text.
    let fingerprint = Fingerprint::from_canonical("x").as_str().to_owned();
    raw.execute(
        insert,
        rusqlite::params!["text-time", "reserved", fingerprint, "r1", "yesterday", None::<String>, None::<i64>],
    )
    .unwrap();
    check(&store, &["text-time"]).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_postgres_rows_are_typed_errors() {
    use sms_sdk::store::postgres::PostgresStore;

    let url = super::server_url("SMS_SDK_TEST_POSTGRES_URL");
    let table = format!("sms_corrupt_{}", uuid_suffix());
    let store = PostgresStore::builder(&url).table(&table).connect().await.unwrap();
    let (raw, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    raw.batch_execute(&format!("ALTER TABLE {table} DROP CONSTRAINT {table}_state_check")).await.unwrap();
    let insert = format!(
        "INSERT INTO {table} (key, state, fingerprint, reservation_id, reserved_at, record, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)"
    );
    for b in bad_rows() {
        let values: [&(dyn tokio_postgres::types::ToSql + Sync); 7] =
            [&b.name, &b.state, &b.fingerprint, &b.reservation_id, &b.reserved_at, &b.record, &b.expires_at];
        raw.execute(&insert, &values).await.unwrap();
    }
    check(&store, &[]).await;
    raw.batch_execute(&format!("DROP TABLE {table}; DROP TABLE {table}_dedupe")).await.unwrap();
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_redis_hashes_are_typed_errors() {
    use sms_sdk::store::redis::RedisStore;

    let url = super::server_url("SMS_SDK_TEST_REDIS_URL");
    let prefix = format!("corrupt:{}:", uuid_suffix());
    let store = RedisStore::builder(&url).prefix(&prefix).connect().await.unwrap();
    let mut raw = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let hash = |name: &str| format!("{prefix}idempotency:{name}");
    for b in bad_rows() {
        let mut fields = vec![("state", b.state.to_owned()), ("fingerprint", b.fingerprint)];
        fields.extend(b.reservation_id.map(|id| ("reservation_id", id.to_owned())));
        fields.extend(b.reserved_at.map(|at| ("reserved_at", at.to_string())));
        fields.extend(b.record.map(|record| ("record", record)));
        fields.extend(b.expires_at.map(|at| ("expires_at", at.to_string())));
        let () = redis::cmd("HSET").arg(hash(&b.name)).arg(&fields).query_async(&mut raw).await.unwrap();
    }
    // A hash holds text only: an expiry that is no number, and a record without its state.
    let fingerprint = Fingerprint::from_canonical("x").as_str().to_owned();
    let fields =
        [("state", "accepted"), ("fingerprint", fingerprint.as_str()), ("record", "{}"), ("expires_at", "soon")];
    let () = redis::cmd("HSET").arg(hash("text-time")).arg(&fields).query_async(&mut raw).await.unwrap();
    let () = redis::cmd("HSET")
        .arg(hash("no-state"))
        .arg("fingerprint")
        .arg(&fingerprint)
        .query_async(&mut raw)
        .await
        .unwrap();
    check(&store, &["text-time", "no-state"]).await;
}
