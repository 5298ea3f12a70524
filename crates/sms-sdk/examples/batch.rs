//! Sending a list of messages: at most 4 at once, at most 50 per second, one result per
//! message, and a summary. Run the same batch again (after a crash, say) and the messages already
//! accepted replay from the idempotency store instead of texting anyone twice.
//!
//! `cargo run -p sms-sdk --example batch --features testing`

use futures_util::StreamExt;
use sms_sdk::batch::{BatchOptions, Summary};
use sms_sdk::rate::RateLimit;
use sms_sdk::store::MemoryStore;
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::{Client, Message};

/// The customers to tell: a row number, a phone number and a name. Row 3's number is not an
/// E.164 number (no `+`, dashes): it is refused before any request.
const ROWS: [(u64, &str, &str); 5] = [
    (1, "+14155550101", "Ada"),
    (2, "+14155550102", "Grace"),
    (3, "415-555-0103", "Edsger"),
    (4, "+14155550104", "Barbara"),
    (5, "+14155550105", "Donald"),
];

/// Runs the batch once through `client`: one message per row, keyed by the campaign and the row.
///
/// # Errors
/// When the options are invalid (they are not).
pub async fn run_once(client: &Client) -> Result<Summary, sms_sdk::Error> {
    let messages = futures_util::stream::iter(ROWS.map(|(row, to, name)| {
        let body = format!("Hi {name}, your order has shipped.");
        (row, Message::new(to, body).idempotency_key(format!("spring-shipping-{row}")))
    }));
    let options = BatchOptions::default().concurrency(4)?.rate(RateLimit::per_second(50))?;
    let mut results = client.send_batch(messages, options);
    let mut summary = Summary::default();
    while let Some(result) = results.next().await {
        if let Err(error) = &result.result {
            println!("row {}: {} ({})", result.tag, result.outcome(), error.code());
        }
        summary.add(result.outcome());
    }
    Ok(summary)
}

/// Runs the batch twice against one store. Returns both summaries and the requests the adapter
/// got in all.
///
/// # Errors
/// The client's configuration error (there is none).
pub async fn run() -> Result<(Summary, Summary, usize), sms_sdk::Error> {
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).idempotency(MemoryStore::new()).build()?;
    let first = run_once(&client).await?;
    let again = run_once(&client).await?;
    Ok((first, again, memory.sent().len()))
}

#[tokio::main]
async fn main() -> Result<(), sms_sdk::Error> {
    let (first, again, requests) = run().await?;
    println!("first run: {first:?}");
    println!("second run: {again:?}");
    println!("requests made: {requests}");
    Ok(())
}
