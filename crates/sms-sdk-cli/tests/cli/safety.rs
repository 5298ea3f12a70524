//! What keeps the command from silently not sending: where its state lives, what counts as
//! configured, what it refuses, and how it names things.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use common::{MESSAGE_SID, SID, Twilio, command};
use sms_sdk::store::{Fingerprint, IdempotencyStore, Reservation, sqlite::SqliteStore};
use sms_sdk_cli::Env;

/// A fresh folder.
fn folder(name: &str) -> PathBuf {
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("sms-sdk-safety-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn data_env(data: &Path) -> Env {
    [("XDG_DATA_HOME", data.display().to_string())].into_iter().collect()
}

fn send_args(key: &str) -> Vec<&str> {
    vec!["send", "--to", "+14155550123", "--body", "Your order has shipped.", "--idempotency-key", key, "--json"]
}

#[test]
fn an_emulated_send_is_never_replayed_by_a_real_one() {
    let data = folder("emulated-then-real");
    let emulated = command(&send_args("order:1"), &data_env(&data));
    assert_eq!(emulated.code, 0, "{}{}", emulated.out, emulated.err);
    let emulated: serde_json::Value = serde_json::from_str(emulated.out.trim()).unwrap();
    assert_eq!(emulated["emulated"], true);

    let twilio = Twilio::accepting();
    // The default store (no SMS_SDK_STORE): the data directory's.
    let env = twilio.env(&[("XDG_DATA_HOME", &data.display().to_string()), ("SMS_SDK_STORE", "")]);
    let real = command(&send_args("order:1"), &env);
    assert_eq!(real.code, 0, "{}{}", real.out, real.err);
    let real: serde_json::Value = serde_json::from_str(real.out.trim()).unwrap();
    assert_eq!(real["replayed"], false, "the emulator's result was replayed: {real}");
    assert_eq!(real["emulated"], false);
    assert_eq!(real["provider_id"], MESSAGE_SID);
    assert_eq!(twilio.calls(), 1);
    assert!(data.join("sms-sdk/state.db").exists() && data.join("sms-sdk/emulator.db").exists());
}

#[test]
fn the_default_store_is_the_same_in_every_working_directory() {
    let data = folder("shared-data");
    let twilio = Twilio::accepting();
    let binary = env!("CARGO_BIN_EXE_sms-sdk");
    let run_in = |dir: &Path| {
        let mut child = Command::new(binary);
        child.args(send_args("order:2")).current_dir(dir);
        for (name, _) in std::env::vars() {
            if Env::is_ours(&name) {
                child.env_remove(name);
            }
        }
        child.env("HOME", &data).env_remove("XDG_DATA_HOME");
        child.env("TWILIO_ACCOUNT_SID", SID).env("TWILIO_AUTH_TOKEN", "test-token");
        child.env("TWILIO_FROM", "+15005550006").env("SMS_SDK_TWILIO_BASE_URL", twilio.server.uri());
        let output = child.output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let first = run_in(&folder("cwd-a"));
    let second = run_in(&folder("cwd-b"));
    assert_eq!(first["replayed"], false);
    assert_eq!(second["replayed"], true);
    assert_eq!(twilio.calls(), 1);
    let expected =
        if cfg!(target_os = "macos") { "Library/Application Support/sms-sdk" } else { ".local/share/sms-sdk" };
    assert!(data.join(expected).join("state.db").exists());
}

#[test]
fn a_half_configured_provider_is_a_configuration_error_not_the_emulator() {
    let data = folder("half");
    let mut env: Vec<(&str, String)> = vec![
        ("TWILIO_AUTH_TOKEN", "test-token".into()),
        ("TWILIO_FROM", "+15005550006".into()),
        ("XDG_DATA_HOME", data.display().to_string()),
    ];
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &env.iter().cloned().collect());
    assert_eq!(o.code, 7, "{}{}", o.out, o.err);
    assert!(o.err.contains("TWILIO_ACCOUNT_SID is not set"), "{}", o.err);
    assert!(o.out.is_empty(), "nothing looks like a result: {}", o.out);
    assert!(!o.err.contains("emulator"), "{}", o.err);

    // Only a base URL override counts as configuring the provider too.
    let o = command(
        &["send", "--to", "+14155550123", "--body", "Hi"],
        &[("SMS_SDK_TELNYX_BASE_URL", "http://127.0.0.1:9")].into_iter().collect(),
    );
    assert_eq!(o.code, 7, "{}", o.err);
    assert!(o.err.contains("TELNYX_API_KEY is not set"), "{}", o.err);

    // An API key pair names what it lacks.
    env[0] = ("TWILIO_API_KEY_SID", "SK0123".into());
    env.push(("TWILIO_ACCOUNT_SID", SID.into()));
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &env.iter().cloned().collect());
    assert_eq!(o.code, 7);
    assert!(o.err.contains("TWILIO_API_KEY_SECRET is not set"), "{}", o.err);
}

#[test]
fn a_credential_that_cannot_be_sent_is_a_configuration_error_naming_the_variable() {
    let env: Env = [
        ("TELNYX_API_KEY", "KEY0123\n"),
        ("TELNYX_FROM", "+15005550006"),
        ("SMS_SDK_TELNYX_BASE_URL", "http://127.0.0.1:9"),
    ]
    .into_iter()
    .collect();
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &env);
    assert_eq!(o.code, 7, "{}", o.err);
    assert!(o.err.contains("TELNYX_API_KEY contains a character that cannot be sent"), "{}", o.err);
    assert!(!o.err.contains("KEY0123"), "{}", o.err);

    let env: Env = [
        ("VONAGE_APPLICATION_ID", "app-1"),
        ("VONAGE_PRIVATE_KEY", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"),
    ]
    .into_iter()
    .collect();
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &env);
    assert_eq!(o.code, 7, "{}", o.err);
    // Named as the command spells it: the variable, not the library's field.
    assert!(o.err.contains("VONAGE_PRIVATE_KEY could not be imported"), "{}", o.err);
}

#[test]
fn a_store_failure_says_why() {
    let twilio = Twilio::accepting();
    let data = folder("store-failure").display().to_string();
    let env = twilio.env(&[("XDG_DATA_HOME", &data), ("SMS_SDK_STORE", "redis://user:hunter2@127.0.0.1:1/0")]);
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi", "--idempotency-key", "k"], &env);
    assert_eq!(o.code, 7, "{}", o.err);
    assert!(o.err.contains("nothing was sent: "), "{}", o.err);
    assert!(o.err.contains("127.0.0.1:1"), "the store is named: {}", o.err);
    assert!(!o.err.contains("hunter2"), "{}", o.err);
    assert_eq!(twilio.calls(), 0);
}

#[test]
fn a_reservation_in_progress_is_listed_with_its_age_and_when_it_becomes_resolvable() {
    let data = folder("in-progress");
    let path = data.join("state.db");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = SqliteStore::open(&path).await.unwrap();
        let fingerprint = Fingerprint::of(&sms_sdk::Message::new("+14155550123", "Hi"), &[]);
        let reserved = store
            .reserve("killed-mid-flight", sms_sdk::store::Claim::new(&fingerprint), SystemTime::now())
            .await
            .unwrap();
        assert!(matches!(reserved, Reservation::Acquired(_)));
    });
    let store = format!("sqlite:{}", path.display());
    let env = data_env(&data);

    let listed = command(&["idempotency", "list", "--state", "unresolved", "--store", &store], &env);
    assert_eq!(listed.code, 0, "{}", listed.err);
    assert!(listed.out.contains("killed-mid-flight\treserved\tin progress: reserved 0s ago"), "{}", listed.out);
    assert!(listed.out.contains("resolvable in 300s") || listed.out.contains("resolvable in 299s"), "{}", listed.out);

    let listed = command(&["idempotency", "list", "--state", "unresolved", "--store", &store, "--json"], &env);
    let entries: serde_json::Value = serde_json::from_str(listed.out.trim()).unwrap();
    assert_eq!(entries[0]["key"], "killed-mid-flight");
    assert_eq!(entries[0]["in_progress"], true);
    assert!(entries[0]["resolvable_in_ms"].as_u64().unwrap() > 290_000);

    let shown = command(&["idempotency", "show", "killed-mid-flight", "--store", &store], &env);
    assert_eq!(shown.code, 0);
    assert!(shown.out.contains("resolvable in"), "{}", shown.out);
    // With a shorter stale limit it is stale already, and can be resolved.
    std::thread::sleep(Duration::from_millis(1100));
    let shown = command(&["idempotency", "show", "killed-mid-flight", "--store", &store, "--older-than", "1"], &env);
    assert!(shown.out.contains("stale: reserved 1s ago"), "{}", shown.out);
    let refused = command(&["idempotency", "resolve", "killed-mid-flight", "--not-sent", "--store", &store], &env);
    assert_eq!(refused.code, 2);
    assert!(refused.err.contains("resolvable in"), "{}", refused.err);
    let resolved = command(
        &["idempotency", "resolve", "killed-mid-flight", "--not-sent", "--store", &store, "--older-than", "1"],
        &env,
    );
    assert_eq!(resolved.code, 0, "{}", resolved.err);
}

#[test]
fn a_missing_key_is_an_input_error_for_show_and_resolve_alike() {
    let data = folder("missing-key");
    let store = format!("sqlite:{}", data.join("state.db").display());
    let env = data_env(&data);
    for args in [
        vec!["idempotency", "show", "nope", "--store", &store],
        vec!["idempotency", "resolve", "nope", "--not-sent", "--store", &store],
    ] {
        let o = command(&args, &env);
        assert_eq!(o.code, 2, "{args:?}: {}", o.err);
        assert!(o.err.contains("no record for key"), "{}", o.err);
    }
}

#[test]
fn errors_name_flags_as_the_command_spells_them() {
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi", "--send-at", "tomorrow"], &Env::default());
    assert_eq!(o.code, 2, "{}", o.err);
    assert!(o.err.contains("--send-at must be an RFC 3339 timestamp"), "{}", o.err);
    for ts in ["sendAt", "send_at", "beforeSend", "providerOptions"] {
        assert!(!o.err.contains(ts), "{ts} in {}", o.err);
    }
    let o =
        command(&["send", "--to", "+14155550123", "--body", "Hi", "--send-at", "tomorrow", "--json"], &Env::default());
    let value: serde_json::Value = serde_json::from_str(o.out.trim()).unwrap();
    assert_eq!(value["error"]["flag"], "--send-at");
    // A time in the past is the reference's to take, and the command says what it means.
    let past = ["send", "--to", "+14155550123", "--body", "Hi", "--send-at", "2020-01-01T00:00:00Z"];
    let o = command(&past, &Env::default());
    assert!(o.err.contains("note: --send-at is in the past"), "{}", o.err);
    let future = ["send", "--to", "+14155550123", "--body", "Hi", "--send-at", "2999-01-01T00:00:00Z"];
    assert!(!command(&future, &Env::default()).err.contains("in the past"));
}

#[cfg(unix)]
#[test]
fn arguments_and_variables_that_are_not_utf8_are_usage_errors_naming_them() {
    use std::os::unix::ffi::OsStringExt;

    let bad = OsString::from_vec(vec![b'h', 0xff, b'i']);
    let args: Vec<OsString> = vec!["send".into(), "--to".into(), "+14155550123".into(), "--body".into(), bad.clone()];
    let o = command(&args, &Env::default());
    assert_eq!(o.code, 2);
    assert!(o.err.contains("--body is not valid UTF-8"), "{}", o.err);
    let mut joined = OsString::from("--body=");
    joined.push(&bad);
    let o = command(&["send".into(), "--to".into(), "+14155550123".into(), joined], &Env::default());
    assert_eq!(o.code, 2);
    assert!(o.err.contains("--body is not valid UTF-8"), "{}", o.err);

    let env = Env::from_os([(OsString::from("TWILIO_AUTH_TOKEN"), bad.clone())]);
    let o = command(&["validate", "--to", "+14155550123", "--body", "Hi"], &env);
    assert_eq!(o.code, 2);
    assert!(o.err.contains("TWILIO_AUTH_TOKEN is not valid UTF-8"), "{}", o.err);

    // A foreign variable is ignored, through the built binary too.
    let env = Env::from_os([
        (OsString::from("SOME_OTHER_TOOL"), bad.clone()),
        (OsString::from("SMS_SDK_STORE"), OsString::from("memory")),
    ]);
    assert_eq!(command(&["validate", "--to", "+14155550123", "--body", "Hi"], &env).code, 0);
    let output = Command::new(env!("CARGO_BIN_EXE_sms-sdk"))
        .args(["validate", "--to", "+14155550123", "--body", "Hi"])
        .env("SOME_OTHER_TOOL", &bad)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let output = Command::new(env!("CARGO_BIN_EXE_sms-sdk")).arg("send").arg("--body").arg(&bad).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn a_shared_store_refuses_to_replay_an_emulated_result_for_a_real_send() {
    let data = folder("shared-store");
    let store = format!("sqlite:{}", data.join("shared.db").display());
    let mut args = send_args("order:3");
    args.extend(["--store", &store]);
    let emulated = command(&args, &data_env(&data));
    assert_eq!(emulated.code, 0, "{}", emulated.err);
    // Replays through the embedded emulator still work on a later run.
    let again: serde_json::Value = serde_json::from_str(command(&args, &data_env(&data)).out.trim()).unwrap();
    assert_eq!(again["replayed"], true);

    let twilio = Twilio::accepting();
    let real = command(&args, &twilio.env(&[("XDG_DATA_HOME", &data.display().to_string())]));
    assert_eq!(real.code, 4, "{}{}", real.out, real.err);
    let value: serde_json::Value = serde_json::from_str(real.out.trim()).unwrap();
    assert_eq!(value["error"]["code"], "idempotency_conflict");
    let message = value["error"]["message"].as_str().unwrap();
    assert!(message.contains("sms-sdk-emulator://embedded") && message.contains(&twilio.server.uri()), "{message}");
    assert_eq!(twilio.calls(), 0);
}
