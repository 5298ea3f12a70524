//! Plivo's responses. Its error body is undocumented: only the status and `api_id` are read.

use std::time::SystemTime;

use http::HeaderMap;
use serde_json::Value;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseFacts, read_string};

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
    FACTS.interpret(status, headers, body, now)
}

/// Where Plivo's responses say what [`interpret`] reads: no error code is documented, and a 429
/// is Plivo's only when its body carries an `api_id` (anything else may be a proxy).
const FACTS: ResponseFacts = ResponseFacts {
    provider: NAME,
    request_id: |_, body| api_id(body),
    accepted,
    error: |body| body,
    code: |_| None,
    message: |error| read_string(error, "error"),
    category: |status, _, body| {
        if status == 429 && api_id(body).is_none() { Category::Request } else { rejection_category(status) }
    },
};

/// The body's `api_id`: Plivo's request id, and its sign that a 429 is its own.
fn api_id(body: &Value) -> Option<&str> {
    read_string(body, "api_id")
}

/// The first of `message_uuid`; Plivo reports no delivery status with it.
fn accepted(body: &Value) -> Option<Accepted> {
    let id = body.get("message_uuid")?.get(0)?.as_str().filter(|id| !id.is_empty())?;
    Some(Accepted { provider_id: id.to_owned(), delivery: Delivery::Queued })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t159_rejection_category_by_status() {
        assert_eq!(rejection_category(401), Category::Auth);
        assert_eq!(rejection_category(429), Category::RateLimited);
        for status in [400, 404, 403] {
            assert_eq!(rejection_category(status), Category::Request);
        }
    }
}
