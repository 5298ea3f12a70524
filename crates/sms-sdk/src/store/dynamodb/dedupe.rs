//! The DynamoDB store's webhook dedupe keys: one item per key, `pk` = `dedupe#<key>`, with
//! `until` (epoch milliseconds: the end of a claim's lease or of a done key's retention), `ttl`
//! (the same in epoch seconds, for DynamoDB's deletion) and, while claimed, `claim` (the claim's
//! token). An item past its `until` counts as absent. Times are the caller's (`now`).

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use aws_sdk_dynamodb::types::{AttributeValue, ReturnValuesOnConditionCheckFailure};

use super::item::{attr, number, ttl_seconds};
use super::{DynamoStore, FREE, Written};
use crate::store::{ClaimToken, DedupeClaim, DedupeStore, StoreError, later, millis};
use futures_util::future::BoxFuture;

/// What a dedupe key's `pk` starts with.
const DEDUPE: &str = "dedupe#";

impl DynamoStore {
    /// The item of `key` until `now + span`, a claim of `token` or a done sighting.
    fn dedupe_item(
        key: &str,
        now: SystemTime,
        span: Duration,
        token: Option<&ClaimToken>,
    ) -> HashMap<String, AttributeValue> {
        let until = millis(later(now, span));
        let mut item = HashMap::from([
            ("pk".to_owned(), attr(format!("{DEDUPE}{key}"))),
            ("until".to_owned(), number(until)),
            ("ttl".to_owned(), number(ttl_seconds(until))),
        ]);
        if let Some(token) = token {
            item.insert("claim".to_owned(), attr(token.as_str()));
        }
        item
    }

    /// Writes `item` if the key is free at `now`; the old item otherwise.
    async fn put_if_free(
        &self,
        what: &str,
        item: HashMap<String, AttributeValue>,
        now: SystemTime,
    ) -> Result<Written, StoreError> {
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(item))
            .condition_expression(FREE)
            .expression_attribute_names("#until", "until")
            .expression_attribute_values(":now", number(millis(now)))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        self.conditional(what, put.send(), super::old_put).await
    }
}

impl DedupeStore for DynamoStore {
    fn first_seen_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let written = self.put_if_free("first_seen", Self::dedupe_item(key, now, retention, None), now).await?;
            Ok(matches!(written, Written::Yes))
        })
    }

    fn claim_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        lease: Duration,
    ) -> BoxFuture<'a, Result<DedupeClaim, StoreError>> {
        Box::pin(async move {
            let token = ClaimToken::new();
            let written = self.put_if_free("claim", Self::dedupe_item(key, now, lease, Some(&token)), now).await?;
            Ok(match written {
                Written::Yes => DedupeClaim::Claimed(token),
                Written::No(Some(old)) => match old.text("claim") {
                    // The SDK re-sent this very call after a lost reply: the claim is ours.
                    Some(held) if held == token.as_str() => DedupeClaim::Claimed(token),
                    Some(_) => DedupeClaim::InFlight,
                    None => DedupeClaim::Done,
                },
                Written::No(None) => DedupeClaim::InFlight,
            })
        })
    }

    fn commit_at<'a>(
        &'a self,
        key: &'a str,
        now: SystemTime,
        retention: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let put = self
                .client
                .put_item()
                .table_name(&*self.table)
                .set_item(Some(Self::dedupe_item(key, now, retention, None)));
            self.call("commit", put.send()).await?;
            Ok(())
        })
    }

    fn release<'a>(&'a self, key: &'a str, token: &'a ClaimToken) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let delete = self
                .client
                .delete_item()
                .table_name(&*self.table)
                .key("pk", attr(format!("{DEDUPE}{key}")))
                .condition_expression("#claim = :token")
                .expression_attribute_names("#claim", "claim")
                .expression_attribute_values(":token", attr(token.as_str()));
            let written = self.conditional("release", delete.send(), |_| None).await?;
            Ok(matches!(written, Written::Yes))
        })
    }
}
