//! Settles unknown outcomes from verified status webhooks.
//!
//! A send whose outcome is unknown (the connection dropped after the provider created the
//! message, say) leaves its key `unknown`: the client will not resend it, and until now an
//! operator had to find out. With correlation on (see [`crate::correlation`]), the provider's
//! status webhooks for that message carry the key's reference; a [`Reconciler`] fed with the
//! verified events settles the record as `accepted` with the provider's message id, and later
//! sends with the key replay it.
//!
//! What an event can do is deliberately small:
//! - only a status event (queued, sent, delivered, undelivered, filtered) with a reference the
//!   store remembers counts: it proves the provider has the message;
//! - it settles only an `unknown` record or a `reserved` one older than the stale limit, with one
//!   atomic compare-and-set on the state, so a send still in flight finishes on its own;
//! - it never removes a record (never "not sent": only an operator can say that), and never
//!   changes an `accepted` or `rejected` one; a redelivered event changes nothing more.
//!
//! ```
//! use sms_sdk::reconcile::{Observed, Reconciler};
//! use sms_sdk::store::MemoryStore;
//!
//! # #[cfg(feature = "twilio")]
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use sms_sdk::testing::webhooks::signed_twilio_request;
//! use sms_sdk::webhook::WebhookVerifier as _;
//!
//! let store = MemoryStore::new();
//! let reconciler = Reconciler::new(store.clone());
//! let url = "https://example.com/sms/status";
//! let params = [("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageStatus", "delivered"),
//!               ("To", "+14155550123"), ("From", "+15005550006")];
//! let signed = signed_twilio_request("auth-token", url, &params);
//! let event = sms_sdk::TwilioWebhook::new("auth-token").unwrap().verify(&signed.as_request()).unwrap();
//! // No reference in the URL: nothing to settle.
//! assert_eq!(reconciler.observe(&event, url).await?, Observed::Ignored);
//! # Ok::<(), sms_sdk::store::StoreError>(()) }).unwrap();
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::correlation::{REFERENCE_PARAM, is_reference};
use crate::store::{
    DEFAULT_STALE_RESERVATION, DEFAULT_TTL, IdempotencyStore, Operator, ReferenceIndex, Settled, StoreError,
    settle_reference,
};
use crate::webhook::{EventKind, EventObserver, SmsEvent};
use futures_util::future::BoxFuture;

/// A store a [`Reconciler`] can settle records in.
trait Settles: ReferenceIndex + Operator + IdempotencyStore {}

impl<T: ReferenceIndex + Operator + IdempotencyStore> Settles for T {}

/// Feeds verified status webhooks to the idempotency store. Cheap to clone.
#[derive(Clone)]
pub struct Reconciler {
    store: Arc<dyn Settles>,
    ttl: Duration,
    stale_after: Duration,
}

/// What [`Reconciler::observe`] did with an event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Observed {
    /// Not a status event, or it carries no reference: nothing to do.
    Ignored,
    /// The event carried a reference; what the store did with it.
    Reference(Settled),
}

impl Reconciler {
    /// A reconciler over `store` (the client's idempotency store, or another handle on it),
    /// keeping settled records for [`DEFAULT_TTL`] and treating reservations older than
    /// [`DEFAULT_STALE_RESERVATION`] as unknown.
    pub fn new(store: impl ReferenceIndex + Operator + IdempotencyStore) -> Self {
        Self { store: Arc::new(store), ttl: DEFAULT_TTL, stale_after: DEFAULT_STALE_RESERVATION }
    }

    /// How long a settled (accepted) record is kept; use the client's idempotency TTL.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The age after which a reservation counts as unknown; use the client's stale limit.
    #[must_use]
    pub fn stale_reservation(mut self, after: Duration) -> Self {
        self.stale_after = after;
        self
    }

    /// Settles the record the verified `event`, received at `url` (the full URL with its query,
    /// as passed to the verifier), refers to, as of now.
    ///
    /// # Errors
    /// A [`StoreError`] when the store fails.
    pub async fn observe(&self, event: &SmsEvent, url: &str) -> Result<Observed, StoreError> {
        self.observe_at(event, url, SystemTime::now()).await
    }

    /// [`Reconciler::observe`] as of `now`.
    ///
    /// # Errors
    /// A [`StoreError`] when the store fails.
    pub async fn observe_at(&self, event: &SmsEvent, url: &str, now: SystemTime) -> Result<Observed, StoreError> {
        let Some(provider_id) = status_provider_id(&event.kind) else { return Ok(Observed::Ignored) };
        let Some(reference) = reference_in(event, url) else { return Ok(Observed::Ignored) };
        let settled =
            settle_reference(&*self.store, &reference, event.provider, provider_id, self.ttl, self.stale_after, now)
                .await?;
        match &settled {
            Settled::Accepted { .. } => {
                tracing::info!(provider = event.provider, "unknown outcome settled as accepted by a status webhook");
            }
            Settled::Unchanged { state, .. } => {
                tracing::debug!(provider = event.provider, state = state.as_str(), "status webhook left the record");
            }
            Settled::NotFound => tracing::debug!(provider = event.provider, "status webhook reference not found"),
        }
        Ok(Observed::Reference(settled))
    }
}

/// The reference a verified `event`, received at `url`, carries: Vonage's `client_ref`,
/// Sinch's `client_reference` and the `context.sms_sdk_ref` of an AWS delivery event from the
/// body (signed by Vonage, by SNS, and by Sinch when its callbacks are HMAC-signed); for the others the [`REFERENCE_PARAM`] of the URL's query. `None` when there is
/// none, or when it does not have the shape of a reference.
///
/// Twilio and Plivo's V3 signature cover the URL's query; Telnyx signs only the body and Plivo's
/// V2 signature leaves the query out, so there the reference is trusted because it cannot be
/// guessed, not because it is signed.
#[must_use]
pub fn reference_in(event: &SmsEvent, url: &str) -> Option<String> {
    let echoed = |member: &str| event.raw().get(member).and_then(serde_json::Value::as_str).map(str::to_owned);
    let found = if event.provider == "vonage" {
        echoed("client_ref")
    } else if event.provider == "sinch" {
        echoed("client_reference")
    } else if event.provider == "infobip" {
        // The result's `callbackData`, else the reference in the message id the adapter chose
        // (`sms-sdk-{reference}`): the raw payload of an Infobip event is its own result.
        echoed("callbackData")
            .filter(|r| is_reference(r))
            .or_else(|| echoed("messageId").and_then(|id| id.strip_prefix("sms-sdk-").map(str::to_owned)))
    } else if event.provider == "bandwidth" {
        // The message's `tag`, which every callback event echoes in its `message`.
        let message = event.raw().get("message");
        message.and_then(|m| m.get("tag")).and_then(serde_json::Value::as_str).map(str::to_owned)
    } else if event.provider == "aws" {
        // The request's `Context`, which every delivery event echoes.
        let context = event.raw().get("context");
        context.and_then(|c| c.get(REFERENCE_PARAM)).and_then(serde_json::Value::as_str).map(str::to_owned)
    } else {
        let query = url.split_once('?')?.1;
        let query = query.split_once('#').map_or(query, |(query, _)| query);
        url::form_urlencoded::parse(query.as_bytes())
            .find(|(name, _)| name == REFERENCE_PARAM)
            .map(|(_, value)| value.into_owned())
    };
    found.filter(|r| is_reference(r))
}

/// The provider message id of a status event; `None` for other events.
fn status_provider_id(kind: &EventKind) -> Option<&str> {
    match kind {
        EventKind::Queued(update)
        | EventKind::Sent(update)
        | EventKind::Delivered(update)
        | EventKind::Undelivered(update)
        | EventKind::Filtered(update) => Some(update.provider_id.as_str()).filter(|id| !id.is_empty()),
        EventKind::Received(_)
        | EventKind::OptedOut(_)
        | EventKind::OptedIn(_)
        | EventKind::Help(_)
        | EventKind::Unrecognized { .. } => None,
    }
}

/// Feeds the webhook integration's events to the reconciler (`SharedObserver::new(reconciler)`): a
/// store failure is logged, and the request goes on to its handler (the provider's redelivery, or
/// `idempotency reconcile`, can still settle the key).
impl EventObserver for Reconciler {
    fn on_event<'a>(&'a self, event: &'a SmsEvent, url: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(error) = self.observe(event, url).await {
                tracing::warn!(%error, provider = event.provider, "reconciling a status webhook failed");
            }
        })
    }
}

impl fmt::Debug for Reconciler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reconciler")
            .field("ttl", &self.ttl)
            .field("stale_after", &self.stale_after)
            .finish_non_exhaustive()
    }
}
