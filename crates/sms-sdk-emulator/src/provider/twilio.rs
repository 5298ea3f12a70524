//! Twilio: form requests with Basic auth, `{code, message, more_info, status}` errors, the
//! message resource (send answer, fetch and list), and `X-Twilio-Signature` form webhooks.

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::{Rfc2822, Rfc3339};

use super::wire::{basic_credentials, form_body, plain_status_name, status_code};
use super::{AuthRequest, ErrorReply, Failure, Field, Inbound, SendRequest, Step, Webhook};
use crate::credentials::{TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN};
use crate::magic::codes;
use crate::model::{ReceivedMessage, Status};
use crate::respond::JSON;

const API_VERSION: &str = "2010-04-01";
/// Unreachable destination handset: the library maps it to `undelivered`, not `filtered`.
const UNDELIVERED_CODE: &str = "30003";

pub(super) fn authenticate(request: &AuthRequest<'_>) -> bool {
    request.account == Some(TWILIO_ACCOUNT_SID)
        && basic_credentials(request.headers)
            .is_some_and(|(user, password)| user == TWILIO_ACCOUNT_SID && password == TWILIO_AUTH_TOKEN)
}

/// Reads the form; a messaging service SID wins over `From`.
pub(super) fn parse(body: &[u8]) -> SendRequest {
    let mut request = SendRequest::default();
    for (name, value) in url::form_urlencoded::parse(body) {
        let value = value.into_owned();
        match name.as_ref() {
            "To" => request.to = Some(value),
            "From" if !request.service_sender => request.from = Some(value),
            "MessagingServiceSid" => {
                request.from = Some(value);
                request.service_sender = true;
            }
            "Body" => request.body = Some(value),
            "MediaUrl" => request.media_urls.push(value),
            "StatusCallback" => request.callback_url = Some(value),
            _ => {}
        }
    }
    request
}

pub(super) fn error(failure: Failure) -> ErrorReply {
    let (status, code, message): (u16, u32, String) = match failure {
        Failure::Auth(_) => (401, 20003, "Authenticate".into()),
        Failure::Unreadable => (400, 20001, "The request body could not be read.".into()),
        // Twilio's documented 20413: Request Entity Too Large.
        Failure::TooLarge { limit } => {
            (413, 20413, format!("Request Entity Too Large: the request body is over {limit} bytes."))
        }
        Failure::Missing(Field::To) => (400, 21604, "A 'To' phone number is required.".into()),
        Failure::Missing(Field::From) => (400, 21603, "A 'From' phone number is required.".into()),
        Failure::Missing(Field::Body) => (400, 21602, "Message body is required.".into()),
        Failure::Invalid(name) => (400, 20001, format!("The '{name}' parameter is invalid.")),
        Failure::Reject(reason) => (400, codes(reason).twilio, codes(reason).detail.into()),
        Failure::RateLimited => (429, 20429, "Too Many Requests".into()),
        Failure::ServerError => (500, 20500, "Internal Server Error".into()),
        Failure::NotFound => (404, 20404, "The requested resource was not found".into()),
    };
    let body = json!({
        "code": code,
        "message": message,
        "more_info": format!("https://www.twilio.com/docs/errors/{code}"),
        "status": status,
    });
    ErrorReply {
        status: status_code(status),
        code: Some(code.to_string()),
        body,
        content_type: JSON,
        headers: Vec::new(),
    }
}

fn rfc2822(at: OffsetDateTime) -> String {
    at.format(&Rfc2822).unwrap_or_default()
}

/// The message resource (`sid` `SM` + 32 hex).
pub(super) fn resource(message: &ReceivedMessage) -> Value {
    let sid = message.id.clone().unwrap_or_default();
    let from = message.from.clone().unwrap_or_default();
    let service = message.service_sender;
    let undelivered = message.status == Status::Undelivered;
    let uri = format!("/2010-04-01/Accounts/{TWILIO_ACCOUNT_SID}/Messages/{sid}");
    let date = rfc2822(message.received_at);
    json!({
        "account_sid": TWILIO_ACCOUNT_SID,
        "api_version": API_VERSION,
        "body": message.body.clone().unwrap_or_default(),
        "date_created": date,
        "date_sent": date,
        "date_updated": date,
        "direction": "outbound-api",
        "error_code": if undelivered { Value::from(30003) } else { Value::Null },
        "error_message": if undelivered { Value::from("Unreachable destination handset") } else { Value::Null },
        "from": if service { Value::Null } else { Value::from(from.clone()) },
        "messaging_service_sid": if service { Value::from(from) } else { Value::Null },
        "num_media": message.media_urls.len().to_string(),
        "num_segments": "1",
        "price": null,
        "price_unit": "USD",
        "sid": sid,
        "status": plain_status_name(message.status),
        "subresource_uris": {"media": format!("{uri}/Media.json")},
        "to": message.to.clone().unwrap_or_default(),
        "uri": format!("{uri}.json"),
    })
}

/// A `DateSent` filter bound: a date (`2025-01-31`, the whole day) or an RFC 3339 / RFC 2822
/// time. Returns the first and last instants it covers.
fn date_bounds(text: &str) -> Option<(OffsetDateTime, OffsetDateTime)> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    if let Ok(day) = time::Date::parse(text, format) {
        let start = day.midnight().assume_utc();
        let end = start.saturating_add(time::Duration::days(1)).saturating_sub(time::Duration::nanoseconds(1));
        return Some((start, end));
    }
    let at = OffsetDateTime::parse(text, &Rfc3339).or_else(|_| OffsetDateTime::parse(text, &Rfc2822)).ok()?;
    Some((at, at))
}

/// The message list, newest first, filtered by `To`, `From`, `DateSent`, `DateSent>` (on or
/// after) and `DateSent<` (on or before).
pub(crate) fn list(messages: &[ReceivedMessage], query: &str) -> Value {
    let filters: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    let keep = |message: &ReceivedMessage| {
        filters.iter().all(|(name, value)| match name.as_str() {
            "To" => message.to.as_deref() == Some(value.as_str()),
            "From" => message.from.as_deref() == Some(value.as_str()),
            "DateSent>" => date_bounds(value).is_some_and(|(start, _)| message.received_at >= start),
            "DateSent<" => date_bounds(value).is_some_and(|(_, end)| message.received_at <= end),
            "DateSent" => date_bounds(value).is_some_and(|(start, end)| (start..=end).contains(&message.received_at)),
            _ => true,
        })
    };
    let listed: Vec<Value> = messages
        .iter()
        .rev()
        .filter(|m| m.provider == super::Provider::Twilio && m.id.is_some() && keep(m))
        .map(resource)
        .collect();
    let uri = format!("/2010-04-01/Accounts/{TWILIO_ACCOUNT_SID}/Messages.json");
    json!({
        "end": listed.len().saturating_sub(1),
        "first_page_uri": format!("{uri}?PageSize=50&Page=0"),
        "messages": listed,
        "next_page_uri": null,
        "page": 0,
        "page_size": 50,
        "previous_page_uri": null,
        "start": 0,
        "uri": uri,
    })
}

fn signed(url: &str, event: &str, params: &[(&str, String)]) -> Webhook {
    let signature = sms_sdk::provider::twilio::signature(TWILIO_AUTH_TOKEN, url, params);
    Webhook {
        url: url.to_owned(),
        event: event.to_owned(),
        content_type: "application/x-www-form-urlencoded",
        headers: vec![("x-twilio-signature", signature)],
        body: form_body(params),
    }
}

/// `sent`, then `delivered` or `undelivered` (`ErrorCode` 30003).
pub(super) fn status_webhook(message: &ReceivedMessage, step: Step, url: &str) -> Webhook {
    let sid = message.id.clone().unwrap_or_default();
    let status = plain_status_name(step.status());
    let from = message.from.clone().unwrap_or_default();
    let mut params = vec![
        ("SmsSid", sid.clone()),
        ("SmsStatus", status.to_owned()),
        ("MessageStatus", status.to_owned()),
        ("To", message.to.clone().unwrap_or_default()),
    ];
    if message.service_sender {
        params.push(("MessagingServiceSid", from));
    } else {
        params.push(("From", from));
    }
    params.extend([
        ("MessageSid", sid),
        ("AccountSid", TWILIO_ACCOUNT_SID.to_owned()),
        ("ApiVersion", API_VERSION.into()),
    ]);
    if step == Step::Undelivered {
        params.push(("ErrorCode", UNDELIVERED_CODE.to_owned()));
    }
    signed(url, status, &params)
}

/// An incoming message (`SmsStatus` `received`).
pub(super) fn inbound_webhook(inbound: &Inbound, url: &str) -> Webhook {
    let params = [
        ("SmsMessageSid", inbound.id.clone()),
        ("NumMedia", "0".to_owned()),
        ("SmsSid", inbound.id.clone()),
        ("SmsStatus", "received".to_owned()),
        ("Body", inbound.text.clone()),
        ("To", inbound.to.clone()),
        ("NumSegments", "1".to_owned()),
        ("MessageSid", inbound.id.clone()),
        ("AccountSid", TWILIO_ACCOUNT_SID.to_owned()),
        ("From", inbound.from.clone()),
        ("ApiVersion", API_VERSION.to_owned()),
    ];
    signed(url, "received", &params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_messaging_service_wins_over_from() {
        let request =
            parse(b"To=%2B14155550123&From=%2B15005550006&MessagingServiceSid=MGabc&Body=hi&MediaUrl=a&MediaUrl=b");
        assert_eq!(request.from.as_deref(), Some("MGabc"));
        assert!(request.service_sender);
        assert_eq!(request.media_urls, ["a", "b"]);
    }

    #[test]
    fn date_filters_cover_whole_days() {
        let (start, end) =
            date_bounds("2025-01-31").unwrap_or((OffsetDateTime::UNIX_EPOCH, OffsetDateTime::UNIX_EPOCH));
        assert_eq!(start, time::macros::datetime!(2025-01-31 00:00 UTC));
        assert!(end > time::macros::datetime!(2025-01-31 23:59:59 UTC));
        assert!(date_bounds("yesterday").is_none());
    }
}
