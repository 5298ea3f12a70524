//! The DynamoDB store's correlation index: one item per reference, `pk` =
//! `reference#<reference>`, holding the idempotency `key`, `until` (epoch milliseconds) and
//! `ttl` (the same in seconds). A reference past its `until` is not found.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use super::DynamoStore;
use super::item::{Item, attr, number, ttl_seconds};
use crate::store::{ReferenceIndex, StoreError, later, millis};
use futures_util::future::BoxFuture;

/// What a reference's `pk` starts with.
const REFERENCE: &str = "reference#";

impl ReferenceIndex for DynamoStore {
    fn remember_reference<'a>(
        &'a self,
        reference: &'a str,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let until = millis(later(now, retention));
            let item = HashMap::from([
                ("pk".to_owned(), attr(format!("{REFERENCE}{reference}"))),
                ("key".to_owned(), attr(key)),
                ("until".to_owned(), number(until)),
                ("ttl".to_owned(), number(ttl_seconds(until))),
            ]);
            let put = self.client.put_item().table_name(&*self.table).set_item(Some(item));
            self.call("remember_reference", put.send()).await?;
            Ok(())
        })
    }

    fn find_reference<'a>(
        &'a self,
        reference: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            let read = self
                .client
                .get_item()
                .table_name(&*self.table)
                .key("pk", attr(format!("{REFERENCE}{reference}")))
                .consistent_read(true);
            let Some(item) = self.call("find_reference", read.send()).await?.item.map(Item) else { return Ok(None) };
            let until = item.checked_number(reference, "until").map_err(|e| e.at(&self.place))?;
            if until.is_some_and(|until| until <= millis(now)) {
                return Ok(None);
            }
            item.checked_text(reference, "key").map_err(|e| e.at(&self.place))
        })
    }
}
