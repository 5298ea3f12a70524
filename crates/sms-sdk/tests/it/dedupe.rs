//! Every shipped idempotency store is also a webhook dedupe store and passes the dedupe contract.

use std::sync::Arc;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
use sms_sdk::store::DedupeClaim;
use sms_sdk::store::DedupeStore;
use sms_sdk::store::MemoryStore;
use sms_sdk::testing::dedupe_contract;

async fn assert_contract(name: &str, store: Arc<dyn DedupeStore>) {
    let report = dedupe_contract::run(name, store).await;
    assert!(report.passed, "{}", report.failures());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_passes_the_dedupe_contract() {
    assert_contract("memory", Arc::new(MemoryStore::new())).await;
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::stores::temp_db;
    use sms_sdk::store::sqlite::SqliteStore;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_store_passes_the_dedupe_contract() {
        let store = SqliteStore::open(temp_db()).await.unwrap();
        assert_contract("sqlite", Arc::new(store)).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_dedupe_keys_survive_reopening_the_file() {
        let path = temp_db();
        let now = SystemTime::now();
        let retention = Duration::from_mins(1);
        let store = SqliteStore::open(&path).await.unwrap();
        assert!(store.first_seen_at("evt-1", now, retention).await.unwrap());
        drop(store);
        let reopened = SqliteStore::open(&path).await.unwrap();
        assert!(!reopened.first_seen_at("evt-1", now, retention).await.unwrap());
    }

    /// A dedupe table made before claims (no `claim` column) gets the column when the store
    /// opens; its rows are done. An older release's statement keeps working on the new table,
    /// and takes a claim for a sighting (not first).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_an_old_dedupe_table_gets_the_claim_column_and_its_rows_are_done() {
        let path = temp_db();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let old = rusqlite::Connection::open(&path).unwrap();
        old.execute_batch(
            "CREATE TABLE sms_webhook_dedupe (key TEXT PRIMARY KEY, seen_at BIGINT NOT NULL, expires_at BIGINT NOT NULL);
             INSERT INTO sms_webhook_dedupe VALUES ('old', 1700000000000, 253402300799000);",
        )
        .unwrap();
        let store = SqliteStore::open(&path).await.unwrap();
        let columns: Vec<String> = old
            .prepare("SELECT name FROM pragma_table_info('sms_webhook_dedupe')")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(columns, ["key", "seen_at", "expires_at", "claim"]);
        assert_eq!(store.claim("old").await.unwrap(), DedupeClaim::Done);
        // Opening again (the column is there now) changes nothing.
        drop(store);
        let store = SqliteStore::open(&path).await.unwrap();
        assert_eq!(store.claim("old").await.unwrap(), DedupeClaim::Done);
        // The statement of the release before claims, on a key this release claimed: not first.
        let DedupeClaim::Claimed(token) = store.claim("held").await.unwrap() else { panic!("not claimed") };
        let now = i64::try_from(SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_millis()).unwrap();
        let previous = "INSERT INTO sms_webhook_dedupe (key, seen_at, expires_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (key) DO UPDATE SET seen_at = excluded.seen_at, expires_at = excluded.expires_at
             WHERE sms_webhook_dedupe.expires_at <= ?2 RETURNING key";
        let first: Option<String> =
            old.query_row(previous, rusqlite::params!["held", now, now + 60_000], |row| row.get(0)).ok();
        assert_eq!(first, None, "the older release took a live claim for a sighting");
        let first: Option<String> =
            old.query_row(previous, rusqlite::params!["by-old", now, now + 60_000], |row| row.get(0)).ok();
        assert_eq!(first.as_deref(), Some("by-old"));
        assert_eq!(store.claim("by-old").await.unwrap(), DedupeClaim::Done, "an older release's sighting is done");
        assert!(store.release("held", &token).await.unwrap());
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use super::*;
    use crate::stores::server_url;
    use sms_sdk::store::postgres::PostgresStore;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_store_passes_the_dedupe_contract() {
        let store = PostgresStore::connect(&server_url("SMS_SDK_TEST_POSTGRES_URL")).await.unwrap();
        assert_contract("postgres", Arc::new(store)).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_custom_table_gets_its_own_dedupe_table() {
        let url = server_url("SMS_SDK_TEST_POSTGRES_URL");
        let store = PostgresStore::builder(&url).table("sms_idempotency_custom").connect().await.unwrap();
        assert_contract("postgres (custom table)", Arc::new(store)).await;
    }

    /// A dedupe table made before claims gets the `claim` column on connect (under the advisory
    /// lock, by several stores at once); its rows are done.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_an_old_dedupe_table_gets_the_claim_column_and_its_rows_are_done() {
        let url = server_url("SMS_SDK_TEST_POSTGRES_URL");
        let table = format!("sms_old_dedupe_{}", crate::stores::uuid_suffix());
        let (raw, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        raw.batch_execute(&format!(
            "CREATE TABLE {table}_dedupe (key TEXT PRIMARY KEY, seen_at BIGINT NOT NULL, expires_at BIGINT NOT NULL);
             INSERT INTO {table}_dedupe VALUES ('old', 1700000000000, 253402300799000)"
        ))
        .await
        .unwrap();
        let connecting: Vec<_> = (0..4)
            .map(|_| {
                let (url, table) = (url.clone(), table.clone());
                tokio::spawn(async move { PostgresStore::builder(&url).table(&table).connect().await })
            })
            .collect();
        let mut stores = Vec::new();
        for store in connecting {
            stores.push(store.await.unwrap().unwrap());
        }
        let columns: Vec<String> = raw
            .query(
                "SELECT column_name::text FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
                &[&format!("{table}_dedupe")],
            )
            .await
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        assert_eq!(columns, ["key", "seen_at", "expires_at", "claim"]);
        for store in &stores {
            assert_eq!(store.claim("old").await.unwrap(), DedupeClaim::Done);
        }
        let DedupeClaim::Claimed(_) = stores[0].claim("new").await.unwrap() else { panic!("not claimed") };
        assert_eq!(stores[1].claim("new").await.unwrap(), DedupeClaim::InFlight);
        drop(stores);
        raw.batch_execute(&format!("DROP TABLE {table}; DROP TABLE {table}_dedupe; DROP TABLE {table}_references"))
            .await
            .unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_store_passes_the_dedupe_contract_through_pgbouncer() {
        let store = PostgresStore::connect(&crate::stores::pgbouncer_url()).await.unwrap();
        assert_contract("postgres through PgBouncer", Arc::new(store)).await;
    }
}

#[cfg(feature = "redis")]
mod redis {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::stores::server_url;
    use sms_sdk::store::redis::RedisStore;
    use sms_sdk::store::{Filter, Fingerprint, IdempotencyStore, Operator, Page, Reservation};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_store_passes_the_dedupe_contract() {
        let store = RedisStore::connect(&server_url("SMS_SDK_TEST_REDIS_URL")).await.unwrap();
        assert_contract("redis", Arc::new(store)).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_key_prefix_applies_to_dedupe_keys() {
        let prefix = format!("custom:dedupe-test:{}:", uuid_like());
        let store = RedisStore::builder(server_url("SMS_SDK_TEST_REDIS_URL")).prefix(&prefix).connect().await.unwrap();
        assert_contract("redis (custom prefix)", Arc::new(store)).await;
    }

    /// Dedupe keys and records live in separate namespaces under the prefix: the listing shows
    /// records only, including one whose idempotency key starts with `dedupe:`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn redis_operator_list_skips_dedupe_keys() {
        let prefix = format!("sms-sdk:dedupe-list:{}:", uuid_like());
        let store = RedisStore::builder(server_url("SMS_SDK_TEST_REDIS_URL")).prefix(&prefix).connect().await.unwrap();
        let now = SystemTime::now();
        assert!(store.first_seen_at("evt-1", now, Duration::from_mins(1)).await.unwrap());
        assert_eq!(listed_keys(&store, now).await, Vec::<String>::new(), "dedupe keys were listed as records");
        let reserved = store
            .reserve("dedupe:order-1", sms_sdk::store::Claim::new(&Fingerprint::from_canonical("f")), now)
            .await
            .unwrap();
        assert!(matches!(reserved, Reservation::Acquired(_)), "{reserved:?}");
        assert_eq!(listed_keys(&store, now).await, ["dedupe:order-1"]);
    }

    /// Every key the store lists, page after page (over a server shared with other runs, a page
    /// may end early, even empty).
    async fn listed_keys(store: &RedisStore, now: SystemTime) -> Vec<String> {
        let (mut keys, mut page) = (Vec::new(), Page::default());
        loop {
            let listing = store.list(Filter::All, now, page.clone()).await.unwrap();
            keys.extend(listing.entries.into_iter().map(|e| e.key));
            match listing.next {
                Some(next) => page.cursor = Some(next),
                None => return keys,
            }
        }
    }

    fn uuid_like() -> String {
        format!("{:x}", SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos())
    }
}
