//! `sms-sdk send` and `sms-sdk validate`.

use std::io::Write;
use std::time::Duration;

use sms_sdk::error::AttemptOutcome;
use sms_sdk::redact::mask_phone_number;
use sms_sdk::{Category, Client, ClientBuilder, Error, Failover, Message, Receipt};

use sms_sdk::validate::Field;

use crate::cli::{MessageArgs, MessageFields, ValidateArgs};
use sms_sdk::adapter::AnyAdapter;

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

/// Reports an error as JSON or text and returns its exit code. `emulated` says that the
/// embedded emulator stood in for the providers.
pub(crate) fn report_error(
    error: &Error,
    output: Output,
    emulated: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let record = error.to_record();
    let flag = record.field.and_then(flag);
    let code = exit_code(error.kind());
    if output.json {
        let mut body = serde_json::to_value(&record).unwrap_or_default();
        if let (Some(flag), Some(object)) = (flag, body.as_object_mut()) {
            object.insert("flag".into(), flag.into());
        }
        let _ = writeln!(out, "{}", serde_json::json!({ "error": body, "emulated": emulated }));
    } else {
        let text = command_text(&error.to_string(), record.field);
        let colour = if code == EXIT_UNKNOWN { Colour::Yellow } else { Colour::Red };
        let _ = writeln!(err, "error: {}: {text}", output.streams.err.paint(error.code(), colour));
        if let Some(reason) = record.reason {
            let _ = writeln!(err, "reason: {reason}; the message may have been sent: reconcile before resending");
        }
        if let Some(category) = record.category {
            let _ = writeln!(err, "category: {category}");
        }
        let _ = writeln!(err, "retry safe: {}", error.is_retry_safe());
    }
    code
}

/// Prints an accepted (or replayed) result; `emulated` marks one the embedded emulator gave.
pub(crate) fn report_receipt(receipt: &Receipt, output: Output, emulated: bool, out: &mut dyn Write) {
    if output.json {
        let mut body = serde_json::to_value(receipt).unwrap_or_default();
        if let Some(object) = body.as_object_mut() {
            object.insert("emulated".into(), emulated.into());
        }
        let _ = writeln!(out, "{body}");
        return;
    }
    let marker = if emulated { " [emulated: nothing left this machine]" } else { "" };
    let _ = writeln!(
        out,
        "{} by {}{marker}: provider id {}, delivery {} (not handset delivery)",
        output.streams.out.paint("accepted", Colour::Green),
        receipt.provider,
        receipt.provider_id,
        serde_json::to_value(receipt.delivery).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
    );
    let _ = writeln!(out, "id {}, {} {} segment(s)", receipt.id, receipt.encoding.as_str(), receipt.segments);
    if receipt.replayed {
        let _ =
            writeln!(out, "replayed: an earlier send with this idempotency key was accepted; no new request was made");
    }
}

/// Opens the store of a keyed send: `--store`, `SMS_SDK_STORE`, or the data directory's file
/// for `sends`, with a spinner from `spinners` while it connects. `None` without a key.
async fn store(
    args: &MessageArgs,
    env: &Env,
    sends: Sends,
    spinners: Spinners,
) -> Result<Option<std::sync::Arc<dyn sms_sdk::store::Store>>, Error> {
    if args.message.idempotency_key.is_none() {
        return Ok(None);
    }
    let url = crate::paths::store_url(args.store.as_deref(), env, sends)
        .map_err(|message| crate::store::store_error(sms_sdk::store::StoreError::new(message)))?;
    spinners.during(CONNECTING, sms_sdk::store::open(&url)).await.map(Some).map_err(crate::store::store_error)
}

/// `sms-sdk send`.
pub(crate) async fn send(args: MessageArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let message = match message(&args.message) {
        Ok(message) => message,
        Err(error) => return report_error(&error, args.output, false, out, err),
    };
    let adapters = match configured_adapters(&args.message.providers, env) {
        Ok(adapters) => adapters,
        Err((code, text)) => {
            let _ = writeln!(err, "error: {text}");
            return code;
        }
    };
    let sends = if adapters.is_some() { Sends::Real } else { Sends::Emulated };
    let spinners = Spinners::new(env, args.output.json);
    let store = match store(&args, env, sends, spinners).await {
        Ok(store) => store,
        Err(error) => return report_error(&error, args.output, sends == Sends::Emulated, out, err),
    };
    let Some(adapters) = adapters else {
        return crate::emulator::embedded_send(&args, message, store, spinners, out, err).await;
    };
    let spinner = spinners.spinner("sending");
    let mut builder = watch_retries(builder(&args, adapters), &spinner);
    if let Some(store) = store {
        builder = builder.idempotency(store);
    }
    let client = match builder.build() {
        Ok(client) => client,
        Err(error) => return report_error(&error, args.output, false, out, err),
    };
    match spinner.during(client.send(&message)).await {
        Ok(receipt) => {
            report_receipt(&receipt, args.output, false, out);
            EXIT_OK
        }
        Err(error) => report_error(&error, args.output, false, out, err),
    }
}

/// `sms-sdk validate`.
pub(crate) fn validate(args: &ValidateArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let message = match message(&args.message) {
        Ok(message) => message,
        Err(error) => return report_error(&error, args.output, false, out, err),
    };
    let adapters = match configured_adapters(&args.message.providers, env) {
        Ok(Some(adapters)) => adapters,
        Ok(None) => match crate::emulator::embedded_adapter("http://127.0.0.1:9") {
            Ok(adapter) => vec![adapter],
            Err(error) => return report_error(&error, args.output, true, out, err),
        },
        Err((code, text)) => {
            let _ = writeln!(err, "error: {text}");
            return code;
        }
    };
    let client = match Client::builder().adapters(adapters).build() {
        Ok(client) => client,
        Err(error) => return report_error(&error, args.output, false, out, err),
    };
    let report = client.validate(&message);
    if args.output.json {
        let _ = writeln!(out, "{}", serde_json::to_string(&report).unwrap_or_default());
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
        let _ = writeln!(out, "candidates: {}", report.adapter_candidates.join(", "));
        let style = args.output.streams.out;
        let verdict = if report.supported {
            style.paint("supported", Colour::Green)
        } else {
            style.paint("not supported", Colour::Red)
        };
        let _ = writeln!(out, "{verdict}");
    }
    if report.supported { EXIT_OK } else { EXIT_FAILED }
}
