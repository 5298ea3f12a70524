//! The README's emulator workflow, end to end: run `sms-sdk emulator`, take the lines it prints
//! as they would be pasted into a shell, and `sms-sdk send` through each of the four providers
//! with that environment.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::string_slice)] // test code: a panic is a failed test

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use sms_sdk_cli::{Env, run};

/// The running `sms-sdk emulator` process, killed when the test ends (passed or failed).
struct EmulatorProcess(Child);

impl Drop for EmulatorProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `sms-sdk emulator --listen 127.0.0.1:0` and returns it with what it printed on stdout
/// at start (every line until it has been quiet for half a second).
fn start_emulator() -> (EmulatorProcess, Vec<String>) {
    start_emulator_with(&[])
}

/// [`start_emulator`] with `flags` after `--listen`.
fn start_emulator_with(flags: &[&str]) -> (EmulatorProcess, Vec<String>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sms-sdk"));
    command.args(["emulator", "--listen", "127.0.0.1:0"]).args(flags).stdout(Stdio::piped()).stderr(Stdio::inherit());
    // Its export lines name a store in the data directory: a scratch one.
    let data = std::env::temp_dir().join(format!("sms-sdk-emulator-command-{}", std::process::id()));
    command.env("XDG_DATA_HOME", &data);
    for (name, _) in std::env::vars() {
        if ["TWILIO_", "TELNYX_", "PLIVO_", "VONAGE_", "SMS_SDK_"].iter().any(|p| name.starts_with(p)) {
            command.env_remove(name);
        }
    }
    let mut child = command.spawn().expect("the built sms-sdk starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let process = EmulatorProcess(child);
    let (lines, received) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut printed = Vec::new();
    loop {
        let wait = if printed.is_empty() {
            deadline.saturating_duration_since(Instant::now())
        } else {
            Duration::from_millis(500)
        };
        match received.recv_timeout(wait) {
            Ok(line) => printed.push(line),
            Err(_) => break,
        }
        assert!(Instant::now() < deadline, "the emulator kept printing: {printed:#?}");
    }
    assert!(!printed.is_empty(), "the emulator printed nothing");
    (process, printed)
}

/// Runs `script` with `sh -eu` in an empty environment and returns the environment it ends
/// with: what a user gets by pasting the printed lines into a shell.
fn shell_environment(script: &str) -> Vec<(String, String)> {
    let output = Command::new("sh").arg("-euc").arg(format!("{script}\nenv -0")).env_clear().output().expect("sh runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && stderr.is_empty(), "the printed lines are not valid shell: {stderr}\n{script}");
    output
        .stdout
        .split(|b| *b == 0)
        .filter_map(|pair| {
            let pair = String::from_utf8(pair.to_vec()).ok()?;
            let (name, value) = pair.split_once('=')?;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// One request to `{base}{path}` over a plain socket: its status line and JSON body.
fn request(base: &str, method: &str, path: &str, body: &str) -> (String, Value) {
    let address = base.strip_prefix("http://").expect("an http base URL");
    let mut stream = TcpStream::connect(address).expect("connect to the emulator");
    stream.set_read_timeout(Some(Duration::from_secs(20))).expect("a read timeout");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a response");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    let status = head.lines().next().unwrap_or_default().to_owned();
    (status, serde_json::from_str::<Value>(body).expect("JSON"))
}

/// `GET {base}/_emulator/messages` over a plain socket.
fn inspection(base: &str) -> Vec<Value> {
    let (status, body) = request(base, "GET", "/_emulator/messages", "");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    body.as_array().cloned().expect("a JSON array")
}

#[cfg(unix)]
#[test]
fn the_printed_lines_are_enough_to_send_through_every_provider() {
    let (_emulator, printed) = start_emulator();
    // Everything it printed is pasted, comments included.
    let script = printed.join("\n");
    let variables = shell_environment(&script);
    let variable = |name: &str| variables.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let base = variable("SMS_SDK_TWILIO_BASE_URL").unwrap_or_else(|| panic!("no base URL in:\n{script}"));
    assert!(!base.ends_with(":0"), "the real port is printed: {base}");
    for secret in [
        "TWILIO_AUTH_TOKEN",
        "TELNYX_PUBLIC_KEY",
        "PLIVO_AUTH_TOKEN",
        "VONAGE_SIGNATURE_SECRET",
        "SINCH_WEBHOOK_SECRET",
        "INFOBIP_WEBHOOK_BASIC",
        "BANDWIDTH_WEBHOOK_BASIC",
    ] {
        assert!(variable(secret).is_some(), "no {secret} in:\n{script}");
    }
    let env: Env = variables.iter().cloned().collect();
    for provider in ["twilio", "telnyx", "plivo", "vonage", "sinch", "infobip", "bandwidth"] {
        let args: Vec<String> = ["send", "--to", "+14155550123", "--body", "hi", "--provider", provider]
            .into_iter()
            .map(str::to_owned)
            .collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &env, &mut out, &mut err);
        let (out, err) = (String::from_utf8_lossy(&out), String::from_utf8_lossy(&err));
        assert_eq!(code, 0, "{provider}: {out}{err}\nwith:\n{script}");
    }
    let messages = inspection(&base);
    for provider in ["twilio", "telnyx", "plivo", "vonage", "sinch", "infobip", "bandwidth"] {
        let sent = messages.iter().find(|m| m["provider"] == provider);
        let sent = sent.unwrap_or_else(|| panic!("no {provider} request in {messages:#?}"));
        assert_eq!(sent["to"], "+14155550123", "{provider}");
        assert!(sent["id"].is_string(), "{provider}: {sent}");
    }
}

/// One webhook a [`Hooks`] receiver got: its path, whether it carried the provider's signature
/// header, and its body.
#[derive(Debug, Clone)]
struct Hook {
    path: String,
    signature: Option<&'static str>,
    body: String,
}

/// A webhook receiver on loopback, on a runtime of its own, answering 200 to any POST.
struct Hooks {
    _runtime: tokio::runtime::Runtime,
    base: String,
    received: std::sync::Arc<std::sync::Mutex<Vec<Hook>>>,
}

impl Hooks {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = std::sync::Arc::clone(&received);
        let base = runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let router = axum::Router::new().fallback(move |uri: http::Uri, headers: http::HeaderMap, body: String| {
                let sink = std::sync::Arc::clone(&sink);
                async move {
                    let signature =
                        ["x-twilio-signature", "telnyx-signature-ed25519", "x-plivo-signature-v3", "authorization"]
                            .into_iter()
                            .find(|name| headers.contains_key(*name));
                    sink.lock().unwrap().push(Hook { path: uri.path().to_owned(), signature, body });
                    http::StatusCode::OK
                }
            });
            tokio::spawn(async move { axum::serve(listener, router).await });
            base
        });
        Self { _runtime: runtime, base, received }
    }

    /// Waits (up to 10 s) until `done` holds for the webhooks received.
    fn wait_until(&self, done: impl Fn(&[Hook]) -> bool) -> Vec<Hook> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let received = self.received.lock().unwrap().clone();
            if done(&received) || Instant::now() > deadline {
                return received;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `--webhook-url` and `--inbound-url` as the command line gives them: a bare URL for every
/// provider, and `PROVIDER=URL` entries over it for one.
#[cfg(unix)]
#[test]
fn each_providers_webhooks_go_to_the_url_its_flag_names() {
    let hooks = Hooks::start();
    let base = hooks.base.clone();
    let flags = [
        "--status-delay-ms".to_owned(),
        "20".to_owned(),
        "--webhook-url".to_owned(),
        format!("{base}/status"),
        "--webhook-url".to_owned(),
        format!("telnyx={base}/telnyx/status"),
        "--inbound-url".to_owned(),
        format!("{base}/inbound"),
        "--inbound-url".to_owned(),
        format!("plivo={base}/plivo/inbound"),
    ];
    let (_emulator, printed) = start_emulator_with(&flags.iter().map(String::as_str).collect::<Vec<_>>());
    let script = printed.join("\n");
    let env: Env = shell_environment(&script).into_iter().collect();
    let emulator = env.get("SMS_SDK_TWILIO_BASE_URL").map(str::to_owned).expect("a base URL");
    let mut sent = Vec::new();
    for provider in ["twilio", "telnyx"] {
        let args = ["send", "--to", "+14155550123", "--body", "hi", "--provider", provider, "--json"];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(args, &env, &mut out, &mut err);
        assert_eq!(code, 0, "{provider}: {}", String::from_utf8_lossy(&err));
        let result: Value = serde_json::from_slice(&out).expect("one JSON object");
        sent.push((provider, result["provider_id"].as_str().expect("an id").to_owned()));
    }
    // Two status steps per message.
    let received = hooks.wait_until(|hooks| hooks.len() >= 4);
    for (provider, id) in &sent {
        let paths: Vec<&str> =
            received.iter().filter(|h| h.body.contains(id.as_str())).map(|h| h.path.as_str()).collect();
        let expected = if *provider == "telnyx" { "/telnyx/status" } else { "/status" };
        assert_eq!(paths, [expected; 2], "{provider}: {received:#?}");
    }
    for hook in &received {
        let signed = if hook.path.starts_with("/telnyx") { "telnyx-signature-ed25519" } else { "x-twilio-signature" };
        assert_eq!(hook.signature, Some(signed), "{hook:?}");
    }
    // Inbound messages: Plivo's to its own URL, Twilio's to the one of every provider.
    for (provider, path) in [("plivo", "/plivo/inbound"), ("twilio", "/inbound")] {
        let body =
            format!(r#"{{"provider": "{provider}", "from": "+14155550123", "to": "+15005550006", "text": "STOP"}}"#);
        let (status, answer) = request(&emulator, "POST", "/_emulator/inbound", &body);
        assert!(status.starts_with("HTTP/1.1 202"), "{status} {answer}");
        assert_eq!(answer["url"], format!("{base}{path}"), "{answer}");
        assert_eq!(answer["delivered"], true, "{answer}");
    }
    let received = hooks.wait_until(|hooks| hooks.len() >= 6);
    let inbound: Vec<&str> = received.iter().skip(4).map(|h| h.path.as_str()).collect();
    assert_eq!(inbound, ["/plivo/inbound", "/inbound"]);
}
