//! execgate: a daemon that puts a human between AI agents and the shell.
//!
//! An agent asks, over `agent.sock`, to run a command. Policy decides at once where it
//! can; otherwise a human is asked through a transport, and the answer comes back exactly
//! once. Every request and decision is a row in SQLite. Anything that fails, fails closed.
//!
//! A tour, in the order a request travels:
//!
//! - [`api`]: the agent and admin HTTP APIs over Unix sockets (peer uid from the kernel),
//!   the accept loop that caps connections per uid and cuts off slow clients, and
//!   (`api::wire`) the check of each request head before hyper reads it, so that every
//!   error is the JSON error body and an early answer is not lost to a reset.
//! - [`policy`]: the decision pipeline: security mode, deny list, allowed binaries, shell
//!   analysis, allowlist, safe binaries, when to ask. Its program profiles
//!   (`policy::programs`) say what every word of a known program means, read as the
//!   program reads it; nothing is approved without a human that they cannot account for.
//! - [`approvals`]: pending requests, waiters, timeouts and exactly-once resolution.
//! - [`runs`]: run mode's queue (`exec.max_concurrent`) and its recorded results.
//! - [`exec`]: run mode: running an approved command in its own process group, with a
//!   cleared environment, capped output and a timeout that kills the whole group.
//! - [`workdir`]: a run's working directory, opened once when the request is checked, so
//!   that the command runs in the directory that was checked.
//! - [`store`]: every SQL statement, behind one struct; schema in `migrations/`. Reads use
//!   a read-only pool; every write goes through one writer task that commits concurrent
//!   writes together (`store/writer.rs`, group commit).
//! - [`transport`]: putting requests in front of a human (Telegram, or the console when
//!   no chat is configured) and the chat grammar every transport shares.
//! - [`daemon`]: `execgate serve`: startup (lock, crash sweep, transports, sockets),
//!   reload and shutdown.
//! - [`config`]: layered configuration (defaults < file < environment < flags), and
//!   [`trusted_file`]: reading the config file and `--env-file` only when nobody but
//!   execgate's user or root could have written them.
//! - [`client`] and [`cli`]: the `execgate` command-line verbs, speaking HTTP to the sockets.
//! - [`model`]: the contract's words (statuses, decisions, channels) and the record.
//! - [`yaml`]: the YAML rendering of a run's result, for tool fronts.
//! - [`systemd`]: readiness, watchdog and socket activation.
//! - [`error`]: API errors; [`sys`]: the few raw system calls.

pub mod api;
pub mod approvals;
pub mod cli;
pub mod client;
pub mod config;
pub mod daemon;
pub mod exec;
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
pub mod workdir;
pub mod yaml;
