//! The emulator's shared state: configuration, keys, what was received, the webhook poster.

use std::sync::Arc;
use std::time::Duration;

use axum::response::Response;

use time::OffsetDateTime;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::body::BodyLimits;
use crate::delivery::Poster;
use crate::keys::Keys;
use crate::latency::Latency;
use crate::model::Provider;
use crate::observe::{Observer, Operation, Outcome, Served, ServedRequest};
use crate::provider::Signer;
use crate::received::Store;

/// The settings of a running emulator.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Where status webhooks go when a message has no callback URL of its own.
    pub(crate) webhook_url: Option<String>,
    /// Where injected inbound messages go by default.
    pub(crate) inbound_url: Option<String>,
    /// The time between status steps (and before the first).
    pub(crate) status_delay: Duration,
    /// The largest request body accepted, in bytes.
    pub(crate) body_limit: usize,
    /// How long a request's headers, and then its body, may take to arrive.
    pub(crate) read_timeout: Duration,
    /// How long to wait before answering each send request.
    pub(crate) latency: Latency,
    /// Who is told of each request served and webhook posted.
    pub(crate) observer: Observer,
}

impl Config {
    /// The limits request bodies are read within.
    pub(crate) fn body_limits(&self) -> BodyLimits {
        BodyLimits { max_bytes: self.body_limit, timeout: self.read_timeout }
    }
}

/// Everything the handlers and background tasks share.
#[derive(Debug)]
pub(crate) struct App {
    /// The settings.
    pub(crate) config: Config,
    /// The key material.
    pub(crate) keys: &'static Keys,
    /// What was received.
    pub(crate) store: Store,
    /// Posts webhooks.
    pub(crate) poster: Poster,
    /// One permit per pending status sequence (bounds the background tasks).
    pub(crate) status_slots: Arc<Semaphore>,
    /// Cancelled when the emulator stops.
    pub(crate) shutdown: CancellationToken,
}

impl App {
    /// Tells the observer that a request other than a send was answered with `response`.
    pub(crate) fn report(
        &self,
        provider: Option<Provider>,
        operation: Operation,
        to: Option<&str>,
        response: &Response,
    ) {
        let status = Some(response.status().as_u16());
        self.config
            .observer
            .report(|| Served::Request(ServedRequest::new(provider, operation, to, status, Outcome::Answered)));
    }

    /// A signer for now.
    pub(crate) fn signer(&self) -> Signer<'static> {
        Signer { keys: self.keys, now: OffsetDateTime::now_utc() }
    }
}
