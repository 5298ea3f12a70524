//! What Telnyx is sent: the request-side facts (capabilities, typed options) and the JSON body.

use serde_json::{Map, Value};

use crate::adapter::{ALL_SENDER_TYPES, Capabilities};
use crate::correlation::with_reference;
use crate::message::{OutboundMessage, SenderKind, format_timestamp};
use crate::options::{OptionKind, OptionSpec, OptionsSpec};

/// What the Telnyx adapter can send.
#[must_use]
pub fn capabilities() -> Capabilities {
    Capabilities {
        send_text: true,
        mms: true,
        scheduling: true,
        validity_period: None,
        webhook_url_override: true,
        inbound: true,
        delivery_receipts: true,
        sender_types: ALL_SENDER_TYPES.to_vec(),
        native_idempotency: false,
    }
}

/// `providerOptions.telnyx`.
pub static OPTIONS: OptionsSpec = OptionsSpec {
    options: &[
        OptionSpec { name: "subject", wire: "subject", kind: OptionKind::String { max_len: None, pattern: None } },
        OptionSpec {
            name: "webhookFailoverUrl",
            wire: "webhook_failover_url",
            kind: OptionKind::String {
                max_len: None,
                pattern: Some(|s| s.starts_with("http://") || s.starts_with("https://")),
            },
        },
        OptionSpec { name: "useProfileWebhooks", wire: "use_profile_webhooks", kind: OptionKind::Boolean },
        OptionSpec { name: "autoDetect", wire: "auto_detect", kind: OptionKind::Boolean },
        OptionSpec { name: "encoding", wire: "encoding", kind: OptionKind::Enum { values: &["auto", "gsm7", "ucs2"] } },
    ],
    reserved: &["to", "from", "messaging_profile_id", "text", "media_urls", "type", "webhook_url", "send_at"],
};

/// The JSON body Telnyx receives for `message`, keys in the documented order.
#[must_use]
pub fn request_body(message: &OutboundMessage, messaging_profile_id: Option<&str>) -> Value {
    let mut body = Map::new();
    body.insert("to".into(), message.to.as_str().into());
    match message.from.kind {
        SenderKind::MessagingService => {
            body.insert("messaging_profile_id".into(), message.from.value.clone().into());
        }
        SenderKind::PhoneNumber | SenderKind::ShortCode | SenderKind::Alphanumeric => {
            body.insert("from".into(), message.from.value.clone().into());
            if let Some(profile) = messaging_profile_id {
                body.insert("messaging_profile_id".into(), profile.into());
            }
        }
    }
    if !message.body.is_empty() {
        body.insert("text".into(), message.body.clone().into());
    }
    if !message.media_urls.is_empty() {
        body.insert("media_urls".into(), message.media_urls.clone().into());
        body.insert("type".into(), "MMS".into());
    }
    if let Some(url) = &message.webhook_url {
        body.insert("webhook_url".into(), with_reference(url, message.correlation.as_deref()).into_owned().into());
    }
    if let Some(at) = message.send_at {
        body.insert("send_at".into(), format_timestamp(at).into());
    }
    for field in &message.provider_fields {
        body.insert(field.wire.clone(), field.value.clone());
    }
    Value::Object(body)
}
