//! axum integration (feature `axum`): an extractor that verifies the webhook before the handler
//! sees anything, and answers 401 (not authentic), 400 (malformed) or 413 (too large) itself.
//!
//! ```no_run
//! # #[cfg(feature = "twilio")]
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use axum::{Router, extract::FromRef, http::StatusCode, routing::post};
//! use sms_sdk::TwilioWebhook;
//! use sms_sdk::webhook::axum::Verified;
//!
//! #[derive(Clone, FromRef)]
//! struct Hooks {
//!     twilio: TwilioWebhook,
//! }
//!
//! async fn twilio(Verified(event, ..): Verified<TwilioWebhook>) -> StatusCode {
//!     println!("{} ({})", event.type_name(), event.dedupe_key);
//!     StatusCode::NO_CONTENT
//! }
//!
//! let hooks = Hooks { twilio: TwilioWebhook::new("auth-token")?.public_url("https://example.com/sms/twilio") };
//! let app: Router = Router::new().route("/sms/twilio", post(twilio)).with_state(hooks);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```

use std::marker::PhantomData;

use axum::extract::{FromRef, FromRequest, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// A verified webhook event, extracted with the verifier `V` taken from the router state.
///
/// The URL the verifier sees is `http://{Host}{path and query}`: configure the verifier with
/// the public URL (or trust your proxy's forwarded headers) when the provider calls another one.
#[derive(Debug)]
pub struct Verified<V>(pub SmsEvent, pub PhantomData<V>);

/// The response of a refused webhook: 401 for authentication failures, 413 for an oversized
/// body, 400 for anything else. The body is a small JSON object with the code and reason.
#[derive(Debug)]
pub struct WebhookRejection(pub WebhookError);

impl IntoResponse for WebhookRejection {
    fn into_response(self) -> Response {
        let status = if self.0.is_authentication() {
            StatusCode::UNAUTHORIZED
        } else if let WebhookError::BodyTooLarge { .. } = self.0 {
            StatusCode::PAYLOAD_TOO_LARGE
        } else {
            StatusCode::BAD_REQUEST
        };
        let body = serde_json::json!({"code": self.0.code(), "reason": self.0.reason(), "provider": self.0.provider()});
        (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
    }
}

impl<S, V> FromRequest<S> for Verified<V>
where
    S: Send + Sync,
    V: WebhookVerifier + FromRef<S> + 'static,
{
    type Rejection = WebhookRejection;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let verifier = V::from_ref(state);
        let (parts, body) = request.into_parts();
        let limit = verifier.body_limit();
        let body = axum::body::to_bytes(body, limit)
            .await
            .map_err(|_| WebhookRejection(WebhookError::BodyTooLarge { provider: verifier.provider(), limit }))?;
        let host = parts.headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
        let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
        let url = format!("http://{host}{path}");
        let request = WebhookRequest { method: parts.method.as_str(), url: &url, headers: &parts.headers, body: &body };
        verifier.verify(&request).map(|event| Self(event, PhantomData)).map_err(WebhookRejection)
    }
}
