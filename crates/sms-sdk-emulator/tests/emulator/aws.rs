//! AWS End User Messaging SMS against the emulator: Signature Version 4 is checked as AWS checks
//! it (each fault named in AWS's words, nothing created), the operation must be
//! `SendTextMessage`, and delivery events and inbound messages arrive as SNS notifications signed
//! with the emulator's SNS key, echoing the request's `Context`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use common::{FROM, Receiver, TO, http, json_of, post_json};
use http::HeaderMap;
use serde_json::{Value, json};
use sms_sdk::adapter::{Adapter, Outcome, SendContext};
use sms_sdk::provider::aws::sigv4;
use sms_sdk::provider::aws::{Aws, AwsCredentials};
use sms_sdk::{Category, Client, ErrorKind, Message, OutboundMessage, PhoneNumber, RetryPolicy, Sender};
use sms_sdk_emulator::credentials::{
    AWS_ACCESS_KEY_ID, AWS_REGION, AWS_SECRET_ACCESS_KEY, AWS_SNS_SIGNING_CERT_URL, AWS_SNS_TOPIC_ARN,
};
use sms_sdk_emulator::{Emulator, Provider, RunningEmulator, Status, magic};
use time::OffsetDateTime;

/// The operation the adapter calls.
const TARGET: &str = "PinpointSMSVoiceV2.SendTextMessage";
/// The emulator's SNS signing key (the test reads its public half; the emulator keeps it private).
const SNS_KEY: &str = include_str!("../../assets/aws_sns_key.pem");

/// `secret` with its first byte changed.
fn one_byte_off(secret: &str) -> String {
    let mut bytes = secret.as_bytes().to_vec();
    bytes[0] = if bytes[0] == b'f' { b'g' } else { b'f' };
    String::from_utf8(bytes).expect("ASCII")
}

fn amz_date(at: OffsetDateTime) -> String {
    let format = time::macros::format_description!("[year][month][day]T[hour][minute][second]Z");
    at.format(format).expect("a date")
}

/// A raw `POST /` signed as the adapter signs it, at `at`, by `key_id` with `secret`, naming
/// `target`; `authorization: None` signs it, `Some` sends that header instead.
async fn post(
    emulator: &RunningEmulator,
    body: &Value,
    at: OffsetDateTime,
    key_id: &str,
    secret: &str,
    target: &str,
    authorization: Option<&str>,
) -> (u16, HeaderMap, Value) {
    let body = body.to_string();
    let date = amz_date(at);
    let host = emulator.local_addr().to_string();
    let headers = [
        ("content-type", "application/x-amz-json-1.0"),
        ("host", host.as_str()),
        ("x-amz-date", date.as_str()),
        ("x-amz-target", target),
    ];
    let request = sigv4::Request { method: "POST", path: "/", query: "", headers: &headers, body: body.as_bytes() };
    let scope = sigv4::Scope { date: &date[..8], region: AWS_REGION, service: "sms-voice" };
    let signed = sigv4::authorization(&request, &date, key_id, secret, &scope);
    let mut post = http().post(format!("{}/", emulator.base_url()));
    for (name, value) in headers {
        post = post.header(name, value);
    }
    let response =
        post.header("authorization", authorization.unwrap_or(&signed)).body(body).send().await.expect("POST");
    let headers = response.headers().clone();
    let (status, json) = json_of(response).await;
    (status, headers, json)
}

fn send_body() -> Value {
    json!({"DestinationPhoneNumber": TO, "OriginationIdentity": FROM, "MessageBody": "Hello"})
}

/// An adapter with these credentials, never retrying.
fn client_with(emulator: &RunningEmulator, key_id: &str, secret: &str) -> Client {
    let credentials = AwsCredentials::new(key_id, secret.to_owned());
    let adapter = Aws::builder(AWS_REGION, credentials).from(FROM).base_url(emulator.base_url()).build();
    Client::builder().adapter(adapter.expect("adapter")).retry(RetryPolicy::none()).build().expect("client")
}

#[tokio::test]
async fn a_signature_with_one_byte_of_the_secret_changed_is_refused_and_creates_nothing() {
    let emulator = common::emulator().await;
    let client = client_with(&emulator, AWS_ACCESS_KEY_ID, &one_byte_off(AWS_SECRET_ACCESS_KEY));
    let err = client.send(&Message::new(TO, "Hello")).await.expect_err("refused");
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Auth));
    let provider = err.provider_error().expect("the provider's error");
    assert_eq!(provider.provider_code(), Some("InvalidSignatureException"));
    assert!(provider.text().is_some_and(|t| t.contains("does not match")), "{:?}", provider.text());
    let messages = emulator.messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(
        (messages[0].status, messages[0].id.as_deref(), messages[0].http_status),
        (Status::Rejected, None, Some(403))
    );
    assert_eq!(messages[0].error_code.as_deref(), Some("InvalidSignatureException"));
    // The right secret is accepted, with AWS's answer.
    let receipt = client_with(&emulator, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)
        .send(&Message::new(TO, "Hello"))
        .await
        .expect("accepted");
    assert!(uuid::Uuid::parse_str(&receipt.provider_id).is_ok(), "{}", receipt.provider_id);
    assert_eq!(emulator.messages()[1].id.as_deref(), Some(receipt.provider_id.as_str()));
}

#[tokio::test]
async fn an_unknown_access_key_is_an_unrecognized_client() {
    let emulator = common::emulator().await;
    let client = client_with(&emulator, "AKIAE1A7000000000099", AWS_SECRET_ACCESS_KEY);
    let err = client.send(&Message::new(TO, "Hello")).await.expect_err("refused");
    assert_eq!(err.kind(), ErrorKind::Rejected(Category::Auth));
    assert_eq!(err.provider_error().and_then(|e| e.provider_code()), Some("UnrecognizedClientException"));
    assert_eq!(emulator.messages()[0].http_status, Some(403));
    // Temporary credentials are not the emulator's: their token is unknown too.
    let temporary = AwsCredentials::new(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY).session_token("FQoGZXIvYXdzEXAMPLE");
    let adapter =
        Aws::builder(AWS_REGION, temporary).from(FROM).base_url(emulator.base_url()).build().expect("adapter");
    let client = Client::builder().adapter(adapter).retry(RetryPolicy::none()).build().expect("client");
    let err = client.send(&Message::new(TO, "Hello")).await.expect_err("refused");
    assert_eq!(err.provider_error().and_then(|e| e.provider_code()), Some("UnrecognizedClientException"));
}

#[tokio::test]
async fn a_stale_or_early_x_amz_date_is_refused_though_correctly_signed() {
    let emulator = common::emulator().await;
    let now = OffsetDateTime::now_utc();
    for (at, says) in [
        (now - time::Duration::minutes(10), "Signature expired"),
        (now + time::Duration::minutes(10), "Signature not yet current"),
    ] {
        let (status, headers, body) =
            post(&emulator, &send_body(), at, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, TARGET, None).await;
        assert_eq!(
            (status, body["__type"].as_str()),
            (403, Some("com.amazon.coral.service#InvalidSignatureException"))
        );
        assert!(body["message"].as_str().is_some_and(|m| m.starts_with(says)), "{body}");
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        assert!(header("x-amzn-errortype").starts_with("InvalidSignatureException:"), "{headers:?}");
        assert!(uuid::Uuid::parse_str(&header("x-amzn-requestid")).is_ok(), "{headers:?}");
        assert_eq!(header("content-type"), "application/x-amz-json-1.0");
        let outcome = sms_sdk::provider::aws::__private::interpret(
            status,
            &headers,
            body.to_string().as_bytes(),
            SystemTime::now(),
        );
        assert!(matches!(outcome, Outcome::Rejected(ref r) if r.category == Category::Auth), "{outcome:?}");
    }
    // Within five minutes it is accepted.
    let (status, headers, body) = post(
        &emulator,
        &send_body(),
        now - time::Duration::minutes(4),
        AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY,
        TARGET,
        None,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["MessageId"].as_str().is_some_and(|id| uuid::Uuid::parse_str(id).is_ok()), "{body}");
    assert!(headers.contains_key("x-amzn-requestid"));
    assert!(emulator.messages().iter().filter(|m| m.id.is_none()).all(|m| m.http_status == Some(403)));
}

#[tokio::test]
async fn another_operation_is_unknown_and_not_recorded() {
    let emulator = common::emulator().await;
    let now = OffsetDateTime::now_utc();
    for target in ["PinpointSMSVoiceV2.SendMediaMessage", "PinpointSMSVoiceV2.sendtextmessage", ""] {
        let (status, headers, body) =
            post(&emulator, &send_body(), now, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, target, None).await;
        assert_eq!(
            (status, body["__type"].as_str()),
            (400, Some("com.amazon.coral.service#UnknownOperationException"))
        );
        assert!(headers.contains_key("x-amzn-requestid"));
    }
    assert!(emulator.messages().is_empty());
}

#[tokio::test]
async fn missing_and_incomplete_signatures_are_named() {
    let emulator = common::emulator().await;
    let now = OffsetDateTime::now_utc();
    let raw = |authorization: String| {
        let emulator = &emulator;
        async move {
            post(emulator, &send_body(), now, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, TARGET, Some(&authorization))
                .await
        }
    };
    let (status, _, body) = raw(String::new()).await;
    assert_eq!((status, body["__type"].as_str()), (400, Some("com.amazon.coral.service#IncompleteSignatureException")));
    let (status, _, body) = raw("Bearer a-token".to_owned()).await;
    assert_eq!((status, body["__type"].as_str()), (400, Some("com.amazon.coral.service#IncompleteSignatureException")));
    let credential_only =
        "AWS4-HMAC-SHA256 Credential=AKIAE1A7000000000006/20270115/us-east-1/sms-voice/aws4_request".to_owned();
    let (status, _, body) = raw(credential_only).await;
    assert_eq!(status, 400, "{body}");
    // No Authorization at all.
    let response = http()
        .post(format!("{}/", emulator.base_url()))
        .header("x-amz-target", TARGET)
        .header("content-type", "application/x-amz-json-1.0")
        .body(send_body().to_string())
        .send()
        .await
        .expect("POST");
    let (status, body) = json_of(response).await;
    assert_eq!(
        (status, body["__type"].as_str(), body["message"].as_str()),
        (
            403,
            Some("com.amazon.coral.service#MissingAuthenticationTokenException"),
            Some("Missing Authentication Token")
        )
    );
    // Signed for another region: a signature scoped elsewhere.
    let date = amz_date(now);
    let (status, _, body) = raw(format!(
        "AWS4-HMAC-SHA256 Credential={AWS_ACCESS_KEY_ID}/{}/eu-west-1/sms-voice/aws4_request, SignedHeaders=host, Signature=00",
        &date[..8]
    ))
    .await;
    assert_eq!((status, body["__type"].as_str()), (403, Some("com.amazon.coral.service#InvalidSignatureException")));
    assert!(emulator.messages().iter().all(|m| m.id.is_none() && m.status == Status::Rejected));
}

#[tokio::test]
async fn the_body_is_validated_like_aws_validates_it() {
    let emulator = common::emulator().await;
    let now = OffsetDateTime::now_utc();
    let send = |body: Value| {
        let emulator = &emulator;
        async move { post(emulator, &body, now, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, TARGET, None).await }
    };
    for (body, reason) in [
        (json!({"OriginationIdentity": FROM, "MessageBody": "hi"}), "MISSING_PARAMETER"),
        (
            json!({"DestinationPhoneNumber": "0800 FLOWERS", "OriginationIdentity": FROM, "MessageBody": "hi"}),
            "FIELD_VALIDATION_FAILED",
        ),
        (
            json!({"DestinationPhoneNumber": TO, "MessageBody": "hi", "MessageType": "MARKETING"}),
            "FIELD_VALIDATION_FAILED",
        ),
        (json!({"DestinationPhoneNumber": TO, "MessageBody": "hi", "TimeToLive": 1}), "FIELD_VALIDATION_FAILED"),
        (json!({"DestinationPhoneNumber": TO, "MessageBody": "hi", "Context": {"n": 1}}), "FIELD_VALIDATION_FAILED"),
    ] {
        let (status, headers, answer) = send(body.clone()).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(answer["__type"], "com.amazonaws.pinpointsmsvoicev2#ValidationException", "{body}");
        assert_eq!(answer["Reason"], reason, "{body}");
        assert!(answer["Message"].is_string() && answer["Fields"][0]["Name"].is_string(), "{answer}");
        let outcome = sms_sdk::provider::aws::__private::interpret(
            status,
            &headers,
            answer.to_string().as_bytes(),
            SystemTime::now(),
        );
        assert!(matches!(outcome, Outcome::Rejected(ref r) if r.category == Category::Request), "{outcome:?}");
    }
    let (status, _, answer) = send(json!([1])).await;
    assert_eq!((status, answer["__type"].as_str()), (400, Some("com.amazon.coral.service#SerializationException")));
    // No origination identity is an account-level send: AWS picks one of the account's numbers.
    let (status, _, answer) = send(json!({"DestinationPhoneNumber": TO, "MessageBody": "from the account"})).await;
    assert_eq!(status, 200, "{answer}");
    let entry = emulator.messages().pop().expect("an entry");
    assert_eq!((entry.from, entry.id.as_deref()), (None, answer["MessageId"].as_str()));
}

/// The SNS envelope's signature, checked with the public half of the emulator's key: RSA
/// PKCS#1 v1.5 over SHA-256 (`SignatureVersion` 2) of the members SNS signs.
fn assert_signed(envelope: &Value) {
    let der: String = SNS_KEY.lines().filter(|line| !line.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(der).expect("PEM");
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der).expect("an RSA key");
    let public = ring::signature::KeyPair::public_key(&key).as_ref().to_vec();
    let mut text = String::new();
    for name in ["Message", "MessageId", "Timestamp", "TopicArn", "Type"] {
        let value = envelope[name].as_str().expect("a signed member");
        for part in [name, "\n", value, "\n"] {
            text.push_str(part);
        }
    }
    let signature = base64::engine::general_purpose::STANDARD
        .decode(envelope["Signature"].as_str().expect("a signature"))
        .expect("b64");
    assert_eq!(envelope["SignatureVersion"], "2");
    let verifier = ring::signature::UnparsedPublicKey::new(&ring::signature::RSA_PKCS1_2048_8192_SHA256, public);
    assert!(verifier.verify(text.as_bytes(), &signature).is_ok(), "the SNS signature does not verify");
    // One byte more, and it no longer does.
    assert!(verifier.verify(format!("{text}x").as_bytes(), &signature).is_err());
}

#[tokio::test]
async fn delivery_events_arrive_as_signed_sns_notifications_with_the_reference() {
    let receiver = Receiver::start().await;
    let emulator = Emulator::builder()
        .webhook_url_for(Provider::Aws, receiver.url(Provider::Aws))
        .status_delay(Duration::from_millis(20))
        .start()
        .await
        .expect("starts");
    let adapter = emulator.aws().build().expect("adapter");
    let from = Sender::phone(FROM).resolve().expect("a sender");
    let mut message = OutboundMessage::new(PhoneNumber::parse(magic::UNDELIVERED).expect("a number"), from, "Hi");
    message.correlation = Some("c0rre1ati0n-reference".to_owned());
    let cx = SendContext::new(1, None, Duration::from_secs(5));
    let Outcome::Accepted(accepted) = adapter.send(&message, &cx).await else { panic!("not accepted") };
    let received = receiver.wait_for(2).await;
    assert_eq!(received.len(), 2);
    let events: Vec<_> = received.iter().map(|r| r.outcome.clone()).collect();
    // The library's SNS verifier accepts both and normalizes them.
    assert_eq!(
        events,
        [
            Ok(("message.sent".to_owned(), accepted.provider_id.clone())),
            Ok(("message.undelivered".to_owned(), accepted.provider_id.clone()))
        ]
    );
    for (hook, (event_type, last)) in
        received.iter().zip([("TEXT_SUCCESSFUL", false), ("TEXT_CARRIER_UNREACHABLE", true)])
    {
        let header = |name: &str| hook.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        assert_eq!(header("x-amz-sns-message-type"), "Notification");
        assert_eq!(header("x-amz-sns-topic-arn"), AWS_SNS_TOPIC_ARN);
        assert!(header("x-amz-sns-subscription-arn").starts_with(&format!("{AWS_SNS_TOPIC_ARN}:")));
        assert_eq!(header("content-type"), "text/plain; charset=UTF-8");
        let envelope: Value = serde_json::from_slice(&hook.body).expect("JSON");
        let members: Vec<&str> = envelope.as_object().expect("an object").keys().map(String::as_str).collect();
        assert_eq!(
            members,
            [
                "Type",
                "MessageId",
                "TopicArn",
                "Message",
                "Timestamp",
                "SignatureVersion",
                "Signature",
                "SigningCertURL",
                "UnsubscribeURL"
            ]
        );
        assert_eq!(envelope["MessageId"].as_str(), Some(header("x-amz-sns-message-id").as_str()));
        assert_eq!(envelope["SigningCertURL"], AWS_SNS_SIGNING_CERT_URL);
        let timestamp = envelope["Timestamp"].as_str().expect("a timestamp");
        assert!(timestamp.len() == 24 && timestamp.ends_with('Z') && &timestamp[19..20] == ".", "{timestamp}");
        assert_signed(&envelope);
        let event: Value = serde_json::from_str(envelope["Message"].as_str().expect("a message")).expect("JSON");
        assert_eq!((event["eventType"].as_str(), event["isFinal"].as_bool()), (Some(event_type), Some(last)));
        assert_eq!(event["messageId"].as_str(), Some(accepted.provider_id.as_str()));
        assert_eq!(event["context"]["sms_sdk_ref"], "c0rre1ati0n-reference");
        assert_eq!(
            (event["destinationPhoneNumber"].as_str(), event["originationPhoneNumber"].as_str()),
            (Some(magic::UNDELIVERED), Some(FROM))
        );
        assert_eq!((event["eventVersion"].as_str(), event["messageEncoding"].as_str()), (Some("1.0"), Some("GSM")));
        assert!(event["eventTimestamp"].as_i64() >= event["messageRequestTimestamp"].as_i64());
        assert_eq!(event["totalMessageParts"], 1);
    }
    assert!(common::eventually(|| emulator.messages()[0].status == Status::Undelivered).await);
}

#[tokio::test]
async fn an_inbound_message_is_a_signed_two_way_notification_answering_the_last_message() {
    let receiver = Receiver::start().await;
    let emulator = common::emulator().await;
    let sent = client_with(&emulator, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)
        .send(&Message::new(TO, "Reply STOP to stop"))
        .await
        .expect("accepted");
    let request =
        json!({"provider": "aws", "from": TO, "to": FROM, "text": "stop", "inbound_url": receiver.url(Provider::Aws)});
    let (status, answer) = post_json(&format!("{}/_emulator/inbound", emulator.base_url()), &request).await;
    assert_eq!((status, &answer["delivered"]), (202, &json!(true)), "{answer}");
    let received = receiver.wait_for(1).await;
    let id = answer["id"].as_str().expect("an id").to_owned();
    assert_eq!(received[0].outcome, Ok(("recipient.opted_out".to_owned(), id.clone())));
    let envelope: Value = serde_json::from_slice(&received[0].body).expect("JSON");
    let payload: Value = serde_json::from_str(envelope["Message"].as_str().expect("a message")).expect("JSON");
    assert_eq!(
        payload,
        json!({
            "originationNumber": TO,
            "destinationNumber": FROM,
            "messageKeyword": "STOP",
            "messageBody": "stop",
            "inboundMessageId": id,
            "previousPublishedMessageId": sent.provider_id,
        })
    );
    assert_signed(&envelope);
}

#[tokio::test]
async fn a_message_type_and_a_pool_are_taken_and_echoed() {
    let receiver = Receiver::start().await;
    let emulator = Emulator::builder()
        .webhook_url(receiver.url(Provider::Aws))
        .status_delay(Duration::from_millis(10))
        .start()
        .await
        .expect("starts");
    let now = OffsetDateTime::now_utc();
    let body = json!({
        "DestinationPhoneNumber": TO, "OriginationIdentity": "pool-0123456789abcdef", "MessageBody": "Your code: 1234 — 🙂",
        "MessageType": "TRANSACTIONAL", "Context": {"tenant": "t1"},
    });
    let (status, _, answer) = post(&emulator, &body, now, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, TARGET, None).await;
    assert_eq!(status, 200, "{answer}");
    let received = receiver.wait_for(2).await;
    let envelope: Value = serde_json::from_slice(&received[1].body).expect("JSON");
    let event: Value = serde_json::from_str(envelope["Message"].as_str().unwrap_or_default()).expect("JSON");
    assert_eq!(event["eventType"], "TEXT_DELIVERED");
    assert_eq!(event["messageType"], "TRANSACTIONAL");
    assert_eq!(event["messageEncoding"], "UNICODE");
    assert_eq!(event["context"], json!({"tenant": "t1"}));
    // A pool sends from one of its numbers: the account's.
    assert!(event["originationPhoneNumber"].as_str().is_some_and(|n| n.starts_with('+')), "{event}");
    assert_eq!(emulator.messages()[0].context.as_ref().and_then(|c| c.get("tenant")).map(String::as_str), Some("t1"));
}
