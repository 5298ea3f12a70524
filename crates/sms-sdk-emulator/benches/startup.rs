//! `cargo bench -p sms-sdk-emulator`: how fast the emulator starts, and the round trip of one
//! send through the real Twilio adapter. Prints a results table (the target: start in
//! well under a second).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::time::{Duration, Instant};

use sms_sdk::{Client, Message};
use sms_sdk_emulator::Emulator;

#[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation, clippy::cast_sign_loss)] // an index into 50 samples
fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let (mut starts, mut sends) = runtime.block_on(async {
        let mut starts = Vec::new();
        for _ in 0..50 {
            let began = Instant::now();
            let emulator = Emulator::start().await.expect("starts");
            starts.push(began.elapsed());
            emulator.shutdown().await;
        }
        let emulator = Emulator::start().await.expect("starts");
        let client = Client::builder()
            .adapter(emulator.twilio().from("+15005550006").build().expect("twilio"))
            .build()
            .expect("client");
        let mut sends = Vec::new();
        for i in 0..300 {
            let began = Instant::now();
            client.send(&Message::new("+14155550123", format!("bench {i}"))).await.expect("accepted");
            sends.push(began.elapsed());
        }
        emulator.shutdown().await;
        (starts, sends)
    });
    println!("| measurement | runs | p50 | p95 | max | target |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for (name, samples, target) in [("emulator start", &mut starts, "< 1 s"), ("send round trip", &mut sends, "-")] {
        let max = *samples.iter().max().expect("samples");
        println!(
            "| {name} | {} | {:?} | {:?} | {max:?} | {target} |",
            samples.len(),
            percentile(samples, 0.5),
            percentile(samples, 0.95)
        );
    }
}
