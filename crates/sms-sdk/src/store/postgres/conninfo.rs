//! The store's own parameters of a connection string (a `postgres://` URL or libpq's
//! `key=value` form), taken out before the rest goes to `tokio_postgres::Config`, which rejects
//! parameters it does not know.

use super::StoreError;

/// `conninfo` without the parameters named in `names`, and those parameters (decoded: percent
/// escapes in a URL, quotes and backslashes in `key=value`) in the order they were written.
pub(super) fn take_parameters(conninfo: &str, names: &[&str]) -> Result<(String, Vec<(String, String)>), StoreError> {
    if conninfo.starts_with("postgres://") || conninfo.starts_with("postgresql://") {
        from_url(conninfo, names)
    } else {
        from_pairs(conninfo, names)
    }
}

fn from_url(url: &str, names: &[&str]) -> Result<(String, Vec<(String, String)>), StoreError> {
    // The query starts at the first `?` after the user information (a password may hold `?`
    // only percent-encoded, but be lenient with a raw one before `@`).
    let authority = url.rfind('@').map_or(0, |at| at + 1);
    let Some(mark) = url.get(authority..).and_then(|rest| rest.find('?')).map(|at| authority + at) else {
        return Ok((url.to_owned(), Vec::new()));
    };
    let (base, query) = (url.get(..mark).unwrap_or_default(), url.get(mark + 1..).unwrap_or_default());
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    for part in query.split('&') {
        let (name, value) = part.split_once('=').unwrap_or((part, ""));
        let name_decoded = percent_decode(name)?;
        if names.contains(&name_decoded.as_str()) {
            taken.push((name_decoded, percent_decode(value)?));
        } else {
            kept.push(part);
        }
    }
    let url = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
    Ok((url, taken))
}

fn percent_decode(text: &str) -> Result<String, StoreError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            let Some(value) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) else {
                return Err(StoreError::new("a URL parameter has a malformed percent escape"));
            };
            out.push(value);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| StoreError::new("a URL parameter is not UTF-8 once decoded"))
}

fn from_pairs(conninfo: &str, names: &[&str]) -> Result<(String, Vec<(String, String)>), StoreError> {
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    let mut chars = conninfo.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(StoreError::new(format!("the connection string's `{key}` has no `=`")));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    None => {
                        return Err(StoreError::new(format!("the connection string's `{key}` has no closing quote")));
                    }
                    Some('\'') => break,
                    Some('\\') => value.extend(chars.next()),
                    Some(c) => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next());
                } else {
                    value.push(c);
                }
            }
        }
        if names.contains(&key.as_str()) {
            taken.push((key, value));
        } else {
            kept.push(format!("{key}='{}'", value.replace('\\', "\\\\").replace('\'', "\\'")));
        }
    }
    Ok((kept.join(" "), taken))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["sslmode", "sslrootcert"];

    #[test]
    fn url_parameters_are_taken_out_and_decoded() {
        let cases = [
            ("postgres://h/db", "postgres://h/db", vec![]),
            ("postgres://h/db?sslmode=require", "postgres://h/db", vec![("sslmode", "require")]),
            (
                "postgresql://u:p@h/db?connect_timeout=3&sslrootcert=%2Fetc%2Fca.pem&x=1",
                "postgresql://u:p@h/db?connect_timeout=3&x=1",
                vec![("sslrootcert", "/etc/ca.pem")],
            ),
            ("postgres://u:a?sslmode=x@h/db", "postgres://u:a?sslmode=x@h/db", vec![]),
        ];
        for (url, rest, found) in cases {
            let (got, taken) = take_parameters(url, NAMES).unwrap();
            let taken: Vec<_> = taken.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            assert_eq!((got.as_str(), taken), (rest, found), "{url}");
        }
        assert!(take_parameters("postgres://h/db?sslrootcert=%zz", NAMES).is_err());
    }

    #[test]
    fn key_value_parameters_are_taken_out_and_the_rest_quoted() {
        let (rest, taken) =
            take_parameters("host=h  user = 'o\\'neil' sslmode=verify-full sslrootcert='/a b.pem'", NAMES).unwrap();
        assert_eq!(rest, "host='h' user='o\\'neil'");
        assert_eq!(taken, vec![("sslmode".into(), "verify-full".into()), ("sslrootcert".into(), "/a b.pem".into())]);
        let config: tokio_postgres::Config = rest.parse().unwrap();
        assert_eq!(config.get_user(), Some("o'neil"));
        assert!(take_parameters("host=h sslmode='x", NAMES).is_err());
        assert!(take_parameters("host", NAMES).is_err());
    }
}
