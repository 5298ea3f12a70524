//! The rules every provider's response follows: a provider's `response.rs` reads the members of
//! its body into a [`ResponseBody`], and [`classify_response`] turns the status and that body
//! into the outcome.

use std::borrow::Cow;
use std::time::SystemTime;

use http::HeaderMap;
#[cfg(test)]
use serde_json::Value;

use crate::adapter::{Accepted, Category, Outcome, Rejection, Unknown, UnknownReason};
use crate::error::ProviderError;
use crate::json;
use crate::retry::parse_retry_after;

/// What one provider's response body says, and where: each provider's `response.rs` implements
/// it on a small struct of the members it reads (read by [`json`](crate::json), borrowed from
/// the body), with its code table. The control flow that uses them is written once, in
/// [`classify_response`].
pub(crate) trait ResponseBody<'a>: serde::Deserialize<'a> + Default {
    /// The provider's name, for [`ProviderError`].
    const PROVIDER: &'static str;

    /// The request id: a response header, or a member of the body.
    fn request_id<'s>(&'s self, headers: &'s HeaderMap) -> Option<&'s str>;

    /// The acceptance a 2xx body proves (the message id and delivery status), if it proves one.
    fn accepted(&self) -> Option<Accepted>;

    /// The error code of a 4xx body.
    fn code(&self) -> Option<Cow<'_, str>>;

    /// The error code of a 4xx whose body has none, from a header (AWS's `x-amzn-ErrorType`);
    /// `None` for providers whose code is only in the body.
    fn header_code<'s>(&'s self, _headers: &'s HeaderMap) -> Option<&'s str> {
        None
    }

    /// The error message of a 4xx body.
    fn message(&self) -> Option<&str>;

    /// The category of a 4xx from its status and code (and the body, for a rate limit that is
    /// documented by something other than the code).
    fn category(&self, status: u16, code: Option<&str>) -> Category;
}

/// Classifies a response whose body reads as `B`. A 2xx is accepted when the body proves it,
/// else `Unknown(MalformedResponse)`; a 4xx is rejected in the provider's category with its code
/// and message (a 429 only with the documented rate-limit signal, and `Retry-After` only for a
/// rate limit); anything else is unknown. A body that is not a JSON object, or one that repeats a
/// member the provider's struct reads (ambiguous), proves and says nothing. Pure: `now` is only
/// for an HTTP-date `Retry-After`.
pub(crate) fn classify_response<'a, B: ResponseBody<'a>>(
    status: u16,
    headers: &HeaderMap,
    body: &'a [u8],
    now: SystemTime,
) -> Outcome {
    let body: B = json::read(body).ok().flatten().unwrap_or_default();
    let details = || {
        let details = ProviderError::new(B::PROVIDER).http_status(status);
        match body.request_id(headers) {
            Some(id) => details.request_id(id),
            None => details,
        }
    };
    match status_class(status) {
        StatusClass::Success => match body.accepted() {
            Some(accepted) => Outcome::Accepted(accepted),
            None => Outcome::Unknown(Unknown {
                reason: UnknownReason::MalformedResponse,
                details: Some(details()),
                cause: None,
            }),
        },
        StatusClass::ClientError => {
            let code = body.code().or_else(|| body.header_code(headers).map(Cow::Borrowed));
            let category = body.category(status, code.as_deref());
            let mut details = details();
            if let Some(code) = code {
                details = details.code(code);
            }
            if let Some(message) = body.message() {
                details = details.message(message);
            }
            rejection(category, details, headers, now)
        }
        StatusClass::Other => unknown_for_status(&details()),
    }
}

#[cfg(test)] // the webhook normalizers read codes in place; their tests keep this reference
/// `obj[key]` as a code: a number in decimal, or a non-empty string (the webhook payloads' rule;
/// responses read theirs with [`json::Code`]).
pub(crate) fn read_code(obj: &Value, key: &str) -> Option<String> {
    match obj.get(key)? {
        Value::Number(n) => Some(json::number_text(n)),
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

/// A one-line account of an outcome, for the providers' response tests.
#[cfg(test)]
pub(crate) fn summary(outcome: &Outcome) -> String {
    let details = |d: &ProviderError| {
        format!("code={:?} message={:?} id={:?}", d.provider_code(), d.text(), d.provider_request_id())
    };
    match outcome {
        Outcome::Accepted(accepted) => format!("accepted {} {:?}", accepted.provider_id, accepted.delivery),
        Outcome::Rejected(rejection) => format!("rejected {} {}", rejection.category, details(&rejection.details)),
        Outcome::Unknown(unknown) => {
            format!("unknown {:?} {}", unknown.reason, unknown.details.as_ref().map(details).unwrap_or_default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_code_accepts_numbers_and_non_empty_strings() {
        let body = serde_json::json!({"a": 21211, "b": "40300", "c": "", "d": true, "e": 1.5});
        assert_eq!(read_code(&body, "a").as_deref(), Some("21211"));
        assert_eq!(read_code(&body, "b").as_deref(), Some("40300"));
        assert_eq!(read_code(&body, "c"), None);
        assert_eq!(read_code(&body, "d"), None);
        assert_eq!(read_code(&body, "e").as_deref(), Some("1.5"));
        assert_eq!(read_code(&body, "missing"), None);
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
}
