//! Telnyx's responses: acceptance, the delivery status, and the error code table.

use std::time::SystemTime;

use std::borrow::Cow;

use http::HeaderMap;
use serde::Deserialize;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseBody, classify_response, header_str};
use crate::json::{Code, First, Object, Text};

/// The category of a Telnyx 4xx: by error code first, then by status.
#[must_use]
pub fn rejection_category(status: u16, code: Option<&str>) -> Category {
    match code {
        Some("10009" | "10010" | "20001" | "20002" | "20003" | "20006" | "20008") => Category::Auth,
        Some("10011" | "40318") => Category::RateLimited,
        Some("40300" | "40322") => Category::Compliance,
        Some("40310" | "40301" | "40319") => Category::Recipient,
        Some("40305" | "40306" | "40308" | "40315" | "40320" | "40321" | "40329" | "40330") => Category::Sender,
        Some("20013" | "20100" | "40309" | "40312" | "40314" | "40331" | "40333") => Category::Account,
        _ if matches!(status, 401 | 403) => Category::Auth,
        _ => Category::Request,
    }
}

/// The delivery status of a Telnyx recipient `status`.
#[must_use]
pub fn delivery(status: Option<&str>) -> Delivery {
    match status {
        Some("queued" | "sending") => Delivery::Queued,
        Some("sent" | "delivery_unconfirmed") => Delivery::Sent,
        Some("delivered") => Delivery::Delivered,
        Some("sending_failed" | "delivery_failed" | "expired") => Delivery::Undelivered,
        _ => Delivery::Unknown,
    }
}

/// Classifies a response to `POST /v2/messages`.
#[must_use]
pub fn interpret(status: u16, headers: &HeaderMap, body: &[u8], now: SystemTime) -> Outcome {
    classify_response::<Response<'_>>(status, headers, body, now)
}

/// What [`interpret`] reads of a response: the message (`data`) or the first of `errors`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Response<'a> {
    #[serde(borrow)]
    data: Object<Data<'a>>,
    #[serde(borrow)]
    errors: First<Object<Problem<'a>>>,
}

/// The message resource: its id, and the first recipient's status.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Data<'a> {
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    to: First<Object<Recipient<'a>>>,
}

/// One recipient of the message.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Recipient<'a> {
    #[serde(borrow)]
    status: Text<'a>,
}

/// One error.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Problem<'a> {
    #[serde(borrow)]
    code: Code<'a>,
    #[serde(borrow)]
    detail: Text<'a>,
    #[serde(borrow)]
    title: Text<'a>,
}

impl<'a> ResponseBody<'a> for Response<'a> {
    const PROVIDER: &'static str = NAME;

    fn request_id<'s>(&'s self, headers: &'s HeaderMap) -> Option<&'s str> {
        header_str(headers, "x-request-id")
    }

    /// `data.id`, with the first recipient's status.
    fn accepted(&self) -> Option<Accepted> {
        let id = self.data.id.non_empty()?;
        Some(Accepted { provider_id: id.to_owned(), delivery: delivery(self.data.to.0.status.0.as_deref()) })
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        self.errors.0.code.text()
    }

    fn message(&self) -> Option<&str> {
        self.errors.0.detail.non_empty().or_else(|| self.errors.0.title.non_empty())
    }

    fn category(&self, status: u16, code: Option<&str>) -> Category {
        rejection_category(status, code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t151_rejection_category_table() {
        let rows: &[(u16, Option<&str>, Category)] = &[
            (401, Some("10009"), Category::Auth),
            (403, Some("10010"), Category::Auth),
            (401, Some("20008"), Category::Auth),
            (429, Some("10011"), Category::RateLimited),
            (400, Some("40318"), Category::RateLimited),
            (400, Some("40300"), Category::Compliance),
            (400, Some("40322"), Category::Compliance),
            (400, Some("40310"), Category::Recipient),
            (400, Some("40319"), Category::Recipient),
            (400, Some("40305"), Category::Sender),
            (400, Some("40306"), Category::Sender),
            (400, Some("40321"), Category::Sender),
            (400, Some("40329"), Category::Sender),
            (400, Some("40309"), Category::Account),
            (400, Some("40333"), Category::Account),
            (402, Some("20100"), Category::Account),
            (422, Some("10015"), Category::Request),
            (400, Some("40316"), Category::Request),
            (400, None, Category::Request),
            (401, None, Category::Auth),
            (429, None, Category::Request),
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
        let malformed = "unknown MalformedResponse code=None message=None id=None";
        let rejected = |category: &str, code: &str, message: &str| {
            format!("rejected {category} code={code} message={message} id=None")
        };
        let rows: &[(u16, &str, &str)] = &[
            (200, r#"{"data":{"id":"m1","to":[{"status":"sent"},{"status":"queued"}]}}"#, "accepted m1 Sent"),
            (200, r#"{"data":{"id":"m1","to":{"status":"sent"}}}"#, "accepted m1 Unknown"),
            (200, r#"{"data":{"id":"m1","to":["sent"]}}"#, "accepted m1 Unknown"),
            (200, r#"{"data":{"id":"m1","to":[]}}"#, "accepted m1 Unknown"),
            (200, r#"{"data":{"id":"","to":[]}}"#, malformed),
            (200, r#"{"data":[{"id":"m1"}]}"#, malformed),
            (200, r#"{"data":{"id":"m1"},"data":null}"#, malformed),
            (200, r#"{"data":null,"data":{"id":"m2"}}"#, malformed),
            (200, r#"{"data":{"id":7}}"#, malformed),
        ];
        for (status, body, expected) in rows {
            assert_eq!(read(*status, body), *expected, "{status} {body}");
        }
        let rows: &[(u16, &str, String)] = &[
            (
                400,
                r#"{"errors":[{"code":"40300","title":"Blocked","detail":"STOP"},{"code":"10009"}]}"#,
                rejected("compliance", r#"Some("40300")"#, r#"Some("STOP")"#),
            ),
            (
                400,
                r#"{"errors":[{"code":40310,"title":"Bad","detail":""}]}"#,
                rejected("recipient", r#"Some("40310")"#, r#"Some("Bad")"#),
            ),
            (401, r#"{"errors":["10009"]}"#, rejected("auth", "None", "None")),
            (401, r#"{"errors":{"code":"40300"}}"#, rejected("auth", "None", "None")),
            (400, r#"{"errors":[]}"#, rejected("request", "None", "None")),
            (400, r#"{"errors":[{"code":true,"detail":1,"title":"T"}]}"#, rejected("request", "None", r#"Some("T")"#)),
        ];
        for (status, body, expected) in rows {
            assert_eq!(read(*status, body), *expected, "{status} {body}");
        }
    }

    #[test]
    fn t152_delivery_mapping() {
        for (status, expected) in [
            ("queued", Delivery::Queued),
            ("sending", Delivery::Queued),
            ("sent", Delivery::Sent),
            ("delivery_unconfirmed", Delivery::Sent),
            ("delivered", Delivery::Delivered),
            ("sending_failed", Delivery::Undelivered),
            ("delivery_failed", Delivery::Undelivered),
            ("expired", Delivery::Undelivered),
            ("read", Delivery::Unknown),
        ] {
            assert_eq!(delivery(Some(status)), expected, "{status}");
        }
    }
}
