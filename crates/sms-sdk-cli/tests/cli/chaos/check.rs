//! Checks a chaos run against the emulator's own record of what it received, and counts what
//! happened. Works on plain data ([`Seen`], the send results, the store's records), so that its
//! own test can feed it a record with a planted fault.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use sms_sdk::error::{Attempt, AttemptOutcome};
use sms_sdk::store::Record;
use sms_sdk::{Category, ErrorKind, UnknownReason};
use sms_sdk_emulator::{Provider, ReceivedMessage};

use super::plan::{Expect, Fault, KeyPlan, MARGIN, TIMEOUT, key_index};
use super::run::{SendResult, Sent};

/// One request as the emulator recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The provider API called.
    pub provider: Provider,
    /// The key named by its body.
    pub key: Option<usize>,
    /// The id of the message it created, if it created one.
    pub created: Option<String>,
    /// False when the credentials were refused (HTTP 401).
    pub authenticated: bool,
    /// The run it arrived in (0 or 1).
    pub run: usize,
}

impl Seen {
    /// The emulator's record, the first `split` entries from run 0 and the rest from run 1.
    pub fn from_record(record: &[ReceivedMessage], split: usize) -> Vec<Self> {
        let entry = |(position, m): (usize, &ReceivedMessage)| Self {
            provider: m.provider,
            key: m.body.as_deref().and_then(key_index),
            created: m.id.clone(),
            authenticated: m.http_status != Some(401),
            run: usize::from(position >= split),
        };
        record.iter().enumerate().map(entry).collect()
    }
}

/// Everything a run left behind.
#[derive(Debug)]
pub struct Observed<'a> {
    pub plans: &'a [KeyPlan],
    /// The sends of run 0 and run 1, in key order.
    pub results: [&'a [Sent]; 2],
    /// The emulator's record, in arrival order.
    pub seen: &'a [Seen],
    /// The store's record of each key after both runs.
    pub records: &'a [Option<Record>],
}

/// How a send ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Accepted,
    Rejected,
    Unknown,
}

fn end(result: &SendResult) -> End {
    match result.as_ref().map_err(sms_sdk::Error::kind) {
        Ok(_) => End::Accepted,
        Err(ErrorKind::Unknown(_)) => End::Unknown,
        Err(_) => End::Rejected,
    }
}

fn proved(outcome: &AttemptOutcome) -> Expect {
    match outcome {
        AttemptOutcome::Accepted { .. } => Expect::Accepted,
        AttemptOutcome::Rejected { category, .. } => Expect::Rejected(*category),
        AttemptOutcome::Unknown { reason, .. } => Expect::Unknown(*reason),
    }
}

fn attempts(result: &SendResult) -> &[Attempt] {
    match result {
        Ok(receipt) => &receipt.attempts,
        Err(error) => error.attempts(),
    }
}

/// True for a send that made requests of its own (not a replay, not refused as in progress).
fn is_fresh(result: &SendResult) -> bool {
    match result {
        Ok(receipt) => !receipt.replayed,
        Err(error) => !matches!(
            error.kind(),
            ErrorKind::IdempotencyInProgress | ErrorKind::Unknown(UnknownReason::ReplayedUnknown)
        ),
    }
}

/// True for an attempt that failed to connect (it never reached the emulator).
fn is_unreachable(attempt: &Attempt) -> bool {
    matches!(attempt.outcome, AttemptOutcome::Rejected { category: Category::Unreachable, .. })
}

/// The providers of the attempts of `result` that reached the emulator.
fn reached_providers(result: &SendResult) -> impl Iterator<Item = &str> {
    attempts(result).iter().filter(|a| !is_unreachable(a)).map(|a| a.provider.as_str())
}

/// A short label of a result, for the counts.
fn label(result: &SendResult) -> String {
    let error = match result {
        Ok(receipt) if receipt.replayed => return "replayed accepted".into(),
        Ok(_) => return "accepted".into(),
        Err(error) => error,
    };
    if let ErrorKind::Unknown(reason) = error.kind() {
        let reason = serde_json::to_value(reason).ok().and_then(|r| r.as_str().map(str::to_owned));
        format!("unknown {}", reason.unwrap_or_default())
    } else if let ErrorKind::Rejected(category) = error.kind() {
        format!("rejected {category}")
    } else {
        error.code().replace('_', " ")
    }
}

/// What happened, counted.
#[derive(Debug, Default)]
pub struct Stats {
    /// Sends per run.
    pub sends: [usize; 2],
    /// Sends that made requests (not replays) per run.
    pub fresh: [usize; 2],
    /// Requests the emulator received per run.
    pub requests: [usize; 2],
    /// Keys per planned fault.
    pub keys_by_fault: BTreeMap<Fault, usize>,
    /// Requests per planned fault, both runs.
    pub requests_by_fault: BTreeMap<Fault, usize>,
    /// Requests refused for wrong credentials (the broken primaries).
    pub auth_rejections: usize,
    /// Requests the emulator answered late (a planned wait).
    pub delayed: usize,
    /// Of those, requests the client gave up on (`unknown timeout`).
    pub late: usize,
    /// Timeouts or connect failures the plan does not explain (a stalled machine), requests
    /// that timed out before the emulator read them included.
    pub stalls: usize,
    /// Sends that moved on to another adapter at least once.
    pub failovers: usize,
    /// Rate-limited requests a patient client sent again on the same adapter.
    pub retries: usize,
    /// How the second of two simultaneous sends of a key went.
    pub twins: BTreeMap<String, usize>,
    /// Outcomes per run.
    pub outcomes: [BTreeMap<String, usize>; 2],
    /// Messages the emulator created.
    pub created: usize,
    /// Keys whose outcome is unknown although the emulator created their message.
    pub created_unknown: usize,
    /// Keys with more than one created message.
    pub duplicates: usize,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "sends: {:?} (fresh {:?}); requests received: {:?}", self.sends, self.fresh, self.requests)?;
        writeln!(f, "keys per fault: {:?}", self.keys_by_fault)?;
        writeln!(f, "requests per fault: {:?}", self.requests_by_fault)?;
        writeln!(
            f,
            "auth rejections (broken primaries): {}; delayed answers: {} (late, timed out: {}); stalls: {}",
            self.auth_rejections, self.delayed, self.late, self.stalls
        )?;
        writeln!(
            f,
            "sends that failed over: {}; rate limits retried on the same adapter: {}",
            self.failovers, self.retries
        )?;
        writeln!(f, "twin sends (how the second of two at once went): {:?}", self.twins)?;
        for (run, outcomes) in self.outcomes.iter().enumerate() {
            writeln!(f, "run {} outcomes: {outcomes:?}", run + 1)?;
        }
        write!(
            f,
            "messages created: {}; unknown but created: {}; duplicates: {}",
            self.created, self.created_unknown, self.duplicates
        )
    }
}

/// The violations found (empty when the run was right) and the counts.
#[derive(Debug, Default)]
pub struct Report {
    pub violations: Vec<String>,
    pub stats: Stats,
}

impl Report {
    /// The first violations, one per line.
    pub fn summary(&self, limit: usize) -> String {
        let mut text = String::new();
        for violation in self.violations.iter().take(limit) {
            let _ = writeln!(text, "  {violation}");
        }
        if self.violations.len() > limit {
            let _ = writeln!(text, "  … and {} more", self.violations.len() - limit);
        }
        text
    }
}

/// Checks everything; the rules are in the docs of `chaos.rs`.
pub fn check(observed: &Observed<'_>) -> Report {
    let mut report = Report::default();
    let mut by_key: Vec<Vec<(usize, &Seen)>> = vec![Vec::new(); observed.plans.len()];
    for (position, seen) in observed.seen.iter().enumerate() {
        match seen.key.and_then(|k| by_key.get_mut(k)) {
            Some(list) => list.push((position, seen)),
            None => report.violations.push(format!("request #{position} names no key of the run: {seen:?}")),
        }
        if let Some(count) = report.stats.requests.get_mut(seen.run) {
            *count += 1;
        }
    }
    for (index, plan) in observed.plans.iter().enumerate() {
        let mut key = KeyCheck {
            plan,
            index,
            seen: by_key.get(index).map(Vec::as_slice).unwrap_or_default(),
            report: &mut report,
            unread: false,
        };
        key.check(observed);
    }
    report
}

/// The checks of one key.
struct KeyCheck<'a, 'r> {
    plan: &'a KeyPlan,
    index: usize,
    /// The key's requests, with their position in the whole record.
    seen: &'a [(usize, &'a Seen)],
    report: &'r mut Report,
    /// True when the key's last request timed out before the emulator read it.
    unread: bool,
}

impl KeyCheck<'_, '_> {
    fn fail(&mut self, run: usize, what: impl fmt::Display) {
        let plan = self.plan;
        self.report.violations.push(format!(
            "key {} ({:?}, primary {}{}{}), run {}: {what}",
            plan.key,
            plan.fault,
            plan.primary,
            if plan.broken { " with wrong credentials" } else { "" },
            if plan.patient { ", patient" } else { "" },
            run + 1
        ));
    }

    fn check(&mut self, observed: &Observed<'_>) {
        let plan = self.plan;
        let stats = &mut self.report.stats;
        *stats.keys_by_fault.entry(plan.fault).or_default() += 1;
        *stats.requests_by_fault.entry(plan.fault).or_default() += self.seen.len();
        let [Some(sent), Some(again)] = observed.results.map(|r| r.get(self.index)) else {
            self.fail(0, "no result");
            return;
        };
        let (Some(result), Some(second)) = (sent.result.as_ref(), again.result.as_ref()) else {
            self.fail(0, "not sent");
            return;
        };
        let requests =
            |run| -> Vec<(usize, &Seen)> { self.seen.iter().filter(|(_, s)| s.run == run).copied().collect() };
        let (requests0, requests1) = (requests(0), requests(1));
        for (run, result) in [Some(result), sent.twin.as_ref(), Some(second), again.twin.as_ref()]
            .into_iter()
            .enumerate()
            .filter_map(|(i, r)| r.map(|r| (i / 2, r)))
        {
            self.report.stats.sends[run] += 1;
            *self.report.stats.outcomes[run].entry(label(result)).or_default() += 1;
        }
        let first = match sent.twin.as_ref() {
            None => {
                self.report.stats.fresh[0] += 1;
                self.fresh(0, result, &requests0, plan.patient(false));
                result
            }
            Some(twin) => self.twins(result, twin, &requests0),
        };
        if again.twin.is_some() {
            self.fail(1, "a twin in the second run");
        }
        if end(first) == End::Rejected {
            self.report.stats.fresh[1] += 1;
            self.fresh(1, second, &requests1, plan.patient(false));
        } else {
            self.replay(first, second, requests1.len());
        }
        self.agree(second, observed.records.get(self.index).and_then(Option::as_ref));
    }

    /// A key sent twice at once (`a` its own send, `b` the twin): one of them sends and the
    /// other waits for it (in process), finds it in progress or replays it (through the store),
    /// unless the first was rejected and finished before the other reserved the key, which then
    /// sends again. The result that decided the key's record.
    fn twins<'s>(&mut self, a: &'s SendResult, b: &'s SendResult, requests: &[(usize, &Seen)]) -> &'s SendResult {
        let plan = self.plan;
        // A send that waited for the other in process gets its very error (same attempts).
        let copy = match (a, b) {
            (Err(x), Err(y)) => x.kind() == y.kind() && !x.attempts().is_empty() && x.attempts() == y.attempts(),
            (Ok(_) | Err(_), _) => false,
        };
        let (fresh_a, fresh_b) = (is_fresh(a), is_fresh(b));
        let tally = |stats: &mut Stats, what: &str| *stats.twins.entry(what.to_owned()).or_default() += 1;
        if copy || (fresh_a != fresh_b) {
            let (leader, twin, other) = if fresh_a || copy { (a, false, b) } else { (b, true, a) };
            self.report.stats.fresh[0] += 1;
            self.fresh(0, leader, requests, plan.patient(twin));
            let fine = match (leader, other) {
                _ if copy => true,
                (_, Err(e)) if e.kind() == ErrorKind::IdempotencyInProgress => true,
                (Ok(x), Ok(y)) => y.replayed && x.id == y.id && x.provider_id == y.provider_id,
                (Err(x), Err(y)) => {
                    matches!(x.kind(), ErrorKind::Unknown(_))
                        && y.kind() == ErrorKind::Unknown(UnknownReason::ReplayedUnknown)
                }
                (Ok(_), Err(_)) | (Err(_), Ok(_)) => false,
            };
            if !fine {
                self.fail(0, format!("twin sends: {leader:?} sent, then {other:?}"));
            }
            let how = match other {
                _ if copy => "waited in process for a failure",
                Ok(r) if r.replayed => "replayed an accepted send",
                Err(e) if e.kind() == ErrorKind::IdempotencyInProgress => "found it in progress",
                Ok(_) | Err(_) => "replayed an unknown outcome",
            };
            tally(&mut self.report.stats, how);
            return leader;
        }
        if !fresh_a {
            self.fail(0, format!("neither twin sent: {a:?} and {b:?}"));
            return a;
        }
        // Both sent: one after the other, the first rejected. Its requests come first.
        let reached = |r: &SendResult| attempts(r).iter().filter(|x| !is_unreachable(x)).count();
        let first_is_a = end(a) == End::Rejected
            && (end(b) != End::Rejected
                || requests
                    .get(..reached(a))
                    .is_some_and(|r| r.iter().map(|(_, s)| s.provider.name()).eq(reached_providers(a))));
        let (first, first_twin, second) = if first_is_a { (a, false, b) } else { (b, true, a) };
        if end(first) != End::Rejected {
            self.fail(0, format!("both twins sent, and neither was rejected: {a:?} and {b:?}"));
            return second;
        }
        let split = reached(first).min(requests.len());
        self.report.stats.fresh[0] += 2;
        self.fresh(0, first, requests.get(..split).unwrap_or_default(), plan.patient(first_twin));
        self.fresh(0, second, requests.get(split..).unwrap_or_default(), plan.patient(!first_twin));
        tally(&mut self.report.stats, "sent again after a rejection");
        second
    }

    /// A repeat of a key whose first outcome was accepted or unknown: replayed, no request.
    fn replay(&mut self, first: &SendResult, second: &SendResult, requests: usize) {
        if requests != 0 {
            self.fail(1, format!("{requests} request(s) for a key whose first outcome was {:?}", end(first)));
        }
        match (first, second) {
            (Ok(a), Ok(b)) if b.replayed && b.id == a.id && b.provider_id == a.provider_id => {}
            (Err(_), Err(e)) if e.kind() == ErrorKind::Unknown(UnknownReason::ReplayedUnknown) => {}
            _ => self.fail(1, format!("not a replay of the first outcome: {first:?} then {second:?}")),
        }
    }

    /// A send that made requests: each attempt against the plan and against the emulator.
    /// `patient` tells whether the client that sent it retries a rate limit.
    fn fresh(&mut self, run: usize, result: &SendResult, requests: &[(usize, &Seen)], patient: bool) {
        let plan = self.plan;
        let chain = plan.chain();
        let attempts = attempts(result);
        if result.as_ref().is_ok_and(|r| r.replayed) {
            self.fail(run, "replayed, but no accepted record could exist");
        }
        if attempts.is_empty() {
            self.fail(run, format!("no attempt: {result:?}"));
            return;
        }
        // A connect failure never reaches the emulator: it has no entry to pair with.
        let reached: Vec<&Attempt> = attempts.iter().filter(|a| !is_unreachable(a)).collect();
        let unreachable = attempts.len() - reached.len();
        self.report.stats.stalls += unreachable;
        // A request that timed out before the emulator read it (the machine stalled) is not
        // listed: the client closed the connection first. Only the last attempt can be one.
        let timed_out = attempts.last().is_some_and(|a| proved(&a.outcome) == Expect::Unknown(UnknownReason::Timeout));
        if timed_out && reached.len() == requests.len() + 1 {
            self.report.stats.stalls += 1;
            self.unread = true;
        } else if reached.len() != requests.len() {
            let outcomes: Vec<Expect> = attempts.iter().map(|a| proved(&a.outcome)).collect();
            self.fail(run, format!("attempts {outcomes:?} reached the emulator, which received {}", requests.len()));
            return;
        }
        let last = attempts.len() - 1;
        let mut paired = reached.into_iter().zip(requests);
        // Where the send should be: which adapter of the chain, and which try on it.
        let (mut adapter, mut try_number) = (0, 1);
        for (position, attempt) in attempts.iter().enumerate() {
            let provider = attempt.provider.parse::<Provider>().ok();
            if provider != chain.get(adapter).copied() || attempt.attempt != try_number {
                let expected = chain.get(adapter);
                let (name, number) = (&attempt.provider, attempt.attempt);
                self.fail(
                    run,
                    format!("attempt {position} went to {name} (try {number}), not {expected:?} (try {try_number})"),
                );
                return;
            }
            let actual = proved(&attempt.outcome);
            // A patient client retries a rate limit once on the same adapter; otherwise only an
            // eligible rejection moves on, and the last adapter's ends the send.
            let retries = patient && actual == Expect::Rejected(Category::RateLimited) && try_number == 1;
            let moves_on = !retries && matches!(actual, Expect::Rejected(category) if category.allows_failover());
            if position < last && !retries && !moves_on {
                self.fail(run, format!("attempt {position} proved {actual:?}, yet the send went on"));
            }
            if position == last && (retries || (moves_on && adapter + 1 < chain.len())) {
                self.fail(run, format!("attempt {position} proved {actual:?}, yet the send stopped"));
            }
            if actual != Expect::Rejected(Category::Unreachable)
                && let Some((attempt, (at, seen))) = paired.next()
            {
                self.attempt(run, (position, adapter), attempt, *at, seen);
            }
            if retries {
                self.report.stats.retries += 1;
                try_number += 1;
            } else {
                (adapter, try_number) = (adapter + 1, 1);
            }
        }
        if adapter > 1 {
            self.report.stats.failovers += 1;
        }
        self.result_shape(run, result, attempts);
    }

    /// One attempt that reached the emulator as request `seen` (at position `at` of the record).
    /// `position` is the attempt's place in the send, `adapter` its adapter's in the chain.
    fn attempt(&mut self, run: usize, (position, adapter): (usize, usize), attempt: &Attempt, at: usize, seen: &Seen) {
        let provider = seen.provider;
        if attempt.provider != provider.name() {
            self.fail(run, format!("attempt {position} went to {}, the emulator saw {provider}", attempt.provider));
            return;
        }
        let authenticated = !(self.plan.broken && adapter == 0);
        if !seen.authenticated {
            self.report.stats.auth_rejections += 1;
        }
        if seen.authenticated != authenticated {
            self.fail(
                run,
                format!("attempt {position}: credentials accepted {} (planned {authenticated})", seen.authenticated),
            );
        }
        let earlier = self.seen.iter().filter(|(p, s)| *p < at && s.provider == provider && s.authenticated).count();
        let expected =
            if authenticated { self.plan.fault.expected(provider, earlier) } else { Expect::Rejected(Category::Auth) };
        let actual = proved(&attempt.outcome);
        let delay = self.plan.delay(run, provider);
        if !delay.is_zero() {
            self.report.stats.delayed += 1;
        }
        let timeout = Expect::Unknown(UnknownReason::Timeout);
        if actual == timeout && expected != timeout {
            if delay + MARGIN > TIMEOUT {
                self.report.stats.late += 1;
            } else {
                // Answered well within the timeout by plan: the machine stalled.
                self.report.stats.stalls += 1;
            }
        } else if actual != expected {
            self.fail(run, format!("attempt {position} to {provider} proved {actual:?}, expected {expected:?}"));
        } else if expected != timeout && delay > TIMEOUT + MARGIN {
            self.fail(
                run,
                format!("attempt {position} to {provider} proved {actual:?} from an answer sent {delay:?} late"),
            );
        }
        match (&attempt.outcome, &seen.created) {
            (AttemptOutcome::Accepted { provider_id, .. }, Some(id)) if provider_id == id => {}
            (AttemptOutcome::Accepted { provider_id, .. }, created) => {
                self.fail(run, format!("accepted as {provider_id}, the emulator created {created:?}"));
            }
            (AttemptOutcome::Rejected { .. }, Some(id)) => {
                self.fail(run, format!("attempt {position} rejected, yet the emulator created {id}"));
            }
            (AttemptOutcome::Rejected { .. } | AttemptOutcome::Unknown { .. }, _) => {}
        }
    }

    /// The result says what its last attempt proved.
    fn result_shape(&mut self, run: usize, result: &SendResult, attempts: &[Attempt]) {
        let Some(last) = attempts.last() else { return };
        // Each adapter's last attempt: what it proved in the end.
        let ends: Vec<&Attempt> = attempts
            .iter()
            .enumerate()
            .filter(|(i, a)| attempts.get(i + 1).is_none_or(|next| next.provider != a.provider))
            .map(|(_, a)| a)
            .collect();
        let right = match (result, &last.outcome) {
            (Ok(receipt), AttemptOutcome::Accepted { provider_id, .. }) => {
                let providers: Vec<&str> = ends.iter().map(|a| a.provider.as_str()).collect();
                !receipt.replayed
                    && receipt.provider == last.provider
                    && &receipt.provider_id == provider_id
                    && receipt.attempted_providers == providers
            }
            (Err(error), AttemptOutcome::Unknown { reason, .. }) => error.kind() == ErrorKind::Unknown(*reason),
            (Err(error), AttemptOutcome::Rejected { category, .. }) if ends.len() == 1 => {
                error.kind() == ErrorKind::Rejected(*category)
            }
            (Err(error), AttemptOutcome::Rejected { .. }) => {
                let kinds: Vec<ErrorKind> = error.rejections().iter().map(sms_sdk::Error::kind).collect();
                let proved: Vec<ErrorKind> = ends
                    .iter()
                    .filter_map(|a| match proved(&a.outcome) {
                        Expect::Rejected(category) => Some(ErrorKind::Rejected(category)),
                        Expect::Accepted | Expect::Unknown(_) => None,
                    })
                    .collect();
                error.kind() == ErrorKind::AllRejected && kinds == proved
            }
            (Ok(_), AttemptOutcome::Rejected { .. } | AttemptOutcome::Unknown { .. })
            | (Err(_), AttemptOutcome::Accepted { .. }) => false,
        };
        if !right {
            self.fail(run, format!("the result does not match its attempts: {result:?}"));
        }
    }

    /// The key's final record agrees with its last result and with the emulator: accepted ↔
    /// created once with that id; unknown only where a request reached the emulator; rejected
    /// only where nothing was created.
    fn agree(&mut self, last: &SendResult, record: Option<&Record>) {
        let created: Vec<&str> = self.seen.iter().filter_map(|(_, s)| s.created.as_deref()).collect();
        self.report.stats.created += created.len();
        if created.len() > 1 {
            self.report.stats.duplicates += 1;
            self.fail(1, format!("the emulator created {} messages for one key: {created:?}", created.len()));
        }
        let fine = match (end(last), record) {
            (End::Accepted, Some(Record::Accepted { result, .. })) => {
                created == [result.provider_id.as_str()]
                    && last.as_ref().is_ok_and(|r| r.provider_id == result.provider_id)
            }
            (End::Unknown, Some(Record::Unknown { .. })) => {
                if !created.is_empty() {
                    self.report.stats.created_unknown += 1;
                }
                !self.seen.is_empty() || self.unread
            }
            (End::Rejected, Some(Record::Rejected { .. })) => created.is_empty(),
            _ => false,
        };
        if !fine {
            let state = record.map(Record::state);
            self.fail(1, format!("final {:?} with record {state:?} and created {created:?}", end(last)));
        }
    }
}
