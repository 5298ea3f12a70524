//! Provider-specific options (`Message::provider_options`), checked against each adapter's spec.
//!
//! The message carries raw JSON per adapter name, so unknown keys and wrongly typed values are
//! reported as issues instead of being impossible to express. Each adapter declares an
//! [`OptionsSpec`]: typed options (camelCase name → wire name) and the wire names it sets itself.
//!
//! ```
//! use serde_json::json;
//! use sms_sdk::options::{OptionKind, OptionSpec, OptionsSpec};
//! use sms_sdk::testing::MemoryAdapter;
//! use sms_sdk::{Client, Message};
//!
//! static SPEC: OptionsSpec = OptionsSpec {
//!     options: &[OptionSpec { name: "smartEncoded", wire: "SmartEncoded", kind: OptionKind::Boolean }],
//!     reserved: &["To", "Body"],
//! };
//! let adapter = MemoryAdapter::builder().name("shop").provider_options(&SPEC).build();
//! let client = Client::builder().adapter(adapter).build()?;
//! let good = Message::new("+14155550123", "Hi").provider_option("shop", json!({"smartEncoded": true}));
//! assert!(client.validate(&good).issues.is_empty());
//! let bad = Message::new("+14155550123", "Hi").provider_option("shop", json!({"smartEncoded": "yes"}));
//! assert_eq!(client.validate(&bad).issues.len(), 1);
//! # Ok::<(), sms_sdk::Error>(())
//! ```

use std::fmt;

use serde_json::{Number, Value};

use crate::issue::{Field, Issue, IssueCode};

/// The options an adapter accepts, and the wire parameters it sets itself.
#[derive(Debug)]
pub struct OptionsSpec {
    /// Typed options, in declaration order (the order they go on the wire).
    pub options: &'static [OptionSpec],
    /// Wire names the adapter sets from portable fields; `extra` may not name them.
    pub reserved: &'static [&'static str],
}

/// One typed option.
#[derive(Debug)]
pub struct OptionSpec {
    /// The camelCase name callers write.
    pub name: &'static str,
    /// The provider's parameter name.
    pub wire: &'static str,
    /// Its type and limits.
    pub kind: OptionKind,
}

/// The type and limits of a typed option.
#[derive(Debug)]
#[non_exhaustive]
pub enum OptionKind {
    /// `true` or `false`.
    Boolean,
    /// A non-empty string.
    String {
        /// Longest value in UTF-16 units.
        max_len: Option<usize>,
        /// A format the value must have.
        pattern: Option<fn(&str) -> bool>,
    },
    /// An integer in `[min, max]`.
    Integer {
        /// Smallest value.
        min: i64,
        /// Largest value, if any.
        max: Option<i64>,
    },
    /// One of a fixed set of strings.
    Enum {
        /// The accepted values.
        values: &'static [&'static str],
    },
}

/// One parsed option, ready for the wire.
#[derive(Clone, PartialEq)]
pub struct ProviderField {
    /// The provider's parameter name.
    pub wire: String,
    /// The value: a string, a number or a boolean.
    pub value: Value,
}

impl ProviderField {
    /// The value as a form body writes it: `true`/`false`, integers without a fraction.
    #[must_use]
    pub fn form_value(&self) -> String {
        match &self.value {
            Value::String(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => js_number(n),
            Value::Null | Value::Array(_) | Value::Object(_) => String::new(),
        }
    }
}

impl fmt::Debug for ProviderField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Values may carry customer data; only the parameter name is shown.
        f.debug_struct("ProviderField").field("wire", &self.wire).finish_non_exhaustive()
    }
}

/// A number as JavaScript's `String(n)` prints it (`2.0` → `2`).
fn js_number(n: &Number) -> String {
    match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => i.to_string(),
        (None, Some(u), _) => u.to_string(),
        (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
        _ => n.to_string(),
    }
}

/// The integral value of a JSON number, if it has one (`2.0` counts, as in JavaScript).
#[allow(clippy::cast_possible_truncation)] // an integral float below 9.2e18 converts exactly
fn as_integer(n: &Number) -> Option<i64> {
    n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18).map(|f| f as i64))
}

/// Parses one adapter's entry into wire fields, or every issue it has.
///
/// # Errors
/// The issues, each on the `provider_options` field and naming `adapter`; messages name keys,
/// never values.
pub(crate) fn parse_entry(
    adapter: &str,
    spec: Option<&OptionsSpec>,
    entry: &Value,
) -> Result<Vec<ProviderField>, Vec<Issue>> {
    let issue = |code: IssueCode, message: String| Issue::new(code, Field::ProviderOptions, message).provider(adapter);
    let Some(spec) = spec else {
        return Err(vec![issue(IssueCode::UnsupportedField, format!("{adapter} accepts no provider_options."))]);
    };
    let Value::Object(entry) = entry else {
        return Err(vec![issue(IssueCode::InvalidField, format!("provider_options.{adapter} must be an object."))]);
    };

    let mut issues = Vec::new();
    for key in entry.keys() {
        if key != "extra" && !spec.options.iter().any(|o| o.name == key) {
            issues.push(issue(
                IssueCode::UnsupportedField,
                format!("{adapter} does not support the provider option \"{key}\"."),
            ));
        }
    }

    let mut fields = Vec::new();
    for option in spec.options {
        let Some(value) = entry.get(option.name) else { continue };
        if option_value_ok(&option.kind, value) {
            fields.push(ProviderField { wire: option.wire.to_owned(), value: value.clone() });
        } else {
            issues.push(issue(
                IssueCode::InvalidField,
                format!("provider_options.{adapter}.{} has an invalid value.", option.name),
            ));
        }
    }

    match entry.get("extra") {
        None => {}
        Some(Value::Object(extra)) => {
            for (key, value) in extra {
                let lower = key.to_lowercase();
                let typed = spec.options.iter().find(|o| o.wire.to_lowercase() == lower);
                if key.is_empty() {
                    issues.push(issue(
                        IssueCode::InvalidField,
                        format!("provider_options.{adapter}.extra has an empty key."),
                    ));
                } else if spec.reserved.iter().any(|r| r.to_lowercase() == lower) {
                    issues.push(issue(
                        IssueCode::UnsupportedField,
                        format!("{adapter} sets \"{key}\" itself; it cannot be passed in extra."),
                    ));
                } else if let Some(typed) = typed {
                    issues.push(issue(
                        IssueCode::UnsupportedField,
                        format!("Use the typed option \"{}\" instead of extra \"{key}\".", typed.name),
                    ));
                } else if matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
                    fields.push(ProviderField { wire: key.clone(), value: value.clone() });
                } else {
                    issues.push(issue(
                        IssueCode::InvalidField,
                        format!("provider_options.{adapter}.extra.{key} must be a string, number or boolean."),
                    ));
                }
            }
        }
        Some(_) => {
            issues.push(issue(IssueCode::InvalidField, format!("provider_options.{adapter}.extra must be an object.")));
        }
    }

    if issues.is_empty() { Ok(fields) } else { Err(issues) }
}

fn option_value_ok(kind: &OptionKind, value: &Value) -> bool {
    match (kind, value) {
        (OptionKind::Boolean, Value::Bool(_)) => true,
        (OptionKind::String { max_len, pattern }, Value::String(s)) => {
            !s.is_empty()
                && max_len.is_none_or(|max| s.encode_utf16().count() <= max)
                && pattern.is_none_or(|matches| matches(s))
        }
        (OptionKind::Integer { min, max }, Value::Number(n)) => {
            as_integer(n).is_some_and(|i| i >= *min && max.is_none_or(|max| i <= max))
        }
        (OptionKind::Enum { values }, Value::String(s)) => values.contains(&s.as_str()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    static SPEC: OptionsSpec = OptionsSpec {
        options: &[
            OptionSpec { name: "shortenUrls", wire: "ShortenUrls", kind: OptionKind::Boolean },
            OptionSpec { name: "attempt", wire: "Attempt", kind: OptionKind::Integer { min: 1, max: Some(10) } },
            OptionSpec { name: "mode", wire: "Mode", kind: OptionKind::Enum { values: &["a", "b"] } },
            OptionSpec {
                name: "tag",
                wire: "Tag",
                kind: OptionKind::String { max_len: Some(3), pattern: Some(|s| s.starts_with('t')) },
            },
        ],
        reserved: &["To", "Body"],
    };

    fn codes(result: Result<Vec<ProviderField>, Vec<Issue>>) -> Vec<IssueCode> {
        result.unwrap_err().into_iter().map(|i| i.code).collect()
    }

    #[test]
    fn typed_fields_come_in_spec_order_then_extra_in_insertion_order() {
        let fields = parse_entry(
            "x",
            Some(&SPEC),
            &json!({"extra": {"Zed": 1, "Alpha": "a"}, "mode": "b", "shortenUrls": true, "attempt": 2.0}),
        )
        .unwrap();
        let wires: Vec<_> = fields.iter().map(|f| f.wire.as_str()).collect();
        assert_eq!(wires, ["ShortenUrls", "Attempt", "Mode", "Zed", "Alpha"]);
        assert_eq!(fields[1].form_value(), "2");
        assert_eq!(fields[0].form_value(), "true");
    }

    #[test]
    fn bad_values_and_keys_are_issues() {
        assert_eq!(codes(parse_entry("x", None, &json!({"a": 1}))), [IssueCode::UnsupportedField]);
        assert_eq!(codes(parse_entry("x", Some(&SPEC), &json!(3))), [IssueCode::InvalidField]);
        assert_eq!(codes(parse_entry("x", Some(&SPEC), &json!({"nope": 1}))), [IssueCode::UnsupportedField]);
        for bad in [
            json!({"shortenUrls": "yes"}),
            json!({"attempt": 11}),
            json!({"attempt": 1.5}),
            json!({"mode": "c"}),
            json!({"tag": ""}),
            json!({"tag": "tooo"}),
            json!({"tag": "abc"}),
            json!({"extra": 1}),
            json!({"extra": {"": 1}}),
            json!({"extra": {"K": {"nested": 1}}}),
            json!({"extra": {"K": null}}),
        ] {
            assert_eq!(codes(parse_entry("x", Some(&SPEC), &bad)), [IssueCode::InvalidField], "{bad}");
        }
        for collision in [json!({"extra": {"body": 1}}), json!({"extra": {"shortenurls": true}})] {
            assert_eq!(codes(parse_entry("x", Some(&SPEC), &collision)), [IssueCode::UnsupportedField]);
        }
    }

    #[test]
    fn messages_name_keys_never_values() {
        let issues = parse_entry("x", Some(&SPEC), &json!({"tag": "secret-4155550199", "extra": {"Body": "secret"}}))
            .unwrap_err();
        for issue in issues {
            assert!(!issue.message.contains("secret"), "{}", issue.message);
        }
    }
}
