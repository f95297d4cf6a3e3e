//! The console transport: the daemon's own terminal as the approver, used when no chat
//! is configured. It prints each pending request and how each one ended, and reads the
//! chat grammar line by line. When its input ends it stops quietly; the daemon goes on.

use std::pin::Pin;
use std::sync::Arc;

use chrono::Utc;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::broadcast;

use super::answer;
use super::grammar::{self, ChatCommand};
use crate::approvals::{Approvals, Event};
use crate::config::ReactionMap;
use crate::model::{Status, Via};
use crate::render;
use crate::shutdown::Shutdown;

/// Where the console reads answers and writes prompts.
pub struct ConsoleIo {
    pub input: Pin<Box<dyn AsyncBufRead + Send>>,
    pub output: Pin<Box<dyn AsyncWrite + Send>>,
}

impl ConsoleIo {
    /// The process's stdin and stdout.
    pub fn stdio() -> ConsoleIo {
        ConsoleIo {
            input: Box::pin(tokio::io::BufReader::new(tokio::io::stdin())),
            output: Box::pin(tokio::io::stdout()),
        }
    }
}

/// Who the console speaks for in `decided_by`.
const CONSOLE_USER: &str = "console";

/// Runs the console until the daemon stops. `events` comes from `approvals.subscribe()`,
/// taken before any request can arrive.
pub async fn run(
    approvals: Arc<Approvals>,
    mut events: broadcast::Receiver<Event>,
    io: ConsoleIo,
    mut shutdown: Shutdown,
) {
    let ConsoleIo {
        mut input,
        mut output,
    } = io;
    let mut reading = true;
    let mut line = String::new();
    let _ = write(
        &mut output,
        "execgate console approver: type /help for commands",
    )
    .await;
    loop {
        line.clear();
        let text = tokio::select! {
            _ = shutdown.recv() => break,
            event = events.recv() => {
                match event {
                    // Noted as shown before it is, so its id stays out of circulation; one
                    // that already ended is not shown (its outcome line follows).
                    Ok(Event::Pending(r)) if approvals.show(&r.id) => {
                        let offer = approvals.offer(&r);
                        let grants = render::Grants {
                            always_refused: offer.always_refused.as_deref(),
                            session: offer.session_refused.is_none(),
                            rule: offer.rule.as_deref(),
                            suggested: offer
                                .suggested
                                .as_ref()
                                .map(|s| (s.agent.as_str(), s.pattern.as_str(), s.saves)),
                        };
                        render::prompt(&r, grants, Utc::now())
                    }
                    Ok(Event::Pending(_) | Event::Rules(_)) => continue,
                    Ok(Event::Resolved(r)) => {
                        let mark = if r.status == Status::Approved { "✔" } else { "✖" };
                        format!("{mark} {}", render::outcome(&r))
                    }
                    Err(broadcast::error::RecvError::Lagged(n)) => format!("({n} events were missed; /pending lists what waits)"),
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
            read = input.read_line(&mut line), if reading => {
                match read {
                    Ok(0) | Err(_) => {
                        // stdin closed (or unreadable): stop listening, keep printing.
                        reading = false;
                        continue;
                    }
                    Ok(_) => match handle(&approvals, line.trim()).await {
                        Some(reply) => reply,
                        None => continue,
                    },
                }
            }
        };
        if write(&mut output, &text).await.is_err() {
            // Nobody can see the console any more; the daemon does not depend on it.
            break;
        }
    }
}

async fn write(out: &mut Pin<Box<dyn AsyncWrite + Send>>, text: &str) -> std::io::Result<()> {
    out.write_all(format!("{text}\n").as_bytes()).await?;
    out.flush().await
}

/// Answers one line of input; None for a blank line.
async fn handle(approvals: &Approvals, text: &str) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    let command = match grammar::parse(text) {
        None => return Some("Not a command. Type /help.".into()),
        Some(Err(e)) => return Some(e.to_string()),
        Some(Ok(c)) => c,
    };
    let ChatCommand::Resolve {
        short_id,
        answer: grant,
    } = command
    else {
        // The console has no reactions: its help lists commands only.
        let none = ReactionMap::from_pairs([]).expect("an empty map is valid");
        return super::listing(approvals, &command, &none).await;
    };
    // The console has no reply-to: without an id, the answer is for the only pending
    // request, and is refused when there are several.
    let short_id = match short_id {
        Some(id) => id,
        None => match approvals.pending().await {
            Ok(list) if list.len() == 1 => list[0].short_id.clone(),
            Ok(list) if list.is_empty() => return Some("No requests are pending.".into()),
            Ok(_) => {
                return Some(
                    "Several requests are pending: give the id, e.g. /approve a1b2.".into(),
                );
            }
            Err(e) => return Some(format!("could not read pending requests: {e}")),
        },
    };
    let answered = answer(
        approvals,
        &short_id,
        &short_id,
        grant,
        Via::Console,
        CONSOLE_USER,
    )
    .await;
    Some(answered.text)
}
