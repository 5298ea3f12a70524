//! Vonage (Messages API v1, SMS channel): support level `partial`.
//!
//! ```
//! use sms_sdk::provider::vonage::{Region, Vonage};
//!
//! let vonage = Vonage::basic("api-key", "api-secret").from("+15005550006").region(Region::Eu).build()?;
//! # let _ = vonage;
//! # Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! Requests are JSON `POST {base}/v1/messages`. Basic auth (API key and secret) cannot carry a
//! per-message webhook URL and gets no webhooks; an application (id and RSA private key) signs a
//! fresh RS256 JWT for every request. No short codes, no messaging services, no MMS, and the
//! body may never be empty.

mod lookup;
mod request;
mod response;
mod webhook;

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use serde_json::json;

use self::request::{OPTIONS, SUPPORT_NOTES, basic_capabilities, jwt_capabilities, request_body};
use self::response::interpret;
#[cfg(feature = "testing")]
pub(crate) use self::webhook::parse as parse_body;
pub use self::webhook::{VonageWebhook, sign_jwt};
use crate::HttpConfig;
use crate::adapter::{Adapter, AdapterInfo, Category, Outcome, SendContext, Support, SupportStatus};
use crate::error::{Error, ProviderError};
use crate::http::{Authorization, Body, Post, Transport, basic_auth, check_credential};
use crate::issue::{Field, Issue, IssueCode};
use crate::lookup::Lookup;
use crate::message::{OutboundMessage, Sender};
use crate::redact::Secret;

/// The adapter's name.
pub const NAME: &str = "vonage";

/// Wire facts and pure functions the emulator and the test suites share; not part of the stable
/// API, may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use super::request::{OPTIONS, SUPPORT_NOTES, basic_capabilities, jwt_capabilities, request_body};
    pub use super::response::{error_code, interpret, rejection_category};
    pub use super::webhook::verify_token;
}

const SIGNING_FAILED: &str = "The Vonage application JWT could not be signed.";

/// Vonage API hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Region {
    /// `https://api.nexmo.com` (the default).
    #[default]
    Global,
    /// `https://api-eu.nexmo.com`.
    Eu,
    /// `https://api-us.nexmo.com`.
    Us,
    /// `https://api-ap.nexmo.com`.
    Ap,
}

impl Region {
    /// The region's API origin.
    #[must_use]
    pub const fn base_url(self) -> &'static str {
        match self {
            Self::Global => "https://api.nexmo.com",
            Self::Eu => "https://api-eu.nexmo.com",
            Self::Us => "https://api-us.nexmo.com",
            Self::Ap => "https://api-ap.nexmo.com",
        }
    }
}

/// The Vonage adapter.
#[derive(Clone)]
pub struct Vonage {
    info: AdapterInfo,
    transport: Transport,
    auth: Auth,
}

#[derive(Clone)]
enum Auth {
    Basic(Authorization),
    /// An application id and its RSA key (checked when the adapter was built).
    Application {
        id: String,
        key: Arc<RsaKeyPair>,
    },
}

/// Builds a [`Vonage`] adapter.
#[must_use]
pub struct VonageBuilder {
    credentials: Credentials,
    from: Option<Sender>,
    base_url: Option<String>,
    region: Region,
    http: HttpConfig,
}

enum Credentials {
    Basic { api_key: String, api_secret: Secret },
    Application { id: String, private_key: Secret },
}

impl Vonage {
    /// An adapter authenticated with an API key and secret (Basic auth; no webhooks).
    pub fn basic(api_key: impl Into<String>, api_secret: impl Into<Secret>) -> VonageBuilder {
        VonageBuilder::new(Credentials::Basic { api_key: api_key.into(), api_secret: api_secret.into() })
    }

    /// An adapter authenticated as an application: its id and RSA private key (PKCS#8 PEM;
    /// literal `\n` sequences are read as newlines).
    pub fn application(application_id: impl Into<String>, private_key_pem: impl Into<Secret>) -> VonageBuilder {
        VonageBuilder::new(Credentials::Application { id: application_id.into(), private_key: private_key_pem.into() })
    }
}

impl VonageBuilder {
    fn new(credentials: Credentials) -> Self {
        Self { credentials, from: None, base_url: None, region: Region::Global, http: HttpConfig::new() }
    }

    /// The default sender (a number or an alphanumeric sender ID).
    pub fn from(mut self, sender: impl Into<Sender>) -> Self {
        self.from = Some(sender.into());
        self
    }

    /// The API region (ignored when a base URL is set).
    pub fn region(mut self, region: Region) -> Self {
        self.region = region;
        self
    }

    /// How the adapter reaches Vonage, for its sends and lookups: a client of your own (a proxy,
    /// one pool for several adapters), the connect timeout, the `User-Agent` ([`HttpConfig`]).
    pub fn http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }
    /// Replaces the region's origin (a proxy, the emulator, a test server).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// Checks the configuration and builds the adapter.
    ///
    /// # Errors
    /// `Configuration` for empty credentials or ones with a character that cannot be sent in a
    /// header, a private key that is not an RSA PKCS#8 PEM key, or a base URL that is not
    /// http(s).
    pub fn build(self) -> Result<Vonage, Error> {
        let (auth, capabilities, secrets) = match self.credentials {
            Credentials::Basic { api_key, api_secret } => {
                check_credential("Vonage", "api_key", &api_key)?;
                check_credential("Vonage", "api_secret", api_secret.expose())?;
                (Auth::Basic(basic_auth(&api_key, api_secret.expose())), basic_capabilities(), vec![api_secret])
            }
            Credentials::Application { id, private_key } => {
                check_credential("Vonage", "application_id", &id)?;
                let der = pem_to_der(private_key.expose())
                    .ok_or_else(|| Error::configuration("Vonage private_key must be a PKCS#8 PEM private key."))?;
                // A key that decodes but is not an RSA PKCS#8 key could never sign: refuse it now,
                // rather than as an authentication failure on every send.
                let key = RsaKeyPair::from_pkcs8(&der).map_err(|_| {
                    Error::configuration("Vonage private_key could not be imported as an RSA PKCS#8 private key.")
                })?;
                (Auth::Application { id, key: Arc::new(key) }, jwt_capabilities(), Vec::new())
            }
        };
        let notes = SUPPORT_NOTES.iter().map(|n| (*n).to_owned()).collect();
        let mut info = AdapterInfo::new(NAME, capabilities)
            .support(Support { status: SupportStatus::Partial, notes })
            .provider_options(&OPTIONS);
        info.default_from = self.from;
        let base_url = self.base_url.as_deref().unwrap_or(self.region.base_url());
        let transport = Transport::new(NAME, base_url, "/v1/messages", secrets, &self.http)?;
        info.endpoint = Some(transport.origin().to_owned());
        Ok(Vonage { info, transport, auth })
    }
}

/// Decodes a PEM private key: literal `\n` become newlines, the first BEGIN and END lines are
/// dropped, whitespace removed, and the rest read as (lenient) base64. `None` when nothing is left
/// or it is not base64.
fn pem_to_der(pem: &str) -> Option<Vec<u8>> {
    let text = without_first_marker(&without_first_marker(&pem.replace("\\n", "\n"), "-----BEGIN "), "-----END ");
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let standard = compact.replace('-', "+").replace('_', "/");
    let unpadded = standard.trim_end_matches('=');
    let valid = standard.len().saturating_sub(unpadded.len()) <= 2
        && unpadded.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    if compact.is_empty() || !valid {
        return None;
    }
    let forgiving = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    forgiving.decode(unpadded).ok()
}

/// `text` without the first `marker…-----` (a PEM BEGIN or END line).
fn without_first_marker(text: &str, marker: &str) -> String {
    let Some((before, rest)) = text.split_once(marker) else { return text.to_owned() };
    match rest.split_once("-----") {
        Some((_, after)) => format!("{before}{after}"),
        None => text.to_owned(),
    }
}

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A Vonage application JWT: RS256, claims `application_id`, `iat`, `jti`, `exp = iat + 900`.
fn application_jwt(application_id: &str, key: &RsaKeyPair, now: SystemTime, jti: &str) -> Option<String> {
    let iat = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let header = base64url(br#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = json!({"application_id": application_id, "iat": iat, "jti": jti, "exp": iat.saturating_add(900)});
    let signing_input = format!("{header}.{}", base64url(claims.to_string().as_bytes()));
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), signing_input.as_bytes(), &mut signature).ok()?;
    Some(format!("{signing_input}.{}", base64url(&signature)))
}

impl Adapter for Vonage {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let signed;
        let authorization = match &self.auth {
            Auth::Basic(header) => header,
            Auth::Application { id, key } => {
                let jti = crate::ids::uuid_v4().to_string();
                match application_jwt(id, key, SystemTime::now(), &jti) {
                    Some(jwt) => signed = Authorization::new(Secret::new(format!("Bearer {jwt}"))),
                    None => return Outcome::rejected(Category::Auth, ProviderError::new(NAME).message(SIGNING_FAILED)),
                }
                &signed
            }
        };
        let body = Body::Json(request_body(message));
        let post = Post::new(authorization, body, cx, message);
        self.transport.post(post, interpret).await
    }

    fn validate(&self, message: &OutboundMessage) -> Vec<Issue> {
        if message.body.is_empty() {
            return vec![Issue::new(IssueCode::EmptyBody, Field::Body, "Vonage needs a non-empty body.")];
        }
        Vec::new()
    }

    fn lookup(&self) -> Option<&dyn Lookup> {
        Some(self)
    }
}

impl fmt::Debug for Vonage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let auth = match &self.auth {
            Auth::Basic(_) => "basic",
            Auth::Application { .. } => "application",
        };
        f.debug_struct("Vonage")
            .field("endpoint", &self.transport.origin())
            .field("default_from", &self.info.default_from)
            .field("auth", &auth)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for VonageBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VonageBuilder")
            .field("region", &self.region)
            .field("base_url", &self.base_url.as_deref().map(crate::redact::redact_url))
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_decoding_is_lenient_about_layout_and_strict_about_content() {
        assert_eq!(pem_to_der("-----BEGIN PRIVATE KEY-----\\nAAAA\\n-----END PRIVATE KEY-----"), Some(vec![0, 0, 0]));
        assert_eq!(pem_to_der("-----BEGIN PRIVATE KEY-----\n\n-----END PRIVATE KEY-----"), None);
        assert_eq!(pem_to_der(""), None);
        assert_eq!(pem_to_der("not base64!"), None);
        assert_eq!(pem_to_der("short"), None);
    }
}
