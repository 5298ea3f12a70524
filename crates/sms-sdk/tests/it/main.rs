//! Integration tests of the client over memory adapters: one binary, one link.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

mod architecture;
#[cfg(all(feature = "axum", feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod axum_example;
mod cancel;
mod client;
mod coalescing;
mod dedupe;
mod docs;
mod examples;
mod failover;
mod hooks;
mod idempotency;
#[cfg(feature = "metrics")]
mod metrics;
mod properties;
#[cfg(any(
    feature = "twilio",
    feature = "telnyx",
    feature = "plivo",
    feature = "vonage",
    feature = "sinch",
    feature = "aws",
    feature = "infobip",
    feature = "bandwidth"
))]
mod provider;
mod rate;
mod reconcile;
mod redaction;
mod retry;
mod stores;
mod suppression;
mod validation;
mod webhooks;

use std::time::Duration;

use sms_sdk::testing::{MemoryAdapter, RejectedOptions, rejected_outcome};
use sms_sdk::{Category, Message, Outcome, RetryPolicy};

/// The case count of a `prop_` test: `SMS_SDK_FUZZ_CASES`, else 10,000,000 when `SMS_SDK_LONG=1`
/// (a long run), else `ci`.
pub(crate) fn prop_cases(ci: u32) -> u32 {
    let long = std::env::var("SMS_SDK_LONG").is_ok_and(|v| v == "1");
    let explicit = std::env::var("SMS_SDK_FUZZ_CASES").ok().and_then(|v| v.trim().replace('_', "").parse().ok());
    explicit.unwrap_or(if long { 10_000_000 } else { ci })
}

/// A loopback TCP endpoint that accepts every connection, keeps it open, and never reads or
/// answers (a provider or store server that hangs). Returns its address.
#[cfg_attr(
    not(any(
        feature = "postgres",
        feature = "redis",
        all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")
    )),
    allow(dead_code)
)]
pub(crate) async fn silent_endpoint() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    address
}

/// The reference tests' recipient.
pub(crate) const TO: &str = "+14155550123";

/// `{to: "+14155550123", body: "Your order has shipped."}`.
pub(crate) fn message() -> Message {
    Message::new(TO, "Your order has shipped.")
}

/// `{maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 50}`.
pub(crate) fn fast_retry() -> RetryPolicy {
    RetryPolicy::new(2, Duration::from_millis(1), Duration::from_millis(50))
}

/// A memory adapter called `name`.
pub(crate) fn named(name: &str) -> MemoryAdapter {
    MemoryAdapter::builder().name(name).build()
}

/// A rejection in `category` whose details name `provider`.
pub(crate) fn rejection_by(provider: &str, category: Category) -> Outcome {
    rejected_outcome(category, RejectedOptions { provider: Some(provider.into()), ..RejectedOptions::default() })
}

/// A plain rejection in `category`.
pub(crate) fn rejection(category: Category) -> Outcome {
    rejected_outcome(category, RejectedOptions::default())
}

/// A rate-limit rejection with an optional `Retry-After`.
pub(crate) fn rate_limited(retry_after: Option<Duration>) -> Outcome {
    rejected_outcome(Category::RateLimited, RejectedOptions { retry_after, ..RejectedOptions::default() })
}
