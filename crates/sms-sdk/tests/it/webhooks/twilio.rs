//! Twilio webhooks (T179–T203 and the port variants of docs/behavior.md, "Twilio URL variants").

use base64::Engine as _;
use http::HeaderMap;
use proptest::prelude::*;
use sms_sdk::provider::twilio::{TwilioWebhook, signature};
use sms_sdk::testing::webhooks::{SignedRequest, form_body, parse_unverified, signed_twilio_request};
use sms_sdk::webhook::event::KeywordSource;
use sms_sdk::webhook::{EventKind, WebhookRequest};

use super::ThroughAny as _;
use super::{assert_ambiguous, assert_payload_error, padded, reason, sha256_hex, status};

const TOKEN: &str = "twilio-auth-token";
const URL: &str = "https://example.com/webhooks/twilio";
const SID: &str = "SM0123456789abcdef0123456789abcdef";

fn inbound() -> Vec<(&'static str, &'static str)> {
    vec![
        ("MessageSid", SID),
        ("SmsSid", SID),
        ("AccountSid", "AC0123456789abcdef0123456789abcdef"),
        ("From", "+14155550123"),
        ("To", "+15005550006"),
        ("Body", "Hello there"),
        ("NumMedia", "0"),
        ("NumSegments", "1"),
        ("SmsStatus", "received"),
    ]
}

fn verifier() -> TwilioWebhook {
    TwilioWebhook::new(TOKEN).unwrap()
}

fn with(extra: &[(&'static str, &'static str)], without: &[&str]) -> Vec<(&'static str, &'static str)> {
    let mut params: Vec<_> = inbound().into_iter().filter(|(k, _)| !without.contains(k)).collect();
    params.extend_from_slice(extra);
    params
}

#[test]
fn t182_signed_inbound_message() {
    let signed = signed_twilio_request(TOKEN, URL, &inbound());
    assert_eq!(signed.headers["x-twilio-signature"], "imXQP6tKgp1jSbzkCpsi4lZ0qT8=");
    let event = verifier().verify(&signed.as_request()).unwrap();
    let EventKind::Received(message) = &event.kind else { panic!("{event:?}") };
    assert_eq!(message.provider_id, SID);
    assert_eq!(
        (message.from.as_str(), message.to.as_str(), message.body.as_str()),
        ("+14155550123", "+15005550006", "Hello there")
    );
    assert!(message.media_urls.is_empty());
    assert_eq!(event.dedupe_key, format!("twilio:{SID}:received"));
    assert_eq!(event.raw()["AccountSid"], "AC0123456789abcdef0123456789abcdef");
}

#[test]
fn t183_media_urls_in_order() {
    let params = with(
        &[("MediaUrl0", "https://api.twilio.com/m0"), ("MediaUrl1", "https://api.twilio.com/m1"), ("NumMedia", "2")],
        &["NumMedia"],
    );
    let event = verifier().verify(&signed_twilio_request(TOKEN, URL, &params).as_request()).unwrap();
    let EventKind::Received(message) = &event.kind else { panic!() };
    assert_eq!(message.media_urls, ["https://api.twilio.com/m0", "https://api.twilio.com/m1"]);
}

#[test]
fn t184_status_mapping() {
    for (s, expected) in [
        ("queued", "message.queued"),
        ("sent", "message.sent"),
        ("delivered", "message.delivered"),
        ("undelivered", "message.undelivered"),
        ("failed", "message.undelivered"),
    ] {
        let params = [("MessageSid", SID), ("MessageStatus", s), ("From", "+15005550006"), ("To", "+14155550123")];
        let event = verifier().verify(&signed_twilio_request(TOKEN, URL, &params).as_request()).unwrap();
        assert_eq!(event.type_name(), expected);
        assert_eq!(status(&event).provider_status, s);
        assert_eq!(status(&event).to.as_deref(), Some("+14155550123"));
        assert_eq!(event.dedupe_key, format!("twilio:{SID}:{s}"));
    }
}

#[test]
fn t185_error_30007_is_filtered() {
    for (code, expected) in [("30007", "message.filtered"), ("30003", "message.undelivered")] {
        let params = [("MessageSid", SID), ("MessageStatus", "undelivered"), ("ErrorCode", code)];
        let event = verifier().verify(&signed_twilio_request(TOKEN, URL, &params).as_request()).unwrap();
        assert_eq!(event.type_name(), expected);
        assert_eq!(status(&event).error_code.as_deref(), Some(code));
    }
}

#[test]
fn t186_unmapped_status_is_unrecognized() {
    let params = [("MessageSid", SID), ("MessageStatus", "read")];
    let event = verifier().verify(&signed_twilio_request(TOKEN, URL, &params).as_request()).unwrap();
    assert_eq!(event.kind, EventKind::Unrecognized { provider_event_type: "read".into() });
}

#[test]
fn t187_provider_opt_out_signals() {
    for (signal, expected) in
        [("STOP", "recipient.opted_out"), ("HELP", "recipient.help"), ("START", "recipient.opted_in")]
    {
        let params = with(&[("Body", "please stop"), ("OptOutType", signal)], &["Body"]);
        let event = verifier().verify(&signed_twilio_request(TOKEN, URL, &params).as_request()).unwrap();
        assert_eq!(event.type_name(), expected);
        let (EventKind::OptedOut(m) | EventKind::OptedIn(m) | EventKind::Help(m)) = &event.kind else { panic!() };
        assert_eq!(
            (m.source, m.keyword.as_str(), m.body.as_str(), m.from.as_str()),
            (KeywordSource::Provider, signal, "please stop", "+14155550123")
        );
    }
}

#[test]
fn t188_keyword_without_a_signal() {
    let params = with(&[("Body", " stop! ")], &["Body"]);
    let event = verifier().verify(&signed_twilio_request(TOKEN, URL, &params).as_request()).unwrap();
    let EventKind::OptedOut(m) = &event.kind else { panic!("{event:?}") };
    assert_eq!((m.source, m.keyword.as_str(), m.body.as_str()), (KeywordSource::Keyword, "STOP", " stop! "));
}

#[test]
fn t189_keyword_detection_can_be_off() {
    let params = with(&[("Body", "STOP")], &["Body"]);
    let event =
        verifier().detect_keywords(false).verify(&signed_twilio_request(TOKEN, URL, &params).as_request()).unwrap();
    assert_eq!(event.type_name(), "message.received");
}

#[test]
fn t190_and_t191_unknown_fields_and_stable_dedupe_keys() {
    let params = with(&[("FutureField", "x"), ("ToCountry", "US"), ("ButtonPayload", "")], &[]);
    let signed = signed_twilio_request(TOKEN, URL, &params);
    let first = verifier().verify(&signed.as_request()).unwrap();
    assert_eq!(first.type_name(), "message.received");
    assert_eq!(verifier().verify(&signed.as_request()).unwrap().dedupe_key, first.dedupe_key);
}

#[test]
fn t192_tampered_body_and_wrong_token() {
    let signed = signed_twilio_request(TOKEN, URL, &inbound());
    let tampered = form_body(&with(&[("Body", "Hello therf")], &["Body"]));
    let forged = SignedRequest { body: tampered.into_bytes(), ..signed.clone() };
    let err = verifier().verify(&forged.as_request()).unwrap_err();
    assert_eq!((err.reason(), err.provider()), (Some("invalid_signature"), "twilio"));
    let other = signed_twilio_request("other-token", URL, &inbound());
    assert_eq!(reason(verifier().verify(&other.as_request())), "invalid_signature");
}

#[test]
fn t193_missing_and_forged_signatures() {
    let unsigned = SignedRequest::new("POST", URL, form_body(&inbound()));
    assert_eq!(reason(verifier().verify(&unsigned.as_request())), "missing_signature");
    let forged = SignedRequest::new("POST", URL, "garbage").header("x-twilio-signature", "forged");
    assert_eq!(reason(verifier().verify(&forged.as_request())), "invalid_signature");
}

#[test]
fn t194_authentic_but_incomplete() {
    assert_payload_error(verifier().verify(&signed_twilio_request(TOKEN, URL, &[("Body", "hi")]).as_request()));
    assert_payload_error(verifier().verify(&signed_twilio_request(TOKEN, URL, &[("MessageSid", SID)]).as_request()));
}

#[test]
fn t195_parse_unverified_is_for_tests_only() {
    let unsigned = SignedRequest::new("POST", URL, form_body(&inbound()));
    assert_eq!(parse_unverified("twilio", &unsigned.as_request()).unwrap().type_name(), "message.received");
}

#[test]
fn t196_proxies_need_the_public_url_or_trusted_headers() {
    let internal = "http://10.0.0.5:3000/webhooks/twilio";
    let signed = signed_twilio_request(TOKEN, URL, &inbound()).received_at(internal);
    assert_eq!(reason(verifier().verify(&signed.as_request())), "invalid_signature");
    assert!(verifier().public_url(URL).verify(&signed.as_request()).is_ok());
    let forwarded = signed.clone().header("x-forwarded-proto", "https").header("x-forwarded-host", "example.com");
    assert_eq!(reason(verifier().verify(&forwarded.as_request())), "invalid_signature");
    assert!(verifier().trust_proxy(true).verify(&forwarded.as_request()).is_ok());
}

#[test]
fn t197_public_url_takes_the_received_query() {
    let signed_url = "https://example.com/webhooks/twilio?tenant=42";
    let signed = signed_twilio_request(TOKEN, signed_url, &inbound());
    assert_eq!(signed.headers["x-twilio-signature"], "BvSEYPKE6tZ8KaF++d6hVuDD7Pg=");
    let received = signed.received_at("http://10.0.0.5:3000/webhooks/twilio?tenant=42");
    assert!(verifier().public_url(URL).verify(&received.as_request()).is_ok());
}

const JSON_BODY: &str = r#"{"MessageSid":"SM0123456789abcdef0123456789abcdef","MessageStatus":"delivered"}"#;
const JSON_HASH: &str = "dc2258e4a020db93938f1f9f391df93c029c22db97cc2bcab82f592f548a4f31";

fn json_request(body: &str, hash: &str, signature: Option<&str>) -> SignedRequest {
    let url = format!("{URL}?bodySHA256={hash}");
    let no_params: [(&str, &str); 0] = [];
    let signature =
        signature.map_or_else(|| sms_sdk::provider::twilio::signature(TOKEN, &url, &no_params), str::to_owned);
    SignedRequest::new("POST", &url, body)
        .header("content-type", "application/json")
        .header("x-twilio-signature", &signature)
}

#[test]
fn t198_json_bodies_are_signed_through_their_hash() {
    let request = json_request(JSON_BODY, JSON_HASH, None);
    assert_eq!(request.headers["x-twilio-signature"], "0WWmms1l+9DOR19ibElk5AZ9oQE=");
    assert_eq!(verifier().verify(&request.as_request()).unwrap().type_name(), "message.delivered");
}

#[test]
fn t199_a_changed_json_body_fails_its_hash() {
    let request = json_request(&JSON_BODY.replace("delivered", "failed"), JSON_HASH, None);
    assert_eq!(reason(verifier().verify(&request.as_request())), "body_hash_mismatch");
}

#[test]
fn t200_malformed_json_is_a_payload_error_only_when_authentic() {
    let malformed = r#"{"MessageSid":"#;
    let hash = sha256_hex(malformed.as_bytes());
    let forged = json_request(malformed, &hash, Some("AAAAAAAAAAAAAAAAAAAAAAAAAAA="));
    assert_eq!(reason(verifier().verify(&forged.as_request())), "invalid_signature");
    let wrong_hash = json_request(malformed, JSON_HASH, None);
    assert_eq!(reason(verifier().verify(&wrong_hash.as_request())), "body_hash_mismatch");
    assert_payload_error(verifier().verify(&json_request(malformed, &hash, None).as_request()));
}

#[test]
fn t202_get_callbacks_sign_the_url_alone() {
    let url = format!("{URL}?{}", form_body(&inbound()));
    assert_eq!(
        url,
        "https://example.com/webhooks/twilio?MessageSid=SM0123456789abcdef0123456789abcdef&SmsSid=SM0123456789abcdef0123456789abcdef&AccountSid=AC0123456789abcdef0123456789abcdef&From=%2B14155550123&To=%2B15005550006&Body=Hello+there&NumMedia=0&NumSegments=1&SmsStatus=received"
    );
    let no_params: [(&str, &str); 0] = [];
    let sig = signature(TOKEN, &url, &no_params);
    assert_eq!(sig, "EGFmfKDADUbxI8F08fHfUiYc4Wc=");
    let request = SignedRequest::new("GET", &url, "").header("x-twilio-signature", &sig);
    let event = verifier().verify(&request.as_request()).unwrap();
    let EventKind::Received(message) = &event.kind else { panic!() };
    assert_eq!(message.body, "Hello there");
}

#[test]
fn t203_contract_cases() {
    let verifier = TwilioWebhook::new("test-token").unwrap();
    let url = "https://example.com/twilio";
    let delivered = [("MessageSid", SID), ("MessageStatus", "delivered"), ("SmsStatus", "delivered")];
    let signed = signed_twilio_request("test-token", url, &delivered);
    assert_eq!(signed.headers["x-twilio-signature"], "+biXYkKZebfA+0+S3dbLs4XRNZE=");
    assert_eq!(verifier.verify(&signed.as_request()).unwrap().type_name(), "message.delivered");
    let stop = [
        ("MessageSid", SID),
        ("From", "+14155550123"),
        ("To", "+15005550006"),
        ("Body", "STOP"),
        ("OptOutType", "STOP"),
    ];
    let signed = signed_twilio_request("test-token", url, &stop);
    assert_eq!(signed.headers["x-twilio-signature"], "EojYjlx3oT0TCkj9mXC3v4f5zh4=");
    let event = verifier.verify(&signed.as_request()).unwrap();
    let EventKind::OptedOut(m) = &event.kind else { panic!() };
    assert_eq!(m.source, KeywordSource::Provider);
    let sent = signed_twilio_request("test-token", url, &[("MessageSid", SID), ("MessageStatus", "sent")]);
    let swapped =
        SignedRequest { body: form_body(&[("MessageSid", SID), ("MessageStatus", "delivered")]).into_bytes(), ..sent };
    assert!(verifier.verify(&swapped.as_request()).unwrap_err().is_authentication());
}

#[test]
fn decisions_port_vectors() {
    let params = [
        ("MessageSid", SID),
        ("MessageStatus", "delivered"),
        ("SmsStatus", "delivered"),
        ("To", "+14155550123"),
        ("From", "+15005550006"),
    ];
    let verifier = TwilioWebhook::new("test-token").unwrap();
    let without_port = signature("test-token", "https://example.com/sms/status", &params);
    assert_eq!(without_port, "asNjT7oIUzyghpAzfJrvks/OXdo=");
    let received = "https://example.com:8443/sms/status";
    let request = SignedRequest::new("POST", received, form_body(&params)).header("x-twilio-signature", &without_port);
    assert!(verifier.verify(&request.as_request()).is_ok());
    let with_port = signature("test-token", received, &params);
    assert_eq!(with_port, "gWLj6jUkIE9uDRmYylc7Ogxkr2Q=");
    let request = request.header("x-twilio-signature", &with_port);
    assert!(verifier.verify(&request.as_request()).is_ok());
}

#[test]
fn oversized_bodies_are_refused_before_reading() {
    let signed = signed_twilio_request(TOKEN, URL, &inbound());
    let err = verifier().max_body_bytes(10).verify(&signed.as_request()).unwrap_err();
    assert_eq!(err.code(), "body_too_large");
    assert!(!err.is_authentication());
}

#[test]
fn an_empty_token_is_a_configuration_error() {
    assert_eq!(TwilioWebhook::new("").unwrap_err().kind(), sms_sdk::ErrorKind::Configuration);
    assert!(!format!("{:?}", verifier()).contains(TOKEN), "Debug never shows the token");
    let _ = WebhookRequest { method: "POST", url: URL, headers: &HeaderMap::new(), body: b"" };
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_signed_change_fails(body in "[a-zA-Z0-9 ]{1,40}", index in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let params = [("MessageSid", SID), ("From", "+14155550123"), ("To", "+15005550006"), ("Body", body.as_str())];
        let signed = signed_twilio_request(TOKEN, URL, &params);
        prop_assert!(verifier().verify(&signed.as_request()).is_ok());
        // One byte of the URL (the path) changes.
        let mut url = signed.url.clone().into_bytes();
        let at = "https://example.com/".len() + index.index(url.len() - "https://example.com/".len());
        url[at] = if url[at] == b'x' { b'y' } else { b'x' };
        let moved = signed.clone().received_at(&String::from_utf8(url).unwrap());
        prop_assert!(verifier().verify(&moved.as_request()).is_err());
        // One byte of a signed parameter value changes.
        let mut changed = body.clone().into_bytes();
        let at = index.index(changed.len());
        changed[at] = if changed[at] == b'q' { b'r' } else { b'q' };
        let changed = String::from_utf8(changed).unwrap();
        let tampered = SignedRequest {
            body: form_body(&[("MessageSid", SID), ("From", "+14155550123"), ("To", "+15005550006"), ("Body", changed.as_str())]).into_bytes(),
            ..signed.clone()
        };
        prop_assert!(verifier().verify(&tampered.as_request()).is_err());
        // One byte of the decoded signature changes.
        let mut sig = base64::engine::general_purpose::STANDARD.decode(signed.headers["x-twilio-signature"].as_bytes()).unwrap();
        let at = index.index(sig.len());
        sig[at] ^= flip;
        let forged = signed.clone().header("x-twilio-signature", &base64::engine::general_purpose::STANDARD.encode(sig));
        prop_assert_eq!(reason(verifier().verify(&forged.as_request())), "invalid_signature");
    }
}

#[test]
fn a_repeated_parameter_the_normalizer_reads_is_ambiguous() {
    let base = with(&[("NumMedia", "1"), ("MediaUrl0", "https://api.twilio.com/m0"), ("ErrorCode", "")], &["NumMedia"]);
    for key in ["MessageSid", "SmsSid", "SmsStatus", "From", "To", "Body", "NumMedia", "MediaUrl0", "ErrorCode"] {
        let mut params = base.clone();
        params.push((key, "x"));
        assert_ambiguous(verifier().verify(&signed_twilio_request(TOKEN, URL, &params).as_request()), key);
    }
    let twice = [("MessageSid", SID), ("MessageStatus", "delivered"), ("MessageStatus", "failed")];
    assert_ambiguous(verifier().verify(&signed_twilio_request(TOKEN, URL, &twice).as_request()), "MessageStatus");
    let signal = with(&[("OptOutType", "STOP"), ("OptOutType", "START")], &[]);
    assert_ambiguous(verifier().verify(&signed_twilio_request(TOKEN, URL, &signal).as_request()), "OptOutType");
    // In a GET callback's URL too.
    let url = format!("{URL}?{}", form_body(&twice));
    let no_params: [(&str, &str); 0] = [];
    let request = SignedRequest::new("GET", &url, "").header("x-twilio-signature", &signature(TOKEN, &url, &no_params));
    assert_ambiguous(verifier().verify(&request.as_request()), "MessageStatus");
    // Repeats of parameters the normalizer does not read are signed like any other: allowed.
    let mut params = base.clone();
    params.extend([("ToCountry", "US"), ("ToCountry", "CA"), ("MediaUrl01", "a"), ("MediaUrl01", "b")]);
    let event = verifier().verify(&signed_twilio_request(TOKEN, URL, &params).as_request()).unwrap();
    assert_eq!(event.raw()["ToCountry"], "US");
}

#[test]
fn a_repeated_json_key_the_normalizer_reads_is_ambiguous() {
    let body = format!(r#"{{"MessageSid":"{SID}","MessageStatus":"delivered","MessageStatus":"failed"}}"#);
    let request = json_request(&body, &sha256_hex(body.as_bytes()), None);
    assert_ambiguous(verifier().verify(&request.as_request()), "MessageStatus");
    let body = format!(r#"{{"MessageSid":"{SID}","MessageStatus":"delivered","Extra":1,"Extra":{{"a":[1]}}}}"#);
    let request = json_request(&body, &sha256_hex(body.as_bytes()), None);
    assert_eq!(verifier().verify(&request.as_request()).unwrap().type_name(), "message.delivered");
}

#[test]
fn num_media_is_bounded_by_what_the_body_holds() {
    let params = with(
        &[
            ("NumMedia", "4000000000"),
            ("MediaUrl0", "https://api.twilio.com/m0"),
            ("MediaUrl7", "https://api.twilio.com/m7"),
        ],
        &["NumMedia"],
    );
    let signed = signed_twilio_request(TOKEN, URL, &params);
    let event = super::within(std::time::Duration::from_secs(10), move || verifier().verify(&signed.as_request()));
    let EventKind::Received(message) = &event.unwrap().kind else { panic!() };
    assert_eq!(message.media_urls, ["https://api.twilio.com/m0", "https://api.twilio.com/m7"]);
    // The count still says which ones are meant.
    let params = with(&[("NumMedia", "1"), ("MediaUrl0", "m0"), ("MediaUrl1", "m1")], &["NumMedia"]);
    let event = verifier().verify(&signed_twilio_request(TOKEN, URL, &params).as_request()).unwrap();
    let EventKind::Received(message) = &event.kind else { panic!() };
    assert_eq!(message.media_urls, ["m0"]);
}

#[test]
fn more_than_1024_parameters_are_refused_before_the_signature_is_checked() {
    let limit = sms_sdk::webhook::WebhookError::TooManyParameters { provider: "twilio", limit: 1024 };
    let at_limit = padded(&inbound(), 1024 - inbound().len());
    assert!(verifier().verify(&signed_twilio_request(TOKEN, URL, &at_limit).as_request()).is_ok());
    let over = padded(&inbound(), 1025 - inbound().len());
    let signed = signed_twilio_request(TOKEN, URL, &over);
    let error = verifier().verify(&signed.as_request()).unwrap_err();
    assert_eq!(error, limit);
    assert_eq!((error.code(), error.is_authentication()), ("webhook_payload", false));
    assert_eq!(error.to_string(), "twilio webhook has more than 1024 parameters");
    let forged = signed.clone().header("x-twilio-signature", "AAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    assert_eq!(verifier().verify(&forged.as_request()).unwrap_err(), limit);
    // Empty segments are not parameters; the limit is configurable.
    let sparse = SignedRequest { body: [b"&&&".as_slice(), &signed.body].concat(), ..signed.clone() };
    assert_eq!(verifier().verify(&sparse.as_request()).unwrap_err(), limit);
    assert!(verifier().max_params(2048).verify(&signed.as_request()).is_ok());
    // GET callbacks count the parameters of the URL.
    let url = format!("{URL}?{}", form_body(&over));
    let no_params: [(&str, &str); 0] = [];
    let request = SignedRequest::new("GET", &url, "").header("x-twilio-signature", &signature(TOKEN, &url, &no_params));
    assert_eq!(verifier().verify(&request.as_request()).unwrap_err(), limit);
}

#[test]
fn debug_hides_the_token_and_the_url_password() {
    let verifier = verifier().public_url("https://hooks:url-password@example.com/webhooks/twilio");
    let debug = format!("{verifier:?}");
    assert!(!debug.contains(TOKEN) && !debug.contains("url-password"), "{debug}");
    assert!(debug.contains("example.com/webhooks/twilio"), "{debug}");
    let request = SignedRequest::new("POST", "https://hooks:url-password@example.com/x?To=%2B1415", "Body=hi");
    let debug = format!("{:?}", request.as_request());
    assert!(!debug.contains("url-password") && !debug.contains("1415") && !debug.contains("hi"), "{debug}");
}
