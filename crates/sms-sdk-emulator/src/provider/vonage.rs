//! Vonage Messages API: JSON requests with Basic auth or an RS256 application JWT, RFC 7807
//! problem errors with the code in the `type` fragment, and HS256-signed JSON webhooks whose
//! `payload_hash` claim is the SHA-256 of the body.

use std::fmt::Write as _;

use base64::Engine as _;
use ring::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use time::OffsetDateTime;

use super::wire::{basic_credentials, bearer_token, rfc3339, status_code, string_field, without_plus};
use super::{AuthRequest, ErrorReply, Failure, Field, Inbound, SendRequest, Signer, Step, Webhook};
use crate::credentials::{VONAGE_API_KEY, VONAGE_API_SECRET, VONAGE_APPLICATION_ID, VONAGE_SIGNATURE_SECRET};
use crate::magic::codes;
use crate::model::ReceivedMessage;

const ERRORS: &str = "https://developer.vonage.com/api-errors";
/// The content type of Vonage's RFC 7807 error bodies.
const PROBLEM_JSON: &str = "application/problem+json";
/// A delivery failure code the library maps to `undelivered` (not one of the filtered codes).
const UNDELIVERED_CODE: &str = "1330";
/// How long an application JWT without `exp` is valid after its `iat`.
const DEFAULT_LIFETIME_SECS: f64 = 900.0;

pub(super) fn authenticate(request: &AuthRequest<'_>) -> bool {
    if let Some(token) = bearer_token(request.headers) {
        return application_jwt_is_valid(token, &request.keys.vonage_public, request.now);
    }
    basic_credentials(request.headers)
        .is_some_and(|(user, password)| user == VONAGE_API_KEY && password == VONAGE_API_SECRET)
}

fn decode_part(part: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).ok()
}

/// An RS256 JWT signed with the test application's key, for its application id, not expired
/// (`exp`, or `iat` + 15 minutes without one).
fn application_jwt_is_valid(token: &str, public_key: &[u8], now: OffsetDateTime) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    let [header, claims, signature] = parts[..] else { return false };
    let json = |part: &str| decode_part(part).and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    let Some(header_json) = json(header) else { return false };
    if header_json.get("alg").and_then(Value::as_str) != Some("RS256") {
        return false;
    }
    let Some(signature) = decode_part(signature) else { return false };
    let signing_input = format!("{header}.{claims}");
    let key = UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, public_key);
    if key.verify(signing_input.as_bytes(), &signature).is_err() {
        return false;
    }
    let Some(claims) = json(claims) else { return false };
    if claims.get("application_id").and_then(Value::as_str) != Some(VONAGE_APPLICATION_ID) {
        return false;
    }
    let number = |name: &str| claims.get(name).and_then(Value::as_f64);
    let expires = number("exp").or_else(|| number("iat").map(|iat| iat + DEFAULT_LIFETIME_SECS));
    #[allow(clippy::cast_precision_loss)] // seconds since 1970: exact below 2^53
    let now = now.unix_timestamp() as f64;
    expires.is_some_and(|exp| exp > now)
}

/// Reads the JSON body: an SMS text message (`message_type` `text`, `channel` `sms`).
pub(super) fn parse(body: &[u8]) -> Option<SendRequest> {
    let json: Value = serde_json::from_slice(body).ok().filter(Value::is_object)?;
    let invalid = if json.get("message_type").and_then(Value::as_str) != Some("text") {
        Some("message_type")
    } else if json.get("channel").and_then(Value::as_str) != Some("sms") {
        Some("channel")
    } else {
        None
    };
    Some(SendRequest {
        to: string_field(&json, "to"),
        from: string_field(&json, "from"),
        service_sender: false,
        account_sender: false,
        body: string_field(&json, "text"),
        media_urls: Vec::new(),
        callback_url: string_field(&json, "webhook_url"),
        client_ref: string_field(&json, "client_ref"),
        context: None,
        message_type: None,
        message_id: None,
        invalid,
    })
}

fn invalid_params(name: &str, reason: &str) -> (u16, String, String, String, Option<Value>) {
    (
        422,
        format!("{ERRORS}/messages#1150"),
        "Invalid params".into(),
        "The value of one or more parameters is invalid.".into(),
        Some(json!([{"name": name, "reason": reason}])),
    )
}

pub(super) fn error(failure: Failure) -> ErrorReply {
    let (status, kind, title, detail, parameters): (u16, String, String, String, Option<Value>) = match failure {
        Failure::Auth(_) => (
            401,
            format!("{ERRORS}#unauthorized"),
            "Unauthorized".into(),
            "You did not provide correct credentials.".into(),
            None,
        ),
        Failure::Unreadable => (
            400,
            format!("{ERRORS}#invalid-json"),
            "Invalid JSON".into(),
            "The request body is not a JSON object.".into(),
            None,
        ),
        // Vonage documents no code for an oversized body; the problem type names it in the
        // style of its generic errors.
        Failure::TooLarge { limit } => (
            413,
            format!("{ERRORS}#request-too-large"),
            "Request Too Large".into(),
            format!("The request body is over {limit} bytes."),
            None,
        ),
        Failure::Missing(field) => {
            let name = match field {
                Field::To => "to",
                Field::From => "from",
                Field::Body => "text",
            };
            invalid_params(name, "Is required.")
        }
        Failure::Invalid(name) => invalid_params(name, "Is invalid."),
        Failure::Reject(reason) => {
            let codes = codes(reason);
            (422, format!("{ERRORS}/messages#{}", codes.vonage), codes.title.into(), codes.detail.into(), None)
        }
        Failure::RateLimited => (
            429,
            format!("{ERRORS}#throttled"),
            "Rate Limit Hit".into(),
            "Please wait, then retry your request.".into(),
            None,
        ),
        Failure::ServerError => (
            500,
            format!("{ERRORS}#internal-error"),
            "Internal Error".into(),
            "An error has occurred in the platform.".into(),
            None,
        ),
        Failure::NotFound => {
            (404, format!("{ERRORS}#not-found"), "Not Found".into(), "The message was not found.".into(), None)
        }
    };
    let code = kind.rsplit_once('#').map(|(_, fragment)| fragment.to_owned());
    let mut body = json!({
        "type": kind,
        "title": title,
        "detail": detail,
        "instance": super::new_uuid().to_string(),
    });
    if let (Some(parameters), Some(object)) = (parameters, body.as_object_mut()) {
        object.insert("invalid_parameters".into(), parameters);
    }
    ErrorReply { status: status_code(status), code, body, content_type: PROBLEM_JSON, headers: Vec::new() }
}

/// `{message_uuid}`.
pub(super) fn accepted(message: &ReceivedMessage) -> Value {
    json!({"message_uuid": message.id.clone().unwrap_or_default()})
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().fold(String::with_capacity(64), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

fn signed(url: &str, event: &str, body: &Value, signer: Signer<'_>) -> Webhook {
    let body = body.to_string().into_bytes();
    let claims = json!({
        "iat": signer.now.unix_timestamp(),
        "jti": super::new_uuid().to_string(),
        "iss": "Vonage",
        "payload_hash": sha256_hex(&body),
        "api_key": VONAGE_API_KEY,
        "application_id": VONAGE_APPLICATION_ID,
    });
    let token = sms_sdk::provider::vonage::sign_jwt(VONAGE_SIGNATURE_SECRET, &claims);
    Webhook {
        url: url.to_owned(),
        event: event.to_owned(),
        content_type: "application/json",
        headers: vec![("authorization", format!("Bearer {token}"))],
        body,
    }
}

/// `submitted`, then `delivered` or `undeliverable` (error 1330).
pub(super) fn status_webhook(message: &ReceivedMessage, step: Step, url: &str, signer: Signer<'_>) -> Webhook {
    let status = match step {
        Step::Sent => "submitted",
        Step::Delivered => "delivered",
        Step::Undelivered => "undeliverable",
    };
    let mut body = json!({
        "message_uuid": message.id.clone().unwrap_or_default(),
        "to": without_plus(message.to.as_deref().unwrap_or_default()),
        "from": without_plus(message.from.as_deref().unwrap_or_default()),
        "timestamp": rfc3339(signer.now),
        "status": status,
        "channel": "sms",
        "usage": {"currency": "EUR", "price": "0.0333"},
    });
    // Vonage repeats the request's `client_ref` in every status webhook of the message.
    if let (Some(client_ref), Some(object)) = (&message.client_ref, body.as_object_mut()) {
        object.insert("client_ref".into(), client_ref.clone().into());
    }
    if let (Step::Undelivered, Some(object)) = (step, body.as_object_mut()) {
        object.insert(
            "error".into(),
            json!({
                "type": format!("{ERRORS}/messages#{UNDELIVERED_CODE}"),
                "title": UNDELIVERED_CODE,
                "detail": "The message could not be delivered to the handset.",
            }),
        );
    }
    signed(url, status, &body, signer)
}

/// An incoming SMS (no `status`).
pub(super) fn inbound_webhook(inbound: &Inbound, url: &str, signer: Signer<'_>) -> Webhook {
    let body = json!({
        "channel": "sms",
        "message_uuid": inbound.id,
        "to": without_plus(&inbound.to),
        "from": without_plus(&inbound.from),
        "timestamp": rfc3339(signer.now),
        "text": inbound.text,
        "sms": {"num_messages": "1"},
        "usage": {"currency": "EUR", "price": "0.0057"},
    });
    signed(url, "inbound", &body, signer)
}
