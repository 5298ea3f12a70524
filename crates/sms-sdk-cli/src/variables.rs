//! The environment variables each command reads, in one table, and the "Environment:" section
//! of each command's help written from it.

use std::fmt::Write as _;

use clap::Command;

use crate::config;
use crate::flags::Provider;

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
    /// The correlation secret shared by sends and `serve`.
    Correlation,
    /// The default status callback URL of sends.
    StatusCallback,
    /// The secret `serve` signs forwarded events with.
    Forward,
    /// `NO_COLOR`.
    NoColor,
}

/// What sends (and `validate`, which builds the same adapters) read.
const PROVIDERS_READ: &[Group] = &[Group::Credentials, Group::BaseUrls];
/// What the commands that open the default store read.
const STORE_READ: &[Group] =
    &[Group::Configured, Group::WebhookSecrets, Group::BaseUrls, Group::Store, Group::DataDirectory];
/// What the commands that reach the providers with a store read (sends, and reconcile's lookups).
const PROVIDERS_AND_STORE_READ: &[Group] =
    &[Group::Credentials, Group::WebhookSecrets, Group::BaseUrls, Group::Store, Group::DataDirectory];
/// What sends read: the providers, the store, and the correlation secret and callback URL.
const SENDS_READ: &[Group] = &[
    Group::Credentials,
    Group::BaseUrls,
    Group::Store,
    Group::DataDirectory,
    Group::Correlation,
    Group::StatusCallback,
];
/// What `validate` reads: what sends read, but the correlation secret.
const VALIDATE_READ: &[Group] =
    &[Group::Credentials, Group::BaseUrls, Group::Store, Group::DataDirectory, Group::StatusCallback];
/// What `serve` reads.
const SERVE_READ: &[Group] =
    &[Group::WebhookSecrets, Group::Store, Group::DataDirectory, Group::Correlation, Group::Forward];

/// Each command (by its path of subcommand names; a command's subcommands read what it reads)
/// and the variables it reads. `NO_COLOR` is read by every command that clap parses.
const TABLE: &[(&[&str], &[Group])] = &[
    (&["send"], SENDS_READ),
    (&["validate"], VALIDATE_READ),
    (&["doctor"], PROVIDERS_READ),
    (&["idempotency"], STORE_READ),
    (&["idempotency", "reconcile"], PROVIDERS_AND_STORE_READ),
    (&["suppression"], STORE_READ),
    (&["batch"], SENDS_READ),
    (&["serve"], SERVE_READ),
    (&["webhook"], &[Group::WebhookSecrets]),
    (&["emulator"], &[Group::DataDirectory]),
    (&["store"], STORE_READ),
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
        Group::Credentials => Provider::ALL.into_iter().flat_map(provider_names).collect(),
        Group::Configured => Provider::ALL.into_iter().flat_map(configuring_names).collect(),
        Group::BaseUrls => Provider::ALL.into_iter().map(config::base_url_variable).collect(),
        Group::Store => owned(&["SMS_SDK_STORE"]),
        Group::DataDirectory => owned(&crate::paths::VARIABLES),
        Group::WebhookSecrets => {
            let secrets = Provider::ALL.into_iter().map(|p| crate::webhook::secret_variable(p).to_owned());
            let extra = [
                crate::webhook::SINCH_BASIC_VARIABLE,
                crate::webhook::INFOBIP_TOKEN_VARIABLE,
                crate::webhook::AWS_CERTIFICATE_VARIABLE,
            ];
            secrets.chain(extra.map(str::to_owned)).collect()
        }
        Group::Correlation => owned(&[crate::serve::CORRELATION_SECRET_VARIABLE]),
        Group::StatusCallback => owned(&[crate::sending::STATUS_CALLBACK_VARIABLE]),
        Group::Forward => owned(&[crate::serve::FORWARD_SECRET_VARIABLE]),
        Group::NoColor => owned(&["NO_COLOR"]),
    }
}

/// A provider's credential and sender variables, as the doctor checks them.
fn provider_names(provider: Provider) -> Vec<String> {
    let table = config::provider_env(provider);
    table.required.iter().flat_map(|group| group.iter()).chain(table.optional).map(|n| (*n).to_owned()).collect()
}

/// The variables of `provider` that count as configuring it (what selects `state.db`): all of
/// its variables, but for AWS only `AWS_FROM` (its credentials and region are every AWS tool's).
fn configuring_names(provider: Provider) -> Vec<String> {
    if provider == Provider::Aws { vec!["AWS_FROM".to_owned()] } else { provider_names(provider) }
}

/// What a group's variables do, as the heading of their names.
fn about(group: Group) -> &'static str {
    match group {
        Group::Credentials => "Provider credentials and senders (empty values count as unset)",
        Group::Configured => {
            "Provider variables (and the webhook secrets serve reads): any set makes state.db the default store, else emulator.db"
        }
        Group::BaseUrls => "Base URLs replacing a provider's origin (the emulator, a proxy, a test server)",
        Group::Store => {
            "the store URL when --store is not given: memory, sqlite:PATH, postgres://… (or postgresql://…), redis://…, rediss://…, redis-cluster://…, rediss-cluster://…, dynamodb://TABLE?region=…&endpoint=… (which finds its credentials and region as AWS's tools do: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE, AWS_REGION, the shared config files, SSO, web identity, the container or instance role)"
        }
        Group::DataDirectory => "Where the default store lives (the data directory; LOCALAPPDATA, APPDATA on Windows)",
        Group::WebhookSecrets => {
            "Webhook secrets (Telnyx: its base64 Ed25519 public key; Sinch: its HMAC secret, or SINCH_WEBHOOK_BASIC user:password of the callback URL; AWS: the SNS topic ARNs to accept, comma-separated, and SMS_SDK_AWS_SNS_CERTIFICATE a certificate to trust instead of fetching AWS's; Infobip: INFOBIP_WEBHOOK_BASIC user:password of its callbacks, or INFOBIP_WEBHOOK_TOKEN the token of their URL's sms_sdk_token; Bandwidth: BANDWIDTH_WEBHOOK_BASIC user:password of the application's callbacks)"
        }
        Group::Correlation => {
            "the secret (32+ bytes, shared with `serve`) of the correlation references keyed sends carry"
        }
        Group::StatusCallback => "the status callback URL of a message without --webhook-url",
        Group::Forward => "The secret forwarded events are signed with (whsec_ and base64, Standard Webhooks)",
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
                let _ = writeln!(text, "  {}:", about(group));
                for provider in Provider::ALL {
                    let names =
                        if group == Group::Configured { configuring_names(provider) } else { provider_names(provider) };
                    let _ = writeln!(text, "    {:<9} {}", provider.as_str(), names.join(" "));
                }
                if group == Group::Credentials {
                    let _ =
                        writeln!(text, "    (SINCH_REGION: us, eu, au, br or ca, the service plan's; us when unset)");
                    let _ = writeln!(
                        text,
                        "    (AWS: only AWS_FROM or SMS_SDK_AWS_BASE_URL select it; the credentials alone do not)"
                    );
                    let _ = writeln!(
                        text,
                        "    (INFOBIP_BASE_URL: the account's own API host, https://<id>.api.infobip.com; Bandwidth: \
                         BANDWIDTH_USERNAME and BANDWIDTH_PASSWORD, or BANDWIDTH_CLIENT_ID and BANDWIDTH_CLIENT_SECRET \
                         for OAuth 2.0, used when BANDWIDTH_USERNAME is unset)"
                    );
                }
            }
            (_, [name]) => {
                let _ = writeln!(text, "  {name}: {}", about(group));
            }
            (_, names) => {
                let _ = writeln!(text, "  {}:\n    {}", about(group), names.join(" "));
            }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failed test

    use std::collections::BTreeSet;
    use std::sync::{Arc, Mutex};

    use crate::Env;

    /// A command's path, its arguments, and the variables set.
    type Case<'a> = (Vec<&'a str>, Vec<&'a str>, &'a [(&'a str, &'a str)]);

    /// A directory of its own for the default stores the commands open.
    struct Home(std::path::PathBuf);

    impl Drop for Home {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn home() -> Home {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("sms-sdk-variables-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Home(dir)
    }

    fn run(args: &[&str], env: &Env) -> (u8, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = crate::run(args.iter().copied(), env, &mut out, &mut err);
        (code, String::from_utf8_lossy(&out).into_owned())
    }

    /// The names `args` read, run with `vars` set.
    fn reads(args: &[&str], vars: &[(&str, &str)]) -> BTreeSet<String> {
        let env: Env = vars.iter().copied().collect();
        let (env, reads): (Env, Arc<Mutex<BTreeSet<String>>>) = env.recording();
        run(args, &env);
        reads.lock().unwrap().clone()
    }

    /// Every variable a command reads (recorded while it runs, along the paths that read the
    /// most) is named in its help.
    #[test]
    fn every_variable_read_is_in_the_help_of_the_command_that_reads_it() {
        let home = home();
        let home_dir = home.0.to_str().unwrap();
        let csv = home.0.join("rows.csv");
        std::fs::write(&csv, "to,body\n+14155550123,hi\n").unwrap();
        let csv = csv.to_str().unwrap();
        let twilio = [
            ("TWILIO_ACCOUNT_SID", "AC0123456789abcdef0123456789abcdef"),
            ("TWILIO_AUTH_TOKEN", "token"),
            ("TWILIO_FROM", "+15005550006"),
            ("SMS_SDK_TWILIO_BASE_URL", "http://127.0.0.1:9"),
            ("HOME", home_dir),
        ];
        let home_only = [("HOME", home_dir)];
        let to = "+14155550123";
        let mut cases: Vec<Case<'_>> = vec![
            (vec!["send"], vec!["--to", to, "--body", "hi", "--idempotency-key", "k", "--timeout-ms", "200"], &twilio),
            (vec!["validate"], vec!["--to", to, "--body", "hi"], &[]),
            (vec!["validate"], vec!["--to", to, "--body", "hi"], &twilio),
            (vec!["idempotency", "list"], vec![], &home_only),
            (vec!["idempotency", "show"], vec!["k"], &home_only),
            (vec!["idempotency", "resolve"], vec!["k", "--not-sent"], &home_only),
            (vec!["idempotency", "reconcile"], vec![], &twilio),
            (vec!["suppression", "list"], vec![], &home_only),
            (vec!["suppression", "check"], vec![to], &home_only),
            (vec!["batch"], vec!["--csv", csv, "--body-column", "body", "--key-prefix", "k", "--dry-run"], &twilio),
        ];
        for provider in ["twilio", "telnyx", "plivo", "vonage", "sinch", "aws", "infobip", "bandwidth"] {
            cases.push((vec!["webhook", "verify"], vec!["--provider", provider, "--url", "https://example.com/"], &[]));
        }
        for (path, args, vars) in cases {
            let read = reads(&[path.as_slice(), args.as_slice()].concat(), vars);
            assert!(!read.is_empty(), "{path:?} read nothing");
            let (code, help) = run(&[path.as_slice(), &["--help"]].concat(), &Env::default());
            assert_eq!(code, 0, "{path:?}");
            for name in &read {
                assert!(help.contains(name), "{path:?} reads {name}, which its help does not name:\n{help}");
            }
        }
        // The doctor parses its own flags: its help, and clap's for `sms-sdk help doctor`.
        for provider in ["twilio", "telnyx", "plivo", "vonage", "sinch", "aws", "infobip", "bandwidth"] {
            let read = reads(&["doctor", "--adapter", provider, "--to", to], &twilio);
            for help in [run(&["doctor", "--help"], &Env::default()).1, run(&["help", "doctor"], &Env::default()).1] {
                for name in &read {
                    assert!(help.contains(name), "doctor reads {name}, which its help does not name:\n{help}");
                }
            }
        }
    }

    /// Each group's names are ones the command may read (a variable of ours, or `NO_COLOR`).
    #[test]
    fn the_table_names_only_variables_of_ours() {
        for group in [
            super::Group::Credentials,
            super::Group::BaseUrls,
            super::Group::Store,
            super::Group::DataDirectory,
            super::Group::WebhookSecrets,
        ] {
            for name in super::names(group) {
                assert!(Env::is_ours(&name), "{name}");
            }
        }
    }
}
