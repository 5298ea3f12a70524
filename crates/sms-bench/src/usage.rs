//! What a process used, read from `/proc`: CPU time (user + system, all threads, exited ones
//! included) and resident memory.

use std::fs;

/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// User + system CPU seconds of the process `pid`, or of this one; `None` when it cannot be read.
///
/// The kernel counts in nanoseconds and reports in ticks of 10 ms: measure over seconds, not
/// milliseconds.
#[must_use]
pub fn cpu_seconds(pid: Option<u32>) -> Option<f64> {
    cpu_split(pid).map(|(user, system)| user + system)
}

/// User and system CPU seconds of the process `pid`, or of this one.
#[must_use]
pub fn cpu_split(pid: Option<u32>) -> Option<(f64, f64)> {
    let path = pid.map_or_else(|| "/proc/self/stat".to_owned(), |pid| format!("/proc/{pid}/stat"));
    let stat = fs::read_to_string(path).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after the last `)`.
    let (_, after) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 (utime) and 15 (stime) of the whole line are the 12th and 13th after the name.
    let user: u64 = fields.get(11)?.parse().ok()?;
    let system: u64 = fields.get(12)?.parse().ok()?;
    #[allow(clippy::cast_precision_loss)] // ticks: far below 2^53
    Some((user as f64 / TICKS_PER_SECOND, system as f64 / TICKS_PER_SECOND))
}

/// CPU seconds of this process (all threads, user + system) to the nanosecond
/// (`CLOCK_PROCESS_CPUTIME_ID`).
#[must_use]
pub fn process_cpu_seconds() -> f64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    #[allow(clippy::cast_precision_loss)] // seconds and nanoseconds of a run
    let seconds = now.tv_sec as f64 + now.tv_nsec as f64 / 1e9;
    seconds
}

/// A `VmXxx:` figure of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field))?;
    line.trim_start_matches(field).trim().trim_end_matches("kB").trim().parse().ok()
}

/// This process's resident memory now, in KiB (`VmRSS`).
#[must_use]
pub fn rss_kib() -> Option<u64> {
    status_kib("VmRSS:")
}

/// This process's peak resident memory so far, in KiB (`VmHWM`).
#[must_use]
pub fn peak_rss_kib() -> Option<u64> {
    status_kib("VmHWM:")
}

/// CPU seconds of the calling thread to the nanosecond (`CLOCK_THREAD_CPUTIME_ID`).
#[must_use]
pub fn thread_cpu_seconds() -> f64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    #[allow(clippy::cast_precision_loss)] // seconds and nanoseconds of a run
    let seconds = now.tv_sec as f64 + now.tv_nsec as f64 / 1e9;
    seconds
}

/// Each core's `(busy, total)` clock ticks since boot, from the `cpuN` lines of `/proc/stat`
/// (every process on the core, not only ours); busy is all but `idle` and `iowait`. Empty when
/// it cannot be read.
#[must_use]
pub fn core_ticks() -> Vec<(u64, u64)> {
    let Ok(stat) = fs::read_to_string("/proc/stat") else { return Vec::new() };
    stat.lines()
        .filter(|line| line.starts_with("cpu") && line.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .map(|line| {
            // user nice system idle iowait irq softirq steal (guest time is inside user).
            let fields: Vec<u64> = line.split_whitespace().skip(1).take(8).filter_map(|f| f.parse().ok()).collect();
            let total: u64 = fields.iter().sum();
            let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
            (total.saturating_sub(idle), total)
        })
        .collect()
}

/// The share of each core that was busy between two [`core_ticks`] readings.
#[must_use]
pub fn cores_busy(before: &[(u64, u64)], after: &[(u64, u64)]) -> Vec<f64> {
    before
        .iter()
        .zip(after)
        .map(|(b, a)| {
            let total = a.1.saturating_sub(b.1);
            #[allow(clippy::cast_precision_loss)] // ticks of a run
            let share = if total == 0 { 0.0 } else { a.0.saturating_sub(b.0) as f64 / total as f64 };
            share
        })
        .collect()
}
