//! The words of the contract: statuses, decisions, channels, risk, and the request record.
//!
//! Every enum here serialises to the exact strings of DESIGN.md §2, and the same
//! strings are stored in SQLite, so `as_str`/`FromStr` are the single mapping.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Declares a string-backed enum with `as_str`, `FromStr`, `Display` and serde in one place,
/// so the wire, the database and the CLI can never disagree about a word.
macro_rules! words {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)+
                    other => Err(format!(
                        "unknown {} {:?} (expected one of: {})",
                        stringify!($name).to_lowercase(),
                        other,
                        [$($text),+].join(", ")
                    )),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

words!(
    /// Where a request stands. Only `Pending` ever changes, and only once.
    Status {
        Pending => "pending",
        Approved => "approved",
        Denied => "denied",
        Expired => "expired",
        Cancelled => "cancelled",
    }
);

impl Status {
    pub fn is_terminal(self) -> bool {
        self != Status::Pending
    }
}

words!(
    /// A human's answer (or its equivalent from policy on timeout).
    Decision {
        AllowOnce => "allow-once",
        AllowAlways => "allow-always",
        Deny => "deny",
    }
);

words!(
    /// The path a decision came by.
    Via {
        Allowlist => "allowlist",
        Policy => "policy",
        Console => "console",
        Cli => "cli",
        TelegramCommand => "telegram-command",
        TelegramReaction => "telegram-reaction",
        TelegramButton => "telegram-button",
        MatrixCommand => "matrix-command",
        MatrixReaction => "matrix-reaction",
        Timeout => "timeout",
        Shutdown => "shutdown",
        Restart => "restart",
        Disconnect => "disconnect",
    }
);

words!(
    /// How much harm a command could do, as judged before anyone decides.
    Risk {
        Safe => "safe",
        NeedsReview => "needs-review",
        Dangerous => "dangerous",
    }
);

words!(
    /// An agent's (or the global) security mode, DESIGN.md §4 step 3.
    Security {
        Deny => "deny",
        Allowlist => "allowlist",
        Full => "full",
    }
);

words!(
    /// When to ask a human, DESIGN.md §4 step 9.
    Ask {
        Off => "off",
        OnMiss => "on-miss",
        Always => "always",
    }
);

words!(
    /// What an unanswered request becomes, DESIGN.md §4 step 10.
    AskFallback {
        Deny => "deny",
        Allowlist => "allowlist",
        Full => "full",
    }
);

words!(
    /// How an allowlist rule's pattern is compared with a command.
    RuleKind {
        Exact => "exact",
        Glob => "glob",
    }
);

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
}

/// One request and everything decided about it: the API's response body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub id: String,
    pub short_id: String,
    pub agent: String,
    pub session: Option<String>,
    pub command: Option<String>,
    pub argv: Option<Vec<String>>,
    pub cwd: Option<String>,
    pub reason: Option<String>,
    pub status: Status,
    pub decision: Option<Decision>,
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

impl Record {
    /// The command as a human reads it: the shell line, or the argv shell-quoted.
    pub fn display_command(&self) -> String {
        match (&self.command, &self.argv) {
            (Some(c), _) => c.clone(),
            (None, Some(argv)) => crate::policy::shell_join(argv),
            (None, None) => String::new(),
        }
    }
}

/// The fixed message a request that was not approved carries (DESIGN.md §2).
pub fn not_approved_error(status: Status) -> Option<String> {
    match status {
        Status::Pending | Status::Approved => None,
        other => Some(format!("command was not approved ({other})")),
    }
}

/// An allowlist rule as the API and CLI show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    pub id: i64,
    /// `None` means the rule applies to every agent.
    pub agent: Option<String>,
    pub pattern: String,
    pub kind: RuleKind,
    pub created_at: DateTime<Utc>,
    pub created_by: String,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub last_command: Option<String>,
    pub use_count: i64,
}

/// The shell an agent will run a `command` with (the request's `shell` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shell {
    Sh,
    Bash,
    Zsh,
}

impl Shell {
    /// Every shell, in declaration order.
    pub const ALL: [Shell; 3] = [Shell::Sh, Shell::Bash, Shell::Zsh];

    pub fn as_str(self) -> &'static str {
        match self {
            Shell::Sh => "sh",
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
        }
    }
}
