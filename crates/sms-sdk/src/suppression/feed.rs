//! Feeding the suppression list from verified webhook events.

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use crate::PhoneNumber;
use crate::store::StoreError;
use crate::store::suppression::{Action, Applied, Change, Scope, SuppressionStore};
use crate::webhook::SmsEvent;
use crate::webhook::event::{EventKind, KeywordMessage, KeywordSource, keyword_word};

/// Whole-message opt-in keywords the feeder applies to plain inbound messages (the normalizer
/// reports opt-ins only from a provider signal, Twilio's `OptOutType=START`): the ones every
/// provider honours. Compared as the normalizer compares STOP (trimmed, trailing `.!?` removed,
/// case-insensitive).
pub const OPT_IN_KEYWORDS: [&str; 2] = ["START", "UNSTOP"];

/// Which scope an opt-out received on one of your numbers applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ScopeRule {
    /// Every message of the account (the default: when in doubt, do not text someone who said
    /// STOP).
    #[default]
    Account,
    /// The number that received it: messages from your other senders still go out. Give the
    /// policy your adapters' default sender
    /// ([`SuppressionPolicy::default_sender`](super::SuppressionPolicy::default_sender)), so
    /// that messages that name no sender are checked against it.
    Sender,
    /// The messaging service it came through (Twilio `MessagingServiceSid`, Telnyx
    /// `messaging_profile_id`), else the number that received it.
    Service,
}

/// What [`Feeder::feed`] did with an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fed {
    /// Not an opt-out or opt-in (a status, a plain message, HELP), or from a number that is not
    /// E.164.
    Ignored,
    /// An opt-out or opt-in, and what the store did with it.
    Applied {
        /// Opt-out or opt-in.
        action: Action,
        /// Recorded, stale (older than the entry) or replayed (seen before).
        applied: Applied,
    },
}

/// Turns verified webhook events into suppression changes and applies them. Cheap to clone.
///
/// ```
/// # #[cfg(feature = "twilio")] {
/// use std::time::SystemTime;
/// use sms_sdk::store::suppression::MemorySuppressionStore;
/// use sms_sdk::store::suppression::{Action, Applied};
/// use sms_sdk::suppression::{Fed, Feeder};
/// use sms_sdk::testing::webhooks::signed_twilio_request;
/// use sms_sdk::webhook::WebhookVerifier;
/// use sms_sdk::TwilioWebhook;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let url = "https://example.com/sms/inbound";
/// let params = [("MessageSid", "SM1"), ("From", "+14155550123"), ("To", "+15005550006"), ("Body", "stop")];
/// let request = signed_twilio_request("auth-token", url, &params);
/// let event = TwilioWebhook::new("auth-token")?.verify(&request.as_request())?;
/// let feeder = Feeder::new(MemorySuppressionStore::new());
/// let fed = feeder.feed(&event, SystemTime::now()).await?;
/// assert_eq!(fed, Fed::Applied { action: Action::OptOut, applied: Applied::Recorded });
/// # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
/// # }
/// ```
#[derive(Clone)]
pub struct Feeder {
    store: Arc<dyn SuppressionStore>,
    rule: ScopeRule,
    opt_in_keywords: bool,
}

impl fmt::Debug for Feeder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feeder")
            .field("rule", &self.rule)
            .field("opt_in_keywords", &self.opt_in_keywords)
            .finish_non_exhaustive()
    }
}

impl Feeder {
    /// A feeder into `store`, scoping opt-outs to the whole account, with the opt-in keywords on.
    pub fn new(store: impl SuppressionStore) -> Self {
        Self { store: Arc::new(store), rule: ScopeRule::default(), opt_in_keywords: true }
    }

    /// Which scope opt-outs apply to.
    #[must_use]
    pub fn scope(mut self, rule: ScopeRule) -> Self {
        self.rule = rule;
        self
    }

    /// Whether plain inbound messages that are an [`OPT_IN_KEYWORDS`] word opt back in (default
    /// true).
    #[must_use]
    pub fn opt_in_keywords(mut self, on: bool) -> Self {
        self.opt_in_keywords = on;
        self
    }

    /// The change an event asks for, if any: its time is the event's own (never later than
    /// `now`), else `now`; it carries the event's dedupe key.
    #[must_use]
    pub fn change(&self, event: &SmsEvent, now: SystemTime) -> Option<Change> {
        let (action, from, to, reason) = match &event.kind {
            EventKind::OptedOut(m) => (Action::OptOut, &m.from, &m.to, reason(m)),
            EventKind::OptedIn(m) => (Action::OptIn, &m.from, &m.to, reason(m)),
            EventKind::Received(m) if self.opt_in_keywords => {
                let word = keyword_word(&m.body).filter(|w| OPT_IN_KEYWORDS.contains(&w.as_str()))?;
                (Action::OptIn, &m.from, &m.to, format!("keyword:{word}"))
            }
            EventKind::Received(_)
            | EventKind::Queued(_)
            | EventKind::Sent(_)
            | EventKind::Delivered(_)
            | EventKind::Undelivered(_)
            | EventKind::Filtered(_)
            | EventKind::Help(_)
            | EventKind::Unrecognized { .. } => return None,
        };
        let recipient = PhoneNumber::parse(&e164(from)).ok()?;
        let scope = match self.rule {
            ScopeRule::Account => Scope::Account,
            ScopeRule::Service => service(event.raw()).map_or_else(|| Scope::Sender(e164(to)), Scope::Service),
            ScopeRule::Sender => Scope::Sender(e164(to)),
        };
        scope.key().ok()?;
        let at = event.occurred_at.map_or(now, SystemTime::from).min(now);
        Some(Change::new(recipient, scope, action, at, &reason).event(&event.dedupe_key))
    }

    /// Applies the change `event` asks for (see [`change`](Self::change)), and logs it (masked).
    /// Idempotent: call it where a failure can still refuse the webhook (see the
    /// [module](super) docs).
    ///
    /// # Errors
    /// A [`StoreError`] when the list cannot be written: answer the webhook with an error so the
    /// provider delivers it again.
    pub async fn feed(&self, event: &SmsEvent, now: SystemTime) -> Result<Fed, StoreError> {
        let Some(change) = self.change(event, now) else { return Ok(Fed::Ignored) };
        let applied = self.store.apply(std::slice::from_ref(&change), now).await?;
        let applied = applied.first().copied().ok_or_else(|| StoreError::new("the store answered no change"))?;
        tracing::info!(
            recipient = %change.recipient(), scope = %change.scope(), action = ?change.action(), ?applied,
            "suppression list fed from a verified webhook"
        );
        Ok(Fed::Applied { action: change.action(), applied })
    }
}

/// `provider:STOP` or `keyword:STOP`.
fn reason(message: &KeywordMessage) -> String {
    let source = match message.source {
        KeywordSource::Provider => "provider",
        KeywordSource::Keyword => "keyword",
    };
    format!("{source}:{}", message.keyword)
}

/// A number as written, with `+` added when a provider sends bare digits (Plivo, Vonage).
fn e164(number: &str) -> String {
    let number = number.trim();
    if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
        format!("+{number}")
    } else {
        number.to_owned()
    }
}

/// The messaging service of an inbound payload: Twilio's `MessagingServiceSid`, Telnyx's
/// `data.payload.messaging_profile_id`.
fn service(raw: &Value) -> Option<String> {
    let twilio = raw.get("MessagingServiceSid");
    let telnyx = || raw.get("data")?.get("payload")?.get("messaging_profile_id");
    twilio.or_else(telnyx).and_then(Value::as_str).filter(|id| !id.is_empty()).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_digits_become_e164_and_services_are_found() {
        assert_eq!(e164(" 14155550123 "), "+14155550123");
        assert_eq!(e164("+14155550123"), "+14155550123");
        assert_eq!(e164("ACME"), "ACME");
        assert_eq!(service(&serde_json::json!({"MessagingServiceSid": "MG1"})), Some("MG1".into()));
        let telnyx = serde_json::json!({"data": {"payload": {"messaging_profile_id": "p-1"}}});
        assert_eq!(service(&telnyx), Some("p-1".into()));
        assert_eq!(service(&serde_json::json!({"MessagingServiceSid": ""})), None);
    }
}
