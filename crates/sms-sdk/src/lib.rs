#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

pub mod adapter;
pub mod batch;
mod boxed;
mod client;
mod coalesce;
pub mod correlation;
mod digest;
pub mod encoding;
pub mod error;
mod failover;
mod gate;
pub mod hooks;
#[cfg(feature = "__http")]
mod http;
mod issue;
#[cfg(feature = "__http")]
mod json;
mod limits;
pub mod lookup;
pub mod message;
pub mod metrics;
pub mod options;
mod outcome;
pub mod provider;
mod random;
#[cfg(all(test, feature = "__http"))]
mod random_json;
pub mod rate;
mod receipt;
pub mod reconcile;
pub mod redact;
pub mod retry;
pub mod store;
pub mod suppression;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
#[cfg(feature = "__http")]
mod transport;
pub mod validate;
pub mod webhook;

pub use adapter::{Adapter, Category, Delivery, Outcome, UnknownReason};
pub use client::{Client, ClientBuilder, Failover, SendOptions};
pub use error::{Error, ErrorKind, Limit};
pub use message::{Message, OutboundMessage, PhoneNumber, Sender};
pub use receipt::Receipt;
pub use retry::RetryPolicy;
/// The cancellation token of [`SendOptions::cancel`], re-exported from `tokio-util` (0.7) so a
/// caller needs no dependency of its own to cancel a send.
pub use tokio_util::sync::CancellationToken;
#[cfg(feature = "__http")]
#[cfg_attr(docsrs, doc(cfg(any(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))))]
pub use transport::HttpConfig;
pub use validate::{Field, Issue, IssueCode, Validation};

#[cfg(feature = "plivo")]
#[cfg_attr(docsrs, doc(cfg(feature = "plivo")))]
pub use provider::plivo::{Plivo, PlivoWebhook};
#[cfg(feature = "telnyx")]
#[cfg_attr(docsrs, doc(cfg(feature = "telnyx")))]
pub use provider::telnyx::{Telnyx, TelnyxWebhook};
#[cfg(feature = "twilio")]
#[cfg_attr(docsrs, doc(cfg(feature = "twilio")))]
pub use provider::twilio::{Twilio, TwilioWebhook};
#[cfg(feature = "vonage")]
#[cfg_attr(docsrs, doc(cfg(feature = "vonage")))]
pub use provider::vonage::{Vonage, VonageWebhook};
