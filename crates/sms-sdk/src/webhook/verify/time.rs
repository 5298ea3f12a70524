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
