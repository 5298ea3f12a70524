//! Plivo: request building, response interpretation and the contract, over real HTTP.

use std::time::Duration;

use serde_json::json;
use sms_sdk::adapter::{Category, Delivery, Outcome, SupportStatus};
use sms_sdk::provider::plivo::{self, Plivo};
use sms_sdk::testing::adapter_contract::{self, ExpectedBody, ExpectedRequest, Fixtures, Reply};
use sms_sdk::{Adapter, Client, ErrorKind, Failover, Message, Sender, UnknownReason};
use wiremock::ResponseTemplate;

use super::{fixture, fixture_json, json_reply, outbound, requests, serve};
use crate::{TO, message};

const AUTH_ID: &str = "MAXXXXXXXXXXXXXXXXXX";
const MESSAGE_UUID: &str = "db3ce55a-7f1d-11e1-8ea7-1231380bc196";

pub(crate) fn plivo_at(base_url: &str) -> Plivo {
    Plivo::builder(AUTH_ID, "plivo-token").from("+15005550006").base_url(base_url).build().unwrap()
}

fn interpret(status: u16, headers: &[(&str, &str)], body: &str) -> Outcome {
    super::interpret_with(plivo::__private::interpret, status, headers, body)
}

fn contract_message() -> Message {
    message().webhook_url("https://example.com/sms/status").validity_period_secs(3600)
}

fn fixtures() -> Fixtures {
    let error = |name: &str| fixture_json("plivo", name);
    Fixtures {
        message: outbound(&contract_message()),
        request: ExpectedRequest {
            path: format!("/v1/Account/{AUTH_ID}/Message/"),
            headers: vec![
                ("authorization".into(), "Basic TUFYWFhYWFhYWFhYWFhYWFhYWFg6cGxpdm8tdG9rZW4=".into()),
                ("content-type".into(), "application/json".into()),
                ("accept".into(), "application/json".into()),
            ],
            body: ExpectedBody::Json(json!({
                "src": "+15005550006", "dst": TO, "text": "Your order has shipped.", "type": "sms",
                "url": "https://example.com/sms/status", "method": "POST", "message_expiry": 3600
            })),
        },
        accepted: (
            Reply::raw(202, "application/json", fixture("plivo", "message_created.json")),
            MESSAGE_UUID.into(),
            Delivery::Queued,
        ),
        permanent_rejection: (Reply::json(400, &error("error_400.json")), Category::Request),
        eligible_rejection: (Reply::json(401, &error("error_401.json")), Category::Auth),
        rate_limited: (
            Reply::json(429, &error("error_429.json")).header("retry-after", "3"),
            Some(Duration::from_secs(3)),
        ),
        malformed_success: Reply::json(202, &json!({"message": "message(s) queued", "message_uuid": []})),
        server_error: Reply::json(500, &error("error_500.json")),
        webhooks: Some(webhook_fixtures()),
    }
}

fn webhook_fixtures() -> adapter_contract::WebhookFixtures {
    use sms_sdk::testing::webhooks::signed_plivo_request;
    let url = "https://example.com/plivo";
    let delivered =
        signed_plivo_request("plivo-token", url, &[("MessageUUID", MESSAGE_UUID), ("Status", "delivered")], "5");
    let tampered = delivered.clone().header("x-plivo-signature-v2-nonce", "6");
    adapter_contract::WebhookFixtures {
        verifier: std::sync::Arc::new(plivo::PlivoWebhook::new("plivo-token").unwrap()),
        now: std::time::SystemTime::now(),
        cases: vec![("delivered".into(), delivered, json!({"type": "message.delivered", "provider_id": MESSAGE_UUID}))],
        tampered,
    }
}

#[tokio::test]
async fn plivo_passes_the_adapter_contract() {
    let report = adapter_contract::run(plivo_at, &fixtures()).await;
    assert!(report.passed, "{}", report.failures());
}

#[tokio::test]
async fn t153_documented_request() {
    let server = serve(json_reply(202, &fixture_json("plivo", "message_created.json"))).await;
    Client::builder().adapter(plivo_at(&server.uri())).build().unwrap().send(&contract_message()).await.unwrap();
    let sent = requests(&server).await;
    assert_eq!(sent[0].url.path(), "/v1/Account/MAXXXXXXXXXXXXXXXXXX/Message/");
    assert_eq!(super::header(&sent[0], "authorization"), Some("Basic TUFYWFhYWFhYWFhYWFhYWFhYWFg6cGxpdm8tdG9rZW4="));
    assert_eq!(
        super::json_body(&sent[0]),
        json!({"src": "+15005550006", "dst": TO, "text": "Your order has shipped.", "type": "sms",
               "url": "https://example.com/sms/status", "method": "POST", "message_expiry": 3600})
    );
}

#[test]
fn t154_accepted() {
    let Outcome::Accepted(a) = interpret(202, &[], &fixture("plivo", "message_created.json")) else { panic!() };
    assert_eq!((a.provider_id.as_str(), a.delivery), (MESSAGE_UUID, Delivery::Queued));
}

#[test]
fn t155_and_t156_rejections() {
    let Outcome::Rejected(r) = interpret(400, &[], r#"{"api_id":"a1","error":"invalid dst number"}"#) else { panic!() };
    assert_eq!(r.category, Category::Request);
    assert_eq!(r.details.provider_request_id(), Some("a1"));
    let Outcome::Rejected(r) = interpret(401, &[], r#"{"api_id":"a2","error":"authentication failed"}"#) else {
        panic!()
    };
    assert_eq!(r.category, Category::Auth);
    let Outcome::Rejected(r) =
        interpret(429, &[("retry-after", "3")], r#"{"api_id":"a3","error":"too many requests"}"#)
    else {
        panic!()
    };
    assert_eq!((r.category, r.retry_after), (Category::RateLimited, Some(Duration::from_secs(3))));
}

#[test]
fn t157_unknown_outcomes() {
    assert!(
        matches!(interpret(202, &[], r#"{"message":"…","message_uuid":[]}"#), Outcome::Unknown(u) if u.reason == UnknownReason::MalformedResponse)
    );
    assert!(
        matches!(interpret(500, &[], r#"{"api_id":"a4"}"#), Outcome::Unknown(u) if u.reason == UnknownReason::ServerError)
    );
}

#[test]
fn t158_powerpack_media_without_body() {
    let message =
        Message::new(TO, "").from(Sender::messaging_service("pp-uuid")).media_url("https://example.com/a.png");
    assert_eq!(
        plivo::__private::request_body(&outbound(&message)).to_string(),
        r#"{"dst":"+14155550123","type":"mms","powerpack_uuid":"pp-uuid","media_urls":["https://example.com/a.png"]}"#
    );
}

#[test]
fn t160_partial_with_notes_and_configuration_errors() {
    let adapter = plivo_at("https://api.plivo.com");
    assert_eq!(adapter.info().support.status, SupportStatus::Partial);
    assert!(adapter.info().support.notes.iter().any(|n| n.contains("does not document its API error body")));
    assert!(Plivo::builder("", "t").build().unwrap_err().to_string().contains("auth_id"));
    assert!(Plivo::builder("MA1", "").build().unwrap_err().to_string().contains("auth_token"));
}

#[tokio::test]
async fn t161_request_rejections_never_fail_over() {
    let primary = serve(json_reply(400, &json!({"error": "invalid"}))).await;
    let secondary = serve(json_reply(202, &fixture_json("plivo", "message_created.json"))).await;
    let secondary_adapter = Plivo::builder(AUTH_ID, "plivo-token").from("+15005550006").base_url(secondary.uri());
    // Two Plivo accounts need two names.
    let client = Client::builder()
        .adapter(plivo_at(&primary.uri()))
        .adapter(Renamed::new("plivo-backup", secondary_adapter.build().unwrap()))
        .failover(Failover::OnEligibleRejection)
        .build()
        .unwrap();
    let err = client.send(&message()).await.unwrap_err();
    assert_eq!(err.category(), Some(Category::Request));
    assert!(requests(&secondary).await.is_empty());
}

/// An adapter under another name (so two accounts of one provider can share a client).
struct Renamed {
    info: sms_sdk::adapter::AdapterInfo,
    inner: Plivo,
}

impl Renamed {
    fn new(name: &str, inner: Plivo) -> Self {
        let mut info = inner.info().clone();
        info.name = name.into();
        Self { info, inner }
    }
}

impl Adapter for Renamed {
    fn info(&self) -> &sms_sdk::adapter::AdapterInfo {
        &self.info
    }
    async fn send(&self, message: &sms_sdk::OutboundMessage, cx: &sms_sdk::adapter::SendContext) -> Outcome {
        self.inner.send(message, cx).await
    }
}

#[tokio::test]
async fn t097_plivo_cannot_schedule() {
    let server = serve(ResponseTemplate::new(202)).await;
    let client = Client::builder().adapter(plivo_at(&server.uri())).build().unwrap();
    let err = client.send(&message().send_at(time::OffsetDateTime::now_utc())).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Unsupported { .. }));
    assert!(requests(&server).await.is_empty());
}

#[tokio::test]
async fn t177_and_t178_rate_limits_and_bare_429s() {
    let documented = json!({"api_id": "a3", "error": "too many requests"});
    super::assert_documented_rate_limit_fails_over(plivo_at, json_reply(429, &documented)).await;
    let without_api_id = json!({"error": "too many requests"});
    super::assert_bare_429s_are_unknown(plivo_at, vec![json_reply(429, &without_api_id)]).await;
}
