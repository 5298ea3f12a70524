//! Rate-limit retries on the same adapter (time is paused: waits are exact and instant).

use std::time::Duration;

use sms_sdk::testing::MemoryAdapter;
use sms_sdk::{Category, Client, ErrorKind, Failover, RetryPolicy};
use tokio::time::Instant;

use super::{fast_retry, message, named, rate_limited, rejection};

#[tokio::test(start_paused = true)]
async fn t076_rate_limited_then_accepted() {
    let memory = MemoryAdapter::builder().outcomes([rate_limited(None)]).build();
    let client = Client::builder().adapter(memory.clone()).retry(fast_retry()).build().unwrap();
    let receipt = client.send(&message()).await.unwrap();
    let numbers: Vec<_> = receipt.attempts.iter().map(|a| (a.provider.as_str(), a.attempt)).collect();
    assert_eq!(numbers, [("memory", 1), ("memory", 2)]);
    assert_eq!(memory.sent().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn t077_rate_limited_until_attempts_run_out() {
    let memory =
        MemoryAdapter::builder().outcomes([rate_limited(None), rate_limited(Some(Duration::from_millis(5)))]).build();
    let client = Client::builder().adapter(memory.clone()).retry(fast_retry()).build().unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::RateLimited));
    assert_eq!(err.code(), "provider_rate_limited");
    assert_eq!(err.retry_after(), Some(Duration::from_millis(5)));
    assert!(err.is_retry_safe());
    assert_eq!(memory.sent().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn t078_retry_after_within_the_cap_is_waited() {
    let memory = MemoryAdapter::builder().outcomes([rate_limited(Some(Duration::from_millis(40)))]).build();
    let retry = RetryPolicy::new(2, Duration::from_millis(1), Duration::from_millis(100));
    let client = Client::builder().adapter(memory.clone()).retry(retry).build().unwrap();
    let started = Instant::now();
    client.send(&message()).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(40));
    assert_eq!(memory.sent().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn t079_a_longer_retry_after_stops_without_waiting() {
    let memory = MemoryAdapter::builder().outcomes([rate_limited(Some(Duration::from_mins(1)))]).build();
    let client = Client::builder().adapter(memory.clone()).retry(fast_retry()).build().unwrap();
    let started = Instant::now();
    let err = client.send(&message()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::RateLimited));
    assert_eq!(err.retry_after(), Some(Duration::from_mins(1)));
    assert_eq!(memory.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn t080_rate_limited_primary_fails_over_after_its_retries() {
    let primary = MemoryAdapter::builder().name("primary").outcomes([rate_limited(None), rate_limited(None)]).build();
    let client = Client::builder()
        .adapter(primary)
        .adapter(named("secondary"))
        .failover(Failover::OnEligibleRejection)
        .retry(fast_retry())
        .build()
        .unwrap();
    let receipt = client.send(&message()).await.unwrap();
    let numbers: Vec<_> = receipt.attempts.iter().map(|a| (a.provider.as_str(), a.attempt)).collect();
    assert_eq!(numbers, [("primary", 1), ("primary", 2), ("secondary", 1)]);
}

#[tokio::test(start_paused = true)]
async fn t081_other_categories_are_never_retried() {
    for category in [
        Category::Sender,
        Category::Auth,
        Category::Account,
        Category::Recipient,
        Category::Compliance,
        Category::Request,
    ] {
        let memory = MemoryAdapter::builder().outcomes([rejection(category)]).build();
        let retry = RetryPolicy::new(5, Duration::from_millis(1), Duration::from_millis(50));
        let client = Client::builder().adapter(memory.clone()).retry(retry).build().unwrap();
        client.send(&message()).await.unwrap_err();
        assert_eq!(memory.sent().len(), 1, "{category}");
    }
}

#[tokio::test(start_paused = true)]
async fn t082_one_attempt_means_no_retry() {
    let memory = MemoryAdapter::builder().outcomes([rate_limited(None)]).build();
    let client = Client::builder().adapter(memory.clone()).retry(RetryPolicy::none()).build().unwrap();
    assert_eq!(client.send(&message()).await.unwrap_err().kind(), ErrorKind::Rejected(Category::RateLimited));
    assert_eq!(memory.sent().len(), 1);
}
