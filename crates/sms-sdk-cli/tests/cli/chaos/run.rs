//! Runs a plan: one emulator whose waits come from the plan, sixteen clients (each provider as
//! primary, with right or wrong credentials for it, patient or not) sharing one idempotency
//! store, and sixteen tasks sending every key once per run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sms_sdk::provider::sinch::Sinch;
use sms_sdk::store::{Operator as _, Record, Resolution, Store};
use sms_sdk::{Client, ClientBuilder, Error, Failover, Message, Plivo, Receipt, RetryPolicy, Telnyx, Twilio, Vonage};
use sms_sdk_emulator::credentials::{
    AWS_ACCESS_KEY_ID, AWS_REGION, BANDWIDTH_ACCOUNT_ID, BANDWIDTH_API_USER, BANDWIDTH_APPLICATION_ID, PLIVO_AUTH_ID,
    SINCH_SERVICE_PLAN_ID, TWILIO_ACCOUNT_SID, VONAGE_API_KEY,
};
use sms_sdk_emulator::{Emulator, Provider, ReceivedMessage, RunningEmulator};

use super::check::{Observed, Seen};
use super::plan::{KeyPlan, TASKS, TIMEOUT, chain, key_index};

/// The sender of every adapter.
const FROM: &str = "+15005550006";

/// What one send gave.
pub type SendResult = Result<Receipt, Error>;

/// The sends of one key in one run.
#[derive(Debug, Clone, Default)]
pub struct Sent {
    /// The key's send.
    pub result: Option<SendResult>,
    /// Its twin's (first run only).
    pub twin: Option<SendResult>,
}

/// What the two runs of a plan left behind.
pub struct Ran {
    /// The sends of run 0 and run 1, in key order.
    pub results: [Vec<Sent>; 2],
    /// The emulator's record of both runs.
    pub seen: Vec<Seen>,
    /// The store's record of each key afterwards.
    pub records: Vec<Option<Record>>,
    /// How long each run took.
    pub took: [Duration; 2],
}

impl Ran {
    /// The data the checker reads.
    pub fn observed<'a>(&'a self, plans: &'a [KeyPlan]) -> Observed<'a> {
        let [first, second] = &self.results;
        Observed { plans, results: [first, second], seen: &self.seen, records: &self.records }
    }
}

/// Sends every key of `plans` twice through the store at `url`, and reads back what the
/// emulator received and what the store holds. The keys left unknown are then removed from the
/// store (they never expire), so that a shared store server does not keep them.
pub async fn execute(url: &str, plans: &Arc<Vec<KeyPlan>>) -> Ran {
    let store = sms_sdk::store::open(url).await.expect("the store opens");
    let chaos = Chaos::start(plans, &store).await;
    let (first, first_took) = chaos.run(0, plans).await;
    let split = chaos.settled_record().await.len();
    let (second, second_took) = chaos.run(1, plans).await;
    let seen = Seen::from_record(&chaos.settled_record().await, split);
    let mut records = Vec::with_capacity(plans.len());
    for plan in plans.iter() {
        records.push(store.get(&plan.key).await.expect("the store answers"));
    }
    for plan in plans.iter() {
        let _ = store.resolve(&plan.key, Resolution::NotSent, Duration::ZERO, std::time::SystemTime::now()).await;
    }
    Ran { results: [first, second], seen, records, took: [first_took, second_took] }
}

/// The emulator of a chaos run, with the run its waits are drawn for.
struct Chaos {
    emulator: RunningEmulator,
    run: Arc<AtomicUsize>,
    clients: HashMap<(Provider, bool, bool), Client>,
}

impl Chaos {
    /// Starts the emulator (no webhooks, immediate status steps, waits from `plans`) and builds
    /// the clients on `store`.
    async fn start(plans: &Arc<Vec<KeyPlan>>, store: &Arc<dyn Store>) -> Self {
        let run = Arc::new(AtomicUsize::new(0));
        let (waits, current) = (Arc::clone(plans), Arc::clone(&run));
        let latency = move |request: &ReceivedMessage| {
            let plan = request.body.as_deref().and_then(key_index).and_then(|index| waits.get(index));
            plan.map_or(Duration::ZERO, |plan| plan.delay(current.load(Ordering::SeqCst), request.provider))
        };
        let emulator = Emulator::builder()
            .status_delay(Duration::ZERO)
            .max_messages(plans.len() * 10 + 1_000)
            .latency(latency)
            .start()
            .await
            .expect("the emulator starts");
        let mut clients = HashMap::new();
        for primary in Provider::ALL {
            for broken in [false, true] {
                for patient in [false, true] {
                    clients.insert((primary, broken, patient), client(&emulator, (primary, broken, patient), store));
                }
            }
        }
        Self { emulator, run, clients }
    }

    /// Sends every key of `plans` once (run 0, then run 1), from [`TASKS`] tasks, and in run 0
    /// the twins right after their key; the results in key order (each with its twin's, if
    /// any), and how long it took.
    async fn run(&self, number: usize, plans: &Arc<Vec<KeyPlan>>) -> (Vec<Sent>, Duration) {
        self.run.store(number, Ordering::SeqCst);
        let started = Instant::now();
        let work: Arc<Vec<(usize, bool)>> = Arc::new(
            plans
                .iter()
                .enumerate()
                .flat_map(|(index, plan)| {
                    let twin = (number == 0 && plan.twin.is_some()).then_some((index, true));
                    std::iter::once((index, false)).chain(twin)
                })
                .collect(),
        );
        let next = Arc::new(AtomicUsize::new(0));
        let results: Arc<Mutex<Vec<Sent>>> = Arc::new(Mutex::new(vec![Sent::default(); plans.len()]));
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..TASKS {
            let (next, results, plans, work) =
                (Arc::clone(&next), Arc::clone(&results), Arc::clone(plans), Arc::clone(&work));
            let clients = self.clients.clone();
            tasks.spawn(async move {
                while let Some(&(index, twin)) = work.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let plan = &plans[index];
                    let message =
                        Message::new(plan.fault.recipient(index), plan.body()).idempotency_key(plan.key.clone());
                    let client = &clients[&(plan.primary, plan.broken, plan.patient(twin))];
                    let result = Some(client.send(&message).await);
                    let mut results = results.lock().unwrap();
                    if twin { results[index].twin = result } else { results[index].result = result }
                }
            });
        }
        tasks.join_all().await;
        let results = std::mem::take(&mut *results.lock().unwrap());
        (results, started.elapsed())
    }

    /// Waits until the emulator's record has stopped growing (a request the client gave up on
    /// is listed when the emulator reads it), at most 5 s; the record.
    async fn settled_record(&self) -> Vec<ReceivedMessage> {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut record = self.emulator.messages();
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            let now = self.emulator.messages();
            if now.len() == record.len() || Instant::now() > deadline {
                return now;
            }
            record = now;
        }
    }
}

/// A client whose adapters follow `primary` in [`chain`] order, failover on, and the primary's
/// credentials wrong when `broken`. A rate limit is retried on the same adapter only by a
/// `patient` client: the emulator's `Retry-After: 1` is within its cap (1 s) and over the
/// others' (100 ms), which fail over at once.
fn client(
    emulator: &RunningEmulator,
    (primary, broken, patient): (Provider, bool, bool),
    store: &Arc<dyn Store>,
) -> Client {
    let cap = if patient { Duration::from_secs(1) } else { Duration::from_millis(100) };
    let mut builder = Client::builder()
        .failover(Failover::OnEligibleRejection)
        .retry(RetryPolicy::new(2, Duration::from_millis(10), cap))
        .timeout(TIMEOUT)
        .idempotency(Arc::clone(store))
        .idempotency_ttl(Duration::from_hours(1));
    for (position, provider) in chain(primary).into_iter().enumerate() {
        builder = adapter(builder, emulator, provider, broken && position == 0);
    }
    builder.build().expect("the client builds")
}

/// Adds `provider`'s adapter on the emulator, with a wrong secret when `wrong`.
fn adapter(builder: ClientBuilder, emulator: &RunningEmulator, provider: Provider, wrong: bool) -> ClientBuilder {
    let base = emulator.base_url();
    match (provider, wrong) {
        (Provider::Twilio, false) => builder.adapter(emulator.twilio().from(FROM).build().unwrap()),
        (Provider::Twilio, true) => builder
            .adapter(Twilio::builder(TWILIO_ACCOUNT_SID, "wrong-token").base_url(base).from(FROM).build().unwrap()),
        (Provider::Telnyx, false) => builder.adapter(emulator.telnyx().from(FROM).build().unwrap()),
        (Provider::Telnyx, true) => {
            builder.adapter(Telnyx::builder("KEY_wrong").base_url(base).from(FROM).build().unwrap())
        }
        (Provider::Plivo, false) => builder.adapter(emulator.plivo().from(FROM).build().unwrap()),
        (Provider::Plivo, true) => {
            builder.adapter(Plivo::builder(PLIVO_AUTH_ID, "wrong-token").base_url(base).from(FROM).build().unwrap())
        }
        (Provider::Vonage, false) => builder.adapter(emulator.vonage().from(FROM).build().unwrap()),
        (Provider::Vonage, true) => {
            builder.adapter(Vonage::basic(VONAGE_API_KEY, "wrong-secret").base_url(base).from(FROM).build().unwrap())
        }
        (Provider::Sinch, false) => builder.adapter(emulator.sinch().from(FROM).build().unwrap()),
        (Provider::Sinch, true) => builder
            .adapter(Sinch::builder(SINCH_SERVICE_PLAN_ID, "wrong-token").base_url(base).from(FROM).build().unwrap()),
        (Provider::Infobip, false) => builder.adapter(emulator.infobip().from(FROM).build().unwrap()),
        (Provider::Infobip, true) => {
            builder.adapter(sms_sdk::provider::infobip::Infobip::builder(base, "wrong-key").from(FROM).build().unwrap())
        }
        (Provider::Bandwidth, false) => builder.adapter(emulator.bandwidth().from(FROM).build().unwrap()),
        (Provider::Bandwidth, true) => {
            let bandwidth = sms_sdk::provider::bandwidth::Bandwidth::basic(
                BANDWIDTH_ACCOUNT_ID,
                BANDWIDTH_APPLICATION_ID,
                BANDWIDTH_API_USER,
                "wrong-password",
            );
            builder.adapter(bandwidth.base_url(base).from(FROM).build().unwrap())
        }
        (Provider::Aws, false) => builder.adapter(emulator.aws().from(FROM).build().unwrap()),
        (Provider::Aws, true) => {
            let credentials = sms_sdk::provider::aws::AwsCredentials::new(AWS_ACCESS_KEY_ID, "wrong-secret");
            let aws = sms_sdk::provider::aws::Aws::builder(AWS_REGION, credentials).base_url(base).from(FROM);
            builder.adapter(aws.build().unwrap())
        }
    }
}
