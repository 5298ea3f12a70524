//! `sms-sdk emulator`: the local provider emulator on loopback until interrupted, printing the
//! shell lines that point `sms-sdk send` (and an application) at it, and logging what it serves.

use std::fmt::Write as _;
use std::future::Future;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clap::{Args, ValueHint};
use sms_sdk_emulator::{Emulator, StartError, StartErrorKind, credentials, magic};
use tokio::sync::mpsc;

use crate::embedded::SENDER;
use crate::flags::ProviderUrl;
use crate::{EXIT_CONFIGURATION, EXIT_OK, EXIT_USAGE, Env};

/// How many request log lines may wait to be written (beyond them, lines are dropped and
/// counted).
const LOG_BUFFER: usize = 1024;

/// `sms-sdk emulator` flags.
#[derive(Debug, Args)]
#[command(after_help = magic_help())]
pub(crate) struct EmulatorArgs {
    /// Loopback address to listen on: `127.0.0.1:PORT`, `[::1]:PORT` or `localhost:PORT` (port
    /// 0: any free port).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4010", value_parser = crate::flags::listen)]
    pub(crate) listen: String,
    /// Where status webhooks go when a message has no callback URL (an absolute http(s) URL).
    /// Repeat it as PROVIDER=URL (twilio, telnyx, plivo, vonage, sinch, aws, infobip or bandwidth)
    /// to send one provider's elsewhere: a bare URL is for every provider without one of its own.
    #[arg(long, value_name = "URL", value_hint = ValueHint::Url, value_parser = crate::flags::provider_url)]
    pub(crate) webhook_url: Vec<ProviderUrl>,
    /// Where injected inbound messages go (an absolute http(s) URL). Repeat it as PROVIDER=URL
    /// for one provider's: a bare URL is for every provider without one of its own.
    #[arg(long, value_name = "URL", value_hint = ValueHint::Url, value_parser = crate::flags::provider_url)]
    pub(crate) inbound_url: Vec<ProviderUrl>,
    /// Milliseconds between status webhook steps.
    #[arg(long, default_value_t = 200)]
    pub(crate) status_delay_ms: u64,
    /// Do not log the requests served and the webhooks posted (one line each on stderr).
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// `sms-sdk emulator`: runs until interrupted.
pub(crate) async fn run(args: EmulatorArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    serve(args, crate::paths::emulator_store_url(env), out, err, |_| async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
}

/// Runs the emulator until the future `until` makes of its base URL ends, logging each request
/// it serves and each webhook it posts to `err` (one line each) unless `--quiet`.
async fn serve<F: Future<Output = ()>>(
    args: EmulatorArgs,
    store: Option<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    until: impl FnOnce(String) -> F,
) -> u8 {
    let (log, mut lines) = mpsc::channel::<String>(LOG_BUFFER);
    let dropped = Arc::new(AtomicU64::new(0));
    let mut builder =
        Emulator::builder().listen(&args.listen).status_delay(Duration::from_millis(args.status_delay_ms));
    if !args.quiet {
        let dropped = Arc::clone(&dropped);
        builder = builder.observe(move |event| {
            if log.try_send(event.to_string()).is_err() {
                dropped.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    if let Err(message) =
        once_each("--webhook-url", &args.webhook_url).and(once_each("--inbound-url", &args.inbound_url))
    {
        let _ = writeln!(err, "error: {message}");
        return EXIT_USAGE;
    }
    for entry in &args.webhook_url {
        builder = match entry.provider {
            Some(provider) => builder.webhook_url_for(provider, &entry.url),
            None => builder.webhook_url(&entry.url),
        };
    }
    for entry in &args.inbound_url {
        builder = match entry.provider {
            Some(provider) => builder.inbound_url_for(provider, &entry.url),
            None => builder.inbound_url(&entry.url),
        };
    }
    let emulator = match builder.start().await {
        Ok(emulator) => emulator,
        Err(error) => {
            let _ = writeln!(err, "error: could not start the emulator: {}", start_error(&error));
            return EXIT_CONFIGURATION;
        }
    };
    let _ = out.write_all(setup_text(&emulator.base_url(), store.as_deref()).as_bytes());
    let _ = out.flush();
    let mut stop = std::pin::pin!(until(emulator.base_url()));
    loop {
        tokio::select! {
            biased;
            () = &mut stop => break,
            Some(line) = lines.recv() => log_line(&line, &dropped, err),
        }
    }
    emulator.shutdown().await;
    while let Ok(line) = lines.try_recv() {
        log_line(&line, &dropped, err);
    }
    EXIT_OK
}

/// Refuses two URLs of `flag` for the same providers: two bare ones, or two for one provider.
///
/// # Errors
/// What is given twice.
fn once_each(flag: &str, entries: &[ProviderUrl]) -> Result<(), String> {
    for (at, entry) in entries.iter().enumerate() {
        if entries.iter().skip(at + 1).any(|later| later.provider == entry.provider) {
            return Err(match entry.provider {
                Some(provider) => format!("{flag}: two URLs for {provider} (give {provider}=URL once)"),
                None => format!(
                    "{flag}: two URLs for every provider (give one bare URL, and PROVIDER=URL for a provider's own)"
                ),
            });
        }
    }
    Ok(())
}

/// Why `sms-sdk emulator` could not start, naming the flag at fault.
fn start_error(error: &StartError) -> String {
    #[allow(clippy::wildcard_enum_match_arm)] // `StartErrorKind` is non-exhaustive: new kinds name no flag yet
    let flag = match error.kind() {
        StartErrorKind::InvalidAddress | StartErrorKind::NotLoopback | StartErrorKind::Bind => "--listen: ",
        StartErrorKind::InvalidSetting => "--status-delay-ms: ",
        StartErrorKind::InvalidUrl => "--webhook-url or --inbound-url: ",
        _ => "",
    };
    format!("{flag}{error}")
}

/// Writes one request log line, after a note of the lines dropped since the last one.
fn log_line(line: &str, dropped: &AtomicU64, err: &mut dyn Write) {
    let skipped = dropped.swap(0, Ordering::Relaxed);
    if skipped > 0 {
        let _ = writeln!(err, "({skipped} request log line(s) dropped: the log fell behind)");
    }
    let _ = writeln!(err, "{line}");
    let _ = err.flush();
}

/// The magic recipients every provider treats alike, one line each: the number, then what a
/// send to it gets (what the start banner lists).
fn magic_lines() -> Vec<String> {
    let mut lines = vec!["Magic recipients (a send to any other number is accepted and delivered):".to_owned()];
    for recipient in magic::recipients().filter(|r| r.only_at.is_none()) {
        let fault = recipient.fault.map(|f| format!("fault={f}: ")).unwrap_or_default();
        lines.push(format!("  {}  {fault}{}", recipient.number, recipient.meaning));
    }
    lines
}

/// The magic recipients rejected at one provider only, one line each, after a line saying how
/// they are numbered.
fn single_provider_lines() -> Vec<String> {
    let mut lines = vec![
        "Rejected at one provider only, accepted and delivered by the others (to show failover; at plivo \
         and sinch, and for a recipient's reasons at aws, they are category request, which does not fail over): \
         +1500555P0RR, P = 1 twilio, 2 telnyx, 3 plivo, 4 vonage, 5 sinch, 6 aws, 7 infobip, 8 bandwidth, for the \
         reason of +150055500RR above:"
            .to_owned(),
    ];
    for recipient in magic::recipients().filter(|r| r.only_at.is_some()) {
        lines.push(format!("  {}  {}", recipient.number, recipient.meaning));
    }
    lines
}

/// The after-help of `sms-sdk emulator`: its magic recipients and faults, per-provider URLs,
/// and its request log.
pub(crate) fn magic_help() -> String {
    let mut text = magic_lines().join("\n");
    text.push_str("\n\n");
    text.push_str(&single_provider_lines().join("\n"));
    text.push_str(
        "\n\nEach request served and each webhook posted is logged on stderr, one line each \
         (provider, operation, masked recipient, status and outcome or fault); --quiet silences it.\n\n\
         A customer's reply (STOP, HELP, or any text): POST /_emulator/inbound with the JSON \
         {\"provider\": \"infobip\", \"from\": \"+14155550123\", \"to\": \"+15005550006\", \"text\": \"STOP\"} \
         (and \"inbound_url\" to override --inbound-url); the emulator posts it, signed as that provider \
         would, to the provider's inbound URL.",
    );
    text
}

/// The variables `sms-sdk emulator` exports: every provider's base URL pointing at `base`, with
/// the emulator's credentials, sender and webhook secrets (AWS's credentials aside).
fn exports(base: &str) -> Vec<(&'static str, String)> {
    // One line, its newlines written `\n` (the command reads them back).
    let certificate = credentials::AWS_SNS_CERTIFICATE.trim_end().replace('\n', "\\n");
    // The Basic credentials the emulator's Infobip and Bandwidth webhooks carry, as `user:password`.
    let infobip_webhook = format!("{}:{}", credentials::INFOBIP_WEBHOOK_USER, credentials::INFOBIP_WEBHOOK_PASSWORD);
    let bandwidth_webhook =
        format!("{}:{}", credentials::BANDWIDTH_CALLBACK_USER, credentials::BANDWIDTH_CALLBACK_PASSWORD);
    let variables = [
        ("SMS_SDK_TWILIO_BASE_URL", base),
        ("SMS_SDK_TELNYX_BASE_URL", base),
        ("SMS_SDK_PLIVO_BASE_URL", base),
        ("SMS_SDK_VONAGE_BASE_URL", base),
        ("SMS_SDK_SINCH_BASE_URL", base),
        ("SMS_SDK_INFOBIP_BASE_URL", base),
        ("SMS_SDK_BANDWIDTH_BASE_URL", base),
        ("TWILIO_ACCOUNT_SID", credentials::TWILIO_ACCOUNT_SID),
        ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN),
        ("TWILIO_FROM", SENDER),
        ("TELNYX_API_KEY", credentials::TELNYX_API_KEY),
        ("TELNYX_FROM", SENDER),
        ("TELNYX_PUBLIC_KEY", credentials::TELNYX_PUBLIC_KEY),
        ("PLIVO_AUTH_ID", credentials::PLIVO_AUTH_ID),
        ("PLIVO_AUTH_TOKEN", credentials::PLIVO_AUTH_TOKEN),
        ("PLIVO_FROM", SENDER),
        ("VONAGE_API_KEY", credentials::VONAGE_API_KEY),
        ("VONAGE_API_SECRET", credentials::VONAGE_API_SECRET),
        ("VONAGE_FROM", SENDER),
        ("VONAGE_SIGNATURE_SECRET", credentials::VONAGE_SIGNATURE_SECRET),
        ("SINCH_SERVICE_PLAN_ID", credentials::SINCH_SERVICE_PLAN_ID),
        ("SINCH_API_TOKEN", credentials::SINCH_API_TOKEN),
        ("SINCH_FROM", SENDER),
        ("SINCH_WEBHOOK_SECRET", credentials::SINCH_WEBHOOK_SECRET),
        ("INFOBIP_API_KEY", credentials::INFOBIP_API_KEY),
        ("INFOBIP_FROM", SENDER),
        ("INFOBIP_WEBHOOK_BASIC", &infobip_webhook),
        ("BANDWIDTH_ACCOUNT_ID", credentials::BANDWIDTH_ACCOUNT_ID),
        ("BANDWIDTH_APPLICATION_ID", credentials::BANDWIDTH_APPLICATION_ID),
        ("BANDWIDTH_USERNAME", credentials::BANDWIDTH_API_USER),
        ("BANDWIDTH_PASSWORD", credentials::BANDWIDTH_API_PASSWORD),
        ("BANDWIDTH_FROM", SENDER),
        ("BANDWIDTH_WEBHOOK_BASIC", &bandwidth_webhook),
        // What `serve` and `webhook verify` need for the emulator's SNS messages (the emulator
        // signs with a certificate of its own).
        ("AWS_SNS_TOPIC_ARN", credentials::AWS_SNS_TOPIC_ARN),
        ("SMS_SDK_AWS_SNS_CERTIFICATE", &certificate),
    ];
    variables.into_iter().map(|(name, value)| (name, value.to_owned())).collect()
}

/// What `sms-sdk emulator` prints at start: valid shell as a whole (comments and one `export`
/// line per variable), so that pasting it, or saving it and `source`-ing it, configures
/// `sms-sdk send` (and an application) for every provider against the emulator.
fn setup_text(base: &str, store: Option<&str>) -> String {
    let mut text = format!(
        "# sms-sdk emulator listening on {base}\n\
         # Runs until Ctrl-C. Paste these lines into a shell: every provider's base URL then points\n\
         # at the emulator, with the test credentials and sender it accepts and the secrets its\n\
         # webhooks are signed with.\n"
    );
    for (name, value) in exports(base) {
        let _ = writeln!(text, "export {name}={}", crate::shell::quote(&value));
    }
    let _ = writeln!(
        text,
        "# Bandwidth with OAuth 2.0 client credentials instead of its API user: unset BANDWIDTH_USERNAME\n\
         # and BANDWIDTH_PASSWORD (the API user wins when both are set), then:"
    );
    for (name, value) in [
        ("BANDWIDTH_CLIENT_ID", credentials::BANDWIDTH_CLIENT_ID),
        ("BANDWIDTH_CLIENT_SECRET", credentials::BANDWIDTH_CLIENT_SECRET),
    ] {
        let _ = writeln!(text, "# export {name}={}", crate::shell::quote(value));
    }
    let _ = writeln!(
        text,
        "# AWS End User Messaging SMS: its credentials are every AWS tool's, so they stay commented out;\n\
         # uncomment these in a shell of its own to send through the emulator's AWS API as well:"
    );
    let aws = [
        ("SMS_SDK_AWS_BASE_URL", base),
        ("AWS_REGION", credentials::AWS_REGION),
        ("AWS_ACCESS_KEY_ID", credentials::AWS_ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", credentials::AWS_SECRET_ACCESS_KEY),
        ("AWS_FROM", SENDER),
    ];
    for (name, value) in aws {
        let _ = writeln!(text, "# export {name}={}", crate::shell::quote(value));
    }
    match store {
        Some(store) => {
            let _ = writeln!(
                text,
                "# Sends through the emulator keep their idempotency records and suppression list apart from the\n\
                 # real ones (unset SMS_SDK_STORE, and the lines above, to send for real):\n\
                 export SMS_SDK_STORE={}",
                crate::shell::quote(store)
            );
        }
        None => {
            let _ = writeln!(
                text,
                "# No data directory (HOME or XDG_DATA_HOME): name a store of its own for these sends with \
                 SMS_SDK_STORE."
            );
        }
    }
    let _ = write!(
        text,
        "# Vonage also accepts its test application (RS256 JWT) in place of the API key and secret:\n\
         # VONAGE_APPLICATION_ID={} and this VONAGE_PRIVATE_KEY (PEM text or a file path):\n",
        credentials::VONAGE_APPLICATION_ID
    );
    for line in credentials::VONAGE_PRIVATE_KEY.lines() {
        let _ = writeln!(text, "#   {line}");
    }
    let _ = writeln!(text, "# Every credential and secret as JSON: GET {base}/_emulator/keys");
    let _ =
        writeln!(text, "# Every message request received, in order: GET {base}/_emulator/messages (DELETE clears it)");
    let _ = writeln!(
        text,
        "# The sms-sdk command reads the SMS_SDK_*_BASE_URL lines; the library does not: pass them to\n\
         # each adapter's builder (.base_url(...)) in your own program."
    );
    for line in magic_lines() {
        let _ = writeln!(text, "# {line}");
    }
    text
}

#[cfg(test)]
mod tests {
    use sms_sdk::{Client, Message, Twilio};

    use super::*;

    #[test]
    fn every_magic_number_is_in_the_help_and_the_banner() {
        let banner = setup_text("http://127.0.0.1:4010", Some("sqlite:/data/sms-sdk/emulator.db"));
        let help = magic_help();
        for recipient in magic::recipients() {
            assert!(help.contains(&format!("  {}  ", recipient.number)), "help: {}", recipient.number);
            if let Some(fault) = recipient.fault {
                assert!(help.contains(&format!("{}  fault={fault}", recipient.number)), "{fault}");
            }
            // The banner keeps its lines: the recipients of one provider are in the help only.
            let in_banner = banner.contains(&format!("#   {}  ", recipient.number));
            assert_eq!(in_banner, recipient.only_at.is_none(), "banner: {}", recipient.number);
        }
        assert!(help.contains("+15005551002  rejected at twilio only: cannot route from this sender"), "{help}");
    }

    /// The emulator's flags as the command line gives them.
    fn emulator_args(flags: &[&str]) -> EmulatorArgs {
        #[derive(clap::Parser)]
        struct Command {
            #[command(flatten)]
            args: EmulatorArgs,
        }
        let argv = ["emulator", "--listen", "127.0.0.1:0"].into_iter().chain(flags.iter().copied());
        <Command as clap::Parser>::try_parse_from(argv).map(|c| c.args).expect("valid flags")
    }

    /// Runs `sms-sdk emulator` with `flags` in-process, sends to an ordinary and a magic
    /// recipient through it, stops it, and returns what it wrote on stdout and stderr.
    async fn serve_and_send(flags: &[&str]) -> (String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let sends = |base: String| async move {
            let twilio = Twilio::builder(credentials::TWILIO_ACCOUNT_SID, credentials::TWILIO_AUTH_TOKEN)
                .from(SENDER)
                .base_url(base)
                .build()
                .expect("the adapter builds");
            let client = Client::builder().adapter(twilio).build().expect("the client builds");
            assert!(client.send(&Message::new("+14155550123", "a private text")).await.is_ok());
            assert!(client.send(&Message::new(magic::OPTED_OUT, "a private text")).await.is_err());
            assert!(client.send(&Message::new(magic::RESET, "a private text")).await.is_err());
        };
        let code = serve(emulator_args(flags), None, &mut out, &mut err, sends).await;
        assert_eq!(code, EXIT_OK);
        (String::from_utf8(out).expect("UTF-8"), String::from_utf8(err).expect("UTF-8"))
    }

    #[tokio::test]
    async fn each_request_is_logged_masked_on_stderr() {
        let (out, err) = serve_and_send(&[]).await;
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(
            lines,
            [
                "twilio send to=+1********23 201 accepted",
                "twilio send to=+1********04 400 rejected category=compliance",
                "twilio send to=+1********03 fault=reset",
            ]
        );
        for full in ["+14155550123", magic::OPTED_OUT, magic::RESET, "a private text", credentials::TWILIO_AUTH_TOKEN] {
            assert!(!err.contains(full), "{full}");
        }
        assert!(out.starts_with("# sms-sdk emulator listening on http://127.0.0.1:"));
        assert!(!out.contains(" send to="), "the log is not on stdout");
    }

    #[tokio::test]
    async fn quiet_logs_nothing() {
        let (out, err) = serve_and_send(&["--quiet"]).await;
        assert_eq!(err, "");
        assert!(out.contains("export TWILIO_ACCOUNT_SID="));
    }

    #[test]
    fn webhook_and_inbound_urls_repeat_bare_for_every_provider_or_named_for_one() {
        use sms_sdk_emulator::Provider;
        let args = emulator_args(&[
            "--webhook-url",
            "http://127.0.0.1:9/status",
            "--webhook-url",
            "telnyx=http://127.0.0.1:9/telnyx",
            "--inbound-url",
            "vonage=http://127.0.0.1:9/in",
        ]);
        let entries = |urls: &[ProviderUrl]| urls.iter().map(|e| (e.provider, e.url.clone())).collect::<Vec<_>>();
        assert_eq!(
            entries(&args.webhook_url),
            [
                (None, "http://127.0.0.1:9/status".to_owned()),
                (Some(Provider::Telnyx), "http://127.0.0.1:9/telnyx".to_owned())
            ]
        );
        assert_eq!(entries(&args.inbound_url), [(Some(Provider::Vonage), "http://127.0.0.1:9/in".to_owned())]);
        assert!(once_each("--webhook-url", &args.webhook_url).is_ok());
        assert!(emulator_args(&[]).webhook_url.is_empty());
    }

    #[tokio::test]
    async fn two_urls_for_the_same_providers_are_a_usage_error_before_starting() {
        for flags in [
            ["--webhook-url", "twilio=http://127.0.0.1:9/a", "--webhook-url", "twilio=http://127.0.0.1:9/b"],
            ["--inbound-url", "http://127.0.0.1:9/a", "--inbound-url", "http://127.0.0.1:9/b"],
        ] {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let code = serve(emulator_args(&flags), None, &mut out, &mut err, |_| async {}).await;
            assert_eq!(code, EXIT_USAGE, "{flags:?}");
            assert!(out.is_empty(), "the emulator did not start");
            let err = String::from_utf8(err).expect("UTF-8");
            assert!(err.starts_with(&format!("error: {}: two URLs for ", flags[0])), "{err}");
        }
    }

    #[test]
    fn every_line_is_a_comment_or_one_export() {
        for line in setup_text("http://127.0.0.1:4010", Some("sqlite:/d/emulator.db")).lines() {
            assert!(line.starts_with("# ") || line.starts_with("export "), "{line}");
        }
    }
}
