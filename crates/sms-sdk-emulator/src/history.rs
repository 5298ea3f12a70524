//! The two collections the emulator keeps for as long as it runs, each bounded: the message
//! history (the oldest entry is forgotten beyond the limit) and the rate-limited-once keys (the
//! oldest key is forgotten beyond the limit).
//!
//! Sequence numbers wrap (`wrapping_add`, `wrapping_sub`): the difference of two of them is
//! right as long as fewer than 2^64 entries separate them, which the limit guarantees.

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::model::{Provider, ReceivedMessage};

/// The key of the rate-limited-once state: provider, recipient and body.
pub(crate) type OnceKey = (Provider, String, String);

/// Received requests in arrival order, at most `limit`, with an index of created messages.
#[derive(Debug)]
pub(crate) struct History {
    entries: VecDeque<ReceivedMessage>,
    /// The sequence number of `entries[0]`.
    first: u64,
    /// Created messages by provider and id: their sequence number.
    ids: HashMap<(Provider, String), u64>,
    limit: usize,
}

impl History {
    /// An empty history keeping at most `limit` entries (at least one).
    pub(crate) fn new(limit: usize) -> Self {
        Self { entries: VecDeque::new(), first: 0, ids: HashMap::new(), limit: limit.max(1) }
    }

    /// Appends `entry`, forgetting the oldest one when full.
    pub(crate) fn push(&mut self, entry: ReceivedMessage) {
        if self.entries.len() >= self.limit {
            self.pop_oldest();
        }
        let seq = self.first.wrapping_add(self.entries.len() as u64);
        if let Some(id) = &entry.id {
            self.ids.insert((entry.provider, id.clone()), seq);
        }
        self.entries.push_back(entry);
    }

    fn pop_oldest(&mut self) {
        if let Some(oldest) = self.entries.pop_front() {
            if let Some(id) = oldest.id {
                self.ids.remove(&(oldest.provider, id));
            }
            self.first = self.first.wrapping_add(1);
        }
    }

    /// Every entry, in arrival order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ReceivedMessage> {
        self.entries.iter()
    }

    /// Where the created message `id` of `provider` is in `entries`, if it is still kept.
    fn index(&self, provider: Provider, id: &str) -> Option<usize> {
        let seq = *self.ids.get(&(provider, id.to_owned()))?;
        usize::try_from(seq.wrapping_sub(self.first)).ok()
    }

    /// The created message `id` of `provider`, if it is still kept.
    pub(crate) fn get(&self, provider: Provider, id: &str) -> Option<&ReceivedMessage> {
        self.entries.get(self.index(provider, id)?)
    }

    /// The created message `id` of `provider`, to change, if it is still kept.
    pub(crate) fn get_mut(&mut self, provider: Provider, id: &str) -> Option<&mut ReceivedMessage> {
        let index = self.index(provider, id)?;
        self.entries.get_mut(index)
    }

    /// Forgets everything.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.ids.clear();
    }
}

/// The keys that were rate-limited once and not yet retried, at most `limit`.
#[derive(Debug)]
pub(crate) struct OnceSet {
    keys: HashMap<OnceKey, u64>,
    /// The same keys by sequence number, oldest first.
    order: BTreeMap<u64, OnceKey>,
    next: u64,
    limit: usize,
}

impl OnceSet {
    /// An empty set keeping at most `limit` keys (at least one).
    pub(crate) fn new(limit: usize) -> Self {
        Self { keys: HashMap::new(), order: BTreeMap::new(), next: 0, limit: limit.max(1) }
    }

    /// True for the first request of `key` (rate-limit it, and remember it), false for the next
    /// one (accept it, and forget it). Beyond the limit, the oldest key is forgotten.
    pub(crate) fn limit_once(&mut self, key: OnceKey) -> bool {
        if let Some(seq) = self.keys.remove(&key) {
            self.order.remove(&seq);
            return false;
        }
        if self.keys.len() >= self.limit
            && let Some((_, oldest)) = self.order.pop_first()
        {
            self.keys.remove(&oldest);
        }
        let seq = self.next;
        self.next = self.next.wrapping_add(1);
        self.order.insert(seq, key.clone());
        self.keys.insert(key, seq);
        true
    }

    /// Forgets every key.
    pub(crate) fn clear(&mut self) {
        self.keys.clear();
        self.order.clear();
    }
}

#[cfg(test)]
mod tests {
    use time::OffsetDateTime;

    use super::*;

    fn entry(id: Option<&str>) -> ReceivedMessage {
        let mut entry = ReceivedMessage::new(Provider::Twilio, OffsetDateTime::UNIX_EPOCH);
        entry.id = id.map(str::to_owned);
        entry
    }

    #[test]
    fn the_history_keeps_the_last_entries_and_finds_them_by_id() {
        let mut history = History::new(2);
        history.push(entry(Some("a")));
        history.push(entry(None));
        history.push(entry(Some("c")));
        let ids: Vec<Option<&str>> = history.iter().map(|m| m.id.as_deref()).collect();
        assert_eq!(ids, [None, Some("c")]);
        assert!(history.get(Provider::Twilio, "a").is_none());
        assert!(history.get(Provider::Telnyx, "c").is_none());
        assert_eq!(history.get_mut(Provider::Twilio, "c").and_then(|m| m.id.clone()).as_deref(), Some("c"));
        history.clear();
        history.push(entry(Some("d")));
        assert!(history.get_mut(Provider::Twilio, "d").is_some());
    }

    #[test]
    fn a_zero_limit_still_keeps_the_last_entry() {
        let mut history = History::new(0);
        history.push(entry(Some("a")));
        history.push(entry(Some("b")));
        assert_eq!(history.iter().count(), 1);
        assert!(history.get_mut(Provider::Twilio, "b").is_some());
    }

    #[test]
    fn the_once_set_forgets_its_oldest_key_beyond_the_limit() {
        let key = |body: &str| (Provider::Twilio, "+15005559004".to_owned(), body.to_owned());
        let mut once = OnceSet::new(2);
        assert!(once.limit_once(key("a")));
        assert!(once.limit_once(key("b")));
        assert!(once.limit_once(key("c")));
        // "a" was forgotten: it is limited again; "c" is remembered: accepted.
        assert!(once.limit_once(key("a")));
        assert!(!once.limit_once(key("c")));
        assert!(once.limit_once(key("c")));
    }
}
