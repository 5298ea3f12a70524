//! `sms-sdk completions` and `sms-sdk man`: the shell completion scripts and the manual pages,
//! written from the command's own definition (plain, no colour codes), which the dispatch
//! passes in.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueHint};
use clap_complete::Shell;

use crate::{EXIT_FAILED, EXIT_OK, EXIT_USAGE};

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

/// The command's name, as the scripts complete it.
const BIN: &str = "sms-sdk";

/// `sms-sdk completions SHELL`: the script of `definition` on standard output.
pub(crate) fn completions(args: &CompletionsArgs, mut definition: clap::Command, out: &mut dyn Write) -> u8 {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut definition, BIN, &mut script);
    let script = String::from_utf8_lossy(&script);
    let script = if args.shell == Shell::Bash { repair_bash(&script) } else { script.into_owned() };
    match out.write_all(script.as_bytes()) {
        Ok(()) => EXIT_OK,
        Err(error) if closed_early(&error) => EXIT_OK,
        Err(_) => EXIT_FAILED,
    }
}

/// Whether a write failed because the reader went away (`sms-sdk man | head`): what it wanted
/// was written, as with any Unix tool whose pipe closes.
fn closed_early(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::BrokenPipe
}

/// The bash script with each `case "${cmd}"` arm labelled with the state its dispatch loop
/// computes, and its function named with a valid identifier.
///
/// For a hyphenated name `clap_complete`'s loop computes `sms__sdk__subcmd__send` but labels the
/// arm `sms__subcmd__sdk__subcmd__send`, so no subcommand's flags or values complete
/// (clap-rs/clap#6421); it may also name the function `_sms-sdk`, which bash in POSIX mode
/// refuses (clap-rs/clap#6468). Only those spellings change.
fn repair_bash(script: &str) -> String {
    let state = BIN.replace('-', "__");
    let misspelt = BIN.replace('-', "__subcmd__");
    let function = format!("_{state}");
    let invalid = format!("_{BIN}");
    let (definition, invalid_definition) = (format!("{function}() {{"), format!("{invalid}() {{"));
    let (reference, invalid_reference) = (format!(" -F {function} "), format!(" -F {invalid} "));
    script
        .split_inclusive('\n')
        .map(|line| {
            let text = line.trim();
            if misspelt_arm(text, &misspelt) {
                line.replacen(&misspelt, &state, 1)
            } else if text == invalid_definition {
                line.replacen(&invalid_definition, &definition, 1)
            } else if text.starts_with("complete ") && text.contains(&invalid_reference) {
                line.replacen(&invalid_reference, &reference, 1)
            } else {
                line.to_owned()
            }
        })
        .collect()
}

/// Whether `text` is a `case` arm label that starts with `misspelt` (`sms__subcmd__sdk)`,
/// `sms__subcmd__sdk__subcmd__send)`).
fn misspelt_arm(text: &str, misspelt: &str) -> bool {
    text.strip_prefix(misspelt).and_then(|rest| rest.strip_suffix(')')).is_some_and(|rest| {
        (rest.is_empty() || rest.starts_with("__subcmd__"))
            && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `sms-sdk man [--dir DIR]`: the manual of `definition`.
pub(crate) fn man(args: &ManArgs, definition: clap::Command, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let result = match &args.dir {
        None => clap_mangen::Man::new(definition.after_help(None::<&str>)).render(out).and_then(|()| exit_status(out)),
        Some(dir) => pages(definition, dir, out),
    };
    match result {
        Ok(()) => EXIT_OK,
        Err(error) if args.dir.is_none() && closed_early(&error) => EXIT_OK,
        Err(error) => {
            let place = args.dir.as_deref().map_or_else(|| "standard output".to_owned(), |d| d.display().to_string());
            let _ = writeln!(err, "error: cannot write the manual to {place}: {error}");
            EXIT_USAGE
        }
    }
}

/// Writes one page per command of `definition` (hidden ones and `help` left out) to `dir`,
/// printing each path.
fn pages(definition: clap::Command, dir: &Path, out: &mut dyn Write) -> std::io::Result<()> {
    fn write(command: clap::Command, dir: &Path, out: &mut dyn Write) -> std::io::Result<()> {
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            write(sub, dir, out)?;
        }
        let path = clap_mangen::Man::new(command).generate_to(dir)?;
        writeln!(out, "{}", path.display())
    }
    std::fs::create_dir_all(dir)?;
    let mut command = definition.disable_help_subcommand(true).after_help(None::<&str>);
    // Building names each subcommand's page after its path (`sms-sdk-idempotency-list`).
    command.build();
    let top = dir.join(format!("{}.1", command.get_name()));
    write(command, dir, out)?;
    let mut page = std::fs::OpenOptions::new().append(true).open(top)?;
    exit_status(&mut page)
}

/// The manual's EXIT STATUS section (roff), from the command's one table of exit codes.
fn exit_status(out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, ".SH \"EXIT STATUS\"")?;
    writeln!(out, "Every command but \\fBdoctor\\fR, which keeps its own (0 passed, 1 failed, 2 usage):")?;
    for (code, meaning) in crate::EXIT_STATUS {
        // Text lines are plain roff: escape the backslash, and never start one with a control character.
        let text = meaning.replace('\\', "\\e").replace('`', "");
        writeln!(out, ".TP\n{code}\n\\&{text}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use clap::ColorChoice;

    use super::*;

    /// The command's definition as the dispatch passes it.
    fn definition() -> clap::Command {
        crate::cli::command(ColorChoice::Never)
    }

    fn script(shell: Shell) -> String {
        let mut out = Vec::new();
        assert_eq!(completions(&CompletionsArgs { shell }, definition(), &mut out), EXIT_OK);
        String::from_utf8(out).unwrap()
    }

    /// The states the bash script's dispatch loop assigns (`cmd="…"`).
    fn states(script: &str) -> BTreeSet<&str> {
        script
            .lines()
            .filter_map(|line| line.trim().strip_prefix("cmd=\"")?.strip_suffix('"'))
            .filter(|state| !state.is_empty())
            .collect()
    }

    /// The labels of the bash script's `case "${cmd}"` arms: a lone identifier before `)`.
    fn arms(script: &str) -> BTreeSet<&str> {
        script
            .lines()
            .filter_map(|line| line.trim().strip_suffix(')'))
            .filter(|label| !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .collect()
    }

    #[test]
    fn every_state_of_the_bash_loop_has_its_arm() {
        let script = script(Shell::Bash);
        let (states, arms) = (states(&script), arms(&script));
        assert!(states.contains("sms__sdk__subcmd__send"), "{states:?}");
        assert!(states.contains("sms__sdk__subcmd__idempotency__subcmd__resolve"), "{states:?}");
        let missing: Vec<_> = states.difference(&arms).collect();
        assert!(missing.is_empty(), "states without an arm: {missing:?}");
        assert!(!script.contains("sms__subcmd__sdk"), "a misspelt label is left");
    }

    #[test]
    fn the_bash_function_is_a_valid_identifier_and_registered() {
        let script = script(Shell::Bash);
        let defined: Vec<_> = script.lines().filter_map(|l| l.strip_suffix("() {")).collect();
        assert_eq!(defined, ["_sms__sdk"]);
        let registered: Vec<_> =
            script.lines().filter_map(|l| l.trim().strip_prefix("complete -F ")?.split(' ').next()).collect();
        assert_eq!(registered, ["_sms__sdk", "_sms__sdk"]);
    }

    #[test]
    fn the_bash_repair_changes_only_the_misspellings() {
        let before = "_sms-sdk() {\n    case \"${cmd}\" in\n        sms__sdk)\n            ;;\n        \
                      sms__subcmd__sdk__subcmd__send)\n            opts=\"sms__subcmd__sdk --to\"\n            ;;\n        \
                      sms__subcmd__sdkx)\n            ;;\n    esac\n}\n    \
                      complete -F _sms-sdk -o nosort -o bashdefault -o default sms-sdk\n";
        let after = "_sms__sdk() {\n    case \"${cmd}\" in\n        sms__sdk)\n            ;;\n        \
                     sms__sdk__subcmd__send)\n            opts=\"sms__subcmd__sdk --to\"\n            ;;\n        \
                     sms__subcmd__sdkx)\n            ;;\n    esac\n}\n    \
                     complete -F _sms__sdk -o nosort -o bashdefault -o default sms-sdk\n";
        assert_eq!(repair_bash(before), after);
        assert_eq!(repair_bash(after), after);
    }

    #[test]
    fn the_other_shells_scripts_are_clap_complete_s_own() {
        for shell in [Shell::Zsh, Shell::Fish, Shell::PowerShell, Shell::Elvish] {
            let mut own = Vec::new();
            clap_complete::generate(shell, &mut definition(), BIN, &mut own);
            assert_eq!(script(shell).into_bytes(), own, "{shell}");
        }
    }
}
