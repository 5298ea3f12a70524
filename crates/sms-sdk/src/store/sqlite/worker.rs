//! The SQLite store's connection thread: one thread owns the connection and runs the store's
//! calls one after another, in the order they were queued.
//!
//! A call goes over a bounded channel and comes back through a oneshot. Compared with a
//! `spawn_blocking` per call on a shared `Mutex<Connection>`, this saves the blocking pool's
//! bookkeeping and, under load, the several pool threads that each woke up only to wait for the
//! one connection (profiles showed more time in those wake-ups than in the SQL).

use std::panic::AssertUnwindSafe;

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

use crate::store::StoreError;

/// How many calls may wait for the connection thread; a caller beyond that waits for room (within
/// its operation timeout).
const QUEUE: usize = 1024;

/// One call: it answers through the oneshot it captured.
type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// The handle of the connection thread; the thread ends (closing the connection) once every
/// handle is dropped and the queued calls have run.
#[derive(Clone)]
pub(super) struct Worker {
    jobs: mpsc::Sender<Job>,
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

    /// Runs `f` on the connection thread and returns its answer. A call whose caller has given up
    /// (dropped this future) before its turn is skipped without touching the file.
    pub(super) async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move |connection| {
            if !reply.is_closed() {
                let _ = reply.send(f(connection));
            }
        });
        self.jobs.send(job).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

fn stopped() -> StoreError {
    StoreError::new("the SQLite connection thread stopped")
}

/// The connection thread: runs calls until every [`Worker`] handle is gone.
fn run(mut connection: Connection, mut queue: mpsc::Receiver<Job>) {
    while let Some(job) = queue.blocking_recv() {
        // A call that panics (a bug) drops its oneshot, so its caller gets an error; the
        // connection rolls back the call's open transaction, and the thread goes on.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut connection)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn calls_run_in_order_and_a_panicking_call_fails_alone() {
        let worker = Worker::start(Connection::open_in_memory().unwrap()).unwrap();
        worker.call(|c| Ok(c.execute_batch("CREATE TABLE t (n INTEGER)")?)).await.unwrap();
        let calls: Vec<_> =
            (0..20).map(|n| worker.call(move |c| Ok(c.execute("INSERT INTO t VALUES (?1)", [n])?))).collect();
        for call in calls {
            assert_eq!(call.await.unwrap(), 1);
        }
        let failed = worker.call::<()>(|_| panic!("a bug in a call")).await.unwrap_err();
        assert!(failed.to_string().contains("connection thread"), "{failed}");
        let order: Vec<i64> = worker
            .call(|c| Ok(c.prepare("SELECT n FROM t")?.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?))
            .await
            .unwrap();
        assert_eq!(order, (0..20).collect::<Vec<_>>());
    }
}
