//! Hostile webhook requests of about 1 MiB for every provider's verifier (Twilio, Telnyx,
//! Plivo, Vonage; AWS's, Infobip's and Bandwidth's when their features are on), shared by the
//! allocation test (`tests/fuzz/main.rs`) and the timing bench (`benches/webhook_verify.rs`).
//!
//! Every case is refused. The signing verifiers see a forged signature; Infobip and Bandwidth,
//! which sign nothing, get correctly authenticated requests (Basic credentials, or Infobip's URL
//! token) whose hostile bodies reach the parser and are refused there (too many events, too
//! deep, not a batch).

use std::time::{Duration, SystemTime};

use sms_sdk::testing::webhooks::SignedRequest;
use sms_sdk::webhook::{WebhookError, WebhookRequest, WebhookVerifier};
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
    pub(crate) verifier: Verifier,
    pub(crate) request: SignedRequest,
    pub(crate) over_parameter_limit: bool,
}

/// Sends a request to a verifier: the number of events it accepted, or why it refused.
type Verify = Box<dyn Fn(&WebhookRequest<'_>, SystemTime) -> Result<usize, WebhookError>>;

/// A verifier of the corpus: one behind the `WebhookVerifier` trait, or a batching one (Infobip,
/// Bandwidth) called through its `verify_all_at` (the inherent method now, the trait's of the
/// same name once the trait has it).
pub(crate) struct Verifier {
    provider: &'static str,
    verify: Verify,
}

impl Verifier {
    /// A verifier of the trait (one event per request).
    fn one(verifier: impl WebhookVerifier + 'static) -> Self {
        let provider = verifier.provider();
        Self { provider, verify: Box::new(move |request, now| verifier.verify_at(request, now).map(|_| 1)) }
    }

    /// The provider's name.
    pub(crate) fn provider(&self) -> &'static str {
        self.provider
    }

    /// Verifies `request` at `now`: how many events it carried, or the refusal.
    pub(crate) fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<usize, WebhookError> {
        (self.verify)(request, now)
    }
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

fn twilio() -> Verifier {
    Verifier::one(TwilioWebhook::new("twilio-token").unwrap())
}

fn plivo() -> Verifier {
    Verifier::one(PlivoWebhook::new("plivo-token").unwrap())
}

fn vonage() -> Verifier {
    Verifier::one(VonageWebhook::new("vonage-secret").unwrap())
}

#[cfg(feature = "infobip")]
const INFOBIP_TOKEN: &str = "hostile-infobip-url-token";

/// Infobip's verifier, of Basic credentials or (with `url_token`) of the URL's secret token.
#[cfg(feature = "infobip")]
fn infobip(url_token: bool) -> Verifier {
    use sms_sdk::InfobipWebhook;
    let verifier = if url_token {
        InfobipWebhook::url_token(INFOBIP_TOKEN)
    } else {
        InfobipWebhook::basic("infobip", "infobip-password")
    };
    let verifier = verifier.unwrap();
    Verifier {
        provider: sms_sdk::provider::infobip::NAME,
        verify: Box::new(move |request, now| verifier.verify_all_at(request, now).map(|events| events.len())),
    }
}

/// `body` as Infobip posts it, authenticated as [`infobip`]`(url_token)` expects.
#[cfg(feature = "infobip")]
fn infobip_request(body: Vec<u8>, url_token: bool) -> SignedRequest {
    use sms_sdk::testing::webhooks::signed_infobip_request;
    let mut request = if url_token {
        signed_infobip_request(URL, "", None, Some(INFOBIP_TOKEN))
    } else {
        signed_infobip_request(URL, "", Some(("infobip", "infobip-password")), None)
    };
    request.body = body;
    request
}

/// Bandwidth's verifier of Basic credentials.
#[cfg(feature = "bandwidth")]
fn bandwidth() -> Verifier {
    let verifier = sms_sdk::BandwidthWebhook::basic("bandwidth", "bandwidth-password").unwrap();
    Verifier {
        provider: sms_sdk::provider::bandwidth::NAME,
        verify: Box::new(move |request, now| verifier.verify_all_at(request, now).map(|events| events.len())),
    }
}

/// `body` as Bandwidth posts it, with the credentials of [`bandwidth`].
#[cfg(feature = "bandwidth")]
fn bandwidth_request(body: Vec<u8>) -> SignedRequest {
    let mut request = sms_sdk::testing::webhooks::signed_bandwidth_request("bandwidth", "bandwidth-password", URL, "");
    request.body = body;
    request
}

/// Batches of about 1 MiB that their parser refuses, wrapped in `before` and `after` (Infobip's
/// `{"results":[` and `]}`, Bandwidth's `[` and `]`): a huge count of tiny entries (half a
/// million, far over the limit of events), of empty objects, of real events (`report`, over the
/// limit too), and one entry nested deeper than JSON is read.
#[cfg(any(feature = "infobip", feature = "bandwidth"))]
fn batches(before: &str, after: &str, report: &str) -> Vec<(&'static str, Vec<u8>)> {
    let room = MIB - before.len() - after.len();
    let wrap = |entries: Vec<u8>| [before.as_bytes(), &entries, after.as_bytes()].concat();
    let reports = {
        let mut entries = repeated(&format!("{report},"), room);
        entries.pop();
        entries
    };
    vec![
        ("tiny entries", wrap([b"0".as_slice(), &repeated(",0", room - 1)].concat())),
        ("empty objects", wrap([b"{}".as_slice(), &repeated(",{}", room - 2)].concat())),
        ("too many events", wrap(reports)),
        ("a deep entry", wrap([br#"{"x":"#.as_slice(), &repeated("[", room - 6), b"}"].concat())),
    ]
}

/// The SNS topic the AWS verifier pins.
#[cfg(feature = "aws")]
const AWS_TOPIC: &str = "arn:aws:sns:us-west-2:123456789012:sms-voice-events";

/// An AWS verifier of [`AWS_TOPIC`] with the test certificate injected (no fetch).
#[cfg(feature = "aws")]
fn aws() -> Verifier {
    let builder = sms_sdk::provider::aws::AwsWebhook::builder(AWS_TOPIC);
    Verifier::one(builder.certificate_pem(sms_sdk::testing::webhooks::AWS_SNS_TEST_CERTIFICATE).build().unwrap())
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

/// Every hostile case: a forged signature, or (Infobip, Bandwidth) a hostile authenticated body.
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
        add(&format!("json: {name}"), Verifier::one(TelnyxWebhook::new(telnyx_key).unwrap()), telnyx, false);
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
    // Infobip and Bandwidth check no signature over the body: every hostile body, correctly
    // authenticated, reaches the parser.
    #[cfg(feature = "infobip")]
    {
        let report = r#"{"messageId":"fuzz-1","to":"41793026727","text":"hi","status":{"groupId":3,"id":5,"name":"DELIVERED_TO_HANDSET"}}"#;
        let wrapped = batches(r#"{"results":["#, r#"],"messageCount":1}"#, report);
        for (url_token, (name, body)) in
            jsons().into_iter().chain(wrapped).enumerate().map(|(i, case)| (i % 2 == 1, case))
        {
            let scheme = if url_token { "token" } else { "basic" };
            add(&format!("{scheme}: {name}"), infobip(url_token), infobip_request(body, url_token), false);
        }
    }
    #[cfg(feature = "bandwidth")]
    {
        let report = r#"{"type":"message-received","time":"2025-01-06T15:43:35Z","to":"+12345678902","message":{"id":"fuzz-1","from":"+12345678901","text":"hi"}}"#;
        // A message id over 256 bytes is refused too.
        let long_id = report.replace("fuzz-1", &"a".repeat(MIB - report.len()));
        let long_id = ("a long message id", format!("[{long_id}]").into_bytes());
        for (name, body) in jsons().into_iter().chain(batches("[", "]", report)).chain([long_id]) {
            add(&format!("basic: {name}"), bandwidth(), bandwidth_request(body), false);
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
