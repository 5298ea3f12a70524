#![doc = include_str!("../../../README.md")]
//!
//! ## Features
//!
//! | feature | default | what it adds |
//! | --- | --- | --- |
//! | `twilio` | yes | [`provider::twilio`]: the Twilio adapter |
//! | `telnyx` | yes | [`provider::telnyx`]: the Telnyx adapter |
//! | `plivo` | yes | [`provider::plivo`]: the Plivo adapter |
//! | `vonage` | yes | [`provider::vonage`]: the Vonage adapter (Basic or application JWT) |
//! | `sqlite` | no | [`idempotency::sqlite`]: the SQLite idempotency store |
//! | `postgres` | no | [`idempotency::postgres`]: the PostgreSQL idempotency store |
//! | `redis` | no | [`idempotency::redis`]: the Redis idempotency store |
//! | `axum` | no | [`webhook::axum`]: an extractor for verified webhooks and a server with read timeouts |
//! | `testing` | no | [`testing`]: `MemoryAdapter`, outcome helpers, the adapter and store contracts |
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adapter;
mod client;
mod coalesce;
mod digest;
pub mod encoding;
pub mod error;
mod failover;
pub mod hooks;
#[cfg(feature = "__http")]
mod http;
pub mod idempotency;
pub mod message;
pub mod options;
pub mod provider;
pub mod redact;
pub mod retry;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod validate;
pub mod webhook;

pub use adapter::{Adapter, Category, Delivery, Outcome, UnknownReason};
pub use client::{Client, ClientBuilder, Failover, Handoff, Receipt, SendOptions};
pub use error::{Error, ErrorKind};
pub use message::{Message, OutboundMessage, PhoneNumber, Sender};
pub use retry::RetryPolicy;
pub use tokio_util::sync::CancellationToken;
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
