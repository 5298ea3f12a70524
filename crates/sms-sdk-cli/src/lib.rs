//! The logic of the `sms-sdk` command: one function over arguments, environment and output
//! streams that returns the exit code, so tests run it in-process.
//!
//! ```
//! let mut out = Vec::new();
//! let mut err = Vec::new();
//! let code = sms_sdk_cli::run(&["--help".into()], &sms_sdk_cli::Env::default(), &mut out, &mut err);
//! assert_eq!(code, 0);
//! ```

mod cli;
pub mod config;
mod doctor;
mod emulator;
mod send;
mod store;
mod webhook;

use std::collections::HashMap;
use std::io::Write;

use clap::Parser as _;
use sms_sdk::ErrorKind;

pub use crate::cli::Cli;

/// Success: accepted (or replayed), valid, verified, checks passed.
pub const EXIT_OK: u8 = 0;
/// A proven failure that is safe to retry (rejection, failed check, invalid signature).
pub const EXIT_FAILED: u8 = 1;
/// A usage or input error, caught before any request.
pub const EXIT_USAGE: u8 = 2;
/// The outcome is unknown: the message may have been sent.
pub const EXIT_UNKNOWN: u8 = 3;
/// The idempotency key names another message.
pub const EXIT_CONFLICT: u8 = 4;
/// Another process is sending this key right now.
pub const EXIT_IN_PROGRESS: u8 = 5;
/// `webhook verify`: authentic, but the payload is malformed.
pub const EXIT_PAYLOAD: u8 = 6;
/// Configuration or store error: nothing was sent.
pub const EXIT_CONFIGURATION: u8 = 7;

/// The environment the command reads (empty values count as unset).
#[derive(Debug, Clone, Default)]
pub struct Env(HashMap<String, String>);

impl Env {
    /// The process environment.
    #[must_use]
    pub fn from_process() -> Self {
        Self(std::env::vars().collect())
    }

    /// A variable's value, `None` when unset or empty.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Env {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self(iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

/// The exit code of a send error (the table of `decisions.md`).
#[must_use]
#[allow(clippy::wildcard_enum_match_arm)] // `ErrorKind` is non-exhaustive: new kinds are failures
pub fn exit_code(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::Configuration | ErrorKind::Store => EXIT_CONFIGURATION,
        ErrorKind::InvalidRecipient
        | ErrorKind::InvalidSender
        | ErrorKind::InvalidMessage { .. }
        | ErrorKind::Unsupported { .. } => EXIT_USAGE,
        ErrorKind::Unknown(_) => EXIT_UNKNOWN,
        ErrorKind::IdempotencyConflict => EXIT_CONFLICT,
        ErrorKind::IdempotencyInProgress => EXIT_IN_PROGRESS,
        _ => EXIT_FAILED,
    }
}

/// Runs the command with `args` (without the program name) and `env`, writing to `out` and
/// `err`; returns the exit code.
pub fn run(args: &[String], env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    if args.first().map(String::as_str) == Some("doctor") {
        return doctor::run(&args[1..], env, out, err);
    }
    let argv = std::iter::once("sms-sdk".to_owned()).chain(args.iter().cloned());
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(error) => {
            let help =
                matches!(error.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion)
                    || matches!(error.kind(), clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand)
                        && args.is_empty();
            let text = error.render().to_string();
            return if help {
                let _ = out.write_all(text.as_bytes());
                EXIT_OK
            } else {
                let _ = err.write_all(text.as_bytes());
                EXIT_USAGE
            };
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(err, "error: could not start the async runtime: {error}");
            return EXIT_CONFIGURATION;
        }
    };
    runtime.block_on(cli::dispatch(cli, env, out, err))
}
