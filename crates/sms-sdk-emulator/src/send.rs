//! A send request, whatever the provider: authenticate, read, check, apply the magic recipient
//! table, record the entry, answer; then the status webhooks of a created message.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse as _, Response};
use http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use sms_sdk::message::is_e164;
use time::OffsetDateTime;

use crate::body::BodyError;
use crate::delivery::MAX_PENDING_STATUS;
use crate::magic::{self, Behavior, Reason};
use crate::model::{Provider, ReceivedMessage, Status, WebhookFailure};
use crate::observe::{Operation, Outcome, Served, ServedRequest, WebhookPosted};
use crate::provider::{AuthRequest, Denied, Failure, SendRequest, Step, with_plus};
use crate::respond::{closing, json_response_as};
use crate::state::App;

/// What the connection gets.
#[derive(Debug)]
pub(crate) enum Reply {
    /// An HTTP response.
    Respond(Response),
    /// Nothing, until the client gives up.
    Hold,
    /// A reset (RST) before any response.
    Reset,
    /// A close before any response.
    Drop,
}

impl Reply {
    /// The HTTP status answered, `None` when the connection gets none.
    pub(crate) fn status(&self) -> Option<u16> {
        match self {
            Self::Respond(response) => Some(response.status().as_u16()),
            Self::Hold | Self::Reset | Self::Drop => None,
        }
    }
}

/// Whether `from` looks like a sender: an E.164 number, a short code or number without its `+`
/// (3–15 digits), or an alphanumeric sender ID (1–11 letters, digits and spaces, one letter at
/// least).
fn plausible_sender(from: &str) -> bool {
    if from.starts_with('+') {
        return is_e164(from);
    }
    if from.bytes().all(|b| b.is_ascii_digit()) {
        return (3..=15).contains(&from.len());
    }
    (1..=11).contains(&from.chars().count())
        && from.chars().all(|c| c.is_ascii_alphanumeric() || c == ' ')
        && from.chars().any(|c| c.is_ascii_alphabetic())
}

/// What `provider` does with a request, in the order a provider checks: credentials, a readable
/// body, required fields, accepted values, well-formed numbers, then the magic recipient table.
fn decide(
    provider: Provider,
    authenticated: Result<(), Denied>,
    request: Option<&SendRequest>,
) -> Result<Behavior, Failure> {
    authenticated.map_err(Failure::Auth)?;
    let request = request.ok_or(Failure::Unreadable)?;
    if let Some(field) = request.missing() {
        return Err(Failure::Missing(field));
    }
    if let Some(name) = request.invalid {
        return Err(Failure::Invalid(name));
    }
    let to = with_plus(request.to.as_deref().unwrap_or_default());
    if !is_e164(&to) {
        return Err(Failure::Reject(Reason::InvalidNumber));
    }
    if !request.service_sender
        && !request.account_sender
        && !plausible_sender(request.from.as_deref().unwrap_or_default())
    {
        return Err(Failure::Reject(Reason::InvalidSender));
    }
    Ok(magic::behavior(&to, provider))
}

impl App {
    /// Handles a send request to `provider` (`account` is the path's account, if any; `uri` what
    /// the request was sent to): the reply, and how long to wait before giving it (the configured
    /// latency of this request).
    pub(crate) fn send(
        self: &Arc<Self>,
        provider: Provider,
        account: Option<&str>,
        headers: &HeaderMap,
        uri: &Uri,
        body: Result<&[u8], BodyError>,
    ) -> (Reply, Duration) {
        let mut entry = ReceivedMessage::new(provider, OffsetDateTime::now_utc());
        let body = match body {
            Ok(body) => body,
            Err(error) => {
                let failure = match error {
                    BodyError::TooLarge => Failure::TooLarge { limit: self.config.body_limit },
                    BodyError::Unreadable => Failure::Unreadable,
                };
                let delay = self.config.latency.of(&entry);
                let reply = Reply::Respond(self.refuse(entry, failure));
                self.report_send(provider, None, &reply, failure.outcome(provider));
                return (reply, delay);
            }
        };
        let request = provider.parse(body);
        if let Some(request) = &request {
            entry.to = request.to.as_deref().map(with_plus);
            entry.from.clone_from(&request.from);
            entry.service_sender = request.service_sender;
            entry.body.clone_from(&request.body);
            entry.media_urls.clone_from(&request.media_urls);
            entry.callback_url.clone_from(&request.callback_url);
            entry.client_ref.clone_from(&request.client_ref);
            entry.context.clone_from(&request.context);
            entry.message_type.clone_from(&request.message_type);
            entry.chosen_id.clone_from(&request.message_id);
        }
        let delay = self.config.latency.of(&entry);
        let authenticated = provider.authenticate(&AuthRequest {
            headers,
            account,
            method: "POST",
            path: uri.path(),
            query: uri.query().unwrap_or_default(),
            body,
            keys: self.keys,
            now: entry.received_at,
        });
        let to = entry.to.clone();
        let (reply, outcome) = self.handle(entry, authenticated, request.as_ref());
        self.report_send(provider, to.as_deref(), &reply, outcome);
        (reply, delay)
    }

    /// Tells the observer how a send request ended.
    fn report_send(&self, provider: Provider, to: Option<&str>, reply: &Reply, outcome: Outcome) {
        let status = reply.status();
        self.config
            .observer
            .report(|| Served::Request(ServedRequest::new(Some(provider), Operation::Send, to, status, outcome)));
    }

    /// Decides and records what a readable request gets, and how it ended.
    fn handle(
        self: &Arc<Self>,
        entry: ReceivedMessage,
        authenticated: Result<(), Denied>,
        request: Option<&SendRequest>,
    ) -> (Reply, Outcome) {
        let provider = entry.provider;
        let behavior = match decide(provider, authenticated, request) {
            Ok(behavior) => behavior,
            Err(failure) => return (Reply::Respond(self.refuse(entry, failure)), failure.outcome(provider)),
        };
        let reply = self.act(entry, behavior);
        let outcome = if let Behavior::Reject(reason) = behavior {
            Outcome::Rejected(reason.category(provider).as_str())
        } else if behavior == Behavior::RateLimitOnce && reply.status().is_some_and(|s| s < 300) {
            // The second request of a rate-limited-once recipient is accepted.
            Outcome::Accepted
        } else {
            behavior.fault().map_or(Outcome::Accepted, Outcome::Fault)
        };
        (reply, outcome)
    }

    /// Does what `behavior` says.
    fn act(self: &Arc<Self>, mut entry: ReceivedMessage, behavior: Behavior) -> Reply {
        let provider = entry.provider;
        match behavior {
            Behavior::Deliver => self.accept(entry, Step::Delivered),
            Behavior::Undeliver => self.accept(entry, Step::Undelivered),
            Behavior::Reject(reason) => Reply::Respond(self.refuse(entry, Failure::Reject(reason))),
            Behavior::ServerError => Reply::Respond(self.refuse(entry, Failure::ServerError)),
            Behavior::RateLimitAlways => Reply::Respond(self.refuse(entry, Failure::RateLimited)),
            Behavior::RateLimitOnce => {
                let key = (provider, entry.to.clone().unwrap_or_default(), entry.body.clone().unwrap_or_default());
                if self.store.limit_once(key) {
                    Reply::Respond(self.refuse(entry, Failure::RateLimited))
                } else {
                    self.accept(entry, Step::Delivered)
                }
            }
            Behavior::Hold => self.unanswered(entry, Status::NoResponse, Reply::Hold),
            Behavior::Reset => self.unanswered(entry, Status::ConnectionReset, Reply::Reset),
            Behavior::Bare429 => {
                entry.status = Status::RateLimited;
                entry.http_status = Some(429);
                self.store.record(entry);
                let text = [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"))];
                Reply::Respond((StatusCode::TOO_MANY_REQUESTS, text, "Too Many Requests").into_response())
            }
            Behavior::Unreadable => {
                let status = provider.success_status();
                entry.status = Status::UnreadableResponse;
                entry.http_status = Some(status.as_u16());
                self.store.record(entry);
                let json = [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))];
                Reply::Respond((status, json, Body::from("{\"unreadab")).into_response())
            }
            Behavior::CreateThenDrop => {
                self.create(entry, Step::Delivered);
                Reply::Drop
            }
        }
    }

    /// Records a refusal and answers it in the provider's words.
    fn refuse(&self, mut entry: ReceivedMessage, failure: Failure) -> Response {
        let reply = match failure {
            Failure::Reject(reason) => entry.provider.rejection(reason, &entry),
            Failure::Auth(_)
            | Failure::Unreadable
            | Failure::TooLarge { .. }
            | Failure::Missing(_)
            | Failure::Invalid(_)
            | Failure::RateLimited
            | Failure::ServerError
            | Failure::NotFound => entry.provider.error(failure),
        };
        // AWS's rate limit carries no `Retry-After`; every other provider's says one second.
        let retry_after =
            entry.provider.retry_after().and_then(|wait| HeaderValue::from_str(&wait.as_secs().to_string()).ok());
        entry.status = match failure {
            Failure::RateLimited => Status::RateLimited,
            Failure::ServerError => Status::ServerError,
            Failure::Auth(_)
            | Failure::Unreadable
            | Failure::TooLarge { .. }
            | Failure::Missing(_)
            | Failure::Invalid(_)
            | Failure::Reject(_)
            | Failure::NotFound => Status::Rejected,
        };
        entry.http_status = Some(reply.status.as_u16());
        entry.error_code.clone_from(&reply.code);
        self.store.record(entry);
        let mut response = reply.response();
        match failure {
            Failure::RateLimited => {
                if let Some(value) = retry_after {
                    response.headers_mut().insert(header::RETRY_AFTER, value);
                }
                response
            }
            Failure::TooLarge { .. } => closing(response),
            Failure::Auth(_)
            | Failure::Unreadable
            | Failure::Missing(_)
            | Failure::Invalid(_)
            | Failure::Reject(_)
            | Failure::ServerError
            | Failure::NotFound => response,
        }
    }

    /// Records a request that gets no response.
    fn unanswered(&self, mut entry: ReceivedMessage, status: Status, reply: Reply) -> Reply {
        entry.status = status;
        self.store.record(entry);
        reply
    }

    /// Creates the message and answers the provider's success.
    fn accept(self: &Arc<Self>, mut entry: ReceivedMessage, last: Step) -> Reply {
        let status = entry.provider.success_status();
        entry.http_status = Some(status.as_u16());
        let message = self.create(entry, last);
        let content_type = message.provider.success_content_type();
        Reply::Respond(json_response_as(status, content_type, &message.provider.accepted(&message)))
    }

    /// Creates the message (an id, status `queued`) and schedules its status steps.
    fn create(self: &Arc<Self>, mut entry: ReceivedMessage, last: Step) -> ReceivedMessage {
        let id = entry.chosen_id.clone().unwrap_or_else(|| entry.provider.new_id());
        entry.id = Some(id.clone());
        entry.status = Status::Queued;
        self.store.record(entry.clone());
        self.schedule_status(entry.provider, id, last);
        entry
    }

    /// `sent` after one status delay, then `last` after another, each posted (signed) to the
    /// message's callback URL or else the provider's webhook URL (its own, or the one of every
    /// provider).
    fn schedule_status(self: &Arc<Self>, provider: Provider, id: String, last: Step) {
        let Ok(slot) = Arc::clone(&self.status_slots).try_acquire_owned() else {
            self.skip_status(provider, &id, last);
            return;
        };
        let app = Arc::clone(self);
        let epoch = self.store.epoch();
        let start = tokio::time::Instant::now();
        let steps = async move {
            for (step, after) in [Step::Sent, last].into_iter().zip(1u32..) {
                tokio::time::sleep_until(start + app.config.status_delay.saturating_mul(after)).await;
                let Some(message) = app.store.update(provider, &id, |m| m.status = step.status()) else { return };
                let Some(url) = app.config.status_url(provider, message.callback_url.as_deref()) else {
                    continue;
                };
                let hook = provider.status_webhook(&message, step, &url, app.signer());
                let posted = app.poster.post(&hook).await;
                app.report_webhook(provider, &hook.event, &url, &posted);
                if let Err(failure) = posted {
                    app.store.update(provider, &id, |m| m.webhook_failures.push(failure));
                }
            }
        };
        tokio::spawn(async move {
            epoch.run_until_cancelled(steps).await;
            drop(slot);
        });
    }

    /// Tells the observer how a webhook to `url` ended.
    pub(crate) fn report_webhook(
        &self,
        provider: Provider,
        event: &str,
        url: &str,
        posted: &Result<u16, WebhookFailure>,
    ) {
        self.config.observer.report(|| {
            let result = match posted {
                Ok(status) => Ok(*status),
                Err(failure) => Err(format!("after {} attempt(s): {}", failure.attempts, failure.error)),
            };
            Served::Webhook(WebhookPosted::new(provider, event, url, result))
        });
    }

    /// With [`MAX_PENDING_STATUS`] sequences already pending, a new message goes straight to its
    /// last status, and its webhooks are recorded as not posted.
    fn skip_status(&self, provider: Provider, id: &str, last: Step) {
        self.store.update(provider, id, |message| {
            message.status = last.status();
            if let Some(url) = self.config.status_url(provider, message.callback_url.as_deref()) {
                message.webhook_failures.push(WebhookFailure {
                    url,
                    event: "status".to_owned(),
                    attempts: 0,
                    error: format!("not posted: {MAX_PENDING_STATUS} status sequences were already pending"),
                });
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Field;

    fn request(to: &str, from: &str) -> SendRequest {
        SendRequest { to: Some(to.into()), from: Some(from.into()), body: Some("hi".into()), ..SendRequest::default() }
    }

    #[test]
    fn credentials_are_checked_before_anything_else() {
        let denied = Err(Denied::Credentials);
        assert_eq!(decide(Provider::Twilio, denied, None), Err(Failure::Auth(Denied::Credentials)));
        assert_eq!(decide(Provider::Twilio, Ok(()), None), Err(Failure::Unreadable));
        let no_to = SendRequest { to: None, ..request("+1", "+2") };
        assert_eq!(decide(Provider::Twilio, Ok(()), Some(&no_to)), Err(Failure::Missing(Field::To)));
    }

    #[test]
    fn malformed_numbers_are_rejected_like_the_magic_ones() {
        assert_eq!(
            decide(Provider::Twilio, Ok(()), Some(&request("not-a-number", "+15005550006"))),
            Err(Failure::Reject(Reason::InvalidNumber))
        );
        assert_eq!(
            decide(Provider::Twilio, Ok(()), Some(&request("+14155550123", "+0"))),
            Err(Failure::Reject(Reason::InvalidSender))
        );
        assert_eq!(decide(Provider::Twilio, Ok(()), Some(&request("14155550123", "ACME"))), Ok(Behavior::Deliver));
        assert_eq!(decide(Provider::Twilio, Ok(()), Some(&request(magic::HOLD, "15005550006"))), Ok(Behavior::Hold));
    }

    #[test]
    fn senders() {
        for ok in ["+15005550006", "15005550006", "12345", "ACME", "My Shop 1"] {
            assert!(plausible_sender(ok), "{ok}");
        }
        for bad in ["+1", "+abc", "12", "A very long sender id", "ACME!", "1234567890123456"] {
            assert!(!plausible_sender(bad), "{bad}");
        }
    }
}
