//! AWS End User Messaging SMS (`pinpoint-sms-voice-v2`): `SendTextMessage` over AWS JSON 1.0
//! (`POST /`, the operation in `X-Amz-Target`), signed with Signature Version 4 for the service
//! `sms-voice`; AWS JSON 1.0 errors (`__type`, `Message`, `Reason`); and delivery events and
//! two-way inbound messages as signed SNS HTTP notifications.
//!
//! The signature is checked as AWS checks it: the canonical request is rebuilt from what arrived
//! (the method, path and query, the headers the `Authorization` header names, and a SHA-256 of
//! the exact body) and signed again with the fixed secret. Like AWS's front end, the emulator
//! names what is wrong: no `Authorization` (`MissingAuthenticationTokenException`), one that is
//! not a complete signature (`IncompleteSignatureException`), an access key id the account does
//! not have (`UnrecognizedClientException`), and a signature that does not match, is scoped to
//! another region, service or day, or whose `X-Amz-Date` is more than 5 minutes from now
//! (`InvalidSignatureException`). The fixed credentials are long-term ones: a session token is
//! an unknown one.
//!
//! AWS has no message callback URL: a configuration set's event destination publishes delivery
//! events to an SNS topic, which posts them to its HTTP subscribers. So the status events of a
//! message go to the emulator's webhook URL for AWS, wrapped in an SNS `Notification` signed
//! with the emulator's SNS certificate. SNS signs with RSA over SHA-1 (`SignatureVersion` 1) by
//! default, or over SHA-256 (`SignatureVersion` 2) when the topic asks for it; `ring`, the
//! emulator's only RSA implementation, signs no SHA-1, so the emulator's topic is one that asks
//! for version 2.

use std::collections::BTreeMap;

use axum::response::Response;
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue};
use ring::rand::SystemRandom;
use ring::signature::RSA_PKCS1_SHA256;
use serde_json::{Map, Value, json};
use sms_sdk::encoding::{Encoding, estimate_segments};
use sms_sdk::provider::aws::sigv4;
use sms_sdk::provider::aws::{__private, SIGNING_SERVICE};
use time::OffsetDateTime;

use super::wire::{base64_standard, status_code, string_field};
use super::{AuthRequest, Denied, ErrorReply, Failure, Field, Inbound, SendRequest, Signer, Step, Webhook};
use crate::credentials::{
    AWS_ACCESS_KEY_ID, AWS_REGION, AWS_SECRET_ACCESS_KEY, AWS_SNS_SIGNING_CERT_URL, AWS_SNS_TOPIC_ARN,
};
use crate::magic::{Reason, codes};
use crate::model::ReceivedMessage;

/// The content type of every AWS JSON 1.0 request and answer.
pub(super) const CONTENT_TYPE: &str = __private::CONTENT_TYPE;
/// The header that names the operation.
const TARGET_HEADER: &str = "x-amz-target";
/// The header AWS names an error's type in (as well as the body's `__type`).
const ERROR_TYPE_HEADER: &str = "x-amzn-errortype";
/// The header of the request id AWS gives every answer.
const REQUEST_ID_HEADER: &str = "x-amzn-requestid";
/// How far `X-Amz-Date` may be from now, either way.
const MAX_SKEW: time::Duration = time::Duration::minutes(5);
/// The longest `MessageBody` the service takes, in characters.
const MAX_BODY_CHARS: usize = 1600;
/// The namespace of the errors of AWS's request front end: credentials, unknown operations,
/// unreadable bodies.
const FRONT_END: &str = "com.amazon.coral.service";
/// The namespace of the service's own exceptions.
const SERVICE: &str = "com.amazonaws.pinpointsmsvoicev2";
/// The number an account-level send (no `OriginationIdentity`) or a send from a pool goes out
/// from: the account's number, as AWS picks one.
const ACCOUNT_NUMBER: &str = "+15005550006";
/// The id of the emulator's HTTP subscription to its topic.
const SUBSCRIPTION_ID: &str = "e1a70000-0000-4000-8000-000000000006";
/// The `SignatureVersion` of the emulator's notifications: 2, RSA over SHA-256 (see the module).
const SIGNATURE_VERSION: &str = "2";
/// The keywords every AWS number answers, matched against the whole inbound text.
const KEYWORDS: &[&str] =
    &["STOP", "ARRET", "CANCEL", "END", "OPT-OUT", "OPTOUT", "QUIT", "REMOVE", "TD", "UNSUBSCRIBE", "HELP"];

/// What is wrong with a signature whose recomputation differs.
const MISMATCH: &str = "The request signature we calculated does not match the signature you provided. Check your \
                        AWS Secret Access Key and signing method. Consult the service documentation for details.";

/// Whether the request names `SendTextMessage`, the one operation the emulator serves.
pub(crate) fn is_send_text_message(headers: &HeaderMap) -> bool {
    headers.get(TARGET_HEADER).and_then(|value| value.to_str().ok()) == Some(__private::TARGET)
}

/// The answer to any other operation (or none).
pub(crate) fn unknown_operation() -> ErrorReply {
    exception(400, FRONT_END, "UnknownOperationException", "The operation is not supported by this emulator.".into())
}

/// `response` with a request id, as AWS gives every answer.
pub(super) fn finish(mut response: Response) -> Response {
    if !response.headers().contains_key(REQUEST_ID_HEADER)
        && let Ok(id) = HeaderValue::from_str(&super::new_uuid().to_string())
    {
        response.headers_mut().insert(REQUEST_ID_HEADER, id);
    }
    response
}

/// The parts of an `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct AuthorizationHeader<'a> {
    key_id: &'a str,
    date: &'a str,
    region: &'a str,
    service: &'a str,
    signed_headers: &'a str,
    signature: &'a str,
}

/// Reads an `Authorization` header of Signature Version 4.
fn parse_authorization(value: &str) -> Result<AuthorizationHeader<'_>, Denied> {
    let incomplete =
        Denied::Incomplete("Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters.");
    let (algorithm, parameters) = value.trim().split_once(' ').ok_or(incomplete)?;
    if algorithm != sigv4::ALGORITHM {
        return Err(Denied::Incomplete("Unsupported AWS 'algorithm': only AWS4-HMAC-SHA256 is accepted."));
    }
    let (mut credential, mut signed_headers, mut signature) = (None, None, None);
    for parameter in parameters.split(',') {
        match parameter.trim().split_once('=') {
            Some(("Credential", value)) => credential = Some(value),
            Some(("SignedHeaders", value)) => signed_headers = Some(value),
            Some(("Signature", value)) => signature = Some(value),
            Some(_) | None => {}
        }
    }
    let (Some(credential), Some(signed_headers), Some(signature)) = (credential, signed_headers, signature) else {
        return Err(incomplete);
    };
    let parts: Vec<&str> = credential.split('/').collect();
    let [key_id, date, region, service, "aws4_request"] = parts.as_slice() else {
        return Err(Denied::Incomplete(
            "Credential must have exactly 5 slash-delimited elements: access_key_id/date/region/service/aws4_request.",
        ));
    };
    Ok(AuthorizationHeader { key_id, date, region, service, signed_headers, signature })
}

/// The time of an `X-Amz-Date` (`20150830T123600Z`).
fn parse_amz_date(value: &str) -> Option<OffsetDateTime> {
    let format = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    time::PrimitiveDateTime::parse(value, format).ok().map(time::PrimitiveDateTime::assume_utc)
}

/// Equal, in time that depends on the lengths only.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |difference, (x, y)| difference | (x ^ y)) == 0
}

/// Checks the request's Signature Version 4 `Authorization` against the fixed credentials.
pub(super) fn authenticate(request: &AuthRequest<'_>) -> Result<(), Denied> {
    let header = |name: &str| request.headers.get(name).map(|value| value.to_str().unwrap_or_default());
    let Some(authorization) = header(AUTHORIZATION.as_str()) else { return Err(Denied::Missing) };
    let signature = parse_authorization(authorization)?;
    let Some(amz_date) = header("x-amz-date") else {
        return Err(Denied::Incomplete("Authorization header requires existence of a 'X-Amz-Date' header."));
    };
    let signed_at = parse_amz_date(amz_date)
        .ok_or(Denied::Incomplete("X-Amz-Date must be in ISO-8601 basic format (20150830T123600Z)."))?;
    if signature.key_id != AWS_ACCESS_KEY_ID || request.headers.contains_key("x-amz-security-token") {
        return Err(Denied::UnknownKey);
    }
    if amz_date.get(..8) != Some(signature.date) {
        return Err(Denied::Signature(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.",
        ));
    }
    if signature.region != AWS_REGION {
        return Err(Denied::Signature("Credential should be scoped to a valid region (us-east-1)."));
    }
    if signature.service != SIGNING_SERVICE {
        return Err(Denied::Signature("Credential should be scoped to correct service: 'sms-voice'."));
    }
    let names: Vec<&str> = signature.signed_headers.split(';').collect();
    if !names.contains(&"host") {
        return Err(Denied::Signature("'Host' must be a 'SignedHeader' in the AWS Authorization."));
    }
    if signed_at < request.now - MAX_SKEW {
        return Err(Denied::Signature("Signature expired: X-Amz-Date is more than 5 minutes before now."));
    }
    if signed_at > request.now + MAX_SKEW {
        return Err(Denied::Signature("Signature not yet current: X-Amz-Date is more than 5 minutes after now."));
    }
    let mut headers = Vec::new();
    for name in &names {
        let mut values = request.headers.get_all(*name).iter().peekable();
        if values.peek().is_none() {
            return Err(Denied::Signature(MISMATCH));
        }
        for value in values {
            headers.push((*name, value.to_str().map_err(|_| Denied::Signature(MISMATCH))?));
        }
    }
    let signed = sigv4::Request {
        method: request.method,
        path: request.path,
        query: request.query,
        headers: &headers,
        body: request.body,
    };
    let scope = sigv4::Scope { date: signature.date, region: signature.region, service: signature.service };
    let expected = sigv4::authorization(&signed, amz_date, signature.key_id, AWS_SECRET_ACCESS_KEY, &scope);
    let expected = expected.rsplit_once("Signature=").map(|(_, signature)| signature).unwrap_or_default();
    if same_bytes(expected.as_bytes(), signature.signature.as_bytes()) {
        Ok(())
    } else {
        Err(Denied::Signature(MISMATCH))
    }
}

/// Whether an origination identity names a resource (a pool, a phone number or sender ID by
/// id or ARN) rather than being a number or sender ID itself.
fn is_resource(identity: &str) -> bool {
    ["arn:", "pool-", "phone-", "senderid-"].iter().any(|prefix| identity.starts_with(prefix))
}

/// The first field of the request whose value AWS does not take: a known member of the wrong
/// type, a `Context` that is not a map of strings, a `MessageType` or `TimeToLive` out of its
/// range, or a body over 1,600 characters.
fn invalid_field(json: &Value) -> Option<&'static str> {
    let strings = ["DestinationPhoneNumber", "OriginationIdentity", "MessageBody", "MessageType"];
    if let Some(name) = strings.into_iter().find(|name| json.get(*name).is_some_and(|value| !value.is_string())) {
        return Some(name);
    }
    let context = json.get("Context");
    if context.is_some_and(|context| !context.as_object().is_some_and(|map| map.values().all(Value::is_string))) {
        return Some("Context");
    }
    if json
        .get("MessageType")
        .and_then(Value::as_str)
        .is_some_and(|kind| !["TRANSACTIONAL", "PROMOTIONAL"].contains(&kind))
    {
        return Some("MessageType");
    }
    let ttl = __private::MIN_TIME_TO_LIVE_SECS..=__private::MAX_TIME_TO_LIVE_SECS;
    let ttl_ok =
        |value: &Value| value.as_u64().and_then(|secs| u32::try_from(secs).ok()).is_some_and(|s| ttl.contains(&s));
    if json.get("TimeToLive").is_some_and(|value| !ttl_ok(value)) {
        return Some("TimeToLive");
    }
    if json.get("MessageBody").and_then(Value::as_str).is_some_and(|body| body.chars().count() > MAX_BODY_CHARS) {
        return Some("MessageBody");
    }
    None
}

/// Reads the `SendTextMessage` JSON body. `OriginationIdentity` is optional (AWS then sends from
/// one of the account's numbers); a pool's or number's id or ARN is a resource sender.
pub(super) fn parse(body: &[u8]) -> Option<SendRequest> {
    let json: Value = serde_json::from_slice(body).ok().filter(Value::is_object)?;
    let from = string_field(&json, "OriginationIdentity");
    let context = json.get("Context").and_then(Value::as_object).map(|map| {
        map.iter()
            .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned())))
            .collect::<BTreeMap<_, _>>()
    });
    Some(SendRequest {
        to: string_field(&json, "DestinationPhoneNumber"),
        service_sender: from.as_deref().is_some_and(is_resource),
        account_sender: json.get("OriginationIdentity").is_none(),
        from,
        body: string_field(&json, "MessageBody"),
        media_urls: Vec::new(),
        callback_url: None,
        client_ref: None,
        context,
        message_type: string_field(&json, "MessageType"),
        message_id: None,
        invalid: invalid_field(&json),
    })
}

/// `{"MessageId": …}`.
pub(super) fn accepted(message: &ReceivedMessage) -> Value {
    json!({"MessageId": message.id.clone().unwrap_or_default()})
}

/// An AWS JSON 1.0 error: `__type` (namespaced) and the message (`message` for the front end's,
/// `Message` for the service's, as each spells it), `x-amzn-ErrorType` and a request id.
fn exception(status: u16, namespace: &'static str, name: &'static str, message: String) -> ErrorReply {
    let id = super::new_uuid().to_string();
    let message_key = if namespace == FRONT_END { "message" } else { "Message" };
    let mut body = Map::new();
    body.insert("__type".into(), format!("{namespace}#{name}").into());
    body.insert(message_key.into(), message.into());
    ErrorReply {
        status: status_code(status),
        code: Some(name.to_owned()),
        body: Value::Object(body),
        content_type: CONTENT_TYPE,
        headers: vec![
            (ERROR_TYPE_HEADER, format!("{name}:http://internal.amazon.com/coral/{namespace}/")),
            (REQUEST_ID_HEADER, id),
        ],
    }
}

/// One of the service's exceptions with a `Reason` (the code the library keeps) and more members.
fn with_reason(mut reply: ErrorReply, reason: &'static str, members: &[(&str, Value)]) -> ErrorReply {
    if let Value::Object(body) = &mut reply.body {
        body.insert("Reason".into(), reason.into());
        for (name, value) in members {
            body.insert((*name).into(), value.clone());
        }
    }
    reply.code = Some(reason.to_owned());
    reply
}

/// A `ValidationException` of `field`, for `reason`.
fn validation(reason: &'static str, message: String, field: &str, problem: &str) -> ErrorReply {
    let fields = json!([{"Name": field, "Message": problem}]);
    with_reason(exception(400, SERVICE, "ValidationException", message), reason, &[("Fields", fields)])
}

fn field_name(field: Field) -> &'static str {
    match field {
        Field::To => "DestinationPhoneNumber",
        Field::From => "OriginationIdentity",
        Field::Body => "MessageBody",
    }
}

/// The field a rejection is about.
const fn rejected_field(reason: Reason) -> &'static str {
    match reason {
        Reason::SenderCannotRoute | Reason::InvalidSender => "OriginationIdentity",
        Reason::InvalidNumber | Reason::CannotReceive | Reason::NoPermission | Reason::OptedOut => {
            "DestinationPhoneNumber"
        }
    }
}

/// AWS's answer to a refused signature.
fn denied(denied: Denied) -> ErrorReply {
    match denied {
        Denied::Missing => {
            exception(403, FRONT_END, "MissingAuthenticationTokenException", "Missing Authentication Token".into())
        }
        Denied::Incomplete(why) => exception(400, FRONT_END, "IncompleteSignatureException", why.into()),
        Denied::Credentials | Denied::UnknownKey => exception(
            403,
            FRONT_END,
            "UnrecognizedClientException",
            "The security token included in the request is invalid.".into(),
        ),
        Denied::Signature(why) => exception(403, FRONT_END, "InvalidSignatureException", why.into()),
    }
}

pub(super) fn error(failure: Failure) -> ErrorReply {
    match failure {
        Failure::Auth(why) => denied(why),
        Failure::Unreadable => {
            exception(400, FRONT_END, "SerializationException", "The request body is not a JSON object.".into())
        }
        // AWS documents no 413 for this call: its validation error of a size, at the status a
        // proxy in front of it would answer.
        Failure::TooLarge { limit } => with_reason(
            exception(413, SERVICE, "ValidationException", format!("The request body is over {limit} bytes.")),
            "MAXIMUM_SIZE_EXCEEDED",
            &[],
        ),
        Failure::Missing(field) => {
            let name = field_name(field);
            let message = format!(
                "1 validation error detected: Value at '{name}' failed to satisfy constraint: Member must not be null \
                 or empty"
            );
            validation("MISSING_PARAMETER", message, name, "Member must not be null or empty")
        }
        Failure::Invalid(name) => {
            let message = format!("1 validation error detected: Value at '{name}' failed to satisfy constraint");
            validation("FIELD_VALIDATION_FAILED", message, name, "The value is not accepted")
        }
        Failure::Reject(reason) => {
            let codes = codes(reason);
            let (name, reason_code) = codes.aws;
            let detail = codes.detail.to_owned();
            if name == "ConflictException" {
                let members = [("ResourceType", json!("opt-out-list")), ("ResourceId", json!("Default"))];
                with_reason(exception(400, SERVICE, "ConflictException", detail), reason_code, &members)
            } else {
                validation(reason_code, detail, rejected_field(reason), codes.title)
            }
        }
        // No `Retry-After`: AWS sends none (`Provider::retry_after`).
        Failure::RateLimited => exception(400, SERVICE, "ThrottlingException", "Rate exceeded".into()),
        Failure::ServerError => {
            let mut reply = exception(500, SERVICE, "InternalServerException", "An internal error occurred.".into());
            let id = reply.headers.iter().find(|(name, _)| *name == REQUEST_ID_HEADER).map(|(_, id)| id.clone());
            if let (Value::Object(body), Some(id)) = (&mut reply.body, id) {
                body.insert("RequestId".into(), id.into());
            }
            reply
        }
        Failure::NotFound => exception(400, SERVICE, "ResourceNotFoundException", "No such message.".into()),
    }
}

/// Milliseconds since the epoch, as AWS's events write times.
fn millis(at: OffsetDateTime) -> i64 {
    i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or_default()
}

/// An SNS `Timestamp`: ISO 8601 in UTC with milliseconds (`2012-04-25T21:49:25.719Z`).
fn sns_timestamp(at: OffsetDateTime) -> String {
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    at.to_offset(time::UtcOffset::UTC).format(format).unwrap_or_default()
}

/// The ISO 3166 country of a few calling codes (`None` for the rest).
fn iso_country(number: &str) -> Option<&'static str> {
    const CODES: &[(&str, &str)] = &[
        ("+1", "US"),
        ("+44", "GB"),
        ("+33", "FR"),
        ("+49", "DE"),
        ("+34", "ES"),
        ("+39", "IT"),
        ("+31", "NL"),
        ("+61", "AU"),
        ("+81", "JP"),
        ("+91", "IN"),
        ("+55", "BR"),
        ("+52", "MX"),
    ];
    CODES.iter().find(|(prefix, _)| number.starts_with(prefix)).map(|(_, country)| *country)
}

/// What SNS signs of a notification: `Message`, `MessageId`, `Timestamp`, `TopicArn` and `Type`
/// (a notification published without a `Subject` has none to sign), each as its name, a
/// newline, its value and a newline.
fn string_to_sign(message: &str, message_id: &str, timestamp: &str) -> String {
    format!(
        "Message\n{message}\nMessageId\n{message_id}\nTimestamp\n{timestamp}\nTopicArn\n{AWS_SNS_TOPIC_ARN}\n\
         Type\nNotification\n"
    )
}

/// The SNS HTTP notification of `message` (a JSON text), to `url`: the envelope SNS posts, with
/// its headers, signed with the emulator's SNS key.
fn notification(url: &str, event: &str, message: &str, signer: Signer<'_>) -> Webhook {
    let message_id = super::new_uuid().to_string();
    let timestamp = sns_timestamp(signer.now);
    let key = &signer.keys.aws_sns;
    let mut signature = vec![0; key.public().modulus_len()];
    let text = string_to_sign(message, &message_id, &timestamp);
    let signature = match key.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), text.as_bytes(), &mut signature) {
        Ok(()) => base64_standard(&signature),
        Err(_) => String::new(),
    };
    let subscription = format!("{AWS_SNS_TOPIC_ARN}:{SUBSCRIPTION_ID}");
    let unsubscribe =
        format!("https://sns.{AWS_REGION}.amazonaws.com/?Action=Unsubscribe&SubscriptionArn={subscription}");
    let body = json!({
        "Type": "Notification",
        "MessageId": message_id,
        "TopicArn": AWS_SNS_TOPIC_ARN,
        "Message": message,
        "Timestamp": timestamp,
        "SignatureVersion": SIGNATURE_VERSION,
        "Signature": signature,
        "SigningCertURL": AWS_SNS_SIGNING_CERT_URL,
        "UnsubscribeURL": unsubscribe,
    });
    Webhook {
        url: url.to_owned(),
        event: event.to_owned(),
        content_type: "text/plain; charset=UTF-8",
        headers: vec![
            ("x-amz-sns-message-type", "Notification".to_owned()),
            ("x-amz-sns-message-id", message_id),
            ("x-amz-sns-topic-arn", AWS_SNS_TOPIC_ARN.to_owned()),
            ("x-amz-sns-subscription-arn", subscription),
            ("user-agent", "Amazon Simple Notification Service Agent".to_owned()),
        ],
        body: body.to_string().into_bytes(),
    }
}

/// A delivery event of the message's configuration set: `TEXT_SUCCESSFUL` (accepted by the
/// carrier), then `TEXT_DELIVERED` (on the handset) or `TEXT_CARRIER_UNREACHABLE`, each echoing
/// the request's `Context`.
pub(super) fn status_webhook(message: &ReceivedMessage, step: Step, url: &str, signer: Signer<'_>) -> Webhook {
    let (event_type, status, description, last) = match step {
        Step::Sent => ("TEXT_SUCCESSFUL", "SUCCESSFUL", "Message has been accepted by phone carrier", false),
        Step::Delivered => ("TEXT_DELIVERED", "DELIVERED", "Message has been delivered to the handset", true),
        Step::Undelivered => (
            "TEXT_CARRIER_UNREACHABLE",
            "CARRIER_UNREACHABLE",
            "The recipient's carrier network could not be reached",
            true,
        ),
    };
    let to = message.to.clone().unwrap_or_default();
    let origination = match &message.from {
        Some(from) if !message.service_sender => from.clone(),
        Some(_) | None => ACCOUNT_NUMBER.to_owned(),
    };
    let segments = estimate_segments(message.body.as_deref().unwrap_or_default());
    let encoding = match segments.encoding {
        Encoding::Gsm7 => "GSM",
        Encoding::Ucs2 => "UNICODE",
    };
    let mut event = Map::new();
    event.insert("eventType".into(), event_type.into());
    event.insert("eventVersion".into(), "1.0".into());
    event.insert("eventTimestamp".into(), millis(signer.now).into());
    event.insert("isFinal".into(), last.into());
    event.insert("originationPhoneNumber".into(), origination.into());
    event.insert("destinationPhoneNumber".into(), to.clone().into());
    if let Some(country) = iso_country(&to) {
        event.insert("isoCountryCode".into(), country.into());
    }
    event.insert("messageId".into(), message.id.clone().unwrap_or_default().into());
    event.insert("messageRequestTimestamp".into(), millis(message.received_at).into());
    event.insert("messageEncoding".into(), encoding.into());
    event.insert("messageType".into(), message.message_type.as_deref().unwrap_or("PROMOTIONAL").into());
    event.insert("messageStatus".into(), status.into());
    event.insert("messageStatusDescription".into(), description.into());
    if let Some(context) = &message.context {
        let context: Map<String, Value> = context.iter().map(|(k, v)| (k.clone(), v.clone().into())).collect();
        event.insert("context".into(), Value::Object(context));
    }
    event.insert("totalMessageParts".into(), segments.segments.max(1).into());
    notification(url, event_type, &Value::Object(event).to_string(), signer)
}

/// The keyword of an inbound text: the whole text, when it is one every AWS number answers
/// (empty otherwise).
fn keyword(text: &str) -> String {
    let word = text.trim().to_ascii_uppercase();
    if KEYWORDS.contains(&word.as_str()) { word } else { String::new() }
}

/// A two-way message, as End User Messaging publishes it to the number's two-way topic.
pub(super) fn inbound_webhook(inbound: &Inbound, url: &str, signer: Signer<'_>) -> Webhook {
    let payload = json!({
        "originationNumber": inbound.from,
        "destinationNumber": inbound.to,
        "messageKeyword": keyword(&inbound.text),
        "messageBody": inbound.text,
        "inboundMessageId": inbound.id,
        "previousPublishedMessageId": inbound.reply_to.clone().unwrap_or_default(),
    });
    notification(url, "two_way_message", &payload.to_string(), signer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Provider, Status};
    use http::HeaderName;
    use sms_sdk::Category;

    const BODY: &[u8] =
        br#"{"DestinationPhoneNumber":"+14155550123","OriginationIdentity":"+15005550006","MessageBody":"hi"}"#;

    fn now() -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(1_800_000_000).expect("a time")
    }

    /// The headers of a request signed at `at` with `secret` as the adapter signs it.
    fn signed(at: OffsetDateTime, key_id: &str, secret: &str, body: &[u8]) -> HeaderMap {
        let date = format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            at.year(),
            u8::from(at.month()),
            at.day(),
            at.hour(),
            at.minute(),
            at.second()
        );
        let pairs = [
            ("content-type", CONTENT_TYPE),
            ("host", "127.0.0.1:4010"),
            ("x-amz-date", date.as_str()),
            ("x-amz-target", __private::TARGET),
        ];
        let request = sigv4::Request { method: "POST", path: "/", query: "", headers: &pairs, body };
        let scope = sigv4::Scope { date: date.get(..8).unwrap_or_default(), region: AWS_REGION, service: "sms-voice" };
        let authorization = sigv4::authorization(&request, &date, key_id, secret, &scope);
        let mut headers = HeaderMap::new();
        for (name, value) in pairs.into_iter().chain([("authorization", authorization.as_str())]) {
            headers.insert(HeaderName::from_static(name), HeaderValue::from_str(value).expect("a header value"));
        }
        headers
    }

    fn check(headers: &HeaderMap, body: &[u8], now: OffsetDateTime) -> Result<(), Denied> {
        let keys = crate::keys::keys().expect("the fixed keys");
        authenticate(&AuthRequest { headers, account: None, method: "POST", path: "/", query: "", body, keys, now })
    }

    #[test]
    fn the_adapters_signature_is_recomputed_and_each_fault_named() {
        let headers = signed(now(), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, BODY);
        assert_eq!(check(&headers, BODY, now()), Ok(()));
        // Another body, another secret, another key.
        assert_eq!(check(&headers, b"{}", now()), Err(Denied::Signature(MISMATCH)));
        let wrong = signed(now(), AWS_ACCESS_KEY_ID, "e1a7EmulatorAwsSecretAccessKey0000000007", BODY);
        assert_eq!(check(&wrong, BODY, now()), Err(Denied::Signature(MISMATCH)));
        let unknown = signed(now(), "AKIAE1A7000000000007", AWS_SECRET_ACCESS_KEY, BODY);
        assert_eq!(check(&unknown, BODY, now()), Err(Denied::UnknownKey));
        // Six minutes either way is too far.
        let minutes = time::Duration::minutes(6);
        let why = |at| match check(&headers, BODY, at) {
            Err(Denied::Signature(why)) => why,
            other => panic!("{other:?}"),
        };
        assert!(why(now() + minutes).starts_with("Signature expired"));
        assert!(why(now() - minutes).starts_with("Signature not yet current"));
        assert_eq!(check(&headers, BODY, now() + time::Duration::minutes(4)), Ok(()));
        // A changed signed header.
        let mut changed = headers.clone();
        changed.insert("x-amz-target", HeaderValue::from_static("PinpointSMSVoiceV2.SendMediaMessage"));
        assert_eq!(check(&changed, BODY, now()), Err(Denied::Signature(MISMATCH)));
        let mut missing = headers.clone();
        missing.remove("authorization");
        assert_eq!(check(&missing, BODY, now()), Err(Denied::Missing));
        let mut basic = headers;
        basic.insert("authorization", HeaderValue::from_static("Basic dXNlcjpwYXNz"));
        assert!(matches!(check(&basic, BODY, now()), Err(Denied::Incomplete(_))));
    }

    #[test]
    fn malformed_authorization_headers_are_incomplete() {
        for header in [
            "AWS4-HMAC-SHA256",
            "AWS4-HMAC-SHA256 Credential=AKIA/20270115/us-east-1/sms-voice/aws4_request, Signature=00",
            "AWS4-HMAC-SHA256 Credential=AKIA/20270115/us-east-1/aws4_request, SignedHeaders=host, Signature=00",
            "AWS4-HMAC-SHA1 Credential=AKIA/20270115/us-east-1/sms-voice/aws4_request, SignedHeaders=host, Signature=00",
        ] {
            assert!(matches!(parse_authorization(header), Err(Denied::Incomplete(_))), "{header}");
        }
        let parsed = parse_authorization(
            "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/sms-voice/aws4_request, SignedHeaders=host;x-amz-date, Signature=ab",
        );
        assert_eq!(
            parsed.map(|s| (s.key_id, s.date, s.signed_headers, s.signature)),
            Ok(("AKID", "20150830", "host;x-amz-date", "ab"))
        );
    }

    #[test]
    fn the_body_is_read_with_its_optional_sender_and_context() {
        let request =
            parse(br#"{"DestinationPhoneNumber":"+14155550123","MessageBody":"hi","Context":{"sms_sdk_ref":"r1"}}"#)
                .expect("an object");
        assert_eq!((request.missing(), request.from.clone(), request.account_sender), (None, None, true));
        assert_eq!(request.context.and_then(|c| c.get("sms_sdk_ref").cloned()).as_deref(), Some("r1"));
        let pool = parse(br#"{"DestinationPhoneNumber":"+1","OriginationIdentity":"pool-0123","MessageBody":"x"}"#);
        assert!(pool.is_some_and(|r| r.service_sender && !r.account_sender));
        let invalid = |body: &str| parse(body.as_bytes()).and_then(|r| r.invalid);
        assert_eq!(invalid(r#"{"DestinationPhoneNumber":15005550006}"#), Some("DestinationPhoneNumber"));
        assert_eq!(invalid(r#"{"Context":{"a":1}}"#), Some("Context"));
        assert_eq!(invalid(r#"{"MessageType":"MARKETING"}"#), Some("MessageType"));
        assert_eq!(invalid(r#"{"TimeToLive":4}"#), Some("TimeToLive"));
        assert_eq!(invalid(r#"{"TimeToLive":600}"#), None);
        assert_eq!(invalid(&format!(r#"{{"MessageBody":"{}"}}"#, "a".repeat(1601))), Some("MessageBody"));
        assert!(parse(b"[]").is_none());
    }

    #[test]
    fn errors_are_classified_by_the_library_as_meant() {
        use sms_sdk::provider::aws::__private::{error_type, rejection_category};
        let category = |failure| {
            let reply = error(failure);
            let kind = reply.body["__type"].as_str().map(error_type).map(str::to_owned);
            let reason = reply.body["Reason"].as_str().map(str::to_owned);
            (rejection_category(kind.as_deref(), reason.as_deref()), reply.status.as_u16())
        };
        assert_eq!(category(Failure::Auth(Denied::UnknownKey)), (Category::Auth, 403));
        assert_eq!(category(Failure::Auth(Denied::Signature(MISMATCH))), (Category::Auth, 403));
        for reason in [
            Reason::InvalidNumber,
            Reason::CannotReceive,
            Reason::SenderCannotRoute,
            Reason::InvalidSender,
            Reason::NoPermission,
            Reason::OptedOut,
        ] {
            assert_eq!(category(Failure::Reject(reason)), (reason.category(Provider::Aws), 400), "{reason:?}");
        }
        assert_eq!(category(Failure::RateLimited), (Category::RateLimited, 400));
        assert_eq!(category(Failure::Missing(Field::To)), (Category::Request, 400));
        assert_eq!(error(Failure::ServerError).status.as_u16(), 500);
        let opted_out = error(Failure::Reject(Reason::OptedOut));
        assert_eq!(opted_out.code.as_deref(), Some("DESTINATION_PHONE_NUMBER_OPTED_OUT"));
        assert_eq!(opted_out.body["__type"], "com.amazonaws.pinpointsmsvoicev2#ConflictException");
        assert!(
            opted_out
                .headers
                .iter()
                .any(|(name, value)| *name == ERROR_TYPE_HEADER && value.starts_with("ConflictException:"))
        );
    }

    #[test]
    fn the_string_to_sign_is_the_librarys() {
        use sms_sdk::provider::aws::{SignedFields, string_to_sign as library};
        let fields = SignedFields {
            kind: "Notification",
            message: "{\"a\":1}",
            message_id: "m-1",
            subject: None,
            timestamp: "2027-01-15T08:00:00.000Z",
            topic_arn: AWS_SNS_TOPIC_ARN,
            token: None,
            subscribe_url: None,
        };
        assert_eq!(string_to_sign("{\"a\":1}", "m-1", "2027-01-15T08:00:00.000Z"), library(&fields));
        assert_eq!(sns_timestamp(now() + time::Duration::milliseconds(7)), "2027-01-15T08:00:00.007Z");
    }

    #[test]
    fn a_delivery_event_is_an_sns_notification_echoing_the_context() {
        let keys = crate::keys::keys().expect("the fixed keys");
        let signer = Signer { keys, now: now() };
        let mut message = ReceivedMessage::new(Provider::Aws, now());
        message.id = Some(super::super::new_uuid().to_string());
        message.to = Some("+14155550123".into());
        message.from = Some("+15005550006".into());
        message.body = Some("héllo €".into());
        message.context = Some(BTreeMap::from([("sms_sdk_ref".to_owned(), "ref-1".to_owned())]));
        message.status = Status::Sent;
        let hook = status_webhook(&message, Step::Undelivered, "https://hooks.example/aws", signer);
        let envelope: Value = serde_json::from_slice(&hook.body).expect("JSON");
        assert_eq!(
            (envelope["Type"].as_str(), envelope["TopicArn"].as_str()),
            (Some("Notification"), Some(AWS_SNS_TOPIC_ARN))
        );
        let event: Value = serde_json::from_str(envelope["Message"].as_str().expect("a message")).expect("JSON");
        assert_eq!(event["eventType"], "TEXT_CARRIER_UNREACHABLE");
        assert_eq!(event["isFinal"], true);
        assert_eq!(event["context"]["sms_sdk_ref"], "ref-1");
        assert_eq!(event["messageEncoding"], "GSM");
        assert_eq!(event["isoCountryCode"], "US");
        assert_eq!(event["messageRequestTimestamp"], 1_800_000_000_000_i64);
        let header = |name: &str| hook.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str());
        assert_eq!(header("x-amz-sns-message-id"), envelope["MessageId"].as_str());
        let text = string_to_sign(
            envelope["Message"].as_str().unwrap_or_default(),
            envelope["MessageId"].as_str().unwrap_or_default(),
            envelope["Timestamp"].as_str().unwrap_or_default(),
        );
        let signature = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            envelope["Signature"].as_str().unwrap_or_default(),
        )
        .expect("base64");
        let public = ring::signature::KeyPair::public_key(&keys.aws_sns);
        let key =
            ring::signature::UnparsedPublicKey::new(&ring::signature::RSA_PKCS1_2048_8192_SHA256, public.as_ref());
        assert!(key.verify(text.as_bytes(), &signature).is_ok());
    }

    #[test]
    fn inbound_keywords_are_whole_texts() {
        assert_eq!(keyword(" stop "), "STOP");
        assert_eq!(keyword("stop it"), "");
        assert_eq!(keyword("Help"), "HELP");
    }
}
