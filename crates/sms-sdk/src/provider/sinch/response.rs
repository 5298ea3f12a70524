//! Sinch's responses: the created batch, the delivery codes, and the error table.

use std::borrow::Cow;
use std::time::SystemTime;

use http::HeaderMap;
use serde::Deserialize;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseBody, classify_response, header_str};
use crate::json::{Code, Text};

/// The category of a Sinch 4xx: by its `code` first, then by status. 400 is a request Sinch
/// could not read; 401 a token it does not know; 403 names what the request referred to; 404 a
/// service plan it does not know (the adapter's configuration); 429 "too many outstanding
/// requests" (the plan's queue is full).
#[must_use]
pub fn rejection_category(status: u16, code: Option<&str>) -> Category {
    match (status, code) {
        (429, _) => Category::RateLimited,
        (_, Some("syntax_invalid_json" | "syntax_invalid_parameter_format" | "syntax_constraint_violation")) => {
            Category::Request
        }
        (_, Some("unknown_group" | "unknown_campaign" | "missing_callback_url")) => Category::Request,
        (401 | 404, _) => Category::Auth,
        (403, _) => Category::Account,
        _ => Category::Request,
    }
}

/// The delivery status of a Sinch status word (batches, delivery reports and lookups).
#[must_use]
pub fn delivery(status: Option<&str>) -> Delivery {
    match status {
        Some("Queued" | "queued") => Delivery::Queued,
        Some("Dispatched" | "dispatched") => Delivery::Sent,
        Some("Delivered" | "delivered") => Delivery::Delivered,
        Some(
            "Aborted" | "Cancelled" | "Rejected" | "Deleted" | "Failed" | "Expired" | "aborted" | "cancelled"
            | "rejected" | "deleted" | "failed" | "expired",
        ) => Delivery::Undelivered,
        _ => Delivery::Unknown,
    }
}

/// Classifies a response to `POST /xms/v1/{service_plan_id}/batches`.
#[must_use]
pub fn interpret(status: u16, headers: &HeaderMap, body: &[u8], now: SystemTime) -> Outcome {
    classify_response::<Response<'_>>(status, headers, body, now)
}

/// What [`interpret`] reads of a response: the batch's `id`, or the error's `code` and `text`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Response<'a> {
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    code: Code<'a>,
    #[serde(borrow)]
    text: Text<'a>,
}

impl<'a> ResponseBody<'a> for Response<'a> {
    const PROVIDER: &'static str = NAME;

    /// Sinch documents no request id; an `x-request-id` header (a proxy's, say) is kept.
    fn request_id<'s>(&'s self, headers: &'s HeaderMap) -> Option<&'s str> {
        header_str(headers, "x-request-id")
    }

    /// The batch `id`: queued at Sinch (it drains the plan's queue at the plan's rate).
    fn accepted(&self) -> Option<Accepted> {
        let id = self.id.non_empty()?;
        Some(Accepted { provider_id: id.to_owned(), delivery: Delivery::Queued })
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        self.code.text()
    }

    fn message(&self) -> Option<&str> {
        self.text.non_empty()
    }

    fn category(&self, status: u16, code: Option<&str>) -> Category {
        rejection_category(status, code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::{Unknown, UnknownReason};

    fn classify(status: u16, body: &str) -> Outcome {
        interpret(status, &HeaderMap::new(), body.as_bytes(), SystemTime::UNIX_EPOCH)
    }

    /// Sinch's documented batch (API reference, "Send": the 201 example, trimmed).
    const CREATED: &str = r#"{"id":"01FC66621XXXXX119Z8PMV1QPQ","to":["15551234567"],"from":"15551231234","canceled":false,"body":"Hi there! How are you?","type":"mt_text","created_at":"2019-08-24T14:15:22Z","modified_at":"2019-08-24T14:15:22Z","delivery_report":"none","send_at":"2019-08-24T14:15:22Z","expire_at":"2019-08-24T14:15:22Z","flash_message":true}"#;

    #[test]
    fn t267_a_created_batch_is_accepted_and_queued() {
        let Outcome::Accepted(accepted) = classify(201, CREATED) else { panic!() };
        assert_eq!(accepted.provider_id, "01FC66621XXXXX119Z8PMV1QPQ");
        assert_eq!(accepted.delivery, Delivery::Queued);
    }

    #[test]
    fn t267_a_success_without_an_id_is_unknown() {
        for body in ["{}", r#"{"id":""}"#, "not json", r#"{"id":"a","id":"b"}"#] {
            assert!(
                matches!(
                    classify(201, body),
                    Outcome::Unknown(Unknown { reason: UnknownReason::MalformedResponse, .. })
                ),
                "{body}"
            );
        }
    }

    #[test]
    fn t268_the_error_table() {
        let rows: &[(u16, &str, Category)] = &[
            (400, r#"{"code":"syntax_invalid_json","text":"The JSON body is invalid"}"#, Category::Request),
            (
                400,
                r#"{"code":"syntax_constraint_violation","text":"to: size must be between 1 and 1000"}"#,
                Category::Request,
            ),
            (401, "", Category::Auth),
            (403, r#"{"code":"unknown_group","text":"Group 123 not found"}"#, Category::Request),
            (403, r#"{"code":"missing_callback_url","text":"No callback URL"}"#, Category::Request),
            (403, r#"{"code":"forbidden","text":"x"}"#, Category::Account),
            (404, "", Category::Auth),
            (405, "", Category::Request),
            (415, "", Category::Request),
            (429, r#"{"code":"too_many_requests","text":"Too many outstanding requests"}"#, Category::RateLimited),
        ];
        for &(status, body, category) in rows {
            let Outcome::Rejected(rejection) = classify(status, body) else { panic!("{status} {body}") };
            assert_eq!(rejection.category, category, "{status} {body}");
        }
        let Outcome::Rejected(rejection) = classify(400, r#"{"code":"syntax_invalid_json","text":"bad"}"#) else {
            panic!()
        };
        assert_eq!(
            (rejection.details.provider_code(), rejection.details.text()),
            (Some("syntax_invalid_json"), Some("bad"))
        );
    }

    #[test]
    fn t269_server_errors_are_unknown() {
        for status in [500, 502, 503, 504] {
            assert!(matches!(classify(status, r#"{"code":"internal_error"}"#), Outcome::Unknown(_)), "{status}");
        }
    }

    #[test]
    fn delivery_words() {
        assert_eq!(delivery(Some("Dispatched")), Delivery::Sent);
        assert_eq!(delivery(Some("Delivered")), Delivery::Delivered);
        assert_eq!(delivery(Some("Expired")), Delivery::Undelivered);
        assert_eq!(delivery(Some("Unknown")), Delivery::Unknown);
        assert_eq!(delivery(None), Delivery::Unknown);
    }
}
