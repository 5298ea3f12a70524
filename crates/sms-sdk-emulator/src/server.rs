//! The HTTP server: one hyper connection per accepted socket, so that a handler can hold,
//! close or reset its own connection (the emulator's connection faults).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

/// A handle on the connection a request came in on.
#[derive(Debug, Clone, Default)]
pub(crate) struct Connection {
    end: CancellationToken,
    reset: Arc<AtomicBool>,
}

impl Connection {
    /// Closes the connection without a response.
    pub(crate) fn close(&self) {
        self.end.cancel();
    }

    /// Resets the connection (TCP RST) without a response.
    pub(crate) fn reset(&self) {
        self.reset.store(true, Ordering::SeqCst);
        self.end.cancel();
    }
}

/// How many connections are served at once; further ones wait in the listen backlog.
pub(crate) const MAX_CONNECTIONS: usize = 1024;

/// Accepts connections until `shutdown` is cancelled, serving at most [`MAX_CONNECTIONS`] at
/// once. A connection must send a request's headers within `header_read_timeout` (counted from
/// the connection, or from the end of the previous response on a kept-alive one).
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    header_read_timeout: Duration,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let slot = tokio::select! {
            () = shutdown.cancelled() => return,
            slot = Arc::clone(&slots).acquire_owned() => slot,
        };
        // The semaphore is never closed.
        let Ok(slot) = slot else { return };
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let served = connection(stream, router.clone(), header_read_timeout, shutdown.clone());
                tokio::spawn(async move {
                    served.await;
                    drop(slot);
                });
            }
            // Out of descriptors, or the peer gave up during the handshake: try again shortly.
            Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}

/// The stream, and a second descriptor of the same socket kept to reset it.
fn with_spare(stream: TcpStream) -> io::Result<(TcpStream, std::net::TcpStream)> {
    let stream = stream.into_std()?;
    let spare = stream.try_clone()?;
    Ok((TcpStream::from_std(stream)?, spare))
}

/// Serves one connection until it ends, a handler ends it, or the emulator stops.
async fn connection(stream: TcpStream, router: Router, header_read_timeout: Duration, shutdown: CancellationToken) {
    let Ok((stream, spare)) = with_spare(stream) else { return };
    let _ = stream.set_nodelay(true);
    let control = Connection::default();
    let handle = control.clone();
    let service = hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
        request.extensions_mut().insert(handle.clone());
        router.clone().oneshot(request)
    });
    // The header timeout also closes a kept-alive connection left idle that long (hyper counts
    // from the end of the previous response); a request whose headers were read is not timed
    // by it, so the magic "never answers" recipient still holds until the client gives up.
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = served => {}
        () = control.end.cancelled() => {}
        () = shutdown.cancelled() => {}
    }
    if control.reset.load(Ordering::SeqCst) {
        // With a zero linger time, the last close of the socket sends a RST, not a FIN.
        if let Ok(spare) = TcpStream::from_std(spare) {
            let _ = spare.set_zero_linger();
        }
    }
}
