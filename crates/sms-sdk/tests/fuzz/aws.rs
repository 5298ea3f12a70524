//! Hostile SNS messages for the AWS verifier (`AwsWebhook`, with an injected certificate): the
//! envelopes SNS posts, signed (the fixtures, `SignatureVersion` 1 and 2, and `SnsSigner`
//! envelopes of random messages) and then mutated; signed envelopes whose `Message` is random
//! JSON or bytes; every signed member changed in turn; mutated certificates given to the
//! builder; and random certificate and subscription URLs.
//!
//! Each answer is checked against the rules of T285–T287, written here again on their own (not
//! the verifier's code): the members present, the topic pinned, the signed members readable one
//! way only ([`reads_one_way`]), the certificate URL AWS's and of the topic's own region
//! ([`follows_rule`], [`of_topic_region`]), then the signature.
//!
//! The generic verifier and normalizer targets (`webhooks.rs`) run the AWS verifier too, on
//! envelopes re-signed after a mutation and on signed ones mutated afterwards; this module holds
//! what only SNS has: the signed members, the certificate and the URL rule.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{LazyLock, Mutex};

use base64::Engine as _;
use serde_json::{Map, Value};
use sms_sdk::ErrorKind;
use sms_sdk::provider::aws::{AwsWebhook, SignedFields, is_certificate_url, subscription};
use sms_sdk::testing::webhooks::{AWS_SNS_TEST_CERTIFICATE, AWS_SNS_TEST_KEY, SignedRequest, SnsSigner};
use sms_sdk::webhook::{EventKind, SmsEvent, WebhookError, WebhookVerifier};
use time::format_description::well_known::Rfc3339;

use super::GLOBAL;
use super::engine::{Budget, Fuzz, assert_linear, max_len, mutate, text};
use super::webhooks::{AUTHENTIC, UNVERIFIED};

/// The topic of the fixtures, and of every envelope signed here: the one the verifiers pin.
pub(crate) const TOPIC: &str = "arn:aws:sns:us-west-2:123456789012:sms-voice-events";

/// The `SigningCertURL` of the fixtures and of the envelopes signed here: the test certificate
/// at the SNS endpoint of [`TOPIC`]'s region (T286: a message names its own region's; the
/// library's `AWS_SNS_TEST_CERTIFICATE_URL` is us-east-1's, refused for this topic).
pub(crate) const CERTIFICATE_URL: &str =
    "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-sms-sdk-test.pem";

const MISSING: WebhookError = WebhookError::MissingSignature { provider: "aws" };
const INVALID: WebhookError = WebhookError::InvalidSignature { provider: "aws" };
const MALFORMED: WebhookError = WebhookError::MalformedSignature { provider: "aws" };

/// The signed fixtures: a `TEXT_SUCCESSFUL` event (version 1), a `TEXT_CARRIER_UNREACHABLE`
/// event with a `Subject` (version 2), a two-way message (version 1) and a subscription
/// confirmation (version 1).
pub(crate) const FIXTURES: [&[u8]; 4] = [
    include_bytes!("../fixtures/aws/sns_notification_text_successful_v1.json"),
    include_bytes!("../fixtures/aws/sns_notification_carrier_unreachable_v2.json"),
    include_bytes!("../fixtures/aws/sns_notification_two_way_v1.json"),
    include_bytes!("../fixtures/aws/sns_subscription_confirmation_v1.json"),
];

const OTHER_CERTIFICATE: &str = include_str!("../fixtures/aws/other-sns-certificate.pem");
const OTHER_KEY: &str = include_str!("../fixtures/aws/other-sns-key.pem");

/// The `Timestamp` of the envelopes signed here: the suite's fixed now.
pub(crate) const TIMESTAMP: &str = "2023-11-14T22:13:20.000Z";

/// The test key's signer (RSA signing is the slow part of a case: about 1 ms).
static SIGNER: LazyLock<SnsSigner> = LazyLock::new(SnsSigner::test);

/// A verifier of [`TOPIC`] with the test certificate.
pub(crate) fn verifier() -> AwsWebhook {
    AwsWebhook::builder(TOPIC).certificate_pem(AWS_SNS_TEST_CERTIFICATE).build().unwrap()
}

/// `body` posted to `url` as SNS posts it, with the message type header `kind`.
pub(crate) fn request(url: &str, kind: &str, body: Vec<u8>) -> SignedRequest {
    SignedRequest::new("POST", url, body)
        .header("content-type", "text/plain; charset=UTF-8")
        .header("x-amz-sns-message-type", kind)
        .header("x-amz-sns-topic-arn", TOPIC)
}

/// The members of one SNS message, owned.
#[derive(Debug, Clone)]
struct Fields {
    kind: &'static str,
    topic_arn: &'static str,
    message: String,
    message_id: String,
    subject: Option<String>,
    timestamp: String,
    token: Option<String>,
    subscribe_url: Option<String>,
}

impl Fields {
    fn signed(&self) -> SignedFields<'_> {
        SignedFields {
            kind: self.kind,
            message: &self.message,
            message_id: &self.message_id,
            subject: self.subject.as_deref(),
            timestamp: &self.timestamp,
            topic_arn: self.topic_arn,
            token: self.token.as_deref(),
            subscribe_url: self.subscribe_url.as_deref(),
        }
    }

    /// The envelope, signed by `signer` (`SignatureVersion` 2), naming the test certificate at
    /// its topic's region ([`certificate_url`]).
    fn envelope(&self, signer: &SnsSigner) -> String {
        signer.envelope(&self.signed(), &certificate_url(self.topic_arn))
    }
}

/// The region of a topic ARN: its fourth `:`-field (`arn:aws:sns:{region}:…`).
fn region_of(topic_arn: &str) -> &str {
    topic_arn.split(':').nth(3).unwrap_or_default()
}

/// The test certificate's URL at the SNS endpoint of `topic_arn`'s region (`.com.cn` in the
/// `aws-cn` partition): [`CERTIFICATE_URL`] for [`TOPIC`].
fn certificate_url(topic_arn: &str) -> String {
    let domain = if topic_arn.starts_with("arn:aws-cn:") { "amazonaws.com.cn" } else { "amazonaws.com" };
    format!("https://sns.{}.{domain}/SimpleNotificationService-sms-sdk-test.pem", region_of(topic_arn))
}

// ---------------------------------------------------------------------------------------------
// The rules, on their own

/// The characters of an SNS `MessageId` that reads one way: ASCII letters, digits and `-`.
fn is_id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

/// Whether `timestamp` is RFC 3339 (as `time` reads it).
fn is_rfc3339(timestamp: &str) -> bool {
    time::OffsetDateTime::parse(timestamp, &Rfc3339).is_ok()
}

/// Whether `timestamp` is as SNS writes it: at most 40 printable ASCII characters, a `T`
/// between the date and the time, and RFC 3339.
fn is_sns_timestamp(timestamp: &str) -> bool {
    timestamp.len() <= 40
        && timestamp.bytes().all(|b| b.is_ascii_graphic())
        && timestamp.as_bytes().get(10) == Some(&b'T')
        && is_rfc3339(timestamp)
}

/// Whether `timestamp` is an RFC 3339 `Timestamp` that reads one way: RFC 3339 as `time` reads
/// it takes any ASCII character between the date and the time, a newline too.
fn is_one_way_timestamp(timestamp: &str) -> bool {
    is_sns_timestamp(timestamp)
}

/// T285: whether the members around the signed ones read back one way only: no newline in the
/// `MessageId`, `Subject`, `Timestamp`, `Token` or `SubscribeURL` (only `Message` may hold
/// one), a `MessageId` of 1 to 128 ASCII letters, digits and `-`, and an RFC 3339 `Timestamp`.
/// The rule is the verifier's as it stands: on each of these members the message has, signed
/// for its type or not (a confirmation's `Subject`, a notification's `Token`).
fn reads_one_way(
    message_id: &str,
    subject: Option<&str>,
    timestamp: &str,
    token: Option<&str>,
    subscribe_url: Option<&str>,
) -> bool {
    let one_line = [Some(message_id), subject, Some(timestamp), token, subscribe_url];
    (1..=128).contains(&message_id.len())
        && message_id.bytes().all(is_id_byte)
        && is_sns_timestamp(timestamp)
        && one_line.into_iter().flatten().all(|value| !value.contains('\n'))
}

/// What the verifier (pinned to `topics`, with an injected certificate) must refuse `envelope`
/// as before it checks the signature, in its order, or `None` when the envelope gets as far as
/// the signature: a `Type`, `Message` (a string, perhaps empty), `MessageId`, `Timestamp`,
/// `TopicArn`, `SignatureVersion`, `Signature` and `SigningCertURL` (and a confirmation's
/// `Token` and `SubscribeURL`), each a non-empty string, or the signature is missing (T287); a
/// topic not pinned is not authentic; members that read more than one way are malformed
/// (T285); a certificate URL that is not AWS's of the topic's region is not authentic (T286).
/// A member that is not a string reads as absent.
fn refused_before_signature(envelope: &Map<String, Value>, topics: &[&str]) -> Option<WebhookError> {
    let text = |name: &str| envelope.get(name).and_then(Value::as_str);
    let filled = |name: &str| text(name).filter(|value| !value.is_empty());
    let confirmation = match filled("Type") {
        Some("Notification") => false,
        Some("SubscriptionConfirmation" | "UnsubscribeConfirmation") => true,
        _ => return Some(MISSING),
    };
    let required = ["MessageId", "Timestamp", "TopicArn", "SignatureVersion", "Signature", "SigningCertURL"];
    let confirms = ["Token", "SubscribeURL"];
    if text("Message").is_none()
        || required.iter().any(|name| filled(name).is_none())
        || (confirmation && confirms.iter().any(|name| filled(name).is_none()))
    {
        return Some(MISSING);
    }
    let topic = filled("TopicArn").unwrap();
    if !topics.contains(&topic) {
        return Some(INVALID);
    }
    let (id, timestamp) = (filled("MessageId").unwrap(), filled("Timestamp").unwrap());
    if !reads_one_way(id, text("Subject"), timestamp, filled("Token"), filled("SubscribeURL")) {
        return Some(MALFORMED);
    }
    if !of_topic_region(filled("SigningCertURL").unwrap(), topic, true) {
        return Some(INVALID);
    }
    None
}

/// `payload` re-signed, for the generic verifier target: a fixture as it is (half the time, when
/// `payload` is one), else the members of `payload` that a verifier needs (when it is an
/// envelope that still has them after its mutation) with its `Message`, or the whole payload as
/// the `Message` of a notification; always from [`TOPIC`], signed with the test key. So that it
/// is authentic, the members around the signed ones are made to read one way (T285): a
/// `MessageId` cut to its id characters, a `Timestamp` that is not RFC 3339 (or holds a
/// newline) replaced, newlines in the others made spaces.
pub(crate) fn resigned(url: &str, payload: &[u8], rng: &mut fastrand::Rng) -> SignedRequest {
    if FIXTURES.contains(&payload) && rng.bool() {
        let kind = if payload == FIXTURES[3] { "SubscriptionConfirmation" } else { "Notification" };
        return request(url, kind, payload.to_vec());
    }
    let envelope = match serde_json::from_slice::<Value>(payload) {
        Ok(Value::Object(envelope)) => envelope,
        _ => Map::new(),
    };
    let member = |name: &str| envelope.get(name).and_then(Value::as_str).filter(|v| !v.is_empty()).map(str::to_owned);
    let (token, subscribe_url) = (member("Token"), member("SubscribeURL"));
    let kind = match member("Type").as_deref() {
        Some("SubscriptionConfirmation") if token.is_some() && subscribe_url.is_some() => "SubscriptionConfirmation",
        Some("UnsubscribeConfirmation") if token.is_some() && subscribe_url.is_some() => "UnsubscribeConfirmation",
        _ => "Notification",
    };
    let fields = Fields {
        kind,
        topic_arn: TOPIC,
        message: envelope.get("Message").and_then(Value::as_str).map_or_else(|| text(payload), str::to_owned),
        message_id: one_way_id(member("MessageId").as_deref().unwrap_or_default()),
        subject: envelope.get("Subject").and_then(Value::as_str).map(one_line),
        timestamp: member("Timestamp").filter(|t| is_one_way_timestamp(t)).unwrap_or_else(|| TIMESTAMP.to_owned()),
        token: token.as_deref().map(one_line),
        subscribe_url: subscribe_url.as_deref().map(one_line),
    };
    request(url, kind, memoized_envelope(&fields).into_bytes())
}

/// `id` as a `MessageId` that reads one way: its id characters, at most 128 of them (a fixed
/// id when none are left).
fn one_way_id(id: &str) -> String {
    let id: String = id.bytes().filter(|&b| is_id_byte(b)).take(128).map(char::from).collect();
    if id.is_empty() { "fuzz-message-id".to_owned() } else { id }
}

/// `value` on one line: its newlines made spaces.
fn one_line(value: &str) -> String {
    value.replace('\n', " ")
}

/// The envelopes [`resigned`] signed lately, by their members: a fixture signed and then mutated
/// (most cases of the generic verifier target) is signed once, not once per case.
static SIGNED_LATELY: LazyLock<Mutex<HashMap<String, String>>> = LazyLock::new(Mutex::default);

/// `fields`' envelope, from [`SIGNED_LATELY`] when small ones were signed before.
fn memoized_envelope(fields: &Fields) -> String {
    let key = format!("{fields:?}");
    if key.len() > 16 * 1024 {
        return fields.envelope(&SIGNER);
    }
    let mut memo = SIGNED_LATELY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if memo.len() >= 256 {
        memo.clear();
    }
    memo.entry(key).or_insert_with(|| fields.envelope(&SIGNER)).clone()
}

/// A large envelope (unsigned): a long or deeply nested `Message`, many members, a deep member.
pub(crate) fn large_envelope(rng: &mut fastrand::Rng) -> Vec<u8> {
    let n = rng.usize(1..=4096);
    let message = match rng.u8(..4) {
        0 => format!(
            r#"{{"eventType":"TEXT_DELIVERED","messageId":"m","context":{{"sms_sdk_ref":"r"}},"x":[{}]}}"#,
            vec![r#"{"a":"b\u00e9","c":[1,2]}"#; n].join(",")
        ),
        1 => [b"[".repeat(n), b"]".repeat(n)].concat().into_iter().map(char::from).collect(),
        2 => format!(
            r#"{{"inboundMessageId":"i","originationNumber":"+1","destinationNumber":"+2","messageBody":"{}"}}"#,
            "\\ud83d\\ude00\\\"".repeat(n)
        ),
        _ => "\"\\\n\u{2028}\0".repeat(n),
    };
    let mut envelope = serde_json::json!({
        "Type": "Notification", "MessageId": "large", "TopicArn": TOPIC, "Message": message,
        "Timestamp": TIMESTAMP, "SignatureVersion": "2", "Signature": "AAAA",
        "SigningCertURL": CERTIFICATE_URL,
    });
    if rng.u8(..4) == 0 {
        let extra: Map<String, Value> = (0..n).map(|i| (format!("X{i}"), Value::from(i))).collect();
        envelope.as_object_mut().unwrap().extend(extra);
    }
    let mut body = serde_json::to_vec(&envelope).unwrap();
    if rng.u8(..8) == 0 {
        // A deep unknown member: refused by the parser's depth limit, not by a stack overflow.
        let deep = [&br#"{"Deep":"#[..], &b"[".repeat(n), &b"]".repeat(n), b","].concat();
        body.splice(0..1, deep);
    }
    body
}

// ---------------------------------------------------------------------------------------------
// Random messages

/// Members of End User Messaging events and inbound messages (the ones the normalizer reads,
/// first), and some it does not.
const EVENT_KEYS: &[&str] = &[
    "eventType",
    "messageId",
    "messageStatus",
    "isFinal",
    "originationPhoneNumber",
    "destinationPhoneNumber",
    "context",
    "inboundMessageId",
    "originationNumber",
    "destinationNumber",
    "messageBody",
    "sms_sdk_ref",
    "eventVersion",
    "eventTimestamp",
    "messageStatusDescription",
    "messageKeyword",
    "previousPublishedMessageId",
    "totalMessagePrice",
    "x",
    "",
];

/// The members the normalizer reads: a repeat of one is a payload error.
const READ_KEYS: &[&str] = &[
    "eventType",
    "isFinal",
    "messageId",
    "messageStatus",
    "originationPhoneNumber",
    "destinationPhoneNumber",
    "context",
    "inboundMessageId",
    "originationNumber",
    "destinationNumber",
    "messageBody",
    "messageKeyword",
];

/// T291: each event type's state, and whether it is a failure (which carries `messageStatus`).
const EVENT_TYPES: &[(&str, &str, bool)] = &[
    ("TEXT_QUEUED", "message.queued", false),
    ("TEXT_PENDING", "message.queued", false),
    ("TEXT_SUCCESSFUL", "message.sent", false),
    ("TEXT_DELIVERED", "message.delivered", false),
    ("TEXT_BLOCKED", "message.filtered", true),
    ("TEXT_CARRIER_BLOCKED", "message.filtered", true),
    ("TEXT_SPAM", "message.filtered", true),
    ("TEXT_PROTECT_BLOCKED", "message.filtered", true),
    ("TEXT_TTL_EXPIRED", "message.undelivered", true),
    ("TEXT_CARRIER_UNREACHABLE", "message.undelivered", true),
    ("TEXT_UNREACHABLE", "message.undelivered", true),
    ("TEXT_INVALID", "message.undelivered", true),
    ("TEXT_INVALID_MESSAGE", "message.undelivered", true),
];

const EVENT_STRINGS: &[&str] = &[
    "TEXT_QUEUED",
    "TEXT_PENDING",
    "TEXT_SUCCESSFUL",
    "TEXT_DELIVERED",
    "TEXT_BLOCKED",
    "TEXT_CARRIER_BLOCKED",
    "TEXT_SPAM",
    "TEXT_PROTECT_BLOCKED",
    "TEXT_TTL_EXPIRED",
    "TEXT_CARRIER_UNREACHABLE",
    "TEXT_UNREACHABLE",
    "TEXT_INVALID",
    "TEXT_INVALID_MESSAGE",
    "TEXT_UNKNOWN",
    "TEXT_SENT",
    "VOICE_COMPLETED",
    "text_delivered",
    "CARRIER_UNREACHABLE",
    "SUCCESSFUL",
    "862a8790-60c0-4430-9b2b-658bdexample",
    "+14255550156",
    "+12065550152",
    "STOP",
    "stop ",
    "HELP",
    "START",
    "UNSTOP",
    "EXAMPLE",
    "AAAAAAAAAAAAAAAAAAAAAA",
    "",
    "\\u0000",
    "\\ud83d\\ude00",
    "\\\"",
    "\\n",
    "\u{1F600}",
];

/// A random JSON text shaped like End User Messaging's messages (members repeated sometimes),
/// nested up to `depth`; its leaves are sometimes not JSON.
fn event_json(rng: &mut fastrand::Rng, depth: usize, out: &mut String) {
    let choice = if depth == 0 { rng.u8(4..10) } else { rng.u8(..10) };
    match choice {
        0..=3 => {
            out.push('{');
            let keys = if depth >= 2 { rng.usize(..8) } else { rng.usize(..4) };
            for i in 0..keys {
                if i > 0 {
                    out.push(',');
                }
                // Mostly the members read; `context` holds an object.
                let key = EVENT_KEYS[if rng.bool() { rng.usize(..11) } else { rng.usize(..EVENT_KEYS.len()) }];
                write!(out, "\"{key}\":").unwrap();
                if key == "context" && rng.bool() {
                    out.push_str(r#"{"sms_sdk_ref":"#);
                    event_json(rng, 0, out);
                    if rng.u8(..8) == 0 {
                        out.push_str(r#","sms_sdk_ref":"b""#);
                    }
                    out.push('}');
                } else {
                    event_json(rng, depth.saturating_sub(1), out);
                }
            }
            out.push('}');
        }
        4..=6 => write!(out, "\"{}\"", EVENT_STRINGS[rng.usize(..EVENT_STRINGS.len())]).unwrap(),
        7 => out.push_str(["0", "-0", "1e999999", "18446744073709551616", "1686975103470"][rng.usize(..5)]),
        8 => out.push_str(["null", "true", "false", "[]", "{}"][rng.usize(..5)]),
        _ if depth > 0 => {
            out.push('[');
            for i in 0..rng.usize(..3) {
                if i > 0 {
                    out.push(',');
                }
                event_json(rng, depth - 1, out);
            }
            out.push(']');
        }
        _ => out.push_str(["", "}", "\"", ",", "\\"][rng.usize(..5)]),
    }
}

/// The `Message` of one fixture (as text).
fn fixture_message(index: usize) -> String {
    let envelope: Value = serde_json::from_slice(FIXTURES[index]).unwrap();
    envelope["Message"].as_str().unwrap().to_owned()
}

/// A random `Message`: End User Messaging-shaped JSON, a fixture's message mutated, random
/// bytes (as text), or a large one.
fn random_message(rng: &mut fastrand::Rng) -> String {
    match rng.u8(..20) {
        0..=12 => {
            let mut message = String::new();
            // The top is an object most of the time: that is what the normalizer reads.
            let depth = rng.usize(1..=4);
            event_json(rng, depth, &mut message);
            if !message.starts_with('{') && rng.bool() {
                message = format!(r#"{{"eventType":{message},"messageId":"m"}}"#);
            }
            message
        }
        13..=16 => {
            let mut message = fixture_message(rng.usize(..4)).into_bytes();
            let other = fixture_message(rng.usize(..4));
            let limit = max_len(rng, 256 * 1024);
            mutate(rng, &mut message, other.as_bytes(), limit);
            text(&message)
        }
        17 | 18 => {
            let mut message = Vec::new();
            mutate(rng, &mut message, b"{\"eventType\":\"TEXT_DELIVERED\",\"messageId\":\"m\"}", 4096);
            text(&message)
        }
        _ => {
            let n = rng.usize(1..=2048);
            format!(r#"{{"eventType":"TEXT_BLOCKED","messageId":"m","messageStatus":"{}"}}"#, "\\u00e9".repeat(n))
        }
    }
}

/// A random non-empty member value (an id, a timestamp, a token): `typical` three times in
/// four, else `typical` mutated (newlines, quotes, backslashes and NUL among what is spliced in).
fn random_value(rng: &mut fastrand::Rng, typical: &str) -> String {
    if rng.u8(..4) != 0 {
        return typical.to_owned();
    }
    let mut value = typical.as_bytes().to_vec();
    mutate(rng, &mut value, b"\n\"\\\0", 256);
    let value = text(&value);
    if value.is_empty() { "x".to_owned() } else { value }
}

const ID_BYTES: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-";

/// A random `MessageId` that reads one way (T285): a UUID as SNS's are, or 1 to 128 id
/// characters (the bounds often).
fn random_id(rng: &mut fastrand::Rng) -> String {
    if rng.u8(..4) != 0 {
        let groups =
            [rng.u64(..1 << 32), rng.u64(..1 << 16), rng.u64(..1 << 16), rng.u64(..1 << 16), rng.u64(..1 << 48)];
        return format!("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", groups[0], groups[1], groups[2], groups[3], groups[4]);
    }
    let len = if rng.bool() { rng.usize(1..=128) } else { [1, 2, 127, 128][rng.usize(..4)] };
    (0..len).map(|_| char::from(ID_BYTES[rng.usize(..ID_BYTES.len())])).collect()
}

/// A random RFC 3339 `Timestamp` (T285): the suite's three times in four, else any date and
/// time, `T`, `t` or a space between them, 0 to 12 digits of fraction, `Z`, `z` or an offset.
fn random_timestamp(rng: &mut fastrand::Rng) -> String {
    if rng.u8(..4) != 0 {
        return TIMESTAMP.to_owned();
    }
    let date = format!("{:04}-{:02}-{:02}", rng.u16(..=9999), rng.u8(1..=12), rng.u8(1..=28));
    let clock = format!("{:02}:{:02}:{:02}", rng.u8(..24), rng.u8(..60), rng.u8(..60));
    let digits = [0, 1, 3, 6, 9, 12][rng.usize(..6)];
    let fraction: String = (0..digits).map(|_| char::from(b'0' + rng.u8(..10))).collect();
    let fraction = if fraction.is_empty() { fraction } else { format!(".{fraction}") };
    let offset = match rng.u8(..4) {
        0 => "Z".to_owned(),
        1 => "z".to_owned(),
        _ => format!("{}{:02}:{:02}", ["+", "-"][rng.usize(..2)], rng.u8(..24), rng.u8(..60)),
    };
    // SNS writes a `T`; a lowercase `t` or a space is RFC 3339 too, but not SNS's, and refused.
    let timestamp = format!("{date}T{clock}{fraction}{offset}");
    assert!(is_sns_timestamp(&timestamp), "the generator made a timestamp that is not SNS's: {timestamp:?}");
    timestamp
}

/// `MessageId`s that read more than one way (T285): a character that is not an id's, a
/// newline (the `Subject` swallowed), 129 characters.
const AMBIGUOUS_IDS: &[&str] = &[
    "a b",
    "22b80b92_fdea",
    "id.1",
    "arn:aws:sns:us-west-2:123456789012:sms-voice-events",
    "\u{e9}t\u{e9}",
    "\0",
    "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324\n",
    "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324\nSubject\nDelivery",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

/// `Timestamp`s that are not RFC 3339, or hold a newline.
const AMBIGUOUS_TIMESTAMPS: &[&str] = &[
    "yesterday",
    "1700000000",
    "2023-11-14T22:13:20",
    "2023-11-14T22:13:20.Z",
    "2023-02-29T00:00:00Z",
    "2023-11-14T24:00:00Z",
    "2023-11-14T22:13:20+24:00",
    " 2023-11-14T22:13:20Z",
    "2023-11-14T22:13:20.000Z\n",
    "2023-11-14\n22:13:20Z",
];

/// Random members of one SNS message from [`TOPIC`]: a notification (with a subject
/// sometimes) or a confirmation. When `valid`, they read one way (T285): an id of its
/// characters, an RFC 3339 timestamp, no newline in the others. Otherwise they are as they
/// come, and one time in three one of them is made to read more than one way.
fn random_fields(rng: &mut fastrand::Rng, valid: bool) -> Fields {
    let kind = ["Notification", "Notification", "Notification", "SubscriptionConfirmation", "UnsubscribeConfirmation"]
        [rng.usize(..5)];
    let confirmation = kind != "Notification";
    let subject = (rng.u8(..3) == 0).then(|| random_value(rng, "Delivery"));
    let id = random_id(rng);
    let timestamp = random_timestamp(rng);
    let subscribe_url =
        format!("https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn={TOPIC}&Token=2336412f");
    let mut fields = Fields {
        kind,
        topic_arn: TOPIC,
        message: random_message(rng),
        message_id: random_value(rng, &id),
        subject: if rng.u8(..4) == 0 && subject.is_some() { Some(String::new()) } else { subject },
        timestamp: random_value(rng, &timestamp),
        token: confirmation.then(|| random_value(rng, "2336412f37fb687f5d51e6e241d09c805a5a57b30d712f79")),
        subscribe_url: confirmation.then(|| random_value(rng, &subscribe_url)),
    };
    if valid {
        fields.message_id = one_way_id(&fields.message_id);
        if !is_one_way_timestamp(&fields.timestamp) {
            fields.timestamp = random_timestamp(rng);
        }
        for value in [&mut fields.subject, &mut fields.token, &mut fields.subscribe_url].into_iter().flatten() {
            *value = one_line(value);
        }
    } else if rng.u8(..3) == 0 {
        let tail = ["", "x", "Timestamp", "TopicArn\n"][rng.usize(..4)];
        let newline = |value: &str| format!("{value}\n{tail}");
        match rng.u8(..5) {
            0 => AMBIGUOUS_IDS[rng.usize(..AMBIGUOUS_IDS.len())].clone_into(&mut fields.message_id),
            1 => AMBIGUOUS_TIMESTAMPS[rng.usize(..AMBIGUOUS_TIMESTAMPS.len())].clone_into(&mut fields.timestamp),
            2 => fields.subject = Some(newline(fields.subject.as_deref().unwrap_or("Delivery"))),
            3 => fields.token = Some(newline(fields.token.as_deref().unwrap_or("t"))),
            _ => fields.subscribe_url = Some(newline(fields.subscribe_url.as_deref().unwrap_or(&subscribe_url))),
        }
    }
    fields
}

// ---------------------------------------------------------------------------------------------
// Signed members

/// A few envelopes signed once (random members), so that most cases need no signing.
static SIGNED_POOL: LazyLock<Vec<Vec<u8>>> = LazyLock::new(|| {
    let mut rng = fastrand::Rng::with_seed(283);
    (0..32).map(|_| random_fields(&mut rng, true).envelope(&SIGNER).into_bytes()).collect()
});

/// The members a message of `kind` is signed with (T285).
fn signed_members(kind: &str) -> &'static [&'static str] {
    if kind == "Notification" {
        &["Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"]
    } else {
        &["Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"]
    }
}

/// What a case did to a signed envelope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// A signed member changed, added or removed, or a non-string put in its place.
    Signed,
    /// A member repeated.
    Repeated,
    /// Only what the signature does not cover changed (or nothing, or the JSON's spelling).
    Unsigned,
    /// A notification's `Subject` moved into its `MessageId` (`{id}\nSubject\n{subject}`, the
    /// `Subject` removed): the string to sign is the same, so the signature would still match.
    Shifted,
}

/// What the verifier must answer a case.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    /// Refused as this: a signed member changed is refused before the signature as
    /// [`refused_before_signature`] says, else as an invalid signature; a shifted `Subject` as
    /// malformed (its `MessageId` holds newlines, T285); an unsigned change that leaves a member
    /// reading more than one way, as [`refused_before_signature`] says.
    Refused(WebhookError),
    /// A member repeated (a payload error, or not authentic): never accepted.
    NotAccepted,
    /// Accepted, as the same message (or refused as the same payload error).
    Accepted,
}

/// One case: an envelope whose members were changed, and what the verifier must answer.
struct MemberCase {
    how: String,
    /// The signed envelope before the change.
    base: Vec<u8>,
    body: Vec<u8>,
    kind: String,
    message_id: String,
    raw_delivery: bool,
    expect: Expect,
    /// Whether the changed envelope gets as far as the signature check.
    reaches_signature: bool,
}

impl std::fmt::Debug for MemberCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemberCase")
            .field("how", &self.how)
            .field("expect", &self.expect)
            .field("raw_delivery", &self.raw_delivery)
            .field("body", &text(&self.body))
            .finish_non_exhaustive()
    }
}

/// `value` as a JSON string with every character escaped (`\uXXXX`, surrogate pairs beyond the
/// BMP): the same value, spelled differently.
fn escaped(value: &str) -> String {
    let mut out = String::from("\"");
    let mut units = [0u16; 2];
    for c in value.chars() {
        for unit in c.encode_utf16(&mut units) {
            write!(out, "\\u{unit:04x}").unwrap();
        }
    }
    out.push('"');
    out
}

/// `envelope` as JSON text, the member `spelled` (if any) written with [`escaped`] and the
/// member `repeated` (if any) written twice, the first time with `first`.
fn write_envelope(envelope: &Map<String, Value>, spelled: Option<&str>, repeated: Option<(&str, &Value)>) -> Vec<u8> {
    let mut out = String::from("{");
    if let Some((name, first)) = repeated {
        write!(out, "{}:{},", serde_json::to_string(name).unwrap(), first).unwrap();
    }
    for (i, (name, value)) in envelope.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let value = match value.as_str() {
            Some(text) if spelled == Some(name.as_str()) => escaped(text),
            _ => value.to_string(),
        };
        write!(out, "{}:{value}", serde_json::to_string(name).unwrap()).unwrap();
    }
    out.push('}');
    out.into_bytes()
}

/// Values a signed member might be swapped for.
const SWAPS: &[&str] = &[
    "Notification",
    "SubscriptionConfirmation",
    "UnsubscribeConfirmation",
    "",
    " ",
    "arn:aws:sns:us-west-2:123456789012:other",
    "arn:aws:sns:us-west-2:123456789012:sms-voice-events ",
    "2023-06-17T04:11:43.637Z",
    TIMESTAMP,
    "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
    "Delivery",
    "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription",
];

/// A signed envelope (a fixture, one of the pool, or one signed for this case) with a signed
/// member changed, or only unsigned ones (a control).
fn member_case(rng: &mut fastrand::Rng) -> MemberCase {
    let (base, source) = match rng.u8(..8) {
        0..=2 => {
            let i = rng.usize(..FIXTURES.len());
            (FIXTURES[i].to_vec(), format!("fixture {i}"))
        }
        3..=5 => (SIGNED_POOL[rng.usize(..SIGNED_POOL.len())].clone(), "pool".to_owned()),
        _ => (random_fields(rng, true).envelope(&SIGNER).into_bytes(), "fresh".to_owned()),
    };
    let Ok(Value::Object(mut envelope)) = serde_json::from_slice::<Value>(&base) else { unreachable!("{source}") };
    let original = envelope.clone();
    let string =
        |envelope: &Map<String, Value>, name: &str| envelope.get(name).and_then(Value::as_str).map(str::to_owned);
    let kind = string(&envelope, "Type").unwrap();
    let message_id = string(&envelope, "MessageId").unwrap();
    let signed = signed_members(&kind);
    let name = signed[rng.usize(..signed.len())];
    let before = string(&envelope, name);
    let (how, change, body) = match rng.u8(..16) {
        // The value edited byte by byte (a new Subject where there was none).
        0..=5 => {
            let mut value = before.clone().unwrap_or_default().into_bytes();
            let other = string(&envelope, signed[rng.usize(..signed.len())]).unwrap_or_default();
            let limit = max_len(rng, 64 * 1024);
            mutate(rng, &mut value, other.as_bytes(), limit);
            let mut value = text(&value);
            if Some(&value) == before.as_ref() {
                value.push(['\n', ' ', 'x', '\u{e9}'][rng.usize(..4)]);
            }
            envelope.insert(name.to_owned(), value.into());
            ("edited", Change::Signed, write_envelope(&envelope, None, None))
        }
        // Swapped for another plausible value, or for the same one with a newline or a space.
        6 | 7 => {
            let mut value = match rng.u8(..3) {
                0 => format!("{}\n", before.clone().unwrap_or_default()),
                1 => format!(" {}", before.clone().unwrap_or_default()),
                _ => SWAPS[rng.usize(..SWAPS.len())].to_owned(),
            };
            if Some(&value) == before.as_ref() {
                value.push('\n');
            }
            envelope.insert(name.to_owned(), value.into());
            ("swapped", Change::Signed, write_envelope(&envelope, None, None))
        }
        // Removed (only when there: a notification without a Subject has nothing to remove).
        8 if before.is_some() => {
            envelope.remove(name);
            ("removed", Change::Signed, write_envelope(&envelope, None, None))
        }
        // A value that is not a string: read as absent.
        9 if before.is_some() => {
            let value = [Value::Null, 0.into(), true.into(), Value::Array(vec![before.clone().unwrap().into()])]
                [rng.usize(..4)]
            .clone();
            envelope.insert(name.to_owned(), value);
            ("retyped", Change::Signed, write_envelope(&envelope, None, None))
        }
        10 => ("repeated", Change::Repeated, repeated(rng, &envelope, name, before.as_deref())),
        // The one change of two signed members that keeps the string to sign (see `Shifted`).
        15 if kind == "Notification" && envelope.contains_key("Subject") => {
            let subject = envelope.remove("Subject").unwrap();
            let shifted = format!("{message_id}\nSubject\n{}", subject.as_str().unwrap_or_default());
            envelope.insert("MessageId".to_owned(), shifted.into());
            ("shifted", Change::Shifted, write_envelope(&envelope, None, None))
        }
        // Controls: the same members spelled with escapes, printed another way, or with only
        // unsigned members changed.
        11 => ("spelled", Change::Unsigned, write_envelope(&envelope, Some(name), None)),
        12 => {
            let pretty = rng.bool();
            let body = if pretty {
                serde_json::to_vec_pretty(&envelope).unwrap()
            } else {
                let mut reversed = Map::new();
                for (k, v) in envelope.iter().rev() {
                    reversed.insert(k.clone(), v.clone());
                }
                write_envelope(&reversed, None, None)
            };
            ("reprinted", Change::Unsigned, body)
        }
        _ => {
            change_unsigned(rng, &mut envelope, &kind, before.as_deref());
            ("unsigned", Change::Unsigned, write_envelope(&envelope, None, None))
        }
    };
    let how = format!("{how} {name} of {source}");
    let refusal = refused_before_signature(&envelope, &[TOPIC]);
    let reaches_signature = refusal.is_none() && change != Change::Repeated;
    let expect = match change {
        Change::Repeated => Expect::NotAccepted,
        // Only a control may leave the members as they were.
        _ if envelope == original => Expect::Accepted,
        Change::Shifted => {
            assert_eq!(refusal, Some(MALFORMED), "a shifted Subject must read more than one way: {envelope:?}");
            Expect::Refused(MALFORMED)
        }
        Change::Signed => Expect::Refused(refusal.unwrap_or(INVALID)),
        Change::Unsigned => refusal.map_or(Expect::Accepted, Expect::Refused),
    };
    MemberCase { how, base, body, kind, message_id, raw_delivery: rng.u8(..16) == 0, expect, reaches_signature }
}

/// `envelope` with its member `name` repeated, with another value or the same one, first or
/// last.
fn repeated(rng: &mut fastrand::Rng, envelope: &Map<String, Value>, name: &str, before: Option<&str>) -> Vec<u8> {
    let value = before.unwrap_or_default();
    let first: Value = if rng.bool() { value.into() } else { format!("{value}x").into() };
    if rng.bool() {
        write_envelope(envelope, None, Some((name, &first)))
    } else {
        let mut body = write_envelope(envelope, None, None);
        body.pop();
        body.extend_from_slice(format!(",{}:{first}}}", serde_json::to_string(name).unwrap()).as_bytes());
        body
    }
}

/// Changes, adds or removes one member the signature does not cover: `UnsubscribeURL`,
/// `SigningCertURL` (to another of AWS's for the topic's region, T286), an unknown member, a
/// confirmation's `Subject`.
fn change_unsigned(rng: &mut fastrand::Rng, envelope: &mut Map<String, Value>, kind: &str, before: Option<&str>) {
    let unsigned = ["UnsubscribeURL", "SigningCertURL", "Extra", "Subject"];
    let member = unsigned[rng.usize(..unsigned.len())];
    // A confirmation's Subject is not signed; a notification's is.
    let member = if member == "Subject" && kind == "Notification" { "Extra" } else { member };
    if member != "SigningCertURL" && rng.u8(..3) == 0 {
        envelope.remove(member);
        return;
    }
    let value = if member == "SigningCertURL" {
        let urls = [
            "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-other.pem",
            "https://sns.us-west-2.amazonaws.com.cn/x.pem",
            "https://sns.us-west-2.amazonaws.com/a/%C3%A9//b.pem",
            CERTIFICATE_URL,
        ];
        urls[rng.usize(..urls.len())].to_owned()
    } else {
        let mut value = before.unwrap_or_default().as_bytes().to_vec();
        mutate(rng, &mut value, b"https://attacker.example/", 4096);
        text(&value)
    };
    envelope.insert(member.to_owned(), value.into());
}

/// What a change refused by the signature check itself may allocate. More than [`UNVERIFIED`]:
/// the AWS verifier copies a `Message` with an escape unescaped (serde's growing scratch, then
/// the string), then into the string to sign (grown by doubling), about 6 bytes per byte of an
/// envelope that is mostly `Message`.
const AT_SIGNATURE: Budget = Budget::new(8, 256 * 1024);

/// Whether `result` is a refusal as not authentic.
fn not_authentic(result: &Result<SmsEvent, WebhookError>) -> bool {
    result.as_ref().is_err_and(WebhookError::is_authentication)
}

/// Fuzzes the signed members: changing, adding, removing or retyping any of them (`Message`,
/// `MessageId`, `Timestamp`, `TopicArn`, `Type`, a notification's `Subject`, a confirmation's
/// `Token` and `SubscribeURL`) is refused as not authentic, with the refusal of the first rule
/// it breaks (a missing member, a topic not pinned, a member that reads more than one way, else
/// the signature); repeating one is never accepted; escapes, printing, and the unsigned members
/// (`UnsubscribeURL`, `SigningCertURL` among the region's, unknown members) change nothing, nor
/// does a confirmation's `Subject` unless it holds a newline. With `x-amz-sns-rawdelivery: true`
/// everything is refused. The one change of two members that keeps what SNS signs (a
/// `MessageId` that swallows `\nSubject\n…`, [`Change::Shifted`]) is refused as malformed.
pub(crate) fn fuzz_signed_members(name: &'static str, ci: u64) {
    let verifier = verifier();
    let fuzz = Fuzz::new(name, ci);
    let now = super::webhooks::now();
    fuzz.run(
        GLOBAL,
        // The envelope before the change is verified here, outside what is measured: a change
        // refused before the signature must cost little on its own.
        |rng| {
            let case = member_case(rng);
            let base = request("https://example.com/sns", &case.kind, case.base.clone());
            let base = verifier.verify_at(&base.as_request(), now);
            // Its `raw` is read when it is compared (and kept in the event): read it now.
            let _ = base.as_ref().map(SmsEvent::raw);
            (case, base)
        },
        |(case, _)| case.body.len(),
        |(case, _)| {
            let mut request = request("https://example.com/sns", &case.kind, case.body.clone());
            if case.raw_delivery {
                request = request.header("x-amz-sns-rawdelivery", "true");
            }
            verifier.verify_at(&request.as_request(), now)
        },
        |(case, base), result| {
            if not_authentic(base) {
                return Err(format!("the signed envelope was refused before any change: {base:?}"));
            }
            if let Err(error) = result
                && (error.provider() != "aws" || error.code() == "key_unavailable")
            {
                return Err(format!("an unexpected error: {error:?}"));
            }
            if case.raw_delivery {
                return if matches!(result, Err(WebhookError::MissingSignature { provider: "aws" })) {
                    Ok(UNVERIFIED)
                } else {
                    Err(format!("a raw delivery was not refused: {result:?}"))
                };
            }
            match &case.expect {
                Expect::Refused(expected) if result.as_ref().err() == Some(expected) => {
                    Ok(if case.reaches_signature { AT_SIGNATURE } else { UNVERIFIED })
                }
                Expect::Refused(expected) => Err(format!("a change was not refused as {expected:?}: {result:?}")),
                Expect::NotAccepted if result.is_err() => Ok(UNVERIFIED),
                Expect::NotAccepted => Err(format!("a repeated member was accepted: {result:?}")),
                // The same answer as before the change: the same event, or the same payload error
                // (a random message may repeat a member the normalizer reads).
                Expect::Accepted => match (base, result) {
                    (Ok(before), Ok(event))
                        if event.dedupe_key == format!("aws:sns:{}", case.message_id)
                            && event.kind == before.kind
                            && event.raw() == before.raw() =>
                    {
                        Ok(AUTHENTIC)
                    }
                    (Err(before), Err(error)) if before == error => Ok(AUTHENTIC),
                    _ => Err(format!("an unsigned change changed the answer: {base:?} became {result:?}")),
                },
            }
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Signed random messages

/// A notification of a random message, signed, and how it must be refused before its
/// signature is checked, if it must.
struct MessageCase {
    fields: Fields,
    body: Vec<u8>,
    refusal: Option<WebhookError>,
}

impl std::fmt::Debug for MessageCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageCase")
            .field("fields", &self.fields)
            .field("refusal", &self.refusal)
            .finish_non_exhaustive()
    }
}

/// The members of a JSON object at its top level, in order and with repeats; `None` when
/// `text` is not one JSON object.
fn top_level_members(text: &str) -> Option<Vec<(String, Value)>> {
    struct Members;
    impl<'de> serde::de::Visitor<'de> for Members {
        type Value = Vec<(String, Value)>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut members = Vec::new();
            while let Some(member) = map.next_entry::<String, Value>()? {
                members.push(member);
            }
            Ok(members)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let members = serde::de::Deserializer::deserialize_map(&mut deserializer, Members).ok()?;
    deserializer.end().ok()?;
    Some(members)
}

/// What the normalizer must make of `message` (T288, T291), checked against `result`.
fn check_message(fields: &Fields, result: &Result<SmsEvent, WebhookError>) -> Result<(), String> {
    let event = match result {
        Ok(event) => event,
        Err(WebhookError::Payload { .. }) => return check_payload_error(&fields.message),
        Err(error) => return Err(format!("a signed notification was refused: {error:?}")),
    };
    if event.provider != "aws" || event.dedupe_key != format!("aws:sns:{}", fields.message_id) {
        return Err(format!("the event's provider or dedupe key is wrong: {event:?}"));
    }
    let unrecognized = |what: &str| {
        if let EventKind::Unrecognized { provider_event_type } = &event.kind
            && provider_event_type == what
        {
            Ok(())
        } else {
            Err(format!("{what} should be unrecognized, not {:?}", event.kind))
        }
    };
    let members = match serde_json::from_str::<Value>(&fields.message) {
        // Not JSON here (a number out of range in a member it skips may be JSON to the
        // normalizer): no expectation.
        Err(_) => return Ok(()),
        Ok(Value::Object(_)) => top_level_members(&fields.message).unwrap(),
        Ok(_) => return unrecognized("sns:Notification"),
    };
    if let Some(repeated) = repeated_read_key(&members) {
        return Err(format!("a message that repeats {repeated} was accepted"));
    }
    if context_repeats_reference(&fields.message) {
        return Err("a message whose context repeats sms_sdk_ref was accepted".to_owned());
    }
    let text =
        |name: &str| members.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.as_str()).filter(|v| !v.is_empty());
    if let Some(event_type) = text("eventType") {
        let id = text("messageId").ok_or("an event without messageId was accepted")?;
        let Some(&(_, state, failure)) = EVENT_TYPES.iter().find(|(t, _, _)| *t == event_type) else {
            return unrecognized(event_type);
        };
        let (EventKind::Queued(update)
        | EventKind::Sent(update)
        | EventKind::Delivered(update)
        | EventKind::Undelivered(update)
        | EventKind::Filtered(update)) = &event.kind
        else {
            return Err(format!("{event_type} is not a status: {:?}", event.kind));
        };
        let error_code = text("messageStatus").filter(|_| failure);
        let expected =
            (state, id, event_type, error_code, text("originationPhoneNumber"), text("destinationPhoneNumber"));
        let found = (
            event.type_name(),
            update.provider_id.as_str(),
            update.provider_status.as_str(),
            update.error_code.as_deref(),
            update.from.as_deref(),
            update.to.as_deref(),
        );
        return if expected == found { Ok(()) } else { Err(format!("expected {expected:?}, found {found:?}")) };
    }
    if let Some(id) = text("inboundMessageId") {
        let (Some(from), Some(to)) = (text("originationNumber"), text("destinationNumber")) else {
            return Err("an inbound message without its numbers was accepted".to_owned());
        };
        let body = members.iter().find(|(k, _)| k == "messageBody").and_then(|(_, v)| v.as_str()).unwrap_or("");
        let found = if let EventKind::Received(inbound) = &event.kind {
            (&inbound.provider_id, &inbound.from, &inbound.to, &inbound.body)
        } else if let EventKind::OptedOut(keyword) | EventKind::OptedIn(keyword) | EventKind::Help(keyword) =
            &event.kind
        {
            (&keyword.provider_id, &keyword.from, &keyword.to, &keyword.body)
        } else {
            return Err(format!("an inbound message became {:?}", event.kind));
        };
        let found = (found.0.as_str(), found.1.as_str(), found.2.as_str(), found.3.as_str());
        return if found == (id, from, to, body) {
            Ok(())
        } else {
            Err(format!("inbound {found:?}, expected {:?}", (id, from, to, body)))
        };
    }
    unrecognized("sns:Notification")
}

/// A read member that `members` has more than once.
fn repeated_read_key(members: &[(String, Value)]) -> Option<&str> {
    members.iter().enumerate().find_map(|(i, (name, _))| {
        (READ_KEYS.contains(&name.as_str()) && members[..i].iter().any(|(k, _)| k == name)).then_some(name.as_str())
    })
}

/// A payload error is right only for a message that is a JSON object with a read member
/// repeated (its own or `context.sms_sdk_ref`), an event without `messageId`, or an inbound
/// message without its numbers.
fn check_payload_error(message: &str) -> Result<(), String> {
    let Some(members) = top_level_members(message) else {
        // Not one JSON object to serde_json: a repeat may come before the text stops being JSON.
        return Ok(());
    };
    let text = |name: &str| {
        members.iter().rev().find(|(k, _)| k == name).and_then(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    };
    let repeated = repeated_read_key(&members).is_some() || context_repeats_reference(message);
    let event_without_id = text("eventType").is_some() && text("messageId").is_none();
    let inbound_without_numbers = text("eventType").is_none()
        && text("inboundMessageId").is_some()
        && (text("originationNumber").is_none() || text("destinationNumber").is_none());
    if repeated || event_without_id || inbound_without_numbers {
        Ok(())
    } else {
        Err(format!("a payload error for a message that has what it needs: {message:?}"))
    }
}

/// Whether the message's `context` object repeats `sms_sdk_ref` (any `context`, when the
/// message repeats `context` itself).
fn context_repeats_reference(message: &str) -> bool {
    struct Contexts;
    impl<'de> serde::de::Visitor<'de> for Contexts {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut repeats = false;
            while let Some(name) = map.next_key::<String>()? {
                if name == "context" {
                    let raw: Box<serde_json::value::RawValue> = map.next_value()?;
                    let references = top_level_members(raw.get())
                        .map_or(0, |members| members.iter().filter(|(k, _)| k == "sms_sdk_ref").count());
                    repeats |= references > 1;
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(repeats)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(message);
    serde::de::Deserializer::deserialize_map(&mut deserializer, Contexts).unwrap_or(false)
}

/// Fuzzes the normalizer behind a valid signature: a notification of a random message (End
/// User Messaging-shaped JSON, a fixture's message mutated, random bytes), signed, verifies and
/// normalizes as T288 and T291 say (the state of its event type, `messageStatus` as the error
/// code of a failure only, the two-way members, unrecognized for anything else), or is a payload
/// error, and only when the message repeats a member read or lacks what its kind needs. One
/// notification in four has members as they come (a mutated id, timestamp or subject): signed
/// all the same, it is refused as malformed, before its signature is checked, exactly when
/// they read more than one way (T285).
pub(crate) fn fuzz_signed_messages(name: &'static str, ci: u64) {
    let verifier = verifier();
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        |rng| {
            let valid = rng.u8(..4) != 0;
            let mut fields = random_fields(rng, valid);
            fields.kind = "Notification";
            (fields.token, fields.subscribe_url) = (None, None);
            let body = fields.envelope(&SIGNER).into_bytes();
            let Ok(Value::Object(envelope)) = serde_json::from_slice::<Value>(&body) else { unreachable!() };
            let refusal = refused_before_signature(&envelope, &[TOPIC]);
            MessageCase { fields, body, refusal }
        },
        |case| case.body.len(),
        |case| {
            verifier.verify_at(
                &request("https://example.com/sns", "Notification", case.body.clone()).as_request(),
                super::webhooks::now(),
            )
        },
        |case, result| match &case.refusal {
            Some(refusal) if result.as_ref().err() == Some(refusal) => Ok(UNVERIFIED),
            Some(refusal) => Err(format!("a notification that breaks T285 was not refused as {refusal:?}: {result:?}")),
            None => check_message(&case.fields, result).map(|()| AUTHENTIC),
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Certificates

/// The DER of the first `CERTIFICATE` block of `pem`, read as the library reads it.
fn certificate_der(pem: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(pem).ok()?;
    let (_, rest) = text.split_once("-----BEGIN CERTIFICATE-----")?;
    let (body, _) = rest.split_once("-----END CERTIFICATE-----")?;
    let compact: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(compact).ok()
}

/// `der` as a PEM certificate, in lines of 64 (or `width`) characters.
fn pem(der: &[u8], width: usize, newline: &str) -> Vec<u8> {
    let encoded = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = format!("-----BEGIN CERTIFICATE-----{newline}");
    for line in encoded.as_bytes().chunks(width.max(1)) {
        pem.push_str(std::str::from_utf8(line).unwrap());
        pem.push_str(newline);
    }
    pem.push_str("-----END CERTIFICATE-----");
    pem.push_str(newline);
    pem.into_bytes()
}

/// The test key's `RSAPublicKey` DER: what a certificate must hold for the test envelopes to
/// verify with it.
static TEST_PUBLIC_KEY: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let text = AWS_SNS_TEST_KEY;
    let (_, rest) = text.split_once("-----BEGIN PRIVATE KEY-----").unwrap();
    let (body, _) = rest.split_once("-----END PRIVATE KEY-----").unwrap();
    let compact: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(compact).unwrap();
    let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).unwrap();
    ring::signature::KeyPair::public_key(&pair).as_ref().to_vec()
});

/// Envelopes signed with the test key, one per signature version: what a certificate built
/// into a verifier is tried on.
static SIGNED: LazyLock<[Vec<u8>; 2]> = LazyLock::new(|| {
    let mut rng = fastrand::Rng::with_seed(290);
    let mut fields = random_fields(&mut rng, true);
    (fields.kind, fields.token, fields.subscribe_url) = ("Notification", None, None);
    fields.message = fixture_message(1);
    [FIXTURES[0].to_vec(), fields.envelope(&SIGNER).into_bytes()]
});

/// A certificate for the builder: a real one, its PEM text mutated, its DER mutated (lengths and
/// tags included) and encoded again, or PEM put together oddly.
fn certificate_case(rng: &mut fastrand::Rng) -> (&'static str, Vec<u8>) {
    let base = [AWS_SNS_TEST_CERTIFICATE, OTHER_CERTIFICATE][rng.usize(..2)];
    let der = certificate_der(base.as_bytes()).unwrap();
    match rng.u8(..16) {
        0 => ("unchanged", base.as_bytes().to_vec()),
        1..=4 => {
            let mut pem = base.as_bytes().to_vec();
            let limit = max_len(rng, 256 * 1024);
            mutate(rng, &mut pem, OTHER_KEY.as_bytes(), limit);
            ("pem", pem)
        }
        5..=11 => {
            let mut der = der;
            if rng.bool() {
                // One byte set to what DER parsing trips on: long-form lengths, an empty or
                // indefinite length, another tag.
                let at = rng.usize(..der.len());
                der[at] = [0x00, 0x01, 0x7f, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0xff, 0x30, 0x03, 0x02, 0xa0]
                    [rng.usize(..14)];
            } else {
                let other = certificate_der(OTHER_CERTIFICATE.as_bytes()).unwrap();
                let limit = max_len(rng, 64 * 1024);
                mutate(rng, &mut der, &other, limit);
            }
            ("der", pem(&der, [64, 76, 1, 10_000][rng.usize(..4)], ["\n", "\r\n", " ", ""][rng.usize(..4)]))
        }
        12 => {
            // Truncated at any point.
            let cut = rng.usize(..der.len());
            ("truncated", pem(&der[..cut], 64, "\n"))
        }
        13 => {
            let parts: [&[u8]; 6] = [
                OTHER_KEY.as_bytes(),
                AWS_SNS_TEST_CERTIFICATE.as_bytes(),
                OTHER_CERTIFICATE.as_bytes(),
                b"-----BEGIN CERTIFICATE-----\n",
                b"-----END CERTIFICATE-----\n",
                b"-----BEGIN X509 CERTIFICATE-----\n",
            ];
            let pem: Vec<u8> = (0..rng.usize(1..=4)).flat_map(|_| parts[rng.usize(..parts.len())].to_vec()).collect();
            ("assembled", pem)
        }
        _ => {
            let mut bytes = Vec::new();
            mutate(rng, &mut bytes, base.as_bytes(), 4096);
            ("random", bytes)
        }
    }
}

/// What building a verifier with a certificate gave, and what it answered the signed envelopes.
#[derive(Debug)]
struct Built {
    built: Result<(), sms_sdk::Error>,
    verified: Vec<Result<SmsEvent, WebhookError>>,
}

/// Fuzzes the certificate given to `AwsWebhook::builder(..).certificate_pem(..)`: any bytes
/// build a verifier or are a `Configuration` error, never a panic; a verifier built from a
/// broken certificate refuses the test key's envelopes as not authentic, unless its certificate
/// still holds the test key exactly.
pub(crate) fn fuzz_certificates(name: &'static str, ci: u64) {
    let fuzz = Fuzz::new(name, ci);
    LazyLock::force(&SIGNED);
    LazyLock::force(&TEST_PUBLIC_KEY);
    fuzz.run(
        GLOBAL,
        certificate_case,
        |(_, pem)| pem.len(),
        |(_, pem)| match AwsWebhook::builder(TOPIC).certificate_pem(pem.clone()).build() {
            Err(error) => Built { built: Err(error), verified: Vec::new() },
            Ok(verifier) => {
                let verified = SIGNED
                    .iter()
                    .map(|body| {
                        let request = request("https://example.com/sns", "Notification", body.clone());
                        verifier.verify_at(&request.as_request(), super::webhooks::now())
                    })
                    .collect();
                Built { built: Ok(()), verified }
            }
        },
        |(how, pem), built| {
            if let Err(error) = &built.built {
                if error.kind() != ErrorKind::Configuration {
                    return Err(format!("not a configuration error: {error:?}"));
                }
                if *how == "unchanged" {
                    return Err(format!("a real certificate was refused: {error:?}"));
                }
                return Ok(AUTHENTIC);
            }
            let holds_test_key = certificate_der(pem).is_some_and(|der| {
                der.windows(TEST_PUBLIC_KEY.len()).any(|window| window == TEST_PUBLIC_KEY.as_slice())
            });
            for result in &built.verified {
                match result {
                    Ok(_) if holds_test_key => {}
                    Ok(event) => return Err(format!("verified with a certificate without the key: {event:?}")),
                    Err(error) if error.is_authentication() => {
                        if *how == "unchanged" && pem.as_slice() == AWS_SNS_TEST_CERTIFICATE.as_bytes() {
                            return Err(format!("the test certificate refused its own envelope: {error:?}"));
                        }
                    }
                    Err(error) => return Err(format!("an unexpected error: {error:?}")),
                }
            }
            Ok(AUTHENTIC)
        },
    );
}

// ---------------------------------------------------------------------------------------------
// Certificate and subscription URLs

/// The topics the URL target's verifiers pin, and whether their region is one an SNS host can
/// spell (T286: lowercase letters, digits and `-`, at least three, not `xn--`): the fixtures'
/// (us-west-2), one in each other partition, another region, and two whose region no canonical
/// host of AWS's holds, so that no certificate URL is theirs.
const URL_TOPICS: &[(&str, bool)] = &[
    (TOPIC, true),
    ("arn:aws-cn:sns:cn-north-1:123456789012:sms-voice-events", true),
    ("arn:aws-us-gov:sns:us-gov-west-1:123456789012:sms-voice-events", true),
    ("arn:aws:sns:eu-west-2:123456789012:sms-voice-events", true),
    ("arn:aws:sns:US-WEST-2:123456789012:sms-voice-events", false),
    ("arn:aws:sns:us-west-2.amazonaws.com.evil:123456789012:sms-voice-events", false),
];

// The pieces of a URL, each with whether it keeps a URL made of such pieces one that
// `is_certificate_url` accepts: `https`, no user info or port, host `sns.{region}.amazonaws.com`
// (or `.com.cn`), a path ending in `.pem`, no query or fragment, and the whole spelled as the URL
// parser writes it back (so `HTTPS`, `:443`, an empty user info, `SNS.` and `/x/../` are not).
const SCHEMES: &[(&str, bool)] = &[
    ("https", true),
    ("HTTPS", false),
    ("hTtPs", false),
    ("http", false),
    ("", false),
    ("ftp", false),
    ("wss", false),
];
const SEPARATORS: &[(&str, bool)] =
    &[("://", true), (":/", false), (":\\\\", false), (":///", false), (":", false), ("//", false), (":// ", false)];
const USERINFO: &[(&str, bool)] = &[
    ("", true),
    ("user@", false),
    ("user:pw@", false),
    (":@", false),
    ("@", false),
    ("sns.us-east-1.amazonaws.com@", false),
    ("a%40b@", false),
];
/// Regions besides the topic's (which [`url_case`] names half the time).
const REGIONS: &[(&str, bool)] = &[
    ("us-east-1", true),
    ("us-west-2", true),
    ("eu-west-2", true),
    ("cn-north-1", true),
    ("us-gov-west-1", true),
    ("abc", true),
    ("---", true),
    ("1-2", true),
    ("x--n", true),
    ("xnx-1", true),
    ("s3-us-west-2", true),
    ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true),
    ("US-EAST-1", false),
    ("Us-West-2", false),
    ("us", false),
    ("u-", false),
    ("", false),
    ("us_east_1", false),
    ("us.east.1", false),
    ("us-west-2.amazonaws.com.evil", false),
    ("us-w\u{0435}st-2", false),
    ("xn--us-wst-2-c7a", false),
    ("xn--us-est-1-46g", false),
    ("XN--us-est-1-46g", false),
    ("us%2Deast-1", false),
    ("us-west-2.", false),
];
const HOST_PREFIXES: &[(&str, bool)] = &[
    ("sns.", true),
    ("SNS.", false),
    ("sns", false),
    ("x.sns.", false),
    ("sqs.", false),
    ("sns\u{3002}", false),
    ("", false),
];
const DOMAINS: &[(&str, bool)] = &[
    (".amazonaws.com", true),
    (".amazonaws.com.cn", true),
    (".AMAZONAWS.COM", false),
    (".amazonaws%2Ecom", false),
    (".amazonaws.com.", false),
    (".amazonaws.co", false),
    (".amazonaws.cn", false),
    (".amazonaws.com.evil.example", false),
    (".amazonaws.com\u{3002}cn", false),
    ("", false),
];
const PORTS: &[(&str, bool)] =
    &[("", true), (":443", false), (":8443", false), (":", false), (":0", false), (":99999", false), (":80", false)];
const PATHS: &[(&str, bool)] = &[
    ("/SimpleNotificationService-0000000000000000000000.pem", true),
    ("/a.pem", true),
    ("/.pem", true),
    ("//a.pem", true),
    ("/x/y/a.pem.pem", true),
    ("/%C3%A9.pem", true),
    ("/a%20b.pem", true),
    ("/a%7e~|'.pem", true),
    ("/x/../a.pem", false),
    ("/%2e/a.pem", false),
    ("/a%2Epem", false),
    ("/a.PEM", false),
    ("/a.pem/", false),
    ("/a.pem%00", false),
    ("\\a.pem", false),
    ("/a b.pem", false),
    ("/\u{e9}.pem", false),
    ("/", false),
    ("", false),
    ("/a.pem;x", false),
];
const QUERIES: &[(&str, bool)] = &[
    ("", true),
    ("?", false),
    ("?x=1", false),
    ("?.pem", false),
    ("?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:sms-voice-events&Token=2336412f", false),
];
const FRAGMENTS: &[(&str, bool)] = &[("", true), ("#", false), ("#.pem", false), ("#f", false)];

/// A URL put together from pieces (its region the topic's half the time), and whether every
/// piece was one the rule accepts (then `is_certificate_url` must accept it).
fn url_case(rng: &mut fastrand::Rng, topic: (&str, bool)) -> (String, bool) {
    let mut good = true;
    let mut url = String::new();
    let own_region = [(region_of(topic.0), topic.1)];
    let regions: &[(&str, bool)] = if rng.bool() { &own_region } else { REGIONS };
    let tables: [&[(&str, bool)]; 10] =
        [SCHEMES, SEPARATORS, USERINFO, HOST_PREFIXES, regions, DOMAINS, PORTS, PATHS, QUERIES, FRAGMENTS];
    for table in tables {
        // Mostly the first (good) pieces, so that accepted URLs are common.
        let (piece, ok) = if rng.u8(..4) != 0 { table[0] } else { table[rng.usize(..table.len())] };
        url.push_str(piece);
        good &= ok;
    }
    if rng.u8(..3) == 0 {
        let mut bytes = url.into_bytes();
        let limit = max_len(rng, 64 * 1024);
        mutate(rng, &mut bytes, certificate_url(topic.0).as_bytes(), limit);
        url = text(&bytes);
        good = false;
    }
    if rng.u8(..16) == 0 {
        // Whitespace and controls the URL parser removes or keeps.
        let at = rng.usize(..=url.len());
        let at = (0..=at).rev().find(|&i| url.is_char_boundary(i)).unwrap_or(0);
        url.insert_str(at, [" ", "\t", "\n", "\r", "\0", "\u{a0}", "\u{200b}"][rng.usize(..7)]);
        good = false;
    }
    (url, good)
}

/// Whether `url` follows the rule of T286 (AWS's validators' rule, spelled canonically), read
/// with the `url` crate: written back by the parser as it is given, `https`, no user info, no
/// port, host `sns.{region}.amazonaws.com(.cn)` with a region of at least three lowercase
/// letters, digits or `-` that does not start with `xn--`, and (for a certificate) a path
/// ending in `.pem` with no query; never a fragment.
#[allow(clippy::case_sensitive_file_extension_comparisons)] // the rule is: `.pem`, as AWS names them
fn follows_rule(url: &str, certificate: bool) -> Result<(), String> {
    if url.len() > 2048 || !url.is_ascii() {
        return Err("longer than 2 KiB, or not ASCII".to_owned());
    }
    let parsed = url::Url::parse(url).map_err(|error| format!("not a URL: {error}"))?;
    if parsed.as_str() != url {
        return Err(format!("not spelled canonically: {parsed}"));
    }
    let host = parsed.host_str().ok_or("no host")?;
    let region = host
        .strip_prefix("sns.")
        .and_then(|rest| rest.strip_suffix(".amazonaws.com").or_else(|| rest.strip_suffix(".amazonaws.com.cn")))
        .ok_or_else(|| format!("host {host} is not sns.<region>.amazonaws.com(.cn)"))?;
    let region_ok = region.len() >= 3
        && !region.starts_with("xn--")
        && region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let checks = [
        (parsed.scheme() == "https", "not https"),
        (parsed.username().is_empty() && parsed.password().is_none(), "user info"),
        (parsed.port().is_none(), "a port"),
        (region_ok, "not a region"),
        (!certificate || parsed.path().ends_with(".pem"), "not a .pem path"),
        (!certificate || parsed.query().is_none(), "a query"),
        (parsed.fragment().is_none(), "a fragment"),
    ];
    match checks.iter().find(|(ok, _)| !ok) {
        Some((_, why)) => Err(format!("{why}: {parsed}")),
        None => Ok(()),
    }
}

/// T286: whether `url` follows the rule (for a certificate or a subscription) and its host is
/// the SNS endpoint of `topic_arn`'s own region: `sns.{region}.amazonaws.com` or `….com.cn`,
/// the region being the ARN's fourth field.
fn of_topic_region(url: &str, topic_arn: &str, certificate: bool) -> bool {
    let region = region_of(topic_arn);
    let own = [format!("sns.{region}.amazonaws.com"), format!("sns.{region}.amazonaws.com.cn")];
    follows_rule(url, certificate).is_ok()
        && url::Url::parse(url).is_ok_and(|parsed| parsed.host_str().is_some_and(|host| own.iter().any(|o| o == host)))
}

/// One notification per URL topic, signed, as members: its `SigningCertURL` is not signed, so
/// any URL can be put in it.
static CERTIFICATE_URL_BASES: LazyLock<Vec<Map<String, Value>>> = LazyLock::new(|| {
    let mut rng = fastrand::Rng::with_seed(286);
    URL_TOPICS
        .iter()
        .map(|&(topic_arn, _)| {
            let mut fields = random_fields(&mut rng, true);
            (fields.kind, fields.topic_arn, fields.token, fields.subscribe_url) =
                ("Notification", topic_arn, None, None);
            fields.message = fixture_message(1);
            let Ok(Value::Object(envelope)) = serde_json::from_str::<Value>(&fields.envelope(&SIGNER)) else {
                unreachable!()
            };
            envelope
        })
        .collect()
});

/// A certificate source that hands out the test certificate and keeps the URLs it was asked
/// for.
#[derive(Default)]
struct Recording(Mutex<Vec<String>>);

impl sms_sdk::provider::aws::CertificateSource for Recording {
    fn certificate<'a>(&'a self, url: &'a str) -> sms_sdk::BoxFuture<'a, Result<Vec<u8>, sms_sdk::BoxError>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(url.to_owned());
        Box::pin(std::future::ready(Ok(AWS_SNS_TEST_CERTIFICATE.as_bytes().to_vec())))
    }
}

/// One URL and what was done with it.
#[derive(Debug)]
struct UrlCase {
    url: String,
    good: bool,
    /// The topic of the envelope and the confirmation.
    topic: (&'static str, bool),
    /// The topic's pre-signed notification naming `url` as its certificate URL (one case in
    /// three), its `MessageId`, and whether it goes to a verifier that fetches certificates
    /// (half of them) rather than to one with an injected certificate.
    envelope: Option<(String, String, bool)>,
    /// A confirmation from the topic with `url` as its `SubscribeURL`, signed for it (one case
    /// in sixteen, for the topics whose certificate URL can be spelled).
    confirmation: Option<String>,
}

/// What the URL functions and the verifiers answered.
#[derive(Debug)]
struct UrlAnswer {
    accepted: bool,
    verified: Option<Result<SmsEvent, WebhookError>>,
    fetched: Option<Fetched>,
    confirmed: Option<Result<Option<String>, WebhookError>>,
}

/// What a verifier that fetches certificates did with a notification.
#[derive(Debug)]
struct Fetched {
    /// What `prepare` answered.
    prepared: Result<(), WebhookError>,
    /// The URLs it fetched.
    urls: Vec<String>,
    /// What `verify` answered then.
    verified: Result<SmsEvent, WebhookError>,
}

/// Checks what the URL functions and the verifiers answered `case` against the rule
/// ([`fuzz_certificate_urls`]).
fn check_url_case(case: &UrlCase, answer: &UrlAnswer) -> Result<Budget, String> {
    let rule = follows_rule(&case.url, true);
    if answer.accepted != rule.is_ok() {
        return Err(format!("is_certificate_url says {} of a URL that is {rule:?}", answer.accepted));
    }
    if case.good && !answer.accepted {
        return Err("refused a URL made of good pieces".to_owned());
    }
    // No URL at all is a missing signature; one that is not AWS's of the topic's region is not
    // authentic; the others verify, as the notification signed.
    let ours = of_topic_region(&case.url, case.topic.0, true);
    let expected = if case.url.is_empty() {
        Err(MISSING)
    } else if ours {
        Ok(())
    } else {
        Err(INVALID)
    };
    let as_expected = |verified: &Result<SmsEvent, WebhookError>| match (verified, &expected) {
        (Ok(event), Ok(())) => {
            case.envelope.as_ref().is_some_and(|(_, id, _)| event.dedupe_key == format!("aws:sns:{id}"))
        }
        (Err(error), Err(refusal)) => error == refusal,
        _ => false,
    };
    if let Some(verified) = &answer.verified
        && !as_expected(verified)
    {
        return Err(format!("a notification naming the URL is {verified:?}, not {expected:?}"));
    }
    if let Some(Fetched { prepared, urls, verified }) = &answer.fetched {
        let fetched_ok = prepared.is_ok() && urls.len() == usize::from(ours) && urls.iter().all(|u| *u == case.url);
        if !fetched_ok || !as_expected(verified) {
            return Err(format!(
                "a fetching verifier prepared {prepared:?}, fetched {urls:?} and verified {verified:?}, not {expected:?}"
            ));
        }
    }
    match &answer.confirmed {
        None => {}
        Some(Err(error)) if case.url.contains('\n') && *error == MALFORMED => {}
        Some(Err(error)) => return Err(format!("a signed confirmation was refused: {error:?}")),
        Some(Ok(_)) if case.url.contains('\n') => {
            return Err("a confirmation whose SubscribeURL holds a newline was accepted".to_owned());
        }
        Some(Ok(confirmed)) => {
            let ours = of_topic_region(&case.url, case.topic.0, false);
            if confirmed.is_some() != ours {
                let rule = follows_rule(&case.url, false);
                return Err(format!(
                    "the subscription is {confirmed:?} for a URL that is {rule:?}, of the topic's region: {ours}"
                ));
            }
            if confirmed.as_ref().is_some_and(|url| *url != case.url) {
                return Err(format!("the subscription names another URL: {confirmed:?}"));
            }
        }
    }
    // A case parses its URL up to seven times (`is_certificate_url`, then the verifier's
    // checks in `prepare` and `verify`); a host that is not ASCII takes about 31 bytes
    // per byte to parse (its IDNA mapping), an ASCII one about one.
    Ok(Budget::new(if case.url.is_ascii() { 64 } else { 256 }, 64 * 1024))
}

/// Fuzzes `is_certificate_url` on random strings: never a panic, and it accepts exactly the
/// URLs that follow the rule (checked independently with the `url` crate, canonical spelling
/// included); one built from good pieces is accepted. In a notification (whose
/// `SigningCertURL` is not signed) from one of several topics, a verifier with an injected
/// certificate accepts exactly the URLs that follow the rule and name the SNS host of the
/// topic's own region, and refuses the others as not authentic; a verifier that fetches
/// certificates fetches in `prepare` exactly those URLs, and then verifies as the other does. A signed
/// subscription confirmation names its `SubscribeURL` for confirming exactly when it is
/// `https` on the SNS host of the topic's region, spelled canonically (T286, T289); one whose
/// `SubscribeURL` holds a newline is malformed (T285).
pub(crate) fn fuzz_certificate_urls(name: &'static str, ci: u64) {
    let topics: Vec<&str> = URL_TOPICS.iter().map(|(topic, _)| *topic).collect();
    let builder = || topics.iter().skip(1).fold(AwsWebhook::builder(TOPIC), |builder, topic| builder.topic(*topic));
    let verifier = builder().certificate_pem(AWS_SNS_TEST_CERTIFICATE).build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    LazyLock::force(&CERTIFICATE_URL_BASES);
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        |rng| {
            let index = if rng.bool() { 0 } else { rng.usize(..URL_TOPICS.len()) };
            let topic = URL_TOPICS[index];
            let (url, good) = url_case(rng, topic);
            let envelope = (rng.u8(..3) == 0).then(|| {
                let mut envelope = CERTIFICATE_URL_BASES[index].clone();
                let id = envelope["MessageId"].as_str().unwrap().to_owned();
                envelope.insert("SigningCertURL".to_owned(), url.clone().into());
                (serde_json::to_string(&envelope).unwrap(), id, rng.bool())
            });
            let confirmation = (rng.u8(..16) == 0 && !url.is_empty() && topic.1).then(|| {
                let fields = Fields {
                    kind: "SubscriptionConfirmation",
                    topic_arn: topic.0,
                    message: "You have chosen to subscribe.".to_owned(),
                    message_id: "c-1".to_owned(),
                    subject: None,
                    timestamp: TIMESTAMP.to_owned(),
                    token: Some("t".to_owned()),
                    subscribe_url: Some(url.clone()),
                };
                fields.envelope(&SIGNER)
            });
            UrlCase { url, good, topic, envelope, confirmation }
        },
        |case| {
            case.url.len()
                + case.envelope.as_ref().map_or(0, |(body, _, _)| body.len())
                + case.confirmation.as_ref().map_or(0, String::len)
        },
        |case| {
            let verify = |verifier: &AwsWebhook, kind: &str, body: &String| {
                let request = request("https://example.com/sns", kind, body.clone().into_bytes());
                verifier.verify_at(&request.as_request(), super::webhooks::now())
            };
            let fetched = case.envelope.as_ref().filter(|(_, _, fetching)| *fetching).map(|(body, _, _)| {
                let source = std::sync::Arc::new(Recording::default());
                let fetching = builder().certificate_source(source.clone()).build().unwrap();
                let request = request("https://example.com/sns", "Notification", body.clone().into_bytes());
                let prepared = runtime.block_on(fetching.prepare(&request.as_request()));
                let urls = std::mem::take(&mut *source.0.lock().unwrap());
                Fetched { prepared, urls, verified: verify(&fetching, "Notification", body) }
            });
            UrlAnswer {
                accepted: is_certificate_url(&case.url),
                verified: case
                    .envelope
                    .as_ref()
                    .filter(|(_, _, fetching)| !fetching)
                    .map(|(body, _, _)| verify(&verifier, "Notification", body)),
                fetched,
                confirmed: case.confirmation.as_ref().map(|body| {
                    verify(&verifier, "SubscriptionConfirmation", body)
                        .map(|event| subscription(&event).map(|subscription| subscription.subscribe_url))
                }),
            }
        },
        check_url_case,
    );
    let _exclusive = super::engine::exclusive();
    let make = |n: usize| format!("https://sns.{}.amazonaws.com/{}x.pem", "a-".repeat(n), "%41/".repeat(n));
    assert_linear(&format!("{name}: a long host and path"), 2000, make, |url: &String| {
        let _ = is_certificate_url(url);
    });
}
