//! In-process coalescing: concurrent sends with one idempotency key on one client share the
//! first caller's request, even without a store. A dropped first caller never leaves the others
//! waiting: its guard removes the key's entry and they get `Unknown(Aborted)`, or `Aborted` when
//! it was dropped before any request started (while queued for a request slot, say).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::sync::watch;

use crate::adapter::UnknownReason;
use crate::error::Error;
use crate::receipt::Receipt;
use crate::store::Fingerprint;

type Shared = Option<Result<Receipt, Error>>;

/// Sends in flight on this client, by idempotency key: later callers with the same key share
/// the first caller's request instead of sending again.
#[derive(Default)]
pub(crate) struct Flights {
    map: Mutex<HashMap<String, InFlight>>,
    next: AtomicU64,
}

/// The running send of one key.
struct InFlight {
    fingerprint: Fingerprint,
    token: u64,
    /// Where the leader's result goes: made when the first follower joins, so a send nobody
    /// waits on makes no channel.
    sender: Option<watch::Sender<Shared>>,
}

pub(crate) enum Flight<'a> {
    Lead(Lead<'a>),
    Follow(watch::Receiver<Shared>),
}

/// The first caller of a key. Dropping it (finished or not) removes the key's entry, so a
/// dropped send leaves its followers an error instead of a hang.
pub(crate) struct Lead<'a> {
    flights: &'a Flights,
    key: &'a str,
    token: u64,
    /// Set once the leader started a request (which may have created the message).
    requested: &'a AtomicBool,
    /// Set once the key's entry is removed.
    left: bool,
}

impl Flights {
    /// Joins the send of `key`, or leads it; a leader reports through `requested` whether it
    /// started a request.
    pub(crate) fn join<'a>(
        &'a self,
        key: &'a str,
        fingerprint: &Fingerprint,
        requested: &'a AtomicBool,
    ) -> Result<Flight<'a>, Error> {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(running) = map.get_mut(key) {
            if running.fingerprint != *fingerprint {
                return Err(Error::idempotency_conflict(key));
            }
            let sender = running.sender.get_or_insert_with(|| watch::channel(None).0);
            let receiver = sender.subscribe();
            return Ok(Flight::Follow(receiver));
        }
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        map.insert(key.to_owned(), InFlight { fingerprint: fingerprint.clone(), token, sender: None });
        Ok(Flight::Lead(Lead { flights: self, key, token, requested, left: false }))
    }
}

impl Lead<'_> {
    /// Ends the key's flight and hands `result` to its followers. The entry goes first, so no
    /// follower can join after it: with none, nothing is copied.
    pub(crate) fn finish(mut self, result: &Result<Receipt, Error>) {
        if let Some(sender) = self.leave() {
            sender.send_replace(Some(result.clone()));
        }
    }

    /// Removes the key's entry, unless a later flight replaced it, and hands back its channel
    /// when a follower joined.
    fn leave(&mut self) -> Option<watch::Sender<Shared>> {
        self.left = true;
        let mut map = self.flights.map.lock().unwrap_or_else(PoisonError::into_inner);
        if map.get(self.key).is_some_and(|running| running.token == self.token) {
            return map.remove(self.key).and_then(|running| running.sender);
        }
        None
    }
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        if self.left {
            return;
        }
        // Dropping the channel without a result tells the followers the outcome is unknown.
        if let Some(sender) = self.leave()
            && !self.requested.load(Ordering::Relaxed)
        {
            // Dropped before any request: nothing was sent, so the followers may send again.
            sender.send_replace(Some(Err(Error::aborted(Vec::new()))));
        }
    }
}

/// Waits for the leader of a key and replays its result.
pub(crate) async fn follow(mut receiver: watch::Receiver<Shared>) -> Result<Receipt, Error> {
    let result = match receiver.wait_for(Option::is_some).await {
        Ok(shared) => shared.clone(),
        Err(_) => None,
    };
    match result {
        Some(Ok(receipt)) => Ok(Receipt { replayed: true, ..receipt }),
        Some(Err(error)) => Err(error),
        None => Err(Error::unknown_replay(UnknownReason::Aborted, Vec::new())),
    }
}
