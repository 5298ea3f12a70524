//! The provider of the crash trials: a Twilio API on loopback that counts the requests for each
//! key and creates every message at once (one request per connection), but holds a request for
//! [`HOLD`] without an answer until its sender goes away.
//!
//! A killed worker may have written a request that the provider has not read yet: the kernel
//! still delivers it. [`Provider::settle`] waits until every connection opened before it has been
//! read to its end, so that the counts then include everything a dead worker sent.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::WAIT;
use super::worker::HOLD;

/// A running provider; it stops when dropped.
pub(super) struct Provider {
    address: std::net::SocketAddr,
    state: Arc<State>,
    accepting: tokio::task::JoinHandle<()>,
}

#[derive(Default)]
struct State {
    /// Requests per key (from the body, `crash <key>`).
    requests: Mutex<HashMap<String, usize>>,
    /// The connections still open, by the order they were accepted in.
    open: Mutex<BTreeSet<u64>>,
    closed: tokio::sync::Notify,
}

impl Provider {
    pub(super) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let state = Arc::new(State::default());
        let shared = Arc::clone(&state);
        let accepting = tokio::spawn(async move {
            for order in 0.. {
                let Ok((stream, _)) = listener.accept().await else { break };
                shared.open.lock().unwrap().insert(order);
                let state = Arc::clone(&shared);
                tokio::spawn(async move {
                    state.serve(stream, order).await;
                    state.open.lock().unwrap().remove(&order);
                    state.closed.notify_waiters();
                });
            }
        });
        Self { address, state, accepting }
    }

    /// The base URL for the Twilio adapter.
    pub(super) fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub(super) fn requests_per_key(&self) -> HashMap<String, usize> {
        self.state.requests.lock().unwrap().clone()
    }

    pub(super) fn requests_for(&self, key: &str) -> usize {
        self.state.requests.lock().unwrap().get(key).copied().unwrap_or(0)
    }

    /// Waits until every connection opened before this call has been read to its end (and
    /// closed). Connections are accepted in the order they were made, so this one is answered
    /// after all of them.
    pub(super) async fn settle(&self) {
        let settling = async {
            let mut stream = TcpStream::connect(self.address).await.unwrap();
            stream.write_all(b"GET /settle HTTP/1.1\r\nhost: provider\r\n\r\n").await.unwrap();
            let mut reply = Vec::new();
            stream.read_to_end(&mut reply).await.unwrap();
            reply
        };
        let reply = tokio::time::timeout(WAIT, settling).await.expect("the provider did not settle");
        assert!(reply.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&reply));
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl State {
    /// Serves the connection accepted as number `order`: one request.
    async fn serve(&self, mut stream: TcpStream, order: u64) {
        let Some((head, body)) = read_request(&mut stream).await else { return };
        if head.starts_with("GET /settle ") {
            loop {
                // Registered before the check, so that no closing goes unnoticed.
                let closed = self.closed.notified();
                if self.open.lock().unwrap().range(..order).next().is_none() {
                    break;
                }
                closed.await;
            }
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
            return;
        }
        let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
        let key = form.get("Body").and_then(|b| b.strip_prefix("crash ")).unwrap_or("?");
        *self.requests.lock().unwrap().entry(key.to_owned()).or_default() += 1;
        if form.get("To").is_some_and(|to| to == HOLD) {
            // No answer: read until the sender goes away.
            let mut rest = [0; 1024];
            while stream.read(&mut rest).await.is_ok_and(|n| n > 0) {}
            return;
        }
        let created = crate::provider::fixture("twilio", "message_created.json");
        let length = created.len();
        let response = format!(
            "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\
             connection: close\r\n\r\n{created}"
        );
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    }
}

/// Reads one request: its head, and the `content-length` bytes of its body. `None` when the
/// connection ends first.
async fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut received = Vec::new();
    let mut chunk = [0; 4096];
    let end = loop {
        if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let read = stream.read(&mut chunk).await.ok().filter(|&n| n > 0)?;
        received.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&received[..end]).into_owned();
    let length = head
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0);
    let mut body = received.split_off(end + 4);
    while body.len() < length {
        let read = stream.read(&mut chunk).await.ok().filter(|&n| n > 0)?;
        body.extend_from_slice(&chunk[..read]);
    }
    Some((head, body))
}
