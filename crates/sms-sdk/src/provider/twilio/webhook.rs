//! Twilio webhooks: `X-Twilio-Signature` (HMAC-SHA1 over the URL and the sorted parameters, or
//! over the URL alone with a `bodySHA256` for JSON bodies), then the status or inbound message.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::time::SystemTime;

use hmac::Mac as _;
use serde_json::Value;

use super::NAME;
use crate::digest::is_sha256_hex_of;
#[cfg(test)]
use crate::digest::sha256_hex;
use crate::error::Error;
use crate::json::{self, Members};
use crate::redact::{Secret, js_trim};
use crate::webhook::Raw;
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, Keyword, KeywordKind, StatusUpdate};
use crate::webhook::verify::{
    FormFields, KeyedMac, Settings, SortEntry, decode_signature, encode_base64, first_repeat, header, indexed_values,
    key_index, query, same_bytes, sort_entry, split_url,
};
use crate::webhook::{SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// HMAC-SHA1 of the `hmac` and `sha1` crates (with the CPU's SHA extensions where it has them).
type HmacSha1 = hmac::Hmac<sha1::Sha1>;

/// Orders two strings as their UTF-16 code units do (Twilio's order), without transcoding them.
///
/// UTF-8 byte order is code point order, and that is UTF-16 order except where a character above
/// U+FFFF (a surrogate pair, 0xD800.. in UTF-16; lead byte 0xF0..=0xF4 in UTF-8) meets one in
/// U+E000..=U+FFFF (lead byte 0xEE or 0xEF): UTF-16 puts the surrogate pair first. At the first
/// byte where two strings differ, both are at the same offset of a character (what comes before
/// is equal), so only that pair of lead bytes needs the exception.
fn utf16_order(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.iter().zip(b).find(|(x, y)| x != y) {
        None => a.len().cmp(&b.len()),
        Some((&x, &y)) => match (x, y) {
            (0xEE..=0xEF, 0xF0..) => Ordering::Greater,
            (0xF0.., 0xEE..=0xEF) => Ordering::Less,
            _ => x.cmp(&y),
        },
    }
}

/// Twilio's parameter order: by name, then value, comparing UTF-16 code units.
fn by_name_then_value(a: &(&str, &str), b: &(&str, &str)) -> Ordering {
    utf16_order(a.0, b.0).then_with(|| utf16_order(a.1, b.1))
}

/// `params` in Twilio's signing order (one sort; the pairs are borrowed, nothing is copied).
fn sorted<'p>(params: impl Iterator<Item = (&'p str, &'p str)>) -> Vec<SortEntry<'p>> {
    let mut sorted: Vec<SortEntry<'_>> = params.map(sort_entry).collect();
    sort(&mut sorted);
    sorted
}

/// Sorts `entries` in Twilio's signing order. Without a byte 0xEE or above (no character from
/// U+E000 up) UTF-16 order is byte order, and the sort compares [`SortEntry`]s as they are.
fn sort(entries: &mut [SortEntry<'_>]) {
    // The largest byte, found without a branch per byte (the loop vectorizes).
    let high = |text: &str| text.bytes().fold(0, u8::max) >= 0xEE;
    if entries.iter().any(|(_, name, value)| high(name) || high(value)) {
        entries.sort_unstable_by(|a, b| by_name_then_value(&(a.1, a.2), &(b.1, b.2)));
    } else {
        entries.sort_unstable();
    }
}

/// Up to this many parameters are sorted on the stack.
const STACK_PARAMS: usize = 32;

/// HMAC-SHA1 over `url` followed by every name and value of `sorted`, streamed into the MAC.
fn mac(keyed: &KeyedMac<HmacSha1>, url: &str, sorted: &[SortEntry<'_>]) -> [u8; 20] {
    let mut mac = keyed.start();
    mac.update(url.as_bytes());
    for (_, name, value) in sorted {
        mac.update(name.as_bytes());
        mac.update(value.as_bytes());
    }
    mac.finalize().into_bytes().into()
}

/// The MAC keyed with the auth token (HMAC takes a key of any length).
fn keyed(auth_token: &str) -> Option<KeyedMac<HmacSha1>> {
    KeyedMac::new(auth_token.as_bytes())
}

/// The `X-Twilio-Signature` of `params` posted to `url`: base64 of HMAC-SHA1 keyed with the auth
/// token over the URL followed by every `name` + `value`, sorted by name then value.
#[must_use]
pub fn signature<K: AsRef<str>, V: AsRef<str>>(auth_token: &str, url: &str, params: &[(K, V)]) -> String {
    let sorted = sorted(params.iter().map(|(k, v)| (k.as_ref(), v.as_ref())));
    keyed(auth_token).map(|keyed| encode_base64(&mac(&keyed, url, &sorted))).unwrap_or_default()
}

/// The URLs a signature may have been computed over: as received, and with the port inserted
/// (no port) or removed (a port). Scheme, host and user info are kept as written.
#[must_use]
pub fn url_variants(url: &str) -> Vec<String> {
    std::iter::once(url.to_owned()).chain(other_url_variant(url)).collect()
}

/// The URL with its port inserted (no port) or removed (a port), for `http` and `https` only.
fn other_url_variant(url: &str) -> Option<String> {
    let (scheme, authority, _, _) = split_url(url);
    let default_port = if scheme.eq_ignore_ascii_case("https") {
        "443"
    } else if scheme.eq_ignore_ascii_case("http") {
        "80"
    } else {
        return None;
    };
    // `url` is `{scheme}://{authority}{after}`; the authority is `[userinfo@]host[:port]`.
    let after = url.strip_prefix(scheme)?.strip_prefix("://")?.strip_prefix(authority)?;
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((userinfo, host_port)) => (Some(userinfo), host_port),
        None => (None, authority),
    };
    let userinfo = userinfo.map_or_else(String::new, |u| format!("{u}@"));
    Some(match host_port.rsplit_once(':').filter(|(_, port)| !port.contains(']')) {
        Some((host, _port)) => format!("{scheme}://{userinfo}{host}{after}"),
        None => format!("{scheme}://{userinfo}{host_port}:{default_port}{after}"),
    })
}

const SIGNATURE_HEADER: http::HeaderName = http::HeaderName::from_static("x-twilio-signature");

/// The longest `X-Twilio-Signature` decoded: an HMAC-SHA1 is 20 bytes.
const SIGNATURE_BYTES: usize = 20;

/// Verifies and parses Twilio's status and inbound webhooks.
#[derive(Debug, Clone)]
pub struct TwilioWebhook {
    /// The HMAC keyed with the auth token once, cloned for each request.
    keyed: KeyedMac<HmacSha1>,
    settings: Settings,
}

impl TwilioWebhook {
    /// A verifier for the account's auth token (an API key cannot verify webhooks).
    ///
    /// # Errors
    /// `Configuration` when the token is empty.
    pub fn new(auth_token: impl Into<Secret>) -> Result<Self, Error> {
        let keyed = KeyedMac::from_secret("Twilio", "auth token", "HMAC-SHA1", &auth_token.into())?;
        Ok(Self { keyed, settings: Settings::default() })
    }

    crate::webhook::verify::verifier_options!(url);

    /// Checks `given` against the URL variants and the parameters. The parameters are sorted
    /// once and streamed into the MAC of each URL variant; the second variant is built only when
    /// the URL as received does not match.
    fn check_signature(
        &self,
        given: &str,
        url: &str,
        params: &[(Cow<'_, str>, Cow<'_, str>)],
    ) -> Result<(), WebhookError> {
        let invalid = WebhookError::InvalidSignature { provider: NAME };
        let given = decode_signature(given, SIGNATURE_BYTES).ok_or(invalid.clone())?;
        let mut stack = [(0, "", ""); STACK_PARAMS];
        let mut heap = Vec::new();
        let sorted: &mut [SortEntry<'_>] = if let Some(slots) = stack.get_mut(..params.len()) {
            for (slot, (name, value)) in slots.iter_mut().zip(params) {
                *slot = sort_entry((name, value));
            }
            slots
        } else {
            heap.extend(params.iter().map(|(name, value)| sort_entry((name, value))));
            &mut heap
        };
        sort(sorted);
        let matches = |candidate: &str| same_bytes(&mac(&self.keyed, candidate, sorted), &given);
        if matches(url) || other_url_variant(url).is_some_and(|other| matches(&other)) { Ok(()) } else { Err(invalid) }
    }

    /// The verification [`WebhookVerifier::verify_at`] counts.
    fn check(&self, request: &WebhookRequest<'_>, _now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        let given = header(request.headers, &SIGNATURE_HEADER).filter(|s| !s.is_empty());
        let given = given.ok_or(WebhookError::MissingSignature { provider: NAME })?;
        let url = self.settings.signed_url(request);
        let json = header(request.headers, http::header::CONTENT_TYPE).is_some_and(is_json);
        if let Some(expected) = json.then(|| body_sha256(&url)).flatten() {
            // A JSON body is signed through its hash in the URL; the URL alone is signed.
            if !is_sha256_hex_of(&expected, request.body) {
                return Err(WebhookError::BodyHashMismatch { provider: NAME });
            }
            self.check_signature(given, &url, &[])?;
            return parse_json(request.body, self.settings.detect_keywords);
        }
        if request.method.eq_ignore_ascii_case("GET") {
            // The parameters are in the signed URL; they are decoded once it is verified.
            self.check_signature(given, &url, &[])?;
            let encoded = Settings::encoded_params(request);
            let params = self.settings.form_params(NAME, encoded)?;
            return parse(encoded, &params, self.settings.detect_keywords);
        }
        let params = self.settings.form_params(NAME, request.body)?;
        self.check_signature(given, &url, &params)?;
        parse(request.body, &params, self.settings.detect_keywords)
    }
}

/// Whether a `Content-Type` names JSON (`application/json` anywhere in it, in any letter case).
fn is_json(content_type: &str) -> bool {
    const JSON: &[u8] = b"application/json";
    content_type.as_bytes().windows(JSON.len()).any(|window| window.eq_ignore_ascii_case(JSON))
}

/// The `bodySHA256` query parameter of a signed URL (the query is read lazily, pair by pair).
fn body_sha256(url: &str) -> Option<Cow<'_, str>> {
    url::form_urlencoded::parse(query(url).as_bytes()).find(|(k, _)| k == "bodySHA256").map(|(_, v)| v)
}

impl WebhookVerifier for TwilioWebhook {
    fn provider(&self) -> &'static str {
        NAME
    }

    fn body_limit(&self) -> usize {
        self.settings.max_body
    }

    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        crate::metrics::webhook_verified(NAME, self.check(request, now))
    }

    /// An `X-Twilio-Signature` header.
    fn recognizes(&self, headers: &http::HeaderMap) -> bool {
        headers.contains_key(&SIGNATURE_HEADER)
    }
}

/// Normalizes a verified JSON body: its string and number members are the record, and a member
/// the normalizer reads may appear once only (as a form parameter).
fn parse_json(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let refused = |error: serde_json::Error| WebhookError::payload(NAME, json::refusal(&error));
    let Members(members) = json::read::<Members<'_>>(body)
        .map_err(refused)?
        .ok_or_else(|| WebhookError::payload(NAME, "the body is not a JSON object"))?;
    if let Some(key) = first_repeat(members.iter().map(|(key, _)| key.as_ref()), read_by_normalizer) {
        return Err(WebhookError::payload(NAME, format!("the key {key} appears more than once")));
    }
    let fields: Vec<(&str, Cow<'_, str>)> =
        members.iter().filter_map(|(key, value)| Some((key.as_ref(), value.string_or_number()?))).collect();
    let (dedupe_key, kind) = normalize(fields.iter().map(|(key, value)| (*key, value.as_ref())), detect_keywords)?;
    // The record as `serde_json::Value` keeps it: a repeated member has its first place and its
    // last value, and only strings and numbers stay.
    let mut record = serde_json::Map::new();
    for (key, value) in &members {
        let text = value.string_or_number().map_or(Value::Null, |text| Value::String(text.into_owned()));
        record.insert(key.clone().into_owned(), text);
    }
    record.retain(|_, value| !value.is_null());
    Ok(SmsEvent::new(NAME, dedupe_key, None, Raw::ready(Value::Object(record)), kind))
}

/// Whether the normalizer reads `key` (a repeat of it is ambiguous).
fn read_by_normalizer(key: &str) -> bool {
    matches!(
        key,
        "MessageSid"
            | "SmsSid"
            | "MessageStatus"
            | "SmsStatus"
            | "Body"
            | "From"
            | "To"
            | "NumMedia"
            | "OptOutType"
            | "ErrorCode"
    ) || key_index(key, "MediaUrl").is_some()
}

/// Normalizes verified form parameters (decoded from `encoded`, which the event keeps as its
/// raw payload): the first value of each, a repeat of a parameter the normalizer reads refused.
pub(crate) fn parse(
    encoded: &[u8],
    params: &[(Cow<'_, str>, Cow<'_, str>)],
    detect_keywords: bool,
) -> Result<SmsEvent, WebhookError> {
    let fields = FormFields::new(NAME, params, read_by_normalizer)?;
    let (dedupe_key, kind) = normalize(fields.iter(), detect_keywords)?;
    Ok(SmsEvent::new(NAME, dedupe_key, None, Raw::form(encoded), kind))
}

/// The fields the normalizer reads, found in one pass over the record (no lookup per field).
#[derive(Default)]
struct Read<'a> {
    message_sid: Option<&'a str>,
    sms_sid: Option<&'a str>,
    message_status: Option<&'a str>,
    sms_status: Option<&'a str>,
    has_body: bool,
    body: Option<&'a str>,
    from: Option<&'a str>,
    to: Option<&'a str>,
    num_media: Option<&'a str>,
    opt_out_type: Option<&'a str>,
    error_code: Option<&'a str>,
    /// Whether any key starts with `MediaUrl` (only then are the media fields collected).
    media: bool,
}

impl<'a> Read<'a> {
    fn of(fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut read = Self::default();
        for (key, value) in fields {
            let text = Some(value);
            match key {
                "MessageSid" => read.message_sid = text,
                "SmsSid" => read.sms_sid = text,
                "MessageStatus" => read.message_status = text,
                "SmsStatus" => read.sms_status = text,
                "Body" => (read.has_body, read.body) = (true, text),
                "From" => read.from = text,
                "To" => read.to = text,
                "NumMedia" => read.num_media = text,
                "OptOutType" => read.opt_out_type = text,
                "ErrorCode" => read.error_code = text,
                other => read.media |= other.starts_with("MediaUrl"),
            }
        }
        read
    }
}

/// A value that is present and not empty.
fn non_empty(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}

/// The dedupe key and the event of a verified record's string fields (in order; a key the
/// normalizer reads appears once).
fn normalize<'a>(
    fields: impl Iterator<Item = (&'a str, &'a str)> + Clone,
    detect_keywords: bool,
) -> Result<(String, EventKind), WebhookError> {
    let read = Read::of(fields.clone());
    let sid = non_empty(read.message_sid)
        .or_else(|| non_empty(read.sms_sid))
        .ok_or_else(|| WebhookError::payload(NAME, "missing MessageSid"))?;
    let sid = sid.to_owned();
    let status = read.message_status.or(read.sms_status).map(str::to_owned);
    let inbound = read.has_body && matches!(status.as_deref(), None | Some("received" | "receiving"));
    let (dedupe_key, kind) = if inbound {
        let from = non_empty(read.from).ok_or_else(|| WebhookError::payload(NAME, "missing From"))?.to_owned();
        let to = non_empty(read.to).ok_or_else(|| WebhookError::payload(NAME, "missing To"))?.to_owned();
        // `MediaUrl{i}` for every i below `NumMedia` that the body holds: the count bounds which
        // fields are taken, it is never looped up to.
        let count = read.num_media.and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
        let media_urls = if read.media && count > 0 {
            indexed_values(fields, "MediaUrl")
                .into_iter()
                .take_while(|&(index, _)| index < count)
                .map(|(_, url)| url.to_owned())
                .collect()
        } else {
            Vec::new()
        };
        let message =
            Inbound { provider_id: sid.clone(), from, to, body: read.body.unwrap_or_default().to_owned(), media_urls };
        let signal = read.opt_out_type.map(|t| js_trim(t).to_uppercase()).and_then(|keyword| {
            let kind = match keyword.as_str() {
                "STOP" => KeywordKind::OptedOut,
                "START" => KeywordKind::OptedIn,
                "HELP" => KeywordKind::Help,
                _ => return None,
            };
            Some(Keyword { kind, keyword })
        });
        (format!("twilio:{sid}:received"), EventKind::inbound(message, signal, detect_keywords))
    } else {
        let status = status.ok_or_else(|| WebhookError::payload(NAME, "neither Body nor MessageStatus"))?;
        let error_code = non_empty(read.error_code).map(str::to_owned);
        let delivery = match status.as_str() {
            "queued" | "accepted" | "scheduled" | "sending" => Some(DeliveryStatus::Queued),
            "sent" => Some(DeliveryStatus::Sent),
            "delivered" => Some(DeliveryStatus::Delivered),
            "undelivered" | "failed" if error_code.as_deref() == Some("30007") => Some(DeliveryStatus::Filtered),
            "undelivered" | "failed" => Some(DeliveryStatus::Undelivered),
            _ => None,
        };
        let kind = match delivery {
            Some(delivery) => EventKind::status(
                delivery,
                StatusUpdate {
                    provider_id: sid.clone(),
                    provider_status: status.clone(),
                    error_code,
                    from: read.from.map(str::to_owned),
                    to: read.to.map(str::to_owned),
                },
            ),
            None => EventKind::Unrecognized { provider_event_type: status.clone() },
        };
        (format!("twilio:{sid}:{status}"), kind)
    };
    Ok((dedupe_key, kind))
}

#[cfg(test)]
mod tests {
    use proptest::strategy::Strategy as _;

    use super::*;
    use crate::json::random::{damage, random_json};
    use crate::json::reference::{assert_agree, value_checked};

    /// The JSON normalizer over a `Value` of the body (a member it reads repeated refused): its
    /// string and number members are the record.
    fn through_value(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
        const READ: [&[&str]; 11] = [
            &["MessageSid"],
            &["SmsSid"],
            &["MessageStatus"],
            &["SmsStatus"],
            &["Body"],
            &["From"],
            &["To"],
            &["NumMedia"],
            &["OptOutType"],
            &["ErrorCode"],
            &["MediaUrl0"],
        ];
        // The members are read whole before they are judged: a body that is not JSON is refused as
        // such, a repeat in it or not.
        if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err() {
            return Err(WebhookError::payload(NAME, "the body is not JSON"));
        }
        let value = value_checked(body, &READ).map_err(|why| WebhookError::payload(NAME, why))?;
        let Value::Object(object) = value else {
            return Err(WebhookError::payload(NAME, "the body is not a JSON object"));
        };
        let record: serde_json::Map<String, Value> = object
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k, Value::String(s))),
                Value::Number(n) => Some((k, Value::String(n.to_string()))),
                Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
            })
            .collect();
        let fields = record.iter().filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)));
        let (dedupe_key, kind) = normalize(fields, detect_keywords)?;
        Ok(SmsEvent::new(NAME, dedupe_key, None, Raw::ready(Value::Object(record)), kind))
    }

    #[test]
    fn json_bodies_normalize_as_through_a_value() {
        const KEYS: [&str; 8] = ["MessageSid", "MessageStatus", "Body", "From", "To", "MediaUrl0", "NumMedia", "x"];
        const LEAVES: [&str; 10] = [
            "\"SM1\"",
            "\"delivered\"",
            "\"STOP\"",
            "\"+14155550123\"",
            "\"\"",
            "1",
            "2.5",
            "null",
            "\"\\ud800\"",
            "[]",
        ];
        let mut rng = fastrand::Rng::with_seed(25);
        for _ in 0..8_000 {
            let mut body = String::new();
            let depth = rng.usize(1..4);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut body);
            for body in [body.clone().into_bytes(), damage(&mut rng, body.into_bytes())] {
                for detect_keywords in [true, false] {
                    assert_agree(&body, parse_json(&body, detect_keywords), through_value(&body, detect_keywords));
                }
            }
        }
    }

    #[test]
    fn t179_published_example() {
        let params = [
            ("Digits", "1234"),
            ("To", "+18005551212"),
            ("From", "+14158675310"),
            ("Caller", "+14158675310"),
            ("CallSid", "CA1234567890ABCDE"),
        ];
        assert_eq!(
            signature("12345", "https://example.com/myapp.php?foo=1&bar=2", &params),
            "L/OH5YylLD5NRKLltdqwSvS0BnU="
        );
    }

    #[test]
    fn t180_repeated_parameters_sign_in_value_order() {
        let url = "https://example.com/webhooks/twilio";
        let a = signature("t", url, &[("M", "b"), ("M", "a")]);
        assert_eq!(a, signature("t", url, &[("M", "a"), ("M", "b")]));
        assert_eq!(a, "ae0O5fejAmpkA+VyU7N+mU6Zol4=");
    }

    #[test]
    fn t181_port_variants() {
        assert_eq!(signature("t", "https://example.com:443/hook", &[("A", "1")]), "iqkaDul5n2CKf1eULS98ou3GtWU=");
        assert_eq!(signature("t", "https://example.com/hook", &[("A", "1")]), "GID8I2TwlgIvyuTquXfdrHxkdfs=");
        assert_eq!(
            url_variants("https://example.com/hook"),
            ["https://example.com/hook", "https://example.com:443/hook"]
        );
        assert_eq!(
            url_variants("https://example.com:443/hook"),
            ["https://example.com:443/hook", "https://example.com/hook"]
        );
        assert_eq!(
            url_variants("https://user:pw@Example.com:8443/a?b=1"),
            ["https://user:pw@Example.com:8443/a?b=1", "https://user:pw@Example.com/a?b=1"]
        );
        assert_eq!(url_variants("http://h?x=1"), ["http://h?x=1", "http://h:80?x=1"]);
    }

    fn mixed_text() -> impl proptest::strategy::Strategy<Value = String> {
        // ASCII, Latin-1, the edges of the surrogate gap and of the BMP, and astral characters.
        let chars =
            vec!['\0', 'a', 'b', 'é', '\u{D7FF}', '\u{E000}', '\u{FFFD}', '\u{FFFF}', '\u{10000}', '😀', '\u{10FFFF}'];
        proptest::collection::vec(proptest::sample::select(chars), 0..12).prop_map(|chars| chars.into_iter().collect())
    }

    proptest::proptest! {
        #[test]
        fn byte_comparison_orders_as_utf16(a in mixed_text(), b in mixed_text()) {
            proptest::prop_assert_eq!(utf16_order(&a, &b), a.encode_utf16().cmp(b.encode_utf16()));
        }

        #[test]
        fn sorting_orders_as_utf16(pairs in proptest::collection::vec((mixed_text(), mixed_text()), 0..8)) {
            let mut expected: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            expected.sort_by(|a, b| {
                a.0.encode_utf16().cmp(b.0.encode_utf16()).then_with(|| a.1.encode_utf16().cmp(b.1.encode_utf16()))
            });
            let sorted: Vec<(&str, &str)> =
                sorted(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).into_iter().map(|(_, k, v)| (k, v)).collect();
            proptest::prop_assert_eq!(sorted, expected);
        }
    }

    #[test]
    fn t201_published_body_hash() {
        assert_eq!(
            sha256_hex(br#"{"CallSid":"CA1234567890ABCDE","Caller":"+12349013030"}"#),
            "5ccde7145dfb8f56479710896586cb9d5911809d83afbe34627818790db0aec9"
        );
    }
}
