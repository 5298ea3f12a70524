//! Telnyx webhooks (T204–T219).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use proptest::prelude::*;
use serde_json::json;
use sms_sdk::provider::telnyx::__private::verify_signature;
use sms_sdk::provider::telnyx::TelnyxWebhook;
use sms_sdk::testing::webhooks::{SignedRequest, TelnyxKeyPair, signed_telnyx_request};
use sms_sdk::webhook::EventKind;
use sms_sdk::webhook::event::KeywordSource;

use super::ThroughAny as _;
use super::{assert_payload_error, reason, status};

const URL: &str = "https://example.com/webhooks/telnyx";
const T204_BODY: &str = r#"{"data":{"event_type":"message.finalized","id":"evt-9","occurred_at":"2026-10-08T12:00:00.000+00:00","payload":{"id":"40385f64-5717-4562-b3fc-2c963f66afa6","to":[{"phone_number":"+14155550123","status":"delivered"}]}}}"#;

fn at(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds)
}

fn seeded() -> TelnyxKeyPair {
    let mut seed = [0u8; 32];
    for (i, byte) in seed.iter_mut().enumerate() {
        *byte = u8::try_from(i).unwrap();
    }
    TelnyxKeyPair::from_seed(seed)
}

fn envelope(event_type: &str, payload: &serde_json::Value) -> String {
    json!({"data": {"event_type": event_type, "id": "evt-1", "occurred_at": "2026-10-08T12:00:00.000+00:00",
        "payload": payload, "record_type": "event"}, "meta": {"attempt": 1, "delivered_to": URL}})
    .to_string()
}

const NOW: u64 = 1_700_000_000;

fn verify(key: &TelnyxKeyPair, body: &str) -> Result<sms_sdk::webhook::SmsEvent, sms_sdk::webhook::WebhookError> {
    let signed = signed_telnyx_request(key, URL, body, i64::try_from(NOW).unwrap());
    TelnyxWebhook::new(&key.public_key).unwrap().verify_at(&signed.as_request(), at(NOW))
}

#[test]
fn t204_deterministic_signature() {
    let key = seeded();
    assert_eq!(key.public_key, "A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=");
    let signed = signed_telnyx_request(&key, URL, T204_BODY, 1_700_000_000);
    assert_eq!(
        signed.headers["telnyx-signature-ed25519"],
        "riyda61/v66/FPFoXl9IH5fwBhjIsgHJ5/qWUEd0AhT7QqnInkQtTkSNs0Cg/898nXfDWLfN6MOxQvMqoJ+7DQ=="
    );
    let verifier = TelnyxWebhook::new(&key.public_key).unwrap();
    let event = verifier.verify_at(&signed.as_request(), at(NOW)).unwrap();
    assert_eq!(event.type_name(), "message.delivered");
    assert_eq!(status(&event).provider_id, "40385f64-5717-4562-b3fc-2c963f66afa6");
    assert_eq!(event.dedupe_key, "telnyx:evt-9");
    let tampered = SignedRequest { body: T204_BODY.replace("delivered", "delivery_failed").into_bytes(), ..signed };
    assert_eq!(reason(verifier.verify_at(&tampered.as_request(), at(NOW))), "invalid_signature");
}

fn inbound_payload(text: &str) -> serde_json::Value {
    json!({"id": "msg-1", "from": {"phone_number": "+14155550123", "carrier": "T-Mobile"},
        "to": [{"phone_number": "+15005550006", "status": "webhook_delivered"}], "text": text,
        "media": [{"url": "https://media.telnyx.com/a.jpg", "content_type": "image/jpeg"}], "type": "MMS"})
}

#[test]
fn t205_inbound_message() {
    let event = verify(&seeded(), &envelope("message.received", &inbound_payload("Hi from a phone"))).unwrap();
    let EventKind::Received(m) = &event.kind else { panic!("{event:?}") };
    assert_eq!((m.provider_id.as_str(), m.from.as_str(), m.to.as_str()), ("msg-1", "+14155550123", "+15005550006"));
    assert_eq!(
        (m.body.as_str(), m.media_urls.clone()),
        ("Hi from a phone", vec!["https://media.telnyx.com/a.jpg".to_owned()])
    );
    assert_eq!(event.dedupe_key, "telnyx:evt-1");
    let occurred = event.occurred_at.unwrap().format(&time::format_description::well_known::Rfc3339).unwrap();
    assert_eq!(occurred, "2026-10-08T12:00:00Z");
}

fn status_body(event_type: &str, status: &str, errors: Option<serde_json::Value>) -> String {
    let mut payload = json!({"id": "msg-1", "to": [{"phone_number": "+14155550123", "status": status}]});
    if let Some(errors) = errors {
        payload["errors"] = errors;
    }
    envelope(event_type, &payload)
}

#[test]
fn t206_status_mapping() {
    for (event_type, s, expected) in [
        ("message.sent", "sent", "message.sent"),
        ("message.sent", "queued", "message.queued"),
        ("message.finalized", "delivered", "message.delivered"),
        ("message.finalized", "delivery_unconfirmed", "message.sent"),
        ("message.finalized", "delivery_failed", "message.undelivered"),
        ("message.finalized", "sending_failed", "message.undelivered"),
    ] {
        let event = verify(&seeded(), &status_body(event_type, s, None)).unwrap();
        assert_eq!(event.type_name(), expected, "{event_type} {s}");
        assert_eq!((status(&event).provider_status.as_str(), status(&event).to.as_deref()), (s, Some("+14155550123")));
    }
}

#[test]
fn t207_filtered_error_codes() {
    let event =
        verify(&seeded(), &status_body("message.finalized", "delivery_failed", Some(json!([{"code": "40002"}]))))
            .unwrap();
    assert_eq!((event.type_name(), status(&event).error_code.as_deref()), ("message.filtered", Some("40002")));
    let event =
        verify(&seeded(), &status_body("message.finalized", "delivery_failed", Some(json!([{"code": "40001"}]))))
            .unwrap();
    assert_eq!((event.type_name(), status(&event).error_code.as_deref()), ("message.undelivered", Some("40001")));
}

#[test]
fn t208_other_events_are_unrecognized() {
    let event = verify(&seeded(), &envelope("message.link_click", &json!({"id": "msg-1"}))).unwrap();
    assert_eq!(event.kind, EventKind::Unrecognized { provider_event_type: "message.link_click".into() });
    let event = verify(&seeded(), &envelope("message.sent", &json!({"id": "msg-1", "to": [{}]}))).unwrap();
    assert_eq!(event.kind, EventKind::Unrecognized { provider_event_type: "message.sent:no_status".into() });
}

#[test]
fn t209_inbound_help_keyword() {
    let event = verify(&seeded(), &envelope("message.received", &inbound_payload("help"))).unwrap();
    let EventKind::Help(m) = &event.kind else { panic!("{event:?}") };
    assert_eq!((m.source, m.keyword.as_str()), (KeywordSource::Keyword, "HELP"));
}

#[test]
fn t210_extra_fields_and_duplicates() {
    let mut body: serde_json::Value = serde_json::from_str(&status_body("message.sent", "sent", None)).unwrap();
    body["future"] = json!({"x": [1, 2]});
    let body = body.to_string();
    let first = verify(&seeded(), &body).unwrap();
    assert_eq!(verify(&seeded(), &body).unwrap().dedupe_key, first.dedupe_key);
}

#[test]
fn t211_missing_ids_are_payload_errors() {
    assert_payload_error(verify(&seeded(), r#"{"data":{"event_type":"message.received"}}"#));
}

#[test]
fn t212_tampered_body_or_another_key() {
    let body = envelope("message.received", &inbound_payload("Hi from a phone"));
    let key = seeded();
    let signed = signed_telnyx_request(&key, URL, &body, 1_700_000_000);
    let verifier = TelnyxWebhook::new(&key.public_key).unwrap();
    let tampered = SignedRequest { body: body.replace("Hi from", "Hi frum").into_bytes(), ..signed };
    assert_eq!(reason(verifier.verify_at(&tampered.as_request(), at(NOW))), "invalid_signature");
    let other = signed_telnyx_request(&TelnyxKeyPair::generate(), URL, &body, 1_700_000_000);
    assert_eq!(reason(verifier.verify_at(&other.as_request(), at(NOW))), "invalid_signature");
}

#[test]
fn t213_and_t214_freshness_window() {
    let key = seeded();
    let verifier = TelnyxWebhook::new(&key.public_key).unwrap();
    let body = status_body("message.sent", "sent", None);
    for offset in [-301i64, 600] {
        let signed = signed_telnyx_request(&key, URL, &body, 1_700_000_000 + offset);
        assert_eq!(reason(verifier.verify_at(&signed.as_request(), at(NOW))), "stale_timestamp", "{offset}");
    }
    let signed = signed_telnyx_request(&key, URL, &body, 1_700_000_000);
    assert!(verifier.clone().tolerance(Duration::from_mins(1)).verify_at(&signed.as_request(), at(NOW + 30)).is_ok());
}

#[test]
fn t215_a_changed_timestamp_fails() {
    let key = seeded();
    let signed = signed_telnyx_request(&key, URL, T204_BODY, 1_700_000_000).header("telnyx-timestamp", "1699999999");
    let verifier = TelnyxWebhook::new(&key.public_key).unwrap();
    assert_eq!(reason(verifier.verify_at(&signed.as_request(), at(NOW))), "invalid_signature");
}

#[test]
fn t216_no_headers() {
    let verifier = TelnyxWebhook::new(&seeded().public_key).unwrap();
    let request = SignedRequest::new("POST", URL, T204_BODY);
    assert_eq!(reason(verifier.verify_at(&request.as_request(), at(NOW))), "missing_signature");
}

#[test]
fn t217_direct_verification_reasons() {
    let key = seeded().public_key;
    let zeros = sms_sdk_base64(&[0u8; 64]);
    let tolerance = Duration::from_mins(5);
    let check =
        |k: &str, sig: &str, ts: &str| verify_signature(k, sig, ts, b"{}", at(NOW), tolerance).unwrap_err().reason();
    assert_eq!(check(&key, "!!", "1700000000"), Some("malformed_signature"));
    assert_eq!(check("short", &zeros, "1700000000"), Some("invalid_credentials"));
    assert_eq!(check(&key, &zeros, "abc"), Some("malformed_signature"));
}

fn sms_sdk_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn t218_forged_garbage_is_a_signature_error() {
    let verifier = TelnyxWebhook::new(&seeded().public_key).unwrap();
    let request = SignedRequest::new("POST", URL, "not json")
        .header("telnyx-timestamp", "1700000000")
        .header("telnyx-signature-ed25519", &sms_sdk_base64(&[0u8; 64]));
    assert!(verifier.verify_at(&request.as_request(), at(NOW)).unwrap_err().is_authentication());
}

#[test]
fn t219_minimal_finalized_event() {
    let body =
        r#"{"data":{"event_type":"message.finalized","id":"e1","payload":{"id":"m1","to":[{"status":"delivered"}]}}}"#;
    let event = verify(&seeded(), body).unwrap();
    assert_eq!(event.type_name(), "message.delivered");
    assert_eq!((status(&event).to.as_deref(), status(&event).from.as_deref()), (None, None));
}

#[test]
fn a_malformed_public_key_is_a_configuration_error() {
    assert_eq!(TelnyxWebhook::new("short").unwrap_err().kind(), sms_sdk::ErrorKind::Configuration);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_signed_change_fails(text in "[a-zA-Z0-9 ]{1,40}", index in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let key = seeded();
        let verifier = TelnyxWebhook::new(&key.public_key).unwrap();
        let body = envelope("message.received", &inbound_payload(&text));
        let signed = signed_telnyx_request(&key, URL, &body, 1_700_000_000);
        prop_assert!(verifier.verify_at(&signed.as_request(), at(NOW)).is_ok());
        let mut changed = signed.body.clone();
        let at_byte = index.index(changed.len());
        changed[at_byte] ^= flip;
        let tampered = SignedRequest { body: changed, ..signed.clone() };
        prop_assert!(verifier.verify_at(&tampered.as_request(), at(NOW)).is_err());
        let mut sig = base64::engine::general_purpose::STANDARD.decode(signed.headers["telnyx-signature-ed25519"].as_bytes()).unwrap();
        let at_byte = index.index(sig.len());
        sig[at_byte] ^= flip;
        let forged = signed.clone().header("telnyx-signature-ed25519", &sms_sdk_base64(&sig));
        prop_assert!(verifier.verify_at(&forged.as_request(), at(NOW)).is_err());
    }
}

#[test]
fn a_repeated_key_the_normalizer_reads_is_ambiguous() {
    let key = seeded();
    let body = envelope(
        "message.finalized",
        &json!({"id": "m1", "to": [{"phone_number": "+14155550123", "status": "delivered"}], "cost": null}),
    );
    assert_eq!(verify(&key, &body).unwrap().type_name(), "message.delivered");
    for (from, to, named) in [
        (r#""id":"evt-1""#, r#""id":"evt-2","id":"evt-1""#, "id"),
        (r#""status":"delivered""#, r#""status":"delivery_failed","status":"delivered""#, "status"),
        (r#""data":{"#, r#""data":{},"data":{"#, "data"),
        (r#""payload":{"#, r#""payload":{},"payload":{"#, "payload"),
    ] {
        let repeated = body.replacen(from, to, 1);
        assert_ne!(repeated, body);
        super::assert_ambiguous(verify(&key, &repeated), named);
    }
    // Keys the normalizer does not read may repeat.
    for (from, to) in [(r#""meta":"#, r#""meta":[],"meta":"#), (r#""cost":null"#, r#""cost":1,"cost":null"#)] {
        let repeated = body.replacen(from, to, 1);
        assert_ne!(repeated, body);
        assert_eq!(verify(&key, &repeated).unwrap().type_name(), "message.delivered");
    }
}

#[test]
fn any_clock_and_tolerance_are_fine() {
    let key = seeded();
    let signed = signed_telnyx_request(&key, URL, T204_BODY, i64::try_from(NOW).unwrap());
    let verifier = TelnyxWebhook::new(&key.public_key).unwrap();
    let ends = [UNIX_EPOCH, UNIX_EPOCH - Duration::from_secs(u64::from(u32::MAX)), at(u64::from(u32::MAX) * 16)];
    for now in ends {
        assert_eq!(reason(verifier.verify_at(&signed.as_request(), now)), "stale_timestamp");
        assert!(verifier.clone().tolerance(Duration::MAX).verify_at(&signed.as_request(), now).is_ok());
    }
    let huge = signed.clone().header("telnyx-timestamp", &u64::MAX.to_string());
    assert_eq!(reason(verifier.verify_at(&huge.as_request(), at(NOW))), "malformed_signature");
    let largest = signed.header("telnyx-timestamp", &i64::MAX.to_string());
    assert_eq!(
        reason(
            verifier
                .clone()
                .tolerance(Duration::MAX)
                .verify_at(&largest.as_request(), UNIX_EPOCH - Duration::from_secs(1))
        ),
        "invalid_signature"
    );
}
