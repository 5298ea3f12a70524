//! Any argument list through the command's entry point ends in an exit code, never a panic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::ffi::OsString;

use proptest::prelude::*;
use sms_sdk_cli::{Env, run};

/// Everything but `emulator` (it serves until interrupted): each command with the flags it
/// needs, and the optional flags it takes.
const COMMANDS: [(&[&str], &[&str]); 10] = [
    (&["send", "--to", "--body"], MESSAGE_FLAGS),
    (&["validate", "--to", "--body"], MESSAGE_FLAGS),
    (&["doctor", "--adapter"], &["--to", "--body", "--from", "--live", "--confirm-to", "--confirm-from", "--bogus"]),
    (&["idempotency", "list", "--state"], &["--store", "--older-than", "--json"]),
    (&["idempotency", "show", "--older-than"], &["--store", "--json"]),
    (&["idempotency", "resolve", "--provider"], &["--sent", "--not-sent", "--provider-id", "--older-than", "--store"]),
    (&["webhook", "verify", "--provider", "--url"], &["--method", "-H", "--body-file", "--now", "--json"]),
    (&["help"], &[]),
    (&["--help"], &[]),
    (&["bogus"], &["--x"]),
];

const MESSAGE_FLAGS: &[&str] = &[
    "--from",
    "--provider",
    "--fallback",
    "--idempotency-key",
    "--store",
    "--media-url",
    "--send-at",
    "--validity-sec",
    "--webhook-url",
    "--timeout-ms",
    "--json",
];

/// Numbers at the edges: zero, negative, the largest of each width, past year 9999, too long.
const EDGES: [&str; 8] = [
    "0",
    "-1",
    "4294967295",
    "9223372036854775807",
    "18446744073709551615",
    "253402300800",
    "99999999999999999999999",
    "1700000000",
];

/// Values a user or an attacker might pass.
fn value() -> impl Strategy<Value = OsString> {
    let text = prop_oneof![
        Just("+14155550123".to_owned()),
        Just("+15005559001".to_owned()),
        Just("99999999999999999999999".to_owned()),
        Just("18446744073709551615".to_owned()),
        Just("9223372036854775807".to_owned()),
        Just("253402300800".to_owned()),
        Just("-1".to_owned()),
        Just("0".to_owned()),
        Just(String::new()),
        Just("memory".to_owned()),
        Just("sqlite:/nonexistent/dir/x.db".to_owned()),
        Just("twilio".to_owned()),
        Just("unresolved".to_owned()),
        Just("9999-12-31T23:59:59-23:59".to_owned()),
        Just("X-Twilio-Signature: abc".to_owned()),
        Just("https://example.com/sms?x=1".to_owned()),
        "\\PC{0,30}",
        "[0-9]{1,40}",
    ];
    prop_oneof![9 => text.prop_map(OsString::from), 1 => non_utf8()]
}

#[cfg(unix)]
fn non_utf8() -> impl Strategy<Value = OsString> {
    use std::os::unix::ffi::OsStringExt;
    proptest::collection::vec(any::<u8>(), 0..8).prop_map(|mut bytes| {
        bytes.push(0xff);
        OsString::from_vec(bytes)
    })
}

#[cfg(not(unix))]
fn non_utf8() -> impl Strategy<Value = OsString> {
    Just(OsString::from("x"))
}

fn arguments() -> impl Strategy<Value = Vec<OsString>> {
    let command = proptest::sample::select(COMMANDS.to_vec());
    let needed = proptest::collection::vec(value(), 4);
    let index = any::<proptest::sample::Index>;
    let optional = proptest::collection::vec((index(), proptest::option::of(value()), index()), 0..6);
    (command, needed, optional).prop_map(|((words, flags), needed, optional)| {
        let mut args = Vec::new();
        let mut values = needed.into_iter();
        for word in words {
            args.push(OsString::from(word));
            // Each flag the command needs gets a value; a provider name is usually a real one.
            if word.starts_with("--") && *word != "--help" {
                let value = values.next().unwrap_or_default();
                let value = match *word {
                    "--provider" | "--adapter" if value.len() % 3 != 0 => OsString::from("twilio"),
                    _ => value,
                };
                args.push(value);
            }
        }
        for (index, value, edge) in optional {
            let Some(flag) = flags.get(index.index(flags.len().max(1))) else { break };
            args.push(OsString::from(flag));
            // Numeric flags mostly get numbers at the edges of their range.
            let value = match (*flag, value) {
                ("--now" | "--older-than" | "--timeout-ms" | "--validity-sec", Some(_)) => {
                    Some(OsString::from(EDGES[edge.index(EDGES.len())]))
                }
                (_, value) => value,
            };
            // Standard input is never read from a test.
            if let Some(value) = value.filter(|v| v != "-") {
                args.push(value);
            }
        }
        args
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_arguments_end_in_an_exit_code(args in arguments()) {
        // A configured provider behind a closed port, and a store in memory: nothing is sent
        // anywhere and nothing is written.
        let env: Env = [
            ("TWILIO_ACCOUNT_SID", "AC0123456789abcdef0123456789abcdef"),
            ("TWILIO_AUTH_TOKEN", "test-token"),
            ("TWILIO_FROM", "+15005550006"),
            ("SMS_SDK_TWILIO_BASE_URL", "http://127.0.0.1:9"),
            ("SMS_SDK_STORE", "memory"),
            ("TELNYX_PUBLIC_KEY", "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="),
            ("PLIVO_AUTH_ID", "MAXXXXXXXXXXXXXXXXXX"),
            ("PLIVO_AUTH_TOKEN", "plivo-token"),
            ("VONAGE_SIGNATURE_SECRET", "vonage-secret"),
        ]
        .into_iter()
        .collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(args, &env, &mut out, &mut err);
        prop_assert!(code <= 7, "exit {}", code);
    }
}
