//! The HTTP contract that outside scripts depend on: field checks, the Vonage JWT check,
//! inspection, keys, lookups and the connection faults, checked with raw requests (and the
//! library's own response classifiers).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use common::{Api, TO, client, emulator, eventually, http, inspection, json_of, post_json};
use http::HeaderMap;
use serde_json::{Value, json};
use sms_sdk::adapter::Outcome;
use sms_sdk::{Category, Message};
use sms_sdk_emulator::credentials::{
    PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN, TELNYX_API_KEY, TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, VONAGE_API_KEY,
    VONAGE_API_SECRET, VONAGE_APPLICATION_ID, VONAGE_PRIVATE_KEY, keys_json,
};
use sms_sdk_emulator::{RunningEmulator, Status, magic};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

fn twilio_messages(emulator: &RunningEmulator) -> String {
    format!("{}/2010-04-01/Accounts/{TWILIO_ACCOUNT_SID}/Messages.json", emulator.base_url())
}

async fn twilio_post(emulator: &RunningEmulator, form: &str) -> (u16, HeaderMap, Vec<u8>) {
    let response = http()
        .post(twilio_messages(emulator))
        .header("authorization", basic(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form.to_owned())
        .send()
        .await
        .expect("POST");
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.bytes().await.expect("body").to_vec())
}

async fn json_post(url: String, authorization: &str, body: &str) -> (u16, HeaderMap, Vec<u8>) {
    let response = http()
        .post(url)
        .header("authorization", authorization)
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("POST");
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.bytes().await.expect("body").to_vec())
}

fn rejection_category(outcome: Outcome) -> Option<Category> {
    match outcome {
        Outcome::Rejected(rejection) => Some(rejection.category),
        Outcome::Accepted(_) | Outcome::Unknown(_) => None,
    }
}

#[tokio::test]
async fn twilio_required_fields_have_their_documented_codes() {
    let emulator = emulator().await;
    for (form, code) in [
        ("From=%2B15005550006&Body=hi", 21604),
        ("To=%2B14155550123&Body=hi", 21603),
        ("To=%2B14155550123&From=%2B15005550006", 21602),
    ] {
        let (status, headers, body) = twilio_post(&emulator, form).await;
        let json: Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!((status, json["code"].as_u64()), (400, Some(code)), "{form}");
        let keys: Vec<&str> = json.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
        assert_eq!(keys, ["code", "message", "more_info", "status"]);
        let outcome = sms_sdk::provider::twilio::__private::interpret(status, &headers, &body, SystemTime::now());
        assert_eq!(rejection_category(outcome), Some(Category::Request));
    }
    // A messaging service and media alone are enough.
    let form =
        "To=%2B14155550123&MessagingServiceSid=MG00000000000000000000000000000001&MediaUrl=https%3A%2F%2Fx%2Fa.png";
    let (status, _, body) = twilio_post(&emulator, form).await;
    let json: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!((status, json["status"].as_str()), (201, Some("queued")));
    assert_eq!(json["messaging_service_sid"], "MG00000000000000000000000000000001");
}

#[tokio::test]
async fn malformed_numbers_are_recipient_and_sender_rejections() {
    let emulator = emulator().await;
    for (form, code, category) in [
        ("To=0800+FLOWERS&From=%2B15005550006&Body=hi", 21211, Category::Recipient),
        ("To=%2B14155550123&From=%2B0&Body=hi", 21212, Category::Sender),
        ("To=%2B14155550123&From=Far+too+long+a+sender&Body=hi", 21212, Category::Sender),
    ] {
        let (status, headers, body) = twilio_post(&emulator, form).await;
        let json: Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!((status, json["code"].as_u64()), (400, Some(code)), "{form}");
        let outcome = sms_sdk::provider::twilio::__private::interpret(status, &headers, &body, SystemTime::now());
        assert_eq!(rejection_category(outcome), Some(category), "{form}");
    }
}

#[tokio::test]
async fn the_json_providers_answer_their_validation_errors() {
    let emulator = emulator().await;
    let base = emulator.base_url();
    let telnyx = format!("Bearer {TELNYX_API_KEY}");
    let plivo = basic(PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN);
    let vonage = basic(VONAGE_API_KEY, VONAGE_API_SECRET);
    let plivo_url = format!("{base}/v1/Account/{PLIVO_AUTH_ID}/Message/");
    let cases = [
        ("telnyx", format!("{base}/v2/messages"), telnyx.clone(), r#"{"from":"+15005550006","text":"hi"}"#, 422),
        ("telnyx", format!("{base}/v2/messages"), telnyx, "not json", 400),
        ("plivo", plivo_url.clone(), plivo.clone(), r#"{"src":"+15005550006","text":"hi"}"#, 400),
        ("plivo", plivo_url, plivo, r#"{"dst":"+14155550123","src":"+15005550006"}"#, 400),
        (
            "vonage",
            format!("{base}/v1/messages"),
            vonage.clone(),
            r#"{"message_type":"text","channel":"sms","from":"15005550006","text":"hi"}"#,
            422,
        ),
        (
            "vonage",
            format!("{base}/v1/messages"),
            vonage,
            r#"{"message_type":"text","channel":"whatsapp","to":"14155550123","from":"15005550006","text":"hi"}"#,
            422,
        ),
    ];
    for (provider, url, authorization, body, expected) in cases {
        let (status, headers, answer) = json_post(url, &authorization, body).await;
        assert_eq!(status, expected, "{provider} {body}");
        let json: Value = serde_json::from_slice(&answer).expect("JSON");
        let now = SystemTime::now();
        let outcome = match provider {
            "telnyx" => {
                assert!(json["errors"][0]["code"].is_string() && json["errors"][0]["title"].is_string(), "{json}");
                sms_sdk::provider::telnyx::__private::interpret(status, &headers, &answer, now)
            }
            "plivo" => {
                assert!(json["api_id"].is_string() && json["error"].is_string(), "{json}");
                sms_sdk::provider::plivo::__private::interpret(status, &headers, &answer, now)
            }
            _ => {
                assert!(json["type"].as_str().is_some_and(|t| t.ends_with("#1150") || t.ends_with("#invalid-json")));
                sms_sdk::provider::vonage::__private::interpret(status, &headers, &answer, now)
            }
        };
        assert_eq!(rejection_category(outcome), Some(Category::Request), "{provider} {body}");
    }
    assert!(emulator.messages().iter().all(|m| m.status == Status::Rejected && m.id.is_none()));
}

fn application_jwt(alg: &str, claims: &Value) -> String {
    let pem: String = VONAGE_PRIVATE_KEY.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(pem).expect("PEM");
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der).expect("RSA key");
    let input = format!(
        "{}.{}",
        b64url(json!({"alg": alg, "typ": "JWT"}).to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(&ring::signature::RSA_PKCS1_SHA256, &ring::rand::SystemRandom::new(), input.as_bytes(), &mut signature)
        .expect("sign");
    format!("{input}.{}", b64url(&signature))
}

#[tokio::test]
async fn vonage_application_jwts_are_checked_for_signature_application_and_expiry() {
    let emulator = emulator().await;
    let url = format!("{}/v1/messages", emulator.base_url());
    let body = r#"{"message_type":"text","channel":"sms","to":"14155550123","from":"15005550006","text":"hi"}"#;
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
    let valid = application_jwt(
        "RS256",
        &json!({"application_id": VONAGE_APPLICATION_ID, "iat": now, "jti": "a", "exp": now + 900}),
    );
    let (_, claims, _) = {
        let parts: Vec<&str> = valid.split('.').collect();
        (parts[0].to_owned(), parts[1].to_owned(), parts[2].to_owned())
    };
    let tampered = valid.replacen(
        &claims,
        &b64url(json!({"application_id": VONAGE_APPLICATION_ID, "iat": now, "exp": now + 9000}).to_string().as_bytes()),
        1,
    );
    let cases = [
        (valid, 202),
        (application_jwt("RS256", &json!({"application_id": VONAGE_APPLICATION_ID, "iat": now})), 202),
        (application_jwt("RS256", &json!({"application_id": "another", "iat": now, "exp": now + 900})), 401),
        (
            application_jwt(
                "RS256",
                &json!({"application_id": VONAGE_APPLICATION_ID, "iat": now - 2000, "exp": now - 10}),
            ),
            401,
        ),
        (application_jwt("RS256", &json!({"application_id": VONAGE_APPLICATION_ID})), 401),
        (application_jwt("HS256", &json!({"application_id": VONAGE_APPLICATION_ID, "exp": now + 900})), 401),
        (tampered, 401),
        ("not.a.jwt".to_owned(), 401),
    ];
    for (n, (token, expected)) in cases.into_iter().enumerate() {
        let (status, headers, answer) = json_post(url.clone(), &format!("Bearer {token}"), body).await;
        assert_eq!(status, expected, "case {n}");
        let outcome = sms_sdk::provider::vonage::__private::interpret(status, &headers, &answer, SystemTime::now());
        if expected == 401 {
            assert_eq!(rejection_category(outcome), Some(Category::Auth), "case {n}");
        } else {
            assert!(matches!(outcome, Outcome::Accepted(_)), "case {n}: {outcome:?}");
        }
    }
}

#[tokio::test]
async fn the_keys_endpoint_has_the_documented_shape() {
    let emulator = emulator().await;
    let response = http().get(format!("{}/_emulator/keys", emulator.base_url())).send().await.expect("GET");
    let (status, keys) = json_of(response).await;
    assert_eq!(status, 200);
    assert_eq!(keys, keys_json());
    let shape: Vec<(String, Vec<String>)> = keys
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_object().map(|v| v.keys().cloned().collect()).unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let expected = [
        ("twilio", vec!["account_sid", "auth_token"]),
        ("telnyx", vec!["api_key", "public_key"]),
        ("plivo", vec!["auth_id", "auth_token"]),
        ("vonage", vec!["api_key", "api_secret", "application_id", "private_key", "signature_secret"]),
        ("sinch", vec!["service_plan_id", "api_token", "webhook_secret"]),
        ("aws", vec!["access_key_id", "secret_access_key", "region", "sns_topic_arn", "sns_certificate"]),
        ("infobip", vec!["api_key", "webhook_user", "webhook_password"]),
        (
            "bandwidth",
            vec![
                "account_id",
                "application_id",
                "api_user",
                "api_password",
                "client_id",
                "client_secret",
                "callback_user",
                "callback_password",
            ],
        ),
    ];
    let expected: Vec<(String, Vec<String>)> =
        expected.iter().map(|(k, v)| ((*k).to_owned(), v.iter().map(|s| (*s).to_owned()).collect())).collect();
    assert_eq!(shape, expected);
    assert!(keys["vonage"]["private_key"].as_str().is_some_and(|k| k.starts_with("-----BEGIN PRIVATE KEY-----")));
    assert!(keys["aws"]["sns_certificate"].as_str().is_some_and(|k| k.starts_with("-----BEGIN CERTIFICATE-----")));
    // The certificate alone is served too, and never the key that signs with it.
    let response =
        http().get(format!("{}/_emulator/aws/sns-certificate.pem", emulator.base_url())).send().await.expect("GET");
    assert_eq!(response.status().as_u16(), 200);
    let pem = response.text().await.expect("a body");
    assert_eq!(pem, sms_sdk_emulator::credentials::AWS_SNS_CERTIFICATE);
    assert!(!keys["aws"].to_string().contains("PRIVATE KEY"));
}

#[tokio::test]
async fn inspection_lists_every_request_and_delete_clears_it() {
    let emulator = emulator().await;
    let client = client(&emulator, Api::Telnyx);
    for _ in 0..2 {
        client.send(&Message::new(TO, "Twice")).await.expect("accepted");
    }
    let _ = client.send(&Message::new(magic::OPTED_OUT, "No")).await.expect_err("rejected");
    let listed = inspection(&emulator).await;
    assert_eq!(listed.len(), 3);
    for field in ["provider", "id", "to", "from", "body", "media_urls", "callback_url", "status", "webhook_failures"] {
        assert!(listed.iter().all(|entry| entry.get(field).is_some()), "{field}");
    }
    assert_eq!(listed[0]["provider"], "telnyx");
    assert_eq!(listed[0]["body"], listed[1]["body"]);
    assert_ne!(listed[0]["id"], listed[1]["id"]);
    assert_eq!((listed[2]["id"].clone(), listed[2]["status"].clone()), (Value::Null, json!("rejected")));
    assert_eq!(listed[2]["error_code"], "40300");

    let response = http().delete(format!("{}/_emulator/messages", emulator.base_url())).send().await.expect("DELETE");
    assert_eq!(response.status().as_u16(), 204);
    assert!(inspection(&emulator).await.is_empty());
}

#[tokio::test]
async fn clearing_resets_the_rate_limited_once_state() {
    let emulator = emulator().await;
    let client = client(&emulator, Api::Twilio);
    let message = Message::new(magic::RATE_LIMITED_ONCE, "Once");
    assert_eq!(
        client.send(&message).await.expect_err("limited").kind(),
        sms_sdk::ErrorKind::Rejected(Category::RateLimited)
    );
    emulator.clear();
    assert!(client.send(&message).await.is_err(), "limited again after the reset");
    client.send(&message).await.expect("then accepted");
}

#[tokio::test]
async fn messages_can_be_fetched_and_listed() {
    let emulator = emulator().await;
    let base = emulator.base_url();
    let twilio = client(&emulator, Api::Twilio).send(&Message::new(TO, "Find me")).await.expect("accepted").provider_id;
    let telnyx = client(&emulator, Api::Telnyx).send(&Message::new(TO, "Find me")).await.expect("accepted").provider_id;
    let plivo = client(&emulator, Api::Plivo).send(&Message::new(TO, "Find me")).await.expect("accepted").provider_id;
    assert!(eventually(|| emulator.messages().iter().all(|m| m.status == Status::Delivered)).await);

    let twilio_auth = basic(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN);
    let get = |url: String, authorization: String| async move {
        json_of(http().get(url).header("authorization", authorization).send().await.expect("GET")).await
    };
    let accounts = format!("{base}/2010-04-01/Accounts/{TWILIO_ACCOUNT_SID}");
    let (status, message) = get(format!("{accounts}/Messages/{twilio}.json"), twilio_auth.clone()).await;
    assert_eq!(
        (status, message["sid"].as_str(), message["status"].as_str()),
        (200, Some(twilio.as_str()), Some("delivered"))
    );
    let (status, _) =
        get(format!("{accounts}/Messages/SM00000000000000000000000000000000.json"), twilio_auth.clone()).await;
    assert_eq!(status, 404);
    let (status, _) = get(format!("{accounts}/Messages/{twilio}.json"), basic(TWILIO_ACCOUNT_SID, "wrong")).await;
    assert_eq!(status, 401);

    let list = |query: &str| get(format!("{accounts}/Messages.json?{query}"), twilio_auth.clone());
    let today = time::OffsetDateTime::now_utc().date();
    let (status, listed) = list(&format!("To=%2B14155550123&DateSent>={}", today.previous_day().expect("a day"))).await;
    assert_eq!(status, 200);
    assert_eq!(listed["messages"].as_array().map(Vec::len), Some(1));
    assert_eq!(listed["messages"][0]["sid"], twilio.as_str());
    let (_, later) = list(&format!("To=%2B14155550123&DateSent%3E={}", today.next_day().expect("a day"))).await;
    assert_eq!(later["messages"].as_array().map(Vec::len), Some(0));
    let (_, other) = list("To=%2B14155550199").await;
    assert_eq!(other["messages"].as_array().map(Vec::len), Some(0));
    // The last day a date can name is answered, not a crash.
    let (status, last) = list("To=%2B14155550123&DateSent%3C=9999-12-31").await;
    assert_eq!(status, 200);
    assert_eq!(last["messages"].as_array().map(Vec::len), Some(1));

    let (status, found) = get(format!("{base}/v2/messages/{telnyx}"), format!("Bearer {TELNYX_API_KEY}")).await;
    assert_eq!((status, found["data"]["id"].as_str()), (200, Some(telnyx.as_str())));
    assert_eq!(found["data"]["to"][0]["status"], "delivered");
    let (status, _) = get(format!("{base}/v2/messages/{telnyx}"), "Bearer wrong".to_owned()).await;
    assert_eq!(status, 401);

    let plivo_auth = basic(PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN);
    let (status, found) = get(format!("{base}/v1/Account/{PLIVO_AUTH_ID}/Message/{plivo}/"), plivo_auth.clone()).await;
    assert_eq!((status, found["message_uuid"].as_str()), (200, Some(plivo.as_str())));
    assert_eq!(found["message_state"], "delivered");
    let (status, _) = get(format!("{base}/v1/Account/{PLIVO_AUTH_ID}/Message/{telnyx}/"), plivo_auth).await;
    assert_eq!(status, 404);
}

/// Sends a raw Telnyx request to `to` and reads until the connection ends.
async fn raw_send(emulator: &RunningEmulator, to: &str) -> std::io::Result<Vec<u8>> {
    let mut stream = tokio::net::TcpStream::connect(emulator.local_addr()).await?;
    let body = json!({"to": to, "from": "+15005550006", "text": "raw"}).to_string();
    let request = format!(
        "POST /v2/messages HTTP/1.1\r\nhost: emulator\r\nauthorization: Bearer {TELNYX_API_KEY}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await??;
    Ok(answer)
}

#[tokio::test]
async fn the_reset_number_resets_and_the_created_number_closes() {
    let emulator = emulator().await;
    let reset = raw_send(&emulator, magic::RESET).await.expect_err("reset");
    assert_eq!(reset.kind(), std::io::ErrorKind::ConnectionReset);
    assert_eq!(raw_send(&emulator, magic::CREATED_THEN_DROPPED).await.expect("closed"), b"");
    let messages = emulator.messages();
    assert_eq!((messages[0].status, messages[0].id.is_none()), (Status::ConnectionReset, true));
    assert!(messages[1].id.is_some());
}

#[tokio::test]
async fn unknown_routes_are_404() {
    let emulator = emulator().await;
    let (status, body) = post_json(&format!("{}/v3/nothing", emulator.base_url()), &json!({})).await;
    assert_eq!(status, 404);
    assert!(body["error"].is_string());
}
