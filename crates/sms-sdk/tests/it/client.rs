//! Sends through one memory adapter: results, senders, rejections and unknown outcomes.

use std::time::Duration;

use sms_sdk::adapter::Category;
use sms_sdk::message::SenderKind;
use sms_sdk::testing::{
    MemoryAdapter, MemoryOutcome, RejectedOptions, accepted_outcome, rejected_outcome, unknown_outcome,
};
use sms_sdk::{Client, Delivery, ErrorKind, RetryPolicy, Sender, UnknownReason};

use super::{TO, message, named};

#[tokio::test]
async fn t057_accepted_result() {
    let memory = MemoryAdapter::builder().outcomes([accepted_outcome("prov-1")]).build();
    let client = Client::builder().adapter(memory).build().unwrap();
    let receipt = client.send(&message()).await.unwrap();
    assert_eq!(receipt.provider, "memory");
    assert_eq!(receipt.provider_id, "prov-1");
    assert_eq!(receipt.delivery, Delivery::Queued);
    assert_eq!(receipt.encoding, sms_sdk::encoding::Encoding::Gsm7);
    assert_eq!(receipt.segments, 1);
    assert_eq!(receipt.attempted_providers, ["memory"]);
    assert!(!receipt.replayed);
    let id = receipt.id.strip_prefix("sms_").unwrap();
    assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{}", receipt.id);
    assert_eq!(receipt.attempts.len(), 1);
    let json = serde_json::to_value(&receipt.attempts[0]).unwrap();
    assert_eq!(json["provider"], "memory");
    assert_eq!(json["attempt"], 1);
    assert_eq!(json["outcome"], "accepted");
    assert_eq!(json["provider_id"], "prov-1");
}

#[tokio::test]
async fn t058_default_sender_and_per_message_override() {
    let memory = MemoryAdapter::builder().from(Some(Sender::phone("+15005550001"))).build();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    client.send(&message()).await.unwrap();
    client.send(&message().from(Sender::sender_id("Acme"))).await.unwrap();
    let sent = memory.sent();
    assert_eq!(
        (sent[0].message.from.kind, sent[0].message.from.value.as_str()),
        (SenderKind::PhoneNumber, "+15005550001")
    );
    assert_eq!((sent[1].message.from.kind, sent[1].message.from.value.as_str()), (SenderKind::Alphanumeric, "Acme"));
}

#[tokio::test]
async fn t059_idempotency_key_reaches_the_adapter_context() {
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    client.send(&message().idempotency_key("order:1")).await.unwrap();
    assert_eq!(memory.sent()[0].idempotency_key.as_deref(), Some("order:1"));
}

#[tokio::test]
async fn t060_recipient_rejection() {
    let outcome =
        rejected_outcome(Category::Recipient, RejectedOptions { code: Some("21211".into()), ..Default::default() });
    let client = Client::builder().adapter(MemoryAdapter::builder().outcomes([outcome]).build()).build().unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Recipient));
    assert_eq!(err.code(), "provider_rejected");
    assert_eq!(err.category(), Some(Category::Recipient));
    assert!(err.is_retry_safe());
    assert!(!err.allows_failover());
    assert_eq!(err.provider_error().and_then(|p| p.provider_code()), Some("21211"));
    assert_eq!(err.to_string(), "memory rejected the message (recipient): Simulated recipient rejection.");
}

#[tokio::test]
async fn t061_auth_rejection() {
    let client = Client::builder()
        .adapter(MemoryAdapter::builder().outcomes([super::rejection(Category::Auth)]).build())
        .build()
        .unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Auth));
    assert_eq!(err.code(), "provider_auth");
    assert!(err.allows_failover());
    assert!(err.to_string().starts_with("memory rejected the credentials"));
}

#[tokio::test]
async fn t062_failover_is_off_by_default() {
    let primary = MemoryAdapter::builder().name("primary").outcomes([super::rejection(Category::Sender)]).build();
    let secondary = named("secondary");
    let client = Client::builder().adapter(primary).adapter(secondary.clone()).build().unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Sender));
    assert!(secondary.sent().is_empty());
}

#[tokio::test]
async fn t063_unknown_outcomes_are_never_retried() {
    for reason in [
        UnknownReason::Network,
        UnknownReason::MalformedResponse,
        UnknownReason::ServerError,
        UnknownReason::UnexpectedStatus,
    ] {
        let memory = MemoryAdapter::builder().outcomes([unknown_outcome(reason)]).build();
        let client = Client::builder()
            .adapter(memory.clone())
            .retry(RetryPolicy::new(5, std::time::Duration::from_millis(1), std::time::Duration::from_millis(5)))
            .build()
            .unwrap();
        let err = client.send(&message()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unknown(reason));
        assert_eq!(err.code(), "handoff_unknown");
        assert!(!err.is_retry_safe());
        assert_eq!(err.provider_name(), Some("memory"));
        assert_eq!(memory.sent().len(), 1, "{reason}");
        assert_eq!(serde_json::to_value(&err).unwrap()["reason"], reason.as_str());
    }
}

#[tokio::test]
async fn t064_a_panicking_adapter_is_an_unknown_outcome() {
    let memory =
        MemoryAdapter::builder().outcomes([MemoryOutcome::script(|_, _| async { panic!("adapter bug") })]).build();
    let client = Client::builder().adapter(memory).build().unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::AdapterException));
    assert!(!err.is_retry_safe());
}

#[tokio::test]
async fn capabilities_list_adapters_in_order() {
    let client = Client::builder().adapter(named("a")).adapter(named("b")).build().unwrap();
    let names: Vec<_> = client.adapters().iter().map(|i| i.name.clone()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(client.adapters()[0].default_from, Some(Sender::phone("+15005550006")));
    assert!(client.adapters()[0].capabilities.mms);
    let _ = TO;
}

#[test]
fn absurd_durations_are_refused_at_build() {
    let ten_years = Duration::from_hours(10 * 365 * 24);
    for (name, builder) in [
        ("idempotency_ttl", Client::builder().adapter(MemoryAdapter::new()).idempotency_ttl(Duration::MAX)),
        ("stale_reservation", Client::builder().adapter(MemoryAdapter::new()).stale_reservation(Duration::MAX)),
        ("timeout", Client::builder().adapter(MemoryAdapter::new()).timeout(Duration::MAX)),
    ] {
        let err = builder.build().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Configuration, "{name}");
        assert!(err.to_string().contains(name), "{err}");
    }
    let client = Client::builder()
        .adapter(MemoryAdapter::new())
        .idempotency_ttl(ten_years)
        .stale_reservation(ten_years)
        .timeout(ten_years)
        .build();
    assert!(client.is_ok());
}

#[tokio::test]
async fn the_longest_ttl_sends_and_replays_without_overflow() {
    let memory = MemoryAdapter::new();
    let client = Client::builder()
        .adapter(memory.clone())
        .idempotency(sms_sdk::store::MemoryStore::new())
        .idempotency_ttl(Duration::from_hours(10 * 365 * 24))
        .build()
        .unwrap();
    let message = message().idempotency_key("long-ttl");
    let first = client.send(&message).await.unwrap();
    let second = client.send(&message).await.unwrap();
    assert!(second.replayed);
    assert_eq!(first.provider_id, second.provider_id);
    assert_eq!(memory.sent().len(), 1);
}
