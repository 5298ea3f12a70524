//! The operator's tools say what an operator needs and settle keys safely: a settled key keeps the
//! endpoint it was settled for, typos and malformed ids are refused, `show` and `list` say what
//! they read and what to do next, and a lookup that matches nothing says how to let the next
//! send go out.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // test code: a panic is a failed test

use crate::common;

use std::time::{Duration, SystemTime};

use common::{MESSAGE_SID, Twilio, command};
use sms_sdk::store::{Claim, Fingerprint, IdempotencyStore as _, Reservation};
use sms_sdk_cli::Env;
use sms_sdk_emulator::{Emulator, RunningEmulator, credentials};
use wiremock::ResponseTemplate;

const TO: &str = "+14155550123";
const BODY: &str = "Your order has shipped.";

fn scratch(name: &str) -> std::path::PathBuf {
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("sms-sdk-operator-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A SQLite store holding `key` reserved an hour ago for [`BODY`] to [`TO`] (a send killed
/// mid-flight: no attempt says where it went).
fn stale_reservation(key: &str) -> String {
    let path = scratch("stale").join("state.db");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let store = sms_sdk::store::sqlite::SqliteStore::open(&path).await.unwrap();
        let fingerprint = Fingerprint::of(&sms_sdk::Message::new(TO, BODY), &[]);
        let an_hour_ago = SystemTime::now() - Duration::from_hours(1);
        let reserved = store.reserve(key, Claim::new(&fingerprint).to(TO), an_hour_ago).await.unwrap();
        assert!(matches!(reserved, Reservation::Acquired(_)));
    });
    format!("sqlite:{}", path.display())
}

fn send_keyed(key: &str, store: &str, env: &Env) -> common::Output {
    command(&["send", "--to", TO, "--body", BODY, "--idempotency-key", key, "--store", store], env)
}

#[test]
fn a_key_settled_against_the_emulator_never_replays_for_a_real_send() {
    let store = stale_reservation("order:settled-emulated");
    // No provider is configured: the operator settles it for the embedded emulator.
    let resolve = ["idempotency", "resolve", "order:settled-emulated", "--sent", "--provider", "twilio"];
    let settled =
        command(&[&resolve[..], &["--provider-id", MESSAGE_SID, "--store", &store]].concat(), &Env::default());
    assert_eq!(settled.code, 0, "{}", settled.err);
    assert!(settled.out.contains("later sends to sms-sdk-emulator://embedded replay it"), "{}", settled.out);

    let twilio = Twilio::accepting();
    let real = send_keyed("order:settled-emulated", &store, &twilio.env(&[]));
    assert_eq!(real.code, 4, "refused as a conflict naming both endpoints\n{}{}", real.out, real.err);
    assert!(real.err.contains("sms-sdk-emulator://embedded"), "{}", real.err);
    assert_eq!(twilio.calls(), 0, "nothing is sent under a key that names another endpoint's message");

    // Settled with the real configuration, the same key replays for the real send.
    let store = stale_reservation("order:settled-real");
    let resolve = ["idempotency", "resolve", "order:settled-real", "--sent", "--provider", "twilio"];
    let settled =
        command(&[&resolve[..], &["--provider-id", MESSAGE_SID, "--store", &store]].concat(), &twilio.env(&[]));
    assert_eq!(settled.code, 0, "{}", settled.err);
    let replay = send_keyed("order:settled-real", &store, &twilio.env(&[]));
    assert_eq!(replay.code, 0, "{}", replay.err);
    assert!(replay.out.contains("replayed"), "{}", replay.out);
    assert_eq!(twilio.calls(), 0);
}

#[test]
fn resolve_refuses_a_mistyped_provider_and_an_id_of_the_wrong_shape() {
    let store = stale_reservation("order:typo");
    let resolve = ["idempotency", "resolve", "order:typo", "--sent", "--store", &store];
    let typo =
        command(&[&resolve[..], &["--provider", "twillio", "--provider-id", MESSAGE_SID]].concat(), &Env::default());
    assert_eq!(typo.code, 2, "{}", typo.err);
    assert!(typo.err.contains("'twilio'"), "suggests the nearest: {}", typo.err);
    let shape = command(&[&resolve[..], &["--provider", "twilio", "--provider-id", "SM1"]].concat(), &Env::default());
    assert_eq!(shape.code, 2, "{}", shape.err);
    assert!(shape.err.contains("SM (or MM) followed by 32 hex digits"), "{}", shape.err);
    let uuid =
        command(&[&resolve[..], &["--provider", "telnyx", "--provider-id", MESSAGE_SID]].concat(), &Env::default());
    assert_eq!(uuid.code, 2, "a Twilio id is not a Telnyx one: {}", uuid.err);
    let listed = command(&["idempotency", "list", "--state", "unresolved", "--store", &store], &Env::default());
    assert!(listed.out.contains("order:typo\treserved\tstale"), "nothing changed: {}", listed.out);

    let help = command(&["idempotency", "resolve", "--help"], &Env::default()).out;
    assert!(help.contains("There is no undo"), "{help}");
    assert!(
        help.contains("[possible values: twilio, telnyx, plivo, vonage, sinch, aws, infobip, bandwidth]"),
        "{help}"
    );
}

#[test]
fn show_says_what_an_operator_needs_and_the_next_command() {
    let unknown = Twilio::answering(ResponseTemplate::new(500));
    let store = format!("sqlite:{}", scratch("show").join("state.db").display());
    let env = unknown.env(&[("SMS_SDK_STORE", &store)]);
    let sent = command(&["send", "--to", TO, "--body", BODY, "--idempotency-key", "order-77"], &env);
    assert_eq!(sent.code, 3, "{}", sent.err);
    let shown = command(&["idempotency", "show", "order-77"], &env);
    assert_eq!(shown.code, 0, "{}", shown.err);
    let out = &shown.out;
    assert!(out.contains("state      unknown (handoff_unknown)"), "{out}");
    assert!(out.contains("provider   twilio (1 request(s), last request to http://127.0.0.1:"), "{out}");
    assert!(out.contains("reason     server_error"), "{out}");
    assert!(out.contains("recipient  +1********23") && !out.contains(TO), "{out}");
    assert!(out.contains("started    20") && out.contains("Z ("), "{out}");
    assert!(out.contains("next       sms-sdk idempotency reconcile order-77"), "{out}");
    assert!(out.contains("--sent --provider twilio --provider-id ID"), "{out}");

    let json = command(&["idempotency", "show", "order-77", "--json"], &env);
    assert!(json.out.contains("\"to\":\"+1********23\"") && !json.out.contains(TO), "{}", json.out);
}

/// A send through the embedded emulator that ended unknown cannot be looked up (the emulator
/// kept nothing): `show` says to resolve it as not sent, not to reconcile.
#[test]
fn show_of_an_unknown_embedded_send_says_to_resolve_it_as_not_sent() {
    let store = format!("sqlite:{}", scratch("show-embedded").join("state.db").display());
    let env = Env::default();
    let held = sms_sdk_emulator::magic::HOLD;
    let send = ["send", "--to", held, "--body", BODY, "--idempotency-key", "order-78", "--timeout-ms", "300"];
    let sent = command(&[&send[..], &["--store", &store]].concat(), &env);
    assert_eq!(sent.code, 3, "{}", sent.err);
    let shown = command(&["idempotency", "show", "order-78", "--store", &store], &env);
    assert_eq!(shown.code, 0, "{}", shown.err);
    assert!(shown.out.contains("the embedded emulator may have created it"), "{}", shown.out);
    assert!(shown.out.contains("sms-sdk idempotency resolve order-78 --not-sent"), "{}", shown.out);
    assert!(!shown.out.contains("idempotency reconcile"), "{}", shown.out);
    let resolved = command(&["idempotency", "resolve", "order-78", "--not-sent", "--store", &store], &env);
    assert_eq!(resolved.code, 0, "{}", resolved.err);
}

#[test]
fn list_names_the_store_it_read_and_says_when_it_is_empty() {
    let store = format!("sqlite:{}", scratch("list").join("state.db").display());
    let empty = command(&["idempotency", "list", "--store", &store], &Env::default());
    assert_eq!(empty.code, 0, "{}", empty.err);
    assert_eq!(empty.out, "no keys\n");
    assert!(empty.err.contains(&format!("store: {store}")), "{}", empty.err);
    let unresolved = command(&["idempotency", "list", "--state", "unresolved", "--store", &store], &Env::default());
    assert_eq!(unresolved.out, "no unresolved keys\n");
    let json = command(&["idempotency", "list", "--store", &store, "--json"], &Env::default());
    assert_eq!(json.out, "[]\n", "JSON stays one array");
}

#[test]
fn an_unknown_send_without_a_key_says_there_is_nothing_to_reconcile() {
    let unknown = Twilio::answering(ResponseTemplate::new(500));
    let sent = command(&["send", "--to", TO, "--body", BODY], &unknown.env(&[]));
    assert_eq!(sent.code, 3, "{}", sent.err);
    assert!(sent.err.contains("without --idempotency-key nothing recorded this send"), "{}", sent.err);
    assert!(sent.err.contains("check with the provider"), "{}", sent.err);
    let keyed = command(&["send", "--to", TO, "--body", BODY, "--idempotency-key", "k"], &unknown.env(&[]));
    assert!(keyed.err.contains("reconcile the key first"), "{}", keyed.err);
}

/// The emulator on a runtime of its own.
struct Background {
    runtime: tokio::runtime::Runtime,
    emulator: Option<RunningEmulator>,
}

impl Background {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let emulator = runtime.block_on(Emulator::builder().start()).unwrap();
        Self { runtime, emulator: Some(emulator) }
    }

    fn env(&self, store: &str) -> Env {
        let base = self.emulator.as_ref().unwrap().base_url();
        [
            ("TWILIO_ACCOUNT_SID", credentials::TWILIO_ACCOUNT_SID),
            ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN),
            ("TWILIO_FROM", "+15005550006"),
            ("SMS_SDK_TWILIO_BASE_URL", base.as_str()),
            ("SMS_SDK_STORE", store),
        ]
        .into_iter()
        .collect()
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(emulator) = self.emulator.take() {
            self.runtime.block_on(emulator.shutdown());
        }
    }
}

#[test]
fn a_lookup_that_matches_nothing_suggests_not_sent_with_its_caution() {
    let background = Background::start();
    let store = stale_reservation("order:never-left");
    let env = background.env(&store);
    let look = ["idempotency", "reconcile", "order:never-left", "--to", TO, "--since", "2h"];
    let found = command(&look, &env);
    assert_eq!(found.code, 3, "still unresolved: {}{}", found.out, found.err);
    assert!(found.out.contains("no message matched"), "{}", found.out);
    assert!(found.out.contains("`sms-sdk idempotency resolve order:never-left --not-sent`"), "{}", found.out);
    assert!(found.out.contains("the customer gets it twice"), "the caution: {}", found.out);
    let json = command(&[&look[..], &["--json"]].concat(), &env);
    let value: serde_json::Value = serde_json::from_str(json.out.trim()).unwrap();
    assert_eq!(value["keys"][0]["not_sent_command"], "sms-sdk idempotency resolve order:never-left --not-sent");
    assert_eq!(command(&["idempotency", "list", "--state", "unresolved"], &env).code, 0, "never applied");
}

#[test]
fn resolve_refuses_a_provider_the_send_never_went_to() {
    let unknown = Twilio::answering(ResponseTemplate::new(500));
    let store = format!("sqlite:{}", scratch("other-provider").join("state.db").display());
    let env = unknown.env(&[("SMS_SDK_STORE", &store)]);
    assert_eq!(command(&["send", "--to", TO, "--body", BODY, "--idempotency-key", "k-1"], &env).code, 3);
    let uuid = "2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c";
    let wrong =
        command(&["idempotency", "resolve", "k-1", "--sent", "--provider", "vonage", "--provider-id", uuid], &env);
    assert_eq!(wrong.code, 2, "{}", wrong.err);
    assert!(wrong.err.contains("went to twilio, not vonage"), "{}", wrong.err);
    let right = command(
        &["idempotency", "resolve", "k-1", "--sent", "--provider", "twilio", "--provider-id", MESSAGE_SID],
        &env,
    );
    assert_eq!(right.code, 0, "{}", right.err);
}

#[test]
fn the_operator_commands_name_their_store_and_warn_when_it_is_the_emulators() {
    let data = scratch("which-store");
    let env: Env = [("XDG_DATA_HOME", data.display().to_string())].into_iter().collect();
    let added = command(&["suppression", "add", "+14155550999"], &env);
    assert_eq!(added.code, 0, "{}", added.err);
    assert!(
        added.err.contains("emulator.db")
            && added.err.contains("sends with provider credentials and `serve` read state.db"),
        "{}",
        added.err
    );
    // A host that only receives webhooks (a webhook secret, no credentials) reads serve's store.
    let receiving: Env =
        [("XDG_DATA_HOME", data.display().to_string()), ("SINCH_WEBHOOK_SECRET", "s3cret-of-the-plan".to_owned())]
            .into_iter()
            .collect();
    let served = command(&["suppression", "list"], &receiving);
    assert!(served.err.contains("state.db") && !served.err.contains("emulator's store"), "{}", served.err);
    let listed = command(&["idempotency", "list"], &env);
    assert!(listed.err.contains("store: sqlite:") && listed.err.contains("emulator's store"), "{}", listed.err);
    let empty = command(&["suppression", "list", "--store", "memory"], &env);
    assert_eq!(empty.out, "no suppressed recipients\n");
    assert!(empty.err.contains("store: memory") && !empty.err.contains("emulator's store"), "{}", empty.err);
}

#[test]
fn a_refused_send_says_why_and_show_says_it_is_refused_again() {
    let twilio = Twilio::accepting();
    let store = format!("sqlite:{}", scratch("why").join("state.db").display());
    let env = twilio.env(&[("SMS_SDK_STORE", &store)]);
    assert_eq!(command(&["suppression", "add", TO, "--reason", "keyword:STOP"], &env).code, 0);
    let refused = command(&["send", "--to", TO, "--body", BODY, "--idempotency-key", "promo-1"], &env);
    assert_eq!(refused.code, 1);
    assert!(refused.err.contains("why: +1********23 opted out (account, keyword:STOP) at"), "{}", refused.err);
    let shown = command(&["idempotency", "show", "promo-1"], &env);
    assert!(shown.out.contains("the next send with this key is refused again"), "{}", shown.out);
    assert_eq!(twilio.calls(), 0);
}

#[test]
fn the_exit_codes_of_the_help_and_the_manual_are_the_readmes() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let rows: Vec<(String, String)> = readme
        .lines()
        .filter_map(|l| {
            l.strip_prefix("| ")?.split_once(" | ").map(|(c, m)| (c.to_owned(), m.trim_end_matches(" |").to_owned()))
        })
        .filter(|(code, _)| code.len() == 1 && code.chars().all(|c| c.is_ascii_digit()))
        .collect();
    assert_eq!(rows.len(), 8, "{rows:?}");
    let help = command(&["--help"], &Env::default()).out;
    let man = command(&["man"], &Env::default()).out;
    assert!(man.contains(".SH \"EXIT STATUS\""), "{man}");
    for (code, meaning) in rows {
        assert!(help.contains(&format!("  {code}  {meaning}")), "{code} {meaning}\n{help}");
        assert!(man.contains(&format!("{code}\n\\&{}", meaning.replace('`', ""))), "{code}\n{man}");
    }
}
