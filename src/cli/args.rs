//! The command line's words: verbs, flags and their help, as clap reads them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::Overrides;
use crate::model::Status;

pub use super::hook::HookAgent;

#[derive(Debug, Parser)]
#[command(
    name = "execgate",
    version,
    about = "Puts a human between AI agents and the shell"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Args)]
pub struct Global {
    /// Configuration file (default: $XDG_CONFIG_HOME/execgate/execgate.toml, or ~/.config/execgate/execgate.toml, else /etc/execgate/execgate.toml).
    #[arg(long, global = true, env = "EXECGATE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Load environment variables (KEY=value lines) from FILE; variables already set win.
    /// No file is read unless named here (a `.env` in the working directory is not).
    #[arg(long, global = true, value_name = "FILE")]
    pub env_file: Option<PathBuf>,
    /// Agent socket path (overrides `socket`).
    #[arg(long, global = true, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Admin socket path (overrides `admin_socket`).
    #[arg(long, global = true, value_name = "PATH")]
    pub admin_socket: Option<PathBuf>,
    /// SQLite database path (overrides `database`).
    #[arg(long, global = true, value_name = "PATH")]
    pub database: Option<PathBuf>,
}

impl Global {
    pub fn overrides(&self) -> Overrides {
        Overrides {
            config_file: self.config.clone(),
            env_file: self.env_file.clone(),
            socket: self.socket.clone(),
            admin_socket: self.admin_socket.clone(),
            database: self.database.clone(),
            web: false,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Verb {
    /// Run the daemon.
    Serve(ServeArgs),
    /// Ask for a decision on a command and print the record.
    /// Exit 0 approved, 1 not approved (or still pending with --no-wait), 2 error.
    Request(RequestArgs),
    /// Ask for a command and run it once approved (run mode); print its output.
    /// Exit: the command's own code (128+N when killed by signal N), 124 timed out,
    /// 126 not approved, 127 could not start, 125 execgate error.
    Run(RunArgs),
    /// Run a command here, confined by the kernel (Landlock) as execgate confines what it
    /// runs: by default as a harmless command (reads the project and the system, writes
    /// nothing, runs only its own programs, no network). Asks nobody. Exit: the command's
    /// own, or 126 when the confinement cannot be built or put on (nothing runs then).
    Confine(ConfineArgs),
    /// List requests waiting for a human, and approved commands waiting to run.
    Pending(JsonFlag),
    /// List past requests, newest first; with --rules, the allowlist's history.
    History(HistoryArgs),
    /// The audit trail: check the hash chain over requests and rule events, or export it.
    #[command(subcommand)]
    Audit(AuditVerb),
    /// Print one request whole, as the chats show it: command, cwd, input (size, sha256,
    /// escaped head), run mode, agent and uid, risk and reasons, and how it stands.
    /// Exit 0; 2 when no request has the id.
    Show {
        /// Short id (a1b2) or full id.
        id: String,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Approve a pending request: once (default), always (saves an exact rule for the
    /// agent) or session (saves it for the request's session only); a duration (30m,
    /// 2h, 7d) makes the rule expire, and alone means "always" for that long.
    Approve {
        /// Short id (a1b2) or full id.
        id: String,
        /// once, always or session; or a duration alone (`execgate approve a1b2 30m`).
        mode: Option<String>,
        /// How long the rule lasts: a number and s, m, h, d or w (at most 366d).
        duration: Option<String>,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Deny a pending request.
    Deny {
        id: String,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Manage the allowlist.
    #[command(subcommand)]
    Allow(AllowVerb),
    /// A coding agent's pre-tool hook: `execgate hook AGENT` reads the agent's hook JSON
    /// on stdin, asks execgate, waits, and answers allow or deny in the agent's format;
    /// `execgate hook install|uninstall AGENT` edits the agent's settings; `execgate hook
    /// status` says whether each agent runs execgate's entry.
    Hook(HookArgs),
    /// An MCP server on stdin/stdout, for MCP clients (Claude Code, Codex, Gemini CLI, …):
    /// tools that ask execgate and, once approved, run (docs/mcp.md). `--socket` names
    /// the daemon's agent socket; ALLOWED_COMMANDS and ALLOWED_CWD_ROOTS narrow what it
    /// asks for.
    Mcp(McpArgs),
    /// The approvals page.
    #[command(subcommand)]
    Web(WebVerb),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve the approvals page, at web.listen or, when that is unset, 127.0.0.1:8787.
    #[arg(long)]
    pub web: bool,
}

#[derive(Debug, Subcommand)]
pub enum WebVerb {
    /// Print the page's URL with its token (from the configuration and the token file
    /// beside the database; no running daemon needed).
    Url,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The agent name to ask as (default: mcp).
    #[arg(long = "agent", env = "EXECGATE_AGENT", value_name = "NAME")]
    pub agent_name: Option<String>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct HookArgs {
    #[command(subcommand)]
    pub setup: Option<HookSetup>,
    /// The coding agent whose hook JSON arrives on stdin.
    #[arg(value_enum, required = true)]
    pub which: Option<HookAgent>,
    /// The agent name to ask as (default: the AGENT word).
    #[arg(long = "agent", env = "EXECGATE_AGENT", value_name = "NAME")]
    pub agent_name: Option<String>,
    /// The agent's own timeout for this hook, in seconds, as installed (default: the
    /// agent's default). The hook answers before it, with a deny naming the request
    /// still waiting: some agents run the tool when they kill a hook at its timeout.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
}

#[derive(Debug, Subcommand)]
pub enum HookSetup {
    /// Add execgate's hook entry to the agent's settings (a backup of the file is kept).
    Install(HookSetupArgs),
    /// Remove execgate's hook entry from the agent's settings.
    Uninstall(HookSetupArgs),
    /// Say, per agent, whether execgate's entry is present, current (as install would
    /// write it now) and active (run by the agent: for Codex, trusted). Exits 0 when every
    /// entry there is current and active (and, with AGENT, when it is there at all).
    Status(HookStatusArgs),
}

#[derive(Debug, Args)]
pub struct HookStatusArgs {
    /// One agent; every agent when absent.
    #[arg(value_enum)]
    pub which: Option<HookAgent>,
    /// The project's settings (DIR/.claude/settings.json, …) instead of the user's.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HookSetupArgs {
    #[arg(value_enum)]
    pub which: HookAgent,
    /// The project's settings (DIR/.claude/settings.json, …) instead of the user's.
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print the settings file as it would be written; change nothing.
    #[arg(long)]
    pub print: bool,
    /// install: the agent's timeout for the hook, in seconds (default:
    /// approval.timeout_secs + 30). The hook answers before it; when the owner has not
    /// answered by then, with a deny naming the request, whose answer the same call made
    /// again gets.
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(2..))]
    pub timeout: Option<u64>,
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What `request` and `run` both say about who asks, where, and why.
#[derive(Debug, Args)]
pub struct AskArgs {
    /// The agent name to ask as.
    #[arg(long, env = "EXECGATE_AGENT", default_value = "cli")]
    pub agent: String,
    /// Working directory for the command (relative: to where you run this).
    #[arg(long)]
    pub cwd: Option<String>,
    /// Why the command is needed (shown to the approver).
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct RequestArgs {
    #[command(flatten)]
    pub ask: AskArgs,
    /// Session id, for session-scoped grants.
    #[arg(long)]
    pub session: Option<String>,
    /// Return at once with the pending record instead of waiting.
    #[arg(long)]
    pub no_wait: bool,
    #[command(flatten)]
    pub json: JsonFlag,
    /// One argument: a shell command line. Several: a program and its arguments (no shell).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub ask: AskArgs,
    /// Execution timeout in milliseconds (default `exec.default_timeout_ms`).
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// text: the command's stdout and stderr as they are; json: the record; yaml:
    /// exit_code, stdout and stderr (plus timed_out and error when set).
    #[arg(long, value_enum, default_value = "text")]
    pub format: RunFormat,
    /// One argument: a shell command line (run with /bin/sh -c). Several: a program and
    /// its arguments (no shell). Standard input is passed to the command.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ConfineArgs {
    /// Read what this user can; write nothing.
    #[arg(long, conflicts_with = "workspace")]
    pub read_only: bool,
    /// Read what this user can; write only under the project (never its guard
    /// settings).
    #[arg(long)]
    pub workspace: bool,
    /// Allow TCP connections (with --read-only or --workspace).
    #[arg(long)]
    pub network: bool,
    /// One argument: a shell command line (run with /bin/sh -c). Several: a program and
    /// its arguments (no shell).
    #[arg(last = true, required = true, value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum RunFormat {
    Text,
    Json,
    Yaml,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    #[arg(long, conflicts_with = "rules")]
    pub agent: Option<String>,
    #[arg(long, conflicts_with = "rules")]
    pub status: Option<Status>,
    /// The allowlist's history instead: every rule added, renewed, expired or removed,
    /// by whom, from which front, answering which request.
    #[arg(long)]
    pub rules: bool,
    #[arg(long, default_value_t = 20)]
    pub limit: u32,
    #[command(flatten)]
    pub json: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum AuditVerb {
    /// Walk the hash chain and report the first entry edited, inserted or deleted, and
    /// every row no entry vouches for. Exit 0 intact, 1 broken, 2 error.
    Verify {
        /// A head the daemon logged (`NODE:SEQ:HASH`): it must still be in the chain.
        #[arg(long)]
        head: Option<String>,
        #[command(flatten)]
        json: JsonFlag,
    },
    /// Write the chain as JSON Lines (each entry with its hashes and the row it vouches
    /// for), for a SIEM.
    Export {
        /// Write to this file (created with mode 0600) instead of stdout.
        #[arg(long, short)]
        output: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum AllowVerb {
    /// Add a rule: exact by default, a glob with --glob.
    Add {
        /// Limit the rule to one agent (default: every agent).
        #[arg(long)]
        agent: Option<String>,
        /// Treat PATTERN as a glob (matched per command segment).
        #[arg(long)]
        glob: bool,
        /// A tool rule: PATTERN is a glob over tool names (`Write`, `mcp__github__get_*`).
        #[arg(long, conflicts_with = "glob")]
        tool: bool,
        /// Accept a glob that would approve nearly everything.
        #[arg(long)]
        force: bool,
        /// When the rule stops applying (RFC 3339, e.g. 2026-12-01T00:00:00Z).
        #[arg(long)]
        expires_at: Option<String>,
        #[command(flatten)]
        json: JsonFlag,
        /// The command (exact) or glob; several words are joined with spaces.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        pattern: Vec<String>,
    },
    /// List rules.
    List(JsonFlag),
    /// Remove a rule by id.
    Rm { id: i64 },
    /// Suggest glob rules from history: each would have approved at least MIN requests
    /// a human approved in the last DAYS days, and none a human denied.
    Suggest {
        /// How far back to look.
        #[arg(long, default_value_t = 30)]
        days: u32,
        /// How many approvals a rule must have saved to be suggested.
        #[arg(long, default_value_t = 3)]
        min: u32,
        #[command(flatten)]
        json: JsonFlag,
    },
}
