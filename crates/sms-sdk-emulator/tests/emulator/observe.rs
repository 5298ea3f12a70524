//! The observer: one event per request served and per webhook posted, safe to log.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Api, Receiver, TO, client, http};
use sms_sdk::Message;
use sms_sdk_emulator::magic::{self, Fault};
use sms_sdk_emulator::observe::{Operation, Outcome};
use sms_sdk_emulator::{Emulator, Provider, Served};

/// An emulator whose events are collected, with fast status steps to `webhook_url`.
async fn observed(webhook_url: String) -> (sms_sdk_emulator::RunningEmulator, Arc<Mutex<Vec<Served>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let emulator = Emulator::builder()
        .status_delay(Duration::from_millis(20))
        .webhook_url(webhook_url)
        .observe(move |event| sink.lock().unwrap().push(event.clone()))
        .start()
        .await
        .expect("starts");
    (emulator, events)
}

fn lines(events: &Mutex<Vec<Served>>) -> Vec<String> {
    events.lock().unwrap().iter().map(ToString::to_string).collect()
}

#[tokio::test]
async fn each_request_and_webhook_is_reported_with_masked_numbers() {
    let receiver = Receiver::start().await;
    let (emulator, events) = observed(receiver.url(Provider::Twilio)).await;
    let twilio = client(&emulator, Api::Twilio);
    let receipt = twilio.send(&Message::new(TO, "secret body text")).await.expect("accepted");
    let _ = twilio.send(&Message::new(magic::OPTED_OUT, "secret body text")).await;
    let _ = twilio.send(&Message::new(magic::RESET, "secret body text")).await;
    let _ = client(&emulator, Api::Telnyx).send(&Message::new(magic::SERVER_ERROR, "secret body text")).await;
    let status = http().get(format!("{}/_emulator/messages", emulator.base_url())).send().await.expect("GET").status();
    assert_eq!(status, 200);

    // Status webhooks come from background tasks, at their own pace.
    let requests: Vec<String> = lines(&events).into_iter().filter(|l| !l.contains(" webhook ")).collect();
    assert_eq!(
        requests,
        [
            "twilio send to=+1********23 201 accepted",
            "twilio send to=+1********04 400 rejected category=compliance",
            "twilio send to=+1********03 fault=reset",
            "telnyx send to=+1********01 500 fault=http500",
            "emulator inspect 200",
        ]
    );
    let first = events.lock().unwrap()[0].clone();
    let Served::Request(first) = first else { panic!("a request") };
    assert_eq!(
        (first.provider, first.operation, first.outcome),
        (Some(Provider::Twilio), Operation::Send, Outcome::Accepted)
    );
    assert!(matches!(&events.lock().unwrap()[2], Served::Request(r) if r.outcome == Outcome::Fault(Fault::Reset)));

    // The accepted message's two status webhooks.
    let deadline = Instant::now() + Duration::from_secs(5);
    while lines(&events).iter().filter(|l| l.contains(" webhook ")).count() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let all = lines(&events);
    let hooks: Vec<&String> = all.iter().filter(|l| l.contains(" webhook ")).collect();
    assert_eq!(hooks.len(), 2, "{all:#?} ({})", receipt.provider_id);
    assert!(hooks[0].starts_with("twilio webhook sent -> http://127.0.0.1:"), "{}", hooks[0]);
    assert!(hooks[1].starts_with("twilio webhook delivered -> "), "{}", hooks[1]);
    for line in &all {
        for secret in [TO, magic::OPTED_OUT, magic::RESET, magic::SERVER_ERROR, "secret body text"] {
            assert!(!line.contains(secret), "{line}");
        }
    }
    emulator.shutdown().await;
}
