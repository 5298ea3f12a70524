//! Infobip lookups in the message logs: fetch `GET /sms/3/logs?messageId=…`, and list
//! `GET /sms/3/logs?destination=…&sentSince=…&limit=50`. Infobip keeps logs for 48 hours
//! ([`LOG_WINDOW_SECS`]).
//!
//! An empty answer proves nothing about a message older than the window, so a fetch that finds
//! nothing is `Failed` (not `NotFound`), and a list from before the window is refused before any
//! request: "not in the logs" must never read as "not sent".

use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;

use super::webhook::{e164, parse_infobip_time};
use super::{Infobip, NAME};
use crate::lookup::{FoundMessage, Lookup, LookupOutcome, MAX_LISTED, is_plain_id};
use futures_util::future::BoxFuture;

/// The logs' path under the account's base URL.
pub const LOGS_PATH: &str = "/sms/3/logs";

/// How long Infobip keeps message logs: 48 hours.
pub const LOG_WINDOW_SECS: i64 = 48 * 3600;

/// A non-empty string member.
fn text(value: &Value, name: &str) -> Option<String> {
    value.get(name).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// A log entry as a found message (v3 names first, then the older API's).
fn found(entry: &Value) -> Option<FoundMessage> {
    let status = entry.get("status");
    let status_name = status.and_then(|s| text(s, "name")).or_else(|| {
        let group = status.and_then(|s| s.get("groupId")).and_then(Value::as_u64)?;
        Some(format!("group_{group}"))
    })?;
    let mut message = FoundMessage::new(NAME, text(entry, "messageId")?, status_name);
    message.to = text(entry, "destination").or_else(|| text(entry, "to")).map(|to| e164(&to));
    message.from = text(entry, "sender").or_else(|| text(entry, "from")).map(|from| e164(&from));
    message.body = entry.get("content").and_then(|c| text(c, "text")).or_else(|| text(entry, "text"));
    message.created_at = text(entry, "sentAt").and_then(|at| parse_infobip_time(&at));
    Some(message)
}

/// The entries of a logs answer, at most [`MAX_LISTED`].
fn parse_logs(body: &[u8]) -> Result<Vec<FoundMessage>, LookupOutcome> {
    let json = serde_json::from_slice::<Value>(body).ok();
    let Some(results) = json.as_ref().and_then(|json| json.get("results")).and_then(Value::as_array) else {
        return Err(LookupOutcome::failed("Infobip's answer is not a list of message logs"));
    };
    Ok(results.iter().take(MAX_LISTED).filter_map(found).collect())
}

/// What a fetch of `id` found: the logs naming it, else `Failed` (outside the window nothing is
/// known).
fn parse_fetch(body: &[u8], id: &str) -> LookupOutcome {
    match parse_logs(body) {
        Ok(found) => {
            let found: Vec<FoundMessage> = found.into_iter().filter(|m| m.provider_id == id).collect();
            if found.is_empty() {
                LookupOutcome::failed("not in Infobip's message logs, which keep 48 hours: nothing is known")
            } else {
                LookupOutcome::Found(found)
            }
        }
        Err(outcome) => outcome,
    }
}

/// The query of a list of the messages to `to` sent since `since`, or why there is none: a
/// `since` more than 48 hours before `now` is outside the logs.
///
/// # Errors
/// `LookupOutcome::Failed` when `since` is before the logs' window.
pub fn list_query(to: &str, since: OffsetDateTime, now: OffsetDateTime) -> Result<String, LookupOutcome> {
    if since < now - time::Duration::seconds(LOG_WINDOW_SECS) {
        return Err(LookupOutcome::failed(
            "Infobip keeps message logs for 48 hours: a send older than that cannot be looked up",
        ));
    }
    let since = crate::message::format_timestamp(since);
    Ok(url::form_urlencoded::Serializer::new(String::new())
        .append_pair("destination", to.strip_prefix('+').unwrap_or(to))
        .append_pair("sentSince", &since)
        .append_pair("limit", &MAX_LISTED.to_string())
        .finish())
}

impl Lookup for Infobip {
    fn lookup_provider(&self) -> &'static str {
        NAME
    }

    fn fetch<'a>(&'a self, id: &'a str, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            if !is_plain_id(id) {
                return LookupOutcome::failed("not an Infobip message id this SDK looks up");
            }
            let query = url::form_urlencoded::Serializer::new(String::new()).append_pair("messageId", id).finish();
            match self.transport.get(&format!("{LOGS_PATH}?{query}"), &self.authorization, timeout).await {
                Ok(body) => parse_fetch(&body, id),
                Err(outcome) => outcome,
            }
        })
    }

    fn list_to<'a>(&'a self, to: &'a str, since: OffsetDateTime, timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async move {
            let query = match list_query(to, since, OffsetDateTime::now_utc()) {
                Ok(query) => query,
                Err(outcome) => return outcome,
            };
            match self.transport.get(&format!("{LOGS_PATH}?{query}"), &self.authorization, timeout).await {
                Ok(body) => match parse_logs(&body) {
                    Ok(found) => LookupOutcome::Found(found),
                    Err(outcome) => outcome,
                },
                Err(outcome) => outcome,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"results":[{"sender":"InfoSMS","destination":"41793026727","bulkId":"b-1","messageId":"sms-sdk-1","sentAt":"2026-12-01T10:00:00.000+0000","doneAt":"2026-12-01T10:00:05.000+0000","messageCount":1,"price":{"pricePerMessage":0.01,"currency":"EUR"},"status":{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET","description":"Message delivered to handset"},"error":{"groupId":0,"groupName":"OK","id":0,"name":"NO_ERROR","description":"No Error","permanent":false},"content":{"text":"Hi"}}]}"#;

    #[test]
    fn t298_logs_are_read_as_found_messages() {
        let LookupOutcome::Found(found) = parse_fetch(LOG.as_bytes(), "sms-sdk-1") else { panic!() };
        let message = &found[0];
        assert_eq!((message.provider_id.as_str(), message.status.as_str()), ("sms-sdk-1", "DELIVERED_TO_HANDSET"));
        assert_eq!((message.to.as_deref(), message.from.as_deref()), (Some("+41793026727"), Some("InfoSMS")));
        assert_eq!(message.body.as_deref(), Some("Hi"));
        assert!(message.created_at.is_some());
        // Nothing for that id is not "not sent": the logs keep 48 hours.
        assert!(matches!(parse_fetch(LOG.as_bytes(), "sms-sdk-2"), LookupOutcome::Failed { .. }));
        assert!(matches!(parse_fetch(br#"{"results":[]}"#, "x"), LookupOutcome::Failed { .. }));
        assert!(matches!(parse_fetch(b"{}", "x"), LookupOutcome::Failed { .. }));
        // The older API's names.
        let old = r#"{"results":[{"messageId":"m","to":"14155550123","from":"+15005550006","text":"t","status":{"groupId":1}}]}"#;
        let Ok(found) = parse_logs(old.as_bytes()) else { panic!() };
        assert_eq!((found[0].to.as_deref(), found[0].status.as_str()), (Some("+14155550123"), "group_1"));
    }

    #[test]
    fn t298_a_list_from_before_the_window_is_refused() {
        let now = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let query = list_query("+14155550123", now - time::Duration::hours(47), now).unwrap();
        assert_eq!(query, "destination=14155550123&sentSince=2027-01-13T09%3A00%3A00.000Z&limit=50");
        assert!(list_query("+14155550123", now - time::Duration::hours(49), now).is_err());
    }
}
