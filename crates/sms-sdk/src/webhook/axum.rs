//! axum integration (feature `axum`): an extractor that verifies the webhook before the handler
//! sees anything, and answers 401 (not authentic), 400 (malformed or unreadable) or 413 (too
//! large) itself; and [`serve`], which runs a router with the read timeouts a public endpoint
//! needs.
//!
//! Several verifiers share the router's state through `FromRef` (the derive below needs axum's
//! `macros` feature: `cargo add axum --features macros`):
//!
//! ```no_run
//! # #[cfg(feature = "twilio")]
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use axum::{Router, extract::FromRef, http::StatusCode, routing::post};
//! use sms_sdk::TwilioWebhook;
//! use sms_sdk::webhook::axum::{Verified, serve};
//!
//! #[derive(Clone, FromRef)] // axum's `macros` feature
//! struct Hooks {
//!     twilio: TwilioWebhook,
//! }
//!
//! async fn twilio(Verified { event, .. }: Verified<TwilioWebhook>) -> StatusCode {
//!     println!("{} ({})", event.type_name(), event.dedupe_key);
//!     StatusCode::NO_CONTENT
//! }
//!
//! let hooks = Hooks { twilio: TwilioWebhook::new("auth-token")?.public_url("https://example.com/sms/twilio") };
//! let app: Router = Router::new().route("/sms/twilio", post(twilio)).with_state(hooks);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! // Like `axum::serve`, plus a 30 s limit on reading a request's headers and on its body.
//! serve(listener, app).await?;
//! # Ok(()) }
//! ```
//!
//! With `axum::serve` (or another server) instead, configure a header read timeout yourself:
//! without one, a client that sends half a request line holds its connection open forever.
//!
//! **One route for every provider.** With failover, a message's status callbacks come from
//! whichever provider accepted it. Give the route an [`AnyWebhook`](super::AnyWebhook) of your
//! providers' verifiers (`Verified<AnyWebhook>`): it recognises each request's provider from its
//! headers and verifies it with that provider's secret.
//!
//! **Two routes of one provider** (two accounts, or two public URLs): `FromRef` cannot tell two
//! fields of one type apart (deriving it for two `TwilioWebhook` fields fails with E0119), so
//! put a [`VerifyLayer`](super::tower::VerifyLayer) on each route instead and take the event
//! with `Extension<SmsEvent>`; no router state is needed:
//!
//! ```no_run
//! # #[cfg(feature = "twilio")]
//! # fn example() -> Result<(), sms_sdk::Error> {
//! use axum::{Extension, Router, http::StatusCode, routing::post};
//! use sms_sdk::TwilioWebhook;
//! use sms_sdk::webhook::SmsEvent;
//! use sms_sdk::webhook::tower::VerifyLayer;
//!
//! async fn handle(Extension(event): Extension<SmsEvent>) -> StatusCode {
//!     println!("{}", event.type_name());
//!     StatusCode::NO_CONTENT
//! }
//!
//! let marketing = TwilioWebhook::new("token-of-account-a")?.public_url("https://example.com/sms/marketing");
//! let alerts = TwilioWebhook::new("token-of-account-b")?.public_url("https://example.com/sms/alerts");
//! let app: Router = Router::new()
//!     .route("/sms/marketing", post(handle).layer(VerifyLayer::new(marketing)))
//!     .route("/sms/alerts", post(handle).layer(VerifyLayer::new(alerts)));
//! # let _ = app; Ok(()) }
//! ```
//!
//! **Batches.** Infobip and Bandwidth post several events in one request: take them with
//! [`VerifiedAll`] (`VerifiedAll { events, .. }: VerifiedAll<InfobipWebhook>`); [`Verified`]
//! refuses a request of more than one event with a 400.
//!
//! Stop the server with [`Serve::with_graceful_shutdown`]: the requests in flight are answered
//! before it returns.

use std::future::{Future, IntoFuture};
use std::io;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{FromRef, FromRequest, Request};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tower::Service as _;

#[doc(hidden)]
pub use super::receive::INLINE_VERIFY_LIMIT;
pub use super::receive::{BodyReadTimeout, DEFAULT_BODY_READ_TIMEOUT};
use super::receive::{challenge_of, observe, observer_of, read_timeout, receive, status};
use super::{SmsEvent, WebhookError, WebhookVerifier};

/// How long [`serve`] waits by default for a request's headers: 30 s.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A verified webhook event, extracted with the verifier `V` taken from the router state.
///
/// The URL the verifier sees is `{scheme}://{authority}{path and query}`: the scheme and
/// authority of the request target when it carries them (HTTP/2), else `http` and the `Host`
/// header. Configure the verifier with the public URL (or trust your proxy's forwarded headers)
/// when the provider calls another one. The body is read up to the verifier's
/// [`body_limit`](WebhookVerifier::body_limit) within the [`BodyReadTimeout`]; bodies over
/// 64 KiB are verified on the blocking pool.
///
/// With a [`SharedObserver`](super::SharedObserver) as a request extension (add
/// `axum::Extension(SharedObserver::new(reconciler))` to the router), every verified event is shown to
/// it before the handler runs: a [`Reconciler`](crate::reconcile::Reconciler) settles a send
/// whose outcome was unknown from its status webhook (a store failure there is logged and the
/// handler still runs).
///
/// Take the event out with a pattern (`Verified { event, .. }: Verified<V>`) or
/// [`into_inner`](Self::into_inner), or read it through `Deref` (`verified.kind`).
///
/// The extractor does not deduplicate: for dedupe that frees the key when the handler fails, put
/// [`VerifyLayer::dedupe`](super::tower::VerifyLayer::dedupe) on the route instead and take the
/// event with `Extension<SmsEvent>` (see the [module](self) docs).
#[derive(Debug)]
pub struct Verified<V> {
    /// The verified event.
    pub event: SmsEvent,
    verifier: PhantomData<fn() -> V>,
}

impl<V> Verified<V> {
    /// The verified event.
    #[must_use]
    pub fn into_inner(self) -> SmsEvent {
        self.event
    }
}

impl<V> std::ops::Deref for Verified<V> {
    type Target = SmsEvent;

    fn deref(&self) -> &SmsEvent {
        &self.event
    }
}

/// The response of a refused webhook: 401 for authentication failures, 413 for an oversized
/// body, 400 for anything else (a malformed payload, too many parameters, a body that could not
/// be read). The body is a small JSON object with the code, reason and provider; a request
/// without credentials to a verifier of Basic credentials (Infobip's, Bandwidth's) also gets its
/// [`challenge`](WebhookVerifier::challenge) as `WWW-Authenticate`.
#[derive(Debug)]
pub struct WebhookRejection(pub WebhookError, Option<&'static str>);

impl WebhookRejection {
    /// The rejection of `error` by `verifier`, with its challenge when `error` is a request
    /// without credentials.
    fn by<V: WebhookVerifier + ?Sized>(verifier: &V, error: WebhookError) -> Self {
        let challenge = challenge_of(&error, verifier.challenge());
        Self(error, challenge)
    }
}

impl IntoResponse for WebhookRejection {
    fn into_response(self) -> Response {
        let body = serde_json::json!({"code": self.0.code(), "reason": self.0.reason(), "provider": self.0.provider()});
        let mut response =
            (status(&self.0), [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response();
        if let Some(challenge) = self.1 {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static(challenge));
        }
        response
    }
}

impl<S, V> FromRequest<S> for Verified<V>
where
    S: Send + Sync,
    V: WebhookVerifier + FromRef<S> + 'static,
{
    type Rejection = WebhookRejection;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let VerifiedAll { events, .. } = VerifiedAll::<V>::from_request(request, state).await?;
        let provider = events.first().map_or("", |event| event.provider);
        match <[SmsEvent; 1]>::try_from(events) {
            Ok([event]) => Ok(Self { event, verifier: PhantomData }),
            Err(events) => Err(WebhookRejection(
                WebhookError::payload(
                    provider,
                    format!("the request carries {} events: take them with VerifiedAll", events.len()),
                ),
                None,
            )),
        }
    }
}

/// Every event of a verified webhook request, in order (at least one), extracted with the
/// verifier `V` taken from the router state: for Infobip and Bandwidth, which post several
/// results in one request ([`Verified`] refuses such a request with a 400). Verification,
/// limits and the observer are [`Verified`]'s; a request is verified whole or refused whole, so
/// answer non-2xx unless every event was handled and the provider redelivers them all.
#[derive(Debug)]
pub struct VerifiedAll<V> {
    /// The verified events, in the order of the request.
    pub events: Vec<SmsEvent>,
    verifier: PhantomData<fn() -> V>,
}

impl<V> VerifiedAll<V> {
    /// The verified events.
    #[must_use]
    pub fn into_inner(self) -> Vec<SmsEvent> {
        self.events
    }
}

impl<S, V> FromRequest<S> for VerifiedAll<V>
where
    S: Send + Sync,
    V: WebhookVerifier + FromRef<S> + 'static,
{
    type Rejection = WebhookRejection;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let timeout = read_timeout(&request, None);
        let observer = observer_of(&request);
        let verifier = Arc::new(V::from_ref(state));
        match receive(Arc::clone(&verifier), request, timeout).await {
            Ok(received) => {
                observe(observer.as_ref(), &received).await;
                Ok(Self { events: received.events, verifier: PhantomData })
            }
            Err(error) => Err(WebhookRejection::by(&*verifier, error)),
        }
    }
}

/// Serves `router` on `listener` over HTTP/1.1, as `axum::serve` does, with the timeouts a public
/// webhook endpoint needs: a client gets [`DEFAULT_HEADER_READ_TIMEOUT`] to send a request's
/// headers (an idle kept-alive connection included) and the extractor
/// [`DEFAULT_BODY_READ_TIMEOUT`] for its body; past either, the connection is closed or the
/// request refused (400 `body_unreadable`).
///
/// Await the returned [`Serve`] to run the server: it runs until the task is dropped, or, with
/// [`Serve::with_graceful_shutdown`], until its signal and the requests in flight are done.
pub fn serve(listener: tokio::net::TcpListener, router: Router) -> Serve {
    Serve {
        listener,
        router,
        header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
        body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
        shutdown: None,
    }
}

/// A server being set up by [`serve`]; `.await` it to run it.
#[must_use = "a server does nothing until it is awaited"]
pub struct Serve {
    listener: tokio::net::TcpListener,
    router: Router,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    shutdown: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl std::fmt::Debug for Serve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serve")
            .field("listener", &self.listener)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("graceful_shutdown", &self.shutdown.is_some())
            .finish_non_exhaustive()
    }
}

impl Serve {
    /// Shuts the server down gracefully when `signal` completes (`tokio::signal::ctrl_c()`, a
    /// channel, a cancellation token): it stops accepting connections at once, lets every
    /// request in flight finish and be answered, closes idle kept-alive connections, and then
    /// the server's future resolves with `Ok(())`. The wait is bounded by the read timeouts: a
    /// client still sending its headers or body is cut off when they run out.
    ///
    /// ```no_run
    /// # async fn example(app: axum::Router) -> std::io::Result<()> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    /// // Or `tokio::signal::ctrl_c()` (tokio's `signal` feature).
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let server = sms_sdk::webhook::axum::serve(listener, app).with_graceful_shutdown(async {
    ///     let _ = stopped.await;
    /// });
    /// // `Serve` is `IntoFuture`: await it, or spawn it inside an `async` block.
    /// let running = tokio::spawn(async move { server.await });
    /// // … later:
    /// let _ = stop.send(());
    /// running.await.expect("the server task")?;
    /// # Ok(()) }
    /// ```
    pub fn with_graceful_shutdown<F>(mut self, signal: F) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// How long a client has to send a request's headers (default 30 s).
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// How long a client has to send a request's body (default 30 s).
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    async fn run(self) -> io::Result<()> {
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new()).header_read_timeout(self.header_read_timeout);
        let body_read_timeout = BodyReadTimeout(self.body_read_timeout);
        let mut signal = self.shutdown.unwrap_or_else(|| Box::pin(std::future::pending()));
        let (stopping, stop) = tokio::sync::watch::channel(false);
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = &mut signal => break,
                // Forget finished connections as they end, so the set holds only live ones.
                Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            };
            let stream = match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    accept_failed(&error).await;
                    continue;
                }
            };
            let router = self.router.clone();
            let connection = http.serve_connection(
                TokioIo::new(stream),
                hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                    request.extensions_mut().insert(body_read_timeout);
                    // A router is always ready: `call` needs no `poll_ready` first.
                    router.clone().call(request)
                }),
            );
            let mut stop = stop.clone();
            connections.spawn(async move {
                let mut connection = std::pin::pin!(connection);
                let result = tokio::select! {
                    result = connection.as_mut() => result,
                    // The one change ever sent is to `true`; an error (the sender gone) is a stop too.
                    _ = stop.changed() => {
                        // Finish the request in flight, if any, then close.
                        connection.as_mut().graceful_shutdown();
                        connection.await
                    }
                };
                if let Err(error) = result {
                    tracing::debug!(%error, "webhook connection ended with an error");
                }
            });
        }
        drop(self.listener);
        // Every connection finishes its request in flight (or is closed when idle), then ends.
        let _ = stopping.send(true);
        while connections.join_next().await.is_some() {}
        Ok(())
    }
}

/// After a failed accept: go on at once when one connection failed, or wait a second when the
/// process is out of resources (too many open files), instead of spinning.
async fn accept_failed(error: &io::Error) {
    let per_connection = matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    );
    if !per_connection {
        tracing::warn!(%error, "accepting a webhook connection failed; retrying in 1 s");
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

impl IntoFuture for Serve {
    type Output = io::Result<()>;
    type IntoFuture = Pin<Box<dyn Future<Output = io::Result<()>> + Send>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}
