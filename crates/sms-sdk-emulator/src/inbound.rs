//! `POST /_emulator/inbound`: an incoming message, delivered as the provider's signed
//! inbound-message webhook.

use axum::response::Response;
use http::StatusCode;
use serde::Deserialize;
use serde_json::json;

use crate::model::Provider;
use crate::observe::Operation;
use crate::provider::{Inbound, with_plus};
use crate::respond::{error_response, json_response};
use crate::state::App;

/// `{provider, from, to, text, inbound_url?}`.
#[derive(Debug, Deserialize)]
struct InboundRequest {
    provider: String,
    from: String,
    to: String,
    text: String,
    #[serde(default)]
    inbound_url: Option<String>,
}

impl App {
    /// Posts the inbound webhook (retried like status webhooks) to the request's `inbound_url`,
    /// or else the provider's inbound URL (its own, or the one of every provider), and answers
    /// 202 with the message id it assigned and whether the webhook was answered 2xx; 409 when
    /// there is no inbound URL for the provider; 400 for a malformed request.
    pub(crate) async fn inbound(&self, body: &[u8]) -> Response {
        let (response, provider, to) = self.deliver_inbound(body).await;
        self.report(provider, Operation::Inbound, to.as_deref(), &response);
        response
    }

    /// [`App::inbound`]'s answer, with the provider and receiving number when the request named
    /// them.
    async fn deliver_inbound(&self, body: &[u8]) -> (Response, Option<Provider>, Option<String>) {
        let Ok(request) = serde_json::from_slice::<InboundRequest>(body) else {
            let message = "expected a JSON object {provider, from, to, text, inbound_url?}";
            return (error_response(StatusCode::BAD_REQUEST, message), None, None);
        };
        let to = Some(with_plus(&request.to));
        let provider: Provider = match request.provider.parse() {
            Ok(provider) => provider,
            Err(error) => return (error_response(StatusCode::BAD_REQUEST, &error.to_string()), None, to),
        };
        let configured = self.config.inbound_urls.of(provider).map(str::to_owned);
        let Some(url) = request.inbound_url.or(configured) else {
            let message = if self.config.inbound_urls.all().next().is_none() {
                "no inbound URL: start the emulator with one, or pass inbound_url in the request".to_owned()
            } else {
                format!(
                    "no inbound URL for {provider}: start the emulator with one for it (or for every provider), \
                     or pass inbound_url in the request"
                )
            };
            return (error_response(StatusCode::CONFLICT, &message), Some(provider), to);
        };
        let from = with_plus(&request.from);
        let inbound = Inbound {
            id: provider.new_id(),
            reply_to: self.store.last_to(provider, &from),
            from,
            to: with_plus(&request.to),
            text: request.text,
        };
        let hook = provider.inbound_webhook(&inbound, &url, self.signer());
        let mut answer = json!({"provider": provider, "id": inbound.id, "url": url, "delivered": false});
        let posted = self.shutdown.run_until_cancelled(self.poster.post(&hook)).await;
        if let Some(posted) = &posted {
            self.report_webhook(provider, &hook.event, &url, posted);
        }
        let fields = match posted {
            Some(Ok(status)) => json!({"delivered": true, "webhook_status": status}),
            Some(Err(failure)) => json!({"attempts": failure.attempts, "error": failure.error}),
            None => json!({"error": "the emulator is stopping"}),
        };
        if let (Some(answer), serde_json::Value::Object(fields)) = (answer.as_object_mut(), fields) {
            answer.extend(fields);
        }
        (json_response(StatusCode::ACCEPTED, &answer), Some(provider), to)
    }
}
