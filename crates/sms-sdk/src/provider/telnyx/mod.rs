//! Telnyx (Messaging API v2): support level `supported`.
//!
//! ```
//! use sms_sdk::provider::telnyx::Telnyx;
//!
//! let telnyx = Telnyx::builder("KEY0123456789ABCDEF").from("+15005550006").messaging_profile_id("profile-1").build()?;
//! # let _ = telnyx;
//! # Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! Requests are JSON `POST {base}/v2/messages` with `Authorization: Bearer <api key>`. A
//! messaging-service sender is a messaging profile id (sent without `from`); alphanumeric senders
//! need the adapter's messaging profile. No validity period.

mod lookup;
mod request;
mod response;
mod webhook;

use std::fmt;

use self::request::{OPTIONS, capabilities, request_body};
use self::response::interpret;
#[cfg(feature = "testing")]
pub(crate) use self::webhook::parse as parse_body;
pub use self::webhook::{TelnyxWebhook, signed_payload};
use crate::HttpConfig;
use crate::adapter::{Adapter, AdapterInfo, Outcome, SendContext, Support, SupportStatus};
use crate::error::Error;
use crate::http::{Authorization, Body, Post, Transport, check_credential};
use crate::issue::{Field, Issue, IssueCode};
use crate::lookup::Lookup;
use crate::message::{OutboundMessage, Sender, SenderKind};
use crate::redact::Secret;

/// The adapter's name.
pub const NAME: &str = "telnyx";
/// Telnyx's production API origin.
pub const DEFAULT_BASE_URL: &str = "https://api.telnyx.com";

/// Wire facts and pure functions the emulator and the test suites share; not part of the stable
/// API, may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use super::request::{OPTIONS, capabilities, request_body};
    pub use super::response::{delivery, interpret, rejection_category};
    pub use super::webhook::verify_signature;
}

/// The Telnyx adapter.
#[derive(Clone)]
pub struct Telnyx {
    info: AdapterInfo,
    transport: Transport,
    messaging_profile_id: Option<String>,
    authorization: Authorization,
}

/// Builds a [`Telnyx`] adapter.
#[must_use]
pub struct TelnyxBuilder {
    api_key: Secret,
    from: Option<Sender>,
    messaging_profile_id: Option<String>,
    base_url: String,
    http: HttpConfig,
}

impl Telnyx {
    /// An adapter authenticated with `api_key`.
    pub fn builder(api_key: impl Into<Secret>) -> TelnyxBuilder {
        TelnyxBuilder {
            api_key: api_key.into(),
            from: None,
            messaging_profile_id: None,
            base_url: DEFAULT_BASE_URL.into(),
            http: HttpConfig::new(),
        }
    }
}

impl TelnyxBuilder {
    /// The default sender.
    pub fn from(mut self, sender: impl Into<Sender>) -> Self {
        self.from = Some(sender.into());
        self
    }

    /// The messaging profile sent with every non-profile sender (needed for alphanumeric IDs).
    pub fn messaging_profile_id(mut self, id: impl Into<String>) -> Self {
        self.messaging_profile_id = Some(id.into());
        self
    }

    /// How the adapter reaches Telnyx, for its sends and lookups: a client of your own (a proxy,
    /// one pool for several adapters), the connect timeout, the `User-Agent` ([`HttpConfig`]).
    pub fn http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }
    /// Replaces `https://api.telnyx.com`.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Checks the configuration and builds the adapter.
    ///
    /// # Errors
    /// `Configuration` when the API key is empty or holds a character that cannot be sent in a
    /// header, or the base URL is not http(s).
    pub fn build(self) -> Result<Telnyx, Error> {
        check_credential("Telnyx", "api_key", self.api_key.expose())?;
        let mut info = AdapterInfo::new(NAME, capabilities())
            .support(Support { status: SupportStatus::Supported, notes: Vec::new() })
            .provider_options(&OPTIONS);
        info.default_from = self.from;
        let transport = Transport::new(NAME, &self.base_url, "/v2/messages", vec![self.api_key.clone()], &self.http)?;
        info.endpoint = Some(transport.origin().to_owned());
        Ok(Telnyx {
            info,
            transport,
            messaging_profile_id: self.messaging_profile_id.filter(|id| !id.is_empty()),
            authorization: Authorization::new(Secret::new(format!("Bearer {}", self.api_key.expose()))),
        })
    }
}

impl Adapter for Telnyx {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let body = Body::Json(request_body(message, self.messaging_profile_id.as_deref()));
        let post = Post::new(&self.authorization, body, cx, message);
        self.transport.post(post, interpret).await
    }

    fn validate(&self, message: &OutboundMessage) -> Vec<Issue> {
        if message.from.kind == SenderKind::Alphanumeric && self.messaging_profile_id.is_none() {
            return vec![Issue::new(
                IssueCode::InvalidSender,
                Field::From,
                "Telnyx sends from an alphanumeric sender ID only with a messaging profile.",
            )];
        }
        Vec::new()
    }

    fn lookup(&self) -> Option<&dyn Lookup> {
        Some(self)
    }
}

impl fmt::Debug for Telnyx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Telnyx")
            .field("endpoint", &self.transport.origin())
            .field("default_from", &self.info.default_from)
            .field("messaging_profile_id", &self.messaging_profile_id)
            .field("authorization", &self.authorization)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for TelnyxBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TelnyxBuilder")
            .field("base_url", &crate::redact::redact_url(&self.base_url))
            .field("from", &self.from)
            .field("messaging_profile_id", &self.messaging_profile_id)
            .finish_non_exhaustive()
    }
}
