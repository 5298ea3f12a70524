//! Bandwidth (in progress).
//!
//! ```
//! // The adapter comes in the next steps.
//! ```
