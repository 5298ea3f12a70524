//! Plivo's responses. Its error body is undocumented: only the status and `api_id` are read.

use std::time::SystemTime;

use http::HeaderMap;
use serde_json::Value;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::error::ProviderError;
use crate::http::{StatusClass, parse_json, read_string, rejection, status_class, success, unknown_for_status};

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
    let json = parse_json(body);
    let api_id = read_string(&json, "api_id");
    let mut details = ProviderError::new(NAME).http_status(status);
    if let Some(id) = api_id {
        details = details.request_id(id);
    }
    match status_class(status) {
        StatusClass::Success => success(accepted(&json), details),
        StatusClass::ClientError => {
            // A 429 is Plivo's only when its body carries an api_id; anything else may be a proxy.
            let category =
                if status == 429 && api_id.is_none() { Category::Request } else { rejection_category(status) };
            if let Some(message) = read_string(&json, "error") {
                details = details.message(message);
            }
            rejection(category, details, headers, now)
        }
        StatusClass::Other => unknown_for_status(details),
    }
}

fn accepted(json: &Value) -> Option<Accepted> {
    let id = json.get("message_uuid")?.get(0)?.as_str().filter(|id| !id.is_empty())?;
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
