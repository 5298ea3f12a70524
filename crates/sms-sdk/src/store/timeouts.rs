//! The two limits every durable store applies: connect and operation timeouts.
// Only the durable stores (features `sqlite`, `postgres`, `redis`, `dynamodb`) apply them.
#![cfg_attr(
    not(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb")),
    allow(dead_code)
)]

use std::time::Duration;

use super::StoreError;

/// How long a durable store waits to connect (or open its file) by default: 5 seconds.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one store operation (a statement, a script, a command) may take by default: 10
/// seconds.
pub const DEFAULT_OPERATION_TIMEOUT: Duration = Duration::from_secs(10);

/// The `connect_timeout` and `operation_timeout` setters of a store builder (one with a
/// `timeouts: Timeouts` field), each with its own documentation.
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
macro_rules! timeout_setters {
    (connect: $connect:literal, operation: $operation:literal $(,)?) => {
        #[doc = $connect]
        pub fn connect_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.timeouts.connect = timeout;
            self
        }

        #[doc = $operation]
        pub fn operation_timeout(mut self, timeout: std::time::Duration) -> Self {
            self.timeouts.operation = timeout;
            self
        }
    };
}
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
pub(crate) use timeout_setters;

/// A store's connect and operation timeouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timeouts {
    pub(crate) connect: Duration,
    pub(crate) operation: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { connect: DEFAULT_CONNECT_TIMEOUT, operation: DEFAULT_OPERATION_TIMEOUT }
    }
}

impl Timeouts {
    /// The timeouts, or an error when one is zero (every operation would fail).
    pub(crate) fn checked(self) -> Result<Self, StoreError> {
        if self.connect.is_zero() || self.operation.is_zero() {
            return Err(StoreError::new("store timeouts must be longer than zero"));
        }
        Ok(self)
    }

    /// Runs `work`, a connection attempt at `place`, for at most the connect timeout.
    #[cfg(any(feature = "sqlite", feature = "redis", feature = "dynamodb"))]
    pub(crate) async fn connect<T>(
        self,
        place: &str,
        work: impl std::future::Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        bounded(place, "connect", super::error::Limit::Connect, self.connect, work).await
    }

    /// Runs `work`, the operation `what` at `place`, for at most the operation timeout.
    #[cfg(any(feature = "sqlite", feature = "redis", feature = "dynamodb"))]
    pub(crate) async fn operation<T>(
        self,
        place: &str,
        what: &str,
        work: impl std::future::Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        bounded(place, what, super::error::Limit::Operation, self.operation, work).await
    }
}

#[cfg(any(feature = "sqlite", feature = "redis", feature = "dynamodb"))]
async fn bounded<T>(
    place: &str,
    what: &str,
    limit: super::error::Limit,
    after: Duration,
    work: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(after, work).await {
        Ok(result) => result.map_err(|e| e.at(place)),
        Err(_) => Err(StoreError::timeout(place, what, limit, after)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_timeouts_are_refused() {
        assert!(Timeouts::default().checked().is_ok());
        assert!(Timeouts { connect: Duration::ZERO, ..Timeouts::default() }.checked().is_err());
        assert!(Timeouts { operation: Duration::ZERO, ..Timeouts::default() }.checked().is_err());
        assert!(Timeouts { connect: Duration::MAX, operation: Duration::MAX }.checked().is_ok());
    }
}
