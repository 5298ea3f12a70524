//! A keyed result remembers the endpoint it was sent to, and is never replayed to a client that
//! sends somewhere else (docs/behavior.md, "Where the command keeps its state").

use std::time::Duration;

use serde_json::json;
use sms_sdk::store::MemoryStore;
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::{Client, Conflict, ErrorKind, Twilio, UnknownReason};
use wiremock::ResponseTemplate;

use super::twilio::SID;
use super::{json_reply, requests, serve};

fn accepted() -> ResponseTemplate {
    json_reply(201, &json!({"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"}))
}

fn client(base_url: &str, store: &MemoryStore) -> Client {
    let twilio = Twilio::builder(SID, "test-token").from("+15005550006").base_url(base_url).build().unwrap();
    Client::builder().adapter(twilio).idempotency(store.clone()).timeout(Duration::from_millis(300)).build().unwrap()
}

#[tokio::test]
async fn an_accepted_result_is_never_replayed_against_another_endpoint() {
    let store = MemoryStore::new();
    let (emulator, real) = (serve(accepted()).await, serve(accepted()).await);
    let message = crate::message().idempotency_key("order:9");
    let first = client(&emulator.uri(), &store).send(&message).await.unwrap();
    assert_eq!(first.attempts[0].endpoint.as_deref(), Some(emulator.uri().as_str()));

    let err = client(&real.uri(), &store).send(&message).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IdempotencyConflict(Conflict::OtherEndpoint));
    assert!(err.to_string().contains(&emulator.uri()) && err.to_string().contains(&real.uri()), "{err}");
    assert!(err.to_string().contains("\"order:9\""), "the text names the key: {err}");
    assert!(!err.is_retry_safe());
    assert!(requests(&real).await.is_empty());

    // The same endpoint replays; a client that does not say where it sends is not checked.
    assert!(client(&emulator.uri(), &store).send(&message).await.unwrap().replayed);
    let memory = Client::builder().adapter(MemoryAdapter::new()).idempotency(store.clone()).build().unwrap();
    assert!(memory.send(&message).await.unwrap().replayed);
    assert_eq!(requests(&emulator).await.len(), 1);
}

#[tokio::test]
async fn an_unknown_outcome_from_another_endpoint_is_a_conflict_too() {
    let store = MemoryStore::new();
    let (failing, real) = (serve(ResponseTemplate::new(500)).await, serve(accepted()).await);
    let message = crate::message().idempotency_key("order:10");
    let err = client(&failing.uri(), &store).send(&message).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::ServerError));
    let err = client(&failing.uri(), &store).send(&message).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::ReplayedUnknown));
    let err = client(&real.uri(), &store).send(&message).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IdempotencyConflict(Conflict::OtherEndpoint), "{err}");
    assert!(requests(&real).await.is_empty());
}

#[test]
fn adapters_say_where_they_send_without_credentials() {
    let twilio =
        Twilio::builder(SID, "test-token").base_url("https://user:secret@Proxy.example.com:8443/twilio/").build();
    let twilio = twilio.unwrap();
    assert_eq!(sms_sdk::Adapter::info(&twilio).endpoint.as_deref(), Some("https://proxy.example.com:8443"));
    let debug = format!("{twilio:?}");
    assert!(!debug.contains("secret") && debug.contains("proxy.example.com"), "{debug}");
    let builder = Twilio::builder(SID, "test-token").base_url("https://user:secret@proxy.example.com/");
    assert!(!format!("{builder:?}").contains("secret"));
}
