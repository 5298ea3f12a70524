//! Writes `BENCHMARKS.md`: the issue's target table from one suite run (`results.json`),
//! criterion's medians and the allocation counts, then every run, the machine, the commands, and
//! what limits each figure.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sms_bench::stats::median;

use crate::mib;
use crate::results::{MemorySample, Results, Row, Sample};
use crate::serve::{SERVE_ROWS, VERIFY_ROW};

#[derive(Debug, clap::Parser)]
pub(crate) struct ReportArgs {
    /// The suite's JSON.
    #[arg(long)]
    results: PathBuf,
    /// Criterion's output directory (`target/criterion`).
    #[arg(long)]
    criterion: PathBuf,
    /// The allocation counts (`sms-bench-allocs`).
    #[arg(long)]
    allocs: Option<PathBuf>,
    /// The webhook ratios measured in interleaved rounds (`SMS_BENCH_PAIRED` of the `micro`
    /// bench); without it, the ratios are those of criterion's medians.
    #[arg(long)]
    paired: Option<PathBuf>,
    /// The `sms-sdk serve` rows (`sms-bench-load serve`'s JSON), when they were measured.
    #[arg(long)]
    serve: Option<PathBuf>,
    /// Markdown describing the machine and the run (written by `scripts/bench.sh`).
    #[arg(long)]
    machine: PathBuf,
    /// The commands run, one per line.
    #[arg(long)]
    commands: PathBuf,
    /// The commit measured.
    #[arg(long)]
    commit: String,
    #[arg(long)]
    out: PathBuf,
}

/// A criterion median: nanoseconds per iteration, with its 95 % interval.
#[derive(Debug, Clone, Copy)]
struct Timing {
    ns: f64,
    low: f64,
    high: f64,
}

impl Timing {
    fn per_second(self) -> f64 {
        1e9 / self.ns
    }
}

fn timing(criterion: &Path, id: &str) -> Option<Timing> {
    let text = std::fs::read_to_string(criterion.join(id).join("new").join("estimates.json")).ok()?;
    let json: Value = serde_json::from_str(&text).ok()?;
    let median = json.get("median")?;
    let interval = median.get("confidence_interval")?;
    Some(Timing {
        ns: median.get("point_estimate")?.as_f64()?,
        low: interval.get("lower_bound")?.as_f64()?,
        high: interval.get("upper_bound")?.as_f64()?,
    })
}

/// `(allocations, bytes)` per operation of `name` in `section` of the allocation counts.
fn allocations(allocs: Option<&Value>, section: &str, name: &str) -> Option<(f64, f64)> {
    let entry =
        allocs?.get(section)?.as_array()?.iter().find(|e| e.get("name").and_then(Value::as_str) == Some(name))?;
    Some((entry.get("allocations")?.as_f64()?, entry.get("bytes")?.as_f64()?))
}

/// 51475.3 → "51,475".
fn thousands(value: f64) -> String {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a rate for a report
    count(value.max(0.0).round() as u64)
}

/// 10000 → "10,000".
fn count(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn us(ns: f64) -> String {
    if ns >= 10_000.0 { format!("{:.1} µs", ns / 1e3) } else { format!("{:.2} µs", ns / 1e3) }
}

fn ratio(now: Option<f64>, ceiling: Option<f64>) -> Option<f64> {
    now.zip(ceiling).filter(|(_, c)| *c > 0.0).map(|(n, c)| n / c)
}

fn x(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.2}×"))
}

fn verdict(holds: Option<bool>) -> &'static str {
    match holds {
        Some(true) => "**yes**",
        Some(false) => "no",
        None => "not measured",
    }
}

fn rate_cpu(row: Option<&Row>) -> String {
    let Some(row) = row else { return "not measured".to_owned() };
    let rate = row.median_rate().map_or_else(|| "n/a".to_owned(), |r| format!("{}/s", thousands(r)));
    match row.median_cpu_us() {
        Some(cpu) => format!("{rate}, {cpu:.1} µs CPU/msg"),
        None => rate,
    }
}

struct Report<'a> {
    results: &'a Results,
    criterion: &'a Path,
    allocs: Option<&'a Value>,
    paired: Option<&'a Value>,
}

/// Where building the event alone keeps a verifier below its target: a verifier that runs the
/// primitive b and builds the event e is at most b / (b + e) of the primitive (from the paired
/// medians). Empty when that bound is above the target, or was not measured.
fn event_bound(paired: impl Fn(&str) -> Option<f64>, r: Option<f64>, target: f64) -> String {
    let (Some(b), Some(e), Some(r)) = (paired("fastest_ns"), paired("event_ns"), r) else { return String::new() };
    let bound = b / (b + e);
    if bound >= target {
        return String::new();
    }
    format!(
        "; with the event built, at most b / (b + e) = {} with b the primitive and e the event alone; \
         the row is at {:.0} % of that",
        x(Some(bound)),
        r / bound * 100.0
    )
}

impl Report<'_> {
    fn row(&self, id: &str) -> Option<&Row> {
        self.results.row(id).filter(|row| !row.samples.is_empty())
    }

    fn rate(&self, id: &str) -> Option<f64> {
        self.row(id).and_then(Row::median_rate)
    }

    /// The median over runs of `value(now run) / value(ceiling run)`: each run is divided by the
    /// ceiling measured next to it (the rows are interleaved), which cancels slow drifts of the
    /// machine. The ratio of the medians when the rows do not have one run each.
    fn paired(&self, now: &str, ceiling: &str, value: impl Fn(&Sample) -> Option<f64>) -> Option<f64> {
        let (a, b) = (self.row(now)?, self.row(ceiling)?);
        if a.samples.len() == b.samples.len() {
            let ratios: Vec<f64> =
                a.samples.iter().zip(&b.samples).filter_map(|(x, y)| ratio(value(x), value(y))).collect();
            return median(&ratios);
        }
        let medians = |row: &Row| median(&row.samples.iter().filter_map(&value).collect::<Vec<_>>());
        ratio(medians(a), medians(b))
    }

    /// [`Report::paired`] of the rates.
    fn rate_ratio(&self, now: &str, ceiling: &str) -> Option<f64> {
        self.paired(now, ceiling, |s| Some(s.rate()))
    }

    fn timing(&self, id: &str) -> Option<Timing> {
        timing(self.criterion, id)
    }

    fn memory_peak(&self, mode: &str) -> Option<f64> {
        let peaks: Vec<f64> =
            self.results.memory.iter().filter(|m| m.mode == mode && m.errors == 0).map(|m| mib(m.peak_kib)).collect();
        median(&peaks)
    }

    /// The PostgreSQL ceiling: pgbench when it ran, else the tokio-postgres client.
    fn pg_ceiling(&self) -> (&'static str, Option<f64>, &'static str) {
        match self.rate("pg_pair_pgbench_8") {
            Some(rate) => ("pg_pair_pgbench_8", Some(rate), "`pgbench -M prepared`, 8 clients"),
            None => ("pg_pair_min_8", self.rate("pg_pair_min_8"), "`tokio-postgres`, prepared, 8 connections"),
        }
    }

    fn target_table(&self, out: &mut String) {
        let _ = writeln!(out, "| measure | now | ceiling measured in the same run | target | ratio | holds |");
        let _ = writeln!(out, "|---|---|---|---|---|---|");
        let mut lines = Vec::new();
        self.send_rows(&mut |cells| lines.push(cells));
        self.store_rows(&mut |cells| lines.push(cells));
        self.production_rows(&mut |cells| lines.push(cells));
        self.webhook_rows(&mut |cells| lines.push(cells));
        self.serve_rows(&mut |cells| lines.push(cells));
        self.segment_and_memory_rows(&mut |cells| lines.push(cells));
        for cells in lines {
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
    }

    fn send_rows(&self, line: &mut dyn FnMut([String; 6])) {
        // Send, 32 in flight: throughput and CPU against raw reqwest.
        let throughput = self.rate_ratio("sdk_32", "raw_32");
        let cpu = self.paired("sdk_32", "raw_32", Sample::cpu_us);
        line([
            "`Client::send`, no store, 32 in flight, one tokio thread".into(),
            rate_cpu(self.row("sdk_32")),
            format!("raw `reqwest` 0.13, same request, JSON parsed: {}", rate_cpu(self.row("raw_32"))),
            "≥ 0.85× throughput, CPU ≤ 1.3×".into(),
            format!("{} throughput, {} CPU", x(throughput), x(cpu)),
            verdict(throughput.zip(cpu).map(|(t, c)| t >= 0.85 && c <= 1.3)).into(),
        ]);
        let sequential = self.rate_ratio("sdk_1", "raw_1");
        line([
            "sequential send (1 in flight)".into(),
            rate_cpu(self.row("sdk_1")),
            format!("raw: {}", rate_cpu(self.row("raw_1"))),
            "≥ 0.9×".into(),
            format!("{} (CPU {})", x(sequential), x(self.paired("sdk_1", "raw_1", Sample::cpu_us))),
            verdict(sequential.map(|r| r >= 0.9)).into(),
        ]);
        let memory = self.rate_ratio("sdk_memory_32", "sdk_32");
        line([
            "with memory store, 32 in flight".into(),
            rate_cpu(self.row("sdk_memory_32")),
            format!("no store (row 1): {}", rate_cpu(self.row("sdk_32"))),
            "≥ 0.95× of no store".into(),
            format!(
                "{} (against the same keyed send without a store, `sdk_keyed_32`, {}: {}, the store's own share)",
                x(memory),
                rate_cpu(self.row("sdk_keyed_32")),
                x(self.rate_ratio("sdk_memory_32", "sdk_keyed_32")),
            ),
            verdict(memory.map(|r| r >= 0.95)).into(),
        ]);
    }

    fn store_rows(&self, line: &mut dyn FnMut([String; 6])) {
        let (pg_id, pg_ceiling, pg_how) = self.pg_ceiling();
        let pg = self.rate_ratio("pg_send_8", pg_id);
        line([
            "with PostgreSQL store, 8 in flight".into(),
            rate_cpu(self.row("pg_send_8")),
            format!(
                "the store's reserve + finalize SQL under {pg_how}: {} pairs/s (`tokio-postgres` prepared: {}/s)",
                pg_ceiling.map_or_else(|| "n/a".into(), thousands),
                self.rate("pg_pair_min_8").map_or_else(|| "n/a".into(), thousands),
            ),
            "≥ 0.7×".into(),
            format!(
                "{} (the store's pair alone, 8 in flight: {}/s = {})",
                x(pg),
                self.rate("pg_pair_store_8").map_or_else(|| "n/a".into(), thousands),
                x(self.rate_ratio("pg_pair_store_8", pg_id)),
            ),
            verdict(pg.map(|r| r >= 0.7)).into(),
        ]);

        let redis = self.rate_ratio("redis_send_8", "redis_pair_min_8");
        line([
            "with Redis store, 8 in flight".into(),
            rate_cpu(self.row("redis_send_8")),
            format!(
                "the store's Lua scripts by a minimal client (`EVALSHA`, one multiplexed connection, 8 in flight): {} pairs/s",
                self.rate("redis_pair_min_8").map_or_else(|| "n/a".into(), thousands)
            ),
            "≥ 0.7×".into(),
            format!(
                "{} (the store's pair alone: {}/s = {})",
                x(redis),
                self.rate("redis_pair_store_8").map_or_else(|| "n/a".into(), thousands),
                x(self.rate_ratio("redis_pair_store_8", "redis_pair_min_8")),
            ),
            verdict(redis.map(|r| r >= 0.7)).into(),
        ]);

        let sqlite = self.rate_ratio("sqlite_send_8", "sqlite_pair_store_8");
        line([
            "with SQLite store, 8 in flight".into(),
            rate_cpu(self.row("sqlite_send_8")),
            format!(
                "the SQLite pair alone through the store, 8 in flight: {} pairs/s (same SQL by `rusqlite`, sequential: {}/s)",
                self.rate("sqlite_pair_store_8").map_or_else(|| "n/a".into(), thousands),
                self.rate("sqlite_pair_min_1").map_or_else(|| "n/a".into(), thousands),
            ),
            "≥ 0.7× of its pair".into(),
            self.one_core_bound("sqlite_pair_store_8").map_or_else(
                || x(sqlite),
                |bound| {
                    format!(
                        "{} (one core runs the pair and the HTTP request: at most p / (p + h) = {} with p the \
                         pair's CPU and h the no-store send's; the row is at {:.0} % of that)",
                        x(sqlite),
                        x(Some(bound)),
                        sqlite.map_or(0.0, |r| r / bound * 100.0),
                    )
                },
            ),
            verdict(sqlite.map(|r| r >= 0.7)).into(),
        ]);
    }

    /// The stores as teams deploy them (the production group): each against its plain-text row,
    /// SQLite on an ordinary disk against the keyed send without a store.
    fn production_rows(&self, line: &mut dyn FnMut([String; 6])) {
        if self.row("prod_keyed_8").is_some() {
            let disk = self.rate_ratio("prod_sqlite_disk_8", "prod_keyed_8");
            line([
                "with SQLite store on an ordinary disk (`synchronous = FULL`, group commit), 8 in flight".into(),
                rate_cpu(self.row("prod_sqlite_disk_8")),
                format!("the same keyed send without a store, 8 in flight: {}", rate_cpu(self.row("prod_keyed_8"))),
                "≥ 0.5× of no store".into(),
                format!(
                    "{} (the file on tmpfs instead: {}, {})",
                    x(disk),
                    rate_cpu(self.row("prod_sqlite_tmpfs_8")),
                    x(self.rate_ratio("prod_sqlite_tmpfs_8", "prod_keyed_8"))
                ),
                verdict(disk.map(|r| r >= 0.5)).into(),
            ]);
        }
        let pairs = [
            (
                "prod_pg_tls_8",
                "prod_pg_plain_8",
                "with PostgreSQL store over TLS (`verify-full`), 8 in flight",
                "the same server in plain text",
            ),
            (
                "prod_redis_tls_8",
                "prod_redis_plain_8",
                "with Redis store over TLS (`rediss://`), 8 in flight",
                "the same server in plain text",
            ),
            (
                "prod_cluster_8",
                "prod_redis_plain_8",
                "with Redis store on a Redis Cluster (3 masters, one core), 8 in flight",
                "one plain-text Redis server",
            ),
        ];
        if self.row("prod_dynamodb_8").is_some() {
            // An emulator's speed, not DynamoDB's: the row shows the store's cost on the client's
            // side and its two writes per send, with no target to hold.
            line([
                "with DynamoDB store on moto's server (an emulator of DynamoDB on loopback, one Python process on \
                 core 1; not DynamoDB), 8 in flight"
                    .into(),
                rate_cpu(self.row("prod_dynamodb_8")),
                format!("the same keyed send without a store, 8 in flight: {}", rate_cpu(self.row("prod_keyed_8"))),
                "none (the emulator bounds the rate)".into(),
                x(self.rate_ratio("prod_dynamodb_8", "prod_keyed_8")),
                "—".into(),
            ]);
        }
        for (id, plain, label, ceiling) in pairs {
            if self.row(id).is_none() {
                continue;
            }
            let ratio = self.rate_ratio(id, plain);
            line([
                label.into(),
                rate_cpu(self.row(id)),
                format!("{ceiling}: {}", rate_cpu(self.row(plain))),
                "≥ 0.8× of plain text".into(),
                x(ratio),
                verdict(ratio.map(|r| r >= 0.8)).into(),
            ]);
        }
    }

    /// The highest ratio a send with a store can reach against the store's pair alone when one
    /// core does all the work: the pair's CPU over the pair's plus a no-store send's.
    fn one_core_bound(&self, pair: &str) -> Option<f64> {
        let p = self.row(pair)?.median_cpu_us()?;
        let h = self.row("sdk_32")?.median_cpu_us()?;
        ratio(Some(p), Some(p + h))
    }

    fn webhook_rows(&self, line: &mut dyn FnMut([String; 6])) {
        let rows = [
            ("twilio", "Twilio webhook verify (15-parameter form), one core", "HMAC-SHA1", "hmac", 0.5),
            ("plivo_v3", "Plivo V3 webhook verify (10-parameter form)", "HMAC-SHA256", "hmac", 0.5),
            ("vonage_jwt", "Vonage JWT webhook verify", "HMAC-SHA256 of the JWT's signed part", "hmac", 0.5),
            ("telnyx", "Telnyx Ed25519 webhook verify (1.1 KB body)", "Ed25519 verify", "dalek", 0.9),
        ];
        for (id, label, primitive, rust, target) in rows {
            let verify = self.timing(&format!("webhook/{id}_verify"));
            let event = self.timing(&format!("webhook/{id}_event"));
            let ring = self.timing(&format!("webhook/{id}_primitive"));
            let rust_crate = if rust == "hmac" { "`hmac` + `sha1`/`sha2`" } else { "`ed25519-dalek`" };
            let other = self.timing(&format!("webhook/{id}_primitive_{rust}"));
            let fastest = [(ring, "`ring`"), (other, rust_crate)]
                .into_iter()
                .filter_map(|(t, name)| Some((t?, name)))
                .min_by(|a, b| a.0.ns.total_cmp(&b.0.ns));
            // What checking alone costs: the call less the event it builds.
            let checking = verify.zip(event).map(|(v, e)| v.ns - e.ns);
            let paired = self.paired.and_then(|p| p.get(id));
            let paired_ratio = |key: &str| paired.and_then(|p| p.get(key)).and_then(Value::as_f64);
            let (r, checking_ratio, how) = match (paired_ratio("ratio"), paired_ratio("checking_ratio")) {
                (Some(r), Some(c)) => {
                    let rounds = paired.and_then(|p| p.get("rounds")).and_then(Value::as_u64).unwrap_or(0);
                    (Some(r), Some(c), format!("; median of {rounds} interleaved rounds"))
                }
                _ => (
                    ratio(fastest.map(|(t, _)| t.ns), verify.map(|t| t.ns)),
                    ratio(fastest.map(|(t, _)| t.ns), checking),
                    String::new(),
                ),
            };
            let per = |t: Option<Timing>| {
                t.map_or_else(|| "n/a".into(), |t| format!("{}/s, {}", thousands(t.per_second()), us(t.ns)))
            };
            line([
                label.into(),
                format!(
                    "{} (of which the normalized event, built without any check: {}; checking alone: {})",
                    per(verify),
                    event.map_or_else(|| "n/a".into(), |t| us(t.ns)),
                    checking.map_or_else(|| "n/a".into(), us),
                ),
                format!(
                    "bare {primitive} of the same payload, key prepared once: `ring` {}, {rust_crate} {} (ceiling: the faster, {})",
                    per(ring),
                    per(other),
                    fastest.map_or("n/a", |(_, name)| name),
                ),
                format!("≥ {target}× the bare primitive"),
                format!(
                    "{} (checking alone: {}{how}{})",
                    x(r),
                    x(checking_ratio),
                    event_bound(paired_ratio, r, target)
                ),
                verdict(r.map(|r| r >= target)).into(),
            ]);
        }
    }

    /// `sms-sdk serve` on one core against the bare verify rate of the same requests.
    fn serve_rows(&self, line: &mut dyn FnMut([String; 6])) {
        let verify = self.row(VERIFY_ROW);
        let verify_rate =
            verify.and_then(|row| median(&row.samples.iter().filter_map(Sample::cpu_rate).collect::<Vec<_>>()));
        let verify_us = verify.and_then(Row::median_cpu_us);
        for (id, name) in SERVE_ROWS {
            let Some(row) = self.row(id) else { continue };
            let serve_us = median(&row.samples.iter().filter_map(Sample::serve_us).collect::<Vec<_>>());
            let busy = median(&row.samples.iter().filter_map(Sample::serve_load).collect::<Vec<_>>());
            // How busy the other cores were (every process: the load generator, the sink, PostgreSQL).
            let others = self.results.serve_cpu.and_then(|serve| {
                let cores = row.samples.iter().map(|s| s.cores_busy.len()).max().unwrap_or(0);
                let busy: Vec<f64> = (0..cores)
                    .filter(|core| *core != serve)
                    .filter_map(|core| {
                        median(&row.samples.iter().filter_map(|s| s.cores_busy.get(core).copied()).collect::<Vec<_>>())
                    })
                    .collect();
                #[allow(clippy::cast_precision_loss)] // a few cores
                let mean = (!busy.is_empty()).then(|| busy.iter().sum::<f64>() / busy.len() as f64);
                mean
            });
            // Each run against the verify run of its round; the ratio of the medians otherwise.
            let r = match verify {
                Some(verify) if verify.samples.len() == row.samples.len() => median(
                    &row.samples
                        .iter()
                        .zip(&verify.samples)
                        .filter_map(|(s, v)| ratio(Some(s.rate()), v.cpu_rate()))
                        .collect::<Vec<_>>(),
                ),
                _ => ratio(row.median_rate(), verify_rate),
            };
            line([
                format!(
                    "`sms-sdk serve`, {name} store: verified, deduped, forwarded Twilio webhooks, serve on one core, \
                     {} in flight",
                    row.in_flight
                ),
                format!(
                    "{}/s, {} serve CPU/webhook (1 / CPU: {}/s); serve's core {} busy with it{}",
                    row.median_rate().map_or_else(|| "n/a".into(), thousands),
                    serve_us.map_or_else(|| "n/a".into(), |us| format!("{us:.1} µs")),
                    serve_us.map_or_else(|| "n/a".into(), |us| thousands(1e6 / us)),
                    busy.map_or_else(|| "n/a".into(), |b| format!("{:.0} %", b * 100.0)),
                    others.map_or_else(String::new, |b| format!(
                        ", the other core (load generator, sink, PostgreSQL) {:.0} %",
                        b * 100.0
                    )),
                ),
                format!(
                    "bare `TwilioWebhook::verify` of the same requests, in-process, one thread on serve's core: {}/s, {}",
                    verify_rate.map_or_else(|| "n/a".into(), thousands),
                    verify_us.map_or_else(|| "n/a".into(), |us| format!("{us:.2} µs")),
                ),
                "— (none set)".into(),
                format!(
                    "{} (verifying is {} of serve's CPU per webhook)",
                    x(r),
                    ratio(verify_us, serve_us).map_or_else(|| "n/a".into(), |share| format!("{:.1} %", share * 100.0)),
                ),
                "—".into(),
            ]);
        }
    }

    fn segment_and_memory_rows(&self, line: &mut dyn FnMut([String; 6])) {
        let gsm = self.timing("segments/gsm7_320");
        let ucs = self.timing("segments/ucs2_320");
        let mbs = |t: Option<Timing>, bytes: f64| t.map(|t| bytes / t.ns * 1e3);
        let gsm_bytes = bytes_of("gsm7_320");
        let ucs_bytes = bytes_of("ucs2_320");
        let gsm_allocs = allocations(self.allocs, "segments", "gsm7_320").map(|(a, _)| a);
        let ucs_allocs = allocations(self.allocs, "segments", "ucs2_320").map(|(a, _)| a);
        let gsm_mbs = mbs(gsm, gsm_bytes);
        let holds = gsm_mbs.zip(gsm_allocs).map(|(m, a)| m >= 200.0 && a == 0.0);
        line([
            "segment estimate".into(),
            format!(
                "GSM-7 320 chars: {} MB/s ({}), {} allocations; UCS-2 320 chars ({} bytes): {} MB/s ({}), {} allocations",
                gsm_mbs.map_or_else(|| "n/a".into(), thousands),
                gsm.map_or_else(|| "n/a".into(), |t| us(t.ns)),
                gsm_allocs.map_or_else(|| "n/a".into(), |a| format!("{a:.0}")),
                ucs_bytes,
                mbs(ucs, ucs_bytes).map_or_else(|| "n/a".into(), thousands),
                ucs.map_or_else(|| "n/a".into(), |t| us(t.ns)),
                ucs_allocs.map_or_else(|| "n/a".into(), |a| format!("{a:.0}")),
            ),
            "—".into(),
            "≥ 200 MB/s, no allocation for GSM-7".into(),
            gsm_mbs.map_or_else(|| "n/a".into(), |m| format!("{:.1}× the target", m / 200.0)),
            verdict(holds).into(),
        ]);

        let sdk_peak = self.memory_peak("sdk");
        let raw_peak = self.memory_peak("raw");
        let in_flight = self.results.memory.first().map_or(10_000, |m| m.in_flight);
        line([
            format!(
                "peak memory, {} sends started at once (responder answers after 1 s; the SDK as configured by \
                 default: 100 requests in flight, the rest queued)",
                count(u64::try_from(in_flight).unwrap_or(u64::MAX))
            ),
            sdk_peak.map_or_else(|| "not measured".into(), |p| format!("{p:.0} MB max RSS")),
            format!("raw `reqwest` 0.13: {}", raw_peak.map_or_else(|| "n/a".into(), |p| format!("{p:.0} MB"))),
            "< 100 MB".into(),
            format!("{} of raw", x(ratio(sdk_peak, raw_peak))),
            verdict(sdk_peak.map(|p| p < 100.0)).into(),
        ]);
    }

    fn runs_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "| row | what | in flight | each run (ops/s) | median ops/s | median client CPU µs/op (kernel share) | client's core busy | responder CPU µs/req (user space) | responder's core busy | errors |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
        for row in self.results.rows.iter().filter(|row| !row.id.starts_with("serve_")) {
            let runs: Vec<String> = row.rates().iter().map(|r| thousands(*r)).collect();
            let kernel = median(&row.samples.iter().filter_map(Sample::sys_share).collect::<Vec<_>>());
            let cpu = row.median_cpu_us().map_or_else(
                || "— (another program)".to_owned(),
                |c| format!("{c:.1} ({:.0}%)", kernel.unwrap_or_default() * 100.0),
            );
            let user = median(&row.samples.iter().filter_map(Sample::responder_user_us).collect::<Vec<_>>());
            let responder = row
                .median_responder_us()
                .map_or_else(|| "—".to_owned(), |r| format!("{r:.2} ({:.2})", user.unwrap_or_default()));
            let load = median(&row.samples.iter().filter_map(Sample::responder_load).collect::<Vec<_>>());
            let client = median(&row.samples.iter().filter_map(Sample::client_load).collect::<Vec<_>>());
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                row.id,
                row.label,
                row.in_flight,
                runs.join(" / "),
                row.median_rate().map_or_else(|| "n/a".into(), thousands),
                cpu,
                client.map_or_else(|| "—".to_owned(), |l| format!("{:.0}%", l * 100.0)),
                responder,
                load.map_or_else(|| "—".to_owned(), |l| format!("{:.0}%", l * 100.0)),
                row.errors(),
            );
        }
    }

    /// The `sms-sdk serve` runs: serve's CPU, the load generator's and the sink's, and how busy
    /// each core was (every process on it).
    fn serve_runs_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "| row | what | in flight | each run (webhooks/s; verify: per CPU second) | median | serve CPU µs/webhook (kernel share); verify: µs of thread CPU | serve's share of its core | cores busy, every process (core 0 / core 1) | load generator CPU µs/webhook | sink CPU µs/request | errors |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|");
        let medians = |row: &Row, value: fn(&Sample) -> Option<f64>| {
            median(&row.samples.iter().filter_map(value).collect::<Vec<_>>())
        };
        let percent = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{:.0}%", v * 100.0));
        let number = |v: Option<f64>, digits: usize| v.map_or_else(|| "—".to_owned(), |v| format!("{v:.digits$}"));
        for row in self.results.rows.iter().filter(|row| row.id.starts_with("serve_")) {
            let verify = row.id == VERIFY_ROW;
            let rates: Vec<f64> =
                if verify { row.samples.iter().filter_map(Sample::cpu_rate).collect() } else { row.rates() };
            let runs: Vec<String> = rates.iter().map(|r| thousands(*r)).collect();
            let cores = (0..row.samples.iter().map(|s| s.cores_busy.len()).max().unwrap_or(0))
                .map(|core| {
                    percent(median(
                        &row.samples.iter().filter_map(|s| s.cores_busy.get(core).copied()).collect::<Vec<_>>(),
                    ))
                })
                .collect::<Vec<_>>();
            let cpu = if verify {
                number(row.median_cpu_us(), 2)
            } else {
                format!(
                    "{} ({})",
                    number(medians(row, Sample::serve_us), 1),
                    percent(medians(row, Sample::serve_sys_share))
                )
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                row.id,
                row.label,
                row.in_flight,
                runs.join(" / "),
                median(&rates).map_or_else(|| "n/a".into(), thousands),
                cpu,
                percent(medians(row, Sample::serve_load)),
                if cores.is_empty() { "—".to_owned() } else { cores.join(" / ") },
                if verify { "—".to_owned() } else { number(row.median_cpu_us(), 1) },
                number(row.median_responder_us(), 1),
                row.errors(),
            );
        }
    }

    fn micro_table(&self, out: &mut String) {
        let _ =
            writeln!(out, "| criterion id | median (95 % interval) | per second, one core | allocations/op (bytes) |");
        let _ = writeln!(out, "|---|---|---|---|");
        let ids = [
            ("webhook/twilio_verify", "webhooks", "twilio_verify"),
            ("webhook/twilio_event", "webhooks", "twilio_event"),
            ("webhook/twilio_primitive", "webhooks", "twilio_primitive"),
            ("webhook/twilio_primitive_hmac", "webhooks", ""),
            ("webhook/plivo_v3_verify", "webhooks", "plivo_v3_verify"),
            ("webhook/plivo_v3_event", "webhooks", "plivo_v3_event"),
            ("webhook/plivo_v3_primitive", "webhooks", "plivo_v3_primitive"),
            ("webhook/plivo_v3_primitive_hmac", "webhooks", ""),
            ("webhook/vonage_jwt_verify", "webhooks", "vonage_jwt_verify"),
            ("webhook/vonage_jwt_event", "webhooks", "vonage_jwt_event"),
            ("webhook/vonage_jwt_primitive", "webhooks", "vonage_jwt_primitive"),
            ("webhook/vonage_jwt_primitive_hmac", "webhooks", ""),
            ("webhook/telnyx_verify", "webhooks", "telnyx_verify"),
            ("webhook/telnyx_event", "webhooks", "telnyx_event"),
            ("webhook/telnyx_primitive", "webhooks", "telnyx_primitive"),
            ("webhook/telnyx_primitive_dalek", "webhooks", ""),
            ("segments/gsm7_320", "segments", "gsm7_320"),
            ("segments/ucs2_320", "segments", "ucs2_320"),
        ];
        for (id, section, name) in ids {
            let Some(t) = self.timing(id) else {
                let _ = writeln!(out, "| `{id}` | not measured | | |");
                continue;
            };
            let allocs = allocations(self.allocs, section, name)
                .map_or_else(|| "—".to_owned(), |(a, b)| format!("{a:.0} ({})", thousands(b)));
            let _ = writeln!(
                out,
                "| `{id}` | {} ({} – {}) | {} | {allocs} |",
                us(t.ns),
                us(t.low),
                us(t.high),
                thousands(t.per_second())
            );
        }
    }

    fn memory_table(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "| run | mode | in flight | RSS before the sends | peak RSS (VmHWM) | completed | errors | wall |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
        for (i, m) in self.results.memory.iter().enumerate() {
            let MemorySample { mode, in_flight, baseline_kib, peak_kib, ok, errors, wall_s, .. } = m;
            let _ = writeln!(
                out,
                "| {} | {mode} | {} | {:.1} MB | {:.1} MB | {} | {errors} | {wall_s:.2} s |",
                i / crate::MEMORY_MODES.len() + 1,
                count(u64::try_from(*in_flight).unwrap_or(u64::MAX)),
                mib(*baseline_kib),
                mib(*peak_kib),
                count(*ok),
            );
        }
    }
}

/// The byte length of a segment body (the same as `benches/support/webhooks.rs` builds).
fn bytes_of(name: &str) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    SEGMENT_BODIES.iter().find(|(n, _)| *n == name).map_or(0.0, |(_, body)| body.len() as f64)
}

static SEGMENT_BODIES: std::sync::LazyLock<Vec<(&'static str, String)>> =
    std::sync::LazyLock::new(crate::segment_bodies);

fn read_results(path: &Path) -> Results {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the results file is readable"))
        .expect("the results parse")
}

/// The serve rows' part of the method, beside the load rows'.
const SERVE_METHOD: &str = "The `sms-sdk serve` rows run the release command as a child process pinned to \
core 0 (`taskset -c 0`: its two tokio worker threads and, with SQLite, the store's thread share that \
one core) and everything it talks to on core 1: the load generator (`sms-bench-load serve`, a minimal \
HTTP/1.1 client, one keep-alive connection per webhook in flight, each webhook an inbound SMS of its own \
`MessageSid`, signed as Twilio signs), the forward sink (the static responder, answering 201) and \
PostgreSQL; the SQLite file is on tmpfs. Serve's CPU per webhook is its process's user + system time \
(`/proc/<pid>/stat`), and a webhook counts only when serve answered `200 ok` (verified, claimed, \
forwarded and answered 2xx, committed). The ceiling is the bare verify rate of the same requests: \
`TwilioWebhook::verify` in the load process, on one thread pinned to core 0, timed in that thread's \
CPU time, in rounds with the serve runs (verify, SQLite, PostgreSQL, then again); the ratio is the \
median over rounds of serve's rate divided by the verify rate of its round.";

pub(crate) fn write(args: &ReportArgs) {
    let mut results = read_results(&args.results);
    if let Some(path) = &args.serve {
        let serve = read_results(path);
        results.rows.extend(serve.rows);
        results.notes.extend(serve.notes);
        results.skipped.extend(serve.skipped);
    }
    let allocs: Option<Value> =
        args.allocs.as_ref().and_then(|p| std::fs::read_to_string(p).ok()).and_then(|t| serde_json::from_str(&t).ok());
    let machine = std::fs::read_to_string(&args.machine).unwrap_or_default();
    let commands = std::fs::read_to_string(&args.commands).unwrap_or_default();
    let paired: Option<Value> =
        args.paired.as_ref().and_then(|p| std::fs::read_to_string(p).ok()).and_then(|t| serde_json::from_str(&t).ok());
    let report =
        Report { results: &results, criterion: &args.criterion, allocs: allocs.as_ref(), paired: paired.as_ref() };
    let mut out = String::new();
    let commit = &args.commit;
    let _ = writeln!(out, "# Benchmarks\n");
    let _ = writeln!(
        out,
        "The speed and memory of sms-sdk next to what the machine allows, measured by one run of \
         `scripts/bench.sh` on commit `{commit}`. Rerun it yourself with `scripts/bench.sh` (about \
         13 minutes on 2 cores once built, most of it the peak-memory runs, plus the first release \
         build; it rewrites this file).\n"
    );
    let _ = writeln!(
        out,
        "Each load row is the median of {} runs of {:.0} s, interleaved within its group (every \
         row of the group once, then again; the groups: HTTP, SQLite, PostgreSQL, Redis, memory), on \
         ONE tokio thread pinned to core 0, against a static responder pinned to core \
         1; CPU per message is the user + system CPU time of the client process (all threads, \
         `CLOCK_PROCESS_CPUTIME_ID`; its kernel share from `/proc/self/stat`), not wall time; each ratio is the median over runs of the row divided by its \
         ceiling measured next to it in the same run. The micro rows are criterion medians (100 \
         samples) of the benchmark thread's CPU time; the webhook rows' ratios are medians over \
         interleaved rounds of the ratio within each round (the verifier, the event alone and \
         each primitive run in turn, batch by batch), so that a drift of the machine between two \
         criterion functions does not move them. {SERVE_METHOD}\n",
        results.runs, results.seconds
    );
    let client_busy = report
        .row("raw_32")
        .and_then(|row| median(&row.samples.iter().filter_map(Sample::client_load).collect::<Vec<_>>()));
    if let Some(busy) = client_busy.filter(|busy| *busy < 0.9) {
        let _ = writeln!(
            out,
            "**The machine was shared during this run** (other builds; see the load averages below): in the \
             raw 32-in-flight runs the client's core was only {:.0} % busy where it would be near 100 % on an \
             idle machine, so every rate here is lower than this machine gives alone. CPU per message \
             (counted only while the client ran) and the ratios within the run are the figures to compare; \
             rerun on an idle machine for absolute rates.\n",
            busy * 100.0
        );
    }
    let _ = writeln!(out, "## Results against the speed targets\n");
    report.target_table(&mut out);
    let _ = writeln!(out, "\n{LIMITS}\n{SERVE_LIMITS}\n");
    let _ = writeln!(out, "{BULK}\n");
    let _ = writeln!(out, "## The responder's cost, and how it was checked\n");
    responder_paragraph(&report, &mut out);
    let _ = writeln!(out, "\n## Every load run\n");
    report.runs_table(&mut out);
    if let (Some((raw, raw_bytes)), Some((sdk, sdk_bytes))) =
        (allocations(report.allocs, "sends", "raw"), allocations(report.allocs, "sends", "sdk"))
    {
        let _ = writeln!(
            out,
            "\nAllocations per send (sequential, counted by `sms-bench-allocs` with a counting allocator): raw \
             `reqwest` {raw:.0} ({} bytes), `Client::send` {sdk:.0} ({} bytes): {:.0} more per send.",
            thousands(raw_bytes),
            thousands(sdk_bytes),
            sdk - raw
        );
    }
    if report.results.rows.iter().any(|row| row.id.starts_with("serve_")) {
        let _ = writeln!(out, "\n### The `sms-sdk serve` runs\n");
        report.serve_runs_table(&mut out);
    }
    let _ = writeln!(out, "\n## Micro benchmarks (criterion, one core)\n");
    report.micro_table(&mut out);
    let _ = writeln!(out, "\n## Peak memory runs (each a fresh process)\n");
    report.memory_table(&mut out);
    if !results.notes.is_empty() || !results.skipped.is_empty() {
        let _ = writeln!(out, "\n## Notes from the run\n");
        for note in &results.notes {
            let _ = writeln!(out, "- {note}");
        }
        for skipped in &results.skipped {
            let _ = writeln!(out, "- Not measured: {skipped}");
        }
    }
    let _ = writeln!(out, "\n## The machine and the run\n\n{}", machine.trim_end());
    let _ = writeln!(out, "\n## The exact commands\n\n```sh\n{}\n```", commands.trim_end());
    let _ = writeln!(out, "\n{NOT_MEASURED}");
    std::fs::write(&args.out, out).expect("BENCHMARKS.md is writable");
    eprintln!("wrote {}", args.out.display());
}

/// The serve rows of BENCHMARKS.md from `serve`'s JSON alone (a separate run of them), on
/// stdout: the target table's rows, the "What limits" entry, the table of runs and the notes.
/// Prints the production group's rows of the target table from a suite's JSON (a separate run
/// of that group, `scripts/bench.sh production`).
pub(crate) fn production_fragment(path: &Path) {
    let results = read_results(path);
    let report = Report { results: &results, criterion: Path::new(""), allocs: None, paired: None };
    let mut out = String::new();
    report.production_rows(&mut |cells| {
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    });
    let _ = writeln!(out, "\nThe runs (rate and client CPU per send of each run, in order):\n");
    for row in results.rows.iter().filter(|row| row.id.starts_with("prod_")) {
        let runs: Vec<String> = row
            .samples
            .iter()
            .map(|s| format!("{:.0}/s {}", s.rate(), s.cpu_us().map_or_else(|| "-".into(), |c| format!("{c:.1} µs"))))
            .collect();
        let _ = writeln!(out, "- `{}` ({}): {}", row.id, row.label, runs.join(", "));
    }
    print!("{out}");
}

pub(crate) fn serve_fragment(path: &Path) {
    let results = read_results(path);
    let report = Report { results: &results, criterion: Path::new(""), allocs: None, paired: None };
    let mut out = String::new();
    let _ = writeln!(out, "Rows of the target table:\n");
    report.serve_rows(&mut |cells| {
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    });
    let _ = writeln!(out, "\nThe method:\n\n{SERVE_METHOD}\n\nWhat limits:\n\n{SERVE_LIMITS}\n");
    let _ = writeln!(out, "### The `sms-sdk serve` runs\n");
    report.serve_runs_table(&mut out);
    if !results.notes.is_empty() || !results.skipped.is_empty() {
        let _ = writeln!(out, "\nNotes:\n");
        for note in &results.notes {
            let _ = writeln!(out, "- {note}");
        }
        for skipped in &results.skipped {
            let _ = writeln!(out, "- Not measured: {skipped}");
        }
    }
    print!("{out}");
}

fn responder_paragraph(report: &Report<'_>, out: &mut String) {
    let Some(raw) = report.row("raw_32") else {
        let _ = writeln!(out, "The HTTP rows were not measured.");
        return;
    };
    let per = raw.median_responder_us();
    let user = median(&raw.samples.iter().filter_map(Sample::responder_user_us).collect::<Vec<_>>());
    let load = median(&raw.samples.iter().filter_map(Sample::responder_load).collect::<Vec<_>>());
    let client = raw.median_cpu_us();
    let client_load = median(&raw.samples.iter().filter_map(Sample::client_load).collect::<Vec<_>>());
    let busiest = report
        .results
        .rows
        .iter()
        .flat_map(|row| row.samples.iter().filter_map(Sample::responder_load))
        .fold(0.0_f64, f64::max);
    let sequential = report.row("raw_1").map(|row| {
        let per = row.median_responder_us().unwrap_or_default();
        let busy = median(&row.samples.iter().filter_map(Sample::responder_load).collect::<Vec<_>>());
        format!(
            " In the sequential runs it costs more per request ({per:.1} µs) for the reason the client does: every \
             request wakes an idle thread on each side; it was {:.0} % busy there.",
            busy.unwrap_or_default() * 100.0
        )
    });
    let saturated = if busiest < 0.9 {
        format!(
            "Its busiest run of any row kept its core {:.0} % busy: it never saturated its core, so it did not \
             limit any row.",
            busiest * 100.0
        )
    } else {
        format!(
            "Its busiest run kept its core {:.0} % busy: that row may be limited by the responder.",
            busiest * 100.0
        )
    };
    let _ = writeln!(
        out,
        "The responder (`sms-bench-responder`) is a separate process pinned to core 1: one tokio thread that \
         parses only the request head (`httparse`, for `Content-Length`) and writes one precomputed 201 \
         (a 1 KB Twilio message resource) per request, with keep-alive. Its CPU time is read from \
         `/proc/<pid>/stat` before and after each run, like the client's. In the raw 32-in-flight runs it \
         used **{} µs of CPU per request, of which {} µs in user space** (its own code); the rest is the \
         kernel's loopback TCP work (on loopback the sending side's system call also delivers the data into \
         the receiver's socket, so part of it is the client's receive path). That is {} of the client's {} µs \
         per request, and it kept its core **{} busy** while the client's core was {} busy.{} {saturated} \
         Every row's responder cost is in the table of runs.",
        per.map_or_else(|| "n/a".into(), |v| format!("{v:.2}")),
        user.map_or_else(|| "n/a".into(), |v| format!("{v:.2}")),
        x(ratio(per, client)),
        client.map_or_else(|| "n/a".into(), |v| format!("{v:.1}")),
        load.map_or_else(|| "n/a".into(), |l| format!("{:.0} %", l * 100.0)),
        client_load.map_or_else(|| "n/a".into(), |l| format!("{:.0} %", l * 100.0)),
        sequential.unwrap_or_default(),
    );
}

/// The figures of `scripts/batch-check.sh` (a separate run: it measures the `batch` command
/// against the emulator, not the library against the responder). Update them when it is run
/// again.
const BULK: &str = "### Bulk sending (`scripts/batch-check.sh`, run separately)

Measured on 2026-12-01 on this machine kind (2 cores, shared with other builds during the
1,000,000-row run), release build of the command, against the emulator:

| check | result | target |
|---|---|---|
| 10,000 rows at `--rate 500` | 496.1 messages/s at the emulator over 20.15 s (wall 20.18 s) | 500/s within 5 %, about 20 s |
| the same batch killed with SIGKILL halfway, then run again | killed after 5,047 requests; the second run accepted 4,953 and replayed 5,047, 0 unknown: exactly one request per row | one request per row |
| two `batch` processes sharing one Redis limit at 500/s | 10,000 requests at 500.6/s together over 19.98 s | within 5 % of 500/s |
| 1,000,000 rows at a high rate | 467.8 s (2,138 rows/s); resident memory 20.4 MB at 11 s, 24.3 MB at 250 s, 24.8 MB at 463 s; peak (VmHWM) 24.9 MB | flat memory |

A batch killed while sends are in flight can leave rows whose outcome is unknown (a reservation
means \"maybe sent\"): a second run reports them and never resends them; the script settles them
from the emulator's log with `sms-sdk idempotency resolve` and checks that a third run ends at
exactly one request per row.";

const LIMITS: &str = "### What limits each figure

- **Send rows (no store, memory store), 32 in flight.** The client's one tokio thread: on an idle
  machine core 0 is at 100 % and the rate is 1 / (CPU per message). A large share of that CPU is the
  kernel's loopback TCP (the client's `write` and `read` system calls; see the kernel share in the
  table of runs), which raw `reqwest` pays too; the rest is hyper, reqwest and the SDK. The
  responder (core 1) had spare capacity (see below). When the table of runs shows the client's core
  below 100 % in these rows, other processes took the rest of it (the machine is shared): the rates
  are then lower than the machine allows, and CPU per message is the steadier figure.
- **Memory store row.** The same client as the no-store row plus the key and the store, on the
  same core: the row is CPU-bound like the no-store row and its ratio is (no-store CPU) /
  (no-store CPU + the key's and the store's CPU), so 0.95× allows both together 0.7 µs per send.
  The keyed row without a store (`sdk_keyed_32`) shows the key's share, about 0.4 µs: the
  message's fingerprint (which tells a repeat from another message under the same key) and the
  coalescing of concurrent sends of one key. The store's own share is the rest, about 2 µs. A flat
  profile (`perf record`, memory row less no-store row) puts about 1.5 µs of it in the allocator
  (`malloc_consolidate`, `unlink_chunk`, `free`, `_int_malloc`), 0.25 µs in the ordered map's key
  comparisons (`memcmp`) and 0.3 µs in the store's two calls themselves. Three experiments (not
  kept) tell what the allocator time is for: a store that removes each record at finalize, so
  that its map stays small, saves about 0.8 µs per send; one that keeps each key with a record of
  a few bytes instead of the receipt's copy saves nothing measurable; a hash map instead of the
  ordered map is slower (its growth rehashes and moves every record). So the cost is the map of
  live records growing by one entry per send (60,000 a second, each kept for its 24 h TTL, its
  nodes and keys allocated and cache-cold), which is what a store that answers repeats for 24 h
  is. Even the store that keeps nothing stays near 0.91× of the no-store row: two boxed calls,
  the lock, and the copy of the receipt the store takes (`FinalRecord::Accepted` owns one; the
  caller keeps the other) cost more than the 0.7 µs the target leaves.
- **Sequential rows.** Latency: each send waits for a full loopback round trip, including waking the
  responder's idle thread and then the client's; neither core is busy all the time. Per-message CPU
  is higher than at 32 in flight because every request pays the wake-ups alone.
- **PostgreSQL rows.** The PostgreSQL server: 8 backends share core 1 with the responder, so the
  pair rate is bounded by the server's CPU per statement (parse/plan on every call for unprepared
  statements, execute for prepared ones). `fsync` is off in the throwaway cluster (as in
  `scripts/test.sh`), so no disk wait is measured. The client's CPU per pair is in the table of runs;
  pgbench's is not (it is another program). The store's pair alone now runs its statements
  prepared once per connection, as pgbench does. A send makes three round trips that depend on
  each other (reserve, the HTTP request, finalize) where a pgbench pair makes two, and with 8 in
  flight and the client's core mostly idle the rate is set by that latency: about two thirds of the
  pair rate is the most 8 sends in flight can reach while each waits for three answers in turn.
- **Redis rows.** The single-threaded `redis-server` on core 1 running the Lua scripts, and the
  round trips: two per pair, which 8 in flight pipeline on one connection; a send makes three that
  depend on each other (reserve, the HTTP request, finalize), to two servers that wake up for each.
  A send's client CPU is about the sum of a keyed send without a store at the same 8 in flight
  (row `sdk_8`: the HTTP part) and the store's pair alone, and a profile of either shows about
  half of it in the kernel: loopback TCP and waking the other core's idle server (the store's
  calls themselves are two `EVALSHA`s, with no other round trip). Core 1 pays the two scripts
  and the HTTP request of every send, where a pair pays only the scripts, so even a free client
  core cannot carry the send as far as the pair rate.
- **SQLite rows.** The file is on tmpfs (`/dev/shm`), so `fsync` is nearly free and the rows measure
  CPU: SQLite runs inside the client process (on the store's connection thread, counted in the
  client's CPU, which takes the calls in turn: 8 in flight queue for it, and each call is two
  thread switches on the client's one core). The send rows also pay the HTTP request on that core,
  so the faster the store, the lower the send's ratio to the pair alone: with p the pair's CPU and h
  a no-store send's, a send costs at least p + h and its ratio is at most p / (p + h), which the
  row prints with how close the send comes to it. The 0.7× target needs p ≥ 2.3 h, a store pair
  more than twice as slow as a whole HTTP send: a faster store (group commit, fewer thread
  switches) raises the send rate and lowers this ratio alike. On a real
  disk each pair waits for two `fsync`s (`synchronous = FULL`) and the disk's flush latency sets the
  rate for the store and its pair alike.
- **Webhook rows.** One core, the verifier alone (no HTTP), timed in CPU time of the benchmark
  thread (so other processes on the core do not count). The ceiling is the faster of two
  implementations of the bare primitive over exactly the signed bytes, key prepared once: `ring`,
  and the crate the verifier uses (`hmac` with `sha1`/`sha2`, which use the CPU's SHA extensions,
  or `ed25519-dalek`). A verifier does two things the primitive does not, and the row shows both:
  it checks the request (bounds, headers, parsing and sorting the form or decoding the JWT,
  building the signed string, decoding base64; for Vonage a second primitive, the SHA-256 of the
  whole body against the JWT's `payload_hash`), and it builds the normalized `SmsEvent` a server
  reads (owned strings for ids, numbers and the body, the dedupe key, keyword detection; the
  fields are read in place from the form or the JSON body, and the `raw` object is built only
  when read). With SHA extensions an
  HMAC over a few hundred bytes takes about 0.2 µs, less than building the owned event takes
  alone (`event` in the row, measured by `parse_unverified` on the same request, no check at
  all): with b the primitive and e the event, a verifier that returns the event is at most
  b / (b + e) of the primitive, below 0.5× whenever e > b, and the row prints that bound and how
  close it comes; `checking alone` (verify less event) shows how close the check itself is. A
  profile of the Twilio verifier (`perf record`, about 1.6 µs a call) has SHA-1 at 13 %,
  splitting and percent-decoding the 15 pairs at about 25 %, sorting them at 13 %, the allocator
  at 7 %, and the event's strings and keyword detection most of the rest; Plivo's is alike
  (SHA-256 at 16 %); Vonage's has SHA-256 at 22 % (twice: the JWT's HMAC and the body's hash),
  its JSON strings at 18 % and base64 at 6 %. For Ed25519 the primitive dominates and the row
  measures the whole call. The ratios come from interleaved rounds (the verifier, the event alone
  and each primitive in turn, batch by batch, 21 rounds; `benches/support/paired.rs`), as the
  load rows do: criterion's medians are taken one function after the other, and a drift of the
  machine between two of them moved the Telnyx ratio by 5 % from one run to the next.
- **Segment estimate.** One core, memory bandwidth is far away: the figure is the per-character
  classification loop.
- **Peak memory.** Raw `reqwest` (and the SDK with `max_in_flight(None)`, the `sdk-unlimited`
  runs) sends all 10,000 requests at once, each on its own HTTP/1.1 connection (socket buffers,
  hyper's read and write buffers, the request and response): that is the floor of sending them all
  at once over HTTP/1.1. The SDK row is the client as a user gets it: at most 100 requests in flight
  per adapter, the other sends waiting in the adapter's queue (their futures, and the message
  each holds), so the figure is 100 connections plus 10,000 queued sends, and a run takes about
  100 s (10,000 / 100 slots × 1 s) instead of about 1 s.";

/// The "What limits" entry of the serve rows (continues [`LIMITS`]' list).
const SERVE_LIMITS: &str = "- **`sms-sdk serve` rows.** Serve's one core, and for PostgreSQL the
  other core. A webhook costs serve (user + system CPU, all its threads) tens of times what
  verifying it costs: the verify is a few per cent of it (the ratio column), so the ratio to the
  bare verify rate is far below 1 and says where the time is not. With SQLite, serve's core is
  busy all the time while core 1 (the load generator and the sink: their CPU per webhook is in
  the table of serve runs) is about a third busy: the rate is 1 / (serve's CPU per webhook). A
  profile of that row (`perf record --call-graph dwarf` of the serve process for 3 s,
  2026-12-02) splits it by thread and task: 29 % on the SQLite store's thread (two write
  transactions per webhook, the claim and the commit, each a WAL commit with its `pwrite`s and
  the shared-memory locks' `fcntl`s, even on tmpfs), 50 % in the server's connection tasks
  (reading the request, the handler, writing the answer), 17 % in the forward's HTTP client
  connection tasks (reqwest's hyper), and the rest parking and waking the two tokio worker
  threads that share the core. Across those, `writev` on loopback TCP is 22 % (serve's answers
  and its forward requests; on loopback the sender's system call also delivers into the
  receiver's socket), the allocator about 10 %, the event's JSON for the forward 6 % (the raw
  form decoded into it), the verifier 4 % and the Standard Webhooks signature under 1 %. With
  PostgreSQL serve's CPU per webhook is of the same order (tokio-postgres's two round trips,
  claim and commit, in place of the SQLite thread), but core 1 runs PostgreSQL's backends for
  those statements beside the load generator and the sink and is the busier core: that row is
  bounded by core 1, not by serve's core, and `1 / CPU` beside it is what serve's core alone
  would carry.";

const NOT_MEASURED: &str = "## What is not measured

- TLS: every request is plain HTTP on loopback, so handshakes and encryption (the same for raw
  `reqwest` and the SDK) are left out.
- The other adapters' send paths (Telnyx, Plivo, Vonage): the load rows send through Twilio.
- The database servers' CPU per pair: the ceilings are rates; only the client's CPU is counted.
- `redis-benchmark`: it cannot chain a reserve and a finalize of the same key and reservation id,
  so the Redis ceiling is a minimal `redis-rs` client running the same scripts with `EVALSHA`.
- The machine is shared: other builds ran at the same time (see the load averages above), which
  makes every figure noisier and lower than on an idle machine; ratios within one run are the
  figures to compare.";
