//! Reading a request body within the emulator's limits: at most the body limit, within the read
//! timeout. An oversized body is drained (up to a bound) before the answer, so that the client
//! finishes writing and reads the provider's error instead of a reset connection.

use std::pin::Pin;
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody as _};
use http::{HeaderMap, header};
use tokio::time::Instant;

/// How much of an oversized body is read and thrown away, at most, before answering.
const DRAIN_LIMIT: usize = 16 * 1024 * 1024;

/// Why a body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// It is larger than the limit (declared or sent).
    TooLarge,
    /// It did not arrive in time, or the connection failed while it was read.
    Unreadable,
}

/// The limits a body is read within.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimits {
    /// The largest body accepted, in bytes.
    pub(crate) max_bytes: usize,
    /// How long the whole body may take to arrive.
    pub(crate) timeout: Duration,
}

/// The next chunk of data; `Ok(None)` at the end of the body.
async fn next_data(body: &mut Body) -> Result<Option<Bytes>, BodyError> {
    loop {
        let frame = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await;
        match frame {
            None => return Ok(None),
            Some(Err(_)) => return Err(BodyError::Unreadable),
            // Trailers carry no data: skip them.
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    return Ok(Some(data));
                }
            }
        }
    }
}

/// Reads and discards the rest of `body`, up to [`DRAIN_LIMIT`] bytes or `deadline`.
async fn drain(body: &mut Body, deadline: Instant) {
    let mut drained = 0usize;
    while drained <= DRAIN_LIMIT {
        match tokio::time::timeout_at(deadline, next_data(body)).await {
            Ok(Ok(Some(data))) => drained = drained.saturating_add(data.len()),
            Ok(Ok(None) | Err(_)) | Err(_) => return,
        }
    }
}

/// The declared `Content-Length`, when there is a readable one.
fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

/// Reads `body` within `limits`.
///
/// # Errors
/// [`BodyError::TooLarge`] when it is declared or turns out larger than the limit (the rest is
/// drained first), [`BodyError::Unreadable`] when it does not arrive within the timeout or the
/// connection fails.
pub(crate) async fn read(mut body: Body, headers: &HeaderMap, limits: BodyLimits) -> Result<Bytes, BodyError> {
    let deadline = Instant::now() + limits.timeout;
    let max = u64::try_from(limits.max_bytes).unwrap_or(u64::MAX);
    if content_length(headers).is_some_and(|declared| declared > max) {
        drain(&mut body, deadline).await;
        return Err(BodyError::TooLarge);
    }
    let mut bytes = Vec::new();
    loop {
        let data = match tokio::time::timeout_at(deadline, next_data(&mut body)).await {
            Ok(Ok(Some(data))) => data,
            Ok(Ok(None)) => return Ok(Bytes::from(bytes)),
            Ok(Err(error)) => return Err(error),
            Err(_) => return Err(BodyError::Unreadable),
        };
        if bytes.len().saturating_add(data.len()) > limits.max_bytes {
            drain(&mut body, deadline).await;
            return Err(BodyError::TooLarge);
        }
        bytes.extend_from_slice(&data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: BodyLimits = BodyLimits { max_bytes: 8, timeout: Duration::from_secs(5) };

    fn length(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Ok(value) = value.parse() {
            headers.insert(header::CONTENT_LENGTH, value);
        }
        headers
    }

    #[tokio::test]
    async fn bodies_up_to_the_limit_are_read() {
        let read = read(Body::from("12345678"), &HeaderMap::new(), LIMITS).await;
        assert_eq!(read, Ok(Bytes::from_static(b"12345678")));
    }

    #[tokio::test]
    async fn larger_bodies_are_refused_whether_declared_or_not() {
        assert_eq!(read(Body::from("123456789"), &HeaderMap::new(), LIMITS).await, Err(BodyError::TooLarge));
        assert_eq!(read(Body::from("1"), &length("9"), LIMITS).await, Err(BodyError::TooLarge));
        assert_eq!(read(Body::from("1"), &length("not a number"), LIMITS).await, Ok(Bytes::from_static(b"1")));
    }
}
