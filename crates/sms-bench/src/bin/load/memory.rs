//! Peak memory with 10,000 sends started at once against a responder that answers after 1 s: one
//! child process per run (`sms-bench-load memory`), so each peak is its own.
//!
//! Modes: `raw` (raw `reqwest`: every request at once, one connection each), `sdk` (the client
//! as a user gets it by default: at most 100 requests in flight per adapter, the other sends
//! queued for a slot, so the run takes about 10,000 / 100 × 1 s) and `sdk-unlimited` (the client
//! with `max_in_flight(None)`: every request at once, as before the limit).

use std::sync::Arc;
use std::time::Instant;

use sms_bench::usage::{peak_rss_kib, rss_kib};
use sms_sdk::store::MemoryStore;

use crate::http::{Raw, sdk_builder, sdk_client, sdk_send};
use crate::results::MemorySample;

/// Starts `in_flight` sends at once on one thread, waits for all, and reports the peak.
pub(crate) fn run(mode: &str, target: &str, in_flight: usize) -> MemorySample {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let raw = Raw::new(target);
        let sdk = Arc::new(match mode {
            "sdk-unlimited" => sdk_builder(target).max_in_flight(None).build().expect("the client builds"),
            _ => sdk_client::<MemoryStore>(target, None),
        });
        let baseline_kib = rss_kib().unwrap_or_default();
        let started = Instant::now();
        let tasks: Vec<_> = (0..in_flight)
            .map(|_| {
                let (raw, sdk, mode) = (raw.clone(), Arc::clone(&sdk), mode.to_owned());
                tokio::spawn(async move { if mode == "raw" { raw.send().await } else { sdk_send(&sdk, None).await } })
            })
            .collect();
        let (mut ok, mut errors, mut first_error) = (0, 0, None);
        for task in tasks {
            match task.await {
                Ok(Ok(())) => ok += 1,
                Ok(Err(error)) => {
                    errors += 1;
                    first_error.get_or_insert(error);
                }
                Err(error) => {
                    errors += 1;
                    first_error.get_or_insert(error.to_string());
                }
            }
        }
        MemorySample {
            mode: mode.to_owned(),
            in_flight,
            baseline_kib,
            peak_kib: peak_rss_kib().unwrap_or_default(),
            ok,
            errors,
            first_error,
            wall_s: started.elapsed().as_secs_f64(),
        }
    })
}
