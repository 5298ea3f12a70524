//! Vonage webhooks (Messages API): an HS256 JWT in `Authorization: Bearer …` whose `payload_hash`
//! claim must be the SHA-256 of the exact raw body, then the status or inbound message.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use hmac::Mac as _;
use serde::Deserialize;
use serde_json::Value;

use super::NAME;
use crate::digest::is_sha256_hex_of;
use crate::error::Error;
use crate::json::{self, Code, Object, Text};
use crate::redact::Secret;
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, StatusUpdate};
use crate::webhook::verify::{KeyedMac, Settings, header, parse_time, same_bytes, unix_seconds};
use crate::webhook::{Raw, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// The longest bearer token read. Vonage's tokens are a few hundred bytes; a longer one is
/// malformed and is refused before any part of it is decoded.
const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// HMAC-SHA256 of the `hmac` and `sha2` crates (with the CPU's SHA extensions where it has them).
type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The MAC keyed with the signature secret (HMAC takes a key of any length).
fn keyed(secret: &str) -> Option<KeyedMac<HmacSha256>> {
    KeyedMac::new(secret.as_bytes())
}

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// HMAC-SHA256 over `header.claims`, streamed (the two parts are not joined first).
fn hs256(keyed: &KeyedMac<HmacSha256>, header: &str, claims: &str) -> [u8; 32] {
    let mut mac = keyed.start();
    for part in [header, ".", claims] {
        mac.update(part.as_bytes());
    }
    mac.finalize().into_bytes().into()
}

/// Signs `claims` (a JSON object, keys kept in order) as an HS256 JWT.
#[must_use]
pub fn sign_jwt(signature_secret: &str, claims: &Value) -> String {
    let header = base64url(br#"{"alg":"HS256","typ":"JWT"}"#);
    let claims = base64url(claims.to_string().as_bytes());
    let Some(keyed) = keyed(signature_secret) else { return String::new() };
    let signature = base64url(&hs256(&keyed, &header, &claims));
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
    let keyed = keyed(signature_secret).ok_or(WebhookError::InvalidCredentials { provider: NAME })?;
    verify_token_keyed(&keyed, token, body, now, tolerance)
}

/// [`verify_token`] with the MAC keyed once.
fn verify_token_keyed(
    keyed: &KeyedMac<HmacSha256>,
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
    let decode = |part: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).ok();
    let jwt_header = decode(header_part).ok_or(malformed.clone())?;
    let jwt_header = json::read::<JwtHeader<'_>>(&jwt_header).ok().flatten().ok_or(malformed.clone())?;
    if jwt_header.alg.0.as_deref() != Some("HS256") {
        return Err(malformed);
    }
    let expected = hs256(keyed, header_part, claims_part);
    if !same_bytes(&expected, &decode_mac(signature_part)) {
        return Err(WebhookError::InvalidSignature { provider: NAME });
    }
    let claims = decode(claims_part).ok_or(malformed.clone())?;
    let claims = json::read::<Claims<'_>>(&claims).ok().flatten().ok_or(malformed.clone())?;
    let Some(iat) = claims.issued_at() else { return Err(malformed) };
    // Floating point: no overflow for any clock, `iat` or tolerance (JSON has no NaN).
    #[allow(clippy::cast_precision_loss)] // seconds since 1970: exact below 2^53
    let now = unix_seconds(now) as f64;
    if (now - iat).abs() > tolerance.as_secs_f64() {
        return Err(WebhookError::StaleTimestamp { provider: NAME });
    }
    match claims.payload_hash.non_empty() {
        Some(hash) if is_sha256_hex_of(hash, body) => Ok(()),
        _ => Err(WebhookError::BodyHashMismatch { provider: NAME }),
    }
}

/// The bytes of a base64url MAC of up to 32 bytes, on the stack; anything else (longer, or not
/// base64url) is empty, which no MAC equals.
fn decode_mac(part: &str) -> MacBytes {
    let mut mac = MacBytes { bytes: [0; 33], len: 0 };
    // 44 characters hold 33 bytes: anything longer decodes to more than a MAC.
    if part.len() <= 44 {
        let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode_slice(part, &mut mac.bytes);
        mac.len = decoded.unwrap_or(0);
    }
    mac
}

/// A decoded MAC (see [`decode_mac`]).
struct MacBytes {
    bytes: [u8; 33],
    len: usize,
}

impl std::ops::Deref for MacBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

/// The JWT header's member the verifier reads (a header that is not one JSON object, or repeats
/// it, is malformed).
#[derive(Default, Deserialize)]
#[serde(default)]
struct JwtHeader<'a> {
    #[serde(borrow)]
    alg: Text<'a>,
}

/// The claims the verifier reads (claims that are not one JSON object, or repeat one of them, are
/// malformed).
#[derive(Default, Deserialize)]
#[serde(default)]
struct Claims<'a> {
    #[serde(borrow)]
    iat: Code<'a>,
    #[serde(borrow)]
    payload_hash: Text<'a>,
}

impl Claims<'_> {
    /// `iat` when it is a number (as `Value::as_f64` reads it).
    fn issued_at(&self) -> Option<f64> {
        match &self.iat {
            Code::Number(number) => number.as_f64(),
            Code::Text(_) | Code::Absent => None,
        }
    }
}

/// Verifies and parses Vonage Messages API webhooks.
#[derive(Debug, Clone)]
pub struct VonageWebhook {
    /// The HMAC keyed with the signature secret once, cloned for each request.
    keyed: KeyedMac<HmacSha256>,
    settings: Settings,
}

impl VonageWebhook {
    /// A verifier for the account's signature secret.
    ///
    /// # Errors
    /// `Configuration` when the secret is empty.
    pub fn new(signature_secret: impl Into<Secret>) -> Result<Self, Error> {
        let keyed = KeyedMac::from_secret("Vonage", "signature secret", "HMAC-SHA256", &signature_secret.into())?;
        Ok(Self { keyed, settings: Settings::default() })
    }

    crate::webhook::verify::verifier_options!(timestamped);

    /// The verification [`WebhookVerifier::verify_at`] counts.
    fn check(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        let token = header(request.headers, http::header::AUTHORIZATION)
            .map(str::trim)
            .and_then(|v| v.split_at_checked(7))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer "))
            .map(|(_, token)| token.trim())
            .filter(|t| !t.is_empty())
            .ok_or(WebhookError::MissingSignature { provider: NAME })?;
        verify_token_keyed(&self.keyed, token, request.body, now, self.settings.tolerance)?;
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
    /// An `Authorization: Bearer …` header (Vonage's signed webhooks carry a JWT).
    fn recognizes(&self, headers: &http::HeaderMap) -> bool {
        header(headers, http::header::AUTHORIZATION)
            .and_then(|v| v.trim_start().split_at_checked(7))
            .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer "))
    }
}

/// `447700900000` → `+447700900000`; anything that is not an E.164 digit string stays as is.
fn normalize_number(value: &str) -> String {
    let e164_digits =
        (2..=15).contains(&value.len()) && !value.starts_with('0') && value.bytes().all(|b| b.is_ascii_digit());
    if e164_digits { format!("+{value}") } else { value.to_owned() }
}

/// The keys the normalizer reads (each refused when its object repeats it), as its reference
/// reader in the tests walks them.
#[cfg(test)]
const READ: [&[&str]; 8] = [
    &["message_uuid"],
    &["timestamp"],
    &["from"],
    &["to"],
    &["status"],
    &["text"],
    &["error", "type"],
    &["error", "title"],
];

/// Normalizes a verified Vonage body: the members it reads are read in place (no `Value` is
/// built; the event's `raw` object is built from the body when first read), and an object that
/// repeats one of them is refused.
pub(crate) fn parse(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let read = json::read::<Body<'_>>(body).map_err(|error| WebhookError::payload(NAME, json::refusal(&error)))?;
    let Some(read) = read else { return Err(WebhookError::payload(NAME, "the body is not a JSON object")) };
    let uuid = read.message_uuid.non_empty().ok_or_else(|| WebhookError::payload(NAME, "missing message_uuid"))?;
    let occurred_at = read.timestamp.non_empty().and_then(parse_time);
    let from = read.from.non_empty().map(normalize_number);
    let to = read.to.non_empty().map(normalize_number);
    let (dedupe_key, kind) = match read.status.non_empty() {
        None => {
            let (Some(body), Some(from), Some(to)) = (read.text.0.as_deref(), from, to) else {
                return Err(WebhookError::payload(NAME, "neither status nor an inbound text with from and to"));
            };
            let provider_id = uuid.to_owned();
            let message = Inbound { provider_id, from, to, body: body.to_owned(), media_urls: Vec::new() };
            (format!("vonage:{uuid}:received"), EventKind::inbound(message, None, detect_keywords))
        }
        Some(status) => {
            let from_type = read.error.kind.0.as_deref().and_then(|t| t.rsplit_once('#')).map(|(_, f)| f);
            let error_code = from_type
                .filter(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
                .map(str::to_owned)
                .or_else(|| read.error.title.text().map(Cow::into_owned));
            let delivery = delivery_status(status, error_code.as_deref());
            let kind = match delivery {
                Some(delivery) => EventKind::status(
                    delivery,
                    StatusUpdate {
                        provider_id: uuid.to_owned(),
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
    Ok(SmsEvent::new(NAME, dedupe_key, occurred_at, Raw::json(body), kind))
}

/// The members of a Vonage body the normalizer reads.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Body<'a> {
    #[serde(borrow)]
    message_uuid: Text<'a>,
    #[serde(borrow)]
    timestamp: Text<'a>,
    #[serde(borrow)]
    from: Text<'a>,
    #[serde(borrow)]
    to: Text<'a>,
    #[serde(borrow)]
    status: Text<'a>,
    #[serde(borrow)]
    text: Text<'a>,
    #[serde(borrow)]
    error: Object<Problem<'a>>,
}

/// `error`: why a message failed.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Problem<'a> {
    /// `type`: a URL whose fragment is the numeric code.
    #[serde(borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(borrow)]
    title: Code<'a>,
}

/// The delivery status a message status names: a rejection with one of the error codes the
/// reference maps to `filtered` is filtered, any other rejection undelivered.
fn delivery_status(status: &str, error_code: Option<&str>) -> Option<DeliveryStatus> {
    match status {
        "submitted" => Some(DeliveryStatus::Sent),
        "delivered" => Some(DeliveryStatus::Delivered),
        "rejected" | "undeliverable"
            if matches!(error_code, Some("1210" | "1470" | "1472" | "1480" | "1481" | "1482" | "1483")) =>
        {
            Some(DeliveryStatus::Filtered)
        }
        "rejected" | "undeliverable" => Some(DeliveryStatus::Undelivered),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::http::read_code;
    use crate::json::random::{damage, random_json};
    use crate::json::reference::{assert_agree, only_value_refuses, value_checked};

    /// The normalizer over a `Value` of the whole body (a member it reads repeated refused): the
    /// reference the derived readers must agree with.
    fn through_value(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
        let raw = value_checked(body, &READ).map_err(|why| WebhookError::payload(NAME, why))?;
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
                let from_type =
                    error.get("type").and_then(Value::as_str).and_then(|t| t.rsplit_once('#')).map(|(_, f)| f);
                let error_code = from_type
                    .filter(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
                    .map(str::to_owned)
                    .or_else(|| read_code(error, "title"));
                let delivery = delivery_status(status, error_code.as_deref());
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
        Ok(SmsEvent::new(NAME, dedupe_key, occurred_at, Raw::ready(raw.clone()), kind))
    }

    fn same_as_value(body: &[u8]) {
        for detect_keywords in [true, false] {
            assert_agree(body, parse(body, detect_keywords), through_value(body, detect_keywords));
        }
    }

    #[test]
    fn written_bodies_normalize_as_through_a_value() {
        let bodies: &[&str] = &[
            r#"{"message_uuid":"u1","timestamp":"2025-01-01T00:00:00Z","from":"447700900000","to":"447700900001","text":" Stop. ","channel":"sms"}"#,
            r#"{"message_uuid":"u1","status":"rejected","error":{"type":"https://developer.vonage.com/api-errors/messages#1470","title":"1470"}}"#,
            r#"{"message_uuid":"u1","status":"undeliverable","error":{"type":"x#","title":1480}}"#,
            r##"{"message_uuid":"u1","status":"rejected","error":{"type":"#","title":""}}"##,
            r#"{"message_uuid":"u1","status":"delivered","error":{"title":"a","title":"b"}}"#,
            r#"{"message_uuid":"u1","status":"delivered","usage":{"price":1,"price":2},"x":1,"x":2}"#,
            r#"{"message_uuid":"u1","status":"delivered","status":"delivered"}"#,
            r##"{"message_uuid":"u1","status":"delivered","error":[{"type":"#1"}]}"##,
            r#"{"message_uuid":"u1","status":"delivered","z":"\ud800"}"#,
            r#"{"message_uuid":"u1","status":"odd","text":5}"#,
            r#"{"message_uuid":"","status":"delivered"}"#,
            r#"{"message_uuid":"u1","from":"+1","to":"+2","text":""}"#,
            r#"["message_uuid"]"#,
            r#"{"message_uuid":"u1","status":"delivered"} x"#,
        ];
        for body in bodies {
            same_as_value(body.as_bytes());
        }
    }

    #[test]
    fn generated_bodies_normalize_as_through_a_value() {
        const KEYS: [&str; 11] =
            ["message_uuid", "timestamp", "from", "to", "status", "text", "error", "type", "title", "*", "x"];
        const LEAVES: [&str; 14] = [
            "\"u1\"",
            "\"delivered\"",
            "\"rejected\"",
            "\"447700900000\"",
            "\"https://e/x#1470\"",
            "\"#\"",
            "\"stop\"",
            "\"\"",
            "\"2025-01-01T00:00:00Z\"",
            "1480",
            "1e400",
            "null",
            "\"\\ud800\"",
            "[]",
        ];
        let mut rng = fastrand::Rng::with_seed(14);
        for _ in 0..8_000 {
            let mut body = String::new();
            let depth = rng.usize(1..5);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut body);
            same_as_value(body.as_bytes());
            let mut member = String::new();
            let depth = rng.usize(0..3);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut member);
            let key = KEYS[rng.usize(..KEYS.len())];
            let status = [r#""status":"rejected","#, ""][rng.usize(..2)];
            let event = format!(
                r#"{{"message_uuid":"u1",{status}"from":"447700900000","to":"447700900001","text":"hi","error":{{"type":"e#1470","{key}":{member}}},"{key}":{member}}}"#
            );
            same_as_value(event.as_bytes());
            same_as_value(&damage(&mut rng, event.into_bytes()));
        }
    }

    /// The claims the verifier reads, from a parsed `Value` (a repeated claim refused): the
    /// object, `iat` as a number and `payload_hash` as a string.
    fn from_value(json: &[u8]) -> Option<(Option<f64>, Option<String>)> {
        let value = value_checked(json, &[&["iat"], &["payload_hash"]]).ok().filter(Value::is_object)?;
        Some((
            value.get("iat").and_then(Value::as_f64),
            value.get("payload_hash").and_then(Value::as_str).map(str::to_owned),
        ))
    }

    fn from_members(json: &[u8]) -> Option<(Option<f64>, Option<String>)> {
        let claims = json::read::<Claims<'_>>(json).ok().flatten()?;
        Some((claims.issued_at(), claims.payload_hash.0.map(Cow::into_owned)))
    }

    fn claims_text() -> impl Strategy<Value = Vec<u8>> {
        let key = proptest::sample::select(vec!["\"iat\"", "\"payload_hash\"", "\"i\\u0061t\"", "\"jti\"", "\"~\""]);
        let value = proptest::sample::select(vec![
            "1700000000",
            "-1",
            "1.5e3",
            "1e999",
            "\"abc\"",
            "\"a\\u00e9\"",
            "\"\\ud800\"",
            "\"~\"",
            "null",
            "true",
            "[1,{\"iat\":2}]",
            "{\"payload_hash\":\"x\"}",
            "[",
        ]);
        let members = proptest::collection::vec((key, value), 0..5);
        (members, proptest::sample::select(vec!["{}", "[]", "\"s\"", "", " x"])).prop_map(|(members, tail)| {
            let members: Vec<String> = members.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
            let text = format!("{{{}}}", members.join(","));
            // Now and then something that is not one object.
            let mut bytes = if tail == "{}" {
                text
            } else if tail == "[]" {
                format!("[{text}]")
            } else {
                format!("{text}{tail}")
            }
            .into_bytes();
            for byte in &mut bytes {
                // `~` stands for a byte that is not UTF-8.
                if *byte == b'~' {
                    *byte = 0xff;
                }
            }
            bytes
        })
    }

    proptest! {
        #[test]
        fn members_read_as_a_parsed_value_reads_them(json in claims_text()) {
            let (read, reference) = (from_members(&json), from_value(&json));
            // What `Value` cannot hold, in a claim the verifier does not read, is dropped unread.
            if !(reference.is_none() && only_value_refuses(&json)) {
                prop_assert_eq!(read, reference);
            }
        }
    }

    #[test]
    fn a_repeated_claim_is_malformed() {
        for json in
            [&br#"{"iat":1,"payload_hash":"a","iat":"x"}"#[..], br#"{"iat":1,"payload_hash":"a","payload_hash":"b"}"#]
        {
            assert_eq!(from_members(json), None);
            assert_eq!(from_value(json), None);
        }
        let others = br#"{"iat":1,"jti":"a","jti":"b","payload_hash":"h"}"#;
        assert_eq!(from_members(others), Some((Some(1.0), Some("h".to_owned()))));
        assert_eq!(from_members(br#"{"iat":2} x"#), None);
        assert_eq!(from_members(br#"["iat"]"#), None);
        assert_eq!(from_members(b"{\"a\":\"\xff\"}"), None);
        // What `Value` cannot hold, in a claim the verifier does not read:
        assert_eq!(from_members(br#"{"iat":3,"jti":"\ud800","n":1e999}"#), Some((Some(3.0), None)));
        assert_eq!(from_members(br#"{"iat":3,"payload_hash":"\ud800"}"#), None);
    }

    #[test]
    fn mac_bytes_decode_up_to_33() {
        let mac = base64url(&[9u8; 32]);
        assert_eq!(&*decode_mac(&mac), &[9u8; 32]);
        assert!(decode_mac(&base64url(&[9u8; 34])).is_empty());
        assert!(decode_mac("!!").is_empty());
    }
}
