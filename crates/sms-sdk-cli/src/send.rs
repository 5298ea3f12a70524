//! `sms-sdk send` and `sms-sdk validate`.

use std::io::Write;
use std::time::Duration;

use sms_sdk::redact::mask_phone_number;
use sms_sdk::{Client, ClientBuilder, Error, Failover, Message, Receipt};

use crate::cli::MessageArgs;
use crate::config::{self, AnyAdapter, PROVIDERS};
use crate::{EXIT_CONFIGURATION, EXIT_FAILED, EXIT_OK, EXIT_USAGE, Env, exit_code};

/// The store used when a key is given and no store is named.
pub(crate) const DEFAULT_STORE: &str = "sqlite:.sms-sdk/state.db";

/// The message the flags describe.
fn message(args: &MessageArgs) -> Result<Message, Error> {
    let mut message = Message::new(&args.to, &args.body);
    message.from = args.from.as_deref().map(config::parse_sender);
    message.media_urls.clone_from(&args.media_urls);
    message.send_at = args.send_at.as_deref().map(Message::parse_send_at).transpose()?;
    message.validity_period_secs = args.validity_sec;
    message.webhook_url.clone_from(&args.webhook_url);
    message.idempotency_key.clone_from(&args.idempotency_key);
    Ok(message)
}

/// The adapters to use: the named ones, or every configured one; `None` when nothing is
/// configured (the embedded default applies).
fn adapters(args: &MessageArgs, env: &Env) -> Result<Option<Vec<AnyAdapter>>, (u8, String)> {
    let names: Vec<&str> = if args.providers.is_empty() {
        PROVIDERS.into_iter().filter(|p| config::is_configured(env, p)).collect()
    } else {
        args.providers.iter().map(String::as_str).collect()
    };
    if names.is_empty() {
        return Ok(None);
    }
    let mut adapters = Vec::new();
    for name in names {
        if !PROVIDERS.contains(&name) {
            return Err((EXIT_USAGE, format!("unknown provider `{name}` (twilio, telnyx, plivo, vonage)")));
        }
        let adapter =
            config::adapter(env, name, None).map_err(|e| (EXIT_CONFIGURATION, format!("{}: {e}", e.code())))?;
        adapters.push(adapter);
    }
    Ok(Some(adapters))
}

/// A client builder with the flags' adapters, failover and timeout.
fn builder(args: &MessageArgs, adapters: Vec<AnyAdapter>) -> ClientBuilder {
    let mut builder = adapters.into_iter().fold(Client::builder(), ClientBuilder::adapter);
    if args.fallback {
        builder = builder.failover(Failover::OnEligibleRejection);
    }
    if let Some(ms) = args.timeout_ms {
        builder = builder.timeout(Duration::from_millis(ms));
    }
    builder
}

/// Reports an error as JSON or text and returns its exit code.
pub(crate) fn report_error(error: &Error, json: bool, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    if json {
        let _ = writeln!(out, "{}", serde_json::json!({ "error": error.to_record() }));
    } else {
        let _ = writeln!(err, "error: {}: {error}", error.code());
        let record = error.to_record();
        if let Some(reason) = record.reason {
            let _ = writeln!(err, "reason: {reason}; the message may have been sent: reconcile before resending");
        }
        if let Some(category) = record.category {
            let _ = writeln!(err, "category: {category}");
        }
        let _ = writeln!(err, "retry safe: {}", error.is_retry_safe());
    }
    exit_code(error.kind())
}

/// Prints an accepted (or replayed) result.
pub(crate) fn report_receipt(receipt: &Receipt, json: bool, out: &mut dyn Write) {
    if json {
        let _ = writeln!(out, "{}", serde_json::to_string(receipt).unwrap_or_default());
        return;
    }
    let _ = writeln!(
        out,
        "accepted by {}: providerId {}, delivery {} (not handset delivery)",
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

/// `sms-sdk send`.
pub(crate) async fn send(args: MessageArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let message = match message(&args) {
        Ok(message) => message,
        Err(error) => return report_error(&error, args.json, out, err),
    };
    let adapters = match adapters(&args, env) {
        Ok(adapters) => adapters,
        Err((code, text)) => {
            let _ = writeln!(err, "error: {text}");
            return code;
        }
    };
    let store = match &args.idempotency_key {
        None => None,
        Some(_) => {
            let url = args.store.as_deref().or_else(|| env.get("SMS_SDK_STORE")).unwrap_or(DEFAULT_STORE);
            match sms_sdk::idempotency::open(url).await {
                Ok(store) => Some(store),
                Err(error) => {
                    let error = crate::store::store_error(error);
                    return report_error(&error, args.json, out, err);
                }
            }
        }
    };
    let Some(adapters) = adapters else {
        return crate::emulator::embedded_send(&args, message, store, out, err).await;
    };
    let mut builder = builder(&args, adapters);
    if let Some(store) = store {
        builder = builder.idempotency(store);
    }
    let client = match builder.build() {
        Ok(client) => client,
        Err(error) => return report_error(&error, args.json, out, err),
    };
    match client.send(&message).await {
        Ok(receipt) => {
            report_receipt(&receipt, args.json, out);
            EXIT_OK
        }
        Err(error) => report_error(&error, args.json, out, err),
    }
}

/// `sms-sdk validate`.
pub(crate) fn validate(args: &MessageArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let message = match message(args) {
        Ok(message) => message,
        Err(error) => return report_error(&error, args.json, out, err),
    };
    let adapters = match adapters(args, env) {
        Ok(Some(adapters)) => adapters,
        Ok(None) => vec![crate::emulator::embedded_adapter("http://127.0.0.1:9")],
        Err((code, text)) => {
            let _ = writeln!(err, "error: {text}");
            return code;
        }
    };
    let client = match builder(args, adapters).build() {
        Ok(client) => client,
        Err(error) => return report_error(&error, args.json, out, err),
    };
    let report = client.validate(&message);
    if args.json {
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
            let _ = writeln!(out, "issue: {provider}{}: {}", issue.field, issue.message);
        }
        let _ = writeln!(out, "candidates: {}", report.adapter_candidates.join(", "));
        let _ = writeln!(out, "{}", if report.supported { "supported" } else { "not supported" });
    }
    if report.supported { EXIT_OK } else { EXIT_FAILED }
}
