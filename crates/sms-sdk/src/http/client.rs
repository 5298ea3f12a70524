//! Building the HTTP client: rustls on ring set on the client (never as a process-wide default),
//! the platform's certificate verifier, no redirects, no automatic retries, a bounded connect
//! phase; and [`HttpConfig`], how an adapter's sends and lookups reach its provider.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::HeaderValue;

use futures_util::future::BoxFuture;

use crate::BoxError;
use crate::error::Error;

/// The longest the connect phase (DNS, TCP, TLS) may take by default: 10 s.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an idle pooled connection is kept: 20 s.
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(20);
/// The `User-Agent` of every request by default: `sms-sdk/<version>`.
pub(crate) const USER_AGENT: &str = concat!("sms-sdk/", env!("CARGO_PKG_VERSION"));

tokio::task_local! {
    /// The connect budget of the request being sent on this task.
    pub(crate) static CONNECT_BUDGET: Duration;
}

/// An HTTP client for `provider` (named in errors) whose connects end after `connect_timeout`
/// (or the budget of the request that started them, when shorter), and whose requests end after
/// `request_timeout` unless they set their own.
pub(crate) fn http_client(
    provider: &str,
    connect_timeout: Duration,
    request_timeout: Duration,
    user_agent: HeaderValue,
) -> Result<reqwest::Client, Error> {
    reqwest::Client::builder()
        .timeout(request_timeout)
        .tls_backend_preconfigured(tls_config(provider)?)
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never())
        .user_agent(user_agent)
        .connect_timeout(connect_timeout)
        .connector_layer(ConnectBudget)
        // Drop idle connections before servers commonly close them (30 s and up), so a send
        // rarely races a server-side close on a pooled connection (an unknown outcome).
        .pool_idle_timeout(POOL_IDLE_TIMEOUT)
        .build()
        .map_err(|e| {
            Error::configuration(format!("Could not build the {provider} HTTP client.")).with_source(Arc::new(e))
        })
}

/// The request timeout the built-in adapters' HTTP clients apply by themselves: a client's
/// default ([`ClientBuilder::timeout`](crate::ClientBuilder::timeout)), so that its requests
/// set none of their own.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest connect timeout: 10 years, as every duration a client takes.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_hours(10 * 366 * 24);

/// How a built-in adapter reaches its provider, for its sends and its lookups alike: an HTTP
/// client of your own (a proxy, extra root certificates, local addresses, one connection pool
/// for several adapters), the connect timeout, and the `User-Agent`. Give it to each adapter's
/// builder (`Twilio::builder(…).http(config)`); an adapter without one builds its own client.
///
/// ```
/// # #[cfg(feature = "twilio")] {
/// use std::time::Duration;
/// use sms_sdk::{HttpConfig, Twilio};
///
/// let http = HttpConfig::new().connect_timeout(Duration::from_secs(3)).user_agent("shop/2.0");
/// let twilio = Twilio::builder("AC0123456789abcdef0123456789abcdef", "token").from("+15005550006").http(http).build()?;
/// # let _ = twilio; }
/// # Ok::<(), sms_sdk::Error>(())
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct HttpConfig {
    client: Option<reqwest::Client>,
    connect_timeout: Option<Duration>,
    user_agent: Option<String>,
}

impl HttpConfig {
    /// No client of your own, a 10 s connect timeout and the `sms-sdk/<version>` user agent.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends every request through `client` instead of one the adapter builds (clones share one
    /// connection pool). Build it as the adapters do: no redirects
    /// (`redirect::Policy::none()`), no retries, a connect timeout below the request timeout. Its
    /// connect failures are still `provider_unreachable`; its own TLS and timeouts apply, and
    /// each request carries the [`user_agent`](Self::user_agent).
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// The longest the connect phase (DNS, TCP, TLS) of a request may take (10 s by default, and
    /// never more than 90 % of the request timeout; above zero, at most 10 years). A connect that
    /// fails or times out never sent anything: `provider_unreachable`. A [`client`](Self::client)
    /// of your own keeps its own.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// The `User-Agent` of every request (`sms-sdk/<version>` by default; visible ASCII).
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = Some(user_agent.into());
        self
    }

    /// The HTTP of an adapter for `provider` (named in errors).
    ///
    /// # Errors
    /// `Configuration` for a zero or over-long connect timeout, a user agent that is not
    /// visible ASCII, or a client that cannot be built.
    pub(crate) fn build(&self, provider: &str) -> Result<Http, Error> {
        let user_agent = HeaderValue::from_str(self.user_agent.as_deref().unwrap_or(USER_AGENT))
            .map_err(|_| Error::configuration("The user agent must be visible ASCII text."))?;
        let connect_timeout = self.connect_timeout.unwrap_or(CONNECT_TIMEOUT);
        if connect_timeout.is_zero() {
            return Err(Error::configuration("The connect timeout must be greater than zero."));
        }
        if connect_timeout > MAX_CONNECT_TIMEOUT {
            return Err(Error::configuration("connect_timeout must be at most 10 years."));
        }
        Ok(match &self.client {
            Some(client) => {
                Http { client: client.clone(), user_agent: Some(user_agent), connect_timeout, request_timeout: None }
            }
            None => Http {
                client: http_client(provider, connect_timeout, DEFAULT_TIMEOUT, user_agent)?,
                user_agent: None,
                connect_timeout,
                request_timeout: Some(DEFAULT_TIMEOUT),
            },
        })
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("client", &self.client.as_ref().map(|_| "your own"))
            .field("connect_timeout", &self.connect_timeout)
            .field("user_agent", &self.user_agent)
            .finish()
    }
}

/// An adapter's HTTP, built from its [`HttpConfig`].
#[derive(Clone)]
pub(crate) struct Http {
    pub(crate) client: reqwest::Client,
    /// Set on each request of a client of the caller's (a client we build carries it already).
    pub(crate) user_agent: Option<HeaderValue>,
    /// The connect limit of the client we build (a client of the caller's keeps its own).
    pub(crate) connect_timeout: Duration,
    /// The request timeout the client applies by itself (a request with it sets none): ours,
    /// none for a client of the caller's.
    pub(crate) request_timeout: Option<Duration>,
}

/// The connect budget of a request with `timeout`: the connect timeout, or 90 % of the request
/// timeout when shorter, so
/// that a hanging connect fails as a connect error before the request timeout fires.
pub(crate) fn connect_budget(connect_timeout: Duration, timeout: Duration) -> Duration {
    connect_timeout.min(timeout.mul_f64(0.9))
}

/// The TLS configuration: ring, the platform's certificate verifier, HTTP/2 and HTTP/1.1 by
/// ALPN, no early data. Set on the client, so the process-wide default provider is never touched.
fn tls_config(provider: &str) -> Result<rustls::ClientConfig, Error> {
    let failed = |e: rustls::Error| {
        Error::configuration(format!("Could not configure TLS for {provider}.")).with_source(Arc::new(e))
    };
    let crypto = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(Arc::clone(&crypto)).map_err(failed)?;
    let mut config = rustls::ClientConfig::builder_with_provider(crypto)
        .with_safe_default_protocol_versions()
        .map_err(failed)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    config.enable_early_data = false;
    Ok(config)
}

/// A connector layer that bounds each connect by the budget of the request that started it
/// (the task-local [`CONNECT_BUDGET`]; the 10 s default for a connect started elsewhere).
#[derive(Debug, Clone, Copy)]
struct ConnectBudget;

impl<S> tower::Layer<S> for ConnectBudget {
    type Service = Budgeted<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Budgeted(inner)
    }
}

/// A connector bounded by [`ConnectBudget`].
#[derive(Debug, Clone)]
struct Budgeted<S>(S);

impl<S, R> tower::Service<R> for Budgeted<S>
where
    S: tower::Service<R, Error = BoxError>,
    S::Future: Send + 'static,
    S::Response: 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<S::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let budget = CONNECT_BUDGET.try_with(|budget| *budget).unwrap_or(CONNECT_TIMEOUT);
        let connect = self.0.call(request);
        Box::pin(async move {
            match tokio::time::timeout(budget, connect).await {
                Ok(result) => result,
                Err(_elapsed) => Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out").into()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_adapters_timeout_is_the_clients_default() {
        assert_eq!(DEFAULT_TIMEOUT, crate::client::DEFAULT_TIMEOUT);
    }

    #[test]
    fn the_connect_budget_stays_inside_the_request_timeout() {
        assert_eq!(connect_budget(CONNECT_TIMEOUT, Duration::from_secs(30)), CONNECT_TIMEOUT);
        assert_eq!(connect_budget(CONNECT_TIMEOUT, Duration::from_secs(10)), Duration::from_secs(9));
        assert_eq!(connect_budget(CONNECT_TIMEOUT, Duration::from_millis(100)), Duration::from_millis(90));
        assert_eq!(connect_budget(CONNECT_TIMEOUT, Duration::MAX), CONNECT_TIMEOUT);
        assert_eq!(connect_budget(CONNECT_TIMEOUT, Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn a_configured_connect_timeout_bounds_the_budget_too() {
        assert_eq!(connect_budget(Duration::from_secs(2), Duration::from_secs(30)), Duration::from_secs(2));
    }

    #[test]
    fn http_options_are_checked_when_built() {
        assert!(HttpConfig::new().connect_timeout(Duration::ZERO).build("x").is_err());
        assert!(HttpConfig::new().connect_timeout(MAX_CONNECT_TIMEOUT + Duration::from_secs(1)).build("x").is_err());
        assert!(HttpConfig::new().user_agent("bad\nagent").build("x").is_err());
        let http = HttpConfig::new().connect_timeout(Duration::from_secs(3)).user_agent("shop/1.0").build("x").unwrap();
        assert_eq!(http.request_timeout, Some(DEFAULT_TIMEOUT));
        assert_eq!(http.connect_timeout, Duration::from_secs(3));
        assert!(http.user_agent.is_none(), "a client we build carries its user agent itself");
        assert!(USER_AGENT.starts_with("sms-sdk/"));
    }
}
