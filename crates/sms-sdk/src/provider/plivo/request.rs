//! What Plivo is sent: the request-side facts (capabilities, typed options, why support is
//! partial) and the JSON body.

use serde_json::{Map, Value};

use crate::adapter::{ALL_SENDER_TYPES, Capabilities, ValidityRange};
use crate::correlation::with_reference;
use crate::message::{OutboundMessage, SenderKind};
use crate::options::{OptionKind, OptionSpec, OptionsSpec};

/// Why the Plivo adapter is partial.
pub const SUPPORT_NOTES: [&str; 2] = [
    "Plivo does not document its API error body, so only 401 (auth) and a 429 that carries an api_id \
     (rate limit) are classified; every other 4xx is a request rejection that never fails over.",
    "Plivo's V2 callback signatures cover the URL and a nonce but no timestamp or body, so a captured \
     callback can be replayed: deduplicate events by their dedupe key (V3 signatures also cover the body).",
];

/// What the Plivo adapter can send.
#[must_use]
pub fn capabilities() -> Capabilities {
    Capabilities {
        send_text: true,
        mms: true,
        scheduling: false,
        validity_period: Some(ValidityRange { min_sec: 5, max_sec: 10_799 }),
        webhook_url_override: true,
        inbound: true,
        delivery_receipts: true,
        sender_types: ALL_SENDER_TYPES.to_vec(),
        native_idempotency: false,
    }
}

/// `providerOptions.plivo`.
pub static OPTIONS: OptionsSpec = OptionsSpec {
    options: &[
        OptionSpec {
            name: "log",
            wire: "log",
            kind: OptionKind::Enum { values: &["true", "false", "content_only", "number_only"] },
        },
        OptionSpec { name: "trackable", wire: "trackable", kind: OptionKind::Boolean },
    ],
    reserved: &["src", "powerpack_uuid", "dst", "text", "type", "media_urls", "url", "method", "message_expiry"],
};

/// The JSON body Plivo receives for `message`, keys in the documented order.
#[must_use]
pub fn request_body(message: &OutboundMessage) -> Value {
    let mut body = Map::new();
    body.insert("dst".into(), message.to.as_str().into());
    body.insert("type".into(), if message.media_urls.is_empty() { "sms" } else { "mms" }.into());
    let sender_key = match message.from.kind {
        SenderKind::MessagingService => "powerpack_uuid",
        SenderKind::PhoneNumber | SenderKind::ShortCode | SenderKind::Alphanumeric => "src",
    };
    body.insert(sender_key.into(), message.from.value.clone().into());
    if !message.body.is_empty() {
        body.insert("text".into(), message.body.clone().into());
    }
    if !message.media_urls.is_empty() {
        body.insert("media_urls".into(), message.media_urls.clone().into());
    }
    if let Some(url) = &message.webhook_url {
        body.insert("url".into(), with_reference(url, message.correlation.as_deref()).into_owned().into());
        body.insert("method".into(), "POST".into());
    }
    if let Some(secs) = message.validity_period_secs {
        body.insert("message_expiry".into(), secs.into());
    }
    for field in &message.provider_fields {
        body.insert(field.wire.clone(), field.value.clone());
    }
    Value::Object(body)
}
