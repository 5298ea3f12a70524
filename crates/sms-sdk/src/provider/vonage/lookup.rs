//! Vonage lookups: the Messages API has no fetch or list endpoint, so every lookup answers
//! [`LookupOutcome::Unsupported`] (Vonage's separate Reports API is not used).

use std::time::Duration;

use super::{NAME, Vonage};
use crate::lookup::{Lookup, LookupOutcome};
use futures_util::future::BoxFuture;

impl Lookup for Vonage {
    fn lookup_provider(&self) -> &'static str {
        NAME
    }

    fn fetch<'a>(&'a self, _id: &'a str, _timeout: Duration) -> BoxFuture<'a, LookupOutcome> {
        Box::pin(async { LookupOutcome::Unsupported })
    }
}
