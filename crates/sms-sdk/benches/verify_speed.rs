//! Each webhook verifier next to the bare primitive it is built on, over the same payload, in
//! both implementations of the primitive: `cargo bench -p sms-sdk --all-features --bench
//! verify_speed` (add `-- --quick` for short criterion runs).
//!
//! The requests are the harness's (`benches/support/webhooks.rs`: a 15-parameter Twilio form, a
//! 10-parameter Plivo V3 form, a Vonage JSON body with its HS256 JWT, a 1.1 KB Telnyx event).
//! For each:
//!
//! - `verify_at`: the whole call a server makes: size and header checks, the signature, and the
//!   normalized event with its `raw` record;
//! - `event only`: the same event built from the same request without checking anything
//!   (`parse_unverified`), so that `verify_at` less this is what verification itself costs;
//! - the bare primitive over exactly the signed bytes, key set up once: HMAC from the `hmac`
//!   crate with `sha1`/`sha2` (which use the CPU's SHA extensions, as the verifiers do) and from
//!   `ring`; Ed25519 from `ed25519-dalek` (key parsed once) and `ring`.
//!
//! Then a table of the ratios the speed targets are stated in, measured so that a shared
//! machine's load falls on both sides alike: every function runs in turn, batch by batch, for
//! 15 rounds, timed in CPU time of the thread (`CLOCK_THREAD_CPUTIME_ID`), and each figure is the
//! median over the rounds. `VERIFY_SPEED_TABLE=0` leaves it out. Without `--bench` (as
//! `cargo test --all-targets` runs it) each criterion function runs once and there is no table.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // bench code: a panic is a broken case

#[allow(dead_code)] // the other users of the cases need parts this bench does not
mod support {
    pub(crate) mod webhooks;
}

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use ed25519_dalek::Verifier as _;
use sms_sdk::testing::webhooks::parse_unverified;
use support::webhooks::{Case, Primitive, cases, now};

/// A bare primitive: its name and one run over the payload.
type Bare<'c> = (&'static str, Box<dyn Fn() + 'c>);

/// The HMAC of `data` keyed with `secret` by the `hmac` crate's `M`, state keyed once and
/// cloned per run (checked against the request's `tag` first).
fn hmac_crate<'c, M: hmac::Mac + hmac::digest::KeyInit + Clone + 'c>(
    secret: &str,
    data: &'c [u8],
    tag: &[u8],
) -> Box<dyn Fn() + 'c> {
    let keyed = <M as hmac::digest::KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    assert_eq!(keyed.clone().chain_update(data).finalize().into_bytes().as_slice(), tag);
    Box::new(move || {
        let mut mac = keyed.clone();
        mac.update(black_box(data));
        black_box(mac.finalize().into_bytes());
    })
}

/// The bare primitives of `case`, the faster implementation first.
fn bares(case: &Case) -> Vec<Bare<'_>> {
    let ring: Box<dyn Fn() + '_> = Box::new(|| assert!(black_box(&case.primitive).run()));
    match &case.primitive {
        Primitive::HmacSha1 { secret, data, tag, .. } => vec![
            ("hmac-sha1 (hmac crate)", hmac_crate::<hmac::Hmac<sha1::Sha1>>(secret, data, tag)),
            ("hmac-sha1 (ring)", ring),
        ],
        Primitive::HmacSha256 { secret, data, tag, .. } => vec![
            ("hmac-sha256 (hmac crate)", hmac_crate::<hmac::Hmac<sha2::Sha256>>(secret, data, tag)),
            ("hmac-sha256 (ring)", ring),
        ],
        Primitive::Ed25519 { public_key, message, signature } => {
            let key = ed25519_dalek::VerifyingKey::from_bytes(public_key).unwrap();
            let signature = ed25519_dalek::Signature::from_bytes(signature);
            let dalek: Box<dyn Fn() + '_> = Box::new(move || key.verify(black_box(message), &signature).unwrap());
            vec![("ed25519 (ed25519-dalek)", dalek), ("ed25519 (ring)", ring)]
        }
    }
}

fn verify(case: &Case) {
    black_box(case.verifier.verify_at(black_box(&case.request.as_request()), now()).unwrap());
}

fn event_only(case: &Case) {
    black_box(parse_unverified(case.verifier.provider(), black_box(&case.request.as_request())).unwrap());
}

/// The speed target of each verifier: its rate over the bare primitive's.
fn target(case: &Case) -> f64 {
    if matches!(case.primitive, Primitive::Ed25519 { .. }) { 0.9 } else { 0.5 }
}

fn criterion_benches(c: &mut Criterion) {
    for case in cases() {
        let mut group = c.benchmark_group(case.name);
        group.bench_function("verify_at", |b| b.iter(|| verify(&case)));
        group.bench_function("event only", |b| b.iter(|| event_only(&case)));
        for (name, bare) in bares(&case) {
            group.bench_function(name, |b| b.iter(&bare));
        }
    }
}

/// CPU time of this thread, in nanoseconds: time other processes take from the core does not
/// count.
fn thread_cpu_ns() -> f64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    #[allow(clippy::cast_precision_loss)] // a time for a report
    let ns = now.tv_sec as f64 * 1e9 + now.tv_nsec as f64;
    ns
}

/// CPU nanoseconds per call of `f` over `iterations` calls.
fn time_batch(f: &dyn Fn(), iterations: u32) -> f64 {
    let start = thread_cpu_ns();
    for _ in 0..iterations {
        f();
    }
    (thread_cpu_ns() - start) / f64::from(iterations)
}

/// Calls of `f` that take about 10 ms.
fn iterations_for(f: &dyn Fn()) -> u32 {
    let ns = time_batch(f, 200).max(1.0);
    // Positive and far below 2^32.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let iterations = (10e6 / ns) as u32;
    iterations.max(10)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn ratio_table() {
    const ROUNDS: usize = 15;
    println!();
    println!("Medians of {ROUNDS} interleaved rounds, CPU ns per call; ratios are rates (verifier over primitive):");
    println!(
        "{:<11} {:>9} {:>9} {:>9} {:>9}  {:>11} {:>7}  {:>12}  {:>14}",
        "case", "verify_at", "event", "bare", "bare 2", "verify/bare", "target", "verification", "verify/bare 2"
    );
    for case in cases() {
        let bares = bares(&case);
        let verify = || verify(&case);
        let event = || event_only(&case);
        let mut runs: Vec<&dyn Fn()> = vec![&verify, &event];
        runs.extend(bares.iter().map(|(_, f)| f.as_ref()));
        let iterations: Vec<u32> = runs.iter().map(|f| iterations_for(*f)).collect();
        let rounds: Vec<Vec<f64>> =
            (0..ROUNDS).map(|_| runs.iter().zip(&iterations).map(|(f, n)| time_batch(*f, *n)).collect()).collect();
        let column = |i: usize| median(rounds.iter().map(|r| r[i]).collect());
        let ratio = |f: &dyn Fn(&[f64]) -> f64| median(rounds.iter().map(|r| f(r)).collect());
        println!(
            "{:<11} {:>9.0} {:>9.0} {:>9.0} {:>9.0}  {:>10.2}× {:>6.2}×  {:>11.2}×  {:>13.2}×",
            case.name,
            column(0),
            column(1),
            column(2),
            column(3),
            ratio(&|r| r[2] / r[0]),
            target(&case),
            ratio(&|r| r[2] / (r[0] - r[1]).max(1.0)),
            ratio(&|r| r[3] / r[0]),
        );
    }
    println!("bare: {}", cases().iter().map(|c| bares(c)[0].0).collect::<Vec<_>>().join(", "));
    println!("bare 2: {}", cases().iter().map(|c| bares(c)[1].0).collect::<Vec<_>>().join(", "));
    println!("verification: bare over (verify_at less event), the cost of checking the signature alone.");
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = criterion_benches
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    let bench = std::env::args().any(|arg| arg == "--bench");
    if bench && std::env::var("VERIFY_SPEED_TABLE").map_or(true, |v| v != "0") {
        ratio_table();
    }
}
