//! JSON responses.

use axum::response::{IntoResponse as _, Response};
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};

/// `application/json`.
pub(crate) const JSON: &str = "application/json";

/// A JSON response.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    json_response_as(status, JSON, body)
}

/// A JSON response with another JSON content type (`application/problem+json`).
pub(crate) fn json_response_as(status: StatusCode, content_type: &'static str, body: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))], body.to_string()).into_response()
}

/// `{"error": message}` with `status`.
pub(crate) fn error_response(status: StatusCode, message: &str) -> Response {
    json_response(status, &json!({"error": message}))
}

/// `response` with `Connection: close`: after an oversized body, whose rest may still be on its
/// way, the connection is not read for another request.
pub(crate) fn closing(mut response: Response) -> Response {
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
