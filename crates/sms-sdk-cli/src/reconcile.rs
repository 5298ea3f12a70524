//! `sms-sdk idempotency reconcile`: looks the unresolved keys' messages up at their providers and
//! says how to settle each one; with `--apply`, settles the keys whose lookup found exactly one
//! matching message. It never sends anything.
//!
//! A message matches a key when it went to the recipient given with `--to`, was created inside
//! the `--since` window, and its recipient, sender and text give the key's fingerprint (the
//! fingerprint of a message sent with no callback URL, media, schedule or provider options; a
//! key sent with any of those can be looked up, but only resolved by hand). Exit codes: 0 when
//! no unresolved key is left, 3 when some are, 2 for a usage error, 7 for a store or
//! configuration error.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use clap::Args;
use serde_json::{Value, json};
use sms_sdk::adapter::{Adapter as _, AnyAdapter};
use sms_sdk::error::AttemptOutcome;
use sms_sdk::lookup::{FoundMessage, Lookup, LookupOutcome};
use sms_sdk::redact::{mask_phone_number, redact_url};
use sms_sdk::store::{DEFAULT_TTL, Entry, Filter, Fingerprint, Page, Record, Resolution, Resolved, Store};
use sms_sdk::{Message, PhoneNumber, Sender};
use time::OffsetDateTime;

use crate::flags::Provider;
use crate::shell;
use crate::spinner::Spinners;
use crate::store::StoreFlag;
use crate::{EXIT_CONFIGURATION, EXIT_OK, EXIT_UNKNOWN, EXIT_USAGE, Env};

/// `idempotency reconcile` flags.
#[derive(Debug, Args)]
pub(crate) struct ReconcileArgs {
    /// Only this key (default: every unresolved key, at most 1,000 per run).
    pub(crate) key: Option<String>,
    /// The recipient the messages were sent to (E.164): lists the provider's messages to it.
    #[arg(long, value_name = "E164")]
    pub(crate) to: Option<String>,
    /// How far back to look: 30m, 24h, 7d or seconds (default 24h, at most 400d).
    #[arg(long, value_name = "DURATION", value_parser = crate::flags::since)]
    pub(crate) since: Option<Duration>,
    /// Settle the keys whose lookup found exactly one matching message (same recipient, text and
    /// time window) as sent; report the rest.
    #[arg(long)]
    pub(crate) apply: bool,
    /// The stale-reservation limit in seconds (default 300).
    #[arg(long, value_name = "SECS")]
    pub(crate) older_than: Option<u64>,
    #[command(flatten)]
    pub(crate) store: StoreFlag,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The default lookup window: 24 hours.
const DEFAULT_SINCE: Duration = Duration::from_hours(24);
/// How long one lookup may take.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);
/// The most unresolved keys one run looks up (a run looks up at most this many; run it again
/// for the rest).
const MAX_KEYS: usize = 1_000;
/// How far after now a provider's creation time may be (clock skew).
const SKEW: Duration = Duration::from_mins(5);

/// What the command decided about one key.
struct Finding {
    key: String,
    state: &'static str,
    provider: Option<&'static str>,
    lookup: &'static str,
    reason: Option<String>,
    messages: Vec<(FoundMessage, bool)>,
    /// The provider and id of the one message that matched, when exactly one did.
    matched: Option<(&'static str, String)>,
    resolve: Option<String>,
    /// The command that settles the key as never sent, when the lookup found no matching
    /// message: a suggestion to check first, never applied.
    not_sent: Option<String>,
    resolved: bool,
}

/// The command line that settles `key` as sent with `found`.
fn resolve_command(key: &str, provider: &str, provider_id: &str, store: Option<&str>) -> String {
    let mut command = format!(
        "sms-sdk idempotency resolve {} --sent --provider {provider} --provider-id {}",
        shell::quote(key),
        shell::quote(provider_id)
    );
    if let Some(store) = store {
        command.push_str(" --store ");
        command.push_str(&shell::quote(&redact_url(store)));
    }
    command
}

/// The provider ids the record's attempts were given (an attempt that was accepted before the
/// send failed).
fn known_ids(record: &Record) -> Vec<(String, String)> {
    let Record::Unknown { error, .. } = record else { return Vec::new() };
    error
        .attempts
        .iter()
        .filter_map(|attempt| match &attempt.outcome {
            AttemptOutcome::Accepted { provider_id, .. } => Some((attempt.provider.clone(), provider_id.clone())),
            AttemptOutcome::Rejected { .. } | AttemptOutcome::Unknown { .. } => None,
        })
        .collect()
}

/// The providers the record's send tried, in order.
fn tried(record: &Record) -> Vec<String> {
    let Record::Unknown { error, .. } = record else { return Vec::new() };
    let mut providers: Vec<String> = Vec::new();
    for attempt in &error.attempts {
        if !providers.contains(&attempt.provider) {
            providers.push(attempt.provider.clone());
        }
    }
    providers
}

/// A configured provider's lookup, by name.
type NamedLookup<'a> = (&'static str, &'a dyn Lookup);

/// The fewest milliseconds between two lookups at one provider: at most 5 a second, well inside
/// every provider's documented API rate limits, so a run over hundreds of keys after an outage
/// is never throttled (500 keys take under two minutes).
const LOOKUP_INTERVAL: Duration = Duration::from_millis(200);

/// Each provider's answer for each recipient a run lists (the window is the same for every key,
/// so a provider is listed once per recipient, the first time a key needs it), and when each
/// provider was last asked, to pace the lookups.
#[derive(Default)]
struct Listings {
    answers: HashMap<(&'static str, String), LookupOutcome>,
    asked: HashMap<&'static str, tokio::time::Instant>,
}

impl Listings {
    fn new() -> Self {
        Self::default()
    }

    /// Waits until `provider` may be asked again ([`LOOKUP_INTERVAL`] after the last time).
    async fn pace(&mut self, provider: &'static str) {
        if let Some(last) = self.asked.get(provider) {
            tokio::time::sleep_until(*last + LOOKUP_INTERVAL).await;
        }
        self.asked.insert(provider, tokio::time::Instant::now());
    }
}

/// Whether `found` is the message of a key with `fingerprint`, sent to `to` inside the window.
fn matches(
    found: &FoundMessage,
    fingerprint: &Fingerprint,
    to: Option<&str>,
    window: (OffsetDateTime, OffsetDateTime),
) -> bool {
    let Some(to) = to.filter(|to| found.to.as_deref() == Some(*to)) else { return false };
    if found.created_at.is_some_and(|at| at < window.0 || at > window.1) {
        return false;
    }
    let Some(body) = &found.body else { return false };
    let candidates = [None, found.from.as_deref().map(Sender::from)];
    candidates.into_iter().any(|from| {
        let mut message = Message::new(to, body.clone());
        message.from = from;
        Fingerprint::of(&message, &[]) == *fingerprint
    })
}

/// The adapters of the configured providers, by name: their lookups find the messages.
fn adapters(env: &Env) -> Result<Vec<(&'static str, AnyAdapter)>, String> {
    let mut found = Vec::new();
    for provider in Provider::ALL {
        if !crate::config::is_mentioned(env, provider) {
            continue;
        }
        let adapter = crate::config::checked(env, provider).map_err(|unbuilt| unbuilt.message)?;
        found.push((provider.as_str(), adapter));
    }
    Ok(found)
}

/// Why an AWS key is not looked up: the service has no message lookup.
const AWS_NO_LOOKUP: &str = "aws has no message lookup: its keys settle only from a verified delivery event carrying \
                             the reference (sms-sdk serve with AWS_SNS_TOPIC_ARN), or by idempotency resolve";

/// Looks one key up and decides.
async fn examine(
    (key, record): &(String, Record),
    args: &ReconcileArgs,
    lookups: &[NamedLookup<'_>],
    window: (OffsetDateTime, OffsetDateTime),
    listings: &mut Listings,
) -> Finding {
    let mut finding = Finding {
        key: key.clone(),
        state: record.state().as_str(),
        provider: None,
        lookup: "skipped",
        reason: None,
        messages: Vec::new(),
        matched: None,
        resolve: None,
        not_sent: None,
        resolved: false,
    };
    // The recipient to list by: the one the record keeps, or `--to` for a record without one. A
    // `--to` that names another recipient than the record's is not this key's message.
    let to = match (args.to.as_deref(), record.to()) {
        (Some(given), Some(kept)) if given != kept.as_str() => {
            finding.reason = Some(format!(
                "its recipient is {}, not the --to {}: not looked up",
                kept.masked(),
                mask_phone_number(given)
            ));
            return finding;
        }
        (Some(given), _) => Some(given),
        (None, kept) => kept.map(PhoneNumber::as_str),
    };
    let tried = tried(record);
    let candidates: Vec<&NamedLookup<'_>> =
        lookups.iter().filter(|(name, _)| tried.is_empty() || tried.iter().any(|t| t == name)).collect();
    if candidates.is_empty() {
        let at_aws = tried.iter().any(|t| t == "aws");
        if at_aws {
            finding.provider = Some("aws");
        }
        finding.reason =
            Some(if at_aws { AWS_NO_LOOKUP.into() } else { "no configured provider to look it up with".into() });
        return finding;
    }
    let ids = known_ids(record);
    let mut reasons = Vec::new();
    for (name, lookup) in candidates {
        let known = ids.iter().find(|(p, _)| p == name).map(|(_, id)| id);
        let outcome = if let Some(id) = known {
            listings.pace(name).await;
            lookup.fetch(id, LOOKUP_TIMEOUT).await
        } else if let Some(to) = to {
            let listing = (*name, to.to_owned());
            if let Some(listed) = listings.answers.get(&listing) {
                listed.clone()
            } else {
                listings.pace(name).await;
                let listed = lookup.list_to(to, window.0, LOOKUP_TIMEOUT).await;
                listings.answers.insert(listing, listed.clone());
                listed
            }
        } else {
            reasons.push(format!(
                "{name}: no provider id is known, and the record keeps no recipient (an earlier release wrote \
                 it): give --to to list by recipient"
            ));
            continue;
        };
        finding.provider = Some(name);
        match outcome {
            LookupOutcome::Found(messages) if messages.is_empty() => finding.lookup = "not_found",
            LookupOutcome::Found(messages) => {
                finding.lookup = "found";
                let fingerprint = record.fingerprint();
                finding.messages.extend(messages.into_iter().map(|m| {
                    let ok = matches(&m, fingerprint, to, window);
                    (m, ok)
                }));
                break;
            }
            LookupOutcome::NotFound => finding.lookup = "not_found",
            LookupOutcome::Unsupported => reasons.push(format!("{name}: its API has no such lookup")),
            LookupOutcome::Failed { reason } => {
                finding.lookup = "failed";
                reasons.push(format!("{name}: {reason}"));
            }
            // A lookup outcome added later tells nothing more.
            _ => reasons.push(format!("{name}: no answer")),
        }
    }
    if !reasons.is_empty() {
        finding.reason = Some(reasons.join("; "));
    }
    hints(&mut finding, record, args.store.named.as_deref(), window);
    finding
}

/// What `finding` tells the operator to run: `resolve --sent` for the one matching message (or
/// the one listed), `--not-sent` when the lookup covered the send and matched nothing, and why
/// not otherwise.
fn hints(finding: &mut Finding, record: &Record, store: Option<&str>, window: (OffsetDateTime, OffsetDateTime)) {
    let key = finding.key.clone();
    let key = key.as_str();
    let matching: Vec<&FoundMessage> = finding.messages.iter().filter(|(_, ok)| *ok).map(|(m, _)| m).collect();
    if let [one] = matching.as_slice() {
        finding.matched = Some((one.provider, one.provider_id.clone()));
    }
    let only = match (matching.as_slice(), finding.messages.as_slice()) {
        ([one], _) => Some(*one),
        ([], [(one, _)]) => Some(one),
        _ => None,
    };
    finding.resolve = only.map(|one| resolve_command(key, one.provider, &one.provider_id, store));
    // Not sent is suggested only when the lookup covered the time the send started.
    let covered = record.reserved_at().is_none_or(|at| OffsetDateTime::from(at) >= window.0);
    if !covered {
        let note = "the send started before the lookup's window: widen --since";
        finding.reason = Some(finding.reason.take().map_or_else(|| note.to_owned(), |r| format!("{r}; {note}")));
    }
    // A listed message without its text (Bandwidth's and Plivo's lists carry none) may be the
    // key's: nothing proves the message was not sent then.
    let textless = finding.messages.iter().filter(|(m, _)| m.body.is_none()).count();
    if textless > 0 {
        let provider = finding.provider.unwrap_or("the provider");
        let note = format!(
            "{textless} listed without their text ({provider}'s list does not carry it), so none can be ruled \
             out: check them against the send by hand (resolve --not-sent only once none is it)"
        );
        finding.reason = Some(finding.reason.take().map_or_else(|| note.clone(), |r| format!("{r}; {note}")));
    }
    if covered
        && textless == 0
        && matching.is_empty()
        && matches!(finding.lookup, "found" | "not_found")
        && finding.resolve.is_none()
    {
        let mut command = format!("sms-sdk idempotency resolve {} --not-sent", shell::quote(key));
        if let Some(store) = store {
            command.push_str(" --store ");
            command.push_str(&shell::quote(&redact_url(store)));
        }
        finding.not_sent = Some(command);
    }
    if matching.len() != 1 && finding.lookup == "found" && finding.reason.is_none() {
        finding.reason = Some(format!(
            "{} listed, {} matching (recipient, text and time): resolve by hand",
            finding.messages.len(),
            matching.len()
        ));
    }
}

/// Settles `finding`'s key when exactly one message matched.
async fn apply(
    store: &dyn Store,
    finding: &mut Finding,
    record: &Record,
    env: &Env,
    stale_after: Duration,
) -> Result<(), sms_sdk::store::StoreError> {
    let Some((provider, provider_id)) = finding.matched.clone() else { return Ok(()) };
    let endpoint =
        Provider::named(provider).and_then(|known| crate::idempotency::settled_endpoint(Some(record), known, env));
    let resolution = Resolution::Sent { provider: provider.to_owned(), provider_id, ttl: DEFAULT_TTL, endpoint };
    match store.resolve(&finding.key, resolution, stale_after, SystemTime::now()).await? {
        Resolved::Done => finding.resolved = true,
        Resolved::NotFound | Resolved::Refused(_) => {
            finding.reason = Some("the record changed meanwhile; nothing was done".into());
        }
    }
    Ok(())
}

fn print_text(finding: &Finding, out: &mut dyn Write) {
    let provider = finding.provider.unwrap_or("-");
    let _ = writeln!(out, "{}\t{}\t{provider}\tlookup: {}", finding.key, finding.state, finding.lookup);
    for (message, ok) in &finding.messages {
        let to = message.to.as_deref().map_or_else(|| "?".to_owned(), mask_phone_number);
        let at = message.created_at.map_or_else(|| "?".to_owned(), sms_sdk::message::format_timestamp);
        let tag = if *ok { "match" } else { "no match" };
        let _ = writeln!(
            out,
            "  {} {}\tto {to}\t{}\tcreated {at}\t{tag}",
            message.provider, message.provider_id, message.status
        );
    }
    if let Some(reason) = &finding.reason {
        let _ = writeln!(out, "  note: {reason}");
    }
    if finding.resolved {
        let _ = writeln!(out, "  resolved: accepted; later sends replay it");
    } else if let Some(command) = &finding.resolve {
        let _ = writeln!(out, "  to settle it: {command}");
    } else if let Some(command) = &finding.not_sent {
        let _ = writeln!(
            out,
            "  no message matched: if the provider truly has none (check its console for this recipient and time \
             first), `{command}` lets the next send go out; if it does have it, the customer gets it twice"
        );
    }
}

fn finding_json(finding: &Finding) -> Value {
    let messages: Vec<Value> = finding
        .messages
        .iter()
        .map(|(m, ok)| {
            json!({
                "provider": m.provider,
                "provider_id": m.provider_id,
                "to": m.to.as_deref().map(mask_phone_number),
                "status": m.status,
                "created_at": m.created_at.map(OffsetDateTime::unix_timestamp),
                "matches": ok,
            })
        })
        .collect();
    json!({
        "key": finding.key,
        "state": finding.state,
        "provider": finding.provider,
        "lookup": finding.lookup,
        "reason": finding.reason,
        "messages": messages,
        "resolve_command": finding.resolve,
        "not_sent_command": finding.not_sent,
        "resolved": finding.resolved,
    })
}

/// The unresolved keys to examine, with their records: `KEY`'s, or the first [`MAX_KEYS`] of
/// the store. `Ok(Err(..))` is a usage error (no such key, or not unresolved).
async fn unresolved(
    store: &dyn Store,
    key: Option<&str>,
    stale_after: Duration,
) -> Result<Result<Vec<(String, Record)>, String>, sms_sdk::store::StoreError> {
    let now = SystemTime::now();
    let filter = Filter::Unresolved { stale_after };
    if let Some(key) = key {
        return Ok(match store.get(key).await? {
            None => Err(format!("no record for key {key:?}")),
            Some(record) if !filter.matches(&record, now) => {
                Err(format!("{key:?} is {}, not unresolved", record.state().as_str()))
            }
            Some(record) => Ok(vec![(key.to_owned(), record)]),
        });
    }
    let mut found = Vec::new();
    let mut page = Page::default();
    loop {
        let listing = store.list(filter, now, page.clone()).await?;
        found.extend(listing.entries.into_iter().map(|Entry { key, record, .. }| (key, record)));
        match listing.next {
            Some(cursor) if found.len() < MAX_KEYS => page.cursor = Some(cursor),
            _ => break,
        }
    }
    found.truncate(MAX_KEYS);
    Ok(Ok(found))
}

/// `idempotency reconcile`.
pub(crate) async fn run(args: ReconcileArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let since = args.since.unwrap_or(DEFAULT_SINCE);
    if let Some(to) = &args.to
        && PhoneNumber::parse(to).is_err()
    {
        let _ = writeln!(err, "error: --to must be an E.164 number (+14155550123)");
        return EXIT_USAGE;
    }
    let adapters = match adapters(env) {
        Ok(adapters) => adapters,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return EXIT_CONFIGURATION;
        }
    };
    let lookups: Vec<NamedLookup<'_>> =
        adapters.iter().filter_map(|(name, adapter)| adapter.lookup().map(|lookup| (*name, lookup))).collect();
    let store: Arc<dyn Store> = match args.store.open(env, args.json, err).await {
        Ok(store) => store,
        Err(code) => return code,
    };
    let stale_after = crate::idempotency::seconds(args.older_than);
    let entries = match unresolved(&*store, args.key.as_deref(), stale_after).await {
        Ok(Ok(entries)) => entries,
        Ok(Err(message)) => {
            let _ = writeln!(err, "error: {message}");
            return EXIT_USAGE;
        }
        Err(error) => {
            let _ = writeln!(err, "error: store: {error}");
            return EXIT_CONFIGURATION;
        }
    };
    if lookups.is_empty() && !entries.is_empty() {
        let names: Vec<&str> = adapters.iter().map(|(name, _)| *name).collect();
        if names.is_empty() {
            let _ = writeln!(err, "note: no provider is configured, so nothing can be looked up (set its variables)");
        } else {
            let _ = writeln!(err, "note: {} has no message lookup, so nothing can be looked up", names.join(", "));
        }
    }
    let now = OffsetDateTime::now_utc();
    let since_time = time::Duration::try_from(since).map_or(OffsetDateTime::UNIX_EPOCH, |d| now.saturating_sub(d));
    let window = (since_time, now.saturating_add(time::Duration::try_from(SKEW).unwrap_or_default()));
    let mut findings = Vec::with_capacity(entries.len());
    let spinners = Spinners::new(env, args.json);
    let mut listings = Listings::new();
    for (done, entry) in entries.iter().enumerate() {
        let looking = format!("looking up key {} of {} at the provider", done.saturating_add(1), entries.len());
        let mut finding = spinners.during(looking, examine(entry, &args, &lookups, window, &mut listings)).await;
        if args.apply
            && let Err(error) = apply(&*store, &mut finding, &entry.1, env, stale_after).await
        {
            let _ = writeln!(err, "error: store: {error}");
            return EXIT_CONFIGURATION;
        }
        if !args.json {
            print_text(&finding, out);
        }
        findings.push(finding);
    }
    let left = findings.iter().filter(|f| !f.resolved).count();
    if args.json {
        let keys: Vec<Value> = findings.iter().map(finding_json).collect();
        let resolved = findings.len() - left;
        let _ = writeln!(out, "{}", json!({"keys": keys, "resolved": resolved, "unresolved": left}));
    } else if findings.is_empty() {
        let _ = writeln!(out, "no unresolved keys");
    }
    if left == 0 { EXIT_OK } else { EXIT_UNKNOWN }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use sms_sdk::store::ReservationId;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn lookups_at_one_provider_are_paced() {
        let mut listings = Listings::new();
        let start = tokio::time::Instant::now();
        listings.pace("twilio").await;
        listings.pace("telnyx").await;
        assert_eq!(start.elapsed(), Duration::ZERO, "the first lookup at each provider waits for nothing");
        listings.pace("twilio").await;
        assert!(start.elapsed() >= LOOKUP_INTERVAL, "{:?}", start.elapsed());
    }

    type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

    /// A lookup that counts its list calls and lists nothing.
    struct Counting(Arc<AtomicUsize>);

    impl Lookup for Counting {
        fn lookup_provider(&self) -> &'static str {
            "twilio"
        }

        fn fetch<'a>(&'a self, _id: &'a str, _timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
            Box::pin(async { LookupOutcome::NotFound })
        }

        fn list_to<'a>(
            &'a self,
            _to: &'a str,
            _since: OffsetDateTime,
            _timeout: Duration,
        ) -> BoxFuture<'a, LookupOutcome> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Box::pin(async { LookupOutcome::Found(Vec::new()) })
        }
    }

    #[tokio::test]
    async fn a_provider_is_listed_once_per_recipient_per_run() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counting = Counting(Arc::clone(&calls));
        let lookups: Vec<NamedLookup<'_>> = vec![("twilio", &counting)];
        let args = ReconcileArgs {
            key: None,
            to: Some("+14155550123".into()),
            since: None,
            apply: false,
            older_than: None,
            store: StoreFlag::default(),
            json: false,
        };
        let now = OffsetDateTime::now_utc();
        let window = (now - time::Duration::hours(1), now);
        let mut listings = Listings::new();
        let kept = |to: &str| PhoneNumber::parse(to).ok();
        // Three keys without a recipient (--to), one that keeps the same one, one another.
        for (key, to) in
            [("a", None), ("b", None), ("c", None), ("d", kept("+14155550123")), ("e", kept("+14155550124"))]
        {
            let record = Record::Reserved {
                fingerprint: Fingerprint::of(&Message::new("+14155550123", key), &[]),
                reservation_id: ReservationId::new(),
                reserved_at: SystemTime::now(),
                to,
            };
            let finding = examine(&(key.to_owned(), record), &args, &lookups, window, &mut listings).await;
            let expected = if key == "e" { "skipped" } else { "not_found" };
            assert_eq!(finding.lookup, expected, "{key}");
        }
        assert_eq!(calls.load(Ordering::Relaxed), 1, "one listing for the one recipient looked up");
    }
}
