//! Telnyx's responses: acceptance, the delivery status, and the error code table.

use std::time::SystemTime;

use http::HeaderMap;
use serde_json::Value;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseFacts, header_str, read_code, read_string};

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
    FACTS.interpret(status, headers, body, now)
}

/// Where Telnyx's responses say what [`interpret`] reads: the error is the first of `errors`.
const FACTS: ResponseFacts = ResponseFacts {
    provider: NAME,
    request_id: |headers, _| header_str(headers, "x-request-id"),
    accepted,
    error: |body| body.get("errors").and_then(|e| e.get(0)).filter(|e| e.is_object()).unwrap_or(&Value::Null),
    code: |error| read_code(error, "code"),
    message: |error| read_string(error, "detail").or_else(|| read_string(error, "title")),
    category: |status, code, _| rejection_category(status, code),
};

/// `data.id`, with the first recipient's status.
fn accepted(body: &Value) -> Option<Accepted> {
    let data = body.get("data").filter(|d| d.is_object())?;
    let id = read_string(data, "id")?;
    let status = data.get("to").and_then(|to| to.get(0)).and_then(|to| to.get("status")).and_then(Value::as_str);
    Some(Accepted { provider_id: id.to_owned(), delivery: delivery(status) })
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
