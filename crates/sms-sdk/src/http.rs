//! The HTTP transport shared by the provider adapters, and the response rules they all follow.
//!
//! One pooled `reqwest` client per adapter (built in `transport`), or the one the client shares
//! with all its adapters; no redirects and no automatic retries of any kind: the client decides
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
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

mod get;

use std::fmt;
use std::sync::Arc;

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use http::{HeaderMap, HeaderValue, header};
use serde_json::Value;

use crate::adapter::{Accepted, Category, Outcome, Rejection, SendContext, Unknown, UnknownReason};

use crate::error::{Error, ProviderError};
use crate::message::OutboundMessage;
use crate::redact::Secret;
use crate::retry::parse_retry_after;
use crate::transport::{CONNECT_BUDGET, CONNECT_TIMEOUT, SharedHttp, USER_AGENT, connect_budget, http_client};

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
}

/// One request to the provider.
pub(crate) struct Post<'a> {
    /// The path after the base URL.
    pub(crate) path: &'a str,
    /// The `Authorization` header value.
    pub(crate) authorization: &'a Secret,
    /// The encoded body.
    pub(crate) body: Body,
    /// The request timeout (connect included).
    pub(crate) timeout: Duration,
    /// The message text: scrubbed from anything the provider sends back, as secrets are.
    pub(crate) text: &'a str,
    /// The client's shared transport, when it has one.
    pub(crate) shared: Option<&'a SharedHttp>,
}

impl<'a> Post<'a> {
    /// The request of `message` for attempt `cx`: its timeout, and its text to scrub.
    pub(crate) fn new(
        path: &'a str,
        authorization: &'a Secret,
        body: Body,
        cx: &'a SendContext,
        message: &'a OutboundMessage,
    ) -> Self {
        Self { path, authorization, body, timeout: cx.timeout, text: &message.body, shared: cx.http.as_ref() }
    }
}

/// A provider's HTTP endpoint and the pooled client that reaches it.
#[derive(Clone)]
pub(crate) struct Transport {
    provider: &'static str,
    client: reqwest::Client,
    base_url: String,
    origin: String,
    secrets: Arc<[Secret]>,
}

impl Transport {
    /// A transport to `base_url` (trailing slashes removed) whose responses never carry any of
    /// `secrets` on to errors or records. HTTPS is the default; plain `http` is accepted for an
    /// explicit override (the emulator, a local proxy).
    pub(crate) fn new(provider: &'static str, base_url: &str, secrets: Vec<Secret>) -> Result<Self, Error> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let invalid = || Error::configuration(format!("The {provider} base URL must be an absolute http(s) URL."));
        let parsed = url::Url::parse(&base_url).map_err(|_| invalid())?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none_or(str::is_empty) {
            return Err(invalid());
        }
        let client = http_client(provider, CONNECT_TIMEOUT, HeaderValue::from_static(USER_AGENT))?;
        let origin = parsed.origin().ascii_serialization();
        Ok(Self { provider, client, base_url, origin, secrets: secrets.into() })
    }

    /// The endpoint requests go to: `scheme://host[:port]`, without credentials or path.
    pub(crate) fn origin(&self) -> &str {
        &self.origin
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
        let Ok(mut auth) = HeaderValue::from_str(post.authorization.expose()) else {
            let details = ProviderError::new(provider).message("the credentials cannot be sent in a header");
            return Outcome::rejected(Category::Auth, details);
        };
        auth.set_sensitive(true);
        let (client, connect_timeout) = match post.shared {
            Some(shared) => (&shared.client, shared.connect_timeout),
            None => (&self.client, CONNECT_TIMEOUT),
        };
        let mut request = client
            .post(format!("{}{}", self.base_url, post.path))
            .timeout(post.timeout)
            .header(header::ACCEPT, "application/json")
            .header(header::AUTHORIZATION, auth);
        if let Some(user_agent) = post.shared.and_then(|shared| shared.user_agent.clone()) {
            request = request.header(header::USER_AGENT, user_agent);
        }
        request = match post.body {
            Body::Form(form) => request.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded").body(form),
            Body::Json(json) => request.header(header::CONTENT_TYPE, "application/json").body(json.to_string()),
        };
        let started = std::time::Instant::now();
        let exchange = async {
            let response = request.send().await?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = read_capped(response, MAX_RESPONSE_BODY).await?;
            Ok::<_, reqwest::Error>((status, headers, body))
        };
        let result = CONNECT_BUDGET.scope(connect_budget(connect_timeout, post.timeout), exchange).await;
        match result {
            Ok((status, headers, Some(body))) => {
                tracing::debug!(provider, status, elapsed = ?started.elapsed(), "provider responded");
                let body =
                    if (200..300).contains(&status) { body } else { self.scrub(body, post.authorization, post.text) };
                interpret(status, &headers, &body, SystemTime::now())
            }
            Ok((status, _, None)) => {
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
async fn read_capped(mut response: reqwest::Response, limit: usize) -> Result<Option<Vec<u8>>, reqwest::Error> {
    let limit_u64 = u64::try_from(limit).unwrap_or(u64::MAX);
    if response.content_length().is_some_and(|length| length > limit_u64) {
        return Ok(None);
    }
    let mut body = Vec::new();
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
pub(crate) fn basic_auth(user: &str, password: &str) -> Secret {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    Secret::new(format!("Basic {encoded}"))
}

/// What one provider's responses say: where its request id, message id, error code and message
/// are, and its code table. Each provider's `response.rs` holds one, as a constant; the control
/// flow that reads them is written once, in [`ResponseFacts::interpret`].
pub(crate) struct ResponseFacts {
    /// The provider's name, for [`ProviderError`].
    pub(crate) provider: &'static str,
    /// The request id: a response header, or a field of the (JSON) body.
    pub(crate) request_id: for<'a> fn(&'a HeaderMap, &'a Value) -> Option<&'a str>,
    /// The acceptance a 2xx body proves (the message id and delivery status), if it proves one.
    pub(crate) accepted: fn(&Value) -> Option<Accepted>,
    /// The part of a 4xx body that describes the error (the body itself, or part of it).
    pub(crate) error: fn(&Value) -> &Value,
    /// The error code in that part.
    pub(crate) code: fn(&Value) -> Option<String>,
    /// The error message in that part.
    pub(crate) message: fn(&Value) -> Option<&str>,
    /// The category of a 4xx from its status and code, and the whole body (for a rate limit that
    /// is documented by something other than the code).
    pub(crate) category: fn(u16, Option<&str>, &Value) -> Category,
}

impl ResponseFacts {
    /// Classifies a response. A 2xx is accepted when the body proves it, else
    /// `Unknown(MalformedResponse)`; a 4xx is rejected in the provider's category with its code
    /// and message (a 429 only with the documented rate-limit signal, and `Retry-After` only for
    /// a rate limit); anything else is unknown. Pure: `now` is only for an HTTP-date
    /// `Retry-After`.
    pub(crate) fn interpret(&self, status: u16, headers: &HeaderMap, body: &[u8], now: SystemTime) -> Outcome {
        let json = parse_json(body);
        let mut details = ProviderError::new(self.provider).http_status(status);
        if let Some(id) = (self.request_id)(headers, &json) {
            details = details.request_id(id);
        }
        match status_class(status) {
            StatusClass::Success => success((self.accepted)(&json), details),
            StatusClass::ClientError => {
                let error = (self.error)(&json);
                let code = (self.code)(error);
                let category = (self.category)(status, code.as_deref(), &json);
                if let Some(code) = code {
                    details = details.code(code);
                }
                if let Some(message) = (self.message)(error) {
                    details = details.message(message);
                }
                rejection(category, details, headers, now)
            }
            StatusClass::Other => unknown_for_status(&details),
        }
    }
}

/// The JSON body, or `Null` when it is not JSON.
fn parse_json(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or(Value::Null)
}

/// `obj[key]` when it is a non-empty string.
pub(crate) fn read_string<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `obj[key]` as a code: a number in decimal, or a non-empty string.
pub(crate) fn read_code(obj: &Value, key: &str) -> Option<String> {
    match obj.get(key)? {
        Value::Number(n) => Some(n.as_i64().map_or_else(|| n.to_string(), |i| i.to_string())),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Null | Value::Bool(_) | Value::String(_) | Value::Array(_) | Value::Object(_) => None,
    }
}

/// A response header as text.
pub(crate) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok()).filter(|v| !v.is_empty())
}

/// How a status is handled: 2xx proves or fails to prove acceptance, 4xx is classified, and
/// everything else (1xx, 3xx, 5xx) is unknown.
enum StatusClass {
    /// 2xx.
    Success,
    /// 4xx.
    ClientError,
    /// Anything else.
    Other,
}

/// The class of `status`.
fn status_class(status: u16) -> StatusClass {
    match status {
        200..=299 => StatusClass::Success,
        400..=499 => StatusClass::ClientError,
        _ => StatusClass::Other,
    }
}

/// A 2xx that proved acceptance, or `Unknown(MalformedResponse)`.
fn success(accepted: Option<Accepted>, details: ProviderError) -> Outcome {
    match accepted {
        Some(accepted) => Outcome::Accepted(accepted),
        None => {
            Outcome::Unknown(Unknown { reason: UnknownReason::MalformedResponse, details: Some(details), cause: None })
        }
    }
}

/// A classified 4xx. A 429 is a rate limit only with the provider's documented signal
/// (`category == RateLimited`); any other 429 is `Unknown(UnexpectedStatus)`, since it may come
/// from a proxy. `Retry-After` is read only for rate limits.
fn rejection(category: Category, details: ProviderError, headers: &HeaderMap, now: SystemTime) -> Outcome {
    let rate_limited = category == Category::RateLimited;
    if details.status() == Some(429) && !rate_limited {
        return unknown_for_status(&details);
    }
    let retry_after = if rate_limited { parse_retry_after(header_str(headers, "retry-after"), now) } else { None };
    Outcome::Rejected(Rejection { category, retry_after, details })
}

/// Unknown for a status that proves nothing: `ServerError` for 5xx, else `UnexpectedStatus`.
/// Only the status and request id are kept.
fn unknown_for_status(details: &ProviderError) -> Outcome {
    let status = details.status().unwrap_or_default();
    let reason = if status >= 500 { UnknownReason::ServerError } else { UnknownReason::UnexpectedStatus };
    let mut kept = ProviderError::new(details.provider()).http_status(status);
    if let Some(id) = details.provider_request_id() {
        kept = kept.request_id(id);
    }
    Outcome::Unknown(Unknown { reason, details: Some(kept), cause: None })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn read_code_accepts_numbers_and_non_empty_strings() {
        let body = json!({"a": 21211, "b": "40300", "c": "", "d": true, "e": 1.5});
        assert_eq!(read_code(&body, "a").as_deref(), Some("21211"));
        assert_eq!(read_code(&body, "b").as_deref(), Some("40300"));
        assert_eq!(read_code(&body, "c"), None);
        assert_eq!(read_code(&body, "d"), None);
        assert_eq!(read_code(&body, "e").as_deref(), Some("1.5"));
        assert_eq!(read_code(&body, "missing"), None);
    }

    #[test]
    fn basic_auth_is_base64_of_user_and_password() {
        assert_eq!(basic_auth("key", "secret").expose(), "Basic a2V5OnNlY3JldA==");
        assert_eq!(format!("{:?}", basic_auth("key", "secret")), "***");
    }

    #[test]
    fn bare_429_is_unknown_and_5xx_keeps_only_status_and_request_id() {
        let details = ProviderError::new("x").http_status(429).code("1").message("slow down");
        let outcome = rejection(Category::Request, details, &HeaderMap::new(), SystemTime::now());
        let Outcome::Unknown(unknown) = outcome else { panic!("{outcome:?}") };
        assert_eq!(unknown.reason, UnknownReason::UnexpectedStatus);
        assert_eq!(unknown.details.unwrap(), ProviderError::new("x").http_status(429));

        let Outcome::Unknown(unknown) = unknown_for_status(&ProviderError::new("x").http_status(503).request_id("r"))
        else {
            panic!()
        };
        assert_eq!(unknown.reason, UnknownReason::ServerError);
        assert_eq!(unknown.details.unwrap().provider_request_id(), Some("r"));
    }

    #[test]
    fn transport_needs_an_http_base_url() {
        assert!(Transport::new("x", "ftp://example.com", Vec::new()).is_err());
        assert!(Transport::new("x", "not a url", Vec::new()).is_err());
        assert!(Transport::new("x", "http://", Vec::new()).is_err());
        let transport = Transport::new("x", "http://127.0.0.1:4010//", Vec::new()).unwrap();
        assert_eq!(transport.base_url, "http://127.0.0.1:4010");
        assert_eq!(transport.origin(), "http://127.0.0.1:4010");
        let transport = Transport::new("x", "https://user:pass@Example.COM:443/proxy/", Vec::new()).unwrap();
        assert_eq!(transport.origin(), "https://example.com");
        assert!(!format!("{transport:?}").contains("pass"));
    }

    #[test]
    fn building_a_transport_installs_no_process_wide_tls_provider() {
        let _ = Transport::new("x", "https://example.com", Vec::new()).unwrap();
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
        let transport = Transport::new("x", "http://127.0.0.1:1", vec![Secret::new("tok/en+secret")]).unwrap();
        let auth = basic_auth("AC1", "tok/en+secret");
        let encoded_auth = auth.expose().strip_prefix("Basic ").unwrap().to_owned();
        let text = "Your code is \"1234\" & more";
        let echoed = format!(
            "{{\"message\": \"tok/en+secret tok%2Fen%2Bsecret {encoded_auth} Your+code+is+%221234%22+%26+more \
             Your code is \\\"1234\\\" & more\"}}"
        );
        let scrubbed = String::from_utf8(transport.scrub(echoed.into_bytes(), &auth, text)).unwrap();
        assert_eq!(scrubbed, r#"{"message": "*** *** *** *** ***"}"#);
        // Short texts are left alone: they would blank out ordinary words.
        let kept = transport.scrub(b"hi there".to_vec(), &auth, "hi");
        assert_eq!(kept, b"hi there");
    }
}
