//! Telnyx lookups: fetch `GET /v2/messages/{id}`. Telnyx has no list by recipient in its
//! Messaging API (message detail records are a separate reporting API).

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{NAME, Telnyx};
use crate::lookup::{FoundMessage, Lookup, LookupOutcome, is_plain_id, text};
use futures_util::future::BoxFuture;

/// `{data: message}` as a found message.
fn parse(body: &[u8]) -> LookupOutcome {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let Some(data) = json.as_ref().and_then(|j| j.get("data")) else {
        return LookupOutcome::failed("Telnyx's answer is not a message");
    };
    let recipient = data.get("to").and_then(|to| to.get(0));
    let Some(id) = text(data.get("id")) else { return LookupOutcome::failed("Telnyx's answer is not a message") };
    let mut message = FoundMessage::new(NAME, id, text(recipient.and_then(|r| r.get("status"))).unwrap_or_default());
    message.to = text(recipient.and_then(|r| r.get("phone_number")));
    message.from =
        text(data.get("from").and_then(|f| f.get("phone_number"))).or_else(|| text(data.get("messaging_profile_id")));
    message.body = text(data.get("text"));
    message.created_at = text(data.get("received_at").or_else(|| data.get("created_at")))
        .and_then(|at| OffsetDateTime::parse(&at, &Rfc3339).ok());
    LookupOutcome::Found(vec![message])
}

impl Lookup for Telnyx {
    fn lookup_provider(&self) -> &'static str {
        NAME
    }

    fn fetch<'a>(&'a self, id: &'a str, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            if !is_plain_id(id) {
                return LookupOutcome::failed("not a Telnyx message id");
            }
            match self.transport.get(&format!("{}/{id}", self.transport.path()), &self.authorization, timeout).await {
                Ok(body) => parse(&body),
                Err(outcome) => outcome,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_read() {
        let body = br#"{"data":{"id":"m1","to":[{"phone_number":"+14155550123","status":"sent"}],
            "from":{"phone_number":"+15005550006"},"text":"Hi","received_at":"2026-12-01T10:00:00Z"}}"#;
        let LookupOutcome::Found(found) = parse(body) else { panic!() };
        assert_eq!((found[0].provider_id.as_str(), found[0].status.as_str()), ("m1", "sent"));
        assert!(found[0].created_at.is_some() && found[0].body.as_deref() == Some("Hi"));
        assert!(matches!(parse(b"{}"), LookupOutcome::Failed { .. }));
    }
}
