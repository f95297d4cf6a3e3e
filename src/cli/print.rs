//! What the client verbs print: one record, lists as tables, rules, runs. Everything an
//! agent wrote passes through `visible` first.

use std::io::Write;

use crate::model::{Record, Rule};
use crate::policy::suggest::Suggestion;
use crate::render;
use crate::runs::RunEntry;
use crate::text::{clip_chars, visible};

pub(super) fn print_json<T: serde::Serialize>(value: &T) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, value);
    let _ = writeln!(out);
}

pub(super) fn print_record(r: &Record) {
    println!("id:       {} ({})", r.short_id, r.id);
    println!("agent:    {}", visible(&r.agent));
    if let Some(uid) = r.peer_uid {
        println!(
            "peer:     uid {uid}{}",
            r.peer_pid.map_or(String::new(), |p| format!(", pid {p}"))
        );
    }
    match r.command.tool() {
        Some(tool) => {
            println!("tool:     {}", tool.name);
            println!("input:    {}", visible(&tool.input.to_string()));
        }
        None => println!("command:  {}", visible(&r.command.display())),
    }
    if let Some(input) = &r.input {
        let line = render::input_line(input);
        println!("input:    {}", line.trim_start_matches("Input: "));
    }
    if let Some(cwd) = &r.cwd {
        println!("cwd:      {}", visible(cwd));
    }
    println!(
        "run:      {}",
        if r.run {
            "yes (execgate runs it)"
        } else {
            "no"
        }
    );
    println!("status:   {}", r.status);
    if let Some(d) = r.decision {
        match r.rule_expires_at {
            Some(t) => println!(
                "decision: {d} (rule until {})",
                t.format("%Y-%m-%d %H:%M UTC")
            ),
            None => println!("decision: {d}"),
        }
    }
    if let Some(v) = r.via {
        println!("via:      {v}");
    }
    if let Some(by) = &r.decided_by {
        println!("by:       {}", visible(by));
    }
    println!(
        "risk:     {} ({})",
        r.risk,
        r.risk_reasons
            .iter()
            .map(|s| visible(s))
            .collect::<Vec<_>>()
            .join("; ")
    );
    if let Some(e) = &r.error {
        println!("error:    {}", visible(e));
    }
}

pub(super) fn print_records(list: &[Record], as_json: bool) {
    if as_json {
        return print_json(&list);
    }
    if list.is_empty() {
        println!("(none)");
        return;
    }
    let rows: Vec<[String; 8]> = list
        .iter()
        .map(|r| {
            // Input is part of what is approved: its size is on the row.
            let stdin = render::stdin_mark(r).map_or(String::new(), |m| format!(" {m}"));
            [
                r.short_id.clone(),
                r.created_at.format("%Y-%m-%d %H:%M:%S").to_string(),
                visible(&r.agent),
                r.status.to_string(),
                r.risk.to_string(),
                r.via.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                r.result.as_ref().map_or_else(|| "-".into(), run_summary),
                format!("{}{stdin}", clip_chars(&visible(&r.command.display()), 60)),
            ]
        })
        .collect();
    print_table(
        [
            "ID",
            "CREATED (UTC)",
            "AGENT",
            "STATUS",
            "RISK",
            "VIA",
            "RAN",
            "COMMAND",
        ],
        &rows,
    );
}

/// How a run ended, in a few characters: `exit 0 12ms`, `timeout 30000ms`, `signal 9`.
pub(super) fn run_summary(r: &crate::model::ExecResult) -> String {
    let how = if r.timed_out {
        "timeout".to_string()
    } else if let Some(code) = r.exit_code {
        format!("exit {code}")
    } else if let Some(signal) = r.signal {
        format!("signal {signal}")
    } else {
        "not started".to_string()
    };
    format!("{how} {}ms", r.duration_ms)
}

/// Approved commands waiting for a slot, and those running.
pub(super) fn print_runs(runs: &[RunEntry]) {
    if runs.is_empty() {
        return;
    }
    println!();
    let now = chrono::Utc::now();
    let rows: Vec<[String; 4]> = runs
        .iter()
        .map(|e| {
            let state = match e.started_at {
                Some(t) => format!("running {}s", (now - t).num_seconds().max(0)),
                None => format!("queued {}s", (now - e.queued_at).num_seconds().max(0)),
            };
            [
                e.short_id.clone(),
                visible(&e.agent),
                state,
                clip_chars(&visible(&e.command), 60),
            ]
        })
        .collect();
    print_table(["ID", "AGENT", "RUN", "COMMAND"], &rows);
}

pub(super) fn print_rules(rules: &[Rule]) {
    if rules.is_empty() {
        println!("(none)");
        return;
    }
    let rows: Vec<[String; 6]> = rules
        .iter()
        .map(|r| {
            [
                r.id.to_string(),
                clip_chars(&visible(&r.scope()), 48),
                r.kind.to_string(),
                r.use_count.to_string(),
                render::rule_life(r),
                clip_chars(&visible(&r.pattern), 60),
            ]
        })
        .collect();
    print_table(["ID", "SCOPE", "KIND", "USES", "LASTS", "PATTERN"], &rows);
}

/// `execgate allow suggest`: each rule, what it would have saved, and how to add it.
pub(super) fn print_suggestions(found: &[Suggestion], days: u32) {
    if found.is_empty() {
        println!("(none: no glob would have approved enough of the last {days} days' prompts)");
        return;
    }
    let rows: Vec<[String; 4]> = found
        .iter()
        .map(|s| {
            [
                s.saves.to_string(),
                clip_chars(&visible(&s.agent), 32),
                clip_chars(&visible(&s.pattern), 60),
                clip_chars(&visible(&s.examples.join(" · ")), 80),
            ]
        })
        .collect();
    print_table(["SAVES", "AGENT", "PATTERN", "EXAMPLES"], &rows);
    println!("add one with: execgate allow add --agent AGENT --glob 'PATTERN'");
}

pub(super) fn print_table<const N: usize>(header: [&str; N], rows: &[[String; N]]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == N {
                s.push_str(cell);
            } else {
                s.push_str(&format!("{cell:<w$}  "));
            }
        }
        s
    };
    println!("{}", line(header.to_vec()));
    for row in rows {
        println!("{}", line(row.iter().map(String::as_str).collect()));
    }
}
