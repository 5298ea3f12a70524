//! Infobip's responses: the per-destination status of a 200 (group 5 REJECTED is a rejection),
//! the status groups shared with delivery reports and logs, and the 4xx error bodies (the
//! current `{errorCode, description, …}` and the legacy `{requestError:{serviceException}}`).

use std::borrow::Cow;
use std::time::SystemTime;

use http::HeaderMap;
use serde::Deserialize;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome, Unknown, UnknownReason};
use crate::error::ProviderError;
use crate::http::{ResponseBody, classify_response, header_str};
use crate::json::{self, Code, Items, Object, Text};

/// Infobip's status group `REJECTED`: refused before it could be sent.
pub const GROUP_REJECTED: u32 = 5;

/// A status number (`groupId`, `id`): a JSON number or a string of digits, up to `u32`.
pub(crate) fn number(code: &Code<'_>) -> Option<u32> {
    code.text().and_then(|text| text.parse().ok())
}

/// The delivery state of a status: by group, then by id within the group (`None` for a group the
/// facts do not cover). Group 0 (`OK`, the legacy `MESSAGE_ACCEPTED`) and group 1 are pending:
/// queued, except ids 3 and 7 (handed to the operator), sent; group 3 is delivered for id 5
/// (`DELIVERED_TO_HANDSET`) and sent for any other id (id 2 is `DELIVERED_TO_OPERATOR`); groups
/// 2 (`UNDELIVERABLE`), 4 (`EXPIRED`) and 5 (`REJECTED`) are undelivered.
#[must_use]
pub fn delivery(group: Option<u32>, id: Option<u32>) -> Option<Delivery> {
    match (group?, id) {
        (1, Some(3 | 7)) => Some(Delivery::Sent),
        (0 | 1, _) => Some(Delivery::Queued),
        (3, Some(5)) => Some(Delivery::Delivered),
        (3, _) => Some(Delivery::Sent),
        (2 | 4 | 5, _) => Some(Delivery::Undelivered),
        _ => None,
    }
}

/// The category of a destination in group 5 (REJECTED), from its status name: credits are the
/// account's, the source and a blocked sender the sender's, the destination the recipient's;
/// any other name the request's.
#[must_use]
pub fn rejected_status_category(name: Option<&str>) -> Category {
    match name {
        Some("REJECTED_NOT_ENOUGH_CREDITS") => Category::Account,
        Some("REJECTED_SOURCE" | "REJECTED_SENDER") => Category::Sender,
        Some("REJECTED_DESTINATION") => Category::Recipient,
        _ => Category::Request,
    }
}

/// The category of an Infobip 4xx: 429 with Infobip's rate-limit code (`E429`, legacy
/// `TOO_MANY_REQUESTS`) is a rate limit (a bare 429, a proxy's, is not: unknown); 401 and 403 are
/// the credentials; 404 is a base URL or path the account does not have (the configuration);
/// anything else is the request.
#[must_use]
pub fn rejection_category(status: u16, code: Option<&str>) -> Category {
    match (status, code) {
        (429, Some("E429" | "TOO_MANY_REQUESTS")) => Category::RateLimited,
        (401 | 403 | 404, _) => Category::Auth,
        _ => Category::Request,
    }
}

/// Classifies a response to `POST /sms/3/messages` of one destination. A 2xx is decided by that
/// destination's status: group 5 rejected (category by [`rejected_status_category`]), groups 0
/// to 4 accepted (the message exists), anything else (no destination, no status, another group,
/// no `messageId`, more than one destination) unknown. Other statuses follow the shared rules
/// with [`rejection_category`].
#[must_use]
pub fn interpret(status: u16, headers: &HeaderMap, body: &[u8], now: SystemTime) -> Outcome {
    if (200..300).contains(&status) {
        return success(status, headers, body);
    }
    classify_response::<ErrorBody<'_>>(status, headers, body, now)
}

/// The outcome a 2xx body proves.
fn success(status: u16, headers: &HeaderMap, body: &[u8]) -> Outcome {
    let request_id = header_str(headers, "x-request-id");
    let details = || {
        let details = ProviderError::new(NAME).http_status(status);
        match request_id {
            Some(id) => details.request_id(id),
            None => details,
        }
    };
    let malformed = || {
        Outcome::Unknown(Unknown { reason: UnknownReason::MalformedResponse, details: Some(details()), cause: None })
    };
    let Ok(Some(response)) = json::read::<SendResponse<'_>>(body) else { return malformed() };
    let [destination] = response.messages.0.as_slice() else { return malformed() };
    if !destination.status.present() {
        return malformed();
    }
    let state = &destination.status;
    let group = number(&state.group_id);
    if group == Some(GROUP_REJECTED) {
        let name = state.name.non_empty();
        let mut details = details();
        if let Some(name) = name {
            details = details.code(name);
        }
        if let Some(description) = state.description.non_empty() {
            details = details.message(description);
        }
        return Outcome::rejected(rejected_status_category(name), details);
    }
    match (delivery(group, number(&state.id)), destination.message_id.non_empty()) {
        (Some(delivery), Some(id)) => Outcome::Accepted(Accepted { provider_id: id.to_owned(), delivery }),
        _ => malformed(),
    }
}

/// The members of a 200 that decide it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SendResponse<'a> {
    #[serde(borrow)]
    messages: Items<Destination<'a>>,
}

/// One destination of a 200.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Destination<'a> {
    #[serde(borrow)]
    message_id: Text<'a>,
    #[serde(borrow)]
    status: Object<Status<'a>>,
}

/// A status object (send responses, delivery reports and logs).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Status<'a> {
    #[serde(borrow)]
    pub(crate) group_id: Code<'a>,
    #[serde(borrow)]
    pub(crate) id: Code<'a>,
    #[serde(borrow)]
    pub(crate) name: Text<'a>,
    #[serde(borrow)]
    pub(crate) description: Text<'a>,
}

/// What a 4xx says: the current error body, or the legacy one.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ErrorBody<'a> {
    #[serde(borrow)]
    error_code: Code<'a>,
    #[serde(borrow)]
    description: Text<'a>,
    #[serde(borrow)]
    request_error: Object<RequestError<'a>>,
}

/// The legacy `requestError`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct RequestError<'a> {
    #[serde(borrow)]
    service_exception: Object<ServiceException<'a>>,
}

/// The legacy `serviceException`: its `messageId` is the error code.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ServiceException<'a> {
    #[serde(borrow)]
    message_id: Text<'a>,
    #[serde(borrow)]
    text: Text<'a>,
}

impl<'a> ResponseBody<'a> for ErrorBody<'a> {
    const PROVIDER: &'static str = NAME;

    /// Infobip documents no request id header; an `x-request-id` (a proxy's) is kept.
    fn request_id<'s>(&'s self, headers: &'s HeaderMap) -> Option<&'s str> {
        header_str(headers, "x-request-id")
    }

    /// Never called for a 2xx ([`interpret`] decides those).
    fn accepted(&self) -> Option<Accepted> {
        None
    }

    fn code(&self) -> Option<Cow<'_, str>> {
        self.error_code
            .text()
            .or_else(|| self.request_error.service_exception.message_id.non_empty().map(Cow::Borrowed))
    }

    fn message(&self) -> Option<&str> {
        self.description.non_empty().or_else(|| self.request_error.service_exception.text.non_empty())
    }

    fn category(&self, status: u16, code: Option<&str>) -> Category {
        rejection_category(status, code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::summary;

    fn read(status: u16, body: &str) -> String {
        summary(&interpret(status, &HeaderMap::new(), body.as_bytes(), SystemTime::UNIX_EPOCH))
    }

    fn sent(group: &str, id: &str, name: &str) -> String {
        format!(
            r#"{{"bulkId":"b-1","messages":[{{"messageId":"sms-sdk-1","status":{{"groupId":{group},"groupName":"G","id":{id},"name":"{name}","description":"d"}},"destination":"14155550123","details":{{"messageCount":1}}}}]}}"#
        )
    }

    #[test]
    fn t293_a_pending_destination_is_accepted() {
        assert_eq!(read(200, &sent("1", "26", "PENDING_ACCEPTED")), "accepted sms-sdk-1 Queued");
        assert_eq!(read(200, &sent("1", "7", "PENDING_ENROUTE")), "accepted sms-sdk-1 Sent");
        assert_eq!(read(200, &sent("\"1\"", "\"26\"", "PENDING_ACCEPTED")), "accepted sms-sdk-1 Queued");
        assert_eq!(read(200, &sent("0", "0", "MESSAGE_ACCEPTED")), "accepted sms-sdk-1 Queued");
        assert_eq!(read(200, &sent("3", "5", "DELIVERED_TO_HANDSET")), "accepted sms-sdk-1 Delivered");
        assert_eq!(read(200, &sent("2", "9", "UNDELIVERABLE_NOT_DELIVERED")), "accepted sms-sdk-1 Undelivered");
    }

    #[test]
    fn t294_a_rejected_destination_in_a_200_is_a_rejection_by_its_status_name() {
        let rows = [
            ("REJECTED_NOT_ENOUGH_CREDITS", "account"),
            ("REJECTED_SOURCE", "sender"),
            ("REJECTED_SENDER", "sender"),
            ("REJECTED_DESTINATION", "recipient"),
            ("REJECTED_SOMETHING_NEW", "request"),
        ];
        for (name, category) in rows {
            let expected = format!(r#"rejected {category} code=Some("{name}") message=Some("d") id=None"#);
            assert_eq!(read(200, &sent("5", "12", name)), expected, "{name}");
        }
        // The group decides, never the name alone.
        assert_eq!(read(200, &sent("1", "26", "REJECTED_DESTINATION")), "accepted sms-sdk-1 Queued");
        let nameless = r#"{"messages":[{"messageId":"m","status":{"groupId":5}}]}"#;
        assert_eq!(read(200, nameless), "rejected request code=None message=None id=None");
    }

    #[test]
    fn t295_a_200_that_proves_nothing_is_unknown() {
        let malformed = "unknown MalformedResponse code=None message=None id=None";
        let bodies = [
            "{}".to_owned(),
            r#"{"messages":[]}"#.to_owned(),
            r#"{"messages":[{"messageId":"m"}]}"#.to_owned(),
            r#"{"messages":[{"messageId":"m","status":"PENDING"}]}"#.to_owned(),
            r#"{"messages":[{"messageId":"m","status":{"name":"PENDING_ACCEPTED"}}]}"#.to_owned(),
            sent("6", "1", "SOMETHING_NEW"),
            sent("1.5", "1", "PENDING_ACCEPTED"),
            sent("-1", "1", "PENDING_ACCEPTED"),
            r#"{"messages":[{"status":{"groupId":1,"id":26}}]}"#.to_owned(),
            r#"{"messages":[{"messageId":"a","status":{"groupId":1}},{"messageId":"b","status":{"groupId":1}}]}"#
                .to_owned(),
            r#"{"messages":[{"messageId":"m","status":{"groupId":1,"groupId":5}}]}"#.to_owned(),
            "not json".to_owned(),
        ];
        for body in &bodies {
            assert_eq!(read(200, body), malformed, "{body}");
        }
    }

    #[test]
    fn t296_the_error_table() {
        let rows: &[(u16, &str, &str)] = &[
            (
                400,
                r#"{"errorCode":"E400","description":"Request cannot be processed.","action":"Check the syntax.","violations":[{"property":"messages[0].destinations","violation":"must not be empty"}],"resources":[]}"#,
                r#"rejected request code=Some("E400") message=Some("Request cannot be processed.") id=None"#,
            ),
            (
                400,
                r#"{"requestError":{"serviceException":{"messageId":"BAD_REQUEST","text":"Bad request"}}}"#,
                r#"rejected request code=Some("BAD_REQUEST") message=Some("Bad request") id=None"#,
            ),
            (
                401,
                r#"{"errorCode":"E401","description":"Unauthorized."}"#,
                r#"rejected auth code=Some("E401") message=Some("Unauthorized.") id=None"#,
            ),
            (
                401,
                r#"{"requestError":{"serviceException":{"messageId":"UNAUTHORIZED","text":"Invalid login details"}}}"#,
                r#"rejected auth code=Some("UNAUTHORIZED") message=Some("Invalid login details") id=None"#,
            ),
            (403, "", "rejected auth code=None message=None id=None"),
            (404, "", "rejected auth code=None message=None id=None"),
            (
                429,
                r#"{"errorCode":"E429","description":"Too many requests."}"#,
                r#"rejected rate_limited code=Some("E429") message=Some("Too many requests.") id=None"#,
            ),
            (
                429,
                r#"{"requestError":{"serviceException":{"messageId":"TOO_MANY_REQUESTS","text":"Too many requests"}}}"#,
                r#"rejected rate_limited code=Some("TOO_MANY_REQUESTS") message=Some("Too many requests") id=None"#,
            ),
            // A bare 429 (a proxy's) proves nothing.
            (429, "", "unknown UnexpectedStatus code=None message=None id=None"),
        ];
        for (status, body, expected) in rows {
            assert_eq!(read(*status, body), *expected, "{status} {body}");
        }
    }

    #[test]
    fn t296_retry_after_is_kept_for_a_rate_limit() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "7".parse().unwrap());
        let outcome = interpret(429, &headers, br#"{"errorCode":"E429"}"#, SystemTime::UNIX_EPOCH);
        let Outcome::Rejected(rejection) = outcome else { panic!("{outcome:?}") };
        assert_eq!(rejection.retry_after, Some(std::time::Duration::from_secs(7)));
    }

    #[test]
    fn t297_server_errors_are_unknown() {
        for status in [500, 502, 503, 504] {
            assert_eq!(
                read(status, r#"{"errorCode":"E500","description":"Internal error"}"#),
                "unknown ServerError code=None message=None id=None",
                "{status}"
            );
        }
    }

    #[test]
    fn delivery_by_group_and_id() {
        assert_eq!(delivery(Some(1), Some(26)), Some(Delivery::Queued));
        assert_eq!(delivery(Some(1), Some(3)), Some(Delivery::Sent));
        assert_eq!(delivery(Some(3), Some(2)), Some(Delivery::Sent));
        assert_eq!(delivery(Some(3), Some(5)), Some(Delivery::Delivered));
        assert_eq!(delivery(Some(4), Some(15)), Some(Delivery::Undelivered));
        assert_eq!(delivery(Some(5), None), Some(Delivery::Undelivered));
        assert_eq!(delivery(Some(6), Some(1)), None);
        assert_eq!(delivery(None, Some(5)), None);
    }
}
