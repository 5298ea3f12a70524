//! Hostile webhooks: every provider's verifier and normalizer, on real signed requests mutated
//! byte by byte (re-signed, so that the mutation reaches the normalizer, or not, so that it is
//! refused), on random requests, and on large structured ones (many parameters, long URLs and
//! headers, deep JSON, huge counts).
//!
//! Bounds asserted on every execution: no panic, a typed error (or an event), and allocation
//! within a small multiple of the request's size: 4 bytes per input byte for everything refused
//! before or at the signature check (a parameter with `+`, `%XX` and bytes that are not UTF-8 is
//! copied to replace the `+`, decoded into a growing buffer and made valid UTF-8: about 3.3
//! bytes per byte of a 1 MiB body, found by a long run), plus 256 KiB for the up to 1,024
//! parameters decoded to check a signature (their pairs and sorted views take about 150 bytes
//! each, however short the parameter), and [`AUTHENTIC`] for a request that got through it (the
//! normalizer builds the event and its `raw` copy of the payload).

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderName, HeaderValue};
use sha2::Digest as _;
#[cfg(feature = "sinch")]
use sms_sdk::SinchWebhook;
#[cfg(feature = "aws")]
use sms_sdk::provider::aws::AwsWebhook;
#[cfg(feature = "sinch")]
use sms_sdk::provider::sinch;
use sms_sdk::provider::{plivo, telnyx, twilio, vonage};
#[cfg(feature = "aws")]
use sms_sdk::testing::webhooks::AWS_SNS_TEST_CERTIFICATE;
use sms_sdk::testing::webhooks::{SignedRequest, TelnyxKeyPair, form_body, parse_unverified};
use sms_sdk::webhook::{SmsEvent, WebhookError, WebhookVerifier};
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

const NOW: u64 = 1_700_000_000;
const TWILIO_TOKEN: &str = "fuzz-twilio-token";
const PLIVO_TOKEN: &str = "fuzz-plivo-token";
const VONAGE_SECRET: &str = "fuzz-vonage-signature-secret";
#[cfg(feature = "sinch")]
const SINCH_SECRET: &str = "fuzz-sinch-webhook-secret";
const NONCE: &str = "918273645";

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
        }
    }

    fn form(self) -> bool {
        matches!(self, Self::Twilio | Self::Plivo)
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
/// signed SNS envelopes of the fixtures).
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
    }
}

/// The decoded pairs of a form body, as a signer sees them.
fn pairs(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

/// `payload` sent to `url` as `provider` would send it, correctly signed: a form POST (Twilio,
/// Plivo V3), a GET with the payload as query (one case in eight, for the form providers), or
/// a JSON POST (Twilio's `bodySHA256` form one case in eight; for AWS, an SNS envelope signed
/// with the test key, see `aws::resigned`).
fn signed(provider: Provider, url: &str, payload: &[u8], rng: &mut fastrand::Rng) -> SignedRequest {
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
];

/// The header names of every provider's signed requests, and one no verifier reads.
static HEADERS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    let mut names = vec!["x-forwarded-host".to_owned(), "x-plivo-signature-ma-v2".to_owned()];
    // With raw message delivery SNS posts the bare message: refused whatever else it has.
    #[cfg(feature = "aws")]
    names.push("x-amz-sns-rawdelivery".to_owned());
    for &provider in PROVIDERS {
        for seed in 0..16 {
            let request = signed(provider, URLS[0], &payloads(provider)[0], &mut fastrand::Rng::with_seed(seed));
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
/// AWS, an envelope with a large message or many members).
fn large_payload(provider: Provider, rng: &mut fastrand::Rng) -> Vec<u8> {
    #[cfg(feature = "aws")]
    if provider == Provider::Aws {
        return aws::large_envelope(rng);
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
    let (how, request, authentic) = match rng.u8(..20) {
        // A mutated payload, correctly signed: through the verifier into the normalizer.
        0..=6 => {
            let mut payload = payload;
            mutate(rng, &mut payload, other, limit);
            ("re-signed", signed(provider, url, &payload, rng), true)
        }
        // A signed request, then mutated: refused (or, where the change is unsigned, accepted).
        7..=15 => {
            let mut request = signed(provider, url, &payload, rng);
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
        _ => ("large", signed(provider, url, &large_payload(provider, rng), rng), true),
    };
    Case { provider, how, request, authentic: authentic && limits.is_none(), limits }
}

/// `provider`'s verifier: with the default settings, or with `limits` (body, parameters,
/// tolerance), in which case the URL-signing verifiers also rebuild the URL from forwarded
/// headers (and the AWS verifier takes the tolerance as its optional age limit).
fn verifier(provider: Provider, limits: Option<(usize, usize, Duration)>) -> Box<dyn WebhookVerifier> {
    let (body, params, tolerance) = limits.unwrap_or((
        sms_sdk::webhook::DEFAULT_MAX_BODY,
        sms_sdk::webhook::DEFAULT_MAX_PARAMS,
        sms_sdk::webhook::DEFAULT_TOLERANCE,
    ));
    let proxy = limits.is_some();
    match provider {
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
    }
}

/// A case and the verifier it is sent to (shown as the case).
struct Armed {
    case: Case,
    verifier: Box<dyn WebhookVerifier>,
}

impl std::fmt::Debug for Armed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.case.fmt(f)
    }
}

/// Whether `error` is found before or at the signature check.
fn before_verification(error: &WebhookError) -> bool {
    error.is_authentication()
        || matches!(error, WebhookError::BodyTooLarge { .. } | WebhookError::TooManyParameters { .. })
}

/// The typed-error invariants of any result.
fn typed(provider: Provider, result: &Result<SmsEvent, WebhookError>) -> Result<(), String> {
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

/// Fuzzes `provider`'s verifier with `ci` cases in CI, after checking that its work is linear
/// in the number of parameters (or the JSON body's length) of an authentic request.
pub(crate) fn fuzz_verifier(name: &'static str, provider: Provider, ci: u64) {
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        |rng| {
            let case = verifier_case(provider, rng);
            let verifier = verifier(provider, case.limits);
            Armed { case, verifier }
        },
        |armed| armed.case.size(),
        |armed| armed.verifier.verify_at(&armed.case.request.as_request(), now()),
        |Armed { case, .. }, result| {
            typed(provider, result)?;
            if case.authentic && result.as_ref().is_err_and(WebhookError::is_authentication) {
                return Err(format!("a correctly signed request was refused: {result:?}"));
            }
            Ok(if result.as_ref().is_err_and(before_verification) { UNVERIFIED } else { AUTHENTIC })
        },
    );
    let _exclusive = super::engine::exclusive();
    let url = URLS[1];
    // The same request shape at both sizes.
    let rng = || fastrand::Rng::with_seed(7);
    // Parameters under the limit, or a JSON array of objects: linear verification.
    let make = |n: usize| {
        let payload = if provider.form() {
            (0..n).map(|i| format!("k{i}=v{i}")).collect::<Vec<_>>().join("&").into_bytes()
        } else {
            format!(r#"{{"message_uuid":"u","data":[{}]}}"#, vec![r#"{"a":"b\u00e9"}"#; n].join(",")).into_bytes()
        };
        signed(provider, url, &payload, &mut rng())
    };
    let verifier = verifier(provider, Some((usize::MAX, usize::MAX, Duration::MAX)));
    let verify = |request: &SignedRequest| {
        let _ = verifier.verify_at(&request.as_request(), now());
    };
    let n = if provider.form() { 1000 } else { 2000 };
    assert_linear(&format!("{name}: a request {n} parameters or objects long"), n, make, verify);
    // A long URL.
    let make = |n: usize| signed(provider, &format!("https://example.com/{}?a=b", "p/%41".repeat(n)), b"", &mut rng());
    assert_linear(&format!("{name}: a long URL"), 4000, make, verify);
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
    let request = if provider.form() && rng.u8(..4) == 0 {
        SignedRequest::new("GET", &format!("https://example.com/hook?{}", text(&payload)), Vec::new())
    } else {
        SignedRequest::new("POST", "https://example.com/hook", payload)
    };
    Case { provider, how, request, authentic: false, limits: None }
}

/// Fuzzes `provider`'s normalizer (`parse_unverified`: the parsing a verified request gets).
pub(crate) fn fuzz_normalizer(name: &'static str, provider: Provider, ci: u64) {
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
