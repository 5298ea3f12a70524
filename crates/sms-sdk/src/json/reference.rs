//! The reference the readers are tested against: `serde_json::Value`, with a repeated member on
//! a path a reader reads refused (`Value` keeps the last copy silently).

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Paths from the root that a reader reads, one segment per member name, `*` for every
/// element of an array.
pub(crate) type ReadPaths = [&'static [&'static str]];

/// A step from a value to one inside it.
#[derive(Clone, PartialEq)]
enum Step {
    Member(String),
    Element,
}

/// `body` as `Value`, or why not: "the body is not JSON" (not UTF-8 text, first), or the member
/// an object on a read path repeats ("the key X appears more than once").
pub(crate) fn value_checked(body: &[u8], read: &ReadPaths) -> Result<Value, String> {
    if std::str::from_utf8(body).is_err() {
        return Err("the body is not JSON".to_owned());
    }
    let mut repeated = None;
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let walked = Walk { read, path: &mut Vec::new(), repeated: &mut repeated }
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end());
    match (walked, repeated) {
        (_, Some(key)) => Err(format!("the key {key} appears more than once")),
        (Err(_), None) => Err("the body is not JSON".to_owned()),
        (Ok(()), None) => serde_json::from_slice(body).map_err(|_| "the body is not JSON".to_owned()),
    }
}

/// Whether `path` is a read path or leads to one.
fn leads_to(read: &ReadPaths, path: &[Step]) -> bool {
    read.iter().any(|leaf| {
        leaf.len() >= path.len()
            && leaf.iter().zip(path).all(|(segment, step)| match step {
                Step::Member(name) => *segment != "*" && segment == name,
                Step::Element => *segment == "*",
            })
    })
}

/// A value at `path`, checked for repeated members on the read paths.
struct Walk<'w> {
    read: &'w ReadPaths,
    path: &'w mut Vec<Step>,
    repeated: &'w mut Option<String>,
}

impl Walk<'_> {
    fn child(&mut self) -> Walk<'_> {
        Walk { read: self.read, path: self.path, repeated: self.repeated }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            self.path.push(Step::Member(key.clone()));
            if leads_to(self.read, self.path) {
                if !seen.insert(key.clone()) {
                    *self.repeated = Some(key);
                    return Err(de::Error::custom("repeated member"));
                }
                map.next_value_seed(self.child())?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
            self.path.pop();
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.path.push(Step::Element);
        if leads_to(self.read, self.path) {
            while seq.next_element_seed(self.child())?.is_some() {}
        } else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
        }
        self.path.pop();
        Ok(())
    }
}

/// Whether `body` is JSON that the readers take and `Value` refuses: UTF-8, grammatical, with
/// what `Value` cannot hold (a lone surrogate, a number beyond `f64`, deep nesting). Read where a
/// reader reads, those are refused by the readers too; anywhere else a reader drops them unread.
pub(crate) fn only_value_refuses(body: &[u8]) -> bool {
    std::str::from_utf8(body).is_ok()
        && serde_json::from_slice::<IgnoredAny>(body).is_ok()
        && serde_json::from_slice::<Value>(body).is_err()
}

/// Asserts that a normalizer over the derived readers (`read`) agrees with its reference over
/// [`value_checked`] (`reference`) on `body`: the same event (its `raw` payload and that
/// payload's order of keys included) or the same error, except where only `Value` refuses the
/// body: then the normalizer judges the members it reads, and an event's payload is `null`.
pub(crate) fn assert_agree(
    body: &[u8],
    read: Result<crate::webhook::SmsEvent, crate::webhook::WebhookError>,
    reference: Result<crate::webhook::SmsEvent, crate::webhook::WebhookError>,
) {
    let shown = String::from_utf8_lossy(body);
    match (read, reference) {
        (read, Err(_)) if only_value_refuses(body) => {
            if let Ok(event) = read {
                assert!(event.raw().is_null(), "{shown}");
            }
        }
        (read, reference) => {
            assert_eq!(read, reference, "{shown}");
            if let (Ok(read), Ok(reference)) = (read, reference) {
                assert_eq!(serde_json::to_string(read.raw()).ok(), serde_json::to_string(reference.raw()).ok());
                assert_eq!(read.dedupe_key, reference.dedupe_key);
            }
        }
    }
}
