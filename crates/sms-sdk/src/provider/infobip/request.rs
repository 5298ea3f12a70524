//! What Infobip is sent: the request-side facts (capabilities, typed options), the message id we
//! choose for the one destination, and the JSON body of `POST /sms/3/messages`.

use serde_json::{Map, Value};

use crate::adapter::{Capabilities, SenderType, ValidityRange};
use crate::message::{OutboundMessage, format_timestamp};
use crate::options::{OptionKind, OptionSpec, OptionsSpec};

/// The longest validity Infobip honours: 48 hours (a longer one is clamped to 48 h by Infobip;
/// the SDK refuses it instead, so what is asked is what is sent).
pub const MAX_VALIDITY_SECS: u32 = 48 * 3600;

/// The shortest validity the adapter sends. Infobip's minimum is not documented (NOT CONFIRMED);
/// one minute is the unit of its older API.
pub const MIN_VALIDITY_SECS: u32 = 60;

/// How every message id the adapter chooses begins.
pub const MESSAGE_ID_PREFIX: &str = "sms-sdk-";

/// The `destinations[].messageId` of `message`: `sms-sdk-{reference}` when the message carries a
/// correlation reference (the same reference always gives the same id, so a lookup or a
/// delivery report finds the key's message by it), else `sms-sdk-` and 32 random hex digits.
/// Either way at most 40 ASCII letters, digits and `-`, a plain id that a lookup may put in a
/// query.
#[must_use]
pub fn message_id(message: &OutboundMessage) -> String {
    match message.correlation.as_deref().filter(|r| crate::correlation::is_reference(r)) {
        Some(reference) => format!("{MESSAGE_ID_PREFIX}{reference}"),
        None => format!("{MESSAGE_ID_PREFIX}{}", crate::ids::uuid_v4().simple()),
    }
}

/// What the Infobip adapter can send.
#[must_use]
pub fn capabilities() -> Capabilities {
    Capabilities {
        send_text: true,
        // MMS is a separate Infobip API: not offered.
        mms: false,
        scheduling: true,
        validity_period: Some(ValidityRange { min_sec: MIN_VALIDITY_SECS, max_sec: MAX_VALIDITY_SECS }),
        webhook_url_override: true,
        inbound: true,
        delivery_receipts: true,
        sender_types: vec![SenderType::LongCode, SenderType::TollFree, SenderType::ShortCode, SenderType::Alphanumeric],
        // Infobip dedupes a repeated `messageId` only when it enabled idempotent sending for the
        // account, which the adapter cannot see.
        native_idempotency: false,
    }
}

/// `providerOptions.infobip`. A wire name with dots is a path inside the message object
/// (`content.transliteration` is `messages[0].content.transliteration`).
pub static OPTIONS: OptionsSpec = OptionsSpec {
    options: &[
        OptionSpec {
            name: "callbackData",
            wire: "webhooks.callbackData",
            kind: OptionKind::String { max_len: Some(4000), pattern: None },
        },
        OptionSpec {
            name: "transliteration",
            wire: "content.transliteration",
            kind: OptionKind::Enum { values: &["TURKISH", "GREEK", "CYRILLIC", "CENTRAL_EUROPEAN", "NON_UNICODE"] },
        },
        OptionSpec {
            name: "intermediateReport",
            wire: "webhooks.delivery.intermediateReport",
            kind: OptionKind::Boolean,
        },
        OptionSpec {
            name: "entityId",
            wire: "options.platform.entityId",
            kind: OptionKind::String { max_len: Some(255), pattern: None },
        },
        OptionSpec {
            name: "applicationId",
            wire: "options.platform.applicationId",
            kind: OptionKind::String { max_len: Some(255), pattern: None },
        },
    ],
    reserved: &[
        "sender",
        "destinations",
        "content",
        "content.text",
        "options",
        "options.validityPeriod",
        "options.platform",
        "webhooks",
        "webhooks.delivery",
        "webhooks.delivery.url",
        "webhooks.contentType",
    ],
};

/// The recipient as Infobip writes numbers: international, without the `+` (its documented
/// examples; the `+` is optional).
#[must_use]
pub fn destination(message: &OutboundMessage) -> &str {
    let to = message.to.as_str();
    to.strip_prefix('+').unwrap_or(to)
}

/// The JSON body Infobip receives for `message`, sent to the one destination `message_id`
/// names: `{messages:[{sender, destinations:[{to, messageId}], content:{text}, options,
/// webhooks}], options:{schedule}}`. The correlation reference rides in `webhooks.callbackData`
/// (echoed in every delivery report); a `callbackData` of the caller's provider options
/// replaces it.
#[must_use]
pub fn request_body(message: &OutboundMessage, message_id: &str) -> Value {
    let mut destination_object = Map::new();
    destination_object.insert("to".into(), destination(message).into());
    destination_object.insert("messageId".into(), message_id.into());
    let mut entry = Map::new();
    entry.insert("sender".into(), message.from.value.clone().into());
    entry.insert("destinations".into(), Value::Array(vec![Value::Object(destination_object)]));
    let mut content = Map::new();
    content.insert("text".into(), message.body.clone().into());
    entry.insert("content".into(), Value::Object(content));
    if let Some(secs) = message.validity_period_secs {
        let mut validity = Map::new();
        validity.insert("amount".into(), secs.into());
        validity.insert("timeUnit".into(), "SECONDS".into());
        let mut options = Map::new();
        options.insert("validityPeriod".into(), Value::Object(validity));
        entry.insert("options".into(), Value::Object(options));
    }
    let mut webhooks = Map::new();
    if let Some(url) = &message.webhook_url {
        let mut delivery = Map::new();
        delivery.insert("url".into(), url.clone().into());
        webhooks.insert("delivery".into(), Value::Object(delivery));
        webhooks.insert("contentType".into(), "application/json".into());
    }
    if let Some(reference) = &message.correlation {
        webhooks.insert("callbackData".into(), reference.clone().into());
    }
    if !webhooks.is_empty() {
        entry.insert("webhooks".into(), Value::Object(webhooks));
    }
    for field in &message.provider_fields {
        insert_path(&mut entry, &field.wire, field.value.clone());
    }
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(vec![Value::Object(entry)]));
    if let Some(at) = message.send_at {
        let mut schedule = Map::new();
        schedule.insert("sendAt".into(), format_timestamp(at).into());
        let mut options = Map::new();
        options.insert("schedule".into(), Value::Object(schedule));
        body.insert("options".into(), Value::Object(options));
    }
    Value::Object(body)
}

/// Sets `value` at the dotted `path` under `object`, making the objects on the way (a member on
/// the way that is not an object is replaced by one).
fn insert_path(object: &mut Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            object.insert(path.to_owned(), value);
        }
        Some((head, rest)) => {
            let child = object.entry(head.to_owned()).or_insert_with(|| Value::Object(Map::new()));
            if !child.is_object() {
                *child = Value::Object(Map::new());
            }
            if let Value::Object(child) = child {
                insert_path(child, rest, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{PhoneNumber, ResolvedSender, SenderKind};
    use crate::options::ProviderField;
    use time::OffsetDateTime;

    fn message() -> OutboundMessage {
        let to = PhoneNumber::parse("+14155550123").unwrap();
        let from = ResolvedSender { kind: SenderKind::PhoneNumber, value: "+15005550006".into() };
        OutboundMessage::new(to, from, "Your code is 123456")
    }

    #[test]
    fn t292_a_message_is_one_destination_with_our_message_id() {
        let body = request_body(&message(), "sms-sdk-0123");
        let expected = serde_json::json!({"messages": [{
            "sender": "+15005550006",
            "destinations": [{"to": "14155550123", "messageId": "sms-sdk-0123"}],
            "content": {"text": "Your code is 123456"}
        }]});
        assert_eq!(body, expected);
    }

    #[test]
    fn t292_validity_schedule_callback_reference_and_options() {
        let mut message = message();
        message.validity_period_secs = Some(600);
        message.send_at = Some(OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap());
        message.webhook_url = Some("https://hooks.example/infobip?sms_sdk_token=t".into());
        message.correlation = Some("A".repeat(22));
        message.provider_fields = vec![
            ProviderField { wire: "content.transliteration".into(), value: "GREEK".into() },
            ProviderField { wire: "webhooks.delivery.intermediateReport".into(), value: true.into() },
            ProviderField { wire: "options.platform.entityId".into(), value: "e1".into() },
        ];
        let id = message_id(&message);
        assert_eq!(id, format!("sms-sdk-{}", "A".repeat(22)));
        let body = request_body(&message, &id);
        let entry = &body["messages"][0];
        assert_eq!(entry["options"]["validityPeriod"], serde_json::json!({"amount": 600, "timeUnit": "SECONDS"}));
        assert_eq!(entry["options"]["platform"]["entityId"], "e1");
        assert_eq!(entry["webhooks"]["delivery"]["url"], "https://hooks.example/infobip?sms_sdk_token=t");
        assert_eq!(entry["webhooks"]["delivery"]["intermediateReport"], true);
        assert_eq!(entry["webhooks"]["contentType"], "application/json");
        assert_eq!(entry["webhooks"]["callbackData"], "A".repeat(22));
        assert_eq!(entry["content"]["transliteration"], "GREEK");
        assert_eq!(body["options"]["schedule"]["sendAt"], "2027-01-15T08:00:00.000Z");
    }

    #[test]
    fn t292_message_ids_are_deterministic_from_the_reference_else_random() {
        let mut message = message();
        let (a, b) = (message_id(&message), message_id(&message));
        assert_ne!(a, b);
        assert!(a.starts_with(MESSAGE_ID_PREFIX) && a.len() == 40, "{a}");
        assert!(crate::lookup::is_plain_id(&a));
        // A correlation that is not a reference's shape is not put into the id.
        message.correlation = Some("not a reference".into());
        assert_ne!(message_id(&message), message_id(&message));
        message.correlation = Some("b".repeat(22));
        assert_eq!(message_id(&message), message_id(&message));
    }

    #[test]
    fn dotted_paths_nest_and_replace_what_is_in_the_way() {
        let mut object = Map::new();
        object.insert("a".into(), 1.into());
        insert_path(&mut object, "a.b", 2.into());
        insert_path(&mut object, "c", 3.into());
        assert_eq!(Value::Object(object), serde_json::json!({"a": {"b": 2}, "c": 3}));
    }
}
