//! The Redis store's correlation index: one string key per reference,
//! `<prefix>reference:<reference>`, holding the idempotency key, written with `SET … PX
//! <retention>` (so it is forgotten on the Redis server's clock, not at the `now` passed in).

use std::time::{Duration, SystemTime};

use super::{RedisStore, expiry_ms};
use crate::store::{ReferenceIndex, StoreError};
use futures_util::future::BoxFuture;

/// Where correlation references live under the prefix.
const REFERENCE_NAMESPACE: &str = "reference:";

impl RedisStore {
    fn reference_key(&self, reference: &str) -> String {
        format!("{}{REFERENCE_NAMESPACE}{reference}", self.prefix)
    }
}

impl ReferenceIndex for RedisStore {
    fn remember_reference<'a>(
        &'a self,
        reference: &'a str,
        key: &'a str,
        _now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut command = redis::cmd("SET");
            command.arg(self.reference_key(reference)).arg(key).arg("PX").arg(expiry_ms(retention));
            let _: Option<String> =
                self.run("remember_reference", command.query_async(&mut self.connection.clone())).await?;
            Ok(())
        })
    }

    fn find_reference<'a>(
        &'a self,
        reference: &'a str,
        _now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            let command = redis::cmd("GET").arg(self.reference_key(reference)).clone();
            self.run("find_reference", command.query_async(&mut self.connection.clone())).await
        })
    }
}
