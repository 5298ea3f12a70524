//! Hostile message bodies through the segment estimator: long grapheme clusters (combining
//! marks, ZWJ sequences, regional indicators, Hangul jamo), CR LF, extension characters and
//! astral characters, mixed at random and in long runs.

use std::collections::HashSet;

use sms_sdk::encoding::{Encoding, SegmentPreview, estimate_segments, gsm7_cost};

use super::GLOBAL;
use super::engine::{Budget, Fuzz, assert_linear};

/// Pieces of text that stress the packing: each is repeated a random number of times.
const PIECES: &[&str] = &[
    "a",
    "Hello, world. ",
    "€",
    "{[~]}|^\\",
    "\r\n",
    "\r",
    "\n",
    "é",
    "e\u{301}",
    "\u{301}",
    "\u{300}\u{301}\u{302}\u{303}",
    "😀",
    "👍🏽",
    "👨\u{200d}👩\u{200d}👧\u{200d}👦",
    "\u{200d}",
    "🇺",
    "🇸",
    "🇺🇸",
    "\u{1100}",
    "\u{1161}",
    "\u{11a8}",
    "각",
    "क्षि",
    "\u{feff}",
    "\u{fe0f}",
    "Ω",
    "ñ",
    "ç",
    "\u{10ffff}",
    "\0",
    "\u{7f}",
    "д",
];

/// A body of random pieces, some repeated many times.
fn body(rng: &mut fastrand::Rng) -> String {
    let mut body = String::new();
    let pieces = if rng.u8(..32) == 0 { rng.usize(..64) } else { rng.usize(..12) };
    for _ in 0..pieces {
        let times = match rng.u8(..128) {
            0 => rng.usize(..20_000),
            1..=24 => rng.usize(..300),
            _ => rng.usize(1..=4),
        };
        let piece = if rng.u8(..8) == 0 {
            char::from_u32(rng.u32(..0x11_0000)).map_or_else(|| "\u{fffd}".to_owned(), String::from)
        } else {
            PIECES[rng.usize(..PIECES.len())].to_owned()
        };
        body.push_str(&piece.repeat(times));
    }
    body
}

/// The invariants of an estimate that can be checked without the packing itself.
fn consistent(body: &str, preview: &SegmentPreview) -> Result<(), String> {
    let units: u64 = match preview.encoding {
        Encoding::Gsm7 => body.chars().map(|c| u64::from(gsm7_cost(c).unwrap_or(0))).sum(),
        Encoding::Ucs2 => body.chars().map(|c| c.len_utf16() as u64).sum(),
    };
    let gsm7 = body.chars().all(|c| gsm7_cost(c).is_some());
    let mut seen = HashSet::new();
    let non_gsm: Vec<char> = body.chars().filter(|c| gsm7_cost(*c).is_none() && seen.insert(*c)).collect();
    if (preview.encoding == Encoding::Gsm7) != gsm7 {
        return Err(format!("encoding {:?} for a body that is GSM-7: {gsm7}", preview.encoding));
    }
    if u64::from(preview.units) != units.min(u64::from(u32::MAX)) {
        return Err(format!("{} units, counted {units}", preview.units));
    }
    if preview.non_gsm_characters != non_gsm {
        return Err(format!("non-GSM characters {:?}, expected {non_gsm:?}", preview.non_gsm_characters));
    }
    if (preview.segments == 0) != body.is_empty() {
        return Err(format!("{} segments for a body of {} bytes", preview.segments, body.len()));
    }
    if u64::from(preview.segments) * u64::from(preview.units_per_segment) < u64::from(preview.units) {
        return Err(format!(
            "{} segments of {} cannot hold {} units",
            preview.segments, preview.units_per_segment, preview.units
        ));
    }
    if preview.remaining_in_segment > preview.units_per_segment {
        return Err(format!("{} left in a segment of {}", preview.remaining_in_segment, preview.units_per_segment));
    }
    Ok(())
}

/// Fuzzes the segment estimator: consistent estimates, no allocation for a GSM-7 body (beyond
/// the test harness's noise) and at most 16 bytes per input byte for a UCS-2 one (its distinct
/// non-GSM characters), and linear time on long clusters.
pub(crate) fn fuzz_estimator(name: &'static str, ci: u64) {
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        body,
        String::len,
        |body| estimate_segments(body),
        |body, preview| {
            consistent(body, preview)?;
            Ok(match preview.encoding {
                Encoding::Gsm7 => Budget::new(0, 16 * 1024),
                Encoding::Ucs2 => Budget::new(16, 16 * 1024),
            })
        },
    );
    let _exclusive = super::engine::exclusive();
    for (what, piece) in [
        ("combining marks on one letter", "\u{301}"),
        ("regional indicators", "🇺"),
        ("a ZWJ sequence", "👨\u{200d}"),
        ("Hangul jamo", "\u{1161}"),
        ("CR LF", "\r\n€"),
    ] {
        let make = |n: usize| format!("a{}", piece.repeat(n));
        let run = |body: &String| {
            std::hint::black_box(estimate_segments(std::hint::black_box(body)));
        };
        assert_linear(&format!("{name}: {what}"), 20_000, make, run);
    }
}
