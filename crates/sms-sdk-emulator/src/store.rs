//! What the emulator received: one entry per send request, in order, and the per-recipient
//! state of the magic numbers.

use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use tokio_util::sync::CancellationToken;

use crate::bounded::{History, OnceKey, OnceSet};
use crate::provider::Provider;

/// Where a received message is: its delivery status when it was created, or what was answered
/// when it was not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Created; no status step has happened yet.
    Queued,
    /// Created and reported `sent`.
    Sent,
    /// Created and reported delivered.
    Delivered,
    /// Created and reported undelivered.
    Undelivered,
    /// Refused with a 4xx (credentials, fields, a magic rejection); nothing was created.
    Rejected,
    /// Refused with a 429; nothing was created.
    RateLimited,
    /// Answered 500; nothing was created.
    ServerError,
    /// Never answered (held until the client gave up); nothing was created.
    NoResponse,
    /// The connection was reset before any response; nothing was created.
    ConnectionReset,
    /// Answered 2xx with an unreadable body; nothing was created.
    UnreadableResponse,
}

/// A status webhook that was not answered 2xx after every attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookFailure {
    /// Where it was posted.
    pub url: String,
    /// The provider's event or status (`sent`, `message.finalized`, …).
    pub event: String,
    /// How many times it was posted.
    pub attempts: u32,
    /// The last failure: `HTTP 500`, a timeout, a refused connection.
    pub error: String,
}

/// One send request as the emulator received it (rejected ones included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReceivedMessage {
    /// The provider API that was called.
    pub provider: Provider,
    /// The id the emulator issued, or `None` when nothing was created.
    pub id: Option<String>,
    /// The recipient, in E.164 with its `+` (Vonage and Plivo numbers without one get it).
    pub to: Option<String>,
    /// The sender as received: a number, a sender ID, or a messaging service or profile id.
    pub from: Option<String>,
    /// The text.
    pub body: Option<String>,
    /// The media URLs.
    pub media_urls: Vec<String>,
    /// The message's own status callback URL.
    pub callback_url: Option<String>,
    /// Vonage's `client_ref`, when the request had one (echoed in its status webhooks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_ref: Option<String>,
    /// Where the message is now.
    pub status: Status,
    /// The HTTP status answered, or `None` when the connection was held, reset or dropped.
    pub http_status: Option<u16>,
    /// The provider error code answered, when there was one.
    pub error_code: Option<String>,
    /// When the request arrived.
    #[serde(with = "time::serde::rfc3339")]
    pub received_at: OffsetDateTime,
    /// The status webhooks that failed.
    pub webhook_failures: Vec<WebhookFailure>,
    /// True when `from` is a messaging service, profile or powerpack id.
    #[serde(skip)]
    pub(crate) service_sender: bool,
}

impl ReceivedMessage {
    /// An entry for a request to `provider`, with nothing read yet.
    pub(crate) fn new(provider: Provider, received_at: OffsetDateTime) -> Self {
        Self {
            provider,
            id: None,
            to: None,
            from: None,
            body: None,
            media_urls: Vec::new(),
            callback_url: None,
            client_ref: None,
            status: Status::Rejected,
            http_status: None,
            error_code: None,
            received_at,
            webhook_failures: Vec::new(),
            service_sender: false,
        }
    }
}

/// The received messages and per-recipient state.
#[derive(Debug)]
pub(crate) struct Store {
    /// The emulator's shutdown token: every epoch is a child of it.
    root: CancellationToken,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    messages: History,
    limited_once: OnceSet,
    /// Cancelled when the store is cleared or the emulator stops: stops the status webhooks of
    /// cleared messages.
    epoch: CancellationToken,
}

impl Store {
    /// An empty store keeping at most `limit` entries and `limit` rate-limited-once keys, whose
    /// epochs end when `root` is cancelled.
    pub(crate) fn new(root: CancellationToken, limit: usize) -> Self {
        let inner =
            Inner { messages: History::new(limit), limited_once: OnceSet::new(limit), epoch: root.child_token() };
        Self { root, inner: Mutex::new(inner) }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends an entry (forgetting the oldest one beyond the limit).
    pub(crate) fn record(&self, message: ReceivedMessage) {
        self.lock().messages.push(message);
    }

    /// Every entry kept, in arrival order.
    pub(crate) fn list(&self) -> Vec<ReceivedMessage> {
        self.lock().messages.iter().cloned().collect()
    }

    /// The created message `id` of `provider`.
    pub(crate) fn find(&self, provider: Provider, id: &str) -> Option<ReceivedMessage> {
        self.lock().messages.get(provider, id).cloned()
    }

    /// Changes the created message `id` of `provider`; returns it as changed.
    pub(crate) fn update(
        &self,
        provider: Provider,
        id: &str,
        change: impl FnOnce(&mut ReceivedMessage),
    ) -> Option<ReceivedMessage> {
        let mut inner = self.lock();
        let message = inner.messages.get_mut(provider, id)?;
        change(message);
        Some(message.clone())
    }

    /// Forgets every entry and all per-recipient state, and stops pending status webhooks.
    pub(crate) fn clear(&self) {
        let mut inner = self.lock();
        inner.messages.clear();
        inner.limited_once.clear();
        inner.epoch.cancel();
        inner.epoch = self.root.child_token();
    }

    /// The token cancelled by the next [`Store::clear`] or when the emulator stops.
    pub(crate) fn epoch(&self) -> CancellationToken {
        self.lock().epoch.clone()
    }

    /// True for the first request of `key` (rate-limit it), false for the next one (accept it,
    /// and start over).
    pub(crate) fn limit_once(&self, key: OnceKey) -> bool {
        self.lock().limited_once.limit_once(key)
    }
}
