//! The tower layer's deduplication (`VerifyLayer::dedupe`, feature `tower`): one signed Twilio
//! event delivered again and again through the layer, in front of a handler scripted to fail,
//! wait, panic or never answer, on a memory and a SQLite store; and the layer on an axum route
//! over loopback HTTP.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use sms_sdk::TwilioWebhook;
use sms_sdk::store::sqlite::SqliteStore;
use sms_sdk::store::{ClaimToken, DedupeClaim, DedupeStore, MemoryStore, StoreError};
use sms_sdk::testing::webhooks::{SignedRequest, signed_twilio_request};
use sms_sdk::webhook::tower::{VerifiedBody, Verify, VerifyLayer};
use sms_sdk::webhook::{EventObserver, SharedObserver, SmsEvent, WebhookVerifier as _};
use tokio::sync::Notify;
use tower::{Layer as _, Service, ServiceExt as _};

use futures_util::future::BoxFuture;

const URL: &str = "https://example.com/sms/twilio";
const TOKEN: &str = "twilio-token";
const STOP: [(&str, &str); 4] = [
    ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
    ("From", "+14155550123"),
    ("To", "+15005550006"),
    ("Body", "STOP"),
];

fn twilio() -> TwilioWebhook {
    TwilioWebhook::new(TOKEN).unwrap().public_url(URL)
}

/// The one event every test delivers, signed.
fn signed() -> SignedRequest {
    signed_twilio_request(TOKEN, URL, &STOP)
}

/// `signed` as an HTTP/1.1 server receives it at `URL`: the path as the target, the host in `Host`.
fn http_request(signed: &SignedRequest) -> http::Request<Full<Bytes>> {
    let mut request = http::Request::post("/sms/twilio").header(http::header::HOST, "example.com");
    for (name, value) in &signed.headers {
        request = request.header(name, value);
    }
    request.body(Full::from(signed.body.clone())).unwrap()
}

/// The event's dedupe key.
fn dedupe_key() -> String {
    twilio().verify(&signed().as_request()).unwrap().dedupe_key
}

/// What the handler does on one call.
#[derive(Clone)]
enum Act {
    /// Answers this status.
    Answer(u16),
    /// Returns an error (the service failed).
    Fail,
    /// Panics.
    Panic,
    /// Waits for the notification, then answers 200.
    WaitFor(Arc<Notify>),
    /// Never answers.
    Forever,
}

/// The inner service: does the next scripted act on each call (204 when the script is done),
/// counting calls and signalling each one's start.
#[derive(Clone, Default)]
struct Handler {
    script: Arc<Mutex<VecDeque<Act>>>,
    calls: Arc<AtomicUsize>,
    entered: Arc<Notify>,
}

impl Handler {
    fn new(acts: impl IntoIterator<Item = Act>) -> Self {
        Self { script: Arc::new(Mutex::new(acts.into_iter().collect())), ..Self::default() }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Service<http::Request<VerifiedBody>> for Handler {
    type Response = http::Response<Full<Bytes>>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, io::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<VerifiedBody>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            assert!(request.extensions().get::<SmsEvent>().is_some(), "the handler gets the event");
            this.calls.fetch_add(1, Ordering::SeqCst);
            let act = this.script.lock().unwrap().pop_front().unwrap_or(Act::Answer(204));
            this.entered.notify_one();
            let status = match act {
                Act::Answer(status) => status,
                Act::Fail => return Err(io::Error::other("the handler failed")),
                Act::Panic => panic!("the handler panicked"),
                Act::WaitFor(go) => {
                    go.notified().await;
                    200
                }
                Act::Forever => std::future::pending().await,
            };
            let mut response = http::Response::new(Full::new(Bytes::from_static(b"handled")));
            *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
            Ok(response)
        })
    }
}

type Layered = Verify<Handler, TwilioWebhook>;

/// The layer with dedupe on `store`, in front of `handler`.
fn service(store: Arc<dyn DedupeStore>, handler: &Handler) -> Layered {
    VerifyLayer::new(twilio()).dedupe(store).layer(handler.clone())
}

/// One delivery of the event: the answer's status and body, or the handler's error.
async fn deliver(service: &Layered) -> Result<(u16, String), io::Error> {
    let request = http_request(&signed());
    let response = service.clone().oneshot(request).await?;
    let status = response.status().as_u16();
    let content_type = response.headers().get(http::header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_owned());
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    if text != "handled" {
        assert_eq!(content_type.as_deref(), Some("text/plain; charset=utf-8"), "the layer's own answer: {text:?}");
    }
    Ok((status, text))
}

/// Delivers the event until the layer stops answering 409 (a release on another task may still
/// be under way), for at most 5 s.
async fn redeliver(service: &Layered) -> Result<(u16, String), io::Error> {
    let started = Instant::now();
    loop {
        let answer = deliver(service).await?;
        if answer.0 != 409 || started.elapsed() > Duration::from_secs(5) {
            return Ok(answer);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The two stores the layer tests run on: memory and a SQLite file.
async fn stores() -> [(&'static str, Arc<dyn DedupeStore>); 2] {
    let sqlite = SqliteStore::open(crate::stores::temp_db()).await.unwrap();
    [("memory", Arc::new(MemoryStore::new())), ("sqlite", Arc::new(sqlite))]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_dedupe_a_failed_handler_frees_the_key_for_the_redelivery_then_a_duplicate_is_200() {
    for (name, store) in stores().await {
        let handler = Handler::new([Act::Answer(503), Act::Answer(204)]);
        let service = service(store, &handler);
        assert_eq!(deliver(&service).await.unwrap(), (503, "handled".into()), "{name}: the handler's 503");
        assert_eq!(handler.calls(), 1);
        assert_eq!(deliver(&service).await.unwrap(), (204, "handled".into()), "{name}: the redelivery is handled");
        assert_eq!(handler.calls(), 2, "{name}");
        assert_eq!(deliver(&service).await.unwrap(), (200, "duplicate\n".into()), "{name}: the third delivery");
        assert_eq!(handler.calls(), 2, "{name}: a duplicate never reaches the handler");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_dedupe_a_delivery_while_the_handler_runs_is_409_in_progress() {
    for (name, store) in stores().await {
        let go = Arc::new(Notify::new());
        let handler = Handler::new([Act::WaitFor(Arc::clone(&go))]);
        let service = service(Arc::clone(&store), &handler);
        let first = tokio::spawn({
            let service = service.clone();
            async move { deliver(&service).await }
        });
        handler.entered.notified().await;
        assert_eq!(deliver(&service).await.unwrap(), (409, "in_progress\n".into()), "{name}");
        assert_eq!(handler.calls(), 1, "{name}: the concurrent delivery did not reach the handler");
        go.notify_one();
        assert_eq!(first.await.unwrap().unwrap(), (200, "handled".into()), "{name}");
        assert_eq!(deliver(&service).await.unwrap(), (200, "duplicate\n".into()), "{name}");
        assert_eq!(handler.calls(), 1, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_dedupe_a_dropped_response_future_frees_the_key() {
    for (name, store) in stores().await {
        let handler = Handler::new([Act::Forever, Act::Answer(204)]);
        let service = service(Arc::clone(&store), &handler);
        let stuck = tokio::spawn({
            let service = service.clone();
            async move { deliver(&service).await }
        });
        handler.entered.notified().await;
        // The client went away (or a timeout layer gave up): the response future is dropped.
        stuck.abort();
        assert!(stuck.await.unwrap_err().is_cancelled());
        assert_eq!(redeliver(&service).await.unwrap(), (204, "handled".into()), "{name}: the key was freed");
        assert_eq!(handler.calls(), 2, "{name}");
        assert_eq!(deliver(&service).await.unwrap(), (200, "duplicate\n".into()), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_dedupe_a_handler_error_or_panic_frees_the_key() {
    for (name, store) in stores().await {
        let handler = Handler::new([Act::Fail, Act::Panic, Act::Answer(204)]);
        let service = service(Arc::clone(&store), &handler);
        let error = deliver(&service).await.unwrap_err();
        assert_eq!(error.to_string(), "the handler failed", "{name}: the handler's error goes out");
        let panicked = tokio::spawn({
            let service = service.clone();
            async move { deliver(&service).await }
        });
        assert!(panicked.await.unwrap_err().is_panic(), "{name}: the redelivery reached the handler");
        assert_eq!(redeliver(&service).await.unwrap(), (204, "handled".into()), "{name}: freed after the panic");
        assert_eq!(handler.calls(), 3, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_dedupe_a_claim_left_by_a_killed_process_frees_after_its_lease() {
    for (name, store) in stores().await {
        // Another instance claimed the event and died before committing or releasing.
        let lease = Duration::from_millis(300);
        let claim = store.claim_at(&dedupe_key(), SystemTime::now(), lease).await.unwrap();
        assert!(matches!(claim, DedupeClaim::Claimed(_)), "{name}: {claim:?}");
        let handler = Handler::new([]);
        let service = service(Arc::clone(&store), &handler);
        assert_eq!(deliver(&service).await.unwrap(), (409, "in_progress\n".into()), "{name}");
        tokio::time::sleep(2 * lease).await;
        assert_eq!(deliver(&service).await.unwrap(), (204, "handled".into()), "{name}: the lease ran out");
        assert_eq!(handler.calls(), 1, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_dedupe_the_lease_and_retention_are_the_layers() {
    let store = MemoryStore::new();
    let handler = Handler::new([Act::Forever]);
    let layer = VerifyLayer::new(twilio())
        .dedupe(Arc::new(store.clone()))
        .dedupe_lease(Duration::from_millis(200))
        .dedupe_retention(Duration::from_millis(200));
    let service = layer.layer(handler.clone());
    let stuck = tokio::spawn({
        let service = service.clone();
        async move { deliver(&service).await }
    });
    handler.entered.notified().await;
    // The handler still runs, but its lease is over: the event's next delivery is handled.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(deliver(&service).await.unwrap(), (204, "handled".into()));
    assert_eq!(deliver(&service).await.unwrap(), (200, "duplicate\n".into()));
    // The retention runs out: a delivery after it is handled again.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(deliver(&service).await.unwrap(), (204, "handled".into()));
    assert_eq!(handler.calls(), 3);
    stuck.abort();
}

/// A dedupe store whose every call fails, or only its commits.
struct Failing {
    commits_only: bool,
    inner: MemoryStore,
}

impl Failing {
    fn error() -> StoreError {
        StoreError::new("the dedupe store is down")
    }
}

impl DedupeStore for Failing {
    fn first_seen_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.first_seen_at(key, now, retention)
    }

    fn claim_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        lease: Duration,
    ) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
        if self.commits_only { self.inner.claim_at(key, now, lease) } else { Box::pin(async { Err(Self::error()) }) }
    }

    fn commit_at<'a>(&'a self, _: &'a str, _: SystemTime, _: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Err(Self::error()) })
    }

    fn release<'a>(&'a self, key: &'a str, token: &'a ClaimToken) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.release(key, token)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_dedupe_a_store_that_cannot_claim_is_503_and_a_failed_commit_still_answers() {
    let handler = Handler::new([]);
    let down = service(Arc::new(Failing { commits_only: false, inner: MemoryStore::new() }), &handler);
    assert_eq!(deliver(&down).await.unwrap(), (503, "store_unavailable\n".into()));
    assert_eq!(handler.calls(), 0, "the handler never runs unclaimed");

    // The commit fails after the handler did the work: its answer still goes out (and the key
    // stays claimed until the lease runs out, so a redelivery meanwhile is 409).
    let inner = MemoryStore::new();
    let flaky = service(Arc::new(Failing { commits_only: true, inner: inner.clone() }), &handler);
    assert_eq!(deliver(&flaky).await.unwrap(), (204, "handled".into()));
    assert_eq!(handler.calls(), 1);
    assert_eq!(inner.claim(&dedupe_key()).await.unwrap(), DedupeClaim::InFlight);
}

/// Counts the events it sees.
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl EventObserver for Counting {
    fn on_event<'a>(&'a self, _: &'a SmsEvent, _: &'a str) -> BoxFuture<'a, ()> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {})
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_dedupe_the_observer_sees_every_verified_delivery_before_the_claim() {
    let (store, observer, handler) = (MemoryStore::new(), Counting::default(), Handler::new([]));
    let layer = VerifyLayer::new(twilio()).observer(SharedObserver::new(observer.clone())).dedupe(Arc::new(store));
    let service = layer.layer(handler.clone());
    for expected in [(204, "handled"), (200, "duplicate\n"), (200, "duplicate\n")] {
        assert_eq!(deliver(&service).await.unwrap(), (expected.0, expected.1.to_owned()));
    }
    assert_eq!((observer.0.load(Ordering::SeqCst), handler.calls()), (3, 1), "observed thrice, handled once");
    // A forged delivery is refused before the observer and the claim.
    let forged = signed().header("x-twilio-signature", "Zm9yZ2VkIHNpZ25hdHVyZSE=");
    let response = service.clone().oneshot(http_request(&forged)).await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(observer.0.load(Ordering::SeqCst), 3);
}

#[test]
fn tower_dedupe_debug_says_dedupe_is_on_and_shows_no_secret() {
    let layer = VerifyLayer::new(TwilioWebhook::new("twilio-secret-token").unwrap())
        .dedupe(Arc::new(MemoryStore::new()))
        .dedupe_lease(Duration::from_secs(5));
    let text = format!("{layer:?}");
    assert!(text.contains("dedupe: true") && text.contains("dedupe_lease: 5s") && !text.contains("secret"), "{text}");
    assert!(format!("{:?}", VerifyLayer::new(twilio())).contains("dedupe: false"));
}

/// Under axum: the layer on the route, the handler taking `Extension<SmsEvent>` and answering
/// 503 when it fails, over loopback HTTP with a SQLite store.
#[cfg(feature = "axum")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_dedupe_on_an_axum_route_over_loopback_http() {
    use std::future::IntoFuture as _;

    use axum::Extension;
    use axum::extract::State;
    use axum::http::StatusCode;
    use axum::routing::post;

    /// Fails the first event it sees, handles the others.
    async fn handle(State(calls): State<Arc<AtomicUsize>>, Extension(event): Extension<SmsEvent>) -> StatusCode {
        assert_eq!(event.type_name(), "recipient.opted_out");
        if calls.fetch_add(1, Ordering::SeqCst) == 0 { StatusCode::SERVICE_UNAVAILABLE } else { StatusCode::NO_CONTENT }
    }

    let store: Arc<dyn DedupeStore> = Arc::new(SqliteStore::open(crate::stores::temp_db()).await.unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let route = post(handle).layer(VerifyLayer::new(twilio()).dedupe(store));
    let app = axum::Router::new().route("/sms/twilio", route).with_state(Arc::clone(&calls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(axum::serve(listener, app).into_future());

    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let post = || {
        let request = signed();
        let mut builder = client.post(format!("http://{address}/sms/twilio")).body(request.body);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        async move {
            let response = builder.send().await.unwrap();
            (response.status().as_u16(), response.text().await.unwrap())
        }
    };
    assert_eq!(post().await, (503, String::new()), "the handler failed");
    assert_eq!(post().await, (204, String::new()), "the redelivery is handled");
    assert_eq!(post().await, (200, "duplicate\n".to_owned()), "then it is a duplicate");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
