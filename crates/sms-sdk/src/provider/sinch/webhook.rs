//! Sinch callbacks: HMAC over `{body}.{nonce}.{timestamp}` with a freshness window when the
//! service plan has a webhook secret, else HTTP Basic credentials the account set on the callback
//! URL (chosen explicitly); then the per-recipient delivery reports and inbound messages.
//!
//! No verifier accepts a callback without one of the two: Sinch sends callbacks unsigned unless
//! the account manager turned signing on, and an unsigned callback proves nothing.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use hmac::Mac as _;
use serde::Deserialize;

use super::NAME;
use crate::digest::sha256_hex_bytes;
use crate::error::Error;
use crate::json::{self, Code, Text};
use crate::redact::Secret;
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, StatusUpdate};
use crate::webhook::verify::{
    BasicCredentials, KeyedMac, Settings, check_unix_timestamp, decode_signature, header, parse_time,
};
use crate::webhook::{Raw, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

type HmacSha256 = hmac::Hmac<sha2::Sha256>;
type HmacSha512 = hmac::Hmac<sha2::Sha512>;

const SIGNATURE_HEADER: http::HeaderName = http::HeaderName::from_static("x-sinch-webhook-signature");
const TIMESTAMP_HEADER: http::HeaderName = http::HeaderName::from_static("x-sinch-webhook-signature-timestamp");
const NONCE_HEADER: http::HeaderName = http::HeaderName::from_static("x-sinch-webhook-signature-nonce");
const ALGORITHM_HEADER: http::HeaderName = http::HeaderName::from_static("x-sinch-webhook-signature-algorithm");

/// The most bytes of a nonce read (Sinch's are 26-character ULIDs).
const MAX_NONCE: usize = 256;

/// The text Sinch signs: `{raw body}.{nonce}.{timestamp}`, for signing test requests (the
/// verifier streams these pieces into the MAC instead of joining them).
#[must_use]
pub fn signed_payload(body: &[u8], nonce: &str, timestamp: &str) -> Vec<u8> {
    signed_parts(body, nonce, timestamp).concat()
}

/// The pieces of what Sinch signs, in order.
fn signed_parts<'a>(body: &'a [u8], nonce: &'a str, timestamp: &'a str) -> [&'a [u8]; 5] {
    [body, b".", nonce.as_bytes(), b".", timestamp.as_bytes()]
}

/// `keyed`'s MAC over `parts`, streamed.
fn mac_of<M: hmac::Mac + hmac::digest::KeyInit + Clone>(keyed: &KeyedMac<M>, parts: [&[u8]; 5]) -> M {
    let mut mac = keyed.start();
    for part in parts {
        mac.update(part);
    }
    mac
}

/// The HMAC algorithms a callback may name (`x-sinch-webhook-signature-algorithm`; SHA-256 when
/// it names none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    /// `HmacSHA256`, Sinch's documented default.
    HmacSha256,
    /// `HmacSHA512`, which Sinch's SDKs also accept.
    HmacSha512,
}

impl Algorithm {
    /// The algorithm a header value names.
    fn named(value: Option<&str>) -> Option<Self> {
        match value {
            None | Some("HmacSHA256") => Some(Self::HmacSha256),
            Some("HmacSHA512") => Some(Self::HmacSha512),
            Some(_) => None,
        }
    }
}

/// How callbacks prove they come from Sinch.
#[derive(Clone)]
enum Auth {
    /// The service plan's webhook secret, keyed once for each algorithm.
    Hmac { sha256: KeyedMac<HmacSha256>, sha512: Box<KeyedMac<HmacSha512>> },
    /// The callback URL's Basic credentials.
    Basic(BasicCredentials),
}

/// Verifies and parses Sinch's SMS callbacks. Its `Debug` shows which authentication, never the
/// secret.
#[derive(Clone)]
pub struct SinchWebhook {
    auth: Auth,
    settings: Settings,
}

impl std::fmt::Debug for SinchWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let auth = match self.auth {
            Auth::Hmac { .. } => "hmac",
            Auth::Basic(_) => "basic",
        };
        f.debug_struct("SinchWebhook").field("auth", &auth).field("settings", &self.settings).finish()
    }
}

impl SinchWebhook {
    /// A verifier of HMAC-signed callbacks, with the webhook secret of the service plan (set up by
    /// Sinch on request).
    ///
    /// # Errors
    /// `Configuration` when the secret is empty.
    pub fn hmac(secret: impl Into<Secret>) -> Result<Self, Error> {
        let secret = secret.into();
        let sha256 = KeyedMac::from_secret("Sinch", "webhook secret", "HMAC-SHA256", &secret)?;
        let sha512 = Box::new(KeyedMac::from_secret("Sinch", "webhook secret", "HMAC-SHA512", &secret)?);
        Ok(Self { auth: Auth::Hmac { sha256, sha512 }, settings: Settings::default() })
    }

    /// A verifier of callbacks that carry HTTP Basic credentials (written into the callback URL
    /// as `https://user:password@host/…`). Weaker than [`hmac`](Self::hmac): the credentials
    /// travel with every callback and prove only that the sender knows them, not what it sent.
    ///
    /// # Errors
    /// `Configuration` when the user or the password is empty, or the user holds a `:`.
    pub fn basic(user: &str, password: impl Into<Secret>) -> Result<Self, Error> {
        let credentials = BasicCredentials::new("Sinch", user, &password.into())?;
        Ok(Self { auth: Auth::Basic(credentials), settings: Settings::default() })
    }

    crate::webhook::verify::verifier_options!(timestamped);

    /// The verification [`WebhookVerifier::verify_at`] counts.
    fn check(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        match &self.auth {
            Auth::Hmac { sha256, sha512 } => {
                let signature = header(request.headers, &SIGNATURE_HEADER).filter(|s| !s.is_empty());
                let timestamp = header(request.headers, &TIMESTAMP_HEADER);
                let nonce = header(request.headers, &NONCE_HEADER);
                let (Some(signature), Some(timestamp), Some(nonce)) = (signature, timestamp, nonce) else {
                    return Err(WebhookError::MissingSignature { provider: NAME });
                };
                let algorithm = Algorithm::named(header(request.headers, &ALGORITHM_HEADER))
                    .ok_or(WebhookError::MalformedSignature { provider: NAME })?;
                check_unix_timestamp(NAME, timestamp, now, self.settings.tolerance)?;
                verify_mac(sha256, sha512, algorithm, signature, request.body, nonce, timestamp)?;
            }
            Auth::Basic(credentials) => credentials.check(NAME, request.headers)?,
        }
        parse(request.body, self.settings.detect_keywords)
    }
}

/// The MAC of `algorithm` over `{body}.{nonce}.{timestamp}`, streamed, against the base64
/// `signature` (compared in constant time).
fn verify_mac(
    sha256: &KeyedMac<HmacSha256>,
    sha512: &KeyedMac<HmacSha512>,
    algorithm: Algorithm,
    signature: &str,
    body: &[u8],
    nonce: &str,
    timestamp: &str,
) -> Result<(), WebhookError> {
    if nonce.is_empty() || nonce.len() > MAX_NONCE {
        return Err(WebhookError::MalformedSignature { provider: NAME });
    }
    let length = match algorithm {
        Algorithm::HmacSha256 => 32,
        Algorithm::HmacSha512 => 64,
    };
    let signature = decode_signature(signature, length)
        .filter(|s| s.len() == length)
        .ok_or(WebhookError::MalformedSignature { provider: NAME })?;
    let parts = signed_parts(body, nonce, timestamp);
    // `verify_slice` compares in constant time.
    let verified = match algorithm {
        Algorithm::HmacSha256 => mac_of(sha256, parts).verify_slice(&signature).is_ok(),
        Algorithm::HmacSha512 => mac_of(sha512, parts).verify_slice(&signature).is_ok(),
    };
    if verified { Ok(()) } else { Err(WebhookError::InvalidSignature { provider: NAME }) }
}

/// The base64 HMAC-SHA256 of what Sinch signs with `secret`: what a Sinch callback carries in
/// `x-sinch-webhook-signature` (for the emulator and signed test requests).
#[must_use]
pub fn sign(secret: &str, body: &[u8], nonce: &str, timestamp: &str) -> String {
    let Some(keyed) = KeyedMac::<HmacSha256>::new(secret.as_bytes()) else { return String::new() };
    let mac = mac_of(&keyed, signed_parts(body, nonce, timestamp));
    crate::webhook::verify::encode_base64(&mac.finalize().into_bytes())
}

/// Checks a Sinch HMAC signature (any algorithm the header may name), in the verifier's order of
/// reasons: the algorithm, the timestamp, then the MAC.
///
/// # Errors
/// The first failed check as a [`WebhookError`]; an empty secret is `InvalidCredentials`.
#[allow(clippy::too_many_arguments)] // the pieces of a callback, as the emulator and tests hold them
pub fn verify_signature(
    secret: &str,
    algorithm: Option<&str>,
    signature_base64: &str,
    nonce: &str,
    timestamp: &str,
    body: &[u8],
    now: SystemTime,
    tolerance: Duration,
) -> Result<(), WebhookError> {
    let algorithm = Algorithm::named(algorithm).ok_or(WebhookError::MalformedSignature { provider: NAME })?;
    check_unix_timestamp(NAME, timestamp, now, tolerance)?;
    let invalid = WebhookError::InvalidCredentials { provider: NAME };
    let sha256: KeyedMac<HmacSha256> =
        KeyedMac::new(secret.as_bytes()).filter(|_| !secret.is_empty()).ok_or(invalid.clone())?;
    let sha512: KeyedMac<HmacSha512> = KeyedMac::new(secret.as_bytes()).ok_or(invalid)?;
    verify_mac(&sha256, &sha512, algorithm, signature_base64, body, nonce, timestamp)
}

impl WebhookVerifier for SinchWebhook {
    fn provider(&self) -> &'static str {
        NAME
    }

    fn body_limit(&self) -> usize {
        self.settings.max_body
    }

    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        crate::metrics::webhook_verified(NAME, self.check(request, now))
    }

    /// An `x-sinch-webhook-signature` header (a Basic-authenticated callback carries nothing of
    /// Sinch's own to recognize).
    fn recognizes(&self, headers: &http::HeaderMap) -> bool {
        headers.contains_key(&SIGNATURE_HEADER)
    }
}

/// The keys the normalizer reads (each refused when its object repeats it), as its reference
/// reader in the tests walks them.
#[cfg(test)]
const READ: [&[&str]; 11] = [
    &["type"],
    &["batch_id"],
    &["recipient"],
    &["status"],
    &["code"],
    &["at"],
    &["id"],
    &["from"],
    &["to"],
    &["body"],
    &["received_at"],
];

/// Normalizes a verified Sinch callback: a per-recipient delivery report or an inbound text (the
/// members it reads are read in place, and an object that repeats one of them is refused).
pub(crate) fn parse(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let callback =
        json::read::<Callback<'_>>(body).map_err(|error| payload_error(&json::refusal(&error)))?.unwrap_or_default();
    let kind = callback.kind.non_empty().ok_or_else(|| payload_error("missing type"))?;
    match kind {
        "recipient_delivery_report_sms" => {
            let batch_id = callback.batch_id.non_empty().ok_or_else(|| payload_error("missing batch_id"))?;
            let status = callback.status.non_empty().ok_or_else(|| payload_error("missing status"))?;
            let recipient = callback.recipient.non_empty().map(str::to_owned);
            let code = callback.code.text().map(Cow::into_owned);
            let at = callback.at.0.as_deref().and_then(parse_time);
            let event_key = format!(
                "sinch:dr:{batch_id}:{status}:{}:{}",
                code.as_deref().unwrap_or("-"),
                recipient.as_deref().map_or_else(|| "-".to_owned(), |r| short_digest(r.as_bytes()))
            );
            let kind = match delivery_status(status) {
                Some(delivery) => {
                    let error_code = code.filter(|_| delivery == DeliveryStatus::Undelivered);
                    let update = StatusUpdate {
                        provider_id: batch_id.to_owned(),
                        provider_status: status.to_owned(),
                        error_code,
                        from: None,
                        to: recipient,
                    };
                    EventKind::status(delivery, update)
                }
                None => EventKind::Unrecognized { provider_event_type: format!("{kind}:{status}") },
            };
            Ok(SmsEvent::new(NAME, event_key, at, Raw::json(body), kind))
        }
        "mo_text" => {
            let id = callback.id.non_empty().ok_or_else(|| payload_error("missing id"))?;
            let (Some(from), Some(to)) = (callback.from.non_empty(), callback.to.non_empty()) else {
                return Err(payload_error("missing from or to"));
            };
            let text = callback.body.0.as_deref().unwrap_or_default().to_owned();
            let at = callback.received_at.0.as_deref().and_then(parse_time);
            let message = Inbound {
                provider_id: id.to_owned(),
                from: from.to_owned(),
                to: to.to_owned(),
                body: text,
                media_urls: Vec::new(),
            };
            let kind = EventKind::inbound(message, None, detect_keywords);
            Ok(SmsEvent::new(NAME, format!("sinch:mo:{id}"), at, Raw::json(body), kind))
        }
        other => {
            // Summary reports (`delivery_report_sms`) count recipients, binary and media
            // messages carry no text: recognized as Sinch's, not normalized.
            let key = format!("sinch:other:{}", short_digest(body));
            let kind = EventKind::Unrecognized { provider_event_type: other.to_owned() };
            Ok(SmsEvent::new(NAME, key, None, Raw::json(body), kind))
        }
    }
}

/// The first 16 hex digits of the SHA-256 of `bytes`: a recipient in a dedupe key without its
/// number, or a body that names no event.
fn short_digest(bytes: &[u8]) -> String {
    sha256_hex_bytes(bytes).iter().take(16).copied().map(char::from).collect()
}

fn payload_error(message: &str) -> WebhookError {
    WebhookError::payload(NAME, message)
}

/// The delivery state of a report's `status`; `Unknown` (and anything else) is none.
fn delivery_status(status: &str) -> Option<DeliveryStatus> {
    match status {
        "Queued" => Some(DeliveryStatus::Queued),
        "Dispatched" => Some(DeliveryStatus::Sent),
        "Delivered" => Some(DeliveryStatus::Delivered),
        "Aborted" | "Cancelled" | "Rejected" | "Deleted" | "Failed" | "Expired" => Some(DeliveryStatus::Undelivered),
        _ => None,
    }
}

/// The members of a Sinch callback the normalizer reads (delivery reports and inbound messages
/// are both flat objects).
#[derive(Default, Deserialize)]
#[serde(default)]
struct Callback<'a> {
    #[serde(borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(borrow)]
    batch_id: Text<'a>,
    #[serde(borrow)]
    recipient: Text<'a>,
    #[serde(borrow)]
    status: Text<'a>,
    #[serde(borrow)]
    code: Code<'a>,
    #[serde(borrow)]
    at: Text<'a>,
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    from: Text<'a>,
    #[serde(borrow)]
    to: Text<'a>,
    #[serde(borrow)]
    body: Text<'a>,
    #[serde(borrow)]
    received_at: Text<'a>,
}

#[cfg(test)]
mod tests {
    use http::HeaderMap;
    use serde_json::Value;

    use super::*;
    use crate::http::read_code;
    use crate::json::random::{damage, random_json};
    use crate::json::reference::{assert_agree, value_checked};
    use crate::webhook::verify::encode_base64;

    /// The published vector (Sinch's Conversation API callbacks, the scheme of its SMS callbacks,
    /// as `providers-wave3.md` section 6 records it).
    const SECRET: &str = "foo_secret1234";
    const NONCE: &str = "01FJA8B4A7BM43YGWSG9GBV067";
    const TIMESTAMP: &str = "1634579353";
    const VECTOR_BODY: &str = r#"{"app_id":"","accepted_time":"2021-10-18T17:49:13.813615Z","project_id":"e2df3a34-a71b-4448-9db5-a8d2baad28e4","contact_create_notification":{"contact":{"id":"01FJA8B466Y0R2GNXD78MD9SM1","channel_identities":[{"channel":"SMS","identity":"48123456789","app_id":""}],"display_name":"New Test Contact","email":"new.contact@email.com","external_id":"","metadata":"","language":"EN_US"}},"message_metadata":""}"#;
    const VECTOR_SIGNATURE: &str = "6bpJoRmFoXVjfJIVglMoJzYXxnoxRujzR4k2GOXewOE=";

    /// A per-recipient delivery report as Sinch documents it (API reference, "Delivery report
    /// callback", recipient type).
    const REPORT: &str = r#"{"type":"recipient_delivery_report_sms","batch_id":"01FC66621XXXXX119Z8PMV1QPQ","recipient":"+14155550123","code":0,"status":"Delivered","at":"2026-12-01T10:00:05.000Z","operator_status_at":"2026-12-01T10:00:04.000Z","client_reference":"AAAAAAAAAAAAAAAAAAAAAA","applied_originator":"+15005550006","encoding":"GSM","number_of_message_parts":1}"#;
    /// An inbound text as Sinch documents it (API reference, "Incoming SMS callback").
    const INBOUND: &str = r#"{"type":"mo_text","id":"01FC66621VHDBN119Z8PMV1AHY","from":"+14155550123","to":"+15005550006","body":"STOP","received_at":"2026-12-01T10:01:00.000Z","operator_id":"31008","sent_at":"2026-12-01T10:00:59.000Z"}"#;

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
    }

    fn headers(signature: &str, nonce: &str, timestamp: &str, algorithm: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(SIGNATURE_HEADER, signature.parse().unwrap());
        headers.insert(NONCE_HEADER, nonce.parse().unwrap());
        headers.insert(TIMESTAMP_HEADER, timestamp.parse().unwrap());
        if let Some(algorithm) = algorithm {
            headers.insert(ALGORITHM_HEADER, algorithm.parse().unwrap());
        }
        headers
    }

    fn request<'a>(headers: &'a HeaderMap, body: &'a [u8]) -> WebhookRequest<'a> {
        WebhookRequest { method: "POST", url: "https://hooks.example/sinch", headers, body }
    }

    /// The base64 HMAC-SHA256 and HMAC-SHA512 of what Sinch signs.
    fn sign(secret: &str, body: &[u8], nonce: &str, timestamp: &str) -> (String, String) {
        let data = signed_payload(body, nonce, timestamp);
        let mut sha256 = <HmacSha256 as hmac::digest::KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
        sha256.update(&data);
        let mut sha512 = <HmacSha512 as hmac::digest::KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
        sha512.update(&data);
        (encode_base64(&sha256.finalize().into_bytes()), encode_base64(&sha512.finalize().into_bytes()))
    }

    #[test]
    fn t270_the_published_vector_verifies() {
        let now = at(1_634_579_353);
        let body = VECTOR_BODY.as_bytes();
        let tolerance = Duration::from_mins(5);
        verify_signature(SECRET, Some("HmacSHA256"), VECTOR_SIGNATURE, NONCE, TIMESTAMP, body, now, tolerance).unwrap();
        assert_eq!(sign(SECRET, body, NONCE, TIMESTAMP).0, VECTOR_SIGNATURE);
        // Through the verifier, the algorithm header named or left out; the body is not an SMS
        // callback, so it is verified and then unrecognized.
        let verifier = SinchWebhook::hmac(SECRET).unwrap();
        for algorithm in [Some("HmacSHA256"), None] {
            let headers = headers(VECTOR_SIGNATURE, NONCE, TIMESTAMP, algorithm);
            let error = verifier.verify_at(&request(&headers, body), now).unwrap_err();
            assert_eq!(error, WebhookError::payload(NAME, "missing type"));
        }
        // HMAC-SHA512, which Sinch's SDKs accept too.
        let report = REPORT.as_bytes();
        let (_, sha512) = sign(SECRET, report, NONCE, TIMESTAMP);
        let headers = headers(&sha512, NONCE, TIMESTAMP, Some("HmacSHA512"));
        let event = verifier.verify_at(&request(&headers, report), now).unwrap();
        assert!(matches!(event.kind, EventKind::Delivered(_)), "{event:?}");
    }

    #[test]
    fn t271_a_change_to_what_is_signed_or_a_stale_timestamp_is_refused() {
        let verifier = SinchWebhook::hmac(SECRET).unwrap();
        let body = REPORT.as_bytes();
        let (signature, _) = sign(SECRET, body, NONCE, TIMESTAMP);
        let now = at(1_634_579_353);
        let check = |signature: &str, nonce: &str, timestamp: &str, body: &[u8], now| {
            let headers = headers(signature, nonce, timestamp, None);
            verifier.verify_at(&request(&headers, body), now).map(|_| ())
        };
        assert_eq!(check(&signature, NONCE, TIMESTAMP, body, now), Ok(()));
        let invalid = Err(WebhookError::InvalidSignature { provider: NAME });
        let changed = REPORT.replace("Delivered", "Failed");
        assert_eq!(check(&signature, NONCE, TIMESTAMP, changed.as_bytes(), now), invalid);
        assert_eq!(check(&signature, "01FJA8B4A7BM43YGWSG9GBV068", TIMESTAMP, body, now), invalid);
        assert_eq!(check(&signature, NONCE, "1634579354", body, now), invalid);
        let other = SinchWebhook::hmac("another secret").unwrap();
        let headers_ok = headers(&signature, NONCE, TIMESTAMP, None);
        assert_eq!(other.verify_at(&request(&headers_ok, body), now).map(|_| ()), invalid);
        // Outside the tolerance, past or future; a wider tolerance accepts it.
        let stale = Err(WebhookError::StaleTimestamp { provider: NAME });
        assert_eq!(check(&signature, NONCE, TIMESTAMP, body, at(1_634_579_353 + 301)), stale);
        assert_eq!(check(&signature, NONCE, TIMESTAMP, body, at(1_634_579_353 - 301)), stale);
        let patient = SinchWebhook::hmac(SECRET).unwrap().tolerance(Duration::from_hours(1));
        assert!(patient.verify_at(&request(&headers_ok, body), at(1_634_579_353 + 3000)).is_ok());
    }

    #[test]
    fn t272_missing_and_malformed_signatures() {
        let verifier = SinchWebhook::hmac(SECRET).unwrap();
        let now = at(1_634_579_353);
        let body = REPORT.as_bytes();
        let (signature, _) = sign(SECRET, body, NONCE, TIMESTAMP);
        let missing = Err(WebhookError::MissingSignature { provider: NAME });
        assert_eq!(verifier.verify_at(&request(&HeaderMap::new(), body), now).map(|_| ()), missing);
        let mut without_nonce = headers(&signature, NONCE, TIMESTAMP, None);
        without_nonce.remove(NONCE_HEADER);
        assert_eq!(verifier.verify_at(&request(&without_nonce, body), now).map(|_| ()), missing);
        let malformed = Err(WebhookError::MalformedSignature { provider: NAME });
        let rows: [(&str, &str, &str, Option<&str>); 6] = [
            (&signature, NONCE, TIMESTAMP, Some("HmacMD5")),
            ("not base64!", NONCE, TIMESTAMP, None),
            ("AAAA", NONCE, TIMESTAMP, None),
            (&signature, NONCE, TIMESTAMP, Some("HmacSHA512")),
            (&signature, "", TIMESTAMP, None),
            (&signature, NONCE, "16345793x3", None),
        ];
        for (signature, nonce, timestamp, algorithm) in rows {
            let headers = headers(signature, nonce, timestamp, algorithm);
            let result = verifier.verify_at(&request(&headers, body), now).map(|_| ());
            assert_eq!(result, malformed, "{signature} {nonce:?} {timestamp} {algorithm:?}");
        }
        let long_nonce = "n".repeat(MAX_NONCE + 1);
        let headers = headers(&signature, &long_nonce, TIMESTAMP, None);
        assert_eq!(verifier.verify_at(&request(&headers, body), now).map(|_| ()), malformed);
        // A body over the limit is refused before anything else.
        let small = SinchWebhook::hmac(SECRET).unwrap().max_body_bytes(10);
        assert!(matches!(
            small.verify_at(&request(&HeaderMap::new(), body), now),
            Err(WebhookError::BodyTooLarge { .. })
        ));
    }

    #[test]
    fn t273_no_verifier_without_a_secret_and_basic_credentials_compared_whole() {
        assert!(SinchWebhook::hmac("").is_err());
        assert!(SinchWebhook::basic("", "password").is_err());
        assert!(SinchWebhook::basic("user", "").is_err());
        assert!(SinchWebhook::basic("us:er", "password").is_err());
        let tolerance = Duration::from_mins(5);
        let empty = verify_signature("", None, VECTOR_SIGNATURE, NONCE, TIMESTAMP, b"", at(1_634_579_353), tolerance);
        assert_eq!(empty, Err(WebhookError::InvalidCredentials { provider: NAME }));

        let verifier = SinchWebhook::basic("sinch", "s3cret-callback").unwrap();
        let body = REPORT.as_bytes();
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(http::header::AUTHORIZATION, value.parse().unwrap());
            verifier.verify_at(&request(&headers, body), SystemTime::now()).map(|_| ())
        };
        let good = format!("Basic {}", encode_base64(b"sinch:s3cret-callback"));
        assert_eq!(with(&good), Ok(()));
        let invalid = Err(WebhookError::InvalidSignature { provider: NAME });
        assert_eq!(with(&format!("Basic {}", encode_base64(b"sinch:s3cret-callbacK"))), invalid);
        assert_eq!(with(&format!("Basic {}", encode_base64(b"sinch:s3cret-callback-"))), invalid);
        assert_eq!(with("Bearer s3cret-callback"), invalid);
        let missing = verifier.verify_at(&request(&HeaderMap::new(), body), SystemTime::now()).map(|_| ());
        assert_eq!(missing, Err(WebhookError::MissingSignature { provider: NAME }));
        // Neither verifier shows its secret.
        let debug = format!("{verifier:?} {:?}", SinchWebhook::hmac(SECRET).unwrap());
        assert!(!debug.contains("s3cret") && !debug.contains(SECRET) && debug.contains("basic"), "{debug}");
    }

    #[test]
    fn t274_a_delivery_report_is_a_status_with_its_reference() {
        let event = parse(REPORT.as_bytes(), true).unwrap();
        let EventKind::Delivered(update) = &event.kind else { panic!("{event:?}") };
        assert_eq!(update.provider_id, "01FC66621XXXXX119Z8PMV1QPQ");
        assert_eq!((update.provider_status.as_str(), update.error_code.as_deref()), ("Delivered", None));
        assert_eq!(update.to.as_deref(), Some("+14155550123"));
        assert!(event.occurred_at.is_some());
        assert!(
            event.dedupe_key.starts_with("sinch:dr:01FC66621XXXXX119Z8PMV1QPQ:Delivered:0:"),
            "{}",
            event.dedupe_key
        );
        assert!(!event.dedupe_key.contains("4155550123"), "no number in the key: {}", event.dedupe_key);
        assert_eq!(parse(REPORT.as_bytes(), true).unwrap().dedupe_key, event.dedupe_key, "a redelivery dedupes");
        let url = "https://hooks.example/sinch";
        assert_eq!(crate::reconcile::reference_in(&event, url).as_deref(), Some("AAAAAAAAAAAAAAAAAAAAAA"));

        let statuses = [
            ("Queued", 400, "message.queued", None),
            ("Dispatched", 401, "message.sent", None),
            ("Failed", 402, "message.undelivered", Some("402")),
            ("Expired", 406, "message.undelivered", Some("406")),
            ("Rejected", 408, "message.undelivered", Some("408")),
            ("Aborted", 403, "message.undelivered", Some("403")),
        ];
        for (status, code, kind, error_code) in statuses {
            let body =
                REPORT.replace(r#""code":0,"status":"Delivered""#, &format!(r#""code":{code},"status":"{status}""#));
            let event = parse(body.as_bytes(), true).unwrap();
            assert_eq!(event.kind.type_name(), kind, "{status}");
            let (EventKind::Queued(update) | EventKind::Sent(update) | EventKind::Undelivered(update)) = &event.kind
            else {
                panic!("{event:?}")
            };
            assert_eq!(update.error_code.as_deref(), error_code, "{status}");
        }
        let unknown = REPORT.replace(r#""status":"Delivered""#, r#""status":"Unknown""#);
        let event = parse(unknown.as_bytes(), true).unwrap();
        let EventKind::Unrecognized { provider_event_type } = &event.kind else { panic!() };
        assert_eq!(provider_event_type, "recipient_delivery_report_sms:Unknown");
        assert_eq!(
            parse(br#"{"type":"recipient_delivery_report_sms","status":"Delivered"}"#, true).unwrap_err(),
            payload_error("missing batch_id")
        );
    }

    #[test]
    fn t275_an_inbound_text_is_received_and_keywords_are_detected() {
        let event = parse(INBOUND.as_bytes(), true).unwrap();
        assert_eq!(event.dedupe_key, "sinch:mo:01FC66621VHDBN119Z8PMV1AHY");
        assert!(matches!(event.kind, EventKind::OptedOut(_)), "{event:?}");
        let event = parse(INBOUND.as_bytes(), false).unwrap();
        let EventKind::Received(message) = &event.kind else { panic!("{event:?}") };
        assert_eq!(
            (message.from.as_str(), message.to.as_str(), message.body.as_str()),
            ("+14155550123", "+15005550006", "STOP")
        );
        assert!(event.occurred_at.is_some());
        let no_from = INBOUND.replace(r#""from":"+14155550123","#, "");
        assert_eq!(parse(no_from.as_bytes(), true).unwrap_err(), payload_error("missing from or to"));
    }

    #[test]
    fn t276_other_callbacks_are_unrecognized_and_a_body_without_a_type_is_refused() {
        let summary = r#"{"type":"delivery_report_sms","batch_id":"b1","statuses":[{"code":0,"count":1,"status":"Delivered"}],"total_message_count":1}"#;
        let event = parse(summary.as_bytes(), true).unwrap();
        assert!(
            matches!(&event.kind, EventKind::Unrecognized { provider_event_type } if provider_event_type == "delivery_report_sms")
        );
        assert_eq!(event.dedupe_key, parse(summary.as_bytes(), true).unwrap().dedupe_key);
        for body in ["{}", r#"{"type":""}"#, "[]", "not json", r#"{"type":"mo_text","type":"x"}"#] {
            assert!(matches!(parse(body.as_bytes(), true), Err(WebhookError::Payload { .. })), "{body}");
        }
    }

    /// The normalizer over a `Value` of the whole body (a member it reads repeated refused): the
    /// reference the derived reader must agree with.
    fn through_value(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
        let raw = value_checked(body, &READ).map_err(|why| WebhookError::payload(NAME, why))?;
        let text = |key: &str| raw.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
        let kind = text("type").ok_or_else(|| payload_error("missing type"))?;
        match kind.as_str() {
            "recipient_delivery_report_sms" => {
                let batch_id = text("batch_id").ok_or_else(|| payload_error("missing batch_id"))?;
                let status = text("status").ok_or_else(|| payload_error("missing status"))?;
                let recipient = text("recipient");
                let code = read_code(&raw, "code");
                let at = raw.get("at").and_then(Value::as_str).and_then(parse_time);
                let key = format!(
                    "sinch:dr:{batch_id}:{status}:{}:{}",
                    code.as_deref().unwrap_or("-"),
                    recipient.as_deref().map_or_else(|| "-".to_owned(), |r| short_digest(r.as_bytes()))
                );
                let kind = match delivery_status(&status) {
                    Some(delivery) => {
                        let error_code = code.filter(|_| delivery == DeliveryStatus::Undelivered);
                        let update = StatusUpdate {
                            provider_id: batch_id,
                            provider_status: status,
                            error_code,
                            from: None,
                            to: recipient,
                        };
                        EventKind::status(delivery, update)
                    }
                    None => EventKind::Unrecognized { provider_event_type: format!("{kind}:{status}") },
                };
                Ok(SmsEvent::new(NAME, key, at, Raw::ready(raw.clone()), kind))
            }
            "mo_text" => {
                let id = text("id").ok_or_else(|| payload_error("missing id"))?;
                let (Some(from), Some(to)) = (text("from"), text("to")) else {
                    return Err(payload_error("missing from or to"));
                };
                let body_text = raw.get("body").and_then(Value::as_str).unwrap_or_default().to_owned();
                let at = raw.get("received_at").and_then(Value::as_str).and_then(parse_time);
                let message = Inbound { provider_id: id.clone(), from, to, body: body_text, media_urls: Vec::new() };
                let kind = EventKind::inbound(message, None, detect_keywords);
                Ok(SmsEvent::new(NAME, format!("sinch:mo:{id}"), at, Raw::ready(raw.clone()), kind))
            }
            _ => {
                let kind = EventKind::Unrecognized { provider_event_type: kind };
                Ok(SmsEvent::new(
                    NAME,
                    format!("sinch:other:{}", short_digest(body)),
                    None,
                    Raw::ready(raw.clone()),
                    kind,
                ))
            }
        }
    }

    fn same_as_value(body: &[u8]) {
        for detect_keywords in [true, false] {
            assert_agree(body, parse(body, detect_keywords), through_value(body, detect_keywords));
        }
    }

    #[test]
    fn written_bodies_normalize_as_through_a_value() {
        let bodies: &[&str] = &[
            REPORT,
            INBOUND,
            r#"{"type":"recipient_delivery_report_sms","batch_id":"b","status":"Failed","code":"402","recipient":"+1"}"#,
            r#"{"type":"recipient_delivery_report_sms","batch_id":"b","status":"Failed","code":1.5}"#,
            r#"{"type":"recipient_delivery_report_sms","batch_id":"b","status":"Failed","code":1,"code":2}"#,
            r#"{"type":"recipient_delivery_report_sms","batch_id":"b","batch_id":"c","status":"Failed"}"#,
            r#"{"type":"recipient_delivery_report_sms","batch_id":7,"status":"Failed"}"#,
            r#"{"type":"mo_text","id":"m","from":"+1","to":"+2","body":"help","other":{"a":1,"a":2}}"#,
            r#"{"type":"mo_text","id":"m","from":"+1","to":"+2","body":null}"#,
            r#"{"type":"mo_text","id":"m","from":"+1","to":"+2","body":"\ud800"}"#,
            r#"{"type":"mo_binary","id":"m","body":"AAEC"}"#,
            r#"{"type":"x"},"z":1e999}"#,
            r#"{"type":"x","z":1e999}"#,
            r#"{"typ\u0065":"mo_text","id":"m","from":"+1","to":"+2"}"#,
            r#"{"type":"mo_text","typ\u0065":"x"}"#,
            r#"[{"type":"mo_text"}]"#,
            r#"{"type":["mo_text"]}"#,
        ];
        for body in bodies {
            same_as_value(body.as_bytes());
        }
        let deep = format!(r#"{{"type":"x","z":{}{}}}"#, "[".repeat(200), "]".repeat(200));
        same_as_value(deep.as_bytes());
    }

    /// The keys and values of Sinch callbacks, for generated bodies.
    const KEYS: [&str; 12] = [
        "type",
        "batch_id",
        "recipient",
        "status",
        "code",
        "at",
        "id",
        "from",
        "to",
        "body",
        "received_at",
        "client_reference",
    ];
    const LEAVES: [&str; 16] = [
        "\"recipient_delivery_report_sms\"",
        "\"mo_text\"",
        "\"Delivered\"",
        "\"Failed\"",
        "\"+15005550006\"",
        "\"stop\"",
        "\"\"",
        "\"2026-12-01T10:00:00Z\"",
        "\"\\u0053TOP\"",
        "402",
        "1.5",
        "1e400",
        "null",
        "true",
        "\"\\ud800\"",
        "[]",
    ];

    #[test]
    fn generated_bodies_normalize_as_through_a_value() {
        let mut rng = fastrand::Rng::with_seed(29);
        for _ in 0..8_000 {
            let mut body = String::new();
            let depth = rng.usize(1..5);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut body);
            same_as_value(body.as_bytes());
            // A well-formed callback with one generated member in a read place.
            let mut member = String::new();
            let depth = rng.usize(0..4);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut member);
            let key = KEYS[rng.usize(..KEYS.len())];
            let callback = if rng.bool() {
                format!(
                    r#"{{"type":"recipient_delivery_report_sms","batch_id":"b","recipient":"+1","status":"Failed","code":402,"{key}":{member}}}"#
                )
            } else {
                format!(r#"{{"type":"mo_text","id":"m","from":"+1","to":"+2","body":"stop","{key}":{member}}}"#)
            };
            same_as_value(callback.as_bytes());
            same_as_value(&damage(&mut rng, callback.into_bytes()));
        }
    }
}
