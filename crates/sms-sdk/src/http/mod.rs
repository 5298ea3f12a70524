//! The HTTP transport shared by the provider adapters (`post` here, `get` for lookups), the
//! client they go through (`client`), and the response rules they all follow (`response`).
//!
//! One pooled `reqwest` client per adapter (built in `client`), or one the caller configures
//! (`HttpConfig`) and shares; no redirects and no automatic retries of any kind: the client decides
//! every retry.
//!
//! How a failure is classified depends on whether the request could have left the machine:
//! - DNS resolution, connecting, a connect timeout or the TLS handshake failed: nothing was
//!   written, so the provider proved nothing was created: `Rejected(Unreachable)`.
//! - Anything after the connection was established (request written in part or whole, response
//!   lost, timeout while waiting, a body over [`MAX_RESPONSE_BODY`]): `Unknown`.
//!
//! The connect phase gets its own budget (10 s, or 90 % of the request timeout when that is
//! shorter), so a connect that hangs is reported as unreachable before the request timeout fires.
//! TLS early data is off, so no request byte travels during the handshake.

// Shared by the four provider features: a build with only some of them leaves some helpers unused.
#![cfg_attr(
    not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")),
    allow(dead_code, unused_imports)
)]

mod client;
mod get;
#[cfg(all(test, feature = "aws"))]
pub(crate) use self::get::FetchError;
#[cfg(feature = "aws")]
pub(crate) use self::get::fetch;
mod response;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use http::{HeaderMap, HeaderValue, header};
use serde_json::Value;

use crate::adapter::{Category, Outcome, Rejection, SendContext, Unknown, UnknownReason};

pub(crate) use self::client::Http;
pub use self::client::HttpConfig;
use self::client::{CONNECT_BUDGET, connect_budget};
pub(crate) use self::response::{ResponseBody, classify_response, header_str};
#[cfg(test)]
pub(crate) use self::response::{read_code, summary};
use crate::error::{Error, ProviderError};
use crate::message::OutboundMessage;
use crate::redact::Secret;

/// The largest provider response body read: 1 MiB. A longer one is `Unknown(MalformedResponse)`
/// (the request was sent).
pub(crate) const MAX_RESPONSE_BODY: usize = 1024 * 1024;
/// Needles shorter than this are not scrubbed from provider text (a two-letter body would
/// otherwise blank out ordinary words).
const MIN_SCRUBBED_LEN: usize = 6;

/// A request body, already encoded.
pub(crate) enum Body {
    /// `application/x-www-form-urlencoded`.
    Form(String),
    /// `application/json`.
    Json(Value),
    /// Bytes already encoded, of this content type (a body that is signed as sent).
    #[cfg_attr(not(feature = "aws"), allow(dead_code))]
    Raw {
        /// The `Content-Type`.
        content_type: &'static str,
        /// The exact bytes sent.
        bytes: Vec<u8>,
    },
}

/// One request to the provider.
pub(crate) struct Post<'a> {
    /// The `Authorization` header.
    pub(crate) authorization: &'a Authorization,
    /// The encoded body.
    pub(crate) body: Body,
    /// The request timeout (connect included).
    pub(crate) timeout: Duration,
    /// The message text: scrubbed from anything the provider sends back, as secrets are.
    pub(crate) text: &'a str,
    /// Headers beyond the authorization and the content type (a signed request's `x-amz-*`).
    pub(crate) headers: Vec<(header::HeaderName, HeaderValue)>,
}

impl<'a> Post<'a> {
    /// The request of `message` for attempt `cx`: its timeout, and its text to scrub.
    pub(crate) fn new(
        authorization: &'a Authorization,
        body: Body,
        cx: &'a SendContext,
        message: &'a OutboundMessage,
    ) -> Self {
        Self { authorization, body, timeout: cx.timeout, text: &message.body, headers: Vec::new() }
    }
}

/// An `Authorization` header value, prepared once (per adapter, or per request for a signed
/// token): the header marked sensitive, and its text, scrubbed from responses.
#[derive(Clone)]
pub(crate) struct Authorization {
    /// `None` when the text cannot be sent in a header (the builders refuse such credentials).
    header: Option<HeaderValue>,
    secret: Secret,
}

impl Authorization {
    /// The header for `value` (`Basic …`, `Bearer …`).
    pub(crate) fn new(value: Secret) -> Self {
        let header = HeaderValue::from_str(value.expose()).ok().map(|mut header| {
            header.set_sensitive(true);
            header
        });
        Self { header, secret: value }
    }

    /// The header's text.
    #[cfg(test)]
    pub(crate) fn expose(&self) -> &str {
        self.secret.expose()
    }
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.secret, f)
    }
}

/// A provider's HTTP endpoint and the pooled client that reaches it, for sends and lookups.
#[derive(Clone)]
pub(crate) struct Transport {
    provider: &'static str,
    http: Http,
    /// The URL every request goes to: the base URL and the adapter's path, parsed once.
    endpoint: url::Url,
    /// The base URL (no trailing slash) and the adapter's path under it, for lookups.
    base_url: Arc<str>,
    path: Arc<str>,
    origin: String,
    secrets: Arc<[Secret]>,
}

impl Transport {
    /// A transport posting to `path` under `base_url` (trailing slashes removed) through `http`,
    /// whose responses never carry any of `secrets` on to errors or records. HTTPS is the
    /// default; plain `http` is accepted for an explicit override (the emulator, a local proxy).
    pub(crate) fn new(
        provider: &'static str,
        base_url: &str,
        path: &str,
        secrets: Vec<Secret>,
        http: &HttpConfig,
    ) -> Result<Self, Error> {
        let base_url = base_url.trim_end_matches('/');
        let invalid = || Error::configuration(format!("The {provider} base URL must be an absolute http(s) URL."));
        let parsed = url::Url::parse(base_url).map_err(|_| invalid())?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid());
        }
        let endpoint = url::Url::parse(&format!("{base_url}{path}")).map_err(|_| invalid())?;
        let http = http.build(provider)?;
        let origin = parsed.origin().ascii_serialization();
        Ok(Self {
            provider,
            http,
            endpoint,
            base_url: base_url.into(),
            path: path.into(),
            origin,
            secrets: secrets.into(),
        })
    }

    /// The adapter's path under the base URL (the one it sends to).
    #[cfg_attr(not(any(feature = "twilio", feature = "plivo", feature = "telnyx")), allow(dead_code))]
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The endpoint requests go to: `scheme://host[:port]`, without credentials or path.
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// The `Host` header a request carries: the host, and the port when it is not the scheme's
    /// default (what a signature over the host covers).
    #[cfg_attr(not(feature = "aws"), allow(dead_code))]
    pub(crate) fn host_header(&self) -> String {
        let host = self.endpoint.host_str().unwrap_or_default();
        match self.endpoint.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        }
    }

    /// Sends `post` and classifies the response with `interpret`: a failure before the request
    /// could be written is `Rejected(Unreachable)`, any later transport failure
    /// `Unknown(Network)` (or `Timeout`).
    pub(crate) async fn post(
        &self,
        post: Post<'_>,
        interpret: impl FnOnce(u16, &HeaderMap, &[u8], SystemTime) -> Outcome,
    ) -> Outcome {
        let provider = self.provider;
        // Builders refuse credentials that cannot be sent; a custom one still never goes out blank.
        let Some(auth) = &post.authorization.header else {
            let details = ProviderError::new(provider).message("the credentials cannot be sent in a header");
            return Outcome::rejected(Category::Auth, details);
        };
        let Http { client, user_agent, connect_timeout, request_timeout } = &self.http;
        let mut request = client
            .post(self.endpoint.clone())
            .header(header::ACCEPT, HeaderValue::from_static("application/json"))
            .header(header::AUTHORIZATION, auth.clone());
        // A timeout set on a request costs reqwest a few allocations: only one that differs from
        // the client's own is set.
        if *request_timeout != Some(post.timeout) {
            request = request.timeout(post.timeout);
        }
        if let Some(user_agent) = user_agent {
            request = request.header(header::USER_AGENT, user_agent.clone());
        }
        for (name, value) in post.headers {
            request = request.header(name, value);
        }
        request = match post.body {
            Body::Raw { content_type, bytes } => {
                request.header(header::CONTENT_TYPE, HeaderValue::from_static(content_type)).body(bytes)
            }
            Body::Form(form) => request
                .header(header::CONTENT_TYPE, HeaderValue::from_static("application/x-www-form-urlencoded"))
                .body(form),
            Body::Json(json) => request
                .header(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(json.to_string()),
        };
        let started = std::time::Instant::now();
        let exchange = async {
            let mut response = request.send().await?;
            let body = read_capped(&mut response, MAX_RESPONSE_BODY).await?;
            Ok::<_, reqwest::Error>((response, body))
        };
        let result = CONNECT_BUDGET.scope(connect_budget(*connect_timeout, post.timeout), exchange).await;
        match result {
            Ok((response, Some(body))) => {
                let status = response.status().as_u16();
                tracing::debug!(provider, status, elapsed = ?started.elapsed(), "provider responded");
                let body = if (200..300).contains(&status) {
                    body
                } else {
                    self.scrub(body, &post.authorization.secret, post.text)
                };
                interpret(status, response.headers(), &body, SystemTime::now())
            }
            Ok((response, None)) => {
                let status = response.status().as_u16();
                tracing::debug!(provider, status, "provider response body over the limit");
                let details = ProviderError::new(provider)
                    .http_status(status)
                    .message(&format!("the response body is larger than {MAX_RESPONSE_BODY} bytes"));
                Outcome::Unknown(Unknown {
                    reason: UnknownReason::MalformedResponse,
                    details: Some(details),
                    cause: None,
                })
            }
            Err(error) => classify(provider, &error, started.elapsed()),
        }
    }

    /// `body` with every credential, the authorization header and the message text (and their
    /// form- and JSON-encoded forms) replaced by `***`, so that a provider or proxy that echoes the
    /// request cannot carry them into errors, logs or idempotency records.
    fn scrub(&self, body: Vec<u8>, authorization: &Secret, text: &str) -> Vec<u8> {
        let Ok(mut body) = String::from_utf8(body) else { return Vec::new() };
        let auth = authorization.expose();
        let credential = auth.split_once(' ').map_or(auth, |(_, value)| value);
        let needles = self.secrets.iter().map(Secret::expose).chain([auth, credential, text]);
        for needle in needles.filter(|n| n.chars().count() >= MIN_SCRUBBED_LEN) {
            for form in encodings(needle) {
                if body.contains(form.as_str()) {
                    body = body.replace(form.as_str(), "***");
                }
            }
        }
        body.into_bytes()
    }
}

/// `needle` as written, form-encoded and JSON-escaped (each once).
fn encodings(needle: &str) -> Vec<String> {
    let mut forms = vec![needle.to_owned()];
    let form: String = url::form_urlencoded::byte_serialize(needle.as_bytes()).collect();
    let json = serde_json::to_string(needle).unwrap_or_default();
    let json = json.strip_prefix('"').and_then(|j| j.strip_suffix('"')).unwrap_or_default().to_owned();
    for encoded in [form, json] {
        if !encoded.is_empty() && !forms.contains(&encoded) {
            forms.push(encoded);
        }
    }
    forms
}

/// How a transport failure is classified: before any byte was written it is `Unreachable`,
/// afterwards unknown. Never keeps reqwest's error text (it names the URL).
fn classify(provider: &'static str, error: &reqwest::Error, elapsed: Duration) -> Outcome {
    if error.is_connect() {
        let what = if error.is_timeout() { "the connection timed out" } else { "the connection failed" };
        tracing::debug!(provider, ?elapsed, what, "provider unreachable; nothing was sent");
        let details = ProviderError::new(provider).message(&format!("{what} before the request was sent"));
        return Outcome::Rejected(Rejection { category: Category::Unreachable, retry_after: None, details });
    }
    let reason = if error.is_timeout() { UnknownReason::Timeout } else { UnknownReason::Network };
    tracing::debug!(provider, ?reason, ?elapsed, "provider request failed");
    let cause = if error.is_timeout() { "request timed out" } else { "request failed" };
    Outcome::Unknown(Unknown { reason, details: None, cause: None }.with_cause(cause))
}

/// Reads the body, or `None` when it is longer than `limit` (by its length header or as read).
pub(super) async fn read_capped(
    response: &mut reqwest::Response,
    limit: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    /// The most reserved up front from a length header (the header is the provider's word).
    const MAX_RESERVED: usize = 64 * 1024;
    let length = response.content_length().map(|length| usize::try_from(length).unwrap_or(usize::MAX));
    if length.is_some_and(|length| length > limit) {
        return Ok(None);
    }
    let mut body = Vec::with_capacity(length.unwrap_or_default().min(MAX_RESERVED));
    while let Some(chunk) = response.chunk().await? {
        if body.len().saturating_add(chunk.len()) > limit {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport").field("origin", &self.origin).finish_non_exhaustive()
    }
}

/// Checks that a credential can be sent in a header: visible ASCII only (no space, newline or
/// control character). `field` names it in the configuration error.
pub(crate) fn check_credential(provider: &str, field: &str, value: &str) -> Result<(), Error> {
    if value.is_empty() {
        return Err(Error::configuration(format!("{provider} {field} is required.")));
    }
    if !value.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::configuration(format!(
            "{provider} {field} contains a character that cannot be sent in a header (space, newline, control or \
             non-ASCII character)."
        )));
    }
    Ok(())
}

/// `Basic base64(user:password)`.
pub(crate) fn basic_auth(user: &str, password: &str) -> Authorization {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    Authorization::new(Secret::new(format!("Basic {encoded}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_is_base64_of_user_and_password() {
        assert_eq!(basic_auth("key", "secret").expose(), "Basic a2V5OnNlY3JldA==");
        assert_eq!(format!("{:?}", basic_auth("key", "secret")), "***");
    }

    #[test]
    fn transport_needs_an_http_base_url() {
        assert!(Transport::new("x", "ftp://example.com", "/m", Vec::new(), &HttpConfig::new()).is_err());
        assert!(Transport::new("x", "not a url", "/m", Vec::new(), &HttpConfig::new()).is_err());
        assert!(Transport::new("x", "http://", "/m", Vec::new(), &HttpConfig::new()).is_err());
        let transport =
            Transport::new("x", "http://127.0.0.1:4010//", "/v1/m", Vec::new(), &HttpConfig::new()).unwrap();
        assert_eq!(transport.endpoint.as_str(), "http://127.0.0.1:4010/v1/m");
        assert_eq!(transport.origin(), "http://127.0.0.1:4010");
        let transport =
            Transport::new("x", "https://user:pass@Example.COM:443/proxy/", "/v1/m", Vec::new(), &HttpConfig::new())
                .unwrap();
        assert_eq!(transport.origin(), "https://example.com");
        assert_eq!(transport.endpoint.as_str(), "https://user:pass@example.com/proxy/v1/m");
        assert!(!format!("{transport:?}").contains("pass"));
    }

    #[test]
    fn building_a_transport_installs_no_process_wide_tls_provider() {
        let _ = Transport::new("x", "https://example.com", "/m", Vec::new(), &HttpConfig::new()).unwrap();
        assert!(rustls::crypto::CryptoProvider::get_default().is_none());
    }

    #[test]
    fn credentials_that_cannot_be_sent_are_configuration_errors_naming_the_field() {
        assert!(check_credential("Telnyx", "api_key", "KEY0123abc").is_ok());
        for bad in ["", "key\n", "key with space", "kéy", "key\u{7f}"] {
            let error = check_credential("Telnyx", "api_key", bad).unwrap_err();
            assert_eq!(error.kind(), crate::ErrorKind::Configuration);
            assert!(error.to_string().contains("Telnyx api_key"), "{error}");
            assert!(!error.to_string().contains(bad) || bad.is_empty(), "{error}");
        }
    }

    #[test]
    fn scrubbing_removes_secrets_the_header_and_the_text_in_every_encoding() {
        let transport =
            Transport::new("x", "http://127.0.0.1:1", "/m", vec![Secret::new("tok/en+secret")], &HttpConfig::new())
                .unwrap();
        let auth = basic_auth("AC1", "tok/en+secret");
        let encoded_auth = auth.expose().strip_prefix("Basic ").unwrap().to_owned();
        let text = "Your code is \"1234\" & more";
        let echoed = format!(
            "{{\"message\": \"tok/en+secret tok%2Fen%2Bsecret {encoded_auth} Your+code+is+%221234%22+%26+more \
             Your code is \\\"1234\\\" & more\"}}"
        );
        let scrubbed = String::from_utf8(transport.scrub(echoed.into_bytes(), &auth.secret, text)).unwrap();
        assert_eq!(scrubbed, r#"{"message": "*** *** *** *** ***"}"#);
        // Short texts are left alone: they would blank out ordinary words.
        let kept = transport.scrub(b"hi there".to_vec(), &auth.secret, "hi");
        assert_eq!(kept, b"hi there");
    }
}
