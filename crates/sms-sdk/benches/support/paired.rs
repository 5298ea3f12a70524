//! The webhook ratios measured so that a shared machine's drift falls on both sides alike: the
//! verifier, the event alone and each bare primitive run in turn, batch by batch, for a number of
//! rounds, timed in CPU time of the thread (`CLOCK_THREAD_CPUTIME_ID`). Each ratio is the median
//! over rounds of the ratio within a round, as the load rows divide each run by the ceiling run
//! next to it. Shared by `benches/micro.rs` (which writes the ratios for `BENCHMARKS.md`) and
//! `benches/verify_speed.rs` (which prints them).

use std::hint::black_box;

use ed25519_dalek::Verifier as _;
use sms_sdk::testing::webhooks::parse_unverified;

use super::webhooks::{Case, Primitive, now};

/// A bare primitive: its name and one run over the payload.
pub(crate) type Bare<'c> = (&'static str, Box<dyn Fn() + 'c>);

/// The HMAC of `data` keyed with `secret` by the `hmac` crate's `M`, state keyed once and
/// cloned per run (checked against the request's `tag` first).
fn hmac_crate<'c, M: hmac::Mac + hmac::digest::KeyInit + Clone + 'c>(
    secret: &str,
    data: &'c [u8],
    tag: &[u8],
) -> Box<dyn Fn() + 'c> {
    let keyed = <M as hmac::digest::KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    assert_eq!(keyed.clone().chain_update(data).finalize().into_bytes().as_slice(), tag);
    Box::new(move || {
        let mut mac = keyed.clone();
        mac.update(black_box(data));
        black_box(mac.finalize().into_bytes());
    })
}

/// The bare primitives of `case`: the crate the verifier uses, then `ring`.
pub(crate) fn bares(case: &Case) -> Vec<Bare<'_>> {
    let ring: Box<dyn Fn() + '_> = Box::new(|| assert!(black_box(&case.primitive).run()));
    match &case.primitive {
        Primitive::HmacSha1 { secret, data, tag, .. } => vec![
            ("hmac-sha1 (hmac crate)", hmac_crate::<hmac::Hmac<sha1::Sha1>>(secret, data, tag)),
            ("hmac-sha1 (ring)", ring),
        ],
        Primitive::HmacSha256 { secret, data, tag, .. } => vec![
            ("hmac-sha256 (hmac crate)", hmac_crate::<hmac::Hmac<sha2::Sha256>>(secret, data, tag)),
            ("hmac-sha256 (ring)", ring),
        ],
        Primitive::Ed25519 { public_key, message, signature } => {
            let key = ed25519_dalek::VerifyingKey::from_bytes(public_key).unwrap();
            let signature = ed25519_dalek::Signature::from_bytes(signature);
            let dalek: Box<dyn Fn() + '_> = Box::new(move || key.verify(black_box(message), &signature).unwrap());
            vec![("ed25519 (ed25519-dalek)", dalek), ("ed25519 (ring)", ring)]
        }
    }
}

/// One `verify_at` of the case's request.
pub(crate) fn verify(case: &Case) {
    black_box(case.verifier.verify_at(black_box(&case.request.as_request()), now()).unwrap());
}

/// The same event built without any check.
pub(crate) fn event_only(case: &Case) {
    black_box(parse_unverified(case.verifier.provider(), black_box(&case.request.as_request())).unwrap());
}

/// The speed target of each verifier: its rate over the bare primitive's.
pub(crate) fn target(case: &Case) -> f64 {
    if matches!(case.primitive, Primitive::Ed25519 { .. }) { 0.9 } else { 0.5 }
}

/// What the rounds of one case measured: medians over rounds.
pub(crate) struct Paired {
    /// CPU ns per call of `verify_at`, of the event alone, and of each bare primitive (in the
    /// order of [`bares`]).
    pub(crate) verify_ns: f64,
    pub(crate) event_ns: f64,
    pub(crate) bare_ns: Vec<(&'static str, f64)>,
    /// The faster primitive (by its median): its index in `bare_ns`.
    pub(crate) fastest: usize,
    /// The faster primitive's time over the verifier's, within each round (a rate ratio).
    pub(crate) ratio: f64,
    /// The same over the verifier less the event (checking alone).
    pub(crate) checking_ratio: f64,
    pub(crate) rounds: usize,
}

/// CPU time of this thread, in nanoseconds: time other processes take from the core does not
/// count.
pub(crate) fn thread_cpu_ns() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    u64::try_from(now.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(now.tv_nsec).unwrap_or(0)
}

/// CPU nanoseconds per call of `f` over `iterations` calls.
fn time_batch(f: &dyn Fn(), iterations: u32) -> f64 {
    let start = thread_cpu_ns();
    for _ in 0..iterations {
        f();
    }
    #[allow(clippy::cast_precision_loss)] // a time for a report
    let elapsed = thread_cpu_ns().saturating_sub(start) as f64;
    elapsed / f64::from(iterations)
}

/// Calls of `f` that take about 10 ms.
fn iterations_for(f: &dyn Fn()) -> u32 {
    let ns = time_batch(f, 200).max(1.0);
    // Positive and far below 2^32.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let iterations = (10e6 / ns) as u32;
    iterations.max(10)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs `case`'s verifier, event and primitives in turn for `rounds` rounds.
pub(crate) fn measure(case: &Case, rounds: usize) -> Paired {
    let bares = bares(case);
    let verify = || verify(case);
    let event = || event_only(case);
    let mut runs: Vec<&dyn Fn()> = vec![&verify, &event];
    runs.extend(bares.iter().map(|(_, f)| f.as_ref()));
    let iterations: Vec<u32> = runs.iter().map(|f| iterations_for(*f)).collect();
    let times: Vec<Vec<f64>> =
        (0..rounds).map(|_| runs.iter().zip(&iterations).map(|(f, n)| time_batch(*f, *n)).collect()).collect();
    let column = |i: usize| median(times.iter().map(|round| round[i]).collect());
    let bare_ns: Vec<(&'static str, f64)> =
        bares.iter().enumerate().map(|(i, (name, _))| (*name, column(i + 2))).collect();
    let fastest = (0..bare_ns.len()).min_by(|&a, &b| bare_ns[a].1.total_cmp(&bare_ns[b].1)).unwrap();
    let within = |f: &dyn Fn(&[f64]) -> f64| median(times.iter().map(|round| f(round)).collect());
    Paired {
        verify_ns: column(0),
        event_ns: column(1),
        ratio: within(&|r| r[fastest + 2] / r[0]),
        checking_ratio: within(&|r| r[fastest + 2] / (r[0] - r[1]).max(1.0)),
        bare_ns,
        fastest,
        rounds,
    }
}
