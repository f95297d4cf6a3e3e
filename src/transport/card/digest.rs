//! A digest: one message that shows several requests, a short block and a row of
//! buttons each, posted when more requests wait than a chat's pacing lets through one by
//! one. A request joins a digest only when its block shows everything its own card would
//! show, uncut (one plain line of command, no stdin, nothing hidden or unusual to note):
//! a digest never shows the owner less than they decide on. Any other request is posted
//! alone.

use chrono::{DateTime, Utc};

use super::{Card, FIELD_SHOWN, Html, MAX_TEXT, mark, title};
use crate::model::{Command, Record};
use crate::render::{self, agent_line};
use crate::text::{clip_utf16, visible};

/// The most requests one digest shows: with the longest blocks, the message stays within
/// [`MAX_TEXT`].
pub const MOST: usize = 8;
/// The most a pending request's block may take, in UTF-16 code units: past it, the
/// request is posted alone.
const BLOCK_MOST: usize = 300;
/// What a closed block adds to the pending one at most ("✅ Approved … by … via … ").
const CLOSED_EXTRA: usize = 160;

/// One request of a digest: `grants` while it is pending (which buttons its row offers),
/// None once it has ended.
#[derive(Clone, Debug)]
pub struct Line {
    pub record: Record,
    pub grants: Option<crate::approvals::Offer>,
}

/// Whether `r` may be shown in a digest: its block shows it whole.
pub fn fits(r: &Record, now: DateTime<Utc>) -> bool {
    let Command::Line(line) = &r.command else {
        return false;
    };
    let plain = |s: &str| !s.contains(['\n', '\r']) && visible(s) == s;
    r.input.is_none()
        && plain(line)
        && r.cwd.as_deref().is_none_or(plain)
        && r.reason.as_deref().is_none_or(plain)
        && plain(&r.agent)
        && r.risk_reasons.iter().all(|w| plain(w))
        && render::notes(r).is_empty()
        && pending(r, now).units <= BLOCK_MOST
}

/// The digest message: a head counting what is still pending, each request's block in
/// order (pending or closed), and how to answer while any is pending.
pub fn digest(lines: &[Line], now: DateTime<Utc>) -> Card {
    let waiting = lines.iter().filter(|l| l.grants.is_some()).count();
    let mut out = Html::default();
    let head = match waiting {
        0 => format!("All {} requests decided", lines.len()),
        n => format!("🔒 {n} of {} requests need a decision", lines.len()),
    };
    out.tag("<b>").text(&head).tag("</b>").text("\n");
    for line in lines.iter().take(MOST) {
        out.text("\n");
        match line.grants {
            Some(_) => out.append(pending(&line.record, now)),
            None => out.append(closed(&line.record)),
        }
    }
    if waiting > 0 {
        out.text("\n").tag("<i>").text(
            "Answer each with the buttons in its row (its ID first), or /approve ID · \
             /approve ID always · /deny ID. A reaction here cannot say which request it \
             means.",
        );
        out.tag("</i>");
    }
    debug_assert!(out.units <= MAX_TEXT, "{} units", out.units);
    Card {
        html: out.html,
        plain: out.plain,
    }
}

/// A pending request's block: id, agent, risk and why, whether execgate runs it, then
/// the command, where and why.
fn pending(r: &Record, now: DateTime<Utc>) -> Html {
    let mut out = Html::default();
    let left = r
        .expires_at
        .map_or(0, |t| ((t - now).num_milliseconds().max(0) + 999) / 1000);
    out.text(&format!("{} ", mark(r.status)))
        .tag("<code>")
        .text(&r.short_id)
        .tag("</code>")
        .text(&format!(" · {} · Risk: {}", agent_line(r), r.risk));
    if !r.risk_reasons.is_empty() {
        out.text(&format!(" ({})", r.risk_reasons.join("; ")));
    }
    out.text(&format!(" · expires in {left}s\n"));
    if r.run {
        out.text(&render::run_line(r)).text("\n");
    }
    what(&mut out, r);
    out
}

/// An ended request's block: how it ended, by whom, then what it was.
fn closed(r: &Record) -> Html {
    let mut out = Html::default();
    out.text(&format!("{} ", mark(r.status)))
        .tag("<code>")
        .text(&r.short_id)
        .tag("</code>")
        .text(&format!(" {}", title(r)));
    if let Some(by) = &r.decided_by {
        out.text(&format!(
            " by {}",
            clip_utf16(&visible(by), FIELD_SHOWN / 5)
        ));
    }
    if let Some(via) = r.via {
        out.text(&format!(" via {via}"));
    }
    out.text("\n");
    what(&mut out, r);
    out
}

/// Where and why (each labelled, on a line of their own), then the command alone on
/// the last line: nothing the agent wrote shares a line with what execgate says.
fn what(out: &mut Html, r: &Record) {
    let mut context = Vec::new();
    if let Some(cwd) = &r.cwd {
        context.push(format!("Cwd: {cwd}"));
    }
    if let Some(reason) = &r.reason {
        context.push(format!("Reason: {reason}"));
    }
    if !context.is_empty() {
        out.text(&context.join(" · ")).text("\n");
    }
    out.tag("<code>")
        .text(&r.command.display())
        .tag("</code>")
        .text("\n");
}

// The bound the constants promise: the longest blocks, closed, and the head and foot.
const _: () = assert!(MOST * (BLOCK_MOST + CLOSED_EXTRA + 1) + 400 <= MAX_TEXT);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Decision, Status, Via};
    use crate::transport::card::tests::{record, strip};

    fn offer() -> crate::approvals::Offer {
        crate::approvals::Offer {
            always_refused: None,
            session_refused: None,
            rule: None,
            rule_kind: None,
            suggested: None,
        }
    }

    fn plain(short: &str, command: &str) -> Record {
        let mut r = record(command);
        r.short_id = short.into();
        r.input = None;
        r
    }

    #[test]
    fn each_request_shows_whole_and_ended_ones_say_how() {
        let mut done = plain("c3d4", "make <deploy> & test");
        let now = done.created_at;
        done.status = Status::Approved;
        done.decision = Some(Decision::AllowOnce);
        done.via = Some(Via::TelegramButton);
        done.decided_by = Some("telegram:1 (@o)".into());
        let lines = [
            Line {
                record: plain("a1b2", "cargo build"),
                grants: Some(offer()),
            },
            Line {
                record: done,
                grants: None,
            },
        ];
        let card = digest(&lines, now);
        assert_eq!(strip(&card.html), card.plain);
        assert!(card.plain.starts_with("🔒 1 of 2 requests need a decision"));
        assert!(card.plain.contains("🔒 a1b2 · Agent: claude · Risk: needs-review (writes files) · expires in 120s\nCwd: /home/o/<repo> · Reason: check & fix\ncargo build\n"), "{}", card.plain);
        assert!(card.plain.contains("✅ c3d4 Approved once by telegram:1 (@o) via telegram-button\nCwd: /home/o/<repo> · Reason: check & fix\nmake <deploy> & test\n"), "{}", card.plain);
        assert!(
            card.html
                .contains("<code>make &lt;deploy&gt; &amp; test</code>")
        );
        assert!(card.plain.contains("/approve ID"));

        let all_done: Vec<Line> = lines
            .iter()
            .map(|l| Line {
                grants: None,
                ..l.clone()
            })
            .collect();
        let card = digest(&all_done, now);
        assert!(card.plain.starts_with("All 2 requests decided"));
        assert!(
            !card.plain.contains("/approve ID"),
            "nothing left to answer"
        );
    }

    #[test]
    fn only_what_shows_whole_joins_a_digest() {
        let now = Utc::now();
        assert!(fits(&plain("a1b2", "cargo test --workspace"), now));
        assert!(!fits(&record("cargo test"), now), "stdin comes with it");
        assert!(
            !fits(&plain("a1b2", &"x".repeat(400)), now),
            "too long to show whole"
        );
        assert!(!fits(&plain("a1b2", "echo a\necho b"), now), "two lines");
        assert!(
            !fits(&plain("a1b2", "rm -rf \u{202e}txt.x"), now),
            "hidden characters"
        );
        assert!(!fits(&plain("a1b2", "cat fïle"), now), "a note to show");
        let mut tool = plain("a1b2", "x");
        tool.command = Command::Argv(vec!["ls".into()]);
        assert!(!fits(&tool, now), "not a shell line");
    }

    #[test]
    fn the_longest_digest_fits_a_message() {
        let now = Utc::now();
        let mut longest = plain("a1b2", "");
        longest.reason = None;
        longest.risk_reasons.clear();
        let mut n = 1;
        while fits(&plain("a1b2", &"y".repeat(n + 1)), now) {
            n += 1;
        }
        longest.command = Command::Line("y".repeat(n));
        assert!(fits(&longest, now));
        let mut ended = longest.clone();
        ended.status = Status::Denied;
        ended.via = Some(Via::TelegramCommand);
        ended.decided_by = Some("z".repeat(1000));
        let lines: Vec<Line> = (0..MOST)
            .map(|i| Line {
                record: if i % 2 == 0 {
                    longest.clone()
                } else {
                    ended.clone()
                },
                grants: (i % 2 == 0).then(offer),
            })
            .collect();
        let card = digest(&lines, now);
        assert!(crate::text::utf16_len(&card.plain) <= MAX_TEXT);
    }
}
