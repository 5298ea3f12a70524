//! Twilio (Programmable Messaging, API `2010-04-01`): support level `supported`.
//!
//! ```
//! use sms_sdk::provider::twilio::Twilio;
//!
//! let twilio = Twilio::builder("AC0123456789abcdef0123456789abcdef", "auth-token")
//!     .from("+15005550006")
//!     .build()?;
//! # let _ = twilio;
//! # Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! Requests are form-encoded `POST {base}/2010-04-01/Accounts/{AccountSid}/Messages.json` with
//! Basic auth (`AccountSid:AuthToken`, or `ApiKeySid:ApiKeySecret`). Scheduling (`send_at`) and
//! `shortenUrls` need a Messaging Service sender (`MG…`).

mod lookup;
mod request;
mod response;
mod webhook;

use std::fmt;

use self::request::{MAX_BODY_UNITS, MAX_MEDIA, OPTIONS, capabilities, form_body};
use self::response::interpret;
#[cfg(feature = "testing")]
pub(crate) use self::webhook::parse as parse_fields;
pub use self::webhook::{TwilioWebhook, signature};
use crate::HttpConfig;
use crate::adapter::{Adapter, AdapterInfo, Outcome, SendContext, Support, SupportStatus};
use crate::error::Error;
use crate::http::{Authorization, Body, Post, Transport, basic_auth, check_credential};
use crate::issue::{Field, Issue, IssueCode};
use crate::lookup::Lookup;
use crate::message::{OutboundMessage, Sender, SenderKind};
use crate::provider::is_prefixed_hex32;
use crate::redact::Secret;

/// The adapter's name.
pub const NAME: &str = "twilio";
/// Twilio's production API origin.
pub const DEFAULT_BASE_URL: &str = "https://api.twilio.com";

/// Wire facts and pure functions the emulator and the test suites share; not part of the stable
/// API, may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use super::request::{MAX_BODY_UNITS, MAX_MEDIA, OPTIONS, capabilities, form_body};
    pub use super::response::{delivery, interpret, rejection_category};
    pub use super::webhook::url_variants;
}

/// The Twilio adapter. Cheap to clone (the HTTP client is pooled and shared).
#[derive(Clone)]
pub struct Twilio {
    info: AdapterInfo,
    transport: Transport,
    authorization: Authorization,
}

/// Builds a [`Twilio`] adapter; [`TwilioBuilder::build`] checks the configuration.
#[must_use]
pub struct TwilioBuilder {
    account_sid: String,
    credentials: Credentials,
    from: Option<Sender>,
    base_url: String,
    http: HttpConfig,
}

enum Credentials {
    AuthToken(Secret),
    ApiKey { sid: String, secret: Secret },
}

impl Twilio {
    /// An adapter for `account_sid` authenticated with the account's auth token.
    pub fn builder(account_sid: impl Into<String>, auth_token: impl Into<Secret>) -> TwilioBuilder {
        TwilioBuilder::new(account_sid.into(), Credentials::AuthToken(auth_token.into()))
    }

    /// An adapter for `account_sid` authenticated with an API key pair.
    pub fn with_api_key(
        account_sid: impl Into<String>,
        api_key_sid: impl Into<String>,
        api_key_secret: impl Into<Secret>,
    ) -> TwilioBuilder {
        let credentials = Credentials::ApiKey { sid: api_key_sid.into(), secret: api_key_secret.into() };
        TwilioBuilder::new(account_sid.into(), credentials)
    }
}

impl TwilioBuilder {
    fn new(account_sid: String, credentials: Credentials) -> Self {
        Self { account_sid, credentials, from: None, base_url: DEFAULT_BASE_URL.to_owned(), http: HttpConfig::new() }
    }

    /// The default sender: a number, a short code, a sender ID or a Messaging Service SID.
    pub fn from(mut self, sender: impl Into<Sender>) -> Self {
        self.from = Some(sender.into());
        self
    }

    /// How the adapter reaches Twilio, for its sends and lookups: a client of your own (a proxy,
    /// one pool for several adapters), the connect timeout, the `User-Agent` ([`HttpConfig`]).
    pub fn http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }
    /// Replaces `https://api.twilio.com` (a proxy, the emulator, a test server).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Checks the configuration and builds the adapter. Makes no request.
    ///
    /// # Errors
    /// `Configuration` when the account SID is not `AC` + 32 hex characters, a credential is
    /// empty or holds a character that cannot be sent in a header, or the base URL is not an
    /// absolute http(s) URL.
    pub fn build(self) -> Result<Twilio, Error> {
        if self.account_sid.is_empty() {
            return Err(Error::configuration("Twilio account_sid is required."));
        }
        if !is_prefixed_hex32(&self.account_sid, "AC") {
            return Err(Error::configuration("Twilio account_sid must be AC followed by 32 hex characters."));
        }
        let (authorization, secrets) = match &self.credentials {
            Credentials::AuthToken(token) => {
                check_credential("Twilio", "auth_token", token.expose())?;
                (basic_auth(&self.account_sid, token.expose()), vec![token.clone()])
            }
            Credentials::ApiKey { sid, secret } => {
                check_credential("Twilio", "api_key_sid", sid)?;
                check_credential("Twilio", "api_key_secret", secret.expose())?;
                (basic_auth(sid, secret.expose()), vec![secret.clone()])
            }
        };
        let mut info = AdapterInfo::new(NAME, capabilities())
            .support(Support { status: SupportStatus::Supported, notes: Vec::new() })
            .provider_options(&OPTIONS);
        info.default_from = self.from;
        let path = format!("/2010-04-01/Accounts/{}/Messages.json", self.account_sid);
        let transport = Transport::new(NAME, &self.base_url, &path, secrets, &self.http)?;
        info.endpoint = Some(transport.origin().to_owned());
        Ok(Twilio { info, transport, authorization })
    }
}

impl Adapter for Twilio {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let body = Body::Form(form_body(message));
        let post = Post::new(&self.authorization, body, cx, message);
        self.transport.post(post, interpret).await
    }

    fn validate(&self, message: &OutboundMessage) -> Vec<Issue> {
        let mut issues = Vec::new();
        let messaging_service = message.from.kind == SenderKind::MessagingService;
        if messaging_service && !is_prefixed_hex32(&message.from.value, "MG") {
            issues.push(Issue::new(
                IssueCode::InvalidSender,
                Field::From,
                "Twilio Messaging Service SIDs are MG followed by 32 hex characters.",
            ));
        }
        if message.send_at.is_some() && !messaging_service {
            issues.push(Issue::new(
                IssueCode::UnsupportedField,
                Field::SendAt,
                "Twilio schedules messages only from a Messaging Service sender.",
            ));
        }
        let shortens = message.provider_fields.iter().any(|f| f.wire == "ShortenUrls" && f.value == true);
        if shortens && !messaging_service {
            issues.push(Issue::new(
                IssueCode::UnsupportedField,
                Field::ProviderOptions,
                "Twilio shortenUrls needs a Messaging Service sender.",
            ));
        }
        if message.body.encode_utf16().count() > MAX_BODY_UNITS {
            issues.push(Issue::new(IssueCode::InvalidField, Field::Body, "Twilio bodies are at most 1600 characters."));
        }
        if message.media_urls.len() > MAX_MEDIA {
            issues.push(Issue::new(
                IssueCode::InvalidField,
                Field::MediaUrls,
                "Twilio accepts at most 10 media URLs per message.",
            ));
        }
        issues
    }

    fn lookup(&self) -> Option<&dyn Lookup> {
        Some(self)
    }
}

impl fmt::Debug for Twilio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Twilio")
            .field("endpoint", &self.transport.origin())
            .field("default_from", &self.info.default_from)
            .field("authorization", &self.authorization)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for TwilioBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TwilioBuilder")
            .field("base_url", &crate::redact::redact_url(&self.base_url))
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}
