//! What one provider request proved: accepted, rejected in a category, or unknown; and the
//! provider's redacted details.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::BoxError;
use crate::redact::redact_text;

/// What one request proved.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The provider created or queued the message.
    Accepted(Accepted),
    /// The provider proved it did not create the message.
    Rejected(Rejection),
    /// The request may have created the message.
    Unknown(Unknown),
}

impl Outcome {
    /// Accepted with `provider_id`, delivery `queued`.
    #[must_use]
    pub fn accepted(provider_id: impl Into<String>) -> Self {
        Self::Accepted(Accepted { provider_id: provider_id.into(), delivery: Delivery::Queued })
    }

    /// Rejected in `category`, with the provider's (redacted) details.
    #[must_use]
    pub fn rejected(category: Category, details: ProviderError) -> Self {
        Self::Rejected(Rejection { category, retry_after: None, details })
    }

    /// Unknown for `reason`.
    #[must_use]
    pub fn unknown(reason: UnknownReason) -> Self {
        Self::Unknown(Unknown { reason, details: None, cause: None })
    }
}

/// An accepted request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Accepted {
    /// The provider's message id.
    pub provider_id: String,
    /// The status in the response (usually `queued`).
    pub delivery: Delivery,
}

/// A proven rejection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Rejection {
    /// Why the provider refused.
    pub category: Category,
    /// The provider's `Retry-After`, for `RateLimited`.
    pub retry_after: Option<Duration>,
    /// What the provider said, redacted.
    pub details: ProviderError,
}

/// A request whose result could not be determined.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Unknown {
    /// Why.
    pub reason: UnknownReason,
    /// What the provider said, if it answered.
    pub details: Option<ProviderError>,
    /// The transport error, for debugging.
    pub cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl Unknown {
    /// Attaches the transport error.
    #[must_use]
    pub fn with_cause(mut self, cause: impl Into<BoxError>) -> Self {
        self.cause = Some(Arc::from(cause.into()));
        self
    }
}

/// Why a provider rejected a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Category {
    /// Credentials missing, invalid or forbidden.
    Auth,
    /// A documented rate or queue limit refused the request.
    RateLimited,
    /// The destination is invalid or unreachable.
    Recipient,
    /// The sender is invalid, not provisioned, or not usable for this destination.
    Sender,
    /// Balance, trial, region permission, spend limit, or a disabled account.
    Account,
    /// Opt-out, block list, or content block.
    Compliance,
    /// A malformed request, or any unlisted 4xx.
    Request,
    /// The provider could not be reached: DNS resolution, the connection or the TLS handshake
    /// failed before any byte of the request was written, so nothing was sent.
    Unreachable,
}

impl Category {
    /// Whether another provider might accept what this one refused: `Auth`, `RateLimited`,
    /// `Sender`, `Account` and `Unreachable` yes; `Recipient`, `Compliance` and `Request` never.
    #[must_use]
    pub const fn allows_failover(self) -> bool {
        match self {
            Self::Auth | Self::RateLimited | Self::Sender | Self::Account | Self::Unreachable => true,
            Self::Recipient | Self::Compliance | Self::Request => false,
        }
    }

    /// The reference's name (`rate_limited`, …).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auth => "auth",
            Self::RateLimited => "rate_limited",
            Self::Recipient => "recipient",
            Self::Sender => "sender",
            Self::Account => "account",
            Self::Compliance => "compliance",
            Self::Request => "request",
            Self::Unreachable => "unreachable",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an outcome is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UnknownReason {
    /// The connection failed after the request may have been sent.
    Network,
    /// No response within the per-request timeout.
    Timeout,
    /// The caller cancelled while a request was in flight.
    Aborted,
    /// A 2xx without the documented id, or a body that is not JSON.
    MalformedResponse,
    /// The provider answered 5xx.
    ServerError,
    /// A 1xx or 3xx, or a 429 without the provider's documented rate-limit code.
    UnexpectedStatus,
    /// The adapter panicked.
    AdapterException,
    /// An earlier send with this key is still reserved past the stale limit.
    StaleReservation,
    /// An earlier send with this key had an unknown outcome.
    ReplayedUnknown,
}

impl UnknownReason {
    /// The reference's name (`malformed_response`, …).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Network => "network",
            Self::Timeout => "timeout",
            Self::Aborted => "aborted",
            Self::MalformedResponse => "malformed_response",
            Self::ServerError => "server_error",
            Self::UnexpectedStatus => "unexpected_status",
            Self::AdapterException => "adapter_exception",
            Self::StaleReservation => "stale_reservation",
            Self::ReplayedUnknown => "replayed_unknown",
        }
    }
}

impl fmt::Display for UnknownReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the message is, as far as a send response or a status webhook says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Delivery {
    /// Not known.
    Unknown,
    /// Queued by the provider.
    Queued,
    /// Sent to the carrier.
    Sent,
    /// Delivered to the handset.
    Delivered,
    /// Not delivered.
    Undelivered,
    /// Filtered by the provider or carrier.
    Filtered,
}

/// What a provider said about a request, safe to log: its text is redacted and capped at 200
/// UTF-16 units, and it never holds a credential or a body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderError {
    provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_id: Option<String>,
}

impl ProviderError {
    /// Details from `provider` (the adapter's name).
    #[must_use]
    pub fn new(provider: impl Into<String>) -> Self {
        Self { provider: provider.into(), http_status: None, code: None, message: None, request_id: None }
    }

    /// Sets the HTTP status.
    #[must_use]
    pub fn http_status(mut self, status: u16) -> Self {
        self.http_status = Some(status);
        self
    }

    /// Sets the provider's error code (at most 64 characters, control characters removed).
    #[must_use]
    pub fn code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(bounded(&code.into(), 64));
        self
    }

    /// Sets the provider's message, redacted ([`redact_text`]).
    #[must_use]
    pub fn message(mut self, message: &str) -> Self {
        self.message = Some(redact_text(message));
        self
    }

    /// Sets the provider's request id (at most 128 characters, control characters removed).
    #[must_use]
    pub fn request_id(mut self, id: impl Into<String>) -> Self {
        self.request_id = Some(bounded(&id.into(), 128));
        self
    }

    /// Details read back from a store, exactly as they were written (already bounded and
    /// redacted when they were made).
    #[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
    pub(crate) fn restore(
        provider: String,
        http_status: Option<u16>,
        code: Option<String>,
        message: Option<String>,
        request_id: Option<String>,
    ) -> Self {
        Self { provider, http_status, code, message, request_id }
    }

    /// The provider (adapter) name.
    #[must_use]
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The HTTP status, if there was a response.
    #[must_use]
    pub fn status(&self) -> Option<u16> {
        self.http_status
    }

    /// The provider's error code.
    #[must_use]
    pub fn provider_code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The provider's redacted message.
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The provider's request id.
    #[must_use]
    pub fn provider_request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }
}

/// `text` without control characters, cut to `max` characters: identifiers a provider sends
/// back are short, and anything longer is not one.
fn bounded(text: &str, max: usize) -> String {
    text.chars().filter(|c| !c.is_control()).take(max).collect()
}
