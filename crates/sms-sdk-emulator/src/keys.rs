//! The key material behind the fixed credentials, parsed once per process.

use std::sync::OnceLock;

use base64::Engine as _;
use ring::signature::{Ed25519KeyPair, RsaKeyPair};

use crate::credentials::{AWS_SNS_PRIVATE_KEY, TELNYX_SIGNING_SEED, VONAGE_PRIVATE_KEY};

/// The Telnyx signing key, the Vonage application's public key and the SNS signing key.
#[derive(Debug)]
pub(crate) struct Keys {
    /// Signs Telnyx webhooks.
    pub(crate) telnyx: Ed25519KeyPair,
    /// The DER `RSAPublicKey` that Vonage application JWTs are checked with.
    pub(crate) vonage_public: Vec<u8>,
    /// Signs the SNS notifications of AWS (the key of `AWS_SNS_CERTIFICATE`).
    pub(crate) aws_sns: RsaKeyPair,
}

static KEYS: OnceLock<Result<Keys, &'static str>> = OnceLock::new();

/// The parsed keys (the same for every emulator in the process).
pub(crate) fn keys() -> Result<&'static Keys, &'static str> {
    KEYS.get_or_init(parse).as_ref().map_err(|e| *e)
}

fn parse() -> Result<Keys, &'static str> {
    let telnyx = Ed25519KeyPair::from_seed_unchecked(&TELNYX_SIGNING_SEED)
        .map_err(|_| "the Telnyx signing seed is not an Ed25519 seed")?;
    let der = pem_to_der(VONAGE_PRIVATE_KEY).ok_or("the Vonage private key is not PEM")?;
    let pair = RsaKeyPair::from_pkcs8(&der).map_err(|_| "the Vonage private key is not an RSA PKCS#8 key")?;
    let der = pem_to_der(AWS_SNS_PRIVATE_KEY).ok_or("the SNS signing key is not PEM")?;
    let aws_sns = RsaKeyPair::from_pkcs8(&der).map_err(|_| "the SNS signing key is not an RSA PKCS#8 key")?;
    Ok(Keys { telnyx, vonage_public: pair.public().as_ref().to_vec(), aws_sns })
}

/// The DER inside a PEM block.
pub(crate) fn pem_to_der(pem: &str) -> Option<Vec<u8>> {
    let text: String = pem.lines().filter(|line| !line.starts_with("-----")).map(str::trim).collect();
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::credentials::{TELNYX_PUBLIC_KEY, TWILIO_ACCOUNT_SID};

    #[test]
    fn the_constants_match_the_key_material() {
        let keys = keys().expect("the fixed keys parse");
        let public = ring::signature::KeyPair::public_key(&keys.telnyx);
        assert_eq!(base64::engine::general_purpose::STANDARD.encode(public.as_ref()), TELNYX_PUBLIC_KEY);
        assert!(keys.vonage_public.len() > 256);
        let hex = TWILIO_ACCOUNT_SID.strip_prefix("AC").unwrap_or_default();
        assert!(hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()));
    }

    /// The SNS certificate is the signing key's: its subject public key is the key's
    /// `RSAPublicKey`.
    #[test]
    fn the_sns_certificate_holds_the_signing_keys_public_half() {
        let keys = keys().expect("the fixed keys parse");
        let public = ring::signature::KeyPair::public_key(&keys.aws_sns).as_ref().to_vec();
        assert_eq!(keys.aws_sns.public().modulus_len(), 256, "RSA-2048");
        let certificate = pem_to_der(crate::credentials::AWS_SNS_CERTIFICATE).expect("PEM");
        assert!(certificate.windows(public.len()).any(|window| window == public.as_slice()));
    }
}
