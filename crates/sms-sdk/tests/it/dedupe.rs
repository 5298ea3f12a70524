//! Every shipped idempotency store is also a webhook dedupe store and passes the dedupe contract.

use std::sync::Arc;

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
        let retention = Duration::from_secs(60);
        let store = SqliteStore::open(&path).await.unwrap();
        assert!(store.first_seen_at("evt-1", now, retention).await.unwrap());
        drop(store);
        let reopened = SqliteStore::open(&path).await.unwrap();
        assert!(!reopened.first_seen_at("evt-1", now, retention).await.unwrap());
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
        assert!(store.first_seen_at("evt-1", now, Duration::from_secs(60)).await.unwrap());
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
