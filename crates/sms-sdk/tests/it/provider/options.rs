//! Validation and provider options with the real adapters (all four providers).

use std::sync::{Arc, Mutex};

use serde_json::json;
use sms_sdk::adapter::{Category, SupportStatus};
use sms_sdk::encoding::Encoding;
use sms_sdk::provider::{plivo, telnyx, twilio, vonage};
use sms_sdk::testing::{MemoryAdapter, RejectedOptions, rejected_outcome};
use sms_sdk::{Client, ErrorKind, Failover, Field, IssueCode, Message, Plivo, Sender, Twilio, Vonage};

use super::plivo::plivo_at;
use super::telnyx::telnyx_at;
use super::twilio::{SERVICE_SID, SID, twilio_at};
use super::vonage::vonage_at;
use super::{fixture_json, json_body, json_reply, requests, serve, text_body};
use crate::{TO, message};

const UNREACHABLE: &str = "http://127.0.0.1:9";

fn twilio_with_service(base_url: &str) -> Twilio {
    Twilio::builder(SID, "test-token").from(Sender::messaging_service(SERVICE_SID)).base_url(base_url).build().unwrap()
}

fn twilio_and_vonage() -> Client {
    Client::builder().adapter(twilio_with_service(UNREACHABLE)).adapter(vonage_at(UNREACHABLE)).build().unwrap()
}

#[test]
fn t106_option_specs_are_consistent() {
    for spec in [
        &twilio::__private::OPTIONS,
        &telnyx::__private::OPTIONS,
        &plivo::__private::OPTIONS,
        &vonage::__private::OPTIONS,
    ] {
        let wires: Vec<String> = spec.options.iter().map(|o| o.wire.to_lowercase()).collect();
        for (i, wire) in wires.iter().enumerate() {
            assert!(!wires[..i].contains(wire), "duplicate wire {wire}");
            assert!(!spec.reserved.iter().any(|r| r.to_lowercase() == *wire), "reserved wire {wire}");
        }
        assert!(spec.options.iter().all(|o| o.name != "extra"));
    }
}

#[test]
fn t100_validate_across_adapters() {
    let report = twilio_and_vonage().validate(&Message::new(TO, "Your package is ready 📦"));
    assert!(report.supported);
    assert_eq!((report.preview.encoding, report.preview.segments), (Encoding::Ucs2, 1));
    assert_eq!(report.adapter_candidates, ["twilio", "vonage"]);
    assert!(report.issues.is_empty());
}

#[test]
fn t101_a_fallback_that_cannot_schedule_is_reported() {
    let in_an_hour = time::OffsetDateTime::now_utc() + time::Duration::hours(1);
    let report = twilio_and_vonage().validate(&Message::new(TO, "Your package is ready 📦").send_at(in_an_hour));
    assert!(report.supported);
    assert_eq!(report.adapter_candidates, ["twilio"]);
    assert_eq!(report.issues.len(), 1);
    let issue = &report.issues[0];
    assert_eq!(
        (issue.code, issue.field, issue.provider.as_deref()),
        (IssueCode::UnsupportedField, Field::SendAt, Some("vonage"))
    );
}

#[test]
fn t102_media_support_follows_the_primary() {
    let with_media = message().media_url("https://example.com/a.png").from("+15005550006");
    assert!(twilio_and_vonage().validate(&with_media).supported);
    let vonage_only = Client::builder().adapter(vonage_at(UNREACHABLE)).build().unwrap();
    assert!(!vonage_only.validate(&with_media).supported);
}

#[test]
fn t105_capabilities_list() {
    let client = Client::builder()
        .adapter(MemoryAdapter::builder().name("a").build())
        .adapter(plivo_at(UNREACHABLE))
        .build()
        .unwrap();
    let infos = client.adapters();
    let names: Vec<&str> = infos.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["a", "plivo"]);
    assert_eq!(infos[1].support.status, SupportStatus::Partial);
    let validity = infos[1].capabilities.validity_period.unwrap();
    assert_eq!((validity.min_sec, validity.max_sec), (5, 10_799));
}

#[tokio::test]
async fn t107_twilio_typed_options_and_extra() {
    let server = serve(json_reply(201, &fixture_json("twilio", "message_created.json"))).await;
    let client = Client::builder().adapter(twilio_with_service(&server.uri())).build().unwrap();
    let options = json!({"shortenUrls": true, "smartEncoded": false, "riskCheck": "disable", "attempt": 2,
                         "messageIntent": "otp", "extra": {"TrafficType": "free"}});
    client.send(&Message::new(TO, "Hi").provider_option("twilio", options)).await.unwrap();
    let form: Vec<(String, String)> =
        url::form_urlencoded::parse(&requests(&server).await[0].body).into_owned().collect();
    for pair in [
        ("ShortenUrls", "true"),
        ("SmartEncoded", "false"),
        ("RiskCheck", "disable"),
        ("Attempt", "2"),
        ("MessageIntent", "otp"),
        ("TrafficType", "free"),
        ("MessagingServiceSid", SERVICE_SID),
    ] {
        assert!(form.contains(&(pair.0.to_owned(), pair.1.to_owned())), "{pair:?} in {form:?}");
    }
}

#[tokio::test]
async fn t108_telnyx_options_in_the_body() {
    let server = serve(json_reply(200, &fixture_json("telnyx", "message_created.json"))).await;
    let client = Client::builder().adapter(telnyx_at(&server.uri())).build().unwrap();
    let options = json!({"autoDetect": true, "encoding": "ucs2", "useProfileWebhooks": false,
        "webhookFailoverUrl": "https://backup.example.com/sms", "subject": "Order", "extra": {"future_flag": 3}});
    client.send(&Message::new(TO, "Hi").provider_option("telnyx", options)).await.unwrap();
    // Typed options go on the wire in the documented order, then `extra`.
    assert_eq!(
        text_body(&requests(&server).await[0]),
        r#"{"to":"+14155550123","from":"+15005550006","text":"Hi","subject":"Order","webhook_failover_url":"https://backup.example.com/sms","use_profile_webhooks":false,"auto_detect":true,"encoding":"ucs2","future_flag":3}"#
    );
}

#[tokio::test]
async fn t109_plivo_options_in_the_body() {
    let server = serve(json_reply(202, &fixture_json("plivo", "message_created.json"))).await;
    let adapter = Plivo::builder("MA0000", "plivo-token").from("+15005550006").base_url(server.uri()).build().unwrap();
    let client = Client::builder().adapter(adapter).build().unwrap();
    let options = json!({"log": "number_only", "trackable": true, "extra": {"dlt_entity_id": "123"}});
    client.send(&Message::new(TO, "Hi").provider_option("plivo", options)).await.unwrap();
    let sent = requests(&server).await;
    assert_eq!(sent[0].url.path(), "/v1/Account/MA0000/Message/");
    assert_eq!(
        json_body(&sent[0]),
        json!({"dst": TO, "type": "sms", "src": "+15005550006", "text": "Hi", "log": "number_only",
               "trackable": true, "dlt_entity_id": "123"})
    );
}

#[tokio::test]
async fn t110_vonage_options_nest_under_sms() {
    let server = serve(json_reply(202, &fixture_json("vonage", "message_accepted.json"))).await;
    let client = Client::builder().adapter(vonage_at(&server.uri())).build().unwrap();
    let options = json!({"clientRef": "order-123", "webhookVersion": "v1", "trustedRecipient": true,
        "encodingType": "unicode", "entityId": "E1", "contentId": "C1", "poolId": "pool-1",
        "extra": {"sms.future": "x", "top_level_future": false}});
    client.send(&Message::new(TO, "Hi").provider_option("vonage", options)).await.unwrap();
    assert_eq!(
        text_body(&requests(&server).await[0]),
        r#"{"message_type":"text","channel":"sms","to":"14155550123","from":"15005550006","text":"Hi","client_ref":"order-123","webhook_version":"v1","trusted_recipient":true,"sms":{"encoding_type":"unicode","content_id":"C1","entity_id":"E1","pool_id":"pool-1","future":"x"},"top_level_future":false}"#
    );
}

#[tokio::test]
async fn t111_and_t122_plain_twilio_body_and_options_for_other_adapters_are_ignored() {
    for options in [None, Some(json!({"telnyx": {"autoDetect": true}}))] {
        let server = serve(json_reply(201, &fixture_json("twilio", "message_created.json"))).await;
        let client = Client::builder().adapter(twilio_at(&server.uri())).build().unwrap();
        let message = Message { provider_options: options, ..Message::new(TO, "Hi") };
        client.send(&message).await.unwrap();
        assert_eq!(text_body(&requests(&server).await[0]), "To=%2B14155550123&From=%2B15005550006&Body=Hi");
    }
}

/// Sends `options` for `adapter` through `client` and returns the error; asserts nothing was sent.
async fn refused(
    client: &Client,
    server: &wiremock::MockServer,
    adapter: &str,
    options: serde_json::Value,
) -> sms_sdk::Error {
    let err = client.send(&Message::new(TO, "Hi").provider_option(adapter, options)).await.unwrap_err();
    assert!(requests(server).await.is_empty());
    err
}

#[tokio::test]
async fn t112_and_t113_extra_cannot_name_reserved_or_typed_parameters() {
    let server = serve(json_reply(201, &fixture_json("twilio", "message_created.json"))).await;
    let client = Client::builder().adapter(twilio_at(&server.uri())).build().unwrap();
    for key in ["To", "body", "STATUSCALLBACK", "MediaUrl", "ContentSid"] {
        let err = refused(&client, &server, "twilio", json!({"extra": {key: "x"}})).await;
        assert_eq!(
            (err.kind(), err.provider_name()),
            (ErrorKind::Unsupported { field: Field::ProviderOptions }, Some("twilio"))
        );
    }
    let err = refused(&client, &server, "twilio", json!({"extra": {"ShortenUrls": true}})).await;
    assert!(err.to_string().contains("shortenUrls"), "{err}");
}

#[tokio::test]
async fn t114_reserved_collisions_on_every_provider() {
    let server = serve(json_reply(500, &json!({}))).await;
    let cases = [
        (
            Client::builder().adapter(telnyx_at(&server.uri())).build().unwrap(),
            "telnyx",
            json!({"extra": {"webhook_url": "x"}}),
        ),
        (
            Client::builder().adapter(plivo_at(&server.uri())).build().unwrap(),
            "plivo",
            json!({"extra": {"method": "GET"}}),
        ),
        (
            Client::builder().adapter(vonage_at(&server.uri())).build().unwrap(),
            "vonage",
            json!({"extra": {"failover": "x"}}),
        ),
        (
            Client::builder().adapter(vonage_at(&server.uri())).build().unwrap(),
            "vonage",
            json!({"extra": {"sms.encoding_type": "text"}}),
        ),
    ];
    for (client, adapter, options) in cases {
        let err = refused(&client, &server, adapter, options).await;
        assert_eq!(err.kind(), ErrorKind::Unsupported { field: Field::ProviderOptions }, "{adapter}");
    }
}

#[tokio::test]
async fn t115_unknown_keys_and_bad_values() {
    let server = serve(json_reply(201, &fixture_json("twilio", "message_created.json"))).await;
    let client = Client::builder().adapter(twilio_at(&server.uri())).build().unwrap();
    let err = refused(&client, &server, "twilio", json!({"shortenUrl": true})).await;
    assert_eq!(err.kind(), ErrorKind::Unsupported { field: Field::ProviderOptions });
    assert!(err.to_string().contains("shortenUrl"));
    for bad in [
        json!({"smartEncoded": "yes"}),
        json!({"riskCheck": "off"}),
        json!({"applicationSid": "nope"}),
        json!({"extra": {"Tags": {"campaign": "x"}}}),
    ] {
        let err = refused(&client, &server, "twilio", bad).await;
        assert_eq!(err.kind(), ErrorKind::InvalidMessage { field: Field::ProviderOptions });
    }
}

#[tokio::test]
async fn t117_fallback_adapter_options_are_checked_before_any_send() {
    let server = serve(json_reply(201, &fixture_json("twilio", "message_created.json"))).await;
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).adapter(twilio_at(&server.uri())).build().unwrap();
    let err = client.send(&message().provider_option("twilio", json!({"extra": {"From": "+1"}}))).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported { field: Field::ProviderOptions });
    assert!(memory.sent().is_empty());
    assert!(requests(&server).await.is_empty());
}

#[tokio::test]
async fn t118_shorten_urls_needs_a_messaging_service() {
    let server = serve(json_reply(201, &fixture_json("twilio", "message_created.json"))).await;
    let client = Client::builder().adapter(twilio_at(&server.uri())).build().unwrap();
    let err = refused(&client, &server, "twilio", json!({"shortenUrls": true})).await;
    assert_eq!(err.kind(), ErrorKind::Unsupported { field: Field::ProviderOptions });
}

#[tokio::test]
async fn t119_option_values_never_leak() {
    let secret = "patient-4155550199-diagnosis";
    let server = serve(json_reply(201, &fixture_json("twilio", "message_created.json"))).await;
    let events = Arc::new(Mutex::new(String::new()));
    let sink = events.clone();
    let client = Client::builder()
        .adapter(twilio_at(&server.uri()))
        .on_failure(move |e| sink.lock().unwrap().push_str(&serde_json::to_string(e).unwrap()))
        .build()
        .unwrap();
    for options in [json!({"extra": {"Body": secret}}), json!({"applicationSid": secret}), json!({"note": secret})] {
        let err = client.send(&message().provider_option("twilio", options)).await.unwrap_err();
        let text = format!("{err} {err:?} {}", serde_json::to_string(&err).unwrap());
        assert!(!text.contains(secret) && !text.contains("4155550199"), "{text}");
        let report = client.validate(&message().provider_option("twilio", json!({"note": secret})));
        assert!(!serde_json::to_string(&report).unwrap().contains("4155550199"));
    }
    assert!(!events.lock().unwrap().contains("4155550199"));
}

#[tokio::test]
async fn t120_each_adapter_sends_only_its_own_options() {
    let twilio_server = serve(json_reply(400, &json!({"code": 21606, "message": "not a valid sender"}))).await;
    let telnyx_server = serve(json_reply(200, &fixture_json("telnyx", "message_created.json"))).await;
    let client = Client::builder()
        .adapter(twilio_at(&twilio_server.uri()))
        .adapter(telnyx_at(&telnyx_server.uri()))
        .failover(Failover::OnEligibleRejection)
        .build()
        .unwrap();
    let message = message()
        .provider_option("twilio", json!({"smartEncoded": true}))
        .provider_option("telnyx", json!({"autoDetect": true}));
    assert_eq!(client.send(&message).await.unwrap().provider, "telnyx");
    let form = text_body(&requests(&twilio_server).await[0]);
    assert!(form.contains("SmartEncoded=true") && !form.contains("auto_detect"));
    let body = json_body(&requests(&telnyx_server).await[0]);
    assert_eq!(body["auto_detect"], true);
    assert!(body.get("SmartEncoded").is_none());
}

#[tokio::test]
async fn t121_options_go_only_to_their_adapter() {
    let primary = MemoryAdapter::builder()
        .name("twilio")
        .provider_options(&twilio::__private::OPTIONS)
        .outcomes([rejected_outcome(Category::Sender, RejectedOptions::default())])
        .build();
    let backup = MemoryAdapter::builder().name("backup").build();
    let client = Client::builder()
        .adapter(primary.clone())
        .adapter(backup.clone())
        .failover(Failover::OnEligibleRejection)
        .build()
        .unwrap();
    client.send(&message().provider_option("twilio", json!({"riskCheck": "disable"}))).await.unwrap();
    let fields = &primary.sent()[0].message.provider_fields;
    assert_eq!(fields.len(), 1);
    assert_eq!((fields[0].wire.as_str(), fields[0].value.clone()), ("RiskCheck", json!("disable")));
    assert!(backup.sent()[0].message.provider_fields.is_empty());
}

#[test]
fn t123_options_for_reports_candidates_with_options() {
    let client = Client::builder()
        .adapter(twilio_at(UNREACHABLE))
        .adapter(telnyx_at(UNREACHABLE))
        .adapter(plivo_at(UNREACHABLE))
        .build()
        .unwrap();
    let message = message()
        .provider_option("twilio", json!({"smartEncoded": true}))
        .provider_option("plivo", json!({"trackable": true}))
        .provider_option("vonage", json!({"clientRef": "x"}));
    let report = client.validate(&message);
    assert!(report.supported);
    assert_eq!(report.adapter_candidates, ["twilio", "telnyx", "plivo"]);
    assert_eq!(report.provider_options_for, ["twilio", "plivo"]);
}

#[test]
fn t124_an_options_issue_makes_the_message_unsupported() {
    let client = Client::builder().adapter(twilio_at(UNREACHABLE)).build().unwrap();
    let report = client.validate(&message().provider_option("twilio", json!({"extra": {"To": "+1"}})));
    assert!(!report.supported);
    assert_eq!(report.issues.len(), 1);
    let issue = &report.issues[0];
    assert_eq!(
        (issue.code, issue.field, issue.provider.as_deref()),
        (IssueCode::UnsupportedField, Field::ProviderOptions, Some("twilio"))
    );
    assert!(report.provider_options_for.is_empty());
    let _ = Vonage::basic("k", "s");
}
