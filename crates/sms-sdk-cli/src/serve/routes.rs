//! The HTTP side of `serve`: the routes, reading and verifying each webhook against its signed
//! URL, the bounds (body size, read timeouts, concurrency, a deadline per request), the health
//! and metrics endpoints, and one log line per webhook.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http_body_util::BodyExt as _;
use metrics_exporter_prometheus::PrometheusHandle;
use sms_sdk::redact::mask_phone_number;
use sms_sdk::store::Store;
use sms_sdk::webhook::axum::BodyReadTimeout;
use sms_sdk::webhook::{EventKind, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};
use tokio::sync::{Semaphore, mpsc};

use super::pipeline::{Handled, Pipeline};
use crate::flags::Provider;

/// The largest webhook body: 1 MiB.
pub(crate) const MAX_BODY: usize = 1024 * 1024;
/// How long a client has for a request's headers, and for its body.
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// The most one webhook may take, from its headers to the answer (reading, verifying, the
/// store, handing on within its 10 s): past it, 503 and the key is freed.
const DEADLINE: Duration = Duration::from_secs(25);
/// How long `/readyz` waits for the store.
const READY_TIMEOUT: Duration = Duration::from_secs(2);
/// The server's own counter: webhooks by provider and answer.
const REQUESTS: &str = "sms_sdk_serve_requests_total";

/// The verifier of each provider whose secret is set.
#[derive(Clone, Default)]
pub(crate) struct Verifiers(Vec<(Provider, &'static str, Arc<dyn WebhookVerifier>)>);

impl Verifiers {
    /// Adds `provider`'s verifier, built from the secret in `variable`.
    pub(crate) fn insert(&mut self, provider: Provider, variable: &'static str, verifier: Arc<dyn WebhookVerifier>) {
        self.0.push((provider, variable, verifier));
    }

    /// `provider`'s verifier, if its secret is set.
    pub(crate) fn get(&self, provider: Provider) -> Option<&Arc<dyn WebhookVerifier>> {
        self.0.iter().find(|(p, ..)| *p == provider).map(|(.., v)| v)
    }

    /// The variable `provider`'s verifier was built from, if it has one.
    pub(crate) fn variable(&self, provider: Provider) -> Option<&'static str> {
        self.0.iter().find(|(p, ..)| *p == provider).map(|(_, variable, _)| *variable)
    }

    /// Whether none is set.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How the signed URL is made.
#[derive(Debug, Clone)]
pub(crate) struct Signing {
    /// `--public-url`: scheme, host, port and path prefix.
    pub(crate) public_url: Option<String>,
    /// `--trust-forwarded`.
    pub(crate) trust_forwarded: bool,
}

impl Signing {
    /// The URL the provider signed: `--public-url` plus the path and query; else the forwarded
    /// scheme and host when trusted; else `http://` and the Host header.
    fn url(&self, headers: &HeaderMap, path_and_query: &str) -> String {
        if let Some(public) = &self.public_url {
            return format!("{}{path_and_query}", public.trim_end_matches('/'));
        }
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
        let host = text(header::HOST.as_str()).filter(|h| !h.is_empty()).unwrap_or("localhost");
        if self.trust_forwarded {
            let first =
                |name: &str| text(name).and_then(|v| v.split(',').next()).map(str::trim).filter(|v| !v.is_empty());
            let forwarded = text("forwarded").map(forwarded_pairs).unwrap_or_default();
            let proto = first("x-forwarded-proto").or(forwarded.0.as_deref()).unwrap_or("http");
            let host = first("x-forwarded-host").or(forwarded.1.as_deref()).unwrap_or(host);
            return format!("{proto}://{host}{path_and_query}");
        }
        format!("http://{host}{path_and_query}")
    }
}

/// The `proto` and `host` of the first element of a `Forwarded` header (RFC 7239).
fn forwarded_pairs(value: &str) -> (Option<String>, Option<String>) {
    let first = value.split(',').next().unwrap_or_default();
    let (mut proto, mut host) = (None, None);
    for pair in first.split(';') {
        let Some((name, value)) = pair.split_once('=') else { continue };
        let value = value.trim().trim_matches('"').to_owned();
        match name.trim().to_ascii_lowercase().as_str() {
            "proto" => proto = Some(value),
            "host" => host = Some(value),
            _ => {}
        }
    }
    (proto.filter(|p| p == "http" || p == "https"), host.filter(|h| !h.is_empty()))
}

/// What every request shares.
#[derive(Clone)]
pub(crate) struct App(Arc<Inner>);

struct Inner {
    verifiers: Verifiers,
    pipeline: Pipeline,
    store: Arc<dyn Store>,
    signing: Signing,
    slots: Arc<Semaphore>,
    log: Option<mpsc::Sender<String>>,
    metrics: Option<PrometheusHandle>,
}

impl App {
    /// The shared state of the routes.
    pub(crate) fn new(
        verifiers: Verifiers,
        pipeline: Pipeline,
        store: Arc<dyn Store>,
        signing: Signing,
        max_concurrency: usize,
        log: Option<mpsc::Sender<String>>,
    ) -> Self {
        let metrics = metrics_handle();
        // Every mounted route's counter from the start, so `/metrics` is never empty.
        for (provider, ..) in &verifiers.0 {
            metrics::counter!(REQUESTS, "provider" => provider.as_str(), "status" => "200").increment(0);
        }
        Self(Arc::new(Inner {
            verifiers,
            pipeline,
            store,
            signing,
            slots: Arc::new(Semaphore::new(max_concurrency)),
            log,
            metrics,
        }))
    }

    /// Logs one line (dropped, never waited for, when the log is behind).
    fn log(&self, line: String) {
        if let Some(log) = &self.0.log {
            let _ = log.try_send(line);
        }
    }
}

/// The process's Prometheus recorder, installed the first time (a second `serve` in one
/// process, as in tests, shares it); `None` when another recorder is installed.
fn metrics_handle() -> Option<PrometheusHandle> {
    static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();
    HANDLE.get_or_init(|| metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder().ok()).clone()
}

/// The routes: a webhook route per provider (404 for a provider without a secret), health,
/// readiness and metrics.
pub(crate) fn router(app: App) -> Router {
    Router::new()
        .route("/webhooks/{provider}", post(webhook))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics))
        .with_state(app)
}

/// 200 when the store answers within 2 s, else 503.
async fn ready(State(app): State<App>) -> Response {
    match tokio::time::timeout(READY_TIMEOUT, app.0.store.get("sms-sdk-serve:readyz")).await {
        Ok(Ok(_)) => (StatusCode::OK, "ready\n").into_response(),
        Ok(Err(_)) | Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "store unavailable\n").into_response(),
    }
}

/// The Prometheus text of the library's metrics and the server's.
async fn metrics(State(app): State<App>) -> Response {
    match &app.0.metrics {
        Some(handle) => ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], handle.render()).into_response(),
        None => (StatusCode::SERVICE_UNAVAILABLE, "metrics are recorded elsewhere in this process\n").into_response(),
    }
}

/// An answer: the status and a one-line text body.
fn answer(status: StatusCode, text: &str) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], format!("{text}\n")).into_response()
}

/// `POST /webhooks/{provider}`: within the concurrency limit and the deadline, read, verify
/// and handle the webhook.
async fn webhook(State(app): State<App>, Path(name): Path<String>, request: Request) -> Response {
    let Some(provider) = Provider::named(&name) else { return answer(StatusCode::NOT_FOUND, "unknown provider") };
    let Some(verifier) = app.0.verifiers.get(provider).cloned() else {
        return answer(StatusCode::NOT_FOUND, "no webhook secret is set for this provider");
    };
    let Ok(_slot) = Arc::clone(&app.0.slots).try_acquire_owned() else {
        count(provider, StatusCode::SERVICE_UNAVAILABLE);
        app.log(format!("{name}: 503 busy (--max-concurrency reached)"));
        return (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "1")], "busy\n").into_response();
    };
    let mut pending = Pending { app: &app, provider, answered: false };
    let response =
        if let Ok(response) = tokio::time::timeout(DEADLINE, receive(&app, provider, &*verifier, request)).await {
            response
        } else {
            app.log(format!("{name}: 503 deadline ({} s) passed; the key is free again", DEADLINE.as_secs()));
            answer(StatusCode::SERVICE_UNAVAILABLE, "deadline")
        };
    pending.answered = true;
    count(provider, response.status());
    response
}

/// A webhook not answered yet: when its future is dropped first (the provider hung up, or its
/// timeout ran out), one log line and the `499` counter say so; its dedupe claim is freed.
struct Pending<'a> {
    app: &'a App,
    provider: Provider,
    answered: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.answered {
            count(self.provider, StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST));
            self.app.log(format!(
                "{}: the caller hung up before the answer (is its timeout shorter?); the key is free again",
                self.provider.as_str()
            ));
        }
    }
}

/// Counts a webhook's answer.
fn count(provider: Provider, status: StatusCode) {
    metrics::counter!(REQUESTS, "provider" => provider.as_str(), "status" => status.as_u16().to_string()).increment(1);
}

/// Reads, verifies and handles one webhook.
async fn receive(app: &App, provider: Provider, verifier: &dyn WebhookVerifier, request: Request) -> Response {
    let name = provider.as_str();
    let (parts, body) = request.into_parts();
    let timeout = parts.extensions.get::<BodyReadTimeout>().map_or(READ_TIMEOUT, |t| t.0);
    let body = match read(body, timeout).await {
        Ok(body) => body,
        Err(status) => {
            app.log(format!(
                "{name}: {} body {}",
                status.as_u16(),
                if status == StatusCode::PAYLOAD_TOO_LARGE { "too large" } else { "unreadable" }
            ));
            return answer(
                status,
                if status == StatusCode::PAYLOAD_TOO_LARGE { "body_too_large" } else { "body_unreadable" },
            );
        }
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let url = app.0.signing.url(&parts.headers, path);
    let request = WebhookRequest { method: parts.method.as_str(), url: &url, headers: &parts.headers, body: &body };
    // The AWS verifier fetches the SNS certificate the message names first (bounded, cached).
    let verified = match verifier.prepare(&request).await {
        Ok(()) => verifier.verify_all(&request),
        Err(error) => Err(error),
    };
    let events = match verified {
        Ok(events) => events,
        Err(error) => {
            let status = refusal(&error);
            app.log(format!("{name}: {} {}", status.as_u16(), error.reason().unwrap_or(error.code())));
            let mut refused = answer(status, error.reason().unwrap_or(error.code()));
            // Basic credentials may come only once challenged (Infobip, Bandwidth).
            if let (WebhookError::MissingSignature { .. }, Some(challenge)) = (&error, verifier.challenge()) {
                refused.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
            }
            return refused;
        }
    };
    if let Some(subscription) = events.first().and_then(sms_sdk::provider::aws::subscription) {
        return confirm(app, &subscription).await;
    }
    // Each event in order (Infobip and Bandwidth post several in one request). The first that
    // is not handled answers for the request, and the rest wait for the provider's redelivery,
    // in which the events handled now are duplicates.
    let mut handed_on = false;
    for event in &events {
        let summary = summary(event);
        match app.0.pipeline.handle(event, &url).await {
            Ok(Handled::HandedOn { settled, suppression }) => {
                let settled = settled.map(|key| format!("; settled key {key:?} as accepted")).unwrap_or_default();
                let listed =
                    suppression.map(|what| format!("; the number was {what} the suppression list")).unwrap_or_default();
                app.log(format!("{name} {summary}: 200 handed on{settled}{listed}"));
                handed_on = true;
            }
            Ok(Handled::Duplicate) => app.log(format!("{name} {summary}: 200 duplicate (handed on before)")),
            Ok(Handled::InFlight) => {
                app.log(format!("{name} {summary}: 409 in progress (another delivery is being handled)"));
                return answer(StatusCode::CONFLICT, "in_progress");
            }
            Err(failed) => {
                app.log(format!(
                    "{name} {summary}: 503 {} failed: {}; the key is free again",
                    failed.step, failed.reason
                ));
                return answer(StatusCode::SERVICE_UNAVAILABLE, &format!("{}_failed", failed.step.replace('-', "_")));
            }
        }
    }
    if handed_on { answer(StatusCode::OK, "ok") } else { answer(StatusCode::OK, "duplicate") }
}

/// Confirms a verified SNS subscription (`GET` its `SubscribeURL`, an `https` URL of SNS; 5 s):
/// 200 when SNS answered, else 503 so that SNS sends the confirmation again. The log names the
/// topic, never the URL (its token confirms the subscription).
async fn confirm(app: &App, subscription: &sms_sdk::provider::aws::Subscription) -> Response {
    let topic = &subscription.topic_arn;
    match subscription.confirm(&sms_sdk::HttpConfig::new()).await {
        Ok(()) => {
            app.log(format!("aws: 200 subscription to {topic} confirmed"));
            answer(StatusCode::OK, "subscription confirmed")
        }
        Err(error) => {
            app.log(format!("aws: 503 subscription to {topic} not confirmed: {error}"));
            answer(StatusCode::SERVICE_UNAVAILABLE, "subscription_not_confirmed")
        }
    }
}

/// 401 when not authentic, 413 when too large, 400 otherwise.
fn refusal(error: &WebhookError) -> StatusCode {
    StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::BAD_REQUEST)
}

/// The body, at most [`MAX_BODY`] bytes within `timeout`: 413 past the size, 400 when it
/// cannot be read in time.
async fn read(body: Body, timeout: Duration) -> Result<Vec<u8>, StatusCode> {
    let limited = http_body_util::Limited::new(body, MAX_BODY);
    match tokio::time::timeout(timeout, limited.collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes().to_vec()),
        Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => Err(StatusCode::PAYLOAD_TOO_LARGE),
        Ok(Err(_)) | Err(_) => Err(StatusCode::BAD_REQUEST),
    }
}

/// The event's type and masked number, for the log.
fn summary(event: &SmsEvent) -> String {
    let number = match &event.kind {
        EventKind::Received(message) => Some(format!("from {}", mask_phone_number(&message.from))),
        EventKind::OptedOut(message) | EventKind::OptedIn(message) | EventKind::Help(message) => {
            Some(format!("from {}", mask_phone_number(&message.from)))
        }
        EventKind::Queued(update)
        | EventKind::Sent(update)
        | EventKind::Delivered(update)
        | EventKind::Undelivered(update)
        | EventKind::Filtered(update) => update.to.as_deref().map(|to| format!("to {}", mask_phone_number(to))),
        // `EventKind` is non-exhaustive: a new kind names no number yet.
        EventKind::Unrecognized { .. } | _ => None,
    };
    match number {
        Some(number) => format!("{} {number}", event.type_name()),
        None => event.type_name().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn the_signed_url_is_the_public_url_plus_path_and_query() {
        let public = Signing { public_url: Some("https://hooks.example.com/sms/".into()), trust_forwarded: false };
        let seen = headers(&[("host", "10.0.0.5:8080"), ("x-forwarded-host", "evil.example")]);
        assert_eq!(public.url(&seen, "/webhooks/twilio?r=1"), "https://hooks.example.com/sms/webhooks/twilio?r=1");
        let plain = Signing { public_url: None, trust_forwarded: false };
        assert_eq!(plain.url(&seen, "/webhooks/twilio"), "http://10.0.0.5:8080/webhooks/twilio", "forwarded ignored");
        let trusted = Signing { public_url: None, trust_forwarded: true };
        let proxied =
            headers(&[("host", "10.0.0.5"), ("x-forwarded-proto", "https"), ("x-forwarded-host", "h.example, x")]);
        assert_eq!(trusted.url(&proxied, "/webhooks/plivo"), "https://h.example/webhooks/plivo");
        let rfc =
            headers(&[("host", "10.0.0.5"), ("forwarded", r#"for=1.2.3.4;proto=https;host="h2.example", for=5"#)]);
        assert_eq!(trusted.url(&rfc, "/w"), "https://h2.example/w");
        assert_eq!(trusted.url(&headers(&[]), "/w"), "http://localhost/w");
    }
}
