//! `sms-sdk completions` and `sms-sdk man`: the shell completion scripts and the manual pages,
//! written from the command's own definition.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ColorChoice, ValueHint};
use clap_complete::Shell;

use crate::{EXIT_OK, EXIT_USAGE};

/// `sms-sdk completions` flags.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  sms-sdk completions bash > ~/.local/share/bash-completion/completions/sms-sdk\n  \
                        sms-sdk completions zsh > \"${fpath[1]}/_sms-sdk\"\n  \
                        sms-sdk completions fish > ~/.config/fish/completions/sms-sdk.fish"
)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: Shell,
}

/// `sms-sdk man` flags.
#[derive(Debug, Args)]
pub(crate) struct ManArgs {
    /// Write one page per command (sms-sdk.1, sms-sdk-send.1, …) to this directory, created
    /// when missing, and print their paths.
    #[arg(long, value_name = "DIR", value_hint = ValueHint::DirPath)]
    dir: Option<PathBuf>,
}

/// The command's definition as the generators see it (plain, no colour codes).
fn definition() -> clap::Command {
    crate::cli::command(ColorChoice::Never)
}

/// `sms-sdk completions SHELL`: the script on standard output.
pub(crate) fn completions(args: &CompletionsArgs, out: &mut dyn Write) -> u8 {
    clap_complete::generate(args.shell, &mut definition(), "sms-sdk", out);
    EXIT_OK
}

/// `sms-sdk man [--dir DIR]`.
pub(crate) fn man(args: &ManArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match &args.dir {
        None => clap_mangen::Man::new(definition()).render(out),
        Some(dir) => pages(dir, out),
    };
    match result {
        Ok(()) => EXIT_OK,
        Err(error) => {
            let place = args.dir.as_deref().map_or_else(|| "standard output".to_owned(), |d| d.display().to_string());
            let _ = writeln!(err, "error: cannot write the manual to {place}: {error}");
            EXIT_USAGE
        }
    }
}

/// Writes one page per command (hidden ones and `help` left out) to `dir`, printing each path.
fn pages(dir: &Path, out: &mut dyn Write) -> std::io::Result<()> {
    fn write(command: clap::Command, dir: &Path, out: &mut dyn Write) -> std::io::Result<()> {
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            write(sub, dir, out)?;
        }
        let path = clap_mangen::Man::new(command).generate_to(dir)?;
        writeln!(out, "{}", path.display())
    }
    std::fs::create_dir_all(dir)?;
    let mut command = definition().disable_help_subcommand(true);
    // Building names each subcommand's page after its path (`sms-sdk-idempotency-list`).
    command.build();
    write(command, dir, out)
}
