//! What Vonage is sent: the request-side facts (capabilities for each kind of credentials, typed
//! options, why support is partial) and the JSON body.

use serde_json::{Map, Value};

use crate::adapter::{Capabilities, SenderType, ValidityRange};
use crate::message::{OutboundMessage, SenderKind};
use crate::options::{OptionKind, OptionSpec, OptionsSpec};

/// Why the Vonage adapter is partial.
pub const SUPPORT_NOTES: [&str; 2] = [
    "Vonage does not document which HTTP status goes with each Messages API error code, so rejections \
     are classified from 401/402/422 and the code in the problem type or title; a 429 counts as a rate \
     limit only with a throttling code.",
    "Short codes and MMS are not supported: this adapter sends the SMS channel of the Messages API only.",
];

/// Capabilities with an application (JWT auth).
#[must_use]
pub fn jwt_capabilities() -> Capabilities {
    Capabilities {
        send_text: true,
        mms: false,
        scheduling: false,
        validity_period: Some(ValidityRange { min_sec: 20, max_sec: 604_800 }),
        webhook_url_override: true,
        inbound: true,
        delivery_receipts: true,
        sender_types: vec![SenderType::LongCode, SenderType::TollFree, SenderType::Alphanumeric],
        native_idempotency: false,
    }
}

/// Capabilities with an API key and secret (Basic auth): no webhooks of any kind.
#[must_use]
pub fn basic_capabilities() -> Capabilities {
    Capabilities { webhook_url_override: false, inbound: false, delivery_receipts: false, ..jwt_capabilities() }
}

/// `providerOptions.vonage`. Wires starting with `sms.` go into the nested `sms` object.
pub static OPTIONS: OptionsSpec = OptionsSpec {
    options: &[
        OptionSpec {
            name: "clientRef",
            wire: "client_ref",
            kind: OptionKind::String { max_len: Some(100), pattern: None },
        },
        OptionSpec {
            name: "webhookVersion",
            wire: "webhook_version",
            kind: OptionKind::Enum { values: &["v0.1", "v1"] },
        },
        OptionSpec { name: "trustedRecipient", wire: "trusted_recipient", kind: OptionKind::Boolean },
        OptionSpec {
            name: "encodingType",
            wire: "sms.encoding_type",
            kind: OptionKind::Enum { values: &["text", "unicode", "auto"] },
        },
        OptionSpec {
            name: "contentId",
            wire: "sms.content_id",
            kind: OptionKind::String { max_len: None, pattern: None },
        },
        OptionSpec {
            name: "entityId",
            wire: "sms.entity_id",
            kind: OptionKind::String { max_len: None, pattern: None },
        },
        OptionSpec { name: "poolId", wire: "sms.pool_id", kind: OptionKind::String { max_len: None, pattern: None } },
    ],
    reserved: &["message_type", "channel", "to", "from", "text", "ttl", "webhook_url", "failover", "sms"],
};

/// The JSON body Vonage receives for `message`, keys in the documented order.
#[must_use]
pub fn request_body(message: &OutboundMessage) -> Value {
    let mut body = Map::new();
    body.insert("message_type".into(), "text".into());
    body.insert("channel".into(), "sms".into());
    body.insert("to".into(), strip_plus(message.to.as_str()).into());
    let from = match message.from.kind {
        SenderKind::PhoneNumber => strip_plus(&message.from.value),
        SenderKind::Alphanumeric | SenderKind::ShortCode | SenderKind::MessagingService => &message.from.value,
    };
    body.insert("from".into(), from.into());
    body.insert("text".into(), message.body.clone().into());
    if let Some(secs) = message.validity_period_secs {
        body.insert("ttl".into(), secs.into());
    }
    if let Some(url) = &message.webhook_url {
        body.insert("webhook_url".into(), url.clone().into());
    }
    // Vonage echoes `client_ref` in every status webhook; a `client_ref` of the caller's provider
    // options (inserted below) replaces it.
    if let Some(reference) = &message.correlation {
        body.insert("client_ref".into(), reference.clone().into());
    }
    for field in &message.provider_fields {
        match field.wire.strip_prefix("sms.") {
            Some(name) => {
                let sms = body.entry("sms").or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(sms) = sms {
                    sms.insert(name.to_owned(), field.value.clone());
                }
            }
            None => {
                body.insert(field.wire.clone(), field.value.clone());
            }
        }
    }
    Value::Object(body)
}

fn strip_plus(number: &str) -> &str {
    number.strip_prefix('+').unwrap_or(number)
}
