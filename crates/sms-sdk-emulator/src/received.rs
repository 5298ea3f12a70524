//! What the emulator received: one entry per send request, in order, and the per-recipient
//! state of the magic numbers.

use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::history::{History, OnceKey, OnceSet};
use crate::model::{Provider, ReceivedMessage};

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

    /// The id of the newest message of `provider` created for the recipient `to`.
    pub(crate) fn last_to(&self, provider: Provider, to: &str) -> Option<String> {
        let inner = self.lock();
        let sent = inner.messages.iter().filter(|m| m.provider == provider && m.to.as_deref() == Some(to));
        sent.filter_map(|message| message.id.clone()).last()
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
