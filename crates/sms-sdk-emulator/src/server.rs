//! The HTTP server: one hyper connection per accepted socket, so that a handler can hold,
//! close or reset its own connection (the emulator's connection faults).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
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

/// Accepts connections until `shutdown` is cancelled.
pub(crate) async fn serve(listener: TcpListener, router: Router, shutdown: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                tokio::spawn(connection(stream, router.clone(), shutdown.clone()));
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
async fn connection(stream: TcpStream, router: Router, shutdown: CancellationToken) {
    let Ok((stream, spare)) = with_spare(stream) else { return };
    let _ = stream.set_nodelay(true);
    let control = Connection::default();
    let handle = control.clone();
    let service = hyper::service::service_fn(move |mut request: http::Request<Incoming>| {
        request.extensions_mut().insert(handle.clone());
        router.clone().oneshot(request)
    });
    // No header timeout: an idle keep-alive connection stays open until the client closes it, so
    // a pooled client never races a server-side close.
    let served = hyper::server::conn::http1::Builder::new()
        .header_read_timeout(None)
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
