//! The SQLite store's connection thread: one thread owns the connection and runs the store's
//! calls, committing the writes that wait together (group commit).
//!
//! A call goes over a bounded channel and comes back through a oneshot. Compared with a
//! `spawn_blocking` per call on a shared `Mutex<Connection>`, this saves the blocking pool's
//! bookkeeping and, under load, the several pool threads that each woke up only to wait for the
//! one connection (profiles showed more time in those wake-ups than in the SQL).
//!
//! **Group commit.** With `synchronous = FULL` every commit waits for its `fsync`, which on a disk
//! costs far more than the SQL. So when the thread takes a call, it also takes every call already
//! waiting (at most [`MAX_BATCH`] in all). The reads among them run first, one by one and outside
//! any transaction: a read never waits for the write lock, and sees only committed writes. The
//! writes, in the order they were queued, run in one `BEGIN IMMEDIATE` transaction, each inside a
//! `SAVEPOINT` of its own: a call that fails (or panics) rolls back to its savepoint alone, and the
//! others go on. One `COMMIT`, one `fsync`, ends the batch, and only then does each caller get its
//! answer: no caller learns of a write that is not on disk. When `BEGIN` or `COMMIT` fails, every
//! call of the batch gets a store error (its writes are gone). A write taken alone runs as it would
//! without batching: its statements commit on their own, or in the transaction of its own that it
//! opens ([`Atomic`]).
//!
//! Lock waits stay each call's own: `BEGIN IMMEDIATE` waits for another connection's write lock
//! until the earliest lock deadline among the batch's calls; when it passes, the calls whose
//! deadline it was get the busy error, and the others wait on, each until its own deadline. A call
//! whose caller gave up (dropped its future) before its turn is skipped without touching the file.

use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use rusqlite::{Connection, Savepoint, Transaction, TransactionBehavior, ffi};
use tokio::sync::{mpsc, oneshot};

use super::{LockDeadline, MAX_BUSY_WAIT, is_busy};
use crate::store::StoreError;

/// How many calls may wait for the connection thread; a caller beyond that waits for room (within
/// its operation timeout).
const QUEUE: usize = 1024;

/// The most calls the thread takes at once, and so the most writes one commit makes durable.
const MAX_BATCH: usize = 64;
/// The least time a call that waits for another connection's lock keeps to answer before its
/// caller gives up (see [`Budget::lock_deadline`]).
const LOCK_MARGIN: Duration = Duration::from_millis(250);

/// What a call does to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// It only reads: it runs alone, outside any transaction of a batch.
    Read,
    /// It writes (or may): it runs with the writes waiting with it, committed together.
    Write,
}

/// How long a call may take: its operation timeout, from when it was made.
#[derive(Debug, Clone, Copy)]
pub(super) struct Budget {
    started: Instant,
    limit: Duration,
}

impl Budget {
    pub(super) fn new(limit: Duration) -> Self {
        Self { started: Instant::now(), limit }
    }

    /// What is left of it: zero once the caller has given up.
    pub(super) fn left(self) -> Duration {
        self.limit.saturating_sub(self.started.elapsed())
    }

    /// Until when the call may still wait for another connection's lock: before its caller
    /// gives up, so that the error says that the lock was why. The margin (a twentieth of what
    /// is left, at least 250 ms, at most a quarter) leaves room for a thread of a loaded
    /// machine to wake from its last sleep and answer.
    pub(super) fn lock_deadline(self) -> Instant {
        let left = self.left();
        let margin = (left / 20).max(LOCK_MARGIN).min(left / 4);
        let wait = left.saturating_sub(margin).min(MAX_BUSY_WAIT);
        let now = Instant::now();
        now.checked_add(wait).unwrap_or(now)
    }
}

/// The handle of the connection thread; the thread ends (closing the connection) once every
/// handle is dropped and the queued calls have run.
#[derive(Clone)]
pub(super) struct Worker {
    jobs: mpsc::Sender<Box<dyn Job>>,
}

impl Worker {
    /// Starts the thread that owns `connection`.
    pub(super) fn start(connection: Connection) -> Result<Self, StoreError> {
        let (jobs, queue) = mpsc::channel(QUEUE);
        std::thread::Builder::new()
            .name("sms-sdk-sqlite".into())
            .spawn(move || run(connection, queue))
            .map_err(StoreError::new)?;
        Ok(Self { jobs })
    }

    /// Runs `f` on the connection thread and returns its answer, once what it wrote is committed.
    /// A call whose caller has given up (dropped this future) before its turn is skipped without
    /// touching the file.
    pub(super) async fn call<T: Send + 'static>(
        &self,
        access: Access,
        budget: Budget,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = Box::new(Call { access, budget, state: State::Queued(f), reply });
        self.jobs.send(job).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

fn stopped() -> StoreError {
    StoreError::new("the SQLite connection thread stopped")
}

/// The transaction of a call whose statements must hold together: an immediate transaction of
/// its own when the call runs alone, a savepoint inside its batch's transaction (which already
/// holds the write lock) otherwise. Dropped without [`commit`](Self::commit), it rolls back.
pub(crate) enum Atomic<'c> {
    Alone(Transaction<'c>),
    InBatch(Savepoint<'c>),
}

impl<'c> Atomic<'c> {
    pub(crate) fn begin(connection: &'c mut Connection) -> rusqlite::Result<Self> {
        if connection.is_autocommit() {
            connection.transaction_with_behavior(TransactionBehavior::Immediate).map(Self::Alone)
        } else {
            connection.savepoint().map(Self::InBatch)
        }
    }

    pub(crate) fn commit(self) -> rusqlite::Result<()> {
        match self {
            Self::Alone(transaction) => transaction.commit(),
            Self::InBatch(savepoint) => savepoint.commit(),
        }
    }
}

impl std::ops::Deref for Atomic<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        match self {
            Self::Alone(transaction) => transaction,
            Self::InBatch(savepoint) => savepoint,
        }
    }
}

/// A queued call; its answer waits until its batch has committed.
trait Job: Send {
    fn access(&self) -> Access;
    fn lock_deadline(&self) -> Instant;
    /// True when the caller has given up: the call is skipped.
    fn abandoned(&self) -> bool;
    /// Runs the call, unless its caller has given up; false when it failed (or panicked while
    /// running: then it stays unanswered), and what it wrote must go.
    fn run(&mut self, connection: &mut Connection) -> bool;
    /// Answers the caller: with the call's result, or, when its batch did not commit (`lost`),
    /// with that error (a call that failed keeps its own error).
    fn answer(self: Box<Self>, lost: Option<&rusqlite::Error>);
}

enum State<T, F> {
    Queued(F),
    Ran(Result<T, StoreError>),
    /// Skipped, or panicked while running.
    Gone,
}

struct Call<T, F> {
    access: Access,
    budget: Budget,
    state: State<T, F>,
    reply: oneshot::Sender<Result<T, StoreError>>,
}

impl<T, F> Job for Call<T, F>
where
    T: Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
{
    fn access(&self) -> Access {
        self.access
    }

    fn lock_deadline(&self) -> Instant {
        self.budget.lock_deadline()
    }

    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }

    fn run(&mut self, connection: &mut Connection) -> bool {
        let State::Queued(f) = std::mem::replace(&mut self.state, State::Gone) else { return true };
        if self.abandoned() {
            return true;
        }
        let result = f(connection);
        let ok = result.is_ok();
        self.state = State::Ran(result);
        ok
    }

    fn answer(self: Box<Self>, lost: Option<&rusqlite::Error>) {
        let Self { state, reply, .. } = *self;
        let result = match (state, lost) {
            (State::Ran(Ok(_)) | State::Queued(_), Some(error)) => Err(StoreError::from(copy(error))),
            (State::Ran(result), _) => result,
            // Dropping the oneshot tells a caller whose call panicked that it failed.
            (State::Queued(_) | State::Gone, None) | (State::Gone, Some(_)) => return,
        };
        let _ = reply.send(result);
    }
}

/// The batch's failure, for one of its calls: each caller gets an error of its own, with the same
/// code and message (failures of `BEGIN`, `SAVEPOINT` and `COMMIT` are all SQLite's own).
fn copy(error: &rusqlite::Error) -> rusqlite::Error {
    if let rusqlite::Error::SqliteFailure(code, message) = error {
        return rusqlite::Error::SqliteFailure(*code, message.clone());
    }
    rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_ERROR), Some(error.to_string()))
}

/// The connection thread: runs calls until every [`Worker`] handle is gone.
fn run(mut connection: Connection, mut queue: mpsc::Receiver<Box<dyn Job>>) {
    while let Some(first) = queue.blocking_recv() {
        let mut taken = vec![first];
        while taken.len() < MAX_BATCH {
            let Ok(job) = queue.try_recv() else { break };
            taken.push(job);
        }
        let (reads, mut writes): (Vec<_>, Vec<_>) = taken.into_iter().partition(|job| job.access() == Access::Read);
        for job in reads {
            alone(&mut connection, job);
        }
        writes.retain(|job| !job.abandoned());
        while writes.len() > 1 {
            writes = together(&mut connection, writes);
        }
        for job in writes {
            alone(&mut connection, job);
        }
    }
}

/// Runs one call on its own and answers it.
fn alone(connection: &mut Connection, mut job: Box<dyn Job>) {
    // A call that panics (a bug) drops its oneshot, so its caller gets an error; the connection
    // rolls back the call's open transaction, and the thread goes on.
    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| job.run(connection)));
    job.answer(None);
}

/// Runs `jobs`, writes in the order they were queued, in one transaction, each in a savepoint of
/// its own; commits once, then answers them. Returns the calls it did not get to (a call ended
/// the batch's transaction), to run next.
fn together(connection: &mut Connection, jobs: Vec<Box<dyn Job>>) -> Vec<Box<dyn Job>> {
    let (jobs, deadline) = begin(connection, jobs);
    if jobs.is_empty() {
        return jobs;
    }
    let mut ran = Vec::with_capacity(jobs.len());
    let mut rest = jobs.into_iter();
    for mut job in rest.by_ref() {
        let kept = in_savepoint(connection, &mut job);
        ran.push(job);
        if let Err(error) = kept {
            roll_back(connection);
            for job in ran {
                job.answer(Some(&error));
            }
            return rest.collect();
        }
    }
    let committed = {
        let _deadline = LockDeadline::until(deadline);
        execute(connection, "COMMIT")
    };
    if committed.is_err() {
        roll_back(connection);
    }
    let lost = committed.err();
    for job in ran {
        job.answer(lost.as_ref());
    }
    Vec::new()
}

/// `BEGIN IMMEDIATE` for `jobs`, waiting for another connection's write lock until the earliest
/// of their lock deadlines; when that passes, the calls whose deadline it was get the busy error
/// and the others wait on, each until its own. Returns the calls left, inside the transaction
/// (none: no transaction), and their earliest lock deadline.
fn begin(connection: &Connection, jobs: Vec<Box<dyn Job>>) -> (Vec<Box<dyn Job>>, Instant) {
    let mut jobs: Vec<_> = jobs.into_iter().map(|job| (job.lock_deadline(), job)).collect();
    loop {
        let Some(earliest) = jobs.iter().map(|(deadline, _)| *deadline).min() else {
            return (Vec::new(), Instant::now());
        };
        let begun = {
            let _deadline = LockDeadline::until(earliest);
            execute(connection, "BEGIN IMMEDIATE")
        };
        let Err(error) = begun else { return (jobs.into_iter().map(|(_, job)| job).collect(), earliest) };
        let (busy, now) = (error.sqlite_error_code().is_some_and(is_busy), Instant::now().max(earliest));
        let (failed, waiting): (Vec<_>, Vec<_>) = jobs.into_iter().partition(|(deadline, _)| !busy || *deadline <= now);
        for (_, job) in failed {
            job.answer(Some(&error));
        }
        jobs = waiting;
    }
}

/// The statements around each call inside a batch's transaction.
const SAVEPOINT: &str = "SAVEPOINT sms_sdk_call";
const RELEASE: &str = "RELEASE sms_sdk_call";
const ROLLBACK_TO: &str = "ROLLBACK TO sms_sdk_call";

/// Runs `job` in a savepoint of its own inside the batch's transaction: kept when it succeeds,
/// rolled back alone when it fails or panics. An error when the savepoint's statements fail, or
/// when the call ended the batch's transaction (SQLite rolls a transaction back on some errors):
/// then the batch's writes so far are gone.
fn in_savepoint(connection: &mut Connection, job: &mut Box<dyn Job>) -> rusqlite::Result<()> {
    execute(connection, SAVEPOINT)?;
    let kept = std::panic::catch_unwind(AssertUnwindSafe(|| job.run(connection))).unwrap_or(false);
    if connection.is_autocommit() {
        let message = "a call of the same batch ended the batch's transaction: its writes are gone";
        return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(ffi::SQLITE_ABORT_ROLLBACK), Some(message.into())));
    }
    if !kept {
        execute(connection, ROLLBACK_TO)?;
    }
    execute(connection, RELEASE)
}

/// Runs `sql`, a statement that returns no rows, prepared once.
fn execute(connection: &Connection, sql: &str) -> rusqlite::Result<()> {
    connection.prepare_cached(sql)?.execute([]).map(drop)
}

/// Ends the batch's transaction without keeping anything, when it is still open.
fn roll_back(connection: &Connection) {
    if !connection.is_autocommit() {
        let _ = connection.execute_batch("ROLLBACK");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    use std::sync::{Arc, Mutex};

    use futures_util::future::BoxFuture;
    use rusqlite::ErrorCode;

    use super::*;

    type Answer<T> = BoxFuture<'static, Result<T, StoreError>>;

    fn budget() -> Budget {
        Budget::new(Duration::from_secs(10))
    }

    /// A worker over an in-memory database with the table `t (n INTEGER)`, calling `hook` on every
    /// commit (true turns the commit into a rollback).
    fn worker_with(hook: impl FnMut() -> bool + Send + 'static) -> Worker {
        let connection = Connection::open_in_memory().unwrap();
        connection.execute_batch("CREATE TABLE t (n INTEGER)").unwrap();
        connection.commit_hook(Some(hook));
        Worker::start(connection).unwrap()
    }

    /// A write call inserting `n` into `t`.
    fn insert(worker: &Worker, n: i64) -> Answer<()> {
        let worker = worker.clone();
        Box::pin(async move {
            worker
                .call(Access::Write, budget(), move |c| Ok(c.execute("INSERT INTO t VALUES (?1)", [n]).map(drop)?))
                .await
        })
    }

    /// A write call running `f`.
    fn write<T: Send + 'static>(
        worker: &Worker,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Answer<T> {
        let worker = worker.clone();
        Box::pin(async move { worker.call(Access::Write, budget(), f).await })
    }

    async fn rows(worker: &Worker) -> Vec<i64> {
        let read = |c: &mut Connection| {
            Ok(c.prepare("SELECT n FROM t")?.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?)
        };
        worker.call(Access::Read, budget(), read).await.unwrap()
    }

    /// Queues `calls` while the connection thread is held by another call, so that they all wait
    /// in its queue and are taken together; then lets the thread go: their answers, in order.
    async fn taken_together<T: Send + 'static>(worker: &Worker, calls: Vec<Answer<T>>) -> Vec<Result<T, StoreError>> {
        let (open, gate) = std::sync::mpsc::channel::<()>();
        let (holding, held) = oneshot::channel();
        let hold = {
            let worker = worker.clone();
            tokio::spawn(async move {
                let hold = move |_: &mut Connection| {
                    let _ = holding.send(());
                    let _ = gate.recv();
                    Ok(())
                };
                worker.call(Access::Read, budget(), hold).await
            })
        };
        held.await.unwrap();
        let count = calls.len();
        let tasks: Vec<_> = calls.into_iter().map(tokio::spawn).collect();
        while QUEUE - worker.jobs.capacity() < count {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        open.send(()).unwrap();
        hold.await.unwrap().unwrap();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.unwrap());
        }
        answers
    }

    /// The SQLite error behind a store error.
    fn sqlite(error: &StoreError) -> &rusqlite::Error {
        std::error::Error::source(error).and_then(|e| e.downcast_ref::<rusqlite::Error>()).unwrap()
    }

    #[tokio::test(flavor = "current_thread")]
    async fn calls_run_in_order_and_a_panicking_call_fails_alone() {
        let worker = worker_with(|| false);
        for n in 0..20 {
            insert(&worker, n).await.unwrap();
        }
        let failed = worker.call::<()>(Access::Write, budget(), |_| panic!("a bug in a call")).await.unwrap_err();
        assert!(failed.to_string().contains("connection thread"), "{failed}");
        assert_eq!(rows(&worker).await, (0..20).collect::<Vec<_>>());
    }

    #[tokio::test(flavor = "current_thread")]
    async fn writes_that_wait_are_committed_together_and_answered_after_the_commit() {
        let (commits, answered, at_commits) =
            (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(Mutex::new(Vec::new())));
        let worker = worker_with({
            let (commits, answered, at_commits) =
                (Arc::clone(&commits), Arc::clone(&answered), Arc::clone(&at_commits));
            move || {
                at_commits.lock().unwrap().push(answered.load(SeqCst));
                commits.fetch_add(1, SeqCst);
                false
            }
        });
        // Each call returns the commits made when it ran; its caller compares them with the
        // commits made when it got its answer.
        let calls = (0..100)
            .map(|n| {
                let (counted, commits, answered) = (Arc::clone(&commits), Arc::clone(&commits), Arc::clone(&answered));
                let ran_at = write(&worker, move |c| {
                    c.execute("INSERT INTO t VALUES (?1)", [n])?;
                    Ok(counted.load(SeqCst))
                });
                Box::pin(async move {
                    let ran_at = ran_at.await?;
                    let answered_at = commits.load(SeqCst);
                    answered.fetch_add(1, SeqCst);
                    Ok((ran_at, answered_at))
                }) as Answer<_>
            })
            .collect();
        for answer in taken_together(&worker, calls).await {
            let (ran_at, answered_at) = answer.unwrap();
            assert!(answered_at > ran_at, "a caller was answered before its write was committed");
        }
        // 100 writes, taken 64 at most at once: two commits, and no caller had its answer when
        // the first one ran.
        assert_eq!(commits.load(SeqCst), 2);
        assert_eq!(at_commits.lock().unwrap()[0], 0, "answered before the commit");
        assert_eq!(rows(&worker).await, (0..100).collect::<Vec<_>>());
        // A write alone commits alone.
        insert(&worker, 100).await.unwrap();
        assert_eq!(commits.load(SeqCst), 3);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_call_that_fails_in_a_batch_rolls_back_alone() {
        let commits = Arc::new(AtomicUsize::new(0));
        let worker = worker_with({
            let commits = Arc::clone(&commits);
            move || {
                commits.fetch_add(1, SeqCst);
                false
            }
        });
        let calls = vec![
            insert(&worker, 1),
            write(&worker, |c| {
                c.execute("INSERT INTO t VALUES (2)", [])?;
                Err(StoreError::new("refused"))
            }),
            write(&worker, |c| {
                c.execute("INSERT INTO t VALUES (3)", [])?;
                panic!("a bug in a call")
            }),
            // Its own transaction is a savepoint inside the batch's; it fails after committing it.
            write(&worker, |c| {
                let tx = Atomic::begin(c)?;
                assert!(matches!(tx, Atomic::InBatch(_)));
                tx.execute("INSERT INTO t VALUES (4)", [])?;
                tx.commit()?;
                c.execute("INSERT INTO t VALUES (5)", [])?;
                Err(StoreError::new("refused after its transaction"))
            }),
            write(&worker, |c| Ok(c.execute("INSERT INTO t VALUES (x)", []).map(drop)?)),
            insert(&worker, 6),
        ];
        let answers = taken_together(&worker, calls).await;
        assert!(answers[0].is_ok() && answers[5].is_ok(), "{answers:?}");
        assert_eq!(answers[1].as_ref().unwrap_err().to_string(), "idempotency store error: refused");
        assert!(answers[2].as_ref().unwrap_err().to_string().contains("connection thread"), "{answers:?}");
        assert!(answers[3].as_ref().unwrap_err().to_string().contains("after its transaction"), "{answers:?}");
        assert!(answers[4].as_ref().unwrap_err().to_string().contains("no such column: x"), "{answers:?}");
        assert_eq!(rows(&worker).await, [1, 6]);
        assert_eq!(commits.load(SeqCst), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_batch_whose_commit_fails_answers_every_call_with_an_error() {
        let fail = Arc::new(AtomicBool::new(true));
        let worker = worker_with({
            let fail = Arc::clone(&fail);
            move || fail.load(SeqCst)
        });
        let own = write(&worker, |c| {
            c.execute("INSERT INTO t VALUES (2)", [])?;
            Err(StoreError::new("its own failure"))
        });
        let calls = vec![insert(&worker, 1), own, insert(&worker, 3)];
        let answers = taken_together(&worker, calls).await;
        for answer in [&answers[0], &answers[2]] {
            let error = answer.as_ref().unwrap_err();
            let code = sqlite(error).sqlite_error().map(|e| e.extended_code);
            assert_eq!(code, Some(ffi::SQLITE_CONSTRAINT_COMMITHOOK), "{error}");
        }
        assert_eq!(answers[1].as_ref().unwrap_err().to_string(), "idempotency store error: its own failure");
        assert_eq!(rows(&worker).await, Vec::<i64>::new());
        // The thread goes on: the next batch commits.
        fail.store(false, SeqCst);
        let answers = taken_together(&worker, vec![insert(&worker, 4), insert(&worker, 5)]).await;
        assert!(answers.iter().all(Result::is_ok), "{answers:?}");
        assert_eq!(rows(&worker).await, [4, 5]);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_call_that_ends_the_batch_s_transaction_fails_the_calls_before_it() {
        let worker = worker_with(|| false);
        let rollback = write(&worker, |c| Ok(c.execute_batch("INSERT INTO t VALUES (2); ROLLBACK")?));
        let calls = vec![insert(&worker, 1), rollback, insert(&worker, 3), insert(&worker, 4)];
        let answers = taken_together(&worker, calls).await;
        for answer in &answers[..2] {
            let error = answer.as_ref().unwrap_err();
            assert!(error.to_string().contains("ended the batch's transaction"), "{error}");
            assert_eq!(sqlite(error).sqlite_error_code(), Some(ErrorCode::OperationAborted));
        }
        // The calls after it run in the next batch.
        assert!(answers[2].is_ok() && answers[3].is_ok(), "{answers:?}");
        assert_eq!(rows(&worker).await, [3, 4]);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_batch_waits_for_a_lock_until_each_call_s_own_deadline_and_reads_do_not_wait() {
        let dir = std::env::temp_dir().join(format!("sms-sdk-batch-{}", crate::ids::uuid_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.db");
        let create = ["CREATE TABLE t (n INTEGER)".to_owned()];
        let worker = Worker::start(super::super::prepare(&path, &create, Duration::from_secs(1)).unwrap()).unwrap();
        let locker = Connection::open(&path).unwrap();
        locker.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (0)").unwrap();
        let started = Instant::now();
        let timed =
            |call: Answer<()>| -> Answer<Duration> { Box::pin(async move { call.await.map(|()| started.elapsed()) }) };
        let (short, long) = (worker.clone(), worker.clone());
        let calls = vec![
            timed(Box::pin(async move {
                let f = |c: &mut Connection| Ok(c.execute("INSERT INTO t VALUES (1)", []).map(drop)?);
                short.call(Access::Write, Budget::new(Duration::from_millis(300)), f).await
            })),
            timed(Box::pin(async move {
                let f = |c: &mut Connection| Ok(c.execute("INSERT INTO t VALUES (2)", []).map(drop)?);
                long.call(Access::Write, Budget::new(Duration::from_secs(10)), f).await
            })),
            timed(Box::pin({
                let worker = worker.clone();
                async move {
                    let f = |c: &mut Connection| Ok(c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))?);
                    assert_eq!(worker.call(Access::Read, budget(), f).await?, 0);
                    Ok(())
                }
            })),
        ];
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(800));
            let released = started.elapsed();
            locker.execute_batch("COMMIT").unwrap();
            released
        });
        let answers = taken_together(&worker, calls).await;
        let released = release.join().unwrap();
        // The short call gave up at its own deadline, with the busy error.
        let error = answers[0].as_ref().unwrap_err();
        assert_eq!(sqlite(error).sqlite_error_code(), Some(ErrorCode::DatabaseBusy), "{error}");
        // The long one waited on, and wrote once the lock was free.
        assert!(*answers[1].as_ref().unwrap() >= released, "{answers:?} {released:?}");
        // The read taken with them ran first, without waiting for the write lock.
        assert!(*answers[2].as_ref().unwrap() < released, "{answers:?} {released:?}");
        assert_eq!(rows(&worker).await, [0, 2]);
        drop(worker);
        let _ = std::fs::remove_dir_all(dir);
    }
}
