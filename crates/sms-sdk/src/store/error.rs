//! The one error of the stores: what failed, where, and the driver's reason.
// Only the durable stores (features `sqlite`, `postgres`, `redis`) report timeouts, places and
// corrupt records.
#![cfg_attr(
    not(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb")),
    allow(dead_code)
)]

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use crate::BoxError;

/// The most characters of a key quoted in an error message.
const MAX_KEY_IN_MESSAGE: usize = 64;
/// The most errors of a source chain that [`StoreError`]'s `Display` walks.
const MAX_CHAIN: usize = 16;

/// An idempotency store failed (unreachable, timed out, corrupt record, …). Nothing was sent
/// because of it.
///
/// Its `Display` says where (the SQLite path, or the PostgreSQL or Redis host, port and database,
/// never credentials) and why, with the driver's reason from the whole source chain:
/// `idempotency store error: PostgreSQL at 127.0.0.1:5432/app (sslmode=prefer): reserve timed out
/// after 10 s (the operation timeout)`. [`is_timeout`](Self::is_timeout) and
/// [`is_corrupt`](Self::is_corrupt) tell the two failures a caller may want to treat apart.
#[derive(Debug)]
pub struct StoreError(BoxError);

/// Which configured limit a store hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// Opening a connection (or a database file).
    Connect,
    /// One operation: a statement, a script, a command, or waiting for a pooled connection.
    Operation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Backend,
    Timeout,
    Corrupt,
    NewerFormat,
    Throttled,
}

/// What a store says about a failure: its kind, where, and a message over an optional source.
#[derive(Debug)]
struct Failure {
    kind: Kind,
    place: Option<String>,
    message: String,
    source: Option<BoxError>,
    /// What the failure suggests about the configuration, said after the driver's reason.
    hint: Option<&'static str>,
}

impl StoreError {
    /// Wraps a backend error.
    pub fn new(error: impl Into<BoxError>) -> Self {
        Self(error.into())
    }

    /// True when a store limit (the connect or the operation timeout) ran out: the store may be
    /// overloaded or unreachable, and nothing waits any longer.
    #[must_use]
    pub fn is_timeout(&self) -> bool {
        self.failure().is_some_and(|f| f.kind == Kind::Timeout)
    }

    /// True when a record read back from the store is not one the store could have written (a
    /// malformed fingerprint, an unknown state, times out of range, a result that does not parse).
    #[must_use]
    pub fn is_corrupt(&self) -> bool {
        self.failure().is_some_and(|f| f.kind == Kind::Corrupt)
    }

    /// True when a record was written in a stored format newer than this release reads (by a
    /// newer release sharing the store): upgrade this one. The record is left as it is, and the
    /// key is never taken for unused.
    #[must_use]
    pub fn is_newer_format(&self) -> bool {
        self.failure().is_some_and(|f| f.kind == Kind::NewerFormat)
    }

    /// True when the store refused the call for the throughput it was given (DynamoDB's
    /// throttling, after the SDK's retries): nothing was written, and a later call may pass.
    #[must_use]
    pub fn is_throttled(&self) -> bool {
        self.failure().is_some_and(|f| f.kind == Kind::Throttled)
    }

    /// The store at `place` throttled the call: `reason`.
    #[cfg_attr(not(feature = "dynamodb"), allow(dead_code))] // only DynamoDB throttles
    pub(crate) fn throttled(place: &str, reason: &str) -> Self {
        Self::failure_of(Kind::Throttled, Some(place), format!("throttled: {reason}"))
    }

    /// The stored record of `key` is in format `version`, newer than the `known` one.
    pub(crate) fn newer_format(key: &str, version: u32, known: u32) -> Self {
        let message = format!(
            "the record of key {} is in stored format version {version}, written by a newer release; this one reads \
             versions up to {known}: upgrade it (the record is left as it is)",
            quote_key(key)
        );
        Self::failure_of(Kind::NewerFormat, None, message)
    }

    /// `what` at `place` took longer than `limit` allows (`after`).
    pub(crate) fn timeout(place: &str, what: &str, limit: Limit, after: Duration) -> Self {
        let limit = match limit {
            Limit::Connect => "the connect timeout",
            Limit::Operation => "the operation timeout",
        };
        Self::failure_of(Kind::Timeout, Some(place), format!("{what} timed out after {} ({limit})", human(after)))
    }

    /// The stored record of `key` is not one the store could have written: `what` is wrong.
    pub(crate) fn corrupt(key: &str, what: impl fmt::Display) -> Self {
        Self::failure_of(Kind::Corrupt, None, format!("the record of key {} is corrupt: {what}", quote_key(key)))
    }

    /// The same error, saying that it happened at `place` (when it does not say where yet).
    #[must_use]
    pub(crate) fn at(mut self, place: &str) -> Self {
        if let Some(failure) = self.0.downcast_mut::<Failure>() {
            failure.place.get_or_insert_with(|| place.to_owned());
            return self;
        }
        Self(Box::new(Failure { place: Some(place.to_owned()), ..Failure::over(self.0) }))
    }

    /// The same error, ending with `hint`: what it suggests about the configuration (a URL
    /// scheme that does not match the server, say).
    #[must_use]
    #[cfg_attr(not(any(feature = "redis", feature = "dynamodb")), allow(dead_code))] // the stores that give hints
    pub(crate) fn hint(self, hint: &'static str) -> Self {
        let mut error = if self.failure().is_some() { self } else { Self(Box::new(Failure::over(self.0))) };
        if let Some(failure) = error.0.downcast_mut::<Failure>() {
            failure.hint = Some(hint);
        }
        error
    }

    fn failure_of(kind: Kind, place: Option<&str>, message: String) -> Self {
        Self(Box::new(Failure { kind, place: place.map(str::to_owned), message, source: None, hint: None }))
    }

    fn failure(&self) -> Option<&Failure> {
        self.0.downcast_ref::<Failure>()
    }
}

impl fmt::Display for StoreError {
    /// The failure and every distinct message of its source chain, joined by `: `, then the first
    /// hint of the chain in parentheses.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = self.0.to_string();
        write!(f, "idempotency store error: {first}")?;
        let mut written = first;
        let mut hint = self.failure().and_then(|failure| failure.hint);
        let mut source = self.0.source();
        for _ in 0..MAX_CHAIN {
            let Some(error) = source else { break };
            hint = hint.or_else(|| error.downcast_ref::<Failure>().and_then(|failure| failure.hint));
            let text = error.to_string();
            if !text.is_empty() && !written.contains(&text) {
                let separator = if written.is_empty() { "" } else { ": " };
                write!(f, "{separator}{text}")?;
                written.push_str(&text);
            }
            source = error.source();
        }
        match hint {
            Some(hint) => write!(f, " ({hint})"),
            None => Ok(()),
        }
    }
}

impl Failure {
    /// A backend error, said as it is.
    fn over(source: BoxError) -> Self {
        Self { kind: Kind::Backend, place: None, message: String::new(), source: Some(source), hint: None }
    }
}

impl StdError for StoreError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.0)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.place, self.message.is_empty()) {
            (Some(place), true) => f.write_str(place),
            (Some(place), false) => write!(f, "{place}: {}", self.message),
            (None, _) => f.write_str(&self.message),
        }
    }
}

impl StdError for Failure {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_ref().map(|s| &**s as &(dyn StdError + 'static))
    }
}

impl From<StoreError> for crate::Error {
    /// A store failure: `ErrorKind::Store`, with the backend error as its source.
    fn from(error: StoreError) -> Self {
        Self::store(Box::new(error))
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(error: serde_json::Error) -> Self {
        Self::new(error)
    }
}

/// `key` quoted for a message: escaped, and cut to 64 characters.
pub(crate) fn quote_key(key: &str) -> String {
    let mut chars = key.chars();
    let shown: String = chars.by_ref().take(MAX_KEY_IN_MESSAGE).collect();
    if chars.next().is_some() { format!("{shown:?}…") } else { format!("{shown:?}") }
}

/// `10 s`, `1.5 s` or `250 ms`.
pub(crate) fn human(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1_000 {
        format!("{millis} ms")
    } else if millis.is_multiple_of(1_000) {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_walks_the_source_chain_once() {
        let io = std::io::Error::other("connection refused");
        let error = StoreError::new(io).at("PostgreSQL at 127.0.0.1:5432/app");
        assert_eq!(error.to_string(), "idempotency store error: PostgreSQL at 127.0.0.1:5432/app: connection refused");
        assert!(!error.is_timeout() && !error.is_corrupt());
        let plain = StoreError::new("the store went away");
        assert_eq!(plain.to_string(), "idempotency store error: the store went away");
    }

    /// An error around a store error, as the command's.
    #[derive(Debug)]
    struct Around(StoreError);
    impl fmt::Display for Around {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the store redis://h:1 did not open")
        }
    }
    impl StdError for Around {
        fn source(&self) -> Option<&(dyn StdError + 'static)> {
            StdError::source(&self.0)
        }
    }

    #[test]
    fn a_hint_ends_the_message_wherever_it_is_in_the_chain() {
        let io = std::io::Error::other("Moved: 15283 127.0.0.1:17003");
        let hinted = StoreError::new(io).hint("use a redis-cluster:// URL").at("Redis at h:1/0");
        assert_eq!(
            hinted.to_string(),
            "idempotency store error: Redis at h:1/0: Moved: 15283 127.0.0.1:17003 (use a redis-cluster:// URL)"
        );
        // Wrapped by another error (the command names the URL that did not open).
        let around = StoreError::new(Around(hinted));
        assert_eq!(
            around.to_string(),
            "idempotency store error: the store redis://h:1 did not open: Redis at h:1/0: Moved: 15283 \
             127.0.0.1:17003 (use a redis-cluster:// URL)"
        );
        assert_eq!(StoreError::new("plain").hint("h").to_string(), "idempotency store error: plain (h)");
    }

    #[test]
    fn timeouts_say_which_limit_and_where() {
        let error = StoreError::timeout("SQLite at /tmp/x.db", "reserve", Limit::Operation, Duration::from_secs(10));
        assert!(error.is_timeout());
        assert_eq!(
            error.to_string(),
            "idempotency store error: SQLite at /tmp/x.db: reserve timed out after 10 s (the operation timeout)"
        );
        let error = StoreError::timeout("Redis at h:1/0", "connect", Limit::Connect, Duration::from_millis(1_500));
        assert!(error.to_string().ends_with("connect timed out after 1.5 s (the connect timeout)"), "{error}");
        assert_eq!(error.at("elsewhere").to_string().matches("Redis at h:1/0").count(), 1);
    }

    #[test]
    fn corrupt_records_name_a_capped_key() {
        let error = StoreError::corrupt(&"k".repeat(100), "unknown state").at("SQLite at x");
        assert!(error.is_corrupt());
        let text = error.to_string();
        assert!(text.contains(&format!("{:?}…", "k".repeat(64))) && !text.contains(&"k".repeat(65)), "{text}");
        assert_eq!(quote_key("a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(human(Duration::from_millis(250)), "250 ms");
    }
}
