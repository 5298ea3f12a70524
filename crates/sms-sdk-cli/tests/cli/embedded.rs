//! The embedded default: no provider configured → the emulator in-process, the real Twilio
//! adapter over loopback, and the status timeline from verified webhooks.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::process::Command;

struct Run {
    code: i32,
    out: String,
    err: String,
}

/// A fresh working folder; it is also the data directory (`XDG_DATA_HOME`), so the default
/// stores live under `sms-sdk/` in it.
fn folder() -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("sms-sdk-embedded-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the built binary in `dir` with no provider in its environment.
fn sms_sdk(dir: &std::path::Path, args: &[&str]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sms-sdk"));
    command.args(args).current_dir(dir).env("XDG_DATA_HOME", dir);
    for (name, _) in std::env::vars() {
        if ["TWILIO_", "TELNYX_", "PLIVO_", "VONAGE_", "SMS_SDK_"].iter().any(|p| name.starts_with(p)) {
            command.env_remove(name);
        }
    }
    let output = command.output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&output.stdout).into_owned(),
        err: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn the_readme_send_works_with_nothing_configured() {
    let run = sms_sdk(&folder(), &["send", "--to", "+14155550123", "--body", "Your order has shipped."]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert!(run.out.contains("accepted by twilio"));
    assert!(run.out.contains("status timeline"));
    assert!(run.out.contains("delivered"), "{}", run.out);
    assert!(run.err.contains("nothing left this machine"));
    assert!(run.err.contains("TWILIO_ACCOUNT_SID"));
}

#[test]
fn undelivered_shows_in_the_timeline() {
    let run = sms_sdk(&folder(), &["send", "--to", "+15005550010", "--body", "Hi"]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert!(run.out.contains("undelivered"), "{}", run.out);
}

#[test]
fn a_repeated_key_replays_from_the_emulator_store() {
    let dir = folder();
    let send =
        |body: &str| sms_sdk(&dir, &["send", "--to", "+14155550123", "--body", body, "--idempotency-key", "order:7"]);
    let first = send("Your order has shipped.");
    assert_eq!(first.code, 0, "{}", first.err);
    // Emulated sends keep their own store, never the one real sends use.
    assert!(dir.join("sms-sdk/emulator.db").exists());
    assert!(!dir.join("sms-sdk/state.db").exists());
    let second = send("Your order has shipped.");
    assert_eq!(second.code, 0);
    assert!(second.out.contains("replayed"), "{}", second.out);
    assert!(second.err.contains("replayed from the store: no request was made"), "{}", second.err);
    assert!(!second.err.contains("stood in"), "{}", second.err);
    assert!(first.err.contains("the local emulator stood in"), "{}", first.err);
    assert!(!second.out.contains("status timeline"), "the replay made no request: {}", second.out);
    assert_eq!(send("Another body").code, 4);
}

#[test]
fn an_unreachable_store_sends_nothing() {
    let run = sms_sdk(
        &folder(),
        &["send", "--to", "+14155550123", "--body", "Hi", "--idempotency-key", "k", "--store", "redis://127.0.0.1:1/0"],
    );
    assert_eq!(run.code, 7, "{}{}", run.out, run.err);
    assert!(!run.out.contains("accepted"));
    assert!(run.err.contains("the store redis://127.0.0.1:1/0 (from --store) did not open"), "{}", run.err);
    assert!(!run.err.contains("its records go to"), "no note about a store that did not open: {}", run.err);
}

#[test]
fn emulated_sends_on_a_named_store_say_what_that_does() {
    let dir = folder();
    let store = format!("sqlite:{}", dir.join("shared.db").display());
    let run =
        sms_sdk(&dir, &["send", "--to", "+14155550123", "--body", "Hi", "--idempotency-key", "k", "--store", &store]);
    assert_eq!(run.code, 0, "{}{}", run.out, run.err);
    assert!(run.err.contains("its records go to the store named by --store"), "{}", run.err);
}

#[test]
fn a_created_then_dropped_send_is_listed_and_settled() {
    let dir = folder();
    let send = |key: &str| sms_sdk(&dir, &["send", "--to", "+15005559007", "--body", "Hi", "--idempotency-key", key]);
    assert_eq!(send("dropped-1").code, 3);
    assert_eq!(send("dropped-2").code, 3);
    let listed = sms_sdk(&dir, &["idempotency", "list", "--state", "unresolved"]);
    assert!(listed.out.contains("dropped-1\tunknown") && listed.out.contains("dropped-2\tunknown"), "{}", listed.out);

    let resolved = sms_sdk(
        &dir,
        &[
            "idempotency",
            "resolve",
            "dropped-1",
            "--sent",
            "--provider",
            "twilio",
            "--provider-id",
            "SM00000000000000000000000000000001",
        ],
    );
    assert_eq!(resolved.code, 0, "{}", resolved.err);
    let replay = send("dropped-1");
    assert_eq!(replay.code, 0, "{}", replay.err);
    assert!(replay.out.contains("replayed"));

    assert_eq!(sms_sdk(&dir, &["idempotency", "resolve", "dropped-2", "--not-sent"]).code, 0);
    let resent = send("dropped-2");
    assert_eq!(resent.code, 3, "the next send went out again (and was dropped again)");
    let listed = sms_sdk(&dir, &["idempotency", "list", "--state", "unresolved", "--json"]);
    let entries: serde_json::Value = serde_json::from_str(listed.out.trim()).unwrap();
    let keys: Vec<&str> = entries.as_array().unwrap().iter().filter_map(|e| e["key"].as_str()).collect();
    assert_eq!(keys, ["dropped-2"]);
}

#[test]
fn validate_needs_no_provider() {
    let run = sms_sdk(&folder(), &["validate", "--to", "+14155550123", "--body", "Hello 📦", "--json"]);
    assert_eq!(run.code, 0, "{}", run.err);
    let report: serde_json::Value = serde_json::from_str(run.out.trim()).unwrap();
    assert_eq!(report["encoding"], "ucs2");
    assert_eq!(report["supported"], true);
}

#[test]
fn the_emulator_command_serves_until_stopped() {
    use std::io::{BufRead, BufReader, Read, Write};

    let mut child = Command::new(env!("CARGO_BIN_EXE_sms-sdk"))
        .args(["emulator", "--listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let base = first.rsplit(' ').next().unwrap().to_owned();
    assert!(base.starts_with("http://127.0.0.1:"), "{first}");
    let printed: Vec<String> = lines
        .by_ref()
        .take_while(|l| l.as_ref().is_ok_and(|l| !l.starts_with("export VONAGE")))
        .map(Result::unwrap)
        .collect();
    assert!(printed.iter().any(|l| l == &format!("export SMS_SDK_TWILIO_BASE_URL={base}")), "{printed:?}");

    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(stream, "GET /_emulator/keys HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("\"account_sid\"") && response.contains("\"signature_secret\""));
    child.kill().unwrap();
    child.wait().unwrap();
}
