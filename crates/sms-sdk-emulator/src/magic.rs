//! The magic recipients: the one table from a recipient number to what the emulator does with
//! a send to it and what the library makes of that through each provider ([`Expected`]), and
//! the table of each provider's error code for each kind of rejection.
//!
//! Plivo documents no error codes, so its adapter classifies every magic rejection (its generic
//! 400) as `request`, which never fails over.
//!
//! Any recipient that is not listed here is accepted and delivered.

use std::fmt::{self, Write as _};
use std::sync::LazyLock;

use sms_sdk::{Category, UnknownReason};

use crate::model::Provider;

/// Invalid number: rejected, category `recipient` (`request` on Plivo).
pub const INVALID_NUMBER: &str = "+15005550001";
/// Cannot route from this sender: rejected, category `sender` (`request` on Plivo).
pub const SENDER_CANNOT_ROUTE: &str = "+15005550002";
/// No international permission: rejected, category `account` (`request` on Plivo).
pub const NO_PERMISSION: &str = "+15005550003";
/// Blocked, opted out: rejected, category `compliance` (`request` on Plivo).
pub const OPTED_OUT: &str = "+15005550004";
/// Cannot receive SMS: rejected, category `recipient` (`request` on Plivo).
pub const CANNOT_RECEIVE: &str = "+15005550009";
/// Accepted, then undelivered in the status webhooks.
pub const UNDELIVERED: &str = "+15005550010";
/// Answered with HTTP 500.
pub const SERVER_ERROR: &str = "+15005559001";
/// Never answered: the connection is held until the client gives up.
pub const HOLD: &str = "+15005559002";
/// The connection is reset before any response.
pub const RESET: &str = "+15005559003";
/// Rate-limited once per provider, recipient and body (with the provider's code and
/// `Retry-After: 1`), accepted on the next request.
pub const RATE_LIMITED_ONCE: &str = "+15005559004";
/// A 429 without the provider's rate-limit code.
pub const BARE_429: &str = "+15005559005";
/// A 2xx whose body cannot be read.
pub const UNREADABLE: &str = "+15005559006";
/// The message is created, then the connection is dropped before the response.
pub const CREATED_THEN_DROPPED: &str = "+15005559007";
/// Always rate-limited, with the provider's code and `Retry-After: 1`.
pub const RATE_LIMITED: &str = "+15005559008";

/// What the emulator does with a send to a recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Behavior {
    /// Accept, then report `sent` and `delivered`.
    Deliver,
    /// Accept, then report `sent` and `undelivered`.
    Undeliver,
    /// Reject at once with the provider's code for the reason.
    Reject(Reason),
    /// HTTP 500.
    ServerError,
    /// Never answer.
    Hold,
    /// Reset the connection without answering.
    Reset,
    /// Rate-limit the first request per (provider, recipient, body), accept the next.
    RateLimitOnce,
    /// Always rate-limit.
    RateLimitAlways,
    /// A 429 without the provider's code.
    Bare429,
    /// A 2xx with an unreadable body.
    Unreadable,
    /// Create the message, then drop the connection.
    CreateThenDrop,
}

/// Why a send is rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    /// The recipient is not a valid number.
    InvalidNumber,
    /// The recipient cannot receive SMS.
    CannotReceive,
    /// The message cannot be routed from this sender.
    SenderCannotRoute,
    /// The sender is malformed.
    InvalidSender,
    /// The account may not send to this destination.
    NoPermission,
    /// The recipient opted out.
    OptedOut,
}

/// The magic recipients: number, behavior, and what the emulator does with a send to it (the
/// help and the start banner add what the library makes of it, from [`Behavior::expected`]).
const TABLE: &[(&str, Behavior, &str)] = &[
    (INVALID_NUMBER, Behavior::Reject(Reason::InvalidNumber), "rejected: invalid number"),
    (SENDER_CANNOT_ROUTE, Behavior::Reject(Reason::SenderCannotRoute), "rejected: cannot route from this sender"),
    (NO_PERMISSION, Behavior::Reject(Reason::NoPermission), "rejected: no international permission"),
    (OPTED_OUT, Behavior::Reject(Reason::OptedOut), "rejected: blocked, opted out"),
    (CANNOT_RECEIVE, Behavior::Reject(Reason::CannotReceive), "rejected: cannot receive SMS"),
    (UNDELIVERED, Behavior::Undeliver, "reported undelivered in the status webhooks"),
    (SERVER_ERROR, Behavior::ServerError, "answered HTTP 500"),
    (HOLD, Behavior::Hold, "never answered: the connection is held until the client gives up"),
    (RESET, Behavior::Reset, "the connection is reset before any response"),
    (
        RATE_LIMITED_ONCE,
        Behavior::RateLimitOnce,
        "rate-limited once (429, Retry-After: 1), accepted on the next request for the same recipient and body",
    ),
    (BARE_429, Behavior::Bare429, "a bare 429 without the provider's rate-limit code"),
    (UNREADABLE, Behavior::Unreadable, "a 2xx whose body cannot be read"),
    (
        CREATED_THEN_DROPPED,
        Behavior::CreateThenDrop,
        "the message is created, then the connection is dropped before the response",
    ),
    (RATE_LIMITED, Behavior::RateLimitAlways, "always rate-limited (429, Retry-After: 1)"),
];

/// What the library makes of a send to a magic recipient: the outcome the emulator means, which
/// the provider's adapter gives for the emulator's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Expected {
    /// Accepted: a message is created.
    Accepted,
    /// Rejected in this category (a rate limit: once the client's retries are spent).
    Rejected(Category),
    /// An unknown outcome, for this reason.
    Unknown(UnknownReason),
    /// Rejected as rate-limited with `Retry-After: 1`, then accepted when the client retries.
    RateLimitedThenAccepted,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Accepted => f.write_str("accepted"),
            Self::Rejected(category) => write!(f, "category {category}"),
            Self::Unknown(reason) => write!(f, "unknown, reason {reason}"),
            Self::RateLimitedThenAccepted => {
                write!(f, "category {}, then accepted when retried", Category::RateLimited)
            }
        }
    }
}

/// A fault the emulator injects in place of a normal answer (what a magic recipient triggers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// Answered HTTP 500.
    Http500,
    /// Never answered: the connection is held.
    Hang,
    /// The connection is reset before any response.
    Reset,
    /// Rate-limited with the provider's code and `Retry-After: 1`.
    RateLimited,
    /// A 429 without the provider's code.
    Bare429,
    /// A 2xx whose body cannot be read.
    Unreadable,
    /// The message is created, then the connection is dropped.
    DropAfterCreate,
}

impl Fault {
    /// Its name in the request log and the help: `http500`, `hang`, `reset`, `rate_limited`,
    /// `bare429`, `unreadable` or `drop_after_create`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Http500 => "http500",
            Self::Hang => "hang",
            Self::Reset => "reset",
            Self::RateLimited => "rate_limited",
            Self::Bare429 => "bare429",
            Self::Unreadable => "unreadable",
            Self::DropAfterCreate => "drop_after_create",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One magic recipient: its number, what a send to it gets, the fault it injects (if any), and
/// what the library makes of it through each provider ([`MagicRecipient::expected`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MagicRecipient {
    /// The recipient, E.164.
    pub number: &'static str,
    /// What a send to it gets, in a few words, with the library's outcome in parentheses
    /// (`rejected: invalid number (category recipient; plivo: category request)`).
    pub meaning: &'static str,
    /// The fault it injects, `None` for a rejection or an accepted message.
    pub fault: Option<Fault>,
    behavior: Behavior,
}

impl MagicRecipient {
    /// What the library makes of a send to this recipient through `provider`'s adapter.
    ///
    /// ```
    /// use sms_sdk::Category;
    /// use sms_sdk_emulator::Provider;
    /// use sms_sdk_emulator::magic::{self, Expected};
    ///
    /// let route = magic::recipients().find(|r| r.number == magic::SENDER_CANNOT_ROUTE).unwrap();
    /// assert_eq!(route.expected(Provider::Twilio), Expected::Rejected(Category::Sender));
    /// ```
    #[must_use]
    pub const fn expected(&self, provider: Provider) -> Expected {
        self.behavior.expected(provider)
    }
}

/// The table's recipients, their meanings written out once.
static RECIPIENTS: LazyLock<Vec<(&str, Behavior, String)>> = LazyLock::new(|| {
    TABLE.iter().map(|&(number, behavior, does)| (number, behavior, meaning(does, behavior))).collect()
});

/// `does`, then the library's outcome: the one most providers give, and each other provider's.
fn meaning(does: &str, behavior: Behavior) -> String {
    let outcomes = Provider::ALL.map(|provider| behavior.expected(provider));
    let common = outcomes
        .iter()
        .max_by_key(|outcome| outcomes.iter().filter(|other| other == outcome).count())
        .copied()
        .unwrap_or(Expected::Accepted);
    let mut text = format!("{does} ({common}");
    for (provider, outcome) in Provider::ALL.iter().zip(outcomes) {
        if outcome != common {
            let _ = write!(text, "; {provider}: {outcome}");
        }
    }
    text.push(')');
    text
}

/// Every magic recipient, in table order: what `sms-sdk emulator` lists in its help and at start.
///
/// ```
/// let numbers: Vec<&str> = sms_sdk_emulator::magic::recipients().map(|r| r.number).collect();
/// assert!(numbers.contains(&sms_sdk_emulator::magic::RESET));
/// ```
pub fn recipients() -> impl Iterator<Item = MagicRecipient> {
    RECIPIENTS.iter().map(|(number, behavior, meaning)| MagicRecipient {
        number,
        meaning: meaning.as_str(),
        fault: behavior.fault(),
        behavior: *behavior,
    })
}

impl Behavior {
    /// The fault this behavior injects; `None` when it answers normally (accepts or rejects).
    /// A rate limit once counts as the fault, though its next request is accepted.
    pub(crate) const fn fault(self) -> Option<Fault> {
        match self {
            Self::Deliver | Self::Undeliver | Self::Reject(_) => None,
            Self::ServerError => Some(Fault::Http500),
            Self::Hold => Some(Fault::Hang),
            Self::Reset => Some(Fault::Reset),
            Self::RateLimitOnce | Self::RateLimitAlways => Some(Fault::RateLimited),
            Self::Bare429 => Some(Fault::Bare429),
            Self::Unreadable => Some(Fault::Unreadable),
            Self::CreateThenDrop => Some(Fault::DropAfterCreate),
        }
    }

    /// What the library makes of a send with this behavior through `provider`'s adapter: the one
    /// place that says what each magic recipient means for each provider.
    pub(crate) const fn expected(self, provider: Provider) -> Expected {
        match self {
            Self::Deliver | Self::Undeliver => Expected::Accepted,
            Self::Reject(reason) => Expected::Rejected(reason.category(provider)),
            Self::ServerError => Expected::Unknown(UnknownReason::ServerError),
            Self::Hold => Expected::Unknown(UnknownReason::Timeout),
            Self::Reset | Self::CreateThenDrop => Expected::Unknown(UnknownReason::Network),
            Self::RateLimitOnce => Expected::RateLimitedThenAccepted,
            Self::RateLimitAlways => Expected::Rejected(Category::RateLimited),
            Self::Bare429 => Expected::Unknown(UnknownReason::UnexpectedStatus),
            Self::Unreadable => Expected::Unknown(UnknownReason::MalformedResponse),
        }
    }
}

impl Reason {
    /// The rejection category the library gives it through `provider`'s adapter: the category
    /// of the provider's documented code for it, and `request` for Plivo, which documents no
    /// error codes (its generic 400 is classified by its status alone).
    pub(crate) const fn category(self, provider: Provider) -> Category {
        match (provider, self) {
            (Provider::Plivo, _) => Category::Request,
            (_, Self::InvalidNumber | Self::CannotReceive) => Category::Recipient,
            (_, Self::SenderCannotRoute | Self::InvalidSender) => Category::Sender,
            (_, Self::NoPermission) => Category::Account,
            (_, Self::OptedOut) => Category::Compliance,
        }
    }
}

/// What to do with a send to `to` (an E.164 number).
pub(crate) fn behavior(to: &str) -> Behavior {
    TABLE.iter().find(|(number, ..)| *number == to).map_or(Behavior::Deliver, |(_, behavior, _)| *behavior)
}

/// Each provider's documented code for a rejection reason (Plivo has none: it answers its
/// generic 400 with the message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Codes {
    /// Twilio's `code` (HTTP 400).
    pub(crate) twilio: u32,
    /// Telnyx's `errors[0].code` (HTTP 400).
    pub(crate) telnyx: &'static str,
    /// Vonage's problem `type` fragment (HTTP 422).
    pub(crate) vonage: &'static str,
    /// A short title.
    pub(crate) title: &'static str,
    /// The human message.
    pub(crate) detail: &'static str,
}

/// The codes of `reason`, from the emulator contract's per-provider table.
pub(crate) const fn codes(reason: Reason) -> Codes {
    match reason {
        Reason::InvalidNumber => Codes {
            twilio: 21211,
            telnyx: "40310",
            vonage: "1430",
            title: "Invalid 'To' number",
            detail: "The 'To' number is not a valid phone number.",
        },
        Reason::CannotReceive => Codes {
            twilio: 21614,
            telnyx: "40319",
            vonage: "1170",
            title: "Recipient cannot receive SMS",
            detail: "The 'To' number is not a mobile number and cannot receive SMS.",
        },
        Reason::SenderCannotRoute => Codes {
            twilio: 21612,
            telnyx: "40305",
            vonage: "1120",
            title: "Cannot route from this sender",
            detail: "The message cannot be routed from this sender to this recipient.",
        },
        Reason::InvalidSender => Codes {
            twilio: 21212,
            telnyx: "40305",
            vonage: "1120",
            title: "Invalid sender",
            detail: "The sender is not a valid phone number, short code or sender ID.",
        },
        Reason::NoPermission => Codes {
            twilio: 21408,
            telnyx: "40309",
            vonage: "1160",
            title: "Destination not permitted",
            detail: "Permission to send to this destination has not been enabled for the account.",
        },
        Reason::OptedOut => Codes {
            twilio: 21610,
            telnyx: "40300",
            vonage: "1240",
            title: "Recipient opted out",
            detail: "The recipient has opted out of messages from this sender.",
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlisted_recipients_are_delivered() {
        assert_eq!(behavior("+14155550123"), Behavior::Deliver);
        assert_eq!(behavior(HOLD), Behavior::Hold);
        assert_eq!(behavior(OPTED_OUT), Behavior::Reject(Reason::OptedOut));
    }

    #[test]
    fn every_constant_is_listed_once() {
        let all = [
            INVALID_NUMBER,
            SENDER_CANNOT_ROUTE,
            NO_PERMISSION,
            OPTED_OUT,
            CANNOT_RECEIVE,
            UNDELIVERED,
            SERVER_ERROR,
            HOLD,
            RESET,
            RATE_LIMITED_ONCE,
            BARE_429,
            UNREADABLE,
            CREATED_THEN_DROPPED,
            RATE_LIMITED,
        ];
        let listed: Vec<&str> = recipients().map(|r| r.number).collect();
        assert_eq!(listed.len(), all.len());
        assert!(all.iter().all(|n| listed.contains(n)));
        assert_eq!(recipients().find(|r| r.number == HOLD).and_then(|r| r.fault), Some(Fault::Hang));
    }

    #[test]
    fn plivo_magic_rejections_are_request_rejections() {
        for reason in [
            Reason::InvalidNumber,
            Reason::CannotReceive,
            Reason::SenderCannotRoute,
            Reason::InvalidSender,
            Reason::NoPermission,
            Reason::OptedOut,
        ] {
            assert_eq!(reason.category(Provider::Plivo), Category::Request, "{reason:?}");
            assert_ne!(reason.category(Provider::Vonage), Category::Request, "{reason:?}");
        }
        let meaning = |number| recipients().find(|r| r.number == number).map(|r| r.meaning);
        assert_eq!(
            meaning(SENDER_CANNOT_ROUTE),
            Some("rejected: cannot route from this sender (category sender; plivo: category request)")
        );
        assert_eq!(meaning(SERVER_ERROR), Some("answered HTTP 500 (unknown, reason server_error)"));
        assert_eq!(
            recipients().find(|r| r.number == RATE_LIMITED_ONCE).map(|r| r.expected(Provider::Plivo)),
            Some(Expected::RateLimitedThenAccepted)
        );
    }
}
