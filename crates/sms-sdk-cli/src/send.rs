//! `sms-sdk send` and `sms-sdk validate`: their flags, and one message sent through the
//! configured providers (or the embedded emulator), or checked locally.

use std::io::Write;
use std::time::Duration;

use clap::{Args, ValueHint};
use sms_sdk::correlation::CorrelationSecret;
use sms_sdk::message::format_timestamp;
use sms_sdk::redact::mask_phone_number;
use sms_sdk::store::Stores;
use sms_sdk::{Client, Error, Failover, Message};

use crate::config::{self, configured_adapters, require_sender};
use crate::flags::Provider;
use crate::paths::Sends;
use crate::report::{Reporting, command_text, flag, report_error};
use crate::sending::{Sending, dispatch, opted_out, policy, suppressed};
use crate::spinner::Spinners;
use crate::store::{StoreFlag, store_error};
use crate::style::{Colour, Output};
use crate::{EXIT_FAILED, EXIT_OK, Env};

/// The message flags of `send` and `validate`.
#[derive(Debug, Args)]
pub(crate) struct MessageFields {
    /// Recipient, E.164 (+14155550123).
    #[arg(long)]
    pub(crate) to: String,
    /// Message text.
    #[arg(long)]
    pub(crate) body: String,
    /// Sender: +E164 number, 3–8 digit short code, or alphanumeric sender ID.
    #[arg(long)]
    pub(crate) from: Option<String>,
    /// Provider to use; repeat for a failover order (default: every configured provider).
    #[arg(long = "provider", value_name = "NAME", value_enum)]
    pub(crate) providers: Vec<Provider>,
    /// Idempotency key naming this message.
    #[arg(long)]
    pub(crate) idempotency_key: Option<String>,
    /// Media URL (repeatable).
    #[arg(long = "media-url", value_name = "URL", value_hint = ValueHint::Url)]
    pub(crate) media_urls: Vec<String>,
    /// When to send (RFC 3339).
    #[arg(long, value_name = "RFC3339")]
    pub(crate) send_at: Option<String>,
    /// Validity period in seconds.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) validity_sec: Option<i64>,
    /// Per-message status callback URL.
    #[arg(long, value_name = "URL", value_hint = ValueHint::Url)]
    pub(crate) webhook_url: Option<String>,
}

/// `sms-sdk send` flags: the message, and how to send it.
#[derive(Debug, Args)]
pub(crate) struct MessageArgs {
    #[command(flatten)]
    pub(crate) message: MessageFields,
    /// Fail over to the next provider after an eligible rejection.
    #[arg(long)]
    pub(crate) fallback: bool,
    #[command(flatten)]
    pub(crate) store: StoreFlag,
    /// Per-request timeout in milliseconds.
    #[arg(long, value_name = "N")]
    pub(crate) timeout_ms: Option<u64>,
    /// Send this one message even if the recipient opted out (the store's suppression list),
    /// saying why (for example the one confirmation a regulator allows after STOP); the
    /// override is printed on stderr.
    #[arg(long, value_name = "REASON")]
    pub(crate) policy_override: Option<String>,
    #[command(flatten)]
    pub(crate) output: Output,
}

/// `sms-sdk validate` flags: the message, and the store whose suppression list is checked
/// (nothing is sent).
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    #[command(flatten)]
    pub(crate) message: MessageFields,
    #[command(flatten)]
    pub(crate) store: StoreFlag,
    #[command(flatten)]
    pub(crate) output: Output,
    /// `send`'s delivery flags, accepted so that a script can validate with the very flags it
    /// sends with; validation reads none of them, so they stay out of the help.
    #[command(flatten)]
    pub(crate) ignored: SendOnlyFlags,
}

/// The flags of `send` that `validate` accepts and ignores (hidden from its help).
#[derive(Debug, Args)]
pub(crate) struct SendOnlyFlags {
    #[arg(long, hide = true)]
    fallback: bool,
    #[arg(long, hide = true, value_name = "N")]
    timeout_ms: Option<u64>,
    #[arg(long, hide = true, value_name = "REASON")]
    policy_override: Option<String>,
}

impl MessageArgs {
    /// How the send these flags describe is reported, through `adapters` adapters (`emulated`:
    /// the embedded one).
    fn reporting(&self, adapters: usize, emulated: bool) -> Reporting<'_> {
        Reporting {
            output: self.output,
            emulated,
            key: self.message.idempotency_key.as_deref(),
            failover: self.fallback.then_some(adapters),
        }
    }

    /// The send of `message` through `stores` these flags describe, reported as `how`.
    fn sending<'a>(
        &'a self,
        message: &'a Message,
        stores: &'a Stores,
        how: Reporting<'a>,
        correlation: Option<&'a CorrelationSecret>,
    ) -> Sending<'a> {
        Sending {
            message,
            stores,
            timeout: self.timeout_ms.map(Duration::from_millis),
            policy_override: self.policy_override.as_deref(),
            how,
            correlation,
        }
    }
}

/// The message the flags describe (its status callback URL from `SMS_SDK_STATUS_CALLBACK_URL`
/// when `--webhook-url` is not given).
fn message(args: &MessageFields, env: &Env) -> Result<Message, Error> {
    let mut message = Message::new(&args.to, &args.body);
    message.from = args.from.as_deref().map(config::parse_sender);
    message.media_urls.clone_from(&args.media_urls);
    message.send_at = args.send_at.as_deref().map(Message::parse_send_at).transpose()?;
    message.validity_period_secs = args.validity_sec;
    message.webhook_url = crate::sending::status_callback(args.webhook_url.as_deref(), env);
    message.idempotency_key.clone_from(&args.idempotency_key);
    Ok(message)
}

/// `sms-sdk send`.
pub(crate) async fn send(args: MessageArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut message = match message(&args.message, env) {
        Ok(message) => message,
        Err(error) => return report_error(&error, args.reporting(0, false), out, err),
    };
    // As the reference, a past time is not refused: said, so that it is not a surprise.
    if message.send_at.is_some_and(|at| at <= time::OffsetDateTime::now_utc()) {
        let _ = writeln!(
            err,
            "note: --send-at is in the past: a provider that schedules sends such a message at once, or refuses it"
        );
    }
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
    if let Some(adapters) = &adapters
        && !crate::sending::default_callback_fits(args.message.webhook_url.as_deref(), env, adapters, err)
    {
        message.webhook_url = None;
    }
    let correlation = match crate::sending::correlation(env) {
        Ok(correlation) => correlation,
        Err(error) => return report_error(&error, args.reporting(0, false), out, err),
    };
    let sends = if adapters.is_some() { Sends::Real } else { Sends::Emulated };
    let spinners = Spinners::new(env, args.output.json);
    let stores = match args.store.open_stores(env, sends, spinners, err).await {
        Ok((_, stores)) => stores,
        Err(error) => return report_error(&store_error(error), args.reporting(0, sends == Sends::Emulated), out, err),
    };
    let Some(adapters) = adapters else {
        let sending = args.sending(&message, &stores, args.reporting(1, true), correlation.as_ref());
        return crate::embedded::embedded_send(sending, spinners, out, err).await;
    };
    let sending = args.sending(&message, &stores, args.reporting(adapters.len(), false), correlation.as_ref());
    let spinner = spinners.spinner("sending");
    let builder =
        if args.fallback { Client::builder().failover(Failover::OnEligibleRejection) } else { Client::builder() };
    dispatch(sending, adapters, builder, spinner, out, err).await.0
}

/// `sms-sdk validate`.
pub(crate) async fn validate(args: &ValidateArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let how = Reporting { output: args.output, emulated: false, key: None, failover: None };
    let message = match message(&args.message, env) {
        Ok(message) => message,
        Err(error) => return report_error(&error, how, out, err),
    };
    let (adapters, sends) = match configured_adapters(&args.message.providers, env) {
        Ok(Some(adapters)) => (adapters, Sends::Real),
        Ok(None) => match crate::embedded::embedded_adapter("http://127.0.0.1:9") {
            Ok(adapter) => (vec![adapter], Sends::Emulated),
            Err(error) => return report_error(&error, Reporting { emulated: true, ..how }, out, err),
        },
        Err((code, text)) => {
            let _ = writeln!(err, "error: {text}");
            return code;
        }
    };
    let stores = match args.store.open_stores(env, sends, Spinners::new(env, args.output.json), err).await {
        Ok((_, stores)) => stores,
        Err(error) => return report_error(&store_error(error), how, out, err),
    };
    let policy = policy(&stores, &adapters);
    let client = match Client::builder().adapters(adapters).build() {
        Ok(client) => client,
        Err(error) => return report_error(&error, how, out, err),
    };
    let suppressed = match suppressed(&message, &stores, &policy).await {
        Ok(found) => found,
        Err(error) => return report_error(&store_error(error), how, out, err),
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
        let candidates = report.adapter_candidates.join(", ");
        let candidates =
            if candidates.is_empty() { "none (no configured provider can send this)" } else { &candidates };
        let _ = writeln!(out, "candidates: {candidates}");
        let style = args.output.streams.out;
        let verdict =
            if supported { style.paint("supported", Colour::Green) } else { style.paint("not supported", Colour::Red) };
        let _ = writeln!(out, "{verdict}");
    }
    if supported { EXIT_OK } else { EXIT_FAILED }
}
