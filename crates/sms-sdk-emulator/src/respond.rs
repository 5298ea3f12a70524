//! JSON responses.

use axum::response::{IntoResponse as _, Response};
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};

/// A JSON response.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body.to_string()).into_response()
}

/// `{"error": message}` with `status`.
pub(crate) fn error_response(status: StatusCode, message: &str) -> Response {
    json_response(status, &json!({"error": message}))
}
