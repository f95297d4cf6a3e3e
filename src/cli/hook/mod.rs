//! `execgate hook`: the coding agents' pre-tool hooks.
//!
//! `execgate hook AGENT` is run by the agent once per tool call: it reads the agent's
//! JSON on stdin, asks the daemon over the agent socket, waits for the terminal record
//! and answers allow or deny in that agent's own format. It never answers "ask", and
//! every failure is a deny with the agent's blocking exit code. `execgate hook
//! install|uninstall AGENT` adds or removes execgate's one entry in the agent's settings.

pub mod install;
mod json_edit;

/// The coding agents execgate has a hook for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum HookAgent {
    /// Claude Code (PreToolUse).
    ClaudeCode,
    /// OpenAI Codex CLI (PreToolUse and PermissionRequest).
    Codex,
    /// Gemini CLI (BeforeTool).
    Gemini,
    /// Cursor (beforeShellExecution).
    Cursor,
    /// GitHub Copilot CLI (preToolUse).
    Copilot,
}

impl HookAgent {
    /// The word on the command line, and the default agent name.
    pub fn word(self) -> &'static str {
        match self {
            HookAgent::ClaudeCode => "claude-code",
            HookAgent::Codex => "codex",
            HookAgent::Gemini => "gemini",
            HookAgent::Cursor => "cursor",
            HookAgent::Copilot => "copilot",
        }
    }
}
