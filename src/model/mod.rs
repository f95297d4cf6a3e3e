//! The words of the contract: statuses, decisions, channels, risk; and what a request
//! is (`request`, `command`, `agent`) and becomes (`record`). The lowest layer: it
//! imports nothing of execgate's.
//!
//! Every enum here serialises to the exact strings of docs/api.md#statuses-decisions-and-via, and the same
//! strings are stored in SQLite, so `as_str`/`FromStr` are the single mapping.

mod agent;
mod answer;
mod command;
mod record;
mod request;

pub use agent::AgentName;
pub use answer::{
    Answer, AnswerError, MAX_GRANT_SECS, looks_like_duration, parse_duration, say_duration,
};
pub use command::{Command, CommandRef, ToolCall, shell_join};
pub use record::{
    ExecResult, GrantDraft, InputSummary, Record, Rule, RuleEvent, not_approved_error, sha256_hex,
    what_is_asked,
};
pub use request::{FRONTS, RequestSpec, front_label};

use std::fmt;
use std::str::FromStr;

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
    /// How the kernel holds a command execgate runs (docs/decisions.md#confinement):
    /// chosen with the verdict, shown to whoever decides, stored with the request.
    ///
    /// - `harmless` (step 8): reads the project, its operands and the system; writes
    ///   nothing; runs only the programs of its own simple commands and their helpers;
    ///   no network.
    /// - `read-only`: reads what execgate's user can; writes nothing.
    /// - `workspace`: reads what execgate's user can; writes under the project (never its
    ///   guard settings) and a private temporary directory.
    /// - `project-work`: the project's own code: writes as `workspace`; reads the
    ///   project, the system and the toolchains' directories only; no network.
    /// - `none`: not confined (`exec.confine = "none"`).
    ///
    /// `+network`: TCP connections allowed; without, none.
    Confine {
        Harmless => "harmless",
        ReadOnly => "read-only",
        ReadOnlyNetwork => "read-only+network",
        Workspace => "workspace",
        WorkspaceNetwork => "workspace+network",
        ProjectWork => "project-work",
        None => "none",
    }
);

impl Confine {
    /// Whether the command may make TCP connections.
    pub fn network(self) -> bool {
        matches!(
            self,
            Confine::ReadOnlyNetwork | Confine::WorkspaceNetwork | Confine::None
        )
    }

    /// The same confinement with the network allowed (`/approve a1b2 network`), where
    /// the owner may allow it: never to harmless or project work, whose approval rests
    /// on having none.
    pub fn with_network(self) -> Option<Confine> {
        match self {
            Confine::ReadOnly | Confine::ReadOnlyNetwork => Some(Confine::ReadOnlyNetwork),
            Confine::Workspace | Confine::WorkspaceNetwork => Some(Confine::WorkspaceNetwork),
            Confine::None => Some(Confine::None),
            Confine::Harmless | Confine::ProjectWork => None,
        }
    }

    /// What the owner reads before deciding: `read-only · no network`. `programs`: what
    /// a harmless command may run.
    pub fn describe(self, programs: &[String]) -> String {
        let net = if self.network() {
            "network"
        } else {
            "no network"
        };
        match self {
            Confine::Harmless => {
                let only = if programs.is_empty() {
                    String::new()
                } else {
                    let names: Vec<String> = programs.iter().map(|p| format!("`{p}`")).collect();
                    format!(" · may run only {}", names.join(", "))
                };
                format!("reads the project only · writes nothing · {net}{only}")
            }
            Confine::ReadOnly | Confine::ReadOnlyNetwork => format!("read-only · {net}"),
            Confine::Workspace | Confine::WorkspaceNetwork => {
                format!("writes only in the project · {net}")
            }
            Confine::ProjectWork => {
                format!(
                    "project work, confined: writes only in the project · reads the project and toolchains · {net}"
                )
            }
            Confine::None => "not confined".to_owned(),
        }
    }
}

words!(
    /// `exec.confine`: how a command approved by a rule or a human is confined.
    ConfineDefault {
        Workspace => "workspace",
        ReadOnly => "read-only",
        None => "none",
    }
);

words!(
    /// A human's answer (or its equivalent from policy on timeout).
    Decision {
        AllowOnce => "allow-once",
        AllowAlways => "allow-always",
        AllowSession => "allow-session",
        Deny => "deny",
    }
);

impl Decision {
    /// Whether approving this way also saves a rule (and so is refused where "always"
    /// is).
    pub fn saves_rule(self) -> bool {
        matches!(self, Decision::AllowAlways | Decision::AllowSession)
    }
}

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
        SlackCommand => "slack-command",
        SlackReaction => "slack-reaction",
        SlackButton => "slack-button",
        DiscordCommand => "discord-command",
        DiscordReaction => "discord-reaction",
        DiscordButton => "discord-button",
        Web => "web",
        Timeout => "timeout",
        Shutdown => "shutdown",
        Restart => "restart",
        Disconnect => "disconnect",
        Withdrawn => "withdrawn",
    }
);

words!(
    /// What happened to an allowlist rule (docs/audit.md#rule-events).
    RuleChange {
        Added => "added",
        Renewed => "renewed",
        Expired => "expired",
        Removed => "removed",
    }
);

words!(
    /// How long rules saved by a human's decision last (`approval.remember`): `persist`,
    /// until removed or expired, like any rule; `memory`, until the daemon stops (their
    /// rows are marked and removed at the next start).
    Remember {
        Persist => "persist",
        Memory => "memory",
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
    /// An agent's (or the global) security mode, docs/decisions.md step 3.
    Security {
        Deny => "deny",
        Allowlist => "allowlist",
        Full => "full",
    }
);

words!(
    /// When to ask a human, docs/decisions.md step 9.
    Ask {
        Off => "off",
        OnMiss => "on-miss",
        Always => "always",
    }
);

words!(
    /// What an unanswered request becomes, docs/decisions.md step 10.
    AskFallback {
        Deny => "deny",
        Allowlist => "allowlist",
        Full => "full",
    }
);

words!(
    /// How an allowlist rule's pattern is compared with a request: `exact` and `glob`
    /// with a command, `tool` (a glob) with a tool call's name.
    RuleKind {
        Exact => "exact",
        Glob => "glob",
        Tool => "tool",
    }
);

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
