//! The adapter contract: one provider integration reduces one request to one [`Outcome`].
//!
//! Adapters classify; the client decides. An adapter makes at most one request per
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
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::issue::Issue;
use crate::lookup::Lookup;
use crate::message::{OutboundMessage, Sender};
use crate::options::OptionsSpec;
pub use crate::outcome::{Accepted, Category, Delivery, Outcome, Rejection, Unknown, UnknownReason};
use futures_util::future::BoxFuture;

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

    /// How to read the adapter's messages back from its provider (to reconcile an unknown
    /// outcome), when its API can: the built-in adapters' lookups use the adapter's own
    /// transport and credentials. `None` by default.
    fn lookup(&self) -> Option<&dyn Lookup> {
        None
    }
}

/// Any adapter, boxed: for adapter lists chosen at run time (from configuration, say), where
/// each provider is a different type.
///
/// ```
/// use sms_sdk::adapter::AnyAdapter;
/// use sms_sdk::testing::MemoryAdapter;
/// use sms_sdk::{Client, Message};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let names = ["primary", "backup"]; // read from configuration
/// let adapters = names.iter().map(|name| AnyAdapter::new(MemoryAdapter::builder().name(*name).build()));
/// let client = Client::builder().adapters(adapters).build()?;
/// let receipt = client.send(&Message::new("+14155550123", "Hi")).await?;
/// assert_eq!(receipt.provider, "primary");
/// # Ok::<(), sms_sdk::Error>(()) }).unwrap();
/// ```
#[derive(Clone)]
pub struct AnyAdapter(pub(crate) Arc<dyn DynAdapter>);

impl AnyAdapter {
    /// Boxes `adapter`.
    #[must_use]
    pub fn new(adapter: impl Adapter) -> Self {
        Self(Arc::new(adapter))
    }
}

impl Adapter for AnyAdapter {
    fn info(&self) -> &AdapterInfo {
        self.0.info()
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        self.0.send(message, cx).await
    }

    fn validate(&self, message: &OutboundMessage) -> Vec<Issue> {
        self.0.validate(message)
    }

    fn lookup(&self) -> Option<&dyn Lookup> {
        self.0.lookup()
    }
}

impl fmt::Debug for AnyAdapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AnyAdapter").field(&self.0.info().name).finish()
    }
}

/// The object-safe form of [`Adapter`] the client stores, so adapters of different types can
/// share one failover chain.
pub(crate) trait DynAdapter: Send + Sync + 'static {
    fn info(&self) -> &AdapterInfo;
    fn send<'a>(&'a self, message: &'a OutboundMessage, cx: &'a SendContext) -> BoxFuture<'a, Outcome>;
    fn validate(&self, message: &OutboundMessage) -> Vec<Issue>;
    fn lookup(&self) -> Option<&dyn Lookup>;
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
    fn lookup(&self) -> Option<&dyn Lookup> {
        Adapter::lookup(self)
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

/// A kind of sender an adapter can send from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
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
#[non_exhaustive]
#[allow(clippy::struct_excessive_bools)] // independent yes/no capabilities, serialized as such
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
#[non_exhaustive]
pub enum SupportStatus {
    /// Fully mapped to the provider's documentation.
    Supported,
    /// Works, with gaps explained in the notes.
    Partial,
}

/// An adapter's support level and its notes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Support {
    /// Supported or partial.
    pub status: SupportStatus,
    /// Why it is partial, or anything a user should know.
    pub notes: Vec<String>,
}

/// Everything the client needs to know about an adapter besides `send`.
#[derive(Clone)]
#[non_exhaustive]
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
