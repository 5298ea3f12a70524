//! Twilio webhooks: `X-Twilio-Signature` (HMAC-SHA1 over the URL and the sorted parameters, or
//! over the URL alone with a `bodySHA256` for JSON bodies), then the status or inbound message.

use std::time::SystemTime;

use ring::hmac;
use serde_json::Value;

use super::NAME;
use crate::digest::sha256_hex;
use crate::error::Error;
use crate::redact::{Secret, js_trim};
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, Keyword, KeywordKind, StatusUpdate};
use crate::webhook::{
    Settings, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier, decode_base64, encode_base64, first_values,
    form_pairs, header, request_params, same_bytes, split_url,
};

/// The `X-Twilio-Signature` of `params` posted to `url`: base64 of HMAC-SHA1 keyed with the auth
/// token over the URL followed by every `name` + `value`, sorted by name then value.
#[must_use]
pub fn signature<K: AsRef<str>, V: AsRef<str>>(auth_token: &str, url: &str, params: &[(K, V)]) -> String {
    let mut sorted: Vec<(&str, &str)> = params.iter().map(|(k, v)| (k.as_ref(), v.as_ref())).collect();
    sorted.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()).then(a.1.encode_utf16().cmp(b.1.encode_utf16())));
    let mut data = url.to_owned();
    for (name, value) in sorted {
        data.push_str(name);
        data.push_str(value);
    }
    let key = hmac::Key::new(hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY, auth_token.as_bytes());
    encode_base64(hmac::sign(&key, data.as_bytes()).as_ref())
}

/// The URLs a signature may have been computed over: as received, and with the port inserted
/// (no port) or removed (a port). Scheme, host and user info are kept as written.
#[must_use]
pub fn url_variants(url: &str) -> Vec<String> {
    let (scheme, authority, _, _) = split_url(url);
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "https" => "443",
        "http" => "80",
        _ => return vec![url.to_owned()],
    };
    let host_start = authority.rfind('@').map_or(0, |i| i + 1);
    let host_port = &authority[host_start..];
    let port_at = host_port.rfind(':').filter(|&i| !host_port[i..].contains(']'));
    let authority_start = scheme.len() + 3;
    let (before, after) = url.split_at(authority_start + authority.len());
    let other = match port_at {
        Some(colon) => format!("{}{after}", &before[..authority_start + host_start + colon]),
        None => format!("{before}:{default_port}{after}"),
    };
    vec![url.to_owned(), other]
}

/// Verifies and parses Twilio's status and inbound webhooks.
#[derive(Debug, Clone)]
pub struct TwilioWebhook {
    auth_token: Secret,
    settings: Settings,
}

impl TwilioWebhook {
    /// A verifier for the account's auth token (an API key cannot verify webhooks).
    ///
    /// # Errors
    /// `Configuration` when the token is empty.
    pub fn new(auth_token: impl Into<Secret>) -> Result<Self, Error> {
        let auth_token = auth_token.into();
        if auth_token.is_empty() {
            return Err(Error::configuration("The Twilio webhook verifier needs the auth token."));
        }
        Ok(Self { auth_token, settings: Settings::default() })
    }

    crate::webhook::verifier_options!(url);

    fn verify_signature(&self, request: &WebhookRequest<'_>) -> Result<Record, WebhookError> {
        let invalid = WebhookError::InvalidSignature { provider: NAME };
        let given = header(request.headers, "x-twilio-signature").filter(|s| !s.is_empty());
        let given = given.ok_or(WebhookError::MissingSignature { provider: NAME })?;
        let url = self.settings.signed_url(request);
        let json = header(request.headers, "content-type")
            .is_some_and(|t| t.to_ascii_lowercase().contains("application/json"));
        let body_hash = json.then(|| body_sha256(&url)).flatten();
        let (signed_params, record) = match &body_hash {
            Some(expected) => {
                if !same_bytes(sha256_hex(request.body).as_bytes(), expected.to_ascii_lowercase().as_bytes()) {
                    return Err(WebhookError::BodyHashMismatch { provider: NAME });
                }
                (Vec::new(), Record::Json)
            }
            None if request.method.eq_ignore_ascii_case("GET") => (Vec::new(), Record::Form(request_params(request))),
            None => {
                let params = form_pairs(request.body);
                (params.clone(), Record::Form(params))
            }
        };
        let given = decode_base64(given).ok_or(invalid.clone())?;
        let matches = url_variants(&url).iter().any(|candidate| {
            decode_base64(&signature(self.auth_token.expose(), candidate, &signed_params))
                .is_some_and(|expected| same_bytes(&expected, &given))
        });
        if matches { Ok(record) } else { Err(invalid) }
    }
}

/// The `bodySHA256` query parameter of a signed URL.
fn body_sha256(url: &str) -> Option<String> {
    let (_, _, _, query) = split_url(url);
    form_pairs(query.trim_start_matches('?').as_bytes()).into_iter().find(|(k, _)| k == "bodySHA256").map(|(_, v)| v)
}

/// What was signed: form parameters, or a JSON body checked by its hash.
enum Record {
    Form(Vec<(String, String)>),
    Json,
}

impl WebhookVerifier for TwilioWebhook {
    fn provider(&self) -> &'static str {
        NAME
    }

    fn body_limit(&self) -> usize {
        self.settings.max_body
    }

    fn verify_at(&self, request: &WebhookRequest<'_>, _now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        let fields = match self.verify_signature(request)? {
            Record::Form(pairs) => first_values(&pairs),
            Record::Json => json_fields(request.body)?,
        };
        parse(fields, self.settings.detect_keywords)
    }
}

/// The string and number fields of a JSON object body.
fn json_fields(body: &[u8]) -> Result<serde_json::Map<String, Value>, WebhookError> {
    let value: Value = serde_json::from_slice(body).map_err(|_| WebhookError::payload(NAME, "the body is not JSON"))?;
    let Value::Object(object) = value else { return Err(WebhookError::payload(NAME, "the body is not a JSON object")) };
    Ok(object
        .into_iter()
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some((k, Value::String(s))),
            Value::Number(n) => Some((k, Value::String(n.to_string()))),
            Value::Null | Value::Bool(_) | Value::Array(_) | Value::Object(_) => None,
        })
        .collect())
}

/// Normalizes a verified field record (first value of each parameter).
pub(crate) fn parse(fields: serde_json::Map<String, Value>, detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let get = |key: &str| fields.get(key).and_then(Value::as_str);
    let non_empty = |key: &str| get(key).filter(|v| !v.is_empty());
    let sid = non_empty("MessageSid")
        .or_else(|| non_empty("SmsSid"))
        .ok_or_else(|| WebhookError::payload(NAME, "missing MessageSid"))?;
    let sid = sid.to_owned();
    let status = get("MessageStatus").or_else(|| get("SmsStatus")).map(str::to_owned);
    let inbound = fields.contains_key("Body") && matches!(status.as_deref(), None | Some("received" | "receiving"));
    let (dedupe_key, kind) = if inbound {
        let from = non_empty("From").ok_or_else(|| WebhookError::payload(NAME, "missing From"))?.to_owned();
        let to = non_empty("To").ok_or_else(|| WebhookError::payload(NAME, "missing To"))?.to_owned();
        let count = get("NumMedia").and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
        let media_urls = (0..count).filter_map(|i| get(&format!("MediaUrl{i}")).map(str::to_owned)).collect();
        let message = Inbound {
            provider_id: sid.clone(),
            from,
            to,
            body: get("Body").unwrap_or_default().to_owned(),
            media_urls,
        };
        let signal = get("OptOutType").map(|t| js_trim(t).to_uppercase()).and_then(|keyword| {
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
        let error_code = non_empty("ErrorCode").map(str::to_owned);
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
                    from: get("From").map(str::to_owned),
                    to: get("To").map(str::to_owned),
                },
            ),
            None => EventKind::Unrecognized { provider_event_type: status.clone() },
        };
        (format!("twilio:{sid}:{status}"), kind)
    };
    Ok(SmsEvent { provider: NAME, dedupe_key, occurred_at: None, raw: Value::Object(fields), kind })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn t201_published_body_hash() {
        assert_eq!(
            sha256_hex(br#"{"CallSid":"CA1234567890ABCDE","Caller":"+12349013030"}"#),
            "5ccde7145dfb8f56479710896586cb9d5911809d83afbe34627818790db0aec9"
        );
    }
}
