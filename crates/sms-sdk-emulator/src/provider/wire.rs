//! Reading and writing the wire formats the providers share: auth headers, numbers with
//! and without `+`, form bodies, JSON fields and times.

use base64::Engine as _;
use http::{HeaderMap, StatusCode, header};
use serde_json::Value;
use time::OffsetDateTime;

use crate::model::Status;

/// The user and password of `Authorization: Basic …`.
pub(crate) fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

/// The token of `Authorization: Bearer …`.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// A number with its `+`: digit strings sent without one (Vonage, Plivo) get it.
pub(crate) fn with_plus(number: &str) -> String {
    if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
        format!("+{number}")
    } else {
        number.to_owned()
    }
}

/// A number without its `+` (Plivo and Vonage webhooks).
pub(crate) fn without_plus(number: &str) -> &str {
    number.strip_prefix('+').unwrap_or(number)
}

/// A form body of `params`, in order.
pub(crate) fn form_body(params: &[(&str, String)]) -> Vec<u8> {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in params {
        form.append_pair(name, value);
    }
    form.finish().into_bytes()
}

/// RFC 3339, as the JSON APIs write times.
pub(crate) fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

/// A JSON string field of an object.
pub(crate) fn string_field(object: &Value, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// A JSON array of strings (other items skipped).
pub(crate) fn string_list(object: &Value, key: &str) -> Vec<String> {
    object
        .get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The status code `code` (500 if it is out of range).
pub(crate) fn status_code(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// Lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}

/// Base64 (standard, padded).
pub(crate) fn base64_standard(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The status names Twilio and Plivo both use: `queued`, `sent`, `delivered`, `undelivered`, and
/// `failed` for whatever created no message.
pub(crate) fn plain_status_name(status: Status) -> &'static str {
    match status {
        Status::Queued => "queued",
        Status::Sent => "sent",
        Status::Delivered => "delivered",
        Status::Undelivered => "undelivered",
        Status::Rejected
        | Status::RateLimited
        | Status::ServerError
        | Status::NoResponse
        | Status::ConnectionReset
        | Status::UnreadableResponse => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_get_and_lose_their_plus() {
        assert_eq!(with_plus("15005550006"), "+15005550006");
        assert_eq!(with_plus("+15005550006"), "+15005550006");
        assert_eq!(with_plus("ACME"), "ACME");
        assert_eq!(without_plus("+15005550006"), "15005550006");
    }
}
