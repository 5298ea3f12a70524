//! Segment estimates against Twilio's `sms-segments-calculator` and against the reference
//! algorithm, on fixed bodies and on arbitrary ones.
//!
//! The ruling (docs/behavior.md, "Segments: grapheme clusters stay whole"): UCS-2 bodies are
//! packed by extended grapheme cluster (UAX #29, `unicode-segmentation`); a cluster that does not fit
//! starts the next segment; a cluster larger than a segment is split between code points; CR LF is
//! two characters that may split; GSM-7 packing is unchanged; an empty body is 0 segments.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde::Deserialize;
use sms_sdk::encoding::{
    Encoding, GSM7_BASIC_CHARACTERS, GSM7_EXTENSION_CHARACTERS, GSM7_LIMITS, SegmentPreview, UCS2_LIMITS,
    estimate_segments,
};
use unicode_segmentation::UnicodeSegmentation;

#[derive(Debug, Deserialize)]
struct Fixture {
    generator: String,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    body: String,
    encoding: Encoding,
    units: u32,
    segments: u32,
    remaining: i64,
    #[serde(default)]
    overfull: bool,
    current_clusters: Option<Recount>,
}

/// The calculator's result when its grapheme splitter is replaced by a current UAX #29 one.
#[derive(Debug, Deserialize)]
struct Recount {
    segments: u32,
    remaining: i64,
    #[serde(default)]
    overfull: bool,
}

/// Bodies holding a cluster larger than a segment. The calculator puts such a cluster whole into
/// one segment (past its 67 units; its `remaining` goes negative, and a cluster at the start leaves
/// the first segment empty). The ruling splits it between code points, after starting the next
/// segment when the current one already holds something. Expected `(segments, remaining)`:
const OVERSIZED: &[(&str, u32, u32)] = &[
    // One 81-unit cluster: 67 + 14. The calculator: 2 segments, the first one empty.
    ("ucs2 oversized: a + 80 combining acutes", 2, 67 - 14),
    // 10 units, then the cluster starts the next segment: 10 | 67 | 14. The calculator: 2.
    ("ucs2 oversized: zhe x10 + (a + 80 combining acutes)", 3, 67 - 14),
    // 67 | 14 + 10. The calculator: 3, the first one empty.
    ("ucs2 oversized: (a + 80 combining acutes) + zhe x10", 2, 67 - 24),
    // 201 units: 67 | 67 | 67. The calculator: 2.
    ("ucs2 oversized: (a + 200 combining acutes)", 3, 0),
    // 8 families of 11 units joined by 7 ZWJ: 95 units. The 6th family's girl (a surrogate pair at
    // units 66..68) does not fit in the first segment: 66 | 29. The calculator: 2.
    ("ucs2 oversized: ZWJ chain of 8 families", 2, 67 - 29),
    // 60 | 66 | 29 + 1. The calculator: 3.
    ("ucs2 oversized: zhe x60 + ZWJ chain of 8 families + zhe", 3, 67 - 30),
];

fn fixture() -> Fixture {
    serde_json::from_str(include_str!("fixtures/segments/calculator.json")).expect("fixture parses")
}

/// Every fixture body: the calculator's encoding and units always; its segment count and remaining
/// units unless the ruling decides otherwise (the empty body, current clusters, oversized clusters).
#[test]
fn estimates_agree_with_twilio_calculator() {
    let fixture = fixture();
    assert!(fixture.generator.starts_with("sms-segments-calculator 1.3.0"), "{}", fixture.generator);
    assert!(fixture.cases.len() >= 1000, "{} cases", fixture.cases.len());

    let mut failures = Vec::new();
    let mut oversized_seen = BTreeSet::new();
    for case in &fixture.cases {
        let p = estimate_segments(&case.body);
        let (segments, remaining) = if case.body.is_empty() {
            // The calculator counts an empty body as 1 segment; the ruling keeps 0.
            (0, i64::from(GSM7_LIMITS.single))
        } else if case.overfull || case.current_clusters.as_ref().is_some_and(|r| r.overfull) {
            let Some(&(_, segments, remaining)) = OVERSIZED.iter().find(|(name, ..)| *name == case.name) else {
                failures.push(format!("{}: overfull in the calculator, but no expectation in OVERSIZED", case.name));
                continue;
            };
            oversized_seen.insert(case.name.as_str());
            (segments, i64::from(remaining))
        } else if let Some(recount) = &case.current_clusters {
            // The ruling names current UAX #29; the calculator's splitter is older.
            (recount.segments, recount.remaining)
        } else {
            (case.segments, case.remaining)
        };
        let limits = case.encoding.limits();
        let per_segment = if segments <= 1 { limits.single } else { limits.concatenated };
        let expected = (case.encoding, case.units, segments, per_segment, remaining);
        let actual = (p.encoding, p.units, p.segments, p.units_per_segment, i64::from(p.remaining_in_segment));
        if expected != actual {
            failures.push(format!(
                "{}: expected (encoding, units, segments, per segment, remaining) {expected:?}, got {actual:?}",
                case.name
            ));
        }
    }
    for (name, ..) in OVERSIZED {
        if !oversized_seen.contains(name) {
            failures.push(format!("{name}: in OVERSIZED but not an overfull fixture case"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        fixture.cases.len(),
        failures.join("\n")
    );
}

/// The reference algorithm (reference behaviors §5), kept deliberately literal: code points,
/// table lookups by string search, greedy packing.
fn reference(body: &str) -> SegmentPreview {
    let gsm = |c: char| GSM7_BASIC_CHARACTERS.contains(c) || GSM7_EXTENSION_CHARACTERS.contains(c);
    let (mut non_gsm_characters, mut seen) = (Vec::new(), BTreeSet::new());
    for c in body.chars() {
        if !gsm(c) && seen.insert(c) {
            non_gsm_characters.push(c);
        }
    }
    let encoding = if non_gsm_characters.is_empty() { Encoding::Gsm7 } else { Encoding::Ucs2 };
    let cost = |c: char| -> u32 {
        match encoding {
            Encoding::Gsm7 if GSM7_EXTENSION_CHARACTERS.contains(c) => 2,
            Encoding::Gsm7 => 1,
            Encoding::Ucs2 => u32::try_from(c.len_utf16()).unwrap(),
        }
    };
    let limits = encoding.limits();
    let units: u32 = body.chars().map(cost).sum();
    let (segments, units_per_segment, remaining_in_segment) = if units == 0 {
        (0, limits.single, limits.single)
    } else if units <= limits.single {
        (1, limits.single, limits.single - units)
    } else {
        let (mut segments, mut used) = (1, 0);
        for c in body.chars().map(cost) {
            if used + c > limits.concatenated {
                segments += 1;
                used = 0;
            }
            used += c;
        }
        (segments, limits.concatenated, limits.concatenated - used)
    };
    SegmentPreview { encoding, segments, units, units_per_segment, remaining_in_segment, non_gsm_characters }
}

/// The invariants every body must satisfy. Returns the estimate for further checks.
fn check(body: &str) -> Result<SegmentPreview, TestCaseError> {
    let p = estimate_segments(body);
    let r = reference(body);
    // Encoding, units and the forcing characters are the reference's.
    prop_assert_eq!(p.encoding, r.encoding);
    prop_assert_eq!(p.units, r.units);
    prop_assert_eq!(&p.non_gsm_characters, &r.non_gsm_characters);
    prop_assert_eq!(p.contains_unicode(), p.encoding == Encoding::Ucs2);

    let limits = p.encoding.limits();
    prop_assert_eq!(p.segments == 0, body.is_empty());
    prop_assert_eq!(p.units == 0, body.is_empty());
    prop_assert!(p.segments <= p.units, "every segment holds a unit");
    prop_assert_eq!(p.units_per_segment, if p.segments <= 1 { limits.single } else { limits.concatenated });
    prop_assert!(p.remaining_in_segment <= p.units_per_segment);
    if p.segments <= 1 {
        prop_assert_eq!(p.remaining_in_segment, p.units_per_segment - p.units);
    } else {
        prop_assert!(p.units > limits.single);
        let last = p.units_per_segment - p.remaining_in_segment;
        prop_assert!(last >= 1, "the last segment holds a unit");
        // The earlier segments are full at most, so they hold at least the rest.
        prop_assert!(u64::from(p.segments - 1) * u64::from(p.units_per_segment) >= u64::from(p.units - last));
    }

    match p.encoding {
        // GSM-7 packing is unchanged.
        Encoding::Gsm7 => prop_assert_eq!(&p, &r),
        Encoding::Ucs2 => {
            // Fewer break points than the code-point greedy packing: never fewer segments.
            prop_assert!(p.segments >= r.segments, "{} < code-point greedy {}", p.segments, r.segments);
            // Two consecutive segments hold more than 65 units between them.
            prop_assert!(p.segments <= 2 * (p.units / 66) + 1, "{} segments for {} units", p.segments, p.units);
            // With no multi-code-point cluster (CR LF may split), the packing is the reference's.
            if body.graphemes(true).all(|g| g == "\r\n" || g.chars().nth(1).is_none()) {
                prop_assert_eq!(&p, &r);
            }
        }
    }
    Ok(p)
}

/// Pieces that exercise the cluster rules: joiners, marks, regional indicators, modifiers, tags,
/// Hangul jamo, Indic virama, CR and LF, and GSM-7 characters of both tables.
const PIECES: &[&str] = &[
    "a",
    " ",
    "€",
    "{",
    "\r",
    "\n",
    "\r\n",
    "\u{000C}",
    "é",
    "ж",
    "你",
    "`",
    "😀",
    "📦",
    "\u{200D}",
    "\u{0301}",
    "\u{FE0F}",
    "\u{20E3}",
    "🇺",
    "🇸",
    "🏽",
    "👍",
    "👨‍👩‍👧‍👦",
    "👩‍🦰",
    "🏴",
    "\u{E0067}",
    "\u{E007F}",
    "\u{1100}",
    "\u{1161}",
    "\u{11A8}",
    "क",
    "्",
    "ष",
    "\u{0E33}",
    "\u{0600}",
    "\u{00AD}",
];

fn piece() -> impl Strategy<Value = String> {
    let gsm: Vec<char> = GSM7_BASIC_CHARACTERS.chars().chain(GSM7_EXTENSION_CHARACTERS.chars()).collect();
    prop_oneof![
        3 => proptest::sample::select(gsm).prop_map(String::from),
        2 => any::<char>().prop_map(String::from),
        3 => proptest::sample::select(PIECES).prop_map(String::from),
    ]
}

fn body(max_pieces: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 0..max_pieces).prop_map(|pieces| pieces.concat())
}

/// Huge bodies: a long mix, or one piece repeated (one giant cluster, a run of regional
/// indicators, ...), up to about 100 KB.
fn huge_body() -> impl Strategy<Value = String> {
    prop_oneof![
        body(30_000),
        (piece(), 0..25_000usize).prop_map(|(piece, n)| piece.repeat(n)),
        (piece(), proptest::sample::select(PIECES), 0..25_000usize)
            .prop_map(|(first, then, n)| format!("{first}{}", then.repeat(n))),
    ]
}

proptest! {
    #[test]
    fn arbitrary_bodies_keep_the_invariants(text in body(400)) {
        check(&text)?;
    }

    #[test]
    fn arbitrary_strings_keep_the_invariants(text in any::<String>()) {
        check(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn huge_bodies_keep_the_invariants(text in huge_body()) {
        check(&text)?;
    }
}

/// Fixed worst cases, each about 100 KB: one cluster, one run of flags, a ZWJ chain, distinct
/// forcing characters, and GSM-7 extension characters.
#[test]
fn huge_adversarial_bodies() {
    let one_cluster = format!("a{}", "\u{0301}".repeat(100_000));
    let p = check(&one_cluster).unwrap();
    assert_eq!((p.units, p.segments), (100_001, 100_001u32.div_ceil(UCS2_LIMITS.concatenated)));

    let flags = "🇺".repeat(25_001);
    let p = check(&flags).unwrap();
    // 12,500 flags of 4 units, 16 to a segment (64 units); the odd indicator joins the last one.
    assert_eq!((p.units, p.segments, p.remaining_in_segment), (50_002, 12_500u32.div_ceil(16), 67 - 4 * 4 - 2));

    let chain = vec!["👨‍👩‍👧‍👦"; 9_000].join("\u{200D}");
    check(&chain).unwrap();

    let distinct: String =
        ('\u{3400}'..='\u{4DBF}').chain('\u{4E00}'..='\u{9FFF}').chain('\u{AC00}'..='\u{D7A3}').take(33_000).collect();
    let p = check(&distinct).unwrap();
    assert_eq!(p.non_gsm_characters.len(), 33_000);

    let escapes = "€{".repeat(25_000);
    let p = check(&escapes).unwrap();
    assert_eq!((p.encoding, p.units, p.segments), (Encoding::Gsm7, 100_000, 100_000u32.div_ceil(152)));
}
