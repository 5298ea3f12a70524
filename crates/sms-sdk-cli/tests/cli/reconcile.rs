//! Reconciliation end to end through the emulator, over real HTTP and real stores: a send to the
//! created-then-dropped number ends unknown; the emulator's signed status webhook, verified and
//! fed to the reconciler, settles the key as accepted with the right provider id; the next send
//! replays without a request. Forged, replayed and unmatched webhooks change nothing. Then the
//! `idempotency reconcile` command finds such a message through the emulator's lookups.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::routing::post;
use sms_sdk::correlation::{CorrelationSecret, REFERENCE_PARAM};
use sms_sdk::provider::sinch::SinchWebhook;
use sms_sdk::reconcile::{Observed, Reconciler};
use sms_sdk::store::{self, Record, Settled, State as KeyState, Store};
use sms_sdk::webhook::{SmsEvent, WebhookRequest, WebhookVerifier};
use sms_sdk::{Client, ErrorKind, Message, PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};
use sms_sdk_cli::{Env, run};
use sms_sdk_emulator::{Emulator, RunningEmulator, credentials};

/// The created-then-dropped recipient: the message exists, the response never comes.
const DROPPED: &str = "+15005559007";
const FROM: &str = "+15005550006";
const SECRET: &str = "reconcile-test-correlation-secret";

type Captured = Arc<Mutex<Vec<(String, HeaderMap, Vec<u8>)>>>;

async fn capture(State(log): State<Captured>, uri: Uri, headers: HeaderMap, body: Bytes) -> StatusCode {
    log.lock().unwrap().push((uri.to_string(), headers, body.to_vec()));
    StatusCode::NO_CONTENT
}

/// A webhook receiver that keeps what it is sent, and its base URL.
async fn receiver() -> (String, Captured) {
    let log: Captured = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new().route("/status", post(capture)).with_state(log.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, log)
}

fn unique(tag: &str) -> String {
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
    format!("reconcile-{tag}-{nanos:x}-{}", std::process::id())
}

fn sqlite_url() -> String {
    let path = std::env::temp_dir().join(unique("db")).join("state.db");
    format!("sqlite:{}", path.display())
}

fn server_url(var: &str) -> String {
    std::env::var(var).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| {
        panic!("{var} is not set: `source /tmp/dev/env.sh` or run `scripts/test.sh`, which starts PostgreSQL and Redis")
    })
}

/// A new table on the test's DynamoDB-compatible server (moto's), made as `store init` makes it,
/// and its URL. The credentials are the throwaway ones scripts/test.sh exports.
async fn dynamodb_url() -> String {
    let endpoint = server_url("SMS_SDK_TEST_DYNAMODB_URL");
    let table = format!("sms-sdk-reconcile-{}", crate::servers::uuid_suffix());
    let url = format!("dynamodb://{table}?region=us-east-1&endpoint={endpoint}");
    store::dynamodb::DynamoStoreBuilder::from_url(&url).unwrap().create_table().await.unwrap();
    url
}

#[derive(Clone, Copy, Debug)]
enum Provider {
    Twilio,
    Telnyx,
    Plivo,
    Vonage,
    Sinch,
}

impl Provider {
    fn name(self) -> &'static str {
        match self {
            Self::Twilio => "twilio",
            Self::Telnyx => "telnyx",
            Self::Plivo => "plivo",
            Self::Vonage => "vonage",
            Self::Sinch => "sinch",
        }
    }

    fn client(self, emulator: &RunningEmulator, store: Arc<dyn Store>) -> Client {
        let builder = Client::builder();
        let builder = match self {
            Self::Twilio => builder.adapter(emulator.twilio().from(FROM).build().unwrap()),
            Self::Telnyx => builder.adapter(emulator.telnyx().from(FROM).build().unwrap()),
            Self::Plivo => builder.adapter(emulator.plivo().from(FROM).build().unwrap()),
            Self::Vonage => builder.adapter(emulator.vonage_application().from(FROM).build().unwrap()),
            Self::Sinch => builder.adapter(emulator.sinch().from(FROM).build().unwrap()),
        };
        builder
            .idempotency(store)
            .correlation(CorrelationSecret::new(SECRET).unwrap())
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap()
    }

    fn verify(self, url: &str, headers: &HeaderMap, body: &[u8]) -> Option<SmsEvent> {
        let request = WebhookRequest { method: "POST", url, headers, body };
        match self {
            Self::Twilio => TwilioWebhook::new(credentials::TWILIO_AUTH_TOKEN).unwrap().verify(&request).ok(),
            Self::Telnyx => TelnyxWebhook::new(credentials::TELNYX_PUBLIC_KEY).unwrap().verify(&request).ok(),
            Self::Plivo => PlivoWebhook::new(credentials::PLIVO_AUTH_TOKEN).unwrap().verify(&request).ok(),
            Self::Vonage => VonageWebhook::new(credentials::VONAGE_SIGNATURE_SECRET).unwrap().verify(&request).ok(),
            Self::Sinch => SinchWebhook::hmac(credentials::SINCH_WEBHOOK_SECRET).unwrap().verify(&request).ok(),
        }
    }
}

/// Waits until `log` holds at least `count` webhooks (the emulator posts them one step apart).
async fn wait_for(log: &Captured, count: usize) -> Vec<(String, HeaderMap, Vec<u8>)> {
    for _ in 0..200 {
        if log.lock().unwrap().len() >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    log.lock().unwrap().clone()
}

/// The whole story for one provider and one store.
async fn settles_through_the_emulator(provider: Provider, store_url: &str) {
    let (base, log) = receiver().await;
    let emulator = Emulator::builder().status_delay(Duration::from_millis(20)).start().await.unwrap();
    let store = store::open(store_url).await.unwrap();
    let client = provider.client(&emulator, Arc::clone(&store));
    let key = unique(provider.name());
    let message =
        Message::new(DROPPED, "Your code is 123456").idempotency_key(&key).webhook_url(format!("{base}/status"));

    // The message is created, the connection dropped: unknown.
    let error = client.send(&message).await.unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::Unknown(_)), "{provider:?}: {error:?}");
    assert_eq!(store.get(&key).await.unwrap().map(|r| r.state()), Some(KeyState::Unknown));
    let created: Vec<_> = emulator.messages().into_iter().filter(|m| m.to.as_deref() == Some(DROPPED)).collect();
    assert_eq!(created.len(), 1, "{provider:?}: one request");
    let provider_id = created[0].id.clone().expect("the emulator created the message");

    // Its status webhooks arrive, signed, with the reference (a query parameter, Vonage's
    // client_ref or Sinch's client_reference).
    let webhooks = wait_for(&log, 2).await;
    assert!(webhooks.len() >= 2, "{provider:?}: {} webhooks", webhooks.len());
    let reconciler = Reconciler::new(Arc::clone(&store));
    let (path, headers, body) = &webhooks[0];
    let url = format!("{base}{path}");
    match provider {
        Provider::Vonage | Provider::Sinch => {
            assert!(String::from_utf8_lossy(body).contains("client_ref"), "{provider:?}: no client reference");
        }
        Provider::Twilio | Provider::Telnyx | Provider::Plivo => {
            assert!(path.contains(REFERENCE_PARAM), "{provider:?}: no reference in {path}");
        }
    }
    assert!(!path.contains(&key) && !String::from_utf8_lossy(body).contains(&key), "the key itself leaked");

    // A forged webhook (one signed byte changed) fails verification: nothing reaches the store.
    let mut forged = body.clone();
    let last = forged.len() - 2;
    forged[last] ^= 0x01;
    assert!(provider.verify(&url, headers, &forged).is_none(), "{provider:?}: a forged webhook verified");

    // A verified event whose reference matches no record changes nothing.
    let event = provider.verify(&url, headers, body).expect("the emulator's webhook verifies");
    if !matches!(provider, Provider::Vonage | Provider::Sinch) {
        let stranger = format!("{base}/status?{REFERENCE_PARAM}=AAAAAAAAAAAAAAAAAAAAAA");
        let observed = reconciler.observe(&event, &stranger).await.unwrap();
        assert_eq!(observed, Observed::Reference(Settled::NotFound), "{provider:?}");
        assert_eq!(store.get(&key).await.unwrap().map(|r| r.state()), Some(KeyState::Unknown));
    }

    // The real one settles the key as accepted with the provider's id.
    let observed = reconciler.observe(&event, &url).await.unwrap();
    assert_eq!(observed, Observed::Reference(Settled::Accepted { key: key.clone() }), "{provider:?}");
    let Some(Record::Accepted { result, .. }) = store.get(&key).await.unwrap() else { panic!("not accepted") };
    assert_eq!((result.provider.as_str(), result.provider_id.as_str()), (provider.name(), provider_id.as_str()));

    // The same webhook again, and the next one in the sequence, change nothing more.
    let replayed = reconciler.observe(&event, &url).await.unwrap();
    assert_eq!(
        replayed,
        Observed::Reference(Settled::Unchanged { key: key.clone(), state: KeyState::Accepted }),
        "{provider:?}"
    );
    let (path, headers, body) = &webhooks[1];
    let next = format!("{base}{path}");
    let later = provider.verify(&next, headers, body).expect("the second webhook verifies");
    assert!(matches!(reconciler.observe(&later, &next).await.unwrap(), Observed::Reference(Settled::Unchanged { .. })));

    // The next send with the key replays, without a request.
    let before = emulator.messages().len();
    let receipt = client.send(&message).await.unwrap();
    assert!(receipt.replayed, "{provider:?}");
    assert_eq!(receipt.provider_id, provider_id);
    assert_eq!(emulator.messages().len(), before, "{provider:?}: the replay made a request");
    emulator.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_twilio_status_webhook_settles_unknown_sqlite() {
    settles_through_the_emulator(Provider::Twilio, &sqlite_url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_telnyx_status_webhook_settles_unknown_sqlite() {
    settles_through_the_emulator(Provider::Telnyx, &sqlite_url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_plivo_status_webhook_settles_unknown_sqlite() {
    settles_through_the_emulator(Provider::Plivo, &sqlite_url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_vonage_status_webhook_settles_unknown_sqlite() {
    settles_through_the_emulator(Provider::Vonage, &sqlite_url()).await;
}

#[tokio::test]
async fn reconcile_sinch_status_webhook_settles_unknown_sqlite() {
    settles_through_the_emulator(Provider::Sinch, &sqlite_url()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_twilio_status_webhook_settles_unknown_postgres() {
    settles_through_the_emulator(Provider::Twilio, &server_url("SMS_SDK_TEST_POSTGRES_URL")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_vonage_status_webhook_settles_unknown_redis() {
    settles_through_the_emulator(Provider::Vonage, &server_url("SMS_SDK_TEST_REDIS_URL")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_twilio_status_webhook_settles_unknown_dynamodb() {
    settles_through_the_emulator(Provider::Twilio, &dynamodb_url().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_twilio_status_webhook_settles_unknown_redis() {
    settles_through_the_emulator(Provider::Twilio, &server_url("SMS_SDK_TEST_REDIS_URL")).await;
}

/// The axum integration feeds the reconciler itself: the emulator's webhooks posted to a real
/// `Verified<TwilioWebhook>` route settle the key; a forged one is refused (401) and changes
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_through_the_axum_integration() {
    use axum::Extension;
    use axum::extract::FromRef;
    use sms_sdk::webhook::axum::Verified;

    #[derive(Clone, FromRef)]
    struct Hooks {
        twilio: TwilioWebhook,
    }

    async fn handle(_: Verified<TwilioWebhook>) -> StatusCode {
        StatusCode::NO_CONTENT
    }

    let store = store::open(&sqlite_url()).await.unwrap();
    let hooks = Hooks { twilio: TwilioWebhook::new(credentials::TWILIO_AUTH_TOKEN).unwrap() };
    let app: Router = Router::new()
        .route("/status", post(handle))
        .layer(Extension(sms_sdk::webhook::SharedObserver::new(Reconciler::new(Arc::clone(&store)))))
        .with_state(hooks);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { sms_sdk::webhook::axum::serve(listener, app).await });

    let emulator = Emulator::builder().status_delay(Duration::from_millis(20)).start().await.unwrap();
    let client = Provider::Twilio.client(&emulator, Arc::clone(&store));
    let key = unique("axum");
    let message = Message::new(DROPPED, "Hello").idempotency_key(&key).webhook_url(format!("{base}/status"));
    assert!(client.send(&message).await.is_err());
    // A second unknown key whose webhooks go elsewhere: only a forgery could reach the route.
    let lonely = unique("axum-lonely");
    let elsewhere = Message::new(DROPPED, "Hello").idempotency_key(&lonely).webhook_url(format!("{base}/nowhere"));
    assert!(client.send(&elsewhere).await.is_err());

    let reference = sms_sdk::correlation::reference(&CorrelationSecret::new(SECRET).unwrap(), &lonely);
    let forged = reqwest_free_post(
        &format!("{base}/status?{REFERENCE_PARAM}={reference}"),
        "MessageSid=SM0123456789abcdef0123456789abcdef&MessageStatus=delivered&To=%2B15005559007",
    )
    .await;
    assert_eq!(forged, 401);
    assert_eq!(store.get(&lonely).await.unwrap().map(|r| r.state()), Some(KeyState::Unknown));

    let mut state = None;
    for _ in 0..200 {
        state = store.get(&key).await.unwrap().map(|r| r.state());
        if state == Some(KeyState::Accepted) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(state, Some(KeyState::Accepted), "the integration did not settle the key");
    let before = emulator.messages().len();
    assert!(client.send(&message).await.unwrap().replayed);
    assert_eq!(emulator.messages().len(), before);
    assert_eq!(store.get(&lonely).await.unwrap().map(|r| r.state()), Some(KeyState::Unknown));
    emulator.shutdown().await;
}

/// POSTs a form with a made-up Twilio signature over plain HTTP/1.1; returns the status.
async fn reqwest_free_post(url: &str, form: &str) -> u16 {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = tokio::net::TcpStream::connect(host).await.unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         X-Twilio-Signature: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{form}",
        form.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    answer.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0)
}

/// Without a correlation secret nothing is attached: the callback URL is the caller's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconcile_without_a_secret_attaches_no_reference() {
    let (base, _log) = receiver().await;
    let emulator = Emulator::builder().status_delay(Duration::from_millis(20)).start().await.unwrap();
    let client = Client::builder()
        .adapter(emulator.twilio().from(FROM).build().unwrap())
        .idempotency(store::MemoryStore::new())
        .build()
        .unwrap();
    let url = format!("{base}/status");
    let message = Message::new("+14155550123", "Hi").idempotency_key(unique("plain")).webhook_url(&url);
    client.send(&message).await.unwrap();
    assert_eq!(emulator.messages()[0].callback_url.as_deref(), Some(url.as_str()));
    emulator.shutdown().await;
}

/// The emulator on its own runtime, for the command (which runs its own).
struct Background {
    runtime: tokio::runtime::Runtime,
    emulator: Option<RunningEmulator>,
}

impl Background {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let emulator = runtime.block_on(Emulator::builder().status_delay(Duration::from_millis(20)).start()).unwrap();
        Self { runtime, emulator: Some(emulator) }
    }

    fn emulator(&self) -> &RunningEmulator {
        self.emulator.as_ref().unwrap()
    }

    fn env(&self) -> Env {
        let base = self.emulator().base_url();
        [
            ("TWILIO_ACCOUNT_SID", credentials::TWILIO_ACCOUNT_SID),
            ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN),
            ("TWILIO_FROM", FROM),
            ("SMS_SDK_TWILIO_BASE_URL", base.as_str()),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(emulator) = self.emulator.take() {
            self.runtime.block_on(emulator.shutdown());
        }
    }
}

impl Background {
    /// The command's variables for the emulator's Sinch API alone.
    fn sinch_env(&self) -> Env {
        let own = [
            ("SINCH_SERVICE_PLAN_ID", credentials::SINCH_SERVICE_PLAN_ID),
            ("SINCH_API_TOKEN", credentials::SINCH_API_TOKEN),
            ("SINCH_FROM", FROM),
        ];
        self.provider_env(&own, "SINCH")
    }

    /// `own` and the base URL variable of the provider whose variables start with `prefix`,
    /// pointing at the emulator.
    fn provider_env(&self, own: &[(&str, &str)], prefix: &str) -> Env {
        let base = (format!("SMS_SDK_{prefix}_BASE_URL"), self.emulator().base_url());
        own.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).chain(std::iter::once(base)).collect()
    }
}

fn command(args: &[&str], env: &Env) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(args.iter().copied(), env, &mut out, &mut err);
    (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

#[test]
fn reconcile_command_finds_the_created_message_and_apply_settles_it() {
    let background = Background::start();
    let env = background.env();
    let store = sqlite_url();
    let key = unique("cli");
    let send = ["send", "--to", DROPPED, "--body", "Order 42 shipped", "--idempotency-key", &key, "--store", &store];
    let (code, _, err) = command(&send, &env);
    assert_eq!(code, 3, "the send is unknown: {err}");
    let sid = background.emulator().messages()[0].id.clone().unwrap();

    // The record keeps its recipient: a bare reconcile lists by it and finds the message.
    let (code, out, _) = command(&["idempotency", "reconcile", &key, "--store", &store], &env);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains(&format!("--sent --provider twilio --provider-id {sid}")), "{out}");
    // A --to that names another recipient is not this key's message: not looked up.
    let (code, out, _) = command(&["idempotency", "reconcile", &key, "--to", "+14155550999", "--store", &store], &env);
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("not the --to +1********99: not looked up") && !out.contains("--not-sent"), "{out}");

    // With the recipient, Twilio's list finds the created message and prints the command.
    let look = ["idempotency", "reconcile", "--to", DROPPED, "--since", "1h", "--store", &store];
    let (code, out, err) = command(&look, &env);
    assert_eq!(code, 3, "still unresolved: {out}{err}");
    let expected = format!("sms-sdk idempotency resolve {key} --sent --provider twilio --provider-id {sid}");
    assert!(out.contains(&expected), "{out}");
    assert!(out.contains("match") && !out.contains("5559007"), "masked: {out}");

    // JSON says the same.
    let mut json_args = look.to_vec();
    json_args.push("--json");
    let (_, out, _) = command(&json_args, &env);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let entry = json["keys"].as_array().unwrap().iter().find(|k| k["key"] == key.as_str()).unwrap().clone();
    assert_eq!(entry["messages"][0]["provider_id"], sid.as_str());
    assert_eq!(entry["messages"][0]["matches"], true);
    assert_eq!(entry["resolved"], false);

    // Two more keys whose messages have the same recipient and text: each sees two matching
    // messages, which --apply leaves to the operator.
    let twins = [unique("cli-twin-a"), unique("cli-twin-b")];
    for twin in &twins {
        let other = ["send", "--to", DROPPED, "--body", "Same text", "--idempotency-key", twin, "--store", &store];
        assert_eq!(command(&other, &env).0, 3);
    }

    // --apply settles exactly the key whose message matched once, and never sends.
    let before = background.emulator().messages().len();
    let mut apply = look.to_vec();
    apply.extend(["--apply", "--json"]);
    let (code, out, err) = command(&apply, &env);
    assert_eq!(code, 3, "the twins are left: {out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let resolved =
        |k: &str| json["keys"].as_array().unwrap().iter().find(|e| e["key"] == k).unwrap()["resolved"].clone();
    assert_eq!(resolved(&key), true, "{out}");
    assert_eq!((resolved(&twins[0]), resolved(&twins[1])), (false.into(), false.into()), "{out}");
    assert_eq!(json["unresolved"], 2, "{out}");
    assert_eq!(background.emulator().messages().len(), before, "reconcile sent something");
    let (code, out, _) = command(&["idempotency", "show", &key, "--store", &store], &env);
    assert_eq!(code, 0);
    assert!(out.contains("accepted") && out.contains(&sid), "{out}");

    // The next send replays without a request.
    let (code, out, err) = command(&send, &env);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(background.emulator().messages().len(), before, "the replay made a request");

    // A key that is not unresolved is a usage error.
    let (code, _, err) = command(&["idempotency", "reconcile", &key, "--store", &store], &env);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn reconcile_command_usage_errors() {
    let env = Env::default();
    let (code, _, err) = command(&["idempotency", "reconcile", "--since", "forever", "--store", "memory"], &env);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = command(&["idempotency", "reconcile", "--to", "12", "--store", "memory"], &env);
    assert_eq!(code, 2, "{err}");
    let (code, out, _) = command(&["idempotency", "reconcile", "--store", "memory"], &env);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("no unresolved keys"), "{out}");
}

/// Sinch, Infobip or Bandwidth through the command: an unknown send is found by the provider's
/// list (Sinch's batches, Infobip's logs, Bandwidth's messages: by recipient and start date), and
/// `--apply` settles it (Bandwidth's list has no text to match: the suggested resolve does); the
/// next send replays.
fn reconcile_finds_and_apply_settles(provider: &str, env: impl Fn(&Background) -> Env) {
    let background = Background::start();
    let env = env(&background);
    let store = sqlite_url();
    let key = unique(&format!("cli-{provider}"));
    let send = ["send", "--to", DROPPED, "--body", "Order shipped", "--idempotency-key", &key, "--store", &store];
    let (code, _, err) = command(&send, &env);
    assert_eq!(code, 3, "{provider}: the send is unknown: {err}");
    let id = background.emulator().messages()[0].id.clone().unwrap();
    let look = ["idempotency", "reconcile", "--to", DROPPED, "--since", "1h", "--store", &store];
    let (code, out, err) = command(&look, &env);
    assert_eq!(code, 3, "{provider}: still unresolved: {out}{err}");
    assert!(
        out.contains(&format!("sms-sdk idempotency resolve {key} --sent --provider {provider} --provider-id {id}")),
        "{provider}: {out}"
    );
    if provider == "bandwidth" {
        // Bandwidth's list carries no text to match: the key is listed, never settled by it,
        // and the suggested command settles it.
        assert!(out.contains("no match") && out.contains("none can be ruled out"), "{out}");
        let resolve = ["idempotency", "resolve", &key, "--sent", "--provider", provider, "--provider-id", &id];
        let (code, out, err) = command(&[&resolve[..], &["--store", &store]].concat(), &env);
        assert_eq!(code, 0, "{out}{err}");
    } else {
        let mut apply = look.to_vec();
        apply.push("--apply");
        let (code, out, err) = command(&apply, &env);
        assert_eq!(code, 0, "{provider}: {out}{err}");
    }
    let before = background.emulator().messages().len();
    let (code, out, err) = command(&send, &env);
    assert_eq!(code, 0, "{provider}: {out}{err}");
    assert!(out.contains("replayed"), "{provider}: {out}");
    assert_eq!(background.emulator().messages().len(), before, "{provider}: the replay made a request");
}

#[test]
fn reconcile_command_finds_a_sinch_batch_and_apply_settles_it() {
    reconcile_finds_and_apply_settles("sinch", Background::sinch_env);
}

#[test]
fn reconcile_command_finds_an_infobip_log_and_apply_settles_it() {
    reconcile_finds_and_apply_settles("infobip", |background| {
        background.provider_env(&[("INFOBIP_API_KEY", credentials::INFOBIP_API_KEY), ("INFOBIP_FROM", FROM)], "INFOBIP")
    });
}

/// Bandwidth's list carries no text: with two messages listed to the recipient, neither matches
/// by text, and nothing proves the key's was not sent, so `--not-sent` is never suggested and
/// `--apply` leaves the key unknown.
#[test]
fn reconcile_never_suggests_not_sent_when_listed_messages_have_no_text() {
    let background = Background::start();
    let env = background.provider_env(&bandwidth_variables(), "BANDWIDTH");
    let store = sqlite_url();
    let (first, second) = (unique("bw-first"), unique("bw-second"));
    for key in [&first, &second] {
        let send = ["send", "--to", DROPPED, "--body", "Order shipped", "--idempotency-key", key, "--store", &store];
        assert_eq!(command(&send, &env).0, 3);
    }
    let look = ["idempotency", "reconcile", &first, "--since", "1h", "--store", &store];
    let (code, out, err) = command(&look, &env);
    assert_eq!(code, 3, "{out}{err}");
    let not_sent = format!("resolve {first} --not-sent");
    assert!(!out.contains(&not_sent) && !err.contains(&not_sent), "{out}{err}");
    assert!(out.contains("none can be ruled out"), "{out}");
    let (code, out, err) = command(&[&look[..], &["--apply"]].concat(), &env);
    assert_eq!(code, 3, "{out}{err}");
    let (_, shown, _) = command(&["idempotency", "show", &first, "--store", &store], &env);
    assert!(shown.contains("unknown"), "{shown}");
}

/// The command's variables of the emulator's Bandwidth API (its API user).
fn bandwidth_variables() -> [(&'static str, &'static str); 5] {
    [
        ("BANDWIDTH_ACCOUNT_ID", credentials::BANDWIDTH_ACCOUNT_ID),
        ("BANDWIDTH_APPLICATION_ID", credentials::BANDWIDTH_APPLICATION_ID),
        ("BANDWIDTH_USERNAME", credentials::BANDWIDTH_API_USER),
        ("BANDWIDTH_PASSWORD", credentials::BANDWIDTH_API_PASSWORD),
        ("BANDWIDTH_FROM", FROM),
    ]
}

#[test]
fn reconcile_command_lists_a_bandwidth_message_and_its_resolve_settles_it() {
    reconcile_finds_and_apply_settles("bandwidth", |background| {
        background.provider_env(&bandwidth_variables(), "BANDWIDTH")
    });
}
