//! The `metrics` feature: what a recorder sees for accepted, rejected, unknown and failed sends,
//! retries, failovers, replays and store calls, and that no label carries a number or a body.

use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use sms_sdk::metrics as names;
use sms_sdk::store::MemoryStore;
use sms_sdk::testing::{MemoryAdapter, RejectedOptions, rejected_outcome, unknown_outcome};
use sms_sdk::{Category, Client, Failover, Message, RetryPolicy, UnknownReason};

const TO: &str = "+14155550123";
const BODY: &str = "Your code is 480516";

/// Runs `work` on a current-thread runtime with a fresh recorder; returns every metric as
/// `name{label=value,…}` with its value (counters: the count; histograms: the sample count).
fn recorded(work: impl AsyncFnOnce()) -> Vec<(String, u64)> {
    let recorder = DebuggingRecorder::new();
    let snapshotter: Snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(work());
    });
    let mut metrics: Vec<(String, u64)> = snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let mut labels: Vec<String> = key.key().labels().map(|l| format!("{}={}", l.key(), l.value())).collect();
            labels.sort();
            let value = match value {
                DebugValue::Counter(n) => n,
                DebugValue::Histogram(samples) => samples.len() as u64,
                DebugValue::Gauge(_) => unreachable!("the SDK records no gauge"),
            };
            (format!("{}{{{}}}", key.key().name(), labels.join(",")), value)
        })
        .collect();
    metrics.sort();
    metrics
}

fn value(metrics: &[(String, u64)], series: &str) -> u64 {
    metrics.iter().find(|(name, _)| name == series).map_or(0, |(_, value)| *value)
}

fn client(adapters: Vec<MemoryAdapter>) -> Client {
    adapters
        .into_iter()
        .fold(Client::builder(), sms_sdk::ClientBuilder::adapter)
        .failover(Failover::OnEligibleRejection)
        .retry(RetryPolicy::new(2, Duration::from_millis(1), Duration::from_millis(2)))
        .timeout(Duration::from_millis(200))
        .idempotency(MemoryStore::new())
        .build()
        .unwrap()
}

#[test]
fn metrics_count_an_accepted_send_its_attempt_and_its_store_calls() {
    let metrics = recorded(async || {
        let client = client(vec![MemoryAdapter::builder().name("primary").build()]);
        client.send(&Message::new(TO, BODY).idempotency_key("order-1")).await.unwrap();
    });
    assert_eq!(value(&metrics, "sms_sdk_sends_total{outcome=accepted,provider=primary}"), 1, "{metrics:#?}");
    assert_eq!(value(&metrics, "sms_sdk_attempts_total{outcome=accepted,provider=primary}"), 1);
    assert_eq!(value(&metrics, "sms_sdk_attempt_duration_seconds{outcome=accepted,provider=primary}"), 1);
    assert_eq!(value(&metrics, "sms_sdk_store_operation_duration_seconds{operation=reserve,result=ok}"), 1);
    assert_eq!(value(&metrics, "sms_sdk_store_operation_duration_seconds{operation=finalize,result=ok}"), 1);
    assert!(metrics.iter().all(|(name, _)| !name.contains(names::STORE_ERRORS)));
}

#[test]
fn metrics_count_retries_failovers_and_replays() {
    let metrics = recorded(async || {
        let limited = rejected_outcome(Category::RateLimited, RejectedOptions::default());
        let primary = MemoryAdapter::builder().name("primary").outcomes([limited.clone(), limited]).build();
        let client = client(vec![primary, MemoryAdapter::builder().name("backup").build()]);
        let message = Message::new(TO, BODY).idempotency_key("order-2");
        assert_eq!(client.send(&message).await.unwrap().provider, "backup");
        assert!(client.send(&message).await.unwrap().replayed);
    });
    assert_eq!(value(&metrics, "sms_sdk_retries_total{provider=primary}"), 1, "{metrics:#?}");
    assert_eq!(value(&metrics, "sms_sdk_attempts_total{outcome=rejected,provider=primary}"), 2);
    assert_eq!(value(&metrics, "sms_sdk_failovers_total{from=primary,to=backup}"), 1);
    assert_eq!(value(&metrics, "sms_sdk_replays_total{}"), 1);
    assert_eq!(value(&metrics, "sms_sdk_sends_total{outcome=accepted,provider=backup}"), 2);
}

#[test]
fn metrics_label_rejections_by_category_unknowns_by_reason_and_failures_by_kind() {
    let metrics = recorded(async || {
        let auth = rejected_outcome(Category::Auth, RejectedOptions::default());
        let client_one = client(vec![MemoryAdapter::builder().name("solo").outcomes([auth]).build()]);
        client_one.send(&Message::new(TO, BODY)).await.unwrap_err();
        let unknown = unknown_outcome(UnknownReason::Network);
        let client_two = client(vec![MemoryAdapter::builder().name("solo").outcomes([unknown]).build()]);
        client_two.send(&Message::new(TO, BODY)).await.unwrap_err();
        client_two.send(&Message::new("not a number", BODY)).await.unwrap_err();
    });
    assert_eq!(value(&metrics, "sms_sdk_sends_total{category=auth,outcome=rejected,provider=solo}"), 1, "{metrics:#?}");
    assert_eq!(value(&metrics, "sms_sdk_sends_total{outcome=unknown,provider=solo,reason=network}"), 1);
    assert_eq!(value(&metrics, "sms_sdk_sends_total{kind=invalid_recipient,outcome=failed,provider=none}"), 1);
    for (series, _) in &metrics {
        assert!(!series.contains("4155550123") && !series.contains("480516"), "{series}");
    }
}

#[cfg(feature = "twilio")]
#[test]
fn metrics_count_webhook_verifications_by_provider_and_result() {
    use sms_sdk::TwilioWebhook;
    use sms_sdk::testing::webhooks::signed_twilio_request;
    use sms_sdk::webhook::WebhookVerifier;

    const URL: &str = "https://shop.example/sms/status";
    let params = [("MessageSid", "SM0123456789abcdef0123456789abcdef"), ("MessageStatus", "delivered")];
    let metrics = recorded(async || {
        let verifier = TwilioWebhook::new("webhook-token").unwrap();
        let good = signed_twilio_request("webhook-token", URL, &params);
        verifier.verify(&good.as_request()).unwrap();
        let forged = signed_twilio_request("another-token", URL, &params);
        verifier.verify(&forged.as_request()).unwrap_err();
    });
    assert_eq!(
        value(&metrics, "sms_sdk_webhook_verifications_total{provider=twilio,result=verified}"),
        1,
        "{metrics:#?}"
    );
    assert_eq!(value(&metrics, "sms_sdk_webhook_verifications_total{provider=twilio,result=invalid_signature}"), 1);
}

#[test]
fn metrics_record_each_queue_wait_and_label_a_queue_timeout() {
    let metrics = recorded(async || {
        let slow = sms_sdk::testing::MemoryOutcome::script(|_, _| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            sms_sdk::testing::accepted_outcome("slow-1")
        });
        let primary = MemoryAdapter::builder().name("primary").outcomes([slow]).build();
        let client = Client::builder()
            .adapter(primary)
            .max_in_flight(Some(1))
            .queue_timeout(Duration::from_millis(20))
            .build()
            .unwrap();
        let message = Message::new(TO, BODY);
        let (first, second) = tokio::join!(client.send(&message), client.send(&message));
        first.unwrap();
        assert_eq!(second.unwrap_err().code(), "queue_timeout");
    });
    // One wait of zero (a free slot) and one that ran out.
    assert_eq!(value(&metrics, "sms_sdk_queue_wait_seconds{provider=primary}"), 2, "{metrics:#?}");
    assert_eq!(value(&metrics, "sms_sdk_sends_total{kind=queue_timeout,outcome=failed,provider=none}"), 1);
    assert_eq!(names::QUEUE_WAIT, "sms_sdk_queue_wait_seconds");
}
