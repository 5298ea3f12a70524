//! `sms-sdk suppression list | add | remove | check | import | export`: the suppression list of
//! the store the command uses (the same URL as `idempotency`), numbers masked except in an
//! export, which is meant for importing elsewhere.

mod csv;

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::sync::Arc;
use std::time::SystemTime;

use clap::{Args, Subcommand};
use sms_sdk::message::format_timestamp;
use sms_sdk::store::suppression::{
    self, Action, Applied, Change, IMPORT_BATCH, Scope, SuppressionEntry, SuppressionPage, SuppressionStore,
};
use sms_sdk::{PhoneNumber, Sender};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::spinner::{CONNECTING, Spinners};
use crate::store::StoreFlag;
use crate::{EXIT_CONFIGURATION, EXIT_FAILED, EXIT_OK, EXIT_USAGE, Env};

/// The suppression subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum SuppressionCommand {
    /// List the suppressed recipients (numbers masked), a page at a time.
    List(ListArgs),
    /// Suppress a recipient now (an operator's opt-out).
    Add(ChangeArgs),
    /// Lift a recipient's opt-out now (an operator's opt-in).
    Remove(ChangeArgs),
    /// Check whether a send would be refused: exit 0 when the recipient may be texted, 1 when
    /// suppressed.
    Check(CheckArgs),
    /// Import opt-outs from CSV, streaming: a header with a `recipient` column (and optionally
    /// `scope`, `at` in RFC 3339, `reason`), or numbers in the first column. Importing again is
    /// safe.
    Import(ImportArgs),
    /// Export the suppressed entries as CSV (`recipient,scope,at,reason,event`), with full
    /// numbers, for importing elsewhere.
    Export(ExportArgs),
}

/// `suppression list` flags.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    store: StoreFlag,
    /// Print one JSON array.
    #[arg(long)]
    json: bool,
}

/// `suppression add` and `remove` flags.
#[derive(Debug, Args)]
pub(crate) struct ChangeArgs {
    /// The recipient, E.164 (+14155550123).
    recipient: String,
    /// Where: `account`, `sender:<number or id>` or `service:<id>`.
    #[arg(long, default_value = "account")]
    scope: String,
    /// Why (kept with the entry).
    #[arg(long, default_value = "operator")]
    reason: String,
    #[command(flatten)]
    store: StoreFlag,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `suppression check` flags.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The recipient, E.164.
    recipient: String,
    /// The sender the message would go from (its sender or service scope is checked too).
    #[arg(long)]
    from: Option<String>,
    /// The sender is a messaging service id.
    #[arg(long, value_name = "ID", conflicts_with = "from")]
    messaging_service: Option<String>,
    #[command(flatten)]
    store: StoreFlag,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `suppression import` flags.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The CSV file, or `-` for standard input.
    file: String,
    /// The scope of rows without one.
    #[arg(long, default_value = "account")]
    scope: String,
    /// The reason of rows without one.
    #[arg(long, default_value = "import")]
    reason: String,
    #[command(flatten)]
    store: StoreFlag,
}

/// `suppression export` flags.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "PATH")]
    output: Option<String>,
    #[command(flatten)]
    store: StoreFlag,
}

/// Runs a suppression subcommand.
pub(crate) async fn run(command: SuppressionCommand, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match command {
        SuppressionCommand::List(args) => list(args, env, out, err).await,
        SuppressionCommand::Add(args) => change(Action::OptOut, args, env, out, err).await,
        SuppressionCommand::Remove(args) => change(Action::OptIn, args, env, out, err).await,
        SuppressionCommand::Check(args) => check(args, env, out, err).await,
        SuppressionCommand::Import(args) => import(args, env, out, err).await,
        SuppressionCommand::Export(args) => export(args, env, out, err).await,
    };
    result.unwrap_or_else(|code| code)
}

/// A failure's exit code, after its message went to `err`.
type Exit = Result<u8, u8>;

fn usage(err: &mut dyn Write, message: &str) -> u8 {
    let _ = writeln!(err, "error: {message}");
    EXIT_USAGE
}

fn store_failed(err: &mut dyn Write, error: &dyn std::fmt::Display) -> u8 {
    let _ = writeln!(err, "error: store: {error}");
    EXIT_CONFIGURATION
}

/// Opens the suppression list of the named store, or of the one `send` would use.
async fn open(store: &StoreFlag, env: &Env, json: bool, err: &mut dyn Write) -> Result<Arc<dyn SuppressionStore>, u8> {
    let url = store.url(env, err)?;
    let opening = Spinners::new(env, json).during(CONNECTING, suppression::open(&url));
    opening.await.map_err(|error| store_failed(err, &error))
}

/// A recipient as typed: E.164, or bare digits (as some providers export them) with `+` added.
fn recipient(text: &str) -> Option<PhoneNumber> {
    let text = text.trim();
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    PhoneNumber::parse(&if digits { format!("+{text}") } else { text.to_owned() }).ok()
}

fn parse_recipient(text: &str, err: &mut dyn Write) -> Result<PhoneNumber, u8> {
    recipient(text).ok_or_else(|| usage(err, "the recipient is not an E.164 number (such as +14155550123)"))
}

fn parse_scope(text: &str, err: &mut dyn Write) -> Result<Scope, u8> {
    text.parse().map_err(|_| usage(err, "--scope must be account, sender:<number or id> or service:<id>"))
}

fn time_text(at: SystemTime) -> String {
    format_timestamp(OffsetDateTime::from(at))
}

/// An entry as JSON, its number masked.
fn entry_json(entry: &SuppressionEntry) -> serde_json::Value {
    serde_json::json!({
        "recipient": entry.recipient.masked(),
        "scope": entry.scope.to_string(),
        "at": time_text(entry.at),
        "reason": entry.reason,
        "event": entry.event,
    })
}

/// An entry as one line, its number masked.
fn entry_line(entry: &SuppressionEntry) -> String {
    format!("{}\t{}\t{}\t{}", entry.recipient, entry.scope, time_text(entry.at), entry.reason)
}

/// Calls `visit` with every suppressed entry, a page at a time: memory stays flat.
async fn each_entry(
    store: &dyn SuppressionStore,
    mut visit: impl FnMut(&SuppressionEntry) -> std::io::Result<()>,
    err: &mut dyn Write,
) -> Result<(), u8> {
    let mut page = SuppressionPage::default();
    loop {
        let listing = store.list(page.clone()).await.map_err(|error| store_failed(err, &error))?;
        for entry in &listing.entries {
            visit(entry).map_err(|error| {
                let _ = writeln!(err, "error: writing the output: {error}");
                EXIT_FAILED
            })?;
        }
        match listing.next {
            Some(cursor) => page = page.after(cursor),
            None => return Ok(()),
        }
    }
}

async fn list(args: ListArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    let store = open(&args.store, env, args.json, err).await?;
    let mut first = true;
    if args.json {
        let _ = write!(out, "[");
    }
    each_entry(
        &*store,
        |entry| {
            let separator = if std::mem::take(&mut first) { "" } else { "," };
            if args.json {
                write!(out, "{separator}{}", entry_json(entry))
            } else {
                writeln!(out, "{}", entry_line(entry))
            }
        },
        err,
    )
    .await?;
    if args.json {
        let _ = writeln!(out, "]");
    } else if first {
        let _ = writeln!(out, "no suppressed recipients");
    }
    Ok(EXIT_OK)
}

async fn change(action: Action, args: ChangeArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    let number = parse_recipient(&args.recipient, err)?;
    let scope = parse_scope(&args.scope, err)?;
    let store = open(&args.store, env, args.json, err).await?;
    // A removal says whether the recipient was on the list at all (it records the opt-in either
    // way, so a later STOP older than it stays stale).
    let was_listed = if action.suppresses() {
        None
    } else {
        let scopes = [scope.clone()];
        Some(store.check(&number, &scopes).await.map_err(|error| store_failed(err, &error))?.is_some())
    };
    let now = SystemTime::now();
    let change = Change::new(number.clone(), scope.clone(), action, now, &args.reason);
    let applied = store.apply(&[change], now).await.map_err(|error| store_failed(err, &error))?;
    let recorded = applied.first() == Some(&Applied::Recorded);
    let state = if action.suppresses() { "suppressed" } else { "not suppressed" };
    if args.json {
        let mut json = serde_json::json!({"recipient": number.masked(), "scope": scope.to_string(), "suppressed": action.suppresses(), "changed": recorded});
        if let (Some(listed), Some(object)) = (was_listed, json.as_object_mut()) {
            object.insert("was_suppressed".to_owned(), listed.into());
        }
        let _ = writeln!(out, "{json}");
    } else if recorded && was_listed == Some(false) {
        let _ = writeln!(out, "{number} was not suppressed ({scope}): nothing to remove; its opt-in is recorded");
    } else if recorded {
        let _ = writeln!(out, "{number} is {state} ({scope})");
    }
    if recorded {
        return Ok(EXIT_OK);
    }
    let _ = writeln!(err, "error: unchanged: {number} has a newer entry in {scope} than now (a clock ahead?)");
    Err(EXIT_FAILED)
}

async fn check(args: CheckArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    let number = parse_recipient(&args.recipient, err)?;
    let sender = match (&args.from, &args.messaging_service) {
        (Some(from), _) => Some(Sender::from(from.as_str())),
        (None, Some(service)) => Some(Sender::messaging_service(service.as_str())),
        (None, None) => None,
    };
    let mut scopes = vec![Scope::Account];
    if let Some(sender) = sender {
        let Some(scope) = Scope::of_sender(&sender) else { return Err(usage(err, "--from is not a valid sender")) };
        scopes.push(scope);
    }
    let store = open(&args.store, env, args.json, err).await?;
    let found = store.check(&number, &scopes).await.map_err(|error| store_failed(err, &error))?;
    if args.json {
        let json = serde_json::json!({"recipient": number.masked(), "suppressed": found.is_some(), "entry": found.as_ref().map(entry_json)});
        let _ = writeln!(out, "{json}");
    } else {
        match &found {
            Some(entry) => {
                let _ = writeln!(out, "suppressed: {}", entry_line(entry));
            }
            None => {
                let _ = writeln!(out, "not suppressed: {number}");
            }
        }
    }
    Ok(if found.is_some() { EXIT_FAILED } else { EXIT_OK })
}

/// Where each column of an import is.
#[derive(Debug, Default)]
struct Columns {
    recipient: usize,
    scope: Option<usize>,
    at: Option<usize>,
    reason: Option<usize>,
}

impl Columns {
    /// The columns of a header row, or `None` when the row is data (numbers in column 1).
    fn of_header(fields: &[String]) -> Option<Result<Self, String>> {
        let names: Vec<String> = fields.iter().map(|f| f.trim().to_ascii_lowercase()).collect();
        let find = |name: &str| names.iter().position(|n| n == name);
        if recipient(fields.first()?).is_some() {
            return None;
        }
        Some(match find("recipient") {
            Some(recipient) => Ok(Self { recipient, scope: find("scope"), at: find("at"), reason: find("reason") }),
            None => Err("the header has no `recipient` column".to_owned()),
        })
    }

    /// The change of one data row.
    fn change(&self, fields: &[String], scope: &Scope, reason: &str, now: SystemTime) -> Result<Change, String> {
        let field = |i: Option<usize>| i.and_then(|i| fields.get(i)).map(|f| f.trim()).filter(|f| !f.is_empty());
        let number =
            field(Some(self.recipient)).and_then(recipient).ok_or("the recipient is missing or not an E.164 number")?;
        let scope = match field(self.scope) {
            Some(text) => text.parse().map_err(|_| "the scope is not account, sender:<id> or service:<id>")?,
            None => scope.clone(),
        };
        let at = match field(self.at) {
            Some(text) => OffsetDateTime::parse(text, &Rfc3339).map_err(|_| "the time is not RFC 3339")?.into(),
            None => now,
        };
        Ok(Change::opt_out(number, scope, at, field(self.reason).unwrap_or(reason)))
    }
}

async fn import(args: ImportArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    let scope = parse_scope(&args.scope, err)?;
    let input: Box<dyn BufRead> = if args.file == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        match File::open(&args.file) {
            Ok(file) => Box::new(BufReader::new(file)),
            Err(error) => return Err(usage(err, &format!("cannot read {}: {error}", args.file))),
        }
    };
    let store = open(&args.store, env, false, err).await?;
    let mut reader = csv::Reader::new(input);
    let mut batch = Vec::with_capacity(IMPORT_BATCH);
    let (mut rows, mut recorded, mut columns) = (0_u64, 0_u64, None);
    let now = SystemTime::now();
    loop {
        let record = match reader.next_record() {
            Ok(record) => record,
            Err(message) => return Err(import_failed(err, reader.line(), &message, rows)),
        };
        if let Some(fields) = &record {
            if columns.is_none() {
                match Columns::of_header(fields) {
                    Some(Ok(header)) => {
                        columns = Some(header);
                        continue;
                    }
                    Some(Err(message)) => return Err(import_failed(err, reader.line(), &message, rows)),
                    None => {}
                }
            }
            let columns = columns.get_or_insert_with(Columns::default);
            match columns.change(fields, &scope, &args.reason, now) {
                Ok(change) => batch.push(change),
                Err(message) => {
                    rows += flush(&*store, &mut batch, &mut recorded, now, err).await?;
                    return Err(import_failed(err, reader.line(), &message, rows));
                }
            }
        }
        if batch.len() >= IMPORT_BATCH || (record.is_none() && !batch.is_empty()) {
            rows += flush(&*store, &mut batch, &mut recorded, now, err).await?;
        }
        if record.is_none() {
            break;
        }
    }
    let _ = writeln!(out, "imported {rows} rows: {recorded} recorded, {} unchanged", rows - recorded);
    Ok(EXIT_OK)
}

/// Applies and empties `batch`; returns its length.
async fn flush(
    store: &dyn SuppressionStore,
    batch: &mut Vec<Change>,
    recorded: &mut u64,
    now: SystemTime,
    err: &mut dyn Write,
) -> Result<u64, u8> {
    let applied = store.apply(batch, now).await.map_err(|error| store_failed(err, &error))?;
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    *recorded += count(applied.iter().filter(|a| **a == Applied::Recorded).count());
    let rows = count(batch.len());
    batch.clear();
    Ok(rows)
}

fn import_failed(err: &mut dyn Write, line: usize, message: &str, rows: u64) -> u8 {
    let _ = writeln!(
        err,
        "error: line {line}: {message}; the {rows} rows before it were imported (importing again is safe)"
    );
    EXIT_USAGE
}

async fn export(args: ExportArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    let store = open(&args.store, env, false, err).await?;
    let mut file = match &args.output {
        Some(path) => match File::create(path) {
            Ok(file) => Some(BufWriter::new(file)),
            Err(error) => return Err(usage(err, &format!("cannot write {path}: {error}"))),
        },
        None => None,
    };
    let mut stdout = BufWriter::new(out);
    let target: &mut dyn Write = match &mut file {
        Some(file) => file,
        None => &mut stdout,
    };
    let written = csv::write_record(target, &["recipient", "scope", "at", "reason", "event"]);
    if let Err(error) = written {
        let _ = writeln!(err, "error: writing the output: {error}");
        return Err(EXIT_FAILED);
    }
    each_entry(
        &*store,
        |entry| {
            let (scope, at) = (entry.scope.to_string(), time_text(entry.at));
            let event = entry.event.as_deref().unwrap_or_default();
            csv::write_record(target, &[entry.recipient.as_str(), &scope, &at, &entry.reason, event])
        },
        err,
    )
    .await?;
    if let Err(error) = target.flush() {
        let _ = writeln!(err, "error: writing the output: {error}");
        return Err(EXIT_FAILED);
    }
    Ok(EXIT_OK)
}
