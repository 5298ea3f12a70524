//! Criterion timings of the micro parts of the speed targets, each next to its ceiling:
//!
//! - `webhook/<provider>_verify`: `verify_at` of one realistic signed request per provider
//!   (`benches/support/webhooks.rs`), next to `webhook/<provider>_primitive`: the bare HMAC-SHA1,
//!   HMAC-SHA256 or Ed25519 verification (`ring`, key prepared once) of the very bytes that
//!   request signs, and the same primitive from the crates the verifiers use:
//!   `webhook/<provider>_primitive_hmac` (`hmac` with `sha1`/`sha2`, keyed once) or
//!   `webhook/telnyx_primitive_dalek` (`ed25519-dalek`, key parsed once). The report takes the
//!   faster of the two as the ceiling. `webhook/<provider>_event` is the normalized event built
//!   from the same request without any check (`parse_unverified`): `verify` less `event` is what
//!   checking the signature costs.
//! - `response/<provider>_<accepted|rejected>`: the adapter's `interpret` of the provider's
//!   documented send response and one documented error (the wire tests' fixtures): reading the
//!   few members it needs from the body, without building a `serde_json::Value`.
//! - `segments/<body>`: `estimate_segments` of a 320-character GSM-7 and UCS-2 body (throughput in
//!   bytes, so criterion prints MB/s).
//!
//! Each time is the CPU time of the benchmark thread (`CLOCK_THREAD_CPUTIME_ID`), not wall time:
//! on a shared machine, time other processes take from the core is not counted (criterion's
//! report calls it "time" all the same).
//!
//! The ratios of the webhook rows are not taken from these medians, which criterion measures one
//! function after the other (a drift of the machine between two functions moves the ratio): with
//! `SMS_BENCH_PAIRED=<file>` set, the verifier, the event and the primitives then run in
//! interleaved rounds (`benches/support/paired.rs`) and the medians of the ratios within each
//! round are written to that file as JSON.
//!
//! `cargo bench -p sms-sdk --features testing --bench micro`; `scripts/bench.sh` runs it and
//! copies the medians and the paired ratios into `BENCHMARKS.md`. Without `--bench` (as
//! `cargo test --all-targets` runs it) criterion runs each function once, as a smoke test.
//! Allocation counts are not taken here (a counting allocator would slow every timing):
//! `sms-bench-allocs` counts them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // bench code: a panic is a broken case

#[allow(dead_code)] // the allocation counter uses parts the timings do not
mod support {
    pub(crate) mod paired;
    pub(crate) mod webhooks;
}

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput, criterion_group};
use sms_sdk::encoding::estimate_segments;
use sms_sdk::testing::webhooks::parse_unverified;

use support::paired::{bares, thread_cpu_ns};
use support::webhooks::{Primitive, cases, now, segment_bodies};

/// CPU time of the benchmark thread, in nanoseconds.
struct ThreadCpu;

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        thread_cpu_ns()
    }

    fn end(&self, started: u64) -> u64 {
        thread_cpu_ns().saturating_sub(started)
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    #[allow(clippy::cast_precision_loss)] // nanoseconds of a benchmark batch
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        &Nanoseconds
    }
}

/// Formats CPU nanoseconds as criterion formats wall time (and throughput in MB/s, decimal).
struct Nanoseconds;

impl ValueFormatter for Nanoseconds {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e-3, "µs"),
            t if t < 1e9 => (1e-6, "ms"),
            _ => (1e-9, "s"),
        };
        for value in values.iter_mut() {
            *value *= factor;
        }
        unit
    }

    #[allow(clippy::cast_precision_loss)] // sizes of a benchmark input
    fn scale_throughputs(&self, _typical: f64, throughput: &Throughput, values: &mut [f64]) -> &'static str {
        let (millions, unit) = match throughput {
            Throughput::Bytes(bytes) | Throughput::BytesDecimal(bytes) | Throughput::ElementsAndBytes { bytes, .. } => {
                (*bytes as f64 / 1e6, "MB/s")
            }
            Throughput::Bits(bits) => (*bits as f64 / 1e6, "Mbit/s"),
            Throughput::Elements(elements) => (*elements as f64 / 1e6, "Melem/s"),
        };
        for value in values.iter_mut() {
            *value = millions * 1e9 / *value;
        }
        unit
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn webhooks(c: &mut Criterion<ThreadCpu>) {
    let mut group = c.benchmark_group("webhook");
    for case in cases() {
        let request = case.request.as_request();
        group.bench_function(format!("{}_verify", case.name), |b| {
            b.iter(|| case.verifier.verify_at(black_box(&request), now()).unwrap());
        });
        group.bench_function(format!("{}_event", case.name), |b| {
            b.iter(|| parse_unverified(case.verifier.provider(), black_box(&request)).unwrap());
        });
        group.bench_function(format!("{}_primitive", case.name), |b| {
            b.iter(|| assert!(black_box(&case.primitive).run()));
        });
        // The crate the verifier uses (`bares` lists it first; `ring` is timed above).
        let crate_suffix = if matches!(case.primitive, Primitive::Ed25519 { .. }) { "dalek" } else { "hmac" };
        let (_, verifiers_crate) = &bares(&case)[0];
        group.bench_function(format!("{}_primitive_{crate_suffix}", case.name), |b| b.iter(verifiers_crate));
    }
    group.finish();
}

/// Each adapter's pure response reader over a documented success and error body.
fn responses(c: &mut Criterion<ThreadCpu>) {
    type Interpret = fn(u16, &http::HeaderMap, &[u8], std::time::SystemTime) -> sms_sdk::adapter::Outcome;
    /// A status and the fixture of its body.
    type Response = (u16, &'static str);
    let fixture = |provider: &str, name: &str| {
        let path = format!("{}/tests/fixtures/{provider}/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
    };
    let cases: [(&str, Interpret, Response, Response); 4] = [
        (
            "twilio",
            sms_sdk::provider::twilio::__private::interpret,
            (201, "message_created.json"),
            (400, "error_21211.json"),
        ),
        (
            "telnyx",
            sms_sdk::provider::telnyx::__private::interpret,
            (200, "message_created.json"),
            (400, "error_40300.json"),
        ),
        (
            "plivo",
            sms_sdk::provider::plivo::__private::interpret,
            (202, "message_created.json"),
            (400, "error_400.json"),
        ),
        (
            "vonage",
            sms_sdk::provider::vonage::__private::interpret,
            (202, "message_accepted.json"),
            (422, "error_1430.json"),
        ),
    ];
    let headers = http::HeaderMap::new();
    let mut group = c.benchmark_group("response");
    for (provider, interpret, accepted, rejected) in cases {
        for (outcome, (status, name)) in [("accepted", accepted), ("rejected", rejected)] {
            let body = fixture(provider, name);
            group.bench_function(format!("{provider}_{outcome}"), |b| {
                b.iter(|| interpret(status, &headers, black_box(&body), now()));
            });
        }
    }
    group.finish();
}

fn segments(c: &mut Criterion<ThreadCpu>) {
    let mut group = c.benchmark_group("segments");
    for (name, body) in segment_bodies() {
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(name, |b| b.iter(|| estimate_segments(black_box(&body))));
    }
    group.finish();
}

fn config() -> Criterion<ThreadCpu> {
    Criterion::default()
        .with_measurement(ThreadCpu)
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_secs(2))
}

criterion_group! { name = micro; config = config(); targets = webhooks, responses, segments }

/// Rounds of the paired webhook ratios.
const PAIRED_ROUNDS: usize = 21;

/// Writes the paired ratios of every webhook case to `path`, as JSON keyed by the case's name.
fn write_paired(path: &str) {
    let mut out = serde_json::Map::new();
    for case in cases() {
        let paired = support::paired::measure(&case, PAIRED_ROUNDS);
        let (fastest, fastest_ns) = paired.bare_ns[paired.fastest];
        let entry = serde_json::json!({
            "rounds": paired.rounds,
            "verify_ns": paired.verify_ns,
            "event_ns": paired.event_ns,
            "fastest": fastest,
            "fastest_ns": fastest_ns,
            "ratio": paired.ratio,
            "checking_ratio": paired.checking_ratio,
        });
        out.insert(case.name.to_owned(), entry);
    }
    std::fs::write(path, serde_json::to_string_pretty(&out).unwrap()).unwrap();
}

fn main() {
    micro();
    Criterion::default().configure_from_args().final_summary();
    let bench = std::env::args().any(|arg| arg == "--bench");
    if let (true, Ok(path)) = (bench, std::env::var("SMS_BENCH_PAIRED")) {
        write_paired(&path);
    }
}
