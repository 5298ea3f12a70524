//! Plivo webhooks: V3 signatures (URL, query and parameters, with a nonce) when present, else V2
//! (URL without query, with a nonce; the body is not signed), then the status or inbound message.

use std::borrow::Cow;
use std::time::SystemTime;

use hmac::Mac as _;

use super::NAME;
use crate::error::Error;
use crate::redact::Secret;
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, StatusUpdate};
use crate::webhook::verify::{
    FormFields, KeyedMac, Pairs, Settings, SortEntry, count_params, decode_signature, encode_base64, form_pairs,
    form_pairs_counted, header, indexed_values, key_index, query, same_bytes, sort_entry, split_url,
};
use crate::webhook::{Raw, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// The longest signature decoded: an HMAC-SHA256 is 32 bytes.
const SIGNATURE_BYTES: usize = 32;

/// HMAC-SHA256 of the `hmac` and `sha2` crates (with the CPU's SHA extensions where it has them).
type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// The MAC keyed with the auth token (HMAC takes a key of any length).
fn keyed(auth_token: &str) -> Option<KeyedMac<HmacSha256>> {
    KeyedMac::new(auth_token.as_bytes())
}

/// The default port of a scheme, with its colon.
fn default_port(scheme: &str) -> Option<&'static str> {
    if scheme.eq_ignore_ascii_case("https") {
        Some(":443")
    } else if scheme.eq_ignore_ascii_case("http") {
        Some(":80")
    } else {
        None
    }
}

/// Writes `scheme://host[:port]/path` of a URL as received (query and fragment dropped).
fn write_base(url: &str, drop_default_port: bool, out: &mut dyn FnMut(&str)) {
    let (scheme, authority, path, _) = split_url(url);
    let authority = match default_port(scheme) {
        Some(port) if drop_default_port => authority.strip_suffix(port).unwrap_or(authority),
        _ => authority,
    };
    for part in [scheme, "://", authority, path] {
        out(part);
    }
}

/// Writes `pairs` as `k=v` joined by `&`.
fn write_joined(pairs: &[SortEntry<'_>], out: &mut dyn FnMut(&str)) {
    for (i, (_, name, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out("&");
        }
        for part in [*name, "=", *value] {
            out(part);
        }
    }
}

/// Writes the text the V3 signature covers, before the `.` and the nonce, piece by piece (into
/// a string or straight into a MAC). The pairs are sorted once, in place; nothing is copied.
fn write_v3(method: &str, url: &str, mut body: Vec<SortEntry<'_>>, out: &mut dyn FnMut(&str)) {
    let query_pairs = form_pairs(query(url).as_bytes());
    let mut query: Vec<SortEntry<'_>> = query_pairs.iter().map(|(k, v)| sort_entry((k, v))).collect();
    write_base(url, false, out);
    if method.eq_ignore_ascii_case("GET") {
        query.extend(body);
        query.sort_unstable();
        if !query.is_empty() {
            out("?");
            write_joined(&query, out);
        }
        return;
    }
    body.sort_unstable();
    let concatenated = |out: &mut dyn FnMut(&str)| {
        for (_, name, value) in &body {
            out(name);
            out(value);
        }
    };
    if query.is_empty() {
        if !body.is_empty() {
            out("?");
            concatenated(out);
        }
        return;
    }
    query.sort_unstable();
    out("?");
    write_joined(&query, out);
    if !body.is_empty() {
        out(".");
        concatenated(out);
    }
}

/// HMAC-SHA256 of what `write` writes, then `nonce`.
fn mac(keyed: &KeyedMac<HmacSha256>, write: impl FnOnce(&mut dyn FnMut(&str)), nonce: &str) -> [u8; 32] {
    let mut mac = keyed.start();
    write(&mut |part: &str| mac.update(part.as_bytes()));
    mac.update(nonce.as_bytes());
    mac.finalize().into_bytes().into()
}

/// The V2 MAC: the URL without its query, then the nonce.
fn v2_mac(keyed: &KeyedMac<HmacSha256>, url: &str, nonce: &str) -> [u8; 32] {
    mac(keyed, |out| write_base(url, true, out), nonce)
}

/// The V3 MAC: [`write_v3`], `.` and the nonce.
fn v3_mac(keyed: &KeyedMac<HmacSha256>, method: &str, url: &str, params: Vec<SortEntry<'_>>, nonce: &str) -> [u8; 32] {
    let write = |out: &mut dyn FnMut(&str)| {
        write_v3(method, url, params, out);
        out(".");
    };
    mac(keyed, write, nonce)
}

/// The parameters, borrowed, ready to sort by name and value.
fn borrowed<K: AsRef<str>, V: AsRef<str>>(params: &[(K, V)]) -> Vec<SortEntry<'_>> {
    params.iter().map(|(k, v)| sort_entry((k.as_ref(), v.as_ref()))).collect()
}

/// The V2 signature: base64 HMAC-SHA256 over the URL without its query, then the nonce.
#[must_use]
pub fn signature_v2(auth_token: &str, url: &str, nonce: &str) -> String {
    keyed(auth_token).map(|keyed| encode_base64(&v2_mac(&keyed, url, nonce))).unwrap_or_default()
}

/// The text the V3 signature covers, before the `.` and the nonce.
#[must_use]
pub fn v3_string<K: AsRef<str>, V: AsRef<str>>(method: &str, url: &str, params: &[(K, V)]) -> String {
    let mut text = String::new();
    write_v3(method, url, borrowed(params), &mut |part| text.push_str(part));
    text
}

/// The V3 signature: base64 HMAC-SHA256 over Plivo's V3 string (the URL, then its query and the
/// parameters, each sorted), `.` and the nonce.
#[must_use]
pub fn signature_v3<K: AsRef<str>, V: AsRef<str>>(
    auth_token: &str,
    method: &str,
    url: &str,
    params: &[(K, V)],
    nonce: &str,
) -> String {
    keyed(auth_token)
        .map(|keyed| encode_base64(&v3_mac(&keyed, method, url, borrowed(params), nonce)))
        .unwrap_or_default()
}

const V3: http::HeaderName = http::HeaderName::from_static("x-plivo-signature-v3");
const V3_NONCE: http::HeaderName = http::HeaderName::from_static("x-plivo-signature-v3-nonce");
const V2: http::HeaderName = http::HeaderName::from_static("x-plivo-signature-v2");
const V2_NONCE: http::HeaderName = http::HeaderName::from_static("x-plivo-signature-v2-nonce");
const MA_V2: http::HeaderName = http::HeaderName::from_static("x-plivo-signature-ma-v2");

/// Verifies and parses Plivo's message webhooks.
#[derive(Debug, Clone)]
pub struct PlivoWebhook {
    /// The HMAC keyed with the auth token once, cloned for each request.
    keyed: KeyedMac<HmacSha256>,
    settings: Settings,
}

impl PlivoWebhook {
    /// A verifier for the account's auth token.
    ///
    /// # Errors
    /// `Configuration` when the token is empty.
    pub fn new(auth_token: impl Into<Secret>) -> Result<Self, Error> {
        let keyed = KeyedMac::from_secret("Plivo", "auth token", "HMAC-SHA256", &auth_token.into())?;
        Ok(Self { keyed, settings: Settings::default() })
    }

    crate::webhook::verify::verifier_options!(url);

    /// Checks the V3 (when present) or V2 signatures. Returns the body parameters when V3 signed
    /// them (decoded once, used again by the normalizer).
    fn verify_signature<'a>(&self, request: &WebhookRequest<'a>) -> Result<Option<Pairs<'a>>, WebhookError> {
        let url = self.settings.signed_url(request);
        let present = |name: &http::HeaderName| header(request.headers, name).filter(|v| !v.is_empty());
        let missing = WebhookError::MissingSignature { provider: NAME };
        let get = request.method.eq_ignore_ascii_case("GET");
        let (expected, v3_list, v2_headers, body_params) = if let Some(v3) = present(&V3) {
            let nonce = present(&V3_NONCE).ok_or(missing)?;
            let body: &[u8] = if get { b"" } else { request.body };
            let body_count = count_params(body);
            self.settings.check_param_count(NAME, count_params(query(&url).as_bytes()).saturating_add(body_count))?;
            let params = form_pairs_counted(body, body_count);
            let expected = v3_mac(&self.keyed, request.method, &url, borrowed(&params), nonce);
            (expected, Some(v3), [None, None], (!get).then_some(params))
        } else {
            let nonce = present(&V2_NONCE).ok_or(missing.clone())?;
            let given = [&V2, &MA_V2].map(present);
            if given.iter().all(Option::is_none) {
                return Err(missing);
            }
            (v2_mac(&self.keyed, &url, nonce), None, given, None)
        };
        // V3's comma-separated list is read lazily: a long list is not collected.
        let given = v3_list.into_iter().flat_map(|list| list.split(',').map(str::trim));
        let valid = given
            .chain(v2_headers.into_iter().flatten())
            .any(|g| decode_signature(g, SIGNATURE_BYTES).is_some_and(|g| same_bytes(&g, expected.as_ref())));
        if valid { Ok(body_params) } else { Err(WebhookError::InvalidSignature { provider: NAME }) }
    }

    /// The verification [`WebhookVerifier::verify_at`] counts.
    fn check(&self, request: &WebhookRequest<'_>, _now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        let encoded = Settings::encoded_params(request);
        let params = match self.verify_signature(request)? {
            Some(params) => params,
            None => self.settings.form_params(NAME, encoded)?,
        };
        parse(encoded, &params, self.settings.detect_keywords)
    }
}

impl WebhookVerifier for PlivoWebhook {
    fn provider(&self) -> &'static str {
        NAME
    }

    fn body_limit(&self) -> usize {
        self.settings.max_body
    }

    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        crate::metrics::webhook_verified(NAME, self.check(request, now))
    }
    /// An `X-Plivo-Signature-V3`, `-V2` or `-MA-V2` header.
    fn recognizes(&self, headers: &http::HeaderMap) -> bool {
        [&V3, &V2, &MA_V2].into_iter().any(|name| headers.contains_key(name))
    }
}

/// Whether the normalizer reads `key` (a repeat of it is ambiguous).
fn read_by_normalizer(key: &str) -> bool {
    matches!(key, "MessageUUID" | "Status" | "Text" | "From" | "To" | "ErrorCode") || key_index(key, "Media").is_some()
}

/// Normalizes verified form parameters (decoded from `encoded`, which the event keeps as its
/// raw payload): the first value of each, a repeat of a parameter the normalizer reads refused.
pub(crate) fn parse(
    encoded: &[u8],
    params: &[(Cow<'_, str>, Cow<'_, str>)],
    detect_keywords: bool,
) -> Result<SmsEvent, WebhookError> {
    let fields = FormFields::new(NAME, params, read_by_normalizer)?;
    let get = |key: &str| fields.get(key);
    let non_empty = |key: &str| get(key).filter(|v| !v.is_empty()).map(str::to_owned);
    let uuid = non_empty("MessageUUID").ok_or_else(|| WebhookError::payload(NAME, "missing MessageUUID"))?;
    let (dedupe_key, kind) = match get("Status") {
        None => {
            let text = get("Text").ok_or_else(|| WebhookError::payload(NAME, "neither Status nor Text"))?.to_owned();
            let from = non_empty("From").ok_or_else(|| WebhookError::payload(NAME, "missing From"))?;
            let to = non_empty("To").ok_or_else(|| WebhookError::payload(NAME, "missing To"))?;
            // `Media0`, `Media1`, … up to the first missing index, from the fields the body holds.
            let media_urls = indexed_values(fields.iter(), "Media")
                .into_iter()
                .enumerate()
                .take_while(|&(position, (index, _))| position == index)
                .map(|(_, (_, url))| url.to_owned())
                .collect();
            let message = Inbound { provider_id: uuid.clone(), from, to, body: text, media_urls };
            (format!("plivo:{uuid}:received"), EventKind::inbound(message, None, detect_keywords))
        }
        Some(status) => {
            let delivery = match status {
                "queued" => Some(DeliveryStatus::Queued),
                "sent" => Some(DeliveryStatus::Sent),
                "delivered" => Some(DeliveryStatus::Delivered),
                "undelivered" | "failed" => Some(DeliveryStatus::Undelivered),
                _ => None,
            };
            let kind = match delivery {
                Some(delivery) => EventKind::status(
                    delivery,
                    StatusUpdate {
                        provider_id: uuid.clone(),
                        provider_status: status.to_owned(),
                        error_code: non_empty("ErrorCode").filter(|c| c != "000"),
                        from: get("From").map(str::to_owned),
                        to: get("To").map(str::to_owned),
                    },
                ),
                None => EventKind::Unrecognized { provider_event_type: status.to_owned() },
            };
            (format!("plivo:{uuid}:{status}"), kind)
        }
    };
    Ok(SmsEvent::new(NAME, dedupe_key, None, Raw::form(encoded), kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t220_v2_signs_the_url_without_its_query() {
        let url = "https://example.com/webhooks/plivo?a=1";
        assert_eq!(signature_v2("plivo-auth-token", url, "12345"), "sF6pJQOVvmgKnw+zQdPgD/Bp+UYBqdZNdKKnELNU4oE=");
        // An empty path stays empty.
        let mut base = String::new();
        write_base("https://answer.url", true, &mut |part| base.push_str(part));
        assert_eq!(base, "https://answer.url");
    }

    const PARAMS: [(&str, &str); 5] = [
        ("From", "14155550123"),
        ("To", "15005550006"),
        ("Text", "STOP"),
        ("Type", "sms"),
        ("MessageUUID", "2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2c"),
    ];

    #[test]
    fn v3_derived_vectors() {
        let with_query = "https://example.com/sms/inbound?tenant=acme";
        assert_eq!(
            v3_string("POST", with_query, &PARAMS),
            "https://example.com/sms/inbound?tenant=acme.From14155550123MessageUUID2b7a3f3c-1d2e-4f5a-9b8c-7d6e5f4a3b2cTextSTOPTo15005550006Typesms"
        );
        assert_eq!(
            signature_v3("plivo-token", "POST", with_query, &PARAMS, "918273645"),
            "rYoHZgPIXdBjAoDNjkIy3A1vGSDr099o3atv+qSBw04="
        );
        assert_eq!(
            signature_v3("plivo-token", "POST", "https://example.com/sms/inbound", &PARAMS, "918273645"),
            "CPZnMYveL6KXwA5M9LthN8fczA3MrpMYd7qwEcrVtuk="
        );
        assert_eq!(
            signature_v3(
                "plivo-token",
                "POST",
                "https://example.com/sms/inbound?tenant=acme%20corp&b=1",
                &PARAMS,
                "918273645"
            ),
            "XSGmHGeS07oC4bnPtXUAWhgSSxCvWWjRwPbo4H9NQhI="
        );
    }
}
