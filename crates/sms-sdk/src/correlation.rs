//! Correlation references: how a status webhook finds the idempotency key of its message.
//!
//! When a client has a [`CorrelationSecret`] (see
//! [`ClientBuilder::correlation`](crate::ClientBuilder::correlation)) and an idempotency store,
//! every keyed send carries a reference the provider echoes back in its status webhooks:
//! - Twilio, Telnyx and Plivo: the query parameter [`REFERENCE_PARAM`] added to the message's
//!   own status callback URL (only when the message has one: a provider's account-level callback
//!   URL cannot carry it);
//! - Vonage: the message's `client_ref` (echoed in every status webhook, whichever URL receives
//!   it: the message's own or the application's default status URL), unless the caller set
//!   `client_ref` in the Vonage provider options.
//! - Sinch: the batch's `client_reference` (echoed in every delivery report, to the message's
//!   own callback URL or the service plan's), unless the caller set `clientReference` in the
//!   Sinch provider options.
//!
//! A send with no callback URL through Twilio, Telnyx or Plivo (their account-level callbacks
//! cannot carry a per-message query) gets no reference, and nothing is written for it.
//!
//! The reference is the first 128 bits of HMAC-SHA256 keyed with the secret over the key,
//! base64url (22 characters): it cannot be guessed without the secret and does not reveal the
//! key. It is not part of the message's fingerprint (the fingerprint is computed from the
//! message the caller wrote), so turning correlation on changes no fingerprint and old records
//! still replay. Without a secret no reference is attached. The store remembers which key a
//! reference names; a [`Reconciler`](crate::reconcile::Reconciler) settles the key's unknown
//! record from a verified webhook that carries it.
//!
//! ```
//! use sms_sdk::correlation::{CorrelationSecret, reference};
//!
//! let secret = CorrelationSecret::new("a long random value from your secret manager")?;
//! let r = reference(&secret, "order:123:shipped:v1");
//! assert_eq!(r.len(), 22);
//! assert_eq!(r, reference(&secret, "order:123:shipped:v1"));
//! assert!(!r.contains("order"));
//! # Ok::<(), sms_sdk::Error>(())
//! ```

use std::borrow::Cow;
use std::fmt;

use base64::Engine as _;
use hmac::{KeyInit as _, Mac as _};

use crate::error::Error;
use crate::redact::Secret;

/// The query parameter that carries the reference on Twilio, Telnyx and Plivo callback URLs.
pub const REFERENCE_PARAM: &str = "sms_sdk_ref";
/// The length of a reference: 22 base64url characters (128 bits). Vonage's `client_ref` takes
/// up to 100 (40 in older documentation): either way it fits.
pub const REFERENCE_LEN: usize = 22;
/// The shortest secret accepted: 16 bytes.
pub const MIN_SECRET_LEN: usize = 16;

/// The domain of every reference: the HMAC's input starts with it.
const DOMAIN: &[u8] = b"sms-sdk correlation v1\0";

/// The key of correlation references. Its `Debug` prints `***`; the value is zeroized on drop.
#[derive(Clone)]
pub struct CorrelationSecret {
    /// The HMAC keyed with the secret (once) and fed [`DOMAIN`]: each reference goes on from a
    /// copy. Its two SHA-256 states are zeroized on drop; the secret itself is dropped, and
    /// zeroized, once it has keyed them.
    keyed: hmac::Hmac<sha2::Sha256>,
}

impl CorrelationSecret {
    /// Wraps a secret of at least [`MIN_SECRET_LEN`] bytes (a random value, kept like a
    /// password: whoever has it can compute the reference of any key).
    ///
    /// # Errors
    /// `Configuration` when it is shorter than [`MIN_SECRET_LEN`] bytes.
    pub fn new(secret: impl Into<Secret>) -> Result<Self, Error> {
        let secret = secret.into();
        if secret.expose().len() < MIN_SECRET_LEN {
            return Err(Error::configuration(format!(
                "The correlation secret must be at least {MIN_SECRET_LEN} bytes long."
            )));
        }
        let mut keyed = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.expose().as_bytes())
            .map_err(|_| Error::configuration("The correlation secret cannot key an HMAC."))?;
        keyed.update(DOMAIN);
        Ok(Self { keyed })
    }
}

impl fmt::Debug for CorrelationSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CorrelationSecret(***)")
    }
}

/// The reference of idempotency key `key`: base64url (no padding) of the first 16 bytes of
/// HMAC-SHA256(secret, `"sms-sdk correlation v1\0" + key`).
#[must_use]
pub fn reference(secret: &CorrelationSecret, key: &str) -> String {
    let mut mac = secret.keyed.clone();
    mac.update(key.as_bytes());
    let digest = mac.finalize().into_bytes();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.get(..16).unwrap_or_default())
}

/// `url` with `reference` added as the query parameter [`REFERENCE_PARAM`] (before any
/// fragment). The URL is otherwise kept exactly as written.
#[must_use]
pub fn with_reference<'a>(url: &'a str, reference: Option<&str>) -> Cow<'a, str> {
    let Some(reference) = reference else { return Cow::Borrowed(url) };
    let (base, fragment) = url.split_once('#').map_or((url, None), |(base, fragment)| (base, Some(fragment)));
    let separator = match base.split_once('?') {
        None => '?',
        Some((_, "")) => '\0',
        Some(_) if base.ends_with('&') => '\0',
        Some(_) => '&',
    };
    let mut out = String::with_capacity(url.len() + REFERENCE_PARAM.len() + reference.len() + 3);
    out.push_str(base);
    if separator != '\0' {
        out.push(separator);
    }
    out.push_str(REFERENCE_PARAM);
    out.push('=');
    out.push_str(reference);
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    Cow::Owned(out)
}

/// Whether `text` has the shape of a reference (22 base64url characters).
#[must_use]
pub fn is_reference(text: &str) -> bool {
    text.len() == REFERENCE_LEN && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret() -> CorrelationSecret {
        CorrelationSecret::new("0123456789abcdef-test").unwrap()
    }

    #[test]
    fn references_are_keyed_stable_and_url_safe() {
        let a = reference(&secret(), "k1");
        assert!(is_reference(&a), "{a}");
        assert_eq!(a, reference(&secret(), "k1"));
        assert_ne!(a, reference(&secret(), "k2"));
        let other = CorrelationSecret::new("another secret value!").unwrap();
        assert_ne!(a, reference(&other, "k1"));
        assert!(CorrelationSecret::new("short").is_err());
        assert_eq!(format!("{:?}", secret()), "CorrelationSecret(***)");
    }

    #[test]
    fn references_are_hmac_sha256_of_the_domain_and_key() {
        // base64url(HMAC-SHA256("0123456789abcdef-test", "sms-sdk correlation v1\0k1")[..16]),
        // computed apart from this crate.
        assert_eq!(reference(&secret(), "k1"), "wVguHDX-Uzl8fdYnvRAjHw");
    }

    #[test]
    fn the_keyed_state_is_zeroized_on_drop() {
        // The secret keeps the HMAC's two SHA-256 states (keyed with it).
        fn zeroized_on_drop<T: hmac::digest::zeroize::ZeroizeOnDrop>() {}
        zeroized_on_drop::<<sha2::Sha256 as hmac::digest::block_api::CoreProxy>::Core>();
    }

    #[test]
    fn the_reference_is_appended_to_the_query() {
        let r = Some("R");
        assert_eq!(with_reference("https://x/s", r), "https://x/s?sms_sdk_ref=R");
        assert_eq!(with_reference("https://x/s?a=1", r), "https://x/s?a=1&sms_sdk_ref=R");
        assert_eq!(with_reference("https://x/s?", r), "https://x/s?sms_sdk_ref=R");
        assert_eq!(with_reference("https://x/s?a=1&", r), "https://x/s?a=1&sms_sdk_ref=R");
        assert_eq!(with_reference("https://x/s#f", r), "https://x/s?sms_sdk_ref=R#f");
        assert!(matches!(with_reference("https://x/s", None), Cow::Borrowed("https://x/s")));
    }
}
