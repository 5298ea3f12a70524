//! Sending many messages: a stream in, results out in order of completion, a bounded number of
//! sends at once, an optional pace, and a summary.
//!
//! ```
//! use futures_util::StreamExt;
//! use sms_sdk::batch::{BatchOptions, Summary};
//! use sms_sdk::rate::RateLimit;
//! use sms_sdk::testing::MemoryAdapter;
//! use sms_sdk::{Client, Message};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let client = Client::builder().adapter(MemoryAdapter::builder().build()).build()?;
//! let messages = futures_util::stream::iter((1..=3_u64).map(|row| {
//!     (row, Message::new("+14155550123", "Your order has shipped.").idempotency_key(format!("ship-{row}")))
//! }));
//! let options = BatchOptions::default().concurrency(8)?.rate(RateLimit::per_second(100))?;
//! let mut results = client.send_batch(messages, options);
//! let mut summary = Summary::default();
//! while let Some(result) = results.next().await {
//!     summary.add(result.outcome());
//! }
//! assert_eq!(summary.accepted, 3);
//! # Ok::<(), sms_sdk::Error>(()) }).unwrap();
//! ```
//!
//! Memory stays flat in the number of messages: the stream is read only as fast as sends finish
//! (at most `concurrency` messages are held at once), and the results are handed out, not kept.
//!
//! Every message must carry an idempotency key, so that a batch that stopped (a crash, a kill,
//! Ctrl-C) can be run again: with an idempotency store on the client, accepted messages replay
//! without a request, unknown ones are reported (never resent), and the rest are sent. A message
//! without a key is refused before any request (`invalid_message`, field `idempotency_key`).
//!
//! The pace ([`BatchOptions::rate`]) is waited for before each send starts, before its key is
//! reserved: a batch killed while sends wait for their turn leaves no reservation behind for
//! them, so the next run sends them. (The client's own rate limits are waited for later, after
//! the reservation; use them for sends that do not come in batches.)

use std::fmt;
use std::sync::Arc;

use futures_util::{Stream, StreamExt};
use tokio_util::sync::CancellationToken;

use crate::client::{Client, SendOptions};
use crate::error::{Error, ErrorKind};
use crate::issue::Field;
use crate::message::Message;
use crate::rate::{Pacer, RateLimit, SharedRateLimiter};
use crate::receipt::Receipt;

/// The most sends of a batch at once.
pub const MAX_CONCURRENCY: usize = 10_000;
/// The sends of a batch at once by default.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// How a batch runs.
#[derive(Debug, Clone)]
#[must_use]
pub struct BatchOptions {
    concurrency: usize,
    pacer: Option<Arc<Pacer>>,
    stop: Option<CancellationToken>,
    abandon: Option<CancellationToken>,
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self { concurrency: DEFAULT_CONCURRENCY, pacer: None, stop: None, abandon: None }
    }
}

impl BatchOptions {
    /// At most `concurrency` sends at once (16 by default; 1 to 10,000).
    ///
    /// # Errors
    /// `Configuration` for 0 or more than [`MAX_CONCURRENCY`].
    pub fn concurrency(mut self, concurrency: usize) -> Result<Self, Error> {
        if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
            return Err(Error::configuration(format!(
                "A batch's concurrency must be 1 to {MAX_CONCURRENCY}, not {concurrency}."
            )));
        }
        self.concurrency = concurrency;
        Ok(self)
    }

    /// Starts at most `limit` sends per period, over all the batch's sends.
    ///
    /// # Errors
    /// `Configuration` for a limit that allows nothing or more than 1,000,000 per second.
    pub fn rate(mut self, limit: RateLimit) -> Result<Self, Error> {
        self.pacer = Some(Arc::new(Pacer::new(limit)?));
        Ok(self)
    }

    /// Starts at most `limit` sends per period over every batch that uses `shared` with the
    /// same `bucket`, in any process (for example several workers sending one campaign).
    ///
    /// # Errors
    /// As [`rate`](Self::rate).
    pub fn shared_rate(
        mut self,
        limit: RateLimit,
        shared: Arc<dyn SharedRateLimiter>,
        bucket: impl Into<String>,
    ) -> Result<Self, Error> {
        self.pacer = Some(Arc::new(Pacer::shared(limit, shared, bucket)?));
        Ok(self)
    }

    /// When `stop` is cancelled, the batch starts no new request: it takes no more messages from
    /// its stream, and the messages it took that had not made their request yet (waiting for the
    /// pace, a slot or a rate limit, or to retry: [`SendOptions::stop`]) are dropped without a
    /// result (nothing was sent, and no reservation is left: a next run sends them). The
    /// requests in flight finish and their results still come out, then the result stream ends.
    ///
    /// [`SendOptions::stop`]: crate::SendOptions::stop
    pub fn stop(mut self, stop: CancellationToken) -> Self {
        self.stop = Some(stop);
        self
    }

    /// When `abandon` is cancelled, the requests still in flight are given up: each ends
    /// `Unknown(Aborted)` (its key is left unknown, never resent, to reconcile), as a cancelled
    /// [`SendOptions::cancel`](crate::SendOptions::cancel) does. A batch's second Ctrl-C, after
    /// [`stop`](Self::stop).
    pub fn abandon(mut self, abandon: CancellationToken) -> Self {
        self.abandon = Some(abandon);
        self
    }
}

/// The result of one message of a batch, with the caller's tag for it (a row number, an id).
#[derive(Debug)]
#[non_exhaustive]
pub struct BatchResult<T> {
    /// The caller's tag of the message.
    pub tag: T,
    /// The message's idempotency key, when it had one.
    pub key: Option<String>,
    /// What the send returned.
    pub result: Result<Receipt, Error>,
}

impl<T> BatchResult<T> {
    /// How the message ended, for the summary.
    #[must_use]
    pub fn outcome(&self) -> RowOutcome {
        RowOutcome::of(&self.result)
    }
}

/// How one message of a batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RowOutcome {
    /// A provider accepted it in this run.
    Accepted,
    /// An earlier run had it accepted: replayed, no request.
    Replayed,
    /// Proven not sent (a rejection, a policy, invalid input, a store failure, a conflict): the
    /// error says why; after fixing the cause, running the batch again sends it.
    Rejected,
    /// It may have been sent (an unknown outcome, now or from an earlier run, or a key whose
    /// send is still in progress or was interrupted): reconcile, never resend.
    Unknown,
}

impl RowOutcome {
    /// The outcome of a send's result.
    #[must_use]
    #[allow(clippy::wildcard_enum_match_arm)] // `ErrorKind` is non-exhaustive: new kinds are proven failures
    pub fn of(result: &Result<Receipt, Error>) -> Self {
        match result {
            Ok(receipt) if receipt.replayed => Self::Replayed,
            Ok(_) => Self::Accepted,
            Err(error) => match error.kind() {
                ErrorKind::Unknown(_) | ErrorKind::IdempotencyInProgress => Self::Unknown,
                _ => Self::Rejected,
            },
        }
    }

    /// Its name in reports: `accepted`, `replayed`, `rejected` or `unknown`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Accepted => "accepted",
            Self::Replayed => "replayed",
            Self::Rejected => "rejected",
            Self::Unknown => "unknown",
        }
    }
}

impl fmt::Display for RowOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How many messages of a batch ended each way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Summary {
    /// Accepted in this run.
    pub accepted: u64,
    /// Replayed from an earlier run.
    pub replayed: u64,
    /// Proven not sent.
    pub rejected: u64,
    /// Maybe sent: reconcile.
    pub unknown: u64,
}

impl Summary {
    /// Counts one outcome.
    pub fn add(&mut self, outcome: RowOutcome) {
        let count = match outcome {
            RowOutcome::Accepted => &mut self.accepted,
            RowOutcome::Replayed => &mut self.replayed,
            RowOutcome::Rejected => &mut self.rejected,
            RowOutcome::Unknown => &mut self.unknown,
        };
        *count = count.saturating_add(1);
    }

    /// Every message counted.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.accepted.saturating_add(self.replayed).saturating_add(self.rejected).saturating_add(self.unknown)
    }
}

impl Client {
    /// Sends every message of `messages` (each with a caller's tag), at most
    /// [`concurrency`](BatchOptions::concurrency) at once and at the options' pace, and yields
    /// each result as its send finishes. The stream of messages is read only as sends finish, so
    /// memory stays flat however many there are. The result stream is `Unpin` when `messages`
    /// is. See [`batch`](crate::batch).
    pub fn send_batch<T, S>(&self, messages: S, options: BatchOptions) -> impl Stream<Item = BatchResult<T>> + use<T, S>
    where
        S: Stream<Item = (T, Message)>,
    {
        let stop = options.stop.unwrap_or_default();
        let mut send = SendOptions::default().stop(stop.clone());
        if let Some(abandon) = options.abandon {
            send = send.cancel(abandon);
        }
        let client = self.clone();
        let pacer = options.pacer;
        let stopped = stop.clone();
        messages
            .take_until(Box::pin(stopped.cancelled_owned()))
            .map(move |(tag, message)| one(client.clone(), pacer.clone(), send.clone(), tag, message))
            .buffer_unordered(options.concurrency)
            .filter_map(std::future::ready)
    }
}

/// One message of a batch: refused without a key, else paced, then sent; `None` when the
/// batch stopped while it waited for the pace.
async fn one<T>(
    client: Client,
    pacer: Option<Arc<Pacer>>,
    options: SendOptions,
    tag: T,
    message: Message,
) -> Option<BatchResult<T>> {
    let key = message.idempotency_key.clone();
    let result = match (&key, &pacer) {
        (None, _) => Err(Error::invalid_message(
            Field::IdempotencyKey,
            "Every message of a batch needs an idempotency key, so that the batch can be run again safely.",
        )),
        (Some(_), Some(pacer)) => {
            let stop = options.stop.clone().unwrap_or_default();
            let paced = tokio::select! {
                biased;
                () = stop.cancelled() => return None,
                paced = pacer.wait() => paced,
            };
            match paced {
                Ok(()) => client.send_with(&message, options.clone()).await,
                Err(error) => Err(error),
            }
        }
        (Some(_), None) => client.send_with(&message, options.clone()).await,
    };
    // Stopped before its request: nothing was sent, and its key is free again.
    let stopped = options.stop.as_ref().is_some_and(CancellationToken::is_cancelled);
    if stopped && result.as_ref().is_err_and(|e| e.kind() == ErrorKind::Aborted) {
        return None;
    }
    Some(BatchResult { tag, key, result })
}
