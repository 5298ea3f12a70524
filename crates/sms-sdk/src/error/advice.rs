//! What a caller should do with a failed send: what became of the message ([`SendOutcome`]) and
//! the next step ([`NextStep`]), both read off the error's kind; the one table is on
//! [`NextStep`].

use serde::{Deserialize, Serialize};

use super::{Error, ErrorKind};
use crate::outcome::Category;

/// What became of the message of a failed send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SendOutcome {
    /// No provider request was made: the message was refused before any (validation, policy,
    /// idempotency, the store, a cancellation or a limit of the client).
    NotAttempted,
    /// A provider request was made and every provider that got one proved it did not create the
    /// message (a rejection, a rate limit, an unreachable provider).
    Rejected,
    /// The message may have been created: reconcile, never resend automatically.
    Unknown,
}

impl SendOutcome {
    /// `not_attempted`, `rejected` or `unknown`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NotAttempted => "not_attempted",
            Self::Rejected => "rejected",
            Self::Unknown => "unknown",
        }
    }
}

/// What to do after a failed send. Only [`NextStep::RetryLater`] means that the same message,
/// sent again as it is, could succeed ([`Error::is_transient`]).
///
/// | kind (category) | next step |
/// | --- | --- |
/// | `Rejected(RateLimited)`, `Rejected(Unreachable)`, `Store`, `IdempotencyInProgress`, `Aborted`, `QueueTimeout`, `BeforeSend` | `RetryLater` |
/// | `Rejected(Auth)`, `Rejected(Sender)`, `Rejected(Account)`, `Configuration` | `AlertOperator` |
/// | `Rejected(Recipient)`, `Rejected(Compliance)`, `Rejected(Request)`, `InvalidRecipient`, `InvalidSender`, `InvalidMessage`, `Unsupported`, `PolicyRejected` | `FixMessage` |
/// | `IdempotencyConflict` | `NeverResend` |
/// | `Unknown` | `Reconcile` |
/// | `AllRejected` | `RetryLater` if any provider's rejection was, else `AlertOperator` if any was, else `FixMessage` |
///
/// `BeforeSend` is the caller's own hook failing: unknown to the library, so treated as
/// transient; its [`source`](std::error::Error::source) says more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NextStep {
    /// Nothing was sent and the cause passes: send again later with the same idempotency key
    /// (after [`Error::retry_after`] when the provider gave one).
    RetryLater,
    /// Nothing was sent, and the same send fails again until an operator fixes the account, the
    /// sender or the configuration.
    AlertOperator,
    /// Nothing was sent, and the same message is refused again: fix it (the recipient, the
    /// sender, a field) or drop it.
    FixMessage,
    /// Nothing was sent: the idempotency key names another message, or its result was recorded
    /// against another endpoint. A bug in the caller's keys or its configuration; never resend
    /// this message under this key.
    NeverResend,
    /// The message may have been sent: reconcile with the provider before anything else, never
    /// resend automatically.
    Reconcile,
}

impl NextStep {
    /// `retry_later`, `alert_operator`, `fix_message`, `never_resend` or `reconcile`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::RetryLater => "retry_later",
            Self::AlertOperator => "alert_operator",
            Self::FixMessage => "fix_message",
            Self::NeverResend => "never_resend",
            Self::Reconcile => "reconcile",
        }
    }

    /// The next step after a provider's rejection in `category`.
    #[must_use]
    pub const fn of_category(category: Category) -> Self {
        match category {
            Category::RateLimited | Category::Unreachable => Self::RetryLater,
            Category::Auth | Category::Sender | Category::Account => Self::AlertOperator,
            Category::Recipient | Category::Compliance | Category::Request => Self::FixMessage,
        }
    }

    /// The next step after an error of `kind` alone; `None` for `AllRejected`, whose step is
    /// its parts'.
    #[must_use]
    pub const fn of_kind(kind: ErrorKind) -> Option<Self> {
        Some(match kind {
            ErrorKind::Rejected(category) => Self::of_category(category),
            ErrorKind::AllRejected => return None,
            ErrorKind::Store
            | ErrorKind::IdempotencyInProgress
            | ErrorKind::Aborted
            | ErrorKind::QueueTimeout(_)
            | ErrorKind::BeforeSend => Self::RetryLater,
            ErrorKind::Configuration => Self::AlertOperator,
            ErrorKind::InvalidRecipient
            | ErrorKind::InvalidSender
            | ErrorKind::InvalidMessage { .. }
            | ErrorKind::Unsupported { .. }
            | ErrorKind::PolicyRejected => Self::FixMessage,
            ErrorKind::IdempotencyConflict(_) => Self::NeverResend,
            ErrorKind::Unknown(_) => Self::Reconcile,
        })
    }

    /// The step of several providers' rejections together: retry if any could pass, else alert
    /// if any needs an operator, else fix the message.
    fn of_parts(parts: impl Iterator<Item = Self>) -> Self {
        parts.fold(Self::FixMessage, |step, part| match (step, part) {
            (Self::RetryLater, _) | (_, Self::RetryLater) => Self::RetryLater,
            (Self::AlertOperator, _) | (_, Self::AlertOperator) => Self::AlertOperator,
            _ => step,
        })
    }
}

impl std::fmt::Display for NextStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for SendOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// What became of the message: [`SendOutcome::Unknown`] for an unknown outcome,
    /// [`SendOutcome::Rejected`] when providers got a request and proved they did not create
    /// the message, [`SendOutcome::NotAttempted`] when no request was made.
    #[must_use]
    pub fn outcome(&self) -> SendOutcome {
        match self.kind() {
            ErrorKind::Unknown(_) => SendOutcome::Unknown,
            ErrorKind::Rejected(_) | ErrorKind::AllRejected => SendOutcome::Rejected,
            ErrorKind::Configuration
            | ErrorKind::InvalidRecipient
            | ErrorKind::InvalidSender
            | ErrorKind::InvalidMessage { .. }
            | ErrorKind::Unsupported { .. }
            | ErrorKind::PolicyRejected
            | ErrorKind::Aborted
            | ErrorKind::QueueTimeout(_)
            | ErrorKind::IdempotencyConflict(_)
            | ErrorKind::IdempotencyInProgress
            | ErrorKind::Store
            | ErrorKind::BeforeSend => {
                // A cancellation or a limit after a rate-limited request: that provider refused it.
                if self.attempts().is_empty() { SendOutcome::NotAttempted } else { SendOutcome::Rejected }
            }
        }
    }

    /// What to do next (see [`NextStep`] for the table).
    #[must_use]
    pub fn next_step(&self) -> NextStep {
        NextStep::of_kind(self.kind())
            .unwrap_or_else(|| NextStep::of_parts(self.rejections().iter().map(Error::next_step)))
    }

    /// True when sending the same message again, as it is, could succeed: a rate limit, an
    /// unreachable provider, a store failure, a key in progress, a cancellation, a limit of the
    /// client, or a failed `before_send` hook ([`NextStep::RetryLater`]). False for lasting
    /// refusals, for an unknown outcome (never retried) and for a key conflict.
    ///
    /// [`is_retry_safe`](Error::is_retry_safe) is the other question: whether a retry could
    /// duplicate the message.
    #[must_use]
    pub fn is_transient(&self) -> bool {
        self.next_step() == NextStep::RetryLater
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::attempt::{Attempt, AttemptOutcome};
    use crate::error::{Conflict, Limit};
    use crate::issue::Field;
    use crate::outcome::{ProviderError, Rejection, UnknownReason};

    fn rejection(category: Category) -> Error {
        let rejection = Rejection { category, retry_after: None, details: ProviderError::new("twilio") };
        Error::rejected(&rejection, vec![attempt(category)])
    }

    fn attempt(category: Category) -> Attempt {
        Attempt {
            provider: "twilio".into(),
            attempt: 1,
            outcome: AttemptOutcome::Rejected {
                category,
                http_status: Some(400),
                provider_code: None,
                retry_after: None,
            },
            duration: Duration::ZERO,
            endpoint: None,
        }
    }

    #[test]
    fn every_kind_has_the_step_of_the_table() {
        use NextStep::{AlertOperator, FixMessage, NeverResend, Reconcile, RetryLater};
        let field = Field::Body;
        let cases = [
            (ErrorKind::Rejected(Category::RateLimited), RetryLater),
            (ErrorKind::Rejected(Category::Unreachable), RetryLater),
            (ErrorKind::Store, RetryLater),
            (ErrorKind::IdempotencyInProgress, RetryLater),
            (ErrorKind::Aborted, RetryLater),
            (ErrorKind::QueueTimeout(Limit::Rate), RetryLater),
            (ErrorKind::BeforeSend, RetryLater),
            (ErrorKind::Rejected(Category::Auth), AlertOperator),
            (ErrorKind::Rejected(Category::Sender), AlertOperator),
            (ErrorKind::Rejected(Category::Account), AlertOperator),
            (ErrorKind::Configuration, AlertOperator),
            (ErrorKind::Rejected(Category::Recipient), FixMessage),
            (ErrorKind::Rejected(Category::Compliance), FixMessage),
            (ErrorKind::Rejected(Category::Request), FixMessage),
            (ErrorKind::InvalidRecipient, FixMessage),
            (ErrorKind::InvalidSender, FixMessage),
            (ErrorKind::InvalidMessage { field }, FixMessage),
            (ErrorKind::Unsupported { field }, FixMessage),
            (ErrorKind::PolicyRejected, FixMessage),
            (ErrorKind::IdempotencyConflict(Conflict::OtherMessage), NeverResend),
            (ErrorKind::IdempotencyConflict(Conflict::OtherEndpoint), NeverResend),
            (ErrorKind::Unknown(UnknownReason::Timeout), Reconcile),
            (ErrorKind::Unknown(UnknownReason::StaleReservation), Reconcile),
        ];
        for (kind, step) in cases {
            assert_eq!(NextStep::of_kind(kind), Some(step), "{kind:?}");
        }
        assert_eq!(NextStep::of_kind(ErrorKind::AllRejected), None);
    }

    #[test]
    fn all_rejected_takes_the_most_hopeful_step_of_its_parts() {
        let all = |parts: &[Category]| Error::all_rejected(parts.iter().map(|&c| rejection(c)).collect(), vec![]);
        let cases = [
            (&[Category::Recipient, Category::RateLimited][..], NextStep::RetryLater),
            (&[Category::Auth, Category::Unreachable][..], NextStep::RetryLater),
            (&[Category::Auth, Category::Recipient][..], NextStep::AlertOperator),
            (&[Category::Recipient, Category::Sender][..], NextStep::AlertOperator),
            (&[Category::Recipient, Category::Compliance][..], NextStep::FixMessage),
        ];
        for (parts, step) in cases {
            let error = all(parts);
            assert_eq!(error.next_step(), step, "{parts:?}");
            assert_eq!(error.is_transient(), step == NextStep::RetryLater, "{parts:?}");
            assert_eq!(error.outcome(), SendOutcome::Rejected);
        }
    }

    #[test]
    fn transient_is_retry_later_and_never_an_unknown_outcome() {
        assert!(rejection(Category::RateLimited).is_transient());
        assert!(!rejection(Category::Recipient).is_transient());
        assert!(rejection(Category::Recipient).is_retry_safe(), "safe to retry, yet pointless");
        let unknown = Error::unknown(UnknownReason::Timeout, "twilio", None, None, vec![]);
        assert!(!unknown.is_transient() && !unknown.is_retry_safe());
        assert_eq!(unknown.next_step(), NextStep::Reconcile);
    }

    #[test]
    fn the_outcome_says_whether_a_provider_got_a_request() {
        assert_eq!(Error::invalid_recipient("bad").outcome(), SendOutcome::NotAttempted);
        assert_eq!(Error::policy_rejected(None).outcome(), SendOutcome::NotAttempted);
        assert_eq!(Error::store("down".into()).outcome(), SendOutcome::NotAttempted);
        assert_eq!(Error::idempotency_conflict("k").outcome(), SendOutcome::NotAttempted);
        assert_eq!(Error::aborted(vec![]).outcome(), SendOutcome::NotAttempted);
        // Cancelled while waiting out a rate limit: the provider refused the one request made.
        assert_eq!(Error::aborted(vec![attempt(Category::RateLimited)]).outcome(), SendOutcome::Rejected);
        assert_eq!(rejection(Category::Unreachable).outcome(), SendOutcome::Rejected);
        let unknown = Error::unknown(UnknownReason::Network, "twilio", None, None, vec![]);
        assert_eq!(unknown.outcome(), SendOutcome::Unknown);
        assert_eq!(unknown.outcome().as_str(), "unknown");
        assert_eq!(NextStep::AlertOperator.to_string(), "alert_operator");
    }
}
