//! Reading the fields a normalizer needs from a verified JSON body, without building a `Value`.
//!
//! A JSON webhook is read through the shapes of [`crate::lenient`]: the body is accepted exactly
//! as `serde_json::Value` parses it, and a field of another type than expected reads as absent,
//! as a `Value` accessor answers. What a webhook adds: a key the normalizer reads that one object
//! repeats is refused (where `Value` keeps the last copy), on exactly the paths
//! [`check_json_duplicates`](super::check_json_duplicates) checks, so that a refused read means
//! that function refuses the body too and gives the error ([`refused`]). The event's `raw` object
//! is built from the bytes only when read ([`Raw::json`](super::Raw::json)).

use std::ops::Deref;

use serde::de::{self, MapAccess, SeqAccess};

use super::{ReadPaths, WebhookError, check_json_duplicates, leads_to};
use crate::lenient::{self, Shape};

/// The error of a body its in-place reader refused: a key on the `read` paths repeated in one
/// object (named), or else a body that is not JSON.
pub(crate) fn refused(provider: &'static str, body: &[u8], read: &ReadPaths) -> WebhookError {
    match check_json_duplicates(provider, body, &|path| leads_to(read, path)) {
        Err(error) => error,
        Ok(()) => WebhookError::payload(provider, "the body is not JSON"),
    }
}

/// A member the normalizer reads, as `T`; reading it a second time from the same object is an
/// error.
#[derive(Debug, Default)]
pub(crate) struct Field<T> {
    read: bool,
    value: T,
}

impl<T> Field<T> {
    /// Reads the current member's value into this field.
    ///
    /// # Errors
    /// When the object already had this member, or the value is not valid JSON.
    pub(crate) fn read<'de, A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<(), A::Error>
    where
        T: Shape<'de>,
    {
        if self.read {
            return Err(de::Error::custom("a key the normalizer reads appears more than once"));
        }
        self.read = true;
        self.value = lenient::value(map)?;
        Ok(())
    }
}

impl<T> Deref for Field<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

/// An array whose elements hold keys the normalizer reads (the `*` of a read path): every
/// element is read as `T`, so each is checked for repeated keys, and kept in order. Any other
/// value has no elements; an object is walked as [`parse_json_checked`](super::parse_json_checked)
/// walks it there: its members named `*` are read as `T` (and checked), once each.
#[derive(Debug)]
#[cfg_attr(not(feature = "telnyx"), allow(dead_code))] // Telnyx's `to[*]`
pub(crate) struct Items<T>(pub(crate) Vec<T>);

impl<T> Default for Items<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<'de, T: Shape<'de>> Shape<'de> for Items<T> {
    fn array<A: SeqAccess<'de>>(mut items: A) -> Result<Self, A::Error> {
        let mut read = Vec::new();
        while let Some(item) = lenient::element(&mut items)? {
            read.push(item);
        }
        Ok(Self(read))
    }

    fn object<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        let mut star = Field::<T>::default();
        lenient::members(
            map,
            |_: &mut Self, key, map| if key == "*" { star.read(map) } else { lenient::skip_value(map) },
        )
    }
}

/// Whether an object was there (a shape's `object` sets it): `{}` and a value of another type
/// read alike otherwise.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Present(pub(crate) bool);

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::lenient::Text;

    #[derive(Debug, Default)]
    struct Probe<'a> {
        present: Present,
        name: Field<Text<'a>>,
        list: Field<Items<Probe<'a>>>,
    }

    impl<'a> Shape<'a> for Probe<'a> {
        fn object<A: MapAccess<'a>>(map: A) -> Result<Self, A::Error> {
            let read = lenient::members(map, |probe: &mut Self, key, map| match key {
                "name" => probe.name.read(map),
                "list" => probe.list.read(map),
                _ => lenient::skip_value(map),
            });
            read.map(|probe| Self { present: Present(true), ..probe })
        }
    }

    fn names(body: &str) -> Option<(bool, Option<String>, Vec<Option<String>>)> {
        let probe = lenient::try_read::<Probe<'_>>(body.as_bytes())?;
        let list = probe.list.0.iter().map(|item| item.name.0.clone().map(Cow::into_owned)).collect();
        Some((probe.present.0, probe.name.0.clone().map(Cow::into_owned), list))
    }

    #[test]
    fn a_read_key_twice_in_one_object_is_refused_and_other_keys_are_not() {
        assert_eq!(names(r#"{"name":"a","x":1,"x":2}"#), Some((true, Some("a".into()), vec![])));
        assert_eq!(names(r#"{"name":"a","name":"b"}"#), None);
        assert_eq!(names(r#"{"name":"a","n\u0061me":"b"}"#), None);
        assert_eq!(names(r#"{"list":[{"name":"a"},{"name":"b","name":"c"}]}"#), None);
        assert_eq!(names(r#"{"list":[],"list":[]}"#), None);
    }

    #[test]
    fn items_are_every_element_and_an_object_has_none_but_its_stars_are_checked() {
        let read = names(r#"{"list":[{"name":"a"},7,{"name":5}]}"#).unwrap();
        assert_eq!(read.2, [Some("a".to_owned()), None, None]);
        assert_eq!(names(r#"{"list":{"*":{"name":"a"},"x":{"name":"a","name":"b"}}}"#).unwrap().2, []);
        assert_eq!(names(r#"{"list":{"*":{"name":"a"},"*":{}}}"#), None);
        assert_eq!(names(r#"{"list":{"*":{"name":"a","name":"b"}}}"#), None);
    }

    #[test]
    fn presence_tells_an_empty_object_from_another_value() {
        assert_eq!(names("{}").map(|read| read.0), Some(true));
        assert_eq!(names("[]").map(|read| read.0), Some(false));
        assert_eq!(names("nul"), None);
    }
}
