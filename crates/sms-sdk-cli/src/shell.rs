//! Words the command prints for a POSIX shell to read back (`export` lines, commands to run).

/// `value` as one shell word: as it is when it has only characters the shell leaves alone,
/// else in single quotes (a `'` inside written `'\''`).
pub(crate) fn quote(value: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "+-./:=@_%,".contains(c);
    if !value.is_empty() && value.chars().all(plain) {
        return value.to_owned();
    }
    format!("'{}'", value.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_only_when_the_shell_would_change_them() {
        assert_eq!(quote("http://127.0.0.1:4010"), "http://127.0.0.1:4010");
        assert_eq!(quote("Y4nP/r4+qD=="), "Y4nP/r4+qD==");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("two words"), "'two words'");
        assert_eq!(quote("it's $HOME"), "'it'\\''s $HOME'");
        assert_eq!(quote("a\nb"), "'a\nb'");
    }
}
