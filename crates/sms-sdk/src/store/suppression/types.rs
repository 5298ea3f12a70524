//! The suppression list's values: scopes, changes, entries, pages, and the ordering rule.

use std::fmt;
use std::str::FromStr;
use std::time::SystemTime;

use super::{DEFAULT_PAGE, MAX_PAGE};
use crate::PhoneNumber;
use crate::store::StoreError;
use crate::store::idempotency::{from_millis, millis};

/// The most characters of a sender or messaging service id in a scope.
const MAX_SCOPE_ID: usize = 64;
/// The most characters of a reason kept (longer ones are cut).
const MAX_REASON: usize = 200;
/// The most characters of an event's dedupe key.
const MAX_EVENT_KEY: usize = 512;

/// Where an opt-out applies.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Scope {
    /// Every message of the account.
    Account,
    /// Messages from one sender: a number in E.164, a short code or an alphanumeric sender id.
    Sender(String),
    /// Messages through one messaging service (Twilio `MG…`) or messaging profile (Telnyx).
    Service(String),
}

impl Scope {
    /// The scope's text, as stored and printed: `account`, `sender:<id>`, `service:<id>`.
    ///
    /// # Errors
    /// A [`StoreError`] when the id is empty, longer than 64 characters or not printable ASCII
    /// (spaces allowed, as alphanumeric sender ids have them).
    pub fn key(&self) -> Result<String, StoreError> {
        let (kind, id) = match self {
            Self::Account => return Ok("account".to_owned()),
            Self::Sender(id) => ("sender", id),
            Self::Service(id) => ("service", id),
        };
        let valid = !id.is_empty() && id.len() <= MAX_SCOPE_ID && id.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
        if !valid {
            return Err(StoreError::new(format!(
                "a {kind} scope id must be 1 to {MAX_SCOPE_ID} printable ASCII characters"
            )));
        }
        Ok(format!("{kind}:{id}"))
    }
}

impl Scope {
    /// The scope of the messages from `sender`: its messaging service, or the sender itself;
    /// `None` when the sender's format is invalid.
    #[must_use]
    pub fn of_sender(sender: &crate::Sender) -> Option<Self> {
        let resolved = sender.resolve().ok()?;
        Some(match resolved.kind {
            crate::message::SenderKind::MessagingService => Self::Service(resolved.value),
            crate::message::SenderKind::PhoneNumber
            | crate::message::SenderKind::Alphanumeric
            | crate::message::SenderKind::ShortCode => Self::Sender(resolved.value),
        })
    }
}

impl FromStr for Scope {
    type Err = StoreError;

    /// Parses `account`, `sender:<id>` or `service:<id>`.
    fn from_str(text: &str) -> Result<Self, StoreError> {
        let scope = match text.split_once(':') {
            None if text == "account" => Self::Account,
            Some(("sender", id)) => Self::Sender(id.to_owned()),
            Some(("service", id)) => Self::Service(id.to_owned()),
            _ => return Err(StoreError::new("a scope is `account`, `sender:<id>` or `service:<id>`")),
        };
        scope.key().map(|_| scope)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Account => f.write_str("account"),
            Self::Sender(id) => write!(f, "sender:{id}"),
            Self::Service(id) => write!(f, "service:{id}"),
        }
    }
}

/// What a recipient asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Stop sending (STOP, an operator's add, an import).
    OptOut,
    /// Send again (START, an operator's remove).
    OptIn,
}

impl Action {
    /// Whether this action suppresses.
    #[must_use]
    pub const fn suppresses(self) -> bool {
        matches!(self, Self::OptOut)
    }
}

/// Whether a change (`new`: its time and action) replaces the recorded one (`old`): when it is
/// newer, or at the same millisecond when it opts out over an opt-in (the safe side wins a tie).
/// A change never replaces an equal one, so applying the same change twice changes nothing.
#[must_use]
pub fn supersedes(new: (SystemTime, Action), old: (SystemTime, Action)) -> bool {
    let (new_at, old_at) = (millis(new.0), millis(old.0));
    new_at > old_at || (new_at == old_at && new.1.suppresses() && !old.1.suppresses())
}

/// One opt-out or opt-in to apply. Build it with [`Change::opt_out`] or [`Change::opt_in`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    recipient: PhoneNumber,
    scope: Scope,
    action: Action,
    at: SystemTime,
    reason: String,
    event: Option<String>,
}

impl Change {
    /// `recipient` opted out of `scope` at `at` (times are kept to the millisecond), for
    /// `reason` (cut to 200 characters, control characters replaced).
    #[must_use]
    pub fn opt_out(recipient: PhoneNumber, scope: Scope, at: SystemTime, reason: &str) -> Self {
        Self::new(recipient, scope, Action::OptOut, at, reason)
    }

    /// `recipient` opted back in to `scope` at `at`, for `reason`.
    #[must_use]
    pub fn opt_in(recipient: PhoneNumber, scope: Scope, at: SystemTime, reason: &str) -> Self {
        Self::new(recipient, scope, Action::OptIn, at, reason)
    }

    /// `action` of `recipient` in `scope` at `at`, for `reason`.
    #[must_use]
    pub fn new(recipient: PhoneNumber, scope: Scope, action: Action, at: SystemTime, reason: &str) -> Self {
        let reason = reason.chars().take(MAX_REASON).map(|c| if c.is_control() { ' ' } else { c }).collect();
        Self { recipient, scope, action, at: from_millis(millis(at)), reason, event: None }
    }

    /// The same change, from the webhook event with this dedupe key (cut to 512 characters):
    /// applied once, a replay of the event is answered [`Applied::Replayed`].
    #[must_use]
    pub fn event(mut self, dedupe_key: &str) -> Self {
        self.event = Some(dedupe_key.chars().take(MAX_EVENT_KEY).collect());
        self
    }

    /// The recipient.
    #[must_use]
    pub fn recipient(&self) -> &PhoneNumber {
        &self.recipient
    }

    /// The scope.
    #[must_use]
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Opt-out or opt-in.
    #[must_use]
    pub fn action(&self) -> Action {
        self.action
    }

    /// When it happened.
    #[must_use]
    pub fn at(&self) -> SystemTime {
        self.at
    }

    /// Why.
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The dedupe key of the webhook event it came from.
    #[must_use]
    pub fn event_key(&self) -> Option<&str> {
        self.event.as_deref()
    }

    /// The time in epoch milliseconds.
    #[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
    pub(crate) fn at_millis(&self) -> i64 {
        millis(self.at)
    }
}

/// What [`SuppressionStore::apply`](super::SuppressionStore::apply) did with one change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Applied {
    /// Newer than what was recorded: it is the entry now.
    Recorded,
    /// Not newer than the entry (a late STOP after a START, say): nothing changed.
    Stale,
    /// Its event was applied before (a replayed webhook): nothing changed.
    Replayed,
}

/// A suppressed recipient in one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SuppressionEntry {
    /// The recipient (its `Debug` and `Display` are masked).
    pub recipient: PhoneNumber,
    /// Where the opt-out applies.
    pub scope: Scope,
    /// When the recipient opted out (to the millisecond).
    pub at: SystemTime,
    /// Why (`keyword:STOP`, `provider:STOP`, `operator`, `import`, …).
    pub reason: String,
    /// The dedupe key of the webhook event it came from.
    pub event: Option<String>,
}

impl SuppressionEntry {
    /// An entry read back from a store; a number that is not E.164 or a scope that does not
    /// parse is a corrupt record.
    pub(crate) fn read(
        recipient: &str,
        scope: &str,
        at: i64,
        reason: String,
        event: Option<String>,
    ) -> Result<Self, StoreError> {
        let key = crate::redact::mask_phone_number(recipient);
        let number = PhoneNumber::parse(recipient)
            .map_err(|_| StoreError::corrupt(&key, "the recipient is not an E.164 number"))?;
        let scope = scope.parse().map_err(|_| StoreError::corrupt(&key, "a scope does not parse"))?;
        Ok(Self { recipient: number, scope, at: from_millis(at), reason, event })
    }
}

/// Where a listing goes on: after this recipient and scope.
#[derive(Clone, PartialEq, Eq)]
pub struct Cursor {
    pub(crate) recipient: String,
    pub(crate) scope: String,
}

impl Cursor {
    /// The cursor after `entry`.
    ///
    /// # Errors
    /// A [`StoreError`] when the entry's scope is malformed.
    pub fn after(entry: &SuppressionEntry) -> Result<Self, StoreError> {
        Ok(Self { recipient: entry.recipient.as_str().to_owned(), scope: entry.scope.key()? })
    }
}

impl fmt::Debug for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let recipient = crate::redact::mask_phone_number(&self.recipient);
        f.debug_struct("Cursor").field("recipient", &recipient).field("scope", &self.scope).finish()
    }
}

/// Which page of a listing to read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SuppressionPage {
    /// Go on after this entry (`None`: from the start).
    pub after: Option<Cursor>,
    /// The most entries, 1 to [`MAX_PAGE`] (default [`DEFAULT_PAGE`]).
    pub limit: usize,
}

impl Default for SuppressionPage {
    fn default() -> Self {
        Self { after: None, limit: DEFAULT_PAGE }
    }
}

impl SuppressionPage {
    /// The first page, of at most `limit` entries.
    #[must_use]
    pub fn first(limit: usize) -> Self {
        Self { after: None, limit }
    }

    /// The same page size, after `cursor`.
    #[must_use]
    pub fn after(self, cursor: Cursor) -> Self {
        Self { after: Some(cursor), ..self }
    }

    /// The limit, taken into `1..=MAX_PAGE`.
    pub(crate) fn size(&self) -> usize {
        self.limit.clamp(1, MAX_PAGE)
    }
}

/// One page of suppressed entries.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SuppressionListing {
    /// The entries, ordered by recipient and scope.
    pub entries: Vec<SuppressionEntry>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<Cursor>,
}

impl SuppressionListing {
    /// The listing of `entries` read for a page of `size`: a full page may have a next one.
    pub(crate) fn of(entries: Vec<SuppressionEntry>, size: usize) -> Result<Self, StoreError> {
        let next = match entries.last() {
            Some(last) if entries.len() >= size => Some(Cursor::after(last)?),
            _ => None,
        };
        Ok(Self { entries, next })
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn a_newer_change_wins_and_a_tie_goes_to_the_opt_out() {
        let (t1, t2) = (UNIX_EPOCH + Duration::from_secs(1), UNIX_EPOCH + Duration::from_secs(2));
        let (out, r#in) = (Action::OptOut, Action::OptIn);
        for (new, old, wins) in [
            ((t2, r#in), (t1, out), true),
            ((t1, out), (t2, r#in), false),
            ((t1, out), (t1, r#in), true),
            ((t1, r#in), (t1, out), false),
            ((t1, out), (t1, out), false),
            ((t1, r#in), (t1, r#in), false),
        ] {
            assert_eq!(supersedes(new, old), wins, "{new:?} over {old:?}");
        }
        let sub_millisecond = (t1 + Duration::from_micros(300), r#in);
        assert!(!supersedes(sub_millisecond, (t1, r#in)), "times compare to the millisecond");
    }

    #[test]
    fn scopes_round_trip_and_malformed_ids_are_refused() {
        for text in ["account", "sender:+15005550006", "sender:ACME", "service:MG0123", "service:a:b"] {
            assert_eq!(text.parse::<Scope>().unwrap().to_string(), text);
        }
        for bad in ["", "sender:", "sender:\tx", "other:x", "Account", &format!("sender:{}", "x".repeat(65))] {
            assert!(bad.parse::<Scope>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn reasons_and_event_keys_are_bounded() {
        let number = PhoneNumber::parse("+14155550123").unwrap();
        let change = Change::opt_out(number, Scope::Account, UNIX_EPOCH, &format!("a\nb{}", "r".repeat(500)))
            .event(&"k".repeat(600));
        assert_eq!(change.reason().chars().count(), 200);
        assert!(change.reason().starts_with("a b"));
        assert_eq!(change.event_key().map(str::len), Some(512));
        assert!(!format!("{change:?}").contains("4155550123"));
    }
}
