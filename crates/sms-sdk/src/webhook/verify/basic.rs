//! HTTP Basic credentials a verifier expects in a callback's `Authorization` header (the
//! providers whose callbacks carry no signature of their own: Sinch without HMAC, Infobip,
//! Bandwidth).

use base64::Engine as _;
use http::HeaderMap;

use super::settings::header;
use crate::digest::same_bytes;
use crate::error::Error;
use crate::redact::Secret;
#[cfg(any(feature = "infobip", feature = "bandwidth"))]
use crate::webhook::SmsEvent;
use crate::webhook::WebhookError;

/// The credentials, as `base64(user:password)`: what follows the scheme in the header.
#[derive(Clone)]
pub(crate) struct BasicCredentials {
    encoded: Secret,
}

impl BasicCredentials {
    /// The credentials of `user` and `password` for `provider`'s verifier (named in the error).
    ///
    /// # Errors
    /// `Configuration` when the user or the password is empty, or the user holds a `:`.
    pub(crate) fn new(provider: &str, user: &str, password: &Secret) -> Result<Self, Error> {
        if user.is_empty() || password.is_empty() || user.contains(':') {
            return Err(Error::configuration(format!(
                "The {provider} webhook verifier needs a user (without ':') and a password for Basic credentials."
            )));
        }
        let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{}", password.expose()));
        Ok(Self { encoded: Secret::new(encoded) })
    }

    /// Whether `headers` carry Basic credentials (of anyone: recognising proves nothing).
    #[cfg(any(feature = "infobip", feature = "bandwidth"))]
    pub(crate) fn offered(headers: &HeaderMap) -> bool {
        header(headers, http::header::AUTHORIZATION)
            .and_then(|value| value.trim().split_once(' '))
            .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"))
    }

    /// Checks `headers`' `Authorization`: `MissingSignature` without one, `InvalidSignature` for
    /// another scheme (compared case-insensitively, RFC 9110) or other credentials (compared
    /// whole, in constant time).
    pub(crate) fn check(&self, provider: &'static str, headers: &HeaderMap) -> Result<(), WebhookError> {
        let given = header(headers, http::header::AUTHORIZATION).ok_or(WebhookError::MissingSignature { provider })?;
        let invalid = WebhookError::InvalidSignature { provider };
        let (scheme, credentials) = given.trim().split_once(' ').ok_or_else(|| invalid.clone())?;
        if scheme.eq_ignore_ascii_case("basic")
            && same_bytes(credentials.trim().as_bytes(), self.encoded.expose().as_bytes())
        {
            Ok(())
        } else {
            Err(invalid)
        }
    }
}

/// The one event of a batch, for [`WebhookVerifier::verify_at`](crate::webhook::WebhookVerifier::verify_at)
/// of a provider that batches: a batch of more is a payload error that says to take them all.
#[cfg(any(feature = "infobip", feature = "bandwidth"))]
pub(crate) fn only_event(provider: &'static str, mut events: Vec<SmsEvent>) -> Result<SmsEvent, WebhookError> {
    match (events.pop(), events.is_empty()) {
        (Some(event), true) => Ok(event),
        (Some(_), false) => Err(WebhookError::payload(
            provider,
            format!("the request carries {} events: verify it with verify_all_at", events.len() + 1),
        )),
        (None, _) => Err(WebhookError::payload(provider, "the request carries no event")),
    }
}
