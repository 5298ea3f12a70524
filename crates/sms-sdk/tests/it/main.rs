//! Integration tests of the client over memory adapters: one binary, one link.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

#[cfg(all(feature = "axum", feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod axum_example;
mod cancel;
mod client;
mod coalescing;
mod dedupe;
mod examples;
mod failover;
mod hooks;
mod idempotency;
mod properties;
#[cfg(any(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod provider;
mod redaction;
mod retry;
mod stores;
mod validation;
mod webhooks;

use std::time::Duration;

use sms_sdk::testing::{MemoryAdapter, RejectedOptions, rejected_outcome};
use sms_sdk::{Category, Message, Outcome, RetryPolicy};

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
