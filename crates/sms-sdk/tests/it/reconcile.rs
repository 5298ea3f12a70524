//! Correlation on the client, over memory adapters: when a reference is attached, and that it
//! changes no fingerprint.

use sms_sdk::correlation::{CorrelationSecret, reference};
use sms_sdk::store::{MemoryStore, ReferenceIndex as _};
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::{Client, Message};

fn secret() -> CorrelationSecret {
    CorrelationSecret::new("reconcile-it-secret-value").unwrap()
}

#[tokio::test]
async fn reconcile_reference_only_with_a_key_a_callback_and_a_secret() {
    let store = MemoryStore::new();
    let adapter = MemoryAdapter::new();
    let client =
        Client::builder().adapter(adapter.clone()).idempotency(store.clone()).correlation(secret()).build().unwrap();
    let with_callback = Message::new("+14155550123", "Hi").idempotency_key("k-callback").webhook_url("https://x/s");
    let without_callback = Message::new("+14155550123", "Hi").idempotency_key("k-none");
    let without_key = Message::new("+14155550123", "Hi").webhook_url("https://x/s");
    for message in [&with_callback, &without_callback, &without_key] {
        client.send(message).await.unwrap();
    }
    let sent = adapter.sent();
    let expected = reference(&secret(), "k-callback");
    assert_eq!(sent[0].message.correlation.as_deref(), Some(expected.as_str()));
    assert_eq!(sent[1].message.correlation, None);
    assert_eq!(sent[2].message.correlation, None);
    let now = std::time::SystemTime::now();
    assert_eq!(store.find_reference(&expected, now).await.unwrap().as_deref(), Some("k-callback"));
    assert_eq!(store.find_reference(&reference(&secret(), "k-none"), now).await.unwrap(), None);
}

#[tokio::test]
async fn reconcile_correlation_changes_no_fingerprint() {
    let store = MemoryStore::new();
    let message = Message::new("+14155550123", "Hi").idempotency_key("k-old").webhook_url("https://x/s");
    let before = Client::builder().adapter(MemoryAdapter::new()).idempotency(store.clone()).build().unwrap();
    let first = before.send(&message).await.unwrap();
    // The same store, now with correlation on: the old record still replays.
    let adapter = MemoryAdapter::new();
    let after = Client::builder().adapter(adapter.clone()).idempotency(store).correlation(secret()).build().unwrap();
    let again = after.send(&message).await.unwrap();
    assert!(again.replayed);
    assert_eq!(again.provider_id, first.provider_id);
    assert!(adapter.sent().is_empty());
}

#[test]
fn reconcile_secrets_stay_hidden() {
    let client = Client::builder().adapter(MemoryAdapter::new()).correlation(secret()).build().unwrap();
    assert!(!format!("{client:?}").contains("reconcile-it-secret-value"));
    assert!(!format!("{:?}", secret()).contains("reconcile-it-secret-value"));
}

/// Each built-in adapter puts the reference where its provider echoes it.
#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
#[test]
fn reconcile_each_provider_carries_the_reference() {
    use sms_sdk::provider::{plivo, telnyx, twilio, vonage};

    let message = Message::new("+14155550123", "Hi").webhook_url("https://x/s?tenant=a");
    let mut outbound = crate::provider::outbound(&message);
    outbound.correlation = Some("R".repeat(22));
    let expected = format!("https://x/s?tenant=a&sms_sdk_ref={}", "R".repeat(22));
    let form = twilio::__private::form_body(&outbound);
    let callback = url::form_urlencoded::parse(form.as_bytes()).find(|(k, _)| k == "StatusCallback").unwrap().1;
    assert_eq!(callback, expected);
    assert_eq!(telnyx::__private::request_body(&outbound, None)["webhook_url"], expected.as_str());
    assert_eq!(plivo::__private::request_body(&outbound)["url"], expected.as_str());
    let body = vonage::__private::request_body(&outbound);
    assert_eq!(
        (body["client_ref"].as_str(), body["webhook_url"].as_str()),
        (Some("RRRRRRRRRRRRRRRRRRRRRR"), Some("https://x/s?tenant=a"))
    );
    // Without a reference, the caller's URL goes out as written.
    outbound.correlation = None;
    assert_eq!(plivo::__private::request_body(&outbound)["url"], "https://x/s?tenant=a");
    assert!(vonage::__private::request_body(&outbound).get("client_ref").is_none());
}
