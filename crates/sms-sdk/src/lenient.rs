//! Reading a few members of a provider's JSON response without building a `serde_json::Value`.
//!
//! A response is read into a small struct of the members an adapter looks at, borrowed from the
//! body. Every other value is still parsed (and dropped), through the same deserializer entry
//! point `Value` uses, so a body is accepted or refused exactly as `Value` would take it (nesting
//! limit, number range, string escapes and UTF-8 included); a refused body reads as the struct's
//! default, as a body that is not JSON read as `Value::Null` before.
//!
//! Reading is lenient in the way `Value` accessors are: a member of another type than expected
//! reads as absent, never as an error, and a later duplicate of a member replaces an earlier one
//! (as in a `Value` object).

// Shared by the four provider features: a build with only some of them leaves some readers unused.
#![cfg_attr(not(all(feature = "twilio", feature = "telnyx", feature = "plivo", feature = "vonage")), allow(dead_code))]

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

/// What a lenient reader makes of each kind of JSON value. Every kind it does not override
/// reads as its default (its content parsed and dropped).
pub(crate) trait Shape<'de>: Default {
    /// A string (borrowed from the body unless it had escapes).
    fn string(text: Cow<'de, str>) -> Self {
        let _ = text;
        Self::default()
    }

    /// A number.
    fn number(number: Number) -> Self {
        let _ = number;
        Self::default()
    }

    /// An array.
    ///
    /// # Errors
    /// When an element is not valid JSON.
    fn array<A: SeqAccess<'de>>(mut items: A) -> Result<Self, A::Error> {
        while items.next_element::<Skip>()?.is_some() {}
        Ok(Self::default())
    }

    /// An object.
    ///
    /// # Errors
    /// When a member is not valid JSON.
    fn object<A: MapAccess<'de>>(mut members: A) -> Result<Self, A::Error> {
        while members.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Self::default())
    }
}

/// Reads `body` as `T`; a body that is not JSON reads as `T::default()`.
pub(crate) fn read<'de, T: Shape<'de>>(body: &'de [u8]) -> T {
    try_read(body).unwrap_or_default()
}

/// Reads `body` as `T`; `None` when it is not JSON or the shape refused it (a shape's method
/// returned an error).
pub(crate) fn try_read<'de, T: Shape<'de>>(body: &'de [u8]) -> Option<T> {
    serde_json::from_slice::<Lenient<T>>(body).ok().map(|read| read.0)
}

/// Reads the members of an object into `T::default()`: `member` reads the value of each key it
/// knows (with [`value`]) and skips the others (with [`skip_value`]).
///
/// # Errors
/// When a member is not valid JSON.
pub(crate) fn members<'de, T, A>(
    mut map: A,
    mut member: impl FnMut(&mut T, &str, &mut A) -> Result<(), A::Error>,
) -> Result<T, A::Error>
where
    T: Default,
    A: MapAccess<'de>,
{
    let mut read = T::default();
    while let Some(Key(key)) = map.next_key()? {
        member(&mut read, &key, &mut map)?;
    }
    Ok(read)
}

/// Reads the value of the current member as `T`.
///
/// # Errors
/// When the value is not valid JSON.
pub(crate) fn value<'de, T: Shape<'de>, A: MapAccess<'de>>(map: &mut A) -> Result<T, A::Error> {
    map.next_value::<Lenient<T>>().map(|read| read.0)
}

/// Reads the next element of an array as `T`; `None` after the last.
///
/// # Errors
/// When the element is not valid JSON.
pub(crate) fn element<'de, T: Shape<'de>, A: SeqAccess<'de>>(items: &mut A) -> Result<Option<T>, A::Error> {
    items.next_element::<Lenient<T>>().map(|read| read.map(|read| read.0))
}

/// Parses and drops the value of the current member.
///
/// # Errors
/// When the value is not valid JSON.
pub(crate) fn skip_value<'de, A: MapAccess<'de>>(map: &mut A) -> Result<(), A::Error> {
    map.next_value::<Skip>().map(|Skip| ())
}

/// A JSON string member; any other value reads as absent.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Text<'de>(pub(crate) Option<Cow<'de, str>>);

impl Text<'_> {
    /// The string, when it is one and not empty (an empty string says nothing).
    pub(crate) fn non_empty(&self) -> Option<&str> {
        self.0.as_deref().filter(|text| !text.is_empty())
    }
}

impl<'de> Shape<'de> for Text<'de> {
    fn string(text: Cow<'de, str>) -> Self {
        Self(Some(text))
    }
}

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

    /// The code when it is a non-empty string (a number is not text).
    pub(crate) fn non_empty_text(&self) -> Option<&str> {
        match self {
            Self::Text(text) if !text.is_empty() => Some(text),
            Self::Text(_) | Self::Number(_) | Self::Absent => None,
        }
    }
}

impl<'de> Shape<'de> for Code<'de> {
    fn string(text: Cow<'de, str>) -> Self {
        Self::Text(text)
    }

    fn number(number: Number) -> Self {
        Self::Number(number)
    }
}

/// A number as a code: in decimal (an integer without fraction), as JSON writes it.
pub(crate) fn number_text(number: &Number) -> String {
    number.as_i64().map_or_else(|| number.to_string(), |i| i.to_string())
}

/// The first element of an array member, read as `T`; anything else (an empty array included)
/// reads as `T::default()`.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct First<T>(pub(crate) T);

impl<'de, T: Shape<'de>> Shape<'de> for First<T> {
    fn array<A: SeqAccess<'de>>(mut items: A) -> Result<Self, A::Error> {
        let first = element(&mut items)?.unwrap_or_default();
        while items.next_element::<Skip>()?.is_some() {}
        Ok(Self(first))
    }
}

/// Deserializes any JSON value into `T` through its [`Shape`].
struct Lenient<T>(T);

impl<'de, T: Shape<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor(PhantomData)).map(Lenient)
    }
}

/// Any JSON value, parsed as `Value` parses it (the same limits and checks) and dropped.
struct Skip;

impl<'de> Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeVisitor::<Ignored>(PhantomData)).map(|Ignored| Skip)
    }
}

/// The shape that keeps nothing.
#[derive(Default)]
struct Ignored;

impl Shape<'_> for Ignored {}

/// An object key, borrowed from the body unless it had escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(ShapeVisitor::<Text<'de>>(PhantomData)).map(|text| Key(text.0.unwrap_or_default()))
    }
}

/// The visitor of every [`Shape`]: each kind of value goes to the shape's method for it.
struct ShapeVisitor<T>(PhantomData<T>);

impl<'de, T: Shape<'de>> Visitor<'de> for ShapeVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<T, E> {
        Ok(T::default())
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
    use serde_json::Value;

    use super::*;
    use crate::random_json::{damage, random_json};

    /// A reader of a few paths, as the providers' responses are read.
    #[derive(Debug, Default, PartialEq)]
    struct Probe<'a> {
        text: Text<'a>,
        code: Code<'a>,
        first: First<Inner<'a>>,
    }

    #[derive(Debug, Default, PartialEq)]
    struct Inner<'a> {
        text: Text<'a>,
    }

    impl<'a> Shape<'a> for Probe<'a> {
        fn object<A: MapAccess<'a>>(map: A) -> Result<Self, A::Error> {
            members(map, |probe: &mut Self, key, map| {
                match key {
                    "text" => probe.text = value(map)?,
                    "code" => probe.code = value(map)?,
                    "first" => probe.first = value(map)?,
                    _ => skip_value(map)?,
                }
                Ok(())
            })
        }
    }

    impl<'a> Shape<'a> for Inner<'a> {
        fn object<A: MapAccess<'a>>(map: A) -> Result<Self, A::Error> {
            members(map, |inner: &mut Self, key, map| {
                match key {
                    "text" => inner.text = value(map)?,
                    _ => skip_value(map)?,
                }
                Ok(())
            })
        }
    }

    /// What a `Probe` reads, as plain values.
    type Seen = (Option<String>, Option<String>, Option<String>, Option<String>);

    fn probed(body: &[u8]) -> Seen {
        let probe: Probe<'_> = read(body);
        (
            probe.text.0.map(Cow::into_owned),
            probe.code.text().map(Cow::into_owned),
            probe.code.non_empty_text().map(str::to_owned),
            probe.first.0.text.0.map(Cow::into_owned),
        )
    }

    /// The same paths read from a `serde_json::Value`, as the responses were read before.
    fn through_value(body: &[u8]) -> Seen {
        let json: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let code = json.get("code");
        (
            json.get("text").and_then(Value::as_str).map(str::to_owned),
            match code {
                Some(Value::Number(n)) => Some(n.as_i64().map_or_else(|| n.to_string(), |i| i.to_string())),
                Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                _ => None,
            },
            code.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned),
            json.get("first")
                .and_then(|f| f.get(0))
                .and_then(|f| f.get("text"))
                .and_then(Value::as_str)
                .map(str::to_owned),
        )
    }

    fn same_as_value(body: &[u8]) {
        assert_eq!(probed(body), through_value(body), "{}", String::from_utf8_lossy(body));
    }

    #[test]
    fn members_read_as_a_value_reads_them() {
        let bodies: &[&[u8]] = &[
            br#"{"text":"a","code":21211,"first":[{"text":"b"},{"text":"c"}]}"#,
            br#"{"text":"","code":"","first":[]}"#,
            br#"{"text":5,"code":true,"first":{"text":"b"}}"#,
            br#"{"text":null,"code":null,"first":[null,{"text":"c"}]}"#,
            br#"{"text":["a"],"code":[1],"first":[["x"]]}"#,
            br#"{"code":1.5}"#,
            br#"{"code":-7}"#,
            br#"{"code":18446744073709551615}"#,
            br#"{"code":18446744073709551616}"#,
            br#"{"code":1e2}"#,
            br#"{"code":-0}"#,
            br#"{"code":1e999999}"#,
            br#"{"text":"a","text":"b","code":1,"code":"x"}"#,
            br#"{"text":"a","text":7}"#,
            br#"{"first":[{"text":"a","text":"b"}],"first":[]}"#,
            br#"{"t\u0065xt":"\u0061\n","code":"\u0032"}"#,
            br#"{"text":"\ud800"}"#,
            br#"{"text":"a","other":"\ud800"}"#,
            br#"{"text":"a","other":{"deep":[1,2,{"x":null}]}}"#,
            br#"{"text":"a"} trailing"#,
            br#"{"text":"a""#,
            br#"{"text":"a",}"#,
            b"{\"text\":\"\xff\"}",
            b"{\"text\":\"a\",\"other\":\"\xff\"}",
            br#"[{"text":"a"}]"#,
            br#""text""#,
            b"",
            b"null",
            b"  {\"text\" : \"a\" }  ",
        ];
        for body in bodies {
            same_as_value(body);
        }
    }

    #[test]
    fn nesting_is_limited_as_a_value_limits_it() {
        for depth in [1, 100, 126, 127, 128, 129, 200, 10_000] {
            let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
            for body in [
                format!(r#"{{"text":"a","other":{nested}}}"#),
                format!(r#"{{"first":[{{"text":"a"}},{nested}]}}"#),
                nested.clone(),
            ] {
                same_as_value(body.as_bytes());
            }
        }
    }

    #[test]
    fn generated_bodies_read_as_a_value_reads_them() {
        const KEYS: [&str; 6] = ["text", "code", "first", "other", "t\\u0065xt", ""];
        const LEAVES: [&str; 12] = [
            "\"a\"",
            "\"\"",
            "\"\\u00e9\\n\"",
            "0",
            "-1",
            "1.5",
            "1e400",
            "12345678901234567890",
            "true",
            "null",
            "\"\\ud800\"",
            "[]",
        ];
        let mut rng = fastrand::Rng::with_seed(14);
        for _ in 0..5_000 {
            let mut body = String::new();
            let depth = rng.usize(1..5);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut body);
            same_as_value(body.as_bytes());
            // And cut short or with one byte changed.
            same_as_value(&damage(&mut rng, body.into_bytes()));
        }
    }

    #[test]
    fn strings_are_borrowed_unless_escaped() {
        let body = br#"{"text":"plain","first":[{"text":"esc\"aped"}]}"#;
        let probe: Probe<'_> = read(body);
        assert!(matches!(probe.text.0, Some(Cow::Borrowed("plain"))));
        assert!(matches!(probe.first.0.text.0, Some(Cow::Owned(ref s)) if s == "esc\"aped"));
    }

    #[test]
    fn codes_are_decimal_numbers_or_non_empty_strings() {
        let code = |body: &str| read::<Probe<'_>>(body.as_bytes()).code.text().map(Cow::into_owned);
        assert_eq!(code(r#"{"code":21211}"#).as_deref(), Some("21211"));
        assert_eq!(code(r#"{"code":"40300"}"#).as_deref(), Some("40300"));
        assert_eq!(code(r#"{"code":1.5}"#).as_deref(), Some("1.5"));
        assert_eq!(code(r#"{"code":""}"#), None);
        assert_eq!(code(r#"{"code":true}"#), None);
        assert_eq!(code("{}"), None);
    }
}
