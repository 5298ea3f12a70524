//! The SQL shared by the SQLite and PostgreSQL stores (plain runtime SQL, `$N` placeholders).

use std::time::{Duration, SystemTime};

use super::row::Row;
use super::{Filter, Listing, Page, StoreError, millis, stale_cutoff};

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
    /// Creates the webhook dedupe table (see [`dedupe_table`]): `key`, `seen_at`, `expires_at`
    /// (epoch ms) and `claim`, the token of the claim that holds the key until `expires_at`, or
    /// NULL for a key that is done (handled) until then.
    pub(crate) dedupe_create: String,
    /// Adds the `claim` column to a dedupe table created before it (PostgreSQL; the SQLite store
    /// adds it when [`super::sqlite`] finds it missing). Its rows keep a NULL claim: done.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) dedupe_migrate: String,
    /// Records a dedupe key as done: `$1` key, `$2` now, `$3` expiry (epoch ms); returns a row
    /// when the key was unseen or its sighting (done or claimed) expired.
    pub(crate) dedupe_first_seen: String,
    /// Claims a dedupe key: `$1` key, `$2` now, `$3` the lease's end (epoch ms), `$4` the token;
    /// returns the token when it claimed, no row otherwise.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) dedupe_claim: String,
    /// The same claim in one statement that also answers when it did not claim (PostgreSQL):
    /// the token it wrote, or else the `claim` of the key's live row as the statement's snapshot
    /// saw it (NULL: done). No row when a concurrent transaction committed the key's row after
    /// the snapshot was taken: running the statement again answers (as for [`Self::claim`]).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) dedupe_claim_or_held: String,
    /// The `claim` of a dedupe key's live row (SQLite, after a claim that did not claim): `$1`
    /// key, `$2` now.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) dedupe_held: String,
    /// Marks a dedupe key done, whoever holds it: `$1` key, `$2` now, `$3` expiry (epoch ms).
    pub(crate) dedupe_commit: String,
    /// Frees a dedupe key held by a claim: `$1` key, `$2` the claim's token.
    pub(crate) dedupe_release: String,
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

/// The webhook dedupe table that accompanies the idempotency table `table`:
/// `sms_webhook_dedupe` for the default `sms_idempotency`, `<table>_dedupe` otherwise.
pub(crate) fn dedupe_table(table: &str) -> String {
    if table == "sms_idempotency" { "sms_webhook_dedupe".to_owned() } else { format!("{table}_dedupe") }
}

/// The `seen_at` and `expires_at` (epoch ms) of a dedupe sighting at `now` kept for `retention`.
pub(crate) fn dedupe_times(now: SystemTime, retention: Duration) -> (i64, i64) {
    let seen_at = millis(now);
    (seen_at, seen_at.saturating_add(i64::try_from(retention.as_millis()).unwrap_or(i64::MAX)))
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
        let dedupe = dedupe_table(table);
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
        // Insert a claim, or take over a sighting (done or claimed) that has run out.
        let dedupe_claim = format!(
            "INSERT INTO {dedupe} (key, seen_at, expires_at, claim) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (key) DO UPDATE SET
                    seen_at = excluded.seen_at, expires_at = excluded.expires_at, claim = excluded.claim
                 WHERE {dedupe}.expires_at <= $2"
        );
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
            dedupe_create: format!(
                "CREATE TABLE IF NOT EXISTS {dedupe} (
                    key TEXT PRIMARY KEY,
                    seen_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    claim TEXT
                )"
            ),
            dedupe_migrate: format!("ALTER TABLE {dedupe} ADD COLUMN IF NOT EXISTS claim TEXT"),
            // One statement: insert, or take over a sighting (done or claimed) that has run out.
            dedupe_first_seen: format!(
                "INSERT INTO {dedupe} (key, seen_at, expires_at, claim) VALUES ($1, $2, $3, NULL)
                 ON CONFLICT (key) DO UPDATE SET seen_at = excluded.seen_at, expires_at = excluded.expires_at, claim = NULL
                 WHERE {dedupe}.expires_at <= $2
                 RETURNING key"
            ),
            dedupe_claim: format!("{dedupe_claim} RETURNING claim"),
            dedupe_claim_or_held: format!(
                "WITH claimed AS ({dedupe_claim} RETURNING claim)
                 SELECT claim FROM claimed
                 UNION ALL SELECT claim FROM {dedupe}
                 WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM claimed) AND expires_at > $2"
            ),
            dedupe_held: format!("SELECT claim FROM {dedupe} WHERE key = $1 AND expires_at > $2"),
            dedupe_commit: format!(
                "INSERT INTO {dedupe} (key, seen_at, expires_at, claim) VALUES ($1, $2, $3, NULL)
                 ON CONFLICT (key) DO UPDATE SET seen_at = excluded.seen_at, expires_at = excluded.expires_at, claim = NULL"
            ),
            dedupe_release: format!("DELETE FROM {dedupe} WHERE key = $1 AND claim = $2"),
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
            dedupe_create: convert(self.dedupe_create),
            dedupe_migrate: convert(self.dedupe_migrate),
            dedupe_first_seen: convert(self.dedupe_first_seen),
            dedupe_claim: convert(self.dedupe_claim),
            dedupe_claim_or_held: convert(self.dedupe_claim_or_held),
            dedupe_held: convert(self.dedupe_held),
            dedupe_commit: convert(self.dedupe_commit),
            dedupe_release: convert(self.dedupe_release),
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
        assert!(s.dedupe_first_seen.contains("VALUES (?1, ?2, ?3, NULL)") && !s.dedupe_first_seen.contains('$'));
        assert!(s.dedupe_claim.contains("VALUES (?1, ?2, ?3, ?4)") && !s.dedupe_claim.contains('$'));
        assert_eq!(s.dedupe_release, "DELETE FROM t_dedupe WHERE key = ?1 AND claim = ?2");
        assert_eq!(sqlite_placeholders("a = $1 AND b = $12 AND c = '$x' || $"), "a = ?1 AND b = ?12 AND c = '$x' || $");
    }

    #[test]
    fn postgres_claims_and_answers_in_one_statement() {
        let s = Statements::new("t").unwrap();
        assert!(s.claim.starts_with("WITH claimed AS (INSERT INTO t "), "{}", s.claim);
        assert!(s.claim.contains(&format!("RETURNING {})", super::super::row::COLUMNS)), "{}", s.claim);
        assert!(s.reserve.starts_with("INSERT INTO t ") && s.reserve.ends_with(" RETURNING reservation_id"));
    }

    #[test]
    fn dedupe_times_saturate() {
        let now = std::time::UNIX_EPOCH + Duration::from_secs(1);
        assert_eq!(dedupe_times(now, Duration::from_millis(250)), (1_000, 1_250));
        assert_eq!(dedupe_times(now, Duration::MAX), (1_000, i64::MAX));
    }

    #[test]
    fn the_dedupe_table_accompanies_the_idempotency_table() {
        assert_eq!(dedupe_table("sms_idempotency"), "sms_webhook_dedupe");
        assert_eq!(dedupe_table("app_sms"), "app_sms_dedupe");
        let s = Statements::new("app_sms").unwrap();
        assert!(s.dedupe_create.contains("CREATE TABLE IF NOT EXISTS app_sms_dedupe ("));
        assert!(s.dedupe_first_seen.starts_with("INSERT INTO app_sms_dedupe "));
        assert!(s.dedupe_first_seen.contains("WHERE app_sms_dedupe.expires_at <= $2"));
        assert!(s.dedupe_first_seen.contains("claim = NULL"), "a sighting taken over is done: {}", s.dedupe_first_seen);
        assert!(s.dedupe_create.contains("claim TEXT") && s.dedupe_migrate.contains("app_sms_dedupe ADD COLUMN"));
        assert!(s.dedupe_claim.starts_with("INSERT INTO app_sms_dedupe ") && s.dedupe_claim.ends_with("RETURNING claim"));
        assert!(s.dedupe_claim_or_held.starts_with("WITH claimed AS (INSERT INTO app_sms_dedupe "));
        assert_eq!(s.dedupe_release, "DELETE FROM app_sms_dedupe WHERE key = $1 AND claim = $2");
        let default = Statements::new("sms_idempotency").unwrap();
        assert!(
            default.dedupe_create.contains("sms_webhook_dedupe") && !default.dedupe_create.contains("sms_idempotency")
        );
    }
}
