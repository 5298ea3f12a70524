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
//! machine's load falls on both sides alike (`benches/support/paired.rs`): every function runs in
//! turn, batch by batch, for 15 rounds, timed in CPU time of the thread
//! (`CLOCK_THREAD_CPUTIME_ID`), and each figure is the median over the rounds. `VERIFY_SPEED_TABLE=0` leaves it out. Without `--bench` (as
//! `cargo test --all-targets` runs it) each criterion function runs once and there is no table.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // bench code: a panic is a broken case

#[allow(dead_code)] // the other users of the cases need parts this bench does not
mod support {
    pub(crate) mod paired;
    pub(crate) mod webhooks;
}

use std::time::Duration;

use criterion::{Criterion, criterion_group};
use support::paired::{bares, event_only, measure, target, verify};
use support::webhooks::cases;

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

fn ratio_table() {
    const ROUNDS: usize = 15;
    println!();
    println!("Medians of {ROUNDS} interleaved rounds, CPU ns per call; ratios are rates (primitive over verifier):");
    println!(
        "{:<11} {:>9} {:>9} {:>9} {:>9}  {:>11} {:>7}  {:>12}",
        "case", "verify_at", "event", "bare", "bare 2", "verify/bare", "target", "verification"
    );
    for case in cases() {
        let paired = measure(&case, ROUNDS);
        println!(
            "{:<11} {:>9.0} {:>9.0} {:>9.0} {:>9.0}  {:>10.2}× {:>6.2}×  {:>11.2}×",
            case.name,
            paired.verify_ns,
            paired.event_ns,
            paired.bare_ns[0].1,
            paired.bare_ns[1].1,
            paired.ratio,
            target(&case),
            paired.checking_ratio,
        );
    }
    println!("bare: {}", cases().iter().map(|c| bares(c)[0].0).collect::<Vec<_>>().join(", "));
    println!("bare 2: {}", cases().iter().map(|c| bares(c)[1].0).collect::<Vec<_>>().join(", "));
    println!("verify/bare and verification are over the faster primitive of each case.");
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
