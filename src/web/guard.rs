//! Who may use the approvals page's port, checked on every request before anything else
//! reads it, in this order:
//!
//! 1. `Host` must name the listen address (or `localhost` with its port, when that
//!    address is loopback): a page on another site that a DNS trick points at this port
//!    sends its own name, and is refused (421).
//! 2. Everything but the page's own files needs `Authorization: Bearer TOKEN` (401 with
//!    `WWW-Authenticate: Bearer` otherwise). The token is never taken from a cookie or
//!    the query string, so another site can neither make a browser send it nor read it
//!    from a log or a `Referer`.
//! 3. A request that may change something (any method but GET and HEAD) must carry the
//!    `Origin` of the page itself, `http://` and the request's `Host` (403 otherwise).
//!
//! Only then does a request reach the admin API, as the web's [`Decider`]. The security
//! headers every answer carries are [`HEADERS`]; the server adds them.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api::admin::Decider;
use crate::api::error::ApiError;
use crate::api::server::Headers;
use crate::model::Via;
use crate::web_token::Token;

/// What every answer of the page's port carries: nothing but the page's own files may
/// run, load or be framed; nothing is cached or sent on as a referrer.
pub const HEADERS: Headers = &[
    (
        "content-security-policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cache-control", "no-store"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
];

/// The paths anyone who reaches the port may read without the token: the page's own
/// files, which hold no data and no secret.
const PUBLIC: &[&str] = &["/", "/app.js", "/app.css", "/favicon.svg"];

/// What the checks compare with.
pub struct Access {
    token: Token,
    /// The `Host` values accepted, lower-case.
    hosts: Vec<String>,
}

impl Access {
    /// For a page listening on `addr` (the bound address, its real port).
    pub fn new(token: Token, addr: SocketAddr) -> Access {
        let mut hosts = vec![addr.to_string().to_ascii_lowercase()];
        if addr.ip().is_loopback() {
            hosts.push(format!("localhost:{}", addr.port()));
        }
        Access { token, hosts }
    }

    /// The request's `Host`, if it is one of ours.
    fn host<'a>(&self, request: &'a Request) -> Option<&'a str> {
        let host = only(request.headers(), header::HOST)?;
        let ours = self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host));
        // A request target in absolute form names its host too; it must agree.
        let agrees = request
            .uri()
            .authority()
            .is_none_or(|a| a.as_str().eq_ignore_ascii_case(host));
        (ours && agrees).then_some(host)
    }

    /// Whether the request carries the token, as `Authorization: Bearer TOKEN`.
    fn authorised(&self, headers: &HeaderMap) -> bool {
        only(headers, header::AUTHORIZATION)
            .and_then(|value| value.split_once(' '))
            .is_some_and(|(scheme, token)| {
                scheme.eq_ignore_ascii_case("bearer") && self.token.matches(token.trim().as_bytes())
            })
    }
}

/// The one value of header `name`, as text; None when it is absent, repeated or not
/// visible ASCII.
fn only(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    if values.next().is_some() {
        return None;
    }
    value.to_str().ok()
}

/// The checks of this module's comment, then the request as the web's decider.
pub async fn check(
    State(access): State<Arc<Access>>,
    mut request: Request,
    next: Next,
) -> Response {
    let Some(host) = access.host(&request) else {
        tracing::debug!(host = ?request.headers().get(header::HOST), "refused a request for another host");
        return ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "WRONG_HOST",
            format!(
                "this port answers only to Host {}; open the page at that address",
                access.hosts.join(" or ")
            ),
        )
        .into_response();
    };
    let public = matches!(*request.method(), Method::GET | Method::HEAD)
        && PUBLIC.contains(&request.uri().path());
    if public {
        return next.run(request).await;
    }
    if !access.authorised(request.headers()) {
        tracing::debug!(
            path = request.uri().path(),
            "refused a request without the page's token"
        );
        return unauthorised(request.headers().contains_key(header::AUTHORIZATION));
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        let expected = format!("http://{host}");
        let same = only(request.headers(), header::ORIGIN)
            .is_some_and(|origin| origin.eq_ignore_ascii_case(&expected));
        if !same {
            tracing::warn!(
                origin = ?request.headers().get(header::ORIGIN),
                method = %request.method(),
                path = request.uri().path(),
                "refused a request with the page's token from another origin"
            );
            return ApiError::forbidden(format!(
                "a request that changes something must come from the page itself (Origin {expected})"
            ))
            .into_response();
        }
    }
    request.extensions_mut().insert(Decider {
        via: Via::Web,
        by: "web".into(),
    });
    next.run(request).await
}

fn unauthorised(presented: bool) -> Response {
    let (message, challenge) = match presented {
        false => (
            "the approvals page's token is required (Authorization: Bearer TOKEN); open the URL `execgate web url` prints",
            "Bearer realm=\"execgate\"",
        ),
        true => (
            "this is not the approvals page's token; open the URL `execgate web url` prints",
            "Bearer realm=\"execgate\", error=\"invalid_token\"",
        ),
    };
    let mut response =
        ApiError::new(StatusCode::UNAUTHORIZED, "UNAUTHORIZED", message).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}
