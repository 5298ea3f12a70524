//! Vonage webhooks (Messages API): an HS256 JWT in `Authorization: Bearer …` whose `payload_hash`
//! claim must be the SHA-256 of the exact raw body, then the status or inbound message.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use ring::hmac;
use serde_json::Value;

use super::NAME;
use crate::digest::sha256_hex;
use crate::error::Error;
use crate::http::read_code;
use crate::redact::Secret;
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, StatusUpdate};
use crate::webhook::{
    Settings, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier, check_json_duplicates, header, leads_to,
    parse_time, same_bytes, unix_seconds,
};

/// The longest bearer token read. Vonage's tokens are a few hundred bytes; a longer one is
/// malformed and is refused before any part of it is decoded.
const MAX_TOKEN_BYTES: usize = 8 * 1024;

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// HMAC-SHA256 over `header.claims`, streamed (the two parts are not joined first).
fn hs256(secret: &str, header: &str, claims: &str) -> hmac::Tag {
    let mut context = hmac::Context::with_key(&hmac::Key::new(hmac::HMAC_SHA256, secret.as_bytes()));
    for part in [header, ".", claims] {
        context.update(part.as_bytes());
    }
    context.sign()
}

/// Signs `claims` (a JSON object, keys kept in order) as an HS256 JWT.
#[must_use]
pub fn sign_jwt(signature_secret: &str, claims: &Value) -> String {
    let header = base64url(br#"{"alg":"HS256","typ":"JWT"}"#);
    let claims = base64url(claims.to_string().as_bytes());
    let signature = base64url(hs256(signature_secret, &header, &claims).as_ref());
    format!("{header}.{claims}.{signature}")
}

/// Verifies a Vonage webhook token against the raw body, in the reference's order of reasons,
/// with `payload_hash` required (checked last). A token longer than 8 KiB is malformed.
///
/// # Errors
/// The first failed check as a [`WebhookError`].
pub fn verify_token(
    signature_secret: &str,
    token: &str,
    body: &[u8],
    now: SystemTime,
    tolerance: Duration,
) -> Result<(), WebhookError> {
    let malformed = WebhookError::MalformedSignature { provider: NAME };
    if token.len() > MAX_TOKEN_BYTES {
        return Err(malformed);
    }
    let mut parts = token.split('.');
    let (Some(header_part), Some(claims_part), Some(signature_part), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(malformed);
    };
    let decode = |part: &str| -> Option<Value> {
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).ok()?;
        serde_json::from_slice::<Value>(&bytes).ok().filter(Value::is_object)
    };
    let jwt_header = decode(header_part).ok_or(malformed.clone())?;
    if jwt_header.get("alg").and_then(Value::as_str) != Some("HS256") {
        return Err(malformed);
    }
    let expected = hs256(signature_secret, header_part, claims_part);
    let given = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(signature_part).unwrap_or_default();
    if !same_bytes(expected.as_ref(), &given) {
        return Err(WebhookError::InvalidSignature { provider: NAME });
    }
    let claims = decode(claims_part).ok_or(malformed.clone())?;
    let iat = claims.get("iat").and_then(Value::as_f64).ok_or(malformed)?;
    // Floating point: no overflow for any clock, `iat` or tolerance (JSON has no NaN).
    #[allow(clippy::cast_precision_loss)] // seconds since 1970: exact below 2^53
    let now = unix_seconds(now) as f64;
    if (now - iat).abs() > tolerance.as_secs_f64() {
        return Err(WebhookError::StaleTimestamp { provider: NAME });
    }
    let hash = claims.get("payload_hash").and_then(Value::as_str).filter(|h| !h.is_empty());
    match hash {
        Some(hash) if same_bytes(hash.to_ascii_lowercase().as_bytes(), sha256_hex(body).as_bytes()) => Ok(()),
        Some(_) | None => Err(WebhookError::BodyHashMismatch { provider: NAME }),
    }
}

/// Verifies and parses Vonage Messages API webhooks.
#[derive(Debug, Clone)]
pub struct VonageWebhook {
    signature_secret: Secret,
    settings: Settings,
}

impl VonageWebhook {
    /// A verifier for the account's signature secret.
    ///
    /// # Errors
    /// `Configuration` when the secret is empty.
    pub fn new(signature_secret: impl Into<Secret>) -> Result<Self, Error> {
        let signature_secret = signature_secret.into();
        if signature_secret.is_empty() {
            return Err(Error::configuration("The Vonage webhook verifier needs the signature secret."));
        }
        Ok(Self { signature_secret, settings: Settings::default() })
    }

    crate::webhook::verifier_options!(timestamped);

    /// The verification [`WebhookVerifier::verify_at`] counts.
    fn check(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        let token = header(request.headers, "authorization")
            .map(str::trim)
            .and_then(|v| v.split_at_checked(7))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer "))
            .map(|(_, token)| token.trim())
            .filter(|t| !t.is_empty())
            .ok_or(WebhookError::MissingSignature { provider: NAME })?;
        verify_token(self.signature_secret.expose(), token, request.body, now, self.settings.tolerance)?;
        parse(request.body, self.settings.detect_keywords)
    }
}

impl WebhookVerifier for VonageWebhook {
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

/// `447700900000` → `+447700900000`; anything that is not an E.164 digit string stays as is.
fn normalize_number(value: &str) -> String {
    let e164_digits =
        (2..=15).contains(&value.len()) && !value.starts_with('0') && value.bytes().all(|b| b.is_ascii_digit());
    if e164_digits { format!("+{value}") } else { value.to_owned() }
}

/// What the normalizer reads: an object repeating a key on these paths is ambiguous.
const READ: [&str; 8] = ["message_uuid", "timestamp", "from", "to", "status", "text", "error.type", "error.title"];

/// Normalizes a verified Vonage body.
pub(crate) fn parse(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    check_json_duplicates(NAME, body, &|path| leads_to(&READ, path))?;
    let raw: Value = serde_json::from_slice(body).map_err(|_| WebhookError::payload(NAME, "the body is not JSON"))?;
    if !raw.is_object() {
        return Err(WebhookError::payload(NAME, "the body is not a JSON object"));
    }
    let text = |key: &str| raw.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    let uuid = text("message_uuid").ok_or_else(|| WebhookError::payload(NAME, "missing message_uuid"))?.to_owned();
    let occurred_at = text("timestamp").and_then(parse_time);
    let from = text("from").map(normalize_number);
    let to = text("to").map(normalize_number);
    let (dedupe_key, kind) = match text("status") {
        None => {
            let body = raw.get("text").and_then(Value::as_str);
            let (Some(body), Some(from), Some(to)) = (body, from, to) else {
                return Err(WebhookError::payload(NAME, "neither status nor an inbound text with from and to"));
            };
            let message =
                Inbound { provider_id: uuid.clone(), from, to, body: body.to_owned(), media_urls: Vec::new() };
            (format!("vonage:{uuid}:received"), EventKind::inbound(message, None, detect_keywords))
        }
        Some(status) => {
            let error = raw.get("error").unwrap_or(&Value::Null);
            let from_type = error.get("type").and_then(Value::as_str).and_then(|t| t.rsplit_once('#')).map(|(_, f)| f);
            let error_code = from_type
                .filter(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
                .map(str::to_owned)
                .or_else(|| read_code(error, "title"));
            let delivery = match status {
                "submitted" => Some(DeliveryStatus::Sent),
                "delivered" => Some(DeliveryStatus::Delivered),
                "rejected" | "undeliverable"
                    if matches!(
                        error_code.as_deref(),
                        Some("1210" | "1470" | "1472" | "1480" | "1481" | "1482" | "1483")
                    ) =>
                {
                    Some(DeliveryStatus::Filtered)
                }
                "rejected" | "undeliverable" => Some(DeliveryStatus::Undelivered),
                _ => None,
            };
            let kind = match delivery {
                Some(delivery) => EventKind::status(
                    delivery,
                    StatusUpdate {
                        provider_id: uuid.clone(),
                        provider_status: status.to_owned(),
                        error_code,
                        from,
                        to,
                    },
                ),
                None => EventKind::Unrecognized { provider_event_type: status.to_owned() },
            };
            (format!("vonage:{uuid}:{status}"), kind)
        }
    };
    Ok(SmsEvent { provider: NAME, dedupe_key, occurred_at, raw, kind })
}
