//! Signatures and keys: strict base64, signatures decoded on the stack, and MACs keyed once.

// Shared by the four provider features: a build with only some of them leaves some helpers unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

use std::fmt;

use base64::Engine as _;

#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage", feature = "sinch"))]
use crate::error::Error;
#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage", feature = "sinch"))]
use crate::redact::Secret;

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

#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage", feature = "sinch"))]
/// A MAC with its key set up once (HMAC: the padded key's blocks already hashed), started anew
/// for each message by cloning. Its `Debug` shows nothing of the key, and the keyed state (this
/// one and every per-message clone) is zeroized on drop, as [`crate::Secret`] is: HMAC's state is
/// two hash cores, and the `zeroize` features of `sha1` and `sha2` make those cores wipe
/// themselves on drop (the checks below fail to compile without them).
#[derive(Clone)]
pub(crate) struct KeyedMac<M>(M);

#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage", feature = "sinch"))]
const _: () = {
    fn wiped_on_drop<T: hmac::digest::zeroize::ZeroizeOnDrop>() {}
    #[allow(dead_code)]
    fn hash_cores_are_wiped_on_drop() {
        wiped_on_drop::<<sha2::Sha256 as hmac::digest::block_api::CoreProxy>::Core>();
        #[cfg(feature = "twilio")]
        wiped_on_drop::<<sha1::Sha1 as hmac::digest::block_api::CoreProxy>::Core>();
        #[cfg(feature = "sinch")]
        wiped_on_drop::<<sha2::Sha512 as hmac::digest::block_api::CoreProxy>::Core>();
    }
};

#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage", feature = "sinch"))]
impl<M> fmt::Debug for KeyedMac<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyedMac(..)")
    }
}

#[cfg(any(feature = "twilio", feature = "plivo", feature = "vonage", feature = "sinch"))]
impl<M: hmac::Mac + hmac::digest::KeyInit + Clone> KeyedMac<M> {
    /// The MAC keyed with `key`, or `None` when the algorithm refuses the key's length (HMAC
    /// takes any length).
    pub(crate) fn new(key: &[u8]) -> Option<Self> {
        <M as hmac::digest::KeyInit>::new_from_slice(key).ok().map(Self)
    }

    /// The MAC keyed with a verifier's secret (`what`: "auth token", …), or the configuration
    /// error naming it: empty, or refused by the algorithm.
    pub(crate) fn from_secret(provider: &str, what: &str, algorithm: &str, secret: &Secret) -> Result<Self, Error> {
        if secret.is_empty() {
            return Err(Error::configuration(format!("The {provider} webhook verifier needs the {what}.")));
        }
        Self::new(secret.expose().as_bytes())
            .ok_or_else(|| Error::configuration(format!("The {provider} {what} cannot key {algorithm}.")))
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
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

    #[test]
    fn strict_base64_refuses_a_second_encoding() {
        assert_eq!(decode_base64("AQ=="), Some(vec![1]));
        assert_eq!(decode_base64("AR=="), None);
        assert_eq!(decode_base64("AQ"), None);
    }
}
