//! [`MaskedEvent`]: the form of an [`SmsEvent`] that is safe to log.

use serde::Serialize;
use time::OffsetDateTime;

use super::event::{EventKind, KeywordSource, SmsEvent};
use crate::redact::mask_phone_number;

/// An [`SmsEvent`] as logs may hold it ([`SmsEvent::masked`]): its `Serialize` writes the
/// provider, the dedupe key, the time, the type, the provider's message id, status and error
/// code, the keyword, and the numbers **masked** (`+1********23`). It never writes a message
/// body (only its length in characters), a media URL (only how many), or the provider's raw
/// payload (which holds account ids and full numbers).
///
/// ```
/// # #[cfg(all(feature = "twilio", feature = "testing"))] {
/// use sms_sdk::testing::webhooks::signed_twilio_request;
/// use sms_sdk::webhook::WebhookVerifier;
/// use sms_sdk::TwilioWebhook;
///
/// let url = "https://example.com/sms/inbound";
/// let params = [("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("AccountSid", "AC0123456789abcdef0123456789abcdef"),
///               ("From", "+14155550123"), ("To", "+15005550006"), ("Body", "my code is 9876")];
/// let event = TwilioWebhook::new("auth-token").unwrap().verify(&signed_twilio_request("auth-token", url, &params).as_request()).unwrap();
/// let line = serde_json::to_string(&event.masked()).unwrap();
/// assert!(line.contains(r#""from":"+1********23""#) && line.contains(r#""body_chars":15"#));
/// assert!(!line.contains("9876") && !line.contains("AC0123"));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct MaskedEvent<'a> {
    /// The provider.
    pub provider: &'static str,
    /// The event's dedupe key (provider, message id and status: no number, no body).
    pub dedupe_key: &'a str,
    /// When the provider says it happened.
    #[serde(with = "time::serde::rfc3339::option")]
    pub occurred_at: Option<OffsetDateTime>,
    /// The type name (`message.delivered`, …).
    #[serde(rename = "type")]
    pub type_name: &'static str,
    /// The provider's message id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<&'a str>,
    /// The provider's status word, of a status event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_status: Option<&'a str>,
    /// The provider's error code, of a status event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<&'a str>,
    /// The sender, masked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The recipient, masked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The length of an inbound message's text, in characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_chars: Option<usize>,
    /// How many media URLs an inbound message has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<usize>,
    /// The keyword of a STOP, START or HELP event (uppercase).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword: Option<&'a str>,
    /// Whether the provider flagged the keyword or the SDK matched it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<KeywordSource>,
    /// The provider's event type or status, of an event this SDK does not map.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_event_type: Option<&'a str>,
}

impl SmsEvent {
    /// This event as logs may hold it: numbers masked, no body, no raw payload (see
    /// [`MaskedEvent`]). `SmsEvent`'s own `Serialize` writes everything, for the application
    /// that needs the numbers and the text; never log it.
    #[must_use]
    pub fn masked(&self) -> MaskedEvent<'_> {
        let mut masked = MaskedEvent {
            provider: self.provider,
            dedupe_key: &self.dedupe_key,
            occurred_at: self.occurred_at,
            type_name: self.type_name(),
            provider_id: None,
            provider_status: None,
            error_code: None,
            from: None,
            to: None,
            body_chars: None,
            media: None,
            keyword: None,
            source: None,
            provider_event_type: None,
        };
        match &self.kind {
            EventKind::Received(inbound) => {
                masked.provider_id = Some(&inbound.provider_id);
                masked.from = Some(mask_phone_number(&inbound.from));
                masked.to = Some(mask_phone_number(&inbound.to));
                masked.body_chars = Some(inbound.body.chars().count());
                masked.media = Some(inbound.media_urls.len());
            }
            EventKind::Queued(update)
            | EventKind::Sent(update)
            | EventKind::Delivered(update)
            | EventKind::Undelivered(update)
            | EventKind::Filtered(update) => {
                masked.provider_id = Some(&update.provider_id);
                masked.provider_status = Some(&update.provider_status);
                masked.error_code = update.error_code.as_deref();
                masked.from = update.from.as_deref().map(mask_phone_number);
                masked.to = update.to.as_deref().map(mask_phone_number);
            }
            EventKind::OptedOut(message) | EventKind::OptedIn(message) | EventKind::Help(message) => {
                masked.provider_id = Some(&message.provider_id);
                masked.from = Some(mask_phone_number(&message.from));
                masked.to = Some(mask_phone_number(&message.to));
                masked.body_chars = Some(message.body.chars().count());
                masked.keyword = Some(&message.keyword);
                masked.source = Some(message.source);
            }
            EventKind::Unrecognized { provider_event_type } => masked.provider_event_type = Some(provider_event_type),
        }
        masked
    }
}
