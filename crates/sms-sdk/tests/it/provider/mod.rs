//! The provider adapters over real HTTP on loopback (wiremock), with the providers' documented
//! request and response bodies as fixtures.

// Helpers shared by the provider modules: a build with only some providers leaves some unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

#[cfg(feature = "aws")]
mod aws;
#[cfg(feature = "bandwidth")]
mod bandwidth;
#[cfg(feature = "twilio")]
mod endpoint;
#[cfg(feature = "twilio")]
mod inflight;
#[cfg(feature = "infobip")]
mod infobip;
#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod live;
#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod options;
#[cfg(feature = "plivo")]
mod plivo;
#[cfg(feature = "sinch")]
mod sinch;
#[cfg(feature = "telnyx")]
mod telnyx;
#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod timeouts;
#[cfg(feature = "twilio")]
mod transport;
#[cfg(feature = "twilio")]
mod twilio;
#[cfg(feature = "vonage")]
mod vonage;

use serde_json::Value;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// A fixture file of `provider`, as text.
pub(crate) fn fixture(provider: &str, name: &str) -> String {
    let path = format!("{}/tests/fixtures/{provider}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A fixture file of `provider`, as JSON.
pub(crate) fn fixture_json(provider: &str, name: &str) -> Value {
    serde_json::from_str(&fixture(provider, name)).unwrap()
}

/// A JSON response.
pub(crate) fn json_reply(status: u16, body: &Value) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.to_string().into_bytes(), "application/json")
}

/// A server answering every request with `reply`.
pub(crate) async fn serve(reply: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any()).respond_with(reply).mount(&server).await;
    server
}

/// Every request the server received.
pub(crate) async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

/// A header of a received request.
pub(crate) fn header<'a>(request: &'a Request, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|v| v.to_str().ok())
}

/// The JSON body of a received request.
pub(crate) fn json_body(request: &Request) -> Value {
    serde_json::from_slice(&request.body).unwrap()
}

/// The body of a received request, as text.
pub(crate) fn text_body(request: &Request) -> String {
    String::from_utf8(request.body.clone()).unwrap()
}

/// A server that reads each request and closes the connection without answering.
pub(crate) async fn closing_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buffer = vec![0; 64 * 1024];
            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buffer).await;
        }
    });
    format!("http://{address}")
}

/// A loopback port with nothing listening on it.
pub(crate) async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

/// An adapter message as the client builds it for `message` (sender resolved, no options).
pub(crate) fn outbound(message: &sms_sdk::Message) -> sms_sdk::OutboundMessage {
    let from = message.from.clone().unwrap_or_else(|| sms_sdk::Sender::phone("+15005550006")).resolve().unwrap();
    let mut outbound = sms_sdk::OutboundMessage::new(message.to.parse().unwrap(), from, message.body.clone());
    outbound.media_urls.clone_from(&message.media_urls);
    outbound.send_at = message.send_at;
    outbound.validity_period_secs = message.validity_period_secs.map(|v| u32::try_from(v).unwrap());
    outbound.webhook_url.clone_from(&message.webhook_url);
    outbound
}

/// Runs a provider's pure `interpret` with the given headers.
pub(crate) fn interpret_with(
    interpret: fn(u16, &http::HeaderMap, &[u8], std::time::SystemTime) -> sms_sdk::Outcome,
    status: u16,
    headers: &[(&str, &str)],
    body: &str,
) -> sms_sdk::Outcome {
    let mut map = http::HeaderMap::new();
    for (k, v) in headers {
        map.insert(http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
    }
    interpret(status, &map, body.as_bytes(), std::time::SystemTime::now())
}

/// T177: a documented rate limit is retried once on the adapter, then fails over to a memory
/// `backup`.
pub(crate) async fn assert_documented_rate_limit_fails_over<A: sms_sdk::Adapter>(
    adapter: impl Fn(&str) -> A,
    documented: ResponseTemplate,
) {
    let server = serve(documented).await;
    let (client, _) = with_backup(adapter(&server.uri()));
    assert_eq!(client.send(&crate::message()).await.unwrap().provider, "backup");
    assert_eq!(requests(&server).await.len(), 2);
}

/// T178: every bare 429 (an HTML page with `Retry-After`, an empty body, foreign JSON, and the
/// provider's own `extra` lookalikes) is an unknown outcome: sent once, never failed over.
pub(crate) async fn assert_bare_429s_are_unknown<A: sms_sdk::Adapter>(
    adapter: impl Fn(&str) -> A,
    extra: Vec<ResponseTemplate>,
) {
    let mut replies = vec![
        ResponseTemplate::new(429)
            .set_body_raw(b"<html><body>429 Too Many Requests</body></html>".to_vec(), "text/html")
            .insert_header("retry-after", "1"),
        ResponseTemplate::new(429),
        json_reply(429, &serde_json::json!({"message": "rate limit exceeded"})),
    ];
    replies.extend(extra);
    for reply in replies {
        let server = serve(reply).await;
        let (client, backup) = with_backup(adapter(&server.uri()));
        let err = client.send(&crate::message()).await.unwrap_err();
        assert_eq!(err.kind(), sms_sdk::ErrorKind::Unknown(sms_sdk::UnknownReason::UnexpectedStatus));
        assert!(!err.is_retry_safe());
        assert_eq!(err.provider_error().and_then(sms_sdk::error::ProviderError::status), Some(429));
        assert_eq!(requests(&server).await.len(), 1);
        assert!(backup.sent().is_empty());
    }
}

/// A client of `primary` then a memory `backup`, failover on, retries of 1 ms.
fn with_backup(primary: impl sms_sdk::Adapter) -> (sms_sdk::Client, sms_sdk::testing::MemoryAdapter) {
    let backup = sms_sdk::testing::MemoryAdapter::builder().name("backup").build();
    let client = sms_sdk::Client::builder()
        .adapter(primary)
        .adapter(backup.clone())
        .failover(sms_sdk::Failover::OnEligibleRejection)
        .retry(sms_sdk::RetryPolicy::new(2, std::time::Duration::from_millis(1), std::time::Duration::from_millis(1)))
        .build()
        .unwrap();
    (client, backup)
}
