//! Fails over from Twilio to Telnyx after a sender rejection (offline: local stand-ins answer
//! as the two providers do, with Twilio's documented refusal of the sender).
//!
//! `cargo run -p sms-sdk --example failover`
//!
//! The same failover against the shipped emulator, with the real adapters over real HTTP, the
//! magic recipient only Twilio refuses and Telnyx's signed delivery webhooks arriving at its own
//! URL, is the emulator crate's example: `cargo run -p sms-sdk-emulator --example failover`
//! (`crates/sms-sdk-emulator/examples/failover.rs`). The library cannot depend on the emulator,
//! so this one keeps its stand-ins.

use sms_sdk::{Client, Failover, Message, Receipt, Telnyx, Twilio};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Sends through Twilio at `twilio_url`, then Telnyx at `telnyx_url` if Twilio refuses the sender.
///
/// # Errors
/// The send's error.
pub async fn send(twilio_url: &str, telnyx_url: &str) -> Result<Receipt, sms_sdk::Error> {
    let client = Client::builder()
        .adapter(
            Twilio::builder("AC0123456789abcdef0123456789abcdef", "test-token")
                .from("+15005550006")
                .base_url(twilio_url)
                .build()?,
        )
        .adapter(Telnyx::builder("KEY_test").from("+15005550007").base_url(telnyx_url).build()?)
        .failover(Failover::OnEligibleRejection)
        .build()?;
    client.send(&Message::new("+14155550123", "Your order has shipped.")).await
}

/// Stand-ins: Twilio refuses the sender (21606), Telnyx accepts.
pub async fn stand_ins() -> (MockServer, MockServer) {
    let twilio = MockServer::start().await;
    let refusal = serde_json::json!({"code": 21606, "message": "'From' number is not a valid message-capable Twilio number", "status": 400});
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(400).set_body_json(refusal)).mount(&twilio).await;
    let telnyx = MockServer::start().await;
    let accepted =
        serde_json::json!({"data": {"id": "40385f64-5717-4562-b3fc-2c963f66afa6", "to": [{"status": "queued"}]}});
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(200).set_body_json(accepted)).mount(&telnyx).await;
    (twilio, telnyx)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (twilio, telnyx) = stand_ins().await;
    let receipt = send(&twilio.uri(), &telnyx.uri()).await?;
    println!(
        "tried {}; {} accepted it as {}",
        receipt.attempted_providers.join(", "),
        receipt.provider,
        receipt.provider_id
    );
    Ok(())
}
