//! The examples, run by the tests (T247, T248, T250, and each other example; `webhook_axum` runs
//! in `axum_example.rs`, `webhook_tower` in `webhooks/tower_layer.rs`).

#[cfg(feature = "twilio")]
#[path = "../../examples/send.rs"]
#[allow(dead_code, unreachable_pub)]
mod send;

#[cfg(all(feature = "twilio", feature = "telnyx"))]
#[path = "../../examples/failover.rs"]
#[allow(dead_code, unreachable_pub)]
mod failover;

#[cfg(feature = "metrics")]
#[path = "../../examples/metrics_prometheus.rs"]
#[allow(dead_code, unreachable_pub)]
mod metrics_prometheus;

#[path = "../../examples/testing.rs"]
#[allow(dead_code, unreachable_pub)]
mod testing;

#[path = "../../examples/batch.rs"]
#[allow(dead_code, unreachable_pub)]
mod batch;

#[path = "../../examples/custom_adapter.rs"]
#[allow(dead_code, unreachable_pub)]
mod custom_adapter;

#[cfg(feature = "sqlite")]
#[path = "../../examples/idempotent_sqlite.rs"]
#[allow(dead_code, unreachable_pub)]
mod idempotent_sqlite;

#[cfg(all(feature = "postgres", feature = "twilio"))]
#[path = "../../examples/idempotent_postgres.rs"]
#[allow(dead_code, unreachable_pub)]
mod idempotent_postgres;

#[cfg(feature = "twilio")]
#[tokio::test]
async fn t247_twilio_example() {
    let server = send::stand_in().await;
    let receipt =
        send::send(&server.uri(), "AC0123456789abcdef0123456789abcdef", "test-token", "+15005550006").await.unwrap();
    assert_eq!(
        (receipt.provider.as_str(), receipt.provider_id.as_str()),
        ("twilio", "SM0123456789abcdef0123456789abcdef")
    );
}

#[cfg(all(feature = "twilio", feature = "telnyx"))]
#[tokio::test]
async fn t248_failover_example() {
    let (twilio, telnyx) = failover::stand_ins().await;
    let receipt = failover::send(&twilio.uri(), &telnyx.uri()).await.unwrap();
    assert_eq!(receipt.attempted_providers, ["twilio", "telnyx"]);
}

#[tokio::test]
async fn t250_test_adapter_example() {
    let (error, bodies) = testing::run().await;
    assert_eq!(error.category(), Some(sms_sdk::Category::Compliance));
    assert_eq!(error.code(), "provider_rejected");
    assert_eq!(bodies, ["Your login code is 482913", "Your login code is 111222"]);
}

#[cfg(feature = "metrics")]
#[test]
fn metrics_prometheus_example_scrapes_the_retry_and_the_failover() {
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let receipt = metrics::with_local_recorder(&recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(metrics_prometheus::send_with_failover()).unwrap()
    });
    assert_eq!(receipt.provider, "backup");
    let scrape = handle.render();
    let lines = metrics_prometheus::sdk_lines(&scrape);
    for expected in [
        r#"sms_sdk_failovers_total{from="primary",to="backup"} 1"#,
        r#"sms_sdk_retries_total{provider="primary"} 1"#,
        r#"sms_sdk_sends_total{provider="backup",outcome="accepted"} 1"#,
    ] {
        assert!(lines.contains(&expected), "{expected} not in {lines:#?}");
    }
}

#[tokio::test]
async fn custom_adapter_example_accepts_and_refuses() {
    let (receipt, refused) = custom_adapter::run().await.unwrap();
    assert_eq!((receipt.provider.as_str(), receipt.provider_id.as_str()), ("gateway", "gw-1"));
    assert_eq!(refused.category(), Some(sms_sdk::Category::Recipient));
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn idempotent_sqlite_example_replays_the_repeat() {
    let dir = std::env::temp_dir().join(format!("sms-sdk-example-test-{}", std::process::id()));
    let (first, second, requests) = idempotent_sqlite::run(&dir.join("state.db")).await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!((first.replayed, second.replayed, requests), (false, true, 1));
    assert_eq!(first.id, second.id);
}

/// The variable that makes `idempotent_postgres_worker` act: the stand-in's URL and the key.
#[cfg(all(feature = "postgres", feature = "twilio"))]
const POSTGRES_WORKER: &str = "SMS_SDK_EXAMPLE_POSTGRES_WORKER";

/// One worker process of the PostgreSQL example: this test binary run again by the test below
/// (without the variable, it does nothing).
#[cfg(all(feature = "postgres", feature = "twilio"))]
#[tokio::test]
async fn idempotent_postgres_worker() {
    let Ok(job) = std::env::var(POSTGRES_WORKER) else { return };
    let (twilio_url, key) = job.split_once(' ').unwrap();
    let store_url = crate::stores::server_url("SMS_SDK_TEST_POSTGRES_URL");
    let receipt = idempotent_postgres::worker(&store_url, twilio_url, key).await.unwrap();
    println!("{}", idempotent_postgres::report(&receipt));
}

#[cfg(all(feature = "postgres", feature = "twilio"))]
#[tokio::test]
async fn idempotent_postgres_example_replays_across_two_processes() {
    crate::stores::server_url("SMS_SDK_TEST_POSTGRES_URL");
    let exe = std::env::current_exe().unwrap();
    let (lines, requests) = idempotent_postgres::run(|twilio_url, key| {
        let mut command = std::process::Command::new(&exe);
        command
            .args(["examples::idempotent_postgres_worker", "--exact", "--nocapture", "--test-threads=1"])
            .env(POSTGRES_WORKER, format!("{twilio_url} {key}"));
        command
    })
    .await
    .unwrap();
    assert_eq!(requests, 1, "{lines:?}");
    let fields: Vec<Vec<&str>> = lines.iter().map(|line| line.split(' ').collect()).collect();
    assert_eq!(fields[0][4], "replayed=false", "{lines:?}");
    assert_eq!(fields[1][4], "replayed=true", "{lines:?}");
    assert_eq!(fields[0][2..4], fields[1][2..4], "one receipt id and provider id: {lines:?}");
}

#[tokio::test]
async fn batch_example_sends_each_row_once_and_replays_on_the_second_run() {
    let (first, again, requests) = batch::run().await.unwrap();
    assert_eq!((first.accepted, first.replayed, first.rejected, first.unknown), (4, 0, 1, 0));
    assert_eq!((again.accepted, again.replayed, again.rejected, again.unknown), (0, 4, 1, 0));
    assert_eq!(requests, 4, "one request per valid row, none on the second run");
}
