//! Webhook verification and normalization, per provider (vectors T179–T246).

// Helpers shared by the provider modules: a build with only some (or no) providers leaves some unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

#[cfg(feature = "plivo")]
mod plivo;
#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod random;
#[cfg(all(feature = "axum", feature = "twilio"))]
mod server;
#[cfg(feature = "telnyx")]
mod telnyx;
#[cfg(all(feature = "tower", feature = "twilio", feature = "sqlite"))]
mod tower_dedupe;
#[cfg(all(feature = "tower", feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod tower_layer;
#[cfg(feature = "twilio")]
mod twilio;
#[cfg(feature = "vonage")]
mod vonage;

use sms_sdk::webhook::{EventKind, SmsEvent, WebhookError};

/// The lowercase hex SHA-256 of `bytes`, as Twilio's `bodySHA256` and Vonage's `payload_hash`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    use std::fmt::Write as _;
    sha2::Sha256::digest(bytes).iter().fold(String::with_capacity(64), |mut hex, b| {
        write!(hex, "{b:02x}").unwrap();
        hex
    })
}

/// The reason of a signature error, or a panic naming what came instead.
pub(crate) fn reason(result: Result<SmsEvent, WebhookError>) -> &'static str {
    match result {
        Err(error) => error.reason().unwrap_or_else(|| panic!("not a signature error: {error:?}")),
        Ok(event) => panic!("expected a signature error, got {event:?}"),
    }
}

/// Asserts a payload error.
pub(crate) fn assert_payload_error(result: Result<SmsEvent, WebhookError>) {
    match result {
        Err(error) => {
            assert_eq!(error.code(), "webhook_payload", "{error:?}");
            assert!(!error.is_authentication());
        }
        Ok(event) => panic!("expected a payload error, got {event:?}"),
    }
}

/// The status update of a status event.
pub(crate) fn status(event: &SmsEvent) -> &sms_sdk::webhook::event::StatusUpdate {
    match &event.kind {
        EventKind::Queued(s)
        | EventKind::Sent(s)
        | EventKind::Delivered(s)
        | EventKind::Undelivered(s)
        | EventKind::Filtered(s) => s,
        other @ (EventKind::Received(_)
        | EventKind::OptedOut(_)
        | EventKind::OptedIn(_)
        | EventKind::Help(_)
        | EventKind::Unrecognized { .. }
        | _) => panic!("not a status event: {other:?}"),
    }
}

/// Runs `work` on its own thread and panics when it takes longer than `limit` (a verifier that
/// loops on a number from the body fails the test instead of hanging it).
pub(crate) fn within<T: Send + 'static>(limit: std::time::Duration, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(work());
    });
    result.recv_timeout(limit).unwrap_or_else(|_| panic!("still running after {limit:?}"))
}

/// Asserts a payload error whose message names `key`.
pub(crate) fn assert_ambiguous(result: Result<SmsEvent, WebhookError>, key: &str) {
    match result {
        Err(WebhookError::Payload { message, .. }) => assert!(message.contains(key), "{message}"),
        other => panic!("expected a payload error naming {key}, got {other:?}"),
    }
}

/// `n` extra parameters `X0=1`, `X1=1`, … after `params`.
pub(crate) fn padded(params: &[(&str, &str)], n: usize) -> Vec<(String, String)> {
    let own = params.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
    own.chain((0..n).map(|i| (format!("X{i}"), "1".to_owned()))).collect()
}
