//! The one event type every provider's webhook becomes, and STOP/HELP keyword detection.
//!
//! ```
//! # #[cfg(feature = "twilio")] {
//! use sms_sdk::TwilioWebhook;
//! use sms_sdk::testing::webhooks::signed_twilio_request;
//! use sms_sdk::webhook::WebhookVerifier;
//! use sms_sdk::webhook::event::{DeliveryStatus, EventKind};
//!
//! // A status callback, signed as Twilio signs it.
//! let url = "https://example.com/sms/status";
//! let params = [("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageStatus", "delivered")];
//! let request = signed_twilio_request("auth-token", url, &params);
//!
//! let event = TwilioWebhook::new("auth-token")?.verify(&request.as_request())?;
//! assert_eq!(event.kind.delivery_status(), Some(DeliveryStatus::Delivered));
//! match &event.kind {
//!     EventKind::Delivered(update) => assert_eq!(update.provider_id, "SM0123456789abcdef0123456789abcdef"),
//!     EventKind::Received(inbound) => println!("a message from {}", inbound.from),
//!     EventKind::OptedOut(opt_out) => println!("stop sending to {}", opt_out.from),
//!     other => println!("{}", other.type_name()),
//! }
//! // Providers redeliver: store the dedupe key under a unique constraint.
//! assert_eq!(event.dedupe_key, "twilio:SM0123456789abcdef0123456789abcdef:delivered");
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;

use super::Raw;
use crate::redact::{js_trim, mask_phone_number};

/// Whole-message opt-out keywords, in order.
pub const OPT_OUT_KEYWORDS: [&str; 6] = ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"];
/// Whole-message help keywords, in order.
pub const HELP_KEYWORDS: [&str; 2] = ["HELP", "INFO"];

/// The characters of the longest keyword (`UNSUBSCRIBE`; the keywords are ASCII).
const LONGEST_KEYWORD: usize = "UNSUBSCRIBE".len();

/// What a recipient asked for with a keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum KeywordKind {
    /// Stop sending (STOP, UNSUBSCRIBE, …).
    OptedOut,
    /// Start sending again (only from a provider signal, such as Twilio's `OptOutType=START`).
    OptedIn,
    /// Help (HELP, INFO).
    Help,
}

/// A detected keyword: its kind and the normalized uppercase word.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Keyword {
    /// Opt-out or help.
    pub kind: KeywordKind,
    /// The normalized word (`STOP`).
    pub keyword: String,
}

/// Detects a whole-message keyword: the text is trimmed, a trailing run of `.`, `!` and `?`
/// removed, trimmed again and uppercased, then compared with the lists.
///
/// ```
/// use sms_sdk::webhook::event::{detect_keyword, KeywordKind};
///
/// assert_eq!(detect_keyword(" stop! ").map(|k| k.kind), Some(KeywordKind::OptedOut));
/// assert_eq!(detect_keyword("please stop"), None);
/// ```
#[must_use]
pub fn detect_keyword(text: &str) -> Option<Keyword> {
    let word = keyword_word(text)?;
    let kind = if OPT_OUT_KEYWORDS.contains(&word.as_str()) {
        KeywordKind::OptedOut
    } else if HELP_KEYWORDS.contains(&word.as_str()) {
        KeywordKind::Help
    } else {
        return None;
    };
    Some(Keyword { kind, keyword: word })
}

/// The text as a keyword is compared: trimmed, a trailing run of `.`, `!` and `?` removed,
/// trimmed again and uppercased; `None` when it is longer than any keyword.
pub(crate) fn keyword_word(text: &str) -> Option<String> {
    let word = js_trim(js_trim(text).trim_end_matches(['.', '!', '?']));
    // Uppercasing never gives fewer characters: a longer word matches no keyword, and is not
    // uppercased (a message body is rarely a keyword).
    if word.chars().nth(LONGEST_KEYWORD).is_some() {
        return None;
    }
    Some(word.to_uppercase())
}

/// Where a keyword event came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum KeywordSource {
    /// The provider flagged the message (Twilio's `OptOutType`).
    Provider,
    /// The SDK matched the whole message against the keyword lists.
    Keyword,
}

/// A verified, normalized webhook event.
///
/// **What it carries.** `Serialize` writes everything the application may need: the full
/// numbers, the message text, media URLs and the provider's raw payload (`raw`, which holds
/// account ids). That is the form to hand to your application, never the one to log: log
/// [`SmsEvent::masked`] (numbers masked, no text, no payload), or `Debug`, which masks too.
#[derive(Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SmsEvent {
    /// The provider that sent it (`twilio`, …).
    pub provider: &'static str,
    /// Identifies this event across redeliveries: store it under a unique constraint. Opaque
    /// text of at most a few hundred bytes, made of the provider's name and its ids (the
    /// message's id and the status for a status callback, `twilio:SM…:delivered`; the provider's
    /// event or message id otherwise), never a number or a body.
    pub dedupe_key: String,
    /// When the provider says it happened.
    #[serde(with = "time::serde::rfc3339::option")]
    pub occurred_at: Option<OffsetDateTime>,
    /// The provider's payload (see [`SmsEvent::raw`]).
    raw: Raw,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

impl SmsEvent {
    #[cfg_attr(not(feature = "__verify"), allow(dead_code))]
    pub(crate) fn new(
        provider: &'static str,
        dedupe_key: String,
        occurred_at: Option<OffsetDateTime>,
        raw: Raw,
        kind: EventKind,
    ) -> Self {
        Self { provider, dedupe_key, occurred_at, raw, kind }
    }

    /// The provider's payload, with every field it sent: the form parameters as an object of
    /// strings (the first value of each, in the order they came), or the JSON body.
    ///
    /// The payload is decoded into this value the first time it is read (verification and
    /// normalization read the fields they need in place, from the form or the JSON body), so a
    /// server that never reads it does not pay for it. A JSON body that `serde_json::Value`
    /// cannot hold (a lone surrogate, a number beyond `f64` or nesting deeper than 128, in a
    /// member the normalizer does not read) is `null` here.
    #[must_use]
    pub fn raw(&self) -> &Value {
        self.raw.get()
    }

    /// The event's type name: `message.received`, `message.delivered`, `recipient.opted_out`, …
    #[must_use]
    pub fn type_name(&self) -> &'static str {
        self.kind.type_name()
    }
}

impl fmt::Debug for SmsEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmsEvent")
            .field("provider", &self.provider)
            .field("dedupe_key", &self.dedupe_key)
            .field("occurred_at", &self.occurred_at)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// The event types.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum EventKind {
    /// An inbound message.
    #[serde(rename = "message.received")]
    Received(Inbound),
    /// The provider queued the message.
    #[serde(rename = "message.queued")]
    Queued(StatusUpdate),
    /// The message left for the carrier.
    #[serde(rename = "message.sent")]
    Sent(StatusUpdate),
    /// The handset has it.
    #[serde(rename = "message.delivered")]
    Delivered(StatusUpdate),
    /// It was not delivered.
    #[serde(rename = "message.undelivered")]
    Undelivered(StatusUpdate),
    /// A carrier or the provider filtered it.
    #[serde(rename = "message.filtered")]
    Filtered(StatusUpdate),
    /// The recipient opted out.
    #[serde(rename = "recipient.opted_out")]
    OptedOut(KeywordMessage),
    /// The recipient opted back in.
    #[serde(rename = "recipient.opted_in")]
    OptedIn(KeywordMessage),
    /// The recipient asked for help.
    #[serde(rename = "recipient.help")]
    Help(KeywordMessage),
    /// An event or status this SDK does not map (never an error).
    #[serde(rename = "unrecognized")]
    Unrecognized {
        /// The provider's event type or status.
        provider_event_type: String,
    },
}

impl EventKind {
    /// The type name (`message.delivered`, …).
    #[must_use]
    pub const fn type_name(&self) -> &'static str {
        match self {
            Self::Received(_) => "message.received",
            Self::Queued(_) => "message.queued",
            Self::Sent(_) => "message.sent",
            Self::Delivered(_) => "message.delivered",
            Self::Undelivered(_) => "message.undelivered",
            Self::Filtered(_) => "message.filtered",
            Self::OptedOut(_) => "recipient.opted_out",
            Self::OptedIn(_) => "recipient.opted_in",
            Self::Help(_) => "recipient.help",
            Self::Unrecognized { .. } => "unrecognized",
        }
    }

    /// The normalized event of an inbound message: a provider signal first, then (when
    /// `detect_keywords`) a whole-message keyword, else a plain received message.
    #[cfg_attr(not(feature = "__verify"), allow(dead_code))]
    pub(crate) fn inbound(message: Inbound, signal: Option<Keyword>, detect_keywords: bool) -> Self {
        let (keyword, source) = match signal {
            Some(keyword) => (keyword, KeywordSource::Provider),
            None => match detect_keywords.then(|| detect_keyword(&message.body)).flatten() {
                Some(keyword) => (keyword, KeywordSource::Keyword),
                None => return Self::Received(message),
            },
        };
        let Inbound { provider_id, from, to, body, .. } = message;
        let event = KeywordMessage { provider_id, from, to, body, source, keyword: keyword.keyword };
        match keyword.kind {
            KeywordKind::OptedOut => Self::OptedOut(event),
            KeywordKind::OptedIn => Self::OptedIn(event),
            KeywordKind::Help => Self::Help(event),
        }
    }
}

/// The status an outbound message reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeliveryStatus {
    /// Queued.
    Queued,
    /// Sent.
    Sent,
    /// Delivered.
    Delivered,
    /// Undelivered.
    Undelivered,
    /// Filtered.
    Filtered,
}

impl EventKind {
    /// The status event of `status`.
    #[cfg_attr(not(feature = "__verify"), allow(dead_code))]
    pub(crate) fn status(status: DeliveryStatus, update: StatusUpdate) -> Self {
        match status {
            DeliveryStatus::Queued => Self::Queued(update),
            DeliveryStatus::Sent => Self::Sent(update),
            DeliveryStatus::Delivered => Self::Delivered(update),
            DeliveryStatus::Undelivered => Self::Undelivered(update),
            DeliveryStatus::Filtered => Self::Filtered(update),
        }
    }
}

/// An inbound message.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Inbound {
    /// The provider's message id.
    pub provider_id: String,
    /// The sender.
    pub from: String,
    /// The number it was sent to.
    pub to: String,
    /// The text.
    pub body: String,
    /// Media URLs, in order.
    pub media_urls: Vec<String>,
}

/// A delivery status of an outbound message.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StatusUpdate {
    /// The provider's message id.
    pub provider_id: String,
    /// The provider's own status word.
    pub provider_status: String,
    /// The provider's error code, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// The sender, when the provider says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The recipient, when the provider says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// An inbound message that is a STOP, START or HELP request.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct KeywordMessage {
    /// The provider's message id.
    pub provider_id: String,
    /// The sender.
    pub from: String,
    /// The number it was sent to.
    pub to: String,
    /// The text, unchanged.
    pub body: String,
    /// Provider signal or keyword match.
    pub source: KeywordSource,
    /// The keyword (uppercase).
    pub keyword: String,
}

fn masked(value: Option<&str>) -> Option<String> {
    value.map(mask_phone_number)
}

impl fmt::Debug for Inbound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbound")
            .field("provider_id", &self.provider_id)
            .field("from", &mask_phone_number(&self.from))
            .field("to", &mask_phone_number(&self.to))
            .field("body", &format_args!("<{} chars>", self.body.chars().count()))
            .field("media_urls", &self.media_urls.len())
            .finish()
    }
}

impl fmt::Debug for StatusUpdate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatusUpdate")
            .field("provider_id", &self.provider_id)
            .field("provider_status", &self.provider_status)
            .field("error_code", &self.error_code)
            .field("from", &masked(self.from.as_deref()))
            .field("to", &masked(self.to.as_deref()))
            .finish()
    }
}

impl fmt::Debug for KeywordMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeywordMessage")
            .field("provider_id", &self.provider_id)
            .field("from", &mask_phone_number(&self.from))
            .field("to", &mask_phone_number(&self.to))
            .field("source", &self.source)
            .field("keyword", &self.keyword)
            .finish_non_exhaustive()
    }
}

impl EventKind {
    /// The delivery status of a status event.
    #[must_use]
    pub const fn delivery_status(&self) -> Option<DeliveryStatus> {
        match self {
            Self::Queued(_) => Some(DeliveryStatus::Queued),
            Self::Sent(_) => Some(DeliveryStatus::Sent),
            Self::Delivered(_) => Some(DeliveryStatus::Delivered),
            Self::Undelivered(_) => Some(DeliveryStatus::Undelivered),
            Self::Filtered(_) => Some(DeliveryStatus::Filtered),
            Self::Received(_) | Self::OptedOut(_) | Self::OptedIn(_) | Self::Help(_) | Self::Unrecognized { .. } => {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_keyword_is_longer_than_the_shortcut_allows() {
        let longest = OPT_OUT_KEYWORDS.iter().chain(&HELP_KEYWORDS).map(|k| k.chars().count()).max();
        assert_eq!(longest, Some(LONGEST_KEYWORD));
        // Uppercasing can lengthen a word, never shorten it: `ſtop` (long s) is STOP.
        assert_eq!(detect_keyword("ſtop").map(|k| k.kind), Some(KeywordKind::OptedOut));
        assert_eq!(detect_keyword(&"stop".repeat(3)), None);
    }

    #[test]
    fn t244_keyword_lists() {
        assert_eq!(OPT_OUT_KEYWORDS, ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"]);
        assert_eq!(HELP_KEYWORDS, ["HELP", "INFO"]);
        for word in OPT_OUT_KEYWORDS {
            assert_eq!(detect_keyword(word), Some(Keyword { kind: KeywordKind::OptedOut, keyword: word.into() }));
        }
        for word in HELP_KEYWORDS {
            assert_eq!(detect_keyword(word), Some(Keyword { kind: KeywordKind::Help, keyword: word.into() }));
        }
    }

    #[test]
    fn t245_normalization() {
        for text in ["stop", "  Stop  ", "STOP.", "stop!!", "Quit?", "stop?!"] {
            assert_eq!(detect_keyword(text).map(|k| k.kind), Some(KeywordKind::OptedOut), "{text:?}");
        }
    }

    #[test]
    fn t246_no_match() {
        for text in ["please stop", "stop it", "STOPPED", "unstoppable", "", "help me", "start", "STOP ALL"] {
            assert_eq!(detect_keyword(text), None, "{text:?}");
        }
    }
}
