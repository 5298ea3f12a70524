//! Plivo webhooks (T220–T232 and the V3 signatures of docs/behavior.md, "Plivo V3").

use base64::Engine as _;
use proptest::prelude::*;
use sms_sdk::provider::plivo::{PlivoWebhook, signature_v2};
use sms_sdk::testing::webhooks::{SignedRequest, form_body, signed_plivo_request, signed_plivo_v3_request};
use sms_sdk::webhook::EventKind;
use sms_sdk::webhook::event::KeywordSource;

use super::ThroughAny as _;
use super::{assert_ambiguous, assert_payload_error, padded, reason, status};

const TOKEN: &str = "plivo-auth-token";
const URL: &str = "https://example.com/webhooks/plivo";
const UUID: &str = "db3ce55a-7f1d-11e1-8ea7-1231380bc196";

fn status_params(s: &'static str, code: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![
        ("MessageUUID", UUID),
        ("Status", s),
        ("From", "+15005550006"),
        ("To", "+14155550123"),
        ("Units", "1"),
        ("TotalRate", "0.0050"),
        ("TotalAmount", "0.0050"),
        ("ErrorCode", code),
        ("MCC", "310"),
        ("MNC", "260"),
    ]
}

fn verifier() -> PlivoWebhook {
    PlivoWebhook::new(TOKEN).unwrap()
}

#[test]
fn t221_delivered_without_an_error_code() {
    let event = verifier()
        .verify(&signed_plivo_request(TOKEN, URL, &status_params("delivered", "000"), "12345").as_request())
        .unwrap();
    assert_eq!(event.type_name(), "message.delivered");
    assert_eq!((status(&event).provider_id.as_str(), status(&event).provider_status.as_str()), (UUID, "delivered"));
    assert_eq!(event.dedupe_key, format!("plivo:{UUID}:delivered"));
    assert_eq!(status(&event).error_code, None);
    assert!(serde_json::to_value(&event).unwrap().get("error_code").is_none());
}

#[test]
fn t222_statuses_with_an_error_code() {
    for (s, expected) in [
        ("queued", "message.queued"),
        ("sent", "message.sent"),
        ("undelivered", "message.undelivered"),
        ("failed", "message.undelivered"),
    ] {
        let event =
            verifier().verify(&signed_plivo_request(TOKEN, URL, &status_params(s, "30"), "1").as_request()).unwrap();
        assert_eq!((event.type_name(), status(&event).error_code.as_deref()), (expected, Some("30")));
    }
}

#[test]
fn t223_unmapped_status() {
    let event =
        verifier().verify(&signed_plivo_request(TOKEN, URL, &status_params("read", "000"), "1").as_request()).unwrap();
    assert_eq!(event.kind, EventKind::Unrecognized { provider_event_type: "read".into() });
}

#[test]
fn t224_inbound_and_keywords() {
    let params = [
        ("MessageUUID", "b1"),
        ("From", "+14155550123"),
        ("To", "+15005550006"),
        ("Text", "Hi Plivo"),
        ("Type", "sms"),
    ];
    let event = verifier().verify(&signed_plivo_request(TOKEN, URL, &params, "7").as_request()).unwrap();
    let EventKind::Received(m) = &event.kind else { panic!() };
    assert_eq!((m.body.as_str(), event.dedupe_key.as_str()), ("Hi Plivo", "plivo:b1:received"));
    let params = [
        ("MessageUUID", "b1"),
        ("From", "+14155550123"),
        ("To", "+15005550006"),
        ("Text", "UNSUBSCRIBE"),
        ("Type", "sms"),
    ];
    let event = verifier().verify(&signed_plivo_request(TOKEN, URL, &params, "7").as_request()).unwrap();
    let EventKind::OptedOut(m) = &event.kind else { panic!() };
    assert_eq!((m.source, m.keyword.as_str()), (KeywordSource::Keyword, "UNSUBSCRIBE"));
}

#[test]
fn t225_media() {
    let params = [
        ("MessageUUID", "b1"),
        ("From", "+14155550123"),
        ("To", "+15005550006"),
        ("Text", ""),
        ("Type", "mms"),
        ("Media0", "https://media.plivo.com/0"),
        ("Media1", "https://media.plivo.com/1"),
    ];
    let event = verifier().verify(&signed_plivo_request(TOKEN, URL, &params, "7").as_request()).unwrap();
    let EventKind::Received(m) = &event.kind else { panic!() };
    assert_eq!(m.media_urls, ["https://media.plivo.com/0", "https://media.plivo.com/1"]);
}

#[test]
fn t226_main_account_signature_is_enough() {
    let valid = signature_v2(TOKEN, URL, "998877");
    assert_eq!(valid, "UhcQ8VDU4kIPIWaGZA7LfPd3IVP5vD+04DO6GBJ0ZoU=");
    let request = SignedRequest::new("POST", URL, form_body(&status_params("delivered", "000")))
        .header("x-plivo-signature-v2", "subaccount-signature-we-cannot-check")
        .header("x-plivo-signature-ma-v2", &valid)
        .header("x-plivo-signature-v2-nonce", "998877");
    assert!(verifier().verify(&request.as_request()).is_ok());
}

#[test]
fn t227_get_callbacks() {
    let url = format!("{URL}?{}", form_body(&status_params("delivered", "000")));
    let sig = signature_v2(TOKEN, &url, "1");
    assert_eq!(sig, "WL00NFEuQE44Sg/e87wN+XQqtl6cO2pp74UumHfHwMo=");
    let request = SignedRequest::new("GET", &url, "")
        .header("x-plivo-signature-v2", &sig)
        .header("x-plivo-signature-v2-nonce", "1");
    assert_eq!(verifier().verify(&request.as_request()).unwrap().type_name(), "message.delivered");
}

#[test]
fn t228_missing_uuid() {
    assert_payload_error(verifier().verify(&signed_plivo_request(TOKEN, URL, &[("Status", "sent")], "1").as_request()));
}

#[test]
fn t229_signature_failures() {
    let params = status_params("delivered", "000");
    let wrong_token = signed_plivo_request("other", URL, &params, "1");
    let err = verifier().verify(&wrong_token.as_request()).unwrap_err();
    assert_eq!((err.reason(), err.provider()), (Some("invalid_signature"), "plivo"));
    let nonce = signed_plivo_request(TOKEN, URL, &params, "1").header("x-plivo-signature-v2-nonce", "2");
    assert_eq!(reason(verifier().verify(&nonce.as_request())), "invalid_signature");
    let elsewhere = signed_plivo_request(TOKEN, "https://example.com/other", &params, "1").received_at(URL);
    assert_eq!(reason(verifier().verify(&elsewhere.as_request())), "invalid_signature");
    let bare = SignedRequest::new("POST", URL, form_body(&params));
    assert_eq!(reason(verifier().verify(&bare.as_request())), "missing_signature");
}

#[test]
fn t230_v2_does_not_sign_the_body() {
    let signed = signed_plivo_request(TOKEN, URL, &status_params("delivered", "000"), "1");
    let edited = SignedRequest { body: form_body(&status_params("undelivered", "000")).into_bytes(), ..signed };
    assert_eq!(verifier().verify(&edited.as_request()).unwrap().type_name(), "message.undelivered");
}

#[test]
fn t231_public_url_behind_a_proxy() {
    let signed = signed_plivo_request(TOKEN, URL, &status_params("delivered", "000"), "1")
        .received_at("http://127.0.0.1:8080/webhooks/plivo");
    assert!(verifier().public_url(URL).verify(&signed.as_request()).is_ok());
}

#[test]
fn t232_contract_tampered_nonce() {
    let verifier = PlivoWebhook::new("plivo-token").unwrap();
    let signed = signed_plivo_request("plivo-token", URL, &status_params("delivered", "000"), "5");
    assert!(verifier.verify(&signed.as_request()).is_ok());
    assert!(
        verifier
            .verify(&signed.header("x-plivo-signature-v2-nonce", "6").as_request())
            .unwrap_err()
            .is_authentication()
    );
}

const V3_PARAMS: [(&str, &str); 5] = [
    ("From", "14155550123"),
    ("To", "15005550006"),
    ("Text", "STOP"),
    ("Type", "sms"),
    ("MessageUUID", "2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c"),
];

#[test]
fn v3_signs_the_parameters() {
    let verifier = PlivoWebhook::new("plivo-token").unwrap();
    let url = "https://example.com/sms/inbound?tenant=acme";
    let signed = signed_plivo_v3_request("plivo-token", url, &V3_PARAMS, "918273645");
    assert_eq!(signed.headers["x-plivo-signature-v3"], "rYoHZgPIXdBjAoDNjkIy3A1vGSDr099o3atv+qSBw04=");
    assert_eq!(verifier.verify(&signed.as_request()).unwrap().type_name(), "recipient.opted_out");
    // V3 decides: a body edit that V2 would miss is caught.
    let mut edited = V3_PARAMS;
    edited[2] = ("Text", "Hello");
    let tampered = SignedRequest { body: form_body(&edited).into_bytes(), ..signed.clone() };
    assert_eq!(reason(verifier.verify(&tampered.as_request())), "invalid_signature");
    // V3 signs the query too.
    let moved = signed.clone().received_at("https://example.com/sms/inbound?tenant=acmf");
    assert_eq!(reason(verifier.verify(&moved.as_request())), "invalid_signature");
    // Several signatures: any match is enough.
    let several = signed.clone().header("x-plivo-signature-v3", "AAAA, rYoHZgPIXdBjAoDNjkIy3A1vGSDr099o3atv+qSBw04=");
    assert!(verifier.verify(&several.as_request()).is_ok());
    // A V3 signature without its nonce is refused.
    let mut headers = signed.headers.clone();
    headers.remove("x-plivo-signature-v3-nonce");
    let no_nonce = SignedRequest { headers, ..signed };
    assert_eq!(reason(verifier.verify(&no_nonce.as_request())), "missing_signature");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_signed_change_fails(text in "[a-zA-Z0-9]{1,30}", index in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let verifier = PlivoWebhook::new(TOKEN).unwrap();
        let params = [("MessageUUID", "b1"), ("From", "+14155550123"), ("To", "+15005550006"), ("Text", text.as_str())];
        let signed = signed_plivo_v3_request(TOKEN, URL, &params, "424242");
        prop_assert!(verifier.verify(&signed.as_request()).is_ok());
        let mut changed = text.clone().into_bytes();
        let at = index.index(changed.len());
        changed[at] = if changed[at] == b'z' { b'y' } else { b'z' };
        let changed = String::from_utf8(changed).unwrap();
        let edited = [("MessageUUID", "b1"), ("From", "+14155550123"), ("To", "+15005550006"), ("Text", changed.as_str())];
        let tampered = SignedRequest { body: form_body(&edited).into_bytes(), ..signed.clone() };
        prop_assert!(verifier.verify(&tampered.as_request()).is_err());
        let moved = signed.clone().received_at("https://example.com/webhooks/plivx");
        prop_assert!(verifier.verify(&moved.as_request()).is_err());
        let mut sig = base64::engine::general_purpose::STANDARD.decode(signed.headers["x-plivo-signature-v3"].as_bytes()).unwrap();
        let at = index.index(sig.len());
        sig[at] ^= flip;
        let forged = signed.clone().header("x-plivo-signature-v3", &base64::engine::general_purpose::STANDARD.encode(sig));
        prop_assert!(verifier.verify(&forged.as_request()).is_err());
    }
}

fn inbound_params() -> Vec<(&'static str, &'static str)> {
    vec![
        ("MessageUUID", "b1"),
        ("From", "+14155550123"),
        ("To", "+15005550006"),
        ("Text", "Hi"),
        ("Type", "mms"),
        ("Media0", "https://media.plivo.com/0"),
    ]
}

#[test]
fn a_repeated_parameter_the_normalizer_reads_is_ambiguous() {
    for key in ["MessageUUID", "From", "To", "Text", "Media0"] {
        let mut params = inbound_params();
        params.push((key, "x"));
        assert_ambiguous(verifier().verify(&signed_plivo_request(TOKEN, URL, &params, "1").as_request()), key);
        assert_ambiguous(verifier().verify(&signed_plivo_v3_request(TOKEN, URL, &params, "1").as_request()), key);
    }
    let mut twice = status_params("delivered", "30");
    twice.extend([("Status", "undelivered"), ("ErrorCode", "000")]);
    assert_ambiguous(verifier().verify(&signed_plivo_request(TOKEN, URL, &twice, "1").as_request()), "Status");
    // Repeats of parameters the normalizer does not read stay allowed.
    let mut params = inbound_params();
    params.extend([("Type", "sms"), ("Units", "1"), ("Units", "2")]);
    assert!(verifier().verify(&signed_plivo_v3_request(TOKEN, URL, &params, "1").as_request()).is_ok());
}

#[test]
fn media_stop_at_the_first_missing_index() {
    let mut params = inbound_params();
    params.extend([("Media1", "m1"), ("Media3", "m3"), ("Media01", "not an index")]);
    let event = verifier().verify(&signed_plivo_request(TOKEN, URL, &params, "1").as_request()).unwrap();
    let EventKind::Received(m) = &event.kind else { panic!() };
    assert_eq!(m.media_urls, ["https://media.plivo.com/0", "m1"]);
}

#[test]
fn more_than_1024_parameters_are_refused_before_the_signature_is_checked() {
    let limit = sms_sdk::webhook::WebhookError::TooManyParameters { provider: "plivo", limit: 1024 };
    // V3 counts the query's parameters and the body's together.
    let url = format!("{URL}?tenant=acme&b=1");
    let at_limit = padded(&inbound_params(), 1022 - inbound_params().len());
    assert!(verifier().verify(&signed_plivo_v3_request(TOKEN, &url, &at_limit, "1").as_request()).is_ok());
    let over = padded(&inbound_params(), 1023 - inbound_params().len());
    let signed = signed_plivo_v3_request(TOKEN, &url, &over, "1");
    let error = verifier().verify(&signed.as_request()).unwrap_err();
    assert_eq!(error, limit);
    assert_eq!((error.code(), error.is_authentication()), ("webhook_payload", false));
    let forged = signed.clone().header("x-plivo-signature-v3", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    assert_eq!(verifier().verify(&forged.as_request()).unwrap_err(), limit);
    assert!(verifier().max_params(1025).verify(&signed.as_request()).is_ok());
    // V2 does not sign the body: it is counted when the normalizer reads it, after the signature.
    let over = padded(&inbound_params(), 1025 - inbound_params().len());
    let v2 = signed_plivo_request(TOKEN, URL, &over, "1");
    assert_eq!(verifier().verify(&v2.as_request()).unwrap_err(), limit);
    let forged = v2.header("x-plivo-signature-v2", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    assert_eq!(reason(verifier().verify(&forged.as_request())), "invalid_signature");
}

#[test]
fn debug_hides_the_token_and_the_url_password() {
    let debug = format!("{:?}", verifier().public_url("https://user:url-password@example.com/p"));
    assert!(!debug.contains(TOKEN) && !debug.contains("url-password"), "{debug}");
}
