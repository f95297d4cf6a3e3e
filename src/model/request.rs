//! A request as execgate judges, records and runs it: built once from what the agent
//! sent (the API's wire struct, validated), then handed down unchanged.

use super::{AgentName, Command, InputSummary, Shell};

/// The fronts a request may name (docs/api.md); what `/metrics` labels requests by.
pub const FRONTS: &[&str] = &[
    "api",
    "cli",
    "hook:claude-code",
    "hook:codex",
    "hook:gemini",
    "hook:cursor",
    "hook:copilot",
    "mcp",
    "web",
];

/// `front` as a metric's label: one of [`FRONTS`], `none` when the client did not say.
pub fn front_label(front: Option<&str>) -> &'static str {
    match front {
        None => "none",
        Some(f) => FRONTS.iter().find(|k| **k == f).copied().unwrap_or("other"),
    }
}

/// One validated request. The API builds it with the configuration in force when the
/// request arrived; policy judges it, the store records it, and in run mode the command
/// that runs is its `command`.
#[derive(Clone, Debug)]
pub struct RequestSpec {
    pub agent: AgentName,
    pub session: Option<String>,
    pub command: Command,
    /// The canonical working directory, when the request gave one (run mode always has
    /// one): the directory opened at validation, by the path it was found at.
    pub cwd: Option<String>,
    pub reason: Option<String>,
    /// The door the request came through (`api`, `cli`, `hook:claude-code`, …), as the
    /// client said: for the record, never for a decision.
    pub front: Option<String>,
    /// Run mode: execgate itself runs the command once approved.
    pub run: bool,
    /// Decide-only: the shell the agent said it will run a `Line` with.
    pub shell: Option<Shell>,
    /// The request's stdin, as the owner is shown it.
    pub input: Option<InputSummary>,
    /// The kernel's word on who sent it (`SO_PEERCRED`).
    pub peer_uid: Option<u32>,
    pub peer_pid: Option<i32>,
}
