//! `sms-sdk idempotency list | show | resolve`: the operator's tools to settle unknown outcomes.

use std::io::Write;
use std::time::{Duration, SystemTime};

use clap::{Args, ValueEnum as _};
use sms_sdk::message::format_timestamp;
use sms_sdk::redact::redact_url;
use sms_sdk::store::{
    DEFAULT_STALE_RESERVATION, DEFAULT_TTL, Entry, Filter, Page, Record, Resolution, Resolved, State, Store, StoreError,
};

use crate::config;
use crate::embedded::EMBEDDED_ENDPOINT;
use crate::flags::{Provider, StateFilter};
use crate::shell;
use crate::store::StoreFlag;
use crate::{EXIT_CONFIGURATION, EXIT_OK, EXIT_USAGE, Env};

/// `idempotency list` flags.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    pub(crate) store: StoreFlag,
    /// A state, or `unresolved`: unknown and stale reserved keys, plus reservations still in
    /// progress, with their age.
    #[arg(long, value_enum)]
    pub(crate) state: Option<StateFilter>,
    /// The stale limit in seconds for `unresolved` (default 300); for other listings, only
    /// reservations older than this.
    #[arg(long, value_name = "SECS")]
    pub(crate) older_than: Option<u64>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `idempotency show` flags.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The key.
    pub(crate) key: String,
    /// The stale-reservation limit in seconds (default 300): when a reservation becomes
    /// resolvable.
    #[arg(long, value_name = "SECS")]
    pub(crate) older_than: Option<u64>,
    #[command(flatten)]
    pub(crate) store: StoreFlag,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `idempotency resolve` flags.
#[derive(Debug, Args)]
#[command(after_help = RESOLVE_AFTER_HELP)]
pub(crate) struct ResolveArgs {
    /// The key.
    pub(crate) key: String,
    /// The provider has the message: record it as accepted.
    #[arg(long, conflicts_with = "not_sent", requires_all = ["provider", "provider_id"])]
    pub(crate) sent: bool,
    /// The provider does not have it: remove the record so the next send goes out.
    #[arg(long)]
    pub(crate) not_sent: bool,
    /// The provider that has the message.
    #[arg(long, value_name = "NAME", value_enum)]
    pub(crate) provider: Option<Provider>,
    /// The provider's message id (Twilio: SM… or MM… and 32 hex digits; the others: a UUID).
    #[arg(long, value_name = "ID")]
    pub(crate) provider_id: Option<String>,
    /// The stale-reservation limit in seconds (default 300).
    #[arg(long, value_name = "SECS")]
    pub(crate) older_than: Option<u64>,
    #[command(flatten)]
    pub(crate) store: StoreFlag,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// What `idempotency resolve --help` says after the flags: there is no undo.
const RESOLVE_AFTER_HELP: &str = "There is no undo. Check with the provider first (`sms-sdk idempotency reconcile KEY` \
                                  looks the message up):\n  \
  --sent       later sends with the key replay the record (no message) for 24 h; if the provider never \
                                  had the message, the customer gets nothing.\n  \
  --not-sent   the record is removed and the next send with the key texts the customer; if the provider \
                                  did have the message, they get it twice.\n\
A key settled --sent is recorded for the endpoint it was sent to (the unknown record's, else the one \
                                  `send` would use now): it replays only for sends to that endpoint.";

/// The stale-reservation limit of `--older-than SECS` (default 300 s).
pub(crate) fn seconds(secs: Option<u64>) -> Duration {
    secs.map_or(DEFAULT_STALE_RESERVATION, Duration::from_secs)
}

/// How old a reservation is at `now`.
fn age(reserved_at: SystemTime, now: SystemTime) -> Duration {
    now.duration_since(reserved_at).unwrap_or_default()
}

/// What a reservation of `reserved_at` is at `now`: in progress (and when it becomes resolvable),
/// or stale.
fn reservation(reserved_at: SystemTime, stale_after: Duration, now: SystemTime) -> (String, bool) {
    let age = age(reserved_at, now);
    match stale_after.checked_sub(age).filter(|left| !left.is_zero()) {
        Some(left) => (
            format!(
                "in progress: reserved {}s ago; resolvable in {}s (stale limit {}s)",
                age.as_secs(),
                left.as_secs().max(1),
                stale_after.as_secs()
            ),
            false,
        ),
        None => (format!("stale: reserved {}s ago; outcome unknown, resolve it", age.as_secs()), true),
    }
}

/// One line about a record. A reservation says whether its send may still be running (in
/// progress) or is stale and can be resolved, and when; the recipient (masked) ends it when the
/// record keeps one.
fn describe(key: &str, record: &Record, stale_after: Duration, now: SystemTime) -> String {
    let detail = match record {
        Record::Reserved { reserved_at, .. } => reservation(*reserved_at, stale_after, now).0,
        Record::Accepted { result, .. } => format!("{} {}", result.provider, result.provider_id),
        Record::Rejected { error, .. } | Record::Unknown { error, .. } => error.code.clone(),
    };
    let to = record.to().map(|to| format!("\tto {}", to.masked())).unwrap_or_default();
    format!("{key}\t{}\t{detail}{to}", record.state().as_str())
}

/// A time as the command prints it: RFC 3339 in UTC, and how long ago.
fn when(at: SystemTime, now: SystemTime) -> String {
    let ago = age(at, now).as_secs();
    let ago = match ago {
        0..60 => format!("{ago}s ago"),
        60..3600 => format!("{} min ago", ago / 60),
        3600..86_400 => format!("{} h ago", ago / 3600),
        _ => format!("{} days ago", ago / 86_400),
    };
    format!("{} ({ago})", format_timestamp(time::OffsetDateTime::from(at)))
}

/// What `idempotency show` prints about a key: its state and what it means, the provider and
/// why, when the send started, the recipient (masked), and the next command to run.
fn details(key: &str, record: &Record, expires_at: Option<SystemTime>, args: &ShowArgs, now: SystemTime) -> String {
    let stale_after = seconds(args.older_than);
    let store = args.store.named.as_deref().map(|url| format!(" --store {}", shell::quote(&redact_url(url))));
    let store = store.unwrap_or_default();
    let quoted = shell::quote(key);
    let mut lines = vec![format!("key        {key}")];
    let mut line = |label: &str, text: String| lines.push(format!("{label:<10} {text}"));
    let reconcile = format!("sms-sdk idempotency reconcile {quoted}{store}");
    let (state, next) = match record {
        Record::Reserved { reserved_at, .. } => match reservation(*reserved_at, stale_after, now) {
            (state, false) => (
                format!("reserved, {state}: a send holds the key (or was killed before it finished)"),
                format!("wait: the send may still be running; once the reservation is stale: {reconcile}"),
            ),
            (state, true) => (
                format!("reserved, {state}: the message may have been sent"),
                format!("{reconcile} (looks the message up at the provider), then resolve it"),
            ),
        },
        Record::Accepted { result, endpoint, .. } => {
            line("provider", format!("{} (message {})", result.provider, result.provider_id));
            if let Some(endpoint) = endpoint {
                line("endpoint", format!("{endpoint} (replays only for sends there)"));
            }
            let until = expires_at.map(|at| format!(" until {}", format_timestamp(time::OffsetDateTime::from(at))));
            (
                "accepted: the provider has the message".to_owned(),
                format!("nothing: later sends with this key replay it{}", until.unwrap_or_default()),
            )
        }
        Record::Rejected { error, .. } => {
            provider_lines(error, &mut line);
            let refused = error.code == "policy_rejected" && error.category == Some(sms_sdk::Category::Compliance);
            let next = if refused {
                "nothing: while the recipient opted out, the next send with this key is refused again (sms-sdk \
                 suppression check)"
            } else {
                "nothing: the next send with this key sends again"
            };
            (format!("rejected ({}): nothing was sent", error.code), next.to_owned())
        }
        Record::Unknown { error, .. } => {
            provider_lines(error, &mut line);
            let last = error.attempts.last();
            if last.and_then(|a| a.endpoint.as_deref()) == Some(EMBEDDED_ENDPOINT) {
                (
                    format!("unknown ({}): the embedded emulator may have created it; it is never resent", error.code),
                    format!(
                        "nothing left this machine, and the embedded emulator keeps no messages to look up: `sms-sdk \
                         idempotency resolve {quoted} --not-sent{store}` lets the next send go out"
                    ),
                )
            } else {
                let provider = last.map_or("the provider", |a| a.provider.as_str());
                let next = if provider == "aws" {
                    // AWS has no message lookup: only its delivery events can say.
                    format!(
                        "aws has no message lookup: a verified delivery event carrying the key's reference settles it \
                         (sms-sdk serve with AWS_SNS_TOPIC_ARN); else check the configuration set's event destination, \
                         then `sms-sdk idempotency resolve {quoted} --sent --provider aws --provider-id ID{store}` if \
                         AWS has it, or `--not-sent` if it does not"
                    )
                } else {
                    format!(
                        "{reconcile} (looks it up at {provider}), then `sms-sdk idempotency resolve {quoted} --sent \
                         --provider {provider} --provider-id ID{store}` if {provider} has it, or `--not-sent` if it \
                         does not"
                    )
                };
                (format!("unknown ({}): the message may have been sent; it is never resent", error.code), next)
            }
        }
    };
    line(
        "recipient",
        record.to().map_or_else(
            || "not recorded (the record was written by an earlier release)".to_owned(),
            sms_sdk::PhoneNumber::masked,
        ),
    );
    if let Some(at) = record.reserved_at() {
        line("started", when(at, now));
    }
    lines.insert(1, format!("{:<10} {state}", "state"));
    lines.push(format!("{:<10} {next}", "next"));
    lines.join("\n")
}

/// The provider, its request's endpoint and why, of a failed send's error.
fn provider_lines(error: &sms_sdk::error::ErrorRecord, line: &mut impl FnMut(&str, String)) {
    if let Some(attempt) = error.attempts.last() {
        let endpoint = attempt.endpoint.as_deref().map(|e| format!(", last request to {e}")).unwrap_or_default();
        line("provider", format!("{} ({} request(s){endpoint})", attempt.provider, error.attempts.len()));
    }
    let reason = error
        .reason
        .and_then(|r| serde_json::to_value(r).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .or_else(|| error.category.map(|c| c.to_string()));
    if let Some(reason) = reason {
        line("reason", reason);
    }
    line("message", error.message.clone());
}

/// The JSON of a listed or shown key: the record, and for a reservation its age and whether it
/// is still in progress or resolvable.
fn entry_json(
    key: &str,
    record: &Record,
    expires_at_ms: Option<i64>,
    stale_after: Duration,
    now: SystemTime,
) -> serde_json::Value {
    let mut json = serde_json::json!({ "key": key, "record": record, "expires_at_ms": expires_at_ms });
    if let (Record::Reserved { reserved_at, .. }, Some(object)) = (record, json.as_object_mut()) {
        let age = age(*reserved_at, now);
        let left = stale_after.saturating_sub(age);
        object.insert("age_ms".into(), u64::try_from(age.as_millis()).unwrap_or(u64::MAX).into());
        object.insert("in_progress".into(), (!left.is_zero()).into());
        object.insert("resolvable_in_ms".into(), u64::try_from(left.as_millis()).unwrap_or(u64::MAX).into());
    }
    json
}

/// `idempotency list`.
pub(crate) async fn list(args: ListArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let filter = match args.state {
        None => Filter::All,
        Some(StateFilter::Unresolved) => Filter::Unresolved { stale_after: seconds(args.older_than) },
        Some(StateFilter::Reserved) => Filter::State(State::Reserved),
        Some(StateFilter::Accepted) => Filter::State(State::Accepted),
        Some(StateFilter::Rejected) => Filter::State(State::Rejected),
        Some(StateFilter::Unknown) => Filter::State(State::Unknown),
    };
    let store = match args.store.open(env, args.json, err).await {
        Ok(store) => store,
        Err(code) => return code,
    };
    let now = SystemTime::now();
    let stale_after = seconds(args.older_than);
    let cutoff = args.older_than.map(Duration::from_secs);
    let mut printer = Printer { json: args.json, first: true, stale_after, now, out };
    printer.start();
    let listed = match filter {
        // Reservations younger than the stale limit are listed too, as in progress: a send killed
        // mid-flight shows up at once, with its age.
        Filter::Unresolved { .. } => {
            let fresh = |e: &Entry| !filter.matches(&e.record, now);
            match each_entry(&*store, filter, now, |e| printer.entry(e)).await {
                Ok(()) => {
                    each_entry(&*store, Filter::State(State::Reserved), now, |e| {
                        if fresh(e) {
                            printer.entry(e);
                        }
                    })
                    .await
                }
                Err(error) => Err(error),
            }
        }
        // A filter added later lists as these do.
        Filter::All | Filter::State(_) | _ => {
            each_entry(&*store, filter, now, |e| {
                let old_enough = match (&e.record, cutoff) {
                    (Record::Reserved { reserved_at, .. }, Some(cutoff)) => age(*reserved_at, now) > cutoff,
                    _ => true,
                };
                if old_enough {
                    printer.entry(e);
                }
            })
            .await
        }
    };
    printer.finish();
    if printer.first && !args.json {
        let which = args.state.map_or_else(String::new, |state| {
            state.to_possible_value().map(|v| format!(" {}", v.get_name())).unwrap_or_default()
        });
        let _ = writeln!(out, "no{which} keys");
    }
    match listed {
        Ok(()) => EXIT_OK,
        Err(error) => {
            let _ = writeln!(err, "error: store: {error}");
            EXIT_CONFIGURATION
        }
    }
}

/// Calls `visit` with every entry matching `filter`, a page at a time: memory stays flat however
/// many keys the store holds.
async fn each_entry(
    store: &dyn Store,
    filter: Filter,
    now: SystemTime,
    mut visit: impl FnMut(&Entry),
) -> Result<(), StoreError> {
    let mut page = Page::default();
    loop {
        let listing = store.list(filter, now, page.clone()).await?;
        listing.entries.iter().for_each(&mut visit);
        match listing.next {
            Some(cursor) => page.cursor = Some(cursor),
            None => return Ok(()),
        }
    }
}

/// Prints listed entries as they come: one line each, or one JSON array written piece by piece.
struct Printer<'a> {
    json: bool,
    first: bool,
    stale_after: Duration,
    now: SystemTime,
    out: &'a mut dyn Write,
}

impl Printer<'_> {
    fn start(&mut self) {
        if self.json {
            let _ = write!(self.out, "[");
        }
    }

    fn entry(&mut self, entry: &Entry) {
        let Entry { key, record, expires_at, .. } = entry;
        if self.json {
            let separator = if self.first { "" } else { "," };
            let json = entry_json(key, record, expires_at.map(millis), self.stale_after, self.now);
            let _ = write!(self.out, "{separator}{json}");
        } else {
            let _ = writeln!(self.out, "{}", describe(key, record, self.stale_after, self.now));
        }
        self.first = false;
    }

    fn finish(&mut self) {
        if self.json {
            let _ = writeln!(self.out, "]");
        }
    }
}

/// Milliseconds since the epoch, as records serialize times.
fn millis(at: SystemTime) -> i64 {
    at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `idempotency show`.
pub(crate) async fn show(args: ShowArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let store = match args.store.open(env, args.json, err).await {
        Ok(store) => store,
        Err(code) => return code,
    };
    let (now, stale_after) = (SystemTime::now(), seconds(args.older_than));
    match store.get(&args.key).await {
        Ok(Some(record)) => {
            if args.json {
                let _ = writeln!(out, "{}", entry_json(&args.key, &record, None, stale_after, now));
            } else {
                let _ = writeln!(out, "{}", details(&args.key, &record, None, &args, now));
            }
            EXIT_OK
        }
        Ok(None) => {
            let _ = writeln!(err, "error: no record for key {:?} in the store", args.key);
            EXIT_USAGE
        }
        Err(error) => {
            let _ = writeln!(err, "error: store: {error}");
            EXIT_CONFIGURATION
        }
    }
}

/// `idempotency resolve`.
pub(crate) async fn resolve(args: ResolveArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let sent = match (args.sent, args.not_sent, args.provider, args.provider_id.as_deref()) {
        (true, false, Some(provider), Some(id)) => match provider.check_message_id(id) {
            Ok(()) => Some((provider, id.to_owned())),
            Err(shape) => {
                let _ = writeln!(err, "error: --provider-id {:?}: {shape}", id.chars().take(80).collect::<String>());
                return EXIT_USAGE;
            }
        },
        (false, true, _, _) => None,
        _ => {
            let _ = writeln!(err, "error: resolve needs --sent --provider NAME --provider-id ID, or --not-sent");
            return EXIT_USAGE;
        }
    };
    let store = match args.store.open(env, args.json, err).await {
        Ok(store) => store,
        Err(code) => return code,
    };
    let (now, stale_after) = (SystemTime::now(), seconds(args.older_than));
    let is_sent = sent.is_some();
    let resolution = match sent {
        None => Resolution::NotSent,
        Some((provider, provider_id)) => {
            let recorded = match store.get(&args.key).await {
                Ok(record) => record,
                Err(error) => {
                    let _ = writeln!(err, "error: store: {error}");
                    return EXIT_CONFIGURATION;
                }
            };
            if let Some(Record::Unknown { error, .. }) = &recorded {
                let tried: Vec<&str> = error.attempts.iter().map(|a| a.provider.as_str()).collect();
                if !tried.is_empty() && !tried.contains(&provider.as_str()) {
                    let _ = writeln!(
                        err,
                        "error: the send of {:?} went to {}, not {}: resolve it with the provider that has the \
                         message",
                        args.key,
                        tried.join(", "),
                        provider.as_str()
                    );
                    return EXIT_USAGE;
                }
            }
            let endpoint = settled_endpoint(recorded.as_ref(), provider, env);
            Resolution::Sent { provider: provider.as_str().to_owned(), provider_id, ttl: DEFAULT_TTL, endpoint }
        }
    };
    #[allow(clippy::wildcard_enum_match_arm)] // `Resolution` is non-exhaustive: others settle for no endpoint
    let endpoint = match &resolution {
        Resolution::Sent { endpoint, .. } => endpoint.clone(),
        _ => None,
    };
    match store.resolve(&args.key, resolution, stale_after, now).await {
        Ok(Resolved::Done) => {
            if args.json {
                let resolved = if is_sent { "sent" } else { "not_sent" };
                let body = serde_json::json!({"key": args.key, "resolved": resolved, "endpoint": endpoint});
                let _ = writeln!(out, "{body}");
            } else if let Some(endpoint) = endpoint {
                let _ = writeln!(out, "{}: accepted: later sends to {endpoint} replay it", args.key);
            } else if is_sent {
                let _ = writeln!(out, "{}: accepted: later sends replay it", args.key);
            } else {
                let _ = writeln!(out, "{}: removed: the next send goes out", args.key);
            }
            EXIT_OK
        }
        Ok(Resolved::NotFound) => {
            let _ = writeln!(err, "error: no record for key {:?}", args.key);
            EXIT_USAGE
        }
        Ok(Resolved::Refused(record)) => {
            let why = match &*record {
                Record::Reserved { .. } => describe(&args.key, &record, stale_after, now),
                Record::Accepted { .. } | Record::Rejected { .. } | Record::Unknown { .. } => {
                    format!("{:?} is {}", args.key, record.state().as_str())
                }
            };
            let _ = writeln!(err, "error: not unresolved (only unknown or stale reserved keys can be resolved): {why}");
            EXIT_USAGE
        }
        Err(error) => {
            let _ = writeln!(err, "error: store: {error}");
            EXIT_CONFIGURATION
        }
    }
}

/// The endpoint a key settled as sent by `provider` is recorded for: where the unknown record's
/// last request to `provider` went, else where a send through `provider` goes now
/// ([`endpoint`]).
pub(crate) fn settled_endpoint(record: Option<&Record>, provider: Provider, env: &Env) -> Option<String> {
    let attempted = match record {
        Some(Record::Unknown { error, .. }) => {
            error.attempts.iter().rev().find(|a| a.provider == provider.as_str()).and_then(|a| a.endpoint.clone())
        }
        _ => None,
    };
    attempted.or_else(|| endpoint(env, provider))
}

/// The endpoint a send through `provider` is recorded against now (`scheme://host[:port]`,
/// as its adapter says): the embedded emulator's when no provider is configured (as `send`
/// then does), else the origin of `SMS_SDK_<PROVIDER>_BASE_URL` or of the provider's own API.
fn endpoint(env: &Env, provider: Provider) -> Option<String> {
    if !config::any_mentioned(env) {
        return Some(EMBEDDED_ENDPOINT.to_owned());
    }
    let base = config::origin(env, provider);
    url::Url::parse(&base).ok().map(|url| url.origin().ascii_serialization()).filter(|origin| origin != "null")
}
