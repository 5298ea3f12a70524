//! What the command says is true: a missing sender is a configuration error, a send that did not
//! go to the provider's own API says where it went, failover that stops says why, and a rejection
//! says whether the same send can succeed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // test code: a panic is a failed test

use crate::common;

use common::{Twilio, command};
use serde_json::json;
use sms_sdk_cli::Env;
use sms_sdk_emulator::{Emulator, credentials, magic};
use wiremock::ResponseTemplate;

#[test]
fn a_send_without_a_sender_is_a_configuration_error_naming_the_variable() {
    let twilio = Twilio::accepting();
    let env = twilio.env(&[("TWILIO_FROM", "")]);
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &env);
    assert_eq!(o.code, 7, "a missing variable: exit 7\n{}", o.err);
    assert!(o.err.contains("TWILIO_FROM (or TWILIO_MESSAGING_SERVICE_SID)") && o.err.contains("--from"), "{}", o.err);
    assert!(!o.err.contains("retry safe"), "{}", o.err);
    assert_eq!(twilio.calls(), 0);
    let with_from = command(&["send", "--to", "+14155550123", "--body", "Hi", "--from", "+15005550006"], &env);
    assert_eq!(with_from.code, 0, "{}", with_from.err);
}

#[test]
fn a_send_to_another_endpoint_than_the_providers_own_says_where_it_went() {
    let twilio = Twilio::accepting();
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &twilio.env(&[]));
    assert_eq!(o.code, 0, "{}", o.err);
    let base = twilio.server.uri();
    let expected = format!("sent to {base} (SMS_SDK_TWILIO_BASE_URL), not twilio's own API");
    assert!(o.out.contains(&expected), "{}", o.out);
}

#[test]
fn failover_that_stops_at_an_ineligible_rejection_says_why() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let emulator = runtime.block_on(Emulator::builder().start()).unwrap();
    let base = emulator.base_url();
    let env: Env = [
        ("SMS_SDK_STORE", "memory"),
        ("TWILIO_ACCOUNT_SID", credentials::TWILIO_ACCOUNT_SID),
        ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN),
        ("TWILIO_FROM", "+15005550006"),
        ("SMS_SDK_TWILIO_BASE_URL", base.as_str()),
        ("PLIVO_AUTH_ID", credentials::PLIVO_AUTH_ID),
        ("PLIVO_AUTH_TOKEN", credentials::PLIVO_AUTH_TOKEN),
        ("PLIVO_FROM", "+15005550006"),
        ("SMS_SDK_PLIVO_BASE_URL", base.as_str()),
        ("VONAGE_API_KEY", credentials::VONAGE_API_KEY),
        ("VONAGE_API_SECRET", credentials::VONAGE_API_SECRET),
        ("VONAGE_FROM", "+15005550006"),
        ("SMS_SDK_VONAGE_BASE_URL", base.as_str()),
    ]
    .into_iter()
    .collect();
    // The emulator's "sender cannot route" number: Twilio says sender (failover goes on), Plivo's
    // generic 400 is a request rejection, which no other provider is tried after.
    let args = ["send", "--to", "+15005550002", "--body", "Hi", "--fallback"];
    let o =
        command(&[&args[..], &["--provider", "twilio", "--provider", "plivo", "--provider", "vonage"]].concat(), &env);
    assert_eq!(o.code, 1, "{}{}", o.out, o.err);
    assert!(o.err.contains("failover stopped at plivo: a request rejection is not one another provider"), "{}", o.err);
    assert!(o.err.contains("the other 1 configured provider(s) were not tried"), "{}", o.err);
    let providers: Vec<String> = emulator.messages().iter().map(|m| m.provider.to_string()).collect();
    assert_eq!(providers, ["twilio", "plivo"], "vonage is never tried");
    runtime.block_on(emulator.shutdown());
}

#[test]
fn a_rejection_says_whether_the_same_send_can_succeed() {
    let limited = Twilio::answering(ResponseTemplate::new(400).set_body_json(json!({"code": 21211, "message": "bad"})));
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &limited.env(&[]));
    assert_eq!(o.code, 1);
    assert!(o.err.contains("nothing was sent: the same message will be refused again"), "{}", o.err);
    let auth = Twilio::answering(ResponseTemplate::new(401).set_body_json(json!({"code": 20003, "message": "no"})));
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &auth.env(&[]));
    assert!(o.err.contains("until the account or the configuration is fixed"), "{}", o.err);
}

/// The README's failover line: the recipient Twilio alone refuses (its sender code) is sent by
/// Telnyx.
#[test]
fn a_sender_rejection_at_twilio_only_fails_over_to_telnyx() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let emulator = runtime.block_on(Emulator::builder().start()).unwrap();
    let base = emulator.base_url();
    let env: Env = [
        ("SMS_SDK_STORE", "memory"),
        ("TWILIO_ACCOUNT_SID", credentials::TWILIO_ACCOUNT_SID),
        ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN),
        ("TWILIO_FROM", "+15005550006"),
        ("SMS_SDK_TWILIO_BASE_URL", base.as_str()),
        ("TELNYX_API_KEY", credentials::TELNYX_API_KEY),
        ("TELNYX_FROM", "+15005550006"),
        ("SMS_SDK_TELNYX_BASE_URL", base.as_str()),
    ]
    .into_iter()
    .collect();
    let args = ["send", "--to", magic::TWILIO_SENDER_CANNOT_ROUTE, "--body", "hi", "--provider", "twilio"];
    let o = command(&[&args[..], &["--provider", "telnyx", "--fallback", "--json"]].concat(), &env);
    assert_eq!(o.code, 0, "{}{}", o.out, o.err);
    let result: serde_json::Value = serde_json::from_str(&o.out).unwrap();
    assert_eq!(result["attempted_providers"], json!(["twilio", "telnyx"]), "{result}");
    assert_eq!(result["provider"], "telnyx", "{result}");
    let providers: Vec<String> = emulator.messages().iter().map(|m| m.provider.to_string()).collect();
    assert_eq!(providers, ["twilio", "telnyx"]);
    runtime.block_on(emulator.shutdown());
}
