//! Reading the few members of a provider's JSON (a response, a webhook, a token) into small
//! structs derived with serde, borrowed from the body, leniently:
//! - a member of another type than its field expects reads as absent, never as an error: the
//!   fields are [`Text`], [`Code`], [`Flag`], [`Object`], [`Items`] and [`First`], which take any JSON value;
//! - a member a struct reads that one object repeats is refused (serde's `duplicate_field`): the
//!   body is ambiguous (which copy counts?), and a provider never sends one;
//! - every other member is checked for JSON grammar and dropped, unread: a string in it may be a
//!   lone surrogate, a number out of the range of `f64`, an array nested deeper than
//!   `serde_json::Value` nests (none is a grammar error, and no member the readers need is
//!   lost over one); the body must be UTF-8 (JSON text is);
//! - strings are borrowed unless they have escapes.
//!
//! A struct reads its members with `#[derive(Deserialize)] #[serde(default)]`, each field with
//! `#[serde(borrow)]` when it borrows; [`read`] reads a whole body.

// Shared by the four provider features: a build with only some of them leaves some readers unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

#[cfg(test)]
pub(crate) mod random;
#[cfg(test)]
pub(crate) mod reference;

/// Reads `body` as `T`: `Some` for an object, `None` for any other JSON value.
///
/// # Errors
/// When `body` is not JSON (UTF-8 included), or an object repeats a member `T` reads.
pub(crate) fn read<'de, T: Deserialize<'de> + Default>(body: &'de [u8]) -> Result<Option<T>, serde_json::Error> {
    // Validated once here, the text is then parsed without checking each string again.
    let text = std::str::from_utf8(body).map_err(|_| de::Error::custom("the body is not UTF-8"))?;
    serde_json::from_str::<Object<T>>(text).map(|object| object.present.then_some(object.value))
}

/// Why a body was refused, for a payload error: the member it repeats, or that it is not JSON.
pub(crate) fn refusal(error: &serde_json::Error) -> String {
    let message = error.to_string();
    match message.split_once("duplicate field `").and_then(|(_, rest)| rest.split_once('`')) {
        Some((key, _)) => format!("the key {key} appears more than once"),
        None if message.starts_with(TOO_MANY_ITEMS) => TOO_MANY_ITEMS.to_owned(),
        None => "the body is not JSON".to_owned(),
    }
}

/// A string member; any other value reads as absent.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Text<'de>(pub(crate) Option<Cow<'de, str>>);

impl Text<'_> {
    /// The string, when it is one and not empty (an empty string says nothing).
    pub(crate) fn non_empty(&self) -> Option<&str> {
        self.0.as_deref().filter(|text| !text.is_empty())
    }
}

/// A boolean member; any other value reads as absent.
#[cfg_attr(not(feature = "aws"), allow(dead_code))] // only AWS's events have one
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flag(pub(crate) Option<bool>);

/// An error code member: a number or a string; any other value reads as absent.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) enum Code<'de> {
    /// Absent, or neither a number nor a string.
    #[default]
    Absent,
    /// A string.
    Text(Cow<'de, str>),
    /// A number.
    Number(Number),
}

impl Code<'_> {
    /// The code as text: a number in decimal (an integer without fraction), or a non-empty
    /// string.
    pub(crate) fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            Self::Number(number) => Some(Cow::Owned(number_text(number))),
            Self::Text(text) if !text.is_empty() => Some(Cow::Borrowed(text)),
            Self::Text(_) | Self::Absent => None,
        }
    }

    /// The value as text, an empty string included: a number in decimal (an integer without
    /// fraction), or the string.
    pub(crate) fn string_or_number(&self) -> Option<Cow<'_, str>> {
        match self {
            Self::Number(number) => Some(Cow::Owned(number_text(number))),
            Self::Text(text) => Some(Cow::Borrowed(text)),
            Self::Absent => None,
        }
    }

    /// The code when it is a non-empty string (a number is not text).
    pub(crate) fn non_empty_text(&self) -> Option<&str> {
        match self {
            Self::Text(text) if !text.is_empty() => Some(text),
            Self::Text(_) | Self::Number(_) | Self::Absent => None,
        }
    }
}

/// A number as a code: in decimal (an integer without fraction), as JSON writes it.
pub(crate) fn number_text(number: &Number) -> String {
    number.as_i64().map_or_else(|| number.to_string(), |i| i.to_string())
}

/// An object member read as `T`; absent or of another type, it reads as `T`'s default (every
/// member absent), and [`present`](Self::present) tells the two apart.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Object<T> {
    present: bool,
    value: T,
}

impl<T> Object<T> {
    /// Whether the member was an object.
    pub(crate) fn present(&self) -> bool {
        self.present
    }
}

impl<T> std::ops::Deref for Object<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

/// An array member whose elements are read as objects of `T` (an element of another type reads
/// as `T`'s default, so the positions stay); any other value reads as no elements. An array of
/// more than [`MAX_ITEMS`] elements is refused as soon as the one past it is read, so that an
/// array of a million tiny elements never becomes a million values in memory.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Items<T>(pub(crate) Vec<T>);

/// The most elements an [`Items`] reads: 1,000 (Infobip's and Bandwidth's batches and every
/// list a provider documents are well under it).
pub(crate) const MAX_ITEMS: usize = 1000;

/// What the refusal of an array longer than [`MAX_ITEMS`] says.
const TOO_MANY_ITEMS: &str = "an array of more than 1000 elements";

impl<T> Default for Items<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

/// The first element of an array member, read as `T` (a lenient member: [`Text`], an
/// [`Object`], …); anything else (an empty array included) reads as `T`'s default. The other
/// elements are read as `T` too and dropped, so that a member repeated in any is refused.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct First<T>(pub(crate) T);

/// Every member of an object, in order and repeats kept, each value read as a [`Code`] (a string
/// or a number; anything else absent): for a body whose members are its record, as a form's
/// parameters are. Any other value reads as no members.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Members<'de>(pub(crate) Vec<(Cow<'de, str>, Code<'de>)>);

/// What a lenient member makes of each kind of JSON value. A kind it does not take reads as
/// its default, the value still checked for syntax and dropped.
trait Lenient<'de>: Default {
    fn boolean(value: bool) -> Self {
        let _ = value;
        Self::default()
    }

    fn string(text: Cow<'de, str>) -> Self {
        let _ = text;
        Self::default()
    }

    fn number(number: Number) -> Self {
        let _ = number;
        Self::default()
    }

    fn array<A: SeqAccess<'de>>(mut items: A) -> Result<Self, A::Error> {
        while items.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }

    fn object<A: MapAccess<'de>>(mut members: A) -> Result<Self, A::Error> {
        while members.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }
}

impl<'de> Lenient<'de> for Text<'de> {
    fn string(text: Cow<'de, str>) -> Self {
        Self(Some(text))
    }
}

impl Lenient<'_> for Flag {
    fn boolean(value: bool) -> Self {
        Self(Some(value))
    }
}

impl<'de> Lenient<'de> for Code<'de> {
    fn string(text: Cow<'de, str>) -> Self {
        Self::Text(text)
    }

    fn number(number: Number) -> Self {
        Self::Number(number)
    }
}

impl<'de> Lenient<'de> for Members<'de> {
    fn object<A: MapAccess<'de>>(mut members: A) -> Result<Self, A::Error> {
        let mut read = Vec::new();
        while let Some((Text(key), value)) = members.next_entry::<Text<'de>, Code<'de>>()? {
            read.push((key.unwrap_or_default(), value));
        }
        Ok(Self(read))
    }
}

impl<'de, T: Deserialize<'de> + Default> Lenient<'de> for Object<T> {
    fn object<A: MapAccess<'de>>(members: A) -> Result<Self, A::Error> {
        T::deserialize(MapAccessDeserializer::new(members)).map(|value| Self { present: true, value })
    }
}

impl<'de, T: Deserialize<'de> + Default> Lenient<'de> for Items<T> {
    fn array<A: SeqAccess<'de>>(mut items: A) -> Result<Self, A::Error> {
        let mut read = Vec::new();
        while let Some(object) = items.next_element::<Object<T>>()? {
            if read.len() == MAX_ITEMS {
                return Err(de::Error::custom(TOO_MANY_ITEMS));
            }
            read.push(object.value);
        }
        Ok(Self(read))
    }
}

impl<'de, T: Deserialize<'de> + Default> Lenient<'de> for First<T> {
    fn array<A: SeqAccess<'de>>(mut items: A) -> Result<Self, A::Error> {
        let first = items.next_element::<T>()?.unwrap_or_default();
        while items.next_element::<T>()?.is_some() {}
        Ok(Self(first))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor::<Text<'de>>(PhantomData))
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor::<Flag>(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Code<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor::<Code<'de>>(PhantomData))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor::<Members<'de>>(PhantomData))
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor(PhantomData))
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for Items<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor(PhantomData))
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for First<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor(PhantomData))
    }
}

/// The visitor of every lenient member: each kind of value goes to the member's method for it.
struct LenientVisitor<T>(PhantomData<T>);

impl<'de, T: Lenient<'de>> Visitor<'de> for LenientVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<T, E> {
        Ok(T::boolean(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<T, E> {
        Ok(T::number(value.into()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<T, E> {
        Ok(T::number(value.into()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<T, E> {
        // JSON has no NaN or infinity: every parsed float is a number, as in `Value`.
        Ok(Number::from_f64(value).map_or_else(T::default, T::number))
    }

    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<T, E> {
        Ok(T::string(Cow::Borrowed(value)))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<T, E> {
        Ok(T::string(Cow::Owned(value.to_owned())))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<T, E> {
        Ok(T::string(Cow::Owned(value)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, items: A) -> Result<T, A::Error> {
        T::array(items)
    }

    fn visit_map<A: MapAccess<'de>>(self, members: A) -> Result<T, A::Error> {
        T::object(members)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::Value;

    use super::reference::{ReadPaths, only_value_refuses, value_checked};
    use super::*;
    use crate::json::random::{damage, random_json};

    /// A reader of every kind of member.
    #[derive(Debug, Default, PartialEq, Deserialize)]
    #[serde(default)]
    struct Sample<'a> {
        #[serde(borrow)]
        id: Text<'a>,
        #[serde(borrow)]
        code: Code<'a>,
        #[serde(borrow)]
        data: Object<Inner<'a>>,
        #[serde(borrow)]
        to: First<Object<Inner<'a>>>,
        #[serde(borrow)]
        items: Items<Inner<'a>>,
    }

    #[derive(Debug, Default, PartialEq, Deserialize)]
    #[serde(default)]
    struct Inner<'a> {
        #[serde(borrow)]
        id: Text<'a>,
        #[serde(borrow)]
        code: Code<'a>,
    }

    const READ: [&[&str]; 8] = [
        &["id"],
        &["code"],
        &["data", "id"],
        &["data", "code"],
        &["to", "*", "id"],
        &["to", "*", "code"],
        &["items", "*", "id"],
        &["items", "*", "code"],
    ];

    /// What each member reads as, taken from a `Value`.
    fn text(value: Option<&Value>) -> Text<'static> {
        Text(value.and_then(Value::as_str).map(|text| Cow::Owned(text.to_owned())))
    }

    fn code(value: Option<&Value>) -> Code<'static> {
        match value {
            Some(Value::String(text)) => Code::Text(Cow::Owned(text.clone())),
            Some(Value::Number(number)) => Code::Number(number.clone()),
            _ => Code::Absent,
        }
    }

    fn inner(value: Option<&Value>) -> Object<Inner<'static>> {
        match value {
            Some(object @ Value::Object(_)) => {
                Object { present: true, value: Inner { id: text(object.get("id")), code: code(object.get("code")) } }
            }
            _ => Object::default(),
        }
    }

    fn sample(value: &Value) -> Sample<'static> {
        let elements = |key: &str| value.get(key).and_then(Value::as_array).map(Vec::as_slice);
        Sample {
            id: text(value.get("id")),
            code: code(value.get("code")),
            data: inner(value.get("data")),
            to: First(elements("to").map_or_else(Object::default, |items| inner(items.first()))),
            items: Items(elements("items").unwrap_or_default().iter().map(|item| inner(Some(item)).value).collect()),
        }
    }

    /// Asserts that [`read`] reads `body` as a `Value` of it reads (a repeated read member
    /// refused), but for what `Value` cannot hold in a member nobody reads.
    fn same_as_value(body: &[u8], read_paths: &ReadPaths) {
        let read = super::read::<Sample<'_>>(body).map_err(|error| refusal(&error));
        let reference = value_checked(body, read_paths).map(|value| value.is_object().then(|| sample(&value)));
        if read.is_ok() && reference.is_err() && only_value_refuses(body) {
            return;
        }
        assert_eq!(read, reference, "{}", String::from_utf8_lossy(body));
    }

    const KEYS: [&str; 6] = ["id", "code", "data", "to", "items", "x"];
    const LEAVES: [&str; 12] =
        ["\"a\"", "\"\"", "\"\\u00e9\\n\"", "7", "-2.5e3", "1e400", "\"\\ud800\"", "true", "null", "[]", "{}", "\"~\""];

    #[test]
    fn generated_bodies_read_as_through_a_value() {
        let mut rng = fastrand::Rng::with_seed(25);
        for _ in 0..20_000 {
            let mut body = String::new();
            let depth = rng.usize(1..6);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut body);
            // `~` in the leaves stands for a byte that is not UTF-8.
            let body: Vec<u8> = body.bytes().map(|byte| if byte == b'~' { 0xff } else { byte }).collect();
            same_as_value(&body, &READ);
            same_as_value(&damage(&mut rng, body), &READ);
        }
    }

    #[test]
    fn written_bodies_read_as_through_a_value() {
        let bodies: &[&[u8]] = &[
            br#"{"id":"a","code":40002,"data":{"id":"b","code":"c"},"to":[{"id":"t"},{"code":1}],"items":[{"id":"i"},7,{"id":"j"}]}"#,
            br#"{"id":"a","id":"b"}"#,
            br#"{"data":{"id":"a","id":"b"}}"#,
            br#"{"to":[{"id":"a"},{"id":"b","id":"c"}]}"#,
            br#"{"items":[{},{"code":1,"code":2}]}"#,
            br#"{"x":{"id":1,"id":2},"x":3,"to":{"*":{"id":"a"},"*":{}}}"#,
            br#"{"id":"a","z":"\ud800","n":1e999}"#,
            br#"{"id":"\ud800"}"#,
            br#"{"code":1e999}"#,
            b"{\"x\":\"\xff\",\"id\":\"a\",\"id\":\"b\"}",
            br#"{"id":"a"} x"#,
            br#"[{"id":"a"}]"#,
            br#""id""#,
            b"",
        ];
        for body in bodies {
            same_as_value(body, &READ);
        }
    }

    #[test]
    fn a_repeated_member_read_is_named_and_any_other_is_dropped() {
        let error = super::read::<Sample<'_>>(br#"{"data":{"id":"1","id":"2"}}"#).err();
        assert_eq!(error.map(|error| refusal(&error)).as_deref(), Some("the key id appears more than once"));
        let read = super::read::<Sample<'_>>(br#"{"id":"a","x":1,"x":[2],"data":{"y":1,"y":2}}"#);
        assert_eq!(read.ok().flatten().and_then(|sample| sample.id.0).as_deref(), Some("a"));
        assert_eq!(
            super::read::<Sample<'_>>(b"{\"id\":\"\xff\"}").err().map(|e| refusal(&e)).as_deref(),
            Some("the body is not JSON")
        );
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let body = br#"{"id":"plain","data":{"id":"esc\"aped"}}"#;
        let sample = super::read::<Sample<'_>>(body).ok().flatten().unwrap_or_default();
        assert!(matches!(sample.id.0, Some(Cow::Borrowed("plain"))));
        assert!(matches!(sample.data.id.0, Some(Cow::Owned(ref text)) if text == "esc\"aped"));
    }

    #[test]
    fn codes_read_numbers_as_json_writes_them() {
        fn code(body: &[u8]) -> Code<'_> {
            super::read::<Sample<'_>>(body).ok().flatten().unwrap_or_default().code
        }
        assert_eq!(code(br#"{"code":21211}"#).text().as_deref(), Some("21211"));
        assert_eq!(code(br#"{"code":-3}"#).text().as_deref(), Some("-3"));
        assert_eq!(code(br#"{"code":1.5}"#).text().as_deref(), Some("1.5"));
        assert_eq!(code(br#"{"code":"E1"}"#).non_empty_text(), Some("E1"));
        assert_eq!(code(br#"{"code":""}"#).text(), None);
        assert_eq!(code(br#"{"code":""}"#).string_or_number().as_deref(), Some(""));
        assert_eq!(code(br#"{"code":7}"#).non_empty_text(), None);
        assert_eq!(code(br#"{"code":[7]}"#), Code::Absent);
    }

    #[test]
    fn members_keep_order_and_repeats() {
        let body = br#"{"b":"1","a":2,"b":[3],"c":{"d":4}}"#;
        let Members(members) = super::read::<Members<'_>>(body).ok().flatten().unwrap_or_default();
        let shown: Vec<(&str, Option<Cow<'_, str>>)> =
            members.iter().map(|(key, value)| (key.as_ref(), value.string_or_number())).collect();
        assert_eq!(shown, [("b", Some(Cow::Borrowed("1"))), ("a", Some(Cow::Borrowed("2"))), ("b", None), ("c", None)]);
        assert_eq!(super::read::<Members<'_>>(b"[1]").ok().flatten(), None);
    }
}
