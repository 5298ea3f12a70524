//! tower integration (feature `tower`): a [`Layer`] that verifies a webhook before the service it
//! wraps sees anything, for any tower-based server (hyper, axum, tonic's HTTP stack, …).
//!
//! [`VerifyLayer`] wraps a service of `http::Request<VerifiedBody>`. For each request it reads
//! the body (at most the verifier's [`body_limit`](WebhookVerifier::body_limit), within the
//! body read timeout) and verifies it. Then:
//! - verified: it calls the inner service with the same request head, the verified
//!   [`SmsEvent`](super::SmsEvent) added to its extensions
//!   (`request.extensions().get::<SmsEvent>()`) and the body read whole ([`VerifiedBody`]);
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
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use ::tower::{Layer, Service};
use bytes::Bytes;
use http::{HeaderValue, Request, Response, header};
use http_body::{Body, Frame, SizeHint};

#[doc(hidden)]
pub use super::receive::INLINE_VERIFY_LIMIT;
pub use super::receive::{BodyReadTimeout, DEFAULT_BODY_READ_TIMEOUT};
use super::receive::{Received, observe, observer_of, read_timeout, receive, status};
use super::{SharedObserver, WebhookError, WebhookVerifier};

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
}

impl<V: WebhookVerifier> VerifyLayer<V> {
    /// A layer that verifies with `verifier`. Its body limit is the verifier's
    /// ([`body_limit`](WebhookVerifier::body_limit): `max_body_bytes` on the provider verifiers,
    /// [`DEFAULT_MAX_BODY`](super::DEFAULT_MAX_BODY) unless set).
    pub fn new(verifier: V) -> Self {
        Self { verifier: Arc::new(verifier), body_read_timeout: None, observer: None }
    }

    /// Shows every verified event to `observer` before the inner service runs: a
    /// [`Reconciler`](crate::reconcile::Reconciler) settles a send whose outcome was unknown from
    /// its status webhook (`SharedObserver::new(observer)`). Without it, a [`SharedObserver`] request
    /// extension is used when there is one.
    pub fn observer(mut self, observer: SharedObserver) -> Self {
        self.observer = Some(observer);
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
        }
    }
}

impl<V: WebhookVerifier> fmt::Debug for VerifyLayer<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyLayer")
            .field("provider", &self.verifier.provider())
            .field("body_read_timeout", &self.body_read_timeout)
            .field("observer", &self.observer.is_some())
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
        let timeout = read_timeout(&request, self.layer.body_read_timeout);
        let observer = self.layer.observer.clone().or_else(|| observer_of(&request));
        ResponseFuture(Box::pin(async move {
            match receive(verifier, request, timeout).await {
                Ok(received) => {
                    observe(observer.as_ref(), &received).await;
                    let Received { event, mut parts, body } = received;
                    parts.extensions.insert(event);
                    let request = Request::from_parts(parts, VerifiedBody::new(body));
                    let response = inner.call(request).await?;
                    Ok(response.map(|body| ResponseBody { kind: Kind::Inner { body } }))
                }
                Err(error) => Ok(refusal(&error)),
            }
        }))
    }
}

/// The answer to a refused webhook: its status and a one-line reason.
fn refusal<B>(error: &WebhookError) -> Response<ResponseBody<B>> {
    let text = format!("{}\n", error.reason().unwrap_or(error.code()));
    let mut response = Response::new(ResponseBody { kind: Kind::Refusal { text: Some(Bytes::from(text)) } });
    *response.status_mut() = status(error);
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
    /// The body of [`Verify`]'s response: the inner service's, or the one-line reason of a
    /// refusal.
    pub struct ResponseBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project_lite::pin_project! {
    #[project = KindProjection]
    enum Kind<B> {
        Inner { #[pin] body: B },
        Refusal { text: Option<Bytes> },
    }
}

impl<B> fmt::Debug for ResponseBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Inner { .. } => "inner",
            Kind::Refusal { .. } => "refusal",
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
            KindProjection::Refusal { text } => Poll::Ready(text.take().map(|text| Ok(Frame::data(text)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Inner { body } => body.is_end_stream(),
            Kind::Refusal { text } => text.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Inner { body } => body.size_hint(),
            Kind::Refusal { text } => {
                SizeHint::with_exact(text.as_ref().map_or(0, |t| u64::try_from(t.len()).unwrap_or(u64::MAX)))
            }
        }
    }
}
