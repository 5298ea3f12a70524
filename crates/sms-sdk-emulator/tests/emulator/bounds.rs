//! The emulator's limits: an oversized body is answered in each provider's own error shape (and
//! classified as a rejection by the real adapters), a slow client is cut off after the header
//! read timeout (but a held send is not), and the kept history is bounded.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use common::{Api, FROM, TO, client, client_with, http, inspection, json_of};
use http::HeaderMap;
use serde_json::{Value, json};
use sms_sdk::adapter::{Adapter, Outcome, SendContext};
use sms_sdk::{Category, ErrorKind, Message, OutboundMessage, PhoneNumber, RetryPolicy, Sender, UnknownReason};
use sms_sdk_emulator::credentials::{
    BANDWIDTH_ACCOUNT_ID, BANDWIDTH_API_PASSWORD, BANDWIDTH_API_USER, BANDWIDTH_APPLICATION_ID, INFOBIP_API_KEY,
    PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN, SINCH_API_TOKEN, SINCH_SERVICE_PLAN_ID, TELNYX_API_KEY, TWILIO_ACCOUNT_SID,
    TWILIO_AUTH_TOKEN, VONAGE_API_KEY, VONAGE_API_SECRET,
};
use sms_sdk_emulator::{DEFAULT_BODY_LIMIT, Emulator, Provider, RunningEmulator, StartErrorKind, Status, magic};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A text that makes any send body larger than the default limit.
fn oversized_text() -> String {
    "a".repeat(DEFAULT_BODY_LIMIT + 1)
}

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

/// The send URL, `Authorization`, content type and an oversized but otherwise valid body of
/// `provider`'s send route (AWS's `Authorization` is not looked at: the body's size is checked
/// first).
fn oversized_send(emulator: &RunningEmulator, provider: Provider) -> (String, String, &'static str, Vec<u8>) {
    let base = emulator.base_url();
    let text = oversized_text();
    let json = |body: Value| body.to_string().into_bytes();
    match provider {
        Provider::Twilio => (
            format!("{base}/2010-04-01/Accounts/{TWILIO_ACCOUNT_SID}/Messages.json"),
            basic(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN),
            "application/x-www-form-urlencoded",
            format!("To=%2B14155550123&From=%2B15005550006&Body={text}").into_bytes(),
        ),
        Provider::Telnyx => (
            format!("{base}/v2/messages"),
            format!("Bearer {TELNYX_API_KEY}"),
            "application/json",
            json(json!({"to": TO, "from": FROM, "text": text})),
        ),
        Provider::Plivo => (
            format!("{base}/v1/Account/{PLIVO_AUTH_ID}/Message/"),
            basic(PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN),
            "application/json",
            json(json!({"dst": TO, "src": FROM, "text": text})),
        ),
        Provider::Vonage => (
            format!("{base}/v1/messages"),
            basic(VONAGE_API_KEY, VONAGE_API_SECRET),
            "application/json",
            json(json!({"to": TO, "from": FROM, "text": text, "message_type": "text", "channel": "sms"})),
        ),
        Provider::Sinch => (
            format!("{base}/xms/v1/{SINCH_SERVICE_PLAN_ID}/batches"),
            format!("Bearer {SINCH_API_TOKEN}"),
            "application/json",
            json(json!({"to": [TO], "from": FROM, "body": text})),
        ),
        Provider::Aws => (
            format!("{base}/"),
            "AWS4-HMAC-SHA256 Credential=AKIAE1A7000000000006/20270115/us-east-1/sms-voice/aws4_request, \
             SignedHeaders=host, Signature=00"
                .to_owned(),
            AWS_JSON,
            json(json!({"DestinationPhoneNumber": TO, "OriginationIdentity": FROM, "MessageBody": text})),
        ),
        Provider::Infobip => (
            format!("{base}/sms/3/messages"),
            format!("App {INFOBIP_API_KEY}"),
            "application/json",
            json(json!({"messages": [{"sender": FROM, "destinations": [{"to": TO}], "content": {"text": text}}]})),
        ),
        Provider::Bandwidth => (
            format!("{base}/api/v2/users/{BANDWIDTH_ACCOUNT_ID}/messages"),
            basic(BANDWIDTH_API_USER, BANDWIDTH_API_PASSWORD),
            "application/json",
            json(json!({"applicationId": BANDWIDTH_APPLICATION_ID, "to": [TO], "from": FROM, "text": text})),
        ),
    }
}

/// The content type of AWS JSON 1.0.
const AWS_JSON: &str = "application/x-amz-json-1.0";

fn keys(json: &Value) -> Vec<&str> {
    json.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn interpret(provider: Provider, status: u16, headers: &HeaderMap, body: &[u8]) -> Outcome {
    let now = SystemTime::now();
    match provider {
        Provider::Twilio => sms_sdk::provider::twilio::__private::interpret(status, headers, body, now),
        Provider::Telnyx => sms_sdk::provider::telnyx::__private::interpret(status, headers, body, now),
        Provider::Plivo => sms_sdk::provider::plivo::__private::interpret(status, headers, body, now),
        Provider::Vonage => sms_sdk::provider::vonage::__private::interpret(status, headers, body, now),
        Provider::Sinch => sms_sdk::provider::sinch::__private::interpret(status, headers, body, now),
        Provider::Aws => sms_sdk::provider::aws::__private::interpret(status, headers, body, now),
        Provider::Infobip => sms_sdk::provider::infobip::__private::interpret(status, headers, body, now),
        Provider::Bandwidth => sms_sdk::provider::bandwidth::__private::interpret(status, headers, body, now),
    }
}

#[tokio::test]
async fn an_oversized_send_gets_each_providers_own_error() {
    let emulator = common::emulator().await;
    for provider in Provider::ALL {
        let (url, authorization, content_type, body) = oversized_send(&emulator, provider);
        let response = http()
            .post(url)
            .header("authorization", authorization)
            .header("content-type", content_type)
            .header("x-amz-target", "PinpointSMSVoiceV2.SendTextMessage")
            .body(body)
            .send()
            .await
            .expect("the emulator answers");
        let (status, headers) = (response.status().as_u16(), response.headers().clone());
        let bytes = response.bytes().await.expect("a body");
        let json: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        assert_eq!(status, 413, "{provider}");
        let expected_type = match provider {
            Provider::Vonage => "application/problem+json",
            Provider::Aws => AWS_JSON,
            Provider::Twilio
            | Provider::Telnyx
            | Provider::Plivo
            | Provider::Sinch
            | Provider::Infobip
            | Provider::Bandwidth => "application/json",
        };
        assert_eq!(headers.get("content-type").and_then(|v| v.to_str().ok()), Some(expected_type), "{provider}");
        match provider {
            Provider::Twilio => {
                assert_eq!(keys(&json), ["code", "message", "more_info", "status"]);
                assert_eq!((json["code"].as_u64(), json["status"].as_u64()), (Some(20413), Some(413)));
            }
            Provider::Telnyx => {
                let error = &json["errors"][0];
                assert!(["code", "title", "detail"].iter().all(|k| error[k].is_string()), "{json}");
            }
            Provider::Plivo => assert_eq!(keys(&json), ["api_id", "error"]),
            Provider::Vonage => assert_eq!(keys(&json), ["type", "title", "detail", "instance"]),
            Provider::Sinch => assert_eq!(keys(&json), ["code", "text"]),
            Provider::Infobip => {
                assert_eq!(keys(&json), ["errorCode", "description", "action", "violations", "resources"]);
            }
            Provider::Bandwidth => assert_eq!(keys(&json), ["type", "description"]),
            Provider::Aws => {
                assert_eq!(keys(&json), ["__type", "Message", "Reason"]);
                assert!(headers.contains_key("x-amzn-requestid") && headers.contains_key("x-amzn-errortype"));
            }
        }
        let outcome = interpret(provider, status, &headers, &bytes);
        assert!(matches!(outcome, Outcome::Rejected(ref r) if r.category == Category::Request), "{provider}");
    }
    let listed = inspection(&emulator).await;
    assert_eq!(listed.len(), Provider::ALL.len());
    assert!(listed.iter().all(|m| m["status"] == "rejected" && m["http_status"] == 413 && m["id"].is_null()));
}

/// What an adapter sends for `text`, bypassing the client's own checks.
fn outbound(text: String) -> OutboundMessage {
    let from = Sender::phone(FROM).resolve().expect("a valid sender");
    OutboundMessage::new(PhoneNumber::parse(TO).expect("a valid recipient"), from, text)
}

async fn adapter_send(emulator: &RunningEmulator, api: Api, message: &OutboundMessage) -> Outcome {
    let cx = SendContext::new(1, None, Duration::from_secs(10));
    match api {
        Api::Twilio => emulator.twilio().build().expect("adapter").send(message, &cx).await,
        Api::Telnyx => emulator.telnyx().build().expect("adapter").send(message, &cx).await,
        Api::Plivo => emulator.plivo().build().expect("adapter").send(message, &cx).await,
        Api::VonageBasic => emulator.vonage().build().expect("adapter").send(message, &cx).await,
        Api::VonageApplication => emulator.vonage_application().build().expect("adapter").send(message, &cx).await,
        Api::Sinch => emulator.sinch().build().expect("adapter").send(message, &cx).await,
        Api::Aws => emulator.aws().build().expect("adapter").send(message, &cx).await,
        Api::Infobip => emulator.infobip().build().expect("adapter").send(message, &cx).await,
        Api::BandwidthBasic => emulator.bandwidth().build().expect("adapter").send(message, &cx).await,
        Api::BandwidthOAuth2 => emulator.bandwidth_oauth2().build().expect("adapter").send(message, &cx).await,
    }
}

#[tokio::test]
async fn the_adapters_classify_an_oversized_send_as_a_rejection() {
    let emulator = common::emulator().await;
    let oversized = outbound(oversized_text());
    for api in Api::ALL {
        match adapter_send(&emulator, api, &oversized).await {
            Outcome::Rejected(rejection) => {
                assert_eq!(rejection.category, Category::Request, "{api:?}");
                assert_eq!(rejection.details.status(), Some(413), "{api:?}");
            }
            other @ (Outcome::Accepted(_) | Outcome::Unknown(_)) => panic!("{api:?}: {other:?}"),
        }
        // The emulator is still serving.
        let accepted = adapter_send(&emulator, api, &outbound("hi".to_owned())).await;
        assert!(matches!(accepted, Outcome::Accepted(_)), "{api:?}: {accepted:?}");
    }
}

#[tokio::test]
async fn the_inbound_route_bounds_its_body_too() {
    let emulator = common::emulator().await;
    let url = format!("{}/_emulator/inbound", emulator.base_url());
    let body = json!({"provider": "twilio", "from": TO, "to": FROM, "text": oversized_text()}).to_string();
    let response = http().post(&url).header("content-type", "application/json").body(body).send().await.expect("POST");
    let (status, json) = json_of(response).await;
    assert_eq!(status, 413);
    assert!(json["error"].as_str().is_some_and(|e| e.contains(&DEFAULT_BODY_LIMIT.to_string())), "{json}");
    // A body within the limit is read (and refused for want of an inbound URL).
    let (status, _) =
        common::post_json(&url, &json!({"provider": "twilio", "from": TO, "to": FROM, "text": "STOP"})).await;
    assert_eq!(status, 409);
}

#[tokio::test]
async fn a_smaller_body_limit_can_be_configured() {
    let emulator = Emulator::builder().body_limit(64).start().await.expect("starts");
    let err = client(&emulator, Api::Telnyx)
        .send(&Message::new(TO, "a text that makes the JSON body longer than sixty-four bytes"))
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Request));
    assert_eq!(emulator.messages()[0].http_status, Some(413));
}

/// How long until the emulator closes a connection on which `sent` was written, at most `wait`.
async fn closed_after(emulator: &RunningEmulator, sent: &[u8], wait: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut stream = tokio::net::TcpStream::connect(emulator.local_addr()).await.expect("connect");
    stream.write_all(sent).await.expect("write");
    let mut answer = Vec::new();
    // A close (with or without a 408 first) or a reset both end the read.
    match tokio::time::timeout(wait, stream.read_to_end(&mut answer)).await {
        Ok(_) => Some(start.elapsed()),
        Err(_) => None,
    }
}

#[tokio::test]
async fn timeout_a_slow_client_is_cut_off_after_the_header_read_timeout() {
    let timeout = Duration::from_millis(300);
    let emulator = Emulator::builder().header_read_timeout(timeout).start().await.expect("starts");
    for sent in [&b"POST /v2/mess"[..], b"POST /v2/messages HTTP/1.1\r\nhost: emulator\r\n", b""] {
        let text = String::from_utf8_lossy(sent);
        let closed = closed_after(&emulator, sent, Duration::from_secs(5)).await;
        let closed = closed.unwrap_or_else(|| panic!("{text:?}: still open after 5 s"));
        assert!(closed >= timeout.saturating_sub(Duration::from_millis(50)), "{text:?}: closed after {closed:?}");
    }
    // Requests that arrive in time are served as usual.
    let receipt = client(&emulator, Api::Twilio).send(&Message::new(TO, "hi")).await.expect("accepted");
    assert!(receipt.provider_id.starts_with("SM"));
}

#[tokio::test]
async fn timeout_a_send_body_trickled_byte_by_byte_is_cut_at_the_read_timeout() {
    let timeout = Duration::from_millis(400);
    let emulator = Emulator::builder().header_read_timeout(timeout).start().await.expect("starts");
    let head = format!(
        "POST /2010-04-01/Accounts/{TWILIO_ACCOUNT_SID}/Messages.json HTTP/1.1\r\nhost: emulator\r\nauthorization: {}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 100000\r\nconnection: close\r\n\r\nTo=",
        basic(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN)
    );
    let start = Instant::now();
    let mut stream = tokio::net::TcpStream::connect(emulator.local_addr()).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write");
    // One byte every 100 ms until the emulator answers and closes (or 10 s pass).
    let (mut answer, mut buffer) = (Vec::new(), [0; 4096]);
    while start.elapsed() < Duration::from_secs(10) {
        match tokio::time::timeout(Duration::from_millis(100), stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(n)) => answer.extend_from_slice(&buffer[..n]),
            Err(_) => {
                if stream.write_all(b"1").await.is_err() {
                    break;
                }
            }
        }
    }
    let took = start.elapsed();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        took >= timeout.saturating_sub(Duration::from_millis(50)) && took < timeout + Duration::from_secs(3),
        "{took:?}"
    );
    assert!(emulator.messages().iter().all(|m| m.id.is_none()), "a message was created");
}

#[tokio::test]
async fn a_held_send_outlasts_the_header_read_timeout() {
    let emulator = Emulator::builder().header_read_timeout(Duration::from_millis(200)).start().await.expect("starts");
    let client = client_with(&emulator, Api::Telnyx, |builder| {
        builder.retry(RetryPolicy::none()).timeout(Duration::from_millis(1200))
    });
    let start = Instant::now();
    let err = client.send(&Message::new(magic::HOLD, "hi")).await.expect_err("never answered");
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::Timeout));
    assert!(start.elapsed() >= Duration::from_millis(1100), "{:?}", start.elapsed());
}

#[tokio::test]
async fn the_history_keeps_only_the_last_entries() {
    let emulator = Emulator::builder().max_messages(3).start().await.expect("starts");
    let client = client(&emulator, Api::Twilio);
    let mut ids = Vec::new();
    for n in 0..5 {
        ids.push(client.send(&Message::new(TO, format!("message {n}"))).await.expect("accepted").provider_id);
    }
    let kept: Vec<Option<String>> = emulator.messages().into_iter().map(|m| m.id).collect();
    let expected: Vec<Option<String>> = ids.iter().skip(2).cloned().map(Some).collect();
    assert_eq!(kept, expected);
    let fetch = |sid: &str| {
        http()
            .get(format!("{}/2010-04-01/Accounts/{TWILIO_ACCOUNT_SID}/Messages/{sid}.json", emulator.base_url()))
            .header("authorization", basic(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN))
            .send()
    };
    assert_eq!(fetch(&ids[0]).await.expect("GET").status().as_u16(), 404);
    assert_eq!(fetch(&ids[4]).await.expect("GET").status().as_u16(), 200);
    // The kept messages still move through their statuses.
    assert!(common::eventually(|| emulator.messages().iter().all(|m| m.status == Status::Delivered)).await);
}

#[tokio::test]
async fn the_rate_limited_once_keys_are_bounded_too() {
    let emulator = Emulator::builder().max_messages(1).start().await.expect("starts");
    let client = client(&emulator, Api::Plivo);
    let limited = async |body: &str| {
        let result = client.send(&Message::new(magic::RATE_LIMITED_ONCE, body)).await;
        result.err().map(|e| e.kind()) == Some(ErrorKind::Rejected(Category::RateLimited))
    };
    assert!(limited("a").await);
    assert!(limited("b").await);
    // "a" was forgotten to keep "b": it is limited again instead of accepted, and so is "b".
    assert!(limited("a").await);
    assert!(limited("b").await);
    // Twice in a row, the second is accepted.
    assert!(!limited("b").await);
}

#[tokio::test]
async fn delays_and_timeouts_out_of_range_are_refused() {
    let kind =
        |builder: sms_sdk_emulator::EmulatorBuilder| async move { builder.start().await.err().map(|e| e.kind()) };
    let invalid = Some(StartErrorKind::InvalidSetting);
    assert_eq!(kind(Emulator::builder().header_read_timeout(Duration::ZERO)).await, invalid);
    assert_eq!(kind(Emulator::builder().header_read_timeout(Duration::MAX)).await, invalid);
    assert_eq!(kind(Emulator::builder().status_delay(Duration::MAX)).await, invalid);
    assert_eq!(kind(Emulator::builder().webhook_retry_interval(Duration::MAX)).await, invalid);
}
