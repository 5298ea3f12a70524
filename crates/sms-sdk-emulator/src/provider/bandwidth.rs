//! Bandwidth (Messaging API v2, `POST /api/v2/users/{accountId}/messages`): JSON messages of one
//! recipient owned by the emulator's Messaging application, HTTP Basic with the API user or an
//! OAuth 2.0 token (`POST /api/v1/oauth2/token`), `{type, description, fieldErrors}` errors,
//! callbacks as JSON arrays of events with the application's Basic callback credentials, and the
//! message list (`GET …/messages`).
//!
//! The library reads a Bandwidth 4xx by its `type`, then by the field a `request-validation`
//! names: the recipient (`to`) is `recipient`, the sender (`from`) `sender`, the application
//! (`applicationId`) `auth`. So a recipient the emulator refuses (invalid, cannot receive, opted
//! out) is a `request-validation` of `to`, a sender one of `from`, and a destination the account
//! may not reach is `forbidden` (403, `auth`: the account's configuration, which fails over). A
//! 500 with Bandwidth's own body is a rejection (`unreachable`) by Bandwidth's contract, so the
//! emulator's server error is a 503, which the library reads as unknown.

use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};
use time::OffsetDateTime;

use super::wire::{basic_credentials, bearer_token, hex, status_code, string_field, string_list, with_plus};
use super::{AuthRequest, ErrorReply, Failure, Field, Inbound, SendRequest, Signer, Step, Webhook};
use crate::credentials::{
    BANDWIDTH_ACCOUNT_ID, BANDWIDTH_API_PASSWORD, BANDWIDTH_API_USER, BANDWIDTH_APPLICATION_ID,
    BANDWIDTH_CALLBACK_PASSWORD, BANDWIDTH_CALLBACK_USER, BANDWIDTH_CLIENT_ID, BANDWIDTH_CLIENT_SECRET,
};
use crate::magic::{Reason, codes};
use crate::model::{Provider, ReceivedMessage, Status};
use crate::respond::JSON;

/// How long an access token of the emulator lasts: one hour.
pub(crate) const TOKEN_LIFETIME_SECS: i64 = 3600;
/// The `errorCode` of a `message-failed` callback: 4750, the carrier rejected the message.
const FAILED_CODE: u16 = 4750;
/// The default number of listed messages, and the most.
const LIST_LIMIT: (usize, usize) = (50, 1000);
/// Lowercase letters and digits, the tail of a Bandwidth message id.
const ID_ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// The API user's Basic credentials, or an access token the emulator issued, for the account in
/// the path.
pub(super) fn authenticate(request: &AuthRequest<'_>) -> bool {
    if request.account != Some(BANDWIDTH_ACCOUNT_ID) {
        return false;
    }
    if let Some((user, password)) = basic_credentials(request.headers) {
        return user == BANDWIDTH_API_USER && password == BANDWIDTH_API_PASSWORD;
    }
    bearer_token(request.headers).is_some_and(|token| valid_token(token, request.now))
}

/// The MAC of a token's expiry and nonce: the first 32 hex digits of a SHA-256 keyed with the
/// client secret.
fn token_mac(expires: i64, nonce: &str) -> String {
    let digest = Sha256::digest(format!("{BANDWIDTH_CLIENT_SECRET}.{expires}.{nonce}").as_bytes());
    hex(digest.get(..16).unwrap_or_default())
}

/// A new access token lasting [`TOKEN_LIFETIME_SECS`] from `now`: `bw.{expiry}.{nonce}.{mac}`,
/// checked without any state.
fn new_token(now: OffsetDateTime) -> String {
    let expires = now.unix_timestamp().saturating_add(TOKEN_LIFETIME_SECS);
    let nonce = format!("{:016x}", fastrand::u64(..));
    format!("bw.{expires}.{nonce}.{}", token_mac(expires, &nonce))
}

/// Whether `token` is one the emulator issued and it has not expired at `now`.
fn valid_token(token: &str, now: OffsetDateTime) -> bool {
    let mut parts = token.split('.');
    let (Some("bw"), Some(expires), Some(nonce), Some(mac), None) =
        (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let Ok(expires) = expires.parse::<i64>() else { return false };
    expires > now.unix_timestamp() && token_mac(expires, nonce) == mac
}

/// `POST /api/v1/oauth2/token`: the client credentials as Basic and
/// `grant_type=client_credentials` give `200 {access_token, token_type: "Bearer", expires_in}`;
/// other credentials `401 {"error": "invalid_client"}`, another grant
/// `400 {"error": "unsupported_grant_type"}` (OAuth 2.0's error bodies).
pub(crate) fn token(headers: &http::HeaderMap, body: &[u8], now: OffsetDateTime) -> (http::StatusCode, Value) {
    let client = basic_credentials(headers);
    if client.as_ref().is_none_or(|(id, secret)| id != BANDWIDTH_CLIENT_ID || secret != BANDWIDTH_CLIENT_SECRET) {
        return (http::StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
    }
    let grant = url::form_urlencoded::parse(body).find(|(name, _)| name == "grant_type").map(|(_, value)| value);
    if grant.as_deref() != Some("client_credentials") {
        return (http::StatusCode::BAD_REQUEST, json!({"error": "unsupported_grant_type"}));
    }
    let answer = json!({"access_token": new_token(now), "token_type": "Bearer", "expires_in": TOKEN_LIFETIME_SECS});
    (http::StatusCode::OK, answer)
}

/// A new id in Bandwidth's format (`1589228074636lm4k2je7j7jklbn2`): the time in milliseconds and
/// 16 lowercase letters and digits.
pub(super) fn new_id() -> String {
    let millis = OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    let tail: String = (0..16)
        .map(|_| char::from(ID_ALPHABET.get(fastrand::usize(..ID_ALPHABET.len())).copied().unwrap_or(b'a')))
        .collect();
    format!("{millis}{tail}")
}

/// Reads the JSON `messageRequest`: one recipient, the emulator's application, a `priority` of
/// `default` or `high`.
pub(super) fn parse(body: &[u8]) -> Option<SendRequest> {
    let json: Value = serde_json::from_slice(body).ok().filter(Value::is_object)?;
    let to = json.get("to");
    let recipients = to.and_then(Value::as_array);
    let priority = json.get("priority");
    let invalid = if to.is_some_and(|to| !to.is_array()) || recipients.is_some_and(|to| to.len() > 1) {
        // Group messages are not emulated.
        Some("to")
    } else if json.get("applicationId").and_then(Value::as_str) != Some(BANDWIDTH_APPLICATION_ID) {
        Some("applicationId")
    } else if priority.is_some_and(|p| !matches!(p.as_str(), Some("default" | "high"))) {
        Some("priority")
    } else {
        None
    };
    Some(SendRequest {
        to: recipients.and_then(|to| to.first()).and_then(Value::as_str).map(str::to_owned),
        from: string_field(&json, "from"),
        service_sender: false,
        account_sender: false,
        body: string_field(&json, "text"),
        media_urls: string_list(&json, "media"),
        callback_url: None,
        client_ref: string_field(&json, "tag"),
        context: None,
        message_type: None,
        message_id: None,
        invalid,
    })
}

/// The request member of a required field.
pub(super) const fn field_name(field: Field) -> &'static str {
    match field {
        Field::To => "to",
        Field::From => "from",
        Field::Body => "text",
    }
}

/// The category the library gives a `request-validation` naming `field` (`to[0]` is `to`).
pub(super) fn field_category(field: &str) -> &'static str {
    match field.split(['[', '.']).next().unwrap_or_default() {
        "to" => "recipient",
        "from" => "sender",
        "applicationId" => "auth",
        _ => "request",
    }
}

/// Bandwidth's error body `{type, description}`, and `fieldErrors` when there are any.
fn error_body(status: u16, kind: &str, description: &str, fields: &[(&str, &str)]) -> ErrorReply {
    let mut body = Map::new();
    body.insert("type".into(), kind.into());
    body.insert("description".into(), description.into());
    if !fields.is_empty() {
        let errors: Vec<Value> =
            fields.iter().map(|(name, text)| json!({"fieldName": name, "description": text})).collect();
        body.insert("fieldErrors".into(), errors.into());
    }
    ErrorReply {
        status: status_code(status),
        code: Some(kind.to_owned()),
        body: Value::Object(body),
        content_type: JSON,
        headers: Vec::new(),
    }
}

/// A `request-validation` 400 of one field.
fn validation(field: &str, text: &str) -> ErrorReply {
    error_body(400, "request-validation", "Your request could not be accepted.", &[(field, text)])
}

pub(super) fn error(failure: Failure) -> ErrorReply {
    match failure {
        Failure::Auth(_) => error_body(401, "unauthorized", "Authentication Failed", &[]),
        Failure::Unreadable => validation("messageRequest", "The request body is not a JSON object."),
        // Bandwidth documents no 413: its error body, at the status a proxy in front would answer.
        Failure::TooLarge { limit } => {
            error_body(413, "request-entity-too-large", &format!("The request body is over {limit} bytes."), &[])
        }
        Failure::Missing(field) => validation(field_name(field), "must not be empty"),
        Failure::Invalid(name) => validation(name, "The value is not accepted."),
        Failure::Reject(reason) => {
            let detail = codes(reason).detail;
            match reason {
                Reason::InvalidNumber | Reason::CannotReceive | Reason::OptedOut => validation("to", detail),
                Reason::SenderCannotRoute | Reason::InvalidSender => validation("from", detail),
                Reason::NoPermission => error_body(403, "forbidden", detail, &[]),
            }
        }
        Failure::RateLimited => error_body(
            429,
            "max-message-queue-size-exceeded",
            "The SMS queue for your account is full and cannot accept more messages right now.",
            &[],
        ),
        // Not a 500: Bandwidth's 500 with its own body is a rejection ("not sent"); a 503 is
        // unknown, as the emulator's server error means.
        Failure::ServerError => error_body(503, "service-unavailable", "The service is temporarily unavailable.", &[]),
        Failure::NotFound => error_body(404, "not-found", "The resource was not found.", &[]),
    }
}

/// A time as Bandwidth writes it (RFC 3339, UTC, milliseconds).
fn bandwidth_time(at: OffsetDateTime) -> String {
    sms_sdk::message::format_timestamp(at)
}

/// The message object: the send answer and the `message` of every callback.
fn message_object(message: &ReceivedMessage, text: bool) -> Value {
    let from = message.from.clone().unwrap_or_default();
    let mut object = Map::new();
    object.insert("id".into(), message.id.clone().unwrap_or_default().into());
    object.insert("owner".into(), from.clone().into());
    object.insert("applicationId".into(), BANDWIDTH_APPLICATION_ID.into());
    object.insert("time".into(), bandwidth_time(message.received_at).into());
    object.insert("segmentCount".into(), 1.into());
    object.insert("direction".into(), "out".into());
    object.insert("to".into(), json!([message.to.clone().unwrap_or_default()]));
    object.insert("from".into(), from.into());
    // Callbacks carry no text (Bandwidth's examples send it empty).
    let body = if text { message.body.clone().unwrap_or_default() } else { String::new() };
    object.insert("text".into(), body.into());
    if !message.media_urls.is_empty() {
        object.insert("media".into(), message.media_urls.clone().into());
    }
    if let Some(tag) = &message.client_ref {
        object.insert("tag".into(), tag.clone().into());
    }
    Value::Object(object)
}

/// The answer to an accepted send (202): the message.
pub(super) fn accepted(message: &ReceivedMessage) -> Value {
    message_object(message, true)
}

/// A callback with the application's Basic callback credentials.
fn posted(url: &str, event: &str, events: &Value) -> Webhook {
    let authorization =
        sms_sdk::provider::bandwidth::__private::basic_header(BANDWIDTH_CALLBACK_USER, BANDWIDTH_CALLBACK_PASSWORD);
    Webhook {
        url: url.to_owned(),
        event: event.to_owned(),
        content_type: "application/json",
        headers: vec![("authorization", authorization)],
        body: events.to_string().into_bytes(),
    }
}

/// A status callback of one event: `message-sent`, then `message-delivered` or `message-failed`
/// (`errorCode` 4750).
pub(super) fn status_webhook(message: &ReceivedMessage, step: Step, url: &str, signer: Signer<'_>) -> Webhook {
    let (kind, description) = match step {
        Step::Sent => ("message-sent", "Message sent to carrier."),
        Step::Delivered => ("message-delivered", "Message delivered to carrier."),
        Step::Undelivered => ("message-failed", "Carrier Rejected Message."),
    };
    let mut event = Map::new();
    event.insert("type".into(), kind.into());
    event.insert("time".into(), bandwidth_time(signer.now).into());
    event.insert("description".into(), description.into());
    event.insert("to".into(), message.to.clone().unwrap_or_default().into());
    if step == Step::Undelivered {
        event.insert("errorCode".into(), FAILED_CODE.into());
    }
    event.insert("message".into(), message_object(message, false));
    posted(url, kind, &Value::Array(vec![Value::Object(event)]))
}

/// A `message-received` callback.
pub(super) fn inbound_webhook(inbound: &Inbound, url: &str, signer: Signer<'_>) -> Webhook {
    let at = bandwidth_time(signer.now);
    let events = json!([{
        "type": "message-received",
        "time": at,
        "description": "Incoming message received",
        "to": inbound.to,
        "message": {
            "id": inbound.id,
            "owner": inbound.to,
            "applicationId": BANDWIDTH_APPLICATION_ID,
            "time": at,
            "segmentCount": 1,
            "direction": "in",
            "to": [inbound.to],
            "from": inbound.from,
            "text": inbound.text,
        },
    }]);
    posted(url, "message-received", &events)
}

/// The list's `messageStatus` of an inspection status.
const fn list_status(status: Status) -> &'static str {
    match status {
        Status::Sent => "SENT",
        Status::Delivered => "DELIVERED",
        Status::Undelivered => "FAILED",
        Status::Queued
        | Status::Rejected
        | Status::RateLimited
        | Status::ServerError
        | Status::NoResponse
        | Status::ConnectionReset
        | Status::UnreadableResponse => "QUEUED",
    }
}

/// One listed message.
fn listed(message: &ReceivedMessage) -> Value {
    let error = if message.status == Status::Undelivered { FAILED_CODE } else { 0 };
    json!({
        "messageId": message.id.clone().unwrap_or_default(),
        "accountId": BANDWIDTH_ACCOUNT_ID,
        "sourceTn": message.from.clone().unwrap_or_default(),
        "destinationTn": message.to.clone().unwrap_or_default(),
        "messageStatus": list_status(message.status),
        "messageDirection": "OUTBOUND",
        "messageType": "sms",
        "segmentCount": 1,
        "errorCode": error,
        "receiveTime": bandwidth_time(message.received_at),
        "carrierName": "other",
        "messageSize": message.body.as_deref().map_or(0, str::len),
        "messageLength": message.body.as_deref().map_or(0, |b| b.chars().count()),
        "attachmentCount": message.media_urls.len(),
        "recipientCount": 1,
        "campaignClass": "T",
    })
}

/// A time of a list filter (RFC 3339); `None` when it cannot be read.
fn filter_time(text: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

/// `GET /api/v2/users/{accountId}/messages`: the created messages, filtered by `messageId`,
/// `destinationTn`, `sourceTn`, `messageStatus`, `messageDirection` (every one is `OUTBOUND`),
/// `fromDateTime` and `toDateTime` (RFC 3339, to the millisecond, both inclusive; an unreadable
/// one matches nothing), sorted by `sort` (`receiveTime:desc`, the default, or
/// `receiveTime:asc`), at most `limit` (≤ 1000, default 50).
pub(crate) fn list(messages: &[ReceivedMessage], query: &str) -> Value {
    let filters: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let value = |name: &str| filters.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let limit = value("limit").and_then(|l| l.parse::<usize>().ok()).unwrap_or(LIST_LIMIT.0).clamp(1, LIST_LIMIT.1);
    let millisecond = time::Duration::milliseconds(1);
    let keep = |message: &ReceivedMessage| {
        filters.iter().all(|(name, value)| match name.as_str() {
            "messageId" => message.id.as_deref() == Some(value.as_str()),
            "destinationTn" => message.to.as_deref() == Some(with_plus(value).as_str()),
            "sourceTn" => message.from.as_deref() == Some(value.as_str()),
            "messageStatus" => list_status(message.status) == value,
            "messageDirection" => value == "OUTBOUND",
            "fromDateTime" => filter_time(value).is_some_and(|from| message.received_at >= from),
            // The filter is written to the millisecond: the whole millisecond is in it.
            "toDateTime" => {
                filter_time(value).is_some_and(|to| message.received_at < to.checked_add(millisecond).unwrap_or(to))
            }
            _ => true,
        })
    };
    let mut matching: Vec<&ReceivedMessage> =
        messages.iter().filter(|m| m.provider == Provider::Bandwidth && m.id.is_some() && keep(m)).collect();
    if value("sort") != Some("receiveTime:asc") {
        matching.reverse();
    }
    let page: Vec<Value> = matching.iter().take(limit).map(|m| listed(m)).collect();
    json!({
        "totalCount": matching.len(),
        "pageInfo": {"prevPage": "", "nextPage": "", "prevPageToken": "", "nextPageToken": ""},
        "messages": page,
    })
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use http::HeaderMap;
    use sms_sdk::adapter::Outcome;
    use sms_sdk::provider::bandwidth::__private::interpret;

    use super::*;
    use crate::provider::Denied;

    const REASONS: [Reason; 6] = [
        Reason::InvalidNumber,
        Reason::CannotReceive,
        Reason::SenderCannotRoute,
        Reason::InvalidSender,
        Reason::NoPermission,
        Reason::OptedOut,
    ];

    fn category(reply: &ErrorReply) -> Option<&'static str> {
        let body = reply.body.to_string();
        match interpret(reply.status.as_u16(), &HeaderMap::new(), body.as_bytes(), SystemTime::now()) {
            Outcome::Rejected(rejection) => Some(rejection.category.as_str()),
            Outcome::Accepted(_) | Outcome::Unknown(_) => None,
        }
    }

    #[test]
    fn every_error_means_to_the_library_what_the_emulator_logs() {
        for reason in REASONS {
            let failure = Failure::Reject(reason);
            assert_eq!(category(&error(failure)), Some(reason.category(Provider::Bandwidth).as_str()), "{reason:?}");
            assert_eq!(
                Some(failure.outcome(Provider::Bandwidth)),
                category(&error(failure)).map(crate::observe::Outcome::Rejected)
            );
        }
        for failure in [
            Failure::Auth(Denied::Credentials),
            Failure::Unreadable,
            Failure::TooLarge { limit: 10 },
            Failure::Missing(Field::To),
            Failure::Missing(Field::From),
            Failure::Missing(Field::Body),
            Failure::Invalid("applicationId"),
            Failure::Invalid("priority"),
            Failure::Invalid("to"),
        ] {
            let logged = failure.outcome(Provider::Bandwidth);
            assert_eq!(category(&error(failure)).map(crate::observe::Outcome::Rejected), Some(logged), "{failure:?}");
        }
        assert_eq!(category(&error(Failure::RateLimited)), Some("rate_limited"));
        // The emulator's server error is unknown to the library.
        assert_eq!(category(&error(Failure::ServerError)), None);
    }

    #[test]
    fn tokens_are_issued_to_the_client_and_accepted_until_they_expire() {
        let now = OffsetDateTime::now_utc();
        let mut headers = HeaderMap::new();
        let client =
            sms_sdk::provider::bandwidth::__private::basic_header(BANDWIDTH_CLIENT_ID, BANDWIDTH_CLIENT_SECRET);
        headers.insert(http::header::AUTHORIZATION, client.parse().expect("a header"));
        let (status, answer) = token(&headers, b"grant_type=client_credentials", now);
        assert_eq!(status, http::StatusCode::OK);
        let issued = answer["access_token"].as_str().expect("a token");
        assert!(valid_token(issued, now));
        assert!(!valid_token(issued, now + time::Duration::seconds(TOKEN_LIFETIME_SECS)));
        assert!(!valid_token(&issued.replace("bw.", "bx."), now));
        assert!(!valid_token("bw.1.2", now));
        assert_eq!(token(&headers, b"grant_type=password", now).0, http::StatusCode::BAD_REQUEST);
        assert_eq!(token(&HeaderMap::new(), b"grant_type=client_credentials", now).0, http::StatusCode::UNAUTHORIZED);
    }

    #[test]
    fn ids_are_bandwidth_shaped() {
        let id = new_id();
        assert_eq!(id.len(), 29, "{id}");
        assert!(id.get(..13).is_some_and(|ms| ms.bytes().all(|b| b.is_ascii_digit())), "{id}");
    }

    #[test]
    fn the_list_filters_by_id_recipient_and_time() {
        let at = OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("a time");
        let entry = |id: &str, to: &str| {
            let mut message = ReceivedMessage::new(Provider::Bandwidth, at);
            message.id = Some(id.into());
            message.to = Some(to.into());
            message
        };
        let messages = [entry("a", "+1415"), entry("b", "+1416"), entry("c", "+1415")];
        let ids = |query: &str| -> Vec<String> {
            let list = list(&messages, query);
            let listed = list["messages"].as_array().cloned().unwrap_or_default();
            listed.iter().filter_map(|m| m["messageId"].as_str().map(str::to_owned)).collect()
        };
        assert_eq!(ids(""), ["c", "b", "a"]);
        assert_eq!(ids("sort=receiveTime:asc"), ["a", "b", "c"]);
        assert_eq!(ids("messageId=b"), ["b"]);
        assert_eq!(ids("destinationTn=%2B1415&limit=1"), ["c"]);
        assert_eq!(ids("toDateTime=2027-01-15T08:00:00.000Z").len(), 3);
        assert!(ids("fromDateTime=2027-01-15T08:00:00.001Z").is_empty());
        assert!(ids("messageDirection=INBOUND").is_empty());
    }
}
