//! The suppression list end to end: an inbound STOP signed by the emulator reaches the axum
//! integration and suppresses the recipient, so the next send is refused before any request;
//! START lifts it; a replayed STOP changes nothing. And `sms-sdk suppression …`: exit codes,
//! masking, CSV import and export, and two processes at once on one store.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use crate::common;

use std::fmt::Write as _;
use std::io::{Read as _, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{FromRef, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use common::command;
use sms_sdk::store::suppression::{Action, Applied};
use sms_sdk::store::suppression::{MemorySuppressionStore, Scope, SuppressionStore};
use sms_sdk::suppression::{Fed, Feeder, SuppressionPolicy};
use sms_sdk::webhook::axum::{Verified, serve};
use sms_sdk::{Category, Client, ErrorKind, Message, PhoneNumber, TwilioWebhook};
use sms_sdk_cli::Env;
use sms_sdk_emulator::{Emulator, credentials};

const RECIPIENT: &str = "+14155550123";
const OUR_NUMBER: &str = "+15005550006";

/// Requests the webhook server received (head and body), in order.
type Recorded = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

#[derive(Clone, FromRef)]
struct Hooks {
    twilio: TwilioWebhook,
    feeder: Feeder,
    fed: Arc<Mutex<Vec<Fed>>>,
}

async fn inbound(State(hooks): State<Hooks>, Verified { event, .. }: Verified<TwilioWebhook>) -> StatusCode {
    match hooks.feeder.feed(&event, SystemTime::now()).await {
        Ok(fed) => {
            hooks.fed.lock().unwrap().push(fed);
            StatusCode::NO_CONTENT
        }
        // A store failure: the provider delivers the webhook again.
        Err(_) => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// Keeps a copy of every request, to replay one later.
async fn record(State(log): State<Recorded>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    log.lock().unwrap().push((parts.headers.clone(), bytes.clone()));
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// A blocking HTTP/1.1 POST to `http://{address}{path}`: the status and the body.
fn post_raw(address: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let mut head = format!("POST {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for (name, value) in headers {
        write!(head, "{name}: {value}\r\n").unwrap();
    }
    write!(head, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer.split(' ').nth(1).unwrap().parse().unwrap();
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

async fn http_post(
    address: String,
    path: &'static str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
) -> (u16, String) {
    tokio::task::spawn_blocking(move || {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        post_raw(&address, path, &headers, &body)
    })
    .await
    .unwrap()
}

/// The emulator delivers `text` from the recipient to our number as Twilio's signed webhook.
async fn text_us(emulator: &str, text: &str) {
    let request = serde_json::json!({"provider": "twilio", "from": RECIPIENT, "to": OUR_NUMBER, "text": text});
    let headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
    let (status, body) =
        http_post(emulator.to_owned(), "/_emulator/inbound", headers, request.to_string().into_bytes()).await;
    assert_eq!(status, 202, "{body}");
    assert!(body.contains("\"delivered\":true"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_end_to_end_stop_start_and_a_replayed_stop_through_the_emulator() {
    let list = MemorySuppressionStore::new();
    let recorded: Recorded = Arc::default();
    let hooks = Hooks {
        twilio: TwilioWebhook::new(credentials::TWILIO_AUTH_TOKEN).unwrap(),
        feeder: Feeder::new(list.clone()),
        fed: Arc::default(),
    };
    let app = Router::new()
        .route("/sms/inbound", post(inbound))
        .with_state(hooks.clone())
        .layer(middleware::from_fn_with_state(recorded.clone(), record));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let webhooks = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move { serve(listener, app).await });

    let emulator = Emulator::builder().inbound_url(format!("http://{webhooks}/sms/inbound")).start().await.unwrap();
    let emulator_address = emulator.local_addr().to_string();
    let client = Client::builder()
        .adapter(emulator.twilio().from(OUR_NUMBER).build().unwrap())
        .policy(SuppressionPolicy::new(list.clone()))
        .build()
        .unwrap();
    let message = Message::new(RECIPIENT, "Your order has shipped.");
    let number = PhoneNumber::parse(RECIPIENT).unwrap();
    let scopes = [Scope::Account, Scope::Sender(OUR_NUMBER.into())];

    client.send(&message).await.unwrap();
    assert_eq!(emulator.messages().len(), 1);

    // STOP: suppressed, and the next send never reaches the emulator.
    text_us(&emulator_address, "Stop").await;
    assert!(list.check(&number, &scopes).await.unwrap().is_some(), "STOP did not suppress");
    let refused = client.send(&message).await.unwrap_err();
    assert_eq!((refused.kind(), refused.category()), (ErrorKind::PolicyRejected, Some(Category::Compliance)));
    assert!(refused.is_retry_safe() && refused.attempts().is_empty());
    assert_eq!(emulator.messages().len(), 1, "a refused send reached the emulator");

    // START lifts it.
    text_us(&emulator_address, "START").await;
    assert!(list.check(&number, &scopes).await.unwrap().is_none(), "START did not lift it");
    client.send(&message).await.unwrap();
    assert_eq!(emulator.messages().len(), 2);

    // The STOP webhook delivered again, byte for byte: verified, and it changes nothing.
    let (headers, body) = recorded.lock().unwrap()[0].clone();
    let replay: Vec<(String, String)> = ["content-type", "x-twilio-signature"]
        .iter()
        .map(|name| ((*name).to_owned(), headers[*name].to_str().unwrap().to_owned()))
        .collect();
    let (status, answer) = http_post(webhooks.clone(), "/sms/inbound", replay, body.to_vec()).await;
    assert_eq!(status, 204, "{answer}");
    assert!(list.check(&number, &scopes).await.unwrap().is_none(), "a replayed STOP suppressed again");
    client.send(&message).await.unwrap();
    assert_eq!(emulator.messages().len(), 3);

    let fed = hooks.fed.lock().unwrap().clone();
    let applied = |action, applied| Fed::Applied { action, applied };
    assert_eq!(
        fed,
        [
            applied(Action::OptOut, Applied::Recorded),
            applied(Action::OptIn, Applied::Recorded),
            applied(Action::OptOut, Applied::Replayed)
        ]
    );
    // A forged webhook never reaches the feeder.
    let forged = vec![("x-twilio-signature".to_owned(), "AAAAAAAAAAAAAAAAAAAAAAAAAAA=".to_owned())];
    let (status, _) = http_post(webhooks, "/sms/inbound", forged, body.to_vec()).await;
    assert_eq!(status, 401);
    assert_eq!(hooks.fed.lock().unwrap().len(), 3);
    emulator.shutdown().await;
}

fn temp_dir() -> std::path::PathBuf {
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
    let dir = std::env::temp_dir().join(format!("sms-sdk-suppression-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An environment with only a data directory (no provider), and a store.
fn env(store: &str) -> Env {
    [("SMS_SDK_STORE", store)].into_iter().collect()
}

#[test]
fn suppression_command_exit_codes_and_masked_output() {
    let dir = temp_dir();
    let store = format!("sqlite:{}", dir.join("state.db").display());
    let env = env(&store);
    let run = |args: &[&str]| command(args, &env);

    let added = run(&["suppression", "add", RECIPIENT, "--reason", "asked by phone"]);
    assert_eq!(added.code, 0, "{}", added.err);
    assert!(added.out.contains("+1********23 is suppressed (account)"), "{}", added.out);
    let scoped = run(&["suppression", "add", "14155550199", "--scope", "sender:+15005550006"]);
    assert_eq!(scoped.code, 0, "{}", scoped.err);

    let check = run(&["suppression", "check", RECIPIENT]);
    assert_eq!(check.code, 1, "a suppressed recipient fails the check: {}", check.out);
    assert!(check.out.starts_with("suppressed: +1********23\taccount\t") && check.out.contains("asked by phone"));
    assert_eq!(run(&["suppression", "check", "+14155550199"]).code, 0, "another sender's opt-out");
    assert_eq!(run(&["suppression", "check", "+14155550199", "--from", OUR_NUMBER]).code, 1);
    let json = run(&["suppression", "check", "+14155550100", "--json"]);
    assert_eq!(json.code, 0);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&json.out).unwrap()["suppressed"], false);

    let list = run(&["suppression", "list"]);
    assert_eq!((list.code, list.out.lines().count()), (0, 2), "{}", list.out);
    let listed = run(&["suppression", "list", "--json"]);
    let entries: Vec<serde_json::Value> = serde_json::from_str(&listed.out).unwrap();
    assert_eq!(entries.len(), 2);
    assert!(!list.out.contains("4155550") && !listed.out.contains("4155550"), "numbers are masked");

    let removed = run(&["suppression", "remove", RECIPIENT]);
    assert_eq!(removed.code, 0, "{}", removed.err);
    assert!(removed.out.contains("+1********23 is not suppressed (account)"), "{}", removed.out);
    assert_eq!(run(&["suppression", "check", RECIPIENT]).code, 0);
    // Removing a recipient who was never listed says so (and still records the opt-in).
    let never = run(&["suppression", "remove", "+14155550111"]);
    assert_eq!(never.code, 0, "{}", never.err);
    assert!(never.out.contains("was not suppressed (account): nothing to remove"), "{}", never.out);
    let never_json = run(&["suppression", "remove", "+14155550111", "--json"]);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&never_json.out).unwrap()["was_suppressed"], false);

    // Usage errors (2), before the store is touched; a store error (7).
    for args in [
        &["suppression", "add", "0415 555 0123"][..],
        &["suppression", "add", RECIPIENT, "--scope", "galaxy"],
        &["suppression", "check", RECIPIENT, "--from", "not a sender!"],
        &["suppression", "import", "/nonexistent/file.csv"],
    ] {
        assert_eq!(run(args).code, 2, "{args:?}");
    }
    let unreachable = command(&["suppression", "list", "--store", "postgres://127.0.0.1:9/none"], &env);
    assert_eq!(unreachable.code, 7, "{}", unreachable.err);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn suppression_import_and_export_round_trip_as_csv() {
    let dir = temp_dir();
    let (from, to) =
        (format!("sqlite:{}", dir.join("a.db").display()), format!("sqlite:{}", dir.join("b.db").display()));
    let csv = dir.join("provider-export.csv");
    std::fs::write(&csv, "+14155550101\n14155550102,extra column\n\n+14155550103\n").unwrap();
    let imported = command(&["suppression", "import", csv.to_str().unwrap()], &env(&from));
    assert_eq!(imported.code, 0, "{}", imported.err);
    assert!(imported.out.contains("imported 3 rows: 3 recorded"), "{}", imported.out);
    assert_eq!(command(&["suppression", "import", csv.to_str().unwrap()], &env(&from)).code, 0, "again");

    let exported = dir.join("export.csv");
    let export = command(&["suppression", "export", "--output", exported.to_str().unwrap()], &env(&from));
    assert_eq!(export.code, 0, "{}", export.err);
    let text = std::fs::read_to_string(&exported).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("recipient,scope,at,reason,event"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 3);
    assert!(rows[1].starts_with("+14155550102,account,") && rows[1].ends_with(",import,"), "{}", rows[1]);

    // Into another store, keeping scope, time and reason.
    let moved = command(&["suppression", "import", exported.to_str().unwrap()], &env(&to));
    assert_eq!(moved.code, 0, "{}", moved.err);
    let out = command(&["suppression", "export"], &env(&to));
    assert_eq!(out.out, text);

    // A bad row stops the import at its line; the rows before it are in.
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "recipient,scope\n+14155550201,account\n+14155550202,galaxy\n").unwrap();
    let failed = command(&["suppression", "import", bad.to_str().unwrap()], &env(&to));
    assert_eq!(failed.code, 2);
    assert!(failed.err.contains("line 3") && failed.err.contains("1 rows before it"), "{}", failed.err);
    assert!(!failed.err.contains("+14155550202"));
    assert_eq!(command(&["suppression", "check", "+14155550201"], &env(&to)).code, 1);
    let _ = std::fs::remove_dir_all(dir);
}

/// Rows `0..count` of this run's numbers, all at `at`, with `reason`.
fn rows(prefix: u64, count: u64, at: &str, reason: &str) -> String {
    let mut csv = String::from("recipient,scope,at,reason\n");
    for i in 0..count {
        writeln!(csv, "+1{prefix:06}{i:06},account,{at},{reason}").unwrap();
    }
    csv
}

fn spawn(args: &[&str], store: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_sms-sdk"))
        .args(args)
        .env("SMS_SDK_STORE", store)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> (Option<i32>, String, String) {
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into(),
        String::from_utf8_lossy(&output.stderr).into(),
    )
}

/// Two processes import the same numbers at once, one with older times; a third checks while
/// they run. Then two processes export at once: they agree, and the newer import won every row.
fn two_processes_agree(store: &str) {
    const COUNT: u64 = 2_000;
    let prefix = fastrand::u64(0..1_000_000);
    let dir = temp_dir();
    let (older, newer) = (dir.join("older.csv"), dir.join("newer.csv"));
    std::fs::write(&older, rows(prefix, COUNT, "2026-01-01T00:00:00Z", "older")).unwrap();
    std::fs::write(&newer, rows(prefix, COUNT, "2026-02-01T00:00:00Z", "newer")).unwrap();
    let first = format!("+1{prefix:06}000000");
    let imports = [
        spawn(&["suppression", "import", newer.to_str().unwrap()], store),
        spawn(&["suppression", "import", older.to_str().unwrap()], store),
    ];
    let checks: Vec<Child> = (0..3).map(|_| spawn(&["suppression", "check", &first], store)).collect();
    for child in imports {
        let (code, out, err) = finish(child);
        assert_eq!(code, Some(0), "{out}{err}");
    }
    for child in checks {
        let (code, out, err) = finish(child);
        assert!(matches!(code, Some(0 | 1)), "a concurrent check failed: {out}{err}");
    }
    let exports = [spawn(&["suppression", "export"], store), spawn(&["suppression", "export"], store)];
    let ours = |out: &str| -> Vec<String> {
        out.lines().filter(|l| l.starts_with(&format!("+1{prefix:06}"))).map(str::to_owned).collect()
    };
    let [a, b] = exports.map(|child| {
        let (code, out, err) = finish(child);
        assert_eq!(code, Some(0), "{err}");
        ours(&out)
    });
    assert_eq!(a, b, "two processes see different lists");
    assert_eq!(a.len(), usize::try_from(COUNT).unwrap());
    assert!(a.iter().all(|row| row.contains(",2026-02-01T00:00:00.000Z,newer,")), "an older row won");
    let (code, ..) = finish(spawn(&["suppression", "check", &first], store));
    assert_eq!(code, Some(1));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn suppression_two_processes_agree_on_one_sqlite_file() {
    let dir = temp_dir();
    two_processes_agree(&format!("sqlite:{}", dir.join("state.db").display()));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn suppression_two_processes_agree_on_postgres() {
    let url = std::env::var("SMS_SDK_TEST_POSTGRES_URL").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| {
        panic!("SMS_SDK_TEST_POSTGRES_URL is not set: run `scripts/test.sh`, which starts PostgreSQL")
    });
    two_processes_agree(&url);
}
