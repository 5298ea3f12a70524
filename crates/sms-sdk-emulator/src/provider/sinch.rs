//! Sinch (`xms/v1`): JSON text batches with a Bearer API token for the service plan in the path,
//! `{code, text}` errors, the batch record, and HMAC-signed callbacks (per-recipient delivery
//! reports and `mo_text`).
//!
//! Sinch checks what it can see in the request and answers 400 for a recipient it cannot take;
//! it has no synchronous code for an opt-out, a sender that cannot route or a destination the
//! account may not reach (those fail later, in the delivery report). So every magic rejection is
//! its 400 `syntax_invalid_parameter_format`, which the library classifies `request`, as it does
//! Plivo's generic 400.

use serde_json::{Map, Value, json};

use super::wire::{bearer_token, rfc3339, status_code, string_field};
use super::{AuthRequest, ErrorReply, Failure, Field, Inbound, SendRequest, Signer, Step, Webhook};
use crate::credentials::{SINCH_API_TOKEN, SINCH_SERVICE_PLAN_ID, SINCH_WEBHOOK_SECRET};
use crate::magic::codes;
use crate::model::ReceivedMessage;
use crate::respond::JSON;

/// Sinch's delivery report code for `Dispatched`.
const DISPATCHED_CODE: u16 = 401;
/// Sinch's delivery report code of a `Failed` message: 402, unroutable.
const UNDELIVERED_CODE: u16 = 402;
/// The length of a Sinch id (batch, inbound message, nonce): 26 characters of Crockford's base32.
const ID_LENGTH: usize = 26;
/// Crockford's base32 alphabet, in which Sinch writes its ids.
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The plan's API token, for the plan in the path.
pub(super) fn authenticate(request: &AuthRequest<'_>) -> bool {
    request.account == Some(SINCH_SERVICE_PLAN_ID) && bearer_token(request.headers) == Some(SINCH_API_TOKEN)
}

/// A new id in Sinch's format (`01FC66621XXXXX119Z8PMV1QPQ`).
pub(super) fn new_id() -> String {
    (0..ID_LENGTH)
        .map(|_| char::from(CROCKFORD.get(fastrand::usize(..CROCKFORD.len())).copied().unwrap_or(b'0')))
        .collect()
}

/// Reads the JSON body: a text batch (`type` absent or `mt_text`) of exactly one recipient, the
/// only kind the emulator creates.
pub(super) fn parse(body: &[u8]) -> Option<SendRequest> {
    let json: Value = serde_json::from_slice(body).ok().filter(Value::is_object)?;
    let recipients = json.get("to").and_then(Value::as_array);
    let invalid = if json.get("type").is_some_and(|kind| kind.as_str() != Some("mt_text")) {
        Some("type")
    } else if recipients.is_some_and(|to| to.len() > 1) {
        Some("to")
    } else {
        None
    };
    Some(SendRequest {
        to: recipients.and_then(|to| to.first()).and_then(Value::as_str).map(str::to_owned),
        from: string_field(&json, "from"),
        service_sender: false,
        account_sender: false,
        body: string_field(&json, "body"),
        media_urls: Vec::new(),
        callback_url: string_field(&json, "callback_url"),
        client_ref: string_field(&json, "client_reference"),
        context: None,
        message_type: None,
        message_id: None,
        invalid,
    })
}

fn field_name(field: Field) -> &'static str {
    match field {
        Field::To => "to",
        Field::From => "from",
        Field::Body => "body",
    }
}

pub(super) fn error(failure: Failure) -> ErrorReply {
    let (status, code, text): (u16, &str, String) = match failure {
        Failure::Auth(_) => (401, "unauthorized", "The API token is missing or wrong for this service plan.".into()),
        Failure::Unreadable => (400, "syntax_invalid_json", "The request body is not a JSON object.".into()),
        // Sinch documents no 413: its nearest is the constraint violation, at the status a
        // proxy in front of it would answer.
        Failure::TooLarge { limit } => {
            (413, "syntax_constraint_violation", format!("The request body is over {limit} bytes."))
        }
        Failure::Missing(field) => {
            (400, "syntax_constraint_violation", format!("{}: must not be empty", field_name(field)))
        }
        Failure::Invalid(name) => {
            (400, "syntax_invalid_parameter_format", format!("{name}: the value is not accepted"))
        }
        Failure::Reject(reason) => (400, "syntax_invalid_parameter_format", format!("to: {}", codes(reason).detail)),
        Failure::RateLimited => (429, "too_many_requests", "Too many outstanding requests.".into()),
        Failure::ServerError => (500, "internal_error", "An internal error occurred.".into()),
        Failure::NotFound => (404, "not_found", "No batch with this id.".into()),
    };
    ErrorReply {
        status: status_code(status),
        code: Some(code.to_owned()),
        body: json!({"code": code, "text": text}),
        content_type: JSON,
        headers: Vec::new(),
    }
}

/// The HTTP status of an accepted send: 201, the batch was created.
pub(super) const fn success_status() -> http::StatusCode {
    http::StatusCode::CREATED
}

/// The batch, as the send answer and the fetch carry it.
pub(super) fn batch(message: &ReceivedMessage) -> Value {
    let at = rfc3339(message.received_at);
    let mut batch = Map::new();
    batch.insert("id".into(), message.id.clone().unwrap_or_default().into());
    batch.insert("to".into(), json!([message.to.clone().unwrap_or_default()]));
    batch.insert("from".into(), message.from.clone().unwrap_or_default().into());
    batch.insert("canceled".into(), false.into());
    batch.insert("body".into(), message.body.clone().unwrap_or_default().into());
    batch.insert("type".into(), "mt_text".into());
    batch.insert("created_at".into(), at.clone().into());
    batch.insert("modified_at".into(), at.into());
    batch.insert("delivery_report".into(), "per_recipient".into());
    if let Some(url) = &message.callback_url {
        batch.insert("callback_url".into(), url.clone().into());
    }
    if let Some(reference) = &message.client_ref {
        batch.insert("client_reference".into(), reference.clone().into());
    }
    batch.insert("flash_message".into(), false.into());
    Value::Object(batch)
}

/// `GET /xms/v1/{service_plan_id}/batches`: the plan's batches, newest first, filtered by the
/// `to`, `client_reference` and `start_date` (`YYYY-MM-DD` or RFC 3339, inclusive) parameters
/// Sinch documents; one page of at most `page_size` (≤ 100, default 30).
pub(crate) fn list(messages: &[ReceivedMessage], query: &str) -> Value {
    let filters: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let filter = |name: &str| filters.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let page_size = filter("page_size").and_then(|size| size.parse::<usize>().ok()).unwrap_or(30).clamp(1, 100);
    let since = filter("start_date").and_then(start_of);
    let keep = |message: &ReceivedMessage| {
        message.provider == super::Provider::Sinch
            && message.id.is_some()
            && filter("to").is_none_or(|to| message.to.as_deref() == Some(to))
            && filter("client_reference").is_none_or(|reference| message.client_ref.as_deref() == Some(reference))
            && since.is_none_or(|since| message.received_at >= since)
    };
    let matching: Vec<&ReceivedMessage> = messages.iter().rev().filter(|m| keep(m)).collect();
    let batches: Vec<Value> = matching.iter().take(page_size).map(|message| batch(message)).collect();
    json!({"count": matching.len(), "page": 0, "page_size": batches.len(), "batches": batches})
}

/// The start of a `start_date`: midnight UTC of a date, or an RFC 3339 time.
fn start_of(value: &str) -> Option<time::OffsetDateTime> {
    let rfc3339 = &time::format_description::well_known::Rfc3339;
    time::OffsetDateTime::parse(value, rfc3339).ok().or_else(|| {
        let format = time::macros::format_description!("[year]-[month]-[day]");
        time::Date::parse(value, format).ok().map(|day| day.midnight().assume_utc())
    })
}

/// A callback signed the way Sinch signs: HMAC-SHA256 of `body.nonce.timestamp` with the
/// plan's webhook secret, base64.
fn signed(url: &str, event: &str, body: &Value, signer: Signer<'_>) -> Webhook {
    let body = body.to_string().into_bytes();
    let nonce = new_id();
    let timestamp = signer.now.unix_timestamp().to_string();
    let signature = sms_sdk::provider::sinch::__private::sign(SINCH_WEBHOOK_SECRET, &body, &nonce, &timestamp);
    Webhook {
        url: url.to_owned(),
        event: event.to_owned(),
        content_type: "application/json",
        headers: vec![
            ("x-sinch-webhook-signature", signature),
            ("x-sinch-webhook-signature-timestamp", timestamp),
            ("x-sinch-webhook-signature-nonce", nonce),
            ("x-sinch-webhook-signature-algorithm", "HmacSHA256".to_owned()),
        ],
        body,
    }
}

/// A `recipient_delivery_report_sms`: `Dispatched`, then `Delivered` or `Failed` (code 402).
pub(super) fn status_webhook(message: &ReceivedMessage, step: Step, url: &str, signer: Signer<'_>) -> Webhook {
    let (status, code) = match step {
        Step::Sent => ("Dispatched", DISPATCHED_CODE),
        Step::Delivered => ("Delivered", 0),
        Step::Undelivered => ("Failed", UNDELIVERED_CODE),
    };
    let at = rfc3339(signer.now);
    let mut report = Map::new();
    report.insert("type".into(), "recipient_delivery_report_sms".into());
    report.insert("batch_id".into(), message.id.clone().unwrap_or_default().into());
    report.insert("recipient".into(), message.to.clone().unwrap_or_default().into());
    report.insert("code".into(), code.into());
    report.insert("status".into(), status.into());
    report.insert("at".into(), at.clone().into());
    report.insert("operator_status_at".into(), at.into());
    if let Some(reference) = &message.client_ref {
        report.insert("client_reference".into(), reference.clone().into());
    }
    report.insert("applied_originator".into(), message.from.clone().unwrap_or_default().into());
    report.insert("encoding".into(), "GSM".into());
    report.insert("number_of_message_parts".into(), 1.into());
    signed(url, status, &Value::Object(report), signer)
}

/// An `mo_text` callback.
pub(super) fn inbound_webhook(inbound: &Inbound, url: &str, signer: Signer<'_>) -> Webhook {
    let at = rfc3339(signer.now);
    let body = json!({
        "type": "mo_text",
        "id": inbound.id,
        "from": inbound.from,
        "to": inbound.to,
        "body": inbound.text,
        "received_at": at,
        "sent_at": at,
        "operator_id": "31008",
    });
    signed(url, "mo_text", &body, signer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::magic::Reason;
    use crate::model::Status;

    #[test]
    fn ids_are_sinch_shaped() {
        let id = new_id();
        assert_eq!(id.len(), ID_LENGTH);
        assert!(id.bytes().all(|b| CROCKFORD.contains(&b)));
        assert_ne!(new_id(), id);
    }

    #[test]
    fn one_text_recipient_is_read_and_anything_else_is_invalid() {
        let read = |body: &str| parse(body.as_bytes());
        let request = read(r#"{"to":["+14155550123"],"from":"+15005550006","body":"hi","client_reference":"r1"}"#)
            .expect("a JSON object");
        assert_eq!(request.to.as_deref(), Some("+14155550123"));
        assert_eq!(request.client_ref.as_deref(), Some("r1"));
        assert_eq!(request.invalid, None);
        assert_eq!(read(r#"{"to":["+1","+2"],"from":"x","body":"hi"}"#).and_then(|r| r.invalid), Some("to"));
        assert_eq!(read(r#"{"to":["+1"],"type":"mt_binary"}"#).and_then(|r| r.invalid), Some("type"));
        assert_eq!(read(r#"{"to":"+14155550123"}"#).and_then(|r| r.to), None);
        assert!(read("[]").is_none());
    }

    #[test]
    fn errors_are_classified_by_the_library_as_meant() {
        use sms_sdk::Category;
        use sms_sdk::provider::sinch::__private::rejection_category;
        let category = |failure| {
            let reply = error(failure);
            rejection_category(reply.status.as_u16(), reply.code.as_deref())
        };
        assert_eq!(category(Failure::Auth(super::super::Denied::Credentials)), Category::Auth);
        assert_eq!(category(Failure::Reject(Reason::OptedOut)), Category::Request);
        assert_eq!(category(Failure::Missing(Field::Body)), Category::Request);
        assert_eq!(category(Failure::RateLimited), Category::RateLimited);
        assert_eq!(error(Failure::ServerError).status.as_u16(), 500);
    }

    #[test]
    fn the_list_filters_by_recipient_reference_and_date() {
        let at = time::OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("a time");
        let message = |id: &str, to: &str, reference: Option<&str>| {
            let mut message = ReceivedMessage::new(super::super::Provider::Sinch, at);
            message.id = Some(id.into());
            message.to = Some(to.into());
            message.client_ref = reference.map(str::to_owned);
            message
        };
        let messages = [message("A", "+1", Some("r")), message("B", "+2", None), message("C", "+1", None)];
        let ids = |query: &str| -> Vec<String> {
            let list = list(&messages, query);
            let batches = list["batches"].as_array().cloned().unwrap_or_default();
            batches.iter().filter_map(|b| b["id"].as_str().map(str::to_owned)).collect()
        };
        assert_eq!(ids(""), ["C", "B", "A"]);
        assert_eq!(ids("to=%2B1"), ["C", "A"]);
        assert_eq!(ids("client_reference=r"), ["A"]);
        assert_eq!(ids("start_date=2027-01-15"), ["C", "B", "A"]);
        assert!(ids("start_date=2027-01-16").is_empty());
        assert_eq!(ids("page_size=1"), ["C"]);
        assert_eq!(list(&messages, "page_size=1")["count"], 3);
    }

    #[test]
    fn callbacks_verify_with_the_library() {
        let keys = crate::keys::keys().expect("the fixed keys");
        let now = time::OffsetDateTime::now_utc();
        let signer = Signer { keys, now };
        let mut message = ReceivedMessage::new(super::super::Provider::Sinch, now);
        message.id = Some(new_id());
        message.to = Some("+14155550123".into());
        message.status = Status::Sent;
        let hook = status_webhook(&message, Step::Undelivered, "https://hooks.example/sinch", signer);
        let header = |name: &str| hook.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
        let (nonce, timestamp) =
            (header("x-sinch-webhook-signature-nonce"), header("x-sinch-webhook-signature-timestamp"));
        let expected = sms_sdk::provider::sinch::__private::sign(
            SINCH_WEBHOOK_SECRET,
            &hook.body,
            &nonce.unwrap_or_default(),
            &timestamp.unwrap_or_default(),
        );
        assert_eq!(header("x-sinch-webhook-signature"), Some(expected));
        let body: Value = serde_json::from_slice(&hook.body).expect("JSON");
        assert_eq!((body["status"].as_str(), body["code"].as_u64()), (Some("Failed"), Some(402)));
    }
}
