//! Providers that hold the client: one that accepts the connection and never answers, and one
//! that sends its status line and headers and then one body byte every 100 ms forever. Through
//! each real adapter, the client's request timeout ends both as unknown `timeout` (the request
//! was written), and never much later than the timeout.

use std::time::{Duration, Instant};

use sms_sdk::adapter::Adapter;
use sms_sdk::{Client, ErrorKind, Message, RetryPolicy, UnknownReason};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::{plivo::plivo_at, telnyx::telnyx_at, twilio::twilio_at, vonage::vonage_at};

/// The request timeout of the clients under test.
const TIMEOUT: Duration = Duration::from_millis(500);

/// A server that accepts every connection, keeps it open, and never reads or answers.
async fn silent_server() -> String {
    format!("http://{}", crate::silent_endpoint().await)
}

/// A server that reads the request, answers `201` with a long JSON body, and then sends one
/// byte of it every 100 ms until the client goes away.
async fn trickling_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = vec![0; 64 * 1024];
                let _ = stream.read(&mut request).await;
                let head = "HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{";
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                loop {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if stream.write_all(b" ").await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    format!("http://{address}")
}

/// Sends through `adapter` with the test timeout and no retries; asserts an unknown timeout
/// within the timeout (and a loose bound for a loaded machine).
async fn times_out(adapter: impl Adapter) {
    let name = adapter.info().name.clone();
    let client = Client::builder().adapter(adapter).timeout(TIMEOUT).retry(RetryPolicy::none()).build().unwrap();
    let started = Instant::now();
    let outcome = tokio::time::timeout(Duration::from_secs(10), client.send(&Message::new(crate::TO, "hi"))).await;
    let elapsed = started.elapsed();
    let error = outcome.unwrap_or_else(|_| panic!("{name}: still waiting after 10 s")).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unknown(UnknownReason::Timeout), "{name}: {error:?}");
    assert!(elapsed >= TIMEOUT.saturating_sub(Duration::from_millis(50)), "{name}: gave up after {elapsed:?}");
    assert!(elapsed < TIMEOUT + Duration::from_millis(2500), "{name}: gave up after {elapsed:?}");
}

/// All four adapters against servers from `server`, at once.
async fn every_adapter_times_out(server: impl AsyncFn() -> String) {
    tokio::join!(
        times_out(twilio_at(&server().await)),
        times_out(telnyx_at(&server().await)),
        times_out(plivo_at(&server().await)),
        times_out(vonage_at(&server().await)),
    );
}

#[tokio::test]
async fn timeout_a_provider_that_accepts_and_never_answers_is_unknown_timeout() {
    Box::pin(every_adapter_times_out(silent_server)).await;
}

#[tokio::test]
async fn timeout_a_provider_that_trickles_its_response_is_unknown_timeout() {
    Box::pin(every_adapter_times_out(trickling_server)).await;
}
