//! How long each verifier takes to refuse a hostile 1 MiB request (the cases of the allocation
//! test): `cargo bench -p sms-sdk --bench webhook_verify` prints a table. The target is under
//! 20 ms per request on one core. Without `--bench` (as `cargo test --all-targets` runs it) each
//! case runs once, as a smoke test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

#[path = "../tests/hostile/mod.rs"]
mod hostile;

use std::time::{Duration, Instant};

fn main() {
    let runs = if std::env::args().any(|a| a == "--bench") { 25 } else { 1 };
    let now = hostile::now();
    println!("{:<9} {:<26} {:>10} {:>10}  refused as", "", "1 MiB request", "median", "slowest");
    for case in hostile::cases() {
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let result = case.verifier.verify_at(&case.request.as_request(), now);
                let took = start.elapsed();
                let error = result.expect_err("a hostile request was accepted");
                assert!(!case.over_parameter_limit || error.code() == "webhook_payload", "{}: {error}", case.name);
                took
            })
            .collect();
        times.sort_unstable();
        let error = case.verifier.verify_at(&case.request.as_request(), now).err().map(|e| e.to_string());
        println!(
            "{:<9} {:<26} {:>8.3}ms {:>8.3}ms  {}",
            case.verifier.provider(),
            case.name,
            times[times.len() / 2].as_secs_f64() * 1e3,
            times[times.len() - 1].as_secs_f64() * 1e3,
            error.unwrap_or_default(),
        );
    }
}
