//! SHA-256 in lowercase hex: fingerprints, Twilio's `bodySHA256` and Vonage's `payload_hash`.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The lowercase hex SHA-256 of `bytes` (64 characters).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().fold(String::with_capacity(64), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}
