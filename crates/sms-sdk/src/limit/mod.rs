//! The limits on a client's requests: admission before each one (`admission`: requests in
//! flight per adapter, the queue timeout) and rate limits (`rate`, public), both waited for by
//! a send before its request and never counted as an attempt.

pub(crate) mod admission;
pub mod rate;
