//! The suppression store contract: every check a [`SuppressionStore`] must pass, races included.
//!
//! ```
//! use std::sync::Arc;
//! use sms_sdk::store::suppression::MemorySuppressionStore;
//! use sms_sdk::testing::suppression_contract;
//!
//! # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
//! let report = suppression_contract::run("memory", Arc::new(MemorySuppressionStore::new())).await;
//! assert!(report.passed, "{}", report.failures());
//! # });
//! ```
//!
//! Recipients and event keys are random for each run, so the suite can run again and again
//! against one shared database; listings are checked on this run's recipients only.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{CaseResult, Report};
use crate::PhoneNumber;
use crate::store::suppression::{
    Action, Applied, Change, MAX_BATCH, MAX_CHECK_SCOPES, Scope, SuppressionEntry, SuppressionPage, SuppressionStore,
};

type Check = Result<(), String>;

/// Concurrent tasks in the race checks.
#[doc(hidden)] // a knob of the suite, not part of the API: the repository's tests read it
pub const RACE_TASKS: usize = 16;
/// Recipients of the listing check (one of them opted back in, two with two scopes).
#[doc(hidden)] // a knob of the suite, not part of the API: the repository's tests read it
pub const LISTED: usize = 7;

/// Runs every check against `store`; `name` labels the report.
pub async fn run(name: &str, store: Arc<dyn SuppressionStore>) -> Report {
    let seed = crate::ids::uuid_v4().as_u128();
    // Stores keep times to the millisecond.
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let base = UNIX_EPOCH + Duration::from_millis(u64::try_from(now.as_millis()).unwrap_or(u64::MAX));
    let run = Run { store, seed, base };
    let mut results = Vec::new();
    let mut record = |check: &str, result: Check| {
        results.push(CaseResult { name: format!("{name}: {check}"), passed: result.is_ok(), error: result.err() });
    };
    record("an opt-out suppresses its own scope only", run.own_scope().await);
    record("an account opt-out suppresses every sender", run.account().await);
    record("numbers compare exactly", run.exact().await);
    record("a newer opt-in lifts it, a late opt-out changes nothing", run.ordered().await);
    record("a tie goes to the opt-out, the same change twice is stale", run.ties().await);
    record("a replayed event changes nothing", run.replayed().await);
    record("a batch applies in order", run.batch().await);
    record("listings page in order, without repeats or opt-ins", run.listing().await);
    record("over-limit batches, checks and scopes are refused", run.limits().await);
    record(&format!("{RACE_TASKS} tasks applying one event: recorded once"), run.one_event().await);
    record(&format!("{RACE_TASKS} tasks opting out and in: the newest wins"), run.newest_wins().await);
    let passed = results.iter().all(|r| r.passed);
    Report { subject: name.to_owned(), passed, results }
}

struct Run {
    store: Arc<dyn SuppressionStore>,
    seed: u128,
    base: SystemTime,
}

/// `n` seconds after `base`.
fn at(base: SystemTime, n: u64) -> SystemTime {
    base + Duration::from_secs(n)
}

impl Run {
    /// This run's recipient number `n`: `+1` and 12 digits (E.164 allows 15).
    fn number(&self, n: u32) -> PhoneNumber {
        let digits = (self.seed % 10_000_000) * 100_000 + u128::from(n % 100_000);
        PhoneNumber::parse(&format!("+1{digits:012}")).unwrap_or_else(|_| unreachable!("12 digits are E.164"))
    }

    fn sender(n: u32) -> Scope {
        Scope::Sender(format!("+1500555{:04}", n % 10_000))
    }

    fn event(&self, name: &str) -> String {
        format!("suppression-contract:{:x}:{name}", self.seed)
    }

    async fn apply(&self, changes: &[Change]) -> Result<Vec<Applied>, String> {
        self.store.apply(changes, self.base).await.map_err(|e| format!("apply: {e}"))
    }

    async fn one(&self, change: Change) -> Result<Applied, String> {
        self.apply(std::slice::from_ref(&change)).await?.first().copied().ok_or_else(|| "no answer".to_owned())
    }

    async fn check(&self, number: &PhoneNumber, scopes: &[Scope]) -> Result<Option<SuppressionEntry>, String> {
        self.store.check(number, scopes).await.map_err(|e| format!("check: {e}"))
    }

    async fn suppressed(&self, number: &PhoneNumber, scopes: &[Scope]) -> Result<bool, String> {
        Ok(self.check(number, scopes).await?.is_some())
    }

    async fn own_scope(&self) -> Check {
        let (number, sender) = (self.number(1), Self::sender(1));
        let change =
            Change::opt_out(number.clone(), sender.clone(), self.base, "keyword:STOP").event(&self.event("own"));
        ensure!(self.one(change).await? == Applied::Recorded, "a first opt-out was not recorded");
        let entry = self.check(&number, &[Scope::Account, sender.clone()]).await?.ok_or("not suppressed")?;
        ensure!(entry.recipient == number && entry.scope == sender, "the entry names another recipient or scope");
        ensure!(entry.reason == "keyword:STOP", "the reason came back as {:?}", entry.reason);
        ensure!(entry.event.as_deref() == Some(self.event("own").as_str()), "the event key was not kept");
        ensure!(entry.at == self.base, "the time came back as {:?}, not {:?}", entry.at, self.base);
        ensure!(!self.suppressed(&number, &[Scope::Account, Self::sender(2)]).await?, "another sender is suppressed");
        ensure!(!self.suppressed(&number, &[]).await?, "a check of no scope found something");
        Ok(())
    }

    async fn account(&self) -> Check {
        let number = self.number(2);
        self.one(Change::opt_out(number.clone(), Scope::Account, self.base, "operator")).await?;
        ensure!(self.suppressed(&number, &[Scope::Account, Self::sender(7)]).await?, "a sender was not suppressed");
        let service = Scope::Service("MG0123".into());
        ensure!(self.suppressed(&number, &[service, Scope::Account]).await?, "a service was not suppressed");
        Ok(())
    }

    async fn exact(&self) -> Check {
        let number = self.number(3);
        self.one(Change::opt_out(number.clone(), Scope::Account, self.base, "operator")).await?;
        let text = number.as_str();
        for other in [format!("{text}0"), text.get(..text.len() - 1).unwrap_or_default().to_owned()] {
            let other = PhoneNumber::parse(&other).map_err(|e| e.to_string())?;
            ensure!(!self.suppressed(&other, &[Scope::Account]).await?, "{other:?} matched {number:?}");
        }
        Ok(())
    }

    async fn ordered(&self) -> Check {
        let (number, scope) = (self.number(4), Self::sender(4));
        let change = |action, n| Change::new(number.clone(), scope.clone(), action, at(self.base, n), "test");
        ensure!(self.one(change(Action::OptOut, 10)).await? == Applied::Recorded, "STOP at 10 not recorded");
        ensure!(self.one(change(Action::OptIn, 30)).await? == Applied::Recorded, "START at 30 not recorded");
        ensure!(!self.suppressed(&number, std::slice::from_ref(&scope)).await?, "still suppressed after START");
        ensure!(self.one(change(Action::OptOut, 20)).await? == Applied::Stale, "a late STOP at 20 was not stale");
        ensure!(!self.suppressed(&number, std::slice::from_ref(&scope)).await?, "a late STOP overrode a newer START");
        ensure!(self.one(change(Action::OptOut, 40)).await? == Applied::Recorded, "STOP at 40 not recorded");
        ensure!(self.suppressed(&number, &[scope]).await?, "a newer STOP did not suppress");
        Ok(())
    }

    async fn ties(&self) -> Check {
        let (number, scope) = (self.number(5), Scope::Account);
        let change = |action| Change::new(number.clone(), scope.clone(), action, at(self.base, 5), "test");
        ensure!(self.one(change(Action::OptIn)).await? == Applied::Recorded, "a first START not recorded");
        ensure!(self.one(change(Action::OptOut)).await? == Applied::Recorded, "a tying STOP did not win");
        ensure!(self.one(change(Action::OptIn)).await? == Applied::Stale, "a tying START won");
        ensure!(self.one(change(Action::OptOut)).await? == Applied::Stale, "the same STOP twice was not stale");
        ensure!(self.suppressed(&number, &[scope]).await?, "not suppressed after the tie");
        Ok(())
    }

    async fn replayed(&self) -> Check {
        let (number, scope) = (self.number(6), Self::sender(6));
        let (stop, start) = (self.event("stop"), self.event("start"));
        let change =
            |action, n, key: &str| Change::new(number.clone(), scope.clone(), action, at(self.base, n), "t").event(key);
        ensure!(self.one(change(Action::OptOut, 1, &stop)).await? == Applied::Recorded, "STOP not recorded");
        ensure!(self.one(change(Action::OptIn, 2, &start)).await? == Applied::Recorded, "START not recorded");
        ensure!(self.one(change(Action::OptOut, 1, &stop)).await? == Applied::Replayed, "a replayed STOP not replayed");
        // The same event delivered again with a later time (a provider without event times).
        ensure!(self.one(change(Action::OptOut, 9, &stop)).await? == Applied::Replayed, "a re-timed STOP applied");
        ensure!(!self.suppressed(&number, &[scope]).await?, "a replayed STOP suppressed again");
        Ok(())
    }

    async fn batch(&self) -> Check {
        let (number, scope) = (self.number(8), Scope::Account);
        let change = |action, n| Change::new(number.clone(), scope.clone(), action, at(self.base, n), "import");
        let applied =
            self.apply(&[change(Action::OptOut, 1), change(Action::OptIn, 2), change(Action::OptOut, 1)]).await?;
        ensure!(applied == [Applied::Recorded, Applied::Recorded, Applied::Stale], "answered {applied:?}");
        ensure!(self.apply(&[]).await?.is_empty(), "an empty batch answered something");
        ensure!(!self.suppressed(&number, &[scope]).await?, "suppressed after the batch");
        Ok(())
    }

    async fn listing(&self) -> Check {
        let first = 100;
        let mut changes = Vec::new();
        let mut expected = Vec::new();
        for i in 0..u32::try_from(LISTED).unwrap_or(0) {
            let number = self.number(first + i);
            let mut scopes = vec![Scope::Account];
            if i % 3 == 0 {
                scopes.push(Self::sender(i));
            }
            for scope in scopes {
                changes.push(Change::opt_out(number.clone(), scope.clone(), self.base, "import"));
                if i != 4 {
                    expected.push((number.as_str().to_owned(), scope.key().map_err(|e| e.to_string())?));
                }
            }
        }
        let lifted = self.number(first + 4);
        changes.push(Change::opt_in(lifted, Scope::Account, at(self.base, 1), "operator"));
        self.apply(&changes).await?;
        expected.sort();
        let ours = |entry: &SuppressionEntry| {
            let number = entry.recipient.as_str();
            (0..u32::try_from(LISTED).unwrap_or(0)).any(|i| self.number(first + i).as_str() == number)
        };
        // Pages of one entry split every recipient with two scopes.
        for size in [1, 2, 3] {
            let mut listed = Vec::new();
            let mut page = SuppressionPage::first(size);
            for _ in 0..100_000 {
                let listing = self.store.list(page.clone()).await.map_err(|e| format!("list: {e}"))?;
                ensure!(listing.entries.len() <= size, "a page of {size} held {}", listing.entries.len());
                for entry in listing.entries.iter().filter(|e| ours(e)) {
                    listed.push((entry.recipient.as_str().to_owned(), entry.scope.key().map_err(|e| e.to_string())?));
                }
                match listing.next {
                    Some(cursor) => page = page.after(cursor),
                    None => break,
                }
            }
            ensure!(
                listed == expected,
                "pages of {size}: listed {} entries, expected {}",
                listed.len(),
                expected.len()
            );
        }
        Ok(())
    }

    async fn limits(&self) -> Check {
        let number = self.number(9);
        let change = Change::opt_out(number.clone(), Scope::Account, self.base, "x");
        ensure!(self.store.apply(&vec![change; MAX_BATCH + 1], self.base).await.is_err(), "an over-long batch ran");
        let scopes = vec![Scope::Account; MAX_CHECK_SCOPES + 1];
        ensure!(self.store.check(&number, &scopes).await.is_err(), "a check of too many scopes ran");
        let bad = Change::opt_out(number.clone(), Scope::Sender(String::new()), self.base, "x");
        let good = Change::opt_out(number.clone(), Scope::Account, self.base, "x");
        ensure!(self.store.apply(&[good, bad], self.base).await.is_err(), "an empty sender id was written");
        ensure!(!self.suppressed(&number, &[Scope::Account]).await?, "a refused batch wrote something");
        Ok(())
    }

    async fn one_event(&self) -> Check {
        let number = self.number(10);
        let change = Change::opt_out(number, Scope::Account, self.base, "keyword:STOP").event(&self.event("race"));
        let tasks: Vec<_> = (0..RACE_TASKS)
            .map(|_| {
                let (store, change, now) = (Arc::clone(&self.store), change.clone(), self.base);
                tokio::spawn(async move { store.apply(&[change], now).await })
            })
            .collect();
        let mut recorded = 0;
        for task in tasks {
            let applied = task.await.map_err(|e| e.to_string())?.map_err(|e| format!("apply: {e}"))?;
            match applied.first() {
                Some(Applied::Recorded) => recorded += 1,
                Some(Applied::Replayed) => {}
                other => return Err(format!("a racing apply answered {other:?}")),
            }
        }
        ensure!(recorded == 1, "{recorded} of {RACE_TASKS} racing applies recorded the event");
        Ok(())
    }

    async fn newest_wins(&self) -> Check {
        let number = self.number(11);
        let tasks: Vec<_> = (0..RACE_TASKS)
            .map(|i| {
                let action = if i % 2 == 0 { Action::OptOut } else { Action::OptIn };
                let n = u64::try_from(i).unwrap_or(0);
                let change = Change::new(number.clone(), Scope::Account, action, at(self.base, n), "race");
                let (store, now) = (Arc::clone(&self.store), self.base);
                tokio::spawn(async move { store.apply(&[change], now).await })
            })
            .collect();
        for task in tasks {
            task.await.map_err(|e| e.to_string())?.map_err(|e| format!("apply: {e}"))?;
        }
        // The newest (RACE_TASKS - 1, odd) is an opt-in.
        ensure!(!self.suppressed(&number, &[Scope::Account]).await?, "an older opt-out won the race");
        Ok(())
    }
}
