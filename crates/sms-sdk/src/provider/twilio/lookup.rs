//! Twilio lookups: fetch `GET …/Messages/{Sid}.json`, and list `GET …/Messages.json?To=…&DateSent>=…`
//! (one page of [`MAX_LISTED`]).

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc2822;

use super::{NAME, Twilio};
use crate::lookup::{self, FoundMessage, Lookup, LookupOutcome, MAX_LISTED, is_plain_id};
use futures_util::future::BoxFuture;

/// A message resource as a found message.
fn found(resource: &Value) -> Option<FoundMessage> {
    let text = |name: &str| lookup::text(resource.get(name));
    let mut message = FoundMessage::new(NAME, text("sid")?, text("status").unwrap_or_default());
    message.to = text("to");
    message.from = text("from").or_else(|| text("messaging_service_sid"));
    message.body = text("body");
    message.created_at = text("date_created").and_then(|at| OffsetDateTime::parse(&at, &Rfc2822).ok());
    Some(message)
}

fn parse_one(body: &[u8]) -> LookupOutcome {
    match serde_json::from_slice::<Value>(body).ok().as_ref().and_then(found) {
        Some(message) => LookupOutcome::Found(vec![message]),
        None => LookupOutcome::failed("Twilio's answer is not a message resource"),
    }
}

fn parse_list(body: &[u8]) -> LookupOutcome {
    let Some(json) = serde_json::from_slice::<Value>(body).ok() else {
        return LookupOutcome::failed("Twilio's answer is not a message list");
    };
    let Some(messages) = json.get("messages").and_then(Value::as_array) else {
        return LookupOutcome::failed("Twilio's answer is not a message list");
    };
    LookupOutcome::Found(messages.iter().take(MAX_LISTED).filter_map(found).collect())
}

impl Lookup for Twilio {
    fn lookup_provider(&self) -> &'static str {
        NAME
    }

    fn fetch<'a>(&'a self, id: &'a str, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            if !is_plain_id(id) {
                return LookupOutcome::failed("not a Twilio message SID");
            }
            let path = self.transport.path();
            let base = path.strip_suffix(".json").unwrap_or(path);
            let path = format!("{base}/{id}.json");
            match self.transport.get(&path, &self.authorization, timeout).await {
                Ok(body) => parse_one(&body),
                Err(outcome) => outcome,
            }
        })
    }

    fn list_to<'a>(&'a self, to: &'a str, since: OffsetDateTime, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            let day = since.to_offset(time::UtcOffset::UTC).date();
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("To", to)
                .append_pair("DateSent>", &day.to_string())
                .append_pair("PageSize", &MAX_LISTED.to_string())
                .finish();
            let path = format!("{}?{query}", self.transport.path());
            match self.transport.get(&path, &self.authorization, timeout).await {
                Ok(body) => parse_list(&body),
                Err(outcome) => outcome,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_and_lists_are_read() {
        let resource = r#"{"sid":"SM1","status":"sent","to":"+14155550123","from":"+15005550006","body":"Hi",
            "date_created":"Tue, 01 Dec 2026 10:00:00 +0000"}"#;
        let LookupOutcome::Found(found) = parse_one(resource.as_bytes()) else { panic!() };
        assert_eq!(found[0].provider_id, "SM1");
        assert_eq!(found[0].to.as_deref(), Some("+14155550123"));
        assert!(found[0].created_at.is_some());
        let list = format!(r#"{{"messages":[{resource},{{"status":"x"}}]}}"#);
        assert!(matches!(parse_list(list.as_bytes()), LookupOutcome::Found(m) if m.len() == 1));
        assert!(matches!(parse_list(b"[]"), LookupOutcome::Failed { .. }));
    }
}
