//! The stored form of a record, shared by the durable stores: one row (or hash) per key with the
//! state, fingerprint and reservation in their own columns and the result or error as JSON.

use std::time::SystemTime;

use super::{Entry, FinalRecord, Fingerprint, Record, ReservationId, State, StoreError, from_millis};

/// A key's stored columns.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    pub(crate) key: String,
    pub(crate) state: String,
    pub(crate) fingerprint: String,
    pub(crate) reservation_id: Option<String>,
    pub(crate) reserved_at: Option<i64>,
    pub(crate) payload: Option<String>,
    pub(crate) expires_at: Option<i64>,
}

/// The column names, in the order the SQL stores select them.
pub(crate) const COLUMNS: &str = "key, state, fingerprint, reservation_id, reserved_at, record, expires_at";

impl Row {
    /// The record this row holds.
    pub(crate) fn record(&self) -> Result<Record, StoreError> {
        let fingerprint = Fingerprint::from_hex(self.fingerprint.clone());
        let payload = || self.payload.as_deref().ok_or_else(|| corrupt(&self.key, "no record"));
        Ok(match State::parse(&self.state) {
            Some(State::Reserved) => Record::Reserved {
                fingerprint,
                reservation_id: ReservationId::from_string(
                    self.reservation_id.clone().ok_or_else(|| corrupt(&self.key, "no reservation id"))?,
                ),
                reserved_at: from_millis(self.reserved_at.ok_or_else(|| corrupt(&self.key, "no reservation time"))?),
            },
            Some(State::Accepted) => Record::Accepted { fingerprint, result: serde_json::from_str(payload()?)? },
            Some(State::Rejected) => Record::Rejected { fingerprint, error: serde_json::from_str(payload()?)? },
            Some(State::Unknown) => Record::Unknown { fingerprint, error: serde_json::from_str(payload()?)? },
            None => return Err(corrupt(&self.key, "unknown state")),
        })
    }

    /// The row as a listed entry.
    pub(crate) fn entry(self) -> Result<Entry, StoreError> {
        let record = self.record()?;
        Ok(Entry { key: self.key, record, expires_at: self.expires_at.map(from_millis) })
    }
}

/// The JSON stored for a final record: the result or the error (the fingerprint has its column).
pub(crate) fn payload(record: &FinalRecord) -> Result<String, StoreError> {
    Ok(match record {
        FinalRecord::Accepted(result) => serde_json::to_string(result)?,
        FinalRecord::Rejected(error) | FinalRecord::Unknown(error) => serde_json::to_string(error)?,
    })
}

/// The expiry column of a record finalized at `now`.
pub(crate) fn expiry(record: &FinalRecord, ttl: std::time::Duration, now: SystemTime) -> Option<i64> {
    record.expires_at(ttl, now).map(super::millis)
}

fn corrupt(key: &str, what: &str) -> StoreError {
    StoreError::new(format!("the idempotency record of key {key:?} is corrupt: {what}"))
}
