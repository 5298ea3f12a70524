//! The little CSV the suppression import and export need: one record per line (RFC 4180 quoting,
//! no line breaks inside a field), each line at most [`MAX_LINE`] bytes.

use std::io::{self, BufRead, Read as _, Write};

/// The longest line read, in bytes.
pub(crate) const MAX_LINE: usize = 4096;

/// Reads records one line at a time; memory stays one line whatever the file's length.
pub(crate) struct Reader<R> {
    inner: R,
    buf: Vec<u8>,
    line: usize,
}

impl<R: BufRead> Reader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self { inner, buf: Vec::with_capacity(256), line: 0 }
    }

    /// The number of the line read last (1-based).
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// The next record, skipping blank lines; `None` at the end.
    ///
    /// # Errors
    /// A message (without the line's text) for a line that is too long, not UTF-8, or has an
    /// unterminated quote, or when reading fails.
    pub(crate) fn next_record(&mut self) -> Result<Option<Vec<String>>, String> {
        loop {
            self.buf.clear();
            let limit = u64::try_from(MAX_LINE).unwrap_or(u64::MAX).saturating_add(1);
            let read = (&mut self.inner).take(limit).read_until(b'\n', &mut self.buf).map_err(|e| e.to_string())?;
            if read == 0 {
                return Ok(None);
            }
            self.line = self.line.saturating_add(1);
            let ended = self.buf.last() == Some(&b'\n');
            if !ended && self.buf.len() > MAX_LINE {
                return Err(format!("the line is longer than {MAX_LINE} bytes"));
            }
            while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
                self.buf.pop();
            }
            let text = std::str::from_utf8(&self.buf).map_err(|_| "the line is not UTF-8".to_owned())?;
            if text.trim().is_empty() {
                continue;
            }
            return split(text).map(Some).map_err(str::to_owned);
        }
    }
}

/// The fields of one line.
fn split(line: &str) -> Result<Vec<String>, &'static str> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (_, c) => field.push(c),
        }
    }
    if quoted {
        return Err("a quoted field is not closed on its line");
    }
    fields.push(field);
    Ok(fields)
}

/// Writes one record, quoting the fields that need it.
pub(crate) fn write_record(out: &mut dyn Write, fields: &[&str]) -> io::Result<()> {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        if field.contains([',', '"', '\r', '\n']) {
            write!(out, "\"{}\"", field.replace('"', "\"\""))?;
        } else {
            out.write_all(field.as_bytes())?;
        }
    }
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str) -> Vec<Result<Vec<String>, String>> {
        let mut reader = Reader::new(text.as_bytes());
        let mut all = Vec::new();
        loop {
            match reader.next_record() {
                Ok(Some(record)) => all.push(Ok(record)),
                Ok(None) => return all,
                Err(e) => {
                    all.push(Err(e));
                    return all;
                }
            }
        }
    }

    #[test]
    fn quoted_fields_round_trip() {
        let mut out = Vec::new();
        write_record(&mut out, &["+14155550123", "sender:ACME", "said \"stop\", twice", ""]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "+14155550123,sender:ACME,\"said \"\"stop\"\", twice\",\n");
        assert_eq!(
            records(&text),
            [Ok(vec![
                "+14155550123".to_owned(),
                "sender:ACME".to_owned(),
                "said \"stop\", twice".to_owned(),
                String::new()
            ])]
        );
    }

    #[test]
    fn blank_lines_are_skipped_and_bad_lines_refused() {
        let all = records("a\r\n\n  \nb,c\n");
        assert_eq!(all, [Ok(vec!["a".to_owned()]), Ok(vec!["b".to_owned(), "c".to_owned()])]);
        assert!(records("\"open\n").last().unwrap().is_err());
        assert!(records(&"x".repeat(MAX_LINE + 1)).last().unwrap().is_err());
        assert!(records(&format!("{}\n", "x".repeat(MAX_LINE))).last().unwrap().is_ok());
        let mut reader = Reader::new(&b"ok\n\xff\n"[..]);
        assert!(reader.next_record().unwrap().is_some());
        assert!(reader.next_record().is_err());
        assert_eq!(reader.line(), 2);
    }
}
