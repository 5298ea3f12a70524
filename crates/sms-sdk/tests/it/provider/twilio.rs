//! Twilio: request building, response interpretation and the contract, over real HTTP.

use std::time::Duration;

use serde_json::json;
use sms_sdk::adapter::{Category, Delivery, Outcome, SendContext};
use sms_sdk::provider::twilio::{self, Twilio};
use sms_sdk::testing::adapter_contract::{self, ExpectedBody, ExpectedRequest, Fixtures, Reply};
use sms_sdk::{Client, ErrorKind, Field, Message, RetryPolicy, Sender, UnknownReason};
use wiremock::ResponseTemplate;

use super::{fixture, fixture_json, json_reply, outbound, requests, serve, text_body};
use crate::{TO, message};

pub(crate) const SID: &str = "AC0123456789abcdef0123456789abcdef";
pub(crate) const MESSAGE_SID: &str = "SM0123456789abcdef0123456789abcdef";
pub(crate) const SERVICE_SID: &str = "MG0123456789abcdef0123456789abcdef";
const MESSAGES_PATH: &str = "/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Messages.json";

pub(crate) fn twilio_at(base_url: &str) -> Twilio {
    Twilio::builder(SID, "test-token").from("+15005550006").base_url(base_url).build().unwrap()
}

fn client_at(base_url: &str) -> Client {
    Client::builder().adapter(twilio_at(base_url)).retry(RetryPolicy::none()).build().unwrap()
}

fn created() -> ResponseTemplate {
    json_reply(201, &fixture_json("twilio", "message_created.json"))
}

fn contract_message() -> Message {
    message().webhook_url("https://example.com/sms/status").validity_period_secs(600)
}

fn fixtures() -> Fixtures {
    let error = |name: &str| fixture_json("twilio", name);
    Fixtures {
        message: outbound(&contract_message()),
        request: ExpectedRequest {
            path: MESSAGES_PATH.into(),
            headers: vec![
                ("authorization".into(), "Basic QUMwMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc4OWFiY2RlZjp0ZXN0LXRva2Vu".into()),
                ("content-type".into(), "application/x-www-form-urlencoded".into()),
                ("accept".into(), "application/json".into()),
            ],
            body: ExpectedBody::Form(
                [
                    ("To", TO),
                    ("From", "+15005550006"),
                    ("Body", "Your order has shipped."),
                    ("StatusCallback", "https://example.com/sms/status"),
                    ("ValidityPeriod", "600"),
                ]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .to_vec(),
            ),
        },
        accepted: (
            Reply::raw(201, "application/json", fixture("twilio", "message_created.json")),
            MESSAGE_SID.into(),
            Delivery::Queued,
        ),
        permanent_rejection: (Reply::json(400, &error("error_21211.json")), Category::Recipient),
        eligible_rejection: (Reply::json(400, &error("error_21606.json")), Category::Sender),
        rate_limited: (
            Reply::json(429, &error("error_20429.json")).header("retry-after", "2"),
            Some(Duration::from_secs(2)),
        ),
        malformed_success: Reply::json(201, &json!({"status": "queued"})),
        server_error: Reply::json(503, &error("error_503.json")),
        webhooks: Some(webhook_fixtures()),
    }
}

fn webhook_fixtures() -> adapter_contract::WebhookFixtures {
    use sms_sdk::testing::webhooks::{SignedRequest, form_body, signed_twilio_request};
    let url = "https://example.com/twilio";
    let delivered = signed_twilio_request(
        "test-token",
        url,
        &[("MessageSid", MESSAGE_SID), ("MessageStatus", "delivered"), ("SmsStatus", "delivered")],
    );
    let stop = signed_twilio_request(
        "test-token",
        url,
        &[
            ("MessageSid", MESSAGE_SID),
            ("From", "+14155550123"),
            ("To", "+15005550006"),
            ("Body", "STOP"),
            ("OptOutType", "STOP"),
        ],
    );
    let sent = signed_twilio_request("test-token", url, &[("MessageSid", MESSAGE_SID), ("MessageStatus", "sent")]);
    let tampered = SignedRequest {
        body: form_body(&[("MessageSid", MESSAGE_SID), ("MessageStatus", "delivered")]).into_bytes(),
        ..sent
    };
    adapter_contract::WebhookFixtures {
        verifier: std::sync::Arc::new(twilio::TwilioWebhook::new("test-token").unwrap()),
        now: std::time::SystemTime::now(),
        cases: vec![
            ("delivered".into(), delivered, json!({"type": "message.delivered", "provider_id": MESSAGE_SID})),
            ("opt-out".into(), stop, json!({"type": "recipient.opted_out", "source": "provider", "keyword": "STOP"})),
        ],
        tampered,
    }
}

#[tokio::test]
async fn twilio_passes_the_adapter_contract() {
    let report = adapter_contract::run(twilio_at, &fixtures()).await;
    assert!(report.passed, "{}", report.failures());
    assert_eq!(report.subject, "twilio");
}

#[tokio::test]
async fn t126_documented_request() {
    let server = serve(created()).await;
    let receipt = client_at(&server.uri()).send(&contract_message()).await.unwrap();
    assert_eq!(receipt.provider_id, MESSAGE_SID);
    let sent = requests(&server).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].url.path(), MESSAGES_PATH);
    assert_eq!(
        super::header(&sent[0], "authorization"),
        Some("Basic QUMwMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc4OWFiY2RlZjp0ZXN0LXRva2Vu")
    );
    assert_eq!(super::header(&sent[0], "content-type"), Some("application/x-www-form-urlencoded"));
    assert_eq!(
        text_body(&sent[0]),
        "To=%2B14155550123&From=%2B15005550006&Body=Your+order+has+shipped.&StatusCallback=https%3A%2F%2Fexample.com%2Fsms%2Fstatus&ValidityPeriod=600"
    );
}

fn interpret(status: u16, headers: &[(&str, &str)], body: &str) -> Outcome {
    super::interpret_with(twilio::__private::interpret, status, headers, body)
}

#[test]
fn t127_accepted_with_unknown_fields() {
    let body =
        json!({"sid": MESSAGE_SID, "status": "queued", "api_version": "2010-04-01", "unknown_future_field": true});
    let Outcome::Accepted(accepted) = interpret(201, &[], &body.to_string()) else { panic!() };
    assert_eq!((accepted.provider_id.as_str(), accepted.delivery), (MESSAGE_SID, Delivery::Queued));
}

#[test]
fn t128_and_t129_and_t130_rejections() {
    let Outcome::Rejected(r) = interpret(400, &[], &fixture("twilio", "error_21211.json")) else { panic!() };
    assert_eq!(
        (r.category, r.category.allows_failover(), r.details.provider()),
        (Category::Recipient, false, "twilio")
    );
    let Outcome::Rejected(r) = interpret(400, &[], &fixture("twilio", "error_21606.json")) else { panic!() };
    assert_eq!((r.category, r.category.allows_failover()), (Category::Sender, true));
    let Outcome::Rejected(r) = interpret(429, &[("retry-after", "2")], &fixture("twilio", "error_20429.json")) else {
        panic!()
    };
    assert_eq!((r.category, r.retry_after), (Category::RateLimited, Some(Duration::from_secs(2))));
}

#[tokio::test]
async fn t131_success_without_a_valid_sid_is_unknown() {
    assert!(matches!(interpret(201, &[], r#"{"status":"queued"}"#), Outcome::Unknown(_)));
    let server = serve(json_reply(201, &json!({"sid": "not-a-sid"}))).await;
    let err = client_at(&server.uri()).send(&message()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::MalformedResponse));
}

#[tokio::test]
async fn t132_unknown_outcomes() {
    assert!(
        matches!(interpret(503, &[], &fixture("twilio", "error_503.json")), Outcome::Unknown(u) if u.reason == UnknownReason::ServerError)
    );
    assert!(
        matches!(interpret(200, &[], "<html>ok</html>"), Outcome::Unknown(u) if u.reason == UnknownReason::MalformedResponse)
    );
    // A network failure and a held request, over real sockets. The reference's "network" case is
    // a connection lost after the request; a refused connection never sent anything, so it is an
    // unreachable rejection (docs/behavior.md, "Never left the machine").
    let cx = SendContext::new(1, None, Duration::from_secs(5));
    let adapter = twilio_at(&super::closing_server().await);
    let outcome = sms_sdk::Adapter::send(&adapter, &outbound(&message()), &cx).await;
    assert!(matches!(&outcome, Outcome::Unknown(u) if u.reason == UnknownReason::Network), "{outcome:?}");
    let port = super::closed_port().await;
    let adapter = twilio_at(&format!("http://127.0.0.1:{port}"));
    let outcome = sms_sdk::Adapter::send(&adapter, &outbound(&message()), &cx).await;
    assert!(matches!(&outcome, Outcome::Rejected(r) if r.category == sms_sdk::Category::Unreachable), "{outcome:?}");
    let server = serve(created().set_delay(Duration::from_secs(30))).await;
    let client =
        Client::builder().adapter(twilio_at(&server.uri())).timeout(Duration::from_millis(200)).build().unwrap();
    assert_eq!(client.send(&message()).await.unwrap_err().kind(), ErrorKind::Unknown(UnknownReason::Timeout));
}

#[test]
fn t133_messaging_service_media_and_schedule() {
    let at =
        time::OffsetDateTime::parse("2030-01-01T10:00:00Z", &time::format_description::well_known::Rfc3339).unwrap();
    let message = Message::new(TO, "hi")
        .from(Sender::messaging_service(SERVICE_SID))
        .media_url("https://example.com/a.png")
        .media_url("https://example.com/b.png")
        .send_at(at);
    assert_eq!(
        twilio::__private::form_body(&outbound(&message)),
        "To=%2B14155550123&MessagingServiceSid=MG0123456789abcdef0123456789abcdef&Body=hi&MediaUrl=https%3A%2F%2Fexample.com%2Fa.png&MediaUrl=https%3A%2F%2Fexample.com%2Fb.png&SendAt=2030-01-01T10%3A00%3A00.000Z&ScheduleType=fixed"
    );
}

#[test]
fn t134_short_code_media_without_body() {
    let message = Message::new(TO, "").from(Sender::short_code("12345")).media_url("https://example.com/a.png");
    let form = twilio::__private::form_body(&outbound(&message));
    assert_eq!(form, "To=%2B14155550123&From=12345&MediaUrl=https%3A%2F%2Fexample.com%2Fa.png");
}

#[tokio::test]
async fn t135_api_key_auth() {
    let server = serve(created()).await;
    let adapter =
        Twilio::with_api_key(SID, "SKkey", "secret").from("+15005550006").base_url(server.uri()).build().unwrap();
    Client::builder().adapter(adapter).build().unwrap().send(&message()).await.unwrap();
    assert_eq!(super::header(&requests(&server).await[0], "authorization"), Some("Basic U0trZXk6c2VjcmV0"));
}

#[test]
fn t136_configuration_errors() {
    let err = Twilio::builder("AC123", "token").build().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert!(err.to_string().contains("account_sid"));
    let err = Twilio::builder(SID, "").build().unwrap_err();
    assert!(err.to_string().contains("auth_token"));
    assert!(Twilio::with_api_key(SID, "", "s").build().is_err());
    assert!(Twilio::with_api_key(SID, "SK1", "").build().is_err());
    assert!(Twilio::builder(SID, "t").base_url("ftp://x").build().is_err());
}

#[tokio::test]
async fn t139_errors_through_the_client() {
    let cases: Vec<(ResponseTemplate, ErrorKind)> = vec![
        (json_reply(401, &json!({"code": 20003})), ErrorKind::Rejected(Category::Auth)),
        (json_reply(429, &json!({"code": 20429})), ErrorKind::Rejected(Category::RateLimited)),
        (json_reply(400, &json!({"code": 21610})), ErrorKind::Rejected(Category::Compliance)),
        (ResponseTemplate::new(500), ErrorKind::Unknown(UnknownReason::ServerError)),
        (
            ResponseTemplate::new(502).set_body_raw(b"<html>Bad gateway</html>".to_vec(), "text/html"),
            ErrorKind::Unknown(UnknownReason::ServerError),
        ),
        (ResponseTemplate::new(302), ErrorKind::Unknown(UnknownReason::UnexpectedStatus)),
    ];
    for (reply, kind) in cases {
        let server = serve(reply).await;
        let err = client_at(&server.uri()).send(&message()).await.unwrap_err();
        assert_eq!(err.kind(), kind);
        assert_eq!(requests(&server).await.len(), 1);
    }
}

#[tokio::test]
async fn t140_provider_details_are_redacted_and_carry_the_request_id() {
    let body = json!({"code": 21211, "message": "The 'To' number +14155550123 is not a valid phone number."});
    let server = serve(json_reply(400, &body).insert_header("twilio-request-id", "RQ123")).await;
    let err = client_at(&server.uri()).send(&message()).await.unwrap_err();
    let details = serde_json::to_value(err.provider_error().unwrap()).unwrap();
    assert_eq!(
        details,
        json!({"provider": "twilio", "http_status": 400, "code": "21211", "request_id": "RQ123",
               "message": "The 'To' number +1********23 is not a valid phone number."})
    );
}

#[tokio::test]
async fn t141_contract_report_names_the_failing_check() {
    let mut wrong = fixtures();
    wrong.accepted.1 = "SMwrong".into();
    let report = adapter_contract::run(twilio_at, &wrong).await;
    assert!(!report.passed);
    let first = report.results.iter().find(|r| !r.passed).unwrap();
    assert!(first.error.as_deref().unwrap().contains("provider_id"), "{first:?}");
}

#[tokio::test]
async fn t093_bad_input_makes_no_request() {
    let server = serve(created()).await;
    let client = client_at(&server.uri());
    let cases = [
        (Message::new("+0123", "Hi"), ErrorKind::InvalidRecipient),
        (Message::new("+1 415 555 0123", "Hi"), ErrorKind::InvalidRecipient),
        (Message::new(TO, ""), ErrorKind::InvalidMessage { field: Field::Body }),
        (message().media_url("ftp://x"), ErrorKind::InvalidMessage { field: Field::MediaUrls }),
        (message().validity_period_secs(-1), ErrorKind::InvalidMessage { field: Field::ValidityPeriodSecs }),
        (message().webhook_url("/status"), ErrorKind::InvalidMessage { field: Field::WebhookUrl }),
        (message().idempotency_key(""), ErrorKind::InvalidMessage { field: Field::IdempotencyKey }),
        (message().from("5550006"), ErrorKind::InvalidSender),
    ];
    for (bad, kind) in cases {
        assert_eq!(client.send(&bad).await.unwrap_err().kind(), kind, "{bad:?}");
    }
    // `send_at` from text that is not a date is the same invalid-message error.
    assert_eq!(
        Message::parse_send_at("not a date").unwrap_err().kind(),
        ErrorKind::InvalidMessage { field: Field::SendAt }
    );
    assert!(requests(&server).await.is_empty());
}

#[tokio::test]
async fn t097_and_t099_twilio_limits() {
    let server = serve(created()).await;
    let client = client_at(&server.uri());
    let err = client.send(&message().send_at(time::OffsetDateTime::now_utc())).await.unwrap_err();
    assert_eq!((err.kind(), err.provider_name()), (ErrorKind::Unsupported { field: Field::SendAt }, Some("twilio")));
    for (bad, kind) in [
        (message().validity_period_secs(36_001), ErrorKind::InvalidMessage { field: Field::ValidityPeriodSecs }),
        (Message::new(TO, "a".repeat(1601)), ErrorKind::InvalidMessage { field: Field::Body }),
        (message().from(Sender::messaging_service("MG123")), ErrorKind::InvalidSender),
    ] {
        assert_eq!(client.send(&bad).await.unwrap_err().kind(), kind);
    }
    let eleven = (0..11).fold(message(), |m, i| m.media_url(format!("https://example.com/{i}.png")));
    assert_eq!(client.send(&eleven).await.unwrap_err().kind(), ErrorKind::InvalidMessage { field: Field::MediaUrls });
    assert!(requests(&server).await.is_empty());
    // 1600 UTF-16 units is still fine.
    client.send(&Message::new(TO, "a".repeat(1600))).await.unwrap();
}

#[tokio::test]
async fn t177_documented_rate_limit_retries_then_fails_over() {
    let documented = json!({"code": 20429, "message": "Too Many Requests", "status": 429});
    super::assert_documented_rate_limit_fails_over(twilio_at, json_reply(429, &documented)).await;
}

#[tokio::test]
async fn t178_bare_429s_are_unknown() {
    let lookalike = json!({"code": 21211, "message": "Invalid 'To'", "status": 429});
    super::assert_bare_429s_are_unknown(twilio_at, vec![json_reply(429, &lookalike)]).await;
}

#[tokio::test]
async fn t125_options_are_part_of_the_fingerprint() {
    let server = serve(created()).await;
    let client = Client::builder()
        .adapter(twilio_at(&server.uri()))
        .idempotency(sms_sdk::store::MemoryStore::new())
        .build()
        .unwrap();
    let keyed = |smart: bool| message().idempotency_key("k1").provider_option("twilio", json!({"smartEncoded": smart}));
    assert!(!client.send(&keyed(true)).await.unwrap().replayed);
    assert!(client.send(&keyed(true)).await.unwrap().replayed);
    assert_eq!(client.send(&keyed(false)).await.unwrap_err().code(), "idempotency_conflict");
    assert_eq!(requests(&server).await.len(), 1);
}
