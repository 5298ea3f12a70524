//! The policy gate and the observation hooks.

use std::sync::{Arc, Mutex};

use sms_sdk::hooks::PolicyDecision;
use sms_sdk::testing::{MemoryAdapter, accepted_outcome};
use sms_sdk::{Category, Client, ClientBuilder, ErrorKind, Message};

use super::{TO, message, rejection};

type Log = Arc<Mutex<Vec<(String, serde_json::Value)>>>;

/// A builder whose three hooks append `(hook, event as JSON)` to the returned log.
fn observed(memory: &MemoryAdapter) -> (ClientBuilder, Log) {
    let log: Log = Arc::default();
    let (a, b, c) = (log.clone(), log.clone(), log.clone());
    let builder = Client::builder()
        .adapter(memory.clone())
        .on_attempt(move |e| a.lock().unwrap().push(("attempt".into(), serde_json::to_value(e).unwrap())))
        .on_accepted(move |e| b.lock().unwrap().push(("accepted".into(), serde_json::to_value(e).unwrap())))
        .on_failure(move |e| c.lock().unwrap().push(("failure".into(), serde_json::to_value(e).unwrap())));
    (builder, log)
}

fn events(log: &Log, hook: &str) -> Vec<serde_json::Value> {
    log.lock().unwrap().iter().filter(|(h, _)| h == hook).map(|(_, e)| e.clone()).collect()
}

#[tokio::test]
async fn t072_policy_rejection() {
    let memory = MemoryAdapter::new();
    let client = Client::builder()
        .adapter(memory.clone())
        .before_send(|_| async { Ok::<_, std::convert::Infallible>(PolicyDecision::reject("recipient opted out")) })
        .build()
        .unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PolicyRejected);
    assert_eq!(err.code(), "policy_rejected");
    assert_eq!(err.policy_reason(), Some("recipient opted out"));
    assert!(err.is_retry_safe());
    assert!(memory.sent().is_empty());
}

#[tokio::test]
async fn t073_policy_reason_never_leaks() {
    let memory = MemoryAdapter::new();
    let (builder, log) = observed(&memory);
    let client = builder
        .before_send(|_| async {
            Ok::<_, std::convert::Infallible>(PolicyDecision::reject(
                "Jane Doe at +14155550123 is on the suppression list",
            ))
        })
        .build()
        .unwrap();
    let err = client.send(&message()).await.unwrap_err();
    // The reference's fixed message, with the Rust name of the hook.
    assert_eq!(err.to_string(), "Send blocked by the before_send policy.");
    let failures = events(&log, "failure");
    assert_eq!(failures.len(), 1);
    let everything =
        format!("{} {err} {err:?} {}", serde_json::to_string(&err).unwrap(), serde_json::to_string(&failures).unwrap());
    assert!(!everything.contains("Jane") && !everything.contains("4155550123"), "{everything}");
    assert!(everything.contains("policy_rejected"));
}

#[tokio::test]
async fn t074_policy_sees_the_message_and_its_segments() {
    let seen = Arc::new(Mutex::new(None));
    let store = seen.clone();
    let client = Client::builder()
        .adapter(MemoryAdapter::new())
        .before_send(move |cx| {
            *store.lock().unwrap() = Some((cx.message.to.clone(), cx.encoding.as_str(), cx.segments, cx.id.clone()));
            async { Ok::<_, std::convert::Infallible>(PolicyDecision::Allow) }
        })
        .build()
        .unwrap();
    let receipt = client.send(&message()).await.unwrap();
    let (to, encoding, segments, id) = seen.lock().unwrap().clone().unwrap();
    assert_eq!((to.as_str(), encoding, segments), (TO, "gsm7", 1));
    assert_eq!(id, receipt.id);
}

#[tokio::test]
async fn t075_policy_error_propagates_and_nothing_is_sent() {
    let memory = MemoryAdapter::new();
    let (builder, log) = observed(&memory);
    let client = builder
        .before_send(|_| async { Err::<PolicyDecision, _>(std::io::Error::other("suppression list unavailable")) })
        .build()
        .unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BeforeSend);
    assert_eq!(err.code(), "before_send_failed");
    let source = std::error::Error::source(&err).unwrap();
    assert_eq!(source.to_string(), "suppression list unavailable");
    assert!(source.downcast_ref::<std::io::Error>().is_some());
    assert!(memory.sent().is_empty());
    assert!(events(&log, "failure").is_empty());
}

#[tokio::test]
async fn t087_hook_events_are_masked_and_carry_no_body() {
    let memory = MemoryAdapter::builder().outcomes([accepted_outcome("p1"), rejection(Category::Recipient)]).build();
    let (builder, log) = observed(&memory);
    let client = builder.build().unwrap();
    client.send(&Message::new(TO, "Your code is 123456")).await.unwrap();
    client.send(&Message::new(TO, "Your code is 654321")).await.unwrap_err();

    assert_eq!(events(&log, "attempt").len(), 2);
    let accepted = events(&log, "accepted");
    assert_eq!(accepted.len(), 1);
    assert_eq!(accepted[0]["provider"], "memory");
    assert_eq!(accepted[0]["provider_id"], "p1");
    assert_eq!(accepted[0]["to"], "+1********23");
    let failures = events(&log, "failure");
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["error_code"], "provider_rejected");
    assert_eq!(failures[0]["retry_safe"], true);
    let all = serde_json::to_string(&*log.lock().unwrap()).unwrap();
    assert!(!all.contains("123456") && !all.contains("654321") && !all.contains(TO), "{all}");
}

#[tokio::test]
async fn t088_panicking_hooks_never_change_the_outcome() {
    let client = Client::builder()
        .adapter(MemoryAdapter::new())
        .on_attempt(|_| panic!("attempt hook"))
        .on_accepted(|_| panic!("accepted hook"))
        .on_failure(|_| panic!("failure hook"))
        .build()
        .unwrap();
    let receipt = client.send(&message()).await.unwrap();
    assert_eq!(receipt.provider, "memory");
    assert!(!receipt.replayed);
}

#[tokio::test]
async fn validation_errors_fire_no_hooks() {
    let memory = MemoryAdapter::new();
    let (builder, log) = observed(&memory);
    let client = builder.build().unwrap();
    client.send(&Message::new("+1", "")).await.unwrap_err();
    assert!(log.lock().unwrap().is_empty());
}
