//! The logic of the `sms-sdk` command: one function over arguments, environment and output
//! streams that returns the exit code, so tests run it in-process.
//!
//! ```
//! let mut out = Vec::new();
//! let mut err = Vec::new();
//! let code = sms_sdk_cli::run(["--help"], &sms_sdk_cli::Env::default(), &mut out, &mut err);
//! assert_eq!(code, 0);
//! ```

mod advice;
mod batch;
mod cli;
pub mod config;
mod doctor;
mod embedded;
mod emulator;
mod flags;
mod generate;
mod idempotency;
mod paths;
mod reconcile;
mod report;
mod send;
mod sending;
mod serve;
mod shell;
mod spinner;
mod store;
mod style;
mod suppression;
mod variables;
mod webhook;

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;

use clap::FromArgMatches as _;
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

/// Every exit code and what it means, for every command (`doctor` keeps its own): the end of
/// the top-level help, the manual page's EXIT STATUS and the README's table say these.
pub(crate) const EXIT_STATUS: [(u8, &str); 8] = [
    (EXIT_OK, "accepted (or replayed), valid, verified"),
    (
        EXIT_FAILED,
        "a proven failure, nothing sent: rejected (`provider_unreachable` included), a policy refusal (a recipient \
         who opted out), `validate` found the message unsupported (an invalid or opted-out recipient included), a \
         signature that does not verify, an interrupted `batch`, `suppression check` found the recipient \
         suppressed",
    ),
    (
        EXIT_USAGE,
        "usage or input error, before any request: a bad flag or value, an invalid message, an argument or \
         variable that is not UTF-8, `idempotency show` or `resolve` of a key with no record, `resolve` of a key \
         that is not unresolved",
    ),
    (
        EXIT_UNKNOWN,
        "outcome unknown: the message may have been sent; reconcile, do not resend (`batch`: a row is unknown; \
         `idempotency reconcile`: a key is left unresolved)",
    ),
    (EXIT_CONFLICT, "the idempotency key names another message (or was used against another endpoint)"),
    (EXIT_IN_PROGRESS, "another process is sending this key right now"),
    (EXIT_PAYLOAD, "`webhook verify`: authentic, but the payload is malformed"),
    (
        EXIT_CONFIGURATION,
        "configuration or store error: nothing was sent (a missing variable, a sender included; a suppression \
         list that cannot be read)",
    ),
];

/// The environment the command reads (empty values count as unset).
///
/// Variables whose value is not UTF-8 are kept by name only: the command refuses to run when one
/// of them is a variable it reads ([`Env::is_ours`]), and ignores foreign ones.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
    not_utf8: Vec<String>,
    stdout_terminal: bool,
    stderr_terminal: bool,
    /// Only in the crate's own tests: every name [`Env::get`] was asked for.
    #[cfg(test)]
    reads: Option<std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>>,
}

impl Env {
    /// The process environment.
    #[must_use]
    pub fn from_process() -> Self {
        use std::io::IsTerminal as _;
        Self::from_os(std::env::vars_os())
            .with_terminals(std::io::stdout().is_terminal(), std::io::stderr().is_terminal())
    }

    /// An environment from raw name and value pairs, as the operating system gives them.
    pub fn from_os(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Self {
        let mut env = Self::default();
        for (name, value) in vars {
            match (name.into_string(), value.into_string()) {
                (Ok(name), Ok(value)) => {
                    env.vars.insert(name, value);
                }
                (Ok(name), Err(_)) => env.not_utf8.push(name),
                // A name that is not UTF-8 is never one of ours.
                (Err(_), _) => {}
            }
        }
        env
    }

    /// The same environment, with whether standard output and standard error are terminals (the
    /// command then colours its output and draws spinners and progress bars on standard error).
    /// [`Env::from_process`] asks the operating system; every other environment is not a
    /// terminal, so output written to buffers stays plain.
    #[must_use]
    pub fn with_terminals(mut self, stdout: bool, stderr: bool) -> Self {
        self.stdout_terminal = stdout;
        self.stderr_terminal = stderr;
        self
    }

    /// Whether standard output is a terminal.
    #[must_use]
    pub fn stdout_is_terminal(&self) -> bool {
        self.stdout_terminal
    }

    /// Whether standard error is a terminal.
    #[must_use]
    pub fn stderr_is_terminal(&self) -> bool {
        self.stderr_terminal
    }

    /// A variable's value, `None` when unset or empty.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&str> {
        #[cfg(test)]
        if let Some(reads) = &self.reads {
            reads.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(name.to_owned());
        }
        self.vars.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// Whether a variable is set to anything, a value that is not UTF-8 included.
    #[must_use]
    pub fn is_set(&self, name: &str) -> bool {
        self.get(name).is_some() || self.not_utf8.iter().any(|n| n == name)
    }

    /// Whether the command reads a variable of this name (the providers', `SMS_SDK_*`, and the
    /// data directory variables).
    #[must_use]
    pub fn is_ours(name: &str) -> bool {
        const PREFIXES: [&str; 9] =
            ["TWILIO_", "TELNYX_", "PLIVO_", "VONAGE_", "SINCH_", "INFOBIP_", "BANDWIDTH_", "SMS_SDK_", "LIVE_SMS_"];
        // AWS's variables are shared with every AWS tool: only the ones the command reads.
        const AWS: [&str; 7] = [
            "AWS_REGION",
            "AWS_DEFAULT_REGION",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_FROM",
            "AWS_SNS_TOPIC_ARN",
        ];
        PREFIXES.iter().any(|p| name.starts_with(p)) || AWS.contains(&name) || crate::paths::VARIABLES.contains(&name)
    }

    /// The same environment, recording the names it is asked for (the crate's tests).
    #[cfg(test)]
    pub(crate) fn recording(mut self) -> (Self, std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>) {
        let reads = std::sync::Arc::default();
        self.reads = Some(std::sync::Arc::clone(&reads));
        (self, reads)
    }

    /// The first variable the command reads whose value is not UTF-8.
    fn invalid(&self) -> Option<&str> {
        self.not_utf8.iter().map(String::as_str).find(|name| Self::is_ours(name))
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for Env {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self { vars: iter.into_iter().map(|(k, v)| (k.into(), v.into())).collect(), ..Self::default() }
    }
}

/// The arguments as text, or a usage error naming the first one that is not UTF-8 (by the flag
/// it belongs to when there is one).
fn text_args(args: Vec<OsString>) -> Result<Vec<String>, String> {
    let mut text = Vec::with_capacity(args.len());
    for (index, arg) in args.into_iter().enumerate() {
        match arg.into_string() {
            Ok(arg) => text.push(arg),
            Err(arg) => {
                let lossy = arg.to_string_lossy();
                let flag = if lossy.starts_with("--") {
                    lossy.split('=').next().map(str::to_owned)
                } else {
                    text.last().filter(|previous: &&String| previous.starts_with('-')).cloned()
                };
                return Err(match flag {
                    Some(flag) => format!("the value of {flag} is not valid UTF-8"),
                    None => format!("argument {} is not valid UTF-8", index.saturating_add(1)),
                });
            }
        }
    }
    Ok(text)
}

/// The exit code of a send error (docs/behavior.md, "Errors: one table").
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
        ErrorKind::IdempotencyConflict(_) => EXIT_CONFLICT,
        ErrorKind::IdempotencyInProgress => EXIT_IN_PROGRESS,
        _ => EXIT_FAILED,
    }
}

/// Runs the command with `args` (without the program name) and `env`, writing to `out` and
/// `err`; returns the exit code. Arguments may be any OS strings: one that is not UTF-8 is a
/// usage error (exit 2) that names it, as is a variable of ours in `env` that is not UTF-8.
pub fn run<I>(args: I, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let args = match text_args(args.into_iter().map(Into::into).collect()) {
        Ok(args) => args,
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            return EXIT_USAGE;
        }
    };
    if let Some(name) = env.invalid() {
        let _ = writeln!(err, "error: the environment variable {name} is not valid UTF-8");
        return EXIT_USAGE;
    }
    if let Some((first, rest)) = style::after_leading_flags(&args).split_first()
        && first == "doctor"
    {
        return doctor::run(rest, env, out, err);
    }
    let colour = style::requested(&args);
    let argv = std::iter::once("sms-sdk".to_owned()).chain(args.iter().cloned());
    let parsed = cli::command(colour).try_get_matches_from(argv).and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(error) => {
            let help =
                matches!(error.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion)
                    || matches!(error.kind(), clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand)
                        && args.is_empty();
            let (stream, terminal): (&mut dyn Write, bool) =
                if help { (out, env.stdout_is_terminal()) } else { (err, env.stderr_is_terminal()) };
            let rendered = error.render();
            let text = if style::Style::decide(colour, env, terminal).is_on() {
                rendered.ansi().to_string()
            } else {
                rendered.to_string()
            };
            let _ = stream.write_all(text.as_bytes());
            return if help { EXIT_OK } else { EXIT_USAGE };
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
