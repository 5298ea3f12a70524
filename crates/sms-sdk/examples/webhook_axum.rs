//! Receives the four providers' webhooks with axum: verified before anything is read,
//! deduplicated by `dedupe_key` (claimed before the handler, marked done after it, freed when it
//! fails), then handled once. The tower layer does the same around any handler:
//! `post(handler).layer(VerifyLayer::new(verifier).dedupe(store))`.
//!
//! `cargo run -p sms-sdk --example webhook_axum --features axum` listens on 127.0.0.1:3000 with
//! demo secrets; set `TWILIO_AUTH_TOKEN`, `TELNYX_PUBLIC_KEY`, `PLIVO_AUTH_TOKEN` and
//! `VONAGE_SIGNATURE_SECRET` to receive real webhooks (and `PUBLIC_URL` to the URL providers call).
//!
//! It serves with `sms_sdk::webhook::axum::serve`, which is `axum::serve` plus the read timeouts
//! an endpoint open to the internet needs (30 s for a request's headers and for its body).

#![allow(missing_debug_implementations)]

use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use sms_sdk::store::MemoryStore;
use sms_sdk::store::{DedupeClaim, DedupeStore};
use sms_sdk::webhook::WebhookVerifier;
use sms_sdk::webhook::axum::{Verified, serve};
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};

/// What the routes share: one verifier per provider, the dedupe store, and a log of handled
/// event types.
#[derive(Clone, FromRef)]
pub struct Hooks {
    /// Twilio's verifier.
    pub twilio: TwilioWebhook,
    /// Telnyx's verifier.
    pub telnyx: TelnyxWebhook,
    /// Plivo's verifier.
    pub plivo: PlivoWebhook,
    /// Vonage's verifier.
    pub vonage: VonageWebhook,
    /// Which events were already handled.
    pub seen: Arc<dyn DedupeStore>,
    /// The event types handled, in order (a real app would update its database instead).
    pub handled: Arc<std::sync::Mutex<Vec<String>>>,
}

/// Handles one verified event, once: claims its dedupe key, handles it, then marks it done.
async fn receive<V: WebhookVerifier + 'static>(
    State(seen): State<Arc<dyn DedupeStore>>,
    State(handled): State<Arc<std::sync::Mutex<Vec<String>>>>,
    Verified { event, .. }: Verified<V>,
) -> StatusCode {
    let token = match seen.claim(&event.dedupe_key).await {
        Ok(DedupeClaim::Claimed(token)) => token,
        // Another instance is handling it right now: the provider delivers it again later.
        Ok(DedupeClaim::InFlight) => return StatusCode::CONFLICT,
        // Handled already: a redelivery.
        Ok(_) => return StatusCode::NO_CONTENT,
        // Not claimed: let the provider retry later.
        Err(_) => return StatusCode::SERVICE_UNAVAILABLE,
    };
    // A real app would update its database here.
    let saved = handled.lock().map(|mut handled| handled.push(event.type_name().to_owned())).is_ok();
    if !saved {
        // Not handled: free the key so that the provider's redelivery is handled.
        let _ = seen.release(&event.dedupe_key, &token).await;
        return StatusCode::SERVICE_UNAVAILABLE;
    }
    println!("{} {}", event.provider, event.type_name());
    // Handled: every later delivery is a duplicate. (Not recorded? The work is done; a
    // redelivery after the claim's lease would be handled again.)
    let _ = seen.commit(&event.dedupe_key).await;
    StatusCode::NO_CONTENT
}

/// The router: one route per provider.
pub fn app(hooks: Hooks) -> Router {
    Router::new()
        .route("/sms/twilio", post(receive::<TwilioWebhook>))
        .route("/sms/telnyx", post(receive::<TelnyxWebhook>))
        .route("/sms/plivo", post(receive::<PlivoWebhook>))
        .route("/sms/vonage", post(receive::<VonageWebhook>))
        .with_state(hooks)
}

/// Verifiers from the environment, or demo secrets.
///
/// # Errors
/// A configuration error for an empty secret or a malformed Telnyx key.
pub fn hooks_from_env(public_url: &str) -> Result<Hooks, sms_sdk::Error> {
    let var =
        |name: &str, demo: &str| std::env::var(name).ok().filter(|v| !v.is_empty()).unwrap_or_else(|| demo.to_owned());
    Ok(Hooks {
        twilio: TwilioWebhook::new(var("TWILIO_AUTH_TOKEN", "demo-twilio-token"))?
            .public_url(format!("{public_url}/sms/twilio")),
        telnyx: TelnyxWebhook::new(&var("TELNYX_PUBLIC_KEY", "A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="))?,
        plivo: PlivoWebhook::new(var("PLIVO_AUTH_TOKEN", "demo-plivo-token"))?
            .public_url(format!("{public_url}/sms/plivo")),
        vonage: VonageWebhook::new(var("VONAGE_SIGNATURE_SECRET", "demo-vonage-secret"))?,
        seen: Arc::new(MemoryStore::new()),
        handled: Arc::default(),
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let public_url = std::env::var("PUBLIC_URL").unwrap_or_else(|_| "http://127.0.0.1:3000".into());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("listening on http://{}", listener.local_addr()?);
    serve(listener, app(hooks_from_env(&public_url)?)).await?;
    Ok(())
}
