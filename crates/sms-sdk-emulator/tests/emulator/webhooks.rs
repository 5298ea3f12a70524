//! Status and inbound webhooks: every one verifies with the library's verifier and normalizes
//! to the expected events.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Api, Receiver, TO, client, emulator, eventually, post_json};
use serde_json::json;
use sms_sdk::Message;
use sms_sdk_emulator::{Emulator, Provider, Status, magic};

/// The event types each provider id received, in arrival order.
fn events_by_id(receiver: &Receiver) -> BTreeMap<String, Vec<String>> {
    let mut events: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for received in receiver.received() {
        let (kind, id) =
            received.outcome.unwrap_or_else(|e| panic!("{} webhook did not verify: {e}", received.provider));
        events.entry(id).or_default().push(kind);
    }
    events
}

#[tokio::test]
async fn status_webhooks_verify_and_normalize_for_every_provider() {
    let receiver = Receiver::start().await;
    // AWS and Bandwidth have no per-message callback URL: their events go to their provider URL.
    let emulator = Emulator::builder()
        .webhook_url_for(Provider::Aws, receiver.url(Provider::Aws))
        .webhook_url_for(Provider::Bandwidth, receiver.url(Provider::Bandwidth))
        .status_delay(Duration::from_millis(30))
        .start()
        .await
        .expect("starts");
    let mut expected = BTreeMap::new();
    for api in [
        Api::Twilio,
        Api::Telnyx,
        Api::Plivo,
        Api::VonageApplication,
        Api::Sinch,
        Api::Aws,
        Api::Infobip,
        Api::BandwidthBasic,
    ] {
        let url = receiver.url(api.provider());
        for (to, last) in [(TO, "message.delivered"), (magic::UNDELIVERED, "message.undelivered")] {
            let message = Message::new(to, "Status please");
            let message = if api.has_callback_url() { message.webhook_url(url.clone()) } else { message };
            let receipt = client(&emulator, api).send(&message).await.expect("accepted");
            expected.insert(receipt.provider_id, vec!["message.sent".to_owned(), last.to_owned()]);
        }
    }
    receiver.wait_for(expected.len() * 2).await;
    assert_eq!(events_by_id(&receiver), expected);
    assert!(receiver.received().iter().all(|r| r.outcome.is_ok()));
    let finals: Vec<(Provider, Status)> = emulator.messages().iter().map(|m| (m.provider, m.status)).collect();
    for provider in Provider::ALL {
        assert!(finals.contains(&(provider, Status::Delivered)), "{finals:?}");
        assert!(finals.contains(&(provider, Status::Undelivered)), "{finals:?}");
    }
    assert!(emulator.messages().iter().all(|m| m.webhook_failures.is_empty()));
}

#[tokio::test]
async fn messages_without_a_callback_use_the_global_webhook_url() {
    let receiver = Receiver::start().await;
    let emulator = Emulator::builder()
        .webhook_url(receiver.url(Provider::Vonage))
        .status_delay(Duration::from_millis(20))
        .start()
        .await
        .expect("starts");
    // Vonage Basic auth cannot carry a per-message webhook URL.
    let receipt = client(&emulator, Api::VonageBasic).send(&Message::new(TO, "Hi")).await.expect("accepted");
    receiver.wait_for(2).await;
    let events = events_by_id(&receiver);
    assert_eq!(
        events.get(&receipt.provider_id),
        Some(&vec!["message.sent".to_owned(), "message.delivered".to_owned()])
    );
}

#[tokio::test]
async fn no_webhook_url_means_no_webhook_but_the_status_still_moves() {
    let emulator = emulator().await;
    client(&emulator, Api::Telnyx).send(&Message::new(magic::UNDELIVERED, "Hi")).await.expect("accepted");
    assert!(eventually(|| emulator.messages()[0].status == Status::Undelivered).await);
}

#[tokio::test]
async fn a_webhook_that_is_not_answered_2xx_is_retried_twice_and_the_failure_recorded() {
    let receiver = Receiver::start().await;
    let emulator = Emulator::builder()
        .status_delay(Duration::from_millis(10))
        .webhook_retry_interval(Duration::from_millis(100))
        .start()
        .await
        .expect("starts");
    let message = Message::new(TO, "Hi").webhook_url(format!("{}/fail", receiver.base));
    client(&emulator, Api::Twilio).send(&message).await.expect("accepted");
    assert!(eventually(|| emulator.messages()[0].webhook_failures.len() == 2).await, "{:?}", emulator.messages());
    let failures = &emulator.messages()[0].webhook_failures;
    assert_eq!(failures[0].event, "sent");
    assert_eq!(failures[1].event, "delivered");
    assert!(failures.iter().all(|f| f.attempts == 3 && f.error == "HTTP 500"), "{failures:?}");
    let calls = receiver.failures();
    assert_eq!(calls.len(), 6);
    assert!(calls[1] - calls[0] >= Duration::from_millis(100));
    // The inspection endpoint shows the same.
    let listed = common::inspection(&emulator).await;
    assert_eq!(listed[0]["webhook_failures"][0]["attempts"], 3);
}

#[tokio::test]
async fn an_unreachable_webhook_url_is_recorded_too() {
    let emulator = Emulator::builder()
        .status_delay(Duration::from_millis(10))
        .webhook_retry_interval(Duration::from_millis(10))
        .webhook_url("http://127.0.0.1:9/unreachable")
        .start()
        .await
        .expect("starts");
    client(&emulator, Api::Plivo).send(&Message::new(TO, "Hi")).await.expect("accepted");
    assert!(eventually(|| emulator.messages()[0].webhook_failures.len() == 2).await);
    assert_eq!(emulator.messages()[0].webhook_failures[0].error, "the connection failed");
}

#[tokio::test]
async fn inbound_stop_is_a_signed_opt_out_for_every_provider() {
    let receiver = Receiver::start().await;
    let emulator = emulator().await;
    let mut ids = Vec::new();
    for provider in Provider::ALL {
        let request = json!({
            "provider": provider, "from": "+14155550123", "to": "+15005550006", "text": "STOP",
            "inbound_url": receiver.url(provider),
        });
        let (status, body) = post_json(&format!("{}/_emulator/inbound", emulator.base_url()), &request).await;
        assert_eq!(status, 202, "{body}");
        assert_eq!(body["delivered"], true, "{body}");
        ids.push(body["id"].as_str().expect("an id").to_owned());
    }
    let received = receiver.wait_for(Provider::ALL.len()).await;
    for (received, id) in received.iter().zip(&ids) {
        assert_eq!(received.outcome, Ok(("recipient.opted_out".to_owned(), id.clone())), "{}", received.provider);
    }
}

#[tokio::test]
async fn inbound_uses_the_configured_url_and_needs_one() {
    let receiver = Receiver::start().await;
    let with_url = Emulator::builder().inbound_url(receiver.url(Provider::Twilio)).start().await.expect("starts");
    let request = json!({"provider": "twilio", "from": "+14155550123", "to": "+15005550006", "text": "hello there"});
    let (status, body) = post_json(&format!("{}/_emulator/inbound", with_url.base_url()), &request).await;
    assert_eq!(status, 202);
    assert_eq!(
        receiver.wait_for(1).await[0].outcome,
        Ok(("message.received".to_owned(), body["id"].as_str().unwrap_or_default().to_owned()))
    );

    let without = Emulator::start().await.expect("starts");
    assert_eq!(post_json(&format!("{}/_emulator/inbound", without.base_url()), &request).await.0, 409);
    let unknown =
        json!({"provider": "messagebird", "from": "+1", "to": "+2", "text": "x", "inbound_url": "http://127.0.0.1:9/"});
    assert_eq!(post_json(&format!("{}/_emulator/inbound", without.base_url()), &unknown).await.0, 400);
}

/// Where each provider's webhooks arrived: (the provider of the receiver's path, the message
/// id), for every webhook that verified there.
fn arrivals(receiver: &Receiver) -> Vec<(String, String)> {
    let mut arrivals: Vec<(String, String)> = receiver
        .received()
        .into_iter()
        .map(|r| {
            let (_, id) =
                r.outcome.unwrap_or_else(|e| panic!("a webhook at /hooks/{} did not verify: {e}", r.provider));
            (r.provider, id)
        })
        .collect();
    arrivals.sort();
    arrivals.dedup();
    arrivals
}

#[tokio::test]
async fn each_providers_status_webhooks_go_to_its_own_url_and_the_others_to_the_url_of_every_provider() {
    let receiver = Receiver::start().await;
    let emulator = Emulator::builder()
        .webhook_url(receiver.url(Provider::Vonage))
        .webhook_url_for(Provider::Twilio, receiver.url(Provider::Twilio))
        .webhook_url_for(Provider::Telnyx, receiver.url(Provider::Telnyx))
        .webhook_url_for(Provider::Aws, receiver.url(Provider::Aws))
        .webhook_url_for(Provider::Infobip, receiver.url(Provider::Infobip))
        .webhook_url_for(Provider::Bandwidth, receiver.url(Provider::Bandwidth))
        .status_delay(Duration::from_millis(20))
        .start()
        .await
        .expect("starts");
    // No message names a callback URL: the provider's URL decides. The receiver verifies each
    // webhook with the verifier of the provider its path names, so one at another provider's URL
    // would fail.
    let mut expected = Vec::new();
    for api in [Api::Twilio, Api::Telnyx, Api::VonageBasic, Api::Aws, Api::Infobip, Api::BandwidthOAuth2] {
        let receipt = client(&emulator, api).send(&Message::new(TO, "Hi")).await.expect("accepted");
        expected.push((api.provider().name().to_owned(), receipt.provider_id));
    }
    expected.sort();
    receiver.wait_for(expected.len() * 2).await;
    assert_eq!(arrivals(&receiver), expected);
    assert_eq!(receiver.received().len(), expected.len() * 2, "sent and delivered, once each");
    assert!(emulator.messages().iter().all(|m| m.webhook_failures.is_empty()));
}

#[tokio::test]
async fn a_provider_without_a_url_of_its_own_or_of_every_provider_gets_no_status_webhook() {
    let receiver = Receiver::start().await;
    let emulator = Emulator::builder()
        .webhook_url_for(Provider::Telnyx, receiver.url(Provider::Telnyx))
        .status_delay(Duration::from_millis(20))
        .start()
        .await
        .expect("starts");
    let twilio = client(&emulator, Api::Twilio).send(&Message::new(TO, "Hi")).await.expect("accepted");
    let telnyx = client(&emulator, Api::Telnyx).send(&Message::new(TO, "Hi")).await.expect("accepted");
    receiver.wait_for(2).await;
    assert!(eventually(|| emulator.messages().iter().all(|m| m.status == Status::Delivered)).await);
    assert_eq!(arrivals(&receiver), [("telnyx".to_owned(), telnyx.provider_id)]);
    assert!(!receiver.received().iter().any(|r| r.outcome.as_ref().is_ok_and(|(_, id)| *id == twilio.provider_id)));
    // A message's own callback URL still wins over its provider's URL.
    let own = Message::new(TO, "Hi").webhook_url(receiver.url(Provider::Twilio));
    let twilio = client(&emulator, Api::Twilio).send(&own).await.expect("accepted");
    receiver.wait_for(4).await;
    assert!(arrivals(&receiver).contains(&("twilio".to_owned(), twilio.provider_id)));
}

#[tokio::test]
async fn inbound_messages_go_to_their_providers_own_inbound_url() {
    let receiver = Receiver::start().await;
    let emulator = Emulator::builder()
        .inbound_url(receiver.url(Provider::Twilio))
        .inbound_url_for(Provider::Telnyx, receiver.url(Provider::Telnyx))
        .start()
        .await
        .expect("starts");
    let inbound = format!("{}/_emulator/inbound", emulator.base_url());
    let mut expected = Vec::new();
    for provider in [Provider::Telnyx, Provider::Twilio] {
        let request = json!({"provider": provider, "from": "+14155550123", "to": "+15005550006", "text": "hello"});
        let (status, body) = post_json(&inbound, &request).await;
        assert_eq!((status, &body["delivered"]), (202, &json!(true)), "{body}");
        assert_eq!(body["url"], receiver.url(provider).as_str(), "{body}");
        expected.push((provider.name().to_owned(), body["id"].as_str().expect("an id").to_owned()));
    }
    expected.sort();
    assert_eq!(arrivals(&receiver), expected);

    // With URLs for some providers only, another provider's inbound message has nowhere to go.
    let some = Emulator::builder().inbound_url_for(Provider::Telnyx, receiver.url(Provider::Telnyx)).start().await;
    let some = some.expect("starts");
    let request = json!({"provider": "plivo", "from": "+14155550123", "to": "+15005550006", "text": "hello"});
    let (status, body) = post_json(&format!("{}/_emulator/inbound", some.base_url()), &request).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["error"].as_str().is_some_and(|e| e.starts_with("no inbound URL for plivo:")), "{body}");
    // With none at all, the answer is the one it always was.
    let none = Emulator::start().await.expect("starts");
    let (status, body) = post_json(&format!("{}/_emulator/inbound", none.base_url()), &request).await;
    assert_eq!(status, 409);
    assert_eq!(body["error"], "no inbound URL: start the emulator with one, or pass inbound_url in the request");
}

#[tokio::test]
async fn a_bad_url_for_one_provider_is_refused_at_start() {
    for builder in [
        Emulator::builder().webhook_url_for(Provider::Plivo, "127.0.0.1:3000/sms"),
        Emulator::builder().inbound_url_for(Provider::Vonage, "ftp://127.0.0.1/in"),
    ] {
        let error = builder.start().await.expect_err("refused");
        assert_eq!(error.kind(), sms_sdk_emulator::StartErrorKind::InvalidUrl, "{error}");
    }
}
