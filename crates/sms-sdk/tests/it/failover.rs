//! Failover across adapters: only after eligible rejections, never after unknown outcomes.

use sms_sdk::testing::{MemoryAdapter, unknown_outcome};
use sms_sdk::{Category, Client, ErrorKind, Failover, UnknownReason};

use super::{message, named, rejection, rejection_by};

fn outcomes(receipt_or_err: &[sms_sdk::error::Attempt]) -> Vec<String> {
    receipt_or_err.iter().map(|a| serde_json::to_value(a).unwrap()["outcome"].as_str().unwrap().to_owned()).collect()
}

fn with_failover(adapters: Vec<MemoryAdapter>) -> Client {
    adapters
        .into_iter()
        .fold(Client::builder().failover(Failover::OnEligibleRejection), sms_sdk::ClientBuilder::adapter)
        .build()
        .unwrap()
}

#[tokio::test]
async fn t065_eligible_rejection_fails_over() {
    let primary = MemoryAdapter::builder().name("primary").outcomes([rejection(Category::Sender)]).build();
    let client = with_failover(vec![primary, named("secondary")]);
    let receipt = client.send(&message()).await.unwrap();
    assert_eq!(receipt.provider, "secondary");
    assert_eq!(receipt.attempted_providers, ["primary", "secondary"]);
    assert_eq!(outcomes(&receipt.attempts), ["rejected", "accepted"]);
}

#[tokio::test]
async fn t066_only_eligible_categories_fail_over() {
    for category in [Category::Auth, Category::Account, Category::Sender] {
        let primary = MemoryAdapter::builder().name("primary").outcomes([rejection(category)]).build();
        let secondary = named("secondary");
        let client = with_failover(vec![primary, secondary.clone()]);
        assert_eq!(client.send(&message()).await.unwrap().provider, "secondary", "{category}");
    }
    for category in [Category::Recipient, Category::Compliance, Category::Request] {
        let primary = MemoryAdapter::builder().name("primary").outcomes([rejection(category)]).build();
        let secondary = named("secondary");
        let client = with_failover(vec![primary, secondary.clone()]);
        let err = client.send(&message()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Rejected(category));
        assert!(!err.allows_failover());
        assert!(secondary.sent().is_empty(), "{category}");
    }
}

#[tokio::test]
async fn t067_unknown_never_fails_over() {
    let primary = MemoryAdapter::builder().name("primary").outcomes([unknown_outcome(UnknownReason::Timeout)]).build();
    let secondary = named("secondary");
    let client = with_failover(vec![primary, secondary.clone()]);
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Timeout));
    assert!(secondary.sent().is_empty());
}

#[tokio::test]
async fn t068_accepted_primary_never_calls_the_secondary() {
    let secondary = named("secondary");
    let client = with_failover(vec![named("primary"), secondary.clone()]);
    assert_eq!(client.send(&message()).await.unwrap().provider, "primary");
    assert!(secondary.sent().is_empty());
}

#[tokio::test]
async fn t069_every_provider_rejected() {
    let primary =
        MemoryAdapter::builder().name("primary").outcomes([rejection_by("primary", Category::Sender)]).build();
    let secondary =
        MemoryAdapter::builder().name("secondary").outcomes([rejection_by("secondary", Category::Account)]).build();
    let client = with_failover(vec![primary, secondary]);
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AllRejected);
    assert_eq!(err.code(), "all_providers_rejected");
    assert!(err.is_retry_safe());
    let errors: Vec<_> = err.rejections().iter().map(|e| (e.provider_name().unwrap(), e.category().unwrap())).collect();
    assert_eq!(errors, [("primary", Category::Sender), ("secondary", Category::Account)]);
    let providers: Vec<_> = err.attempts().iter().map(|a| a.provider.as_str()).collect();
    assert_eq!(providers, ["primary", "secondary"]);
    assert_eq!(err.to_string(), "Every attempted provider rejected the message (primary, secondary).");
}

#[tokio::test]
async fn t070_a_non_eligible_rejection_after_failover_stops_the_chain() {
    let first = MemoryAdapter::builder().name("first").outcomes([rejection_by("first", Category::Auth)]).build();
    let second =
        MemoryAdapter::builder().name("second").outcomes([rejection_by("second", Category::Compliance)]).build();
    let third = named("third");
    let client = with_failover(vec![first, second, third.clone()]);
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AllRejected);
    assert_eq!(err.rejections().len(), 2);
    assert!(third.sent().is_empty());
}

#[tokio::test]
async fn t071_adapters_that_cannot_send_the_message_are_skipped() {
    let primary = MemoryAdapter::builder().name("primary").outcomes([rejection(Category::Sender)]).build();
    let no_mms = MemoryAdapter::builder().name("no-mms").capabilities(|c| c.mms = false).build();
    let third = named("third");
    let client = with_failover(vec![primary, no_mms.clone(), third]);
    let receipt = client.send(&message().media_url("https://example.com/a.png")).await.unwrap();
    assert_eq!(receipt.provider, "third");
    assert!(no_mms.sent().is_empty());
}
