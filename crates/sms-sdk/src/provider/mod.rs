//! The provider adapters, one module and one cargo feature each.
//!
//! An adapter is built from credentials alone (checked then, with no request); the client sends
//! through them in the order given:
//!
//! ```
//! # #[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))] {
//! use sms_sdk::{Client, Failover, Plivo, Telnyx, Twilio, Vonage};
//!
//! let client = Client::builder()
//!     .adapter(Twilio::builder("AC0123456789abcdef0123456789abcdef", "auth-token").from("+15005550006").build()?)
//!     .adapter(Telnyx::builder("KEY_test").from("+15005550006").build()?)
//!     .adapter(Plivo::builder("MAXXXXXXXXXXXXXXXXXX", "plivo-token").from("+15005550006").build()?)
//!     .adapter(Vonage::basic("api-key", "api-secret").from("+15005550006").build()?)
//!     .failover(Failover::OnEligibleRejection)
//!     .build()?;
//! let names: Vec<&str> = client.adapters().iter().map(|info| info.name.as_str()).collect();
//! assert_eq!(names, ["twilio", "telnyx", "plivo", "vonage"]);
//!
//! // A credential that cannot be right is refused at once, naming it.
//! let error = Twilio::builder("AC123", "auth-token").build().unwrap_err();
//! assert_eq!(error.code(), "configuration");
//! # }
//! # Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! Every provider folder has the same shape: `mod.rs` (configuration, the
//! [`Adapter`](crate::Adapter) impl, the public surface), `request.rs` (capabilities, typed
//! options, limits and the request body), `response.rs` (a pure `interpret(status, headers, body,
//! now) -> Outcome`: the provider's facts and code table for the one skeleton in `http`),
//! `webhook.rs` (the verifier and its signing functions) and `lookup.rs` (the
//! [`Lookup`](crate::lookup::Lookup) that [`Adapter::lookup`](crate::Adapter::lookup) returns).
//!
//! A provider module's public surface is its adapter and builder, its webhook verifier, `NAME`,
//! `DEFAULT_BASE_URL` and the signing functions needed to build signed test requests. The wire
//! facts and pure functions that the emulator and the test suites also use sit in the provider's
//! `#[doc(hidden)] __private` module: not part of the stable API, they may change in any release.

#[cfg(feature = "aws")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws")))]
pub mod aws;
#[cfg(feature = "bandwidth")]
#[cfg_attr(docsrs, doc(cfg(feature = "bandwidth")))]
pub mod bandwidth;
#[cfg(feature = "infobip")]
#[cfg_attr(docsrs, doc(cfg(feature = "infobip")))]
pub mod infobip;
#[cfg(feature = "plivo")]
#[cfg_attr(docsrs, doc(cfg(feature = "plivo")))]
pub mod plivo;
#[cfg(feature = "sinch")]
#[cfg_attr(docsrs, doc(cfg(feature = "sinch")))]
pub mod sinch;
#[cfg(feature = "telnyx")]
#[cfg_attr(docsrs, doc(cfg(feature = "telnyx")))]
pub mod telnyx;
#[cfg(feature = "twilio")]
#[cfg_attr(docsrs, doc(cfg(feature = "twilio")))]
pub mod twilio;
#[cfg(feature = "vonage")]
#[cfg_attr(docsrs, doc(cfg(feature = "vonage")))]
pub mod vonage;

/// True when `value` is `prefix` followed by exactly 32 hex digits (either case).
#[allow(dead_code)] // not every provider feature uses it
pub(crate) fn is_prefixed_hex32(value: &str, prefix: &str) -> bool {
    value.strip_prefix(prefix).is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}
