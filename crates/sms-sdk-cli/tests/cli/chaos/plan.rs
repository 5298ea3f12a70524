//! The seeded plan of a chaos run: for every key, the fault its recipient triggers, the client
//! it is sent through (primary adapter, wrong credentials for it or not, patient or not),
//! whether a twin send follows it, and the emulator's wait before each answer; and the table of
//! what each fault must give each provider's adapter ([`Fault::expected`]).

use std::time::Duration;

use sms_sdk::{Category, UnknownReason};
use sms_sdk_emulator::{Provider, magic};

/// The default seed; `SMS_SDK_CHAOS_SEED` replaces it.
pub const DEFAULT_SEED: u64 = 0x5EED_C4A0_5000;
/// The default number of keys (sends per run); `SMS_SDK_LONG=1` multiplies it by 10.
pub const DEFAULT_SENDS: usize = 5_000;
/// Concurrent sending tasks.
pub const TASKS: usize = 16;
/// The client's per-request timeout.
pub const TIMEOUT: Duration = Duration::from_millis(250);
/// Emulator waits are drawn in `TIMEOUT / 2 ..= TIMEOUT * 3 / 2`.
pub const DELAY_MIN: Duration = Duration::from_millis(125);
/// See [`DELAY_MIN`].
pub const DELAY_MAX: Duration = Duration::from_millis(375);
/// Within this distance of the timeout, either the answer or the timeout may win; farther
/// below it the answer must win (unless the machine stalls, counted apart), farther above it
/// the timeout must.
pub const MARGIN: Duration = Duration::from_millis(75);
/// The share of requests (per key, run and provider) the emulator answers late, in percent.
const DELAYED_PERCENT: u32 = 12;
/// The share of keys sent through a client whose primary adapter has wrong credentials.
const BROKEN_PERCENT: u32 = 10;
/// The share of keys sent through a patient client, which waits out a `Retry-After: 1` and
/// sends again on the same adapter (the others fail over at once).
const PATIENT_PERCENT: u32 = 5;
/// The share of keys sent twice at once in the first run (a twin send).
const TWIN_PERCENT: u32 = 5;
/// The share of keys sent to an ordinary (delivered) number; the rest is spread evenly over the
/// fourteen magic faults.
const ORDINARY_PERCENT: u32 = 30;

/// What a key's recipient makes the emulator do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fault {
    /// An ordinary number: accepted and delivered.
    None,
    InvalidNumber,
    SenderCannotRoute,
    NoPermission,
    OptedOut,
    CannotReceive,
    Undelivered,
    ServerError,
    NeverAnswers,
    Reset,
    RateLimitedOnce,
    AlwaysRateLimited,
    Bare429,
    Unreadable2xx,
    CreatedThenDropped,
}

impl Fault {
    /// Every magic fault (without [`Fault::None`]).
    pub const MAGIC: [Self; 14] = [
        Self::InvalidNumber,
        Self::SenderCannotRoute,
        Self::NoPermission,
        Self::OptedOut,
        Self::CannotReceive,
        Self::Undelivered,
        Self::ServerError,
        Self::NeverAnswers,
        Self::Reset,
        Self::RateLimitedOnce,
        Self::AlwaysRateLimited,
        Self::Bare429,
        Self::Unreadable2xx,
        Self::CreatedThenDropped,
    ];

    /// The recipient of key number `index`: the magic number, or an ordinary one of its own.
    pub fn recipient(self, index: usize) -> String {
        let magic = match self {
            Self::None => return format!("+1415{:07}", index % 10_000_000),
            Self::InvalidNumber => magic::INVALID_NUMBER,
            Self::SenderCannotRoute => magic::SENDER_CANNOT_ROUTE,
            Self::NoPermission => magic::NO_PERMISSION,
            Self::OptedOut => magic::OPTED_OUT,
            Self::CannotReceive => magic::CANNOT_RECEIVE,
            Self::Undelivered => magic::UNDELIVERED,
            Self::ServerError => magic::SERVER_ERROR,
            Self::NeverAnswers => magic::HOLD,
            Self::Reset => magic::RESET,
            Self::RateLimitedOnce => magic::RATE_LIMITED_ONCE,
            Self::AlwaysRateLimited => magic::RATE_LIMITED,
            Self::Bare429 => magic::BARE_429,
            Self::Unreadable2xx => magic::UNREADABLE,
            Self::CreatedThenDropped => magic::CREATED_THEN_DROPPED,
        };
        magic.to_owned()
    }

    /// What an authenticated request to `provider` must give. `earlier` is how many
    /// authenticated requests of the same key already reached that provider (the emulator's
    /// rate-limited-once state flips with each of them).
    pub fn expected(self, provider: Provider, earlier: usize) -> Expect {
        // Plivo documents no error codes (the emulator answers its generic 400) and Sinch answers
        // what it cannot take with a 400 syntax error: a `request` rejection for every magic one.
        // Infobip has no compliance status (an opt-out is a `request` rejection there), and
        // Bandwidth says a country it may not reach with a 403 (`auth`) and an opt-out with a
        // validation error on `to` (`recipient`): the emulator answers as each documents.
        let rejected = |category| match (provider, category) {
            (Provider::Plivo | Provider::Sinch, _) | (Provider::Infobip, Category::Compliance) => {
                Expect::Rejected(Category::Request)
            }
            (Provider::Bandwidth, Category::Account) => Expect::Rejected(Category::Auth),
            (Provider::Bandwidth, Category::Compliance) => Expect::Rejected(Category::Recipient),
            _ => Expect::Rejected(category),
        };
        match self {
            Self::None | Self::Undelivered => Expect::Accepted,
            Self::InvalidNumber | Self::CannotReceive => rejected(Category::Recipient),
            Self::SenderCannotRoute => rejected(Category::Sender),
            Self::NoPermission => rejected(Category::Account),
            Self::OptedOut => rejected(Category::Compliance),
            Self::ServerError => Expect::Unknown(UnknownReason::ServerError),
            Self::NeverAnswers => Expect::Unknown(UnknownReason::Timeout),
            Self::Reset | Self::CreatedThenDropped => Expect::Unknown(UnknownReason::Network),
            Self::RateLimitedOnce if earlier % 2 == 1 => Expect::Accepted,
            Self::RateLimitedOnce | Self::AlwaysRateLimited => Expect::Rejected(Category::RateLimited),
            // Sinch documents its 429 by the status alone.
            Self::Bare429 if matches!(provider, Provider::Sinch | Provider::Bandwidth) => {
                Expect::Rejected(Category::RateLimited)
            }
            Self::Bare429 => Expect::Unknown(UnknownReason::UnexpectedStatus),
            Self::Unreadable2xx => Expect::Unknown(UnknownReason::MalformedResponse),
        }
    }
}

/// What one request proves, as the library reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expect {
    Accepted,
    Rejected(Category),
    Unknown(UnknownReason),
}

/// How a twin send is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Twin {
    /// Through the key's own client.
    SameClient,
    /// Through the client that differs only in patience.
    OtherClient,
}

/// The plan of one key.
#[derive(Debug, Clone)]
pub struct KeyPlan {
    /// The idempotency key (also the end of the body, so the emulator's record names it).
    pub key: String,
    /// What the recipient triggers.
    pub fault: Fault,
    /// The client's primary adapter; the others follow in the order of [`Provider::ALL`].
    pub primary: Provider,
    /// True when the primary adapter's credentials are wrong (an `auth` rejection, then failover).
    pub broken: bool,
    /// True when the client retries a rate limit once on the same adapter after its
    /// `Retry-After` (1 s); such keys are never always rate-limited (4 s of waits per send).
    pub patient: bool,
    /// A second send of the key in the first run, started right after the first one: through
    /// the same client (`Twin::SameClient`, coalesced in process) or through the client that
    /// differs only in patience (`Twin::OtherClient`, which only the store keeps apart).
    pub twin: Option<Twin>,
    /// The emulator's wait before answering, per run and provider (zero for most).
    delays: [[Duration; 4]; 2],
}

impl KeyPlan {
    /// The message body: it names the key.
    pub fn body(&self) -> String {
        format!("chaos {}", self.key)
    }

    /// The emulator's wait before answering this key's request to `provider` in `run` (0 or 1).
    pub fn delay(&self, run: usize, provider: Provider) -> Duration {
        self.delays.get(run).and_then(|d| d.get(index_of(provider))).copied().unwrap_or_default()
    }

    /// Whether the send is made by a patient client: the key's own, or for a twin through the
    /// other client, the opposite.
    pub fn patient(&self, twin: bool) -> bool {
        self.patient != (twin && self.twin == Some(Twin::OtherClient))
    }

    /// The adapters this key's client tries, in order.
    pub fn chain(&self) -> [Provider; 4] {
        chain(self.primary)
    }
}

/// The failover order of a client whose primary is `primary`: the four providers, rotated.
pub fn chain(primary: Provider) -> [Provider; 4] {
    let start = index_of(primary);
    std::array::from_fn(|i| Provider::ALL[(start + i) % 4])
}

fn index_of(provider: Provider) -> usize {
    Provider::ALL.iter().position(|p| *p == provider).unwrap_or_default()
}

/// The index of the key that ends `body` (`chaos <prefix>-<index>`).
pub fn key_index(body: &str) -> Option<usize> {
    body.strip_prefix("chaos ")?.rsplit_once('-')?.1.parse().ok()
}

/// The seed: `SMS_SDK_CHAOS_SEED`, or [`DEFAULT_SEED`].
pub fn seed() -> u64 {
    std::env::var("SMS_SDK_CHAOS_SEED").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(DEFAULT_SEED)
}

/// `sends`, times 10 when `SMS_SDK_LONG=1`.
pub fn scaled(sends: usize) -> usize {
    if std::env::var("SMS_SDK_LONG").is_ok_and(|v| v == "1") { sends * 10 } else { sends }
}

/// The plans of `sends` keys named `<prefix>-<index>`, drawn from `seed`.
pub fn plans(seed: u64, sends: usize, prefix: &str) -> Vec<KeyPlan> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let delay = |rng: &mut fastrand::Rng| {
        if rng.u32(0..100) < DELAYED_PERCENT {
            let (min, max) =
                (u64::try_from(DELAY_MIN.as_millis()).unwrap(), u64::try_from(DELAY_MAX.as_millis()).unwrap());
            Duration::from_millis(rng.u64(min..=max))
        } else {
            Duration::ZERO
        }
    };
    (0..sends)
        .map(|index| {
            let fault = if rng.u32(0..100) < ORDINARY_PERCENT {
                Fault::None
            } else {
                Fault::MAGIC[rng.usize(0..Fault::MAGIC.len())]
            };
            let primary = Provider::ALL[rng.usize(0..4)];
            let broken = rng.u32(0..100) < BROKEN_PERCENT;
            let patient = rng.u32(0..100) < PATIENT_PERCENT;
            let fault = if patient && fault == Fault::AlwaysRateLimited { Fault::RateLimitedOnce } else { fault };
            let twin =
                (rng.u32(0..100) < TWIN_PERCENT).then(|| if rng.bool() { Twin::SameClient } else { Twin::OtherClient });
            let delays = std::array::from_fn(|_| std::array::from_fn(|_| delay(&mut rng)));
            KeyPlan { key: format!("{prefix}-{index:06}"), fault, primary, broken, patient, twin, delays }
        })
        .collect()
}
