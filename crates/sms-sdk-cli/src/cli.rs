//! The command line: arguments (clap) and dispatch to the commands.

use std::io::Write;

use clap::{ColorChoice, CommandFactory as _, Parser, Subcommand};

use crate::Env;
use crate::batch::BatchArgs;
use crate::doctor::DoctorArgs;
use crate::emulator::EmulatorArgs;
use crate::generate::{CompletionsArgs, ManArgs};
use crate::idempotency::{ListArgs, ResolveArgs, ShowArgs};
use crate::reconcile::ReconcileArgs;
use crate::send::{MessageArgs, ValidateArgs};
use crate::serve::ServeArgs;
use crate::store::InitArgs;
use crate::style::{Streams, Style};
use crate::suppression::SuppressionCommand;
use crate::webhook::VerifyArgs;

/// Send SMS through Twilio, Telnyx, Plivo, Vonage, Sinch, AWS, Infobip and Bandwidth; validate, diagnose, emulate, reconcile.
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
    Suppression(SuppressionCommand),
    /// Send one message per row of a CSV file, resumably, within a rate.
    Batch(BatchArgs),
    /// Prepare a store: `store init` creates a DynamoDB table (its indexes and expiry), or the
    /// tables of the others.
    #[command(subcommand)]
    Store(StoreCommand),
    /// Receive the providers' webhooks: verify, deduplicate, settle unknown sends, feed STOP/START
    /// to the suppression list, and hand each event on (stdout or a signed POST).
    Serve(ServeArgs),
    /// Print the shell completion script for bash, zsh, fish, powershell or elvish.
    Completions(CompletionsArgs),
    /// Print the manual page (roff), or write one page per command to a directory.
    Man(ManArgs),
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

#[derive(Debug, Subcommand)]
enum StoreCommand {
    /// Create the store's tables: for a dynamodb://… store the table, its two indexes and its
    /// expiry (with the IAM actions to create a table and turn its expiry on, which sending does
    /// not need); the other stores create theirs on first use, and this opens them. Safe to run
    /// again.
    Init(InitArgs),
}

#[derive(Debug, Subcommand)]
enum WebhookCommand {
    /// Verify a webhook request as a server would and print the normalized event.
    Verify(VerifyArgs),
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
        Command::Idempotency(IdempotencyCommand::List(args)) => crate::idempotency::list(args, env, out, err).await,
        Command::Idempotency(IdempotencyCommand::Show(args)) => crate::idempotency::show(args, env, out, err).await,
        Command::Idempotency(IdempotencyCommand::Resolve(args)) => {
            crate::idempotency::resolve(args, env, out, err).await
        }
        Command::Idempotency(IdempotencyCommand::Reconcile(args)) => crate::reconcile::run(args, env, out, err).await,
        Command::Webhook(WebhookCommand::Verify(args)) => crate::webhook::verify(&args, env, out, err).await,
        Command::Suppression(command) => crate::suppression::run(command, env, out, err).await,
        Command::Batch(args) => crate::batch::run(args, env, out, err).await,
        Command::Store(StoreCommand::Init(args)) => crate::store::init(&args, env, out, err).await,
        Command::Serve(args) => crate::serve::run(args, env, out, err).await,
        Command::Completions(args) => crate::generate::completions(&args, command(ColorChoice::Never), out),
        Command::Man(args) => crate::generate::man(&args, command(ColorChoice::Never), out, err),
    }
}
