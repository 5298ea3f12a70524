//! Status ordering: a status that arrives late never moves a message backwards.
//!
//! Providers deliver status callbacks out of order and more than once. Each provider's own
//! sequence runs forward from queued to a final status:
//! Twilio `queued → sending → sent → delivered | undelivered | failed`, Telnyx `queued → sending →
//! sent → delivered | delivery_failed | …`, Plivo `queued → sent → delivered | undelivered`,
//! Vonage `submitted → delivered | rejected | undeliverable`. So a message's status only moves to
//! a later stage: a `sent` that arrives after `delivered` is ignored, and the first final status
//! wins.
//!
//! ```
//! use sms_sdk::webhook::event::DeliveryStatus;
//! use sms_sdk::webhook::ordering::advances;
//!
//! assert!(advances(None, DeliveryStatus::Sent));
//! assert!(advances(Some(DeliveryStatus::Sent), DeliveryStatus::Delivered));
//! assert!(!advances(Some(DeliveryStatus::Delivered), DeliveryStatus::Sent));
//! ```

use super::event::DeliveryStatus;

/// The stage of a status: queued 0, sent 1, final (delivered, undelivered, filtered) 2.
#[must_use]
pub const fn stage(status: DeliveryStatus) -> u8 {
    match status {
        DeliveryStatus::Queued => 0,
        DeliveryStatus::Sent => 1,
        DeliveryStatus::Delivered | DeliveryStatus::Undelivered | DeliveryStatus::Filtered => 2,
    }
}

/// Whether `incoming` should replace the `current` status of a message: only when it is a
/// later stage (so duplicates, late arrivals and a second final status are ignored).
#[must_use]
pub fn advances(current: Option<DeliveryStatus>, incoming: DeliveryStatus) -> bool {
    current.is_none_or(|current| stage(incoming) > stage(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_only_move_forward() {
        use DeliveryStatus::{Delivered, Filtered, Queued, Sent, Undelivered};
        assert!(advances(Some(Queued), Sent));
        assert!(advances(Some(Queued), Delivered));
        assert!(!advances(Some(Sent), Sent));
        assert!(!advances(Some(Delivered), Sent));
        assert!(!advances(Some(Delivered), Queued));
        assert!(!advances(Some(Undelivered), Delivered));
        assert!(!advances(Some(Filtered), Undelivered));
    }
}
