//! Handing an event on to the application over HTTP: a POST of the event's JSON signed per the
//! Standard Webhooks specification (`webhook-id`, `webhook-timestamp`, `webhook-signature`), so
//! the application verifies one scheme instead of four, retried within a budget.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use base64::Engine as _;
use hmac::{KeyInit as _, Mac as _};

/// The variable holding the forwarding secret, `whsec_<base64>`.
pub(crate) const SECRET_VARIABLE: &str = "SMS_SDK_FORWARD_SECRET";
/// All attempts of one event together end within this by default, so that the provider does not
/// time out first (the emulator waits 5 s for an answer; Twilio 15 s).
pub(crate) const DEFAULT_BUDGET: Duration = Duration::from_secs(4);
/// The longest budget `--forward-budget` takes: the ruling's 10 s.
pub(crate) const MAX_BUDGET_SECS: u64 = 10;
/// The longest one attempt may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// The waits between attempts (the last one repeats while the budget lasts).
const BACKOFF: [Duration; 3] = [Duration::from_millis(200), Duration::from_millis(500), Duration::from_secs(1)];
/// The fewest bytes a secret may have (the specification's secrets are 24 to 64).
const MIN_SECRET_BYTES: usize = 16;

/// The forwarding secret's key bytes. `Debug` shows `***`.
#[derive(Clone)]
pub(crate) struct ForwardSecret(Arc<[u8]>);

impl fmt::Debug for ForwardSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ForwardSecret(***)")
    }
}

impl ForwardSecret {
    /// The key of `text`: `whsec_` then the base64 of at least 16 bytes.
    ///
    /// # Errors
    /// What is wrong with it (never its value).
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let encoded = text.trim().strip_prefix("whsec_").ok_or_else(|| {
            format!("{SECRET_VARIABLE} must start with whsec_ (the Standard Webhooks form: whsec_ and base64)")
        })?;
        let key = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| format!("{SECRET_VARIABLE}: what follows whsec_ is not base64"))?;
        if key.len() < MIN_SECRET_BYTES {
            return Err(format!("{SECRET_VARIABLE} must hold at least {MIN_SECRET_BYTES} bytes of key"));
        }
        Ok(Self(key.into()))
    }

    /// `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.
    pub(crate) fn sign(&self, id: &str, timestamp: u64, body: &[u8]) -> String {
        // HMAC takes a key of any length.
        let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.0) else { return String::new() };
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// Posts events to the application.
#[derive(Clone)]
pub(crate) struct Forwarder {
    client: reqwest::Client,
    url: String,
    secret: ForwardSecret,
    budget: Duration,
}

impl fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forwarder").field("url", &sms_sdk::redact::redact_url(&self.url)).finish_non_exhaustive()
    }
}

impl Forwarder {
    /// A forwarder to `url` signing with `secret`.
    ///
    /// # Errors
    /// The HTTP client could not be built (TLS).
    pub(crate) fn new(url: &str, secret: ForwardSecret, budget: Duration) -> Result<Self, String> {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls().map_err(|e| format!("TLS for --forward: {e}"))?)
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .connect_timeout(ATTEMPT_TIMEOUT)
            .user_agent(concat!("sms-sdk-serve/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("the --forward HTTP client: {e}"))?;
        Ok(Self { client, url: url.to_owned(), secret, budget })
    }

    /// Posts `body` as the event `id` until the application answers 2xx, within the budget.
    /// A 4xx other than 408 and 429 is final (the application refused the event as it is).
    ///
    /// # Errors
    /// What the last attempt got (a status or a connection failure), for the log.
    pub(crate) async fn forward(&self, id: &str, body: &[u8]) -> Result<(), String> {
        let deadline = Instant::now() + self.budget;
        let mut attempt = 0usize;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let result = self.attempt(id, body, left.min(ATTEMPT_TIMEOUT)).await;
            let status = match result {
                Ok(status) if (200..300).contains(&status) => return Ok(()),
                Ok(status) if (400..500).contains(&status) && status != 408 && status != 429 => {
                    return Err(format!("the application answered {status}"));
                }
                Ok(status) => format!("the application answered {status}"),
                Err(error) => error,
            };
            let wait = BACKOFF.get(attempt).or(BACKOFF.last()).copied().unwrap_or(Duration::from_secs(1));
            if Instant::now() + wait >= deadline {
                return Err(format!(
                    "{status} (gave up after {} attempts within {} s)",
                    attempt + 1,
                    self.budget.as_secs()
                ));
            }
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// One signed POST, within `timeout`; the status, or why there is none.
    async fn attempt(&self, id: &str, body: &[u8], timeout: Duration) -> Result<u16, String> {
        if timeout.is_zero() {
            return Err("no time left".to_owned());
        }
        let timestamp = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let request = self
            .client
            .post(&self.url)
            .timeout(timeout)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", self.secret.sign(id, timestamp, body))
            .body(body.to_vec());
        match request.send().await {
            Ok(response) => Ok(response.status().as_u16()),
            Err(error) if error.is_timeout() => Err("the application did not answer in time".to_owned()),
            Err(_) => Err("the application could not be reached".to_owned()),
        }
    }
}

/// TLS for https targets: ring and the platform's certificate verifier, on this client only.
fn tls() -> Result<rustls::ClientConfig, rustls::Error> {
    let crypto = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(Arc::clone(&crypto))?;
    let mut config = rustls::ClientConfig::builder_with_provider(crypto)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_standard_webhooks_one() {
        // The specification's example: secret, id, timestamp and payload, and its signature.
        let secret = ForwardSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn a_secret_is_whsec_and_base64_of_enough_bytes() {
        assert!(ForwardSecret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap_err().contains("whsec_"));
        assert!(ForwardSecret::parse("whsec_not base64!").unwrap_err().contains("base64"));
        assert!(ForwardSecret::parse("whsec_c2hvcnQ=").unwrap_err().contains("16 bytes"));
        assert_eq!(
            format!("{:?}", ForwardSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap()),
            "ForwardSecret(***)"
        );
    }
}
