//! Runs one logical send over its candidate adapters: rate-limit retries on the same adapter,
//! failover after eligible rejections, and a full stop on anything unknown. Each request first
//! waits for a slot of its adapter (`limit::admission`).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::adapter::{Accepted, Category, DynAdapter, Outcome, SendContext, UnknownReason};
use crate::error::{Attempt, AttemptOutcome, Error, ProviderError};
use crate::limit::admission::{Admissions, Refusal, cancelled};
use crate::message::OutboundMessage;
use crate::metrics;
use crate::retry::{Decision, RetryPolicy};
use crate::validate::Candidate;

/// What the chain needs besides the candidates.
pub(crate) struct Chain<'a> {
    pub(crate) retry: RetryPolicy,
    pub(crate) timeout: Duration,
    /// The caller's cancellation, when it gave one.
    pub(crate) cancel: Option<&'a CancellationToken>,
    /// The caller's stop: no new request once it is cancelled (one in flight finishes).
    pub(crate) stop: Option<&'a CancellationToken>,
    pub(crate) idempotency_key: Option<&'a str>,
    pub(crate) on_attempt: &'a (dyn Fn(&Attempt) + Sync),
    /// The adapters' limits on requests in flight.
    pub(crate) admissions: &'a Admissions,
    /// Set before each request: from then on a dropped send may have sent the message.
    pub(crate) requested: &'a AtomicBool,
}

/// An accepted chain.
pub(crate) struct Success {
    pub(crate) provider: String,
    pub(crate) accepted: Accepted,
    pub(crate) attempts: Vec<Attempt>,
}

/// How one adapter's attempts ended.
enum AdapterEnd {
    Accepted(Accepted),
    Rejected(Error),
    Unknown(Error),
    /// The send waited for a slot or a rate limit longer than its queue timeout, or a shared
    /// rate limiter failed: nothing more is tried.
    QueueTimeout(Error),
    Aborted,
}

impl Chain<'_> {
    /// Tries each candidate in order until one accepts, the outcome is unknown, the caller
    /// cancels, or a rejection does not allow failover.
    pub(crate) async fn run(&self, candidates: Vec<Candidate>) -> Result<Success, Error> {
        let mut attempts = Vec::new();
        let mut rejections: Vec<Error> = Vec::new();
        let mut previous: Option<&dyn DynAdapter> = None;
        let mut queue_budget = self.admissions.queue_timeout();
        for (adapter, message) in &candidates {
            if let Some(previous) = previous {
                metrics::failover(&previous.info().name, &adapter.info().name);
            }
            previous = Some(adapter.as_ref());
            match self.run_adapter(adapter.as_ref(), message, &mut attempts, &mut queue_budget).await {
                AdapterEnd::Accepted(accepted) => {
                    return Ok(Success { provider: adapter.info().name.clone(), accepted, attempts });
                }
                AdapterEnd::Unknown(error) | AdapterEnd::QueueTimeout(error) => return Err(error),
                AdapterEnd::Aborted => return Err(Error::aborted(attempts)),
                AdapterEnd::Rejected(error) => {
                    let go_on = error.allows_failover();
                    rejections.push(error);
                    if !go_on {
                        break;
                    }
                }
            }
        }
        Err(match rejections.len() {
            1 => rejections.remove(0),
            _ => Error::all_rejected(rejections, attempts),
        })
    }

    async fn run_adapter(
        &self,
        adapter: &dyn DynAdapter,
        message: &OutboundMessage,
        attempts: &mut Vec<Attempt>,
        queue_budget: &mut Duration,
    ) -> AdapterEnd {
        let name = adapter.info().name.as_str();
        let emit = |attempts: &mut Vec<Attempt>, number: u32, outcome: AttemptOutcome, duration: Duration| {
            let endpoint = adapter.info().endpoint.clone();
            let attempt = Attempt { provider: name.to_owned(), attempt: number, outcome, duration, endpoint };
            tracing::debug!(provider = name, attempt = number, outcome = ?attempt.outcome, "sms-sdk attempt");
            metrics::attempt(name, &attempt.outcome, duration);
            (self.on_attempt)(&attempt);
            attempts.push(attempt);
        };
        let mut number = 1;
        loop {
            if [self.cancel, self.stop].into_iter().flatten().any(CancellationToken::is_cancelled) {
                return AdapterEnd::Aborted;
            }
            // Waiting for a slot is not an attempt; the slot is freed when the request is over.
            let admitting = self.admissions.admit(name, &message.from.value, self.cancel, queue_budget);
            let admitted = tokio::select! {
                biased;
                () = cancelled(self.stop) => return AdapterEnd::Aborted,
                admitted = admitting => admitted,
            };
            let admission = match admitted {
                Ok(admission) => admission,
                Err(Refusal::Cancelled) => return AdapterEnd::Aborted,
                Err(Refusal::Stopped(error)) => {
                    return AdapterEnd::QueueTimeout(error.with_attempts(attempts.clone()));
                }
            };
            let cx = SendContext::new(number, self.idempotency_key.map(str::to_owned), self.timeout);
            self.requested.store(true, Ordering::Relaxed);
            let started = Instant::now();
            let outcome = self.attempt(adapter, message, &cx).await;
            let duration = started.elapsed();
            drop(admission);
            match outcome {
                Outcome::Accepted(accepted) => {
                    let recorded = AttemptOutcome::Accepted {
                        provider_id: accepted.provider_id.clone(),
                        delivery: accepted.delivery,
                    };
                    emit(attempts, number, recorded, duration);
                    return AdapterEnd::Accepted(accepted);
                }
                Outcome::Unknown(unknown) => {
                    let http_status = unknown.details.as_ref().and_then(ProviderError::status);
                    emit(attempts, number, AttemptOutcome::Unknown { reason: unknown.reason, http_status }, duration);
                    let error = Error::unknown(unknown.reason, name, unknown.details, unknown.cause, attempts.clone());
                    return AdapterEnd::Unknown(error);
                }
                Outcome::Rejected(rejection) => {
                    let recorded = AttemptOutcome::Rejected {
                        category: rejection.category,
                        http_status: rejection.details.status(),
                        provider_code: rejection.details.provider_code().map(str::to_owned),
                        retry_after: rejection.retry_after,
                    };
                    emit(attempts, number, recorded, duration);
                    let decision = if rejection.category == Category::RateLimited {
                        self.retry.decide(number, rejection.retry_after, crate::ids::jitter())
                    } else {
                        Decision::Stop
                    };
                    match decision {
                        Decision::Stop => return AdapterEnd::Rejected(Error::rejected(&rejection, attempts.clone())),
                        Decision::Wait(delay) => {
                            metrics::retry(name);
                            tokio::select! {
                                biased;
                                () = cancelled(self.cancel) => return AdapterEnd::Aborted,
                                () = cancelled(self.stop) => return AdapterEnd::Aborted,
                                () = tokio::time::sleep(delay) => {}
                            }
                        }
                    }
                }
            }
            number = number.saturating_add(1);
        }
    }

    /// One request, bounded by the timeout and the caller's cancellation; a panic is unknown.
    async fn attempt(&self, adapter: &dyn DynAdapter, message: &OutboundMessage, cx: &SendContext) -> Outcome {
        let request = AssertUnwindSafe(adapter.send(message, cx)).catch_unwind();
        tokio::select! {
            biased;
            () = cancelled(self.cancel) => Outcome::unknown(UnknownReason::Aborted),
            result = tokio::time::timeout(self.timeout, request) => match result {
                Err(_elapsed) => Outcome::unknown(UnknownReason::Timeout),
                Ok(Err(_panic)) => Outcome::unknown(UnknownReason::AdapterException),
                Ok(Ok(outcome)) => outcome,
            },
        }
    }
}
