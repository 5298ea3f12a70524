//! The idempotency contract: a key names a message; a store reserves it atomically before any
//! request and records the outcome after it, so a repeat replays the first result.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use futures_util::future::BoxFuture;

use super::{Fingerprint, StoreError};
use crate::PhoneNumber;
use crate::error::ErrorRecord;
use crate::receipt::{Receipt, new_send_id};

/// How long accepted and rejected records are kept by default: 24 hours.
pub const DEFAULT_TTL: Duration = Duration::from_hours(24);
/// Age after which a reservation counts as an unknown outcome by default: 300 seconds.
pub const DEFAULT_STALE_RESERVATION: Duration = Duration::from_mins(5);
/// The most entries one [`Operator::list`] call returns by default: 1,000.
pub const DEFAULT_LIST_LIMIT: usize = 1_000;

/// The id of one reservation: only its holder may finalize the key.
///
/// A new id is held inline (no allocation); an id read back from a store is its text.
#[derive(Clone)]
pub struct ReservationId(IdText);

/// The text of a [`ReservationId`].
#[derive(Clone)]
enum IdText {
    /// A random UUID, hyphenated, lowercase: ASCII.
    Uuid([u8; 36]),
    /// Any other text (a stored id).
    Other(String),
}

impl ReservationId {
    /// A new random id.
    #[must_use]
    pub fn new() -> Self {
        let mut text = [0; 36];
        crate::ids::uuid_v4().hyphenated().encode_lower(&mut text);
        Self(IdText::Uuid(text))
    }

    /// Wraps a stored id.
    #[must_use]
    pub fn from_string(id: impl Into<String>) -> Self {
        Self(IdText::Other(id.into()))
    }

    /// The id as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // `encode_lower` wrote ASCII.
            IdText::Uuid(text) => std::str::from_utf8(text).unwrap_or_default(),
            IdText::Other(text) => text,
        }
    }
}

impl Default for ReservationId {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialEq for ReservationId {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ReservationId {}

impl std::hash::Hash for ReservationId {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for ReservationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ReservationId").field(&self.as_str()).finish()
    }
}

impl Serialize for ReservationId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ReservationId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from_string)
    }
}

/// The state of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// A send holds the key (or held it and stopped: then the outcome is unknown).
    Reserved,
    /// A provider accepted the message.
    Accepted,
    /// Nothing was accepted; the same message may be sent again.
    Rejected,
    /// The message may have been sent; never resent automatically.
    Unknown,
}

impl State {
    /// `reserved`, `accepted`, `rejected` or `unknown`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Reserved => "reserved",
            Self::Accepted => "accepted",
            Self::Rejected => "rejected",
            Self::Unknown => "unknown",
        }
    }

    /// Parses [`State::as_str`].
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Reserved, Self::Accepted, Self::Rejected, Self::Unknown].into_iter().find(|s| s.as_str() == text)
    }
}

/// What a store holds for a key. Never a body. Its `Debug` and `Serialize` (a log form) mask
/// the recipient.
///
/// Every state keeps the recipient (`to`, E.164) and when the send reserved the key, so that an
/// operator can look an unknown outcome up; records written before stored format version 1 have
/// neither (`None`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Record {
    /// A send holds the key.
    Reserved {
        /// The message's fingerprint.
        fingerprint: Fingerprint,
        /// The holder.
        reservation_id: ReservationId,
        /// When it was reserved.
        #[serde(with = "epoch_ms", rename = "reserved_at_ms")]
        reserved_at: SystemTime,
        /// The message's recipient (`Debug` and `Serialize` write it masked).
        #[serde(default, skip_deserializing, serialize_with = "masked", skip_serializing_if = "Option::is_none")]
        to: Option<PhoneNumber>,
    },
    /// Accepted, with the result to replay.
    Accepted {
        /// The message's fingerprint.
        fingerprint: Fingerprint,
        /// The send's result.
        result: Receipt,
        /// Where the message went (`scheme://host[:port]`): the accepting request's endpoint,
        /// or, for a key an operator settled, the endpoint it was settled for. A client replays
        /// the result only when one of its adapters sends there; `None` (unknown) replays
        /// anywhere.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoint: Option<String>,
        /// The message's recipient (`Debug` and `Serialize` write it masked).
        #[serde(default, skip_deserializing, serialize_with = "masked", skip_serializing_if = "Option::is_none")]
        to: Option<PhoneNumber>,
        /// When the send reserved the key.
        #[serde(default, with = "epoch_ms_opt", rename = "reserved_at_ms", skip_serializing_if = "Option::is_none")]
        reserved_at: Option<SystemTime>,
    },
    /// Rejected: nothing was accepted.
    Rejected {
        /// The message's fingerprint.
        fingerprint: Fingerprint,
        /// The error, in its log form.
        error: ErrorRecord,
        /// The message's recipient (`Debug` and `Serialize` write it masked).
        #[serde(default, skip_deserializing, serialize_with = "masked", skip_serializing_if = "Option::is_none")]
        to: Option<PhoneNumber>,
        /// When the send reserved the key.
        #[serde(default, with = "epoch_ms_opt", rename = "reserved_at_ms", skip_serializing_if = "Option::is_none")]
        reserved_at: Option<SystemTime>,
    },
    /// The outcome is unknown.
    Unknown {
        /// The message's fingerprint.
        fingerprint: Fingerprint,
        /// The error, in its log form.
        error: ErrorRecord,
        /// The message's recipient (`Debug` and `Serialize` write it masked).
        #[serde(default, skip_deserializing, serialize_with = "masked", skip_serializing_if = "Option::is_none")]
        to: Option<PhoneNumber>,
        /// When the send reserved the key.
        #[serde(default, with = "epoch_ms_opt", rename = "reserved_at_ms", skip_serializing_if = "Option::is_none")]
        reserved_at: Option<SystemTime>,
    },
}

impl Record {
    /// The record's state.
    #[must_use]
    pub fn state(&self) -> State {
        match self {
            Self::Reserved { .. } => State::Reserved,
            Self::Accepted { .. } => State::Accepted,
            Self::Rejected { .. } => State::Rejected,
            Self::Unknown { .. } => State::Unknown,
        }
    }

    /// The fingerprint of the message the key names.
    #[must_use]
    pub fn fingerprint(&self) -> &Fingerprint {
        match self {
            Self::Reserved { fingerprint, .. }
            | Self::Accepted { fingerprint, .. }
            | Self::Rejected { fingerprint, .. }
            | Self::Unknown { fingerprint, .. } => fingerprint,
        }
    }

    /// The message's recipient, when the record keeps it.
    #[must_use]
    pub fn to(&self) -> Option<&PhoneNumber> {
        match self {
            Self::Reserved { to, .. }
            | Self::Accepted { to, .. }
            | Self::Rejected { to, .. }
            | Self::Unknown { to, .. } => to.as_ref(),
        }
    }

    /// When the send reserved the key (when it started), when the record keeps it.
    #[must_use]
    pub fn reserved_at(&self) -> Option<SystemTime> {
        match self {
            Self::Reserved { reserved_at, .. } => Some(*reserved_at),
            Self::Accepted { reserved_at, .. }
            | Self::Rejected { reserved_at, .. }
            | Self::Unknown { reserved_at, .. } => *reserved_at,
        }
    }

    /// True for `unknown`, and for `reserved` longer than `stale_after` at `now`: the keys an
    /// operator must reconcile.
    #[must_use]
    pub fn is_unresolved(&self, stale_after: Duration, now: SystemTime) -> bool {
        match self {
            Self::Unknown { .. } => true,
            Self::Reserved { reserved_at, .. } => now.duration_since(*reserved_at).is_ok_and(|age| age > stale_after),
            Self::Accepted { .. } | Self::Rejected { .. } => false,
        }
    }
}

/// What a send reserves a key for: its message's fingerprint and recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Claim<'a> {
    /// The message's fingerprint.
    pub fingerprint: &'a Fingerprint,
    /// The message's recipient (E.164), which the record keeps so that an unknown outcome can be
    /// looked up; `None` when the caller has none to give.
    pub to: Option<&'a str>,
}

impl<'a> Claim<'a> {
    /// A claim for the message with `fingerprint`.
    #[must_use]
    pub const fn new(fingerprint: &'a Fingerprint) -> Self {
        Self { fingerprint, to: None }
    }

    /// The same claim, for a message to `to`.
    #[must_use]
    pub const fn to(mut self, to: &'a str) -> Self {
        self.to = Some(to);
        self
    }
}

/// The record a send writes when it finishes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinalRecord {
    /// Accepted, with the result to replay.
    Accepted(Receipt),
    /// Rejected: nothing was accepted.
    Rejected(ErrorRecord),
    /// The outcome is unknown (never expires).
    Unknown(ErrorRecord),
}

impl FinalRecord {
    /// The record's state.
    #[must_use]
    pub fn state(&self) -> State {
        match self {
            Self::Accepted(_) => State::Accepted,
            Self::Rejected(_) => State::Rejected,
            Self::Unknown(_) => State::Unknown,
        }
    }

    /// The stored record that replaces the reservation `reserved` (whose fingerprint, recipient
    /// and time it keeps).
    #[must_use]
    pub fn into_record(self, reserved: &Record) -> Record {
        let (fingerprint, to, reserved_at) =
            (reserved.fingerprint().clone(), reserved.to().cloned(), reserved.reserved_at());
        match self {
            Self::Accepted(result) => {
                let endpoint = result.attempts.last().and_then(|a| a.endpoint.clone());
                Record::Accepted { fingerprint, result, endpoint, to, reserved_at }
            }
            Self::Rejected(error) => Record::Rejected { fingerprint, error, to, reserved_at },
            Self::Unknown(error) => Record::Unknown { fingerprint, error, to, reserved_at },
        }
    }

    /// When a record finalized at `now` expires: never for `unknown`. A `ttl` too long to add
    /// to `now` runs to the end of year 9999.
    #[must_use]
    pub fn expires_at(&self, ttl: Duration, now: SystemTime) -> Option<SystemTime> {
        match self {
            Self::Unknown(_) => None,
            Self::Accepted(_) | Self::Rejected(_) => Some(later(now, ttl)),
        }
    }
}

/// The result of [`IdempotencyStore::reserve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reservation {
    /// The key is now held by this id.
    Acquired(ReservationId),
    /// The key was not claimable; this is its record, unchanged.
    Existing(Box<Record>),
}

/// The result of [`IdempotencyStore::finalize`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finalized {
    /// The record was written.
    Written,
    /// The reservation no longer owns the key; nothing was written.
    NotOwner,
}

/// Where idempotency records live. One atomic compare-and-set (`reserve`) and an owner-only
/// write (`finalize`). Usable as a trait object (`Arc<dyn IdempotencyStore>`).
///
/// Contract (checked by `testing::store_contract`):
/// - `reserve` claims the key when there is no record, when the record expired
///   (`expires_at <= now`), or when it is `rejected` with the same fingerprint; otherwise it
///   returns the record unchanged. `reserved` and `unknown` records never expire.
/// - `finalize` writes only while `reservation` still owns the key; `unknown` never expires,
///   `accepted` and `rejected` expire `ttl` after `now`.
pub trait IdempotencyStore: Send + Sync + 'static {
    /// The live (unexpired) record of `key`.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>>;

    /// Claims `key` for a send of the message `claim` describes, atomically.
    fn reserve<'a>(
        &'a self,
        key: &'a str,
        claim: Claim<'a>,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>>;

    /// Writes the outcome of the send that holds `reservation`.
    fn finalize<'a>(
        &'a self,
        key: &'a str,
        reservation: &'a ReservationId,
        record: FinalRecord,
        ttl: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Finalized, StoreError>>;

    /// The store's correlation index, when it has one (every shipped store does): a client with
    /// a correlation secret remembers each keyed send's reference there. `None` by default.
    fn references(&self) -> Option<&dyn super::ReferenceIndex> {
        None
    }
}

/// Which records [`Operator::list`] returns.
///
/// The keys in progress right now, with their age, are `State(State::Reserved)`: each
/// [`Record::Reserved`] has its `reserved_at`. `Unresolved` leaves out a reservation until it is
/// older than the stale limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Filter {
    /// Every live record.
    All,
    /// Records in one state.
    State(State),
    /// `unknown` records, and `reserved` ones older than this: what an operator must reconcile.
    Unresolved {
        /// The stale-reservation limit.
        stale_after: Duration,
    },
}

/// One key and its record, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Entry {
    /// The idempotency key.
    pub key: String,
    /// Its record.
    pub record: Record,
    /// When it expires; `None` for `reserved` and `unknown`.
    #[serde(with = "epoch_ms_opt", rename = "expires_at_ms")]
    pub expires_at: Option<SystemTime>,
}

/// Which part of a listing [`Operator::list`] returns: at most `limit` entries whose keys start
/// with `prefix`, from `cursor` on.
///
/// ```
/// use sms_sdk::store::{Page, DEFAULT_LIST_LIMIT};
///
/// let first = Page::prefixed("order:");
/// assert_eq!((first.limit, first.cursor), (DEFAULT_LIST_LIMIT, None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Page {
    /// Only keys that start with this; empty for every key.
    pub prefix: String,
    /// Where to go on: the [`Listing::next`] of the page before (opaque), or `None` to start.
    pub cursor: Option<String>,
    /// The most entries to return (0 counts as 1). Default [`DEFAULT_LIST_LIMIT`].
    pub limit: usize,
}

impl Default for Page {
    fn default() -> Self {
        Self { prefix: String::new(), cursor: None, limit: DEFAULT_LIST_LIMIT }
    }
}

impl Page {
    /// The first page of the keys that start with `prefix`, of at most [`DEFAULT_LIST_LIMIT`]
    /// entries (set [`limit`](Self::limit) and [`cursor`](Self::cursor) to change either).
    #[must_use]
    pub fn prefixed(prefix: impl Into<String>) -> Self {
        Self { prefix: prefix.into(), ..Self::default() }
    }
}

/// One page of [`Operator::list`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Listing {
    /// The matching live records of this page.
    pub entries: Vec<Entry>,
    /// Set while more records may follow: pass it as the next [`Page::cursor`]. A page may hold
    /// fewer entries than its limit (even none) while this is set; `None` ends the listing.
    pub next: Option<String>,
}

/// What the operator found out from the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resolution {
    /// The provider has the message: the key becomes `accepted` and later sends replay it.
    Sent {
        /// The adapter that sent it.
        provider: String,
        /// The provider's message id.
        provider_id: String,
        /// How long to keep the accepted record.
        ttl: Duration,
        /// Where the message was sent (`scheme://host[:port]`, as
        /// [`AdapterInfo::endpoint`](crate::adapter::AdapterInfo::endpoint) says): later sends
        /// replay the record only through an adapter that sends there, as for a record a send
        /// wrote. `None` replays anywhere.
        endpoint: Option<String>,
    },
    /// The provider does not have it: the record is removed and the next send goes out.
    NotSent,
}

/// The result of [`Operator::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// The record was settled.
    Done,
    /// There is no record for the key.
    NotFound,
    /// The record is not unresolved (it is accepted, rejected, or a fresh reservation); nothing
    /// changed.
    Refused(Box<Record>),
}

/// Operator tools every shipped store implements: find the keys to reconcile and settle them.
pub trait Operator: Send + Sync + 'static {
    /// Lists one page of the live records matching `filter` at `now`: ordered by key (Redis:
    /// by key within a page, pages in its `SCAN` order), at most `page.limit` of them, never the
    /// whole store at once. Go on with [`Listing::next`] until it is `None`.
    fn list(&self, filter: Filter, now: SystemTime, page: Page) -> BoxFuture<'_, Result<Listing, StoreError>>;

    /// Settles `key` if it is unresolved at `now` (unknown, or reserved for longer than
    /// `stale_after`), atomically.
    fn resolve<'a>(
        &'a self,
        key: &'a str,
        resolution: Resolution,
        stale_after: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Resolved, StoreError>>;
}

impl<S: IdempotencyStore + ?Sized> IdempotencyStore for Arc<S> {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        (**self).get(key)
    }
    fn reserve<'a>(
        &'a self,
        key: &'a str,
        claim: Claim<'a>,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        (**self).reserve(key, claim, now)
    }
    fn finalize<'a>(
        &'a self,
        key: &'a str,
        reservation: &'a ReservationId,
        record: FinalRecord,
        ttl: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Finalized, StoreError>> {
        (**self).finalize(key, reservation, record, ttl, now)
    }
    fn references(&self) -> Option<&dyn super::ReferenceIndex> {
        (**self).references()
    }
}

impl<S: Operator + ?Sized> Operator for Arc<S> {
    fn list(&self, filter: Filter, now: SystemTime, page: Page) -> BoxFuture<'_, Result<Listing, StoreError>> {
        (**self).list(filter, now, page)
    }
    fn resolve<'a>(
        &'a self,
        key: &'a str,
        resolution: Resolution,
        stale_after: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Resolved, StoreError>> {
        (**self).resolve(key, resolution, stale_after, now)
    }
}

impl Filter {
    /// Whether `record` matches at `now`.
    #[must_use]
    pub fn matches(self, record: &Record, now: SystemTime) -> bool {
        match self {
            Self::All => true,
            Self::State(state) => record.state() == state,
            Self::Unresolved { stale_after } => record.is_unresolved(stale_after, now),
        }
    }
}

/// The result an operator's "sent" resolution stores: the provider and its id, delivery unknown.
/// Replays take the encoding and segments from the message being sent.
pub(crate) fn resolved_receipt(provider: String, provider_id: String) -> Receipt {
    Receipt {
        id: new_send_id(),
        provider: provider.clone(),
        provider_id,
        delivery: crate::outcome::Delivery::Unknown,
        encoding: crate::encoding::Encoding::Gsm7,
        segments: 0,
        attempted_providers: vec![provider],
        attempts: Vec::new(),
        replayed: false,
    }
}

/// The latest time a store writes, in epoch milliseconds: the end of year 9999.
pub(crate) const MAX_MILLIS: i64 = 253_402_300_799_999;

/// Milliseconds since the epoch: 0 before it, [`MAX_MILLIS`] after the end of year 9999.
pub(crate) fn millis(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX).min(MAX_MILLIS))
}

/// The time `ms` milliseconds after the epoch, `ms` taken into `0..=MAX_MILLIS`.
pub(crate) fn from_millis(ms: i64) -> SystemTime {
    let ms = u64::try_from(ms.clamp(0, MAX_MILLIS)).unwrap_or(0);
    UNIX_EPOCH.checked_add(Duration::from_millis(ms)).unwrap_or(UNIX_EPOCH)
}

/// `at + by`; when that overflows, the end of year 9999 (or `at`, if later).
pub(crate) fn later(at: SystemTime, by: Duration) -> SystemTime {
    at.checked_add(by).unwrap_or_else(|| from_millis(MAX_MILLIS).max(at))
}

/// The epoch milliseconds before which a reservation is stale at `now`.
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
pub(crate) fn stale_cutoff(now: SystemTime, stale_after: Duration) -> i64 {
    millis(now).saturating_sub(i64::try_from(stale_after.as_millis()).unwrap_or(i64::MAX))
}

/// A recipient as the log form writes it: masked.
#[allow(clippy::ref_option)] // the signature serde's `serialize_with` requires
fn masked<S: serde::Serializer>(to: &Option<PhoneNumber>, s: S) -> Result<S::Ok, S::Error> {
    match to {
        Some(to) => s.serialize_str(&to.masked()),
        None => s.serialize_none(),
    }
}

mod epoch_ms {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(at: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(super::millis(*at))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        i64::deserialize(d).map(super::from_millis)
    }
}

mod epoch_ms_opt {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SystemTime>, D::Error> {
        Option::<i64>::deserialize(d).map(|ms| ms.map(super::from_millis))
    }

    #[allow(clippy::ref_option)] // the signature serde's `with` requires
    pub(super) fn serialize<S: Serializer>(at: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
        match at {
            Some(at) => s.serialize_i64(super::millis(*at)),
            None => s.serialize_none(),
        }
    }
}
