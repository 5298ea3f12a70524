//! SHA-256 in lowercase hex (fingerprints, Twilio's `bodySHA256` and Vonage's `payload_hash`),
//! and the constant-time comparison every signature check uses.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The lowercase hex digit of a nibble (`n` below 16).
const fn hex_digit(n: u8) -> u8 {
    if n < 10 { b'0' + n } else { b'a' + (n - 10) }
}

/// A SHA-256 digest in lowercase hex, as ASCII bytes, on the stack.
pub(crate) fn hex(digest: &[u8; 32]) -> [u8; 64] {
    let mut hex = [0u8; 64];
    for (pair, byte) in hex.chunks_exact_mut(2).zip(digest) {
        pair.copy_from_slice(&[hex_digit(byte >> 4), hex_digit(byte & 0x0f)]);
    }
    hex
}

/// The lowercase hex SHA-256 of `bytes` as ASCII bytes, on the stack.
pub(crate) fn sha256_hex_bytes(bytes: &[u8]) -> [u8; 64] {
    hex(&Sha256::digest(bytes).into())
}

/// The lowercase hex SHA-256 of `bytes` (64 characters).
#[cfg(any(test, all(feature = "testing", feature = "vonage")))]
#[cfg_attr(not(any(feature = "twilio", feature = "vonage")), allow(dead_code))] // their tests and builders
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    sha256_hex_bytes(bytes).iter().copied().map(char::from).collect()
}

/// Whether `given` is the hex SHA-256 of `bytes`, in either letter case, compared in constant
/// time (only the length may leak). Nothing is allocated.
#[cfg(any(feature = "twilio", feature = "vonage"))]
pub(crate) fn is_sha256_hex_of(given: &str, bytes: &[u8]) -> bool {
    let Ok(given) = <[u8; 64]>::try_from(given.as_bytes()) else { return false };
    same_bytes(&given.map(|b| b.to_ascii_lowercase()), &sha256_hex_bytes(bytes))
}

/// Constant-time equality (lengths may leak): `subtle`'s comparison, eight bytes at a time.
#[cfg_attr(not(any(feature = "twilio", feature = "plivo", feature = "vonage", feature = "sinch")), allow(dead_code))] // the HMAC checks
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn equality_is_subtles(a in proptest::collection::vec(0u8..3, 0..40), b in proptest::collection::vec(0u8..3, 0..40)) {
            prop_assert_eq!(same_bytes(&a, &b), a == b);
            prop_assert!(same_bytes(&a, &a.clone()));
        }
    }

    #[test]
    fn hex_of_known_digests() {
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[cfg(any(feature = "twilio", feature = "vonage"))]
    #[test]
    fn hex_comparison_ignores_letter_case_only() {
        let hex = sha256_hex(b"abc");
        assert!(is_sha256_hex_of(&hex, b"abc"));
        assert!(is_sha256_hex_of(&hex.to_ascii_uppercase(), b"abc"));
        assert!(!is_sha256_hex_of(&hex, b"abd"));
        assert!(!is_sha256_hex_of(&hex.chars().take(63).collect::<String>(), b"abc"));
        assert!(!is_sha256_hex_of(&format!("{hex}0"), b"abc"));
        assert!(!is_sha256_hex_of("", b"abc"));
    }
}
