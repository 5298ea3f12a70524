//! The adapter contract: the checks every HTTP adapter must pass, run against a real local HTTP
//! server (wiremock) that serves the provider's documented responses.
//!
//! ```no_run
//! # #[cfg(feature = "twilio")]
//! # async fn example(fixtures: sms_sdk::testing::adapter_contract::Fixtures) {
//! use sms_sdk::provider::twilio::Twilio;
//! use sms_sdk::testing::adapter_contract;
//!
//! let report = adapter_contract::run(
//!     |base_url| {
//!         Twilio::builder("AC0123456789abcdef0123456789abcdef", "test-token")
//!             .from("+15005550006")
//!             .base_url(base_url)
//!             .build()
//!             .unwrap()
//!     },
//!     &fixtures,
//! )
//! .await;
//! assert!(report.passed, "{report:#?}");
//! # }
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::adapter::{Adapter, Category, Delivery, Outcome, SendContext, SenderType, SupportStatus};
use crate::client::{Client, SendOptions};
use crate::error::ErrorKind;
use crate::message::{Message, OutboundMessage, Sender};
use crate::testing::webhooks::SignedRequest;
use crate::webhook::WebhookVerifier;
use crate::{CancellationToken, UnknownReason};

pub use super::{CaseResult, Report};

/// One canned HTTP response.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// Response body.
    pub body: String,
}

impl Reply {
    /// A JSON response.
    #[must_use]
    pub fn json(status: u16, body: &Value) -> Self {
        Self::raw(status, "application/json", body.to_string())
    }

    /// A response with any content type and body.
    #[must_use]
    pub fn raw(status: u16, content_type: &str, body: impl Into<String>) -> Self {
        Self { status, headers: vec![("content-type".into(), content_type.into())], body: body.into() }
    }

    /// Adds a header.
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    fn template(&self) -> ResponseTemplate {
        let mut template = ResponseTemplate::new(self.status).set_body_raw(self.body.clone().into_bytes(), "");
        for (name, value) in &self.headers {
            template = template.insert_header(name.as_str(), value.as_str());
        }
        template
    }
}

/// The body an adapter must send.
#[derive(Debug, Clone)]
pub enum ExpectedBody {
    /// A form: every key with its values in order (repeated keys allowed); key order is free.
    Form(Vec<(String, String)>),
    /// A JSON value, compared without regard to key order.
    Json(Value),
}

/// The request an adapter must make for [`Fixtures::message`].
#[derive(Debug, Clone)]
pub struct ExpectedRequest {
    /// Path (and query) on the base URL, such as `/v2/messages`.
    pub path: String,
    /// Headers that must be present with these values (names compared case-insensitively).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: ExpectedBody,
}

/// The provider's documented responses and the request expected for one message.
#[derive(Debug, Clone)]
pub struct Fixtures {
    /// A message the adapter supports.
    pub message: OutboundMessage,
    /// The request it must make.
    pub request: ExpectedRequest,
    /// A success response, and the provider id and delivery status it proves.
    pub accepted: (Reply, String, Delivery),
    /// A rejection another provider would not accept either, and its category.
    pub permanent_rejection: (Reply, Category),
    /// A rejection another provider might accept, and its category.
    pub eligible_rejection: (Reply, Category),
    /// A documented rate limit, and the `Retry-After` it carries.
    pub rate_limited: (Reply, Option<Duration>),
    /// A 2xx that does not prove acceptance.
    pub malformed_success: Reply,
    /// A 5xx.
    pub server_error: Reply,
    /// The provider's webhooks, when the adapter has a verifier.
    pub webhooks: Option<WebhookFixtures>,
}

/// Signed webhook requests and the event fields each must normalize to.
#[derive(Clone)]
pub struct WebhookFixtures {
    /// The provider's verifier, configured with the test secret.
    pub verifier: std::sync::Arc<dyn WebhookVerifier>,
    /// When the requests are verified (for timestamped schemes).
    pub now: std::time::SystemTime,
    /// Named requests and the fields (a JSON object) their event must have.
    pub cases: Vec<(String, SignedRequest, Value)>,
    /// A request changed after signing: it must fail as not authentic.
    pub tampered: SignedRequest,
}

impl std::fmt::Debug for WebhookFixtures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookFixtures").field("cases", &self.cases.len()).finish_non_exhaustive()
    }
}

type Check = Result<(), String>;

/// Runs every check of the contract against adapters built by `factory` (given the base URL of
/// a fresh local server for each check).
pub async fn run<A, F>(factory: F, fixtures: &Fixtures) -> Report
where
    A: Adapter + Clone,
    F: Fn(&str) -> A,
{
    let name = factory("http://127.0.0.1:9").info().name.clone();
    let harness = Harness { factory: &factory, fixtures };
    let mut results = Vec::new();
    let mut record = |check: &str, result: Check| {
        results.push(CaseResult { name: format!("{name}: {check}"), passed: result.is_ok(), error: result.err() });
    };
    record("declares consistent capabilities", harness.capabilities());
    record("builds the documented request", harness.request().await);
    record("cancellation drops the request", harness.cancellation().await);
    record("normalizes an accepted response", harness.accepted().await);
    record("maps a permanent rejection", harness.permanent().await);
    record("maps an eligible rejection", harness.eligible().await);
    record("maps a confirmed rate limit", harness.rate_limited().await);
    record("a refused connection is an unreachable rejection", harness.unreachable().await);
    record("a connection lost after the request is unknown", harness.network_error().await);
    record("cancelled in flight is unknown", harness.cancelled_in_flight().await);
    record("malformed 2xx is unknown", harness.unknown_reply(&fixtures.malformed_success).await);
    record("non-JSON 2xx is unknown", harness.unknown_reply(&Reply::raw(200, "text/html", "<html>ok</html>")).await);
    record("5xx is unknown", harness.unknown_reply(&fixtures.server_error).await);
    for (check, result) in harness.undeclared_capabilities().await {
        record(&check, result);
    }
    if let Some(webhooks) = &fixtures.webhooks {
        for (case, request, expected) in &webhooks.cases {
            record(&format!("webhook {case}"), webhook_case(webhooks, request, expected));
        }
        let tampered = webhooks.verifier.verify_at(&webhooks.tampered.as_request(), webhooks.now);
        let result = match tampered {
            Err(error) if error.is_authentication() => Ok(()),
            other => Err(format!("expected a signature error, got {other:?}")),
        };
        record("tampered webhook is not authentic", result);
    }
    let passed = results.iter().all(|r| r.passed);
    Report { subject: name, passed, results }
}

struct Harness<'a, F> {
    factory: &'a F,
    fixtures: &'a Fixtures,
}

impl<A, F> Harness<'_, F>
where
    A: Adapter + Clone,
    F: Fn(&str) -> A,
{
    /// A server answering every request with `reply` (after `delay`), and an adapter on it.
    async fn serve(&self, reply: &Reply, delay: Duration) -> (MockServer, A) {
        let server = MockServer::start().await;
        Mock::given(any()).respond_with(reply.template().set_delay(delay)).mount(&server).await;
        let adapter = (self.factory)(&server.uri());
        (server, adapter)
    }

    async fn outcome_for(&self, reply: &Reply) -> Outcome {
        let (_server, adapter) = self.serve(reply, Duration::ZERO).await;
        adapter.send(&self.fixtures.message, &context()).await
    }

    fn capabilities(&self) -> Check {
        let adapter = (self.factory)("http://127.0.0.1:9");
        let info = adapter.info();
        let caps = &info.capabilities;
        let valid_name = info.name.starts_with(|c: char| c.is_ascii_lowercase())
            && info.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        ensure!(valid_name, "name {:?} must match ^[a-z][a-z0-9-]*$", info.name);
        ensure!(caps.send_text, "send_text must be true");
        ensure!(!caps.sender_types.is_empty(), "sender_types must not be empty");
        let mut seen = std::collections::HashSet::new();
        ensure!(caps.sender_types.iter().all(|t| seen.insert(*t)), "sender_types must be unique");
        if let Some(range) = caps.validity_period {
            ensure!(range.min_sec > 0 && range.min_sec <= range.max_sec, "validity range {range:?} is inconsistent");
        }
        ensure!(
            info.support.status == SupportStatus::Supported || !info.support.notes.is_empty(),
            "a partial adapter must explain itself in its notes"
        );
        Ok(())
    }

    async fn request(&self) -> Check {
        let (server, adapter) = self.serve(&self.fixtures.accepted.0, Duration::ZERO).await;
        adapter.send(&self.fixtures.message, &context()).await;
        let requests = server.received_requests().await.unwrap_or_default();
        let [request] = requests.as_slice() else {
            return Err(format!("expected exactly 1 request, got {}", requests.len()));
        };
        let expected = &self.fixtures.request;
        ensure!(request.method.as_str() == "POST", "method {} is not POST", request.method);
        let path = match request.url.query() {
            Some(query) => format!("{}?{query}", request.url.path()),
            None => request.url.path().to_owned(),
        };
        ensure!(path == expected.path, "path {path:?} is not {:?}", expected.path);
        for (name, value) in &expected.headers {
            let actual = request.headers.get(name.as_str()).and_then(|v| v.to_str().ok());
            ensure!(actual == Some(value.as_str()), "header {name}: {actual:?} is not {value:?}");
        }
        compare_body(request, &expected.body)
    }

    async fn cancellation(&self) -> Check {
        let (_server, adapter) = self.serve(&self.fixtures.accepted.0, Duration::from_secs(30)).await;
        let cx = context();
        let sent = tokio::time::timeout(Duration::from_millis(200), adapter.send(&self.fixtures.message, &cx)).await;
        ensure!(sent.is_err(), "a request held by the server must still be pending after 200 ms");
        Ok(())
    }

    async fn accepted(&self) -> Check {
        let (reply, id, delivery) = &self.fixtures.accepted;
        match self.outcome_for(reply).await {
            Outcome::Accepted(accepted) => {
                ensure!(accepted.provider_id == *id, "provider_id {:?} is not {id:?}", accepted.provider_id);
                ensure!(accepted.delivery == *delivery, "delivery {:?} is not {delivery:?}", accepted.delivery);
                Ok(())
            }
            other @ (Outcome::Rejected(_) | Outcome::Unknown(_)) => Err(format!("expected accepted, got {other:?}")),
        }
    }

    async fn rejection(&self, reply: &Reply, category: Category, eligible: bool) -> Check {
        let name = (self.factory)("http://127.0.0.1:9").info().name.clone();
        match self.outcome_for(reply).await {
            Outcome::Rejected(rejection) => {
                ensure!(rejection.category == category, "category {} is not {category}", rejection.category);
                ensure!(
                    rejection.category.allows_failover() == eligible,
                    "category {} must {}allow failover",
                    rejection.category,
                    if eligible { "" } else { "not " }
                );
                ensure!(
                    rejection.details.provider() == name,
                    "details name {:?}, not the adapter {name:?}",
                    rejection.details.provider()
                );
                Ok(())
            }
            other @ (Outcome::Accepted(_) | Outcome::Unknown(_)) => Err(format!("expected a rejection, got {other:?}")),
        }
    }

    async fn permanent(&self) -> Check {
        let (reply, category) = &self.fixtures.permanent_rejection;
        self.rejection(reply, *category, false).await
    }

    async fn eligible(&self) -> Check {
        let (reply, category) = &self.fixtures.eligible_rejection;
        self.rejection(reply, *category, true).await
    }

    async fn rate_limited(&self) -> Check {
        let (reply, retry_after) = &self.fixtures.rate_limited;
        match self.outcome_for(reply).await {
            Outcome::Rejected(rejection) => {
                ensure!(
                    rejection.category == Category::RateLimited,
                    "category {} is not rate_limited",
                    rejection.category
                );
                ensure!(
                    rejection.retry_after == *retry_after,
                    "retry_after {:?} is not {retry_after:?}",
                    rejection.retry_after
                );
                Ok(())
            }
            other @ (Outcome::Accepted(_) | Outcome::Unknown(_)) => {
                Err(format!("expected a rate limit, got {other:?}"))
            }
        }
    }

    /// Nothing listens on the port: the request never left the machine.
    async fn unreachable(&self) -> Check {
        let port = closed_port().await.map_err(|e| format!("could not reserve a port: {e}"))?;
        let adapter = (self.factory)(&format!("http://127.0.0.1:{port}"));
        match adapter.send(&self.fixtures.message, &context()).await {
            Outcome::Rejected(rejection) if rejection.category == Category::Unreachable => Ok(()),
            other @ (Outcome::Accepted(_) | Outcome::Rejected(_) | Outcome::Unknown(_)) => {
                Err(format!("expected an unreachable rejection, got {other:?}"))
            }
        }
    }

    /// The server reads the request and closes the connection without answering: the message
    /// may have been created.
    async fn network_error(&self) -> Check {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(|e| e.to_string())?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        let server = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buffer = vec![0; 64 * 1024];
                let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buffer).await;
            }
        });
        let adapter = (self.factory)(&format!("http://{address}"));
        let outcome = adapter.send(&self.fixtures.message, &context()).await;
        server.abort();
        expect_unknown(&outcome, Some(UnknownReason::Network))
    }

    async fn cancelled_in_flight(&self) -> Check {
        let (_server, adapter) = self.serve(&self.fixtures.accepted.0, Duration::from_secs(30)).await;
        let client = Client::builder().adapter(adapter).build().map_err(|e| e.to_string())?;
        let token = CancellationToken::new();
        let cancel = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
        });
        let message = caller_message(&self.fixtures.message);
        let error = match client.send_with(&message, SendOptions::default().cancel(token)).await {
            Ok(receipt) => return Err(format!("expected unknown, got accepted {}", receipt.provider_id)),
            Err(error) => error,
        };
        ensure!(
            error.kind() == ErrorKind::Unknown(UnknownReason::Aborted),
            "expected Unknown(Aborted), got {:?}",
            error.kind()
        );
        Ok(())
    }

    async fn unknown_reply(&self, reply: &Reply) -> Check {
        expect_unknown(&self.outcome_for(reply).await, None)
    }

    /// Each capability the adapter does not declare fails with `Unsupported` before any request.
    async fn undeclared_capabilities(&self) -> Vec<(String, Check)> {
        let (server, adapter) = self.serve(&self.fixtures.accepted.0, Duration::ZERO).await;
        let caps = adapter.info().capabilities.clone();
        let client = match Client::builder().adapter(adapter).build() {
            Ok(client) => client,
            Err(e) => return vec![("undeclared capabilities".into(), Err(e.to_string()))],
        };
        let base = Message::new("+14155550123", "contract").from("+15005550006");
        let in_an_hour = time::OffsetDateTime::now_utc().saturating_add(time::Duration::hours(1));
        let cases: Vec<(&str, bool, Message)> = vec![
            ("media", caps.mms, base.clone().media_url("https://example.com/a.png")),
            ("send_at", caps.scheduling, base.clone().send_at(in_an_hour)),
            ("validity period", caps.validity_period.is_some(), base.clone().validity_period_secs(600)),
            ("webhook URL", caps.webhook_url_override, base.clone().webhook_url("https://example.com/status")),
            (
                "short code sender",
                caps.sender_types.contains(&SenderType::ShortCode),
                base.clone().from(Sender::short_code("12345")),
            ),
            (
                "alphanumeric sender",
                caps.sender_types.contains(&SenderType::Alphanumeric),
                base.clone().from(Sender::sender_id("Acme")),
            ),
            (
                "messaging service sender",
                caps.sender_types.contains(&SenderType::MessagingService),
                base.clone().from(Sender::messaging_service("service-1")),
            ),
        ];
        let mut results = Vec::new();
        for (what, _, message) in cases.into_iter().filter(|(_, declared, _)| !declared) {
            let result = match client.send(&message).await {
                Ok(_) => Err("the send was accepted".to_owned()),
                Err(e) if matches!(e.kind(), ErrorKind::Unsupported { .. }) => Ok(()),
                Err(e) => Err(format!("expected Unsupported, got {:?}", e.kind())),
            };
            results.push((format!("undeclared {what} is unsupported"), result));
        }
        let requests = server.received_requests().await.unwrap_or_default().len();
        results.push((
            "undeclared capabilities make no request".into(),
            if requests == 0 { Ok(()) } else { Err(format!("{requests} requests were made")) },
        ));
        results
    }
}

/// Verifies one webhook case and compares the event with the expected fields.
fn webhook_case(webhooks: &WebhookFixtures, request: &SignedRequest, expected: &Value) -> Check {
    let event = webhooks.verifier.verify_at(&request.as_request(), webhooks.now).map_err(|e| e.to_string())?;
    let actual = serde_json::to_value(&event).map_err(|e| e.to_string())?;
    let Value::Object(expected) = expected else { return Err("expected fields must be a JSON object".into()) };
    for (field, value) in expected {
        ensure!(actual.get(field) == Some(value), "field {field}: {:?} is not {value}", actual.get(field));
    }
    Ok(())
}

fn context() -> SendContext {
    SendContext::new(1, None, Duration::from_secs(5))
}

/// The caller's form of an adapter message (for checks that go through a client).
fn caller_message(message: &OutboundMessage) -> Message {
    let from = match message.from.kind {
        crate::message::SenderKind::PhoneNumber => Sender::phone(&message.from.value),
        crate::message::SenderKind::Alphanumeric => Sender::sender_id(&message.from.value),
        crate::message::SenderKind::ShortCode => Sender::short_code(&message.from.value),
        crate::message::SenderKind::MessagingService => Sender::messaging_service(&message.from.value),
    };
    Message {
        to: message.to.as_str().to_owned(),
        from: Some(from),
        body: message.body.clone(),
        media_urls: message.media_urls.clone(),
        send_at: message.send_at,
        validity_period_secs: message.validity_period_secs.map(i64::from),
        webhook_url: message.webhook_url.clone(),
        idempotency_key: None,
        provider_options: None,
    }
}

fn expect_unknown(outcome: &Outcome, reason: Option<UnknownReason>) -> Check {
    if let Outcome::Unknown(unknown) = outcome
        && reason.is_none_or(|r| r == unknown.reason)
    {
        return Ok(());
    }
    let expected = reason.map(|r| format!(" ({r})")).unwrap_or_default();
    Err(format!("expected unknown{expected}, got {outcome:?}"))
}

fn compare_body(request: &Request, expected: &ExpectedBody) -> Check {
    match expected {
        ExpectedBody::Json(value) => {
            let actual: Value = serde_json::from_slice(&request.body).map_err(|e| format!("body is not JSON: {e}"))?;
            ensure!(actual == *value, "JSON body {actual} is not {value}");
            Ok(())
        }
        ExpectedBody::Form(pairs) => {
            let group = |pairs: Vec<(String, String)>| {
                pairs.into_iter().fold(BTreeMap::<String, Vec<String>>::new(), |mut map, (k, v)| {
                    map.entry(k).or_default().push(v);
                    map
                })
            };
            let actual = group(url::form_urlencoded::parse(&request.body).into_owned().collect());
            let expected = group(pairs.clone());
            ensure!(actual == expected, "form body {actual:?} is not {expected:?}");
            Ok(())
        }
    }
}

/// A loopback port with nothing listening on it.
async fn closed_port() -> std::io::Result<u16> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    drop(listener);
    Ok(port)
}
