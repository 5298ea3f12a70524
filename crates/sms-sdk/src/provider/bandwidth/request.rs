//! What Bandwidth is sent: the request-side facts (capabilities, typed options) and the JSON
//! message of one recipient.

use serde_json::{Map, Value};
use time::{Duration, OffsetDateTime};

use crate::adapter::{Capabilities, SenderType, ValidityRange};
use crate::message::{OutboundMessage, format_timestamp};
use crate::options::{OptionKind, OptionSpec, OptionsSpec};

/// The longest validity offered: 72 hours. Bandwidth documents only that `expiration` must be in
/// the future; the upper bound is our choice (see `docs/provider-facts.md`).
pub const MAX_VALIDITY_SECS: u32 = 72 * 3600;

/// The shortest validity offered: one minute (an `expiration` must still be in the future when
/// Bandwidth reads it).
pub const MIN_VALIDITY_SECS: u32 = 60;

/// The longest `tag` Bandwidth takes, in characters.
pub const MAX_TAG_CHARS: usize = 1024;

/// What the Bandwidth adapter can send.
#[must_use]
pub fn capabilities() -> Capabilities {
    Capabilities {
        send_text: true,
        // `media` (MMS) is on the same endpoint, but not offered by this adapter yet.
        mms: false,
        // Bandwidth has no scheduling field.
        scheduling: false,
        validity_period: Some(ValidityRange { min_sec: MIN_VALIDITY_SECS, max_sec: MAX_VALIDITY_SECS }),
        // Callback URLs belong to the Messaging application, not to a message.
        webhook_url_override: false,
        // Parsed by `BandwidthWebhook` (`verify_all_at`: a callback is an array of events).
        inbound: true,
        delivery_receipts: true,
        sender_types: vec![SenderType::LongCode, SenderType::TollFree, SenderType::ShortCode, SenderType::Alphanumeric],
        native_idempotency: false,
    }
}

/// `providerOptions.bandwidth`.
pub static OPTIONS: OptionsSpec = OptionsSpec {
    options: &[
        OptionSpec { name: "priority", wire: "priority", kind: OptionKind::Enum { values: &["default", "high"] } },
        // A tag of the caller's own replaces the correlation reference (Bandwidth has one tag).
        OptionSpec {
            name: "tag",
            wire: "tag",
            kind: OptionKind::String { max_len: Some(MAX_TAG_CHARS), pattern: None },
        },
    ],
    reserved: &["applicationId", "to", "from", "text", "media", "expiration"],
};

/// The JSON body Bandwidth receives for `message`, keys in the documented order: the
/// application, the one recipient, the sender and the text, then the correlation reference as
/// `tag`, the validity as `expiration` (a time: `now` plus the validity), then the typed options.
#[must_use]
pub fn request_body(message: &OutboundMessage, application_id: &str, now: OffsetDateTime) -> Value {
    let mut body = Map::new();
    body.insert("applicationId".into(), application_id.into());
    body.insert("to".into(), Value::Array(vec![message.to.as_str().into()]));
    body.insert("from".into(), message.from.value.clone().into());
    body.insert("text".into(), message.body.clone().into());
    // Bandwidth echoes `tag` in every callback of the message; a `tag` of the caller's provider
    // options (inserted below) replaces it.
    if let Some(reference) = &message.correlation {
        body.insert("tag".into(), reference.clone().into());
    }
    if let Some(secs) = message.validity_period_secs {
        let expires = now.checked_add(Duration::seconds(i64::from(secs))).unwrap_or(now);
        body.insert("expiration".into(), format_timestamp(expires).into());
    }
    for field in &message.provider_fields {
        body.insert(field.wire.clone(), field.value.clone());
    }
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{PhoneNumber, ResolvedSender, SenderKind};

    fn message() -> OutboundMessage {
        let to = PhoneNumber::parse("+14155550123").unwrap();
        let from = ResolvedSender { kind: SenderKind::PhoneNumber, value: "+15005550006".into() };
        OutboundMessage::new(to, from, "Your code is 123456")
    }

    #[test]
    fn t300_a_message_is_one_recipient_of_the_application() {
        let body = request_body(&message(), "93de2206-9669-4e07-948d-329f4b722ee2", OffsetDateTime::UNIX_EPOCH);
        let expected = serde_json::json!({
            "applicationId": "93de2206-9669-4e07-948d-329f4b722ee2", "to": ["+14155550123"],
            "from": "+15005550006", "text": "Your code is 123456"
        });
        assert_eq!(body, expected);
        let keys: Vec<_> = body.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["applicationId", "to", "from", "text"]);
    }

    #[test]
    fn t300_validity_reference_and_options() {
        let mut message = message();
        let now = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        message.validity_period_secs = Some(600);
        message.correlation = Some("r".repeat(22));
        let body = request_body(&message, "app", now);
        assert_eq!(body["expiration"], "2027-01-15T08:10:00.000Z");
        assert_eq!(body["tag"], "r".repeat(22));
        message.provider_fields = vec![crate::options::ProviderField { wire: "priority".into(), value: "high".into() }];
        let body = request_body(&message, "app", now);
        assert_eq!(body["priority"], "high");
        let caps = capabilities();
        assert!(!caps.scheduling && !caps.webhook_url_override && !caps.native_idempotency);
    }
}
