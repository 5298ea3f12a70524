//! `sms-sdk doctor`: the reference doctor, flag for flag and line for line. It parses its own
//! arguments exactly as the reference does, checks one provider's configuration offline, and
//! sends one real message only behind `--live` with explicit confirmations.

use std::io::Write;

use clap::{Arg, ArgAction, ArgMatches, Args, ColorChoice, FromArgMatches, value_parser};
use sms_sdk::adapter::AnyAdapter;
use sms_sdk::adapter::{Adapter, SupportStatus};
use sms_sdk::encoding::{Encoding, estimate_segments};
use sms_sdk::message::is_e164;
use sms_sdk::redact::{mask_phone_number, redact_url_userinfo};
use sms_sdk::{Category, Client, ErrorKind, Message, Sender};

use crate::Env;
use crate::config;
use crate::flags::Provider;

/// One of the doctor's flags: the usage text and `sms-sdk help doctor` are written from these.
#[derive(Debug)]
pub(crate) struct Flag {
    /// The flag without its dashes.
    pub(crate) long: &'static str,
    /// The placeholder of its value; `None` for a switch.
    pub(crate) value: Option<&'static str>,
    /// What it does.
    pub(crate) help: &'static str,
}

/// The doctor's flags, in the order of its usage text (`-h, --help` follows them).
pub(crate) const FLAGS: [Flag; 8] = [
    Flag {
        long: "adapter",
        value: Some("name"),
        help: "twilio, telnyx, plivo, vonage, sinch, aws, infobip or bandwidth (required)",
    },
    Flag {
        long: "body",
        value: Some("text"),
        help: "message body to estimate (default: \"Test message from SMS SDK doctor.\")",
    },
    Flag { long: "to", value: Some("+E164"), help: "recipient to check (format only)" },
    Flag {
        long: "from",
        value: Some("sender"),
        help: "sender: +E164 number, 3-8 digit short code, or alphanumeric ID",
    },
    Flag {
        long: "live",
        value: None,
        help: "send ONE real, billable message (needs --to, --confirm-to, --confirm-from)",
    },
    Flag { long: "confirm-to", value: Some("+E164"), help: "must equal --to for --live" },
    Flag { long: "confirm-from", value: Some("sender"), help: "must equal the sender in use for --live" },
    Flag { long: "json", value: None, help: "print one JSON object (checks, estimate, live result, exit code)" },
];

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
        let command = FLAGS.iter().fold(command, |command, flag| {
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

/// What the doctor does.
const ABOUT: &str = "Checks one provider's configuration without sending anything (a dry run, no network calls).";

/// The usage text, printed after a usage error.
fn usage() -> String {
    use std::fmt::Write as _;

    let names: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
    let mut text = format!("Usage: sms-sdk doctor --adapter <{}> [options]\n\n{ABOUT}\n\nOptions:\n", names.join("|"));
    for flag in &FLAGS {
        let name = match flag.value {
            Some(value) => format!("--{} <{value}>", flag.long),
            None => format!("--{}", flag.long),
        };
        let _ = writeln!(text, "  {name:<23} {}", flag.help);
    }
    let _ = writeln!(text, "  {:<23} show this help", "-h, --help");
    text
}

/// The help: the usage text and the variables the doctor reads.
fn help() -> String {
    let groups = crate::variables::groups(&["doctor"]);
    format!("{}\n{}", usage(), crate::variables::section(groups, false))
}

const DEFAULT_BODY: &str = "Test message from SMS SDK doctor.";
const OK: &str = "[ok]           ";
const FAIL: &str = "[fail]         ";
const INFO: &str = "[info]         ";
const NOT_VERIFIED: &str = "[not verified] ";
/// The credentials line when no request was made.
const NOT_SENT: &str = "credentials (the live send was not made)";

/// Parsed doctor options.
#[derive(Debug, PartialEq, Eq)]
struct Options {
    adapter: Provider,
    body: Option<String>,
    to: Option<String>,
    from: Option<String>,
    live: bool,
    confirm_to: Option<String>,
    confirm_from: Option<String>,
    json: bool,
}

/// What the arguments ask for.
#[derive(Debug, PartialEq, Eq)]
enum Parsed {
    Help,
    Run(Options),
}

/// The reference parser: `args` start after `doctor`.
fn parse(args: &[String]) -> Result<Parsed, String> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return Ok(Parsed::Help);
    }
    let (mut adapter, mut body, mut to, mut from, mut confirm_to, mut confirm_from) =
        (None, None, None, None, None, None);
    let (mut live, mut json) = (false, false);
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let slot = match arg.as_str() {
            "--live" => {
                live = true;
                continue;
            }
            "--json" => {
                json = true;
                continue;
            }
            "--adapter" => &mut adapter,
            "--body" => &mut body,
            "--to" => &mut to,
            "--from" => &mut from,
            "--confirm-to" => &mut confirm_to,
            "--confirm-from" => &mut confirm_from,
            other => return Err(format!("unknown option \"{other}\"")),
        };
        let value = iter.next().filter(|v| !v.starts_with("--")).ok_or_else(|| format!("{arg} needs a value"))?;
        *slot = Some(value.clone());
    }
    let Some(adapter) = adapter.as_deref().and_then(Provider::named) else {
        return Err("--adapter must be one of twilio, telnyx, plivo, vonage, sinch, aws, infobip, bandwidth".into());
    };
    Ok(Parsed::Run(Options { adapter, body, to, from, live, confirm_to, confirm_from, json }))
}

/// Runs the doctor with the arguments after `doctor`.
pub(crate) fn run(args: &[String], env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match parse(args) {
        Ok(Parsed::Help) => {
            let _ = out.write_all(help().as_bytes());
            0
        }
        Err(message) => {
            let _ = writeln!(err, "error: {message}\n\n{}", usage());
            2
        }
        Ok(Parsed::Run(options)) => {
            let json = options.json;
            let mut doctor = Doctor { options, env, out, failed: false, report: json.then(Report::default) };
            let code = doctor.run(err);
            if let Some(report) = doctor.report.take() {
                let _ = writeln!(doctor.out, "{}", report.to_json(&doctor.options, code));
            }
            code
        }
    }
}

/// What `--json` prints, gathered as the doctor goes.
#[derive(Default)]
struct Report {
    /// Each check: its status (`ok`, `fail`, `info`, `not_verified`) and message.
    checks: Vec<(&'static str, String)>,
    /// The body's encoding and segments.
    estimate: Option<serde_json::Value>,
    /// What the live send did.
    live: Option<serde_json::Value>,
    /// The base URL requests go to, and where it comes from.
    base_url: Option<serde_json::Value>,
}

impl Report {
    fn to_json(&self, options: &Options, code: u8) -> serde_json::Value {
        let checks: Vec<serde_json::Value> = self
            .checks
            .iter()
            .map(|(status, message)| serde_json::json!({"status": status, "message": message}))
            .collect();
        serde_json::json!({
            "adapter": options.adapter.as_str(),
            "mode": if options.live { "live" } else { "dry_run" },
            "base_url": self.base_url,
            "checks": checks,
            "estimate": self.estimate,
            "live": self.live,
            "exit_code": code,
        })
    }
}

/// A label's status in the JSON report.
fn status_name(label: &str) -> &'static str {
    match label {
        OK => "ok",
        FAIL => "fail",
        NOT_VERIFIED => "not_verified",
        _ => "info",
    }
}

struct Doctor<'a> {
    options: Options,
    env: &'a Env,
    out: &'a mut dyn Write,
    failed: bool,
    /// With `--json`: the report, printed at the end instead of the lines.
    report: Option<Report>,
}

impl Doctor<'_> {
    fn line(&mut self, label: &str, text: &str) {
        if label == FAIL {
            self.failed = true;
        }
        match &mut self.report {
            Some(report) => report.checks.push((status_name(label), text.to_owned())),
            None => {
                let _ = writeln!(self.out, "{label}{text}");
            }
        }
    }

    /// A line that is not a check (the header, the result): not in the JSON report.
    fn say(&mut self, text: &str) {
        if self.report.is_none() {
            let _ = writeln!(self.out, "{text}");
        }
    }

    /// Records what the live send did, for the JSON report.
    fn live_result(&mut self, live: serde_json::Value) {
        if let Some(report) = &mut self.report {
            report.live = Some(live);
        }
    }

    /// Refuses the live send: `message` on stderr (and, numbers masked as `masked`, in the JSON
    /// report); returns `code`.
    fn live_refused(&mut self, err: &mut dyn Write, code: u8, message: &str, masked: &str) -> u8 {
        self.line(NOT_VERIFIED, NOT_SENT);
        let _ = writeln!(err, "{message}");
        self.live_result(serde_json::json!({"attempted": false, "reason": masked}));
        code
    }

    fn run(&mut self, err: &mut dyn Write) -> u8 {
        let provider = self.options.adapter;
        let mode = if self.options.live { "LIVE: will send one billable message" } else { "dry run, no network calls" };
        self.say(&format!("SMS SDK doctor: {} ({mode})", provider.as_str()));

        self.environment(provider);
        let base_url = BaseUrl::of(self.env, provider);
        self.base_url(provider, &base_url);
        let sender = match &self.options.from {
            Some(text) => Some((config::parse_sender(text), text.clone())),
            None => config::env_sender(self.env, provider),
        };
        let adapter = match config::adapter(self.env, provider, sender.as_ref().map(|(s, _)| s.clone())) {
            Ok(adapter) => {
                let support = &adapter.info().support;
                let status = if support.status == SupportStatus::Partial { "partial" } else { "supported" };
                self.line(OK, &format!("adapter configuration is well-formed (support: {status})"));
                for note in support.notes.clone() {
                    self.line(INFO, &note);
                }
                Some(adapter)
            }
            Err(error) => {
                self.configuration_failed(provider, &error.to_string());
                None
            }
        };
        match &sender {
            None => {
                let variable = format!("{}_FROM", provider.as_str().to_ascii_uppercase());
                self.line(FAIL, &format!("no sender: pass --from or set {variable}"));
            }
            Some((_, text)) => self.line(INFO, &format!("sender: {}", display_sender(text))),
        }
        let body = self.options.body.clone().unwrap_or_else(|| DEFAULT_BODY.to_owned());
        self.body(&body);
        let to_valid = self.options.to.as_deref().map(is_e164);
        match (&self.options.to, to_valid) {
            (Some(to), Some(true)) => {
                let to = mask_phone_number(to);
                self.line(OK, &format!("recipient {to} is valid E.164 (format only)"));
            }
            (Some(_), _) => self.line(FAIL, "recipient is not E.164 (expected +<country code><number>)"),
            (None, _) => {}
        }
        if let (Some(adapter), Some((sender, _)), Some(true) | None) = (&adapter, &sender, to_valid) {
            self.validate(adapter.clone(), sender.clone(), &body);
        }
        if !self.options.live {
            // A live send says what it proved about the credentials once it is done.
            self.line(NOT_VERIFIED, "credentials (the dry run does not call the provider)");
        }
        self.line(NOT_VERIFIED, "sender provisioning, 10DLC/toll-free registration, and campaign status");
        self.line(NOT_VERIFIED, "webhook URL reachability and signing configuration");

        if !self.options.live {
            let result =
                if self.failed { "Result: problems found." } else { "Result: local checks passed. Nothing was sent." };
            self.say(result);
            return u8::from(self.failed);
        }
        let (Some(adapter), Some((_, sender_text)), false) = (adapter, sender, self.failed) else {
            let skipped = "Live send skipped: fix the failed checks first.";
            return self.live_refused(err, 1, skipped, skipped);
        };
        self.live(adapter, &sender_text, &body, &base_url, err)
    }

    /// The base URL line, and its JSON.
    fn base_url(&mut self, provider: Provider, base: &BaseUrl) {
        let source = if base.overridden { base.variable.as_str() } else { "production" };
        if let Some(report) = &mut self.report {
            report.base_url = Some(serde_json::json!({"url": base.shown, "source": source}));
        }
        let line = if base.overridden {
            format!("base URL: {} (from {})", base.shown, base.variable)
        } else if base.shown.is_empty() {
            // Infobip without the account's host: the variable check above names it.
            format!("base URL: none ({} is not set)", config::origin_variables(provider))
        } else {
            format!("base URL: {} (production; {} is not set)", base.shown, base.variable)
        };
        self.line(INFO, &line);
    }

    /// The lines of an adapter that could not be built from the environment (its `message`),
    /// in the variables' names: what is missing as the variables to set, and any other problem.
    fn configuration_failed(&mut self, provider: Provider, message: &str) {
        let message = spelled(provider, message);
        let missing = config::missing(self.env, provider);
        let table = config::provider_env(provider);
        let mut names = table.required.iter().flat_map(|group| group.iter()).chain(table.optional);
        // A message about an unset variable is said better by the variables to set.
        let about_unset = names.any(|name| message.contains(name) && self.env.get(name).is_none());
        if missing.is_empty() || !about_unset {
            self.line(FAIL, &format!("adapter configuration: {message}"));
        }
        if !missing.is_empty() {
            self.line(FAIL, &format!("adapter configuration: set {}", to_set(&missing)));
        }
    }

    /// The credentials line after a live send that ended with `error` (`None`: accepted): what
    /// the send proved, also in the JSON report's `live.credentials`.
    fn credentials(&mut self, error: Option<&sms_sdk::Error>, base: &BaseUrl) {
        let (label, status, text) = credentials_proof(error, &base.endpoint(self.options.adapter));
        if let Some(serde_json::Value::Object(live)) = self.report.as_mut().and_then(|r| r.live.as_mut()) {
            live.insert("credentials".into(), status.into());
        }
        self.line(label, &text);
    }

    fn environment(&mut self, provider: Provider) {
        let table = config::provider_env(provider);
        let hidden = |names: &[&str]| {
            if names.iter().any(|n| table.secrets.contains(n)) { " (value hidden)" } else { "" }
        };
        for group in table.required {
            let present: Vec<&str> = group.iter().copied().filter(|n| self.env.get(n).is_some()).collect();
            if present.is_empty() {
                self.line(FAIL, &format!("{} missing", group.join(" or ")));
            } else {
                let marker = hidden(&present);
                self.line(OK, &format!("{} set{marker}", present.join(", ")));
            }
        }
        for name in table.optional {
            if self.env.get(name).is_some() {
                let marker = hidden(&[name]);
                self.line(INFO, &format!("{name} set{marker}"));
            }
        }
        if provider == Provider::Sinch
            && let Err(message) = config::sinch_region(self.env)
        {
            self.line(FAIL, &message);
        }
        if provider == Provider::Aws
            && let Err(message) = config::check_aws_region(self.env)
        {
            self.line(FAIL, &message);
        }
        if provider == Provider::Bandwidth
            && self.env.get("BANDWIDTH_USERNAME").is_some()
            && self.env.get("BANDWIDTH_CLIENT_ID").is_some()
        {
            self.line(
                INFO,
                "BANDWIDTH_USERNAME is set: the API user's Basic credentials are used, not the OAuth 2.0 client \
                 credentials (unset BANDWIDTH_USERNAME to use those)",
            );
        }
    }

    fn body(&mut self, body: &str) {
        let preview = estimate_segments(body);
        let (encoding, unit) = match preview.encoding {
            Encoding::Gsm7 => ("GSM7", "septets"),
            Encoding::Ucs2 => ("UCS2", "UTF-16 units"),
        };
        if let Some(report) = &mut self.report {
            report.estimate = Some(serde_json::json!({
                "encoding": encoding,
                "units": preview.units,
                "segments": preview.segments,
                "non_gsm_characters": preview.non_gsm_characters,
            }));
        }
        let plural = if preview.segments == 1 { "" } else { "s" };
        self.line(
            INFO,
            &format!(
                "body: {encoding}, {} {unit}, {} segment{plural} (estimate, not a price quote)",
                preview.units, preview.segments
            ),
        );
        if !preview.non_gsm_characters.is_empty() {
            let quoted: Vec<String> = preview
                .non_gsm_characters
                .iter()
                .map(|c| serde_json::to_string(&c.to_string()).unwrap_or_default())
                .collect();
            self.line(INFO, &format!("characters forcing UCS-2: {}", quoted.join(" ")));
        }
    }

    fn validate(&mut self, adapter: AnyAdapter, sender: Sender, body: &str) {
        let to = self.options.to.clone().unwrap_or_else(|| "+10000000000".to_owned());
        let client = match Client::builder().adapter(adapter).build() {
            Ok(client) => client,
            Err(error) => return self.line(FAIL, &format!("client: {error}")),
        };
        let report = client.validate(&Message::new(to, body).from(sender));
        if report.issues.is_empty() {
            self.line(OK, "message passes local validation for this adapter");
        }
        for issue in &report.issues {
            self.line(FAIL, &format!("{}: {}", reference_field(issue.field), issue.message));
        }
    }

    fn live(&mut self, adapter: AnyAdapter, sender_text: &str, body: &str, base: &BaseUrl, err: &mut dyn Write) -> u8 {
        let Some(to) = self.options.to.clone().filter(|to| is_e164(to)) else {
            let needs = "Live send needs --to with an E.164 recipient.";
            return self.live_refused(err, 2, needs, needs);
        };
        if self.options.confirm_to.as_deref() != Some(to.as_str()) {
            let needs = format!("Live send needs --confirm-to {} (the recipient, repeated).", mask_phone_number(&to));
            return self.live_refused(err, 2, &needs, &needs);
        }
        if self.options.confirm_from.as_deref() != Some(sender_text) {
            let needs =
                |sender: &str| format!("Live send needs --confirm-from {sender} (the sender that will be used).");
            return self.live_refused(err, 2, &needs(sender_text), &needs(&display_sender(sender_text)));
        }
        let provider = adapter.info().name.clone();
        self.say(&format!(
            "Sending one message to {} from {} via {provider}...",
            mask_phone_number(&to),
            display_sender(sender_text)
        ));
        let client = match Client::builder().adapter(adapter).retry(sms_sdk::RetryPolicy::none()).build() {
            Ok(client) => client,
            Err(error) => {
                let code = self.live_failed(&error);
                self.credentials(Some(&error), base);
                return code;
            }
        };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let result = match runtime {
            Ok(runtime) => runtime.block_on(client.send(&Message::new(&to, body))),
            Err(error) => {
                let _ = writeln!(err, "error: could not start the async runtime: {error}");
                self.line(NOT_VERIFIED, NOT_SENT);
                return 1;
            }
        };
        match result {
            Ok(receipt) => {
                let delivery = serde_json::to_value(receipt.delivery).ok().and_then(|v| v.as_str().map(str::to_owned));
                self.live_result(serde_json::json!({
                    "attempted": true,
                    "accepted": true,
                    "provider": receipt.provider,
                    "provider_id": receipt.provider_id,
                    "delivery": delivery,
                }));
                self.line(
                    OK,
                    &format!(
                        "accepted by {}: providerId {}, delivery {} (not handset delivery)",
                        receipt.provider,
                        receipt.provider_id,
                        delivery.unwrap_or_default()
                    ),
                );
                self.credentials(None, base);
                0
            }
            Err(error) => {
                let code = self.live_failed(&error);
                self.credentials(Some(&error), base);
                code
            }
        }
    }

    fn live_failed(&mut self, error: &sms_sdk::Error) -> u8 {
        self.live_result(serde_json::json!({
            "attempted": true,
            "accepted": false,
            "error_code": error.code(),
            "message": error.to_string(),
            "retry_safe": error.is_retry_safe(),
        }));
        self.line(FAIL, &format!("{}: {error} (retrySafe: {})", error.code(), error.is_retry_safe()));
        1
    }
}

/// The base URL a provider's requests go to, as the doctor shows it.
struct BaseUrl {
    /// `SMS_SDK_<PROVIDER>_BASE_URL`.
    variable: String,
    /// Whether that variable replaces the production origin.
    overridden: bool,
    /// The URL, trailing slashes removed (as the adapter does) and any userinfo hidden.
    shown: String,
}

impl BaseUrl {
    /// The base URL `config` builds `provider`'s adapter with: the override when set, else the
    /// production origin.
    fn of(env: &Env, provider: Provider) -> Self {
        let set = config::origin_variable(env, provider);
        let overridden = set.is_some();
        let variable = set.unwrap_or_else(|| config::base_url_variable(provider));
        let url = config::origin(env, provider);
        let shown = redact_url_userinfo(url.trim_end_matches('/'));
        Self { variable, overridden, shown }
    }

    /// Who answered a live send: the provider, or the endpoint that replaces it.
    fn endpoint(&self, provider: Provider) -> String {
        if self.overridden {
            format!("the {} endpoint {}", self.variable, self.shown)
        } else {
            provider.as_str().to_owned()
        }
    }
}

/// An adapter's configuration message in the variables' names: the library's field names
/// ([`config::spelled`]) and its base URL (`SMS_SDK_<PROVIDER>_BASE_URL`).
fn spelled(provider: Provider, message: &str) -> String {
    let text = config::spelled(provider, message)
        .replace(&format!("The {} base URL", provider.as_str()), &config::base_url_variable(provider));
    // Infobip's base URL is the account's own host.
    text.replace("The Infobip base URL", config::INFOBIP_BASE_URL)
}

/// The variables to set, from [`config::missing`]: a credential that has an alternative names
/// it (`TWILIO_AUTH_TOKEN (or TWILIO_API_KEY_SID and TWILIO_API_KEY_SECRET)`).
fn to_set(missing: &[&str]) -> String {
    let vonage_basic = ["VONAGE_API_KEY", "VONAGE_API_SECRET"];
    let bandwidth_basic = ["BANDWIDTH_USERNAME", "BANDWIDTH_PASSWORD"];
    let items: Vec<String> = if missing == vonage_basic {
        vec!["VONAGE_API_KEY and VONAGE_API_SECRET (or VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY)".to_owned()]
    } else if missing.ends_with(&bandwidth_basic) && !missing.is_empty() {
        let rest = missing.get(..missing.len() - 2).unwrap_or_default().iter().map(|n| (*n).to_owned());
        rest.chain([
            "BANDWIDTH_USERNAME and BANDWIDTH_PASSWORD (or BANDWIDTH_CLIENT_ID and BANDWIDTH_CLIENT_SECRET)".to_owned()
        ])
        .collect()
    } else {
        missing
            .iter()
            .map(|name| match *name {
                "TWILIO_AUTH_TOKEN" => "TWILIO_AUTH_TOKEN (or TWILIO_API_KEY_SID and TWILIO_API_KEY_SECRET)".to_owned(),
                other => other.to_owned(),
            })
            .collect()
    };
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// What a live send that ended with `error` (`None`: accepted by `endpoint`) proves about the
/// credentials: the line's label, its JSON status and its text.
fn credentials_proof(error: Option<&sms_sdk::Error>, endpoint: &str) -> (&'static str, &'static str, String) {
    let Some(error) = error else {
        return (OK, "verified", format!("credentials verified: {endpoint} accepted the live send"));
    };
    let unproven = |why: String| (NOT_VERIFIED, "not_verified", format!("credentials ({why})"));
    match error.category() {
        Some(Category::Auth) => (
            FAIL,
            "refused",
            format!("credentials refused: {endpoint} answered the live send with an authentication error"),
        ),
        // A documented rejection of the message itself comes after the request was authenticated.
        Some(category @ (Category::Recipient | Category::Sender | Category::Account | Category::Compliance)) => (
            OK,
            "verified",
            format!(
                "credentials verified: {endpoint} authenticated the live send, then rejected the message ({category})"
            ),
        ),
        Some(Category::RateLimited) => {
            unproven(format!("{endpoint} rate-limited the live send, which does not show whether it accepts them"))
        }
        Some(Category::Request) => unproven(format!(
            "{endpoint} refused the live send as a malformed request or with an unlisted status, which does not show \
             whether it accepts them"
        )),
        Some(Category::Unreachable) => unproven(format!("the live send never reached {endpoint}")),
        _ if matches!(error.kind(), ErrorKind::Unknown(_)) => {
            unproven("the outcome of the live send is unknown, so it shows nothing about them".to_owned())
        }
        _ if error.attempts().is_empty() => unproven("the live send made no request".to_owned()),
        _ => unproven(format!("the live send does not show whether {endpoint} accepts them")),
    }
}

/// A sender for display: numbers masked.
fn display_sender(text: &str) -> String {
    if text.starts_with('+') { mask_phone_number(text) } else { text.to_owned() }
}

/// The reference's field names in the doctor's lines (`from`, `mediaUrls`, …).
fn reference_field(field: sms_sdk::Field) -> String {
    let snake = field.as_str();
    let mut camel = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            camel.extend(c.to_uppercase());
            upper = false;
        } else {
            camel.push(c);
        }
    }
    camel.replace("validityPeriodSecs", "validityPeriodSec")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn t264_argument_parsing() {
        assert_eq!(parse(&args(&["--help"])), Ok(Parsed::Help));
        assert!(parse(&args(&[])).is_err());
        assert!(parse(&args(&["--adapter", "sinchh"])).is_err());
        assert!(parse(&args(&["--adapter"])).is_err());
        assert!(parse(&args(&["--adapter", "twilio", "--bogus"])).is_err());
        assert!(parse(&args(&["--adapter", "--to"])).is_err());
        let Ok(Parsed::Run(options)) = parse(&args(&["--adapter", "twilio", "--to", "+14155550123"])) else { panic!() };
        assert_eq!((options.adapter.as_str(), options.to.as_deref()), ("twilio", Some("+14155550123")));
    }

    /// The usage text the reference prints (plus our `--json` and the providers after the first
    /// four), written from the flag table.
    #[test]
    fn the_usage_text_is_the_reference_s() {
        const REFERENCE: &str = "\
Usage: sms-sdk doctor --adapter <twilio|telnyx|plivo|vonage|sinch|aws|infobip|bandwidth> [options]

Checks one provider's configuration without sending anything (a dry run, no network calls).

Options:
  --adapter <name>        twilio, telnyx, plivo, vonage, sinch, aws, infobip or bandwidth (required)
  --body <text>           message body to estimate (default: \"Test message from SMS SDK doctor.\")
  --to <+E164>            recipient to check (format only)
  --from <sender>         sender: +E164 number, 3-8 digit short code, or alphanumeric ID
  --live                  send ONE real, billable message (needs --to, --confirm-to, --confirm-from)
  --confirm-to <+E164>    must equal --to for --live
  --confirm-from <sender> must equal the sender in use for --live
  --json                  print one JSON object (checks, estimate, live result, exit code)
  -h, --help              show this help
";
        assert_eq!(usage(), REFERENCE);
        assert!(help().starts_with(REFERENCE));
    }

    /// Every flag of the table is one the parser takes, with a value exactly when the table
    /// gives it one.
    #[test]
    fn the_parser_takes_every_flag_of_the_table() {
        for flag in &FLAGS {
            let mut words = vec!["--adapter".to_owned(), "twilio".to_owned(), format!("--{}", flag.long)];
            if flag.value.is_some() {
                assert_eq!(parse(&words), Err(format!("--{} needs a value", flag.long)));
                words.push("twilio".to_owned());
            }
            assert!(matches!(parse(&words), Ok(Parsed::Run(_))), "--{}", flag.long);
        }
    }
}
