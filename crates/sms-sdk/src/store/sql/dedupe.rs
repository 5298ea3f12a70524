//! The SQL of the webhook dedupe table, shared by the SQLite and PostgreSQL stores: one row per
//! key, `key`, `seen_at`, `expires_at` (epoch ms) and `claim`, the token of the claim that holds
//! the key until `expires_at`, or NULL for a key that is done (handled) until then.

use std::time::{Duration, SystemTime};

use crate::store::millis;

/// The webhook dedupe table that accompanies the idempotency table `table`:
/// `sms_webhook_dedupe` for the default `sms_idempotency`, `<table>_dedupe` otherwise.
pub(crate) fn dedupe_table(table: &str) -> String {
    if table == "sms_idempotency" { "sms_webhook_dedupe".to_owned() } else { format!("{table}_dedupe") }
}

/// The `seen_at` and `expires_at` (epoch ms) of a dedupe sighting (or claim) at `now` kept for
/// `retention` (or its lease): a duration too long to add saturates, so it never runs out.
pub(crate) fn dedupe_times(now: SystemTime, retention: Duration) -> (i64, i64) {
    let seen_at = millis(now);
    (seen_at, seen_at.saturating_add(i64::try_from(retention.as_millis()).unwrap_or(i64::MAX)))
}

/// Every statement of the dedupe table.
#[derive(Debug, Clone)]
pub(crate) struct DedupeStatements {
    /// Creates the table.
    pub(crate) create: String,
    /// Adds the `claim` column to a table created before it (PostgreSQL; the SQLite store adds it
    /// when [`crate::store::sqlite`] finds it missing). Its rows keep a NULL claim: done.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) migrate: String,
    /// Records a key as done: `$1` key, `$2` now, `$3` expiry (epoch ms); returns a row when the
    /// key was unseen or its sighting (done or claimed) expired.
    pub(crate) first_seen: String,
    /// Claims a key: `$1` key, `$2` now, `$3` the lease's end (epoch ms), `$4` the token; returns
    /// the token when it claimed, no row otherwise.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) claim: String,
    /// The same claim in one statement that also answers when it did not claim (PostgreSQL): the
    /// token it wrote, or else the `claim` of the key's live row as the statement's snapshot saw
    /// it (NULL: done). No row when a concurrent transaction committed the key's row after the
    /// snapshot was taken: running the statement again answers (as for the records' `claim`).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) claim_or_held: String,
    /// The `claim` of a key's live row (SQLite, after a claim that did not claim): `$1` key, `$2`
    /// now.
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) held: String,
    /// Marks a key done, whoever holds it: `$1` key, `$2` now, `$3` expiry (epoch ms).
    pub(crate) commit: String,
    /// Frees a key held by a claim: `$1` key, `$2` the claim's token.
    pub(crate) release: String,
}

impl DedupeStatements {
    /// The statements for the dedupe table `dedupe` (a plain SQL identifier).
    pub(crate) fn new(dedupe: &str) -> Self {
        // Insert a claim, or take over a sighting (done or claimed) that has run out.
        let claim = format!(
            "INSERT INTO {dedupe} (key, seen_at, expires_at, claim) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (key) DO UPDATE SET
                    seen_at = excluded.seen_at, expires_at = excluded.expires_at, claim = excluded.claim
                 WHERE {dedupe}.expires_at <= $2"
        );
        Self {
            create: format!(
                "CREATE TABLE IF NOT EXISTS {dedupe} (
                    key TEXT PRIMARY KEY,
                    seen_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    claim TEXT
                )"
            ),
            migrate: format!("ALTER TABLE {dedupe} ADD COLUMN IF NOT EXISTS claim TEXT"),
            // One statement: insert, or take over a sighting (done or claimed) that has run out.
            first_seen: format!(
                "INSERT INTO {dedupe} (key, seen_at, expires_at, claim) VALUES ($1, $2, $3, NULL)
                 ON CONFLICT (key) DO UPDATE SET
                    seen_at = excluded.seen_at, expires_at = excluded.expires_at, claim = NULL
                 WHERE {dedupe}.expires_at <= $2
                 RETURNING key"
            ),
            claim_or_held: format!(
                "WITH claimed AS ({claim} RETURNING claim)
                 SELECT claim FROM claimed
                 UNION ALL SELECT claim FROM {dedupe}
                 WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM claimed) AND expires_at > $2"
            ),
            claim: format!("{claim} RETURNING claim"),
            held: format!("SELECT claim FROM {dedupe} WHERE key = $1 AND expires_at > $2"),
            commit: format!(
                "INSERT INTO {dedupe} (key, seen_at, expires_at, claim) VALUES ($1, $2, $3, NULL)
                 ON CONFLICT (key) DO UPDATE SET
                    seen_at = excluded.seen_at, expires_at = excluded.expires_at, claim = NULL"
            ),
            release: format!("DELETE FROM {dedupe} WHERE key = $1 AND claim = $2"),
        }
    }

    /// The same statements with SQLite's numbered `?N` placeholders.
    #[cfg(feature = "sqlite")]
    pub(crate) fn for_sqlite(self) -> Self {
        let convert = |sql: String| super::sqlite_placeholders(&sql);
        Self {
            create: convert(self.create),
            migrate: convert(self.migrate),
            first_seen: convert(self.first_seen),
            claim: convert(self.claim),
            claim_or_held: convert(self.claim_or_held),
            held: convert(self.held),
            commit: convert(self.commit),
            release: convert(self.release),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sql::Statements;

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
        let s = Statements::new("app_sms").unwrap().dedupe;
        assert!(s.create.contains("CREATE TABLE IF NOT EXISTS app_sms_dedupe ("));
        assert!(s.first_seen.starts_with("INSERT INTO app_sms_dedupe "));
        assert!(s.first_seen.contains("WHERE app_sms_dedupe.expires_at <= $2"));
        let default = Statements::new("sms_idempotency").unwrap().dedupe;
        assert!(default.create.contains("sms_webhook_dedupe") && !default.create.contains("sms_idempotency"));
    }

    #[test]
    fn a_sighting_is_a_row_without_a_claim() {
        let s = DedupeStatements::new("d");
        assert!(s.first_seen.contains("claim = NULL"), "a sighting taken over is done: {}", s.first_seen);
        assert!(s.commit.contains("claim = NULL") && !s.commit.contains("WHERE"), "a commit is unconditional");
        assert!(s.create.contains("claim TEXT") && s.migrate == "ALTER TABLE d ADD COLUMN IF NOT EXISTS claim TEXT");
        assert!(s.claim.starts_with("INSERT INTO d ") && s.claim.ends_with("RETURNING claim"));
        assert!(s.claim_or_held.starts_with("WITH claimed AS (INSERT INTO d "), "{}", s.claim_or_held);
        assert_eq!(s.release, "DELETE FROM d WHERE key = $1 AND claim = $2");
    }

    #[cfg(feature = "sqlite")]
    #[test]
    fn sqlite_placeholders_are_numbered() {
        let s = DedupeStatements::new("t_dedupe").for_sqlite();
        assert!(s.first_seen.contains("VALUES (?1, ?2, ?3, NULL)") && !s.first_seen.contains('$'));
        assert!(s.claim.contains("VALUES (?1, ?2, ?3, ?4)") && !s.claim.contains('$'));
        assert_eq!(s.release, "DELETE FROM t_dedupe WHERE key = ?1 AND claim = ?2");
    }
}
