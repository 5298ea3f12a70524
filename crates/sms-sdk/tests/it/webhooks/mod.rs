//! Webhook verification and normalization, per provider (vectors T179–T246).

// Helpers shared by the provider modules: a build with only some (or no) providers leaves some unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

#[cfg(all(feature = "axum", feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod any;
#[cfg(all(feature = "axum", feature = "infobip"))]
mod batch;
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

use std::time::SystemTime;

use sms_sdk::webhook::{AnyWebhook, EventKind, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// `verify` and `verify_at` for the vectors: each request is verified by the provider's verifier
/// alone and through an [`AnyWebhook`] holding it after the other providers' verifiers (with
/// other secrets), and the two must agree. So every vector of the four providers also passes
/// through one multi-provider verifier. The modules import this trait instead of
/// `WebhookVerifier`, so their calls stay `verifier.verify(&request)`.
pub(crate) trait ThroughAny {
    /// As [`WebhookVerifier::verify`], checked against an `AnyWebhook`.
    fn verify(&self, request: &WebhookRequest<'_>) -> Result<SmsEvent, WebhookError> {
        self.verify_at(request, SystemTime::now())
    }

    /// As [`WebhookVerifier::verify_at`], checked against an `AnyWebhook`.
    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError>;
}

impl<V: WebhookVerifier + Clone + 'static> ThroughAny for V {
    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        let direct = WebhookVerifier::verify_at(self, request, now);
        let any = others(self.provider()).with(self.clone());
        let through = WebhookVerifier::verify_at(&any, request, now);
        match (&direct, &through) {
            (Ok(alone), Ok(via_any)) => {
                assert_eq!(serde_json::to_value(alone).unwrap(), serde_json::to_value(via_any).unwrap());
            }
            (Err(alone), Err(via_any)) if self.recognizes(request.headers) => assert_eq!(alone, via_any),
            (Err(_), Err(via_any)) => {
                assert_eq!(via_any, &WebhookError::MissingSignature { provider: "any" }, "{request:?}");
            }
            _ => panic!("alone {direct:?}, through AnyWebhook {through:?}"),
        }
        direct
    }
}

/// An `AnyWebhook` with a verifier of every provider but `provider`, each with a secret no
/// vector uses.
fn others(provider: &str) -> AnyWebhook {
    let any = AnyWebhook::new();
    #[cfg(feature = "twilio")]
    let any =
        if provider == "twilio" { any } else { any.with(sms_sdk::TwilioWebhook::new("another-auth-token").unwrap()) };
    #[cfg(feature = "telnyx")]
    let any = if provider == "telnyx" {
        any
    } else {
        let key = sms_sdk::testing::webhooks::TelnyxKeyPair::from_seed([9; 32]);
        any.with(sms_sdk::TelnyxWebhook::new(&key.public_key).unwrap())
    };
    #[cfg(feature = "plivo")]
    let any =
        if provider == "plivo" { any } else { any.with(sms_sdk::PlivoWebhook::new("another-auth-token").unwrap()) };
    #[cfg(feature = "vonage")]
    let any = if provider == "vonage" {
        any
    } else {
        any.with(sms_sdk::VonageWebhook::new("another-signature-secret").unwrap())
    };
    let _ = provider;
    any
}

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
