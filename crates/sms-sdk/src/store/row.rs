//! The stored form of a record, shared by the durable stores: one row (or hash) per key with the
//! state, fingerprint and reservation in their own columns and the result or error as JSON.
//!
//! Everything read back is checked before it becomes a [`Record`]: a row the store could not have
//! written (another program's, or a damaged one) is a corrupt-record [`StoreError`] naming its
//! key, never a panic.

use std::time::SystemTime;

use super::stored::{read_error, read_receipt};
use super::{Entry, FinalRecord, Fingerprint, MAX_MILLIS, Record, ReservationId, State, StoreError, from_millis};

/// A key's stored columns, as read: nothing is trusted yet.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    pub(crate) key: String,
    pub(crate) state: Option<String>,
    pub(crate) fingerprint: Option<String>,
    pub(crate) reservation_id: Option<String>,
    pub(crate) reserved_at: Option<i64>,
    pub(crate) payload: Option<String>,
    pub(crate) expires_at: Option<i64>,
    pub(crate) recipient: Option<String>,
}

/// The column names, in the order the SQL stores select them.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const COLUMNS: &str = "key, state, fingerprint, reservation_id, reserved_at, record, expires_at, recipient";

impl Row {
    /// The row of `key` from a reader of the other [`COLUMNS`] by index (text and integer
    /// columns); a column that cannot be read is a corrupt record.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn read<E: std::fmt::Display>(
        key: String,
        text: impl Fn(usize) -> Result<Option<String>, E>,
        number: impl Fn(usize) -> Result<Option<i64>, E>,
    ) -> Result<Self, StoreError> {
        let bad = |column: &str, error: E| StoreError::corrupt(&key, format_args!("column {column}: {error}"));
        Ok(Self {
            state: text(1).map_err(|e| bad("state", e))?,
            fingerprint: text(2).map_err(|e| bad("fingerprint", e))?,
            reservation_id: text(3).map_err(|e| bad("reservation_id", e))?,
            reserved_at: number(4).map_err(|e| bad("reserved_at", e))?,
            payload: text(5).map_err(|e| bad("record", e))?,
            expires_at: number(6).map_err(|e| bad("expires_at", e))?,
            recipient: text(7).map_err(|e| bad("recipient", e))?,
            key,
        })
    }

    /// The record this row holds, once every field is checked.
    pub(crate) fn record(&self) -> Result<Record, StoreError> {
        let corrupt = |what: &str| StoreError::corrupt(&self.key, what);
        let fingerprint = self.fingerprint.as_deref().ok_or_else(|| corrupt("no fingerprint"))?;
        let fingerprint = Fingerprint::from_hex(fingerprint)
            .ok_or_else(|| corrupt("the fingerprint is not 64 lowercase hex digits"))?;
        let state = self.state.as_deref().ok_or_else(|| corrupt("no state"))?;
        let state = State::parse(state).ok_or_else(|| {
            StoreError::corrupt(
                &self.key,
                format_args!("unknown state {:?}", state.chars().take(32).collect::<String>()),
            )
        })?;
        self.expires_at()?;
        let to = match self.recipient.as_deref() {
            None => None,
            Some(to) => {
                Some(crate::PhoneNumber::parse(to).map_err(|_| corrupt("the recipient is not an E.164 number"))?)
            }
        };
        let reserved_at = time(&self.key, "reserved_at", self.reserved_at)?;
        Ok(match state {
            State::Reserved => Record::Reserved {
                fingerprint,
                reservation_id: ReservationId::from_string(
                    self.reservation_id
                        .clone()
                        .filter(|id| !id.is_empty())
                        .ok_or_else(|| corrupt("no reservation id"))?,
                ),
                reserved_at: reserved_at.ok_or_else(|| corrupt("no reservation time"))?,
                to,
            },
            State::Accepted => {
                let (result, endpoint) = read_receipt(&self.key, self.json()?)?;
                Record::Accepted { fingerprint, result, endpoint, to, reserved_at }
            }
            State::Rejected => {
                Record::Rejected { fingerprint, error: read_error(&self.key, self.json()?)?, to, reserved_at }
            }
            State::Unknown => {
                Record::Unknown { fingerprint, error: read_error(&self.key, self.json()?)?, to, reserved_at }
            }
        })
    }

    /// The row as a listed entry.
    pub(crate) fn entry(self) -> Result<Entry, StoreError> {
        let (record, expires_at) = (self.record()?, self.expires_at()?);
        Ok(Entry { key: self.key, record, expires_at })
    }

    /// Whether the row is live at `now` (epoch ms): it never expires, or not yet. A store whose
    /// expiry is lazy (Redis's key expiry, DynamoDB's TTL) reads a row past its time as absent.
    #[cfg(any(feature = "redis", feature = "dynamodb"))]
    pub(crate) fn is_live(&self, now: i64) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }

    /// The checked expiry.
    pub(crate) fn expires_at(&self) -> Result<Option<SystemTime>, StoreError> {
        time(&self.key, "expires_at", self.expires_at)
    }

    /// The record's JSON, which a final state must have.
    fn json(&self) -> Result<&str, StoreError> {
        self.payload.as_deref().ok_or_else(|| StoreError::corrupt(&self.key, "no record"))
    }
}

/// A stored time in epoch milliseconds, checked to be within `0..=MAX_MILLIS`.
fn time(key: &str, column: &str, ms: Option<i64>) -> Result<Option<SystemTime>, StoreError> {
    match ms {
        Some(ms) if !(0..=MAX_MILLIS).contains(&ms) => {
            Err(StoreError::corrupt(key, format_args!("{column} {ms} is not a time between 1970 and 9999")))
        }
        ms => Ok(ms.map(from_millis)),
    }
}

/// The JSON stored for a final record: the result or the error, in the stored format (the
/// fingerprint has its column).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn payload(record: &FinalRecord) -> Result<String, StoreError> {
    payload_to(record, None)
}

/// [`payload`], for an accepted record whose message went to `endpoint` (a key an operator
/// settled, which has no attempt that says so).
pub(crate) fn payload_to(record: &FinalRecord, endpoint: Option<&str>) -> Result<String, StoreError> {
    let mut json = Vec::new();
    write_payload_to(&mut json, record, endpoint)?;
    String::from_utf8(json).map_err(StoreError::new)
}

/// Writes [`payload`]'s text into `out` (a buffer of the command that stores it), without
/// building it on the side first.
#[cfg(feature = "redis")]
pub(crate) fn write_payload(out: impl std::io::Write, record: &FinalRecord) -> Result<(), StoreError> {
    write_payload_to(out, record, None)
}

fn write_payload_to(out: impl std::io::Write, record: &FinalRecord, endpoint: Option<&str>) -> Result<(), StoreError> {
    match record {
        FinalRecord::Accepted(result) => super::stored::write_receipt(out, result, endpoint),
        FinalRecord::Rejected(error) | FinalRecord::Unknown(error) => super::stored::write_error(out, error),
    }
}

/// The expiry column of a record finalized at `now`.
pub(crate) fn expiry(record: &FinalRecord, ttl: std::time::Duration, now: SystemTime) -> Option<i64> {
    record.expires_at(ttl, now).map(super::millis)
}

#[cfg(test)]
#[allow(clippy::string_slice)] // test data cut at known ASCII positions
mod tests {
    use super::*;
    use crate::store::Fingerprint;

    fn reserved() -> Row {
        Row {
            key: "k".into(),
            state: Some("reserved".into()),
            fingerprint: Some(Fingerprint::from_canonical("x").as_str().to_owned()),
            reservation_id: Some("r1".into()),
            reserved_at: Some(1_000),
            payload: None,
            expires_at: None,
            recipient: None,
        }
    }

    /// The Redis store writes a record's JSON straight into its command: the very text
    /// `payload` returns, byte for byte.
    #[cfg(all(feature = "redis", feature = "testing", any(feature = "sqlite", feature = "postgres")))]
    #[test]
    fn write_payload_writes_the_payload_text() {
        use crate::testing::store_contract::{sample_error, sample_receipt};

        let records = [
            FinalRecord::Accepted(sample_receipt("SM1")),
            FinalRecord::Rejected(sample_error("rejected")),
            FinalRecord::Unknown(sample_error("handoff_unknown")),
        ];
        for record in records {
            let mut written = Vec::new();
            write_payload(&mut written, &record).unwrap();
            assert_eq!(String::from_utf8(written).unwrap(), payload(&record).unwrap());
        }
    }

    #[test]
    fn a_valid_row_reads_back() {
        assert_eq!(reserved().record().unwrap().state(), State::Reserved);
    }

    #[test]
    fn bad_rows_are_corrupt_records_naming_their_key() {
        let fingerprint = reserved().fingerprint.unwrap();
        let cases = [
            Row { fingerprint: Some(format!("{}é{}", &fingerprint[..11], &fingerprint[13..])), ..reserved() },
            Row { fingerprint: None, ..reserved() },
            Row { state: Some("sent".into()), ..reserved() },
            Row { state: None, ..reserved() },
            Row { reservation_id: Some(String::new()), ..reserved() },
            Row { reserved_at: None, ..reserved() },
            Row { reserved_at: Some(-1), ..reserved() },
            Row { expires_at: Some(i64::MAX), ..reserved() },
            Row { state: Some("accepted".into()), payload: Some("{not json".into()), ..reserved() },
            Row { state: Some("unknown".into()), payload: None, ..reserved() },
            Row { recipient: Some("14155550123".into()), ..reserved() },
        ];
        for row in cases {
            let error = row.clone().entry().unwrap_err();
            assert!(error.is_corrupt(), "{row:?}: {error}");
            assert!(error.to_string().contains("key \"k\""), "{error}");
            let _ = format!("{error:?}");
        }
    }
}
