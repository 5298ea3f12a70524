//! What the emulator reports about its work, for a request log: one [`Served`] per request it
//! answers and per webhook it posts, given to the function set with
//! [`EmulatorBuilder::observe`](crate::EmulatorBuilder::observe).
//!
//! Events are safe to log: recipients are masked, webhook URLs have their credentials hidden,
//! and no body, credential or signature is ever in them.

use std::fmt;
use std::sync::Arc;

use sms_sdk::redact::{mask_phone_number, redact_url};

use crate::magic::Fault;
use crate::model::Provider;

/// One thing the emulator did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Served {
    /// It answered (or faulted) a request.
    Request(ServedRequest),
    /// It posted a webhook (a status step or an inbound message), after every attempt.
    Webhook(WebhookPosted),
}

/// What kind of request was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// A provider's send.
    Send,
    /// A provider's message fetch.
    Lookup,
    /// A provider's message list (Twilio, Sinch, Infobip's logs, Bandwidth).
    List,
    /// Bandwidth's OAuth 2.0 token request.
    Token,
    /// `POST /_emulator/inbound`.
    Inbound,
    /// `GET /_emulator/messages`.
    Inspect,
    /// `DELETE /_emulator/messages`.
    Clear,
    /// `GET /_emulator/keys`.
    Keys,
    /// A path the emulator does not serve.
    NoRoute,
}

impl Operation {
    /// `send`, `lookup`, `list`, `token`, `inbound`, `inspect`, `clear`, `keys` or `no_route`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Send => "send",
            Self::Lookup => "lookup",
            Self::List => "list",
            Self::Token => "token",
            Self::Inbound => "inbound",
            Self::Inspect => "inspect",
            Self::Clear => "clear",
            Self::Keys => "keys",
            Self::NoRoute => "no_route",
        }
    }
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// A send was accepted: a message was created.
    Accepted,
    /// A send was refused in a category: `recipient`, `sender`, `account`, `compliance`, `auth`
    /// (wrong credentials) or `request` (a missing, invalid or oversized field or body).
    Rejected(&'static str),
    /// A magic recipient's fault.
    Fault(Fault),
    /// Any other answer (lookups, listings, the emulator's own routes): see the status.
    Answered,
}

/// A request the emulator served.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServedRequest {
    /// The provider API called, `None` for the emulator's own routes.
    pub provider: Option<Provider>,
    /// What was asked.
    pub operation: Operation,
    /// The recipient, masked (`+1********23`), when the request named one.
    pub to: Option<String>,
    /// The HTTP status answered, `None` when the connection was held, reset or dropped.
    pub status: Option<u16>,
    /// How it ended.
    pub outcome: Outcome,
}

impl ServedRequest {
    /// An event; `to` is masked here.
    pub(crate) fn new(
        provider: Option<Provider>,
        operation: Operation,
        to: Option<&str>,
        status: Option<u16>,
        outcome: Outcome,
    ) -> Self {
        Self { provider, operation, to: to.map(mask_phone_number), status, outcome }
    }
}

/// A webhook the emulator posted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebhookPosted {
    /// The provider whose webhook it is.
    pub provider: Provider,
    /// The provider's event or status name (`sent`, `message.finalized`, `inbound`, …).
    pub event: String,
    /// Where it went, credentials hidden.
    pub url: String,
    /// The status of the attempt that was answered 2xx, or why it was not delivered
    /// (`after 3 attempt(s): HTTP 500`).
    pub result: Result<u16, String>,
}

impl WebhookPosted {
    /// An event; `url` has its credentials hidden here.
    pub(crate) fn new(provider: Provider, event: &str, url: &str, result: Result<u16, String>) -> Self {
        Self { provider, event: event.to_owned(), url: redact_url(url), result }
    }
}

/// One log line: `twilio send to=+1********23 201 accepted`,
/// `twilio send to=+1********03 fault=reset`, `twilio webhook delivered -> URL 204`.
impl fmt::Display for Served {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Request(request) => {
                let provider = request.provider.map_or("emulator", Provider::name);
                write!(f, "{provider} {}", request.operation.name())?;
                if let Some(to) = &request.to {
                    write!(f, " to={to}")?;
                }
                if let Some(status) = request.status {
                    write!(f, " {status}")?;
                }
                match request.outcome {
                    Outcome::Accepted => f.write_str(" accepted"),
                    Outcome::Rejected(category) => write!(f, " rejected category={category}"),
                    Outcome::Fault(fault) => write!(f, " fault={fault}"),
                    Outcome::Answered => Ok(()),
                }
            }
            Self::Webhook(hook) => {
                write!(f, "{} webhook {} -> {}", hook.provider, hook.event, hook.url)?;
                match &hook.result {
                    Ok(status) => write!(f, " {status}"),
                    Err(error) => write!(f, " failed {error}"),
                }
            }
        }
    }
}

type ObserveFn = dyn Fn(&Served) + Send + Sync;

/// The observer function, or none.
#[derive(Clone, Default)]
pub(crate) struct Observer(Option<Arc<ObserveFn>>);

impl Observer {
    /// An observer calling `observe`.
    pub(crate) fn new(observe: impl Fn(&Served) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(observe)))
    }

    /// Reports `event` (built only when someone observes).
    pub(crate) fn report(&self, event: impl FnOnce() -> Served) {
        if let Some(observe) = &self.0 {
            observe(&event());
        }
    }
}

impl fmt::Debug for Observer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Observer(set)" } else { "Observer(none)" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_mask_numbers_and_hide_url_credentials() {
        let request = ServedRequest::new(
            Some(Provider::Twilio),
            Operation::Send,
            Some("+14155550123"),
            Some(400),
            Outcome::Rejected("recipient"),
        );
        let line = Served::Request(request).to_string();
        assert!(line.starts_with("twilio send to=+1") && line.ends_with(" 400 rejected category=recipient"), "{line}");
        assert!(!line.contains("4155550123"), "{line}");
        let hook = WebhookPosted::new(
            Provider::Plivo,
            "sent",
            "http://user:pw@127.0.0.1:9/h",
            Err("after 3 attempt(s): HTTP 500".into()),
        );
        let line = Served::Webhook(hook).to_string();
        assert_eq!(line, "plivo webhook sent -> http://user:***@127.0.0.1:9/h failed after 3 attempt(s): HTTP 500");
        let fault = ServedRequest::new(None, Operation::Inspect, None, None, Outcome::Fault(Fault::Reset));
        assert_eq!(Served::Request(fault).to_string(), "emulator inspect fault=reset");
    }
}
