//! GSM-7 / UCS-2 detection and segment estimates.
//!
//! Pure functions. A GSM-7 body is estimated without allocating; a UCS-2 body allocates only to
//! collect its non-GSM characters (and, past 32 distinct ones, a set to find repeats).
//!
//! ```
//! use sms_sdk::encoding::{estimate_segments, Encoding};
//!
//! let preview = estimate_segments("Your package is ready 📦");
//! assert_eq!(preview.encoding, Encoding::Ucs2);
//! assert_eq!(preview.units, 24);
//! assert_eq!(preview.segments, 1);
//! assert_eq!(preview.non_gsm_characters, vec!['📦']);
//! ```
//!
//! A concatenated UCS-2 message is packed by extended grapheme cluster (UAX #29), as handsets and
//! Twilio's segment calculator do: a flag, a ZWJ sequence or a letter with its combining marks is
//! never split between segments unless it is larger than a segment on its own.
//!
//! The count is an estimate, never a price: providers may re-encode (Twilio `SmartEncoded`,
//! Telnyx `encoding`) and some routes concatenate differently.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

/// The 127 characters of the GSM 03.38 default alphabet (every position but ESC), in table order.
/// Each costs one septet.
pub const GSM7_BASIC_CHARACTERS: &str = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";

/// The 10 characters of the GSM 03.38 extension table. Each costs two septets (escape + character).
pub const GSM7_EXTENSION_CHARACTERS: &str = "\u{000C}^{}\\[~]|€";

/// Septets of the code points below U+0100 (0: not GSM-7), built from the two tables above.
static LATIN1_SEPTETS: [u8; 256] = latin1_septets();

// Runs at compile time only: an index out of range fails the build, never a send.
#[allow(clippy::indexing_slicing)]
const fn latin1_septets() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut pass = 0;
    while pass < 2 {
        let (text, septets) = if pass == 0 { (GSM7_BASIC_CHARACTERS, 1) } else { (GSM7_EXTENSION_CHARACTERS, 2) };
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            // Every character of the tables below U+0100 is one byte (ASCII) or two (U+0080..U+07FF).
            let (code_point, width) = if bytes[i] < 0x80 {
                (bytes[i] as usize, 1)
            } else if bytes[i] >> 5 == 0b110 {
                ((((bytes[i] & 0x1f) as usize) << 6) | (bytes[i + 1] & 0x3f) as usize, 2)
            } else if bytes[i] >> 4 == 0b1110 {
                (usize::MAX, 3)
            } else {
                (usize::MAX, 4)
            };
            if code_point < 256 {
                table[code_point] = septets;
            }
            i += width;
        }
        pass += 1;
    }
    table
}

/// Septets of one character in GSM-7 (1 or 2), or 0 when it is in neither table.
#[inline]
fn septets(c: char) -> u8 {
    let code_point = c as u32;
    if code_point < 256 {
        LATIN1_SEPTETS.get(code_point as usize).copied().unwrap_or(0)
    } else {
        match c {
            'Δ' | 'Φ' | 'Γ' | 'Λ' | 'Ω' | 'Π' | 'Ψ' | 'Σ' | 'Θ' | 'Ξ' => 1,
            '€' => 2,
            _ => 0,
        }
    }
}

/// Units that fit in one message, and in each part of a concatenated message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SegmentLimit {
    /// Units in a message that is sent as one segment.
    pub single: u32,
    /// Units in each part of a concatenated message (the rest carries the UDH).
    pub concatenated: u32,
}

/// GSM-7 limits: 160 septets alone, 153 per part.
pub const GSM7_LIMITS: SegmentLimit = SegmentLimit { single: 160, concatenated: 153 };
/// UCS-2 limits: 70 UTF-16 units alone, 67 per part.
pub const UCS2_LIMITS: SegmentLimit = SegmentLimit { single: 70, concatenated: 67 };

/// The encoding a message body needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// Every character is in the GSM-7 basic or extension table.
    Gsm7,
    /// At least one character is outside GSM-7, so the whole message is UCS-2.
    Ucs2,
}

impl Encoding {
    /// The segment limits of this encoding.
    #[must_use]
    pub const fn limits(self) -> SegmentLimit {
        match self {
            Self::Gsm7 => GSM7_LIMITS,
            Self::Ucs2 => UCS2_LIMITS,
        }
    }

    /// `gsm7` or `ucs2`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Gsm7 => "gsm7",
            Self::Ucs2 => "ucs2",
        }
    }
}

/// The segment estimate of a body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentPreview {
    /// The encoding the whole body needs.
    pub encoding: Encoding,
    /// Estimated number of segments (0 for an empty body).
    pub segments: u32,
    /// Septets (GSM-7) or UTF-16 units (UCS-2) in the body.
    pub units: u32,
    /// Capacity of one segment: the single limit for 0 or 1 segment, else the concatenated one.
    pub units_per_segment: u32,
    /// Units still free in the last segment.
    pub remaining_in_segment: u32,
    /// Distinct characters that forced UCS-2, in order of first appearance.
    pub non_gsm_characters: Vec<char>,
}

impl SegmentPreview {
    /// True exactly when the encoding is UCS-2.
    #[must_use]
    pub fn contains_unicode(&self) -> bool {
        self.encoding == Encoding::Ucs2
    }
}

/// Septets a character costs in GSM-7, or `None` when it is not in either table.
#[must_use]
pub fn gsm7_cost(c: char) -> Option<u32> {
    match septets(c) {
        0 => None,
        n => Some(u32::from(n)),
    }
}

/// True when every character of `text` is in the GSM-7 basic or extension table.
#[must_use]
pub fn is_gsm7(text: &str) -> bool {
    text.chars().all(|c| septets(c) != 0)
}

/// Greedy packing into concatenated segments: units placed, segments opened, units in the last.
///
/// Counts are `u64` so that no body can overflow them; they are clamped to `u32` at the end.
#[derive(Debug, Clone, Copy)]
struct Packer {
    capacity: u32,
    units: u64,
    segments: u64,
    used: u32,
}

impl Packer {
    const fn new(capacity: u32) -> Self {
        Self { capacity, units: 0, segments: 1, used: 0 }
    }

    /// Places an item of `cost` units (at most the capacity): it starts the next segment when it
    /// does not fit in the current one.
    #[inline]
    fn place(&mut self, cost: u32) {
        if self.used + cost > self.capacity {
            self.segments += 1;
            self.used = 0;
        }
        self.used += cost;
        self.units += u64::from(cost);
    }

    /// Starts the next segment unless the current one is still empty.
    fn break_segment(&mut self) {
        if self.used > 0 {
            self.segments += 1;
            self.used = 0;
        }
    }

    fn finish(self, encoding: Encoding, non_gsm_characters: Vec<char>) -> SegmentPreview {
        let limits = encoding.limits();
        let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let units = clamp(self.units);
        let (segments, units_per_segment, remaining_in_segment) = if self.units == 0 {
            (0, limits.single, limits.single)
        } else if self.units <= u64::from(limits.single) {
            (1, limits.single, limits.single - units)
        } else {
            (clamp(self.segments), limits.concatenated, limits.concatenated - self.used)
        };
        SegmentPreview { encoding, segments, units, units_per_segment, remaining_in_segment, non_gsm_characters }
    }
}

/// Estimates the encoding and segment count of `body`.
///
/// GSM-7 bodies are packed by character: an extension character's escape pair is never split.
/// UCS-2 bodies are packed by extended grapheme cluster: a cluster that does not fit in the
/// current segment starts the next one, and a cluster larger than a segment is split between code
/// points (never inside a surrogate pair). CR LF counts as two characters that may be split.
/// Counts too large for `u32` saturate at `u32::MAX`.
#[must_use]
pub fn estimate_segments(body: &str) -> SegmentPreview {
    match estimate_gsm7(body) {
        Some(preview) => preview,
        None => estimate_ucs2(body),
    }
}

/// The GSM-7 estimate, or `None` at the first character outside GSM-7. Does not allocate.
fn estimate_gsm7(body: &str) -> Option<SegmentPreview> {
    let mut packer = Packer::new(GSM7_LIMITS.concatenated);
    for c in body.chars() {
        match septets(c) {
            0 => return None,
            n => packer.place(u32::from(n)),
        }
    }
    // `Vec::new` does not allocate.
    Some(packer.finish(Encoding::Gsm7, Vec::new()))
}

fn estimate_ucs2(body: &str) -> SegmentPreview {
    let mut non_gsm_characters = Vec::new();
    let mut seen = Seen::Few;
    let mut units: u64 = 0;
    // Every GSM-7 character stands alone (a test checks it): only the others are looked up.
    let mut every_character_alone = true;
    for c in body.chars() {
        units += u64::from(utf16_units(c));
        if septets(c) == 0 {
            seen.note(c, &mut non_gsm_characters);
            every_character_alone &= stands_alone(c);
        }
    }
    let mut packer = Packer::new(UCS2_LIMITS.concatenated);
    if units <= u64::from(UCS2_LIMITS.single) {
        // One segment whatever the clusters: no need to find them.
        packer.units = units;
        return packer.finish(Encoding::Ucs2, non_gsm_characters);
    }
    if every_character_alone {
        // Every cluster is one character (CR LF aside, which packs as two characters anyway).
        for c in body.chars() {
            packer.place(u32::from(utf16_units(c)));
        }
        return packer.finish(Encoding::Ucs2, non_gsm_characters);
    }
    for cluster in body.graphemes(true) {
        if cluster == "\r\n" {
            packer.place(1);
            packer.place(1);
            continue;
        }
        let cost: usize = cluster.chars().map(char::len_utf16).sum();
        match u32::try_from(cost) {
            Ok(cost) if cost <= packer.capacity => packer.place(cost),
            _ => {
                packer.break_segment();
                for c in cluster.chars() {
                    packer.place(u32::from(utf16_units(c)));
                }
            }
        }
    }
    packer.finish(Encoding::Ucs2, non_gsm_characters)
}

/// The distinct characters met so far: the list itself while it is short (no hashing), then a
/// set beside it. What is allocated stays proportional to the body.
enum Seen {
    Few,
    Many(HashSet<char>),
}

impl Seen {
    /// Distinct characters looked up in the list itself before a set is made.
    const FEW: usize = 32;

    /// Appends `c` to `list` unless it is already there.
    fn note(&mut self, c: char, list: &mut Vec<char>) {
        match self {
            Self::Few => {
                if list.contains(&c) {
                    return;
                }
                list.push(c);
                if list.len() > Self::FEW {
                    *self = Self::Many(list.iter().copied().collect());
                }
            }
            Self::Many(set) => {
                if set.insert(c) {
                    list.push(c);
                }
            }
        }
    }
}

/// Whether `c` is a grapheme cluster on its own whatever comes before or after it: a character
/// of these blocks is none of what UAX #29 joins (extending and spacing marks, ZWJ, prepended
/// concatenation marks, regional indicators, Hangul jamo and syllables), so only control
/// characters and CR LF decide anything near it, and both pack like single characters. A
/// conservative list: a character outside it sends the body through the grapheme segmenter.
/// (A test checks every character of the list against `unicode-segmentation`.)
fn stands_alone(c: char) -> bool {
    matches!(c,
        // ASCII, Latin-1, Latin Extended-A and -B, IPA, spacing modifier letters.
        '\u{0}'..='\u{2FF}'
        // Greek and Coptic, Cyrillic (without its combining marks), Cyrillic Supplement.
        | '\u{370}'..='\u{482}'
        | '\u{48A}'..='\u{52F}'
        // Dashes, quotes, bullets and ellipsis; per mille to the double question marks.
        | '\u{2010}'..='\u{2027}'
        | '\u{2030}'..='\u{205E}'
        // Currency signs (the euro included).
        | '\u{20A0}'..='\u{20C0}'
        // Letterlike symbols, number forms, arrows, mathematical and technical symbols, enclosed
        // alphanumerics, box drawing, shapes, miscellaneous symbols and dingbats.
        | '\u{2100}'..='\u{27BF}'
        // CJK punctuation (without its tone marks), kana (without the combining voicing marks),
        // CJK unified ideographs, fullwidth ASCII.
        | '\u{3000}'..='\u{3029}'
        | '\u{3030}'..='\u{303F}'
        | '\u{3041}'..='\u{3096}'
        | '\u{309B}'..='\u{30FF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{FF01}'..='\u{FF5E}'
        // Pictographs, emoticons, transport and supplemental symbols (without the skin tones
        // U+1F3FB..=U+1F3FF, which are Extend).
        | '\u{1F300}'..='\u{1F3FA}'
        | '\u{1F400}'..='\u{1F64F}'
        | '\u{1F680}'..='\u{1F6FF}'
        | '\u{1F900}'..='\u{1F9FF}'
    )
}

/// A character's UTF-16 code units: 2 outside the Basic Multilingual Plane, else 1.
fn utf16_units(c: char) -> u8 {
    if c.len_utf16() == 1 { 1 } else { 2 }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn a(n: usize) -> String {
        "a".repeat(n)
    }

    #[test]
    fn t001_empty_body() {
        let p = estimate_segments("");
        assert_eq!((p.encoding, p.segments, p.units, p.contains_unicode()), (Encoding::Gsm7, 0, 0, false));
        assert_eq!((p.units_per_segment, p.remaining_in_segment), (160, 160));
    }

    #[test]
    fn t002_gsm7_segment_boundaries() {
        for (n, segments) in [(1, 1), (160, 1), (161, 2), (306, 2), (307, 3), (459, 3), (460, 4)] {
            let p = estimate_segments(&a(n));
            assert_eq!(
                (p.encoding, p.units, p.segments),
                (Encoding::Gsm7, u32::try_from(n).unwrap(), segments),
                "n={n}"
            );
            assert_eq!(p.units_per_segment, if n <= 160 { 160 } else { 153 });
        }
    }

    #[test]
    fn t003_extension_characters_cost_two() {
        assert_eq!(estimate_segments("€").units, 2);
        assert_eq!(estimate_segments("{[]}").units, 8);
        let p = estimate_segments(&"€".repeat(80));
        assert_eq!((p.units, p.segments), (160, 1));
        let p = estimate_segments(&"€".repeat(81));
        assert_eq!((p.units, p.segments), (162, 2));
    }

    #[test]
    fn t004_escape_pair_never_straddles_a_segment() {
        let p = estimate_segments(&format!("{}€{}", a(152), a(152)));
        assert_eq!((p.units, p.segments), (306, 3));
    }

    #[test]
    fn t005_exactly_full_last_segment() {
        let p = estimate_segments(&format!("{}€{}", a(151), a(153)));
        assert_eq!((p.units, p.segments, p.remaining_in_segment), (306, 2, 0));
    }

    #[test]
    fn t006_remaining_in_segment() {
        assert_eq!(estimate_segments(&a(100)).remaining_in_segment, 60);
        assert_eq!(estimate_segments(&a(200)).remaining_in_segment, 106);
    }

    #[test]
    fn t007_ucs2_segment_boundaries() {
        for (n, segments) in [(70, 1), (71, 2), (134, 2), (135, 3), (201, 3), (202, 4)] {
            let p = estimate_segments(&"ж".repeat(n));
            assert_eq!(
                (p.encoding, p.units, p.segments),
                (Encoding::Ucs2, u32::try_from(n).unwrap(), segments),
                "n={n}"
            );
            assert_eq!(p.units_per_segment, if n <= 70 { 70 } else { 67 });
        }
    }

    #[test]
    fn t008_emoji_forces_ucs2() {
        let p = estimate_segments("Your package is ready 📦");
        assert_eq!((p.encoding, p.segments, p.units, p.contains_unicode()), (Encoding::Ucs2, 1, 24, true));
        assert_eq!(p.non_gsm_characters, vec!['📦']);
    }

    #[test]
    fn t009_astral_characters_cost_two_units() {
        let p = estimate_segments(&format!("{}📦", a(68)));
        assert_eq!((p.units, p.segments), (70, 1));
        let p = estimate_segments(&format!("{}📦", a(69)));
        assert_eq!((p.units, p.segments), (71, 2));
    }

    #[test]
    fn t010_surrogate_pair_never_split() {
        let p = estimate_segments(&format!("{}📦{}", a(66), a(66)));
        assert_eq!((p.units, p.segments), (134, 3));
    }

    #[test]
    fn t011_extension_character_costs_one_unit_in_ucs2() {
        let p = estimate_segments("€ж");
        assert_eq!((p.encoding, p.units), (Encoding::Ucs2, 2));
    }

    #[test]
    fn t012_non_gsm_characters_distinct_in_order() {
        assert_eq!(estimate_segments("жaжb📦ж").non_gsm_characters, vec!['ж', '📦']);
    }

    #[test]
    fn t013_smart_quotes_are_ucs2() {
        assert_eq!(estimate_segments("“smart quotes”").encoding, Encoding::Ucs2);
    }

    #[test]
    fn t014_tables() {
        assert!(is_gsm7(GSM7_BASIC_CHARACTERS));
        assert!(is_gsm7(GSM7_EXTENSION_CHARACTERS));
        assert_eq!(GSM7_BASIC_CHARACTERS.chars().count(), 127);
        assert_eq!(GSM7_EXTENSION_CHARACTERS.chars().count(), 10);
        // Every printable ASCII character but the backtick is in one of the tables.
        for c in (0x20u8..0x7f).map(char::from).filter(|c| *c != '`') {
            assert!(gsm7_cost(c).is_some(), "{c}");
        }
    }

    #[test]
    fn t015_non_gsm_characters() {
        for x in ["ж", "📦", "ç", "`", "’", "你"] {
            assert!(!is_gsm7(&format!("hello {x}")), "{x}");
        }
    }

    #[test]
    fn t016_segment_limits() {
        assert_eq!(GSM7_LIMITS, SegmentLimit { single: 160, concatenated: 153 });
        assert_eq!(UCS2_LIMITS, SegmentLimit { single: 70, concatenated: 67 });
    }

    #[test]
    fn t017_examples() {
        let p = estimate_segments("Hello 📦");
        assert_eq!((p.encoding, p.units, p.segments), (Encoding::Ucs2, 8, 1));
        let p = estimate_segments("Your order has shipped.");
        assert_eq!((p.encoding, p.segments), (Encoding::Gsm7, 1));
        let p = estimate_segments("Test message from SMS SDK doctor.");
        assert_eq!((p.encoding, p.units, p.segments), (Encoding::Gsm7, 33, 1));
        let p = estimate_segments("Café opens at 9 € 5");
        assert_eq!((p.encoding, p.units, p.segments), (Encoding::Gsm7, 20, 1));
    }

    #[test]
    fn t018_legacy_examples() {
        let p = estimate_segments("^");
        assert_eq!((p.encoding, p.units, p.segments), (Encoding::Gsm7, 2, 1));
        assert_eq!(estimate_segments("😀").units, 2);
        let p = estimate_segments(&"😀".repeat(36));
        assert_eq!((p.units, p.segments), (72, 2));
    }

    #[test]
    fn lookup_table_matches_the_table_strings() {
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            let expected = if GSM7_BASIC_CHARACTERS.contains(c) {
                Some(1)
            } else if GSM7_EXTENSION_CHARACTERS.contains(c) {
                Some(2)
            } else {
                None
            };
            assert_eq!(gsm7_cost(c), expected, "U+{:04X}", u32::from(c));
        }
    }

    // Beyond the reference: UCS-2 packs by grapheme cluster (decisions, "Segments: grapheme
    // clusters stay whole"). The reference vectors above hold no multi-code-point cluster.

    #[test]
    fn a_cluster_that_does_not_fit_starts_the_next_segment() {
        // 64 units, then a flag (4 units) that the reference would split after its first half.
        let p = estimate_segments(&format!("{}🇺🇸{}", "ж".repeat(64), "ж".repeat(10)));
        assert_eq!((p.units, p.segments, p.remaining_in_segment), (78, 2, 67 - 14));
        // The family (11 units) moves whole to the second segment.
        let p = estimate_segments(&format!("{}👨‍👩‍👧‍👦{}", "ж".repeat(60), "ж".repeat(10)));
        assert_eq!((p.units, p.segments, p.remaining_in_segment), (81, 2, 67 - 21));
        // A letter and its combining mark stay together.
        let p = estimate_segments(&format!("{}e\u{301}{}", "ж".repeat(66), "ж".repeat(10)));
        assert_eq!((p.units, p.segments, p.remaining_in_segment), (78, 2, 67 - 12));
    }

    #[test]
    fn crlf_may_split() {
        let p = estimate_segments(&format!("{}\r\n{}", "ж".repeat(66), "ж".repeat(10)));
        assert_eq!((p.units, p.segments, p.remaining_in_segment), (78, 2, 67 - 11));
    }

    #[test]
    fn a_cluster_larger_than_a_segment_splits_between_code_points() {
        // One cluster of 81 units: 67 | 14.
        let p = estimate_segments(&format!("a{}", "\u{301}".repeat(80)));
        assert_eq!((p.units, p.segments, p.remaining_in_segment), (81, 2, 67 - 14));
        // It starts the next segment first: 5 | 67 | 14.
        let p = estimate_segments(&format!("жжжжжa{}", "\u{301}".repeat(80)));
        assert_eq!((p.units, p.segments, p.remaining_in_segment), (86, 3, 67 - 14));
        // Never inside a surrogate pair: 👍 and 32 skin tones fill 66 units, the 33rd moves on.
        let p = estimate_segments(&format!("👍{}", "🏽".repeat(40)));
        assert_eq!((p.units, p.segments, p.remaining_in_segment), (82, 2, 67 - 16));
    }

    /// What UAX #29 says about `c` among neighbours of every kind that joins: it stands alone
    /// when no neighbour joins it (CR LF aside).
    fn alone_by_unicode_segmentation(c: char) -> bool {
        // Neighbours: a letter, the character itself, Hangul V and T (which join L, V, LV, LVT).
        let neighbours = ['a', c, '\u{1161}', '\u{11A8}'];
        let splits = |text: String| text.graphemes(true).count() == text.chars().count();
        neighbours.iter().all(|&n| (c == '\r' && n == '\n') || splits(format!("{c}{n}")))
            && neighbours.iter().all(|&n| (n == '\r' && c == '\n') || splits(format!("{n}{c}")))
    }

    #[test]
    fn characters_that_stand_alone_join_nothing() {
        let alone: Vec<char> = (0..=0x10_FFFF).filter_map(char::from_u32).filter(|&c| stands_alone(c)).collect();
        assert!(alone.len() > 25_000, "{}", alone.len());
        for c in alone {
            assert!(alone_by_unicode_segmentation(c), "U+{:04X} joins a neighbour", u32::from(c));
        }
        // Every GSM-7 character is on it (the estimate looks up only the others).
        for c in GSM7_BASIC_CHARACTERS.chars().chain(GSM7_EXTENSION_CHARACTERS.chars()) {
            assert!(stands_alone(c), "U+{:04X}", u32::from(c));
        }
        // And the joiners are not on the list.
        for c in ['\u{301}', '\u{200D}', '\u{FE0F}', '\u{1F3FD}', '\u{1F1FA}', '\u{1100}', '각', '\u{903}', '\u{600}']
        {
            assert!(!stands_alone(c), "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn many_distinct_characters_are_listed_once_in_order() {
        let text: String = ('\u{4E00}'..='\u{4E63}').chain('\u{4E00}'..='\u{4E63}').collect();
        let p = estimate_segments(&text);
        assert_eq!(p.non_gsm_characters, ('\u{4E00}'..='\u{4E63}').collect::<Vec<_>>());
        assert_eq!((p.units, p.segments), (200, 3));
    }

    /// A deliberately naive counter: split into per-character costs and fill segments one by one.
    fn naive_segments(text: &str) -> (u32, u32) {
        let gsm = text.chars().all(|c| GSM7_BASIC_CHARACTERS.contains(c) || GSM7_EXTENSION_CHARACTERS.contains(c));
        let costs: Vec<u32> = text
            .chars()
            .map(|c| {
                if !gsm {
                    u32::from(utf16_units(c))
                } else if GSM7_EXTENSION_CHARACTERS.contains(c) {
                    2
                } else {
                    1
                }
            })
            .collect();
        let total: u32 = costs.iter().sum();
        let (single, multi) = if gsm { (160, 153) } else { (70, 67) };
        if total == 0 {
            return (0, 0);
        }
        if total <= single {
            return (1, total);
        }
        let mut segments = vec![0u32];
        for cost in costs {
            if segments.last().copied().unwrap_or(0) + cost > multi {
                segments.push(0);
            }
            *segments.last_mut().unwrap() += cost;
        }
        (u32::try_from(segments.len()).unwrap(), total)
    }

    fn gsm_char() -> impl Strategy<Value = char> {
        let all: Vec<char> = GSM7_BASIC_CHARACTERS.chars().chain(GSM7_EXTENSION_CHARACTERS.chars()).collect();
        proptest::sample::select(all)
    }

    proptest! {
        #[test]
        fn gsm7_counts_agree_with_a_naive_counter(chars in proptest::collection::vec(gsm_char(), 0..700)) {
            let text: String = chars.into_iter().collect();
            let p = estimate_segments(&text);
            prop_assert_eq!(p.encoding, Encoding::Gsm7);
            prop_assert_eq!((p.segments, p.units), naive_segments(&text));
        }

        #[test]
        fn non_gsm_counts_agree_with_a_naive_counter(
            chars in proptest::collection::vec(prop_oneof![gsm_char(), any::<char>()], 0..400),
            forced in prop_oneof![Just('ж'), Just('📦'), Just('你')],
            at in any::<proptest::sample::Index>(),
        ) {
            let mut chars = chars;
            let position = at.index(chars.len() + 1);
            chars.insert(position, forced);
            let text: String = chars.into_iter().collect();
            let p = estimate_segments(&text);
            prop_assert_eq!(p.encoding, Encoding::Ucs2);
            // Grapheme clusters stay whole (decisions, "Segments: grapheme clusters stay whole"):
            // the same units, and never fewer segments than packing by code point.
            let (naive_segments, naive_units) = naive_segments(&text);
            prop_assert_eq!(p.units, naive_units);
            prop_assert!(p.segments >= naive_segments);
            prop_assert!(p.non_gsm_characters.contains(&forced));
        }
    }
}
