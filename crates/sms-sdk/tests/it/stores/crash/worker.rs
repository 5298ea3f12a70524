//! The sending process of a crash trial: this test binary, run again as a child with
//! [`PHASE`] set. It sends through the real Twilio adapter to the parent's provider, over the
//! real store, and says on stdout what it is about to do, so that the parent can kill it there.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sms_sdk::BoxFuture;
use sms_sdk::store::{
    self, FinalRecord, Finalized, IdempotencyStore, Record, Reservation, ReservationId, Store, StoreError,
};
use sms_sdk::{Client, Message, RetryPolicy, Twilio};

/// Set in the child: the phase it runs (`Phase::name`).
pub(super) const PHASE: &str = "SMS_SDK_CRASH_WORKER";
/// The store's URL.
pub(super) const STORE_URL: &str = "SMS_SDK_CRASH_STORE";
/// The provider's base URL.
pub(super) const PROVIDER_URL: &str = "SMS_SDK_CRASH_PROVIDER";
/// The prefix of the idempotency keys: send `i` has key `<prefix><i>`.
pub(super) const KEYS: &str = "SMS_SDK_CRASH_KEYS";
/// What starts every line the worker says, wherever libtest's own output put it.
pub(super) const SAYS: &str = "CRASH-WORKER ";

/// The recipient every trial sends to, but the one whose request is in flight.
pub(super) const TO: &str = crate::TO;
/// The emulator's "never answers" recipient; the trials' provider holds it the same way.
pub(super) const HOLD: &str = "+15005559002";

/// Where a worker blocks forever, for the parent to kill it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Inside `reserve`, before the store is asked.
    BeforeReserve,
    /// With its request at the provider, which never answers (recipient [`HOLD`]).
    InFlight,
    /// Inside `finalize`, with the provider's answer, before the store is asked.
    BeforeFinalize,
    /// Nowhere: it sends one message after another until it is killed.
    Random,
}

impl Phase {
    const ALL: [Self; 4] = [Self::BeforeReserve, Self::InFlight, Self::BeforeFinalize, Self::Random];

    pub(super) fn name(self) -> &'static str {
        match self {
            Self::BeforeReserve => "before-reserve",
            Self::InFlight => "in-flight",
            Self::BeforeFinalize => "before-finalize",
            Self::Random => "random",
        }
    }

    /// The phase this process must run as a worker, if it is one.
    pub(super) fn of_this_process() -> Option<Self> {
        let name = std::env::var(PHASE).ok()?;
        Some(Self::ALL.into_iter().find(|p| p.name() == name).unwrap_or_else(|| panic!("{PHASE}={name}?")))
    }
}

/// Send `i` of the keys `prefix`, to `to`; its body names its key, for the provider's count.
pub(super) fn message(prefix: &str, i: usize, to: &str) -> Message {
    let key = format!("{prefix}{i}");
    Message::new(to, format!("crash {key}")).idempotency_key(key)
}

/// A client over `store` that sends through Twilio at `provider`, with no retries.
pub(super) fn sender(provider: &str, store: impl IdempotencyStore, stale: Duration, timeout: Duration) -> Client {
    let twilio = Twilio::builder("AC0123456789abcdef0123456789abcdef", "test-token")
        .from("+15005550006")
        .base_url(provider)
        .build()
        .unwrap();
    let builder = Client::builder().adapter(twilio).idempotency(store).retry(RetryPolicy::none());
    builder.timeout(timeout).stale_reservation(stale).build().unwrap()
}

fn say(line: &str) {
    // One write per line, unbuffered past the newline: what was said before a kill is in the pipe.
    println!("{SAYS}{line}");
}

/// The real store, saying each step before it takes it, and blocking forever at the step of
/// its phase.
struct Signalling {
    inner: Arc<dyn Store>,
    phase: Phase,
}

impl IdempotencyStore for Signalling {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        self.inner.get(key)
    }

    fn reserve<'a>(
        &'a self,
        key: &'a str,
        claim: sms_sdk::store::Claim<'a>,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        Box::pin(async move {
            say(&format!("reserve {key}"));
            if self.phase == Phase::BeforeReserve {
                std::future::pending::<()>().await;
            }
            let reserved = self.inner.reserve(key, claim, now).await;
            say(&format!("reserved {key}"));
            reserved
        })
    }

    fn finalize<'a>(
        &'a self,
        key: &'a str,
        reservation: &'a ReservationId,
        record: FinalRecord,
        ttl: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Finalized, StoreError>> {
        Box::pin(async move {
            say(&format!("finalize {key}"));
            if self.phase == Phase::BeforeFinalize {
                std::future::pending::<()>().await;
            }
            self.inner.finalize(key, reservation, record, ttl, now).await
        })
    }
}

/// Runs the worker of `phase` until it is killed.
pub(super) async fn run(phase: Phase) {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let store = store::open(&var(STORE_URL)).await.unwrap();
    let signalling = Signalling { inner: store, phase };
    let client = sender(&var(PROVIDER_URL), signalling, store::DEFAULT_STALE_RESERVATION, Duration::from_mins(10));
    let prefix = var(KEYS);
    say("ready");
    if phase == Phase::Random {
        for i in 0.. {
            client.send(&message(&prefix, i, TO)).await.unwrap();
            say(&format!("sent {i}"));
        }
    }
    let to = if phase == Phase::InFlight { HOLD } else { TO };
    let outcome = client.send(&message(&prefix, 0, to)).await;
    say(&format!("returned {outcome:?}"));
}
