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

pub mod adapter_contract;
mod memory;

pub use memory::{
    MemoryAdapter, MemoryAdapterBuilder, MemoryOutcome, RejectedOptions, SentMessage, accepted_outcome,
    rejected_outcome, unknown_outcome,
};
