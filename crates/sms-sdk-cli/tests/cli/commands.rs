//! `send`, `idempotency` and `webhook verify`, in-process and through the built binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::time::Duration;

use common::{MESSAGE_SID, Output, SID, Twilio, command};
use serde_json::json;
use sms_sdk_cli::Env;
use wiremock::ResponseTemplate;

fn temp_store() -> String {
    let dir =
        std::env::temp_dir().join(format!("sms-sdk-cli-{}-{:?}", std::process::id(), std::thread::current().id()));
    format!("sqlite:{}", dir.join(format!("{}.db", uuid_like())).display())
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

#[test]
fn t251_the_built_binary_sends_once() {
    let twilio = Twilio::accepting();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sms-sdk"))
        .args(["send", "--to", "+14155550123", "--body", "Your order has shipped."])
        .env("TWILIO_ACCOUNT_SID", SID)
        .env("TWILIO_AUTH_TOKEN", "test-token")
        .env("TWILIO_FROM", "+15005550006")
        .env("SMS_SDK_TWILIO_BASE_URL", twilio.server.uri())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains(MESSAGE_SID), "{stdout}");
    assert_eq!(twilio.calls(), 1);
}

#[test]
fn a_repeated_key_replays_and_another_body_conflicts() {
    let twilio = Twilio::accepting();
    let env = twilio.env(&[("SMS_SDK_STORE", &temp_store())]);
    let send =
        |body: &str| command(&["send", "--to", "+14155550123", "--body", body, "--idempotency-key", "order:1"], &env);
    let first = send("Your order has shipped.");
    assert_eq!(first.code, 0, "{}{}", first.out, first.err);
    let second = send("Your order has shipped.");
    assert_eq!(second.code, 0);
    assert!(second.out.contains("replayed"), "{}", second.out);
    assert_eq!(twilio.calls(), 1);
    let other = send("Something else");
    assert_eq!(other.code, 4, "{}", other.err);
    assert_eq!(twilio.calls(), 1);
}

#[test]
fn json_output_is_one_object() {
    let twilio = Twilio::accepting();
    let env = twilio.env(&[("SMS_SDK_STORE", "memory")]);
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi", "--json"], &env);
    let value: serde_json::Value = serde_json::from_str(o.out.trim()).unwrap();
    assert_eq!((value["provider"].as_str(), value["provider_id"].as_str()), (Some("twilio"), Some(MESSAGE_SID)));
    assert_eq!(value["handoff"], "accepted");
    let o = command(&["send", "--to", "+0", "--body", "Hi", "--json"], &env);
    assert_eq!(o.code, 2);
    let value: serde_json::Value = serde_json::from_str(o.out.trim()).unwrap();
    assert_eq!(value["error"]["code"], "invalid_recipient");
    assert_eq!(value["error"]["retry_safe"], true);
}

#[test]
fn an_unreachable_store_exits_7_and_sends_nothing() {
    let twilio = Twilio::accepting();
    let env = twilio.env(&[("SMS_SDK_STORE", "postgres://nobody@127.0.0.1:1/none")]);
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi", "--idempotency-key", "k", "--json"], &env);
    assert_eq!(o.code, 7, "{}{}", o.out, o.err);
    let value: serde_json::Value = serde_json::from_str(o.out.trim()).unwrap();
    assert_eq!(value["error"]["code"], "store");
    assert_eq!(twilio.calls(), 0);
}

#[test]
fn exit_codes_follow_the_outcome() {
    let rejected =
        Twilio::answering(ResponseTemplate::new(400).set_body_json(json!({"code": 21211, "message": "bad"})));
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &rejected.env(&[("SMS_SDK_STORE", "memory")]));
    assert_eq!(o.code, 1, "{}", o.err);
    let unknown = Twilio::answering(ResponseTemplate::new(500));
    let o = command(&["send", "--to", "+14155550123", "--body", "Hi"], &unknown.env(&[("SMS_SDK_STORE", "memory")]));
    assert_eq!(o.code, 3);
    assert!(o.err.contains("server_error"));
    let o = command(
        &["send", "--to", "+14155550123", "--body", "Hi", "--provider", "messagebird"],
        &unknown.env(&[("SMS_SDK_STORE", "memory")]),
    );
    assert_eq!(o.code, 2);
}

#[test]
fn an_unknown_outcome_is_listed_and_settled_by_the_operator() {
    let held = Twilio::answering(ResponseTemplate::new(201).set_delay(Duration::from_secs(10)));
    let store = temp_store();
    let env = held.env(&[("SMS_SDK_STORE", &store)]);
    let send = |key: &str| {
        command(
            &["send", "--to", "+14155550123", "--body", "Hi", "--idempotency-key", key, "--timeout-ms", "200"],
            &env,
        )
    };
    assert_eq!(send("a").code, 3);
    assert_eq!(send("b").code, 3);
    let listed = command(&["idempotency", "list", "--state", "unresolved"], &env);
    assert!(listed.out.contains("a\tunknown") && listed.out.contains("b\tunknown"), "{}", listed.out);
    let shown = command(&["idempotency", "show", "a", "--json"], &env);
    assert!(shown.out.contains("\"state\":\"unknown\""), "{}", shown.out);
    // The next send of an unknown key refuses to resend.
    assert_eq!(send("a").code, 3);

    let sent =
        command(&["idempotency", "resolve", "a", "--sent", "--provider", "twilio", "--provider-id", MESSAGE_SID], &env);
    assert_eq!(sent.code, 0, "{}", sent.err);
    let replay = send("a");
    assert_eq!(replay.code, 0, "{}", replay.err);
    assert!(replay.out.contains("replayed") && replay.out.contains(MESSAGE_SID), "{}", replay.out);

    assert_eq!(command(&["idempotency", "resolve", "b", "--not-sent"], &env).code, 0);
    let calls_before = held.calls();
    assert_eq!(send("b").code, 3, "the next send with the key goes out");
    assert_eq!(held.calls(), calls_before + 1);

    // Settled keys are refused.
    assert_eq!(command(&["idempotency", "resolve", "a", "--not-sent"], &env).code, 2);
    assert_eq!(command(&["idempotency", "resolve", "missing", "--not-sent"], &env).code, 2);
}

#[test]
fn validate_is_local() {
    let env: Env = [("SMS_SDK_STORE", "memory")].into_iter().collect();
    let o = command(&["validate", "--to", "+14155550123", "--body", "Your package is ready 📦"], &env);
    assert_eq!(o.code, 0, "{}{}", o.out, o.err);
    assert!(o.out.contains("ucs2"));
    let o = command(&["validate", "--to", "+1", "--body", ""], &env);
    assert_eq!(o.code, 1);
    assert!(o.out.contains("not supported"));
    // Media through Sinch alone: no provider can send it, and the line says so.
    let sinch: Env = [
        ("SMS_SDK_STORE", "memory"),
        ("SINCH_SERVICE_PLAN_ID", "plan01"),
        ("SINCH_API_TOKEN", "t"),
        ("SINCH_FROM", "+15005550006"),
    ]
    .into_iter()
    .collect();
    let args = ["validate", "--to", "+14155550123", "--body", "hi", "--media-url", "https://example.com/a.png"];
    let o = command(&args, &sinch);
    assert_eq!(o.code, 1, "{}{}", o.out, o.err);
    assert!(o.out.contains("candidates: none (no configured provider can send this)"), "{}", o.out);
}

mod webhook_verify {
    use base64::Engine as _;
    use sms_sdk::testing::webhooks::{
        SignedRequest, TelnyxKeyPair, signed_bandwidth_request, signed_infobip_request, signed_plivo_v3_request,
        signed_sinch_request, signed_telnyx_request, signed_twilio_request, signed_vonage_request,
    };

    use super::*;

    fn verify(provider: &str, url: &str, request: &SignedRequest, env: &Env, now: Option<&str>) -> Output {
        let dir = std::env::temp_dir().join(format!("sms-sdk-verify-{}", uuid_like()));
        std::fs::create_dir_all(&dir).unwrap();
        let body = dir.join("body");
        std::fs::write(&body, &request.body).unwrap();
        let mut args = vec![
            "webhook".to_owned(),
            "verify".into(),
            "--provider".into(),
            provider.into(),
            "--url".into(),
            url.into(),
        ];
        args.extend(["--body-file".into(), body.display().to_string()]);
        for (name, value) in &request.headers {
            args.extend(["-H".into(), format!("{name}: {}", value.to_str().unwrap())]);
        }
        if let Some(now) = now {
            args.extend(["--now".into(), now.into()]);
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        command(&refs, env)
    }

    fn flipped(request: &SignedRequest) -> SignedRequest {
        let mut body = request.body.clone();
        let last = body.len() - 2;
        body[last] = if body[last] == b'x' { b'y' } else { b'x' };
        SignedRequest { body, ..request.clone() }
    }

    #[test]
    fn each_provider_accepts_a_signed_request_and_refuses_a_changed_one() {
        let url = "https://example.com/hook";
        let key = TelnyxKeyPair::generate();
        let env: Env = [
            ("TWILIO_AUTH_TOKEN", "tw-token".to_owned()),
            ("TELNYX_PUBLIC_KEY", key.public_key.clone()),
            ("PLIVO_AUTH_TOKEN", "pl-token".to_owned()),
            ("VONAGE_SIGNATURE_SECRET", "vo-secret".to_owned()),
            ("SINCH_WEBHOOK_SECRET", "si-secret".to_owned()),
        ]
        .into_iter()
        .collect();
        let sinch_report = r#"{"type":"recipient_delivery_report_sms","batch_id":"01FC66621XXXXX119Z8PMV1QPQ","recipient":"+14155550123","code":0,"status":"Delivered"}"#;
        let cases: Vec<(&str, SignedRequest, Option<&str>)> = vec![
            (
                "sinch",
                signed_sinch_request("si-secret", url, sinch_report, 1_700_000_000, "01FJA8B4A7BM43YGWSG9GBV067"),
                Some("1700000000"),
            ),
            (
                "twilio",
                signed_twilio_request("tw-token", url, &[("MessageSid", MESSAGE_SID), ("MessageStatus", "delivered")]),
                None,
            ),
            (
                "telnyx",
                signed_telnyx_request(
                    &key,
                    url,
                    r#"{"data":{"event_type":"message.sent","id":"e","payload":{"id":"m","to":[{"status":"sent"}]}}}"#,
                    1_700_000_000,
                ),
                Some("1700000000"),
            ),
            (
                "plivo",
                signed_plivo_v3_request("pl-token", url, &[("MessageUUID", "u"), ("Status", "delivered")], "1"),
                None,
            ),
            (
                "vonage",
                signed_vonage_request(
                    "vo-secret",
                    url,
                    r#"{"message_uuid":"v","status":"delivered"}"#,
                    1_700_000_000,
                    "j",
                ),
                Some("1700000000"),
            ),
        ];
        for (provider, request, now) in cases {
            let ok = verify(provider, url, &request, &env, now);
            assert_eq!(ok.code, 0, "{provider}: {}{}", ok.out, ok.err);
            assert!(ok.out.contains("verified"), "{}", ok.out);
            let bad = verify(provider, url, &flipped(&request), &env, now);
            assert_eq!(bad.code, 1, "{provider}: {}{}", bad.out, bad.err);
        }
        // Sinch without HMAC signing: the Basic credentials of the callback URL, whole.
        let basic = |credentials: &str| {
            let mut headers = http::HeaderMap::new();
            let value = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials));
            headers.insert("authorization", value.parse().unwrap());
            SignedRequest { headers, ..signed_sinch_request("unused", url, sinch_report, 1_700_000_000, "n") }
        };
        let basic_env: Env = [("SINCH_WEBHOOK_BASIC", "sinch:callback-pass".to_owned())].into_iter().collect();
        assert_eq!(verify("sinch", url, &basic("sinch:callback-pass"), &basic_env, None).code, 0);
        let wrong = verify("sinch", url, &basic("sinch:callback-pas"), &basic_env, None);
        assert_eq!(wrong.code, 1, "{}{}", wrong.out, wrong.err);
        assert!(wrong.err.contains("SINCH_WEBHOOK_BASIC"), "{}", wrong.err);
        let bare = verify("sinch", url, &basic("x:y"), &env, None);
        assert_eq!(bare.code, 1);
        assert!(bare.err.contains("x-sinch-webhook-signature-nonce") && bare.err.contains("-H"), "{}", bare.err);
        let signed = signed_sinch_request("si-secret", url, sinch_report, 1_700_000_000, "n1");
        let stale = verify("sinch", url, &signed, &env, Some("1700001000"));
        assert_eq!(stale.code, 1);
        assert!(stale.err.contains("within 300 s") && stale.err.contains("--now"), "{}", stale.err);
        let odd: Env = [("SINCH_WEBHOOK_BASIC", "no-colon".to_owned())].into_iter().collect();
        let refused = verify("sinch", url, &basic("x:y"), &odd, None);
        assert_eq!(refused.code, 7);
        assert!(refused.err.contains("SINCH_WEBHOOK_BASIC: must be user:password"), "{}", refused.err);
        let unset = verify("sinch", url, &basic("sinch:callback-pass"), &Env::default(), None);
        assert_eq!(unset.code, 7);
        assert!(unset.err.contains("SINCH_WEBHOOK_SECRET (or SINCH_WEBHOOK_BASIC) is not set"), "{}", unset.err);
        // Authentic but malformed → 6; no secret → 7.
        let malformed = signed_twilio_request("tw-token", url, &[("Body", "hi")]);
        assert_eq!(verify("twilio", url, &malformed, &env, None).code, 6);
        assert_eq!(verify("twilio", url, &malformed, &Env::default(), None).code, 7);
    }

    /// Infobip and Bandwidth post several events in one request: each verified event is a line
    /// (a JSON line with `--json`); the wrong credentials, or no token, verify none.
    #[test]
    fn infobip_and_bandwidth_batches_print_a_line_per_event() {
        let url = "https://example.com/hooks/infobip";
        let report = |id: &str| {
            format!(
                r#"{{"messageId":"{id}","to":"41793026727","status":{{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET"}}}}"#
            )
        };
        let body = format!(r#"{{"results":[{},{}]}}"#, report("sms-sdk-a"), report("sms-sdk-b"));
        let basic: Env = [("INFOBIP_WEBHOOK_BASIC", "hooks:infobip-pass".to_owned())].into_iter().collect();
        let signed = signed_infobip_request(url, &body, Some(("hooks", "infobip-pass")), None);
        let ok = verify("infobip", url, &signed, &basic, None);
        assert_eq!(ok.code, 0, "{}{}", ok.out, ok.err);
        let lines: Vec<&str> = ok.out.lines().collect();
        assert_eq!(lines.len(), 2, "{}", ok.out);
        assert!(lines[0].starts_with("verified infobip message.delivered (infobip:dr:sms-sdk-a:"), "{}", ok.out);
        assert!(lines[1].starts_with("verified infobip message.delivered (infobip:dr:sms-sdk-b:"), "{}", ok.out);
        let forged = signed_infobip_request(url, &body, Some(("hooks", "guess")), None);
        let refused = verify("infobip", url, &forged, &basic, None);
        assert_eq!((refused.code, refused.out.as_str()), (1, ""), "{}", refused.err);
        assert!(refused.err.contains("INFOBIP_WEBHOOK_BASIC"), "{}", refused.err);
        // A URL token instead: the token is in --url, never printed back.
        let token = "a-random-token-of-infobip-0123456789";
        let token_env: Env = [("INFOBIP_WEBHOOK_TOKEN", token.to_owned())].into_iter().collect();
        let with_token = sms_sdk::provider::infobip::callback_url_with_token(url, token);
        let by_token = signed_infobip_request(&with_token, &body, None, None);
        assert_eq!(verify("infobip", &with_token, &by_token, &token_env, None).code, 0);
        let bare = verify("infobip", url, &by_token, &token_env, None);
        assert_eq!(bare.code, 1, "{}", bare.err);
        assert!(bare.err.contains("sms_sdk_token") && !bare.err.contains(token), "{}", bare.err);
        // Bandwidth: an array of callbacks, with the application's callback credentials.
        let callbacks = r#"[{"type":"message-delivered","time":"2026-12-01T10:00:05.000Z","to":"+14155550123","description":"ok","message":{"id":"1589228074636lm4k2je7j7jklbn2","owner":"+15005550006","applicationId":"app","time":"2026-12-01T10:00:00.000Z","direction":"out","to":["+14155550123"],"from":"+15005550006","tag":"t"}},{"type":"message-failed","time":"2026-12-01T10:00:06.000Z","to":"+14155550124","description":"rejected","errorCode":4432,"message":{"id":"1589228074636lm4k2je7j7jklbn3","direction":"out","to":["+14155550124"],"from":"+15005550006"}}]"#;
        let bw_env: Env = [("BANDWIDTH_WEBHOOK_BASIC", "bw:callback-pass".to_owned())].into_iter().collect();
        let bw_url = "https://example.com/hooks/bandwidth";
        let bw = signed_bandwidth_request("bw", "callback-pass", bw_url, callbacks);
        let json = command(
            &[
                "webhook",
                "verify",
                "--provider",
                "bandwidth",
                "--url",
                bw_url,
                "--body-file",
                &write_body(callbacks),
                "-H",
                &format!("authorization: {}", bw.headers["authorization"].to_str().unwrap()),
                "--json",
            ],
            &bw_env,
        );
        assert_eq!(json.code, 0, "{}{}", json.out, json.err);
        let events: Vec<serde_json::Value> = json.out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["message.delivered", "message.undelivered"], "{}", json.out);
        assert_eq!(events[1]["error_code"], "4432");
        assert!(!json.out.contains("+14155550124"), "a number unmasked: {}", json.out);
        let wrong = signed_bandwidth_request("bw", "callback-pas", bw_url, callbacks);
        assert_eq!(verify("bandwidth", bw_url, &wrong, &bw_env, None).code, 1);
        // No --body-file: an empty body, said so (authentic, but no events: exit 6).
        let authorization = format!("authorization: {}", bw.headers["authorization"].to_str().unwrap());
        let empty =
            command(&["webhook", "verify", "--provider", "bandwidth", "--url", bw_url, "-H", &authorization], &bw_env);
        assert_eq!(empty.code, 6, "{}{}", empty.out, empty.err);
        assert!(empty.err.contains("no --body-file: verifying an empty body"), "{}", empty.err);
    }

    /// `body` in a file of its own; its path.
    fn write_body(body: &str) -> String {
        let path = std::env::temp_dir().join(format!("sms-sdk-verify-{}", uuid_like()));
        std::fs::write(&path, body).unwrap();
        path.display().to_string()
    }
}

mod webhook_verify_bounds {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use sms_sdk::testing::webhooks::{SignedRequest, signed_twilio_request, signed_vonage_request};

    use super::*;

    static FILES: AtomicUsize = AtomicUsize::new(0);

    fn verify(provider: &str, request: &SignedRequest, env: &Env, extra: &[&str]) -> Output {
        let name = format!("sms-sdk-verify-bounds-{}-{}", std::process::id(), FILES.fetch_add(1, Ordering::Relaxed));
        let body = std::env::temp_dir().join(name);
        std::fs::write(&body, &request.body).unwrap();
        let mut args: Vec<String> = ["webhook", "verify", "--provider", provider, "--url", &request.url, "--body-file"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        args.push(body.display().to_string());
        for (name, value) in &request.headers {
            args.extend(["-H".into(), format!("{name}: {}", value.to_str().unwrap())]);
        }
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = command(&refs, env);
        let _ = std::fs::remove_file(body);
        output
    }

    fn env() -> Env {
        [("TWILIO_AUTH_TOKEN", "tw-token".to_owned()), ("VONAGE_SIGNATURE_SECRET", "vo-secret".to_owned())]
            .into_iter()
            .collect()
    }

    #[test]
    fn now_past_year_9999_is_a_usage_error_naming_it() {
        let request = signed_vonage_request(
            "vo-secret",
            "https://example.com/hook",
            r#"{"message_uuid":"v","status":"delivered"}"#,
            1_700_000_000,
            "j",
        );
        for now in ["18446744073709551615", "253402300800"] {
            let o = verify("vonage", &request, &env(), &["--now", now]);
            assert_eq!(o.code, 2, "{}{}", o.out, o.err);
            assert!(o.err.contains("--now"), "{}", o.err);
        }
        // The last second of 9999 is a time: the token is merely stale then.
        let o = verify("vonage", &request, &env(), &["--now", "253402300799"]);
        assert_eq!(o.code, 1, "{}{}", o.out, o.err);
        assert!(o.err.contains("stale_timestamp"), "{}", o.err);
        assert_eq!(verify("vonage", &request, &env(), &["--now", "1700000000"]).code, 0);
    }

    #[test]
    fn a_count_from_the_body_never_drives_a_loop() {
        let params = [
            ("MessageSid", MESSAGE_SID),
            ("From", "+14155550123"),
            ("To", "+15005550006"),
            ("Body", "hi"),
            ("NumMedia", "4000000000"),
            ("MediaUrl0", "https://api.twilio.com/m0"),
        ];
        let request = signed_twilio_request("tw-token", "https://example.com/hook", &params);
        let (done, result) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(verify("twilio", &request, &env(), &["--json"]));
        });
        let o = result.recv_timeout(Duration::from_secs(10)).expect("webhook verify still running after 10 s");
        assert_eq!(o.code, 0, "{}{}", o.out, o.err);
        let event: serde_json::Value = serde_json::from_str(o.out.trim()).unwrap();
        assert_eq!(event["media_urls"], json!(["https://api.twilio.com/m0"]));
    }

    #[test]
    fn a_body_over_the_limit_is_refused_without_reading_all_of_it() {
        let mut request = signed_twilio_request("tw-token", "https://example.com/hook", &[("MessageSid", MESSAGE_SID)]);
        request.body = vec![b'a'; 3 * 1024 * 1024];
        let o = verify("twilio", &request, &env(), &["--json"]);
        assert!(o.out.contains("body_too_large"), "{}{}", o.out, o.err);
    }
}
