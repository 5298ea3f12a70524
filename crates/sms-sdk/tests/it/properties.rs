//! No panic on any input through the public builders and pure functions: random durations,
//! timestamps, strings and bytes.

use std::time::{Duration, SystemTime};

use proptest::prelude::*;
use sms_sdk::retry::{RetryPolicy, parse_retry_after};
use sms_sdk::store::MemoryStore;
use sms_sdk::testing::MemoryAdapter;
use sms_sdk::{Client, ErrorKind, Message};
use time::{OffsetDateTime, UtcOffset};

/// Any duration, weighted towards the edges.
fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::ZERO),
        Just(Duration::MAX),
        (0u64..10_000).prop_map(Duration::from_millis),
        (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

/// Any time `OffsetDateTime` can hold, at any offset.
fn timestamp() -> impl Strategy<Value = OffsetDateTime> {
    let min = OffsetDateTime::new_utc(time::Date::MIN, time::Time::MIDNIGHT).unix_timestamp();
    let max = OffsetDateTime::new_utc(time::Date::MAX, time::Time::MIDNIGHT).unix_timestamp();
    (min..=max, -86_399i32..=86_399).prop_map(|(ts, offset)| {
        let utc = OffsetDateTime::from_unix_timestamp(ts).unwrap();
        let offset = UtcOffset::from_whole_seconds(offset).unwrap();
        utc.checked_to_offset(offset).unwrap_or(utc)
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::prop_cases(256)))]

    #[test]
    fn prop_any_client_durations_build_or_refuse_and_never_panic_a_send(
        timeout in duration(),
        ttl in duration(),
        stale in duration(),
        base in duration(),
        max in duration(),
        attempts in any::<u32>(),
    ) {
        let memory = MemoryAdapter::new();
        let built = Client::builder()
            .adapter(memory.clone())
            .idempotency(MemoryStore::new())
            .timeout(timeout)
            .idempotency_ttl(ttl)
            .stale_reservation(stale)
            .retry(RetryPolicy::new(attempts, base, max))
            .build();
        match built {
            Err(error) => prop_assert_eq!(error.kind(), ErrorKind::Configuration),
            Ok(client) => {
                let message = Message::new("+14155550123", "Hi").idempotency_key("k");
                runtime().block_on(async {
                    let first = client.send(&message).await.unwrap();
                    let second = client.send(&message).await.unwrap();
                    // A record lives for its TTL: a second send within it replays the first.
                    if ttl >= Duration::from_mins(1) {
                        assert!(second.replayed && second.provider_id == first.provider_id);
                    }
                });
            }
        }
    }

    #[test]
    fn prop_any_send_time_validates_sends_or_refuses_without_panic(at in timestamp()) {
        let client = Client::builder().adapter(MemoryAdapter::new()).build().unwrap();
        let message = Message::new("+14155550123", "Hi").send_at(at).idempotency_key("k");
        let _ = client.validate(&message);
        let _ = sms_sdk::store::Fingerprint::of(&message, &["memory"]);
        let _ = runtime().block_on(client.send(&message));
        let _ = sms_sdk::message::format_timestamp(at);
    }

    #[test]
    fn prop_any_send_at_text_parses_or_is_an_invalid_message(text in "\\PC{0,40}|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{8,12}([+-][0-9]{2}:[0-9]{2}|Z)") {
        if let Err(error) = Message::parse_send_at(&text) {
            let invalid = matches!(error.kind(), ErrorKind::InvalidMessage { .. });
            prop_assert!(invalid, "{:?}", error);
        }
    }

    #[test]
    fn prop_retry_decisions_and_retry_after_never_panic(
        attempt in any::<u32>(),
        attempts in any::<u32>(),
        base in duration(),
        max in duration(),
        retry_after in proptest::option::of(duration()),
        jitter in proptest::num::f64::ANY,
        header in "\\PC{0,40}|[0-9]{1,30}",
        now_secs in any::<u32>(),
    ) {
        let _ = RetryPolicy::new(attempts, base, max).decide(attempt, retry_after, jitter);
        let _ = parse_retry_after(Some(&header), SystemTime::UNIX_EPOCH + Duration::from_secs(now_secs.into()));
    }
}

#[cfg(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage"))]
mod providers {
    use http::{HeaderMap, HeaderValue};
    use proptest::prelude::*;
    use sms_sdk::provider::{plivo, telnyx, twilio, vonage};
    use sms_sdk::{Plivo, Telnyx, Twilio, Vonage};

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::prop_cases(256)))]

        #[test]
        fn prop_any_response_is_interpreted_without_panic(
            status in any::<u16>(),
            body in proptest::collection::vec(any::<u8>(), 0..512),
            json in "\\{\"(code|message|errors|detail|title|type|sid|status|message_uuid|data|error|api_id)\": ?(-?[0-9]{1,25}|\"\\PC{0,20}\"|\\[\\{\"code\": ?\"?[0-9a-z]{0,10}\"?\\}\\]|null|true|\\{\\})\\}",
            retry_after in "\\PC{0,30}",
            now_secs in any::<u32>(),
        ) {
            let mut headers = HeaderMap::new();
            if let Ok(value) = HeaderValue::from_str(&retry_after) {
                headers.insert("retry-after", value);
            }
            let now = SystemTime::UNIX_EPOCH + Duration::from_secs(now_secs.into());
            for body in [&body[..], json.as_bytes()] {
                let _ = twilio::__private::interpret(status, &headers, body, now);
                let _ = telnyx::__private::interpret(status, &headers, body, now);
                let _ = plivo::__private::interpret(status, &headers, body, now);
                let _ = vonage::__private::interpret(status, &headers, body, now);
            }
        }

        #[test]
        fn prop_any_credentials_build_or_refuse_and_never_show_in_debug(
            id in "\\PC{0,40}",
            secret in "[ -~\\n\\t\u{80}-\u{10ffff}]{0,40}",
            base in "\\PC{0,40}|https?://[a-z0-9.:@\\[\\]]{0,30}(/[a-z]{0,5})?",
        ) {
            let built = [
                Twilio::builder(id.clone(), secret.clone()).base_url(base.clone()).build().map(|a| format!("{a:?}")),
                Twilio::with_api_key(id.clone(), id.clone(), secret.clone()).build().map(|a| format!("{a:?}")),
                Telnyx::builder(secret.clone()).base_url(base.clone()).build().map(|a| format!("{a:?}")),
                Plivo::builder(id.clone(), secret.clone()).base_url(base.clone()).build().map(|a| format!("{a:?}")),
                Vonage::basic(id.clone(), secret.clone()).base_url(base.clone()).build().map(|a| format!("{a:?}")),
                Vonage::application(id.clone(), secret.clone()).build().map(|a| format!("{a:?}")),
            ];
            for result in built {
                let text = match result {
                    Ok(debug) => debug,
                    Err(error) => {
                        prop_assert_eq!(error.kind(), ErrorKind::Configuration);
                        format!("{error} {error:?}")
                    }
                };
                if secret.len() >= 6 {
                    prop_assert!(!text.contains(&secret), "{}", text);
                }
            }
        }
    }
}

#[test]
fn a_send_time_past_year_9999_in_utc_is_refused_not_a_panic() {
    let late = OffsetDateTime::new_in_offset(
        time::Date::MAX,
        time::Time::from_hms(23, 0, 0).unwrap(),
        UtcOffset::from_hms(-5, 0, 0).unwrap(),
    );
    let client = Client::builder().adapter(MemoryAdapter::new()).build().unwrap();
    let message = Message::new("+14155550123", "Hi").send_at(late);
    assert!(!client.validate(&message).supported);
    let error = runtime().block_on(client.send(&message)).unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::InvalidMessage { .. }), "{error:?}");
    assert!(Message::parse_send_at("9999-12-31T23:00:00-05:00").is_err());
    assert!(Message::parse_send_at("9999-12-31T23:00:00+05:00").is_ok());
}
