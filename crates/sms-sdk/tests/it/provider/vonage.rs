//! Vonage: request building, application JWTs, response interpretation and the contract.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use sms_sdk::adapter::{Category, Delivery, Outcome, SupportStatus};
use sms_sdk::provider::vonage::{self, Region, Vonage};
use sms_sdk::testing::adapter_contract::{self, ExpectedBody, ExpectedRequest, Fixtures, Reply};
use sms_sdk::{Adapter, Client, ErrorKind, Field, Message, Sender, UnknownReason};
use wiremock::ResponseTemplate;

use super::{fixture, fixture_json, json_reply, outbound, requests, serve};
use crate::message;

const UK_TO: &str = "+447700900000";
const UK_FROM: &str = "+447700900001";
const MESSAGE_UUID: &str = "aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab";

pub(crate) fn vonage_at(base_url: &str) -> Vonage {
    Vonage::basic("key", "secret").from("+15005550006").base_url(base_url).build().unwrap()
}

fn private_key() -> String {
    fixture("vonage", "test_application_key.pem")
}

fn interpret(status: u16, headers: &[(&str, &str)], body: &str) -> Outcome {
    super::interpret_with(vonage::__private::interpret, status, headers, body)
}

fn uk_message() -> Message {
    Message::new(UK_TO, "Your order has shipped.").from(UK_FROM).validity_period_secs(3600)
}

fn fixtures() -> Fixtures {
    let error = |name: &str| fixture_json("vonage", name);
    Fixtures {
        message: outbound(&uk_message()),
        request: ExpectedRequest {
            path: "/v1/messages".into(),
            headers: vec![
                ("authorization".into(), "Basic a2V5OnNlY3JldA==".into()),
                ("content-type".into(), "application/json".into()),
                ("accept".into(), "application/json".into()),
            ],
            body: ExpectedBody::Json(json!({
                "message_type": "text", "channel": "sms", "to": "447700900000", "from": "447700900001",
                "text": "Your order has shipped.", "ttl": 3600
            })),
        },
        accepted: (
            Reply::raw(202, "application/json", fixture("vonage", "message_accepted.json")),
            MESSAGE_UUID.into(),
            Delivery::Queued,
        ),
        permanent_rejection: (Reply::json(422, &error("error_1430.json")), Category::Recipient),
        eligible_rejection: (Reply::json(402, &error("error_low_balance.json")), Category::Account),
        rate_limited: (
            Reply::json(429, &error("error_throttled.json")).header("retry-after", "1"),
            Some(Duration::from_secs(1)),
        ),
        malformed_success: Reply::json(202, &json!({"workflow_id": "w1"})),
        server_error: Reply::json(500, &error("error_500.json")),
        webhooks: Some(webhook_fixtures()),
    }
}

fn webhook_fixtures() -> adapter_contract::WebhookFixtures {
    use sms_sdk::testing::webhooks::{SignedRequest, signed_vonage_request};
    let body = json!({"message_uuid": MESSAGE_UUID, "to": "447700900000", "status": "delivered"}).to_string();
    let delivered =
        signed_vonage_request("vonage-signature-secret", "https://example.com/vonage", &body, 1_700_000_000, "j1");
    let submitted = json!({"message_uuid": MESSAGE_UUID, "to": "447700900000", "status": "submitted"}).to_string();
    let tampered = SignedRequest { body: submitted.into_bytes(), ..delivered.clone() };
    adapter_contract::WebhookFixtures {
        verifier: std::sync::Arc::new(vonage::VonageWebhook::new("vonage-signature-secret").unwrap()),
        now: std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        cases: vec![("delivered".into(), delivered, json!({"type": "message.delivered", "to": "+447700900000"}))],
        tampered,
    }
}

#[tokio::test]
async fn vonage_passes_the_adapter_contract_with_basic_auth_and_an_application() {
    let report = adapter_contract::run(vonage_at, &fixtures()).await;
    assert!(report.passed, "{}", report.failures());
    let mut jwt_fixtures = fixtures();
    jwt_fixtures.request.headers.retain(|(name, _)| name != "authorization");
    let application =
        |base: &str| Vonage::application("app-123", private_key()).from("+15005550006").base_url(base).build().unwrap();
    let report = adapter_contract::run(application, &jwt_fixtures).await;
    assert!(report.passed, "{}", report.failures());
}

#[tokio::test]
async fn t162_documented_request() {
    let server = serve(json_reply(202, &fixture_json("vonage", "message_accepted.json"))).await;
    Client::builder().adapter(vonage_at(&server.uri())).build().unwrap().send(&uk_message()).await.unwrap();
    let sent = requests(&server).await;
    assert_eq!(sent[0].url.path(), "/v1/messages");
    assert_eq!(super::header(&sent[0], "authorization"), Some("Basic a2V5OnNlY3JldA=="));
    assert_eq!(
        super::text_body(&sent[0]),
        r#"{"message_type":"text","channel":"sms","to":"447700900000","from":"447700900001","text":"Your order has shipped.","ttl":3600}"#
    );
}

#[test]
fn t163_accepted() {
    let Outcome::Accepted(a) = interpret(202, &[], &json!({"message_uuid": MESSAGE_UUID}).to_string()) else {
        panic!()
    };
    assert_eq!((a.provider_id.as_str(), a.delivery), (MESSAGE_UUID, Delivery::Queued));
}

#[test]
fn t164_invalid_recipient() {
    let Outcome::Rejected(r) = interpret(422, &[], &fixture("vonage", "error_1430.json")) else { panic!() };
    assert_eq!((r.category, r.details.provider_code()), (Category::Recipient, Some("1430")));
}

#[test]
fn t165_low_balance_is_account_by_status() {
    let Outcome::Rejected(r) = interpret(402, &[], &fixture("vonage", "error_low_balance.json")) else { panic!() };
    assert_eq!((r.category, r.details.provider_code()), (Category::Account, None));
}

#[test]
fn t166_throttled_is_a_rate_limit() {
    let Outcome::Rejected(r) = interpret(429, &[("retry-after", "1")], &fixture("vonage", "error_throttled.json"))
    else {
        panic!()
    };
    assert_eq!((r.category, r.retry_after), (Category::RateLimited, Some(Duration::from_secs(1))));
}

#[test]
fn t167_unknown_outcomes() {
    assert!(
        matches!(interpret(202, &[], r#"{"workflow_id":"w1"}"#), Outcome::Unknown(u) if u.reason == UnknownReason::MalformedResponse)
    );
    assert!(
        matches!(interpret(500, &[], r#"{"title":"Internal Error"}"#), Outcome::Unknown(u) if u.reason == UnknownReason::ServerError)
    );
}

/// Decodes one base64url JWT part.
fn part(jwt: &str, index: usize) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(jwt.split('.').nth(index).unwrap()).unwrap()
}

async fn bearer_for(pem: &str) -> String {
    let server = serve(json_reply(202, &json!({"message_uuid": MESSAGE_UUID}))).await;
    let adapter = Vonage::application("app-123", pem).from("+15005550006").base_url(server.uri()).build().unwrap();
    Client::builder().adapter(adapter).build().unwrap().send(&message()).await.unwrap();
    let sent = requests(&server).await;
    super::header(&sent[0], "authorization").unwrap().strip_prefix("Bearer ").unwrap().to_owned()
}

fn assert_valid_jwt(jwt: &str) {
    let header: Value = serde_json::from_slice(&part(jwt, 0)).unwrap();
    assert_eq!(String::from_utf8(part(jwt, 0)).unwrap(), r#"{"alg":"RS256","typ":"JWT"}"#);
    assert_eq!(header["alg"], "RS256");
    let claims: Value = serde_json::from_slice(&part(jwt, 1)).unwrap();
    assert_eq!(claims["application_id"], "app-123");
    assert!(claims["iat"].is_u64() && claims["jti"].is_string());
    assert_eq!(claims["exp"].as_u64().unwrap(), claims["iat"].as_u64().unwrap() + 900);
    // The signature verifies with the key pair's public key.
    let pem = private_key();
    let b64: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
    let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).unwrap();
    let public = ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        ring::signature::KeyPair::public_key(&pair).as_ref().to_vec(),
    );
    let signed = jwt.rsplit_once('.').unwrap().0;
    public.verify(signed.as_bytes(), &part(jwt, 2)).expect("the JWT signature verifies");
}

#[tokio::test]
async fn t168_application_jwt() {
    assert_valid_jwt(&bearer_for(&private_key()).await);
}

#[tokio::test]
async fn t169_pem_with_literal_newlines() {
    let escaped = private_key().trim_end().replace('\n', "\\n");
    assert_valid_jwt(&bearer_for(&escaped).await);
}

/// The reference rejects every send (`auth`, no request) when the key cannot be imported; we
/// refuse it when the adapter is built (docs/behavior.md, "Secrets and provider text": an unparsable
/// Vonage private key is a configuration error), so it never triggers failover.
#[test]
fn t170_a_key_that_is_not_rsa_is_refused_at_build() {
    let pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----";
    let err = Vonage::application("app-123", pem).from("+15005550006").build().unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Configuration);
    assert!(err.to_string().contains("could not be imported"), "{err}");
    assert!(err.to_string().contains("private_key"), "{err}");
}

#[test]
fn t171_capabilities_by_auth_mode() {
    let application = Vonage::application("app-123", private_key()).build().unwrap();
    let basic = Vonage::basic("key", "secret").build().unwrap();
    assert_eq!(application.info().capabilities, vonage::__private::jwt_capabilities());
    assert_eq!(basic.info().capabilities, vonage::__private::basic_capabilities());
    assert!(!basic.info().capabilities.delivery_receipts);
    assert!(application.info().capabilities.webhook_url_override);
    assert_eq!(basic.info().support.status, SupportStatus::Partial);
    assert!(!basic.info().support.notes.is_empty());
}

#[test]
fn t172_configuration_errors() {
    for err in [
        Vonage::basic("", "secret").build().unwrap_err(),
        Vonage::application("", private_key()).build().unwrap_err(),
        Vonage::application("app-123", "").build().unwrap_err(),
    ] {
        assert_eq!(err.kind(), ErrorKind::Configuration);
    }
}

#[test]
fn t173_alphanumeric_sender_and_webhook() {
    let message = Message::new(UK_TO, "hi").from(Sender::sender_id("Acme")).webhook_url("https://example.com/status");
    assert_eq!(
        vonage::__private::request_body(&outbound(&message)).to_string(),
        r#"{"message_type":"text","channel":"sms","to":"447700900000","from":"Acme","text":"hi","webhook_url":"https://example.com/status"}"#
    );
}

#[tokio::test]
async fn t174_region_hosts() {
    assert_eq!(Region::Eu.base_url(), "https://api-eu.nexmo.com");
    let adapter = Vonage::basic("key", "secret").region(Region::Eu).build().unwrap();
    assert!(format!("{adapter:?}").contains("https://api-eu.nexmo.com"));
}

#[tokio::test]
async fn t176_numeric_title_is_the_code() {
    let server = serve(json_reply(422, &json!({"title": "1420", "detail": "Invalid sender"}))).await;
    let err = Client::builder().adapter(vonage_at(&server.uri())).build().unwrap().send(&message()).await.unwrap_err();
    assert_eq!(err.category(), Some(Category::Sender));
    assert_eq!(err.provider_error().and_then(|p| p.provider_code()), Some("1420"));
}

#[tokio::test]
async fn t096_unsupported_fields_make_no_request() {
    let server = serve(ResponseTemplate::new(202)).await;
    let client = Client::builder().adapter(vonage_at(&server.uri())).build().unwrap();
    let cases = [
        (message().media_url("https://example.com/a.png"), Field::MediaUrls),
        (message().send_at(time::OffsetDateTime::now_utc()), Field::SendAt),
        (message().webhook_url("https://example.com/status"), Field::WebhookUrl),
        (message().from(Sender::short_code("12345")), Field::From),
        (message().from(Sender::messaging_service("pool")), Field::From),
    ];
    for (bad, field) in cases {
        let err = client.send(&bad).await.unwrap_err();
        assert_eq!((err.kind(), err.provider_name()), (ErrorKind::Unsupported { field }, Some("vonage")));
    }
    assert_eq!(
        client.send(&Message::new(crate::TO, "")).await.unwrap_err().kind(),
        ErrorKind::InvalidMessage { field: Field::Body }
    );
    assert!(requests(&server).await.is_empty());
}

#[tokio::test]
async fn t177_and_t178_rate_limits_and_bare_429s() {
    let documented = json!({"type": "https://developer.vonage.com/api-errors/messages#1000", "title": "1000", "detail": "Throttled"});
    super::assert_documented_rate_limit_fails_over(vonage_at, json_reply(429, &documented)).await;
    let lookalike = json!({"type": "https://developer.vonage.com/api-errors/messages#1020", "title": "Invalid params"});
    super::assert_bare_429s_are_unknown(vonage_at, vec![json_reply(429, &lookalike)]).await;
}
