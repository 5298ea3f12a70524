//! The SQL shared by the SQLite and PostgreSQL stores (plain runtime SQL, `$N` placeholders).

use super::StoreError;

/// Every statement of a store, for one table.
#[derive(Debug, Clone)]
pub(crate) struct Statements {
    pub(crate) create: String,
    pub(crate) get: String,
    pub(crate) reserve: String,
    pub(crate) select: String,
    pub(crate) finalize: String,
    pub(crate) list: String,
    pub(crate) resolve_sent: String,
    pub(crate) resolve_not_sent: String,
}

impl Statements {
    /// The statements for `table` (a plain SQL identifier).
    pub(crate) fn new(table: &str) -> Result<Self, StoreError> {
        let valid = table.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(StoreError::new(format!("{table:?} is not a plain SQL table name")));
        }
        let columns = super::row::COLUMNS;
        let unresolved = "(state = 'unknown' OR (state = 'reserved' AND reserved_at < $2))";
        Ok(Self {
            create: format!(
                "CREATE TABLE IF NOT EXISTS {table} (
                    key TEXT PRIMARY KEY,
                    fingerprint TEXT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('reserved', 'accepted', 'rejected', 'unknown')),
                    reservation_id TEXT,
                    reserved_at BIGINT,
                    record TEXT,
                    expires_at BIGINT
                )"
            ),
            get: format!("SELECT {columns} FROM {table} WHERE key = $1 AND (expires_at IS NULL OR expires_at > $2)"),
            // One statement: insert, or take over an expired record or a same-message rejection.
            reserve: format!(
                "INSERT INTO {table} (key, fingerprint, state, reservation_id, reserved_at, record, expires_at)
                 VALUES ($1, $2, 'reserved', $3, $4, NULL, NULL)
                 ON CONFLICT (key) DO UPDATE SET
                    fingerprint = excluded.fingerprint, state = 'reserved', reservation_id = excluded.reservation_id,
                    reserved_at = excluded.reserved_at, record = NULL, expires_at = NULL
                 WHERE ({table}.expires_at IS NOT NULL AND {table}.expires_at <= $4)
                    OR ({table}.state = 'rejected' AND {table}.fingerprint = excluded.fingerprint)
                 RETURNING reservation_id"
            ),
            select: format!("SELECT {columns} FROM {table} WHERE key = $1"),
            finalize: format!(
                "UPDATE {table} SET state = $3, record = $4, expires_at = $5, reservation_id = NULL, reserved_at = NULL
                 WHERE key = $1 AND state = 'reserved' AND reservation_id = $2"
            ),
            list: format!("SELECT {columns} FROM {table} WHERE expires_at IS NULL OR expires_at > $1 ORDER BY key"),
            resolve_sent: format!(
                "UPDATE {table} SET state = 'accepted', record = $3, expires_at = $4, reservation_id = NULL,
                    reserved_at = NULL
                 WHERE key = $1 AND {unresolved}"
            ),
            resolve_not_sent: format!("DELETE FROM {table} WHERE key = $1 AND {unresolved}"),
        })
    }

    /// The same statements with SQLite's numbered `?N` placeholders.
    #[cfg(feature = "sqlite")]
    pub(crate) fn for_sqlite(self) -> Self {
        let convert = |sql: String| {
            let mut out = String::with_capacity(sql.len());
            let mut chars = sql.chars().peekable();
            while let Some(c) = chars.next() {
                out.push(if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) { '?' } else { c });
            }
            out
        };
        Self {
            create: convert(self.create),
            get: convert(self.get),
            reserve: convert(self.reserve),
            select: convert(self.select),
            finalize: convert(self.finalize),
            list: convert(self.list),
            resolve_sent: convert(self.resolve_sent),
            resolve_not_sent: convert(self.resolve_not_sent),
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
    }

    #[cfg(feature = "sqlite")]
    #[test]
    fn sqlite_placeholders_are_numbered() {
        let s = Statements::new("t").unwrap().for_sqlite();
        assert!(s.finalize.contains("key = ?1") && s.finalize.contains("expires_at = ?5"));
        assert!(!s.reserve.contains('$'));
    }
}
