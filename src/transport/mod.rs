//! Transports put pending requests in front of a human and carry answers back.
//!
//! `grammar` parses the chat commands every transport accepts; `card` is the message
//! every chat shows; `chat` is the driver every chat runs on (with `deliveries`,
//! `posted`, `health` and `limiter`, pacing); `telegram`, `matrix`, `slack` and
//! `discord` are the chats;
//! `console` is the terminal transport used when no chat is configured. Each transport resolves through `Approvals::resolve`, which enforces
//! exactly-once; a transport only decides *who* may answer.

pub mod card;
pub mod chat;
pub mod console;
pub mod deliveries;
pub mod discord;
pub mod grammar;
pub mod health;
pub mod limiter;
pub mod matrix;
pub mod posted;
pub mod slack;
pub mod telegram;

use crate::approvals::{Approvals, ResolveError};
use crate::config::ReactionMap;
use crate::model::{Answer, Record, Via};
use grammar::ChatCommand;

/// A request a previous run left pending, cancelled at this start, with the chat
/// messages that show it: each chat transport edits its own, so that no message keeps
/// asking for an answer nobody can give any more.
#[derive(Clone, Debug)]
pub struct Left {
    pub record: Record,
    /// `message_external_id`s, of every chat.
    pub messages: Vec<String>,
}

impl Left {
    /// Every message of `left` in one chat, as (request, the message's id in that chat):
    /// the external ids that start with `prefix`, with it cut off.
    pub fn in_chat<'a>(
        left: &'a [Left],
        prefix: &'a str,
    ) -> impl Iterator<Item = (&'a Record, &'a str)> + 'a {
        left.iter().flat_map(move |l| {
            l.messages
                .iter()
                .filter_map(move |m| Some((&l.record, m.strip_prefix(prefix)?)))
        })
    }
}

/// The requests the startup sweep cancelled, as [`Left`], for the chat transports.
/// Best effort: one that cannot be read is logged and left out.
pub async fn left_by_last_run(approvals: &Approvals, swept: &[String]) -> Vec<Left> {
    let mut left = Vec::with_capacity(swept.len());
    for id in swept {
        let messages = match approvals.messages(id).await {
            Ok(m) if m.is_empty() => continue,
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the messages of a request the last run left pending");
                continue;
            }
        };
        match approvals.record(id).await {
            Ok(Some(record)) => left.push(Left { record, messages }),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "cannot read a request the last run left pending")
            }
        }
    }
    left
}

/// The answer to a command that only reads (`/help`, `/pending`, `/allowlist`); None for
/// one that resolves. `reactions`: the chat's map, which `/help` lists.
pub async fn listing(
    approvals: &Approvals,
    command: &ChatCommand,
    reactions: &ReactionMap,
) -> Option<String> {
    Some(match command {
        ChatCommand::Help => grammar::help_text(reactions),
        ChatCommand::Pending => match approvals.pending().await {
            Ok(list) => crate::render::pending_list(&list, chrono::Utc::now()),
            Err(e) => format!("could not read pending requests: {e}"),
        },
        ChatCommand::Allowlist => match approvals.rules().await {
            Ok(rules) => crate::render::rule_list(&rules),
            Err(e) => format!("could not read the allowlist: {e}"),
        },
        ChatCommand::Resolve { .. } => return None,
    })
}

/// The request a resolving command names, as (target, label): by the id typed
/// (`named`), by the message it replies to (`replied`: that message's request, when it
/// is one of ours), or both when they agree. `replying`: whether it replies to any
/// message at all. Err: what to tell the owner; nothing was changed.
pub fn named_request(
    named: Option<String>,
    replied: Option<posted::Target>,
    replying: bool,
) -> Result<(String, String), String> {
    match (named, replied) {
        (Some(id), Some(r)) if !r.short_id.eq_ignore_ascii_case(&id) => Err(format!(
            "You replied to request {} but named {id}; nothing was changed. Name one of them only.",
            r.short_id
        )),
        (_, Some(r)) => Ok((r.id, r.short_id)),
        (Some(id), None) => Ok((id.clone(), id)),
        (None, None) if replying => Err(
            "That message is not an approval request. Reply to one, or give the id: /approve a1b2"
                .into(),
        ),
        (None, None) => Err(
            "Which request? Give the id (/approve a1b2) or reply to the request's message.".into(),
        ),
    }
}

/// What a transport tells the person who answered.
pub struct Reply {
    pub text: String,
    /// True when this answer resolved the request.
    pub resolved: bool,
}

/// Resolves `target` (a full or short id; `label` is how the person knows it) and words
/// every outcome for the person who answered.
pub async fn answer(
    approvals: &Approvals,
    target: &str,
    label: &str,
    answer: impl Into<Answer>,
    via: Via,
    by: &str,
) -> Reply {
    let answer = answer.into();
    let text = match approvals.resolve(target, answer, via, by).await {
        Ok(r) => {
            let grant = match r.rule_expires_at {
                Some(t) => format!(", rule until {}", t.format("%Y-%m-%d %H:%M UTC")),
                None => String::new(),
            };
            return Reply {
                text: format!("{} {} ({}{grant})", r.short_id, r.status, answer.decision),
                resolved: true,
            };
        }
        Err(ResolveError::NotFound(_) | ResolveError::AlreadyResolved(_)) => {
            format!("approval {label} not found or already resolved")
        }
        Err(ResolveError::GrantRefused { grant, why }) => {
            format!(
                "\"{grant}\" refused for {label}: {why}. It is still pending: answer once or deny."
            )
        }
        Err(ResolveError::Store(e)) => {
            tracing::error!(error = %e, "could not record a decision");
            format!(
                "could not record the decision for {label} (storage error); nothing was approved"
            )
        }
    };
    Reply {
        text,
        resolved: false,
    }
}
