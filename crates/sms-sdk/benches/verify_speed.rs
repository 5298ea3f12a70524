//! Each webhook verifier next to the bare primitive it is built on, over the same payload:
//! `cargo bench -p sms-sdk --bench verify_speed` (add `-- --quick` for a short run).
//!
//! | group | `verify_at` of | bare primitive, over exactly the bytes the provider signed |
//! |---|---|---|
//! | `twilio` | a form POST of 15 parameters | HMAC-SHA1, key set up once |
//! | `plivo_v3` | a form POST of 15 parameters, V3 signature | HMAC-SHA256, key set up once |
//! | `vonage` | a JSON status with an HS256 bearer JWT | HMAC-SHA256 of `header.claims`, key set up once |
//! | `telnyx` | a 1.1 KB JSON event, Ed25519 | `ed25519-dalek` `verify` with a parsed key |
//!
//! `verify_at` is the whole call a server makes: size and header checks, signature, and the
//! normalized event (its `raw` record included). `parse_unverified` builds the same event from
//! the same request without checking anything: what is left of `verify_at` once it is taken
//! away is the cost of verification itself. The bare HMACs run in two implementations,
//! `ring` and the `hmac` crate with `sha1`/`sha2` (which use the SHA extensions when the CPU
//! has them); the target is half the rate of the faster one (Ed25519: 0.9× `ed25519-dalek`).
//! Without `--bench` (as `cargo test --all-targets` runs it) each function runs once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // bench code: a panic is a failed run

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, criterion_group};
use ed25519_dalek::Verifier as _;
use sms_sdk::testing::webhooks::{
    SignedRequest, TelnyxKeyPair, parse_unverified, signed_plivo_v3_request, signed_telnyx_request,
    signed_twilio_request, signed_vonage_request,
};
use sms_sdk::webhook::WebhookVerifier;
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};

const NOW: i64 = 1_700_000_000;
const URL: &str = "https://example.com/sms/inbound?tenant=acme";

fn now() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(NOW.unsigned_abs())
}

/// An inbound Twilio SMS: 15 parameters, a body with spaces and punctuation to decode.
const TWILIO_PARAMS: [(&str, &str); 15] = [
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
    ("Body", "Hello there! See you at 5pm, ok? (Reply STOP to opt out.)"),
    ("FromCountry", "US"),
    ("To", "+15005550006"),
    ("MessageSid", "SM0123456789abcdef0123456789abcdef"),
    ("From", "+14155550123"),
];

/// A Plivo delivery report: 15 parameters.
const PLIVO_PARAMS: [(&str, &str); 15] = [
    ("From", "14155550123"),
    ("To", "15005550006"),
    ("Status", "delivered"),
    ("MessageUUID", "2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c"),
    ("ParentMessageUUID", "2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c"),
    ("PartInfo", "1 of 1"),
    ("TotalRate", "0.00500"),
    ("TotalAmount", "0.00500"),
    ("Units", "1"),
    ("MCC", "310"),
    ("MNC", "260"),
    ("ErrorCode", "000"),
    ("MessageTime", "2026-11-30 05:00:00+00:00"),
    ("Sequence", "1"),
    ("PowerpackUUID", ""),
];

const VONAGE_BODY: &str = r#"{"message_uuid":"aaaaaaaa-bbbb-cccc-dddd-0123456789ab","to":"447700900000","from":"447700900001","timestamp":"2026-11-30T05:00:00.000Z","status":"delivered","usage":{"currency":"EUR","price":"0.0333"},"channel":"sms","client_ref":"order-1234"}"#;

/// A Telnyx `message.finalized` event of about 1.1 KB.
fn telnyx_body() -> String {
    let body = r#"{"data":{"event_type":"message.finalized","id":"b301ed3f-1490-491f-995f-6e64e69674d4","occurred_at":"2026-11-30T05:00:02.000+00:00","payload":{"completed_at":"2026-11-30T05:00:02.000+00:00","cost":{"amount":"0.0051","currency":"USD"},"direction":"outbound","encoding":"GSM-7","errors":[],"from":{"carrier":"Telnyx","line_type":"Wireless","phone_number":"+15005550006"},"id":"40385f64-5717-4562-b3fc-2c963f66afa6","media":[],"messaging_profile_id":"4000eba1-a0c0-4563-9925-b25e842a7cb6","organization_id":"b448f9cc-a842-4784-98e9-03c1a5872950","parts":1,"received_at":"2026-11-30T05:00:00.000+00:00","record_type":"message","sent_at":"2026-11-30T05:00:01.000+00:00","tags":["orders","shipping"],"text":"Your order #1234 has shipped and will arrive on Tuesday. Track it at https://example.com/t/abc123 - reply STOP to opt out.","to":[{"carrier":"T-Mobile USA","line_type":"Wireless","phone_number":"+14155550123","status":"delivered"}],"type":"SMS","valid_until":"2026-11-30T06:00:00.000+00:00","webhook_failover_url":"https://backup.example.com/sms/status","webhook_url":"https://example.com/sms/status"},"record_type":"event"},"meta":{"attempt":1,"delivered_to":"https://example.com/sms/status"}}"#;
    assert!((1050..1200).contains(&body.len()), "{}", body.len());
    body.to_owned()
}

/// The bytes Twilio signs: the URL, then each name and value, sorted (the names are ASCII, so
/// byte order is Twilio's UTF-16 order).
fn twilio_payload(params: &[(&str, &str)]) -> Vec<u8> {
    let mut sorted = params.to_vec();
    sorted.sort_unstable();
    let mut payload = URL.as_bytes().to_vec();
    for (name, value) in sorted {
        payload.extend_from_slice(name.as_bytes());
        payload.extend_from_slice(value.as_bytes());
    }
    payload
}

/// A bare primitive: its name and one run over the payload.
type Bare = (&'static str, Box<dyn Fn()>);

/// The bare HMAC over `payload` in both implementations: the `hmac` crate's `M`, then `ring`'s
/// `algorithm`, each with its key set up once.
fn bare_hmacs<M: hmac::Mac + hmac::digest::KeyInit + Clone + 'static>(
    names: [&'static str; 2],
    algorithm: ring::hmac::Algorithm,
    key: &[u8],
    payload: Vec<u8>,
) -> Vec<Bare> {
    let ring_key = ring::hmac::Key::new(algorithm, key);
    let keyed = <M as hmac::digest::KeyInit>::new_from_slice(key).unwrap();
    let shared = std::rc::Rc::new(payload);
    let payload = std::rc::Rc::clone(&shared);
    let crates: Box<dyn Fn()> = Box::new(move || {
        let mut mac = keyed.clone();
        mac.update(black_box(&shared));
        black_box(mac.finalize().into_bytes());
    });
    let ring: Box<dyn Fn()> = Box::new(move || {
        black_box(ring::hmac::sign(&ring_key, black_box(&payload)));
    });
    vec![(names[0], crates), (names[1], ring)]
}

fn hmac_sha1(key: &[u8], payload: Vec<u8>) -> Vec<Bare> {
    let names = ["bare hmac-sha1 (hmac+sha1 crates)", "bare hmac-sha1 (ring)"];
    bare_hmacs::<hmac::Hmac<sha1::Sha1>>(names, ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, key, payload)
}

fn hmac_sha256(key: &[u8], payload: Vec<u8>) -> Vec<Bare> {
    let names = ["bare hmac-sha256 (hmac+sha2 crates)", "bare hmac-sha256 (ring)"];
    bare_hmacs::<hmac::Hmac<sha2::Sha256>>(names, ring::hmac::HMAC_SHA256, key, payload)
}

/// One verifier, the request it verifies, and its bare primitives (the first is the fastest,
/// the one the target is set against).
struct Case {
    group: &'static str,
    verifier: Box<dyn WebhookVerifier>,
    request: SignedRequest,
    bare: Vec<Bare>,
    /// The target: the verifier's rate over the bare primitive's.
    target: f64,
}

impl Case {
    fn verify(&self) {
        black_box(self.verifier.verify_at(black_box(&self.request.as_request()), now()).unwrap());
    }

    fn parse(&self) {
        black_box(parse_unverified(self.verifier.provider(), black_box(&self.request.as_request())).unwrap());
    }
}

fn twilio() -> Case {
    let token = "0123456789abcdef0123456789abcdef";
    Case {
        group: "twilio",
        verifier: Box::new(TwilioWebhook::new(token).unwrap()),
        request: signed_twilio_request(token, URL, &TWILIO_PARAMS),
        bare: hmac_sha1(token.as_bytes(), twilio_payload(&TWILIO_PARAMS)),
        target: 0.5,
    }
}

fn plivo() -> Case {
    let token = "MzQ5ZmE2ZTk0NDMzNjY1NjAzZDhkNmYwYmY0NjNk";
    let nonce = "05429567804466091622";
    let payload = format!("{}.{nonce}", sms_sdk::provider::plivo::__private::v3_string("POST", URL, &PLIVO_PARAMS));
    Case {
        group: "plivo_v3",
        verifier: Box::new(PlivoWebhook::new(token).unwrap()),
        request: signed_plivo_v3_request(token, URL, &PLIVO_PARAMS, nonce),
        bare: hmac_sha256(token.as_bytes(), payload.into_bytes()),
        target: 0.5,
    }
}

fn vonage() -> Case {
    let secret = "vonage-signature-secret-0123456789";
    let request = signed_vonage_request(secret, URL, VONAGE_BODY, NOW, "3a3e8ad0-5b4c-4b4e-9c5e-0123456789ab");
    let token = request.headers["authorization"].to_str().unwrap().strip_prefix("Bearer ").unwrap();
    let signed = token.rsplit_once('.').unwrap().0.as_bytes().to_vec();
    Case {
        group: "vonage",
        verifier: Box::new(VonageWebhook::new(secret).unwrap()),
        request,
        bare: hmac_sha256(secret.as_bytes(), signed),
        target: 0.5,
    }
}

fn telnyx() -> Case {
    let pair = TelnyxKeyPair::from_seed([7; 32]);
    let body = telnyx_body();
    let request = signed_telnyx_request(&pair, URL, &body, NOW);
    let payload = sms_sdk::provider::telnyx::__private::signed_payload(&NOW.to_string(), body.as_bytes());
    let signature = request.headers["telnyx-signature-ed25519"].to_str().unwrap();
    let signature = ed25519_dalek::Signature::from_slice(&decode(signature)).unwrap();
    let key = ed25519_dalek::VerifyingKey::from_bytes(&decode(&pair.public_key).try_into().unwrap()).unwrap();
    let verify: Box<dyn Fn()> = Box::new(move || key.verify(black_box(&payload), black_box(&signature)).unwrap());
    Case {
        group: "telnyx",
        verifier: Box::new(TelnyxWebhook::new(&pair.public_key).unwrap()),
        request,
        bare: vec![("bare ed25519-dalek verify", verify)],
        target: 0.9,
    }
}

fn decode(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).unwrap()
}

fn cases() -> Vec<Case> {
    let cases = vec![twilio(), plivo(), vonage(), telnyx()];
    for case in &cases {
        case.verifier.verify_at(&case.request.as_request(), now()).expect("the bench request verifies");
    }
    cases
}

fn criterion_benches(c: &mut Criterion) {
    for case in cases() {
        let mut group = c.benchmark_group(case.group);
        group.bench_function("verify_at", |b| b.iter(|| case.verify()));
        // What verification adds to the event itself: the same request parsed, not verified.
        group.bench_function("parse_unverified (event only)", |b| b.iter(|| case.parse()));
        for (name, bare) in &case.bare {
            group.bench_function(*name, |b| b.iter(bare));
        }
    }
}

/// Nanoseconds per call of `f`, over a batch of about 10 ms (calibrated on the first call).
fn time_batch(f: &dyn Fn(), iterations: u64) -> f64 {
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    #[allow(clippy::cast_precision_loss)] // a rate for a report
    let per_call = start.elapsed().as_secs_f64() * 1e9 / iterations as f64;
    per_call
}

fn iterations_for(f: &dyn Fn()) -> u64 {
    let ns = time_batch(f, 200);
    // The float is positive and below 10^9.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let iterations = (10e6 / ns.max(1.0)) as u64;
    iterations.max(10)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The ratios the targets are stated in, measured so that a shared machine's load falls on
/// both sides alike: `verify_at`, the event alone and each bare primitive run in turn, batch by
/// batch, 15 rounds, and each figure is the median over the rounds of that round's value.
fn ratio_table() {
    const ROUNDS: usize = 15;
    println!();
    println!("Interleaved medians of {ROUNDS} rounds (ns per call; rate ratios, higher is better):");
    println!(
        "{:<10} {:>10} {:>10} {:>10} {:>14} {:>8} {:>12} {:>8}  bare primitive",
        "verifier", "verify_at", "event", "bare", "verify/bare", "target", "verification", "vs ring"
    );
    for case in cases() {
        let verify = || case.verify();
        let parse = || case.parse();
        let mut runs: Vec<(&dyn Fn(), u64)> = vec![(&verify, 0), (&parse, 0)];
        for (_, bare) in &case.bare {
            runs.push((bare.as_ref(), 0));
        }
        for run in &mut runs {
            run.1 = iterations_for(run.0);
        }
        let mut rounds: Vec<Vec<f64>> = Vec::new();
        for _ in 0..ROUNDS {
            rounds.push(runs.iter().map(|(f, n)| time_batch(*f, *n)).collect());
        }
        let column = |i: usize| median(rounds.iter().map(|r| r[i]).collect());
        // Rate ratio: bare time over verifier time, per round.
        let end_to_end = median(rounds.iter().map(|r| r[2] / r[0]).collect());
        // Verification alone: `verify_at` less the event it also builds.
        let verification = median(rounds.iter().map(|r| r[2] / (r[0] - r[1]).max(1.0)).collect());
        let vs_ring = if runs.len() > 3 {
            format!("{:.2}", median(rounds.iter().map(|r| r[3] / r[0]).collect()))
        } else {
            "-".into()
        };
        println!(
            "{:<10} {:>10.0} {:>10.0} {:>10.0} {:>13.2}× {:>7.2}× {:>11.2}× {:>8}  {}",
            case.group,
            column(0),
            column(1),
            column(2),
            end_to_end,
            case.target,
            verification,
            vs_ring,
            case.bare[0].0
        );
    }
    println!("verify/bare: the whole call; verification: verify_at less the event (parse_unverified).");
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = criterion_benches
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // The table, in a real bench run (`cargo bench`, not the single pass of `cargo test`), unless
    // VERIFY_SPEED_TABLE=0.
    let bench = std::env::args().any(|arg| arg == "--bench");
    if bench && std::env::var("VERIFY_SPEED_TABLE").map_or(true, |v| v != "0") {
        ratio_table();
    }
}
