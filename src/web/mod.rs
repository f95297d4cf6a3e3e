//! The approvals page (docs/web.md): a single page, served by the daemon on `web.listen`,
//! where the owner sees pending requests live and answers them, reads the history and
//! manages the allowlist. It speaks to the admin API's own routes over HTTP, as the
//! decider `web`, once [`guard`] has let the request in.
//!
//! - `guard`: the checks every request passes first (Host, the token, Origin) and the
//!   security headers every answer carries.
//! - `page`: the page's files (`page/`), built into the binary.
//!
//! The connections themselves are accepted by the API's server loop, with its limits,
//! its head checks and its graceful end.

mod guard;
mod page;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::middleware;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::api::AppState;
use crate::config::{Config, WebConfig};
use crate::shutdown::Shutdown;
use crate::web_token::{self, Token, TokenError};

pub use guard::HEADERS;

#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error(transparent)]
    Token(#[from] TokenError),
    #[error("cannot listen on {addr} (web.listen): {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The page's port, bound, with the token that opens it.
pub struct Front {
    listener: TcpListener,
    addr: SocketAddr,
    token: Token,
}

impl Front {
    /// Takes the token (made on first use) and binds `listen`; fails before anything is
    /// served when either cannot be done safely.
    pub async fn bind(config: &Config, listen: SocketAddr) -> Result<Front, WebError> {
        let token = web_token::load_or_create(&WebConfig::token_file(&config.database))?;
        let listener = TcpListener::bind(listen)
            .await
            .map_err(|source| WebError::Bind {
                addr: listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| WebError::Bind {
            addr: listen,
            source,
        })?;
        if !addr.ip().is_loopback() {
            tracing::warn!(
                %addr,
                "the approvals page listens on an address other hosts may reach, over plain HTTP: the token crosses the network in clear text. Prefer 127.0.0.1 and an SSH tunnel (docs/web.md)"
            );
        }
        Ok(Front {
            listener,
            addr,
            token,
        })
    }

    /// Where the page listens (the bound port, when `web.listen` asked for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's URL with the token: for the owner's eyes only, never for a log.
    pub fn url(&self) -> String {
        web_token::url(self.addr, &self.token)
    }

    /// Serves the page until `shutdown`.
    pub fn serve(self, state: AppState, shutdown: Shutdown) -> JoinHandle<()> {
        tracing::info!(addr = %self.addr, "the approvals page is listening");
        let policy = Arc::clone(state.approvals.policy());
        let access = Arc::new(guard::Access::new(self.token, self.addr));
        crate::api::server::serve(
            self.listener,
            router(state, access),
            policy,
            HEADERS,
            shutdown,
        )
    }
}

/// The page's files, then the admin API's routes, all behind [`guard::check`].
fn router(state: AppState, access: Arc<guard::Access>) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/app.css", get(page::style))
        .route("/favicon.svg", get(page::icon))
        .merge(crate::api::admin::routes())
        .layer(middleware::from_fn_with_state(access, guard::check))
        .with_state(state)
}
