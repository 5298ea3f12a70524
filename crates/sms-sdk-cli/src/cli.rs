//! The command line: arguments (clap) and dispatch to the commands.

use std::io::Write;

use clap::{Args, Parser, Subcommand};

use crate::Env;

/// Send SMS through Twilio, Telnyx, Plivo and Vonage; validate, diagnose, emulate, reconcile.
#[derive(Debug, Parser)]
#[command(name = "sms-sdk", version, arg_required_else_help = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Send one message (through the embedded emulator when no provider is configured).
    Send(MessageArgs),
    /// Check a message locally against the configured adapters (no network).
    Validate(MessageArgs),
    /// Check one provider's configuration (the reference doctor; see `sms-sdk doctor --help`).
    Doctor,
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
}

/// The message flags of `send` and `validate`.
#[derive(Debug, Args)]
pub(crate) struct MessageArgs {
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
    #[arg(long = "provider", value_name = "NAME")]
    pub(crate) providers: Vec<String>,
    /// Fail over to the next provider after an eligible rejection.
    #[arg(long)]
    pub(crate) fallback: bool,
    /// Idempotency key naming this message.
    #[arg(long)]
    pub(crate) idempotency_key: Option<String>,
    /// Idempotency store URL (memory, sqlite:PATH, postgres://…, redis://…).
    #[arg(long)]
    pub(crate) store: Option<String>,
    /// Media URL (repeatable).
    #[arg(long = "media-url", value_name = "URL")]
    pub(crate) media_urls: Vec<String>,
    /// When to send (RFC 3339).
    #[arg(long, value_name = "RFC3339")]
    pub(crate) send_at: Option<String>,
    /// Validity period in seconds.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) validity_sec: Option<i64>,
    /// Per-message status callback URL.
    #[arg(long, value_name = "URL")]
    pub(crate) webhook_url: Option<String>,
    /// Per-request timeout in milliseconds.
    #[arg(long, value_name = "N")]
    pub(crate) timeout_ms: Option<u64>,
    /// Print exactly one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `sms-sdk emulator` flags.
#[derive(Debug, Args)]
#[command(after_help = crate::emulator::magic_help())]
pub(crate) struct EmulatorArgs {
    /// Loopback address to listen on.
    #[arg(long, default_value = "127.0.0.1:4010")]
    pub(crate) listen: String,
    /// Where status webhooks go when a message has no callback URL.
    #[arg(long, value_name = "URL")]
    pub(crate) webhook_url: Option<String>,
    /// Where injected inbound messages go.
    #[arg(long, value_name = "URL")]
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
    /// How far back to look: 30m, 24h, 7d (default 24h, at most 400d).
    #[arg(long, value_name = "DURATION")]
    pub(crate) since: Option<String>,
    /// Settle the keys whose lookup found exactly one matching message (same recipient, text and
    /// time window) as sent; report the rest.
    #[arg(long)]
    pub(crate) apply: bool,
    /// The stale-reservation limit in seconds (default 300).
    #[arg(long, value_name = "SECS")]
    pub(crate) older_than: Option<u64>,
    /// Store URL.
    #[arg(long)]
    pub(crate) store: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `idempotency list` flags.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Store URL (default: `SMS_SDK_STORE`, else state.db in the user's data directory, or
    /// emulator.db there when no provider is configured).
    #[arg(long)]
    pub(crate) store: Option<String>,
    /// A state (reserved, accepted, rejected, unknown) or `unresolved` (unknown and stale
    /// reserved keys, plus reservations still in progress, with their age).
    #[arg(long)]
    pub(crate) state: Option<String>,
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
    /// Store URL.
    #[arg(long)]
    pub(crate) store: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `idempotency resolve` flags.
#[derive(Debug, Args)]
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
    #[arg(long)]
    pub(crate) provider: Option<String>,
    /// The provider's message id.
    #[arg(long)]
    pub(crate) provider_id: Option<String>,
    /// The stale-reservation limit in seconds (default 300).
    #[arg(long, value_name = "SECS")]
    pub(crate) older_than: Option<u64>,
    /// Store URL.
    #[arg(long)]
    pub(crate) store: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Subcommand)]
enum WebhookCommand {
    /// Verify a webhook request as a server would and print the normalized event.
    Verify(VerifyArgs),
}

/// `webhook verify` flags.
#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// twilio, telnyx, plivo or vonage.
    #[arg(long)]
    pub(crate) provider: String,
    /// The public URL the provider called.
    #[arg(long)]
    pub(crate) url: String,
    /// POST, or GET for callbacks whose parameters are in the URL.
    #[arg(long, default_value = "POST")]
    pub(crate) method: String,
    /// A header, `Name: value` (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    /// The raw body: a file, or `-` for standard input.
    #[arg(long, value_name = "PATH")]
    pub(crate) body_file: Option<String>,
    /// Verify as of this Unix time (seconds).
    #[arg(long, value_name = "UNIX_SECONDS")]
    pub(crate) now: Option<u64>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Runs the parsed command.
pub(crate) async fn dispatch(cli: Cli, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match cli.command {
        Command::Send(args) => crate::send::send(args, env, out, err).await,
        Command::Validate(args) => crate::send::validate(&args, env, out, err),
        Command::Doctor => crate::doctor::run(&[], env, out, err),
        Command::Emulator(args) => crate::emulator::run(args, out, err).await,
        Command::Idempotency(IdempotencyCommand::List(args)) => crate::store::list(args, env, out, err).await,
        Command::Idempotency(IdempotencyCommand::Show(args)) => crate::store::show(args, env, out, err).await,
        Command::Idempotency(IdempotencyCommand::Resolve(args)) => crate::store::resolve(args, env, out, err).await,
        Command::Idempotency(IdempotencyCommand::Reconcile(args)) => crate::reconcile::run(args, env, out, err).await,
        Command::Webhook(WebhookCommand::Verify(args)) => crate::webhook::verify(&args, env, out, err),
        Command::Suppression(command) => crate::suppression::run(command, env, out, err).await,
        Command::Batch(args) => crate::batch::run(args, env, out, err).await,
    }
}
