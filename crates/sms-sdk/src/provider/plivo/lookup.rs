//! Plivo lookups: fetch `GET /v1/Account/{auth_id}/Message/{uuid}/`. The answer has no text, so a
//! Plivo match can never confirm the body.

use std::time::Duration;

use serde_json::Value;

use super::{NAME, Plivo};
use crate::lookup::{self, FoundMessage, Lookup, LookupOutcome, is_plain_id};
use futures_util::future::BoxFuture;

/// Plivo numbers come without their `+`.
fn e164(number: &str) -> String {
    if number.starts_with('+') || !number.bytes().all(|b| b.is_ascii_digit()) {
        number.to_owned()
    } else {
        format!("+{number}")
    }
}

fn parse(body: &[u8]) -> LookupOutcome {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let text = |name: &str| lookup::text(json.as_ref().and_then(|j| j.get(name)));
    let Some(id) = text("message_uuid") else { return LookupOutcome::failed("Plivo's answer is not a message") };
    let mut message = FoundMessage::new(NAME, id, text("message_state").unwrap_or_default());
    message.to = text("to_number").map(|n| e164(&n));
    message.from = text("from_number").map(|n| e164(&n));
    LookupOutcome::Found(vec![message])
}

impl Lookup for Plivo {
    fn lookup_provider(&self) -> &'static str {
        NAME
    }

    fn fetch<'a>(&'a self, id: &'a str, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            if !is_plain_id(id) {
                return LookupOutcome::failed("not a Plivo message UUID");
            }
            match self.transport.get(&format!("{}{id}/", self.transport.path()), &self.authorization, timeout).await {
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
        let LookupOutcome::Found(found) =
            parse(br#"{"message_uuid":"u1","message_state":"sent","to_number":"14155550123"}"#)
        else {
            panic!()
        };
        assert_eq!(found[0].to.as_deref(), Some("+14155550123"));
        assert!(found[0].body.is_none());
    }
}
