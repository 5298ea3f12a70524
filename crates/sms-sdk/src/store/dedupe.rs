//! Webhook deduplication: providers deliver the same event more than once, so a receiver asks
//! whether it has handled this `dedupe_key` already before acting on it.
//!
//! Two ways to ask:
//! - [`DedupeStore::first_seen`] records the key as handled *before* the handler runs: simple,
//!   but a handler that then fails loses the event (the provider's redelivery is a duplicate).
//! - [`DedupeStore::claim`], then [`commit`](DedupeStore::commit) once the event is handled or
//!   [`release`](DedupeStore::release) when handling failed: the key is held while the handler
//!   runs (a concurrent delivery is [`DedupeClaim::InFlight`]), marked done only after it
//!   succeeded, and freed for the redelivery when it did not. A process killed mid-handler
//!   frees the key when the claim's lease runs out ([`DEFAULT_LEASE`]).
//!
//! ```
//! use sms_sdk::store::{DedupeClaim, DedupeStore, MemoryStore};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let store = MemoryStore::new();
//! let DedupeClaim::Claimed(token) = store.claim("twilio:SM1:delivered").await? else { panic!("new key") };
//! assert_eq!(store.claim("twilio:SM1:delivered").await?, DedupeClaim::InFlight);
//! // The handler failed: free the key, so the provider's redelivery is handled.
//! store.release("twilio:SM1:delivered", &token).await?;
//! let DedupeClaim::Claimed(_) = store.claim("twilio:SM1:delivered").await? else { panic!("freed") };
//! // The redelivery was handled: every later delivery is a duplicate.
//! store.commit("twilio:SM1:delivered").await?;
//! assert_eq!(store.claim("twilio:SM1:delivered").await?, DedupeClaim::Done);
//! # Ok::<(), sms_sdk::store::StoreError>(()) }).unwrap();
//! ```
//!
//! Every shipped idempotency store is also a dedupe store (the same URL serves both), so a fleet
//! of instances shares one answer. The tower layer does all of this around a handler
//! (`VerifyLayer::dedupe`, feature `tower`).

use std::fmt;
use std::time::{Duration, SystemTime};

use crate::store::StoreError;
use futures_util::future::BoxFuture;

/// How long a dedupe key is remembered by default: 7 days.
pub const DEFAULT_RETENTION: Duration = Duration::from_hours(7 * 24);

/// How long a claim holds a key by default: 60 seconds. A claim is committed or released when
/// its handler ends; a process killed while the handler runs does neither, and the key is free
/// again once the lease runs out, so the provider's next delivery is handled then. A handler
/// that may run longer than the lease needs a longer one ([`DedupeStore::claim_at`]): after the
/// lease, a redelivery may be handled while the first delivery's handler still runs.
pub const DEFAULT_LEASE: Duration = Duration::from_mins(1);

/// The proof of one claim: [`DedupeStore::release`] frees a key only for the token of the claim
/// that holds it. 128 random bits, written as 32 lowercase hexadecimal digits; not a secret
/// (`Debug` shows it), only unique.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ClaimToken([u8; 32]);

impl ClaimToken {
    /// A new random token (what a store's `claim_at` hands out).
    #[must_use]
    pub fn new() -> Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let bits = crate::ids::random_128();
        let mut text = [0; 32];
        for (i, digit) in text.iter_mut().enumerate() {
            // Four bits per digit, most significant first: `nibble` < 16.
            let nibble = (bits >> (4 * (31 - i))) & 0xf;
            *digit = HEX.get(usize::try_from(nibble).unwrap_or(0)).copied().unwrap_or(b'0');
        }
        Self(text)
    }

    /// The token as text (what a store keeps to recognise the claim).
    #[must_use]
    pub fn as_str(&self) -> &str {
        // Hexadecimal digits: ASCII.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl Default for ClaimToken {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ClaimToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ClaimToken").field(&self.as_str()).finish()
    }
}

/// The answer to a claim of a dedupe key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DedupeClaim {
    /// This caller holds the key: handle the event, then commit (handled) or release (not
    /// handled) with the token.
    Claimed(ClaimToken),
    /// Another caller holds an unexpired claim: its handler is running. Do not handle the event
    /// now; answer so that the provider delivers it again (a 409 from the tower layer).
    InFlight,
    /// The event was handled already (within the retention): a duplicate.
    Done,
}

/// Webhook dedupe keys: one atomic question per delivery, whether the event is new.
///
/// A key is *unseen*, *claimed* until its lease runs out, or *done* until its retention runs
/// out. Every time argument is the caller's clock (the Redis store counts leases and retentions
/// on the server's clock instead); a duration too long to add to `now` (up to `Duration::MAX`)
/// never runs out (Redis: a century), and no time overflows.
pub trait DedupeStore: Send + Sync + 'static {
    /// Records `key` as done at `now`, kept for `retention`, and answers whether it was new: true
    /// when it was unseen, its claim's lease had run out or its done sighting was older than its
    /// retention. Atomic: of many concurrent callers with one key, exactly one gets `true`. A key
    /// held by an unexpired claim is not new (`false`, and the claim stays).
    fn first_seen_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Claims `key` at `now` for `lease`, atomically: of many concurrent callers, exactly one gets
    /// [`DedupeClaim::Claimed`] for a key that is unseen, whose claim's lease has run out, or whose
    /// done sighting is older than its retention; the others get [`DedupeClaim::InFlight`] (an
    /// unexpired claim holds it) or [`DedupeClaim::Done`] (handled within its retention).
    fn claim_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        lease: Duration,
    ) -> BoxFuture<'a, Result<DedupeClaim, StoreError>>;

    /// Marks `key` done at `now` for `retention`, whoever holds it (the event *was* handled, even
    /// when the claim's lease ran out meanwhile and another caller claimed the key).
    fn commit_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Frees `key` when it is still held by the claim of `token`, so that the next delivery is
    /// handled; answers whether it did. Never frees a done key or another caller's newer claim.
    fn release<'a>(&'a self, key: &'a str, token: &'a ClaimToken) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// [`first_seen_at`](Self::first_seen_at) now, with [`DEFAULT_RETENTION`].
    fn first_seen<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.first_seen_at(key, SystemTime::now(), DEFAULT_RETENTION)
    }

    /// [`claim_at`](Self::claim_at) now, with [`DEFAULT_LEASE`].
    fn claim<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
        self.claim_at(key, SystemTime::now(), DEFAULT_LEASE)
    }

    /// [`commit_at`](Self::commit_at) now, with [`DEFAULT_RETENTION`].
    fn commit<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.commit_at(key, SystemTime::now(), DEFAULT_RETENTION)
    }
}

impl<S: DedupeStore + ?Sized> DedupeStore for std::sync::Arc<S> {
    fn first_seen_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).first_seen_at(key, now, retention)
    }

    fn claim_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        lease: Duration,
    ) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
        (**self).claim_at(key, now, lease)
    }

    fn commit_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).commit_at(key, now, retention)
    }

    fn release<'a>(&'a self, key: &'a str, token: &'a ClaimToken) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).release(key, token)
    }

    fn first_seen<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).first_seen(key)
    }

    fn claim<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
        (**self).claim(key)
    }

    fn commit<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).commit(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_32_hex_digits_and_differ() {
        let (a, b) = (ClaimToken::new(), ClaimToken::default());
        assert_ne!(a, b);
        for token in [&a, &b] {
            assert_eq!(token.as_str().len(), 32);
            assert!(token.as_str().bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)), "{token:?}");
        }
        assert_eq!(format!("{a:?}"), format!("ClaimToken({:?})", a.as_str()));
        assert_eq!(a.clone(), a);
    }

    #[test]
    fn every_digit_of_a_token_varies() {
        // Over 64 tokens, each of the 32 positions takes more than one value (all 128 bits are
        // written, none is a constant like a UUID's version digit).
        let tokens: Vec<ClaimToken> = (0..64).map(|_| ClaimToken::new()).collect();
        for i in 0..32 {
            let mut digits: Vec<u8> = tokens.iter().filter_map(|t| t.as_str().as_bytes().get(i).copied()).collect();
            digits.sort_unstable();
            digits.dedup();
            assert!(digits.len() > 1, "position {i} is constant");
        }
    }
}
