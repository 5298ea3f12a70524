//! The DynamoDB store against moto's server (an emulator of DynamoDB's API, which the test
//! command installs from PyPI and starts on loopback): the contract suites, the table's
//! creation, a cross-process race, a frozen server and a lost reply.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use sms_sdk::store::dynamodb::aws_config::{BehaviorVersion, Region, SdkConfig};
use sms_sdk::store::dynamodb::aws_sdk_dynamodb::config::{Credentials, SharedCredentialsProvider};
use sms_sdk::store::dynamodb::{DynamoStore, DynamoStoreBuilder, TableInit};
use sms_sdk::store::suppression::DynamoSuppressionStore;
use sms_sdk::store::{Claim, Fingerprint, IdempotencyStore, Reservation, Store};
use sms_sdk::testing::{dedupe_contract, suppression_contract};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{assert_contract, server_url, uuid_suffix};

/// The test server's endpoint.
pub(crate) fn endpoint() -> String {
    server_url("SMS_SDK_TEST_DYNAMODB_URL")
}

/// A configuration with throwaway credentials (the server accepts any), never the machine's.
pub(crate) fn sdk_config() -> SdkConfig {
    SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(SharedCredentialsProvider::new(Credentials::for_tests()))
        .build()
}

/// A new table's name.
pub(crate) fn table(test: &str) -> String {
    format!("sms-sdk-{test}-{}", uuid_suffix())
}

/// The builder of a store on `table` at `endpoint`.
fn builder(table: &str, endpoint: &str) -> DynamoStoreBuilder {
    DynamoStore::builder(table).endpoint(endpoint).sdk_config(sdk_config())
}

/// A store on a new table at the test server.
async fn new_store(test: &str) -> DynamoStore {
    let (store, init) = builder(&table(test), &endpoint()).create_table().await.unwrap();
    assert_eq!(init, TableInit::Created);
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_store_passes_the_contracts() {
    let store = new_store("contracts").await;
    assert_contract("dynamodb", Arc::new(store.clone()) as Arc<dyn Store>).await;
    let report = dedupe_contract::run("dynamodb", Arc::new(store.clone())).await;
    assert!(report.passed, "{}", report.failures());
    let report = suppression_contract::run("dynamodb", Arc::new(DynamoSuppressionStore::new(store))).await;
    assert!(report.passed, "{}", report.failures());
}

/// The bound of the frozen server's test: the connect and operation timeouts.
const BOUND: Duration = Duration::from_secs(1);

/// A private moto server, which a test may freeze (SIGSTOP). Killed on drop.
struct MotoServer {
    child: std::process::Child,
    url: String,
}

impl MotoServer {
    fn start() -> Self {
        let program = server_url("SMS_SDK_TEST_MOTO_SERVER");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = std::process::Command::new(&program)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} did not start: {e}"));
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "moto did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, url: format!("http://127.0.0.1:{port}") }
    }

    fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill").args(["-s", name, &self.child.id().to_string()]).status();
        assert!(status.is_ok_and(|s| s.success()), "could not send SIG{name} to moto");
    }
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        self.signal("CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server frozen mid-run: every call, a new connect and a send fail within the bound with a
/// typed timeout, nothing is sent, and the same store works once the server runs again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_frozen_server_fails_within_the_bound() {
    let server = tokio::task::spawn_blocking(MotoServer::start).await.unwrap();
    let name = table("frozen");
    let bounded = || builder(&name, &server.url).connect_timeout(BOUND).operation_timeout(BOUND);
    // Made with the default timeouts: a fresh moto loads its DynamoDB backend on the first call,
    // which takes longer than the bound on a busy machine.
    builder(&name, &server.url).create_table().await.unwrap();
    let store = bounded().connect().await.unwrap();
    let place = format!("DynamoDB table {name} in us-east-1 at {}", server.url);
    super::faults::freeze_and_thaw(
        store,
        &place,
        || bounded().connect(),
        || server.signal("STOP"),
        || server.signal("CONT"),
    )
    .await;
}

/// An HTTP/1.1 relay to `upstream` that, for each operation named in `drops`, passes the first
/// such request on, reads the answer, and closes the client's connection instead of answering:
/// a reply lost after the server acted. It counts the requests of each operation.
struct LossyRelay {
    url: String,
    seen: Arc<std::sync::Mutex<Vec<String>>>,
}

impl LossyRelay {
    async fn start(upstream: String, drops: &'static [&'static str]) -> Self {
        Self::start_with(upstream, drops, None).await
    }

    /// A relay that also answers every request of the operation `throttled` with DynamoDB's
    /// throttling error, without passing it on.
    async fn start_with(upstream: String, drops: &'static [&'static str], throttled: Option<&'static str>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let dropped = Arc::new(AtomicUsize::new(0));
        let (log, upstream) = (Arc::clone(&seen), upstream.trim_start_matches("http://").to_owned());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (log, dropped, upstream) = (Arc::clone(&log), Arc::clone(&dropped), upstream.clone());
                tokio::spawn(relay(client, upstream, log, dropped, drops, throttled));
            }
        });
        Self { url, seen }
    }

    /// How many requests of `operation` went through.
    fn count(&self, operation: &str) -> usize {
        self.seen.lock().unwrap().iter().filter(|seen| seen.eq_ignore_ascii_case(operation)).count()
    }
}

/// One HTTP message (a head and its `Content-Length` body) read from `stream`; `None` at its end.
async fn message(stream: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    let mut chunk = [0; 8192];
    loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |n| n.trim().parse().unwrap());
            if bytes.len() >= end + 4 + length {
                return Some(bytes);
            }
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
}

async fn relay(
    mut client: tokio::net::TcpStream,
    upstream: String,
    log: Arc<std::sync::Mutex<Vec<String>>>,
    dropped: Arc<AtomicUsize>,
    drops: &'static [&'static str],
    throttled: Option<&'static str>,
) {
    while let Some(request) = message(&mut client).await {
        let head = String::from_utf8_lossy(&request).to_ascii_lowercase();
        let operation = head
            .lines()
            .find_map(|line| line.strip_prefix("x-amz-target:"))
            .and_then(|target| target.trim().rsplit('.').next())
            .unwrap_or_default()
            .to_owned();
        let operation =
            drops.iter().find(|d| d.eq_ignore_ascii_case(&operation)).map_or(operation, |d| (*d).to_owned());
        log.lock().unwrap().push(operation.clone());
        if throttled.is_some_and(|t| t.eq_ignore_ascii_case(&operation)) {
            let body = r#"{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}"#;
            let response = format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/x-amz-json-1.0\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            if client.write_all(response.as_bytes()).await.is_err() {
                return;
            }
            continue;
        }
        let mut server = tokio::net::TcpStream::connect(&upstream).await.unwrap();
        server.write_all(&request).await.unwrap();
        let Some(response) = message(&mut server).await else { return };
        // Each operation of `drops` loses its first reply: bit i of `dropped` is operation i's.
        if let Some(i) = drops.iter().position(|d| *d == operation) {
            let bit = 1 << i;
            if dropped.fetch_or(bit, Ordering::SeqCst) & bit == 0 {
                return;
            }
        }
        if client.write_all(&response).await.is_err() {
            return;
        }
    }
}

/// The SDK re-sends a write whose reply was lost: the re-sent reserve finds its own reservation
/// and answers acquired (not "held by another"), and the re-sent finalize its own record and
/// answers written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_a_retried_write_after_a_lost_reply_is_recognised() {
    use sms_sdk::store::{FinalRecord, Finalized, Record, State};
    use sms_sdk::testing::store_contract::sample_receipt;

    let name = table("lost-reply");
    builder(&name, &endpoint()).create_table().await.unwrap();
    let relay = LossyRelay::start(endpoint(), &["PutItem", "UpdateItem"]).await;
    let store = builder(&name, &relay.url).connect().await.unwrap();
    let (fingerprint, now) = (Fingerprint::from_canonical("lost"), std::time::SystemTime::now());
    let reserved = store.reserve("order:1", Claim::new(&fingerprint), now).await.unwrap();
    let Reservation::Acquired(id) = reserved else { panic!("the retried reserve answered {reserved:?}") };
    assert_eq!(relay.count("PutItem"), 2, "the SDK did not re-send the reserve");
    let Some(Record::Reserved { reservation_id, .. }) = store.get("order:1").await.unwrap() else {
        panic!("not reserved")
    };
    assert_eq!(reservation_id, id);
    // Another send with the key finds it held.
    let other = store.reserve("order:1", Claim::new(&fingerprint), now).await.unwrap();
    assert!(matches!(other, Reservation::Existing(_)), "{other:?}");

    let record = FinalRecord::Accepted(sample_receipt("SM1"));
    let written = store.finalize("order:1", &id, record, Duration::from_mins(1), now).await.unwrap();
    assert_eq!(written, Finalized::Written);
    assert_eq!(relay.count("UpdateItem"), 2, "the SDK did not re-send the finalize");
    assert_eq!(store.get("order:1").await.unwrap().map(|r| r.state()), Some(State::Accepted));
}

/// `create_table` again finds the table; `connect` refuses a table that is not there, or not of
/// the store's shape, saying what to run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_connect_checks_the_table_and_init_is_idempotent() {
    use sms_sdk::store::dynamodb::aws_sdk_dynamodb::types::{
        AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType,
    };

    let name = table("init");
    let (store, first) = builder(&name, &endpoint()).create_table().await.unwrap();
    let (_, again) = builder(&name, &endpoint()).create_table().await.unwrap();
    assert_eq!((first, again), (TableInit::Created, TableInit::Existed));

    let absent = builder(&table("absent"), &endpoint()).connect().await.unwrap_err();
    assert!(absent.to_string().contains("ResourceNotFoundException"), "{absent}");
    assert!(absent.to_string().contains("sms-sdk store init"), "{absent}");

    // A table of another program, keyed by `id`.
    let other = table("other");
    store
        .sdk_client()
        .create_table()
        .table_name(&other)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(
            AttributeDefinition::builder().attribute_name("id").attribute_type(ScalarAttributeType::S).build().unwrap(),
        )
        .key_schema(KeySchemaElement::builder().attribute_name("id").key_type(KeyType::Hash).build().unwrap())
        .send()
        .await
        .unwrap();
    let wrong = builder(&other, &endpoint()).connect().await.unwrap_err();
    assert!(wrong.to_string().contains("is not keyed by the string `pk` alone"), "{wrong}");
    let refused = builder(&other, &endpoint()).create_table().await.unwrap_err();
    assert!(refused.to_string().contains("is not keyed"), "{refused}");

    for bad in [
        "dynamodb://",
        "dynamodb://ab",
        "dynamodb://t@ble",
        "dynamodb://table?profile=x",
        "dynamodb://table?region=",
        "dynamodb://table?region=us-east-1&endpoint=127.0.0.1:8000",
        "dynamodb://table?region=us-east-1&endpoint=http://user:Canary99@127.0.0.1:8000",
    ] {
        let Err(error) = sms_sdk::store::open(bad).await else { panic!("{bad} opened") };
        let error = error.to_string();
        assert!(!error.contains("Canary99"), "a password in an error: {error}");
    }
    let Err(unknown) = sms_sdk::store::open("dynamodb://table?regoin=x").await else { panic!("opened") };
    let unknown = unknown.to_string();
    assert!(unknown.contains("`regoin` is not one of its parameters"), "{unknown}");
}

/// Throttling that outlasts the SDK's three attempts fails the send with a typed store error
/// (`is_throttled`) before any provider request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamodb_throttling_is_a_typed_store_error_before_any_request() {
    use sms_sdk::store::StoreError;
    use sms_sdk::testing::MemoryAdapter;
    use sms_sdk::{Client, ErrorKind, Message};

    let name = table("throttled");
    builder(&name, &endpoint()).create_table().await.unwrap();
    let relay = LossyRelay::start_with(endpoint(), &[], Some("PutItem")).await;
    let store = builder(&name, &relay.url).connect().await.unwrap();
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).idempotency(store).build().unwrap();
    let message = Message::new(crate::TO, "x").idempotency_key(format!("throttled:{}", uuid_suffix()));
    let error = client.send(&message).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Store);
    let store_error = std::error::Error::source(&error).and_then(|s| s.downcast_ref::<StoreError>());
    assert!(store_error.is_some_and(StoreError::is_throttled), "{store_error:?}");
    assert!(error.to_string().contains("ProvisionedThroughputExceededException"), "{error}");
    assert_eq!(relay.count("PutItem"), 3, "the SDK's attempts are bounded at three");
    assert!(memory.sent().is_empty(), "a send went out without its reservation");
}
