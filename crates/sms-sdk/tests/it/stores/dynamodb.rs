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
