//! What the server integrations (the tower layer and the axum extractor) share: read an HTTP
//! request's body within a limit and a timeout, rebuild the URL it was received at, verify it
//! (in place, or on the blocking pool when the body is large), and map a refusal to a status.

use std::error::Error as StdError;
use std::future::poll_fn;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf as _, BufMut as _, Bytes};
use http::request::Parts;
use http::{Request, StatusCode, header};
use http_body::Body;

use super::SharedObserver;
use super::{SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// How long the layer and the extractor wait by default for a request's whole body: 30 s.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Bodies larger than this are verified on tokio's blocking pool (`spawn_blocking`), so that a
/// large body never holds an async worker; smaller ones are verified in place (a few
/// microseconds, less than a thread hand-off). Not part of the API (the tests read it); the
/// integrations' docs say 64 KiB.
#[doc(hidden)]
pub const INLINE_VERIFY_LIMIT: usize = 64 * 1024;

/// How long the webhook layer and extractor wait for a request's body, as a request extension.
/// The axum integration's `serve` puts its setting on every request; under another server, add
/// it yourself (`axum::Extension`, or `request.extensions_mut().insert(..)`) to change the
/// default ([`DEFAULT_BODY_READ_TIMEOUT`]). A timeout set on the layer itself wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyReadTimeout(pub Duration);

/// A request that passed verification: its events (at least one: most providers post one per
/// request, Infobip and Bandwidth batches), its head and its body, read whole.
pub(crate) struct Received {
    pub(crate) events: Vec<SmsEvent>,
    pub(crate) parts: Parts,
    pub(crate) body: Bytes,
}

/// The status a refusal is answered with: 401 when the request is not authentic, 413 when its
/// body is too large, 400 otherwise (a malformed payload, too many parameters, a body that could
/// not be read).
pub(crate) fn status(error: &WebhookError) -> StatusCode {
    StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::BAD_REQUEST)
}

/// What a refusal's `WWW-Authenticate` says: the verifier's `challenge` for a request that came
/// without credentials, none otherwise.
pub(crate) fn challenge_of(error: &WebhookError, challenge: Option<&'static str>) -> Option<&'static str> {
    challenge.filter(|_| matches!(error, WebhookError::MissingSignature { .. }))
}

/// The body read timeout of `request`: `configured` when set, else its [`BodyReadTimeout`]
/// extension, else [`DEFAULT_BODY_READ_TIMEOUT`].
pub(crate) fn read_timeout<B>(request: &Request<B>, configured: Option<Duration>) -> Duration {
    configured
        .or_else(|| request.extensions().get::<BodyReadTimeout>().map(|t| t.0))
        .unwrap_or(DEFAULT_BODY_READ_TIMEOUT)
}

/// Reads `request`'s body (at most the verifier's [`body_limit`](WebhookVerifier::body_limit),
/// within `timeout`) and verifies it as received at [`received_url`], every event it carries
/// ([`verify_all`](WebhookVerifier::verify_all)). Bodies over
/// 64 KiB are verified on the blocking pool.
pub(crate) async fn receive<V, B>(
    verifier: Arc<V>,
    request: Request<B>,
    timeout: Duration,
) -> Result<Received, WebhookError>
where
    V: WebhookVerifier + ?Sized + 'static,
    B: Body,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let provider = verifier.provider();
    let limit = verifier.body_limit();
    let (parts, body) = request.into_parts();
    let body = match read_body(body, limit, timeout).await {
        Ok(body) => body,
        Err(BodyError::TooLarge) => return Err(WebhookError::BodyTooLarge { provider, limit }),
        Err(BodyError::Unreadable) => return Err(WebhookError::BodyUnreadable { provider }),
    };
    let url = received_url(&parts);
    let request = WebhookRequest { method: parts.method.as_str(), url: &url, headers: &parts.headers, body: &body };
    verifier.prepare(&request).await?;
    let inline = body.len() <= INLINE_VERIFY_LIMIT;
    let verify = move |verifier: &V| {
        let request = WebhookRequest { method: parts.method.as_str(), url: &url, headers: &parts.headers, body: &body };
        let result = verifier.verify_all(&request);
        result.map(|events| Received { events, parts, body })
    };
    if inline {
        return verify(&verifier);
    }
    match tokio::task::spawn_blocking(move || verify(&verifier)).await {
        Ok(result) => result,
        // The verifier panicked: the same as it panicking in place.
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        // Cancelled: the runtime is shutting down and nobody is left to answer; refuse.
        Err(_) => Err(WebhookError::BodyUnreadable { provider }),
    }
}

/// Shows a verified request's events to `observer`, in order, with the URL it was received at
/// (query included), before the handler runs.
pub(crate) async fn observe(observer: Option<&SharedObserver>, received: &Received) {
    let Some(observer) = observer else { return };
    let url = received_url(&received.parts);
    for event in &received.events {
        observer.0.on_event(event, &url).await;
    }
}

/// The observer a request carries as an extension (for the axum extractor: add it with
/// `axum::Extension(observer)`).
pub(crate) fn observer_of<B>(request: &Request<B>) -> Option<SharedObserver> {
    request.extensions().get::<SharedObserver>().cloned()
}

/// The URL a request was received at: `{scheme}://{authority}{path and query}`, with the scheme
/// and authority of the request target when it carries them (HTTP/2, or an absolute-form
/// HTTP/1.1 target), else `http` and the `Host` header.
fn received_url(parts: &Parts) -> String {
    let scheme = parts.uri.scheme_str().unwrap_or("http");
    let host = parts
        .uri
        .authority()
        .map(http::uri::Authority::as_str)
        .or_else(|| parts.headers.get(header::HOST).and_then(|h| h.to_str().ok()).filter(|h| !h.is_empty()));
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    format!("{scheme}://{}{path}", host.unwrap_or("localhost"))
}

/// Why a body could not be had.
enum BodyError {
    /// Longer than the limit (declared or read).
    TooLarge,
    /// The client went away, sent a broken body, or was too slow.
    Unreadable,
}

/// Whether `error` (or what caused it) is the length limit of an outer layer
/// (`http_body_util::Limited`, under axum's `DefaultBodyLimit` or tower-http's
/// `RequestBodyLimit`).
fn is_length_limit(error: &(dyn StdError + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if error.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = error.source();
    }
    false
}

/// Reads at most `limit` bytes of `body` within `timeout`. A declared length over the limit is
/// refused before anything is read; trailers are ignored.
async fn read_body<B>(body: B, limit: usize, timeout: Duration) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let declared = usize::try_from(body.size_hint().lower()).map_err(|_| BodyError::TooLarge)?;
    if declared > limit {
        return Err(BodyError::TooLarge);
    }
    let read = async {
        let mut body = pin!(body);
        let mut bytes = Vec::with_capacity(declared);
        while let Some(frame) = poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
            let frame = frame.map_err(|error| {
                if is_length_limit(error.into().as_ref()) { BodyError::TooLarge } else { BodyError::Unreadable }
            })?;
            let Ok(chunk) = frame.into_data() else { continue };
            if chunk.remaining() > limit.saturating_sub(bytes.len()) {
                return Err(BodyError::TooLarge);
            }
            bytes.put(chunk);
        }
        Ok(Bytes::from(bytes))
    };
    tokio::time::timeout(timeout, read).await.unwrap_or(Err(BodyError::Unreadable))
}
