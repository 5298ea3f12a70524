//! The rows of a batch: a CSV file (RFC 4180, read as a stream), the columns the flags name, the
//! body template, and the idempotency key of each row.

use std::fs::File;
use std::path::Path;

use sms_sdk::Message;

/// What goes wrong with the input; every message names the file, and the row when there is one.
pub(crate) type InputError = String;

/// A part of a body template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Column(usize),
}

/// How a row becomes a message: the columns of the recipient, the body (or its template) and
/// the key (or the key prefix), and the sender.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    to: usize,
    body: Vec<Part>,
    key: Key,
    from: Option<String>,
    webhook_url: Option<String>,
}

#[derive(Debug, Clone)]
enum Key {
    Column(usize),
    Prefix(String),
}

/// The flags that say how rows become messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Columns<'a> {
    pub(crate) to: &'a str,
    pub(crate) body_column: Option<&'a str>,
    pub(crate) body_template: Option<&'a str>,
    pub(crate) key_column: Option<&'a str>,
    pub(crate) key_prefix: Option<&'a str>,
    pub(crate) from: Option<&'a str>,
    /// Every message's status callback URL.
    pub(crate) webhook_url: Option<&'a str>,
}

/// The rows of a CSV file, one at a time.
pub(crate) struct Rows {
    reader: csv::Reader<File>,
    record: csv::StringRecord,
    layout: Layout,
    /// The number of the last data row read (1 = the first row after the header).
    row: u64,
    path: String,
}

/// Opens the CSV file at `path` (the first line is the header).
pub(crate) fn open(path: &Path) -> Result<csv::Reader<File>, InputError> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .map_err(|e| format!("cannot read the CSV file {}: {e}", path.display()))
}

/// Counts the data rows of the CSV file at `path` (a first pass, for the progress and its ETA).
pub(crate) fn count(path: &Path) -> Result<u64, InputError> {
    let mut reader = open(path)?;
    let mut record = csv::ByteRecord::new();
    let mut rows = 0_u64;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) => rows = rows.saturating_add(1),
            Ok(false) => return Ok(rows),
            Err(error) => return Err(csv_error(&path.display().to_string(), rows.saturating_add(1), &error)),
        }
    }
}

/// A CSV error, naming the row.
#[allow(clippy::wildcard_enum_match_arm)] // `csv::ErrorKind` is non-exhaustive: other kinds say what they are
fn csv_error(path: &str, row: u64, error: &csv::Error) -> InputError {
    let what = match error.kind() {
        csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("it has {len} field(s) where the header has {expected_len}")
        }
        csv::ErrorKind::Utf8 { .. } => "it is not valid UTF-8".to_owned(),
        _ => error.to_string(),
    };
    format!("{path}: row {row}: {what}")
}

impl Rows {
    /// The rows of `path`, laid out by `columns`; an error when a named column is not in the
    /// header or the template is malformed.
    pub(crate) fn new(path: &Path, columns: Columns<'_>) -> Result<Self, InputError> {
        let mut reader = open(path)?;
        let display = path.display().to_string();
        let header = reader.headers().map_err(|e| csv_error(&display, 0, &e))?.clone();
        let names: Vec<&str> = header.iter().collect();
        let find = |name: &str| {
            names
                .iter()
                .position(|column| *column == name)
                .ok_or_else(|| format!("{display}: the header has no column `{name}` (columns: {})", names.join(", ")))
        };
        let body = match (columns.body_column, columns.body_template) {
            (Some(column), _) => vec![Part::Column(find(column)?)],
            (None, Some(template)) => parse_template(template, &find)?,
            (None, None) => return Err("one of --body-column and --body-template is required".to_owned()),
        };
        let key = match (columns.key_column, columns.key_prefix) {
            (Some(column), _) => Key::Column(find(column)?),
            (None, Some(prefix)) => Key::Prefix(prefix.to_owned()),
            (None, None) => {
                return Err("one of --key-column and --key-prefix is required: every row needs an idempotency key, \
                            so that the batch can be run again safely"
                    .to_owned());
            }
        };
        let layout = Layout {
            to: find(columns.to)?,
            body,
            key,
            from: columns.from.map(str::to_owned),
            webhook_url: columns.webhook_url.map(str::to_owned),
        };
        Ok(Self { reader, record: csv::StringRecord::new(), layout, row: 0, path: display })
    }

    /// The next row as its number and message; `None` at the end.
    pub(crate) fn next_message(&mut self) -> Option<Result<(u64, Message), InputError>> {
        self.row = self.row.saturating_add(1);
        match self.reader.read_record(&mut self.record) {
            Ok(false) => None,
            Ok(true) => Some(self.layout.message(&self.record, self.row).map(|message| (self.row, message))),
            Err(error) => Some(Err(csv_error(&self.path, self.row, &error))),
        }
    }
}

impl Iterator for Rows {
    type Item = Result<(u64, Message), InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_message()
    }
}

impl Layout {
    /// Row `row`'s message.
    fn message(&self, record: &csv::StringRecord, row: u64) -> Result<Message, InputError> {
        // The reader refuses rows whose length differs from the header's, so every column is there.
        let field = |index: usize| record.get(index).unwrap_or_default();
        let mut body = String::new();
        for part in &self.body {
            match part {
                Part::Text(text) => body.push_str(text),
                Part::Column(index) => body.push_str(field(*index)),
            }
        }
        let key = match &self.key {
            Key::Column(index) if field(*index).is_empty() => {
                return Err(format!("row {row}: the key column is empty; every row needs an idempotency key"));
            }
            Key::Column(index) => field(*index).to_owned(),
            Key::Prefix(prefix) => format!("{prefix}{row}"),
        };
        let mut message = Message::new(field(self.to).trim(), body).idempotency_key(key);
        message.from = self.from.as_deref().map(crate::config::parse_sender);
        message.webhook_url.clone_from(&self.webhook_url);
        Ok(message)
    }
}

/// The parts of a template: `{column}` placeholders, `{{` and `}}` for literal braces.
fn parse_template(template: &str, find: &dyn Fn(&str) -> Result<usize, InputError>) -> Result<Vec<Part>, InputError> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => return Err(format!("--body-template: `{{{name}` is not closed with `}}`")),
                    }
                }
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text)));
                }
                parts.push(Part::Column(find(&name)?));
            }
            '}' => return Err("--body-template: a lone `}` (write `}}` for a brace)".to_owned()),
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_have_placeholders_and_escaped_braces() {
        let find = |name: &str| match name {
            "name" => Ok(0),
            "code" => Ok(1),
            other => Err(format!("no column `{other}`")),
        };
        let parts = parse_template("Hi {name}, code {code} {{ok}}", &find).unwrap();
        assert_eq!(
            parts,
            vec![
                Part::Text("Hi ".into()),
                Part::Column(0),
                Part::Text(", code ".into()),
                Part::Column(1),
                Part::Text(" {ok}".into())
            ]
        );
        assert!(parse_template("{missing}", &find).unwrap_err().contains("no column `missing`"));
        assert!(parse_template("{name", &find).unwrap_err().contains("not closed"));
        assert!(parse_template("a } b", &find).unwrap_err().contains("lone"));
    }
}
