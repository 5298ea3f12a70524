//! Failover against the shipped emulator: a client with Twilio first and Telnyx second sends to
//! the recipient that Twilio alone refuses for its sender (`magic::TWILIO_SENDER_CANNOT_ROUTE`,
//! Twilio's code 21612, category `sender`, which fails over), so Telnyx sends it. The real
//! adapters talk to the emulator over real HTTP on loopback; Telnyx's signed status webhooks
//! arrive at Telnyx's own webhook URL, where the library's verifier checks them, and nothing
//! arrives at Twilio's.
//!
//! `cargo run -p sms-sdk-emulator --example failover`
//!
//! The library's own `failover` example (`cargo run -p sms-sdk --example failover`) shows the
//! same client against local stand-ins instead.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::routing::post;
use http::{HeaderMap, StatusCode};
use sms_sdk::error::AttemptOutcome;
use sms_sdk::webhook::{WebhookRequest, WebhookVerifier};
use sms_sdk::{BoxError, Category, Client, Failover, Message, TelnyxWebhook, TwilioWebhook};
use sms_sdk_emulator::credentials::{TELNYX_PUBLIC_KEY, TWILIO_AUTH_TOKEN};
use sms_sdk_emulator::{Emulator, Provider, magic};

/// The sender both adapters send from.
const FROM: &str = "+15005550006";

/// What the send and its webhooks showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The providers tried, in order.
    pub tried: Vec<String>,
    /// Why each provider before the one that accepted refused: the provider and the category.
    pub refused: Vec<(String, Category)>,
    /// The provider that accepted the message.
    pub accepted_by: String,
    /// Its id for the message.
    pub provider_id: String,
    /// The status webhooks received, in order: the URL they arrived at and the verified event's
    /// type (`message.sent`, `message.delivered`).
    pub webhooks: Vec<(String, String)>,
}

/// Starts the emulator, with a status webhook URL for each of the two providers, and sends the
/// message through Twilio, then Telnyx; waits (up to 5 s) for the accepted message's delivery
/// webhook.
///
/// # Errors
/// The emulator could not start, the client could not be built, or the send failed.
pub async fn run() -> Result<Report, BoxError> {
    let hooks = Hooks::start().await?;
    let emulator = Emulator::builder()
        .webhook_url_for(Provider::Twilio, hooks.url(Provider::Twilio))
        .webhook_url_for(Provider::Telnyx, hooks.url(Provider::Telnyx))
        .status_delay(Duration::from_millis(50))
        .start()
        .await?;
    let client = Client::builder()
        .adapter(emulator.twilio().from(FROM).build()?)
        .adapter(emulator.telnyx().from(FROM).build()?)
        .failover(Failover::OnEligibleRejection)
        .build()?;
    let receipt = client.send(&Message::new(magic::TWILIO_SENDER_CANNOT_ROUTE, "Your order has shipped.")).await?;
    let refused = receipt
        .attempts
        .iter()
        .filter_map(|attempt| match attempt.outcome {
            AttemptOutcome::Rejected { category, .. } => Some((attempt.provider.clone(), category)),
            AttemptOutcome::Accepted { .. } | AttemptOutcome::Unknown { .. } => None,
        })
        .collect();
    let webhooks = hooks.wait_for_delivery().await;
    emulator.shutdown().await;
    Ok(Report {
        tried: receipt.attempted_providers.clone(),
        refused,
        accepted_by: receipt.provider.clone(),
        provider_id: receipt.provider_id.clone(),
        webhooks,
    })
}

/// A webhook receiver on loopback: `POST /hooks/{provider}` verifies the request with that
/// provider's verifier and answers 200, or 401 when it does not verify.
#[derive(Debug, Clone)]
struct Hooks {
    base: String,
    received: Arc<Mutex<Vec<(String, String)>>>,
}

impl Hooks {
    async fn start() -> Result<Self, BoxError> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let hooks = Self { base: format!("http://{}", listener.local_addr()?), received: Arc::default() };
        let router = Router::new().route("/hooks/{provider}", post(receive)).with_state(hooks.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        Ok(hooks)
    }

    /// Where `provider`'s status webhooks go.
    fn url(&self, provider: Provider) -> String {
        format!("{}/hooks/{provider}", self.base)
    }

    /// The webhooks received once the delivery one has arrived (or after 5 s).
    async fn wait_for_delivery(&self) -> Vec<(String, String)> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let received = self.received.lock().map(|r| r.clone()).unwrap_or_default();
            if received.iter().any(|(_, event)| event == "message.delivered") || Instant::now() > deadline {
                return received;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Verifies one webhook with the verifier of the provider its path names, and records it.
async fn receive(
    State(hooks): State<Hooks>,
    Path(provider): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let url = format!("{}/hooks/{provider}", hooks.base);
    let request = WebhookRequest { method: "POST", url: &url, headers: &headers, body: &body };
    let event = match provider.as_str() {
        // Twilio signs the URL it posted to.
        "twilio" => TwilioWebhook::new(TWILIO_AUTH_TOKEN).map(|v| v.public_url(&url)).map(|v| v.verify(&request)),
        "telnyx" => TelnyxWebhook::new(TELNYX_PUBLIC_KEY).map(|v| v.verify(&request)),
        _ => return StatusCode::NOT_FOUND,
    };
    let Ok(Ok(event)) = event else { return StatusCode::UNAUTHORIZED };
    if let Ok(mut received) = hooks.received.lock() {
        received.push((url, event.type_name().to_owned()));
    }
    StatusCode::OK
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), BoxError> {
    let report = run().await?;
    println!("tried {}; {} accepted it as {}", report.tried.join(", "), report.accepted_by, report.provider_id);
    for (provider, category) in &report.refused {
        let next = if category.allows_failover() { "fails over" } else { "stops" };
        println!("{provider} refused it: category {category} ({next})");
    }
    for (url, event) in &report.webhooks {
        println!("{} webhook at {url}: {event}", report.accepted_by);
    }
    Ok(())
}
