//! Telnyx: request building, response interpretation and the contract, over real HTTP.

use std::time::Duration;

use serde_json::json;
use sms_sdk::adapter::{Category, Delivery, Outcome};
use sms_sdk::provider::telnyx::{self, Telnyx};
use sms_sdk::testing::adapter_contract::{self, ExpectedBody, ExpectedRequest, Fixtures, Reply};
use sms_sdk::{Client, ErrorKind, Message, Sender, UnknownReason};
use wiremock::ResponseTemplate;

use super::{fixture, fixture_json, json_body, json_reply, outbound, requests, serve};
use crate::{TO, message};

const MESSAGE_ID: &str = "40385f64-5717-4562-b3fc-2c963f66afa6";

pub(crate) fn telnyx_at(base_url: &str) -> Telnyx {
    Telnyx::builder("KEY_test").from("+15005550006").base_url(base_url).build().unwrap()
}

fn interpret(status: u16, headers: &[(&str, &str)], body: &str) -> Outcome {
    super::interpret_with(telnyx::__private::interpret, status, headers, body)
}

fn contract_message() -> Message {
    message().webhook_url("https://example.com/sms/status")
}

fn fixtures() -> Fixtures {
    let error = |name: &str| fixture_json("telnyx", name);
    Fixtures {
        message: outbound(&contract_message()),
        request: ExpectedRequest {
            path: "/v2/messages".into(),
            headers: vec![
                ("authorization".into(), "Bearer KEY_test".into()),
                ("content-type".into(), "application/json".into()),
                ("accept".into(), "application/json".into()),
            ],
            body: ExpectedBody::Json(json!({
                "to": TO, "from": "+15005550006", "text": "Your order has shipped.",
                "webhook_url": "https://example.com/sms/status"
            })),
        },
        accepted: (
            Reply::raw(200, "application/json", fixture("telnyx", "message_created.json")),
            MESSAGE_ID.into(),
            Delivery::Queued,
        ),
        permanent_rejection: (Reply::json(400, &error("error_40300.json")), Category::Compliance),
        eligible_rejection: (Reply::json(400, &error("error_40305.json")), Category::Sender),
        rate_limited: (
            Reply::json(429, &error("error_10011.json")).header("retry-after", "1"),
            Some(Duration::from_secs(1)),
        ),
        malformed_success: Reply::json(200, &json!({"data": {"record_type": "message"}})),
        server_error: Reply::json(500, &error("error_10007.json")),
        webhooks: Some(webhook_fixtures()),
    }
}

fn webhook_fixtures() -> adapter_contract::WebhookFixtures {
    use sms_sdk::testing::webhooks::{SignedRequest, TelnyxKeyPair, signed_telnyx_request};
    let key = TelnyxKeyPair::from_seed([7; 32]);
    let body = r#"{"data":{"event_type":"message.finalized","id":"evt-1","payload":{"id":"m1","to":[{"phone_number":"+14155550123","status":"delivered"}]}}}"#;
    let delivered = signed_telnyx_request(&key, "https://example.com/telnyx", body, 1_700_000_000);
    let tampered =
        SignedRequest { body: body.replace("delivered", "delivery_failed").into_bytes(), ..delivered.clone() };
    adapter_contract::WebhookFixtures {
        verifier: std::sync::Arc::new(telnyx::TelnyxWebhook::new(&key.public_key).unwrap()),
        now: std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        cases: vec![(
            "delivered".into(),
            delivered,
            json!({"type": "message.delivered", "dedupe_key": "telnyx:evt-1"}),
        )],
        tampered,
    }
}

#[tokio::test]
async fn telnyx_passes_the_adapter_contract() {
    let report = adapter_contract::run(telnyx_at, &fixtures()).await;
    assert!(report.passed, "{}", report.failures());
}

#[tokio::test]
async fn t142_documented_request() {
    let server = serve(json_reply(200, &fixture_json("telnyx", "message_created.json"))).await;
    let client = Client::builder().adapter(telnyx_at(&server.uri())).build().unwrap();
    client.send(&contract_message()).await.unwrap();
    let sent = requests(&server).await;
    assert_eq!(sent[0].url.path(), "/v2/messages");
    assert_eq!(super::header(&sent[0], "authorization"), Some("Bearer KEY_test"));
    assert_eq!(super::header(&sent[0], "content-type"), Some("application/json"));
    assert_eq!(
        super::text_body(&sent[0]),
        r#"{"to":"+14155550123","from":"+15005550006","text":"Your order has shipped.","webhook_url":"https://example.com/sms/status"}"#
    );
}

#[test]
fn t143_accepted() {
    let body = json!({"data": {"id": MESSAGE_ID, "record_type": "message", "direction": "outbound",
        "to": [{"phone_number": TO, "status": "queued", "carrier": "T-Mobile", "line_type": "Wireless"}],
        "from": {"phone_number": "+15005550006"}, "parts": 1, "future_field": {"nested": true}}});
    let Outcome::Accepted(accepted) = interpret(200, &[], &body.to_string()) else { panic!() };
    assert_eq!((accepted.provider_id.as_str(), accepted.delivery), (MESSAGE_ID, Delivery::Queued));
}

#[test]
fn t144_and_t145_and_t146_rejections() {
    let body = json!({"errors": [{"code": "40300", "title": "Blocked due to STOP message",
        "detail": "Messages cannot be sent due to an existing block rule."}]});
    let Outcome::Rejected(r) = interpret(400, &[], &body.to_string()) else { panic!() };
    assert_eq!(r.category, Category::Compliance);
    assert_eq!(r.details.text(), Some("Messages cannot be sent due to an existing block rule."));
    let body = json!({"errors": [{"code": "40305", "title": "Invalid 'from' address"}]});
    let Outcome::Rejected(r) = interpret(400, &[], &body.to_string()) else { panic!() };
    assert_eq!((r.category, r.category.allows_failover()), (Category::Sender, true));
    assert_eq!(r.details.text(), Some("Invalid 'from' address"));
    let body = json!({"errors": [{"code": "10011", "title": "Too many requests"}]});
    let Outcome::Rejected(r) = interpret(429, &[("retry-after", "1")], &body.to_string()) else { panic!() };
    assert_eq!((r.category, r.retry_after), (Category::RateLimited, Some(Duration::from_secs(1))));
}

#[test]
fn t147_unknown_outcomes() {
    assert!(matches!(interpret(200, &[], r#"{"data":{"record_type":"message"}}"#), Outcome::Unknown(_)));
    assert!(
        matches!(interpret(500, &[], r#"{"errors":[{"code":"10007"}]}"#), Outcome::Unknown(u) if u.reason == UnknownReason::ServerError)
    );
}

#[test]
fn t148_messaging_profile_sender() {
    let message = Message::new(TO, "hi").from(Sender::messaging_service("profile-1"));
    let body = telnyx::__private::request_body(&outbound(&message), None);
    assert_eq!(body.to_string(), r#"{"to":"+14155550123","messaging_profile_id":"profile-1","text":"hi"}"#);
}

#[test]
fn t149_alphanumeric_media_schedule_and_profile() {
    let at =
        time::OffsetDateTime::parse("2030-01-01T00:00:00Z", &time::format_description::well_known::Rfc3339).unwrap();
    let message =
        Message::new(TO, "").from(Sender::sender_id("Acme")).media_url("https://example.com/a.png").send_at(at);
    let body = telnyx::__private::request_body(&outbound(&message), Some("profile-2"));
    assert_eq!(
        body.to_string(),
        r#"{"to":"+14155550123","from":"Acme","messaging_profile_id":"profile-2","media_urls":["https://example.com/a.png"],"type":"MMS","send_at":"2030-01-01T00:00:00.000Z"}"#
    );
}

#[tokio::test]
async fn t150_configuration_and_alphanumeric_with_a_profile() {
    let err = Telnyx::builder("").build().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert!(err.to_string().contains("api_key"));
    let server = serve(json_reply(200, &json!({"data": {"id": "m1", "to": [{"status": "queued"}]}}))).await;
    let adapter = Telnyx::builder("KEY_test").messaging_profile_id("p").base_url(server.uri()).build().unwrap();
    let client = Client::builder().adapter(adapter).build().unwrap();
    let receipt = client.send(&message().from(Sender::sender_id("Acme"))).await.unwrap();
    assert_eq!(receipt.provider_id, "m1");
    assert_eq!(json_body(&requests(&server).await[0])["messaging_profile_id"], "p");
}

#[tokio::test]
async fn t094_no_sender_at_all() {
    let server = serve(ResponseTemplate::new(200)).await;
    let adapter = Telnyx::builder("KEY_test").base_url(server.uri()).build().unwrap();
    let err = Client::builder().adapter(adapter).build().unwrap().send(&message()).await.unwrap_err();
    assert_eq!(
        (err.kind(), err.provider_name(), err.is_retry_safe()),
        (ErrorKind::InvalidSender, Some("telnyx"), true)
    );
    assert!(requests(&server).await.is_empty());
}

#[tokio::test]
async fn t097_and_t098_unsupported_validity_and_alphanumeric_without_a_profile() {
    let server = serve(ResponseTemplate::new(200)).await;
    let client = Client::builder().adapter(telnyx_at(&server.uri())).build().unwrap();
    let err = client.send(&message().validity_period_secs(600)).await.unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::Unsupported { .. }));
    let err = client.send(&message().from(Sender::sender_id("Acme"))).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidSender);
    assert!(requests(&server).await.is_empty());
}

#[tokio::test]
async fn t177_and_t178_rate_limits_and_bare_429s() {
    let documented = json!({"errors": [{"code": "10011", "title": "Too many requests"}]});
    super::assert_documented_rate_limit_fails_over(telnyx_at, json_reply(429, &documented)).await;
    let lookalike = json!({"errors": [{"code": "10015", "title": "Bad request"}]});
    super::assert_bare_429s_are_unknown(telnyx_at, vec![json_reply(429, &lookalike)]).await;
}
