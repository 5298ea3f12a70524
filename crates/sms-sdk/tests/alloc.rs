//! Estimating a GSM-7 body does not allocate.
//!
//! A test binary of its own, because the counting global allocator is per binary, and with a
//! single test, because the count is global: no other test may allocate while it measures.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::alloc::System;
use std::hint::black_box;

use sms_sdk::encoding::{Encoding, GSM7_BASIC_CHARACTERS, GSM7_EXTENSION_CHARACTERS, estimate_segments, is_gsm7};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn gsm7_estimate_does_not_allocate() {
    let every_character = format!("{GSM7_BASIC_CHARACTERS}{GSM7_EXTENSION_CHARACTERS}");
    let bodies = [
        String::new(),
        "Your order has shipped.".to_owned(),
        "a".repeat(160),
        format!("{}€{}", "a".repeat(152), "a".repeat(152)),
        every_character.repeat(80),
        "Line\r\n{braces} and [brackets] cost 2 € each. ".repeat(250),
    ];
    for body in &bodies {
        // The estimate is deterministic, so one clean measurement proves it; another thread
        // (the test harness's, finishing the spawn of this one) can only add to a count, so a
        // count is taken again a few times before it is believed.
        let counted = (0..5)
            .map(|_| {
                let region = Region::new(GLOBAL);
                let preview = black_box(estimate_segments(black_box(body)));
                let gsm7 = black_box(is_gsm7(black_box(body)));
                let change = region.change();
                assert_eq!(preview.encoding, Encoding::Gsm7);
                assert!(gsm7);
                (change.allocations, change.reallocations)
            })
            .min()
            .unwrap();
        assert_eq!(counted, (0, 0), "estimating a GSM-7 body of {} bytes allocated", body.len());
    }

    // The counter does see allocations: a UCS-2 body lists its non-GSM characters.
    let body = "Your package is ready 📦".to_owned();
    let region = Region::new(GLOBAL);
    let preview = black_box(estimate_segments(black_box(&body)));
    let change = region.change();
    assert_eq!(preview.non_gsm_characters, ['📦']);
    assert!(change.allocations > 0);
}
