//! What End User Messaging SMS is sent: the request-side facts (capabilities, typed options) and
//! the `SendTextMessage` JSON body.

use serde_json::{Map, Value};

use crate::adapter::{Capabilities, SenderType, ValidityRange};
use crate::correlation::REFERENCE_PARAM;
use crate::message::OutboundMessage;
use crate::options::{OptionKind, OptionSpec, OptionsSpec};

/// The shortest `TimeToLive` the service takes: 5 seconds.
pub const MIN_TIME_TO_LIVE_SECS: u32 = 5;
/// The longest `TimeToLive` the service takes: 259,200 seconds (72 hours, also its default).
pub const MAX_TIME_TO_LIVE_SECS: u32 = 259_200;

/// The `X-Amz-Target` of a send.
pub const TARGET: &str = "PinpointSMSVoiceV2.SendTextMessage";
/// The content type of every AWS JSON 1.0 request.
pub const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// What the End User Messaging SMS adapter can send.
#[must_use]
pub fn capabilities() -> Capabilities {
    Capabilities {
        send_text: true,
        // MMS is another operation (`SendMediaMessage`).
        mms: false,
        // `SendTextMessage` has no send time.
        scheduling: false,
        validity_period: Some(ValidityRange { min_sec: MIN_TIME_TO_LIVE_SECS, max_sec: MAX_TIME_TO_LIVE_SECS }),
        // Events go to the configuration set's destinations, never to a URL of the message.
        webhook_url_override: false,
        inbound: true,
        delivery_receipts: true,
        // A pool's id or ARN is the sender pool.
        sender_types: vec![
            SenderType::LongCode,
            SenderType::TollFree,
            SenderType::ShortCode,
            SenderType::Alphanumeric,
            SenderType::MessagingService,
        ],
        native_idempotency: false,
    }
}

/// `providerOptions.aws`.
pub static OPTIONS: OptionsSpec = OptionsSpec {
    options: &[
        OptionSpec {
            name: "messageType",
            wire: "MessageType",
            kind: OptionKind::Enum { values: &["TRANSACTIONAL", "PROMOTIONAL"] },
        },
        OptionSpec {
            name: "configurationSetName",
            wire: "ConfigurationSetName",
            kind: OptionKind::String { max_len: Some(256), pattern: None },
        },
        OptionSpec { name: "maxPrice", wire: "MaxPrice", kind: OptionKind::String { max_len: Some(8), pattern: None } },
        OptionSpec { name: "keyword", wire: "Keyword", kind: OptionKind::String { max_len: Some(30), pattern: None } },
        OptionSpec { name: "dryRun", wire: "DryRun", kind: OptionKind::Boolean },
        OptionSpec {
            name: "protectConfigurationId",
            wire: "ProtectConfigurationId",
            kind: OptionKind::String { max_len: Some(256), pattern: None },
        },
        OptionSpec { name: "messageFeedbackEnabled", wire: "MessageFeedbackEnabled", kind: OptionKind::Boolean },
    ],
    reserved: &["DestinationPhoneNumber", "OriginationIdentity", "MessageBody", "TimeToLive", "Context"],
};

/// The `SendTextMessage` body of `message`: the destination, the origination identity (a number,
/// sender ID, or pool id or ARN), the text, the validity as `TimeToLive`, and the correlation
/// reference in `Context` (which every delivery event echoes), then the typed options.
#[must_use]
pub fn request_body(message: &OutboundMessage) -> Value {
    let mut body = Map::new();
    body.insert("DestinationPhoneNumber".into(), message.to.as_str().into());
    body.insert("OriginationIdentity".into(), message.from.value.clone().into());
    body.insert("MessageBody".into(), message.body.clone().into());
    if let Some(secs) = message.validity_period_secs {
        body.insert("TimeToLive".into(), secs.into());
    }
    if let Some(reference) = &message.correlation {
        let mut context = Map::new();
        context.insert(REFERENCE_PARAM.into(), reference.clone().into());
        body.insert("Context".into(), Value::Object(context));
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
        let to = PhoneNumber::parse("+14155550123").unwrap_or_else(|_| unreachable!());
        let from = ResolvedSender { kind: SenderKind::PhoneNumber, value: "+15005550006".into() };
        OutboundMessage::new(to, from, "Your code is 123456")
    }

    #[test]
    fn t279_a_send_is_one_send_text_message_body() {
        let body = request_body(&message());
        let expected = serde_json::json!({
            "DestinationPhoneNumber": "+14155550123",
            "OriginationIdentity": "+15005550006",
            "MessageBody": "Your code is 123456",
        });
        assert_eq!(body, expected);
        let mut message = message();
        message.validity_period_secs = Some(600);
        message.correlation = Some("r".repeat(22));
        message.from = ResolvedSender { kind: SenderKind::MessagingService, value: "pool-0123456789abcdef".into() };
        let body = request_body(&message);
        assert_eq!(body["TimeToLive"], 600);
        assert_eq!(body["Context"], serde_json::json!({"sms_sdk_ref": "r".repeat(22)}));
        assert_eq!(body["OriginationIdentity"], "pool-0123456789abcdef");
        let keys: Vec<_> = body.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
        assert_eq!(keys, ["DestinationPhoneNumber", "OriginationIdentity", "MessageBody", "TimeToLive", "Context"]);
    }

    #[test]
    fn t279_capabilities_and_options() {
        let capabilities = capabilities();
        assert!(!capabilities.scheduling && !capabilities.webhook_url_override && !capabilities.mms);
        assert_eq!(capabilities.validity_period.map(|v| (v.min_sec, v.max_sec)), Some((5, 259_200)));
        assert!(OPTIONS.options.iter().all(|option| !OPTIONS.reserved.contains(&option.wire)));
    }
}
