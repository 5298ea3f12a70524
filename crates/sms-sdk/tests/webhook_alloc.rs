//! Work done before a webhook's signature is checked is bounded: a hostile 1 MiB body is refused
//! with less than 4 MB allocated, for every provider's verifier. A separate test binary, because
//! it counts every allocation of the process through its global allocator.

#![cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]

use std::time::{Duration, SystemTime};

use sms_sdk::testing::webhooks::SignedRequest;
use sms_sdk::webhook::{WebhookError, WebhookVerifier};
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

const MIB: usize = 1024 * 1024;
/// What a refusal may allocate in all.
const BUDGET: usize = 4_000_000;
const URL: &str = "https://example.com/sms/inbound?tenant=acme";
const NOW: u64 = 1_700_000_000;

/// `unit` repeated up to `len` bytes (whole units only).
fn repeated(unit: &str, len: usize) -> Vec<u8> {
    unit.as_bytes().iter().copied().cycle().take(len / unit.len() * unit.len()).collect()
}

/// Hostile form bodies of about 1 MiB: many empty parameters, many repeated ones, long keys,
/// and long percent-encoded values.
fn hostile_forms() -> Vec<(&'static str, Vec<u8>)> {
    let long_keys = (0..1000).map(|i| format!("{}{i}=1", "k".repeat(1040))).collect::<Vec<_>>().join("&");
    let percent = (0..1000).map(|i| format!("v{i}={}", "%41".repeat(340))).collect::<Vec<_>>().join("&");
    vec![
        ("a&a&…", repeated("a&", MIB)),
        ("a=1&a=1&…", repeated("a=1&", MIB)),
        ("long keys", long_keys.into_bytes()),
        ("many %XX", percent.into_bytes()),
        ("one %XX value", format!("Body={}", "%41".repeat(MIB / 3 - 2)).into_bytes()),
    ]
}

/// Verifies `request` and returns the error and the bytes allocated meanwhile.
fn measure(verifier: &dyn WebhookVerifier, request: &SignedRequest) -> (WebhookError, usize) {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(NOW);
    let region = Region::new(GLOBAL);
    let result = verifier.verify_at(&request.as_request(), now);
    let allocated = region.change().bytes_allocated;
    match result {
        Err(error) => (error, allocated),
        Ok(event) => panic!("a hostile body was accepted: {event:?}"),
    }
}

fn check(case: &str, verifier: &dyn WebhookVerifier, request: &SignedRequest, parameters: usize) {
    assert!(request.body.len() <= MIB, "{case}: the body is {} bytes", request.body.len());
    let (error, allocated) = measure(verifier, request);
    println!("{:<8} {case:<22} {:>9} bytes allocated: {error}", verifier.provider(), allocated);
    assert!(allocated < BUDGET, "{} {case}: {allocated} bytes allocated ({error})", verifier.provider());
    if parameters > 1024 {
        assert!(!error.is_authentication(), "{case}: {error:?}");
        assert_eq!(error.code(), "webhook_payload", "{case}: {error:?}");
    }
}

fn parameters(body: &[u8]) -> usize {
    body.split(|b| *b == b'&').filter(|s| !s.is_empty()).count()
}

#[test]
fn hostile_bodies_are_refused_with_little_allocation() {
    let form = |body: &[u8]| SignedRequest::new("POST", URL, body.to_vec());
    let twilio = TwilioWebhook::new("twilio-token").unwrap();
    let plivo = PlivoWebhook::new("plivo-token").unwrap();
    for (case, body) in hostile_forms() {
        let count = parameters(&body);
        let request = form(&body)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("x-twilio-signature", "AAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        check(case, &twilio, &request, count);
        let v3 = form(&body)
            .header("x-plivo-signature-v3", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            .header("x-plivo-signature-v3-nonce", "1");
        check(case, &plivo, &v3, count);
        let v2 = form(&body)
            .header("x-plivo-signature-v2", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            .header("x-plivo-signature-v2-nonce", "1");
        check(case, &plivo, &v2, 0);
    }

    let json_bodies = [
        ("deep nesting", repeated("[", MIB)),
        ("many keys", [b"{".as_slice(), &repeated("\"a\":1,", MIB - 16), b"\"b\":1}"].concat()),
        ("long string", [b"{\"text\":\"".as_slice(), &repeated("\\u0041", MIB - 16), b"\"}"].concat()),
    ];
    let telnyx = TelnyxWebhook::new("A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=").unwrap();
    let vonage = VonageWebhook::new("vonage-secret").unwrap();
    let forged_jwt =
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3MDAwMDAwMDB9.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    for (case, body) in json_bodies {
        let telnyx_request = SignedRequest::new("POST", URL, body.clone())
            .header("content-type", "application/json")
            .header("telnyx-timestamp", &NOW.to_string())
            .header("telnyx-signature-ed25519", &format!("{}==", "A".repeat(86)));
        check(case, &telnyx, &telnyx_request, 0);
        let vonage_request =
            SignedRequest::new("POST", URL, body.clone()).header("authorization", &format!("Bearer {forged_jwt}"));
        check(case, &vonage, &vonage_request, 0);
        // Twilio JSON is checked through the bodySHA256 of the signed URL.
        let twilio_json = SignedRequest::new("POST", &format!("{URL}&bodySHA256={}", "0".repeat(64)), body)
            .header("content-type", "application/json")
            .header("x-twilio-signature", "AAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        check(case, &twilio, &twilio_json, 0);
    }

    // Header values are input too: a token of a million dots, a long Plivo signature list.
    let dots = format!("Bearer {}", ".".repeat(MIB));
    let request = SignedRequest::new("POST", URL, "{}").header("authorization", &dots);
    check("a token of dots", &vonage, &request, 0);
    let many = vec!["AAAA"; MIB / 5].join(",");
    let request = SignedRequest::new("POST", URL, "a=1")
        .header("x-plivo-signature-v3", &many)
        .header("x-plivo-signature-v3-nonce", "1");
    check("many signatures", &plivo, &request, 0);
}
