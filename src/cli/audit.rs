//! `execgate audit verify|export` and `execgate history --rules`: the audit trail read
//! over the admin socket (docs/audit.md).

use std::io::Write;
use std::path::PathBuf;

use hyper::Method;

use super::print::{print_json, print_table};
use super::{HistoryArgs, encode, expect};
use crate::client::Client;
use crate::model::RuleEvent;
use crate::render;
use crate::store::audit::{Exported, Report};
use crate::text::{clip_chars, visible};

/// `execgate history --rules`: rule events, newest first.
pub(super) async fn rule_history(admin: &Client, args: HistoryArgs) -> Result<i32, String> {
    let path = format!("/v1/allowlist/events?limit={}", args.limit);
    let events: Vec<RuleEvent> = expect(admin, Method::GET, &path, None).await?;
    if args.json.json {
        print_json(&events);
        return Ok(0);
    }
    if events.is_empty() {
        println!("(no rule has changed)");
        return Ok(0);
    }
    let rows: Vec<[String; 7]> = events
        .iter()
        .map(|e| {
            let by = match &e.via {
                Some(via) => format!("{} ({via})", e.actor),
                None => e.actor.clone(),
            };
            let life = render::life(e.expires_at, e.memory);
            [
                e.at.format("%Y-%m-%d %H:%M:%S").to_string(),
                e.event.to_string(),
                format!("#{}", e.rule_id),
                clip_chars(&visible(&by), 40),
                clip_chars(&visible(&e.scope()), 40),
                life,
                clip_chars(&visible(&format!("{} {}", e.kind, e.pattern)), 60),
            ]
        })
        .collect();
    print_table(
        ["WHEN", "EVENT", "RULE", "BY", "SCOPE", "LASTS", "RULE IS"],
        &rows,
    );
    Ok(0)
}

/// `execgate audit verify`: exit 0 intact, 1 broken.
pub(super) async fn verify(
    admin: &Client,
    head: Option<String>,
    as_json: bool,
) -> Result<i32, String> {
    let path = match &head {
        Some(h) => format!("/v1/audit/verify?head={}", encode(h)),
        None => "/v1/audit/verify".to_string(),
    };
    let report: Report = expect(admin, Method::GET, &path, None).await?;
    if as_json {
        print_json(&report);
    } else {
        print_report(&report, head.is_some());
    }
    Ok(if report.intact { 0 } else { 1 })
}

fn print_report(report: &Report, head_given: bool) {
    match report.intact {
        true => println!("audit chain intact: {} entries", report.entries),
        false => println!(
            "audit chain BROKEN: {} problem(s) in {} entries; the first is the first thing changed",
            report.problems, report.entries
        ),
    }
    if head_given && report.intact {
        println!("the head given is in the chain as logged");
    }
    for chain in &report.chains {
        println!(
            "  node {}: {} entries, head {}",
            visible(&chain.node),
            chain.entries,
            visible(&chain.head)
        );
        for s in &chain.segments {
            println!(
                "    segment from entry {} ({}): {}",
                s.seq,
                visible(&s.at),
                visible(&s.why)
            );
        }
    }
    for f in &report.findings {
        let place = match (&f.node, f.seq) {
            (Some(n), Some(s)) => format!("entry {}:{s}", visible(n)),
            _ => "no entry".to_string(),
        };
        let subject = f
            .subject
            .as_deref()
            .map(|s| format!(" ({})", visible(s)))
            .unwrap_or_default();
        let problem = serde_json::to_value(f.problem)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        println!("  {problem}: {place}{subject}: {}", visible(&f.detail));
    }
    if (report.findings.len() as u64) < report.problems {
        println!(
            "  … and {} more (the list stops at {})",
            report.problems - report.findings.len() as u64,
            report.findings.len()
        );
    }
}

/// `execgate audit export`: every entry, page after page, one JSON object a line.
pub(super) async fn export(admin: &Client, output: Option<PathBuf>) -> Result<i32, String> {
    let mut out: Box<dyn Write> = match &output {
        Some(path) => {
            use std::os::unix::fs::OpenOptionsExt;
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Box::new(std::io::BufWriter::new(file))
        }
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut after: Option<String> = None;
    let mut written = 0u64;
    loop {
        let path = match &after {
            Some(a) => format!("/v1/audit/entries?after={}", encode(a)),
            None => "/v1/audit/entries".to_string(),
        };
        let page: Vec<Exported> = expect(admin, Method::GET, &path, None).await?;
        let Some(last) = page.last() else { break };
        after = Some(format!("{}:{}", last.entry.node, last.entry.seq));
        for line in &page {
            let json = serde_json::to_string(line).expect("entries serialise");
            writeln!(out, "{json}").map_err(|e| format!("cannot write the export: {e}"))?;
        }
        written += page.len() as u64;
    }
    out.flush()
        .map_err(|e| format!("cannot write the export: {e}"))?;
    if let Some(path) = output {
        eprintln!("wrote {written} entries to {}", path.display());
    }
    Ok(0)
}
