//! Random requests through all four verifiers: random bytes, headers, URLs, clocks and limits
//! never panic and always end in a typed error (or an event); a correctly signed request with a
//! random payload is never refused as unauthentic.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;
use sms_sdk::testing::webhooks::{
    SignedRequest, TelnyxKeyPair, signed_plivo_v3_request, signed_telnyx_request, signed_twilio_request,
    signed_vonage_request,
};
use sms_sdk::webhook::{SmsEvent, WebhookError, WebhookVerifier};
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};

const CODES: [&str; 4] = ["webhook_signature", "webhook_payload", "body_too_large", "body_unreadable"];

fn key() -> TelnyxKeyPair {
    TelnyxKeyPair::from_seed([7; 32])
}

/// The four verifiers with the given limits: Twilio, Telnyx, Plivo, Vonage.
fn verifiers(max_body: usize, max_params: usize, tolerance: Duration) -> Vec<Box<dyn WebhookVerifier>> {
    vec![
        Box::new(TwilioWebhook::new("tw-token").unwrap().max_body_bytes(max_body).max_params(max_params)),
        Box::new(TelnyxWebhook::new(&key().public_key).unwrap().max_body_bytes(max_body).tolerance(tolerance)),
        Box::new(PlivoWebhook::new("pl-token").unwrap().max_body_bytes(max_body).max_params(max_params)),
        Box::new(VonageWebhook::new("vo-secret").unwrap().max_body_bytes(max_body).tolerance(tolerance)),
    ]
}

/// Any clock: before or after the epoch, up to the ends `SystemTime` can hold.
fn clock() -> impl Strategy<Value = SystemTime> {
    (any::<bool>(), any::<u64>(), 0u32..1_000_000_000, 0u64..4_000_000_000).prop_map(|(before, far, nanos, near)| {
        let secs = if far % 2 == 0 { far } else { near };
        let offset = Duration::new(secs, nanos);
        let time = if before { UNIX_EPOCH.checked_sub(offset) } else { UNIX_EPOCH.checked_add(offset) };
        time.unwrap_or(UNIX_EPOCH)
    })
}

fn tolerance() -> impl Strategy<Value = Duration> {
    prop_oneof![Just(Duration::MAX), Just(Duration::ZERO), any::<u64>().prop_map(Duration::from_secs)]
}

/// Header text: printable ASCII (what a header value can carry), digits, tokens of three
/// base64url parts, or `Bearer` and one of those.
fn header_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,120}",
        "[0-9]{0,25}",
        "-?[0-9]{1,12}",
        "[A-Za-z0-9_+/=-]{0,60}\\.[A-Za-z0-9_+/=-]{0,60}\\.[A-Za-z0-9_+/=-]{0,60}",
        "Bearer [A-Za-z0-9_.=-]{0,120}",
        "[A-Za-z0-9+/]{0,86}={0,2}(,[A-Za-z0-9+/]{0,43}=?){0,3}",
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..400),
        "([A-Za-z0-9]{0,12}(=[A-Za-z0-9%+]{0,12})?&?){0,40}".prop_map(String::into_bytes),
        "[\\[\\]{}\":,0-9a-z ]{0,200}".prop_map(String::into_bytes),
    ]
}

fn url() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,60}",
        "(https?|HTTP|ftp)://([a-z]{1,5}(:[a-z]{0,5})?@)?(\\[[0-9a-f:]{0,8}\\]|[a-zA-Z.]{0,12})(:[0-9]{0,6})?(/[a-z%0-9]{0,8}){0,3}(\\?[a-zA-Z0-9=&%+]{0,40})?(#[a-z]{0,4})?",
    ]
}

const HEADERS: [&str; 10] = [
    "x-twilio-signature",
    "content-type",
    "telnyx-signature-ed25519",
    "telnyx-timestamp",
    "x-plivo-signature-v3",
    "x-plivo-signature-v3-nonce",
    "x-plivo-signature-v2",
    "x-plivo-signature-v2-nonce",
    "x-plivo-signature-ma-v2",
    "authorization",
];

fn request() -> impl Strategy<Value = SignedRequest> {
    let headers = proptest::collection::vec((proptest::sample::select(HEADERS.to_vec()), header_text()), 0..8);
    let method = prop_oneof![Just("POST".to_owned()), Just("GET".to_owned()), "[A-Za-z]{0,6}"];
    (method, url(), headers, body(), any::<bool>()).prop_map(|(method, url, headers, body, json)| {
        let content_type = if json { "application/json" } else { "application/x-www-form-urlencoded" };
        let mut request = SignedRequest::new(&method, &url, body).header("content-type", content_type);
        for (name, value) in headers {
            request = request.header(name, &value);
        }
        request
    })
}

fn check(verifier: &dyn WebhookVerifier, result: Result<SmsEvent, WebhookError>) -> Result<(), TestCaseError> {
    if let Err(error) = result {
        prop_assert!(CODES.contains(&error.code()), "{error:?}");
        prop_assert_eq!(error.provider(), verifier.provider());
        prop_assert_eq!(error.is_authentication(), error.reason().is_some());
        prop_assert!(!error.to_string().is_empty());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::prop_cases(256)))]

    #[test]
    fn prop_random_webhook_requests_end_in_typed_errors(
        request in request(),
        now in clock(),
        tolerance in tolerance(),
        max_body in prop_oneof![Just(usize::MAX), 0usize..600],
        max_params in prop_oneof![Just(usize::MAX), 0usize..50],
    ) {
        for verifier in verifiers(max_body, max_params, tolerance) {
            check(verifier.as_ref(), verifier.verify_at(&request.as_request(), now))?;
        }
    }

    #[test]
    fn prop_signed_random_payloads_are_never_unauthentic(
        // A random part of a real inbound message (any count of media), then random parameters.
        base in proptest::sample::subsequence(vec![
            ("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageUUID", "u1"), ("From", "+14155550123"),
            ("To", "+15005550006"), ("Body", "hi"), ("Text", "hi"), ("MediaUrl0", "m0"), ("Media0", "m0"),
        ], 0..=8),
        count in prop_oneof!["[0-9]{1,12}", "[0-9]{13,25}", "\\PC{0,4}"],
        extra in proptest::collection::vec((
            prop_oneof![
                proptest::sample::select(vec![
                    "MessageSid", "SmsSid", "MessageStatus", "SmsStatus", "Body", "From", "To", "NumMedia",
                    "MediaUrl0", "MediaUrl3", "OptOutType", "ErrorCode", "MessageUUID", "Status", "Text", "Media0",
                    "Media1",
                ]).prop_map(str::to_owned),
                "\\PC{0,8}",
            ],
            prop_oneof!["\\PC{0,12}", "[0-9]{1,25}", Just("received".to_owned()), Just("delivered".to_owned())],
        ), 0..6),
        json in "\\PC{0,200}",
        now in 0i64..4_000_000_000,
    ) {
        let mut params: Vec<(String, String)> =
            base.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
        params.push(("NumMedia".to_owned(), count));
        params.extend(extra);
        let url = "https://example.com/hook?tenant=a%20b";
        let at = UNIX_EPOCH + Duration::from_secs(u64::try_from(now).unwrap());
        let signed = [
            signed_twilio_request("tw-token", url, &params),
            signed_telnyx_request(&key(), url, &json, now),
            signed_plivo_v3_request("pl-token", url, &params, "n"),
            signed_vonage_request("vo-secret", url, &json, now, "j"),
        ];
        for (index, request) in signed.into_iter().enumerate() {
            // A count taken from the payload must not make verification run on: 10 s at most.
            let verify = move || {
                let verifier = verifiers(usize::MAX, 1024, Duration::from_mins(5)).swap_remove(index);
                (verifier.provider(), verifier.verify_at(&request.as_request(), at))
            };
            let (provider, result) = super::within(Duration::from_secs(10), verify);
            prop_assert!(!result.as_ref().is_err_and(WebhookError::is_authentication), "{provider}: {result:?}");
            check(verifiers(usize::MAX, 1024, Duration::ZERO).swap_remove(index).as_ref(), result)?;
        }
    }
}
