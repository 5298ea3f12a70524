//! Keeping phone numbers, provider text and credentials out of logs and errors.
//!
//! ```
//! use sms_sdk::redact::{mask_phone_number, redact_text};
//!
//! assert_eq!(mask_phone_number("+14155550123"), "+1********23");
//! assert_eq!(
//!     redact_text("The 'To' number +14155550123 is not a valid phone number."),
//!     "The 'To' number +1********23 is not a valid phone number."
//! );
//! ```

use std::fmt;

use secrecy::{ExposeSecret, SecretString};

/// The longest provider text kept in an error, in UTF-16 units.
pub const MAX_PROVIDER_TEXT: usize = 200;

/// Masks a phone number (or any short identifier) for display.
///
/// Four characters or fewer are masked entirely. Otherwise the first two characters are kept
/// when the value starts with `+` (the first one otherwise) and the last two, with one `*` for
/// every character in between.
#[must_use]
pub fn mask_phone_number(value: &str) -> String {
    let len = value.chars().count();
    if len <= 4 {
        return "*".repeat(len);
    }
    let head = if value.starts_with('+') { 2 } else { 1 };
    // `len > 4`, so the head, at least one `*` and the last two never overlap.
    let hidden = len.saturating_sub(head).saturating_sub(2);
    value.chars().enumerate().map(|(i, c)| if i < head || i >= head.saturating_add(hidden) { c } else { '*' }).collect()
}

/// Makes provider text safe to log: phone-like runs are masked, control characters become one
/// space, and the result is cut to 200 UTF-16 units (199 and `…`).
#[must_use]
pub fn redact_text(text: &str) -> String {
    // Only the first 200 units survive; masking looks a little further so that a number cut by
    // the limit is still masked, but never at the whole of a huge text.
    let head = text.char_indices().nth(4 * MAX_PROVIDER_TEXT).map_or(text, |(end, _)| text.get(..end).unwrap_or(text));
    let masked = mask_phone_runs(head);
    let mut cleaned = String::with_capacity(masked.len());
    let mut in_control = false;
    for c in masked.chars() {
        if is_control(c) {
            if !in_control {
                cleaned.push(' ');
            }
            in_control = true;
        } else {
            cleaned.push(c);
            in_control = false;
        }
    }
    truncate_utf16(js_trim(&cleaned), MAX_PROVIDER_TEXT)
}

fn is_control(c: char) -> bool {
    matches!(c, '\u{0000}'..='\u{001F}' | '\u{007F}')
}

/// JavaScript's `\s`: `WhiteSpace` and `LineTerminator` (unlike Rust's, it has U+FEFF and not U+0085).
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'..='\u{000D}'
            | '\u{0020}'
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// JavaScript's `String.prototype.trim`.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// Cuts `s` to at most `max` UTF-16 units, the last of them `…`, when it is longer.
fn truncate_utf16(s: &str, max: usize) -> String {
    if s.encode_utf16().count() <= max {
        return s.to_owned();
    }
    let mut out = String::new();
    let mut units = 0;
    for c in s.chars() {
        if units + c.len_utf16() > max - 1 {
            break;
        }
        units += c.len_utf16();
        out.push(c);
    }
    out.push('…');
    out
}

/// Replaces every match of `\+?\d[\d\s().-]{5,}\d` (a phone-like run of at least 7 characters)
/// with the masked form of its digits and `+`.
fn mask_phone_runs(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |k: usize| chars.get(k).copied();
    let in_run = |c: char| c.is_ascii_digit() || is_js_whitespace(c) || matches!(c, '(' | ')' | '.' | '-');
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(c) = at(i) {
        let first_digit = if c == '+' { i.saturating_add(1) } else { i };
        if at(first_digit).is_some_and(|d| d.is_ascii_digit()) {
            let after_first = first_digit.saturating_add(1);
            let run_end = (after_first..chars.len()).find(|&k| !at(k).is_some_and(in_run)).unwrap_or(chars.len());
            // The last digit of the run that leaves at least five characters between it and the
            // first digit ends the (greedy) match.
            let last_digit =
                (first_digit.saturating_add(6)..run_end).rev().find(|&m| at(m).is_some_and(|d| d.is_ascii_digit()));
            if let Some(last) = last_digit {
                let kept: String = chars
                    .iter()
                    .take(last.saturating_add(1))
                    .skip(i)
                    .filter(|c| c.is_ascii_digit() || **c == '+')
                    .collect();
                out.push_str(&mask_phone_number(&kept));
                i = last.saturating_add(1);
                continue;
            }
        }
        out.push(c);
        i = i.saturating_add(1);
    }
    out
}

/// A credential. Its `Debug` prints `***`; the value is zeroized on drop.
#[derive(Clone)]
pub struct Secret(SecretString);

impl Secret {
    /// Wraps a credential.
    #[must_use]
    pub fn new(value: impl Into<String>) -> Self {
        Self(SecretString::from(value.into()))
    }

    /// The credential itself, for building a request or a signature.
    #[must_use]
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }

    /// True when the credential is the empty string.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.expose().is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self::new(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self::new(value)
    }
}

/// `url` with the password of its userinfo hidden, as `Debug` and errors show a store URL:
/// `postgres://user:secret@host/db` becomes `postgres://user:***@host/db`.
///
/// The userinfo ends at the last `@` (a password may hold an unescaped `@`, `/` or `?`), so text
/// after such an `@` may be hidden too: never less. The value of a `password=` query parameter is
/// hidden as well, and so is an `sms_sdk_token=` (the secret of an Infobip callback URL), and text without `://` is read as a PostgreSQL key-value connection string
/// (`host=db password=secret` becomes `host=db password=***`). Never panics, whatever the text.
///
/// ```
/// use sms_sdk::redact::redact_url;
///
/// assert_eq!(redact_url("postgres://app:p@ss@db.internal:5432/app"), "postgres://app:***@db.internal:5432/app");
/// assert_eq!(redact_url("postgres://app@db.internal/app"), "postgres://app@db.internal/app");
/// ```
#[must_use]
pub fn redact_url(url: &str) -> String {
    redact_credentials(url, false)
}

/// `url` with its whole userinfo hidden, user name included: `redis://user:secret@host:6379/0`
/// becomes `redis://***@host:6379/0`. For schemes whose lone userinfo may be a password
/// (`redis://secret@host`). Otherwise as [`redact_url`].
///
/// ```
/// use sms_sdk::redact::redact_url_userinfo;
///
/// assert_eq!(redact_url_userinfo("redis://default:secret@cache:6379/0"), "redis://***@cache:6379/0");
/// ```
#[must_use]
pub fn redact_url_userinfo(url: &str) -> String {
    redact_credentials(url, true)
}

fn redact_credentials(text: &str, whole_userinfo: bool) -> String {
    let Some((scheme, rest)) = text.split_once("://") else { return hide_key_value_password(text) };
    let (userinfo, host) = match rest.rsplit_once('@') {
        Some((userinfo, host)) => (Some(userinfo), host),
        None => (None, rest),
    };
    let userinfo = match userinfo.map(|u| (u, u.split_once(':'))) {
        None => String::new(),
        Some(_) if whole_userinfo => "***@".to_owned(),
        Some((_, Some((user, _)))) => format!("{user}:***@"),
        Some((user, None)) => format!("{user}@"),
    };
    let host = SECRET_PARAMETERS.iter().fold(host.to_owned(), |text, name| hide_query_parameter(&text, name));
    format!("{scheme}://{userinfo}{host}")
}

/// The query parameters whose values [`redact_url`] hides (each with its `=`).
const SECRET_PARAMETERS: [&str; 2] = ["password=", "sms_sdk_token="];

/// `text` with the value of every query parameter `name` (lowercase, with its `=`) replaced by
/// `***`.
fn hide_query_parameter(text: &str, parameter: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (at, name) in lower.match_indices(parameter) {
        let after_separator =
            at.checked_sub(1).and_then(|i| lower.as_bytes().get(i)).is_some_and(|b| matches!(b, b'?' | b'&'));
        let start = at.saturating_add(name.len());
        if !after_separator || start < copied {
            continue;
        }
        let end = lower.get(start..).and_then(|v| v.find(['&', '#'])).map_or(text.len(), |n| start.saturating_add(n));
        out.push_str(text.get(copied..start).unwrap_or_default());
        out.push_str("***");
        copied = end;
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    out
}

/// `text` (a `key=value …` connection string) with the value of `password` replaced by `***`.
fn hide_key_value_password(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (at, name) in lower.match_indices("password") {
        let at_token_start =
            at.checked_sub(1).and_then(|i| lower.as_bytes().get(i)).is_none_or(u8::is_ascii_whitespace);
        let rest = lower.get(at.saturating_add(name.len())..).unwrap_or_default();
        let Some(value) = rest.trim_start().strip_prefix('=').map(str::trim_start) else { continue };
        let start = text.len().saturating_sub(value.len());
        if !at_token_start || start < copied {
            continue;
        }
        let length = match value.strip_prefix('\'') {
            // A quoted value ends at the next quote that no backslash escapes (or at the end).
            Some(quoted) => {
                let mut escaped = false;
                quoted
                    .find(|c| {
                        let end = c == '\'' && !escaped;
                        escaped = c == '\\' && !escaped;
                        end
                    })
                    .map_or(value.len(), |n| n.saturating_add(2))
            }
            None => value.find(|c: char| c.is_ascii_whitespace()).unwrap_or(value.len()),
        };
        out.push_str(text.get(copied..start).unwrap_or_default());
        out.push_str("***");
        copied = start.saturating_add(length);
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t021_mask_phone_number() {
        assert_eq!(mask_phone_number("+14155550123"), "+1********23");
        assert_eq!(mask_phone_number("1234"), "****");
        assert_eq!(mask_phone_number("+447700900123"), "+4*********23");
        assert_eq!(mask_phone_number("14155550123"), "1********23");
        assert_eq!(mask_phone_number("+12345"), "+1**45");
        assert_eq!(mask_phone_number("Acme"), "****");
    }

    #[test]
    fn t022_redact_masks_numbers_in_provider_text() {
        assert_eq!(
            redact_text("The 'To' number +14155550123 is not a valid phone number."),
            "The 'To' number +1********23 is not a valid phone number."
        );
    }

    #[test]
    fn t023_redact_masks_spaced_numbers() {
        assert_eq!(redact_text("call 415 555 0123 now"), "call 4*******23 now");
    }

    #[test]
    fn t024_redact_caps_length_and_keeps_short_codes() {
        let long = redact_text(&"x".repeat(500));
        assert_eq!(long.encode_utf16().count(), 200);
        assert_eq!(long, format!("{}…", "x".repeat(199)));
        assert_eq!(redact_text("error 21211"), "error 21211");
    }

    #[test]
    fn t026_redact_punctuated_numbers() {
        assert_eq!(redact_text("(415) 555-0123"), "(4*******23");
        assert_eq!(redact_text("order 1234567 shipped"), "order 1****67 shipped");
        assert_eq!(redact_text("+1 (415) 555-0123"), "+1********23");
    }

    #[test]
    fn redact_collapses_control_characters_and_trims() {
        assert_eq!(redact_text("\u{0}bad\r\n\tthing\u{7f} "), "bad thing");
    }

    #[test]
    fn secret_debug_hides_the_value() {
        let secret = Secret::new("hunter2");
        assert_eq!(format!("{secret:?}"), "***");
        assert_eq!(secret.expose(), "hunter2");
    }

    #[test]
    fn urls_hide_their_password() {
        let cases = [
            ("postgres://app:secret@db:5432/app", "postgres://app:***@db:5432/app"),
            ("postgres://app:p@ss@word@db/app", "postgres://app:***@db/app"),
            ("postgres://app:p/a?s#s@db/app", "postgres://app:***@db/app"),
            ("postgres://app@db/app", "postgres://app@db/app"),
            ("postgres://app:@db/app", "postgres://app:***@db/app"),
            ("postgres://db/app", "postgres://db/app"),
            ("postgres://app:secret@[::1]:5432/app", "postgres://app:***@[::1]:5432/app"),
            ("postgres://[::1]:5432/app", "postgres://[::1]:5432/app"),
            (
                "postgres://db/app?user=app&password=secret&sslmode=disable",
                "postgres://db/app?user=app&password=***&sslmode=disable",
            ),
            ("postgres://db/app?PASSWORD=secret", "postgres://db/app?PASSWORD=***"),
            ("postgres://db/app?mypassword=x", "postgres://db/app?mypassword=x"),
            (
                "https://hooks.example/infobip?sms_sdk_token=0123456789abcdef&x=1",
                "https://hooks.example/infobip?sms_sdk_token=***&x=1",
            ),
            ("redis://:secret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
            ("host=db user=app password=secret dbname=app", "host=db user=app password=*** dbname=app"),
            ("password = 'se cr\\'et' host=db", "password = *** host=db"),
            ("host=db password='unterminated", "host=db password=***"),
            ("host=db oldpassword=x", "host=db oldpassword=x"),
            ("sqlite:/var/lib/app/state.db", "sqlite:/var/lib/app/state.db"),
        ];
        for (url, shown) in cases {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }

    #[test]
    fn redis_urls_hide_the_whole_userinfo() {
        assert_eq!(redact_url_userinfo("redis://user:secret@cache:6379/0"), "redis://***@cache:6379/0");
        assert_eq!(redact_url_userinfo("redis://secret@cache:6379/0"), "redis://***@cache:6379/0");
        assert_eq!(redact_url_userinfo("rediss://u:p@ss@[::1]:6380"), "rediss://***@[::1]:6380");
        assert_eq!(redact_url_userinfo("redis://cache:6379/0"), "redis://cache:6379/0");
    }

    #[test]
    fn garbage_is_never_a_panic() {
        for text in
            ["", "://", "@", ":@", "a://@", "password", "password=", "password ='", "é@://::é", "\u{0}://\u{0}@"]
        {
            let _ = (redact_url(text), redact_url_userinfo(text));
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_redacts_without_panicking(text in "\\PC*", password in "[^@*]{1,12}") {
            let _ = (redact_url(&text), redact_url_userinfo(&text));
            let (shown, hidden) = (redact_url(&format!("postgres://app:{password}@db/app")), format!(":{password}@"));
            proptest::prop_assert!(!shown.contains(&hidden));
            let (shown, hidden) = (redact_url_userinfo(&format!("redis://{password}@cache")), format!("{password}@"));
            proptest::prop_assert!(!shown.contains(&hidden));
        }
    }
}
