//! The environment variables each command reads, in one table, and the "Environment:" section
//! of each command's help written from it.

use clap::Command;

use crate::config::{self, PROVIDERS};
use crate::values::Provider;

/// A kind of variable the command reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Group {
    /// Each provider's credentials and sender.
    Credentials,
    /// The providers' credentials, read only to pick the default store.
    Configured,
    /// `SMS_SDK_<PROVIDER>_BASE_URL`.
    BaseUrls,
    /// `SMS_SDK_STORE`.
    Store,
    /// Where the default store lives.
    DataDirectory,
    /// Each provider's webhook secret.
    WebhookSecrets,
    /// `NO_COLOR`.
    NoColor,
}

/// What sends (and `validate`, which builds the same adapters) read.
const PROVIDERS_READ: &[Group] = &[Group::Credentials, Group::BaseUrls];
/// What the commands that open the default store read.
const STORE_READ: &[Group] = &[Group::Configured, Group::BaseUrls, Group::Store, Group::DataDirectory];

/// Each command (by its path of subcommand names; a command's subcommands read what it reads)
/// and the variables it reads. `NO_COLOR` is read by every command that clap parses.
const TABLE: &[(&[&str], &[Group])] = &[
    (&["send"], &[Group::Credentials, Group::BaseUrls, Group::Store, Group::DataDirectory]),
    (&["validate"], PROVIDERS_READ),
    (&["doctor"], PROVIDERS_READ),
    (&["idempotency"], STORE_READ),
    (&["idempotency", "reconcile"], &[Group::Credentials, Group::BaseUrls, Group::Store, Group::DataDirectory]),
    (&["suppression"], STORE_READ),
    (&["batch"], &[Group::Credentials, Group::BaseUrls, Group::Store, Group::DataDirectory]),
    (&["webhook"], &[Group::WebhookSecrets]),
];

/// The groups `path` reads: its own entry, else its nearest parent's.
pub(crate) fn groups(path: &[&str]) -> &'static [Group] {
    (0..=path.len())
        .rev()
        .find_map(|len| {
            let prefix = path.get(..len)?;
            TABLE.iter().find(|(p, _)| *p == prefix).map(|(_, groups)| *groups)
        })
        .unwrap_or_default()
}

/// The names in `group`.
pub(crate) fn names(group: Group) -> Vec<String> {
    let owned = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    match group {
        Group::Credentials | Group::Configured => PROVIDERS.iter().flat_map(|p| provider_names(p)).collect(),
        Group::BaseUrls => PROVIDERS.iter().map(|p| config::base_url_variable(p)).collect(),
        Group::Store => owned(&["SMS_SDK_STORE"]),
        Group::DataDirectory => owned(&crate::paths::VARIABLES),
        Group::WebhookSecrets => {
            let providers = [Provider::Twilio, Provider::Telnyx, Provider::Plivo, Provider::Vonage];
            providers.into_iter().map(|p| crate::webhook::secret_variable(p).to_owned()).collect()
        }
        Group::NoColor => owned(&["NO_COLOR"]),
    }
}

/// A provider's credential and sender variables, as the doctor checks them.
fn provider_names(provider: &str) -> Vec<String> {
    let table = config::provider_env(provider);
    table.required.iter().flat_map(|group| group.iter()).chain(table.optional).map(|n| (*n).to_owned()).collect()
}

/// What a group's variables do, as the heading of their names.
fn about(group: Group) -> &'static str {
    match group {
        Group::Credentials => "Provider credentials and senders (empty values count as unset)",
        Group::Configured => "Provider variables: any set makes state.db the default store, else emulator.db",
        Group::BaseUrls => "Base URLs replacing a provider's origin (the emulator, a proxy, a test server)",
        Group::Store => "the store URL when --store is not given: memory, sqlite:PATH, postgres://…, redis://…",
        Group::DataDirectory => "Where the default store lives (the data directory; LOCALAPPDATA, APPDATA on Windows)",
        Group::WebhookSecrets => "Webhook secrets (Telnyx: its base64 Ed25519 public key)",
        Group::NoColor => "any non-empty value turns colour off unless --color always",
    }
}

/// The "Environment:" section for `groups` (and `NO_COLOR` when `colour`).
pub(crate) fn section(groups: &[Group], colour: bool) -> String {
    let mut text = String::from("Environment:\n");
    let extra = colour.then_some(Group::NoColor);
    for group in groups.iter().copied().chain(extra) {
        let names = names(group);
        match (group, names.as_slice()) {
            (Group::Credentials | Group::Configured, _) => {
                text.push_str(&format!("  {}:\n", about(group)));
                for provider in PROVIDERS {
                    text.push_str(&format!("    {provider:<7} {}\n", provider_names(provider).join(" ")));
                }
            }
            (_, [name]) => text.push_str(&format!("  {name}: {}\n", about(group))),
            (_, names) => text.push_str(&format!("  {}:\n    {}\n", about(group), names.join(" "))),
        }
    }
    text
}

/// `command` with the "Environment:" section of each of its subcommands' help.
pub(crate) fn annotate(command: Command) -> Command {
    annotate_at(command, &mut Vec::new())
}

fn annotate_at(mut command: Command, path: &mut Vec<String>) -> Command {
    let names: Vec<String> = command.get_subcommands().map(|c| c.get_name().to_owned()).collect();
    for name in names {
        path.push(name.clone());
        command = command.mut_subcommand(&name, |sub| annotate_at(sub, path));
        path.pop();
    }
    let words: Vec<&str> = path.iter().map(String::as_str).collect();
    // The doctor parses its own arguments: `NO_COLOR` plays no part in it.
    let colour = words.first() != Some(&"doctor");
    let section = section(groups(&words), colour);
    let text = match command.get_after_help() {
        Some(own) => format!("{own}\n\n{section}"),
        None => section,
    };
    command.after_help(text)
}
