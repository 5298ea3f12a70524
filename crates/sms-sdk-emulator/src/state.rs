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

/// Where one kind of webhook goes: one URL for every provider, and one per provider over it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Urls {
    /// The URL of every provider without one of its own.
    pub(crate) every: Option<String>,
    /// The providers' own URLs, each provider at most once.
    pub(crate) own: Vec<(Provider, String)>,
}

impl Urls {
    /// Sets `provider`'s own URL (replacing any it had).
    pub(crate) fn set(&mut self, provider: Provider, url: String) {
        self.own.retain(|(p, _)| *p != provider);
        self.own.push((provider, url));
    }

    /// The URL of `provider`: its own, or else the one of every provider.
    pub(crate) fn of(&self, provider: Provider) -> Option<&str> {
        self.own.iter().find(|(p, _)| *p == provider).map(|(_, url)| url.as_str()).or(self.every.as_deref())
    }

    /// Every URL set, the one of every provider first.
    pub(crate) fn all(&self) -> impl Iterator<Item = &str> {
        self.every.iter().map(String::as_str).chain(self.own.iter().map(|(_, url)| url.as_str()))
    }
}

/// The settings of a running emulator.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Where status webhooks go when a message has no callback URL of its own.
    pub(crate) webhook_urls: Urls,
    /// Where injected inbound messages go by default.
    pub(crate) inbound_urls: Urls,
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
    /// Where the status webhooks of `provider`'s message go: its callback URL, or else the
    /// provider's webhook URL.
    pub(crate) fn status_url(&self, provider: Provider, callback_url: Option<&str>) -> Option<String> {
        callback_url.or_else(|| self.webhook_urls.of(provider)).map(str::to_owned)
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_providers_own_url_wins_over_the_one_of_every_provider() {
        let mut urls = Urls::default();
        assert_eq!(urls.of(Provider::Twilio), None);
        urls.every = Some("http://127.0.0.1:9/all".to_owned());
        urls.set(Provider::Telnyx, "http://127.0.0.1:9/first".to_owned());
        urls.set(Provider::Telnyx, "http://127.0.0.1:9/telnyx".to_owned());
        assert_eq!(urls.of(Provider::Telnyx), Some("http://127.0.0.1:9/telnyx"));
        assert_eq!(urls.of(Provider::Vonage), Some("http://127.0.0.1:9/all"));
        assert_eq!(urls.all().collect::<Vec<_>>(), ["http://127.0.0.1:9/all", "http://127.0.0.1:9/telnyx"]);
    }
}
