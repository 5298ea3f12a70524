//! The magic recipients: the one table from a recipient number to what the emulator does with
//! a send to it, and the table of each provider's error code for each kind of rejection.
//!
//! Any recipient that is not listed here is accepted and delivered.

/// Invalid number: rejected, category `recipient`.
pub const INVALID_NUMBER: &str = "+15005550001";
/// Cannot route from this sender: rejected, category `sender`.
pub const SENDER_CANNOT_ROUTE: &str = "+15005550002";
/// No international permission: rejected, category `account`.
pub const NO_PERMISSION: &str = "+15005550003";
/// Blocked, opted out: rejected, category `compliance`.
pub const OPTED_OUT: &str = "+15005550004";
/// Cannot receive SMS: rejected, category `recipient`.
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

const TABLE: &[(&str, Behavior)] = &[
    (INVALID_NUMBER, Behavior::Reject(Reason::InvalidNumber)),
    (SENDER_CANNOT_ROUTE, Behavior::Reject(Reason::SenderCannotRoute)),
    (NO_PERMISSION, Behavior::Reject(Reason::NoPermission)),
    (OPTED_OUT, Behavior::Reject(Reason::OptedOut)),
    (CANNOT_RECEIVE, Behavior::Reject(Reason::CannotReceive)),
    (UNDELIVERED, Behavior::Undeliver),
    (SERVER_ERROR, Behavior::ServerError),
    (HOLD, Behavior::Hold),
    (RESET, Behavior::Reset),
    (RATE_LIMITED_ONCE, Behavior::RateLimitOnce),
    (BARE_429, Behavior::Bare429),
    (UNREADABLE, Behavior::Unreadable),
    (CREATED_THEN_DROPPED, Behavior::CreateThenDrop),
    (RATE_LIMITED, Behavior::RateLimitAlways),
];

/// What to do with a send to `to` (an E.164 number).
pub(crate) fn behavior(to: &str) -> Behavior {
    TABLE.iter().find(|(number, _)| *number == to).map_or(Behavior::Deliver, |(_, behavior)| *behavior)
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
}
