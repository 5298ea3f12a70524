//! Driving N operations in flight on the current (single-threaded) runtime for a while, and
//! timing it: wall clock, and the CPU time of this process and of the responder.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sms_bench::usage::{cpu_split, process_cpu_seconds};

use crate::results::Sample;

/// Numbers the calls of [`drive`], so that every `seq` of a process is unique.
static DRIVES: AtomicU64 = AtomicU64::new(1);

/// The worker (0..255) of a `seq` that [`drive`] handed out.
pub(crate) fn worker_of(seq: u64) -> usize {
    usize::try_from((seq >> 40) & 0xff).unwrap_or(0)
}

/// Runs `workers` loops of `op` until `duration` has passed (each finishes the operation it has
/// in flight), as separate tasks on the current runtime. `op(seq)` gets a number unique in this
/// process (the drive, the worker and a counter) and returns `Err(reason)` on failure. Returns the operations and errors counted, and the
/// first error.
pub(crate) async fn drive<F, Fut>(workers: usize, duration: Duration, op: Arc<F>) -> (u64, u64, Option<String>)
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let deadline = Instant::now() + duration;
    let drive = DRIVES.fetch_add(1, Ordering::Relaxed) << 48;
    let tasks: Vec<_> = (0..workers as u64)
        .map(|worker| {
            let op = Arc::clone(&op);
            tokio::spawn(async move {
                let (mut done, mut failed, mut first) = (0u64, 0u64, None);
                let mut seq = drive | (worker << 40);
                while Instant::now() < deadline {
                    match op(seq).await {
                        Ok(()) => done += 1,
                        Err(error) => {
                            failed += 1;
                            first.get_or_insert(error);
                        }
                    }
                    seq += 1;
                }
                (done, failed, first)
            })
        })
        .collect();
    let (mut done, mut failed, mut first) = (0, 0, None);
    for task in tasks {
        let (d, f, e) = task.await.unwrap_or((0, 1, Some("a worker panicked".to_owned())));
        done += d;
        failed += f;
        if first.is_none() {
            first = e;
        }
    }
    (done, failed, first)
}

/// [`drive`], timed: wall clock, this process's CPU and the responder's (`responder`, a pid).
pub(crate) async fn measure<F, Fut>(workers: usize, duration: Duration, responder: Option<u32>, op: Arc<F>) -> Sample
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let responder_before = responder.and_then(|pid| cpu_split(Some(pid)));
    let (ticks_before, cpu_before) = (cpu_split(None), process_cpu_seconds());
    let started = Instant::now();
    let (ops, errors, first) = drive(workers, duration, op).await;
    let wall_s = started.elapsed().as_secs_f64();
    let cpu_s = Some(process_cpu_seconds() - cpu_before);
    let kernel_share = kernel_share(ticks_before);
    let responder = responder.and_then(|pid| cpu_split(Some(pid))).zip(responder_before);
    let responder = responder.map(|(after, before)| (after.0 - before.0, after.1 - before.1));
    if let Some(error) = first {
        eprintln!("    {errors} operations failed; the first: {error}");
    }
    Sample {
        ops,
        errors,
        wall_s,
        cpu_s,
        kernel_share,
        responder_cpu_s: responder.map(|(user, sys)| user + sys),
        responder_sys_s: responder.map(|(_, sys)| sys),
        ..Sample::default()
    }
}

/// System over user + system ticks of this process since `before`.
pub(crate) fn kernel_share(before: Option<(f64, f64)>) -> Option<f64> {
    let (user, sys) = cpu_split(None).zip(before).map(|(a, b)| (a.0 - b.0, a.1 - b.1))?;
    (user + sys > 0.0).then(|| sys / (user + sys))
}

/// The same as [`measure`] for a synchronous loop on this thread (SQLite's minimal client).
pub(crate) fn measure_blocking(duration: Duration, mut op: impl FnMut(u64) -> Result<(), String>) -> Sample {
    let (ticks_before, cpu_before) = (cpu_split(None), process_cpu_seconds());
    let started = Instant::now();
    let (mut ops, mut errors, mut seq) = (0, 0, 0);
    while started.elapsed() < duration {
        match op(seq) {
            Ok(()) => ops += 1,
            Err(error) => {
                if errors == 0 {
                    eprintln!("    first failure: {error}");
                }
                errors += 1;
            }
        }
        seq += 1;
    }
    let wall_s = started.elapsed().as_secs_f64();
    Sample {
        ops,
        errors,
        wall_s,
        cpu_s: Some(process_cpu_seconds() - cpu_before),
        kernel_share: kernel_share(ticks_before),
        ..Sample::default()
    }
}
