//! When to retry a rate-limited request on the same adapter, and how long to wait.
//!
//! Only a `RateLimited` rejection is ever retried; an unknown outcome never is. The decision is a
//! pure function of the attempt number, the provider's `Retry-After` and a jitter value in
//! `[0, 1)`, so it can be tested without clocks or randomness.
//!
//! ```
//! use std::time::Duration;
//! use sms_sdk::retry::{Decision, RetryPolicy};
//!
//! let policy = RetryPolicy::new(3, Duration::from_millis(100), Duration::from_secs(1));
//! assert_eq!(policy.decide(1, None, 0.999), Decision::Wait(Duration::from_millis(99)));
//! assert_eq!(policy.decide(1, Some(Duration::from_secs(5)), 0.5), Decision::Stop);
//! assert_eq!(policy.decide(3, None, 0.5), Decision::Stop);
//! ```

use std::time::{Duration, SystemTime};

/// Requests per adapter, and the backoff between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    base: Duration,
    max: Duration,
}

/// What to do after a rate-limited attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Wait this long, then send again on the same adapter.
    Wait(Duration),
    /// Give up on this adapter.
    Stop,
}

impl Default for RetryPolicy {
    /// Two requests per adapter, 500 ms base, 10 s cap.
    fn default() -> Self {
        Self::new(2, Duration::from_millis(500), Duration::from_secs(10))
    }
}

impl RetryPolicy {
    /// A policy of `max_attempts` requests per adapter (at least 1), full-jitter exponential
    /// backoff from `base`, and no wait longer than `max` (raised to `base` when lower).
    #[must_use]
    pub fn new(max_attempts: u32, base: Duration, max: Duration) -> Self {
        Self { max_attempts: max_attempts.max(1), base, max: max.max(base) }
    }

    /// One request per adapter: never retry.
    #[must_use]
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// Requests per adapter, counting the first.
    #[must_use]
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The backoff base.
    #[must_use]
    pub fn base(&self) -> Duration {
        self.base
    }

    /// The longest wait.
    #[must_use]
    pub fn max_delay(&self) -> Duration {
        self.max
    }

    /// Decides after attempt number `attempt` (1-based) was rate-limited.
    ///
    /// A `retry_after` within the cap is honored exactly and a longer one stops; without one,
    /// the wait is `floor(jitter × min(max, base × 2^(attempt−1)))` whole milliseconds.
    #[must_use]
    pub fn decide(&self, attempt: u32, retry_after: Option<Duration>, jitter: f64) -> Decision {
        if attempt >= self.max_attempts {
            return Decision::Stop;
        }
        if let Some(wait) = retry_after {
            return if wait <= self.max { Decision::Wait(wait) } else { Decision::Stop };
        }
        // Milliseconds are exact as floats below 2^53 (285,000 years).
        #[allow(clippy::cast_precision_loss)]
        let (base_ms, max_ms) = (self.base.as_millis() as f64, self.max.as_millis() as f64);
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let ceiling = (base_ms * 2f64.powi(exponent)).min(max_ms);
        let delay = (jitter.clamp(0.0, 1.0) * ceiling).floor().min(max_ms);
        // Whole, within [0, max_ms] (`min` of a NaN is `max_ms`); `as` saturates past `u64::MAX`.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let delay = delay as u64;
        Decision::Wait(Duration::from_millis(delay))
    }
}

/// Parses a `Retry-After` value: whole seconds, or an HTTP date (or RFC 3339 timestamp) read
/// against `now`. Unreadable values give `None`; a date in the past gives zero.
#[must_use]
pub fn parse_retry_after(value: Option<&str>, now: SystemTime) -> Option<Duration> {
    let value = crate::redact::js_trim(value?);
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse::<u64>().ok().map(Duration::from_secs);
    }
    let at = httpdate::parse_http_date(value).ok().or_else(|| {
        time::OffsetDateTime::parse(value, &time::format_description::well_known::Rfc3339).ok().map(SystemTime::from)
    })?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy::new(3, Duration::from_millis(100), Duration::from_secs(1))
    }

    #[test]
    fn t027_stops_after_the_last_attempt() {
        assert_eq!(policy().decide(3, None, 0.5), Decision::Stop);
    }

    #[test]
    fn t028_full_jitter_floors_to_whole_milliseconds() {
        assert_eq!(policy().decide(1, None, 0.999), Decision::Wait(Duration::from_millis(99)));
        assert_eq!(policy().decide(2, None, 0.5), Decision::Wait(Duration::from_millis(100)));
        assert_eq!(policy().decide(1, None, 0.0), Decision::Wait(Duration::ZERO));
    }

    #[test]
    fn t029_backoff_is_capped() {
        let p = RetryPolicy::new(20, Duration::from_millis(100), Duration::from_secs(1));
        assert_eq!(p.decide(10, None, 0.999), Decision::Wait(Duration::from_millis(999)));
    }

    #[test]
    fn t030_retry_after_within_the_cap_is_honored_and_a_longer_one_stops() {
        assert_eq!(
            policy().decide(1, Some(Duration::from_millis(500)), 0.3),
            Decision::Wait(Duration::from_millis(500))
        );
        assert_eq!(policy().decide(1, Some(Duration::from_secs(5)), 0.3), Decision::Stop);
    }

    #[test]
    fn t031_defaults_and_clamping() {
        let d = RetryPolicy::default();
        assert_eq!(
            (d.max_attempts(), d.base(), d.max_delay()),
            (2, Duration::from_millis(500), Duration::from_secs(10))
        );
        assert_eq!(RetryPolicy::new(0, d.base(), d.max_delay()).max_attempts(), 1);
        let raised = RetryPolicy::new(2, Duration::from_millis(800), Duration::from_millis(100));
        assert_eq!(raised.max_delay(), Duration::from_millis(800));
    }

    #[test]
    fn t032_parse_retry_after() {
        let now = SystemTime::UNIX_EPOCH;
        assert_eq!(parse_retry_after(Some("3"), now), Some(Duration::from_secs(3)));
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        assert_eq!(parse_retry_after(Some("Wed, 21 Oct 2015 07:28:05 GMT"), now), Some(Duration::from_secs(5)));
        assert_eq!(parse_retry_after(None, now), None);
        assert_eq!(parse_retry_after(Some("soon"), now), None);
        assert_eq!(parse_retry_after(Some(" 2 "), now), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(Some("Wed, 21 Oct 2015 07:27:00 GMT"), now), Some(Duration::ZERO));
    }

    proptest::proptest! {
        #[test]
        fn decide_never_waits_longer_than_the_cap(
            attempts in 1u32..50,
            attempt in 0u32..60,
            base_ms in 0u64..100_000,
            max_ms in 0u64..100_000,
            retry_after_ms in proptest::option::of(0u64..200_000),
            jitter in 0.0f64..1.0,
        ) {
            let p = RetryPolicy::new(attempts, Duration::from_millis(base_ms), Duration::from_millis(max_ms));
            if let Decision::Wait(wait) = p.decide(attempt, retry_after_ms.map(Duration::from_millis), jitter) {
                proptest::prop_assert!(wait <= p.max_delay());
            }
        }
    }
}
