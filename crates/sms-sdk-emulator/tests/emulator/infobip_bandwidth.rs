//! Infobip and Bandwidth against the emulator: what only they do (the message id the request
//! chooses, the 200 of a rejected destination, the logs; OAuth 2.0, the application id, the
//! message list) and their unsigned callbacks, verified with the library's batch verifiers.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::time::Duration;

use common::{Api, FROM, Receiver, TO, client, http, json_of, verify_batch};
use serde_json::{Value, json};
use sms_sdk::lookup::{Lookup as _, LookupOutcome};
use sms_sdk::provider::bandwidth::Bandwidth;
use sms_sdk::provider::infobip::{InfobipWebhook, callback_url_with_token};
use sms_sdk::webhook::{WebhookRequest, WebhookVerifier as _};
use sms_sdk::{Category, Client, ErrorKind, Message, RetryPolicy};
use sms_sdk_emulator::credentials::{
    BANDWIDTH_ACCOUNT_ID, BANDWIDTH_API_PASSWORD, BANDWIDTH_API_USER, BANDWIDTH_CLIENT_ID, BANDWIDTH_CLIENT_SECRET,
    INFOBIP_API_KEY,
};
use sms_sdk_emulator::{Emulator, Provider, Status, magic};

fn basic(user: &str, password: &str) -> String {
    sms_sdk::provider::bandwidth::__private::basic_header(user, password)
}

const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// The id of an Infobip message is the one the adapter chose; a rejected destination is a 200
/// with its status in group 5, and nothing is created.
#[tokio::test]
async fn infobip_answers_with_the_chosen_message_id_and_rejects_in_a_200() {
    let emulator = common::emulator().await;
    let receipt = client(&emulator, Api::Infobip).send(&Message::new(TO, "Hello")).await.expect("accepted");
    assert!(receipt.provider_id.starts_with("sms-sdk-"), "{}", receipt.provider_id);
    assert_eq!(emulator.messages()[0].id.as_deref(), Some(receipt.provider_id.as_str()));

    let body = json!({"messages": [{"sender": FROM, "destinations": [{"to": "15005550003", "messageId": "m-1"}],
                      "content": {"text": "hi"}}]});
    let response = http()
        .post(format!("{}/sms/3/messages", emulator.base_url()))
        .header("authorization", format!("App {INFOBIP_API_KEY}"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("POST");
    let (status, answer) = json_of(response).await;
    assert_eq!(status, 200);
    let destination = &answer["messages"][0];
    assert_eq!(
        (destination["messageId"].as_str(), destination["destination"].as_str()),
        (Some("m-1"), Some("15005550003"))
    );
    assert_eq!(destination["status"]["groupId"], 5);
    assert_eq!(destination["status"]["name"], "REJECTED_NOT_ENOUGH_CREDITS");
    let entry = emulator.messages().pop().expect("listed");
    assert_eq!((entry.status, entry.id, entry.http_status), (Status::Rejected, None, Some(200)));
    assert_eq!(entry.error_code.as_deref(), Some("REJECTED_NOT_ENOUGH_CREDITS"));

    // Wrong key: 401 with Infobip's error body.
    let response = http()
        .post(format!("{}/sms/3/messages", emulator.base_url()))
        .header("authorization", "App wrong")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("POST");
    let (status, answer) = json_of(response).await;
    assert_eq!((status, answer["errorCode"].as_str()), (401, Some("E401")));
}

/// The Infobip lookups read the logs the emulator keeps: by message id, and by destination
/// since a time.
#[tokio::test]
async fn infobip_lookups_find_the_message_in_the_logs() {
    let emulator = common::emulator().await;
    let receipt = client(&emulator, Api::Infobip).send(&Message::new(TO, "Find me")).await.expect("accepted");
    let infobip = emulator.infobip().build().expect("adapter");
    let LookupOutcome::Found(found) = infobip.fetch(&receipt.provider_id, LOOKUP_TIMEOUT).await else {
        panic!("not found")
    };
    assert_eq!(found[0].provider_id, receipt.provider_id);
    assert_eq!((found[0].to.as_deref(), found[0].body.as_deref()), (Some(TO), Some("Find me")));
    assert!(found[0].created_at.is_some());
    let since = time::OffsetDateTime::now_utc() - time::Duration::hours(1);
    let LookupOutcome::Found(listed) = infobip.list_to(TO, since, LOOKUP_TIMEOUT).await else { panic!("no list") };
    assert_eq!(listed.iter().map(|m| m.provider_id.as_str()).collect::<Vec<_>>(), [receipt.provider_id.as_str()]);
    let LookupOutcome::Found(none) = infobip.list_to("+14155550999", since, LOOKUP_TIMEOUT).await else {
        panic!("no list")
    };
    assert!(none.is_empty());
    // Nothing in the logs is not "not sent".
    assert!(matches!(infobip.fetch("sms-sdk-unknown", LOOKUP_TIMEOUT).await, LookupOutcome::Failed { .. }));
    // The logs need the key.
    let response = http().get(format!("{}/sms/3/logs", emulator.base_url())).send().await.expect("GET");
    assert_eq!(response.status().as_u16(), 401);
}

/// Infobip's delivery reports carry the emulator's Basic credentials, echo `callbackData`, and a
/// token in the callback URL travels in the URL, so `InfobipWebhook::url_token` verifies them too.
#[tokio::test]
async fn infobip_reports_carry_basic_credentials_and_the_url_token() {
    let receiver = Receiver::start().await;
    let emulator = Emulator::builder().status_delay(Duration::from_millis(20)).start().await.expect("starts");
    let token = "0123456789abcdef-emulator-token";
    let url = callback_url_with_token(&receiver.url(Provider::Infobip), token);
    let message = Message::new(magic::UNDELIVERED, "Report please")
        .webhook_url(url.clone())
        .provider_option("infobip", json!({"callbackData": "ref-1"}));
    let receipt = client(&emulator, Api::Infobip).send(&message).await.expect("accepted");
    let received = receiver.wait_for(2).await;
    assert_eq!(received.len(), 2);
    let by_token = InfobipWebhook::url_token(token).expect("verifier");
    let mut kinds = Vec::new();
    for hook in &received {
        assert_eq!(hook.url, url, "the token travels in the URL");
        assert!(hook.outcome.is_ok(), "{:?}", hook.outcome);
        let request = WebhookRequest { method: "POST", url: &hook.url, headers: &hook.headers, body: &hook.body };
        let events = by_token.verify_all(&request).expect("the URL token verifies");
        assert_eq!(events.len(), 1);
        kinds.push(events[0].type_name().to_owned());
        let report: Value = serde_json::from_slice(&hook.body).expect("JSON");
        let result = &report["results"][0];
        assert_eq!(result["messageId"], receipt.provider_id.as_str());
        // `callbackData` (where the library's correlation reference rides) is echoed.
        assert_eq!(result["callbackData"], "ref-1", "{result}");
    }
    assert_eq!(kinds, ["message.sent", "message.undelivered"]);
    // Without the Basic credentials, the verifier refuses.
    let hook = &received[0];
    let bare = http::HeaderMap::new();
    let request = WebhookRequest { method: "POST", url: &hook.url, headers: &bare, body: &hook.body };
    assert!(verify_batch("infobip", &request).is_err());
}

/// Bandwidth with OAuth 2.0: the token endpoint issues a token for the client credentials, the
/// send accepts it as Bearer, and refuses one it did not issue.
#[tokio::test]
async fn bandwidth_oauth2_tokens_are_issued_and_accepted() {
    let emulator = common::emulator().await;
    let base = emulator.base_url();
    let token_url = format!("{base}/api/v1/oauth2/token");
    let response = http()
        .post(&token_url)
        .header("authorization", basic(BANDWIDTH_CLIENT_ID, BANDWIDTH_CLIENT_SECRET))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=client_credentials")
        .send()
        .await
        .expect("POST");
    let (status, answer) = json_of(response).await;
    assert_eq!(
        (status, answer["token_type"].as_str(), answer["expires_in"].as_u64()),
        (200, Some("Bearer"), Some(3600))
    );
    let token = answer["access_token"].as_str().expect("a token").to_owned();
    let send = |authorization: String| {
        let body = json!({"applicationId": sms_sdk_emulator::credentials::BANDWIDTH_APPLICATION_ID,
                          "to": [TO], "from": FROM, "text": "hi", "tag": "t-1"});
        http()
            .post(format!("{base}/api/v2/users/{BANDWIDTH_ACCOUNT_ID}/messages"))
            .header("authorization", authorization)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let (status, message) = json_of(send(format!("Bearer {token}")).await.expect("POST")).await;
    assert_eq!(status, 202, "{message}");
    assert_eq!((message["direction"].as_str(), message["tag"].as_str()), (Some("out"), Some("t-1")));
    assert_eq!(message["to"], json!([TO]));
    let (status, error) = json_of(send("Bearer bw.1.2.3".to_owned()).await.expect("POST")).await;
    assert_eq!((status, error["type"].as_str()), (401, Some("unauthorized")));
    // Other client credentials get no token.
    let response = http()
        .post(&token_url)
        .header("authorization", basic(BANDWIDTH_CLIENT_ID, "wrong"))
        .body("grant_type=client_credentials")
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 401);
    // The adapter does all of it.
    let receipt = client(&emulator, Api::BandwidthOAuth2).send(&Message::new(TO, "Hi")).await.expect("accepted");
    assert_eq!(emulator.messages().pop().and_then(|m| m.id), Some(receipt.provider_id));
}

/// A message of another application is refused with Bandwidth's 400 naming `applicationId`,
/// which the library reads as the adapter's configuration (`auth`).
#[tokio::test]
async fn bandwidth_refuses_another_application() {
    let emulator = common::emulator().await;
    let other =
        Bandwidth::basic(BANDWIDTH_ACCOUNT_ID, "another-application", BANDWIDTH_API_USER, BANDWIDTH_API_PASSWORD)
            .base_url(emulator.base_url())
            .from(FROM)
            .build()
            .expect("adapter");
    let client = Client::builder().adapter(other).retry(RetryPolicy::none()).build().expect("client");
    let err = client.send(&Message::new(TO, "Hi")).await.expect_err("refused");
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Auth));
    assert_eq!(err.provider_error().and_then(|e| e.provider_code()), Some("request-validation"));
    let entry = emulator.messages().pop().expect("listed");
    assert_eq!((entry.status, entry.http_status), (Status::Rejected, Some(400)));
}

/// The Bandwidth lookups read the emulator's message list: by id, and by recipient.
#[tokio::test]
async fn bandwidth_lookups_find_the_created_message() {
    let emulator = common::emulator().await;
    let receipt = client(&emulator, Api::BandwidthBasic).send(&Message::new(TO, "Find me")).await.expect("accepted");
    for bandwidth in [emulator.bandwidth(), emulator.bandwidth_oauth2()] {
        let bandwidth = bandwidth.build().expect("adapter");
        let LookupOutcome::Found(found) = bandwidth.fetch(&receipt.provider_id, LOOKUP_TIMEOUT).await else {
            panic!("not found")
        };
        assert_eq!(found[0].provider_id, receipt.provider_id);
        assert_eq!((found[0].to.as_deref(), found[0].from.as_deref()), (Some(TO), Some(FROM)));
        let since = time::OffsetDateTime::now_utc() - time::Duration::days(1);
        let LookupOutcome::Found(listed) = bandwidth.list_to(TO, since, LOOKUP_TIMEOUT).await else {
            panic!("no list")
        };
        assert_eq!(listed.iter().map(|m| m.provider_id.as_str()).collect::<Vec<_>>(), [receipt.provider_id.as_str()]);
        assert!(matches!(
            bandwidth.fetch("1589228074636nosuchmessage00", LOOKUP_TIMEOUT).await,
            LookupOutcome::NotFound
        ));
    }
}

/// Bandwidth's callbacks go to its provider URL as arrays of one event with the application's
/// callback credentials; inbound messages too.
#[tokio::test]
async fn bandwidth_callbacks_are_arrays_with_the_callback_credentials() {
    let receiver = Receiver::start().await;
    let emulator = Emulator::builder()
        .webhook_url_for(Provider::Bandwidth, receiver.url(Provider::Bandwidth))
        .status_delay(Duration::from_millis(20))
        .start()
        .await
        .expect("starts");
    let receipt = client(&emulator, Api::BandwidthBasic)
        .send(&Message::new(magic::UNDELIVERED, "Hi").provider_option("bandwidth", json!({"tag": "tag-1"})))
        .await
        .expect("accepted");
    let received = receiver.wait_for(2).await;
    assert_eq!(received.len(), 2);
    let bodies: Vec<Value> = received.iter().map(|r| serde_json::from_slice(&r.body).expect("JSON")).collect();
    assert_eq!(bodies[0][0]["type"], "message-sent");
    assert_eq!(bodies[1][0]["type"], "message-failed");
    assert_eq!(bodies[1][0]["errorCode"], 4750);
    assert_eq!(bodies[1][0]["message"]["id"], receipt.provider_id.as_str());
    // The tag (where the library's correlation reference rides) is echoed.
    assert_eq!(bodies[1][0]["message"]["tag"], "tag-1");
    for hook in &received {
        let request = WebhookRequest { method: "POST", url: &hook.url, headers: &hook.headers, body: &hook.body };
        let events = verify_batch("bandwidth", &request).expect("verifies");
        assert_eq!(events.len(), 1);
    }
    let inbound = json!({"provider": "bandwidth", "from": TO, "to": FROM, "text": "hello",
                         "inbound_url": receiver.url(Provider::Bandwidth)});
    let (status, answer) = common::post_json(&format!("{}/_emulator/inbound", emulator.base_url()), &inbound).await;
    assert_eq!((status, &answer["delivered"]), (202, &json!(true)), "{answer}");
    let received = receiver.wait_for(3).await;
    assert_eq!(
        received[2].outcome,
        Ok(("message.received".to_owned(), answer["id"].as_str().unwrap_or_default().to_owned()))
    );
}
