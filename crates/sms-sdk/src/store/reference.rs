//! The correlation index: which idempotency key a correlation reference names (see
//! [`crate::correlation`]), so a status webhook can settle its key's unknown record.

use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;

use super::{IdempotencyStore, Operator, Record, Resolution, Resolved, StoreError};

/// How long a store remembers a reference by default: 7 days (providers stop redelivering a
/// status webhook long before).
pub const DEFAULT_REFERENCE_RETENTION: Duration = Duration::from_hours(7 * 24);

/// Remembers which idempotency key a correlation reference names, for a retention period.
///
/// A reference is derived from its key with a keyed hash, so the pair never changes: writing it
/// again only extends its retention. Expired references are never found.
pub trait ReferenceIndex: Send + Sync + 'static {
    /// Remembers that `reference` names `key` until `now + retention`.
    fn remember_reference<'a>(
        &'a self,
        reference: &'a str,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The key `reference` names at `now`, when it is remembered and has not expired.
    fn find_reference<'a>(
        &'a self,
        reference: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>>;
}

/// What [`settle_reference`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Settled {
    /// The key's unknown (or stale reserved) record is now `accepted` with the provider's id.
    Accepted {
        /// The idempotency key.
        key: String,
    },
    /// No live reference, or no record for its key: nothing changed.
    NotFound,
    /// The key's record is not unresolved (accepted, rejected, or a send still in progress):
    /// nothing changed.
    Unchanged {
        /// The idempotency key.
        key: String,
        /// The record's state.
        state: super::State,
    },
}

/// Finds the key `reference` names and settles its record as sent by `provider` with
/// `provider_id`, if (and only if) it is unresolved at `now`: `unknown`, or `reserved` for
/// longer than `stale_after`. The settling is the store's atomic compare-and-set on the state
/// ([`Operator::resolve`]); the reference's key never changes, so finding it first is safe.
///
/// # Errors
/// A [`StoreError`] when the store fails; then nothing changed, or the record was settled.
pub async fn settle_reference<S>(
    store: &S,
    reference: &str,
    provider: &str,
    provider_id: &str,
    ttl: Duration,
    stale_after: Duration,
    now: SystemTime,
) -> Result<Settled, StoreError>
where
    S: ReferenceIndex + Operator + IdempotencyStore + ?Sized,
{
    let Some(key) = store.find_reference(reference, now).await? else { return Ok(Settled::NotFound) };
    // An unknown record knows where its request to `provider` went: the settled one keeps it.
    let endpoint = match store.get(&key).await? {
        Some(Record::Unknown { error, .. }) => {
            error.attempts.iter().rev().find(|a| a.provider == provider).and_then(|a| a.endpoint.clone())
        }
        _ => None,
    };
    let resolution =
        Resolution::Sent { provider: provider.to_owned(), provider_id: provider_id.to_owned(), ttl, endpoint };
    Ok(match store.resolve(&key, resolution, stale_after, now).await? {
        Resolved::Done => Settled::Accepted { key },
        Resolved::NotFound => Settled::NotFound,
        Resolved::Refused(record) => Settled::Unchanged { key, state: record.state() },
    })
}

impl<S: ReferenceIndex + ?Sized> ReferenceIndex for std::sync::Arc<S> {
    fn remember_reference<'a>(
        &'a self,
        reference: &'a str,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).remember_reference(reference, key, now, retention)
    }

    fn find_reference<'a>(
        &'a self,
        reference: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        (**self).find_reference(reference, now)
    }
}
