//! Plivo webhooks: V3 signatures (URL, query and parameters, with a nonce) when present, else V2
//! (URL without query, with a nonce; the body is not signed), then the status or inbound message.

use std::time::SystemTime;

use ring::hmac;
use serde_json::Value;

use super::NAME;
use crate::error::Error;
use crate::redact::Secret;
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, StatusUpdate};
use crate::webhook::{
    Settings, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier, decode_base64, encode_base64, first_values,
    form_pairs, header, request_params, same_bytes, split_url,
};

fn hmac_sha256_base64(auth_token: &str, data: &str) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, auth_token.as_bytes());
    encode_base64(hmac::sign(&key, data.as_bytes()).as_ref())
}

/// `scheme://host[:port]/path` of a URL as received (query and fragment dropped).
fn base_url(url: &str, drop_default_port: bool) -> String {
    let (scheme, authority, path, _) = split_url(url);
    let default = match scheme.to_ascii_lowercase().as_str() {
        "https" => Some(":443"),
        "http" => Some(":80"),
        _ => None,
    };
    let authority = match default {
        Some(port) if drop_default_port => authority.strip_suffix(port).unwrap_or(authority),
        _ => authority,
    };
    format!("{scheme}://{authority}{path}")
}

/// The V2 signature: base64 HMAC-SHA256 over the URL without its query, then the nonce.
#[must_use]
pub fn signature_v2(auth_token: &str, url: &str, nonce: &str) -> String {
    hmac_sha256_base64(auth_token, &format!("{}{nonce}", base_url(url, true)))
}

/// The text the V3 signature covers, before the `.` and the nonce.
#[must_use]
pub fn v3_string<K: AsRef<str>, V: AsRef<str>>(method: &str, url: &str, params: &[(K, V)]) -> String {
    let (_, _, _, query) = split_url(url);
    let mut query_pairs = form_pairs(query.trim_start_matches('?').as_bytes());
    let mut body: Vec<(String, String)> =
        params.iter().map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned())).collect();
    let base = base_url(url, false);
    let joined = |pairs: &mut Vec<(String, String)>| {
        pairs.sort();
        pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
    };
    if method.eq_ignore_ascii_case("GET") {
        query_pairs.append(&mut body);
        return if query_pairs.is_empty() { base } else { format!("{base}?{}", joined(&mut query_pairs)) };
    }
    body.sort();
    let concatenated: String = body.iter().map(|(k, v)| format!("{k}{v}")).collect();
    if query_pairs.is_empty() {
        return if concatenated.is_empty() { base } else { format!("{base}?{concatenated}") };
    }
    let mut text = format!("{base}?{}", joined(&mut query_pairs));
    if !concatenated.is_empty() {
        text.push('.');
        text.push_str(&concatenated);
    }
    text
}

/// The V3 signature: base64 HMAC-SHA256 over [`v3_string`], `.` and the nonce.
#[must_use]
pub fn signature_v3<K: AsRef<str>, V: AsRef<str>>(
    auth_token: &str,
    method: &str,
    url: &str,
    params: &[(K, V)],
    nonce: &str,
) -> String {
    hmac_sha256_base64(auth_token, &format!("{}.{nonce}", v3_string(method, url, params)))
}

/// Verifies and parses Plivo's message webhooks.
#[derive(Debug, Clone)]
pub struct PlivoWebhook {
    auth_token: Secret,
    settings: Settings,
}

impl PlivoWebhook {
    /// A verifier for the account's auth token.
    ///
    /// # Errors
    /// `Configuration` when the token is empty.
    pub fn new(auth_token: impl Into<Secret>) -> Result<Self, Error> {
        let auth_token = auth_token.into();
        if auth_token.is_empty() {
            return Err(Error::configuration("The Plivo webhook verifier needs the auth token."));
        }
        Ok(Self { auth_token, settings: Settings::default() })
    }

    crate::webhook::verifier_options!(url);

    fn verify_signature(&self, request: &WebhookRequest<'_>, params: &[(String, String)]) -> Result<(), WebhookError> {
        let token = self.auth_token.expose();
        let url = self.settings.signed_url(request);
        let present = |name: &str| header(request.headers, name).filter(|v| !v.is_empty());
        let missing = WebhookError::MissingSignature { provider: NAME };
        let (expected, given): (String, Vec<&str>) = if let Some(v3) = present("x-plivo-signature-v3") {
            let nonce = present("x-plivo-signature-v3-nonce").ok_or(missing)?;
            let body_params: &[(String, String)] =
                if request.method.eq_ignore_ascii_case("GET") { &[] } else { params };
            (signature_v3(token, request.method, &url, body_params, nonce), v3.split(',').map(str::trim).collect())
        } else {
            let nonce = present("x-plivo-signature-v2-nonce").ok_or(missing.clone())?;
            let given: Vec<&str> =
                ["x-plivo-signature-v2", "x-plivo-signature-ma-v2"].iter().filter_map(|h| present(h)).collect();
            if given.is_empty() {
                return Err(missing);
            }
            (signature_v2(token, &url, nonce), given)
        };
        let expected = decode_base64(&expected).unwrap_or_default();
        let valid = given.iter().any(|g| decode_base64(g).is_some_and(|g| same_bytes(&g, &expected)));
        if valid { Ok(()) } else { Err(WebhookError::InvalidSignature { provider: NAME }) }
    }
}

impl WebhookVerifier for PlivoWebhook {
    fn provider(&self) -> &'static str {
        NAME
    }

    fn body_limit(&self) -> usize {
        self.settings.max_body
    }

    fn verify_at(&self, request: &WebhookRequest<'_>, _now: SystemTime) -> Result<SmsEvent, WebhookError> {
        self.settings.check_size(NAME, request)?;
        let params = request_params(request);
        self.verify_signature(request, &params)?;
        parse(first_values(&params), self.settings.detect_keywords)
    }
}

/// Normalizes a verified Plivo field record.
pub(crate) fn parse(fields: serde_json::Map<String, Value>, detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let get = |key: &str| fields.get(key).and_then(Value::as_str);
    let non_empty = |key: &str| get(key).filter(|v| !v.is_empty()).map(str::to_owned);
    let uuid = non_empty("MessageUUID").ok_or_else(|| WebhookError::payload(NAME, "missing MessageUUID"))?;
    let (dedupe_key, kind) = match get("Status") {
        None => {
            let text = get("Text").ok_or_else(|| WebhookError::payload(NAME, "neither Status nor Text"))?.to_owned();
            let from = non_empty("From").ok_or_else(|| WebhookError::payload(NAME, "missing From"))?;
            let to = non_empty("To").ok_or_else(|| WebhookError::payload(NAME, "missing To"))?;
            let media_urls = (0..).map_while(|i| get(&format!("Media{i}")).map(str::to_owned)).collect();
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
    Ok(SmsEvent { provider: NAME, dedupe_key, occurred_at: None, raw: Value::Object(fields), kind })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t220_v2_signs_the_url_without_its_query() {
        let url = "https://example.com/webhooks/plivo?a=1";
        assert_eq!(signature_v2("plivo-auth-token", url, "12345"), "sF6pJQOVvmgKnw+zQdPgD/Bp+UYBqdZNdKKnELNU4oE=");
        // An empty path stays empty.
        assert_eq!(base_url("https://answer.url", true), "https://answer.url");
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
