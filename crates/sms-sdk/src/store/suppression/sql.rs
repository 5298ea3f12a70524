//! The suppression list's SQL, shared by SQLite and PostgreSQL (plain runtime SQL, `$N`
//! placeholders; SQLite's numbered `?N` by [`SuppressionSql::for_sqlite`]).

use super::{StoreError, SuppressionEntry, SuppressionListing, SuppressionPage};

/// The default name of the suppression table (its events table adds `_events`).
pub(crate) const DEFAULT_TABLE: &str = "sms_suppression";

/// The suppression table `table` (a plain SQL identifier) and its events table.
pub(crate) fn tables(table: &str) -> Result<(String, String), StoreError> {
    crate::store::sql::check_table_name(table)?;
    Ok((table.to_owned(), format!("{table}_events")))
}

/// The statements of a suppression store.
#[derive(Debug, Clone)]
pub(crate) struct SuppressionSql {
    /// Creates both tables.
    pub(crate) create: Vec<String>,
    /// Records an event key: `$1` key, `$2` now, `$3` forget at (epoch ms); returns a row when it
    /// was unseen or forgotten. (SQLite runs it and [`upsert`](Self::upsert) in one transaction.)
    #[cfg(feature = "sqlite")]
    pub(crate) first_seen: String,
    /// Writes a change when it supersedes the entry: `$1` recipient, `$2` scope, `$3`
    /// suppressed, `$4` at, `$5` reason, `$6` event; returns a row when written.
    #[cfg(feature = "sqlite")]
    pub(crate) upsert: String,
    /// One change, whole, in one statement: `$1`..`$6` as the upsert's, `$7` now and `$8` the
    /// event's forget time. Answers (events recorded, rows written): a change whose event key
    /// was seen writes neither.
    #[cfg(feature = "postgres")]
    pub(crate) apply: String,
    /// The newest opt-out of `$1` in the scopes `$2`..`$5` (NULL for unused ones).
    pub(crate) check: String,
    /// The first page of opt-outs, at most `$1`.
    pub(crate) list_first: String,
    /// A page of opt-outs after (`$1`, `$2`), at most `$3`: a range on the primary key (one
    /// statement with an `IS NULL OR` would scan the table for every page).
    pub(crate) list_after: String,
}

/// The columns every read selects, in this order.
pub(crate) const COLUMNS: &str = "recipient, scope, at, reason, event";

impl SuppressionSql {
    /// The statements for the suppression table `table` and its events table.
    pub(crate) fn new(table: &str) -> Result<Self, StoreError> {
        let (t, events) = tables(table)?;
        Ok(Self {
            create: vec![
                format!(
                    "CREATE TABLE IF NOT EXISTS {t} (
                        recipient TEXT NOT NULL,
                        scope TEXT NOT NULL,
                        suppressed BOOLEAN NOT NULL,
                        at BIGINT NOT NULL,
                        reason TEXT NOT NULL,
                        event TEXT,
                        PRIMARY KEY (recipient, scope)
                    )"
                ),
                format!(
                    "CREATE TABLE IF NOT EXISTS {events} (
                        key TEXT PRIMARY KEY,
                        seen_at BIGINT NOT NULL,
                        expires_at BIGINT NOT NULL
                    )"
                ),
            ],
            #[cfg(feature = "sqlite")]
            first_seen: format!(
                "INSERT INTO {events} (key, seen_at, expires_at) VALUES ($1, $2, $3) {}",
                on_event_conflict(&events, "$2")
            ),
            #[cfg(feature = "sqlite")]
            upsert: format!(
                "INSERT INTO {t} (recipient, scope, suppressed, at, reason, event) VALUES ($1, $2, $3, $4, $5, $6) {}",
                on_conflict(&t)
            ),
            #[cfg(feature = "postgres")]
            apply: format!(
                "WITH seen AS (
                    INSERT INTO {events} (key, seen_at, expires_at)
                    SELECT CAST($6 AS TEXT), CAST($7 AS BIGINT), CAST($8 AS BIGINT) WHERE CAST($6 AS TEXT) IS NOT NULL
                    {}
                ), written AS (
                    INSERT INTO {t} (recipient, scope, suppressed, at, reason, event)
                    SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS BOOLEAN), CAST($4 AS BIGINT),
                        CAST($5 AS TEXT), CAST($6 AS TEXT)
                    WHERE CAST($6 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM seen)
                    {}
                )
                SELECT (SELECT count(*) FROM seen), (SELECT count(*) FROM written)",
                on_event_conflict(&events, "CAST($7 AS BIGINT)"),
                on_conflict(&t)
            ),
            check: format!(
                "SELECT {COLUMNS} FROM {t}
                 WHERE recipient = $1 AND scope IN ($2, $3, $4, $5) AND suppressed
                 ORDER BY at DESC LIMIT 1"
            ),
            list_first: format!("SELECT {COLUMNS} FROM {t} WHERE suppressed ORDER BY recipient, scope LIMIT $1"),
            list_after: format!(
                "SELECT {COLUMNS} FROM {t}
                 WHERE (recipient, scope) > (CAST($1 AS TEXT), CAST($2 AS TEXT)) AND suppressed
                 ORDER BY recipient, scope LIMIT $3"
            ),
        })
    }

    /// The same statements with SQLite's numbered `?N` placeholders.
    #[cfg(feature = "sqlite")]
    pub(crate) fn for_sqlite(self) -> Self {
        let convert = |sql: String| crate::store::sql::sqlite_placeholders(&sql);
        Self {
            create: self.create,
            first_seen: convert(self.first_seen),
            upsert: convert(self.upsert),
            #[cfg(feature = "postgres")]
            apply: self.apply,
            check: convert(self.check),
            list_first: convert(self.list_first),
            list_after: convert(self.list_after),
        }
    }
}

/// The ordering rule of [`supersedes`](super::supersedes) as the conflict clause of an upsert
/// into `t`, evaluated on the row it locks; returns the recipient when written.
fn on_conflict(t: &str) -> String {
    format!(
        "ON CONFLICT (recipient, scope) DO UPDATE SET
            suppressed = excluded.suppressed, at = excluded.at, reason = excluded.reason, event = excluded.event
         WHERE excluded.at > {t}.at OR (excluded.at = {t}.at AND excluded.suppressed AND NOT {t}.suppressed)
         RETURNING recipient"
    )
}

/// The conflict clause of recording an event key in `events` at `now`: a key seen within its
/// retention is not recorded again; returns the key when recorded.
fn on_event_conflict(events: &str, now: &str) -> String {
    format!(
        "ON CONFLICT (key) DO UPDATE SET seen_at = excluded.seen_at, expires_at = excluded.expires_at
         WHERE {events}.expires_at <= {now}
         RETURNING key"
    )
}

/// The limit of a page, as SQL takes it.
pub(crate) fn limit(page: &SuppressionPage) -> i64 {
    i64::try_from(page.size()).unwrap_or(i64::MAX)
}

/// The check parameters `$2`..`$5`: the scope keys, NULL for unused slots.
pub(crate) fn check_params(scopes: &[super::Scope]) -> Result<[Option<String>; 4], StoreError> {
    let mut keys: [Option<String>; 4] = Default::default();
    for (slot, scope) in keys.iter_mut().zip(scopes) {
        *slot = Some(scope.key()?);
    }
    Ok(keys)
}

/// The listing of a page's rows.
pub(crate) fn listing(
    entries: Vec<SuppressionEntry>,
    page: &SuppressionPage,
) -> Result<SuppressionListing, StoreError> {
    SuppressionListing::of(entries, page.size())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_are_plain_identifiers() {
        assert_eq!(tables(DEFAULT_TABLE).unwrap(), ("sms_suppression".into(), "sms_suppression_events".into()));
        assert!(tables("x; DROP TABLE y").is_err());
    }

    #[cfg(feature = "sqlite")]
    #[test]
    fn sqlite_placeholders_are_numbered() {
        let sql = SuppressionSql::new("t").unwrap().for_sqlite();
        assert!(sql.upsert.contains("VALUES (?1, ?2, ?3, ?4, ?5, ?6)") && !sql.list_after.contains('$'));
    }
}
