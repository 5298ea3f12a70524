//! Telnyx's responses: acceptance, the delivery status, and the error code table.

use std::time::SystemTime;

use std::borrow::Cow;

use http::HeaderMap;
use serde::de::MapAccess;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseBody, classify_response, header_str};
use crate::lenient::{Code, First, Shape, Text, members, skip_value, value};

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
#[derive(Debug, Default)]
struct Response<'a> {
    data: Data<'a>,
    errors: First<Problem<'a>>,
}

/// The message resource: its id, and the first recipient's status.
#[derive(Debug, Default)]
struct Data<'a> {
    id: Text<'a>,
    to: First<Recipient<'a>>,
}

/// One recipient of the message.
#[derive(Debug, Default)]
struct Recipient<'a> {
    status: Text<'a>,
}

/// One error.
#[derive(Debug, Default)]
struct Problem<'a> {
    code: Code<'a>,
    detail: Text<'a>,
    title: Text<'a>,
}

impl<'a> Shape<'a> for Response<'a> {
    fn object<A: MapAccess<'a>>(map: A) -> Result<Self, A::Error> {
        members(map, |response: &mut Self, key, map| {
            match key {
                "data" => response.data = value(map)?,
                "errors" => response.errors = value(map)?,
                _ => skip_value(map)?,
            }
            Ok(())
        })
    }
}

impl<'a> Shape<'a> for Data<'a> {
    fn object<A: MapAccess<'a>>(map: A) -> Result<Self, A::Error> {
        members(map, |data: &mut Self, key, map| {
            match key {
                "id" => data.id = value(map)?,
                "to" => data.to = value(map)?,
                _ => skip_value(map)?,
            }
            Ok(())
        })
    }
}

impl<'a> Shape<'a> for Recipient<'a> {
    fn object<A: MapAccess<'a>>(map: A) -> Result<Self, A::Error> {
        members(map, |recipient: &mut Self, key, map| {
            match key {
                "status" => recipient.status = value(map)?,
                _ => skip_value(map)?,
            }
            Ok(())
        })
    }
}

impl<'a> Shape<'a> for Problem<'a> {
    fn object<A: MapAccess<'a>>(map: A) -> Result<Self, A::Error> {
        members(map, |problem: &mut Self, key, map| {
            match key {
                "code" => problem.code = value(map)?,
                "detail" => problem.detail = value(map)?,
                "title" => problem.title = value(map)?,
                _ => skip_value(map)?,
            }
            Ok(())
        })
    }
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

    /// Bodies with missing, mistyped, repeated or nested members classify as when they were read
    /// through a `serde_json::Value`.
    #[test]
    fn odd_bodies_classify_as_before() {
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
            (200, r#"{"data":null,"data":{"id":"m2"}}"#, "accepted m2 Unknown"),
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
