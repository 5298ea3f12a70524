//! The message a caller sends, its senders, and the E.164 recipient type.
//!
//! A [`Message`] keeps what the caller wrote; [`Client::send`](crate::Client::send) and
//! [`Client::validate`](crate::Client::validate) check it before any request.
//!
//! ```
//! use sms_sdk::{Message, Sender};
//!
//! let message = Message::new("+14155550123", "Your order has shipped.")
//!     .from(Sender::sender_id("Acme"))
//!     .idempotency_key("order:123:shipped:v1");
//! assert_eq!(message.to, "+14155550123");
//! // Debug output never shows the body or the full number.
//! let debug = format!("{message:?}");
//! assert!(!debug.contains("shipped.") && !debug.contains("4155550123"));
//! ```

use std::fmt;
use std::str::FromStr;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::Error;
use crate::issue::Field;
use crate::options::ProviderField;
use crate::redact::{js_trim, mask_phone_number};

/// What an invalid recipient is told.
pub(crate) const INVALID_RECIPIENT: &str = "The recipient must be an E.164 number, such as +14155550123.";

/// True when `value` is an E.164 number: `+`, a non-zero digit, 2–15 ASCII digits in all.
#[must_use]
pub fn is_e164(value: &str) -> bool {
    let Some(digits) = value.strip_prefix('+') else { return false };
    (2..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) && !digits.starts_with('0')
}

/// A phone number in E.164 form (`+14155550123`). Checked on construction.
///
/// `Debug` and `Display` print the masked form (`+1********23`); [`PhoneNumber::as_str`] gives
/// the number itself.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PhoneNumber(String);

impl PhoneNumber {
    /// Checks `value` and wraps it.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidRecipient`](crate::ErrorKind::InvalidRecipient) when it is not E.164.
    pub fn parse(value: &str) -> Result<Self, Error> {
        if is_e164(value) { Ok(Self(value.to_owned())) } else { Err(Error::invalid_recipient(INVALID_RECIPIENT)) }
    }

    /// The full number, for a request body.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The masked number, safe to log.
    #[must_use]
    pub fn masked(&self) -> String {
        mask_phone_number(&self.0)
    }
}

impl FromStr for PhoneNumber {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::parse(s)
    }
}

impl fmt::Debug for PhoneNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PhoneNumber({})", self.masked())
    }
}

impl fmt::Display for PhoneNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked())
    }
}

/// A sender as the caller writes it.
#[derive(Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Sender {
    /// A long code or toll-free number in E.164 form.
    Phone(String),
    /// An alphanumeric sender ID: 1–11 ASCII letters, digits or spaces, at least one letter.
    SenderId(String),
    /// A short code: 3–8 digits.
    ShortCode(String),
    /// A provider's sender pool: a Twilio Messaging Service SID, a Telnyx messaging profile id
    /// or a Plivo Powerpack UUID.
    MessagingService(String),
}

impl Sender {
    /// A phone number sender.
    #[must_use]
    pub fn phone(number: impl Into<String>) -> Self {
        Self::Phone(number.into())
    }

    /// An alphanumeric sender ID.
    #[must_use]
    pub fn sender_id(id: impl Into<String>) -> Self {
        Self::SenderId(id.into())
    }

    /// A short code.
    #[must_use]
    pub fn short_code(code: impl Into<String>) -> Self {
        Self::ShortCode(code.into())
    }

    /// A messaging service (sender pool).
    #[must_use]
    pub fn messaging_service(id: impl Into<String>) -> Self {
        Self::MessagingService(id.into())
    }

    /// Checks the sender's format and gives its resolved form, or the reason it is malformed.
    ///
    /// # Errors
    /// A fixed, value-free message naming the rule the sender breaks.
    pub fn resolve(&self) -> Result<ResolvedSender, &'static str> {
        let (kind, value, ok, rule) = match self {
            Self::Phone(v) => {
                (SenderKind::PhoneNumber, v, is_e164(v), "Sender phone numbers must be E.164, such as +15005550006.")
            }
            Self::SenderId(v) => (
                SenderKind::Alphanumeric,
                v,
                (1..=11).contains(&v.len())
                    && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b' ')
                    && v.bytes().any(|b| b.is_ascii_alphabetic()),
                "Alphanumeric sender IDs are 1-11 letters, digits or spaces, with at least one letter.",
            ),
            Self::ShortCode(v) => (
                SenderKind::ShortCode,
                v,
                (3..=8).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()),
                "Short codes are 3-8 digits.",
            ),
            Self::MessagingService(v) => {
                (SenderKind::MessagingService, v, !js_trim(v).is_empty(), "Messaging service IDs must not be blank.")
            }
        };
        if ok { Ok(ResolvedSender { kind, value: value.clone() }) } else { Err(rule) }
    }

    fn value(&self) -> &str {
        match self {
            Self::Phone(v) | Self::SenderId(v) | Self::ShortCode(v) | Self::MessagingService(v) => v,
        }
    }
}

impl From<&str> for Sender {
    fn from(number: &str) -> Self {
        Self::Phone(number.to_owned())
    }
}

impl From<String> for Sender {
    fn from(number: String) -> Self {
        Self::Phone(number)
    }
}

impl fmt::Debug for Sender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Phone(v) => write!(f, "Phone({})", mask_phone_number(v)),
            Self::SenderId(v) => write!(f, "SenderId({v:?})"),
            Self::ShortCode(v) => write!(f, "ShortCode({v:?})"),
            Self::MessagingService(v) => write!(f, "MessagingService({v:?})"),
        }
    }
}

/// The caller's form, as the reference fingerprints it: a string for a phone number, otherwise
/// a one-key object such as `{"senderId":"Acme"}`.
impl Serialize for Sender {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let key = match self {
            Self::Phone(v) => return serializer.serialize_str(v),
            Self::SenderId(_) => "senderId",
            Self::ShortCode(_) => "shortCode",
            Self::MessagingService(_) => "messagingService",
        };
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(key, self.value())?;
        map.end()
    }
}

/// The kind of a resolved sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SenderKind {
    /// A long code or toll-free number.
    PhoneNumber,
    /// An alphanumeric sender ID.
    Alphanumeric,
    /// A short code.
    ShortCode,
    /// A messaging service (sender pool).
    MessagingService,
}

impl SenderKind {
    /// The reference's name: `phone_number`, `alphanumeric`, `short_code`, `messaging_service`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PhoneNumber => "phone_number",
            Self::Alphanumeric => "alphanumeric",
            Self::ShortCode => "short_code",
            Self::MessagingService => "messaging_service",
        }
    }
}

/// A sender whose format has been checked.
#[derive(Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ResolvedSender {
    /// What kind of sender it is.
    pub kind: SenderKind,
    /// The sender as written (number, ID, short code or pool id).
    pub value: String,
}

impl fmt::Debug for ResolvedSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = match self.kind {
            SenderKind::PhoneNumber => mask_phone_number(&self.value),
            SenderKind::Alphanumeric | SenderKind::ShortCode | SenderKind::MessagingService => self.value.clone(),
        };
        f.debug_struct("ResolvedSender").field("kind", &self.kind).field("value", &value).finish()
    }
}

/// One SMS or MMS to send, as the caller wrote it. Nothing is checked until it is sent or
/// validated, so a malformed message is reported with every problem at once by
/// [`Client::validate`](crate::Client::validate).
///
/// Build it with [`Message::new`] and the chained setters; the fields are public for reading.
#[derive(Clone, Default, PartialEq)]
pub struct Message {
    /// The recipient, E.164.
    pub to: String,
    /// The sender; `None` uses each adapter's default.
    pub from: Option<Sender>,
    /// The text. May be empty only when there is media (and never on Vonage).
    pub body: String,
    /// Absolute `http`/`https` URLs of media to attach (MMS).
    pub media_urls: Vec<String>,
    /// When the provider should send it (scheduling).
    pub send_at: Option<OffsetDateTime>,
    /// How long the provider may keep trying, in seconds (a positive integer).
    pub validity_period_secs: Option<i64>,
    /// A per-message status callback URL (absolute `http`/`https`).
    pub webhook_url: Option<String>,
    /// Names the logical message (1–255 UTF-16 units), for replays instead of duplicates.
    pub idempotency_key: Option<String>,
    /// Provider-specific options, keyed by adapter name (a JSON object); see [`crate::options`].
    pub provider_options: Option<Value>,
}

impl Message {
    /// A text message to `to`.
    #[must_use]
    pub fn new(to: impl Into<String>, body: impl Into<String>) -> Self {
        Self { to: to.into(), body: body.into(), ..Self::default() }
    }

    /// Sets the sender (a `&str` is a phone number).
    #[must_use]
    pub fn from(mut self, sender: impl Into<Sender>) -> Self {
        self.from = Some(sender.into());
        self
    }

    /// Adds one media URL.
    #[must_use]
    pub fn media_url(mut self, url: impl Into<String>) -> Self {
        self.media_urls.push(url.into());
        self
    }

    /// Schedules the message.
    #[must_use]
    pub fn send_at(mut self, at: OffsetDateTime) -> Self {
        self.send_at = Some(at);
        self
    }

    /// Sets the validity period in seconds.
    #[must_use]
    pub fn validity_period_secs(mut self, secs: i64) -> Self {
        self.validity_period_secs = Some(secs);
        self
    }

    /// Sets the per-message status callback URL.
    #[must_use]
    pub fn webhook_url(mut self, url: impl Into<String>) -> Self {
        self.webhook_url = Some(url.into());
        self
    }

    /// Sets the idempotency key.
    #[must_use]
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// Sets the options for one adapter (an object of typed options and `extra`).
    #[must_use]
    pub fn provider_option(mut self, adapter: impl Into<String>, entry: Value) -> Self {
        if !matches!(self.provider_options, Some(Value::Object(_))) {
            self.provider_options = Some(Value::Object(Map::new()));
        }
        if let Some(Value::Object(map)) = &mut self.provider_options {
            map.insert(adapter.into(), entry);
        }
        self
    }

    /// Parses an RFC 3339 timestamp for [`Message::send_at`].
    ///
    /// # Errors
    /// [`ErrorKind::InvalidMessage`](crate::ErrorKind::InvalidMessage) on the `send_at` field
    /// when the text is not a valid date.
    pub fn parse_send_at(text: &str) -> Result<OffsetDateTime, Error> {
        OffsetDateTime::parse(text, &Rfc3339)
            .ok()
            .filter(|at| at.checked_to_offset(time::UtcOffset::UTC).is_some())
            .ok_or_else(|| {
                Error::invalid_message(
                    Field::SendAt,
                    "send_at must be an RFC 3339 timestamp, such as 2030-01-01T10:00:00Z.",
                )
            })
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let option_keys: Vec<&str> = match &self.provider_options {
            Some(Value::Object(map)) => map.keys().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        f.debug_struct("Message")
            .field("to", &mask_phone_number(&self.to))
            .field("from", &self.from)
            .field("body", &format_args!("<{} chars>", self.body.chars().count()))
            .field("media_urls", &self.media_urls.len())
            .field("send_at", &self.send_at)
            .field("validity_period_secs", &self.validity_period_secs)
            .field("webhook_url", &self.webhook_url.is_some())
            .field("idempotency_key", &self.idempotency_key)
            .field("provider_options", &option_keys)
            .finish()
    }
}

/// A checked message, as one adapter receives it: the sender resolved (the message's own or the
/// adapter's default) and the adapter's own provider options parsed.
#[derive(Clone)]
#[non_exhaustive]
pub struct OutboundMessage {
    /// The recipient.
    pub to: PhoneNumber,
    /// The sender.
    pub from: ResolvedSender,
    /// The text (may be empty when there is media).
    pub body: String,
    /// Media URLs, empty when there is none.
    pub media_urls: Vec<String>,
    /// When the provider should send it.
    pub send_at: Option<OffsetDateTime>,
    /// Validity period in seconds, within the adapter's range.
    pub validity_period_secs: Option<u32>,
    /// The per-message status callback URL.
    pub webhook_url: Option<String>,
    /// This adapter's provider options: typed options in spec order, then `extra` in insertion
    /// order. Empty when there are none.
    pub provider_fields: Vec<ProviderField>,
    /// The correlation reference the provider should echo in its status webhooks (see
    /// [`crate::correlation`]), set by the client on keyed sends when it has a correlation
    /// secret. Not part of the fingerprint. Custom adapters may ignore it.
    pub correlation: Option<String>,
}

impl OutboundMessage {
    /// A message to `to` from `from` with `body` and nothing else (no media, schedule, validity,
    /// callback or provider fields): for calling an adapter directly, as its tests do. Set the
    /// other fields afterwards.
    #[must_use]
    pub fn new(to: PhoneNumber, from: ResolvedSender, body: impl Into<String>) -> Self {
        Self {
            to,
            from,
            body: body.into(),
            media_urls: Vec::new(),
            send_at: None,
            validity_period_secs: None,
            webhook_url: None,
            provider_fields: Vec::new(),
            correlation: None,
        }
    }
}

impl fmt::Debug for OutboundMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutboundMessage")
            .field("to", &self.to)
            .field("from", &self.from)
            .field("body", &format_args!("<{} chars>", self.body.chars().count()))
            .field("media_urls", &self.media_urls.len())
            .field("send_at", &self.send_at)
            .field("validity_period_secs", &self.validity_period_secs)
            .field("webhook_url", &self.webhook_url.is_some())
            .field("provider_fields", &self.provider_fields.iter().map(|f| f.wire.as_str()).collect::<Vec<_>>())
            .field("correlation", &self.correlation.is_some())
            .finish()
    }
}

/// Formats a timestamp as the reference does: RFC 3339, UTC, milliseconds
/// (`2030-01-01T10:00:00.000Z`).
#[must_use]
pub fn format_timestamp(at: OffsetDateTime) -> String {
    // A time whose UTC date falls outside years 1-9999 keeps its own offset (validation refuses
    // it before any request; this only keeps formatting from panicking).
    let at = at.checked_to_offset(time::UtcOffset::UTC).unwrap_or(at);
    let format =
        time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    at.format(&format).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t019_valid_e164() {
        for n in ["+14155550123", "+447700900123", "+12", "+123456789012345", "+8613800138000"] {
            assert!(is_e164(n), "{n}");
            assert!(PhoneNumber::parse(n).is_ok());
        }
    }

    #[test]
    fn t020_invalid_e164() {
        for n in [
            "14155550123",
            "+04155550123",
            "+1",
            "+1234567890123456",
            "+1 415 555 0123",
            "+1-415-555-0123",
            "+1(415)5550123",
            "",
            "+",
            "++14155550123",
            "+14155550123\n",
            "+١٤١٥٥٥٥٠١٢٣",
        ] {
            assert!(!is_e164(n), "{n:?}");
            let err = PhoneNumber::parse(n).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidRecipient);
        }
    }

    #[test]
    fn t089_resolve_sender_accepts() {
        let ok = |s: Sender, kind| assert_eq!(s.resolve().unwrap().kind, kind);
        ok(Sender::sender_id("Acme"), SenderKind::Alphanumeric);
        ok(Sender::sender_id("ACME 2FA"), SenderKind::Alphanumeric);
        ok(Sender::sender_id("A1234567890"), SenderKind::Alphanumeric);
        ok(Sender::short_code("123"), SenderKind::ShortCode);
        ok(Sender::short_code("12345678"), SenderKind::ShortCode);
        ok(Sender::messaging_service("MG1"), SenderKind::MessagingService);
        ok(Sender::phone("+15005550006"), SenderKind::PhoneNumber);
    }

    #[test]
    fn t090_resolve_sender_rejects() {
        for s in [
            Sender::sender_id(""),
            Sender::sender_id("123456"),
            Sender::sender_id("TwelveChars1"),
            Sender::sender_id("Acme!"),
            Sender::short_code("12"),
            Sender::short_code("123456789"),
            Sender::short_code("12a45"),
            Sender::messaging_service("  "),
            Sender::phone("+0123"),
        ] {
            assert!(s.resolve().is_err(), "{s:?}");
        }
    }

    #[test]
    fn sender_serializes_as_the_caller_wrote_it() {
        assert_eq!(serde_json::to_string(&Sender::phone("+1")).unwrap(), "\"+1\"");
        assert_eq!(serde_json::to_string(&Sender::sender_id("Acme")).unwrap(), r#"{"senderId":"Acme"}"#);
        assert_eq!(serde_json::to_string(&Sender::short_code("123")).unwrap(), r#"{"shortCode":"123"}"#);
        assert_eq!(serde_json::to_string(&Sender::messaging_service("MG1")).unwrap(), r#"{"messagingService":"MG1"}"#);
    }

    #[test]
    fn timestamps_print_with_milliseconds_in_utc() {
        let at = OffsetDateTime::parse("2030-01-01T11:00:00+01:00", &Rfc3339).unwrap();
        assert_eq!(format_timestamp(at), "2030-01-01T10:00:00.000Z");
    }

    #[test]
    fn unparseable_send_at_is_an_invalid_message() {
        let err = Message::parse_send_at("not a date").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidMessage { field: Field::SendAt });
    }
}
