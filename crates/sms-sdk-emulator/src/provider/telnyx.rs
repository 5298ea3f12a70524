//! Telnyx: JSON requests with a Bearer API key, `{errors: [{code, title, detail}]}` errors, the
//! message record, and Ed25519-signed event webhooks.

use serde_json::{Value, json};

use super::wire::{base64_standard, bearer_token, rfc3339, status_code, string_field, string_list};
use super::{AuthRequest, ErrorReply, Failure, Field, Inbound, SendRequest, Signer, Step, Webhook};
use crate::credentials::TELNYX_API_KEY;
use crate::magic::codes;
use crate::model::{ReceivedMessage, Status};
use crate::respond::JSON;

/// A delivery failure code the library maps to `undelivered` (not one of the filtered codes).
const UNDELIVERED_CODE: &str = "40008";

pub(super) fn authenticate(request: &AuthRequest<'_>) -> bool {
    bearer_token(request.headers) == Some(TELNYX_API_KEY)
}

/// Reads the JSON body; a `messaging_profile_id` without `from` is the sender.
pub(super) fn parse(body: &[u8]) -> Option<SendRequest> {
    let json: Value = serde_json::from_slice(body).ok().filter(Value::is_object)?;
    let from = string_field(&json, "from");
    let profile = string_field(&json, "messaging_profile_id");
    Some(SendRequest {
        to: string_field(&json, "to"),
        service_sender: from.is_none() && profile.is_some(),
        account_sender: false,
        from: from.or(profile),
        body: string_field(&json, "text"),
        media_urls: string_list(&json, "media_urls"),
        callback_url: string_field(&json, "webhook_url"),
        client_ref: None,
        context: None,
        message_type: None,
        message_id: None,
        invalid: None,
    })
}

fn field_name(field: Field) -> &'static str {
    match field {
        Field::To => "to",
        Field::From => "from",
        Field::Body => "text",
    }
}

pub(super) fn error(failure: Failure) -> ErrorReply {
    let (status, code, title, detail, pointer): (u16, &str, &str, String, Option<&str>) = match failure {
        Failure::Auth(_) => (401, "10009", "Authentication failed", "The API key is missing or invalid.".into(), None),
        Failure::Unreadable => (400, "10015", "Bad Request", "The request body is not a JSON object.".into(), None),
        // Telnyx documents no code of its own for an oversized body: its generic 10015.
        Failure::TooLarge { limit } => {
            (413, "10015", "Bad Request", format!("The request body is over {limit} bytes."), None)
        }
        Failure::Missing(field) => {
            let name = field_name(field);
            (422, "10004", "Missing required parameter", format!("The '{name}' parameter is required."), Some(name))
        }
        Failure::Invalid(name) => {
            (422, "10015", "Invalid parameter", format!("The '{name}' parameter is invalid."), Some(name))
        }
        Failure::Reject(reason) => {
            let codes = codes(reason);
            (400, codes.telnyx, codes.title, codes.detail.into(), None)
        }
        Failure::RateLimited => (429, "10011", "Too many requests", "Slow down and retry later.".into(), None),
        Failure::ServerError => (500, "10007", "Unexpected error", "An unexpected error occurred.".into(), None),
        Failure::NotFound => (404, "10005", "Resource not found", "The requested message was not found.".into(), None),
    };
    let mut error = json!({
        "code": code,
        "title": title,
        "detail": detail,
        "meta": {"url": format!("https://developers.telnyx.com/docs/overview/errors/{code}")},
    });
    if let (Some(pointer), Some(object)) = (pointer, error.as_object_mut()) {
        object.insert("source".into(), json!({"pointer": format!("/{pointer}")}));
    }
    ErrorReply {
        status: status_code(status),
        code: Some(code.to_owned()),
        body: json!({"errors": [error]}),
        content_type: JSON,
        headers: Vec::new(),
    }
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Queued => "queued",
        Status::Sent => "sent",
        Status::Delivered => "delivered",
        Status::Undelivered => "delivery_failed",
        Status::Rejected
        | Status::RateLimited
        | Status::ServerError
        | Status::NoResponse
        | Status::ConnectionReset
        | Status::UnreadableResponse => "sending_failed",
    }
}

/// The message record, as the send answer, the fetch and the webhooks carry it.
fn record(message: &ReceivedMessage) -> Value {
    let from = message.from.clone().unwrap_or_default();
    let profile = message.service_sender;
    let errors = if message.status == Status::Undelivered {
        json!([{"code": UNDELIVERED_CODE, "title": "Undeliverable", "detail": "The message could not be delivered to the handset."}])
    } else {
        json!([])
    };
    json!({
        "record_type": "message",
        "direction": "outbound",
        "id": message.id.clone().unwrap_or_default(),
        "type": if message.media_urls.is_empty() { "SMS" } else { "MMS" },
        "messaging_profile_id": if profile { Value::from(from.clone()) } else { Value::Null },
        "from": {"phone_number": if profile { Value::Null } else { Value::from(from) }, "carrier": "", "line_type": ""},
        "to": [{
            "phone_number": message.to.clone().unwrap_or_default(),
            "status": status_name(message.status),
            "carrier": "",
            "line_type": "",
        }],
        "text": message.body.clone().unwrap_or_default(),
        "media": message.media_urls.iter().map(|url| json!({"url": url})).collect::<Vec<_>>(),
        "webhook_url": message.callback_url.clone().unwrap_or_default(),
        "encoding": "GSM-7",
        "parts": 1,
        "tags": [],
        "cost": null,
        "received_at": rfc3339(message.received_at),
        "errors": errors,
    })
}

/// `{data: record}`.
pub(super) fn resource(message: &ReceivedMessage) -> Value {
    json!({"data": record(message)})
}

fn signed(url: &str, event_type: &str, payload: &Value, signer: Signer<'_>) -> Webhook {
    let body = json!({
        "data": {
            "event_type": event_type,
            "id": super::new_uuid().to_string(),
            "occurred_at": rfc3339(signer.now),
            "payload": payload,
            "record_type": "event",
        },
        "meta": {"attempt": 1, "delivered_to": url},
    })
    .to_string()
    .into_bytes();
    let timestamp = signer.now.unix_timestamp().to_string();
    let signature = signer.keys.telnyx.sign(&sms_sdk::provider::telnyx::signed_payload(&timestamp, &body));
    Webhook {
        url: url.to_owned(),
        event: event_type.to_owned(),
        content_type: "application/json",
        headers: vec![
            ("telnyx-timestamp", timestamp),
            ("telnyx-signature-ed25519", base64_standard(signature.as_ref())),
        ],
        body,
    }
}

/// `message.sent`, then `message.finalized` with `to[0].status` `delivered` or
/// `delivery_failed`.
pub(super) fn status_webhook(message: &ReceivedMessage, step: Step, url: &str, signer: Signer<'_>) -> Webhook {
    let mut at_step = message.clone();
    at_step.status = step.status();
    let event_type = match step {
        Step::Sent => "message.sent",
        Step::Delivered | Step::Undelivered => "message.finalized",
    };
    signed(url, event_type, &record(&at_step), signer)
}

/// A `message.received` event.
pub(super) fn inbound_webhook(inbound: &Inbound, url: &str, signer: Signer<'_>) -> Webhook {
    let payload = json!({
        "record_type": "message",
        "direction": "inbound",
        "id": inbound.id,
        "type": "SMS",
        "from": {"phone_number": inbound.from, "carrier": "", "line_type": ""},
        "to": [{"phone_number": inbound.to, "status": "webhook_delivered", "carrier": "", "line_type": ""}],
        "text": inbound.text,
        "media": [],
        "encoding": "GSM-7",
        "parts": 1,
        "received_at": rfc3339(signer.now),
    });
    signed(url, "message.received", &payload, signer)
}
