//! Infobip (SMS API v3, `POST /sms/3/messages`): JSON messages of one destination with
//! `Authorization: App <key>`, the per-destination status of a 200, `{errorCode, description}`
//! errors, delivery reports and `MO_JSON_2` inbound messages (`{results:[…]}`), and the message
//! logs (`GET /sms/3/logs`).
//!
//! Infobip reports what it refuses for a destination in the 200 itself: the destination's status
//! is in group 5 (REJECTED), with a name the library maps to a category. So every magic
//! rejection is a 200 whose destination is rejected: `REJECTED_DESTINATION` for a recipient it
//! cannot take (`recipient`), `REJECTED_SOURCE` for a sender that cannot route there and
//! `REJECTED_SENDER` for a malformed sender (`sender`), `REJECTED_NOT_ENOUGH_CREDITS` for a
//! destination the account cannot send to (`account`), and `REJECTED_DND` for an opt-out, which
//! the library does not map to a category of its own (`request`).
//!
//! Infobip signs no callback: the emulator sends every webhook with its fixed Basic credentials
//! ([`INFOBIP_WEBHOOK_USER`], [`INFOBIP_WEBHOOK_PASSWORD`]), which `InfobipWebhook::basic`
//! checks; a token in the callback URL (`sms_sdk_token`) simply travels in the URL.

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};
use time::OffsetDateTime;

use super::wire::{base64_standard, hex, status_code, string_field, with_plus, without_plus};
use super::{AuthRequest, ErrorReply, Failure, Field, Inbound, SendRequest, Signer, Step, Webhook};
use crate::credentials::{INFOBIP_API_KEY, INFOBIP_WEBHOOK_PASSWORD, INFOBIP_WEBHOOK_USER};
use crate::magic::{Reason, codes};
use crate::model::{Provider, ReceivedMessage, Status};
use crate::respond::JSON;

/// The longest `messageId` the emulator takes (Infobip documents up to 200 characters).
const MAX_MESSAGE_ID: usize = 200;
/// The default number of log entries answered, and the most.
const LOGS_LIMIT: (usize, usize) = (50, 1000);

/// An Infobip status: group id and name, id and name, description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InfobipStatus {
    /// `groupId`.
    pub(crate) group_id: u32,
    /// `groupName`.
    pub(crate) group_name: &'static str,
    /// `id`.
    pub(crate) id: u32,
    /// `name`.
    pub(crate) name: &'static str,
    /// `description`.
    pub(crate) description: &'static str,
}

impl InfobipStatus {
    fn json(self) -> Value {
        json!({
            "groupId": self.group_id,
            "groupName": self.group_name,
            "id": self.id,
            "name": self.name,
            "description": self.description,
        })
    }
}

/// Group 1 PENDING, id 26: accepted (the answer to a send).
const PENDING_ACCEPTED: InfobipStatus = InfobipStatus {
    group_id: 1,
    group_name: "PENDING",
    id: 26,
    name: "PENDING_ACCEPTED",
    description: "Message sent to next instance",
};
/// Group 3 DELIVERED, id 2: handed to the operator (the library's `sent`).
const DELIVERED_TO_OPERATOR: InfobipStatus = InfobipStatus {
    group_id: 3,
    group_name: "DELIVERED",
    id: 2,
    name: "DELIVERED_TO_OPERATOR",
    description: "Message delivered to operator",
};
/// Group 3 DELIVERED, id 5: delivered.
const DELIVERED_TO_HANDSET: InfobipStatus = InfobipStatus {
    group_id: 3,
    group_name: "DELIVERED",
    id: 5,
    name: "DELIVERED_TO_HANDSET",
    description: "Message delivered to handset",
};
/// Group 2 UNDELIVERABLE, id 9: not delivered.
const UNDELIVERABLE: InfobipStatus = InfobipStatus {
    group_id: 2,
    group_name: "UNDELIVERABLE",
    id: 9,
    name: "UNDELIVERABLE_NOT_DELIVERED",
    description: "Message sent not delivered",
};

/// The group 5 (REJECTED) status Infobip answers `reason` with, in the 200 of the send. The ids
/// are illustrative (the library classifies by group, then name, never by id).
pub(crate) const fn rejected_status(reason: Reason) -> InfobipStatus {
    let (id, name, description) = match reason {
        Reason::InvalidNumber => (14, "REJECTED_DESTINATION", "Invalid destination address."),
        Reason::CannotReceive => (14, "REJECTED_DESTINATION", "The destination cannot receive SMS."),
        Reason::SenderCannotRoute => (11, "REJECTED_SOURCE", "The sender cannot be used for this destination."),
        Reason::InvalidSender => (13, "REJECTED_SENDER", "The sender is not valid."),
        Reason::NoPermission => (12, "REJECTED_NOT_ENOUGH_CREDITS", "The account cannot send to this destination."),
        Reason::OptedOut => (10, "REJECTED_DND", "The destination is on the do-not-disturb list."),
    };
    InfobipStatus { group_id: 5, group_name: "REJECTED", id, name, description }
}

/// `Authorization: App <key>` with the emulator's key (the scheme case-insensitive).
pub(super) fn authenticate(request: &AuthRequest<'_>) -> bool {
    let Some(value) = request.headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    value
        .trim()
        .split_once(' ')
        .is_some_and(|(scheme, key)| scheme.eq_ignore_ascii_case("app") && key.trim() == INFOBIP_API_KEY)
}

/// Reads the JSON body: one message of one destination, the only kind the emulator creates.
pub(super) fn parse(body: &[u8]) -> Option<SendRequest> {
    let json: Value = serde_json::from_slice(body).ok().filter(Value::is_object)?;
    let messages = json.get("messages").and_then(Value::as_array);
    let message = messages.and_then(|m| m.first()).cloned().unwrap_or(Value::Null);
    let destinations = message.get("destinations").and_then(Value::as_array);
    let destination = destinations.and_then(|d| d.first()).cloned().unwrap_or(Value::Null);
    let message_id = string_field(&destination, "messageId");
    let invalid = if messages.is_some_and(|m| m.len() > 1) {
        Some("messages")
    } else if destinations.is_some_and(|d| d.len() > 1) {
        Some("messages[0].destinations")
    } else if destination.get("messageId").is_some_and(|id| !id.is_string())
        || message_id.as_deref().is_some_and(|id| id.is_empty() || id.chars().count() > MAX_MESSAGE_ID)
    {
        Some("messages[0].destinations[0].messageId")
    } else {
        None
    };
    let webhooks = message.get("webhooks").cloned().unwrap_or(Value::Null);
    Some(SendRequest {
        to: string_field(&destination, "to"),
        from: string_field(&message, "sender"),
        service_sender: false,
        account_sender: false,
        body: message.get("content").and_then(|content| string_field(content, "text")),
        media_urls: Vec::new(),
        callback_url: webhooks.get("delivery").and_then(|delivery| string_field(delivery, "url")),
        client_ref: string_field(&webhooks, "callbackData"),
        context: None,
        message_type: None,
        message_id,
        invalid,
    })
}

fn field_property(field: Field) -> &'static str {
    match field {
        Field::To => "messages[0].destinations[0].to",
        Field::From => "messages[0].sender",
        Field::Body => "messages[0].content.text",
    }
}

/// Infobip's error body: `{errorCode, description, action, violations, resources}`.
fn error_body(status: u16, code: &str, description: &str, action: &str, violations: &Value) -> ErrorReply {
    ErrorReply {
        status: status_code(status),
        code: Some(code.to_owned()),
        body: json!({
            "errorCode": code,
            "description": description,
            "action": action,
            "violations": violations,
            "resources": [],
        }),
        content_type: JSON,
        headers: Vec::new(),
    }
}

fn violation(property: &str, text: &str) -> Value {
    json!([{"property": property, "violation": text}])
}

pub(super) fn error(failure: Failure) -> ErrorReply {
    let bad = "Request cannot be processed.";
    let check = "Check the syntax, violations and adjust the request.";
    match failure {
        Failure::Auth(_) => error_body(401, "E401", "Invalid login details.", "Check the API key.", &json!([])),
        Failure::Unreadable => error_body(400, "E400", bad, check, &violation("", "the body is not a JSON object")),
        // Infobip documents no 413: its error body, at the status a proxy in front would answer.
        Failure::TooLarge { limit } => error_body(
            413,
            "E413",
            &format!("The request body is over {limit} bytes."),
            "Send a smaller request.",
            &json!([]),
        ),
        Failure::Missing(field) => {
            error_body(400, "E400", bad, check, &violation(field_property(field), "must not be blank"))
        }
        Failure::Invalid(name) => error_body(400, "E400", bad, check, &violation(name, "the value is not accepted")),
        // Never answered as an error (see `rejected`); a 400 of the same reason if it were.
        Failure::Reject(reason) => {
            error_body(400, "E400", bad, check, &violation(field_property(Field::To), codes(reason).detail))
        }
        Failure::RateLimited => {
            error_body(429, "E429", "Too many requests.", "Reduce the request rate and try again later.", &json!([]))
        }
        Failure::ServerError => error_body(500, "E500", "Something went wrong.", "Try again later.", &json!([])),
        Failure::NotFound => error_body(404, "E404", "Resource not found.", "Check the request.", &json!([])),
    }
}

/// A bulk id for a message id: the same for every answer and report of the message.
fn bulk_id(message_id: &str) -> String {
    let digest = Sha256::digest(message_id.as_bytes());
    hex(digest.get(..10).unwrap_or_default())
}

/// The send answer of one destination with `status`.
fn send_answer(message_id: &str, to: &str, status: InfobipStatus) -> Value {
    json!({
        "bulkId": bulk_id(message_id),
        "messages": [{
            "messageId": message_id,
            "status": status.json(),
            "destination": without_plus(to),
            "details": {"messageCount": 1},
        }],
    })
}

/// The answer to an accepted send: the destination pending (group 1, `PENDING_ACCEPTED`).
pub(super) fn accepted(message: &ReceivedMessage) -> Value {
    let id = message.id.as_deref().unwrap_or_default();
    send_answer(id, message.to.as_deref().unwrap_or_default(), PENDING_ACCEPTED)
}

/// Infobip's answer to a destination it refuses for `reason`: a 200 whose destination's status
/// is in group 5 (REJECTED), with the request's `messageId` (or one of the emulator's).
pub(super) fn rejected(reason: Reason, message: &ReceivedMessage) -> ErrorReply {
    let status = rejected_status(reason);
    let id = message.chosen_id.clone().unwrap_or_else(|| super::new_uuid().to_string());
    ErrorReply {
        status: http::StatusCode::OK,
        code: Some(status.name.to_owned()),
        body: send_answer(&id, message.to.as_deref().unwrap_or_default(), status),
        content_type: JSON,
        headers: Vec::new(),
    }
}

/// Infobip's time: `yyyy-MM-dd'T'HH:mm:ss.SSS+0000` (UTC).
fn infobip_time(at: OffsetDateTime) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]+0000");
    at.checked_to_offset(time::UtcOffset::UTC).unwrap_or(at).format(&format).unwrap_or_default()
}

/// The status a message's inspection status is reported with (reports and logs).
fn status_of(status: Status) -> InfobipStatus {
    match status {
        Status::Sent => DELIVERED_TO_OPERATOR,
        Status::Delivered => DELIVERED_TO_HANDSET,
        Status::Undelivered => UNDELIVERABLE,
        Status::Queued
        | Status::Rejected
        | Status::RateLimited
        | Status::ServerError
        | Status::NoResponse
        | Status::ConnectionReset
        | Status::UnreadableResponse => PENDING_ACCEPTED,
    }
}

/// The `error` object of a report: none, or an absent subscriber for an undelivered message.
fn error_object(undelivered: bool) -> Value {
    if undelivered {
        json!({"groupId": 1, "groupName": "HANDSET_ERRORS", "id": 27, "name": "EC_ABSENT_SUBSCRIBER",
               "description": "Absent Subscriber", "permanent": false})
    } else {
        json!({"groupId": 0, "groupName": "OK", "id": 0, "name": "NO_ERROR", "description": "No Error",
               "permanent": false})
    }
}

/// A callback with the emulator's Basic credentials (Infobip signs nothing).
fn posted(url: &str, event: &str, body: &Value) -> Webhook {
    let credentials = format!("{INFOBIP_WEBHOOK_USER}:{INFOBIP_WEBHOOK_PASSWORD}");
    let authorization = format!("Basic {}", base64_standard(credentials.as_bytes()));
    Webhook {
        url: url.to_owned(),
        event: event.to_owned(),
        content_type: "application/json",
        headers: vec![("authorization", authorization)],
        body: body.to_string().into_bytes(),
    }
}

/// A delivery report of one result: `DELIVERED_TO_OPERATOR` (sent), then `DELIVERED_TO_HANDSET`
/// or `UNDELIVERABLE_NOT_DELIVERED` (with `EC_ABSENT_SUBSCRIBER`); `callbackData` echoed.
pub(super) fn status_webhook(message: &ReceivedMessage, step: Step, url: &str, signer: Signer<'_>) -> Webhook {
    let status = status_of(step.status());
    let id = message.id.clone().unwrap_or_default();
    let mut result = Map::new();
    result.insert("bulkId".into(), bulk_id(&id).into());
    result.insert("messageId".into(), id.into());
    result.insert("to".into(), without_plus(message.to.as_deref().unwrap_or_default()).into());
    result.insert("sender".into(), message.from.clone().unwrap_or_default().into());
    result.insert("sentAt".into(), infobip_time(message.received_at).into());
    result.insert("doneAt".into(), infobip_time(signer.now).into());
    result.insert("smsCount".into(), 1.into());
    result.insert("mccMnc".into(), "310260".into());
    if let Some(data) = &message.client_ref {
        result.insert("callbackData".into(), data.clone().into());
    }
    result.insert("price".into(), json!({"pricePerMessage": 0.01, "currency": "EUR"}));
    result.insert("status".into(), status.json());
    result.insert("error".into(), error_object(step == Step::Undelivered));
    posted(url, status.name, &json!({"results": [Value::Object(result)]}))
}

/// An inbound message as Infobip forwards it (`MO_JSON_2`).
pub(super) fn inbound_webhook(inbound: &Inbound, url: &str, signer: Signer<'_>) -> Webhook {
    let keyword = inbound.text.split_whitespace().next().unwrap_or_default().to_uppercase();
    let clean = inbound.text.split_once(char::is_whitespace).map_or("", |(_, rest)| rest.trim());
    let body = json!({
        "results": [{
            "messageId": inbound.id,
            "from": without_plus(&inbound.from),
            "to": without_plus(&inbound.to),
            "text": inbound.text,
            "cleanText": clean,
            "keyword": keyword,
            "receivedAt": infobip_time(signer.now),
            "smsCount": 1,
            "price": {"pricePerMessage": 0, "currency": "EUR"},
        }],
        "messageCount": 1,
        "pendingMessageCount": 0,
    });
    posted(url, "MO", &body)
}

/// A time of a logs filter: RFC 3339 or Infobip's own format.
fn filter_time(text: &str) -> Option<OffsetDateTime> {
    let rfc3339 = &time::format_description::well_known::Rfc3339;
    OffsetDateTime::parse(text, rfc3339).ok().or_else(|| {
        let split = text.len().checked_sub(5)?;
        let (head, offset) = (text.get(..split)?, text.get(split..)?);
        let (hours, minutes) = (offset.get(..3)?, offset.get(3..)?);
        OffsetDateTime::parse(&format!("{head}{hours}:{minutes}"), rfc3339).ok()
    })
}

/// One log entry: the message and its current status.
fn log_entry(message: &ReceivedMessage) -> Value {
    let id = message.id.clone().unwrap_or_default();
    let status = status_of(message.status);
    json!({
        "sender": message.from.clone().unwrap_or_default(),
        "destination": without_plus(message.to.as_deref().unwrap_or_default()),
        "bulkId": bulk_id(&id),
        "messageId": id,
        "sentAt": infobip_time(message.received_at),
        "doneAt": infobip_time(message.received_at),
        "messageCount": 1,
        "price": {"pricePerMessage": 0.01, "currency": "EUR"},
        "status": status.json(),
        "error": error_object(message.status == Status::Undelivered),
        "content": {"text": message.body.clone().unwrap_or_default()},
    })
}

/// `GET /sms/3/logs`: the created messages, newest first, filtered by `messageId`, `bulkId`,
/// `destination` (with or without its `+`), `sender`, `sentSince` and `sentUntil` (RFC 3339 or
/// Infobip's time; an unreadable one matches nothing); at most `limit` (≤ 1000, default 50).
pub(crate) fn logs(messages: &[ReceivedMessage], query: &str) -> Value {
    let filters: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let limit = filters
        .iter()
        .find(|(name, _)| name == "limit")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(LOGS_LIMIT.0)
        .clamp(1, LOGS_LIMIT.1);
    let keep = |message: &ReceivedMessage| {
        let id = message.id.as_deref().unwrap_or_default();
        filters.iter().all(|(name, value)| match name.as_str() {
            "messageId" => id == value,
            "bulkId" => bulk_id(id) == *value,
            "destination" => message.to.as_deref() == Some(with_plus(value).as_str()),
            "sender" => message.from.as_deref() == Some(value.as_str()),
            "sentSince" => filter_time(value).is_some_and(|since| message.received_at >= since),
            "sentUntil" => filter_time(value).is_some_and(|until| message.received_at <= until),
            _ => true,
        })
    };
    let results: Vec<Value> = messages
        .iter()
        .rev()
        .filter(|m| m.provider == Provider::Infobip && m.id.is_some() && keep(m))
        .take(limit)
        .map(log_entry)
        .collect();
    json!({"results": results})
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use http::HeaderMap;
    use sms_sdk::Category;
    use sms_sdk::adapter::Outcome;
    use sms_sdk::provider::infobip::__private::{interpret, rejected_status_category, rejection_category};

    use super::*;

    const REASONS: [Reason; 6] = [
        Reason::InvalidNumber,
        Reason::CannotReceive,
        Reason::SenderCannotRoute,
        Reason::InvalidSender,
        Reason::NoPermission,
        Reason::OptedOut,
    ];

    fn message(to: &str) -> ReceivedMessage {
        let mut message = ReceivedMessage::new(Provider::Infobip, OffsetDateTime::now_utc());
        message.to = Some(to.into());
        message.from = Some("+15005550006".into());
        message
    }

    #[test]
    fn the_request_is_read_as_the_adapter_sends_it() {
        let body = r#"{"messages":[{"sender":"+15005550006","destinations":[{"to":"14155550123","messageId":"sms-sdk-1"}],
            "content":{"text":"hi"},"webhooks":{"delivery":{"url":"https://h/x"},"callbackData":"ref"}}]}"#;
        let request = parse(body.as_bytes()).expect("a JSON object");
        assert_eq!(request.to.as_deref(), Some("14155550123"));
        assert_eq!(request.message_id.as_deref(), Some("sms-sdk-1"));
        assert_eq!(request.callback_url.as_deref(), Some("https://h/x"));
        assert_eq!(request.client_ref.as_deref(), Some("ref"));
        assert_eq!(request.invalid, None);
        let two = r#"{"messages":[{"destinations":[{"to":"1"},{"to":"2"}]}]}"#;
        assert_eq!(parse(two.as_bytes()).and_then(|r| r.invalid), Some("messages[0].destinations"));
        let numeric = r#"{"messages":[{"destinations":[{"to":"1","messageId":5}]}]}"#;
        assert!(parse(numeric.as_bytes()).and_then(|r| r.invalid).is_some());
        assert!(parse(b"[]").is_none());
        assert_eq!(parse(b"{}").and_then(|r| r.to), None);
    }

    #[test]
    fn every_answer_means_to_the_library_what_the_magic_table_says() {
        for reason in REASONS {
            let reply = rejected(reason, &message("+15005550001"));
            let body = reply.body.to_string();
            let outcome = interpret(200, &HeaderMap::new(), body.as_bytes(), SystemTime::now());
            let Outcome::Rejected(rejection) = outcome else { panic!("{reason:?}: {outcome:?}") };
            assert_eq!(rejection.category, reason.category(Provider::Infobip), "{reason:?}");
            assert_eq!(rejected_status_category(Some(rejected_status(reason).name)), rejection.category);
        }
        let category = |failure| {
            let reply = error(failure);
            rejection_category(reply.status.as_u16(), reply.code.as_deref())
        };
        assert_eq!(category(Failure::Auth(super::super::Denied::Credentials)), Category::Auth);
        assert_eq!(category(Failure::Missing(Field::Body)), Category::Request);
        assert_eq!(category(Failure::RateLimited), Category::RateLimited);
        assert_eq!(error(Failure::ServerError).status.as_u16(), 500);
        let mut created = message("+14155550123");
        created.id = Some("sms-sdk-2".into());
        let body = accepted(&created).to_string();
        let outcome = interpret(200, &HeaderMap::new(), body.as_bytes(), SystemTime::now());
        assert!(matches!(outcome, Outcome::Accepted(ref a) if a.provider_id == "sms-sdk-2"), "{outcome:?}");
    }

    #[test]
    fn callbacks_verify_with_the_library_and_times_read_back() {
        let keys = crate::keys::keys().expect("the fixed keys");
        let now = OffsetDateTime::now_utc();
        let signer = Signer { keys, now };
        let mut sent = message("+14155550123");
        sent.id = Some("sms-sdk-3".into());
        sent.client_ref = Some("ref-3".into());
        let hook = status_webhook(&sent, Step::Undelivered, "https://hooks.example/infobip", signer);
        let verifier =
            sms_sdk::provider::infobip::InfobipWebhook::basic(INFOBIP_WEBHOOK_USER, INFOBIP_WEBHOOK_PASSWORD)
                .expect("a verifier");
        let mut headers = HeaderMap::new();
        for (name, value) in &hook.headers {
            headers.insert(*name, value.parse().expect("a header value"));
        }
        let request =
            sms_sdk::webhook::WebhookRequest { method: "POST", url: &hook.url, headers: &headers, body: &hook.body };
        let events =
            sms_sdk::webhook::WebhookVerifier::verify_all_at(&verifier, &request, SystemTime::now()).expect("verifies");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].type_name(), "message.undelivered");
        assert!(filter_time(&infobip_time(now)).is_some());
        assert_eq!(filter_time("2027-01-15T08:00:00.000Z").map(OffsetDateTime::unix_timestamp), Some(1_800_000_000));
    }

    #[test]
    fn the_logs_filter_by_id_destination_and_time() {
        let at = OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("a time");
        let entry = |id: &str, to: &str| {
            let mut message = ReceivedMessage::new(Provider::Infobip, at);
            message.id = Some(id.into());
            message.to = Some(to.into());
            message
        };
        let messages = [entry("a", "+1415"), entry("b", "+1416"), entry("c", "+1415")];
        let ids = |query: &str| -> Vec<String> {
            let logs = logs(&messages, query);
            let results = logs["results"].as_array().cloned().unwrap_or_default();
            results.iter().filter_map(|r| r["messageId"].as_str().map(str::to_owned)).collect()
        };
        assert_eq!(ids(""), ["c", "b", "a"]);
        assert_eq!(ids("messageId=b"), ["b"]);
        assert_eq!(ids("destination=1415"), ["c", "a"]);
        assert_eq!(ids("sentSince=2027-01-15T08%3A00%3A00.000Z&limit=1"), ["c"]);
        assert!(ids("sentSince=2027-01-15T08%3A00%3A01.000Z").is_empty());
        assert!(ids("sentSince=garbage").is_empty());
    }
}
