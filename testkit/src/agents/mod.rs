//! The real coding agents (Claude Code, Codex, Gemini CLI, Copilot CLI, installed by
//! [`crate::peers`]) run offline against a [`ModelServer`] that plays a script, with
//! `execgate hook install AGENT` done in a temporary HOME against a test daemon: what a
//! user gets after installing the hook, with the model's choices fixed in advance.
//!
//! How each agent is pointed at the scripted server, and what it needs to run headless,
//! is INTEGRATIONS.md's "Checked against the real agents"; where this file knows more,
//! its comments say so.

mod model;

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

pub use model::{ModelServer, Received, Step, Wire};

use crate::{TestDaemon, peers};

/// How long an agent may run before the test gives up on it: each takes seconds
/// offline; a hook waiting for an owner who never answers is the test's to end.
pub const RUN_LIMIT: Duration = Duration::from_secs(90);

/// The prompt every run starts with; the script, not the prompt, decides what happens.
const PROMPT: &str = "Do the scripted task.";

/// A coding agent execgate has a hook for, driven for real.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Codex,
    Gemini,
    Copilot,
}

impl Agent {
    pub const ALL: [Agent; 4] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
    ];

    /// The word of `execgate hook AGENT`, and the agent's name at the daemon.
    pub fn word(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Copilot => "copilot",
        }
    }

    pub fn wire(self) -> Wire {
        match self {
            Agent::ClaudeCode => Wire::Anthropic,
            Agent::Codex => Wire::Responses,
            Agent::Gemini => Wire::Gemini,
            Agent::Copilot => Wire::ChatCompletions,
        }
    }

    /// The launcher, installed on first use (a missing agent fails the test, saying why).
    pub fn launcher(self) -> &'static Path {
        match self {
            Agent::ClaudeCode => peers::claude_code(),
            Agent::Codex => peers::codex(),
            Agent::Gemini => peers::gemini(),
            Agent::Copilot => peers::copilot(),
        }
    }

    /// The model's call of the agent's shell tool running `command`.
    pub fn shell(self, command: &str) -> Step {
        let (name, input) = match self {
            Agent::ClaudeCode => (
                "Bash",
                json!({"command": command, "description": "scripted"}),
            ),
            // Codex offers `exec_command` (a `shell` call is refused as unsupported).
            Agent::Codex => ("exec_command", json!({"cmd": command})),
            Agent::Gemini => (
                "run_shell_command",
                json!({"command": command, "description": "scripted"}),
            ),
            Agent::Copilot => (
                "bash",
                json!({"command": command, "description": "scripted"}),
            ),
        };
        Step::Call {
            name: name.into(),
            input,
        }
    }

    /// The model's edit of the file `path` (relative to the project) with the agent's
    /// own file tool: `old` becomes `new`. Claude Code edits only a file it has read in
    /// the session, so its script reads the file first (Read reaches no hook).
    pub fn edit(self, project: &Path, path: &str, old: &str, new: &str) -> Vec<Step> {
        let absolute = project.join(path).display().to_string();
        let call = |name: &str, input: Value| Step::Call {
            name: name.into(),
            input,
        };
        let patch = || {
            json!(format!(
                "*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"
            ))
        };
        match self {
            Agent::ClaudeCode => vec![
                call("Read", json!({"file_path": absolute})),
                call(
                    "Edit",
                    json!({"file_path": absolute, "old_string": old, "new_string": new}),
                ),
            ],
            // Freeform tools: the patch is the call's raw input.
            Agent::Codex | Agent::Copilot => vec![call("apply_patch", patch())],
            Agent::Gemini => vec![call(
                "replace",
                json!({"file_path": absolute, "old_string": old, "new_string": new,
                       "instruction": "scripted edit"}),
            )],
        }
    }

    /// The model's call of `tool` of execgate's MCP server (registered as [`MCP_SERVER`])
    /// with `input`, under the name the agent gives MCP tools. Codex defers MCP tools:
    /// the model searches for them first.
    pub fn mcp_call(self, tool: &str, input: Value) -> Vec<Step> {
        let call = |name: String| Step::Call { name, input };
        match self {
            Agent::ClaudeCode => vec![call(format!("mcp__{MCP_SERVER}__{tool}"))],
            Agent::Codex => vec![
                Step::ToolSearch {
                    query: format!("{MCP_SERVER} {tool}"),
                },
                call(format!("mcp__{MCP_SERVER}__{tool}")),
            ],
            Agent::Gemini => vec![call(format!("mcp_{MCP_SERVER}_{tool}"))],
            Agent::Copilot => vec![call(format!("{MCP_SERVER}-{tool}"))],
        }
    }

    /// The file `execgate hook install` writes under `home`.
    pub fn hook_settings_path(self, home: &Path) -> PathBuf {
        home.join(match self {
            Agent::ClaudeCode => ".claude/settings.json",
            Agent::Codex => ".codex/hooks.json",
            Agent::Gemini => ".gemini/settings.json",
            Agent::Copilot => ".copilot/hooks/execgate.json",
        })
    }
}

/// An agent set up to run: its home with execgate's hook installed, an empty project
/// directory, and the scripted model it will talk to.
pub struct AgentRun {
    pub agent: Agent,
    _dir: TempDir,
    /// The agent's `HOME`.
    pub home: PathBuf,
    /// Where the agent runs: its working directory and workspace.
    pub project: PathBuf,
    pub model: ModelServer,
    /// Whether `execgate mcp` is registered with the agent ([`AgentRun::add_mcp`]): the
    /// agent then starts with what it needs to offer MCP tools headless.
    mcp: bool,
    /// More of the agent's environment ([`AgentRun::env`]).
    env: Vec<(String, String)>,
}

/// The name `execgate mcp` is registered under: what agents prefix its tools with.
pub const MCP_SERVER: &str = "execgate";

/// A finished (or stopped) agent.
#[derive(Debug)]
pub struct Finished {
    /// `None` when the agent outlived [`RUN_LIMIT`] and was killed.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// Output and status, for an assertion's message.
    pub fn describe(&self) -> String {
        format!(
            "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// A running agent.
pub struct Running {
    child: tokio::process::Child,
}

impl Running {
    /// Whether the agent has exited.
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_some()
    }

    /// Waits for the agent (at most [`RUN_LIMIT`]; then kills it).
    pub async fn finish(mut self) -> Finished {
        use tokio::io::AsyncReadExt;
        let mut stdout = self.child.stdout.take().unwrap();
        let mut stderr = self.child.stderr.take().unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let wait = async {
            let (_, _, status) = tokio::join!(
                stdout.read_to_end(&mut out),
                stderr.read_to_end(&mut err),
                self.child.wait()
            );
            status.ok()
        };
        let status = tokio::time::timeout(RUN_LIMIT, wait).await.ok().flatten();
        if status.is_none() {
            let _ = self.child.kill().await;
        }
        Finished {
            status,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
        }
    }
}

impl AgentRun {
    /// Makes the agent's home and project, starts its model on `script`, writes the
    /// settings that point it there, and installs execgate's hook as a user would:
    /// `execgate --socket SOCKET hook install AGENT` with the daemon's configuration.
    pub async fn new(agent: Agent, daemon: &TestDaemon, script: Vec<Step>) -> AgentRun {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        // Paths the agents report back are canonical: compare like with like.
        let home = home.canonicalize().unwrap();
        let project = project.canonicalize().unwrap();
        let model = ModelServer::start(agent.wire(), script).await;
        write_settings(agent, &home, &model.url());
        let run = AgentRun {
            agent,
            _dir: dir,
            home,
            project,
            model,
            mcp: false,
            env: Vec::new(),
        };
        run.install_hook(daemon).await;
        run
    }

    async fn install_hook(&self, daemon: &TestDaemon) {
        self.install(daemon, &[]).await;
    }

    async fn install(&self, daemon: &TestDaemon, extra: &[&str]) {
        let mut env: Vec<(String, String)> = daemon
            .env
            .iter()
            .filter(|(k, _)| k != "HOME")
            .cloned()
            .collect();
        env.push(("HOME".into(), self.home.display().to_string()));
        let socket = daemon.config().socket.display().to_string();
        let mut args = vec!["--socket", &socket, "hook", "install", self.agent.word()];
        args.extend(extra);
        let out = crate::run_cli(&env, &args).await;
        assert!(
            out.status.success(),
            "execgate hook install {}: {}",
            self.agent.word(),
            crate::stderr(&out)
        );
    }

    /// The installed hook's settings, as JSON (execgate wrote them without comments).
    pub fn hook_settings(&self) -> Value {
        let path = self.agent.hook_settings_path(&self.home);
        let text = std::fs::read_to_string(&path).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// Installs the hook again with the agent's timeout for it set to `secs` seconds
    /// (`execgate hook install AGENT --timeout SECS`), as a user wanting a shorter wait
    /// would: shorter than the owner takes to answer.
    pub async fn install_hook_with_timeout(&self, daemon: &TestDaemon, secs: u64) {
        self.install(daemon, &["--timeout", &secs.to_string()])
            .await;
    }

    /// Registers `execgate mcp` (against `daemon`'s socket) with the agent under
    /// [`MCP_SERVER`], beside the hook, as a user would.
    pub async fn add_execgate_mcp(&mut self, daemon: &TestDaemon) {
        let socket = daemon.config().socket.display().to_string();
        let binary = crate::execgate_binary().display().to_string();
        self.add_mcp(&[&binary, "--socket", &socket, "mcp"]).await;
    }

    /// Registers the stdio MCP server `command` (program first) under [`MCP_SERVER`]
    /// with the agent's own `mcp add`: each writes its settings its own way.
    pub async fn add_mcp(&mut self, command: &[&str]) {
        let (program, args) = command.split_first().expect("a program");
        let mut add = vec!["mcp", "add"];
        match self.agent {
            Agent::ClaudeCode => add.extend(["-s", "user", MCP_SERVER, "--", program]),
            Agent::Codex | Agent::Copilot => add.extend([MCP_SERVER, "--", program]),
            // Gemini CLI takes the program before `--` and only its arguments after.
            Agent::Gemini => add.extend(["-s", "user", MCP_SERVER, program, "--"]),
        }
        add.extend(args);
        let out = tokio::process::Command::new(self.agent.launcher())
            .args(&add)
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap_or_else(|e| panic!("{} mcp add: {e}", self.agent.word()));
        assert!(
            out.status.success(),
            "{} {}: {}{}",
            self.agent.word(),
            add.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.mcp = true;
    }

    /// Starts the agent as a user runs it headless, after `execgate hook install`.
    /// Sets `key` in the agent's environment: one of its own settings
    /// (`MCP_TOOL_TIMEOUT`, say).
    pub fn env(&mut self, key: &str, value: &str) {
        self.env.push((key.into(), value.into()));
    }

    pub fn start(&self) -> Running {
        self.spawn(&[])
    }

    /// Runs the agent to its end (see [`Running::finish`]).
    pub async fn run(&self) -> Finished {
        self.start().finish().await
    }

    /// Like [`AgentRun::start`], but Codex runs with `--dangerously-bypass-hook-trust`:
    /// Codex skips a hook no one has trusted in its interactive `/hooks` screen, silently
    /// (issue 31, finding 1), so without the flag nothing reaches execgate. The other
    /// agents run as with `start`.
    pub fn start_bypassing_codex_hook_trust(&self) -> Running {
        match self.agent {
            Agent::Codex => self.spawn(&["--dangerously-bypass-hook-trust"]),
            _ => self.spawn(&[]),
        }
    }

    /// [`AgentRun::start_bypassing_codex_hook_trust`], to the agent's end.
    pub async fn run_bypassing_codex_hook_trust(&self) -> Finished {
        self.start_bypassing_codex_hook_trust().finish().await
    }

    fn spawn(&self, extra: &[&str]) -> Running {
        let url = self.model.url();
        let mut cmd = tokio::process::Command::new(self.agent.launcher());
        cmd.current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            // Codex asks for more input on a stdin that is not a terminal; none comes.
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        match self.agent {
            Agent::ClaudeCode => {
                cmd.envs([
                    ("ANTHROPIC_BASE_URL", url.as_str()),
                    ("ANTHROPIC_API_KEY", "scripted"),
                    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                    ("DISABLE_AUTOUPDATER", "1"),
                ])
                .args(["-p", PROMPT]);
                if self.mcp {
                    // In `-p` mode Claude Code refuses an MCP tool its rules do not allow.
                    cmd.args(["--allowedTools", &format!("mcp__{MCP_SERVER}")]);
                }
            }
            Agent::Codex => {
                // Its own sandbox is read-only by default: an approved command could not
                // write. The project is no git repository, which `exec` refuses unless told.
                cmd.env(CODEX_KEY_VAR, "scripted")
                    .args(["exec", "--skip-git-repo-check", "-s", "danger-full-access"])
                    .args(extra)
                    .arg(PROMPT);
            }
            Agent::Gemini => {
                // In `-p` mode Gemini CLI offers its shell and file tools only in yolo mode.
                cmd.envs([
                    ("GOOGLE_GEMINI_BASE_URL", url.as_str()),
                    ("GEMINI_API_KEY", "scripted"),
                    ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
                ])
                .args(["-p", PROMPT, "--approval-mode", "yolo"]);
            }
            Agent::Copilot => {
                // A GPT-5-family model makes Copilot offer the freeform `apply_patch`.
                cmd.envs([
                    ("COPILOT_OFFLINE", "true"),
                    ("COPILOT_PROVIDER_BASE_URL", &format!("{url}/v1")),
                    ("COPILOT_PROVIDER_API_KEY", "scripted"),
                    ("COPILOT_MODEL", "gpt-5.5"),
                ])
                .args(["-p", PROMPT, "--allow-all-tools"]);
            }
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{} starts: {e}", self.agent.launcher().display()));
        Running { child }
    }
}

/// The variable Codex reads its provider's key from (`env_key` in its config). Not
/// `EXECGATE_…`: the hook inherits the agent's environment, and execgate reads every
/// such variable as configuration (an unknown one fails the hook closed).
const CODEX_KEY_VAR: &str = "SCRIPTED_MODEL_KEY";

/// The agent's own settings that point it at the scripted model, written before
/// execgate's hook is installed beside them.
fn write_settings(agent: Agent, home: &Path, url: &str) {
    let write = |path: &str, text: String| {
        let path = home.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    match agent {
        // Claude Code and Copilot CLI take everything from the environment.
        Agent::ClaudeCode | Agent::Copilot => {}
        Agent::Codex => write(
            ".codex/config.toml",
            format!(
                "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\n\
                 [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{url}/v1\"\n\
                 wire_api = \"responses\"\nenv_key = \"{CODEX_KEY_VAR}\"\n"
            ),
        ),
        Agent::Gemini => write(
            ".gemini/settings.json",
            json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
        ),
    }
}

/// Whether a turn after the first carries `needle`: what the agent sent back to the model
/// once a tool call was made (its output, or why it did not run).
pub fn turns_mention(model: &ModelServer, needle: &str) -> bool {
    model
        .turns()
        .iter()
        .skip(1)
        .any(|body| body.to_string().contains(needle))
}
