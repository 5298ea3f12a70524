//! Sinch lookups: fetch `GET …/batches/{batch_id}`, and list `GET …/batches?to=…&start_date=…`
//! (one page of [`MAX_LISTED`]; Sinch keeps batches listable for 14 days).
//!
//! A batch carries no delivery status of its own: a found batch's status is `canceled` when it
//! was canceled before it went out, else `created` (Sinch accepted it; its delivery reports tell
//! the rest).

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{NAME, Sinch};
use crate::lookup::{self, FoundMessage, Lookup, LookupOutcome, MAX_LISTED, is_plain_id};
use futures_util::future::BoxFuture;

/// A batch as a found message (its first recipient).
fn found(batch: &Value) -> Option<FoundMessage> {
    let text = |name: &str| lookup::text(batch.get(name));
    let canceled = batch.get("canceled").and_then(Value::as_bool).unwrap_or(false);
    let mut message = FoundMessage::new(NAME, text("id")?, if canceled { "canceled" } else { "created" });
    message.to = lookup::text(batch.get("to").and_then(|to| to.get(0)));
    message.from = text("from");
    message.body = text("body");
    message.created_at = text("created_at").and_then(|at| OffsetDateTime::parse(&at, &Rfc3339).ok());
    Some(message)
}

fn parse_one(body: &[u8]) -> LookupOutcome {
    match serde_json::from_slice::<Value>(body).ok().as_ref().and_then(found) {
        Some(message) => LookupOutcome::Found(vec![message]),
        None => LookupOutcome::failed("Sinch's answer is not a batch"),
    }
}

fn parse_list(body: &[u8]) -> LookupOutcome {
    let json = serde_json::from_slice::<Value>(body).ok();
    let Some(batches) = json.as_ref().and_then(|json| json.get("batches")).and_then(Value::as_array) else {
        return LookupOutcome::failed("Sinch's answer is not a list of batches");
    };
    LookupOutcome::Found(batches.iter().take(MAX_LISTED).filter_map(found).collect())
}

impl Lookup for Sinch {
    fn lookup_provider(&self) -> &'static str {
        NAME
    }

    fn fetch<'a>(&'a self, id: &'a str, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            if !is_plain_id(id) {
                return LookupOutcome::failed("not a Sinch batch id");
            }
            match self.transport.get(&format!("{}/{id}", self.transport.path()), &self.authorization, timeout).await {
                Ok(body) => parse_one(&body),
                Err(outcome) => outcome,
            }
        })
    }

    fn list_to<'a>(&'a self, to: &'a str, since: OffsetDateTime, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            let day = since.to_offset(time::UtcOffset::UTC).date();
            let query = url::form_urlencoded::Serializer::new(String::new())
                .append_pair("to", to)
                .append_pair("start_date", &day.to_string())
                .append_pair("page_size", &MAX_LISTED.to_string())
                .finish();
            match self.transport.get(&format!("{}?{query}", self.transport.path()), &self.authorization, timeout).await
            {
                Ok(body) => parse_list(&body),
                Err(outcome) => outcome,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sinch's documented batch (API reference, "Get a batch message", trimmed) and a list page.
    #[test]
    fn t277_batches_and_lists_are_read() {
        let batch = r#"{"id":"01FC66621XXXXX119Z8PMV1QPQ","to":["+14155550123"],"from":"+15005550006",
            "canceled":false,"body":"Hi","type":"mt_text","created_at":"2026-12-01T10:00:00.000Z"}"#;
        let LookupOutcome::Found(found) = parse_one(batch.as_bytes()) else { panic!() };
        assert_eq!(
            (found[0].provider_id.as_str(), found[0].status.as_str()),
            ("01FC66621XXXXX119Z8PMV1QPQ", "created")
        );
        assert_eq!(found[0].to.as_deref(), Some("+14155550123"));
        assert!(found[0].created_at.is_some());
        let list = format!(r#"{{"count":2,"page":0,"page_size":2,"batches":[{batch},{{"id":"b2","canceled":true}}]}}"#);
        let LookupOutcome::Found(found) = parse_list(list.as_bytes()) else { panic!() };
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].status, "canceled");
        assert!(matches!(parse_one(b"{}"), LookupOutcome::Failed { .. }));
        assert!(matches!(parse_list(br#"{"batches":{}}"#), LookupOutcome::Failed { .. }));
    }
}
