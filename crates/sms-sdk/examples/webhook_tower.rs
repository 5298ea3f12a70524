//! Verified webhooks through the tower layer (feature `tower`), offline: a signed Twilio STOP
//! and a forged copy of it go through `VerifyLayer` with `oneshot`, as a tower-based server
//! would pass them. The inner service answers with the event's type; it never sees the forgery.
//!
//! ```text
//! cargo run -p sms-sdk --example webhook_tower --features tower,testing
//! ```

use std::convert::Infallible;
use std::error::Error;

use http_body_util::{BodyExt as _, Full};
use sms_sdk::TwilioWebhook;
use sms_sdk::testing::webhooks::{SignedRequest, signed_twilio_request};
use sms_sdk::webhook::SmsEvent;
use sms_sdk::webhook::tower::{VerifiedBody, VerifyLayer};
use tower::{Layer as _, ServiceExt as _, service_fn};

/// The URL Twilio is configured to call.
const URL: &str = "https://example.com/sms/twilio";

/// The service behind the layer: only verified requests reach it, with their event.
async fn handle(request: http::Request<VerifiedBody>) -> Result<http::Response<String>, Infallible> {
    let kind = request.extensions().get::<SmsEvent>().map_or("none", SmsEvent::type_name);
    Ok(http::Response::new(kind.to_owned()))
}

/// `signed` as an HTTP/1.1 server receives it: the path as the target, the host in `Host`.
///
/// # Errors
/// When the URL's path or a header is not valid HTTP.
pub fn http_request(signed: &SignedRequest) -> Result<http::Request<Full<bytes::Bytes>>, http::Error> {
    let (host, path) = signed
        .url
        .split_once("://")
        .map_or(("", "/"), |(_, rest)| rest.find('/').map_or((rest, "/"), |at| rest.split_at(at)));
    let mut request = http::Request::builder().method(signed.method.as_str()).uri(path);
    if !host.is_empty() {
        request = request.header(http::header::HOST, host);
    }
    for (name, value) in &signed.headers {
        request = request.header(name, value);
    }
    request.body(Full::from(signed.body.clone()))
}

/// Sends a signed STOP and a forged one through the layer; returns each answer's status and body.
///
/// # Errors
/// When the verifier cannot be built or a request cannot be sent through the layer.
pub async fn run() -> Result<Vec<(u16, String)>, Box<dyn Error>> {
    // Behind a proxy or TLS terminator the server sees another URL: name the one Twilio signs.
    let twilio = TwilioWebhook::new("auth-token")?.public_url(URL);
    let service = VerifyLayer::new(twilio).layer(service_fn(handle));

    let stop = [
        ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
        ("From", "+14155550123"),
        ("To", "+15005550006"),
        ("Body", "STOP"),
    ];
    let signed = signed_twilio_request("auth-token", URL, &stop);
    let forged = signed.clone().header("x-twilio-signature", "Zm9yZ2VkIHNpZ25hdHVyZSE=");

    let mut answers = Vec::new();
    for request in [signed, forged] {
        let response = service.clone().oneshot(http_request(&request)?).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes();
        answers.push((status, String::from_utf8_lossy(&body).trim_end().to_owned()));
    }
    Ok(answers)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    for (status, body) in run().await? {
        println!("{status} {body}");
    }
    Ok(())
}
