//! `sms-sdk batch` against the emulator: resumability, dry runs, the report, CSV edge cases and
//! Ctrl-C. Counts requests at the emulator; no assertion on how long anything took.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // test code: a panic is a failed test

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sms_sdk_cli::Env;
use sms_sdk_emulator::{Emulator, RunningEmulator, credentials};

use common::command;

/// An emulator on its own runtime, a scratch directory, and the environment pointing at both.
struct Setup {
    runtime: tokio::runtime::Runtime,
    emulator: Option<RunningEmulator>,
    dir: PathBuf,
}

impl Setup {
    fn new() -> Self {
        // Tests run in parallel threads of one process: the counter keeps their directories apart
        // even when the clock reads the same for two of them.
        static SETUPS: AtomicU64 = AtomicU64::new(0);
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let emulator = runtime.block_on(Emulator::builder().start()).unwrap();
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let n = SETUPS.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("sms-sdk-batch-{nanos}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self { runtime, emulator: Some(emulator), dir }
    }

    fn emulator(&self) -> &RunningEmulator {
        self.emulator.as_ref().unwrap()
    }

    fn vars(&self) -> Vec<(String, String)> {
        [
            ("TWILIO_ACCOUNT_SID", credentials::TWILIO_ACCOUNT_SID.to_owned()),
            ("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN.to_owned()),
            ("TWILIO_FROM", "+15005550006".to_owned()),
            ("SMS_SDK_TWILIO_BASE_URL", self.emulator().base_url()),
            ("SMS_SDK_STORE", format!("sqlite:{}", self.dir.join("state.db").display())),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    fn env(&self) -> Env {
        self.vars().into_iter().collect()
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Runs `sms-sdk batch --csv <csv> <args>` in-process.
    fn batch(&self, csv: &Path, args: &[&str]) -> common::Output {
        let mut all = vec!["batch".to_owned(), "--csv".to_owned(), csv.display().to_string()];
        all.extend(args.iter().map(|a| (*a).to_owned()));
        command(&all, &self.env())
    }

    /// Requests the emulator received, per recipient.
    fn requests_to(&self, to: &str) -> usize {
        self.emulator().messages().iter().filter(|m| m.to.as_deref() == Some(to)).count()
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        if let Some(emulator) = self.emulator.take() {
            self.runtime.block_on(emulator.shutdown());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const ROWS: &str = "to,name,id\n\
+14155550101,Ann,k1\n\
+15005559007,Bob,k2\n\
+15005550001,Cy,k3\n\
+14155550104,Dee,k4\n";

#[test]
fn batch_resumes_replaying_accepted_rows_and_reporting_unknown_ones_without_resending() {
    let setup = Setup::new();
    let csv = setup.file("rows.csv", ROWS);
    let args = ["--body-template", "Hi {name}", "--key-column", "id", "--rate", "200", "--json"];
    let first = setup.batch(&csv, &args);
    assert_eq!(first.code, 3, "an unknown row: exit 3\n{}{}", first.out, first.err);
    let summary: serde_json::Value = serde_json::from_str(first.out.trim()).unwrap();
    assert_eq!((summary["accepted"].as_u64(), summary["rejected"].as_u64()), (Some(2), Some(1)));
    assert_eq!(summary["unknown"], 1);
    assert!(first.err.contains("row 2 (key k2): unknown"), "{}", first.err);
    // The emulator is not Twilio: the batch says where it sends before it starts.
    let said = format!("sending to {} (SMS_SDK_TWILIO_BASE_URL), not twilio's own API", setup.emulator().base_url());
    assert!(first.err.contains(&said), "{}", first.err);
    assert_eq!(setup.emulator().messages().len(), 4, "one request per row");

    let second = setup.batch(&csv, &args);
    assert_eq!(second.code, 3, "{}{}", second.out, second.err);
    let summary: serde_json::Value = serde_json::from_str(second.out.trim()).unwrap();
    assert_eq!((summary["replayed"].as_u64(), summary["unknown"].as_u64()), (Some(2), Some(1)));
    assert_eq!(summary["accepted"], 0);
    assert_eq!(setup.requests_to("+14155550101"), 1, "accepted rows replay without a request");
    assert_eq!(setup.requests_to("+14155550104"), 1);
    assert_eq!(setup.requests_to("+15005559007"), 1, "the unknown row (the message exists) is not resent");
    assert_eq!(setup.requests_to("+15005550001"), 2, "a rejected row was never accepted: it is sent again");
}

#[test]
fn batch_dry_run_sends_nothing_and_prices_each_encoding() {
    let setup = Setup::new();
    let csv =
        setup.file("rows.csv", "to,body\n+14155550101,plain text\n+14155550102,ünïcödé ✓\nnot-a-number,bad number\n");
    let out = setup.batch(&csv, &["--body-column", "body", "--key-prefix", "dry-", "--dry-run", "--json"]);
    assert_eq!(out.code, 1, "an invalid row fails the check\n{}{}", out.out, out.err);
    let report: serde_json::Value = serde_json::from_str(out.out.trim()).unwrap();
    assert_eq!((report["rows"].as_u64(), report["invalid"].as_u64()), (Some(3), Some(1)));
    assert_eq!(report["encodings"]["gsm7"]["segments"], 1);
    assert_eq!(report["encodings"]["ucs2"]["messages"], 1);
    assert!(out.err.contains("row 3:"), "{}", out.err);
    assert!(!out.err.contains("not-a-number"), "no recipient in the output");
    assert!(setup.emulator().messages().is_empty(), "a dry run sends nothing");
    assert_eq!(report["suppressed"], 0, "it reads the store's suppression list");

    let text = setup.batch(&csv, &["--body-column", "body", "--key-prefix", "dry-", "--dry-run"]);
    assert!(text.out.contains("gsm7: 1 messages, 1 segments"), "{}", text.out);
    assert!(text.out.contains("nothing was sent"), "{}", text.out);
}

#[test]
fn batch_report_has_a_line_per_row_in_csv_or_json_lines_with_masked_numbers() {
    let setup = Setup::new();
    let csv = setup.file("rows.csv", ROWS);
    let report = setup.dir.join("report.csv");
    let report_arg = report.display().to_string();
    let args = ["--body-template", "Hi {name}", "--key-prefix", "r-", "--report", report_arg.as_str()];
    let out = setup.batch(&csv, &args);
    assert_eq!(out.code, 3, "{}{}", out.out, out.err);
    let text = std::fs::read_to_string(&report).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.remove(0), "row,key,to,outcome,provider,provider_id,error_code,reason");
    lines.sort_unstable();
    assert_eq!(lines.len(), 4);
    assert!(lines[0].starts_with("1,r-1,+1********01,accepted,twilio,SM"), "{}", lines[0]);
    assert_eq!(lines[1], "2,r-2,+1********07,unknown,twilio,,handoff_unknown,network");
    assert_eq!(lines[2], "3,r-3,+1********01,rejected,twilio,,provider_rejected,recipient");
    assert!(!text.contains("4155550101") && !text.contains("Hi "), "no full number, no body");

    let jsonl = setup.dir.join("report.out");
    let jsonl_arg = jsonl.display().to_string();
    let args = ["--body-template", "Hi {name}", "--key-prefix", "r-", "--report", jsonl_arg.as_str()];
    assert_eq!(setup.batch(&csv, &args).code, 3);
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&jsonl).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    let unknown = lines.iter().find(|l| l["row"] == 2).unwrap();
    assert_eq!(unknown["outcome"], "unknown");
    assert_eq!(unknown["reason"], "replayed_unknown");
    assert_eq!(lines.iter().filter(|l| l["outcome"] == "replayed").count(), 2);
}

#[test]
fn batch_reads_quotes_and_embedded_newlines_and_names_the_row_of_a_short_one() {
    let setup = Setup::new();
    let good = "to,name\n+14155550101,\"Ann, \"\"the first\"\"\"\n+14155550102,\"two\nlines\"\n";
    let csv = setup.file("good.csv", good);
    let out = setup.batch(&csv, &["--body-template", "Hi {name}!", "--key-prefix", "csv-", "--concurrency", "1"]);
    assert_eq!(out.code, 0, "{}{}", out.out, out.err);
    let bodies: Vec<String> = setup.emulator().messages().iter().filter_map(|m| m.body.clone()).collect();
    assert_eq!(bodies, ["Hi Ann, \"the first\"!", "Hi two\nlines!"]);

    let short = setup.file("short.csv", &format!("{good}+14155550103\n+14155550104,Dee\n"));
    let out = setup.batch(&short, &["--body-template", "Hi {name}!", "--key-prefix", "short-"]);
    assert_eq!(out.code, 2, "{}{}", out.out, out.err);
    assert!(out.err.contains("short.csv: row 3: it has 1 field(s) where the header has 2"), "{}", out.err);
    assert_eq!(setup.emulator().messages().len(), 2, "a malformed file is refused before any request");

    let missing = setup.batch(&csv, &["--body-template", "Hi {nom}", "--key-prefix", "csv-"]);
    assert_eq!(missing.code, 2);
    assert!(missing.err.contains("no column `nom` (columns: to, name)"), "{}", missing.err);
    let missing = setup.batch(&csv, &["--body-column", "name", "--key-column", "id"]);
    assert_eq!(missing.code, 2);
    assert!(missing.err.contains("no column `id`"), "{}", missing.err);
    let no_key = setup.batch(&csv, &["--body-column", "name"]);
    assert_eq!(no_key.code, 2, "a key column or prefix is required");
    assert_eq!(setup.emulator().messages().len(), 2, "none of these sent anything");
}

#[test]
fn batch_ctrl_c_stops_taking_rows_finishes_the_sends_and_writes_the_report() {
    let setup = Setup::new();
    let rows: Vec<String> = (0..400).map(|n| format!("+1415555{n:04},row {n}\n")).collect();
    let rows = rows.concat();
    let csv = setup.file("rows.csv", &format!("to,body\n{rows}"));
    let report = setup.dir.join("report.jsonl");
    let child = Command::new(env!("CARGO_BIN_EXE_sms-sdk"))
        .args(["batch", "--csv", &csv.display().to_string(), "--body-column", "body", "--key-prefix", "int-"])
        .args(["--rate", "20", "--concurrency", "4", "--report", &report.display().to_string()])
        .env_clear()
        .envs(setup.vars())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until it has sent something, then interrupt it.
    let mut waited = 0;
    while setup.emulator().messages().len() < 5 && waited < 600 {
        std::thread::sleep(Duration::from_millis(50));
        waited += 1;
    }
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "interrupted: exit 1\n{stderr}");
    assert!(stderr.contains("stopping: no new message is sent"), "{stderr}");
    assert!(stderr.contains("interrupted: no more rows were sent"), "{stderr}");
    let lines = std::fs::read_to_string(&report).unwrap().lines().count();
    let sent = setup.emulator().messages().len();
    assert!(lines < 400, "it stopped taking rows: {lines}");
    assert_eq!(lines, sent, "every row taken was sent and reported");
}

/// Starts `sms-sdk batch` as a process (its own signals) with `args` over `csv`.
fn spawn_batch(setup: &Setup, csv: &Path, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_sms-sdk"))
        .args(["batch", "--csv", &csv.display().to_string()])
        .args(args)
        .env_clear()
        .envs(setup.vars())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn interrupt(child: &std::process::Child) {
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
}

/// Waits up to `limit` for `child` to exit: its code and stderr, or `None` if it still runs (it
/// is killed then).
fn exited_within(mut child: std::process::Child, limit: Duration) -> Option<(Option<i32>, String)> {
    let deadline = std::time::Instant::now() + limit;
    while std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            let output = child.wait_with_output().unwrap();
            return Some((output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Waits until the emulator has received `count` messages (at most 30 s).
fn wait_for_messages(setup: &Setup, count: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while setup.emulator().messages().len() < count {
        assert!(std::time::Instant::now() < deadline, "the batch sent {} messages", setup.emulator().messages().len());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn batch_first_ctrl_c_drops_the_rows_waiting_for_the_rate_at_once() {
    let setup = Setup::new();
    let rows = (0..100).map(|n| format!("+1415556{n:04},row {n}\n")).collect::<Vec<_>>().concat();
    let csv = setup.file("rows.csv", &format!("to,body\n{rows}"));
    let report = setup.dir.join("report.jsonl");
    let args = ["--body-column", "body", "--key-prefix", "slow-", "--rate", "1", "--report"];
    let child = spawn_batch(&setup, &csv, &[&args[..], &[report.to_str().unwrap()]].concat());
    wait_for_messages(&setup, 2);
    interrupt(&child);
    let (code, stderr) =
        exited_within(child, Duration::from_secs(10)).expect("it stops at once, not after the rows it took");
    assert_eq!(code, Some(1), "interrupted: exit 1\n{stderr}");
    assert!(stderr.contains("stopping: no new message is sent"), "it says it stops: {stderr}");
    let sent = setup.emulator().messages().len();
    assert!(sent <= 3, "rows waiting for the rate were sent after Ctrl-C: {sent}");
    let lines = std::fs::read_to_string(&report).unwrap().lines().count();
    assert_eq!(lines, sent, "the report has every row sent, and only those");

    // The rows it dropped left no reservation: the next run sends them (and replays the rest).
    let again = setup.batch(&csv, &["--body-column", "body", "--key-prefix", "slow-", "--rate", "1000", "--json"]);
    assert_eq!(again.code, 0, "{}{}", again.out, again.err);
    let summary: serde_json::Value = serde_json::from_str(again.out.trim()).unwrap();
    assert_eq!(
        (summary["replayed"].as_u64(), summary["accepted"].as_u64()),
        (Some(sent as u64), Some(100 - sent as u64))
    );
    assert_eq!(setup.emulator().messages().len(), 100, "one request per row in all");
}

#[test]
fn batch_second_ctrl_c_abandons_the_sends_in_flight_as_unknown() {
    let setup = Setup::new();
    // The emulator never answers this number: the sends hang until their (long) timeout.
    let rows = (0..3).map(|n| format!("+15005559002,hang {n}\n")).collect::<Vec<_>>().concat();
    let csv = setup.file("rows.csv", &format!("to,body\n{rows}"));
    let report = setup.dir.join("report.jsonl");
    let args = ["--body-column", "body", "--key-prefix", "hang-", "--timeout-ms", "120000", "--report"];
    let child = spawn_batch(&setup, &csv, &[&args[..], &[report.to_str().unwrap()]].concat());
    wait_for_messages(&setup, 3);
    interrupt(&child);
    std::thread::sleep(Duration::from_millis(300));
    interrupt(&child);
    let (code, stderr) =
        exited_within(child, Duration::from_secs(20)).expect("the second Ctrl-C abandons them at once");
    assert_eq!(code, Some(3), "abandoned sends are unknown: exit 3\n{stderr}");
    assert!(stderr.contains("stopping") && stderr.contains("abandoning the sends in flight"), "{stderr}");
    let outcomes: Vec<String> = std::fs::read_to_string(&report)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["outcome"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(outcomes, ["unknown", "unknown", "unknown"]);
    // Never resent: a second run reports them unknown and makes no request.
    let again = setup.batch(&csv, &["--body-column", "body", "--key-prefix", "hang-", "--json"]);
    assert_eq!(again.code, 3, "{}{}", again.out, again.err);
    assert_eq!(setup.emulator().messages().len(), 3, "an abandoned send was sent again");
}

#[test]
fn batch_reports_an_opted_out_row_suppressed_and_sends_the_rest() {
    let setup = Setup::new();
    let csv = setup.file("rows.csv", "to,body\n+14155550101,one\n+14155550102,two\n+14155550103,three\n");
    assert_eq!(command(&["suppression", "add", "+14155550102"], &setup.env()).code, 0);
    let dry = setup.batch(&csv, &["--body-column", "body", "--key-prefix", "opt-", "--dry-run", "--json"]);
    let dry: serde_json::Value = serde_json::from_str(dry.out.trim()).unwrap();
    assert_eq!((dry["suppressed"].as_u64(), dry["valid"].as_u64()), (Some(1), Some(2)), "{dry}");

    let report = setup.dir.join("report.csv");
    let args = ["--body-column", "body", "--key-prefix", "opt-", "--report", report.to_str().unwrap()];
    let out = setup.batch(&csv, &args);
    assert_eq!(out.code, 1, "a row was not sent: exit 1\n{}{}", out.out, out.err);
    assert!(out.out.contains("(1 of them suppressed)"), "{}", out.out);
    assert!(out.err.contains("1 row(s) not sent: the recipient opted out"), "{}", out.err);
    assert_eq!(setup.requests_to("+14155550102"), 0, "no request for the opted-out recipient");
    assert_eq!((setup.requests_to("+14155550101"), setup.requests_to("+14155550103")), (1, 1));
    let text = std::fs::read_to_string(&report).unwrap();
    let line = text.lines().find(|l| l.starts_with("2,")).unwrap();
    assert!(line.starts_with("2,opt-2,+1********02,suppressed,,,policy_rejected"), "{line}");
}

#[test]
fn batch_without_a_key_flag_names_both() {
    let setup = Setup::new();
    let csv = setup.file("rows.csv", "to,body\n+14155550101,one\n");
    let out = setup.batch(&csv, &["--body-column", "body"]);
    assert_eq!(out.code, 2);
    assert!(out.err.contains("--key-column") && out.err.contains("--key-prefix"), "{}", out.err);
    let out = setup.batch(&csv, &["--key-prefix", "k-"]);
    assert!(out.err.contains("--body-column") && out.err.contains("--body-template"), "{}", out.err);
}
