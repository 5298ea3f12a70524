//! tower integration (feature `tower`): a [`Layer`] that verifies a webhook before the service it
//! wraps sees anything, for any tower-based server (hyper, axum, tonic's HTTP stack, …).
//!
//! [`VerifyLayer`] wraps a service of `http::Request<VerifiedBody>`. For each request it reads
//! the body (at most the verifier's [`body_limit`](WebhookVerifier::body_limit), within the
//! body read timeout) and verifies it. Then:
//! - verified: it calls the inner service with the same request head, the verified
//!   [`SmsEvent`](super::SmsEvent) added to its extensions
//!   (`request.extensions().get::<SmsEvent>()`) and the body read whole ([`VerifiedBody`]).
//!   A request that carries several events (Infobip and Bandwidth batch them) calls the inner
//!   service once per event, in order, each with its own event and the same head and body; the
//!   answer is the last call's, or the first that is not 2xx (the rest of the batch is then not
//!   handed on: the provider redelivers the whole batch, and with [dedupe](#deduplication) the
//!   events already handled are duplicates then);
//! - refused: it answers itself, without calling the inner service: 401 when the request is not
//!   authentic, 413 when the body is too large, 400 otherwise (a malformed payload, too many
//!   parameters, a body that could not be read in time), with a one-line `text/plain` body
//!   naming the reason (`invalid_signature`, `body_too_large`, …) and nothing else.
//!
//! ```
//! # #[cfg(feature = "twilio")] {
//! use std::convert::Infallible;
//!
//! use sms_sdk::TwilioWebhook;
//! use sms_sdk::webhook::SmsEvent;
//! use sms_sdk::webhook::tower::{VerifiedBody, VerifyLayer};
//! use tower::{Layer as _, service_fn};
//!
//! async fn handle(request: http::Request<VerifiedBody>) -> Result<http::Response<String>, Infallible> {
//!     // Always there: the inner service is only called with a verified request.
//!     let event = request.extensions().get::<SmsEvent>();
//!     let kind = event.map_or("?", |event| event.type_name());
//!     Ok(http::Response::new(kind.to_owned()))
//! }
//!
//! let twilio = TwilioWebhook::new("auth-token").unwrap().public_url("https://example.com/sms/twilio");
//! let service = VerifyLayer::new(twilio).layer(service_fn(handle));
//! # let _ = service;
//! # }
//! ```
//!
//! Under axum, put the layer on the route (`post(handler).layer(VerifyLayer::new(twilio))`) and
//! take the event with `Extension<SmsEvent>`; the `axum` module's `Verified` extractor (feature
//! `axum`) does the same per handler.
//!
//! # Deduplication
//!
//! Providers deliver an event again when it was not answered 2xx, and sometimes when it was.
//! With [`VerifyLayer::dedupe`], the layer handles each event once, and never loses one to a
//! handler that failed. After verification, and after the [observer](VerifyLayer::observer) has
//! seen the event, it claims the event's [`dedupe_key`](super::SmsEvent::dedupe_key) in the
//! [`DedupeStore`] ([`claim_at`](DedupeStore::claim_at), for the
//! [lease](VerifyLayer::dedupe_lease)):
//! - claimed: it calls the inner service. A 2xx answer marks the key done
//!   ([`commit_at`](DedupeStore::commit_at), for the [retention](VerifyLayer::dedupe_retention)),
//!   before the answer goes out; a failed commit is logged (tracing, `warn`) and the answer still
//!   goes out, since the work was done. Any other answer, an error of the inner service, a panic
//!   in it, or the response future dropped before it answered (the client went away, a timeout
//!   layer gave up) frees the key ([`release`](DedupeStore::release); after a drop, on a task of
//!   the tokio runtime), so the provider's redelivery is handled;
//! - in flight (another delivery of the event is being handled, here or on another instance
//!   sharing the store): 409 `in_progress`, without calling the inner service; the provider
//!   delivers it again later;
//! - done (handled within the retention): 200 `duplicate`, without calling the inner service
//!   (in a batch: on to the next event; 200 `duplicate` when every event was);
//! - the store failed: 503 `store_unavailable`, the key untouched, without calling the inner
//!   service.
//!
//! These answers are one-line `text/plain` bodies, like the refusals. So the inner service must
//! answer non-2xx when it did not handle the event (a 503 for a database that is down): a 2xx is
//! the layer's signal that the event is done. A process killed while the inner service runs
//! commits nothing and releases nothing: the key frees when the lease runs out (60 s by
//! default; a handler that may run longer needs a longer lease).
//!
//! The observer, e.g. the [`Reconciler`](crate::reconcile::Reconciler), or an
//! [`EventObserver`](super::EventObserver) of your own that feeds a suppression
//! [`Feeder`](crate::suppression::Feeder), runs *before* the claim, on every verified delivery,
//! duplicates and deliveries answered 409 included. That is safe because both are idempotent: a
//! settled key stays settled, and the suppression list records an event (by its dedupe key) once.
//!
//! Under axum, the layer goes on the route and the handler takes the event as an extension:
//!
//! ```
//! # #[cfg(all(feature = "axum", feature = "twilio"))] {
//! use std::sync::Arc;
//!
//! use axum::Extension;
//! use axum::http::StatusCode;
//! use axum::routing::post;
//! use sms_sdk::TwilioWebhook;
//! use sms_sdk::store::{DedupeStore, MemoryStore};
//! use sms_sdk::webhook::SmsEvent;
//! use sms_sdk::webhook::tower::VerifyLayer;
//!
//! async fn handle(Extension(event): Extension<SmsEvent>) -> StatusCode {
//!     match save(&event).await {
//!         Ok(()) => StatusCode::NO_CONTENT,
//!         // Not handled: a non-2xx answer frees the key for the provider's redelivery.
//!         Err(_) => StatusCode::SERVICE_UNAVAILABLE,
//!     }
//! }
//! # async fn save(_: &SmsEvent) -> Result<(), std::io::Error> { Ok(()) }
//!
//! let twilio = TwilioWebhook::new("auth-token").unwrap().public_url("https://example.com/sms/twilio");
//! let store: Arc<dyn DedupeStore> = Arc::new(MemoryStore::new()); // a shared store for a fleet
//! let app: axum::Router =
//!     axum::Router::new().route("/sms/twilio", post(handle).layer(VerifyLayer::new(twilio).dedupe(store)));
//! # let _ = app;
//! # }
//! ```
//!
//! The URL the verifier sees is `{scheme}://{authority}{path and query}`: the scheme and
//! authority of the request target when it carries them (HTTP/2), else `http` and the `Host`
//! header. Configure the verifier with the public URL (or trust your proxy's forwarded headers)
//! when the provider calls another one. Bodies over 64 KiB are verified on
//! tokio's blocking pool, so the layer runs inside a tokio runtime.
//!
//! The layer bounds the body; the server bounds the rest. Configure a header read timeout on it
//! (the axum module's `serve` does): without one, a client that sends half a request line holds
//! its connection open forever.

use std::convert::Infallible;
use std::error::Error as StdError;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use ::tower::{Layer, Service};
use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};

#[doc(hidden)]
pub use super::receive::INLINE_VERIFY_LIMIT;
pub use super::receive::{BodyReadTimeout, DEFAULT_BODY_READ_TIMEOUT};
use super::receive::{Received, challenge_of, observe, observer_of, read_timeout, receive, status};
use super::{SharedObserver, WebhookError, WebhookVerifier};
use crate::store::{DEFAULT_LEASE, DEFAULT_RETENTION, DedupeStore};

use self::dedupe::{Dedupe, Step, handled};

mod dedupe;

/// A [`Layer`] that verifies webhooks with `V` before the inner service sees them (see the
/// [module](self) documentation).
///
/// Cloning it is cheap (the verifier is shared). Its `Debug` shows the provider and the body read
/// timeout, never the verifier's secrets.
#[must_use = "a layer does nothing until it wraps a service"]
pub struct VerifyLayer<V> {
    verifier: Arc<V>,
    body_read_timeout: Option<Duration>,
    observer: Option<SharedObserver>,
    dedupe: Option<Arc<dyn DedupeStore>>,
    lease: Duration,
    retention: Duration,
}

impl<V: WebhookVerifier> VerifyLayer<V> {
    /// A layer that verifies with `verifier`. Its body limit is the verifier's
    /// ([`body_limit`](WebhookVerifier::body_limit): `max_body_bytes` on the provider verifiers,
    /// [`DEFAULT_MAX_BODY`](super::DEFAULT_MAX_BODY) unless set).
    pub fn new(verifier: V) -> Self {
        Self {
            verifier: Arc::new(verifier),
            body_read_timeout: None,
            observer: None,
            dedupe: None,
            lease: DEFAULT_LEASE,
            retention: DEFAULT_RETENTION,
        }
    }

    /// Shows every verified event to `observer` before the inner service runs: a
    /// [`Reconciler`](crate::reconcile::Reconciler) settles a send whose outcome was unknown from
    /// its status webhook (`SharedObserver::new(observer)`). Without it, a [`SharedObserver`] request
    /// extension is used when there is one.
    pub fn observer(mut self, observer: SharedObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Deduplicates verified events by their [`dedupe_key`](super::SmsEvent::dedupe_key) in
    /// `store`, around the inner service (see [Deduplication](self#deduplication)): claimed
    /// before it runs, marked done after a 2xx answer, freed after any other. A redelivery of a
    /// handled event is answered 200 `duplicate` and one that arrives while the event is being
    /// handled 409 `in_progress`, both without calling the inner service; a store that fails
    /// to claim is answered 503 `store_unavailable`.
    pub fn dedupe(mut self, store: Arc<dyn DedupeStore>) -> Self {
        self.dedupe = Some(store);
        self
    }

    /// How long a claim holds an event's key while the inner service runs (default
    /// [`DEFAULT_LEASE`], 60 s): a process killed meanwhile frees the key when it runs out, and
    /// a handler that runs longer may see the event's redelivery handled beside it. Only with
    /// [`dedupe`](Self::dedupe).
    pub fn dedupe_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// How long a handled event's key is remembered (default [`DEFAULT_RETENTION`], 7 days):
    /// redeliveries within it are duplicates. Only with [`dedupe`](Self::dedupe).
    pub fn dedupe_retention(mut self, retention: Duration) -> Self {
        self.retention = retention;
        self
    }

    /// How long a client has to send a request's whole body; past it, the request is refused
    /// (400 `body_unreadable`). Without it, the request's [`BodyReadTimeout`] extension (which
    /// the axum module's `serve` sets) or else [`DEFAULT_BODY_READ_TIMEOUT`] applies.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = Some(timeout);
        self
    }
}

impl<V> Clone for VerifyLayer<V> {
    fn clone(&self) -> Self {
        Self {
            verifier: Arc::clone(&self.verifier),
            body_read_timeout: self.body_read_timeout,
            observer: self.observer.clone(),
            dedupe: self.dedupe.clone(),
            lease: self.lease,
            retention: self.retention,
        }
    }
}

impl<V: WebhookVerifier> fmt::Debug for VerifyLayer<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyLayer")
            .field("provider", &self.verifier.provider())
            .field("body_read_timeout", &self.body_read_timeout)
            .field("observer", &self.observer.is_some())
            .field("dedupe", &self.dedupe.is_some())
            .field("dedupe_lease", &self.lease)
            .field("dedupe_retention", &self.retention)
            .finish_non_exhaustive()
    }
}

impl<S, V> Layer<S> for VerifyLayer<V> {
    type Service = Verify<S, V>;

    fn layer(&self, inner: S) -> Self::Service {
        Verify { inner, layer: self.clone() }
    }
}

/// The service [`VerifyLayer`] makes: verifies each request, then calls `S` with it or answers
/// the refusal itself. [`poll_ready`](Service::poll_ready) is the inner service's.
#[must_use = "a service does nothing until it is called"]
pub struct Verify<S, V> {
    inner: S,
    layer: VerifyLayer<V>,
}

impl<S: Clone, V> Clone for Verify<S, V> {
    fn clone(&self) -> Self {
        Self { inner: self.inner.clone(), layer: self.layer.clone() }
    }
}

impl<S: fmt::Debug, V: WebhookVerifier> fmt::Debug for Verify<S, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verify").field("inner", &self.inner).field("layer", &self.layer).finish()
    }
}

impl<S, V, B, ResBody> Service<Request<B>> for Verify<S, V>
where
    S: Service<Request<VerifiedBody>, Response = Response<ResBody>> + Clone + Send + 'static,
    S::Future: Send,
    // Held while a deduplicated event's key is committed or released, before it is returned.
    S::Error: Send,
    ResBody: Send,
    V: WebhookVerifier + 'static,
    B: Body + Send + 'static,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    type Response = Response<ResponseBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The inner service that was polled ready goes with the request; a clone takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let verifier = Arc::clone(&self.layer.verifier);
        let challenge = verifier.challenge();
        let timeout = read_timeout(&request, self.layer.body_read_timeout);
        let observer = self.layer.observer.clone().or_else(|| observer_of(&request));
        let dedupe = self.layer.dedupe.as_ref().map(|store| Dedupe {
            store: Arc::clone(store),
            lease: self.layer.lease,
            retention: self.layer.retention,
        });
        ResponseFuture(Box::pin(async move {
            let received = match receive(verifier, request, timeout).await {
                Ok(received) => received,
                Err(error) => return Ok(refusal(&error, challenge)),
            };
            // The observer (idempotent) sees every verified delivery, duplicates included.
            observe(observer.as_ref(), &received).await;
            let Received { events, parts, body } = received;
            let (count, mut parts) = (events.len(), Some(parts));
            // The service polled ready takes the first call; it is polled again before each other.
            let (mut ready, mut last) = (true, None);
            for (index, event) in events.into_iter().enumerate() {
                let held = match &dedupe {
                    None => None,
                    Some(dedupe) => match dedupe.claim(&event.dedupe_key).await {
                        Step::Handle(held) => Some(held),
                        // Handled before: on to the batch's next event.
                        Step::Answer(status, _) if status.is_success() => continue,
                        Step::Answer(status, reason) => return Ok(text(status, reason)),
                    },
                };
                if !std::mem::take(&mut ready) {
                    poll_fn(|cx| inner.poll_ready(cx)).await?;
                }
                // The head goes with the last event, a copy with each other.
                let head = if index + 1 == count { parts.take() } else { parts.clone() };
                let Some(mut head) = head else { break };
                head.extensions.insert(event);
                let request = Request::from_parts(head, VerifiedBody::new(body.clone()));
                // An error, a panic or this future dropped while the inner service runs drops
                // `held`, which frees the key.
                let response = inner.call(request).await;
                if let Some(held) = held {
                    held.finish(response.as_ref().is_ok_and(|response| handled(response.status()))).await;
                }
                let response = response?;
                if !handled(response.status()) {
                    // The rest of a batch waits for the provider's redelivery.
                    return Ok(inner_response(response));
                }
                last = Some(response);
            }
            Ok(last.map_or_else(|| text(StatusCode::OK, "duplicate"), inner_response))
        }))
    }
}

/// The inner service's answer, as the layer's.
fn inner_response<B>(response: Response<B>) -> Response<ResponseBody<B>> {
    response.map(|body| ResponseBody { kind: Kind::Inner { body } })
}

/// The answer to a refused webhook: its status and a one-line reason, and for a request without
/// credentials the verifier's `challenge` as `WWW-Authenticate`.
fn refusal<B>(error: &WebhookError, challenge: Option<&'static str>) -> Response<ResponseBody<B>> {
    let mut response = text(status(error), error.reason().unwrap_or(error.code()));
    if let Some(challenge) = challenge_of(error, challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    }
    response
}

/// The layer's own answer: `status` and the one-line `reason`, as `text/plain`.
fn text<B>(status: StatusCode, reason: &str) -> Response<ResponseBody<B>> {
    let text = format!("{reason}\n");
    let mut response = Response::new(ResponseBody { kind: Kind::Text { text: Some(Bytes::from(text)) } });
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// The future of [`Verify`]'s response.
#[must_use = "futures do nothing unless polled"]
pub struct ResponseFuture<T>(Pin<Box<dyn Future<Output = T> + Send>>);

impl<T> Future for ResponseFuture<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.0.as_mut().poll(cx)
    }
}

impl<T> fmt::Debug for ResponseFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseFuture")
    }
}

/// The body of a verified request, read whole: what the inner service gets. Its `Debug` shows
/// the length, never the payload.
#[derive(Clone, Default)]
pub struct VerifiedBody {
    bytes: Bytes,
    done: bool,
}

impl VerifiedBody {
    fn new(bytes: Bytes) -> Self {
        Self { bytes, done: false }
    }

    /// The raw body, exactly as received and verified (also after it has been polled).
    #[must_use]
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The raw body, exactly as received and verified.
    #[must_use]
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }
}

impl fmt::Debug for VerifiedBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VerifiedBody(<{} bytes>)", self.bytes.len())
    }
}

impl Body for VerifiedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.is_end_stream() {
            return Poll::Ready(None);
        }
        self.done = true;
        Poll::Ready(Some(Ok(Frame::data(self.bytes.clone()))))
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.bytes.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        let remaining = if self.is_end_stream() { 0 } else { self.bytes.len() };
        SizeHint::with_exact(u64::try_from(remaining).unwrap_or(u64::MAX))
    }
}

pin_project_lite::pin_project! {
    /// The body of [`Verify`]'s response: the inner service's, or the layer's own one-line answer
    /// (a refusal's reason, or a deduplicated delivery's `duplicate`, `in_progress`,
    /// `store_unavailable`).
    pub struct ResponseBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project_lite::pin_project! {
    #[project = KindProjection]
    enum Kind<B> {
        Inner { #[pin] body: B },
        Text { text: Option<Bytes> },
    }
}

impl<B> fmt::Debug for ResponseBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Inner { .. } => "inner",
            Kind::Text { .. } => "text",
        };
        f.debug_tuple("ResponseBody").field(&kind).finish()
    }
}

impl<B: Body<Data = Bytes>> Body for ResponseBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        match self.project().kind.project() {
            KindProjection::Inner { body } => body.poll_frame(cx),
            KindProjection::Text { text } => Poll::Ready(text.take().map(|text| Ok(Frame::data(text)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body } => body.is_end_stream(),
            Kind::Text { text } => text.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body } => body.size_hint(),
            Kind::Text { text } => {
                SizeHint::with_exact(text.as_ref().map_or(0, |t| u64::try_from(t.len()).unwrap_or(u64::MAX)))
            }
        }
    }
}
