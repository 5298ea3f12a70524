//! The command enforces the suppression list it manages: after `sms-sdk suppression add`, every
//! sending path refuses the recipient before any request (`send`, with or without a key, in
//! every store, through the embedded emulator too), `validate` reports it, and
//! `--policy-override REASON` sends that one message anyway and says so. `batch` is in
//! `tests/batch.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // test code: a panic is a failed test

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};

use common::{MESSAGE_SID, Twilio, command};
use sms_sdk_cli::Env;

/// A recipient of its own for each use (the PostgreSQL and Redis stores are shared by tests).
fn recipient() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() % 10_000;
    format!("+1415{:03}{:04}", 200 + NEXT.fetch_add(1, Ordering::Relaxed) % 700, n)
}

fn scratch(name: &str) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("sms-sdk-opt-outs-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn server_url(var: &str) -> String {
    std::env::var(var)
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| panic!("{var} is not set: run `scripts/test.sh`, which starts PostgreSQL and Redis"))
}

/// Every durable store the command takes (DynamoDB's table made by `store init`, with the
/// throwaway credentials scripts/test.sh exports).
fn stores() -> Vec<(&'static str, String)> {
    let endpoint = server_url("SMS_SDK_TEST_DYNAMODB_URL");
    let table = scratch("dynamodb").file_name().unwrap().to_string_lossy().into_owned();
    let dynamodb = format!("dynamodb://{table}?region=us-east-1&endpoint={endpoint}");
    let init = command(&["store", "init", "--store", &dynamodb], &Env::default());
    assert_eq!(init.code, 0, "store init: {}", init.err);
    vec![
        ("sqlite", format!("sqlite:{}", scratch("sqlite").join("state.db").display())),
        ("postgres", server_url("SMS_SDK_TEST_POSTGRES_URL")),
        ("redis", server_url("SMS_SDK_TEST_REDIS_URL")),
        ("dynamodb", dynamodb),
    ]
}

fn send(to: &str, extra: &[&str], env: &Env) -> common::Output {
    command(&[&["send", "--to", to, "--body", "Sale ends tonight!"][..], extra].concat(), env)
}

#[test]
fn send_refuses_an_opted_out_recipient_in_every_store_with_or_without_a_key() {
    for (name, store) in stores() {
        let twilio = Twilio::accepting();
        let env = twilio.env(&[("SMS_SDK_STORE", &store)]);
        let (to, other) = (recipient(), recipient());
        let added = command(&["suppression", "add", &to], &env);
        assert_eq!(added.code, 0, "{name}: {}", added.err);
        assert_eq!(command(&["suppression", "check", &to], &env).code, 1, "{name}");

        let refused = send(&to, &[], &env);
        assert_eq!(refused.code, 1, "{name}: a policy refusal\n{}{}", refused.out, refused.err);
        assert!(refused.err.contains("policy_rejected") && refused.err.contains("opted out"), "{}", refused.err);
        assert!(refused.err.contains("category: compliance"), "{}", refused.err);
        assert!(
            refused.err.contains("nothing was sent: the recipient opted out, so the same send will be refused again"),
            "{}",
            refused.err
        );
        assert!(!refused.err.contains("retry safe: true"), "{}", refused.err);
        assert!(!refused.err.contains(&to), "the number is masked: {}", refused.err);
        let keyed = send(&to, &["--idempotency-key", &format!("promo-{to}")], &env);
        assert_eq!(keyed.code, 1, "{name}: {}", keyed.err);
        let json = send(&to, &["--json"], &env);
        let value: serde_json::Value = serde_json::from_str(json.out.trim()).unwrap();
        assert_eq!(
            (value["error"]["code"].as_str(), value["error"]["category"].as_str()),
            (Some("policy_rejected"), Some("compliance"))
        );
        assert_eq!(twilio.calls(), 0, "{name}: no request for an opted-out recipient");

        assert_eq!(send(&other, &[], &env).code, 0, "{name}: anyone else is sent to");
        assert_eq!(twilio.calls(), 1);

        let confirmed = send(&to, &["--policy-override", "STOP confirmation"], &env);
        assert_eq!(confirmed.code, 0, "{name}: {}", confirmed.err);
        assert!(confirmed.out.contains(MESSAGE_SID), "{}", confirmed.out);
        assert!(confirmed.err.contains("opted out") && confirmed.err.contains("sending anyway"), "{}", confirmed.err);
        assert!(confirmed.err.contains("\"STOP confirmation\""), "the reason is logged: {}", confirmed.err);
        assert_eq!(twilio.calls(), 2, "the override sent that one message");
        assert_eq!(send(&to, &[], &env).code, 1, "{name}: and only that one");

        assert_eq!(command(&["suppression", "remove", &to], &env).code, 0);
        assert_eq!(send(&to, &[], &env).code, 0, "{name}: an opt-in lifts it");
    }
}

#[test]
fn validate_reports_an_opted_out_recipient_as_not_supported() {
    let store = format!("sqlite:{}", scratch("validate").join("state.db").display());
    let twilio = Twilio::accepting();
    let env = twilio.env(&[("SMS_SDK_STORE", &store)]);
    let to = recipient();
    assert_eq!(command(&["validate", "--to", &to, "--body", "Hi"], &env).code, 0);
    assert_eq!(command(&["suppression", "add", &to, "--reason", "keyword:STOP"], &env).code, 0);
    let text = command(&["validate", "--to", &to, "--body", "Hi"], &env);
    assert_eq!(text.code, 1, "{}{}", text.out, text.err);
    assert!(text.out.contains("suppressed: ") && text.out.contains("keyword:STOP"), "{}", text.out);
    assert!(text.out.ends_with("not supported\n") && !text.out.contains(&to), "{}", text.out);
    let json = command(&["validate", "--to", &to, "--body", "Hi", "--json"], &env);
    assert_eq!(json.code, 1);
    let value: serde_json::Value = serde_json::from_str(json.out.trim()).unwrap();
    assert_eq!(value["supported"], false);
    assert_eq!(value["suppressed"]["scope"], "account");
    assert_ne!(value["suppressed"]["recipient"], to.as_str(), "masked");
    assert_eq!(twilio.calls(), 0);
}

#[test]
fn the_embedded_emulator_refuses_an_opted_out_recipient_too() {
    let data = scratch("embedded");
    let env: Env = [("XDG_DATA_HOME", data.display().to_string())].into_iter().collect();
    let to = recipient();
    assert_eq!(command(&["suppression", "add", &to], &env).code, 0);
    assert!(data.join("sms-sdk/emulator.db").exists(), "no provider is configured: the emulator's store");
    let refused = send(&to, &[], &env);
    assert_eq!(refused.code, 1, "{}{}", refused.out, refused.err);
    assert!(refused.err.contains("opted out") && !refused.out.contains("accepted"), "{}{}", refused.out, refused.err);
    assert_eq!(send(&recipient(), &[], &env).code, 0);
}

#[test]
fn a_suppression_list_that_cannot_be_read_stops_the_send() {
    let twilio = Twilio::accepting();
    let env = twilio.env(&[("SMS_SDK_STORE", "postgres://nobody@127.0.0.1:1/none")]);
    let stopped = send(&recipient(), &[], &env);
    assert_eq!(stopped.code, 7, "a store error: {}", stopped.err);
    assert_eq!(twilio.calls(), 0, "never a guess that the recipient did not opt out");
    let env = twilio.env(&[("SMS_SDK_STORE", "")]);
    let nowhere = send(&recipient(), &[], &env);
    assert_eq!(nowhere.code, 7, "no data directory for the default store: {}", nowhere.err);
    assert!(nowhere.err.contains("no data directory"), "{}", nowhere.err);
    assert_eq!(twilio.calls(), 0);
}
