//! A local emulator of the Twilio, Telnyx, Plivo, Vonage, Sinch, AWS End User Messaging SMS,
//! Infobip and Bandwidth send APIs: one HTTP server on loopback, so that applications, examples and tests drive the real
//! `sms-sdk` adapters over real HTTP with no account and no network.
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
//!   `POST /v1/messages`, Sinch `POST /xms/v1/{service_plan_id}/batches`, AWS `POST /` with
//!   `X-Amz-Target: PinpointSMSVoiceV2.SendTextMessage` (Signature Version 4 checked over the
//!   exact request), Infobip `POST /sms/3/messages`, Bandwidth
//!   `POST /api/v2/users/{accountId}/messages` (Basic, or a token from
//!   `POST /api/v1/oauth2/token`), each with the provider's authentication, field checks, success
//!   and error bodies; the fetch endpoints of Twilio, Telnyx, Plivo and Sinch, the message lists
//!   of Twilio, Sinch and Bandwidth, and Infobip's message logs.
//! - **Fixed credentials** ([`credentials`]), the same on every run; wrong ones get the
//!   provider's authentication error.
//! - **Magic recipients** ([`magic`]) for every rejection category and every transport fault:
//!   HTTP 500, a held connection, a reset, rate limits, a bare 429, an unreadable 2xx, and a
//!   message created before the connection drops; and, for each rejection reason, one recipient
//!   per provider that only that provider rejects (`+1500555P0RR`), so failover can be shown.
//! - **Status webhooks**, signed with each provider's real scheme, one step every status delay,
//!   to the message's callback URL, or else its provider's webhook URL
//!   ([`EmulatorBuilder::webhook_url_for`]) or the one of every provider
//!   ([`EmulatorBuilder::webhook_url`]). AWS has no callback URL: its delivery events go to its
//!   provider's URL as SNS notifications signed with the emulator's SNS certificate
//!   ([`credentials::AWS_SNS_CERTIFICATE`], also served at
//!   `GET /_emulator/aws/sns-certificate.pem`). Infobip and Bandwidth sign nothing: their
//!   callbacks carry the emulator's fixed Basic credentials (Bandwidth's, like AWS's, always go
//!   to its provider's URL).
//! - **Inbound messages**: `POST /_emulator/inbound {provider, from, to, text, inbound_url?}`,
//!   delivered to the request's `inbound_url`, or else the provider's inbound URL
//!   ([`EmulatorBuilder::inbound_url_for`]) or the one of every provider
//!   ([`EmulatorBuilder::inbound_url`]).
//! - **Latency** ([`EmulatorBuilder::latency`]): a wait before each answer, chosen per request
//!   by a function (a seeded random one, or one read from the request), applied after the
//!   message is created, so a client that times out leaves a message it never heard about.
//! - **Observation** ([`EmulatorBuilder::observe`]): one [`Served`] event per request answered
//!   and per webhook posted, safe to log (numbers masked), for a request log.
//! - **Inspection**: `GET /_emulator/messages` (or [`RunningEmulator::messages`]),
//!   `DELETE /_emulator/messages`, and `GET /_emulator/keys`.
//! - **Limits**, so that a long-running emulator under load stays bounded: request bodies up to
//!   1 MiB ([`EmulatorBuilder::body_limit`]; a larger send is answered with the provider's own
//!   error body and content type and HTTP 413: Twilio code 20413, Telnyx 10015, Plivo
//!   `{api_id, error}`, Vonage a problem `…#request-too-large`, Sinch
//!   `syntax_constraint_violation`, AWS a `ValidationException` `MAXIMUM_SIZE_EXCEEDED`, Infobip
//!   `E413`, Bandwidth `request-entity-too-large`); 30 s
//!   to send a request's headers, and then its body ([`EmulatorBuilder::header_read_timeout`]; a held send is not
//!   cut by it); the last 100,000 requests kept for inspection and as many rate-limited-once
//!   keys ([`EmulatorBuilder::max_messages`]); at most 1,024 connections served at once (more
//!   wait to be accepted) and 10,000 pending status sequences (beyond them, a new message goes
//!   straight to its last status and its webhooks are recorded as not posted); each webhook
//!   attempt times out after 5 s.

mod body;
pub mod credentials;
mod delivery;
mod emulator;
mod error;
mod history;
mod inbound;
mod keys;
mod latency;
pub mod magic;
mod model;
pub mod observe;
mod provider;
mod received;
mod respond;
mod routes;
mod send;
mod server;
mod state;

pub use emulator::{
    DEFAULT_BODY_LIMIT, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_LISTEN, DEFAULT_MAX_MESSAGES, DEFAULT_STATUS_DELAY,
    DEFAULT_WEBHOOK_RETRY_INTERVAL, Emulator, EmulatorBuilder, RunningEmulator, check_url, loopback_address,
};
pub use error::{StartError, StartErrorKind};
pub use model::{Provider, ReceivedMessage, Status, UnknownProvider, WebhookFailure};
pub use observe::Served;
