//! Hostile input, fuzzed: every provider's webhook verifier and normalizer (Twilio, Telnyx, Plivo,
//! Vonage, Sinch, AWS, Infobip and Bandwidth; for AWS also the SNS signed members, certificates
//! and certificate URLs; for the batching Infobip and Bandwidth every event of a request, through
//! `verify_all_at`), form and JSON decoding, provider responses (all eight) and the segment
//! estimator, with a seeded generator and mutator
//! (stable Rust has no `cargo fuzz`). Each execution is checked for panics, typed results and
//! its allocations (this binary's global allocator counts them); each target also checks that
//! its time grows linearly with its input.
//!
//! CI runs one to five thousand executions per target (a few seconds each); `SMS_SDK_LONG=1` runs
//! 10,000,000 per target, `SMS_SDK_FUZZ_CASES=N` exactly N, `SMS_SDK_FUZZ_SEED` picks the seed
//! (see `engine.rs`). The tests of this binary take turns: allocations are counted per process.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

#[cfg(all(feature = "aws", feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod aws;
#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod decoding;
mod engine;
#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
#[path = "../hostile/mod.rs"]
mod hostile;
mod segments;
#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod webhooks;

use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

#[test]
fn fuzz_segment_estimator() {
    segments::fuzz_estimator("fuzz_segment_estimator", 1_500);
}

#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod providers {
    use stats_alloc::Region;

    use super::webhooks::{Provider, fuzz_normalizer, fuzz_verifier};
    use super::*;

    #[test]
    fn fuzz_twilio_verifier() {
        fuzz_verifier("fuzz_twilio_verifier", Provider::Twilio, 2_000);
    }

    #[test]
    fn fuzz_telnyx_verifier() {
        fuzz_verifier("fuzz_telnyx_verifier", Provider::Telnyx, 1_000);
    }

    #[test]
    fn fuzz_plivo_verifier() {
        fuzz_verifier("fuzz_plivo_verifier", Provider::Plivo, 2_000);
    }

    #[test]
    fn fuzz_vonage_verifier() {
        fuzz_verifier("fuzz_vonage_verifier", Provider::Vonage, 3_000);
    }

    #[test]
    fn fuzz_twilio_normalizer() {
        fuzz_normalizer("fuzz_twilio_normalizer", Provider::Twilio, 3_000);
    }

    #[test]
    fn fuzz_telnyx_normalizer() {
        fuzz_normalizer("fuzz_telnyx_normalizer", Provider::Telnyx, 3_000);
    }

    #[test]
    fn fuzz_plivo_normalizer() {
        fuzz_normalizer("fuzz_plivo_normalizer", Provider::Plivo, 3_000);
    }

    #[test]
    fn fuzz_vonage_normalizer() {
        fuzz_normalizer("fuzz_vonage_normalizer", Provider::Vonage, 3_000);
    }

    #[cfg(feature = "sinch")]
    #[test]
    fn fuzz_sinch_verifier() {
        fuzz_verifier("fuzz_sinch_verifier", Provider::Sinch, 3_000);
    }

    #[cfg(feature = "sinch")]
    #[test]
    fn fuzz_sinch_normalizer() {
        fuzz_normalizer("fuzz_sinch_normalizer", Provider::Sinch, 3_000);
    }

    #[cfg(feature = "aws")]
    #[test]
    fn fuzz_aws_verifier() {
        fuzz_verifier("fuzz_aws_verifier", Provider::Aws, 1_000);
    }

    #[cfg(feature = "aws")]
    #[test]
    fn fuzz_aws_normalizer() {
        fuzz_normalizer("fuzz_aws_normalizer", Provider::Aws, 2_000);
    }

    #[cfg(feature = "infobip")]
    #[test]
    fn fuzz_infobip_verifier() {
        fuzz_verifier("fuzz_infobip_verifier", Provider::Infobip, 1_000);
    }

    #[cfg(feature = "infobip")]
    #[test]
    fn fuzz_infobip_normalizer() {
        fuzz_normalizer("fuzz_infobip_normalizer", Provider::Infobip, 1_000);
    }

    #[cfg(feature = "bandwidth")]
    #[test]
    fn fuzz_bandwidth_verifier() {
        fuzz_verifier("fuzz_bandwidth_verifier", Provider::Bandwidth, 1_000);
    }

    #[cfg(feature = "bandwidth")]
    #[test]
    fn fuzz_bandwidth_normalizer() {
        fuzz_normalizer("fuzz_bandwidth_normalizer", Provider::Bandwidth, 1_000);
    }

    #[cfg(feature = "aws")]
    #[test]
    fn fuzz_aws_signed_members() {
        super::aws::fuzz_signed_members("fuzz_aws_signed_members", 1_000);
    }

    #[cfg(feature = "aws")]
    #[test]
    fn fuzz_aws_signed_messages() {
        super::aws::fuzz_signed_messages("fuzz_aws_signed_messages", 1_000);
    }

    #[cfg(feature = "aws")]
    #[test]
    fn fuzz_aws_certificates() {
        super::aws::fuzz_certificates("fuzz_aws_certificates", 2_000);
    }

    #[cfg(feature = "aws")]
    #[test]
    fn fuzz_aws_certificate_urls() {
        super::aws::fuzz_certificate_urls("fuzz_aws_certificate_urls", 2_000);
    }

    #[test]
    fn fuzz_form_decoding() {
        decoding::fuzz_forms("fuzz_form_decoding", 3_000);
    }

    #[test]
    fn fuzz_json_decoding() {
        decoding::fuzz_json("fuzz_json_decoding", 1_500);
    }

    #[test]
    fn fuzz_provider_responses() {
        decoding::fuzz_responses("fuzz_provider_responses", 6_000);
    }

    /// What one refusal of a hostile 1 MiB request may allocate in all.
    const MEGABYTE_BUDGET: usize = 4_000_000;

    /// The fixed hostile corpus of about 1 MiB per request (shared with the timing bench):
    /// refused with less than 4 MB allocated, by every provider's verifier (Infobip's and
    /// Bandwidth's on authenticated requests whose bodies reach their parsers).
    #[test]
    fn fuzz_hostile_megabyte_requests_allocate_little() {
        let _exclusive = engine::exclusive();
        let now = hostile::now();
        for case in hostile::cases() {
            let provider = case.verifier.provider();
            let region = Region::new(GLOBAL);
            let result = case.verifier.verify_at(&case.request.as_request(), now);
            let allocated = region.change().bytes_allocated;
            let error = result.expect_err("a hostile request was accepted");
            println!("{provider:<9} {:<26} {allocated:>9} bytes allocated: {error}", case.name);
            assert!(allocated < MEGABYTE_BUDGET, "{provider} {}: {allocated} bytes allocated ({error})", case.name);
            if case.over_parameter_limit {
                assert_eq!(error, sms_sdk::webhook::WebhookError::TooManyParameters { provider, limit: 1024 });
            }
        }
    }
}
