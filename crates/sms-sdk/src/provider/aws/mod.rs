//! AWS End User Messaging SMS (`pinpoint-sms-voice-v2`): support level `partial` (no message
//! lookup exists; unknown outcomes settle only from verified delivery events).
//!
//! ```
//! use sms_sdk::provider::aws::{Aws, AwsCredentials};
//!
//! let credentials = AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
//! let aws = Aws::builder("us-east-1", credentials).from("+15005550006").build()?;
//! # let _ = aws;
//! # Ok::<(), sms_sdk::Error>(())
//! ```
//!
//! A message is one `SendTextMessage` call: an AWS JSON 1.0 `POST https://sms-voice.{region}.amazonaws.com/`
//! with `X-Amz-Target: PinpointSMSVoiceV2.SendTextMessage`, signed with Signature Version 4
//! ([`sigv4`], checked against AWS's published test suite) for the service `sms-voice`. The
//! credentials come from a [`CredentialSource`] before each request, so temporary ones can
//! refresh. The correlation reference travels in the request's `Context`, which every delivery
//! event echoes. The service has no idempotency token for this call and no message lookup: a
//! send whose outcome is unknown is settled by a verified delivery event, never by sending again.
//!
//! Delivery events and two-way inbound messages arrive through an SNS HTTP(S) subscription:
//! [`AwsWebhook`] verifies the SNS signature with AWS's certificate (fetched from the URL the
//! message names, which must be AWS's, bounded and cached), pins the topic, and normalizes the
//! message inside.

mod certificate;
mod credentials;
mod request;
mod response;
pub mod sigv4;
mod webhook;

use std::fmt;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use time::OffsetDateTime;

#[cfg(feature = "testing")]
pub(crate) use self::certificate::pem_block;
pub use self::certificate::{
    CertificateSource, FETCH_TIMEOUT, HttpsCertificates, MAX_CERTIFICATE_BYTES, is_certificate_url,
};
pub use self::credentials::{AwsCredentials, CredentialSource};
use self::request::{CONTENT_TYPE, OPTIONS, TARGET, capabilities, request_body};
use self::response::interpret;
#[cfg(feature = "testing")]
pub(crate) use self::webhook::parse_body;
pub use self::webhook::{AwsWebhook, AwsWebhookBuilder, SignedFields, Subscription, string_to_sign, subscription};
use crate::HttpConfig;
use crate::adapter::{Adapter, AdapterInfo, Category, Outcome, SendContext, Support, SupportStatus};
use crate::error::{Error, ProviderError};
use crate::http::{Authorization, Body, Post, Transport};
use crate::message::{OutboundMessage, Sender};
use crate::redact::Secret;

/// The adapter's name.
pub const NAME: &str = "aws";

/// The service name requests to End User Messaging SMS are signed for.
pub const SIGNING_SERVICE: &str = "sms-voice";

/// Wire facts and pure functions the emulator and the test suites share; not part of the stable
/// API, may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use super::request::{
        CONTENT_TYPE, MAX_TIME_TO_LIVE_SECS, MIN_TIME_TO_LIVE_SECS, OPTIONS, TARGET, capabilities, request_body,
    };
    pub use super::response::{error_type, interpret, rejection_category};
}

/// The service's endpoint in `region`: `https://sms-voice.{region}.amazonaws.com` (`.com.cn` in
/// the China regions).
#[must_use]
pub fn endpoint(region: &str) -> String {
    let suffix = if region.starts_with("cn-") { "amazonaws.com.cn" } else { "amazonaws.com" };
    format!("https://sms-voice.{region}.{suffix}")
}

/// Whether `region` looks like an AWS region name (`us-east-1`): 1 to 32 lowercase letters,
/// digits and `-`, starting with a letter (what [`AwsBuilder::build`] accepts).
#[must_use]
pub fn is_region(region: &str) -> bool {
    (1..=32).contains(&region.len())
        && region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && region.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
}

/// The End User Messaging SMS adapter.
#[derive(Clone)]
pub struct Aws {
    info: AdapterInfo,
    transport: Transport,
    region: String,
    source: Arc<dyn CredentialSource>,
}

/// Where a builder's credentials come from.
enum Given {
    /// Fixed credentials, checked when the adapter is built.
    Fixed(AwsCredentials),
    /// A source asked before each request.
    Source(Arc<dyn CredentialSource>),
}

/// Builds an [`Aws`] adapter.
#[must_use]
pub struct AwsBuilder {
    region: String,
    credentials: Given,
    from: Option<Sender>,
    base_url: Option<String>,
    http: HttpConfig,
}

impl Aws {
    /// An adapter for `region` (`us-east-1`) with fixed credentials.
    pub fn builder(region: impl Into<String>, credentials: AwsCredentials) -> AwsBuilder {
        AwsBuilder::new(region.into(), Given::Fixed(credentials))
    }

    /// An adapter for `region` whose credentials come from `source` before each request.
    pub fn with_source(region: impl Into<String>, source: Arc<dyn CredentialSource>) -> AwsBuilder {
        AwsBuilder::new(region.into(), Given::Source(source))
    }
}

impl AwsBuilder {
    fn new(region: String, credentials: Given) -> Self {
        Self { region, credentials, from: None, base_url: None, http: HttpConfig::new() }
    }

    /// The default origination identity: a phone number, a sender ID, or a pool's id or ARN
    /// ([`Sender::messaging_service`]).
    pub fn from(mut self, sender: impl Into<Sender>) -> Self {
        self.from = Some(sender.into());
        self
    }

    /// How the adapter reaches AWS: a client of your own (a proxy, one pool for several
    /// adapters), the connect timeout, the `User-Agent` ([`HttpConfig`]).
    pub fn http(mut self, http: HttpConfig) -> Self {
        self.http = http;
        self
    }

    /// Replaces the region's endpoint (a FIPS endpoint, a VPC endpoint, the emulator, a proxy).
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// Checks the configuration and builds the adapter.
    ///
    /// # Errors
    /// `Configuration` when the region is not a region name, fixed credentials cannot be sent
    /// (an access key id that is not letters and digits, a secret or token that is empty or
    /// holds a character a header cannot carry), or the base URL is not http(s).
    pub fn build(self) -> Result<Aws, Error> {
        if !is_region(&self.region) {
            return Err(Error::configuration(
                "The AWS region must be a region name such as us-east-1 (lowercase letters, digits and '-').",
            ));
        }
        let mut secrets = Vec::new();
        let source: Arc<dyn CredentialSource> = match self.credentials {
            Given::Fixed(fixed) => {
                fixed.check()?;
                secrets.push(fixed.secret().clone());
                secrets.extend(fixed.token().cloned());
                Arc::new(fixed)
            }
            Given::Source(source) => source,
        };
        let mut info = AdapterInfo::new(NAME, capabilities())
            .support(Support {
                status: SupportStatus::Partial,
                notes: vec![
                    "AWS has no message lookup: an unknown outcome settles only from a verified delivery event (SNS) \
                     carrying the reference."
                        .to_owned(),
                ],
            })
            .provider_options(&OPTIONS);
        info.default_from = self.from;
        let base_url = self.base_url.unwrap_or_else(|| endpoint(&self.region));
        let transport = Transport::new(NAME, &base_url, "/", secrets, &self.http)?;
        info.endpoint = Some(transport.origin().to_owned());
        Ok(Aws { info, transport, region: self.region, source })
    }
}

/// `20150830T123600Z`, the `X-Amz-Date` of `at`.
fn amz_date(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

/// A header value the adapter made (never fails for the visible ASCII it makes).
fn value(text: &str, sensitive: bool) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(text).ok()?;
    value.set_sensitive(sensitive);
    Some(value)
}

impl Aws {
    /// The signed `SendTextMessage` request of `body` at `now` with `credentials`: its
    /// `Authorization` and the other headers it signs.
    fn sign(
        &self,
        body: &[u8],
        now: OffsetDateTime,
        credentials: &AwsCredentials,
    ) -> Option<(Authorization, Vec<(HeaderName, HeaderValue)>)> {
        let date_time = amz_date(now);
        let host = self.transport.host_header();
        let token = credentials.token().map(Secret::expose);
        let mut signed: Vec<(&str, &str)> =
            vec![("content-type", CONTENT_TYPE), ("host", &host), ("x-amz-date", &date_time), ("x-amz-target", TARGET)];
        if let Some(token) = token {
            signed.push(("x-amz-security-token", token));
        }
        let request = sigv4::Request { method: "POST", path: "/", query: "", headers: &signed, body };
        let scope = sigv4::Scope { date: date_time.get(..8)?, region: &self.region, service: SIGNING_SERVICE };
        let header = sigv4::authorization(
            &request,
            &date_time,
            credentials.access_key_id(),
            credentials.secret().expose(),
            &scope,
        );
        let mut headers = vec![
            (HeaderName::from_static("x-amz-date"), value(&date_time, false)?),
            (HeaderName::from_static("x-amz-target"), HeaderValue::from_static(TARGET)),
        ];
        if let Some(token) = token {
            headers.push((HeaderName::from_static("x-amz-security-token"), value(token, true)?));
        }
        Some((Authorization::new(Secret::new(header)), headers))
    }
}

impl Adapter for Aws {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let refused = |why: &str| Outcome::rejected(Category::Auth, ProviderError::new(NAME).message(why));
        // The source's time counts against the attempt's timeout; a source that never answers
        // sends nothing.
        let Ok(Ok(credentials)) = tokio::time::timeout(cx.timeout, self.source.credentials()).await else {
            return refused("the credential source failed or did not answer in time; nothing was sent");
        };
        if credentials.check().is_err() {
            return refused("the credential source gave credentials that cannot be sent; nothing was sent");
        }
        let bytes = serde_json::to_vec(&request_body(message)).unwrap_or_default();
        let Some((authorization, headers)) = self.sign(&bytes, OffsetDateTime::now_utc(), &credentials) else {
            return refused("the request could not be signed; nothing was sent");
        };
        let mut post = Post::new(&authorization, Body::Raw { content_type: CONTENT_TYPE, bytes }, cx, message);
        post.headers = headers;
        self.transport.post(post, interpret).await
    }
}

impl fmt::Debug for Aws {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aws")
            .field("endpoint", &self.transport.origin())
            .field("region", &self.region)
            .field("default_from", &self.info.default_from)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for AwsBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsBuilder")
            .field("region", &self.region)
            .field(
                "credentials",
                &match &self.credentials {
                    Given::Fixed(fixed) => Some(fixed),
                    Given::Source(_) => None,
                },
            )
            .field("base_url", &self.base_url.as_deref().map(crate::redact::redact_url))
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials() -> AwsCredentials {
        AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    }

    #[test]
    fn the_builder_checks_the_region_and_the_credentials() {
        let aws = Aws::builder("us-east-1", credentials()).build().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(aws.info().endpoint.as_deref(), Some("https://sms-voice.us-east-1.amazonaws.com"));
        assert_eq!(endpoint("cn-north-1"), "https://sms-voice.cn-north-1.amazonaws.com.cn");
        for region in ["", "US-EAST-1", "us east 1", "1us", "us-east-1.evil.example/x"] {
            assert!(Aws::builder(region, credentials()).build().is_err(), "{region:?}");
        }
        assert!(Aws::builder("us-east-1", AwsCredentials::new("AKID/../", "s")).build().is_err());
        assert!(Aws::builder("us-east-1", AwsCredentials::new("AKID", "")).build().is_err());
        assert!(Aws::builder("us-east-1", credentials().session_token("a\nb")).build().is_err());
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        let builder = Aws::builder("eu-west-1", credentials().session_token("FQoGZXIvYXdzEXAMPLETOKEN"));
        let shown = format!("{builder:?}");
        assert!(!shown.contains("wJalrXUtnFEMI") && !shown.contains("FQoGZXIvYXdz"), "{shown}");
        assert!(shown.contains("AKIDEXAMPLE"), "{shown}");
    }

    #[test]
    fn t278_the_request_is_signed_for_sms_voice_at_its_time() {
        let aws = Aws::builder("us-east-1", credentials()).base_url("http://127.0.0.1:4010").build();
        let aws = aws.unwrap_or_else(|e| panic!("{e}"));
        let at = OffsetDateTime::from_unix_timestamp(1_440_938_160).unwrap_or_else(|_| unreachable!());
        assert_eq!(amz_date(at), "20150830T123600Z");
        let Some((authorization, headers)) = aws.sign(b"{}", at, &credentials().session_token("tok")) else { panic!() };
        let signed = [
            ("content-type", CONTENT_TYPE),
            ("host", "127.0.0.1:4010"),
            ("x-amz-date", "20150830T123600Z"),
            ("x-amz-target", TARGET),
            ("x-amz-security-token", "tok"),
        ];
        let request = sigv4::Request { method: "POST", path: "/", query: "", headers: &signed, body: b"{}" };
        let scope = sigv4::Scope { date: "20150830", region: "us-east-1", service: "sms-voice" };
        let expected = sigv4::authorization(
            &request,
            "20150830T123600Z",
            "AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            &scope,
        );
        assert_eq!(authorization.expose(), expected);
        assert!(expected.contains("/20150830/us-east-1/sms-voice/aws4_request"));
        assert!(expected.contains("SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target"));
        let names: Vec<&str> = headers.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["x-amz-date", "x-amz-target", "x-amz-security-token"]);
        assert!(headers[2].1.is_sensitive());
    }
}
