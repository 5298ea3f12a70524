//! The `before_send` policy gate and the three observation hooks.
//!
//! Hook events are safe to log: the recipient is masked, and no body, option or credential is
//! ever in them. A hook that panics is caught and ignored; it never changes the outcome.
//!
//! ```
//! use sms_sdk::hooks::PolicyDecision;
//! use sms_sdk::testing::MemoryAdapter;
//! use sms_sdk::{Client, ErrorKind, Message};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let client = Client::builder()
//!     .adapter(MemoryAdapter::new())
//!     .before_send(|cx| async move {
//!         let quiet_hours = cx.segments > 3;
//!         Ok::<_, std::convert::Infallible>(if quiet_hours { PolicyDecision::reject("too long") } else { PolicyDecision::Allow })
//!     })
//!     .on_accepted(|event| println!("sent {} to {}", event.base.id, event.base.to))
//!     .build()?;
//! let err = client.send(&Message::new("+14155550123", "x".repeat(1000))).await.unwrap_err();
//! assert_eq!(err.kind(), ErrorKind::PolicyRejected);
//! # Ok::<(), sms_sdk::Error>(()) }).unwrap();
//! ```

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde::Serialize;

use crate::encoding::Encoding;
use crate::error::Attempt;
use crate::message::Message;
use crate::outcome::Category;
use crate::{BoxError, BoxFuture};

/// A `before_send` policy (see [`ClientBuilder::before_send`](crate::ClientBuilder::before_send)):
/// any async closure `Fn(BeforeSendContext) -> impl Future<Output = Result<PolicyDecision, E>>`,
/// or a ready policy such as [`SuppressionPolicy`](crate::suppression::SuppressionPolicy).
pub trait BeforeSend: Send + Sync + 'static {
    /// Decides one send; an `Err` stops it (`ErrorKind::BeforeSend`, nothing sent).
    fn decide(&self, cx: BeforeSendContext) -> BoxFuture<'static, Result<PolicyDecision, BoxError>>;
}

impl<F, Fut, E> BeforeSend for F
where
    F: Fn(BeforeSendContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<PolicyDecision, E>> + Send + 'static,
    E: Into<BoxError> + 'static,
{
    fn decide(&self, cx: BeforeSendContext) -> BoxFuture<'static, Result<PolicyDecision, BoxError>> {
        let decision = self(cx);
        Box::pin(async move { decision.await.map_err(Into::into) })
    }
}

/// What `before_send` decides.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyDecision {
    /// Go on and send.
    Allow,
    /// Refuse: nothing is sent, no failover, and the caller gets `PolicyRejected`. The reason
    /// is kept only in [`Error::policy_reason`](crate::Error::policy_reason); a category, when
    /// given, is the error's [`category`](crate::Error::category) (the
    /// [suppression policy](crate::suppression) refuses an opted-out recipient as `Compliance`).
    Reject {
        /// Why (never logged or serialized).
        reason: String,
        /// The rejection category, if any (`Compliance` for an opted-out recipient).
        category: Option<Category>,
    },
}

impl PolicyDecision {
    /// A rejection with `reason`, in no category.
    #[must_use]
    pub fn reject(reason: impl Into<String>) -> Self {
        Self::Reject { reason: reason.into(), category: None }
    }

    /// A rejection in `category` with `reason`.
    #[must_use]
    pub fn reject_in(category: Category, reason: impl Into<String>) -> Self {
        Self::Reject { reason: reason.into(), category: Some(category) }
    }
}

impl fmt::Debug for PolicyDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Allow => "Allow",
            Self::Reject { .. } => "Reject",
        })
    }
}

/// What `before_send` sees: once per logical send, after validation and the idempotency step.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BeforeSendContext {
    /// The send's id (`sms_…`).
    pub id: String,
    /// The message as the caller passed it, options included.
    pub message: Message,
    /// The body's encoding.
    pub encoding: Encoding,
    /// The body's estimated segments.
    pub segments: u32,
    /// The caller's explicit override of the policy for this one message, with its reason
    /// ([`SendOptions::policy_override`](crate::SendOptions::policy_override)): a ready policy
    /// (such as the suppression policy) lets the message through and logs that it did.
    pub policy_override: Option<String>,
}

/// Fields every hook event has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HookBase {
    /// The send's id.
    pub id: String,
    /// The recipient, masked (`+1********23`).
    pub to: String,
    /// The body's encoding.
    pub encoding: Encoding,
    /// The body's estimated segments.
    pub segments: u32,
    /// The message's idempotency key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

/// After every provider request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AttemptEvent {
    /// Common fields.
    #[serde(flatten)]
    pub base: HookBase,
    /// The request.
    pub attempt: Attempt,
}

/// Once, when a send is accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AcceptedEvent {
    /// Common fields.
    #[serde(flatten)]
    pub base: HookBase,
    /// The adapter that accepted.
    pub provider: String,
    /// The provider's message id.
    pub provider_id: String,
    /// Every request.
    pub attempts: Vec<Attempt>,
}

/// Once, when a send ends in an error (not for validation errors, replays, idempotency
/// conflicts or in-progress errors, or a `before_send` that returned an error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FailureEvent {
    /// Common fields.
    #[serde(flatten)]
    pub base: HookBase,
    /// The error's code.
    pub error_code: &'static str,
    /// Whether a resend is safe.
    pub retry_safe: bool,
    /// Every request.
    pub attempts: Vec<Attempt>,
}

type Hook<E> = Option<Arc<dyn Fn(&E) + Send + Sync>>;

/// The configured hooks, one per builder method (`on_attempt`, `on_accepted`, `on_failure`).
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) attempt: Hook<AttemptEvent>,
    pub(crate) accepted: Hook<AcceptedEvent>,
    pub(crate) failure: Hook<FailureEvent>,
}

impl Hooks {
    /// Calls `hook` with `event`, swallowing a panic.
    pub(crate) fn fire<E>(hook: Option<&(dyn Fn(&E) + Send + Sync)>, event: impl FnOnce() -> E) {
        if let Some(hook) = hook {
            let event = event();
            if catch_unwind(AssertUnwindSafe(|| hook(&event))).is_err() {
                tracing::warn!("an sms-sdk hook panicked; the send goes on");
            }
        }
    }
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("on_attempt", &self.attempt.is_some())
            .field("on_accepted", &self.accepted.is_some())
            .field("on_failure", &self.failure.is_some())
            .finish()
    }
}
