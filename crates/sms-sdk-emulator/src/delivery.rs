//! Posting webhooks: the first post and two retries, one retry interval apart, each with a
//! 5 s timeout. Anything but a 2xx is a failed attempt.

use std::time::Duration;

use http::header;

use crate::model::WebhookFailure;
use crate::provider::Webhook;

/// How many times a webhook is posted at most.
pub(crate) const ATTEMPTS: u32 = 3;
/// The timeout of one attempt.
pub(crate) const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// How many status sequences (one background task each) may be pending at once.
pub(crate) const MAX_PENDING_STATUS: usize = 10_000;

/// TLS for https receivers: ring and the platform's certificate verifier, set on this client
/// only (reqwest is built without a default provider, and a process-wide one is never installed).
fn tls() -> Result<rustls::ClientConfig, rustls::Error> {
    let crypto = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(std::sync::Arc::clone(&crypto))?;
    let mut config = rustls::ClientConfig::builder_with_provider(crypto)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(std::sync::Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Posts webhooks.
#[derive(Debug, Clone)]
pub(crate) struct Poster {
    client: reqwest::Client,
    retry_interval: Duration,
}

impl Poster {
    /// A poster waiting `retry_interval` between attempts.
    pub(crate) fn new(retry_interval: Duration) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls()?)
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            .timeout(ATTEMPT_TIMEOUT)
            .build()?;
        Ok(Self { client, retry_interval })
    }

    /// Posts `hook` until it is answered 2xx or every attempt failed.
    ///
    /// Returns the HTTP status of the successful attempt.
    pub(crate) async fn post(&self, hook: &Webhook) -> Result<u16, WebhookFailure> {
        let mut error = String::new();
        for attempt in 1..=ATTEMPTS {
            if attempt > 1 {
                tokio::time::sleep(self.retry_interval).await;
            }
            match self.attempt(hook).await {
                Ok(status) => return Ok(status),
                Err(message) => error = message,
            }
        }
        Err(WebhookFailure { url: hook.url.clone(), event: hook.event.clone(), attempts: ATTEMPTS, error })
    }

    async fn attempt(&self, hook: &Webhook) -> Result<u16, String> {
        let mut request =
            self.client.post(&hook.url).header(header::CONTENT_TYPE, hook.content_type).body(hook.body.clone());
        for (name, value) in &hook.headers {
            request = request.header(*name, value);
        }
        match request.send().await {
            Ok(response) if response.status().is_success() => Ok(response.status().as_u16()),
            Ok(response) => Err(format!("HTTP {}", response.status().as_u16())),
            Err(error) if error.is_timeout() => Err(format!("no answer within {} s", ATTEMPT_TIMEOUT.as_secs())),
            Err(error) if error.is_connect() => Err("the connection failed".to_owned()),
            Err(error) => Err(error.without_url().to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poster_installs_no_process_wide_tls_provider() {
        assert!(Poster::new(Duration::from_secs(1)).is_ok());
        assert!(rustls::crypto::CryptoProvider::get_default().is_none());
    }
}
