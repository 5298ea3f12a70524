//! Telnyx webhooks: Ed25519 over `{timestamp}|{raw body}` with a freshness window, then the
//! message events of API v2.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use ed25519_dalek::{Signature, VerifyingKey};
use serde::Deserialize;

use super::NAME;
use crate::error::Error;
use crate::json::{self, Code, Items, Object, Text};
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, StatusUpdate};
use crate::webhook::verify::{Settings, check_unix_timestamp, decode_base64, decode_signature, header, parse_time};
use crate::webhook::{Raw, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// The text Telnyx signs with its Ed25519 key: `{timestamp}|{raw body}`, for signing test
/// requests (the verifiers stream these pieces into the signature check instead of joining
/// them).
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

    crate::webhook::verify::verifier_options!(timestamped);

    /// The verification [`WebhookVerifier::verify_at`] counts.
    fn check(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        let signature = header(request.headers, &SIGNATURE_HEADER).filter(|s| !s.is_empty());
        let timestamp = header(request.headers, &TIMESTAMP_HEADER);
        let (Some(signature), Some(timestamp)) = (signature, timestamp) else {
            return Err(WebhookError::MissingSignature { provider: NAME });
        };
        // The order of `verify_signature`; the configured key is always 32 bytes.
        check_unix_timestamp(NAME, timestamp, now, self.settings.tolerance)?;
        let signature = decode_ed25519_signature(signature)?;
        verify_ed25519(self.verifying_key.as_ref(), &signature, timestamp, request.body)?;
        parse(request.body, self.settings.detect_keywords)
    }
}

/// The public key as a curve point, or `None` when the bytes encode none.
fn parse_key(bytes: &[u8]) -> Option<VerifyingKey> {
    VerifyingKey::from_bytes(&<[u8; 32]>::try_from(bytes).ok()?).ok()
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
    check_unix_timestamp(NAME, timestamp, now, tolerance)?;
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
    /// A `telnyx-signature-ed25519` header.
    fn recognizes(&self, headers: &http::HeaderMap) -> bool {
        headers.contains_key(&SIGNATURE_HEADER)
    }
}

/// The keys the normalizer reads (each refused when its object repeats it), as its reference
/// reader in the tests walks them.
#[cfg(test)]
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

/// Normalizes a verified Telnyx body: the members it reads are read in place (no `Value` is
/// built; the event's `raw` object is built from the body when first read), and an object that
/// repeats one of them is refused.
pub(crate) fn parse(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let envelope =
        json::read::<Envelope<'_>>(body).map_err(|error| payload_error(&json::refusal(&error)))?.unwrap_or_default();
    let data = &envelope.data;
    if !data.present() {
        return Err(payload_error("missing data"));
    }
    let event_id = data.id.non_empty().ok_or_else(|| payload_error("missing data.id"))?;
    let event_type = data.event_type.non_empty().ok_or_else(|| payload_error("missing data.event_type"))?;
    let occurred_at = data.occurred_at.0.as_deref().and_then(parse_time);
    let kind = kind(data, event_type, detect_keywords)?;
    Ok(SmsEvent::new(NAME, format!("telnyx:{event_id}"), occurred_at, Raw::json(body), kind))
}

fn payload_error(message: &str) -> WebhookError {
    WebhookError::payload(NAME, message)
}

/// The event of `data` (an object) of type `event_type`.
fn kind(data: &Data<'_>, event_type: &str, detect_keywords: bool) -> Result<EventKind, WebhookError> {
    if !matches!(event_type, "message.received" | "message.sent" | "message.finalized") {
        return Ok(EventKind::Unrecognized { provider_event_type: event_type.to_owned() });
    }
    let payload = &data.payload;
    if !payload.present() {
        return Err(payload_error("missing data.payload"));
    }
    let provider_id = payload.id.non_empty().ok_or_else(|| payload_error("missing data.payload.id"))?.to_owned();
    let from = payload.from.phone_number.non_empty().map(str::to_owned);
    let recipient = payload.to.0.first();
    let to = recipient.and_then(|r| r.phone_number.non_empty()).map(str::to_owned);
    if event_type == "message.received" {
        let (Some(from), Some(to)) = (from, to) else { return Err(payload_error("missing from or to")) };
        let media_urls = payload.media.0.iter().filter_map(|m| m.url.non_empty()).map(str::to_owned).collect();
        let body = payload.text.0.as_deref().unwrap_or_default().to_owned();
        let message = Inbound { provider_id, from, to, body, media_urls };
        return Ok(EventKind::inbound(message, None, detect_keywords));
    }
    let status = recipient.and_then(|r| r.status.non_empty());
    let error_code = payload.errors.0.first().and_then(|e| e.code.text()).map(Cow::into_owned);
    let delivery = status.and_then(|status| delivery_status(status, error_code.as_deref()));
    Ok(match (delivery, status) {
        (Some(delivery), Some(status)) => {
            let provider_status = status.to_owned();
            EventKind::status(delivery, StatusUpdate { provider_id, provider_status, error_code, from, to })
        }
        (_, status) => {
            let status = status.unwrap_or("no_status");
            EventKind::Unrecognized { provider_event_type: format!("{event_type}:{status}") }
        }
    })
}

/// The delivery state of a recipient's `status`; a failure with one of the spam or blocking
/// codes as the first error is filtered.
fn delivery_status(status: &str, error_code: Option<&str>) -> Option<DeliveryStatus> {
    match status {
        "queued" | "sending" => Some(DeliveryStatus::Queued),
        "sent" | "delivery_unconfirmed" => Some(DeliveryStatus::Sent),
        "delivered" => Some(DeliveryStatus::Delivered),
        "sending_failed" | "delivery_failed" | "expired" if matches!(error_code, Some("40002" | "40003" | "40322")) => {
            Some(DeliveryStatus::Filtered)
        }
        "sending_failed" | "delivery_failed" | "expired" => Some(DeliveryStatus::Undelivered),
        _ => None,
    }
}

/// The members of a Telnyx body the normalizer reads.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Envelope<'a> {
    #[serde(borrow)]
    data: Object<Data<'a>>,
}

/// `data`: the event.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Data<'a> {
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    event_type: Text<'a>,
    #[serde(borrow)]
    occurred_at: Text<'a>,
    #[serde(borrow)]
    payload: Object<Payload<'a>>,
}

/// `data.payload`: the message.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Payload<'a> {
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    from: Object<Sender<'a>>,
    #[serde(borrow)]
    to: Items<Recipient<'a>>,
    #[serde(borrow)]
    text: Text<'a>,
    #[serde(borrow)]
    media: Items<Media<'a>>,
    #[serde(borrow)]
    errors: Items<Problem<'a>>,
}

/// `data.payload.from`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Sender<'a> {
    #[serde(borrow)]
    phone_number: Text<'a>,
}

/// An element of `data.payload.to`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Recipient<'a> {
    #[serde(borrow)]
    phone_number: Text<'a>,
    #[serde(borrow)]
    status: Text<'a>,
}

/// An element of `data.payload.media`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Media<'a> {
    #[serde(borrow)]
    url: Text<'a>,
}

/// An element of `data.payload.errors`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Problem<'a> {
    #[serde(borrow)]
    code: Code<'a>,
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::http::read_code;
    use crate::json::random::{damage, random_json};
    use crate::json::reference::{assert_agree, value_checked};

    /// The normalizer over a `Value` of the whole body (a member it reads repeated refused): the
    /// reference the derived readers must agree with.
    fn through_value(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
        let raw = value_checked(body, &READ).map_err(|why| WebhookError::payload(NAME, why))?;
        let data = raw.get("data").filter(|d| d.is_object()).ok_or_else(|| payload_error("missing data"))?;
        let event_id = text(data, "id").ok_or_else(|| payload_error("missing data.id"))?;
        let event_type = text(data, "event_type").ok_or_else(|| payload_error("missing data.event_type"))?;
        let occurred_at = data.get("occurred_at").and_then(Value::as_str).and_then(parse_time);
        let kind = value_kind(data, event_type, detect_keywords)?;
        Ok(SmsEvent::new(NAME, format!("telnyx:{event_id}"), occurred_at, Raw::ready(raw.clone()), kind))
    }

    fn text(value: &Value, key: &str) -> Option<String> {
        value.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
    }

    fn value_kind(data: &Value, event_type: String, detect_keywords: bool) -> Result<EventKind, WebhookError> {
        if !matches!(event_type.as_str(), "message.received" | "message.sent" | "message.finalized") {
            return Ok(EventKind::Unrecognized { provider_event_type: event_type });
        }
        let payload =
            data.get("payload").filter(|p| p.is_object()).ok_or_else(|| payload_error("missing data.payload"))?;
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
        let delivery = status.as_deref().and_then(|status| delivery_status(status, error_code.as_deref()));
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

    fn same_as_value(body: &[u8]) {
        for detect_keywords in [true, false] {
            assert_agree(body, parse(body, detect_keywords), through_value(body, detect_keywords));
        }
    }

    #[test]
    fn written_bodies_normalize_as_through_a_value() {
        let bodies: &[&str] = &[
            r#"{"data":{"id":"e1","event_type":"message.received","occurred_at":"2023-11-14T22:13:20.000+00:00","payload":{"id":"m1","from":{"phone_number":"+14155550123"},"to":[{"phone_number":"+15005550006"}],"text":"stop!","media":[{"url":"https://a"},{"url":""},7,{"url":"https://b"}]}}}"#,
            r#"{"data":{"id":"e1","event_type":"message.finalized","payload":{"id":"m1","to":[{"status":"delivery_failed"}],"errors":[{"code":40002}]}}}"#,
            r#"{"data":{"id":"e1","event_type":"message.sent","payload":{"id":"m1","to":[{"status":"sent"},{"status":"x","status":"y"}]}}}"#,
            r#"{"data":{"id":"e1","event_type":"message.sent","payload":{"id":"m1","to":{"*":{"status":"sent"},"*":{}}}}}"#,
            r#"{"data":{"id":"e1","event_type":"message.sent","payload":{"id":"m1","to":{"*":{"status":"sent"}}}}}"#,
            r#"{"data":{"id":"e1","event_type":"message.sent","payload":{"id":"m1","from":{"status":"a","status":"b"}}}}"#,
            r#"{"data":{"id":"e1","i\u0064":"e2","event_type":"x"}}"#,
            r#"{"data":{"id":"e1","event_type":"x","other":{"a":1,"a":2}},"data2":1,"data2":2}"#,
            r#"{"data":{"id":"e1","event_type":"x"},"z":"\ud800"}"#,
            r#"{"data":{"id":"e1","event_type":"x"},"z":1e999}"#,
            r#"{"data":{"id":"e1","event_type":"x","id":"e1"},"z":[}"#,
            r#"{"data":[],"data":{}}"#,
            r#"{"data":{}}"#,
            r#"{"data":"x"}"#,
            r#"[{"data":{}}]"#,
            r#"{"data":{"id":"","event_type":"x"}}"#,
            r#"{"data":{"id":"e1","event_type":"message.sent","payload":[]}}"#,
            r#"{"data":{"id":"e1","event_type":"message.sent","payload":{"id":"m1","errors":[{"code":"40300"}],"to":[{"status":"expired"}]}}}"#,
            r#"{"data":{"id":"e1","event_type":"message.sent","payload":{"id":"m1","errors":[{"code":1.5},{"code":1,"code":2}]}}}"#,
        ];
        for body in bodies {
            same_as_value(body.as_bytes());
        }
        let mut invalid_utf8 = br#"{"data":{"id":"e1","event_type":"x"},"z":""}"#.to_vec();
        invalid_utf8.insert(invalid_utf8.len() - 2, 0xff);
        same_as_value(&invalid_utf8);
        let deep = format!(r#"{{"data":{{"id":"e1","event_type":"x"}},"z":{}{}}}"#, "[".repeat(200), "]".repeat(200));
        same_as_value(deep.as_bytes());
    }

    /// The keys and values of Telnyx events, for generated bodies.
    const KEYS: [&str; 15] = [
        "data",
        "id",
        "event_type",
        "occurred_at",
        "payload",
        "from",
        "to",
        "phone_number",
        "status",
        "text",
        "media",
        "url",
        "errors",
        "code",
        "*",
    ];
    const LEAVES: [&str; 16] = [
        "\"message.received\"",
        "\"message.finalized\"",
        "\"delivered\"",
        "\"delivery_failed\"",
        "\"+15005550006\"",
        "\"stop\"",
        "\"\"",
        "\"2023-11-14T22:13:20Z\"",
        "\"\\u0073top\"",
        "40002",
        "1.5",
        "1e400",
        "null",
        "true",
        "\"\\ud800\"",
        "[]",
    ];

    #[test]
    fn generated_bodies_normalize_as_through_a_value() {
        let mut rng = fastrand::Rng::with_seed(14);
        for _ in 0..8_000 {
            let mut body = String::new();
            let depth = rng.usize(1..7);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut body);
            same_as_value(body.as_bytes());
            // A well-formed event with one generated member in a read place.
            let mut member = String::new();
            let depth = rng.usize(0..4);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut member);
            let key = ["phone_number", "status", "code", "url", "text", "id", "to", "media", "errors"][rng.usize(..9)];
            let event = format!(
                r#"{{"data":{{"id":"e","event_type":"message.{}","payload":{{"id":"m","from":{{"phone_number":"+1"}},"to":[{{"phone_number":"+2","status":"delivery_failed","{key}":{member}}}],"errors":[{{"code":40002,"{key}":{member}}}],"media":[{{"url":"u","{key}":{member}}}],"{key}":{member}}}}}}}"#,
                ["received", "finalized"][rng.usize(..2)]
            );
            same_as_value(event.as_bytes());
            // And cut short or with one byte changed.
            same_as_value(&damage(&mut rng, event.into_bytes()));
        }
    }
}
