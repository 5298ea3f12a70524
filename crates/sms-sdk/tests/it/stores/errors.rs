//! A store failure says why (the driver's reason) and where (the file, or host, port and
//! database), and never shows a password: not in errors, not in the `Debug` of builders and
//! stores.

#[cfg(any(feature = "postgres", feature = "redis"))]
use sms_sdk::store::StoreError;

/// Neither the error's `Display` nor its `Debug` holds `secret`.
#[cfg(any(feature = "postgres", feature = "redis"))]
fn hides(error: &StoreError, secret: &str) {
    assert!(!error.to_string().contains(secret), "{error}");
    assert!(!format!("{error:?}").contains(secret), "{error:?}");
}

/// A loopback port nothing listens on.
#[cfg(any(feature = "postgres", feature = "redis"))]
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn a_sqlite_failure_names_the_file_and_the_reason() {
    use sms_sdk::store::sqlite::SqliteStore;

    let file = super::temp_db();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "not a folder").unwrap();
    let inside = file.join("state.db");
    let error = SqliteStore::open(&inside).await.unwrap_err();
    let shown = error.to_string();
    assert!(shown.starts_with(&format!("idempotency store error: SQLite at {}: ", inside.display())), "{shown}");
    assert!(shown.contains("File exists (os error 17)"), "the reason is missing: {shown}");
    let store = SqliteStore::open(&file.with_extension("ok")).await.unwrap();
    assert!(format!("{store:?}").contains(&file.with_extension("ok").display().to_string()));
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn a_postgres_failure_says_why_and_where_without_the_password() {
    use sms_sdk::store::IdempotencyStore;
    use sms_sdk::store::postgres::PostgresStore;

    let port = closed_port();
    let url = format!("postgres://app:s3cr3t-pw@127.0.0.1:{port}/orders");
    let builder = PostgresStore::builder(&url);
    assert!(format!("{builder:?}").contains(&format!("postgres://app:***@127.0.0.1:{port}/orders")), "{builder:?}");
    let error = builder.connect().await.unwrap_err();
    hides(&error, "s3cr3t-pw");
    let shown = error.to_string();
    assert!(shown.contains(&format!("PostgreSQL at 127.0.0.1:{port}/orders (sslmode=prefer): ")), "{shown}");
    assert!(shown.contains("Connection refused") && !shown.contains("app@"), "{shown}");
    let malformed = PostgresStore::builder("postgres://app:s3cr3t-pw@db:port/orders").connect().await.unwrap_err();
    hides(&malformed, "s3cr3t-pw");
    assert!(malformed.to_string().contains("PostgreSQL: invalid connection string"), "{malformed}");

    // A statement the server refuses: its own message, not only "db error".
    let url = super::server_url("SMS_SDK_TEST_POSTGRES_URL");
    let table = format!("sms_gone_{}", super::uuid_suffix());
    let store = PostgresStore::builder(&url).table(&table).connect().await.unwrap();
    let (raw, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    raw.batch_execute(&format!("DROP TABLE {table}; DROP TABLE {table}_dedupe")).await.unwrap();
    let shown = store.get("k").await.unwrap_err().to_string();
    assert!(shown.contains(&format!("relation \"{table}\" does not exist")), "{shown}");
    assert!(!format!("{store:?}").contains("postgres@"), "{store:?}");
}

#[cfg(feature = "redis")]
#[tokio::test]
async fn a_redis_failure_says_why_and_where_without_credentials() {
    use sms_sdk::store::redis::RedisStore;

    let port = closed_port();
    let url = format!("redis://default:s3cr3t-pw@127.0.0.1:{port}/3");
    let builder = RedisStore::builder(&url);
    assert!(format!("{builder:?}").contains(&format!("redis://***@127.0.0.1:{port}/3")), "{builder:?}");
    let error = builder.connect().await.unwrap_err();
    hides(&error, "s3cr3t-pw");
    let shown = error.to_string();
    assert!(shown.contains(&format!("Redis at 127.0.0.1:{port}/3: ")), "{shown}");
    assert!(shown.contains("Connection refused") && !shown.contains("default"), "{shown}");
    let malformed = RedisStore::builder("redis://default:s3cr3t-pw@cache:port/0").connect().await.unwrap_err();
    hides(&malformed, "s3cr3t-pw");
    assert!(malformed.to_string().starts_with("idempotency store error: Redis URL: invalid port"), "{malformed}");
    let store = RedisStore::connect(&super::server_url("SMS_SDK_TEST_REDIS_URL")).await.unwrap();
    assert!(format!("{store:?}").contains("Redis at "), "{store:?}");
}
