//! `sms-bench-allocs`: allocations counted with a counting global allocator (so the timings,
//! taken elsewhere, do not pay for the counter): per `estimate_segments` call, per webhook
//! verification and its bare primitive, and per send (raw `reqwest` and `Client::send`, sequential,
//! against the static responder). Prints JSON.
//!
//! `sms-bench-allocs --target http://127.0.0.1:PORT --out allocs.json`

#![allow(clippy::expect_used, clippy::unwrap_used)] // harness code: a failed setup ends the run with its reason

#[path = "load/http.rs"]
mod http;
#[allow(dead_code)] // the timings use parts the counter does not
#[path = "../../../sms-sdk/benches/support/webhooks.rs"]
mod webhooks;

use std::alloc::System;
use std::hint::black_box;
use std::path::PathBuf;

use clap::Parser;
use serde::Serialize;
use sms_sdk::encoding::estimate_segments;
use sms_sdk::store::MemoryStore;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

use crate::http::{Raw, sdk_client, sdk_send};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[derive(Debug, Parser)]
struct Args {
    /// The static responder's base URL; without it, sends are not counted.
    #[arg(long)]
    target: Option<String>,
    /// Sends counted per mode.
    #[arg(long, default_value_t = 2_000)]
    sends: u32,
    #[arg(long)]
    out: PathBuf,
}

#[derive(Debug, Default, Serialize)]
struct Counts {
    segments: Vec<Counted>,
    webhooks: Vec<Counted>,
    sends: Vec<Counted>,
}

/// Allocations (and reallocations) and bytes of one operation.
#[derive(Debug, Serialize)]
struct Counted {
    name: String,
    allocations: f64,
    bytes: f64,
}

/// The allocations of `op` averaged over `times` calls (after one call that is not counted).
fn count(name: &str, times: u32, mut op: impl FnMut()) -> Counted {
    op();
    let region = Region::new(GLOBAL);
    for _ in 0..times {
        op();
    }
    let change = region.change();
    let per = |n: usize| {
        #[allow(clippy::cast_precision_loss)]
        let n = n as f64;
        n / f64::from(times)
    };
    Counted {
        name: name.to_owned(),
        allocations: per(change.allocations + change.reallocations),
        bytes: per(change.bytes_allocated + change.bytes_reallocated.max(0).unsigned_abs()),
    }
}

fn main() {
    let args = Args::parse();
    let mut counts = Counts::default();
    for (name, body) in webhooks::segment_bodies() {
        counts.segments.push(count(name, 1_000, || {
            black_box(estimate_segments(black_box(&body)));
        }));
    }
    for case in webhooks::cases() {
        counts.webhooks.push(count(&format!("{}_verify", case.name), 1_000, || {
            black_box(case.verify());
        }));
        counts.webhooks.push(count(&format!("{}_primitive", case.name), 1_000, || {
            assert!(case.primitive.run());
        }));
    }
    if let Some(target) = &args.target {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        let raw = Raw::new(target);
        let sdk = sdk_client::<MemoryStore>(target, None);
        runtime.block_on(async {
            for _ in 0..200 {
                raw.send().await.expect("the responder answers");
                sdk_send(&sdk, None).await.expect("the responder answers");
            }
        });
        counts.sends.push(count("raw", args.sends, || runtime.block_on(raw.send()).expect("raw send")));
        counts.sends.push(count("sdk", args.sends, || runtime.block_on(sdk_send(&sdk, None)).expect("sdk send")));
    }
    let json = serde_json::to_string_pretty(&counts).expect("serializes");
    println!("{json}");
    std::fs::write(&args.out, json).expect("the output is writable");
}
