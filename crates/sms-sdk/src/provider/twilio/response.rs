//! Twilio's responses: acceptance, the delivery status, and the error code table.

use std::time::SystemTime;

use http::HeaderMap;
use serde_json::Value;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseFacts, header_str, read_code, read_string};
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
    FACTS.interpret(status, headers, body, now)
}

/// Where Twilio's responses say what [`interpret`] reads.
const FACTS: ResponseFacts = ResponseFacts {
    provider: NAME,
    request_id: |headers, _| header_str(headers, "twilio-request-id"),
    accepted,
    error: |body| body,
    code: |error| read_code(error, "code"),
    message: |error| read_string(error, "message"),
    category: |status, code, _| rejection_category(status, code),
};

/// A message resource whose `sid` is `SM` or `MM` followed by 32 hex digits.
fn accepted(body: &Value) -> Option<Accepted> {
    let sid = body.get("sid")?.as_str()?;
    (is_prefixed_hex32(sid, "SM") || is_prefixed_hex32(sid, "MM")).then(|| Accepted {
        provider_id: sid.to_owned(),
        delivery: delivery(body.get("status").and_then(Value::as_str)),
    })
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
