//! Local validation: typed errors before any request, and the `validate()` report.

use serde_json::json;
use sms_sdk::adapter::{Capabilities, SenderType};
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::validate::supports_sender;
use sms_sdk::{Client, ErrorKind, Field, IssueCode, Message, Sender};

use super::{TO, message, named};

#[test]
fn t091_phone_senders_need_a_long_code_or_toll_free() {
    use sms_sdk::message::SenderKind;
    assert!(supports_sender(&[SenderType::TollFree], SenderKind::PhoneNumber));
    assert!(!supports_sender(&[SenderType::ShortCode], SenderKind::PhoneNumber));
    let _ = Capabilities::default();
}

#[test]
fn t092_configuration_errors() {
    let dup = Client::builder().adapter(MemoryAdapter::new()).adapter(MemoryAdapter::new()).build().unwrap_err();
    assert_eq!(dup.kind(), ErrorKind::Configuration);
    assert!(dup.to_string().contains("memory, memory"));
    assert_eq!(Client::builder().build().unwrap_err().kind(), ErrorKind::Configuration);
    let zero = Client::builder().adapter(MemoryAdapter::new()).timeout(std::time::Duration::ZERO).build().unwrap_err();
    assert_eq!(zero.kind(), ErrorKind::Configuration);
    assert!(zero.is_retry_safe());
}

#[test]
fn t095_empty_body_with_media_is_supported() {
    let client = Client::builder().adapter(MemoryAdapter::new()).build().unwrap();
    let report = client.validate(&Message::new(TO, "").media_url("https://example.com/a.png"));
    assert!(report.supported, "{report:?}");
}

#[test]
fn t103_message_issues_short_circuit_adapter_checks() {
    let client = Client::builder().adapter(MemoryAdapter::new()).build().unwrap();
    let report = client.validate(&Message::new("+1", ""));
    assert!(!report.supported);
    assert!(report.adapter_candidates.is_empty());
    let codes: Vec<_> = report.issues.iter().map(|i| i.code).collect();
    assert_eq!(codes, [IssueCode::InvalidRecipient, IssueCode::EmptyBody]);
}

#[test]
fn t104_validate_never_sends() {
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let report = client.validate(&message());
    assert!(report.supported);
    assert_eq!(report.adapter_candidates, ["memory"]);
    assert!(memory.sent().is_empty());
}

#[tokio::test]
async fn t116_options_for_an_adapter_without_a_spec_are_unsupported() {
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let err = client.send(&message().provider_option("memory", json!({"x": 1}))).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported { field: Field::ProviderOptions });
    assert_eq!(err.provider_name(), Some("memory"));
    assert!(memory.sent().is_empty());
}

#[tokio::test]
async fn bad_input_gets_a_typed_error_before_any_request() {
    let memory = MemoryAdapter::builder().capabilities(|c| c.scheduling = false).build();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let cases = [
        (Message::new("+0123", "Hi"), ErrorKind::InvalidRecipient),
        (Message::new("+1 415 555 0123", "Hi"), ErrorKind::InvalidRecipient),
        (Message::new(TO, ""), ErrorKind::InvalidMessage { field: Field::Body }),
        (message().media_url("ftp://x"), ErrorKind::InvalidMessage { field: Field::MediaUrls }),
        (message().validity_period_secs(-1), ErrorKind::InvalidMessage { field: Field::ValidityPeriodSecs }),
        (message().validity_period_secs(604_801), ErrorKind::InvalidMessage { field: Field::ValidityPeriodSecs }),
        (message().webhook_url("/status"), ErrorKind::InvalidMessage { field: Field::WebhookUrl }),
        (message().idempotency_key(""), ErrorKind::InvalidMessage { field: Field::IdempotencyKey }),
        (message().idempotency_key("k".repeat(256)), ErrorKind::InvalidMessage { field: Field::IdempotencyKey }),
        (message().from("5550006"), ErrorKind::InvalidSender),
        (message().from(Sender::short_code("12")), ErrorKind::InvalidSender),
        (message().send_at(time::OffsetDateTime::now_utc()), ErrorKind::Unsupported { field: Field::SendAt }),
        (
            Message { provider_options: Some(json!([1])), ..message() },
            ErrorKind::InvalidMessage { field: Field::ProviderOptions },
        ),
    ];
    for (bad, kind) in cases {
        let err = client.send(&bad).await.unwrap_err();
        assert_eq!(err.kind(), kind, "{bad:?}");
        assert!(err.is_retry_safe());
    }
    // Keys of 255 UTF-16 units are fine, and length counts UTF-16 units, not bytes.
    client.send(&message().idempotency_key("k".repeat(255))).await.unwrap();
    let astral = "📦".repeat(128); // 256 units
    assert_eq!(
        client.send(&message().idempotency_key(astral)).await.unwrap_err().kind(),
        ErrorKind::InvalidMessage { field: Field::IdempotencyKey }
    );
    assert_eq!(memory.sent().len(), 1);
}

#[tokio::test]
async fn missing_and_unsupported_senders_name_the_adapter() {
    let no_default = MemoryAdapter::builder().name("bare").from(None).build();
    let client = Client::builder().adapter(no_default).build().unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!((err.kind(), err.provider_name()), (ErrorKind::InvalidSender, Some("bare")));

    let phones_only = MemoryAdapter::builder()
        .name("vonage")
        .capabilities(|c| c.sender_types = vec![SenderType::LongCode, SenderType::TollFree, SenderType::Alphanumeric])
        .build();
    let client = Client::builder().adapter(phones_only).build().unwrap();
    let err = client.send(&message().from(Sender::short_code("12345"))).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported { field: Field::From });
    assert_eq!(err.to_string(), "vonage does not support short code senders.");
}

#[test]
fn validate_reports_every_adapter_and_the_options_they_take() {
    let no_mms = MemoryAdapter::builder().name("no-mms").capabilities(|c| c.mms = false).build();
    let client = Client::builder().adapter(named("primary")).adapter(no_mms).adapter(named("third")).build().unwrap();
    let report = client.validate(&message().media_url("https://example.com/a.png"));
    assert!(report.supported);
    assert_eq!(report.adapter_candidates, ["primary", "third"]);
    assert_eq!(report.issues.len(), 1);
    assert_eq!(report.issues[0].provider.as_deref(), Some("no-mms"));
    assert_eq!(report.issues[0].field, Field::MediaUrls);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["encoding"], "gsm7");
    assert_eq!(json["segments"], 1);
}
