//! The tower layer (feature `tower`): signed requests of the four providers through
//! `VerifyLayer` with `oneshot`, what the inner service sees, what refusals look like, and the
//! layer on an axum router served over loopback HTTP.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, StreamBody};
use sms_sdk::testing::webhooks::{
    SignedRequest, TelnyxKeyPair, signed_plivo_request, signed_telnyx_request, signed_twilio_request,
    signed_vonage_request,
};
use sms_sdk::webhook::tower::{BodyReadTimeout, INLINE_VERIFY_LIMIT, VerifiedBody, VerifyLayer};
use sms_sdk::webhook::{SmsEvent, WebhookVerifier};
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};
use tower::{Layer as _, Service, ServiceExt as _, service_fn};

#[path = "../../../examples/webhook_tower.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod example;

const TWILIO_URL: &str = "https://example.com/sms/twilio";
const TELNYX_URL: &str = "https://example.com/sms/telnyx";
const PLIVO_URL: &str = "https://example.com/sms/plivo";
const VONAGE_URL: &str = "https://example.com/sms/vonage";
const TELNYX_BODY: &str = r#"{"data":{"event_type":"message.finalized","id":"evt-1","payload":{"id":"m1","to":[{"phone_number":"+14155550123","status":"delivered"}]}}}"#;
const VONAGE_BODY: &str = r#"{"message_uuid":"v1","status":"delivered"}"#;
const STOP: [(&str, &str); 4] = [
    ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
    ("From", "+14155550123"),
    ("To", "+15005550006"),
    ("Body", "STOP"),
];

fn now() -> i64 {
    i64::try_from(SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs()).unwrap()
}

fn telnyx_key() -> TelnyxKeyPair {
    TelnyxKeyPair::from_seed([7; 32])
}

/// The four verifiers, each with the public URL its provider signs where the scheme signs one.
struct Verifiers {
    twilio: TwilioWebhook,
    telnyx: TelnyxWebhook,
    plivo: PlivoWebhook,
    vonage: VonageWebhook,
}

fn verifiers() -> Verifiers {
    Verifiers {
        twilio: TwilioWebhook::new("twilio-token").unwrap().public_url(TWILIO_URL),
        telnyx: TelnyxWebhook::new(&telnyx_key().public_key).unwrap(),
        plivo: PlivoWebhook::new("plivo-token").unwrap().public_url(PLIVO_URL),
        vonage: VonageWebhook::new("vonage-secret").unwrap(),
    }
}

/// A signed request of each provider and the event type it carries.
fn signed() -> [(SignedRequest, &'static str); 4] {
    let plivo = [("MessageUUID", "u1"), ("Status", "delivered")];
    [
        (signed_twilio_request("twilio-token", TWILIO_URL, &STOP), "recipient.opted_out"),
        (signed_telnyx_request(&telnyx_key(), TELNYX_URL, TELNYX_BODY, now()), "message.delivered"),
        (signed_plivo_request("plivo-token", PLIVO_URL, &plivo, "9"), "message.delivered"),
        (signed_vonage_request("vonage-secret", VONAGE_URL, VONAGE_BODY, now(), "jti-1"), "message.delivered"),
    ]
}

/// What the inner service saw: each call's event type and body.
type Seen = Arc<Mutex<Vec<(String, Bytes)>>>;

/// An answer of the layer: status, content type and body text.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    status: u16,
    content_type: String,
    text: String,
}

/// Sends `request` through `layer` in front of a service that records what it sees and answers
/// 200 with the event type.
async fn through<V, B>(layer: VerifyLayer<V>, request: http::Request<B>) -> (Answer, Vec<(String, Bytes)>)
where
    V: WebhookVerifier + 'static,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let seen = Seen::default();
    let record = seen.clone();
    let inner = service_fn(move |request: http::Request<VerifiedBody>| {
        let record = record.clone();
        async move {
            let kind = request.extensions().get::<SmsEvent>().map_or("no event", SmsEvent::type_name).to_owned();
            let body = request.into_body().collect().await.unwrap().to_bytes();
            record.lock().unwrap().push((kind.clone(), body));
            Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(kind))))
        }
    });
    let response = layer.layer(inner).oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let content_type =
        response.headers().get(http::header::CONTENT_TYPE).map_or_else(String::new, |v| v.to_str().unwrap().to_owned());
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    let seen = seen.lock().unwrap().clone();
    (Answer { status, content_type, text }, seen)
}

/// `signed` as an HTTP/1.1 server receives it.
fn http(signed: &SignedRequest) -> http::Request<Full<Bytes>> {
    example::http_request(signed).unwrap()
}

/// A refusal with `status` and the one-line `reason`, the inner service not called.
fn assert_refused((answer, seen): (Answer, Vec<(String, Bytes)>), status: u16, reason: &str) {
    let expected = Answer { status, content_type: "text/plain; charset=utf-8".to_owned(), text: format!("{reason}\n") };
    assert_eq!(answer, expected);
    assert!(seen.is_empty(), "the inner service was called: {seen:?}");
}

/// Runs `check` with each provider's layer (built from `verifiers`, with `layer` applied) and
/// its signed request.
macro_rules! each_provider {
    ($verifiers:expr, |$layer:ident, $signed:ident, $kind:ident| $check:expr) => {{
        let v = $verifiers;
        let [twilio, telnyx, plivo, vonage] = signed();
        {
            let ($layer, ($signed, $kind)) = (VerifyLayer::new(v.twilio), twilio);
            $check;
        }
        {
            let ($layer, ($signed, $kind)) = (VerifyLayer::new(v.telnyx), telnyx);
            $check;
        }
        {
            let ($layer, ($signed, $kind)) = (VerifyLayer::new(v.plivo), plivo);
            $check;
        }
        {
            let ($layer, ($signed, $kind)) = (VerifyLayer::new(v.vonage), vonage);
            $check;
        }
    }};
}

#[tokio::test]
async fn tower_a_valid_webhook_of_each_provider_reaches_the_inner_service_with_its_event() {
    each_provider!(verifiers(), |layer, signed, kind| {
        let (answer, seen) = through(layer, http(&signed)).await;
        assert_eq!((answer.status, answer.text.as_str()), (200, kind), "{signed:?}");
        // The inner service sees the event in the extensions and the body exactly as received.
        assert_eq!(seen, [(kind.to_owned(), Bytes::from(signed.body.clone()))]);
    });
}

/// The Twilio verifier, recording each call's body length and thread.
struct Recording {
    twilio: TwilioWebhook,
    calls: Arc<Mutex<Vec<(usize, std::thread::ThreadId)>>>,
}

impl WebhookVerifier for Recording {
    fn provider(&self) -> &'static str {
        self.twilio.provider()
    }

    fn verify_at(
        &self,
        request: &sms_sdk::webhook::WebhookRequest<'_>,
        now: SystemTime,
    ) -> Result<SmsEvent, sms_sdk::webhook::WebhookError> {
        self.calls.lock().unwrap().push((request.body.len(), std::thread::current().id()));
        self.twilio.verify_at(request, now)
    }
}

#[tokio::test]
async fn tower_a_large_valid_body_is_verified_off_the_async_worker_and_passed_on_whole() {
    let calls = Arc::default();
    let layer = VerifyLayer::new(Recording { twilio: verifiers().twilio, calls: Arc::clone(&calls) });
    let text = "x".repeat(INLINE_VERIFY_LIMIT);
    let params = [
        ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
        ("From", "+14155550123"),
        ("To", "+15005550006"),
        ("Body", &text),
    ];
    let large = signed_twilio_request("twilio-token", TWILIO_URL, &params);
    let small = signed_twilio_request("twilio-token", TWILIO_URL, &STOP);
    for signed in [&large, &small] {
        let (answer, seen) = through(layer.clone(), http(signed)).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(seen[0].1, signed.body);
    }
    // This test's runtime has one thread, this one: the large body went to the blocking pool.
    let worker = std::thread::current().id();
    let calls = calls.lock().unwrap().clone();
    assert!(large.body.len() > INLINE_VERIFY_LIMIT);
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0], (large.body.len(), worker));
    assert_eq!(calls[1], (small.body.len(), worker));
}

#[tokio::test]
async fn tower_an_absolute_target_is_verified_at_its_own_scheme_and_authority() {
    // HTTP/2 (or an absolute-form HTTP/1.1 target) carries the scheme and authority: no public
    // URL is needed to verify a URL-signing scheme.
    let twilio = TwilioWebhook::new("twilio-token").unwrap();
    let signed = signed_twilio_request("twilio-token", TWILIO_URL, &STOP);
    let mut request = http(&signed);
    *request.uri_mut() = TWILIO_URL.parse().unwrap();
    request.headers_mut().remove(http::header::HOST);
    let (answer, _) = through(VerifyLayer::new(twilio.clone()), request).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    // Received over plain HTTP at the same host: not what Twilio signed.
    let (answer, _) = through(VerifyLayer::new(twilio), http(&signed)).await;
    assert_eq!(answer.status, 401, "{answer:?}");
}

#[tokio::test]
async fn tower_a_bad_signature_is_401_and_the_inner_service_is_not_called() {
    // Each provider's request, signed with another secret.
    let other_key = TelnyxKeyPair::from_seed([8; 32]);
    let forged = [
        signed_twilio_request("other-token", TWILIO_URL, &STOP),
        signed_telnyx_request(&other_key, TELNYX_URL, TELNYX_BODY, now()),
        signed_plivo_request("other-token", PLIVO_URL, &[("MessageUUID", "u1"), ("Status", "delivered")], "9"),
        signed_vonage_request("other-secret", VONAGE_URL, VONAGE_BODY, now(), "jti-1"),
    ];
    let mut forged = forged.into_iter();
    each_provider!(verifiers(), |layer, _signed, _kind| {
        let request = forged.next().unwrap();
        assert_refused(through(layer, http(&request)).await, 401, "invalid_signature");
    });
    // No signature at all.
    each_provider!(verifiers(), |layer, signed, _kind| {
        let mut request = http(&signed);
        let kept = [http::header::HOST, http::header::CONTENT_TYPE];
        let headers = request.headers().iter().filter(|(name, _)| kept.contains(name));
        *request.headers_mut() = headers.map(|(name, value)| (name.clone(), value.clone())).collect();
        assert_refused(through(layer, request).await, 401, "missing_signature");
    });
}

#[tokio::test]
async fn tower_an_oversized_body_is_413_and_the_inner_service_is_not_called() {
    // Over each verifier's configured limit, declared by the body's exact length.
    let small = Verifiers {
        twilio: verifiers().twilio.max_body_bytes(50),
        telnyx: verifiers().telnyx.max_body_bytes(50),
        plivo: verifiers().plivo.max_body_bytes(20),
        vonage: verifiers().vonage.max_body_bytes(20),
    };
    each_provider!(small, |layer, signed, _kind| {
        assert_refused(through(layer, http(&signed)).await, 413, "body_too_large");
    });
    // Over the default limit (1 MiB), streamed in chunks with no declared length.
    let chunks = (0..17).map(|_| Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(vec![b'a'; 64 * 1024]))));
    let request = http::Request::post("/sms/twilio")
        .header(http::header::HOST, "example.com")
        .body(StreamBody::new(futures_util::stream::iter(chunks)))
        .unwrap();
    assert_refused(through(VerifyLayer::new(verifiers().twilio), request).await, 413, "body_too_large");
}

#[tokio::test]
async fn tower_a_malformed_webhook_is_400_and_the_inner_service_is_not_called() {
    // Authentic, but not a webhook the normalizer can read.
    let malformed = [
        signed_twilio_request("twilio-token", TWILIO_URL, &[("Body", "a"), ("Body", "b")]),
        signed_telnyx_request(&telnyx_key(), TELNYX_URL, "not json", now()),
        signed_plivo_request("plivo-token", PLIVO_URL, &[("Status", "sent")], "9"),
        signed_vonage_request("vonage-secret", VONAGE_URL, "not json", now(), "jti-1"),
    ];
    let mut malformed = malformed.into_iter();
    each_provider!(verifiers(), |layer, _signed, _kind| {
        let request = malformed.next().unwrap();
        assert_refused(through(layer, http(&request)).await, 400, "webhook_payload");
    });
}

#[tokio::test]
async fn tower_a_broken_body_is_400_and_the_inner_service_is_not_called() {
    let chunks = [Ok(http_body::Frame::data(Bytes::from_static(b"Body="))), Err(std::io::Error::other("reset"))];
    let request = http::Request::post("/sms/twilio").body(StreamBody::new(futures_util::stream::iter(chunks))).unwrap();
    assert_refused(through(VerifyLayer::new(verifiers().twilio), request).await, 400, "body_unreadable");
}

#[tokio::test]
async fn tower_timeout_a_body_that_never_ends_is_400_after_the_body_read_timeout() {
    let never = || {
        let stream = futures_util::stream::pending::<Result<http_body::Frame<Bytes>, Infallible>>();
        http::Request::post("/sms/twilio").body(StreamBody::new(stream)).unwrap()
    };
    // The layer's own timeout wins over the request's extension (which `serve` sets).
    let layer = VerifyLayer::new(verifiers().twilio).body_read_timeout(Duration::from_millis(200));
    let mut request = never();
    request.extensions_mut().insert(BodyReadTimeout(Duration::from_mins(1)));
    let start = Instant::now();
    assert_refused(through(layer, request).await, 400, "body_unreadable");
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(150) && took < Duration::from_secs(5), "{took:?}");
    // Without one, the extension applies.
    let mut request = never();
    request.extensions_mut().insert(BodyReadTimeout(Duration::from_millis(200)));
    let start = Instant::now();
    assert_refused(through(VerifyLayer::new(verifiers().twilio), request).await, 400, "body_unreadable");
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(150) && took < Duration::from_secs(5), "{took:?}");
}

/// A service that is ready only once `open` is set.
#[derive(Clone, Debug)]
struct Gate {
    open: Arc<AtomicBool>,
}

impl Service<http::Request<VerifiedBody>> for Gate {
    type Response = http::Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        if self.open.load(Ordering::SeqCst) { Poll::Ready(Ok(())) } else { Poll::Pending }
    }

    fn call(&mut self, _: http::Request<VerifiedBody>) -> Self::Future {
        std::future::ready(Ok(http::Response::new(Full::default())))
    }
}

#[test]
fn tower_poll_ready_is_the_inner_services() {
    let open = Arc::new(AtomicBool::new(false));
    let mut service = VerifyLayer::new(verifiers().twilio).layer(Gate { open: open.clone() });
    let mut cx = Context::from_waker(Waker::noop());
    let mut ready = || Service::<http::Request<Full<Bytes>>>::poll_ready(&mut service, &mut cx);
    assert!(ready().is_pending());
    open.store(true, Ordering::SeqCst);
    assert!(matches!(ready(), Poll::Ready(Ok(()))));
}

#[test]
fn tower_debug_shows_no_secret() {
    let layer = VerifyLayer::new(TwilioWebhook::new("twilio-secret-token").unwrap());
    let service = layer.clone().layer(Gate { open: Arc::default() });
    for text in [format!("{layer:?}"), format!("{service:?}")] {
        assert!(text.contains("twilio") && !text.contains("secret"), "{text}");
    }
}

#[tokio::test]
async fn tower_webhook_example_answers_the_signed_request_and_refuses_the_forged_one() {
    let answers = example::run().await.unwrap();
    assert_eq!(answers, [(200, "recipient.opted_out".to_owned()), (401, "invalid_signature".to_owned())]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::prop_cases(64)))]

    /// Whatever the body and signature headers, each provider's layer answers 400, 401 or 413
    /// and never calls the inner service (nothing here is signed with the right secret).
    #[test]
    fn tower_prop_random_requests_are_refused_without_a_panic(
        body in proptest::collection::vec(proptest::num::u8::ANY, 0..512),
        value in "[ -~]{0,80}",
        post in proptest::bool::ANY,
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let mut request = SignedRequest::new(if post { "POST" } else { "GET" }, "https://example.com/sms?a=1", body.clone());
            for name in ["x-twilio-signature", "telnyx-signature-ed25519", "telnyx-timestamp",
                         "x-plivo-signature-v2", "x-plivo-signature-v2-nonce", "authorization"] {
                request = request.header(name, &value);
            }
            each_provider!(verifiers(), |layer, _signed, _kind| {
                let (answer, seen) = through(layer, http(&request)).await;
                assert!(matches!(answer.status, 400 | 401 | 413), "{answer:?}");
                assert!(seen.is_empty());
            });
        });
    }
}

#[cfg(feature = "axum")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_layer_on_an_axum_router_over_loopback_http() {
    use std::future::IntoFuture as _;

    use axum::Extension;
    use axum::routing::post;

    async fn handle(Extension(event): Extension<SmsEvent>) -> String {
        event.type_name().to_owned()
    }

    let app = axum::Router::new().route("/sms/twilio", post(handle)).route_layer(VerifyLayer::new(verifiers().twilio));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(axum::serve(listener, app).into_future());

    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let post = |request: SignedRequest| {
        let mut builder = client.post(format!("http://{address}/sms/twilio")).body(request.body);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        async move {
            let response = builder.send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    let signed = signed_twilio_request("twilio-token", TWILIO_URL, &STOP);
    assert_eq!(post(signed.clone()).await, (200, "recipient.opted_out".to_owned()));
    let forged = signed.header("x-twilio-signature", "Zm9yZ2VkIHNpZ25hdHVyZSE=");
    assert_eq!(post(forged).await, (401, "invalid_signature\n".to_owned()));
}

/// With a reconciler, the layer settles the unknown key a verified status webhook refers to
/// before the inner service runs; a forged one is refused and changes nothing.
#[tokio::test]
async fn reconcile_the_tower_layer_feeds_its_reconciler() {
    use sms_sdk::reconcile::Reconciler;
    use sms_sdk::store::{
        FinalRecord, Fingerprint, IdempotencyStore as _, MemoryStore, Record, ReferenceIndex as _, Reservation,
    };
    use sms_sdk::webhook::SharedObserver;

    let store = MemoryStore::new();
    let at = SystemTime::now();
    let Reservation::Acquired(id) =
        store.reserve("k", sms_sdk::store::Claim::new(&Fingerprint::from_canonical("f")), at).await.unwrap()
    else {
        panic!("not acquired")
    };
    let unknown = FinalRecord::Unknown(sms_sdk::testing::store_contract::sample_error("handoff_unknown"));
    store.finalize("k", &id, unknown, Duration::from_mins(1), at).await.unwrap();
    let reference = "ABCDEFGHIJKLMNOPQRSTUV";
    store.remember_reference(reference, "k", at, Duration::from_mins(1)).await.unwrap();
    let body = format!(r#"{{"message_uuid":"v-settled","status":"delivered","client_ref":"{reference}"}}"#);
    let layer = VerifyLayer::new(verifiers().vonage).observer(SharedObserver::new(Reconciler::new(store.clone())));

    let forged = signed_vonage_request("another-secret", VONAGE_URL, &body, now(), "jti-forged");
    assert_refused(through(layer.clone(), http(&forged)).await, 401, "invalid_signature");
    assert_eq!(store.get("k").await.unwrap().map(|r| r.state()), Some(sms_sdk::store::State::Unknown));

    let signed = signed_vonage_request("vonage-secret", VONAGE_URL, &body, now(), "jti-real");
    let (answer, seen) = through(layer, http(&signed)).await;
    assert_eq!((answer.status, seen.len()), (200, 1));
    let Some(Record::Accepted { result, .. }) = store.get("k").await.unwrap() else { panic!("not settled") };
    assert_eq!((result.provider.as_str(), result.provider_id.as_str()), ("vonage", "v-settled"));
}

#[cfg(feature = "aws")]
mod aws {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use sms_sdk::provider::aws::{AwsWebhook, CertificateSource};
    use sms_sdk::testing::webhooks::{AWS_SNS_TEST_CERTIFICATE, SnsSigner, signed_aws_request};
    use sms_sdk::{BoxError, BoxFuture};

    use super::*;

    const TOPIC: &str = "arn:aws:sns:us-east-1:123456789012:sms-events";
    const EVENT: &str = r#"{"eventType":"TEXT_DELIVERED","isFinal":true,"messageId":"m-1","destinationPhoneNumber":"+14155550123","context":{"sms_sdk_ref":"AAAAAAAAAAAAAAAAAAAAAA"}}"#;

    /// Answers the test certificate, or fails, counting the calls.
    struct Certificates {
        calls: AtomicUsize,
        available: bool,
    }

    impl CertificateSource for Certificates {
        fn certificate<'a>(&'a self, _url: &'a str) -> BoxFuture<'a, Result<Vec<u8>, BoxError>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let available = self.available;
            Box::pin(async move {
                if available { Ok(AWS_SNS_TEST_CERTIFICATE.as_bytes().to_vec()) } else { Err("unreachable".into()) }
            })
        }
    }

    fn layer(available: bool) -> (VerifyLayer<AwsWebhook>, Arc<Certificates>) {
        let source = Arc::new(Certificates { calls: AtomicUsize::new(0), available });
        let verifier = AwsWebhook::builder(TOPIC).certificate_source(source.clone()).build().unwrap();
        (VerifyLayer::new(verifier), source)
    }

    fn notification(id: &str) -> SignedRequest {
        signed_aws_request(
            &SnsSigner::test(),
            "https://example.com/sms/aws",
            TOPIC,
            EVENT,
            id,
            "2026-12-01T10:00:00.000Z",
        )
    }

    #[tokio::test]
    async fn t290_the_layer_fetches_the_certificate_once_then_verifies_every_message() {
        let (layer, source) = layer(true);
        for id in ["sns-1", "sns-2", "sns-3"] {
            let (answer, seen) = through(layer.clone(), http(&notification(id))).await;
            assert_eq!((answer.status, answer.text.as_str()), (200, "message.delivered"));
            assert_eq!(seen.len(), 1);
        }
        assert_eq!(source.calls.load(Ordering::SeqCst), 1);
        // A forged message is still refused, with the certificate in hand.
        let mut forged = notification("sns-4");
        forged.body = String::from_utf8(forged.body).unwrap().replace("TEXT_DELIVERED", "TEXT_SPAM").into_bytes();
        assert_refused(through(layer, http(&forged)).await, 401, "invalid_signature");
    }

    #[tokio::test]
    async fn t290_a_certificate_that_cannot_be_had_is_503_and_asked_again_next_time() {
        let (layer, source) = layer(false);
        for _ in 0..2 {
            let (answer, seen) = through(layer.clone(), http(&notification("sns-1"))).await;
            assert_eq!(answer.status, 503, "{answer:?}");
            assert!(seen.is_empty());
        }
        assert_eq!(source.calls.load(Ordering::SeqCst), 2);
    }
}
