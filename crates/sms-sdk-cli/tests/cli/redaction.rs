//! The redaction audit: one run through the library, the emulator and the command, end to end,
//! with a `tracing` subscriber (and a `log` logger) capturing every level, after which no auth
//! token, API key, private key, store password, message body or full phone number used here may
//! appear in the captured logs, in any error's Display, Debug or JSON, in any receipt, record,
//! listing or event as printed, or in anything the command wrote.
//!
//! It drives: sends through all four adapters against the emulator (accepted, every rejection,
//! every unknown, rate limits, failover, all rejected) and against a hostile server that echoes
//! the request into its error; status and inbound webhooks, signed by the emulator, through the
//! axum integration, and forged ones through the verifiers and the integration; the
//! idempotency stores (memory, SQLite, PostgreSQL with a password in its URL, Redis, and Redis
//! with a password the server refuses); and the command with its output streams. One test,
//! because the subscriber is global (the command's runtime logs from its own threads).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::fmt::{Debug, Write as _};
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use base64::Engine as _;
use serde_json::json;
use sms_sdk::provider::sinch::{Sinch, SinchWebhook};
use sms_sdk::store::{Filter, Page, Store};
use sms_sdk::testing::webhooks::{SignedRequest, signed_twilio_request};
use sms_sdk::webhook::WebhookVerifier;
use sms_sdk::webhook::axum::{Verified, VerifiedAll, serve};
use sms_sdk::{
    Adapter, Client, ClientBuilder, Failover, Message, Plivo, PlivoWebhook, RetryPolicy, Telnyx, TelnyxWebhook, Twilio,
    TwilioWebhook, Vonage, VonageWebhook,
};
use sms_sdk::{Bandwidth, BandwidthWebhook, Infobip, InfobipWebhook};
use sms_sdk_cli::Env;
use sms_sdk_emulator::credentials::VONAGE_APPLICATION_ID;
use sms_sdk_emulator::credentials::{
    BANDWIDTH_ACCOUNT_ID, BANDWIDTH_API_PASSWORD, BANDWIDTH_API_USER, BANDWIDTH_APPLICATION_ID,
    BANDWIDTH_CALLBACK_PASSWORD, BANDWIDTH_CALLBACK_USER, BANDWIDTH_CLIENT_ID, BANDWIDTH_CLIENT_SECRET,
    INFOBIP_API_KEY, INFOBIP_WEBHOOK_PASSWORD, INFOBIP_WEBHOOK_USER, PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN, SINCH_API_TOKEN,
    SINCH_SERVICE_PLAN_ID, SINCH_WEBHOOK_SECRET, TELNYX_API_KEY, TELNYX_PUBLIC_KEY, TWILIO_ACCOUNT_SID,
    TWILIO_AUTH_TOKEN, VONAGE_API_KEY, VONAGE_API_SECRET, VONAGE_PRIVATE_KEY, VONAGE_SIGNATURE_SECRET,
};
use sms_sdk_emulator::{Emulator, RunningEmulator, magic};

/// The providers whose APIs, webhooks and command paths the audit goes through.
const PROVIDERS: [&str; 7] = ["twilio", "telnyx", "plivo", "vonage", "sinch", "infobip", "bandwidth"];

/// The sender of every send.
const FROM: &str = "+15005550006";
/// An ordinary recipient (accepted, delivered).
const TO: &str = "+14155550199";
/// The sender of inbound messages.
const INBOUND_FROM: &str = "+13125550142";
/// Every message body carries this word (and a number), so any body is found by it.
const BODY_MARK: &str = "quetzal";
/// The hostile server's credentials, and the stores' passwords.
const ECHO_TOKEN: &str = "audit-echo-token-7f3a9c51";
const ECHO_KEY: &str = "KEY_audit_echo_telnyx_5e8d";
const PG_PASSWORD: &str = "audit-pg-password-4d2e88";
const REDIS_PASSWORD: &str = "audit-redis-password-9b1c27";
/// The webhook secrets of the forged requests.
const FORGED_TOKEN: &str = "audit-forged-webhook-token-31c4";

fn body(n: usize) -> String {
    format!("Your {BODY_MARK} code is {}", 40_000_000 + n)
}

fn basic(user: &str, password: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

/// Every secret of the run, as it must never be seen: credentials (and their Basic forms), the
/// private key's body, store passwords, message bodies, and the middle digits of every number.
fn secrets() -> Vec<(String, String)> {
    let mut secrets: Vec<(&str, String)> = vec![
        ("Twilio auth token", TWILIO_AUTH_TOKEN.into()),
        ("Twilio Basic credentials", basic(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN)),
        ("Telnyx API key", TELNYX_API_KEY.into()),
        ("Plivo auth token", PLIVO_AUTH_TOKEN.into()),
        ("Plivo Basic credentials", basic(PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN)),
        ("Vonage API secret", VONAGE_API_SECRET.into()),
        ("Vonage Basic credentials", basic(VONAGE_API_KEY, VONAGE_API_SECRET)),
        ("Vonage signature secret", VONAGE_SIGNATURE_SECRET.into()),
        ("Sinch API token", SINCH_API_TOKEN.into()),
        ("Sinch webhook secret", SINCH_WEBHOOK_SECRET.into()),
        ("Infobip API key", INFOBIP_API_KEY.into()),
        ("Infobip webhook password", INFOBIP_WEBHOOK_PASSWORD.into()),
        ("Infobip webhook Basic credentials", basic(INFOBIP_WEBHOOK_USER, INFOBIP_WEBHOOK_PASSWORD)),
        ("Bandwidth API password", BANDWIDTH_API_PASSWORD.into()),
        ("Bandwidth Basic credentials", basic(BANDWIDTH_API_USER, BANDWIDTH_API_PASSWORD)),
        ("Bandwidth client secret", BANDWIDTH_CLIENT_SECRET.into()),
        ("Bandwidth client Basic credentials", basic(BANDWIDTH_CLIENT_ID, BANDWIDTH_CLIENT_SECRET)),
        ("Bandwidth callback password", BANDWIDTH_CALLBACK_PASSWORD.into()),
        ("Bandwidth callback Basic credentials", basic(BANDWIDTH_CALLBACK_USER, BANDWIDTH_CALLBACK_PASSWORD)),
        ("echo token", ECHO_TOKEN.into()),
        ("echo Basic credentials", basic(TWILIO_ACCOUNT_SID, ECHO_TOKEN)),
        ("echo key", ECHO_KEY.into()),
        ("PostgreSQL password", PG_PASSWORD.into()),
        ("Redis password", REDIS_PASSWORD.into()),
        ("forged webhook token", FORGED_TOKEN.into()),
        ("message body", BODY_MARK.into()),
    ];
    // Any line of the private key's body.
    for line in VONAGE_PRIVATE_KEY.lines().filter(|l| !l.starts_with("-----") && l.len() > 20) {
        secrets.push(("Vonage private key", line.to_owned()));
    }
    let numbers = RECIPIENTS.into_iter().chain([FROM, INBOUND_FROM]);
    for number in numbers {
        // What a mask hides: everything but `+1` and the last two digits.
        secrets.push(("a full phone number", number[2..number.len() - 2].to_owned()));
    }
    secrets.into_iter().map(|(what, value)| (what.to_owned(), value)).collect()
}

/// Everything the run captured: logs (both facades) and every rendered value.
#[derive(Default)]
struct Seen {
    logs: Arc<Mutex<Vec<u8>>>,
    rendered: Vec<(String, String)>,
}

impl Seen {
    /// Keeps `text`, labelled, for the audit.
    fn add(&mut self, label: impl Into<String>, text: impl Into<String>) {
        self.rendered.push((label.into(), text.into()));
    }

    /// Keeps a value's Debug.
    fn debug(&mut self, label: &str, value: &impl Debug) {
        self.add(label, format!("{value:?}"));
    }

    /// Keeps an error's Display, Debug and JSON record, and those of every error under it.
    fn error(&mut self, label: &str, error: &sms_sdk::Error) {
        let json = serde_json::to_string(&error.to_record()).unwrap();
        self.add(label, format!("{error} | {error:?} | {} | {json}", serde_json::to_string(error).unwrap()));
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            self.add(format!("{label}: source"), format!("{cause} | {cause:?}"));
            source = cause.source();
        }
        for rejection in error.rejections() {
            self.error(&format!("{label}: rejection"), rejection);
        }
    }

    /// Keeps a send's result: a receipt's Debug and JSON, or the error.
    fn result(&mut self, label: &str, result: &Result<sms_sdk::Receipt, sms_sdk::Error>) {
        match result {
            Ok(receipt) => self.add(label, format!("{receipt:?} | {}", serde_json::to_string(receipt).unwrap())),
            Err(error) => self.error(label, error),
        }
    }
}

/// A `tracing` writer and a `log` logger into one buffer.
#[derive(Clone)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let line = format!("log {} {}: {}\n", record.level(), record.target(), record.args());
        self.0.lock().unwrap().extend_from_slice(line.as_bytes());
    }
    fn flush(&self) {}
}

/// Installs the capture as the global subscriber and logger, at every level.
fn capture_everything(logs: &Arc<Mutex<Vec<u8>>>) {
    let writer = Capture(Arc::clone(logs));
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::FULL)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    log::set_boxed_logger(Box::new(Capture(Arc::clone(logs)))).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
}

/// The verifiers of the webhook server, with the emulator's secrets.
#[derive(Clone, FromRef)]
struct Hooks {
    twilio: TwilioWebhook,
    telnyx: TelnyxWebhook,
    plivo: PlivoWebhook,
    vonage: VonageWebhook,
    sinch: SinchWebhook,
    infobip: InfobipWebhook,
    bandwidth: BandwidthWebhook,
    verified: Arc<AtomicUsize>,
}

/// [`receive`] for the providers that batch their events (Infobip, Bandwidth).
async fn receive_all<V>(State(hooks): State<Hooks>, VerifiedAll { events, .. }: VerifiedAll<V>) -> StatusCode
where
    V: WebhookVerifier + FromRef<Hooks> + 'static,
{
    for event in events {
        tracing::info!(?event, "webhook received");
        hooks.verified.fetch_add(1, Ordering::SeqCst);
    }
    StatusCode::NO_CONTENT
}

/// Counts a verified event and logs it (as an application would: its Debug, at info).
async fn receive<V>(State(hooks): State<Hooks>, Verified { event, .. }: Verified<V>) -> StatusCode
where
    V: WebhookVerifier + FromRef<Hooks> + 'static,
{
    tracing::info!(?event, "webhook received");
    hooks.verified.fetch_add(1, Ordering::SeqCst);
    StatusCode::NO_CONTENT
}

/// The axum integration on loopback, verifying each provider's webhooks on its own path.
async fn webhook_server() -> (SocketAddr, Arc<AtomicUsize>) {
    let verified = Arc::new(AtomicUsize::new(0));
    let hooks = Hooks {
        twilio: TwilioWebhook::new(TWILIO_AUTH_TOKEN).unwrap(),
        telnyx: TelnyxWebhook::new(TELNYX_PUBLIC_KEY).unwrap(),
        plivo: PlivoWebhook::new(PLIVO_AUTH_TOKEN).unwrap(),
        vonage: VonageWebhook::new(VONAGE_SIGNATURE_SECRET).unwrap(),
        sinch: SinchWebhook::hmac(SINCH_WEBHOOK_SECRET).unwrap(),
        infobip: InfobipWebhook::basic(INFOBIP_WEBHOOK_USER, INFOBIP_WEBHOOK_PASSWORD).unwrap(),
        bandwidth: BandwidthWebhook::basic(BANDWIDTH_CALLBACK_USER, BANDWIDTH_CALLBACK_PASSWORD).unwrap(),
        verified: Arc::clone(&verified),
    };
    let app = Router::new()
        .route("/twilio", post(receive::<TwilioWebhook>))
        .route("/telnyx", post(receive::<TelnyxWebhook>))
        .route("/plivo", post(receive::<PlivoWebhook>))
        .route("/vonage", post(receive::<VonageWebhook>))
        .route("/sinch", post(receive::<SinchWebhook>))
        .route("/infobip", post(receive_all::<InfobipWebhook>))
        .route("/bandwidth", post(receive_all::<BandwidthWebhook>))
        .with_state(hooks);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { serve(listener, app).body_read_timeout(Duration::from_secs(2)).await });
    (address, verified)
}

/// A provider that answers every request with an error whose every text field echoes the whole
/// request (headers and body), as a misbehaving proxy might.
async fn echo_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = vec![0; 64 * 1024];
            let n = stream.read(&mut request).await.unwrap_or(0);
            let echo = String::from_utf8_lossy(&request[..n]).into_owned();
            let reply = json!({
                "code": 21211, "message": echo, "error": echo, "title": echo, "detail": echo, "api_id": "a1",
                "errors": [{"code": "10002", "title": echo, "detail": echo}],
                "type": "https://developer.nexmo.com/api-errors/messages-olympus#1120",
            })
            .to_string();
            let response = format!(
                "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        }
    });
    format!("http://{address}")
}

/// A client over `adapter` with fast retries (a `Retry-After` longer than 20 ms stops them)
/// and a short timeout (the held send).
fn client(adapter: impl Adapter) -> ClientBuilder {
    Client::builder()
        .adapter(adapter)
        .retry(RetryPolicy::new(2, Duration::from_millis(1), Duration::from_millis(20)))
        .timeout(Duration::from_millis(800))
}

/// Builds a client builder, again and again.
type Builder = Box<dyn Fn() -> ClientBuilder + Send + Sync>;

/// The adapters at `base`, with `token` (Twilio's and Plivo's), `key` (Telnyx's), `secret`
/// (Vonage's) and `sinch` (Sinch's API token).
fn adapters(
    base: &str,
    token: &'static str,
    key: &'static str,
    secret: &'static str,
    sinch: &'static str,
) -> Vec<(&'static str, Builder)> {
    let base = base.to_owned();
    let (twilio, telnyx, plivo, vonage, sinch_base) = (base.clone(), base.clone(), base.clone(), base.clone(), base);
    let (infobip, bandwidth, bandwidth_oauth) = (sinch_base.clone(), sinch_base.clone(), sinch_base.clone());
    vec![
        // Infobip and Bandwidth with the emulator's credentials (which the audit also looks for).
        ("infobip", Box::new(move || client(Infobip::builder(&infobip, INFOBIP_API_KEY).from(FROM).build().unwrap()))),
        (
            "bandwidth",
            Box::new(move || {
                let basic = Bandwidth::basic(
                    BANDWIDTH_ACCOUNT_ID,
                    BANDWIDTH_APPLICATION_ID,
                    BANDWIDTH_API_USER,
                    BANDWIDTH_API_PASSWORD,
                );
                client(basic.from(FROM).base_url(&bandwidth).build().unwrap())
            }),
        ),
        (
            "bandwidth",
            Box::new(move || {
                let oauth = Bandwidth::oauth2(
                    BANDWIDTH_ACCOUNT_ID,
                    BANDWIDTH_APPLICATION_ID,
                    BANDWIDTH_CLIENT_ID,
                    BANDWIDTH_CLIENT_SECRET,
                );
                let token_url = format!("{bandwidth_oauth}/api/v1/oauth2/token");
                client(oauth.from(FROM).base_url(&bandwidth_oauth).token_url(token_url).build().unwrap())
            }),
        ),
        (
            "twilio",
            Box::new(move || {
                client(Twilio::builder(TWILIO_ACCOUNT_SID, token).from(FROM).base_url(&twilio).build().unwrap())
            }),
        ),
        ("telnyx", Box::new(move || client(Telnyx::builder(key).from(FROM).base_url(&telnyx).build().unwrap()))),
        (
            "plivo",
            Box::new(move || client(Plivo::builder(PLIVO_AUTH_ID, token).from(FROM).base_url(&plivo).build().unwrap())),
        ),
        (
            "vonage",
            Box::new(move || {
                client(Vonage::basic(VONAGE_API_KEY, secret).from(FROM).base_url(&vonage).build().unwrap())
            }),
        ),
        (
            "sinch",
            Box::new(move || {
                client(Sinch::builder(SINCH_SERVICE_PLAN_ID, sinch).from(FROM).base_url(&sinch_base).build().unwrap())
            }),
        ),
    ]
}

/// Every recipient the emulator treats specially, and an ordinary one.
const RECIPIENTS: [&str; 15] = [
    TO,
    magic::INVALID_NUMBER,
    magic::SENDER_CANNOT_ROUTE,
    magic::NO_PERMISSION,
    magic::OPTED_OUT,
    magic::CANNOT_RECEIVE,
    magic::UNDELIVERED,
    magic::SERVER_ERROR,
    magic::HOLD,
    magic::RESET,
    magic::RATE_LIMITED_ONCE,
    magic::BARE_429,
    magic::UNREADABLE,
    magic::CREATED_THEN_DROPPED,
    magic::RATE_LIMITED,
];

/// One provider's sends to the emulator: every recipient (status webhooks to `hooks`), and
/// keyed sends with each store (sent, replayed, conflicting), with each record as stored.
async fn provider_sends(
    provider: &'static str,
    builder: Builder,
    stores: Vec<(&'static str, Arc<dyn Store>)>,
    hooks: SocketAddr,
) -> Vec<(String, String)> {
    let mut seen = Seen::default();
    for (n, to) in RECIPIENTS.into_iter().enumerate() {
        let message = Message::new(to, body(n)).webhook_url(format!("http://{hooks}/{provider}"));
        let client = builder().build().unwrap();
        seen.debug("client", &client);
        seen.result(&format!("{provider} send to {to}"), &client.send(&message).await);
    }
    for (store_name, store) in stores {
        let client = builder().idempotency(Arc::clone(&store)).build().unwrap();
        for (n, to) in [TO, magic::INVALID_NUMBER, magic::SERVER_ERROR].into_iter().enumerate() {
            let key = format!("audit:{provider}:{store_name}:{n}:{}", std::process::id());
            let message = Message::new(to, body(100 + n)).idempotency_key(&key);
            seen.result(&format!("{provider} keyed send to {to} ({store_name})"), &client.send(&message).await);
            seen.result("replay", &client.send(&message).await);
            let other = Message::new(to, body(200 + n)).idempotency_key(&key);
            seen.result("conflict", &client.send(&other).await);
            seen.debug("record", &store.get(&key).await);
        }
    }
    seen.rendered
}

/// Sends through all four adapters to every recipient, keyed with every store, through
/// failover, and to the echoing server (whose errors must keep nothing of the request).
async fn sends(
    seen: &mut Seen,
    emulator: &RunningEmulator,
    stores: &[(&'static str, Arc<dyn Store>)],
    hooks: SocketAddr,
) {
    let base = emulator.base_url();
    let tasks: Vec<_> = adapters(&base, TWILIO_AUTH_TOKEN, TELNYX_API_KEY, VONAGE_API_SECRET, SINCH_API_TOKEN)
        .into_iter()
        .map(|(provider, builder)| tokio::spawn(provider_sends(provider, builder, stores.to_vec(), hooks)))
        .collect();
    for task in tasks {
        seen.rendered.extend(task.await.unwrap());
    }
    // The application JWT of Vonage, signed with the private key.
    let application =
        Vonage::application(VONAGE_APPLICATION_ID, VONAGE_PRIVATE_KEY).from(FROM).base_url(&base).build().unwrap();
    seen.debug("vonage application adapter", &application);
    seen.result(
        "vonage application send",
        &client(application).build().unwrap().send(&Message::new(TO, body(300))).await,
    );
    // Failover: an unreachable Twilio, then the emulator's Telnyx; and all rejected.
    let unreachable = Twilio::builder(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN)
        .from(FROM)
        .base_url("http://127.0.0.1:9")
        .build()
        .unwrap();
    let telnyx = Telnyx::builder(TELNYX_API_KEY).from(FROM).base_url(&base).build().unwrap();
    let failover = client(unreachable).adapter(telnyx).failover(Failover::OnEligibleRejection).build().unwrap();
    for to in [TO, magic::SENDER_CANNOT_ROUTE, magic::SERVER_ERROR] {
        seen.result(&format!("failover to {to}"), &failover.send(&Message::new(to, body(400))).await);
    }
    // The echoing provider, through every adapter built with the echo secrets, with a store.
    let echo = echo_server().await;
    for (provider, builder) in adapters(&echo, ECHO_TOKEN, ECHO_KEY, ECHO_TOKEN, ECHO_TOKEN) {
        for (store_name, store) in stores {
            let key = format!("audit:echo:{provider}:{store_name}:{}", std::process::id());
            let client = builder().idempotency(Arc::clone(store)).build().unwrap();
            let result = client.send(&Message::new(TO, body(500)).idempotency_key(&key)).await;
            assert!(result.is_err(), "{provider}: the echoing provider accepted");
            seen.result(&format!("echo {provider} ({store_name})"), &result);
            seen.debug("echo record", &store.get(&key).await);
        }
    }
}

/// The stores: memory, SQLite, PostgreSQL with a password in its URL (the dev server trusts
/// loopback, so it connects), Redis and DynamoDB; Redis with a password the server refuses is an
/// error, and every builder's Debug is kept.
async fn stores(seen: &mut Seen, dir: &std::path::Path) -> Vec<(&'static str, Arc<dyn Store>)> {
    let postgres = std::env::var("SMS_SDK_TEST_POSTGRES_URL")
        .expect("SMS_SDK_TEST_POSTGRES_URL (source /tmp/dev/env.sh, or run scripts/test.sh)");
    let redis = std::env::var("SMS_SDK_TEST_REDIS_URL")
        .expect("SMS_SDK_TEST_REDIS_URL (source /tmp/dev/env.sh, or run scripts/test.sh)");
    let postgres = with_password(&postgres, PG_PASSWORD);
    let refused_redis = with_password(&redis, REDIS_PASSWORD);
    seen.debug("postgres builder", &sms_sdk::store::postgres::PostgresStore::builder(&postgres));
    seen.debug("redis builder", &sms_sdk::store::redis::RedisStore::builder(&refused_redis));
    let connected = sms_sdk::store::postgres::PostgresStore::connect(&postgres).await.unwrap();
    seen.debug("postgres store", &connected);
    let refused = sms_sdk::store::open(&refused_redis).await;
    let refused = refused.err().expect("Redis accepted a password it does not have");
    seen.add("refused redis", format!("{refused} | {refused:?}"));
    let sqlite = format!("sqlite:{}", dir.join("audit.db").display());
    // A table and a key prefix of their own: the dev servers are shared with other tests.
    let postgres = sms_sdk::store::postgres::PostgresStore::builder(&postgres).table("redaction_audit");
    let redis = sms_sdk::store::redis::RedisStore::builder(&redis).prefix("redaction-audit:");
    let postgres: Arc<dyn Store> = Arc::new(postgres.connect().await.unwrap());
    let redis: Arc<dyn Store> = Arc::new(redis.connect().await.unwrap());
    let mut stores = Vec::new();
    for (name, url) in [("memory", "memory".to_owned()), ("sqlite", sqlite)] {
        let store = sms_sdk::store::open(&url).await.unwrap_or_else(|e| panic!("{name}: {e}"));
        stores.push((name, store));
    }
    stores.push(("postgres", postgres));
    stores.push(("redis", redis));
    // DynamoDB (moto's server): the SDK would log request bodies, whose items hold full numbers.
    let endpoint = std::env::var("SMS_SDK_TEST_DYNAMODB_URL")
        .expect("SMS_SDK_TEST_DYNAMODB_URL (source /tmp/dev/env.sh, or run scripts/test.sh)");
    let table = format!("sms-sdk-redaction-{}", std::process::id());
    let dynamodb = sms_sdk::store::dynamodb::DynamoStore::builder(table).region("us-east-1").endpoint(endpoint);
    seen.debug("dynamodb builder", &dynamodb);
    let (dynamodb, _) = dynamodb.create_table().await.unwrap();
    seen.debug("dynamodb store", &dynamodb);
    stores.push(("dynamodb", Arc::new(dynamodb)));
    stores
}

/// `url` (`scheme://[user@]host…`) with `password` for its user (`audit` when it has none).
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (user, host) =
        rest.split_once('@').map_or(("audit", rest), |(user, host)| (user.split(':').next().unwrap(), host));
    format!("{scheme}://{user}:{password}@{host}")
}

/// Every store's listings, in full and unresolved, page after page (a Redis page may be empty
/// while more follow: the dev server is shared with other tests).
async fn listings(seen: &mut Seen, stores: &[(&'static str, Arc<dyn Store>)]) {
    for (name, store) in stores {
        for filter in [Filter::All, Filter::Unresolved { stale_after: Duration::ZERO }] {
            let (mut listed, mut cursor) = (0, None);
            for _ in 0..10_000 {
                let mut page = Page::default();
                page.cursor = cursor;
                let listing = store.list(filter, SystemTime::now(), page).await.unwrap();
                listed += listing.entries.len();
                seen.add(
                    format!("{name} listing"),
                    format!("{listing:?} | {}", serde_json::to_string(&listing).unwrap()),
                );
                cursor = listing.next;
                if cursor.is_none() {
                    break;
                }
            }
            assert!(listed > 0, "{name}: nothing listed with {filter:?}");
        }
    }
}

/// Writes a raw HTTP request to the webhook server; returns the answer.
fn post_raw(address: SocketAddr, path: &str, request: &SignedRequest) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\ncontent-length: {}\r\n",
        request.body.len()
    );
    for (name, value) in &request.headers {
        write!(head, "{name}: {}\r\n", value.to_str().unwrap()).unwrap();
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&request.body).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// Webhooks: inbound messages from the emulator (signed, through the integration), forged ones
/// through the integration and the verifiers, and a valid one straight to a verifier.
async fn webhooks(seen: &mut Seen, emulator: &RunningEmulator, hooks: SocketAddr) {
    let inbound = format!("{}/_emulator/inbound", emulator.base_url());
    for provider in PROVIDERS {
        let request = json!({"provider": provider, "from": INBOUND_FROM, "to": FROM, "text": body(600), "inbound_url": format!("http://{hooks}/{provider}")});
        let answer = tokio::task::spawn_blocking({
            let address: SocketAddr = emulator.local_addr();
            let request =
                SignedRequest::new("POST", &inbound, request.to_string()).header("content-type", "application/json");
            move || post_raw(address, "/_emulator/inbound", &request)
        })
        .await
        .unwrap();
        assert!(answer.starts_with("HTTP/1.1 202"), "{provider} inbound: {answer}");
    }
    let params = [
        ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
        ("From", INBOUND_FROM),
        ("To", FROM),
        ("Body", &body(700)),
    ];
    let forged = signed_twilio_request(FORGED_TOKEN, &format!("http://{hooks}/twilio"), &params);
    let answer = tokio::task::spawn_blocking(move || post_raw(hooks, "/twilio", &forged)).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    seen.add("forged webhook answer", answer);
    // Straight to the verifiers: a valid request and a forged one, event and errors printed.
    let url = "https://example.com/sms";
    let verifier = TwilioWebhook::new(FORGED_TOKEN).unwrap();
    seen.debug("verifier", &verifier);
    let valid = signed_twilio_request(FORGED_TOKEN, url, &params);
    seen.debug("valid request", &valid);
    let event = verifier.verify(&valid.as_request()).unwrap();
    seen.debug("event", &event);
    let forged = signed_twilio_request("another-token", url, &params);
    let error = TwilioWebhook::new(FORGED_TOKEN).unwrap().verify(&forged.as_request()).unwrap_err();
    seen.add("webhook error", format!("{error} | {error:?}"));
    for verifier in [
        Box::new(TelnyxWebhook::new(TELNYX_PUBLIC_KEY).unwrap()) as Box<dyn WebhookVerifier>,
        Box::new(PlivoWebhook::new(PLIVO_AUTH_TOKEN).unwrap()),
        Box::new(VonageWebhook::new(VONAGE_SIGNATURE_SECRET).unwrap()),
        Box::new(SinchWebhook::hmac(SINCH_WEBHOOK_SECRET).unwrap()),
        Box::new(InfobipWebhook::basic(INFOBIP_WEBHOOK_USER, INFOBIP_WEBHOOK_PASSWORD).unwrap()),
        Box::new(BandwidthWebhook::basic(BANDWIDTH_CALLBACK_USER, BANDWIDTH_CALLBACK_PASSWORD).unwrap()),
    ] {
        let error = verifier.verify(&forged.as_request()).unwrap_err();
        seen.add("webhook error", format!("{error} | {error:?}"));
    }
}

/// Waits until `count` reaches `at_least` (10 s at most).
async fn wait_for(count: &AtomicUsize, at_least: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while count.load(Ordering::SeqCst) < at_least && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The command, in-process: sends (text and JSON) through the emulator's APIs with the
/// emulator's secrets, keyed in SQLite and PostgreSQL, then listings, `show`, `validate`,
/// `doctor`, `webhook verify`, and an embedded-emulator send.
fn command(seen: &mut Seen, emulator_base: &str, dir: &std::path::Path) {
    let postgres = with_password(&std::env::var("SMS_SDK_TEST_POSTGRES_URL").unwrap(), PG_PASSWORD);
    let sqlite = format!("sqlite:{}", dir.join("command.db").display());
    let env = command_env(emulator_base, dir);
    let mut run = |label: &str, args: &[&str]| {
        let output = common::command(args, &env);
        seen.add(format!("command {label} ({})", output.code), format!("{}\n{}", output.out, output.err));
        output.code
    };
    let key = format!("audit-command-{}", std::process::id());
    let stores = [&sqlite, &postgres];
    for (n, provider) in PROVIDERS.into_iter().enumerate() {
        for to in [TO, magic::INVALID_NUMBER, magic::SERVER_ERROR, magic::BARE_429] {
            let text = body(800);
            let send = ["send", "--provider", provider, "--to", to, "--body", &text, "--timeout-ms", "800"];
            run("send", &send);
            if to == TO || to == magic::INVALID_NUMBER {
                run("send --json", &[&send[..], &["--json"]].concat());
            }
        }
        let (store, key, text) = (stores[n % 2], format!("{key}-{provider}"), body(850));
        let keyed = [
            "send",
            "--provider",
            provider,
            "--to",
            magic::SERVER_ERROR,
            "--body",
            &text,
            "--store",
            store,
            "--idempotency-key",
            &key,
        ];
        assert_eq!(run("keyed send", &keyed), 3);
        run("keyed replay --json", &[&keyed[..], &["--json"]].concat());
        run("show", &["idempotency", "show", &key, "--store", store]);
        run("show --json", &["idempotency", "show", &key, "--store", store, "--json"]);
    }
    run(
        "failover",
        &[
            "send",
            "--provider",
            "twilio",
            "--provider",
            "telnyx",
            "--fallback",
            "--to",
            magic::SENDER_CANNOT_ROUTE,
            "--body",
            &body(860),
        ],
    );
    for store in [&sqlite, &postgres] {
        run("list", &["idempotency", "list", "--store", store]);
        run(
            "list unresolved --json",
            &["idempotency", "list", "--state", "unresolved", "--older-than", "0", "--store", store, "--json"],
        );
        let refused = with_password("redis://127.0.0.1:6379/0", REDIS_PASSWORD);
        run("refused store", &["idempotency", "list", "--store", &refused]);
    }
    run("validate", &["validate", "--to", TO, "--body", &body(870)]);
    run("validate --json", &["validate", "--to", TO, "--body", &body(870), "--json"]);
    for provider in PROVIDERS {
        run("doctor", &["doctor", "--adapter", provider]);
    }
    // A forged webhook, and an authentic one (text output: the event's type and dedupe key).
    let params = [
        ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
        ("From", INBOUND_FROM),
        ("To", FROM),
        ("Body", &body(880)),
    ];
    let url = "https://example.com/sms";
    for token in [TWILIO_AUTH_TOKEN, FORGED_TOKEN] {
        let signed = signed_twilio_request(token, url, &params);
        let file = dir.join("webhook-body");
        std::fs::write(&file, &signed.body).unwrap();
        let signature = format!("X-Twilio-Signature: {}", signed.headers["x-twilio-signature"].to_str().unwrap());
        let file = file.display().to_string();
        let verify = [
            "webhook",
            "verify",
            "--provider",
            "twilio",
            "--url",
            url,
            "-H",
            &signature,
            "-H",
            "Content-Type: application/x-www-form-urlencoded",
            "--body-file",
            &file,
        ];
        run("webhook verify", &verify);
    }
    // No provider configured: the embedded emulator.
    let embedded: Env = [("XDG_DATA_HOME", dir.display().to_string())].into_iter().collect();
    let output = common::command(&["send", "--to", TO, "--body", &body(890), "--idempotency-key", &key], &embedded);
    assert_eq!(output.code, 0, "{}{}", output.out, output.err);
    seen.add("embedded send", format!("{}\n{}", output.out, output.err));
}

/// The environment of [`command`]: every provider configured with the emulator's secrets and
/// pointed at it, and the data directory in `dir`.
fn command_env(emulator_base: &str, dir: &std::path::Path) -> Env {
    [
        ("TWILIO_ACCOUNT_SID", TWILIO_ACCOUNT_SID),
        ("TWILIO_AUTH_TOKEN", TWILIO_AUTH_TOKEN),
        ("TWILIO_FROM", FROM),
        ("SMS_SDK_TWILIO_BASE_URL", emulator_base),
        ("TELNYX_API_KEY", TELNYX_API_KEY),
        ("TELNYX_FROM", FROM),
        ("SMS_SDK_TELNYX_BASE_URL", emulator_base),
        ("TELNYX_PUBLIC_KEY", TELNYX_PUBLIC_KEY),
        ("PLIVO_AUTH_ID", PLIVO_AUTH_ID),
        ("PLIVO_AUTH_TOKEN", PLIVO_AUTH_TOKEN),
        ("PLIVO_FROM", FROM),
        ("SMS_SDK_PLIVO_BASE_URL", emulator_base),
        ("VONAGE_API_KEY", VONAGE_API_KEY),
        ("VONAGE_API_SECRET", VONAGE_API_SECRET),
        ("VONAGE_FROM", FROM),
        ("SMS_SDK_VONAGE_BASE_URL", emulator_base),
        ("VONAGE_SIGNATURE_SECRET", VONAGE_SIGNATURE_SECRET),
        ("SINCH_SERVICE_PLAN_ID", SINCH_SERVICE_PLAN_ID),
        ("SINCH_API_TOKEN", SINCH_API_TOKEN),
        ("SINCH_FROM", FROM),
        ("SMS_SDK_SINCH_BASE_URL", emulator_base),
        ("SINCH_WEBHOOK_SECRET", SINCH_WEBHOOK_SECRET),
        ("INFOBIP_API_KEY", INFOBIP_API_KEY),
        ("INFOBIP_FROM", FROM),
        ("SMS_SDK_INFOBIP_BASE_URL", emulator_base),
        ("BANDWIDTH_ACCOUNT_ID", BANDWIDTH_ACCOUNT_ID),
        ("BANDWIDTH_APPLICATION_ID", BANDWIDTH_APPLICATION_ID),
        ("BANDWIDTH_CLIENT_ID", BANDWIDTH_CLIENT_ID),
        ("BANDWIDTH_CLIENT_SECRET", BANDWIDTH_CLIENT_SECRET),
        ("BANDWIDTH_FROM", FROM),
        ("SMS_SDK_BANDWIDTH_BASE_URL", emulator_base),
        ("XDG_DATA_HOME", &dir.display().to_string()),
    ]
    .into_iter()
    .collect()
}

/// Every secret found in any of `places` (label and text), with some text around it.
fn leaks(places: &[(&str, &str)]) -> Vec<String> {
    let mut leaks = Vec::new();
    for (what, secret) in secrets() {
        for (label, text) in places {
            if let Some(at) = text.find(&secret) {
                let start = text[..at].char_indices().rev().nth(80).map_or(0, |(i, _)| i);
                let end = (at + secret.len() + 80).min(text.len());
                let end = (end..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(text.len());
                leaks.push(format!("{what} ({secret}) in {label}: …{}…", &text[start..end]));
            }
        }
    }
    leaks
}

#[test]
fn redact_end_to_end_audit() {
    let mut seen = Seen::default();
    capture_everything(&seen.logs);
    // Process ids come round again: a directory an earlier run left under this one's id would
    // hold its records (keys made from the same id, another emulator's port).
    let dir = std::env::temp_dir().join(format!("sms-sdk-redaction-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let (emulator, hooks, verified) = runtime.block_on(async {
        let (hooks, verified) = webhook_server().await;
        let emulator = Emulator::builder().status_delay(Duration::from_millis(20)).start().await.unwrap();
        (emulator, hooks, verified)
    });
    let started = Instant::now();
    runtime.block_on(async {
        let stores = stores(&mut seen, &dir).await;
        sends(&mut seen, &emulator, &stores, hooks).await;
        println!("sends done after {:?}", started.elapsed());
        webhooks(&mut seen, &emulator, hooks).await;
        listings(&mut seen, &stores).await;
        // Each provider's accepted sends post status webhooks; the inbound messages too.
        wait_for(&verified, 15).await;
    });
    assert!(verified.load(Ordering::SeqCst) >= 15, "only {} webhooks were verified", verified.load(Ordering::SeqCst));
    println!("library done after {:?}", started.elapsed());
    command(&mut seen, &emulator.base_url(), &dir);
    println!("command done after {:?}", started.elapsed());
    runtime.block_on(emulator.shutdown());
    drop(runtime);

    let logs = String::from_utf8_lossy(&seen.logs.lock().unwrap()).into_owned();
    // The capture works: the library's events, the integration's and the application's are in.
    // A number is logged masked (the send span's `to`), so numbers do reach the logs this searches.
    let masked = sms_sdk::redact::mask_phone_number(TO);
    for expected in ["sms_send", "sms accepted", "provider responded", "webhook received", "sms send failed", &masked] {
        assert!(logs.contains(expected), "{expected:?} was not logged");
    }
    println!("audited {} bytes of logs and {} rendered values", logs.len(), seen.rendered.len());
    let places: Vec<(&str, &str)> = std::iter::once(("logs", logs.as_str()))
        .chain(seen.rendered.iter().map(|(l, t)| (l.as_str(), t.as_str())))
        .collect();
    // The search finds what it looks for: a full number planted in a copy of the places.
    let planted = format!("a log line naming {TO}");
    let canary = leaks(&[&places[..], &[("planted", planted.as_str())]].concat());
    assert!(canary.len() == 1 && canary[0].contains("in planted"), "{canary:?}");
    let leaks = leaks(&places);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(leaks.is_empty(), "{} leaks:\n{}", leaks.len(), leaks.join("\n"));
}
