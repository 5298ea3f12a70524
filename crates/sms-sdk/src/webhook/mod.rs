//! Receiving provider webhooks: verify first, then normalize into one [`SmsEvent`].
//!
//! Each provider has a verifier (`TwilioWebhook`, `TelnyxWebhook`, `PlivoWebhook`,
//! `VonageWebhook`, under their features) implementing [`WebhookVerifier`]. The only way to get
//! an event is a successful verification; the clock is an argument ([`WebhookVerifier::verify_at`])
//! so tests control it.
//!
//! ```
//! # #[cfg(feature = "twilio")] {
//! use sms_sdk::provider::twilio::TwilioWebhook;
//! use sms_sdk::testing::webhooks::signed_twilio_request;
//! use sms_sdk::webhook::{WebhookRequest, WebhookVerifier};
//!
//! let url = "https://example.com/sms/inbound";
//! let params = [("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("From", "+14155550123"),
//!               ("To", "+15005550006"), ("Body", "STOP")];
//! let signed = signed_twilio_request("auth-token", url, &params);
//! let event = TwilioWebhook::new("auth-token").unwrap().verify(&signed.as_request())?;
//! assert_eq!(event.type_name(), "recipient.opted_out");
//! # }
//! # Ok::<(), sms_sdk::webhook::WebhookError>(())
//! ```
//!
//! Answer 401 when [`WebhookError::is_authentication`] is true and 400 otherwise; deduplicate
//! on [`SmsEvent::dedupe_key`] (see [`dedupe`]), since providers redeliver.

#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod axum;
pub mod dedupe;
pub mod event;
pub mod ordering;

use std::fmt;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use http::HeaderMap;
use subtle::ConstantTimeEq;

pub use self::event::{EventKind, SmsEvent};

/// The largest body a verifier reads by default: 1 MiB.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;
/// The default freshness window of timestamped schemes (Telnyx, Vonage): 300 s either way.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(300);

/// A webhook request as any HTTP framework hands it over: nothing parsed yet.
#[derive(Clone, Copy)]
pub struct WebhookRequest<'a> {
    /// `POST` or `GET`.
    pub method: &'a str,
    /// The full URL the request was received at (scheme, host, path and query).
    pub url: &'a str,
    /// The request headers.
    pub headers: &'a HeaderMap,
    /// The raw body bytes, exactly as received.
    pub body: &'a [u8],
}

impl fmt::Debug for WebhookRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookRequest")
            .field("method", &self.method)
            .field("url", &self.url.split('?').next().unwrap_or_default())
            .field("body", &format_args!("<{} bytes>", self.body.len()))
            .finish_non_exhaustive()
    }
}

/// Verifies a provider's webhook and turns it into an event.
pub trait WebhookVerifier: Send + Sync {
    /// The provider's name (`twilio`, …).
    fn provider(&self) -> &'static str;

    /// Verifies `request` as of `now` and parses it.
    ///
    /// # Errors
    /// A signature error (answer 401) or a payload error (answer 400).
    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError>;

    /// Verifies `request` as of now and parses it.
    ///
    /// # Errors
    /// As [`WebhookVerifier::verify_at`].
    fn verify(&self, request: &WebhookRequest<'_>) -> Result<SmsEvent, WebhookError> {
        self.verify_at(request, SystemTime::now())
    }

    /// The largest body this verifier reads (1 MiB unless configured).
    fn body_limit(&self) -> usize {
        DEFAULT_MAX_BODY
    }
}

/// Why a webhook was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WebhookError {
    /// No signature (or nonce, or timestamp) header.
    MissingSignature {
        /// The provider.
        provider: &'static str,
    },
    /// The signature does not match.
    InvalidSignature {
        /// The provider.
        provider: &'static str,
    },
    /// The timestamp is outside the tolerance.
    StaleTimestamp {
        /// The provider.
        provider: &'static str,
    },
    /// The signed body hash does not match the body.
    BodyHashMismatch {
        /// The provider.
        provider: &'static str,
    },
    /// The signature or token cannot be read.
    MalformedSignature {
        /// The provider.
        provider: &'static str,
    },
    /// The verifier's key cannot be used.
    InvalidCredentials {
        /// The provider.
        provider: &'static str,
    },
    /// The request is authentic but its payload is malformed or incomplete.
    Payload {
        /// The provider.
        provider: &'static str,
        /// What is wrong (never a value from the payload).
        message: String,
    },
    /// The body is larger than the verifier's limit.
    BodyTooLarge {
        /// The provider.
        provider: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
}

impl WebhookError {
    /// True for signature and authentication failures (answer 401), false for a malformed
    /// payload or an oversized body (answer 400 or 413).
    #[must_use]
    pub fn is_authentication(&self) -> bool {
        self.reason().is_some()
    }

    /// The reference's failure reason of a signature error (`invalid_signature`, …).
    #[must_use]
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            Self::MissingSignature { .. } => Some("missing_signature"),
            Self::InvalidSignature { .. } => Some("invalid_signature"),
            Self::StaleTimestamp { .. } => Some("stale_timestamp"),
            Self::BodyHashMismatch { .. } => Some("body_hash_mismatch"),
            Self::MalformedSignature { .. } => Some("malformed_signature"),
            Self::InvalidCredentials { .. } => Some("invalid_credentials"),
            Self::Payload { .. } | Self::BodyTooLarge { .. } => None,
        }
    }

    /// `webhook_signature`, `webhook_payload` or `body_too_large`.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Payload { .. } => "webhook_payload",
            Self::BodyTooLarge { .. } => "body_too_large",
            Self::MissingSignature { .. }
            | Self::InvalidSignature { .. }
            | Self::StaleTimestamp { .. }
            | Self::BodyHashMismatch { .. }
            | Self::MalformedSignature { .. }
            | Self::InvalidCredentials { .. } => "webhook_signature",
        }
    }

    /// The provider whose webhook it was.
    #[must_use]
    pub fn provider(&self) -> &'static str {
        match self {
            Self::MissingSignature { provider }
            | Self::InvalidSignature { provider }
            | Self::StaleTimestamp { provider }
            | Self::BodyHashMismatch { provider }
            | Self::MalformedSignature { provider }
            | Self::InvalidCredentials { provider }
            | Self::Payload { provider, .. }
            | Self::BodyTooLarge { provider, .. } => provider,
        }
    }

    pub(crate) fn payload(provider: &'static str, message: impl Into<String>) -> Self {
        Self::Payload { provider, message: message.into() }
    }
}

impl fmt::Display for WebhookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Payload { provider, message } => write!(f, "{provider} webhook payload is invalid: {message}"),
            Self::BodyTooLarge { provider, limit } => write!(f, "{provider} webhook body is larger than {limit} bytes"),
            Self::MissingSignature { provider }
            | Self::InvalidSignature { provider }
            | Self::StaleTimestamp { provider }
            | Self::BodyHashMismatch { provider }
            | Self::MalformedSignature { provider }
            | Self::InvalidCredentials { provider } => {
                write!(f, "{provider} webhook is not authentic ({})", self.reason().unwrap_or_default())
            }
        }
    }
}

impl std::error::Error for WebhookError {}

/// Options shared by the verifiers.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The URL the provider signed, when the server sees another one (a proxy).
    pub(crate) public_url: Option<String>,
    /// Rebuild the URL from `X-Forwarded-Proto` and `X-Forwarded-Host`.
    pub(crate) trust_proxy: bool,
    /// Match whole-message STOP/HELP keywords.
    pub(crate) detect_keywords: bool,
    /// The largest body accepted.
    pub(crate) max_body: usize,
    /// The freshness window of timestamped schemes.
    pub(crate) tolerance: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            public_url: None,
            trust_proxy: false,
            detect_keywords: true,
            max_body: DEFAULT_MAX_BODY,
            tolerance: DEFAULT_TOLERANCE,
        }
    }
}

impl Settings {
    /// Refuses a body over the limit.
    pub(crate) fn check_size(&self, provider: &'static str, request: &WebhookRequest<'_>) -> Result<(), WebhookError> {
        if request.body.len() > self.max_body {
            return Err(WebhookError::BodyTooLarge { provider, limit: self.max_body });
        }
        Ok(())
    }

    /// The URL the provider signed: the public URL (with the request's query appended when it
    /// has none), the URL rebuilt from forwarded headers when the proxy is trusted, or the URL as
    /// received.
    pub(crate) fn signed_url(&self, request: &WebhookRequest<'_>) -> String {
        let (scheme, authority, path, query) = split_url(request.url);
        if let Some(public) = &self.public_url {
            return if public.contains('?') { public.clone() } else { format!("{public}{query}") };
        }
        if self.trust_proxy {
            let first = |name: &str| {
                header(request.headers, name).and_then(|v| v.split(',').next()).map(str::trim).filter(|v| !v.is_empty())
            };
            let proto = first("x-forwarded-proto").unwrap_or(scheme);
            let host = first("x-forwarded-host").or_else(|| header(request.headers, "host")).unwrap_or(authority);
            return format!("{proto}://{host}{path}{query}");
        }
        request.url.to_owned()
    }
}

/// Splits a URL as received into scheme, authority, path and query (with its `?`).
pub(crate) fn split_url(url: &str) -> (&str, &str, &str, &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (before_fragment, _) = rest.split_once('#').unwrap_or((rest, ""));
    let authority_end = before_fragment.find(['/', '?']).unwrap_or(before_fragment.len());
    let (authority, tail) = before_fragment.split_at(authority_end);
    let query_start = tail.find('?').unwrap_or(tail.len());
    let (path, query) = tail.split_at(query_start);
    (scheme, authority, path, query)
}

/// A header's value as text.
pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Form-decoded pairs, keeping repeats and order (`+` is a space).
pub(crate) fn form_pairs(input: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(input).into_owned().collect()
}

/// The parameters a form webhook carries: the URL query for GET, the form body otherwise.
pub(crate) fn request_params(request: &WebhookRequest<'_>) -> Vec<(String, String)> {
    if request.method.eq_ignore_ascii_case("GET") {
        let (_, _, _, query) = split_url(request.url);
        form_pairs(query.trim_start_matches('?').as_bytes())
    } else {
        form_pairs(request.body)
    }
}

/// The first value of each key, as a JSON object (the `raw` of form webhooks).
pub(crate) fn first_values(pairs: &[(String, String)]) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    for (key, value) in pairs {
        if !map.contains_key(key) {
            map.insert(key.clone(), serde_json::Value::String(value.clone()));
        }
    }
    map
}

/// Strict standard base64 (canonical padding, no trailing bits).
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(text.trim()).ok()
}

/// Standard base64 with padding.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Constant-time equality (lengths may leak).
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// Lowercase hex SHA-256.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Seconds since the epoch.
pub(crate) fn unix_seconds(now: SystemTime) -> i64 {
    now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A lenient timestamp (`…Z`, `…+00:00`, fractional seconds), as providers send them.
pub(crate) fn parse_time(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_as_received() {
        assert_eq!(split_url("https://Ex.com:8443/a/b?x=1#f"), ("https", "Ex.com:8443", "/a/b", "?x=1"));
        assert_eq!(split_url("https://answer.url"), ("https", "answer.url", "", ""));
        assert_eq!(split_url("http://h?q"), ("http", "h", "", "?q"));
    }

    #[test]
    fn strict_base64_refuses_a_second_encoding() {
        assert_eq!(decode_base64("AQ=="), Some(vec![1]));
        assert_eq!(decode_base64("AR=="), None);
        assert_eq!(decode_base64("AQ"), None);
    }
}
