//! GSM-7 / UCS-2 detection and segment estimates.
//!
//! Pure functions: no allocation beyond the list of non-GSM characters.
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
//! The count is an estimate, never a price: providers may re-encode (Twilio `SmartEncoded`,
//! Telnyx `encoding`) and some routes concatenate differently.

use serde::{Deserialize, Serialize};

/// The 127 characters of the GSM 03.38 default alphabet (every position but ESC), in table order.
/// Each costs one septet.
pub const GSM7_BASIC_CHARACTERS: &str = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";

/// The 10 characters of the GSM 03.38 extension table. Each costs two septets (escape + character).
pub const GSM7_EXTENSION_CHARACTERS: &str = "\u{000C}^{}\\[~]|€";

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
    if GSM7_BASIC_CHARACTERS.contains(c) {
        Some(1)
    } else if GSM7_EXTENSION_CHARACTERS.contains(c) {
        Some(2)
    } else {
        None
    }
}

/// True when every character of `text` is in the GSM-7 basic or extension table.
#[must_use]
pub fn is_gsm7(text: &str) -> bool {
    text.chars().all(|c| gsm7_cost(c).is_some())
}

/// Estimates the encoding and segment count of `body`.
///
/// Characters are taken by code point; an extension character's escape pair and a surrogate
/// pair are never split across segments.
#[must_use]
pub fn estimate_segments(body: &str) -> SegmentPreview {
    let mut non_gsm_characters: Vec<char> = Vec::new();
    for c in body.chars() {
        if gsm7_cost(c).is_none() && !non_gsm_characters.contains(&c) {
            non_gsm_characters.push(c);
        }
    }
    let encoding = if non_gsm_characters.is_empty() { Encoding::Gsm7 } else { Encoding::Ucs2 };
    let cost = |c: char| -> u32 {
        match encoding {
            Encoding::Gsm7 => gsm7_cost(c).unwrap_or(1),
            // `len_utf16` is at most 2, so the cast cannot truncate.
            Encoding::Ucs2 => c.len_utf16() as u32,
        }
    };
    let limits = encoding.limits();
    let units: u32 = body.chars().map(cost).sum();

    let (segments, units_per_segment, remaining_in_segment) = if units == 0 {
        (0, limits.single, limits.single)
    } else if units <= limits.single {
        (1, limits.single, limits.single - units)
    } else {
        let capacity = limits.concatenated;
        let (mut segments, mut used) = (1, 0);
        for c in body.chars() {
            let c = cost(c);
            if used + c > capacity {
                segments += 1;
                used = 0;
            }
            used += c;
        }
        (segments, capacity, capacity - used)
    };

    SegmentPreview { encoding, segments, units, units_per_segment, remaining_in_segment, non_gsm_characters }
}
