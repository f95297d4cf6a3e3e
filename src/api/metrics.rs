//! `GET /metrics` (docs/metrics.md): the daemon's counts in the Prometheus (OpenMetrics)
//! text format, rendered from memory, so a scrape never waits on the store. On the admin
//! socket behind its uid check, and, with `metrics.listen`, on a TCP port of its own
//! that serves this route and nothing else, to anyone: counts only, never a command, an
//! id or an agent's name (`crate::metrics` labels by fixed words alone).

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::error::ApiError;
use crate::metrics::{CONTENT_TYPE, Metrics};

/// The metrics port's whole router.
pub fn router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .fallback(super::not_found)
        .method_not_allowed_fallback(super::method_not_allowed)
        .with_state(metrics)
}

/// The exposition; 404 when `metrics.enabled` is false.
pub async fn scrape(State(metrics): State<Arc<Metrics>>) -> Response {
    match metrics.render() {
        Some(text) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response(),
        None => ApiError::not_found("metrics are off (metrics.enabled = false)").into_response(),
    }
}
