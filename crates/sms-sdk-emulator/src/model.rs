//! The emulator's vocabulary, which every other module speaks: the providers it emulates, and
//! what it records of each send request it received.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// A provider API the emulator speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`.
    Twilio,
    /// `POST /v2/messages`.
    Telnyx,
    /// `POST /v1/Account/{auth_id}/Message/`.
    Plivo,
    /// `POST /v1/messages`.
    Vonage,
    /// `POST /xms/v1/{service_plan_id}/batches`.
    Sinch,
    /// AWS End User Messaging SMS: `POST /` with `X-Amz-Target: PinpointSMSVoiceV2.SendTextMessage`.
    Aws,
    /// Infobip SMS API v3: `POST /sms/3/messages` (the emulator's base URL stands for the
    /// account's own host).
    Infobip,
    /// Bandwidth Messaging API v2: `POST /api/v2/users/{accountId}/messages`.
    Bandwidth,
}

impl Provider {
    /// Every provider the emulator speaks.
    pub const ALL: [Self; 8] =
        [Self::Twilio, Self::Telnyx, Self::Plivo, Self::Vonage, Self::Sinch, Self::Aws, Self::Infobip, Self::Bandwidth];

    /// `twilio`, `telnyx`, `plivo`, `vonage`, `sinch`, `aws`, `infobip` or `bandwidth` (the
    /// library's adapter names).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Twilio => "twilio",
            Self::Telnyx => "telnyx",
            Self::Plivo => "plivo",
            Self::Vonage => "vonage",
            Self::Sinch => "sinch",
            Self::Aws => "aws",
            Self::Infobip => "infobip",
            Self::Bandwidth => "bandwidth",
        }
    }

    /// The `Retry-After` the emulator's rate limits carry at this provider: one second, except at
    /// AWS, whose `ThrottlingException` carries none (the client's backoff decides).
    #[must_use]
    pub const fn retry_after(self) -> Option<Duration> {
        match self {
            Self::Twilio
            | Self::Telnyx
            | Self::Plivo
            | Self::Vonage
            | Self::Sinch
            | Self::Infobip
            | Self::Bandwidth => Some(Duration::from_secs(1)),
            Self::Aws => None,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown provider name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProvider(String);

impl fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown provider {:?} (expected twilio, telnyx, plivo, vonage, sinch, aws, infobip or bandwidth)",
            self.0
        )
    }
}

impl std::error::Error for UnknownProvider {}

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| UnknownProvider(name.to_owned()))
    }
}

/// Where a received message is: its delivery status when it was created, or what was answered
/// when it was not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Created; no status step has happened yet.
    Queued,
    /// Created and reported `sent`.
    Sent,
    /// Created and reported delivered.
    Delivered,
    /// Created and reported undelivered.
    Undelivered,
    /// Refused with a 4xx (credentials, fields, a magic rejection), or at Infobip with a 200
    /// whose destination is rejected; nothing was created.
    Rejected,
    /// Refused with a 429; nothing was created.
    RateLimited,
    /// Answered 500 (503 at Bandwidth); nothing was created.
    ServerError,
    /// Never answered (held until the client gave up); nothing was created.
    NoResponse,
    /// The connection was reset before any response; nothing was created.
    ConnectionReset,
    /// Answered 2xx with an unreadable body; nothing was created.
    UnreadableResponse,
}

/// A status webhook that was not answered 2xx after every attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookFailure {
    /// Where it was posted.
    pub url: String,
    /// The provider's event or status (`sent`, `message.finalized`, …).
    pub event: String,
    /// How many times it was posted.
    pub attempts: u32,
    /// The last failure: `HTTP 500`, a timeout, a refused connection.
    pub error: String,
}

/// One send request as the emulator received it (rejected ones included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReceivedMessage {
    /// The provider API that was called.
    pub provider: Provider,
    /// The id the emulator issued, or `None` when nothing was created.
    pub id: Option<String>,
    /// The recipient, in E.164 with its `+` (Vonage and Plivo numbers without one get it).
    pub to: Option<String>,
    /// The sender as received: a number, a sender ID, or a messaging service or profile id.
    pub from: Option<String>,
    /// The text.
    pub body: Option<String>,
    /// The media URLs.
    pub media_urls: Vec<String>,
    /// The message's own status callback URL.
    pub callback_url: Option<String>,
    /// Vonage's `client_ref`, Sinch's `client_reference`, Infobip's `callbackData` or
    /// Bandwidth's `tag`, when the request had one (echoed in its status webhooks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_ref: Option<String>,
    /// AWS's `Context` map, when the request had one (echoed in its delivery events; the
    /// library's correlation reference is its `sms_sdk_ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<BTreeMap<String, String>>,
    /// Where the message is now.
    pub status: Status,
    /// The HTTP status answered, or `None` when the connection was held, reset or dropped.
    pub http_status: Option<u16>,
    /// The provider error code answered, when there was one.
    pub error_code: Option<String>,
    /// When the request arrived.
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    /// The status webhooks that failed.
    pub webhook_failures: Vec<WebhookFailure>,
    /// True when `from` is a messaging service, profile or powerpack id.
    #[serde(skip)]
    pub(crate) service_sender: bool,
    /// AWS's `MessageType` (`TRANSACTIONAL` or `PROMOTIONAL`), when the request named one.
    #[serde(skip)]
    pub(crate) message_type: Option<String>,
    /// The message id the request chose (Infobip's `messageId`), which the created message gets.
    #[serde(skip)]
    pub(crate) chosen_id: Option<String>,
}

impl ReceivedMessage {
    /// An entry for a request to `provider`, with nothing read yet.
    pub(crate) fn new(provider: Provider, received_at: OffsetDateTime) -> Self {
        Self {
            provider,
            id: None,
            to: None,
            from: None,
            body: None,
            media_urls: Vec::new(),
            callback_url: None,
            client_ref: None,
            context: None,
            status: Status::Rejected,
            http_status: None,
            error_code: None,
            received_at,
            webhook_failures: Vec::new(),
            service_sender: false,
            message_type: None,
            chosen_id: None,
        }
    }
}
