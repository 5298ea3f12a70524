//! Observers: code that sees each verified event, with the URL it was received at, before the
//! handler does (a [`Reconciler`](crate::reconcile::Reconciler) settling unknown outcomes).

use std::fmt;
use std::sync::Arc;

use super::SmsEvent;
use futures_util::future::BoxFuture;

/// Sees each verified event and the full URL (query included) it was received at. It cannot
/// refuse the request: a failure is its own to log.
pub trait EventObserver: Send + Sync + 'static {
    /// Called once per verified request, before the handler.
    fn on_event<'a>(&'a self, event: &'a SmsEvent, url: &'a str) -> BoxFuture<'a, ()>;
}

/// A shared [`EventObserver`]: give it to the tower layer
/// ([`VerifyLayer::observer`](crate::webhook::tower::VerifyLayer::observer)), or add it as a
/// request extension (`axum::Extension(observer)`) for the axum extractor.
#[derive(Clone)]
#[cfg_attr(not(feature = "tower"), allow(dead_code))] // only the integrations (feature `tower`) call it
pub struct SharedObserver(pub(crate) Arc<dyn EventObserver>);

impl SharedObserver {
    /// Shares `observer`.
    pub fn new(observer: impl EventObserver) -> Self {
        Self(Arc::new(observer))
    }
}

impl fmt::Debug for SharedObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SharedObserver")
    }
}
