#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]

// The modules, by the path of a send (ARCHITECTURE.md draws it):
//
// The model: what a send is, and what it can end in.
mod attempt;
pub mod encoding;
pub mod error;
mod ids;
mod issue;
pub mod message;
pub mod options;
mod outcome;
mod receipt;
pub mod redact;
pub mod validate;

// The send pipeline: the client, its limits and policies, and the adapter contract it drives.
pub mod adapter;
pub mod batch;
mod client;
pub mod hooks;
mod limit;
pub mod retry;

// The wire: the built-in adapters, their HTTP transport and the JSON they read.
#[cfg(feature = "__http")]
mod http;
#[cfg(feature = "__http")]
mod json;
pub mod provider;

// Receiving: verified webhooks, normalized into one event type.
pub mod webhook;

// Remembering and settling: idempotency and suppression stores, reconciliation.
pub mod correlation;
mod digest;
pub mod lookup;
pub mod reconcile;
pub mod store;
pub mod suppression;

// Around it all: metrics, and the shipped test kit.
pub mod metrics;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

pub use adapter::{Adapter, Category, Delivery, Outcome, UnknownReason};
pub use client::{Client, ClientBuilder, Failover, SendOptions};
pub use error::{Conflict, Error, ErrorKind, Limit, NextStep, SendOutcome};
#[cfg(feature = "__http")]
#[cfg_attr(docsrs, doc(cfg(any(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))))]
pub use http::HttpConfig;
pub use limit::rate;
pub use message::{Message, OutboundMessage, PhoneNumber, Sender};
pub use receipt::Receipt;
pub use retry::RetryPolicy;
/// The cancellation token of [`SendOptions::cancel`], re-exported from `tokio-util` (0.7) so a
/// caller needs no dependency of its own to cancel a send.
pub use tokio_util::sync::CancellationToken;
pub use validate::{Field, Issue, IssueCode, Validation};

/// A boxed, `Send` future: what the object-safe traits return (stores, lookups, observers,
/// shared rate limiters), re-exported from `futures-util`.
pub use futures_util::future::BoxFuture;

/// A boxed error, as the sources of errors are passed on (a store's, a hook's).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[cfg(feature = "aws")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws")))]
pub use provider::aws::{Aws, AwsWebhook};
#[cfg(feature = "bandwidth")]
#[cfg_attr(docsrs, doc(cfg(feature = "bandwidth")))]
pub use provider::bandwidth::{Bandwidth, BandwidthWebhook};
#[cfg(feature = "infobip")]
#[cfg_attr(docsrs, doc(cfg(feature = "infobip")))]
pub use provider::infobip::{Infobip, InfobipWebhook};
#[cfg(feature = "plivo")]
#[cfg_attr(docsrs, doc(cfg(feature = "plivo")))]
pub use provider::plivo::{Plivo, PlivoWebhook};
#[cfg(feature = "sinch")]
#[cfg_attr(docsrs, doc(cfg(feature = "sinch")))]
pub use provider::sinch::{Sinch, SinchWebhook};
#[cfg(feature = "telnyx")]
#[cfg_attr(docsrs, doc(cfg(feature = "telnyx")))]
pub use provider::telnyx::{Telnyx, TelnyxWebhook};
#[cfg(feature = "twilio")]
#[cfg_attr(docsrs, doc(cfg(feature = "twilio")))]
pub use provider::twilio::{Twilio, TwilioWebhook};
#[cfg(feature = "vonage")]
#[cfg_attr(docsrs, doc(cfg(feature = "vonage")))]
pub use provider::vonage::{Vonage, VonageWebhook};
