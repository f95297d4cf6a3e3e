//! Transports put pending requests in front of a human and carry answers back.
//!
//! `grammar` parses the chat commands every transport accepts; `render` turns a request
//! into the text a human reads; `console` is the terminal transport used when no chat is
//! configured. Each transport resolves through `Approvals::resolve`, which enforces
//! exactly-once; a transport only decides *who* may answer.

pub mod console;
pub mod grammar;
pub mod telegram;

use crate::approvals::{Approvals, ResolveError};
use crate::model::{Decision, Via};

/// What a transport tells the person who answered.
pub struct Answer {
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
    decision: Decision,
    via: Via,
    by: &str,
) -> Answer {
    let text = match approvals.resolve(target, decision, via, by).await {
        Ok(r) => {
            return Answer {
                text: format!("{} {} ({})", r.short_id, r.status, decision),
                resolved: true,
            };
        }
        Err(ResolveError::NotFound(_) | ResolveError::AlreadyResolved(_)) => {
            format!("approval {label} not found or already resolved")
        }
        Err(ResolveError::AlwaysRefused(why)) => {
            format!(
                "\"always\" refused for {label}: {why}. It is still pending: answer once or deny."
            )
        }
        Err(ResolveError::Store(e)) => {
            tracing::error!(error = %e, "could not record a decision");
            format!(
                "could not record the decision for {label} (storage error); nothing was approved"
            )
        }
    };
    Answer {
        text,
        resolved: false,
    }
}
