//! Helpers shared by the end-to-end tests: clients on the real adapters, raw HTTP, and a
//! webhook receiver that verifies with the library's verifiers.
#![allow(dead_code, unreachable_pub)] // each test binary uses a part

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::routing::post;
use http::{HeaderMap, StatusCode};
use serde_json::Value;
use sms_sdk::provider::aws::AwsWebhook;
use sms_sdk::provider::bandwidth::BandwidthWebhook;
use sms_sdk::provider::infobip::InfobipWebhook;
use sms_sdk::provider::sinch::SinchWebhook;
use sms_sdk::webhook::{SmsEvent, WebhookRequest, WebhookVerifier};
use sms_sdk::{
    Client, ClientBuilder, HttpConfig, PlivoWebhook, RetryPolicy, TelnyxWebhook, TwilioWebhook, VonageWebhook,
};
use sms_sdk_emulator::credentials::{
    AWS_SNS_CERTIFICATE, AWS_SNS_TOPIC_ARN, BANDWIDTH_CALLBACK_PASSWORD, BANDWIDTH_CALLBACK_USER,
    INFOBIP_WEBHOOK_PASSWORD, INFOBIP_WEBHOOK_USER, PLIVO_AUTH_TOKEN, SINCH_WEBHOOK_SECRET, TELNYX_PUBLIC_KEY,
    TWILIO_AUTH_TOKEN, VONAGE_SIGNATURE_SECRET,
};
use sms_sdk_emulator::{Emulator, Provider, RunningEmulator};

/// The sender every test sends from.
pub const FROM: &str = "+15005550006";
/// An ordinary recipient: accepted and delivered.
pub const TO: &str = "+14155550123";

/// The adapters under test: every provider, Vonage and Bandwidth both ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Twilio,
    Telnyx,
    Plivo,
    VonageBasic,
    VonageApplication,
    Sinch,
    Aws,
    Infobip,
    BandwidthBasic,
    BandwidthOAuth2,
}

impl Api {
    pub const ALL: [Self; 10] = [
        Self::Twilio,
        Self::Telnyx,
        Self::Plivo,
        Self::VonageBasic,
        Self::VonageApplication,
        Self::Sinch,
        Self::Aws,
        Self::Infobip,
        Self::BandwidthBasic,
        Self::BandwidthOAuth2,
    ];

    pub fn provider(self) -> Provider {
        match self {
            Self::Twilio => Provider::Twilio,
            Self::Telnyx => Provider::Telnyx,
            Self::Plivo => Provider::Plivo,
            Self::VonageBasic | Self::VonageApplication => Provider::Vonage,
            Self::Sinch => Provider::Sinch,
            Self::Aws => Provider::Aws,
            Self::Infobip => Provider::Infobip,
            Self::BandwidthBasic | Self::BandwidthOAuth2 => Provider::Bandwidth,
        }
    }

    /// Whether a message through this API can name its own callback URL (AWS and Bandwidth
    /// post to the provider's URL only).
    pub fn has_callback_url(self) -> bool {
        !matches!(self, Self::Aws | Self::BandwidthBasic | Self::BandwidthOAuth2)
    }

    /// `builder` with this API's adapter on `emulator`, sending from [`FROM`], over the tests'
    /// one HTTP client ([`adapter_http`]).
    pub fn add_to(self, builder: ClientBuilder, emulator: &RunningEmulator) -> ClientBuilder {
        let http = adapter_http();
        match self {
            Self::Twilio => {
                builder.adapter(emulator.twilio().from(FROM).http(http.clone()).build().expect("twilio adapter"))
            }
            Self::Telnyx => {
                builder.adapter(emulator.telnyx().from(FROM).http(http.clone()).build().expect("telnyx adapter"))
            }
            Self::Plivo => {
                builder.adapter(emulator.plivo().from(FROM).http(http.clone()).build().expect("plivo adapter"))
            }
            Self::VonageBasic => {
                builder.adapter(emulator.vonage().from(FROM).http(http.clone()).build().expect("vonage adapter"))
            }
            Self::VonageApplication => builder.adapter(
                emulator
                    .vonage_application()
                    .from(FROM)
                    .http(http.clone())
                    .build()
                    .expect("vonage application adapter"),
            ),
            Self::Sinch => {
                builder.adapter(emulator.sinch().from(FROM).http(http.clone()).build().expect("sinch adapter"))
            }
            Self::Aws => builder.adapter(emulator.aws().from(FROM).http(http.clone()).build().expect("aws adapter")),
            Self::Infobip => {
                builder.adapter(emulator.infobip().from(FROM).http(http.clone()).build().expect("infobip adapter"))
            }
            Self::BandwidthBasic => {
                builder.adapter(emulator.bandwidth().from(FROM).http(http.clone()).build().expect("bandwidth adapter"))
            }
            Self::BandwidthOAuth2 => builder.adapter(
                emulator.bandwidth_oauth2().from(FROM).http(http.clone()).build().expect("bandwidth oauth2 adapter"),
            ),
        }
    }
}

/// The HTTP of every adapter the tests build with [`Api::add_to`]: one client for all (building
/// one per adapter, each loading the platform's roots, costs more than the sends), without a
/// connection pool, so that no connection outlives the test (and runtime) that opened it.
pub fn adapter_http() -> HttpConfig {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    let client = CLIENT.get_or_init(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .pool_max_idle_per_host(0)
            .connect_timeout(Duration::from_millis(250))
            .build()
            .expect("an HTTP client")
    });
    HttpConfig::new().client(client.clone())
}

/// An emulator with fast status steps.
pub async fn emulator() -> RunningEmulator {
    Emulator::builder().status_delay(Duration::from_millis(30)).start().await.expect("the emulator starts")
}

/// A client of one API that never retries.
pub fn client(emulator: &RunningEmulator, api: Api) -> Client {
    client_with(emulator, api, |builder| builder.retry(RetryPolicy::none()))
}

/// A client of one API, configured further by `configure`.
pub fn client_with(
    emulator: &RunningEmulator,
    api: Api,
    configure: impl FnOnce(ClientBuilder) -> ClientBuilder,
) -> Client {
    configure(api.add_to(Client::builder(), emulator)).build().expect("the client builds")
}

/// A plain HTTP client for raw requests.
pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().expect("an HTTP client")
}

/// The status and JSON body of a response.
pub async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("a body");
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// `GET /_emulator/messages`.
pub async fn inspection(emulator: &RunningEmulator) -> Vec<Value> {
    let response = http().get(format!("{}/_emulator/messages", emulator.base_url())).send().await.expect("GET");
    let (status, body) = json_of(response).await;
    assert_eq!(status, 200);
    body.as_array().cloned().expect("a JSON array")
}

/// One webhook the receiver got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The provider in the path.
    pub provider: String,
    /// The event type and provider id, or the verification error.
    pub outcome: Result<(String, String), String>,
    /// The URL it was posted to (with its query).
    pub url: String,
    /// The request's headers.
    pub headers: HeaderMap,
    /// The request's body.
    pub body: Bytes,
}

/// A webhook receiver on loopback: `POST /hooks/{provider}` verifies with the library's
/// verifier for that provider and answers 200 (401 when verification fails); `POST /fail`
/// always answers 500.
#[derive(Debug, Clone)]
pub struct Receiver {
    pub base: String,
    received: Arc<Mutex<Vec<Received>>>,
    failures: Arc<Mutex<Vec<Instant>>>,
}

#[derive(Clone)]
struct ReceiverState {
    base: String,
    received: Arc<Mutex<Vec<Received>>>,
    failures: Arc<Mutex<Vec<Instant>>>,
}

fn verify(provider: &str, url: &str, request: &WebhookRequest<'_>) -> Result<(String, String), String> {
    let event = match provider {
        "twilio" => TwilioWebhook::new(TWILIO_AUTH_TOKEN).expect("verifier").public_url(url).verify(request),
        "telnyx" => TelnyxWebhook::new(TELNYX_PUBLIC_KEY).expect("verifier").verify(request),
        "plivo" => PlivoWebhook::new(PLIVO_AUTH_TOKEN).expect("verifier").public_url(url).verify(request),
        "vonage" => VonageWebhook::new(VONAGE_SIGNATURE_SECRET).expect("verifier").verify(request),
        "sinch" => SinchWebhook::hmac(SINCH_WEBHOOK_SECRET).expect("verifier").verify(request),
        "aws" => aws_verifier().verify(request),
        // Batched: no `WebhookVerifier` yet; the emulator posts one event per callback.
        "infobip" | "bandwidth" => one_event(verify_batch(provider, request)?)?,
        other => return Err(format!("no verifier for {other}")),
    }
    .map_err(|e| e.to_string())?;
    let json = serde_json::to_value(&event).map_err(|e| e.to_string())?;
    let id = json.get("provider_id").and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok((event.type_name().to_owned(), id))
}

/// Verifies a callback of a provider that batches (Infobip, Bandwidth) with its library
/// verifier's `verify_all_at`, with the emulator's fixed Basic credentials.
pub fn verify_batch(provider: &str, request: &WebhookRequest<'_>) -> Result<Vec<SmsEvent>, String> {
    let now = std::time::SystemTime::now();
    match provider {
        "infobip" => InfobipWebhook::basic(INFOBIP_WEBHOOK_USER, INFOBIP_WEBHOOK_PASSWORD)
            .expect("verifier")
            .verify_all_at(request, now),
        "bandwidth" => BandwidthWebhook::basic(BANDWIDTH_CALLBACK_USER, BANDWIDTH_CALLBACK_PASSWORD)
            .expect("verifier")
            .verify_all_at(request, now),
        other => return Err(format!("no batch verifier for {other}")),
    }
    .map_err(|e| e.to_string())
}

/// The one event of a batch the emulator posted.
fn one_event(events: Vec<SmsEvent>) -> Result<Result<SmsEvent, sms_sdk::webhook::WebhookError>, String> {
    match <[SmsEvent; 1]>::try_from(events) {
        Ok([event]) => Ok(Ok(event)),
        Err(events) => Err(format!("{} events in one callback", events.len())),
    }
}

/// The library's SNS verifier for the emulator's topic, with the emulator's certificate.
pub fn aws_verifier() -> AwsWebhook {
    AwsWebhook::builder(AWS_SNS_TOPIC_ARN).certificate_pem(AWS_SNS_CERTIFICATE).build().expect("verifier")
}

impl Receiver {
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let state = ReceiverState { base: base.clone(), received: Arc::default(), failures: Arc::default() };
        let router = Router::new()
            .route(
                "/hooks/{provider}",
                post(
                    |State(state): State<ReceiverState>,
                     Path(provider): Path<String>,
                     uri: http::Uri,
                     headers: HeaderMap,
                     body: Bytes| async move {
                        let url = match uri.query() {
                            Some(query) => format!("{}/hooks/{provider}?{query}", state.base),
                            None => format!("{}/hooks/{provider}", state.base),
                        };
                        let request = WebhookRequest { method: "POST", url: &url, headers: &headers, body: &body };
                        let outcome = verify(&provider, &url, &request);
                        let status = if outcome.is_ok() { StatusCode::OK } else { StatusCode::UNAUTHORIZED };
                        state.received.lock().expect("lock").push(Received { provider, outcome, url, headers, body });
                        status
                    },
                ),
            )
            .route(
                "/fail",
                post(|State(state): State<ReceiverState>| async move {
                    state.failures.lock().expect("lock").push(Instant::now());
                    StatusCode::INTERNAL_SERVER_ERROR
                }),
            )
            .with_state(state.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self { base, received: state.received, failures: state.failures }
    }

    /// The URL webhooks of `provider` go to.
    pub fn url(&self, provider: Provider) -> String {
        format!("{}/hooks/{provider}", self.base)
    }

    /// Every webhook received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }

    /// When `/fail` was called.
    pub fn failures(&self) -> Vec<Instant> {
        self.failures.lock().expect("lock").clone()
    }

    /// Waits (up to 5 s) until at least `count` webhooks arrived.
    pub async fn wait_for(&self, count: usize) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let received = self.received();
            if received.len() >= count || Instant::now() > deadline {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Polls `check` every 10 ms for up to 5 s.
pub async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    check()
}

/// POSTs `body` as JSON to `url`; returns the status and JSON answer.
pub async fn post_json(url: &str, body: &Value) -> (u16, Value) {
    let response =
        http().post(url).header("content-type", "application/json").body(body.to_string()).send().await.expect("POST");
    json_of(response).await
}
