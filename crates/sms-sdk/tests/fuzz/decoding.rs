//! Hostile forms, JSON and provider responses: the form decoder (through the form normalizers,
//! as a POST body and as a GET query), the JSON decoders (the JSON normalizers), and every
//! provider's response interpretation (Twilio, Telnyx, Plivo, Vonage, Sinch, AWS, Infobip,
//! Bandwidth), on generated structured inputs mutated byte by byte.

use std::time::{Duration, SystemTime};

use http::{HeaderMap, HeaderValue};
use sms_sdk::Outcome;
use sms_sdk::error::ProviderError;
#[cfg(feature = "aws")]
use sms_sdk::provider::aws;
#[cfg(feature = "bandwidth")]
use sms_sdk::provider::bandwidth;
#[cfg(feature = "infobip")]
use sms_sdk::provider::infobip;
#[cfg(feature = "sinch")]
use sms_sdk::provider::sinch;
use sms_sdk::provider::{plivo, telnyx, twilio, vonage};
use sms_sdk::testing::webhooks::{SignedRequest, parse_unverified};
use sms_sdk::webhook::{DEFAULT_MAX_PARAMS, SmsEvent, WebhookError};

use super::GLOBAL;
use super::engine::{Fuzz, TOKENS, assert_linear, max_len, mutate, text};
use super::webhooks::AUTHENTIC;

/// Keys the form normalizers read, and some they do not.
const FORM_KEYS: &[&str] = &[
    "MessageSid",
    "SmsSid",
    "MessageStatus",
    "SmsStatus",
    "Body",
    "From",
    "To",
    "NumMedia",
    "MediaUrl0",
    "MediaUrl1",
    "MediaUrl01",
    "MediaUrl18446744073709551616",
    "OptOutType",
    "ErrorCode",
    "MessageUUID",
    "Status",
    "Text",
    "Type",
    "Media0",
    "Media9",
    "",
    "a",
    "%4D%65ssageSid",
    "Body%00",
    "K\u{e9}y",
];

const FORM_VALUES: &[&str] = &[
    "",
    "SM1",
    "delivered",
    "received",
    "undelivered",
    "30007",
    "STOP",
    "stop ",
    "HELP",
    "+14155550123",
    "18446744073709551615",
    "99999999999999999999999",
    "-1",
    "%",
    "%2",
    "%zz",
    "%FF%FE",
    "%E2%82%AC",
    "a+b",
    "==",
    "\u{1F600}",
];

/// A form of random pairs from the tables (with repeats), then mutated byte by byte.
fn form(rng: &mut fastrand::Rng) -> Vec<u8> {
    let count = if rng.u8(..16) == 0 { rng.usize(..2048) } else { rng.usize(..24) };
    let mut form = Vec::new();
    for i in 0..count {
        if i > 0 {
            form.extend_from_slice(if rng.u8(..16) == 0 { b"&&" } else { b"&" });
        }
        form.extend_from_slice(FORM_KEYS[rng.usize(..FORM_KEYS.len())].as_bytes());
        if rng.u8(..8) != 0 {
            form.push(b'=');
            form.extend_from_slice(FORM_VALUES[rng.usize(..FORM_VALUES.len())].as_bytes());
        }
    }
    let limit = max_len(rng, 1024 * 1024);
    if rng.bool() {
        mutate(rng, &mut form, b"&MediaUrl2=x&NumMedia=3", limit);
    }
    form
}

/// A generated form and where it is sent.
#[derive(Debug)]
struct FormCase {
    provider: &'static str,
    request: SignedRequest,
    /// The form as the decoder gets it (raw bytes: a body need not be UTF-8).
    form: Vec<u8>,
}

/// Fuzzes the form decoding behind the form normalizers: parameters are counted before they
/// are decoded (more than the limit is refused), and an accepted form's fields are exactly the
/// first decoded value of each name.
pub(crate) fn fuzz_forms(name: &'static str, ci: u64) {
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        |rng| {
            let provider = if rng.bool() { "twilio" } else { "plivo" };
            let form = form(rng);
            let request = if rng.u8(..4) == 0 {
                SignedRequest::new("GET", &format!("https://example.com/hook?{}", text(&form)), Vec::new())
            } else {
                SignedRequest::new("POST", "https://example.com/hook", form)
            };
            // A GET's form is the URL's query, which ends at a fragment (`#`).
            let form = if request.method == "GET" {
                request.url.split_once('?').unwrap().1.split('#').next().unwrap().as_bytes().to_vec()
            } else {
                request.body.clone()
            };
            FormCase { provider, request, form }
        },
        |case| case.request.url.len() + case.request.body.len(),
        |case| parse_unverified(case.provider, &case.request.as_request()),
        |case, result| {
            let params: Vec<(String, String)> =
                url::form_urlencoded::parse(&case.form).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
            let over = params.len() > DEFAULT_MAX_PARAMS;
            match result {
                Err(WebhookError::TooManyParameters { .. }) if over => {}
                _ if over => return Err(format!("{} parameters were decoded: {result:?}", params.len())),
                Err(WebhookError::Payload { .. }) => {}
                Err(error) => return Err(format!("an unexpected error: {error:?}")),
                Ok(event) => same_fields(event, &params)?,
            }
            Ok(AUTHENTIC)
        },
    );
    let _exclusive = super::engine::exclusive();
    let make = |n: usize| {
        let form = format!("MessageSid=SM1&MessageStatus=sent&Body={}&To={}", "%E2%82%AC+".repeat(n), "1".repeat(n));
        SignedRequest::new("POST", "https://example.com/hook", form)
    };
    let parse = |request: &SignedRequest| {
        let _ = parse_unverified("twilio", &request.as_request());
    };
    assert_linear(&format!("{name}: long encoded values"), 10_000, make, parse);
}

/// Every field of an event's `raw` is the first decoded value of its name.
fn same_fields(event: &SmsEvent, params: &[(String, String)]) -> Result<(), String> {
    let raw = event.raw().as_object().ok_or("raw is not an object")?;
    for (key, value) in raw {
        let first = params.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        if first != value.as_str() {
            return Err(format!("raw {key} is {value:?}, the form's first value is {first:?}"));
        }
    }
    if raw.len() != params.iter().map(|(k, _)| k).collect::<std::collections::HashSet<_>>().len() {
        return Err(format!("raw has {} fields for the form's distinct names", raw.len()));
    }
    Ok(())
}

/// Object keys the JSON normalizers and response readers read (on some path), and some they do
/// not.
const JSON_KEYS: &[&str] = &[
    "data",
    "payload",
    "event_type",
    "id",
    "occurred_at",
    "from",
    "to",
    "phone_number",
    "status",
    "text",
    "media",
    "url",
    "errors",
    "code",
    "message_uuid",
    "timestamp",
    "error",
    "type",
    "title",
    // Provider responses (AWS JSON 1.0).
    "MessageId",
    "__type",
    "Message",
    "Reason",
    // Provider responses and callbacks (Infobip, Bandwidth).
    "messages",
    "messageId",
    "groupId",
    "name",
    "description",
    "errorCode",
    "requestError",
    "serviceException",
    "fieldErrors",
    "fieldName",
    "results",
    "x",
    "",
];

const JSON_STRINGS: &[&str] = &[
    "message.received",
    "message.finalized",
    "message.sent",
    "delivered",
    "delivery_failed",
    "rejected",
    "submitted",
    "STOP",
    "+14155550123",
    "447700900000",
    "2026-10-08T12:00:00.000+00:00",
    "9999-12-31T23:59:60Z",
    "https://x/#1250",
    "40002",
    "\\ud800",
    "\\u0000",
    "\\\"",
    "\u{1F600}",
];

/// A random JSON text: objects with the normalizers' keys (repeated sometimes), arrays, edge
/// numbers and escaped strings; nested up to `depth`.
fn json(rng: &mut fastrand::Rng, depth: usize, out: &mut Vec<u8>) {
    let choice = if depth == 0 { rng.u8(4..10) } else { rng.u8(..10) };
    match choice {
        0..=2 => {
            out.push(b'{');
            for i in 0..rng.usize(..6) {
                if i > 0 {
                    out.push(b',');
                }
                out.push(b'"');
                out.extend_from_slice(JSON_KEYS[rng.usize(..JSON_KEYS.len())].as_bytes());
                out.extend_from_slice(b"\":");
                json(rng, depth - 1, out);
            }
            out.push(b'}');
        }
        3 => {
            out.push(b'[');
            for i in 0..rng.usize(..4) {
                if i > 0 {
                    out.push(b',');
                }
                json(rng, depth - 1, out);
            }
            out.push(b']');
        }
        4..=6 => {
            out.push(b'"');
            out.extend_from_slice(JSON_STRINGS[rng.usize(..JSON_STRINGS.len())].as_bytes());
            out.push(b'"');
        }
        7 => out.extend_from_slice(
            ["0", "-0", "1e999999", "18446744073709551616", "-1.5e-400", "1700000000"][rng.usize(..6)].as_bytes(),
        ),
        8 => out.extend_from_slice(if rng.bool() { b"null" } else { b"true" }),
        _ => out.extend_from_slice(TOKENS[rng.usize(..TOKENS.len())]),
    }
}

/// A JSON body: generated (sometimes deeply nested), then mutated half the time.
fn json_body(rng: &mut fastrand::Rng) -> Vec<u8> {
    let mut body = Vec::new();
    match rng.u8(..64) {
        0 => {
            let n = rng.usize(..100_000);
            body.extend(std::iter::repeat_n(b'[', n));
            body.extend(std::iter::repeat_n(b']', n));
        }
        1 => {
            let n = rng.usize(..20_000);
            body.extend_from_slice(br#"{"data":{"payload":{"to":["#);
            for i in 0..n {
                body.extend_from_slice(if i == 0 { b"" } else { b"," });
                body.extend_from_slice(br#"{"phone_number":"+1","status":"sent"}"#);
            }
            body.extend_from_slice(b"]}}}");
        }
        _ => {
            let depth = rng.usize(1..=6);
            json(rng, depth, &mut body);
        }
    }
    if rng.bool() {
        let limit = max_len(rng, 1024 * 1024);
        mutate(rng, &mut body, br#"{"message_uuid":"u","status":"delivered","data":{"id":"e"}}"#, limit);
    }
    body
}

/// Fuzzes the JSON decoding of the JSON normalizers (Telnyx, Vonage): duplicate keys on read
/// paths, deep nesting, edge numbers, escapes, and bytes that are not JSON.
pub(crate) fn fuzz_json(name: &'static str, ci: u64) {
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        |rng| {
            let provider = if rng.bool() { "telnyx" } else { "vonage" };
            (provider, SignedRequest::new("POST", "https://example.com/hook", json_body(rng)))
        },
        |(_, request)| request.body.len(),
        |(provider, request)| parse_unverified(provider, &request.as_request()),
        |_, result| match result {
            Ok(_) | Err(WebhookError::Payload { .. }) => Ok(AUTHENTIC),
            Err(error) => Err(format!("an unexpected error: {error:?}")),
        },
    );
    let _exclusive = super::engine::exclusive();
    let make = |n: usize| {
        let body = format!(
            r#"{{"message_uuid":"u","text":"{}","from":"1","to":"2","x":[{}]}}"#,
            "\\u00e9".repeat(n),
            vec!["{\"a\":[1,2,{\"b\":null}]}"; n / 4].join(",")
        );
        SignedRequest::new("POST", "https://example.com/hook", body)
    };
    let parse = |request: &SignedRequest| {
        let _ = parse_unverified("vonage", &request.as_request());
        let _ = parse_unverified("telnyx", &request.as_request());
    };
    assert_linear(&format!("{name}: long escapes and many objects"), 8000, make, parse);
}

/// A provider response: status, headers and body, for the provider at `provider` in
/// [`RESPONDERS`].
struct Response {
    provider: usize,
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("provider", &RESPONDERS[self.provider].name)
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body", &text(&self.body))
            .finish()
    }
}

/// A provider's response interpretation (`__private::interpret`), its documented responses
/// (the fixtures the adapter tests use), and the headers it reads besides `Retry-After`, with
/// values to start from.
struct Responder {
    name: &'static str,
    interpret: fn(u16, &HeaderMap, &[u8], SystemTime) -> Outcome,
    fixtures: &'static [&'static [u8]],
    headers: &'static [(&'static str, &'static [&'static [u8]])],
}

/// A request id, as providers spell theirs.
const REQUEST_IDS: &[&[u8]] = &[b"RQ00000000000000000000000000000000", b"a1b2c3d4-0000-4000-8000-000000000000", b""];

/// Every provider whose adapter is built.
const RESPONDERS: &[Responder] = &[
    Responder {
        name: "twilio",
        interpret: twilio::__private::interpret,
        fixtures: &[
            include_bytes!("../fixtures/twilio/message_created.json"),
            include_bytes!("../fixtures/twilio/error_21211.json"),
            include_bytes!("../fixtures/twilio/error_20429.json"),
            include_bytes!("../fixtures/twilio/error_503.json"),
        ],
        headers: &[("twilio-request-id", REQUEST_IDS)],
    },
    Responder {
        name: "telnyx",
        interpret: telnyx::__private::interpret,
        fixtures: &[
            include_bytes!("../fixtures/telnyx/message_created.json"),
            include_bytes!("../fixtures/telnyx/error_10007.json"),
            include_bytes!("../fixtures/telnyx/error_40300.json"),
        ],
        headers: &[("x-request-id", REQUEST_IDS)],
    },
    Responder {
        name: "plivo",
        interpret: plivo::__private::interpret,
        fixtures: &[
            include_bytes!("../fixtures/plivo/message_created.json"),
            include_bytes!("../fixtures/plivo/error_400.json"),
            include_bytes!("../fixtures/plivo/error_429.json"),
        ],
        headers: &[],
    },
    Responder {
        name: "vonage",
        interpret: vonage::__private::interpret,
        fixtures: &[
            include_bytes!("../fixtures/vonage/message_accepted.json"),
            include_bytes!("../fixtures/vonage/error_1120.json"),
            include_bytes!("../fixtures/vonage/error_throttled.json"),
        ],
        headers: &[("x-request-id", REQUEST_IDS)],
    },
    #[cfg(feature = "sinch")]
    Responder {
        name: "sinch",
        interpret: sinch::__private::interpret,
        fixtures: &[
            include_bytes!("../fixtures/sinch/batch_created.json"),
            include_bytes!("../fixtures/sinch/error_syntax_invalid_json.json"),
            include_bytes!("../fixtures/sinch/error_too_many_requests.json"),
            include_bytes!("../fixtures/sinch/error_unauthorized.json"),
            include_bytes!("../fixtures/sinch/error_internal.json"),
        ],
        headers: &[("x-request-id", REQUEST_IDS)],
    },
    // AWS JSON 1.0: the exception in `__type` or, without one, in `x-amzn-ErrorType`, with a
    // namespace before it and a URL after it sometimes.
    #[cfg(feature = "aws")]
    Responder {
        name: "aws",
        interpret: aws::__private::interpret,
        fixtures: &[
            include_bytes!("../fixtures/aws/send_text_message_ok.json"),
            include_bytes!("../fixtures/aws/error_validation.json"),
            include_bytes!("../fixtures/aws/error_conflict_opted_out.json"),
            include_bytes!("../fixtures/aws/error_throttling.json"),
            include_bytes!("../fixtures/aws/error_access_denied.json"),
            include_bytes!("../fixtures/aws/error_internal_server.json"),
        ],
        headers: &[
            ("x-amzn-requestid", REQUEST_IDS),
            (
                "x-amzn-errortype",
                &[
                    b"ThrottlingException",
                    b"ConflictException:http://internal.amazon.com/coral/com.amazonaws.pinpointsmsvoicev2/",
                    b"com.amazonaws.pinpointsmsvoicev2#ValidationException",
                    b"aws.protocoltests#:x",
                    b"#:",
                ],
            ),
        ],
    },
    // A 200 decided by its one destination's status group (5 a rejection); 4xx bodies in the
    // current form (`errorCode`, `description`) and the legacy one (`requestError`).
    #[cfg(feature = "infobip")]
    Responder {
        name: "infobip",
        interpret: infobip::__private::interpret,
        fixtures: &[
            include_bytes!("../fixtures/infobip/sent_pending.json"),
            include_bytes!("../fixtures/infobip/sent_rejected_not_enough_credits.json"),
            br#"{"bulkId":"2034072219640523075","messages":[{"messageId":"sms-sdk-0123456789abcdef0123456789abcdef","status":{"groupId":"3","groupName":"DELIVERED","id":"5","name":"DELIVERED_TO_HANDSET"},"destination":"14155550123","details":{"messageCount":2}}]}"#,
            include_bytes!("../fixtures/infobip/error_bad_request.json"),
            include_bytes!("../fixtures/infobip/error_unauthorized.json"),
            include_bytes!("../fixtures/infobip/error_too_many_requests.json"),
            include_bytes!("../fixtures/infobip/error_internal.json"),
            br#"{"requestError":{"serviceException":{"messageId":"TOO_MANY_REQUESTS","text":"Too many requests"}}}"#,
        ],
        headers: &[("x-request-id", REQUEST_IDS)],
    },
    // The created message (`id`); errors `{type, description, fieldErrors}`, a 500 with that
    // body a rejection.
    #[cfg(feature = "bandwidth")]
    Responder {
        name: "bandwidth",
        interpret: bandwidth::__private::interpret,
        fixtures: &[
            include_bytes!("../fixtures/bandwidth/message_created.json"),
            include_bytes!("../fixtures/bandwidth/error_request_validation.json"),
            include_bytes!("../fixtures/bandwidth/error_request_validation_to.json"),
            include_bytes!("../fixtures/bandwidth/error_unauthorized.json"),
            include_bytes!("../fixtures/bandwidth/error_forbidden.json"),
            include_bytes!("../fixtures/bandwidth/error_too_many_requests.json"),
            include_bytes!("../fixtures/bandwidth/error_internal.json"),
            br#"{"type":"request-validation","description":"Your request could not be accepted.","fieldErrors":[{"fieldName":"applicationId","description":"'applicationId' is invalid"},{"fieldName":"from","description":"'from' is not a number of the application"},{"fieldName":"to[0]","description":"invalid"}]}"#,
        ],
        headers: &[("x-request-id", REQUEST_IDS)],
    },
];

const STATUSES: &[u16] = &[200, 201, 202, 204, 301, 400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504];

fn interpret(provider: usize, response: &Response, now: SystemTime) -> Outcome {
    let Response { status, headers, body, .. } = response;
    (RESPONDERS[provider].interpret)(*status, headers, body, now)
}

/// What a provider said, as an outcome carries it (for the text limit).
fn details(outcome: &Outcome) -> Option<&ProviderError> {
    match outcome {
        Outcome::Rejected(rejection) => Some(&rejection.details),
        Outcome::Unknown(unknown) => unknown.details.as_ref(),
        Outcome::Accepted(_) => None,
    }
}

/// Fuzzes every provider's response interpretation (status, `Retry-After` and the headers it
/// reads, body): no panic, and the provider's text kept to 200 UTF-16 units.
pub(crate) fn fuzz_responses(name: &'static str, ci: u64) {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let fuzz = Fuzz::new(name, ci);
    fuzz.run(
        GLOBAL,
        |rng| {
            let provider = rng.usize(..RESPONDERS.len());
            let fixtures = RESPONDERS[provider].fixtures;
            let status = if rng.u8(..8) == 0 { rng.u16(..) } else { STATUSES[rng.usize(..STATUSES.len())] };
            let mut body =
                if rng.u8(..4) == 0 { json_body(rng) } else { fixtures[rng.usize(..fixtures.len())].to_vec() };
            let limit = max_len(rng, 1024 * 1024);
            let other = fixtures[rng.usize(..fixtures.len())];
            mutate(rng, &mut body, other, limit);
            let mut headers = HeaderMap::new();
            if rng.bool() {
                let mut value =
                    [&b"1"[..], b"120", b"Wed, 21 Oct 2015 07:28:00 GMT", b"-1", b"1e9"][rng.usize(..5)].to_vec();
                mutate(rng, &mut value, b"18446744073709551616", 256);
                if let Ok(value) = HeaderValue::from_bytes(&value) {
                    headers.insert("retry-after", value);
                }
            }
            for (name, values) in RESPONDERS[provider].headers {
                if rng.bool() {
                    let mut value = values[rng.usize(..values.len())].to_vec();
                    if rng.bool() {
                        mutate(rng, &mut value, b"#:.", 256);
                    }
                    if let Ok(value) = HeaderValue::from_bytes(&value) {
                        headers.insert(*name, value);
                    }
                }
            }
            Response { provider, status, headers, body }
        },
        |response| response.body.len(),
        |response| interpret(response.provider, response, now),
        |_, outcome| {
            let text = details(outcome).and_then(ProviderError::text).unwrap_or_default();
            if text.encode_utf16().count() > 200 {
                return Err(format!("the provider's text is {} units long", text.encode_utf16().count()));
            }
            Ok(AUTHENTIC)
        },
    );
    let _exclusive = super::engine::exclusive();
    let make = |n: usize| {
        let body = format!(
            r#"{{"code":21211,"message":"{}","errors":[{}]}}"#,
            "+14155550123 ".repeat(n),
            "{},".repeat(n) + "{}"
        );
        Response { provider: 0, status: 400, headers: HeaderMap::new(), body: body.into_bytes() }
    };
    let run = |response: &Response| {
        for provider in 0..RESPONDERS.len() {
            let _ = interpret(provider, response, now);
        }
    };
    assert_linear(&format!("{name}: a long error body"), 4000, make, run);
}
