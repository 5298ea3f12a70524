//! Plivo (Message API v1): support level `partial`.
//!
//! ```
//! use sms_sdk::provider::plivo::Plivo;
//!
//! let plivo = Plivo::builder("MAXXXXXXXXXXXXXXXXXX", "auth-token").from("+15005550006").build()?;
//! # let _ = plivo;
//! # Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! Requests are JSON `POST {base}/v1/Account/{auth_id}/Message/` with Basic auth. Plivo does not
//! document its error bodies, so only 401 (`Auth`) and a 429 carrying `api_id` (`RateLimited`)
//! are classified; every other 4xx is `Request` and never fails over.

mod lookup;
mod request;
mod response;
mod webhook;

use std::fmt;

use self::request::{OPTIONS, SUPPORT_NOTES, capabilities, request_body};
use self::response::interpret;
#[cfg(feature = "testing")]
pub(crate) use self::webhook::parse as parse_fields;
pub use self::webhook::{PlivoWebhook, signature_v2, signature_v3};
use crate::HttpConfig;
use crate::adapter::{Adapter, AdapterInfo, Outcome, SendContext, Support, SupportStatus};
use crate::error::Error;
use crate::http::{Authorization, Body, Post, Transport, basic_auth, check_credential};
use crate::lookup::Lookup;
use crate::message::{OutboundMessage, Sender};
use crate::redact::Secret;

/// The adapter's name.
pub const NAME: &str = "plivo";
/// Plivo's production API origin.
pub const DEFAULT_BASE_URL: &str = "https://api.plivo.com";

/// Wire facts and pure functions the emulator and the test suites share; not part of the stable
/// API, may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use super::request::{OPTIONS, SUPPORT_NOTES, capabilities, request_body};
    pub use super::response::{interpret, rejection_category};
    pub use super::webhook::v3_string;
}

/// The Plivo adapter.
#[derive(Clone)]
pub struct Plivo {
    info: AdapterInfo,
    transport: Transport,
    authorization: Authorization,
}

/// Builds a [`Plivo`] adapter.
#[must_use]
pub struct PlivoBuilder {
    auth_id: String,
    auth_token: Secret,
    from: Option<Sender>,
    base_url: String,
    http: HttpConfig,
}

impl Plivo {
    /// An adapter for `auth_id` authenticated with `auth_token`.
    pub fn builder(auth_id: impl Into<String>, auth_token: impl Into<Secret>) -> PlivoBuilder {
        PlivoBuilder {
            auth_id: auth_id.into(),
            auth_token: auth_token.into(),
            from: None,
            base_url: DEFAULT_BASE_URL.into(),
            http: HttpConfig::new(),
        }
    }
}

impl PlivoBuilder {
    /// The default sender (a number, short code, sender ID, or a Powerpack UUID as a messaging
    /// service).
    pub fn from(mut self, sender: impl Into<Sender>) -> Self {
        self.from = Some(sender.into());
        self
    }

    /// How the adapter reaches Plivo, for its sends and lookups: a client of your own (a proxy,
    /// one pool for several adapters), the connect timeout, the `User-Agent` ([`HttpConfig`]).
    pub fn http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }
    /// Replaces `https://api.plivo.com`.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Checks the configuration and builds the adapter.
    ///
    /// # Errors
    /// `Configuration` when the auth id or token is empty or holds a character that cannot be
    /// sent in a header, or the base URL is not http(s).
    pub fn build(self) -> Result<Plivo, Error> {
        check_credential("Plivo", "auth_id", &self.auth_id)?;
        check_credential("Plivo", "auth_token", self.auth_token.expose())?;
        let notes = SUPPORT_NOTES.iter().map(|n| (*n).to_owned()).collect();
        let mut info = AdapterInfo::new(NAME, capabilities())
            .support(Support { status: SupportStatus::Partial, notes })
            .provider_options(&OPTIONS);
        info.default_from = self.from;
        let encoded_id: String = url::form_urlencoded::byte_serialize(self.auth_id.as_bytes()).collect();
        let path = format!("/v1/Account/{}/Message/", encoded_id.replace('+', "%20"));
        let transport = Transport::new(NAME, &self.base_url, &path, vec![self.auth_token.clone()], &self.http)?;
        info.endpoint = Some(transport.origin().to_owned());
        Ok(Plivo { info, transport, authorization: basic_auth(&self.auth_id, self.auth_token.expose()) })
    }
}

impl Adapter for Plivo {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let body = Body::Json(request_body(message));
        let post = Post::new(&self.authorization, body, cx, message);
        self.transport.post(post, interpret).await
    }

    fn lookup(&self) -> Option<&dyn Lookup> {
        Some(self)
    }
}

impl fmt::Debug for Plivo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plivo")
            .field("endpoint", &self.transport.origin())
            .field("default_from", &self.info.default_from)
            .field("authorization", &self.authorization)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for PlivoBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PlivoBuilder")
            .field("base_url", &crate::redact::redact_url(&self.base_url))
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}
