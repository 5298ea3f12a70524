//! What a batch writes as it goes: the report file (one line per row, CSV or JSON lines) and the
//! progress (a bar on a terminal, plain periodic lines otherwise).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use sms_sdk::batch::{BatchResult, RowOutcome, Summary};
use sms_sdk::redact::mask_phone_number;

use super::Tally;

/// The format of the report file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Csv,
    JsonLines,
}

impl Format {
    /// The format `--report-format` names, else the one the file's extension says (`.csv`:
    /// CSV; anything else: JSON lines).
    pub(crate) fn of(named: Option<&str>, path: &Path) -> Result<Self, String> {
        match named {
            Some("csv") => Ok(Self::Csv),
            Some("jsonl" | "json") => Ok(Self::JsonLines),
            Some(other) => Err(format!("unknown --report-format `{other}` (csv, jsonl)")),
            None if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")) => Ok(Self::Csv),
            None => Ok(Self::JsonLines),
        }
    }
}

/// One line of the report. The recipient is masked; the body is never written.
#[derive(Debug, Serialize)]
pub(crate) struct Line<'a> {
    pub(crate) row: u64,
    pub(crate) key: &'a str,
    pub(crate) to: String,
    pub(crate) outcome: &'static str,
    pub(crate) provider: &'a str,
    pub(crate) provider_id: &'a str,
    pub(crate) error_code: &'a str,
    pub(crate) reason: String,
}

/// Whether `result` is a refusal for a recipient who opted out (the command's one policy is
/// the suppression list).
pub(crate) fn is_suppressed<T>(result: &BatchResult<T>) -> bool {
    result.result.as_ref().err().is_some_and(|e| {
        e.kind() == sms_sdk::ErrorKind::PolicyRejected && e.category() == Some(sms_sdk::Category::Compliance)
    })
}

impl<'a> Line<'a> {
    /// The line of one result; `to` is the row's recipient as written. A row refused because its
    /// recipient opted out is `suppressed`.
    pub(crate) fn of(result: &'a BatchResult<(u64, String)>) -> Self {
        let (row, to) = &result.tag;
        let (provider, provider_id, error_code, reason) = match &result.result {
            Ok(receipt) => (receipt.provider.as_str(), receipt.provider_id.as_str(), "", String::new()),
            Err(error) => {
                // An unknown outcome's reason, else a rejection's category.
                let record = error.to_record();
                let word = |value: Option<serde_json::Value>| value.and_then(|v| v.as_str().map(str::to_owned));
                let reason = word(record.reason.and_then(|r| serde_json::to_value(r).ok()))
                    .or_else(|| word(error.category().and_then(|c| serde_json::to_value(c).ok())))
                    .unwrap_or_default();
                (error.provider_name().unwrap_or_default(), "", error.code(), reason)
            }
        };
        Line {
            row: *row,
            key: result.key.as_deref().unwrap_or_default(),
            to: mask_phone_number(to),
            outcome: if is_suppressed(result) { "suppressed" } else { result.outcome().as_str() },
            provider,
            provider_id,
            error_code,
            reason,
        }
    }
}

/// The report file, written as results come in.
pub(crate) enum Report {
    Csv(Box<csv::Writer<BufWriter<File>>>),
    JsonLines(BufWriter<File>),
}

impl Report {
    /// Creates (or truncates) the report at `path`.
    pub(crate) fn create(path: &Path, format: Format) -> Result<Self, String> {
        let file = File::create(path).map_err(|e| format!("cannot create the report {}: {e}", path.display()))?;
        let file = BufWriter::new(file);
        Ok(match format {
            Format::Csv => Self::Csv(Box::new(csv::Writer::from_writer(file))),
            Format::JsonLines => Self::JsonLines(file),
        })
    }

    /// Writes one line.
    pub(crate) fn write(&mut self, line: &Line<'_>) -> std::io::Result<()> {
        match self {
            Self::Csv(writer) => writer.serialize(line).map_err(std::io::Error::other),
            Self::JsonLines(writer) => {
                serde_json::to_writer(&mut *writer, line)?;
                writer.write_all(b"\n")
            }
        }
    }

    /// Flushes what is written to the file.
    pub(crate) fn finish(&mut self) -> std::io::Result<()> {
        match self {
            Self::Csv(writer) => writer.flush(),
            Self::JsonLines(writer) => writer.flush(),
        }
    }
}

/// How often the plain progress lines come.
const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// The progress of a batch on stderr.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    started: Instant,
    last_line: Instant,
}

impl Progress {
    /// A bar when `bar` (standard error is a terminal and the output is not JSON), else plain
    /// lines (to the command's `err`).
    pub(crate) fn new(total: u64, bar: bool) -> Self {
        let bar = bar.then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{bar:40} {pos}/{len} rows  {per_sec}  ETA {eta}  accepted {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar
        });
        let now = Instant::now();
        Self { bar, total, started: now, last_line: now }
    }

    /// One more row done.
    pub(crate) fn step(&mut self, tally: &Tally, err: &mut dyn Write) {
        let summary = &tally.summary;
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(format!(
                "{}, replayed {}, rejected {}, suppressed {}, unknown {}",
                summary.accepted, summary.replayed, summary.rejected, tally.suppressed, summary.unknown
            ));
            return;
        }
        if self.last_line.elapsed() >= PLAIN_EVERY {
            self.last_line = Instant::now();
            let _ = writeln!(err, "{}", self.line(summary));
        }
    }

    /// Runs `print` with the bar out of its way (a line printed while it is drawn).
    pub(crate) fn suspend(&self, print: impl FnOnce()) {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// The plain progress line.
    fn line(&self, summary: &Summary) -> String {
        let done = summary.total();
        let seconds = self.started.elapsed().as_secs_f64();
        let rate = if seconds > 0.0 { lossy(done) / seconds } else { 0.0 };
        let left = self.total.saturating_sub(done);
        let eta = if rate > 0.0 { format!("{:.0} s", lossy(left) / rate) } else { "unknown".to_owned() };
        format!(
            "batch: {done}/{} rows ({} accepted, {} replayed, {} rejected, {} unknown), {rate:.1} rows/s, ETA {eta}",
            self.total, summary.accepted, summary.replayed, summary.rejected, summary.unknown
        )
    }

    /// Ends the bar.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// The time since the batch started.
    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// A count as a float, for a rate (exact below 2^53).
#[allow(clippy::cast_precision_loss)] // counts of rows stay far below 2^53
pub(crate) fn lossy(count: u64) -> f64 {
    count as f64
}

/// What a row's outcome asks of the operator, for the lines about unknown rows.
pub(crate) fn advice(outcome: RowOutcome) -> &'static str {
    match outcome {
        RowOutcome::Unknown => {
            "may have been sent: not resent; reconcile (sms-sdk idempotency list --state unresolved)"
        }
        RowOutcome::Rejected => "not sent",
        RowOutcome::Accepted | RowOutcome::Replayed => "sent",
        _ => "",
    }
}
