//! Sends one message through Twilio. Offline by default: a local stand-in answers as Twilio
//! does; set `TWILIO_ACCOUNT_SID`, `TWILIO_AUTH_TOKEN` and `TWILIO_FROM` to send for real.
//!
//! `cargo run -p sms-sdk --example send`

use sms_sdk::{Client, Message, Receipt, Twilio};

/// Sends the example message through Twilio at `base_url`.
///
/// # Errors
/// The send's error.
pub async fn send(base_url: &str, account_sid: &str, auth_token: &str, from: &str) -> Result<Receipt, sms_sdk::Error> {
    let twilio = Twilio::builder(account_sid, auth_token).from(from).base_url(base_url).build()?;
    let client = Client::builder().adapter(twilio).build()?;
    client.send(&Message::new("+14155550123", "Your order has shipped.").idempotency_key("order:123:shipped:v1")).await
}

/// A local server answering like Twilio's Messages API.
pub async fn stand_in() -> wiremock::MockServer {
    let server = wiremock::MockServer::start().await;
    let body = serde_json::json!({"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"});
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(201).set_body_json(body))
        .mount(&server)
        .await;
    server
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let receipt = if let (Some(sid), Some(token), Some(from)) =
        (var("TWILIO_ACCOUNT_SID"), var("TWILIO_AUTH_TOKEN"), var("TWILIO_FROM"))
    {
        send("https://api.twilio.com", &sid, &token, &from).await?
    } else {
        let server = stand_in().await;
        send(&server.uri(), "AC0123456789abcdef0123456789abcdef", "test-token", "+15005550006").await?
    };
    println!("{} accepted it: {} ({})", receipt.provider, receipt.provider_id, receipt.id);
    Ok(())
}
