//! Bandwidth message callbacks: HTTP Basic credentials configured on the Messaging application
//! (`InboundCallbackCreds`, `OutboundCallbackCreds`), checked in constant time; then every event
//! of the JSON array Bandwidth posts (`message-sending`, `message-sent`, `message-delivered`,
//! `message-failed`, `message-received`, …).
//!
//! **What Basic credentials prove.** Only that the sender knows the user and password set on
//! the application: nothing of what it sent (there is no signature over the body, no timestamp,
//! no nonce), and anyone who sees one callback in clear can replay or forge others. Serve the
//! callback URL over HTTPS only, use a long random password for it alone, and dedupe events by
//! their keys. Bandwidth documents no HMAC for messaging callbacks.
//!
//! Whether Bandwidth sends the credentials with the first request or only after a `401`
//! challenge is not documented: answer a callback without an `Authorization` header
//! ([`WebhookError::MissingSignature`]) with `401` and `WWW-Authenticate:`
//! [`WWW_AUTHENTICATE`] (the verifier's [`challenge`](WebhookVerifier::challenge): the tower
//! layer, the axum extractors and `sms-sdk serve` do), which works either way.
//!
//! A callback carries several events: take them all with
//! [`WebhookVerifier::verify_all_at`] (the `tower` layer, the `axum` module's `VerifiedAll` and
//! the command's `serve` do); [`WebhookVerifier::verify_at`] refuses a callback of more than one.

use std::time::SystemTime;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

use super::NAME;
use crate::digest::sha256_hex_bytes;
use crate::error::Error;
use crate::json::{self, Code, Items, Object, Text};
use crate::redact::Secret;
use crate::webhook::event::{DeliveryStatus, EventKind, Inbound, StatusUpdate};
use crate::webhook::verify::{BasicCredentials, Settings, only_event, parse_time};
use crate::webhook::{Raw, SmsEvent, WebhookError, WebhookRequest, WebhookVerifier};

/// The `WWW-Authenticate` value to answer a callback that came without credentials.
pub const WWW_AUTHENTICATE: &str = "Basic realm=\"bandwidth-callbacks\"";

/// The most events one callback may carry; more is a payload error.
pub const MAX_EVENTS: usize = 1000;
// A longer array is refused while it is read (`json::Items`), before it is held whole.
const _: () = assert!(MAX_EVENTS <= json::MAX_ITEMS);

/// The longest message id read (Bandwidth's are about 30 characters, or UUIDs).
const MAX_ID: usize = 256;

/// The longest event type kept in an unrecognized event.
const MAX_TYPE: usize = 64;

/// The `Authorization` header Bandwidth sends with the application's callback credentials:
/// `Basic base64(user:password)` (for signed test requests and the emulator).
#[must_use]
pub fn basic_header(user: &str, password: &str) -> String {
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}")))
}

/// Verifies and normalizes Bandwidth's message callbacks. Its `Debug` never shows the password.
#[derive(Clone)]
pub struct BandwidthWebhook {
    /// The application's callback credentials.
    expected: BasicCredentials,
    settings: Settings,
}

impl std::fmt::Debug for BandwidthWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BandwidthWebhook")
            .field("auth", &"basic")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl BandwidthWebhook {
    /// A verifier of callbacks that carry the application's callback credentials (HTTP Basic).
    /// There is no verifier without them: an unauthenticated callback proves nothing.
    ///
    /// # Errors
    /// `Configuration` when the user or the password is empty, or the user holds a `:`.
    pub fn basic(user: &str, password: impl Into<Secret>) -> Result<Self, Error> {
        let expected = BasicCredentials::new("Bandwidth", user, &password.into())?;
        Ok(Self { expected, settings: Settings::default() })
    }

    crate::webhook::verify::verifier_options!(common);
}

impl WebhookVerifier for BandwidthWebhook {
    fn provider(&self) -> &'static str {
        NAME
    }

    /// The callback's one event; a callback of several is a payload error (take them all with
    /// [`verify_all_at`](WebhookVerifier::verify_all_at)).
    fn verify_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<SmsEvent, WebhookError> {
        only_event(NAME, self.verify_all_at(request, now)?)
    }

    /// Verifies a callback and returns its events, in order. `now` is unused: Basic credentials
    /// carry no time.
    ///
    /// # Errors
    /// `BodyTooLarge` first; `MissingSignature` without an `Authorization` header (answer `401`
    /// with [`WWW_AUTHENTICATE`]); `InvalidSignature` for other credentials or scheme; a payload
    /// error when the body is not a non-empty JSON array (of at most [`MAX_EVENTS`]) of events
    /// that each name a `type` (and, for message events, a `message.id`).
    fn verify_all_at(&self, request: &WebhookRequest<'_>, now: SystemTime) -> Result<Vec<SmsEvent>, WebhookError> {
        let _ = now;
        crate::metrics::webhook_verified(NAME, self.check(request))
    }

    fn body_limit(&self) -> usize {
        self.settings.max_body
    }

    /// Requests with Basic credentials.
    fn recognizes(&self, headers: &http::HeaderMap) -> bool {
        BasicCredentials::offered(headers)
    }

    /// [`WWW_AUTHENTICATE`].
    fn challenge(&self) -> Option<&'static str> {
        Some(WWW_AUTHENTICATE)
    }
}

impl BandwidthWebhook {
    fn check(&self, request: &WebhookRequest<'_>) -> Result<Vec<SmsEvent>, WebhookError> {
        self.settings.check_size(NAME, request)?;
        self.expected.check(NAME, request.headers)?;
        parse_all(request.body, self.settings.detect_keywords)
    }
}

/// One event of a callback: the members the normalizer reads.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Callback<'a> {
    #[serde(borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(borrow)]
    time: Text<'a>,
    #[serde(borrow)]
    to: Text<'a>,
    #[serde(borrow, rename = "errorCode")]
    error_code: Code<'a>,
    #[serde(borrow)]
    message: Object<Message<'a>>,
}

/// The `message` of an event.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Message<'a> {
    #[serde(borrow)]
    id: Text<'a>,
    #[serde(borrow)]
    from: Text<'a>,
    #[serde(borrow)]
    owner: Text<'a>,
    #[serde(borrow)]
    text: Text<'a>,
}

/// Normalizes a verified callback: every event of its array, in order (a member an event reads
/// that it repeats refuses the whole body).
pub(crate) fn parse_all(body: &[u8], detect_keywords: bool) -> Result<Vec<SmsEvent>, WebhookError> {
    let text = std::str::from_utf8(body).map_err(|_| payload_error("the body is not JSON"))?;
    if !text.trim_start().starts_with('[') {
        return Err(payload_error("the body is not an array of events"));
    }
    let Items(events) =
        serde_json::from_str::<Items<Callback<'_>>>(text).map_err(|error| payload_error(&json::refusal(&error)))?;
    if events.is_empty() {
        return Err(payload_error("no events"));
    }
    if events.len() > MAX_EVENTS {
        return Err(payload_error("too many events"));
    }
    // Each event's own payload, for `SmsEvent::raw` (`null` where `Value` cannot hold it).
    let mut raws = serde_json::from_str::<Vec<Value>>(text).unwrap_or_default().into_iter();
    events.iter().map(|event| normalize(event, raws.next().unwrap_or(Value::Null), detect_keywords)).collect()
}

/// The first event of a verified callback (for `testing::webhooks::parse_unverified`, which
/// returns one).
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub(crate) fn parse(body: &[u8], detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    parse_all(body, detect_keywords)?.into_iter().next().ok_or_else(|| payload_error("no events"))
}

/// One event, normalized.
fn normalize(event: &Callback<'_>, raw: Value, detect_keywords: bool) -> Result<SmsEvent, WebhookError> {
    let kind = event.kind.non_empty().ok_or_else(|| payload_error("missing type"))?;
    let time = event.time.non_empty().unwrap_or_default();
    let at = parse_time(time);
    let to = event.to.non_empty();
    let message = &*event.message;
    let id = || {
        message
            .id
            .non_empty()
            .filter(|id| id.len() <= MAX_ID)
            .ok_or_else(|| payload_error("missing message.id (or longer than 256 bytes)"))
    };
    // Which event of which message, when (and for whom): no number in clear.
    let key =
        |id: &str| format!("{NAME}:{kind}:{id}:{}", short_digest(format!("{time}\n{}", to.unwrap_or("-")).as_bytes()));
    let status = match kind {
        "message-sending" => Some(DeliveryStatus::Queued),
        "message-sent" => Some(DeliveryStatus::Sent),
        "message-delivered" => Some(DeliveryStatus::Delivered),
        "message-failed" => Some(DeliveryStatus::Undelivered),
        _ => None,
    };
    if let Some(status) = status {
        let id = id()?;
        let error_code = if status == DeliveryStatus::Undelivered {
            event.error_code.text().map(std::borrow::Cow::into_owned)
        } else {
            None
        };
        let update = StatusUpdate {
            provider_id: id.to_owned(),
            provider_status: kind.to_owned(),
            error_code,
            from: message.from.non_empty().map(str::to_owned),
            to: to.map(str::to_owned),
        };
        return Ok(SmsEvent::new(NAME, key(id), at, Raw::ready(raw), EventKind::status(status, update)));
    }
    if kind == "message-received" {
        let id = id()?;
        let (Some(from), Some(to)) = (message.from.non_empty(), to.or_else(|| message.owner.non_empty())) else {
            return Err(payload_error("missing message.from or to"));
        };
        let media_urls = raw
            .get("message")
            .and_then(|m| m.get("media"))
            .and_then(Value::as_array)
            .map(|media| media.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default();
        let inbound = Inbound {
            provider_id: id.to_owned(),
            from: from.to_owned(),
            to: to.to_owned(),
            body: message.text.0.as_deref().unwrap_or_default().to_owned(),
            media_urls,
        };
        let key = key(id);
        return Ok(SmsEvent::new(NAME, key, at, Raw::ready(raw), EventKind::inbound(inbound, None, detect_keywords)));
    }
    // `message-read` (RBM), location and suggestion responses, and types to come.
    let id = message.id.non_empty().unwrap_or_default();
    let key =
        format!("{NAME}:other:{}", short_digest(format!("{kind}\n{id}\n{time}\n{}", to.unwrap_or("-")).as_bytes()));
    let provider_event_type = kind.chars().take(MAX_TYPE).collect();
    Ok(SmsEvent::new(NAME, key, at, Raw::ready(raw), EventKind::Unrecognized { provider_event_type }))
}

/// The first 16 hex digits of the SHA-256 of `bytes`: the time and recipient of an event in its
/// dedupe key, without the number.
fn short_digest(bytes: &[u8]) -> String {
    sha256_hex_bytes(bytes).iter().take(16).copied().map(char::from).collect()
}

fn payload_error(message: &str) -> WebhookError {
    WebhookError::payload(NAME, message)
}

#[cfg(test)]
mod tests {
    use http::HeaderMap;

    use super::*;

    /// Bandwidth's documented callbacks (API specification: `statusCallback` and `inboundCallback`
    /// examples), each as the one-event array Bandwidth posts.
    const DELIVERED: &str = r#"[{"type":"message-delivered","time":"2024-09-14T18:20:11.160744Z","description":"Message delivered to handset.","to":"+12345678902","message":{"id":"14762070468292kw2fuqty55yp2b2","time":"2024-09-14T18:20:11.160744Z","to":["+12345678902"],"from":"+12345678901","text":"","applicationId":"93de2206-9669-4e07-948d-329f4b722ee2","owner":"+12345678902","direction":"out","segmentCount":1,"tag":"AAAAAAAAAAAAAAAAAAAAAA"}}]"#;
    const FAILED: &str = r#"[{"type":"message-failed","time":"2024-12-18T16:51:27.704450Z","description":"forbidden to country","to":"+52345678903","errorCode":4432,"message":{"id":"14762070468292kw2fuqty55yp2b2","time":"2024-12-18T16:51:27.704450Z","to":["+52345678903"],"from":"+12345678901","text":"","applicationId":"93de2206-9669-4e07-948d-329f4b722ee2","owner":"+12345678901","direction":"out","segmentCount":1}}]"#;
    const RECEIVED: &str = r#"[{"time":"2025-01-06T15:43:35.502180Z","type":"message-received","to":"+12345678902","description":"Incoming message received","message":{"id":"14762070468292kw2fuqty55yp2b2","owner":"+12345678902","applicationId":"93de2206-9669-4e07-948d-329f4b722ee2","time":"2025-01-06T15:43:34.000000Z","segmentCount":1,"direction":"in","to":["+12345678902"],"from":"+12345678901","text":"STOP"}}]"#;

    fn request<'a>(headers: &'a HeaderMap, body: &'a [u8]) -> WebhookRequest<'a> {
        WebhookRequest { method: "POST", url: "https://hooks.example/bandwidth", headers, body }
    }

    fn with_auth(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::AUTHORIZATION, value.parse().unwrap());
        headers
    }

    #[test]
    fn t307_basic_credentials_are_required_and_compared_whole() {
        assert!(BandwidthWebhook::basic("", "password").is_err());
        assert!(BandwidthWebhook::basic("user", "").is_err());
        assert!(BandwidthWebhook::basic("us:er", "password").is_err());
        let verifier = BandwidthWebhook::basic("bandwidth", "s3cret-callback").unwrap();
        let body = DELIVERED.as_bytes();
        let verify =
            |headers: &HeaderMap| verifier.verify_all_at(&request(headers, body), SystemTime::now()).map(|e| e.len());
        assert_eq!(verify(&with_auth(&basic_header("bandwidth", "s3cret-callback"))), Ok(1));
        assert_eq!(verify(&with_auth(&basic_header("bandwidth", "s3cret-callback").replace("Basic", "basic"))), Ok(1));
        let invalid = Err(WebhookError::InvalidSignature { provider: NAME });
        for wrong in [
            basic_header("bandwidth", "s3cret-callbacK"),
            basic_header("bandwidth", "s3cret-callback-"),
            basic_header("bandwidtH", "s3cret-callback"),
            "Bearer s3cret-callback".to_owned(),
            basic_header("bandwidth", "s3cret-callback").replace("Basic ", "Digest "),
            "Basic".to_owned(),
        ] {
            assert_eq!(verify(&with_auth(&wrong)), invalid, "{wrong}");
        }
        assert_eq!(verify(&HeaderMap::new()), Err(WebhookError::MissingSignature { provider: NAME }));
        let small = BandwidthWebhook::basic("bandwidth", "s3cret-callback").unwrap().max_body_bytes(10);
        assert!(matches!(
            small.verify_all_at(&request(&HeaderMap::new(), body), SystemTime::now()),
            Err(WebhookError::BodyTooLarge { .. })
        ));
        let debug = format!("{verifier:?}");
        assert!(!debug.contains("s3cret") && debug.contains("basic"), "{debug}");
    }

    #[test]
    fn t307_status_events_with_their_codes_keys_and_reference() {
        let events = parse_all(DELIVERED.as_bytes(), true).unwrap();
        let [event] = events.as_slice() else { panic!() };
        let EventKind::Delivered(update) = &event.kind else { panic!("{event:?}") };
        assert_eq!(update.provider_id, "14762070468292kw2fuqty55yp2b2");
        assert_eq!((update.provider_status.as_str(), update.error_code.as_deref()), ("message-delivered", None));
        assert_eq!(update.to.as_deref(), Some("+12345678902"));
        assert!(event.occurred_at.is_some());
        assert!(
            event.dedupe_key.starts_with("bandwidth:message-delivered:14762070468292kw2fuqty55yp2b2:"),
            "{}",
            event.dedupe_key
        );
        assert!(!event.dedupe_key.contains("2345678902"), "{}", event.dedupe_key);
        assert_eq!(parse_all(DELIVERED.as_bytes(), true).unwrap()[0].dedupe_key, event.dedupe_key);
        assert_eq!(event.raw()["message"]["tag"], "AAAAAAAAAAAAAAAAAAAAAA");

        let failed = parse(FAILED.as_bytes(), true).unwrap();
        let EventKind::Undelivered(update) = &failed.kind else { panic!("{failed:?}") };
        assert_eq!(update.error_code.as_deref(), Some("4432"));
        for (kind, name) in [("message-sending", "message.queued"), ("message-sent", "message.sent")] {
            let body = DELIVERED.replace("message-delivered", kind);
            assert_eq!(parse(body.as_bytes(), true).unwrap().type_name(), name, "{kind}");
        }
        // Several events in one callback, each its own key; the same message's other status
        // has another.
        let inner = |s: &str| s.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap().to_owned();
        let both = format!("[{},{}]", inner(DELIVERED), inner(FAILED));
        let events = parse_all(both.as_bytes(), true).unwrap();
        assert_eq!(events.len(), 2);
        assert_ne!(events[0].dedupe_key, events[1].dedupe_key);
        assert_eq!(events[1].raw()["errorCode"], 4432);
    }

    #[test]
    fn t307_inbound_opt_outs_and_unrecognized_events() {
        let event = parse(RECEIVED.as_bytes(), true).unwrap();
        assert!(matches!(event.kind, EventKind::OptedOut(_)), "{event:?}");
        let event = parse(RECEIVED.as_bytes(), false).unwrap();
        let EventKind::Received(message) = &event.kind else { panic!("{event:?}") };
        assert_eq!(
            (message.from.as_str(), message.to.as_str(), message.body.as_str()),
            ("+12345678901", "+12345678902", "STOP")
        );
        let read = RECEIVED.replace("message-received", "message-read");
        let event = parse(read.as_bytes(), true).unwrap();
        assert!(
            matches!(&event.kind, EventKind::Unrecognized { provider_event_type } if provider_event_type == "message-read")
        );
        let no_from = RECEIVED.replace(r#""from":"+12345678901","#, "");
        assert_eq!(parse(no_from.as_bytes(), true).unwrap_err(), payload_error("missing message.from or to"));
        for body in [
            "{}",
            "[]",
            "not json",
            r#"[{"type":""}]"#,
            r"[1]",
            r#"[{"type":"message-sent"}]"#,
            r#"[{"type":"message-sent","type":"x","message":{"id":"m"}}]"#,
            r#"[{"type":"message-sent","message":{"id":"m"}}] x"#,
        ] {
            assert!(matches!(parse_all(body.as_bytes(), true), Err(WebhookError::Payload { .. })), "{body}");
        }
        let many = format!("[{}]", vec![r#"{"type":"x"}"#; MAX_EVENTS + 1].join(","));
        assert_eq!(parse_all(many.as_bytes(), true).unwrap_err(), payload_error("an array of more than 1000 elements"));
    }

    /// The keys and values of Bandwidth callbacks, for generated bodies.
    const KEYS: [&str; 10] = ["type", "time", "to", "errorCode", "message", "id", "from", "owner", "text", "media"];
    const LEAVES: [&str; 14] = [
        "\"message-delivered\"",
        "\"message-failed\"",
        "\"message-received\"",
        "\"+15005550006\"",
        "\"stop\"",
        "\"\"",
        "\"2026-12-01T10:00:00Z\"",
        "4432",
        "1.5",
        "1e400",
        "null",
        "true",
        "\"\\ud800\"",
        "[]",
    ];

    #[test]
    fn generated_and_damaged_bodies_are_events_or_payload_errors() {
        use crate::json::random::{damage, random_json};
        let mut rng = fastrand::Rng::with_seed(31);
        let check = |body: &[u8]| match parse_all(body, true) {
            Ok(events) => assert!(!events.is_empty() && events.len() <= MAX_EVENTS),
            Err(WebhookError::Payload { .. }) => {}
            Err(other) => panic!("{other:?}"),
        };
        for _ in 0..4_000 {
            let mut member = String::new();
            let depth = rng.usize(0..4);
            random_json(&mut rng, depth, &KEYS, &LEAVES, &mut member);
            let key = KEYS[rng.usize(..KEYS.len())];
            let body = format!(
                r#"[{{"type":"message-failed","time":"2026-12-01T10:00:00Z","to":"+1","errorCode":4432,"message":{{"id":"m","from":"+2","{key}":{member}}}}},{{"{key}":{member},"type":"message-received","to":"+1","message":{{"id":"m","from":"+2","text":"stop"}}}}]"#
            );
            check(body.as_bytes());
            check(&damage(&mut rng, body.into_bytes()));
            check(member.as_bytes());
        }
    }
}
