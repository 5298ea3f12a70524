//! Concurrent sends with one idempotency key share one request, even without a store.

use std::time::Duration;

use sms_sdk::testing::{MemoryAdapter, MemoryOutcome, accepted_outcome};
use sms_sdk::{Client, Conflict, ErrorKind, Message, Outcome, UnknownReason};

use super::TO;

fn slow(delay: Duration) -> MemoryOutcome {
    MemoryOutcome::script(move |_, _| async move {
        tokio::time::sleep(delay).await;
        accepted_outcome("slow-1")
    })
}

fn keyed(body: &str) -> Message {
    Message::new(TO, body).idempotency_key("appt:1:reminder")
}

#[tokio::test(start_paused = true)]
async fn t045_concurrent_sends_without_a_store_share_one_request() {
    let memory = MemoryAdapter::builder().outcomes([slow(Duration::from_millis(250))]).build();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let message = keyed("Appointment tomorrow at 9.");
    let (a, b) = tokio::join!(client.send(&message), client.send(&message));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(memory.sent().len(), 1);
    assert_eq!(a.id, b.id);
    assert_eq!([a.replayed, b.replayed], [false, true]);
}

#[tokio::test(start_paused = true)]
async fn t046_a_different_message_with_the_running_key_conflicts() {
    let memory = MemoryAdapter::builder().outcomes([slow(Duration::from_millis(250))]).build();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let (first, second) = (keyed("Appointment tomorrow at 9."), keyed("Different"));
    let (a, b) = tokio::join!(client.send(&first), client.send(&second));
    assert!(a.is_ok());
    let err = b.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IdempotencyConflict(Conflict::OtherMessage));
    assert_eq!(err.idempotency_key(), Some("appt:1:reminder"));
    assert!(!err.is_retry_safe());
    assert_eq!(memory.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn followers_share_the_leaders_error() {
    let failing = MemoryOutcome::script(|_, _| async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Outcome::unknown(UnknownReason::Network)
    });
    let memory = MemoryAdapter::builder().outcomes([failing]).build();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let message = keyed("x");
    let (a, b) = tokio::join!(client.send(&message), client.send(&message));
    assert_eq!(a.unwrap_err().kind(), ErrorKind::Unknown(UnknownReason::Network));
    assert_eq!(b.unwrap_err().kind(), ErrorKind::Unknown(UnknownReason::Network));
    assert_eq!(memory.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_leader_never_leaves_followers_hanging() {
    let hangs = MemoryOutcome::script(|_, _| std::future::pending::<Outcome>());
    let memory = MemoryAdapter::builder().outcomes([hangs]).build();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let message = keyed("x");

    let leader = {
        let (client, message) = (client.clone(), message.clone());
        tokio::spawn(async move { client.send(&message).await })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    let follower = {
        let (client, message) = (client.clone(), message.clone());
        tokio::spawn(async move { client.send(&message).await })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    leader.abort();

    let err = follower.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Aborted));
    assert!(!err.is_retry_safe());
    // The key is free again in this process (without a store nothing remembers it).
    assert!(client.send(&message).await.is_ok());
    assert_eq!(memory.sent().len(), 2);
}

#[tokio::test]
async fn sequential_sends_without_a_store_are_not_coalesced() {
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let message = keyed("x");
    assert!(!client.send(&message).await.unwrap().replayed);
    assert!(!client.send(&message).await.unwrap().replayed);
    assert_eq!(memory.sent().len(), 2);
}
