//! One send through the client, guarded by the store: its suppression list refuses an
//! opted-out recipient before any request, its records make a keyed repeat replay, and an
//! override of the list is said on stderr; then the result is reported.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use sms_sdk::adapter::AnyAdapter;
use sms_sdk::correlation::CorrelationSecret;
use sms_sdk::message::format_timestamp;
use sms_sdk::store::Stores;
use sms_sdk::store::suppression::SuppressionEntry;
use sms_sdk::suppression::SuppressionPolicy;
use sms_sdk::{ClientBuilder, Message, PhoneNumber, Receipt, SendOptions};

use crate::report::{Reporting, report_error, report_receipt, watch_retries};
use crate::spinner::Spinner;
use crate::{EXIT_OK, Env};

/// The variable naming the status callback URL of a send without `--webhook-url`.
pub(crate) const STATUS_CALLBACK_VARIABLE: &str = "SMS_SDK_STATUS_CALLBACK_URL";

/// The status callback URL of a send: `--webhook-url`, else `SMS_SDK_STATUS_CALLBACK_URL`.
pub(crate) fn status_callback(flag: Option<&str>, env: &Env) -> Option<String> {
    flag.or_else(|| env.get(STATUS_CALLBACK_VARIABLE).filter(|url| !url.is_empty())).map(str::to_owned)
}

/// Whether the default status callback URL (`SMS_SDK_STATUS_CALLBACK_URL`, not `--webhook-url`)
/// can go with a message to every one of `adapters`. A provider without per-message callback URLs
/// (AWS: its events come from the configuration set's event destination) would refuse the
/// message, so the default is then left out, and `err` says why; `--webhook-url` is the caller's
/// word and stays.
pub(crate) fn default_callback_fits(
    flag: Option<&str>,
    env: &Env,
    adapters: &[sms_sdk::adapter::AnyAdapter],
    err: &mut dyn std::io::Write,
) -> bool {
    use sms_sdk::adapter::Adapter as _;
    if flag.is_some() || env.get(STATUS_CALLBACK_VARIABLE).is_none() {
        return true;
    }
    let without: Vec<&str> = adapters
        .iter()
        .filter(|adapter| !adapter.info().capabilities.webhook_url_override)
        .map(|adapter| adapter.info().name.as_str())
        .collect();
    if without.is_empty() {
        return true;
    }
    let _ = writeln!(
        err,
        "note: {STATUS_CALLBACK_VARIABLE} is not used for this send: {} takes no per-message callback URL (its \
         status events come from the account's own webhook settings)",
        without.join(", ")
    );
    false
}

/// The correlation secret of `env` (`SMS_SDK_CORRELATION_SECRET`, at least 32 bytes), when set:
/// keyed sends with a status callback URL then carry a reference that `sms-sdk serve` (sharing
/// the secret's store) settles an unknown outcome from.
///
/// # Errors
/// `Configuration` when it is set but too short.
pub(crate) fn correlation(env: &Env) -> Result<Option<CorrelationSecret>, sms_sdk::Error> {
    match env.get(crate::serve::CORRELATION_SECRET_VARIABLE).filter(|secret| !secret.is_empty()) {
        None => Ok(None),
        Some(secret) => CorrelationSecret::new(secret.to_owned()).map(Some),
    }
}

/// `builder` guarded by the store: its suppression list refuses an opted-out recipient before
/// any request (`policy`), and its records (when the send is keyed) make a repeat replay and,
/// with a `correlation` secret, remember each send's reference.
pub(crate) fn guarded(
    builder: ClientBuilder,
    stores: &Stores,
    policy: &SuppressionPolicy,
    keyed: bool,
    correlation: Option<&CorrelationSecret>,
) -> ClientBuilder {
    let builder = builder.policy(policy.clone());
    if !keyed {
        return builder;
    }
    let builder = builder.idempotency(Arc::clone(&stores.records));
    match correlation {
        Some(secret) => builder.correlation(secret.clone()),
        None => builder,
    }
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

/// The opt-out that suppresses `message`'s recipient in `stores`, checked as `policy` checks it
/// (the account, and the message's sender or the policy's default one).
pub(crate) async fn suppressed(
    message: &Message,
    stores: &Stores,
    policy: &SuppressionPolicy,
) -> Result<Option<SuppressionEntry>, sms_sdk::store::StoreError> {
    let Ok(recipient) = PhoneNumber::parse(&message.to) else { return Ok(None) };
    stores.suppression.check(&recipient, &policy.scopes(message)).await
}

/// An opt-out as one phrase: `+1********23 opted out (account, keyword:STOP) at …`.
pub(crate) fn opted_out(entry: &SuppressionEntry) -> String {
    let at = format_timestamp(time::OffsetDateTime::from(entry.at));
    format!("{} opted out ({}, {}) at {at}", entry.recipient.masked(), entry.scope, entry.reason)
}

/// One send the command makes: its message and store, the flags that shape it, and how it is
/// reported.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sending<'a> {
    /// The message.
    pub(crate) message: &'a Message,
    /// The store: its suppression list, and its records when the send is keyed.
    pub(crate) stores: &'a Stores,
    /// The per-request timeout (`--timeout-ms`).
    pub(crate) timeout: Option<Duration>,
    /// Why the suppression list is overridden for this one message (`--policy-override`).
    pub(crate) policy_override: Option<&'a str>,
    /// How the result is reported.
    pub(crate) how: Reporting<'a>,
    /// The correlation secret (`SMS_SDK_CORRELATION_SECRET`), when set.
    pub(crate) correlation: Option<&'a CorrelationSecret>,
}

/// Builds the client of `adapters` from `builder` (with the timeout, the spinner's retry note
/// and the store's guard), notes an override of the suppression list, sends and reports the
/// result; the exit code, and the receipt when accepted.
pub(crate) async fn dispatch(
    sending: Sending<'_>,
    adapters: Vec<AnyAdapter>,
    builder: ClientBuilder,
    spinner: Spinner,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> (u8, Option<Receipt>) {
    let Sending { message, stores, timeout, policy_override, how, correlation } = sending;
    let policy = policy(stores, &adapters);
    let mut builder = watch_retries(builder.adapters(adapters), &spinner);
    if let Some(timeout) = timeout {
        builder = builder.timeout(timeout);
    }
    let client = match guarded(builder, stores, &policy, how.key.is_some(), correlation).build() {
        Ok(client) => client,
        Err(error) => return (report_error(&error, how, out, err), None),
    };
    let mut options = SendOptions::default();
    if let Some(reason) = policy_override {
        match suppressed(message, stores, &policy).await {
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
        options = options.policy_override(reason.to_owned());
    }
    match spinner.during(client.send_with(message, options)).await {
        Ok(receipt) => {
            report_receipt(&receipt, how, out);
            (EXIT_OK, Some(receipt))
        }
        Err(error) => (report_error(&error, how, out, err), None),
    }
}
