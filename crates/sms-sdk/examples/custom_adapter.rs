//! A third-party adapter: implement `Adapter` (one `send` that returns an `Outcome`) and the
//! client gives it validation, retries, failover, idempotency and hooks.
//!
//! `cargo run -p sms-sdk --example custom_adapter`

#![allow(clippy::unwrap_used, clippy::expect_used)] // an example: a panic shows where it went wrong

use sms_sdk::adapter::{Adapter, AdapterInfo, Capabilities, Category, Outcome, SendContext};
use sms_sdk::error::ProviderError;
use sms_sdk::{Client, Message, OutboundMessage, Receipt};

/// An adapter for an imaginary in-house gateway that refuses one prefix.
#[derive(Debug)]
pub struct Gateway {
    info: AdapterInfo,
}

impl Gateway {
    /// A gateway adapter sending from `from`.
    #[must_use]
    pub fn new(from: &str) -> Self {
        Self { info: AdapterInfo::new("gateway", Capabilities::default()).default_from(from) }
    }
}

impl Adapter for Gateway {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        // A real adapter makes one request here and classifies its answer.
        if message.to.as_str().starts_with("+999") {
            return Outcome::rejected(Category::Recipient, ProviderError::new("gateway").code("NO_ROUTE"));
        }
        Outcome::accepted(format!("gw-{}", cx.attempt))
    }
}

/// Sends through the gateway twice: once accepted, once to a prefix it refuses. Returns the
/// receipt and the refusal.
///
/// # Errors
/// The first send's error, or the client's configuration error.
pub async fn run() -> Result<(Receipt, sms_sdk::Error), sms_sdk::Error> {
    let client = Client::builder().adapter(Gateway::new("+15005550006")).build()?;
    let receipt = client.send(&Message::new("+14155550123", "Hello from the gateway")).await?;
    let refused = client.send(&Message::new("+99912345678", "Hello")).await.unwrap_err();
    Ok((receipt, refused))
}

#[tokio::main]
async fn main() -> Result<(), sms_sdk::Error> {
    let (receipt, refused) = run().await?;
    println!("{} accepted it as {}", receipt.provider, receipt.provider_id);
    println!("refused: {} ({:?})", refused.code(), refused.category());
    Ok(())
}
