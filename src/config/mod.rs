//! Layered configuration: built-in defaults < config file < `EXECGATE_…` environment <
//! command-line flags (docs/configuration.md#layers). `Debug` never shows a secret.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};

use crate::model::{Ask, AskFallback, ConfineDefault, Remember, Security};
mod cluster;
mod database;
mod discord;
mod matrix;
mod metrics;
mod reactions;
mod slack;
mod traces;
mod web;

pub use cluster::ClusterConfig;
pub use database::PostgresUrl;
pub use discord::{DISCORD_API_URL, DISCORD_GATEWAY_URL, DiscordConfig};
pub use matrix::MatrixConfig;
pub use metrics::MetricsConfig;
pub use reactions::{ReactionMap, ReactionMapError};
pub use slack::{SLACK_API_URL, SlackConfig, SlackPlace};
pub use traces::TracesConfig;
pub use web::WebConfig;

/// Environment variables with our prefix that are not configuration keys: they belong to
/// the CLI (or to logging) and must not be rejected as unknown keys.
const NON_CONFIG_ENV: &[&str] = &[
    "EXECGATE_CONFIG",
    "EXECGATE_LOG",
    "EXECGATE_LOG_FORMAT",
    "EXECGATE_AGENT",
];

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("config file {0} does not exist")]
    MissingFile(PathBuf),
    /// A config file or env file that cannot be read, or that someone other than
    /// execgate's user or root could have written.
    #[error(transparent)]
    File(#[from] crate::trusted_file::FileError),
    #[error("env file {path}: {message}", path = .0.display(), message = .1)]
    EnvFile(PathBuf, String),
    #[error("invalid configuration: {0}")]
    Load(#[from] config::ConfigError),
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// Values given on the command line; they override every other layer.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub config_file: Option<PathBuf>,
    /// The file `--env-file` loaded into the environment (see [`read_env_file`]); only
    /// recorded here, so that policy counts it among execgate's own files.
    pub env_file: Option<PathBuf>,
    pub socket: Option<PathBuf>,
    pub admin_socket: Option<PathBuf>,
    pub database: Option<PathBuf>,
    /// `serve --web`: the approvals page on at [`WebConfig::DEFAULT_LISTEN`] when
    /// `web.listen` is unset.
    pub web: bool,
}

/// The resolved configuration the daemon and the CLI run with.
#[derive(Clone, Debug)]
pub struct Config {
    /// Agent socket. Default: `$XDG_RUNTIME_DIR/execgate/agent.sock`, else
    /// `/tmp/execgate-$UID/agent.sock`.
    pub socket: PathBuf,
    /// Admin socket (mode 0600). Default: `admin.sock` beside `socket`.
    pub admin_socket: PathBuf,
    /// SQLite file. Default: `$XDG_STATE_HOME/execgate/execgate.db`, else
    /// `~/.local/state/execgate/execgate.db`. With [`Config::postgres`], no database is
    /// opened here: the path only places the files kept beside it (the lock, the page's
    /// token, the Matrix keys).
    pub database: PathBuf,
    /// `database = "postgres://…"`: the store is this PostgreSQL database, shared with
    /// the daemons of other hosts.
    pub postgres: Option<PostgresUrl>,
    /// This daemon's name among those sharing a database, stored on every row. Default:
    /// the host name.
    pub node: String,
    pub cluster: ClusterConfig,
    /// How long a write waits for SQLite's lock before the request fails with 503.
    /// Default: 5000.
    pub database_busy_timeout_ms: u64,
    /// Peer uids allowed on the admin socket. Default: the daemon's own uid.
    pub admin_uids: Vec<u32>,
    pub approval: ApprovalConfig,
    pub policy: PolicyConfig,
    /// Per-agent overrides, keyed by agent name.
    pub agents: BTreeMap<String, AgentConfig>,
    pub exec: ExecConfig,
    pub telegram: TelegramConfig,
    pub matrix: MatrixConfig,
    pub slack: SlackConfig,
    pub discord: DiscordConfig,
    pub web: WebConfig,
    pub audit: AuditConfig,
    pub limits: LimitsConfig,
    pub metrics: MetricsConfig,
    pub traces: TracesConfig,
    /// The file the configuration was read from, if any.
    pub source_file: Option<PathBuf>,
    /// The file `--env-file` loaded, if any.
    pub env_file: Option<PathBuf>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalConfig {
    /// Seconds a request waits for a human. Default: 120.
    pub timeout_secs: u64,
    /// When to ask a human. Default: `on-miss`.
    pub ask: Ask,
    /// What an unanswered request becomes. Default: `deny`.
    pub ask_fallback: AskFallback,
    /// How long rules saved by a human's answer ("always", "this session", time-boxed)
    /// last: `persist` (rows, kept) or `memory` (until the daemon stops). Default:
    /// `persist`.
    pub remember: Remember,
    /// When more requests wait for a chat than its pacing lets through, post them as
    /// digests (one message, a row of buttons a request); false: each waits for a
    /// message of its own. Default: true.
    pub digests: bool,
}

/// The audit trail (docs/audit.md).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditConfig {
    /// Chain every request's creation and resolution and every rule event in a hash
    /// chain, which `execgate audit verify` checks. Takes effect at a restart. Default:
    /// true.
    pub chain: bool,
}

impl Default for AuditConfig {
    fn default() -> Self {
        Self { chain: true }
    }
}

impl Default for ApprovalConfig {
    fn default() -> Self {
        Self {
            timeout_secs: 120,
            ask: Ask::OnMiss,
            ask_fallback: AskFallback::Deny,
            remember: Remember::Persist,
            digests: true,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Security mode for agents without their own. Default: `allowlist`.
    pub security: Security,
    /// Case-insensitive globs; a match on the command or any segment denies. Default: [].
    #[serde(deserialize_with = "string_list")]
    pub deny: Vec<String>,
    /// Programs that may run at all (names or absolute paths; `*` for any).
    /// Default: [] (no restriction).
    #[serde(deserialize_with = "string_list")]
    pub allowed_binaries: Vec<String>,
    /// Approve plain commands made only of known read-only programs. Default: true.
    pub safe_bins: bool,
    /// Tool calls (a request's `tool`).
    pub tools: ToolsConfig,
    /// Directories in which a request's cwd is its project when no git work tree holds
    /// it (beside `exec.allowed_cwd_roots`): reads inside the project are harmless.
    /// Default: [].
    #[serde(deserialize_with = "path_list")]
    pub project_roots: Vec<PathBuf>,
    /// Whether a recursive read inside the project (`grep -r`, `rg`, `find`) may pass a
    /// tree that holds secret files (`.env`, keys) without a human: the owner accepts
    /// that the program may show them to the agent. Default: false (asked).
    pub tree_reads_over_secrets: bool,
    /// The programs whose run inside the project is project work (its build and test
    /// tools, its interpreters): run by execgate confined to the project with no
    /// network, approved without a human (docs/decisions.md#project-work). Default:
    /// [`PROJECT_TOOLS`]; `[]` turns project work off.
    pub project_tools: Vec<String>,
}

/// The build and test tools and interpreters whose run inside the project is project
/// work by default.
pub const PROJECT_TOOLS: &[&str] = &[
    "cargo", "make", "npm", "npx", "pnpm", "yarn", "node", "tsc", "python", "python3", "uv",
    "pytest", "go", "bun", "deno", "jest", "vitest",
];

impl Default for PolicyConfig {
    fn default() -> Self {
        Self {
            security: Security::Allowlist,
            deny: vec![],
            allowed_binaries: vec![],
            safe_bins: true,
            tools: ToolsConfig::default(),
            project_roots: vec![],
            tree_reads_over_secrets: false,
            project_tools: PROJECT_TOOLS.iter().map(|t| (*t).to_owned()).collect(),
        }
    }
}

/// How tool calls are decided (docs/decisions.md, "Tool requests").
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// Case-insensitive globs over the tool's name; a match denies. Default: [].
    #[serde(deserialize_with = "string_list")]
    pub deny: Vec<String>,
    /// Read-only tools, by exact name, approved without a human when nothing in their
    /// input names a protected path. Default: the agents' own read-only tools
    /// ([`DEFAULT_SAFE_TOOLS`]).
    #[serde(deserialize_with = "string_list")]
    pub safe: Vec<String>,
    /// More paths (files or directories; `~/` is the home directory) whose mention in a
    /// tool call's input makes it dangerous, beside execgate's own files and the agents'
    /// guard settings. Default: [].
    #[serde(deserialize_with = "string_list")]
    pub protected: Vec<String>,
}

/// The coding agents' read-only tools, and those that only keep the agent's own notes,
/// as their hooks name them. Every tool goes through the hook, so these are what keeps
/// an ordinary read from reaching the owner; each is still judged by the path policy,
/// as `cat` or `grep -r` of its paths would be (a secret or a guard file is put to a
/// human). Tools that reach the network (`WebFetch`), start an agent (`Task`) or write a
/// memory the agent reads back (`save_memory`) are not here.
pub const DEFAULT_SAFE_TOOLS: [&str; 20] = [
    // Claude Code; `ToolSearch` loads a deferred tool's schema, `BashOutput` reads a
    // background shell's output (the shell was asked about), `TodoWrite` and
    // `ExitPlanMode` keep its plan.
    "Read",
    "Glob",
    "Grep",
    "LS",
    "NotebookRead",
    "ToolSearch",
    "BashOutput",
    "TodoWrite",
    "ExitPlanMode",
    // Gemini CLI (`search_file_content` is `grep_search`'s older name).
    "read_file",
    "read_many_files",
    "glob",
    "grep_search",
    "search_file_content",
    "list_directory",
    "write_todos",
    // Copilot CLI (`rg` is `grep`'s older name).
    "view",
    "grep",
    "rg",
    // Says what it is about to do, to its user.
    "report_intent",
    // Copilot CLI's `glob` is Gemini CLI's above; Codex reads through its shell.
];

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            deny: vec![],
            safe: DEFAULT_SAFE_TOOLS.map(String::from).to_vec(),
            protected: vec![],
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Overrides `policy.security` for this agent.
    pub security: Option<Security>,
    /// When set, only peers with one of these uids may speak as this agent.
    #[serde(deserialize_with = "opt_uid_list")]
    pub uids: Option<Vec<u32>>,
}

/// What one misbehaving client may take from everyone else.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// Requests from one uid waiting for a human at once; more get 429. Default: 50.
    pub max_pending_per_uid: usize,
    /// Requests from one uid put to a human in any minute, whether or not the agent
    /// waited for the answer; more get 429 `TOO_MANY_ASKS`. Default: 30.
    pub asks_per_minute_per_uid: usize,
    /// Open connections from one uid per socket; more are answered 429 and closed.
    /// Default: 64.
    pub max_connections_per_uid: usize,
    /// How long a client may take to send a request's headers and body. Default: 10000.
    pub request_read_timeout_ms: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            max_pending_per_uid: 50,
            asks_per_minute_per_uid: 30,
            max_connections_per_uid: 64,
            request_read_timeout_ms: 10_000,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExecConfig {
    /// Default: 30000.
    pub default_timeout_ms: u64,
    /// Default: 300000.
    pub max_timeout_ms: u64,
    /// Per stream. Default: 1048576.
    pub max_output_bytes: u64,
    /// Default: [] (any existing directory).
    #[serde(deserialize_with = "path_list")]
    pub allowed_cwd_roots: Vec<PathBuf>,
    /// Default: [].
    #[serde(deserialize_with = "string_list")]
    pub env_passthrough: Vec<String>,
    /// Approved commands that may run at once; the rest wait their turn. Default: 8.
    pub max_concurrent: usize,
    /// Of those, how many one uid's commands may take: one agent cannot hold every slot.
    /// Default: 4.
    pub max_concurrent_per_uid: usize,
    /// Whether run mode (`"run": true`) is available at all. Default: true.
    pub enabled: bool,
    /// How the kernel holds a command approved by a rule or a human (Landlock,
    /// docs/decisions.md#confinement): `workspace` (writes only in the project),
    /// `read-only`, or `none` (nothing is confined, harmless commands included; every
    /// approval says so). Default: `workspace`.
    pub confine: ConfineDefault,
    /// The toolchains' directories a harmless command and project work may read and
    /// run programs from (`~/` is the daemon's home). Default: cargo's, rustup's,
    /// npm's, the user cache and the usual language version managers'.
    #[serde(deserialize_with = "string_list")]
    pub toolchains: Vec<String>,
}

/// [`ExecConfig::toolchains`]'s default.
pub const TOOLCHAINS: &[&str] = &[
    "~/.cargo",
    "~/.rustup",
    "~/.npm",
    "~/.cache",
    "~/.nvm",
    "~/.pyenv",
    "~/.rbenv",
    "~/.volta",
    "~/.bun",
    "~/.deno",
    "~/go",
    "~/.local/share/mise",
    "~/.local/share/uv",
    "~/.local/share/pnpm",
];

impl Default for ExecConfig {
    fn default() -> Self {
        Self {
            default_timeout_ms: 30_000,
            max_timeout_ms: 300_000,
            max_output_bytes: 1_048_576,
            allowed_cwd_roots: vec![],
            env_passthrough: vec![],
            max_concurrent: 8,
            max_concurrent_per_uid: 4,
            enabled: true,
            confine: ConfineDefault::Workspace,
            toolchains: TOOLCHAINS.iter().map(|t| (*t).to_owned()).collect(),
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelegramConfig {
    /// The bot token. Unset: no Telegram transport.
    pub bot_token: Option<Secret>,
    /// Telegram user ids allowed to resolve requests.
    #[serde(deserialize_with = "i64_list")]
    pub owner_ids: Vec<i64>,
    /// Chat to post to. Default: the first owner (a private chat).
    pub chat_id: Option<i64>,
    /// Bot API base URL. Default: Telegram's.
    pub api_url: Option<String>,
    /// Reactions and what they mean, as `EMOJI=DECISION` items (e.g. `🔥=allow-once`).
    /// Default: 👍 allow-once, ✅ and 👌 allow-always, ❌ and 👎 deny.
    #[serde(deserialize_with = "string_list")]
    pub reactions: Vec<String>,
}

impl TelegramConfig {
    /// The chat requests are posted to and answers are accepted from.
    pub fn chat(&self) -> Option<i64> {
        self.chat_id.or_else(|| self.owner_ids.first().copied())
    }

    /// The reaction map in force: the configured one, else the default.
    pub fn reaction_map(&self) -> Result<ReactionMap, ConfigError> {
        if self.reactions.is_empty() {
            return Ok(ReactionMap::default());
        }
        ReactionMap::from_items("telegram.reactions", &self.reactions)
            .map_err(|e| ConfigError::Invalid(e.0))
    }

    /// Checks what can be checked without talking to Telegram.
    fn validate(&self) -> Result<(), ConfigError> {
        let bad = |msg: String| Err(ConfigError::Invalid(msg));
        self.reaction_map()?;
        let Some(token) = &self.bot_token else {
            return Ok(());
        };
        // BotFather tokens are `<bot id>:<secret>`; catching a pasted username or a
        // truncated token here beats a 401 loop later. The token itself is never echoed.
        let well_formed = token.expose().split_once(':').is_some_and(|(id, secret)| {
            !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_digit())
                && secret.len() >= 20
                && secret
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
        if !well_formed {
            return bad(
                "`telegram.bot_token` does not look like a bot token from @BotFather (digits, a colon, then at least 20 letters, digits, _ or -)".into(),
            );
        }
        if self.owner_ids.is_empty() {
            return bad(
                "`telegram.bot_token` is set but `telegram.owner_ids` is empty: nobody could answer a request. Set it to your numeric Telegram user id".into(),
            );
        }
        if let Some(id) = self.owner_ids.iter().find(|&&id| id <= 0) {
            return bad(format!(
                "`telegram.owner_ids` holds {id}, which is not a user id (user ids are positive; group and channel ids go in `telegram.chat_id`)"
            ));
        }
        if self.chat_id == Some(0) {
            return bad("`telegram.chat_id` must not be 0".into());
        }
        if let Some(url) = &self.api_url {
            match reqwest::Url::parse(url) {
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
                Ok(_) => {
                    return bad(format!(
                        "`telegram.api_url` {url:?} must be an http:// or https:// URL"
                    ));
                }
                Err(e) => return bad(format!("`telegram.api_url` {url:?}: {e}")),
            }
        }
        Ok(())
    }
}

/// A string that never appears in `Debug` or logs.
#[derive(Clone, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(secret: impl Into<String>) -> Secret {
        Secret(secret.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// The file layer as written: every key optional, unknown keys rejected.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Raw {
    socket: Option<PathBuf>,
    admin_socket: Option<PathBuf>,
    /// A SQLite file, or a `postgres://` URL.
    database: Option<String>,
    node: Option<String>,
    cluster: ClusterConfig,
    database_busy_timeout_ms: Option<u64>,
    #[serde(deserialize_with = "opt_uid_list")]
    admin_uids: Option<Vec<u32>>,
    approval: ApprovalConfig,
    policy: PolicyConfig,
    agents: BTreeMap<String, AgentConfig>,
    exec: ExecConfig,
    telegram: TelegramConfig,
    matrix: MatrixConfig,
    slack: SlackConfig,
    discord: DiscordConfig,
    web: WebConfig,
    audit: AuditConfig,
    limits: LimitsConfig,
    metrics: MetricsConfig,
    traces: TracesConfig,
}

impl Config {
    /// Loads every layer from the process environment and the filesystem.
    pub fn load(overrides: &Overrides) -> Result<Config, ConfigError> {
        let env: Vec<(String, String)> = std::env::vars().collect();
        Self::load_from(overrides, &env)
    }

    /// Loads with an explicit environment, so tests need not touch the process's.
    pub fn load_from(
        overrides: &Overrides,
        env: &[(String, String)],
    ) -> Result<Config, ConfigError> {
        let var = |name: &str| {
            env.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };

        let file = match &overrides.config_file {
            Some(path) if !path.exists() => return Err(ConfigError::MissingFile(path.clone())),
            Some(path) => Some(path.clone()),
            None => default_config_file(&var).filter(|p| p.exists()),
        };

        let mut builder = config::Config::builder();
        if let Some(path) = &file {
            // Read here, from the file that was checked, not by the config crate by name.
            let text = crate::trusted_file::read(path, "config file")?;
            builder = builder.add_source(config::File::from_str(&text, config::FileFormat::Toml));
        }
        let env_map: config::Map<String, String> = env
            .iter()
            .filter(|(k, _)| k.starts_with("EXECGATE_") && !NON_CONFIG_ENV.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        builder = builder.add_source(
            config::Environment::with_prefix("EXECGATE")
                .prefix_separator("_")
                .separator("__")
                .try_parsing(true)
                .ignore_empty(true)
                .source(Some(env_map)),
        );
        for (key, value) in [
            ("socket", &overrides.socket),
            ("admin_socket", &overrides.admin_socket),
            ("database", &overrides.database),
        ] {
            if let Some(v) = value {
                builder = builder.set_override(key, v.to_string_lossy().into_owned())?;
            }
        }
        let raw: Raw = builder
            .build()
            .map_err(|e| in_file(e, file.as_deref()))?
            .try_deserialize()?;
        let mut config = Self::resolve(raw, file, overrides.env_file.clone(), &var)?;
        if overrides.web {
            config.web.listen.get_or_insert(WebConfig::DEFAULT_LISTEN);
        }
        Ok(config)
    }

    fn resolve(
        raw: Raw,
        source_file: Option<PathBuf>,
        env_file: Option<PathBuf>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let uid = crate::sys::current_uid();
        let home = var("HOME").map(PathBuf::from);

        let socket = match raw.socket {
            Some(p) => p,
            None => match var("XDG_RUNTIME_DIR") {
                Some(dir) => Path::new(&dir).join("execgate/agent.sock"),
                None => PathBuf::from(format!("/tmp/execgate-{uid}/agent.sock")),
            },
        };
        let admin_socket = raw
            .admin_socket
            .unwrap_or_else(|| socket.parent().unwrap_or(Path::new("/")).join("admin.sock"));
        let (database, postgres) = match raw.database {
            Some(url) if PostgresUrl::looks_like(&url) => (
                None,
                Some(
                    PostgresUrl::parse(&url)
                        .map_err(|e| ConfigError::Invalid(format!("`database`: {e}")))?,
                ),
            ),
            Some(path) => (Some(PathBuf::from(path)), None),
            None => (None, None),
        };
        let database = match database {
            Some(p) => p,
            None => match (var("XDG_STATE_HOME"), home) {
                (Some(dir), _) => Path::new(&dir).join("execgate/execgate.db"),
                (None, Some(home)) => home.join(".local/state/execgate/execgate.db"),
                (None, None) => {
                    return Err(ConfigError::Invalid(
                        "`database` is not set and neither XDG_STATE_HOME nor HOME is".into(),
                    ));
                }
            },
        };

        let node = raw.node.unwrap_or_else(cluster::host_name);
        cluster::check_node(&node)?;
        raw.cluster.validate()?;
        let config = Config {
            socket,
            admin_socket,
            database,
            postgres,
            node,
            cluster: raw.cluster,
            database_busy_timeout_ms: raw.database_busy_timeout_ms.unwrap_or(5000),
            admin_uids: raw.admin_uids.unwrap_or_else(|| vec![uid]),
            approval: raw.approval,
            policy: raw.policy,
            agents: raw.agents,
            exec: raw.exec,
            telegram: raw.telegram,
            matrix: raw.matrix,
            slack: raw.slack,
            discord: raw.discord,
            web: raw.web,
            audit: raw.audit,
            limits: raw.limits,
            metrics: raw.metrics,
            traces: raw.traces,
            source_file,
            env_file,
        };
        config.validate()?;
        Ok(config)
    }

    /// Rejects values that would make the daemon behave in a way nobody intended.
    fn validate(&self) -> Result<(), ConfigError> {
        let bad = |msg: String| Err(ConfigError::Invalid(msg));
        if self.socket == self.admin_socket {
            return bad("`socket` and `admin_socket` must be different paths".into());
        }
        if self.approval.timeout_secs == 0 {
            return bad("`approval.timeout_secs` must be at least 1".into());
        }
        if self.admin_uids.is_empty() {
            return bad("`admin_uids` is empty: nobody could resolve a request".into());
        }
        if self.exec.default_timeout_ms == 0
            || self.exec.default_timeout_ms > self.exec.max_timeout_ms
        {
            return bad(format!(
                "`exec.default_timeout_ms` ({}) must be between 1 and `exec.max_timeout_ms` ({})",
                self.exec.default_timeout_ms, self.exec.max_timeout_ms
            ));
        }
        if self.limits.max_pending_per_uid == 0
            || self.limits.asks_per_minute_per_uid == 0
            || self.limits.max_connections_per_uid == 0
            || self.limits.request_read_timeout_ms == 0
        {
            return bad("every `limits.*` value must be at least 1".into());
        }
        if self.exec.max_concurrent == 0 || self.exec.max_concurrent_per_uid == 0 {
            return bad(
                "`exec.max_concurrent` and `exec.max_concurrent_per_uid` must be at least 1".into(),
            );
        }
        if self.exec.max_output_bytes == 0 {
            return bad("`exec.max_output_bytes` must be at least 1".into());
        }
        for name in self.agents.keys() {
            if !crate::model::AgentName::is_valid(name) {
                return bad(format!(
                    "agent name {name:?} in [agents] must match [A-Za-z0-9._-]{{1,64}}"
                ));
            }
        }
        for pattern in &self.policy.deny {
            compile_deny_glob(pattern).map_err(|e| {
                ConfigError::Invalid(format!("`policy.deny` pattern {pattern:?}: {e}"))
            })?;
        }
        for pattern in &self.policy.tools.deny {
            compile_deny_glob(pattern).map_err(|e| {
                ConfigError::Invalid(format!("`policy.tools.deny` pattern {pattern:?}: {e}"))
            })?;
        }
        for name in &self.policy.tools.safe {
            if !crate::model::ToolCall::valid_name(name) {
                return bad(format!(
                    "`policy.tools.safe` entry {name:?} is not a tool name ([A-Za-z0-9._:-]{{1,128}})"
                ));
            }
        }
        for path in &self.policy.tools.protected {
            if !(path.starts_with('/') || path.starts_with("~/")) {
                return bad(format!(
                    "`policy.tools.protected` entry {path:?} must be an absolute path or start with ~/"
                ));
            }
        }
        self.telegram.validate()?;
        self.matrix.validate()?;
        self.slack.validate()?;
        self.discord.validate()?;
        self.traces.validate()?;
        self.web.validate()
    }

    /// True when at least one chat transport is configured (the console is then off).
    pub fn has_chat(&self) -> bool {
        self.telegram.bot_token.is_some()
            || self.matrix.is_configured()
            || self.slack.is_configured()
            || self.discord.is_configured()
    }

    /// The security mode in force for `agent`.
    pub fn security_for(&self, agent: &str) -> Security {
        self.agents
            .get(agent)
            .and_then(|a| a.security)
            .unwrap_or(self.policy.security)
    }
}

/// A chat's section is all or nothing: an error naming the keys still to set when some
/// of `keys` (each with whether it is missing) are set and others are not.
fn whole_section(chat: &str, section: &str, keys: &[(&str, bool)]) -> Result<(), ConfigError> {
    let missing: Vec<&str> = keys
        .iter()
        .filter_map(|&(key, absent)| absent.then_some(key))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(ConfigError::Invalid(format!(
        "the {chat} transport is half configured: set {} too (or unset every {section}.* key)",
        missing.join(", ")
    )))
}

/// A syntax error in the config file, said with the file's name (the text was handed to
/// the config crate without it).
fn in_file(e: config::ConfigError, file: Option<&Path>) -> ConfigError {
    match (e, file) {
        (config::ConfigError::FileParse { cause, .. }, Some(path)) => {
            ConfigError::Invalid(format!("config file {}: {cause}", path.display()))
        }
        (e, _) => e.into(),
    }
}

/// The variables of an env file (`KEY=value` lines, `#` comments, quotes as in a shell;
/// the `.env` format), read from a file only execgate's user or root can have written.
/// Nothing is read implicitly: only the file `--env-file` names.
pub fn read_env_file(path: &Path) -> Result<Vec<(String, String)>, ConfigError> {
    let text = crate::trusted_file::read(path, "env file")?;
    dotenvy::from_read_iter(text.as_bytes())
        .map(|item| item.map_err(|e| ConfigError::EnvFile(path.into(), e.to_string())))
        .collect()
}

fn default_config_file(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let xdg = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| Path::new(&h).join(".config")))
        .map(|dir| dir.join("execgate/execgate.toml"));
    match xdg {
        Some(p) if p.exists() => Some(p),
        _ => Some(PathBuf::from("/etc/execgate/execgate.toml")),
    }
}

/// A list given either as a TOML array or as one comma-separated string (the form the
/// environment layer produces). A lone number arrives as a number after `try_parsing`.
#[derive(Deserialize)]
#[serde(untagged)]
enum ListOrScalar {
    List(Vec<Scalar>),
    One(Scalar),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Int(i64),
    Bool(bool),
    Float(f64),
    Str(String),
}

impl Scalar {
    fn into_string(self) -> String {
        match self {
            Scalar::Int(i) => i.to_string(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Str(s) => s,
        }
    }
}

fn items<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match ListOrScalar::deserialize(d)? {
        ListOrScalar::List(v) => v.into_iter().map(Scalar::into_string).collect(),
        ListOrScalar::One(s) => s
            .into_string()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
    })
}

fn string_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    items(d)
}

fn path_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
    Ok(items(d)?.into_iter().map(PathBuf::from).collect())
}

fn numbers<'de, D: Deserializer<'de>, T: std::str::FromStr>(
    d: D,
    what: &str,
) -> Result<Vec<T>, D::Error> {
    items(d)?
        .into_iter()
        .map(|s| {
            s.parse::<T>()
                .map_err(|_| serde::de::Error::custom(format!("{s:?} is not a valid {what}")))
        })
        .collect()
}

fn opt_uid_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u32>>, D::Error> {
    numbers(d, "uid").map(Some)
}

fn i64_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<i64>, D::Error> {
    numbers(d, "Telegram user id")
}

/// A `policy.deny` pattern as policy matches it: case-insensitive (`RM -RF` is `rm -rf`),
/// `*` crossing `/`. Compiled here, where the configuration is checked, so that a bad
/// pattern stops the load; policy compiles the same way.
pub fn compile_deny_glob(pattern: &str) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(false)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(env: &[(&str, &str)], file: Option<&str>) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let mut env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        env.push(("HOME".into(), dir.path().display().to_string()));
        let mut overrides = Overrides::default();
        if let Some(text) = file {
            let path = dir.path().join("execgate.toml");
            std::fs::write(&path, text).unwrap();
            overrides.config_file = Some(path);
        }
        Config::load_from(&overrides, &env)
    }

    #[test]
    fn defaults_follow_the_contract() {
        let c = load(
            &[
                ("XDG_RUNTIME_DIR", "/run/user/7"),
                ("XDG_STATE_HOME", "/state"),
            ],
            None,
        )
        .unwrap();
        assert_eq!(c.socket, PathBuf::from("/run/user/7/execgate/agent.sock"));
        assert_eq!(
            c.admin_socket,
            PathBuf::from("/run/user/7/execgate/admin.sock")
        );
        assert_eq!(c.database, PathBuf::from("/state/execgate/execgate.db"));
        assert_eq!(c.approval.timeout_secs, 120);
        assert_eq!(c.approval.ask, Ask::OnMiss);
        assert_eq!(c.approval.ask_fallback, AskFallback::Deny);
        assert_eq!(c.policy.security, Security::Allowlist);
        assert!(c.policy.safe_bins);
        assert_eq!(c.exec.max_output_bytes, 1_048_576);
        assert_eq!(c.admin_uids, vec![crate::sys::current_uid()]);
    }

    #[test]
    fn fallbacks_without_xdg() {
        let c = load(&[], None).unwrap();
        let uid = crate::sys::current_uid();
        assert_eq!(
            c.socket,
            PathBuf::from(format!("/tmp/execgate-{uid}/agent.sock"))
        );
        assert!(c.database.ends_with(".local/state/execgate/execgate.db"));
    }

    #[test]
    fn env_beats_file_and_lists_split_on_commas() {
        let file = "[approval]\ntimeout_secs = 60\n[telegram]\nowner_ids = [1]\n";
        let c = load(
            &[
                ("EXECGATE_APPROVAL__TIMEOUT_SECS", "30"),
                ("EXECGATE_TELEGRAM__OWNER_IDS", "123,456"),
                (
                    "EXECGATE_TELEGRAM__BOT_TOKEN",
                    "123:abcdefghijklmnopqrstuvwxyz",
                ),
                ("EXECGATE_POLICY__DENY", "rm -rf *, shutdown*"),
                ("EXECGATE_AGENTS__BUILDER__UIDS", "1000"),
                ("EXECGATE_SOCKET", "/x/agent.sock"),
                ("EXECGATE_CONFIG", "ignored-by-config"),
            ],
            Some(file),
        )
        .unwrap();
        assert_eq!(c.approval.timeout_secs, 30);
        assert_eq!(c.telegram.owner_ids, vec![123, 456]);
        assert_eq!(
            c.telegram.bot_token.as_ref().unwrap().expose(),
            "123:abcdefghijklmnopqrstuvwxyz"
        );
        assert_eq!(c.policy.deny, vec!["rm -rf *", "shutdown*"]);
        assert_eq!(c.agents["builder"].uids, Some(vec![1000]));
        assert_eq!(c.admin_socket, PathBuf::from("/x/admin.sock"));
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        let c = load(
            &[
                (
                    "EXECGATE_TELEGRAM__BOT_TOKEN",
                    "123:very-secret-very-secret",
                ),
                ("EXECGATE_TELEGRAM__OWNER_IDS", "42"),
            ],
            None,
        )
        .unwrap();
        assert!(!format!("{c:?}").contains("very-secret"));
        assert_eq!(c.telegram.chat(), Some(42));
    }

    /// `.env.example` documents every variable: uncommented, all of them together must
    /// form a valid configuration that says what the file says.
    #[test]
    fn the_env_example_is_a_valid_configuration() {
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/.env.example"));
        let vars: Vec<(String, String)> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# EXECGATE_"))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (format!("EXECGATE_{k}"), v.trim_matches('\'').to_string()))
            // A config file that must exist is not something an example can promise.
            .filter(|(k, _)| k != "EXECGATE_CONFIG")
            .collect();
        assert!(vars.len() > 25, "{} variables", vars.len());
        let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let c = load(&pairs, None).unwrap();
        assert_eq!(c.telegram.chat(), Some(-1001234567890));
        assert_eq!(c.policy.deny, ["rm -rf /*", "*mkfs*"]);
        assert_eq!(c.web.listen, Some(WebConfig::DEFAULT_LISTEN));
        assert_eq!(
            c.telegram.reaction_map().unwrap().decision("👌"),
            Some(crate::model::Decision::AllowAlways)
        );
        assert_eq!(
            c.slack.place(),
            Some(SlackPlace::Channel("C0123ABCD45".into()))
        );
        assert_eq!(c.slack.owner_ids, ["U0123ABCD45"]);
        assert_eq!(
            c.slack.reaction_map().unwrap().decision(":x:"),
            Some(crate::model::Decision::Deny)
        );
    }

    #[test]
    fn discord_settings_load_from_the_file_and_the_environment() {
        const TOKEN: &str =
            "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhXyZa.abcdefghijklmnopqrstuvwxyz0123456789ABCD";
        let token = ("EXECGATE_DISCORD__BOT_TOKEN", TOKEN);
        let c = load(
            &[
                token,
                ("EXECGATE_DISCORD__OWNER_IDS", "111111111111111111,222"),
                ("EXECGATE_DISCORD__CHANNEL_ID", "1300000000000000001"),
            ],
            None,
        )
        .unwrap();
        assert!(c.has_chat());
        assert_eq!(c.discord.owner_ids, [111111111111111111, 222]);
        assert_eq!(c.discord.channel_id, Some(1300000000000000001));
        assert!(!format!("{c:?}").contains(TOKEN));
        let file =
            "[discord]\nchannel_id = \"42\"\nowner_ids = [\"7\", 8]\nreactions = [\"🔥=deny\"]\n";
        let c = load(&[token], Some(file)).unwrap();
        assert_eq!(
            (c.discord.channel_id, &c.discord.owner_ids[..]),
            (Some(42), &[7, 8][..])
        );
        let err = |env: &[(&str, &str)]| load(env, None).unwrap_err().to_string();
        assert!(err(&[token]).contains("set discord.owner_ids"));
        let e = err(&[token, ("EXECGATE_DISCORD__OWNER_IDS", "@me")]);
        assert!(e.contains("not a valid Discord id"), "{e}");
        let e = err(&[("EXECGATE_DISCORD__CHANNEL_ID", "general")]);
        assert!(e.contains("not a Discord id"), "{e}");
    }

    #[test]
    fn telegram_settings_are_checked_before_anything_starts() {
        const TOKEN: &str = "123456:AAbbCCddEEffGGhhIIjjKK-_";
        let err = |env: &[(&str, &str)]| load(env, None).unwrap_err().to_string();
        let token = ("EXECGATE_TELEGRAM__BOT_TOKEN", TOKEN);
        let owner = ("EXECGATE_TELEGRAM__OWNER_IDS", "111");
        assert!(err(&[token]).contains("owner_ids` is empty"));
        assert!(
            err(&[token, ("EXECGATE_TELEGRAM__OWNER_IDS", "-100123")]).contains("not a user id")
        );
        let bad_token = err(&[("EXECGATE_TELEGRAM__BOT_TOKEN", "@my_bot"), owner]);
        assert!(bad_token.contains("does not look like a bot token"));
        assert!(!bad_token.contains("my_bot"), "the token is never echoed");
        assert!(
            err(&[token, owner, ("EXECGATE_TELEGRAM__API_URL", "ftp://x")]).contains("http://")
        );
        assert!(
            err(&[token, owner, ("EXECGATE_TELEGRAM__REACTIONS", "🔥")]).contains("EMOJI=DECISION")
        );
        assert!(
            err(&[token, owner, ("EXECGATE_TELEGRAM__REACTIONS", "🔥=maybe")]).contains("maybe")
        );

        let c = load(
            &[
                token,
                ("EXECGATE_TELEGRAM__OWNER_IDS", "111,222"),
                ("EXECGATE_TELEGRAM__CHAT_ID", "-100777"),
                ("EXECGATE_TELEGRAM__REACTIONS", "🔥=allow-once,💩=deny"),
            ],
            None,
        )
        .unwrap();
        assert_eq!(c.telegram.chat(), Some(-100777));
        let map = c.telegram.reaction_map().unwrap();
        assert_eq!(map.decision("🔥"), Some(crate::model::Decision::AllowOnce));
        assert_eq!(map.decision("💩"), Some(crate::model::Decision::Deny));
        assert_eq!(
            map.decision("👍"),
            None,
            "a configured map replaces the default"
        );
    }

    #[test]
    fn metrics_are_on_the_admin_socket_only_unless_an_address_is_given() {
        let c = load(&[], None).unwrap();
        assert!(c.metrics.enabled);
        assert_eq!(c.metrics.listen, None);
        let c = load(
            &[
                ("EXECGATE_METRICS__ENABLED", "false"),
                ("EXECGATE_METRICS__LISTEN", "127.0.0.1:9187"),
            ],
            None,
        )
        .unwrap();
        assert!(!c.metrics.enabled);
        assert_eq!(c.metrics.listen, Some("127.0.0.1:9187".parse().unwrap()));
        let c = load(&[], Some("[metrics]\nlisten = \"[::1]:9187\"\n")).unwrap();
        assert_eq!(c.metrics.listen, Some("[::1]:9187".parse().unwrap()));
        let e = load(&[("EXECGATE_METRICS__LISTEN", "localhost")], None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("listen"), "{e}");
    }

    #[test]
    fn the_web_page_is_off_unless_configured_or_asked_for() {
        assert_eq!(load(&[], None).unwrap().web.listen, None);
        let c = load(&[("EXECGATE_WEB__LISTEN", "127.0.0.1:9123")], None).unwrap();
        assert_eq!(c.web.listen, Some("127.0.0.1:9123".parse().unwrap()));
        let c = load(&[], Some("[web]\nlisten = \"[::1]:8000\"\n")).unwrap();
        assert_eq!(c.web.listen, Some("[::1]:8000".parse().unwrap()));
        let e = load(&[("EXECGATE_WEB__LISTEN", "localhost:8787")], None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("web.listen"), "{e}");

        // `serve --web`: the default address, unless one is configured.
        let dir = tempfile::tempdir().unwrap();
        let home = vec![("HOME".to_string(), dir.path().display().to_string())];
        let web = Overrides {
            web: true,
            ..Default::default()
        };
        let c = Config::load_from(&web, &home).unwrap();
        assert_eq!(c.web.listen, Some(WebConfig::DEFAULT_LISTEN));
        let mut env = home.clone();
        env.push(("EXECGATE_WEB__LISTEN".into(), "127.0.0.1:9000".into()));
        let c = Config::load_from(&web, &env).unwrap();
        assert_eq!(c.web.listen, Some("127.0.0.1:9000".parse().unwrap()));
    }

    #[test]
    fn bad_config_is_named() {
        let err =
            |env: &[(&str, &str)], file: Option<&str>| load(env, file).unwrap_err().to_string();
        assert!(err(&[], Some("[approval]\ntimeot_secs = 5\n")).contains("timeot_secs"));
        assert!(err(&[("EXECGATE_APPROVAL__ASK", "sometimes")], None).contains("sometimes"));
        assert!(err(&[("EXECGATE_TELEGRAM__OWNER_IDS", "12,abc")], None).contains("abc"));
        assert!(err(&[("EXECGATE_APPROVAL__TIMEOUT_SECS", "0")], None).contains("timeout_secs"));
        assert!(
            err(&[("EXECGATE_EXEC__DEFAULT_TIMEOUT_MS", "999999")], None)
                .contains("max_timeout_ms")
        );
        let missing = Overrides {
            config_file: Some("/nonexistent/x.toml".into()),
            ..Default::default()
        };
        assert!(
            Config::load_from(&missing, &[])
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
    }
}
