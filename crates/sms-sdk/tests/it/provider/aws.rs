//! AWS End User Messaging SMS: the signed `SendTextMessage` request, response interpretation and
//! the adapter contract, over real HTTP, with the service's documented bodies as fixtures.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use sms_sdk::adapter::{Adapter as _, Category, Delivery, Outcome, SendContext};
use sms_sdk::provider::aws::{Aws, AwsCredentials, CredentialSource, sigv4};
use sms_sdk::testing::adapter_contract::{self, ExpectedBody, ExpectedRequest, Fixtures, Reply};
use sms_sdk::{BoxError, BoxFuture, Client, ErrorKind};

use super::{fixture, fixture_json, header, json_body, json_reply, outbound, requests, serve};
use crate::{TO, message};

const MESSAGE_ID: &str = "b5f0c2a4-7d3e-4f1a-9c8b-2e6d4a1f0c93";
const KEY_ID: &str = "AKIDEXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

fn credentials() -> AwsCredentials {
    AwsCredentials::new(KEY_ID, SECRET)
}

pub(crate) fn aws_at(base_url: &str) -> Aws {
    Aws::builder("us-east-1", credentials()).from("+15005550006").base_url(base_url).build().unwrap()
}

fn fixtures() -> Fixtures {
    let error = |name: &str| fixture_json("aws", name);
    Fixtures {
        message: outbound(&message()),
        request: ExpectedRequest {
            path: "/".into(),
            headers: vec![
                ("content-type".into(), "application/x-amz-json-1.0".into()),
                ("x-amz-target".into(), "PinpointSMSVoiceV2.SendTextMessage".into()),
            ],
            body: ExpectedBody::Json(json!({
                "DestinationPhoneNumber": TO, "OriginationIdentity": "+15005550006",
                "MessageBody": "Your order has shipped."
            })),
        },
        accepted: (
            Reply::raw(200, "application/x-amz-json-1.0", fixture("aws", "send_text_message_ok.json")),
            MESSAGE_ID.into(),
            Delivery::Queued,
        ),
        permanent_rejection: (Reply::json(400, &error("error_conflict_opted_out.json")), Category::Compliance),
        eligible_rejection: (Reply::json(400, &error("error_access_denied.json")), Category::Auth),
        rate_limited: (
            Reply::json(400, &error("error_throttling.json")).header("retry-after", "1"),
            Some(Duration::from_secs(1)),
        ),
        malformed_success: Reply::json(200, &json!({"MessageId": ""})),
        server_error: Reply::json(500, &error("error_internal_server.json")),
        webhooks: Some(webhook_fixtures()),
    }
}

/// An SNS notification of a delivery event and of a two-way STOP, signed with the test key.
fn webhook_fixtures() -> adapter_contract::WebhookFixtures {
    use sms_sdk::provider::aws::AwsWebhook;
    use sms_sdk::testing::webhooks::{AWS_SNS_TEST_CERTIFICATE, SignedRequest, SnsSigner, signed_aws_request};
    let topic = "arn:aws:sns:us-east-1:123456789012:sms-events";
    let signed = |message: &str, id: &str| {
        signed_aws_request(
            &SnsSigner::test(),
            "https://example.com/aws",
            topic,
            message,
            id,
            "2026-12-01T10:00:00.000Z",
        )
    };
    let event = r#"{"eventType":"TEXT_DELIVERED","isFinal":true,"messageId":"m-1"}"#;
    let stop = r#"{"originationNumber":"+14155550123","destinationNumber":"+15005550006","messageBody":"STOP","inboundMessageId":"in-1"}"#;
    let delivered = signed(event, "sns-1");
    let body = String::from_utf8(delivered.body.clone()).unwrap();
    let tampered = SignedRequest { body: body.replace("m-1", "m-2").into_bytes(), ..delivered.clone() };
    let verifier = AwsWebhook::builder(topic).certificate_pem(AWS_SNS_TEST_CERTIFICATE).build().unwrap();
    adapter_contract::WebhookFixtures {
        verifier: Arc::new(verifier),
        now: std::time::SystemTime::now(),
        cases: vec![
            ("delivered".into(), delivered, json!({"type": "message.delivered", "dedupe_key": "aws:sns:sns-1"})),
            ("stop".into(), signed(stop, "sns-2"), json!({"type": "recipient.opted_out"})),
        ],
        tampered,
    }
}

#[tokio::test]
async fn aws_passes_the_adapter_contract() {
    let report = adapter_contract::run(aws_at, &fixtures()).await;
    assert!(report.passed, "{}", report.failures());
}

/// The request as it reached the server verifies: recomputing the signature over the received method,
/// path, headers and body gives the received `Authorization`.
#[tokio::test]
async fn t278_the_sent_request_carries_a_valid_signature() {
    let server = serve(json_reply(200, &fixture_json("aws", "send_text_message_ok.json"))).await;
    let adapter = Aws::builder("eu-west-1", credentials().session_token("FQoGZXIvYXdzEXAMPLE"))
        .from("+15005550006")
        .base_url(server.uri())
        .build()
        .unwrap();
    let cx = SendContext::new(1, None, Duration::from_secs(5));
    let Outcome::Accepted(accepted) = adapter.send(&outbound(&message()), &cx).await else { panic!("not accepted") };
    assert_eq!(accepted.provider_id, MESSAGE_ID);
    let sent = requests(&server).await;
    let request = &sent[0];
    let got = |name: &str| header(request, name).unwrap_or_default().to_owned();
    let authorization = got("authorization");
    let date = got("x-amz-date");
    assert!(
        authorization.starts_with(&format!(
            "AWS4-HMAC-SHA256 Credential={KEY_ID}/{}/eu-west-1/sms-voice/aws4_request, ",
            &date[..8]
        )),
        "{authorization}"
    );
    assert_eq!(got("x-amz-security-token"), "FQoGZXIvYXdzEXAMPLE");
    let host = got("host");
    let (content_type, target, token) = (got("content-type"), got("x-amz-target"), got("x-amz-security-token"));
    let signed = [
        ("content-type", content_type.as_str()),
        ("host", host.as_str()),
        ("x-amz-date", date.as_str()),
        ("x-amz-security-token", token.as_str()),
        ("x-amz-target", target.as_str()),
    ];
    let again =
        sigv4::Request { method: "POST", path: request.url.path(), query: "", headers: &signed, body: &request.body };
    let scope = sigv4::Scope { date: &date[..8], region: "eu-west-1", service: "sms-voice" };
    assert_eq!(sigv4::authorization(&again, &date, KEY_ID, SECRET, &scope), authorization);
    // The secret key itself never travels.
    assert!(!format!("{:?}", request.headers).contains(SECRET));
}

#[tokio::test]
async fn t279_the_correlation_reference_rides_in_context_without_a_callback_url() {
    let server = serve(json_reply(200, &fixture_json("aws", "send_text_message_ok.json"))).await;
    let secret = sms_sdk::correlation::CorrelationSecret::new("0123456789abcdef-test").unwrap();
    let client = Client::builder()
        .adapter(aws_at(&server.uri()))
        .idempotency(sms_sdk::store::MemoryStore::new())
        .correlation(secret.clone())
        .build()
        .unwrap();
    let receipt = client.send(&message().idempotency_key("order:8")).await.unwrap();
    assert_eq!(receipt.provider_id, MESSAGE_ID);
    let body = json_body(&requests(&server).await[0]);
    assert_eq!(body["Context"]["sms_sdk_ref"], sms_sdk::correlation::reference(&secret, "order:8"));
}

#[tokio::test]
async fn t281_documented_errors_through_the_client() {
    for (status, name, kind, code) in [
        (
            400,
            "error_conflict_opted_out.json",
            ErrorKind::Rejected(Category::Compliance),
            "DESTINATION_PHONE_NUMBER_OPTED_OUT",
        ),
        (400, "error_validation.json", ErrorKind::Rejected(Category::Request), "FIELD_VALIDATION_FAILED"),
        (400, "error_access_denied.json", ErrorKind::Rejected(Category::Auth), "AccessDeniedException"),
    ] {
        let server = serve(json_reply(status, &fixture_json("aws", name))).await;
        let client = Client::builder().adapter(aws_at(&server.uri())).build().unwrap();
        let error = client.send(&message()).await.unwrap_err();
        assert_eq!(error.kind(), kind, "{name}");
        assert_eq!(error.provider_error().and_then(|e| e.provider_code()), Some(code), "{name}");
    }
    let server = serve(json_reply(500, &fixture_json("aws", "error_internal_server.json"))).await;
    let client = Client::builder().adapter(aws_at(&server.uri())).build().unwrap();
    let error = client.send(&message()).await.unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Unknown(_)), "{error:?}");
    assert_eq!(requests(&server).await.len(), 1, "an unknown outcome is never retried");
}

/// A source that counts its calls and fails on demand.
struct Counting {
    calls: AtomicUsize,
    fail: bool,
}

/// A source that never answers.
struct Frozen;

impl CredentialSource for Frozen {
    fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, BoxError>> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_credential_source_that_never_answers_sends_nothing_within_the_timeout() {
    let server = serve(json_reply(200, &fixture_json("aws", "send_text_message_ok.json"))).await;
    let adapter =
        Aws::with_source("us-east-1", Arc::new(Frozen)).from("+15005550006").base_url(server.uri()).build().unwrap();
    let client = Client::builder().adapter(adapter).timeout(Duration::from_millis(200)).build().unwrap();
    let started = std::time::Instant::now();
    let error = client.send(&message()).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Rejected(Category::Auth));
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(requests(&server).await.is_empty(), "nothing was sent");
}

impl CredentialSource for Counting {
    fn credentials(&self) -> BoxFuture<'_, Result<AwsCredentials, BoxError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let fail = self.fail;
        Box::pin(async move { if fail { Err("the role could not be assumed".into()) } else { Ok(credentials()) } })
    }
}

#[tokio::test]
async fn a_credential_source_is_asked_before_each_request_and_its_failure_sends_nothing() {
    let server = serve(json_reply(200, &fixture_json("aws", "send_text_message_ok.json"))).await;
    let source = Arc::new(Counting { calls: AtomicUsize::new(0), fail: false });
    let adapter =
        Aws::with_source("us-east-1", source.clone()).from("+15005550006").base_url(server.uri()).build().unwrap();
    let client = Client::builder().adapter(adapter).build().unwrap();
    client.send(&message()).await.unwrap();
    client.send(&message()).await.unwrap();
    assert_eq!(source.calls.load(Ordering::SeqCst), 2);

    let failing = Arc::new(Counting { calls: AtomicUsize::new(0), fail: true });
    let server = serve(json_reply(200, &fixture_json("aws", "send_text_message_ok.json"))).await;
    let adapter = Aws::with_source("us-east-1", failing).from("+15005550006").base_url(server.uri()).build().unwrap();
    let error = Client::builder().adapter(adapter).build().unwrap().send(&message()).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Rejected(Category::Auth));
    assert!(error.is_retry_safe());
    assert!(requests(&server).await.is_empty(), "nothing was sent");
}
