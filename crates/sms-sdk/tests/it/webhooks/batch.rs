//! Requests that carry several events (Infobip's `results`, Bandwidth's arrays): the trait's
//! `verify_all_at` returns them all and `verify_at` refuses more than one; the tower layer calls
//! its service once per event, deduplicates each and stops at the first that was not handled;
//! the axum extractor `VerifiedAll` takes a batch and `Verified` refuses it.

use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use sms_sdk::InfobipWebhook;
use sms_sdk::store::MemoryStore;
use sms_sdk::testing::webhooks::{SignedRequest, signed_infobip_request};
use sms_sdk::webhook::axum::{Verified, VerifiedAll};
use sms_sdk::webhook::tower::{VerifiedBody, VerifyLayer};
use sms_sdk::webhook::{AnyWebhook, SmsEvent, WebhookError, WebhookVerifier};
use tower::{Layer as _, ServiceExt as _, service_fn};

const URL: &str = "https://example.com/sms/infobip";
const USER: &str = "callbacks";
const PASSWORD: &str = "a-long-random-password";

fn infobip() -> InfobipWebhook {
    InfobipWebhook::basic(USER, PASSWORD).unwrap()
}

/// A delivery report of `ids`, one result each, in order.
fn reports(ids: &[&str]) -> String {
    let results: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(
                r#"{{"messageId":"{id}","to":"41793026727","status":{{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET"}}}}"#
            )
        })
        .collect();
    format!(r#"{{"results":[{}]}}"#, results.join(","))
}

/// `body` as an HTTP/1.1 server receives it at `URL`.
fn http_request(body: &str) -> http::Request<Full<Bytes>> {
    http_request_of(&signed_infobip_request(URL, body, Some((USER, PASSWORD)), None))
}

/// `signed` as an HTTP/1.1 server receives it at `URL`.
fn http_request_of(signed: &SignedRequest) -> http::Request<Full<Bytes>> {
    let mut request = http::Request::post("/sms/infobip").header(http::header::HOST, "example.com");
    for (name, value) in &signed.headers {
        request = request.header(name, value);
    }
    request.body(Full::from(signed.body.clone())).unwrap()
}

/// The provider ids of `events`.
fn ids(events: &[SmsEvent]) -> Vec<String> {
    events
        .iter()
        .map(|event| serde_json::to_value(event).unwrap()["provider_id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn batch_verify_all_returns_every_event_and_verify_at_refuses_more_than_one() {
    let body = reports(&["sms-sdk-a", "sms-sdk-b"]);
    let signed = signed_infobip_request(URL, &body, Some((USER, PASSWORD)), None);
    let events = infobip().verify_all(&signed.as_request()).unwrap();
    assert_eq!(ids(&events), ["sms-sdk-a", "sms-sdk-b"]);
    match infobip().verify(&signed.as_request()) {
        Err(WebhookError::Payload { message, .. }) => assert!(message.contains("2 events"), "{message}"),
        other => panic!("a batch of two through verify: {other:?}"),
    }
    let one = signed_infobip_request(URL, &reports(&["sms-sdk-c"]), Some((USER, PASSWORD)), None);
    assert_eq!(ids(&[infobip().verify(&one.as_request()).unwrap()]), ["sms-sdk-c"]);
    // An AnyWebhook passes the batch on whole, and a forged one is refused whole.
    let any = AnyWebhook::new().with(infobip());
    assert_eq!(ids(&any.verify_all(&signed.as_request()).unwrap()), ["sms-sdk-a", "sms-sdk-b"]);
    let forged = signed_infobip_request(URL, &body, Some((USER, "another-password")), None);
    assert!(any.verify_all(&forged.as_request()).unwrap_err().is_authentication());
}

/// The handler of the layer tests: records each event's provider id and answers the next
/// status of its script (204 when the script is done).
#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<String>>>,
    script: Arc<Mutex<Vec<u16>>>,
}

impl Recorder {
    fn answering(statuses: &[u16]) -> Self {
        let recorder = Self::default();
        recorder.script.lock().unwrap().extend(statuses.iter().rev());
        recorder
    }

    fn seen(&self) -> Vec<String> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }

    fn handle(&self, request: &http::Request<VerifiedBody>) -> http::Response<String> {
        let event = request.extensions().get::<SmsEvent>().expect("the handler gets its event");
        self.seen.lock().unwrap().extend(ids(std::slice::from_ref(event)));
        let status = self.script.lock().unwrap().pop().unwrap_or(204);
        let mut response = http::Response::new(format!("handled {}", ids(std::slice::from_ref(event))[0]));
        *response.status_mut() = StatusCode::from_u16(status).unwrap();
        response
    }
}

/// One delivery of `body` through `layer` in front of `recorder`: the status and body.
async fn deliver(layer: &VerifyLayer<InfobipWebhook>, recorder: &Recorder, body: &str) -> (u16, String) {
    let recorder = recorder.clone();
    let service = layer.layer(service_fn(move |request| {
        let recorder = recorder.clone();
        async move { Ok::<_, std::io::Error>(recorder.handle(&request)) }
    }));
    let response = service.oneshot(http_request(body)).await.unwrap();
    let status = response.status().as_u16();
    let text = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(text.to_vec()).unwrap())
}

#[tokio::test]
async fn batch_the_layer_calls_its_service_once_per_event_in_order() {
    let recorder = Recorder::default();
    let body = reports(&["sms-sdk-1", "sms-sdk-2", "sms-sdk-3"]);
    let (status, text) = deliver(&VerifyLayer::new(infobip()), &recorder, &body).await;
    assert_eq!((status, text.as_str()), (204, "handled sms-sdk-3"));
    assert_eq!(recorder.seen(), ["sms-sdk-1", "sms-sdk-2", "sms-sdk-3"]);
    // A forged batch reaches no handler.
    let forged = signed_infobip_request(URL, &body, Some((USER, "guess")), None);
    let request = http_request_of(&forged);
    let service = VerifyLayer::new(infobip()).layer(service_fn(|_: http::Request<VerifiedBody>| async {
        Ok::<_, std::io::Error>(http::Response::new(String::new()))
    }));
    let refused = service.clone().oneshot(request).await.unwrap();
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(refused.headers().get(http::header::WWW_AUTHENTICATE).is_none(), "other credentials are not challenged");
    // Without credentials: 401 with the Basic challenge, so that a sender that waits for one
    // sends them.
    let bare = http_request_of(&signed_infobip_request(URL, &body, None, None));
    let challenged = service.oneshot(bare).await.unwrap();
    assert_eq!(challenged.status(), StatusCode::UNAUTHORIZED);
    let challenge = challenged.headers().get(http::header::WWW_AUTHENTICATE).map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(challenge.as_deref(), Some(sms_sdk::provider::infobip::WWW_AUTHENTICATE));
}

#[tokio::test]
async fn batch_dedupe_stops_at_a_failed_event_and_the_redelivery_handles_only_the_rest() {
    let layer = VerifyLayer::new(infobip()).dedupe(Arc::new(MemoryStore::new()));
    let body = reports(&["sms-sdk-1", "sms-sdk-2", "sms-sdk-3"]);
    // The second event's handler fails: the batch is answered with its failure, the third is
    // not handed on, and the first is done.
    let recorder = Recorder::answering(&[204, 503]);
    assert_eq!(deliver(&layer, &recorder, &body).await, (503, "handled sms-sdk-2".to_owned()));
    assert_eq!(recorder.seen(), ["sms-sdk-1", "sms-sdk-2"]);
    // The provider redelivers the whole batch: the first is a duplicate, the others are handled.
    assert_eq!(deliver(&layer, &recorder, &body).await, (204, "handled sms-sdk-3".to_owned()));
    assert_eq!(recorder.seen(), ["sms-sdk-2", "sms-sdk-3"]);
    // Once more: every event is a duplicate, and no handler runs.
    assert_eq!(deliver(&layer, &recorder, &body).await, (200, "duplicate\n".to_owned()));
    assert!(recorder.seen().is_empty());
    // A batch that repeats a handled event with a new one hands on only the new one.
    let mixed = reports(&["sms-sdk-3", "sms-sdk-4"]);
    assert_eq!(deliver(&layer, &recorder, &mixed).await, (204, "handled sms-sdk-4".to_owned()));
    assert_eq!(recorder.seen(), ["sms-sdk-4"]);
}

#[tokio::test]
async fn batch_verified_refuses_a_batch_and_verified_all_takes_it() {
    async fn one(Verified { event, .. }: Verified<InfobipWebhook>) -> String {
        ids(&[event]).join(",")
    }
    async fn all(VerifiedAll { events, .. }: VerifiedAll<InfobipWebhook>) -> String {
        ids(&events).join(",")
    }
    let app = axum::Router::new()
        .route("/sms/infobip", axum::routing::post(one))
        .route("/sms/infobip/all", axum::routing::post(all))
        .with_state(infobip());
    let call = |path: &'static str, body: String| {
        let app = app.clone();
        async move {
            let mut request = http_request(&body);
            *request.uri_mut() = path.parse().unwrap();
            let response = app.oneshot(request.map(axum::body::Body::new)).await.unwrap();
            let status = response.status().as_u16();
            let text = response.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8(text.to_vec()).unwrap())
        }
    };
    let batch = reports(&["sms-sdk-1", "sms-sdk-2"]);
    assert_eq!(call("/sms/infobip/all", batch.clone()).await, (200, "sms-sdk-1,sms-sdk-2".to_owned()));
    let (status, text) = call("/sms/infobip", batch).await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("webhook_payload"), "{text}");
    assert_eq!(call("/sms/infobip", reports(&["sms-sdk-3"])).await, (200, "sms-sdk-3".to_owned()));
    // The extractor challenges a request without credentials.
    let bare = http_request_of(&signed_infobip_request(URL, &reports(&["sms-sdk-4"]), None, None));
    let response = app.oneshot(bare.map(axum::body::Body::new)).await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.headers().contains_key(http::header::WWW_AUTHENTICATE));
}
