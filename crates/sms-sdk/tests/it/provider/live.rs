//! Opt-in live sends through real provider accounts. Never run by CI: the test is ignored, and
//! it refuses to send unless `LIVE_SMS_TESTS=true` and `LIVE_SMS_TO` is listed in
//! `LIVE_SMS_ALLOWLIST` (comma-separated). Providers without credentials are left out.
//!
//! `LIVE_SMS_TESTS=true LIVE_SMS_TO=+1… LIVE_SMS_ALLOWLIST=+1… cargo test -p sms-sdk --test it live -- --ignored`

use std::env;

use sms_sdk::{Adapter, Client, Message, Plivo, Telnyx, Twilio, Vonage};

fn var(name: &str) -> Option<String> {
    env::var(name).ok().filter(|v| !v.is_empty())
}

async fn send_with(adapter: impl Adapter, to: &str) {
    let name = adapter.info().name.clone();
    let client = Client::builder().adapter(adapter).build().unwrap();
    let receipt = client
        .send(&Message::new(to, "sms-sdk live test").idempotency_key(format!("live:{name}:{}", uuid_like())))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    println!("{name}: accepted as {}", receipt.provider_id);
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

#[tokio::test]
#[ignore = "live: sends real SMS; needs LIVE_SMS_TESTS=true, LIVE_SMS_TO in LIVE_SMS_ALLOWLIST and credentials"]
async fn live_send_one_message_per_configured_provider() {
    assert_eq!(var("LIVE_SMS_TESTS").as_deref(), Some("true"), "set LIVE_SMS_TESTS=true to send real messages");
    let to = var("LIVE_SMS_TO").expect("set LIVE_SMS_TO");
    let allowed = var("LIVE_SMS_ALLOWLIST").unwrap_or_default();
    assert!(allowed.split(',').any(|n| n.trim() == to), "LIVE_SMS_TO must be listed in LIVE_SMS_ALLOWLIST");
    let mut sent = 0;
    if let (Some(sid), Some(token), Some(from)) =
        (var("TWILIO_ACCOUNT_SID"), var("TWILIO_AUTH_TOKEN"), var("TWILIO_FROM"))
    {
        send_with(Twilio::builder(sid, token).from(from).build().unwrap(), &to).await;
        sent += 1;
    }
    if let (Some(key), Some(from)) = (var("TELNYX_API_KEY"), var("TELNYX_FROM")) {
        send_with(Telnyx::builder(key).from(from).build().unwrap(), &to).await;
        sent += 1;
    }
    if let (Some(id), Some(token), Some(from)) = (var("PLIVO_AUTH_ID"), var("PLIVO_AUTH_TOKEN"), var("PLIVO_FROM")) {
        send_with(Plivo::builder(id, token).from(from).build().unwrap(), &to).await;
        sent += 1;
    }
    if let (Some(key), Some(secret), Some(from)) = (var("VONAGE_API_KEY"), var("VONAGE_API_SECRET"), var("VONAGE_FROM"))
    {
        send_with(Vonage::basic(key, secret).from(from).build().unwrap(), &to).await;
        sent += 1;
    }
    assert!(sent > 0, "no provider has credentials in the environment");
}
