//! What Sinch is sent: the request-side facts (capabilities, typed options) and the JSON batch of
//! one recipient.

use serde_json::{Map, Value};
use time::{Duration, OffsetDateTime};

use crate::adapter::{Capabilities, SenderType, ValidityRange};
use crate::message::{OutboundMessage, format_timestamp};
use crate::options::{OptionKind, OptionSpec, OptionsSpec};

/// The longest validity Sinch keeps trying for: `expire_at` may be at most 3 days after
/// `send_at`.
pub const MAX_VALIDITY_SECS: u32 = 3 * 24 * 3600;

/// The delivery report every send asks for unless its options say otherwise: one callback per
/// recipient and status change, which the webhook normalizer reads.
pub const DEFAULT_DELIVERY_REPORT: &str = "per_recipient";

/// What the Sinch adapter can send.
#[must_use]
pub fn capabilities() -> Capabilities {
    Capabilities {
        send_text: true,
        // MMS (`mt_media`) is US-only and enabled per account: not offered.
        mms: false,
        scheduling: true,
        validity_period: Some(ValidityRange { min_sec: 60, max_sec: MAX_VALIDITY_SECS }),
        webhook_url_override: true,
        inbound: true,
        delivery_receipts: true,
        // A service plan's automatic default originator has no sender of ours to name.
        sender_types: vec![SenderType::LongCode, SenderType::TollFree, SenderType::ShortCode, SenderType::Alphanumeric],
        native_idempotency: false,
    }
}

/// `providerOptions.sinch`.
pub static OPTIONS: OptionsSpec = OptionsSpec {
    options: &[
        OptionSpec {
            name: "clientReference",
            wire: "client_reference",
            kind: OptionKind::String { max_len: Some(128), pattern: None },
        },
        OptionSpec {
            name: "deliveryReport",
            wire: "delivery_report",
            kind: OptionKind::Enum { values: &["none", "summary", "full", "per_recipient", "per_recipient_final"] },
        },
        OptionSpec {
            name: "maxNumberOfMessageParts",
            wire: "max_number_of_message_parts",
            kind: OptionKind::Integer { min: 1, max: Some(255) },
        },
        OptionSpec { name: "flashMessage", wire: "flash_message", kind: OptionKind::Boolean },
        OptionSpec { name: "feedbackEnabled", wire: "feedback_enabled", kind: OptionKind::Boolean },
    ],
    reserved: &["to", "from", "body", "type", "send_at", "expire_at", "callback_url", "parameters", "udh"],
};

/// The JSON body Sinch receives for `message`, keys in the documented order: a text batch of
/// the one recipient. `now` dates the validity period when the message is not scheduled
/// (`expire_at` is a time, not a duration).
#[must_use]
pub fn request_body(message: &OutboundMessage, now: OffsetDateTime) -> Value {
    let mut body = Map::new();
    body.insert("to".into(), Value::Array(vec![message.to.as_str().into()]));
    body.insert("from".into(), message.from.value.clone().into());
    body.insert("body".into(), message.body.clone().into());
    body.insert("type".into(), "mt_text".into());
    body.insert("delivery_report".into(), DEFAULT_DELIVERY_REPORT.into());
    if let Some(at) = message.send_at {
        body.insert("send_at".into(), format_timestamp(at).into());
    }
    if let Some(secs) = message.validity_period_secs {
        let start = message.send_at.unwrap_or(now);
        let expires = start.checked_add(Duration::seconds(i64::from(secs))).unwrap_or(start);
        body.insert("expire_at".into(), format_timestamp(expires).into());
    }
    if let Some(url) = &message.webhook_url {
        body.insert("callback_url".into(), url.clone().into());
    }
    // Sinch echoes `client_reference` in every delivery report, whichever URL receives it; a
    // `client_reference` of the caller's provider options (inserted below) replaces it.
    if let Some(reference) = &message.correlation {
        body.insert("client_reference".into(), reference.clone().into());
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
    fn t266_a_message_is_a_text_batch_of_one_recipient() {
        let body = request_body(&message(), OffsetDateTime::UNIX_EPOCH);
        let expected = serde_json::json!({
            "to": ["+14155550123"], "from": "+15005550006", "body": "Your code is 123456",
            "type": "mt_text", "delivery_report": "per_recipient"
        });
        assert_eq!(body, expected);
        let keys: Vec<_> = body.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["to", "from", "body", "type", "delivery_report"]);
    }

    #[test]
    fn t266_validity_schedule_callback_and_reference() {
        let mut message = message();
        let at = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        message.validity_period_secs = Some(600);
        message.webhook_url = Some("https://hooks.example/sinch".into());
        message.correlation = Some("r".repeat(22));
        let body = request_body(&message, at);
        assert_eq!(body["expire_at"], "2027-01-15T08:10:00.000Z");
        assert!(body.get("send_at").is_none());
        assert_eq!(body["callback_url"], "https://hooks.example/sinch");
        assert_eq!(body["client_reference"], "r".repeat(22));
        message.send_at = Some(at + Duration::hours(1));
        let body = request_body(&message, at);
        assert_eq!(
            (body["send_at"].as_str(), body["expire_at"].as_str()),
            (Some("2027-01-15T09:00:00.000Z"), Some("2027-01-15T09:10:00.000Z"))
        );
    }
}
