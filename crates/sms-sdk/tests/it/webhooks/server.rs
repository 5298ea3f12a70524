//! The axum integration over real HTTP on loopback: which body read errors become 413 and
//! which 400, verification of large bodies off the async worker, and the read timeouts of
//! `serve`. Each server runs on a current-thread runtime of its own (one async worker); the
//! clients are plain blocking sockets, so a request can be cut short exactly.

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{get, post};
use sms_sdk::TwilioWebhook;
use sms_sdk::webhook::axum::{INLINE_VERIFY_LIMIT, Serve, Verified, serve};
use sms_sdk::webhook::{SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// Starts `router` with [`serve`], set up by `setup`; returns its address and its one async
/// worker thread.
fn start(router: Router, setup: impl FnOnce(Serve) -> Serve + Send + 'static) -> (SocketAddr, ThreadId) {
    let (started, address) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            started.send((listener.local_addr().unwrap(), std::thread::current().id())).unwrap();
            let _ = setup(serve(listener, router)).await;
        });
    });
    address.recv().unwrap()
}

/// Writes `request` (closing the sending side after it when `close`) and reads until the server
/// closes the connection or 10 s pass. Returns what was read and how long it took.
fn exchange(address: SocketAddr, request: &[u8], close: bool) -> (String, Duration) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let start = Instant::now();
    stream.write_all(request).unwrap();
    if close {
        stream.shutdown(Shutdown::Write).unwrap();
    }
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    (String::from_utf8_lossy(&answer).into_owned(), start.elapsed())
}

/// Writes `head`, then one byte of the body every 100 ms until the server answers and closes
/// the connection (or 10 s pass). Returns what was read and how long it took.
fn trickle(address: SocketAddr, head: &str) -> (String, Duration) {
    let mut stream = TcpStream::connect(address).unwrap();
    // Waiting 100 ms for an answer paces the bytes.
    stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let start = Instant::now();
    stream.write_all(head.as_bytes()).unwrap();
    let (mut answer, mut buffer) = (Vec::new(), [0; 4096]);
    while start.elapsed() < Duration::from_secs(10) {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                if stream.write_all(b"a").is_err() {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    (String::from_utf8_lossy(&answer).into_owned(), start.elapsed())
}

/// The status code of a raw HTTP answer (0 when there is none).
fn status(answer: &str) -> u16 {
    answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn head(extra: &str) -> String {
    format!(
        "POST /sms/twilio HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/x-www-form-urlencoded\r\nConnection: close\r\n{extra}\r\n"
    )
}

fn twilio_app(limit: usize) -> Router {
    async fn receive(_: Verified<TwilioWebhook>) -> StatusCode {
        StatusCode::NO_CONTENT
    }
    let verifier = TwilioWebhook::new("twilio-token").unwrap().max_body_bytes(limit);
    Router::new().route("/sms/twilio", post(receive)).with_state(verifier)
}

#[test]
fn a_truncated_body_is_400_and_a_long_one_413() {
    let (address, _) = start(twilio_app(1000), |serve| serve);
    // The client sends 13 of 100 bytes and closes its side: unreadable, not too large.
    let (answer, _) = exchange(address, format!("{}MessageSid=SM", head("Content-Length: 100\r\n")).as_bytes(), true);
    assert_eq!(status(&answer), 400, "{answer}");
    assert!(answer.contains(r#""code":"body_unreadable""#), "{answer}");
    // A declared length over the limit is refused before the body is read.
    let (answer, _) = exchange(address, head("Content-Length: 5000\r\n").as_bytes(), false);
    assert_eq!(status(&answer), 413, "{answer}");
    assert!(answer.contains(r#""code":"body_too_large""#), "{answer}");
    // So is a chunked body that grows past it.
    let chunk = format!("258\r\n{}\r\n", "a".repeat(600));
    let (answer, _) =
        exchange(address, format!("{}{chunk}{chunk}", head("Transfer-Encoding: chunked\r\n")).as_bytes(), false);
    assert_eq!(status(&answer), 413, "{answer}");
    // A body within the limit reaches the verifier: not signed, 401.
    let (answer, _) = exchange(address, format!("{}Body=hi", head("Content-Length: 7\r\n")).as_bytes(), false);
    assert_eq!(status(&answer), 401, "{answer}");
}

#[test]
fn timeout_a_client_too_slow_with_its_body_gets_400() {
    let (address, _) = start(twilio_app(1000), |serve| serve.body_read_timeout(Duration::from_millis(300)));
    let (answer, took) =
        exchange(address, format!("{}MessageSid=SM", head("Content-Length: 100\r\n")).as_bytes(), false);
    assert_eq!(status(&answer), 400, "{answer}");
    assert!(answer.contains(r#""code":"body_unreadable""#), "{answer}");
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn timeout_a_webhook_body_trickled_byte_by_byte_is_cut_at_the_body_read_timeout() {
    let timeout = Duration::from_millis(400);
    let (address, _) = start(twilio_app(1_000_000), move |serve| serve.body_read_timeout(timeout));
    let (answer, took) = trickle(address, &head("Content-Length: 100000\r\n"));
    assert_eq!(status(&answer), 400, "{answer}");
    assert!(answer.contains(r#""code":"body_unreadable""#), "{answer}");
    assert!(
        took >= timeout.saturating_sub(Duration::from_millis(50)) && took < timeout + Duration::from_secs(3),
        "{took:?}"
    );
}

#[test]
fn timeout_half_a_request_line_is_closed_after_the_header_read_timeout() {
    let (address, _) = start(twilio_app(1000), |serve| serve.header_read_timeout(Duration::from_millis(300)));
    let (answer, took) = exchange(address, b"POST /sms/twilio HT", false);
    assert_eq!(status(&answer), 0, "{answer}");
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(5), "closed after {took:?}");
    // A complete request is unaffected.
    let (answer, _) = exchange(address, format!("{}Body=hi", head("Content-Length: 7\r\n")).as_bytes(), false);
    assert_eq!(status(&answer), 401, "{answer}");
}

/// A verifier that takes 3 s over a large body and records the thread each call ran on.
#[derive(Clone, Default)]
struct Slow {
    large_started: Arc<AtomicBool>,
    threads: Arc<Mutex<Vec<(usize, ThreadId)>>>,
}

impl WebhookVerifier for Slow {
    fn provider(&self) -> &'static str {
        "slow"
    }

    fn verify_at(&self, request: &WebhookRequest<'_>, _now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.threads.lock().unwrap().push((request.body.len(), std::thread::current().id()));
        if request.body.len() > INLINE_VERIFY_LIMIT {
            self.large_started.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_secs(3));
        }
        Err(WebhookError::InvalidSignature { provider: "slow" })
    }
}

#[test]
fn large_bodies_are_verified_off_the_async_worker() {
    async fn receive(_: Verified<Slow>) -> StatusCode {
        StatusCode::NO_CONTENT
    }
    let slow = Slow::default();
    let app =
        Router::new().route("/hook", post(receive)).route("/ping", get(|| async { "pong" })).with_state(slow.clone());
    let (address, worker) = start(app, |serve| serve);
    let post = move |size: usize| {
        let request = format!(
            "POST /hook HTTP/1.1\r\nHost: h\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n{}",
            "a".repeat(size)
        );
        exchange(address, request.as_bytes(), false)
    };
    let large = std::thread::spawn(move || post(100 * 1024));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !slow.large_started.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the large body never reached the verifier");
        std::thread::sleep(Duration::from_millis(5));
    }
    // While the large body is being verified, the server still answers at once.
    let (answer, took) = exchange(address, b"GET /ping HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false);
    assert!(answer.ends_with("pong"), "{answer}");
    assert!(took < Duration::from_millis(1500), "the async worker was blocked for {took:?}");
    assert_eq!(status(&large.join().unwrap().0), 401);
    // A small body is verified in place, on the worker.
    assert_eq!(status(&post(100).0), 401);
    let threads = slow.threads.lock().unwrap().clone();
    assert_eq!(threads.len(), 2);
    assert_ne!(threads[0], (100 * 1024, worker));
    assert_eq!(threads[1], (100, worker));
}
