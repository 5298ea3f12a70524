//! The one error type of building a client and sending, and the provider details it carries.
//!
//! Ask the error what you need to decide:
//! - [`Error::next_step`] says what to do: retry later, alert an operator, fix or drop the
//!   message, never resend under this key, or reconcile (the table is on [`NextStep`]);
//!   [`Error::is_transient`] is its short form, whether the same send could succeed later;
//! - [`Error::outcome`] says what became of the message: not attempted, rejected, or unknown;
//! - [`Error::is_retry_safe`] says whether sending the same message again could text the
//!   customer twice (false only for an unknown outcome and a key conflict);
//! - [`Error::kind`] says exactly what happened.
//!
//! ```
//! # async fn example(client: sms_sdk::Client, message: sms_sdk::Message) {
//! use sms_sdk::NextStep;
//!
//! match client.send(&message).await {
//!     Ok(receipt) => println!("accepted as {}", receipt.provider_id),
//!     Err(e) => match e.next_step() {
//!         NextStep::RetryLater => println!("retry later with the same key: {e}"),
//!         NextStep::Reconcile => println!("may have been sent: reconcile before anything else: {e}"),
//!         NextStep::AlertOperator => println!("fix the account or the configuration: {e}"),
//!         _ => println!("will be refused again: drop or fix the message: {e}"),
//!     },
//! }
//! # }
//! ```

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod advice;

pub use self::advice::{NextStep, SendOutcome};
use crate::BoxError;
use crate::attempt::millis_opt;
pub use crate::attempt::{Attempt, AttemptOutcome};
use crate::issue::{Field, Issue, IssueCode};
pub use crate::outcome::ProviderError;
use crate::outcome::{Category, Rejection, UnknownReason};

type SharedError = Arc<dyn StdError + Send + Sync>;

/// What went wrong. Each kind has the reference's machine-readable code ([`Error::code`]).
///
/// Whether a retry could succeed, and what to do instead, is one table: [`NextStep`]
/// ([`Error::next_step`]). In short: rate limits, unreachable providers, store failures, keys in
/// progress, cancellations and the client's queue limits pass (retry later, same key); auth,
/// sender, account and configuration problems need an operator; a refused recipient, message
/// or policy is refused again; a key conflict is never resent; an unknown outcome is reconciled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bad client or adapter configuration (`configuration`).
    Configuration,
    /// `to` is not E.164 (`invalid_recipient`).
    InvalidRecipient,
    /// The sender is missing or malformed (`invalid_sender`).
    InvalidSender,
    /// A field has a bad value (`invalid_message`).
    InvalidMessage {
        /// The field.
        field: Field,
    },
    /// The primary adapter cannot send a field, sender type or option (`unsupported_field`).
    Unsupported {
        /// The field.
        field: Field,
    },
    /// `before_send` refused the send (`policy_rejected`).
    PolicyRejected,
    /// One provider proved it did not create the message (`provider_rejected`, `provider_auth`,
    /// `provider_rate_limited`, or `provider_unreachable` when the request never left the
    /// machine).
    Rejected(Category),
    /// Two or more providers rejected the message (`all_providers_rejected`).
    AllRejected,
    /// The message may have been sent (`handoff_unknown`). Never resend automatically.
    Unknown(UnknownReason),
    /// Cancelled before any request, or during a rate-limit wait (`aborted`).
    Aborted,
    /// The send waited for a limit of this client (the adapter's requests in flight or its rate
    /// limits) longer than its queue timeout, and gave up before the request it waited for (`queue_timeout`).
    QueueTimeout(Limit),
    /// The idempotency key's record is of another message, or was made against another endpoint
    /// (`idempotency_conflict`); which one, [`Conflict`] says.
    IdempotencyConflict(Conflict),
    /// Another send holds the idempotency key right now (`idempotency_in_progress`).
    IdempotencyInProgress,
    /// The idempotency store failed; nothing was sent (`store`).
    Store,
    /// `before_send` returned an error; nothing was sent (`before_send_failed`).
    BeforeSend,
}

impl ErrorKind {
    /// The reference's machine-readable code.
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            Self::Configuration => "configuration",
            Self::InvalidRecipient => "invalid_recipient",
            Self::InvalidSender => "invalid_sender",
            Self::InvalidMessage { .. } => "invalid_message",
            Self::Unsupported { .. } => "unsupported_field",
            Self::PolicyRejected => "policy_rejected",
            Self::Rejected(Category::Auth) => "provider_auth",
            Self::Rejected(Category::RateLimited) => "provider_rate_limited",
            Self::Rejected(Category::Unreachable) => "provider_unreachable",
            Self::Rejected(
                Category::Recipient | Category::Sender | Category::Account | Category::Compliance | Category::Request,
            ) => "provider_rejected",
            Self::AllRejected => "all_providers_rejected",
            Self::Unknown(_) => "handoff_unknown",
            Self::Aborted => "aborted",
            Self::QueueTimeout(_) => "queue_timeout",
            Self::IdempotencyConflict(_) => "idempotency_conflict",
            Self::IdempotencyInProgress => "idempotency_in_progress",
            Self::Store => "store",
            Self::BeforeSend => "before_send_failed",
        }
    }

    /// False only when a retry could duplicate the message (`Unknown`) or the key names another
    /// message (`IdempotencyConflict`).
    #[must_use]
    pub const fn is_retry_safe(self) -> bool {
        match self {
            Self::Unknown(_) | Self::IdempotencyConflict(_) => false,
            Self::Configuration
            | Self::InvalidRecipient
            | Self::InvalidSender
            | Self::InvalidMessage { .. }
            | Self::Unsupported { .. }
            | Self::PolicyRejected
            | Self::Rejected(_)
            | Self::AllRejected
            | Self::Aborted
            | Self::QueueTimeout(_)
            | Self::IdempotencyInProgress
            | Self::Store
            | Self::BeforeSend => true,
        }
    }
}

/// Why an idempotency key's record cannot be replayed for this send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Conflict {
    /// The key was used for a different message (another recipient, body, sender or options):
    /// a bug in how the caller makes its keys (`other_message`).
    OtherMessage,
    /// The key's result was recorded against another provider endpoint than any this client
    /// sends to (another account, region or base URL, the emulator and production sharing one
    /// store): replaying it would report a message this endpoint never saw (`other_endpoint`).
    OtherEndpoint,
}

impl Conflict {
    /// `other_message` or `other_endpoint`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OtherMessage => "other_message",
            Self::OtherEndpoint => "other_endpoint",
        }
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A limit of the client that a send waits for before a request (see
/// [`ClientBuilder::max_in_flight`](crate::ClientBuilder::max_in_flight) and
/// [`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Limit {
    /// The adapter's limit on requests in flight (`in_flight`).
    InFlight,
    /// The adapter's rate limit, in process or shared (`rate`).
    Rate,
    /// The adapter's rate limit per sender, in process or shared (`sender_rate`).
    SenderRate,
}

impl Limit {
    /// The limit's name in logs and records.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InFlight => "in_flight",
            Self::Rate => "rate",
            Self::SenderRate => "sender_rate",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of building a client or sending a message.
///
/// Opaque: ask [`Error::kind`], [`Error::is_retry_safe`], [`Error::attempts`] and friends.
/// `Display` is the reference's message (numbers masked); `Serialize` gives the log form
/// `{code, message, retry_safe, attempts, provider?, …}`.
#[derive(Clone)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    kind: ErrorKind,
    message: String,
    attempts: Vec<Attempt>,
    provider: Option<ProviderError>,
    provider_name: Option<String>,
    retry_after: Option<Duration>,
    rejections: Vec<Error>,
    idempotency_key: Option<String>,
    policy_reason: Option<String>,
    policy_category: Option<Category>,
    source: Option<SharedError>,
}

impl Error {
    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// The reference's machine-readable code (`provider_rejected`, `handoff_unknown`, …).
    #[must_use]
    pub fn code(&self) -> &'static str {
        self.inner.kind.code()
    }

    /// True when nothing was accepted, so sending the same message again cannot duplicate it
    /// (it may still fail again). False for an unknown outcome and an idempotency conflict.
    #[must_use]
    pub fn is_retry_safe(&self) -> bool {
        self.inner.kind.is_retry_safe()
    }

    /// Every provider request of the send, oldest first; empty when nothing was sent.
    #[must_use]
    pub fn attempts(&self) -> &[Attempt] {
        &self.inner.attempts
    }

    /// What the provider said (redacted), for a rejection or an unknown outcome with a response.
    #[must_use]
    pub fn provider_error(&self) -> Option<&ProviderError> {
        self.inner.provider.as_ref()
    }

    /// The provider or adapter concerned: the rejecting provider, the adapter whose outcome is
    /// unknown, or the adapter an invalid sender or unsupported field was found for.
    #[must_use]
    pub fn provider_name(&self) -> Option<&str> {
        self.inner.provider_name.as_deref()
    }

    /// The provider's `Retry-After` of a rate-limit rejection.
    #[must_use]
    pub fn retry_after(&self) -> Option<Duration> {
        self.inner.retry_after
    }

    /// The rejection category, for a single provider rejection, or for a `before_send` policy
    /// that refused in a category ([`PolicyDecision::reject_in`](crate::hooks::PolicyDecision::reject_in);
    /// the suppression policy refuses as `Compliance`).
    #[must_use]
    pub fn category(&self) -> Option<Category> {
        if let ErrorKind::Rejected(category) = self.inner.kind {
            return Some(category);
        }
        if self.inner.kind == ErrorKind::PolicyRejected { self.inner.policy_category } else { None }
    }

    /// Whether another provider might accept what this one rejected.
    #[must_use]
    pub fn allows_failover(&self) -> bool {
        self.category().is_some_and(Category::allows_failover)
    }

    /// The rejections, one per attempted adapter in order, of an `AllRejected` error.
    #[must_use]
    pub fn rejections(&self) -> &[Error] {
        &self.inner.rejections
    }

    /// The idempotency key of a conflict or in-progress error.
    #[must_use]
    pub fn idempotency_key(&self) -> Option<&str> {
        self.inner.idempotency_key.as_deref()
    }

    /// The reason `before_send` gave when it rejected. Never part of `Display`, `Debug` or the
    /// serialized form.
    #[must_use]
    pub fn policy_reason(&self) -> Option<&str> {
        self.inner.policy_reason.as_deref()
    }

    /// The log form of this error.
    #[must_use]
    pub fn to_record(&self) -> ErrorRecord {
        let kind = self.inner.kind;
        let category = self.category();
        let reason = if let ErrorKind::Unknown(reason) = kind { Some(reason) } else { None };
        let limit = if let ErrorKind::QueueTimeout(limit) = kind { Some(limit) } else { None };
        let conflict = if let ErrorKind::IdempotencyConflict(conflict) = kind { Some(conflict) } else { None };
        let field = if let ErrorKind::InvalidMessage { field } | ErrorKind::Unsupported { field } = kind {
            Some(field)
        } else {
            None
        };
        ErrorRecord {
            code: self.code().to_owned(),
            message: self.inner.message.clone(),
            retry_safe: self.is_retry_safe(),
            attempts: self.inner.attempts.clone(),
            provider: self.inner.provider.clone(),
            category,
            reason,
            limit,
            conflict,
            field,
            retry_after: self.inner.retry_after,
            errors: self.inner.rejections.iter().map(Error::to_record).collect(),
        }
    }
}

/// The serialized form of an [`Error`]: what logs, the command's JSON and idempotency records
/// hold. It never carries a source, a policy reason, a body or a full number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ErrorRecord {
    /// The machine-readable code.
    pub code: String,
    /// The message.
    pub message: String,
    /// Whether a resend is safe.
    pub retry_safe: bool,
    /// Every attempt.
    pub attempts: Vec<Attempt>,
    /// The provider's details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderError>,
    /// The rejection category.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    /// The unknown-outcome reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<UnknownReason>,
    /// The limit a `queue_timeout` waited for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// Why an `idempotency_conflict` cannot replay the key's record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<Conflict>,
    /// The invalid or unsupported field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<Field>,
    /// The provider's `Retry-After`.
    #[serde(default, rename = "retry_after_ms", skip_serializing_if = "Option::is_none", with = "millis_opt")]
    pub retry_after: Option<Duration>,
    /// The rejections of an `all_providers_rejected` error.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorRecord>,
}

impl Serialize for Error {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_record().serialize(serializer)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.inner.kind).field("message", &self.inner.message);
        if !self.inner.attempts.is_empty() {
            d.field("attempts", &self.inner.attempts);
        }
        if let Some(provider) = &self.inner.provider {
            d.field("provider", provider);
        }
        if !self.inner.rejections.is_empty() {
            d.field("rejections", &self.inner.rejections);
        }
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

/// The typed error `send()` raises for a validation issue.
impl From<Issue> for Error {
    fn from(issue: Issue) -> Self {
        let provider = issue.provider.as_deref();
        match issue.code {
            IssueCode::InvalidRecipient => Self::invalid_recipient(issue.message),
            IssueCode::InvalidSender | IssueCode::MissingSender => Self::invalid_sender(issue.message, provider),
            IssueCode::EmptyBody | IssueCode::InvalidField => Self::invalid_message(issue.field, issue.message),
            IssueCode::UnsupportedField => Self::unsupported(issue.field, issue.message, provider),
        }
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner.source.as_ref().map(|s| &**s as &(dyn StdError + 'static))
    }
}

/// `key` in double quotes for a message, control characters escaped (a key is the caller's text,
/// at most 255 bytes, never a secret).
fn quoted(key: &str) -> String {
    format!("{key:?}")
}

/// `reason` with its first `_` turned into a space, as the reference words it.
fn spaced(reason: UnknownReason) -> String {
    reason.as_str().replacen('_', " ", 1)
}

// Constructors, in one place.
impl Error {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                message: message.into(),
                attempts: Vec::new(),
                provider: None,
                provider_name: None,
                retry_after: None,
                rejections: Vec::new(),
                idempotency_key: None,
                policy_reason: None,
                policy_category: None,
                source: None,
            }),
        }
    }

    fn with_provider_name(mut self, name: Option<&str>) -> Self {
        self.inner.provider_name = name.map(str::to_owned);
        self
    }

    pub(crate) fn with_attempts(mut self, attempts: Vec<Attempt>) -> Self {
        self.inner.attempts = attempts;
        self
    }

    pub(crate) fn with_source(mut self, source: SharedError) -> Self {
        self.inner.source = Some(source);
        self
    }

    pub(crate) fn configuration(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Configuration, message)
    }

    pub(crate) fn invalid_recipient(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidRecipient, message)
    }

    pub(crate) fn invalid_sender(message: impl Into<String>, provider: Option<&str>) -> Self {
        Self::new(ErrorKind::InvalidSender, message).with_provider_name(provider)
    }

    pub(crate) fn invalid_message(field: Field, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidMessage { field }, message)
    }

    pub(crate) fn unsupported(field: Field, message: impl Into<String>, provider: Option<&str>) -> Self {
        Self::new(ErrorKind::Unsupported { field }, message).with_provider_name(Some(provider.unwrap_or("unknown")))
    }

    pub(crate) fn policy_rejected(reason: Option<String>) -> Self {
        let mut e = Self::new(ErrorKind::PolicyRejected, "Send blocked by the before_send policy.");
        e.inner.policy_reason = reason;
        e
    }

    /// A `before_send` refusal in `category` (a suppressed recipient is `Compliance`).
    pub(crate) fn policy_refused(category: Category, reason: String) -> Self {
        let message = format!("Send blocked by the before_send policy ({category}); nothing was sent.");
        let mut e = Self::new(ErrorKind::PolicyRejected, message);
        e.inner.policy_reason = Some(reason);
        e.inner.policy_category = Some(category);
        e
    }

    pub(crate) fn before_send(source: BoxError) -> Self {
        Self::new(ErrorKind::BeforeSend, "before_send failed; nothing was sent.").with_source(Arc::from(source))
    }

    pub(crate) fn rejected(rejection: &Rejection, attempts: Vec<Attempt>) -> Self {
        let details = &rejection.details;
        let p = details.provider();
        let detail = details.text().map(|m| format!(": {m}")).unwrap_or_default();
        let message = match rejection.category {
            Category::Auth => format!("{p} rejected the credentials{detail}"),
            Category::RateLimited => format!("{p} rate-limited the request; the message was not created{detail}"),
            Category::Unreachable => format!("{p} could not be reached; nothing was sent{detail}"),
            c @ (Category::Recipient
            | Category::Sender
            | Category::Account
            | Category::Compliance
            | Category::Request) => {
                format!("{p} rejected the message ({c}){detail}")
            }
        };
        let mut e = Self::new(ErrorKind::Rejected(rejection.category), message)
            .with_provider_name(Some(p))
            .with_attempts(attempts);
        e.inner.provider = Some(details.clone());
        e.inner.retry_after = rejection.retry_after;
        e
    }

    pub(crate) fn all_rejected(rejections: Vec<Error>, attempts: Vec<Attempt>) -> Self {
        let names: Vec<&str> = rejections.iter().filter_map(Error::provider_name).collect();
        let message = format!("Every attempted provider rejected the message ({}).", names.join(", "));
        let mut e = Self::new(ErrorKind::AllRejected, message).with_attempts(attempts);
        e.inner.rejections = rejections;
        e
    }

    pub(crate) fn unknown(
        reason: UnknownReason,
        adapter: &str,
        details: Option<ProviderError>,
        cause: Option<SharedError>,
        attempts: Vec<Attempt>,
    ) -> Self {
        let message = format!(
            "The outcome of the {adapter} request is unknown ({}). The message may have been accepted. \
             Do not resend automatically; reconcile with the provider first.",
            spaced(reason)
        );
        let mut e =
            Self::new(ErrorKind::Unknown(reason), message).with_provider_name(Some(adapter)).with_attempts(attempts);
        e.inner.provider = details;
        e.inner.source = cause;
        e
    }

    pub(crate) fn aborted(attempts: Vec<Attempt>) -> Self {
        Self::new(ErrorKind::Aborted, "The send was aborted before any provider accepted the message.")
            .with_attempts(attempts)
    }

    /// `adapter`'s `limit` (`what` the send waited for) kept the send waiting for all of its
    /// queue budget, `queue_timeout`.
    pub(crate) fn queue_timeout(limit: Limit, adapter: &str, what: &str, queue_timeout: Duration) -> Self {
        let message = format!(
            "The send waited {} s for {what}, its whole queue timeout, and gave up; the message was not sent.",
            queue_timeout.as_secs_f64()
        );
        Self::new(ErrorKind::QueueTimeout(limit), message).with_provider_name(Some(adapter))
    }

    /// An unknown outcome found in the idempotency record or the in-process map rather than
    /// in a request of this send.
    pub(crate) fn unknown_replay(reason: UnknownReason, attempts: Vec<Attempt>) -> Self {
        let message = if reason == UnknownReason::StaleReservation {
            "An earlier send with this idempotency key never finished; its outcome is unknown. \
                 Do not resend automatically; reconcile with the provider first."
        } else if reason == UnknownReason::Aborted {
            "The send this call was waiting on was dropped while in flight; its outcome is unknown. \
                 Do not resend automatically; reconcile with the provider first."
        } else {
            "An earlier send with this idempotency key had an unknown outcome. \
                 Do not resend automatically; reconcile with the provider first."
        };
        Self::new(ErrorKind::Unknown(reason), message).with_attempts(attempts)
    }

    pub(crate) fn idempotency_conflict(key: &str) -> Self {
        let message =
            format!("The idempotency key {} was already used for a different message; nothing was sent.", quoted(key));
        let mut e = Self::new(ErrorKind::IdempotencyConflict(Conflict::OtherMessage), message);
        e.inner.idempotency_key = Some(key.to_owned());
        e
    }

    /// The key's record was made against another endpoint than any this client sends to.
    pub(crate) fn endpoint_conflict(key: &str, recorded: &str, current: &[&str]) -> Self {
        let mut endpoints: Vec<&str> = Vec::with_capacity(current.len());
        for endpoint in current {
            if !endpoints.contains(endpoint) {
                endpoints.push(endpoint);
            }
        }
        let message = format!(
            "The result of idempotency key {} was recorded against {recorded}, but this client sends to {}; \
             refusing to replay it.",
            quoted(key),
            endpoints.join(", ")
        );
        let mut e = Self::new(ErrorKind::IdempotencyConflict(Conflict::OtherEndpoint), message);
        e.inner.idempotency_key = Some(key.to_owned());
        e
    }

    pub(crate) fn idempotency_in_progress(key: &str) -> Self {
        let mut e =
            Self::new(ErrorKind::IdempotencyInProgress, "Another send with this idempotency key is still in progress.");
        e.inner.idempotency_key = Some(key.to_owned());
        e
    }

    /// A store failure; the message carries the store's reason (which names the store without
    /// credentials).
    pub(crate) fn store(source: BoxError) -> Self {
        let message = format!("The idempotency store failed; nothing was sent: {source}");
        Self::new(ErrorKind::Store, message).with_source(Arc::from(source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _assert_impls() {
        fn send_sync<T: Send + Sync + 'static>() {}
        send_sync::<Error>();
    }

    #[test]
    fn retry_safety_and_codes_follow_the_table() {
        let cases = [
            (ErrorKind::Configuration, "configuration", true),
            (ErrorKind::InvalidRecipient, "invalid_recipient", true),
            (ErrorKind::InvalidSender, "invalid_sender", true),
            (ErrorKind::InvalidMessage { field: Field::Body }, "invalid_message", true),
            (ErrorKind::Unsupported { field: Field::SendAt }, "unsupported_field", true),
            (ErrorKind::PolicyRejected, "policy_rejected", true),
            (ErrorKind::Rejected(Category::Recipient), "provider_rejected", true),
            (ErrorKind::Rejected(Category::Auth), "provider_auth", true),
            (ErrorKind::Rejected(Category::RateLimited), "provider_rate_limited", true),
            (ErrorKind::Rejected(Category::Unreachable), "provider_unreachable", true),
            (ErrorKind::AllRejected, "all_providers_rejected", true),
            (ErrorKind::Unknown(UnknownReason::Timeout), "handoff_unknown", false),
            (ErrorKind::Aborted, "aborted", true),
            (ErrorKind::QueueTimeout(Limit::InFlight), "queue_timeout", true),
            (ErrorKind::IdempotencyConflict(Conflict::OtherMessage), "idempotency_conflict", false),
            (ErrorKind::IdempotencyConflict(Conflict::OtherEndpoint), "idempotency_conflict", false),
            (ErrorKind::IdempotencyInProgress, "idempotency_in_progress", true),
            (ErrorKind::Store, "store", true),
            (ErrorKind::BeforeSend, "before_send_failed", true),
        ];
        for (kind, code, safe) in cases {
            assert_eq!(kind.code(), code);
            assert_eq!(kind.is_retry_safe(), safe, "{kind:?}");
        }
    }

    #[test]
    fn t025_provider_details_are_redacted() {
        let details = ProviderError::new("twilio").message("bad +447700900123");
        assert_eq!(details.text(), Some("bad +4*********23"));
    }
}
