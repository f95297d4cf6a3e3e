//! What a call answers: its result, or an error worded and numbered as Telegram's.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A Bot API error answer.
#[derive(Debug)]
pub(super) struct ApiFailure {
    pub(super) code: u16,
    pub(super) description: String,
    pub(super) retry_after: Option<u32>,
}

/// What a handled call answers: its `result`, or an error.
pub(super) type Reply = Result<Value, ApiFailure>;

/// A 400 "Bad Request: …", as Telegram words most refusals.
pub(super) fn bad(description: impl std::fmt::Display) -> ApiFailure {
    ApiFailure {
        code: 400,
        description: format!("Bad Request: {description}"),
        retry_after: None,
    }
}

/// The HTTP answer: `{"ok": true, "result": …}` or Telegram's error object.
pub(super) fn to_response(reply: &Reply) -> Response {
    match reply {
        Ok(result) => (
            StatusCode::OK,
            axum::Json(json!({"ok": true, "result": result})),
        )
            .into_response(),
        Err(failure) => {
            let mut body = json!({
                "ok": false,
                "error_code": failure.code,
                "description": failure.description,
            });
            if let Some(retry_after) = failure.retry_after {
                body["parameters"] = json!({"retry_after": retry_after});
            }
            // Never a 5xx: teloxide sleeps 10 s before reading one.
            let status = StatusCode::from_u16(failure.code)
                .ok()
                .filter(|s| !s.is_server_error())
                .unwrap_or(StatusCode::BAD_REQUEST);
            (status, axum::Json(body)).into_response()
        }
    }
}
