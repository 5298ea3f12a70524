//! `sms-bench-load`: the load side of the harness of `scripts/bench.sh`.
//!
//! - `suite` measures, on ONE tokio thread, raw `reqwest` and `Client::send` against the static
//!   responder (32 in flight and 1 in flight), `Client::send` with each store, each store's
//!   reserve + finalize pair through the store API and the same SQL/Lua by a minimal client (and
//!   `pgbench -M prepared`), and peak memory with 10,000 sends in flight (child processes). Runs
//!   are interleaved (every row once, then again…) and written to a JSON file.
//! - `memory` is one such child.
//! - `serve` measures `sms-sdk serve` (the release command, pinned to one core) receiving,
//!   verifying, deduplicating and forwarding distinct signed Twilio webhooks, with the SQLite
//!   and the PostgreSQL store, next to the bare verify rate of the same requests; `scripts/
//!   bench.sh` runs it pinned to the other core and `report --serve` adds its rows.
//! - `report` turns the suite's JSON, criterion's medians and the allocation counts into
//!   `BENCHMARKS.md`.
//!
//! `scripts/bench.sh` runs all of it; run that, not this, unless you are changing the harness.

#![allow(clippy::expect_used, clippy::unwrap_used)] // harness code: a failed setup ends the run with its reason

mod drive;
mod http;
mod memory;
mod report;
mod results;
mod serve;
mod stores;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Parser, Subcommand};
use sms_bench::wire::{BODY, TO};
use sms_sdk::Message;
use sms_sdk::store::{Fingerprint, MemoryStore};

use crate::drive::{drive, measure, measure_blocking};
use crate::http::{Raw, sdk_client, sdk_send};
use crate::results::{Results, Sample};
use crate::stores::{PairData, store_pair};

#[derive(Debug, Parser)]
struct Args {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Runs every load measurement and writes the results as JSON.
    Suite(SuiteArgs),
    /// One peak-memory run (a child of `suite`): prints its result as JSON.
    Memory {
        /// `raw`, `sdk` (the default configuration) or `sdk-unlimited` (no limit on requests in
        /// flight).
        #[arg(long)]
        mode: String,
        /// The slow responder's base URL.
        #[arg(long)]
        target: String,
        #[arg(long, default_value_t = 10_000)]
        in_flight: usize,
    },
    /// Measures `sms-sdk serve` (a child process) and writes the results as JSON.
    Serve(serve::ServeArgs),
    /// Writes BENCHMARKS.md from the suite's JSON, criterion's output and the allocation counts.
    Report(report::ReportArgs),
    /// Prints the serve rows of BENCHMARKS.md (the target table's, the table of runs, the notes)
    /// from `serve`'s JSON alone, for a separate run of it (`scripts/bench.sh serve`).
    ServeReport {
        /// `serve`'s JSON.
        #[arg(long)]
        serve: PathBuf,
    },
    /// Prints the production group's rows from a suite's JSON (`scripts/bench.sh production`).
    ProductionReport {
        /// The suite's JSON.
        #[arg(long)]
        results: PathBuf,
    },
}

#[derive(Debug, Parser)]
struct SuiteArgs {
    /// The static responder's base URL (`http://127.0.0.1:PORT`).
    #[arg(long)]
    responder: String,
    /// Its process id (its CPU time is read from /proc).
    #[arg(long)]
    responder_pid: Option<u32>,
    /// The responder that answers after 1 s (memory runs).
    #[arg(long)]
    slow_responder: Option<String>,
    /// PostgreSQL URL (a throwaway database: its table is truncated between runs).
    #[arg(long)]
    postgres: Option<String>,
    /// Redis URL (a throwaway database: it is flushed between runs).
    #[arg(long)]
    redis: Option<String>,
    /// A directory for the SQLite file.
    #[arg(long)]
    sqlite_dir: Option<PathBuf>,
    /// A directory on an ordinary disk (not tmpfs) for the production group's SQLite file.
    #[arg(long)]
    sqlite_disk_dir: Option<PathBuf>,
    /// The production group's PostgreSQL over TLS (`sslmode=verify-full`), the same server as
    /// `--postgres` (which it reaches in plain text).
    #[arg(long)]
    postgres_tls: Option<String>,
    /// The production group's Redis over TLS (`rediss://`), the same server as `--redis`.
    #[arg(long)]
    redis_tls: Option<String>,
    /// The production group's Redis Cluster (`redis-cluster://`).
    #[arg(long)]
    redis_cluster: Option<String>,
    /// The production group's DynamoDB store (`dynamodb://TABLE?endpoint=…`, on a local
    /// emulator); the table is created first.
    #[arg(long)]
    dynamodb: Option<String>,
    /// The pgbench program, when installed.
    #[arg(long)]
    pgbench: Option<PathBuf>,
    /// Runs of each row (the report takes medians).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Seconds per run.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Sends in flight for the memory runs.
    #[arg(long, default_value_t = 10_000)]
    memory_in_flight: usize,
    /// Only these groups (comma-separated: http, sqlite, postgres, redis, production, memory).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Where to write the results.
    #[arg(long)]
    out: PathBuf,
}

fn main() {
    match Args::parse().command {
        Commands::Suite(args) => {
            let results = suite(&args);
            let json = serde_json::to_string_pretty(&results).expect("results serialize");
            std::fs::write(&args.out, json).expect("the results file is writable");
            eprintln!("results written to {}", args.out.display());
        }
        Commands::Memory { mode, target, in_flight } => {
            let sample = memory::run(&mode, &target, in_flight);
            println!("{}", serde_json::to_string(&sample).expect("serializes"));
        }
        Commands::Serve(args) => {
            let results = serve::run(&args);
            let json = serde_json::to_string_pretty(&results).expect("results serialize");
            std::fs::write(&args.out, json).expect("the results file is writable");
            eprintln!("results written to {}", args.out.display());
        }
        Commands::Report(args) => report::write(&args),
        Commands::ServeReport { serve } => report::serve_fragment(&serve),
        Commands::ProductionReport { results } => report::production_fragment(&results),
    }
}

/// Makes `op(seq)` (returning a future) the shared closure `drive` takes.
macro_rules! op {
    (|$seq:ident| $($capture:ident),* => $body:expr) => {{
        $(let $capture = $capture.clone();)*
        Arc::new(move |$seq: u64| {
            $(let $capture = $capture.clone();)*
            let _ = $seq;
            async move { $body }
        })
    }};
}

/// Prints one sample as it is taken.
fn progress(id: &str, run: usize, sample: &Sample) {
    let cpu = sample.cpu_us().map_or_else(|| "-".to_owned(), |us| format!("{us:.1} µs CPU/op"));
    let responder = sample.responder_us().map_or_else(String::new, |us| {
        let user = sample.responder_user_us().unwrap_or_default();
        let load = sample.responder_load().unwrap_or_default() * 100.0;
        format!(", responder {us:.2} µs/req ({user:.2} in user space), {load:.0}% of its core")
    });
    eprintln!("  {id:<22} run {}: {:>9.0}/s, {cpu}{responder}, {} errors", run + 1, sample.rate(), sample.errors);
}

struct Suite<'a> {
    args: &'a SuiteArgs,
    results: Results,
    duration: Duration,
}

impl Suite<'_> {
    fn wants(&self, group: &str) -> bool {
        self.args.only.is_empty() || self.args.only.iter().any(|g| g == group)
    }

    fn record(&mut self, id: &str, label: &str, in_flight: usize, run: usize, sample: Sample) {
        progress(id, run, &sample);
        self.results.row_mut(id, label, in_flight).samples.push(sample);
    }
}

fn suite(args: &SuiteArgs) -> Results {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let mut suite = Suite {
        args,
        results: Results { runs: args.runs, seconds: args.seconds, ..Results::default() },
        duration: Duration::from_secs_f64(args.seconds),
    };
    for (what, same) in stores::in_sync() {
        let state = if same { "in sync with" } else { "OUT OF SYNC with" };
        suite.results.notes.push(format!("The minimal clients' {what} is {state} the store source measured."));
    }
    runtime.block_on(async {
        let sdk = Arc::new(sdk_client::<MemoryStore>(&args.responder, None));
        // The record every pair writes: the receipt of a real send.
        let receipt = sdk.send(&Message::new(TO, BODY)).await.expect("the responder answers a send");
        let fingerprint = Fingerprint::of(&Message::new(TO, BODY), &["twilio"]);
        let data = Arc::new(PairData::new(fingerprint, receipt));
        if suite.wants("http") {
            http_group(&mut suite, &sdk).await;
        }
        if suite.wants("sqlite") {
            sqlite_group(&mut suite, &data).await;
        }
        if suite.wants("postgres") {
            postgres_group(&mut suite, &data).await;
        }
        if suite.wants("redis") {
            redis_group(&mut suite, &data).await;
        }
        if suite.wants("production") {
            production_group(&mut suite).await;
        }
    });
    if suite.wants("memory") {
        memory_group(&mut suite);
    }
    suite.results
}

async fn http_group(suite: &mut Suite<'_>, sdk: &Arc<sms_sdk::Client>) {
    let args = suite.args;
    let (target, pid, duration) = (args.responder.clone(), args.responder_pid, suite.duration);
    eprintln!("HTTP: raw reqwest and Client::send against {target}, {} runs of {:.1} s", args.runs, args.seconds);
    let raw = Arc::new(Raw::new(&target));
    let raw_op = op!(|seq| raw => raw.send().await);
    let sdk_op = op!(|seq| sdk => sdk_send(&sdk, None).await);
    let warm = Duration::from_millis(500);
    drive(32, warm, Arc::clone(&raw_op)).await;
    drive(32, warm, Arc::clone(&sdk_op)).await;
    for run in 0..args.runs {
        let sample = measure(32, duration, pid, Arc::clone(&raw_op)).await;
        suite.record("raw_32", "raw reqwest 0.13, 32 in flight", 32, run, sample);
        let sample = measure(32, duration, pid, Arc::clone(&sdk_op)).await;
        suite.record("sdk_32", "Client::send, no store, 32 in flight", 32, run, sample);
        let sample = measure(1, duration, pid, Arc::clone(&raw_op)).await;
        suite.record("raw_1", "raw reqwest 0.13, sequential", 1, run, sample);
        let sample = measure(1, duration, pid, Arc::clone(&sdk_op)).await;
        suite.record("sdk_1", "Client::send, no store, sequential", 1, run, sample);
        // The same keyed send without a store: what the key costs before any store (its
        // fingerprint and coalescing), so that the memory row's store share can be told apart.
        let keyed = Arc::new(sdk_client(&target, None::<MemoryStore>));
        let keyed_op = op!(|seq| keyed => sdk_send(&keyed, Some(format!("k{seq}"))).await);
        let sample = measure(32, duration, pid, keyed_op).await;
        suite.record("sdk_keyed_32", "Client::send, no store, keyed, 32 in flight", 32, run, sample);
        // A fresh memory store each run: the records of earlier runs do not pile up.
        let memory = Arc::new(sdk_client(&target, Some(MemoryStore::new())));
        let memory_op = op!(|seq| memory => sdk_send(&memory, Some(format!("m{seq}"))).await);
        drive(32, Duration::from_millis(200), Arc::clone(&memory_op)).await;
        let sample = measure(32, duration, pid, memory_op).await;
        suite.record("sdk_memory_32", "Client::send, memory store, 32 in flight", 32, run, sample);
    }
}

async fn sqlite_group(suite: &mut Suite<'_>, data: &Arc<PairData>) {
    let args = suite.args;
    let Some(dir) = &args.sqlite_dir else {
        suite.results.skipped.push("SQLite: no --sqlite-dir given".to_owned());
        return;
    };
    let (target, pid, duration) = (args.responder.clone(), args.responder_pid, suite.duration);
    let path = dir.join("sms-bench.db");
    eprintln!("SQLite at {}", path.display());
    let store = Arc::new(sms_sdk::store::sqlite::SqliteStore::open(&path).await.expect("the SQLite store opens"));
    let client = Arc::new(sdk_client(&target, Some(Arc::clone(&store))));
    let mut minimal = stores::sqlite_min::Minimal::open(&path).expect("the minimal SQLite client opens");
    let warm = Duration::from_millis(300);
    drive(8, warm, op!(|seq| client => sdk_send(&client, Some(format!("w{seq}"))).await)).await;
    drive(8, warm, op!(|seq| store, data => store_pair(&*store, &data, format!("v{seq}")).await)).await;
    for run in 0..args.runs {
        minimal.reset().expect("reset");
        let op = op!(|seq| client => sdk_send(&client, Some(format!("s{seq}"))).await);
        let sample = measure(8, duration, pid, op).await;
        suite.record("sqlite_send_8", "Client::send, SQLite store, 8 in flight", 8, run, sample);
        minimal.reset().expect("reset");
        let op = op!(|seq| store, data => store_pair(&*store, &data, format!("p{seq}")).await);
        let sample = measure(8, duration, None, op).await;
        suite.record("sqlite_pair_store_8", "SQLite reserve + finalize through the store, 8 in flight", 8, run, sample);
        minimal.reset().expect("reset");
        let sample = measure_blocking(duration, |seq| minimal.pair(data, &format!("q{seq}")));
        suite.record("sqlite_pair_min_1", "the same SQL, rusqlite, cached statements, sequential", 1, run, sample);
    }
}

async fn postgres_group(suite: &mut Suite<'_>, data: &Arc<PairData>) {
    let args = suite.args;
    let Some(url) = &args.postgres else {
        suite.results.skipped.push("PostgreSQL: no --postgres URL given".to_owned());
        return;
    };
    let (target, pid, duration) = (args.responder.clone(), args.responder_pid, suite.duration);
    eprintln!("PostgreSQL at {url}");
    let admin = stores::postgres::connect(url).await.expect("PostgreSQL answers");
    let store = Arc::new(sms_sdk::store::postgres::PostgresStore::connect(url).await.expect("the store connects"));
    let client = Arc::new(sdk_client(&target, Some(Arc::clone(&store))));
    let mut minimal = Vec::new();
    for _ in 0..8 {
        minimal.push(stores::postgres::Minimal::connect(url).await.expect("the minimal client connects"));
    }
    let minimal = Arc::new(minimal);
    let warm = Duration::from_millis(300);
    drive(8, warm, op!(|seq| client => sdk_send(&client, Some(format!("w{seq}"))).await)).await;
    drive(8, warm, op!(|seq| store, data => store_pair(&*store, &data, format!("v{seq}")).await)).await;
    let script = std::env::temp_dir().join(format!("sms-bench-pgbench-{}.sql", std::process::id()));
    std::fs::write(&script, stores::postgres::pgbench_script()).expect("the pgbench script is writable");
    for run in 0..args.runs {
        stores::postgres::reset(&admin).await.expect("truncate");
        let op = op!(|seq| client => sdk_send(&client, Some(format!("s{seq}"))).await);
        let sample = measure(8, duration, pid, op).await;
        suite.record("pg_send_8", "Client::send, PostgreSQL store, 8 in flight", 8, run, sample);
        stores::postgres::reset(&admin).await.expect("truncate");
        let op = op!(|seq| store, data => store_pair(&*store, &data, format!("p{seq}")).await);
        let sample = measure(8, duration, None, op).await;
        suite.record("pg_pair_store_8", "PostgreSQL reserve + finalize through the store, 8 in flight", 8, run, sample);
        stores::postgres::reset(&admin).await.expect("truncate");
        let op = op!(|seq| minimal, data => {
            let worker = drive::worker_of(seq) % minimal.len();
            match minimal.get(worker) {
                Some(client) => client.pair(&data, &format!("q{seq}")).await,
                None => Err("no connection".to_owned()),
            }
        });
        let sample = measure(8, duration, None, op).await;
        suite.record(
            "pg_pair_min_8",
            "the same SQL, tokio-postgres, prepared once per connection, 8 connections",
            8,
            run,
            sample,
        );
        stores::postgres::reset(&admin).await.expect("truncate");
        match &args.pgbench {
            Some(pgbench) => match run_pgbench(pgbench, &script, url, data, args.seconds) {
                Ok(sample) => {
                    suite.record("pg_pair_pgbench_8", "the same SQL, pgbench -M prepared, 8 clients", 8, run, sample);
                }
                Err(error) => {
                    eprintln!("  pgbench failed: {error}");
                    suite.results.skipped.push(format!("pgbench run {}: {error}", run + 1));
                }
            },
            None if run == 0 => suite.results.skipped.push("pgbench: not installed".to_owned()),
            None => {}
        }
    }
    let _ = std::fs::remove_file(script);
}

/// `pgbench -n -M prepared -c 8 -j 1 -T <seconds>` of the pair script; a sample of its counts.
fn run_pgbench(
    pgbench: &PathBuf,
    script: &PathBuf,
    url: &str,
    data: &PairData,
    seconds: f64,
) -> Result<Sample, String> {
    let now = i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(0);
    let expires = now + i64::try_from(stores::TTL.as_millis()).unwrap_or(0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // whole seconds, at least one
    let whole_seconds = seconds.ceil().max(1.0) as u64;
    let output = Command::new(pgbench)
        .args(["-n", "-M", "prepared", "-c", "8", "-j", "1", "-T", &whole_seconds.to_string()])
        .arg("-D")
        .arg(format!("fp={}", data.fingerprint.as_str()))
        .arg("-D")
        .arg(format!("now={now}"))
        .arg("-D")
        .arg("state=accepted")
        .arg("-D")
        .arg(format!("record={}", data.record_json))
        .arg("-D")
        .arg(format!("expires={expires}"))
        .arg("-f")
        .arg(script)
        .arg(url)
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!("{}{}", stdout, String::from_utf8_lossy(&output.stderr)));
    }
    let value = |prefix: &str| {
        stdout
            .lines()
            .find_map(|line| line.trim().strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().next().and_then(|n| n.parse::<f64>().ok()))
    };
    let processed = value("number of transactions actually processed:").ok_or("no transaction count")?;
    let failed = value("number of failed transactions:").unwrap_or(0.0);
    let tps = value("tps =").ok_or("no tps")?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // counts
    Ok(Sample {
        ops: processed as u64,
        errors: failed as u64,
        wall_s: if tps > 0.0 { processed / tps } else { 0.0 },
        ..Sample::default()
    })
}

async fn redis_group(suite: &mut Suite<'_>, data: &Arc<PairData>) {
    let args = suite.args;
    let Some(url) = &args.redis else {
        suite.results.skipped.push("Redis: no --redis URL given".to_owned());
        return;
    };
    let (target, pid, duration) = (args.responder.clone(), args.responder_pid, suite.duration);
    eprintln!("Redis at {url}");
    let mut admin = stores::redis_min::connect(url).await.expect("Redis answers");
    let store = Arc::new(sms_sdk::store::redis::RedisStore::connect(url).await.expect("the store connects"));
    let client = Arc::new(sdk_client(&target, Some(Arc::clone(&store))));
    let minimal = Arc::new(stores::redis_min::Minimal::connect(url).await.expect("the minimal client connects"));
    // The HTTP part of a keyed send at the same concurrency: no store, a key (so the fingerprint
    // and the in-flight map are paid as in the Redis send).
    let plain = Arc::new(sdk_client::<MemoryStore>(&target, None));
    let warm = Duration::from_millis(300);
    drive(8, warm, op!(|seq| client => sdk_send(&client, Some(format!("w{seq}"))).await)).await;
    drive(8, warm, op!(|seq| plain => sdk_send(&plain, Some(format!("w{seq}"))).await)).await;
    drive(8, warm, op!(|seq| store, data => store_pair(&*store, &data, format!("v{seq}")).await)).await;
    drive(8, warm, op!(|seq| minimal, data => minimal.pair(&data, &format!("u{seq}")).await)).await;
    for run in 0..args.runs {
        stores::redis_min::reset(&mut admin).await.expect("flush");
        let op = op!(|seq| client => sdk_send(&client, Some(format!("s{seq}"))).await);
        let sample = measure(8, duration, pid, op).await;
        suite.record("redis_send_8", "Client::send, Redis store, 8 in flight", 8, run, sample);
        let op = op!(|seq| plain => sdk_send(&plain, Some(format!("n{seq}"))).await);
        let sample = measure(8, duration, pid, op).await;
        suite.record(
            "sdk_8",
            "Client::send, no store (keyed), 8 in flight: the HTTP part of the Redis send",
            8,
            run,
            sample,
        );
        stores::redis_min::reset(&mut admin).await.expect("flush");
        let op = op!(|seq| store, data => store_pair(&*store, &data, format!("p{seq}")).await);
        let sample = measure(8, duration, None, op).await;
        suite.record("redis_pair_store_8", "Redis reserve + finalize through the store, 8 in flight", 8, run, sample);
        stores::redis_min::reset(&mut admin).await.expect("flush");
        let op = op!(|seq| minimal, data => minimal.pair(&data, &format!("q{seq}")).await);
        let sample = measure(8, duration, None, op).await;
        suite.record(
            "redis_pair_min_8",
            "the same Lua, redis-rs multiplexed connection, EVALSHA, 8 in flight",
            8,
            run,
            sample,
        );
    }
    let _ = stores::redis_min::reset(&mut admin).await;
}

/// The production group: keyed sends, 8 in flight, through the stores as teams deploy them (TLS,
/// a cluster, SQLite on an ordinary disk), each next to its plain-text (or tmpfs) row and to the
/// same keyed send without a store, all interleaved within each run.
async fn production_group(suite: &mut Suite<'_>) {
    let args = suite.args;
    let (target, pid, duration) = (args.responder.clone(), args.responder_pid, suite.duration);
    let mut rows: Vec<(&str, &str, Arc<sms_sdk::Client>)> = vec![(
        "prod_keyed_8",
        "Client::send, no store, keyed, 8 in flight",
        Arc::new(sdk_client::<MemoryStore>(&target, None)),
    )];
    for (id, label, dir) in [
        ("prod_sqlite_disk_8", "Client::send, SQLite store on an ordinary disk, 8 in flight", &args.sqlite_disk_dir),
        ("prod_sqlite_tmpfs_8", "Client::send, SQLite store on tmpfs, 8 in flight", &args.sqlite_dir),
    ] {
        if let Some(dir) = dir {
            let store =
                sms_sdk::store::sqlite::SqliteStore::open(dir.join("production.db")).await.expect("SQLite opens");
            rows.push((id, label, Arc::new(sdk_client(&target, Some(store)))));
        }
    }
    for (id, label, url) in [
        ("prod_pg_plain_8", "Client::send, PostgreSQL store, plain text, 8 in flight", &args.postgres),
        ("prod_pg_tls_8", "Client::send, PostgreSQL store, TLS verify-full, 8 in flight", &args.postgres_tls),
    ] {
        if let Some(url) = url {
            let store = sms_sdk::store::postgres::PostgresStore::connect(url).await.expect("PostgreSQL connects");
            rows.push((id, label, Arc::new(sdk_client(&target, Some(store)))));
        }
    }
    for (id, label, url) in [
        ("prod_redis_plain_8", "Client::send, Redis store, plain text, 8 in flight", &args.redis),
        ("prod_redis_tls_8", "Client::send, Redis store, TLS, 8 in flight", &args.redis_tls),
        ("prod_cluster_8", "Client::send, Redis Cluster store (3 masters), 8 in flight", &args.redis_cluster),
    ] {
        if let Some(url) = url {
            let store = sms_sdk::store::redis::RedisStore::connect(url).await.expect("Redis connects");
            rows.push((id, label, Arc::new(sdk_client(&target, Some(store)))));
        }
    }
    if let Some(url) = &args.dynamodb {
        let builder = sms_sdk::store::dynamodb::DynamoStoreBuilder::from_url(url).expect("a DynamoDB store URL");
        let (store, _) = builder.create_table().await.expect("the DynamoDB table is created");
        let label = "Client::send, DynamoDB store on moto's server (an emulator, loopback), 8 in flight";
        rows.push(("prod_dynamodb_8", label, Arc::new(sdk_client(&target, Some(store)))));
    }
    eprintln!("Production: {} rows, {} runs of {:.1} s", rows.len(), args.runs, args.seconds);
    for (id, _, client) in &rows {
        let client = Arc::clone(client);
        let warm = id.to_string();
        drive(
            8,
            Duration::from_millis(300),
            op!(|seq| client, warm => sdk_send(&client, Some(format!("{warm}-w{seq}"))).await),
        )
        .await;
    }
    for run in 0..args.runs {
        for (id, label, client) in &rows {
            let (client, prefix) = (Arc::clone(client), format!("{id}-{run}-"));
            let op = op!(|seq| client, prefix => sdk_send(&client, Some(format!("{prefix}{seq}"))).await);
            let sample = measure(8, duration, pid, op).await;
            suite.record(id, label, 8, run, sample);
        }
    }
}

/// The modes of the memory runs, in the order each run takes them.
pub(crate) const MEMORY_MODES: [&str; 3] = ["raw", "sdk", "sdk-unlimited"];
/// At most this many memory runs of each mode.
const MEMORY_RUNS: usize = 3;

fn memory_group(suite: &mut Suite<'_>) {
    let args = suite.args;
    let Some(target) = &args.slow_responder else {
        suite.results.skipped.push("memory: no --slow-responder given".to_owned());
        return;
    };
    eprintln!("Memory: {} sends started at once against {target} (answers after 1 s)", args.memory_in_flight);
    let exe = std::env::current_exe().expect("this program's path");
    // The default client sends through 100 slots: a run takes in_flight / 100 seconds, so three
    // runs (the peaks vary by well under a megabyte between runs).
    for run in 0..args.runs.min(MEMORY_RUNS) {
        for mode in MEMORY_MODES {
            let output = Command::new(&exe)
                .args(["memory", "--mode", mode, "--target", target, "--in-flight", &args.memory_in_flight.to_string()])
                .output()
                .expect("the memory run starts");
            match serde_json::from_slice::<results::MemorySample>(&output.stdout) {
                Ok(sample) => {
                    eprintln!(
                        "  memory {mode} run {}: peak {:.1} MB (baseline {:.1} MB), {} ok, {} errors in {:.1} s{}",
                        run + 1,
                        mib(sample.peak_kib),
                        mib(sample.baseline_kib),
                        sample.ok,
                        sample.errors,
                        sample.wall_s,
                        sample.first_error.as_deref().map_or_else(String::new, |e| format!(" (first: {e})")),
                    );
                    suite.results.memory.push(sample);
                }
                Err(error) => {
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    eprintln!("  memory {mode} run {} failed: {error}: {stderr}", run + 1);
                    suite.results.skipped.push(format!("memory {mode} run {}: {error}", run + 1));
                }
            }
        }
    }
}

/// The segment bodies of the micro benchmarks (to turn their timings into MB/s).
#[allow(dead_code)] // the allocation counter uses parts the report does not
#[path = "../../../../sms-sdk/benches/support/webhooks.rs"]
mod webhooks;

pub(crate) fn segment_bodies() -> Vec<(&'static str, String)> {
    webhooks::segment_bodies()
}

/// KiB as MB (10^6 bytes).
#[allow(clippy::cast_precision_loss)]
pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}
