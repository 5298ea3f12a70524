//! Why an emulator did not start.

use std::error::Error as StdError;
use std::fmt;

/// What kind of problem stopped the emulator from starting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StartErrorKind {
    /// The listen address cannot be read.
    InvalidAddress,
    /// The listen address is not a loopback address.
    NotLoopback,
    /// The webhook or inbound URL is not an absolute http(s) URL.
    InvalidUrl,
    /// A delay or timeout is out of range (over a day, or a zero header read timeout).
    InvalidSetting,
    /// The address could not be bound (taken, or not permitted).
    Bind,
    /// The fixed keys or the webhook HTTP client could not be set up (a bug).
    Internal,
}

/// Why the emulator did not start.
#[derive(Debug)]
pub struct StartError {
    kind: StartErrorKind,
    message: String,
    source: Option<Box<dyn StdError + Send + Sync>>,
}

impl StartError {
    pub(crate) fn new(kind: StartErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), source: None }
    }

    pub(crate) fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    pub(crate) fn with_boxed_source(mut self, source: Box<dyn StdError + Send + Sync>) -> Self {
        self.source = Some(source);
        self
    }

    /// What kind of problem it is.
    #[must_use]
    pub fn kind(&self) -> StartErrorKind {
        self.kind
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl StdError for StartError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_deref().map(|source| source as &(dyn StdError + 'static))
    }
}
