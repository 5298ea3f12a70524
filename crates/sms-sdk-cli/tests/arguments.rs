//! Any argument list through the command's entry point ends in an exit code, never a panic
//! (`prop_`); and the argument parsing, fuzzed with the library's seeded engine, allocates a
//! bounded amount and takes linear time in the arguments (`fuzz_`). The tests of this binary
//! take turns: its global allocator counts the whole process.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

#[path = "../../sms-sdk/tests/fuzz/engine.rs"]
mod engine;

use std::ffi::OsString;

use clap::Parser as _;
use engine::{Budget, Fuzz, assert_linear, mutate};
use proptest::prelude::*;
use sms_sdk_cli::{Cli, Env, run};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<std::alloc::System> = &INSTRUMENTED_SYSTEM;

/// Everything but `emulator` (it serves until interrupted): each command with the flags it
/// needs, and the optional flags it takes.
const COMMANDS: [(&[&str], &[&str]); 10] = [
    (&["send", "--to", "--body"], MESSAGE_FLAGS),
    (&["validate", "--to", "--body"], VALIDATE_FLAGS),
    (&["doctor", "--adapter"], &["--to", "--body", "--from", "--live", "--confirm-to", "--confirm-from", "--bogus"]),
    (&["idempotency", "list", "--state"], &["--store", "--older-than", "--json"]),
    (&["idempotency", "show", "--older-than"], &["--store", "--json"]),
    (&["idempotency", "resolve", "--provider"], &["--sent", "--not-sent", "--provider-id", "--older-than", "--store"]),
    (&["webhook", "verify", "--provider", "--url"], &["--method", "-H", "--body-file", "--now", "--json"]),
    (&["help"], &[]),
    (&["--help"], &[]),
    (&["bogus"], &["--x"]),
];

/// The flags `validate` takes (the message's, without how to send it).
const VALIDATE_FLAGS: &[&str] = &[
    "--from",
    "--provider",
    "--idempotency-key",
    "--media-url",
    "--send-at",
    "--validity-sec",
    "--webhook-url",
    "--json",
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

/// A configured provider behind a closed port, and a store in memory: nothing is sent anywhere
/// and nothing is written.
fn env() -> Env {
    [
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
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(u32::try_from(engine::cases(2000)).unwrap_or(u32::MAX)))]

    #[test]
    fn prop_any_arguments_end_in_an_exit_code(args in arguments()) {
        let _exclusive = engine::exclusive();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(args, &env(), &mut out, &mut err);
        prop_assert!(code <= 7, "exit {}", code);
    }
}

/// A generated argument list: the words of a command, its flags with values (real ones,
/// mutated ones, long ones, repeated flags), and sometimes bytes that are not UTF-8.
fn fuzzed_arguments(rng: &mut fastrand::Rng) -> Vec<OsString> {
    let (words, flags) = COMMANDS[rng.usize(..COMMANDS.len())];
    let mut args: Vec<Vec<u8>> = Vec::new();
    for word in words {
        args.push(word.as_bytes().to_vec());
        if word.starts_with("--") && *word != "--help" {
            args.push(b"+14155550123".to_vec());
        }
    }
    for _ in 0..rng.usize(..8) {
        let Some(flag) = flags.get(rng.usize(..flags.len().max(1))) else { break };
        // A flag repeated many times (many media URLs, headers or providers).
        let times = if rng.u8(..16) == 0 { rng.usize(1..2000) } else { 1 };
        let value = EDGES[rng.usize(..EDGES.len())].as_bytes().to_vec();
        for _ in 0..times {
            args.push(flag.as_bytes().to_vec());
            args.push(value.clone());
        }
    }
    // Mutations: of one argument (its bytes, up to a long value), or of the list's shape.
    for _ in 0..rng.usize(..3) {
        if args.is_empty() {
            break;
        }
        let at = rng.usize(..args.len());
        match rng.u8(..4) {
            0 => {
                args.remove(at);
            }
            1 => {
                args.insert(at, ["--", "-", "--json", "-H", "--=", "--to=", "-Hx"][rng.usize(..7)].as_bytes().to_vec());
            }
            _ => {
                let limit = if rng.u8(..32) == 0 { 256 * 1024 } else { 256 };
                let other = args[rng.usize(..args.len())].clone();
                mutate(rng, &mut args[at], &other, limit);
            }
        }
    }
    args.into_iter().map(os_string).collect()
}

#[cfg(unix)]
fn os_string(bytes: Vec<u8>) -> OsString {
    std::os::unix::ffi::OsStringExt::from_vec(bytes)
}

#[cfg(not(unix))]
fn os_string(bytes: Vec<u8>) -> OsString {
    OsString::from(String::from_utf8_lossy(&bytes).into_owned())
}

/// Parses `args` as the command does: clap for every command; and, where that refuses or the
/// command is `doctor` (its own parser) or an argument is not UTF-8, the whole entry point,
/// which returns before any runtime or network is needed. Returns clap's verdict and the exit
/// code when the entry point ran.
fn parse(args: &[OsString], env: &Env) -> (bool, Option<u8>) {
    let argv = std::iter::once(OsString::from("sms-sdk")).chain(args.iter().cloned());
    let parsed = Cli::try_parse_from(argv).is_ok();
    let doctor = args.first().is_some_and(|a| a == "doctor");
    let not_utf8 = args.iter().any(|a| a.to_str().is_none());
    let live = args.iter().any(|a| a == "--live");
    let code = ((!parsed || doctor || not_utf8) && !live).then(|| {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        run(args.iter().cloned(), env, &mut out, &mut err)
    });
    (parsed, code)
}

#[test]
fn fuzz_command_argument_parsing() {
    let env = env();
    let fuzz = Fuzz::new("fuzz_command_argument_parsing", 3_000);
    fuzz.run(
        GLOBAL,
        fuzzed_arguments,
        // clap keeps about 1.5 KB for every occurrence of a flag, however short: each argument
        // counts as 64 bytes at least.
        |args| args.iter().map(|a| a.len() + 64).sum(),
        |args| parse(args, &env),
        |args, &(parsed, code)| {
            if let Some(code) = code {
                let usage =
                    args.iter().any(|a| a.to_str().is_none()) || !parsed && args.first().is_none_or(|a| a != "doctor");
                if code > 7 || usage && !matches!(code, 0 | 2) {
                    return Err(format!("exit {code} (clap parsed it: {parsed})"));
                }
            }
            // Building the command's definition costs the same every time; the rest grows with
            // the arguments. An unknown argument costs the most: to suggest one, clap compares it
            // with every name it knows, allocating a few bytes per byte for each (up to 91 bytes
            // per byte of a 52 KiB unknown argument, found by long runs), and a refused list is
            // parsed twice (here and by the entry point). Linux caps one argument at 128 KiB.
            Ok(Budget::new(256, 1024 * 1024))
        },
    );
    let _exclusive = engine::exclusive();
    let long_body = |n: usize| -> Vec<OsString> {
        ["validate", "--to", "+14155550123", "--body"]
            .into_iter()
            .map(OsString::from)
            .chain([OsString::from("é".repeat(n))])
            .collect()
    };
    let many_media = |n: usize| -> Vec<OsString> {
        let media = (0..n).flat_map(|i| [OsString::from("--media-url"), OsString::from(format!("https://m/{i}"))]);
        ["validate", "--to", "+14155550123", "--body", "hi"].into_iter().map(OsString::from).chain(media).collect()
    };
    let parse_only = |args: &Vec<OsString>| {
        let argv = std::iter::once(OsString::from("sms-sdk")).chain(args.iter().cloned());
        assert!(Cli::try_parse_from(argv).is_ok());
    };
    assert_linear("fuzz_command_argument_parsing: a long --body", 200_000, long_body, parse_only);
    assert_linear("fuzz_command_argument_parsing: many --media-url", 500, many_media, parse_only);
    let unknown_flag = |n: usize| -> Vec<OsString> {
        let flag = OsString::from(format!("--{}", "from".repeat(n)));
        ["validate", "--to", "+14155550123", "--body", "hi"].into_iter().map(OsString::from).chain([flag]).collect()
    };
    let refused = |args: &Vec<OsString>| assert_eq!(parse(args, &env), (false, Some(2)));
    assert_linear("fuzz_command_argument_parsing: an unknown flag", 2000, unknown_flag, refused);
    let doctor = |n: usize| -> Vec<OsString> {
        let flags = (0..n).flat_map(|_| [OsString::from("--to"), OsString::from("+14155550123")]);
        std::iter::once(OsString::from("doctor")).chain(flags).collect()
    };
    let run_doctor = |args: &Vec<OsString>| {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        run(args.iter().cloned(), &env, &mut out, &mut err);
    };
    assert_linear("fuzz_command_argument_parsing: doctor with many flags", 2000, doctor, run_doctor);
}
