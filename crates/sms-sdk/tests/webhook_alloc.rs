//! Work done before a webhook's signature is checked is bounded: a hostile 1 MiB body is refused
//! with less than 4 MB allocated, for every provider's verifier. A test binary of its own with
//! one test, because it counts every allocation of the process through its global allocator.
//! (The time the same cases take is printed by `cargo bench --bench webhook_verify`.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test
#![cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]

mod hostile;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// What one refusal may allocate in all.
const BUDGET: usize = 4_000_000;

#[test]
fn hostile_bodies_are_refused_with_little_allocation() {
    let now = hostile::now();
    for case in hostile::cases() {
        let provider = case.verifier.provider();
        let region = Region::new(GLOBAL);
        let result = case.verifier.verify_at(&case.request.as_request(), now);
        let allocated = region.change().bytes_allocated;
        let error = result.expect_err("a hostile request was accepted");
        println!("{provider:<7} {:<26} {allocated:>9} bytes allocated: {error}", case.name);
        assert!(allocated < BUDGET, "{provider} {}: {allocated} bytes allocated ({error})", case.name);
        if case.over_parameter_limit {
            assert_eq!(error, sms_sdk::webhook::WebhookError::TooManyParameters { provider, limit: 1024 });
        }
    }
}
