//! Local checks of a message against the client's adapters: no I/O, ever.
//!
//! [`Client::validate`](crate::Client::validate) reports every [`Issue`];
//! [`Client::send`](crate::Client::send) turns the first one into a typed [`Error`] before any
//! request.
//!
//! ```
//! # #[cfg(feature = "twilio")] {
//! use sms_sdk::{Client, Field, IssueCode, Message, Twilio};
//!
//! let twilio = Twilio::builder("AC0123456789abcdef0123456789abcdef", "auth-token").from("+15005550006").build()?;
//! let client = Client::builder().adapter(twilio).build()?;
//!
//! let report = client.validate(&Message::new("+14155550123", "Your package is ready 📦"));
//! assert!(report.supported);
//! assert_eq!((report.preview.segments, report.adapter_candidates.len()), (1, 1));
//!
//! // Every problem at once, and no request: a bad number and an empty body.
//! let report = client.validate(&Message::new("+1", ""));
//! let codes: Vec<IssueCode> = report.issues.iter().map(|issue| issue.code).collect();
//! assert_eq!(codes, [IssueCode::InvalidRecipient, IssueCode::EmptyBody]);
//! assert_eq!(report.issues[0].field, Field::To);
//! # }
//! # Ok::<(), sms_sdk::Error>(())
//! ```

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::adapter::{DynAdapter, SenderType};
use crate::encoding::SegmentPreview;
use crate::error::Error;
pub use crate::issue::{Field, Issue, IssueCode};
use crate::message::{INVALID_RECIPIENT, Message, OutboundMessage, PhoneNumber, SenderKind, is_e164};
use crate::options::parse_entry;

/// The result of [`Client::validate`](crate::Client::validate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Validation {
    /// The segment estimate of the body.
    #[serde(flatten)]
    pub preview: SegmentPreview,
    /// True when the primary adapter can send the message and the message itself is valid.
    pub supported: bool,
    /// Every issue, across the message and all adapters.
    pub issues: Vec<Issue>,
    /// Adapters that could send the message, in configured order.
    pub adapter_candidates: Vec<String>,
    /// Candidates that have an entry in the message's provider options, in configured order.
    pub provider_options_for: Vec<String>,
}

fn is_http_url(value: &str) -> bool {
    url::Url::parse(value).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// The message's provider-options entry for `adapter`, if any.
pub(crate) fn options_entry<'a>(message: &'a Message, adapter: &str) -> Option<&'a Value> {
    match &message.provider_options {
        Some(Value::Object(map)) => map.get(adapter),
        _ => None,
    }
}

/// Checks that do not depend on an adapter, then every configured adapter's provider options.
pub(crate) fn message_issues(message: &Message, adapters: &[Arc<dyn DynAdapter>]) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut push = |code, field, text: &str| issues.push(Issue::new(code, field, text));
    if !is_e164(&message.to) {
        push(IssueCode::InvalidRecipient, Field::To, INVALID_RECIPIENT);
    }
    if message.body.is_empty() && message.media_urls.is_empty() {
        push(IssueCode::EmptyBody, Field::Body, "The body may be empty only when the message has media.");
    }
    if !message.media_urls.iter().all(|u| is_http_url(u)) {
        push(IssueCode::InvalidField, Field::MediaUrls, "Every media URL must be an absolute http or https URL.");
    }
    if message.validity_period_secs.is_some_and(|v| v <= 0) {
        push(
            IssueCode::InvalidField,
            Field::ValidityPeriodSecs,
            "The validity period must be a positive number of seconds.",
        );
    }
    if message.send_at.is_some_and(|at| at.checked_to_offset(time::UtcOffset::UTC).is_none()) {
        push(IssueCode::InvalidField, Field::SendAt, "The send time is out of range (years 1-9999 in UTC).");
    }
    if message.webhook_url.as_deref().is_some_and(|u| !is_http_url(u)) {
        push(IssueCode::InvalidField, Field::WebhookUrl, "The webhook URL must be an absolute http or https URL.");
    }
    if message.idempotency_key.as_deref().is_some_and(|k| !(1..=255).contains(&k.encode_utf16().count())) {
        push(IssueCode::InvalidField, Field::IdempotencyKey, "The idempotency key must be 1-255 characters long.");
    }
    match &message.provider_options {
        None | Some(Value::Object(_)) => {
            for adapter in adapters {
                let info = adapter.info();
                if let Some(Err(found)) = options_entry(message, &info.name)
                    .map(|entry| parse_entry(&info.name, info.provider_options, entry))
                {
                    issues.extend(found);
                }
            }
        }
        Some(_) => issues.push(Issue::new(
            IssueCode::InvalidField,
            Field::ProviderOptions,
            "provider_options must be an object keyed by adapter name.",
        )),
    }
    issues
}

/// Whether an adapter listing `types` can send from a sender of `kind`.
#[must_use]
pub fn supports_sender(types: &[SenderType], kind: SenderKind) -> bool {
    match kind {
        SenderKind::PhoneNumber => types.contains(&SenderType::LongCode) || types.contains(&SenderType::TollFree),
        SenderKind::ShortCode => types.contains(&SenderType::ShortCode),
        SenderKind::Alphanumeric => types.contains(&SenderType::Alphanumeric),
        SenderKind::MessagingService => types.contains(&SenderType::MessagingService),
    }
}

/// Checks one adapter against a message that passed [`message_issues`], and builds what it sends.
pub(crate) fn check_adapter(message: &Message, adapter: &dyn DynAdapter) -> Result<OutboundMessage, Vec<Issue>> {
    let info = adapter.info();
    let name = info.name.as_str();
    let issue = |code, field, text: String| Issue::new(code, field, text).provider(name);

    let Some(sender) = message.from.as_ref().or(info.default_from.as_ref()) else {
        return Err(vec![issue(
            IssueCode::MissingSender,
            Field::From,
            format!("No sender: the message has no `from` and {name} has no default sender."),
        )]);
    };
    let from = sender.resolve().map_err(|rule| vec![issue(IssueCode::InvalidSender, Field::From, rule.to_owned())])?;

    let caps = &info.capabilities;
    let mut issues = Vec::new();
    if !supports_sender(&caps.sender_types, from.kind) {
        let kind = from.kind.as_str().replacen('_', " ", 1);
        issues.push(issue(
            IssueCode::UnsupportedField,
            Field::From,
            format!("{name} does not support {kind} senders."),
        ));
    }
    if !message.media_urls.is_empty() && !caps.mms {
        issues.push(issue(
            IssueCode::UnsupportedField,
            Field::MediaUrls,
            format!("{name} does not support media (MMS)."),
        ));
    }
    if message.send_at.is_some() && !caps.scheduling {
        issues.push(issue(
            IssueCode::UnsupportedField,
            Field::SendAt,
            format!("{name} does not support scheduled sends."),
        ));
    }
    let mut validity_period_secs = None;
    if let Some(secs) = message.validity_period_secs {
        match caps.validity_period {
            None => issues.push(issue(
                IssueCode::UnsupportedField,
                Field::ValidityPeriodSecs,
                format!("{name} does not support a validity period."),
            )),
            Some(range) => match u32::try_from(secs).ok().filter(|s| (range.min_sec..=range.max_sec).contains(s)) {
                Some(secs) => validity_period_secs = Some(secs),
                None => issues.push(issue(
                    IssueCode::InvalidField,
                    Field::ValidityPeriodSecs,
                    format!("{name} accepts validity periods of {}-{} seconds.", range.min_sec, range.max_sec),
                )),
            },
        }
    }
    if message.webhook_url.is_some() && !caps.webhook_url_override {
        issues.push(issue(
            IssueCode::UnsupportedField,
            Field::WebhookUrl,
            format!("{name} does not support a per-message webhook URL."),
        ));
    }
    let provider_fields = match options_entry(message, name) {
        None => Vec::new(),
        Some(entry) => parse_entry(name, info.provider_options, entry).unwrap_or_else(|found| {
            issues.extend(found);
            Vec::new()
        }),
    };
    let to = PhoneNumber::parse(&message.to)
        .map_err(|_| vec![Issue::new(IssueCode::InvalidRecipient, Field::To, INVALID_RECIPIENT)])?;
    if !issues.is_empty() {
        return Err(issues);
    }

    let outbound = OutboundMessage {
        to,
        from,
        body: message.body.clone(),
        media_urls: message.media_urls.clone(),
        send_at: message.send_at,
        validity_period_secs,
        webhook_url: message.webhook_url.clone(),
        provider_fields,
        correlation: None,
    };
    let own = adapter.validate(&outbound);
    if own.is_empty() { Ok(outbound) } else { Err(own.into_iter().map(|i| i.provider(name)).collect()) }
}

/// An adapter of the chain, with what it sends.
pub(crate) type Candidate = (Arc<dyn DynAdapter>, OutboundMessage);

/// The adapters that will be tried for `message`, with what each sends: the primary (whose
/// first issue is raised) and, when `failover` is on, every later adapter that passes its checks.
pub(crate) fn candidates(
    message: &Message,
    adapters: &[Arc<dyn DynAdapter>],
    failover: bool,
) -> Result<Vec<Candidate>, Error> {
    if let Some(first) = message_issues(message, adapters).into_iter().next() {
        return Err(Error::from(first));
    }
    let mut chain = Vec::with_capacity(adapters.len());
    for (index, adapter) in adapters.iter().enumerate() {
        if index > 0 && !failover {
            break;
        }
        match check_adapter(message, adapter.as_ref()) {
            Ok(outbound) => chain.push((Arc::clone(adapter), outbound)),
            Err(issues) if index == 0 => {
                return Err(issues.into_iter().next().map_or_else(|| Error::configuration("no issue"), Error::from));
            }
            Err(_) => {}
        }
    }
    Ok(chain)
}

/// The full local validation report.
pub(crate) fn validation(message: &Message, adapters: &[Arc<dyn DynAdapter>]) -> Validation {
    let preview = crate::encoding::estimate_segments(&message.body);
    let issues = message_issues(message, adapters);
    if !issues.is_empty() {
        return Validation {
            preview,
            supported: false,
            issues,
            adapter_candidates: Vec::new(),
            provider_options_for: Vec::new(),
        };
    }
    let mut report = Validation {
        preview,
        supported: false,
        issues,
        adapter_candidates: Vec::new(),
        provider_options_for: Vec::new(),
    };
    for (index, adapter) in adapters.iter().enumerate() {
        let name = &adapter.info().name;
        match check_adapter(message, adapter.as_ref()) {
            Ok(_) => {
                report.supported |= index == 0;
                report.adapter_candidates.push(name.clone());
                if options_entry(message, name).is_some() {
                    report.provider_options_for.push(name.clone());
                }
            }
            Err(found) => report.issues.extend(found),
        }
    }
    report
}
