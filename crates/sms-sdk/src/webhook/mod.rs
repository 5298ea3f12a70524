//! Receiving provider webhooks: verify first, then normalize into one [`SmsEvent`].
//!
//! Each provider has a verifier (`TwilioWebhook`, `TelnyxWebhook`, `PlivoWebhook`,
//! `VonageWebhook`, `AwsWebhook`, `SinchWebhook`, `InfobipWebhook`, `BandwidthWebhook`, under
//! their features) implementing [`WebhookVerifier`]; Infobip and Bandwidth post several events in
//! one request, which [`WebhookVerifier::verify_all_at`] returns. An [`AnyWebhook`]
//! made of several recognises each request's provider and verifies it with that one (one status
//! route for a client that fails over). The only way to get
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
//! Answer 401 when [`WebhookError::is_authentication`] is true and 400 otherwise (413 for
//! [`WebhookError::BodyTooLarge`]), or let the `tower` module's layer (feature `tower`) or the `axum`
//! module's extractor (feature `axum`) read, verify and answer for you; deduplicate
//! on [`SmsEvent::dedupe_key`] (see [`DedupeStore`](crate::store::DedupeStore)), since providers redeliver.

mod any;
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod axum;
pub mod event;
mod masked;
mod observe;
pub mod ordering;
mod raw;
#[cfg(feature = "tower")]
mod receive;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;
#[cfg(feature = "__http")]
pub(crate) mod verify;

use std::fmt;
use std::time::{Duration, SystemTime};

use http::HeaderMap;

use crate::BoxFuture;

pub use self::any::AnyWebhook;
pub use self::event::{EventKind, SmsEvent};
pub use self::masked::MaskedEvent;
pub use self::observe::{EventObserver, SharedObserver};
pub(crate) use self::raw::Raw;

/// The largest body a verifier reads by default: 1 MiB.
pub const DEFAULT_MAX_BODY: usize = 1024 * 1024;
/// The default freshness window of timestamped schemes (Telnyx, Vonage): 300 s either way.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_mins(5);
/// The most form parameters (body and query together) a verifier decodes by default: 1,024.
/// They are counted in one pass over the raw bytes before anything is decoded.
pub const DEFAULT_MAX_PARAMS: usize = 1024;

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
            .field("url", &without_userinfo(self.url.split('?').next().unwrap_or_default()))
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

    /// Verifies `request` as of `now` and parses every event it carries, in order: at least
    /// one, all or none. Infobip and Bandwidth post several results in one request; their
    /// [`verify_at`](WebhookVerifier::verify_at) refuses a request of more than one (a
    /// `Payload` error), so code that receives their webhooks calls this (the `tower` layer, the
    /// `axum` module's `VerifiedAll` and the command's `serve` do). The other providers post one
    /// event per request: the default is [`verify_at`](WebhookVerifier::verify_at)'s event.
    ///
    /// # Errors
    /// As [`verify_at`](WebhookVerifier::verify_at).
    fn verify_all_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<Vec<SmsEvent>, WebhookError> {
        self.verify_at(request, now).map(|event| vec![event])
    }

    /// [`verify_all_at`](WebhookVerifier::verify_all_at) as of now.
    ///
    /// # Errors
    /// As [`verify_at`](WebhookVerifier::verify_at).
    fn verify_all(&self, request: &WebhookRequest<'_>) -> Result<Vec<SmsEvent>, WebhookError> {
        self.verify_all_at(request, SystemTime::now())
    }

    /// The largest body this verifier reads (1 MiB unless configured).
    fn body_limit(&self) -> usize {
        DEFAULT_MAX_BODY
    }

    /// Whether `headers` carry this provider's signature (its signature header, or its kind of
    /// `Authorization`), so that an [`AnyWebhook`] can pick this verifier for a request before
    /// reading its body. Recognising proves nothing: the verifier still checks the signature.
    /// The default is false (a verifier that does not say is never picked by an `AnyWebhook`).
    fn recognizes(&self, headers: &HeaderMap) -> bool {
        let _ = headers;
        false
    }

    /// The `WWW-Authenticate` value to answer a request without credentials with
    /// ([`WebhookError::MissingSignature`], 401): for the verifiers of HTTP Basic credentials
    /// (Infobip's, Bandwidth's), whose senders may send them only once challenged. The server
    /// integrations add it; the default is none (signature schemes have no challenge).
    fn challenge(&self) -> Option<&'static str> {
        None
    }

    /// Gets ready to verify `request`: fetches what the verifier needs and does not hold yet
    /// (the AWS verifier's SNS signing certificate, bounded in time and size, then cached). The
    /// server integrations await it before [`verify`](WebhookVerifier::verify); code that calls
    /// `verify` itself should too. Most verifiers hold their keys and need nothing (the default).
    ///
    /// # Errors
    /// [`WebhookError::KeyUnavailable`] when the key could not be had (answer 503: the provider
    /// retries), or the refusal `verify` would give when the request cannot be read that far.
    fn prepare<'a>(&'a self, request: &'a WebhookRequest<'a>) -> BoxFuture<'a, Result<(), WebhookError>> {
        let _ = request;
        Box::pin(std::future::ready(Ok(())))
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
    /// The request carries more form parameters than the verifier's limit (a payload error,
    /// found before the signature is checked).
    TooManyParameters {
        /// The provider.
        provider: &'static str,
        /// The most parameters accepted.
        limit: usize,
    },
    /// The body could not be read: the client went away or was too slow (answer 400). Only a
    /// server integration that reads the body reports it.
    BodyUnreadable {
        /// The provider.
        provider: &'static str,
    },
    /// The key to verify with could not be had in time (an AWS SNS signing certificate whose
    /// fetch failed, timed out or waits behind others): nothing about the request is known yet,
    /// so the answer is 503 and the provider sends it again later.
    KeyUnavailable {
        /// The provider.
        provider: &'static str,
    },
}

impl WebhookError {
    /// True for signature and authentication failures (answer 401), false for a malformed
    /// payload, too many parameters, an unreadable body (answer 400) or an oversized body (413).
    #[must_use]
    pub fn is_authentication(&self) -> bool {
        self.reason().is_some()
    }

    /// The status to answer the request with: 401 when it is not authentic, 413 when its body is
    /// too large, 503 when the key to verify with could not be had (the provider retries), 400
    /// otherwise (a malformed payload, too many parameters, an unreadable body).
    #[must_use]
    pub fn http_status(&self) -> u16 {
        if self.is_authentication() {
            401
        } else if let Self::BodyTooLarge { .. } = self {
            413
        } else if let Self::KeyUnavailable { .. } = self {
            503
        } else {
            400
        }
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
            Self::Payload { .. }
            | Self::BodyTooLarge { .. }
            | Self::TooManyParameters { .. }
            | Self::BodyUnreadable { .. }
            | Self::KeyUnavailable { .. } => None,
        }
    }

    /// `webhook_signature`, `webhook_payload` (too many parameters included), `body_too_large`,
    /// `body_unreadable` or `key_unavailable`.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Payload { .. } | Self::TooManyParameters { .. } => "webhook_payload",
            Self::BodyTooLarge { .. } => "body_too_large",
            Self::BodyUnreadable { .. } => "body_unreadable",
            Self::KeyUnavailable { .. } => "key_unavailable",
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
            | Self::BodyTooLarge { provider, .. }
            | Self::TooManyParameters { provider, .. }
            | Self::BodyUnreadable { provider }
            | Self::KeyUnavailable { provider } => provider,
        }
    }

    #[cfg_attr(not(feature = "__http"), allow(dead_code))]
    pub(crate) fn payload(provider: &'static str, message: impl Into<String>) -> Self {
        Self::Payload { provider, message: message.into() }
    }
}

impl fmt::Display for WebhookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Payload { provider, message } => write!(f, "{provider} webhook payload is invalid: {message}"),
            Self::BodyTooLarge { provider, limit } => write!(f, "{provider} webhook body is larger than {limit} bytes"),
            Self::TooManyParameters { provider, limit } => {
                write!(f, "{provider} webhook has more than {limit} parameters")
            }
            Self::BodyUnreadable { provider } => {
                write!(f, "{provider} webhook body could not be read (the client went away or was too slow)")
            }
            Self::KeyUnavailable { provider } => {
                write!(f, "{provider} webhook could not be verified yet: its signing key could not be had")
            }
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

/// `url` with any `user:password@` of its authority replaced by `***@` (for `Debug`).
pub(crate) fn without_userinfo(url: &str) -> std::borrow::Cow<'_, str> {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((_, host)) => {
            let separator = if url.contains("://") { "://" } else { "" };
            format!("{scheme}{separator}***@{host}{tail}").into()
        }
        None => url.into(),
    }
}

#[cfg(test)]
mod userinfo_tests {
    use super::*;

    #[test]
    fn userinfo_is_hidden() {
        assert_eq!(without_userinfo("https://user:pw@Example.com:8443/a?b=1"), "https://***@Example.com:8443/a?b=1");
        assert_eq!(without_userinfo("https://example.com/a@b"), "https://example.com/a@b");
        assert_eq!(without_userinfo("user:pw@host/x"), "***@host/x");
        let headers = HeaderMap::new();
        let request = WebhookRequest { method: "POST", url: "https://u:secret@h/p?q=1", headers: &headers, body: b"" };
        assert!(!format!("{request:?}").contains("secret"));
    }
}
