//! The text a human reads about a request, shared by every front (console, chat, CLI,
//! and the approvals page through [`Shown`]): the prompt, the whole request, the
//! outcome, the lists. Everything the agent wrote passes through [`visible`] first (see
//! `text`).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::model::{Command, InputSummary, Record, Risk, Rule, Status, sha256_hex, shell_join};
use crate::text::{clip_chars, is_hidden, visible};

/// How much of an input's head is shown, escaped.
const INPUT_HEAD_SHOWN: usize = 120;

/// The most of a tool call's input a prompt shows; past it, its length and sha256 say
/// what was cut.
const TOOL_INPUT_SHOWN: usize = 3000;

/// What a request asks for, as a human is shown it.
pub struct Asked {
    /// `Command`, or `Tool Write`: what the text is.
    pub label: String,
    /// The command, or the tool's input as indented JSON, made visible line by line.
    pub text: String,
    /// What `text` shows before it was made visible: what a cut's sha256 is taken of.
    pub raw: String,
}

/// What `r` asks for: its command, or its tool's name and input.
pub fn asked(r: &Record) -> Asked {
    match &r.command {
        Command::Tool(tool) => {
            // JSON escapes every control character in a string; the bidi and invisible
            // ones it leaves are escaped here, so every line shows what it says.
            let raw = serde_json::to_string_pretty(&tool.input).unwrap_or_default();
            let text = raw.lines().map(visible).collect::<Vec<_>>().join("\n");
            Asked {
                label: format!("Tool {}", tool.name),
                text,
                raw,
            }
        }
        command => {
            let raw = command.display().into_owned();
            Asked {
                label: match command {
                    Command::Argv(_) => "Command (no shell)".into(),
                    _ => "Command".into(),
                },
                text: visible(&raw),
                raw,
            }
        }
    }
}

/// The lines that say what `r` asks for: `Command: …`, or `Tool: NAME` and its input,
/// indented, cut past `cut_at` characters with its length and sha256.
fn asked_lines(r: &Record, cut_at: usize) -> Vec<String> {
    let Command::Tool(tool) = &r.command else {
        return vec![format!("Command: {}", visible(&r.command.display()))];
    };
    let asked = asked(r);
    let total = asked.raw.chars().count();
    let mut lines = vec![format!("Tool: {}", tool.name)];
    if total > cut_at {
        lines.push(format!(
            "Input (cut: {total} characters in all, sha256 {}):",
            sha256_hex(asked.raw.as_bytes())
        ));
    } else {
        lines.push("Input:".into());
    }
    let mut room = cut_at;
    for line in asked.text.split('\n') {
        if room == 0 {
            lines.push("  …".into());
            break;
        }
        let shown = clip_chars(line, room);
        room = room.saturating_sub(line.chars().count());
        lines.push(format!("  {shown}"));
    }
    lines
}

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

/// `Run: …`: whether approving also has execgate run the command, as its own user, and
/// how the kernel will hold it (`Runs: writes only in the project · no network`).
pub fn run_line(r: &Record) -> String {
    if r.run {
        let held = r
            .confinement
            .map(|c| format!(" · Runs: {}", c.describe(&[])))
            .unwrap_or_default();
        format!("Run: yes: execgate runs it itself, as its own user, once approved{held}")
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

/// A request as the prompt and the chats show it, one field a line: id, agent and uid,
/// what it asks (a tool's input cut past `cut_at` characters), input, cwd, run, reason,
/// risk and its reasons, and the [`notes`].
fn request_lines(r: &Record, cut_at: usize) -> Vec<String> {
    let mut lines = vec![format!("ID: {}", r.short_id), agent_line(r)];
    lines.extend(asked_lines(r, cut_at));
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
    for note in notes(r) {
        lines.push(format!("Note: {note}"));
    }
    lines
}

/// One whole request, for `execgate show`: what the chats show (nothing cut), then how
/// it stands or ended.
pub fn whole(r: &Record, now: DateTime<Utc>) -> String {
    let mut lines = request_lines(r, usize::MAX);
    lines.push(format!(
        "Created: {}",
        r.created_at.format("%Y-%m-%d %H:%M:%S UTC")
    ));
    if r.status == Status::Pending {
        lines.push(format!(
            "Status: pending, expires in {}",
            seconds_left(r.expires_at, now)
        ));
    } else {
        lines.push(format!("Status: {}", outcome_head(r)));
    }
    if let Some(error) = &r.error {
        lines.push(format!("Error: {}", visible(error)));
    }
    if let Some(front) = &r.front {
        lines.push(format!("Front: {}", visible(front)));
    }
    lines.join("\n")
}

/// What the owner is told beside the risk: the words of a request (paths, most often)
/// that hold characters outside ASCII. A look-alike letter (Cyrillic `а` for `a`) or a
/// mark shows as the name of one file and opens another; the code points say which.
pub fn notes(r: &Record) -> Vec<String> {
    let mut words: Vec<String> = match &r.command {
        Command::Line(line) => line.split_ascii_whitespace().map(str::to_string).collect(),
        Command::Argv(argv) => argv.clone(),
        Command::Tool(tool) => {
            let mut paths = Vec::new();
            path_values(&tool.input, false, &mut paths);
            paths
        }
    };
    words.extend(r.cwd.clone());
    let odd: Vec<String> = words
        .iter()
        .filter(|w| !w.is_ascii())
        .take(3)
        .map(|w| format!("{} ({})", clip_chars(&visible(w), 80), code_points(w)))
        .collect();
    if odd.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "a path or word in this request holds non-ASCII characters: {}",
        odd.join(", ")
    )]
}

/// The strings of a tool's input that name files: the values of keys that say `path`,
/// `file` or `dir` (`file_path`, `notebook_path`, `paths`, …), at any depth.
fn path_values(value: &serde_json::Value, named: bool, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) if named => out.push(s.clone()),
        serde_json::Value::Array(items) => {
            for item in items {
                path_values(item, named, out);
            }
        }
        serde_json::Value::Object(map) => {
            for (key, item) in map {
                let key = key.to_ascii_lowercase();
                let named = ["path", "file", "dir"].iter().any(|k| key.contains(k));
                path_values(item, named, out);
            }
        }
        _ => {}
    }
}

/// `U+0430 U+E0041`: the distinct non-ASCII characters of `word`, the first four.
fn code_points(word: &str) -> String {
    // Five at most: enough to know there are more, and a long word costs no more.
    let mut seen: Vec<char> = Vec::new();
    for c in word.chars().filter(|c| !c.is_ascii()) {
        if !seen.contains(&c) {
            seen.push(c);
            if seen.len() > 4 {
                break;
            }
        }
    }
    let mut out: Vec<String> = seen
        .iter()
        .take(4)
        .map(|c| format!("U+{:04X}", *c as u32))
        .collect();
    if seen.len() > 4 {
        out.push("…".into());
    }
    out.join(" ")
}

/// Which grants the console offers for one request (from `Approvals::offer`, which this
/// layer cannot see): why "always" is refused, if it is; whether "session" is on offer;
/// the rule either would save.
#[derive(Clone, Copy, Debug, Default)]
pub struct Grants<'a> {
    pub always_refused: Option<&'a str>,
    pub session: bool,
    pub rule: Option<&'a str>,
    /// A glob rule the owner's approvals today suggest: for which agent, its pattern,
    /// and how many approvals it would have saved.
    pub suggested: Option<(&'a str, &'a str, usize)>,
}

/// The offer of a rule the owner's approvals suggest, in two parts: what it is about,
/// and the command that adds it (which a chat shows as code).
pub fn suggested_rule(agent: &str, pattern: &str, saves: usize) -> (String, String) {
    (
        format!("You approved {saves} like this today. A rule would cover them: "),
        format!(
            "execgate allow add --agent {} --glob '{}'",
            visible(agent),
            clip_chars(&visible(pattern), 200)
        ),
    )
}

/// The approval prompt, plain text, one field a line.
pub fn prompt(r: &Record, grants: Grants<'_>, now: DateTime<Utc>) -> String {
    let mut lines = vec!["🔒 Exec approval required".to_string()];
    lines.extend(request_lines(r, TOOL_INPUT_SHOWN));
    lines.push(format!("Expires in: {}", seconds_left(r.expires_at, now)));
    let id = &r.short_id;
    let mut reply = format!("Reply: /approve {id}");
    if grants.always_refused.is_none() {
        reply.push_str(&format!(" · /approve {id} always"));
    }
    if grants.session {
        reply.push_str(&format!(" · /approve {id} session"));
    }
    reply.push_str(&format!(" · /deny {id}"));
    lines.push(reply);
    match (grants.always_refused, grants.rule) {
        (Some(why), _) => lines.push(format!(
            "\"Always\" and \"session\" are not offered: {}",
            visible(why)
        )),
        (None, Some(rule)) => {
            let mut grant = format!(
                "Always saves a rule for agent {}: {}",
                visible(&r.agent),
                clip_chars(&visible(rule), 200)
            );
            if let (true, Some(session)) = (grants.session, &r.session) {
                grant.push_str(&format!("; session, for session {} only", visible(session)));
            }
            grant.push_str(&format!(". A duration makes it expire: /approve {id} 30m"));
            lines.push(grant);
        }
        (None, None) => {}
    }
    if let Some((agent, pattern, saves)) = grants.suggested {
        let (lead, add) = suggested_rule(agent, pattern, saves);
        lines.push(format!("{lead}{add}"));
    }
    lines.join("\n")
}

/// One line saying how a request ended: what, how, by whom, when.
pub fn outcome(r: &Record) -> String {
    let mut s = format!("{} {}", r.short_id, outcome_head(r));
    s.push_str(&format!(
        ": {}",
        clip_chars(&visible(&r.command.display()), 80)
    ));
    s
}

/// `approved (allow-once) via telegram by alice at 10:00:00Z`.
fn outcome_head(r: &Record) -> String {
    let mut s = r.status.to_string();
    match (r.decision, r.rule_expires_at) {
        (Some(d), Some(t)) => s.push_str(&format!(
            " ({d}, rule until {})",
            t.format("%Y-%m-%d %H:%M UTC")
        )),
        (Some(d), None) => s.push_str(&format!(" ({d})")),
        (None, _) => {}
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
    s
}

/// `[N B stdin sha256 1a2b3c4d]` when the request has input: part of what is approved,
/// so every list says it is there, and which one it is.
pub fn stdin_mark(r: &Record) -> Option<String> {
    r.input.as_ref().map(|i| {
        format!(
            "[{} B stdin sha256 {}]",
            i.bytes,
            i.sha256.get(..8).unwrap_or(&i.sha256)
        )
    })
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
                "#{}  {}  {}  {}  {}  used {}×",
                r.id,
                clip_chars(&visible(&r.scope()), 60),
                r.kind,
                visible(&r.pattern),
                rule_life(r),
                r.use_count
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How long a rule lasts, in a few words: "kept", "until 2026-11-23 14:00 UTC", "until
/// restart", or both limits.
pub fn rule_life(r: &Rule) -> String {
    life(r.expires_at, r.memory)
}

/// How long a rule lasts, from its expiry and whether it ends with this run (a rule, or
/// a rule as an event recorded it).
pub fn life(expires_at: Option<chrono::DateTime<chrono::Utc>>, memory: bool) -> String {
    let until = expires_at.map(|t| format!("until {}", t.format("%Y-%m-%d %H:%M UTC")));
    match (until, memory) {
        (None, false) => "kept".into(),
        (None, true) => "until restart".into(),
        (Some(t), false) => t,
        (Some(t), true) => format!("{t} or restart"),
    }
}

/// What an agent (and through it the model and the user) is told of a terminal record:
/// the short id, what happened, and, when it was not approved, how to get it approved.
/// Shared by the hooks and the MCP server.
pub fn for_agent(r: &Record) -> String {
    let how = match (r.via, &r.decided_by) {
        (Some(via), Some(by)) => format!("{via}, by {}", visible(by)),
        (Some(via), None) => via.to_string(),
        (None, _) => String::new(),
    };
    if r.status == Status::Approved {
        return format!("execgate {}: approved ({how})", r.short_id);
    }
    let why = r
        .error
        .as_deref()
        .map_or_else(|| format!("not approved ({})", r.status), visible);
    let rule = match r.command.tool() {
        // No rule approves a dangerous request: the owner decides it each time.
        _ if r.risk == Risk::Dangerous => String::new(),
        Some(t) => format!("execgate allow add --tool {}", t.name),
        None => {
            let command = r.command.display();
            // A rule is typed by a person: nothing in it may hide.
            if command.chars().count() <= 200 && !command.chars().any(is_hidden) {
                format!(
                    "execgate allow add -- {}",
                    shell_join(&[command.into_owned()])
                )
            } else {
                "execgate allow add -- COMMAND".into()
            }
        }
    };
    format!(
        "execgate {id}: {why} (via {how}). Nothing ran. While a request waits, the owner approves it with `/approve {id}` in chat or `execgate approve {id}` on the host; asking again makes a new request with a new ID. {after}",
        id = r.short_id,
        after = if rule.is_empty() {
            "It is dangerous, so no rule can approve it: the owner must approve it each time."
                .to_string()
        } else {
            format!("To allow it without asking, the owner adds a rule: `{rule}`.")
        },
    )
}

/// A record's text as every front shows it, for a front that draws the request itself
/// (the approvals page, which escapes nothing of its own): each field the agent or a
/// decider wrote, through [`visible`].
#[derive(Clone, Debug, Serialize)]
pub struct Shown {
    /// `Command`, `Command (no shell)`, or `Tool NAME`.
    pub label: String,
    /// The command, or the tool's input as indented JSON, line by line.
    pub text: String,
    /// The same on one line, for lists.
    pub line: String,
    pub agent: String,
    pub session: Option<String>,
    pub cwd: Option<String>,
    pub reason: Option<String>,
    pub front: Option<String>,
    pub decided_by: Option<String>,
    pub error: Option<String>,
    /// `N bytes, sha256 H, all of it: …` (or `begins: … …`).
    pub input: Option<String>,
    pub risk_reasons: Vec<String>,
    /// [`notes`].
    pub notes: Vec<String>,
    /// For a pending request: why no grant is offered, or the rule a grant saves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub always_refused: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

impl Shown {
    pub fn of(r: &Record) -> Shown {
        let asked = asked(r);
        let shown = |s: &Option<String>| s.as_deref().map(visible);
        Shown {
            label: asked.label,
            text: asked.text,
            line: visible(&r.command.display()),
            agent: visible(&r.agent),
            session: shown(&r.session),
            cwd: shown(&r.cwd),
            reason: shown(&r.reason),
            front: shown(&r.front),
            decided_by: shown(&r.decided_by),
            error: shown(&r.error),
            input: r
                .input
                .as_ref()
                .map(|i| input_line(i).trim_start_matches("Input: ").to_string()),
            risk_reasons: r.risk_reasons.iter().map(|s| visible(s)).collect(),
            notes: notes(r),
            always_refused: None,
            rule: None,
        }
    }

    /// With what answering a pending request would grant (`Approvals::offer`): why no
    /// grant is offered, or the rule one would save.
    pub fn offering(r: &Record, always_refused: Option<&str>, rule: Option<&str>) -> Shown {
        Shown {
            always_refused: always_refused.map(visible),
            rule: rule.map(visible),
            ..Shown::of(r)
        }
    }
}

/// An allowlist rule's text as every front shows it (see [`Shown`]).
#[derive(Clone, Debug, Serialize)]
pub struct ShownRule {
    pub agent: Option<String>,
    pub session: Option<String>,
    pub pattern: String,
    pub last_command: Option<String>,
    pub created_by: String,
}

impl ShownRule {
    pub fn of(r: &Rule) -> ShownRule {
        ShownRule {
            agent: r.agent.as_deref().map(visible),
            session: r.session.as_deref().map(visible),
            pattern: visible(&r.pattern),
            last_command: r.last_command.as_deref().map(visible),
            created_by: visible(&r.created_by),
        }
    }
}

/// A record or a rule as the admin API answers it: itself, and `shown`, its text as every
/// front shows it. The approvals page displays `shown` and escapes nothing itself, so it
/// cannot show less than the console and the chats do.
#[derive(Serialize)]
pub struct WithShown<T, S> {
    #[serde(flatten)]
    pub item: T,
    pub shown: S,
}

impl WithShown<Record, Shown> {
    pub fn record(r: Record) -> Self {
        let shown = Shown::of(&r);
        WithShown { item: r, shown }
    }
}

impl WithShown<Rule, ShownRule> {
    pub fn rule(r: Rule) -> Self {
        let shown = ShownRule::of(&r);
        WithShown { item: r, shown }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_record(input: serde_json::Value) -> Record {
        let mut r: Record = serde_json::from_value(serde_json::json!({
            "id": "x", "short_id": "a1b2", "agent": "claude-code", "session": null,
            "command": null, "argv": null,
            "tool": {"name": "Write", "input": {}},
            "cwd": "/repo", "reason": null, "status": "pending", "decision": null,
            "via": null, "decided_by": null, "risk": "needs-review", "risk_reasons": [],
            "created_at": "2026-11-22T10:00:00Z", "expires_at": null, "resolved_at": null,
            "run": false, "result": null, "error": null
        }))
        .unwrap();
        if let Command::Tool(t) = &mut r.command {
            t.input = input;
        }
        r
    }

    #[test]
    fn a_tool_call_shows_its_name_and_input_indented_and_escaped() {
        let r = tool_record(serde_json::json!({
            "file_path": "/repo/a\u{202e}txt.sh",
            "content": "line one\nline two\u{1b}[2J",
        }));
        let text = prompt(&r, Grants::default(), Utc::now());
        assert!(text.contains("\nTool: Write\nInput:\n  {\n"), "{text}");
        assert!(
            text.contains(r#"    "file_path": "/repo/a\u{202e}txt.sh""#),
            "{text}"
        );
        assert!(
            text.contains(r#"    "content": "line one\nline two\u001b[2J""#),
            "{text}"
        );
        assert!(
            !text.contains('\u{202e}') && !text.contains('\u{1b}'),
            "{text}"
        );
    }

    #[test]
    fn a_long_tool_input_is_cut_with_its_length_and_hash() {
        let content = "x".repeat(10_000);
        let r = tool_record(serde_json::json!({ "content": content }));
        let text = prompt(&r, Grants::default(), Utc::now());
        let raw = serde_json::to_string_pretty(&serde_json::json!({ "content": content })).unwrap();
        assert!(
            text.contains(&format!(
                "Input (cut: {} characters in all, sha256 {}):",
                raw.chars().count(),
                sha256_hex(raw.as_bytes())
            )),
            "{text}"
        );
        assert!(text.len() < 4_000, "{} bytes", text.len());
    }

    #[test]
    fn a_hidden_character_is_escaped_and_a_non_ascii_path_noted_everywhere() {
        let mut r = tool_record(serde_json::json!({}));
        r.command = Command::Line("head -n 5 notes.txt\u{E0041}".into());
        r.input = Some(InputSummary::of("x\u{E0041}"));
        let escaped = "head -n 5 notes.txt\\u{e0041}";
        let note = "a path or word in this request holds non-ASCII characters: notes.txt\\u{e0041} (U+E0041)";
        let prompt = prompt(&r, Grants::default(), Utc::now());
        let whole = whole(&r, Utc::now());
        for text in [&prompt, &whole] {
            assert!(text.contains(&format!("Command: {escaped}\n")), "{text}");
            assert!(text.contains(&format!("Note: {note}")), "{text}");
            assert!(text.contains("all of it: x\\u{e0041}"), "{text}");
            assert!(!text.contains('\u{E0041}'), "{text}");
        }
        assert!(outcome(&r).ends_with(escaped));
        let shown = serde_json::to_value(Shown::of(&r)).unwrap();
        assert_eq!(shown["text"], escaped);
        assert_eq!(shown["line"], escaped);
        assert_eq!(shown["notes"], serde_json::json!([note]));
        // A tool's path is read from the keys that name files.
        let r = tool_record(serde_json::json!({"file_path": "/repo/cаt.txt", "content": "naïve"}));
        assert_eq!(
            notes(&r),
            ["a path or word in this request holds non-ASCII characters: /repo/cаt.txt (U+0430)"]
        );
        assert_eq!(code_points("aéèêëìí"), "U+00E9 U+00E8 U+00EA U+00EB …");
        // An agent is told nothing a person could not see in a rule to type.
        let mut r = tool_record(serde_json::json!({}));
        r.command = Command::Line("cat notes.txt\u{E0041}".into());
        r.status = Status::Denied;
        r.decided_by = Some("al\u{202e}ice".into());
        r.via = Some(crate::model::Via::TelegramButton);
        let told = for_agent(&r);
        assert!(
            told.contains("by al\\u{202e}ice") && told.contains("allow add -- COMMAND"),
            "{told}"
        );
        assert!(
            !told.contains('\u{E0041}') && !told.contains('\u{202e}'),
            "{told}"
        );
    }

    #[test]
    fn a_list_names_the_input_by_the_start_of_its_hash() {
        let mut r = tool_record(serde_json::json!({}));
        r.input = Some(InputSummary::of("hi\n"));
        let hex = sha256_hex(b"hi\n");
        assert_eq!(
            stdin_mark(&r).unwrap(),
            format!("[3 B stdin sha256 {}]", &hex[..8])
        );
        assert!(pending_list(&[r], Utc::now()).contains(&hex[..8]));
    }

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
