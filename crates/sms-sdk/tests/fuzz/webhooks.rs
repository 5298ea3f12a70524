//! Hostile webhooks: every provider's verifier and normalizer (Twilio, Telnyx, Plivo, Vonage,
//! Sinch, AWS, and the batching Infobip and Bandwidth), on real signed requests mutated byte by
//! byte (re-signed, so that the mutation reaches the normalizer, or not, so that it is refused),
//! on random requests, and on large structured ones (many parameters, long URLs and headers, deep
//! JSON, huge counts).
//!
//! Infobip and Bandwidth sign nothing: their requests are "signed" with the Basic credentials
//! (or, for Infobip, the secret token of the callback URL) their verifiers expect, and their
//! normalizer is reached through the verifier on correctly authenticated requests, since one
//! request carries a batch of events (`verify_all_at`) and `parse_unverified` returns only the
//! first. What the batch verifiers return is checked against an oracle: 1 to the provider's
//! limit of events, as many as the body's array has entries (where `serde_json` reads it), the
//! first one what `parse_unverified` makes of the same body, and a payload refusal the same.
//!
//! Bounds asserted on every execution: no panic, a typed error (or an event), and allocation
//! within a small multiple of the request's size: 4 bytes per input byte for everything refused
//! before or at the signature check (a parameter with `+`, `%XX` and bytes that are not UTF-8 is
//! copied to replace the `+`, decoded into a growing buffer and made valid UTF-8: about 3.3
//! bytes per byte of a 1 MiB body, found by a long run), plus 256 KiB for the up to 1,024
//! parameters decoded to check a signature (their pairs and sorted views take about 150 bytes
//! each, however short the parameter), and [`AUTHENTIC`] for a request that got through it (the
//! normalizer builds the event and its `raw` copy of the payload), plus for a batch
//! [`PER_ENTRY`] for each of its entries up to the provider's limit of events (none past it: a
//! batch over the limit is refused and may cost only what its bytes do).

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderName, HeaderValue};
use sha2::Digest as _;
#[cfg(feature = "bandwidth")]
use sms_sdk::BandwidthWebhook;
#[cfg(feature = "infobip")]
use sms_sdk::InfobipWebhook;
#[cfg(feature = "sinch")]
use sms_sdk::SinchWebhook;
#[cfg(feature = "aws")]
use sms_sdk::provider::aws::AwsWebhook;
#[cfg(feature = "bandwidth")]
use sms_sdk::provider::bandwidth;
#[cfg(feature = "infobip")]
use sms_sdk::provider::infobip;
#[cfg(feature = "sinch")]
use sms_sdk::provider::sinch;
use sms_sdk::provider::{plivo, telnyx, twilio, vonage};
#[cfg(feature = "aws")]
use sms_sdk::testing::webhooks::AWS_SNS_TEST_CERTIFICATE;
#[cfg(feature = "bandwidth")]
use sms_sdk::testing::webhooks::signed_bandwidth_request;
#[cfg(feature = "infobip")]
use sms_sdk::testing::webhooks::signed_infobip_request;
use sms_sdk::testing::webhooks::{SignedRequest, TelnyxKeyPair, form_body, parse_unverified};
use sms_sdk::webhook::{SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};

use super::GLOBAL;
#[cfg(feature = "aws")]
use super::aws;
use super::engine::{Budget, Fuzz, assert_linear, max_len, mutate, text};

/// What a request refused before or at its signature check may allocate.
pub(crate) const UNVERIFIED: Budget = Budget::new(4, 256 * 1024);
/// What a request that passed its signature check (or one parsed without it) may allocate: the
/// payload decoded into a JSON tree, its `raw` copy, and the event.
pub(crate) const AUTHENTIC: Budget = Budget::new(64, 64 * 1024);
/// What each entry of a batch may add to [`AUTHENTIC`], however short (an entry of one byte,
/// `0`, is still read into the members an event needs, then made an event, its dedupe key and
/// its `raw`): up to the limit of events per request, which bounds it. The entries past the
/// limit get nothing: a batch over it is refused, and should cost no more than its bytes.
const PER_ENTRY: usize = 2 * 1024;

const NOW: u64 = 1_700_000_000;
const TWILIO_TOKEN: &str = "fuzz-twilio-token";
const PLIVO_TOKEN: &str = "fuzz-plivo-token";
const VONAGE_SECRET: &str = "fuzz-vonage-signature-secret";
#[cfg(feature = "sinch")]
const SINCH_SECRET: &str = "fuzz-sinch-webhook-secret";
const NONCE: &str = "918273645";
#[cfg(feature = "infobip")]
const INFOBIP_USER: &str = "fuzz-infobip";
#[cfg(feature = "infobip")]
const INFOBIP_PASSWORD: &str = "fuzz-infobip-callback-password";
/// The secret of the Infobip callback URL's `sms_sdk_token` parameter.
#[cfg(feature = "infobip")]
const INFOBIP_TOKEN: &str = "fuzz-infobip-url-token-0123456789";
#[cfg(feature = "bandwidth")]
const BANDWIDTH_USER: &str = "fuzz-bandwidth";
#[cfg(feature = "bandwidth")]
const BANDWIDTH_PASSWORD: &str = "fuzz-bandwidth-callback-password";

pub(crate) fn now() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(NOW)
}

fn telnyx_key() -> TelnyxKeyPair {
    TelnyxKeyPair::from_seed(*b"sms-sdk fuzz: telnyx key seed 01")
}

/// The providers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Provider {
    Twilio,
    Telnyx,
    Plivo,
    Vonage,
    #[cfg(feature = "sinch")]
    Sinch,
    #[cfg(feature = "aws")]
    Aws,
    #[cfg(feature = "infobip")]
    Infobip,
    #[cfg(feature = "bandwidth")]
    Bandwidth,
}

impl Provider {
    fn name(self) -> &'static str {
        match self {
            Self::Twilio => "twilio",
            Self::Telnyx => "telnyx",
            Self::Plivo => "plivo",
            Self::Vonage => "vonage",
            #[cfg(feature = "sinch")]
            Self::Sinch => "sinch",
            #[cfg(feature = "aws")]
            Self::Aws => "aws",
            #[cfg(feature = "infobip")]
            Self::Infobip => "infobip",
            #[cfg(feature = "bandwidth")]
            Self::Bandwidth => "bandwidth",
        }
    }

    fn form(self) -> bool {
        matches!(self, Self::Twilio | Self::Plivo)
    }

    /// The shape of the batches of the providers that send several events in one request
    /// (their verifiers return every event: `verify_all_at`); `None` for one event per request.
    fn batch(self) -> Option<Batch> {
        match self {
            Self::Twilio | Self::Telnyx | Self::Plivo | Self::Vonage => None,
            #[cfg(feature = "sinch")]
            Self::Sinch => None,
            #[cfg(feature = "aws")]
            Self::Aws => None,
            #[cfg(feature = "infobip")]
            Self::Infobip => Some(Batch {
                limit: infobip::MAX_RESULTS,
                member: Some("results"),
                before: r#"{"results":["#,
                after: r#"],"messageCount":1,"pendingMessageCount":0}"#,
                report: r#"{"bulkId":"BULK-1","messageId":"{id}","to":"41793026727","sentAt":"2026-12-01T10:00:00.000+0000","doneAt":"2026-12-01T10:00:05.000+0000","smsCount":1,"callbackData":"AAAAAAAAAAAAAAAAAAAAAA","status":{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET"},"error":{"groupId":0,"id":0,"name":"NO_ERROR","permanent":false}}"#,
                inbound: r#"{"messageId":"{id}","from":"385916242493","to":"385921004026","text":"STOP","keyword":"STOP","receivedAt":"2026-12-01T10:02:00.000+0000","smsCount":1}"#,
            }),
            #[cfg(feature = "bandwidth")]
            Self::Bandwidth => Some(Batch {
                limit: bandwidth::MAX_EVENTS,
                member: None,
                before: "[",
                after: "]",
                report: r#"{"type":"message-delivered","time":"2024-09-14T18:20:11.160744Z","description":"Message delivered to handset.","to":"+12345678902","message":{"id":"{id}","time":"2024-09-14T18:20:11.160744Z","to":["+12345678902"],"from":"+12345678901","text":"","owner":"+12345678902","direction":"out","segmentCount":1}}"#,
                inbound: r#"{"type":"message-received","time":"2025-01-06T15:43:35.502180Z","to":"+12345678902","message":{"id":"{id}","owner":"+12345678902","direction":"in","to":["+12345678902"],"from":"+12345678901","text":"STOP","media":["https://messaging.bandwidth.com/api/v2/users/9900000/media/a.jpg"]}}"#,
            }),
        }
    }

    /// Whether the provider's verifier has a second scheme: the callback URL's secret token
    /// (Infobip).
    fn has_url_token(self) -> bool {
        #[cfg(feature = "infobip")]
        if self == Self::Infobip {
            return true;
        }
        false
    }
}

/// How a batching provider (Infobip, Bandwidth) wraps its events in one body.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(any(feature = "infobip", feature = "bandwidth")), allow(dead_code))]
struct Batch {
    /// The most events one request may carry (more is a payload error).
    limit: usize,
    /// The member of the body's object that holds the events (Infobip's `results`), or `None`
    /// for a body that is their array (Bandwidth's).
    member: Option<&'static str>,
    /// What comes before and after the entries (joined by commas).
    before: &'static str,
    after: &'static str,
    /// A delivery report and an inbound message (`"text":"STOP"`), `{id}` their message id.
    report: &'static str,
    inbound: &'static str,
}

impl Batch {
    /// How many entries `body`'s batch has, as `serde_json` reads it without building the values
    /// (`None` where it does not: not JSON, nested deeper than it reads, not a batch): the
    /// elements of the body's array, or of the arrays of [`member`](Self::member) (summed, when
    /// the member is repeated).
    fn entries(self, body: &[u8]) -> Option<usize> {
        let mut reader = serde_json::Deserializer::from_slice(body);
        let entries = serde::de::DeserializeSeed::deserialize(Entries(self.member), &mut reader).ok()?;
        reader.end().ok()?;
        entries
    }

    /// The body of `entries` (JSON texts).
    fn body(self, entries: &[String]) -> Vec<u8> {
        format!("{}{}{}", self.before, entries.join(","), self.after).into_bytes()
    }

    /// `n` events, reports and inbound messages in turn, each of its own message.
    fn events(self, n: usize) -> Vec<u8> {
        let entries: Vec<String> = (0..n)
            .map(|i| if i % 2 == 0 { self.report } else { self.inbound }.replace("{id}", &format!("fuzz-{i}")))
            .collect();
        self.body(&entries)
    }

    /// Large structured batches: more events than the limit (real ones, or a huge count of
    /// tiny entries), a long text, a long message id, deep nesting in a member not read.
    fn large(self, rng: &mut fastrand::Rng) -> Vec<u8> {
        let n = rng.usize(1..=4096);
        let inbound = |id: &str, text: &str| self.inbound.replace("{id}", id).replace("STOP", text);
        match rng.u8(..5) {
            0 => self.events(rng.usize(1..=2 * self.limit)),
            1 => {
                let entry = ["{}", "0", "null", "[]", r#""x""#][rng.usize(..5)];
                let count = if rng.bool() { n } else { n * 64 };
                self.body(&vec![entry.to_owned(); count])
            }
            2 => self.body(&[inbound("fuzz-1", &"\\ud83d\\ude00".repeat(n))]),
            3 => self.body(&[inbound(&"m".repeat(n), "hi")]),
            _ => {
                let nested = format!("{}{}", "[".repeat(n), "]".repeat(n));
                self.body(&[self.report.replace("{id}", "fuzz-1").replacen('{', &format!(r#"{{"x":{nested},"#), 1)])
            }
        }
    }
}

/// Counts a batch's entries (see [`Batch::entries`]): of a top-level array with `None`, of the
/// arrays of the named member of a top-level object otherwise; `Ok(None)` for any other value.
struct Entries(Option<&'static str>);

impl<'de> serde::de::DeserializeSeed<'de> for Entries {
    type Value = Option<usize>;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Every kind of value but an array or an object: no entries.
macro_rules! no_entries {
    ($($visit:ident($type:ty)),*) => {
        $(fn $visit<E: serde::de::Error>(self, _: $type) -> Result<Self::Value, E> {
            Ok(None)
        })*
    };
}

impl<'de> serde::de::Visitor<'de> for Entries {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    no_entries!(visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64), visit_str(&str));

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<Self::Value, A::Error> {
        let mut count = 0;
        while items.next_element::<serde::de::IgnoredAny>()?.is_some() {
            count += 1;
        }
        Ok(self.0.is_none().then_some(count))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut members: A) -> Result<Self::Value, A::Error> {
        let mut total = None;
        while let Some(name) = members.next_key::<String>()? {
            if self.0.is_some_and(|member| member == name) {
                if let Some(count) = members.next_value_seed(Entries(None))? {
                    total = Some(total.unwrap_or(0) + count);
                }
            } else {
                members.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(total)
    }
}

const URLS: &[&str] = &[
    "https://example.com/sms/inbound",
    "https://example.com/sms/inbound?tenant=acme%20corp&b=1",
    "https://user:pw@Example.com:8443/hooks/sms?x=1#frag",
    "http://[::1]:3000",
    "https://answer.url",
];

/// Real payloads of each provider: form bodies (Twilio, Plivo) or JSON bodies (for AWS, the
/// signed SNS envelopes of the fixtures; for Infobip and Bandwidth, batches of one or more
/// events, as documented: the fixtures, and compact batches of several kinds).
fn payloads(provider: Provider) -> Vec<Vec<u8>> {
    let form = |params: &[(&str, &str)]| form_body(params).into_bytes();
    match provider {
        Provider::Twilio => vec![
            form(&[
                ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
                ("MessageStatus", "delivered"),
                ("SmsStatus", "delivered"),
                ("To", "+14155550123"),
                ("From", "+15005550006"),
                ("AccountSid", "AC0123456789abcdef0123456789abcdef"),
            ]),
            form(&[
                ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
                ("From", "+14155550123"),
                ("To", "+15005550006"),
                ("Body", "STOP"),
                ("NumMedia", "2"),
                ("MediaUrl0", "https://api.twilio.com/m/0"),
                ("MediaUrl1", "https://api.twilio.com/m/1"),
                ("OptOutType", "STOP"),
            ]),
            form(&[
                ("SmsSid", "SM0123456789abcdef0123456789abcdef"),
                ("SmsStatus", "undelivered"),
                ("ErrorCode", "30007"),
            ]),
        ],
        Provider::Plivo => vec![
            form(&[
                ("MessageUUID", "2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c"),
                ("Status", "delivered"),
                ("From", "14155550123"),
                ("To", "15005550006"),
                ("ErrorCode", "000"),
            ]),
            form(&[
                ("From", "14155550123"),
                ("To", "15005550006"),
                ("Text", "HELP"),
                ("Type", "mms"),
                ("MessageUUID", "2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c"),
                ("Media0", "https://media.plivo.com/0"),
                ("Media1", "https://media.plivo.com/1"),
            ]),
        ],
        Provider::Telnyx => vec![
            br#"{"data":{"event_type":"message.received","id":"evt-1","occurred_at":"2026-10-08T12:00:00.000+00:00","payload":{"id":"msg-1","from":{"phone_number":"+14155550123"},"to":[{"phone_number":"+15005550006","status":"webhook_delivered"}],"text":"Hi","media":[{"url":"https://media.telnyx.com/a.jpg"}]},"record_type":"event"},"meta":{"attempt":1}}"#.to_vec(),
            br#"{"data":{"event_type":"message.finalized","id":"evt-9","occurred_at":"2026-10-08T12:00:00.000+00:00","payload":{"id":"40385f64","to":[{"phone_number":"+14155550123","status":"delivery_failed"}],"errors":[{"code":"40002","title":"Blocked"}]}}}"#.to_vec(),
        ],
        Provider::Vonage => vec![
            br#"{"message_uuid":"aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab","to":"447700900000","from":"447700900001","timestamp":"2020-01-01T14:00:00.000Z","channel":"sms","message_type":"text","text":"STOP"}"#.to_vec(),
            br#"{"message_uuid":"aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab","to":"447700900000","from":"Acme","timestamp":"2020-01-01T14:00:03.010Z","status":"rejected","error":{"type":"https://developer.nexmo.com/api-errors/messages-olympus#1250","title":"1250"},"usage":{"price":"0.0333","currency":"EUR"}}"#.to_vec(),
        ],
        #[cfg(feature = "sinch")]
        Provider::Sinch => vec![
            br#"{"type":"recipient_delivery_report_sms","batch_id":"01FC66621XXXXX119Z8PMV1QPQ","recipient":"+14155550123","code":402,"status":"Failed","at":"2026-12-01T10:00:05.000Z","client_reference":"AAAAAAAAAAAAAAAAAAAAAA"}"#.to_vec(),
            br#"{"type":"mo_text","id":"01FC66621VHDBN119Z8PMV1AHY","from":"+14155550123","to":"+15005550006","body":"STOP","received_at":"2026-12-01T10:01:00.000Z"}"#.to_vec(),
        ],
        #[cfg(feature = "aws")]
        Provider::Aws => aws::FIXTURES.iter().map(|fixture| fixture.to_vec()).collect(),
        #[cfg(feature = "infobip")]
        Provider::Infobip => vec![
            include_bytes!("../fixtures/infobip/delivery_reports.json").to_vec(),
            include_bytes!("../fixtures/infobip/inbound.json").to_vec(),
            // Delivered, undeliverable (an error object), pending (the status as strings) and
            // rejected reports in one batch.
            br#"{"results":[{"bulkId":"BULK-1","messageId":"sms-sdk-AAAAAAAAAAAAAAAAAAAAAA","to":"41793026727","sentAt":"2026-12-01T10:00:00.000+0000","doneAt":"2026-12-01T10:00:05.000+0000","smsCount":1,"callbackData":"AAAAAAAAAAAAAAAAAAAAAA","price":{"pricePerMessage":0.01,"currency":"EUR"},"status":{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET","description":"Message delivered to handset"},"error":{"groupId":0,"groupName":"OK","id":0,"name":"NO_ERROR","description":"No Error","permanent":false}},{"messageId":"MESSAGE-ID-2","to":"41793026834","doneAt":"2026-12-01T10:01:00.000+01:00","status":{"groupId":2,"groupName":"UNDELIVERABLE","id":9,"name":"UNDELIVERABLE_NOT_DELIVERED"},"error":{"groupId":1,"id":27,"name":"EC_ABSENT_SUBSCRIBER","permanent":false}},{"messageId":"MESSAGE-ID-3","to":"InfoSMS","status":{"groupId":"1","id":"26","name":"PENDING_ACCEPTED"}},{"messageId":"MESSAGE-ID-4","sender":"385916242493","to":"41793026727","status":{"groupId":5,"id":12,"name":"REJECTED_NOT_ENOUGH_CREDITS"},"error":{"id":"4432"}}]}"#.to_vec(),
            // Two inbound messages (MO_JSON_2): a keyword and a text.
            br#"{"results":[{"messageId":"817790313235066447","from":"385916242493","to":"385921004026","text":"HELP","cleanText":"","keyword":"HELP","receivedAt":"2026-12-01T10:02:00.000+0000","smsCount":1,"price":{"pricePerMessage":0,"currency":"EUR"},"callbackData":"callbackData"},{"messageId":"817790313235066448","from":"385916242493","to":"385921004026","text":"Hello \u00e9\ud83d\ude00","receivedAt":"2026-12-01T10:03:00Z"}],"messageCount":2,"pendingMessageCount":0}"#.to_vec(),
        ],
        #[cfg(feature = "bandwidth")]
        Provider::Bandwidth => vec![
            include_bytes!("../fixtures/bandwidth/callback_delivered.json").to_vec(),
            include_bytes!("../fixtures/bandwidth/callback_failed.json").to_vec(),
            include_bytes!("../fixtures/bandwidth/callback_received.json").to_vec(),
            // Sending, sent and failed events, an MMS received with media, and a read receipt
            // (unrecognized), in one array.
            br#"[{"type":"message-sending","time":"2024-09-14T18:20:10.000Z","description":"Message is sending to carrier","to":"+12345678902","message":{"id":"14762070468292kw2fuqty55yp2b2","time":"2024-09-14T18:20:10.000Z","to":["+12345678902"],"from":"+12345678901","text":"","applicationId":"93de2206-9669-4e07-948d-329f4b722ee2","owner":"+12345678901","direction":"out","segmentCount":1,"tag":"AAAAAAAAAAAAAAAAAAAAAA"}},{"type":"message-sent","time":"2024-09-14T18:20:11.000Z","to":"+12345678902","message":{"id":"14762070468292kw2fuqty55yp2b2","from":"+12345678901"}},{"type":"message-failed","time":"2024-12-18T16:51:27.704450Z","description":"forbidden to country","to":"+52345678903","errorCode":"4432","message":{"id":"14762070468293kw2fuqty55yp2b3","from":"+12345678901"}},{"time":"2025-01-06T15:43:35.502180Z","type":"message-received","to":"+12345678902","description":"Incoming message received","message":{"id":"14762070468294kw2fuqty55yp2b4","owner":"+12345678902","time":"2025-01-06T15:43:34.000000Z","direction":"in","to":["+12345678902"],"from":"+12345678901","text":"stop","media":["https://messaging.bandwidth.com/api/v2/users/9900000/media/a.jpg","https://messaging.bandwidth.com/api/v2/users/9900000/media/b.smil"]}},{"type":"message-read","time":"2025-01-06T15:44:00Z","to":"+12345678901","message":{"id":"14762070468292kw2fuqty55yp2b2"}}]"#.to_vec(),
        ],
    }
}

/// The decoded pairs of a form body, as a signer sees them.
fn pairs(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

/// `payload` sent to `url` as `provider` would send it, correctly signed: a form POST (Twilio,
/// Plivo V3), a GET with the payload as query (one case in eight, for the form providers), or
/// a JSON POST (Twilio's `bodySHA256` form one case in eight; for AWS, an SNS envelope signed
/// with the test key, see `aws::resigned`; for Infobip and Bandwidth, with the Basic credentials
/// of the verifier, or for Infobip with `url_token` the URL's secret token instead).
#[cfg_attr(not(feature = "infobip"), allow(unused_variables))] // `url_token`: Infobip's scheme
fn signed(provider: Provider, url: &str, payload: &[u8], rng: &mut fastrand::Rng, url_token: bool) -> SignedRequest {
    // A provider never sends a fragment; a query appended after one would not be a query.
    let url = url.split('#').next().unwrap_or(url);
    let header = |request: SignedRequest, name: &str, value: &str| request.header(name, value);
    match provider {
        Provider::Twilio if rng.u8(..8) == 0 => {
            let hash = hex(&sha2::Sha256::digest(payload));
            let separator = if url.contains('?') { '&' } else { '?' };
            let url = format!("{url}{separator}bodySHA256={hash}");
            let signature = twilio::signature::<&str, &str>(TWILIO_TOKEN, &url, &[]);
            let request = SignedRequest::new("POST", &url, payload.to_vec());
            header(header(request, "content-type", "application/json"), "x-twilio-signature", &signature)
        }
        Provider::Twilio | Provider::Plivo if rng.u8(..8) == 0 => {
            let separator = if url.contains('?') { '&' } else { '?' };
            let url = format!("{url}{separator}{}", text(payload));
            let request = SignedRequest::new("GET", &url, Vec::new());
            if provider == Provider::Twilio {
                let signature = twilio::signature::<&str, &str>(TWILIO_TOKEN, &url, &[]);
                header(request, "x-twilio-signature", &signature)
            } else {
                let signature = plivo::signature_v3::<&str, &str>(PLIVO_TOKEN, "GET", &url, &[], NONCE);
                header(header(request, "x-plivo-signature-v3", &signature), "x-plivo-signature-v3-nonce", NONCE)
            }
        }
        Provider::Twilio => {
            let signature = twilio::signature(TWILIO_TOKEN, url, &pairs(payload));
            let request = SignedRequest::new("POST", url, payload.to_vec());
            let request = header(request, "content-type", "application/x-www-form-urlencoded");
            header(request, "x-twilio-signature", &signature)
        }
        Provider::Plivo => {
            let v3 = plivo::signature_v3(PLIVO_TOKEN, "POST", url, &pairs(payload), NONCE);
            let request = SignedRequest::new("POST", url, payload.to_vec());
            let request = header(request, "content-type", "application/x-www-form-urlencoded");
            let request = header(request, "x-plivo-signature-v2", &plivo::signature_v2(PLIVO_TOKEN, url, NONCE));
            let request = header(request, "x-plivo-signature-v2-nonce", NONCE);
            if rng.u8(..4) == 0 {
                // V2 only: the body is not signed.
                return request;
            }
            header(header(request, "x-plivo-signature-v3", &v3), "x-plivo-signature-v3-nonce", NONCE)
        }
        Provider::Telnyx => {
            let timestamp = NOW.to_string();
            let signature = telnyx_key().sign(&telnyx::signed_payload(&timestamp, payload));
            let request = SignedRequest::new("POST", url, payload.to_vec());
            let request = header(request, "content-type", "application/json");
            header(header(request, "telnyx-timestamp", &timestamp), "telnyx-signature-ed25519", &signature)
        }
        Provider::Vonage => {
            let claims = serde_json::json!({
                "iat": NOW, "jti": "fuzz", "iss": "Vonage",
                "payload_hash": hex(&sha2::Sha256::digest(payload)), "api_key": "fuzz-key"
            });
            let token = vonage::sign_jwt(VONAGE_SECRET, &claims);
            let request = SignedRequest::new("POST", url, payload.to_vec());
            header(header(request, "content-type", "application/json"), "authorization", &format!("Bearer {token}"))
        }
        #[cfg(feature = "sinch")]
        Provider::Sinch => {
            let timestamp = NOW.to_string();
            let signature = sinch::__private::sign(SINCH_SECRET, payload, NONCE, &timestamp);
            let request = SignedRequest::new("POST", url, payload.to_vec());
            let request =
                header(header(request, "content-type", "application/json"), "x-sinch-webhook-signature", &signature);
            header(
                header(request, "x-sinch-webhook-signature-timestamp", &timestamp),
                "x-sinch-webhook-signature-nonce",
                NONCE,
            )
        }
        #[cfg(feature = "aws")]
        Provider::Aws => aws::resigned(url, payload, rng),
        // The helpers take a body of text; a mutated payload need not be UTF-8.
        #[cfg(feature = "infobip")]
        Provider::Infobip => {
            let mut request = if url_token {
                signed_infobip_request(url, "", None, Some(INFOBIP_TOKEN))
            } else {
                signed_infobip_request(url, "", Some((INFOBIP_USER, INFOBIP_PASSWORD)), None)
            };
            request.body = payload.to_vec();
            request
        }
        #[cfg(feature = "bandwidth")]
        Provider::Bandwidth => {
            let mut request = signed_bandwidth_request(BANDWIDTH_USER, BANDWIDTH_PASSWORD, url, "");
            request.body = payload.to_vec();
            request
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut hex, b| {
        write!(hex, "{b:02x}").unwrap();
        hex
    })
}

/// Every provider of this build.
const PROVIDERS: &[Provider] = &[
    Provider::Twilio,
    Provider::Telnyx,
    Provider::Plivo,
    Provider::Vonage,
    #[cfg(feature = "sinch")]
    Provider::Sinch,
    #[cfg(feature = "aws")]
    Provider::Aws,
    #[cfg(feature = "infobip")]
    Provider::Infobip,
    #[cfg(feature = "bandwidth")]
    Provider::Bandwidth,
];

/// The header names of every provider's signed requests, and one no verifier reads.
static HEADERS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    let mut names = vec!["x-forwarded-host".to_owned(), "x-plivo-signature-ma-v2".to_owned()];
    // With raw message delivery SNS posts the bare message: refused whatever else it has.
    #[cfg(feature = "aws")]
    names.push("x-amz-sns-rawdelivery".to_owned());
    for &provider in PROVIDERS {
        for seed in 0..16 {
            let request = signed(provider, URLS[0], &payloads(provider)[0], &mut fastrand::Rng::with_seed(seed), false);
            names.extend(request.headers.keys().map(|name| name.as_str().to_owned()));
        }
    }
    names.sort();
    names.dedup();
    names
});

/// One generated request and how it was made.
#[derive(Clone)]
pub(crate) struct Case {
    provider: Provider,
    how: &'static str,
    request: SignedRequest,
    /// Correctly signed after the mutation: it must never be refused as unauthentic.
    authentic: bool,
    limits: Option<(usize, usize, Duration)>,
    /// Infobip's other scheme: the request carries the URL's secret token rather than Basic
    /// credentials, and its verifier checks the token.
    url_token: bool,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, String)> =
            self.request.headers.iter().map(|(k, v)| (k.as_str(), text(v.as_bytes()))).collect();
        f.debug_struct("Case")
            .field("provider", &self.provider)
            .field("how", &self.how)
            .field("authentic", &self.authentic)
            .field("limits", &self.limits)
            .field("url_token", &self.url_token)
            .field("method", &self.request.method)
            .field("url", &self.request.url)
            .field("headers", &headers)
            .field("body", &text(&self.request.body))
            .finish()
    }
}

impl Case {
    fn size(&self) -> usize {
        let headers: usize = self.request.headers.iter().map(|(k, v)| k.as_str().len() + v.len()).sum();
        self.request.body.len() + self.request.url.len() + self.request.method.len() + headers
    }
}

/// Large structured payloads: many parameters, a huge media count, long values, deep JSON (for
/// AWS, an envelope with a large message or many members; for Infobip and Bandwidth, see
/// [`Batch::large`]).
fn large_payload(provider: Provider, rng: &mut fastrand::Rng) -> Vec<u8> {
    #[cfg(feature = "aws")]
    if provider == Provider::Aws {
        return aws::large_envelope(rng);
    }
    if let Some(batch) = provider.batch() {
        return batch.large(rng);
    }
    let n = rng.usize(1..=4096);
    if provider.form() {
        let base = payloads(provider).swap_remove(rng.usize(..2));
        let extra: Vec<u8> = match rng.u8(..4) {
            0 => b"&a=1".repeat(n),
            1 => format!("&NumMedia=18446744073709551615{}", "&MediaUrl7=x".repeat(n.min(3))).into_bytes(),
            2 => (0..n).flat_map(|i| format!("&MediaUrl{i}=u&Media{i}=u").into_bytes()).collect(),
            _ => format!("&Body={}", "%F0%9F%98%80".repeat(n)).into_bytes(),
        };
        [base, extra].concat()
    } else {
        match rng.u8(..4) {
            0 => [b"[".repeat(n), b"]".repeat(n)].concat(),
            1 => format!(r#"{{"data":{{"payload":{{"to":[{}]}}}}}}"#, vec![r#"{"phone_number":"+1"}"#; n].join(","))
                .into_bytes(),
            2 => format!(r#"{{"message_uuid":"u","text":"{}","to":"1","from":"2"}}"#, "\\ud83d\\ude00".repeat(n))
                .into_bytes(),
            _ => {
                format!(r#"{{"data":{{"id":"e","event_type":"message.received","x":{}}}}}"#, "1".repeat(n)).into_bytes()
            }
        }
    }
}

/// A header map from names and raw values (values a header cannot carry are left out).
fn header_map(headers: &[(String, Vec<u8>)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_bytes(value)) {
            map.append(name, value);
        }
    }
    map
}

/// One case for `provider`'s verifier.
fn verifier_case(provider: Provider, rng: &mut fastrand::Rng) -> Case {
    let payloads = payloads(provider);
    let payload = payloads[rng.usize(..payloads.len())].clone();
    let url = URLS[rng.usize(..URLS.len())];
    let limit = max_len(rng, 1024 * 1024);
    let other = &payloads[rng.usize(..payloads.len())];
    let limits = (rng.u8(..8) == 0).then(|| {
        let tolerance = [Duration::ZERO, Duration::MAX, Duration::from_secs(rng.u64(..600))][rng.usize(..3)];
        (rng.usize(..2000), rng.usize(..50), tolerance)
    });
    let url_token = provider.has_url_token() && rng.bool();
    let (how, request, authentic) = match rng.u8(..20) {
        // A mutated payload, correctly signed: through the verifier into the normalizer.
        0..=6 => {
            let mut payload = payload;
            mutate(rng, &mut payload, other, limit);
            ("re-signed", signed(provider, url, &payload, rng, url_token), true)
        }
        // A signed request, then mutated: refused (or, where the change is unsigned, accepted).
        7..=15 => {
            let mut request = signed(provider, url, &payload, rng, url_token);
            match rng.u8(..5) {
                0 => {
                    let mut url = request.url.clone().into_bytes();
                    mutate(rng, &mut url, b"?&=%", limit.min(64 * 1024));
                    request.url = text(&url);
                }
                1 | 2 => {
                    let mut headers: Vec<(String, Vec<u8>)> =
                        request.headers.iter().map(|(k, v)| (k.as_str().to_owned(), v.as_bytes().to_vec())).collect();
                    // Two separate draws, the second only when the first says no.
                    let edit_a_value = rng.bool();
                    if edit_a_value && !headers.is_empty() {
                        let at = rng.usize(..headers.len());
                        let other = headers[rng.usize(..headers.len())].1.clone();
                        mutate(rng, &mut headers[at].1, &other, limit.min(64 * 1024));
                    } else if rng.bool() && !headers.is_empty() {
                        headers.remove(rng.usize(..headers.len()));
                    } else {
                        let name = &HEADERS[rng.usize(..HEADERS.len())];
                        let mut value = headers.first().map(|h| h.1.clone()).unwrap_or_default();
                        mutate(rng, &mut value, b"Bearer a.b.c", limit.min(64 * 1024));
                        headers.push((name.clone(), value));
                    }
                    request.headers = header_map(&headers);
                }
                3 => ["GET", "get", "PUT", "", "POST\0"][rng.usize(..5)].clone_into(&mut request.method),
                _ => mutate(rng, &mut request.body, other, limit),
            }
            ("tampered", request, false)
        }
        // Random bytes and headers.
        16 | 17 => {
            let mut body = Vec::new();
            mutate(rng, &mut body, &payload, limit.min(4096));
            let headers: Vec<(String, Vec<u8>)> = (0..rng.usize(..6))
                .map(|_| {
                    let mut value = Vec::new();
                    mutate(rng, &mut value, b"AAAAAAAAAAAAAAAAAAAAAAAAAAA=", 256);
                    (HEADERS[rng.usize(..HEADERS.len())].clone(), value)
                })
                .collect();
            let mut request = SignedRequest::new("POST", url, body);
            request.headers = header_map(&headers);
            ("random", request, false)
        }
        // Large structured payloads, correctly signed.
        _ => ("large", signed(provider, url, &large_payload(provider, rng), rng, url_token), true),
    };
    Case { provider, how, request, authentic: authentic && limits.is_none(), limits, url_token }
}

/// `provider`'s verifier: with the default settings, or with `limits` (body, parameters,
/// tolerance), in which case the URL-signing verifiers also rebuild the URL from forwarded
/// headers (and the AWS verifier takes the tolerance as its optional age limit; Infobip's and
/// Bandwidth's take the body limit only). Infobip's checks the URL token with `url_token`, else
/// Basic credentials.
#[cfg_attr(not(feature = "infobip"), allow(unused_variables))] // `url_token`: Infobip's scheme
fn verifier(provider: Provider, limits: Option<(usize, usize, Duration)>, url_token: bool) -> Verifier {
    let (body, params, tolerance) = limits.unwrap_or((
        sms_sdk::webhook::DEFAULT_MAX_BODY,
        sms_sdk::webhook::DEFAULT_MAX_PARAMS,
        sms_sdk::webhook::DEFAULT_TOLERANCE,
    ));
    let proxy = limits.is_some();
    let one: Box<dyn WebhookVerifier> = match provider {
        Provider::Twilio => Box::new(
            TwilioWebhook::new(TWILIO_TOKEN).unwrap().max_body_bytes(body).max_params(params).trust_proxy(proxy),
        ),
        Provider::Telnyx => {
            Box::new(TelnyxWebhook::new(&telnyx_key().public_key).unwrap().max_body_bytes(body).tolerance(tolerance))
        }
        Provider::Plivo => {
            Box::new(PlivoWebhook::new(PLIVO_TOKEN).unwrap().max_body_bytes(body).max_params(params).trust_proxy(proxy))
        }
        Provider::Vonage => {
            Box::new(VonageWebhook::new(VONAGE_SECRET).unwrap().max_body_bytes(body).tolerance(tolerance))
        }
        #[cfg(feature = "sinch")]
        Provider::Sinch => {
            Box::new(SinchWebhook::hmac(SINCH_SECRET).unwrap().max_body_bytes(body).tolerance(tolerance))
        }
        #[cfg(feature = "aws")]
        Provider::Aws => {
            let builder =
                AwsWebhook::builder(aws::TOPIC).certificate_pem(AWS_SNS_TEST_CERTIFICATE).max_body_bytes(body);
            Box::new(if limits.is_some() { builder.max_age(tolerance) } else { builder }.build().unwrap())
        }
        #[cfg(feature = "infobip")]
        Provider::Infobip => {
            let verifier = if url_token {
                InfobipWebhook::url_token(INFOBIP_TOKEN)
            } else {
                InfobipWebhook::basic(INFOBIP_USER, INFOBIP_PASSWORD)
            };
            return Verifier::Infobip(verifier.unwrap().max_body_bytes(body));
        }
        #[cfg(feature = "bandwidth")]
        Provider::Bandwidth => {
            let verifier = BandwidthWebhook::basic(BANDWIDTH_USER, BANDWIDTH_PASSWORD).unwrap();
            return Verifier::Bandwidth(verifier.max_body_bytes(body));
        }
    };
    Verifier::One(one)
}

/// What a verifier returned: one event, or every event of a batch (Infobip, Bandwidth).
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // the event as returned: a box would add an allocation to each measured execution
enum Events {
    One(SmsEvent),
    #[cfg_attr(not(any(feature = "infobip", feature = "bandwidth")), allow(dead_code))]
    Batch(Vec<SmsEvent>),
}

impl Events {
    fn as_slice(&self) -> &[SmsEvent] {
        match self {
            Self::One(event) => std::slice::from_ref(event),
            Self::Batch(events) => events,
        }
    }
}

/// A verifier under test: one behind the `WebhookVerifier` trait, or a batching one (Infobip,
/// Bandwidth) called by its `verify_all_at`. That call is the inherent method today and is the
/// trait's method of the same name once the trait has it (the trait is in scope).
enum Verifier {
    One(Box<dyn WebhookVerifier>),
    #[cfg(feature = "infobip")]
    Infobip(InfobipWebhook),
    #[cfg(feature = "bandwidth")]
    Bandwidth(BandwidthWebhook),
}

impl Verifier {
    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<Events, WebhookError> {
        match self {
            Self::One(verifier) => verifier.verify_at(request, now).map(Events::One),
            #[cfg(feature = "infobip")]
            Self::Infobip(verifier) => verifier.verify_all_at(request, now).map(Events::Batch),
            #[cfg(feature = "bandwidth")]
            Self::Bandwidth(verifier) => verifier.verify_all_at(request, now).map(Events::Batch),
        }
    }
}

/// A case and the verifier it is sent to (shown as the case).
struct Armed {
    case: Case,
    verifier: Verifier,
}

impl std::fmt::Debug for Armed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.case.fmt(f)
    }
}

/// What an authenticated request may allocate: [`AUTHENTIC`], plus for a batch [`PER_ENTRY`]
/// for each of its entries up to the limit (as many as the events accepted, or as `serde_json`
/// counts in the body).
fn authentic(provider: Provider, request: &SignedRequest, result: &Result<Events, WebhookError>) -> Budget {
    let Some(batch) = provider.batch() else { return AUTHENTIC };
    let entries = match result {
        Ok(events) => events.as_slice().len(),
        Err(_) => batch.entries(&request.body).unwrap_or(0),
    };
    Budget::new(AUTHENTIC.per_byte, AUTHENTIC.fixed + entries.min(batch.limit) * PER_ENTRY)
}

/// Whether `error` is found before or at the signature check.
fn before_verification(error: &WebhookError) -> bool {
    error.is_authentication()
        || matches!(error, WebhookError::BodyTooLarge { .. } | WebhookError::TooManyParameters { .. })
}

/// The typed-error invariants of any result.
fn typed<T>(provider: Provider, result: &Result<T, WebhookError>) -> Result<(), String> {
    let Err(error) = result else { return Ok(()) };
    let codes = ["webhook_signature", "webhook_payload", "body_too_large"];
    if !codes.contains(&error.code()) || error.provider() != provider.name() || error.to_string().is_empty() {
        return Err(format!("an unexpected error: {error:?}"));
    }
    if error.is_authentication() != error.reason().is_some() {
        return Err(format!("authentication and reason disagree: {error:?}"));
    }
    Ok(())
}

/// The oracle of a batching provider's result (nothing to check for the others, or for a
/// request refused before its payload was read): 1 to the limit of events, as many as the
/// body's array has entries where `serde_json` reads the body, the first event exactly what
/// `parse_unverified` makes of the body, and a payload refusal exactly its refusal.
fn batch_agrees(
    provider: Provider,
    request: &SignedRequest,
    result: &Result<Events, WebhookError>,
) -> Result<(), String> {
    let Some(batch) = provider.batch() else { return Ok(()) };
    let first = match result {
        Ok(events) => {
            let events = events.as_slice();
            if events.is_empty() || events.len() > batch.limit {
                return Err(format!("{} events accepted", events.len()));
            }
            let entries = batch.entries(&request.body);
            if entries.is_some_and(|entries| entries != events.len()) {
                return Err(format!("{} events for a batch of {entries:?} entries", events.len()));
            }
            Ok(&events[0])
        }
        Err(error @ WebhookError::Payload { .. }) => Err(error),
        Err(_) => return Ok(()),
    };
    let unverified = parse_unverified(provider.name(), &request.as_request());
    if unverified.as_ref() != first {
        return Err(format!("parse_unverified disagrees: {unverified:?}, the verifier's first: {first:?}"));
    }
    Ok(())
}

/// Fuzzes `provider`'s verifier with `ci` cases in CI, after checking that its work is linear
/// in the number of parameters (or the JSON body's length) of an authentic request.
pub(crate) fn fuzz_verifier(name: &'static str, provider: Provider, ci: u64) {
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        |rng| {
            let case = verifier_case(provider, rng);
            let verifier = verifier(provider, case.limits, case.url_token);
            Armed { case, verifier }
        },
        |armed| armed.case.size(),
        |armed| armed.verifier.verify_at(&armed.case.request.as_request(), now()),
        |Armed { case, .. }, result| {
            typed(provider, result)?;
            if case.authentic && result.as_ref().is_err_and(WebhookError::is_authentication) {
                return Err(format!("a correctly signed request was refused: {result:?}"));
            }
            batch_agrees(provider, &case.request, result)?;
            let unverified = result.as_ref().is_err_and(before_verification);
            Ok(if unverified { UNVERIFIED } else { authentic(provider, &case.request, result) })
        },
    );
    let _exclusive = super::engine::exclusive();
    let url = URLS[1];
    // The same request shape at both sizes.
    let rng = || fastrand::Rng::with_seed(7);
    // Parameters under the limit, a JSON array of objects, or a batch of events (at most 64
    // times `n`, the most `assert_linear` makes, under the batch limit): linear verification.
    let make = |n: usize| {
        let payload = if provider.form() {
            (0..n).map(|i| format!("k{i}=v{i}")).collect::<Vec<_>>().join("&").into_bytes()
        } else if let Some(batch) = provider.batch() {
            batch.events(n)
        } else {
            format!(r#"{{"message_uuid":"u","data":[{}]}}"#, vec![r#"{"a":"b\u00e9"}"#; n].join(",")).into_bytes()
        };
        signed(provider, url, &payload, &mut rng(), false)
    };
    let unlimited = Some((usize::MAX, usize::MAX, Duration::MAX));
    let verifier = verifier(provider, unlimited, false);
    let verify = |request: &SignedRequest| {
        let _ = verifier.verify_at(&request.as_request(), now());
    };
    let n = match provider.batch() {
        Some(batch) => batch.limit / 64,
        None if provider.form() => 1000,
        None => 2000,
    };
    assert_linear(&format!("{name}: a request {n} parameters or objects long"), n, make, verify);
    // A long URL.
    let make =
        |n: usize| signed(provider, &format!("https://example.com/{}?a=b", "p/%41".repeat(n)), b"", &mut rng(), false);
    assert_linear(&format!("{name}: a long URL"), 4000, make, verify);
    if provider.has_url_token() {
        // A long query before the token, which the token check decodes.
        let payload = payloads(provider).swap_remove(0);
        let make = |n: usize| {
            signed(provider, &format!("https://example.com/hook?{}", "a=%41&".repeat(n)), &payload, &mut rng(), true)
        };
        let token_verifier = self::verifier(provider, unlimited, true);
        let verify = |request: &SignedRequest| {
            let _ = token_verifier.verify_at(&request.as_request(), now());
        };
        assert_linear(&format!("{name}: a long query before the URL token"), 4000, make, verify);
    }
}

/// A payload for the normalizer: a real one mutated, random bytes, or a large structured one.
fn normalizer_case(provider: Provider, rng: &mut fastrand::Rng) -> Case {
    let payloads = payloads(provider);
    let mut payload = payloads[rng.usize(..payloads.len())].clone();
    let other = &payloads[rng.usize(..payloads.len())];
    let (how, payload) = match rng.u8(..10) {
        0 => ("large", large_payload(provider, rng)),
        1 => {
            let mut random = Vec::new();
            mutate(rng, &mut random, &payload, 4096);
            ("random", random)
        }
        _ => {
            let limit = max_len(rng, 1024 * 1024);
            mutate(rng, &mut payload, other, limit);
            ("mutated", payload)
        }
    };
    // A batch's normalizer is reached through its verifier: the request is authenticated.
    let url_token = provider.has_url_token() && rng.bool();
    let (request, authentic) = if provider.batch().is_some() {
        (signed(provider, "https://example.com/hook", &payload, rng, url_token), true)
    } else if provider.form() && rng.u8(..4) == 0 {
        (SignedRequest::new("GET", &format!("https://example.com/hook?{}", text(&payload)), Vec::new()), false)
    } else {
        (SignedRequest::new("POST", "https://example.com/hook", payload), false)
    };
    Case { provider, how, request, authentic, limits: None, url_token }
}

/// Fuzzes `provider`'s normalizer (`parse_unverified`: the parsing a verified request gets; for
/// a batching provider, its verifier on authenticated requests, see [`fuzz_batch_normalizer`]).
pub(crate) fn fuzz_normalizer(name: &'static str, provider: Provider, ci: u64) {
    if let Some(batch) = provider.batch() {
        fuzz_batch_normalizer(name, provider, batch, ci);
        return;
    }
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        |rng| normalizer_case(provider, rng),
        Case::size,
        |case| parse_unverified(provider.name(), &case.request.as_request()),
        |_, result| {
            typed(provider, result)?;
            if result.as_ref().is_err_and(WebhookError::is_authentication) {
                return Err(format!("parsing refused a signature: {result:?}"));
            }
            Ok(AUTHENTIC)
        },
    );
    let _exclusive = super::engine::exclusive();
    let make = |n: usize| {
        let payload = if provider.form() {
            let media = (0..10).fold(String::new(), |mut media, i| {
                write!(media, "&MediaUrl{i}=u&Media{i}=u").unwrap();
                media
            });
            format!("MessageSid=SM1&From=1&To=2&NumMedia=10&Text={0}&Body={0}{media}", "%41+".repeat(n)).into_bytes()
        } else {
            format!(
                r#"{{"message_uuid":"u","status":"delivered","data":{{"payload":{{"to":[{}]}}}}}}"#,
                vec![r#"{"phone_number":"+1","status":"sent"}"#; n].join(",")
            )
            .into_bytes()
        };
        SignedRequest::new("POST", "https://example.com/hook", payload)
    };
    let parse = |request: &SignedRequest| {
        let _ = parse_unverified(provider.name(), &request.as_request());
    };
    let n = if provider.form() { 20_000 } else { 2000 };
    assert_linear(&format!("{name}: a long text or {n} recipients"), n, make, parse);
}

/// Fuzzes a batching provider's normalizer (Infobip, Bandwidth) through its verifier with the
/// default settings, on correctly authenticated requests (Basic credentials, or Infobip's URL
/// token) of mutated, random and large batches: never refused as unauthentic, a typed result,
/// what [`batch_agrees`] checks, and within the budget of [`authentic`]; then linear in a long
/// text.
fn fuzz_batch_normalizer(name: &'static str, provider: Provider, batch: Batch, ci: u64) {
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        |rng| {
            let case = normalizer_case(provider, rng);
            let verifier = verifier(provider, None, case.url_token);
            Armed { case, verifier }
        },
        |armed| armed.case.size(),
        |armed| armed.verifier.verify_at(&armed.case.request.as_request(), now()),
        |Armed { case, .. }, result| {
            typed(provider, result)?;
            if result.as_ref().is_err_and(WebhookError::is_authentication) {
                return Err(format!("an authenticated request was refused: {result:?}"));
            }
            batch_agrees(provider, &case.request, result)?;
            Ok(authentic(provider, &case.request, result))
        },
    );
    let _exclusive = super::engine::exclusive();
    let make = |n: usize| {
        let inbound = batch.inbound.replace("{id}", "fuzz-1").replace("STOP", &"\\u00e9 ".repeat(n));
        signed(provider, "https://example.com/hook", &batch.body(&[inbound]), &mut fastrand::Rng::with_seed(7), false)
    };
    let verifier = verifier(provider, Some((usize::MAX, usize::MAX, Duration::MAX)), false);
    let parse = |request: &SignedRequest| {
        let _ = verifier.verify_at(&request.as_request(), now());
    };
    assert_linear(&format!("{name}: a long text"), 2000, make, parse);
}
