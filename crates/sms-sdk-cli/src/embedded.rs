//! The embedded emulator behind `send`, `validate` and `batch` when no provider is configured:
//! the emulator in-process, the real Twilio adapter over loopback, and the status timeline from
//! its signed webhooks.

use std::io::Write;
use std::time::Duration;

use axum::Router;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use axum::routing::post;
use sms_sdk::adapter::{Adapter, AdapterInfo, AnyAdapter, Outcome, SendContext};
use sms_sdk::webhook::SmsEvent;
use sms_sdk::webhook::axum::Verified;
use sms_sdk::{Client, Issue, OutboundMessage, Twilio, TwilioWebhook};
use sms_sdk_emulator::{Emulator, credentials};
use tokio::sync::mpsc;

use crate::EXIT_CONFIGURATION;
use crate::report::report_error;
use crate::sending::{Sending, dispatch};
use crate::spinner::Spinners;

/// The emulator's default sender.
pub(crate) const SENDER: &str = "+15005550006";
/// How long the embedded default waits for the final status webhook.
const TIMELINE_WAIT: Duration = Duration::from_secs(5);
/// The path of the in-process webhook receiver.
const STATUS_PATH: &str = "/sms/status";

/// The endpoint the embedded emulator's results are recorded against: the same on every run,
/// and never a real provider's.
pub(crate) const EMBEDDED_ENDPOINT: &str = "sms-sdk-emulator://embedded";

/// The Twilio adapter of the embedded default, against `base_url`.
///
/// # Errors
/// The adapter's configuration error (the emulator's fixed credentials are valid, so only a
/// malformed `base_url` could cause one).
pub(crate) fn embedded_adapter(base_url: &str) -> Result<AnyAdapter, sms_sdk::Error> {
    let twilio = Twilio::builder(credentials::TWILIO_ACCOUNT_SID, credentials::TWILIO_AUTH_TOKEN)
        .from(SENDER)
        .base_url(base_url)
        .build()?;
    let info = sms_sdk::Adapter::info(&twilio).clone().endpoint(EMBEDDED_ENDPOINT);
    Ok(AnyAdapter::new(Embedded { twilio, info }))
}

/// The Twilio adapter of the embedded emulator, with its own info: its endpoint is the same on
/// every run (the emulator's port is not), so its results replay from `emulator.db`.
#[derive(Debug)]
struct Embedded {
    twilio: Twilio,
    info: AdapterInfo,
}

impl Adapter for Embedded {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        self.twilio.send(message, cx).await
    }

    fn validate(&self, message: &OutboundMessage) -> Vec<Issue> {
        self.twilio.validate(message)
    }
}

#[derive(Clone, FromRef)]
struct Receiver {
    verifier: TwilioWebhook,
    events: mpsc::UnboundedSender<SmsEvent>,
}

async fn receive(
    State(events): State<mpsc::UnboundedSender<SmsEvent>>,
    Verified { event, .. }: Verified<TwilioWebhook>,
) -> StatusCode {
    let _ = events.send(event);
    StatusCode::NO_CONTENT
}

/// Starts the in-process receiver of the emulator's signed status webhooks: its URL and the
/// events it verified.
async fn start_receiver() -> std::io::Result<(String, mpsc::UnboundedReceiver<SmsEvent>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}{STATUS_PATH}", listener.local_addr()?);
    let verifier = TwilioWebhook::new(credentials::TWILIO_AUTH_TOKEN)
        .map_err(|e| std::io::Error::other(e.to_string()))?
        .public_url(&url);
    let (events, received) = mpsc::unbounded_channel();
    let app = Router::new().route(STATUS_PATH, post(receive)).with_state(Receiver { verifier, events });
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, received))
}

/// Sends `sending` through the in-process emulator (a Twilio adapter against it) and prints the
/// status timeline from its signed webhooks.
pub(crate) async fn embedded_send(
    sending: Sending<'_>,
    spinners: Spinners,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let (receiver_url, mut events) = match start_receiver().await {
        Ok(receiver) => receiver,
        Err(error) => {
            let _ = writeln!(err, "error: configuration: could not start the webhook receiver: {error}");
            return EXIT_CONFIGURATION;
        }
    };
    let starting = Emulator::builder().webhook_url(&receiver_url).start();
    let emulator = match spinners.during("starting the local emulator", starting).await {
        Ok(emulator) => emulator,
        Err(error) => {
            let _ = writeln!(err, "error: configuration: could not start the emulator: {error}");
            return EXIT_CONFIGURATION;
        }
    };
    let spinner = spinners.spinner("sending through the local emulator");
    let (code, replayed) = match embedded_adapter(&emulator.base_url()) {
        Ok(adapter) => {
            let (code, receipt) = dispatch(sending, vec![adapter], Client::builder(), spinner, out, err).await;
            let replayed = receipt.as_ref().is_some_and(|r| r.replayed);
            if let Some(receipt) = receipt.filter(|r| !r.replayed && !sending.how.output.json) {
                timeline(&receipt.provider_id, &mut events, spinners, out).await;
            }
            (code, replayed)
        }
        Err(error) => (report_error(&error, sending.how, out, err), false),
    };
    let what = if replayed {
        "note: no provider is configured, and the key's first result was replayed from the store: no request was \
         made, nothing left this machine."
    } else {
        "note: no provider is configured, so the local emulator stood in: nothing left this machine."
    };
    let _ = writeln!(
        err,
        "{what}\nnote: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM (or TELNYX_API_KEY, PLIVO_AUTH_ID \
         and PLIVO_AUTH_TOKEN, VONAGE_API_KEY and VONAGE_API_SECRET, SINCH_SERVICE_PLAN_ID and SINCH_API_TOKEN, \
         INFOBIP_BASE_URL and INFOBIP_API_KEY, the BANDWIDTH_ account, application and API user, or AWS_FROM with \
         the AWS credentials and region) to send for real (sms-sdk doctor --help lists them all)."
    );
    emulator.shutdown().await;
    code
}

/// Prints the verified status webhooks of `provider_id` until a final one, or for 5 s.
async fn timeline(
    provider_id: &str,
    events: &mut mpsc::UnboundedReceiver<SmsEvent>,
    spinners: Spinners,
    out: &mut dyn Write,
) {
    let _ = writeln!(out, "status timeline (signed webhooks, verified):");
    let _ = writeln!(out, "  queued       (send response)");
    let deadline = tokio::time::Instant::now() + TIMELINE_WAIT;
    let waiting = format!("waiting for the delivery status webhook (up to {} s)", TIMELINE_WAIT.as_secs());
    while let Ok(Some(event)) = spinners.during(waiting.clone(), tokio::time::timeout_at(deadline, events.recv())).await
    {
        let Some(status) = event.kind.delivery_status() else { continue };
        if !event.dedupe_key.contains(provider_id) {
            continue;
        }
        let _ = writeln!(out, "  {:<12} ({})", event.type_name().trim_start_matches("message."), event.dedupe_key);
        if sms_sdk::webhook::ordering::stage(status) == 2 {
            return;
        }
    }
    let _ = writeln!(out, "  (no final status within {} s)", TIMELINE_WAIT.as_secs());
}
