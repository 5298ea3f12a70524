//! Bandwidth's responses: the created message, and the error table.
//!
//! Bandwidth documents that any 4xx or 5xx it answers means the message was neither sent nor
//! billed. A 4xx is therefore a rejection; of the 5xx, only a 500 carrying Bandwidth's own error
//! body (`{type, description}`) is one, since a 502, 503 or 504, or a 5xx without that body, may
//! come from something in between after Bandwidth took the message (unknown).

use std::borrow::Cow;
use std::time::SystemTime;

use http::HeaderMap;
use serde::Deserialize;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome, Rejection};
use crate::error::ProviderError;
use crate::http::{ResponseBody, classify_response, header_str};
use crate::json::{self, Items, Text};

/// The category of a Bandwidth 4xx, by its error `type` first, then by status, and for a
/// `request-validation` by the field it names: the recipient (`to`) is a recipient rejection,
/// the sender (`from`) a sender one, the application (`applicationId`) the adapter's
/// configuration (auth); any other field a request rejection. `unauthorized` and `forbidden` are
/// credentials (auth); 404 is a path Bandwidth does not know, which names the account id of the
/// adapter's configuration (auth); 429 is a rate limit (`max-message-queue-size-exceeded` or
/// any other type).
#[must_use]
pub fn rejection_category(status: u16, kind: Option<&str>, fields: &[&str]) -> Category {
    match (status, kind) {
        (429, _) | (_, Some("max-message-queue-size-exceeded")) => Category::RateLimited,
        (_, Some("unauthorized" | "forbidden")) | (401 | 403 | 404, _) => Category::Auth,
        (_, Some("request-validation")) | (400, _) => field_category(fields),
        _ => Category::Request,
    }
}

/// The category a validation error's named fields give (the first that names one of ours).
fn field_category(fields: &[&str]) -> Category {
    for field in fields {
        let name = field.split(['[', '.']).next().unwrap_or_default();
        match name {
            "to" => return Category::Recipient,
            "from" => return Category::Sender,
            "applicationId" => return Category::Auth,
            _ => {}
        }
    }
    Category::Request
}

/// Classifies a response to `POST /api/v2/users/{accountId}/messages`.
#[must_use]
pub fn interpret(status: u16, headers: &HeaderMap, body: &[u8], now: SystemTime) -> Outcome {
    if status == 500
        && let Some(rejection) = internal_error(headers, body)
    {
        return Outcome::Rejected(rejection);
    }
    classify_response::<Response<'_>>(status, headers, body, now)
}

/// A 500 with Bandwidth's error body: a rejection by its documented contract (nothing sent,
/// nothing billed), of category `unreachable` (Bandwidth could not take it now; another
/// provider may). `None` for any other body.
fn internal_error(headers: &HeaderMap, body: &[u8]) -> Option<Rejection> {
    let response: Response<'_> = json::read(body).ok().flatten()?;
    let kind = response.kind.non_empty()?;
    response.description.0.as_ref()?;
    let mut details = ProviderError::new(NAME).http_status(500).code(kind);
    if let Some(id) = response.request_id(headers) {
        details = details.request_id(id);
    }
    if let Some(message) = response.message() {
        details = details.message(message);
    }
    Some(Rejection { category: Category::Unreachable, retry_after: None, details })
}

/// What [`interpret`] reads of a response: the message's `id`, or the error's `type`,
/// `description` and the names of its `fieldErrors`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Response<'a> {
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(borrow)]
    description: Text<'a>,
    #[serde(borrow, rename = "fieldErrors")]
    field_errors: Items<FieldError<'a>>,
}

/// One of a validation error's `fieldErrors`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FieldError<'a> {
    #[serde(borrow, rename = "fieldName")]
    field_name: Text<'a>,
}

impl<'a> ResponseBody<'a> for Response<'a> {
    const PROVIDER: &'static str = NAME;

    /// Bandwidth documents no request id; an `x-request-id` header (a proxy's, say) is kept.
    fn request_id<'s>(&'s self, headers: &'s HeaderMap) -> Option<&'s str> {
        header_str(headers, "x-request-id")
    }

    /// The message `id`: queued at Bandwidth (its callbacks tell the rest).
    fn accepted(&self) -> Option<Accepted> {
        let id = self.id.non_empty()?;
        Some(Accepted { provider_id: id.to_owned(), delivery: Delivery::Queued })
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        self.kind.non_empty().map(Cow::Borrowed)
    }

    fn message(&self) -> Option<&str> {
        self.description.non_empty()
    }

    fn category(&self, status: u16, code: Option<&str>) -> Category {
        let fields: Vec<&str> = self.field_errors.0.iter().filter_map(|f| f.field_name.non_empty()).collect();
        rejection_category(status, code, &fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::{Unknown, UnknownReason};

    fn classify(status: u16, body: &str) -> Outcome {
        interpret(status, &HeaderMap::new(), body.as_bytes(), SystemTime::UNIX_EPOCH)
    }

    /// Bandwidth's documented message (API specification: `message` schema, its examples).
    const CREATED: &str = r#"{"id":"1589228074636lm4k2je7j7jklbn2","owner":"+15554443333","applicationId":"93de2206-9669-4e07-948d-329f4b722ee2","time":"2024-12-02T20:15:57.278Z","segmentCount":1,"direction":"out","to":["+15552223333"],"from":"+15553332222","text":"Hello world","tag":"custom string","priority":"default","expiration":"2021-02-01T11:29:18-05:00"}"#;

    #[test]
    fn t301_a_created_message_is_accepted_and_queued() {
        let Outcome::Accepted(accepted) = classify(202, CREATED) else { panic!() };
        assert_eq!(accepted.provider_id, "1589228074636lm4k2je7j7jklbn2");
        assert_eq!(accepted.delivery, Delivery::Queued);
    }

    #[test]
    fn t301_a_success_without_an_id_is_unknown() {
        for body in ["{}", r#"{"id":""}"#, "not json", r#"{"id":"a","id":"b"}"#, "[]"] {
            assert!(
                matches!(
                    classify(202, body),
                    Outcome::Unknown(Unknown { reason: UnknownReason::MalformedResponse, .. })
                ),
                "{body}"
            );
        }
    }

    #[test]
    fn t302_the_error_table() {
        let validation = |field: &str| {
            format!(
                r#"{{"type":"request-validation","description":"Your request could not be accepted.","fieldErrors":[{{"fieldName":"{field}","description":"bad"}}]}}"#
            )
        };
        let rows: Vec<(u16, String, Category)> = vec![
            (400, validation("to"), Category::Recipient),
            (400, validation("to[0]"), Category::Recipient),
            (400, validation("from"), Category::Sender),
            (400, validation("applicationId"), Category::Auth),
            (400, validation("text"), Category::Request),
            (400, r#"{"type":"request-validation","description":"x"}"#.into(), Category::Request),
            (401, r#"{"type":"unauthorized","description":"Authentication Failed"}"#.into(), Category::Auth),
            (403, r#"{"type":"forbidden","description":"Access Denied"}"#.into(), Category::Auth),
            (404, String::new(), Category::Auth),
            (405, String::new(), Category::Request),
            (406, String::new(), Category::Request),
            (415, r#"{"type":"unsupported-content-type","description":"x"}"#.into(), Category::Request),
            (429, r#"{"type":"max-message-queue-size-exceeded","description":"x"}"#.into(), Category::RateLimited),
            (429, String::new(), Category::RateLimited),
        ];
        for (status, body, category) in rows {
            let Outcome::Rejected(rejection) = classify(status, &body) else { panic!("{status} {body}") };
            assert_eq!(rejection.category, category, "{status} {body}");
        }
        let Outcome::Rejected(rejection) = classify(400, &validation("from")) else { panic!() };
        assert_eq!(
            (rejection.details.provider_code(), rejection.details.text()),
            (Some("request-validation"), Some("Your request could not be accepted."))
        );
    }

    #[test]
    fn t303_a_500_with_bandwidths_body_is_rejected_and_other_server_errors_unknown() {
        let body = r#"{"type":"internal-server-error","description":"An internal server error occurred."}"#;
        let Outcome::Rejected(rejection) = classify(500, body) else { panic!() };
        assert_eq!(rejection.category, Category::Unreachable);
        assert!(rejection.category.allows_failover());
        assert_eq!(rejection.details.provider_code(), Some("internal-server-error"));
        for (status, body) in [
            (500, ""),
            (500, "<html>Internal Server Error</html>"),
            (500, r#"{"type":"x"}"#),
            (500, r#"{"type":"","description":"x"}"#),
            (500, r#"{"type":"a","type":"b","description":"x"}"#),
            (502, body),
            (503, body),
            (504, body),
            (501, body),
        ] {
            let outcome = classify(status, body);
            assert!(
                matches!(outcome, Outcome::Unknown(Unknown { reason: UnknownReason::ServerError, .. })),
                "{status} {body}: {outcome:?}"
            );
        }
    }
}
