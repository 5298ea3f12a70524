//! A retried job must not text the customer twice: an idempotency key and the SQLite store make
//! the repeat replay the first result, even from another process.
//!
//! `cargo run -p sms-sdk --example idempotent_sqlite --features testing,sqlite`

use std::path::Path;

use sms_sdk::store::sqlite::SqliteStore;
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::{Client, Message, Receipt};

/// Sends one message twice with one key through a SQLite store at `path`. Returns both receipts
/// and the number of requests the adapter got.
///
/// # Errors
/// The store's or the send's error.
pub async fn run(path: &Path) -> Result<(Receipt, Receipt, usize), Box<dyn std::error::Error>> {
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).idempotency(SqliteStore::open(path).await?).build()?;
    let key = format!("order:123:shipped:{}", std::process::id());
    let message = Message::new("+14155550123", "Order 123 shipped.").idempotency_key(key);
    let first = client.send(&message).await?;
    let second = client.send(&message).await?;
    Ok((first, second, memory.sent().len()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join("sms-sdk-example").join("state.db");
    let (first, second, requests) = run(&path).await?;
    println!("first {} (replayed {}), second {} (replayed {})", first.id, first.replayed, second.id, second.replayed);
    println!("requests made: {requests}");
    Ok(())
}
