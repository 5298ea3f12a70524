//! `sms-sdk idempotency list | show | resolve`: the operator's tools to settle unknown outcomes.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sms_sdk::idempotency::{
    self, DEFAULT_STALE_RESERVATION, DEFAULT_TTL, Entry, Filter, Page, Record, Resolution, Resolved, State, Store,
    StoreError,
};

use crate::cli::{ListArgs, ResolveArgs, ShowArgs};
use crate::send::DEFAULT_STORE;
use crate::{EXIT_CONFIGURATION, EXIT_FAILED, EXIT_OK, EXIT_USAGE, Env};

/// A store failure as the library's typed error (code `store`).
pub(crate) fn store_error(error: StoreError) -> sms_sdk::Error {
    sms_sdk::Error::from(error)
}

async fn open(url: Option<&str>, env: &Env, err: &mut dyn Write) -> Result<Arc<dyn Store>, u8> {
    let url = url.or_else(|| env.get("SMS_SDK_STORE")).unwrap_or(DEFAULT_STORE);
    idempotency::open(url).await.map_err(|error| {
        let _ = writeln!(err, "error: store: {error}");
        EXIT_CONFIGURATION
    })
}

fn seconds(secs: Option<u64>) -> Duration {
    secs.map_or(DEFAULT_STALE_RESERVATION, Duration::from_secs)
}

/// One line about a record.
fn describe(key: &str, record: &Record, now: SystemTime) -> String {
    let detail = match record {
        Record::Reserved { reserved_at, .. } => {
            format!("reserved {}s ago", now.duration_since(*reserved_at).unwrap_or_default().as_secs())
        }
        Record::Accepted { result, .. } => format!("{} {}", result.provider, result.provider_id),
        Record::Rejected { error, .. } | Record::Unknown { error, .. } => error.code.clone(),
    };
    format!("{key}\t{}\t{detail}", record.state().as_str())
}

/// `idempotency list`.
pub(crate) async fn list(args: ListArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let filter = match args.state.as_deref() {
        None => Filter::All,
        Some("unresolved") => Filter::Unresolved { stale_after: seconds(args.older_than) },
        Some(state) => match State::parse(state) {
            Some(state) => Filter::State(state),
            None => {
                let _ = writeln!(err, "error: --state must be reserved, accepted, rejected, unknown or unresolved");
                return EXIT_USAGE;
            }
        },
    };
    let store = match open(args.store.as_deref(), env, err).await {
        Ok(store) => store,
        Err(code) => return code,
    };
    let now = SystemTime::now();
    let mut entries = match store.list(filter, now, Page::default()).await {
        Ok(listing) => listing.entries,
        Err(error) => {
            let _ = writeln!(err, "error: store: {error}");
            return EXIT_CONFIGURATION;
        }
    };
    if let (Some(older), false) = (args.older_than, matches!(filter, Filter::Unresolved { .. })) {
        let cutoff = Duration::from_secs(older);
        entries.retain(|e| match &e.record {
            Record::Reserved { reserved_at, .. } => now.duration_since(*reserved_at).is_ok_and(|age| age > cutoff),
            Record::Accepted { .. } | Record::Rejected { .. } | Record::Unknown { .. } => true,
        });
    }
    if args.json {
        let _ = writeln!(out, "{}", serde_json::to_string(&entries).unwrap_or_default());
    } else {
        for Entry { key, record, .. } in &entries {
            let _ = writeln!(out, "{}", describe(key, record, now));
        }
    }
    EXIT_OK
}

/// `idempotency show`.
pub(crate) async fn show(args: ShowArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let store = match open(args.store.as_deref(), env, err).await {
        Ok(store) => store,
        Err(code) => return code,
    };
    match store.get(&args.key).await {
        Ok(Some(record)) => {
            if args.json {
                let _ = writeln!(out, "{}", serde_json::json!({"key": args.key, "record": record}));
            } else {
                let _ = writeln!(out, "{}", describe(&args.key, &record, SystemTime::now()));
            }
            EXIT_OK
        }
        Ok(None) => {
            let _ = writeln!(err, "no record for key {:?}", args.key);
            EXIT_FAILED
        }
        Err(error) => {
            let _ = writeln!(err, "error: store: {error}");
            EXIT_CONFIGURATION
        }
    }
}

/// `idempotency resolve`.
pub(crate) async fn resolve(args: ResolveArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let resolution = match (args.sent, args.not_sent, args.provider, args.provider_id) {
        (true, false, Some(provider), Some(provider_id)) => {
            Resolution::Sent { provider, provider_id, ttl: DEFAULT_TTL }
        }
        (false, true, _, _) => Resolution::NotSent,
        _ => {
            let _ = writeln!(err, "error: resolve needs --sent --provider NAME --provider-id ID, or --not-sent");
            return EXIT_USAGE;
        }
    };
    let store = match open(args.store.as_deref(), env, err).await {
        Ok(store) => store,
        Err(code) => return code,
    };
    let sent = matches!(resolution, Resolution::Sent { .. });
    match store.resolve(&args.key, resolution, seconds(args.older_than), SystemTime::now()).await {
        Ok(Resolved::Done) => {
            let effect = if sent { "accepted: later sends replay it" } else { "removed: the next send goes out" };
            if args.json {
                let _ = writeln!(
                    out,
                    "{}",
                    serde_json::json!({"key": args.key, "resolved": if sent { "sent" } else { "not_sent" }})
                );
            } else {
                let _ = writeln!(out, "{}: {effect}", args.key);
            }
            EXIT_OK
        }
        Ok(Resolved::NotFound) => {
            let _ = writeln!(err, "error: no record for key {:?}", args.key);
            EXIT_USAGE
        }
        Ok(Resolved::Refused(record)) => {
            let _ = writeln!(
                err,
                "error: key {:?} is {} and not unresolved (only unknown or stale reserved keys can be resolved)",
                args.key,
                record.state().as_str()
            );
            EXIT_USAGE
        }
        Err(error) => {
            let _ = writeln!(err, "error: store: {error}");
            EXIT_CONFIGURATION
        }
    }
}
