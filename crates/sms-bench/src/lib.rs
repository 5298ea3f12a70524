//! The measuring harness of `scripts/bench.sh` (not published): a static local Twilio responder
//! (`sms-bench-responder`), the load generator that measures raw `reqwest`, `Client::send` and the
//! stores against it, and `sms-sdk serve` (the command, run as a child process) receiving webhooks,
//! and writes `BENCHMARKS.md` (`sms-bench-load`), and an allocation counter
//! (`sms-bench-allocs`). `scripts/bench.sh` builds and runs them all; see `BENCHMARKS.md`.
//!
//! Benchmarks are not tests: nothing here runs under `cargo test`.

pub mod stats;
pub mod usage;
pub mod wire;
