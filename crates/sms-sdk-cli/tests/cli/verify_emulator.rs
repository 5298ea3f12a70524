//! `sms-sdk webhook verify` on status webhooks the emulator really sent: accepted as signed,
//! refused after one signed byte changes or at another URL where the URL is signed, and printed
//! without a full number, for each provider.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::routing::post;
use sms_sdk::{Client, Message};
use sms_sdk_cli::{Env, run};
use sms_sdk_emulator::{Emulator, credentials};

type Captured = Arc<Mutex<Vec<(String, HeaderMap, Vec<u8>)>>>;

async fn capture(State(log): State<Captured>, uri: Uri, headers: HeaderMap, body: Bytes) -> StatusCode {
    log.lock().unwrap().push((uri.to_string(), headers, body.to_vec()));
    StatusCode::NO_CONTENT
}

/// Sends one message per provider through the emulator and returns the webhooks it posted, with
/// the URL they were posted to.
fn emulator_webhooks() -> (String, Vec<(String, HeaderMap, Vec<u8>)>) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let log: Captured = Arc::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hooks", listener.local_addr().unwrap());
        let app = Router::new().route("/hooks", post(capture)).with_state(log.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let emulator =
            Emulator::builder().webhook_url(&url).status_delay(Duration::from_millis(20)).start().await.unwrap();
        let message = Message::new("+14155550123", "Hello");
        let from = "+15005550006";
        Client::builder()
            .adapter(emulator.twilio().from(from).build().unwrap())
            .build()
            .unwrap()
            .send(&message)
            .await
            .unwrap();
        Client::builder()
            .adapter(emulator.telnyx().from(from).build().unwrap())
            .build()
            .unwrap()
            .send(&message)
            .await
            .unwrap();
        Client::builder()
            .adapter(emulator.plivo().from(from).build().unwrap())
            .build()
            .unwrap()
            .send(&message)
            .await
            .unwrap();
        Client::builder()
            .adapter(emulator.vonage_application().from(from).build().unwrap())
            .build()
            .unwrap()
            .send(&message)
            .await
            .unwrap();
        for _ in 0..100 {
            if log.lock().unwrap().len() >= 8 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        emulator.shutdown().await;
        let captured = log.lock().unwrap().clone();
        (url, captured)
    })
}

fn provider_of(headers: &HeaderMap) -> &'static str {
    if headers.contains_key("x-twilio-signature") {
        "twilio"
    } else if headers.contains_key("telnyx-signature-ed25519") {
        "telnyx"
    } else if headers.contains_key("x-plivo-signature-v3") || headers.contains_key("x-plivo-signature-v2") {
        "plivo"
    } else {
        "vonage"
    }
}

fn verify(provider: &str, url: &str, headers: &HeaderMap, body: &[u8]) -> u8 {
    let (code, out, err) = verify_output(provider, url, headers, body, &[]);
    assert!(code == 0 || !out.contains("verified"), "{err}");
    code
}

/// `webhook verify` of a captured request at `url`, with `extra` arguments: the exit code,
/// stdout and stderr.
fn verify_output(provider: &str, url: &str, headers: &HeaderMap, body: &[u8], extra: &[&str]) -> (u8, String, String) {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let file = std::env::temp_dir().join(format!("sms-sdk-verify-{}-{nanos}", std::process::id()));
    std::fs::write(&file, body).unwrap();
    let mut args: Vec<String> =
        ["webhook", "verify", "--provider", provider, "--url", url].iter().map(|s| (*s).to_owned()).collect();
    args.extend(["--body-file".to_owned(), file.display().to_string()]);
    for (name, value) in headers {
        args.extend(["-H".to_owned(), format!("{name}: {}", value.to_str().unwrap())]);
    }
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let env: Env = [
        ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN),
        ("TELNYX_PUBLIC_KEY", credentials::TELNYX_PUBLIC_KEY),
        ("PLIVO_AUTH_TOKEN", credentials::PLIVO_AUTH_TOKEN),
        ("VONAGE_SIGNATURE_SECRET", credentials::VONAGE_SIGNATURE_SECRET),
    ]
    .into_iter()
    .collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &env, &mut out, &mut err);
    let _ = std::fs::remove_file(file);
    (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

#[test]
fn emulator_webhooks_verify_and_a_changed_byte_is_refused() {
    let (url, captured) = emulator_webhooks();
    let mut seen = std::collections::BTreeSet::new();
    for (path, headers, body) in &captured {
        let provider = provider_of(headers);
        let received = format!("{}{}", url.trim_end_matches("/hooks"), path);
        assert_eq!(verify(provider, &received, headers, body), 0, "{provider} webhook did not verify");
        let mut changed = body.clone();
        let at = changed.len() / 2;
        changed[at] = if changed[at] == b'1' { b'2' } else { b'1' };
        assert_eq!(verify(provider, &received, headers, &changed), 1, "{provider}: a changed byte was accepted");
        seen.insert(provider);
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["plivo", "telnyx", "twilio", "vonage"]);
}

#[test]
fn emulator_webhooks_at_another_url_fail_only_where_the_url_is_signed_and_json_masks_numbers() {
    let (url, captured) = emulator_webhooks();
    let mut seen = std::collections::BTreeSet::new();
    for (path, headers, body) in &captured {
        let provider = provider_of(headers);
        let received = format!("{}{}", url.trim_end_matches("/hooks"), path);
        let (code, out, err) = verify_output(provider, &received, headers, body, &["--json"]);
        assert_eq!(code, 0, "{provider}: {out}{err}");
        let event: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert!(event.get("raw").is_none() && event.get("body").is_none(), "{provider}: {event}");
        for number in ["14155550123", "15005550006"] {
            assert!(!out.contains(number), "{provider}: {number} in {out}");
        }
        // The same request checked against the URL a server behind a proxy would see.
        let internal = received.replacen("http://127.0.0.1", "https://10.0.0.5", 1);
        let (code, out, err) = verify_output(provider, &internal, headers, body, &[]);
        if matches!(provider, "twilio" | "plivo") {
            assert_eq!(code, 1, "{provider}: {out}{err}");
            assert!(err.contains("The URL is part of what"), "{provider}: {err}");
            assert!(err.contains(&format!("URL used: {internal}")), "{provider}: {err}");
        } else {
            assert_eq!(code, 0, "{provider}: the URL is not signed: {out}{err}");
        }
        seen.insert(provider);
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), ["plivo", "telnyx", "twilio", "vonage"]);
}

#[test]
fn a_repeated_key_makes_one_emulator_request() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let emulator = runtime.block_on(Emulator::builder().start()).unwrap();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let store = std::env::temp_dir().join(format!("sms-sdk-one-request-{nanos}")).join("state.db");
    let env: Env = [
        ("TWILIO_ACCOUNT_SID", credentials::TWILIO_ACCOUNT_SID.to_owned()),
        ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN.to_owned()),
        ("TWILIO_FROM", "+15005550006".to_owned()),
        ("SMS_SDK_TWILIO_BASE_URL", emulator.base_url()),
        ("SMS_SDK_STORE", format!("sqlite:{}", store.display())),
    ]
    .into_iter()
    .collect();
    let send = |body: &str| {
        let args: Vec<String> = ["send", "--to", "+14155550123", "--body", body, "--idempotency-key", "order:9"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &env, &mut out, &mut err);
        (code, String::from_utf8(out).unwrap())
    };
    assert_eq!(send("Your order has shipped.").0, 0);
    let (code, out) = send("Your order has shipped.");
    assert_eq!(code, 0);
    assert!(out.contains("replayed"), "{out}");
    assert_eq!(send("Another body").0, 4);
    assert_eq!(emulator.messages().len(), 1, "one request reached the emulator");
    runtime.block_on(emulator.shutdown());
}
