//! The DynamoDB store's items: what a record's item holds, and reading one back as a [`Row`],
//! checked like every other store's.

use std::collections::HashMap;
use std::time::SystemTime;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::store::row::Row;
use crate::store::{Claim, ReservationId, State, StoreError, millis};

/// What a record's `pk` starts with.
pub(crate) const RECORD: &str = "record#";

/// The shards of the `unresolved` index.
pub(crate) const SHARDS: usize = 16;

/// An item as DynamoDB returned it.
#[derive(Debug, Clone)]
pub(crate) struct Item(pub(crate) HashMap<String, AttributeValue>);

impl Item {
    /// A string attribute; `None` when absent or not a string.
    pub(crate) fn text(&self, name: &str) -> Option<&str> {
        match self.0.get(name) {
            Some(AttributeValue::S(text)) => Some(text),
            _ => None,
        }
    }

    /// A string attribute of the item of `key`; absent is `None`, another type corrupt.
    pub(crate) fn checked_text(&self, key: &str, name: &str) -> Result<Option<String>, StoreError> {
        match self.0.get(name) {
            None => Ok(None),
            Some(AttributeValue::S(text)) => Ok(Some(text.clone())),
            Some(_) => Err(StoreError::corrupt(key, format_args!("{name} is not a string"))),
        }
    }

    /// A number attribute of the item of `key`, as an integer; absent is `None`, anything else
    /// corrupt.
    pub(crate) fn checked_number(&self, key: &str, name: &str) -> Result<Option<i64>, StoreError> {
        match self.0.get(name) {
            None => Ok(None),
            Some(AttributeValue::N(text)) => {
                text.parse().map(Some).map_err(|_| StoreError::corrupt(key, format_args!("{name} is not an integer")))
            }
            Some(_) => Err(StoreError::corrupt(key, format_args!("{name} is not a number"))),
        }
    }
}

/// A string attribute.
pub(crate) fn attr(text: impl Into<String>) -> AttributeValue {
    AttributeValue::S(text.into())
}

/// A number attribute.
pub(crate) fn number(value: i64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// The `ttl` (epoch seconds, rounded up) of an expiry in epoch milliseconds.
pub(crate) fn ttl_seconds(at_ms: i64) -> i64 {
    at_ms.div_euclid(1000) + i64::from(at_ms.rem_euclid(1000) != 0)
}

/// The `unresolved` index shard of `key`: `unresolved#<n>`, `n` the 32-bit FNV-1a hash of the
/// key's bytes modulo 16. Part of the stored format (a listing queries every shard).
pub(crate) fn shard(key: &str) -> String {
    let hash = key.bytes().fold(0x811c_9dc5_u32, |hash, byte| (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193));
    // A `u32` fits in a `usize` on every target the crate builds for.
    shard_name(usize::try_from(hash).unwrap_or(0) % SHARDS)
}

/// The name of shard `n` of the `unresolved` index.
pub(crate) fn shard_name(n: usize) -> String {
    format!("unresolved#{n}")
}

/// The item a reservation writes.
pub(crate) fn record_item(
    key: &str,
    claim: Claim<'_>,
    id: &ReservationId,
    now: SystemTime,
) -> HashMap<String, AttributeValue> {
    let mut item = HashMap::with_capacity(7);
    item.insert("pk".to_owned(), attr(format!("{RECORD}{key}")));
    item.insert("state".to_owned(), attr(State::Reserved.as_str()));
    item.insert("fingerprint".to_owned(), attr(claim.fingerprint.as_str()));
    item.insert("reservation_id".to_owned(), attr(id.as_str()));
    item.insert("reserved_at".to_owned(), number(millis(now)));
    item.insert("unresolved".to_owned(), attr(shard(key)));
    if let Some(to) = claim.to {
        item.insert("recipient".to_owned(), attr(to));
    }
    item
}

/// The row of the record item of `key`, nothing trusted yet.
pub(crate) fn row(key: &str, item: &Item) -> Result<Row, StoreError> {
    Ok(Row {
        key: key.to_owned(),
        state: item.checked_text(key, "state")?,
        fingerprint: item.checked_text(key, "fingerprint")?,
        reservation_id: item.checked_text(key, "reservation_id")?,
        reserved_at: item.checked_number(key, "reserved_at")?,
        payload: item.checked_text(key, "record")?,
        expires_at: item.checked_number(key, "expires_at")?,
        recipient: item.checked_text(key, "recipient")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_rounds_up_to_the_second() {
        assert_eq!(ttl_seconds(0), 0);
        assert_eq!(ttl_seconds(1), 1);
        assert_eq!(ttl_seconds(1000), 1);
        assert_eq!(ttl_seconds(1001), 2);
    }

    #[test]
    fn shards_are_fnv1a_of_the_key_and_stable() {
        // FNV-1a of "" is the offset basis, 2166136261 = 16 × 135383516 + 5.
        assert_eq!(shard(""), "unresolved#5");
        // "a": (0x811c9dc5 ^ 0x61) × 0x01000193 mod 2^32 = 0xe40c292c, 12 modulo 16.
        assert_eq!(shard("a"), "unresolved#12");
        assert!((0..SHARDS).map(shard_name).any(|s| s == shard("order:123")));
    }

    #[test]
    fn attributes_of_the_wrong_type_are_corrupt() {
        let mut item = Item(HashMap::new());
        item.0.insert("state".into(), AttributeValue::N("1".into()));
        item.0.insert("reserved_at".into(), AttributeValue::N("1.5".into()));
        item.0.insert("expires_at".into(), AttributeValue::S("soon".into()));
        assert!(item.checked_text("k", "state").unwrap_err().is_corrupt());
        for name in ["reserved_at", "expires_at"] {
            assert!(item.checked_number("k", name).unwrap_err().is_corrupt());
        }
        assert_eq!(item.checked_text("k", "absent").unwrap(), None);
    }
}
