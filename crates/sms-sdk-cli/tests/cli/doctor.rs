//! The doctor, line for line (T252–T265), run in-process.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use serde_json::json;
use sms_sdk_cli::{Env, run};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

const SID: &str = "AC0123456789abcdef0123456789abcdef";

struct Output {
    code: u8,
    out: String,
    err: String,
}

fn doctor(args: &[&str], env: &[(&str, &str)]) -> Output {
    let args: Vec<String> = std::iter::once("doctor").chain(args.iter().copied()).map(str::to_owned).collect();
    let env: Env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &env, &mut out, &mut err);
    Output { code, out: String::from_utf8(out).unwrap(), err: String::from_utf8(err).unwrap() }
}

fn twilio_env() -> Vec<(&'static str, &'static str)> {
    vec![
        ("TWILIO_ACCOUNT_SID", SID),
        ("TWILIO_AUTH_TOKEN", "super-secret-twilio-token"),
        ("TWILIO_FROM", "+15005550006"),
    ]
}

/// A mock Twilio API on its own runtime, and the env pointing at it.
fn mock_twilio(reply: ResponseTemplate) -> (tokio::runtime::Runtime, MockServer) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(any()).respond_with(reply).mount(&server).await;
        server
    });
    (runtime, server)
}

fn calls(runtime: &tokio::runtime::Runtime, server: &MockServer) -> usize {
    runtime.block_on(server.received_requests()).unwrap_or_default().len()
}

#[test]
fn t252_dry_run_hides_secrets_and_numbers() {
    let (runtime, server) = mock_twilio(ResponseTemplate::new(500));
    let mut env = twilio_env();
    let uri = server.uri();
    env.push(("SMS_SDK_TWILIO_BASE_URL", &uri));
    let o = doctor(&["--adapter", "twilio", "--to", "+14155550123"], &env);
    assert_eq!(o.code, 0, "{}{}", o.out, o.err);
    assert!(o.out.contains("dry run, no network calls"));
    assert!(o.out.contains("[ok]           TWILIO_ACCOUNT_SID set"));
    assert!(o.out.contains("TWILIO_AUTH_TOKEN set (value hidden)"));
    assert!(o.out.contains("Nothing was sent."));
    for secret in ["super-secret-twilio-token", "+14155550123", "+15005550006"] {
        assert!(!o.out.contains(secret) && !o.err.contains(secret), "{secret}");
    }
    assert_eq!(calls(&runtime, &server), 0);
}

#[test]
fn t253_nothing_unverifiable_is_claimed() {
    let o = doctor(&["--adapter", "twilio", "--to", "+14155550123"], &twilio_env());
    assert!(o.out.contains("[not verified] credentials"));
    assert!(o.out.contains("[not verified] sender provisioning, 10DLC/toll-free registration, and campaign status"));
    assert!(o.out.contains("[not verified] webhook URL reachability"));
    for line in o.out.lines().filter(|l| l.starts_with("[ok]")) {
        for claim in ["approved", "registered", "reachable", "credentials are valid"] {
            assert!(!line.contains(claim), "{line}");
        }
    }
}

#[test]
fn t254_unicode_body_estimate() {
    let o = doctor(
        &["--adapter", "telnyx", "--body", "Hello 📦"],
        &[("TELNYX_API_KEY", "k"), ("TELNYX_FROM", "+15005550006")],
    );
    assert!(o.out.contains("UCS2, 8 UTF-16 units, 1 segment (estimate, not a price quote)"), "{}", o.out);
    assert!(o.out.contains("characters forcing UCS-2: \"📦\""), "{}", o.out);
}

#[test]
fn t255_missing_variables_and_a_bad_sid() {
    let o = doctor(&["--adapter", "twilio"], &[("TWILIO_ACCOUNT_SID", "bad")]);
    assert_eq!(o.code, 1);
    assert!(o.out.contains("[fail]         TWILIO_AUTH_TOKEN or TWILIO_API_KEY_SID missing"), "{}", o.out);
    // The reference's `accountSid must be AC`, in the variable's name.
    assert!(o.out.contains("TWILIO_ACCOUNT_SID must be AC"), "{}", o.out);
    assert!(o.out.contains("no sender"));
}

#[test]
fn t256_unsupported_sender_type() {
    let o = doctor(&["--adapter", "vonage", "--from", "12345"], &[("VONAGE_API_KEY", "k"), ("VONAGE_API_SECRET", "s")]);
    assert_eq!(o.code, 1);
    assert!(o.out.contains("[fail]         from: vonage does not support short code senders."), "{}", o.out);
}

#[test]
fn t257_invalid_recipient() {
    let o = doctor(&["--adapter", "twilio", "--to", "4155550123"], &twilio_env());
    assert_eq!(o.code, 1);
    assert!(o.out.contains("recipient is not E.164"));
}

#[test]
fn t258_other_providers_pass_offline() {
    for (adapter, env) in [
        ("plivo", vec![("PLIVO_AUTH_ID", "MA1"), ("PLIVO_AUTH_TOKEN", "t"), ("PLIVO_POWERPACK_UUID", "pp-1")]),
        ("vonage", vec![("VONAGE_API_KEY", "k"), ("VONAGE_API_SECRET", "s"), ("VONAGE_FROM", "Acme")]),
        ("telnyx", vec![("TELNYX_API_KEY", "k"), ("TELNYX_FROM", "+15005550006")]),
    ] {
        let o = doctor(&["--adapter", adapter], &env);
        assert_eq!(o.code, 0, "{adapter}: {}", o.out);
    }
}

/// Sinch: a complete environment passes offline in each region; an unknown region fails the
/// doctor as it fails a send; nothing set names the variables to set, once.
#[test]
fn sinch_region_and_missing_variables() {
    let complete = [("SINCH_SERVICE_PLAN_ID", "plan01"), ("SINCH_API_TOKEN", "t"), ("SINCH_FROM", "+15005550006")];
    let o = doctor(&["--adapter", "sinch"], &complete);
    assert_eq!(o.code, 0, "{}", o.out);
    assert!(o.out.contains("https://us.sms.api.sinch.com"), "{}", o.out);
    let eu = doctor(&["--adapter", "sinch"], &[&complete[..], &[("SINCH_REGION", "eu")]].concat());
    assert_eq!(eu.code, 0, "{}", eu.out);
    assert!(eu.out.contains("https://eu.sms.api.sinch.com"), "{}", eu.out);
    let mars = doctor(&["--adapter", "sinch"], &[&complete[..], &[("SINCH_REGION", "mars")]].concat());
    assert_eq!(mars.code, 1, "{}", mars.out);
    assert!(mars.out.contains("SINCH_REGION must be one of us, eu, au, br, ca"), "{}", mars.out);
    let nothing = doctor(&["--adapter", "sinch"], &[]);
    assert_eq!(nothing.code, 1);
    assert!(nothing.out.contains("set SINCH_SERVICE_PLAN_ID and SINCH_API_TOKEN"), "{}", nothing.out);
    assert!(!nothing.out.contains("must be 1 to 64"), "a format error for an unset variable: {}", nothing.out);
}

/// Infobip and Bandwidth: a complete environment passes offline (Infobip at the account's own
/// host, Bandwidth with Basic or OAuth 2.0 credentials); nothing set names what to set.
#[test]
fn infobip_and_bandwidth_environments() {
    let infobip = [("INFOBIP_BASE_URL", "xyz123.api.infobip.com"), ("INFOBIP_API_KEY", "k"), ("INFOBIP_FROM", "Acme")];
    let o = doctor(&["--adapter", "infobip"], &infobip);
    assert_eq!(o.code, 0, "{}", o.out);
    assert!(o.out.contains("https://xyz123.api.infobip.com"), "{}", o.out);
    assert!(o.out.contains("INFOBIP_API_KEY set (value hidden)"), "{}", o.out);
    // The emulator's (or a proxy's) origin stands in for the account's host.
    let emulated =
        [("SMS_SDK_INFOBIP_BASE_URL", "http://127.0.0.1:4010"), ("INFOBIP_API_KEY", "k"), ("INFOBIP_FROM", "Acme")];
    let o = doctor(&["--adapter", "infobip"], &emulated);
    assert_eq!(o.code, 0, "{}", o.out);
    assert!(o.out.contains("base URL: http://127.0.0.1:4010 (from SMS_SDK_INFOBIP_BASE_URL)"), "{}", o.out);
    let own = [("INFOBIP_BASE_URL", "http://127.0.0.1:4010"), ("INFOBIP_API_KEY", "k"), ("INFOBIP_FROM", "Acme")];
    let o = doctor(&["--adapter", "infobip"], &own);
    assert!(o.out.contains("(from INFOBIP_BASE_URL)") && !o.out.contains("production"), "{}", o.out);
    let nothing = doctor(&["--adapter", "infobip"], &[]);
    assert!(nothing.out.contains("base URL: none"), "{}", nothing.out);
    assert!(!nothing.out.contains("well-formed"), "{}", nothing.out);
    assert_eq!(nothing.code, 1);
    assert!(nothing.out.contains("INFOBIP_BASE_URL") && nothing.out.contains("INFOBIP_API_KEY"), "{}", nothing.out);
    let account = [
        ("BANDWIDTH_ACCOUNT_ID", "9900000"),
        ("BANDWIDTH_APPLICATION_ID", "app-1"),
        ("BANDWIDTH_FROM", "+15005550006"),
    ];
    for credentials in [
        [("BANDWIDTH_USERNAME", "api-user"), ("BANDWIDTH_PASSWORD", "p")],
        [("BANDWIDTH_CLIENT_ID", "client"), ("BANDWIDTH_CLIENT_SECRET", "s")],
    ] {
        let o = doctor(&["--adapter", "bandwidth"], &[&account[..], &credentials[..]].concat());
        assert_eq!(o.code, 0, "{}", o.out);
        assert!(o.out.contains("https://messaging.bandwidth.com"), "{}", o.out);
    }
    let none = doctor(&["--adapter", "bandwidth"], &account);
    assert!(none.out.contains("(or BANDWIDTH_CLIENT_ID and BANDWIDTH_CLIENT_SECRET)"), "{}", none.out);
    let both = [
        ("BANDWIDTH_USERNAME", "u"),
        ("BANDWIDTH_PASSWORD", "p"),
        ("BANDWIDTH_CLIENT_ID", "c"),
        ("BANDWIDTH_CLIENT_SECRET", "s"),
    ];
    let o = doctor(&["--adapter", "bandwidth"], &[&account[..], &both[..]].concat());
    assert!(o.out.contains("the API user's Basic credentials are used"), "{}", o.out);
    let half = doctor(&["--adapter", "bandwidth"], &[&account[..], &[("BANDWIDTH_CLIENT_ID", "client")]].concat());
    assert_eq!(half.code, 1, "{}", half.out);
    assert!(half.out.contains("BANDWIDTH_CLIENT_SECRET"), "{}", half.out);
}

#[test]
fn t259_partial_support_notes() {
    let o = doctor(
        &["--adapter", "plivo"],
        &[("PLIVO_AUTH_ID", "MA1"), ("PLIVO_AUTH_TOKEN", "t"), ("PLIVO_FROM", "+15005550006")],
    );
    assert!(o.out.contains("support: partial"));
    assert!(o.out.contains("does not document its API error body"));
}

#[test]
fn t260_live_gating() {
    let (runtime, server) = mock_twilio(ResponseTemplate::new(500));
    let uri = server.uri();
    let mut env = twilio_env();
    env.push(("SMS_SDK_TWILIO_BASE_URL", &uri));
    assert_eq!(doctor(&["--adapter", "twilio", "--live"], &env).code, 2);
    let o = doctor(
        &[
            "--adapter",
            "twilio",
            "--live",
            "--to",
            "+14155550123",
            "--confirm-to",
            "+14155550124",
            "--confirm-from",
            "+15005550006",
        ],
        &env,
    );
    assert_eq!(o.code, 2);
    assert!(o.err.contains("--confirm-to"));
    let o = doctor(&["--adapter", "twilio", "--live", "--to", "+14155550123", "--confirm-to", "+14155550123"], &env);
    assert_eq!(o.code, 2);
    assert!(o.err.contains("--confirm-from +15005550006"), "{}", o.err);
    let o = doctor(
        &[
            "--adapter",
            "twilio",
            "--live",
            "--from",
            "+15005550009",
            "--to",
            "+14155550123",
            "--confirm-to",
            "+14155550123",
            "--confirm-from",
            "+15005550006",
        ],
        &env,
    );
    assert_eq!(o.code, 2);
    assert_eq!(calls(&runtime, &server), 0);
}

#[test]
fn t261_live_with_failed_checks_is_skipped() {
    let o = doctor(
        &[
            "--adapter",
            "twilio",
            "--live",
            "--to",
            "+14155550123",
            "--confirm-to",
            "+14155550123",
            "--confirm-from",
            "+15005550006",
        ],
        &[("TWILIO_ACCOUNT_SID", SID), ("TWILIO_FROM", "+15005550006")],
    );
    assert_eq!(o.code, 1);
    assert!(o.err.contains("Live send skipped: fix the failed checks first."));
}

fn confirmed_live(server: &MockServer) -> Output {
    let uri = server.uri();
    let mut env = twilio_env();
    env.push(("SMS_SDK_TWILIO_BASE_URL", &uri));
    doctor(
        &[
            "--adapter",
            "twilio",
            "--live",
            "--to",
            "+14155550123",
            "--confirm-to",
            "+14155550123",
            "--confirm-from",
            "+15005550006",
        ],
        &env,
    )
}

#[test]
fn t262_confirmed_live_send() {
    let body = json!({"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"});
    let (runtime, server) = mock_twilio(ResponseTemplate::new(201).set_body_json(body));
    let o = confirmed_live(&server);
    assert_eq!(o.code, 0, "{}{}", o.out, o.err);
    assert!(o.out.contains(
        "accepted by twilio: providerId SM0123456789abcdef0123456789abcdef, delivery queued (not handset delivery)"
    ));
    assert_eq!(calls(&runtime, &server), 1);
}

#[test]
fn t263_confirmed_live_rejection() {
    let (runtime, server) =
        mock_twilio(ResponseTemplate::new(400).set_body_json(json!({"code": 21211, "message": "bad"})));
    let o = confirmed_live(&server);
    assert_eq!(o.code, 1);
    assert!(o.out.contains("provider_rejected") && o.out.contains("retrySafe: true"), "{}", o.out);
    assert_eq!(calls(&runtime, &server), 1);
}

fn command(args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&args, &Env::default(), &mut out, &mut err);
    Output { code, out: String::from_utf8(out).unwrap(), err: String::from_utf8(err).unwrap() }
}

#[test]
fn t264_argument_parsing_through_the_command() {
    assert_eq!(command(&[]).code, 0);
    assert_eq!(command(&["--help"]).code, 0);
    assert_eq!(command(&["doctor", "--help"]).code, 0);
    for bad in [
        &["doctor"][..],
        &["doctor", "--adapter", "messagebird"],
        &["doctor", "--adapter"],
        &["doctor", "--adapter", "twilio", "--bogus"],
        &["send"],
    ] {
        assert_eq!(command(bad).code, 2, "{bad:?}");
    }
    assert_ne!(command(&["doctor", "--adapter", "twilio", "--to", "+14155550123"]).code, 2);
}

#[test]
fn t265_usage_errors_and_help() {
    let o = command(&["doctor", "--adapter", "nope"]);
    assert_eq!(o.code, 2);
    assert!(o.err.contains("--adapter must be one of twilio, telnyx, plivo, vonage"));
    let o = command(&["doctor", "--help"]);
    assert_eq!(o.code, 0);
    assert!(o.out.starts_with("Usage: sms-sdk doctor"));
}

/// The doctor with `--json` added: the one JSON object it printed, and its exit code.
fn doctor_json(args: &[&str], env: &[(&str, &str)]) -> (serde_json::Value, Output) {
    let with_json: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
    let o = doctor(&with_json, env);
    let mut objects = serde_json::Deserializer::from_str(&o.out).into_iter::<serde_json::Value>();
    let value = objects.next().expect("one JSON object").expect("valid JSON");
    assert!(objects.next().is_none(), "exactly one JSON object: {}", o.out);
    (value, o)
}

#[test]
fn json_reports_every_check_the_estimate_and_the_exit_code() {
    let args = ["--adapter", "twilio", "--to", "+14155550123", "--body", "Hello 📦"];
    let human = doctor(&args, &twilio_env());
    let (report, o) = doctor_json(&args, &twilio_env());
    assert_eq!(o.code, human.code);
    assert_eq!(report["exit_code"], u64::from(human.code));
    assert_eq!(report["adapter"], "twilio");
    assert_eq!(report["mode"], "dry_run");
    assert_eq!(report["live"], serde_json::Value::Null);
    assert_eq!(report["estimate"]["encoding"], "UCS2");
    assert_eq!(report["estimate"]["segments"], 1);
    assert_eq!(report["estimate"]["non_gsm_characters"], json!(["📦"]));
    let checks = report["checks"].as_array().expect("checks");
    // Every check line of the human output, in order, with its status.
    let lines: Vec<&str> = human.out.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(checks.len(), lines.len());
    for (check, line) in checks.iter().zip(&lines) {
        let status = check["status"].as_str().expect("a status");
        assert!(["ok", "fail", "info", "not_verified"].contains(&status), "{status}");
        assert!(line.ends_with(check["message"].as_str().expect("a message")), "{line}");
        assert!(line.starts_with(&format!("[{}]", status.replace('_', " "))), "{line}");
    }
    for secret in ["super-secret-twilio-token", "+14155550123", "+15005550006"] {
        assert!(!o.out.contains(secret) && !o.err.contains(secret), "{secret}");
    }
    assert!(o.out.contains("+1********23"), "the recipient is masked as in the human output");
}

#[test]
fn json_exit_codes_equal_the_human_ones() {
    let failing = [("TWILIO_ACCOUNT_SID", "bad")];
    for (args, env) in [
        (&["--adapter", "twilio"][..], &twilio_env()[..]),
        (&["--adapter", "twilio"][..], &failing[..]),
        (&["--adapter", "twilio", "--to", "4155550123"][..], &twilio_env()[..]),
        (&["--adapter", "vonage", "--from", "12345"][..], &[("VONAGE_API_KEY", "k"), ("VONAGE_API_SECRET", "s")][..]),
        (&["--adapter", "twilio", "--live"][..], &twilio_env()[..]),
    ] {
        let human = doctor(args, env);
        let (report, o) = doctor_json(args, env);
        assert_eq!(o.code, human.code, "{args:?}");
        assert_eq!(report["exit_code"], u64::from(human.code), "{args:?}");
        let fails = report["checks"].as_array().expect("checks").iter().filter(|c| c["status"] == "fail").count();
        assert_eq!(fails, human.out.matches("[fail]").count(), "{args:?}");
    }
    let (report, _) = doctor_json(&["--adapter", "twilio", "--live"], &twilio_env());
    assert_eq!(report["live"], json!({"attempted": false, "reason": "Live send needs --to with an E.164 recipient."}));
}

#[test]
fn json_reports_the_live_send() {
    let body = json!({"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"});
    let (runtime, server) = mock_twilio(ResponseTemplate::new(201).set_body_json(body));
    let uri = server.uri();
    let mut env = twilio_env();
    env.push(("SMS_SDK_TWILIO_BASE_URL", &uri));
    let args = [
        "--adapter",
        "twilio",
        "--live",
        "--to",
        "+14155550123",
        "--confirm-to",
        "+14155550123",
        "--confirm-from",
        "+15005550006",
    ];
    let (report, o) = doctor_json(&args, &env);
    assert_eq!(o.code, 0, "{}{}", o.out, o.err);
    assert_eq!(report["mode"], "live");
    assert_eq!(report["live"]["accepted"], true);
    assert_eq!(report["live"]["provider_id"], "SM0123456789abcdef0123456789abcdef");
    assert_eq!(report["exit_code"], 0);
    assert!(!o.out.contains("+14155550123") && !o.out.contains("+15005550006"));
    assert_eq!(calls(&runtime, &server), 1);
}

#[test]
fn json_is_in_the_usage() {
    let o = command(&["doctor", "--help"]);
    assert!(o.out.contains("  --json "), "{}", o.out);
}

/// The arguments of a confirmed live send from the test sender to the test recipient.
const LIVE: [&str; 9] = [
    "--adapter",
    "twilio",
    "--live",
    "--to",
    "+14155550123",
    "--confirm-to",
    "+14155550123",
    "--confirm-from",
    "+15005550006",
];

#[test]
fn the_base_url_in_use_is_shown_without_its_userinfo() {
    let env = [
        ("TWILIO_ACCOUNT_SID", SID),
        ("TWILIO_AUTH_TOKEN", "super-secret-twilio-token"),
        ("TWILIO_FROM", "+15005550006"),
        ("SMS_SDK_TWILIO_BASE_URL", "http://proxy-user:proxy-pass@127.0.0.1:4010/"),
    ];
    let o = doctor(&["--adapter", "twilio"], &env);
    assert_eq!(o.code, 0, "{}{}", o.out, o.err);
    assert!(
        o.out.contains("[info]         base URL: http://***@127.0.0.1:4010 (from SMS_SDK_TWILIO_BASE_URL)"),
        "{}",
        o.out
    );
    let (report, o) = doctor_json(&["--adapter", "twilio"], &env);
    assert_eq!(report["base_url"], json!({"url": "http://***@127.0.0.1:4010", "source": "SMS_SDK_TWILIO_BASE_URL"}));
    for leak in ["proxy-user", "proxy-pass"] {
        assert!(!o.out.contains(leak) && !o.err.contains(leak), "{leak}: {}", o.out);
    }
    // Without the override: the production origin.
    for (adapter, origin) in [
        ("twilio", "https://api.twilio.com"),
        ("telnyx", "https://api.telnyx.com"),
        ("plivo", "https://api.plivo.com"),
        ("vonage", "https://api.nexmo.com"),
    ] {
        let o = doctor(&["--adapter", adapter], &[]);
        let variable = format!("SMS_SDK_{}_BASE_URL", adapter.to_ascii_uppercase());
        let line = format!("[info]         base URL: {origin} (production; {variable} is not set)");
        assert!(o.out.contains(&line), "{adapter}: {}", o.out);
        let (report, _) = doctor_json(&["--adapter", adapter], &[]);
        assert_eq!(report["base_url"], json!({"url": origin, "source": "production"}), "{adapter}");
    }
}

#[test]
fn an_accepted_live_send_verifies_the_credentials() {
    let body = json!({"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"});
    let (_runtime, server) = mock_twilio(ResponseTemplate::new(201).set_body_json(body));
    let o = confirmed_live(&server);
    assert_eq!(o.code, 0, "{}{}", o.out, o.err);
    assert!(!o.out.contains("[not verified] credentials"), "{}", o.out);
    let endpoint = format!("the SMS_SDK_TWILIO_BASE_URL endpoint {}", server.uri());
    assert!(
        o.out.contains(&format!("[ok]           credentials verified: {endpoint} accepted the live send")),
        "{}",
        o.out
    );
    let uri = server.uri();
    let mut env = twilio_env();
    env.push(("SMS_SDK_TWILIO_BASE_URL", &uri));
    let (report, o) = doctor_json(&LIVE, &env);
    assert_eq!(o.code, 0);
    assert_eq!(report["live"]["credentials"], "verified");
    let checks = report["checks"].as_array().unwrap();
    assert!(
        !checks
            .iter()
            .any(|c| c["status"] == "not_verified" && c["message"].as_str().unwrap().starts_with("credentials"))
    );
}

#[test]
fn a_failed_live_send_says_what_it_proves_about_the_credentials() {
    let twilio_error = |status: u16, code: u32| {
        ResponseTemplate::new(status).set_body_json(json!({"code": code, "message": "no", "status": status}))
    };
    for (reply, code, label, proof, status) in [
        (twilio_error(401, 20003), 1, "[fail]         ", "credentials refused: ", "refused"),
        (twilio_error(400, 21211), 1, "[ok]           ", "credentials verified: ", "verified"),
        (twilio_error(429, 20429), 1, "[not verified] ", "credentials (", "not_verified"),
        (ResponseTemplate::new(404), 1, "[not verified] ", "credentials (", "not_verified"),
        (
            ResponseTemplate::new(500),
            1,
            "[not verified] ",
            "credentials (the outcome of the live send is unknown",
            "not_verified",
        ),
    ] {
        let (runtime, server) = mock_twilio(reply);
        let o = confirmed_live(&server);
        assert_eq!(o.code, code, "{proof}: {}{}", o.out, o.err);
        let credentials: Vec<&str> =
            o.out.lines().filter(|l| l.get(15..).is_some_and(|t| t.starts_with("credentials"))).collect();
        assert_eq!(credentials.len(), 1, "{}", o.out);
        assert!(credentials[0].starts_with(&format!("{label}{proof}")), "{}", o.out);
        assert!(!o.out.contains("the dry run does not call the provider"), "{}", o.out);
        assert_eq!(calls(&runtime, &server), 1);
        let uri = server.uri();
        let mut env = twilio_env();
        env.push(("SMS_SDK_TWILIO_BASE_URL", &uri));
        let (report, _) = doctor_json(&LIVE, &env);
        assert_eq!(report["live"]["credentials"], status, "{report}");
        assert_eq!(report["exit_code"], u64::from(code));
    }
    // A live send that was not made says so.
    let o = doctor(&["--adapter", "twilio", "--live"], &twilio_env());
    assert_eq!(o.code, 2);
    assert!(o.out.contains("[not verified] credentials (the live send was not made)"), "{}", o.out);
}

#[test]
fn missing_credentials_are_named_as_the_variables_to_set() {
    let sid = [("TWILIO_ACCOUNT_SID", SID), ("TWILIO_FROM", "+15005550006")];
    for (adapter, env, expected) in [
        ("twilio", &sid[..], "set TWILIO_AUTH_TOKEN (or TWILIO_API_KEY_SID and TWILIO_API_KEY_SECRET)"),
        (
            "twilio",
            &[("TWILIO_ACCOUNT_SID", SID), ("TWILIO_API_KEY_SID", "SK0123456789abcdef0123456789abcdef")][..],
            "set TWILIO_API_KEY_SECRET",
        ),
        (
            "twilio",
            &[][..],
            "set TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN (or TWILIO_API_KEY_SID and TWILIO_API_KEY_SECRET)",
        ),
        ("telnyx", &[][..], "set TELNYX_API_KEY"),
        ("plivo", &[][..], "set PLIVO_AUTH_ID and PLIVO_AUTH_TOKEN"),
        ("plivo", &[("PLIVO_AUTH_ID", "MA1")][..], "set PLIVO_AUTH_TOKEN"),
        (
            "vonage",
            &[][..],
            "set VONAGE_API_KEY and VONAGE_API_SECRET (or VONAGE_APPLICATION_ID and VONAGE_PRIVATE_KEY)",
        ),
        ("vonage", &[("VONAGE_API_KEY", "k")][..], "set VONAGE_API_SECRET"),
        ("vonage", &[("VONAGE_APPLICATION_ID", "app")][..], "set VONAGE_PRIVATE_KEY"),
    ] {
        let o = doctor(&["--adapter", adapter], env);
        assert_eq!(o.code, 1, "{adapter}: {}", o.out);
        assert!(
            o.out.contains(&format!("[fail]         adapter configuration: {expected}\n")),
            "{adapter} {env:?}: {}",
            o.out
        );
        assert_no_field_names(&o.out);
    }
    // Other problems name the variable too.
    let bad_key = [("VONAGE_APPLICATION_ID", "app"), ("VONAGE_PRIVATE_KEY", "not a key"), ("VONAGE_FROM", "Acme")];
    let o = doctor(&["--adapter", "vonage"], &bad_key);
    assert!(o.out.contains("[fail]         adapter configuration: VONAGE_PRIVATE_KEY "), "{}", o.out);
    let bad_url =
        [("TELNYX_API_KEY", "k"), ("TELNYX_FROM", "+15005550006"), ("SMS_SDK_TELNYX_BASE_URL", "api.telnyx.com")];
    let o = doctor(&["--adapter", "telnyx"], &bad_url);
    assert!(o.out.contains("[fail]         adapter configuration: SMS_SDK_TELNYX_BASE_URL must be"), "{}", o.out);
    let bad_header = [("PLIVO_AUTH_ID", "MA1"), ("PLIVO_AUTH_TOKEN", "t t"), ("PLIVO_FROM", "+15005550006")];
    let o = doctor(&["--adapter", "plivo"], &bad_header);
    assert!(o.out.contains("[fail]         adapter configuration: PLIVO_AUTH_TOKEN "), "{}", o.out);
    for o in [doctor(&["--adapter", "vonage"], &bad_key), doctor(&["--adapter", "plivo"], &bad_header)] {
        assert_no_field_names(&o.out);
    }
}

/// No line names a library field (`api_key_sid`) where the user sets a variable.
fn assert_no_field_names(out: &str) {
    for field in [
        "account_sid",
        "auth_token",
        "api_key",
        "api_secret",
        "auth_id",
        "application_id",
        "private_key",
        "base URL must",
    ] {
        assert!(!out.contains(field), "{field}: {out}");
    }
}

/// AWS: a complete environment passes offline against its region's endpoint; a bad region fails
/// the doctor as it fails a send; nothing set names the variables to set.
#[test]
fn aws_region_and_missing_variables() {
    let complete = [
        ("AWS_REGION", "eu-west-1"),
        ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        ("AWS_FROM", "+15005550006"),
    ];
    let o = doctor(&["--adapter", "aws"], &complete);
    assert_eq!(o.code, 0, "{}", o.out);
    assert!(o.out.contains("https://sms-voice.eu-west-1.amazonaws.com"), "{}", o.out);
    assert!(!o.out.contains("wJalrXUtnFEMI"), "the secret is shown: {}", o.out);
    let default_region: Vec<(&str, &str)> =
        complete.iter().map(|&(k, v)| if k == "AWS_REGION" { ("AWS_DEFAULT_REGION", v) } else { (k, v) }).collect();
    assert_eq!(doctor(&["--adapter", "aws"], &default_region).code, 0);
    let bad = doctor(&["--adapter", "aws"], &[&complete[1..], &[("AWS_REGION", "EU West")]].concat());
    assert_eq!(bad.code, 1, "{}", bad.out);
    assert!(bad.out.contains("AWS_REGION must be a region name"), "{}", bad.out);
    let nothing = doctor(&["--adapter", "aws"], &[]);
    assert_eq!(nothing.code, 1);
    assert!(nothing.out.contains("AWS_ACCESS_KEY_ID"), "{}", nothing.out);
}
