//! What Twilio is sent: the request-side facts (capabilities, typed options, limits) and the
//! form body.

use url::form_urlencoded;

use crate::adapter::{ALL_SENDER_TYPES, Capabilities, ValidityRange};
use crate::correlation::with_reference;
use crate::message::{OutboundMessage, SenderKind, format_timestamp};
use crate::options::{OptionKind, OptionSpec, OptionsSpec};
use crate::provider::is_prefixed_hex32;

/// Twilio's body limit, in UTF-16 units.
pub const MAX_BODY_UNITS: usize = 1600;
/// Twilio's media limit per message.
pub const MAX_MEDIA: usize = 10;

/// What the Twilio adapter can send.
#[must_use]
pub fn capabilities() -> Capabilities {
    Capabilities {
        send_text: true,
        mms: true,
        scheduling: true,
        validity_period: Some(ValidityRange { min_sec: 1, max_sec: 36_000 }),
        webhook_url_override: true,
        inbound: true,
        delivery_receipts: true,
        sender_types: ALL_SENDER_TYPES.to_vec(),
        native_idempotency: false,
    }
}

/// `providerOptions.twilio`: typed options and the parameters the adapter sets itself.
pub static OPTIONS: OptionsSpec = OptionsSpec {
    options: &[
        OptionSpec {
            name: "applicationSid",
            wire: "ApplicationSid",
            kind: OptionKind::String { max_len: None, pattern: Some(|s| is_prefixed_hex32(s, "AP")) },
        },
        OptionSpec { name: "provideFeedback", wire: "ProvideFeedback", kind: OptionKind::Boolean },
        OptionSpec { name: "attempt", wire: "Attempt", kind: OptionKind::Integer { min: 1, max: None } },
        OptionSpec {
            name: "contentRetention",
            wire: "ContentRetention",
            kind: OptionKind::Enum { values: &["retain", "discard"] },
        },
        OptionSpec {
            name: "addressRetention",
            wire: "AddressRetention",
            kind: OptionKind::Enum { values: &["retain", "obfuscate"] },
        },
        OptionSpec { name: "smartEncoded", wire: "SmartEncoded", kind: OptionKind::Boolean },
        OptionSpec { name: "shortenUrls", wire: "ShortenUrls", kind: OptionKind::Boolean },
        OptionSpec { name: "sendAsMms", wire: "SendAsMms", kind: OptionKind::Boolean },
        OptionSpec {
            name: "messageIntent",
            wire: "MessageIntent",
            kind: OptionKind::Enum {
                values: &[
                    "otp",
                    "notifications",
                    "marketing",
                    "fraud",
                    "security",
                    "customercare",
                    "delivery",
                    "education",
                    "polling",
                    "announcements",
                    "events",
                ],
            },
        },
        OptionSpec { name: "riskCheck", wire: "RiskCheck", kind: OptionKind::Enum { values: &["enable", "disable"] } },
    ],
    reserved: &[
        "To",
        "From",
        "MessagingServiceSid",
        "Body",
        "MediaUrl",
        "StatusCallback",
        "ValidityPeriod",
        "SendAt",
        "ScheduleType",
        "ContentSid",
        "ContentVariables",
    ],
};

/// The form body Twilio receives for `message`, parameters in the documented order.
#[must_use]
pub fn form_body(message: &OutboundMessage) -> String {
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("To", message.to.as_str());
    match message.from.kind {
        SenderKind::MessagingService => form.append_pair("MessagingServiceSid", &message.from.value),
        SenderKind::PhoneNumber | SenderKind::ShortCode | SenderKind::Alphanumeric => {
            form.append_pair("From", &message.from.value)
        }
    };
    if !message.body.is_empty() {
        form.append_pair("Body", &message.body);
    }
    for url in &message.media_urls {
        form.append_pair("MediaUrl", url);
    }
    if let Some(url) = &message.webhook_url {
        form.append_pair("StatusCallback", &with_reference(url, message.correlation.as_deref()));
    }
    if let Some(secs) = message.validity_period_secs {
        form.append_pair("ValidityPeriod", &secs.to_string());
    }
    if let Some(at) = message.send_at {
        form.append_pair("SendAt", &format_timestamp(at));
        form.append_pair("ScheduleType", "fixed");
    }
    for field in &message.provider_fields {
        form.append_pair(&field.wire, &field.form_value());
    }
    form.finish()
}
