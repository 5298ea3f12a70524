//! `sms-sdk send` and `sms-sdk validate`.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use sms_sdk::adapter::AnyAdapter;
use sms_sdk::error::AttemptOutcome;
use sms_sdk::message::format_timestamp;
use sms_sdk::redact::mask_phone_number;
use sms_sdk::store::Stores;
use sms_sdk::store::suppression::Entry;
use sms_sdk::suppression::SuppressionPolicy;
use sms_sdk::validate::Field;
use sms_sdk::{
    Category, Client, ClientBuilder, Error, ErrorKind, Failover, Message, PhoneNumber, Receipt, SendOptions,
};

use crate::cli::{MessageArgs, MessageFields, ValidateArgs};
use crate::config::{self, PROVIDERS};
use crate::paths::Sends;
use crate::spinner::{CONNECTING, Spinner, Spinners};
use crate::style::{Colour, Output};
use crate::values::Provider;
use crate::{EXIT_CONFIGURATION, EXIT_FAILED, EXIT_OK, EXIT_UNKNOWN, Env, exit_code};

/// The message the flags describe.
fn message(args: &MessageFields) -> Result<Message, Error> {
    let mut message = Message::new(&args.to, &args.body);
    message.from = args.from.as_deref().map(config::parse_sender);
    message.media_urls.clone_from(&args.media_urls);
    message.send_at = args.send_at.as_deref().map(Message::parse_send_at).transpose()?;
    message.validity_period_secs = args.validity_sec;
    message.webhook_url.clone_from(&args.webhook_url);
    message.idempotency_key.clone_from(&args.idempotency_key);
    Ok(message)
}

/// The adapters of the `--provider` flags (`providers`), or of every provider with any variable
/// set; `None` when no provider variable is set at all (the embedded emulator stands in). A
/// provider that is named or mentioned must be complete: what is missing is a configuration
/// error naming it.
pub(crate) fn configured_adapters(providers: &[Provider], env: &Env) -> Result<Option<Vec<AnyAdapter>>, (u8, String)> {
    let names: Vec<&str> = if providers.is_empty() {
        PROVIDERS.into_iter().filter(|p| config::is_mentioned(env, p)).collect()
    } else {
        providers.iter().map(|p| p.as_str()).collect()
    };
    if names.is_empty() {
        return Ok(None);
    }
    let mut adapters = Vec::new();
    for name in names {
        let built = config::checked(env, name).map_err(|config::Unbuilt { code, message }| {
            let text = match code {
                None => format!("configuration: {message}"),
                Some(code) => format!("{code}: {name}: {message}"),
            };
            (EXIT_CONFIGURATION, text)
        })?;
        adapters.push(built.any());
    }
    Ok(Some(adapters))
}

/// Refuses a send that no adapter has a sender for: without `--from` (`from`), at least one of
/// `adapters` needs its `<PROVIDER>_FROM` (a missing variable is a configuration error, exit 7).
pub(crate) fn require_sender(adapters: &[AnyAdapter], from: Option<&str>) -> Result<(), (u8, String)> {
    if from.is_some() || adapters.iter().any(|a| sms_sdk::Adapter::info(a).default_from.is_some()) {
        return Ok(());
    }
    let variables: Vec<&str> =
        adapters.iter().map(|a| config::sender_variables(&sms_sdk::Adapter::info(a).name)).collect();
    let message = format!("configuration: no sender: set {}, or pass --from", variables.join(", or "));
    Err((EXIT_CONFIGURATION, message))
}

/// A client builder with the flags' adapters, failover and timeout.
fn builder(args: &MessageArgs, adapters: Vec<AnyAdapter>) -> ClientBuilder {
    let mut builder = Client::builder().adapters(adapters);
    if args.fallback {
        builder = builder.failover(Failover::OnEligibleRejection);
    }
    if let Some(ms) = args.timeout_ms {
        builder = builder.timeout(Duration::from_millis(ms));
    }
    builder
}

/// `builder` guarded by the store: its suppression list refuses an opted-out recipient before
/// any request (`policy`), and its records (when the send is keyed) make a repeat replay.
pub(crate) fn guarded(
    builder: ClientBuilder,
    stores: &Stores,
    policy: &SuppressionPolicy,
    keyed: bool,
) -> ClientBuilder {
    let builder = builder.before_send(policy.clone().before_send());
    if keyed { builder.idempotency(Arc::clone(&stores.records)) } else { builder }
}

/// The suppression policy of `stores` for sends through `adapters`: for a message without a
/// sender, the scope of the first adapter's default sender is checked too.
pub(crate) fn policy(stores: &Stores, adapters: &[AnyAdapter]) -> SuppressionPolicy {
    let policy = SuppressionPolicy::new(Arc::clone(&stores.suppression));
    match adapters.iter().find_map(|a| sms_sdk::Adapter::info(a).default_from.clone()) {
        Some(sender) => policy.default_sender(sender),
        None => policy,
    }
}

/// `builder` with a hook that tells `spinner` when a provider rate-limited the send and the
/// client waits before retrying (the `Retry-After` wait happens inside [`Client::send`]).
pub(crate) fn watch_retries(builder: ClientBuilder, spinner: &Spinner) -> ClientBuilder {
    let message = spinner.handle();
    builder.on_attempt(move |event| {
        if let AttemptOutcome::Rejected { category: Category::RateLimited, retry_after, .. } = &event.attempt.outcome {
            let provider = &event.attempt.provider;
            message.set(match retry_after {
                Some(wait) => {
                    format!("rate-limited by {provider}: waiting {} s (Retry-After) to retry", wait.as_secs())
                }
                None => format!("rate-limited by {provider}: backing off to retry"),
            });
        }
    })
}

/// The flag that sets `field`, when the command has one.
fn flag(field: Field) -> Option<&'static str> {
    #[allow(clippy::wildcard_enum_match_arm)] // `Field` is non-exhaustive: new fields have no flag yet
    match field {
        Field::To => Some("--to"),
        Field::From => Some("--from"),
        Field::Body => Some("--body"),
        Field::MediaUrls => Some("--media-url"),
        Field::SendAt => Some("--send-at"),
        Field::ValidityPeriodSecs => Some("--validity-sec"),
        Field::WebhookUrl => Some("--webhook-url"),
        Field::IdempotencyKey => Some("--idempotency-key"),
        _ => None,
    }
}

/// The error's message as the command spells things: the field's name becomes its flag.
fn command_text(message: &str, field: Option<Field>) -> String {
    let Some((field, flag)) = field.and_then(|f| flag(f).map(|flag| (f, flag))) else { return message.to_owned() };
    let name = field.as_str();
    let text = if name.contains('_') { message.replace(name, flag) } else { message.to_owned() };
    text.replace(&format!("`{name}`"), &format!("`{flag}`"))
}

/// What the command knows of a send when it reports its result.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reporting<'a> {
    /// JSON or text, and the streams' styles.
    pub(crate) output: Output,
    /// The embedded emulator stood in for the providers.
    pub(crate) emulated: bool,
    /// The send's idempotency key, when it had one.
    pub(crate) key: Option<&'a str>,
    /// `--fallback` was on, with this many adapters.
    pub(crate) failover: Option<usize>,
}

impl<'a> Reporting<'a> {
    /// The reporting of `args`'s send through `adapters` adapters (`emulated`: the embedded one).
    pub(crate) fn of(args: &'a MessageArgs, adapters: usize, emulated: bool) -> Self {
        Self {
            output: args.output,
            emulated,
            key: args.message.idempotency_key.as_deref(),
            failover: args.fallback.then_some(adapters),
        }
    }
}

/// Why failover stopped at `error`, when it did: a rejection no other provider is tried after.
fn failover_note(error: &Error, adapters: usize) -> Option<String> {
    // The rejection the chain ended on: the error itself, or the last of every provider's.
    #[allow(clippy::wildcard_enum_match_arm)] // `ErrorKind` is non-exhaustive: only rejections stop failover
    let last = match error.kind() {
        ErrorKind::AllRejected => error.rejections().last()?,
        ErrorKind::Rejected(_) => error,
        _ => return None,
    };
    let ErrorKind::Rejected(category) = last.kind() else { return None };
    let tried = error.attempts().iter().map(|a| a.provider.as_str()).collect::<std::collections::BTreeSet<_>>();
    if last.allows_failover() || tried.len() >= adapters {
        return None;
    }
    let provider = last.provider_name().unwrap_or("the provider");
    Some(format!(
        "failover stopped at {provider}: a {category} rejection is not one another provider might accept, so the \
         other {} configured provider(s) were not tried (failover follows auth, account, sender, rate_limited and \
         unreachable rejections)",
        adapters.saturating_sub(tried.len())
    ))
}

/// The exit code of a failed send: the command's one `before_send` is the suppression list, so
/// its failure is a store error (exit 7).
fn send_exit_code(error: &Error) -> u8 {
    if error.kind() == ErrorKind::BeforeSend { EXIT_CONFIGURATION } else { exit_code(error.kind()) }
}

/// Reports an error as JSON or text and returns its exit code.
pub(crate) fn report_error(error: &Error, how: Reporting<'_>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let record = error.to_record();
    let flag = record.field.and_then(flag);
    let code = send_exit_code(error);
    let output = how.output;
    if output.json {
        let mut body = serde_json::to_value(&record).unwrap_or_default();
        if let (Some(flag), Some(object)) = (flag, body.as_object_mut()) {
            object.insert("flag".into(), flag.into());
        }
        let _ = writeln!(out, "{}", serde_json::json!({ "error": body, "emulated": how.emulated }));
        return code;
    }
    let text = command_text(&error.to_string(), record.field);
    let colour = if code == EXIT_UNKNOWN { Colour::Yellow } else { Colour::Red };
    let _ = writeln!(err, "error: {}: {text}", output.streams.err.paint(error.code(), colour));
    if error.kind() == ErrorKind::BeforeSend
        && let Some(source) = std::error::Error::source(error)
    {
        let _ = writeln!(err, "the suppression list could not be read: {source}");
    }
    if let Some(why) = error.policy_reason() {
        let _ = writeln!(err, "why: {why}");
    }
    if let Some(reason) = record.reason {
        let reason = serde_json::to_value(reason).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        let _ = writeln!(err, "reason: {reason}");
    }
    if let Some(category) = record.category {
        let _ = writeln!(err, "category: {category}");
    }
    if let Some(note) = how.failover.and_then(|adapters| failover_note(error, adapters)) {
        let _ = writeln!(err, "{note}");
    }
    let _ = writeln!(err, "{}", crate::advice::line(error, how.key));
    code
}

/// Where `receipt`'s message went, when that is not its provider's own API (an emulator, a
/// proxy): the endpoint of its last request.
fn foreign_endpoint(receipt: &Receipt) -> Option<&str> {
    let endpoint = receipt.attempts.last()?.endpoint.as_deref()?;
    (!config::is_own_endpoint(&receipt.provider, endpoint)).then_some(endpoint)
}

/// Prints an accepted (or replayed) result.
pub(crate) fn report_receipt(receipt: &Receipt, how: Reporting<'_>, out: &mut dyn Write) {
    if how.output.json {
        let mut body = serde_json::to_value(receipt).unwrap_or_default();
        if let Some(object) = body.as_object_mut() {
            // A receipt is the accepted outcome; the command's JSON says so, as it always has.
            object.shift_insert(3, "handoff".into(), "accepted".into());
            object.insert("emulated".into(), how.emulated.into());
        }
        let _ = writeln!(out, "{body}");
        return;
    }
    let marker = if how.emulated { " [emulated: nothing left this machine]" } else { "" };
    let _ = writeln!(
        out,
        "{} by {}{marker}: provider id {}, delivery {} (not handset delivery)",
        how.output.streams.out.paint("accepted", Colour::Green),
        receipt.provider,
        receipt.provider_id,
        serde_json::to_value(receipt.delivery).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
    );
    if !how.emulated
        && let Some(endpoint) = foreign_endpoint(receipt)
    {
        let variable = config::base_url_variable(&receipt.provider);
        let _ = writeln!(out, "sent to {endpoint} ({variable}), not {}'s own API", receipt.provider);
    }
    let _ = writeln!(out, "id {}, {} {} segment(s)", receipt.id, receipt.encoding.as_str(), receipt.segments);
    if receipt.replayed {
        let _ =
            writeln!(out, "replayed: an earlier send with this idempotency key was accepted; no new request was made");
    }
}

/// Opens the store a send uses, for its suppression list and, when keyed, its records:
/// `--store`, `SMS_SDK_STORE`, or the data directory's file for `sends`, with a spinner from
/// `spinners` while it connects.
pub(crate) async fn open_stores(
    named: Option<&str>,
    env: &Env,
    sends: Sends,
    spinners: Spinners,
) -> Result<Stores, Error> {
    let url = crate::paths::store_url(named, env, sends)
        .map_err(|message| crate::store::store_error(sms_sdk::store::StoreError::new(message)))?;
    spinners.during(CONNECTING, Stores::open(&url)).await.map_err(crate::store::store_error)
}

/// The opt-out that suppresses `message`'s recipient in `stores`, checked as `policy` checks it
/// (the account, and the message's sender or the policy's default one).
pub(crate) async fn suppressed(
    message: &Message,
    stores: &Stores,
    policy: &SuppressionPolicy,
) -> Result<Option<Entry>, sms_sdk::store::StoreError> {
    let Ok(recipient) = PhoneNumber::parse(&message.to) else { return Ok(None) };
    stores.suppression.check(&recipient, &policy.scopes(message)).await
}

/// An opt-out as one phrase: `+1********23 opted out (account, keyword:STOP) at …`.
pub(crate) fn opted_out(entry: &Entry) -> String {
    let at = format_timestamp(time::OffsetDateTime::from(entry.at));
    format!("{} opted out ({}, {}) at {at}", entry.recipient.masked(), entry.scope, entry.reason)
}

/// `sms-sdk send`.
pub(crate) async fn send(args: MessageArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let message = match message(&args.message) {
        Ok(message) => message,
        Err(error) => return report_error(&error, Reporting::of(&args, 0, false), out, err),
    };
    let adapters = match configured_adapters(&args.message.providers, env) {
        Ok(adapters) => adapters,
        Err((code, text)) => {
            let _ = writeln!(err, "error: {text}");
            return code;
        }
    };
    if let Some(adapters) = &adapters
        && let Err((code, text)) = require_sender(adapters, args.message.from.as_deref())
    {
        let _ = writeln!(err, "error: {text}");
        return code;
    }
    let sends = if adapters.is_some() { Sends::Real } else { Sends::Emulated };
    let spinners = Spinners::new(env, args.output.json);
    let stores = match open_stores(args.store.as_deref(), env, sends, spinners).await {
        Ok(stores) => stores,
        Err(error) => return report_error(&error, Reporting::of(&args, 0, sends == Sends::Emulated), out, err),
    };
    let Some(adapters) = adapters else {
        return crate::emulator::embedded_send(&args, message, &stores, spinners, out, err).await;
    };
    let how = Reporting::of(&args, adapters.len(), false);
    let spinner = spinners.spinner("sending");
    let policy = policy(&stores, &adapters);
    let builder = guarded(watch_retries(builder(&args, adapters), &spinner), &stores, &policy, how.key.is_some());
    let sending = Sending { args: &args, message: &message, stores: &stores, policy: &policy, how };
    dispatch(sending, builder, spinner, out, err).await.0
}

/// One send the command makes: its flags, message, store and policy, and how it is reported.
pub(crate) struct Sending<'a> {
    pub(crate) args: &'a MessageArgs,
    pub(crate) message: &'a Message,
    pub(crate) stores: &'a Stores,
    pub(crate) policy: &'a SuppressionPolicy,
    pub(crate) how: Reporting<'a>,
}

/// Builds the client, notes an override of the suppression list, sends and reports the result;
/// the exit code, and the receipt when accepted.
pub(crate) async fn dispatch(
    sending: Sending<'_>,
    builder: ClientBuilder,
    spinner: Spinner,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> (u8, Option<Receipt>) {
    let Sending { args, message, stores, policy, how } = sending;
    let client = match builder.build() {
        Ok(client) => client,
        Err(error) => return (report_error(&error, how, out, err), None),
    };
    let mut options = SendOptions::default();
    if let Some(reason) = &args.policy_override {
        match suppressed(message, stores, policy).await {
            Ok(Some(entry)) => {
                let reason: String = reason.chars().take(200).collect();
                let _ = writeln!(
                    err,
                    "warning: {}: sending anyway, as --policy-override {reason:?} asks (this one message only)",
                    opted_out(&entry)
                );
            }
            Ok(None) => {
                let _ = writeln!(err, "note: --policy-override: the recipient is not suppressed; nothing to override");
            }
            // The send's own check reports the store's failure.
            Err(_) => {}
        }
        options = options.policy_override(reason.clone());
    }
    match spinner.during(client.send_with(message, options)).await {
        Ok(receipt) => {
            report_receipt(&receipt, how, out);
            (EXIT_OK, Some(receipt))
        }
        Err(error) => (report_error(&error, how, out, err), None),
    }
}

/// `sms-sdk validate`.
pub(crate) async fn validate(args: &ValidateArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let how = Reporting { output: args.output, emulated: false, key: None, failover: None };
    let message = match message(&args.message) {
        Ok(message) => message,
        Err(error) => return report_error(&error, how, out, err),
    };
    let (adapters, sends) = match configured_adapters(&args.message.providers, env) {
        Ok(Some(adapters)) => (adapters, Sends::Real),
        Ok(None) => match crate::emulator::embedded_adapter("http://127.0.0.1:9") {
            Ok(adapter) => (vec![adapter], Sends::Emulated),
            Err(error) => return report_error(&error, Reporting { emulated: true, ..how }, out, err),
        },
        Err((code, text)) => {
            let _ = writeln!(err, "error: {text}");
            return code;
        }
    };
    let stores = match open_stores(args.store.as_deref(), env, sends, Spinners::new(env, args.output.json)).await {
        Ok(stores) => stores,
        Err(error) => return report_error(&error, how, out, err),
    };
    let policy = policy(&stores, &adapters);
    let client = match Client::builder().adapters(adapters).build() {
        Ok(client) => client,
        Err(error) => return report_error(&error, how, out, err),
    };
    let suppressed = match suppressed(&message, &stores, &policy).await {
        Ok(found) => found,
        Err(error) => return report_error(&crate::store::store_error(error), how, out, err),
    };
    let report = client.validate(&message);
    let supported = report.supported && suppressed.is_none();
    if args.output.json {
        let mut body = serde_json::to_value(&report).unwrap_or_default();
        if let Some(object) = body.as_object_mut() {
            let entry = suppressed.as_ref().map(|entry| {
                serde_json::json!({
                    "recipient": entry.recipient.masked(),
                    "scope": entry.scope.to_string(),
                    "at": format_timestamp(time::OffsetDateTime::from(entry.at)),
                    "reason": entry.reason,
                })
            });
            object.insert("suppressed".into(), entry.unwrap_or_default());
            object.insert("supported".into(), supported.into());
        }
        let _ = writeln!(out, "{body}");
    } else {
        let p = &report.preview;
        let _ = writeln!(
            out,
            "{}: {}, {} units, {} segment(s) (estimate, not a price quote)",
            mask_phone_number(&message.to),
            p.encoding.as_str(),
            p.units,
            p.segments
        );
        for issue in &report.issues {
            let provider = issue.provider.as_deref().map(|p| format!("{p}: ")).unwrap_or_default();
            let field = flag(issue.field).unwrap_or(issue.field.as_str());
            let _ = writeln!(out, "issue: {provider}{field}: {}", command_text(&issue.message, Some(issue.field)));
        }
        if let Some(entry) = &suppressed {
            let _ = writeln!(
                out,
                "suppressed: {}: a send is refused before any request (--policy-override REASON sends one anyway)",
                opted_out(entry)
            );
        }
        let _ = writeln!(out, "candidates: {}", report.adapter_candidates.join(", "));
        let style = args.output.streams.out;
        let verdict =
            if supported { style.paint("supported", Colour::Green) } else { style.paint("not supported", Colour::Red) };
        let _ = writeln!(out, "{verdict}");
    }
    if supported { EXIT_OK } else { EXIT_FAILED }
}
