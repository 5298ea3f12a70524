//! The store a command reads and writes: the `--store` flag, the URL it comes to, and opening
//! it.

use std::io::Write;
use std::sync::Arc;

use clap::Args;
use sms_sdk::redact::redact_url;
use sms_sdk::store::{self, Store, StoreError, Stores};

use crate::paths::Sends;
use crate::spinner::{CONNECTING, Spinners};
use crate::{EXIT_CONFIGURATION, Env};

/// `--store URL`, flattened into every command that reads or writes the store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Args)]
pub(crate) struct StoreFlag {
    /// Store URL: memory, sqlite:PATH, postgres://… (or postgresql://…), redis://…, rediss://…,
    /// redis-cluster://…, rediss-cluster://… or dynamodb://… (a table, `?region=` and
    /// `?endpoint=` optional; default:
    /// `SMS_SDK_STORE`, else state.db in the user's data directory; except for serve, emulator.db
    /// there when no provider credential or webhook secret is set). It holds the idempotency
    /// records and the suppression list, which every send checks first.
    #[arg(id = "store", long = "store", value_name = "URL")]
    pub(crate) named: Option<String>,
}

impl StoreFlag {
    /// The URL of the named store, or of the one `send` or `serve` would use: the data
    /// directory's `state.db` when any provider variable or webhook secret is set, else the
    /// embedded emulator's `emulator.db`.
    /// The operator commands (`idempotency`, `suppression`) name it on `err`, and say when it is
    /// the emulator's, which real sends never read.
    pub(crate) fn url(&self, env: &Env, err: &mut dyn Write) -> Result<String, u8> {
        let named = self.named.as_deref();
        let real = crate::config::any_mentioned(env) || crate::webhook::any_secret_set(env);
        let sends = if real { Sends::Real } else { Sends::Emulated };
        let url = crate::paths::store_url(named, env, sends).map_err(|message| {
            let _ = writeln!(err, "error: store: {message}");
            EXIT_CONFIGURATION
        })?;
        let _ = writeln!(err, "store: {}", redact_url(&url));
        warn_if_unverified(&url, err);
        if sends == Sends::Emulated && self.named(env).is_none() {
            let _ = writeln!(
                err,
                "note: no provider is configured here, so this is the emulator's store (emulator.db); sends with \
                 provider credentials and `serve` read state.db: name the store with --store or SMS_SDK_STORE"
            );
        }
        Ok(url)
    }

    /// Opens the records of the named store, or of the one `send` would use (see
    /// [`StoreFlag::url`]), with a spinner while it connects (none when `json`).
    pub(crate) async fn open(&self, env: &Env, json: bool, err: &mut dyn Write) -> Result<Arc<dyn Store>, u8> {
        let url = self.url(env, err)?;
        Spinners::new(env, json).during(CONNECTING, store::open(&url)).await.map_err(|error| {
            let _ = writeln!(err, "error: store: {}", named_error(self.named(env), error));
            EXIT_CONFIGURATION
        })
    }

    /// Opens the store a send uses, for its suppression list and, when keyed, its records: the
    /// named one, `SMS_SDK_STORE`, or the data directory's file for `sends`, with a spinner from
    /// `spinners` while it connects. Warns on `err` of a TLS store whose certificate is not
    /// verified, and notes when emulated sends write to a store named for real ones; a store that
    /// does not open says which URL, and where it came from.
    pub(crate) async fn open_stores(
        &self,
        env: &Env,
        sends: Sends,
        spinners: Spinners,
        err: &mut dyn Write,
    ) -> Result<(String, Stores), StoreError> {
        let named = self.named(env);
        let url = crate::paths::store_url(self.named.as_deref(), env, sends).map_err(StoreError::new)?;
        warn_if_unverified(&url, err);
        let stores =
            spinners.during(CONNECTING, Stores::open(&url)).await.map_err(|error| named_error(named, error))?;
        if sends == Sends::Emulated
            && let Some((_, source)) = named
        {
            let _ = writeln!(
                err,
                "note: the embedded emulator stands in, and its records go to the store named by {source}: a key \
                 used here is refused for real sends to that store (recorded against the emulator) until its \
                 record expires"
            );
        }
        Ok((url, stores))
    }

    /// The URL this flag or `SMS_SDK_STORE` names, and which of the two named it.
    fn named<'a>(&'a self, env: &'a Env) -> Option<(&'a str, &'static str)> {
        match (self.named.as_deref(), env.get("SMS_SDK_STORE")) {
            (Some(url), _) => Some((url, "--store")),
            (None, Some(url)) => Some((url, "SMS_SDK_STORE")),
            (None, None) => None,
        }
    }
}

/// A store that did not open, saying which URL named it and where from (when one did).
fn named_error(named: Option<(&str, &'static str)>, error: StoreError) -> StoreError {
    match named {
        Some((url, source)) => StoreError::new(Named { url: redact_url(url), source, error }),
        None => error,
    }
}

/// Warns on `err` when `url` is a TLS store URL that turns verification off (`#insecure`).
fn warn_if_unverified(url: &str, err: &mut dyn Write) {
    if url.ends_with("#insecure") {
        let _ = writeln!(
            err,
            "warning: the store's TLS certificate is NOT verified (#insecure): anyone on the network path can \
             read and change its records; give the server's CA with sslrootcert=PATH instead"
        );
    }
}

/// A store that did not open, with the URL that named it and where that URL came from.
#[derive(Debug)]
struct Named {
    url: String,
    source: &'static str,
    error: StoreError,
}

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the store {} (from {}) did not open", self.url, self.source)
    }
}

impl std::error::Error for Named {
    /// What the store said, without its own `idempotency store error:` prefix (the error around
    /// this one says it).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&self.error)
    }
}

/// A store failure as the library's typed error (code `store`).
pub(crate) fn store_error(error: StoreError) -> sms_sdk::Error {
    sms_sdk::Error::from(error)
}

/// `store init` flags.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    #[command(flatten)]
    store: StoreFlag,
}

/// `store init`: creates a DynamoDB store's table (its indexes and expiry) and waits until it is
/// active, or opens another store (which creates its tables); says which on `out`.
pub(crate) async fn init(args: &InitArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let url = match args.store.url(env, err) {
        Ok(url) => url,
        Err(code) => return code,
    };
    let shown = redact_url(&url);
    let done = if url.starts_with("dynamodb://") {
        let creating = async { Box::pin(store::dynamodb::DynamoStoreBuilder::from_url(&url)?.create_table()).await };
        Spinners::new(env, false).during(CONNECTING, creating).await.map(|(_, init)| {
            if init == store::dynamodb::TableInit::Created {
                format!("{shown}: created the table, its indexes (unresolved, suppressed) and its expiry (ttl)")
            } else {
                format!("{shown}: the table was there, of the store's shape, with its expiry on; nothing to do")
            }
        })
    } else {
        Spinners::new(env, false)
            .during(CONNECTING, Stores::open(&url))
            .await
            .map(|_| format!("{shown}: ready (its tables are created on first use)"))
    };
    match done {
        Ok(line) => {
            let _ = writeln!(out, "{line}");
            0
        }
        Err(error) => {
            let _ = writeln!(err, "error: store: {}", named_error(args.store.named(env), error));
            EXIT_CONFIGURATION
        }
    }
}
