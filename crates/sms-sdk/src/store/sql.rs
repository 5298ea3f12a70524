//! The SQL shared by the SQLite and PostgreSQL stores (plain runtime SQL, `$N` placeholders).

use std::time::SystemTime;

pub(crate) use self::dedupe::{DedupeStatements, dedupe_table, dedupe_times};
use super::row::Row;
use super::{Filter, Listing, Page, StoreError, stale_cutoff};

mod dedupe;

/// Every statement of a store, for one table.
#[derive(Debug, Clone)]
pub(crate) struct Statements {
    pub(crate) create: String,
    /// Adds the columns of stored format version 1 to a table created before it (PostgreSQL; the
    /// SQLite store adds them when [`super::sqlite`] finds them missing).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) migrate: String,
    pub(crate) get: String,
    /// Claims a key (`$1` key, `$2` fingerprint, `$3` reservation id, `$4` now ms, `$5` the
    /// recipient or NULL), returning the reservation id when it claimed and no row otherwise.
    pub(crate) reserve: String,
    /// The same claim in one statement that also answers when it did not claim (PostgreSQL,
    /// after a `reserve` that did not claim: the upsert alone costs the server less):
    /// the row of [`super::row::COLUMNS`] as it claimed it, or else the key's row as the
    /// statement's snapshot saw it, provided that row was not claimable then (so the answer is
    /// what a reserve at that instant returned). No row when a concurrent transaction committed
    /// the key's row after the snapshot was taken (the snapshot sees none, or an older one that
    /// was claimable): running the statement again, with a new snapshot, answers.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) claim: String,
    /// The key's row, whatever it holds (SQLite, after a reserve that did not claim).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) select: String,
    pub(crate) finalize: String,
    /// One page of a listing: `$1` now, `$2` the key to go on after (or NULL), `$3` the key
    /// prefix, `$4` the state (or NULL), `$5` the stale cutoff for unresolved (or NULL), `$6` the
    /// limit; see [`list_filter`] and [`list_limit`].
    pub(crate) list: String,
    pub(crate) resolve_sent: String,
    pub(crate) resolve_not_sent: String,
    /// The webhook dedupe table's statements.
    pub(crate) dedupe: DedupeStatements,
    /// Creates the correlation index table (see [`reference_table`]).
    pub(crate) reference_create: String,
    /// Remembers a reference: `$1` reference, `$2` key, `$3` expiry (epoch ms).
    pub(crate) reference_remember: String,
    /// The key of a reference: `$1` reference, `$2` now (epoch ms).
    pub(crate) reference_find: String,
}

/// The correlation index table that accompanies the idempotency table `table`:
/// `sms_correlation` for the default `sms_idempotency`, `<table>_references` otherwise.
pub(crate) fn reference_table(table: &str) -> String {
    if table == "sms_idempotency" { "sms_correlation".to_owned() } else { format!("{table}_references") }
}

/// The parameters `$4` and `$5` of [`Statements::list`] for `filter` at `now`.
pub(crate) fn list_filter(filter: Filter, now: SystemTime) -> (Option<&'static str>, Option<i64>) {
    match filter {
        Filter::All => (None, None),
        Filter::State(state) => (Some(state.as_str()), None),
        Filter::Unresolved { stale_after } => (None, Some(stale_cutoff(now, stale_after))),
    }
}

/// The limit of `page` (at least 1) and the same as the `$6` parameter of [`Statements::list`].
pub(crate) fn list_limit(page: &Page) -> (usize, i64) {
    let limit = page.limit.max(1);
    (limit, i64::try_from(limit).unwrap_or(i64::MAX))
}

/// The listing of the `rows` one page returned: a full page may have a next one.
pub(crate) fn listing(rows: Vec<Row>, limit: usize) -> Result<Listing, StoreError> {
    let next = if rows.len() >= limit { rows.last().map(|row| row.key.clone()) } else { None };
    Ok(Listing { entries: rows.into_iter().map(Row::entry).collect::<Result<_, _>>()?, next })
}

/// `sql` with SQLite's numbered `?N` placeholders for its `$N` ones (a `$` not followed by a
/// digit stays).
#[cfg(feature = "sqlite")]
pub(crate) fn sqlite_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) { '?' } else { c });
    }
    out
}

/// Refuses a table name that is not a plain SQL identifier (a letter or `_`, then letters,
/// digits and `_`): names are written into statements as they are.
pub(crate) fn check_table_name(table: &str) -> Result<(), StoreError> {
    let valid = table.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid { Ok(()) } else { Err(StoreError::new(format!("{table:?} is not a plain SQL table name"))) }
}

impl Statements {
    /// The statements for `table` (a plain SQL identifier).
    pub(crate) fn new(table: &str) -> Result<Self, StoreError> {
        check_table_name(table)?;
        let columns = super::row::COLUMNS;
        let unresolved = "(state = 'unknown' OR (state = 'reserved' AND reserved_at < $2))";
        // Insert, or take over an expired record or a same-message rejection.
        let upsert = format!(
            "INSERT INTO {table} (key, fingerprint, state, reservation_id, reserved_at, record, expires_at, recipient)
                 VALUES ($1, $2, 'reserved', $3, $4, NULL, NULL, $5)
                 ON CONFLICT (key) DO UPDATE SET
                    fingerprint = excluded.fingerprint, state = 'reserved', reservation_id = excluded.reservation_id,
                    reserved_at = excluded.reserved_at, record = NULL, expires_at = NULL, recipient = excluded.recipient
                 WHERE ({table}.expires_at IS NOT NULL AND {table}.expires_at <= $4)
                    OR ({table}.state = 'rejected' AND {table}.fingerprint = excluded.fingerprint)"
        );
        let references = reference_table(table);
        Ok(Self {
            create: format!(
                "CREATE TABLE IF NOT EXISTS {table} (
                    key TEXT PRIMARY KEY,
                    fingerprint TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('reserved', 'accepted', 'rejected', 'unknown')),
                    reservation_id TEXT,
                    reserved_at BIGINT,
                    record TEXT,
                    expires_at BIGINT,
                    recipient TEXT
                )"
            ),
            migrate: format!("ALTER TABLE {table} ADD COLUMN IF NOT EXISTS recipient TEXT"),
            get: format!("SELECT {columns} FROM {table} WHERE key = $1 AND (expires_at IS NULL OR expires_at > $2)"),
            reserve: format!("{upsert} RETURNING reservation_id"),
            claim: format!(
                "WITH claimed AS ({upsert} RETURNING {columns})
                 SELECT {columns} FROM claimed
                 UNION ALL SELECT {columns} FROM {table}
                 WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM claimed)
                    AND NOT ((expires_at IS NOT NULL AND expires_at <= $4) OR (state = 'rejected' AND fingerprint = $2))"
            ),
            select: format!("SELECT {columns} FROM {table} WHERE key = $1"),
            finalize: format!(
                "UPDATE {table} SET state = $3, record = $4, expires_at = $5, reservation_id = NULL
                 WHERE key = $1 AND state = 'reserved' AND reservation_id = $2"
            ),
            list: format!(
                "SELECT {columns} FROM {table}
                 WHERE (expires_at IS NULL OR expires_at > $1)
                    AND (CAST($2 AS TEXT) IS NULL OR key > $2)
                    AND substr(key, 1, length(CAST($3 AS TEXT))) = CAST($3 AS TEXT)
                    AND (CAST($4 AS TEXT) IS NULL OR state = $4)
                    AND (CAST($5 AS BIGINT) IS NULL OR state = 'unknown' OR (state = 'reserved' AND reserved_at < $5))
                 ORDER BY key LIMIT $6"
            ),
            resolve_sent: format!(
                "UPDATE {table} SET state = 'accepted', record = $3, expires_at = $4, reservation_id = NULL
                 WHERE key = $1 AND {unresolved}"
            ),
            resolve_not_sent: format!("DELETE FROM {table} WHERE key = $1 AND {unresolved}"),
            dedupe: DedupeStatements::new(&dedupe_table(table)),
            reference_create: format!(
                "CREATE TABLE IF NOT EXISTS {references} (
                    reference TEXT PRIMARY KEY,
                    key TEXT NOT NULL,
                    expires_at BIGINT NOT NULL
                )"
            ),
            // A reference always names the same key: writing it again extends its retention.
            reference_remember: format!(
                "INSERT INTO {references} (reference, key, expires_at) VALUES ($1, $2, $3)
                 ON CONFLICT (reference) DO UPDATE SET key = excluded.key, expires_at = excluded.expires_at"
            ),
            reference_find: format!("SELECT key FROM {references} WHERE reference = $1 AND expires_at > $2"),
        })
    }

    /// The same statements with SQLite's numbered `?N` placeholders.
    #[cfg(feature = "sqlite")]
    pub(crate) fn for_sqlite(self) -> Self {
        let convert = |sql: String| sqlite_placeholders(&sql);
        Self {
            create: convert(self.create),
            migrate: convert(self.migrate),
            get: convert(self.get),
            reserve: convert(self.reserve),
            claim: convert(self.claim),
            select: convert(self.select),
            finalize: convert(self.finalize),
            list: convert(self.list),
            resolve_sent: convert(self.resolve_sent),
            resolve_not_sent: convert(self.resolve_not_sent),
            dedupe: self.dedupe.for_sqlite(),
            reference_create: convert(self.reference_create),
            reference_remember: convert(self.reference_remember),
            reference_find: convert(self.reference_find),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_must_be_plain_identifiers() {
        assert!(Statements::new("sms_idempotency").is_ok());
        assert!(Statements::new("x; DROP TABLE y").is_err());
        assert!(Statements::new("1abc").is_err());
        assert!(check_table_name("_t1").is_ok() && check_table_name("").is_err() && check_table_name("a-b").is_err());
    }

    #[cfg(feature = "sqlite")]
    #[test]
    fn sqlite_placeholders_are_numbered() {
        let s = Statements::new("t").unwrap().for_sqlite();
        assert!(s.finalize.contains("key = ?1") && s.finalize.contains("expires_at = ?5"));
        assert!(!s.reserve.contains('$'));
        assert_eq!(sqlite_placeholders("a = $1 AND b = $12 AND c = '$x' || $"), "a = ?1 AND b = ?12 AND c = '$x' || $");
    }

    #[test]
    fn postgres_claims_and_answers_in_one_statement() {
        let s = Statements::new("t").unwrap();
        assert!(s.claim.starts_with("WITH claimed AS (INSERT INTO t "), "{}", s.claim);
        assert!(s.claim.contains(&format!("RETURNING {})", super::super::row::COLUMNS)), "{}", s.claim);
        assert!(s.reserve.starts_with("INSERT INTO t ") && s.reserve.ends_with(" RETURNING reservation_id"));
    }
}
