//! `sms-sdk webhook verify`: a failing signature says what the provider signs, which URL was
//! used and what to check; the output (text and JSON) carries no full phone number, no message
//! body and no secret.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Output, command};
use serde_json::{Value, json};
use sms_sdk::testing::webhooks::{
    SignedRequest, TelnyxKeyPair, signed_plivo_request, signed_plivo_v3_request, signed_telnyx_request,
    signed_twilio_request, signed_vonage_request,
};
use sms_sdk_cli::Env;

const TWILIO_TOKEN: &str = "tw-token-not-for-output";
const PLIVO_TOKEN: &str = "pl-token-not-for-output";
const VONAGE_SECRET: &str = "vo-secret-not-for-output";
/// The public URL the provider called.
const PUBLIC: &str = "https://hooks.example.com/sms/inbound?tenant=42";
/// The URL the server behind the proxy sees, with credentials in it.
const INTERNAL: &str = "http://app:hunter2@10.0.0.5:3000/sms/inbound?tenant=42";
/// [`INTERNAL`] as the command prints it.
const INTERNAL_SHOWN: &str = "http://***@10.0.0.5:3000/sms/inbound?tenant=42";
const SENDER: &str = "+14155550123";
const RECIPIENT: &str = "+15005550006";
/// A number inside a message body.
const BODY_NUMBER: &str = "+442071838750";
const BODY: &str = "Call me back at +442071838750 about order 77";
const IAT: i64 = 1_700_000_000;

static FILES: AtomicUsize = AtomicUsize::new(0);

fn env(telnyx: &TelnyxKeyPair) -> Env {
    [
        ("TWILIO_AUTH_TOKEN", TWILIO_TOKEN.to_owned()),
        ("TELNYX_PUBLIC_KEY", telnyx.public_key.clone()),
        ("PLIVO_AUTH_TOKEN", PLIVO_TOKEN.to_owned()),
        ("VONAGE_SIGNATURE_SECRET", VONAGE_SECRET.to_owned()),
    ]
    .into_iter()
    .collect()
}

/// `webhook verify` of `request` as received at `url`, with `extra` arguments.
fn verify(provider: &str, url: &str, request: &SignedRequest, env: &Env, extra: &[&str]) -> Output {
    let name = format!("sms-sdk-webhook-verify-{}-{}", std::process::id(), FILES.fetch_add(1, Ordering::Relaxed));
    let file = std::env::temp_dir().join(name);
    std::fs::write(&file, &request.body).unwrap();
    let mut args: Vec<String> = ["webhook", "verify", "--provider", provider, "--url", url, "--body-file"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    args.push(file.display().to_string());
    for (name, value) in &request.headers {
        args.extend(["-H".to_owned(), format!("{name}: {}", value.to_str().unwrap())]);
    }
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let output = command(&args, env);
    let _ = std::fs::remove_file(file);
    output
}

/// The one JSON object printed.
fn parsed(o: &Output) -> Value {
    serde_json::from_str(o.out.trim()).unwrap_or_else(|e| panic!("{e}: {}{}", o.out, o.err))
}

/// Neither output carries a secret, a full number or the message body.
fn assert_nothing_leaks(o: &Output) {
    for leak in [TWILIO_TOKEN, PLIVO_TOKEN, VONAGE_SECRET, "hunter2", SENDER, RECIPIENT, BODY_NUMBER, BODY] {
        assert!(!o.out.contains(leak) && !o.err.contains(leak), "{leak} in: {}{}", o.out, o.err);
    }
    for digits in [&SENDER[1..], &RECIPIENT[1..], &BODY_NUMBER[1..]] {
        assert!(!o.out.contains(digits) && !o.err.contains(digits), "{digits} in: {}{}", o.out, o.err);
    }
}

fn twilio_inbound() -> SignedRequest {
    let params = [
        ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
        ("From", SENDER),
        ("To", RECIPIENT),
        ("Body", BODY),
        ("NumMedia", "0"),
    ];
    signed_twilio_request(TWILIO_TOKEN, PUBLIC, &params)
}

fn plivo_inbound_params() -> [(&'static str, &'static str); 5] {
    [
        ("MessageUUID", "2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c"),
        ("From", "14155550123"),
        ("To", "15005550006"),
        ("Text", BODY),
        ("Type", "sms"),
    ]
}

#[test]
fn a_twilio_signature_checked_against_another_url_says_the_url_is_signed() {
    let key = TelnyxKeyPair::generate();
    let request = twilio_inbound();
    let o = verify("twilio", INTERNAL, &request, &env(&key), &[]);
    assert_eq!(o.code, 1, "{}{}", o.out, o.err);
    assert!(o.err.contains("invalid_signature"), "{}", o.err);
    assert!(o.err.contains("The URL is part of what Twilio signs"), "{}", o.err);
    assert!(o.err.contains(&format!("URL used: {INTERNAL_SHOWN}")), "{}", o.err);
    assert!(o.err.contains("scheme, host, port, path and query"), "{}", o.err);
    assert!(o.err.contains("docs/webhooks-behind-a-proxy.md"), "{}", o.err);
    assert_nothing_leaks(&o);

    let o = verify("twilio", INTERNAL, &request, &env(&key), &["--json"]);
    assert_eq!(o.code, 1, "{}{}", o.out, o.err);
    let error = &parsed(&o)["error"];
    assert_eq!(error["reason"], "invalid_signature");
    assert_eq!(error["url_signed"], true);
    assert_eq!(error["url"], INTERNAL_SHOWN);
    assert!(error["signed"].as_str().unwrap().contains("the URL it called, query included"), "{error}");
    assert!(error["check"].as_str().unwrap().contains("docs/webhooks-behind-a-proxy.md"), "{error}");
    assert_nothing_leaks(&o);

    // At the public URL it verifies.
    assert_eq!(verify("twilio", PUBLIC, &request, &env(&key), &[]).code, 0);
}

#[test]
fn a_plivo_signature_checked_against_another_url_says_which_part_of_it_is_signed() {
    let key = TelnyxKeyPair::generate();
    let v3 = signed_plivo_v3_request(PLIVO_TOKEN, PUBLIC, &plivo_inbound_params(), "918273645");
    let o = verify("plivo", INTERNAL, &v3, &env(&key), &[]);
    assert_eq!(o.code, 1, "{}{}", o.out, o.err);
    assert!(o.err.contains("The URL is part of what Plivo signs (V3): the URL it called with its query"), "{}", o.err);
    assert!(o.err.contains(&format!("URL used: {INTERNAL_SHOWN}")), "{}", o.err);
    assert!(o.err.contains("scheme, host, port, path and query"), "{}", o.err);
    assert!(o.err.contains("docs/webhooks-behind-a-proxy.md"), "{}", o.err);
    assert_nothing_leaks(&o);

    let v2 = signed_plivo_request(PLIVO_TOKEN, PUBLIC, &plivo_inbound_params(), "918273645");
    let o = verify("plivo", INTERNAL, &v2, &env(&key), &["--json"]);
    assert_eq!(o.code, 1, "{}{}", o.out, o.err);
    let error = &parsed(&o)["error"];
    assert_eq!(error["url_signed"], true);
    assert_eq!(error["url"], INTERNAL_SHOWN);
    assert!(error["signed"].as_str().unwrap().contains("without its query"), "{error}");
    assert!(error["check"].as_str().unwrap().contains("scheme, host, port and path"), "{error}");
    assert_nothing_leaks(&o);

    assert_eq!(verify("plivo", PUBLIC, &v3, &env(&key), &[]).code, 0);
    assert_eq!(verify("plivo", PUBLIC, &v2, &env(&key), &[]).code, 0);
}

#[test]
fn schemes_that_do_not_sign_the_url_say_what_they_sign_instead() {
    let key = TelnyxKeyPair::generate();
    let telnyx = signed_telnyx_request(
        &key,
        PUBLIC,
        r#"{"data":{"event_type":"message.sent","id":"e","payload":{"id":"m","to":[{"status":"sent"}]}}}"#,
        IAT,
    );
    let vonage = signed_vonage_request(VONAGE_SECRET, PUBLIC, r#"{"message_uuid":"v","status":"delivered"}"#, IAT, "j");
    let now = IAT.to_string();
    for (provider, request, signs) in
        [("telnyx", &telnyx, "raw body, with Ed25519"), ("vonage", &vonage, "payload_hash")]
    {
        // Another URL changes nothing.
        assert_eq!(verify(provider, INTERNAL, request, &env(&key), &["--now", &now]).code, 0, "{provider}");
        let mut changed = request.clone();
        let last = changed.body.len() - 3;
        changed.body[last] ^= 1;
        let o = verify(provider, INTERNAL, &changed, &env(&key), &["--now", &now]);
        assert_eq!(o.code, 1, "{provider}: {}{}", o.out, o.err);
        assert!(o.err.contains("does not sign the URL"), "{provider}: {}", o.err);
        assert!(o.err.contains(signs), "{provider}: {}", o.err);
        assert!(!o.err.contains("URL used"), "{provider}: {}", o.err);
        let o = verify(provider, INTERNAL, &changed, &env(&key), &["--now", &now, "--json"]);
        let error = &parsed(&o)["error"];
        assert_eq!(error["url_signed"], false, "{provider}: {error}");
        assert!(error.get("url").is_none(), "{provider}: {error}");
        assert!(error["check"].as_str().unwrap().contains("byte for byte"), "{provider}: {error}");
        assert_nothing_leaks(&o);
    }
    // A Vonage token signed with another secret.
    let forged =
        signed_vonage_request("another-secret", PUBLIC, r#"{"message_uuid":"v","status":"delivered"}"#, IAT, "j");
    let o = verify("vonage", PUBLIC, &forged, &env(&key), &["--now", &now]);
    assert_eq!(o.code, 1, "{}{}", o.out, o.err);
    assert!(o.err.contains("VONAGE_SIGNATURE_SECRET"), "{}", o.err);
}

#[test]
fn json_masks_every_number_and_leaves_out_the_body_and_the_raw_payload() {
    let key = TelnyxKeyPair::generate();
    let now = IAT.to_string();
    let telnyx_body = json!({"data": {"event_type": "message.received", "id": "e1", "payload": {
        "id": "m1", "from": {"phone_number": SENDER}, "to": [{"phone_number": RECIPIENT}], "text": BODY,
    }}})
    .to_string();
    let vonage_inbound = json!({"message_uuid": "v1", "from": "14155550123", "to": "15005550006", "text": BODY,
        "channel": "sms", "timestamp": "2023-11-14T22:13:20Z"})
    .to_string();
    let vonage_status = json!({"message_uuid": "v2", "status": "delivered", "from": "15005550006",
        "to": "14155550123", "timestamp": "2023-11-14T22:13:20Z"})
    .to_string();
    let twilio_status = signed_twilio_request(
        TWILIO_TOKEN,
        PUBLIC,
        &[
            ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
            ("MessageStatus", "delivered"),
            ("From", RECIPIENT),
            ("To", SENDER),
        ],
    );
    let twilio_stop = signed_twilio_request(
        TWILIO_TOKEN,
        PUBLIC,
        &[("MessageSid", "SM0123456789abcdef0123456789abcdee"), ("From", SENDER), ("To", RECIPIENT), ("Body", "STOP")],
    );
    let cases = [
        ("twilio", twilio_inbound(), "message.received", true),
        ("twilio", twilio_status, "message.delivered", false),
        ("twilio", twilio_stop, "recipient.opted_out", true),
        ("plivo", signed_plivo_v3_request(PLIVO_TOKEN, PUBLIC, &plivo_inbound_params(), "1"), "message.received", true),
        ("telnyx", signed_telnyx_request(&key, PUBLIC, &telnyx_body, IAT), "message.received", true),
        ("vonage", signed_vonage_request(VONAGE_SECRET, PUBLIC, &vonage_inbound, IAT, "j1"), "message.received", true),
        ("vonage", signed_vonage_request(VONAGE_SECRET, PUBLIC, &vonage_status, IAT, "j2"), "message.delivered", false),
    ];
    for (provider, request, kind, has_body) in cases {
        let o = verify(provider, PUBLIC, &request, &env(&key), &["--now", &now, "--json"]);
        assert_eq!(o.code, 0, "{provider} {kind}: {}{}", o.out, o.err);
        let event = parsed(&o);
        assert_eq!(event["type"], kind, "{event}");
        assert_eq!(event["provider"], provider, "{event}");
        assert!(event.get("raw").is_none(), "{provider} {kind}: {event}");
        assert!(event.get("body").is_none(), "{provider} {kind}: {event}");
        assert_eq!(event.get("body_chars").is_some(), has_body, "{provider} {kind}: {event}");
        for field in ["from", "to"] {
            let value = event[field].as_str().unwrap_or_else(|| panic!("{provider} {kind} {field}: {event}"));
            assert!(value.contains("****"), "{provider} {kind} {field}: {event}");
        }
        assert_nothing_leaks(&o);
        // The text output names the event, and no number either.
        let o = verify(provider, PUBLIC, &request, &env(&key), &["--now", &now]);
        assert!(o.out.contains(&format!("verified {provider} {kind}")), "{}", o.out);
        assert_nothing_leaks(&o);
    }
}

#[test]
fn a_malformed_header_is_named_without_its_value() {
    let key = TelnyxKeyPair::generate();
    let mut request = twilio_inbound();
    request.headers.clear();
    for line in ["X-Twilio-Signature sig-value-not-for-output", "X-Twilio-Signature: sig-value-not-for-output\u{7f}"] {
        let o = verify("twilio", PUBLIC, &request, &env(&key), &["-H", line]);
        assert_eq!(o.code, 2, "{}{}", o.out, o.err);
        assert!(o.err.contains("-H"), "{}", o.err);
        assert!(!o.err.contains("sig-value-not-for-output"), "{}", o.err);
    }
}

/// AWS (SNS): a notification verifies with the topic pinned and the certificate given (PEM text
/// or a file); a changed byte, another topic, raw delivery and a missing topic each say what to
/// check; the JSON output masks numbers and gives the body as its length.
#[test]
fn aws_sns_notifications_verify_and_refusals_say_what_to_check() {
    use sms_sdk::testing::webhooks::{AWS_SNS_TEST_CERTIFICATE, SnsSigner, signed_aws_request};
    const TOPIC: &str = "arn:aws:sns:us-east-1:123456789012:sms-events";
    const URL: &str = "https://hooks.example.com/sms/aws";
    let message = json!({
        "originationNumber": SENDER, "destinationNumber": RECIPIENT, "messageBody": BODY,
        "inboundMessageId": "in-1",
    })
    .to_string();
    let signed = signed_aws_request(&SnsSigner::test(), URL, TOPIC, &message, "sns-1", "2026-12-01T10:00:00.000Z");
    let env: Env =
        [("AWS_SNS_TOPIC_ARN", TOPIC), ("SMS_SDK_AWS_SNS_CERTIFICATE", AWS_SNS_TEST_CERTIFICATE)].into_iter().collect();
    let ok = verify("aws", URL, &signed, &env, &[]);
    assert_eq!(ok.code, 0, "{}{}", ok.out, ok.err);
    assert_eq!(ok.out.trim(), "verified aws message.received (aws:sns:sns-1)");
    assert_nothing_leaks(&ok);
    let json = verify("aws", URL, &signed, &env, &["--json"]);
    let event = parsed(&json);
    assert_eq!(event["type"], "message.received", "{event}");
    assert_nothing_leaks(&json);

    // The certificate as a file, and a second topic in the list.
    let file = std::env::temp_dir().join(format!("sms-sdk-sns-cert-{}.pem", std::process::id()));
    std::fs::write(&file, AWS_SNS_TEST_CERTIFICATE).unwrap();
    let topics = format!("arn:aws:sns:us-east-1:123456789012:other, {TOPIC}");
    let from_file: Env =
        [("AWS_SNS_TOPIC_ARN", topics.as_str()), ("SMS_SDK_AWS_SNS_CERTIFICATE", &file.display().to_string())]
            .into_iter()
            .collect();
    assert_eq!(verify("aws", URL, &signed, &from_file, &[]).code, 0);
    let _ = std::fs::remove_file(&file);

    let mut tampered = signed.clone();
    tampered.body = String::from_utf8(signed.body.clone()).unwrap().replace("in-1", "in-2").into_bytes();
    let refused = verify("aws", URL, &tampered, &env, &[]);
    assert_eq!(refused.code, 1, "{}{}", refused.out, refused.err);
    assert!(refused.err.contains("SNS does not sign the URL or the headers"), "{}", refused.err);
    assert!(refused.err.contains("one of AWS_SNS_TOPIC_ARN"), "{}", refused.err);
    assert_nothing_leaks(&refused);

    let elsewhere: Env = [
        ("AWS_SNS_TOPIC_ARN", "arn:aws:sns:us-east-1:123456789012:other"),
        ("SMS_SDK_AWS_SNS_CERTIFICATE", AWS_SNS_TEST_CERTIFICATE),
    ]
    .into_iter()
    .collect();
    assert_eq!(verify("aws", URL, &signed, &elsewhere, &[]).code, 1);

    let raw = signed.clone().header("x-amz-sns-rawdelivery", "true");
    let refused = verify("aws", URL, &raw, &env, &[]);
    assert_eq!(refused.code, 1, "{}", refused.err);
    assert!(refused.err.contains("raw message delivery on"), "{}", refused.err);

    let unset = verify("aws", URL, &signed, &Env::default(), &[]);
    assert_eq!(unset.code, 7, "{}", unset.err);
    assert!(unset.err.contains("AWS_SNS_TOPIC_ARN (the SNS topics to accept) is not set"), "{}", unset.err);
    let bad_topic: Env = [("AWS_SNS_TOPIC_ARN", "my-topic")].into_iter().collect();
    let refused = verify("aws", URL, &signed, &bad_topic, &[]);
    assert_eq!(refused.code, 7, "{}", refused.err);
    assert!(refused.err.contains("is not a topic ARN"), "{}", refused.err);
}

/// A body that is no SNS envelope is not authentic (exit 1, `missing_signature`), never "authentic
/// but malformed" (exit 6).
#[test]
fn aws_an_unsigned_body_is_not_authentic() {
    use sms_sdk::testing::webhooks::{AWS_SNS_TEST_CERTIFICATE, SignedRequest};
    let env: Env = [
        ("AWS_SNS_TOPIC_ARN", "arn:aws:sns:us-east-1:123456789012:sms-events"),
        ("SMS_SDK_AWS_SNS_CERTIFICATE", AWS_SNS_TEST_CERTIFICATE),
    ]
    .into_iter()
    .collect();
    for body in ["hello", "", "[1]"] {
        let request = SignedRequest::new("POST", "https://hooks.example.com/aws", body);
        let o = verify("aws", "https://hooks.example.com/aws", &request, &env, &["--json"]);
        assert_eq!(o.code, 1, "{body:?}: {}{}", o.out, o.err);
        assert_eq!(parsed(&o)["error"]["reason"], "missing_signature", "{}", o.out);
    }
}
