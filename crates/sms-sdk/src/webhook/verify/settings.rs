//! The options every verifier shares ([`Settings`], set through the `verifier_options!` builder
//! methods), and the checks they make before a signature is: the body's size, the number of
//! parameters, the URL that was signed.

// Shared by the four provider features: a build with only some of them leaves some helpers unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use http::HeaderMap;

use super::form::{Pairs, count_params, form_pairs_counted};
use super::url::{query, split_url};
use crate::webhook::{DEFAULT_MAX_BODY, DEFAULT_MAX_PARAMS, DEFAULT_TOLERANCE, WebhookError, WebhookRequest};

/// The builder methods every verifier shares (`detect_keywords`, `max_body_bytes`), plus
/// `public_url`, `trust_proxy` and `max_params` for the URL-signing schemes with form
/// parameters (`url`) or `tolerance` for the timestamped ones (`timestamped`). Expands inside the verifier's `impl` block; the verifier
/// has a `settings: Settings` field.
#[cfg_attr(not(feature = "__verify"), allow(unused_macros))]
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

        $crate::webhook::verify::verifier_options!(common);
    };
    (timestamped) => {
        /// The freshness window of the timestamp, in both directions (default 300 s).
        #[must_use]
        pub fn tolerance(mut self, tolerance: std::time::Duration) -> Self {
            self.settings.tolerance = tolerance;
            self
        }

        $crate::webhook::verify::verifier_options!(common);
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
            .field("public_url", &self.public_url.as_deref().map(crate::webhook::without_userinfo))
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
        let count = count_params(input);
        self.check_param_count(provider, count)?;
        Ok(form_pairs_counted(input, count))
    }

    /// The form-encoded parameters a form webhook carries: the URL query for GET, the body
    /// otherwise (count them with [`Settings::form_params`] before decoding).
    pub(crate) fn encoded_params<'a>(request: &WebhookRequest<'a>) -> &'a [u8] {
        if request.method.eq_ignore_ascii_case("GET") { query(request.url).as_bytes() } else { request.body }
    }

    /// The URL the provider signed: the public URL (with the request's query appended when it
    /// has none), the URL rebuilt from forwarded headers when the proxy is trusted, or the URL as
    /// received.
    pub(crate) fn signed_url<'a>(&'a self, request: &WebhookRequest<'a>) -> Cow<'a, str> {
        let (scheme, authority, path, query) = split_url(request.url);
        if let Some(public) = &self.public_url {
            return if public.contains('?') || query.is_empty() {
                Cow::Borrowed(public)
            } else {
                Cow::Owned(format!("{public}{query}"))
            };
        }
        if self.trust_proxy {
            let first = |name: &str| {
                header(request.headers, name).and_then(|v| v.split(',').next()).map(str::trim).filter(|v| !v.is_empty())
            };
            let proto = first("x-forwarded-proto").unwrap_or(scheme);
            let host = first("x-forwarded-host").or_else(|| header(request.headers, "host")).unwrap_or(authority);
            return Cow::Owned(format!("{proto}://{host}{path}{query}"));
        }
        Cow::Borrowed(request.url)
    }
}

/// A header's value as text. A `HeaderName` constant is found without parsing its name again.
pub(crate) fn header(headers: &HeaderMap, name: impl http::header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use http::HeaderMap;

    use super::*;

    #[test]
    fn only_the_first_question_mark_starts_the_query() {
        assert_eq!(query("https://h/p??a=1#f"), "?a=1");
        assert_eq!(query("https://h/p?a=1"), "a=1");
        assert_eq!(query("https://h/p"), "");
        // Found by the form fuzz target: `??MessageSid=…` names a parameter `?MessageSid`.
        let headers = HeaderMap::new();
        let request =
            WebhookRequest { method: "GET", url: "https://h/p??MessageSid=SM1", headers: &headers, body: b"" };
        let params = Settings::default().form_params("twilio", Settings::encoded_params(&request)).unwrap();
        assert_eq!(params, [("?MessageSid".into(), "SM1".into())]);
    }
}
