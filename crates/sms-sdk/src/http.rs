//! The HTTP transport shared by the provider adapters, and the response rules they all follow.
//!
//! One pooled `reqwest` client per adapter, rustls on ring, no redirects and no automatic
//! retries of any kind: the client decides every retry. Transport failures are all `Unknown`:
//! a request that may have left the machine may have created a message.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use http::{HeaderMap, HeaderValue, header};
use serde_json::Value;

use crate::adapter::{Accepted, Category, Outcome, Rejection, Unknown, UnknownReason};
use crate::error::{Error, ProviderError};
use crate::redact::Secret;
use crate::retry::parse_retry_after;

/// A request body, already encoded.
pub(crate) enum Body {
    /// `application/x-www-form-urlencoded`.
    Form(String),
    /// `application/json`.
    Json(Value),
}

/// A provider's HTTP endpoint and the pooled client that reaches it.
#[derive(Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    base_url: String,
}

impl Transport {
    /// A transport to `base_url` (trailing slashes removed). HTTPS is the default; plain `http`
    /// is accepted for an explicit override (the emulator, a local proxy).
    pub(crate) fn new(provider: &str, base_url: &str) -> Result<Self, Error> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let parsed = url::Url::parse(&base_url)
            .map_err(|_| Error::configuration(format!("The {provider} base URL must be an absolute http(s) URL.")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::configuration(format!("The {provider} base URL must be an absolute http(s) URL.")));
        }
        // reqwest is built without a default TLS provider; ring is ours. An application that
        // installed its own provider first keeps it.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| {
                Error::configuration(format!("Could not build the {provider} HTTP client."))
                    .with_source(std::sync::Arc::new(e))
            })?;
        Ok(Self { client, base_url })
    }

    /// The base URL, without a trailing slash.
    pub(crate) fn base_url(&self) -> &str {
        &self.base_url
    }

    /// POSTs `body` to `path` and classifies the response with `interpret`; a transport failure
    /// is `Unknown(Network)` (or `Timeout`).
    pub(crate) async fn post(
        &self,
        provider: &str,
        path: &str,
        authorization: &Secret,
        body: Body,
        timeout: Duration,
        interpret: impl FnOnce(u16, &HeaderMap, &[u8], SystemTime) -> Outcome,
    ) -> Outcome {
        let mut request = self
            .client
            .post(format!("{}{path}", self.base_url))
            .timeout(timeout)
            .header(header::ACCEPT, "application/json");
        let mut auth = HeaderValue::from_str(authorization.expose()).unwrap_or_else(|_| HeaderValue::from_static(""));
        auth.set_sensitive(true);
        request = request.header(header::AUTHORIZATION, auth);
        request = match body {
            Body::Form(form) => request.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded").body(form),
            Body::Json(json) => request.header(header::CONTENT_TYPE, "application/json").body(json.to_string()),
        };
        let started = std::time::Instant::now();
        let result = async {
            let response = request.send().await?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, headers, body))
        }
        .await;
        match result {
            Ok((status, headers, body)) => {
                tracing::debug!(provider, status, elapsed = ?started.elapsed(), "provider responded");
                interpret(status, &headers, &body, SystemTime::now())
            }
            Err(error) => {
                let reason = if error.is_timeout() { UnknownReason::Timeout } else { UnknownReason::Network };
                tracing::debug!(provider, ?reason, elapsed = ?started.elapsed(), "provider request failed");
                // Never keep reqwest's error text: it names the URL. The kind is enough.
                let cause = if error.is_timeout() { "request timed out" } else { "request failed" };
                Outcome::Unknown(Unknown { reason, details: None, cause: None }.with_cause(cause))
            }
        }
    }
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

/// `Basic base64(user:password)`.
pub(crate) fn basic_auth(user: &str, password: &str) -> Secret {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    Secret::new(format!("Basic {encoded}"))
}

/// The JSON body, or `Null` when it is not JSON.
pub(crate) fn parse_json(body: &[u8]) -> Value {
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
pub(crate) enum StatusClass {
    /// 2xx.
    Success,
    /// 4xx.
    ClientError,
    /// Anything else.
    Other,
}

/// The class of `status`.
pub(crate) fn status_class(status: u16) -> StatusClass {
    match status {
        200..=299 => StatusClass::Success,
        400..=499 => StatusClass::ClientError,
        _ => StatusClass::Other,
    }
}

/// A 2xx that proved acceptance, or `Unknown(MalformedResponse)`.
pub(crate) fn success(accepted: Option<Accepted>, details: ProviderError) -> Outcome {
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
pub(crate) fn rejection(category: Category, details: ProviderError, headers: &HeaderMap, now: SystemTime) -> Outcome {
    let rate_limited = category == Category::RateLimited;
    if details.status() == Some(429) && !rate_limited {
        return unknown_for_status(details);
    }
    let retry_after = if rate_limited { parse_retry_after(header_str(headers, "retry-after"), now) } else { None };
    Outcome::Rejected(Rejection { category, retry_after, details })
}

/// Unknown for a status that proves nothing: `ServerError` for 5xx, else `UnexpectedStatus`.
/// Only the status and request id are kept.
pub(crate) fn unknown_for_status(details: ProviderError) -> Outcome {
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

        let Outcome::Unknown(unknown) = unknown_for_status(ProviderError::new("x").http_status(503).request_id("r"))
        else {
            panic!()
        };
        assert_eq!(unknown.reason, UnknownReason::ServerError);
        assert_eq!(unknown.details.unwrap().provider_request_id(), Some("r"));
    }

    #[test]
    fn transport_needs_an_http_base_url() {
        assert!(Transport::new("x", "ftp://example.com").is_err());
        assert!(Transport::new("x", "not a url").is_err());
        assert_eq!(Transport::new("x", "http://127.0.0.1:4010//").unwrap().base_url(), "http://127.0.0.1:4010");
    }
}
