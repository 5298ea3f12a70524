//! Read-only requests (message lookups), with the same bounds as sends: the connect budget, the
//! request timeout, a 1 MiB body cap, no redirects or retries, and nothing of the provider's
//! answer kept beyond its status when it is not a success.

use std::time::Duration;

use http::{HeaderValue, header};

use super::client::{CONNECT_BUDGET, connect_budget};
use super::{Authorization, MAX_RESPONSE_BODY, Transport, read_capped};
use crate::lookup::LookupOutcome;

impl Transport {
    /// `GET {base}{path}`: the body of a 2xx answer, or the outcome that says why there is none
    /// (404 `NotFound`, anything else `Failed` with its status only).
    pub(crate) async fn get(
        &self,
        path: &str,
        authorization: &Authorization,
        timeout: Duration,
    ) -> Result<Vec<u8>, LookupOutcome> {
        let provider = self.provider;
        let Some(auth) = &authorization.header else {
            return Err(LookupOutcome::failed("the credentials cannot be sent in a header"));
        };
        let mut request = self
            .http
            .client
            .get(format!("{}{path}", self.base_url))
            .timeout(timeout)
            .header(header::ACCEPT, HeaderValue::from_static("application/json"))
            .header(header::AUTHORIZATION, auth.clone());
        if let Some(user_agent) = &self.http.user_agent {
            request = request.header(header::USER_AGENT, user_agent.clone());
        }
        let exchange = async {
            let mut response = request.send().await?;
            let status = response.status().as_u16();
            Ok::<_, reqwest::Error>((status, read_capped(&mut response, MAX_RESPONSE_BODY).await?))
        };
        match CONNECT_BUDGET.scope(connect_budget(self.http.connect_timeout, timeout), exchange).await {
            Ok((200..=299, Some(body))) => Ok(body),
            Ok((200..=299, None)) => Err(LookupOutcome::failed("the answer is larger than 1 MiB")),
            Ok((404, _)) => Err(LookupOutcome::NotFound),
            Ok((status, _)) => {
                tracing::debug!(provider, status, "lookup refused");
                Err(LookupOutcome::failed(&format!("{provider} answered HTTP {status}")))
            }
            Err(error) => {
                let what = if error.is_timeout() { "timed out" } else { "failed" };
                Err(LookupOutcome::failed(&format!("the request to {provider} {what}")))
            }
        }
    }
}

/// Why [`fetch`] has no body.
#[cfg_attr(not(feature = "aws"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FetchError {
    /// The server answered this status, not a 2xx.
    Status(u16),
    /// The body is longer than the limit (declared or read).
    TooLarge,
    /// No answer in time.
    TimedOut,
    /// Connecting, TLS, or reading failed.
    Failed,
}

/// `GET url` with `client`: the body of a 2xx answer of at most `limit` bytes, within `timeout`
/// (connect included), without following redirects (the client follows none).
#[cfg_attr(not(feature = "aws"), allow(dead_code))]
pub(crate) async fn fetch(
    client: &reqwest::Client,
    url: &str,
    timeout: Duration,
    limit: usize,
) -> Result<Vec<u8>, FetchError> {
    let exchange = async {
        let mut response = client.get(url).timeout(timeout).send().await?;
        let status = response.status().as_u16();
        if !(200..=299).contains(&status) {
            return Ok(Err(FetchError::Status(status)));
        }
        Ok::<_, reqwest::Error>(read_capped(&mut response, limit).await?.ok_or(FetchError::TooLarge))
    };
    // The whole exchange, body included, ends at `timeout`: a server that trickles bytes cannot
    // hold the caller longer.
    match tokio::time::timeout(timeout, CONNECT_BUDGET.scope(timeout, exchange)).await {
        Ok(Ok(result)) => result,
        Ok(Err(error)) if error.is_timeout() => Err(FetchError::TimedOut),
        Ok(Err(_)) => Err(FetchError::Failed),
        Err(_) => Err(FetchError::TimedOut),
    }
}
