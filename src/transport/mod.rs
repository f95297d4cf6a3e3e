//! Transports put pending requests in front of a human and carry answers back.
//!
//! `grammar` parses the chat commands every transport accepts; `render` turns a request
//! into the text a human reads; `console` is the terminal transport used when no chat is
//! configured. Each transport resolves through `Approvals::resolve`, which enforces
//! exactly-once; a transport only decides *who* may answer.

pub mod console;
pub mod grammar;
pub mod render;

use crate::approvals::{Approvals, ResolveError};
use crate::model::{Decision, Via};

/// What a transport tells the person who answered, for every outcome of a resolve.
pub async fn answer(
    approvals: &Approvals,
    short_id: &str,
    decision: Decision,
    via: Via,
    by: &str,
) -> String {
    match approvals.resolve(short_id, decision, via, by).await {
        Ok(r) => format!("{} {} ({})", r.short_id, r.status, decision),
        Err(ResolveError::NotFound(_) | ResolveError::AlreadyResolved(_)) => {
            format!("approval {short_id} not found or already resolved")
        }
        Err(ResolveError::AlwaysRefused(why)) => {
            format!("\"always\" refused for {short_id}: {why}. It is still pending.")
        }
        Err(ResolveError::Store(e)) => {
            tracing::error!(error = %e, "could not record a decision");
            format!(
                "could not record the decision for {short_id} (storage error); nothing was approved"
            )
        }
    }
}
