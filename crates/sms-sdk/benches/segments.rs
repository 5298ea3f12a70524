//! Throughput of `estimate_segments`, printed as a table: `cargo bench -p sms-sdk --bench segments`.
//!
//! Target: at least 200 MB/s for GSM-7 bodies. The scaling rows time the same kind of body at 10 KB
//! and 1 MB: a linear estimator shows about the same MB/s on both. UCS-2 bodies whose characters
//! all stand alone (Cyrillic, smart quotes, CJK) are packed by character; those with combining
//! marks, ZWJ sequences, flags or skin tones go through the grapheme segmenter.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::hint::black_box;
use std::time::{Duration, Instant};

use sms_sdk::encoding::{GSM7_BASIC_CHARACTERS, GSM7_EXTENSION_CHARACTERS, estimate_segments};

/// Repeats `unit` until the body has at least `bytes` bytes.
fn sized(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes.div_ceil(unit.len()))
}

/// Mean MB/s of `estimate_segments(body)` over about `budget` of repetitions.
fn throughput(body: &str, budget: Duration) -> (f64, u64) {
    // Warm up, then grow the batch until one batch takes a measurable time.
    black_box(estimate_segments(black_box(body)));
    let mut iterations = 0u64;
    let start = Instant::now();
    let mut batch = 1u64;
    while start.elapsed() < budget {
        for _ in 0..batch {
            black_box(estimate_segments(black_box(body)));
        }
        iterations += batch;
        batch = (batch * 2).min(1 << 20);
    }
    let seconds = start.elapsed().as_secs_f64();
    #[allow(clippy::cast_precision_loss)] // a rate for a report
    let megabytes_per_second = body.len() as f64 * iterations as f64 / seconds / 1e6;
    (megabytes_per_second, iterations)
}

fn main() {
    let gsm_text = "Your order #1234 has shipped; track it at example.com/t/abc {ref: [x]} ~ thanks! ";
    let every_gsm = format!("{GSM7_BASIC_CHARACTERS}{GSM7_EXTENSION_CHARACTERS}");
    let ucs2_text = "Your package is ready 📦 Ваш заказ готов 👨‍👩‍👧‍👦 🇺🇸 👍🏽 ";
    // UCS-2 without any character that joins a grapheme cluster: packed by character.
    let cyrillic = "Ваш заказ №1234 отправлен; отследить: example.com/t/abc. Спасибо! ";
    let quoted = "Your order “#1234” has shipped — track it at example.com/t/abc… thanks! ";
    let cjk = "您的订单已发货，请在网站上查询物流信息。谢谢！";
    let cases: Vec<(&str, String)> = vec![
        ("GSM-7, 160 chars", sized("a", 160)),
        ("GSM-7, 160 chars of prose", gsm_text.repeat(2)[..160].to_owned()),
        ("GSM-7, 320 chars of prose", gsm_text.repeat(4)[..320].to_owned()),
        ("GSM-7, 10 KB of prose", sized(gsm_text, 10_000)),
        ("GSM-7, 10 KB of every table character", sized(&every_gsm, 10_000)),
        ("UCS-2, 24 chars with an emoji", "Your package is ready 📦".to_owned()),
        ("UCS-2, 10 KB with emoji", sized(ucs2_text, 10_000)),
        ("UCS-2, 320 chars of Cyrillic prose", cyrillic.chars().cycle().take(320).collect()),
        ("UCS-2, 10 KB of Cyrillic prose", sized(cyrillic, 10_000)),
        ("UCS-2, 10 KB of prose with smart quotes", sized(quoted, 10_000)),
        ("UCS-2, 10 KB of CJK prose", sized(cjk, 10_000)),
        ("scaling: GSM-7 prose, 10 KB", sized(gsm_text, 10_000)),
        ("scaling: GSM-7 prose, 1 MB", sized(gsm_text, 1_000_000)),
        ("scaling: UCS-2 emoji, 10 KB", sized(ucs2_text, 10_000)),
        ("scaling: UCS-2 emoji, 1 MB", sized(ucs2_text, 1_000_000)),
        ("scaling: one cluster, 10 KB", format!("a{}", sized("\u{301}", 10_000))),
        ("scaling: one cluster, 1 MB", format!("a{}", sized("\u{301}", 1_000_000))),
        ("scaling: flags, 10 KB", sized("🇺", 10_000)),
        ("scaling: flags, 1 MB", sized("🇺", 1_000_000)),
        ("scaling: distinct CJK, 10 KB", ('\u{4E00}'..).take(3_334).collect()),
        (
            "scaling: distinct CJK, 1 MB",
            ('\u{4E00}'..='\u{9FFF}').chain('\u{AC00}'..='\u{D7A3}').cycle().take(333_334).collect(),
        ),
    ];
    println!("{:<42} {:>10} {:>12} {:>10}", "body", "bytes", "iterations", "MB/s");
    for (name, body) in &cases {
        let (mb_per_s, iterations) = throughput(body, Duration::from_millis(300));
        println!("{name:<42} {:>10} {iterations:>12} {mb_per_s:>10.0}", body.len());
    }
}
