//! Bandwidth: request building, response interpretation, OAuth 2.0 tokens, lookups, callbacks and
//! the contract, over real HTTP.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use serde_json::json;
use sms_sdk::adapter::{Adapter as _, Category, Delivery, Outcome, SendContext};
use sms_sdk::lookup::{Lookup as _, LookupOutcome};
use sms_sdk::provider::bandwidth::{self, Bandwidth, BandwidthWebhook};
use sms_sdk::testing::adapter_contract::{self, ExpectedBody, ExpectedRequest, Fixtures, Reply};
use sms_sdk::testing::webhooks::signed_bandwidth_request;
use sms_sdk::webhook::{EventKind, WebhookError, WebhookVerifier as _};
use sms_sdk::{Client, ErrorKind, UnknownReason};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::{fixture, fixture_json, header, json_body, json_reply, outbound, requests, serve, text_body};
use crate::{TO, message};

const ACCOUNT: &str = "9900000";
const APPLICATION: &str = "93de2206-9669-4e07-948d-329f4b722ee2";
const MESSAGE_ID: &str = "1589228074636lm4k2je7j7jklbn2";
const MESSAGES_PATH: &str = "/api/v2/users/9900000/messages";
const TOKEN_PATH: &str = "/api/v1/oauth2/token";

pub(crate) fn bandwidth_at(base_url: &str) -> Bandwidth {
    Bandwidth::basic(ACCOUNT, APPLICATION, "api-user", "api-password")
        .from("+15005550006")
        .base_url(base_url)
        .build()
        .unwrap()
}

/// An OAuth 2.0 adapter whose token URL is on `server` too.
fn oauth_at(server: &MockServer) -> Bandwidth {
    Bandwidth::oauth2(ACCOUNT, APPLICATION, "client-id", "client-secret")
        .from("+15005550006")
        .base_url(server.uri())
        .token_url(format!("{}{TOKEN_PATH}", server.uri()))
        .build()
        .unwrap()
}

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

fn fixtures() -> Fixtures {
    let error = |name: &str| fixture_json("bandwidth", name);
    Fixtures {
        message: outbound(&message()),
        request: ExpectedRequest {
            path: MESSAGES_PATH.into(),
            headers: vec![
                ("authorization".into(), basic("api-user", "api-password")),
                ("content-type".into(), "application/json".into()),
                ("accept".into(), "application/json".into()),
            ],
            body: ExpectedBody::Json(json!({
                "applicationId": APPLICATION, "to": [TO], "from": "+15005550006", "text": "Your order has shipped."
            })),
        },
        accepted: (
            Reply::raw(202, "application/json", fixture("bandwidth", "message_created.json")),
            MESSAGE_ID.into(),
            Delivery::Queued,
        ),
        permanent_rejection: (Reply::json(400, &error("error_request_validation.json")), Category::Request),
        eligible_rejection: (Reply::json(401, &error("error_unauthorized.json")), Category::Auth),
        rate_limited: (
            Reply::json(429, &error("error_too_many_requests.json")).header("retry-after", "1"),
            Some(Duration::from_secs(1)),
        ),
        malformed_success: Reply::json(202, &json!({"to": [TO], "text": "Your order has shipped."})),
        // A gateway's 503 (not Bandwidth's own 500 body, which is a rejection: T303).
        server_error: Reply::raw(503, "text/html", "<html><body>503 Service Unavailable</body></html>"),
        webhooks: Some(webhook_fixtures()),
    }
}

/// A callback of one event with the application's callback credentials (the contract verifies
/// through `verify_at`, one event; T307 tests arrays); other credentials are not authentic.
fn webhook_fixtures() -> adapter_contract::WebhookFixtures {
    use sms_sdk::testing::webhooks::signed_bandwidth_request;
    let body = r#"[{"type":"message-delivered","time":"2026-12-01T10:00:05.000Z","to":"+14155550123","description":"ok","message":{"id":"1589228074636lm4k2je7j7jklbn2","direction":"out","to":["+14155550123"],"from":"+15005550006"}}]"#;
    let url = "https://example.com/bandwidth";
    adapter_contract::WebhookFixtures {
        verifier: std::sync::Arc::new(BandwidthWebhook::basic("bw", "callback-pass").unwrap()),
        now: std::time::SystemTime::now(),
        cases: vec![(
            "delivered".into(),
            signed_bandwidth_request("bw", "callback-pass", url, body),
            json!({"type": "message.delivered"}),
        )],
        tampered: signed_bandwidth_request("bw", "callback-pas", url, body),
    }
}

#[tokio::test]
async fn bandwidth_passes_the_adapter_contract() {
    let report = adapter_contract::run(bandwidth_at, &fixtures()).await;
    assert!(report.passed, "{}", report.failures());
}

#[tokio::test]
async fn t300_documented_request_with_the_correlation_reference() {
    let server = serve(json_reply(202, &fixture_json("bandwidth", "message_created.json"))).await;
    let store = sms_sdk::store::MemoryStore::new();
    let secret = sms_sdk::correlation::CorrelationSecret::new("0123456789abcdef-test").unwrap();
    let client = Client::builder()
        .adapter(bandwidth_at(&server.uri()))
        .idempotency(store)
        .correlation(secret.clone())
        .build()
        .unwrap();
    let receipt = client.send(&message().validity_period_secs(600).idempotency_key("order:7")).await.unwrap();
    assert_eq!(receipt.provider_id, MESSAGE_ID);
    let sent = requests(&server).await;
    assert_eq!(sent[0].url.path(), MESSAGES_PATH);
    assert_eq!(header(&sent[0], "authorization"), Some(basic("api-user", "api-password").as_str()));
    let body = json_body(&sent[0]);
    assert_eq!(body["tag"], sms_sdk::correlation::reference(&secret, "order:7"));
    assert_eq!((body["to"].clone(), body["applicationId"].clone()), (json!([TO]), json!(APPLICATION)));
    assert!(body["expiration"].as_str().is_some_and(|e| e.ends_with('Z')), "{body}");
    // No scheduling and no per-message callback URL: refused before any request.
    let at = time::OffsetDateTime::now_utc() + time::Duration::hours(1);
    let error = client.send(&message().send_at(at)).await.unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Unsupported { .. }), "{error}");
    let error = client.send(&message().webhook_url("https://example.com/status")).await.unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Unsupported { .. }), "{error}");
    assert_eq!(requests(&server).await.len(), 1);
}

#[tokio::test]
async fn t302_rejections_reach_the_caller_with_their_category() {
    let rows = [
        (400, "error_request_validation.json", ErrorKind::Rejected(Category::Request)),
        (400, "error_request_validation_to.json", ErrorKind::Rejected(Category::Recipient)),
        (401, "error_unauthorized.json", ErrorKind::Rejected(Category::Auth)),
        (403, "error_forbidden.json", ErrorKind::Rejected(Category::Auth)),
        (429, "error_too_many_requests.json", ErrorKind::Rejected(Category::RateLimited)),
    ];
    for (status, name, kind) in rows {
        let server = serve(json_reply(status, &fixture_json("bandwidth", name))).await;
        let client = Client::builder()
            .adapter(bandwidth_at(&server.uri()))
            .retry(sms_sdk::retry::RetryPolicy::none())
            .build()
            .unwrap();
        let error = client.send(&message()).await.unwrap_err();
        assert_eq!(error.kind(), kind, "{status} {name}: {error}");
        assert!(error.is_retry_safe(), "{status}: nothing was created");
        let text = format!("{error} {error:?}");
        assert!(!text.contains("api-password") && !text.contains(&basic("api-user", "api-password")), "{text}");
    }
}

#[tokio::test]
async fn t303_bandwidths_own_500_is_rejected_and_other_server_errors_are_unknown() {
    let server = serve(json_reply(500, &fixture_json("bandwidth", "error_internal.json"))).await;
    let client = Client::builder().adapter(bandwidth_at(&server.uri())).build().unwrap();
    let error = client.send(&message()).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Rejected(Category::Unreachable), "{error}");
    assert!(error.is_retry_safe() && error.allows_failover());
    for reply in [
        ResponseTemplate::new(503).set_body_raw(b"<html>503</html>".to_vec(), "text/html"),
        ResponseTemplate::new(502),
        json_reply(504, &fixture_json("bandwidth", "error_internal.json")),
        ResponseTemplate::new(500).set_body_raw(b"Internal Server Error".to_vec(), "text/plain"),
    ] {
        let server = serve(reply).await;
        let client = Client::builder().adapter(bandwidth_at(&server.uri())).build().unwrap();
        let error = client.send(&message()).await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Unknown(UnknownReason::ServerError), "{error}");
        assert_eq!(requests(&server).await.len(), 1, "one request: an unknown outcome is not retried");
    }
}

#[tokio::test]
async fn t304_a_rate_limit_waits_for_retry_after_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            json_reply(429, &fixture_json("bandwidth", "error_too_many_requests.json"))
                .insert_header("retry-after", "1"),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(json_reply(202, &fixture_json("bandwidth", "message_created.json")))
        .mount(&server)
        .await;
    let client = Client::builder().adapter(bandwidth_at(&server.uri())).build().unwrap();
    let started = std::time::Instant::now();
    let receipt = client.send(&message()).await.unwrap();
    assert_eq!(receipt.provider_id, MESSAGE_ID);
    assert!(started.elapsed() >= Duration::from_millis(900), "Retry-After honoured: {:?}", started.elapsed());
    assert_eq!(requests(&server).await.len(), 2);
}

#[cfg(feature = "twilio")]
#[tokio::test]
async fn t304_an_eligible_rejection_at_twilio_fails_over_to_bandwidth() {
    let twilio = serve(json_reply(401, &fixture_json("twilio", "error_20003.json"))).await;
    let bandwidth = serve(json_reply(202, &fixture_json("bandwidth", "message_created.json"))).await;
    let client = Client::builder()
        .adapter(super::twilio::twilio_at(&twilio.uri()))
        .adapter(bandwidth_at(&bandwidth.uri()))
        .failover(sms_sdk::Failover::OnEligibleRejection)
        .build()
        .unwrap();
    let receipt = client.send(&message()).await.unwrap();
    assert_eq!((receipt.provider.as_str(), receipt.provider_id.as_str()), ("bandwidth", MESSAGE_ID));
    assert_eq!(requests(&twilio).await.len(), 1);
    assert_eq!(json_body(&requests(&bandwidth).await[0])["to"], json!([TO]));
    // A request rejection at Twilio is not eligible: Bandwidth is never asked.
    let twilio = serve(json_reply(400, &fixture_json("twilio", "error_21211.json"))).await;
    let bandwidth = serve(json_reply(202, &fixture_json("bandwidth", "message_created.json"))).await;
    let client = Client::builder()
        .adapter(super::twilio::twilio_at(&twilio.uri()))
        .adapter(bandwidth_at(&bandwidth.uri()))
        .failover(sms_sdk::Failover::OnEligibleRejection)
        .build()
        .unwrap();
    assert!(client.send(&message()).await.is_err());
    assert!(requests(&bandwidth).await.is_empty());
}

#[tokio::test]
async fn t305_an_oauth2_token_is_fetched_once_and_sent_as_bearer() {
    let server = MockServer::start().await;
    Mock::given(path(TOKEN_PATH))
        .respond_with(json_reply(200, &fixture_json("bandwidth", "oauth_token.json")))
        .mount(&server)
        .await;
    Mock::given(path(MESSAGES_PATH))
        .respond_with(json_reply(202, &fixture_json("bandwidth", "message_created.json")))
        .mount(&server)
        .await;
    let client = Client::builder().adapter(oauth_at(&server)).build().unwrap();
    for _ in 0..2 {
        assert_eq!(client.send(&message()).await.unwrap().provider_id, MESSAGE_ID);
    }
    let sent = requests(&server).await;
    let paths: Vec<&str> = sent.iter().map(|r| r.url.path()).collect();
    assert_eq!(paths, [TOKEN_PATH, MESSAGES_PATH, MESSAGES_PATH], "the token is kept");
    assert_eq!(header(&sent[0], "authorization"), Some(basic("client-id", "client-secret").as_str()));
    assert_eq!(header(&sent[0], "content-type"), Some("application/x-www-form-urlencoded"));
    assert_eq!(text_body(&sent[0]), "grant_type=client_credentials");
    let bearer = "Bearer eyJhbGciOiJSUzI1NiJ9.test-token.signature";
    assert!(sent[1..].iter().all(|r| header(r, "authorization") == Some(bearer)));
}

#[tokio::test]
async fn t305_concurrent_sends_share_one_token_fetch_and_a_refused_token_is_dropped() {
    let server = MockServer::start().await;
    Mock::given(path(TOKEN_PATH))
        .respond_with(
            json_reply(200, &fixture_json("bandwidth", "oauth_token.json")).set_delay(Duration::from_millis(100)),
        )
        .mount(&server)
        .await;
    Mock::given(path(MESSAGES_PATH))
        .respond_with(json_reply(202, &fixture_json("bandwidth", "message_created.json")))
        .up_to_n_times(4)
        .mount(&server)
        .await;
    Mock::given(path(MESSAGES_PATH))
        .respond_with(json_reply(401, &fixture_json("bandwidth", "error_unauthorized.json")))
        .mount(&server)
        .await;
    let adapter = oauth_at(&server);
    let message = outbound(&message());
    let cx = SendContext::new(1, None, Duration::from_secs(5));
    let outcomes = tokio::join!(
        adapter.send(&message, &cx),
        adapter.send(&message, &cx),
        adapter.send(&message, &cx),
        adapter.send(&message, &cx)
    );
    let outcomes = [outcomes.0, outcomes.1, outcomes.2, outcomes.3];
    assert!(outcomes.iter().all(|outcome| matches!(outcome, Outcome::Accepted(_))), "{outcomes:?}");
    let tokens = |sent: &[wiremock::Request]| sent.iter().filter(|r| r.url.path() == TOKEN_PATH).count();
    assert_eq!(tokens(&requests(&server).await), 1, "one fetch for four sends");
    // Bandwidth refuses the token: the send is an auth rejection, and the next send fetches anew.
    let outcome = adapter.send(&message, &cx).await;
    assert!(matches!(&outcome, Outcome::Rejected(rejection) if rejection.category == Category::Auth), "{outcome:?}");
    let _ = adapter.send(&message, &cx).await;
    assert_eq!(tokens(&requests(&server).await), 2);
}

#[tokio::test]
async fn t305_a_token_without_a_lifetime_is_fetched_for_each_send() {
    let server = MockServer::start().await;
    Mock::given(path(TOKEN_PATH))
        .respond_with(json_reply(200, &json!({"access_token": "short-lived", "token_type": "Bearer"})))
        .mount(&server)
        .await;
    Mock::given(path(MESSAGES_PATH))
        .respond_with(json_reply(202, &fixture_json("bandwidth", "message_created.json")))
        .mount(&server)
        .await;
    let adapter = oauth_at(&server);
    for _ in 0..2 {
        let outcome = adapter.send(&outbound(&message()), &SendContext::new(1, None, Duration::from_secs(5))).await;
        assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
    }
    let paths: Vec<String> = requests(&server).await.iter().map(|r| r.url.path().to_owned()).collect();
    assert_eq!(paths, [TOKEN_PATH, MESSAGES_PATH, TOKEN_PATH, MESSAGES_PATH]);
}

#[tokio::test]
async fn t305_a_failed_or_slow_token_fetch_is_an_auth_rejection_with_nothing_sent() {
    let replies = [
        json_reply(401, &json!({"error": "invalid_client", "error_description": "client-secret is wrong"})),
        json_reply(200, &json!({"token_type": "Bearer"})),
        ResponseTemplate::new(503),
        json_reply(200, &fixture_json("bandwidth", "oauth_token.json")).set_delay(Duration::from_secs(3)),
    ];
    for reply in replies {
        let server = MockServer::start().await;
        Mock::given(path(TOKEN_PATH)).respond_with(reply).mount(&server).await;
        let adapter = oauth_at(&server);
        let started = std::time::Instant::now();
        let cx = SendContext::new(1, None, Duration::from_millis(300));
        let outcome = adapter.send(&outbound(&message()), &cx).await;
        let Outcome::Rejected(rejection) = &outcome else { panic!("{outcome:?}") };
        assert_eq!(rejection.category, Category::Auth);
        assert!(rejection.details.text().is_some_and(|t| t.contains("nothing was sent")), "{outcome:?}");
        assert!(!format!("{outcome:?}").contains("client-secret"), "{outcome:?}");
        assert!(started.elapsed() < Duration::from_secs(2), "bounded by the attempt's timeout");
        let sent = requests(&server).await;
        assert!(sent.iter().all(|r| r.url.path() == TOKEN_PATH), "no message request");
    }
}

#[tokio::test]
async fn t306_lookups_by_message_id_and_by_recipient() {
    let server = MockServer::start().await;
    Mock::given(path(MESSAGES_PATH))
        .and(method("GET"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(fixture("bandwidth", "messages_list.json"), "application/json"),
        )
        .mount(&server)
        .await;
    let bandwidth = bandwidth_at(&server.uri());
    let LookupOutcome::Found(found) = bandwidth.fetch(MESSAGE_ID, Duration::from_secs(5)).await else { panic!() };
    assert_eq!((found[0].provider_id.as_str(), found[0].status.as_str()), (MESSAGE_ID, "DELIVERED"));
    assert_eq!(found[0].to.as_deref(), Some(TO));
    assert_eq!(bandwidth.fetch("another-id", Duration::from_secs(5)).await, LookupOutcome::NotFound);
    let since = time::OffsetDateTime::now_utc() - time::Duration::days(1);
    let LookupOutcome::Found(found) = bandwidth.list_to(TO, since, Duration::from_secs(5)).await else { panic!() };
    assert_eq!(found.len(), 1);
    let sent = requests(&server).await;
    assert_eq!(sent[0].url.query(), Some(format!("messageId={MESSAGE_ID}").as_str()));
    assert_eq!(header(&sent[0], "authorization"), Some(basic("api-user", "api-password").as_str()));
    let query: Vec<(String, String)> =
        sent[2].url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let names: Vec<&str> = query.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["destinationTn", "messageDirection", "fromDateTime", "toDateTime", "sort", "limit"]);
    assert_eq!(query[0].1, TO);
    assert!(matches!(bandwidth.fetch("../x", Duration::from_secs(5)).await, LookupOutcome::Failed { .. }));
    assert_eq!(requests(&server).await.len(), 3, "an id that is not plain is refused before any request");
}

#[test]
fn t307_documented_callbacks_verify_and_normalize() {
    let verifier = BandwidthWebhook::basic("bandwidth-callbacks", "callback-password").unwrap();
    let url = "https://example.com/bandwidth";
    let now = SystemTime::now();
    let delivered = fixture("bandwidth", "callback_delivered.json");
    let request = signed_bandwidth_request("bandwidth-callbacks", "callback-password", url, &delivered);
    let events = verifier.verify_all_at(&request.as_request(), now).unwrap();
    let [event] = events.as_slice() else { panic!("{events:?}") };
    assert_eq!(event.type_name(), "message.delivered");
    assert_eq!(sms_sdk::reconcile::reference_in(event, url).as_deref(), Some("AAAAAAAAAAAAAAAAAAAAAA"));

    let failed = fixture("bandwidth", "callback_failed.json");
    let request = signed_bandwidth_request("bandwidth-callbacks", "callback-password", url, &failed);
    let events = verifier.verify_all_at(&request.as_request(), now).unwrap();
    let EventKind::Undelivered(update) = &events[0].kind else { panic!("{events:?}") };
    assert_eq!((update.provider_id.as_str(), update.error_code.as_deref()), (MESSAGE_ID, Some("4432")));

    let received = fixture("bandwidth", "callback_received.json");
    let request = signed_bandwidth_request("bandwidth-callbacks", "callback-password", url, &received);
    let events = verifier.verify_all_at(&request.as_request(), now).unwrap();
    assert_eq!(events[0].type_name(), "recipient.opted_out");
    // The same callback through the testing parser (its first event).
    let unverified = sms_sdk::testing::webhooks::parse_unverified("bandwidth", &request.as_request()).unwrap();
    assert_eq!(unverified.dedupe_key, events[0].dedupe_key);

    // Other credentials, or none, are refused before the body is read.
    let forged = signed_bandwidth_request("bandwidth-callbacks", "guess", url, &received);
    assert_eq!(
        verifier.verify_all_at(&forged.as_request(), now).map(|e| e.len()),
        Err(WebhookError::InvalidSignature { provider: bandwidth::NAME })
    );
    let mut bare = request.clone();
    bare.headers.remove("authorization");
    let missing = verifier.verify_all_at(&bare.as_request(), now).unwrap_err();
    assert_eq!(missing, WebhookError::MissingSignature { provider: bandwidth::NAME });
    assert!(missing.is_authentication());
    assert!(bandwidth::WWW_AUTHENTICATE.starts_with("Basic "));
}
