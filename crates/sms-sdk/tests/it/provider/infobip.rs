//! Infobip: request building, response interpretation, lookups, webhooks and the contract, over
//! real HTTP.

use std::time::Duration;

use serde_json::json;
use sms_sdk::adapter::{Category, Delivery, Outcome};
use sms_sdk::lookup::{Lookup as _, LookupOutcome};
use sms_sdk::provider::infobip::{self, Infobip, InfobipWebhook};
use sms_sdk::testing::adapter_contract::{self, ExpectedBody, ExpectedRequest, Fixtures, Reply};
use sms_sdk::webhook::WebhookVerifier as _;
use sms_sdk::webhook::event::EventKind;
use sms_sdk::{Client, ErrorKind, UnknownReason};
use wiremock::ResponseTemplate;

use super::{fixture, fixture_json, json_body, json_reply, outbound, requests, serve};
use crate::{TO, message};

const REFERENCE: &str = "AAAAAAAAAAAAAAAAAAAAAA";
const MESSAGE_ID: &str = "sms-sdk-AAAAAAAAAAAAAAAAAAAAAA";

pub(crate) fn infobip_at(base_url: &str) -> Infobip {
    Infobip::builder(base_url, "KEY_test").from("+15005550006").build().unwrap()
}

fn contract_message() -> sms_sdk::Message {
    message().webhook_url("https://example.com/sms/status")
}

fn fixtures() -> Fixtures {
    let error = |name: &str| fixture_json("infobip", name);
    // The contract's message carries a correlation reference, so the message id is the one the
    // reference makes (without one it is random).
    let mut message = outbound(&contract_message());
    message.correlation = Some(REFERENCE.into());
    Fixtures {
        message,
        request: ExpectedRequest {
            path: "/sms/3/messages".into(),
            headers: vec![
                ("authorization".into(), "App KEY_test".into()),
                ("content-type".into(), "application/json".into()),
                ("accept".into(), "application/json".into()),
            ],
            body: ExpectedBody::Json(json!({"messages": [{
                "sender": "+15005550006",
                "destinations": [{"to": "14155550123", "messageId": MESSAGE_ID}],
                "content": {"text": "Your order has shipped."},
                "webhooks": {
                    "delivery": {"url": "https://example.com/sms/status"},
                    "contentType": "application/json",
                    "callbackData": REFERENCE
                }
            }]})),
        },
        accepted: (
            Reply::raw(200, "application/json", fixture("infobip", "sent_pending.json")),
            MESSAGE_ID.into(),
            Delivery::Queued,
        ),
        permanent_rejection: (Reply::json(400, &error("error_bad_request.json")), Category::Request),
        eligible_rejection: (Reply::json(401, &error("error_unauthorized.json")), Category::Auth),
        rate_limited: (
            Reply::json(429, &error("error_too_many_requests.json")).header("retry-after", "1"),
            Some(Duration::from_secs(1)),
        ),
        malformed_success: Reply::json(200, &json!({"bulkId": "b", "messages": []})),
        server_error: Reply::json(500, &error("error_internal.json")),
        webhooks: Some(webhook_fixtures()),
    }
}

/// A delivery report of one result with the callback's Basic credentials (the contract verifies
/// through `verify_at`, one event); a second account's password is not authentic.
fn webhook_fixtures() -> adapter_contract::WebhookFixtures {
    use sms_sdk::testing::webhooks::signed_infobip_request;
    let body = r#"{"results":[{"messageId":"sms-sdk-1","to":"41793026727","status":{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET"}}]}"#;
    let url = "https://example.com/infobip";
    let delivered = signed_infobip_request(url, body, Some(("hooks", "infobip-pass")), None);
    adapter_contract::WebhookFixtures {
        verifier: std::sync::Arc::new(InfobipWebhook::basic("hooks", "infobip-pass").unwrap()),
        now: std::time::SystemTime::now(),
        cases: vec![("delivered".into(), delivered, json!({"type": "message.delivered"}))],
        tampered: signed_infobip_request(url, body, Some(("hooks", "infobip-pas")), None),
    }
}

#[tokio::test]
async fn infobip_passes_the_adapter_contract() {
    let report = adapter_contract::run(infobip_at, &fixtures()).await;
    assert!(report.passed, "{}", report.failures());
}

#[tokio::test]
async fn t292_documented_request_with_the_correlation_reference() {
    let server = serve(json_reply(200, &fixture_json("infobip", "sent_pending.json"))).await;
    let store = sms_sdk::store::MemoryStore::new();
    let secret = sms_sdk::correlation::CorrelationSecret::new("0123456789abcdef-test").unwrap();
    let client = Client::builder()
        .adapter(infobip_at(&server.uri()))
        .idempotency(store)
        .correlation(secret.clone())
        .build()
        .unwrap();
    // No webhook URL: the reference still rides in the body (callbackData and messageId).
    let receipt = client.send(&message().idempotency_key("order:7")).await.unwrap();
    assert_eq!(receipt.provider_id, MESSAGE_ID, "the provider id is the one Infobip answers");
    let sent = requests(&server).await;
    assert_eq!(sent[0].url.path(), "/sms/3/messages");
    assert_eq!(super::header(&sent[0], "authorization"), Some("App KEY_test"));
    let body = json_body(&sent[0]);
    let reference = sms_sdk::correlation::reference(&secret, "order:7");
    let entry = &body["messages"][0];
    assert_eq!(entry["webhooks"]["callbackData"], reference.as_str());
    assert_eq!(entry["destinations"][0]["messageId"], format!("sms-sdk-{reference}"));
    assert_eq!(entry["destinations"][0]["to"], "14155550123");
    assert!(entry["webhooks"].get("delivery").is_none());
}

#[tokio::test]
async fn t292_without_a_reference_the_message_id_is_random() {
    let server = serve(json_reply(200, &fixture_json("infobip", "sent_pending.json"))).await;
    let client = Client::builder().adapter(infobip_at(&server.uri())).build().unwrap();
    client.send(&message()).await.unwrap();
    client.send(&message()).await.unwrap();
    let sent = requests(&server).await;
    let id = |i: usize| json_body(&sent[i])["messages"][0]["destinations"][0]["messageId"].as_str().unwrap().to_owned();
    assert_ne!(id(0), id(1));
    assert!(id(0).starts_with("sms-sdk-") && id(0).len() == 40, "{}", id(0));
}

#[tokio::test]
async fn t294_a_200_with_a_rejected_destination_is_a_rejection() {
    let server = serve(json_reply(200, &fixture_json("infobip", "sent_rejected_not_enough_credits.json"))).await;
    let client = Client::builder()
        .adapter(infobip_at(&server.uri()))
        .retry(sms_sdk::retry::RetryPolicy::none())
        .build()
        .unwrap();
    let error = client.send(&contract_message()).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Rejected(Category::Account), "{error}");
    assert!(error.is_retry_safe(), "group 5: nothing will be sent");
    assert_eq!(error.provider_error().and_then(|d| d.provider_code()), Some("REJECTED_NOT_ENOUGH_CREDITS"));
}

#[tokio::test]
async fn t296_rejections_reach_the_caller_with_their_category() {
    let rows = [
        (400, "error_bad_request.json", ErrorKind::Rejected(Category::Request)),
        (401, "error_unauthorized.json", ErrorKind::Rejected(Category::Auth)),
        (429, "error_too_many_requests.json", ErrorKind::Rejected(Category::RateLimited)),
    ];
    for (status, name, kind) in rows {
        let server = serve(json_reply(status, &fixture_json("infobip", name))).await;
        let client = Client::builder()
            .adapter(infobip_at(&server.uri()))
            .retry(sms_sdk::retry::RetryPolicy::none())
            .build()
            .unwrap();
        let error = client.send(&contract_message()).await.unwrap_err();
        assert_eq!(error.kind(), kind, "{status}: {error}");
        assert!(error.is_retry_safe(), "{status}: nothing was created");
    }
}

#[tokio::test]
async fn t297_a_server_error_is_unknown_and_never_retried() {
    let server = serve(json_reply(503, &fixture_json("infobip", "error_internal.json"))).await;
    let client = Client::builder().adapter(infobip_at(&server.uri())).build().unwrap();
    let error = client.send(&contract_message()).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unknown(UnknownReason::ServerError), "{error}");
    assert_eq!(requests(&server).await.len(), 1, "one request: an unknown outcome is not retried");
    let Outcome::Unknown(_) =
        infobip::__private::interpret(502, &http::HeaderMap::new(), b"", std::time::SystemTime::now())
    else {
        panic!()
    };
}

#[tokio::test]
async fn t298_lookups_read_the_message_logs() {
    let server = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path("/sms/3/logs"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(fixture("infobip", "logs.json"), "application/json"))
        .mount(&server)
        .await;
    let infobip = infobip_at(&server.uri());
    let LookupOutcome::Found(found) = infobip.fetch(MESSAGE_ID, Duration::from_secs(5)).await else { panic!() };
    assert_eq!((found[0].provider_id.as_str(), found[0].to.as_deref()), (MESSAGE_ID, Some(TO)));
    assert_eq!(found[0].status, "DELIVERED_TO_HANDSET");
    let since = time::OffsetDateTime::now_utc() - time::Duration::hours(1);
    let LookupOutcome::Found(found) = infobip.list_to(TO, since, Duration::from_secs(5)).await else { panic!() };
    assert_eq!(found.len(), 1);
    let sent = requests(&server).await;
    let query = |i: usize| -> Vec<(String, String)> {
        sent[i].url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
    };
    assert_eq!(query(0), [("messageId".to_owned(), MESSAGE_ID.to_owned())]);
    let listed = query(1);
    assert_eq!(listed[0], ("destination".to_owned(), "14155550123".to_owned()));
    assert_eq!(listed[1].0, "sentSince");
    assert_eq!(listed[2], ("limit".to_owned(), "50".to_owned()));
    assert_eq!(super::header(&sent[0], "authorization"), Some("App KEY_test"));
    // Refused before any request: an id that is not plain, a window older than the logs keep.
    assert!(matches!(infobip.fetch("../x", Duration::from_secs(5)).await, LookupOutcome::Failed { .. }));
    let old = time::OffsetDateTime::now_utc() - time::Duration::hours(49);
    assert!(matches!(infobip.list_to(TO, old, Duration::from_secs(5)).await, LookupOutcome::Failed { .. }));
    assert_eq!(requests(&server).await.len(), 2);
}

#[test]
fn t299_documented_callbacks_verify_and_carry_the_reference() {
    use sms_sdk::testing::webhooks::{parse_unverified, signed_infobip_request};
    let url = "https://example.com/sms/infobip";
    let reports = fixture("infobip", "delivery_reports.json");
    let basic = InfobipWebhook::basic("infobip", "callback-password").unwrap();
    let signed = signed_infobip_request(url, &reports, Some(("infobip", "callback-password")), None);
    let events = basic.verify_all(&signed.as_request()).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].type_name(), "message.delivered");
    assert_eq!(events[1].type_name(), "message.undelivered");
    assert_eq!(sms_sdk::reconcile::reference_in(&events[0], url).as_deref(), Some(REFERENCE));
    // The second result names no callbackData, and its random message id holds no reference.
    assert_eq!(sms_sdk::reconcile::reference_in(&events[1], url), None);
    let wrong = signed_infobip_request(url, &reports, Some(("infobip", "other-password")), None);
    assert!(basic.verify_all(&wrong.as_request()).unwrap_err().is_authentication());

    let token = "0123456789abcdef-callback";
    let by_token = InfobipWebhook::url_token(token).unwrap();
    let inbound = fixture("infobip", "inbound.json");
    let signed = signed_infobip_request(url, &inbound, None, Some(token));
    let events = by_token.verify_all(&signed.as_request()).unwrap();
    let EventKind::OptedOut(stop) = &events[0].kind else { panic!("{:?}", events[0]) };
    assert_eq!(stop.from, TO);
    let unsigned = signed_infobip_request(url, &inbound, None, None);
    assert!(by_token.verify_all(&unsigned.as_request()).unwrap_err().is_authentication());
    // parse_unverified (tests only) gives the first event of the batch.
    let first = parse_unverified("infobip", &unsigned.as_request()).unwrap();
    assert_eq!(first.dedupe_key, "infobip:mo:817790313235066447");
}
