//! Metrics, recorded through the [`metrics`](https://docs.rs/metrics) facade when the `metrics`
//! feature is on: install any recorder (a Prometheus exporter, StatsD, your own) and the client,
//! the stores and the webhook verifiers report to it. Without the feature nothing is recorded
//! and the calls compile to nothing.
//!
//! | name | type | labels | what |
//! | --- | --- | --- | --- |
//! | `sms_sdk_sends_total` | counter | `provider`, `outcome`, and `category`, `reason` or `kind` | one per [`Client::send`](crate::Client::send) |
//! | `sms_sdk_attempts_total` | counter | `provider`, `outcome` | one per provider request |
//! | `sms_sdk_attempt_duration_seconds` | histogram | `provider`, `outcome` | each provider request's duration |
//! | `sms_sdk_retries_total` | counter | `provider` | a rate-limited request about to be retried |
//! | `sms_sdk_failovers_total` | counter | `from`, `to` | a send moving on to the next provider |
//! | `sms_sdk_queue_wait_seconds` | histogram | `provider` | how long each request waited for a slot of its adapter's limit on requests in flight (zero when one was free) |
//! | `sms_sdk_replays_total` | counter | | a result replayed instead of sent |
//! | `sms_sdk_store_operation_duration_seconds` | histogram | `operation`, `result` | each idempotency store call the client makes |
//! | `sms_sdk_store_errors_total` | counter | `operation` | those that failed |
//! | `sms_sdk_webhook_verifications_total` | counter | `provider`, `result` | each webhook verification |
//!
//! Label values:
//! - `outcome`: `accepted`, `rejected` or `unknown`; a send that failed before or without a
//!   provider's answer (invalid message, policy, store, conflict, cancelled, queue timeout) is
//!   `failed`.
//! - `category` (rejected): the [`Category`](crate::Category) (`auth`, `rate_limited`, …), or
//!   `all_providers_rejected` when every provider rejected; `reason` (unknown): the
//!   [`UnknownReason`](crate::UnknownReason) (`timeout`, `network`, …); `kind` (failed): the
//!   error's [`code`](crate::Error::code).
//! - `provider`: the adapter's name; `none` when no provider was asked.
//! - `operation`: `reserve`, `finalize` or `remember_reference` (correlation on); `result`: `ok` or `error`.
//! - webhook `result`: `verified`, or why not: the signature failure's
//!   [`reason`](crate::webhook::WebhookError::reason) (`invalid_signature`, `stale_timestamp`, …) or
//!   else the error's [`code`](crate::webhook::WebhookError::code) (`webhook_payload`, …).
//!
//! No label ever holds a phone number, a message body, a key or a provider's message id.
//!
//! ```
//! # #[cfg(all(feature = "metrics", feature = "testing"))] {
//! use metrics_util::debugging::DebuggingRecorder;
//! use sms_sdk::testing::MemoryAdapter;
//! use sms_sdk::{Client, Message};
//!
//! // Any recorder: a Prometheus exporter in production, the debugging one here.
//! let recorder = DebuggingRecorder::new();
//! let snapshotter = recorder.snapshotter();
//! let client = Client::builder().adapter(MemoryAdapter::new()).build()?;
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! metrics::with_local_recorder(&recorder, || runtime.block_on(client.send(&Message::new("+14155550123", "Hi"))))?;
//!
//! let sends: Vec<String> = snapshotter
//!     .snapshot()
//!     .into_vec()
//!     .into_iter()
//!     .filter(|(key, ..)| key.key().name() == sms_sdk::metrics::SENDS)
//!     .map(|(key, ..)| key.key().labels().map(|l| format!("{}={}", l.key(), l.value())).collect::<Vec<_>>().join(","))
//!     .collect();
//! assert_eq!(sends, ["provider=memory,outcome=accepted"]);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::time::Duration;

#[cfg(feature = "metrics")]
use crate::error::ErrorKind;
use crate::error::{AttemptOutcome, Error};
use crate::receipt::Receipt;
use crate::webhook::WebhookError;

/// Sends by outcome: `provider`, `outcome`, and `category`, `reason` or `kind`.
pub const SENDS: &str = "sms_sdk_sends_total";
/// Provider requests: `provider`, `outcome`.
pub const ATTEMPTS: &str = "sms_sdk_attempts_total";
/// Provider request durations, in seconds: `provider`, `outcome`.
pub const ATTEMPT_DURATION: &str = "sms_sdk_attempt_duration_seconds";
/// Retries after a documented rate limit: `provider`.
pub const RETRIES: &str = "sms_sdk_retries_total";
/// Moves to the next provider after an eligible rejection: `from`, `to`.
pub const FAILOVERS: &str = "sms_sdk_failovers_total";
/// How long requests waited for a slot of their adapter's limit on requests in flight, in
/// seconds: `provider`.
pub const QUEUE_WAIT: &str = "sms_sdk_queue_wait_seconds";
/// Results replayed instead of sent.
pub const REPLAYS: &str = "sms_sdk_replays_total";
/// Idempotency store call durations, in seconds: `operation`, `result`.
pub const STORE_DURATION: &str = "sms_sdk_store_operation_duration_seconds";
/// Idempotency store calls that failed: `operation`.
pub const STORE_ERRORS: &str = "sms_sdk_store_errors_total";
/// Webhook verifications: `provider`, `result`.
pub const WEBHOOK_VERIFICATIONS: &str = "sms_sdk_webhook_verifications_total";

/// One finished send.
pub(crate) fn send_finished(result: &Result<Receipt, Error>) {
    #[cfg(feature = "metrics")]
    match result {
        Ok(receipt) if receipt.replayed => {
            metrics::counter!(REPLAYS).increment(1);
            metrics::counter!(SENDS, "provider" => receipt.provider.clone(), "outcome" => "accepted").increment(1);
        }
        Ok(receipt) => {
            metrics::counter!(SENDS, "provider" => receipt.provider.clone(), "outcome" => "accepted").increment(1);
        }
        Err(error) => {
            let provider = error.attempts().last().map_or("none", |attempt| attempt.provider.as_str()).to_owned();
            let (outcome, label, value) = match error.kind() {
                ErrorKind::Rejected(category) => ("rejected", "category", category.as_str()),
                ErrorKind::AllRejected => ("rejected", "category", error.code()),
                ErrorKind::Unknown(reason) => ("unknown", "reason", reason.as_str()),
                ErrorKind::Configuration
                | ErrorKind::InvalidRecipient
                | ErrorKind::InvalidSender
                | ErrorKind::InvalidMessage { .. }
                | ErrorKind::Unsupported { .. }
                | ErrorKind::PolicyRejected
                | ErrorKind::Aborted
                | ErrorKind::QueueTimeout(_)
                | ErrorKind::IdempotencyConflict(_)
                | ErrorKind::IdempotencyInProgress
                | ErrorKind::Store
                | ErrorKind::BeforeSend => ("failed", "kind", error.code()),
            };
            metrics::counter!(SENDS, "provider" => provider, "outcome" => outcome, label => value).increment(1);
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = result;
}

/// One provider request of `provider` that ended as `outcome` after `duration`.
pub(crate) fn attempt(provider: &str, outcome: &AttemptOutcome, duration: Duration) {
    #[cfg(feature = "metrics")]
    {
        let outcome = match outcome {
            AttemptOutcome::Accepted { .. } => "accepted",
            AttemptOutcome::Rejected { .. } => "rejected",
            AttemptOutcome::Unknown { .. } => "unknown",
        };
        let provider = provider.to_owned();
        metrics::counter!(ATTEMPTS, "provider" => provider.clone(), "outcome" => outcome).increment(1);
        metrics::histogram!(ATTEMPT_DURATION, "provider" => provider, "outcome" => outcome).record(duration);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (provider, outcome, duration);
}

/// A rate-limited request of `provider` about to be retried.
pub(crate) fn retry(provider: &str) {
    #[cfg(feature = "metrics")]
    metrics::counter!(RETRIES, "provider" => provider.to_owned()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = provider;
}

/// A send moving on from `from` to `to`.
pub(crate) fn failover(from: &str, to: &str) {
    #[cfg(feature = "metrics")]
    metrics::counter!(FAILOVERS, "from" => from.to_owned(), "to" => to.to_owned()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = (from, to);
}

/// A request of `provider` that waited `waited` for a slot (admitted or not).
pub(crate) fn queue_wait(provider: &str, waited: Duration) {
    #[cfg(feature = "metrics")]
    metrics::histogram!(QUEUE_WAIT, "provider" => provider.to_owned()).record(waited);
    #[cfg(not(feature = "metrics"))]
    let _ = (provider, waited);
}

/// Times one idempotency store call; the clock is read only when metrics are recorded.
pub(crate) struct StoreTimer {
    #[cfg(feature = "metrics")]
    started: std::time::Instant,
}

impl StoreTimer {
    /// Starts timing a call.
    pub(crate) fn start() -> Self {
        Self {
            #[cfg(feature = "metrics")]
            started: std::time::Instant::now(),
        }
    }

    /// Records the call `operation`, which succeeded or not.
    #[cfg_attr(not(feature = "metrics"), allow(clippy::unused_self))] // nothing to record
    pub(crate) fn finish(self, operation: &'static str, ok: bool) {
        #[cfg(feature = "metrics")]
        store_operation(operation, self.started.elapsed(), ok);
        #[cfg(not(feature = "metrics"))]
        let _ = (operation, ok);
    }
}

/// One idempotency store call: `operation` took `duration` and succeeded or not.
#[cfg(feature = "metrics")]
fn store_operation(operation: &'static str, duration: Duration, ok: bool) {
    let result = if ok { "ok" } else { "error" };
    metrics::histogram!(STORE_DURATION, "operation" => operation, "result" => result).record(duration);
    if !ok {
        metrics::counter!(STORE_ERRORS, "operation" => operation).increment(1);
    }
}

/// One webhook verification by `provider`; passes `result` through.
#[cfg_attr(
    not(any(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage", feature = "sinch")),
    allow(dead_code)
)]
pub(crate) fn webhook_verified<T>(provider: &'static str, result: Result<T, WebhookError>) -> Result<T, WebhookError> {
    #[cfg(feature = "metrics")]
    {
        let label = result.as_ref().map_or_else(|error| error.reason().unwrap_or(error.code()), |_| "verified");
        metrics::counter!(WEBHOOK_VERIFICATIONS, "provider" => provider, "result" => label).increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = provider;
    result
}
