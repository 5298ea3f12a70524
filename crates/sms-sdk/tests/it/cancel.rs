//! Cancellation and the per-request timeout.

use std::time::Duration;

use sms_sdk::testing::{MemoryAdapter, MemoryOutcome};
use sms_sdk::{CancellationToken, Client, ErrorKind, Failover, Outcome, RetryPolicy, SendOptions, UnknownReason};

use super::{message, named, rate_limited};

fn hangs() -> MemoryOutcome {
    MemoryOutcome::script(|_, _| std::future::pending::<Outcome>())
}

fn cancel_after(token: &CancellationToken, after: Duration) {
    let token = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        token.cancel();
    });
}

#[tokio::test(start_paused = true)]
async fn t083_cancelled_before_sending() {
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let token = CancellationToken::new();
    token.cancel();
    let err = client.send_with(&message(), SendOptions::default().cancel(token)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Aborted);
    assert!(err.is_retry_safe());
    assert!(err.attempts().is_empty());
    assert!(memory.sent().is_empty());
}

#[tokio::test(start_paused = true)]
async fn t084_cancelled_while_a_request_is_in_flight() {
    let memory = MemoryAdapter::builder().outcomes([hangs()]).build();
    let client = Client::builder().adapter(memory.clone()).build().unwrap();
    let token = CancellationToken::new();
    cancel_after(&token, Duration::from_millis(10));
    let err = client.send_with(&message(), SendOptions::default().cancel(token)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Aborted));
    assert!(!err.is_retry_safe());
    assert_eq!(memory.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn t085_timeout_is_unknown_and_never_fails_over() {
    let memory = MemoryAdapter::builder().name("primary").outcomes([hangs()]).build();
    let backup = named("backup");
    let client = Client::builder()
        .adapter(memory)
        .adapter(backup.clone())
        .failover(Failover::OnEligibleRejection)
        .timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Timeout));
    assert!(backup.sent().is_empty());
    assert!(err.attempts()[0].duration >= Duration::from_millis(20));
}

#[tokio::test(start_paused = true)]
async fn t086_cancelled_during_a_rate_limit_wait() {
    let memory = MemoryAdapter::builder().outcomes([rate_limited(Some(Duration::from_secs(1)))]).build();
    let client = Client::builder()
        .adapter(memory.clone())
        .retry(RetryPolicy::new(2, Duration::from_millis(500), Duration::from_secs(5)))
        .build()
        .unwrap();
    let token = CancellationToken::new();
    cancel_after(&token, Duration::from_millis(10));
    let err = client.send_with(&message(), SendOptions::default().cancel(token)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Aborted);
    assert!(err.is_retry_safe());
    assert_eq!(err.attempts().len(), 1);
    assert_eq!(memory.sent().len(), 1);
}
