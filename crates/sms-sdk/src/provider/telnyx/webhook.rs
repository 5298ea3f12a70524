//! Telnyx webhooks: Ed25519 over `{timestamp}|{raw body}` with a freshness window, then the
//! message events of API v2.

use std::time::{Duration, SystemTime};

use ed25519_dalek::{Signature, VerifyingKey};
use serde_json::Value;

use super::NAME;
use crate::error::Error;
use crate::http::read_code;
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, StatusUpdate};
use crate::webhook::{
    Settings, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier, decode_base64, decode_signature, header,
    parse_json_checked, parse_time, unix_seconds,
};

/// The text Telnyx signs: `{timestamp}|{raw body}`. (The verifiers stream these pieces into
/// the signature check instead of joining them.)
#[must_use]
pub fn signed_payload(timestamp: &str, body: &[u8]) -> Vec<u8> {
    let mut data = Vec::with_capacity(timestamp.len().saturating_add(body.len()).saturating_add(1));
    data.extend_from_slice(timestamp.as_bytes());
    data.push(b'|');
    data.extend_from_slice(body);
    data
}

const SIGNATURE_HEADER: http::HeaderName = http::HeaderName::from_static("telnyx-signature-ed25519");
const TIMESTAMP_HEADER: http::HeaderName = http::HeaderName::from_static("telnyx-timestamp");

/// Verifies and parses Telnyx's message webhooks.
#[derive(Debug, Clone)]
pub struct TelnyxWebhook {
    /// The key as a curve point, decoded once; `None` when the 32 bytes are not one (then no
    /// signature verifies).
    verifying_key: Option<VerifyingKey>,
    settings: Settings,
}

impl TelnyxWebhook {
    /// A verifier for the account's Ed25519 public key (base64, 32 bytes; Mission Control →
    /// Keys & Credentials).
    ///
    /// # Errors
    /// `Configuration` when the key is not base64 of 32 bytes.
    pub fn new(public_key_base64: &str) -> Result<Self, Error> {
        let key = decode_base64(public_key_base64)
            .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
            .ok_or_else(|| Error::configuration("The Telnyx public key must be base64 of a 32-byte Ed25519 key."))?;
        Ok(Self { verifying_key: parse_key(&key), settings: Settings::default() })
    }

    crate::webhook::verifier_options!(timestamped);

    /// The verification [`WebhookVerifier::verify_at`] counts.
    fn check(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        let signature = header(request.headers, &SIGNATURE_HEADER).filter(|s| !s.is_empty());
        let timestamp = header(request.headers, &TIMESTAMP_HEADER);
        let (Some(signature), Some(timestamp)) = (signature, timestamp) else {
            return Err(WebhookError::MissingSignature { provider: NAME });
        };
        // The order of `verify_signature`; the configured key is always 32 bytes.
        check_timestamp(timestamp, now, self.settings.tolerance)?;
        let signature = decode_ed25519_signature(signature)?;
        verify_ed25519(self.verifying_key.as_ref(), &signature, timestamp, request.body)?;
        parse(request.body, self.settings.detect_keywords)
    }
}

/// The public key as a curve point, or `None` when the bytes encode none.
fn parse_key(bytes: &[u8]) -> Option<VerifyingKey> {
    VerifyingKey::from_bytes(&<[u8; 32]>::try_from(bytes).ok()?).ok()
}

/// Refuses a timestamp that is not decimal digits, or is outside `tolerance` of `now`.
fn check_timestamp(timestamp: &str, now: SystemTime, tolerance: Duration) -> Result<(), WebhookError> {
    if timestamp.is_empty() || !timestamp.bytes().all(|b| b.is_ascii_digit()) {
        return Err(WebhookError::MalformedSignature { provider: NAME });
    }
    let sent = timestamp.parse::<i64>().map_err(|_| WebhookError::MalformedSignature { provider: NAME })?;
    // `abs_diff` cannot overflow, whatever the clock and the header say.
    if unix_seconds(now).abs_diff(sent) > tolerance.as_secs() {
        return Err(WebhookError::StaleTimestamp { provider: NAME });
    }
    Ok(())
}

/// The 64 bytes of a base64 signature header.
fn decode_ed25519_signature(signature_base64: &str) -> Result<Signature, WebhookError> {
    decode_signature(signature_base64, 64)
        .and_then(|bytes| Signature::from_slice(&bytes).ok())
        .ok_or(WebhookError::MalformedSignature { provider: NAME })
}

/// Ed25519 (RFC 8032, cofactorless: the recomputed `R` must equal the signature's bytes, and `S`
/// must be reduced) over `{timestamp}|{body}`, streamed into the hash: the body is not copied.
fn verify_ed25519(
    key: Option<&VerifyingKey>,
    signature: &Signature,
    timestamp: &str,
    body: &[u8],
) -> Result<(), WebhookError> {
    let invalid = WebhookError::InvalidSignature { provider: NAME };
    let mut verifier = key.ok_or(invalid.clone())?.verify_stream(signature).map_err(|_| invalid.clone())?;
    verifier.update(timestamp.as_bytes());
    verifier.update(b"|");
    verifier.update(body);
    verifier.finalize_and_verify().map_err(|_| invalid)
}

/// Checks a Telnyx signature, in the reference's order of reasons.
///
/// # Errors
/// The first failed check as a [`WebhookError`].
pub fn verify_signature(
    public_key_base64: &str,
    signature_base64: &str,
    timestamp: &str,
    body: &[u8],
    now: SystemTime,
    tolerance: Duration,
) -> Result<(), WebhookError> {
    check_timestamp(timestamp, now, tolerance)?;
    let key = decode_signature(public_key_base64, 32)
        .filter(|k| k.len() == 32)
        .ok_or(WebhookError::InvalidCredentials { provider: NAME })?;
    let signature = decode_ed25519_signature(signature_base64)?;
    verify_ed25519(parse_key(&key).as_ref(), &signature, timestamp, body)
}

impl WebhookVerifier for TelnyxWebhook {
    fn provider(&self) -> &'static str {
        NAME
    }

    fn body_limit(&self) -> usize {
        self.settings.max_body
    }

    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        crate::metrics::webhook_verified(NAME, self.check(request, now))
    }
}

/// What the normalizer reads: an object repeating a key on these paths is ambiguous.
const READ: [&[&str]; 10] = [
    &["data", "id"],
    &["data", "event_type"],
    &["data", "occurred_at"],
    &["data", "payload", "id"],
    &["data", "payload", "from", "phone_number"],
    &["data", "payload", "to", "*", "phone_number"],
    &["data", "payload", "to", "*", "status"],
    &["data", "payload", "text"],
    &["data", "payload", "media", "*", "url"],
    &["data", "payload", "errors", "*", "code"],
];

/// Normalizes a verified Telnyx body.
pub(crate) fn parse(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let raw = parse_json_checked(NAME, body, &READ)?;
    let (dedupe_key, occurred_at, kind) = {
        let data = raw.get("data").filter(|d| d.is_object()).ok_or_else(|| payload_error("missing data"))?;
        let event_id = text(data, "id").ok_or_else(|| payload_error("missing data.id"))?;
        let event_type = text(data, "event_type").ok_or_else(|| payload_error("missing data.event_type"))?;
        let occurred_at = data.get("occurred_at").and_then(Value::as_str).and_then(parse_time);
        (format!("telnyx:{event_id}"), occurred_at, kind(data, event_type, detect_keywords)?)
    };
    // The record moves into the event: it is not copied.
    Ok(SmsEvent::new(NAME, dedupe_key, occurred_at, crate::webhook::Raw::ready(raw), kind))
}

fn payload_error(message: &str) -> WebhookError {
    WebhookError::payload(NAME, message)
}

/// The non-empty string at `key` of `value`.
fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// The event of `data` (an object) of type `event_type`.
fn kind(data: &Value, event_type: String, detect_keywords: bool) -> Result<EventKind, WebhookError> {
    if !matches!(event_type.as_str(), "message.received" | "message.sent" | "message.finalized") {
        return Ok(EventKind::Unrecognized { provider_event_type: event_type });
    }
    let payload = data.get("payload").filter(|p| p.is_object()).ok_or_else(|| payload_error("missing data.payload"))?;
    let provider_id = text(payload, "id").ok_or_else(|| payload_error("missing data.payload.id"))?;
    let from = payload.get("from").and_then(|f| text(f, "phone_number"));
    let recipient = payload.get("to").and_then(|to| to.get(0));
    let to = recipient.and_then(|r| text(r, "phone_number"));
    if event_type == "message.received" {
        let (Some(from), Some(to)) = (from, to) else { return Err(payload_error("missing from or to")) };
        let media_urls = payload
            .get("media")
            .and_then(Value::as_array)
            .map(|media| media.iter().filter_map(|m| text(m, "url")).collect())
            .unwrap_or_default();
        let body = payload.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
        let message = Inbound { provider_id, from, to, body, media_urls };
        return Ok(EventKind::inbound(message, None, detect_keywords));
    }
    let status = recipient.and_then(|r| text(r, "status"));
    let error_code = payload.get("errors").and_then(|e| e.get(0)).and_then(|e| read_code(e, "code"));
    let delivery = match status.as_deref() {
        Some("queued" | "sending") => Some(DeliveryStatus::Queued),
        Some("sent" | "delivery_unconfirmed") => Some(DeliveryStatus::Sent),
        Some("delivered") => Some(DeliveryStatus::Delivered),
        Some("sending_failed" | "delivery_failed" | "expired")
            if matches!(error_code.as_deref(), Some("40002" | "40003" | "40322")) =>
        {
            Some(DeliveryStatus::Filtered)
        }
        Some("sending_failed" | "delivery_failed" | "expired") => Some(DeliveryStatus::Undelivered),
        _ => None,
    };
    Ok(match (delivery, status) {
        (Some(delivery), Some(provider_status)) => {
            EventKind::status(delivery, StatusUpdate { provider_id, provider_status, error_code, from, to })
        }
        (_, status) => {
            let status = status.unwrap_or_else(|| "no_status".into());
            EventKind::Unrecognized { provider_event_type: format!("{event_type}:{status}") }
        }
    })
}
