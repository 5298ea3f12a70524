//! What validation finds: an [`Issue`] with its [`IssueCode`], naming a message [`Field`].

use std::fmt;

use serde::{Deserialize, Serialize};

/// A message field, as issues and errors name it (the [`Message`](crate::Message) field names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Field {
    /// The recipient.
    To,
    /// The sender.
    From,
    /// The text.
    Body,
    /// Media URLs.
    MediaUrls,
    /// The scheduled time.
    SendAt,
    /// The validity period.
    ValidityPeriodSecs,
    /// The per-message webhook URL.
    WebhookUrl,
    /// The idempotency key.
    IdempotencyKey,
    /// Provider options.
    ProviderOptions,
}

impl Field {
    /// The field's name (`media_urls`, …).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::To => "to",
            Self::From => "from",
            Self::Body => "body",
            Self::MediaUrls => "media_urls",
            Self::SendAt => "send_at",
            Self::ValidityPeriodSecs => "validity_period_secs",
            Self::WebhookUrl => "webhook_url",
            Self::IdempotencyKey => "idempotency_key",
            Self::ProviderOptions => "provider_options",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of problem an issue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IssueCode {
    /// `to` is not E.164.
    InvalidRecipient,
    /// The sender is malformed.
    InvalidSender,
    /// No sender and no adapter default.
    MissingSender,
    /// An empty body without media (or any empty body on Vonage).
    EmptyBody,
    /// The adapter cannot send this field, sender type or option.
    UnsupportedField,
    /// A field has a bad value.
    InvalidField,
}

/// One problem found by local validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Issue {
    /// What kind of problem.
    pub code: IssueCode,
    /// The field concerned.
    pub field: Field,
    /// A human explanation (never contains a value the caller passed).
    pub message: String,
    /// The adapter concerned, for adapter-level issues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

impl Issue {
    /// A new issue with no adapter.
    #[must_use]
    pub fn new(code: IssueCode, field: Field, message: impl Into<String>) -> Self {
        Self { code, field, message: message.into(), provider: None }
    }

    /// Names the adapter concerned.
    #[must_use]
    pub fn provider(mut self, name: impl Into<String>) -> Self {
        self.provider = Some(name.into());
        self
    }
}
