//! The axum webhook example, run for real over loopback (T249 and the issue's "signed gets 2xx,
//! forged gets 401").

use std::future::IntoFuture as _;

#[path = "../../examples/webhook_axum.rs"]
#[allow(dead_code, unreachable_pub, missing_docs)]
mod example;

use sms_sdk::testing::webhooks::{
    SignedRequest, TelnyxKeyPair, signed_plivo_request, signed_telnyx_request, signed_twilio_request,
    signed_vonage_request,
};

async fn serve(hooks: example::Hooks) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(sms_sdk::webhook::axum::serve(listener, example::app(hooks)).into_future());
    format!("http://{address}")
}

async fn post(base: &str, path: &str, request: &SignedRequest) -> u16 {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let mut builder = client.post(format!("{base}{path}")).body(request.body.clone());
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    builder.send().await.unwrap().status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t249_webhook_handler_example() {
    let key = TelnyxKeyPair::generate();
    let base_url = "https://hooks.example.com";
    let hooks = example::Hooks {
        twilio: sms_sdk::TwilioWebhook::new("twilio-token").unwrap().public_url(format!("{base_url}/sms/twilio")),
        telnyx: sms_sdk::TelnyxWebhook::new(&key.public_key).unwrap(),
        plivo: sms_sdk::PlivoWebhook::new("plivo-token").unwrap().public_url(format!("{base_url}/sms/plivo")),
        vonage: sms_sdk::VonageWebhook::new("vonage-secret").unwrap(),
        seen: std::sync::Arc::new(sms_sdk::store::MemoryStore::new()),
        handled: std::sync::Arc::default(),
    };
    let handled = hooks.handled.clone();
    let base = serve(hooks).await;

    let stop = [
        ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
        ("From", "+14155550123"),
        ("To", "+15005550006"),
        ("Body", "STOP"),
    ];
    let twilio = signed_twilio_request("twilio-token", &format!("{base_url}/sms/twilio"), &stop);
    let now =
        i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()).unwrap();
    let telnyx_body = r#"{"data":{"event_type":"message.finalized","id":"evt-1","payload":{"id":"m1","to":[{"phone_number":"+14155550123","status":"delivered"}]}}}"#;
    let telnyx = signed_telnyx_request(&key, "", telnyx_body, now);
    let forged = SignedRequest::new("POST", "", "Body=STOP").header("x-twilio-signature", "forged");
    let statuses = [
        post(&base, "/sms/twilio", &twilio).await,
        post(&base, "/sms/twilio", &twilio).await,
        post(&base, "/sms/telnyx", &telnyx).await,
        post(&base, "/sms/twilio", &forged).await,
    ];
    assert_eq!(statuses, [204, 204, 204, 401]);
    assert_eq!(*handled.lock().unwrap(), ["recipient.opted_out", "message.delivered"]);

    // The other two providers, and a malformed but authentic payload (400).
    let plivo = signed_plivo_request(
        "plivo-token",
        &format!("{base_url}/sms/plivo"),
        &[("MessageUUID", "u1"), ("Status", "sent")],
        "9",
    );
    assert_eq!(post(&base, "/sms/plivo", &plivo).await, 204);
    let vonage =
        signed_vonage_request("vonage-secret", "", r#"{"message_uuid":"v1","status":"delivered"}"#, now, "jti-1");
    assert_eq!(post(&base, "/sms/vonage", &vonage).await, 204);
    let malformed = signed_plivo_request("plivo-token", &format!("{base_url}/sms/plivo"), &[("Status", "sent")], "9");
    assert_eq!(post(&base, "/sms/plivo", &malformed).await, 400);
}
