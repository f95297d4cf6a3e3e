//! What execgate's integration tests and benches share, compiled once. Tests name it
//! `common` (`use execgate_testkit as common;`), as when it was their `tests/common/`, so
//! everything a test reaches as `common::…` is at this crate's root or in its public
//! modules:
//!
//! - [`TestDaemon`] (`daemon`): a real daemon on temp sockets and a temp SQLite file,
//!   started in-process, and the requests users make of it over its sockets and console.
//! - [`env_for`], [`config_for`], [`db_path`], [`uid()`](fn@uid) (`env`): where a test daemon
//!   keeps its files, and the configuration that says so.
//! - [`run_cli`], [`stdout`], [`stderr`] (`cli`) and [`execgate_binary`] (`binary`): the
//!   real `execgate` binary, run as a user runs it.
//! - [`eventually`], [`send_and_hold`]: waiting for a condition; a request left hanging.
//! - [`db`]: the daemon's database opened behind its back, and its write lock held.
//! - [`events`]: a reader of the admin socket's event stream (`GET /v1/events`).
//! - [`process`]: `execgate serve` as a child process (signals, exit codes, restarts).
//! - [`uid`](mod@uid): a hostile agent on uid 65534.
//! - [`heavy`]: commands as costly to analyse as execgate allows, for floods.
//! - [`fake_telegram`]: a fake Telegram Bot API server.
//! - [`fake_slack`]: a fake Slack: its Web API and Socket Mode.
//! - [`fake_discord`]: a fake Discord, its REST API and its gateway.
//! - [`peers`]: outside programs the tests drive (the MCP clients, Synapse, Chromium,
//!   PostgreSQL, Prometheus, the coding agents), installed on first use; [`synapse`]: a real Matrix
//!   homeserver on a free port, and [`matrix_owner`]: the owner's Matrix client;
//!   [`browser`]: a headless Chromium over WebDriver.
//! - [`agents`]: the real coding agents (Claude Code, Codex, Gemini CLI, Copilot CLI)
//!   with execgate's hook installed, run offline against a scripted model server.
//! - [`postgres`]: a real PostgreSQL server on a Unix socket in a temp directory, one
//!   shared by a test binary's tests or one of a test's own, stopped with its process.
//! - [`web`](mod@web): the approvals page's port, reached with the headers a test chooses.
//! - [`corpus`]: the bypass corpus, commands with the verdicts policy must reach.
//! - [`policy_bench`]: the benches' 10,000-rule policy over that corpus.
//! - [`oracle`]: a real program run under `strace` in a throwaway sandbox, and whether
//!   what it did agrees with execgate calling it harmless.

mod binary;
mod cli;
mod daemon;
mod env;
mod listener;
mod wait;

pub mod agents;
pub mod browser;
pub mod corpus;
pub mod db;
pub mod events;
pub mod fake_discord;
pub mod fake_slack;
pub mod fake_telegram;
pub mod fatigue;
pub mod heavy;
pub mod matrix_owner;
pub mod oracle;
pub mod peers;
pub mod policy_bench;
pub mod postgres;
pub mod process;
pub mod synapse;
pub mod uid;
pub mod web;

pub use binary::execgate_binary;
pub use cli::{run_cli, stderr, stdout};
pub use daemon::{TestDaemon, send_and_hold};
pub use env::{config_for, db_path, env_for, on_postgres, on_sqlite_file, uid};
pub use wait::eventually;
