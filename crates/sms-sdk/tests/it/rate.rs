//! Rate limits (in process on tokio's paused clock, shared through Redis) and the batch API.
//! Assertions count requests per window; none measures how long anything took on a real clock.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use sms_sdk::adapter::{Adapter, AdapterInfo, Capabilities, Outcome, SendContext};
use sms_sdk::batch::{BatchOptions, RowOutcome as BatchOutcome, Summary};
use sms_sdk::rate::RateLimit;
use sms_sdk::store::MemoryStore;
use sms_sdk::{CancellationToken, Client, ErrorKind, Limit, Message, OutboundMessage, SendOptions};
use tokio::time::Instant;

/// An adapter that notes when each request starts (tokio's clock) and from which sender.
#[derive(Debug, Clone)]
struct Clocked {
    info: AdapterInfo,
    started: Arc<Mutex<Vec<(Instant, String)>>>,
    origin: Instant,
}

impl Clocked {
    fn new() -> Self {
        let info = AdapterInfo::new("clocked", Capabilities::default()).default_from("+15005550006");
        Self { info, started: Arc::default(), origin: Instant::now() }
    }

    /// How many requests started in each whole second since the adapter was made.
    fn per_second(&self) -> Vec<usize> {
        let started = self.started.lock().unwrap();
        let mut counts = Vec::new();
        for (at, _) in started.iter() {
            let second = usize::try_from(at.duration_since(self.origin).as_secs()).unwrap();
            if counts.len() <= second {
                counts.resize(second + 1, 0);
            }
            counts[second] += 1;
        }
        counts
    }

    fn senders(&self) -> Vec<String> {
        self.started.lock().unwrap().iter().map(|(_, from)| from.clone()).collect()
    }
}

impl Adapter for Clocked {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        self.started.lock().unwrap().push((Instant::now(), message.from.value.clone()));
        Outcome::accepted(format!("id-{}-{}", self.started.lock().unwrap().len(), cx.attempt))
    }
}

fn message(n: usize) -> Message {
    Message::new("+14155550123", format!("message {n}"))
}

#[tokio::test(start_paused = true)]
async fn rate_in_process_limit_holds_in_every_second() {
    let adapter = Clocked::new();
    let client =
        Client::builder().adapter(adapter.clone()).rate_limit(Some(RateLimit::per_second(10))).build().unwrap();
    let sends = (0..45).map(|n| {
        let client = client.clone();
        tokio::spawn(async move { client.send(&message(n)).await })
    });
    for send in sends.collect::<Vec<_>>() {
        send.await.unwrap().unwrap();
    }
    assert_eq!(adapter.per_second(), vec![10, 10, 10, 10, 5], "10 per second, never more, never a burst");
}

#[tokio::test(start_paused = true)]
async fn rate_burst_goes_at_once_then_the_steady_rate() {
    let adapter = Clocked::new();
    let limit = RateLimit::per_second(5).burst(8);
    let client = Client::builder().adapter(adapter.clone()).rate_limit(Some(limit)).build().unwrap();
    let messages: Vec<Message> = (0..18).map(message).collect();
    let sends: Vec<_> = messages.iter().map(|m| client.send(m)).collect();
    for result in futures_util::future::join_all(sends).await {
        result.unwrap();
    }
    // 8 at once, then one every 200 ms: 4 more in the rest of the first second (at 200–800 ms),
    // then 5 per second.
    assert_eq!(adapter.per_second(), vec![12, 5, 1]);
}

#[tokio::test(start_paused = true)]
async fn rate_wait_is_not_an_attempt_is_bounded_and_cancellable() {
    let adapter = Clocked::new();
    let client = Client::builder()
        .adapter(adapter.clone())
        .rate_limit(Some(RateLimit::new(1, Duration::from_mins(1))))
        .queue_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    client.send(&message(0)).await.unwrap();

    let error = client.send(&message(1)).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::QueueTimeout(Limit::Rate));
    assert!(error.attempts().is_empty(), "waiting is not an attempt");
    assert!(error.is_retry_safe());
    assert!(error.to_string().contains("rate limit of clocked (1 per 60s)"), "{error}");
    assert_eq!(error.to_record().limit, Some(Limit::Rate));

    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        stopper.cancel();
    });
    let error = client.send_with(&message(2), SendOptions::default().cancel(cancel)).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Aborted);
    assert!(error.attempts().is_empty());
    assert_eq!(adapter.per_second(), vec![1], "one request in all");
}

#[tokio::test(start_paused = true)]
async fn rate_per_sender_limit_spaces_each_sender_on_its_own() {
    let adapter = Clocked::new();
    let client = Client::builder()
        .adapter(adapter.clone())
        .sender_rate_limit(Some(RateLimit::per_second(1)))
        .queue_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let sends: Vec<_> = ["+15005550006", "+15005550007"]
        .iter()
        .flat_map(|from| (0..3).map(move |n| message(n).from(*from)))
        .map(|message| {
            let client = client.clone();
            tokio::spawn(async move { client.send(&message).await })
        })
        .collect();
    let mut errors = Vec::new();
    for send in sends {
        if let Err(error) = send.await.unwrap() {
            errors.push(error.kind());
        }
    }
    assert_eq!(adapter.per_second(), vec![2, 2, 2], "one per second per sender, two senders");
    assert!(errors.is_empty(), "{errors:?}");
    let mut senders = adapter.senders();
    senders.sort();
    assert_eq!(senders.iter().filter(|s| s.ends_with('6')).count(), 3);

    let client = Client::builder()
        .adapter(Clocked::new())
        .sender_rate_limit(Some(RateLimit::new(1, Duration::from_mins(1))))
        .queue_timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    client.send(&message(0)).await.unwrap();
    let error = client.send(&message(1)).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::QueueTimeout(Limit::SenderRate));
    assert!(error.to_string().contains("per-sender rate limit"), "{error}");
}

#[test]
fn rate_limits_are_checked_when_the_client_is_built() {
    let build = |limit: RateLimit| Client::builder().adapter(Clocked::new()).rate_limit(Some(limit)).build();
    assert_eq!(build(RateLimit::per_second(0)).unwrap_err().kind(), ErrorKind::Configuration);
    assert_eq!(build(RateLimit::per_second(1).burst(0)).unwrap_err().kind(), ErrorKind::Configuration);
    let unknown = Client::builder()
        .adapter(Clocked::new())
        .adapter_rate_limit("other", Some(RateLimit::per_second(1)))
        .build()
        .unwrap_err();
    assert!(unknown.to_string().contains("adapter_rate_limit names no configured adapter: other"), "{unknown}");
}

#[tokio::test(start_paused = true)]
async fn batch_sends_at_its_pace_with_bounded_concurrency_and_a_summary() {
    let adapter = Clocked::new();
    let client = Client::builder().adapter(adapter.clone()).idempotency(MemoryStore::new()).build().unwrap();
    let messages = || {
        futures_util::stream::iter((0..25).map(|n| {
            let message = if n == 7 { message(n) } else { message(n).idempotency_key(format!("k-{n}")) };
            (n, message)
        }))
    };
    let options = || BatchOptions::default().concurrency(4).unwrap().rate(RateLimit::per_second(10)).unwrap();
    let mut summary = Summary::default();
    let mut results = client.send_batch(messages(), options());
    let mut refused = None;
    while let Some(result) = results.next().await {
        if result.tag == 7 {
            refused = Some(result.result.as_ref().unwrap_err().kind());
        }
        summary.add(result.outcome());
    }
    assert_eq!(refused, Some(ErrorKind::InvalidMessage { field: sms_sdk::Field::IdempotencyKey }));
    assert_eq!((summary.accepted, summary.rejected, summary.total()), (24, 1, 25));
    assert_eq!(adapter.per_second(), vec![10, 10, 4], "the message without a key sent nothing");

    // Run again: everything accepted replays, no request.
    let mut again = Summary::default();
    let mut results = client.send_batch(messages(), options());
    while let Some(result) = results.next().await {
        again.add(result.outcome());
    }
    assert_eq!((again.replayed, again.rejected), (24, 1));
    assert_eq!(adapter.per_second().iter().sum::<usize>(), 24);
}

#[tokio::test(start_paused = true)]
async fn batch_stop_takes_no_more_messages_and_finishes_those_started() {
    let adapter = Clocked::new();
    let client = Client::builder().adapter(adapter.clone()).build().unwrap();
    let stop = CancellationToken::new();
    let messages = futures_util::stream::iter(0..1_000).map(|n| (n, message(n).idempotency_key(format!("s-{n}"))));
    let options =
        BatchOptions::default().concurrency(3).unwrap().rate(RateLimit::per_second(10)).unwrap().stop(stop.clone());
    let mut results = client.send_batch(messages, options);
    let mut outcomes = Vec::new();
    while let Some(result) = results.next().await {
        outcomes.push(result.outcome());
        if outcomes.len() == 5 {
            stop.cancel();
        }
    }
    assert!(outcomes.iter().all(|o| *o == BatchOutcome::Accepted));
    assert!(outcomes.len() < 10, "stopped taking messages: {}", outcomes.len());
    assert_eq!(adapter.per_second().iter().sum::<usize>(), outcomes.len(), "every started send finished");
}

#[cfg(feature = "redis")]
pub(crate) mod shared {
    use super::*;
    use sms_sdk::rate::Admit;
    use sms_sdk::rate::redis::RedisRateLimiter;

    async fn limiter() -> RedisRateLimiter {
        limiter_at(&crate::stores::server_url("SMS_SDK_TEST_REDIS_URL")).await
    }

    async fn limiter_at(url: &str) -> RedisRateLimiter {
        let prefix = format!("sms-sdk-test:rate:{}:", crate::stores::uuid_suffix());
        RedisRateLimiter::builder(url).prefix(prefix).connect().await.unwrap()
    }

    #[tokio::test]
    async fn rate_redis_script_admits_and_denies_at_given_times() {
        admits_and_denies_at_given_times(&crate::stores::server_url("SMS_SDK_TEST_REDIS_URL")).await;
    }

    /// The shared rate limit's suite, on the Redis (or cluster) at `url`.
    pub(crate) async fn admits_and_denies_at_given_times(url: &str) {
        let redis = limiter_at(url).await;
        let limit = RateLimit::per_second(10).burst(2);
        let at = |ms: u64| Some(ms * 1000 + 1_000_000_000);
        let ms = Duration::from_millis;
        assert_eq!(redis.admit_at("a", &limit, at(0)).await.unwrap(), Admit::Now);
        assert_eq!(redis.admit_at("a", &limit, at(0)).await.unwrap(), Admit::Now, "a burst of 2");
        assert_eq!(redis.admit_at("a", &limit, at(0)).await.unwrap(), Admit::After(ms(100)));
        assert_eq!(redis.admit_at("a", &limit, at(40)).await.unwrap(), Admit::After(ms(60)), "a denial takes nothing");
        assert_eq!(redis.admit_at("b", &limit, at(40)).await.unwrap(), Admit::Now, "buckets are apart");
        assert_eq!(redis.admit_at("a", &limit, at(100)).await.unwrap(), Admit::Now);
        assert_eq!(redis.admit_at("a", &limit, at(100)).await.unwrap(), Admit::After(ms(100)));
        assert_eq!(redis.admit_at("a", &limit, at(1_000)).await.unwrap(), Admit::Now, "replenished");
        assert_eq!(redis.admit_at("a", &limit, at(1_000)).await.unwrap(), Admit::Now);
        assert_eq!(redis.admit_at("a", &limit, at(1_000)).await.unwrap(), Admit::After(ms(100)));
    }

    /// Two clients sharing one limit through Redis: requests counted in every window starting at
    /// a request (real time, so a window may hold one more than the limit when two requests
    /// start late by different amounts; never the 30 that an unshared pair would send at once).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rate_redis_limit_is_shared_by_two_clients() {
        let redis: Arc<dyn sms_sdk::rate::SharedRateLimiter> = Arc::new(limiter().await);
        let adapter = Clocked::new();
        let client = || {
            Client::builder()
                .adapter(adapter.clone())
                .rate_limit(Some(RateLimit::per_second(20)))
                .shared_rate_limiter(Arc::clone(&redis))
                .build()
                .unwrap()
        };
        let (first, second) = (client(), client());
        let sends: Vec<_> = (0..30)
            .map(|n| {
                let client = if n % 2 == 0 { first.clone() } else { second.clone() };
                tokio::spawn(async move { client.send(&message(n)).await })
            })
            .collect();
        for send in sends {
            send.await.unwrap().unwrap();
        }
        let started: Vec<Instant> = adapter.started.lock().unwrap().iter().map(|(at, _)| *at).collect();
        assert_eq!(started.len(), 30);
        let most = started
            .iter()
            .map(|from| started.iter().filter(|at| **at >= *from && **at < *from + Duration::from_secs(1)).count())
            .max()
            .unwrap();
        assert!(most <= 21, "at most 20 requests (+1) in any second: {most}");
    }
}
