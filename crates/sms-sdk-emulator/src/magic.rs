//! The magic recipients: the one table from a recipient number to what the emulator does with
//! a send to it and what the library makes of that through each provider ([`Expected`]), and
//! the table of each provider's error code for each kind of rejection.
//!
//! Plivo documents no error codes, so its adapter classifies every magic rejection (its generic
//! 400) as `request`, which never fails over. Sinch has no synchronous code for most reasons (an
//! opt-out or a route it cannot take fails later, in the delivery report): the emulator answers
//! each with Sinch's 400 `syntax_invalid_parameter_format`, also `request`. AWS has an exception
//! and `Reason` for a sender that cannot reach the destination's country
//! (`ValidationException` `INVALID_IDENTITY_FOR_DESTINATION_COUNTRY`: `sender`), a country the
//! account may not send to (`DESTINATION_COUNTRY_BLOCKED`: `account`) and an opt-out
//! (`ConflictException` `DESTINATION_PHONE_NUMBER_OPTED_OUT`: `compliance`), but none for a
//! recipient it cannot take: an invalid number is a field validation failure
//! (`FIELD_VALIDATION_FAILED`) and one that cannot receive SMS an invalid parameter
//! (`INVALID_PARAMETER`), both `request` there, as is a malformed sender. AWS's rate limit
//! (`ThrottlingException`, HTTP 400) carries no `Retry-After` ([`Provider::retry_after`]).
//!
//! Infobip reports a destination it refuses in the 200 of the send, in status group 5
//! (REJECTED), by a name the library maps: `REJECTED_DESTINATION` for a recipient it cannot take
//! (`recipient`), `REJECTED_SOURCE` and `REJECTED_SENDER` for the sender (`sender`),
//! `REJECTED_NOT_ENOUGH_CREDITS` for a destination the account cannot send to (`account`), and
//! `REJECTED_DND` for an opt-out, which the library maps to no category of its own (`request`).
//! Bandwidth answers a `request-validation` 400 naming the field: `to` for a recipient it cannot
//! take or that opted out (`recipient`), `from` for the sender (`sender`); and `forbidden` (403,
//! `auth`, which fails over) for a destination the account may not reach. Its 500 with its own
//! body is a rejection by Bandwidth's contract, so the emulator's server error there is a 503
//! (unknown); its 429 is a rate limit by the status alone, so a bare 429 is rate-limited there,
//! as at Sinch.
//!
//! Besides the recipients every provider treats alike, each rejection reason has one recipient per
//! provider that is rejected **at that provider only**, and accepted and delivered by the others,
//! so that failover can be shown end to end: `+1500555P0RR`, where `RR` is the reason's number
//! among the recipients every provider rejects (`01` invalid number, `02` cannot route from this
//! sender, `03` no international permission, `04` opted out, `09` cannot receive SMS) and `P` the
//! provider: `1` Twilio, `2` Telnyx, `3` Plivo, `4` Vonage, `5` Sinch, `6` AWS, `7` Infobip,
//! `8` Bandwidth (`P` = `0` is every
//! provider: `+15005550002` is rejected everywhere, [`TWILIO_SENDER_CANNOT_ROUTE`], `+15005551002`,
//! by Twilio alone). A rejection at one provider gets that provider's own code and the category of
//! [`Expected`], as the recipients rejected everywhere do (`request` at Plivo and Sinch, and for
//! the recipient reasons at AWS). There is no magic recipient for an authentication failure at one
//! provider (give that adapter wrong credentials: the emulator answers each provider's own
//! authentication error) or for an unreachable provider (point that adapter at a closed port:
//! nothing reaches the emulator).
//!
//! ```
//! use sms_sdk::Category;
//! use sms_sdk_emulator::Provider;
//! use sms_sdk_emulator::magic::{self, Expected};
//!
//! let only_twilio = magic::recipients().find(|r| r.number == magic::TWILIO_SENDER_CANNOT_ROUTE).unwrap();
//! assert_eq!(only_twilio.only_at, Some(Provider::Twilio));
//! assert_eq!(only_twilio.expected(Provider::Twilio), Expected::Rejected(Category::Sender));
//! assert_eq!(only_twilio.expected(Provider::Telnyx), Expected::Accepted);
//! ```
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
/// Answered with HTTP 500 (503 at Bandwidth, whose 500 with its own body means "not sent").
pub const SERVER_ERROR: &str = "+15005559001";
/// Never answered: the connection is held until the client gives up.
pub const HOLD: &str = "+15005559002";
/// The connection is reset before any response.
pub const RESET: &str = "+15005559003";
/// Rate-limited once per provider, recipient and body (with the provider's code and
/// `Retry-After: 1`, none at AWS), accepted on the next request.
pub const RATE_LIMITED_ONCE: &str = "+15005559004";
/// A 429 without the provider's rate-limit code (unknown, except at Sinch and Bandwidth, which
/// document their 429 by the status alone: rate-limited there).
pub const BARE_429: &str = "+15005559005";
/// A 2xx whose body cannot be read.
pub const UNREADABLE: &str = "+15005559006";
/// The message is created, then the connection is dropped before the response.
pub const CREATED_THEN_DROPPED: &str = "+15005559007";
/// Always rate-limited, with the provider's code and `Retry-After: 1` (none at AWS).
pub const RATE_LIMITED: &str = "+15005559008";

/// Invalid number at Twilio only: rejected there (category `recipient`), accepted elsewhere.
pub const TWILIO_INVALID_NUMBER: &str = "+15005551001";
/// Cannot route from this sender at Twilio only: rejected there (category `sender`, which fails
/// over), accepted elsewhere.
pub const TWILIO_SENDER_CANNOT_ROUTE: &str = "+15005551002";
/// No international permission at Twilio only: rejected there (category `account`, which fails
/// over), accepted elsewhere.
pub const TWILIO_NO_PERMISSION: &str = "+15005551003";
/// Opted out at Twilio only: rejected there (category `compliance`), accepted elsewhere.
pub const TWILIO_OPTED_OUT: &str = "+15005551004";
/// Cannot receive SMS at Twilio only: rejected there (category `recipient`), accepted elsewhere.
pub const TWILIO_CANNOT_RECEIVE: &str = "+15005551009";
/// Invalid number at Telnyx only: rejected there (category `recipient`), accepted elsewhere.
pub const TELNYX_INVALID_NUMBER: &str = "+15005552001";
/// Cannot route from this sender at Telnyx only: rejected there (category `sender`, which fails
/// over), accepted elsewhere.
pub const TELNYX_SENDER_CANNOT_ROUTE: &str = "+15005552002";
/// No international permission at Telnyx only: rejected there (category `account`, which fails
/// over), accepted elsewhere.
pub const TELNYX_NO_PERMISSION: &str = "+15005552003";
/// Opted out at Telnyx only: rejected there (category `compliance`), accepted elsewhere.
pub const TELNYX_OPTED_OUT: &str = "+15005552004";
/// Cannot receive SMS at Telnyx only: rejected there (category `recipient`), accepted elsewhere.
pub const TELNYX_CANNOT_RECEIVE: &str = "+15005552009";
/// Invalid number at Plivo only: rejected there (category `request`: Plivo documents no codes),
/// accepted elsewhere.
pub const PLIVO_INVALID_NUMBER: &str = "+15005553001";
/// Cannot route from this sender at Plivo only: rejected there (category `request`), accepted
/// elsewhere.
pub const PLIVO_SENDER_CANNOT_ROUTE: &str = "+15005553002";
/// No international permission at Plivo only: rejected there (category `request`), accepted
/// elsewhere.
pub const PLIVO_NO_PERMISSION: &str = "+15005553003";
/// Opted out at Plivo only: rejected there (category `request`), accepted elsewhere.
pub const PLIVO_OPTED_OUT: &str = "+15005553004";
/// Cannot receive SMS at Plivo only: rejected there (category `request`), accepted elsewhere.
pub const PLIVO_CANNOT_RECEIVE: &str = "+15005553009";
/// Invalid number at Vonage only: rejected there (category `recipient`), accepted elsewhere.
pub const VONAGE_INVALID_NUMBER: &str = "+15005554001";
/// Cannot route from this sender at Vonage only: rejected there (category `sender`, which fails
/// over), accepted elsewhere.
pub const VONAGE_SENDER_CANNOT_ROUTE: &str = "+15005554002";
/// No international permission at Vonage only: rejected there (category `account`, which fails
/// over), accepted elsewhere.
pub const VONAGE_NO_PERMISSION: &str = "+15005554003";
/// Opted out at Vonage only: rejected there (category `compliance`), accepted elsewhere.
pub const VONAGE_OPTED_OUT: &str = "+15005554004";
/// Cannot receive SMS at Vonage only: rejected there (category `recipient`), accepted elsewhere.
pub const VONAGE_CANNOT_RECEIVE: &str = "+15005554009";

/// Invalid number at Sinch only: rejected there (category `request`), accepted elsewhere.
pub const SINCH_INVALID_NUMBER: &str = "+15005555001";
/// Cannot route from this sender at Sinch only: rejected there (category `request`), accepted
/// elsewhere.
pub const SINCH_SENDER_CANNOT_ROUTE: &str = "+15005555002";
/// No international permission at Sinch only: rejected there (category `request`), accepted
/// elsewhere.
pub const SINCH_NO_PERMISSION: &str = "+15005555003";
/// Opted out at Sinch only: rejected there (category `request`), accepted elsewhere.
pub const SINCH_OPTED_OUT: &str = "+15005555004";
/// Cannot receive SMS at Sinch only: rejected there (category `request`), accepted elsewhere.
pub const SINCH_CANNOT_RECEIVE: &str = "+15005555009";

/// Invalid number at AWS only: rejected there (category `request`: a field validation failure),
/// accepted elsewhere.
pub const AWS_INVALID_NUMBER: &str = "+15005556001";
/// Cannot route from this sender at AWS only: rejected there (category `sender`, which fails
/// over), accepted elsewhere.
pub const AWS_SENDER_CANNOT_ROUTE: &str = "+15005556002";
/// No international permission at AWS only: rejected there (category `account`, which fails
/// over), accepted elsewhere.
pub const AWS_NO_PERMISSION: &str = "+15005556003";
/// Opted out at AWS only: rejected there (category `compliance`), accepted elsewhere.
pub const AWS_OPTED_OUT: &str = "+15005556004";
/// Cannot receive SMS at AWS only: rejected there (category `request`: an invalid parameter),
/// accepted elsewhere.
pub const AWS_CANNOT_RECEIVE: &str = "+15005556009";

/// Invalid number at Infobip only: rejected there (category `recipient`: `REJECTED_DESTINATION`),
/// accepted elsewhere.
pub const INFOBIP_INVALID_NUMBER: &str = "+15005557001";
/// Cannot route from this sender at Infobip only: rejected there (category `sender`:
/// `REJECTED_SOURCE`, which fails over), accepted elsewhere.
pub const INFOBIP_SENDER_CANNOT_ROUTE: &str = "+15005557002";
/// No international permission at Infobip only: rejected there (category `account`:
/// `REJECTED_NOT_ENOUGH_CREDITS`, which fails over), accepted elsewhere.
pub const INFOBIP_NO_PERMISSION: &str = "+15005557003";
/// Opted out at Infobip only: rejected there (category `request`: `REJECTED_DND`), accepted
/// elsewhere.
pub const INFOBIP_OPTED_OUT: &str = "+15005557004";
/// Cannot receive SMS at Infobip only: rejected there (category `recipient`:
/// `REJECTED_DESTINATION`), accepted elsewhere.
pub const INFOBIP_CANNOT_RECEIVE: &str = "+15005557009";

/// Invalid number at Bandwidth only: rejected there (category `recipient`: a `request-validation`
/// of `to`), accepted elsewhere.
pub const BANDWIDTH_INVALID_NUMBER: &str = "+15005558001";
/// Cannot route from this sender at Bandwidth only: rejected there (category `sender`: a
/// `request-validation` of `from`, which fails over), accepted elsewhere.
pub const BANDWIDTH_SENDER_CANNOT_ROUTE: &str = "+15005558002";
/// No international permission at Bandwidth only: rejected there (category `auth`: `forbidden`,
/// which fails over), accepted elsewhere.
pub const BANDWIDTH_NO_PERMISSION: &str = "+15005558003";
/// Opted out at Bandwidth only: rejected there (category `recipient`: a `request-validation` of
/// `to`), accepted elsewhere.
pub const BANDWIDTH_OPTED_OUT: &str = "+15005558004";
/// Cannot receive SMS at Bandwidth only: rejected there (category `recipient`), accepted
/// elsewhere.
pub const BANDWIDTH_CANNOT_RECEIVE: &str = "+15005558009";

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

/// One row of the table: a recipient, the one provider its behavior applies at (`None`: every
/// provider; the others accept and deliver it), the behavior, and what the emulator does with a
/// send to it (for a row of one provider, the reason's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    number: &'static str,
    only_at: Option<Provider>,
    behavior: Behavior,
    does: &'static str,
}

/// A recipient every provider treats alike.
const fn every(number: &'static str, behavior: Behavior, does: &'static str) -> Row {
    Row { number, only_at: None, behavior, does }
}

/// A recipient rejected for `reason` at `provider` only.
const fn only(number: &'static str, provider: Provider, reason: Reason) -> Row {
    Row { number, only_at: Some(provider), behavior: Behavior::Reject(reason), does: reason.words() }
}

/// The magic recipients: number, where, behavior, and what the emulator does with a send to it
/// (the help and the start banner add what the library makes of it, from [`Behavior::expected`]).
/// The recipients of one provider are `+1500555P0RR`: `P` the provider (1 Twilio, 2 Telnyx,
/// 3 Plivo, 4 Vonage, 5 Sinch, 6 AWS, 7 Infobip, 8 Bandwidth), `RR` the last digits of the recipient every provider
/// rejects so.
const TABLE: &[Row] = &[
    every(INVALID_NUMBER, Behavior::Reject(Reason::InvalidNumber), "rejected: invalid number"),
    every(SENDER_CANNOT_ROUTE, Behavior::Reject(Reason::SenderCannotRoute), "rejected: cannot route from this sender"),
    every(NO_PERMISSION, Behavior::Reject(Reason::NoPermission), "rejected: no international permission"),
    every(OPTED_OUT, Behavior::Reject(Reason::OptedOut), "rejected: blocked, opted out"),
    every(CANNOT_RECEIVE, Behavior::Reject(Reason::CannotReceive), "rejected: cannot receive SMS"),
    every(UNDELIVERED, Behavior::Undeliver, "reported undelivered in the status webhooks"),
    every(SERVER_ERROR, Behavior::ServerError, "answered HTTP 500 (at bandwidth 503)"),
    every(HOLD, Behavior::Hold, "never answered: the connection is held until the client gives up"),
    every(RESET, Behavior::Reset, "the connection is reset before any response"),
    every(
        RATE_LIMITED_ONCE,
        Behavior::RateLimitOnce,
        "rate-limited once (429, Retry-After: 1; at aws a 400 ThrottlingException without Retry-After), accepted on the next request for the same recipient and body",
    ),
    every(BARE_429, Behavior::Bare429, "a bare 429 without the provider's rate-limit code"),
    every(UNREADABLE, Behavior::Unreadable, "a 2xx whose body cannot be read"),
    every(
        CREATED_THEN_DROPPED,
        Behavior::CreateThenDrop,
        "the message is created, then the connection is dropped before the response",
    ),
    every(
        RATE_LIMITED,
        Behavior::RateLimitAlways,
        "always rate-limited (429, Retry-After: 1; at aws a 400 ThrottlingException without Retry-After)",
    ),
    only(TWILIO_INVALID_NUMBER, Provider::Twilio, Reason::InvalidNumber),
    only(TWILIO_SENDER_CANNOT_ROUTE, Provider::Twilio, Reason::SenderCannotRoute),
    only(TWILIO_NO_PERMISSION, Provider::Twilio, Reason::NoPermission),
    only(TWILIO_OPTED_OUT, Provider::Twilio, Reason::OptedOut),
    only(TWILIO_CANNOT_RECEIVE, Provider::Twilio, Reason::CannotReceive),
    only(TELNYX_INVALID_NUMBER, Provider::Telnyx, Reason::InvalidNumber),
    only(TELNYX_SENDER_CANNOT_ROUTE, Provider::Telnyx, Reason::SenderCannotRoute),
    only(TELNYX_NO_PERMISSION, Provider::Telnyx, Reason::NoPermission),
    only(TELNYX_OPTED_OUT, Provider::Telnyx, Reason::OptedOut),
    only(TELNYX_CANNOT_RECEIVE, Provider::Telnyx, Reason::CannotReceive),
    only(PLIVO_INVALID_NUMBER, Provider::Plivo, Reason::InvalidNumber),
    only(PLIVO_SENDER_CANNOT_ROUTE, Provider::Plivo, Reason::SenderCannotRoute),
    only(PLIVO_NO_PERMISSION, Provider::Plivo, Reason::NoPermission),
    only(PLIVO_OPTED_OUT, Provider::Plivo, Reason::OptedOut),
    only(PLIVO_CANNOT_RECEIVE, Provider::Plivo, Reason::CannotReceive),
    only(VONAGE_INVALID_NUMBER, Provider::Vonage, Reason::InvalidNumber),
    only(VONAGE_SENDER_CANNOT_ROUTE, Provider::Vonage, Reason::SenderCannotRoute),
    only(VONAGE_NO_PERMISSION, Provider::Vonage, Reason::NoPermission),
    only(VONAGE_OPTED_OUT, Provider::Vonage, Reason::OptedOut),
    only(VONAGE_CANNOT_RECEIVE, Provider::Vonage, Reason::CannotReceive),
    only(SINCH_INVALID_NUMBER, Provider::Sinch, Reason::InvalidNumber),
    only(SINCH_SENDER_CANNOT_ROUTE, Provider::Sinch, Reason::SenderCannotRoute),
    only(SINCH_NO_PERMISSION, Provider::Sinch, Reason::NoPermission),
    only(SINCH_OPTED_OUT, Provider::Sinch, Reason::OptedOut),
    only(SINCH_CANNOT_RECEIVE, Provider::Sinch, Reason::CannotReceive),
    only(AWS_INVALID_NUMBER, Provider::Aws, Reason::InvalidNumber),
    only(AWS_SENDER_CANNOT_ROUTE, Provider::Aws, Reason::SenderCannotRoute),
    only(AWS_NO_PERMISSION, Provider::Aws, Reason::NoPermission),
    only(AWS_OPTED_OUT, Provider::Aws, Reason::OptedOut),
    only(AWS_CANNOT_RECEIVE, Provider::Aws, Reason::CannotReceive),
    only(INFOBIP_INVALID_NUMBER, Provider::Infobip, Reason::InvalidNumber),
    only(INFOBIP_SENDER_CANNOT_ROUTE, Provider::Infobip, Reason::SenderCannotRoute),
    only(INFOBIP_NO_PERMISSION, Provider::Infobip, Reason::NoPermission),
    only(INFOBIP_OPTED_OUT, Provider::Infobip, Reason::OptedOut),
    only(INFOBIP_CANNOT_RECEIVE, Provider::Infobip, Reason::CannotReceive),
    only(BANDWIDTH_INVALID_NUMBER, Provider::Bandwidth, Reason::InvalidNumber),
    only(BANDWIDTH_SENDER_CANNOT_ROUTE, Provider::Bandwidth, Reason::SenderCannotRoute),
    only(BANDWIDTH_NO_PERMISSION, Provider::Bandwidth, Reason::NoPermission),
    only(BANDWIDTH_OPTED_OUT, Provider::Bandwidth, Reason::OptedOut),
    only(BANDWIDTH_CANNOT_RECEIVE, Provider::Bandwidth, Reason::CannotReceive),
];

impl Row {
    /// What the emulator does with a send to this row's recipient through `provider`: its
    /// behavior where it applies, and acceptance and delivery at every other provider.
    const fn behavior_at(&self, provider: Provider) -> Behavior {
        match self.only_at {
            Some(at) if !same(at, provider) => Behavior::Deliver,
            Some(_) | None => self.behavior,
        }
    }
}

/// Whether `a` and `b` are the same provider (`PartialEq` is not `const`).
const fn same(a: Provider, b: Provider) -> bool {
    matches!(
        (a, b),
        (Provider::Twilio, Provider::Twilio)
            | (Provider::Telnyx, Provider::Telnyx)
            | (Provider::Plivo, Provider::Plivo)
            | (Provider::Vonage, Provider::Vonage)
            | (Provider::Sinch, Provider::Sinch)
            | (Provider::Aws, Provider::Aws)
            | (Provider::Infobip, Provider::Infobip)
            | (Provider::Bandwidth, Provider::Bandwidth)
    )
}

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
    /// Rejected as rate-limited (with `Retry-After: 1`, none at AWS), then accepted when the
    /// client retries.
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
    /// Answered HTTP 500 (503 at Bandwidth).
    Http500,
    /// Never answered: the connection is held.
    Hang,
    /// The connection is reset before any response.
    Reset,
    /// Rate-limited with the provider's code and `Retry-After: 1` (none at AWS).
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
    /// The one provider that rejects it (the others accept and deliver it), or `None` when every
    /// provider does the same with it.
    pub only_at: Option<Provider>,
    row: Row,
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
        self.row.behavior_at(provider).expected(provider)
    }
}

/// The table's rows, their meanings written out once.
static RECIPIENTS: LazyLock<Vec<(Row, String)>> =
    LazyLock::new(|| TABLE.iter().map(|row| (*row, meaning(row))).collect());

/// What the row's recipient gets, then the library's outcome: the one most providers give (of
/// two as common, the one of the provider listed first), and each other provider's.
fn meaning(row: &Row) -> String {
    let outcomes = Provider::ALL.map(|provider| row.behavior_at(provider).expected(provider));
    let count = |outcome: &Expected| outcomes.iter().filter(|other| *other == outcome).count();
    let mut common = outcomes.first().copied().unwrap_or(Expected::Accepted);
    for outcome in &outcomes {
        if count(outcome) > count(&common) {
            common = *outcome;
        }
    }
    let mut text = match row.only_at {
        Some(provider) => format!("rejected at {provider} only: {} ({common}", row.does),
        None => format!("{} ({common}", row.does),
    };
    for (provider, outcome) in Provider::ALL.iter().zip(outcomes) {
        if outcome != common {
            let _ = write!(text, "; {provider}: {outcome}");
        }
    }
    text.push(')');
    text
}

/// Every magic recipient, in table order: those every provider treats alike, then those rejected
/// at one provider only ([`MagicRecipient::only_at`]). `sms-sdk emulator` lists all of them in
/// its help, and those every provider treats alike at start.
///
/// ```
/// let numbers: Vec<&str> = sms_sdk_emulator::magic::recipients().map(|r| r.number).collect();
/// assert!(numbers.contains(&sms_sdk_emulator::magic::RESET));
/// ```
pub fn recipients() -> impl Iterator<Item = MagicRecipient> {
    RECIPIENTS.iter().map(|(row, meaning)| MagicRecipient {
        number: row.number,
        meaning: meaning.as_str(),
        fault: row.behavior.fault(),
        only_at: row.only_at,
        row: *row,
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
            // Sinch and Bandwidth document their 429 by the status alone: a refusal, with or
            // without their code.
            Self::Bare429 => match provider {
                Provider::Sinch | Provider::Bandwidth => Expected::Rejected(Category::RateLimited),
                Provider::Twilio
                | Provider::Telnyx
                | Provider::Plivo
                | Provider::Vonage
                | Provider::Aws
                | Provider::Infobip => Expected::Unknown(UnknownReason::UnexpectedStatus),
            },
            Self::Unreadable => Expected::Unknown(UnknownReason::MalformedResponse),
        }
    }
}

impl Reason {
    /// The reason in a few words, as the help lists it.
    const fn words(self) -> &'static str {
        match self {
            Self::InvalidNumber => "invalid number",
            Self::CannotReceive => "cannot receive SMS",
            Self::SenderCannotRoute => "cannot route from this sender",
            Self::InvalidSender => "invalid sender",
            Self::NoPermission => "no international permission",
            Self::OptedOut => "blocked, opted out",
        }
    }

    /// The rejection category the library gives it through `provider`'s adapter: the category
    /// of the provider's documented code for it; `request` for Plivo, which documents no error
    /// codes (its generic 400 is classified by its status alone), for Sinch, whose one
    /// synchronous answer to a recipient it cannot take is a 400 syntax error, and at AWS for
    /// the reasons it answers with a `ValidationException` of a field (a recipient it cannot
    /// take, a malformed sender). Infobip's `REJECTED_DND` (an opt-out) has no category of its
    /// own in the library (`request`); Bandwidth's validation errors name the recipient for an
    /// opt-out (`recipient`), and its `forbidden` is `auth`.
    pub(crate) const fn category(self, provider: Provider) -> Category {
        match (provider, self) {
            (Provider::Plivo | Provider::Sinch, _)
            | (Provider::Aws, Self::InvalidNumber | Self::CannotReceive | Self::InvalidSender)
            | (Provider::Infobip, Self::OptedOut) => Category::Request,
            (Provider::Bandwidth, Self::NoPermission) => Category::Auth,
            (Provider::Bandwidth, Self::OptedOut) | (_, Self::InvalidNumber | Self::CannotReceive) => {
                Category::Recipient
            }
            (_, Self::SenderCannotRoute | Self::InvalidSender) => Category::Sender,
            (_, Self::NoPermission) => Category::Account,
            (_, Self::OptedOut) => Category::Compliance,
        }
    }
}

/// What to do with a send to `to` (an E.164 number) through `provider`.
pub(crate) fn behavior(to: &str, provider: Provider) -> Behavior {
    TABLE.iter().find(|row| row.number == to).map_or(Behavior::Deliver, |row| row.behavior_at(provider))
}

/// Each provider's documented code for a rejection reason (Plivo has none: it answers its
/// generic 400 with the message; Sinch answers every one with the same code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Codes {
    /// Twilio's `code` (HTTP 400).
    pub(crate) twilio: u32,
    /// Telnyx's `errors[0].code` (HTTP 400).
    pub(crate) telnyx: &'static str,
    /// Vonage's problem `type` fragment (HTTP 422).
    pub(crate) vonage: &'static str,
    /// AWS's exception (HTTP 400) and its `Reason`.
    pub(crate) aws: (&'static str, &'static str),
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
            aws: ("ValidationException", "FIELD_VALIDATION_FAILED"),
            title: "Invalid 'To' number",
            detail: "The 'To' number is not a valid phone number.",
        },
        Reason::CannotReceive => Codes {
            twilio: 21614,
            telnyx: "40319",
            vonage: "1170",
            aws: ("ValidationException", "INVALID_PARAMETER"),
            title: "Recipient cannot receive SMS",
            detail: "The 'To' number is not a mobile number and cannot receive SMS.",
        },
        Reason::SenderCannotRoute => Codes {
            twilio: 21612,
            telnyx: "40305",
            vonage: "1120",
            aws: ("ValidationException", "INVALID_IDENTITY_FOR_DESTINATION_COUNTRY"),
            title: "Cannot route from this sender",
            detail: "The message cannot be routed from this sender to this recipient.",
        },
        Reason::InvalidSender => Codes {
            twilio: 21212,
            telnyx: "40305",
            vonage: "1120",
            aws: ("ValidationException", "FIELD_VALIDATION_FAILED"),
            title: "Invalid sender",
            detail: "The sender is not a valid phone number, short code or sender ID.",
        },
        Reason::NoPermission => Codes {
            twilio: 21408,
            telnyx: "40309",
            vonage: "1160",
            aws: ("ValidationException", "DESTINATION_COUNTRY_BLOCKED"),
            title: "Destination not permitted",
            detail: "Permission to send to this destination has not been enabled for the account.",
        },
        Reason::OptedOut => Codes {
            twilio: 21610,
            telnyx: "40300",
            vonage: "1240",
            aws: ("ConflictException", "DESTINATION_PHONE_NUMBER_OPTED_OUT"),
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
        assert_eq!(behavior("+14155550123", Provider::Twilio), Behavior::Deliver);
        assert_eq!(behavior(HOLD, Provider::Telnyx), Behavior::Hold);
        assert_eq!(behavior(OPTED_OUT, Provider::Vonage), Behavior::Reject(Reason::OptedOut));
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
            TWILIO_INVALID_NUMBER,
            TWILIO_SENDER_CANNOT_ROUTE,
            TWILIO_NO_PERMISSION,
            TWILIO_OPTED_OUT,
            TWILIO_CANNOT_RECEIVE,
            TELNYX_INVALID_NUMBER,
            TELNYX_SENDER_CANNOT_ROUTE,
            TELNYX_NO_PERMISSION,
            TELNYX_OPTED_OUT,
            TELNYX_CANNOT_RECEIVE,
            PLIVO_INVALID_NUMBER,
            PLIVO_SENDER_CANNOT_ROUTE,
            PLIVO_NO_PERMISSION,
            PLIVO_OPTED_OUT,
            PLIVO_CANNOT_RECEIVE,
            VONAGE_INVALID_NUMBER,
            VONAGE_SENDER_CANNOT_ROUTE,
            VONAGE_NO_PERMISSION,
            VONAGE_OPTED_OUT,
            VONAGE_CANNOT_RECEIVE,
            SINCH_INVALID_NUMBER,
            SINCH_SENDER_CANNOT_ROUTE,
            SINCH_NO_PERMISSION,
            SINCH_OPTED_OUT,
            SINCH_CANNOT_RECEIVE,
            AWS_INVALID_NUMBER,
            AWS_SENDER_CANNOT_ROUTE,
            AWS_NO_PERMISSION,
            AWS_OPTED_OUT,
            AWS_CANNOT_RECEIVE,
            INFOBIP_INVALID_NUMBER,
            INFOBIP_SENDER_CANNOT_ROUTE,
            INFOBIP_NO_PERMISSION,
            INFOBIP_OPTED_OUT,
            INFOBIP_CANNOT_RECEIVE,
            BANDWIDTH_INVALID_NUMBER,
            BANDWIDTH_SENDER_CANNOT_ROUTE,
            BANDWIDTH_NO_PERMISSION,
            BANDWIDTH_OPTED_OUT,
            BANDWIDTH_CANNOT_RECEIVE,
        ];
        let listed: Vec<&str> = recipients().map(|r| r.number).collect();
        let mut distinct = listed.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), listed.len(), "a number is listed twice");
        assert_eq!(listed.len(), all.len());
        assert!(all.iter().all(|n| listed.contains(n)));
        assert_eq!(recipients().find(|r| r.number == HOLD).and_then(|r| r.fault), Some(Fault::Hang));
    }

    /// `+1500555P0RR`: `P` the provider's digit, `RR` the last digits of the recipient every
    /// provider rejects for the same reason.
    #[test]
    fn each_reason_has_one_recipient_per_provider_numbered_from_the_everywhere_one() {
        let everywhere: Vec<Row> = TABLE.iter().filter(|row| row.only_at.is_none()).copied().collect();
        let single: Vec<Row> = TABLE.iter().filter(|row| row.only_at.is_some()).copied().collect();
        let reasons: Vec<(&str, Behavior)> = everywhere
            .iter()
            .filter(|row| matches!(row.behavior, Behavior::Reject(_)))
            .map(|row| (row.number, row.behavior))
            .collect();
        assert_eq!(single.len(), reasons.len() * Provider::ALL.len());
        for (digit, provider) in ('1'..='8').zip(Provider::ALL) {
            for (number, rejection) in &reasons {
                let expected = format!("+1500555{digit}{}", number.get(9..).unwrap_or_default());
                let row = single.iter().find(|row| row.number == expected);
                let row = row.unwrap_or_else(|| panic!("no {expected} for {provider}"));
                assert_eq!((row.only_at, row.behavior), (Some(provider), *rejection), "{expected}");
                for other in Provider::ALL {
                    let at = behavior(&expected, other);
                    assert_eq!(at == *rejection, other == provider, "{expected} at {other}");
                    if other != provider {
                        assert_eq!(at, Behavior::Deliver);
                    }
                }
            }
        }
        // No recipient of one provider is also one every provider treats alike.
        assert!(single.iter().all(|row| everywhere.iter().all(|e| e.number != row.number)));
    }

    #[test]
    fn a_recipient_of_one_provider_says_so_and_its_category_there() {
        let meaning = |number| recipients().find(|r| r.number == number).map(|r| r.meaning);
        assert_eq!(
            meaning(TWILIO_SENDER_CANNOT_ROUTE),
            Some("rejected at twilio only: cannot route from this sender (accepted; twilio: category sender)")
        );
        assert_eq!(
            meaning(PLIVO_OPTED_OUT),
            Some("rejected at plivo only: blocked, opted out (accepted; plivo: category request)")
        );
        let telnyx = recipients().find(|r| r.number == TELNYX_NO_PERMISSION).expect("listed");
        assert_eq!(telnyx.only_at, Some(Provider::Telnyx));
        assert_eq!(telnyx.fault, None);
        assert_eq!(telnyx.expected(Provider::Telnyx), Expected::Rejected(Category::Account));
        for other in Provider::ALL.into_iter().filter(|p| *p != Provider::Telnyx) {
            assert_eq!(telnyx.expected(other), Expected::Accepted, "{other}");
        }
        assert!(recipients().filter(|r| r.only_at.is_none()).all(|r| !r.meaning.contains(" only: ")));
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
            assert_eq!(reason.category(Provider::Sinch), Category::Request, "{reason:?}");
            assert_ne!(reason.category(Provider::Vonage), Category::Request, "{reason:?}");
        }
        let meaning = |number| recipients().find(|r| r.number == number).map(|r| r.meaning);
        assert_eq!(
            meaning(SENDER_CANNOT_ROUTE),
            Some(
                "rejected: cannot route from this sender (category sender; plivo: category request; sinch: category request)"
            )
        );
        assert_eq!(meaning(SERVER_ERROR), Some("answered HTTP 500 (at bandwidth 503) (unknown, reason server_error)"));
        // AWS has no recipient category; its sender, account and compliance answers keep theirs.
        let aws = |reason: Reason| reason.category(Provider::Aws);
        assert_eq!(
            [Reason::InvalidNumber, Reason::CannotReceive, Reason::InvalidSender].map(aws),
            [Category::Request; 3]
        );
        assert_eq!(
            [Reason::SenderCannotRoute, Reason::NoPermission, Reason::OptedOut].map(aws),
            [Category::Sender, Category::Account, Category::Compliance]
        );
        assert_eq!(
            meaning(INVALID_NUMBER),
            Some(
                "rejected: invalid number (category recipient; plivo: category request; sinch: category request; \
                 aws: category request)"
            )
        );
        assert_eq!(
            recipients().find(|r| r.number == RATE_LIMITED_ONCE).map(|r| r.expected(Provider::Plivo)),
            Some(Expected::RateLimitedThenAccepted)
        );
    }
}
