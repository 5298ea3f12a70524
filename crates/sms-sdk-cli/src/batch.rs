//! `sms-sdk batch`: one message per row of a CSV file, at most `--rate` per second, resumable.
//!
//! Every row has an idempotency key (its key column, or the prefix and its row number) and the
//! sends go through a durable store, so running the same batch again after a crash sends only
//! the rows that were never accepted: accepted rows replay without a request, and rows whose
//! outcome is unknown are reported, never resent. The file is read as a stream (a first pass
//! counts its rows for the progress), results are written to the report as they come, and at
//! most `--concurrency` rows are in memory at once.

mod report;
mod rows;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use clap::Args;
use futures_util::StreamExt;
use sms_sdk::adapter::{Adapter as _, AnyAdapter};
use sms_sdk::batch::{BatchOptions, BatchResult, RowOutcome, Summary};
use sms_sdk::rate::RateLimit;
use sms_sdk::rate::redis::RedisRateLimiter;
use sms_sdk::store::Stores;
use sms_sdk::{CancellationToken, Client, ErrorKind, Failover, Message};
use sms_sdk_emulator::RunningEmulator;

use self::report::{Format, Line, Progress, Report, advice, lossy};
use self::rows::{Columns, Rows};
use crate::flags::Provider;
use crate::paths::Sends;
use crate::sending::{guarded, opted_out, policy};
use crate::spinner::Spinners;
use crate::store::StoreFlag;
use crate::{EXIT_CONFIGURATION, EXIT_FAILED, EXIT_OK, EXIT_UNKNOWN, EXIT_USAGE, Env};

/// How many rows about unknown outcomes (or invalid rows in a dry run) are printed one by one;
/// the report has them all.
const LISTED: u64 = 20;
/// The shared limit's bucket: every `batch` using the same `--rate-redis` shares one rate.
const SHARED_BUCKET: &str = "batch";

/// `sms-sdk batch` flags.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("body").required(true).args(["body_column", "body_template"])))]
#[command(group(clap::ArgGroup::new("key").required(true).args(["key_column", "key_prefix"])))]
pub(crate) struct BatchArgs {
    /// The CSV file (RFC 4180; the first line is the header).
    #[arg(long, value_name = "FILE")]
    csv: PathBuf,
    /// The column of the recipients (E.164).
    #[arg(long, value_name = "NAME", default_value = "to")]
    to_column: String,
    /// The column of the message text (or --body-template).
    #[arg(long, value_name = "NAME")]
    body_column: Option<String>,
    /// The message text, with `{column}` placeholders (`{{` and `}}` for braces).
    #[arg(long, value_name = "TEXT")]
    body_template: Option<String>,
    /// The column of each row's idempotency key (or --key-prefix).
    #[arg(long, value_name = "NAME")]
    key_column: Option<String>,
    /// Each row's key is this prefix followed by the row's number (1 = the first row after the
    /// header).
    #[arg(long, value_name = "TEXT")]
    key_prefix: Option<String>,
    /// Sender: +E164 number, short code, or alphanumeric sender ID.
    #[arg(long)]
    from: Option<String>,
    /// Provider to use; repeat for a failover order (default: every configured provider).
    #[arg(long = "provider", value_name = "NAME", value_enum)]
    providers: Vec<crate::flags::Provider>,
    /// Fail over to the next provider after an eligible rejection.
    #[arg(long)]
    fallback: bool,
    /// Every message's status callback URL (default: `SMS_SDK_STATUS_CALLBACK_URL`); with
    /// `SMS_SDK_CORRELATION_SECRET`, the callbacks carry the reference `sms-sdk serve` settles
    /// unknown outcomes from.
    #[arg(long, value_name = "URL", value_hint = clap::ValueHint::Url)]
    webhook_url: Option<String>,
    /// At most this many messages per second, over all workers.
    #[arg(long, value_name = "N")]
    rate: Option<u32>,
    /// Keep the `--rate` limit in this Redis, shared by every batch that uses it: redis://…,
    /// rediss://… (TLS) or a cluster, redis-cluster://… or rediss-cluster://… (with --rate).
    #[arg(long, value_name = "URL", requires = "rate")]
    rate_redis: Option<String>,
    /// Sends at once (1–10,000).
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    concurrency: u16,
    #[command(flatten)]
    store: StoreFlag,
    /// Write one line per row (row, key, masked recipient, outcome, provider, provider id,
    /// error code, reason: an unknown outcome's reason or a rejection's category) to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// The report's format: csv or jsonl (default: csv for a `.csv` file, else jsonl).
    #[arg(long, value_name = "FORMAT", requires = "report")]
    report_format: Option<String>,
    /// Per-request timeout in milliseconds.
    #[arg(long, value_name = "N")]
    timeout_ms: Option<u64>,
    /// Check every row and print the cost in segments per encoding; send nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
}

impl BatchArgs {
    fn columns<'a>(&'a self, webhook_url: Option<&'a str>) -> Columns<'a> {
        Columns {
            to: &self.to_column,
            body_column: self.body_column.as_deref(),
            body_template: self.body_template.as_deref(),
            key_column: self.key_column.as_deref(),
            key_prefix: self.key_prefix.as_deref(),
            from: self.from.as_deref(),
            webhook_url,
        }
    }
}

/// A failure that ends the command with `code` and a message for stderr.
struct Stop(u8, String);

/// `sms-sdk batch`.
pub(crate) async fn run(args: BatchArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match go(&args, env, out, err).await {
        Ok(code) => code,
        Err(Stop(code, message)) => {
            let _ = writeln!(err, "error: {message}");
            code
        }
    }
}

async fn go(args: &BatchArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> Result<u8, Stop> {
    let usage = |message: String| Stop(EXIT_USAGE, message);
    let mut callback = crate::sending::status_callback(args.webhook_url.as_deref(), env);
    let adapters = crate::config::configured_adapters(&args.providers, env).map_err(|(code, text)| Stop(code, text))?;
    if let Some(adapters) = &adapters {
        crate::config::require_sender(adapters, args.from.as_deref()).map_err(|(code, text)| Stop(code, text))?;
        if !crate::sending::default_callback_fits(args.webhook_url.as_deref(), env, adapters, err) {
            callback = None;
        }
    }
    let rows = Rows::new(&args.csv, args.columns(callback.as_deref())).map_err(usage)?;
    let total = rows::count(&args.csv).map_err(usage)?;
    let sends = if adapters.is_some() { Sends::Real } else { Sends::Emulated };
    let spinners = Spinners::new(env, args.json);
    let opening = args.store.open_stores(env, sends, spinners, err);
    let (url, stores) = opening.await.map_err(|e| Stop(EXIT_CONFIGURATION, format!("store: {e}")))?;
    if args.dry_run {
        return dry_run(args, adapters, &stores, rows, out, err).await;
    }
    let format = args.report.as_deref().map(|path| Format::of(args.report_format.as_deref(), path)).transpose();
    let mut report = match (&args.report, format.map_err(usage)?) {
        (Some(path), Some(format)) => Some(Report::create(path, format).map_err(usage)?),
        _ => None,
    };
    if url == "memory" {
        let _ = writeln!(err, "warning: the memory store forgets every key when the command ends: not resumable");
    }
    let (stop, abandon) = (CancellationToken::new(), CancellationToken::new());
    let options = options(args).await?.stop(stop.clone()).abandon(abandon.clone());
    let (client, emulator) = client(args, env, adapters, &stores, spinners, err).await?;

    let (signals, mut notices) = tokio::sync::mpsc::unbounded_channel();
    let watcher = tokio::spawn(interrupts(stop.clone(), abandon.clone(), signals));
    let input_error: Arc<Mutex<Option<String>>> = Arc::default();
    let messages = messages(rows, &input_error, &stop);
    let mut results = client.send_batch(messages, options);
    let mut tally = Tally::default();
    let mut progress = Progress::new(total, spinners.enabled());
    let mut report_failed = None;
    loop {
        let result = tokio::select! {
            biased;
            Some(notice) = notices.recv() => {
                progress.suspend(|| { let _ = writeln!(err, "{notice}"); });
                continue;
            }
            result = results.next() => result,
        };
        let Some(result) = result else { break };
        let outcome = tally.add(&result);
        let line = Line::of(&result);
        if outcome == RowOutcome::Unknown && tally.summary.unknown <= LISTED {
            let _ = writeln!(err, "row {} (key {}): unknown, {}", line.row, line.key, advice(outcome));
        }
        if let Some(report) = &mut report
            && report_failed.is_none()
            && let Err(error) = report.write(&line)
        {
            report_failed = Some(error);
            stop.cancel();
        }
        progress.step(&tally, err);
    }
    progress.finish();
    watcher.abort();
    while let Ok(notice) = notices.try_recv() {
        let _ = writeln!(err, "{notice}");
    }
    if let Some(report) = &mut report
        && let Err(error) = report.finish()
    {
        report_failed.get_or_insert(error);
    }
    if let Some(emulator) = emulator {
        emulator.shutdown().await;
    }
    let input_error = input_error.lock().unwrap_or_else(PoisonError::into_inner).take();
    let interrupted = stop.is_cancelled() && report_failed.is_none() && input_error.is_none();
    print_summary(args, &tally, total, progress.elapsed(), interrupted, out);
    if let Some(error) = report_failed {
        return Err(Stop(EXIT_CONFIGURATION, format!("the report could not be written: {error}")));
    }
    if let Some(message) = input_error {
        return Err(usage(format!("{message}; the rows before it were sent (see the summary), run again to go on")));
    }
    Ok(closing(&tally, total, interrupted, err))
}

/// The notes at the end of a batch, and its exit code: 3 when a row is unknown, else 1 when a
/// row was not sent (rejected, suppressed, or never taken because the batch was interrupted).
fn closing(tally: &Tally, total: u64, interrupted: bool, err: &mut dyn Write) -> u8 {
    let summary = &tally.summary;
    if summary.unknown > LISTED {
        let _ = writeln!(err, "… and {} more unknown rows (see the report)", summary.unknown.saturating_sub(LISTED));
    }
    if tally.suppressed > 0 {
        let _ = writeln!(
            err,
            "{} row(s) not sent: the recipient opted out (sms-sdk suppression list; the report names them)",
            tally.suppressed
        );
    }
    if let Some(first) = &tally.first_store_error {
        let _ = writeln!(
            err,
            "{} row(s) not sent: the store failed (nothing was sent for them; run the same command again once it \
             answers). The first error: {first}",
            tally.store_failed
        );
    }
    if interrupted {
        let _ = writeln!(err, "interrupted: no more rows were sent; run the same command again to send the rest");
    }
    if summary.unknown > 0 {
        EXIT_UNKNOWN
    } else if summary.rejected > 0 || interrupted || summary.total() < total {
        EXIT_FAILED
    } else {
        EXIT_OK
    }
}

/// Waits for Ctrl-C: the first stops the batch (no new request; the requests in flight finish
/// within their timeout), the second abandons the requests in flight (their keys stay
/// unresolved: reported unknown, never resent). Each says so through `notices`.
async fn interrupts(
    stop: CancellationToken,
    abandon: CancellationToken,
    notices: tokio::sync::mpsc::UnboundedSender<&'static str>,
) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    // The notice goes out first: once stopped, the batch may end before a later one is read.
    let _ = notices.send(
        "stopping: no new message is sent; waiting for the sends in flight to finish (Ctrl-C again abandons \
         them: their outcome is then unknown, never resent)",
    );
    stop.cancel();
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    let _ = notices.send(
        "abandoning the sends in flight: their outcome is unknown; reconcile them (sms-sdk idempotency list \
         --state unresolved)",
    );
    abandon.cancel();
}

/// How the rows of a batch ended: the library's summary, and the rows refused because the
/// recipient opted out (counted as rejected there).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) summary: Summary,
    pub(crate) suppressed: u64,
    /// The rows not sent because the store failed (their records or the suppression list), and
    /// the first of those errors.
    pub(crate) store_failed: u64,
    first_store_error: Option<String>,
}

impl Tally {
    /// Counts one result; returns its outcome.
    fn add(&mut self, result: &BatchResult<(u64, String)>) -> RowOutcome {
        let outcome = result.outcome();
        self.summary.add(outcome);
        if report::is_suppressed(result) {
            self.suppressed = self.suppressed.saturating_add(1);
        }
        if let Err(error) = &result.result
            && matches!(error.kind(), ErrorKind::Store | ErrorKind::BeforeSend)
        {
            self.store_failed = self.store_failed.saturating_add(1);
            self.first_store_error.get_or_insert_with(|| error.to_string());
        }
        outcome
    }
}

/// The batch's client (with the store's records and suppression list) and, when no provider is
/// configured, the embedded emulator it sends to, which lives as long as the batch.
async fn client(
    args: &BatchArgs,
    env: &Env,
    adapters: Option<Vec<AnyAdapter>>,
    stores: &Stores,
    spinners: Spinners,
    err: &mut dyn Write,
) -> Result<(Client, Option<RunningEmulator>), Stop> {
    let configuration = |e: sms_sdk::Error| Stop(EXIT_CONFIGURATION, format!("{}: {e}", e.code()));
    let (adapters, emulator) = if let Some(adapters) = adapters {
        // As `send` says it of each result: a batch to an emulator or a proxy says so first.
        for adapter in &adapters {
            let info = adapter.info();
            let (Some(provider), Some(endpoint)) = (Provider::named(&info.name), info.endpoint.as_deref()) else {
                continue;
            };
            if !crate::config::is_own_endpoint(provider, endpoint) {
                let variable = crate::config::origin_variable(env, provider)
                    .unwrap_or_else(|| crate::config::base_url_variable(provider));
                let _ = writeln!(err, "sending to {endpoint} ({variable}), not {}'s own API", info.name);
            }
        }
        (adapters, None)
    } else {
        let emulator = spinners
            .during("starting the local emulator", sms_sdk_emulator::Emulator::start())
            .await
            .map_err(|e| Stop(EXIT_CONFIGURATION, format!("configuration: could not start the emulator: {e}")))?;
        let adapter = crate::embedded::embedded_adapter(&emulator.base_url()).map_err(configuration)?;
        let _ =
            writeln!(err, "no provider is configured: sending to the embedded emulator (nothing leaves this machine)");
        (vec![adapter], Some(emulator))
    };
    let policy = policy(stores, &adapters);
    let correlation = crate::sending::correlation(env).map_err(configuration)?;
    let mut builder = guarded(Client::builder().adapters(adapters), stores, &policy, true, correlation.as_ref());
    builder = builder.max_in_flight(Some(usize::from(args.concurrency).max(100)));
    if args.fallback {
        builder = builder.failover(Failover::OnEligibleRejection);
    }
    if let Some(ms) = args.timeout_ms {
        builder = builder.timeout(Duration::from_millis(ms));
    }
    let client = builder.build().map_err(|e| Stop(crate::exit_code(e.kind()), format!("{}: {e}", e.code())))?;
    Ok((client, emulator))
}

/// The batch options of the flags: concurrency, and the rate in process or in Redis.
async fn options(args: &BatchArgs) -> Result<BatchOptions, Stop> {
    let options = BatchOptions::default()
        .concurrency(usize::from(args.concurrency))
        .map_err(|e| Stop(EXIT_USAGE, format!("--concurrency: {e}")))?;
    let Some(rate) = args.rate else { return Ok(options) };
    // Bursts of up to 20 ms of sends let a turn taken late (timers fire on whole milliseconds)
    // be made up, so the rate over any second is `--rate`, not what the timer allows.
    let limit = RateLimit::per_second(rate).burst((rate / 50).max(1));
    let configured = match &args.rate_redis {
        None => options.rate(limit),
        Some(url) => {
            let shared = RedisRateLimiter::builder(url.as_str())
                .connect()
                .await
                .map_err(|e| Stop(EXIT_CONFIGURATION, format!("--rate-redis: {e}")))?;
            options.shared_rate(limit, Arc::new(shared), SHARED_BUCKET)
        }
    };
    configured.map_err(|e| Stop(EXIT_USAGE, format!("--rate: {e}")))
}

/// The rows as a stream of (row number and recipient, message); an input error ends it and is
/// kept in `input_error`.
fn messages(
    rows: Rows,
    input_error: &Arc<Mutex<Option<String>>>,
    stop: &CancellationToken,
) -> impl futures_util::Stream<Item = ((u64, String), Message)> + Unpin + use<> {
    let (input_error, stop) = (Arc::clone(input_error), stop.clone());
    futures_util::stream::iter(rows.map_while(move |row| match row {
        Ok((number, message)) => Some(((number, message.to.clone()), message)),
        Err(error) => {
            *input_error.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
            stop.cancel();
            None
        }
    }))
}

/// Prints the summary: text, or one JSON object.
fn print_summary(
    args: &BatchArgs,
    tally: &Tally,
    total: u64,
    elapsed: Duration,
    interrupted: bool,
    out: &mut dyn Write,
) {
    let summary = &tally.summary;
    let seconds = elapsed.as_secs_f64();
    let rate = if seconds > 0.0 { lossy(summary.total()) / seconds } else { 0.0 };
    if args.json {
        let body = serde_json::json!({
            "rows": total,
            "done": summary.total(),
            "accepted": summary.accepted,
            "replayed": summary.replayed,
            "rejected": summary.rejected,
            "suppressed": tally.suppressed,
            "unknown": summary.unknown,
            "interrupted": interrupted,
            "elapsed_ms": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            "rows_per_second": (rate * 10.0).round() / 10.0,
            "report": args.report.as_deref().map(Path::display).map(|p| p.to_string()),
        });
        let _ = writeln!(out, "{body}");
        return;
    }
    let suppressed =
        if tally.suppressed > 0 { format!(" ({} of them suppressed)", tally.suppressed) } else { String::new() };
    let _ = writeln!(
        out,
        "{} of {total} rows: {} accepted, {} replayed, {} rejected{suppressed}, {} unknown, in {seconds:.1} s \
         ({rate:.1} rows/s)",
        summary.total(),
        summary.accepted,
        summary.replayed,
        summary.rejected,
        summary.unknown
    );
}

/// `--dry-run`: every row checked against the adapters and the store's suppression list, the cost
/// in segments per encoding.
async fn dry_run(
    args: &BatchArgs,
    adapters: Option<Vec<AnyAdapter>>,
    stores: &Stores,
    rows: Rows,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, Stop> {
    let adapters = match adapters {
        Some(adapters) => adapters,
        None => vec![
            crate::embedded::embedded_adapter("http://127.0.0.1:9")
                .map_err(|e| Stop(EXIT_CONFIGURATION, format!("{}: {e}", e.code())))?,
        ],
    };
    let policy = policy(stores, &adapters);
    let client = Client::builder()
        .adapters(adapters)
        .build()
        .map_err(|e| Stop(crate::exit_code(e.kind()), format!("{}: {e}", e.code())))?;
    // Per encoding: messages and segments.
    let mut cost: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
    let (mut checked, mut invalid, mut suppressed) = (0_u64, 0_u64, 0_u64);
    for row in rows {
        let (number, message) = row.map_err(|message| Stop(EXIT_USAGE, message))?;
        checked = checked.saturating_add(1);
        let validation = client.validate(&message);
        if !validation.supported {
            invalid = invalid.saturating_add(1);
            if invalid <= LISTED {
                let issues: Vec<&str> = validation.issues.iter().map(|issue| issue.message.as_str()).collect();
                let _ = writeln!(err, "row {number}: {}", issues.join("; "));
            }
            continue;
        }
        let found = crate::sending::suppressed(&message, stores, &policy).await;
        if let Some(entry) = found.map_err(|e| Stop(EXIT_CONFIGURATION, format!("store: {e}")))? {
            suppressed = suppressed.saturating_add(1);
            if suppressed <= LISTED {
                let _ = writeln!(err, "row {number}: suppressed: {}", opted_out(&entry));
            }
            continue;
        }
        let entry = cost.entry(validation.preview.encoding.as_str()).or_default();
        entry.0 = entry.0.saturating_add(1);
        entry.1 = entry.1.saturating_add(u64::from(validation.preview.segments));
    }
    if invalid > LISTED {
        let _ = writeln!(err, "… and {} more invalid rows", invalid.saturating_sub(LISTED));
    }
    if suppressed > LISTED {
        let _ = writeln!(err, "… and {} more suppressed rows", suppressed.saturating_sub(LISTED));
    }
    let segments: u64 = cost.values().map(|(_, segments)| segments).sum();
    let valid = checked.saturating_sub(invalid).saturating_sub(suppressed);
    if args.json {
        let encodings: serde_json::Map<String, serde_json::Value> = cost
            .iter()
            .map(|(encoding, (messages, segments))| {
                ((*encoding).to_owned(), serde_json::json!({"messages": messages, "segments": segments}))
            })
            .collect();
        let body = serde_json::json!({
            "dry_run": true, "rows": checked, "valid": valid, "invalid": invalid, "suppressed": suppressed,
            "segments": segments, "encodings": encodings,
        });
        let _ = writeln!(out, "{body}");
    } else {
        let _ = writeln!(
            out,
            "dry run: {checked} rows, {valid} to send, {invalid} invalid, {suppressed} suppressed; nothing was sent"
        );
        for (encoding, (messages, segments)) in &cost {
            let _ = writeln!(out, "{encoding}: {messages} messages, {segments} segments");
        }
        let _ = writeln!(out, "total: {segments} segments (an estimate, not a price quote)");
    }
    Ok(if invalid > 0 { EXIT_FAILED } else { EXIT_OK })
}
