//! Criterion timings of the micro parts of issue 14, each next to its ceiling:
//!
//! - `webhook/<provider>_verify`: `verify_at` of one realistic signed request per provider
//!   (`benches/support/webhooks.rs`), next to `webhook/<provider>_primitive`: the bare HMAC-SHA1,
//!   HMAC-SHA256 or Ed25519 verification (`ring`, key prepared once) of the very bytes that
//!   request signs, and for Telnyx also `webhook/telnyx_primitive_dalek` (`ed25519-dalek`, key
//!   parsed once).
//! - `segments/<body>`: `estimate_segments` of a 320-character GSM-7 and UCS-2 body (throughput in
//!   bytes, so criterion prints MB/s).
//!
//! `cargo bench -p sms-sdk --features testing --bench micro`; `scripts/bench.sh` runs it and
//! copies the medians into `BENCHMARKS.md`. Without `--bench` (as `cargo test --all-targets` runs
//! it) criterion runs each function once, as a smoke test. Allocation counts are not taken here
//! (a counting allocator would slow every timing): `sms-bench-allocs` counts them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // bench code: a panic is a broken case

#[allow(dead_code)] // the allocation counter uses parts the timings do not
mod support {
    pub(crate) mod webhooks;
}

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sms_sdk::encoding::estimate_segments;

use support::webhooks::{Primitive, cases, now, segment_bodies};

fn webhooks(c: &mut Criterion) {
    let mut group = c.benchmark_group("webhook");
    for case in cases() {
        let request = case.request.as_request();
        group.bench_function(format!("{}_verify", case.name), |b| {
            b.iter(|| case.verifier.verify_at(black_box(&request), now()).unwrap());
        });
        group.bench_function(format!("{}_primitive", case.name), |b| {
            b.iter(|| assert!(black_box(&case.primitive).run()));
        });
        if let Primitive::Ed25519 { public_key, message, signature } = &case.primitive {
            let key = ed25519_dalek::VerifyingKey::from_bytes(public_key).unwrap();
            let signature = ed25519_dalek::Signature::from_bytes(signature);
            group.bench_function(format!("{}_primitive_dalek", case.name), |b| {
                b.iter(|| ed25519_dalek::Verifier::verify(&key, black_box(message), &signature).unwrap());
            });
        }
    }
    group.finish();
}

fn segments(c: &mut Criterion) {
    let mut group = c.benchmark_group("segments");
    for (name, body) in segment_bodies() {
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(name, |b| b.iter(|| estimate_segments(black_box(&body))));
    }
    group.finish();
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_millis(700)).measurement_time(Duration::from_secs(2))
}

criterion_group! { name = micro; config = config(); targets = webhooks, segments }
criterion_main!(micro);
