//! The completion scripts in the real shells: bash (also in POSIX mode), zsh and fish complete
//! each command's flags, the flags' values and the subcommands. A missing shell fails the test
//! (scripts/test.sh installs zsh and fish), and a shell that runs longer than [`TIMEOUT`] too.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::command;
use sms_sdk_cli::Env;

/// How long one shell may run.
const TIMEOUT: Duration = Duration::from_secs(20);

/// What `--provider` takes.
const PROVIDERS: [&str; 8] = ["twilio", "telnyx", "plivo", "vonage", "sinch", "aws", "infobip", "bandwidth"];
/// What `idempotency list --state` takes.
const STATES: [&str; 5] = ["reserved", "accepted", "rejected", "unknown", "unresolved"];
/// What `completions` takes.
const SHELLS: [&str; 5] = ["bash", "zsh", "fish", "powershell", "elvish"];
/// Flags of `send`.
const SEND_FLAGS: [&str; 8] =
    ["--to", "--body", "--from", "--provider", "--idempotency-key", "--media-url", "--store", "--json"];
/// Flags of `idempotency resolve`.
const RESOLVE_FLAGS: [&str; 5] = ["--sent", "--not-sent", "--provider", "--provider-id", "--store"];

/// What a shell printed, and whether it exited with success.
struct Ran {
    success: bool,
    out: String,
    err: String,
}

/// The path of an installed shell; a missing one fails the test.
fn shell(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{name} is not installed: run scripts/test.sh, which installs the shells"))
}

/// A new empty directory for one shell: its home and working directory.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sms-sdk-completions-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `sms-sdk completions SHELL` written to `path`.
fn write_script(shell: &str, path: &Path) {
    let o = command(&["completions", shell], &Env::default());
    assert_eq!(o.code, 0, "{shell}: {}", o.err);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, o.out).unwrap();
}

/// Runs `program` in `dir` (also its home) with no input, failing the test when it runs longer
/// than [`TIMEOUT`].
fn run(program: &Path, args: &[&str], dir: &Path) -> Ran {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("TERM", "xterm")
        .env_remove("BASH_ENV")
        .env_remove("ENV")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let (sender, receiver) = mpsc::channel();
    let pipes: [Box<dyn Read + Send>; 2] =
        [Box::new(child.stdout.take().unwrap()), Box::new(child.stderr.take().unwrap())];
    for (stream, mut pipe) in pipes.into_iter().enumerate() {
        let sender = sender.clone();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = sender.send((stream, String::from_utf8_lossy(&bytes).into_owned()));
        });
    }
    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} ({:?}) ran longer than {TIMEOUT:?}", program.display(), args.last());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut texts = [String::new(), String::new()];
    for _ in 0..texts.len() {
        let remaining = deadline.saturating_duration_since(Instant::now()).max(Duration::from_secs(1));
        match receiver.recv_timeout(remaining) {
            Ok((stream, text)) => texts[stream] = text,
            Err(error) => panic!("{} ({:?}): its output did not end: {error}", program.display(), args.last()),
        }
    }
    let [out, err] = texts;
    Ran { success: status.success(), out, err }
}

/// The words of a command line; a trailing space starts an empty word (the one completed).
fn words(line: &str) -> Vec<&str> {
    line.split(' ').collect()
}

/// Sources the bash script and calls the function `complete -p sms-sdk` names, as bash does for
/// a TAB at the end of the words; prints `COMPREPLY`, one a line.
const BASH_DRIVER: &str = r#"
source "$1" || exit 1
shift
spec="$(complete -p sms-sdk)" || exit 1
function="${spec##* -F }"
function="${function%% *}"
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
"$function" sms-sdk "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;

/// What bash offers at the end of `line`, in order, with its standard error.
fn bash_offers(line: &str, posix: bool, test: &str) -> (Vec<String>, String) {
    let dir = scratch(test);
    let script = dir.join("sms-sdk.bash");
    write_script("bash", &script);
    let script = script.to_str().unwrap();
    let mut args = vec!["--norc", "--noprofile"];
    if posix {
        args.push("--posix");
    }
    args.extend(["-c", BASH_DRIVER, "bash", script]);
    args.extend(words(line));
    let ran = run(&shell("bash"), &args, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ran.success, "bash, {line:?}: {}{}", ran.out, ran.err);
    (ran.out.lines().filter(|l| !l.is_empty()).map(str::to_owned).collect(), ran.err)
}

/// Set up in the interactive zsh: the script as the autoloaded function `_sms-sdk`, compinit,
/// TAB bound to `complete-word`, and a `compadd` that also prints each match it adds
/// (`MATCH:word`) between two markers.
const ZSH_INIT: &str = r#"
fpath=("$SMS_SDK_FPATH" $fpath)
autoload -U compinit && compinit -u -D
bindkey '^I' complete-word
compadd() {
  local word
  for word in "$@"; do
    [[ $word == (-|--) ]] && break
    if [[ $word == -[OAD]* ]]; then
      builtin compadd "$@"
      return
    fi
  done
  local -a hits
  builtin compadd -A hits "$@"
  (( $#hits )) || return 1
  builtin compadd "$@"
  for word in "${hits[@]}"; do print -r -- "MATCH:$word"; done
}
completion_start() { print -r -- "<<COMPLETIONS>>"; }
completion_end() { print -r -- "<<END>>"; }
compprefuncs=(completion_start)
comppostfuncs=(completion_end)
PS1='READY> '
"#;

/// Runs an interactive zsh on a pseudo-terminal (zsh/zpty): sources the set-up file ($1), waits
/// for its prompt, types the line ($2) and TAB, and prints what the terminal showed up to the
/// end marker.
const ZSH_DRIVER: &str = r#"
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "source ${(q)1}"
zpty -r -m z out '*READY> *' || exit 4
zpty -w -n z "$2"$'\t'
zpty -r -m z out '*<<END>>*' || exit 5
zpty -d z
print -r -- "$out"
"#;

/// What zsh offers for a TAB at the end of `line`, in order.
fn zsh_offers(line: &str, test: &str) -> Vec<String> {
    let dir = scratch(test);
    write_script("zsh", &dir.join("functions").join("_sms-sdk"));
    let init = dir.join("init.zsh");
    std::fs::write(&init, ZSH_INIT.replace("$SMS_SDK_FPATH", dir.join("functions").to_str().unwrap())).unwrap();
    let ran = run(&shell("zsh"), &["-f", "-c", ZSH_DRIVER, "zsh", init.to_str().unwrap(), line], &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ran.success, "zsh, {line:?}: {}{}", ran.out, ran.err);
    let shown = ran.out.split("<<COMPLETIONS>>").nth(1).unwrap_or_else(|| panic!("zsh, {line:?}: {}", ran.out));
    shown
        .lines()
        .filter_map(|l| l.split_once("MATCH:"))
        .map(|(_, word)| word.trim_end_matches(['\r', '\n']).to_owned())
        .collect()
}

/// What fish offers at the end of `line` (`complete -C`), without the descriptions.
fn fish_offers(line: &str, test: &str) -> Vec<String> {
    let dir = scratch(test);
    let script = dir.join("sms-sdk.fish");
    write_script("fish", &script);
    let ran = run(
        &shell("fish"),
        &["--no-config", "-c", "source $argv[1]; and complete -C $argv[2]", script.to_str().unwrap(), line],
        &dir,
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ran.success, "fish, {line:?}: {}{}", ran.out, ran.err);
    ran.out.lines().map(|l| l.split('\t').next().unwrap_or_default().to_owned()).collect()
}

fn set(words: &[String]) -> BTreeSet<&str> {
    words.iter().map(String::as_str).collect()
}

/// Fails unless `offered` holds every one of `expected`.
fn assert_offers(offered: &[String], expected: &[&str], what: &str) {
    let missing: Vec<_> = expected.iter().filter(|w| !offered.iter().any(|o| o == *w)).collect();
    assert!(missing.is_empty(), "{what}: {missing:?} not offered; offered {offered:?}");
}

/// Fails unless `offered` is exactly `expected` (in any order, once each).
fn assert_offers_exactly(offered: &[String], expected: &[&str], what: &str) {
    assert_eq!(set(offered), expected.iter().copied().collect(), "{what}: offered {offered:?}");
    assert_eq!(offered.len(), expected.len(), "{what}: offered {offered:?}");
}

#[test]
fn bash_completes_the_flags_of_send() {
    let (offered, _) = bash_offers("sms-sdk send --", false, "bash-send-flags");
    assert_offers(&offered, &SEND_FLAGS, "bash, send --");
    assert!(!offered.is_empty() && offered.iter().all(|w| w.starts_with("--")), "{offered:?}");
}

#[test]
fn bash_completes_exactly_the_providers_after_provider() {
    let (offered, _) = bash_offers("sms-sdk send --provider ", false, "bash-providers");
    assert_offers_exactly(&offered, &PROVIDERS, "bash, send --provider");
    let (offered, _) = bash_offers("sms-sdk send --provider t", false, "bash-providers-t");
    assert_offers_exactly(&offered, &["twilio", "telnyx"], "bash, send --provider t");
}

#[test]
fn bash_completes_the_states_after_state() {
    let (offered, _) = bash_offers("sms-sdk idempotency list --state ", false, "bash-states");
    assert_offers_exactly(&offered, &STATES, "bash, idempotency list --state");
}

#[test]
fn bash_completes_the_flags_of_a_nested_subcommand() {
    let (offered, _) = bash_offers("sms-sdk idempotency resolve --", false, "bash-resolve-flags");
    assert_offers(&offered, &RESOLVE_FLAGS, "bash, idempotency resolve --");
}

#[test]
fn bash_completes_the_shells_after_completions() {
    let (offered, _) = bash_offers("sms-sdk completions ", false, "bash-shells");
    assert_offers(&offered, &SHELLS, "bash, completions");
}

#[test]
fn bash_completes_the_subcommands_of_a_subcommand() {
    let (offered, _) = bash_offers("sms-sdk idempotency ", false, "bash-idempotency-subcommands");
    assert_offers(&offered, &["list", "show", "resolve", "reconcile"], "bash, idempotency");
}

#[test]
fn bash_in_posix_mode_loads_the_script_and_completes() {
    let (offered, err) = bash_offers("sms-sdk send --provider ", true, "bash-posix");
    assert!(err.is_empty(), "bash --posix: {err}");
    assert_offers_exactly(&offered, &PROVIDERS, "bash --posix, send --provider");
}

#[test]
fn zsh_completes_the_flags_of_send() {
    let offered = zsh_offers("sms-sdk send --", "zsh-send-flags");
    assert_offers(&offered, &SEND_FLAGS, "zsh, send --");
    assert!(offered.iter().all(|w| w.starts_with("--")), "{offered:?}");
}

#[test]
fn zsh_completes_exactly_the_providers_after_provider() {
    let offered = zsh_offers("sms-sdk send --provider ", "zsh-providers");
    assert_offers_exactly(&offered, &PROVIDERS, "zsh, send --provider");
}

#[test]
fn zsh_completes_the_states_after_state() {
    let offered = zsh_offers("sms-sdk idempotency list --state ", "zsh-states");
    assert_offers_exactly(&offered, &STATES, "zsh, idempotency list --state");
}

#[test]
fn zsh_completes_the_flags_of_a_nested_subcommand() {
    let offered = zsh_offers("sms-sdk idempotency resolve --", "zsh-resolve-flags");
    assert_offers(&offered, &RESOLVE_FLAGS, "zsh, idempotency resolve --");
}

#[test]
fn zsh_completes_the_shells_after_completions() {
    let offered = zsh_offers("sms-sdk completions ", "zsh-shells");
    assert_offers_exactly(&offered, &SHELLS, "zsh, completions");
}

#[test]
fn fish_completes_exactly_the_providers_after_provider() {
    let offered = fish_offers("sms-sdk send --provider ", "fish-providers");
    assert_offers_exactly(&offered, &PROVIDERS, "fish, send --provider");
}

#[test]
fn fish_completes_the_flags_of_send() {
    let offered = fish_offers("sms-sdk send --", "fish-send-flags");
    assert_offers(&offered, &SEND_FLAGS, "fish, send --");
    assert!(offered.iter().all(|w| w.starts_with("--")), "{offered:?}");
}

#[test]
fn fish_completes_the_states_and_the_flags_of_a_nested_subcommand() {
    let offered = fish_offers("sms-sdk idempotency list --state ", "fish-states");
    assert_offers_exactly(&offered, &STATES, "fish, idempotency list --state");
    let offered = fish_offers("sms-sdk idempotency resolve --", "fish-resolve-flags");
    assert_offers(&offered, &RESOLVE_FLAGS, "fish, idempotency resolve --");
}
