//! The command on the stores teams deploy to: TLS-only PostgreSQL (`verify-full`), TLS-only
//! Redis and a Redis Cluster, each started by the test. Several `sms-sdk batch` processes send
//! the same keys at once through each, and the emulator counts the requests per recipient: one
//! each; so does DynamoDB (moto's server), whose table `store init` makes. Stores that do not
//! verify (or a DynamoDB table that is not there) end the command with exit 7 before any
//! request; a cluster master killed during a race makes no key be sent twice.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use sms_sdk_emulator::{Emulator, RunningEmulator, credentials};

use crate::servers::store::{Certificates, PgServer, RedisCluster, RedisServer};

/// How many `batch` processes race, and the rows each sends.
const PROCESSES: usize = 4;
const ROWS: usize = 200;

/// An emulator on its own runtime and a scratch folder.
struct Setup {
    runtime: tokio::runtime::Runtime,
    emulator: Option<RunningEmulator>,
    dir: PathBuf,
}

impl Setup {
    fn new() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let emulator = runtime.block_on(Emulator::builder().start()).unwrap();
        let dir = std::env::temp_dir().join(format!("sms-sdk-stores-{}", crate::servers::uuid_suffix()));
        std::fs::create_dir_all(&dir).unwrap();
        Self { runtime, emulator: Some(emulator), dir }
    }

    fn emulator(&self) -> &RunningEmulator {
        self.emulator.as_ref().unwrap()
    }

    /// The command, pointed at the emulator's Twilio and at `store`.
    fn command(&self, store: &str) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sms-sdk"));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.dir)
            .env("TWILIO_ACCOUNT_SID", credentials::TWILIO_ACCOUNT_SID)
            .env("TWILIO_AUTH_TOKEN", credentials::TWILIO_AUTH_TOKEN)
            .env("TWILIO_FROM", "+15005550006")
            .env("SMS_SDK_TWILIO_BASE_URL", self.emulator().base_url())
            .env("SMS_SDK_STORE", store)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if store.starts_with("dynamodb://") {
            // Throwaway credentials (the test server takes any), read as AWS's tools read them.
            command.env("AWS_ACCESS_KEY_ID", "testing").env("AWS_SECRET_ACCESS_KEY", "testing");
        }
        command
    }

    /// A CSV of `ROWS` rows, each its own recipient and key (unique to this run).
    fn rows(&self) -> PathBuf {
        let run = crate::servers::uuid_suffix();
        let mut csv = String::from("to,id\n");
        for i in 0..ROWS {
            writeln!(csv, "+1415555{i:04},{run}-{i}").unwrap();
        }
        let path = self.dir.join(format!("rows-{run}.csv"));
        std::fs::write(&path, csv).unwrap();
        path
    }

    /// `batch` over `csv` through `store`, reporting to `report`.
    fn spawn_batch(&self, store: &str, csv: &Path, report: &Path, extra: &[&str]) -> Child {
        self.command(store)
            .args(["batch", "--csv", &csv.display().to_string(), "--key-column", "id", "--body-template", "Hi"])
            .args(["--rate", "400", "--report", &report.display().to_string()])
            .args(extra)
            .spawn()
            .unwrap()
    }

    /// Requests the emulator received, per recipient.
    fn requests(&self) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for message in self.emulator().messages() {
            *counts.entry(message.to.unwrap_or_default()).or_default() += 1;
        }
        counts
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

/// Every row of every process's report: (outcome, error code).
fn race(setup: &Setup, store: &str, extra: &[&str], during: impl FnOnce()) -> Vec<(String, String)> {
    race_with_stderr(setup, store, extra, during).into_iter().flat_map(|(rows, _)| rows).collect()
}

/// [`race`], each process's rows with its stderr.
fn race_with_stderr(
    setup: &Setup,
    store: &str,
    extra: &[&str],
    during: impl FnOnce(),
) -> Vec<(Vec<(String, String)>, String)> {
    let csv = setup.rows();
    let reports: Vec<PathBuf> = (0..PROCESSES).map(|i| setup.dir.join(format!("report-{i}.csv"))).collect();
    let children: Vec<Child> = reports.iter().map(|report| setup.spawn_batch(store, &csv, report, extra)).collect();
    during();
    let mut processes = Vec::new();
    for (child, report) in children.into_iter().zip(&reports) {
        let mut rows = Vec::new();
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            matches!(output.status.code(), Some(0 | 1 | 3 | 5)),
            "a batch ended with {:?}: {stderr}",
            output.status
        );
        let text = std::fs::read_to_string(report).unwrap_or_else(|e| panic!("no report ({e}): {stderr}"));
        for line in text.lines().skip(1) {
            // row,key,to,outcome,provider,provider_id,error_code,reason
            let fields: Vec<&str> = line.split(',').collect();
            rows.push((fields[3].to_owned(), fields[6].to_owned()));
        }
        assert_eq!(text.lines().count(), ROWS + 1, "a line per row: {stderr}");
        processes.push((rows, stderr.into_owned()));
    }
    processes
}

/// The race's proof: one request per recipient, one `accepted` row per key, the others replays or
/// in progress.
fn one_request_per_key(setup: &Setup, store: &str, extra: &[&str]) {
    let rows = race(setup, store, extra, || ());
    let requests = setup.requests();
    assert_eq!(requests.len(), ROWS, "every row was sent");
    let mut outcomes: HashMap<&(String, String), usize> = HashMap::new();
    for row in &rows {
        *outcomes.entry(row).or_default() += 1;
    }
    let twice: Vec<_> = requests.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "recipients got two requests: {twice:?}; the rows' outcomes: {outcomes:?}");
    let accepted = rows.iter().filter(|(outcome, _)| outcome == "accepted").count();
    assert_eq!(accepted, ROWS, "one process sent each key");
    for (outcome, code) in &rows {
        assert!(
            outcome == "accepted" || outcome == "replayed" || code == "idempotency_in_progress",
            "{outcome} {code}"
        );
    }
}

/// A TLS-only PostgreSQL server for `localhost` (no plain-text line in `pg_hba.conf`).
fn tls_postgres(certificates: &Certificates) -> PgServer {
    let (crt, key) = (certificates.read("server.crt"), certificates.read("server.key"));
    let files: [(&str, &[u8]); 2] = [("server.crt", &crt), ("server.key", &key)];
    let conf = "\nssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n";
    let hba = "local all postgres trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n";
    PgServer::start_with(&files, conf, Some(hba))
}

#[test]
fn tls_postgres_verify_full_race_through_the_command() {
    let certificates = Certificates::make();
    let server = tls_postgres(&certificates);
    let url = format!(
        "postgres://postgres@localhost:{}/postgres?sslmode=verify-full&sslrootcert={}",
        server.port,
        certificates.path("ca.crt")
    );
    one_request_per_key(&Setup::new(), &url, &[]);
}

#[test]
fn tls_redis_race_through_the_command() {
    let certificates = Certificates::make();
    let server = RedisServer::start_tls(&certificates, false);
    one_request_per_key(&Setup::new(), &server.url, &[]);
}

/// DynamoDB (moto's server, an emulator of its API): `store init` makes the table (and says so;
/// run again, it finds it), then the processes race through it.
#[test]
fn dynamodb_race_through_the_command() {
    let endpoint = std::env::var("SMS_SDK_TEST_DYNAMODB_URL")
        .expect("SMS_SDK_TEST_DYNAMODB_URL is not set: run scripts/test.sh, which starts moto's server");
    let setup = Setup::new();
    let url = format!("dynamodb://sms-sdk-race-{}?region=us-east-1&endpoint={endpoint}", crate::servers::uuid_suffix());
    for expected in ["created the table", "the table was there"] {
        let output = setup.command(&url).args(["store", "init"]).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "store init: {stdout}{stderr}");
        assert!(stdout.contains(expected), "{stdout}");
    }
    one_request_per_key(&setup, &url, &[]);
    // The operator's tools read the same table.
    let listing = |extra: &[&str]| {
        let listed = setup.command(&url).args(["idempotency", "list", "--json"]).args(extra).output().unwrap();
        assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
        let entries: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
        entries
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["record"]["state"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let every = listing(&[]);
    assert!(every.len() == ROWS && every.iter().all(|state| state == "accepted"), "{} keys listed", every.len());
    assert!(listing(&["--state", "unresolved"]).is_empty(), "a key is unresolved after the race");
    let csv = std::fs::read_to_string(setup.dir.join("report-0.csv")).unwrap();
    let key = csv.lines().nth(1).unwrap().split(',').nth(1).unwrap().to_owned();
    let shown = setup.command(&url).args(["idempotency", "show", &key]).output().unwrap();
    let shown_text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success() && shown_text.contains("accepted"), "{shown_text}");
}

/// A table that is not there: the send exits 7 before any request, and says to run `store init`.
#[test]
fn dynamodb_without_its_table_exits_7_before_any_request() {
    let endpoint = std::env::var("SMS_SDK_TEST_DYNAMODB_URL")
        .expect("SMS_SDK_TEST_DYNAMODB_URL is not set: run scripts/test.sh, which starts moto's server");
    let setup = Setup::new();
    let url =
        format!("dynamodb://sms-sdk-absent-{}?region=us-east-1&endpoint={endpoint}", crate::servers::uuid_suffix());
    let output = setup
        .command(&url)
        .args(["send", "--to", "+14155550100", "--body", "Hi", "--idempotency-key", "absent-table"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(7), "{stderr}");
    assert!(stderr.contains("sms-sdk store init"), "{stderr}");
    assert!(!stderr.contains("testing"), "a credential in the error: {stderr}");
    assert!(setup.emulator().messages().is_empty(), "a request went out");
}

/// With the processes' shared rate limit on the cluster too (`--rate-redis`).
#[test]
fn cluster_race_through_the_command() {
    let cluster = RedisCluster::start(3);
    one_request_per_key(&Setup::new(), &cluster.url, &["--rate-redis", &cluster.url]);
}

/// An untrusted CA, a wrong host name under `verify-full`, a plain-text client against the
/// TLS-only servers: each exits 7 (the store) before any request, saying why.
#[test]
fn tls_refusals_exit_7_before_any_request() {
    let setup = Setup::new();
    let certificates = Certificates::make();
    let postgres = tls_postgres(&certificates);
    let redis = RedisServer::start_tls(&certificates, false);
    let (ca, other) = (certificates.path("ca.crt"), certificates.path("other-ca.crt"));
    let (pg, rd) = (postgres.port, redis.port);
    let refusals = [
        (format!("postgres://postgres@localhost:{pg}/postgres?sslmode=verify-full&sslrootcert={other}"), "certificate"),
        (
            format!(
                "postgres://postgres@db.example:{pg}/postgres?hostaddr=127.0.0.1&sslmode=verify-full&sslrootcert={ca}"
            ),
            "certificate",
        ),
        (format!("postgres://postgres@localhost:{pg}/postgres?sslmode=disable"), "no encryption"),
        (format!("rediss://localhost:{rd}/0?sslrootcert={other}"), "certificate"),
        (format!("rediss://127.0.0.2:{rd}/0?sslrootcert={ca}"), "certificate"),
        (format!("redis://127.0.0.1:{rd}/0"), "use rediss://"),
    ];
    let send = ["send", "--to", "+14155550100", "--body", "hi", "--idempotency-key", "refused"];
    for (store, says) in refusals {
        let output = setup.command(&store).args(send).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(7), "{store}: {stderr}");
        assert!(stderr.to_lowercase().contains(&says.to_lowercase()), "{store}: {stderr}");
        // Where the URL came from, and what a store failure leaves to do.
        assert!(stderr.contains("(from SMS_SDK_STORE) did not open"), "{store}: {stderr}");
        assert!(stderr.contains("or only after its URL, credentials or certificates are fixed"), "{store}: {stderr}");
    }
    assert!(setup.emulator().messages().is_empty(), "no request reached the provider");

    // #insecure sends, and the command says on every use that nothing was verified.
    let insecure = format!("rediss://127.0.0.2:{rd}/0#insecure");
    let output = setup.command(&insecure).args(["send", "--to", "+14155550100", "--body", "hi"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("warning: the store's TLS certificate is NOT verified (#insecure)"), "{stderr}");
    let output = setup.command(&insecure).args(["idempotency", "list"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("warning: the store's TLS certificate is NOT verified (#insecure)"), "{stderr}");
}

/// A master killed (SIGKILL) while four processes race: no recipient gets a second request, and
/// every row ends accepted, replayed, in progress, unknown or a store error (nothing sent).
/// The dead master is not started again: what it held is gone, so its keys stay unsent.
#[test]
fn cluster_master_killed_during_a_race_sends_no_key_twice() {
    let setup = Setup::new();
    let cluster = RedisCluster::start(3);
    let processes = race_with_stderr(&setup, &cluster.url, &[], || {
        // Once the race is under way.
        let started = std::time::Instant::now();
        while setup.emulator().messages().len() < ROWS / 4 && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(5));
        }
        cluster.nodes[1].kill();
    });
    let requests = setup.requests();
    assert!(requests.values().all(|&n| n == 1), "a recipient got two requests: {requests:?}");
    assert!(requests.len() < ROWS, "the dead master's keys were not sent");
    // A process whose rows met the dead master says so on stderr, with the first error.
    for (rows, stderr) in &processes {
        let failed = rows.iter().filter(|(_, code)| matches!(code.as_str(), "store" | "before_send_failed")).count();
        if failed > 0 {
            let line = format!("{failed} row(s) not sent: the store failed");
            assert!(stderr.contains(&line) && stderr.contains("The first error:"), "{line}: {stderr}");
        }
    }
    let rows: Vec<_> = processes.into_iter().flat_map(|(rows, _)| rows).collect();
    for (outcome, code) in &rows {
        // A store error: the reservation's (`store`) or the suppression list's check before it
        // (`before_send_failed`); nothing was sent for either.
        let fine = matches!(outcome.as_str(), "accepted" | "replayed" | "unknown")
            || (outcome == "rejected" && matches!(code.as_str(), "store" | "before_send_failed"));
        assert!(fine, "{outcome} {code}");
    }
    assert!(rows.iter().any(|(outcome, _)| outcome == "rejected"), "some rows met the dead master");
}
