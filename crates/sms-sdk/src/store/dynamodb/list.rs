//! The DynamoDB store's listing: the unresolved, reserved and unknown records from the sparse
//! `unresolved` index, shard by shard (by key within a shard); every record, or the accepted or
//! rejected ones, from a scan of the table in pages (by key within a page).
//!
//! A cursor is `i<shard>` or `i<shard>:<last pk listed>` for the index, `s:<last pk read>` for a
//! scan: a query goes on after the last key listed, a scan after the last item read.

use std::collections::HashMap;
use std::time::SystemTime;

use aws_sdk_dynamodb::types::AttributeValue;

use super::DynamoStore;
use super::item::{Item, RECORD, SHARDS, attr, row, shard_name};
use crate::store::{Entry, Filter, Listing, Page, State, StoreError, millis};

/// The most calls of one page: over a sparse table a page ends early, with a cursor.
const MAX_ROUNDS: usize = 64;
/// The items one scan call reads (before its filter).
const SCAN_LIMIT: i32 = 1000;

/// Where a listing goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cursor {
    /// In the index shard of this number, after this `pk`.
    Index(usize, Option<String>),
    /// In the table's scan, after this `pk`.
    Scan(Option<String>),
}

impl Cursor {
    fn parse(text: &str) -> Result<Self, StoreError> {
        let bad = || {
            StoreError::new(format!("{:?} is not a DynamoDB listing cursor", text.chars().take(64).collect::<String>()))
        };
        if let Some(pk) = text.strip_prefix("s:") {
            return Ok(Self::Scan(Some(pk.to_owned())));
        }
        let rest = text.strip_prefix('i').ok_or_else(bad)?;
        let (shard, after) = match rest.split_once(':') {
            Some((shard, after)) => (shard, Some(after.to_owned())),
            None => (rest, None),
        };
        let shard: usize = shard.parse().map_err(|_| bad())?;
        if shard >= SHARDS {
            return Err(bad());
        }
        Ok(Self::Index(shard, after))
    }

    fn text(&self) -> String {
        match self {
            Self::Index(shard, None) => format!("i{shard}"),
            Self::Index(shard, Some(after)) => format!("i{shard}:{after}"),
            Self::Scan(after) => format!("s:{}", after.as_deref().unwrap_or_default()),
        }
    }
}

/// Whether `filter` is answered from the `unresolved` index.
fn indexed(filter: Filter) -> bool {
    matches!(filter, Filter::Unresolved { .. } | Filter::State(State::Reserved | State::Unknown))
}

/// One page of the records matching `filter` at `now`.
pub(super) async fn page(
    store: &DynamoStore,
    filter: Filter,
    now: SystemTime,
    page: Page,
) -> Result<Listing, StoreError> {
    let start = match page.cursor.as_deref() {
        Some(text) => Cursor::parse(text).map_err(|e| e.at(&store.place))?,
        None if indexed(filter) => Cursor::Index(0, None),
        None => Cursor::Scan(None),
    };
    let limit = page.limit.max(1);
    let prefix = format!("{RECORD}{}", page.prefix);
    let (mut entries, next) = match start {
        Cursor::Index(shard, after) => index(store, filter, now, &prefix, limit, shard, after).await?,
        Cursor::Scan(after) => scan(store, filter, now, &prefix, limit, after).await?,
    };
    entries.sort_unstable_by(|a, b| a.key.cmp(&b.key));
    Ok(Listing { entries, next: next.map(|c| c.text()) })
}

/// The entry of a listed item, when it is live and matches.
fn entry(item: &Item, filter: Filter, now: SystemTime) -> Result<Option<Entry>, StoreError> {
    let Some(pk) = item.text("pk") else { return Err(StoreError::new("a listed item has no pk")) };
    let key = pk.strip_prefix(RECORD).unwrap_or(pk);
    let row = row(key, item)?;
    if !row.is_live(millis(now)) {
        return Ok(None);
    }
    let entry = row.entry()?;
    Ok(filter.matches(&entry.record, now).then_some(entry))
}

async fn index(
    store: &DynamoStore,
    filter: Filter,
    now: SystemTime,
    prefix: &str,
    limit: usize,
    mut shard: usize,
    mut after: Option<String>,
) -> Result<(Vec<Entry>, Option<Cursor>), StoreError> {
    let mut entries = Vec::new();
    for _ in 0..MAX_ROUNDS {
        if shard >= SHARDS {
            return Ok((entries, None));
        }
        let mut query = store
            .client
            .query()
            .table_name(&*store.table)
            .index_name("unresolved")
            .expression_attribute_names("#u", "unresolved")
            .expression_attribute_values(":u", attr(shard_name(shard)))
            .limit(i32::try_from(limit - entries.len()).unwrap_or(i32::MAX));
        query = match &after {
            Some(pk) => query
                .key_condition_expression("#u = :u AND pk > :after")
                .expression_attribute_values(":after", attr(pk.clone())),
            None => query
                .key_condition_expression("#u = :u AND begins_with(pk, :p)")
                .expression_attribute_values(":p", attr(prefix)),
        };
        let output = store.call("list", query.send()).await?;
        let mut done = output.last_evaluated_key.is_none();
        for item in output.items.unwrap_or_default().into_iter().map(Item) {
            let pk = item.text("pk").unwrap_or_default().to_owned();
            if !pk.starts_with(prefix) {
                // Past the prefix's keys: this shard is done.
                done = true;
                break;
            }
            if let Some(entry) = entry(&item, filter, now).map_err(|e| e.at(&store.place))? {
                entries.push(entry);
            }
            after = Some(pk);
            if entries.len() >= limit {
                return Ok((entries, Some(Cursor::Index(shard, after))));
            }
        }
        if done {
            (shard, after) = (shard + 1, None);
            if shard >= SHARDS {
                return Ok((entries, None));
            }
            if entries.len() >= limit {
                return Ok((entries, Some(Cursor::Index(shard, None))));
            }
        }
    }
    Ok((entries, Some(Cursor::Index(shard, after))))
}

async fn scan(
    store: &DynamoStore,
    filter: Filter,
    now: SystemTime,
    prefix: &str,
    limit: usize,
    mut after: Option<String>,
) -> Result<(Vec<Entry>, Option<Cursor>), StoreError> {
    let mut entries = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let mut scan = store
            .client
            .scan()
            .table_name(&*store.table)
            .consistent_read(true)
            .limit(SCAN_LIMIT)
            .expression_attribute_values(":p", attr(prefix))
            .set_exclusive_start_key(after.clone().map(|pk| HashMap::from([("pk".to_owned(), AttributeValue::S(pk))])));
        scan = match filter {
            Filter::State(state) => scan
                .filter_expression("begins_with(pk, :p) AND #s = :s")
                .expression_attribute_names("#s", "state")
                .expression_attribute_values(":s", attr(state.as_str())),
            Filter::All | Filter::Unresolved { .. } => scan.filter_expression("begins_with(pk, :p)"),
        };
        let output = store.call("list", scan.send()).await?;
        let last = output.last_evaluated_key.and_then(|key| match key.get("pk") {
            Some(AttributeValue::S(pk)) => Some(pk.clone()),
            _ => None,
        });
        for item in output.items.unwrap_or_default().into_iter().map(Item) {
            if entries.len() >= limit {
                // Go on after the last item taken.
                return Ok((entries, Some(Cursor::Scan(after))));
            }
            after = item.text("pk").map(str::to_owned);
            if let Some(entry) = entry(&item, filter, now).map_err(|e| e.at(&store.place))? {
                entries.push(entry);
            }
        }
        let Some(last) = last else { return Ok((entries, None)) };
        after = Some(last);
        if entries.len() >= limit {
            return Ok((entries, Some(Cursor::Scan(after))));
        }
    }
    Ok((entries, Some(Cursor::Scan(after))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_an_error() {
        for cursor in [
            Cursor::Index(0, None),
            Cursor::Index(15, Some("record#order:1:a".into())),
            Cursor::Scan(Some("record#x".into())),
        ] {
            assert_eq!(Cursor::parse(&cursor.text()).unwrap(), cursor);
        }
        for garbage in ["", "x", "i", "i16", "i-1", "ix:y", "s"] {
            assert!(Cursor::parse(garbage).is_err(), "{garbage:?}");
        }
    }
}
