//! Metrics in Prometheus form: install the exporter's recorder, send through a failover pair of
//! memory adapters (the first one rate-limited, so there is a retry and a failover), and print
//! what a scrape would read.
//!
//! Run it: `cargo run -p sms-sdk --example metrics_prometheus --features metrics,testing`.
//! In a server, serve `handle.render()` on your metrics endpoint (or enable the exporter's
//! `http-listener` feature and let it listen).

use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;
use sms_sdk::testing::{MemoryAdapter, RejectedOptions, rejected_outcome};
use sms_sdk::{Category, Client, Failover, Message, Receipt, RetryPolicy};

/// Sends one message through a rate-limited primary and an accepting backup.
///
/// # Errors
/// The send's error (none is expected: the backup accepts).
pub async fn send_with_failover() -> Result<Receipt, sms_sdk::Error> {
    let limited = rejected_outcome(Category::RateLimited, RejectedOptions::default());
    let primary = MemoryAdapter::builder().name("primary").outcomes([limited.clone(), limited]).build();
    let backup = MemoryAdapter::builder().name("backup").build();
    let client = Client::builder()
        .adapter(primary)
        .adapter(backup)
        .failover(Failover::OnEligibleRejection)
        .retry(RetryPolicy::new(2, Duration::from_millis(1), Duration::from_millis(5)))
        .build()?;
    client.send(&Message::new("+14155550123", "Your code is 123456")).await
}

/// The SDK's lines of a Prometheus scrape.
#[must_use]
pub fn sdk_lines(scrape: &str) -> Vec<&str> {
    scrape.lines().filter(|line| line.starts_with("sms_sdk_")).collect()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let handle = PrometheusBuilder::new().install_recorder()?;
    let receipt = send_with_failover().await?;
    println!("sent through {}\n", receipt.provider);
    for line in sdk_lines(&handle.render()) {
        println!("{line}");
    }
    Ok(())
}
