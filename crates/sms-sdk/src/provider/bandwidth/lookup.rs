//! Bandwidth lookups, both through `GET …/messages` (Bandwidth has no fetch by path): by
//! `messageId`, and by `destinationTn` from a day (`fromDateTime`, within the 14 days Bandwidth
//! searches), newest first, one page of [`MAX_LISTED`].
//!
//! Bandwidth's list has no `tag` (the correlation reference) and no text: a list by recipient
//! is a heuristic, which its callers match by time (and the message's fingerprint where they
//! have it), never proof that a given send was created.

use std::time::Duration;

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

use super::{Bandwidth, NAME};
use crate::lookup::{FoundMessage, Lookup, LookupOutcome, MAX_LISTED, is_plain_id};
use crate::message::format_timestamp;
use futures_util::future::BoxFuture;

/// How far back Bandwidth searches: "currently 14 days".
const WINDOW: time::Duration = time::Duration::days(14);

/// A non-empty string member, owned.
fn text(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// A listed message as a found message.
fn found(message: &Value) -> Option<FoundMessage> {
    let field = |name: &str| text(message.get(name));
    let status = field("messageStatus").unwrap_or_else(|| "unknown".to_owned());
    let mut found = FoundMessage::new(NAME, field("messageId")?, status);
    found.to = field("destinationTn");
    found.from = field("sourceTn");
    found.created_at = field("receiveTime").and_then(|at| OffsetDateTime::parse(&at, &Rfc3339).ok());
    Some(found)
}

/// The messages of a list answer (one page, at most [`MAX_LISTED`]).
fn parse_list(body: &[u8]) -> LookupOutcome {
    let json = serde_json::from_slice::<Value>(body).ok();
    let Some(messages) = json.as_ref().and_then(|json| json.get("messages")).and_then(Value::as_array) else {
        return LookupOutcome::failed("Bandwidth's answer is not a list of messages");
    };
    LookupOutcome::Found(messages.iter().take(MAX_LISTED).filter_map(found).collect())
}

/// A fetch by id: the listed message with that id, or not found.
fn parse_one(body: &[u8], id: &str) -> LookupOutcome {
    match parse_list(body) {
        LookupOutcome::Found(messages) => {
            let matching: Vec<FoundMessage> = messages.into_iter().filter(|m| m.provider_id == id).collect();
            if matching.is_empty() { LookupOutcome::NotFound } else { LookupOutcome::Found(matching) }
        }
        outcome @ (LookupOutcome::NotFound | LookupOutcome::Unsupported | LookupOutcome::Failed { .. }) => outcome,
    }
}

/// The query of a list by recipient from the day of `since` (UTC), no earlier than 14 days
/// before `now`, to `now`, newest first.
fn list_query(to: &str, since: OffsetDateTime, now: OffsetDateTime) -> String {
    let day = since.to_offset(UtcOffset::UTC).date().midnight().assume_utc();
    let earliest = now.checked_sub(WINDOW).unwrap_or(now);
    let from = day.max(earliest).min(now);
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("destinationTn", to)
        .append_pair("messageDirection", "OUTBOUND")
        .append_pair("fromDateTime", &format_timestamp(from))
        .append_pair("toDateTime", &format_timestamp(now))
        .append_pair("sort", "receiveTime:desc")
        .append_pair("limit", &MAX_LISTED.to_string())
        .finish()
}

impl Bandwidth {
    /// `GET …/messages?{query}` within `timeout` (the OAuth 2.0 token, when one is fetched,
    /// counts against it).
    async fn list(&self, query: &str, timeout: Duration) -> Result<Vec<u8>, LookupOutcome> {
        let (authorization, left) =
            self.authorization(timeout).await.map_err(|why| LookupOutcome::Failed { reason: why })?;
        self.transport.get(&format!("{}?{query}", self.transport.path()), &authorization, left).await
    }
}

impl Lookup for Bandwidth {
    fn lookup_provider(&self) -> &'static str {
        NAME
    }

    fn fetch<'a>(&'a self, id: &'a str, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            if !is_plain_id(id) {
                return LookupOutcome::failed("not a Bandwidth message id");
            }
            let query = url::form_urlencoded::Serializer::new(String::new()).append_pair("messageId", id).finish();
            match self.list(&query, timeout).await {
                Ok(body) => parse_one(&body, id),
                Err(outcome) => outcome,
            }
        })
    }

    fn list_to<'a>(&'a self, to: &'a str, since: OffsetDateTime, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            let query = list_query(to, since, OffsetDateTime::now_utc());
            match self.list(&query, timeout).await {
                Ok(body) => parse_list(&body),
                Err(outcome) => outcome,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list page as Bandwidth documents it (API specification: `messagesList`, its examples).
    const LIST: &str = r#"{"totalCount":1,"pageInfo":{"prevPage":"","nextPage":"","prevPageToken":"","nextPageToken":""},"messages":[{"messageId":"1589228074636lm4k2je7j7jklbn2","accountId":"9900000","sourceTn":"+15005550006","destinationTn":"+14155550123","messageStatus":"DELIVERED","messageDirection":"OUTBOUND","messageType":"sms","segmentCount":1,"errorCode":0,"receiveTime":"2026-12-01T10:00:00.000Z","carrierName":"other","messageSize":27,"messageLength":18,"attachmentCount":0,"recipientCount":1,"campaignClass":"T"}]}"#;

    #[test]
    fn t306_lists_are_read_and_a_fetch_matches_its_id() {
        let LookupOutcome::Found(found) = parse_list(LIST.as_bytes()) else { panic!() };
        assert_eq!(
            (found[0].provider_id.as_str(), found[0].status.as_str()),
            ("1589228074636lm4k2je7j7jklbn2", "DELIVERED")
        );
        assert_eq!((found[0].to.as_deref(), found[0].from.as_deref()), (Some("+14155550123"), Some("+15005550006")));
        assert!(found[0].created_at.is_some());
        assert!(
            matches!(parse_one(LIST.as_bytes(), "1589228074636lm4k2je7j7jklbn2"), LookupOutcome::Found(f) if f.len() == 1)
        );
        assert_eq!(parse_one(LIST.as_bytes(), "other"), LookupOutcome::NotFound);
        assert_eq!(parse_one(br#"{"totalCount":0,"messages":[]}"#, "x"), LookupOutcome::NotFound);
        assert!(matches!(parse_list(b"{}"), LookupOutcome::Failed { .. }));
        assert!(matches!(parse_list(br#"{"messages":{}}"#), LookupOutcome::Failed { .. }));
    }

    #[test]
    fn t306_a_list_by_recipient_stays_within_the_fourteen_days() {
        let now = OffsetDateTime::from_unix_timestamp(1_764_590_400).unwrap(); // 2025-12-01T12:00:00Z
        let since = OffsetDateTime::from_unix_timestamp(1_764_583_200).unwrap(); // 10:00 that day
        let query = list_query("+14155550123", since, now);
        assert_eq!(
            query,
            "destinationTn=%2B14155550123&messageDirection=OUTBOUND&fromDateTime=2025-12-01T00%3A00%3A00.000Z\
             &toDateTime=2025-12-01T12%3A00%3A00.000Z&sort=receiveTime%3Adesc&limit=50"
        );
        let long_ago = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
        assert!(list_query("+1", long_ago, now).contains("fromDateTime=2025-11-17T12%3A00%3A00.000Z"));
    }
}
