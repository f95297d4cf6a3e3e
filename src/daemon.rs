//! `execgate serve`: takes the database, ends what a crash left pending, binds both
//! sockets, serves until told to stop, then cancels what is pending and leaves cleanly.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use tokio::net::UnixListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::api::{AppState, Peer};
use crate::approvals::Approvals;
use crate::config::Config;
use crate::model::{Status, Via};
use crate::policy::Policy;
use crate::store::{Resolution, Store};
use crate::sys::LockFile;
use crate::transport::console::{self, ConsoleIo};
use crate::transport::telegram::Telegram;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("another execgate daemon is already listening on {0}")]
    AlreadyRunning(PathBuf),
    #[error("another execgate daemon is using the database {0}")]
    DatabaseInUse(PathBuf),
    #[error("{path} exists and is not a socket; refusing to replace it")]
    NotASocket { path: PathBuf },
    #[error("socket directory {path}: {why}")]
    UnsafeDir { path: PathBuf, why: String },
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("invalid policy: {0}")]
    Policy(#[from] globset::Error),
    #[error("telegram: {0}")]
    Telegram(String),
}

/// A running daemon. Dropping it does not stop it: call `shutdown`.
pub struct Daemon {
    pub approvals: Arc<Approvals>,
    pub config: Arc<Config>,
    stop: watch::Sender<bool>,
    /// The socket servers.
    tasks: Vec<JoinHandle<()>>,
    /// Console and chat transports; they update their messages after shutdown's
    /// cancellations, so they are awaited before the store closes.
    transports: Vec<JoinHandle<()>>,
    /// Held for the daemon's life: one daemon per database.
    _lock: LockFile,
}

/// Options a caller of `start` chooses beyond the configuration.
#[derive(Default)]
pub struct StartOptions {
    /// Where the console approver reads answers and prints requests. None: no console.
    pub console: Option<ConsoleIo>,
}

impl Daemon {
    /// Everything up to "ready": after this returns, both sockets accept connections.
    pub async fn start(config: Config, options: StartOptions) -> Result<Daemon, StartError> {
        let config = Arc::new(config);
        for socket in [&config.socket, &config.admin_socket] {
            prepare_socket_path(socket).await?;
        }

        if let Some(dir) = config
            .database
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            crate::store::create_private_dir(dir).map_err(|source| StartError::Io {
                what: "cannot create database directory",
                path: dir.into(),
                source,
            })?;
        }
        let lock_path = PathBuf::from(format!("{}.lock", config.database.display()));
        let lock = LockFile::try_acquire(&lock_path)
            .map_err(|source| StartError::Io {
                what: "cannot lock",
                path: lock_path.clone(),
                source,
            })?
            .ok_or_else(|| StartError::DatabaseInUse(config.database.clone()))?;

        let store = Store::open(
            &config.database,
            Duration::from_millis(config.database_busy_timeout_ms),
        )
        .await?;
        let swept = store
            .sweep_pending(
                &Resolution {
                    status: Status::Cancelled,
                    decision: None,
                    via: Via::Restart,
                    decided_by: None,
                    resolved_at: Utc::now(),
                },
                "command was not approved (cancelled): execgate restarted before anyone decided",
            )
            .await?;
        if swept > 0 {
            tracing::warn!(
                count = swept,
                "cancelled requests left pending by a previous run"
            );
        }

        let policy = Arc::new(Policy::new(Arc::clone(&config))?);
        let approvals = Approvals::new(store, policy, Arc::clone(&config));
        approvals.reload_rules().await?;
        // Before the sockets exist: a token Telegram rejects stops the start here.
        let telegram = match config.telegram.bot_token {
            Some(_) => Some(
                Telegram::connect(&config.telegram, Arc::clone(&approvals))
                    .await
                    .map_err(StartError::Telegram)?,
            ),
            None => None,
        };
        let state = AppState {
            approvals: Arc::clone(&approvals),
            config: Arc::clone(&config),
            runs: crate::runs::Runs::new(Arc::clone(&config), approvals.store().clone()),
        };

        let (stop, stopped) = watch::channel(false);
        // Transports start listening for requests before any request can arrive: each
        // subscribes to the approval events here, synchronously, before the sockets exist.
        let mut transports = Vec::new();
        if let Some(io) = options.console {
            transports.push(tokio::spawn(console::run(
                Arc::clone(&approvals),
                approvals.subscribe(),
                io,
                stopped.clone(),
            )));
        }
        if let Some(telegram) = telegram {
            transports.push(telegram.spawn(approvals.subscribe(), stopped.clone()));
        }

        let agent = bind(&config.socket, 0o660)?;
        let admin = bind(&config.admin_socket, 0o600)?;
        let tasks = vec![
            serve(
                agent,
                crate::api::agent::router(state.clone()),
                stopped.clone(),
            ),
            serve(admin, crate::api::admin::router(state), stopped),
        ];
        tracing::info!(
            socket = %config.socket.display(),
            admin_socket = %config.admin_socket.display(),
            database = %config.database.display(),
            "execgate ready"
        );
        Ok(Daemon {
            approvals,
            config,
            stop,
            tasks,
            transports,
            _lock: lock,
        })
    }

    /// Stops accepting requests, cancels every pending one (via `shutdown`), lets
    /// connections finish, and removes the socket files.
    pub async fn shutdown(self) {
        tracing::info!("shutting down: cancelling pending requests");
        self.approvals.shutdown().await;
        // Transports get a moment to show the cancellations before they stop.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let _ = self.stop.send(true);
        for transport in self.transports {
            // Each transport bounds its own wind-down; this only guards against a bug.
            if tokio::time::timeout(Duration::from_secs(15), transport)
                .await
                .is_err()
            {
                tracing::warn!("a transport did not stop within 15 s of shutdown");
            }
        }
        for task in self.tasks {
            if tokio::time::timeout(Duration::from_secs(5), task)
                .await
                .is_err()
            {
                tracing::warn!("a connection did not finish within 5 s of shutdown");
            }
        }
        for socket in [&self.config.socket, &self.config.admin_socket] {
            let _ = std::fs::remove_file(socket);
        }
        self.approvals.store().close().await;
        tracing::info!("execgate stopped");
    }
}

fn serve(
    listener: UnixListener,
    router: axum::Router,
    mut stopped: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let app = router.into_make_service_with_connect_info::<Peer>();
        let result = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.wait_for(|s| *s).await.map(|_| ());
            })
            .await;
        if let Err(e) = result {
            tracing::error!(error = %e, "socket server failed");
        }
    })
}

/// Makes sure the socket's directory is ours and private (creating it 0700), and that the
/// socket path is free: a live daemon there is an error, a stale socket file is removed.
async fn prepare_socket_path(socket: &Path) -> Result<(), StartError> {
    let dir = socket
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        crate::store::create_private_dir(dir).map_err(|source| StartError::Io {
            what: "cannot create socket directory",
            path: dir.into(),
            source,
        })?;
    }
    let meta = std::fs::metadata(dir).map_err(|source| StartError::Io {
        what: "cannot inspect socket directory",
        path: dir.into(),
        source,
    })?;
    let unsafe_dir = |why: String| {
        Err(StartError::UnsafeDir {
            path: dir.into(),
            why,
        })
    };
    if meta.uid() != crate::sys::current_uid() {
        return unsafe_dir(format!(
            "owned by uid {}, not by this daemon's uid",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return unsafe_dir(format!(
            "mode {:o} lets others replace the socket; use 0700 or 0750",
            meta.mode() & 0o777
        ));
    }
    match std::fs::symlink_metadata(socket) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(StartError::Io {
            what: "cannot inspect",
            path: socket.into(),
            source,
        }),
        Ok(m) if !m.file_type().is_socket() => Err(StartError::NotASocket {
            path: socket.into(),
        }),
        Ok(_) => match tokio::net::UnixStream::connect(socket).await {
            Ok(_) => Err(StartError::AlreadyRunning(socket.into())),
            Err(_) => {
                tracing::info!(socket = %socket.display(), "removing a stale socket file");
                std::fs::remove_file(socket).map_err(|source| StartError::Io {
                    what: "cannot remove stale socket",
                    path: socket.into(),
                    source,
                })
            }
        },
    }
}

fn bind(path: &Path, mode: u32) -> Result<UnixListener, StartError> {
    let listener = UnixListener::bind(path).map_err(|source| StartError::Io {
        what: "cannot bind",
        path: path.into(),
        source,
    })?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|source| {
        StartError::Io {
            what: "cannot set the mode of",
            path: path.into(),
            source,
        }
    })?;
    Ok(listener)
}
