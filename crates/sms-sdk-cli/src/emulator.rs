//! The embedded default (no provider configured: send through the in-process emulator) and the
//! `sms-sdk emulator` command.

use std::io::Write;
use std::sync::Arc;

use sms_sdk::{Message, Twilio};

use crate::EXIT_CONFIGURATION;
use crate::cli::{EmulatorArgs, MessageArgs};
use crate::config::AnyAdapter;

/// The emulator's Twilio account (placeholder until the emulator crate lands).
const ACCOUNT_SID: &str = "AC00000000000000000000000000000000";
const AUTH_TOKEN: &str = "emulator-auth-token";

/// The Twilio adapter of the embedded default, against `base_url`.
pub(crate) fn embedded_adapter(base_url: &str) -> AnyAdapter {
    let twilio = Twilio::builder(ACCOUNT_SID, AUTH_TOKEN).from("+15005550006").base_url(base_url).build();
    AnyAdapter::Twilio(twilio.expect("the emulator's Twilio configuration is valid"))
}

/// Sends through the in-process emulator.
pub(crate) async fn embedded_send(
    _args: &MessageArgs,
    _message: Message,
    _store: Option<Arc<dyn sms_sdk::idempotency::Store>>,
    _out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let _ = writeln!(err, "error: no provider configured; nothing was sent.");
    EXIT_CONFIGURATION
}

/// `sms-sdk emulator`.
pub(crate) async fn run(_args: EmulatorArgs, _out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let _ = writeln!(err, "error: the emulator is not available yet");
    EXIT_CONFIGURATION
}
