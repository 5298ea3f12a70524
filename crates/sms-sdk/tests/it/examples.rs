//! The examples, run by the tests (T247, T248, T250).

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
    assert_eq!(receipt.handoff, sms_sdk::Handoff::Accepted);
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
