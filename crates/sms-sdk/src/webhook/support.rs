//! What the provider verifiers share: settings, URL and form handling, and constant-time
//! comparisons.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use http::HeaderMap;
use subtle::ConstantTimeEq;

use super::{DEFAULT_MAX_BODY, DEFAULT_TOLERANCE, WebhookError, WebhookRequest};

/// The builder methods every verifier shares (`detect_keywords`, `max_body_bytes`), plus
/// `public_url` and `trust_proxy` for the URL-signing schemes (`url`) or `tolerance` for the
/// timestamped ones (`timestamped`). Expands inside the verifier's `impl` block; the verifier
/// has a `settings: Settings` field.
macro_rules! verifier_options {
    (url) => {
        /// The public URL the provider calls, when a proxy changes what the server sees.
        #[must_use]
        pub fn public_url(mut self, url: impl Into<String>) -> Self {
            self.settings.public_url = Some(url.into());
            self
        }

        /// Rebuilds the URL from `X-Forwarded-Proto` and `X-Forwarded-Host` (only behind a proxy
        /// you control: clients can set these headers).
        #[must_use]
        pub fn trust_proxy(mut self, trust: bool) -> Self {
            self.settings.trust_proxy = trust;
            self
        }

        $crate::webhook::verifier_options!(common);
    };
    (timestamped) => {
        /// The freshness window of the timestamp, in both directions (default 300 s).
        #[must_use]
        pub fn tolerance(mut self, tolerance: std::time::Duration) -> Self {
            self.settings.tolerance = tolerance;
            self
        }

        $crate::webhook::verifier_options!(common);
    };
    (common) => {
        /// Whether whole-message STOP/HELP keywords become opt-out and help events (default true).
        #[must_use]
        pub fn detect_keywords(mut self, detect: bool) -> Self {
            self.settings.detect_keywords = detect;
            self
        }

        /// The largest body accepted (default 1 MiB).
        #[must_use]
        pub fn max_body_bytes(mut self, limit: usize) -> Self {
            self.settings.max_body = limit;
            self
        }
    };
}
#[allow(unused_imports)] // not every provider feature uses every arm
pub(crate) use verifier_options;

/// Options shared by the verifiers.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The URL the provider signed, when the server sees another one (a proxy).
    pub(crate) public_url: Option<String>,
    /// Rebuild the URL from `X-Forwarded-Proto` and `X-Forwarded-Host`.
    pub(crate) trust_proxy: bool,
    /// Match whole-message STOP/HELP keywords.
    pub(crate) detect_keywords: bool,
    /// The largest body accepted.
    pub(crate) max_body: usize,
    /// The freshness window of timestamped schemes.
    pub(crate) tolerance: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            public_url: None,
            trust_proxy: false,
            detect_keywords: true,
            max_body: DEFAULT_MAX_BODY,
            tolerance: DEFAULT_TOLERANCE,
        }
    }
}

impl Settings {
    /// Refuses a body over the limit.
    pub(crate) fn check_size(&self, provider: &'static str, request: &WebhookRequest<'_>) -> Result<(), WebhookError> {
        if request.body.len() > self.max_body {
            return Err(WebhookError::BodyTooLarge { provider, limit: self.max_body });
        }
        Ok(())
    }

    /// The URL the provider signed: the public URL (with the request's query appended when it
    /// has none), the URL rebuilt from forwarded headers when the proxy is trusted, or the URL as
    /// received.
    pub(crate) fn signed_url(&self, request: &WebhookRequest<'_>) -> String {
        let (scheme, authority, path, query) = split_url(request.url);
        if let Some(public) = &self.public_url {
            return if public.contains('?') { public.clone() } else { format!("{public}{query}") };
        }
        if self.trust_proxy {
            let first = |name: &str| {
                header(request.headers, name).and_then(|v| v.split(',').next()).map(str::trim).filter(|v| !v.is_empty())
            };
            let proto = first("x-forwarded-proto").unwrap_or(scheme);
            let host = first("x-forwarded-host").or_else(|| header(request.headers, "host")).unwrap_or(authority);
            return format!("{proto}://{host}{path}{query}");
        }
        request.url.to_owned()
    }
}

/// Splits a URL as received into scheme, authority, path and query (with its `?`).
pub(crate) fn split_url(url: &str) -> (&str, &str, &str, &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (before_fragment, _) = rest.split_once('#').unwrap_or((rest, ""));
    let authority_end = before_fragment.find(['/', '?']).unwrap_or(before_fragment.len());
    let (authority, tail) = before_fragment.split_at(authority_end);
    let query_start = tail.find('?').unwrap_or(tail.len());
    let (path, query) = tail.split_at(query_start);
    (scheme, authority, path, query)
}

/// A header's value as text.
pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Form-decoded pairs, keeping repeats and order (`+` is a space).
pub(crate) fn form_pairs(input: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(input).into_owned().collect()
}

/// The parameters a form webhook carries: the URL query for GET, the form body otherwise.
pub(crate) fn request_params(request: &WebhookRequest<'_>) -> Vec<(String, String)> {
    if request.method.eq_ignore_ascii_case("GET") {
        let (_, _, _, query) = split_url(request.url);
        form_pairs(query.trim_start_matches('?').as_bytes())
    } else {
        form_pairs(request.body)
    }
}

/// The first value of each key, as a JSON object (the `raw` of form webhooks).
pub(crate) fn first_values(pairs: &[(String, String)]) -> serde_json::Map<String, serde_json::Value> {
    let mut map = serde_json::Map::new();
    for (key, value) in pairs {
        if !map.contains_key(key) {
            map.insert(key.clone(), serde_json::Value::String(value.clone()));
        }
    }
    map
}

/// Strict standard base64 (canonical padding, no trailing bits).
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(text.trim()).ok()
}

/// Standard base64 with padding.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Constant-time equality (lengths may leak).
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// Seconds since the epoch.
pub(crate) fn unix_seconds(now: SystemTime) -> i64 {
    now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A lenient timestamp (`…Z`, `…+00:00`, fractional seconds), as providers send them.
pub(crate) fn parse_time(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}
