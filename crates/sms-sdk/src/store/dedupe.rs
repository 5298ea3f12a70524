//! Webhook deduplication: providers deliver the same event more than once, so a receiver asks
//! "is this the first time I see this `dedupe_key`?" before acting on it.
//!
//! Every shipped idempotency store is also a dedupe store (the same URL serves both), so a fleet
//! of instances shares one answer.

use std::time::{Duration, SystemTime};

use crate::store::StoreError;
use futures_util::future::BoxFuture;

/// How long a dedupe key is remembered by default: 7 days.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// One atomic question per event: first time this key is seen?
pub trait DedupeStore: Send + Sync + 'static {
    /// Records `key` as seen at `now` and answers whether it was unseen (or its earlier sighting
    /// is older than `retention`). Atomic: of many concurrent callers with one key, exactly one
    /// gets `true`. A `retention` too long to add to `now` (up to `Duration::MAX`) never runs out
    /// (Redis: a century); no time overflows.
    fn first_seen<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>>;
}

impl<S: DedupeStore + ?Sized> DedupeStore for std::sync::Arc<S> {
    fn first_seen<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).first_seen(key, now, retention)
    }
}
