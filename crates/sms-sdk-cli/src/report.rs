//! How the command reports a send: the receipt or the error, as JSON or text, with what the
//! operator should know (failover that stopped, a foreign endpoint, the advice), and the
//! spinner's note while a provider rate-limits it.

use std::io::Write;

use sms_sdk::error::AttemptOutcome;
use sms_sdk::validate::Field;
use sms_sdk::{Category, ClientBuilder, Error, ErrorKind, Receipt};

use crate::config;
use crate::flags::Provider;
use crate::spinner::Spinner;
use crate::style::{Colour, Output};
use crate::{EXIT_CONFIGURATION, EXIT_UNKNOWN, exit_code};

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

/// `builder` with a hook that tells `spinner` when a provider rate-limited the send and the
/// client waits before retrying (the `Retry-After` wait happens inside [`sms_sdk::Client::send`]).
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
pub(crate) fn flag(field: Field) -> Option<&'static str> {
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
pub(crate) fn command_text(message: &str, field: Option<Field>) -> String {
    let Some((field, flag)) = field.and_then(|f| flag(f).map(|flag| (f, flag))) else { return message.to_owned() };
    let name = field.as_str();
    let text = if name.contains('_') { message.replace(name, flag) } else { message.to_owned() };
    text.replace(&format!("`{name}`"), &format!("`{flag}`"))
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
/// proxy): the provider, and the endpoint of its last request.
fn foreign_endpoint(receipt: &Receipt) -> Option<(Provider, &str)> {
    let endpoint = receipt.attempts.last()?.endpoint.as_deref()?;
    let provider = Provider::named(&receipt.provider)?;
    (!config::is_own_endpoint(provider, endpoint)).then_some((provider, endpoint))
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
        && let Some((provider, endpoint)) = foreign_endpoint(receipt)
    {
        let variable = config::origin_variables(provider);
        let _ = writeln!(out, "sent to {endpoint} ({variable}), not {}'s own API", receipt.provider);
    }
    let _ = writeln!(out, "id {}, {} {} segment(s)", receipt.id, receipt.encoding.as_str(), receipt.segments);
    if receipt.replayed {
        let _ =
            writeln!(out, "replayed: an earlier send with this idempotency key was accepted; no new request was made");
    }
}
