//! `execgate serve`: takes the database, ends what a crash left pending, binds both
//! sockets (and the approvals page's port, when configured), serves until told to stop,
//! then cancels what is pending and leaves cleanly.

use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use tokio::net::UnixListener;
use tokio::task::JoinHandle;

use crate::api::{AppState, server};
use crate::approvals::Approvals;
use crate::cluster::Cluster;
use crate::config::Config;
use crate::metrics::{Metrics, Traces};
use crate::model::{Status, Via};
use crate::policy::Policy;
use crate::store::{Resolution, Store};
use crate::sys::LockFile;
use crate::transport::console::{self, ConsoleIo};
use crate::transport::discord::Discord;
use crate::transport::matrix::Matrix;
use crate::transport::slack::Slack;
use crate::transport::telegram::Telegram;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("another execgate daemon is already listening on {0}")]
    AlreadyRunning(PathBuf),
    #[error("another execgate daemon is using the database {0}")]
    DatabaseInUse(PathBuf),
    #[error(
        "another running execgate on the shared database is node {0:?}; give each host its own `node`"
    )]
    NodeInUse(String),
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
    #[error("matrix: {0}")]
    Matrix(String),
    #[error("slack: {0}")]
    Slack(String),
    #[error("discord: {0}")]
    Discord(String),
    /// The approvals page's token or port (each message says which).
    #[error(transparent)]
    Web(#[from] crate::web::WebError),
    #[error("{0}")]
    Traces(String),
    #[error("cannot listen on metrics.listen {addr}: {source}")]
    MetricsListen { addr: SocketAddr, source: io::Error },
}

/// The tokio runtime execgate runs on: half as many workers as cores, at least one.
/// Durable writes are made by the store's own writer thread, which wants a core of its
/// own under load; and on a small machine a second worker adds hand-overs between
/// workers to every request without serving more of them (BENCHMARKS.md has both runs).
/// `TOKIO_WORKER_THREADS` overrides the count.
pub fn runtime() -> io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        builder.worker_threads((cores / 2).max(1));
    }
    builder.build()
}

/// A running daemon. Dropping it does not stop it: call `shutdown`.
pub struct Daemon {
    pub approvals: Arc<Approvals>,
    pub config: Arc<Config>,
    /// The database: the daemon opened it, and closes it last.
    store: Store,
    stop: crate::shutdown::Notifier,
    /// The socket servers.
    tasks: Vec<JoinHandle<()>>,
    /// Console and chat transports; they update their messages after shutdown's
    /// cancellations, so they are awaited before the store closes.
    transports: Vec<JoinHandle<()>>,
    /// Socket files this daemon bound (not those systemd passed in): removed at shutdown.
    owned_sockets: Vec<PathBuf>,
    /// The approvals page, when on: where it listens, and its URL with the token.
    web: Option<(SocketAddr, String)>,
    /// Held for the daemon's life: one daemon per database.
    _lock: LockFile,
    /// On a shared database: this daemon's hold on its node name.
    _node_claim: Option<crate::store::postgres::cluster::NodeClaim>,
}

/// Options a caller of `start` chooses beyond the configuration.
#[derive(Default)]
pub struct StartOptions {
    /// Where the console approver reads answers and prints requests. None: no console.
    pub console: Option<ConsoleIo>,
    /// Sockets systemd passed in (socket activation); the rest are bound here.
    pub activated: crate::systemd::Activated,
}

impl Daemon {
    /// Everything up to "ready": after this returns, both sockets accept connections.
    pub async fn start(config: Config, options: StartOptions) -> Result<Daemon, StartError> {
        let config = Arc::new(config);
        let activated = options.activated;
        // An activated socket is systemd's: it is live, and not ours to replace or remove.
        let mut owned_sockets = Vec::new();
        for (socket, passed) in [
            (&config.socket, activated.agent.is_some()),
            (&config.admin_socket, activated.admin.is_some()),
        ] {
            if !passed {
                prepare_socket_path(socket).await?;
                owned_sockets.push(socket.clone());
            }
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

        let busy = Duration::from_millis(config.database_busy_timeout_ms);
        let store = match &config.postgres {
            Some(url) => {
                let options = crate::store::postgres::Options {
                    acquire_timeout: busy,
                    max_connections: PG_CONNECTIONS,
                };
                Store::open_postgres(url, &config.node, options).await?
            }
            None => Store::open_sqlite(&config.database, busy, &config.node).await?,
        }
        .with_chain(config.audit.chain);
        let node_claim = match store.shared() {
            Some(pg) => {
                let claim = pg
                    .claim_node(Duration::from_secs(config.cluster.failover_secs))
                    .await?
                    .ok_or_else(|| StartError::NodeInUse(config.node.clone()))?;
                // Alive before anything else, so the leader never takes this node for dead.
                pg.heartbeat().await?;
                Some(claim)
            }
            None => None,
        };
        // Before anything this start writes: rows older than the chain are vouched for
        // as they are found, once, when the chain is empty.
        if config.audit.chain {
            let adopted = store.audit_adopt().await?;
            if adopted > 0 {
                tracing::warn!(
                    entries = adopted,
                    "the audit chain begins: rows written before it are vouched for as they are now, not as they were"
                );
            }
        }
        // On a shared database, only this node's: the others' agents still wait.
        let swept = store
            .sweep_pending(
                Resolution {
                    status: Status::Cancelled,
                    decision: None,
                    via: Via::Restart,
                    decided_by: None,
                    resolved_at: Utc::now(),
                    // Whether anyone saw them died with the last run: assume so.
                    shown: true,
                },
                "command was not approved (cancelled): execgate restarted before anyone decided",
            )
            .await?;
        if !swept.is_empty() {
            tracing::warn!(
                count = swept.len(),
                "cancelled requests left pending by a previous run"
            );
        }

        // Rules granted with `approval.remember = "memory"` lasted as long as that run.
        let forgotten = store.forget_memory_rules().await?;
        if forgotten > 0 {
            tracing::info!(
                count = forgotten,
                "removed rules granted to last only until execgate stopped"
            );
        }

        // Off, every record is one branch and nothing is registered or served.
        let traces = match &config.traces.otlp_endpoint {
            Some(endpoint) => Some(
                Traces::start(
                    endpoint,
                    Duration::from_millis(config.traces.export_delay_ms),
                )
                .map_err(StartError::Traces)?,
            ),
            None => None,
        };
        let metrics = Metrics::new(config.metrics.enabled, traces);
        if metrics.is_on() {
            store.count_commits(Arc::clone(&metrics));
        }
        let policy = Arc::new(Policy::new(Arc::clone(&config))?);
        let approvals =
            Approvals::counted(store.clone(), Arc::clone(&policy), Arc::clone(&metrics));
        approvals.reload_rules().await?;
        if config.audit.chain {
            approvals.log_audit_head().await;
            approvals.check_audit_in_background();
        } else {
            tracing::warn!(
                "audit.chain is off: what is written now is in no chain, and `execgate audit verify` will say so"
            );
        }
        let cluster = Cluster::of(&approvals, &store, &config.cluster);
        // Alone, the chats are this daemon's; on a shared database, the leader's, started
        // once this node takes the lock (below).
        let chats = match cluster {
            // Before the sockets exist: a token Telegram rejects stops the start here.
            None => Some(Chats::connect(&config, &approvals).await?),
            Some(_) => None,
        };
        let has_chats = config.has_chat();
        // Their messages say they are still waiting: the chats edit them.
        let left: Arc<[crate::transport::Left]> = match has_chats {
            true => crate::transport::left_by_last_run(&approvals, &swept)
                .await
                .into(),
            false => Arc::from([]),
        };
        let state = AppState {
            approvals: Arc::clone(&approvals),
            runs: crate::runs::Runs::new(
                policy,
                store.clone(),
                config.exec.max_concurrent,
                config.exec.max_concurrent_per_uid,
                Arc::clone(&metrics),
            ),
        };

        // The page's token and port are taken before anything is served: a token file
        // others could read, or a port in use, stops the start here.
        let web = match config.web.listen {
            Some(listen) => Some(crate::web::Front::bind(&config, listen).await?),
            None => None,
        };
        let scrape_port = match (config.metrics.listen, metrics.is_on()) {
            (Some(addr), true) => Some(
                tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|source| StartError::MetricsListen { addr, source })?,
            ),
            (Some(addr), false) => {
                tracing::warn!(%addr, "metrics.listen is set but metrics.enabled is false: nothing listens there");
                None
            }
            (None, _) => None,
        };

        let (stop, shutdown) = crate::shutdown::channel();
        // Transports start listening for requests before any request can arrive: each
        // subscribes to the approval events here, synchronously, before the sockets exist.
        let mut transports = Vec::new();
        if let Some(io) = options.console {
            transports.push(tokio::spawn(console::run(
                Arc::clone(&approvals),
                approvals.subscribe(),
                io,
                shutdown.clone(),
            )));
        }
        let mut background = vec![tokio::spawn(record_expiries(
            Arc::clone(&approvals),
            approvals.subscribe(),
            shutdown.clone(),
        ))];
        match (chats, &cluster) {
            (Some(chats), _) => transports.extend(chats.spawn(&approvals, left, &shutdown)),
            (None, Some(cluster)) => {
                background.extend(cluster.spawn(&shutdown));
                // Every node contends, chats or not: the leader also sweeps silent nodes.
                transports.push(tokio::spawn(lead_chats(
                    cluster.clone(),
                    Arc::clone(&config),
                    Arc::clone(&approvals),
                    left,
                    shutdown.clone(),
                )));
            }
            (None, None) => {}
        }

        let agent = listener(activated.agent, &config.socket, 0o660)?;
        let admin = listener(activated.admin, &config.admin_socket, 0o600)?;
        let policy = Arc::clone(approvals.policy());
        let mut tasks = vec![
            server::serve(
                agent,
                crate::api::agent::router(state.clone()),
                Arc::clone(&policy),
                &[],
                shutdown.clone(),
            ),
            server::serve(
                admin,
                crate::api::admin::router(state.clone()),
                Arc::clone(&policy),
                &[],
                shutdown.clone(),
            ),
        ];
        tasks.extend(background);
        if let Some(port) = scrape_port {
            tracing::info!(addr = %config.metrics.listen.map_or(String::new(), |a| a.to_string()), "serving /metrics");
            tasks.push(server::serve(
                port,
                crate::api::metrics::router(Arc::clone(&metrics)),
                Arc::clone(&policy),
                &[],
                shutdown.clone(),
            ));
        }
        let web = web.map(|front| {
            let opened = (front.addr(), front.url());
            tasks.push(front.serve(state, shutdown));
            opened
        });
        tracing::info!(
            socket = %config.socket.display(),
            admin_socket = %config.admin_socket.display(),
            database = %match &config.postgres {
                Some(url) => url.redacted(),
                None => config.database.display().to_string(),
            },
            node = %config.node,
            landlock_abi = %crate::confine::abi().map_or("none".to_owned(), |abi| abi.to_string()),
            confine = %config.exec.confine,
            "execgate ready"
        );
        warn_of_short_hooks(&config);
        warn_of_no_confinement(&config);
        Ok(Daemon {
            approvals,
            store,
            config,
            stop,
            tasks,
            transports,
            owned_sockets,
            web,
            _lock: lock,
            _node_claim: node_claim,
        })
    }

    /// Where the approvals page listens, when it is on.
    pub fn web_addr(&self) -> Option<SocketAddr> {
        self.web.as_ref().map(|(addr, _)| *addr)
    }

    /// The approvals page's URL with its token, when it is on: for the owner's terminal,
    /// never for a log.
    pub fn web_url(&self) -> Option<&str> {
        self.web.as_ref().map(|(_, url)| url.as_str())
    }

    /// Puts a re-read configuration in force and reloads the allowlist, without dropping
    /// a connection or a pending request. An invalid configuration is refused with a log
    /// line and the running one stays. What only a restart can change (sockets, database,
    /// Telegram, Matrix, `web.listen`, `exec.max_concurrent`) keeps its running value,
    /// with a warning.
    pub async fn reload(&self, loaded: Result<Config, crate::config::ConfigError>) {
        let new = match loaded {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "reload refused: the new configuration is invalid; the running one stays");
                return;
            }
        };
        let old = &self.config;
        let mut needs_restart = Vec::new();
        if new.socket != old.socket || new.admin_socket != old.admin_socket {
            needs_restart.push("socket, admin_socket");
        }
        if new.database != old.database
            || new.postgres != old.postgres
            || new.database_busy_timeout_ms != old.database_busy_timeout_ms
        {
            needs_restart.push("database, database_busy_timeout_ms");
        }
        if new.node != old.node || format!("{:?}", new.cluster) != format!("{:?}", old.cluster) {
            needs_restart.push("node, cluster.*");
        }
        if format!("{:?}", new.telegram) != format!("{:?}", old.telegram)
            || new.telegram.bot_token != old.telegram.bot_token
        {
            needs_restart.push("telegram.*");
        }
        if format!("{:?}", new.matrix) != format!("{:?}", old.matrix)
            || new.matrix.access_token != old.matrix.access_token
            || new.matrix.password != old.matrix.password
        {
            needs_restart.push("matrix.*");
        }
        if format!("{:?}", new.slack) != format!("{:?}", old.slack)
            || new.slack.app_token != old.slack.app_token
            || new.slack.bot_token != old.slack.bot_token
        {
            needs_restart.push("slack.*");
        }
        if format!("{:?}", new.discord) != format!("{:?}", old.discord)
            || new.discord.bot_token != old.discord.bot_token
        {
            needs_restart.push("discord.*");
        }
        if new.web.listen != old.web.listen {
            needs_restart.push("web.listen");
        }
        if new.audit.chain != old.audit.chain {
            needs_restart.push("audit.chain");
        }
        if format!("{:?}", new.metrics) != format!("{:?}", old.metrics) {
            needs_restart.push("metrics.*");
        }
        if format!("{:?}", new.traces) != format!("{:?}", old.traces) {
            needs_restart.push("traces.*");
        }
        if new.exec.max_concurrent != old.exec.max_concurrent
            || new.exec.max_concurrent_per_uid != old.exec.max_concurrent_per_uid
        {
            needs_restart.push("exec.max_concurrent, exec.max_concurrent_per_uid");
        }
        for keys in &needs_restart {
            tracing::warn!(
                keys,
                "changed in the configuration; takes effect after a restart"
            );
        }
        let merged = Config {
            socket: old.socket.clone(),
            admin_socket: old.admin_socket.clone(),
            database: old.database.clone(),
            postgres: old.postgres.clone(),
            node: old.node.clone(),
            cluster: old.cluster.clone(),
            database_busy_timeout_ms: old.database_busy_timeout_ms,
            telegram: old.telegram.clone(),
            matrix: old.matrix.clone(),
            slack: old.slack.clone(),
            discord: old.discord.clone(),
            web: old.web.clone(),
            audit: old.audit.clone(),
            metrics: old.metrics.clone(),
            traces: old.traces.clone(),
            exec: crate::config::ExecConfig {
                max_concurrent: old.exec.max_concurrent,
                max_concurrent_per_uid: old.exec.max_concurrent_per_uid,
                ..new.exec
            },
            ..new
        };
        // The allowlist is re-read first, so that it goes in force with the configuration.
        let rules = match self.approvals.rules().await {
            Ok(rules) => Some(rules),
            Err(e) => {
                tracing::error!(error = %e, "the allowlist could not be re-read; the previous one stays in force");
                None
            }
        };
        warn_of_short_hooks(&merged);
        match self
            .approvals
            .policy()
            .reconfigure(Arc::new(merged), rules.as_deref())
        {
            Ok(()) if rules.is_some() => tracing::info!("configuration and allowlist reloaded"),
            Ok(()) => tracing::info!("configuration reloaded"),
            Err(e) => {
                tracing::error!(error = %e, "reload refused: the new policy does not compile; the running one stays")
            }
        }
        // An anchor at every reload too: `kill -HUP` asks for one.
        if self.config.audit.chain {
            self.approvals.log_audit_head().await;
        }
    }

    /// One line for `systemctl status`: what waits and what has been served.
    pub fn status_line(&self) -> String {
        format!(
            "{} pending, {} requests served",
            self.approvals.pending_count(),
            self.approvals.served()
        )
    }

    /// Whether the database answers: what the watchdog vouches for.
    ///
    /// On a shared PostgreSQL database, a database that does not answer is not this
    /// daemon's fault and a restart would not mend it: the daemon stays up (serving
    /// health, refusing what needs the store with 503) and recovers when the database
    /// does, so the watchdog is fed as long as the check itself finishes.
    pub async fn healthy(&self) -> bool {
        if self.store.shared().is_some() {
            // Bounded: a connection cut off by the network may hang rather than fail.
            let ping = tokio::time::timeout(SHARED_PING_TIMEOUT, self.store.ping()).await;
            if !matches!(ping, Ok(Ok(()))) {
                tracing::warn!(error = ?ping.map_err(|_| "timed out"), "the shared database does not answer; requests that need it fail with 503 until it does");
            }
            return true;
        }
        match self.store.ping().await {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, "the database does not answer");
                false
            }
        }
    }

    /// Stops accepting requests, cancels every pending one (via `shutdown`), lets
    /// connections finish, and removes the socket files it bound.
    pub async fn shutdown(self) {
        tracing::info!("shutting down: cancelling pending requests");
        self.approvals.shutdown().await;
        // Transports get a moment to show the cancellations before they stop.
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.stop.notify();
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
        for socket in &self.owned_sockets {
            let _ = std::fs::remove_file(socket);
        }
        self.store.close().await;
        // The last spans, cancellations included; the exporter blocks on its own thread.
        let metrics = Arc::clone(self.approvals.metrics());
        let _ = tokio::task::spawn_blocking(move || metrics.flush()).await;
        tracing::info!("execgate stopped");
    }
}

/// Connections a node keeps to a shared PostgreSQL database at most: enough for 64
/// concurrent requests to commit without queueing long, few enough for a dozen nodes on
/// a server's default `max_connections` (100).
const PG_CONNECTIONS: u32 = 8;

/// The chat transports this daemon runs (Telegram, Matrix, Slack, Discord; each when
/// configured).
struct Chats {
    telegram: Option<Telegram>,
    matrix: Option<Matrix>,
    slack: Option<Slack>,
    discord: Option<Discord>,
}

impl Chats {
    /// Connects what is configured. A Telegram, Slack or Discord token the service
    /// rejects, or a Matrix configuration that cannot work, is an error; a chat server that cannot be reached
    /// is not (each transport keeps trying).
    async fn connect(config: &Config, approvals: &Arc<Approvals>) -> Result<Chats, StartError> {
        let telegram = match config.telegram.bot_token {
            Some(_) => Some(
                Telegram::connect(&config.telegram, Arc::clone(approvals))
                    .await
                    .map_err(StartError::Telegram)?,
            ),
            None => None,
        };
        let matrix = match config.matrix.is_configured() {
            true => Some(
                Matrix::new(&config.matrix, &config.database, Arc::clone(approvals))
                    .map_err(StartError::Matrix)?,
            ),
            false => None,
        };
        let slack = match config.slack.is_configured() {
            true => Some(
                Slack::connect(&config.slack, Arc::clone(approvals))
                    .await
                    .map_err(StartError::Slack)?,
            ),
            false => None,
        };
        let discord = match config.discord.is_configured() {
            true => Some(
                Discord::connect(&config.discord, Arc::clone(approvals))
                    .await
                    .map_err(StartError::Discord)?,
            ),
            false => None,
        };
        Ok(Chats {
            telegram,
            matrix,
            slack,
            discord,
        })
    }

    /// Starts them; each ends when `shutdown` fires. `left`: requests the last run left
    /// pending, whose messages they edit.
    fn spawn(
        self,
        approvals: &Approvals,
        left: Arc<[crate::transport::Left]>,
        shutdown: &crate::shutdown::Shutdown,
    ) -> Vec<JoinHandle<()>> {
        let mut running = Vec::new();
        if let Some(telegram) = self.telegram {
            running.push(telegram.spawn(
                approvals.subscribe(),
                Arc::clone(&left),
                shutdown.clone(),
            ));
        }
        if let Some(matrix) = self.matrix {
            running.push(matrix.spawn(approvals.subscribe(), Arc::clone(&left), shutdown.clone()));
        }
        if let Some(slack) = self.slack {
            running.push(slack.spawn(approvals.subscribe(), Arc::clone(&left), shutdown.clone()));
        }
        if let Some(discord) = self.discord {
            running.push(discord.spawn(approvals.subscribe(), left, shutdown.clone()));
        }
        running
    }
}

/// How long the watchdog's check waits for a shared database.
const SHARED_PING_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a node whose chats would not start leaves the lead to others.
const CHATS_RETRY: Duration = Duration::from_secs(30);

/// The longest a rule's expiry waits to be recorded when no rule is due sooner (a rule
/// stops approving at its time whatever this does; the event keeps the moment).
const EXPIRIES_AT_MOST_EVERY: Duration = Duration::from_secs(60);

/// Records each rule's expiry as it comes, waking at the next rule's time, or when the
/// allowlist changes.
async fn record_expiries(
    approvals: Arc<Approvals>,
    mut events: tokio::sync::broadcast::Receiver<crate::approvals::Event>,
    mut shutdown: crate::shutdown::Shutdown,
) {
    loop {
        if let Err(e) = approvals.expire_rules().await {
            tracing::warn!(error = %e, "cannot record the rules that expired; trying again later");
        }
        let now = Utc::now();
        let next = match approvals.rules().await {
            Ok(rules) => rules
                .iter()
                .filter_map(|r| r.expires_at)
                .filter(|t| *t > now)
                .min()
                .and_then(|t| (t - now).to_std().ok())
                .map_or(EXPIRIES_AT_MOST_EVERY, |d| d.min(EXPIRIES_AT_MOST_EVERY)),
            Err(_) => EXPIRIES_AT_MOST_EVERY,
        };
        let wake = tokio::time::sleep(next);
        tokio::pin!(wake);
        loop {
            tokio::select! {
                _ = shutdown.recv() => return,
                () = &mut wake => break,
                event = events.recv() => match event {
                    // A rule changed: its time may come sooner. Not for the expiries
                    // recorded by this loop itself (they change nothing that is due).
                    Ok(crate::approvals::Event::Rules(told))
                        if !told.iter().all(|e| e.event == crate::model::RuleChange::Expired) => break,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    _ => {}
                },
            }
        }
    }
}

/// On a shared database: runs the chats whenever this node holds the leader's lock, and
/// stops them at once when the lock may be lost, until shutdown.
async fn lead_chats(
    cluster: Cluster,
    config: Arc<Config>,
    approvals: Arc<Approvals>,
    left: Arc<[crate::transport::Left]>,
    mut shutdown: crate::shutdown::Shutdown,
) {
    let mut left = Some(left);
    while let Some(mut lease) = cluster.lead(&mut shutdown).await {
        approvals.metrics().leading(true);
        let (term_over, term) = crate::shutdown::channel();
        let running = match Chats::connect(&config, &approvals).await {
            Ok(chats) => chats.spawn(
                &approvals,
                left.take().unwrap_or_else(|| Arc::from([])),
                &term,
            ),
            Err(e) => {
                // Let another node try: its configuration may be the one that works.
                tracing::error!(error = %e, "this node leads but cannot run the chats; giving the lead up for {}s", CHATS_RETRY.as_secs());
                lease.release().await;
                approvals.metrics().leading(false);
                tokio::select! {
                    _ = shutdown.recv() => return,
                    _ = tokio::time::sleep(CHATS_RETRY) => continue,
                }
            }
        };
        let lost = cluster.keep(&mut lease, &mut shutdown).await;
        approvals.metrics().leading(false);
        term_over.notify();
        for chat in running {
            if lost {
                // Another node may run the chats already: no post, no edit from here,
                // not even one finishing. What this node leaves, the next leader picks
                // up from the database.
                chat.abort();
                let _ = chat.await;
            } else if tokio::time::timeout(Duration::from_secs(15), chat)
                .await
                .is_err()
            {
                tracing::warn!("a chat transport did not stop within 15 s");
            }
        }
        if !lost {
            // Shutdown: the lock goes to another node now, not when the process ends.
            lease.release().await;
            return;
        }
    }
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

/// The socket systemd passed in, else one bound here at `path` with `mode`.
fn listener(
    passed: Option<std::os::unix::net::UnixListener>,
    path: &Path,
    mode: u32,
) -> Result<UnixListener, StartError> {
    match passed {
        Some(l) => UnixListener::from_std(l).map_err(|source| StartError::Io {
            what: "cannot use the socket systemd passed for",
            path: path.into(),
            source,
        }),
        None => bind(path, mode),
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

/// Says, once at start, what run mode will do on a kernel without Landlock: refuse every
/// confined verdict, unless the owner chose `exec.confine = "none"`.
fn warn_of_no_confinement(config: &Config) {
    match (crate::confine::abi(), config.exec.confine) {
        (None, crate::model::ConfineDefault::None) => tracing::warn!(
            "this kernel has no Landlock; exec.confine = \"none\": run mode runs approved commands unconfined"
        ),
        (None, _) if config.exec.enabled => tracing::warn!(
            "this kernel has no Landlock: run mode will refuse to run approved commands (they were approved to run confined); set exec.confine = \"none\" to run them unconfined"
        ),
        _ => {}
    }
}

/// Says which of execgate's hooks in this user's agents' settings will not wait the
/// whole `approval.timeout_secs` (see `cli::hook::install::short_timeouts`).
fn warn_of_short_hooks(config: &Config) {
    for line in crate::cli::hook::install::short_timeouts(config) {
        tracing::warn!("{line}");
    }
}
