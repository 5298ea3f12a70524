//! The client's idempotency flow with the memory store (T41–T56).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sms_sdk::BoxFuture;
use sms_sdk::store::{
    FinalRecord, Finalized, Fingerprint, IdempotencyStore, MemoryStore, Record, Reservation, ReservationId, State,
    StoreError,
};
use sms_sdk::testing::store_contract::{sample_error, sample_receipt};
use sms_sdk::testing::{MemoryAdapter, MemoryOutcome, accepted_outcome, unknown_outcome};
use sms_sdk::{Category, Client, Conflict, ErrorKind, Message, Outcome, UnknownReason};

use super::{TO, rejection};

const KEY: &str = "appt:1:reminder";

fn appointment() -> Message {
    Message::new(TO, "Appointment tomorrow at 9.").idempotency_key(KEY)
}

fn client(memory: &MemoryAdapter, store: impl IdempotencyStore) -> Client {
    Client::builder().adapter(memory.clone()).idempotency(store).build().unwrap()
}

fn slow_accept(id: &'static str, delay: Duration) -> MemoryOutcome {
    MemoryOutcome::script(move |_, _| async move {
        tokio::time::sleep(delay).await;
        accepted_outcome(id)
    })
}

#[tokio::test]
async fn t041_a_repeat_replays_the_first_result() {
    let memory = MemoryAdapter::new();
    let client = client(&memory, MemoryStore::new());
    let first = client.send(&appointment()).await.unwrap();
    let second = client.send(&appointment()).await.unwrap();
    assert_eq!(memory.sent().len(), 1);
    assert!(!first.replayed && second.replayed);
    let mut second = second;
    second.replayed = false;
    assert_eq!(second, first);
}

#[tokio::test]
async fn t042_and_t043_another_message_with_the_key_conflicts() {
    let memory = MemoryAdapter::new();
    let client = client(&memory, MemoryStore::new());
    client.send(&appointment()).await.unwrap();
    let others = [
        Message { body: "Different".into(), ..appointment() },
        appointment().from("+15005550009"),
        Message { to: "+14155550124".into(), ..appointment() },
    ];
    for other in others {
        let err = client.send(&other).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::IdempotencyConflict(Conflict::OtherMessage));
        assert_eq!(err.code(), "idempotency_conflict");
        assert_eq!(err.idempotency_key(), Some(KEY));
        assert!(err.to_string().contains(&format!("{KEY:?}")), "the text names the key: {err}");
        assert_eq!(err.next_step(), sms_sdk::NextStep::NeverResend);
        assert_eq!(err.outcome(), sms_sdk::SendOutcome::NotAttempted);
        assert_eq!(serde_json::to_value(&err).unwrap()["conflict"], "other_message");
    }
    assert_eq!(memory.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn t044_concurrent_sends_share_one_request() {
    let memory = MemoryAdapter::builder().outcomes([slow_accept("p1", Duration::from_millis(100))]).build();
    let client = client(&memory, MemoryStore::new());
    let message = appointment();
    let (a, b, c) = tokio::join!(client.send(&message), client.send(&message), client.send(&message));
    let results = [a.unwrap(), b.unwrap(), c.unwrap()];
    assert_eq!(memory.sent().len(), 1);
    assert!(results.iter().all(|r| r.id == results[0].id));
    assert_eq!(results.iter().filter(|r| r.replayed).count(), 2);
}

#[tokio::test(start_paused = true)]
async fn t047_another_client_sees_the_reservation() {
    let store = MemoryStore::new();
    let a_adapter = MemoryAdapter::builder().outcomes([slow_accept("p1", Duration::from_millis(500))]).build();
    let b_adapter = MemoryAdapter::new();
    let a = client(&a_adapter, store.clone());
    let b = client(&b_adapter, store.clone());
    let running = tokio::spawn(async move { a.send(&appointment()).await });
    while !matches!(store.get(KEY).await.unwrap(), Some(Record::Reserved { .. })) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let err = b.send(&appointment()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IdempotencyInProgress);
    assert!(err.is_retry_safe());
    assert!(b_adapter.sent().is_empty());
    running.await.unwrap().unwrap();
    let replay = b.send(&appointment()).await.unwrap();
    assert_eq!((replay.provider_id.as_str(), replay.replayed), ("p1", true));
    assert!(b_adapter.sent().is_empty());
}

#[tokio::test]
async fn t048_an_unknown_outcome_is_never_resent() {
    let memory = MemoryAdapter::builder().outcomes([unknown_outcome(UnknownReason::Timeout)]).build();
    let client = Client::builder()
        .adapter(memory.clone())
        .idempotency(MemoryStore::new())
        .idempotency_ttl(Duration::ZERO)
        .build()
        .unwrap();
    let first = client.send(&appointment()).await.unwrap_err();
    assert_eq!(first.kind(), ErrorKind::Unknown(UnknownReason::Timeout));
    let second = client.send(&appointment()).await.unwrap_err();
    assert_eq!(second.kind(), ErrorKind::Unknown(UnknownReason::ReplayedUnknown));
    assert!(!second.is_retry_safe());
    assert_eq!(second.attempts(), first.attempts());
    assert_eq!(memory.sent().len(), 1);
}

#[tokio::test]
async fn t049_a_rejection_can_be_sent_again() {
    let memory = MemoryAdapter::builder().outcomes([rejection(Category::Sender)]).build();
    let client = client(&memory, MemoryStore::new());
    assert_eq!(client.send(&appointment()).await.unwrap_err().kind(), ErrorKind::Rejected(Category::Sender));
    let retry = client.send(&appointment()).await.unwrap();
    assert!(!retry.replayed);
    assert_eq!(memory.sent().len(), 2);
}

#[tokio::test]
async fn t050_a_stale_reservation_is_an_unknown_outcome() {
    let store = MemoryStore::new();
    let fingerprint = Fingerprint::of(&appointment(), &["memory"]);
    let ten_minutes_ago = SystemTime::now() - Duration::from_mins(10);
    assert!(matches!(
        store.reserve(KEY, sms_sdk::store::Claim::new(&fingerprint), ten_minutes_ago).await.unwrap(),
        Reservation::Acquired(_)
    ));
    let memory = MemoryAdapter::new();
    let client = Client::builder()
        .adapter(memory.clone())
        .idempotency(store)
        .stale_reservation(Duration::from_mins(5))
        .build()
        .unwrap();
    let err = client.send(&appointment()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unknown(UnknownReason::StaleReservation));
    assert!(err.attempts().is_empty());
    assert!(memory.sent().is_empty());
}

/// A memory store with one step that always fails.
#[derive(Clone, Default)]
struct Failing {
    store: MemoryStore,
    reserve: Option<&'static str>,
    finalize: Option<&'static str>,
}

impl IdempotencyStore for Failing {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<Record>, StoreError>> {
        self.store.get(key)
    }
    fn reserve<'a>(
        &'a self,
        key: &'a str,
        claim: sms_sdk::store::Claim<'a>,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Reservation, StoreError>> {
        match self.reserve {
            Some(reason) => Box::pin(async move { Err(StoreError::new(reason)) }),
            None => self.store.reserve(key, claim, now),
        }
    }
    fn finalize<'a>(
        &'a self,
        key: &'a str,
        reservation: &'a ReservationId,
        record: FinalRecord,
        ttl: Duration,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Finalized, StoreError>> {
        match self.finalize {
            Some(reason) => Box::pin(async move { Err(StoreError::new(reason)) }),
            None => self.store.finalize(key, reservation, record, ttl, now),
        }
    }
}

#[tokio::test]
async fn t051_a_failed_finalize_keeps_the_outcome_and_the_key_held() {
    let memory = MemoryAdapter::new();
    let client = client(&memory, Failing { finalize: Some("the store went away"), ..Failing::default() });
    assert!(client.send(&appointment()).await.is_ok());
    assert_eq!(client.send(&appointment()).await.unwrap_err().kind(), ErrorKind::IdempotencyInProgress);
    assert_eq!(memory.sent().len(), 1);
}

#[tokio::test]
async fn a_store_failure_says_why_and_sends_nothing() {
    let memory = MemoryAdapter::new();
    let failing =
        Failing { reserve: Some("database disk image is malformed (sqlite:/tmp/state.db)"), ..Failing::default() };
    let err = client(&memory, failing).send(&appointment()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Store);
    assert!(err.to_string().contains("nothing was sent"), "{err}");
    assert!(err.to_string().contains("database disk image is malformed (sqlite:/tmp/state.db)"), "{err}");
    assert!(memory.sent().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn t052_concurrent_reserves_have_one_winner() {
    let store = Arc::new(MemoryStore::new());
    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1);
    let reserve = |store: Arc<MemoryStore>| async move {
        store.reserve("k", sms_sdk::store::Claim::new(&Fingerprint::from_canonical("f")), at).await
    };
    let (a, b) = tokio::join!(tokio::spawn(reserve(store.clone())), tokio::spawn(reserve(store.clone())));
    let outcomes = [a.unwrap().unwrap(), b.unwrap().unwrap()];
    assert_eq!(outcomes.iter().filter(|o| matches!(o, Reservation::Acquired(_))).count(), 1);
    assert_eq!(outcomes.iter().filter(|o| matches!(o, Reservation::Existing(_))).count(), 1);
}

#[tokio::test]
async fn t053_finalize_needs_the_owner() {
    let store = MemoryStore::new();
    let now = SystemTime::now();
    let Reservation::Acquired(id) =
        store.reserve("k", sms_sdk::store::Claim::new(&Fingerprint::from_canonical("f")), now).await.unwrap()
    else {
        panic!()
    };
    let record = || FinalRecord::Rejected(sample_error("provider_rejected"));
    let ttl = Duration::from_mins(1);
    assert_eq!(store.finalize("k", &ReservationId::new(), record(), ttl, now).await.unwrap(), Finalized::NotOwner);
    assert_eq!(store.finalize("k", &id, record(), ttl, now).await.unwrap(), Finalized::Written);
    assert_eq!(store.get("k").await.unwrap().unwrap().state(), State::Rejected);
}

#[tokio::test]
async fn t054_a_rejection_is_claimable_by_its_own_fingerprint() {
    let store = MemoryStore::new();
    let (f, other) = (Fingerprint::from_canonical("f"), Fingerprint::from_canonical("other"));
    let now = SystemTime::now();
    let Reservation::Acquired(id) = store.reserve("k", sms_sdk::store::Claim::new(&f), now).await.unwrap() else {
        panic!()
    };
    let rejected = FinalRecord::Rejected(sample_error("provider_rejected"));
    store.finalize("k", &id, rejected, Duration::from_mins(1), now).await.unwrap();
    assert!(matches!(
        store.reserve("k", sms_sdk::store::Claim::new(&other), now).await.unwrap(),
        Reservation::Existing(_)
    ));
    assert!(matches!(store.reserve("k", sms_sdk::store::Claim::new(&f), now).await.unwrap(), Reservation::Acquired(_)));
}

#[tokio::test]
async fn t055_unknown_never_expires_and_delete_removes_it() {
    let store = MemoryStore::new();
    let f = Fingerprint::from_canonical("f");
    let now = SystemTime::now();
    let Reservation::Acquired(id) = store.reserve("k", sms_sdk::store::Claim::new(&f), now).await.unwrap() else {
        panic!()
    };
    store.finalize("k", &id, FinalRecord::Unknown(sample_error("handoff_unknown")), Duration::ZERO, now).await.unwrap();
    let much_later = now + Duration::from_secs(1_000_000);
    assert!(
        matches!(store.reserve("k", sms_sdk::store::Claim::new(&f), much_later).await.unwrap(), Reservation::Existing(r) if matches!(*r, Record::Unknown { .. }))
    );
    assert!(store.delete("k"));
    assert_eq!(store.len(), 0);
}

#[tokio::test]
async fn t056_accepted_expires_at_its_ttl() {
    let store = MemoryStore::new();
    let f = Fingerprint::from_canonical("f");
    let zero = SystemTime::UNIX_EPOCH;
    let Reservation::Acquired(id) = store.reserve("k", sms_sdk::store::Claim::new(&f), zero).await.unwrap() else {
        panic!()
    };
    let accepted = FinalRecord::Accepted(sample_receipt("p1"));
    store.finalize("k", &id, accepted, Duration::from_secs(10), zero).await.unwrap();
    assert!(matches!(
        store.reserve("k", sms_sdk::store::Claim::new(&f), zero + Duration::from_secs(9)).await.unwrap(),
        Reservation::Existing(_)
    ));
    assert!(matches!(
        store.reserve("k", sms_sdk::store::Claim::new(&f), zero + Duration::from_secs(10)).await.unwrap(),
        Reservation::Acquired(_)
    ));
}

#[tokio::test]
async fn records_hold_what_each_outcome_wrote() {
    let store = MemoryStore::new();
    let memory = MemoryAdapter::builder()
        .outcomes([rejection(Category::Recipient), Outcome::unknown(UnknownReason::Network)])
        .build();
    let client = client(&memory, store.clone());
    let keyed = |key: &str| Message::new(TO, "x").idempotency_key(key);
    client.send(&keyed("rejected")).await.unwrap_err();
    client.send(&keyed("unknown")).await.unwrap_err();
    client.send(&keyed("accepted")).await.unwrap();
    let policy = Client::builder()
        .adapter(MemoryAdapter::new())
        .idempotency(store.clone())
        .before_send(|_| async { Err::<sms_sdk::hooks::PolicyDecision, _>(std::io::Error::other("down")) })
        .build()
        .unwrap();
    policy.send(&keyed("policy")).await.unwrap_err();
    let state = |key: &'static str| {
        let store = store.clone();
        async move { store.get(key).await.unwrap().map(|r| r.state()) }
    };
    assert_eq!(state("rejected").await, Some(State::Rejected));
    assert_eq!(state("unknown").await, Some(State::Unknown));
    assert_eq!(state("accepted").await, Some(State::Accepted));
    assert_eq!(state("policy").await, Some(State::Rejected));
    let Some(Record::Rejected { error, .. }) = store.get("policy").await.unwrap() else { panic!() };
    assert_eq!(error.code, "policy_rejected");
}
