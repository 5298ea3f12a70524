//! Twilio's responses: acceptance, the delivery status, and the error code table.

use std::time::SystemTime;

use std::borrow::Cow;

use http::HeaderMap;
use serde::Deserialize;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseBody, classify_response, header_str};
use crate::json::{Code, Text};
use crate::provider::is_prefixed_hex32;

/// The category of a Twilio 4xx, from its status and error code (evaluated in this order).
#[must_use]
pub fn rejection_category(status: u16, code: Option<&str>) -> Category {
    match (status, code) {
        (401, _) | (_, Some("20003")) => Category::Auth,
        (_, Some("20429")) => Category::RateLimited,
        (_, Some("21211" | "21614")) => Category::Recipient,
        (_, Some("21610")) => Category::Compliance,
        (_, Some("21212" | "21606" | "21612" | "21659" | "21660" | "21703")) => Category::Sender,
        (_, Some("21408" | "21608")) => Category::Account,
        (403, _) => Category::Auth,
        _ => Category::Request,
    }
}

/// The delivery status of a Twilio message `status`.
#[must_use]
pub fn delivery(status: Option<&str>) -> Delivery {
    match status {
        Some("queued" | "accepted" | "scheduled" | "sending") => Delivery::Queued,
        Some("sent") => Delivery::Sent,
        Some("delivered") => Delivery::Delivered,
        Some("undelivered" | "failed") => Delivery::Undelivered,
        _ => Delivery::Unknown,
    }
}

/// Classifies a response to a Messages POST. Pure: `now` is only for an HTTP-date
/// `Retry-After`.
#[must_use]
pub fn interpret(status: u16, headers: &HeaderMap, body: &[u8], now: SystemTime) -> Outcome {
    classify_response::<Response<'_>>(status, headers, body, now)
}

/// What [`interpret`] reads of a response: a message resource (`sid`, `status`) or an error
/// (`code`, `message`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Response<'a> {
    #[serde(borrow)]
    sid: Text<'a>,
    #[serde(borrow)]
    status: Text<'a>,
    #[serde(borrow)]
    code: Code<'a>,
    #[serde(borrow)]
    message: Text<'a>,
}

impl<'a> ResponseBody<'a> for Response<'a> {
    const PROVIDER: &'static str = NAME;

    fn request_id<'s>(&'s self, headers: &'s HeaderMap) -> Option<&'s str> {
        header_str(headers, "twilio-request-id")
    }

    /// A message resource whose `sid` is `SM` or `MM` followed by 32 hex digits.
    fn accepted(&self) -> Option<Accepted> {
        let sid = self.sid.0.as_deref()?;
        (is_prefixed_hex32(sid, "SM") || is_prefixed_hex32(sid, "MM"))
            .then(|| Accepted { provider_id: sid.to_owned(), delivery: delivery(self.status.0.as_deref()) })
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        self.code.text()
    }

    fn message(&self) -> Option<&str> {
        self.message.non_empty()
    }

    fn category(&self, status: u16, code: Option<&str>) -> Category {
        rejection_category(status, code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t137_rejection_category_table() {
        let rows: &[(u16, Option<&str>, Category)] = &[
            (401, Some("20003"), Category::Auth),
            (429, Some("20429"), Category::RateLimited),
            (400, Some("21211"), Category::Recipient),
            (400, Some("21614"), Category::Recipient),
            (400, Some("21610"), Category::Compliance),
            (400, Some("21212"), Category::Sender),
            (400, Some("21606"), Category::Sender),
            (400, Some("21612"), Category::Sender),
            (400, Some("21659"), Category::Sender),
            (400, Some("21660"), Category::Sender),
            (400, Some("21703"), Category::Sender),
            (429, None, Category::Request),
            (400, Some("21408"), Category::Account),
            (400, Some("21608"), Category::Account),
            (400, Some("21602"), Category::Request),
            (400, Some("21617"), Category::Request),
            (400, Some("99999"), Category::Request),
            (403, None, Category::Auth),
            (404, Some("20404"), Category::Request),
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
        let sid = "SM0123456789abcdef0123456789abcdef";
        let read = |status, body: &str| {
            let mut headers = HeaderMap::new();
            headers.insert("twilio-request-id", http::HeaderValue::from_static("RQ1"));
            crate::http::summary(&interpret(status, &headers, body.as_bytes(), SystemTime::UNIX_EPOCH))
        };
        let accepted = |delivery: &str| format!("accepted {sid} {delivery}");
        let malformed = r#"unknown MalformedResponse code=None message=None id=Some("RQ1")"#;
        let deep = format!(r#"{{"sid":"{sid}","x":{}{}}}"#, "[".repeat(200), "]".repeat(200));
        let rows: Vec<(u16, String, String)> = vec![
            (201, format!(r#"{{"sid":"{sid}","status":"sent"}}"#), accepted("Sent")),
            (201, format!(r#"{{"sid":"{sid}","status":7}}"#), accepted("Unknown")),
            (201, format!(r#"{{"sid":"{sid}"}}"#), accepted("Unknown")),
            (201, format!(r#"{{"sid":"x","sid":"{sid}"}}"#), malformed.to_owned()),
            (201, format!(r#"{{"sid":"{sid}","sid":5}}"#), malformed.to_owned()),
            (201, format!(r#"{{"s\u0069d":"S\u004d{}"}}"#, sid.trim_start_matches("SM")), accepted("Unknown")),
            (
                201,
                format!(r#"{{"sid":"{}","status":"queued"}}"#, sid.to_uppercase().replace("SM", "MM")),
                format!("accepted {} Queued", sid.to_uppercase().replace("SM", "MM")),
            ),
            (201, format!(r#"{{"sid":"{sid}"}}x"#), malformed.to_owned()),
            // Nesting deeper than `serde_json::Value` nests, in a member the adapter does not read:
            (201, deep, accepted("Unknown")),
            (201, r#"{"sid":["SM0123456789abcdef0123456789abcdef"]}"#.to_owned(), malformed.to_owned()),
            (
                400,
                r#"{"code":21211,"message":"Invalid 'To'"}"#.to_owned(),
                r#"rejected recipient code=Some("21211") message=Some("Invalid 'To'") id=Some("RQ1")"#.to_owned(),
            ),
            (
                400,
                r#"{"code":"21211","message":""}"#.to_owned(),
                r#"rejected recipient code=Some("21211") message=None id=Some("RQ1")"#.to_owned(),
            ),
            (
                400,
                r#"{"code":21211.0,"message":5}"#.to_owned(),
                r#"rejected request code=Some("21211.0") message=None id=Some("RQ1")"#.to_owned(),
            ),
            (
                400,
                r#"{"code":null,"code":21610}"#.to_owned(),
                r#"rejected request code=None message=None id=Some("RQ1")"#.to_owned(),
            ),
            (
                400,
                r#"{"code":21610,"code":null}"#.to_owned(),
                r#"rejected request code=None message=None id=Some("RQ1")"#.to_owned(),
            ),
            (
                400,
                "<html>Bad Request</html>".to_owned(),
                r#"rejected request code=None message=None id=Some("RQ1")"#.to_owned(),
            ),
            (
                401,
                r#"{"code":[20003]}"#.to_owned(),
                r#"rejected auth code=None message=None id=Some("RQ1")"#.to_owned(),
            ),
            (
                503,
                r#"{"code":20003,"message":"down"}"#.to_owned(),
                r#"unknown ServerError code=None message=None id=Some("RQ1")"#.to_owned(),
            ),
        ];
        for (status, body, expected) in rows {
            assert_eq!(read(status, &body), expected, "{status} {body}");
        }
    }

    #[test]
    fn t138_delivery_mapping() {
        for s in ["queued", "accepted", "scheduled", "sending"] {
            assert_eq!(delivery(Some(s)), Delivery::Queued);
        }
        assert_eq!(delivery(Some("sent")), Delivery::Sent);
        assert_eq!(delivery(Some("delivered")), Delivery::Delivered);
        assert_eq!(delivery(Some("undelivered")), Delivery::Undelivered);
        assert_eq!(delivery(Some("failed")), Delivery::Undelivered);
        assert_eq!(delivery(Some("something_new")), Delivery::Unknown);
        assert_eq!(delivery(None), Delivery::Unknown);
    }
}
