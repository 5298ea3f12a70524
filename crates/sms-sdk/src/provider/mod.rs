//! The provider adapters, one module and one cargo feature each.
//!
//! Every provider folder has the same shape: `mod.rs` (configuration, request building, the
//! [`Adapter`](crate::Adapter) impl), `response.rs` (a pure `interpret(status, headers, body,
//! now) -> Outcome` with the provider's code table) and, with the webhooks, `webhook.rs`.

#[cfg(feature = "plivo")]
#[cfg_attr(docsrs, doc(cfg(feature = "plivo")))]
pub mod plivo;
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
