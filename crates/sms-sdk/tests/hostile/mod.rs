//! Hostile webhook requests of about 1 MiB for every provider's verifier (AWS's when the `aws`
//! feature is on), shared by the allocation test (`tests/fuzz/main.rs`) and the timing bench
//! (`benches/webhook_verify.rs`).

use std::time::{Duration, SystemTime};

use sms_sdk::testing::webhooks::SignedRequest;
use sms_sdk::webhook::WebhookVerifier;
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};

pub(crate) const MIB: usize = 1024 * 1024;
const URL: &str = "https://example.com/sms/inbound?tenant=acme";
const NOW: u64 = 1_700_000_000;

/// The clock the cases are verified at (the Telnyx timestamp is fresh then).
pub(crate) fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(NOW)
}

/// One hostile request: what it is, the verifier it is sent to, the request, and whether it
/// carries more parameters than the default limit.
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) verifier: Box<dyn WebhookVerifier>,
    pub(crate) request: SignedRequest,
    pub(crate) over_parameter_limit: bool,
}

/// `unit` repeated up to `len` bytes (whole units only).
fn repeated(unit: &str, len: usize) -> Vec<u8> {
    unit.as_bytes().iter().copied().cycle().take(len / unit.len() * unit.len()).collect()
}

/// Form bodies: many empty parameters, many repeated ones, long keys, many and long `%XX`.
fn forms() -> Vec<(&'static str, Vec<u8>)> {
    let long_keys = (0..1000).map(|i| format!("{}{i}=1", "k".repeat(1040))).collect::<Vec<_>>().join("&");
    let percent = (0..1000).map(|i| format!("v{i}={}", "%41".repeat(340))).collect::<Vec<_>>().join("&");
    vec![
        ("a&a&…", repeated("a&", MIB)),
        ("a=1&a=1&…", repeated("a=1&", MIB)),
        ("long keys", long_keys.into_bytes()),
        ("many %XX", percent.into_bytes()),
        ("one %XX value", format!("Body={}", "%41".repeat(MIB / 3 - 2)).into_bytes()),
        // `+`, `%XX` and a byte that is not UTF-8 in one value: copied, decoded and made valid
        // UTF-8 before the signature is checked (found by a long fuzz run).
        ("+, %XX and \\xff", [b"Body=".as_slice(), &b"a+%41\xff".repeat((MIB - 8) / 6)].concat()),
    ]
}

/// JSON bodies: deep nesting, many keys, a long escaped string.
fn jsons() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("deep nesting", repeated("[", MIB)),
        ("many keys", [b"{".as_slice(), &repeated("\"a\":1,", MIB - 16), b"\"b\":1}"].concat()),
        ("long string", [b"{\"text\":\"".as_slice(), &repeated("\\u0041", MIB - 16), b"\"}"].concat()),
    ]
}

fn twilio() -> Box<dyn WebhookVerifier> {
    Box::new(TwilioWebhook::new("twilio-token").unwrap())
}

fn plivo() -> Box<dyn WebhookVerifier> {
    Box::new(PlivoWebhook::new("plivo-token").unwrap())
}

fn vonage() -> Box<dyn WebhookVerifier> {
    Box::new(VonageWebhook::new("vonage-secret").unwrap())
}

/// The SNS topic the AWS verifier pins.
#[cfg(feature = "aws")]
const AWS_TOPIC: &str = "arn:aws:sns:us-west-2:123456789012:sms-voice-events";

/// An AWS verifier of [`AWS_TOPIC`] with the test certificate injected (no fetch).
#[cfg(feature = "aws")]
fn aws() -> Box<dyn WebhookVerifier> {
    let builder = sms_sdk::provider::aws::AwsWebhook::builder(AWS_TOPIC);
    Box::new(builder.certificate_pem(sms_sdk::testing::webhooks::AWS_SNS_TEST_CERTIFICATE).build().unwrap())
}

/// `body` posted as SNS posts a notification.
#[cfg(feature = "aws")]
fn sns(body: Vec<u8>) -> SignedRequest {
    SignedRequest::new("POST", URL, body)
        .header("content-type", "text/plain; charset=UTF-8")
        .header("x-amz-sns-message-type", "Notification")
        .header("x-amz-sns-topic-arn", AWS_TOPIC)
}

/// SNS notifications from the pinned topic with a forged signature, each about 1 MiB: one
/// member long (or many members). Every member read is there and, but where the long one
/// breaks the rule, reads one way (T285) and names the certificate URL of the topic's region
/// (T286), so what the long member costs is paid before the signature fails.
#[cfg(feature = "aws")]
fn sns_envelopes() -> Vec<(&'static str, Vec<u8>)> {
    // `member`'s JSON is `value`, its `<FILL>` filled with `unit` up to 1 MiB.
    let envelope = |member: &str, value: &str, unit: &str| {
        let signature = format!(r#""{}==""#, "A".repeat(342));
        let topic = format!(r#""{AWS_TOPIC}""#);
        let mut members = vec![
            ("Type", r#""Notification""#),
            ("MessageId", r#""22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324""#),
            ("TopicArn", &topic),
            ("Message", r#""{\"eventType\":\"TEXT_DELIVERED\",\"messageId\":\"m\"}""#),
            ("Timestamp", r#""2023-11-14T22:13:20.000Z""#),
            ("SignatureVersion", r#""2""#),
            ("Signature", &signature),
            ("SigningCertURL", r#""https://sns.us-west-2.amazonaws.com/SimpleNotificationService-sms-sdk-test.pem""#),
        ];
        match members.iter_mut().find(|(name, _)| *name == member) {
            Some((_, json)) => *json = value,
            None => members.push((member, value)),
        }
        let body = members.iter().map(|(name, json)| format!(r#""{name}":{json}"#)).collect::<Vec<_>>().join(",");
        let (before, after) = body.split_once("<FILL>").unwrap();
        let filler = repeated(unit, MIB - 2 - before.len() - after.len());
        [b"{", before.as_bytes(), &filler, after.as_bytes(), b"}"].concat()
    };
    let url = |template: &str| format!(r#""https://sns.us-west-2.{template}""#);
    vec![
        ("sns: long message", envelope("Message", r#""<FILL>""#, "a")),
        ("sns: escaped message", envelope("Message", r#""<FILL>""#, r"\u0041")),
        ("sns: message of newlines", envelope("Message", r#""<FILL>""#, r"\n")),
        ("sns: long message id", envelope("MessageId", r#""<FILL>""#, "a")),
        // RFC 3339 sets no limit to the digits of a fraction of a second.
        ("sns: long timestamp", envelope("Timestamp", r#""2023-11-14T22:13:20.<FILL>Z""#, "0")),
        ("sns: long signature", envelope("Signature", r#""<FILL>""#, "A")),
        ("sns: long cert path", envelope("SigningCertURL", &url("amazonaws.com/<FILL>.pem"), "a")),
        ("sns: long cert host", envelope("SigningCertURL", &url("<FILL>amazonaws.com/a.pem"), "a.")),
        ("sns: many members", envelope("Extra", r#"0,<FILL>"Last":0"#, r#""X":0,"#)),
    ]
}

/// Every hostile case, each with a forged signature.
pub(crate) fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |name: &str, verifier, request: SignedRequest, over_parameter_limit| {
        assert!(request.body.len() <= MIB, "{name}: the body is {} bytes", request.body.len());
        cases.push(Case { name: name.to_owned(), verifier, request, over_parameter_limit });
    };
    for (name, body) in forms() {
        let over = body.split(|b| *b == b'&').filter(|s| !s.is_empty()).count() > 1024;
        let form = || SignedRequest::new("POST", URL, body.clone());
        let forged = form()
            .header("content-type", "application/x-www-form-urlencoded")
            .header("x-twilio-signature", "AAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        add(&format!("form: {name}"), twilio(), forged, over);
        let v3 = form()
            .header("x-plivo-signature-v3", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            .header("x-plivo-signature-v3-nonce", "1");
        add(&format!("form V3: {name}"), plivo(), v3, over);
        // V2 does not sign the body: it is not read before the signature is checked.
        let v2 = form()
            .header("x-plivo-signature-v2", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            .header("x-plivo-signature-v2-nonce", "1");
        add(&format!("form V2: {name}"), plivo(), v2, false);
    }
    let telnyx_key = "A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=";
    let forged_jwt =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3MDAwMDAwMDB9.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    for (name, body) in jsons() {
        let telnyx = SignedRequest::new("POST", URL, body.clone())
            .header("content-type", "application/json")
            .header("telnyx-timestamp", &NOW.to_string())
            .header("telnyx-signature-ed25519", &format!("{}==", "A".repeat(86)));
        add(&format!("json: {name}"), Box::new(TelnyxWebhook::new(telnyx_key).unwrap()), telnyx, false);
        let bearer = format!("Bearer {forged_jwt}");
        let vonage_request = SignedRequest::new("POST", URL, body.clone()).header("authorization", &bearer);
        add(&format!("json: {name}"), vonage(), vonage_request, false);
        // Twilio signs a JSON body through the bodySHA256 of the signed URL.
        let twilio_json = SignedRequest::new("POST", &format!("{URL}&bodySHA256={}", "0".repeat(64)), body)
            .header("content-type", "application/json")
            .header("x-twilio-signature", "AAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        add(&format!("json: {name}"), twilio(), twilio_json, false);
    }
    #[cfg(feature = "aws")]
    {
        // Not an envelope (refused as unsigned), then envelopes that reach the signature.
        for (name, body) in jsons() {
            add(&format!("json: {name}"), aws(), sns(body), false);
        }
        for (name, body) in sns_envelopes() {
            add(name, aws(), sns(body), false);
        }
    }
    // Header values are input too: a token of a million dots, a long list of V3 signatures.
    let dots = SignedRequest::new("POST", URL, "{}").header("authorization", &format!("Bearer {}", ".".repeat(MIB)));
    add("header: a token of dots", vonage(), dots, false);
    let many = SignedRequest::new("POST", URL, "a=1")
        .header("x-plivo-signature-v3", &vec!["AAAA"; MIB / 5].join(","))
        .header("x-plivo-signature-v3-nonce", "1");
    add("header: many signatures", plivo(), many, false);
    cases
}
