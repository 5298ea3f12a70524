//! Plivo's responses. Its error body is undocumented: only the status and `api_id` are read.

use std::time::SystemTime;

use std::borrow::Cow;

use http::HeaderMap;
use serde::Deserialize;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseBody, classify_response};
use crate::json::{First, Text};

/// The category of a Plivo 4xx, by status only: 401 `Auth`, 429 `RateLimited` (the caller
/// checks the body's `api_id`), anything else `Request`.
#[must_use]
pub fn rejection_category(status: u16) -> Category {
    match status {
        401 => Category::Auth,
        429 => Category::RateLimited,
        _ => Category::Request,
    }
}

/// Classifies a response to a Message POST.
#[must_use]
pub fn interpret(status: u16, headers: &HeaderMap, body: &[u8], now: SystemTime) -> Outcome {
    classify_response::<Response<'_>>(status, headers, body, now)
}

/// What [`interpret`] reads of a response: no error code is documented, and a 429 is Plivo's
/// only when its body carries an `api_id` (anything else may be a proxy).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Response<'a> {
    /// Plivo's request id, and its sign that a 429 is its own.
    #[serde(borrow)]
    api_id: Text<'a>,
    /// Plivo reports no delivery status with it.
    #[serde(borrow)]
    message_uuid: First<Text<'a>>,
    #[serde(borrow)]
    error: Text<'a>,
}

impl<'a> ResponseBody<'a> for Response<'a> {
    const PROVIDER: &'static str = NAME;

    fn request_id<'s>(&'s self, _: &'s HeaderMap) -> Option<&'s str> {
        self.api_id.non_empty()
    }

    /// The first of `message_uuid`.
    fn accepted(&self) -> Option<Accepted> {
        let id = self.message_uuid.0.non_empty()?;
        Some(Accepted { provider_id: id.to_owned(), delivery: Delivery::Queued })
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        None
    }

    fn message(&self) -> Option<&str> {
        self.error.non_empty()
    }

    fn category(&self, status: u16, _: Option<&str>) -> Category {
        if status == 429 && self.api_id.non_empty().is_none() { Category::Request } else { rejection_category(status) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bodies with missing, mistyped, repeated or nested members. A member the adapter reads that
    /// the body repeats makes a 2xx malformed, and an error status is then classified by the
    /// status alone, as for a body that is not JSON.
    #[test]
    fn odd_bodies_are_classified() {
        let read = |status, body: &str| {
            crate::http::summary(&interpret(status, &HeaderMap::new(), body.as_bytes(), SystemTime::UNIX_EPOCH))
        };
        let rows: &[(u16, &str, &str)] = &[
            (202, r#"{"message_uuid":["u1","u2"],"api_id":"a1"}"#, "accepted u1 Queued"),
            (
                202,
                r#"{"message_uuid":"u1","api_id":"a1"}"#,
                r#"unknown MalformedResponse code=None message=None id=Some("a1")"#,
            ),
            (202, r#"{"message_uuid":[""],"api_id":""}"#, "unknown MalformedResponse code=None message=None id=None"),
            (202, r#"{"message_uuid":[7,"u2"]}"#, "unknown MalformedResponse code=None message=None id=None"),
            (
                202,
                r#"{"message_uuid":[],"message_uuid":["u3"]}"#,
                "unknown MalformedResponse code=None message=None id=None",
            ),
            (
                429,
                r#"{"api_id":"a2","error":"too many"}"#,
                r#"rejected rate_limited code=None message=Some("too many") id=Some("a2")"#,
            ),
            (429, r#"{"api_id":"","error":"too many"}"#, "unknown UnexpectedStatus code=None message=None id=None"),
            (429, r#"{"api_id":5}"#, "unknown UnexpectedStatus code=None message=None id=None"),
            (
                400,
                r#"{"api_id":"a3","error":{"text":"x"}}"#,
                r#"rejected request code=None message=None id=Some("a3")"#,
            ),
            (500, r#"{"api_id":"a4"}"#, r#"unknown ServerError code=None message=None id=Some("a4")"#),
        ];
        for (status, body, expected) in rows {
            assert_eq!(read(*status, body), *expected, "{status} {body}");
        }
    }

    #[test]
    fn t159_rejection_category_by_status() {
        assert_eq!(rejection_category(401), Category::Auth);
        assert_eq!(rejection_category(429), Category::RateLimited);
        for status in [400, 404, 403] {
            assert_eq!(rejection_category(status), Category::Request);
        }
    }
}
