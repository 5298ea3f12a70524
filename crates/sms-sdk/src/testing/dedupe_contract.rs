//! The webhook dedupe store contract: every check a [`DedupeStore`] must pass, races included:
//! sightings ([`first_seen_at`](DedupeStore::first_seen_at)) and claims
//! ([`claim_at`](DedupeStore::claim_at), [`commit_at`](DedupeStore::commit_at),
//! [`release`](DedupeStore::release)), and that the two agree on one key.
//!
//! ```
//! use std::sync::Arc;
//! use sms_sdk::store::MemoryStore;
//! use sms_sdk::testing::dedupe_contract;
//!
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let report = dedupe_contract::run("memory", Arc::new(MemoryStore::new())).await;
//! assert!(report.passed, "{}", report.failures());
//! # });
//! ```
//!
//! Keys are unique to each run, so the suite can run again and again against one shared database.
//! The checks of expiry (a retention or a lease running out) sleep for real (twice their 250 ms,
//! all at once) and then ask at exactly `base + 250 ms`, so they pass both for stores that compare
//! the `now` they are given and for stores whose keys expire on the server's clock (Redis).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::{CaseResult, Report};
use crate::store::{ClaimToken, DedupeClaim, DedupeStore};

type Check = Result<(), String>;

/// Concurrent tasks in the race checks.
#[doc(hidden)] // a knob of the suite, not part of the API: the repository's tests read it
pub const RACE_TASKS: usize = 32;
/// Keys every task of the sighting race asks about.
#[doc(hidden)] // a knob of the suite, not part of the API: the repository's tests read it
pub const RACE_KEYS: usize = 200;
/// Keys every task of the claim race claims.
#[doc(hidden)] // a knob of the suite, not part of the API: the repository's tests read it
pub const CLAIM_RACE_KEYS: usize = 50;
/// The retention and lease of the expiry checks; they sleep twice as long.
#[doc(hidden)] // a knob of the suite, not part of the API: the repository's tests read it
pub const SHORT_RETENTION: Duration = Duration::from_millis(250);

const RETENTION: Duration = Duration::from_secs(10);
/// A time far after the run's start: 100 years.
const FAR: Duration = Duration::from_hours(100 * 365 * 24);

/// Runs every check against `store`; `name` labels the report.
pub async fn run(name: &str, store: Arc<dyn DedupeStore>) -> Report {
    let run =
        Run { store, prefix: format!("dedupe-contract:{}:", crate::ids::uuid_v4().simple()), base: SystemTime::now() };
    let mut results = Vec::new();
    let mut record = |check: &str, result: Check| {
        results.push(CaseResult { name: format!("{name}: {check}"), passed: result.is_ok(), error: result.err() });
    };
    record("a first sighting is first", run.first().await);
    record("a sighting within the retention is not first", run.within_retention().await);
    record("distinct keys are independent", run.independent().await);
    record(&format!("{RACE_TASKS} tasks asking about {RACE_KEYS} keys: one first per key"), run.race().await);
    record("a claim of a new key is claimed", run.claim_new().await);
    record("a second claim while the first is held is in flight", run.claim_held().await);
    record("after a commit the key is done, and a release leaves it done", run.commit_done().await);
    record("after a release the key is claimed again: the redelivery is handled", run.release_frees().await);
    record("a sighting and a claim of one key agree", run.agree().await);
    record("huge leases and retentions never run out and do not overflow", run.huge().await);
    record(&format!("{RACE_TASKS} tasks claiming {CLAIM_RACE_KEYS} keys: one claimed per key"), run.claim_race().await);
    // The expiry checks sleep, all at once.
    let (after_retention, lease_ran_out, stale_release, late_commit, done_ran_out) = tokio::join!(
        run.after_retention(),
        run.lease_ran_out(),
        run.stale_release(),
        run.late_commit(),
        run.done_ran_out(),
    );
    record("a sighting after the retention is first again", after_retention);
    record("a claim whose lease ran out is claimable", lease_ran_out);
    record("a release with a stale token leaves the new holder's claim", stale_release);
    record("a commit after the lease ran out still marks the key done", late_commit);
    record("a done key past its retention is claimable", done_ran_out);
    let passed = results.iter().all(|r| r.passed);
    Report { subject: name.to_owned(), passed, results }
}

struct Run {
    store: Arc<dyn DedupeStore>,
    prefix: String,
    base: SystemTime,
}

/// What a claim answered, for messages.
fn show(claim: &DedupeClaim) -> &'static str {
    match claim {
        DedupeClaim::Claimed(_) => "claimed",
        DedupeClaim::InFlight => "in flight",
        DedupeClaim::Done => "done",
    }
}

impl Run {
    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// `base + by`.
    fn at(&self, by: Duration) -> SystemTime {
        self.base + by
    }

    async fn first_seen(&self, key: &str, now: SystemTime, retention: Duration) -> Result<bool, String> {
        self.store.first_seen_at(key, now, retention).await.map_err(|e| format!("{key}: first_seen_at: {e}"))
    }

    async fn claim(&self, key: &str, now: SystemTime, lease: Duration) -> Result<DedupeClaim, String> {
        self.store.claim_at(key, now, lease).await.map_err(|e| format!("{key}: claim_at: {e}"))
    }

    /// A claim that must be [`DedupeClaim::Claimed`]: its token.
    async fn claimed(&self, key: &str, now: SystemTime, lease: Duration, what: &str) -> Result<ClaimToken, String> {
        match self.claim(key, now, lease).await? {
            DedupeClaim::Claimed(token) => Ok(token),
            other @ (DedupeClaim::InFlight | DedupeClaim::Done) => {
                Err(format!("{what}: the claim was {}, not claimed", show(&other)))
            }
        }
    }

    /// A claim that must answer `expected` (not a claim).
    async fn claim_is(&self, key: &str, now: SystemTime, expected: &DedupeClaim, what: &str) -> Check {
        let answer = self.claim(key, now, RETENTION).await?;
        ensure!(answer == *expected, "{what}: the claim was {}, not {}", show(&answer), show(expected));
        Ok(())
    }

    async fn commit(&self, key: &str, now: SystemTime, retention: Duration) -> Check {
        self.store.commit_at(key, now, retention).await.map_err(|e| format!("{key}: commit_at: {e}"))
    }

    async fn release(&self, key: &str, token: &ClaimToken) -> Result<bool, String> {
        self.store.release(key, token).await.map_err(|e| format!("{key}: release: {e}"))
    }

    async fn first(&self) -> Check {
        let key = self.key("first");
        ensure!(self.first_seen(&key, self.base, RETENTION).await?, "a new key was not first");
        Ok(())
    }

    async fn within_retention(&self) -> Check {
        let key = self.key("within");
        ensure!(self.first_seen(&key, self.base, RETENTION).await?, "a new key was not first");
        ensure!(!self.first_seen(&key, self.base, RETENTION).await?, "a repeat at the same instant was first");
        let later = self.base + RETENTION - Duration::from_millis(1);
        ensure!(
            !self.first_seen(&key, later, RETENTION).await?,
            "a repeat 1 ms before the retention ran out was first"
        );
        Ok(())
    }

    async fn after_retention(&self) -> Check {
        let key = self.key("after");
        ensure!(self.first_seen(&key, self.base, SHORT_RETENTION).await?, "a new key was not first");
        tokio::time::sleep(2 * SHORT_RETENTION).await;
        let expired = self.at(SHORT_RETENTION);
        ensure!(
            self.first_seen(&key, expired, SHORT_RETENTION).await?,
            "a sighting exactly one retention later was not first"
        );
        ensure!(
            !self.first_seen(&key, expired, SHORT_RETENTION).await?,
            "the renewed sighting was not recorded: a repeat was first"
        );
        Ok(())
    }

    async fn independent(&self) -> Check {
        // Near-identical keys, and ones quoting or escaping would mangle.
        let names = ["evt", "evt ", "evt:1", "Evt", "evt'; --", "évt \"ü\" \\ %_*?"];
        let keys: Vec<String> = names.iter().map(|n| self.key(&format!("independent-{n}"))).collect();
        for key in &keys {
            ensure!(self.first_seen(key, self.base, RETENTION).await?, "{key:?} was not first");
        }
        for key in &keys {
            ensure!(!self.first_seen(key, self.base, RETENTION).await?, "{key:?} was first twice");
        }
        // Claims too: one key's claim holds none of its neighbours.
        let claims: Vec<String> = names.iter().map(|n| self.key(&format!("independent-claim-{n}"))).collect();
        for key in &claims {
            self.claimed(key, self.base, RETENTION, &format!("{key:?}")).await?;
        }
        Ok(())
    }

    async fn race(&self) -> Check {
        let keys: Arc<Vec<String>> = Arc::new((0..RACE_KEYS).map(|i| self.key(&format!("race-{i}"))).collect());
        let tasks: Vec<_> = (0..RACE_TASKS)
            .map(|task| {
                let (store, keys, now) = (Arc::clone(&self.store), Arc::clone(&keys), self.base);
                tokio::spawn(async move {
                    let mut firsts = Vec::new();
                    for i in 0..keys.len() {
                        let Some(key) = keys.get((i + task * 7) % keys.len()) else { continue };
                        if store.first_seen_at(key, now, RETENTION).await.map_err(|e| e.to_string())? {
                            firsts.push(key.clone());
                        }
                    }
                    Ok::<_, String>(firsts)
                })
            })
            .collect();
        let mut firsts: HashMap<String, usize> = HashMap::new();
        for task in tasks {
            for key in task.await.map_err(|e| e.to_string())?? {
                *firsts.entry(key).or_default() += 1;
            }
        }
        ensure!(firsts.len() == RACE_KEYS, "{} of {RACE_KEYS} keys were ever first", firsts.len());
        let doubled = firsts.values().filter(|&&n| n > 1).count();
        ensure!(doubled == 0, "{doubled} keys were first more than once");
        Ok(())
    }

    async fn claim_new(&self) -> Check {
        let key = self.key("claim-new");
        let token = self.claimed(&key, self.base, RETENTION, "a new key").await?;
        let other = self.claimed(&self.key("claim-new-2"), self.base, RETENTION, "another new key").await?;
        ensure!(token != other, "two claims got the same token {token:?}");
        Ok(())
    }

    async fn claim_held(&self) -> Check {
        let key = self.key("claim-held");
        self.claimed(&key, self.base, RETENTION, "a new key").await?;
        self.claim_is(&key, self.base, &DedupeClaim::InFlight, "a second claim").await?;
        let later = self.base + RETENTION - Duration::from_millis(1);
        self.claim_is(&key, later, &DedupeClaim::InFlight, "a claim 1 ms before the lease ran out").await
    }

    async fn commit_done(&self) -> Check {
        let key = self.key("commit");
        let token = self.claimed(&key, self.base, RETENTION, "a new key").await?;
        self.commit(&key, self.base, RETENTION).await?;
        self.claim_is(&key, self.base, &DedupeClaim::Done, "after the commit").await?;
        ensure!(!self.release(&key, &token).await?, "a release of the committed claim said it freed the key");
        self.claim_is(&key, self.base, &DedupeClaim::Done, "after a release of the committed claim").await?;
        let later = self.base + RETENTION - Duration::from_millis(1);
        self.claim_is(&key, later, &DedupeClaim::Done, "1 ms before the retention ran out").await?;
        // A commit without a claim marks the key done too.
        let unclaimed = self.key("commit-unclaimed");
        self.commit(&unclaimed, self.base, RETENTION).await?;
        self.claim_is(&unclaimed, self.base, &DedupeClaim::Done, "a key committed without a claim").await
    }

    async fn release_frees(&self) -> Check {
        let key = self.key("release");
        let token = self.claimed(&key, self.base, RETENTION, "a new key").await?;
        ensure!(self.release(&key, &token).await?, "the holder's release said it freed nothing");
        let again = self.claimed(&key, self.base, RETENTION, "the redelivery after a release").await?;
        ensure!(again != token, "the new claim got the released token");
        ensure!(!self.release(&key, &token).await?, "a second release of the old token freed the new claim");
        self.claim_is(&key, self.base, &DedupeClaim::InFlight, "after a repeated release of the old token").await?;
        ensure!(!self.release(&self.key("release-unseen"), &token).await?, "a release of an unseen key freed one");
        Ok(())
    }

    async fn agree(&self) -> Check {
        let seen = self.key("agree-seen");
        ensure!(self.first_seen(&seen, self.base, RETENTION).await?, "a new key was not first");
        self.claim_is(&seen, self.base, &DedupeClaim::Done, "a key seen by first_seen_at").await?;
        let held = self.key("agree-claimed");
        let token = self.claimed(&held, self.base, RETENTION, "a new key").await?;
        ensure!(!self.first_seen(&held, self.base, RETENTION).await?, "a claimed key was first to first_seen_at");
        self.claim_is(&held, self.base, &DedupeClaim::InFlight, "a claimed key after first_seen_at").await?;
        ensure!(self.release(&held, &token).await?, "first_seen_at took the claim over: the release freed nothing");
        ensure!(self.first_seen(&held, self.base, RETENTION).await?, "a released key was not first");
        let committed = self.key("agree-committed");
        self.claimed(&committed, self.base, RETENTION, "a new key").await?;
        self.commit(&committed, self.base, RETENTION).await?;
        ensure!(!self.first_seen(&committed, self.base, RETENTION).await?, "a committed key was first");
        Ok(())
    }

    async fn huge(&self) -> Check {
        let far = self.at(FAR);
        let key = self.key("huge-lease");
        self.claimed(&key, self.base, Duration::MAX, "a claim with Duration::MAX").await?;
        self.claim_is(&key, far, &DedupeClaim::InFlight, "100 years into a Duration::MAX lease").await?;
        self.commit(&key, self.base, Duration::MAX).await?;
        self.claim_is(&key, far, &DedupeClaim::Done, "100 years into a Duration::MAX retention").await?;
        let seen = self.key("huge-retention");
        ensure!(self.first_seen(&seen, self.base, Duration::MAX).await?, "a new key was not first");
        ensure!(!self.first_seen(&seen, far, Duration::MAX).await?, "a Duration::MAX sighting ran out");
        // At a clock far ahead too.
        let ahead = self.key("huge-clock");
        self.claimed(&ahead, far, Duration::MAX, "a claim 100 years ahead").await?;
        self.commit(&ahead, far, Duration::MAX).await?;
        self.claim_is(&ahead, far, &DedupeClaim::Done, "a commit 100 years ahead").await
    }

    async fn claim_race(&self) -> Check {
        let keys: Arc<Vec<String>> =
            Arc::new((0..CLAIM_RACE_KEYS).map(|i| self.key(&format!("claim-race-{i}"))).collect());
        let tasks: Vec<_> = (0..RACE_TASKS)
            .map(|task| {
                let (store, keys, now) = (Arc::clone(&self.store), Arc::clone(&keys), self.base);
                tokio::spawn(async move {
                    let mut answers = Vec::new();
                    for i in 0..keys.len() {
                        let Some(key) = keys.get((i + task * 7) % keys.len()) else { continue };
                        let answer = store.claim_at(key, now, RETENTION).await.map_err(|e| e.to_string())?;
                        answers.push((key.clone(), show(&answer)));
                    }
                    Ok::<_, String>(answers)
                })
            })
            .collect();
        let mut claimed: HashMap<String, usize> = HashMap::new();
        for task in tasks {
            for (key, answer) in task.await.map_err(|e| e.to_string())?? {
                match answer {
                    "claimed" => *claimed.entry(key).or_default() += 1,
                    "in flight" => {}
                    other => return Err(format!("{key}: a racing claim was {other}")),
                }
            }
        }
        ensure!(claimed.len() == CLAIM_RACE_KEYS, "{} of {CLAIM_RACE_KEYS} keys were ever claimed", claimed.len());
        let doubled = claimed.values().filter(|&&n| n > 1).count();
        ensure!(doubled == 0, "{doubled} keys were claimed more than once");
        Ok(())
    }

    async fn lease_ran_out(&self) -> Check {
        let key = self.key("lease-ran-out");
        let first = self.claimed(&key, self.base, SHORT_RETENTION, "a new key").await?;
        tokio::time::sleep(2 * SHORT_RETENTION).await;
        let second = self.claimed(&key, self.at(SHORT_RETENTION), RETENTION, "exactly one lease later").await?;
        ensure!(first != second, "the new claim got the old token");
        Ok(())
    }

    async fn stale_release(&self) -> Check {
        let key = self.key("stale-release");
        let stale = self.claimed(&key, self.base, SHORT_RETENTION, "a new key").await?;
        tokio::time::sleep(2 * SHORT_RETENTION).await;
        let later = self.at(SHORT_RETENTION);
        let holder = self.claimed(&key, later, RETENTION, "after the lease ran out").await?;
        ensure!(!self.release(&key, &stale).await?, "the stale token's release said it freed the key");
        self.claim_is(&key, later, &DedupeClaim::InFlight, "after a release with the stale token").await?;
        ensure!(self.release(&key, &holder).await?, "the holder's release freed nothing");
        self.claimed(&key, later, RETENTION, "after the holder's release").await?;
        Ok(())
    }

    async fn late_commit(&self) -> Check {
        let (key, raced) = (self.key("late-commit"), self.key("late-commit-raced"));
        self.claimed(&key, self.base, SHORT_RETENTION, "a new key").await?;
        self.claimed(&raced, self.base, SHORT_RETENTION, "a new key").await?;
        tokio::time::sleep(2 * SHORT_RETENTION).await;
        let later = self.at(SHORT_RETENTION);
        self.commit(&key, later, RETENTION).await?;
        self.claim_is(&key, later, &DedupeClaim::Done, "a commit after the lease ran out").await?;
        // Another caller claimed meanwhile: the first handler's commit still marks it done, and the
        // other caller's release leaves it done.
        let other = self.claimed(&raced, later, RETENTION, "after the lease ran out").await?;
        self.commit(&raced, later, RETENTION).await?;
        self.claim_is(&raced, later, &DedupeClaim::Done, "a commit while another caller held the key").await?;
        ensure!(!self.release(&raced, &other).await?, "the other caller's release freed the committed key");
        self.claim_is(&raced, later, &DedupeClaim::Done, "after the other caller's release").await
    }

    async fn done_ran_out(&self) -> Check {
        let key = self.key("done-ran-out");
        self.commit(&key, self.base, SHORT_RETENTION).await?;
        self.claim_is(&key, self.base, &DedupeClaim::Done, "within the retention").await?;
        tokio::time::sleep(2 * SHORT_RETENTION).await;
        self.claimed(&key, self.at(SHORT_RETENTION), RETENTION, "exactly one retention later").await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use super::*;
    use crate::store::{MemoryStore, StoreError};
    use futures_util::future::BoxFuture;

    /// A broken store: `Forgetful` never remembers, `Eternal` never forgets (a key is done, or
    /// claimed by a token, forever).
    enum Broken {
        Forgetful,
        Eternal(Mutex<HashMap<String, Option<ClaimToken>>>),
    }

    impl Broken {
        fn keys(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, Option<ClaimToken>>>, StoreError> {
            match self {
                Self::Eternal(keys) => keys.lock().map_err(|e| StoreError::new(e.to_string())),
                Self::Forgetful => Err(StoreError::new("remembers nothing")),
            }
        }
    }

    impl DedupeStore for Broken {
        fn first_seen_at<'a>(
            &'a self,
            key: &'a str,
            _now: SystemTime,
            _retention: Duration,
        ) -> BoxFuture<'a, Result<bool, StoreError>> {
            Box::pin(async move {
                if let Self::Forgetful = self {
                    return Ok(true);
                }
                let mut keys = self.keys()?;
                Ok(if keys.contains_key(key) { false } else { keys.insert(key.into(), None).is_none() })
            })
        }

        fn claim_at<'a>(
            &'a self,
            key: &'a str,
            _now: SystemTime,
            _lease: Duration,
        ) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
            Box::pin(async move {
                if let Self::Forgetful = self {
                    return Ok(DedupeClaim::Claimed(ClaimToken::new()));
                }
                let mut keys = self.keys()?;
                Ok(match keys.get(key) {
                    Some(Some(_)) => DedupeClaim::InFlight,
                    Some(None) => DedupeClaim::Done,
                    None => {
                        let token = ClaimToken::new();
                        keys.insert(key.into(), Some(token.clone()));
                        DedupeClaim::Claimed(token)
                    }
                })
            })
        }

        fn commit_at<'a>(
            &'a self,
            key: &'a str,
            _now: SystemTime,
            _retention: Duration,
        ) -> BoxFuture<'a, Result<(), StoreError>> {
            Box::pin(async move {
                if let Self::Eternal(_) = self {
                    self.keys()?.insert(key.into(), None);
                }
                Ok(())
            })
        }

        fn release<'a>(&'a self, key: &'a str, token: &'a ClaimToken) -> BoxFuture<'a, Result<bool, StoreError>> {
            Box::pin(async move {
                if let Self::Forgetful = self {
                    return Ok(true);
                }
                let mut keys = self.keys()?;
                let held = keys.get(key).is_some_and(|held| held.as_ref() == Some(token));
                if held {
                    keys.remove(key);
                }
                Ok(held)
            })
        }
    }

    fn failed(report: &Report) -> Vec<&str> {
        report.results.iter().filter(|r| !r.passed).map(|r| r.name.as_str()).collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_memory_store_passes() {
        let report = run("memory", Arc::new(MemoryStore::new())).await;
        assert!(report.passed, "{}", report.failures());
        assert_eq!(report.results.len(), 16);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_that_never_remembers_fails() {
        let report = run("forgetful", Arc::new(Broken::Forgetful)).await;
        assert!(!report.passed);
        assert_eq!(
            failed(&report),
            [
                "forgetful: a sighting within the retention is not first",
                "forgetful: distinct keys are independent",
                "forgetful: 32 tasks asking about 200 keys: one first per key",
                "forgetful: a second claim while the first is held is in flight",
                "forgetful: after a commit the key is done, and a release leaves it done",
                "forgetful: after a release the key is claimed again: the redelivery is handled",
                "forgetful: a sighting and a claim of one key agree",
                "forgetful: huge leases and retentions never run out and do not overflow",
                "forgetful: 32 tasks claiming 50 keys: one claimed per key",
                "forgetful: a sighting after the retention is first again",
                "forgetful: a release with a stale token leaves the new holder's claim",
                "forgetful: a commit after the lease ran out still marks the key done",
                "forgetful: a done key past its retention is claimable",
            ]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_that_never_forgets_fails() {
        let report = run("eternal", Arc::new(Broken::Eternal(Mutex::default()))).await;
        assert_eq!(
            failed(&report),
            [
                "eternal: a sighting after the retention is first again",
                "eternal: a claim whose lease ran out is claimable",
                "eternal: a release with a stale token leaves the new holder's claim",
                "eternal: a commit after the lease ran out still marks the key done",
                "eternal: a done key past its retention is claimable",
            ]
        );
    }
}
