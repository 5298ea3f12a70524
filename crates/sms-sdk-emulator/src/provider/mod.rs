//! The provider dialects. Each module reads its provider's send request and writes its
//! provider's answers and webhooks; this module holds the shapes they share and dispatches on
//! [`Provider`], so the send logic in `send.rs` is written once.

mod aws;
mod bandwidth;
mod infobip;
mod plivo;
mod sinch;
mod telnyx;
mod twilio;
mod vonage;
mod wire;

pub(crate) use self::aws::{
    is_send_text_message as aws_is_send_text_message, unknown_operation as aws_unknown_operation,
};
pub(crate) use self::bandwidth::{list as bandwidth_list, token as bandwidth_token};
pub(crate) use self::infobip::logs as infobip_logs;
pub(crate) use self::sinch::list as sinch_list;
pub(crate) use self::twilio::list as twilio_list;
pub(crate) use self::wire::with_plus;

use std::collections::BTreeMap;

use axum::response::Response;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde_json::Value;
use time::OffsetDateTime;

use crate::keys::Keys;
use crate::magic::{Fault, Reason};
use crate::model::{Provider, ReceivedMessage, Status};
use crate::observe::Outcome;
use crate::respond::{JSON, json_response_as};

/// A send request in one shape, whatever the provider calls its fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SendRequest {
    /// The recipient, as sent.
    pub(crate) to: Option<String>,
    /// The sender, as sent.
    pub(crate) from: Option<String>,
    /// True when the sender is a messaging service, profile, powerpack or AWS pool (not a
    /// number).
    pub(crate) service_sender: bool,
    /// True when the request names no sender and the provider sends from one of the account's
    /// (AWS without an `OriginationIdentity`): no sender is then missing.
    pub(crate) account_sender: bool,
    /// The text.
    pub(crate) body: Option<String>,
    /// The media URLs.
    pub(crate) media_urls: Vec<String>,
    /// The message's status callback URL.
    pub(crate) callback_url: Option<String>,
    /// Vonage's `client_ref`, Sinch's `client_reference`, Infobip's `callbackData` or
    /// Bandwidth's `tag`, echoed in the message's status webhooks.
    pub(crate) client_ref: Option<String>,
    /// AWS's `Context` map, echoed in the message's delivery events.
    pub(crate) context: Option<BTreeMap<String, String>>,
    /// AWS's `MessageType`, echoed in the message's delivery events.
    pub(crate) message_type: Option<String>,
    /// The message id the request chose (Infobip's `destinations[0].messageId`): the created
    /// message's id.
    pub(crate) message_id: Option<String>,
    /// A parameter whose value the provider does not accept (Vonage `channel`, …).
    pub(crate) invalid: Option<&'static str>,
}

/// A required field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// The recipient.
    To,
    /// The sender.
    From,
    /// The text (or media).
    Body,
}

impl SendRequest {
    /// The first missing required field: the recipient, the sender, then a text or media.
    pub(crate) fn missing(&self) -> Option<Field> {
        let empty = |value: &Option<String>| value.as_deref().is_none_or(str::is_empty);
        if empty(&self.to) {
            Some(Field::To)
        } else if empty(&self.from) && !self.account_sender {
            Some(Field::From)
        } else if empty(&self.body) && self.media_urls.is_empty() {
            Some(Field::Body)
        } else {
            None
        }
    }
}

/// Why a request's credentials are refused. Every provider but AWS answers each the same way;
/// AWS names what is wrong with a Signature Version 4 signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Denied {
    /// Wrong or missing credentials (all a provider other than AWS tells).
    Credentials,
    /// No `Authorization` header at all.
    Missing,
    /// An `Authorization` header (or `X-Amz-Date`) that is not a complete signature: why.
    Incomplete(&'static str),
    /// An access key id (or session token) the account does not have.
    UnknownKey,
    /// A signature that does not match the request, is scoped elsewhere, or whose `X-Amz-Date`
    /// is too far from now: why.
    Signature(&'static str),
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Wrong or missing credentials.
    Auth(Denied),
    /// The body cannot be read at all.
    Unreadable,
    /// The body is larger than the emulator's limit (`limit` bytes).
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A required field is missing.
    Missing(Field),
    /// A parameter has a value the provider does not accept.
    Invalid(&'static str),
    /// A magic rejection (or a malformed number).
    Reject(Reason),
    /// The provider's documented rate limit.
    RateLimited,
    /// HTTP 500 (503 at Bandwidth, whose 500 with its own body the library reads as a
    /// rejection).
    ServerError,
    /// No such message.
    NotFound,
}

impl Failure {
    /// How a send to `provider` refused for this ends, for the request log: the category the
    /// library gives the provider's answer.
    pub(crate) fn outcome(self, provider: Provider) -> Outcome {
        match self {
            Self::Auth(_) => Outcome::Rejected("auth"),
            // Bandwidth's validation errors name the field, and the library reads the recipient,
            // the sender and the application from it.
            Self::Missing(field) if provider == Provider::Bandwidth => {
                Outcome::Rejected(bandwidth::field_category(bandwidth::field_name(field)))
            }
            Self::Invalid(name) if provider == Provider::Bandwidth => {
                Outcome::Rejected(bandwidth::field_category(name))
            }
            Self::Unreadable | Self::TooLarge { .. } | Self::NotFound | Self::Missing(_) | Self::Invalid(_) => {
                Outcome::Rejected("request")
            }
            Self::Reject(reason) => Outcome::Rejected(reason.category(provider).as_str()),
            Self::RateLimited => Outcome::Fault(Fault::RateLimited),
            Self::ServerError => Outcome::Fault(Fault::Http500),
        }
    }
}

/// A refusal in the provider's own words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ErrorReply {
    /// The HTTP status.
    pub(crate) status: StatusCode,
    /// The provider's error code, when the body carries one.
    pub(crate) code: Option<String>,
    /// The JSON error body.
    pub(crate) body: Value,
    /// The content type the provider answers errors with.
    pub(crate) content_type: &'static str,
    /// Headers the provider adds to its errors (AWS's `x-amzn-ErrorType` and request id).
    pub(crate) headers: Vec<(&'static str, String)>,
}

impl ErrorReply {
    /// The HTTP response.
    pub(crate) fn response(&self) -> Response {
        let mut response = json_response_as(self.status, self.content_type, &self.body);
        for (name, value) in &self.headers {
            if let Ok(value) = HeaderValue::from_str(value) {
                response.headers_mut().insert(HeaderName::from_static(name), value);
            }
        }
        response
    }
}

/// A step of the status sequence after acceptance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Handed to the carrier.
    Sent,
    /// Delivered to the handset.
    Delivered,
    /// Not delivered (an error the library maps to `undelivered`, not `filtered`).
    Undelivered,
}

impl Step {
    /// The inspection status after this step.
    pub(crate) const fn status(self) -> Status {
        match self {
            Self::Sent => Status::Sent,
            Self::Delivered => Status::Delivered,
            Self::Undelivered => Status::Undelivered,
        }
    }
}

/// An injected inbound message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inbound {
    /// The id the emulator assigned.
    pub(crate) id: String,
    /// The sender (E.164).
    pub(crate) from: String,
    /// The receiving number (E.164).
    pub(crate) to: String,
    /// The text.
    pub(crate) text: String,
    /// The id of the newest message of the provider to the sender, the one it answers (AWS's
    /// `previousPublishedMessageId`).
    pub(crate) reply_to: Option<String>,
}

/// A webhook to post, already signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Webhook {
    /// Where to post it.
    pub(crate) url: String,
    /// The provider's event or status name (for failure records).
    pub(crate) event: String,
    /// `application/json` or `application/x-www-form-urlencoded`.
    pub(crate) content_type: &'static str,
    /// Signature headers.
    pub(crate) headers: Vec<(&'static str, String)>,
    /// The exact body that was signed.
    pub(crate) body: Vec<u8>,
}

/// What signing needs: the keys and the time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signer<'a> {
    /// The key material.
    pub(crate) keys: &'a Keys,
    /// Now.
    pub(crate) now: OffsetDateTime,
}

/// What authentication looks at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AuthRequest<'a> {
    /// The request headers.
    pub(crate) headers: &'a HeaderMap,
    /// The account in the path (Twilio, Plivo, Sinch's service plan).
    pub(crate) account: Option<&'a str>,
    /// The method (`POST`, `GET`), as AWS signs it.
    pub(crate) method: &'a str,
    /// The path, as AWS signs it.
    pub(crate) path: &'a str,
    /// The raw query (empty for none), as AWS signs it.
    pub(crate) query: &'a str,
    /// The exact body, whose SHA-256 AWS signs (empty for a lookup).
    pub(crate) body: &'a [u8],
    /// The key material.
    pub(crate) keys: &'a Keys,
    /// Now.
    pub(crate) now: OffsetDateTime,
}

impl Provider {
    /// Whether the request carries this provider's fixed test credentials, and if not, why.
    pub(crate) fn authenticate(self, request: &AuthRequest<'_>) -> Result<(), Denied> {
        let fixed = match self {
            Self::Twilio => twilio::authenticate(request),
            Self::Telnyx => telnyx::authenticate(request),
            Self::Plivo => plivo::authenticate(request),
            Self::Vonage => vonage::authenticate(request),
            Self::Sinch => sinch::authenticate(request),
            Self::Aws => return aws::authenticate(request),
            Self::Infobip => infobip::authenticate(request),
            Self::Bandwidth => bandwidth::authenticate(request),
        };
        if fixed { Ok(()) } else { Err(Denied::Credentials) }
    }

    /// Reads a send request; `None` when the body cannot be read at all.
    pub(crate) fn parse(self, body: &[u8]) -> Option<SendRequest> {
        match self {
            Self::Twilio => Some(twilio::parse(body)),
            Self::Telnyx => telnyx::parse(body),
            Self::Plivo => plivo::parse(body),
            Self::Vonage => vonage::parse(body),
            Self::Sinch => sinch::parse(body),
            Self::Aws => aws::parse(body),
            Self::Infobip => infobip::parse(body),
            Self::Bandwidth => bandwidth::parse(body),
        }
    }

    /// A new message id in the provider's format.
    pub(crate) fn new_id(self) -> String {
        match self {
            Self::Twilio => format!("SM{}", new_uuid().simple()),
            Self::Telnyx | Self::Plivo | Self::Vonage | Self::Aws | Self::Infobip => new_uuid().to_string(),
            Self::Sinch => sinch::new_id(),
            Self::Bandwidth => bandwidth::new_id(),
        }
    }

    /// The HTTP status of an accepted send.
    pub(crate) const fn success_status(self) -> StatusCode {
        match self {
            Self::Twilio => StatusCode::CREATED,
            Self::Telnyx | Self::Aws | Self::Infobip => StatusCode::OK,
            Self::Plivo | Self::Vonage | Self::Bandwidth => StatusCode::ACCEPTED,
            Self::Sinch => sinch::success_status(),
        }
    }

    /// The content type of an accepted send's body.
    pub(crate) const fn success_content_type(self) -> &'static str {
        match self {
            Self::Twilio
            | Self::Telnyx
            | Self::Plivo
            | Self::Vonage
            | Self::Sinch
            | Self::Infobip
            | Self::Bandwidth => JSON,
            Self::Aws => aws::CONTENT_TYPE,
        }
    }

    /// `response` with what the provider adds to every answer of its API (AWS's
    /// `x-amzn-RequestId`).
    pub(crate) fn finish(self, response: Response) -> Response {
        match self {
            Self::Twilio
            | Self::Telnyx
            | Self::Plivo
            | Self::Vonage
            | Self::Sinch
            | Self::Infobip
            | Self::Bandwidth => response,
            Self::Aws => aws::finish(response),
        }
    }

    /// The body of an accepted send.
    pub(crate) fn accepted(self, message: &ReceivedMessage) -> Value {
        match self {
            Self::Twilio => twilio::resource(message),
            Self::Telnyx => telnyx::resource(message),
            Self::Plivo => plivo::accepted(message),
            Self::Vonage => vonage::accepted(message),
            Self::Sinch => sinch::batch(message),
            Self::Aws => aws::accepted(message),
            Self::Infobip => infobip::accepted(message),
            Self::Bandwidth => bandwidth::accepted(message),
        }
    }

    /// The provider's answer to `failure`.
    pub(crate) fn error(self, failure: Failure) -> ErrorReply {
        match self {
            Self::Twilio => twilio::error(failure),
            Self::Telnyx => telnyx::error(failure),
            Self::Plivo => plivo::error(failure),
            Self::Vonage => vonage::error(failure),
            Self::Sinch => sinch::error(failure),
            Self::Aws => aws::error(failure),
            Self::Infobip => infobip::error(failure),
            Self::Bandwidth => bandwidth::error(failure),
        }
    }

    /// The provider's answer to a send of `message` it refuses for `reason`: its error, except
    /// at Infobip, which answers a 200 whose destination is in status group 5 (REJECTED).
    pub(crate) fn rejection(self, reason: Reason, message: &ReceivedMessage) -> ErrorReply {
        match self {
            Self::Infobip => infobip::rejected(reason, message),
            Self::Twilio | Self::Telnyx | Self::Plivo | Self::Vonage | Self::Sinch | Self::Aws | Self::Bandwidth => {
                self.error(Failure::Reject(reason))
            }
        }
    }

    /// The provider's message fetch representation (Vonage and AWS have no fetch endpoint;
    /// Infobip's logs and Bandwidth's list have routes of their own).
    pub(crate) fn resource(self, message: &ReceivedMessage) -> Option<Value> {
        match self {
            Self::Twilio => Some(twilio::resource(message)),
            Self::Telnyx => Some(telnyx::resource(message)),
            Self::Plivo => Some(plivo::resource(message)),
            Self::Sinch => Some(sinch::batch(message)),
            Self::Vonage | Self::Aws | Self::Infobip | Self::Bandwidth => None,
        }
    }

    /// The signed status webhook for `step` of `message`, to `url`.
    pub(crate) fn status_webhook(
        self,
        message: &ReceivedMessage,
        step: Step,
        url: &str,
        signer: Signer<'_>,
    ) -> Webhook {
        match self {
            Self::Twilio => twilio::status_webhook(message, step, url),
            Self::Telnyx => telnyx::status_webhook(message, step, url, signer),
            Self::Plivo => plivo::status_webhook(message, step, url, signer),
            Self::Vonage => vonage::status_webhook(message, step, url, signer),
            Self::Sinch => sinch::status_webhook(message, step, url, signer),
            Self::Aws => aws::status_webhook(message, step, url, signer),
            Self::Infobip => infobip::status_webhook(message, step, url, signer),
            Self::Bandwidth => bandwidth::status_webhook(message, step, url, signer),
        }
    }

    /// The signed inbound-message webhook of `inbound`, to `url`.
    pub(crate) fn inbound_webhook(self, inbound: &Inbound, url: &str, signer: Signer<'_>) -> Webhook {
        match self {
            Self::Twilio => twilio::inbound_webhook(inbound, url),
            Self::Telnyx => telnyx::inbound_webhook(inbound, url, signer),
            Self::Plivo => plivo::inbound_webhook(inbound, url, signer),
            Self::Vonage => vonage::inbound_webhook(inbound, url, signer),
            Self::Sinch => sinch::inbound_webhook(inbound, url, signer),
            Self::Aws => aws::inbound_webhook(inbound, url, signer),
            Self::Infobip => infobip::inbound_webhook(inbound, url, signer),
            Self::Bandwidth => bandwidth::inbound_webhook(inbound, url, signer),
        }
    }
}

/// A random (version 4) UUID for ids the emulator makes up. `fastrand` is enough here: these ids
/// must be unique, not secret, and the emulator then needs no second `getrandom` beside `ring`'s.
pub(crate) fn new_uuid() -> uuid::Uuid {
    uuid::Builder::from_random_bytes(fastrand::u128(..).to_le_bytes()).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for provider in Provider::ALL {
            assert_eq!(provider.name().parse::<Provider>(), Ok(provider));
            assert_eq!(serde_json::to_value(provider).ok(), Some(Value::from(provider.name())));
        }
        assert!("messagebird".parse::<Provider>().is_err());
    }

    #[test]
    fn missing_fields_in_order() {
        let full = SendRequest {
            to: Some("+1".into()),
            from: Some("+2".into()),
            body: Some("hi".into()),
            ..SendRequest::default()
        };
        assert_eq!(full.missing(), None);
        assert_eq!(SendRequest { to: None, ..full.clone() }.missing(), Some(Field::To));
        assert_eq!(SendRequest { from: Some(String::new()), ..full.clone() }.missing(), Some(Field::From));
        assert_eq!(SendRequest { body: None, ..full.clone() }.missing(), Some(Field::Body));
        assert_eq!(SendRequest { body: None, media_urls: vec!["https://x/a.png".into()], ..full }.missing(), None);
    }
}
