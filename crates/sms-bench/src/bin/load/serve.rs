//! `sms-bench-load serve`: the `sms-sdk serve` rows. The release command runs as a child
//! process pinned to one core (`taskset -c N`), with the SQLite store and with the PostgreSQL
//! store, and receives signed Twilio webhooks, each distinct (its own `MessageSid`, so a new
//! dedupe key that goes through claim and commit), which it verifies, deduplicates and forwards
//! (Standard Webhooks) to a sink; this process, on the other core, is the load generator (one
//! keep-alive HTTP/1.1 connection per webhook in flight, a minimal client). Next to them, in the
//! same run, the bare verify rate of the same requests: the Twilio verifier in this process, on
//! one thread pinned to serve's core. Runs are interleaved (verify, SQLite, PostgreSQL, then
//! again) and written to a JSON file that `report --serve` reads.

use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sms_bench::usage::{core_ticks, cores_busy, cpu_split, thread_cpu_seconds};
use sms_bench::wire::AUTH_TOKEN;
use sms_sdk::TwilioWebhook;
use sms_sdk::testing::webhooks::{SignedRequest, signed_twilio_request};
use sms_sdk::webhook::WebhookVerifier;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::drive::{drive, measure, worker_of};
use crate::results::{Results, Sample};

/// The forwarding secret serve signs with (the Standard Webhooks specification's example key,
/// 24 bytes).
const FORWARD_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
/// The path serve receives Twilio's webhooks on.
const PATH: &str = "/webhooks/twilio";
/// The id of the verify row (the ceiling of the serve rows).
pub(crate) const VERIFY_ROW: &str = "serve_verify";
/// The serve rows: id, the store's name.
pub(crate) const SERVE_ROWS: [(&str, &str); 2] = [("serve_sqlite_32", "SQLite"), ("serve_pg_32", "PostgreSQL")];
/// How many distinct requests the verify thread cycles through.
const VERIFY_POOL: u64 = 1024;

#[derive(Debug, clap::Parser)]
pub(crate) struct ServeArgs {
    /// The `sms-sdk` binary (the release build: `cargo build --release -p sms-sdk-cli`).
    #[arg(long)]
    sms_sdk: PathBuf,
    /// The core serve and the verify thread run on (serve through `taskset -c N`); unpinned
    /// without it.
    #[arg(long)]
    serve_cpu: Option<usize>,
    /// The sink serve forwards each event to (`sms-bench-responder` answers every POST 201).
    #[arg(long)]
    sink: String,
    /// The sink's process id (its CPU time is read from /proc).
    #[arg(long)]
    sink_pid: Option<u32>,
    /// A directory for serve's SQLite file (`serve.db`).
    #[arg(long)]
    sqlite_dir: Option<PathBuf>,
    /// PostgreSQL URL for serve's store (a throwaway database: serve creates its tables there).
    #[arg(long)]
    postgres: Option<String>,
    /// Runs of each row (the report takes medians).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Seconds per run.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Webhooks in flight, one keep-alive connection each.
    #[arg(long, default_value_t = 32)]
    in_flight: usize,
    /// Where to write the results.
    #[arg(long)]
    pub(crate) out: PathBuf,
}

/// Distinct signed Twilio webhooks (an inbound SMS, the 15 parameters Twilio posts for one,
/// as in the `webhook/twilio_*` micro benchmarks) for the URL serve verifies against.
pub(crate) struct Webhooks {
    /// `http://ADDR/webhooks/twilio`: what serve rebuilds from the Host header and the path.
    url: String,
    /// `ADDR`, the Host header.
    host: String,
    /// Makes the message ids of this process its own (the store keeps earlier runs' keys).
    prefix: u64,
}

impl Webhooks {
    pub(crate) fn new(address: &str) -> Self {
        let prefix = u64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos())
            .unwrap_or_default();
        Self { url: format!("http://{address}{PATH}"), host: address.to_owned(), prefix }
    }

    /// Webhook `seq`, signed: a message id of its own (`SM` and 32 hex digits).
    pub(crate) fn signed(&self, seq: u64) -> SignedRequest {
        let sid = format!("SM{:016x}{seq:016x}", self.prefix);
        let params: [(&str, &str); 15] = [
            ("ToCountry", "US"),
            ("ToState", "CA"),
            ("SmsMessageSid", &sid),
            ("NumMedia", "0"),
            ("ToCity", "SAN FRANCISCO"),
            ("FromZip", "94105"),
            ("SmsSid", &sid),
            ("FromState", "CA"),
            ("SmsStatus", "received"),
            ("FromCity", "SAN FRANCISCO"),
            ("Body", "Hi! Is my order #4521 on its way? Thanks"),
            ("FromCountry", "US"),
            ("To", "+15005550006"),
            ("MessageSid", &sid),
            ("From", "+14155550123"),
        ];
        signed_twilio_request(AUTH_TOKEN, &self.url, &params)
    }

    /// Webhook `seq` as the HTTP/1.1 request bytes a provider sends.
    pub(crate) fn http(&self, seq: u64) -> Vec<u8> {
        let signed = self.signed(seq);
        let mut request = format!("POST {PATH} HTTP/1.1\r\nhost: {}\r\n", self.host);
        for (name, value) in &signed.headers {
            request.push_str(name.as_str());
            request.push_str(": ");
            request.push_str(value.to_str().unwrap_or_default());
            request.push_str("\r\n");
        }
        let _ = write!(request, "content-length: {}\r\n\r\n", signed.body.len());
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(&signed.body);
        bytes
    }
}

/// `(status, head length, body length, the server closes)` of the first response in `bytes`
/// once all of it is there.
fn complete_response(bytes: &[u8]) -> Result<Option<(u16, usize, usize, bool)>, String> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let head = match response.parse(bytes) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(error) => return Err(format!("unreadable response: {error}")),
    };
    let (mut length, mut close) = (0usize, false);
    for header in response.headers.iter() {
        let value = std::str::from_utf8(header.value).unwrap_or_default().trim();
        if header.name.eq_ignore_ascii_case("content-length") {
            length = value.parse().map_err(|_| "a bad content-length".to_owned())?;
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err("a chunked response".to_owned());
        } else if header.name.eq_ignore_ascii_case("connection") {
            close = value.eq_ignore_ascii_case("close");
        }
    }
    let status = response.code.unwrap_or_default();
    Ok((bytes.len() >= head + length).then_some((status, head, length, close)))
}

/// One keep-alive connection to serve, opened on first use and again after a failure.
#[derive(Default)]
struct Connection {
    stream: Option<TcpStream>,
    buffer: Vec<u8>,
}

impl Connection {
    /// Sends `request` and reads its answer: the status and the body. A kept-alive connection
    /// serve closed while idle (it closes one after 10 s without a request: the verify runs
    /// between) is opened again and the request sent once more; it had read nothing of it.
    async fn exchange(&mut self, address: SocketAddr, request: &[u8]) -> Result<(u16, Vec<u8>), String> {
        let reused = self.stream.is_some();
        match self.attempt(address, request).await {
            Err(_) if reused && self.buffer.is_empty() => {
                self.stream = None;
                self.attempt(address, request).await
            }
            result => result,
        }
    }

    async fn attempt(&mut self, address: SocketAddr, request: &[u8]) -> Result<(u16, Vec<u8>), String> {
        if self.stream.is_none() {
            let stream = TcpStream::connect(address).await.map_err(|e| format!("connect: {e}"))?;
            let _ = stream.set_nodelay(true);
            self.stream = Some(stream);
            self.buffer.clear();
        }
        let stream = self.stream.as_mut().ok_or("no connection")?;
        stream.write_all(request).await.map_err(|e| format!("write: {e}"))?;
        loop {
            if let Some((status, head, length, close)) = complete_response(&self.buffer)? {
                let body = self.buffer.get(head..head + length).unwrap_or_default().to_vec();
                self.buffer.drain(..head + length);
                if close {
                    self.stream = None;
                }
                return Ok((status, body));
            }
            let stream = self.stream.as_mut().ok_or("no connection")?;
            if stream.read_buf(&mut self.buffer).await.map_err(|e| format!("read: {e}"))? == 0 {
                return Err("serve closed the connection".to_owned());
            }
        }
    }
}

/// The load generator of one serve: a connection per worker of [`drive`].
pub(crate) struct Generator {
    webhooks: Webhooks,
    address: SocketAddr,
    connections: Vec<tokio::sync::Mutex<Connection>>,
}

impl Generator {
    fn new(address: &str, in_flight: usize) -> Result<Self, String> {
        Ok(Self {
            webhooks: Webhooks::new(address),
            address: address.parse().map_err(|e| format!("serve's address {address}: {e}"))?,
            connections: (0..in_flight.max(1)).map(|_| tokio::sync::Mutex::default()).collect(),
        })
    }

    /// Posts webhook `seq` on its worker's connection: `Ok` when serve answered 200 `ok` (verified,
    /// claimed, forwarded and answered 2xx by the sink, committed), the answer otherwise.
    async fn post(&self, seq: u64) -> Result<(), String> {
        let request = self.webhooks.http(seq);
        let slot = self.connections.get(worker_of(seq) % self.connections.len()).ok_or("no connection slot")?;
        let mut connection = slot.lock().await;
        match connection.exchange(self.address, &request).await {
            Ok((200, body)) if body == b"ok\n" => Ok(()),
            Ok((status, body)) => Err(format!("serve answered {status} {}", String::from_utf8_lossy(&body).trim())),
            Err(error) => {
                connection.stream = None;
                Err(error)
            }
        }
    }
}

/// A running `sms-sdk serve`; killed when dropped.
struct Serve {
    child: Child,
    address: String,
    /// The command line, for the report.
    command: String,
    /// What it wrote on stderr after the address.
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Serve {
    /// Starts `sms-sdk serve` on `store`, forwarding to `sink`, and waits for its address.
    fn start(args: &ServeArgs, store: &str) -> Result<Self, String> {
        let forward = format!("{}/events", args.sink.trim_end_matches('/'));
        let mut words: Vec<String> = Vec::new();
        if let Some(cpu) = args.serve_cpu {
            words.extend(["taskset".into(), "-c".into(), cpu.to_string()]);
        }
        words.push(args.sms_sdk.display().to_string());
        words.extend(
            ["serve", "--listen", "127.0.0.1:0", "--quiet", "--forward", &forward, "--store", store].map(String::from),
        );
        let (program, rest) = words.split_first().ok_or("no command")?;
        // Only what serve needs: no other provider's secret, no SMS_SDK_* of the caller.
        let mut command = Command::new(program);
        command.args(rest).env_clear();
        for name in ["PATH", "HOME"] {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        command
            .env("TWILIO_AUTH_TOKEN", AUTH_TOKEN)
            .env("SMS_SDK_FORWARD_SECRET", FORWARD_SECRET)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| format!("{program} does not start: {e}"))?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let (found, address) = std::sync::mpsc::channel::<String>();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&lines);
        std::thread::spawn(move || {
            let mut found = Some(found);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let listening = line.strip_prefix("sms-sdk serve: listening on http://").map(str::to_owned);
                match (listening, found.take()) {
                    (Some(address), Some(found)) => {
                        let _ = found.send(address);
                    }
                    (_, still) => {
                        found = still;
                        if let Ok(mut kept) = kept.lock() {
                            kept.push(line);
                        }
                    }
                }
            }
        });
        let shown = words.join(" ");
        let mut serve = Self { child, address: String::new(), command: shown, stderr: lines };
        match address.recv_timeout(Duration::from_secs(30)) {
            Ok(address) => {
                serve.address = address;
                Ok(serve)
            }
            Err(_) => Err(format!("`{}` did not listen: {}", serve.command, serve.said().join(" / "))),
        }
    }

    fn pid(&self) -> u32 {
        // taskset execs the command: this is serve's own pid.
        self.child.id()
    }

    /// Its stderr lines after the address (the banner, then anything unexpected).
    fn said(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(100));
        self.stderr.lock().map(|lines| lines.clone()).unwrap_or_default()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serve's own count of webhooks it answered 200 (`/metrics`).
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // a count, rounded and not negative
async fn answered_200(address: SocketAddr) -> Result<u64, String> {
    let mut stream = TcpStream::connect(address).await.map_err(|e| e.to_string())?;
    let request = format!("GET /metrics HTTP/1.1\r\nhost: {address}\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.map_err(|e| e.to_string())?;
    let mut text = String::new();
    stream.read_to_string(&mut text).await.map_err(|e| e.to_string())?;
    Ok(text
        .lines()
        .filter(|line| line.starts_with("sms_sdk_serve_requests_total{") && line.contains("status=\"200\""))
        .filter_map(|line| line.rsplit(' ').next().and_then(|n| n.parse::<f64>().ok()))
        .sum::<f64>()
        .round()
        .max(0.0) as u64)
}

/// Pins the calling thread to `cpu`.
fn pin_this_thread(cpu: usize) -> Result<(), String> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set).map_err(|e| format!("pinning to core {cpu}: {e}"))
}

/// The bare verify rate: `TwilioWebhook::verify` of distinct requests like serve's, for
/// `duration`, on one thread (pinned to `cpu`), timed in that thread's CPU time.
fn verify_run(webhooks: &Webhooks, duration: Duration, cpu: Option<usize>) -> Result<Sample, String> {
    std::thread::scope(|scope| {
        let thread = scope.spawn(|| {
            if let Some(cpu) = cpu {
                pin_this_thread(cpu)?;
            }
            let verifier = TwilioWebhook::new(AUTH_TOKEN).map_err(|e| e.to_string())?;
            // Numbers far from the drives' (these are never posted).
            let pool: Vec<SignedRequest> = (0..VERIFY_POOL).map(|i| webhooks.signed(u64::MAX - i)).collect();
            let (mut ops, mut errors) = (0u64, 0u64);
            let (started, cpu_before) = (Instant::now(), thread_cpu_seconds());
            while started.elapsed() < duration {
                for request in &pool {
                    match verifier.verify(&request.as_request()) {
                        Ok(event) => {
                            std::hint::black_box(event);
                            ops += 1;
                        }
                        Err(_) => errors += 1,
                    }
                }
            }
            let cpu_s = thread_cpu_seconds() - cpu_before;
            Ok(Sample { ops, errors, wall_s: started.elapsed().as_secs_f64(), cpu_s: Some(cpu_s), ..Sample::default() })
        });
        thread.join().unwrap_or_else(|_| Err("the verify thread panicked".to_owned()))
    })
}

/// One timed run against serve: [`measure`] (this process's CPU, the sink's as the responder's)
/// plus serve's CPU and every core's busy share over the same window.
async fn measure_serve(args: &ServeArgs, serve: &Serve, generator: &Arc<Generator>) -> Sample {
    let pid = serve.pid();
    let (serve_before, cores_before) = (cpu_split(Some(pid)), core_ticks());
    let generator = Arc::clone(generator);
    let op = Arc::new(move |seq: u64| {
        let generator = Arc::clone(&generator);
        async move { generator.post(seq).await }
    });
    let mut sample = measure(args.in_flight, Duration::from_secs_f64(args.seconds), args.sink_pid, op).await;
    let serve_cpu = cpu_split(Some(pid)).zip(serve_before).map(|(a, b)| (a.0 - b.0, a.1 - b.1));
    sample.serve_cpu_s = serve_cpu.map(|(user, sys)| user + sys);
    sample.serve_sys_s = serve_cpu.map(|(_, sys)| sys);
    sample.cores_busy = cores_busy(&cores_before, &core_ticks());
    sample
}

fn progress(id: &str, run: usize, sample: &Sample) {
    let cores: Vec<String> = sample.cores_busy.iter().map(|b| format!("{:.0}%", b * 100.0)).collect();
    match sample.serve_us() {
        Some(serve) => eprintln!(
            "  {id:<16} run {}: {:>7.0}/s, serve {serve:.1} µs CPU/webhook ({:.0}% of a core), generator {:.1} µs, \
             sink {:.1} µs; cores busy {}; {} errors",
            run + 1,
            sample.rate(),
            sample.serve_load().unwrap_or_default() * 100.0,
            sample.cpu_us().unwrap_or_default(),
            sample.responder_us().unwrap_or_default(),
            cores.join(" / "),
            sample.errors,
        ),
        None => eprintln!(
            "  {id:<16} run {}: {:>7.0} verifies per CPU second ({:.2} µs), {} errors",
            run + 1,
            sample.cpu_rate().unwrap_or_default(),
            sample.cpu_us().unwrap_or_default(),
            sample.errors,
        ),
    }
}

/// Runs the serve rows; what could not run is in `skipped`.
pub(crate) fn run(args: &ServeArgs) -> Results {
    let mut results =
        Results { runs: args.runs, seconds: args.seconds, serve_cpu: args.serve_cpu, ..Results::default() };
    let mut servers: Vec<(&str, &str, Serve)> = Vec::new();
    let stores = [
        (SERVE_ROWS[0], args.sqlite_dir.as_ref().map(|dir| format!("sqlite:{}", dir.join("serve.db").display()))),
        (SERVE_ROWS[1], args.postgres.clone()),
    ];
    for ((id, name), store) in stores {
        let Some(store) = store else {
            results.skipped.push(format!("serve with the {name} store: no store given"));
            continue;
        };
        match Serve::start(args, &store) {
            Ok(serve) => {
                eprintln!("serve ({name}) listening on {}: {}", serve.address, serve.command);
                servers.push((id, name, serve));
            }
            Err(error) => {
                eprintln!("  serve with the {name} store: {error}");
                results.skipped.push(format!("serve with the {name} store: {error}"));
            }
        }
    }
    let Some((_, _, first)) = servers.first() else { return results };
    let verify_webhooks = Webhooks::new(&first.address);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let mut generators = Vec::new();
        let mut answered = Vec::new();
        for (_, name, serve) in &servers {
            let generator = Arc::new(Generator::new(&serve.address, args.in_flight).expect("serve's address"));
            let warm = Arc::clone(&generator);
            let op = Arc::new(move |seq: u64| {
                let generator = Arc::clone(&warm);
                async move { generator.post(seq).await }
            });
            let (done, failed, first) = drive(args.in_flight, Duration::from_millis(500), op).await;
            eprintln!(
                "  warm-up ({name}): {done} webhooks, {failed} failed{}",
                first.map(|e| format!(" ({e})")).unwrap_or_default()
            );
            generators.push(generator);
            answered.push(done);
        }
        for run in 0..args.runs {
            match verify_run(&verify_webhooks, Duration::from_secs_f64(args.seconds), args.serve_cpu) {
                Ok(sample) => {
                    progress(VERIFY_ROW, run, &sample);
                    let label = "`TwilioWebhook::verify` of the same requests, in-process, one thread on serve's core";
                    results.row_mut(VERIFY_ROW, label, 1).samples.push(sample);
                }
                Err(error) => results.skipped.push(format!("verify run {}: {error}", run + 1)),
            }
            for (((id, name, serve), generator), answered) in servers.iter().zip(&generators).zip(&mut answered) {
                let sample = measure_serve(args, serve, generator).await;
                progress(id, run, &sample);
                *answered += sample.ops;
                let label = format!(
                    "`sms-sdk serve`, {name} store, {} in flight: verified, deduped, forwarded",
                    args.in_flight
                );
                results.row_mut(id, &label, args.in_flight).samples.push(sample);
            }
        }
        for (((_, name, serve), generator), answered) in servers.iter().zip(&generators).zip(&answered) {
            let counted = answered_200(generator.address).await;
            let counted = counted.map_or_else(|e| format!("unreadable ({e})"), |n| n.to_string());
            results.notes.push(format!(
                "`sms-sdk serve` with the {name} store ran as `{}` (with `TWILIO_AUTH_TOKEN` and \
                 `SMS_SDK_FORWARD_SECRET` only); its `/metrics` counted {counted} webhooks answered 200, the \
                 load generator {answered} answered `ok` (warm-up included).",
                serve.command
            ));
            let said: Vec<String> = serve.said().into_iter().filter(|line| line.starts_with("error")).collect();
            if !said.is_empty() {
                results.notes.push(format!("serve ({name}) wrote on stderr: {}", said.join(" / ")));
            }
        }
    });
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_webhook_verifies_and_has_a_key_of_its_own() {
        let webhooks = Webhooks::new("127.0.0.1:40000");
        let verifier = TwilioWebhook::new(AUTH_TOKEN).unwrap();
        let first = verifier.verify(&webhooks.signed(1).as_request()).unwrap();
        let second = verifier.verify(&webhooks.signed(2).as_request()).unwrap();
        assert_eq!(first.type_name(), "message.received");
        assert_ne!(first.dedupe_key, second.dedupe_key);
        assert!(first.dedupe_key.starts_with("twilio:SM"), "{}", first.dedupe_key);
        // The request bytes carry the Host and the path the signature covers.
        let http = String::from_utf8(webhooks.http(1)).unwrap();
        assert!(http.starts_with("POST /webhooks/twilio HTTP/1.1\r\nhost: 127.0.0.1:40000\r\n"), "{http}");
        assert!(http.contains("x-twilio-signature: ") && http.ends_with("From=%2B14155550123"), "{http}");
    }

    #[test]
    fn a_response_is_read_once_all_of_it_is_there() {
        let whole = b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nok\n";
        assert_eq!(complete_response(whole).unwrap(), Some((200, whole.len() - 3, 3, false)));
        assert_eq!(complete_response(&whole[..whole.len() - 1]).unwrap(), None);
        assert!(complete_response(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n").is_err());
    }
}
