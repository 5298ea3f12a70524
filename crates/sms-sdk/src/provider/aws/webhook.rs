//! AWS delivery events and inbound messages, as an SNS HTTP(S) subscription posts them: the SNS
//! envelope is verified (RSA over SHA-1 for `SignatureVersion` 1, SHA-256 for 2, with the
//! certificate its `SigningCertURL` names, which must be AWS's), its topic must be one the
//! verifier was built for, and only then is the message inside read: a delivery event of a
//! configuration set, or a two-way inbound message.
//!
//! Raw message delivery is refused: with it on, SNS posts the bare message, with no envelope and
//! no signature, and nothing proves it came from AWS.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use ring::signature::{RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
use serde::Deserialize;

use super::NAME;
use super::certificate::{CertificateSource, HttpsCertificates, KeyError, Keys, PublicKey, is_sns_url, public_key_of};
use crate::error::Error;
use crate::json::{self, Flag, Object, Text};
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, Keyword, KeywordKind, StatusUpdate};
use crate::webhook::verify::{Settings, decode_base64, header, parse_time};
use crate::webhook::{Raw, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};
use crate::{BoxFuture, HttpConfig};

/// The header SNS names a message's type in (`Notification`, `SubscriptionConfirmation`,
/// `UnsubscribeConfirmation`): how an [`AnyWebhook`](crate::webhook::AnyWebhook) recognizes SNS.
const MESSAGE_TYPE_HEADER: http::HeaderName = http::HeaderName::from_static("x-amz-sns-message-type");
/// Set to `true` when the subscription has raw message delivery on.
const RAW_DELIVERY_HEADER: http::HeaderName = http::HeaderName::from_static("x-amz-sns-rawdelivery");
/// The most topics one verifier accepts.
const MAX_TOPICS: usize = 16;
/// The longest SNS signature read, decoded (RSA-8192).
const MAX_SIGNATURE: usize = 1024;

/// The members of an SNS message that its signature covers, as
/// [`string_to_sign`] orders them. A notification has a `subject` when it was published with
/// one; confirmations have a `token` and a `subscribe_url`.
#[derive(Debug, Clone, Copy)]
pub struct SignedFields<'a> {
    /// `Type`: `Notification`, `SubscriptionConfirmation` or `UnsubscribeConfirmation`.
    pub kind: &'a str,
    /// `Message`.
    pub message: &'a str,
    /// `MessageId`.
    pub message_id: &'a str,
    /// `Subject`, signed only when present (notifications).
    pub subject: Option<&'a str>,
    /// `Timestamp`.
    pub timestamp: &'a str,
    /// `TopicArn`.
    pub topic_arn: &'a str,
    /// `Token` (confirmations).
    pub token: Option<&'a str>,
    /// `SubscribeURL` (confirmations).
    pub subscribe_url: Option<&'a str>,
}

/// What SNS signs: for each member below that the message has, in this order, its name, a
/// newline, its value and a newline. A notification signs `Message`, `MessageId`, `Subject`,
/// `Timestamp`, `TopicArn`, `Type`; a confirmation signs `Message`, `MessageId`, `SubscribeURL`,
/// `Timestamp`, `Token`, `TopicArn`, `Type`.
#[must_use]
pub fn string_to_sign(fields: &SignedFields<'_>) -> String {
    let notification = fields.kind == "Notification";
    let members: [(&str, Option<&str>); 8] = [
        ("Message", Some(fields.message)),
        ("MessageId", Some(fields.message_id)),
        ("Subject", fields.subject.filter(|_| notification)),
        ("SubscribeURL", fields.subscribe_url.filter(|_| !notification)),
        ("Timestamp", Some(fields.timestamp)),
        ("Token", fields.token.filter(|_| !notification)),
        ("TopicArn", Some(fields.topic_arn)),
        ("Type", Some(fields.kind)),
    ];
    let total = members.iter().filter_map(|(name, value)| value.map(|v| name.len() + v.len() + 2)).sum();
    let mut text = String::with_capacity(total);
    for (name, value) in members {
        if let Some(value) = value {
            for part in [name, "\n", value, "\n"] {
                text.push_str(part);
            }
        }
    }
    text
}

/// Verifies and parses what an SNS subscription posts for End User Messaging SMS. Its `Debug`
/// shows the topics and where certificates come from.
#[derive(Clone, Debug)]
pub struct AwsWebhook {
    topics: Arc<[String]>,
    keys: Keys,
    max_age: Option<Duration>,
    settings: Settings,
}

/// Builds an [`AwsWebhook`].
pub struct AwsWebhookBuilder {
    topics: Vec<String>,
    source: Option<Arc<dyn CertificateSource>>,
    certificate: Option<Vec<u8>>,
    http: Option<HttpConfig>,
    max_age: Option<Duration>,
    settings: Settings,
}

impl std::fmt::Debug for AwsWebhookBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsWebhookBuilder")
            .field("topics", &self.topics)
            .field("certificate", &self.certificate.as_ref().map(|_| "fixed"))
            .field("max_age", &self.max_age)
            .finish_non_exhaustive()
    }
}

impl AwsWebhook {
    /// A verifier of messages from the SNS topic `topic_arn` (the configuration set's event
    /// destination, or the phone number's two-way topic; add more with
    /// [`AwsWebhookBuilder::topic`]). Messages from any other topic are refused.
    #[must_use]
    pub fn builder(topic_arn: impl Into<String>) -> AwsWebhookBuilder {
        AwsWebhookBuilder {
            topics: vec![topic_arn.into()],
            source: None,
            certificate: None,
            http: None,
            max_age: None,
            settings: Settings::default(),
        }
    }
}

impl AwsWebhookBuilder {
    /// Also accepts messages from `topic_arn` (at most 16 topics).
    #[must_use]
    pub fn topic(mut self, topic_arn: impl Into<String>) -> Self {
        self.topics.push(topic_arn.into());
        self
    }

    /// Verifies with this certificate (PEM) whatever well-formed AWS certificate URL a message
    /// names, instead of fetching it: for tests and the emulator, or a host that may not reach
    /// AWS and pins the certificate it downloaded.
    #[must_use]
    pub fn certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.certificate = Some(pem.into());
        self
    }

    /// Gets certificates from `source` instead of fetching them from AWS over HTTPS.
    #[must_use]
    pub fn certificate_source(mut self, source: Arc<dyn CertificateSource>) -> Self {
        self.source = Some(source);
        self
    }

    /// The HTTP client certificates are fetched with (a proxy, a user agent).
    #[must_use]
    pub fn http(mut self, http: HttpConfig) -> Self {
        self.http = Some(http);
        self
    }

    /// Refuses messages whose `Timestamp` is older than `age` (or more than `age` ahead). AWS
    /// sets no limit (by default SNS retries an HTTP delivery 3 times, 20 s apart; a delivery
    /// policy may stretch that to an hour); none by default here, since the SNS `MessageId`
    /// dedupes a replay.
    #[must_use]
    pub fn max_age(mut self, age: Duration) -> Self {
        self.max_age = Some(age);
        self
    }

    crate::webhook::verify::verifier_options!(common);

    /// Checks the configuration and builds the verifier.
    ///
    /// # Errors
    /// `Configuration` when a topic is not an SNS topic ARN (`arn:aws:sns:{region}:{account}:{name}`),
    /// there are more than 16, the certificate is not an RSA certificate in PEM, or the HTTP
    /// client cannot be built.
    pub fn build(self) -> Result<AwsWebhook, Error> {
        if self.topics.len() > MAX_TOPICS {
            return Err(Error::configuration("An AWS webhook verifier accepts at most 16 SNS topics."));
        }
        if let Some(bad) = self.topics.iter().find(|topic| !is_topic_arn(topic)) {
            let shown: String = bad.chars().take(80).collect();
            return Err(Error::configuration(format!(
                "The SNS topic {shown:?} is not a topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME)."
            )));
        }
        let keys = match (self.certificate, self.source) {
            (Some(pem), _) => Keys::Fixed(public_key_of(&pem).ok_or_else(|| {
                Error::configuration("The SNS certificate must be an X.509 certificate with an RSA key, in PEM.")
            })?),
            (None, Some(source)) => Keys::fetched(source),
            (None, None) => {
                let http = self.http.unwrap_or_default();
                Keys::fetched(Arc::new(HttpsCertificates::with_http(&http)?))
            }
        };
        Ok(AwsWebhook { topics: self.topics.into(), keys, max_age: self.max_age, settings: self.settings })
    }
}

/// `arn:{partition}:sns:{region}:{account}:{name}`, each part non-empty and without spaces.
fn is_topic_arn(arn: &str) -> bool {
    let parts: Vec<&str> = arn.split(':').collect();
    matches!(parts.as_slice(), ["arn", partition, "sns", region, account, name]
        if partition.starts_with("aws")
            && [*region, *account, *name].iter().all(|part| !part.is_empty())
            && arn.len() <= 256
            && arn.bytes().all(|b| b.is_ascii_graphic()))
}

/// The members of an SNS message the verifier reads (each refused when the message repeats it).
#[derive(Default, Deserialize)]
#[serde(default)]
struct Envelope<'a> {
    #[serde(borrow, rename = "Type")]
    kind: Text<'a>,
    #[serde(borrow, rename = "MessageId")]
    message_id: Text<'a>,
    #[serde(borrow, rename = "TopicArn")]
    topic_arn: Text<'a>,
    #[serde(borrow, rename = "Subject")]
    subject: Text<'a>,
    #[serde(borrow, rename = "Message")]
    message: Text<'a>,
    #[serde(borrow, rename = "Timestamp")]
    timestamp: Text<'a>,
    #[serde(borrow, rename = "SignatureVersion")]
    signature_version: Text<'a>,
    #[serde(borrow, rename = "Signature")]
    signature: Text<'a>,
    #[serde(borrow, rename = "SigningCertURL")]
    signing_cert_url: Text<'a>,
    #[serde(borrow, rename = "Token")]
    token: Text<'a>,
    #[serde(borrow, rename = "SubscribeURL")]
    subscribe_url: Text<'a>,
}

/// An envelope with what its signature needs, each present.
struct Signed<'a> {
    fields: SignedFields<'a>,
    version: &'a str,
    signature: &'a str,
    certificate_url: &'a str,
}

impl<'a> Envelope<'a> {
    /// The signed members, when the message has each its type needs.
    fn signed(&'a self) -> Option<Signed<'a>> {
        let kind = self.kind.non_empty()?;
        let confirmation = match kind {
            "Notification" => false,
            "SubscriptionConfirmation" | "UnsubscribeConfirmation" => true,
            _ => return None,
        };
        let (token, subscribe_url) = (self.token.non_empty(), self.subscribe_url.non_empty());
        if confirmation && (token.is_none() || subscribe_url.is_none()) {
            return None;
        }
        Some(Signed {
            fields: SignedFields {
                kind,
                message: self.message.0.as_deref()?,
                message_id: self.message_id.non_empty()?,
                subject: self.subject.0.as_deref(),
                timestamp: self.timestamp.non_empty()?,
                topic_arn: self.topic_arn.non_empty()?,
                token,
                subscribe_url,
            },
            version: self.signature_version.non_empty()?,
            signature: self.signature.non_empty()?,
            certificate_url: self.signing_cert_url.non_empty()?,
        })
    }
}

impl Signed<'_> {
    /// Whether the members a signature covers can be read back one way only: SNS joins them
    /// with newlines, so a newline in any member but `Message` (which comes first) would let the
    /// same signature cover other members (a `MessageId` that swallows the `Subject`, a second
    /// dedupe key for one event). SNS's own values have none: its ids are UUIDs, its timestamps
    /// ISO 8601, its subjects one line.
    fn is_unambiguous(&self) -> bool {
        let fields = &self.fields;
        let one_line =
            [Some(fields.message_id), fields.subject, Some(fields.timestamp), fields.token, fields.subscribe_url];
        let id_ok =
            fields.message_id.len() <= 128 && fields.message_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        // SNS writes `2012-04-25T21:49:25.719Z`: short, printable, a `T` between date and time.
        let time_ok = fields.timestamp.len() <= 40
            && fields.timestamp.bytes().all(|b| b.is_ascii_graphic())
            && fields.timestamp.get(10..11) == Some("T")
            && parse_time(fields.timestamp).is_some();
        id_ok && time_ok && one_line.into_iter().flatten().all(|v| !v.contains('\n'))
    }
}

/// The region of an SNS topic ARN (`arn:aws:sns:{region}:…`).
fn topic_region(topic_arn: &str) -> Option<&str> {
    topic_arn.split(':').nth(3)
}

/// Whether `url` is an SNS URL of the topic's own region (`https://sns.{region}.amazonaws.com`,
/// or `.com.cn`), as SNS names its certificate and confirmation URLs. Narrower than the shape
/// AWS's validators check: no other region's host, and none that merely looks like one.
fn is_url_of_topic(url: &str, topic_arn: &str, suffix: Option<&str>) -> bool {
    let Some(region) = topic_region(topic_arn) else { return false };
    // The host is what follows `https://` up to the path, once `is_sns_url` (which bounds the
    // length and parses) has found the URL canonical.
    let host = url.strip_prefix("https://").and_then(|rest| rest.split('/').next()).unwrap_or_default();
    let own = [format!("sns.{region}.amazonaws.com"), format!("sns.{region}.amazonaws.com.cn")];
    is_sns_url(url, suffix) && own.iter().any(|own| own == host)
}

impl AwsWebhook {
    /// The verification [`WebhookVerifier::verify_at`] counts.
    fn check(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        if header(request.headers, &RAW_DELIVERY_HEADER).is_some_and(|raw| raw.eq_ignore_ascii_case("true")) {
            tracing::warn!(provider = NAME, "refused an SNS message sent with raw message delivery: turn it off");
            return Err(WebhookError::MissingSignature { provider: NAME });
        }
        let envelope = read_envelope(request.body)?;
        let signed = envelope.signed().ok_or(WebhookError::MissingSignature { provider: NAME })?;
        if !self.topics.iter().any(|topic| topic == signed.fields.topic_arn) {
            tracing::warn!(provider = NAME, "refused an SNS message from a topic this verifier was not built for");
            return Err(WebhookError::InvalidSignature { provider: NAME });
        }
        if !signed.is_unambiguous() {
            return Err(WebhookError::MalformedSignature { provider: NAME });
        }
        if !is_url_of_topic(signed.certificate_url, signed.fields.topic_arn, Some(".pem")) {
            tracing::warn!(provider = NAME, "refused an SNS message whose certificate URL is not its region's SNS");
            return Err(WebhookError::InvalidSignature { provider: NAME });
        }
        let key = match self.keys.cached(signed.certificate_url) {
            Ok(Some(key)) => key,
            Ok(None) => return Err(WebhookError::KeyUnavailable { provider: NAME }),
            Err(_) => return Err(WebhookError::InvalidSignature { provider: NAME }),
        };
        verify_signature(&key, &signed)?;
        if let Some(max_age) = self.max_age {
            check_age(signed.fields.timestamp, now, max_age)?;
        }
        normalize(&signed.fields, self.settings.detect_keywords)
    }
}

/// The SNS envelope of `body` (an object that repeats a member read is refused).
///
/// Nothing is known to be AWS's before the signature is checked, so a body that is no envelope
/// is not authentic (`missing_signature`), and one that repeats a member cannot be read one way
/// (`malformed_signature`): never a payload error, which says the request was authentic.
fn read_envelope(body: &[u8]) -> Result<Envelope<'_>, WebhookError> {
    match json::read::<Envelope<'_>>(body) {
        Ok(Some(envelope)) => Ok(envelope),
        Err(error) if error.to_string().contains("duplicate field") => {
            Err(WebhookError::MalformedSignature { provider: NAME })
        }
        Ok(None) | Err(_) => Err(WebhookError::MissingSignature { provider: NAME }),
    }
}

/// RSA PKCS#1 v1.5 of `signed`'s string to sign, SHA-1 for version 1 and SHA-256 for 2.
fn verify_signature(key: &PublicKey, signed: &Signed<'_>) -> Result<(), WebhookError> {
    let malformed = WebhookError::MalformedSignature { provider: NAME };
    let algorithm: &'static ring::signature::RsaParameters = match signed.version {
        "1" => &RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY,
        "2" => &RSA_PKCS1_2048_8192_SHA256,
        _ => return Err(malformed),
    };
    if signed.signature.len() > MAX_SIGNATURE * 2 {
        return Err(malformed);
    }
    let signature = decode_base64(signed.signature).ok_or(malformed)?;
    let text = string_to_sign(&signed.fields);
    UnparsedPublicKey::new(algorithm, key.der())
        .verify(text.as_bytes(), &signature)
        .map_err(|_| WebhookError::InvalidSignature { provider: NAME })
}

/// Refuses a `Timestamp` more than `max_age` from `now` either way.
fn check_age(timestamp: &str, now: SystemTime, max_age: Duration) -> Result<(), WebhookError> {
    let stale = WebhookError::StaleTimestamp { provider: NAME };
    let at = parse_time(timestamp).ok_or(stale.clone())?;
    let now = time::OffsetDateTime::from(now);
    let age = (now - at).unsigned_abs();
    if age > max_age { Err(stale) } else { Ok(()) }
}

impl WebhookVerifier for AwsWebhook {
    fn provider(&self) -> &'static str {
        NAME
    }

    fn body_limit(&self) -> usize {
        self.settings.max_body
    }

    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        crate::metrics::webhook_verified(NAME, self.check(request, now))
    }

    /// An `x-amz-sns-message-type` header.
    fn recognizes(&self, headers: &http::HeaderMap) -> bool {
        headers.contains_key(&MESSAGE_TYPE_HEADER)
    }

    /// Fetches the certificate the message names when it is not cached yet. Only a body within
    /// the size limit whose envelope names a certificate URL of AWS's is fetched for; anything
    /// else is left for `verify` to refuse.
    fn prepare<'a>(&'a self, request: &'a WebhookRequest<'a>) -> BoxFuture<'a, Result<(), WebhookError>> {
        Box::pin(async move {
            if request.body.len() > self.settings.max_body {
                return Ok(());
            }
            let Ok(envelope) = read_envelope(request.body) else { return Ok(()) };
            let Some(signed) = envelope.signed() else { return Ok(()) };
            let pinned = self.topics.iter().any(|topic| topic == signed.fields.topic_arn);
            if !pinned
                || !signed.is_unambiguous()
                || !is_url_of_topic(signed.certificate_url, signed.fields.topic_arn, Some(".pem"))
            {
                return Ok(());
            }
            match self.keys.load(signed.certificate_url).await {
                Ok(_) | Err(KeyError::BadUrl) => Ok(()),
                Err(KeyError::Unavailable) => Err(WebhookError::KeyUnavailable { provider: NAME }),
            }
        })
    }
}

/// Normalizes an SNS message WITHOUT verifying it (`testing::webhooks::parse_unverified`).
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub(crate) fn parse_body(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let envelope = read_envelope(body).map_err(|_| WebhookError::payload(NAME, "not an SNS message"))?;
    let signed = envelope.signed().ok_or_else(|| WebhookError::payload(NAME, "not an SNS message"))?;
    normalize(&signed.fields, detect_keywords)
}

/// The members of a delivery event or an inbound message the normalizer reads.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Payload<'a> {
    #[serde(borrow, rename = "eventType")]
    event_type: Text<'a>,
    #[serde(rename = "isFinal")]
    is_final: Flag,
    #[serde(borrow, rename = "messageId")]
    message_id: Text<'a>,
    #[serde(borrow, rename = "messageStatus")]
    message_status: Text<'a>,
    #[serde(borrow, rename = "originationPhoneNumber")]
    origination_phone_number: Text<'a>,
    #[serde(borrow, rename = "destinationPhoneNumber")]
    destination_phone_number: Text<'a>,
    #[serde(borrow)]
    context: Object<Context<'a>>,
    #[serde(borrow, rename = "inboundMessageId")]
    inbound_message_id: Text<'a>,
    #[serde(borrow, rename = "originationNumber")]
    origination_number: Text<'a>,
    #[serde(borrow, rename = "destinationNumber")]
    destination_number: Text<'a>,
    #[serde(borrow, rename = "messageBody")]
    message_body: Text<'a>,
    #[serde(borrow, rename = "messageKeyword")]
    message_keyword: Text<'a>,
}

/// AWS's own reading of an inbound message, from its `messageKeyword`: the opt-out keywords AWS
/// answers on every number (it adds the sender to the opt-out list) and HELP. Other keywords
/// (registered ones, such as JOIN) are the account's, not an opt-out or help signal.
fn keyword_signal(keyword: Option<&str>) -> Option<Keyword> {
    const OPT_OUT: [&str; 11] =
        ["STOP", "ARRET", "CANCEL", "END", "OPT-OUT", "OPTOUT", "QUIT", "REMOVE", "STOPALL", "TD", "UNSUBSCRIBE"];
    let keyword = keyword?.trim().to_uppercase();
    let kind = if OPT_OUT.contains(&keyword.as_str()) {
        KeywordKind::OptedOut
    } else if keyword == "HELP" {
        KeywordKind::Help
    } else {
        return None;
    };
    Some(Keyword { kind, keyword })
}

/// The event's `context`: the request's `Context`, echoed.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Context<'a> {
    #[serde(borrow)]
    sms_sdk_ref: Text<'a>,
}

/// The delivery state of an `eventType`, with whether it is a failure; `TEXT_UNKNOWN` (AWS's
/// word after 72 hours without news) and anything else are none.
fn delivery_status(event_type: &str) -> Option<DeliveryStatus> {
    match event_type {
        "TEXT_QUEUED" | "TEXT_PENDING" => Some(DeliveryStatus::Queued),
        // Accepted by the carrier: in some countries the last word there is.
        "TEXT_SUCCESSFUL" => Some(DeliveryStatus::Sent),
        "TEXT_DELIVERED" => Some(DeliveryStatus::Delivered),
        "TEXT_BLOCKED" | "TEXT_CARRIER_BLOCKED" | "TEXT_SPAM" | "TEXT_PROTECT_BLOCKED" => {
            Some(DeliveryStatus::Filtered)
        }
        "TEXT_TTL_EXPIRED"
        | "TEXT_CARRIER_UNREACHABLE"
        | "TEXT_UNREACHABLE"
        | "TEXT_INVALID"
        | "TEXT_INVALID_MESSAGE" => Some(DeliveryStatus::Undelivered),
        _ => None,
    }
}

/// Normalizes a verified SNS message: a delivery event (`eventType`), a two-way inbound message
/// (`inboundMessageId`), a confirmation, or anything else as unrecognized. The SNS `MessageId`
/// is the dedupe key: SNS keeps it across its retries.
fn normalize(fields: &SignedFields<'_>, detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let key = format!("aws:sns:{}", fields.message_id);
    let at = parse_time(fields.timestamp);
    if fields.kind != "Notification" {
        // The envelope is the record: its SubscribeURL is what `subscription` reads.
        let raw = serde_json::json!({
            "Type": fields.kind,
            "TopicArn": fields.topic_arn,
            "SubscribeURL": fields.subscribe_url,
        });
        let raw = serde_json::to_vec(&raw).unwrap_or_default();
        let kind = EventKind::Unrecognized { provider_event_type: fields.kind.to_owned() };
        return Ok(SmsEvent::new(NAME, key, at, Raw::json(&raw), kind));
    }
    let body = fields.message.as_bytes();
    let unrecognized = |what: &str| EventKind::Unrecognized { provider_event_type: what.to_owned() };
    // A message that is not a JSON object is another publisher's, not End User Messaging's:
    // recognized, not normalized. One that repeats a member read is refused.
    let message = match json::read::<Payload<'_>>(body) {
        Ok(Some(message)) => message,
        Err(error) if error.to_string().contains("duplicate field") => {
            return Err(WebhookError::payload(NAME, json::refusal(&error)));
        }
        Ok(None) | Err(_) => {
            return Ok(SmsEvent::new(NAME, key, at, Raw::json(body), unrecognized("sns:Notification")));
        }
    };
    let kind = if let Some(event_type) = message.event_type.non_empty() {
        let id = message.message_id.non_empty().ok_or_else(|| WebhookError::payload(NAME, "missing messageId"))?;
        match delivery_status(event_type) {
            Some(status) => {
                let failed = matches!(status, DeliveryStatus::Undelivered | DeliveryStatus::Filtered);
                let update = StatusUpdate {
                    provider_id: id.to_owned(),
                    provider_status: event_type.to_owned(),
                    error_code: message.message_status.non_empty().filter(|_| failed).map(str::to_owned),
                    from: message.origination_phone_number.non_empty().map(str::to_owned),
                    to: message.destination_phone_number.non_empty().map(str::to_owned),
                };
                EventKind::status(status, update)
            }
            None => unrecognized(event_type),
        }
    } else if let Some(id) = message.inbound_message_id.non_empty() {
        let (Some(from), Some(to)) = (message.origination_number.non_empty(), message.destination_number.non_empty())
        else {
            return Err(WebhookError::payload(NAME, "missing originationNumber or destinationNumber"));
        };
        let inbound = Inbound {
            provider_id: id.to_owned(),
            from: from.to_owned(),
            to: to.to_owned(),
            body: message.message_body.0.as_deref().unwrap_or_default().to_owned(),
            media_urls: Vec::new(),
        };
        EventKind::inbound(inbound, keyword_signal(message.message_keyword.non_empty()), detect_keywords)
    } else {
        unrecognized("sns:Notification")
    };
    // `is_final` and the reference are read here so that a repeated member is refused above.
    let _ = (message.is_final, message.context.sms_sdk_ref.non_empty());
    Ok(SmsEvent::new(NAME, key, at, Raw::json(body), kind))
}

/// A verified request to confirm (or the notice of the end of) a subscription: the topic and the
/// URL that confirms it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The topic.
    pub topic_arn: String,
    /// `SubscribeURL`: an `https` URL of SNS (checked like certificate URLs).
    pub subscribe_url: String,
}

/// The subscription an event confirms, when it is a verified `SubscriptionConfirmation` from
/// AWS whose `SubscribeURL` is an `https` URL of the SNS endpoint of the topic's region.
#[must_use]
pub fn subscription(event: &SmsEvent) -> Option<Subscription> {
    let raw = event.raw();
    let kind = raw.get("Type").and_then(serde_json::Value::as_str);
    if event.provider != NAME || kind != Some("SubscriptionConfirmation") {
        return None;
    }
    let text = |member: &str| raw.get(member).and_then(serde_json::Value::as_str).map(str::to_owned);
    let (topic_arn, subscribe_url) = (text("TopicArn")?, text("SubscribeURL")?);
    is_url_of_topic(&subscribe_url, &topic_arn, None).then_some(Subscription { topic_arn, subscribe_url })
}

impl Subscription {
    /// Confirms the subscription: `GET` its `SubscribeURL` (5 s, a 64 KiB answer at most, no
    /// redirects), as SNS asks. Until then SNS sends nothing else to the endpoint.
    ///
    /// # Errors
    /// `Configuration` when the HTTP client cannot be built, or SNS did not answer 2xx within
    /// 5 s: the error names the status or the failure, never the URL (its token confirms).
    pub async fn confirm(&self, http: &HttpConfig) -> Result<(), Error> {
        let client = http.build("AWS SNS")?.client;
        let limit = super::certificate::MAX_CERTIFICATE_BYTES;
        crate::http::fetch(&client, &self.subscribe_url, super::certificate::FETCH_TIMEOUT, limit)
            .await
            .map(drop)
            .map_err(|error| Error::configuration(format!("The SNS subscription could not be confirmed: {error:?}.")))
    }
}

#[cfg(test)]
mod tests {
    use http::{HeaderMap, HeaderValue};
    use serde_json::Value;

    use super::*;
    use crate::json::random::{damage, random_json};

    const CERTIFICATE: &str = include_str!("../../../assets/aws-sns-test-certificate.pem");
    const OTHER_CERTIFICATE: &str = include_str!("../../../tests/fixtures/aws/other-sns-certificate.pem");
    const TOPIC: &str = "arn:aws:sns:us-west-2:123456789012:sms-voice-events";
    const SUCCESSFUL_V1: &str = include_str!("../../../tests/fixtures/aws/sns_notification_text_successful_v1.json");
    const UNREACHABLE_V2: &str =
        include_str!("../../../tests/fixtures/aws/sns_notification_carrier_unreachable_v2.json");
    const TWO_WAY_V1: &str = include_str!("../../../tests/fixtures/aws/sns_notification_two_way_v1.json");
    const CONFIRMATION_V1: &str = include_str!("../../../tests/fixtures/aws/sns_subscription_confirmation_v1.json");

    fn verifier() -> AwsWebhook {
        AwsWebhook::builder(TOPIC).certificate_pem(CERTIFICATE).build().unwrap_or_else(|e| panic!("{e}"))
    }

    fn headers(kind: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-amz-sns-message-type", HeaderValue::from_str(kind).unwrap_or_else(|_| unreachable!()));
        headers.insert("content-type", HeaderValue::from_static("text/plain; charset=UTF-8"));
        headers
    }

    fn verify_with(verifier: &AwsWebhook, body: &str, headers: &HeaderMap) -> Result<SmsEvent, WebhookError> {
        let request = WebhookRequest { method: "POST", url: "https://example.com/sns", headers, body: body.as_bytes() };
        verifier.verify_at(&request, SystemTime::now())
    }

    fn verify(body: &str) -> Result<SmsEvent, WebhookError> {
        verify_with(&verifier(), body, &headers("Notification"))
    }

    /// `body` with its member `name` set to `value`.
    fn with(body: &str, name: &str, value: Value) -> String {
        let mut envelope: Value = serde_json::from_str(body).unwrap_or_default();
        envelope[name] = value;
        envelope.to_string()
    }

    /// A notification of `message` from the topic.
    fn notification(message: &str) -> SignedFields<'_> {
        SignedFields {
            kind: "Notification",
            message,
            message_id: "m-2",
            subject: None,
            timestamp: "2026-12-01T10:00:00.000Z",
            topic_arn: TOPIC,
            token: None,
            subscribe_url: None,
        }
    }

    fn update(event: &SmsEvent) -> &StatusUpdate {
        let (EventKind::Sent(update) | EventKind::Undelivered(update) | EventKind::Delivered(update)) = &event.kind
        else {
            panic!("not a status: {}", event.type_name())
        };
        update
    }

    #[test]
    fn t283_a_signature_version_1_notification_verifies_and_normalizes() {
        let event = verify(SUCCESSFUL_V1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(event.type_name(), "message.sent");
        assert_eq!(event.dedupe_key, "aws:sns:22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324");
        let update = update(&event);
        assert_eq!(update.provider_id, "862a8790-60c0-4430-9b2b-658bdexample");
        assert_eq!(update.provider_status, "TEXT_SUCCESSFUL");
        assert_eq!(update.error_code, None);
        assert_eq!(update.to.as_deref(), Some("+14255550156"));
        assert_eq!(event.raw().get("context"), Some(&serde_json::json!({"account": "bar"})));
        // The documented event carries no reference of ours.
        assert_eq!(crate::reconcile::reference_in(&event, "https://example.com/sns"), None);
        // A changed byte of the message, or another certificate, is not AWS's signature.
        let changed = SUCCESSFUL_V1.replace("+14255550156", "+14255550157");
        assert_eq!(verify(&changed).err(), Some(WebhookError::InvalidSignature { provider: NAME }));
        let other = AwsWebhook::builder(TOPIC).certificate_pem(OTHER_CERTIFICATE).build();
        let other = other.unwrap_or_else(|e| panic!("{e}"));
        let refused = verify_with(&other, SUCCESSFUL_V1, &headers("Notification"));
        assert_eq!(refused.err(), Some(WebhookError::InvalidSignature { provider: NAME }));
    }

    #[test]
    fn t284_a_signature_version_2_failure_carries_its_status_and_our_reference() {
        let event = verify(UNREACHABLE_V2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(event.type_name(), "message.undelivered");
        let update = update(&event);
        assert_eq!(update.provider_status, "TEXT_CARRIER_UNREACHABLE");
        assert_eq!(update.error_code.as_deref(), Some("CARRIER_UNREACHABLE"));
        let reference = crate::reconcile::reference_in(&event, "https://example.com/sns");
        assert_eq!(reference.as_deref(), Some("AAAAAAAAAAAAAAAAAAAAAA"));
        // The version decides the hash: the same signature read as version 1 fails.
        let as_v1 = with(UNREACHABLE_V2, "SignatureVersion", "1".into());
        assert_eq!(verify(&as_v1).err(), Some(WebhookError::InvalidSignature { provider: NAME }));
        for version in ["3", "", "2.0"] {
            let body = with(UNREACHABLE_V2, "SignatureVersion", version.into());
            let expected = if version.is_empty() { "missing_signature" } else { "malformed_signature" };
            assert_eq!(verify(&body).err().and_then(|e| e.reason()), Some(expected), "{version:?}");
        }
        // The subject is signed: dropping it breaks the signature.
        let mut envelope: Value = serde_json::from_str(UNREACHABLE_V2).unwrap_or_default();
        envelope.as_object_mut().map(|o| o.remove("Subject"));
        assert_eq!(verify(&envelope.to_string()).err(), Some(WebhookError::InvalidSignature { provider: NAME }));
    }

    #[test]
    fn t285_the_string_to_sign_follows_the_message_type() {
        let mut fields = SignedFields {
            kind: "Notification",
            message: "m",
            message_id: "id",
            subject: Some("s"),
            timestamp: "t",
            topic_arn: "arn",
            token: Some("tok"),
            subscribe_url: Some("u"),
        };
        let notification = "Message\nm\nMessageId\nid\nSubject\ns\nTimestamp\nt\nTopicArn\narn\nType\nNotification\n";
        assert_eq!(string_to_sign(&fields), notification);
        fields.subject = None;
        assert_eq!(string_to_sign(&fields), notification.replace("Subject\ns\n", ""));
        fields.kind = "SubscriptionConfirmation";
        fields.subject = Some("ignored");
        assert_eq!(
            string_to_sign(&fields),
            "Message\nm\nMessageId\nid\nSubscribeURL\nu\nTimestamp\nt\nToken\ntok\nTopicArn\narn\nType\nSubscriptionConfirmation\n"
        );
    }

    #[test]
    fn t286_the_certificate_url_must_be_aws_even_with_an_injected_certificate() {
        for url in [
            "http://sns.us-west-2.amazonaws.com/SimpleNotificationService-sms-sdk-test.pem",
            "https://sns.us-west-2.amazonaws.com.attacker.example/cert.pem",
            "https://attacker.example/cert.pem",
            "https://sns.us-west-2.amazonaws.com/cert.txt",
        ] {
            let body = with(SUCCESSFUL_V1, "SigningCertURL", url.into());
            assert_eq!(verify(&body).err(), Some(WebhookError::InvalidSignature { provider: NAME }), "{url}");
        }
        // Only the topic's own region, and only the canonical spelling (the cache is keyed by it).
        for url in [
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-sms-sdk-test.pem",
            "https://SNS.us-west-2.amazonaws.com/SimpleNotificationService-sms-sdk-test.pem",
            "https://sns.us-west-2.amazonaws.com:443/SimpleNotificationService-sms-sdk-test.pem",
            "https://sns.us-west-2.amazonaws.com/Simple\tNotificationService-sms-sdk-test.pem",
            "https:/sns.us-west-2.amazonaws.com/SimpleNotificationService-sms-sdk-test.pem",
            "https://sns.s3-us-west-2.amazonaws.com/SimpleNotificationService-sms-sdk-test.pem",
            "https://sns.xn--us-wst-2-c7a.amazonaws.com/SimpleNotificationService-sms-sdk-test.pem",
        ] {
            let body = with(SUCCESSFUL_V1, "SigningCertURL", url.into());
            assert_eq!(verify(&body).err(), Some(WebhookError::InvalidSignature { provider: NAME }), "{url}");
        }
    }

    #[test]
    fn t285_a_newline_cannot_move_a_signed_member_into_another() {
        // The string to sign of a notification with `Subject: Delivery` is also that of one
        // without a subject whose MessageId ends "\nSubject\nDelivery": refused, not a second
        // dedupe key for the same event.
        let mut envelope: Value = serde_json::from_str(UNREACHABLE_V2).unwrap_or_default();
        let id = envelope["MessageId"].as_str().unwrap_or_default().to_owned();
        envelope.as_object_mut().map(|o| o.remove("Subject"));
        envelope["MessageId"] = format!("{id}\nSubject\nDelivery").into();
        let refused = verify(&envelope.to_string()).err();
        assert_eq!(refused, Some(WebhookError::MalformedSignature { provider: NAME }));
        for (member, value) in
            [("Timestamp", "2023-06-17T04:12:43.637Z\nX"), ("Timestamp", "yesterday"), ("MessageId", "a b")]
        {
            let body = with(UNREACHABLE_V2, member, value.into());
            assert_eq!(verify(&body).err(), Some(WebhookError::MalformedSignature { provider: NAME }), "{member}");
        }
    }

    #[test]
    fn t287_only_the_pinned_topics_and_no_raw_delivery() {
        let elsewhere = AwsWebhook::builder("arn:aws:sns:us-west-2:123456789012:other").certificate_pem(CERTIFICATE);
        let elsewhere = elsewhere.build().unwrap_or_else(|e| panic!("{e}"));
        let refused = verify_with(&elsewhere, SUCCESSFUL_V1, &headers("Notification"));
        assert_eq!(refused.err(), Some(WebhookError::InvalidSignature { provider: NAME }));
        let both =
            AwsWebhook::builder("arn:aws:sns:us-west-2:123456789012:other").topic(TOPIC).certificate_pem(CERTIFICATE);
        let both = both.build().unwrap_or_else(|e| panic!("{e}"));
        assert!(verify_with(&both, SUCCESSFUL_V1, &headers("Notification")).is_ok());
        // Raw message delivery posts the bare message: refused, whatever the body holds.
        let mut raw = headers("Notification");
        raw.insert("x-amz-sns-rawdelivery", HeaderValue::from_static("true"));
        let refused = verify_with(&verifier(), SUCCESSFUL_V1, &raw);
        assert_eq!(refused.err(), Some(WebhookError::MissingSignature { provider: NAME }));
        let event: Value = serde_json::from_str(SUCCESSFUL_V1).unwrap_or_default();
        let bare = event["Message"].as_str().unwrap_or_default();
        assert_eq!(verify(bare).err(), Some(WebhookError::MissingSignature { provider: NAME }));
        // Topic ARNs are checked when the verifier is built.
        for bad in ["", "arn:aws:sqs:us-east-1:1:q", "arn:aws:sns:us-east-1::t", "topic", "arn:aws:sns:us-east-1:1:t x"]
        {
            assert!(AwsWebhook::builder(bad).certificate_pem(CERTIFICATE).build().is_err(), "{bad:?}");
        }
        assert!(AwsWebhook::builder(TOPIC).certificate_pem("not a certificate").build().is_err());
        let many = (0..16).fold(AwsWebhook::builder(TOPIC), |b, i| b.topic(format!("{TOPIC}{i}")));
        assert!(many.certificate_pem(CERTIFICATE).build().is_err());
    }

    #[test]
    fn t288_a_two_way_message_is_received_and_stop_opts_out() {
        let event = verify(TWO_WAY_V1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(event.type_name(), "message.received");
        assert_eq!(event.dedupe_key, "aws:sns:da41e39f-ea4d-435a-b922-c6aae3915ebe");
        let EventKind::Received(inbound) = &event.kind else { panic!("{}", event.type_name()) };
        assert_eq!(inbound.provider_id, "cae173d2-66b9-564c-8309-21f858e9fb84");
        assert_eq!((inbound.from.as_str(), inbound.to.as_str()), ("+14255550182", "+12125550101"));
        assert_eq!(inbound.body, "EXAMPLE");
        let message = serde_json::json!({
            "originationNumber": "+14255550182", "destinationNumber": "+12125550101",
            "messageBody": "STOP", "inboundMessageId": "in-2",
        });
        let stop = message.to_string();
        let event = normalize(&notification(&stop), true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(event.type_name(), "recipient.opted_out");
        // AWS's messageKeyword STOP is its own opt-out: the provider's signal, whatever the text.
        let flagged = serde_json::json!({
            "originationNumber": "+14155550123", "destinationNumber": "+12125550101",
            "messageBody": "stop please", "messageKeyword": "STOP", "inboundMessageId": "in-3",
        })
        .to_string();
        let event = normalize(&notification(&flagged), true).unwrap_or_else(|e| panic!("{e}"));
        let EventKind::OptedOut(opt_out) = &event.kind else { panic!("{}", event.type_name()) };
        assert_eq!(opt_out.source, crate::webhook::event::KeywordSource::Provider);
        // A registered keyword (the documented JOIN) is the account's: a plain received message.
        let event = verify(TWO_WAY_V1).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(event.type_name(), "message.received");
        let without_from = serde_json::json!({"destinationNumber": "+1", "inboundMessageId": "x"}).to_string();
        assert!(matches!(normalize(&notification(&without_from), true), Err(WebhookError::Payload { .. })));
        // A message that is not End User Messaging's (another publisher's text) is unrecognized.
        let event = normalize(&notification("plain text"), true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(event.type_name(), "unrecognized");
        let repeated = r#"{"inboundMessageId":"a","inboundMessageId":"b"}"#;
        assert!(matches!(normalize(&notification(repeated), true), Err(WebhookError::Payload { .. })));
    }

    #[test]
    fn t289_a_subscription_confirmation_is_verified_then_names_its_url() {
        let event = verify_with(&verifier(), CONFIRMATION_V1, &headers("SubscriptionConfirmation"));
        let event = event.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(event.type_name(), "unrecognized");
        let Some(confirmed) = subscription(&event) else { panic!("no subscription") };
        assert_eq!(confirmed.topic_arn, TOPIC);
        assert!(confirmed.subscribe_url.starts_with("https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription"));
        // The token is signed; a confirmation without one is not a confirmation.
        let changed = with(CONFIRMATION_V1, "Token", "0".into());
        assert_eq!(verify(&changed).err(), Some(WebhookError::InvalidSignature { provider: NAME }));
        let mut envelope: Value = serde_json::from_str(CONFIRMATION_V1).unwrap_or_default();
        envelope.as_object_mut().map(|o| o.remove("Token"));
        assert_eq!(verify(&envelope.to_string()).err(), Some(WebhookError::MissingSignature { provider: NAME }));
        // Notifications are not subscriptions.
        let notification = verify(SUCCESSFUL_V1).unwrap_or_else(|e| panic!("{e}"));
        assert!(subscription(&notification).is_none());
        // A (signed) SubscribeURL that is not SNS's over https is never followed.
        for url in ["http://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription", "https://attacker.example/"] {
            let fields = SignedFields {
                kind: "SubscriptionConfirmation",
                message: "m",
                message_id: "c-1",
                subject: None,
                timestamp: "2026-12-01T10:00:00.000Z",
                topic_arn: TOPIC,
                token: Some("t"),
                subscribe_url: Some(url),
            };
            let event = normalize(&fields, true).unwrap_or_else(|e| panic!("{e}"));
            assert!(subscription(&event).is_none(), "{url}");
        }
    }

    /// A loopback server that answers one request with `status`, and hands back its head.
    fn confirm_server(status: u16) -> (String, std::sync::mpsc::Receiver<String>) {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let address = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let (heads, received) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            if let Some(Ok(mut stream)) = listener.incoming().next() {
                let mut head = vec![0; 4096];
                let read = stream.read(&mut head).unwrap_or_default();
                let _ = heads.send(String::from_utf8_lossy(head.get(..read).unwrap_or_default()).into_owned());
                let _ = write!(stream, "HTTP/1.1 {status} X\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
            }
        });
        (format!("http://{address}/?Action=ConfirmSubscription&Token=secret-token"), received)
    }

    #[tokio::test]
    async fn t289_confirming_gets_the_subscribe_url_and_hides_its_token() {
        let (url, heads) = confirm_server(200);
        let subscription = Subscription { topic_arn: TOPIC.into(), subscribe_url: url };
        assert!(subscription.confirm(&HttpConfig::new()).await.is_ok());
        let head = heads.recv().unwrap_or_default();
        assert!(head.starts_with("GET /?Action=ConfirmSubscription&Token=secret-token HTTP/1.1"), "{head}");
        let (url, _heads) = confirm_server(403);
        let subscription = Subscription { topic_arn: TOPIC.into(), subscribe_url: url };
        let error = subscription.confirm(&HttpConfig::new()).await.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("403") && !error.contains("secret-token"), "{error}");
    }

    #[test]
    fn t291_event_types_map_to_delivery_states() {
        let table = [
            ("TEXT_QUEUED", Some(DeliveryStatus::Queued)),
            ("TEXT_PENDING", Some(DeliveryStatus::Queued)),
            ("TEXT_SUCCESSFUL", Some(DeliveryStatus::Sent)),
            ("TEXT_DELIVERED", Some(DeliveryStatus::Delivered)),
            ("TEXT_BLOCKED", Some(DeliveryStatus::Filtered)),
            ("TEXT_CARRIER_BLOCKED", Some(DeliveryStatus::Filtered)),
            ("TEXT_SPAM", Some(DeliveryStatus::Filtered)),
            ("TEXT_PROTECT_BLOCKED", Some(DeliveryStatus::Filtered)),
            ("TEXT_TTL_EXPIRED", Some(DeliveryStatus::Undelivered)),
            ("TEXT_CARRIER_UNREACHABLE", Some(DeliveryStatus::Undelivered)),
            ("TEXT_UNREACHABLE", Some(DeliveryStatus::Undelivered)),
            ("TEXT_INVALID", Some(DeliveryStatus::Undelivered)),
            ("TEXT_INVALID_MESSAGE", Some(DeliveryStatus::Undelivered)),
            ("TEXT_UNKNOWN", None),
            ("TEXT_SENT", None),
            ("VOICE_COMPLETED", None),
        ];
        for (event_type, expected) in table {
            assert_eq!(delivery_status(event_type), expected, "{event_type}");
        }
        let unknown = r#"{"eventType":"TEXT_UNKNOWN","messageId":"x"}"#;
        let event = normalize(&notification(unknown), true).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(event.kind, EventKind::Unrecognized { provider_event_type: "TEXT_UNKNOWN".into() });
        let without_id = r#"{"eventType":"TEXT_DELIVERED"}"#;
        assert!(matches!(normalize(&notification(without_id), true), Err(WebhookError::Payload { .. })));
    }

    #[test]
    fn an_age_limit_is_optional() {
        let aged = AwsWebhook::builder(TOPIC).certificate_pem(CERTIFICATE).max_age(Duration::from_hours(1)).build();
        let aged = aged.unwrap_or_else(|e| panic!("{e}"));
        // The fixture is from 2023: too old for a one-hour limit, fine without one.
        let refused = verify_with(&aged, SUCCESSFUL_V1, &headers("Notification"));
        assert_eq!(refused.err(), Some(WebhookError::StaleTimestamp { provider: NAME }));
        assert!(verify(SUCCESSFUL_V1).is_ok());
    }

    #[test]
    fn repeated_members_and_hostile_bodies_are_refused_without_a_panic() {
        let repeated = SUCCESSFUL_V1.replacen(
            "\"Type\": \"Notification\",",
            "\"Type\": \"Notification\", \"Type\": \"Notification\",",
            1,
        );
        assert_eq!(verify(&repeated).err(), Some(WebhookError::MalformedSignature { provider: NAME }), "{repeated}");
        // Nothing before the signature says a request is AWS's: no payload error for these.
        for unsigned in ["", "hello", "[]", "null"] {
            assert_eq!(verify(unsigned).err(), Some(WebhookError::MissingSignature { provider: NAME }), "{unsigned}");
        }
        let mut rng = fastrand::Rng::with_seed(283);
        let keys = [
            "Type",
            "MessageId",
            "TopicArn",
            "Message",
            "Timestamp",
            "SignatureVersion",
            "Signature",
            "SigningCertURL",
        ];
        let leaves = [
            "\"Notification\"",
            "\"1\"",
            "\"2\"",
            "\"\"",
            "null",
            "true",
            "17",
            "\"https://sns.us-east-1.amazonaws.com/a.pem\"",
        ];
        for _ in 0..2_000 {
            let mut body = String::new();
            random_json(&mut rng, 3, &keys, &leaves, &mut body);
            let _ = verify(&body);
            let damaged = damage(&mut rng, SUCCESSFUL_V1.as_bytes().to_vec());
            let request = WebhookRequest {
                method: "POST",
                url: "https://e/s",
                headers: &headers("Notification"),
                body: &damaged,
            };
            // Damage that leaves the signed members as they were (whitespace between members)
            // still verifies, as the same event; anything else is refused.
            if let Ok(event) = verifier().verify_at(&request, SystemTime::now()) {
                assert_eq!(event.dedupe_key, "aws:sns:22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324");
                assert_eq!(event.type_name(), "message.sent");
            }
        }
    }

    #[test]
    fn a_fetched_certificate_must_be_prepared_first() {
        struct Never;
        impl CertificateSource for Never {
            fn certificate<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Vec<u8>, crate::BoxError>> {
                Box::pin(async { Err("offline".into()) })
            }
        }
        let fetched = AwsWebhook::builder(TOPIC).certificate_source(Arc::new(Never)).build();
        let fetched = fetched.unwrap_or_else(|e| panic!("{e}"));
        let refused = verify_with(&fetched, SUCCESSFUL_V1, &headers("Notification")).err();
        assert_eq!(refused, Some(WebhookError::KeyUnavailable { provider: NAME }));
        assert_eq!(refused.map(|e| e.http_status()), Some(503));
    }
}
