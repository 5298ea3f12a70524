//! The emulator and the library agree: for every magic recipient (and an ordinary one) and every
//! provider, what the real adapter makes of the emulator's answer is what the emulator's table
//! declares ([`MagicRecipient::expected`]), and what its request log says about that request.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)] // test code: a panic is a failed test

use crate::common;

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Api, TO, client_with};
use sms_sdk::error::AttemptOutcome;
use sms_sdk::{Category, Error, ErrorKind, Message, Receipt, RetryPolicy};
use sms_sdk_emulator::magic::{self, Expected, Fault};
use sms_sdk_emulator::observe::{Operation, Outcome};
use sms_sdk_emulator::{Emulator, Provider, Served};
use tokio::task::JoinSet;

/// The client's per-request timeout: how long a held connection costs. Room for a loaded machine:
/// the Bandwidth adapter with OAuth 2.0 fetches its token inside it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);
/// The whole table's deadline (its slowest row waits one `Retry-After: 1`).
const DEADLINE: Duration = Duration::from_mins(1);

/// One row: a recipient, the fault the emulator says it injects, and the outcome it declares
/// for each provider (in the order of [`Provider::ALL`]).
#[derive(Debug, Clone, Copy)]
struct Row {
    number: &'static str,
    fault: Option<Fault>,
    expected: [Expected; Provider::ALL.len()],
}

fn rows() -> Vec<Row> {
    let mut rows: Vec<Row> = magic::recipients()
        .map(|r| Row { number: r.number, fault: r.fault, expected: Provider::ALL.map(|p| r.expected(p)) })
        .collect();
    // Any recipient that is not listed is accepted.
    rows.push(Row { number: TO, fault: None, expected: [Expected::Accepted; Provider::ALL.len()] });
    rows
}

fn index(provider: Provider) -> usize {
    Provider::ALL.iter().position(|p| *p == provider).unwrap()
}

/// A rate-limited attempt that carried `retry_after`.
fn rate_limited_with(outcome: &AttemptOutcome, retry_after: Option<Duration>) -> bool {
    matches!(
        outcome,
        AttemptOutcome::Rejected { category: Category::RateLimited, retry_after: wait, .. } if *wait == retry_after
    )
}

/// What the library made of one send through `provider`, in the emulator's terms; `Err` says why
/// it has no such term. A rate limit carries the emulator's `Retry-After` of that provider (one
/// second, none at AWS), except a bare 429's.
fn library_outcome(
    result: &Result<Receipt, Error>,
    fault: Option<Fault>,
    provider: Provider,
) -> Result<Expected, String> {
    let retry_after = if fault == Some(Fault::Bare429) { None } else { provider.retry_after() };
    match result {
        Ok(receipt) => match receipt.attempts.as_slice() {
            [only] if matches!(only.outcome, AttemptOutcome::Accepted { .. }) => Ok(Expected::Accepted),
            [first, second]
                if rate_limited_with(&first.outcome, retry_after)
                    && matches!(second.outcome, AttemptOutcome::Accepted { .. }) =>
            {
                Ok(Expected::RateLimitedThenAccepted)
            }
            attempts => Err(format!("accepted after {attempts:?}")),
        },
        Err(error) => {
            let kind = error.kind();
            if let ErrorKind::Rejected(category) = kind {
                if category == Category::RateLimited && error.retry_after() != retry_after {
                    return Err(format!("rate-limited with Retry-After {:?}", error.retry_after()));
                }
                Ok(Expected::Rejected(category))
            } else if let ErrorKind::Unknown(reason) = kind {
                Ok(Expected::Unknown(reason))
            } else {
                Err(format!("{kind:?}: {error}"))
            }
        }
    }
}

/// The library's requests of one send.
fn attempts(result: &Result<Receipt, Error>) -> usize {
    match result {
        Ok(receipt) => receipt.attempts.len(),
        Err(error) => error.attempts().len(),
    }
}

/// The log outcomes the emulator's declaration implies for one provider's requests.
fn declared_log(expected: Expected, fault: Option<Fault>) -> Vec<Outcome> {
    match (expected, fault) {
        (Expected::Accepted, None) => vec![Outcome::Accepted],
        (Expected::Rejected(category), None) => vec![Outcome::Rejected(category.as_str())],
        (Expected::RateLimitedThenAccepted, Some(fault)) => vec![Outcome::Fault(fault), Outcome::Accepted],
        (_, Some(fault)) => vec![Outcome::Fault(fault)],
        (_, None) => Vec::new(),
    }
}

/// Sends to `row.number` through every API on an emulator of its own, and returns every
/// disagreement between the library, the declaration and the log.
async fn check(row: Row) -> Vec<String> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    let emulator = Emulator::builder()
        .status_delay(Duration::from_millis(30))
        .observe(move |event| {
            if let Served::Request(request) = event
                && request.operation == Operation::Send
            {
                sink.lock().unwrap().push((request.provider, request.outcome));
            }
        })
        .start()
        .await
        .expect("the emulator starts");
    let mut sends = JoinSet::new();
    for api in Api::ALL {
        let client = client_with(&emulator, api, |builder| {
            builder
                .retry(RetryPolicy::new(2, Duration::from_millis(500), Duration::from_secs(2)))
                .timeout(REQUEST_TIMEOUT)
        });
        // One body per API: the rate-limited-once state is keyed on provider, recipient and body.
        let message = Message::new(row.number, format!("agreement {api:?}"));
        sends.spawn(async move { (api, client.send(&message).await) });
    }
    let results = sends.join_all().await;

    let mut disagreements = Vec::new();
    let mut requests = [0; Provider::ALL.len()];
    for (api, result) in &results {
        let provider = api.provider();
        requests[index(provider)] += attempts(result);
        let expected = row.expected[index(provider)];
        match library_outcome(result, row.fault, provider) {
            Ok(outcome) if outcome == expected => {}
            Ok(outcome) => {
                disagreements.push(format!("{} {api:?}: declared {expected}, library {outcome}", row.number));
            }
            Err(why) => disagreements.push(format!("{} {api:?}: declared {expected}, library {why}", row.number)),
        }
    }
    // Each request is logged as it is answered, before the client hears of it.
    let log = log.lock().unwrap().clone();
    for provider in Provider::ALL {
        let logged: Vec<Outcome> = log.iter().filter(|(p, _)| *p == Some(provider)).map(|(_, o)| *o).collect();
        let declared = declared_log(row.expected[index(provider)], row.fault);
        let mut distinct: Vec<Outcome> = Vec::new();
        for outcome in &logged {
            if !distinct.contains(outcome) {
                distinct.push(*outcome);
            }
        }
        let same = distinct.len() == declared.len() && declared.iter().all(|o| distinct.contains(o));
        if !same || logged.len() != requests[index(provider)] {
            disagreements.push(format!(
                "{} {provider}: declared {}, logged {logged:?} for {} request(s)",
                row.number,
                row.expected[index(provider)],
                requests[index(provider)]
            ));
        }
    }
    emulator.shutdown().await;
    disagreements
}

#[tokio::test]
async fn every_magic_recipient_means_the_same_to_the_emulator_and_the_library() {
    let table = async {
        let mut checks = JoinSet::new();
        for row in rows() {
            checks.spawn(check(row));
        }
        checks.join_all().await.concat()
    };
    let mut disagreements = tokio::time::timeout(DEADLINE, table).await.expect("the table ends within its deadline");
    disagreements.sort();
    let mut report = String::new();
    for line in &disagreements {
        let _ = writeln!(report, "  {line}");
    }
    assert!(disagreements.is_empty(), "{} disagreement(s):\n{report}", disagreements.len());
}

/// The help and the banner print each provider's declared outcome, and name a provider whose
/// outcome differs from the others'.
#[test]
fn meanings_say_each_providers_outcome() {
    for recipient in magic::recipients() {
        let outcomes = Provider::ALL.map(|p| recipient.expected(p));
        for (provider, expected) in Provider::ALL.into_iter().zip(outcomes) {
            assert!(recipient.meaning.contains(&expected.to_string()), "{provider}: {}", recipient.meaning);
            if outcomes.iter().filter(|o| **o == expected).count() == 1 {
                assert!(recipient.meaning.contains(&format!("{provider}: {expected}")), "{}", recipient.meaning);
            }
        }
    }
}
