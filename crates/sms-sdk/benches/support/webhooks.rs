//! The webhook requests the speed benchmarks verify, one realistic request per provider, with the
//! exact bytes each scheme signs: the bare primitive (HMAC-SHA1, HMAC-SHA256, Ed25519) is timed
//! over the same payload the verifier checks. Shared by `benches/micro.rs` (criterion timings),
//! `benches/verify_speed.rs` (the verifiers next to both implementations of each primitive) and
//! the `sms-bench-allocs` binary of `crates/sms-bench` (allocation counts).
//!
//! Each case checks, when it is built, that the primitive over its payload gives the signature
//! the request carries, so the two timings always cover the same bytes.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use serde_json::json;
use sms_sdk::testing::webhooks::{
    SignedRequest, TelnyxKeyPair, signed_plivo_v3_request, signed_telnyx_request, signed_twilio_request,
    signed_vonage_request,
};
use sms_sdk::webhook::WebhookVerifier;
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};

/// The clock every case is verified at (timestamps and `iat` are fresh then).
pub(crate) const NOW: u64 = 1_700_000_000;

/// [`NOW`] as a `SystemTime`.
pub(crate) fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(NOW)
}

/// The primitive a scheme reduces to, with its key prepared once and the exact signed bytes.
pub(crate) enum Primitive {
    /// HMAC-SHA1 (Twilio); `secret` is what `key` was made from.
    HmacSha1 { key: ring::hmac::Key, secret: &'static str, data: Vec<u8>, tag: Vec<u8> },
    /// HMAC-SHA256 (Plivo V3, Vonage's HS256 JWT); `secret` is what `key` was made from.
    HmacSha256 { key: ring::hmac::Key, secret: &'static str, data: Vec<u8>, tag: Vec<u8> },
    /// Ed25519 (Telnyx).
    Ed25519 { public_key: [u8; 32], message: Vec<u8>, signature: [u8; 64] },
}

/// One provider's webhook: the verifier, a signed request it accepts, and its primitive.
pub(crate) struct Case {
    /// `twilio`, `plivo_v3`, `vonage_jwt`, `telnyx`.
    pub(crate) name: &'static str,
    /// What the request is, for the report.
    pub(crate) what: &'static str,
    pub(crate) verifier: Box<dyn WebhookVerifier>,
    pub(crate) request: SignedRequest,
    pub(crate) primitive: Primitive,
}

impl Case {
    /// Verifies the request once (panics when the verifier refuses it: the case is broken).
    pub(crate) fn verify(&self) -> sms_sdk::webhook::SmsEvent {
        match self.verifier.verify_at(&self.request.as_request(), now()) {
            Ok(event) => event,
            Err(error) => panic!("{}: the benchmark request was refused: {error}", self.name),
        }
    }
}

impl Primitive {
    /// Runs the primitive once; true when the signature matches.
    pub(crate) fn run(&self) -> bool {
        match self {
            Self::HmacSha1 { key, data, tag, .. } | Self::HmacSha256 { key, data, tag, .. } => {
                ring::hmac::sign(key, data).as_ref() == tag.as_slice()
            }
            Self::Ed25519 { public_key, message, signature } => {
                ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, public_key)
                    .verify(message, signature)
                    .is_ok()
            }
        }
    }

    /// The bytes the primitive covers.
    pub(crate) fn len(&self) -> usize {
        match self {
            Self::HmacSha1 { data, .. } | Self::HmacSha256 { data, .. } => data.len(),
            Self::Ed25519 { message, .. } => message.len(),
        }
    }
}

fn base64_standard(text: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(text).unwrap_or_default()
}

fn header<'r>(request: &'r SignedRequest, name: &str) -> &'r str {
    request.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
}

fn checked(name: &str, primitive: Primitive) -> Primitive {
    assert!(primitive.run(), "{name}: the primitive's payload is not what the request signs");
    primitive
}

const TWILIO_TOKEN: &str = "12345678901234567890123456789012";
const TWILIO_URL: &str = "https://sms.example.com/webhooks/twilio/inbound";

/// A Twilio inbound SMS: the 15 parameters Twilio posts for one.
fn twilio() -> Case {
    let params: [(&str, &str); 15] = [
        ("ToCountry", "US"),
        ("ToState", "CA"),
        ("SmsMessageSid", "SM0123456789abcdef0123456789abcdef"),
        ("NumMedia", "0"),
        ("ToCity", "SAN FRANCISCO"),
        ("FromZip", "94105"),
        ("SmsSid", "SM0123456789abcdef0123456789abcdef"),
        ("FromState", "CA"),
        ("SmsStatus", "received"),
        ("FromCity", "SAN FRANCISCO"),
        ("Body", "Hi! Is my order #4521 on its way? Thanks"),
        ("FromCountry", "US"),
        ("To", "+15005550006"),
        ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
        ("From", "+14155550123"),
    ];
    let request = signed_twilio_request(TWILIO_TOKEN, TWILIO_URL, &params);
    // Twilio signs the URL, then every name and value, sorted by name (all ASCII here).
    let mut sorted = params.to_vec();
    sorted.sort_unstable();
    let mut data = TWILIO_URL.as_bytes().to_vec();
    for (name, value) in sorted {
        data.extend_from_slice(name.as_bytes());
        data.extend_from_slice(value.as_bytes());
    }
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, TWILIO_TOKEN.as_bytes());
    let tag = base64_standard(header(&request, "x-twilio-signature"));
    Case {
        name: "twilio",
        what: "inbound SMS, 15-parameter form, X-Twilio-Signature",
        verifier: Box::new(TwilioWebhook::new(TWILIO_TOKEN).unwrap_or_else(|e| panic!("{e}"))),
        primitive: checked("twilio", Primitive::HmacSha1 { key, secret: TWILIO_TOKEN, data, tag }),
        request,
    }
}

const PLIVO_TOKEN: &str = "ZmFrZS1wbGl2by1hdXRoLXRva2VuLTEyMzQ1";
const PLIVO_URL: &str = "https://sms.example.com/webhooks/plivo/inbound";
const PLIVO_NONCE: &str = "05429567804466091622";

/// A Plivo inbound SMS with a V3 signature.
fn plivo() -> Case {
    let params: [(&str, &str); 10] = [
        ("From", "14155550123"),
        ("To", "15005550006"),
        ("Text", "Hi! Is my order #4521 on its way? Thanks"),
        ("Type", "sms"),
        ("MessageUUID", "2a61b3a4-7c1e-11ee-b962-0242ac120002"),
        ("MessageIntent", "optin"),
        ("TotalRate", "0"),
        ("TotalAmount", "0"),
        ("Units", "1"),
        ("PowerpackUUID", "8f2a7c36-7c1e-11ee-b962-0242ac120002"),
    ];
    let request = signed_plivo_v3_request(PLIVO_TOKEN, PLIVO_URL, &params, PLIVO_NONCE);
    // V3 over a POST without a query: the URL, `?`, every name and value sorted, `.`, the nonce.
    let mut sorted = params.to_vec();
    sorted.sort_unstable();
    let mut data = format!("{PLIVO_URL}?").into_bytes();
    for (name, value) in sorted {
        data.extend_from_slice(name.as_bytes());
        data.extend_from_slice(value.as_bytes());
    }
    data.extend_from_slice(format!(".{PLIVO_NONCE}").as_bytes());
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, PLIVO_TOKEN.as_bytes());
    let tag = base64_standard(header(&request, "x-plivo-signature-v3"));
    Case {
        name: "plivo_v3",
        what: "inbound SMS, 10-parameter form, X-Plivo-Signature-V3",
        verifier: Box::new(PlivoWebhook::new(PLIVO_TOKEN).unwrap_or_else(|e| panic!("{e}"))),
        primitive: checked("plivo_v3", Primitive::HmacSha256 { key, secret: PLIVO_TOKEN, data, tag }),
        request,
    }
}

const VONAGE_SECRET: &str = "vonage-signature-secret-0123456789abcdef";
const VONAGE_URL: &str = "https://sms.example.com/webhooks/vonage/inbound";

/// A Vonage Messages API inbound SMS with its HS256 bearer JWT.
fn vonage() -> Case {
    let body = json!({
        "channel": "sms", "message_uuid": "bbbbbbbb-bbbb-4ccc-8ddd-0123456789ab", "to": "447700900001",
        "from": "447700900000", "timestamp": "2023-11-14T22:13:20Z", "text": "Hi! Is my order #4521 on its way? Thanks",
        "sms": {"num_messages": "1", "keyword": "HI", "count_total": "1"}, "message_type": "text"
    })
    .to_string();
    let iat = i64::try_from(NOW).unwrap_or_default();
    let request = signed_vonage_request(VONAGE_SECRET, VONAGE_URL, &body, iat, "3b2c8a1e-6f0d-4b1a-9c55-7d1e2f3a4b5c");
    let token = header(&request, "authorization").trim_start_matches("Bearer ").to_owned();
    let (signed, signature) = token.rsplit_once('.').unwrap_or_default();
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, VONAGE_SECRET.as_bytes());
    let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(signature).unwrap_or_default();
    Case {
        name: "vonage_jwt",
        what: "inbound SMS, JSON body, HS256 bearer JWT with payload_hash",
        verifier: Box::new(VonageWebhook::new(VONAGE_SECRET).unwrap_or_else(|e| panic!("{e}"))),
        primitive: checked(
            "vonage_jwt",
            Primitive::HmacSha256 { key, secret: VONAGE_SECRET, data: signed.as_bytes().to_vec(), tag },
        ),
        request,
    }
}

const TELNYX_URL: &str = "https://sms.example.com/webhooks/telnyx";

/// A Telnyx `message.received` event of about 1.1 KB, Ed25519-signed.
fn telnyx() -> Case {
    let key = TelnyxKeyPair::from_seed(core::array::from_fn(|i| u8::try_from(i).unwrap_or_default()));
    let body = json!({"data": {
        "event_type": "message.received", "id": "b301ed3f-1490-491f-995f-6e64e69674d4",
        "occurred_at": "2023-11-14T22:13:20.000+00:00", "record_type": "event",
        "payload": {
            "cc": [], "completed_at": null, "cost": null, "direction": "inbound", "encoding": "GSM-7",
            "errors": [], "from": {"carrier": "T-Mobile USA", "line_type": "Wireless", "phone_number": "+14155550123"},
            "id": "84cca175-9755-4859-b67f-4730d7f58aa3", "media": [], "messaging_profile_id": "740572b6-099c-44a1-89b9-6c92163bc68d",
            "organization_id": "9d76d591-1b9e-4a3e-9a8b-2e4a1c7f2b11", "parts": 1, "received_at": "2023-11-14T22:13:19.912+00:00",
            "record_type": "message", "sent_at": null, "subject": "", "tags": ["orders", "support"],
            "text": "Hi! Is my order #4521 on its way? I ordered it on Monday and the tracking page has not changed since. Thanks",
            "to": [{"carrier": "Telnyx", "line_type": "Wireless", "phone_number": "+15005550006", "status": "webhook_delivered"}],
            "type": "SMS", "valid_until": null, "webhook_failover_url": null,
            "webhook_url": "https://sms.example.com/webhooks/telnyx"
        }},
        "meta": {"attempt": 1, "delivered_to": TELNYX_URL}
    })
    .to_string();
    assert!((1_000..=1_250).contains(&body.len()), "the Telnyx body is {} bytes", body.len());
    let timestamp = NOW.to_string();
    let request = signed_telnyx_request(&key, TELNYX_URL, &body, i64::try_from(NOW).unwrap_or_default());
    let message = [timestamp.as_bytes(), b"|", body.as_bytes()].concat();
    let public_key = <[u8; 32]>::try_from(base64_standard(&key.public_key)).unwrap_or([0; 32]);
    let signature =
        <[u8; 64]>::try_from(base64_standard(header(&request, "telnyx-signature-ed25519"))).unwrap_or([0; 64]);
    Case {
        name: "telnyx",
        what: "message.received, 1.1 KB JSON body, Ed25519",
        verifier: Box::new(TelnyxWebhook::new(&key.public_key).unwrap_or_else(|e| panic!("{e}"))),
        primitive: checked("telnyx", Primitive::Ed25519 { public_key, message, signature }),
        request,
    }
}

/// Every provider's case, each checked (the verifier accepts it, the primitive matches it).
pub(crate) fn cases() -> Vec<Case> {
    let cases = vec![twilio(), plivo(), vonage(), telnyx()];
    for case in &cases {
        let _ = case.verify();
    }
    cases
}

/// The segment-estimation bodies: a 320-character GSM-7 body and a 320-character UCS-2 one.
pub(crate) fn segment_bodies() -> Vec<(&'static str, String)> {
    let gsm7 = "Your order #4521 has shipped! Track it at example.com/t/4521 {ref: [A-17]} and reply STOP to opt out. ";
    let ucs2 = "Ваш заказ №4521 отправлен 📦 Отследить: example.com/t/4521. Ответьте STOP для отказа. ";
    vec![("gsm7_320", gsm7.chars().cycle().take(320).collect()), ("ucs2_320", ucs2.chars().cycle().take(320).collect())]
}
