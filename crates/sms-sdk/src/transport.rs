//! Building the HTTP client: rustls on ring set on the client (never as a process-wide default),
//! the platform's certificate verifier, no redirects, no automatic retries, a bounded connect
//! phase; and the transport options a [`Client`](crate::Client) shares with its adapters.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::HeaderValue;

use crate::boxed::{BoxError, BoxFuture};
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

/// The transport a client's adapters share when the client was given transport options
/// ([`ClientBuilder::http_client`](crate::ClientBuilder::http_client),
/// [`connect_timeout`](crate::ClientBuilder::connect_timeout),
/// [`user_agent`](crate::ClientBuilder::user_agent)).
#[derive(Clone)]
pub(crate) struct SharedHttp {
    pub(crate) client: reqwest::Client,
    /// Set on each request of an injected client (a client we build carries it already).
    pub(crate) user_agent: Option<HeaderValue>,
    /// The connect limit of the client we build (an injected client keeps its own).
    pub(crate) connect_timeout: Duration,
    /// The request timeout the client applies by itself (a request with it sets none): the
    /// client's timeout for a client we build, none for an injected one.
    pub(crate) request_timeout: Option<Duration>,
}

impl SharedHttp {
    /// The shared transport: `injected`, or a client we build with `connect_timeout` and
    /// `user_agent` (defaults: 10 s, `sms-sdk/<version>`) and the client's `request_timeout`.
    pub(crate) fn new(
        injected: Option<reqwest::Client>,
        connect_timeout: Option<Duration>,
        user_agent: Option<&str>,
        request_timeout: Duration,
    ) -> Result<Self, Error> {
        let user_agent = HeaderValue::from_str(user_agent.unwrap_or(USER_AGENT))
            .map_err(|_| Error::configuration("The user agent must be visible ASCII text."))?;
        let connect_timeout = connect_timeout.unwrap_or(CONNECT_TIMEOUT);
        if connect_timeout.is_zero() {
            return Err(Error::configuration("The connect timeout must be greater than zero."));
        }
        Ok(match injected {
            Some(client) => Self { client, user_agent: Some(user_agent), connect_timeout, request_timeout: None },
            None => Self {
                client: http_client("the shared", connect_timeout, request_timeout, user_agent)?,
                user_agent: None,
                connect_timeout,
                request_timeout: Some(request_timeout),
            },
        })
    }
}

impl fmt::Debug for SharedHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedHttp").field("connect_timeout", &self.connect_timeout).finish_non_exhaustive()
    }
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
    fn shared_transport_options_are_checked() {
        let timeout = Duration::from_secs(10);
        assert!(SharedHttp::new(None, Some(Duration::ZERO), None, timeout).is_err());
        assert!(SharedHttp::new(None, None, Some("bad\nagent"), timeout).is_err());
        let shared = SharedHttp::new(None, Some(Duration::from_secs(3)), Some("shop/1.0"), timeout).unwrap();
        assert_eq!(shared.request_timeout, Some(timeout));
        assert_eq!(shared.connect_timeout, Duration::from_secs(3));
        assert!(shared.user_agent.is_none(), "a client we build carries its user agent itself");
        assert!(USER_AGENT.starts_with("sms-sdk/"));
    }
}
