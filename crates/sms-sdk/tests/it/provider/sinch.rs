//! Sinch: request building, response interpretation, lookups and the contract, over real HTTP.

use std::time::Duration;

use serde_json::json;
use sms_sdk::adapter::{Category, Delivery, Outcome};
use sms_sdk::lookup::LookupOutcome;
use sms_sdk::provider::sinch::{self, Sinch};
use sms_sdk::testing::adapter_contract::{self, ExpectedBody, ExpectedRequest, Fixtures, Reply};
use sms_sdk::{Client, ErrorKind, UnknownReason};
use wiremock::ResponseTemplate;

use super::{fixture, fixture_json, json_body, json_reply, outbound, requests, serve};
use crate::{TO, message};

const BATCH_ID: &str = "01FC66621XXXXX119Z8PMV1QPQ";

pub(crate) fn sinch_at(base_url: &str) -> Sinch {
    Sinch::builder("plan01", "TOKEN_test").from("+15005550006").base_url(base_url).build().unwrap()
}

fn contract_message() -> sms_sdk::Message {
    message().webhook_url("https://example.com/sms/status")
}

fn fixtures() -> Fixtures {
    let error = |name: &str| fixture_json("sinch", name);
    Fixtures {
        message: outbound(&contract_message()),
        request: ExpectedRequest {
            path: "/xms/v1/plan01/batches".into(),
            headers: vec![
                ("authorization".into(), "Bearer TOKEN_test".into()),
                ("content-type".into(), "application/json".into()),
                ("accept".into(), "application/json".into()),
            ],
            body: ExpectedBody::Json(json!({
                "to": [TO], "from": "+15005550006", "body": "Your order has shipped.", "type": "mt_text",
                "delivery_report": "per_recipient", "callback_url": "https://example.com/sms/status"
            })),
        },
        accepted: (
            Reply::raw(201, "application/json", fixture("sinch", "batch_created.json")),
            BATCH_ID.into(),
            Delivery::Queued,
        ),
        permanent_rejection: (Reply::json(400, &error("error_syntax_invalid_json.json")), Category::Request),
        eligible_rejection: (Reply::json(401, &error("error_unauthorized.json")), Category::Auth),
        rate_limited: (
            Reply::json(429, &error("error_too_many_requests.json")).header("retry-after", "1"),
            Some(Duration::from_secs(1)),
        ),
        malformed_success: Reply::json(201, &json!({"to": [TO], "type": "mt_text"})),
        server_error: Reply::json(500, &error("error_internal.json")),
        webhooks: Some(webhook_fixtures()),
    }
}

fn webhook_fixtures() -> adapter_contract::WebhookFixtures {
    use sms_sdk::testing::webhooks::{SignedRequest, signed_sinch_request};
    let body = r#"{"type":"recipient_delivery_report_sms","batch_id":"b1","recipient":"+14155550123","code":0,"status":"Delivered","at":"2023-11-14T22:13:20.000Z"}"#;
    let delivered = signed_sinch_request(
        "whsec-test",
        "https://example.com/sinch",
        body,
        1_700_000_000,
        "01FJA8B4A7BM43YGWSG9GBV067",
    );
    let tampered = SignedRequest { body: body.replace("Delivered", "Failed").into_bytes(), ..delivered.clone() };
    adapter_contract::WebhookFixtures {
        verifier: std::sync::Arc::new(sinch::SinchWebhook::hmac("whsec-test").unwrap()),
        now: std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        cases: vec![("delivered".into(), delivered, json!({"type": "message.delivered"}))],
        tampered,
    }
}

#[tokio::test]
async fn sinch_passes_the_adapter_contract() {
    let report = adapter_contract::run(sinch_at, &fixtures()).await;
    assert!(report.passed, "{}", report.failures());
}

#[tokio::test]
async fn t266_documented_request_with_the_correlation_reference() {
    let server = serve(json_reply(201, &fixture_json("sinch", "batch_created.json"))).await;
    let store = sms_sdk::store::MemoryStore::new();
    let secret = sms_sdk::correlation::CorrelationSecret::new("0123456789abcdef-test").unwrap();
    let client = Client::builder()
        .adapter(sinch_at(&server.uri()))
        .idempotency(store)
        .correlation(secret.clone())
        .build()
        .unwrap();
    let receipt = client.send(&contract_message().idempotency_key("order:7")).await.unwrap();
    assert_eq!(receipt.provider_id, BATCH_ID);
    let sent = requests(&server).await;
    assert_eq!(sent[0].url.path(), "/xms/v1/plan01/batches");
    assert_eq!(super::header(&sent[0], "authorization"), Some("Bearer TOKEN_test"));
    let body = json_body(&sent[0]);
    assert_eq!(body["client_reference"], sms_sdk::correlation::reference(&secret, "order:7"));
    assert_eq!(body["to"], json!([TO]));
}

#[tokio::test]
async fn t268_rejections_reach_the_caller_with_their_category() {
    let rows = [
        (400, "error_syntax_invalid_json.json", ErrorKind::Rejected(Category::Request)),
        (401, "error_unauthorized.json", ErrorKind::Rejected(Category::Auth)),
        (429, "error_too_many_requests.json", ErrorKind::Rejected(Category::RateLimited)),
    ];
    for (status, name, kind) in rows {
        let server = serve(json_reply(status, &fixture_json("sinch", name))).await;
        let client = Client::builder()
            .adapter(sinch_at(&server.uri()))
            .retry(sms_sdk::retry::RetryPolicy::none())
            .build()
            .unwrap();
        let error = client.send(&contract_message()).await.unwrap_err();
        assert_eq!(error.kind(), kind, "{status}: {error}");
        assert!(error.is_retry_safe(), "{status}: nothing was created");
    }
}

#[tokio::test]
async fn t269_a_server_error_is_unknown_and_never_retried() {
    let server = serve(json_reply(503, &fixture_json("sinch", "error_internal.json"))).await;
    let client = Client::builder().adapter(sinch_at(&server.uri())).build().unwrap();
    let error = client.send(&contract_message()).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unknown(UnknownReason::ServerError), "{error}");
    assert_eq!(requests(&server).await.len(), 1, "one request: an unknown outcome is not retried");
    let Outcome::Unknown(_) =
        sinch::__private::interpret(502, &http::HeaderMap::new(), b"", std::time::SystemTime::now())
    else {
        panic!()
    };
}

#[tokio::test]
async fn t277_lookups_fetch_a_batch_and_list_by_recipient() {
    use sms_sdk::lookup::Lookup as _;
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path(format!("/xms/v1/plan01/batches/{BATCH_ID}")))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(fixture("sinch", "batch_created.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let list =
        format!(r#"{{"count":1,"page":0,"page_size":1,"batches":[{}]}}"#, fixture("sinch", "batch_created.json"));
    wiremock::Mock::given(wiremock::matchers::path("/xms/v1/plan01/batches"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(list, "application/json"))
        .mount(&server)
        .await;
    let sinch = sinch_at(&server.uri());
    let LookupOutcome::Found(found) = sinch.fetch(BATCH_ID, Duration::from_secs(5)).await else { panic!() };
    assert_eq!((found[0].provider_id.as_str(), found[0].to.as_deref()), (BATCH_ID, Some(TO)));
    let since = time::OffsetDateTime::from_unix_timestamp(1_764_583_200).unwrap();
    let LookupOutcome::Found(found) = sinch.list_to(TO, since, Duration::from_secs(5)).await else { panic!() };
    assert_eq!(found.len(), 1);
    let sent = requests(&server).await;
    let query: Vec<(String, String)> =
        sent[1].url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    assert_eq!(
        query,
        [("to".into(), TO.into()), ("start_date".into(), "2025-12-01".into()), ("page_size".into(), "50".into())]
    );
    assert!(matches!(sinch.fetch("../x", Duration::from_secs(5)).await, LookupOutcome::Failed { .. }));
}
