//! Infobip callbacks: delivery reports (`{results:[…]}`, up to 100 per request by default) and
//! inbound messages (`MO_JSON_2`, the same envelope), verified with what the account can
//! configure, then normalized into one event per result.
//!
//! ```
//! use sms_sdk::provider::infobip::{InfobipWebhook, TOKEN_PARAM, callback_url_with_token};
//! use sms_sdk::webhook::{WebhookRequest, WebhookVerifier};
//!
//! // The callback URL given to Infobip carries the secret token.
//! let token = "0123456789abcdef-token";
//! let url = callback_url_with_token("https://example.com/sms/infobip", token);
//! assert_eq!(url, format!("https://example.com/sms/infobip?{TOKEN_PARAM}={token}"));
//!
//! let verifier = InfobipWebhook::url_token(token)?;
//! let body = br#"{"results":[{"messageId":"sms-sdk-1","to":"41793026727","status":{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET"}}]}"#;
//! let headers = http::HeaderMap::new();
//! let request = WebhookRequest { method: "POST", url: &url, headers: &headers, body };
//! let events = verifier.verify_all(&request)?;
//! assert_eq!(events[0].type_name(), "message.delivered");
//! assert!(verifier.verify_all(&WebhookRequest { url: "https://example.com/sms/infobip", ..request }).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **What verification proves.** Infobip signs neither its per-message delivery reports nor its
//! inbound forwards. The two checks offered prove only that the caller knows a secret that
//! Infobip was given:
//! - [`InfobipWebhook::basic`]: the `Authorization: Basic …` header of the credentials the
//!   account set (Subscriptions API security settings of type `BASIC`, or `user:password@` in
//!   the callback URL), compared whole in constant time;
//! - [`InfobipWebhook::url_token`]: a secret in the callback URL's query parameter
//!   [`TOKEN_PARAM`], compared in constant time.
//!
//! Neither proves what was sent: anyone who holds the secret (it travels with every callback,
//! and a URL is written into proxy and server logs) can forge any body, and a recorded callback
//! can be replayed (there is no timestamp; dedupe keys make a replay harmless, not impossible).
//! Use HTTPS, keep the callback path out of access logs, and add mTLS or an IP allow-list at
//! the proxy where the account allows it. There is no unauthenticated mode.
//!
//! **Batches.** Infobip posts several results in one request: take them all with
//! [`WebhookVerifier::verify_all_at`] (all or none: a batch is refused whole, so Infobip
//! redelivers it whole); the `tower` layer, the `axum` module's `VerifiedAll` and the command's
//! `serve` do. [`WebhookVerifier::verify_at`] refuses a request of more than one result.

use std::time::SystemTime;

use serde::Deserialize;
use serde_json::Value;
use time::OffsetDateTime;

use super::NAME;
use super::response::{Status, delivery, number};
use crate::adapter::Delivery;
use crate::digest::{same_bytes, sha256_hex_bytes};
use crate::error::Error;
use crate::json::{self, Code, Items, Object, Text};
use crate::redact::Secret;
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, StatusUpdate};
use crate::webhook::verify::{BasicCredentials, Settings, only_event, query};
use crate::webhook::{Raw, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// The query parameter of the callback URL that carries the secret token (chosen by this SDK;
/// Infobip sends the URL back as it was given).
pub const TOKEN_PARAM: &str = "sms_sdk_token";

/// The shortest token accepted: 16 characters.
pub const MIN_TOKEN_LEN: usize = 16;

/// The longest token accepted: 256 characters.
pub const MAX_TOKEN_LEN: usize = 256;

/// The most results one callback may carry (Infobip sends 100 by default; the subscription's
/// `maxBucketSize` may change it). More is a payload error.
pub const MAX_RESULTS: usize = 1000;

/// The `WWW-Authenticate` value to answer a callback that came without its Basic credentials
/// (whether Infobip sends them before a challenge is not documented).
pub const WWW_AUTHENTICATE: &str = "Basic realm=\"infobip-callbacks\"";

// A longer array is refused while it is read (`json::Items`), before it is held whole.
const _: () = assert!(MAX_RESULTS <= json::MAX_ITEMS);

/// The longest message id kept as it is in a dedupe key; a longer one is digested.
const MAX_KEY_ID: usize = 128;

/// `url` with `token` added as the query parameter [`TOKEN_PARAM`] (form-encoded, before any
/// fragment): the callback URL to give Infobip (or the message's webhook URL).
#[must_use]
pub fn callback_url_with_token(url: &str, token: &str) -> String {
    let (base, fragment) = url.split_once('#').map_or((url, None), |(base, fragment)| (base, Some(fragment)));
    let pair = url::form_urlencoded::Serializer::new(String::new()).append_pair(TOKEN_PARAM, token).finish();
    let separator = match base.split_once('?') {
        None => "?",
        Some((_, "")) => "",
        Some((_, query)) if query.ends_with('&') => "",
        Some(_) => "&",
    };
    match fragment {
        Some(fragment) => format!("{base}{separator}{pair}#{fragment}"),
        None => format!("{base}{separator}{pair}"),
    }
}

/// How callbacks prove they come from Infobip.
#[derive(Clone)]
enum Auth {
    /// The Basic credentials of the callback.
    Basic(BasicCredentials),
    /// The secret of the callback URL's [`TOKEN_PARAM`].
    UrlToken { token: Secret },
}

/// Verifies and parses Infobip's SMS callbacks (every result of a batch). Its `Debug` shows
/// which check, never the secret.
#[derive(Clone)]
pub struct InfobipWebhook {
    auth: Auth,
    settings: Settings,
}

impl std::fmt::Debug for InfobipWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let auth = match self.auth {
            Auth::Basic(_) => "basic",
            Auth::UrlToken { .. } => "url_token",
        };
        f.debug_struct("InfobipWebhook").field("auth", &auth).field("settings", &self.settings).finish()
    }
}

impl InfobipWebhook {
    /// A verifier of callbacks that carry HTTP Basic credentials (the Subscriptions API's `BASIC`
    /// security setting, or `https://user:password@host/…` as the callback URL).
    ///
    /// # Errors
    /// `Configuration` when the user or the password is empty, or the user holds a `:`.
    pub fn basic(user: &str, password: impl Into<Secret>) -> Result<Self, Error> {
        let credentials = BasicCredentials::new("Infobip", user, &password.into())?;
        Ok(Self { auth: Auth::Basic(credentials), settings: Settings::default() })
    }

    /// A verifier of callbacks whose URL carries `token` in the query parameter [`TOKEN_PARAM`]
    /// (build the URL with [`callback_url_with_token`]). Make the token random: it is the only
    /// secret.
    ///
    /// # Errors
    /// `Configuration` when the token is shorter than [`MIN_TOKEN_LEN`] or longer than
    /// [`MAX_TOKEN_LEN`] characters, or holds a space or a control character.
    pub fn url_token(token: impl Into<Secret>) -> Result<Self, Error> {
        let token = token.into();
        let text = token.expose();
        let length = text.chars().count();
        if !(MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&length)
            || text.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(Error::configuration(format!(
                "The Infobip webhook token must be {MIN_TOKEN_LEN} to {MAX_TOKEN_LEN} characters without spaces."
            )));
        }
        Ok(Self { auth: Auth::UrlToken { token }, settings: Settings::default() })
    }

    crate::webhook::verify::verifier_options!(common);

    fn check(&self, request: &WebhookRequest<'_>) -> Result<Vec<SmsEvent>, WebhookError> {
        self.settings.check_size(NAME, request)?;
        match &self.auth {
            Auth::Basic(credentials) => credentials.check(NAME, request.headers)?,
            Auth::UrlToken { token } => {
                let mut given = url::form_urlencoded::parse(query(request.url).as_bytes())
                    .filter(|(name, _)| name == TOKEN_PARAM)
                    .map(|(_, value)| value);
                let first = given.next().ok_or(WebhookError::MissingSignature { provider: NAME })?;
                if given.next().is_some() {
                    return Err(WebhookError::MalformedSignature { provider: NAME });
                }
                if !same_bytes(first.as_bytes(), token.expose().as_bytes()) {
                    return Err(WebhookError::InvalidSignature { provider: NAME });
                }
            }
        }
        parse_all(request.body, self.settings.detect_keywords)
    }
}

impl WebhookVerifier for InfobipWebhook {
    fn provider(&self) -> &'static str {
        NAME
    }

    /// The request's one result; a batch of several is a payload error (take them all with
    /// [`verify_all_at`](WebhookVerifier::verify_all_at)).
    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        only_event(NAME, self.verify_all_at(request, now)?)
    }

    /// Verifies `request` and returns the events of every result it carries, in order. `now`
    /// is not used (Infobip's callbacks carry no timestamp to check).
    ///
    /// # Errors
    /// `BodyTooLarge` over the limit; `MissingSignature` without the header or the token;
    /// `MalformedSignature` for a token given more than once; `InvalidSignature` when it does
    /// not match; `Payload` when the body is not a batch of results.
    fn verify_all_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<Vec<SmsEvent>, WebhookError> {
        let _ = now;
        crate::metrics::webhook_verified(NAME, self.check(request))
    }

    fn body_limit(&self) -> usize {
        self.settings.max_body
    }

    /// With Basic credentials, requests that carry some; with a URL token, none (the token is
    /// in the URL, which an [`AnyWebhook`](crate::webhook::AnyWebhook) does not look at: give
    /// Infobip a route of its own).
    fn recognizes(&self, headers: &http::HeaderMap) -> bool {
        matches!(self.auth, Auth::Basic(_)) && BasicCredentials::offered(headers)
    }

    /// With Basic credentials, [`WWW_AUTHENTICATE`]; with a URL token, none.
    fn challenge(&self) -> Option<&'static str> {
        matches!(self.auth, Auth::Basic(_)).then_some(WWW_AUTHENTICATE)
    }
}

/// A number as E.164 when Infobip wrote it as international digits without the `+`; anything
/// else (an alphanumeric sender, a number already with `+`) as it is.
pub(crate) fn e164(value: &str) -> String {
    if (1..=15).contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit()) {
        format!("+{value}")
    } else {
        value.to_owned()
    }
}

/// An Infobip time: RFC 3339, or Infobip's `yyyy-MM-dd'T'HH:mm:ss.SSS+0000` (an offset
/// without a colon).
pub(crate) fn parse_infobip_time(text: &str) -> Option<OffsetDateTime> {
    use time::format_description::well_known::Rfc3339;
    if let Ok(at) = OffsetDateTime::parse(text, &Rfc3339) {
        return Some(at);
    }
    let split = text.len().checked_sub(5)?;
    let (head, offset) = (text.get(..split)?, text.get(split..)?);
    let (sign, digits) = offset.split_at_checked(1)?;
    if !matches!(sign, "+" | "-") || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (hours, minutes) = digits.split_at_checked(2)?;
    OffsetDateTime::parse(&format!("{head}{sign}{hours}:{minutes}"), &Rfc3339).ok()
}

/// The first 16 hex digits of the SHA-256 of `bytes`.
fn short_digest(bytes: &[u8]) -> String {
    sha256_hex_bytes(bytes).iter().take(16).copied().map(char::from).collect()
}

fn payload_error(message: &str) -> WebhookError {
    WebhookError::payload(NAME, message)
}

/// A message id as a dedupe key keeps it: as it is, or digested when long.
fn key_id(id: &str) -> String {
    if id.len() <= MAX_KEY_ID { id.to_owned() } else { short_digest(id.as_bytes()) }
}

/// The event's delivery state of an outcome-level delivery.
fn delivery_status(delivery: Delivery) -> Option<DeliveryStatus> {
    match delivery {
        Delivery::Queued => Some(DeliveryStatus::Queued),
        Delivery::Sent => Some(DeliveryStatus::Sent),
        Delivery::Delivered => Some(DeliveryStatus::Delivered),
        Delivery::Undelivered => Some(DeliveryStatus::Undelivered),
        Delivery::Filtered => Some(DeliveryStatus::Filtered),
        Delivery::Unknown => None,
    }
}

/// Normalizes a verified Infobip callback: one event per result, in order (a delivery report
/// for a result with a `status` object, an inbound message for one with `receivedAt` or
/// `text`, unrecognized otherwise). Each event's raw payload is its own result object, so that
/// its `callbackData` is read from it. A body that is not an object of 1 to [`MAX_RESULTS`]
/// results, or that repeats a member the normalizer reads, is refused whole.
///
/// # Errors
/// `Payload` for a body refused whole.
pub fn parse_all(body: &[u8], detect_keywords: bool) -> Result<Vec<SmsEvent>, WebhookError> {
    let callback = json::read::<Callback<'_>>(body)
        .map_err(|error| payload_error(&json::refusal(&error)))?
        .ok_or_else(|| payload_error("the body is not a JSON object"))?;
    let entries = callback.results.0;
    if entries.is_empty() {
        return Err(payload_error("missing results"));
    }
    if entries.len() > MAX_RESULTS {
        return Err(payload_error("too many results"));
    }
    let mut raws = raw_results(body).into_iter();
    let body_digest = short_digest(body);
    let events = entries
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let raw = raws.next().unwrap_or(Value::Null);
            normalize(entry, raw, index, &body_digest, detect_keywords)
        })
        .collect();
    Ok(events)
}

/// The results as values, for the events' raw payloads (empty when `serde_json::Value` cannot
/// hold the body).
fn raw_results(body: &[u8]) -> Vec<Value> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(mut object)) => match object.remove("results") {
            Some(Value::Array(results)) => results,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The event of one result.
fn normalize(entry: &Entry<'_>, raw: Value, index: usize, body_digest: &str, detect_keywords: bool) -> SmsEvent {
    let other_key = |raw: &Value| {
        if raw.is_null() {
            format!("infobip:other:{body_digest}:{index}")
        } else {
            format!("infobip:other:{}", short_digest(raw.to_string().as_bytes()))
        }
    };
    if entry.status.present() {
        let Some(id) = entry.message_id.non_empty() else {
            let key = other_key(&raw);
            let kind = EventKind::Unrecognized { provider_event_type: "report without messageId".into() };
            return SmsEvent::new(NAME, key, None, Raw::ready(raw), kind);
        };
        let status = &entry.status;
        let (group, status_id) = (number(&status.group_id), number(&status.id));
        let text_of = |n: Option<u32>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
        let key = format!("infobip:dr:{}:{}:{}", key_id(id), text_of(group), text_of(status_id));
        let name = status.name.non_empty();
        let provider_status =
            name.map_or_else(|| format!("group_{}_id_{}", text_of(group), text_of(status_id)), str::to_owned);
        let at = entry.done_at.non_empty().or(entry.sent_at.non_empty()).and_then(parse_infobip_time);
        let kind = match delivery(group, status_id).and_then(delivery_status) {
            Some(state) => {
                let error_code = (state == DeliveryStatus::Undelivered).then(|| {
                    entry
                        .error
                        .name
                        .non_empty()
                        .filter(|name| *name != "NO_ERROR")
                        .map(str::to_owned)
                        .or_else(|| entry.error.id.text().filter(|id| id != "0").map(std::borrow::Cow::into_owned))
                        .unwrap_or_else(|| provider_status.clone())
                });
                let update = StatusUpdate {
                    provider_id: id.to_owned(),
                    provider_status,
                    error_code,
                    from: entry.sender.non_empty().or(entry.from.non_empty()).map(e164),
                    to: entry.to.non_empty().map(e164),
                };
                EventKind::status(state, update)
            }
            None => EventKind::Unrecognized { provider_event_type: format!("report:{provider_status}") },
        };
        return SmsEvent::new(NAME, key, at, Raw::ready(raw), kind);
    }
    if entry.received_at.0.is_some() || entry.text.0.is_some() {
        let (Some(id), Some(from), Some(to)) =
            (entry.message_id.non_empty(), entry.from.non_empty(), entry.to.non_empty())
        else {
            let key = other_key(&raw);
            let kind = EventKind::Unrecognized { provider_event_type: "inbound without messageId, from or to".into() };
            return SmsEvent::new(NAME, key, None, Raw::ready(raw), kind);
        };
        let message = Inbound {
            provider_id: id.to_owned(),
            from: e164(from),
            to: e164(to),
            body: entry.text.0.as_deref().unwrap_or_default().to_owned(),
            media_urls: Vec::new(),
        };
        let at = entry.received_at.non_empty().and_then(parse_infobip_time);
        let kind = EventKind::inbound(message, None, detect_keywords);
        return SmsEvent::new(NAME, format!("infobip:mo:{}", key_id(id)), at, Raw::ready(raw), kind);
    }
    let key = other_key(&raw);
    SmsEvent::new(NAME, key, None, Raw::ready(raw), EventKind::Unrecognized { provider_event_type: "result".into() })
}

/// The first event of a callback, for `testing::webhooks::parse_unverified` (which returns one).
#[cfg(feature = "testing")]
pub(crate) fn parse_first(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    parse_all(body, detect_keywords)?.into_iter().next().ok_or_else(|| payload_error("missing results"))
}

/// The envelope of both callbacks.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Callback<'a> {
    #[serde(borrow)]
    results: Items<Entry<'a>>,
}

/// The members of one result the normalizer reads (delivery report and inbound together).
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Entry<'a> {
    #[serde(borrow)]
    message_id: Text<'a>,
    #[serde(borrow)]
    to: Text<'a>,
    #[serde(borrow)]
    from: Text<'a>,
    #[serde(borrow)]
    sender: Text<'a>,
    #[serde(borrow)]
    text: Text<'a>,
    #[serde(borrow)]
    received_at: Text<'a>,
    #[serde(borrow)]
    sent_at: Text<'a>,
    #[serde(borrow)]
    done_at: Text<'a>,
    #[serde(borrow)]
    status: Object<Status<'a>>,
    #[serde(borrow)]
    error: Object<ErrorObject<'a>>,
}

/// A result's `error`.
#[derive(Default, Deserialize)]
#[serde(default)]
struct ErrorObject<'a> {
    #[serde(borrow)]
    id: Code<'a>,
    #[serde(borrow)]
    name: Text<'a>,
}

#[cfg(test)]
mod tests {
    use http::HeaderMap;

    use super::*;
    use crate::webhook::verify::encode_base64;

    /// A delivery report batch as Infobip documents it ("Receive outbound SMS message report",
    /// one result per message, status and error objects).
    const REPORTS: &str = r#"{"results":[{"bulkId":"BULK-ID-123-xyz","messageId":"sms-sdk-AAAAAAAAAAAAAAAAAAAAAA","to":"41793026727","sentAt":"2026-12-01T10:00:00.000+0000","doneAt":"2026-12-01T10:00:05.000+0000","smsCount":1,"mccMnc":"22801","callbackData":"AAAAAAAAAAAAAAAAAAAAAA","price":{"pricePerMessage":0.01,"currency":"EUR"},"status":{"groupId":3,"groupName":"DELIVERED","id":5,"name":"DELIVERED_TO_HANDSET","description":"Message delivered to handset"},"error":{"groupId":0,"groupName":"OK","id":0,"name":"NO_ERROR","description":"No Error","permanent":false}},{"bulkId":"BULK-ID-123-xyz","messageId":"MESSAGE-ID-2","to":"41793026834","sentAt":"2026-12-01T10:00:00.000+0000","doneAt":"2026-12-01T10:01:00.000+0000","smsCount":1,"status":{"groupId":2,"groupName":"UNDELIVERABLE","id":9,"name":"UNDELIVERABLE_NOT_DELIVERED","description":"Message sent not delivered"},"error":{"groupId":1,"groupName":"HANDSET_ERRORS","id":27,"name":"EC_ABSENT_SUBSCRIBER","description":"Absent Subscriber","permanent":false}}]}"#;
    /// An inbound message as Infobip forwards it (`MO_JSON_2`).
    const INBOUND: &str = r#"{"results":[{"messageId":"817790313235066447","from":"385916242493","to":"385921004026","text":"STOP","cleanText":"","keyword":"STOP","receivedAt":"2026-12-01T10:02:00.000+0000","smsCount":1,"price":{"pricePerMessage":0,"currency":"EUR"},"callbackData":"callbackData"}],"messageCount":1,"pendingMessageCount":0}"#;

    const TOKEN: &str = "0123456789abcdef-token";

    fn request<'a>(url: &'a str, headers: &'a HeaderMap, body: &'a [u8]) -> WebhookRequest<'a> {
        WebhookRequest { method: "POST", url, headers, body }
    }

    #[test]
    fn t299_no_verifier_without_a_secret() {
        assert!(InfobipWebhook::basic("", "password").is_err());
        assert!(InfobipWebhook::basic("user", "").is_err());
        assert!(InfobipWebhook::basic("us:er", "password").is_err());
        assert!(InfobipWebhook::url_token("").is_err());
        assert!(InfobipWebhook::url_token("short").is_err());
        assert!(InfobipWebhook::url_token("0123456789abcdef with space").is_err());
        assert!(InfobipWebhook::url_token("x".repeat(MAX_TOKEN_LEN + 1)).is_err());
        assert!(InfobipWebhook::url_token(TOKEN).is_ok());
        let debug =
            format!("{:?} {:?}", InfobipWebhook::url_token(TOKEN).unwrap(), InfobipWebhook::basic("u", "s3cret-pw"));
        assert!(!debug.contains(TOKEN) && !debug.contains("s3cret-pw") && debug.contains("url_token"), "{debug}");
    }

    #[test]
    fn t299_basic_credentials_are_compared_whole() {
        let verifier = InfobipWebhook::basic("infobip", "s3cret-callback").unwrap();
        let body = REPORTS.as_bytes();
        let with = |value: Option<&str>| {
            let mut headers = HeaderMap::new();
            if let Some(value) = value {
                headers.insert(http::header::AUTHORIZATION, value.parse().unwrap());
            }
            verifier
                .verify_all_at(&request("https://hooks.example/ib", &headers, body), SystemTime::now())
                .map(|e| e.len())
        };
        assert_eq!(with(Some(&format!("Basic {}", encode_base64(b"infobip:s3cret-callback")))), Ok(2));
        let invalid = Err(WebhookError::InvalidSignature { provider: NAME });
        assert_eq!(with(Some(&format!("Basic {}", encode_base64(b"infobip:s3cret-callbacK")))), invalid);
        assert_eq!(with(Some(&format!("Basic {}", encode_base64(b"infobip:s3cret-callback-")))), invalid);
        assert_eq!(with(Some("Bearer s3cret-callback")), invalid);
        assert_eq!(with(None), Err(WebhookError::MissingSignature { provider: NAME }));
    }

    #[test]
    fn t299_the_url_token_is_compared_whole_and_once() {
        let verifier = InfobipWebhook::url_token(TOKEN).unwrap();
        let headers = HeaderMap::new();
        let body = REPORTS.as_bytes();
        let check = |url: &str| verifier.verify_all(&request(url, &headers, body)).map(|e| e.len());
        let good = callback_url_with_token("https://hooks.example/ib?x=1", TOKEN);
        assert_eq!(good, format!("https://hooks.example/ib?x=1&{TOKEN_PARAM}={TOKEN}"));
        assert_eq!(check(&good), Ok(2));
        let invalid = Err(WebhookError::InvalidSignature { provider: NAME });
        assert_eq!(check(&callback_url_with_token("https://hooks.example/ib", "0123456789abcdef-tokeN")), invalid);
        assert_eq!(check(&callback_url_with_token("https://hooks.example/ib", "0123456789abcdef-token-")), invalid);
        assert_eq!(check("https://hooks.example/ib"), Err(WebhookError::MissingSignature { provider: NAME }));
        assert_eq!(
            check(&format!("{good}&{TOKEN_PARAM}={TOKEN}")),
            Err(WebhookError::MalformedSignature { provider: NAME })
        );
        // The token in the fragment or under another name is not the token.
        assert_eq!(
            check(&format!("https://hooks.example/ib#{TOKEN_PARAM}={TOKEN}")),
            Err(WebhookError::MissingSignature { provider: NAME })
        );
        let small = InfobipWebhook::url_token(TOKEN).unwrap().max_body_bytes(10);
        assert!(matches!(small.verify_all(&request(&good, &headers, body)), Err(WebhookError::BodyTooLarge { .. })));
        assert_eq!(callback_url_with_token("https://h/p?#f", "t"), format!("https://h/p?{TOKEN_PARAM}=t#f"));
    }

    #[test]
    fn t299_a_batch_becomes_one_event_per_result() {
        let events = parse_all(REPORTS.as_bytes(), true).unwrap();
        assert_eq!(events.len(), 2);
        let EventKind::Delivered(update) = &events[0].kind else { panic!("{:?}", events[0]) };
        assert_eq!(update.provider_id, "sms-sdk-AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!((update.provider_status.as_str(), update.error_code.as_deref()), ("DELIVERED_TO_HANDSET", None));
        assert_eq!(update.to.as_deref(), Some("+41793026727"));
        assert_eq!(events[0].dedupe_key, "infobip:dr:sms-sdk-AAAAAAAAAAAAAAAAAAAAAA:3:5");
        assert!(events[0].occurred_at.is_some());
        assert_eq!(events[0].raw()["callbackData"], "AAAAAAAAAAAAAAAAAAAAAA");
        let EventKind::Undelivered(update) = &events[1].kind else { panic!("{:?}", events[1]) };
        assert_eq!(update.error_code.as_deref(), Some("EC_ABSENT_SUBSCRIBER"));
        assert_eq!(events[1].dedupe_key, "infobip:dr:MESSAGE-ID-2:2:9");
        for event in &events {
            assert!(!event.dedupe_key.contains("41793026"), "no number in the key: {}", event.dedupe_key);
        }
        assert_eq!(parse_all(REPORTS.as_bytes(), true).unwrap()[1].dedupe_key, events[1].dedupe_key);
    }

    #[test]
    fn t299_statuses_normalize_by_group_and_id() {
        let rows = [
            (1, 26, "message.queued"),
            (1, 7, "message.sent"),
            (1, 3, "message.sent"),
            (3, 2, "message.sent"),
            (3, 5, "message.delivered"),
            (2, 4, "message.undelivered"),
            (4, 15, "message.undelivered"),
            (5, 12, "message.undelivered"),
            (6, 1, "unrecognized"),
        ];
        for (group, id, kind) in rows {
            let body =
                format!(r#"{{"results":[{{"messageId":"m","status":{{"groupId":{group},"id":{id},"name":"N"}}}}]}}"#);
            let events = parse_all(body.as_bytes(), true).unwrap();
            assert_eq!(events[0].type_name(), kind, "{group} {id}");
        }
        // The group decides, never the name.
        let named = r#"{"results":[{"messageId":"m","status":{"groupId":1,"id":26,"name":"DELIVERED_TO_HANDSET"}}]}"#;
        assert_eq!(parse_all(named.as_bytes(), true).unwrap()[0].type_name(), "message.queued");
    }

    #[test]
    fn t299_inbound_messages_and_keywords() {
        let events = parse_all(INBOUND.as_bytes(), true).unwrap();
        let EventKind::OptedOut(stop) = &events[0].kind else { panic!("{:?}", events[0]) };
        assert_eq!((stop.from.as_str(), stop.to.as_str()), ("+385916242493", "+385921004026"));
        assert_eq!(events[0].dedupe_key, "infobip:mo:817790313235066447");
        assert!(events[0].occurred_at.is_some());
        let events = parse_all(INBOUND.as_bytes(), false).unwrap();
        assert!(matches!(&events[0].kind, EventKind::Received(message) if message.body == "STOP"));
        let no_from = INBOUND.replace(r#""from":"385916242493","#, "");
        assert_eq!(parse_all(no_from.as_bytes(), true).unwrap()[0].type_name(), "unrecognized");
    }

    #[test]
    fn t299_bodies_that_are_not_batches_are_refused_whole() {
        for body in [
            "{}",
            r#"{"results":[]}"#,
            r#"{"results":{}}"#,
            "[]",
            "not json",
            r#"{"results":[{"messageId":"a","messageId":"b","status":{"groupId":3}}]}"#,
        ] {
            assert!(matches!(parse_all(body.as_bytes(), true), Err(WebhookError::Payload { .. })), "{body}");
        }
        let many = format!(r#"{{"results":[{}]}}"#, vec!["{}"; MAX_RESULTS + 1].join(","));
        assert!(matches!(parse_all(many.as_bytes(), true), Err(WebhookError::Payload { .. })));
        // A result of another shape is unrecognized, with a stable key.
        let odd = r#"{"results":[{"foo":1},"x"]}"#;
        let events = parse_all(odd.as_bytes(), true).unwrap();
        assert_eq!(events.len(), 2);
        assert!(events.iter().all(|e| e.type_name() == "unrecognized"));
        assert_ne!(events[0].dedupe_key, events[1].dedupe_key);
        assert_eq!(parse_all(odd.as_bytes(), true).unwrap()[0].dedupe_key, events[0].dedupe_key);
        // A long id is digested in the key.
        let long = format!(r#"{{"results":[{{"messageId":"{}","status":{{"groupId":3,"id":5}}}}]}}"#, "m".repeat(300));
        assert!(parse_all(long.as_bytes(), true).unwrap()[0].dedupe_key.len() < 60);
    }

    #[test]
    fn infobip_times_parse() {
        assert!(parse_infobip_time("2026-12-01T10:00:05.000+0000").is_some());
        assert!(parse_infobip_time("2026-12-01T10:00:05.000+01:00").is_some());
        assert!(parse_infobip_time("2026-12-01T10:00:05Z").is_some());
        assert_eq!(parse_infobip_time("x"), None);
        assert_eq!(parse_infobip_time("2026-12-01T10:00:05.000+00a0"), None);
        assert_eq!(e164("41793026727"), "+41793026727");
        assert_eq!(e164("InfoSMS"), "InfoSMS");
    }
}
