//! A job and its retry run in two processes and send the same message with the same key: with
//! the PostgreSQL store the provider gets one request, and the second process gets the first
//! result back, marked replayed.
//!
//! It needs a PostgreSQL server (the store creates its table, `sms_idempotency`, on first use);
//! nothing else leaves the machine, a local stand-in answers as Twilio does:
//!
//! `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo run -p sms-sdk --example idempotent_postgres --features postgres`

use std::process::Command;

use sms_sdk::store::postgres::PostgresStore;
use sms_sdk::{Client, Message, Receipt, Twilio};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a worker prints first on the line that reports its result.
pub const RESULT: &str = "worker result:";

/// One worker process: connects to the store at `store_url`, sends the shipping notice of order
/// 123 through Twilio at `twilio_url` under `key`.
///
/// # Errors
/// The store's connection error, or the send's error.
pub async fn worker(store_url: &str, twilio_url: &str, key: &str) -> Result<Receipt, BoxError> {
    let store = PostgresStore::connect(store_url).await?;
    let twilio = Twilio::builder("AC0123456789abcdef0123456789abcdef", "test-token")
        .from("+15005550006")
        .base_url(twilio_url)
        .build()?;
    let client = Client::builder().adapter(twilio).idempotency(store).build()?;
    let message = Message::new("+14155550123", "Order 123 has shipped.").idempotency_key(key);
    Ok(client.send(&message).await?)
}

/// The line a worker prints: the receipt's id, the provider's id and whether it was replayed.
#[must_use]
pub fn report(receipt: &Receipt) -> String {
    format!("{RESULT} {} {} replayed={}", receipt.id, receipt.provider_id, receipt.replayed)
}

/// Starts a stand-in for Twilio, then two workers one after the other, each from the command
/// `launch(twilio_url, key)` builds, with one key. Returns each worker's result line and the
/// number of requests the stand-in received.
///
/// # Errors
/// A worker that could not start or printed no result.
pub async fn run(launch: impl Fn(&str, &str) -> Command) -> Result<(Vec<String>, usize), BoxError> {
    let twilio = wiremock::MockServer::start().await;
    let created = serde_json::json!({"sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"});
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(201).set_body_json(created))
        .mount(&twilio)
        .await;
    // A key of its own for each run, so that a second run sends again.
    let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?;
    let key = format!("order:123:shipped:{}-{}", std::process::id(), since_epoch.as_nanos());
    let mut lines = Vec::new();
    for _ in 0..2 {
        let mut command = launch(&twilio.uri(), &key);
        let output = tokio::task::spawn_blocking(move || command.output()).await??;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let Some((_, result)) = stdout.split_once(RESULT) else {
            return Err(format!("a worker printed no result: {}", String::from_utf8_lossy(&output.stderr)).into());
        };
        lines.push(format!("{RESULT}{}", result.lines().next().unwrap_or_default()));
    }
    Ok((lines, twilio.received_requests().await.unwrap_or_default().len()))
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let store_url = std::env::var("DATABASE_URL").or_else(|_| std::env::var("SMS_SDK_TEST_POSTGRES_URL")).map_err(
        |_| "set DATABASE_URL to a PostgreSQL server, for example postgres://postgres@127.0.0.1:5432/postgres",
    )?;
    let args: Vec<String> = std::env::args().collect();
    if let [_, mode, twilio_url, key] = args.as_slice()
        && mode == "worker"
    {
        println!("{}", report(&worker(&store_url, twilio_url, key).await?));
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    let (lines, requests) = run(|twilio_url, key| {
        let mut command = Command::new(&exe);
        command.args(["worker", twilio_url, key]);
        command
    })
    .await?;
    for (n, line) in lines.iter().enumerate() {
        println!("process {}: {line}", n + 1);
    }
    println!("requests the provider got: {requests}");
    Ok(())
}
