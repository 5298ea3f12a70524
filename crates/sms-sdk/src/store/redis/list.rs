//! The Redis store's listing: `SCAN` in pages, the keys of each page in order.
//!
//! A cursor is `<scan cursor>` or `<scan cursor>:<last key listed>`: a page that fills up in the
//! middle of a `SCAN` batch asks for that batch again next time and skips what it has listed.
//! Listings follow `SCAN`'s guarantees: a key present all along is listed; one added or removed
//! meanwhile may be listed or not.

use std::time::SystemTime;

use super::{RECORD_NAMESPACE, RedisStore, live};
use crate::store::{Filter, Listing, Page, StoreError, millis};

/// The keys each `SCAN` call asks for.
const SCAN_COUNT: usize = 500;
/// The most `SCAN` calls of one page: over a sparse keyspace a page ends early, with a cursor.
const MAX_SCANS: usize = 64;

/// One page of the records matching `filter` at `now`.
pub(super) async fn page(
    store: &RedisStore,
    filter: Filter,
    now: SystemTime,
    page: Page,
) -> Result<Listing, StoreError> {
    let records = format!("{}{RECORD_NAMESPACE}", store.prefix);
    let pattern = format!("{}*", escape_glob(&format!("{records}{}", page.prefix)));
    let limit = page.limit.max(1);
    let (mut scan, mut after) = parse_cursor(page.cursor.as_deref()).map_err(|e| e.at(&store.place))?;
    let mut entries = Vec::new();
    for _ in 0..MAX_SCANS {
        let mut command = redis::cmd("SCAN");
        command.arg(scan).arg("MATCH").arg(&pattern).arg("COUNT").arg(SCAN_COUNT);
        let (next, mut keys): (u64, Vec<String>) =
            store.run("list", command.query_async(&mut store.connection.clone())).await?;
        keys.sort_unstable();
        keys.dedup();
        for full in keys {
            let key = full.strip_prefix(&records).unwrap_or(&full);
            if after.as_deref().is_some_and(|listed| key <= listed) {
                continue;
            }
            if entries.len() >= limit {
                return Ok(Listing { entries, next: Some(cursor(scan, after.as_deref())) });
            }
            if let Some(row) = store.hash("list", key).await?.filter(|row| live(row, millis(now))) {
                let entry = row.entry().map_err(|e| e.at(&store.place))?;
                if filter.matches(&entry.record, now) {
                    entries.push(entry);
                }
            }
            after = Some(key.to_owned());
        }
        (scan, after) = (next, None);
        if scan == 0 {
            return Ok(Listing { entries, next: None });
        }
        if entries.len() >= limit {
            break;
        }
    }
    Ok(Listing { entries, next: Some(cursor(scan, None)) })
}

fn cursor(scan: u64, after: Option<&str>) -> String {
    match after {
        Some(key) => format!("{scan}:{key}"),
        None => scan.to_string(),
    }
}

fn parse_cursor(cursor: Option<&str>) -> Result<(u64, Option<String>), StoreError> {
    let Some(cursor) = cursor else { return Ok((0, None)) };
    let (scan, after) = match cursor.split_once(':') {
        Some((scan, after)) => (scan, Some(after.to_owned())),
        None => (cursor, None),
    };
    let scan = scan.parse().map_err(|_| StoreError::new(format!("{cursor:?} is not a Redis listing cursor")))?;
    Ok((scan, after))
}

/// `text` with Redis glob characters escaped, to match it literally.
fn escape_glob(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_an_error() {
        assert_eq!(parse_cursor(None).unwrap(), (0, None));
        assert_eq!(parse_cursor(Some(&cursor(17, None))).unwrap(), (17, None));
        assert_eq!(parse_cursor(Some(&cursor(17, Some("order:1:a")))).unwrap(), (17, Some("order:1:a".into())));
        for garbage in ["", "x", "-1", ":k", "99999999999999999999999"] {
            assert!(parse_cursor(Some(garbage)).is_err(), "{garbage:?}");
        }
        assert_eq!(escape_glob("a*b?[c]\\d"), "a\\*b\\?\\[c\\]\\\\d");
    }
}
