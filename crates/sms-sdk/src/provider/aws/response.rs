//! End User Messaging SMS's answers to `SendTextMessage`: the `MessageId`, and the AWS JSON 1.0
//! error shapes (`__type`, or the `x-amzn-ErrorType` header; `Message`; `Reason`).

use std::borrow::Cow;
use std::time::SystemTime;

use http::HeaderMap;
use serde::Deserialize;

use super::NAME;
use crate::adapter::{Accepted, Category, Delivery, Outcome};
use crate::http::{ResponseBody, classify_response, header_str};
use crate::json::Text;

/// The error's shape name alone: AWS JSON 1.0 may prefix a namespace (`aws.protocoltests#`,
/// `com.amazonaws.pinpointsmsvoicev2#`) and suffix a `:` and a URL; both are dropped.
#[must_use]
pub fn error_type(raw: &str) -> &str {
    let name = raw.rsplit_once('#').map_or(raw, |(_, name)| name);
    name.split_once(':').map_or(name, |(name, _)| name).trim()
}

/// The category of a refused `SendTextMessage`, from the exception and its `Reason`: the
/// service's documented exceptions, then AWS's common authentication errors; any other 4xx is
/// `request`.
#[must_use]
pub fn rejection_category(exception: Option<&str>, reason: Option<&str>) -> Category {
    match (exception, reason) {
        (Some("ThrottlingException"), _) => Category::RateLimited,
        (
            Some("ConflictException"),
            Some("DESTINATION_PHONE_NUMBER_OPTED_OUT" | "DESTINATION_COUNTRY_BLOCKED_BY_PROTECT_CONFIGURATION"),
        ) => Category::Compliance,
        // The account's settings or standing: the sandbox (only verified destinations), a
        // country blocked or priced over its limit, a spend quota, a disabled account, and a
        // resource the request names (origination identity, pool, configuration set) that this
        // account does not have.
        (Some("ConflictException"), Some("DESTINATION_PHONE_NUMBER_NOT_VERIFIED"))
        | (Some("ValidationException"), Some("DESTINATION_COUNTRY_BLOCKED" | "PRICE_OVER_THRESHOLD"))
        | (Some("AccessDeniedException"), Some("INSUFFICIENT_ACCOUNT_REPUTATION" | "ACCOUNT_DISABLED"))
        | (Some("ServiceQuotaExceededException" | "ResourceNotFoundException"), _) => Category::Account,
        (Some("ConflictException"), Some("NO_ORIGINATION_IDENTITIES_FOUND" | "RESOURCE_NOT_ACTIVE"))
        | (
            Some("ValidationException"),
            Some("INVALID_IDENTITY_FOR_DESTINATION_COUNTRY" | "SENDER_ID_NOT_REGISTERED"),
        ) => Category::Sender,
        (
            Some(
                "AccessDeniedException"
                | "UnrecognizedClientException"
                | "InvalidSignatureException"
                | "IncompleteSignature"
                | "IncompleteSignatureException"
                | "ExpiredTokenException"
                | "InvalidClientTokenId"
                | "MissingAuthenticationToken"
                | "MissingAuthenticationTokenException"
                | "SignatureDoesNotMatch",
            ),
            _,
        ) => Category::Auth,
        _ => Category::Request,
    }
}

/// Classifies a response to `SendTextMessage`: 200 with a `MessageId` accepted; a 4xx rejected
/// in the category of its exception; a 5xx (`InternalServerException`), a 2xx without a
/// `MessageId` and anything unreadable unknown.
#[must_use]
pub fn interpret(status: u16, headers: &HeaderMap, body: &[u8], now: SystemTime) -> Outcome {
    classify_response::<Response<'_>>(status, headers, body, now)
}

/// What [`interpret`] reads of a response.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Response<'a> {
    #[serde(borrow, rename = "MessageId")]
    message_id: Text<'a>,
    #[serde(borrow, rename = "__type")]
    kind: Text<'a>,
    #[serde(borrow, rename = "Message")]
    message: Text<'a>,
    /// Some AWS JSON services spell it in lowercase.
    #[serde(borrow, rename = "message")]
    message_lowercase: Text<'a>,
    #[serde(borrow, rename = "Reason")]
    reason: Text<'a>,
}

impl<'a> ResponseBody<'a> for Response<'a> {
    const PROVIDER: &'static str = NAME;

    fn request_id<'s>(&'s self, headers: &'s HeaderMap) -> Option<&'s str> {
        header_str(headers, "x-amzn-requestid")
    }

    /// The `MessageId`: the message is queued at AWS.
    fn accepted(&self) -> Option<Accepted> {
        let id = self.message_id.non_empty()?;
        Some(Accepted { provider_id: id.to_owned(), delivery: Delivery::Queued })
    }

    /// The `Reason` when the exception has one (`DESTINATION_PHONE_NUMBER_OPTED_OUT`: the more
    /// precise of the two), else the exception (`ThrottlingException`).
    fn code(&self) -> Option<Cow<'_, str>> {
        let exception = self.kind.non_empty().map(error_type).filter(|name| !name.is_empty());
        self.reason.non_empty().or(exception).map(Cow::Borrowed)
    }

    fn header_code<'s>(&'s self, headers: &'s HeaderMap) -> Option<&'s str> {
        header_str(headers, "x-amzn-errortype").map(error_type).filter(|name| !name.is_empty())
    }

    fn message(&self) -> Option<&str> {
        self.message.non_empty().or_else(|| self.message_lowercase.non_empty())
    }

    /// By the body's exception (or, without one, the header's: then `code`) and its `Reason`.
    fn category(&self, _status: u16, code: Option<&str>) -> Category {
        let exception = self.kind.non_empty().map(error_type).or(code);
        rejection_category(exception, self.reason.non_empty())
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;
    use crate::adapter::{Unknown, UnknownReason};

    fn classify(status: u16, body: &str) -> Outcome {
        interpret(status, &HeaderMap::new(), body.as_bytes(), SystemTime::UNIX_EPOCH)
    }

    fn rejected(status: u16, body: &str) -> (Category, Option<String>, Option<String>) {
        let Outcome::Rejected(rejection) = classify(status, body) else { panic!("{status} {body}") };
        let code = rejection.details.provider_code().map(str::to_owned);
        let text = rejection.details.text().map(str::to_owned);
        (rejection.category, code, text)
    }

    #[test]
    fn t280_a_message_id_is_accepted_and_anything_else_at_2xx_unknown() {
        let Outcome::Accepted(accepted) = classify(200, r#"{"MessageId":"0f2a1b3c-1111-2222-3333-444455556666"}"#)
        else {
            panic!()
        };
        assert_eq!(accepted.provider_id, "0f2a1b3c-1111-2222-3333-444455556666");
        assert_eq!(accepted.delivery, Delivery::Queued);
        for body in ["{}", r#"{"MessageId":""}"#, "", r#"{"MessageId":"a","MessageId":"b"}"#] {
            assert!(
                matches!(
                    classify(200, body),
                    Outcome::Unknown(Unknown { reason: UnknownReason::MalformedResponse, .. })
                ),
                "{body}"
            );
        }
    }

    #[test]
    fn t281_the_documented_exceptions_and_their_reasons() {
        let rows: &[(&str, Option<&str>, Category)] = &[
            ("ThrottlingException", None, Category::RateLimited),
            ("ConflictException", Some("DESTINATION_PHONE_NUMBER_OPTED_OUT"), Category::Compliance),
            ("ConflictException", Some("DESTINATION_PHONE_NUMBER_NOT_VERIFIED"), Category::Account),
            ("ConflictException", Some("NO_ORIGINATION_IDENTITIES_FOUND"), Category::Sender),
            ("ConflictException", Some("SOMETHING_NEW"), Category::Request),
            ("ValidationException", Some("SENDER_ID_NOT_REGISTERED"), Category::Sender),
            ("ValidationException", Some("DESTINATION_COUNTRY_BLOCKED"), Category::Account),
            ("ValidationException", Some("CANNOT_PARSE"), Category::Request),
            ("ValidationException", None, Category::Request),
            ("ServiceQuotaExceededException", Some("MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT"), Category::Account),
            ("AccessDeniedException", Some("ACCOUNT_DISABLED"), Category::Account),
            ("AccessDeniedException", None, Category::Auth),
            ("ResourceNotFoundException", None, Category::Account),
            ("UnrecognizedClientException", None, Category::Auth),
            ("InvalidSignatureException", None, Category::Auth),
            ("ExpiredTokenException", None, Category::Auth),
            // JSON services add `Exception` to the Query protocol's names of these two.
            ("IncompleteSignatureException", None, Category::Auth),
            ("MissingAuthenticationTokenException", None, Category::Auth),
            ("SomeFutureException", None, Category::Request),
        ];
        for &(exception, reason, category) in rows {
            let body = match reason {
                Some(reason) => format!(r#"{{"__type":"{exception}","Message":"refused","Reason":"{reason}"}}"#),
                None => format!(r#"{{"__type":"{exception}","message":"refused"}}"#),
            };
            let (got, code, text) = rejected(400, &body);
            assert_eq!(got, category, "{body}");
            assert_eq!(code.as_deref(), Some(reason.unwrap_or(exception)), "{body}");
            assert_eq!(text.as_deref(), Some("refused"));
        }
    }

    #[test]
    fn t281_namespaces_suffixes_and_the_error_type_header() {
        assert_eq!(error_type("com.amazonaws.pinpointsmsvoicev2#ConflictException"), "ConflictException");
        assert_eq!(error_type("ThrottlingException:http://internal.amazon.com/coral/"), "ThrottlingException");
        assert_eq!(error_type("aws.protocoltests#Foo:http://x"), "Foo");
        let body = r#"{"__type":"com.amazonaws.pinpointsmsvoicev2#ThrottlingException","Message":"Rate exceeded"}"#;
        assert_eq!(rejected(400, body).0, Category::RateLimited);
        let mut headers = HeaderMap::new();
        headers.insert("x-amzn-errortype", HeaderValue::from_static("UnrecognizedClientException:http://x/"));
        headers.insert("x-amzn-requestid", HeaderValue::from_static("req-1"));
        let Outcome::Rejected(rejection) = interpret(403, &headers, b"{}", SystemTime::UNIX_EPOCH) else { panic!() };
        assert_eq!(rejection.category, Category::Auth);
        assert_eq!(rejection.details.provider_code(), Some("UnrecognizedClientException"));
        assert_eq!(rejection.details.provider_request_id(), Some("req-1"));
        // A rate limit carries no Retry-After: the retry policy's backoff applies.
        assert_eq!(rejection.retry_after, None);
    }

    #[test]
    fn t282_server_errors_and_unlisted_answers_are_unknown() {
        for status in [500, 502, 503] {
            let body = r#"{"__type":"InternalServerException","Message":"internal"}"#;
            assert!(matches!(classify(status, body), Outcome::Unknown(_)), "{status}");
        }
        // A bare 4xx (a proxy, say) is a request rejection; a 429 without AWS's throttling
        // exception is not a documented rate limit.
        assert_eq!(rejected(400, "").0, Category::Request);
        assert!(matches!(classify(429, ""), Outcome::Unknown(Unknown { reason: UnknownReason::UnexpectedStatus, .. })));
    }
}
