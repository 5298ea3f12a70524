//! Tests without a network: `MemoryAdapter` records every send and answers from a script.
//!
//! `cargo run -p sms-sdk --example testing --features testing`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it reports a failure

use sms_sdk::adapter::Category;
use sms_sdk::testing::{MemoryAdapter, RejectedOptions, rejected_outcome};
use sms_sdk::{Client, Error, Message};

/// Sends two login codes; the second is scripted as an opt-out (compliance) rejection.
/// Returns the second send's error and the bodies the adapter recorded.
///
/// # Panics
/// When the first send is not accepted.
pub async fn run() -> (Error, Vec<String>) {
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).build().expect("one adapter");
    client.send(&Message::new("+14155550123", "Your login code is 482913")).await.expect("accepted");
    memory.enqueue(rejected_outcome(
        Category::Compliance,
        RejectedOptions { code: Some("21610".into()), ..RejectedOptions::default() },
    ));
    let error = client.send(&Message::new("+14155550123", "Your login code is 111222")).await.unwrap_err();
    (error, memory.sent().into_iter().map(|s| s.message.body).collect())
}

#[tokio::main]
async fn main() {
    let (error, bodies) = run().await;
    println!("second send: {} ({:?}); recorded {} sends", error.code(), error.category(), bodies.len());
}
