//! Form parameters: counted before they are decoded, decoded in place, read once each, and
//! sorted for the schemes that sign them sorted.
//!
//! Everything here that runs before a signature is checked is linear in its input and allocates
//! at most about the size of that input: parameters are counted in one pass over the raw bytes
//! before any is decoded, and decoded values borrow from the input when nothing needs decoding.

// Shared by the four provider features: a build with only some of them leaves some helpers unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

use std::borrow::Cow;

use crate::webhook::WebhookError;

/// Form-decoded name and value pairs; they borrow from the input unless decoding changed them.
pub(crate) type Pairs<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// How many parameters `url::form_urlencoded::parse` would yield for `input` (its non-empty
/// `&`-separated segments), counted in one pass without decoding anything.
pub(crate) fn count_params(input: &[u8]) -> usize {
    // A segment starts at the first byte when it is not `&`, and at every byte that is not `&`
    // right after one. Counted without branches, so that the loop vectorizes.
    let first = input.first().is_some_and(|&byte| byte != b'&');
    let after_first = input.get(1..).unwrap_or_default();
    let starts: usize =
        input.iter().zip(after_first).map(|(&before, &byte)| usize::from(before == b'&' && byte != b'&')).sum();
    starts + usize::from(first)
}

/// Whether a form component needs decoding: it holds a `+` or a `%`.
fn needs_decoding(component: &str) -> bool {
    component.bytes().any(|byte| matches!(byte, b'+' | b'%'))
}

/// The value of an ASCII hex digit.
fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

/// One name or value decoded as `url::form_urlencoded` decodes it: `+` is a space, `%` and two
/// hex digits are that byte (any other `%` stays as it is), and what is then not UTF-8 becomes
/// U+FFFD. Borrowed when there is nothing to decode.
fn decode_component(component: &str) -> Cow<'_, str> {
    if !needs_decoding(component) {
        return Cow::Borrowed(component);
    }
    let bytes = component.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let escaped =
            (byte == b'%').then(|| Some((hex_value(*bytes.get(i + 1)?)?, hex_value(*bytes.get(i + 2)?)?))).flatten();
        match (byte, escaped) {
            (_, Some((high, low))) => {
                decoded.push(high << 4 | low);
                i += 3;
            }
            (b'+', None) => {
                decoded.push(b' ');
                i += 1;
            }
            (_, None) => {
                decoded.push(byte);
                i += 1;
            }
        }
    }
    Cow::Owned(
        String::from_utf8(decoded).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()),
    )
}

/// Form-decoded pairs, keeping repeats and order (`+` is a space), exactly as
/// `url::form_urlencoded::parse` yields them. Callers that read input before its signature is
/// checked count it first ([`Settings::form_params`]).
///
/// Decoding is lazy: a UTF-8 input is split in place, and only a parameter holding a `+` or a
/// `%` goes through the decoder; every other name and value borrows from the input.
pub(crate) fn form_pairs(input: &[u8]) -> Pairs<'_> {
    form_pairs_counted(input, 0)
}

/// [`form_pairs`], with room for `count` pairs (counted by the caller) made at once.
pub(crate) fn form_pairs_counted(input: &[u8], count: usize) -> Pairs<'_> {
    let Ok(text) = std::str::from_utf8(input) else {
        // Not UTF-8: the decoder replaces what is invalid, pair by pair.
        return url::form_urlencoded::parse(input).collect();
    };
    let mut pairs = Vec::with_capacity(count);
    for segment in text.split('&').filter(|segment| !segment.is_empty()) {
        // Split at the first `=` as written (a decoded `%3D` does not split).
        let (name, value) = segment.split_once('=').unwrap_or((segment, ""));
        pairs.push((decode_component(name), decode_component(value)));
    }
    pairs
}

/// Verified form parameters as a normalizer reads them: the first value of each key, looked up
/// in place (nothing is copied; the event's `raw` object is built only when read). A key that
/// the normalizer reads may appear once only: a repeat is ambiguous (which one is meant?).
pub(crate) struct FormFields<'p, 'a> {
    pairs: &'p [(Cow<'a, str>, Cow<'a, str>)],
}

/// Up to this many distinct read keys are remembered in a list; more go to a hash set, so a
/// body of many media fields is checked in linear time.
const LISTED_KEYS: usize = 32;

impl<'p, 'a> FormFields<'p, 'a> {
    /// The fields of `pairs`, refusing as a payload error naming the key a repeat of a key that
    /// `read` says the normalizer reads.
    pub(crate) fn new(
        provider: &'static str,
        pairs: &'p [(Cow<'a, str>, Cow<'a, str>)],
        read: impl Fn(&str) -> bool,
    ) -> Result<Self, WebhookError> {
        match first_repeat(pairs.iter().map(|(key, _)| key.as_ref()), read) {
            Some(key) => Err(WebhookError::payload(provider, format!("the parameter {key} appears more than once"))),
            None => Ok(Self { pairs }),
        }
    }

    /// The first value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&'p str> {
        self.pairs.iter().find(|(k, _)| k == key).map(|(_, value)| value.as_ref())
    }

    /// Every parameter in order, repeats included (a repeated key is never one the normalizer
    /// reads).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'p str, &'p str)> + Clone + use<'p, 'a> {
        self.pairs.iter().map(|(key, value)| (key.as_ref(), value.as_ref()))
    }
}

/// The first key of `keys` that `read` says the normalizer reads and that an earlier key
/// repeats, found in linear time.
pub(crate) fn first_repeat<'k>(
    keys: impl IntoIterator<Item = &'k str>,
    read: impl Fn(&str) -> bool,
) -> Option<&'k str> {
    let mut listed: Vec<&str> = Vec::new();
    let mut hashed = std::collections::HashSet::new();
    keys.into_iter().filter(|key| read(key)).find(|&key| {
        if listed.len() < LISTED_KEYS {
            let repeated = listed.contains(&key);
            listed.push(key);
            repeated
        } else {
            listed.contains(&key) || !hashed.insert(key)
        }
    })
}

/// The index of a key `{prefix}{index}` written as `format!` writes numbers (`Media0`,
/// `MediaUrl12`; not `Media01`).
pub(crate) fn key_index(key: &str, prefix: &str) -> Option<usize> {
    let digits = key.strip_prefix(prefix)?;
    let canonical =
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// The string values of the keys `{prefix}{index}`, in index order: one pass over the fields,
/// never a loop up to a number taken from the payload.
pub(crate) fn indexed_values<'a>(
    fields: impl IntoIterator<Item = (&'a str, &'a str)>,
    prefix: &str,
) -> Vec<(usize, &'a str)> {
    let mut values: Vec<(usize, &str)> =
        fields.into_iter().filter_map(|(key, value)| Some((key_index(key, prefix)?, value))).collect();
    values.sort_unstable_by_key(|&(index, _)| index);
    values
}

/// The first 8 bytes of `text` as a big-endian number, zeros after its end: comparing these
/// orders as the bytes do, except that equal numbers need the bytes to decide.
fn prefix(text: &str) -> u64 {
    let mut bytes = [0u8; 8];
    for (slot, byte) in bytes.iter_mut().zip(text.bytes()) {
        *slot = byte;
    }
    u64::from_be_bytes(bytes)
}

/// A parameter to sort by name, then value, in byte order: its name's first 8 bytes as a
/// number, its name and its value. Sorting these tuples compares numbers, and strings only
/// where the numbers are equal.
pub(crate) type SortEntry<'p> = (u64, &'p str, &'p str);

/// The [`SortEntry`] of a name and value.
pub(crate) fn sort_entry<'p>((name, value): (&'p str, &'p str)) -> SortEntry<'p> {
    (prefix(name), name, value)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn form_input() -> impl Strategy<Value = Vec<u8>> {
        let bytes: Vec<&[u8]> = vec![
            b"a",
            b"=",
            b"&",
            b"%",
            b"%4",
            b"%41",
            b"%e2%82%ac",
            b"%E2%82",
            b"%ff",
            b"%3D",
            b"%2B",
            b"%+",
            b"+",
            b"\xff",
            "é".as_bytes(),
            b"~",
        ];
        proptest::collection::vec(proptest::sample::select(bytes), 0..24).prop_map(|parts| parts.concat())
    }

    proptest! {
        #[test]
        fn lazy_form_pairs_are_the_decoders(input in form_input()) {
            let expected: Vec<(String, String)> =
                url::form_urlencoded::parse(&input).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
            let pairs: Vec<(String, String)> =
                form_pairs(&input).into_iter().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
            prop_assert_eq!(&pairs, &expected);
            prop_assert_eq!(count_params(&input), expected.len());
        }

        #[test]
        fn sort_entries_order_as_the_pairs(pairs in proptest::collection::vec(("[a\\x00é]{0,10}", "[ab]{0,3}"), 0..12)) {
            let mut expected: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            expected.sort_unstable();
            let mut entries: Vec<SortEntry<'_>> = pairs.iter().map(|(k, v)| sort_entry((k, v))).collect();
            entries.sort_unstable();
            prop_assert_eq!(entries.into_iter().map(|(_, k, v)| (k, v)).collect::<Vec<_>>(), expected);
        }
    }

    #[test]
    fn parameters_are_counted_as_the_form_parser_yields_them() {
        for input in ["", "&", "a", "a&", "&&a&&b=&=c&", "a=1&a=1", "%26=%26&+"] {
            assert_eq!(count_params(input.as_bytes()), form_pairs(input.as_bytes()).len(), "{input:?}");
        }
    }

    proptest! {
        #[test]
        fn parameter_counts_match_the_parser(input in proptest::collection::vec(proptest::sample::select(b"a=&%+\xff".to_vec()), 0..64)) {
            prop_assert_eq!(count_params(&input), form_pairs(&input).len());
        }
    }

    #[test]
    fn indexed_keys_are_canonical() {
        assert_eq!(key_index("Media0", "Media"), Some(0));
        assert_eq!(key_index("MediaUrl12", "MediaUrl"), Some(12));
        for key in ["Media", "Media01", "Media-1", "Media+1", "MediaX", "Media99999999999999999999999"] {
            assert_eq!(key_index(key, "Media"), None, "{key}");
        }
    }
}
