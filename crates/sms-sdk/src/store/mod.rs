//! Stores: the idempotency records that make a repeat send replay its first result instead of
//! texting the customer twice, and the webhook dedupe keys that make a redelivered event count
//! once. Every shipped backend (memory, SQLite, PostgreSQL, Redis) implements both contracts,
//! [`IdempotencyStore`] (with its operator tools, [`Operator`]) and [`DedupeStore`], and passes
//! both contract suites; they fail with one error type, [`StoreError`].
//!
//! Concurrent sends with the same key on one [`Client`](crate::Client) share one request even
//! without a store. With a store, the key is reserved atomically before any request and the
//! outcome is recorded after it, so a repeat from another thread, process or machine replays an
//! accepted result, refuses to resend an unknown one, and sends again after a proven rejection.
//!
//! ```
//! use sms_sdk::store::MemoryStore;
//! use sms_sdk::testing::MemoryAdapter;
//! use sms_sdk::{Client, Message};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let memory = MemoryAdapter::new();
//! let client = Client::builder().adapter(memory.clone()).idempotency(MemoryStore::new()).build()?;
//! let message = Message::new("+14155550123", "Order 123 shipped.").idempotency_key("order:123:shipped:v1");
//! let first = client.send(&message).await?;
//! let second = client.send(&message).await?;
//! assert!(second.replayed && second.provider_id == first.provider_id);
//! assert_eq!(memory.sent().len(), 1);
//! # Ok::<(), sms_sdk::Error>(()) }).unwrap();
//! ```
//!
//! Stores open from a URL with [`open`]: `memory`, `sqlite:PATH`, `postgres://…`, `redis://…`,
//! `rediss://…`, `redis-cluster://…`, `rediss-cluster://…`, `dynamodb://TABLE`.

mod dedupe;
#[cfg(feature = "dynamodb")]
#[cfg_attr(docsrs, doc(cfg(feature = "dynamodb")))]
pub mod dynamodb;
mod error;
mod fingerprint;
mod idempotency;
mod memory;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub mod postgres;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;
mod reference;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
mod row;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub mod sqlite;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
mod stored;
pub mod suppression;
pub(crate) mod timeouts;

use std::sync::Arc;

pub use self::dedupe::{ClaimToken, DEFAULT_LEASE, DEFAULT_RETENTION, DedupeClaim, DedupeStore};
pub use self::error::StoreError;
pub use self::fingerprint::Fingerprint;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
pub(crate) use self::idempotency::stale_cutoff;
pub use self::idempotency::{
    Claim, DEFAULT_LIST_LIMIT, DEFAULT_STALE_RESERVATION, DEFAULT_TTL, Entry, Filter, FinalRecord, Finalized,
    IdempotencyStore, Listing, Operator, Page, Record, Reservation, ReservationId, Resolution, Resolved, State,
};
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb"))]
pub(crate) use self::idempotency::{MAX_MILLIS, from_millis, millis};
pub(crate) use self::idempotency::{later, resolved_receipt};
pub use self::memory::MemoryStore;
pub use self::reference::{DEFAULT_REFERENCE_RETENTION, ReferenceIndex, Settled, settle_reference};
pub use self::timeouts::{DEFAULT_CONNECT_TIMEOUT, DEFAULT_OPERATION_TIMEOUT};

/// A store with its operator tools, correlation index and webhook deduplication, as [`open`]
/// returns it.
pub trait Store: IdempotencyStore + Operator + DedupeStore + ReferenceIndex {}

impl<T: IdempotencyStore + Operator + DedupeStore + ReferenceIndex> Store for T {}

/// Opens a store from a URL: `memory`, `sqlite:PATH`, `postgres://…` (or `postgresql://…`),
/// `redis://…` (or `rediss://…` over TLS), `redis-cluster://…` (or `rediss-cluster://…`); the
/// Redis forms and their TLS parameters are in [`redis`]; `dynamodb://TABLE?region=…&endpoint=…`
/// (see [`dynamodb`]). Creates the schema on first use (DynamoDB's table is created once, by
/// `sms-sdk store init` or `DynamoStoreBuilder::create_table`).
///
/// # Errors
/// A [`StoreError`] when the URL names no shipped store (or one whose feature is off), or the
/// store cannot be reached.
pub async fn open(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    Stores::open(url).await.map(|stores| stores.records)
}

/// Everything one store URL holds, on one connection: the idempotency records (with the
/// operator tools, the correlation index and the webhook dedupe keys) and the suppression list.
/// What a program that sends and receives needs from [`open`] and [`suppression::open`] at once.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use sms_sdk::store::Stores;
/// use sms_sdk::suppression::SuppressionPolicy;
/// use sms_sdk::testing::MemoryAdapter;
/// use sms_sdk::Client;
///
/// let stores = Stores::open("memory").await?;
/// let client = Client::builder()
///     .adapter(MemoryAdapter::new())
///     .idempotency(stores.records.clone())
///     .policy(SuppressionPolicy::new(stores.suppression.clone()))
///     .build()?;
/// # let _ = client; Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Stores {
    /// The idempotency records, with the operator tools, correlation index and dedupe keys.
    pub records: Arc<dyn Store>,
    /// The suppression list, beside the records.
    pub suppression: Arc<dyn suppression::SuppressionStore>,
}

impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stores").finish_non_exhaustive()
    }
}

impl Stores {
    /// Opens the stores of a URL, as [`open`] reads it; creates their tables on first use.
    ///
    /// # Errors
    /// As [`open`].
    #[cfg_attr(
        not(any(feature = "sqlite", feature = "postgres", feature = "redis", feature = "dynamodb")),
        allow(clippy::unused_async)
    )] // awaits a store feature's connect
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        if url == "memory" {
            return Ok(Self::of(MemoryStore::new(), suppression::MemorySuppressionStore::new()));
        }
        #[cfg(feature = "sqlite")]
        if let Some(path) = url.strip_prefix("sqlite:") {
            let store = sqlite::SqliteStore::open(path).await?;
            let list = suppression::SqliteSuppressionStore::open(store.clone()).await?;
            return Ok(Self::of(store, list));
        }
        #[cfg(feature = "postgres")]
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let store = postgres::PostgresStore::connect(url).await?;
            let list = suppression::PostgresSuppressionStore::open(store.clone()).await?;
            return Ok(Self::of(store, list));
        }
        #[cfg(feature = "redis")]
        if ["redis://", "rediss://", "redis-cluster://", "rediss-cluster://"]
            .iter()
            .any(|scheme| url.starts_with(scheme))
        {
            let store = redis::RedisStore::connect(url).await?;
            return Ok(Self::of(store.clone(), suppression::RedisSuppressionStore::new(store)));
        }
        #[cfg(feature = "dynamodb")]
        if url.starts_with("dynamodb://") {
            // Boxed: the SDK's futures nest deep, and every caller's future would hold them inline.
            let store = Box::pin(dynamodb::DynamoStore::connect(url)).await?;
            return Ok(Self::of(store.clone(), suppression::DynamoSuppressionStore::new(store)));
        }
        let scheme = url.split(':').next().unwrap_or_default();
        Err(StoreError::new(format!(
            "no store for a `{scheme}:` URL (memory, sqlite:, postgres://, redis://, rediss://, redis-cluster://, \
             rediss-cluster://, dynamodb://)"
        )))
    }

    fn of(records: impl Store, suppression: impl suppression::SuppressionStore) -> Self {
        Self { records: Arc::new(records), suppression: Arc::new(suppression) }
    }
}
