//! Rules to suggest from what the owner keeps approving: where a human approved commands
//! of one shape again and again (`npx tsc --noEmit`, `cd web && npx tsc -p .`), the
//! bounded glob that would have approved them (`npx tsc *`), with how many prompts it
//! would have saved.
//!
//! A candidate is a program and the plain words that say what it does (`cargo test`,
//! `npm run build`, `python -m pytest`), then ` *`; it is found in the command inside
//! the agent's habits and plumbing (`cd web && … 2>&1 | tail`). It is suggested only
//! when the policy, with that one rule added for that agent, approves at least
//! `min` of the requests a human approved, by the rule (so what its wildcard covers
//! is understood and harmless, as for any glob: never code it does not name, a write,
//! a danger); approves none a human denied; and is neither too broad nor "run anything"
//! (`rules::too_broad`, `rules::runs_anything`). Commands that only read are left out:
//! reads inside the project pass already, and a rule would widen reads outside it.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};

use super::{Outcome, Policy, Subject, programs, rules};
use crate::model::{CommandRef, Record, Rule, RuleKind, Via};

/// At most this many words are written out before the wildcard.
const MAX_LITERAL: usize = 3;

/// A rule the owner could add, and what it would have saved.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Suggestion {
    /// The agent the rule would be for.
    pub agent: String,
    /// The glob.
    pub pattern: String,
    /// The requests a human approved that it would have approved.
    pub saves: usize,
    /// A few of their commands, newest first.
    pub examples: Vec<String>,
}

/// Whether a human decided `r` (not policy, a rule or a timeout).
fn by_a_human(r: &Record) -> bool {
    r.decision.is_some()
        && matches!(
            r.via,
            Some(
                Via::Console
                    | Via::Cli
                    | Via::TelegramCommand
                    | Via::TelegramReaction
                    | Via::TelegramButton
                    | Via::MatrixCommand
                    | Via::MatrixReaction
                    | Via::SlackCommand
                    | Via::SlackReaction
                    | Via::SlackButton
                    | Via::DiscordCommand
                    | Via::DiscordReaction
                    | Via::DiscordButton
                    | Via::Web
            )
        )
}

/// The glob that would cover `line`'s main command: the first simple command, inside a
/// leading `cd DIR &&`, that does more than read, written as its program and the plain
/// words after it (no option, no path), then ` *`.
pub fn candidate(line: &str) -> Option<String> {
    let analysis = super::parse::analyse(line);
    if !analysis.plain() {
        return None;
    }
    let command = analysis.commands.iter().find(|c| {
        c.words.first().is_some_and(|p| p != "cd") && {
            let u = programs::understand(&c.words, c.piped);
            !u.profiled
                || !u.harmless()
                    && !u.findings.iter().all(|f| {
                        matches!(
                            f.effect,
                            programs::Effect::Reads(_) | programs::Effect::ReadsTree(_)
                        )
                    })
        }
    })?;
    let words = &command.words;
    for n in (1..=MAX_LITERAL.min(words.len())).rev() {
        if programs::fixes_what_runs(&words[..n]) {
            return Some(format!("{} *", shell_words(&words[..n])));
        }
    }
    let plain = |w: &String| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '@'))
            && !w.starts_with('-')
    };
    let literal = words
        .iter()
        .take(MAX_LITERAL)
        .take_while(|w| plain(w))
        .count();
    if literal == 0 {
        return None;
    }
    Some(format!("{} *", shell_words(&words[..literal])))
}

fn shell_words(words: &[String]) -> String {
    crate::model::shell_join(words)
}

impl Policy {
    /// The rules worth suggesting from `history` (any order): see the module's docs.
    pub fn suggest(&self, history: &[Record], min: usize, now: DateTime<Utc>) -> Vec<Suggestion> {
        let decided: Vec<&Record> = history.iter().filter(|r| by_a_human(r) && !r.run).collect();
        // Candidates by agent, from what a human approved.
        let mut groups: BTreeMap<(String, String), usize> = BTreeMap::new();
        for r in decided.iter().filter(|r| approved(r)) {
            if let CommandRef::Line(line) = r.command.as_ref()
                && let Some(pattern) = candidate(line)
            {
                *groups.entry((r.agent.clone(), pattern)).or_default() += 1;
            }
        }
        let mut out = Vec::new();
        for ((agent, pattern), seen) in groups {
            if seen < min
                || rules::too_broad(&pattern).is_some()
                || rules::runs_anything(&pattern).is_some()
            {
                continue;
            }
            let trial = self.with_rules(&[trial_rule(&agent, &pattern, now)]);
            let mut saves = Vec::new();
            let mut refused = false;
            for r in decided.iter().filter(|r| r.agent == agent) {
                if !trial.approves_by_rule(r, now) {
                    continue;
                }
                if approved(r) {
                    saves.push(r);
                } else {
                    refused = true;
                    break;
                }
            }
            if refused || saves.len() < min {
                continue;
            }
            saves.sort_by_key(|r| std::cmp::Reverse(r.created_at));
            let mut examples: Vec<String> = Vec::new();
            for r in &saves {
                let shown = match r.command.as_ref() {
                    CommandRef::Line(line) => line.to_string(),
                    CommandRef::Argv(argv) => shell_words(argv),
                    CommandRef::Tool(tool) => tool.name.clone(),
                };
                if !examples.contains(&shown) && examples.len() < 3 {
                    examples.push(shown);
                }
            }
            out.push(Suggestion {
                agent,
                pattern,
                saves: saves.len(),
                examples,
            });
        }
        out.sort_by(|a, b| b.saves.cmp(&a.saves).then(a.pattern.cmp(&b.pattern)));
        out
    }

    /// Whether the allowlist, not step 8, approves `r` where it was asked.
    fn approves_by_rule(&self, r: &Record, now: DateTime<Utc>) -> bool {
        let subject = Subject {
            agent: &r.agent,
            session: r.session.as_deref(),
            command: r.command.as_ref(),
            cwd: r.cwd.as_deref().map(Path::new),
            run: r.run,
            shell: None,
            uid: r.peer_uid,
        };
        let v = self.evaluate(subject, now);
        matches!(v.outcome, Outcome::Approve { by_allowlist: true }) && !v.rules_matched.is_empty()
    }
}

fn approved(r: &Record) -> bool {
    r.decision
        .is_some_and(|d| d != crate::model::Decision::Deny)
}

/// The rule being tried: a glob for `agent`.
fn trial_rule(agent: &str, pattern: &str, now: DateTime<Utc>) -> Rule {
    Rule {
        id: 1,
        agent: Some(agent.to_string()),
        session: None,
        pattern: pattern.to_string(),
        kind: RuleKind::Glob,
        created_at: now,
        created_by: "suggestion".into(),
        expires_at: None,
        source_request: None,
        use_count: 0,
        last_used_at: None,
        last_command: None,
        memory: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_candidate_is_the_main_command_and_its_plain_words() {
        for (line, pattern) in [
            ("npx tsc --noEmit", Some("npx tsc *")),
            ("cd web && npx tsc -p . 2>&1 | tail -30", Some("npx tsc *")),
            ("cargo test --lib foo", Some("cargo test *")),
            (
                "python -m pytest tests/test_x.py -q",
                Some("python -m pytest *"),
            ),
            ("npm run build", Some("npm run build *")),
            ("pytest tests/test_x.py", Some("pytest *")),
            ("cat /etc/hosts", None),
            ("ls -la", None),
            ("echo $(id)", None),
        ] {
            assert_eq!(candidate(line).as_deref(), pattern, "{line}");
        }
    }
}
