//! The suppression list: recipients who opted out, per sender, messaging service or account, on
//! the same four backends as the idempotency records (memory, SQLite, PostgreSQL, Redis).
//!
//! Each entry is the latest opt-out or opt-in of one recipient (E.164, compared exactly) in one
//! [`Scope`]. A change is applied only when it is newer than what is recorded ([`supersedes`]), so
//! a STOP delivered late never overrides a newer START; a change that carries its webhook event's
//! dedupe key is applied at most once, so a replayed webhook changes nothing. Opt-ins are kept as
//! entries too (never listed), which is what lets an older opt-out arrive late and lose.
//!
//! ```
//! use std::time::SystemTime;
//! use sms_sdk::PhoneNumber;
//! use sms_sdk::store::suppression::{Applied, Change, MemorySuppressionStore, Scope, SuppressionStore};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let store = MemorySuppressionStore::new();
//! let recipient = PhoneNumber::parse("+14155550123")?;
//! let stop = Change::opt_out(recipient.clone(), Scope::Account, SystemTime::now(), "keyword:STOP");
//! assert_eq!(store.apply(&[stop], SystemTime::now()).await?, [Applied::Recorded]);
//! assert!(store.check(&recipient, &[Scope::Account]).await?.is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
//!
//! Open one from the same URLs as the idempotency stores with [`open`]; SQLite, PostgreSQL and
//! Redis suppression stores are built on an idempotency store of that backend and share its
//! connection, its timeouts and its errors.

#[cfg(feature = "dynamodb")]
mod dynamodb;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "redis")]
mod redis;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
mod types;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

#[cfg(feature = "dynamodb")]
#[cfg_attr(docsrs, doc(cfg(feature = "dynamodb")))]
pub use self::dynamodb::DynamoSuppressionStore;
pub use self::memory::MemorySuppressionStore;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use self::postgres::PostgresSuppressionStore;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub use self::redis::RedisSuppressionStore;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use self::sqlite::SqliteSuppressionStore;
pub use self::types::{
    Action, Applied, Change, Cursor, Scope, SuppressionEntry, SuppressionListing, SuppressionPage, supersedes,
};
use super::StoreError;
use crate::PhoneNumber;
use futures_util::future::BoxFuture;

/// The most changes one [`SuppressionStore::apply`] call takes (an import sends batches of
/// [`IMPORT_BATCH`]).
pub const MAX_BATCH: usize = 10_000;
/// The changes an import writes per call: its memory stays flat however long the file is.
pub const IMPORT_BATCH: usize = 1_000;
/// The entries of a page when the caller asks for none.
pub const DEFAULT_PAGE: usize = 500;
/// The most entries of one page.
pub const MAX_PAGE: usize = 10_000;
/// The most scopes one [`SuppressionStore::check`] looks at.
pub const MAX_CHECK_SCOPES: usize = 4;
/// How long a webhook event's dedupe key is remembered: 30 days (providers redeliver for hours
/// or days; an event with its own time is ordered by it even later).
pub const EVENT_RETENTION: Duration = Duration::from_hours(30 * 24);

/// A suppression list: apply opt-outs and opt-ins, check a recipient, list the suppressed.
///
/// Usable as a trait object (`Arc<dyn SuppressionStore>`); every shipped backend passes
/// `testing::suppression_contract::run`.
pub trait SuppressionStore: Send + Sync + 'static {
    /// Applies `changes` in order, each atomically, and says for each what happened: recorded
    /// (newer than the entry, by [`supersedes`]), stale (an older or equal change), or replayed
    /// (its event's dedupe key was seen within [`EVENT_RETENTION`] of `now`). At most
    /// [`MAX_BATCH`] changes.
    fn apply<'a>(&'a self, changes: &'a [Change], now: SystemTime) -> BoxFuture<'a, Result<Vec<Applied>, StoreError>>;

    /// The opt-out that suppresses `recipient` in any of `scopes` (at most
    /// [`MAX_CHECK_SCOPES`]), if there is one (the newest when several do). One indexed lookup.
    fn check<'a>(
        &'a self,
        recipient: &'a PhoneNumber,
        scopes: &'a [Scope],
    ) -> BoxFuture<'a, Result<Option<SuppressionEntry>, StoreError>>;

    /// One page of the suppressed entries, ordered by recipient and scope. Opt-ins are not listed.
    fn list(&self, page: SuppressionPage) -> BoxFuture<'_, Result<SuppressionListing, StoreError>>;
}

impl<S: SuppressionStore + ?Sized> SuppressionStore for Arc<S> {
    fn apply<'a>(&'a self, changes: &'a [Change], now: SystemTime) -> BoxFuture<'a, Result<Vec<Applied>, StoreError>> {
        (**self).apply(changes, now)
    }

    fn check<'a>(
        &'a self,
        recipient: &'a PhoneNumber,
        scopes: &'a [Scope],
    ) -> BoxFuture<'a, Result<Option<SuppressionEntry>, StoreError>> {
        (**self).check(recipient, scopes)
    }

    fn list(&self, page: SuppressionPage) -> BoxFuture<'_, Result<SuppressionListing, StoreError>> {
        (**self).list(page)
    }
}

/// Opens a suppression store from the URL of an idempotency store: `memory`, `sqlite:PATH`,
/// `postgres://…` (or `postgresql://…`), `redis://…` (or `rediss://…`, `redis-cluster://…`,
/// `rediss-cluster://…`), `dynamodb://TABLE…`. Creates the tables on first use (DynamoDB's
/// once, by `sms-sdk store init`).
///
/// # Errors
/// A [`StoreError`] when the URL names no shipped store (or one whose feature is off), or the
/// store cannot be reached.
pub async fn open(url: &str) -> Result<Arc<dyn SuppressionStore>, StoreError> {
    super::Stores::open(url).await.map(|stores| stores.suppression)
}

/// Refuses a batch over [`MAX_BATCH`] or a check over [`MAX_CHECK_SCOPES`] before any I/O.
pub(crate) fn bounded(changes: usize, scopes: usize) -> Result<(), StoreError> {
    if changes > MAX_BATCH {
        return Err(StoreError::new(format!("{changes} changes in one call; at most {MAX_BATCH}")));
    }
    if scopes > MAX_CHECK_SCOPES {
        return Err(StoreError::new(format!("{scopes} scopes in one check; at most {MAX_CHECK_SCOPES}")));
    }
    Ok(())
}
