//! `AnyWebhook`: one verifier for all four providers, alone and under axum over real HTTP on
//! loopback; two routes of one provider; and `serve`'s graceful shutdown.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::routing::post;
use axum::{Extension, Router};
use sms_sdk::testing::webhooks::{
    SignedRequest, TelnyxKeyPair, signed_plivo_request, signed_telnyx_request, signed_twilio_request,
    signed_vonage_request,
};
use sms_sdk::webhook::axum::{Verified, serve};
use sms_sdk::webhook::tower::VerifyLayer;
use sms_sdk::webhook::{AnyWebhook, SmsEvent, WebhookError, WebhookVerifier};
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};

const URL: &str = "http://127.0.0.1/sms/status";
const VONAGE_SECRET: &str = "vonage-signature-secret-0123456789";

fn telnyx_key() -> TelnyxKeyPair {
    TelnyxKeyPair::from_seed([3; 32])
}

/// All four providers' verifiers in one instance (the URL-signing ones check the URL the
/// request was received at).
fn all_four() -> AnyWebhook {
    AnyWebhook::new()
        .with(TwilioWebhook::new("twilio-token").unwrap())
        .with(TelnyxWebhook::new(&telnyx_key().public_key).unwrap())
        .with(PlivoWebhook::new("plivo-token").unwrap())
        .with(VonageWebhook::new(VONAGE_SECRET).unwrap())
}

fn now() -> i64 {
    i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()).unwrap()
}

/// One delivery report of each provider, signed for `url`, with the provider it is from.
fn one_of_each(url: &str) -> Vec<(&'static str, SignedRequest)> {
    let twilio = signed_twilio_request(
        "twilio-token",
        url,
        &[("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageStatus", "delivered")],
    );
    let telnyx_body = serde_json::json!({"data": {"event_type": "message.finalized", "id": "evt-1",
        "occurred_at": "2026-10-08T12:00:00.000+00:00",
        "payload": {"id": "40385f64-5717-4562-b3fc-2c963f66afa6", "to": [{"phone_number": "+14155550123", "status": "delivered"}]}}})
    .to_string();
    let telnyx = signed_telnyx_request(&telnyx_key(), url, &telnyx_body, now());
    let plivo = signed_plivo_request(
        "plivo-token",
        url,
        &[("MessageUUID", "db3ce55a-7f1d-11e1-8ea7-1231380bc196"), ("Status", "delivered"), ("ErrorCode", "000")],
        "12345",
    );
    let vonage_body = serde_json::json!({"message_uuid": "aaaaaaaa-bbbb-cccc-dddd-0123456789ab", "status": "delivered",
        "timestamp": "2026-10-08T12:00:00Z", "to": "14155550123"})
    .to_string();
    let vonage = signed_vonage_request(VONAGE_SECRET, url, &vonage_body, now(), "jti-1");
    vec![("twilio", twilio), ("telnyx", telnyx), ("plivo", plivo), ("vonage", vonage)]
}

#[test]
fn one_instance_verifies_each_provider_with_its_own_secret() {
    let webhooks = all_four();
    assert_eq!(webhooks.providers().collect::<Vec<_>>(), ["twilio", "telnyx", "plivo", "vonage"]);
    for (provider, request) in one_of_each(URL) {
        let event = webhooks.verify(&request.as_request()).unwrap_or_else(|e| panic!("{provider}: {e}"));
        assert_eq!(event.provider, provider);
        assert_eq!(event.type_name(), "message.delivered", "{provider}");
        // Changed after signing (the body, and the nonce for Plivo's V2, which signs no body):
        // refused by that provider's verifier, named in the error.
        let mut tampered = request.clone().header("x-plivo-signature-v2-nonce", "99999");
        tampered.body.extend_from_slice(b" ");
        let error = webhooks.verify(&tampered.as_request()).unwrap_err();
        assert!(error.is_authentication(), "{provider}: {error:?}");
        assert_eq!(error.provider(), provider);
    }
}

#[test]
fn a_request_no_verifier_recognises_is_refused_as_unsigned() {
    let webhooks = all_four();
    let unsigned = SignedRequest::new("POST", URL, "MessageSid=SM1&MessageStatus=delivered");
    let error = webhooks.verify(&unsigned.as_request()).unwrap_err();
    assert_eq!(error, WebhookError::MissingSignature { provider: "any" });
    assert!(error.is_authentication());
    assert_eq!(AnyWebhook::new().verify(&unsigned.as_request()).unwrap_err().reason(), Some("missing_signature"));
    // A provider whose verifier is not in the set is not accepted either.
    let only_twilio = AnyWebhook::new().with(TwilioWebhook::new("twilio-token").unwrap());
    let (_, telnyx) = one_of_each(URL).swap_remove(1);
    assert_eq!(only_twilio.verify(&telnyx.as_request()).unwrap_err().provider(), "any");
}

#[test]
fn two_verifiers_of_one_provider_are_tried_in_order() {
    let (a, b) = ("https://example.com/sms/a", "https://example.com/sms/b");
    let webhooks = AnyWebhook::new()
        .with(TwilioWebhook::new("token-a").unwrap().public_url(a))
        .with(TwilioWebhook::new("token-b").unwrap().public_url(b));
    let params = [("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageStatus", "sent")];
    assert!(webhooks.verify(&signed_twilio_request("token-a", a, &params).as_request()).is_ok());
    assert!(webhooks.verify(&signed_twilio_request("token-b", b, &params).as_request()).is_ok());
    let wrong = webhooks.verify(&signed_twilio_request("token-a", b, &params).as_request()).unwrap_err();
    assert_eq!(wrong, WebhookError::InvalidSignature { provider: "twilio" }, "the first verifier's error");
    assert_eq!(webhooks.body_limit(), sms_sdk::webhook::DEFAULT_MAX_BODY);
    assert!(!format!("{webhooks:?}").contains("token-"), "Debug shows providers, never secrets");
}

/// Serves `router` on loopback (stopping gracefully when `stop` completes); returns its address
/// and the server's task.
async fn start(
    router: Router,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> (SocketAddr, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    (address, tokio::spawn(serve(listener, router).with_graceful_shutdown(stop).into_future()))
}

async fn post_signed(address: SocketAddr, path: &str, request: &SignedRequest) -> reqwest::Response {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
        .post(format!("http://{address}{path}"))
        .headers(request.headers.clone())
        .body(request.body.clone())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_axum_extractor_takes_every_provider_on_one_route() {
    async fn status(Verified { event, .. }: Verified<AnyWebhook>) -> String {
        event.provider.to_owned()
    }
    let router = Router::new().route("/sms/status", post(status)).with_state(all_four());
    let (address, server) = start(router, std::future::pending()).await;
    let url = format!("http://{address}/sms/status");
    for (provider, request) in one_of_each(&url) {
        let answer = post_signed(address, "/sms/status", &request).await;
        assert_eq!(answer.status(), 200, "{provider}");
        assert_eq!(answer.text().await.unwrap(), provider);
    }
    let unsigned = SignedRequest::new("POST", &url, "MessageSid=SM1");
    assert_eq!(post_signed(address, "/sms/status", &unsigned).await.status(), 401);
    server.abort();
}

#[tokio::test]
async fn two_routes_of_one_provider_take_a_layer_each() {
    async fn handle(Extension(event): Extension<SmsEvent>) -> String {
        event.type_name().to_owned()
    }
    // Two Twilio accounts (or two public URLs of one): a layer on each route, no shared state.
    let router = Router::new()
        .route("/sms/marketing", post(handle).layer(VerifyLayer::new(TwilioWebhook::new("token-m").unwrap())))
        .route("/sms/alerts", post(handle).layer(VerifyLayer::new(TwilioWebhook::new("token-a").unwrap())));
    let (address, server) = start(router, std::future::pending()).await;
    let (marketing, alerts) = (format!("http://{address}/sms/marketing"), format!("http://{address}/sms/alerts"));
    let params = [("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageStatus", "delivered")];
    let to_marketing = signed_twilio_request("token-m", &marketing, &params);
    let to_alerts = signed_twilio_request("token-a", &alerts, &params);
    let answer = post_signed(address, "/sms/marketing", &to_marketing).await;
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.text().await.unwrap(), "message.delivered");
    assert_eq!(post_signed(address, "/sms/alerts", &to_alerts).await.status(), 200);
    let other_secret = signed_twilio_request("token-m", &alerts, &params);
    assert_eq!(post_signed(address, "/sms/alerts", &other_secret).await.status(), 401, "the other route's secret");
    server.abort();
}

#[tokio::test]
async fn graceful_shutdown_finishes_the_request_in_flight_then_stops_accepting() {
    async fn slow(Verified { event, .. }: Verified<TwilioWebhook>) -> String {
        tokio::time::sleep(Duration::from_millis(500)).await;
        event.type_name().to_owned()
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let router = Router::new().route("/sms/twilio", post(slow)).with_state(TwilioWebhook::new("twilio-token").unwrap());
    let (address, server) = start(router, async {
        let _ = stopped.await;
    })
    .await;
    let params = [("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageStatus", "delivered")];
    let signed = signed_twilio_request("twilio-token", &format!("http://{address}/sms/twilio"), &params);
    let in_flight = tokio::spawn(async move { post_signed(address, "/sms/twilio", &signed).await });
    tokio::time::sleep(Duration::from_millis(150)).await;
    stop.send(()).unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), in_flight).await.unwrap().unwrap();
    assert_eq!(answer.status(), 200, "the request in flight was answered");
    assert_eq!(answer.text().await.unwrap(), "message.delivered");
    tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap().unwrap();
    assert!(tokio::net::TcpStream::connect(address).await.is_err(), "no longer accepting");
}
