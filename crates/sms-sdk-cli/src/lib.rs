//! The logic of the `sms-sdk` command: one function over arguments, environment and output
//! streams, returning the exit code, so tests run it in-process.
//!
//! Only `send` exists so far, and it stops before any request when no provider is configured.

use std::io::Write;

/// Exit code of a usage or input error.
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a configuration error: nothing was sent.
pub const EXIT_CONFIGURATION: u8 = 7;

const HELP: &str = "\
sms-sdk: send SMS through Twilio, Telnyx, Plivo and Vonage

Usage:
  sms-sdk send --to E164 --body TEXT [--from SENDER]

Commands:
  send    send one message
";

/// The variables that configure a provider, by provider.
const PROVIDER_ENV: &[(&str, &[&str])] = &[
    ("twilio", &["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_API_KEY_SID"]),
    ("telnyx", &["TELNYX_API_KEY"]),
    ("plivo", &["PLIVO_AUTH_ID", "PLIVO_AUTH_TOKEN"]),
    ("vonage", &["VONAGE_API_KEY", "VONAGE_APPLICATION_ID"]),
];

/// Runs the command with `args` (without the program name) and `env`, writing to `out` and
/// `err`; returns the exit code.
pub fn run(args: &[String], env: &[(String, String)], out: &mut impl Write, err: &mut impl Write) -> u8 {
    match args.first().map(String::as_str) {
        None | Some("--help" | "-h" | "help") => {
            let _ = out.write_all(HELP.as_bytes());
            0
        }
        Some("send") => send(&args[1..], env, err),
        Some(other) => {
            let _ = writeln!(err, "error: unknown command `{other}`\n\n{HELP}");
            EXIT_USAGE
        }
    }
}

fn send(args: &[String], env: &[(String, String)], err: &mut impl Write) -> u8 {
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1));
    if flag("--to").is_none() || flag("--body").is_none() {
        let _ = writeln!(err, "error: `send` needs --to and --body\n\n{HELP}");
        return EXIT_USAGE;
    }
    let set = |name: &str| env.iter().any(|(k, v)| k == name && !v.is_empty());
    let configured: Vec<&str> =
        PROVIDER_ENV.iter().filter(|(_, vars)| vars.iter().any(|v| set(v))).map(|(name, _)| *name).collect();
    if configured.is_empty() {
        let _ = writeln!(
            err,
            "error: no provider configured; nothing was sent.\n\
             Set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN (or TELNYX_API_KEY, PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN, \
             VONAGE_API_KEY and VONAGE_API_SECRET) to send for real.\n\
             The embedded local emulator that sends without an account is not built yet."
        );
    } else {
        let _ = writeln!(
            err,
            "error: the {} adapter is not built yet in this version; nothing was sent.",
            configured.join(", ")
        );
    }
    EXIT_CONFIGURATION
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: &[&str], env: &[(&str, &str)]) -> (u8, String, String) {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &env, &mut out, &mut err);
        (code, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
    }

    #[test]
    fn help_exits_zero() {
        assert_eq!(call(&[], &[]).0, 0);
        assert!(call(&["--help"], &[]).1.contains("Usage"));
    }

    #[test]
    fn send_without_a_provider_says_so_and_sends_nothing() {
        let (code, _, err) = call(&["send", "--to", "+14155550123", "--body", "Hi"], &[("TWILIO_ACCOUNT_SID", "")]);
        assert_eq!(code, EXIT_CONFIGURATION);
        assert!(err.contains("no provider configured"), "{err}");
    }

    #[test]
    fn send_without_flags_is_a_usage_error() {
        assert_eq!(call(&["send"], &[]).0, EXIT_USAGE);
        assert_eq!(call(&["nope"], &[]).0, EXIT_USAGE);
    }
}
