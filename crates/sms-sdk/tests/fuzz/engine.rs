//! A small seeded fuzzer for stable Rust (no `cargo fuzz`): a generator and mutator over bytes,
//! a loop that runs a target on each input under the counting allocator, and a linear-time check.
//!
//! How many executions (`SMS_SDK_FUZZ_CASES` wins; `SMS_SDK_LONG=1` means 10,000,000 per target;
//! otherwise the CI count the target names) and from which seed (`SMS_SDK_FUZZ_SEED`, else a fixed
//! one per target, so CI runs the same inputs every time) come from the environment. Every case
//! has its own generator seeded from (seed, index); a failing case prints both and the variables
//! that replay it alone (`SMS_SDK_FUZZ_FIRST` is the first index).
//!
//! Shared by the library's fuzz binary and the command's (`#[path]`): each binary installs
//! `stats_alloc` as its global allocator and passes it to [`Fuzz::run`].

#![allow(dead_code)] // each binary uses a part

use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use stats_alloc::{Region, StatsAlloc};

/// The executions per target of a long run.
pub(crate) const LONG_CASES: u64 = 10_000_000;

/// One target at a time in a binary: allocations are counted for the whole process.
static EXCLUSIVE: Mutex<()> = Mutex::new(());

/// Holds the binary to one measuring test at a time (a failed test does not poison it).
pub(crate) fn exclusive() -> MutexGuard<'static, ()> {
    EXCLUSIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    let value = value.trim().replace('_', "");
    Some(value.parse().unwrap_or_else(|_| panic!("{name}={value:?} is not a whole number")))
}

/// Whether a long run was asked for (`SMS_SDK_LONG=1`).
pub(crate) fn long() -> bool {
    std::env::var("SMS_SDK_LONG").is_ok_and(|v| v == "1")
}

/// The case count of a target whose CI count is `ci`: `SMS_SDK_FUZZ_CASES`, else the long count
/// with `SMS_SDK_LONG=1`, else `ci`.
pub(crate) fn cases(ci: u64) -> u64 {
    env_u64("SMS_SDK_FUZZ_CASES").unwrap_or(if long() { LONG_CASES } else { ci })
}

/// A fixed 64-bit hash (FNV-1a) of a name: the default seed of a target.
fn fnv(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// SplitMix64: the seed of case `index`.
fn case_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What one execution may allocate: `per_byte` times the input size plus `fixed` bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    pub(crate) per_byte: usize,
    pub(crate) fixed: usize,
}

impl Budget {
    pub(crate) const fn new(per_byte: usize, fixed: usize) -> Self {
        Self { per_byte, fixed }
    }

    fn allows(self, size: usize, allocated: usize) -> bool {
        allocated <= self.per_byte.saturating_mul(size).saturating_add(self.fixed)
    }
}

/// A fuzz target: its name, CI case count, and what the run found.
pub(crate) struct Fuzz {
    pub(crate) name: &'static str,
    pub(crate) cases: u64,
    pub(crate) seed: u64,
    pub(crate) first: u64,
}

/// What a run did, printed at its end (the numbers of RELIABILITY.md).
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) executions: u64,
    pub(crate) largest_input: usize,
    pub(crate) most_allocated: usize,
    /// The highest allocated/size ratio seen on inputs of at least 1 KiB.
    pub(crate) worst_ratio: f64,
    pub(crate) slowest: Duration,
    /// Bytes allocated by the executions and not freed once their results were dropped (summed
    /// over the run): one-time initializations only, or a leak.
    pub(crate) retained: usize,
}

/// What all the executions of a run may keep allocated after their results are dropped: a
/// few one-time initializations (and the test harness's own noise); a leak of even a few bytes
/// per execution exceeds it in a long run.
const MOST_RETAINED: usize = 256 * 1024;

impl Fuzz {
    /// The target `name` with `ci` cases in CI (see the module docs for the environment).
    pub(crate) fn new(name: &'static str, ci: u64) -> Self {
        let seed = env_u64("SMS_SDK_FUZZ_SEED").unwrap_or_else(|| fnv(name));
        Self { name, cases: cases(ci), seed, first: env_u64("SMS_SDK_FUZZ_FIRST").unwrap_or(0) }
    }

    /// Runs `execute` on `cases` inputs from `generate`. Each execution must not panic, must
    /// allocate within the budget `check` returns for its input size and result (the result is
    /// measured too, then dropped), and must pass `check`'s own assertions. Any failure prints
    /// the input, its size, the seed and the case index, then fails the test.
    pub(crate) fn run<I: Debug, R>(
        &self,
        allocator: &'static StatsAlloc<std::alloc::System>,
        generate: impl Fn(&mut fastrand::Rng) -> I,
        size: impl Fn(&I) -> usize,
        execute: impl Fn(&I) -> R,
        check: impl Fn(&I, &R) -> Result<Budget, String>,
    ) -> Stats {
        let _exclusive = exclusive();
        let mut stats = Stats::default();
        let started = Instant::now();
        for index in self.first..self.first.saturating_add(self.cases) {
            let mut rng = fastrand::Rng::with_seed(case_seed(self.seed, index));
            let input = generate(&mut rng);
            let bytes = size(&input);
            let region = Region::new(allocator);
            let began = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| execute(&input)));
            let took = began.elapsed();
            let allocated = region.change().bytes_allocated;
            let failure = match &result {
                Err(_) => Some("it panicked".to_owned()),
                Ok(result) => match check(&input, result) {
                    Err(message) => Some(message),
                    // The allocator's count is the whole process's: another thread (libtest
                    // printing a finished test's output, say) may allocate meanwhile. Over budget
                    // twice running is the input's own doing.
                    Ok(budget)
                        if !budget.allows(bytes, allocated)
                            && !budget.allows(bytes, again(allocator, &execute, &input)) =>
                    {
                        Some(format!("{allocated} bytes allocated for {bytes} bytes of input ({budget:?}), and again"))
                    }
                    Ok(_) if took > Duration::from_secs(10) => Some(format!("one execution took {took:?}")),
                    Ok(_) => None,
                },
            };
            if let Some(failure) = failure {
                self.report(index, &input, bytes, &failure);
                match result {
                    Err(panic) => resume_unwind(panic),
                    Ok(_) => panic!("fuzz target {}: {failure}", self.name),
                }
            }
            drop(result);
            let after = region.change();
            stats.retained =
                stats.retained.saturating_add(after.bytes_allocated.saturating_sub(after.bytes_deallocated));
            if stats.retained > MOST_RETAINED {
                self.report(index, &input, bytes, "a leak");
                panic!(
                    "fuzz target {}: {} bytes stayed allocated after {} executions",
                    self.name,
                    stats.retained,
                    stats.executions + 1
                );
            }
            stats.executions += 1;
            stats.largest_input = stats.largest_input.max(bytes);
            stats.most_allocated = stats.most_allocated.max(allocated);
            if bytes >= 1024 {
                #[allow(clippy::cast_precision_loss)] // a ratio for a report
                let ratio = allocated as f64 / bytes as f64;
                stats.worst_ratio = stats.worst_ratio.max(ratio);
            }
            stats.slowest = stats.slowest.max(took);
        }
        println!(
            "fuzz {}: {} executions in {:.1?} (seed {}), largest input {} bytes, most allocated {} bytes, worst ratio {:.2} bytes per input byte (inputs of 1 KiB or more), slowest {:.1?}, {} bytes never freed",
            self.name,
            stats.executions,
            started.elapsed(),
            self.seed,
            stats.largest_input,
            stats.most_allocated,
            stats.worst_ratio,
            stats.slowest,
            stats.retained
        );
        stats
    }

    fn report(&self, index: u64, input: &dyn Debug, bytes: usize, failure: &str) {
        let mut shown = format!("{input:?}");
        if shown.len() > 4000 {
            let mut end = 4000;
            while !shown.is_char_boundary(end) {
                end -= 1;
            }
            shown.truncate(end);
            shown.push('…');
        }
        eprintln!(
            "fuzz target {} failed on case {index} of seed {} ({bytes} bytes of input): {failure}\ninput: {shown}\nreplay it alone: SMS_SDK_FUZZ_SEED={} SMS_SDK_FUZZ_FIRST={index} SMS_SDK_FUZZ_CASES=1 cargo test … {}",
            self.name, self.seed, self.seed, self.name
        );
    }
}

/// Asserts that `execute` takes about linear time in the size of its input: the best of seven
/// runs on the input of size `8n` takes at most 24 times the best of seven on size `n` (8 for
/// linear work, times 3 for noise; quadratic work would take 64 times), plus 2 ms. `n` is
/// doubled (up to 8 times) while the small input takes under 2 ms, so that a fast build or
/// machine still measures something. On a loaded machine one measurement can be unlucky: it is
/// taken up to three times, and fails only when all three exceed the bound.
pub(crate) fn assert_linear<I>(what: &str, n: usize, make: impl Fn(usize) -> I, execute: impl Fn(&I)) {
    let best = |input: &I| {
        (0..7)
            .map(|_| {
                let started = Instant::now();
                execute(input);
                started.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let (mut size, mut small) = (n, make(n));
    while size < 8 * n && best(&small) < Duration::from_millis(2) {
        size *= 2;
        small = make(size);
    }
    let large = make(8 * size);
    let mut tries = Vec::new();
    for _ in 0..3 {
        let (t_small, t_large) = (best(&small), best(&large));
        println!("linear {what}: {size} → {t_small:.1?}, {} → {t_large:.1?}", 8 * size);
        if t_large <= t_small * 24 + Duration::from_millis(2) {
            return;
        }
        tries.push((t_small, t_large));
    }
    panic!("{what}: 8 times the input took more than 24 times as long, three times: {tries:?}");
}

/// Byte strings that matter to the decoders under test (separators, escapes, huge numbers).
pub(crate) const TOKENS: &[&[u8]] = &[
    b"&",
    b"=",
    b"&&",
    b"%",
    b"%2",
    b"%25",
    b"%FF",
    b"%00",
    b"%E2%82%AC",
    b"+",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"\\u",
    b"\\ud800",
    b"\\udc00\\ud83d",
    b"\\\"",
    b":",
    b",",
    b"null",
    b"true",
    b"-0",
    b"1e999999",
    b"-1e-400",
    b"18446744073709551616",
    b"99999999999999999999999999",
    b"9223372036854775807",
    b"-9223372036854775809",
    b"NaN",
    b"\r\n",
    b"\0",
    b"\xff\xfe",
    b"\xed\xa0\x80",
    b"\xf0\x9f\x98\x80",
    b"://",
    b"?",
    b"#",
    b"@",
    b":8443",
    b"[::1]",
    b".",
    b"..",
    b"Bearer ",
];

/// An interesting byte (separators, controls, the edges of UTF-8).
fn interesting_byte(rng: &mut fastrand::Rng) -> u8 {
    const BYTES: &[u8] = b"\0\x7f\x80\xbf\xc0\xff%&=+{}[]\",:\\ \t\r\n.?#@/0123456789";
    BYTES.get(rng.usize(..BYTES.len())).copied().unwrap_or(0)
}

/// A random range of `data` (possibly empty).
fn range(rng: &mut fastrand::Rng, len: usize) -> (usize, usize) {
    let start = rng.usize(..=len);
    let most = (len - start).min(if rng.u8(..8) == 0 { len } else { 32 });
    (start, start + rng.usize(..=most))
}

/// Applies one to eight random mutations to `data`, keeping it at most `max_len` bytes:
/// flipped bits, interesting bytes, inserted tokens, deleted, duplicated or repeated ranges
/// (many parameters, deep nesting), random bytes, truncation, and splices of `other`.
pub(crate) fn mutate(rng: &mut fastrand::Rng, data: &mut Vec<u8>, other: &[u8], max_len: usize) {
    let rounds = if rng.u8(..4) == 0 { rng.usize(1..=8) } else { 1 };
    for _ in 0..rounds {
        let len = data.len();
        match rng.u8(..10) {
            0 if len > 0 => {
                let at = rng.usize(..len);
                data[at] ^= 1 << rng.u8(..8);
            }
            1 if len > 0 => {
                let at = rng.usize(..len);
                data[at] = if rng.bool() { interesting_byte(rng) } else { rng.u8(..) };
            }
            2 => {
                let token = TOKENS[rng.usize(..TOKENS.len())];
                let at = rng.usize(..=len);
                data.splice(at..at, token.iter().copied());
            }
            3 => {
                let (start, end) = range(rng, len);
                data.drain(start..end);
            }
            4 => {
                // A range repeated: a few times, or up to the size limit.
                let (start, end) = range(rng, len);
                let chunk = data[start..end].to_vec();
                if !chunk.is_empty() {
                    let room = max_len.saturating_sub(len) / chunk.len();
                    let times = if rng.u8(..4) == 0 { room } else { rng.usize(1..=16).min(room) };
                    let repeated: Vec<u8> = chunk.iter().copied().cycle().take(chunk.len() * times).collect();
                    data.splice(end..end, repeated);
                }
            }
            5 => {
                let at = rng.usize(..=len);
                let count = rng.usize(1..=8);
                let bytes: Vec<u8> = (0..count).map(|_| rng.u8(..)).collect();
                data.splice(at..at, bytes);
            }
            6 if len > 0 => data.truncate(rng.usize(..len)),
            7 if !other.is_empty() => {
                let (start, end) = range(rng, other.len());
                let at = rng.usize(..=len);
                data.splice(at..at, other[start..end].iter().copied());
            }
            8 => {
                // A token repeated many times (long keys, deep nesting, many separators).
                let token = TOKENS[rng.usize(..TOKENS.len())];
                let times = rng.usize(1..=(max_len.saturating_sub(len) / token.len()).clamp(1, 4096));
                let at = rng.usize(..=len);
                data.splice(at..at, token.iter().copied().cycle().take(token.len() * times));
            }
            _ => {
                // Digits replaced by a huge number.
                if let Some(at) = data.iter().position(u8::is_ascii_digit) {
                    let end = data[at..].iter().position(|b| !b.is_ascii_digit()).map_or(len, |e| at + e);
                    data.splice(at..end, b"18446744073709551616999".iter().copied());
                }
            }
        }
        data.truncate(max_len);
    }
}

/// A size limit for one case: mostly small inputs (fast), sometimes up to `large`.
pub(crate) fn max_len(rng: &mut fastrand::Rng, large: usize) -> usize {
    match rng.u8(..64) {
        0 => large,
        1..=4 => 64 * 1024,
        _ => 4096,
    }
}

/// Text from bytes, invalid UTF-8 replaced (URLs and header values are text).
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The bytes one more execution of `execute` on `input` allocates (its result dropped after).
fn again<I, R>(allocator: &'static StatsAlloc<std::alloc::System>, execute: &impl Fn(&I) -> R, input: &I) -> usize {
    let region = Region::new(allocator);
    let result = catch_unwind(AssertUnwindSafe(|| execute(input)));
    let allocated = region.change().bytes_allocated;
    drop(result);
    allocated
}
