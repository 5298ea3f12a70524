//! The clock and the timestamps of the timestamped schemes.

// Shared by the four provider features: a build with only some of them leaves some helpers unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

use std::time::SystemTime;

/// Seconds since the epoch (negative before it), saturating at the ends of `i64`.
pub(crate) fn unix_seconds(now: SystemTime) -> i64 {
    match now.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, i64::saturating_neg),
    }
}

/// Refuses a Unix-seconds timestamp header of `provider` that is not decimal digits
/// (`MalformedSignature`), or that is more than `tolerance` from `now`, past or future
/// (`StaleTimestamp`).
pub(crate) fn check_unix_timestamp(
    provider: &'static str,
    timestamp: &str,
    now: SystemTime,
    tolerance: std::time::Duration,
) -> Result<(), crate::webhook::WebhookError> {
    use crate::webhook::WebhookError;
    if timestamp.is_empty() || !timestamp.bytes().all(|b| b.is_ascii_digit()) {
        return Err(WebhookError::MalformedSignature { provider });
    }
    let sent = timestamp.parse::<i64>().map_err(|_| WebhookError::MalformedSignature { provider })?;
    // `abs_diff` cannot overflow, whatever the clock and the header say.
    if unix_seconds(now).abs_diff(sent) > tolerance.as_secs() {
        return Err(WebhookError::StaleTimestamp { provider });
    }
    Ok(())
}

/// A lenient timestamp (`…Z`, `…+00:00`, fractional seconds), as providers send them.
pub(crate) fn parse_time(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn clocks_before_the_epoch_are_negative_seconds() {
        assert_eq!(unix_seconds(SystemTime::UNIX_EPOCH - Duration::from_secs(5)), -5);
        assert_eq!(unix_seconds(SystemTime::UNIX_EPOCH + Duration::from_secs(5)), 5);
    }
}
