//! The command explains itself: help that names each command's flags and variables, typed
//! values with their possible values, shell completions, manual pages, and colour only where
//! asked for or on a terminal.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use common::{Twilio, command};
use sms_sdk_cli::Env;
use wiremock::ResponseTemplate;

const TO: &str = "+14155550123";

#[test]
fn the_doctor_s_help_names_its_flags_and_variables() {
    let env = Env::default();
    let clap = command(&["help", "doctor"], &env);
    let own = command(&["doctor", "--help"], &env);
    assert_eq!((clap.code, own.code), (0, 0));
    assert!(own.out.starts_with("Usage: sms-sdk doctor"), "{}", own.out);
    for help in [&clap.out, &own.out] {
        for word in [
            "--adapter",
            "--body",
            "--to",
            "--from",
            "--live",
            "--confirm-to",
            "--confirm-from",
            "TWILIO_ACCOUNT_SID",
            "VONAGE_PRIVATE_KEY",
            "SMS_SDK_PLIVO_BASE_URL",
        ] {
            assert!(help.contains(word), "{word} missing from:\n{help}");
        }
    }
    // The doctor's parser takes no `--color`, and reads no `NO_COLOR`: its help says neither.
    assert!(!clap.out.contains("--color") && !clap.out.contains("NO_COLOR"), "{}", clap.out);
    // A global flag before `doctor` still hands the rest to the doctor's parser.
    let routed = command(&["--color", "never", "doctor", "--adapter", "nope"], &env);
    assert_eq!(routed.code, 2);
    assert!(routed.err.contains("--adapter must be one of twilio, telnyx, plivo, vonage"), "{}", routed.err);
    let routed = command(&["--color=always", "doctor", "--adapter", "nope"], &env);
    assert_eq!(routed.code, 2);
    assert!(routed.err.contains("--adapter must be one of"), "{}", routed.err);
    let refused = command(&["--color", "sometimes", "doctor", "--adapter", "twilio"], &env);
    assert_eq!(refused.code, 2);
    assert!(refused.err.contains("invalid value 'sometimes' for '--color <WHEN>'"), "{}", refused.err);
}

#[test]
fn validate_s_help_shows_only_the_flags_it_uses() {
    let env: Env = [("SMS_SDK_STORE", "memory")].into_iter().collect();
    let validate = command(&["validate", "--help"], &env).out;
    let send = command(&["send", "--help"], &env).out;
    assert!(validate.contains("--store"), "validate checks the store's suppression list:\n{validate}");
    for flag in ["--fallback", "--timeout-ms", "--policy-override"] {
        assert!(!validate.contains(flag), "{flag} in:\n{validate}");
        assert!(send.contains(flag), "{flag} not in:\n{send}");
    }
    for flag in ["--to", "--body", "--from", "--provider", "--idempotency-key", "--media-url", "--json"] {
        assert!(validate.contains(flag) && send.contains(flag), "{flag}");
    }
    // A script may validate with the very flags it sends with: they are accepted and ignored.
    let plain = command(&["validate", "--to", "+14155550123", "--body", "hi"], &env);
    let with_send_flags = command(
        &["validate", "--to", "+14155550123", "--body", "hi", "--store", "memory", "--fallback", "--timeout-ms", "5"],
        &env,
    );
    assert_eq!((with_send_flags.code, &with_send_flags.out), (plain.code, &plain.out));
    assert!(send.contains("SMS_SDK_STORE") && send.contains("XDG_DATA_HOME"), "{send}");
    assert!(validate.contains("SMS_SDK_STORE"), "validate reads the store's suppression list: {validate}");
    assert!(command(&["webhook", "verify", "--help"], &env).out.contains("VONAGE_SIGNATURE_SECRET"));
    assert!(command(&["batch", "--help"], &env).out.contains("TELNYX_API_KEY"));
    assert!(command(&["suppression", "list", "--help"], &env).out.contains("SMS_SDK_STORE"));
}

#[test]
fn typed_values_list_their_possible_values_and_suggest_the_nearest() {
    let env = Env::default();
    let help = command(&["send", "--help"], &env).out;
    assert!(
        help.contains("[possible values: twilio, telnyx, plivo, vonage, sinch, aws, infobip, bandwidth]"),
        "{help}"
    );
    for args in [
        &["send", "--to", TO, "--body", "hi", "--provider", "twillio"][..],
        &["validate", "--to", TO, "--body", "hi", "--provider", "twillio"],
        &["webhook", "verify", "--provider", "twillio", "--url", "https://example.com/"],
        &["batch", "--csv", "x.csv", "--body-column", "b", "--key-prefix", "k", "--provider", "twillio"],
    ] {
        let o = command(args, &env);
        assert_eq!(o.code, 2, "{args:?}");
        assert!(o.err.contains("possible values: twilio, telnyx, plivo, vonage"), "{}", o.err);
        assert!(o.err.contains("a similar value exists: 'twilio'"), "{}", o.err);
        assert!(o.out.is_empty());
    }
    let o = command(&["idempotency", "list", "--state", "unresolve", "--store", "memory"], &env);
    assert_eq!(o.code, 2);
    assert!(o.err.contains("reserved, accepted, rejected, unknown, unresolved"), "{}", o.err);
    // The emulator's address and URLs, and the URL a webhook was sent to, are usage errors.
    for (args, says) in [
        (&["emulator", "--listen", "0.0.0.0:4010"][..], "loopback only"),
        (&["emulator", "--listen", "4010"], "is not a listen address"),
        (&["emulator", "--webhook-url", "127.0.0.1:3000/sms"], "is not an absolute http(s) URL"),
        (&["emulator", "--inbound-url", "ftp://127.0.0.1/in"], "is not an absolute http(s) URL"),
        // A provider's own URL: a known provider, and a URL like any other.
        (&["emulator", "--webhook-url", "twillio=http://127.0.0.1:3000/sms"], "unknown provider \"twillio\""),
        (
            &["emulator", "--inbound-url", "messagebird=http://127.0.0.1:3000/in"],
            "expected twilio, telnyx, plivo, vonage, sinch, aws, infobip or bandwidth",
        ),
        (&["emulator", "--webhook-url", "telnyx=127.0.0.1:3000/sms"], "is not an absolute http(s) URL"),
        (&["emulator", "--inbound-url", "vonage=ftp://127.0.0.1/in"], "is not an absolute http(s) URL"),
        (&["webhook", "verify", "--provider", "twilio", "--url", "/sms/twilio"], "is not an absolute http(s) URL"),
    ] {
        let o = command(args, &env);
        assert_eq!(o.code, 2, "{args:?}");
        let flag = args.iter().rev().nth(1).copied().unwrap_or_default();
        assert!(o.err.contains(says) && o.err.contains(flag), "{}", o.err);
        assert!(o.out.is_empty());
    }
    // Two URLs for the same providers are a usage error too, before the emulator starts.
    for (args, says) in [
        (
            &[
                "emulator",
                "--listen",
                "127.0.0.1:0",
                "--webhook-url",
                "http://127.0.0.1:9/a",
                "--webhook-url",
                "http://127.0.0.1:9/b",
            ][..],
            "--webhook-url: two URLs for every provider",
        ),
        (
            &[
                "emulator",
                "--listen",
                "127.0.0.1:0",
                "--inbound-url",
                "telnyx=http://127.0.0.1:9/a",
                "--inbound-url",
                "http://127.0.0.1:9/all",
                "--inbound-url",
                "telnyx=http://127.0.0.1:9/b",
            ],
            "--inbound-url: two URLs for telnyx",
        ),
    ] {
        let o = command(args, &env);
        assert_eq!(o.code, 2, "{args:?}: {}", o.err);
        assert!(o.err.contains(says), "{}", o.err);
        assert!(o.out.is_empty(), "nothing started: {}", o.out);
    }
    let o = command(&["idempotency", "reconcile", "--since", "8w", "--store", "memory"], &env);
    assert_eq!(o.code, 2);
    assert!(o.err.contains("must be a duration such as 30m, 24h or 7d (at most 400d)"), "{}", o.err);
    assert_eq!(command(&["idempotency", "reconcile", "--since", "401d", "--store", "memory"], &env).code, 2);
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = command(&["completions", shell], &Env::default());
        assert_eq!(o.code, 0, "{shell}: {}", o.err);
        // Fish names flags without their dashes (`-l adapter`).
        for word in ["sms-sdk", "send", "validate", "doctor", "idempotency", "reconcile", "adapter", "provider"] {
            assert!(o.out.contains(word), "{shell}: {word} missing");
        }
    }
    let o = command(&["completions", "tcsh"], &Env::default());
    assert_eq!(o.code, 2);
    assert!(o.err.contains("possible values"), "{}", o.err);
}

#[test]
fn the_manual_page_is_roff_and_one_page_per_command_goes_to_a_directory() {
    let o = command(&["man"], &Env::default());
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.starts_with('.'), "{}", &o.out[..80]);
    assert!(o.out.lines().any(|l| l.starts_with(".TH sms-sdk")), "{}", &o.out[..200]);
    assert!(o.out.contains("NO_COLOR"));

    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("sms-sdk-man-{}-{nanos}", std::process::id()));
    let o = command(&["man", "--dir", dir.to_str().unwrap()], &Env::default());
    assert_eq!(o.code, 0, "{}", o.err);
    for page in ["sms-sdk.1", "sms-sdk-send.1", "sms-sdk-doctor.1", "sms-sdk-idempotency-list.1", "sms-sdk-man.1"] {
        let text = std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page}");
        assert!(o.out.contains(page), "{page} not printed: {}", o.out);
    }
    let doctor = std::fs::read_to_string(dir.join("sms-sdk-doctor.1")).unwrap();
    assert!(doctor.contains("adapter") && doctor.contains("TWILIO_ACCOUNT_SID"), "{doctor}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn validate(args: &[&str], env: &Env) -> common::Output {
    let base = ["validate", "--to", TO, "--body", "hi"];
    command(&[&base[..], args].concat(), env)
}

#[test]
fn colour_only_when_asked_or_on_a_terminal_and_never_in_json() {
    const GREEN: &str = "\x1b[32msupported\x1b[0m";
    let store = ("SMS_SDK_STORE", "memory");
    let piped: Env = [store].into_iter().collect();
    let terminal = piped.clone().with_terminals(true, true);
    let no_color: Env = [("NO_COLOR", "1"), store].into_iter().collect::<Env>().with_terminals(true, true);

    let plain = validate(&[], &piped);
    assert_eq!(plain.code, 0, "{}", plain.err);
    assert!(!plain.out.contains('\x1b') && plain.out.ends_with("\nsupported\n"), "{}", plain.out);
    assert_eq!(validate(&["--color", "never"], &terminal).out, plain.out);
    assert_eq!(validate(&[], &no_color).out, plain.out);
    assert!(validate(&[], &terminal).out.contains(GREEN));
    assert!(validate(&["--color", "always"], &piped).out.contains(GREEN));
    assert!(command(&["--color=always", "validate", "--to", TO, "--body", "hi"], &piped).out.contains(GREEN));
    let json = validate(&["--json", "--color", "always"], &terminal);
    assert!(!json.out.contains('\x1b'), "{}", json.out);
    serde_json::from_str::<serde_json::Value>(&json.out).unwrap();

    let unsupported = command(&["validate", "--to", "12", "--body", "hi", "--color", "always"], &piped);
    assert_eq!(unsupported.code, 1);
    assert!(unsupported.out.contains("\x1b[31mnot supported\x1b[0m"), "{}", unsupported.out);

    // clap's own help and errors follow the same rule, on their own stream.
    assert!(!command(&["send", "--help"], &piped).out.contains('\x1b'));
    assert!(command(&["send", "--help", "--color", "always"], &piped).out.contains('\x1b'));
    assert!(!command(&["send", "--bogus"], &piped).err.contains('\x1b'));
    assert!(command(&["send", "--bogus"], &Env::default().with_terminals(false, true)).err.contains('\x1b'));
    assert!(!command(&["send", "--bogus"], &Env::default().with_terminals(true, false)).err.contains('\x1b'));
}

#[test]
fn send_colours_the_outcome() {
    let accepting = Twilio::accepting();
    let args = ["send", "--to", TO, "--body", "hi"];
    let plain = command(&args, &accepting.env(&[]));
    assert_eq!(plain.code, 0, "{}", plain.err);
    assert!(plain.out.starts_with("accepted by twilio"), "{}", plain.out);
    let coloured = command(&[&args[..], &["--color", "always"]].concat(), &accepting.env(&[]));
    assert!(coloured.out.starts_with("\x1b[32maccepted\x1b[0m by twilio"), "{}", coloured.out);
    let first_line = |text: &str| text.lines().next().unwrap_or_default().to_owned();
    assert_eq!(first_line(&coloured.out.replace("\x1b[32m", "").replace("\x1b[0m", "")), first_line(&plain.out));

    let rejecting = Twilio::answering(
        ResponseTemplate::new(400).set_body_json(serde_json::json!({"code": 21211, "message": "bad"})),
    );
    let rejected = command(&[&args[..], &["--color", "always"]].concat(), &rejecting.env(&[]));
    assert_eq!(rejected.code, 1, "{}", rejected.err);
    assert!(rejected.err.starts_with("error: \x1b[31mprovider_rejected\x1b[0m: "), "{}", rejected.err);
    let json = command(&[&args[..], &["--color", "always", "--json"]].concat(), &rejecting.env(&[]));
    assert!(!json.out.contains('\x1b') && !json.err.contains('\x1b'), "{}{}", json.out, json.err);
}

/// Standard output whose reader goes away after `room` bytes (`sms-sdk man | head`).
struct ClosingPipe {
    room: usize,
}

impl std::io::Write for ClosingPipe {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        let taken = bytes.len().min(self.room);
        self.room -= taken;
        Ok(taken)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    for args in [&["man"][..], &["completions", "bash"]] {
        let mut err = Vec::new();
        let code = sms_sdk_cli::run(args.iter().copied(), &Env::default(), &mut ClosingPipe { room: 20 }, &mut err);
        assert_eq!(code, 0, "{args:?}: {}", String::from_utf8_lossy(&err));
        assert!(err.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&err));
    }
}
