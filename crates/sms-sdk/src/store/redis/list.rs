//! The Redis store's listing: `SCAN` in pages, the keys of each page in order; on a Redis
//! Cluster, every master in turn (sorted by address).
//!
//! A cursor is `<scan cursor>` or `<scan cursor>:<last key listed>`, after `<master>/` on a
//! cluster: a page that fills up in the middle of a `SCAN` batch asks for that batch again next
//! time and skips what it has listed. Listings follow `SCAN`'s guarantees: a key present all
//! along is listed (twice, at times, while other writers make the keyspace grow and Redis
//! rehashes it); one added or removed meanwhile may be listed or not (as may, on a cluster, a
//! key whose slot moves to another master meanwhile). A cursor whose master is gone goes on
//! with the next master by address.

use std::time::SystemTime;

use super::{RECORD_NAMESPACE, RedisStore};
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
    let nodes = store.run("list", store.connection.scan_nodes()).await?;
    let (node, given) = match (nodes.first(), page.cursor.as_deref()) {
        (Some(None), given) => (None, given),
        (_, None) => (None, None),
        (_, Some(given)) => match given.split_once('/') {
            Some((node, rest)) => (Some(node), Some(rest)),
            None => return Err(bad_cursor(given).at(&store.place)),
        },
    };
    let (mut scan, mut after) = parse_cursor(given).map_err(|e| e.at(&store.place))?;
    // The node the cursor names, or the next one by address (starting again there).
    let mut at = match node {
        None => 0,
        Some(node) => nodes.iter().position(|n| n.as_deref() >= Some(node)).unwrap_or(nodes.len()),
    };
    if node.is_some() && nodes.get(at).and_then(Option::as_deref) != node {
        (scan, after) = (0, None);
    }
    let mut entries = Vec::new();
    for _ in 0..MAX_SCANS {
        let Some(current) = nodes.get(at) else { return Ok(Listing { entries, next: None }) };
        let current = current.as_deref();
        let resume = |scan: u64, after: Option<&str>| match current {
            Some(node) => format!("{node}/{}", cursor(scan, after)),
            None => cursor(scan, after),
        };
        let mut command = redis::cmd("SCAN");
        command.arg(scan).arg("MATCH").arg(&pattern).arg("COUNT").arg(SCAN_COUNT);
        let (next, mut keys): (u64, Vec<String>) =
            store.run("list", store.connection.on_node(current, command)).await?;
        keys.sort_unstable();
        keys.dedup();
        for full in keys {
            let key = full.strip_prefix(&records).unwrap_or(&full);
            if after.as_deref().is_some_and(|listed| key <= listed) {
                continue;
            }
            if entries.len() >= limit {
                return Ok(Listing { entries, next: Some(resume(scan, after.as_deref())) });
            }
            if let Some(row) = store.hash("list", key).await?.filter(|row| row.is_live(millis(now))) {
                let entry = row.entry().map_err(|e| e.at(&store.place))?;
                if filter.matches(&entry.record, now) {
                    entries.push(entry);
                }
            }
            after = Some(key.to_owned());
        }
        (scan, after) = (next, None);
        if scan == 0 {
            // This node is done: the next one, from its start.
            at += 1;
            let Some(following) = nodes.get(at) else { return Ok(Listing { entries, next: None }) };
            if entries.len() >= limit {
                let following = following.as_deref().map(|node| format!("{node}/0"));
                return Ok(Listing { entries, next: following });
            }
            continue;
        }
        if entries.len() >= limit {
            return Ok(Listing { entries, next: Some(resume(scan, None)) });
        }
    }
    // Out of scans: go on where this one stopped.
    let next = nodes.get(at).map(|node| match node {
        Some(node) => format!("{node}/{}", cursor(scan, None)),
        None => cursor(scan, None),
    });
    Ok(Listing { entries, next })
}

fn bad_cursor(cursor: &str) -> StoreError {
    StoreError::new(format!("{:?} is not a Redis listing cursor", cursor.chars().take(64).collect::<String>()))
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
    let scan = scan.parse().map_err(|_| bad_cursor(cursor))?;
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
