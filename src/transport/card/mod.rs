//! What the owner reads in a chat: the approval message and the edit that closes it,
//! made once as HTML and as plain text with the same words, for every chat transport.
//! Every agent-supplied character is escaped, and the text stays within 4096 characters
//! (Telegram's limit, in UTF-16 code units once tags are parsed) however long the
//! command is; Matrix clients show the same message.

mod digest;

pub use digest::{Line, MOST as DIGEST_MOST, digest, fits as fits_digest};

use chrono::{DateTime, Utc};

use crate::config::ReactionMap;
use crate::model::{Decision, Record, RuleKind, Status, Via, sha256_hex};
use crate::render::{self, agent_line, input_line, run_line};
use crate::text::{clip_utf16, utf16_len, visible};

/// Telegram's limit on a message's text once entities are parsed, in UTF-16 code units;
/// also the bound of the Matrix message, which has room to spare.
pub const MAX_TEXT: usize = 4096;
/// The most of a command a message shows; past it, the length and sha256 say what was cut.
const COMMAND_SHOWN: usize = 3000;
/// The most of a cwd, a reason, or a name a message shows.
const FIELD_SHOWN: usize = 300;
/// The most risk reasons listed, and the most of each.
const REASONS_SHOWN: usize = 8;
const REASON_SHOWN: usize = 160;

/// A message in both forms: `html` for clients that render it, `plain` (the same text,
/// tags left out) for the rest and for Matrix's `body`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Card {
    pub html: String,
    pub plain: String,
}

/// A message being built, counting what Telegram counts against the limit: the text left
/// once tags are parsed away, in UTF-16 code units.
#[derive(Default)]
struct Html {
    html: String,
    plain: String,
    units: usize,
}

impl Html {
    /// Markup, which Telegram does not count (so never put text, not even a newline, here).
    fn tag(&mut self, markup: &str) -> &mut Self {
        self.html.push_str(markup);
        self
    }

    /// Text, escaped and counted.
    fn text(&mut self, s: &str) -> &mut Self {
        self.html.push_str(&escape(s));
        self.plain.push_str(s);
        self.units += utf16_len(s);
        self
    }

    fn append(&mut self, other: Html) {
        self.html.push_str(&other.html);
        self.plain.push_str(&other.plain);
        self.units += other.units;
    }

    /// `Label: value`, the value made visible and cut to `max`.
    fn field(&mut self, label: &str, value: &str, max: usize) -> &mut Self {
        self.text(&format!("{label}: "))
            .text(&clip_utf16(&visible(value), max))
            .text("\n")
    }
}

/// How the owner may answer, for the message of one pending request.
pub struct Offer<'a> {
    /// Which grants an answer may make (`Approvals::offer`).
    pub grants: &'a crate::approvals::Offer,
    pub reactions: &'a ReactionMap,
}

/// `s` with the characters HTML gives a meaning escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The message that asks the owner to decide.
pub fn approval(r: &Record, offer: &Offer<'_>, now: DateTime<Utc>) -> Card {
    let mut head = Html::default();
    head.tag("<b>")
        .text("🔒 Exec approval required")
        .tag("</b>")
        .text("\n");
    id_and_agent(&mut head, r);

    let mut tail = Html::default();
    details(&mut tail, r);
    // Rounded up: a request created a moment ago shows its full timeout.
    let left = r
        .expires_at
        .map_or(0, |t| ((t - now).num_milliseconds().max(0) + 999) / 1000);
    tail.text(&format!("Expires in: {left}s\n"));
    let grants = offer.grants;
    let id = &r.short_id;
    tail.text("Reply: ")
        .tag("<code>")
        .text(&format!("/approve {id}"))
        .tag("</code>");
    if grants.always_refused.is_none() {
        tail.text(&format!(" · /approve {id} always"));
    }
    if grants.session_refused.is_none() {
        tail.text(&format!(" · /approve {id} session"));
    }
    tail.text(&format!(" · /deny {id}"));
    let reactions = reaction_help(offer);
    if !reactions.is_empty() {
        tail.text(&format!("\nOr react: {reactions}"));
    }
    grant_help(&mut tail, r, grants);
    suggested_rule(&mut tail, grants);
    assemble(head, r, tail)
}

/// The glob rule the owner's approvals today suggest, with how to add it.
fn suggested_rule(out: &mut Html, grants: &crate::approvals::Offer) {
    let Some(s) = &grants.suggested else {
        return;
    };
    let (lead, add) = render::suggested_rule(
        &clip_utf16(&s.agent, FIELD_SHOWN),
        &clip_utf16(&s.pattern, REASON_SHOWN),
        s.saves,
    );
    out.text("\n")
        .text(&lead)
        .tag("<code>")
        .text(&add)
        .tag("</code>");
}

/// The message once the request is over: what happened, how, by whom and when, above
/// the request as it was asked.
pub fn closed(r: &Record) -> Card {
    let mut head = Html::default();
    head.tag("<b>")
        .text(&format!("{} {}", mark(r.status), title(r)))
        .tag("</b>")
        .text("\n");
    let mut how = Vec::new();
    if let Some(by) = &r.decided_by {
        how.push(format!("by {}", clip_utf16(&visible(by), FIELD_SHOWN)));
    }
    if let Some(via) = r.via {
        how.push(format!("via {via}"));
    }
    if let Some(at) = r.resolved_at {
        how.push(format!("at {}", at.format("%Y-%m-%d %H:%M:%S UTC")));
    }
    if !how.is_empty() {
        head.tag("<i>").text(&how.join(" ")).tag("</i>").text("\n");
    }
    id_and_agent(&mut head, r);
    let mut tail = Html::default();
    details(&mut tail, r);
    assemble(head, r, tail)
}

/// What each grant on offer would save, so that a click is never a surprise; or why
/// none is offered.
fn grant_help(out: &mut Html, r: &Record, grants: &crate::approvals::Offer) {
    if let Some(why) = &grants.always_refused {
        out.text("\n")
            .tag("<i>")
            .text(&format!(
                "\"Always\" and \"This session\" are not offered: {}",
                clip_utf16(&visible(why), REASON_SHOWN)
            ))
            .tag("</i>");
        return;
    }
    let Some(pattern) = &grants.rule else {
        return;
    };
    let what = match grants.rule_kind {
        Some(RuleKind::Tool) => "a tool rule",
        _ => "an exact rule",
    };
    let agent = clip_utf16(&visible(&r.agent), FIELD_SHOWN);
    out.text(&format!("\nAlways saves {what} for agent {agent}: "))
        .tag("<code>")
        .text(&clip_utf16(&visible(pattern), REASON_SHOWN))
        .tag("</code>");
    if let (None, Some(session)) = (&grants.session_refused, &r.session) {
        out.text(&format!(
            "; This session saves it for session {} only",
            clip_utf16(&visible(session), FIELD_SHOWN)
        ));
    }
    out.text(&format!(
        ". Add a duration for a rule that expires: /approve {0} 30m, /approve {0} always 7d",
        r.short_id
    ));
    if grants.session_refused.is_none() {
        out.text(&format!(", /approve {} session 2h", r.short_id));
    }
    out.text(".");
}

fn mark(status: Status) -> &'static str {
    match status {
        Status::Pending => "🔒",
        Status::Approved => "✅",
        Status::Denied => "❌",
        Status::Expired => "⌛",
        Status::Cancelled => "🚫",
    }
}

fn title(r: &Record) -> String {
    let until = r
        .rule_expires_at
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string());
    match (r.status, r.decision, until) {
        (Status::Approved, Some(Decision::AllowAlways), Some(t)) => {
            format!("Approved; exact rule saved until {t}")
        }
        (Status::Approved, Some(Decision::AllowSession), Some(t)) => {
            format!("Approved for this session; rule saved until {t}")
        }
        (Status::Approved, Some(Decision::AllowSession), None) => {
            "Approved for this session (rule saved for it)".into()
        }
        _ => fixed_title(r).into(),
    }
}

fn fixed_title(r: &Record) -> &'static str {
    match (r.status, r.decision, r.via) {
        (Status::Approved, Some(Decision::AllowAlways), _) => "Approved always (exact rule saved)",
        (Status::Approved, _, Some(Via::Timeout)) => "Approved by the fallback policy on timeout",
        (Status::Approved, _, _) => "Approved once",
        (Status::Denied, _, Some(Via::Timeout)) => "Denied by the fallback policy on timeout",
        (Status::Denied, _, _) => "Denied",
        (Status::Expired, _, _) => "Expired: nobody answered in time",
        (Status::Cancelled, _, Some(Via::Shutdown)) => "Cancelled: execgate shut down",
        (Status::Cancelled, _, Some(Via::Restart)) => "Cancelled: execgate restarted",
        (Status::Cancelled, _, Some(Via::Disconnect)) => "Cancelled: the agent stopped waiting",
        (Status::Cancelled, _, Some(Via::Withdrawn)) => "Cancelled: the agent withdrew it",
        (Status::Cancelled, _, _) => "Cancelled",
        (Status::Pending, _, _) => "Pending",
    }
}

fn id_and_agent(out: &mut Html, r: &Record) {
    out.text("ID: ")
        .tag("<code>")
        .text(&r.short_id)
        .tag("</code>")
        .text("\n");
    out.text(&clip_utf16(&agent_line(r), FIELD_SHOWN))
        .text("\n");
}

/// Everything about the request below the command.
fn details(out: &mut Html, r: &Record) {
    if let Some(input) = &r.input {
        out.text(&clip_utf16(&input_line(input), FIELD_SHOWN))
            .text("\n");
    }
    if let Some(cwd) = &r.cwd {
        out.field("Cwd", cwd, FIELD_SHOWN);
    }
    out.text(&run_line(r)).text("\n");
    if let Some(reason) = &r.reason {
        out.field("Reason", reason, FIELD_SHOWN);
    }
    out.text(&format!("Risk: {}\n", r.risk));
    for why in r.risk_reasons.iter().take(REASONS_SHOWN) {
        out.text(&format!("• {}\n", clip_utf16(&visible(why), REASON_SHOWN)));
    }
    if r.risk_reasons.len() > REASONS_SHOWN {
        out.text(&format!(
            "• … and {} more\n",
            r.risk_reasons.len() - REASONS_SHOWN
        ));
    }
    for note in render::notes(r) {
        out.text(&format!("Note: {}\n", clip_utf16(&note, FIELD_SHOWN)));
    }
}

/// `head`, the command in as much room as is left, then `tail`.
fn assemble(mut head: Html, r: &Record, tail: Html) -> Card {
    let room = MAX_TEXT.saturating_sub(head.units + tail.units);
    head.append(command(r, room.min(COMMAND_SHOWN)));
    head.append(tail);
    debug_assert!(head.units <= MAX_TEXT, "{} units", head.units);
    Card {
        html: head.html,
        plain: head.plain,
    }
}

/// The command (or the tool call's input) in a `<pre>` block of at most `room` units,
/// label included. What does not fit is cut, and its length and sha256 tell the owner
/// what they did not see (`execgate show` prints it whole).
fn command(r: &Record, room: usize) -> Html {
    let render::Asked {
        label,
        text: shown,
        raw,
    } = render::asked(r);
    let mut out = Html::default();
    let whole = format!("{label}:\n");
    if utf16_len(&whole) + utf16_len(&shown) < room {
        out.text(&whole)
            .tag("<pre>")
            .text(&shown)
            .tag("</pre>")
            .text("\n");
        return out;
    }
    let hex = sha256_hex(raw.as_bytes());
    let label = format!(
        "{label} (cut: {} characters in all, sha256 {hex}):\n",
        raw.chars().count()
    );
    let room = room.saturating_sub(utf16_len(&label) + 1);
    out.text(&label)
        .tag("<pre>")
        .text(&clip_utf16(&shown, room))
        .tag("</pre>")
        .text("\n");
    out
}

/// "👍 once | ✅ 👌 always | ❌ 👎 deny", from the reaction map.
fn reaction_help(offer: &Offer<'_>) -> String {
    let mut groups = Vec::new();
    for (decision, word) in [
        (Decision::AllowOnce, "once"),
        (Decision::AllowAlways, "always"),
        (Decision::Deny, "deny"),
    ] {
        if decision == Decision::AllowAlways && offer.grants.always_refused.is_some() {
            continue;
        }
        let emoji: Vec<&str> = offer
            .reactions
            .entries()
            .iter()
            .filter(|(_, d)| *d == decision)
            .map(|(e, _)| e.as_str())
            .collect();
        if !emoji.is_empty() {
            groups.push(format!("{} {word}", emoji.join(" ")));
        }
    }
    groups.join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Risk;

    pub(super) fn record(command: &str) -> Record {
        let now = Utc::now();
        Record {
            id: "0192f0c4-5d2e-7aa1-9b11-4c3d2e1f0a9b".into(),
            short_id: "a1b2".into(),
            agent: "claude".into(),
            session: None,
            command: crate::model::Command::Line(command.into()),
            cwd: Some("/home/o/<repo>".into()),
            reason: Some("check & fix".into()),
            risk: Risk::NeedsReview,
            risk_reasons: vec!["writes files".into()],
            status: Status::Pending,
            decision: None,
            rule_expires_at: None,
            via: None,
            decided_by: None,
            created_at: now,
            expires_at: Some(now + chrono::TimeDelta::seconds(120)),
            resolved_at: None,
            peer_uid: None,
            peer_pid: None,
            run: false,
            result: None,
            error: None,
            // The longest an input line gets: every head character escaped.
            input: Some(crate::model::InputSummary::of(&"\u{202e}".repeat(5000))),
            front: None,
            node: "build-1".into(),
            grant: None,
            confinement: None,
        }
    }

    /// The card's plain text, checked to be its HTML with the tags stripped and the
    /// entities `escape` produces decoded: what Telegram counts, and what Matrix shows
    /// where HTML is not rendered.
    fn plain(card: &Card) -> String {
        let stripped = strip(&card.html);
        assert_eq!(stripped, card.plain);
        stripped
    }

    pub(super) fn strip(html: &str) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => in_tag = false,
                _ if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
    }

    fn grants(always_refused: Option<&str>, session: bool) -> crate::approvals::Offer {
        crate::approvals::Offer {
            always_refused: always_refused.map(String::from),
            session_refused: match (always_refused, session) {
                (Some(why), _) => Some(why.into()),
                (None, false) => Some("the request names no session".into()),
                (None, true) => None,
            },
            rule: always_refused.is_none().then(|| "make test".into()),
            rule_kind: always_refused.is_none().then_some(RuleKind::Exact),
            suggested: None,
        }
    }

    const OFFERED: &crate::approvals::Offer = &crate::approvals::Offer {
        always_refused: None,
        session_refused: None,
        rule: None,
        rule_kind: None,
        suggested: None,
    };

    fn offer(map: &ReactionMap) -> Offer<'_> {
        Offer {
            grants: OFFERED,
            reactions: map,
        }
    }

    #[test]
    fn the_message_has_seed_shape_and_escapes_everything() {
        let map = ReactionMap::default();
        let r = record("echo '<b>hi</b>' && cat a&b");
        let now = r.created_at;
        let card = approval(&r, &offer(&map), now);
        let html = &card.html;
        assert!(html.contains("&lt;b&gt;hi&lt;/b&gt;"), "{html}");
        assert!(html.contains("cat a&amp;b"));
        assert!(html.contains("/home/o/&lt;repo&gt;"));
        let text = plain(&card);
        for needle in [
            "🔒 Exec approval required",
            "ID: a1b2",
            "Agent: claude",
            "Command:\necho '<b>hi</b>' && cat a&b",
            "Reason: check & fix",
            "Risk: needs-review",
            "• writes files",
            "Expires in: 120s",
            "Reply: /approve a1b2",
            "Or react: 👍 once | ✅ 👌 always | ❌ 👎 deny",
        ] {
            assert!(text.contains(needle), "{needle:?} missing from\n{text}");
        }
    }

    #[test]
    fn a_huge_command_is_cut_with_its_hash_and_fits() {
        let map = ReactionMap::default();
        // Astral characters count two UTF-16 units each; `<` grows fourfold when escaped.
        let command = format!("echo {}", "<𝕏&".repeat(5000));
        let mut r = record(&command);
        r.reason = Some("r".repeat(10_000));
        r.cwd = Some("/".repeat(10_000));
        r.risk_reasons = vec!["x".repeat(1000); 50];
        let text = plain(&approval(&r, &offer(&map), r.created_at));
        assert!(utf16_len(&text) <= MAX_TEXT, "{} units", utf16_len(&text));
        let hex = sha256_hex(command.as_bytes());
        assert!(text.contains(&hex));
        assert!(text.contains("15005 characters in all"), "{text}");
        assert!(text.contains("… and 42 more"));
        let closed = plain(&closed(&r));
        assert!(utf16_len(&closed) <= MAX_TEXT);
    }

    #[test]
    fn control_and_bidi_characters_are_shown_not_obeyed() {
        let map = ReactionMap::default();
        let text = plain(&approval(
            &record("ls\u{202e}txt.exe\nrm -rf ~"),
            &offer(&map),
            Utc::now(),
        ));
        assert!(text.contains("ls\\u{202e}txt.exe\\u{a}rm -rf ~"), "{text}");
        // The path the owner once approved, ending in a tag character (issue 30).
        let text = plain(&approval(
            &record("head -n 5 notes.txt\u{E0041}"),
            &offer(&map),
            Utc::now(),
        ));
        assert!(
            text.contains("Command:\nhead -n 5 notes.txt\\u{e0041}\n"),
            "{text}"
        );
        assert!(
            text.contains("Note: a path or word in this request holds non-ASCII characters: notes.txt\\u{e0041} (U+E0041)"),
            "{text}"
        );
        assert!(!text.contains('\u{E0041}'), "{text}");
    }

    #[test]
    fn always_is_withheld_where_it_would_be_refused() {
        let map = ReactionMap::default();
        let r = record("rm -rf build");
        let refused = Offer {
            grants: &grants(Some("the command is dangerous"), true),
            reactions: &map,
        };
        let text = plain(&approval(&r, &refused, Utc::now()));
        assert!(text.contains("Or react: 👍 once | ❌ 👎 deny"), "{text}");
        assert!(
            text.contains("Reply: /approve a1b2 · /deny a1b2\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "\"Always\" and \"This session\" are not offered: the command is dangerous"
            )
        );
    }

    #[test]
    fn the_message_says_what_each_grant_would_save() {
        let map = ReactionMap::default();
        let mut r = record("make  test");
        r.session = Some("s-<1>".into());
        let with_session = Offer {
            grants: &grants(None, true),
            reactions: &map,
        };
        let card = approval(&r, &with_session, Utc::now());
        let text = plain(&card);
        assert!(
            text.contains(
                "Reply: /approve a1b2 · /approve a1b2 always · /approve a1b2 session · /deny a1b2"
            ),
            "{text}"
        );
        assert!(
            text.contains("Always saves an exact rule for agent claude: make test; This session saves it for session s-<1> only. Add a duration for a rule that expires: /approve a1b2 30m, /approve a1b2 always 7d, /approve a1b2 session 2h."),
            "{text}"
        );
        assert!(card.html.contains("session s-&lt;1&gt; only"));

        r.session = None;
        let without = Offer {
            grants: &grants(None, false),
            reactions: &map,
        };
        let text = plain(&approval(&r, &without, Utc::now()));
        assert!(!text.contains("session"), "{text}");
        assert!(text.contains("Always saves an exact rule for agent claude: make test. Add"));
    }

    #[test]
    fn a_time_boxed_or_session_grant_says_so_when_closed() {
        let mut r = record("make test");
        r.status = Status::Approved;
        r.decision = Some(Decision::AllowAlways);
        r.rule_expires_at = Some("2026-11-21T12:30:00Z".parse().unwrap());
        assert!(
            plain(&closed(&r))
                .starts_with("✅ Approved; exact rule saved until 2026-11-21 12:30 UTC\n")
        );
        r.decision = Some(Decision::AllowSession);
        assert!(
            plain(&closed(&r)).starts_with(
                "✅ Approved for this session; rule saved until 2026-11-21 12:30 UTC\n"
            )
        );
        r.rule_expires_at = None;
        assert!(
            plain(&closed(&r)).starts_with("✅ Approved for this session (rule saved for it)\n")
        );
    }

    #[test]
    fn the_closing_edit_says_what_how_who_and_when() {
        let mut r = record("make test");
        r.status = Status::Approved;
        r.decision = Some(Decision::AllowAlways);
        r.via = Some(Via::TelegramReaction);
        r.decided_by = Some("telegram:111 (@olivia)".into());
        r.resolved_at = Some("2026-11-21T12:00:03Z".parse().unwrap());
        let text = plain(&closed(&r));
        assert!(text.starts_with("✅ Approved always (exact rule saved)\nby telegram:111 (@olivia) via telegram-reaction at 2026-11-21 12:00:03 UTC\nID: a1b2"), "{text}");
        assert!(!text.contains("Reply:"));
        r.status = Status::Cancelled;
        r.decision = None;
        r.via = Some(Via::Shutdown);
        r.decided_by = None;
        assert!(plain(&closed(&r)).starts_with("🚫 Cancelled: execgate shut down\nvia shutdown"));
    }
}
