//! The suppression list: every backend passes the contract; the policy refuses before any
//! request as a compliance rejection (with a logged override); the feeder turns verified webhook
//! events into ordered, replay-safe changes.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use sms_sdk::store::StoreError;
use sms_sdk::store::suppression::{
    self, Applied, Change, MemorySuppressionStore, Scope, SuppressionEntry, SuppressionListing, SuppressionPage,
    SuppressionStore,
};
use sms_sdk::suppression::SuppressionPolicy;
use sms_sdk::testing::{MemoryAdapter, suppression_contract};
use sms_sdk::{Category, Client, ErrorKind, Failover, Message, PhoneNumber, SendOptions};

use crate::{TO, named};

async fn assert_contract(name: &str, store: Arc<dyn SuppressionStore>) {
    let report = suppression_contract::run(name, store).await;
    assert!(report.passed, "{}", report.failures());
}

async fn opted_out(list: &MemorySuppressionStore, scope: Scope) {
    let change = Change::opt_out(PhoneNumber::parse(TO).unwrap(), scope, SystemTime::now(), "keyword:STOP");
    assert_eq!(list.apply(&[change], SystemTime::now()).await.unwrap(), [Applied::Recorded]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_memory_store_passes_the_contract() {
    assert_contract("memory", Arc::new(MemorySuppressionStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_stores_open_from_urls() {
    assert_contract("memory (url)", suppression::open("memory").await.unwrap()).await;
    assert!(suppression::open("ftp://x").await.is_err());
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_sqlite_store_passes_the_contract() {
    use sms_sdk::store::sqlite::SqliteStore;
    use sms_sdk::store::suppression::SqliteSuppressionStore;

    let path = crate::stores::temp_db();
    let list = SqliteSuppressionStore::open(SqliteStore::open(&path).await.unwrap()).await.unwrap();
    assert_contract("sqlite", Arc::new(list)).await;
    // The same file through a URL, as the command opens it: the entries are there.
    let again = suppression::open(&format!("sqlite:{}", path.display())).await.unwrap();
    assert!(!again.list(SuppressionPage::first(1)).await.unwrap().entries.is_empty());
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_postgres_store_passes_the_contract() {
    use sms_sdk::store::postgres::PostgresStore;
    use sms_sdk::store::suppression::PostgresSuppressionStore;

    let url = crate::stores::server_url("SMS_SDK_TEST_POSTGRES_URL");
    let store = PostgresStore::connect(&url).await.unwrap();
    assert_contract("postgres", Arc::new(PostgresSuppressionStore::open(store.clone()).await.unwrap())).await;
    let named = PostgresSuppressionStore::open_named(store.clone(), "sms_suppression_contract").await.unwrap();
    assert_contract("postgres (named table)", Arc::new(named)).await;
    assert!(PostgresSuppressionStore::open_named(store, "bad name").await.is_err());
    assert_contract("postgres (url)", suppression::open(&url).await.unwrap()).await;
}

/// PgBouncer 1.18 in transaction pooling mode has no prepared statements: with the statement
/// cache off, the list runs there too.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_postgres_store_passes_the_contract_through_pgbouncer() {
    let store = suppression::open(&crate::stores::pgbouncer_url()).await.unwrap();
    assert_contract("postgres through PgBouncer", store).await;
}

#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_redis_store_passes_the_contract() {
    use sms_sdk::store::redis::RedisStore;
    use sms_sdk::store::suppression::RedisSuppressionStore;

    let url = crate::stores::server_url("SMS_SDK_TEST_REDIS_URL");
    let prefix = format!("sms-sdk-test:suppression:{}:", crate::stores::uuid_suffix());
    let store = RedisStore::builder(&url).prefix(prefix).connect().await.unwrap();
    assert_contract("redis", Arc::new(RedisSuppressionStore::new(store))).await;
    assert_contract("redis (url)", suppression::open(&url).await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_policy_refuses_before_any_request_as_a_compliance_rejection() {
    let list = MemorySuppressionStore::new();
    opted_out(&list, Scope::Account).await;
    let (first, second) = (named("first"), named("second"));
    let client = Client::builder()
        .adapter(first.clone())
        .adapter(second.clone())
        .failover(Failover::OnEligibleRejection)
        .policy(SuppressionPolicy::new(list.clone()))
        .build()
        .unwrap();
    let err = client.send(&Message::new(TO, "Sale!")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PolicyRejected);
    assert_eq!(err.code(), "policy_rejected");
    assert_eq!(err.category(), Some(Category::Compliance));
    assert!(err.is_retry_safe() && !err.allows_failover() && err.attempts().is_empty());
    assert!(first.sent().is_empty() && second.sent().is_empty(), "a request was made");
    let shown = format!("{err} {err:?} {}", serde_json::to_string(&err.to_record()).unwrap());
    assert!(!shown.contains(TO) && shown.contains("compliance"), "{shown}");
    assert!(err.policy_reason().is_some_and(|r| r.contains("opted out") && !r.contains(TO)));

    // Another recipient goes out.
    client.send(&Message::new("+14155550124", "Sale!")).await.unwrap();
    assert_eq!(first.sent().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_policy_checks_the_sender_scope_and_the_default_sender() {
    let list = MemorySuppressionStore::new();
    opted_out(&list, Scope::Sender("+15005550006".into())).await;
    let memory = MemoryAdapter::new();
    let policy = SuppressionPolicy::new(list).default_sender("+15005550006");
    let client = Client::builder().adapter(memory.clone()).policy(policy.clone()).build().unwrap();
    let from_other = Message::new(TO, "hi").from("+15005550007");
    client.send(&from_other).await.unwrap();
    let from_stopped = Message::new(TO, "hi").from("+15005550006");
    assert_eq!(client.send(&from_stopped).await.unwrap_err().category(), Some(Category::Compliance));
    assert_eq!(client.send(&Message::new(TO, "hi")).await.unwrap_err().kind(), ErrorKind::PolicyRejected);
    let service = Message::new(TO, "hi").from(sms_sdk::Sender::messaging_service("MG1"));
    assert_eq!(policy.scopes(&service), [Scope::Account, Scope::Service("MG1".into())]);
    assert_eq!(memory.sent().len(), 1);
}

/// Log lines, captured.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn suppression_override_sends_once_and_is_logged_masked() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt().with_writer(move || writer.clone()).with_ansi(false).finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let list = MemorySuppressionStore::new();
    opted_out(&list, Scope::Account).await;
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).policy(SuppressionPolicy::new(list)).build().unwrap();
    let confirmation = Message::new(TO, "You are unsubscribed.");
    client.send_with(&confirmation, SendOptions::default().policy_override("STOP confirmation")).await.unwrap();
    assert_eq!(memory.sent().len(), 1);
    assert_eq!(client.send(&confirmation).await.unwrap_err().kind(), ErrorKind::PolicyRejected);
    assert_eq!(memory.sent().len(), 1, "the override held for one message only");

    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let line = logs.lines().find(|l| l.contains("overrode the suppression policy")).expect(&logs);
    assert!(line.contains("WARN") && line.contains("STOP confirmation") && line.contains("scope=account"), "{line}");
    assert!(line.contains("+1********23") && !logs.contains(TO), "{logs}");
}

/// A suppression list whose server is gone.
#[derive(Debug)]
struct Unreachable;

impl SuppressionStore for Unreachable {
    fn apply<'a>(&'a self, _: &'a [Change], _: SystemTime) -> sms_sdk::BoxFuture<'a, Result<Vec<Applied>, StoreError>> {
        Box::pin(async { Err(StoreError::new("connection refused")) })
    }
    fn check<'a>(
        &'a self,
        _: &'a PhoneNumber,
        _: &'a [Scope],
    ) -> sms_sdk::BoxFuture<'a, Result<Option<SuppressionEntry>, StoreError>> {
        Box::pin(async { Err(StoreError::new("connection refused")) })
    }
    fn list(&self, _: SuppressionPage) -> sms_sdk::BoxFuture<'_, Result<SuppressionListing, StoreError>> {
        Box::pin(async { Err(StoreError::new("connection refused")) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_store_failure_stops_the_send() {
    let memory = MemoryAdapter::new();
    let client = Client::builder().adapter(memory.clone()).policy(SuppressionPolicy::new(Unreachable)).build().unwrap();
    let err = client.send(&Message::new(TO, "hi")).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BeforeSend);
    assert!(err.is_retry_safe());
    assert!(memory.sent().is_empty());
}

#[cfg(feature = "twilio")]
mod feeding {
    use std::time::Duration;

    use sms_sdk::TwilioWebhook;
    use sms_sdk::store::suppression::Action;
    use sms_sdk::suppression::{Fed, Feeder, ScopeRule};
    use sms_sdk::testing::webhooks::signed_twilio_request;
    use sms_sdk::webhook::{SmsEvent, WebhookVerifier};

    use super::*;

    const URL: &str = "https://example.com/sms/inbound";

    fn inbound(sid: &str, body: &str, extra: &[(&str, &str)]) -> SmsEvent {
        let mut params = vec![("MessageSid", sid), ("From", TO), ("To", "+15005550006"), ("Body", body)];
        params.extend_from_slice(extra);
        let request = signed_twilio_request("token", URL, &params);
        TwilioWebhook::new("token").unwrap().verify(&request.as_request()).unwrap()
    }

    fn applied(action: Action, applied: Applied) -> Fed {
        Fed::Applied { action, applied }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn suppression_feeder_follows_stop_start_and_replays() {
        let list = MemorySuppressionStore::new();
        let feeder = Feeder::new(list.clone()).scope(ScopeRule::Sender);
        let number = PhoneNumber::parse(TO).unwrap();
        let sender = [Scope::Sender("+15005550006".into())];
        let t0 = SystemTime::now();
        let stop = inbound("SM1", " Stop! ", &[]);
        assert_eq!(feeder.feed(&stop, t0).await.unwrap(), applied(Action::OptOut, Applied::Recorded));
        let entry = list.check(&number, &sender).await.unwrap().unwrap();
        assert_eq!((entry.reason.as_str(), entry.event.as_deref()), ("keyword:STOP", Some("twilio:SM1:received")));
        assert!(list.check(&number, &[Scope::Account]).await.unwrap().is_none(), "scoped to the sender");

        let t1 = t0 + Duration::from_mins(1);
        let start = inbound("SM2", "start", &[]);
        assert_eq!(feeder.feed(&start, t1).await.unwrap(), applied(Action::OptIn, Applied::Recorded));
        assert!(list.check(&number, &sender).await.unwrap().is_none());
        // The STOP delivered again, later: its dedupe key was seen, nothing changes.
        let t2 = t1 + Duration::from_mins(1);
        assert_eq!(feeder.feed(&stop, t2).await.unwrap(), applied(Action::OptOut, Applied::Replayed));
        assert!(list.check(&number, &sender).await.unwrap().is_none());

        // HELP, plain text and statuses change nothing; a provider signal opts in or out.
        for ignored in [inbound("SM3", "HELP", &[]), inbound("SM4", "please start", &[])] {
            assert_eq!(feeder.feed(&ignored, t2).await.unwrap(), Fed::Ignored);
        }
        let signal = inbound("SM5", "no more", &[("OptOutType", "STOP")]);
        assert_eq!(feeder.feed(&signal, t2).await.unwrap(), applied(Action::OptOut, Applied::Recorded));
        assert_eq!(list.check(&number, &sender).await.unwrap().unwrap().reason, "provider:STOP");
        let off = Feeder::new(list.clone()).scope(ScopeRule::Sender).opt_in_keywords(false);
        assert_eq!(off.feed(&inbound("SM6", "START", &[]), t2).await.unwrap(), Fed::Ignored);
    }

    #[test]
    fn suppression_feeder_scopes_by_rule() {
        let now = SystemTime::now();
        let event = inbound("SM1", "STOP", &[("MessagingServiceSid", "MG9")]);
        let scope =
            |rule| Feeder::new(MemorySuppressionStore::new()).scope(rule).change(&event, now).unwrap().scope().clone();
        assert_eq!(scope(ScopeRule::Sender), Scope::Sender("+15005550006".into()));
        assert_eq!(scope(ScopeRule::Service), Scope::Service("MG9".into()));
        assert_eq!(scope(ScopeRule::Account), Scope::Account);
        let change = Feeder::new(MemorySuppressionStore::new()).change(&event, now).unwrap();
        assert_eq!(
            (change.at(), change.event_key()),
            (Change::opt_out(change.recipient().clone(), Scope::Account, now, "").at(), Some("twilio:SM1:received"))
        );
    }
}
