//! The command line: arguments (clap) and dispatch to the commands.

use std::io::Write;
use std::time::Duration;

use clap::{
    Arg, ArgAction, ArgMatches, Args, ColorChoice, CommandFactory as _, FromArgMatches, Parser, Subcommand, ValueHint,
    value_parser,
};

use crate::Env;
use crate::style::{Output, Streams, Style};
use crate::values::{Provider, StateFilter};

/// Send SMS through Twilio, Telnyx, Plivo and Vonage; validate, diagnose, emulate, reconcile.
#[derive(Debug, Parser)]
#[command(name = "sms-sdk", version, arg_required_else_help = true)]
pub struct Cli {
    /// Colour: auto (on terminals, unless `NO_COLOR` is set), always or never. JSON is never
    /// coloured.
    #[arg(long, global = true, value_name = "WHEN", value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Send one message (through the embedded emulator when no provider is configured).
    Send(MessageArgs),
    /// Check a message locally against the configured adapters (no network).
    Validate(ValidateArgs),
    /// Check one provider's configuration without sending anything (or, with --live, send one
    /// message).
    Doctor(DoctorArgs),
    /// Run the local provider emulator until interrupted.
    Emulator(EmulatorArgs),
    /// Inspect and settle idempotency keys.
    #[command(subcommand)]
    Idempotency(IdempotencyCommand),
    /// Webhook tools.
    #[command(subcommand)]
    Webhook(WebhookCommand),
    /// Inspect and edit the suppression list (recipients who opted out); import and export it
    /// as CSV.
    #[command(subcommand)]
    Suppression(crate::suppression::SuppressionCommand),
    /// Send one message per row of a CSV file, resumably, within a rate.
    Batch(crate::batch::BatchArgs),
    /// Print the shell completion script for bash, zsh, fish, powershell or elvish.
    Completions(crate::generate::CompletionsArgs),
    /// Print the manual page (roff), or write one page per command to a directory.
    Man(crate::generate::ManArgs),
}

/// The message flags of `send` and `validate`.
#[derive(Debug, Args)]
pub(crate) struct MessageFields {
    /// Recipient, E.164 (+14155550123).
    #[arg(long)]
    pub(crate) to: String,
    /// Message text.
    #[arg(long)]
    pub(crate) body: String,
    /// Sender: +E164 number, 3–8 digit short code, or alphanumeric sender ID.
    #[arg(long)]
    pub(crate) from: Option<String>,
    /// Provider to use; repeat for a failover order (default: every configured provider).
    #[arg(long = "provider", value_name = "NAME", value_enum)]
    pub(crate) providers: Vec<Provider>,
    /// Idempotency key naming this message.
    #[arg(long)]
    pub(crate) idempotency_key: Option<String>,
    /// Media URL (repeatable).
    #[arg(long = "media-url", value_name = "URL", value_hint = ValueHint::Url)]
    pub(crate) media_urls: Vec<String>,
    /// When to send (RFC 3339).
    #[arg(long, value_name = "RFC3339")]
    pub(crate) send_at: Option<String>,
    /// Validity period in seconds.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) validity_sec: Option<i64>,
    /// Per-message status callback URL.
    #[arg(long, value_name = "URL", value_hint = ValueHint::Url)]
    pub(crate) webhook_url: Option<String>,
}

/// `sms-sdk send` flags: the message, and how to send it.
#[derive(Debug, Args)]
pub(crate) struct MessageArgs {
    #[command(flatten)]
    pub(crate) message: MessageFields,
    /// Fail over to the next provider after an eligible rejection.
    #[arg(long)]
    pub(crate) fallback: bool,
    /// Store URL: memory, sqlite:PATH, postgres://… (or postgresql://…), redis://… (default:
    /// `SMS_SDK_STORE`, else state.db in the user's data directory, or emulator.db there when no
    /// provider is configured). Its suppression list is checked before every send; its records
    /// make a keyed send replay.
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
    /// Per-request timeout in milliseconds.
    #[arg(long, value_name = "N")]
    pub(crate) timeout_ms: Option<u64>,
    /// Send this one message even if the recipient opted out (the store's suppression list),
    /// saying why (for example the one confirmation a regulator allows after STOP); the
    /// override is printed on stderr.
    #[arg(long, value_name = "REASON")]
    pub(crate) policy_override: Option<String>,
    #[command(flatten)]
    pub(crate) output: Output,
}

/// `sms-sdk validate` flags: the message, and the store whose suppression list is checked
/// (nothing is sent).
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    #[command(flatten)]
    pub(crate) message: MessageFields,
    /// Store URL whose suppression list is checked (default as for `send`).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
    #[command(flatten)]
    pub(crate) output: Output,
    /// `send`'s delivery flags, accepted so that a script can validate with the very flags it
    /// sends with; validation reads none of them, so they stay out of the help.
    #[command(flatten)]
    pub(crate) ignored: SendOnlyFlags,
}

/// The flags of `send` that `validate` accepts and ignores (hidden from its help).
#[derive(Debug, Args)]
pub(crate) struct SendOnlyFlags {
    #[arg(long, hide = true)]
    fallback: bool,
    #[arg(long, hide = true, value_name = "N")]
    timeout_ms: Option<u64>,
    #[arg(long, hide = true, value_name = "REASON")]
    policy_override: Option<String>,
}

/// `sms-sdk doctor`'s flags, from the doctor's own table: for its help, completions and manual
/// page only, since `run` hands `doctor …` to the doctor's parser.
#[derive(Debug)]
pub(crate) struct DoctorArgs;

impl FromArgMatches for DoctorArgs {
    fn from_arg_matches(_: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self)
    }

    fn update_from_arg_matches(&mut self, _: &ArgMatches) -> Result<(), clap::Error> {
        Ok(())
    }
}

impl Args for DoctorArgs {
    fn augment_args(command: clap::Command) -> clap::Command {
        let command = crate::doctor::FLAGS.iter().fold(command, |command, flag| {
            let arg = Arg::new(flag.long).long(flag.long).help(flag.help);
            let arg = match flag.value {
                Some(value) => arg.value_name(value).action(ArgAction::Set),
                None => arg.action(ArgAction::SetTrue),
            };
            let arg =
                if flag.long == "adapter" { arg.required(true).value_parser(value_parser!(Provider)) } else { arg };
            command.arg(arg)
        });
        // The doctor's parser takes no `--color`: the global flag stays out of its help.
        command.arg(Arg::new("color").long("color").value_parser(value_parser!(ColorChoice)).hide(true))
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        Self::augment_args(command)
    }
}

/// `sms-sdk emulator` flags.
#[derive(Debug, Args)]
#[command(after_help = crate::emulator::magic_help())]
pub(crate) struct EmulatorArgs {
    /// Loopback address to listen on: `127.0.0.1:PORT`, `[::1]:PORT` or `localhost:PORT` (port
    /// 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4010", value_parser = crate::values::listen)]
    pub(crate) listen: String,
    /// Where status webhooks go when a message has no callback URL (an absolute http(s) URL).
    #[arg(long, value_name = "URL", value_hint = ValueHint::Url, value_parser = crate::values::http_url)]
    pub(crate) webhook_url: Option<String>,
    /// Where injected inbound messages go (an absolute http(s) URL).
    #[arg(long, value_name = "URL", value_hint = ValueHint::Url, value_parser = crate::values::http_url)]
    pub(crate) inbound_url: Option<String>,
    /// Milliseconds between status webhook steps.
    #[arg(long, default_value_t = 200)]
    pub(crate) status_delay_ms: u64,
    /// Do not log the requests served and the webhooks posted (one line each on stderr).
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

#[derive(Debug, Subcommand)]
enum IdempotencyCommand {
    /// List keys.
    List(ListArgs),
    /// Show one key's record.
    Show(ShowArgs),
    /// Settle an unresolved key after checking with the provider.
    Resolve(ResolveArgs),
    /// Look the unresolved keys' messages up at their providers and print how to settle each
    /// (`--apply`: settle those with exactly one matching message). Never sends.
    Reconcile(ReconcileArgs),
}

/// `idempotency reconcile` flags.
#[derive(Debug, Args)]
pub(crate) struct ReconcileArgs {
    /// Only this key (default: every unresolved key, at most 1,000 per run).
    pub(crate) key: Option<String>,
    /// The recipient the messages were sent to (E.164): lists the provider's messages to it.
    #[arg(long, value_name = "E164")]
    pub(crate) to: Option<String>,
    /// How far back to look: 30m, 24h, 7d or seconds (default 24h, at most 400d).
    #[arg(long, value_name = "DURATION", value_parser = crate::values::since)]
    pub(crate) since: Option<Duration>,
    /// Settle the keys whose lookup found exactly one matching message (same recipient, text and
    /// time window) as sent; report the rest.
    #[arg(long)]
    pub(crate) apply: bool,
    /// The stale-reservation limit in seconds (default 300).
    #[arg(long, value_name = "SECS")]
    pub(crate) older_than: Option<u64>,
    /// Store URL (default as for `idempotency list`).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `idempotency list` flags.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Store URL: memory, sqlite:PATH, postgres://… (or postgresql://…), redis://… (default:
    /// `SMS_SDK_STORE`, else state.db in the user's data directory, or emulator.db there when no
    /// provider is configured).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
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
    /// Store URL (default as for `idempotency list`).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
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
    /// Store URL (default as for `idempotency list`).
    #[arg(long, value_name = "URL")]
    pub(crate) store: Option<String>,
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

#[derive(Debug, Subcommand)]
enum WebhookCommand {
    /// Verify a webhook request as a server would and print the normalized event.
    Verify(VerifyArgs),
}

/// `webhook verify` flags.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The provider that sent the request.
    #[arg(long, value_name = "NAME", value_enum)]
    pub(crate) provider: Provider,
    /// The public URL the provider called (an absolute http(s) URL).
    #[arg(long, value_hint = ValueHint::Url, value_parser = crate::values::http_url)]
    pub(crate) url: String,
    /// POST, or GET for callbacks whose parameters are in the URL.
    #[arg(long, default_value = "POST")]
    pub(crate) method: String,
    /// A header, `Name: value` (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    /// The raw body: a file, or `-` for standard input.
    #[arg(long, value_name = "PATH", value_hint = ValueHint::FilePath)]
    pub(crate) body_file: Option<String>,
    /// Verify as of this Unix time (seconds).
    #[arg(long, value_name = "UNIX_SECONDS")]
    pub(crate) now: Option<u64>,
    /// Print JSON (phone numbers masked, a message body as its length, no raw payload).
    #[arg(long)]
    pub(crate) json: bool,
}

/// The command's definition: the arguments, each command's "Environment:" help section, and
/// `colour` for clap's own help and errors.
pub(crate) fn command(colour: ColorChoice) -> clap::Command {
    crate::variables::annotate(Cli::command()).color(colour).after_help(exit_codes())
}

/// The exit codes as the top-level help ends with them.
fn exit_codes() -> String {
    let lines = crate::EXIT_STATUS.iter().map(|(code, meaning)| format!("\n  {code}  {meaning}"));
    std::iter::once("Exit codes (every command; `doctor` keeps its own 0 passed, 1 failed, 2 usage):".to_owned())
        .chain(lines)
        .collect()
}

/// Runs the parsed command.
pub(crate) async fn dispatch(cli: Cli, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let streams = Streams {
        out: Style::decide(cli.color, env, env.stdout_is_terminal()),
        err: Style::decide(cli.color, env, env.stderr_is_terminal()),
    };
    match cli.command {
        Command::Send(mut args) => {
            args.output.streams = streams;
            crate::send::send(args, env, out, err).await
        }
        Command::Validate(mut args) => {
            args.output.streams = streams;
            crate::send::validate(&args, env, out, err).await
        }
        // Reached only through `sms-sdk help doctor` or a global flag before it: `run` hands
        // `doctor …` to the doctor's own parser.
        Command::Doctor(DoctorArgs) => crate::doctor::run(&[], env, out, err),
        Command::Emulator(args) => crate::emulator::run(args, env, out, err).await,
        Command::Idempotency(IdempotencyCommand::List(args)) => crate::store::list(args, env, out, err).await,
        Command::Idempotency(IdempotencyCommand::Show(args)) => crate::store::show(args, env, out, err).await,
        Command::Idempotency(IdempotencyCommand::Resolve(args)) => crate::store::resolve(args, env, out, err).await,
        Command::Idempotency(IdempotencyCommand::Reconcile(args)) => crate::reconcile::run(args, env, out, err).await,
        Command::Webhook(WebhookCommand::Verify(args)) => crate::webhook::verify(&args, env, out, err),
        Command::Suppression(command) => crate::suppression::run(command, env, out, err).await,
        Command::Batch(args) => crate::batch::run(args, env, out, err).await,
        Command::Completions(args) => crate::generate::completions(&args, out),
        Command::Man(args) => crate::generate::man(&args, out, err),
    }
}
