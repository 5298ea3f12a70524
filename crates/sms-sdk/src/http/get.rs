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
