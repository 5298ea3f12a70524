//! The idempotency store contract: every check a store must pass, including a race.
//!
//! ```
//! use std::sync::Arc;
//! use sms_sdk::store::MemoryStore;
//! use sms_sdk::testing::store_contract;
//!
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let report = store_contract::run("memory", Arc::new(MemoryStore::new())).await;
//! assert!(report.passed, "{}", report.failures());
//! # });
//! ```
//!
//! Keys are unique to each run, so the suite can run again and again against one shared database.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::{CaseResult, Report};
use crate::adapter::{Category, Delivery};
use crate::encoding::Encoding;
use crate::error::{Attempt, AttemptOutcome, ErrorRecord};
use crate::receipt::Receipt;
use crate::store::{
    Claim, Entry, Filter, FinalRecord, Finalized, Fingerprint, Page, Record, Reservation, ReservationId, Resolution,
    Resolved, Settled, State, Store, settle_reference,
};

type Check = Result<(), String>;

/// Concurrent tasks in the race check.
const RACE_TASKS: usize = 32;
/// Keys every task of the race check reserves: each is contended by every task, so a store
/// that lets two reserves win one key shows it within a few keys; more keys only cost time.
const RACE_KEYS: usize = 200;

const HOUR: Duration = Duration::from_hours(1);
const STALE: Duration = Duration::from_mins(5);

/// Runs every check against `store`; `name` labels the report.
pub async fn run(name: &str, store: Arc<dyn Store>) -> Report {
    // Stores keep times in milliseconds: a base time in whole milliseconds reads back equal.
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let base = SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(now.as_millis()).unwrap_or(u64::MAX));
    let run = Run { store, prefix: format!("contract:{}:", crate::ids::uuid_v4().simple()), base };
    let mut results = Vec::new();
    let mut record = |check: &str, result: Check| {
        results.push(CaseResult { name: format!("{name}: {check}"), passed: result.is_ok(), error: result.err() });
    };
    record("an absent key reads as none", run.absent().await);
    record("reserve claims a new key once", run.claims_once().await);
    record("a reservation never expires and is never claimable", run.reserved_is_held().await);
    record("finalize needs the owning reservation", run.owner_only().await);
    record("a rejection is claimable by the same message only", run.rejected_retry().await);
    record("accepted records expire exactly at their TTL", run.expiry_boundary().await);
    record("unknown records never expire", run.unknown_is_kept().await);
    record("records keep the result and the error", run.round_trip().await);
    record("records keep the recipient and the reservation time", run.keeps_recipient_and_time().await);
    record("the operator lists unresolved keys", run.lists_unresolved().await);
    record("the operator lists reservations with their time", run.lists_in_progress().await);
    record("the operator lists page by page", run.lists_in_pages().await);
    record("the operator resolves a key as sent", run.resolves_sent().await);
    record("the operator resolves a key as not sent", run.resolves_not_sent().await);
    record("the operator refuses settled and fresh keys", run.refuses().await);
    record("a correlation reference finds its key until it expires", run.references().await);
    record("a reference settles only unknown and stale records, once", run.settles_by_reference().await);
    record(&format!("{RACE_TASKS} tasks reserving {RACE_KEYS} keys: one winner per key"), run.race().await);
    let passed = results.iter().all(|r| r.passed);
    Report { subject: name.to_owned(), passed, results }
}

/// A sample accepted result.
#[doc(hidden)] // a fixture of the suite, not part of the API: the repository's tests use it
#[must_use]
pub fn sample_receipt(provider_id: &str) -> Receipt {
    Receipt {
        id: crate::receipt::new_send_id(),
        provider: "memory".into(),
        provider_id: provider_id.into(),
        delivery: Delivery::Queued,
        encoding: Encoding::Gsm7,
        segments: 1,
        attempted_providers: vec!["memory".into()],
        attempts: vec![Attempt {
            provider: "memory".into(),
            attempt: 1,
            outcome: AttemptOutcome::Accepted { provider_id: provider_id.into(), delivery: Delivery::Queued },
            duration: Duration::from_millis(12),
            endpoint: Some("https://api.example.com".into()),
        }],
        replayed: false,
    }
}

/// The recipient of the suite's claims.
const RECIPIENT: &str = "+14155550123";

/// The endpoint of the twilio request of [`unknown_at_twilio`].
const TWILIO_ENDPOINT: &str = "https://api.twilio.example";

/// An unknown outcome of one request to twilio at [`TWILIO_ENDPOINT`].
fn unknown_at_twilio() -> ErrorRecord {
    let mut error = sample_error("handoff_unknown");
    error.attempts = vec![Attempt {
        provider: "twilio".into(),
        attempt: 1,
        outcome: AttemptOutcome::Unknown { reason: crate::UnknownReason::Timeout, http_status: None },
        duration: Duration::from_secs(10),
        endpoint: Some(TWILIO_ENDPOINT.into()),
    }];
    error.reason = Some(crate::UnknownReason::Timeout);
    error
}

/// A sample error record.
#[doc(hidden)] // a fixture of the suite, not part of the API: the repository's tests use it
#[must_use]
pub fn sample_error(code: &str) -> ErrorRecord {
    ErrorRecord {
        code: code.into(),
        message: "sample".into(),
        retry_safe: code != "handoff_unknown",
        attempts: vec![Attempt {
            provider: "memory".into(),
            attempt: 1,
            outcome: AttemptOutcome::Rejected {
                category: Category::Sender,
                http_status: Some(400),
                provider_code: None,
                retry_after: None,
            },
            duration: Duration::from_millis(3),
            endpoint: None,
        }],
        provider: None,
        category: Some(Category::Sender),
        reason: None,
        limit: None,
        conflict: None,
        field: None,
        retry_after: None,
        errors: Vec::new(),
    }
}

struct Run {
    store: Arc<dyn Store>,
    prefix: String,
    base: SystemTime,
}

fn fp(name: &str) -> Fingerprint {
    Fingerprint::from_canonical(name)
}

impl Run {
    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    async fn acquire(&self, key: &str, fingerprint: &Fingerprint, now: SystemTime) -> Result<ReservationId, String> {
        let claim = Claim::new(fingerprint).to(RECIPIENT);
        match self.store.reserve(key, claim, now).await.map_err(|e| e.to_string())? {
            Reservation::Acquired(id) => Ok(id),
            Reservation::Existing(record) => Err(format!("{key} was not claimable: {:?}", record.state())),
        }
    }

    async fn existing(&self, key: &str, fingerprint: &Fingerprint, now: SystemTime) -> Result<Record, String> {
        match self.store.reserve(key, Claim::new(fingerprint), now).await.map_err(|e| e.to_string())? {
            Reservation::Existing(record) => Ok(*record),
            Reservation::Acquired(_) => Err(format!("{key} was claimed but should not be")),
        }
    }

    async fn finalize(
        &self,
        key: &str,
        id: &ReservationId,
        record: FinalRecord,
        ttl: Duration,
    ) -> Result<Finalized, String> {
        self.store.finalize(key, id, record, ttl, self.base).await.map_err(|e| e.to_string())
    }

    async fn absent(&self) -> Check {
        let got = self.store.get(&self.key("absent")).await.map_err(|e| e.to_string())?;
        ensure!(got.is_none(), "expected none, got {got:?}");
        Ok(())
    }

    async fn claims_once(&self) -> Check {
        let key = self.key("once");
        let id = self.acquire(&key, &fp("a"), self.base).await?;
        let record = self.existing(&key, &fp("a"), self.base).await?;
        ensure!(
            matches!(&record, Record::Reserved { reservation_id, .. } if *reservation_id == id),
            "expected the reservation, got {record:?}"
        );
        Ok(())
    }

    async fn reserved_is_held(&self) -> Check {
        let key = self.key("held");
        self.acquire(&key, &fp("a"), self.base).await?;
        self.existing(&key, &fp("b"), self.base).await?;
        let record = self.existing(&key, &fp("a"), self.base + 100 * 365 * 24 * HOUR).await?;
        ensure!(record.state() == State::Reserved, "expected reserved, got {:?}", record.state());
        Ok(())
    }

    async fn owner_only(&self) -> Check {
        let key = self.key("owner");
        let id = self.acquire(&key, &fp("f"), self.base).await?;
        let wrong = self.finalize(&key, &ReservationId::new(), FinalRecord::Rejected(sample_error("x")), HOUR).await?;
        ensure!(wrong == Finalized::NotOwner, "a stranger finalized the key");
        let right = self.finalize(&key, &id, FinalRecord::Rejected(sample_error("x")), HOUR).await?;
        ensure!(right == Finalized::Written, "the owner could not finalize");
        let again = self.finalize(&key, &id, FinalRecord::Unknown(sample_error("x")), HOUR).await?;
        ensure!(again == Finalized::NotOwner, "a finalized key was finalized again");
        let got = self.store.get(&key).await.map_err(|e| e.to_string())?;
        ensure!(got.as_ref().map(Record::state) == Some(State::Rejected), "expected rejected, got {got:?}");
        Ok(())
    }

    async fn rejected_retry(&self) -> Check {
        let key = self.key("rejected");
        let id = self.acquire(&key, &fp("f"), self.base).await?;
        self.finalize(&key, &id, FinalRecord::Rejected(sample_error("provider_rejected")), HOUR).await?;
        let other = self.existing(&key, &fp("other"), self.base).await?;
        ensure!(other.state() == State::Rejected, "expected the rejection, got {:?}", other.state());
        self.acquire(&key, &fp("f"), self.base).await?;
        Ok(())
    }

    async fn expiry_boundary(&self) -> Check {
        let key = self.key("expiry");
        let id = self.acquire(&key, &fp("f"), self.base).await?;
        self.finalize(&key, &id, FinalRecord::Accepted(sample_receipt("p1")), Duration::from_secs(10)).await?;
        let before = self.existing(&key, &fp("f"), self.base + Duration::from_secs(9)).await?;
        ensure!(before.state() == State::Accepted, "expected accepted before expiry, got {:?}", before.state());
        self.acquire(&key, &fp("other"), self.base + Duration::from_secs(10)).await?;
        Ok(())
    }

    async fn unknown_is_kept(&self) -> Check {
        let key = self.key("unknown");
        let id = self.acquire(&key, &fp("f"), self.base).await?;
        self.finalize(&key, &id, FinalRecord::Unknown(sample_error("handoff_unknown")), Duration::ZERO).await?;
        let later = self.existing(&key, &fp("f"), self.base + Duration::from_secs(1_000_000)).await?;
        ensure!(later.state() == State::Unknown, "expected unknown, got {:?}", later.state());
        Ok(())
    }

    async fn round_trip(&self) -> Check {
        let (accepted, rejected) = (self.key("trip-a"), self.key("trip-r"));
        let receipt = sample_receipt("p-round-trip");
        let id = self.acquire(&accepted, &fp("f"), self.base).await?;
        self.finalize(&accepted, &id, FinalRecord::Accepted(receipt.clone()), HOUR).await?;
        let got = self.store.get(&accepted).await.map_err(|e| e.to_string())?;
        ensure!(
            got == Some(Record::Accepted {
                fingerprint: fp("f"),
                endpoint: receipt.attempts.first().and_then(|a| a.endpoint.clone()),
                result: receipt,
                to: crate::PhoneNumber::parse(RECIPIENT).ok(),
                reserved_at: Some(self.base),
            }),
            "the accepted record changed: {got:?}"
        );
        let id = self.acquire(&rejected, &fp("f"), self.base).await?;
        self.finalize(&rejected, &id, FinalRecord::Rejected(sample_error("provider_rejected")), HOUR).await?;
        let got = self.store.get(&rejected).await.map_err(|e| e.to_string())?;
        ensure!(
            got == Some(Record::Rejected {
                fingerprint: fp("f"),
                error: sample_error("provider_rejected"),
                to: crate::PhoneNumber::parse(RECIPIENT).ok(),
                reserved_at: Some(self.base),
            }),
            "the rejected record changed: {got:?}"
        );
        Ok(())
    }

    async fn keeps_recipient_and_time(&self) -> Check {
        let reserved = self.key("kept-reserved");
        self.acquire(&reserved, &fp("f"), self.base).await?;
        let record = self.store.get(&reserved).await.map_err(|e| e.to_string())?.ok_or("the reservation is gone")?;
        ensure!(
            record.to().map(crate::PhoneNumber::as_str) == Some(RECIPIENT),
            "the reservation lost its recipient: {record:?}"
        );
        ensure!(record.reserved_at() == Some(self.base), "the reservation's time changed: {record:?}");
        let anonymous = self.key("kept-anonymous");
        let fingerprint = fp("f");
        let claim = Claim::new(&fingerprint);
        ensure!(
            matches!(self.store.reserve(&anonymous, claim, self.base).await, Ok(Reservation::Acquired(_))),
            "a claim without a recipient was not taken"
        );
        let record = self.store.get(&anonymous).await.map_err(|e| e.to_string())?.ok_or("the reservation is gone")?;
        ensure!(record.to().is_none(), "a recipient appeared: {record:?}");
        for (tag, last) in [
            ("accepted", FinalRecord::Accepted(sample_receipt("p-kept"))),
            ("rejected", FinalRecord::Rejected(sample_error("provider_rejected"))),
            ("unknown", FinalRecord::Unknown(unknown_at_twilio())),
        ] {
            let key = self.key(&format!("kept-{tag}"));
            let id = self.acquire(&key, &fp("f"), self.base - STALE).await?;
            self.finalize(&key, &id, last, HOUR).await?;
            let record = self.store.get(&key).await.map_err(|e| e.to_string())?.ok_or("the record is gone")?;
            ensure!(
                record.to().map(crate::PhoneNumber::as_str) == Some(RECIPIENT),
                "{tag}: the recipient was lost: {record:?}"
            );
            ensure!(record.reserved_at() == Some(self.base - STALE), "{tag}: the time was lost: {record:?}");
        }
        Ok(())
    }

    /// An unknown key, a stale reservation and a fresh one, under `tag`.
    async fn unresolved_keys(&self, tag: &str) -> Result<[String; 3], String> {
        let keys =
            [self.key(&format!("{tag}-unknown")), self.key(&format!("{tag}-stale")), self.key(&format!("{tag}-fresh"))];
        let id = self.acquire(&keys[0], &fp("f"), self.base).await?;
        self.finalize(&keys[0], &id, FinalRecord::Unknown(unknown_at_twilio()), HOUR).await?;
        self.acquire(&keys[1], &fp("f"), self.base - 2 * STALE).await?;
        self.acquire(&keys[2], &fp("f"), self.base).await?;
        Ok(keys)
    }

    /// Every entry matching `filter` whose key starts with `prefix`, page by page.
    async fn list_all(&self, filter: Filter, prefix: &str, limit: usize) -> Result<Vec<Entry>, String> {
        let mut page = Page { prefix: prefix.to_owned(), cursor: None, limit };
        let mut entries = Vec::new();
        for _ in 0..10_000 {
            let listing = self.store.list(filter, self.base, page.clone()).await.map_err(|e| e.to_string())?;
            ensure!(
                listing.entries.len() <= limit,
                "a page held {} entries, over its limit {limit}",
                listing.entries.len()
            );
            ensure!(listing.entries.iter().all(|e| e.key.starts_with(prefix)), "a page held a key without its prefix");
            entries.extend(listing.entries);
            match listing.next {
                Some(next) => page.cursor = Some(next),
                None => return Ok(entries),
            }
        }
        Err("the listing never ended".into())
    }

    async fn lists_unresolved(&self) -> Check {
        let [unknown, stale, fresh] = self.unresolved_keys("list").await?;
        let listed = self.list_all(Filter::Unresolved { stale_after: STALE }, &self.key("list-"), 100).await?;
        let mine: Vec<&str> = listed.iter().map(|e| e.key.as_str()).collect();
        ensure!(
            mine.contains(&unknown.as_str()) && mine.contains(&stale.as_str()),
            "missing unresolved keys: {mine:?}"
        );
        ensure!(!mine.contains(&fresh.as_str()), "a fresh reservation was listed as unresolved");
        let unknowns = self.list_all(Filter::State(State::Unknown), &self.prefix, 100).await?;
        ensure!(unknowns.iter().any(|e| e.key == unknown), "the unknown key is not listed by state");
        ensure!(
            unknowns.iter().all(|e| e.record.state() == State::Unknown),
            "the state filter let another state through"
        );
        Ok(())
    }

    async fn lists_in_progress(&self) -> Check {
        let [_, stale, fresh] = self.unresolved_keys("progress").await?;
        let listed = self.list_all(Filter::State(State::Reserved), &self.key("progress-"), 100).await?;
        let mut mine: Vec<&str> = listed.iter().map(|e| e.key.as_str()).collect();
        mine.sort_unstable();
        ensure!(mine == [fresh.as_str(), stale.as_str()], "expected the fresh and the stale reservation, got {mine:?}");
        let Some(Record::Reserved { reserved_at, .. }) = listed.iter().find(|e| e.key == fresh).map(|e| &e.record)
        else {
            return Err("the fresh reservation is not listed as reserved".into());
        };
        let age = self.base.duration_since(*reserved_at).map_err(|_| "the reservation time is after it was made")?;
        ensure!(age < Duration::from_millis(1), "the reservation time is off by {age:?}");
        Ok(())
    }

    async fn lists_in_pages(&self) -> Check {
        let keys: Vec<String> = (0..7).map(|i| self.key(&format!("page-{i}"))).collect();
        for (i, key) in keys.iter().enumerate() {
            let id = self.acquire(key, &fp("f"), self.base).await?;
            if i % 3 == 0 {
                self.finalize(key, &id, FinalRecord::Unknown(sample_error("handoff_unknown")), HOUR).await?;
            }
        }
        for (filter, limit, expected) in
            [(Filter::All, 3, 7), (Filter::All, 1, 7), (Filter::State(State::Unknown), 1, 3)]
        {
            let listed = self.list_all(filter, &self.key("page-"), limit).await?;
            let mut seen: Vec<&str> = listed.iter().map(|e| e.key.as_str()).collect();
            seen.sort_unstable();
            seen.dedup();
            ensure!(
                seen.len() == expected && listed.len() == expected,
                "{filter:?} in pages of {limit}: expected {expected} distinct keys, got {seen:?}"
            );
        }
        Ok(())
    }

    async fn resolves_sent(&self) -> Check {
        let [unknown, stale, _] = self.unresolved_keys("sent").await?;
        for (key, settled_for) in [(&unknown, Some("https://operator.example:8443")), (&stale, None)] {
            let endpoint = settled_for.map(str::to_owned);
            let resolution =
                Resolution::Sent { provider: "twilio".into(), provider_id: "SM1".into(), ttl: HOUR, endpoint };
            let done = self.store.resolve(key, resolution, STALE, self.base).await.map_err(|e| e.to_string())?;
            ensure!(done == Resolved::Done, "{key}: expected done, got {done:?}");
            let record = self.existing(key, &fp("f"), self.base).await?;
            let Record::Accepted { fingerprint, result, endpoint, .. } = &record else {
                return Err(format!("{key}: expected accepted, got {record:?}"));
            };
            ensure!(*fingerprint == fp("f"), "{key}: the fingerprint changed");
            ensure!(endpoint.as_deref() == settled_for, "{key}: settled for {endpoint:?}, not {settled_for:?}");
            ensure!(
                record.to().map(crate::PhoneNumber::as_str) == Some(RECIPIENT),
                "{key}: settling lost the recipient: {record:?}"
            );
            ensure!(record.reserved_at().is_some(), "{key}: settling lost the reservation time: {record:?}");
            ensure!(result.provider == "twilio" && result.provider_id == "SM1", "{key}: wrong result {result:?}");
            ensure!(result.delivery == Delivery::Unknown, "{key}: wrong status");
        }
        Ok(())
    }

    async fn resolves_not_sent(&self) -> Check {
        let [unknown, stale, _] = self.unresolved_keys("not-sent").await?;
        for key in [&unknown, &stale] {
            let done =
                self.store.resolve(key, Resolution::NotSent, STALE, self.base).await.map_err(|e| e.to_string())?;
            ensure!(done == Resolved::Done, "{key}: expected done, got {done:?}");
            let got = self.store.get(key).await.map_err(|e| e.to_string())?;
            ensure!(got.is_none(), "{key}: the record is still there: {got:?}");
            self.acquire(key, &fp("f"), self.base).await?;
        }
        Ok(())
    }

    async fn refuses(&self) -> Check {
        let [_, _, fresh] = self.unresolved_keys("refuse").await?;
        let accepted = self.key("refuse-accepted");
        let id = self.acquire(&accepted, &fp("f"), self.base).await?;
        self.finalize(&accepted, &id, FinalRecord::Accepted(sample_receipt("p")), HOUR).await?;
        for key in [&fresh, &accepted] {
            let outcome =
                self.store.resolve(key, Resolution::NotSent, STALE, self.base).await.map_err(|e| e.to_string())?;
            ensure!(matches!(outcome, Resolved::Refused(_)), "{key}: expected refused, got {outcome:?}");
        }
        let missing = self.store.resolve(&self.key("nothing"), Resolution::NotSent, STALE, self.base).await;
        ensure!(matches!(missing, Ok(Resolved::NotFound)), "expected not found, got {missing:?}");
        Ok(())
    }

    async fn references(&self) -> Check {
        let (reference, key) = (self.key("ref-found"), self.key("found"));
        let store = &self.store;
        store.remember_reference(&reference, &key, self.base, HOUR).await.map_err(|e| e.to_string())?;
        let found = store.find_reference(&reference, self.base).await.map_err(|e| e.to_string())?;
        ensure!(found.as_deref() == Some(key.as_str()), "expected {key}, found {found:?}");
        store.remember_reference(&reference, &key, self.base, 2 * HOUR).await.map_err(|e| e.to_string())?;
        let found = store.find_reference(&reference, self.base).await.map_err(|e| e.to_string())?;
        ensure!(found.as_deref() == Some(key.as_str()), "remembered twice: expected {key}, found {found:?}");
        let missing = store.find_reference(&self.key("ref-never"), self.base).await.map_err(|e| e.to_string())?;
        ensure!(missing.is_none(), "an unknown reference found {missing:?}");
        // Expiry on the clock every backend uses (Redis expires keys on its own clock).
        let short = self.key("ref-short");
        store
            .remember_reference(&short, &key, SystemTime::now(), Duration::from_millis(1))
            .await
            .map_err(|e| e.to_string())?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let expired = store.find_reference(&short, SystemTime::now()).await.map_err(|e| e.to_string())?;
        ensure!(expired.is_none(), "an expired reference found {expired:?}");
        Ok(())
    }

    async fn settles_by_reference(&self) -> Check {
        let [unknown, stale, fresh] = self.unresolved_keys("by-ref").await?;
        let accepted = self.key("by-ref-accepted");
        let id = self.acquire(&accepted, &fp("f"), self.base).await?;
        self.finalize(&accepted, &id, FinalRecord::Accepted(sample_receipt("p-first")), HOUR).await?;
        let rejected = self.key("by-ref-rejected");
        let id = self.acquire(&rejected, &fp("f"), self.base).await?;
        self.finalize(&rejected, &id, FinalRecord::Rejected(sample_error("provider_rejected")), HOUR).await?;
        let settle = async |key: &str| {
            let reference = format!("ref:{key}");
            self.store.remember_reference(&reference, key, self.base, HOUR).await.map_err(|e| e.to_string())?;
            settle_reference(&*self.store, &reference, "twilio", "SM-settled", HOUR, STALE, self.base)
                .await
                .map_err(|e| e.to_string())
        };
        // The unknown record's request to twilio says where the message went; the stale one, nothing.
        for (key, sent_to) in [(&unknown, Some(TWILIO_ENDPOINT)), (&stale, None)] {
            let settled = settle(key).await?;
            ensure!(settled == Settled::Accepted { key: key.clone() }, "{key}: expected accepted, got {settled:?}");
            let record = self.existing(key, &fp("f"), self.base).await?;
            let Record::Accepted { fingerprint, result, endpoint, .. } = &record else {
                return Err(format!("{key}: expected accepted, got {record:?}"));
            };
            ensure!(*fingerprint == fp("f"), "{key}: the fingerprint changed");
            ensure!(endpoint.as_deref() == sent_to, "{key}: settled for {endpoint:?}, not {sent_to:?}");
            ensure!(
                result.provider == "twilio" && result.provider_id == "SM-settled",
                "{key}: wrong result {result:?}"
            );
            let again = settle(key).await?;
            ensure!(
                again == Settled::Unchanged { key: key.clone(), state: State::Accepted },
                "{key}: settled twice: {again:?}"
            );
        }
        for (key, state) in [(&fresh, State::Reserved), (&accepted, State::Accepted), (&rejected, State::Rejected)] {
            let settled = settle(key).await?;
            ensure!(settled == Settled::Unchanged { key: key.clone(), state }, "{key}: changed: {settled:?}");
            let got = self.store.get(key).await.map_err(|e| e.to_string())?;
            ensure!(got.as_ref().map(Record::state) == Some(state), "{key}: now {got:?}");
        }
        let got = self.store.get(&accepted).await.map_err(|e| e.to_string())?;
        ensure!(
            matches!(&got, Some(Record::Accepted { result, .. }) if result.provider_id == "p-first"),
            "the accepted record changed: {got:?}"
        );
        let unmatched = settle_reference(&*self.store, &self.key("ref-none"), "twilio", "SM-x", HOUR, STALE, self.base)
            .await
            .map_err(|e| e.to_string())?;
        ensure!(unmatched == Settled::NotFound, "an unmatched reference: {unmatched:?}");
        Ok(())
    }

    async fn race(&self) -> Check {
        let keys: Arc<Vec<String>> = Arc::new((0..RACE_KEYS).map(|i| self.key(&format!("race-{i}"))).collect());
        let tasks: Vec<_> = (0..RACE_TASKS)
            .map(|task| {
                let (store, keys, now) = (Arc::clone(&self.store), Arc::clone(&keys), self.base);
                tokio::spawn(async move {
                    let mut won = Vec::new();
                    for i in 0..keys.len() {
                        let Some(key) = keys.get((i + task * 7) % keys.len()) else { continue };
                        match store.reserve(key, Claim::new(&fp("race")), now).await {
                            Ok(Reservation::Acquired(_)) => won.push(key.clone()),
                            Ok(Reservation::Existing(_)) => {}
                            Err(e) => return Err(e.to_string()),
                        }
                    }
                    Ok(won)
                })
            })
            .collect();
        let mut winners: HashMap<String, usize> = HashMap::new();
        for task in tasks {
            for key in task.await.map_err(|e| e.to_string())?? {
                *winners.entry(key).or_default() += 1;
            }
        }
        ensure!(winners.len() == RACE_KEYS, "{} of {RACE_KEYS} keys were won", winners.len());
        let doubled = winners.values().filter(|&&n| n > 1).count();
        ensure!(doubled == 0, "{doubled} keys were won more than once");
        Ok(())
    }
}
