//! Errors as the HTTP APIs return them: a status, a stable code callers branch on, and a
//! fixed message that names the problem. Internal detail goes to the log, not the client.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::approvals::{ApprovalError, ResolveError, RuleError};
use crate::store::StoreError;

/// The largest request body either socket accepts. Larger bodies are refused, never cut.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "INVALID_REQUEST", message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
    }

    /// The daemon's configuration stops it from serving this request (500).
    pub fn config(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "CONFIG_ERROR", message)
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "FORBIDDEN", message)
    }

    pub fn too_large() -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "BODY_TOO_LARGE",
            format!("request body is larger than {MAX_BODY_BYTES} bytes; nothing was recorded"),
        )
    }

    /// The daemon could not persist or decide: the request is not approved.
    pub fn unavailable(detail: &dyn std::fmt::Display) -> ApiError {
        tracing::error!(error = %detail, "cannot persist or decide: answering 503");
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "UNAVAILABLE",
            "execgate cannot record or decide requests right now (storage unavailable); the command is not approved",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({"error": {"code": self.code, "message": self.message}})),
        )
            .into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        ApiError::unavailable(&e)
    }
}

impl From<ApprovalError> for ApiError {
    fn from(e: ApprovalError) -> ApiError {
        match e {
            ApprovalError::Store(e) => e.into(),
            ApprovalError::ShuttingDown => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "SHUTTING_DOWN",
                "execgate is shutting down; the command is not approved",
            ),
            ApprovalError::Analysis => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "UNAVAILABLE",
                "execgate could not analyse the command (an internal error, logged); the command is not approved",
            ),
            e @ ApprovalError::TooManyPending(_) => ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "TOO_MANY_PENDING",
                e.to_string(),
            ),
            e @ ApprovalError::TooManyAsks(_) => ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "TOO_MANY_ASKS",
                e.to_string(),
            ),
        }
    }
}

impl From<RuleError> for ApiError {
    fn from(e: RuleError) -> ApiError {
        match e {
            RuleError::Invalid(m) => ApiError::bad_request(m),
            e @ RuleError::TooBroad(_) => {
                ApiError::new(StatusCode::BAD_REQUEST, "TOO_BROAD", e.to_string())
            }
            RuleError::Store(e) => e.into(),
        }
    }
}

impl From<ResolveError> for ApiError {
    fn from(e: ResolveError) -> ApiError {
        match e {
            ResolveError::NotFound(id) => ApiError::not_found(format!("approval {id} not found")),
            ResolveError::AlreadyResolved(r) => ApiError::new(
                StatusCode::CONFLICT,
                "ALREADY_RESOLVED",
                format!("approval {} is already resolved ({})", r.short_id, r.status),
            ),
            ResolveError::GrantRefused { grant, why } => ApiError::new(
                StatusCode::BAD_REQUEST,
                "ALWAYS_REFUSED",
                format!("\"{grant}\" refused: {why}; the request is still pending"),
            ),
            ResolveError::Store(e) => e.into(),
        }
    }
}
