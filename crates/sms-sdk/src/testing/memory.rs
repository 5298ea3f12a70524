//! `MemoryAdapter`: an adapter that records every send and answers from a script.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::adapter::{
    ALL_SENDER_TYPES, Accepted, Adapter, AdapterInfo, Capabilities, Category, Delivery, Outcome, Rejection,
    SendContext, Support, SupportStatus, UnknownReason, ValidityRange,
};
use crate::error::ProviderError;
use crate::message::{OutboundMessage, Sender};
use crate::options::OptionsSpec;
use futures_util::future::BoxFuture;

type Script = Arc<dyn Fn(&OutboundMessage, &SendContext) -> BoxFuture<'static, Outcome> + Send + Sync>;

/// One scripted answer: a fixed outcome, or a function of the message and context.
#[derive(Clone)]
pub enum MemoryOutcome {
    /// Answer with this outcome.
    Fixed(Outcome),
    /// Compute the outcome (it may wait, for timeout and cancellation tests).
    Script(Script),
}

impl MemoryOutcome {
    /// A scripted answer.
    pub fn script<F, Fut>(f: F) -> Self
    where
        F: Fn(&OutboundMessage, &SendContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Outcome> + Send + 'static,
    {
        Self::Script(Arc::new(move |message, cx| Box::pin(f(message, cx))))
    }
}

impl From<Outcome> for MemoryOutcome {
    fn from(outcome: Outcome) -> Self {
        Self::Fixed(outcome)
    }
}

impl fmt::Debug for MemoryOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fixed(outcome) => f.debug_tuple("Fixed").field(outcome).finish(),
            Self::Script(_) => f.write_str("Script"),
        }
    }
}

/// One call to [`MemoryAdapter`]'s `send`.
#[derive(Debug, Clone)]
pub struct SentMessage {
    /// What the adapter was asked to send (with the resolved sender).
    pub message: OutboundMessage,
    /// The attempt number on this adapter.
    pub attempt: u32,
    /// The idempotency key the client passed.
    pub idempotency_key: Option<String>,
    /// The answer, or `None` when the send was dropped (timeout, cancellation) before it.
    pub outcome: Option<Outcome>,
}

/// An adapter that keeps every send in memory and answers from a queue of outcomes; when the
/// queue is empty it accepts with provider id `<name>_<n>` (`n` counts every call).
///
/// Clones share the same queue and log, so keep one to inspect after giving one to a client.
#[derive(Clone)]
pub struct MemoryAdapter {
    info: Arc<AdapterInfo>,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<MemoryOutcome>,
    sent: Vec<SentMessage>,
    calls: u64,
}

/// Builds a [`MemoryAdapter`].
#[must_use]
#[derive(Debug)]
pub struct MemoryAdapterBuilder {
    info: AdapterInfo,
    outcomes: Vec<MemoryOutcome>,
}

impl MemoryAdapter {
    /// An adapter named `memory`, default sender `+15005550006`, every capability but inbound
    /// and delivery receipts.
    #[must_use]
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder with the defaults of [`MemoryAdapter::new`].
    pub fn builder() -> MemoryAdapterBuilder {
        let capabilities = Capabilities {
            send_text: true,
            mms: true,
            scheduling: true,
            validity_period: Some(ValidityRange { min_sec: 1, max_sec: 604_800 }),
            webhook_url_override: true,
            inbound: false,
            delivery_receipts: false,
            sender_types: ALL_SENDER_TYPES.to_vec(),
            native_idempotency: false,
        };
        let info = AdapterInfo::new("memory", capabilities).default_from("+15005550006").support(Support {
            status: SupportStatus::Supported,
            notes: vec!["Test adapter: records sends in memory.".into()],
        });
        MemoryAdapterBuilder { info, outcomes: Vec::new() }
    }

    /// Adds outcomes to the end of the queue.
    pub fn enqueue(&self, outcome: impl Into<MemoryOutcome>) {
        self.lock().queue.push_back(outcome.into());
    }

    /// Every call so far, in order.
    #[must_use]
    pub fn sent(&self) -> Vec<SentMessage> {
        self.lock().sent.clone()
    }

    /// Clears the log, the queue and the call counter.
    pub fn reset(&self) {
        *self.lock() = State::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryAdapter {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryAdapterBuilder {
    /// Sets the adapter's name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.info.name = name.into();
        self
    }

    /// Sets the default sender (`None`: the message must name one).
    pub fn from(mut self, sender: Option<Sender>) -> Self {
        self.info.default_from = sender;
        self
    }

    /// Changes the capabilities.
    pub fn capabilities(mut self, change: impl FnOnce(&mut Capabilities)) -> Self {
        change(&mut self.info.capabilities);
        self
    }

    /// Accepts provider options under this spec (without one, any entry is refused).
    pub fn provider_options(mut self, spec: &'static OptionsSpec) -> Self {
        self.info.provider_options = Some(spec);
        self
    }

    /// Queues outcomes, one per `send` call.
    pub fn outcomes(mut self, outcomes: impl IntoIterator<Item = impl Into<MemoryOutcome>>) -> Self {
        self.outcomes.extend(outcomes.into_iter().map(Into::into));
        self
    }

    /// Builds the adapter.
    #[must_use]
    pub fn build(self) -> MemoryAdapter {
        let state = State { queue: self.outcomes.into(), ..State::default() };
        MemoryAdapter { info: Arc::new(self.info), state: Arc::new(Mutex::new(state)) }
    }
}

impl Adapter for MemoryAdapter {
    fn info(&self) -> &AdapterInfo {
        &self.info
    }

    async fn send(&self, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let (index, next, call) = {
            let mut state = self.lock();
            state.calls = state.calls.saturating_add(1);
            state.sent.push(SentMessage {
                message: message.clone(),
                attempt: cx.attempt,
                idempotency_key: cx.idempotency_key.clone(),
                outcome: None,
            });
            (state.sent.len().saturating_sub(1), state.queue.pop_front(), state.calls)
        };
        let outcome = match next {
            Some(MemoryOutcome::Fixed(outcome)) => outcome,
            Some(MemoryOutcome::Script(script)) => script(message, cx).await,
            None => accepted_outcome(&format!("{}_{call}", self.info.name)),
        };
        if let Some(entry) = self.lock().sent.get_mut(index) {
            entry.outcome = Some(outcome.clone());
        }
        outcome
    }
}

impl fmt::Debug for MemoryAdapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("MemoryAdapter")
            .field("name", &self.info.name)
            .field("queued", &state.queue.len())
            .field("sent", &state.sent.len())
            .finish_non_exhaustive()
    }
}

/// Accepted with `provider_id`, delivery `queued`.
#[must_use]
pub fn accepted_outcome(provider_id: &str) -> Outcome {
    Outcome::Accepted(Accepted { provider_id: provider_id.to_owned(), delivery: Delivery::Queued })
}

/// Options of [`rejected_outcome`].
#[derive(Debug, Clone, Default)]
pub struct RejectedOptions {
    /// The provider named in the details (default `memory`).
    pub provider: Option<String>,
    /// The `Retry-After` of a rate limit.
    pub retry_after: Option<Duration>,
    /// The provider's error code.
    pub code: Option<String>,
}

/// A rejection in `category` with the message `Simulated <category> rejection.`
#[must_use]
pub fn rejected_outcome(category: Category, options: RejectedOptions) -> Outcome {
    let mut details = ProviderError::new(options.provider.unwrap_or_else(|| "memory".into()))
        .message(&format!("Simulated {category} rejection."));
    if let Some(code) = options.code {
        details = details.code(code);
    }
    Outcome::Rejected(Rejection { category, retry_after: options.retry_after, details })
}

/// An unknown outcome for `reason`.
#[must_use]
pub fn unknown_outcome(reason: UnknownReason) -> Outcome {
    Outcome::unknown(reason)
}
