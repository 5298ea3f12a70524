//! `sms-sdk webhook verify`: verify a request exactly as a server would, and say why it fails.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use clap::{Args, ValueHint};
use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use sms_sdk::provider::aws::AwsWebhook;
use sms_sdk::provider::sinch::SinchWebhook;
use sms_sdk::redact::{mask_phone_number, redact_url_userinfo};
use sms_sdk::webhook::event::{Inbound, KeywordMessage, StatusUpdate};
use sms_sdk::webhook::{EventKind, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};
use sms_sdk::{BandwidthWebhook, InfobipWebhook};
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};

use crate::flags::Provider;
use crate::{EXIT_CONFIGURATION, EXIT_FAILED, EXIT_OK, EXIT_PAYLOAD, EXIT_USAGE, Env};

/// `webhook verify` flags.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The provider that sent the request.
    #[arg(long, value_name = "NAME", value_enum)]
    pub(crate) provider: Provider,
    /// The public URL the provider called (an absolute http(s) URL).
    #[arg(long, value_hint = ValueHint::Url, value_parser = crate::flags::http_url)]
    pub(crate) url: String,
    /// POST, or GET for callbacks whose parameters are in the URL.
    #[arg(long, default_value = "POST")]
    pub(crate) method: String,
    /// A header, `Name: value` (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    /// The raw body: a file, or `-` for standard input.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub(crate) body_file: Option<String>,
    /// Verify as of this Unix time (seconds).
    #[arg(long, value_name = "UNIX_SECONDS")]
    pub(crate) now: Option<u64>,
    /// Print JSON (phone numbers masked, a message body as its length, no raw payload).
    #[arg(long)]
    pub(crate) json: bool,
}

/// Sinch callbacks without HMAC signing: `user:password`, the Basic credentials written into the
/// callback URL (used only when `SINCH_WEBHOOK_SECRET` is unset).
pub(crate) const SINCH_BASIC_VARIABLE: &str = "SINCH_WEBHOOK_BASIC";

/// Infobip callbacks that carry a secret in their URL instead of Basic credentials: the token
/// of the query parameter `sms_sdk_token` (used only when `INFOBIP_WEBHOOK_BASIC` is unset).
pub(crate) const INFOBIP_TOKEN_VARIABLE: &str = "INFOBIP_WEBHOOK_TOKEN";

/// The variable holding each provider's webhook secret (Sinch's HMAC secret, Infobip's and
/// Bandwidth's callback Basic credentials as `user:password`; the alternatives are
/// [`alternative_variable`]'s).
pub(crate) fn secret_variable(provider: Provider) -> &'static str {
    match provider {
        Provider::Twilio => "TWILIO_AUTH_TOKEN",
        Provider::Telnyx => "TELNYX_PUBLIC_KEY",
        Provider::Plivo => "PLIVO_AUTH_TOKEN",
        Provider::Vonage => "VONAGE_SIGNATURE_SECRET",
        Provider::Sinch => "SINCH_WEBHOOK_SECRET",
        // Not a secret: SNS messages are signed with AWS's certificate; the topics pin whose.
        Provider::Aws => AWS_TOPIC_VARIABLE,
        Provider::Infobip => "INFOBIP_WEBHOOK_BASIC",
        Provider::Bandwidth => "BANDWIDTH_WEBHOOK_BASIC",
    }
}

/// The variable that configures `provider`'s verifier another way, read when its
/// [`secret_variable`] is unset: Sinch's Basic credentials, Infobip's URL token.
pub(crate) fn alternative_variable(provider: Provider) -> Option<&'static str> {
    match provider {
        Provider::Sinch => Some(SINCH_BASIC_VARIABLE),
        Provider::Infobip => Some(INFOBIP_TOKEN_VARIABLE),
        Provider::Twilio
        | Provider::Telnyx
        | Provider::Plivo
        | Provider::Vonage
        | Provider::Aws
        | Provider::Bandwidth => None,
    }
}

/// `user` and `password` of a `user:password` variable.
fn basic_pair(value: &str) -> Result<(&str, String), String> {
    let (user, password) =
        value.split_once(':').ok_or_else(|| "must be user:password (the callback's Basic credentials)".to_owned())?;
    Ok((user, password.to_owned()))
}

/// The SNS topic ARNs (comma-separated) whose messages the AWS verifier accepts.
pub(crate) const AWS_TOPIC_VARIABLE: &str = "AWS_SNS_TOPIC_ARN";

/// A certificate (PEM text, its newlines as they are or written `\n`, or the path of a PEM file)
/// the AWS verifier trusts for every well-formed AWS certificate URL instead of fetching it: the
/// emulator's, or one pinned on a host that cannot reach AWS.
pub(crate) const AWS_CERTIFICATE_VARIABLE: &str = "SMS_SDK_AWS_SNS_CERTIFICATE";

/// Why `variable`'s verifier cannot be built, naming it first unless the message names the
/// variable at fault itself (the AWS certificate's).
pub(crate) fn unusable(variable: &str, message: String) -> String {
    if message.starts_with(AWS_CERTIFICATE_VARIABLE) { message } else { format!("{variable}: {message}") }
}

/// The largest certificate file read: 64 KiB, as the verifier fetches at most.
const MAX_CERTIFICATE_FILE: u64 = 64 * 1024;

/// The AWS verifier of the topics in `topics`, with the certificate of
/// [`AWS_CERTIFICATE_VARIABLE`] when it is set, else fetching AWS's.
fn aws_verifier(topics: &str, env: &Env) -> Result<AwsWebhook, String> {
    let mut topics = topics.split(',').map(str::trim).filter(|t| !t.is_empty());
    let first = topics.next().ok_or_else(|| format!("{AWS_TOPIC_VARIABLE} names no topic"))?;
    let mut builder = AwsWebhook::builder(first);
    for topic in topics {
        builder = builder.topic(topic);
    }
    if let Some(value) = env.get(AWS_CERTIFICATE_VARIABLE) {
        let pem = if value.contains("-----BEGIN") {
            value.replace("\\n", "\n")
        } else {
            crate::config::read_text_file(value, MAX_CERTIFICATE_FILE)
                .map_err(|e| format!("{AWS_CERTIFICATE_VARIABLE}: cannot read {value}: {e}"))?
        };
        builder = builder.certificate_pem(pem);
    }
    builder.build().map_err(|e| e.to_string())
}

/// The variable `provider`'s verifier is built from: its secret's, or without one its
/// [`alternative_variable`] when that is set.
pub(crate) fn configured_variable(provider: Provider, env: &Env) -> &'static str {
    let secret = secret_variable(provider);
    match alternative_variable(provider) {
        Some(alternative) if env.get(secret).is_none() && env.get(alternative).is_some() => alternative,
        _ => secret,
    }
}

/// Whether any provider's webhook secret is set (this is a host that receives real webhooks).
pub(crate) fn any_secret_set(env: &Env) -> bool {
    Provider::ALL.into_iter().any(|p| env.get(configured_variable(p, env)).is_some())
}

/// What to set for `provider`'s verifier, as a message names it.
pub(crate) fn secret_variables(provider: Provider) -> String {
    match (provider, alternative_variable(provider)) {
        (Provider::Aws, _) => format!("{AWS_TOPIC_VARIABLE} (the SNS topics to accept)"),
        (_, Some(alternative)) => format!("{} (or {alternative})", secret_variable(provider)),
        (_, None) => secret_variable(provider).to_owned(),
    }
}

/// The verifier of `provider` with its secret from the environment (`serve` shares it): `None`
/// when the secret is unset. It checks the URL of the request it is given, so the request's URL
/// must be the one the provider signed.
///
/// # Errors
/// Why the secret cannot be used (never its value).
pub(crate) fn verifier(provider: Provider, env: &Env) -> Result<Option<Arc<dyn WebhookVerifier>>, String> {
    let configuration = |e: sms_sdk::Error| e.to_string();
    let variable = configured_variable(provider, env);
    let Some(secret) = env.get(variable).map(str::to_owned) else { return Ok(None) };
    if variable == SINCH_BASIC_VARIABLE {
        let (user, password) = basic_pair(&secret)?;
        return Ok(Some(Arc::new(SinchWebhook::basic(user, password).map_err(configuration)?)));
    }
    if variable == INFOBIP_TOKEN_VARIABLE {
        return Ok(Some(Arc::new(InfobipWebhook::url_token(secret).map_err(configuration)?)));
    }
    Ok(Some(match provider {
        Provider::Twilio => Arc::new(TwilioWebhook::new(secret).map_err(configuration)?),
        Provider::Telnyx => Arc::new(TelnyxWebhook::new(&secret).map_err(configuration)?),
        Provider::Plivo => Arc::new(PlivoWebhook::new(secret).map_err(configuration)?),
        Provider::Vonage => Arc::new(VonageWebhook::new(secret).map_err(configuration)?),
        Provider::Sinch => Arc::new(SinchWebhook::hmac(secret).map_err(configuration)?),
        Provider::Aws => Arc::new(aws_verifier(&secret, env)?),
        Provider::Infobip => {
            let (user, password) = basic_pair(&secret)?;
            Arc::new(InfobipWebhook::basic(user, password).map_err(configuration)?)
        }
        Provider::Bandwidth => {
            let (user, password) = basic_pair(&secret)?;
            Arc::new(BandwidthWebhook::basic(user, password).map_err(configuration)?)
        }
    }))
}

/// The `-H` lines as headers. An error names the header, never its value (a signature or a token).
fn headers(lines: &[String]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (number, line) in lines.iter().enumerate() {
        let number = number.saturating_add(1);
        let (name, value) = line.split_once(':').ok_or_else(|| format!("-H number {number} is not `Name: value`"))?;
        let name = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("-H number {number} does not start with a header name"))?;
        let value =
            HeaderValue::from_str(value.trim()).map_err(|_| format!("the value of -H {name} is not a header value"))?;
        map.append(name, value);
    }
    Ok(map)
}

/// The body, read up to one byte past `limit` (enough for the verifier to refuse it as too
/// large without holding a larger file in memory).
fn body(path: Option<&str>, limit: usize) -> Result<Vec<u8>, String> {
    let most = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    let mut bytes = Vec::new();
    match path {
        None => {}
        Some("-") => {
            std::io::stdin()
                .take(most)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
        }
        Some(path) => {
            let file = std::fs::File::open(path).map_err(|e| format!("cannot read {path}: {e}"))?;
            file.take(most).read_to_end(&mut bytes).map_err(|e| format!("cannot read {path}: {e}"))?;
        }
    }
    Ok(bytes)
}

/// The last second of year 9999 (`9999-12-31T23:59:59Z`), the latest `--now`.
const LATEST_NOW: u64 = 253_402_300_799;

/// `--now` as a time: Unix seconds up to the end of year 9999.
fn now(seconds: Option<u64>) -> Result<SystemTime, String> {
    let Some(seconds) = seconds else { return Ok(SystemTime::now()) };
    (seconds <= LATEST_NOW)
        .then(|| SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(seconds)))
        .flatten()
        .ok_or_else(|| format!("--now must be Unix seconds no later than the end of year 9999 ({LATEST_NOW})"))
}

/// The guide to receiving webhooks behind a proxy, as the command names it.
const PROXY_GUIDE: &str = "docs/webhooks-behind-a-proxy.md";

/// `url` as given, with any userinfo of its authority hidden (`https://***@host/path`): the
/// authority ends at the first `/`, `?`, `#` or `\`, as a URL parser reads it.
fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return redact_url_userinfo(url) };
    let end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
    match rest.split_at_checked(end) {
        Some((authority, tail)) => format!("{}{tail}", redact_url_userinfo(&format!("{scheme}://{authority}"))),
        None => redact_url_userinfo(url),
    }
}

/// Why a verification failed, in the user's terms: what the provider's scheme signs and what
/// to check.
struct Diagnosis {
    /// Whether the scheme signs the URL.
    url_signed: bool,
    /// What the scheme signs.
    signed: String,
    /// The URL the signature was checked against (userinfo hidden), when the scheme signs it.
    url: Option<String>,
    /// What to check.
    check: String,
}

impl Diagnosis {
    /// The lines printed after the error.
    fn lines(&self) -> Vec<String> {
        let mut lines = vec![self.signed.clone()];
        if let Some(url) = &self.url {
            lines.push(format!("URL used: {url} (--url, as given)"));
        }
        lines.push(self.check.clone());
        lines
    }

    /// The fields added to the JSON error.
    fn extend(&self, record: &mut Map<String, Value>) {
        record.insert("url_signed".into(), Value::Bool(self.url_signed));
        record.insert("signed".into(), Value::String(self.signed.clone()));
        if let Some(url) = &self.url {
            record.insert("url".into(), Value::String(url.clone()));
        }
        record.insert("check".into(), Value::String(self.check.clone()));
    }
}

/// What to check when a URL-signing scheme refuses the signature: the URL's `parts` first (with
/// `note` on what the verifier already tries), `then` the rest.
fn check_the_url(provider: &str, parts: &str, note: &str, then: &str) -> String {
    format!(
        "Check that --url is the exact public URL {provider} called: {parts}, character for character (a trailing \
         slash, http against https), as configured at {provider}{note}. Behind a proxy, a load balancer or a tunnel, \
         that is the URL outside it, not the one your server sees: see {PROXY_GUIDE}. If the URL is right, {then}"
    )
}

/// The diagnosis of `error` for `provider`'s scheme, checked against `url`; `None` for errors
/// that say all there is to say.
fn diagnose(provider: Provider, error: &WebhookError, url: &str, headers: &HeaderMap, env: &Env) -> Option<Diagnosis> {
    if let WebhookError::KeyUnavailable { .. } = error {
        let check = format!(
            "The certificate SigningCertURL names could not be fetched (5 s, 64 KiB at most): check that this host \
             reaches sns.<region>.amazonaws.com over HTTPS, or set {AWS_CERTIFICATE_VARIABLE} to the certificate."
        );
        return Some(Diagnosis { url_signed: false, signed: SNS_SIGNED.to_owned(), url: None, check });
    }
    let reason = error.reason()?;
    let url = Some(shown_url(url));
    let diagnosis = match (provider, reason) {
        (Provider::Twilio, "invalid_signature") => Diagnosis {
            url_signed: true,
            signed: "The URL is part of what Twilio signs: the URL it called, query included, then the POST \
                     parameters sorted by name (a JSON body through the bodySHA256 query parameter)."
                .into(),
            url,
            check: check_the_url(
                "Twilio",
                "scheme, host, port, path and query",
                " (the URL is also tried with its port removed, or with the scheme's default port added when it has \
                 none)",
                "check that the body is the one received, byte for byte, and that TWILIO_AUTH_TOKEN is the auth \
                 token of the account that sent it.",
            ),
        },
        (Provider::Twilio, "body_hash_mismatch") => Diagnosis {
            url_signed: true,
            signed: "Twilio signs a JSON callback through its URL: the bodySHA256 query parameter is the SHA-256 of \
                     the body."
                .into(),
            url,
            check: "The body is not the one whose hash is in --url: check that the body is the one received, byte \
                    for byte (no re-encoding or pretty-printing), and that --url carries the bodySHA256 Twilio \
                    called with."
                .into(),
        },
        (Provider::Plivo, "invalid_signature") if headers.contains_key("x-plivo-signature-v3") => Diagnosis {
            url_signed: true,
            signed: "The URL is part of what Plivo signs (V3): the URL it called with its query, then the POST \
                     parameters sorted by name, then the nonce."
                .into(),
            url,
            check: check_the_url(
                "Plivo",
                "scheme, host, port, path and query",
                "",
                "check that the body is the one received, byte for byte, that X-Plivo-Signature-V3-Nonce is the \
                 one received, and that PLIVO_AUTH_TOKEN is the auth token of the account that sent it.",
            ),
        },
        (Provider::Plivo, "invalid_signature") => Diagnosis {
            url_signed: true,
            signed: "The URL is part of what Plivo signs (V2): the URL it called without its query, then the nonce \
                     (not the body)."
                .into(),
            url,
            check: check_the_url(
                "Plivo",
                "scheme, host, port and path (V2 leaves the query out)",
                "",
                "check that X-Plivo-Signature-V2-Nonce is the one received and that PLIVO_AUTH_TOKEN is the auth \
                 token of the account that sent it.",
            ),
        },
        (Provider::Telnyx, "invalid_signature") => Diagnosis {
            url_signed: false,
            signed: "Telnyx does not sign the URL: it signs the telnyx-timestamp header and the raw body, with \
                     Ed25519."
                .into(),
            url: None,
            check: "Check that the body is the one received, byte for byte (no re-encoding, pretty-printing or \
                    added newline), that telnyx-timestamp and telnyx-signature-ed25519 are the headers received, \
                    and that TELNYX_PUBLIC_KEY is the account's public key (Mission Control, \"Public Key\")."
                .into(),
        },
        (Provider::Sinch, _) => return sinch_diagnosis(reason, headers),
        (Provider::Infobip | Provider::Bandwidth, _) => basic_diagnosis(provider, reason, env),
        (Provider::Aws, _) => aws_diagnosis(reason, headers, env),
        (Provider::Vonage, _) => return vonage_diagnosis(reason),
        _ => return None,
    };
    Some(diagnosis)
}

/// [`diagnose`] for Vonage: what its JWT signs.
fn vonage_diagnosis(reason: &str) -> Option<Diagnosis> {
    Some(match reason {
        "invalid_signature" => Diagnosis {
            url_signed: false,
            signed: "Vonage does not sign the URL: it signs a JWT (HS256, with the signature secret) in the \
                     Authorization header, whose payload_hash is the SHA-256 of the raw body."
                .into(),
            url: None,
            check: "The token was not signed with VONAGE_SIGNATURE_SECRET: check that it is the account's \
                    signature secret (Vonage dashboard, API settings) and that the Authorization header is the \
                    one received."
                .into(),
        },
        "body_hash_mismatch" => Diagnosis {
            url_signed: false,
            signed: "Vonage does not sign the URL: it signs a JWT whose payload_hash is the SHA-256 of the raw body."
                .into(),
            url: None,
            check: "The token is authentic, but its payload_hash is missing or is not the hash of this body: check \
                    that the body is the one received, byte for byte (no re-encoding or pretty-printing)."
                .into(),
        },
        _ => return None,
    })
}

/// What an HMAC-signed Sinch callback signs.
const SINCH_SIGNED: &str = "Sinch does not sign the URL: with HMAC signing it signs the raw body, a dot, the nonce \
                            header, a dot and the timestamp header; without it, a callback carries only the Basic \
                            credentials of its callback URL.";

/// What SNS signs.
const SNS_SIGNED: &str = "SNS does not sign the URL or the headers: it signs the envelope's members (Message, \
                          MessageId, Subject, Timestamp, TopicArn and Type; a confirmation's SubscribeURL and Token) \
                          with AWS's certificate, named by SigningCertURL (RSA, SHA-1 for SignatureVersion 1, SHA-256 \
                          for 2).";

/// [`diagnose`] for AWS (SNS): what is signed, and what to check.
fn aws_diagnosis(reason: &str, headers: &HeaderMap, env: &Env) -> Diagnosis {
    let topics = env.get(AWS_TOPIC_VARIABLE).unwrap_or_default();
    let accepted = |topic: &str| topics.split(',').any(|t| t.trim() == topic);
    let topic = headers.get("x-amz-sns-topic-arn").and_then(|v| v.to_str().ok()).filter(|t| !accepted(t));
    let check = if let Some(topic) = topic.filter(|_| reason == "invalid_signature") {
        format!(
            "The message is from the topic {topic} (its x-amz-sns-topic-arn header), which is not one of \
             {AWS_TOPIC_VARIABLE}: add it there (comma-separated) if the topic is yours."
        )
    } else if headers.get("x-amz-sns-rawdelivery").is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true")) {
        "The subscription has raw message delivery on: SNS then posts the bare message without its envelope or \
         signature, which nothing can verify. Turn raw message delivery off on the subscription."
            .to_owned()
    } else {
        match reason {
            "missing_signature" => "The body is not a signed SNS envelope (Type, MessageId, TopicArn, Message, \
                                    Timestamp, SignatureVersion, Signature, SigningCertURL): pass the body SNS posted, \
                                    byte for byte."
                .to_owned(),
            "malformed_signature" => "SignatureVersion must be 1 or 2 and Signature base64.".to_owned(),
            "stale_timestamp" => "The Timestamp is older than the configured age limit.".to_owned(),
            _ => format!(
                "Check that the message's TopicArn is one of {AWS_TOPIC_VARIABLE} (comma-separated), that \
                 SigningCertURL is https on sns.<region>.amazonaws.com with a .pem path, that the body is the one \
                 received byte for byte, and, when {AWS_CERTIFICATE_VARIABLE} is set, that it is the certificate \
                 that signed (the emulator's, for its messages)."
            ),
        }
    };
    Diagnosis { url_signed: false, signed: SNS_SIGNED.to_owned(), url: None, check }
}

/// [`diagnose`] for Sinch: what an HMAC-signed callback signs, or what Basic credentials prove.
fn sinch_diagnosis(reason: &str, headers: &HeaderMap) -> Option<Diagnosis> {
    let unsigned_url =
        |check: &str| Diagnosis { url_signed: false, signed: SINCH_SIGNED.into(), url: None, check: check.into() };
    Some(match reason {
        "missing_signature" => unsigned_url(
            "With SINCH_WEBHOOK_SECRET, the request needs the headers x-sinch-webhook-signature, \
             x-sinch-webhook-signature-timestamp and x-sinch-webhook-signature-nonce (and optionally \
             x-sinch-webhook-signature-algorithm), each as received (-H). With SINCH_WEBHOOK_BASIC, it needs the \
             Authorization header Sinch sent for the credentials of the callback URL: pass it with -H \
             \"Authorization: Basic …\" \
             (credentials in --url are not read).",
        ),
        "stale_timestamp" => unsigned_url(
            "x-sinch-webhook-signature-timestamp must be Unix seconds (not milliseconds) within 300 s of now: \
             to check a request received earlier, pass --now with the Unix time it arrived.",
        ),
        "malformed_signature" => unsigned_url(
            "x-sinch-webhook-signature must be the base64 of a 32-byte (HmacSHA256) or 64-byte (HmacSHA512) MAC, \
             x-sinch-webhook-signature-algorithm HmacSHA256 or HmacSHA512 (or absent: HmacSHA256), and the nonce \
             not empty: check that the headers are the ones received.",
        ),
        "invalid_signature" if headers.contains_key("x-sinch-webhook-signature") => Diagnosis {
            url_signed: false,
            signed: "Sinch does not sign the URL: it signs the raw body, a dot, the x-sinch-webhook-signature-nonce \
                     header, a dot and the x-sinch-webhook-signature-timestamp header, with HMAC (SHA-256, or \
                     SHA-512 as x-sinch-webhook-signature-algorithm says)."
                .into(),
            url: None,
            check: "Check that the body is the one received, byte for byte (no re-encoding, pretty-printing or \
                    added newline), that the nonce and timestamp headers are the ones received, and that \
                    SINCH_WEBHOOK_SECRET is the HMAC secret set on the service plan (Sinch sets it up through your \
                    account manager)."
                .into(),
        },
        "invalid_signature" => Diagnosis {
            url_signed: false,
            signed: "Without HMAC signing, a Sinch callback carries only the Basic credentials written into its \
                     callback URL (https://user:password@host/path), sent as the Authorization header."
                .into(),
            url: None,
            check: "Check that the Authorization header is the one received and that SINCH_WEBHOOK_BASIC is the \
                    user:password of the service plan's callback URL."
                .into(),
        },
        _ => return None,
    })
}

/// [`diagnose`] for Infobip and Bandwidth, which sign nothing: what their Basic credentials (or
/// Infobip's URL token) prove, and what to check.
fn basic_diagnosis(provider: Provider, reason: &str, env: &Env) -> Diagnosis {
    let name = if provider == Provider::Infobip { "Infobip" } else { "Bandwidth" };
    let token = configured_variable(provider, env) == INFOBIP_TOKEN_VARIABLE;
    let signed = if token {
        "Infobip signs nothing: the callback URL carries a secret in its sms_sdk_token query parameter, which proves \
             only that the caller knows it."
            .to_owned()
    } else {
        format!(
            "{name} signs nothing: a callback carries only the Basic credentials configured for it, as its \
             Authorization header, which prove only that the caller knows them."
        )
    };
    let variable = secret_variable(provider);
    let check = match (reason, token) {
        ("missing_signature", true) => {
            "--url must be the callback URL Infobip called, with its sms_sdk_token query parameter.".to_owned()
        }
        ("missing_signature", false) => format!(
            "The request needs the Authorization header {name} sent: pass it with -H \"Authorization: Basic …\" \
             (credentials in --url are not read)."
        ),
        ("malformed_signature", true) => "--url carries sms_sdk_token more than once.".to_owned(),
        (_, true) => {
            format!("Check that --url is the URL Infobip called and that {INFOBIP_TOKEN_VARIABLE} is its token.")
        }
        (_, false) => format!(
            "Check that the Authorization header is the one received and that {variable} is the user:password \
             configured for {name}'s callbacks."
        ),
    };
    // The URL is never shown: Infobip's carries the token.
    Diagnosis { url_signed: token, signed, url: None, check }
}

/// A phone number or sender as the command prints it: masked.
fn masked(value: &str) -> Value {
    Value::String(mask_phone_number(value))
}

/// The number of characters of a message body, which the output never shows.
fn body_chars(body: &str) -> Value {
    Value::from(body.chars().count())
}

/// The fields of an inbound message, numbers masked and the body as its length.
fn inbound_fields(record: &mut Map<String, Value>, message: &Inbound) {
    record.insert("provider_id".into(), Value::String(message.provider_id.clone()));
    record.insert("from".into(), masked(&message.from));
    record.insert("to".into(), masked(&message.to));
    record.insert("body_chars".into(), body_chars(&message.body));
    record.insert("media_urls".into(), json!(message.media_urls));
}

/// The fields of a status update, numbers masked.
fn status_fields(record: &mut Map<String, Value>, update: &StatusUpdate) {
    record.insert("provider_id".into(), Value::String(update.provider_id.clone()));
    record.insert("provider_status".into(), Value::String(update.provider_status.clone()));
    if let Some(code) = &update.error_code {
        record.insert("error_code".into(), Value::String(code.clone()));
    }
    if let Some(from) = &update.from {
        record.insert("from".into(), masked(from));
    }
    if let Some(to) = &update.to {
        record.insert("to".into(), masked(to));
    }
}

/// The fields of a keyword message, numbers masked and the body as its length.
fn keyword_fields(record: &mut Map<String, Value>, message: &KeywordMessage) {
    record.insert("provider_id".into(), Value::String(message.provider_id.clone()));
    record.insert("from".into(), masked(&message.from));
    record.insert("to".into(), masked(&message.to));
    record.insert("body_chars".into(), body_chars(&message.body));
    record.insert("source".into(), serde_json::to_value(message.source).unwrap_or(Value::Null));
    record.insert("keyword".into(), Value::String(message.keyword.clone()));
}

/// The event as `--json` prints it: the fields of its `SmsEvent` serialization with phone
/// numbers masked, a message body as its length (`body_chars`), and without the provider's raw
/// payload (it holds both, and it is the body the command was given).
fn event_json(event: &SmsEvent) -> Value {
    let occurred_at = event.occurred_at.and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok());
    let mut record = Map::new();
    record.insert("provider".into(), Value::String(event.provider.to_owned()));
    record.insert("dedupe_key".into(), Value::String(event.dedupe_key.clone()));
    record.insert("occurred_at".into(), occurred_at.map_or(Value::Null, Value::String));
    record.insert("type".into(), Value::String(event.type_name().to_owned()));
    match &event.kind {
        EventKind::Received(message) => inbound_fields(&mut record, message),
        EventKind::Queued(update)
        | EventKind::Sent(update)
        | EventKind::Delivered(update)
        | EventKind::Undelivered(update)
        | EventKind::Filtered(update) => status_fields(&mut record, update),
        EventKind::OptedOut(message) | EventKind::OptedIn(message) | EventKind::Help(message) => {
            keyword_fields(&mut record, message);
        }
        EventKind::Unrecognized { provider_event_type } => {
            record.insert("provider_event_type".into(), Value::String(provider_event_type.clone()));
        }
        // A kind this command does not know yet: its type only, never fields it cannot mask.
        _ => {}
    }
    Value::Object(record)
}

/// `webhook verify`.
pub(crate) async fn verify(args: &VerifyArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let now = match now(args.now) {
        Ok(now) => now,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return EXIT_USAGE;
        }
    };
    // The request's URL is `--url`, the URL the provider signed.
    let verifier = match verifier(args.provider, env)
        .map_err(|e| unusable(configured_variable(args.provider, env), e))
        .and_then(|v| v.ok_or_else(|| format!("{} is not set", secret_variables(args.provider))))
    {
        Ok(verifier) => verifier,
        Err(message) => {
            let _ = writeln!(err, "error: configuration: {message}");
            return EXIT_CONFIGURATION;
        }
    };
    let (headers, body) = match (headers(&args.headers), body(args.body_file.as_deref(), verifier.body_limit())) {
        (Ok(headers), Ok(body)) => (headers, body),
        (Err(message), _) | (_, Err(message)) => {
            let _ = writeln!(err, "error: {message}");
            return EXIT_USAGE;
        }
    };
    if args.body_file.is_none() && !args.method.eq_ignore_ascii_case("GET") {
        let _ =
            writeln!(err, "note: no --body-file: verifying an empty body (pass the raw body received, or - for stdin)");
    }
    let request = WebhookRequest { method: &args.method, url: &args.url, headers: &headers, body: &body };
    // The AWS verifier fetches the certificate the message names first (bounded; the others
    // hold their keys).
    let verified = match verifier.prepare(&request).await {
        Ok(()) => verifier.verify_all_at(&request, now),
        Err(error) => Err(error),
    };
    match verified {
        // A line per event (Infobip and Bandwidth post several in one request).
        Ok(events) => {
            for event in &events {
                if args.json {
                    let _ = writeln!(out, "{}", event_json(event));
                } else {
                    let _ = writeln!(out, "verified {} {} ({})", event.provider, event.type_name(), event.dedupe_key);
                }
            }
            EXIT_OK
        }
        Err(error) => {
            let diagnosis = diagnose(args.provider, &error, &args.url, &headers, env);
            if args.json {
                let mut record = Map::new();
                record.insert("code".into(), Value::String(error.code().to_owned()));
                record.insert("reason".into(), error.reason().map_or(Value::Null, |r| Value::String(r.to_owned())));
                record.insert("message".into(), Value::String(error.to_string()));
                if let Some(diagnosis) = &diagnosis {
                    diagnosis.extend(&mut record);
                }
                let _ = writeln!(out, "{}", json!({ "error": record }));
            } else {
                let _ = writeln!(err, "error: {error}");
                for line in diagnosis.iter().flat_map(Diagnosis::lines) {
                    let _ = writeln!(err, "  {line}");
                }
            }
            if error.is_authentication() {
                EXIT_FAILED
            } else if let WebhookError::KeyUnavailable { .. } = error {
                EXIT_CONFIGURATION
            } else if error.code() == "webhook_payload" {
                EXIT_PAYLOAD
            } else {
                EXIT_USAGE
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_url_hides_its_userinfo_only() {
        assert_eq!(
            shown_url("https://app:hunter2@hooks.example.com:8443/sms?x=1"),
            "https://***@hooks.example.com:8443/sms?x=1"
        );
        assert_eq!(
            shown_url("https://hooks.example.com/sms?contact=a@b.example"),
            "https://hooks.example.com/sms?contact=a@b.example"
        );
        assert_eq!(shown_url("http://us@er:pw@10.0.0.5:3000"), "http://***@10.0.0.5:3000");
        assert_eq!(shown_url("https://hooks.example.com"), "https://hooks.example.com");
    }
}
