//! execgate: a daemon that puts a human between AI agents and the shell.
//!
//! An agent asks, over `agent.sock`, to run a command. Policy decides at once where it
//! can; otherwise a human is asked through a transport, and the answer comes back exactly
//! once. Every request and decision is a row in SQLite. Anything that fails, fails closed.
//!
//! The layers, from the top: the daemon wires the fronts together; the fronts (API,
//! transports, CLI, the web page) never import each other, save the page, which serves
//! the admin API's routes through the API's server loop; below them approvals and the
//! run queue; then policy and the store; then configuration; and the model and small
//! leaf helpers at the bottom. `tests/layers.rs` checks that every import points down
//! and that no two sibling modules import each other. `docs/` holds the contract the
//! code keeps.
//!
//! A tour, in the order a request travels:
//!
//! - [`api`]: the agent and admin HTTP APIs over Unix sockets (peer uid from the kernel),
//!   the accept loop that caps connections per uid and cuts off slow clients (a loopback
//!   TCP client of the page by the uid the kernel's socket tables name, `api::tcp_uid`),
//!   (`api::wire`) the check of each request head before hyper reads it, and
//!   (`api::error`) the JSON error body. The agent API checks a request once, with the
//!   settings in force, into a [`model::RequestSpec`].
//! - [`policy`]: the decision pipeline: security mode, deny list, allowed binaries, shell
//!   analysis, allowlist, safe binaries, when to ask, by one [`policy::Settings`] per
//!   request; for a tool call (`policy::tools`), its name and the paths its input
//!   names. One path policy (`policy::paths`) judges a command's operands and a tool's
//!   paths alike, by the file each reaches (symlinks followed, device and inode). The
//!   configuration gates (`policy::gitrepo`, `policy::progconfig`) read what a program
//!   would read from where it runs; `policy::wildcard` says what a glob's wildcard may
//!   cover of a program without a profile. Its program profiles (`policy::programs`) say what every word of a known
//!   program means, read as the program reads it; nothing is approved without a human
//!   that they cannot account for; `policy::confinement` draws what the kernel will allow
//!   the command it approved to run (`Verdict::confine`).
//! - [`approvals`]: pending requests, waiters, timeouts and exactly-once resolution; the
//!   allowlist's rules (checked, stored, put in force); the analysis threads and the
//!   per-uid ask rate; (`approvals::late`) the owner's answer kept for the same call
//!   asked again after its hook had to answer first; and (`approvals::audit`) the audit
//!   chain's face: verify, export, the head logged, the check at start.
//! - [`runs`]: run mode's queue (`exec.max_concurrent`) and its recorded results.
//! - [`exec`]: run mode: running an approved command in its own process group, with a
//!   cleared environment, capped output, a timeout that kills the whole group and the
//!   kernel's hold on what it may touch ([`confine`]: Landlock, from a plan policy draws
//!   for the verdict, `policy::confinement`).
//! - [`workdir`]: a run's working directory, opened once when the request is checked, so
//!   that the command runs in the directory that was checked.
//! - [`store`]: every SQL statement, behind one struct, on SQLite through rusqlite;
//!   schema in `migrations/`. Reads use a few read-only connections; every write goes
//!   through one writer thread that commits concurrent writes together (group commit).
//!   Every change to the allowlist is a rule event, and (`store::audit`) every request's
//!   creation and resolution and every rule event is vouched for by a hash chain,
//!   appended in the same transaction, which `execgate audit verify` walks.
//! - [`transport`]: putting requests in front of a human (Telegram, Matrix, Slack and
//!   Discord, all at once when several are configured; the console when no chat is), the
//!   chat grammar every transport shares, the message every chat shows
//!   (`transport::card`), which chat message shows which request (`transport::posted`),
//!   one driver that runs every chat and takes a request's message from post to final
//!   edit (`transport::chat`: a chat is a `Service` and the task that reads its answers;
//!   a burst beyond a chat's pacing goes out as digests, `transport::chat::digest` and
//!   `transport::card::digest`), and how every chat lives through its service's outages
//!   (`transport::health`: one backoff, an outage logged once; `transport::limiter`: the
//!   pace of what is posted). The Matrix transport (`transport::matrix`) keeps its own
//!   device and end-to-end encryption keys; the Slack transport (`transport::slack`)
//!   reads answers over Socket Mode; the Discord transport (`transport::discord`) keeps
//!   a gateway connection for answers and posts over REST.
//! - [`render`] and [`text`]: the text a human reads about a request, and the helpers
//!   that make an agent's text visible and clip it, shared by every front.
//! - [`web`]: the approvals page, a front beside the admin socket: a single page served
//!   on `web.listen`, the owner's queue live with its answers, history and allowlist,
//!   behind a token ([`web_token`]: made once, kept beside the database), an exact
//!   `Host`, a same-origin check and a strict Content-Security-Policy.
//! - [`daemon`]: `execgate serve`: startup (lock, crash sweep, transports, sockets),
//!   reload and shutdown ([`shutdown`]: the signal every task stops on).
//! - [`config`]: layered configuration (defaults < file < environment < flags), with the
//!   reaction map and deny patterns checked as it loads, and [`trusted_file`]: reading
//!   the config file and `--env-file` only when nobody but execgate's user or root could
//!   have written them.
//! - [`client`] and [`cli`]: the `execgate` command-line verbs, speaking HTTP to the sockets;
//!   among them (`cli::hook`) the coding agents' hooks, which answer each agent in its own
//!   format, and the editing of those agents' settings that installs them (everything
//!   known about one agent in one file of `cli::hook::agents`), answering before the
//!   agent's own timeout, and letting a call to execgate's own MCP server through
//!   (`cli::hook::own_mcp`), which asks for it itself; and
//!   (`cli::mcp`) the MCP server, whose tools ask over the agent socket like any agent,
//!   with the narrowing its environment sets, progress while a human decides, and a
//!   cancelled call cancelling its request; and (`cli::audit`) `audit verify`, `audit
//!   export` and `history --rules`.
//! - [`model`]: the contract's words (statuses, decisions, channels), what a request is
//!   (`Command`: a shell line, an argv or a tool call; `RequestSpec`, `AgentName`) and the
//!   record it becomes.
//! - [`metrics`]: what the daemon counts (requests by verdict, answer and analysis times,
//!   the chats' deliveries, runs, commits, the cluster's lead), one registry per daemon,
//!   served as `/metrics` on the admin socket and on `metrics.listen` (`api::metrics`);
//!   and (`metrics::traces`) a span per request for an OTLP collector, when one is set.
//! - [`yaml`]: the YAML rendering of a run's result, for tool fronts.
//! - [`systemd`]: readiness, watchdog and socket activation; [`sys`]: the few raw system
//!   calls.

// The Matrix SDK's futures are deeply nested types.
#![recursion_limit = "256"]

pub mod api;
pub mod approvals;
pub mod cli;
pub mod client;
pub mod cluster;
pub mod config;
pub mod confine;
pub mod daemon;
pub mod exec;
pub mod metrics;
pub mod model;
pub mod policy;
pub mod render;
pub mod runs;
pub mod shutdown;
pub mod store;
pub mod sys;
pub mod systemd;
pub mod text;
pub mod transport;
pub mod trusted_file;
pub mod web;
pub mod web_token;
pub mod workdir;
pub mod yaml;
