//! Bandwidth (Messaging API v2): support level `supported`.
//!
//! ```
//! use sms_sdk::provider::bandwidth::Bandwidth;
//!
//! // HTTP Basic with an API user…
//! let basic = Bandwidth::basic("9900000", "93de2206-9669-4e07-948d-329f4b722ee2", "api-user", "api-password")
//!     .from("+15005550006")
//!     .build()?;
//! // …or OAuth 2.0 client credentials (the token is fetched before the first send and kept).
//! let oauth = Bandwidth::oauth2("9900000", "93de2206-9669-4e07-948d-329f4b722ee2", "client-id", "client-secret")
//!     .from("+15005550006")
//!     .build()?;
//! assert!(!format!("{basic:?} {oauth:?}").contains("client-secret"));
//! # Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! A message is a JSON `POST {base}/api/v2/users/{accountId}/messages` of one recipient, owned by
//! a Messaging application (`applicationId`, which also holds the callback URLs and their
//! credentials). The correlation reference travels as the message's `tag`, which Bandwidth
//! echoes in every callback of the message. Bandwidth has no idempotency header and no
//! scheduling, so a send whose outcome is unknown is settled by a lookup or a verified callback,
//! never by sending again.
//!
//! With OAuth 2.0, the access token comes from the token URL (`grant_type=client_credentials`, the
//! client id and secret as Basic) before a send, and is kept until shortly before its
//! `expires_in`. Its fetch counts against the attempt's timeout; when it fails or runs out of
//! time, the send is rejected with category `auth` before any message request: nothing was sent.
//!
//! Callbacks are verified and normalized by [`BandwidthWebhook`], which returns every event of
//! a callback (Bandwidth posts a JSON array) through
//! [`WebhookVerifier::verify_all_at`](crate::webhook::WebhookVerifier::verify_all_at).

mod lookup;
mod oauth;
mod request;
mod response;
mod webhook;

use std::fmt;
use std::sync::Arc;

use time::OffsetDateTime;

pub use self::oauth::DEFAULT_TOKEN_URL;
use self::oauth::TokenSource;
use self::request::{OPTIONS, capabilities, request_body};
use self::response::interpret;
#[cfg(feature = "testing")]
pub(crate) use self::webhook::parse as parse_body;
pub use self::webhook::{BandwidthWebhook, MAX_EVENTS, WWW_AUTHENTICATE};
use crate::HttpConfig;
use crate::adapter::{Adapter, AdapterInfo, Category, Outcome, SendContext, Support, SupportStatus};
use crate::error::{Error, ProviderError};
use crate::http::{Authorization, Body, Post, Transport, basic_auth, check_credential};
use crate::lookup::{Lookup, is_plain_id};
use crate::message::{OutboundMessage, Sender};
use crate::redact::Secret;

/// The adapter's name.
pub const NAME: &str = "bandwidth";

/// Bandwidth's messaging API origin.
pub const DEFAULT_BASE_URL: &str = "https://messaging.bandwidth.com";

/// Wire facts and pure functions the emulator and the test suites share; not part of the stable
/// API, may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use super::request::{
        MAX_TAG_CHARS, MAX_VALIDITY_SECS, MIN_VALIDITY_SECS, OPTIONS, capabilities, request_body,
    };
    pub use super::response::{interpret, rejection_category};
    pub use super::webhook::basic_header;
}

/// How the adapter authenticates its requests.
#[derive(Clone)]
enum Auth {
    /// An API user's `Basic` header.
    Basic(Authorization),
    /// OAuth 2.0 client credentials, their token fetched and kept.
    OAuth2(Arc<TokenSource>),
}

/// The Bandwidth adapter.
#[derive(Clone)]
pub struct Bandwidth {
    info: AdapterInfo,
    transport: Transport,
    auth: Auth,
    application_id: String,
}

/// The credentials a builder was given.
enum Credentials {
    Basic { user: String, password: Secret },
    OAuth2 { client_id: String, client_secret: Secret },
}

/// Builds a [`Bandwidth`] adapter.
#[must_use]
pub struct BandwidthBuilder {
    account_id: String,
    application_id: String,
    credentials: Credentials,
    from: Option<Sender>,
    base_url: Option<String>,
    token_url: Option<String>,
    http: HttpConfig,
}

impl Bandwidth {
    /// An adapter for account `account_id` sending through the Messaging application
    /// `application_id`, authenticated with an API user's credentials (HTTP Basic).
    pub fn basic(
        account_id: impl Into<String>,
        application_id: impl Into<String>,
        user: impl Into<String>,
        password: impl Into<Secret>,
    ) -> BandwidthBuilder {
        BandwidthBuilder::new(
            account_id.into(),
            application_id.into(),
            Credentials::Basic { user: user.into(), password: password.into() },
        )
    }

    /// An adapter for account `account_id` sending through the Messaging application
    /// `application_id`, authenticated with OAuth 2.0 client credentials (a token fetched from
    /// [`DEFAULT_TOKEN_URL`], or [`BandwidthBuilder::token_url`]).
    pub fn oauth2(
        account_id: impl Into<String>,
        application_id: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<Secret>,
    ) -> BandwidthBuilder {
        BandwidthBuilder::new(
            account_id.into(),
            application_id.into(),
            Credentials::OAuth2 { client_id: client_id.into(), client_secret: client_secret.into() },
        )
    }
}

impl BandwidthBuilder {
    fn new(account_id: String, application_id: String, credentials: Credentials) -> Self {
        Self {
            account_id,
            application_id,
            credentials,
            from: None,
            base_url: None,
            token_url: None,
            http: HttpConfig::new(),
        }
    }

    /// The default sender (a Bandwidth number on the account, or an alphanumeric sender ID).
    pub fn from(mut self, sender: impl Into<Sender>) -> Self {
        self.from = Some(sender.into());
        self
    }

    /// How the adapter reaches Bandwidth, for its sends, lookups and token requests: a client
    /// of your own, the connect timeout, the `User-Agent` ([`HttpConfig`]).
    pub fn http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }

    /// Replaces [`DEFAULT_BASE_URL`] (the emulator, a proxy, tests).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// Replaces [`DEFAULT_TOKEN_URL`] for OAuth 2.0 (tests, a proxy); ignored with Basic
    /// credentials.
    pub fn token_url(mut self, token_url: impl Into<String>) -> Self {
        self.token_url = Some(token_url.into());
        self
    }

    /// Checks the configuration and builds the adapter.
    ///
    /// # Errors
    /// `Configuration` when the account id or application id is not 1 to 64 letters, digits,
    /// `-` or `_` (the account id goes into the request's path), a credential is empty or holds
    /// a character that cannot be sent in a header (a user or client id with `:` included), or
    /// the base or token URL is not http(s).
    pub fn build(self) -> Result<Bandwidth, Error> {
        if !is_plain_id(&self.account_id) {
            return Err(Error::configuration("The Bandwidth account id must be 1 to 64 letters, digits, '-' or '_'."));
        }
        if !is_plain_id(&self.application_id) {
            return Err(Error::configuration(
                "The Bandwidth application id must be 1 to 64 letters, digits, '-' or '_'.",
            ));
        }
        let base_url = self.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL);
        let path = format!("/api/v2/users/{}/messages", self.account_id);
        let (auth, secrets) = match &self.credentials {
            Credentials::Basic { user, password } => {
                check_id("user", user)?;
                check_credential("Bandwidth", "password", password.expose())?;
                (Auth::Basic(basic_auth(user, password.expose())), vec![password.clone()])
            }
            Credentials::OAuth2 { client_id, client_secret } => {
                check_id("client_id", client_id)?;
                check_credential("Bandwidth", "client_secret", client_secret.expose())?;
                let token_url = self.token_url.as_deref().unwrap_or(DEFAULT_TOKEN_URL);
                let source = TokenSource::new(NAME, token_url, client_id, client_secret, &self.http)?;
                (Auth::OAuth2(Arc::new(source)), vec![client_secret.clone()])
            }
        };
        let transport = Transport::new(NAME, base_url, &path, secrets, &self.http)?;
        let mut info = AdapterInfo::new(NAME, capabilities())
            .support(Support { status: SupportStatus::Supported, notes: Vec::new() })
            .provider_options(&OPTIONS);
        info.default_from = self.from;
        info.endpoint = Some(transport.origin().to_owned());
        Ok(Bandwidth { info, transport, auth, application_id: self.application_id })
    }
}

/// A user or client id: sendable in a header, and without the `:` that ends it in Basic.
fn check_id(field: &str, value: &str) -> Result<(), Error> {
    check_credential("Bandwidth", field, value)?;
    if value.contains(':') {
        return Err(Error::configuration(format!("The Bandwidth {field} cannot contain ':'.")));
    }
    Ok(())
}

impl Bandwidth {
    /// The `Authorization` for a request within `timeout`, and the time left of it: Basic at
    /// once, or an OAuth 2.0 token (kept, or fetched within the timeout).
    async fn authorization(
        &self,
        timeout: std::time::Duration,
    ) -> Result<(Authorization, std::time::Duration), String> {
        match &self.auth {
            Auth::Basic(authorization) => Ok((authorization.clone(), timeout)),
            Auth::OAuth2(source) => {
                let started = tokio::time::Instant::now();
                let token = match tokio::time::timeout(timeout, source.authorization(timeout)).await {
                    Ok(Ok(token)) => token,
                    Ok(Err(error)) => return Err(error.describe()),
                    Err(_) => return Err("the OAuth2 token request timed out; nothing was sent".to_owned()),
                };
                let left = timeout.saturating_sub(started.elapsed());
                if left < std::time::Duration::from_millis(1) {
                    return Err("no time was left after the OAuth2 token request; nothing was sent".to_owned());
                }
                Ok((token, left))
            }
        }
    }
}

impl Adapter for Bandwidth {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let (authorization, left) = match self.authorization(cx.timeout).await {
            Ok(found) => found,
            Err(why) => return Outcome::rejected(Category::Auth, ProviderError::new(NAME).message(&why)),
        };
        let body = Body::Json(request_body(message, &self.application_id, OffsetDateTime::now_utc()));
        let mut post = Post::new(&authorization, body, cx, message);
        post.timeout = left;
        let outcome = self.transport.post(post, interpret).await;
        // A token Bandwidth refuses (revoked, expired early) is not used again.
        if let (Auth::OAuth2(source), Outcome::Rejected(rejection)) = (&self.auth, &outcome)
            && rejection.category == Category::Auth
        {
            source.forget();
        }
        outcome
    }

    fn lookup(&self) -> Option<&dyn Lookup> {
        Some(self)
    }
}

impl fmt::Debug for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("Bandwidth");
        debug
            .field("endpoint", &self.transport.origin())
            .field("path", &self.transport.path())
            .field("application_id", &self.application_id)
            .field("default_from", &self.info.default_from);
        match &self.auth {
            Auth::Basic(authorization) => debug.field("basic", authorization),
            Auth::OAuth2(source) => debug.field("oauth2_token_url", &source.origin()),
        };
        debug.finish_non_exhaustive()
    }
}

impl fmt::Debug for BandwidthBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let credentials = match &self.credentials {
            Credentials::Basic { .. } => "basic",
            Credentials::OAuth2 { .. } => "oauth2",
        };
        f.debug_struct("BandwidthBuilder")
            .field("account_id", &self.account_id)
            .field("application_id", &self.application_id)
            .field("credentials", &credentials)
            .field("base_url", &self.base_url.as_deref().map(crate::redact::redact_url))
            .field("token_url", &self.token_url.as_deref().map(crate::redact::redact_url))
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builder_checks_what_goes_into_the_path_and_the_header() {
        assert!(Bandwidth::basic("9900000", "app-1", "user", "pass").build().is_ok());
        assert!(Bandwidth::oauth2("9900000", "app-1", "client", "secret").build().is_ok());
        for account in ["../x", "a/b", "a?b", ""] {
            let error = Bandwidth::basic(account, "app", "user", "pass").build().unwrap_err();
            assert!(error.to_string().contains("account id"), "{account}: {error}");
        }
        assert!(Bandwidth::basic("1", "", "user", "pass").build().is_err());
        assert!(Bandwidth::basic("1", "a/b", "user", "pass").build().is_err());
        assert!(Bandwidth::basic("1", "app", "", "pass").build().is_err());
        assert!(Bandwidth::basic("1", "app", "us:er", "pass").build().is_err());
        assert!(Bandwidth::basic("1", "app", "user", "").build().is_err());
        assert!(Bandwidth::basic("1", "app", "user", "a\nb").build().is_err());
        assert!(Bandwidth::oauth2("1", "app", "client", "").build().is_err());
        assert!(Bandwidth::oauth2("1", "app", "cli:ent", "secret").build().is_err());
        assert!(Bandwidth::oauth2("1", "app", "client", "secret").token_url("ftp://x").build().is_err());
        let bandwidth = Bandwidth::basic("9900000", "app", "user", "pass").build().unwrap();
        assert_eq!(bandwidth.info().endpoint.as_deref(), Some(DEFAULT_BASE_URL));
    }

    #[test]
    fn debug_hides_the_credentials() {
        let basic = Bandwidth::basic("9900000", "app", "user", "secret-password-123").build().unwrap();
        let oauth = Bandwidth::oauth2("9900000", "app", "client", "secret-client-456").build().unwrap();
        let debug = format!(
            "{basic:?} {oauth:?} {:?} {:?}",
            Bandwidth::basic("9900000", "app", "user", "secret-password-123"),
            Bandwidth::oauth2("9900000", "app", "client", "secret-client-456")
        );
        assert!(!debug.contains("secret-password-123") && !debug.contains("secret-client-456"), "{debug}");
        assert!(debug.contains("/api/v2/users/9900000/messages"), "{debug}");
    }
}
