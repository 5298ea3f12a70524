//! The fingerprint that tells a repeat of a message from another message reusing its key.

use std::fmt;
use std::io::{self, Write};

use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::message::{Message, format_timestamp};

/// The SHA-256 (lowercase hex) of a message's canonical JSON form.
///
/// The canonical form is the array `[to, from, body, media_urls, send_at, validity, webhook_url]`
/// (the caller's `from`, or `null`), followed by the provider options of the client's adapters
/// (keys sorted, empty entries left out) only when there are any.
///
/// It is held inline (64 bytes, no allocation): copying it is copying its digits.
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Fingerprint([u8; 64]);

impl Fingerprint {
    /// The fingerprint of `message` on a client whose adapters are named `adapters`.
    #[must_use]
    pub fn of(message: &Message, adapters: &[&str]) -> Self {
        Self::of_message(message, |name| adapters.contains(&name))
    }

    /// The fingerprint of `message` on a client that has an adapter named `name` when
    /// `has_adapter(name)`: asked only about the names in the message's provider options.
    pub(crate) fn of_message(message: &Message, has_adapter: impl Fn(&str) -> bool) -> Self {
        let options = match &message.provider_options {
            Some(Value::Object(options)) => {
                let applicable: Map<String, Value> = options
                    .iter()
                    .filter(|(name, entry)| has_adapter(name) && !is_empty_entry(entry))
                    .map(|(name, entry)| (name.clone(), entry.clone()))
                    .collect();
                (!applicable.is_empty()).then(|| sorted(Value::Object(applicable)))
            }
            _ => None,
        };
        // Serializing borrowed fields writes the text the array of `Value`s wrote (one
        // serializer, one compact format), without copying the message into a tree first; the
        // text goes through a buffer on the stack straight into the hash.
        let mut hashing = Hashing { hasher: Sha256::new(), buffer: [0; HASHING_BUFFER], used: 0 };
        // Writing into the hash cannot fail, and these fields always serialize.
        let _ = serde_json::to_writer(&mut hashing, &Canonical { message, options: options.as_ref() });
        Self(crate::digest::hex(&hashing.finish()))
    }

    /// The fingerprint of an already canonical JSON text.
    #[must_use]
    pub fn from_canonical(canonical: &str) -> Self {
        Self(crate::digest::sha256_hex_bytes(canonical.as_bytes()))
    }

    /// Reads a stored fingerprint: `None` unless it is 64 lowercase hex digits.
    ///
    /// ```
    /// use sms_sdk::store::Fingerprint;
    ///
    /// let hex = "8077a06627cfd4a457e72965f3e562a63c47d9423c151d12dd90503080103ad8";
    /// assert_eq!(Fingerprint::from_hex(hex).map(|f| f.as_str().len()), Some(64));
    /// assert!(Fingerprint::from_hex("8077A06627").is_none());
    /// ```
    #[must_use]
    pub fn from_hex(hex: &str) -> Option<Self> {
        let digits = <[u8; 64]>::try_from(hex.as_bytes()).ok()?;
        digits.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')).then_some(Self(digits))
    }

    /// The 64 lowercase hex characters.
    #[must_use]
    pub fn as_str(&self) -> &str {
        // Every constructor holds 64 lowercase hex digits: ASCII.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// The bytes [`Hashing`] gathers before it feeds the hash: a canonical form of a short message
/// fits, so the hash is fed once.
const HASHING_BUFFER: usize = 256;

/// A writer that hashes what is written, through a buffer on the stack (the serializer writes
/// many small pieces).
struct Hashing {
    hasher: Sha256,
    buffer: [u8; HASHING_BUFFER],
    used: usize,
}

impl Hashing {
    fn flush_buffer(&mut self) {
        self.hasher.update(self.buffer.get(..self.used).unwrap_or_default());
        self.used = 0;
    }

    /// The SHA-256 of everything written.
    fn finish(mut self) -> [u8; 32] {
        self.flush_buffer();
        self.hasher.finalize().into()
    }
}

impl Write for Hashing {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        if let Some(free) = self.buffer.get_mut(self.used..).and_then(|free| free.get_mut(..bytes.len())) {
            free.copy_from_slice(bytes);
            self.used += bytes.len();
        } else {
            self.flush_buffer();
            self.hasher.update(bytes);
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    /// The first 12 hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let head = self.as_str().get(..12).unwrap_or_default();
        write!(f, "Fingerprint({head})")
    }
}

impl TryFrom<String> for Fingerprint {
    type Error = String;

    fn try_from(hex: String) -> Result<Self, String> {
        Self::from_hex(&hex).ok_or_else(|| "a fingerprint is 64 lowercase hex digits".to_owned())
    }
}

impl From<Fingerprint> for String {
    fn from(fingerprint: Fingerprint) -> Self {
        fingerprint.as_str().to_owned()
    }
}

/// The canonical form of a message: `[to, from, body, media_urls, send_at, validity,
/// webhook_url]`, then the applicable provider options (already sorted) when there are any.
struct Canonical<'a> {
    message: &'a Message,
    options: Option<&'a Value>,
}

impl Serialize for Canonical<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let message = self.message;
        let mut parts = serializer.serialize_seq(None)?;
        parts.serialize_element(&message.to)?;
        parts.serialize_element(&message.from)?;
        parts.serialize_element(&message.body)?;
        parts.serialize_element(&message.media_urls)?;
        parts.serialize_element(&message.send_at.map(format_timestamp))?;
        parts.serialize_element(&message.validity_period_secs)?;
        parts.serialize_element(&message.webhook_url)?;
        if let Some(options) = self.options {
            parts.serialize_element(options)?;
        }
        parts.end()
    }
}

fn is_empty_entry(entry: &Value) -> bool {
    match entry {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => false,
    }
}

/// A deep copy with every object's keys in UTF-16 code-unit order (JavaScript's sort), and
/// integral floats written as integers.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
            match n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15) {
                #[allow(clippy::cast_possible_truncation)] // an integral float below 9e15 converts exactly
                Some(f) => Value::from(f as i64),
                None => Value::Number(n),
            }
        }
        other @ (Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)) => other,
    }
}

#[cfg(test)]
#[allow(clippy::string_slice)] // test data cut at known ASCII positions
mod tests {
    use serde_json::json;
    use time::OffsetDateTime;
    use time::format_description::well_known::Rfc3339;

    use super::*;
    use crate::Sender;

    const TO: &str = "+14155550123";

    fn fp(message: &Message) -> String {
        Fingerprint::of(message, &["memory", "twilio"]).as_str().to_owned()
    }

    #[test]
    fn t033_legacy_form_without_options() {
        let hash = "8077a06627cfd4a457e72965f3e562a63c47d9423c151d12dd90503080103ad8";
        assert_eq!(Fingerprint::from_canonical(r#"["+14155550123",null,"Hi",[],null,null,null]"#).as_str(), hash);
        assert_eq!(fp(&Message::new(TO, "Hi")), hash);
        // Empty options, and options for adapters the client does not have, change nothing.
        assert_eq!(fp(&Message { provider_options: Some(json!({})), ..Message::new(TO, "Hi") }), hash);
        assert_eq!(fp(&Message::new(TO, "Hi").provider_option("sinch", json!({"x": 1}))), hash);
        assert_eq!(fp(&Message::new(TO, "Hi").provider_option("twilio", json!({}))), hash);
    }

    #[test]
    fn t034_and_t035_bodies() {
        assert_eq!(
            fp(&Message::new(TO, "Appointment tomorrow at 9.")),
            "d665a7dee8dba70cef1c7ea379608be73d684ebfa0a03ee80bb12a9bc2b5f32d"
        );
        assert_eq!(
            fp(&Message::new(TO, "Your order has shipped.")),
            "62882235083a354fc06823b4d48d28422fae6cbf2df1c5c5dc917c1fa148f3a6"
        );
    }

    #[test]
    fn t036_every_field() {
        let message = Message::new(TO, "Hi")
            .from("+15005550006")
            .media_url("https://example.com/a.png")
            .send_at(OffsetDateTime::parse("2030-01-01T10:00:00Z", &Rfc3339).unwrap())
            .validity_period_secs(600)
            .webhook_url("https://example.com/status");
        assert_eq!(fp(&message), "21a6f50e6581f82887175403bd0889d4efb8545bc33635747ac287e8a34836ed");
    }

    #[test]
    fn t037_sender_object() {
        assert_eq!(
            fp(&Message::new(TO, "Hi").from(Sender::sender_id("Acme"))),
            "51d4fa0d4d3827b01e8cacee4233fea1626801fe7e09bdeef090aa9ec8695cb0"
        );
    }

    #[test]
    fn t038_provider_options_sorted() {
        let hash = "b00eed5c0d8b56f6d0eb9671457f7eef7f07126cc7a790098c54c366b913cce9";
        let a = Message::new(TO, "Hi").provider_option("twilio", json!({"smartEncoded": true, "riskCheck": "disable"}));
        let b = Message::new(TO, "Hi").provider_option("twilio", json!({"riskCheck": "disable", "smartEncoded": true}));
        assert_eq!(fp(&a), hash);
        assert_eq!(fp(&b), hash);
        let c =
            Message::new(TO, "Hi").provider_option("twilio", json!({"smartEncoded": false, "riskCheck": "disable"}));
        assert_ne!(fp(&c), hash);
        assert_ne!(fp(&Message::new(TO, "Hi")), hash);
    }

    #[test]
    fn t039_every_field_changes_the_hash() {
        let base = Message::new("+1", "b");
        let hash = fp(&base);
        assert_eq!(hash, "da08cdb186b03adb3240364f681c34e3beafebc2fdacd4cb988f5c14c1436497");
        assert_eq!(hash.len(), 64);
        assert!(hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        assert_eq!(fp(&base.clone()), hash);
        let at = OffsetDateTime::parse("2030-01-01T00:00:00Z", &Rfc3339).unwrap();
        for changed in [
            Message { to: "+2".into(), ..base.clone() },
            base.clone().from("+3"),
            Message { body: "c".into(), ..base.clone() },
            base.clone().media_url("https://x"),
            base.clone().send_at(at),
            base.clone().validity_period_secs(60),
            base.clone().webhook_url("https://y"),
        ] {
            assert_ne!(fp(&changed), hash, "{changed:?}");
        }
    }

    #[test]
    fn stored_fingerprints_are_validated() {
        let hash = fp(&Message::new(TO, "Hi"));
        assert_eq!(Fingerprint::from_hex(&hash).map(|f| f.as_str().to_owned()), Some(hash.clone()));
        let two_byte_at_11 = format!("{}é{}", &hash[..11], &hash[13..]);
        for bad in ["", "f", &hash[..63], &hash.to_uppercase(), &format!("{hash}0"), &two_byte_at_11] {
            assert!(Fingerprint::from_hex(bad).is_none(), "{bad:?}");
            assert!(serde_json::from_value::<Fingerprint>(json!(bad)).is_err(), "{bad:?}");
        }
        let parsed: Fingerprint = serde_json::from_value(json!(hash)).unwrap();
        assert_eq!(format!("{parsed:?}"), format!("Fingerprint({})", &hash[..12]));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), json!(hash));
    }

    #[test]
    fn t040_non_ascii_is_hashed_raw() {
        assert_eq!(
            fp(&Message::new(TO, "Héllo 📦")),
            "9aaf7aa94042cfc8bbbb53c36cda6cc335c63945e73c4dbb5a22c0c09a611d1c"
        );
    }
}
