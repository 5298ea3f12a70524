//! What the provider verifiers share: settings, URL and form handling, and constant-time
//! comparisons.
//!
//! Everything here that runs before a signature is checked is linear in its input and allocates
//! at most about the size of that input: parameters are counted in one pass over the raw bytes
//! before any is decoded, and decoded values borrow from the input when nothing needs decoding.

// Shared by the four provider features: a build with only some of them leaves some helpers unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use http::HeaderMap;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use subtle::ConstantTimeEq;

use super::{DEFAULT_MAX_BODY, DEFAULT_MAX_PARAMS, DEFAULT_TOLERANCE, WebhookError, WebhookRequest};

/// The builder methods every verifier shares (`detect_keywords`, `max_body_bytes`), plus
/// `public_url`, `trust_proxy` and `max_params` for the URL-signing schemes with form
/// parameters (`url`) or `tolerance` for the timestamped ones (`timestamped`). Expands inside the verifier's `impl` block; the verifier
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

        /// The most form parameters (body and URL query together) decoded before the signature
        /// is checked (default 1,024); more is a payload error
        /// ([`WebhookError::TooManyParameters`](crate::webhook::WebhookError::TooManyParameters)).
        #[must_use]
        pub fn max_params(mut self, limit: usize) -> Self {
            self.settings.max_params = limit;
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
#[derive(Clone)]
pub(crate) struct Settings {
    /// The URL the provider signed, when the server sees another one (a proxy).
    pub(crate) public_url: Option<String>,
    /// Rebuild the URL from `X-Forwarded-Proto` and `X-Forwarded-Host`.
    pub(crate) trust_proxy: bool,
    /// Match whole-message STOP/HELP keywords.
    pub(crate) detect_keywords: bool,
    /// The largest body accepted.
    pub(crate) max_body: usize,
    /// The most form parameters decoded.
    pub(crate) max_params: usize,
    /// The freshness window of timestamped schemes.
    pub(crate) tolerance: Duration,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("public_url", &self.public_url.as_deref().map(super::without_userinfo))
            .field("trust_proxy", &self.trust_proxy)
            .field("detect_keywords", &self.detect_keywords)
            .field("max_body", &self.max_body)
            .field("max_params", &self.max_params)
            .field("tolerance", &self.tolerance)
            .finish()
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            public_url: None,
            trust_proxy: false,
            detect_keywords: true,
            max_body: DEFAULT_MAX_BODY,
            max_params: DEFAULT_MAX_PARAMS,
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

    /// Refuses `count` parameters when they are more than the limit.
    pub(crate) fn check_param_count(&self, provider: &'static str, count: usize) -> Result<(), WebhookError> {
        if count > self.max_params {
            return Err(WebhookError::TooManyParameters { provider, limit: self.max_params });
        }
        Ok(())
    }

    /// The form parameters of `input`, counted against the limit before any is decoded.
    pub(crate) fn form_params<'a>(&self, provider: &'static str, input: &'a [u8]) -> Result<Pairs<'a>, WebhookError> {
        self.check_param_count(provider, count_params(input))?;
        Ok(form_pairs(input))
    }

    /// The parameters a form webhook carries: the URL query for GET, the form body otherwise,
    /// counted against the limit before any is decoded.
    pub(crate) fn request_params<'a>(
        &self,
        provider: &'static str,
        request: &WebhookRequest<'a>,
    ) -> Result<Pairs<'a>, WebhookError> {
        if request.method.eq_ignore_ascii_case("GET") {
            self.form_params(provider, query(request.url).as_bytes())
        } else {
            self.form_params(provider, request.body)
        }
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

/// The query of a URL as received, without the `?` that starts it (that one only: in
/// `https://h/p??a=1` the query is `?a=1`, whose first parameter is named `?a`).
pub(crate) fn query(url: &str) -> &str {
    let (_, _, _, query) = split_url(url);
    query.strip_prefix('?').unwrap_or(query)
}

/// A header's value as text.
pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Form-decoded name and value pairs; they borrow from the input unless decoding changed them.
pub(crate) type Pairs<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// How many parameters `url::form_urlencoded::parse` would yield for `input` (its non-empty
/// `&`-separated segments), counted in one pass without decoding anything.
pub(crate) fn count_params(input: &[u8]) -> usize {
    let mut count = 0usize;
    let mut in_segment = false;
    for &byte in input {
        if byte == b'&' {
            in_segment = false;
        } else if !in_segment {
            in_segment = true;
            count = count.saturating_add(1);
        }
    }
    count
}

/// Form-decoded pairs, keeping repeats and order (`+` is a space). Callers that read input
/// before its signature is checked count it first ([`Settings::form_params`]).
pub(crate) fn form_pairs(input: &[u8]) -> Pairs<'_> {
    url::form_urlencoded::parse(input).collect()
}

/// The first value of each key, as a JSON object (the `raw` of form webhooks). A key that
/// `read` says the normalizer reads may appear once only: a repeat is ambiguous (which one is
/// meant?) and refused as a payload error naming the key.
pub(crate) fn unique_fields(
    provider: &'static str,
    pairs: &[(Cow<'_, str>, Cow<'_, str>)],
    read: impl Fn(&str) -> bool,
) -> Result<serde_json::Map<String, serde_json::Value>, WebhookError> {
    let mut map = serde_json::Map::new();
    for (key, value) in pairs {
        if map.contains_key(key.as_ref()) {
            if read(key) {
                return Err(WebhookError::payload(provider, format!("the parameter {key} appears more than once")));
            }
        } else {
            map.insert(key.clone().into_owned(), serde_json::Value::String(value.clone().into_owned()));
        }
    }
    Ok(map)
}

/// The index of a key `{prefix}{index}` written as `format!` writes numbers (`Media0`,
/// `MediaUrl12`; not `Media01`).
pub(crate) fn key_index(key: &str, prefix: &str) -> Option<usize> {
    let digits = key.strip_prefix(prefix)?;
    let canonical =
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// The string values of the keys `{prefix}{index}`, in index order: one pass over the fields,
/// never a loop up to a number taken from the payload.
pub(crate) fn indexed_values<'a>(
    fields: &'a serde_json::Map<String, serde_json::Value>,
    prefix: &str,
) -> Vec<(usize, &'a str)> {
    let mut values: Vec<(usize, &str)> =
        fields.iter().filter_map(|(key, value)| Some((key_index(key, prefix)?, value.as_str()?))).collect();
    values.sort_unstable_by_key(|&(index, _)| index);
    values
}

/// Refuses a JSON body in which an object repeats a key on a path the normalizer reads (where
/// `serde_json` would silently keep the last value). `read` gets the path from the root, object
/// keys and `*` for an array element, and answers whether the normalizer reads it or anything
/// under it. Other objects are skipped without being stored, so the pass is linear. A body that
/// is not JSON is a payload error too.
pub(crate) fn check_json_duplicates(
    provider: &'static str,
    body: &[u8],
    read: &dyn Fn(&[String]) -> bool,
) -> Result<(), WebhookError> {
    let mut duplicate = None;
    let mut path = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let walked = Walk { read, path: &mut path, duplicate: &mut duplicate }
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match (walked, duplicate) {
        (_, Some(key)) => Err(WebhookError::payload(provider, format!("the key {key} appears more than once"))),
        (Err(_), None) => Err(WebhookError::payload(provider, "the body is not JSON")),
        (Ok(()), None) => Ok(()),
    }
}

/// Whether `path` is a read path of `leaves` (dotted, `*` for array elements) or leads to one.
pub(crate) fn leads_to(leaves: &[&str], path: &[String]) -> bool {
    leaves.iter().any(|leaf| {
        let mut segments = leaf.split('.');
        path.iter().all(|key| segments.next() == Some(key.as_str()))
    })
}

/// One step of [`check_json_duplicates`]: a value at `path`.
struct Walk<'w> {
    read: &'w dyn Fn(&[String]) -> bool,
    path: &'w mut Vec<String>,
    duplicate: &'w mut Option<String>,
}

impl Walk<'_> {
    fn child(&mut self) -> Walk<'_> {
        Walk { read: self.read, path: self.path, duplicate: self.duplicate }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            self.path.push(key);
            if (self.read)(self.path) {
                let key = self.path.last().map(String::as_str).unwrap_or_default();
                if !seen.insert(key.to_owned()) {
                    *self.duplicate = Some(key.to_owned());
                    return Err(de::Error::custom("duplicate key"));
                }
                map.next_value_seed(self.child())?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
            self.path.pop();
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.path.push("*".to_owned());
        if (self.read)(self.path) {
            while seq.next_element_seed(self.child())?.is_some() {}
        } else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
        }
        self.path.pop();
        Ok(())
    }
}

/// Strict standard base64 (canonical padding, no trailing bits).
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(text.trim()).ok()
}

/// A base64 signature of at most `max_bytes` bytes, strictly decoded; longer text is refused
/// before it is decoded.
pub(crate) fn decode_signature(text: &str, max_bytes: usize) -> Option<Vec<u8>> {
    let text = text.trim();
    (text.len() <= max_bytes.div_ceil(3).saturating_mul(4)).then(|| decode_base64(text)).flatten()
}

/// Standard base64 with padding.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Constant-time equality (lengths may leak).
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// Seconds since the epoch (negative before it), saturating at the ends of `i64`.
pub(crate) fn unix_seconds(now: SystemTime) -> i64 {
    match now.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, i64::saturating_neg),
    }
}

/// A lenient timestamp (`…Z`, `…+00:00`, fractional seconds), as providers send them.
pub(crate) fn parse_time(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}
