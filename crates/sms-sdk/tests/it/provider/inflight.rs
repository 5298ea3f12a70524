//! The limit on requests in flight over real HTTP on loopback: a Twilio adapter against a small
//! HTTP/1.1 server that counts the requests it serves at once and answers only while open.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sms_sdk::store::{IdempotencyStore, MemoryStore, Record};
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::{CancellationToken, Client, ClientBuilder, ErrorKind, Failover, Limit, Message, SendOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::fixture;
use super::twilio::twilio_at;

/// What the server answers: the request's index (0-based, in arrival order) → status, body and
/// extra headers.
type Reply = fn(usize) -> (u16, String, &'static str);

fn created(_: usize) -> (u16, String, &'static str) {
    (201, fixture("twilio", "message_created.json"), "")
}

/// A loopback HTTP/1.1 server (keep-alive) for the Twilio adapter.
#[derive(Clone)]
struct Server {
    url: String,
    state: Arc<State>,
}

struct State {
    serving: AtomicUsize,
    most: AtomicUsize,
    connections: AtomicUsize,
    most_connections: AtomicUsize,
    /// The `Body` parameter of each request, in arrival order.
    bodies: Mutex<Vec<String>>,
    open: watch::Sender<bool>,
    reply: Reply,
}

impl Server {
    /// A server that holds every request until [`Server::open`].
    async fn start(reply: Reply) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State {
            serving: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            most_connections: AtomicUsize::new(0),
            bodies: Mutex::new(Vec::new()),
            open: watch::channel(false).0,
            reply,
        });
        let shared = Arc::clone(&state);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, Arc::clone(&shared)));
            }
        });
        Self { url, state }
    }

    fn open(&self) {
        self.state.open.send_replace(true);
    }

    fn serving(&self) -> usize {
        self.state.serving.load(Ordering::SeqCst)
    }

    fn most(&self) -> usize {
        self.state.most.load(Ordering::SeqCst)
    }

    fn bodies(&self) -> Vec<String> {
        self.state.bodies.lock().unwrap().clone()
    }

    /// Waits (real time, at most 10 s) until the server serves `n` requests at once.
    async fn wait_serving(&self, n: usize) {
        for _ in 0..1000 {
            if self.serving() >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the server never served {n} requests at once (now {})", self.serving());
    }
}

/// Serves the requests of one connection.
async fn serve(mut stream: TcpStream, state: Arc<State>) {
    let open = state.connections.fetch_add(1, Ordering::SeqCst) + 1;
    state.most_connections.fetch_max(open, Ordering::SeqCst);
    let mut buffer = Vec::new();
    while let Some(body) = read_request(&mut stream, &mut buffer).await {
        let now = state.serving.fetch_add(1, Ordering::SeqCst) + 1;
        state.most.fetch_max(now, Ordering::SeqCst);
        let index = {
            let mut bodies = state.bodies.lock().unwrap();
            let text = url::form_urlencoded::parse(&body).find(|(k, _)| k == "Body").map(|(_, v)| v.into_owned());
            bodies.push(text.unwrap_or_default());
            bodies.len() - 1
        };
        let mut open = state.open.subscribe();
        let _ = open.wait_for(|open| *open).await;
        let (status, body, headers) = (state.reply)(index);
        state.serving.fetch_sub(1, Ordering::SeqCst);
        let response = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{headers}\r\n{body}",
            body.len()
        );
        if stream.write_all(response.as_bytes()).await.is_err() {
            break;
        }
    }
    state.connections.fetch_sub(1, Ordering::SeqCst);
}

/// Reads one request from `stream` (bytes past it stay in `buffer`); returns its body, or `None`
/// when the connection closed.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .map_or(0, |value| value.trim().parse().unwrap());
            let total = end + 4 + length;
            while buffer.len() < total {
                let read = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
                buffer.extend_from_slice(&chunk[..read]);
            }
            let body = buffer[end + 4..total].to_vec();
            buffer.drain(..total);
            return Some(body);
        }
        let read = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..read]);
    }
}

fn builder(server: &Server) -> ClientBuilder {
    Client::builder().adapter(twilio_at(&server.url))
}

fn numbered(n: usize) -> Message {
    Message::new(crate::TO, format!("message {n}"))
}

/// Spawns `client.send_with(message)`.
fn spawn_send(
    client: &Client,
    message: Message,
    options: SendOptions,
) -> tokio::task::JoinHandle<Result<sms_sdk::Receipt, sms_sdk::Error>> {
    let client = client.clone();
    tokio::spawn(async move { client.send_with(&message, options).await })
}

#[tokio::test]
async fn inflight_the_limit_holds_and_the_queued_sends_go_when_slots_free() {
    let server = Server::start(created).await;
    let client = builder(&server).max_in_flight(Some(3)).build().unwrap();
    let sends: Vec<_> = (0..40).map(|n| spawn_send(&client, numbered(n), SendOptions::default())).collect();
    server.wait_serving(3).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.serving(), 3, "the queued sends wait for a slot");
    server.open();
    for send in sends {
        let receipt = send.await.unwrap().unwrap();
        assert_eq!(receipt.attempts.len(), 1, "waiting for a slot is not an attempt");
    }
    assert_eq!(server.most(), 3);
    assert_eq!(server.bodies().len(), 40);
    assert!(server.state.most_connections.load(Ordering::SeqCst) <= 6, "a few connections, not one per send");
}

#[tokio::test]
async fn inflight_no_limit_is_expressible() {
    let server = Server::start(created).await;
    let client = builder(&server).max_in_flight(Some(1)).max_in_flight(None).build().unwrap();
    let sends: Vec<_> = (0..20).map(|n| spawn_send(&client, numbered(n), SendOptions::default())).collect();
    server.wait_serving(20).await;
    server.open();
    for send in sends {
        send.await.unwrap().unwrap();
    }
    assert_eq!(server.most(), 20);
}

#[tokio::test]
async fn inflight_a_cancelled_queued_send_is_aborted_made_no_request_and_frees_its_key() {
    let server = Server::start(created).await;
    let store = MemoryStore::new();
    let client = builder(&server).max_in_flight(Some(1)).idempotency(store.clone()).build().unwrap();
    let first = spawn_send(&client, numbered(0), SendOptions::default());
    server.wait_serving(1).await;
    let token = CancellationToken::new();
    let queued = spawn_send(&client, numbered(1).idempotency_key("k1"), SendOptions::default().cancel(token.clone()));
    tokio::time::sleep(Duration::from_millis(50)).await;
    token.cancel();
    let error = queued.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Aborted);
    assert!(error.is_retry_safe());
    assert!(error.attempts().is_empty());
    // The Cancellation ruling: cancelled before any request, the record is finalized rejected.
    let Some(Record::Rejected { error: record, .. }) = store.get("k1").await.unwrap() else { panic!() };
    assert_eq!(record.code, "aborted");

    server.open();
    first.await.unwrap().unwrap();
    assert_eq!(server.bodies(), ["message 0"], "the cancelled send made no request");
    // The same key sends again.
    let again = client.send(&numbered(1).idempotency_key("k1")).await.unwrap();
    assert!(!again.replayed);
    assert_eq!(server.bodies(), ["message 0", "message 1"]);
}

#[tokio::test]
async fn inflight_a_dropped_queued_send_made_no_request_and_its_followers_get_aborted() {
    let server = Server::start(created).await;
    let store = MemoryStore::new();
    let client = builder(&server).max_in_flight(Some(1)).idempotency(store.clone()).build().unwrap();
    let first = spawn_send(&client, numbered(0), SendOptions::default());
    server.wait_serving(1).await;
    let leader = spawn_send(&client, numbered(1).idempotency_key("k2"), SendOptions::default());
    tokio::time::sleep(Duration::from_millis(50)).await;
    let follower = spawn_send(&client, numbered(1).idempotency_key("k2"), SendOptions::default());
    tokio::time::sleep(Duration::from_millis(50)).await;
    leader.abort();
    assert!(leader.await.unwrap_err().is_cancelled());

    let error = follower.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Aborted, "nothing was sent, so never unknown: {error:?}");
    assert!(error.is_retry_safe());
    // The Cancellation ruling: a dropped send leaves its reservation as it is.
    assert!(matches!(store.get("k2").await.unwrap(), Some(Record::Reserved { .. })));

    server.open();
    first.await.unwrap().unwrap();
    client.send(&numbered(2)).await.unwrap();
    assert_eq!(server.bodies(), ["message 0", "message 2"], "the dropped send made no request");
}

#[tokio::test]
async fn inflight_the_queue_timeout_is_a_typed_retry_safe_error_before_any_request() {
    let server = Server::start(created).await;
    let store = MemoryStore::new();
    let backup = MemoryAdapter::builder().name("backup").build();
    let client = builder(&server)
        .adapter(backup.clone())
        .failover(Failover::OnEligibleRejection)
        .max_in_flight(Some(1))
        .adapter_max_in_flight("backup", None)
        .queue_timeout(Duration::from_millis(100))
        .idempotency(store.clone())
        .build()
        .unwrap();
    let first = spawn_send(&client, numbered(0), SendOptions::default());
    server.wait_serving(1).await;

    let error = client.send(&numbered(1).idempotency_key("k3")).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::QueueTimeout(Limit::InFlight));
    assert_eq!(error.code(), "queue_timeout");
    assert!(error.is_retry_safe());
    assert!(error.attempts().is_empty());
    assert_eq!(error.provider_name(), Some("twilio"));
    let text = error.to_string();
    assert!(text.contains("max_in_flight") && text.contains("twilio") && text.contains("0.1 s"), "{text}");
    assert_eq!(serde_json::to_value(&error).unwrap()["limit"], "in_flight");
    assert!(backup.sent().is_empty(), "a queue timeout does not fail over");
    let Some(Record::Rejected { error: record, .. }) = store.get("k3").await.unwrap() else { panic!() };
    assert_eq!(record.code, "queue_timeout");

    server.open();
    first.await.unwrap().unwrap();
    assert_eq!(server.bodies(), ["message 0"], "the timed-out send made no request");
}

#[tokio::test]
async fn inflight_a_retry_after_a_rate_limit_queues_again() {
    fn rate_limit_first(index: usize) -> (u16, String, &'static str) {
        if index == 0 { (429, fixture("twilio", "error_20429.json"), "retry-after: 0\r\n") } else { created(index) }
    }
    let server = Server::start(rate_limit_first).await;
    let client = builder(&server).max_in_flight(Some(1)).build().unwrap();
    let first = spawn_send(&client, numbered(0), SendOptions::default());
    server.wait_serving(1).await;
    let second = spawn_send(&client, numbered(1), SendOptions::default());
    tokio::time::sleep(Duration::from_millis(50)).await;
    server.open();
    let (first, second) = (first.await.unwrap().unwrap(), second.await.unwrap().unwrap());
    assert_eq!(first.attempts.len(), 2);
    assert_eq!(second.attempts.len(), 1);
    // The rate-limited send gave its slot back during its backoff and queued behind the other.
    assert_eq!(server.bodies(), ["message 0", "message 1", "message 0"]);
    assert_eq!(server.most(), 1);
}

#[tokio::test]
async fn inflight_ten_thousand_sends_through_four_slots_each_end_exactly_once() {
    const SENDS: usize = 10_000;
    let server = Server::start(created).await;
    let client = builder(&server).max_in_flight(Some(4)).build().unwrap();
    let cancelled = 5_000..6_000;
    let tokens: Vec<_> = (0..SENDS).map(|_| CancellationToken::new()).collect();
    let sends: Vec<_> = (0..SENDS)
        .map(|n| spawn_send(&client, numbered(n), SendOptions::default().cancel(tokens[n].clone())))
        .collect();
    server.wait_serving(4).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    for token in &tokens[cancelled.clone()] {
        token.cancel();
    }
    server.open();

    let mut outcomes: HashMap<&str, usize> = HashMap::new();
    for (n, send) in sends.into_iter().enumerate() {
        let outcome = match send.await.unwrap() {
            Ok(receipt) if !receipt.replayed && receipt.attempts.len() == 1 => "accepted",
            Err(error) if error.kind() == ErrorKind::Aborted && error.attempts().is_empty() => "aborted",
            Ok(_) | Err(_) => "other",
        };
        assert_eq!(outcome == "aborted", cancelled.contains(&n), "send {n} ended {outcome}");
        *outcomes.entry(outcome).or_default() += 1;
    }
    assert_eq!(outcomes, HashMap::from([("accepted", 9_000), ("aborted", 1_000)]));
    let mut bodies = server.bodies();
    bodies.sort();
    let mut expected: Vec<_> = (0..SENDS).filter(|n| !cancelled.contains(n)).map(|n| format!("message {n}")).collect();
    expected.sort();
    assert_eq!(bodies, expected, "one request per accepted send, none for the aborted ones");
    assert!(server.most() <= 4);
}

#[test]
fn inflight_limits_are_checked_when_the_client_is_built() {
    let builder = || Client::builder().adapter(twilio_at("http://127.0.0.1:9"));
    let refused = [
        (builder().max_in_flight(Some(0)), "at least 1"),
        (builder().adapter_max_in_flight("twilio", Some(0)), "at least 1"),
        (builder().adapter_max_in_flight("telnyx", Some(5)), "names no configured adapter: telnyx"),
        (builder().queue_timeout(Duration::from_hours(11 * 366 * 24)), "queue_timeout must be at most 10 years"),
    ];
    for (builder, why) in refused {
        let error = builder.build().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Configuration);
        assert!(error.to_string().contains(why), "{error}");
    }
    let client = builder().max_in_flight(Some(0)).adapter_max_in_flight("twilio", Some(7)).build().unwrap();
    assert!(format!("{client:?}").contains(r#"max_in_flight: {"twilio": Some(7)}"#), "{client:?}");
    assert!(builder().queue_timeout(Duration::ZERO).max_in_flight(None).build().is_ok());
}
