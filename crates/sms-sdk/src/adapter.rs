//! The adapter contract: one provider integration reduces one request to one [`Outcome`].
//!
//! Adapters classify; the client decides. An adapter makes exactly one request per
//! [`Adapter::send`] call and answers with what the provider proved: [`Outcome::Accepted`],
//! [`Outcome::Rejected`] with a [`Category`], or [`Outcome::Unknown`] when it cannot tell. It
//! cannot fail in any other way; the client owns retries, failover and timeouts (it drops the
//! future when the per-request timeout or the caller's cancellation fires).
//!
//! ```
//! use sms_sdk::adapter::{Adapter, AdapterInfo, Capabilities, Outcome, SendContext};
//! use sms_sdk::{Client, Message, OutboundMessage};
//!
//! struct Echo(AdapterInfo);
//!
//! impl Adapter for Echo {
//!     fn info(&self) -> &AdapterInfo { &self.0 }
//!     async fn send(&self, _msg: &OutboundMessage, cx: &SendContext) -> Outcome {
//!         Outcome::accepted(format!("echo-{}", cx.attempt))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let info = AdapterInfo::new("echo", Capabilities::default()).default_from("+15005550006");
//! let client = Client::builder().adapter(Echo(info)).build()?;
//! let receipt = client.send(&Message::new("+14155550123", "Hi")).await?;
//! assert_eq!(receipt.provider_id, "echo-1");
//! # Ok::<(), sms_sdk::Error>(()) }).unwrap();
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{BoxError, ProviderError};
use crate::message::{OutboundMessage, Sender};
use crate::options::OptionsSpec;
use crate::validate::Issue;

/// One provider integration.
///
/// Implement it with `async fn send`. `send` must make at most one request and never panic
/// (a panic is caught and becomes `Unknown(AdapterException)`).
pub trait Adapter: Send + Sync + 'static {
    /// Name, capabilities, support level, default sender and option spec.
    fn info(&self) -> &AdapterInfo;

    /// Makes one request and classifies its result.
    fn send(&self, message: &OutboundMessage, cx: &SendContext) -> impl Future<Output = Outcome> + Send;

    /// Provider-only rules, checked offline after the generic capability checks passed.
    /// Returned issues block the send; the client stamps them with the adapter's name.
    fn validate(&self, message: &OutboundMessage) -> Vec<Issue> {
        let _ = message;
        Vec::new()
    }
}

/// A boxed, `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The object-safe form of [`Adapter`] the client stores, so adapters of different types can
/// share one failover chain.
pub(crate) trait DynAdapter: Send + Sync + 'static {
    fn info(&self) -> &AdapterInfo;
    fn send<'a>(&'a self, message: &'a OutboundMessage, cx: &'a SendContext) -> BoxFuture<'a, Outcome>;
    fn validate(&self, message: &OutboundMessage) -> Vec<Issue>;
}

impl<A: Adapter> DynAdapter for A {
    fn info(&self) -> &AdapterInfo {
        Adapter::info(self)
    }
    fn send<'a>(&'a self, message: &'a OutboundMessage, cx: &'a SendContext) -> BoxFuture<'a, Outcome> {
        Box::pin(Adapter::send(self, message, cx))
    }
    fn validate(&self, message: &OutboundMessage) -> Vec<Issue> {
        Adapter::validate(self, message)
    }
}

/// What the client tells an adapter about this request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SendContext {
    /// 1-based attempt number on this adapter within one logical send.
    pub attempt: u32,
    /// The message's idempotency key. Never sent to a provider by the built-in adapters.
    pub idempotency_key: Option<String>,
    /// The per-request timeout the client enforces (adapters may pass it to their transport).
    pub timeout: Duration,
}

impl SendContext {
    /// A context for `attempt` (used by the client and by tests that call adapters directly).
    #[must_use]
    pub fn new(attempt: u32, idempotency_key: Option<String>, timeout: Duration) -> Self {
        Self { attempt, idempotency_key, timeout }
    }
}

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
pub struct Accepted {
    /// The provider's message id.
    pub provider_id: String,
    /// The status in the response (usually `queued`).
    pub delivery: Delivery,
}

/// A proven rejection.
#[derive(Debug, Clone)]
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

/// A kind of sender an adapter can send from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SenderType {
    /// A local long code number.
    LongCode,
    /// A toll-free number.
    TollFree,
    /// A short code.
    ShortCode,
    /// An alphanumeric sender ID.
    Alphanumeric,
    /// A sender pool (messaging service, messaging profile, Powerpack).
    MessagingService,
}

/// Every sender type.
pub const ALL_SENDER_TYPES: &[SenderType] = &[
    SenderType::LongCode,
    SenderType::TollFree,
    SenderType::ShortCode,
    SenderType::Alphanumeric,
    SenderType::MessagingService,
];

/// An inclusive range of validity periods, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ValidityRange {
    /// Shortest accepted period.
    pub min_sec: u32,
    /// Longest accepted period.
    pub max_sec: u32,
}

/// What an adapter can send. A baseline, not a promise that a route works.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// Always true.
    pub send_text: bool,
    /// Accepts media URLs.
    pub mms: bool,
    /// Accepts `send_at`.
    pub scheduling: bool,
    /// Accepted validity periods; `None` when unsupported.
    pub validity_period: Option<ValidityRange>,
    /// Accepts a per-message webhook URL.
    pub webhook_url_override: bool,
    /// Delivers inbound webhooks this SDK parses.
    pub inbound: bool,
    /// Sends status webhooks this SDK parses.
    pub delivery_receipts: bool,
    /// Sender types it can send from.
    pub sender_types: Vec<SenderType>,
    /// Whether the provider deduplicates sends itself (false for every built-in adapter).
    pub native_idempotency: bool,
}

impl Default for Capabilities {
    /// Text only, from a long code or toll-free number.
    fn default() -> Self {
        Self {
            send_text: true,
            mms: false,
            scheduling: false,
            validity_period: None,
            webhook_url_override: false,
            inbound: false,
            delivery_receipts: false,
            sender_types: vec![SenderType::LongCode, SenderType::TollFree],
            native_idempotency: false,
        }
    }
}

/// How complete an adapter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SupportStatus {
    /// Fully mapped to the provider's documentation.
    Supported,
    /// Works, with gaps explained in the notes.
    Partial,
}

/// An adapter's support level and its notes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Support {
    /// Supported or partial.
    pub status: SupportStatus,
    /// Why it is partial, or anything a user should know.
    pub notes: Vec<String>,
}

/// Everything the client needs to know about an adapter besides `send`.
#[derive(Clone)]
pub struct AdapterInfo {
    /// Stable lowercase name, unique within a client (`^[a-z][a-z0-9-]*$`).
    pub name: String,
    /// What it can send.
    pub capabilities: Capabilities,
    /// Support level and notes.
    pub support: Support,
    /// The sender used when a message has none.
    pub default_from: Option<Sender>,
    /// The provider options it accepts; without a spec, any entry for it is refused.
    pub provider_options: Option<&'static OptionsSpec>,
    /// Where it sends (`scheme://host[:port]`, never credentials), when it can say. Each
    /// attempt records it, and a keyed send never replays a result recorded against another
    /// endpoint (a message "sent" to an emulator is not a message sent). The built-in adapters
    /// set it from their base URL; `None` opts out of the check.
    pub endpoint: Option<String>,
}

impl AdapterInfo {
    /// Info for a supported adapter with no default sender and no options.
    #[must_use]
    pub fn new(name: impl Into<String>, capabilities: Capabilities) -> Self {
        Self {
            name: name.into(),
            capabilities,
            support: Support { status: SupportStatus::Supported, notes: Vec::new() },
            default_from: None,
            provider_options: None,
            endpoint: None,
        }
    }

    /// Sets the default sender.
    #[must_use]
    pub fn default_from(mut self, sender: impl Into<Sender>) -> Self {
        self.default_from = Some(sender.into());
        self
    }

    /// Sets the support level.
    #[must_use]
    pub fn support(mut self, support: Support) -> Self {
        self.support = support;
        self
    }

    /// Sets the provider options spec.
    #[must_use]
    pub fn provider_options(mut self, spec: &'static OptionsSpec) -> Self {
        self.provider_options = Some(spec);
        self
    }

    /// Sets the endpoint the adapter sends to (see [`AdapterInfo::endpoint`]).
    #[must_use]
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }
}

impl fmt::Debug for AdapterInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdapterInfo")
            .field("name", &self.name)
            .field("capabilities", &self.capabilities)
            .field("support", &self.support)
            .field("default_from", &self.default_from)
            .field("provider_options", &self.provider_options.is_some())
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t066_failover_eligibility_by_category() {
        for c in [Category::Auth, Category::RateLimited, Category::Sender, Category::Account, Category::Unreachable] {
            assert!(c.allows_failover(), "{c}");
        }
        for c in [Category::Recipient, Category::Compliance, Category::Request] {
            assert!(!c.allows_failover(), "{c}");
        }
    }

    fn _obj_safe(_: &dyn DynAdapter) {}
}
