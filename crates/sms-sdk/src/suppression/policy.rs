//! The ready `before_send` policy: refuse a send to a suppressed recipient.

use std::fmt;
use std::sync::Arc;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::hooks::{BeforeSendContext, PolicyDecision};
use crate::message::Message;
use crate::outcome::Category;
use crate::store::StoreError;
use crate::store::suppression::{Scope, SuppressionStore};
use crate::{PhoneNumber, Sender};
use futures_util::future::BoxFuture;

/// The most characters of an override's reason that are logged.
const MAX_OVERRIDE_REASON: usize = 200;

/// Refuses a send to a recipient the suppression list has opted out, in the account or in the
/// message's sender or messaging service scope: before any request, as `PolicyRejected` with
/// category `Compliance` (retry-safe, never failed over). A message sent with
/// [`SendOptions::policy_override`](crate::SendOptions::policy_override) goes out all the same,
/// and a warning is logged (masked recipient, scope, the override's reason).
///
/// A store failure stops the send too (`before_send_failed`, nothing sent): the policy never
/// guesses that a recipient is not suppressed. Cheap to clone.
#[derive(Clone)]
pub struct SuppressionPolicy {
    store: Arc<dyn SuppressionStore>,
    default_sender: Option<Scope>,
}

impl fmt::Debug for SuppressionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SuppressionPolicy").field("default_sender", &self.default_sender).finish_non_exhaustive()
    }
}

impl SuppressionPolicy {
    /// A policy over `store` (an `Arc<dyn SuppressionStore>` from
    /// [`open`](crate::store::suppression::open) fits too).
    pub fn new(store: impl SuppressionStore) -> Self {
        Self { store: Arc::new(store), default_sender: None }
    }

    /// The sender the adapters use when a message names none, so that its sender-scoped
    /// opt-outs apply to such messages too.
    #[must_use]
    pub fn default_sender(mut self, sender: impl Into<Sender>) -> Self {
        self.default_sender = Scope::of_sender(&sender.into());
        self
    }

    /// The scopes checked for `message`: the account, and its sender or messaging service (or
    /// the default sender).
    #[must_use]
    pub fn scopes(&self, message: &Message) -> Vec<Scope> {
        let sender = message.from.as_ref().and_then(Scope::of_sender).or_else(|| self.default_sender.clone());
        std::iter::once(Scope::Account).chain(sender).collect()
    }

    /// The decision for one send.
    ///
    /// # Errors
    /// A [`StoreError`] when the list cannot be read (the send then stops, nothing sent).
    pub async fn decide(&self, cx: &BeforeSendContext) -> Result<PolicyDecision, StoreError> {
        // The client validated the recipient before `before_send`.
        let Ok(recipient) = PhoneNumber::parse(&cx.message.to) else { return Ok(PolicyDecision::Allow) };
        let Some(entry) = self.store.check(&recipient, &self.scopes(&cx.message)).await? else {
            return Ok(PolicyDecision::Allow);
        };
        if let Some(reason) = &cx.policy_override {
            let reason: String = reason.chars().take(MAX_OVERRIDE_REASON).collect();
            tracing::warn!(
                id = %cx.id, to = %recipient, scope = %entry.scope, override_reason = %reason,
                "sending to a suppressed recipient: the caller overrode the suppression policy"
            );
            return Ok(PolicyDecision::Allow);
        }
        let at = OffsetDateTime::from(entry.at).format(&Rfc3339).unwrap_or_default();
        let reason = format!("{recipient} opted out ({}, {}) at {at}", entry.scope, entry.reason);
        Ok(PolicyDecision::reject_in(Category::Compliance, reason))
    }
}

/// The policy is a `before_send` policy: `.policy(SuppressionPolicy::new(list))`. To combine
/// it with a policy of your own, call [`SuppressionPolicy::decide`] from yours.
impl crate::hooks::BeforeSend for SuppressionPolicy {
    fn decide(&self, cx: BeforeSendContext) -> BoxFuture<'static, Result<PolicyDecision, crate::BoxError>> {
        let policy = self.clone();
        Box::pin(async move { Ok(policy.decide(&cx).await?) })
    }
}
