//! Vonage's responses: RFC 7807 problem details, with the code in the `type` fragment or `title`.

use std::time::SystemTime;

use http::HeaderMap;
use serde_json::Value;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseFacts, header_str, read_code, read_string};

/// The error code of a problem body: the `type` URL's `#<digits>` or `#throttled` fragment, else
/// an all-digit `title`.
#[must_use]
pub fn error_code(problem: &Value) -> Option<String> {
    if let Some((_, fragment)) = problem.get("type").and_then(Value::as_str).and_then(|t| t.rsplit_once('#'))
        && (fragment == "throttled" || (!fragment.is_empty() && fragment.bytes().all(|b| b.is_ascii_digit())))
    {
        return Some(fragment.to_owned());
    }
    read_code(problem, "title").filter(|t| t.bytes().all(|b| b.is_ascii_digit()))
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
    FACTS.interpret(status, headers, body, now)
}

/// Where Vonage's responses say what [`interpret`] reads: RFC 7807 problem details.
const FACTS: ResponseFacts = ResponseFacts {
    provider: NAME,
    request_id: |headers, _| header_str(headers, "x-request-id"),
    accepted: |body| {
        let id = read_string(body, "message_uuid")?;
        Some(Accepted { provider_id: id.to_owned(), delivery: Delivery::Queued })
    },
    error: |body| body,
    code: error_code,
    message: |error| read_string(error, "detail").or_else(|| read_string(error, "title")),
    category: |status, code, _| rejection_category(status, code),
};

#[cfg(test)]
mod tests {
    use serde_json::json;

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

    #[test]
    fn error_codes_come_from_the_type_fragment_or_a_numeric_title() {
        assert_eq!(
            error_code(&json!({"type": "https://developer.vonage.com/api-errors/messages#1430"})).as_deref(),
            Some("1430")
        );
        assert_eq!(
            error_code(&json!({"type": "https://developer.vonage.com/api-errors#throttled"})).as_deref(),
            Some("throttled")
        );
        assert_eq!(error_code(&json!({"type": "https://developer.vonage.com/api-errors#low-balance"})), None);
        assert_eq!(error_code(&json!({"title": "1420"})).as_deref(), Some("1420"));
        assert_eq!(error_code(&json!({"title": "Invalid sender"})), None);
    }
}
