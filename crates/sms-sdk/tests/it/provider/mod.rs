//! The provider adapters over real HTTP on loopback (wiremock), with the providers' documented
//! request and response bodies as fixtures.

#[cfg(feature = "twilio")]
mod twilio;

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

/// A server answering with `replies` in order (the last one repeats).
pub(crate) async fn serve_sequence(replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    let count = replies.len();
    for (i, reply) in replies.into_iter().enumerate() {
        let mock = Mock::given(any()).respond_with(reply);
        let mock = if i + 1 < count { mock.up_to_n_times(1) } else { mock };
        mock.with_priority(u8::try_from(i + 1).unwrap()).mount(&server).await;
    }
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
