//! `sms-sdk webhook verify`: verify a request exactly as a server would.

use std::io::{Read, Write};
use std::time::{Duration, SystemTime};

use http::{HeaderMap, HeaderName, HeaderValue};
use sms_sdk::webhook::{WebhookRequest, WebhookVerifier};
use sms_sdk::{PlivoWebhook, TelnyxWebhook, TwilioWebhook, VonageWebhook};

use crate::cli::VerifyArgs;
use crate::values::Provider;
use crate::{EXIT_CONFIGURATION, EXIT_FAILED, EXIT_OK, EXIT_PAYLOAD, EXIT_USAGE, Env};

/// The variable holding each provider's webhook secret.
pub(crate) fn secret_variable(provider: Provider) -> &'static str {
    match provider {
        Provider::Twilio => "TWILIO_AUTH_TOKEN",
        Provider::Telnyx => "TELNYX_PUBLIC_KEY",
        Provider::Plivo => "PLIVO_AUTH_TOKEN",
        Provider::Vonage => "VONAGE_SIGNATURE_SECRET",
    }
}

/// The verifier of `provider`, with its secret from the environment.
fn verifier(provider: Provider, url: &str, env: &Env) -> Result<Box<dyn WebhookVerifier>, String> {
    let name = secret_variable(provider);
    let secret = env.get(name).map(str::to_owned).ok_or_else(|| format!("{name} is not set"))?;
    let configuration = |e: sms_sdk::Error| e.to_string();
    Ok(match provider {
        Provider::Twilio => Box::new(TwilioWebhook::new(secret).map_err(configuration)?.public_url(url)),
        Provider::Telnyx => Box::new(TelnyxWebhook::new(&secret).map_err(configuration)?),
        Provider::Plivo => Box::new(PlivoWebhook::new(secret).map_err(configuration)?.public_url(url)),
        Provider::Vonage => Box::new(VonageWebhook::new(secret).map_err(configuration)?),
    })
}

fn headers(lines: &[String]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for line in lines {
        let (name, value) = line.split_once(':').ok_or_else(|| format!("header {line:?} is not `Name: value`"))?;
        let name =
            HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| format!("bad header name in {line:?}"))?;
        let value = HeaderValue::from_str(value.trim()).map_err(|_| format!("bad header value in {line:?}"))?;
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

/// `webhook verify`.
pub(crate) fn verify(args: &VerifyArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let now = match now(args.now) {
        Ok(now) => now,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return EXIT_USAGE;
        }
    };
    let verifier = match verifier(args.provider, &args.url, env) {
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
    let request = WebhookRequest { method: &args.method, url: &args.url, headers: &headers, body: &body };
    match verifier.verify_at(&request, now) {
        Ok(event) => {
            if args.json {
                let _ = writeln!(out, "{}", serde_json::to_string(&event).unwrap_or_default());
            } else {
                let _ = writeln!(out, "verified {} {} ({})", event.provider, event.type_name(), event.dedupe_key);
            }
            EXIT_OK
        }
        Err(error) => {
            if args.json {
                let record = serde_json::json!({"error": {"code": error.code(), "reason": error.reason(), "message": error.to_string()}});
                let _ = writeln!(out, "{record}");
            } else {
                let _ = writeln!(err, "error: {error}");
            }
            if error.is_authentication() {
                EXIT_FAILED
            } else if error.code() == "webhook_payload" {
                EXIT_PAYLOAD
            } else {
                EXIT_USAGE
            }
        }
    }
}
