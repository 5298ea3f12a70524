//! The transport over real sockets: resets, timeouts, and what reaches logs and errors.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::{Category, Client, ErrorKind, Failover, HttpConfig, Message, Twilio, UnknownReason};
use tokio::io::AsyncReadExt;
use wiremock::ResponseTemplate;

use super::twilio::SID;
use super::{json_reply, requests, serve};

/// A server that reads each request, then resets the connection without answering.
async fn resetting_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buffer = vec![0; 4096];
            let _ = stream.read(&mut buffer).await;
            let socket = socket2::SockRef::from(&stream);
            let _ = socket.set_linger(Some(Duration::ZERO));
            drop(stream);
        }
    });
    format!("http://{address}")
}

fn twilio(base_url: &str, token: &str) -> Twilio {
    Twilio::builder(SID, token).from("+15005550006").base_url(base_url).build().unwrap()
}

fn with_backup(primary: Twilio, backup: &MemoryAdapter) -> Client {
    Client::builder()
        .adapter(primary)
        .adapter(backup.clone())
        .failover(Failover::OnEligibleRejection)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_reset_connection_is_unknown_network_and_never_fails_over() {
    let backup = MemoryAdapter::builder().name("backup").build();
    let client = with_backup(twilio(&resetting_server().await, "test-token"), &backup);
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Network));
    assert!(!err.is_retry_safe());
    assert!(backup.sent().is_empty());
}

#[tokio::test]
async fn timeout_a_held_request_is_unknown_and_never_fails_over() {
    let server = serve(ResponseTemplate::new(201).set_delay(Duration::from_secs(30))).await;
    let backup = MemoryAdapter::builder().name("backup").build();
    let client = with_backup(twilio(&server.uri(), "test-token"), &backup);
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Timeout));
    assert_eq!(requests(&server).await.len(), 1);
    assert!(backup.sent().is_empty());
}

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn failing_requests_never_log_or_report_secrets_bodies_or_numbers() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let token = "super-secret-auth-token";
    let body = "Your verification code is 48213957";
    let to = "+14155550123";
    let message = Message::new(to, body);
    let rejecting = serve(json_reply(
        400,
        &json!({"code": 21211, "message": format!("The 'To' number {to} is not a valid phone number.")}),
    ))
    .await;
    let held = serve(ResponseTemplate::new(201).set_delay(Duration::from_secs(30))).await;
    let mut rendered = String::new();
    for base in [rejecting.uri(), held.uri(), resetting_server().await, "http://127.0.0.1:9".to_owned()] {
        let adapter = twilio(&base, token);
        write!(rendered, "{adapter:?}").unwrap();
        let client = Client::builder().adapter(adapter).timeout(Duration::from_millis(300)).build().unwrap();
        write!(rendered, "{client:?}").unwrap();
        let err = client.send(&message).await.unwrap_err();
        write!(rendered, "{err} {err:?} {}", serde_json::to_string(&err).unwrap()).unwrap();
    }
    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("provider"), "the failing requests were logged: {logs}");
    for text in [&logs, &rendered] {
        assert!(!text.contains(token), "{text}");
        assert!(!text.contains("48213957"), "{text}");
        assert!(!text.contains("4155550123"), "{text}");
    }
}

/// A loopback port with nothing listening on it.
async fn closed_port() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{address}")
}

/// A TCP server that accepts and closes at once: a TLS handshake with it always fails.
async fn refusing_tls_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            drop(stream);
        }
    });
    format!("https://{address}")
}

/// A listener whose accept queue is full and never drained: a new connect hangs.
fn full_backlog() -> (String, Vec<std::net::TcpStream>, socket2::Socket) {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&"127.0.0.1:0".parse::<std::net::SocketAddr>().unwrap().into()).unwrap();
    socket.listen(0).unwrap();
    let address = socket.local_addr().unwrap().as_socket().unwrap();
    let mut held = Vec::new();
    for _ in 0..4 {
        if let Ok(stream) = std::net::TcpStream::connect_timeout(&address, Duration::from_millis(100)) {
            held.push(stream);
        }
    }
    (format!("http://{address}"), held, socket)
}

#[tokio::test]
async fn a_refused_connection_is_an_unreachable_rejection_that_fails_over() {
    let backup = MemoryAdapter::builder().name("backup").build();
    let client = with_backup(twilio(&closed_port().await, "test-token"), &backup);
    let receipt = client.send(&crate::message()).await.unwrap();
    assert_eq!(receipt.provider, "backup");
    assert_eq!(receipt.attempted_providers, ["twilio", "backup"]);
    assert_eq!(backup.sent().len(), 1);

    let client = Client::builder().adapter(twilio(&closed_port().await, "test-token")).build().unwrap();
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Unreachable));
    assert_eq!(err.code(), "provider_unreachable");
    assert!(err.is_retry_safe());
    assert!(err.to_string().contains("nothing was sent"), "{err}");
}

#[tokio::test]
async fn a_failed_tls_handshake_is_an_unreachable_rejection() {
    let client = Client::builder().adapter(twilio(&refusing_tls_server().await, "test-token")).build().unwrap();
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Unreachable));
}

#[tokio::test]
async fn timeout_a_connect_that_hangs_is_unreachable_before_the_request_timeout() {
    let (base, _held, _listener) = full_backlog();
    let client =
        Client::builder().adapter(twilio(&base, "test-token")).timeout(Duration::from_millis(400)).build().unwrap();
    let started = std::time::Instant::now();
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Unreachable), "{err:?}");
    // It waited for the connect budget (90 % of the timeout), not for a refusal.
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(2), "{elapsed:?}");
}

#[tokio::test]
async fn an_unresolvable_host_is_an_unreachable_rejection() {
    let client = Client::builder()
        .adapter(twilio("http://sms-sdk-test.invalid", "test-token"))
        .timeout(Duration::from_secs(3))
        .build()
        .unwrap();
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Unreachable), "{err:?}");
}

#[tokio::test]
async fn an_unreachable_rejection_releases_the_idempotency_key() {
    let store = sms_sdk::store::MemoryStore::new();
    let client = Client::builder()
        .adapter(twilio(&closed_port().await, "test-token"))
        .idempotency(store.clone())
        .build()
        .unwrap();
    let message = crate::message().idempotency_key("unreachable-1");
    let err = client.send(&message).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Unreachable));
    let record = sms_sdk::store::IdempotencyStore::get(&store, "unreachable-1").await.unwrap().unwrap();
    assert_eq!(record.state(), sms_sdk::store::State::Rejected);
    // The same key sends again later.
    let server =
        serve(json_reply(201, &json!({"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"}))).await;
    let client = Client::builder().adapter(twilio(&server.uri(), "test-token")).idempotency(store).build().unwrap();
    assert!(!client.send(&message).await.unwrap().replayed);
}

#[tokio::test]
async fn a_response_body_over_one_mebibyte_is_unknown_malformed() {
    let huge = "x".repeat(1024 * 1024 + 1);
    for (status, body) in [(201, huge.clone()), (400, huge)] {
        let server = serve(ResponseTemplate::new(status).set_body_string(body)).await;
        let client = Client::builder().adapter(twilio(&server.uri(), "test-token")).build().unwrap();
        let err = client.send(&crate::message()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::MalformedResponse), "{status}");
    }
    // Just under the limit is read and classified as usual.
    let padding = "x".repeat(1024 * 1024 - 200);
    let body = json!({"code": 21211, "message": "invalid", "padding": padding});
    let server = serve(json_reply(400, &body)).await;
    let client = Client::builder().adapter(twilio(&server.uri(), "test-token")).build().unwrap();
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Recipient));
}

#[tokio::test]
async fn a_provider_that_echoes_the_request_leaks_no_secret_or_body() {
    let token = "echoed-auth-token-value";
    let body = "Your one-time code is 583920, do not share";
    let store = sms_sdk::store::MemoryStore::new();
    // An echoing proxy: Twilio's error shape with the whole request (headers and form) as text.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = vec![0; 64 * 1024];
            let n = stream.read(&mut request).await.unwrap_or(0);
            let text = String::from_utf8_lossy(&request[..n]).into_owned();
            let reply = json!({"code": 21211, "message": format!("bad request: {text}")}).to_string();
            let response = format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
            let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, response.as_bytes()).await;
        }
    });
    let client = Client::builder()
        .adapter(twilio(&format!("http://{address}"), token))
        .idempotency(store.clone())
        .build()
        .unwrap();
    let err = client.send(&Message::new(crate::TO, body).idempotency_key("echo-1")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Recipient));
    let record = sms_sdk::store::IdempotencyStore::get(&store, "echo-1").await.unwrap().unwrap();
    let rendered = format!("{err} {err:?} {} {record:?}", serde_json::to_string(&err).unwrap());
    assert!(rendered.contains("bad request"), "{rendered}");
    for secret in [token, "583920", "one-time", "4155550123"] {
        assert!(!rendered.contains(secret), "{secret} in {rendered}");
    }
    let basic = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, format!("{SID}:{token}"));
    assert!(!rendered.contains(&basic), "{rendered}");
}

/// A client of our own to inject: no redirects, no retries, and a header that marks its requests.
fn injected_client() -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("x-pool", reqwest::header::HeaderValue::from_static("injected"));
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never())
        .default_headers(headers)
        .build()
        .unwrap()
}

/// A Twilio adapter at `base_url` reaching it through `http`.
fn twilio_over(base_url: &str, http: HttpConfig) -> Twilio {
    Twilio::builder(SID, "test-token").from("+15005550006").base_url(base_url).http(http).build().unwrap()
}

#[tokio::test]
async fn every_request_carries_the_sdk_user_agent_or_the_configured_one() {
    let server =
        serve(json_reply(201, &json!({"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"}))).await;
    let plain = Client::builder().adapter(twilio(&server.uri(), "test-token")).build().unwrap();
    plain.send(&crate::message()).await.unwrap();
    let named = twilio_over(&server.uri(), HttpConfig::new().user_agent("shop/2.0"));
    Client::builder().adapter(named).build().unwrap().send(&crate::message()).await.unwrap();
    let agents: Vec<_> =
        requests(&server).await.iter().map(|r| super::header(r, "user-agent").unwrap_or_default().to_owned()).collect();
    assert_eq!(agents, [concat!("sms-sdk/", env!("CARGO_PKG_VERSION")), "shop/2.0"]);
}

#[tokio::test]
async fn an_injected_http_client_sends_every_provider_request() {
    let server =
        serve(json_reply(201, &json!({"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"}))).await;
    let adapter = twilio_over(&server.uri(), HttpConfig::new().client(injected_client()));
    let client = Client::builder().adapter(adapter).build().unwrap();
    let receipt = client.send(&crate::message()).await.unwrap();
    assert_eq!(receipt.provider_id, "SM0123456789abcdef0123456789abcdef");
    let received = requests(&server).await;
    assert_eq!(super::header(&received[0], "x-pool"), Some("injected"));
    assert_eq!(super::header(&received[0], "user-agent"), Some(concat!("sms-sdk/", env!("CARGO_PKG_VERSION"))));
}

/// An HTTP proxy that answers every request itself (as the provider would) and counts them: the
/// adapter's base URL names a host that does not exist, so a request that reaches the stand-in
/// went through the proxy.
#[tokio::test]
async fn sends_and_lookups_go_through_the_configured_client_s_proxy() {
    use sms_sdk::Adapter as _;
    use sms_sdk::adapter::AnyAdapter;
    use sms_sdk::lookup::LookupOutcome;

    let sid = "SM0123456789abcdef0123456789abcdef";
    let message = json!({"sid": sid, "status": "delivered", "to": "+14155550123", "from": "+15005550006",
                         "body": "hi", "date_created": "Tue, 01 Dec 2026 10:00:00 +0000"});
    let proxy = serve(json_reply(201, &message)).await;
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let through_proxy = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .proxy(reqwest::Proxy::http(proxy.uri()).unwrap())
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never())
        .build()
        .unwrap();
    let adapter = twilio_over("http://api.twilio.invalid", HttpConfig::new().client(through_proxy));
    let client = Client::builder().adapter(adapter.clone()).build().unwrap();
    assert_eq!(client.send(&crate::message()).await.unwrap().provider_id, sid);
    // The lookup as a caller holding any adapter reaches it (the command's reconcile does).
    let any = AnyAdapter::new(adapter);
    let found = any.lookup().expect("Twilio reads messages back").fetch(sid, Duration::from_secs(5)).await;
    assert!(AnyAdapter::new(MemoryAdapter::new()).lookup().is_none());
    assert!(matches!(found, LookupOutcome::Found(ref messages) if messages[0].provider_id == sid), "{found:?}");
    let seen = requests(&proxy).await;
    let lines: Vec<String> =
        seen.iter().map(|r| format!("{} {}", r.method, r.url.host_str().unwrap_or_default())).collect();
    assert_eq!(lines, ["POST api.twilio.invalid", "GET api.twilio.invalid"], "the proxy saw the send and the lookup");
}

#[tokio::test]
async fn an_injected_client_that_cannot_connect_is_still_unreachable() {
    let adapter = twilio_over(&closed_port().await, HttpConfig::new().client(injected_client()));
    let client = Client::builder().adapter(adapter).build().unwrap();
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Unreachable), "{err:?}");
}

#[tokio::test]
async fn timeout_a_configured_connect_timeout_ends_a_hanging_connect_sooner() {
    let (base, _held, _listener) = full_backlog();
    let adapter = twilio_over(&base, HttpConfig::new().connect_timeout(Duration::from_millis(300)));
    let client = Client::builder().adapter(adapter).timeout(Duration::from_secs(5)).build().unwrap();
    let started = std::time::Instant::now();
    let err = client.send(&crate::message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Unreachable), "{err:?}");
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_millis(250) && elapsed < Duration::from_secs(3), "{elapsed:?}");
}

#[test]
fn transport_options_are_checked_when_the_adapter_is_built() {
    let build = |http: HttpConfig| Twilio::builder(SID, "test-token").http(http).build().unwrap_err();
    assert_eq!(build(HttpConfig::new().connect_timeout(Duration::ZERO)).kind(), ErrorKind::Configuration);
    assert_eq!(build(HttpConfig::new().connect_timeout(Duration::MAX)).kind(), ErrorKind::Configuration);
    assert_eq!(build(HttpConfig::new().user_agent("shop\n2.0")).kind(), ErrorKind::Configuration);
}
