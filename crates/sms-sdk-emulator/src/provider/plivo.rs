//! Plivo: JSON requests with Basic auth, `{api_id, error}` errors (Plivo documents no codes),
//! the message record, and form webhooks with V3 and V2 signatures.

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::wire::{
    basic_credentials, form_body, plain_status_name, status_code, string_field, string_list, without_plus,
};
use super::{AuthRequest, ErrorReply, Failure, Field, Inbound, SendRequest, Signer, Step, Webhook};
use crate::credentials::{PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN};
use crate::magic::codes;
use crate::model::{ReceivedMessage, Status};
use crate::respond::JSON;

/// Destination temporarily unavailable.
const UNDELIVERED_CODE: &str = "80";

pub(super) fn authenticate(request: &AuthRequest<'_>) -> bool {
    request.account == Some(PLIVO_AUTH_ID)
        && basic_credentials(request.headers)
            .is_some_and(|(user, password)| user == PLIVO_AUTH_ID && password == PLIVO_AUTH_TOKEN)
}

/// Reads the JSON body; a `powerpack_uuid` is the sender when there is no `src`.
pub(super) fn parse(body: &[u8]) -> Option<SendRequest> {
    let json: Value = serde_json::from_slice(body).ok().filter(Value::is_object)?;
    let src = string_field(&json, "src");
    let powerpack = string_field(&json, "powerpack_uuid");
    Some(SendRequest {
        to: string_field(&json, "dst"),
        service_sender: src.is_none() && powerpack.is_some(),
        account_sender: false,
        from: src.or(powerpack),
        body: string_field(&json, "text"),
        media_urls: string_list(&json, "media_urls"),
        callback_url: string_field(&json, "url"),
        client_ref: None,
        context: None,
        message_type: None,
        message_id: None,
        invalid: None,
    })
}

fn api_id() -> String {
    super::new_uuid().to_string()
}

pub(super) fn error(failure: Failure) -> ErrorReply {
    let (status, message): (u16, String) = match failure {
        Failure::Auth(_) => (401, "Authentication failed: check the auth id and auth token.".into()),
        Failure::Unreadable => (400, "invalid JSON data received".into()),
        Failure::TooLarge { limit } => (413, format!("request body too large: the limit is {limit} bytes")),
        Failure::Missing(Field::To) => (400, "Missing mandatory parameter: dst".into()),
        Failure::Missing(Field::From) => (400, "Missing mandatory parameter: src or powerpack_uuid".into()),
        Failure::Missing(Field::Body) => (400, "Missing mandatory parameter: text or media_urls".into()),
        Failure::Invalid(name) => (400, format!("invalid value for parameter: {name}")),
        Failure::Reject(reason) => (400, codes(reason).detail.into()),
        Failure::RateLimited => (429, "too many requests".into()),
        Failure::ServerError => (500, "internal server error".into()),
        Failure::NotFound => (404, "not found".into()),
    };
    ErrorReply {
        status: status_code(status),
        code: None,
        body: json!({"api_id": api_id(), "error": message}),
        content_type: JSON,
        headers: Vec::new(),
    }
}

/// `{message, message_uuid: [uuid], api_id}`.
pub(super) fn accepted(message: &ReceivedMessage) -> Value {
    json!({
        "message": "message(s) queued",
        "message_uuid": [message.id.clone().unwrap_or_default()],
        "api_id": api_id(),
    })
}

fn message_time(at: OffsetDateTime) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]+00:00");
    at.to_offset(time::UtcOffset::UTC).format(format).unwrap_or_default()
}

/// The message record of `GET …/Message/{uuid}/`.
pub(super) fn resource(message: &ReceivedMessage) -> Value {
    let id = message.id.clone().unwrap_or_default();
    let undelivered = message.status == Status::Undelivered;
    json!({
        "api_id": api_id(),
        "error_code": if undelivered { UNDELIVERED_CODE } else { "000" },
        "from_number": without_plus(message.from.as_deref().unwrap_or_default()),
        "message_direction": "outbound",
        "message_state": plain_status_name(message.status),
        "message_time": message_time(message.received_at),
        "message_type": if message.media_urls.is_empty() { "sms" } else { "mms" },
        "message_uuid": id,
        "resource_uri": format!("/v1/Account/{PLIVO_AUTH_ID}/Message/{id}/"),
        "to_number": without_plus(message.to.as_deref().unwrap_or_default()),
        "total_amount": "0.00500",
        "total_rate": "0.00500",
        "units": 1,
    })
}

fn signed(url: &str, event: &str, params: &[(&str, String)]) -> Webhook {
    let nonce = fastrand::u64(10_000_000_000..100_000_000_000).to_string();
    let v2 = sms_sdk::provider::plivo::signature_v2(PLIVO_AUTH_TOKEN, url, &nonce);
    let v3 = sms_sdk::provider::plivo::signature_v3(PLIVO_AUTH_TOKEN, "POST", url, params, &nonce);
    Webhook {
        url: url.to_owned(),
        event: event.to_owned(),
        content_type: "application/x-www-form-urlencoded",
        headers: vec![
            ("x-plivo-signature-v2", v2),
            ("x-plivo-signature-v2-nonce", nonce.clone()),
            ("x-plivo-signature-v3", v3),
            ("x-plivo-signature-v3-nonce", nonce),
        ],
        body: form_body(params),
    }
}

/// `sent`, then `delivered` or `undelivered` (`ErrorCode` 80).
pub(super) fn status_webhook(message: &ReceivedMessage, step: Step, url: &str, signer: Signer<'_>) -> Webhook {
    let id = message.id.clone().unwrap_or_default();
    let status = plain_status_name(step.status());
    let mut params = vec![
        ("From", without_plus(message.from.as_deref().unwrap_or_default()).to_owned()),
        ("MessageTime", message_time(signer.now)),
        ("MessageUUID", id.clone()),
        ("ParentMessageUUID", id),
        ("PartInfo", "1 of 1".to_owned()),
        ("Status", status.to_owned()),
        ("To", without_plus(message.to.as_deref().unwrap_or_default()).to_owned()),
        ("TotalAmount", "0.00500".to_owned()),
        ("TotalRate", "0.00500".to_owned()),
        ("Units", "1".to_owned()),
    ];
    if step == Step::Undelivered {
        params.push(("ErrorCode", UNDELIVERED_CODE.to_owned()));
    }
    signed(url, status, &params)
}

/// An incoming message (no `Status`).
pub(super) fn inbound_webhook(inbound: &Inbound, url: &str, signer: Signer<'_>) -> Webhook {
    let params = [
        ("From", without_plus(&inbound.from).to_owned()),
        ("MessageTime", message_time(signer.now)),
        ("MessageUUID", inbound.id.clone()),
        ("Text", inbound.text.clone()),
        ("To", without_plus(&inbound.to).to_owned()),
        ("TotalAmount", "0".to_owned()),
        ("TotalRate", "0".to_owned()),
        ("Type", "sms".to_owned()),
        ("Units", "1".to_owned()),
    ];
    signed(url, "received", &params)
}
