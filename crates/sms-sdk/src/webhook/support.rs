//! What the provider verifiers share: settings, URL and form handling, and constant-time
//! comparisons.
//!
//! Everything here that runs before a signature is checked is linear in its input and allocates
//! at most about the size of that input: parameters are counted in one pass over the raw bytes
//! before any is decoded, and decoded values borrow from the input when nothing needs decoding.

// Shared by the four provider features: a build with only some of them leaves some helpers unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use http::HeaderMap;
use subtle::ConstantTimeEq;

use super::{DEFAULT_MAX_BODY, DEFAULT_MAX_PARAMS, DEFAULT_TOLERANCE, WebhookError, WebhookRequest};

/// The builder methods every verifier shares (`detect_keywords`, `max_body_bytes`), plus
/// `public_url`, `trust_proxy` and `max_params` for the URL-signing schemes with form
/// parameters (`url`) or `tolerance` for the timestamped ones (`timestamped`). Expands inside the verifier's `impl` block; the verifier
/// has a `settings: Settings` field.
macro_rules! verifier_options {
    (url) => {
        /// The public URL the provider calls, when a proxy changes what the server sees.
        #[must_use]
        pub fn public_url(mut self, url: impl Into<String>) -> Self {
            self.settings.public_url = Some(url.into());
            self
        }

        /// Rebuilds the URL from `X-Forwarded-Proto` and `X-Forwarded-Host` (only behind a proxy
        /// you control: clients can set these headers).
        #[must_use]
        pub fn trust_proxy(mut self, trust: bool) -> Self {
            self.settings.trust_proxy = trust;
            self
        }

        /// The most form parameters (body and URL query together) decoded before the signature
        /// is checked (default 1,024); more is a payload error
        /// ([`WebhookError::TooManyParameters`](crate::webhook::WebhookError::TooManyParameters)).
        #[must_use]
        pub fn max_params(mut self, limit: usize) -> Self {
            self.settings.max_params = limit;
            self
        }

        $crate::webhook::verifier_options!(common);
    };
    (timestamped) => {
        /// The freshness window of the timestamp, in both directions (default 300 s).
        #[must_use]
        pub fn tolerance(mut self, tolerance: std::time::Duration) -> Self {
            self.settings.tolerance = tolerance;
            self
        }

        $crate::webhook::verifier_options!(common);
    };
    (common) => {
        /// Whether whole-message STOP/HELP keywords become opt-out and help events (default true).
        #[must_use]
        pub fn detect_keywords(mut self, detect: bool) -> Self {
            self.settings.detect_keywords = detect;
            self
        }

        /// The largest body accepted (default 1 MiB).
        #[must_use]
        pub fn max_body_bytes(mut self, limit: usize) -> Self {
            self.settings.max_body = limit;
            self
        }
    };
}
#[allow(unused_imports)] // not every provider feature uses every arm
pub(crate) use verifier_options;

/// Options shared by the verifiers.
#[derive(Clone)]
pub(crate) struct Settings {
    /// The URL the provider signed, when the server sees another one (a proxy).
    pub(crate) public_url: Option<String>,
    /// Rebuild the URL from `X-Forwarded-Proto` and `X-Forwarded-Host`.
    pub(crate) trust_proxy: bool,
    /// Match whole-message STOP/HELP keywords.
    pub(crate) detect_keywords: bool,
    /// The largest body accepted.
    pub(crate) max_body: usize,
    /// The most form parameters decoded.
    pub(crate) max_params: usize,
    /// The freshness window of timestamped schemes.
    pub(crate) tolerance: Duration,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("public_url", &self.public_url.as_deref().map(super::without_userinfo))
            .field("trust_proxy", &self.trust_proxy)
            .field("detect_keywords", &self.detect_keywords)
            .field("max_body", &self.max_body)
            .field("max_params", &self.max_params)
            .field("tolerance", &self.tolerance)
            .finish()
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            public_url: None,
            trust_proxy: false,
            detect_keywords: true,
            max_body: DEFAULT_MAX_BODY,
            max_params: DEFAULT_MAX_PARAMS,
            tolerance: DEFAULT_TOLERANCE,
        }
    }
}

impl Settings {
    /// Refuses a body over the limit.
    pub(crate) fn check_size(&self, provider: &'static str, request: &WebhookRequest<'_>) -> Result<(), WebhookError> {
        if request.body.len() > self.max_body {
            return Err(WebhookError::BodyTooLarge { provider, limit: self.max_body });
        }
        Ok(())
    }

    /// Refuses `count` parameters when they are more than the limit.
    pub(crate) fn check_param_count(&self, provider: &'static str, count: usize) -> Result<(), WebhookError> {
        if count > self.max_params {
            return Err(WebhookError::TooManyParameters { provider, limit: self.max_params });
        }
        Ok(())
    }

    /// The form parameters of `input`, counted against the limit before any is decoded.
    pub(crate) fn form_params<'a>(&self, provider: &'static str, input: &'a [u8]) -> Result<Pairs<'a>, WebhookError> {
        let count = count_params(input);
        self.check_param_count(provider, count)?;
        Ok(form_pairs_counted(input, count))
    }

    /// The form-encoded parameters a form webhook carries: the URL query for GET, the body
    /// otherwise (count them with [`Settings::form_params`] before decoding).
    pub(crate) fn encoded_params<'a>(request: &WebhookRequest<'a>) -> &'a [u8] {
        if request.method.eq_ignore_ascii_case("GET") { query(request.url).as_bytes() } else { request.body }
    }

    /// The URL the provider signed: the public URL (with the request's query appended when it
    /// has none), the URL rebuilt from forwarded headers when the proxy is trusted, or the URL as
    /// received.
    pub(crate) fn signed_url<'a>(&'a self, request: &WebhookRequest<'a>) -> Cow<'a, str> {
        let (scheme, authority, path, query) = split_url(request.url);
        if let Some(public) = &self.public_url {
            return if public.contains('?') || query.is_empty() {
                Cow::Borrowed(public)
            } else {
                Cow::Owned(format!("{public}{query}"))
            };
        }
        if self.trust_proxy {
            let first = |name: &str| {
                header(request.headers, name).and_then(|v| v.split(',').next()).map(str::trim).filter(|v| !v.is_empty())
            };
            let proto = first("x-forwarded-proto").unwrap_or(scheme);
            let host = first("x-forwarded-host").or_else(|| header(request.headers, "host")).unwrap_or(authority);
            return Cow::Owned(format!("{proto}://{host}{path}{query}"));
        }
        Cow::Borrowed(request.url)
    }
}

/// Splits a URL as received into scheme, authority, path and query (with its `?`).
pub(crate) fn split_url(url: &str) -> (&str, &str, &str, &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (before_fragment, _) = rest.split_once('#').unwrap_or((rest, ""));
    let authority_end = before_fragment.find(['/', '?']).unwrap_or(before_fragment.len());
    let (authority, tail) = before_fragment.split_at(authority_end);
    let query_start = tail.find('?').unwrap_or(tail.len());
    let (path, query) = tail.split_at(query_start);
    (scheme, authority, path, query)
}

/// The query of a URL as received, without the `?` that starts it (that one only: in
/// `https://h/p??a=1` the query is `?a=1`, whose first parameter is named `?a`).
pub(crate) fn query(url: &str) -> &str {
    let (_, _, _, query) = split_url(url);
    query.strip_prefix('?').unwrap_or(query)
}

/// A header's value as text. A `HeaderName` constant is found without parsing its name again.
pub(crate) fn header(headers: &HeaderMap, name: impl http::header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

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

/// Strict standard base64 (canonical padding, no trailing bits).
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD.decode(text.trim()).ok()
}

/// The most bytes a signature decodes to: an Ed25519 signature, rounded up to whole base64
/// quanta (the decoder asks for room for whole quanta).
const SIGNATURE_CAPACITY: usize = 64usize.div_ceil(3) * 3;

/// A decoded signature, on the stack.
#[derive(Clone, Copy)]
pub(crate) struct SignatureBytes {
    bytes: [u8; SIGNATURE_CAPACITY],
    len: usize,
}

impl std::ops::Deref for SignatureBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

/// A base64 signature of at most `max_bytes` bytes (64 at most), strictly decoded (as
/// [`decode_base64`]) without allocating; longer text is refused before it is decoded.
pub(crate) fn decode_signature(text: &str, max_bytes: usize) -> Option<SignatureBytes> {
    let text = text.trim();
    let max_bytes = max_bytes.min(SIGNATURE_CAPACITY);
    if text.len() > max_bytes.div_ceil(3).saturating_mul(4) {
        return None;
    }
    let mut bytes = [0u8; SIGNATURE_CAPACITY];
    let len = base64::engine::general_purpose::STANDARD.decode_slice(text, &mut bytes).ok()?;
    Some(SignatureBytes { bytes, len })
}

#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage"))]
/// A MAC with its key set up once (HMAC: the padded key's blocks already hashed), started anew
/// for each message by cloning. Its `Debug` shows nothing of the key, and the keyed state (this
/// one and every per-message clone) is zeroized on drop, as [`crate::Secret`] is: HMAC's state is
/// two hash cores, and the `zeroize` features of `sha1` and `sha2` make those cores wipe
/// themselves on drop (the checks below fail to compile without them).
#[derive(Clone)]
pub(crate) struct KeyedMac<M>(M);

#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage"))]
const _: () = {
    fn wiped_on_drop<T: hmac::digest::zeroize::ZeroizeOnDrop>() {}
    #[allow(dead_code)]
    fn hash_cores_are_wiped_on_drop() {
        wiped_on_drop::<<sha2::Sha256 as hmac::digest::block_api::CoreProxy>::Core>();
        #[cfg(feature = "twilio")]
        wiped_on_drop::<<sha1::Sha1 as hmac::digest::block_api::CoreProxy>::Core>();
    }
};

#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage"))]
impl<M> fmt::Debug for KeyedMac<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyedMac(..)")
    }
}

#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage"))]
impl<M: hmac::Mac + hmac::digest::KeyInit + Clone> KeyedMac<M> {
    /// The MAC keyed with `key`, or `None` when the algorithm refuses the key's length (HMAC
    /// takes any length).
    pub(crate) fn new(key: &[u8]) -> Option<Self> {
        <M as hmac::digest::KeyInit>::new_from_slice(key).ok().map(Self)
    }

    /// A fresh MAC context for one message.
    pub(crate) fn start(&self) -> M {
        self.0.clone()
    }
}

/// Standard base64 with padding.
pub(crate) fn encode_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Constant-time equality (lengths may leak): `subtle`'s comparison, eight bytes at a time.
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let ((a_words, a_rest), (b_words, b_rest)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
    let words = a_words
        .iter()
        .zip(b_words)
        .fold(subtle::Choice::from(1), |same, (x, y)| same & u64::from_ne_bytes(*x).ct_eq(&u64::from_ne_bytes(*y)));
    bool::from(words & a_rest.ct_eq(b_rest))
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

/// Seconds since the epoch (negative before it), saturating at the ends of `i64`.
pub(crate) fn unix_seconds(now: SystemTime) -> i64 {
    match now.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, i64::saturating_neg),
    }
}

/// A lenient timestamp (`…Z`, `…+00:00`, fractional seconds), as providers send them.
pub(crate) fn parse_time(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
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

        #[test]
        fn equality_is_subtles(a in proptest::collection::vec(0u8..3, 0..40), b in proptest::collection::vec(0u8..3, 0..40)) {
            prop_assert_eq!(same_bytes(&a, &b), a == b);
            prop_assert!(same_bytes(&a, &a.clone()));
        }

        #[test]
        fn stack_signatures_decode_as_base64(text in "[A-Za-z0-9+/=\\- ]{0,92}", max in proptest::sample::select(vec![20usize, 32, 64])) {
            let expected = (text.trim().len() <= max.div_ceil(3) * 4).then(|| decode_base64(&text)).flatten();
            prop_assert_eq!(decode_signature(&text, max).map(|bytes| bytes.to_vec()), expected);
        }
    }

    #[test]
    fn signature_bytes_are_on_the_stack_up_to_64() {
        let signature = encode_base64(&[7u8; 64]);
        assert_eq!(decode_signature(&signature, 64).map(|s| s.to_vec()), Some(vec![7u8; 64]));
        assert!(decode_signature(&signature, 32).is_none());
        assert_eq!(decode_signature(" AQ== ", 20).map(|s| s.to_vec()), Some(vec![1]));
    }
}
