//! Test helpers, shipped as public API (feature `testing`): an in-memory adapter with scripted
//! outcomes, and outcome helpers.
//!
//! ```
//! use sms_sdk::adapter::Category;
//! use sms_sdk::testing::{rejected_outcome, MemoryAdapter, RejectedOptions};
//! use sms_sdk::{Client, ErrorKind, Message};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let memory = MemoryAdapter::new();
//! memory.enqueue(rejected_outcome(Category::Recipient, RejectedOptions::default()));
//! let client = Client::builder().adapter(memory.clone()).build()?;
//! let message = Message::new("+14155550123", "Hi");
//! assert_eq!(client.send(&message).await.unwrap_err().kind(), ErrorKind::Rejected(Category::Recipient));
//! assert_eq!(client.send(&message).await?.provider_id, "memory_2");
//! assert_eq!(memory.sent().len(), 2);
//! # Ok::<(), sms_sdk::Error>(()) }).unwrap();
//! ```

/// Returns `Err(message)` from a check when `cond` is false.
macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

pub mod adapter_contract;
pub mod dedupe_contract;
mod memory;
pub mod store_contract;
pub mod suppression_contract;
pub mod webhooks;

use std::fmt::Write as _;

pub use memory::{
    MemoryAdapter, MemoryAdapterBuilder, MemoryOutcome, RejectedOptions, SentMessage, accepted_outcome,
    rejected_outcome, unknown_outcome,
};

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseResult {
    /// `<subject>: <check>`.
    pub name: String,
    /// Whether it passed.
    pub passed: bool,
    /// Why it failed.
    pub error: Option<String>,
}

/// The result of the whole contract.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// What was checked: the adapter's name, or the store's.
    pub subject: String,
    /// True when every check passed.
    pub passed: bool,
    /// Every check, in order.
    pub results: Vec<CaseResult>,
}

impl Report {
    /// The failed checks, one per line.
    #[must_use]
    pub fn failures(&self) -> String {
        self.results.iter().filter(|r| !r.passed).fold(String::new(), |mut s, r| {
            let _ = writeln!(s, "{}: {}", r.name, r.error.as_deref().unwrap_or(""));
            s
        })
    }
}
