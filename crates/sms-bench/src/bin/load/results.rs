//! What a suite run records (`results.json`), read back by `report`.

use serde::{Deserialize, Serialize};

/// One timed run of one row.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Sample {
    /// Operations completed (sends, pairs, transactions).
    pub(crate) ops: u64,
    /// Operations that failed (a failed run is reported, never hidden).
    pub(crate) errors: u64,
    /// Wall-clock seconds.
    pub(crate) wall_s: f64,
    /// User + system CPU seconds of the measuring process (all threads, to the nanosecond:
    /// `CLOCK_PROCESS_CPUTIME_ID`); `None` when another program did the work (`pgbench`).
    pub(crate) cpu_s: Option<f64>,
    /// The share of that CPU spent in the kernel (system over user + system ticks of
    /// `/proc/self/stat`).
    #[serde(default)]
    pub(crate) kernel_share: Option<f64>,
    /// User + system CPU seconds of the responder over the same window.
    pub(crate) responder_cpu_s: Option<f64>,
    /// The part of `responder_cpu_s` spent in the kernel (loopback TCP, both directions' delivery).
    #[serde(default)]
    pub(crate) responder_sys_s: Option<f64>,
    /// The `sms-sdk serve` rows: user + system CPU seconds of the serve process (all its
    /// threads) over the same window, and the part spent in the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) serve_cpu_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) serve_sys_s: Option<f64>,
    /// The `sms-sdk serve` rows: the share of each core busy over the window, counting every
    /// process on it (`/proc/stat`), core 0 first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) cores_busy: Vec<f64>,
}

impl Sample {
    /// Operations per second.
    #[allow(clippy::cast_precision_loss)] // counts far below 2^53
    pub(crate) fn rate(&self) -> f64 {
        if self.wall_s > 0.0 { self.ops as f64 / self.wall_s } else { 0.0 }
    }

    /// CPU microseconds per operation of the measuring process.
    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn cpu_us(&self) -> Option<f64> {
        self.cpu_s.filter(|_| self.ops > 0).map(|cpu| cpu * 1e6 / self.ops as f64)
    }

    /// Responder CPU microseconds per request.
    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn responder_us(&self) -> Option<f64> {
        self.responder_cpu_s.filter(|_| self.ops > 0).map(|cpu| cpu * 1e6 / self.ops as f64)
    }

    /// Responder user-space CPU microseconds per request (its own code: parse and write).
    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn responder_user_us(&self) -> Option<f64> {
        let user = self.responder_cpu_s.zip(self.responder_sys_s).map(|(all, sys)| all - sys);
        user.filter(|_| self.ops > 0).map(|cpu| cpu * 1e6 / self.ops as f64)
    }

    /// The share of its core the responder used.
    pub(crate) fn responder_load(&self) -> Option<f64> {
        self.responder_cpu_s.filter(|_| self.wall_s > 0.0).map(|cpu| cpu / self.wall_s)
    }

    /// The share of one core the client used (below 1 when it waited, or when other processes
    /// took its core).
    pub(crate) fn client_load(&self) -> Option<f64> {
        self.cpu_s.filter(|_| self.wall_s > 0.0).map(|cpu| cpu / self.wall_s)
    }

    /// The share of the client's CPU spent in the kernel.
    pub(crate) fn sys_share(&self) -> Option<f64> {
        self.kernel_share
    }

    /// Serve CPU microseconds per webhook (all its threads).
    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn serve_us(&self) -> Option<f64> {
        self.serve_cpu_s.filter(|_| self.ops > 0).map(|cpu| cpu * 1e6 / self.ops as f64)
    }

    /// The share of serve's CPU spent in the kernel.
    pub(crate) fn serve_sys_share(&self) -> Option<f64> {
        self.serve_cpu_s.zip(self.serve_sys_s).filter(|(all, _)| *all > 0.0).map(|(all, sys)| sys / all)
    }

    /// The share of one core serve used.
    pub(crate) fn serve_load(&self) -> Option<f64> {
        self.serve_cpu_s.filter(|_| self.wall_s > 0.0).map(|cpu| cpu / self.wall_s)
    }

    /// Operations per CPU second of the measuring thread or process (the in-process verify row:
    /// what one core does when nothing else runs on it).
    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn cpu_rate(&self) -> Option<f64> {
        self.cpu_s.filter(|cpu| *cpu > 0.0).map(|cpu| self.ops as f64 / cpu)
    }
}

/// Every run of one row.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Row {
    /// A stable id (`raw_32`, `sdk_32`, `pg_pair_store`, …).
    pub(crate) id: String,
    /// What was measured, for the report.
    pub(crate) label: String,
    /// Operations in flight.
    pub(crate) in_flight: usize,
    pub(crate) samples: Vec<Sample>,
}

impl Row {
    pub(crate) fn rates(&self) -> Vec<f64> {
        self.samples.iter().map(Sample::rate).collect()
    }

    pub(crate) fn median_rate(&self) -> Option<f64> {
        sms_bench::stats::median(&self.rates())
    }

    pub(crate) fn median_cpu_us(&self) -> Option<f64> {
        sms_bench::stats::median(&self.samples.iter().filter_map(Sample::cpu_us).collect::<Vec<_>>())
    }

    pub(crate) fn median_responder_us(&self) -> Option<f64> {
        sms_bench::stats::median(&self.samples.iter().filter_map(Sample::responder_us).collect::<Vec<_>>())
    }

    pub(crate) fn errors(&self) -> u64 {
        self.samples.iter().map(|s| s.errors).sum()
    }
}

/// One 10,000-in-flight memory run (a child process of its own).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct MemorySample {
    /// `raw`, `sdk` or `sdk-unlimited`.
    pub(crate) mode: String,
    pub(crate) in_flight: usize,
    /// Resident memory before the sends started, KiB.
    pub(crate) baseline_kib: u64,
    /// Peak resident memory (`VmHWM`), KiB.
    pub(crate) peak_kib: u64,
    pub(crate) ok: u64,
    pub(crate) errors: u64,
    /// The first error seen, if any.
    pub(crate) first_error: Option<String>,
    pub(crate) wall_s: f64,
}

/// A whole suite run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Results {
    pub(crate) runs: usize,
    pub(crate) seconds: f64,
    pub(crate) rows: Vec<Row>,
    pub(crate) memory: Vec<MemorySample>,
    /// Whether the SQL and Lua the minimal clients run are still the stores' own (checked
    /// against the store sources at build time), and anything else worth a line.
    pub(crate) notes: Vec<String>,
    /// Rows that could not be measured, with why.
    pub(crate) skipped: Vec<String>,
    /// The core `sms-sdk serve` was pinned to (the serve rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) serve_cpu: Option<usize>,
}

impl Results {
    pub(crate) fn row(&self, id: &str) -> Option<&Row> {
        self.rows.iter().find(|row| row.id == id)
    }

    pub(crate) fn row_mut(&mut self, id: &str, label: &str, in_flight: usize) -> &mut Row {
        if !self.rows.iter().any(|row| row.id == id) {
            self.rows.push(Row { id: id.to_owned(), label: label.to_owned(), in_flight, samples: Vec::new() });
        }
        self.rows.iter_mut().find(|row| row.id == id).expect("the row was just added")
    }
}
