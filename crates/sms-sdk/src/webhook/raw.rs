//! An event's `raw` payload, built when first read.
//!
//! A normalizer reads its few fields straight from the verified body (the decoded pairs of a
//! form, or the members of a JSON body read in place); turning every parameter or member into an
//! owned JSON value costs more than verifying the signature, and most servers never look at it.
//! So an event keeps the verified bytes and builds the value on demand.

#[cfg(feature = "__http")]
use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

#[cfg(feature = "__http")]
use super::verify::form_pairs;

/// The provider's payload as JSON: ready, or verified bytes decoded on first read.
#[derive(Clone)]
pub(crate) struct Raw {
    /// The bytes the event came from, when `value` was not built with the event.
    #[cfg(feature = "__http")]
    source: Option<Source>,
    value: OnceLock<Value>,
}

/// What a [`Raw`] payload is built from.
#[cfg(feature = "__http")]
#[derive(Clone)]
enum Source {
    /// Form-encoded parameters (a body or a URL query).
    Form(Box<[u8]>),
    /// A JSON body that the normalizer read.
    Json(Box<[u8]>),
}

impl Raw {
    /// A payload already parsed.
    #[cfg_attr(not(feature = "twilio"), allow(dead_code))] // Twilio's JSON webhooks; tests
    pub(crate) fn ready(value: Value) -> Self {
        Self {
            #[cfg(feature = "__http")]
            source: None,
            value: OnceLock::from(value),
        }
    }

    /// The parameters of a verified form (a body or a URL query), kept as bytes: the object of
    /// their first values is built when [`Raw::get`] first asks for it.
    #[cfg(feature = "__http")]
    #[cfg_attr(not(any(feature = "twilio", feature = "plivo")), allow(dead_code))] // form webhooks
    pub(crate) fn form(encoded: &[u8]) -> Self {
        Self { source: Some(Source::Form(encoded.into())), value: OnceLock::new() }
    }

    /// A verified JSON body that its normalizer read (so it is JSON): its `Value` is built
    /// when [`Raw::get`] first asks for it.
    #[cfg(feature = "__http")]
    #[cfg_attr(not(any(feature = "telnyx", feature = "vonage", feature = "sinch")), allow(dead_code))] // JSON webhooks
    pub(crate) fn json(body: &[u8]) -> Self {
        Self { source: Some(Source::Json(body.into())), value: OnceLock::new() }
    }

    /// The payload: the form's parameters as an object of the first value of each (in the order
    /// they came), or the JSON body.
    pub(crate) fn get(&self) -> &Value {
        self.value.get_or_init(|| self.decode())
    }

    #[cfg(feature = "__http")]
    fn decode(&self) -> Value {
        match &self.source {
            Some(Source::Form(encoded)) => Value::Object(first_values(&form_pairs(encoded))),
            // The normalizer read the body as JSON; `Value` refuses the little JSON it cannot hold
            // (a lone surrogate, a number beyond `f64`, nesting deeper than 128), in members the
            // normalizer does not read, and then the payload is `null`.
            Some(Source::Json(body)) => serde_json::from_slice(body).unwrap_or(Value::Null),
            None => Value::Object(Map::new()),
        }
    }

    /// Without an adapter no event is made, and every payload is ready.
    #[cfg(not(feature = "__http"))]
    #[allow(clippy::unused_self)]
    fn decode(&self) -> Value {
        Value::Object(Map::new())
    }
}

/// The first value of each key, in order of first appearance.
#[cfg(feature = "__http")]
pub(crate) fn first_values(pairs: &[(Cow<'_, str>, Cow<'_, str>)]) -> Map<String, Value> {
    let mut map = Map::with_capacity(pairs.len());
    for (key, value) in pairs {
        if let serde_json::map::Entry::Vacant(entry) = map.entry(key.as_ref()) {
            entry.insert(Value::String(value.as_ref().to_owned()));
        }
    }
    map
}

impl PartialEq for Raw {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Serialize for Raw {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(serializer)
    }
}

/// Shows nothing of the payload (it holds message bodies and phone numbers).
impl fmt::Debug for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Raw(..)")
    }
}

#[cfg(all(test, feature = "__http"))]
mod tests {
    use super::*;

    #[test]
    fn a_form_becomes_its_first_values_in_order_when_read() {
        let raw = Raw::form(b"b=2&a=1&b=3&c=%E2%9C%93+x&d");
        assert!(raw.value.get().is_none(), "nothing is decoded before it is read");
        assert_eq!(raw.get(), &serde_json::json!({"b": "2", "a": "1", "c": "\u{2713} x", "d": ""}));
        let keys: Vec<&str> = raw.get().as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["b", "a", "c", "d"]);
    }

    #[test]
    fn a_json_body_becomes_its_value_when_read() {
        let body = br#"{"b":{"x":1,"x":[2.5,null]},"a":"\u00e9","b":true}"#;
        let raw = Raw::json(body);
        assert!(raw.value.get().is_none(), "nothing is decoded before it is read");
        assert_eq!(raw.get(), &serde_json::from_slice::<Value>(body).unwrap());
        let keys: Vec<&str> = raw.get().as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["b", "a"]);
        assert_eq!(Raw::json(br#"{"a":"1"}"#), Raw::form(b"a=1"));
        assert_eq!(raw.clone(), Raw::ready(serde_json::json!({"b": true, "a": "\u{e9}"})));
    }

    #[test]
    fn equal_payloads_compare_equal_whichever_form_they_are_kept_in() {
        let ready = Raw::ready(serde_json::json!({"a": "1"}));
        assert_eq!(Raw::form(b"a=1"), ready);
        assert_ne!(Raw::form(b"a=2"), ready);
        assert_eq!(serde_json::to_string(&Raw::form(b"a=1&a=2")).unwrap(), r#"{"a":"1"}"#);
    }
}
