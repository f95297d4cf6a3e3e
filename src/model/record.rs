//! What a request became: the record the API returns and the store keeps, with what a
//! run produced; and an allowlist rule as it is shown.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Command, Decision, Risk, RuleKind, Status, Via};

/// What an executed command produced (run mode). Filled by the executor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecResult {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub stdout: String,
    pub stderr: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// Everything the command wrote to each stream, including what the cap discarded.
    #[serde(default)]
    pub stdout_bytes: u64,
    #[serde(default)]
    pub stderr_bytes: u64,
    /// The captured bytes were not valid UTF-8 and were converted lossily (U+FFFD).
    #[serde(default)]
    pub stdout_lossy: bool,
    #[serde(default)]
    pub stderr_lossy: bool,
    /// What went wrong, if anything: could not start, timed out.
    #[serde(default)]
    pub error: Option<String>,
    /// How the kernel held the command (`workspace`, `harmless`, …); None: it never
    /// started, or ran before confinement was recorded.
    #[serde(default)]
    pub confinement: Option<super::Confine>,
    /// What the confined command reported the kernel refused it (its own error lines:
    /// `Permission denied`, `Operation not permitted`), at most five.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_refused: Vec<String>,
}

/// One request and everything decided about it: the API's response body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    pub short_id: String,
    pub agent: String,
    pub session: Option<String>,
    /// Serialised as the request's `command` and `argv` fields, one of them null.
    #[serde(flatten)]
    pub command: Command,
    pub cwd: Option<String>,
    pub reason: Option<String>,
    pub status: Status,
    pub decision: Option<Decision>,
    /// When the rule this decision saved expires: set only for a time-boxed grant
    /// (`/approve a1b2 30m`, `always 7d`, `session 2h`).
    #[serde(default)]
    pub rule_expires_at: Option<DateTime<Utc>>,
    pub via: Option<Via>,
    pub decided_by: Option<String>,
    pub risk: Risk,
    pub risk_reasons: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub run: bool,
    pub result: Option<ExecResult>,
    pub error: Option<String>,
    /// The uid and pid of the process that sent the request over the agent socket.
    #[serde(default)]
    pub peer_uid: Option<u32>,
    #[serde(default)]
    pub peer_pid: Option<i32>,
    /// What the request's stdin was, as the owner was shown it; None without `input`.
    #[serde(default)]
    pub input: Option<InputSummary>,
    /// The door the request came through (`api`, `cli`, `hook:claude-code`, …), as its
    /// client said; None when it did not say.
    #[serde(default)]
    pub front: Option<String>,
    /// The daemon that took the request (`node`: the host name unless configured): where
    /// its agent waits, when daemons on several hosts share one database.
    #[serde(default)]
    pub node: String,
    /// For a request put to a human: the rule a grant would save, or why none may be
    /// saved, judged when it was asked. Kept with the request so that any daemon sharing
    /// the database can answer it; not part of the API's body (the event stream's
    /// `offer` says it).
    #[serde(skip)]
    pub grant: Option<GrantDraft>,
    /// How the kernel will hold the command if execgate runs it: chosen with the
    /// verdict, shown to whoever decides. None for a request that runs nothing.
    #[serde(default)]
    pub confinement: Option<super::Confine>,
}

/// The rule a grant answering a request would save, or why no grant is offered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantDraft {
    /// The exact command (normalized) or the tool's name.
    pub pattern: String,
    pub kind: super::RuleKind,
    /// Why "always" (and so every grant that saves a rule) is refused; None: offered.
    pub refused: Option<String>,
}

/// SHA-256 in lowercase hex: how the owner tells apart two texts too long to show whole.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A request's stdin as the owner sees it: part of what is approved (`tee notes.txt`,
/// `git apply`, `make -f -` do what their input says), so shown with the command. The
/// input itself goes to the command only and is never stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputSummary {
    /// Its size in bytes.
    pub bytes: u64,
    /// Its SHA-256, in lowercase hex: what tells two inputs apart beyond the head.
    pub sha256: String,
    /// Its first [`InputSummary::HEAD_CHARS`] characters, as sent (displays escape them).
    pub head: String,
}

impl InputSummary {
    /// How much of the input is kept and shown.
    pub const HEAD_CHARS: usize = 200;

    pub fn of(input: &str) -> InputSummary {
        InputSummary {
            bytes: input.len() as u64,
            sha256: sha256_hex(input.as_bytes()),
            head: input.chars().take(Self::HEAD_CHARS).collect(),
        }
    }

    /// Whether the head is the whole input.
    pub fn is_whole(&self) -> bool {
        self.head.len() as u64 == self.bytes
    }
}

/// The fixed message a request that was not approved carries (docs/api.md#statuses-decisions-and-via).
pub fn not_approved_error(command: &Command, status: Status) -> Option<String> {
    match status {
        Status::Pending | Status::Approved => None,
        other => Some(format!(
            "{} was not approved ({other})",
            what_is_asked(command)
        )),
    }
}

/// What a request asks for, in a refusal: a tool call is not a command, and an agent
/// told "command was not approved" for its file write looks for the wrong thing.
pub fn what_is_asked(command: &Command) -> &'static str {
    match command {
        Command::Tool(_) => "tool call",
        Command::Line(_) | Command::Argv(_) => "command",
    }
}

/// An allowlist rule as the API and CLI show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    pub id: i64,
    /// `None` means the rule applies to every agent.
    pub agent: Option<String>,
    /// `Some`: the rule applies to this session of `agent` only (a "this session"
    /// grant); `None`: to every session.
    #[serde(default)]
    pub session: Option<String>,
    pub pattern: String,
    pub kind: RuleKind,
    pub created_at: DateTime<Utc>,
    pub created_by: String,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub last_command: Option<String>,
    pub use_count: i64,
    /// The request whose decision saved the rule; `None` for a rule added directly.
    #[serde(default)]
    pub source_request: Option<String>,
    /// True for a rule that lasts until the daemon stops (`approval.remember =
    /// "memory"`): its row is removed at the next start.
    #[serde(default)]
    pub memory: bool,
}

/// A change to an allowlist rule, as recorded: a row never updated or deleted, which
/// keeps what the rule was even once it is gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleEvent {
    pub id: i64,
    pub rule_id: i64,
    pub event: super::RuleChange,
    pub at: DateTime<Utc>,
    /// Who: the person (as a decision's `decided_by`), or `execgate` for what it does
    /// itself (an expiry, a rule kept only until a restart).
    pub actor: String,
    /// From which front: a decision's `via` (`telegram-button`, `cli`, `web`, …);
    /// `None` for execgate's own.
    pub via: Option<String>,
    /// The request whose answer made the change.
    pub request: Option<String>,
    pub agent: Option<String>,
    pub session: Option<String>,
    pub pattern: String,
    pub kind: RuleKind,
    pub expires_at: Option<DateTime<Utc>>,
    pub memory: bool,
    pub node: String,
}

impl Rule {
    /// Who the rule applies to, in words: "every agent", "agent claude", "agent
    /// claude, session s1".
    pub fn scope(&self) -> String {
        scope(self.agent.as_deref(), self.session.as_deref())
    }
}

impl RuleEvent {
    /// Who the rule applied to when the event was recorded, as [`Rule::scope`] says it.
    pub fn scope(&self) -> String {
        scope(self.agent.as_deref(), self.session.as_deref())
    }
}

/// A rule's scope in words, from its agent and session.
fn scope(agent: Option<&str>, session: Option<&str>) -> String {
    match (agent, session) {
        (None, _) => "every agent".into(),
        (Some(a), None) => format!("agent {a}"),
        (Some(a), Some(s)) => format!("agent {a}, session {s}"),
    }
}
