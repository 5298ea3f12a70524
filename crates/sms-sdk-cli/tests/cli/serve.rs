//! `sms-sdk serve` end to end, as the real process (the built binary on a port of its own), fed by
//! the emulator's signed webhooks and by requests the tests sign with the library's builders:
//! STOP and START reach the store's suppression list that `send` and `batch` enforce, a status
//! webhook settles an unknown send, forged or tampered webhooks change nothing, forwarding is
//! signed per Standard Webhooks and exactly once, SIGTERM hands on every acknowledged webhook,
//! and the configuration, health and bounds answer as documented.
//!
//! Every wait has a deadline and every `serve` process is killed when its test ends.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common::{Output, command};

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Read, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU16, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use base64::Engine as _;
use hmac::{KeyInit as _, Mac as _};
use serde_json::{Value, json};
use sms_sdk::testing::webhooks::{SignedRequest, TelnyxKeyPair, signed_telnyx_request, signed_twilio_request};
use sms_sdk_cli::Env;
use sms_sdk_emulator::{Emulator, EmulatorBuilder, Provider, RunningEmulator, credentials, magic};

/// The sender of every send and the number inbound messages go to.
const FROM: &str = "+15005550006";
/// At least 32 characters, as `SMS_SDK_CORRELATION_SECRET` needs.
const CORRELATION_SECRET: &str = "serve-test-correlation-secret-0123456789";
/// The forwarding key (24 bytes), sent as `whsec_` and its base64.
const FORWARD_KEY: &[u8] = b"serve-test-forward-key-24";
/// The longest any one wait in these tests may take.
const WAIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------------------------------------
// Names, numbers and stores of their own for each test (PostgreSQL is shared by every test).

/// The clock's nanoseconds (their low 64 bits).
fn nanos() -> u64 {
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
    u64::try_from(nanos & u128::from(u64::MAX)).unwrap()
}

fn unique(tag: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = nanos();
    format!("serve-{tag}-{nanos:x}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A fresh number `+1628NXXXXXX` (N 2–9), so that no other test (nor an earlier run against the
/// shared PostgreSQL) has it on a suppression list.
fn recipient() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mixed = nanos() ^ (u64::from(std::process::id()) << 20) ^ (NEXT.fetch_add(1, Ordering::Relaxed) * 7919);
    let mixed = mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20;
    format!("+1628{}{:06}", 2 + mixed % 8, (mixed / 8) % 1_000_000)
}

/// A Twilio message id of its own: `SM` and 32 hex digits.
fn sid() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("SM{:016x}{:08x}{:08x}", nanos(), std::process::id(), n)
}

/// A scratch directory of its own.
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique(tag));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn sqlite_store(tag: &str) -> String {
    format!("sqlite:{}", scratch(tag).join("state.db").display())
}

fn postgres_store() -> String {
    std::env::var("SMS_SDK_TEST_POSTGRES_URL").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| {
        panic!("SMS_SDK_TEST_POSTGRES_URL is not set: `source /tmp/dev/env` or run `scripts/test.sh`")
    })
}

fn now_unix() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs()
}

// ---------------------------------------------------------------------------------------------
// Plain HTTP/1.1 over a socket: every request on a connection of its own, `connection: close`.

/// A response: its status, headers (names in lowercase) and body.
#[derive(Debug, Clone)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    /// The value of header `name` (lowercase), when there is one.
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// One request to `address` (`host:port`). A `host` among `headers` is sent as given (a relay's
/// Host); otherwise it is `address`.
fn http(address: &str, method: &str, path: &str, headers: &[(String, String)], body: &[u8]) -> std::io::Result<Answer> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        let _ = write!(head, "host: {address}\r\n");
    }
    for (name, value) in headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    let _ = write!(head, "content-length: {}\r\nconnection: close\r\n\r\n", body.len());
    stream.write_all(head.as_bytes())?;
    // A server that answers before reading all of a large body may close early: read its answer.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse_answer(&raw)
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP response: {:?}", String::from_utf8_lossy(&raw))))
}

fn parse_answer(raw: &[u8]) -> Option<Answer> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked")) {
        body = dechunk(&body)?;
    }
    Some(Answer { status, headers, body: String::from_utf8_lossy(&body).into_owned() })
}

fn dechunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let end = raw.windows(2).position(|w| w == b"\r\n")?;
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..end]).ok()?.split(';').next()?.trim(), 16).ok()?;
        raw = &raw[end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(raw.get(..size)?);
        raw = raw.get(size + 2..)?;
    }
}

/// `GET {path}` of `address`.
fn get(address: &str, path: &str) -> Answer {
    http(address, "GET", path, &[], b"").unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// Sends a signed request to the address its URL names; its headers as they are.
fn deliver(request: &SignedRequest) -> std::io::Result<Answer> {
    let rest = request.url.strip_prefix("http://").expect("an http URL");
    let (address, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let headers: Vec<(String, String)> = request
        .headers
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), value.to_str().unwrap().to_owned()))
        .collect();
    http(address, &request.method, if path.is_empty() { "/" } else { path }, &headers, &request.body)
}

fn post(request: &SignedRequest) -> Answer {
    deliver(request).unwrap_or_else(|e| panic!("POST {}: {e}", request.url))
}

// ---------------------------------------------------------------------------------------------
// Signed Twilio and Telnyx webhooks, built with the library's builders.

/// A Twilio status webhook of message `sid` reaching `status`, signed with `token` for `url`.
fn twilio_status(token: &str, url: &str, sid: &str, status: &str) -> SignedRequest {
    signed_twilio_request(
        token,
        url,
        &[
            ("MessageSid", sid),
            ("SmsSid", sid),
            ("MessageStatus", status),
            ("SmsStatus", status),
            ("To", "+14155550123"),
            ("From", FROM),
            ("AccountSid", credentials::TWILIO_ACCOUNT_SID),
            ("ApiVersion", "2010-04-01"),
        ],
    )
}

/// A Twilio inbound message `text` from `from`, as message `sid`, signed with `token` for `url`.
fn twilio_inbound(token: &str, url: &str, sid: &str, from: &str, text: &str) -> SignedRequest {
    signed_twilio_request(
        token,
        url,
        &[
            ("MessageSid", sid),
            ("SmsSid", sid),
            ("SmsStatus", "received"),
            ("Body", text),
            ("NumMedia", "0"),
            ("From", from),
            ("To", FROM),
            ("AccountSid", credentials::TWILIO_ACCOUNT_SID),
            ("ApiVersion", "2010-04-01"),
        ],
    )
}

/// A Telnyx `message.received` event `id` of `text` from `from`, signed by `key` for `url`.
fn telnyx_inbound(key: &TelnyxKeyPair, url: &str, id: &str, from: &str, text: &str) -> SignedRequest {
    let body = json!({
        "data": {
            "event_type": "message.received",
            "id": id,
            "occurred_at": "2025-01-01T00:00:00.000+00:00",
            "payload": {
                "record_type": "message",
                "direction": "inbound",
                "id": format!("{id}-message"),
                "type": "SMS",
                "from": {"phone_number": from, "carrier": "", "line_type": ""},
                "to": [{"phone_number": FROM, "status": "webhook_delivered", "carrier": "", "line_type": ""}],
                "text": text,
                "media": [],
                "encoding": "GSM-7",
                "parts": 1,
            },
            "record_type": "event",
        },
        "meta": {"attempt": 1, "delivered_to": url},
    })
    .to_string();
    signed_telnyx_request(key, url, &body, i64::try_from(now_unix()).unwrap())
}

/// A Telnyx event id of its own (UUID-shaped).
fn telnyx_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{:08x}-{:04x}-4000-8000-{:012x}", std::process::id(), n & 0xffff, nanos() & 0xffff_ffff_ffff)
}

// ---------------------------------------------------------------------------------------------
// The `serve` process.

/// Lines a child process wrote on one of its streams, as they come.
#[derive(Default)]
struct Lines {
    state: Mutex<(Vec<String>, bool)>,
    changed: Condvar,
}

impl Lines {
    /// Reads `stream` line by line on a thread of its own until it closes.
    fn pump(stream: impl Read + Send + 'static) -> Arc<Self> {
        let lines = Arc::new(Self::default());
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                sink.state.lock().unwrap().0.push(line);
                sink.changed.notify_all();
            }
            sink.state.lock().unwrap().1 = true;
            sink.changed.notify_all();
        });
        lines
    }

    fn snapshot(&self) -> Vec<String> {
        self.state.lock().unwrap().0.clone()
    }

    /// Waits (at most `timeout`) until `done` holds or the stream closed; what it holds then.
    fn wait_until(&self, timeout: Duration, done: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock().unwrap();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if done(&state.0) || state.1 || left.is_zero() {
                return state.0.clone();
            }
            state = self.changed.wait_timeout(state, left).unwrap().0;
        }
    }

    /// Waits (at most `timeout`) for the stream to close.
    fn wait_closed(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock().unwrap();
        while !state.1 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = self.changed.wait_timeout(state, left).unwrap().0;
        }
        true
    }
}

/// The command line of `sms-sdk serve --listen 127.0.0.1:0 [--store STORE] FLAGS`, with `vars`
/// as its whole environment.
fn serve_command(store: Option<&str>, vars: &[(&str, &str)], flags: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sms-sdk"));
    command.args(["serve", "--listen", "127.0.0.1:0"]);
    if let Some(store) = store {
        command.args(["--store", store]);
    }
    command.args(flags).env_clear().envs(vars.iter().copied()).stdin(Stdio::null());
    command
}

/// What `serve` prints on stderr before its address.
const PREFIX: &str = "sms-sdk serve: listening on http://";

/// A running `sms-sdk serve`, killed when dropped.
struct Serve {
    child: Child,
    address: String,
    stdout: Arc<Lines>,
    stderr: Arc<Lines>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    /// Starts `serve` on `store` with `vars` and `flags` and waits for the address it prints.
    fn start(store: &str, vars: &[(&str, &str)], flags: &[&str]) -> Self {
        let mut child = serve_command(Some(store), vars, flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the built sms-sdk starts");
        let stdout = Lines::pump(child.stdout.take().unwrap());
        let stderr = Lines::pump(child.stderr.take().unwrap());
        let mut serve = Self { child, address: String::new(), stdout, stderr };
        let printed = serve.stderr.wait_until(WAIT, |lines| lines.iter().any(|l| l.starts_with(PREFIX)));
        let Some(line) = printed.iter().find(|l| l.starts_with(PREFIX)) else {
            panic!("serve did not say where it listens:\n{}", printed.join("\n"))
        };
        line[PREFIX.len()..].trim().clone_into(&mut serve.address);
        // The banner ends with where events go.
        let banner = serve.stderr.wait_until(WAIT, |lines| lines.iter().any(|l| l.starts_with("events to: ")));
        assert!(banner.iter().any(|l| l.starts_with("events to: ")), "serve's banner:\n{}", banner.join("\n"));
        serve
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    fn stderr(&self) -> String {
        self.stderr.snapshot().join("\n")
    }

    /// The events it wrote on stdout, each line parsed as JSON.
    fn events(&self) -> Vec<Value> {
        self.stdout.snapshot().iter().map(|line| parse_event(line)).collect()
    }

    /// Waits for an event on stdout that `matches`, and returns it.
    fn wait_for_event(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let lines = self.stdout.wait_until(WAIT, |lines| lines.iter().any(|l| matches(&parse_event(l))));
        let found = lines.iter().map(|l| parse_event(l)).find(|e| matches(e));
        found
            .unwrap_or_else(|| panic!("no {what} on serve's stdout:\n{}\nstderr:\n{}", lines.join("\n"), self.stderr()))
    }

    /// Sends SIGTERM (without libc: the `kill` command).
    fn terminate(&self) {
        let status = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().expect("kill runs");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits (at most `timeout`) for the process to exit.
    fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A fresh signed webhook, answered 200, whose line is then waited for: every line serve
    /// wrote before it is on stdout by then (one writer, in order). Its index among the events.
    fn marker(&self) -> usize {
        let sid = sid();
        let answer = post(&twilio_status(credentials::TWILIO_AUTH_TOKEN, &self.url("/webhooks/twilio"), &sid, "sent"));
        assert_eq!(answer.status, 200, "the marker: {answer:?}\n{}", self.stderr());
        let key = format!("twilio:{sid}:sent");
        self.wait_for_event("the marker", |e| e["dedupe_key"] == key.as_str());
        self.events().iter().position(|e| e["dedupe_key"] == key.as_str()).unwrap()
    }
}

fn parse_event(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("serve wrote a line that is not JSON ({e}): {line}"))
}

/// Runs `serve` expecting it to stop on its own (a configuration error): its exit code and stderr.
fn serve_refuses(store: Option<&str>, vars: &[(&str, &str)], flags: &[&str]) -> (Option<i32>, String) {
    let mut child = serve_command(store, vars, flags)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the built sms-sdk starts");
    let stderr = Lines::pump(child.stderr.take().unwrap());
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve kept running:\n{}", stderr.snapshot().join("\n"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    stderr.wait_closed(WAIT);
    (status.code(), stderr.snapshot().join("\n"))
}

// ---------------------------------------------------------------------------------------------
// HTTP servers of the tests (a relay, a forward target), each on a runtime of its own.

/// An axum router served on loopback on a runtime of its own; its address.
fn listen(router: Router) -> (tokio::runtime::Runtime, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let address = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move { axum::serve(listener, router).await });
        address
    });
    (runtime, address)
}

/// A request as it reached a relay: method, path and query, headers, body.
#[derive(Debug, Clone)]
struct Recorded {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Hands every request on to `serve` as it came (its Host included, so the signed URL is the
/// relay's), answers with serve's status and body, and keeps each, so a test can send exactly
/// the same request again.
struct Relay {
    _runtime: tokio::runtime::Runtime,
    address: String,
    recorded: Arc<Mutex<Vec<Recorded>>>,
}

#[derive(Clone)]
struct RelayState {
    target: String,
    recorded: Arc<Mutex<Vec<Recorded>>>,
}

async fn relay(
    State(state): State<RelayState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let skip = ["content-length", "connection", "transfer-encoding"];
    let recorded = Recorded {
        method: method.to_string(),
        path: uri.path_and_query().map_or("/", |p| p.as_str()).to_owned(),
        headers: headers
            .iter()
            .filter(|(name, _)| !skip.contains(&name.as_str()))
            .map(|(name, value)| (name.as_str().to_owned(), value.to_str().unwrap_or_default().to_owned()))
            .collect(),
        body: body.to_vec(),
    };
    state.recorded.lock().unwrap().push(recorded.clone());
    let target = state.target.clone();
    let answer = tokio::task::spawn_blocking(move || {
        http(&target, &recorded.method, &recorded.path, &recorded.headers, &recorded.body)
    })
    .await
    .unwrap();
    match answer {
        Ok(answer) => (StatusCode::from_u16(answer.status).unwrap(), answer.body),
        Err(error) => (StatusCode::BAD_GATEWAY, error.to_string()),
    }
}

impl Relay {
    fn start(target: &str) -> Self {
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let state = RelayState { target: target.to_owned(), recorded: Arc::clone(&recorded) };
        let (runtime, address) = listen(Router::new().fallback(relay).with_state(state));
        Self { _runtime: runtime, address, recorded }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    fn recorded(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().clone()
    }
}

/// Sends `recorded` again, byte for byte, to `address`.
fn replay(address: &str, recorded: &Recorded) -> Answer {
    http(address, &recorded.method, &recorded.path, &recorded.headers, &recorded.body).unwrap()
}

/// The requests a [`Target`] received, with the status it answered each.
type Hooks = Arc<Mutex<Vec<(HeaderMap, Vec<u8>, u16)>>>;

/// A forward target at `/hook`: keeps every request with the status it answered, and answers
/// what it is told to (200 at first).
struct Target {
    _runtime: tokio::runtime::Runtime,
    address: String,
    answer: Arc<AtomicU16>,
    received: Hooks,
}

#[derive(Clone)]
struct TargetState {
    answer: Arc<AtomicU16>,
    received: Hooks,
}

async fn hook(State(state): State<TargetState>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let status = state.answer.load(Ordering::SeqCst);
    state.received.lock().unwrap().push((headers, body.to_vec(), status));
    StatusCode::from_u16(status).unwrap()
}

impl Target {
    fn start() -> Self {
        let answer = Arc::new(AtomicU16::new(200));
        let received = Arc::new(Mutex::new(Vec::new()));
        let state = TargetState { answer: Arc::clone(&answer), received: Arc::clone(&received) };
        let (runtime, address) = listen(Router::new().route("/hook", axum::routing::post(hook)).with_state(state));
        Self { _runtime: runtime, address, answer, received }
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.address)
    }

    fn answer(&self, status: u16) {
        self.answer.store(status, Ordering::SeqCst);
    }

    fn received(&self) -> Vec<(HeaderMap, Vec<u8>, u16)> {
        self.received.lock().unwrap().clone()
    }

    /// The requests for event `id`.
    fn received_for(&self, id: &str) -> Vec<(HeaderMap, Vec<u8>, u16)> {
        self.received().into_iter().filter(|(headers, _, _)| headers["webhook-id"] == id).collect()
    }
}

/// Checks one forwarded request per Standard Webhooks: the id is the event's dedupe key, the
/// timestamp is now, and `v1,` is the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` with the
/// decoded secret. Returns the event.
fn verify_forwarded(headers: &HeaderMap, body: &[u8], id: &str) -> Value {
    let text = |name: &str| headers.get(name).unwrap_or_else(|| panic!("no {name}")).to_str().unwrap().to_owned();
    assert_eq!(text("webhook-id"), id);
    assert_eq!(text("content-type"), "application/json");
    let timestamp = text("webhook-timestamp");
    let seconds: u64 = timestamp.parse().expect("a Unix timestamp");
    assert!(seconds.abs_diff(now_unix()) <= 60, "webhook-timestamp {seconds} is not now");
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(FORWARD_KEY).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    let expected = format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes()));
    let signatures = text("webhook-signature");
    assert!(signatures.split(' ').any(|s| s == expected), "webhook-signature {signatures} is not {expected}");
    let event: Value = serde_json::from_slice(body).expect("the body is the event's JSON");
    assert_eq!(event["dedupe_key"], id, "the body carries the dedupe key");
    event
}

// ---------------------------------------------------------------------------------------------
// The emulator, on a runtime of its own (the command runs its own).

struct Background {
    runtime: tokio::runtime::Runtime,
    emulator: Option<RunningEmulator>,
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(emulator) = self.emulator.take() {
            self.runtime.block_on(emulator.shutdown());
        }
    }
}

impl Background {
    fn start(configure: impl FnOnce(EmulatorBuilder) -> EmulatorBuilder) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let builder = configure(Emulator::builder().status_delay(Duration::from_millis(20)));
        let emulator = runtime.block_on(builder.start()).unwrap();
        Self { runtime, emulator: Some(emulator) }
    }

    fn emulator(&self) -> &RunningEmulator {
        self.emulator.as_ref().unwrap()
    }

    /// The Twilio environment pointed at the emulator, plus `extra`.
    fn env(&self, extra: &[(&str, &str)]) -> Env {
        let base = self.emulator().base_url();
        let vars = [
            ("TWILIO_ACCOUNT_SID", credentials::TWILIO_ACCOUNT_SID),
            ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN),
            ("TWILIO_FROM", FROM),
            ("SMS_SDK_TWILIO_BASE_URL", base.as_str()),
        ];
        vars.iter().chain(extra).map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    /// Requests received, in all.
    fn count(&self) -> usize {
        self.emulator().messages().len()
    }

    /// Requests received for `to`.
    fn count_to(&self, to: &str) -> usize {
        self.emulator().messages().iter().filter(|m| m.to.as_deref() == Some(to)).count()
    }

    /// `POST /_emulator/inbound`: Twilio delivers `text` from `from` as its signed inbound
    /// webhook; the emulator's answer (it says what the webhook was answered).
    fn inbound(&self, from: &str, text: &str) -> Value {
        let body = json!({"provider": "twilio", "from": from, "to": FROM, "text": text}).to_string();
        let address = self.emulator().local_addr().to_string();
        let headers = [("content-type".to_owned(), "application/json".to_owned())];
        let answer = http(&address, "POST", "/_emulator/inbound", &headers, body.as_bytes()).unwrap();
        assert_eq!(answer.status, 202, "{answer:?}");
        serde_json::from_str(&answer.body).unwrap()
    }
}

/// The state `idempotency show` gives `key` (`unknown`, `accepted`, …), and what it printed.
fn state_of(key: &str, store: &str, env: &Env) -> (String, String) {
    let shown = command(&["idempotency", "show", key, "--store", store], env);
    assert_eq!(shown.code, 0, "{}", show(&shown));
    let state = shown.out.lines().find_map(|line| line.strip_prefix("state")).unwrap_or_default();
    (state.split_whitespace().next().unwrap_or_default().trim_end_matches(':').to_owned(), shown.out)
}

fn show(output: &Output) -> String {
    format!("exit {}\nstdout:\n{}\nstderr:\n{}", output.code, output.out, output.err)
}

// ---------------------------------------------------------------------------------------------
// 1. STOP and START through the emulator reach the suppression list `send` and `batch` read.

fn stop_then_start(store: &str) {
    let serve = Serve::start(store, &[("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN)], &[]);
    assert_eq!(get(&serve.address, "/readyz").status, 200, "the store is up: {}", serve.stderr());
    let relay = Relay::start(&serve.address);
    let background = Background::start(|b| b.inbound_url_for(Provider::Twilio, relay.url("/webhooks/twilio")));
    let env = background.env(&[]);
    let number = recipient();

    // The emulator's signed STOP reaches serve, which answers 2xx once its line is out.
    let answer = background.inbound(&number, "STOP");
    assert_eq!(
        (answer["delivered"].as_bool(), answer["webhook_status"].as_u64()),
        (Some(true), Some(200)),
        "{answer}\n{}",
        serve.stderr()
    );
    let stop = serve.wait_for_event("the STOP", |e| e["type"] == "recipient.opted_out" && e["from"] == number.as_str());
    assert_eq!((stop["provider"].as_str(), stop["keyword"].as_str()), (Some("twilio"), Some("STOP")), "{stop}");
    assert_eq!(stop["dedupe_key"], format!("twilio:{}:received", answer["id"].as_str().unwrap()));
    let recorded = relay.recorded();
    assert_eq!(recorded.len(), 1, "one delivery of the STOP");
    let signed_stop = recorded[0].clone();

    // The next send to the number is refused before any request.
    let before = background.count();
    let send = ["send", "--to", number.as_str(), "--body", "Sale ends tonight!", "--store", store];
    let refused = command(&send, &env);
    assert_eq!(refused.code, 1, "{}", show(&refused));
    assert!(refused.err.contains("opted out"), "{}", show(&refused));
    assert_eq!(background.count(), before, "no provider request for an opted-out number");

    // A batch reports its row suppressed and sends the others.
    let other = recipient();
    let dir = scratch("batch");
    let csv = dir.join("rows.csv");
    std::fs::write(&csv, format!("to,body\n{number},one\n{other},two\n")).unwrap();
    let prefix = format!("{}-", unique("row"));
    let csv_arg = csv.display().to_string();
    let batch =
        ["batch", "--csv", &csv_arg, "--body-column", "body", "--key-prefix", &prefix, "--store", store, "--json"];
    let batched = command(&batch, &env);
    assert_eq!(batched.code, 1, "a row was not sent: {}", show(&batched));
    let summary: Value = serde_json::from_str(batched.out.trim()).unwrap_or_else(|_| panic!("{}", show(&batched)));
    assert_eq!((summary["suppressed"].as_u64(), summary["accepted"].as_u64()), (Some(1), Some(1)), "{summary}");
    assert_eq!((background.count_to(&number), background.count_to(&other)), (0, 1));

    // START lifts it. Its event is a plain `message.received` (opted_in events come only from
    // Twilio's own signal), and serve's suppression feed takes the opt-in keyword.
    let answer = background.inbound(&number, "START");
    assert_eq!(answer["webhook_status"], 200, "{answer}\n{}", serve.stderr());
    let start = serve.wait_for_event("the START", |e| e["provider_id"] == answer["id"]);
    assert_eq!((start["type"].as_str(), start["from"].as_str()), (Some("message.received"), Some(number.as_str())));
    let sent = command(&send, &env);
    assert_eq!(sent.code, 0, "START lifted the opt-out: {}", show(&sent));
    assert_eq!(background.count_to(&number), 1);

    // The very same signed STOP again (a provider's redelivery, or a replay): a duplicate,
    // answered 2xx, handed on no more, and the number stays sendable.
    let lines = serve.events().len();
    let again = replay(&serve.address, &signed_stop);
    assert_eq!((again.status, again.body.trim()), (200, "duplicate"), "{again:?}\n{}", serve.stderr());
    let marker = serve.marker();
    assert_eq!(marker, lines, "the replayed STOP was handed on again: {:#?}", &serve.events()[lines..]);
    let sent = command(&send, &env);
    assert_eq!(sent.code, 0, "the replayed STOP suppressed the number again: {}", show(&sent));
    assert_eq!(background.count_to(&number), 2);
}

#[test]
fn serve_stop_then_start_through_the_emulator_sqlite() {
    stop_then_start(&sqlite_store("stop-start"));
}

#[test]
fn serve_stop_then_start_through_the_emulator_postgres() {
    stop_then_start(&postgres_store());
}

// ---------------------------------------------------------------------------------------------
// 2. A status webhook through serve settles an unknown send.

#[test]
fn serve_settles_a_created_then_dropped_send() {
    let store = sqlite_store("settle");
    let vars =
        [("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN), ("SMS_SDK_CORRELATION_SECRET", CORRELATION_SECRET)];
    let serve = Serve::start(&store, &vars, &[]);
    assert!(serve.stderr().contains("settlement: on"), "{}", serve.stderr());
    let background = Background::start(|b| b);
    let env = background.env(&[("SMS_SDK_CORRELATION_SECRET", CORRELATION_SECRET)]);
    let key = unique("settle-key");
    let callback = serve.url("/webhooks/twilio");
    let send = [
        "send",
        "--to",
        magic::CREATED_THEN_DROPPED,
        "--body",
        "Your code is 123456",
        "--idempotency-key",
        &key,
        "--webhook-url",
        &callback,
        "--store",
        &store,
    ];

    // Created, then the connection dropped: unknown.
    let unknown = command(&send, &env);
    assert_eq!(unknown.code, 3, "{}", show(&unknown));
    let created = background.emulator().messages();
    assert_eq!(created.len(), 1, "one request");
    let sid = created[0].id.clone().expect("the emulator created the message");
    let carried = created[0].callback_url.clone().unwrap_or_default();
    assert!(
        carried.starts_with(&callback) && carried.contains(sms_sdk::correlation::REFERENCE_PARAM),
        "the send did not attach a correlation reference to its status callback (SMS_SDK_CORRELATION_SECRET and \
         --webhook-url): {carried:?}"
    );
    assert!(!carried.contains(&key), "the key itself leaked into the callback URL");

    // The emulator's signed status webhooks reach serve, which settles the key before it hands
    // the event on.
    serve.wait_for_event("the status webhook", |e| e["provider_id"] == sid.as_str());
    let (state, shown) = state_of(&key, &store, &env);
    assert_eq!(state, "accepted", "settled: {shown}");
    assert!(shown.contains(&sid), "with the provider's id: {shown}");

    // The same send replays, without a request.
    let replayed = command(&send, &env);
    assert_eq!(replayed.code, 0, "{}", show(&replayed));
    assert!(replayed.out.contains(&sid), "{}", show(&replayed));
    assert_eq!(background.count(), 1, "the replay made a request");
}

/// Sinch through `serve`: its HMAC-signed delivery report to the plan's callback URL settles an
/// unknown send (the reference rides in `client_reference`, with no per-message callback URL),
/// and its signed `mo_text` STOP suppresses the number.
/// One provider through `serve`, its webhooks to `/webhooks/<name>`: an unknown send settles
/// from its status webhook (by the correlation reference it carried) and a STOP blocks the next
/// send to the number. What the test gives: the variables `serve` reads (the correlation secret
/// is added), the line its banner shows for the route, and the variables `send` reads beside the
/// base URL. What it returns, for more checks: the emulator, the send's variables and the store.
fn settles_and_takes_a_stop(
    provider: Provider,
    serve_vars: &[(&str, &str)],
    banner: &str,
    send_vars: &[(&str, &str)],
) -> (Background, Env, String) {
    let name = provider.name();
    let store = sqlite_store(name);
    let vars: Vec<(&str, &str)> =
        serve_vars.iter().copied().chain([("SMS_SDK_CORRELATION_SECRET", CORRELATION_SECRET)]).collect();
    let serve = Serve::start(&store, &vars, &[]);
    assert!(serve.stderr().contains(&format!("POST /webhooks/{name} ({banner})")), "{}", serve.stderr());
    let hook = serve.url(&format!("/webhooks/{name}"));
    // The account's (or the topic's) callback URL: the send names none of its own.
    let background =
        Background::start(|b| b.inbound_url_for(provider, hook.clone()).webhook_url_for(provider, hook.clone()));
    let base = (format!("SMS_SDK_{}_BASE_URL", name.to_ascii_uppercase()), background.emulator().base_url());
    let env: Env = send_vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .chain([base, ("SMS_SDK_CORRELATION_SECRET".to_owned(), CORRELATION_SECRET.to_owned())])
        .collect();
    let key = unique(&format!("{name}-key"));
    let send = [
        "send",
        "--provider",
        name,
        "--to",
        magic::CREATED_THEN_DROPPED,
        "--body",
        "Your code is 123456",
        "--idempotency-key",
        &key,
        "--store",
        &store,
    ];
    let unknown = command(&send, &env);
    assert_eq!(unknown.code, 3, "{name}: {}", show(&unknown));
    let created = background.emulator().messages();
    let id = created[0].id.clone().expect("the emulator created the message");
    serve.wait_for_event("the status webhook", |e| e["provider_id"] == id.as_str());
    let (state, shown) = state_of(&key, &store, &env);
    assert_eq!(state, "accepted", "{name} settled: {shown}");

    // A STOP from a customer, signed as the provider signs its inbound webhooks.
    let number = recipient();
    let body = json!({"provider": name, "from": number, "to": FROM, "text": "STOP"}).to_string();
    let headers = [("content-type".to_owned(), "application/json".to_owned())];
    let address = background.emulator().local_addr().to_string();
    let answer = http(&address, "POST", "/_emulator/inbound", &headers, body.as_bytes()).unwrap();
    let answer: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(answer["webhook_status"], 200, "{answer}\n{}", serve.stderr());
    let stop = serve.wait_for_event("the STOP", |e| e["type"] == "recipient.opted_out" && e["from"] == number.as_str());
    assert_eq!(stop["provider"], name, "{stop}");
    // The log line may follow the event's stdout line.
    let logged =
        serve.stderr.wait_until(WAIT, |lines| lines.iter().any(|l| l.contains("added to the suppression list")));
    assert!(logged.iter().any(|l| l.contains("the number was added to the suppression list")), "{}", serve.stderr());
    let before = background.count();
    let refused = command(&["send", "--provider", name, "--to", &number, "--body", "Sale!", "--store", &store], &env);
    assert_eq!(refused.code, 1, "{}", show(&refused));
    assert!(refused.err.contains("opted out"), "{}", show(&refused));
    assert_eq!(background.count(), before, "no provider request for an opted-out number");
    (background, env, store)
}

#[test]
fn serve_sinch_settles_an_unknown_send_and_takes_a_stop() {
    let sinch = [
        ("SINCH_SERVICE_PLAN_ID", credentials::SINCH_SERVICE_PLAN_ID),
        ("SINCH_API_TOKEN", credentials::SINCH_API_TOKEN),
        ("SINCH_FROM", FROM),
    ];
    let serve = [("SINCH_WEBHOOK_SECRET", credentials::SINCH_WEBHOOK_SECRET)];
    let (background, ..) = settles_and_takes_a_stop(Provider::Sinch, &serve, "SINCH_WEBHOOK_SECRET set", &sinch);
    // The plan's callback URL, as Sinch users configure it: the batch names none of its own.
    let created = background.emulator().messages();
    assert_eq!(created[0].callback_url, None);
    assert!(created[0].client_ref.is_some(), "the send carried no client_reference");
}

#[test]
fn serve_infobip_settles_an_unknown_send_and_takes_a_stop() {
    let basic = format!("{}:{}", credentials::INFOBIP_WEBHOOK_USER, credentials::INFOBIP_WEBHOOK_PASSWORD);
    let infobip = [("INFOBIP_API_KEY", credentials::INFOBIP_API_KEY), ("INFOBIP_FROM", FROM)];
    let serve = [("INFOBIP_WEBHOOK_BASIC", basic.as_str())];
    settles_and_takes_a_stop(Provider::Infobip, &serve, "INFOBIP_WEBHOOK_BASIC set", &infobip);
}

#[test]
fn serve_bandwidth_settles_an_unknown_send_and_takes_a_stop() {
    let basic = format!("{}:{}", credentials::BANDWIDTH_CALLBACK_USER, credentials::BANDWIDTH_CALLBACK_PASSWORD);
    let bandwidth = [
        ("BANDWIDTH_ACCOUNT_ID", credentials::BANDWIDTH_ACCOUNT_ID),
        ("BANDWIDTH_APPLICATION_ID", credentials::BANDWIDTH_APPLICATION_ID),
        ("BANDWIDTH_CLIENT_ID", credentials::BANDWIDTH_CLIENT_ID),
        ("BANDWIDTH_CLIENT_SECRET", credentials::BANDWIDTH_CLIENT_SECRET),
        ("BANDWIDTH_FROM", FROM),
    ];
    let serve = [("BANDWIDTH_WEBHOOK_BASIC", basic.as_str())];
    settles_and_takes_a_stop(Provider::Bandwidth, &serve, "BANDWIDTH_WEBHOOK_BASIC set", &bandwidth);
}

/// A batch of Infobip results in one request: each event is handed on once, in order; a
/// redelivery of the batch is a duplicate, and a batch that repeats one event and brings a new
/// one hands on only the new one.
#[test]
fn serve_hands_on_each_event_of_a_batch_once() {
    let store = sqlite_store("infobip-batch");
    let serve = Serve::start(&store, &[("INFOBIP_WEBHOOK_BASIC", "hooks:infobip-batch-password")], &[]);
    let url = serve.url("/webhooks/infobip");
    let report = |id: &str| {
        format!(
            r#"{{"messageId":"{id}","to":"41793026727","status":{{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET"}}}}"#
        )
    };
    let batch = |ids: &[&str]| {
        let results: Vec<String> = ids.iter().map(|id| report(id)).collect();
        let body = format!(r#"{{"results":[{}]}}"#, results.join(","));
        sms_sdk::testing::webhooks::signed_infobip_request(&url, &body, Some(("hooks", "infobip-batch-password")), None)
    };
    let (a, b, c) = (unique("sms-sdk-a"), unique("sms-sdk-b"), unique("sms-sdk-c"));
    let ids_of = |serve: &Serve| -> Vec<String> {
        serve.events().iter().filter_map(|e| e["provider_id"].as_str().map(str::to_owned)).collect()
    };
    let first = post(&batch(&[&a, &b]));
    assert_eq!((first.status, first.body.trim()), (200, "ok"), "{}", serve.stderr());
    serve.wait_for_event("the second result", |e| e["provider_id"] == b.as_str());
    assert_eq!(ids_of(&serve), [a.clone(), b.clone()]);
    let again = post(&batch(&[&a, &b]));
    assert_eq!((again.status, again.body.trim()), (200, "duplicate"), "{}", serve.stderr());
    let mixed = post(&batch(&[&b, &c]));
    assert_eq!((mixed.status, mixed.body.trim()), (200, "ok"), "{}", serve.stderr());
    serve.wait_for_event("the new result", |e| e["provider_id"] == c.as_str());
    assert_eq!(ids_of(&serve), [a, b, c]);
    let forged = sms_sdk::testing::webhooks::signed_infobip_request(&url, "{}", Some(("hooks", "guess")), None);
    let refused = post(&forged);
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("www-authenticate"), None, "other credentials are not asked again");
    // Without credentials, a Basic challenge: a sender that waits for one sends them then.
    let bare = sms_sdk::testing::webhooks::signed_infobip_request(&url, "{}", None, None);
    let challenged = post(&bare);
    assert_eq!(challenged.status, 401, "{challenged:?}");
    assert_eq!(challenged.header("www-authenticate"), Some(sms_sdk::provider::infobip::WWW_AUTHENTICATE));
}

// ---------------------------------------------------------------------------------------------
// 3. Forged and tampered webhooks are refused and consume nothing.

fn refuses_forged(store: &str) {
    let vars =
        [("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN), ("TELNYX_PUBLIC_KEY", credentials::TELNYX_PUBLIC_KEY)];
    let serve = Serve::start(store, &vars, &[]);
    let env = Env::default();
    let suppressed = |number: &str| {
        let check = command(&["suppression", "check", number, "--from", FROM, "--store", store], &env);
        assert!(check.code <= 1, "{}", show(&check));
        check.code == 1
    };

    // Twilio: a STOP signed with another token, and the genuine STOP with its From changed.
    let twilio_url = serve.url("/webhooks/twilio");
    let (twilio_number, twilio_sid) = (recipient(), sid());
    let genuine_twilio =
        twilio_inbound(credentials::TWILIO_AUTH_TOKEN, &twilio_url, &twilio_sid, &twilio_number, "STOP");
    let forged = twilio_inbound("another-auth-token", &twilio_url, &twilio_sid, &twilio_number, "STOP");
    let mut tampered = genuine_twilio.clone();
    let (encoded, other) = (twilio_number.replace('+', "%2B"), recipient().replace('+', "%2B"));
    tampered.body = String::from_utf8(tampered.body).unwrap().replace(&encoded, &other).into_bytes();
    assert_ne!(tampered.body, genuine_twilio.body);

    // Telnyx: a STOP signed by another key, and the genuine STOP with its text changed.
    let telnyx_url = serve.url("/webhooks/telnyx");
    let (telnyx_number, event_id) = (recipient(), telnyx_id());
    let emulator_key = TelnyxKeyPair::from_seed(credentials::TELNYX_SIGNING_SEED);
    assert_eq!(emulator_key.public_key, credentials::TELNYX_PUBLIC_KEY);
    let genuine_telnyx = telnyx_inbound(&emulator_key, &telnyx_url, &event_id, &telnyx_number, "STOP");
    let forged_telnyx = telnyx_inbound(&TelnyxKeyPair::generate(), &telnyx_url, &event_id, &telnyx_number, "STOP");
    let mut tampered_telnyx = genuine_telnyx.clone();
    tampered_telnyx.body =
        String::from_utf8(tampered_telnyx.body).unwrap().replace("\"STOP\"", "\"stop\"").into_bytes();
    assert_ne!(tampered_telnyx.body, genuine_telnyx.body);

    for (what, request) in [
        ("twilio, another token", &forged),
        ("twilio, tampered", &tampered),
        ("telnyx, another key", &forged_telnyx),
        ("telnyx, tampered", &tampered_telnyx),
    ] {
        let answer = post(request);
        assert_eq!(answer.status, 401, "{what}: {answer:?}\n{}", serve.stderr());
    }
    assert!(!suppressed(&twilio_number) && !suppressed(&telnyx_number), "a refused STOP reached the suppression list");
    assert!(serve.stdout.snapshot().is_empty(), "a refused webhook was handed on: {:?}", serve.stdout.snapshot());

    // The genuine ones afterwards are handled, not duplicates: the forgeries consumed no key.
    for (what, request) in [("twilio", &genuine_twilio), ("telnyx", &genuine_telnyx)] {
        let answer = post(request);
        assert_eq!((answer.status, answer.body.trim()), (200, "ok"), "{what}: {answer:?}\n{}", serve.stderr());
    }
    let lines = serve.stdout.wait_until(WAIT, |lines| lines.len() >= 2);
    let events: Vec<Value> = lines.iter().map(|l| parse_event(l)).collect();
    assert_eq!(events.len(), 2, "exactly the two genuine events: {events:#?}");
    assert_eq!(events[0]["dedupe_key"], format!("twilio:{twilio_sid}:received"), "{events:#?}");
    assert_eq!(
        (events[0]["type"].as_str(), events[0]["from"].as_str()),
        (Some("recipient.opted_out"), Some(twilio_number.as_str()))
    );
    assert_eq!(
        (events[1]["provider"].as_str(), events[1]["type"].as_str()),
        (Some("telnyx"), Some("recipient.opted_out"))
    );
    assert!(suppressed(&twilio_number) && suppressed(&telnyx_number), "the genuine STOPs are applied");
}

#[test]
fn serve_refuses_forged_webhooks() {
    refuses_forged(&sqlite_store("forged"));
    refuses_forged(&postgres_store());
}

// ---------------------------------------------------------------------------------------------
// 4. Forwarding: signed per Standard Webhooks, exactly once, and retried through a failure.

#[test]
fn serve_forwards_exactly_once() {
    let target = Target::start();
    let secret = format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(FORWARD_KEY));
    let vars = [("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN), ("SMS_SDK_FORWARD_SECRET", secret.as_str())];
    let target_url = target.url();
    let serve = Serve::start(&sqlite_store("forward"), &vars, &["--forward", &target_url]);
    let url = serve.url("/webhooks/twilio");

    // A delivered webhook is forwarded, signed, once; its redelivery is answered 2xx and not
    // forwarded again.
    let first = sid();
    let delivered = twilio_status(credentials::TWILIO_AUTH_TOKEN, &url, &first, "delivered");
    let answer = post(&delivered);
    assert_eq!((answer.status, answer.body.trim()), (200, "ok"), "{answer:?}\n{}", serve.stderr());
    let id = format!("twilio:{first}:delivered");
    let received = target.received();
    assert_eq!(received.len(), 1, "forwarded once before the 2xx");
    let event = verify_forwarded(&received[0].0, &received[0].1, &id);
    assert_eq!(
        (event["type"].as_str(), event["provider_id"].as_str()),
        (Some("message.delivered"), Some(first.as_str()))
    );
    let again = post(&delivered);
    assert_eq!((again.status, again.body.trim()), (200, "duplicate"), "{again:?}");
    assert_eq!(target.received().len(), 1, "a redelivery was forwarded again");

    // The target fails: the provider gets 503, and the key stays free.
    target.answer(500);
    let second = sid();
    let failing = twilio_status(credentials::TWILIO_AUTH_TOKEN, &url, &second, "delivered");
    let started = Instant::now();
    let answer = post(&failing);
    assert_eq!(answer.status, 503, "{answer:?}\n{}", serve.stderr());
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "the attempts took {took:?}");
    eprintln!("forward: the failing target was given up on after {took:?}");
    let id = format!("twilio:{second}:delivered");
    let attempts = target.received_for(&id);
    assert!(!attempts.is_empty() && attempts.iter().all(|(_, _, status)| *status == 500), "{}", attempts.len());
    for (headers, body, _) in &attempts {
        verify_forwarded(headers, body, &id);
    }

    // It recovers: the provider's redelivery is forwarded, once, and the next one is a duplicate.
    target.answer(200);
    let answer = post(&failing);
    assert_eq!((answer.status, answer.body.trim()), (200, "ok"), "{answer:?}\n{}", serve.stderr());
    let accepted: Vec<_> = target.received_for(&id).into_iter().filter(|(_, _, status)| *status == 200).collect();
    assert_eq!(accepted.len(), 1, "forwarded exactly once after the target recovered");
    verify_forwarded(&accepted[0].0, &accepted[0].1, &id);
    let total = target.received().len();
    let again = post(&failing);
    assert_eq!((again.status, again.body.trim()), (200, "duplicate"), "{again:?}");
    assert_eq!(target.received().len(), total, "a redelivery was forwarded again");
    assert!(serve.stdout.snapshot().is_empty(), "with --forward alone, nothing goes to stdout");
}

// ---------------------------------------------------------------------------------------------
// 5. SIGTERM in the middle of a load: every acknowledged webhook was handed on.

#[test]
fn serve_sigterm_hands_on_every_acknowledged_webhook() {
    const WEBHOOKS: usize = 200;
    const CLIENTS: usize = 8;
    let mut serve =
        Serve::start(&sqlite_store("sigterm"), &[("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN)], &["--quiet"]);
    let url = serve.url("/webhooks/twilio");
    let requests: Vec<(String, SignedRequest)> = (0..WEBHOOKS)
        .map(|_| {
            let sid = sid();
            (format!("twilio:{sid}:delivered"), twilio_status(credentials::TWILIO_AUTH_TOKEN, &url, &sid, "delivered"))
        })
        .collect();
    let requests = Arc::new(requests);
    let done = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let (requests, done) = (Arc::clone(&requests), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut results = Vec::new();
                for (key, request) in requests.iter().skip(client).step_by(CLIENTS) {
                    let status = deliver(request).map(|answer| answer.status);
                    results.push((key.clone(), status.ok()));
                    done.fetch_add(1, Ordering::SeqCst);
                }
                results
            })
        })
        .collect();

    // Midway, SIGTERM.
    let deadline = Instant::now() + Duration::from_mins(1);
    while done.load(Ordering::SeqCst) < WEBHOOKS / 2 {
        assert!(Instant::now() < deadline, "the first half took over 60 s:\n{}", serve.stderr());
        std::thread::sleep(Duration::from_millis(2));
    }
    serve.terminate();
    let results: Vec<(String, Option<u16>)> = clients.into_iter().flat_map(|c| c.join().unwrap()).collect();
    let status = serve.wait_exit(Duration::from_secs(30));
    assert!(serve.stdout.wait_closed(WAIT), "stdout stays open");
    let status = status.unwrap_or_else(|| panic!("serve did not stop after SIGTERM:\n{}", serve.stderr()));
    assert_eq!(status.code(), Some(0), "serve's exit after SIGTERM ({status}):\n{}", serve.stderr());

    let acknowledged: Vec<&String> =
        results.iter().filter(|(_, s)| s.is_some_and(|s| (200..300).contains(&s))).map(|(k, _)| k).collect();
    assert!(acknowledged.len() >= WEBHOOKS / 2, "only {} acknowledged", acknowledged.len());
    let other: Vec<_> = results.iter().filter(|(_, s)| s.is_some_and(|s| !(200..300).contains(&s))).collect();
    let handed: Vec<String> = serve.events().iter().map(|e| e["dedupe_key"].as_str().unwrap().to_owned()).collect();
    let missing: Vec<_> = acknowledged.iter().filter(|k| !handed.contains(k)).collect();
    assert!(missing.is_empty(), "{} acknowledged webhooks were not on stdout: {missing:?}", missing.len());
    let mut unique_lines = handed.clone();
    unique_lines.sort();
    unique_lines.dedup();
    assert_eq!(unique_lines.len(), handed.len(), "an event was handed on twice");
    assert!(handed.iter().all(|k| results.iter().any(|(key, _)| key == k)), "a line for an event that was never sent");
    eprintln!(
        "sigterm: {} of {WEBHOOKS} acknowledged, {} answered otherwise ({:?}), {} not answered; {} lines",
        acknowledged.len(),
        other.len(),
        other.iter().map(|(_, s)| s.unwrap()).collect::<std::collections::BTreeSet<_>>(),
        results.iter().filter(|(_, s)| s.is_none()).count(),
        handed.len()
    );
    assert!(TcpStream::connect(&serve.address).is_err(), "serve still accepts connections after it stopped");
}

// ---------------------------------------------------------------------------------------------
// 6. A bare `idempotency reconcile --apply` settles an unknown send, beside serve on its store.

#[test]
fn serve_reconcile_apply_settles_without_to() {
    let store = sqlite_store("reconcile");
    let serve = Serve::start(&store, &[("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN)], &[]);
    let background = Background::start(|b| b.webhook_url_for(Provider::Twilio, serve.url("/webhooks/twilio")));
    let env = background.env(&[]);
    let key = unique("reconcile-key");
    let send = [
        "send",
        "--to",
        magic::CREATED_THEN_DROPPED,
        "--body",
        "Order 42 shipped",
        "--idempotency-key",
        &key,
        "--store",
        &store,
    ];
    let unknown = command(&send, &env);
    assert_eq!(unknown.code, 3, "{}", show(&unknown));
    let sid = background.emulator().messages()[0].id.clone().expect("created");

    // Its status webhooks reach serve, which hands them on; with no reference they settle nothing.
    serve.wait_for_event("the delivered webhook", |e| {
        e["provider_id"] == sid.as_str() && e["type"] == "message.delivered"
    });
    let (state, shown) = state_of(&key, &store, &env);
    assert_eq!(state, "unknown", "{shown}");

    // No key, no --to: the record's own recipient is looked up, and the one match settles it.
    let before = background.count();
    let reconciled = command(&["idempotency", "reconcile", "--apply", "--json", "--store", &store], &env);
    assert_eq!(reconciled.code, 0, "{}", show(&reconciled));
    let report: Value = serde_json::from_str(reconciled.out.trim()).unwrap_or_else(|_| panic!("{}", show(&reconciled)));
    let entry = report["keys"].as_array().unwrap().iter().find(|k| k["key"] == key.as_str()).cloned();
    assert_eq!(entry.map(|e| e["resolved"].clone()), Some(Value::Bool(true)), "{report:#}");
    assert!(!reconciled.out.contains(&magic::CREATED_THEN_DROPPED[2..]), "the number is masked: {}", reconciled.out);
    assert_eq!(background.count(), before, "reconcile sent something");
    let (state, shown) = state_of(&key, &store, &env);
    assert_eq!(state, "accepted", "{shown}");

    let replayed = command(&send, &env);
    assert_eq!(replayed.code, 0, "{}", show(&replayed));
    assert!(replayed.out.contains(&sid), "{}", show(&replayed));
    assert_eq!(background.count(), before, "the replay made a request");
    assert_eq!(get(&serve.address, "/readyz").status, 200, "serve still reads the store");
}

// ---------------------------------------------------------------------------------------------
// 7. Configuration, health, metrics and bounds.

#[test]
fn serve_config_without_a_webhook_secret_exits_7_naming_the_variables() {
    let store = sqlite_store("no-secret");
    let (code, err) = serve_refuses(Some(&store), &[], &[]);
    assert_eq!(code, Some(7), "{err}");
    for variable in ["TWILIO_AUTH_TOKEN", "TELNYX_PUBLIC_KEY", "PLIVO_AUTH_TOKEN", "VONAGE_SIGNATURE_SECRET"] {
        assert!(err.contains(variable), "{variable} is not named: {err}");
    }
    // An empty one is not set either.
    let (code, err) = serve_refuses(Some(&store), &[("TWILIO_AUTH_TOKEN", "")], &[]);
    assert_eq!(code, Some(7), "{err}");
}

#[test]
fn serve_config_forward_without_its_secret_exits_7() {
    let store = sqlite_store("no-forward-secret");
    let token = ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN);
    let (code, err) = serve_refuses(Some(&store), &[token], &["--forward", "http://127.0.0.1:9/hook"]);
    assert_eq!(code, Some(7), "{err}");
    assert!(err.contains("SMS_SDK_FORWARD_SECRET"), "{err}");
    // A secret that is not `whsec_` and base64 of 16 bytes or more is refused too, never shown.
    for bad in ["not-whsec-at-all", "whsec_c2hvcnQ="] {
        let (code, err) = serve_refuses(
            Some(&store),
            &[token, ("SMS_SDK_FORWARD_SECRET", bad)],
            &["--forward", "http://127.0.0.1:9/hook"],
        );
        assert_eq!(code, Some(7), "{bad}: {err}");
        assert!(err.contains("SMS_SDK_FORWARD_SECRET") && !err.contains(bad), "{err}");
    }
}

#[test]
fn serve_config_unreachable_store_exits_7() {
    let token = ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN);
    let (code, err) = serve_refuses(Some("postgres://nobody:hunter2@127.0.0.1:1/none"), &[token], &[]);
    assert_eq!(code, Some(7), "{err}");
    assert!(err.contains("error: store") && !err.contains("hunter2"), "{err}");
    assert!(!err.contains("listening on"), "{err}");
}

#[test]
fn serve_config_health_metrics_and_bounds() {
    let serve = Serve::start(&sqlite_store("health"), &[("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN)], &[]);
    let err = serve.stderr();
    assert!(err.starts_with(PREFIX), "the address comes first: {err}");
    assert_eq!(err.matches("store: sqlite:").count(), 1, "the store is named once: {err}");
    assert!(err.contains("POST /webhooks/twilio") && err.contains("no route for plivo"), "{err}");
    assert!(err.contains("settlement: only sends that carried a reference"), "{err}");

    assert_eq!(get(&serve.address, "/healthz").status, 200);
    assert_eq!(get(&serve.address, "/readyz").status, 200, "the store is up");

    let form = [("content-type".to_owned(), "application/x-www-form-urlencoded".to_owned())];
    let unknown = http(&serve.address, "POST", "/webhooks/nosuch", &form, b"a=b").unwrap();
    assert_eq!(unknown.status, 404, "{unknown:?}");
    let unset = http(&serve.address, "POST", "/webhooks/plivo", &form, b"a=b").unwrap();
    assert_eq!(unset.status, 404, "no secret, no route: {unset:?}");

    // One byte over 1 MiB.
    let large = vec![b'a'; 1024 * 1024 + 1];
    let answer = http(&serve.address, "POST", "/webhooks/twilio", &form, &large).unwrap();
    assert_eq!((answer.status, answer.body.trim()), (413, "body_too_large"), "{answer:?}");
    // Exactly 1 MiB is read (and then refused as unsigned).
    let limit = vec![b'a'; 1024 * 1024];
    let answer = http(&serve.address, "POST", "/webhooks/twilio", &form, &limit).unwrap();
    assert_ne!(answer.status, 413, "{answer:?}");

    let metrics = get(&serve.address, "/metrics");
    assert_eq!(metrics.status, 200, "{metrics:?}");
    let counted = metrics.body.lines().find(|l| l.starts_with("sms_sdk_serve_requests_total") && l.contains("\"413\""));
    assert!(counted.is_some(), "no sms_sdk_serve_requests_total for the 413:\n{}", metrics.body);
    assert!(serve.stdout.snapshot().is_empty(), "nothing was handed on");
}

/// AWS through `serve`: the emulator's SNS-signed delivery event (its own certificate, given as
/// `SMS_SDK_AWS_SNS_CERTIFICATE`) settles an unknown send by the reference the request's
/// `Context` carried, and a two-way STOP suppresses the number.
#[test]
fn serve_aws_settles_an_unknown_send_and_takes_a_stop() {
    let serve = [
        ("AWS_SNS_TOPIC_ARN", credentials::AWS_SNS_TOPIC_ARN),
        ("SMS_SDK_AWS_SNS_CERTIFICATE", credentials::AWS_SNS_CERTIFICATE),
    ];
    let banner = "AWS_SNS_TOPIC_ARN set; SNS certificate pinned by SMS_SDK_AWS_SNS_CERTIFICATE";
    let aws = [
        ("AWS_REGION", credentials::AWS_REGION),
        ("AWS_ACCESS_KEY_ID", credentials::AWS_ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", credentials::AWS_SECRET_ACCESS_KEY),
        ("AWS_FROM", FROM),
    ];
    let (background, env, store) = settles_and_takes_a_stop(Provider::Aws, &serve, banner, &aws);

    // `idempotency reconcile` says why an AWS key is not looked up.
    let other = unique("aws-unknown");
    let send =
        ["send", "--to", magic::CREATED_THEN_DROPPED, "--body", "x", "--idempotency-key", &other, "--store", &store];
    // Without the correlation secret the send carries no reference: no event can settle it.
    let base = background.emulator().base_url();
    let unsettled: Env = aws.iter().copied().chain([("SMS_SDK_AWS_BASE_URL", base.as_str())]).collect();
    assert_eq!(command(&send, &unsettled).code, 3);
    let reconcile = command(&["idempotency", "reconcile", &other, "--store", &store], &env);
    assert!(
        reconcile.out.contains("aws has no message lookup") || reconcile.err.contains("aws has no message lookup"),
        "{}",
        show(&reconcile)
    );
}

/// AWS senders and the default status callback: a pool's id or ARN is an origination identity
/// (not an alphanumeric sender ID), and `SMS_SDK_STATUS_CALLBACK_URL`, which AWS cannot take per
/// message, is left out of a send that may go to AWS, with a note, instead of refusing it.
#[test]
fn aws_pool_senders_and_the_default_callback_url() {
    let background = Background::start(|b| b);
    let base = background.emulator().base_url();
    let env: Env = [
        ("AWS_REGION", credentials::AWS_REGION),
        ("AWS_ACCESS_KEY_ID", credentials::AWS_ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", credentials::AWS_SECRET_ACCESS_KEY),
        ("SMS_SDK_AWS_BASE_URL", base.as_str()),
        ("SMS_SDK_STATUS_CALLBACK_URL", "https://hooks.example.com/status"),
    ]
    .into_iter()
    .collect();
    let store = sqlite_store("aws-pool");
    for pool in ["pool-0123456789abcdef0123456789abcdef", "arn:aws:sms-voice:us-east-1:000000000000:pool/pool-0a1b"] {
        let to = recipient();
        let sent = command(
            &["send", "--provider", "aws", "--to", to.as_str(), "--body", "hi", "--from", pool, "--store", &store],
            &env,
        );
        assert_eq!(sent.code, 0, "{pool}: {}", show(&sent));
        assert!(sent.err.contains("SMS_SDK_STATUS_CALLBACK_URL is not used for this send: aws"), "{}", show(&sent));
    }
    assert_eq!(background.count(), 2);
}
