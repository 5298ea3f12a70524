//! Infobip (SMS API v3, `POST /sms/3/messages`): support level `partial`.
//!
//! ```
//! use sms_sdk::provider::infobip::Infobip;
//!
//! // Every Infobip account has its own API host (shown in the portal): there is no default.
//! let infobip = Infobip::builder("https://xyz123.api.infobip.com", "API-KEY-0123456789").from("InfoSMS").build()?;
//! # let _ = infobip;
//! # Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! A message is a JSON `POST {base}/sms/3/messages` of one destination with
//! `Authorization: App <API key>`. The adapter chooses the destination's `messageId`:
//! `sms-sdk-{reference}` when the send carries a correlation reference (so the same key always
//! names the same Infobip message), else `sms-sdk-` and 32 random hex digits. That id is the
//! accepted message's provider id and the key of a lookup. The reference also travels as
//! `webhooks.callbackData`, which Infobip echoes in every delivery report.
//!
//! A 200 is decided by the destination's status group: 5 (REJECTED) is a rejection, 0 to 4 an
//! acceptance (the message exists), anything else unknown. Infobip has no idempotency header:
//! a send whose outcome is unknown is settled by a lookup in the message logs (48 hours) or a
//! verified delivery report, never by sending again.
//!
//! Webhooks: [`InfobipWebhook`] verifies Infobip's batched delivery reports and inbound messages
//! with what the account can configure (Basic credentials or a secret token in the callback
//! URL) and returns every event of the batch through
//! [`WebhookVerifier::verify_all_at`](crate::webhook::WebhookVerifier::verify_all_at).

mod lookup;
mod request;
mod response;
mod webhook;

use std::fmt;

use self::request::{OPTIONS, capabilities, message_id, request_body};
use self::response::interpret;
#[cfg(feature = "testing")]
pub(crate) use self::webhook::parse_first as parse_body;
pub use self::webhook::{
    InfobipWebhook, MAX_RESULTS, MAX_TOKEN_LEN, MIN_TOKEN_LEN, TOKEN_PARAM, WWW_AUTHENTICATE, callback_url_with_token,
};
use crate::HttpConfig;
use crate::adapter::{Adapter, AdapterInfo, Outcome, SendContext, Support, SupportStatus};
use crate::error::Error;
use crate::http::{Authorization, Body, Post, Transport, check_credential};
use crate::lookup::Lookup;
use crate::message::{OutboundMessage, Sender};
use crate::redact::Secret;

/// The adapter's name.
pub const NAME: &str = "infobip";

/// The path messages are sent to, under the account's base URL.
pub const SEND_PATH: &str = "/sms/3/messages";

/// Wire facts and pure functions the emulator and the test suites share; not part of the stable
/// API, may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use super::lookup::{LOG_WINDOW_SECS, LOGS_PATH, list_query};
    pub use super::request::{
        MAX_VALIDITY_SECS, MESSAGE_ID_PREFIX, MIN_VALIDITY_SECS, OPTIONS, capabilities, destination, message_id,
        request_body,
    };
    pub use super::response::{GROUP_REJECTED, delivery, interpret, rejected_status_category, rejection_category};
    pub use super::webhook::parse_all;
}

/// The Infobip adapter.
#[derive(Clone)]
pub struct Infobip {
    info: AdapterInfo,
    transport: Transport,
    authorization: Authorization,
}

/// Builds an [`Infobip`] adapter.
#[must_use]
pub struct InfobipBuilder {
    base_url: String,
    api_key: Secret,
    from: Option<Sender>,
    http: HttpConfig,
}

impl Infobip {
    /// An adapter for the account whose API host is `base_url` (`https://{id}.api.infobip.com`,
    /// shown in the Infobip portal; a bare host is taken as `https://`), authenticated with one
    /// of its API keys.
    pub fn builder(base_url: impl Into<String>, api_key: impl Into<Secret>) -> InfobipBuilder {
        InfobipBuilder { base_url: base_url.into(), api_key: api_key.into(), from: None, http: HttpConfig::new() }
    }
}

impl InfobipBuilder {
    /// The default sender (a number, or an alphanumeric sender ID where the country allows one).
    pub fn from(mut self, sender: impl Into<Sender>) -> Self {
        self.from = Some(sender.into());
        self
    }

    /// How the adapter reaches Infobip, for its sends and lookups: a client of your own (a proxy,
    /// one pool for several adapters), the connect timeout, the `User-Agent` ([`HttpConfig`]).
    pub fn http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }

    /// Checks the configuration and builds the adapter.
    ///
    /// # Errors
    /// `Configuration` when the base URL is empty or not an http(s) URL, or the API key is empty
    /// or holds a character that cannot be sent in a header.
    pub fn build(self) -> Result<Infobip, Error> {
        let base_url = self.base_url.trim();
        if base_url.is_empty() {
            return Err(Error::configuration(
                "The Infobip base URL is required: each account has its own (https://<id>.api.infobip.com).",
            ));
        }
        let base_url = if base_url.contains("://") { base_url.to_owned() } else { format!("https://{base_url}") };
        check_credential("Infobip", "api_key", self.api_key.expose())?;
        let mut info = AdapterInfo::new(NAME, capabilities())
            .support(Support {
                status: SupportStatus::Partial,
                notes: vec![
                    "Delivery reports and inbound messages are verified by Basic credentials or a URL token \
                     (Infobip does not sign them), which prove only that the caller knows that secret; \
                     InfobipWebhook returns every event of a batch (verify_all_at)."
                        .into(),
                ],
            })
            .provider_options(&OPTIONS);
        info.default_from = self.from;
        let transport = Transport::new(NAME, &base_url, SEND_PATH, vec![self.api_key.clone()], &self.http)?;
        info.endpoint = Some(transport.origin().to_owned());
        let authorization = Authorization::new(Secret::new(format!("App {}", self.api_key.expose())));
        Ok(Infobip { info, transport, authorization })
    }
}

impl Adapter for Infobip {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let id = message_id(message);
        let body = Body::Json(request_body(message, &id));
        let post = Post::new(&self.authorization, body, cx, message);
        self.transport.post(post, interpret).await
    }

    fn lookup(&self) -> Option<&dyn Lookup> {
        Some(self)
    }
}

impl fmt::Debug for Infobip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Infobip")
            .field("endpoint", &self.transport.origin())
            .field("default_from", &self.info.default_from)
            .field("authorization", &self.authorization)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for InfobipBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InfobipBuilder")
            .field("base_url", &crate::redact::redact_url(&self.base_url))
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builder_requires_the_account_base_url_and_a_sendable_key() {
        let infobip = Infobip::builder("https://xyz.api.infobip.com/", "key").build().unwrap();
        assert_eq!(infobip.info().endpoint.as_deref(), Some("https://xyz.api.infobip.com"));
        let bare = Infobip::builder("xyz.api.infobip.com", "key").build().unwrap();
        assert_eq!(bare.info().endpoint.as_deref(), Some("https://xyz.api.infobip.com"));
        for base in ["", "  ", "ftp://x", "https://"] {
            let error = Infobip::builder(base, "key").build().unwrap_err();
            assert_eq!(error.kind(), crate::ErrorKind::Configuration, "{base:?}");
        }
        assert!(Infobip::builder("https://x.api.infobip.com", "").build().is_err());
        assert!(Infobip::builder("https://x.api.infobip.com", "a b").build().is_err());
        assert_eq!(infobip.authorization.expose(), "App key");
    }

    #[test]
    fn debug_hides_the_key() {
        let infobip = Infobip::builder("https://u:p4ss@xyz.api.infobip.com", "secret-key-123").build().unwrap();
        let debug = format!("{infobip:?} {:?}", Infobip::builder("https://u:p4ss@x.api.infobip.com", "secret-key-123"));
        assert!(!debug.contains("secret-key-123") && !debug.contains("p4ss"), "{debug}");
        assert!(debug.contains("xyz.api.infobip.com"), "{debug}");
    }
}
