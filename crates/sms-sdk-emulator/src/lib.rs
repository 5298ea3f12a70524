//! A local emulator of the Twilio, Telnyx, Plivo and Vonage send APIs: one HTTP server on
//! loopback, so that applications, examples and tests drive the real `sms-sdk` adapters over
//! real HTTP with no account and no network.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use sms_sdk::{Client, Message};
//! use sms_sdk_emulator::Emulator;
//!
//! let emulator = Emulator::builder().start().await?;
//! let client = Client::builder().adapter(emulator.twilio().from("+15005550006").build()?).build()?;
//! let receipt = client.send(&Message::new("+14155550123", "Hello from the emulator")).await?;
//! assert_eq!(emulator.messages()[0].id.as_deref(), Some(receipt.provider_id.as_str()));
//! emulator.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! What it does:
//!
//! - **Routes**: Twilio `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, Telnyx
//!   `POST /v2/messages`, Plivo `POST /v1/Account/{auth_id}/Message/`, Vonage
//!   `POST /v1/messages`, each with the provider's authentication, field checks, success and
//!   error bodies; the fetch endpoints of Twilio, Telnyx and Plivo and Twilio's message list.
//! - **Fixed credentials** ([`credentials`]), the same on every run; wrong ones get the
//!   provider's authentication error.
//! - **Magic recipients** ([`magic`]) for every rejection category and every transport fault:
//!   HTTP 500, a held connection, a reset, rate limits, a bare 429, an unreadable 2xx, and a
//!   message created before the connection drops.
//! - **Status webhooks**, signed with each provider's real scheme, one step every status delay.
//! - **Inbound messages**: `POST /_emulator/inbound {provider, from, to, text, inbound_url?}`.
//! - **Inspection**: `GET /_emulator/messages` (or [`RunningEmulator::messages`]),
//!   `DELETE /_emulator/messages`, and `GET /_emulator/keys`.

mod app;
pub mod credentials;
mod delivery;
mod emulator;
mod error;
mod inbound;
mod keys;
pub mod magic;
mod provider;
mod respond;
mod routes;
mod send;
mod server;
mod store;

pub use emulator::{
    DEFAULT_LISTEN, DEFAULT_STATUS_DELAY, DEFAULT_WEBHOOK_RETRY_INTERVAL, Emulator, EmulatorBuilder, RunningEmulator,
};
pub use error::{StartError, StartErrorKind};
pub use provider::{Provider, UnknownProvider};
pub use store::{ReceivedMessage, Status, WebhookFailure};
