//! The DynamoDB suppression list, in a [`DynamoStore`]'s table.

use std::collections::HashMap;
use std::time::SystemTime;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{Put, TransactWriteItem};
use futures_util::{StreamExt, TryFutureExt};

use super::{
    Applied, Change, EVENT_RETENTION, Scope, StoreError, SuppressionEntry, SuppressionListing, SuppressionPage,
    SuppressionStore, bounded,
};
use crate::PhoneNumber;
use crate::redact::mask_phone_number;
use crate::store::dynamodb::{DynamoStore, FREE, Item, Written, attr, number, ttl_seconds};
use crate::store::{later, millis};
use futures_util::future::BoxFuture;

/// What an entry's `pk` starts with.
const ENTRY: &str = "suppression#";
/// What an applied event's `pk` starts with.
const EVENT: &str = "suppression-event#";
/// The value of an opt-out's `suppressed` attribute (its partition in the `suppressed` index).
const OPTED_OUT: &str = "opted-out";
/// The recipients whose changes one `apply` writes at once.
const CONCURRENCY: usize = 16;
/// The most times a change is tried again after a transaction conflict.
const MAX_CONFLICTS: usize = 3;
/// The most index reads of one page.
const MAX_ROUNDS: usize = 64;

/// A suppression list in DynamoDB, in a [`DynamoStore`]'s table, with its client and timeouts:
/// one item per recipient and scope, `pk` = `suppression#<recipient> <scope>` (a space sorts
/// before every digit, so `pk` order is recipient, then scope, order), with `recipient`,
/// `scope`, `at` (epoch milliseconds), `reason`, `event` (the webhook event's dedupe key, when
/// there was one) and, for an opt-out, `suppressed` = `opted-out`, which puts it in the sparse
/// `suppressed` index that orders listings. An event's change, once applied, is remembered at
/// `suppression-event#<recipient> <event>` for [`EVENT_RETENTION`].
///
/// A change is one conditional `PutItem` (newer than the entry, by
/// [`supersedes`](super::supersedes)); a change with an event is one transaction of that write
/// and the event's (absent or expired). An `apply` writes the changes of up to 16 recipients at
/// once, each recipient's in order. `check` reads each scope's item, strongly consistent, at
/// once. The `suppressed` index has one partition (its order is the listing's), so a large
/// import of opt-outs shares one index partition's write rate (about 1,000 items a second): one
/// faster than that is throttled, a store error after the SDK's retries, and importing again is
/// safe. Cheap to clone.
///
/// ```no_run
/// # async fn example() -> Result<(), sms_sdk::store::StoreError> {
/// use sms_sdk::store::dynamodb::DynamoStore;
/// use sms_sdk::store::suppression::DynamoSuppressionStore;
///
/// let list = DynamoSuppressionStore::new(DynamoStore::connect("dynamodb://sms-sdk").await?);
/// # let _ = list; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DynamoSuppressionStore {
    store: DynamoStore,
}

impl DynamoSuppressionStore {
    /// The list in `store`'s table.
    #[must_use]
    pub fn new(store: DynamoStore) -> Self {
        Self { store }
    }

    /// Applies one change at `now`.
    async fn apply_one(&self, change: &Change, now: SystemTime) -> Result<Applied, StoreError> {
        let entry = self.entry_put(change)?;
        let Some(event) = change.event_key() else {
            let put = self.put(entry);
            let written = self.store.conditional("apply", put.send(), |_| None).await?;
            return Ok(if matches!(written, Written::Yes) { Applied::Recorded } else { Applied::Stale });
        };
        let event = self.event_put(change.recipient(), event, now)?;
        for _ in 0..MAX_CONFLICTS {
            let transaction = self
                .store
                .client
                .transact_write_items()
                .transact_items(TransactWriteItem::builder().put(event.clone()).build())
                .transact_items(TransactWriteItem::builder().put(entry.clone()).build());
            let what = "apply";
            let reasons = self
                .store
                .timeouts()
                .operation(
                    &self.store.place,
                    what,
                    Box::pin(async {
                        match crate::store::dynamodb::quiet(transaction.send()).await {
                            Ok(_) => Ok(None),
                            Err(SdkError::ServiceError(failure))
                                if failure.err().is_transaction_canceled_exception() =>
                            {
                                let error = failure.into_err();
                                let canceled = if let TransactWriteItemsError::TransactionCanceledException(e) = error {
                                    e.cancellation_reasons
                                } else {
                                    None
                                };
                                Ok(Some(canceled.unwrap_or_default().into_iter().map(|r| r.code).collect::<Vec<_>>()))
                            }
                            Err(error) => Err(self.store.error(what, &error)),
                        }
                    }),
                )
                .await?;
            let Some(codes) = reasons else { return Ok(Applied::Recorded) };
            let failed = |i: usize| codes.get(i).and_then(Option::as_deref) == Some("ConditionalCheckFailed");
            if failed(0) {
                return Ok(Applied::Replayed);
            }
            if failed(1) {
                // Stale: the event is applied all the same, so its replay is told apart.
                let put = self.put(event);
                let written = self.store.conditional("apply", put.send(), |_| None).await?;
                return Ok(if matches!(written, Written::Yes) { Applied::Stale } else { Applied::Replayed });
            }
            // A conflict with a concurrent transaction on the same items: once more.
        }
        Err(StoreError::new(format!("apply: the change conflicted with others {MAX_CONFLICTS} times"))
            .at(&self.store.place))
    }

    /// Applies the changes of one recipient, `members` of `changes`, in order.
    async fn apply_in_order(
        &self,
        changes: &[Change],
        members: Vec<usize>,
        now: SystemTime,
    ) -> Result<Vec<(usize, Applied)>, StoreError> {
        let mut answers = Vec::with_capacity(members.len());
        for i in members {
            if let Some(change) = changes.get(i) {
                answers.push((i, Box::pin(self.apply_one(change, now)).await?));
            }
        }
        Ok(answers)
    }

    /// A `PutItem` of `put`'s item under its condition.
    fn put(&self, put: Put) -> aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder {
        self.store
            .client
            .put_item()
            .table_name(put.table_name)
            .set_item(Some(put.item))
            .set_condition_expression(put.condition_expression)
            .set_expression_attribute_names(put.expression_attribute_names)
            .set_expression_attribute_values(put.expression_attribute_values)
    }

    /// The conditional write of `change`'s entry: when it is newer than the entry there.
    fn entry_put(&self, change: &Change) -> Result<Put, StoreError> {
        let (recipient, scope) = (change.recipient().as_str(), change.scope().key()?);
        let mut item = HashMap::from([
            ("pk".to_owned(), attr(format!("{ENTRY}{recipient} {scope}"))),
            ("recipient".to_owned(), attr(recipient)),
            ("scope".to_owned(), attr(scope)),
            ("at".to_owned(), number(change.at_millis())),
            ("reason".to_owned(), attr(change.reason())),
        ]);
        if let Some(event) = change.event_key() {
            item.insert("event".to_owned(), attr(event));
        }
        let suppresses = change.action().suppresses();
        let condition = if suppresses {
            item.insert("suppressed".to_owned(), attr(OPTED_OUT));
            // A tie goes to the opt-out.
            "attribute_not_exists(pk) OR #at < :at OR (#at = :at AND attribute_not_exists(#sup))"
        } else {
            "attribute_not_exists(pk) OR #at < :at"
        };
        let put = Put::builder().table_name(&*self.store.table).set_item(Some(item)).condition_expression(condition);
        let put = if suppresses { put.expression_attribute_names("#sup", "suppressed") } else { put };
        put.expression_attribute_names("#at", "at")
            .expression_attribute_values(":at", number(change.at_millis()))
            .build()
            .map_err(StoreError::new)
    }

    /// The conditional write of an applied event: when it is absent or expired at `now`.
    fn event_put(&self, recipient: &PhoneNumber, event: &str, now: SystemTime) -> Result<Put, StoreError> {
        let until = millis(later(now, EVENT_RETENTION));
        let item = HashMap::from([
            ("pk".to_owned(), attr(format!("{EVENT}{} {event}", recipient.as_str()))),
            ("until".to_owned(), number(until)),
            ("ttl".to_owned(), number(ttl_seconds(until))),
        ]);
        Put::builder()
            .table_name(&*self.store.table)
            .set_item(Some(item))
            .condition_expression(FREE)
            .expression_attribute_names("#until", "until")
            .expression_attribute_values(":now", number(millis(now)))
            .build()
            .map_err(StoreError::new)
    }
}

/// The entry of an item, `None` for an opt-in.
fn entry(item: &Item) -> Result<Option<SuppressionEntry>, StoreError> {
    let recipient = item.text("recipient").unwrap_or_default();
    let key = mask_phone_number(recipient);
    let corrupt = || StoreError::corrupt(&key, "a suppression item does not parse");
    let (Some(scope), Some(at)) = (item.text("scope"), item.checked_number(&key, "at")?) else { return Err(corrupt()) };
    if item.text("suppressed").is_none() {
        return Ok(None);
    }
    let reason = item.text("reason").ok_or_else(corrupt)?.to_owned();
    SuppressionEntry::read(recipient, scope, at, reason, item.text("event").map(str::to_owned)).map(Some)
}

impl SuppressionStore for DynamoSuppressionStore {
    fn apply<'a>(&'a self, changes: &'a [Change], now: SystemTime) -> BoxFuture<'a, Result<Vec<Applied>, StoreError>> {
        Box::pin(async move {
            bounded(changes.len(), 0)?;
            // Every scope is checked before anything is written: a refused batch writes nothing.
            for change in changes {
                change.scope().key()?;
            }
            // Each recipient's changes in order (an event is one per recipient); recipients at once.
            let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
            let mut group_of: HashMap<&str, usize> = HashMap::new();
            for (i, change) in changes.iter().enumerate() {
                let recipient = change.recipient().as_str();
                let group = *group_of.entry(recipient).or_insert_with(|| {
                    groups.push((recipient, Vec::new()));
                    groups.len() - 1
                });
                if let Some((_, members)) = groups.get_mut(group) {
                    members.push(i);
                }
            }
            let mut applied = vec![None; changes.len()];
            // Built first: a lazy `map` in the stream makes the future's `Send` unprovable.
            let tasks: Vec<_> =
                groups.into_iter().map(|(_, members)| self.apply_in_order(changes, members, now)).collect();
            let mut done = futures_util::stream::iter(tasks).buffer_unordered(CONCURRENCY);
            while let Some(answers) = done.next().await {
                for (i, answer) in answers? {
                    if let Some(slot) = applied.get_mut(i) {
                        *slot = Some(answer);
                    }
                }
            }
            applied.into_iter().map(|a| a.ok_or_else(|| StoreError::new("a change was not applied"))).collect()
        })
    }

    fn check<'a>(
        &'a self,
        recipient: &'a PhoneNumber,
        scopes: &'a [Scope],
    ) -> BoxFuture<'a, Result<Option<SuppressionEntry>, StoreError>> {
        Box::pin(async move {
            bounded(0, scopes.len())?;
            let keys = scopes.iter().map(Scope::key).collect::<Result<Vec<_>, _>>()?;
            let reads = keys.iter().map(|scope| {
                let read = self
                    .store
                    .client
                    .get_item()
                    .table_name(&*self.store.table)
                    .key("pk", attr(format!("{ENTRY}{} {scope}", recipient.as_str())))
                    .consistent_read(true);
                self.store.call("check", read.send()).map_ok(|output| output.item.map(Item))
            });
            let mut found: Option<SuppressionEntry> = None;
            for item in futures_util::future::try_join_all(reads).await?.into_iter().flatten() {
                if let Some(entry) = entry(&item)?
                    && found.as_ref().is_none_or(|f| f.at < entry.at)
                {
                    found = Some(entry);
                }
            }
            Ok(found)
        })
    }

    fn list(&self, page: SuppressionPage) -> BoxFuture<'_, Result<SuppressionListing, StoreError>> {
        Box::pin(async move {
            let size = page.size();
            let mut after = page.after.as_ref().map(|c| format!("{ENTRY}{} {}", c.recipient, c.scope));
            let mut entries = Vec::new();
            for _ in 0..MAX_ROUNDS {
                let mut query = self
                    .store
                    .client
                    .query()
                    .table_name(&*self.store.table)
                    .index_name("suppressed")
                    .expression_attribute_names("#s", "suppressed")
                    .expression_attribute_values(":s", attr(OPTED_OUT))
                    .limit(i32::try_from(size - entries.len()).unwrap_or(i32::MAX));
                query = match &after {
                    Some(pk) => query
                        .key_condition_expression("#s = :s AND pk > :after")
                        .expression_attribute_values(":after", attr(pk.clone())),
                    None => query.key_condition_expression("#s = :s"),
                };
                let output = self.store.call("list", query.send()).await?;
                for item in output.items.unwrap_or_default().into_iter().map(Item) {
                    after = item.text("pk").map(str::to_owned);
                    if let Some(entry) = entry(&item)? {
                        entries.push(entry);
                        if entries.len() >= size {
                            return SuppressionListing::of(entries, size);
                        }
                    }
                }
                if output.last_evaluated_key.is_none() {
                    return Ok(SuppressionListing { entries, next: None });
                }
            }
            // Out of rounds (every index item is an opt-out, so a page of them is full sooner).
            SuppressionListing::of(entries, size)
        })
    }
}
