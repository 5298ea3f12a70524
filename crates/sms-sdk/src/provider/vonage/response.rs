//! Vonage's responses: RFC 7807 problem details, with the code in the `type` fragment or `title`.

use std::time::SystemTime;

use std::borrow::Cow;

use http::HeaderMap;
use serde::Deserialize;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseBody, classify_response, header_str};
use crate::json::{Code, Text};

/// The error code of a problem body: the fragment of its `type` URL when it is `#<digits>` or
/// `#throttled`, else its `title` (as text: a number in decimal) when that is all digits.
#[must_use]
pub fn error_code<'a>(kind: Option<&'a str>, title: Option<Cow<'a, str>>) -> Option<Cow<'a, str>> {
    if let Some((_, fragment)) = kind.and_then(|t| t.rsplit_once('#'))
        && (fragment == "throttled" || (!fragment.is_empty() && fragment.bytes().all(|b| b.is_ascii_digit())))
    {
        return Some(Cow::Borrowed(fragment));
    }
    title.filter(|t| t.bytes().all(|b| b.is_ascii_digit()))
}

/// The category of a Vonage 4xx: by code first, then by status.
#[must_use]
pub fn rejection_category(status: u16, code: Option<&str>) -> Category {
    match code {
        Some("1000" | "1241" | "throttled") => Category::RateLimited,
        Some("1170" | "1430") => Category::Recipient,
        Some("1240" | "1476") => Category::Compliance,
        Some("1120" | "1420") => Category::Sender,
        Some("1060" | "1080" | "1160" | "1290" | "1460") => Category::Account,
        _ if matches!(status, 401 | 403) => Category::Auth,
        _ if status == 402 => Category::Account,
        _ => Category::Request,
    }
}

/// Classifies a response to `POST /v1/messages`.
#[must_use]
pub fn interpret(status: u16, headers: &HeaderMap, body: &[u8], now: SystemTime) -> Outcome {
    classify_response::<Response<'_>>(status, headers, body, now)
}

/// What [`interpret`] reads of a response: the message id, or RFC 7807 problem details.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Response<'a> {
    #[serde(borrow)]
    message_uuid: Text<'a>,
    #[serde(borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(borrow)]
    title: Code<'a>,
    #[serde(borrow)]
    detail: Text<'a>,
}

impl<'a> ResponseBody<'a> for Response<'a> {
    const PROVIDER: &'static str = NAME;

    fn request_id<'s>(&'s self, headers: &'s HeaderMap) -> Option<&'s str> {
        header_str(headers, "x-request-id")
    }

    fn accepted(&self) -> Option<Accepted> {
        let id = self.message_uuid.non_empty()?;
        Some(Accepted { provider_id: id.to_owned(), delivery: Delivery::Queued })
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        error_code(self.kind.0.as_deref(), self.title.text())
    }

    /// `detail`, else a string `title`.
    fn message(&self) -> Option<&str> {
        self.detail.non_empty().or_else(|| self.title.non_empty_text())
    }

    fn category(&self, status: u16, code: Option<&str>) -> Category {
        rejection_category(status, code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t175_rejection_category_table() {
        let rows: &[(u16, Option<&str>, Category)] = &[
            (401, None, Category::Auth),
            (402, None, Category::Account),
            (429, None, Category::Request),
            (429, Some("throttled"), Category::RateLimited),
            (422, Some("1241"), Category::RateLimited),
            (422, Some("1000"), Category::RateLimited),
            (422, Some("1420"), Category::Sender),
            (422, Some("1120"), Category::Sender),
            (422, Some("1430"), Category::Recipient),
            (422, Some("1240"), Category::Compliance),
            (422, Some("1160"), Category::Account),
            (422, Some("1020"), Category::Request),
            (400, None, Category::Request),
        ];
        for (status, code, category) in rows {
            assert_eq!(rejection_category(*status, *code), *category, "{status} {code:?}");
        }
    }

    /// Bodies with missing, mistyped, repeated or nested members. A member the adapter reads that
    /// the body repeats makes a 2xx malformed, and an error status is then classified by the
    /// status alone, as for a body that is not JSON.
    #[test]
    fn odd_bodies_are_classified() {
        let read = |status, body: &str| {
            crate::http::summary(&interpret(status, &HeaderMap::new(), body.as_bytes(), SystemTime::UNIX_EPOCH))
        };
        let rows: &[(u16, &str, &str)] = &[
            (202, r#"{"message_uuid":"u1"}"#, "accepted u1 Queued"),
            (202, r#"{"message_uuid":["u1"]}"#, "unknown MalformedResponse code=None message=None id=None"),
            (202, r#"{"message_uuid":""}"#, "unknown MalformedResponse code=None message=None id=None"),
            (
                422,
                r#"{"type":"https://developer.vonage.com/api-errors/messages#1420","title":"Invalid sender","detail":"d"}"#,
                r#"rejected sender code=Some("1420") message=Some("d") id=None"#,
            ),
            (
                422,
                r#"{"type":"x#low-balance","title":1160}"#,
                r#"rejected account code=Some("1160") message=None id=None"#,
            ),
            (
                422,
                r#"{"type":7,"title":"1430","detail":""}"#,
                r#"rejected recipient code=Some("1430") message=Some("1430") id=None"#,
            ),
            (422, r#"{"title":-5}"#, "rejected request code=None message=None id=None"),
            (
                429,
                r#"{"type":"https://x#throttled"}"#,
                r#"rejected rate_limited code=Some("throttled") message=None id=None"#,
            ),
            (
                429,
                r#"{"type":"https://x#1000","type":null}"#,
                "unknown UnexpectedStatus code=None message=None id=None",
            ),
            (
                401,
                r#"{"title":"Unauthorized","detail":{"x":1}}"#,
                r#"rejected auth code=None message=Some("Unauthorized") id=None"#,
            ),
        ];
        for (status, body, expected) in rows {
            assert_eq!(read(*status, body), *expected, "{status} {body}");
        }
    }

    #[test]
    fn error_codes_come_from_the_type_fragment_or_a_numeric_title() {
        fn code(kind: Option<&'static str>, title: Option<&'static str>) -> Option<Cow<'static, str>> {
            error_code(kind, title.map(Cow::Borrowed))
        }
        assert_eq!(code(Some("https://developer.vonage.com/api-errors/messages#1430"), None).as_deref(), Some("1430"));
        assert_eq!(code(Some("https://developer.vonage.com/api-errors#throttled"), None).as_deref(), Some("throttled"));
        assert_eq!(code(Some("https://developer.vonage.com/api-errors#low-balance"), None), None);
        assert_eq!(code(Some("https://x#"), Some("1420")).as_deref(), Some("1420"));
        assert_eq!(code(None, Some("1420")).as_deref(), Some("1420"));
        assert_eq!(code(None, Some("Invalid sender")), None);
    }
}
