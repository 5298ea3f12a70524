//! Signed webhook requests, built with the same signing functions the verifiers check, and the
//! one way to parse a webhook without verifying it.
//!
//! ```
//! # #[cfg(feature = "twilio")] {
//! use sms_sdk::provider::twilio::TwilioWebhook;
//! use sms_sdk::testing::webhooks::signed_twilio_request;
//! use sms_sdk::webhook::WebhookVerifier;
//!
//! let signed = signed_twilio_request("token", "https://example.com/status", &[
//!     ("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageStatus", "delivered"),
//! ]);
//! let event = TwilioWebhook::new("token").unwrap().verify(&signed.as_request()).unwrap();
//! assert_eq!(event.type_name(), "message.delivered");
//! # }
//! ```

use http::{HeaderMap, HeaderName, HeaderValue};

use crate::webhook::WebhookRequest;

/// A webhook request, owned: method, URL, headers and body. Its `Debug` shows the method, the
/// URL without its query or user info, the header names and the body's length, never
/// signatures, tokens or the payload.
#[derive(Clone)]
pub struct SignedRequest {
    /// `POST` or `GET`.
    pub method: String,
    /// The URL the request is sent to.
    pub url: String,
    /// The headers, signature included.
    pub headers: HeaderMap,
    /// The raw body.
    pub body: Vec<u8>,
}

impl std::fmt::Debug for SignedRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignedRequest")
            .field("request", &self.as_request())
            .field("headers", &self.headers.keys().map(HeaderName::as_str).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl SignedRequest {
    /// A request with no headers yet.
    #[must_use]
    pub fn new(method: &str, url: &str, body: impl Into<Vec<u8>>) -> Self {
        Self { method: method.into(), url: url.into(), headers: HeaderMap::new(), body: body.into() }
    }

    /// Sets a header (replacing one of the same name).
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            self.headers.insert(name, value);
        }
        self
    }

    /// The same request received at another URL (behind a proxy, say).
    #[must_use]
    pub fn received_at(mut self, url: &str) -> Self {
        self.url = url.into();
        self
    }

    /// The borrowed form the verifiers take.
    #[must_use]
    pub fn as_request(&self) -> WebhookRequest<'_> {
        WebhookRequest { method: &self.method, url: &self.url, headers: &self.headers, body: &self.body }
    }
}

/// Form-encodes `params` in order.
#[must_use]
pub fn form_body<K: AsRef<str>, V: AsRef<str>>(params: &[(K, V)]) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        form.append_pair(k.as_ref(), v.as_ref());
    }
    form.finish()
}

/// A Twilio form POST of `params` to `url`, signed with `auth_token`.
#[cfg(feature = "twilio")]
#[cfg_attr(docsrs, doc(cfg(feature = "twilio")))]
#[must_use]
pub fn signed_twilio_request<K: AsRef<str>, V: AsRef<str>>(
    auth_token: &str,
    url: &str,
    params: &[(K, V)],
) -> SignedRequest {
    let signature = crate::provider::twilio::signature(auth_token, url, params);
    SignedRequest::new("POST", url, form_body(params))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-twilio-signature", &signature)
}

/// An Ed25519 key pair for signing Telnyx webhooks in tests.
#[cfg(feature = "telnyx")]
#[cfg_attr(docsrs, doc(cfg(feature = "telnyx")))]
#[derive(Clone)]
pub struct TelnyxKeyPair {
    seed: [u8; 32],
    /// The public key, base64 of its 32 bytes (what `TelnyxWebhook::new` takes).
    pub public_key: String,
}

#[cfg(feature = "telnyx")]
impl TelnyxKeyPair {
    /// A new random key pair.
    ///
    /// # Panics
    /// When the system random generator fails.
    #[must_use]
    #[allow(clippy::expect_used)] // test keys: no randomness means no test can run
    pub fn generate() -> Self {
        let mut seed = [0u8; 32];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut seed).expect("system randomness");
        Self::from_seed(seed)
    }

    /// The key pair of a fixed 32-byte seed (deterministic tests).
    ///
    /// # Panics
    /// Not in practice: ring accepts any 32 bytes as an Ed25519 seed.
    #[must_use]
    #[allow(clippy::expect_used)] // ring accepts any 32 bytes as an Ed25519 seed
    pub fn from_seed(seed: [u8; 32]) -> Self {
        let pair = ring::signature::Ed25519KeyPair::from_seed_unchecked(&seed).expect("any 32 bytes are a seed");
        let public_key = crate::webhook::verify::encode_base64(ring::signature::KeyPair::public_key(&pair).as_ref());
        Self { seed, public_key }
    }

    /// The seed (the private key).
    #[must_use]
    pub fn seed(&self) -> [u8; 32] {
        self.seed
    }

    /// Base64 of the Ed25519 signature of `message`.
    ///
    /// # Panics
    /// Not in practice: ring accepts any 32 bytes as an Ed25519 seed.
    #[must_use]
    #[allow(clippy::expect_used)] // ring accepts any 32 bytes as an Ed25519 seed
    pub fn sign(&self, message: &[u8]) -> String {
        let pair = ring::signature::Ed25519KeyPair::from_seed_unchecked(&self.seed).expect("any 32 bytes are a seed");
        crate::webhook::verify::encode_base64(pair.sign(message).as_ref())
    }
}

#[cfg(feature = "telnyx")]
impl std::fmt::Debug for TelnyxKeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TelnyxKeyPair").field("public_key", &self.public_key).finish_non_exhaustive()
    }
}

/// A Telnyx JSON POST of `body` to `url`, signed by `key` at `timestamp` (Unix seconds).
#[cfg(feature = "telnyx")]
#[cfg_attr(docsrs, doc(cfg(feature = "telnyx")))]
#[must_use]
pub fn signed_telnyx_request(key: &TelnyxKeyPair, url: &str, body: &str, timestamp: i64) -> SignedRequest {
    let timestamp = timestamp.to_string();
    let signature = key.sign(&crate::provider::telnyx::signed_payload(&timestamp, body.as_bytes()));
    SignedRequest::new("POST", url, body)
        .header("content-type", "application/json")
        .header("telnyx-timestamp", &timestamp)
        .header("telnyx-signature-ed25519", &signature)
}

/// A Plivo form POST of `params` to `url` with a V2 signature for `nonce`.
#[cfg(feature = "plivo")]
#[cfg_attr(docsrs, doc(cfg(feature = "plivo")))]
#[must_use]
pub fn signed_plivo_request<K: AsRef<str>, V: AsRef<str>>(
    auth_token: &str,
    url: &str,
    params: &[(K, V)],
    nonce: &str,
) -> SignedRequest {
    SignedRequest::new("POST", url, form_body(params))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("x-plivo-signature-v2", &crate::provider::plivo::signature_v2(auth_token, url, nonce))
        .header("x-plivo-signature-v2-nonce", nonce)
}

/// A Plivo form POST of `params` to `url` with V3 (and V2) signatures for `nonce`.
#[cfg(feature = "plivo")]
#[cfg_attr(docsrs, doc(cfg(feature = "plivo")))]
#[must_use]
pub fn signed_plivo_v3_request<K: AsRef<str>, V: AsRef<str>>(
    auth_token: &str,
    url: &str,
    params: &[(K, V)],
    nonce: &str,
) -> SignedRequest {
    signed_plivo_request(auth_token, url, params, nonce)
        .header("x-plivo-signature-v3", &crate::provider::plivo::signature_v3(auth_token, "POST", url, params, nonce))
        .header("x-plivo-signature-v3-nonce", nonce)
}

/// A Vonage JSON POST of `body` to `url` with an HS256 bearer JWT: claims `iat`, `jti`,
/// `iss: "Vonage"`, `payload_hash` (SHA-256 of the body) and `api_key`, in that order.
#[cfg(feature = "vonage")]
#[cfg_attr(docsrs, doc(cfg(feature = "vonage")))]
#[must_use]
pub fn signed_vonage_request(signature_secret: &str, url: &str, body: &str, iat: i64, jti: &str) -> SignedRequest {
    let claims = serde_json::json!({
        "iat": iat, "jti": jti, "iss": "Vonage",
        "payload_hash": crate::digest::sha256_hex(body.as_bytes()), "api_key": "test-key"
    });
    let token = crate::provider::vonage::sign_jwt(signature_secret, &claims);
    SignedRequest::new("POST", url, body)
        .header("content-type", "application/json")
        .header("authorization", &format!("Bearer {token}"))
}

/// A Sinch JSON POST of `body` to `url`, HMAC-SHA256-signed with the webhook `secret` at
/// `timestamp` (Unix seconds) with `nonce`.
#[cfg(feature = "sinch")]
#[cfg_attr(docsrs, doc(cfg(feature = "sinch")))]
#[must_use]
pub fn signed_sinch_request(secret: &str, url: &str, body: &str, timestamp: i64, nonce: &str) -> SignedRequest {
    let timestamp = timestamp.to_string();
    let signature = crate::provider::sinch::__private::sign(secret, body.as_bytes(), nonce, &timestamp);
    SignedRequest::new("POST", url, body)
        .header("content-type", "application/json")
        .header("x-sinch-webhook-signature", &signature)
        .header("x-sinch-webhook-signature-timestamp", &timestamp)
        .header("x-sinch-webhook-signature-nonce", nonce)
        .header("x-sinch-webhook-signature-algorithm", "HmacSHA256")
}

/// An Infobip callback: a JSON POST of `body` (`{"results":[…]}`) to `url`. With `basic` =
/// `Some((user, password))` it carries those credentials as HTTP Basic; with `token` =
/// `Some(token)` the URL carries it in the query parameter
/// [`TOKEN_PARAM`](crate::provider::infobip::TOKEN_PARAM). Infobip signs nothing, so this is all
/// a verifier can check.
#[cfg(feature = "infobip")]
#[cfg_attr(docsrs, doc(cfg(feature = "infobip")))]
#[must_use]
pub fn signed_infobip_request(
    url: &str,
    body: &str,
    basic: Option<(&str, &str)>,
    token: Option<&str>,
) -> SignedRequest {
    use base64::Engine as _;
    let url = match token {
        Some(token) => crate::provider::infobip::callback_url_with_token(url, token),
        None => url.to_owned(),
    };
    let request = SignedRequest::new("POST", &url, body).header("content-type", "application/json");
    match basic {
        Some((user, password)) => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            request.header("authorization", &format!("Basic {encoded}"))
        }
        None => request,
    }
}

/// A Bandwidth callback: a JSON POST of `body` (an array of events) to `url`, carrying the
/// application's callback credentials `user` and `password` as HTTP Basic.
#[cfg(feature = "bandwidth")]
#[cfg_attr(docsrs, doc(cfg(feature = "bandwidth")))]
#[must_use]
pub fn signed_bandwidth_request(user: &str, password: &str, url: &str, body: &str) -> SignedRequest {
    let authorization = crate::provider::bandwidth::__private::basic_header(user, password);
    SignedRequest::new("POST", url, body)
        .header("content-type", "application/json")
        .header("authorization", &authorization)
}

/// The private key (PKCS#8 PEM) of a published RSA-2048 test pair for AWS SNS messages. It is
/// not a secret: never trust its certificate outside tests.
#[cfg(feature = "aws")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws")))]
pub const AWS_SNS_TEST_KEY: &str = include_str!("../../assets/aws-sns-test-key.pem");

/// The self-signed certificate (PEM) of [`AWS_SNS_TEST_KEY`]: what a verifier under test takes
/// ([`AwsWebhookBuilder::certificate_pem`](crate::provider::aws::AwsWebhookBuilder::certificate_pem)).
#[cfg(feature = "aws")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws")))]
pub const AWS_SNS_TEST_CERTIFICATE: &str = include_str!("../../assets/aws-sns-test-certificate.pem");

/// The `SigningCertURL` of a test message from a `us-east-1` topic: a well-formed AWS certificate
/// URL (a verifier with an injected certificate still checks the URL's shape, and that its region
/// is the topic's; [`signed_aws_request`] names the topic's own region's).
#[cfg(feature = "aws")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws")))]
pub const AWS_SNS_TEST_CERTIFICATE_URL: &str =
    "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-sms-sdk-test.pem";

/// Signs SNS messages as AWS does for `SignatureVersion` 2 (RSA PKCS#1 v1.5 over SHA-256), with
/// a key of your own or the published test key. (Version 1, SHA-1, is verified but not made
/// here: `ring` signs with no SHA-1 padding. The suite's version 1 vectors were signed once
/// with `openssl dgst -sha1`.)
#[cfg(feature = "aws")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws")))]
pub struct SnsSigner {
    key: ring::signature::RsaKeyPair,
}

#[cfg(feature = "aws")]
impl SnsSigner {
    /// A signer with an RSA private key in PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`); `None`
    /// when it is not one.
    #[must_use]
    pub fn from_pem(pem: &str) -> Option<Self> {
        let der = crate::provider::aws::pem_block(pem, "PRIVATE KEY")?;
        ring::signature::RsaKeyPair::from_pkcs8(&der).ok().map(|key| Self { key })
    }

    /// A signer with [`AWS_SNS_TEST_KEY`].
    #[must_use]
    pub fn test() -> Self {
        match Self::from_pem(AWS_SNS_TEST_KEY) {
            Some(signer) => signer,
            None => unreachable!("the published test key is an RSA PKCS#8 key"),
        }
    }

    /// The base64 `Signature` of `fields` for `SignatureVersion` 2.
    #[must_use]
    pub fn sign(&self, fields: &crate::provider::aws::SignedFields<'_>) -> String {
        let mut signature = vec![0; self.key.public().modulus_len()];
        let text = crate::provider::aws::string_to_sign(fields);
        let random = ring::rand::SystemRandom::new();
        let padding = &ring::signature::RSA_PKCS1_SHA256;
        if self.key.sign(padding, &random, text.as_bytes(), &mut signature).is_err() {
            return String::new();
        }
        crate::webhook::verify::encode_base64(&signature)
    }

    /// The JSON body SNS posts for `fields`, signed (`SignatureVersion` 2), naming
    /// `certificate_url`.
    #[must_use]
    pub fn envelope(&self, fields: &crate::provider::aws::SignedFields<'_>, certificate_url: &str) -> String {
        let mut body = serde_json::json!({
            "Type": fields.kind,
            "MessageId": fields.message_id,
            "TopicArn": fields.topic_arn,
            "Message": fields.message,
            "Timestamp": fields.timestamp,
            "SignatureVersion": "2",
            "Signature": self.sign(fields),
            "SigningCertURL": certificate_url,
        });
        let extra = [("Subject", fields.subject), ("Token", fields.token), ("SubscribeURL", fields.subscribe_url)];
        for (name, value) in extra {
            if let (Some(value), Some(object)) = (value, body.as_object_mut()) {
                object.insert(name.to_owned(), value.into());
            }
        }
        body.to_string()
    }
}

#[cfg(feature = "aws")]
impl std::fmt::Debug for SnsSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnsSigner").finish_non_exhaustive()
    }
}

/// An SNS HTTP notification of `message` (a delivery event's or an inbound message's JSON) from
/// `topic_arn`, `POST`ed to `url`, signed by `signer` (`SignatureVersion` 2) and naming the test
/// certificate's URL at SNS in the topic's region ([`AWS_SNS_TEST_CERTIFICATE_URL`] for
/// `us-east-1`), with the headers SNS sends.
#[cfg(feature = "aws")]
#[cfg_attr(docsrs, doc(cfg(feature = "aws")))]
#[must_use]
pub fn signed_aws_request(
    signer: &SnsSigner,
    url: &str,
    topic_arn: &str,
    message: &str,
    message_id: &str,
    timestamp: &str,
) -> SignedRequest {
    let fields = crate::provider::aws::SignedFields {
        kind: "Notification",
        message,
        message_id,
        subject: None,
        timestamp,
        topic_arn,
        token: None,
        subscribe_url: None,
    };
    let region = topic_arn.split(':').nth(3).unwrap_or("us-east-1");
    let certificate_url = AWS_SNS_TEST_CERTIFICATE_URL.replace("us-east-1", region);
    SignedRequest::new("POST", url, signer.envelope(&fields, &certificate_url))
        .header("content-type", "text/plain; charset=UTF-8")
        .header("x-amz-sns-message-type", "Notification")
        .header("x-amz-sns-message-id", message_id)
        .header("x-amz-sns-topic-arn", topic_arn)
}

/// Parses a webhook WITHOUT verifying it. Only for tests and fixtures: never in a server.
///
/// # Errors
/// A payload error when the request is malformed (or names an unknown provider).
pub fn parse_unverified(
    provider: &str,
    request: &WebhookRequest<'_>,
) -> Result<crate::webhook::SmsEvent, crate::webhook::WebhookError> {
    #[cfg(any(feature = "twilio", feature = "plivo"))]
    let encoded = crate::webhook::verify::Settings::encoded_params(request);
    #[cfg(any(feature = "twilio", feature = "plivo"))]
    let form = |provider| crate::webhook::verify::Settings::default().form_params(provider, encoded);
    match provider {
        #[cfg(feature = "twilio")]
        "twilio" => crate::provider::twilio::parse_fields(encoded, &form("twilio")?, true),
        #[cfg(feature = "telnyx")]
        "telnyx" => crate::provider::telnyx::parse_body(request.body, true),
        #[cfg(feature = "plivo")]
        "plivo" => crate::provider::plivo::parse_fields(encoded, &form("plivo")?, true),
        #[cfg(feature = "vonage")]
        "vonage" => crate::provider::vonage::parse_body(request.body, true),
        #[cfg(feature = "sinch")]
        "sinch" => crate::provider::sinch::parse_body(request.body, true),
        // An Infobip callback is a batch of results: its first.
        #[cfg(feature = "infobip")]
        "infobip" => crate::provider::infobip::parse_body(request.body, true),
        // A Bandwidth callback is an array of events: its first.
        #[cfg(feature = "bandwidth")]
        "bandwidth" => crate::provider::bandwidth::parse_body(request.body, true),
        #[cfg(feature = "aws")]
        "aws" => crate::provider::aws::parse_body(request.body, true),
        _ => {
            let _ = request;
            Err(crate::webhook::WebhookError::Payload { provider: "unknown", message: "no such provider".into() })
        }
    }
}
