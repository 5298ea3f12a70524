//! A URL as the provider signed it, taken apart without parsing (a parser would normalize what
//! was signed).

// Shared by the four provider features: a build with only some of them leaves some helpers unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

/// Splits a URL as received into scheme, authority, path and query (with its `?`).
pub(crate) fn split_url(url: &str) -> (&str, &str, &str, &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (before_fragment, _) = rest.split_once('#').unwrap_or((rest, ""));
    let authority_end = before_fragment.find(['/', '?']).unwrap_or(before_fragment.len());
    let (authority, tail) = before_fragment.split_at(authority_end);
    let query_start = tail.find('?').unwrap_or(tail.len());
    let (path, query) = tail.split_at(query_start);
    (scheme, authority, path, query)
}

/// The query of a URL as received, without the `?` that starts it (that one only: in
/// `https://h/p??a=1` the query is `?a=1`, whose first parameter is named `?a`).
pub(crate) fn query(url: &str) -> &str {
    let (_, _, _, query) = split_url(url);
    query.strip_prefix('?').unwrap_or(query)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_as_received() {
        assert_eq!(split_url("https://Ex.com:8443/a/b?x=1#f"), ("https", "Ex.com:8443", "/a/b", "?x=1"));
        assert_eq!(split_url("https://answer.url"), ("https", "answer.url", "", ""));
        assert_eq!(split_url("http://h?q"), ("http", "h", "", "?q"));
    }
}
