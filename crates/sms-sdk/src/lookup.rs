//! Looking a message up at its provider, to reconcile an unknown outcome by hand.
//!
//! The built-in adapters implement [`Lookup`] where the provider's API allows it: Twilio fetches
//! by id and lists by recipient and date; Telnyx and Plivo fetch by id; Vonage's Messages API
//! has neither (every call answers [`LookupOutcome::Unsupported`]). Lookups are read-only and
//! never resend. They use the adapter's endpoint, credentials and transport bounds (connect
//! budget, request timeout, 1 MiB answer cap); a refusal keeps only the HTTP status. The adapter
//! reports what the provider said; deciding what it means (the `idempotency reconcile` command)
//! is the caller's job.
//!
//! ```
//! # #[cfg(feature = "twilio")]
//! # async fn demo() -> Result<(), sms_sdk::Error> {
//! use std::time::Duration;
//!
//! use sms_sdk::Twilio;
//! use sms_sdk::lookup::{Lookup, LookupOutcome, is_plain_id};
//!
//! let twilio = Twilio::builder("AC0123456789abcdef0123456789abcdef", "auth-token").build()?;
//! // An id that cannot be put in a URL path is refused before any request.
//! assert!(!is_plain_id("SM1/../x"));
//! let outcome = twilio.fetch("SM1/../x", Duration::from_secs(10)).await;
//! assert!(matches!(outcome, LookupOutcome::Failed { .. }));
//! # Ok(())
//! # }
//! # #[cfg(feature = "twilio")]
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(demo()).unwrap();
//! ```

use std::fmt;
use std::time::Duration;

use time::OffsetDateTime;

use crate::redact::mask_phone_number;
use futures_util::future::BoxFuture;

/// A non-empty JSON string, owned: how the lookups read a found message's fields.
#[cfg(any(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "sinch"))]
pub(crate) fn text(value: Option<&serde_json::Value>) -> Option<String> {
    value.and_then(serde_json::Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// A message as the provider's fetch or list API shows it.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FoundMessage {
    /// The provider (`twilio`, …).
    pub provider: &'static str,
    /// The provider's message id.
    pub provider_id: String,
    /// The recipient in E.164, when the provider says.
    pub to: Option<String>,
    /// The sender as the provider shows it (a number in E.164, a sender ID or a service id).
    pub from: Option<String>,
    /// The text, when the provider returns it (Plivo does not).
    pub body: Option<String>,
    /// The provider's status word.
    pub status: String,
    /// When the provider created it, when it says.
    pub created_at: Option<OffsetDateTime>,
}

impl FoundMessage {
    /// A message with only its provider, id and status known.
    #[must_use]
    pub fn new(provider: &'static str, provider_id: impl Into<String>, status: impl Into<String>) -> Self {
        Self {
            provider,
            provider_id: provider_id.into(),
            to: None,
            from: None,
            body: None,
            status: status.into(),
            created_at: None,
        }
    }
}

impl fmt::Debug for FoundMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FoundMessage")
            .field("provider", &self.provider)
            .field("provider_id", &self.provider_id)
            .field("to", &self.to.as_deref().map(mask_phone_number))
            .field("body", &self.body.as_ref().map(|b| format!("<{} chars>", b.chars().count())))
            .field("status", &self.status)
            .field("created_at", &self.created_at)
            .finish_non_exhaustive()
    }
}

/// What a lookup found out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LookupOutcome {
    /// The provider has these messages (a fetch finds one; a list, any number).
    Found(Vec<FoundMessage>),
    /// The provider answered that it has no such message (fetch: HTTP 404).
    NotFound,
    /// The provider's API has no such lookup.
    Unsupported,
    /// The lookup could not be made or read: nothing is known.
    Failed {
        /// Why, without anything the provider sent back but its status.
        reason: String,
    },
}

impl LookupOutcome {
    /// A failed lookup.
    #[must_use]
    pub fn failed(reason: &str) -> Self {
        Self::Failed { reason: reason.to_owned() }
    }
}

/// The most messages one list lookup reads (one page).
pub const MAX_LISTED: usize = 50;

/// Reads messages back from a provider. Implemented by the built-in adapters.
pub trait Lookup: Send + Sync {
    /// The provider's name (`twilio`, …).
    fn lookup_provider(&self) -> &'static str;

    /// Fetches the message with the provider's id `id`, within `timeout`.
    fn fetch<'a>(&'a self, id: &'a str, timeout: Duration) -> BoxFuture<'a, LookupOutcome>;

    /// Lists the messages sent to `to` (E.164) on or after the day of `since` (UTC), newest
    /// first, at most [`MAX_LISTED`], within `timeout`. [`LookupOutcome::Unsupported`] by
    /// default.
    fn list_to<'a>(&'a self, to: &'a str, since: OffsetDateTime, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        let _ = (to, since, timeout);
        Box::pin(async { LookupOutcome::Unsupported })
    }
}

/// Whether `id` can be put in a URL path as it is: 1 to 64 ASCII letters, digits, `-` and `_`
/// (every provider's message ids are).
#[must_use]
pub fn is_plain_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ids_only() {
        assert!(is_plain_id("SM0123456789abcdef0123456789abcdef"));
        assert!(is_plain_id("2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c"));
        assert!(!is_plain_id("../x") && !is_plain_id("") && !is_plain_id("a?b"));
    }

    #[test]
    fn debug_masks_the_recipient_and_hides_the_body() {
        let mut found = FoundMessage::new("twilio", "SM1", "sent");
        found.to = Some("+14155550123".into());
        found.body = Some("secret text".into());
        let debug = format!("{found:?}");
        assert!(!debug.contains("4155550123") && !debug.contains("secret text"), "{debug}");
    }
}
