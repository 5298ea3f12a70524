//! The one exchange every HTTP measurement repeats: the Twilio Messages request the adapter sends
//! and the static response the responder answers with.

/// The account the requests are sent for.
pub const ACCOUNT_SID: &str = "AC0123456789abcdef0123456789abcdef";
/// Its auth token (Basic auth password).
pub const AUTH_TOKEN: &str = "bench-auth-token-0123456789abcdef";
/// The sender.
pub const FROM: &str = "+15005550006";
/// The recipient.
pub const TO: &str = "+14155550123";
/// The message text (GSM-7, one segment).
pub const BODY: &str = "Your order #4521 has shipped. Track it at https://example.com/t/4521";

/// The path the Twilio adapter posts to.
#[must_use]
pub fn messages_path() -> String {
    format!("/2010-04-01/Accounts/{ACCOUNT_SID}/Messages.json")
}

/// The message resource Twilio answers a create with (201), as the emulator and the fixtures
/// write it.
pub const RESPONSE_BODY: &str = concat!(
    r#"{"account_sid":"AC0123456789abcdef0123456789abcdef","api_version":"2010-04-01","#,
    r#""body":"Your order #4521 has shipped. Track it at https://example.com/t/4521","#,
    r#""date_created":"Tue, 14 Nov 2023 22:13:20 +0000","date_sent":null,"#,
    r#""date_updated":"Tue, 14 Nov 2023 22:13:20 +0000","direction":"outbound-api","error_code":null,"#,
    r#""error_message":null,"from":"+15005550006","messaging_service_sid":null,"num_media":"0","#,
    r#""num_segments":"1","price":null,"price_unit":"USD","sid":"SM0123456789abcdef0123456789abcdef","#,
    r#""status":"queued","subresource_uris":{"media":"/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Messages/SM0123456789abcdef0123456789abcdef/Media.json"},"#,
    r#""to":"+14155550123","uri":"/2010-04-01/Accounts/AC0123456789abcdef0123456789abcdef/Messages/SM0123456789abcdef0123456789abcdef.json"}"#
);

/// The whole HTTP/1.1 response, status line to body: what the responder writes for every request.
#[must_use]
pub fn response_bytes() -> Vec<u8> {
    format!(
        "HTTP/1.1 201 Created\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: {}\r\n\
         twilio-request-id: RQ0123456789abcdef0123456789abcdef\r\n\r\n{RESPONSE_BODY}",
        RESPONSE_BODY.len()
    )
    .into_bytes()
}
