//! The text a human reads about a request, shared by every front (console, chat, CLI):
//! the prompt, the outcome, the lists. Everything the agent wrote passes through
//! [`visible`] first (see `text`).

use chrono::{DateTime, Utc};

use crate::model::{InputSummary, Record, Rule};
use crate::text::{clip_chars, visible};

/// How much of an input's head is shown, escaped.
const INPUT_HEAD_SHOWN: usize = 120;

/// `Agent: NAME (uid U, pid P)`: who asked, by name and by the kernel's word.
pub fn agent_line(r: &Record) -> String {
    let mut line = format!("Agent: {}", visible(&r.agent));
    match (r.peer_uid, r.peer_pid) {
        (Some(uid), Some(pid)) => line.push_str(&format!(" (uid {uid}, pid {pid})")),
        (Some(uid), None) => line.push_str(&format!(" (uid {uid})")),
        _ => {}
    }
    line
}

/// `Run: …`: whether approving also has execgate run the command, as its own user.
pub fn run_line(r: &Record) -> String {
    if r.run {
        "Run: yes: execgate runs it itself, as its own user, once approved".into()
    } else {
        "Run: no: the agent runs it itself once approved".into()
    }
}

/// `Input: N bytes, sha256 H, begins: …`: the stdin that comes with the command.
pub fn input_line(input: &InputSummary) -> String {
    let head = clip_chars(&visible(&input.head), INPUT_HEAD_SHOWN);
    let more = if input.is_whole() { "" } else { " …" };
    format!(
        "Input: {} bytes, sha256 {}, {}: {head}{more}",
        input.bytes,
        input.sha256,
        if input.is_whole() {
            "all of it"
        } else {
            "begins"
        }
    )
}

fn seconds_left(expires: Option<DateTime<Utc>>, now: DateTime<Utc>) -> String {
    match expires {
        Some(t) => format!("{}s", (t - now).num_seconds().max(0)),
        None => "-".into(),
    }
}

/// The approval prompt, plain text, one field a line.
pub fn prompt(r: &Record, now: DateTime<Utc>) -> String {
    let mut lines = vec![
        "🔒 Exec approval required".to_string(),
        format!("ID: {}", r.short_id),
        agent_line(r),
        format!("Command: {}", visible(&r.command.display())),
    ];
    if let Some(input) = &r.input {
        lines.push(input_line(input));
    }
    if let Some(cwd) = &r.cwd {
        lines.push(format!("Cwd: {}", visible(cwd)));
    }
    lines.push(run_line(r));
    if let Some(reason) = &r.reason {
        lines.push(format!("Reason: {}", visible(reason)));
    }
    lines.push(format!("Risk: {}", r.risk));
    for why in &r.risk_reasons {
        lines.push(format!("  - {}", visible(why)));
    }
    lines.push(format!("Expires in: {}", seconds_left(r.expires_at, now)));
    lines.push(format!(
        "Reply: /approve {0} · /approve {0} always · /deny {0}",
        r.short_id
    ));
    lines.join("\n")
}

/// One line saying how a request ended: what, how, by whom, when.
pub fn outcome(r: &Record) -> String {
    let mut s = format!("{} {}", r.short_id, r.status);
    if let Some(d) = r.decision {
        s.push_str(&format!(" ({d})"));
    }
    if let Some(via) = r.via {
        s.push_str(&format!(" via {via}"));
    }
    if let Some(by) = &r.decided_by {
        s.push_str(&format!(" by {}", visible(by)));
    }
    if let Some(at) = r.resolved_at {
        s.push_str(&format!(" at {}", at.format("%H:%M:%SZ")));
    }
    s.push_str(&format!(
        ": {}",
        clip_chars(&visible(&r.command.display()), 80)
    ));
    s
}

/// `[N B stdin]` when the request has input: part of what is approved, so every list
/// says it is there.
pub fn stdin_mark(r: &Record) -> Option<String> {
    r.input.as_ref().map(|i| format!("[{} B stdin]", i.bytes))
}

/// One line per pending request.
pub fn pending_list(records: &[Record], now: DateTime<Utc>) -> String {
    if records.is_empty() {
        return "No requests are pending.".into();
    }
    records
        .iter()
        .map(|r| {
            let stdin = stdin_mark(r).map_or(String::new(), |m| format!("  {m}"));
            format!(
                "{}  {}  {}  expires in {}  {}{stdin}",
                r.short_id,
                visible(&r.agent),
                r.risk,
                seconds_left(r.expires_at, now),
                clip_chars(&visible(&r.command.display()), 80)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line per allowlist rule.
pub fn rule_list(rules: &[Rule]) -> String {
    if rules.is_empty() {
        return "The allowlist is empty.".into();
    }
    rules
        .iter()
        .map(|r| {
            format!(
                "#{}  {}  {}  {}  used {}×",
                r.id,
                r.agent.as_deref().unwrap_or("(all agents)"),
                r.kind,
                visible(&r.pattern),
                r.use_count
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_summed_up_escaped() {
        let whole = input_line(&InputSummary::of("hi\n"));
        assert!(whole.starts_with("Input: 3 bytes, sha256 "), "{whole}");
        assert!(whole.ends_with("all of it: hi\\u{a}"), "{whole}");
        let long = input_line(&InputSummary::of(&"\u{1b}".repeat(300)));
        assert!(long.contains("begins: \\u{1b}"), "{long}");
        assert!(long.contains("more characters) …"), "{long}");
    }
}
