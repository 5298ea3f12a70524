//! Vonage webhooks (T233–T243).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use proptest::prelude::*;
use serde_json::json;
use sms_sdk::provider::vonage::{VonageWebhook, sign_jwt};
use sms_sdk::testing::webhooks::{SignedRequest, signed_vonage_request};
use sms_sdk::webhook::EventKind;
use sms_sdk::webhook::event::KeywordSource;

use super::ThroughAny as _;
use super::{assert_payload_error, reason, sha256_hex, status};

const SECRET: &str = "vonage-signature-secret-0123456789";
const URL: &str = "https://example.com/webhooks/vonage";
const NOW: u64 = 1_700_000_000;
const JTI: &str = "00000000-0000-4000-8000-000000000000";

fn at(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds)
}

fn status_body(s: &str) -> String {
    json!({"message_uuid": "aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab", "to": "447700900000", "from": "447700900001",
        "timestamp": "2026-10-08T12:00:00Z", "status": s, "channel": "sms", "usage": {"currency": "EUR", "price": "0.0333"}})
    .to_string()
}

fn verify(body: &str) -> Result<sms_sdk::webhook::SmsEvent, sms_sdk::webhook::WebhookError> {
    let signed = signed_vonage_request(SECRET, URL, body, 1_700_000_000, JTI);
    VonageWebhook::new(SECRET).unwrap().verify_at(&signed.as_request(), at(NOW))
}

#[test]
fn t233_reference_token() {
    let body = r#"{"message_uuid":"aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab","status":"delivered"}"#;
    let signed = signed_vonage_request(SECRET, URL, body, 1_700_000_000, JTI);
    assert_eq!(
        signed.headers["authorization"],
        "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3MDAwMDAwMDAsImp0aSI6IjAwMDAwMDAwLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwMCIsImlzcyI6IlZvbmFnZSIsInBheWxvYWRfaGFzaCI6ImQ1ZWNiYzdhYjc3YjM3NmIyY2Y2MzVhNjg2OWQ0ZGJiMTUzMjIxNzVmOTViNWMxOTI2MGEyN2Y2MjE3ZTRlZmYiLCJhcGlfa2V5IjoidGVzdC1rZXkifQ.22qOx8CA2e5zxw-FVTdNHHBDxpoz1Pjs-ykuV2n2cVI"
    );
    assert_eq!(
        VonageWebhook::new(SECRET).unwrap().verify_at(&signed.as_request(), at(NOW)).unwrap().type_name(),
        "message.delivered"
    );
}

#[test]
fn t234_status_event() {
    let event = verify(&status_body("delivered")).unwrap();
    let s = status(&event);
    assert_eq!(
        (event.type_name(), s.provider_id.as_str(), s.provider_status.as_str()),
        ("message.delivered", "aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab", "delivered")
    );
    assert_eq!((s.to.as_deref(), s.from.as_deref()), (Some("+447700900000"), Some("+447700900001")));
    assert_eq!(event.dedupe_key, "vonage:aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab:delivered");
    let occurred = event.occurred_at.unwrap().format(&time::format_description::well_known::Rfc3339).unwrap();
    assert_eq!(occurred, "2026-10-08T12:00:00Z");
}

#[test]
fn t235_errors_and_filtering() {
    let with_error = |s: &str, code: Option<&str>| {
        let mut body: serde_json::Value = serde_json::from_str(&status_body(s)).unwrap();
        if let Some(code) = code {
            body["error"] = json!({"type": format!("https://developer.vonage.com/api-errors/messages#{code}"), "title": code, "detail": "x"});
        }
        verify(&body.to_string()).unwrap()
    };
    assert_eq!(with_error("submitted", None).type_name(), "message.sent");
    let event = with_error("rejected", Some("1240"));
    assert_eq!((event.type_name(), status(&event).error_code.as_deref()), ("message.undelivered", Some("1240")));
    assert_eq!(with_error("undeliverable", Some("1260")).type_name(), "message.undelivered");
    let event = with_error("rejected", Some("1482"));
    assert_eq!((event.type_name(), status(&event).error_code.as_deref()), ("message.filtered", Some("1482")));
}

#[test]
fn t236_unmapped_status() {
    assert_eq!(
        verify(&status_body("read")).unwrap().kind,
        EventKind::Unrecognized { provider_event_type: "read".into() }
    );
}

fn inbound_body(text: &str) -> String {
    json!({"channel": "sms", "message_uuid": "bbbbbbbb-bbbb-4ccc-8ddd-0123456789ab", "to": "447700900001",
        "from": "447700900000", "timestamp": "2026-10-08T12:01:00Z", "text": text,
        "sms": {"num_messages": "1", "keyword": "STOP"}})
    .to_string()
}

#[test]
fn t237_inbound_keywords() {
    let event = verify(&inbound_body("Stop")).unwrap();
    let EventKind::OptedOut(m) = &event.kind else { panic!("{event:?}") };
    assert_eq!(
        (m.source, m.keyword.as_str(), m.from.as_str(), m.to.as_str()),
        (KeywordSource::Keyword, "STOP", "+447700900000", "+447700900001")
    );
    assert_eq!(event.dedupe_key, "vonage:bbbbbbbb-bbbb-4ccc-8ddd-0123456789ab:received");
    let event = verify(&inbound_body("Thanks!")).unwrap();
    let EventKind::Received(m) = &event.kind else { panic!() };
    assert!(m.media_urls.is_empty());
}

#[test]
fn t238_the_hash_covers_the_exact_bytes() {
    let value: serde_json::Value = serde_json::from_str(&status_body("delivered")).unwrap();
    let compact = value.to_string();
    let pretty = serde_json::to_string_pretty(&value).unwrap();
    let signed = signed_vonage_request(SECRET, URL, &compact, 1_700_000_000, JTI);
    let pretty_under_compact = SignedRequest { body: pretty.clone().into_bytes(), ..signed };
    let verifier = VonageWebhook::new(SECRET).unwrap();
    assert_eq!(reason(verifier.verify_at(&pretty_under_compact.as_request(), at(NOW))), "body_hash_mismatch");
    assert!(verify(&pretty).is_ok());
}

#[test]
fn t239_smuggled_duplicate_keys() {
    let compact = json!({"message_uuid": "aaaaaaaa-bbbb-4ccc-8ddd-0123456789ab", "status": "delivered"}).to_string();
    let signed = signed_vonage_request(SECRET, URL, &compact, 1_700_000_000, JTI);
    let smuggled = format!(r#"{{"message_uuid":"forged",{}"#, &compact[1..]);
    let request = SignedRequest { body: smuggled.into_bytes(), ..signed };
    assert_eq!(
        reason(VonageWebhook::new(SECRET).unwrap().verify_at(&request.as_request(), at(NOW))),
        "body_hash_mismatch"
    );
}

#[test]
fn t240_extra_fields_duplicates_and_missing_uuid() {
    let mut body: serde_json::Value = serde_json::from_str(&status_body("delivered")).unwrap();
    body["future"] = json!({"deep": {"x": 1}});
    let body = body.to_string();
    assert_eq!(verify(&body).unwrap().dedupe_key, verify(&body).unwrap().dedupe_key);
    assert_payload_error(verify(r#"{"status":"delivered"}"#));
}

#[test]
fn t241_wrong_secret_changed_body_and_stale_token() {
    let body = status_body("delivered");
    let verifier = VonageWebhook::new(SECRET).unwrap();
    let other = signed_vonage_request("other-secret", URL, &body, 1_700_000_000, JTI);
    let err = verifier.verify_at(&other.as_request(), at(NOW)).unwrap_err();
    assert_eq!((err.reason(), err.provider()), (Some("invalid_signature"), "vonage"));
    let signed = signed_vonage_request(SECRET, URL, &body, 1_700_000_000, JTI);
    let changed = SignedRequest { body: status_body("rejected").into_bytes(), ..signed };
    assert_eq!(reason(verifier.verify_at(&changed.as_request(), at(NOW))), "body_hash_mismatch");
    let stale = signed_vonage_request(SECRET, URL, &body, 1_700_000_000 - 3600, JTI);
    assert_eq!(reason(verifier.verify_at(&stale.as_request(), at(NOW))), "stale_timestamp");
}

fn with_token(token: &str) -> SignedRequest {
    SignedRequest::new("POST", URL, status_body("delivered")).header("authorization", &format!("Bearer {token}"))
}

#[test]
fn t242_malformed_tokens() {
    let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
    let verifier = VonageWebhook::new(SECRET).unwrap();
    let hash = sha256_hex(status_body("delivered").as_bytes());
    for alg in ["none", "HS512"] {
        let token = format!(
            "{}.{}.sig",
            b64(&format!(r#"{{"alg":"{alg}","typ":"JWT"}}"#)),
            b64(&format!(r#"{{"iat":1700000000,"payload_hash":"{hash}"}}"#))
        );
        assert_eq!(
            reason(verifier.verify_at(&with_token(&token).as_request(), at(NOW))),
            "malformed_signature",
            "{alg}"
        );
    }
    let bare = SignedRequest::new("POST", URL, status_body("delivered"));
    assert_eq!(reason(verifier.verify_at(&bare.as_request(), at(NOW))), "missing_signature");
    assert_eq!(reason(verifier.verify_at(&with_token("a.b").as_request(), at(NOW))), "malformed_signature");
    let no_iat = sign_jwt(SECRET, &json!({"payload_hash": hash}));
    assert_eq!(reason(verifier.verify_at(&with_token(&no_iat).as_request(), at(NOW))), "malformed_signature");
}

#[test]
fn payload_hash_is_required() {
    let token = sign_jwt(SECRET, &json!({"iat": 1_700_000_000}));
    let verifier = VonageWebhook::new(SECRET).unwrap();
    assert_eq!(reason(verifier.verify_at(&with_token(&token).as_request(), at(NOW))), "body_hash_mismatch");
}

#[test]
fn t243_contract_cases() {
    let secret = "vonage-signature-secret";
    let verifier = VonageWebhook::new(secret).unwrap();
    let body = status_body("delivered");
    let event = verifier
        .verify_at(&signed_vonage_request(secret, URL, &body, 1_700_000_000, JTI).as_request(), at(NOW))
        .unwrap();
    assert_eq!(status(&event).to.as_deref(), Some("+447700900000"));
    let submitted = signed_vonage_request(secret, URL, &status_body("submitted"), 1_700_000_000, JTI);
    let swapped = SignedRequest { body: body.into_bytes(), ..submitted };
    assert!(verifier.verify_at(&swapped.as_request(), at(NOW)).unwrap_err().is_authentication());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_signed_change_fails(text in "[a-zA-Z0-9 ]{1,40}", index in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let verifier = VonageWebhook::new(SECRET).unwrap();
        let body = inbound_body(&text);
        let signed = signed_vonage_request(SECRET, URL, &body, 1_700_000_000, JTI);
        prop_assert!(verifier.verify_at(&signed.as_request(), at(NOW)).is_ok());
        let mut changed = signed.body.clone();
        let at_byte = index.index(changed.len());
        changed[at_byte] ^= flip;
        let tampered = SignedRequest { body: changed, ..signed.clone() };
        prop_assert!(verifier.verify_at(&tampered.as_request(), at(NOW)).is_err());
        let token = signed.headers["authorization"].to_str().unwrap().trim_start_matches("Bearer ").to_owned();
        let (signing_input, signature) = token.rsplit_once('.').unwrap();
        let mut sig = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(signature).unwrap();
        let at_byte = index.index(sig.len());
        sig[at_byte] ^= flip;
        let forged = format!("{signing_input}.{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sig));
        let forged = signed.clone().header("authorization", &format!("Bearer {forged}"));
        prop_assert!(verifier.verify_at(&forged.as_request(), at(NOW)).is_err());
    }
}

#[test]
fn a_repeated_key_the_normalizer_reads_is_ambiguous() {
    let body = r#"{"message_uuid":"u1","status":"rejected","status":"delivered"}"#;
    super::assert_ambiguous(verify(body), "status");
    let body = r#"{"message_uuid":"u1","status":"rejected","error":{"type":"x#1240","type":"x#1482"}}"#;
    super::assert_ambiguous(verify(body), "type");
    let body = r#"{"message_uuid":"u1","status":"delivered","channel":"sms","channel":"mms","usage":{"a":1,"a":2}}"#;
    assert_eq!(verify(body).unwrap().type_name(), "message.delivered");
}

#[test]
fn any_clock_and_tolerance_are_fine() {
    let signed = signed_vonage_request(SECRET, URL, &status_body("delivered"), 1_700_000_000, JTI);
    let verifier = VonageWebhook::new(SECRET).unwrap();
    for now in [UNIX_EPOCH, UNIX_EPOCH - Duration::from_secs(u64::from(u32::MAX)), at(u64::from(u32::MAX) * 16)] {
        assert_eq!(reason(verifier.verify_at(&signed.as_request(), now)), "stale_timestamp");
        assert!(verifier.clone().tolerance(Duration::MAX).verify_at(&signed.as_request(), now).is_ok());
    }
    for iat in [json!(1e300), json!(-1e300), json!(u64::MAX), json!(i64::MIN)] {
        let claims = json!({"iat": iat, "payload_hash": "x"});
        let request = with_token(&sign_jwt(SECRET, &claims));
        assert_eq!(reason(verifier.verify_at(&request.as_request(), at(NOW))), "stale_timestamp");
    }
    let long = with_token(&format!("{}.{}.{}", "a".repeat(5000), "b".repeat(5000), "c"));
    assert_eq!(reason(verifier.verify_at(&long.as_request(), at(NOW))), "malformed_signature");
}

#[test]
fn debug_hides_the_secret_the_token_and_the_payload() {
    let verifier = VonageWebhook::new(SECRET).unwrap();
    assert!(!format!("{verifier:?}").contains(SECRET), "{verifier:?}");
    let signed = signed_vonage_request(SECRET, URL, &status_body("delivered"), 1_700_000_000, JTI);
    let debug = format!("{signed:?}");
    let token = signed.headers["authorization"].to_str().unwrap().trim_start_matches("Bearer ");
    assert!(!debug.contains(token) && !debug.contains("447700900000"), "{debug}");
    assert!(debug.contains("authorization"), "{debug}");
}
