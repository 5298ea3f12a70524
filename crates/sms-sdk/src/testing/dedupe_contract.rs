//! The webhook dedupe store contract: every check a [`DedupeStore`] must pass, including a race.
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
//! The expiry check sleeps for real (twice its 250 ms retention) and asks at exactly `base +
//! retention`, so it passes both for stores that compare the `now` they are given and for stores
//! whose keys expire on the server's clock (Redis).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::{CaseResult, Report};
use crate::store::DedupeStore;

type Check = Result<(), String>;

/// Concurrent tasks in the race check.
#[doc(hidden)] // a knob of the suite, not part of the API: the repository's tests read it
pub const RACE_TASKS: usize = 32;
/// Keys every task of the race check asks about.
#[doc(hidden)] // a knob of the suite, not part of the API: the repository's tests read it
pub const RACE_KEYS: usize = 200;
/// The retention of the expiry check; it sleeps twice as long.
#[doc(hidden)] // a knob of the suite, not part of the API: the repository's tests read it
pub const SHORT_RETENTION: Duration = Duration::from_millis(250);

const RETENTION: Duration = Duration::from_secs(10);

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
    record("a sighting after the retention is first again", run.after_retention().await);
    record("distinct keys are independent", run.independent().await);
    record(&format!("{RACE_TASKS} tasks asking about {RACE_KEYS} keys: one first per key"), run.race().await);
    let passed = results.iter().all(|r| r.passed);
    Report { subject: name.to_owned(), passed, results }
}

struct Run {
    store: Arc<dyn DedupeStore>,
    prefix: String,
    base: SystemTime,
}

impl Run {
    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    async fn first_seen(&self, key: &str, now: SystemTime, retention: Duration) -> Result<bool, String> {
        self.store.first_seen(key, now, retention).await.map_err(|e| format!("{key}: {e}"))
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
        let expired = self.base + SHORT_RETENTION;
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
                        if store.first_seen(key, now, RETENTION).await.map_err(|e| e.to_string())? {
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
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Mutex;

    use super::*;
    use crate::store::{MemoryStore, StoreError};
    use futures_util::future::BoxFuture;

    /// A broken store: `Forgetful` never remembers, `Eternal` never forgets.
    enum Broken {
        Forgetful,
        Eternal(Mutex<HashSet<String>>),
    }

    impl DedupeStore for Broken {
        fn first_seen<'a>(
            &'a self,
            key: &'a str,
            _now: SystemTime,
            _retention: Duration,
        ) -> BoxFuture<'a, Result<bool, StoreError>> {
            Box::pin(async move {
                Ok(match self {
                    Self::Forgetful => true,
                    Self::Eternal(seen) => seen.lock().map_err(|e| StoreError::new(e.to_string()))?.insert(key.into()),
                })
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
        assert_eq!(report.results.len(), 5);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_that_never_remembers_fails() {
        let report = run("forgetful", Arc::new(Broken::Forgetful)).await;
        assert!(!report.passed);
        assert_eq!(
            failed(&report),
            [
                "forgetful: a sighting within the retention is not first",
                "forgetful: a sighting after the retention is first again",
                "forgetful: distinct keys are independent",
                "forgetful: 32 tasks asking about 200 keys: one first per key",
            ]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_that_never_forgets_fails() {
        let report = run("eternal", Arc::new(Broken::Eternal(Mutex::default()))).await;
        assert_eq!(failed(&report), ["eternal: a sighting after the retention is first again"]);
    }
}
