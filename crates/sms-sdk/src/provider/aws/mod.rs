//! AWS End User Messaging SMS (`pinpoint-sms-voice-v2`): support level `in progress`.
//!
//! So far this module holds the request signing every call to the service needs, AWS Signature
//! Version 4 ([`sigv4`], checked against AWS's published test suite), the `SendTextMessage` body
//! (the correlation reference in its `Context`, which every delivery event echoes) and the
//! classification of its answers. The adapter, the SNS webhook verifier and the command's
//! `--provider aws` come next; `docs/provider-facts.md` tracks what is done.

mod request;
mod response;
pub mod sigv4;

/// Wire facts and pure functions the emulator and the test suites share; not part of the stable
/// API, may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use super::request::{
        CONTENT_TYPE, MAX_TIME_TO_LIVE_SECS, MIN_TIME_TO_LIVE_SECS, OPTIONS, TARGET, capabilities, request_body,
    };
    pub use super::response::{error_type, interpret, rejection_category};
}

/// The adapter's name.
pub const NAME: &str = "aws";

/// The service name requests to End User Messaging SMS are signed for.
pub const SIGNING_SERVICE: &str = "sms-voice";
