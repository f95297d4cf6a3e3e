//! Compiled rule sets: the allowlist (exact and glob rules, per agent or global), the deny
//! list, and the allowed binaries. Each is compiled once and swapped whole when it
//! changes, so a request never compiles a glob.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use globset::{Glob, GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};

use super::programs::Understanding;
use super::shell;
use crate::model::{Rule, RuleKind};

/// Allowlist globs are case-sensitive: `Git` is not `git`.
pub fn compile_allow_glob(pattern: &str) -> Result<GlobMatcher, globset::Error> {
    Ok(allow_glob(pattern)?.compile_matcher())
}

fn allow_glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
}

/// The deny list. A match on the whole command, on any segment, or on any command it
/// runs (looked through wrappers, scripts and what programs start) denies; options are
/// matched however they are spelled (`*rm -rf*` denies `rm -fr`, `rm -r -f` and `rm
/// --recursive --force`).
#[derive(Debug)]
pub struct DenyList {
    set: GlobSet,
    patterns: Vec<String>,
    /// The patterns whose options could be respelled, in their one spelling
    /// ([`spelled_out`]), and the pattern each came from.
    spelled: GlobSet,
    spelled_of: Vec<usize>,
}

impl DenyList {
    pub fn new(patterns: &[String]) -> Result<DenyList, globset::Error> {
        let mut b = GlobSetBuilder::new();
        let mut spelled = GlobSetBuilder::new();
        let mut spelled_of = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            b.add(crate::config::compile_deny_glob(p)?);
            if let Some(one) = spelled_pattern(p)
                && let Ok(glob) = crate::config::compile_deny_glob(&one)
            {
                spelled.add(glob);
                spelled_of.push(i);
            }
        }
        Ok(DenyList {
            set: b.build()?,
            patterns: patterns.to_vec(),
            spelled: spelled.build()?,
            spelled_of,
        })
    }

    /// The first deny pattern that matches, checking the whole command, each segment,
    /// and each command a segment runs as its words are (with the program's directory
    /// stripped too: `/bin/rm` is `rm`) and with its options in one spelling.
    pub fn matches(&self, normalized: &str, segments: &[String]) -> Option<&str> {
        if self.patterns.is_empty() {
            return None;
        }
        let mut candidates = vec![normalized.to_string()];
        let mut spelled = Vec::new();
        for seg in segments {
            candidates.push(seg.clone());
            for words in super::risk::looked_through(&shell::command_words(seg)) {
                candidates.push(words.join(" "));
                if let Some(base) = words[0].rsplit('/').next().filter(|b| *b != words[0]) {
                    let mut stripped = vec![base.to_string()];
                    stripped.extend(words[1..].iter().cloned());
                    candidates.push(stripped.join(" "));
                }
                if let Some(one) = spelled_out(&words) {
                    spelled.push(one.join(" "));
                }
            }
        }
        let raw = candidates.iter().find_map(|c| {
            self.set
                .matches(c)
                .first()
                .map(|&i| self.patterns[i].as_str())
        });
        raw.or_else(|| {
            spelled.iter().find_map(|c| {
                self.spelled
                    .matches(c)
                    .first()
                    .map(|&i| self.patterns[self.spelled_of[i]].as_str())
            })
        })
    }
}

/// A command with its options in one spelling, if any option could be spelled another
/// way: the program without its directory, then every option without a value that a
/// word spells (clusters split, long names to their short letter, the program's own
/// synonyms merged: `rm -R` is `rm -r`), sorted, then the other words in order. `rm -fr
/// x` and `rm --recursive -f x` are both `rm -f -r x`.
fn spelled_out(words: &[String]) -> Option<Vec<String>> {
    let program = words.first()?.rsplit('/').next()?.to_string();
    let mut letters: Vec<char> = Vec::new();
    let mut rest: Vec<String> = Vec::new();
    let mut options = true;
    for w in &words[1..] {
        if w == "--" {
            options = false;
        }
        match options
            .then(|| super::programs::option_letters(&program, w))
            .flatten()
        {
            Some(ls) => letters.extend(ls),
            None => rest.push(w.clone()),
        }
    }
    if letters.is_empty() {
        return None;
    }
    letters.sort_unstable();
    letters.dedup();
    let mut out = vec![program];
    out.extend(letters.into_iter().map(|c| format!("-{c}")));
    out.extend(rest);
    Some(out)
}

/// A deny pattern in the spelling of [`spelled_out`], when it is a command written out
/// with at most a wildcard before and after (`*rm -rf*`, `rm -rf *`): `*rm -f -r*`.
fn spelled_pattern(pattern: &str) -> Option<String> {
    let trimmed = pattern.trim();
    let (lead, body) = match trimmed.strip_prefix('*') {
        Some(rest) => ("*", rest),
        None => ("", trimmed),
    };
    let (body, tail) = if let Some(b) = body.strip_suffix(" *") {
        (b, " *")
    } else if let Some(b) = body.strip_suffix('*') {
        (b, "*")
    } else {
        (body, "")
    };
    let words: Vec<String> = body.split_whitespace().map(str::to_string).collect();
    if words.is_empty() || words.iter().any(|w| w.contains(['*', '?', '[', '{', '\\'])) {
        return None;
    }
    let one = spelled_out(&words)?;
    Some(format!("{lead}{}{tail}", one.join(" ")))
}

/// `policy.allowed_binaries`: empty or containing `*` means no restriction.
#[derive(Debug)]
pub struct AllowedBinaries {
    names: Option<HashSet<String>>,
}

impl AllowedBinaries {
    pub fn new(list: &[String]) -> AllowedBinaries {
        let any = list.is_empty() || list.iter().any(|b| b == "*");
        AllowedBinaries {
            names: (!any).then(|| list.iter().cloned().collect()),
        }
    }

    /// Why the command may not run, if it may not: the first program it would run that
    /// is not listed, looking through wrappers, `sh -c` scripts and what programs start
    /// as their words say (`find -exec rm`, sed's `e rm`, `git -c alias.x='!rm …'`,
    /// `tar --to-command=rm`); or a program it would start that execgate cannot name
    /// (awk's `system(…)`, an editor), or words of a known program it cannot account for
    /// (which may start anything), since no list can vouch for those.
    pub fn first_refused(&self, segments: &[String]) -> Option<String> {
        let names = self.names.as_ref()?;
        if segments.is_empty() {
            return Some("a segment with no program is not in policy.allowed_binaries".into());
        }
        for seg in segments {
            let words = shell::command_words(seg);
            if words.first().is_none_or(|p| p.is_empty()) {
                return Some("a segment with no program is not in policy.allowed_binaries".into());
            }
            let commands = super::risk::looked_through(&words);
            // Every program named first: the clearest reason is the program not listed.
            if let Some(inner) = commands.iter().find(|c| !names.contains(&c[0])) {
                return Some(format!("{:?} is not in policy.allowed_binaries", inner[0]));
            }
            for inner in &commands {
                let program = &inner[0];
                let u = super::programs::understand(inner, false);
                if u.runs.contains(&super::programs::Runs::Unnamed) {
                    return Some(format!(
                        "{program:?} would start a program execgate cannot name, which policy.allowed_binaries cannot vouch for"
                    ));
                }
                // A word its profile does not know may start anything (`git difftool -x
                // CMD`, an option execgate has no line for).
                if u.profiled && !u.understood() {
                    return Some(format!(
                        "execgate cannot account for every word of `{}`, so cannot tell what it would start, which policy.allowed_binaries cannot vouch for",
                        inner.join(" ")
                    ));
                }
            }
        }
        None
    }
}

struct CompiledRule {
    id: i64,
    agent: Option<String>,
    /// Only with `agent`: the one session of it the rule applies to.
    session: Option<String>,
    /// For a glob, how many of its leading words are written out: the rest of a
    /// command it matches is the wildcard's.
    literal: usize,
    expires_at: Option<DateTime<Utc>>,
}

/// One simple command as the allowlist sees it: its words as written (what rules are
/// compared with) and what its program's profile makes of them.
pub struct Segment<'a> {
    pub text: &'a str,
    pub understanding: &'a Understanding,
    /// The path policy's refusal of each of its findings, judged where it runs.
    pub paths: &'a [Option<super::paths::Refusal>],
    /// For a program without a profile, the words no wildcard covers
    /// ([`super::wildcard::uncovered`]); empty for a profiled one, whose profile decides.
    pub uncovered: &'a [super::wildcard::Uncovered],
    /// Harmless where it runs: its profile finds nothing, or it only reads inside the
    /// request's project.
    pub harmless: bool,
    /// For each of its findings, whether it reads outside the request's project (false
    /// for all when the request has none): no wildcard covers such a read.
    pub outside: &'a [bool],
}

/// How many leading words of a glob pattern are written out, before the first word with
/// a wildcard (`*`, `?`, `[`, `{`). `cargo test *` → 2.
pub fn literal_words(pattern: &str) -> usize {
    shell::words(pattern)
        .iter()
        .take_while(|w| !w.contains(['*', '?', '[', '{']))
        .count()
}

/// Who asks, as rules are matched: the agent, and the session it named (if any).
pub struct Who<'a> {
    pub agent: &'a str,
    pub session: Option<&'a str>,
}

impl Who<'_> {
    /// How closely `rule` applies to this asker: 0 for a rule for this session of this
    /// agent, 1 for this agent, 2 for every agent; None when it does not apply (another
    /// agent, or a session rule for another session or for a request naming none).
    fn scope_of(&self, rule: &CompiledRule) -> Option<u8> {
        match (&rule.agent, &rule.session) {
            (None, _) => Some(2),
            (Some(a), _) if a != self.agent => None,
            (Some(_), None) => Some(1),
            (Some(_), Some(s)) => (self.session == Some(s.as_str())).then_some(0),
        }
    }
}

/// The allowlist, compiled.
#[derive(Default)]
pub struct Allowlist {
    /// Exact rules by pattern; several rules (agents) may share one pattern.
    exact: HashMap<String, Vec<usize>>,
    rules: Vec<CompiledRule>,
    /// Every glob rule in one automaton, so a segment is matched against all of them at
    /// once (10,000 rules cost one pass, not 10,000). A glob ending in ` *` is in it
    /// twice, as written and without the ` *`: `cargo test *` also approves a bare
    /// `cargo test` (the wildcard may cover nothing).
    globs: GlobSet,
    /// The rule each entry of `globs` belongs to, in the order the rules were given.
    glob_rule: Vec<usize>,
    /// Every tool rule's glob over tool names, in one automaton, and the rule each
    /// belongs to.
    tool_globs: GlobSet,
    tool_rule: Vec<usize>,
}

impl std::fmt::Debug for Allowlist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Allowlist({} rules)", self.rules.len())
    }
}

impl Allowlist {
    /// Compiles stored rules. A glob that no longer compiles is skipped with a warning:
    /// skipping only ever asks more, never less.
    pub fn compile(rules: &[Rule]) -> Allowlist {
        let mut list = Allowlist::default();
        let mut set = GlobSetBuilder::new();
        let mut tools = GlobSetBuilder::new();
        for rule in rules {
            // A session rule without an agent would apply to that session name of every
            // agent; none is ever made, and one found is not trusted.
            if rule.session.is_some() && rule.agent.is_none() {
                tracing::warn!(
                    rule = rule.id,
                    "skipping a session rule that names no agent"
                );
                continue;
            }
            let index = list.rules.len();
            let literal = match rule.kind {
                RuleKind::Exact => {
                    list.exact
                        .entry(rule.pattern.clone())
                        .or_default()
                        .push(index);
                    usize::MAX
                }
                RuleKind::Glob => {
                    let glob = match allow_glob(&rule.pattern) {
                        Ok(g) => g,
                        Err(e) => {
                            tracing::warn!(rule = rule.id, error = %e, "skipping allowlist glob that does not compile");
                            continue;
                        }
                    };
                    set.add(glob);
                    list.glob_rule.push(index);
                    if let Some(prefix) = rule.pattern.strip_suffix(" *")
                        && !prefix.trim().is_empty()
                        && let Ok(bare) = allow_glob(prefix)
                    {
                        set.add(bare);
                        list.glob_rule.push(index);
                    }
                    literal_words(&rule.pattern)
                }
                RuleKind::Tool => {
                    match compile_tool_glob(&rule.pattern) {
                        Ok(g) => tools.add(g),
                        Err(e) => {
                            tracing::warn!(rule = rule.id, error = %e, "skipping tool rule that does not compile");
                            continue;
                        }
                    };
                    list.tool_rule.push(index);
                    usize::MAX
                }
            };
            list.rules.push(CompiledRule {
                id: rule.id,
                agent: rule.agent.clone(),
                session: rule.session.clone(),
                literal,
                expires_at: rule.expires_at,
            });
        }
        list.globs = match set.build() {
            Ok(globs) => globs,
            Err(e) => {
                // Each glob compiled alone; a set that does not build approves nothing.
                tracing::error!(error = %e, "the allowlist's globs do not build together; no glob approves");
                list.glob_rule.clear();
                GlobSet::empty()
            }
        };
        list.tool_globs = match tools.build() {
            Ok(globs) => globs,
            Err(e) => {
                tracing::error!(error = %e, "the allowlist's tool rules do not build together; no tool rule approves");
                list.tool_rule.clear();
                GlobSet::empty()
            }
        };
        list
    }

    /// Whether any glob rule's pattern matches this simple command, live or not, for
    /// whichever agent: what is worth judging before [`Allowlist::approve`].
    pub fn any_glob_matches(&self, segment: &str) -> bool {
        !self.glob_rule.is_empty() && self.globs.is_match(segment)
    }

    /// The tool rule that approves a call of the tool `name` by `who`, if one does.
    pub fn approve_tool(&self, who: &Who<'_>, name: &str, now: DateTime<Utc>) -> Option<i64> {
        self.first_live(
            self.tool_globs
                .matches(name)
                .into_iter()
                .map(|hit| self.tool_rule[hit]),
            who,
            now,
            |_| true,
        )
    }

    /// Among the rules at `candidates` (in the order the rules were given), the one
    /// that applies to `who` now and passes `also`, most specific first: a rule for
    /// this session of the agent, then one for the agent, then one for every agent.
    fn first_live(
        &self,
        candidates: impl Iterator<Item = usize>,
        who: &Who<'_>,
        now: DateTime<Utc>,
        also: impl Fn(&CompiledRule) -> bool,
    ) -> Option<i64> {
        candidates
            .filter_map(|i| {
                let r = &self.rules[i];
                let scope = who.scope_of(r)?;
                (r.expires_at.is_none_or(|t| t > now) && also(r)).then_some((scope, i))
            })
            .min()
            .map(|(_, i)| self.rules[i].id)
    }

    fn exact_rule(&self, text: &str, who: &Who<'_>, now: DateTime<Utc>) -> Option<i64> {
        let hits = self.exact.get(text)?;
        self.first_live(hits.iter().copied(), who, now, |_| true)
    }

    /// The rules that approve a plain command: an exact rule for the whole normalized
    /// command, or one rule per segment. Globs are matched per segment, never across
    /// separators, and never approve a dangerous command. A glob approves a segment only
    /// when what its wildcard covers is understood and harmless enough
    /// (docs/decisions.md step 7): operands and harmless options (reads inside the request's
    /// project, where it has one), never code it did not name, a write, a
    /// change of configuration or a word execgate cannot account for. Empty: no approval.
    ///
    /// With `harmless_ok` (step 8 could approve here), a segment no rule matches still
    /// passes when its program's profile finds it harmless: `git log src | head -20`
    /// under `git log *`. At least one rule must have matched.
    pub fn approve(
        &self,
        who: &Who<'_>,
        normalized: &str,
        segments: &[Segment<'_>],
        dangerous: bool,
        harmless_ok: bool,
        now: DateTime<Utc>,
    ) -> Vec<i64> {
        if let Some(id) = self.exact_rule(normalized, who, now) {
            return vec![id];
        }
        let mut used = Vec::new();
        for seg in segments {
            let hit = self.exact_rule(seg.text, who, now).or_else(|| {
                // A glob never approves a dangerous command, nor a wrapper, shell or
                // interpreter (`timeout *` would approve `timeout 5 rm -rf ~`). What a
                // profiled program runs is a finding, refused below unless the rule's
                // author wrote it out (`npx prettier *`).
                let u = seg.understanding;
                if dangerous || (!u.profiled && runs_other_programs(seg.text)) {
                    return None;
                }
                self.first_live(
                    self.globs
                        .matches(seg.text)
                        .into_iter()
                        .map(|hit| self.glob_rule[hit]),
                    who,
                    now,
                    |r| {
                        u.glob_refusal(r.literal, seg.paths).is_none()
                            && !seg.uncovered.iter().any(|w| w.at >= r.literal)
                            && !u
                                .findings
                                .iter()
                                .zip(seg.outside)
                                .any(|(f, out)| *out && f.at.last >= r.literal)
                    },
                )
            });
            match hit {
                Some(id) => used.push(id),
                None if harmless_ok && seg.harmless => {}
                None => return Vec::new(),
            }
        }
        used.dedup();
        used
    }
}

fn runs_other_programs(segment: &str) -> bool {
    let words = shell::command_words(segment);
    words
        .first()
        .is_none_or(|p| super::risk::is_wrapper_or_interpreter(p))
        || super::risk::runs_other_code(&words)
}

/// A tool rule's pattern as matched: a case-sensitive glob over the whole tool name
/// (`Read`, `mcp__github__get_*`). Tool names have no separators, so `*` is any run of
/// name characters.
pub fn compile_tool_glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .case_insensitive(false)
        .literal_separator(false)
        .build()
}

/// Why an owner-written tool rule would approve every tool, if it would.
pub fn tool_rule_too_broad(pattern: &str) -> Option<String> {
    let matches_all = pattern.chars().all(|c| c == '*')
        || compile_tool_glob(pattern).is_ok_and(|g| {
            let m = g.compile_matcher();
            ["Bash", "Write", "mcp__x__y", "a"]
                .iter()
                .all(|n| m.is_match(n))
        });
    matches_all.then(|| format!("`{pattern}` matches every tool"))
}

/// What an owner should know before adding a glob that amounts to "run anything": the
/// wildcard covers the program's own targets, scripts or packages, whose code an agent
/// may be able to edit. The rule is kept (the owner asked for it); execgate still
/// approves through it only words it understands (docs/decisions.md step 7).
pub fn runs_anything(pattern: &str) -> Option<String> {
    if literal_words(pattern) != 1 {
        return None;
    }
    let words = shell::words(pattern);
    let program = words.first()?.rsplit('/').next()?.to_string();
    let what = match program.as_str() {
        "make" | "gmake" => {
            "make runs whatever the Makefile's recipes say, and an agent that can edit the Makefile decides what that is"
        }
        "npm" | "yarn" | "pnpm" | "bun" => {
            "it runs whatever package.json's scripts say, and installing runs the install scripts of every dependency"
        }
        "npx" | "pnpx" | "bunx" => {
            "npx runs any package from the registry (execgate approves none the rule does not name: write `npx PACKAGE *`)"
        }
        "cargo" => {
            "cargo builds and runs the project's code, build scripts and tests, which an agent may be able to edit"
        }
        "go" => "go runs and builds the project's code, which an agent may be able to edit",
        "python" | "python3" | "node" | "ruby" | "perl" | "php" | "deno" | "bash" | "sh"
        | "zsh" => "it runs any script or code it is given",
        p if super::programs::is_python(p) => "it runs any script or code it is given",
        _ => return None,
    };
    Some(format!(
        "`{pattern}` amounts to \"run anything\": {what}. execgate still approves through it only the options it understands (not `-f FILE`, `-C DIR`, `--config`, `+toolchain`, `--prefix`, …)"
    ))
}

/// What an owner should know before adding a glob whose wildcard covers the words of a
/// program execgate has no profile for (`screen *`, not `screen -ls`): the wildcard is
/// theirs, but for what it never covers (docs/decisions.md, "Globs over programs
/// execgate does not know").
pub fn wildcard_is_yours(pattern: &str) -> Option<String> {
    let words = shell::words(pattern);
    let literal = literal_words(pattern);
    if literal == 0 || literal >= words.len() {
        return None;
    }
    super::wildcard::warning(&words[0])
}

/// Why an owner-written glob would approve nearly everything, if it would.
pub fn too_broad(pattern: &str) -> Option<String> {
    let words = shell::words(pattern);
    let wild = |w: &str| w.chars().all(|c| c == '*' || c == '?');
    match words.as_slice() {
        [] => Some("the pattern is empty".into()),
        ws if ws.iter().all(|w| wild(w)) => Some(format!("`{pattern}` matches every command")),
        [first, rest @ ..] if wild(first) || first.starts_with('*') => {
            let _ = rest;
            Some(format!("`{pattern}` matches any program"))
        }
        [first, rest @ ..]
            if super::risk::is_wrapper_or_interpreter(first)
                && rest.iter().any(|w| w.contains('*'))
                && !super::programs::fixes_what_runs(&words[..literal_words(pattern)]) =>
        {
            Some(format!(
                "`{first}` runs other programs, so `{pattern}` would approve anything"
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deny(patterns: &[&str], command: &str) -> Option<String> {
        let list =
            DenyList::new(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>()).unwrap();
        list.matches(command, &[command.to_string()])
            .map(str::to_string)
    }

    #[test]
    fn the_deny_list_reads_options_however_they_are_spelled() {
        let rm = ["*rm -rf*"];
        for command in [
            "rm -rf /tmp/x",
            "rm -fr /tmp/x",
            "rm -r -f /tmp/x",
            "rm -Rf /tmp/x",
            "rm --recursive --force /tmp/x",
            "/bin/rm -rvf /tmp/x",
            "sudo rm -fr /tmp/x",
            // What a program runs, as its profile reads it.
            "sed ':x e rm -fr /tmp/x'",
            "find . -exec rm -fr {} +",
            "git -c alias.x='!rm -fr /tmp/x' x",
            "tar --to-command='rm -fr /tmp/x' -xf a.tar",
        ] {
            assert_eq!(deny(&rm, command).as_deref(), Some("*rm -rf*"), "{command}");
        }
        for command in ["rm -f /tmp/x", "rm -r /tmp/x", "echo rm -fr", "ls -fr"] {
            assert_eq!(deny(&rm, command), None, "{command}");
        }
        assert!(deny(&["rm -rf *"], "rm -fr x").is_some());
        // Through a runner that starts what its words name (issue 30, finding 5).
        assert!(deny(&["rm -rf *"], "cpulimit -l 5 -- rm -rf x").is_some());
        assert!(deny(&["rm -rf *"], "tmux new 'rm -rf x'").is_some());
        assert!(
            deny(&["*git push --force*"], "git push -f origin").is_none(),
            "`-f` has a value-less synonym only by its profile"
        );
    }

    /// Under `PROG *` for a program without a profile, the wildcard covers ordinary words
    /// but not a shell, inline code, a secret or a path a runner starts; words the rule
    /// writes out are the owner's (issue 30, finding 5).
    #[test]
    fn a_glob_over_an_unknown_program_leaves_code_to_a_human() {
        use crate::model::RuleKind;
        use crate::policy::{parse, programs, wildcard};
        let rules: Vec<Rule> = ["screen *", "tmux new sh *", "guile *", "sshpass *"]
            .iter()
            .enumerate()
            .map(|(i, p)| Rule {
                id: i as i64 + 1,
                agent: None,
                session: None,
                pattern: p.to_string(),
                kind: RuleKind::Glob,
                created_at: Utc::now(),
                created_by: "test".into(),
                expires_at: None,
                source_request: None,
                use_count: 0,
                last_used_at: None,
                last_command: None,
                memory: false,
            })
            .collect();
        let list = Allowlist::compile(&rules);
        let lookup = wildcard::Lookup::new(None, "/usr/bin:/bin");
        let approved = |command: &str| {
            let a = parse::analyse(command);
            let c = &a.commands[0];
            let u = programs::understand(&c.words, false);
            let uncovered = wildcard::uncovered(&c.words, false, &lookup);
            let seg = Segment {
                text: &c.text,
                understanding: &u,
                paths: &[],
                uncovered: &uncovered,
                harmless: u.harmless(),
                outside: &[],
            };
            let who = Who {
                agent: "a",
                session: None,
            };
            list.approve(&who, command, &[seg], false, false, Utc::now())
        };
        for command in [
            "screen -ls",
            "screen -r work",
            "guile --version",
            "tmux new sh -l",
        ] {
            assert!(!approved(command).is_empty(), "{command}");
        }
        for command in [
            "screen -dm sh -c id",
            "screen -dm bash",
            "screen -c /home/u/.ssh/id_rsa",
            "screen -dm /tmp/x",
            "guile -c '(system \"id\")'",
            "guile x.scm",
            "sshpass -p x ssh host",
            "tmux new sh -c id",
        ] {
            assert_eq!(approved(command), Vec::<i64>::new(), "{command}");
        }
    }

    /// A glob over an interpreter is "run anything" unless the words before its
    /// wildcard fix what runs: the project's own test runner (issue 33).
    #[test]
    fn a_glob_over_an_interpreter_is_too_broad_unless_its_words_fix_what_runs() {
        for fixed in [
            "python -m pytest *",
            "python3 -m pytest *",
            "python3.12 -m unittest *",
            "uv run pytest *",
            "npx tsc *",
            "pnpm run test *",
        ] {
            assert_eq!(too_broad(fixed), None, "{fixed}");
        }
        for open in [
            "python -m pip *",
            "python -m *",
            "python -c *",
            "python *",
            "python script.py *",
            "bash -c *",
            "timeout 5 *",
            "node *",
        ] {
            assert!(too_broad(open).is_some(), "{open}");
        }
    }

    #[test]
    fn only_a_wildcard_over_an_unknown_programs_words_is_warned_of() {
        assert!(wildcard_is_yours("screen *").is_some());
        assert!(wildcard_is_yours("tmux new *").is_some());
        for quiet in ["cat *", "git log *", "screen -ls", "sh *", "*", "* screen"] {
            assert_eq!(wildcard_is_yours(quiet), None, "{quiet}");
        }
    }

    #[test]
    fn allowed_binaries_see_what_allowed_programs_run() {
        let list = AllowedBinaries::new(
            &["ls", "cat", "find", "sed", "awk", "git", "tar", "sort"].map(String::from),
        );
        let refused = |c: &str| list.first_refused(&[c.to_string()]);
        for allowed in [
            "ls -la",
            "find . -name x",
            "sed -n 1p f",
            "git status",
            "awk '{print}' f",
        ] {
            assert_eq!(refused(allowed), None, "{allowed}");
        }
        for (command, why) in [
            ("find . -exec rm -r {} +", "\"rm\""),
            ("git -c alias.x='!rm -r d' x", "\"rm\""),
            ("tar --to-command='rm x' -xf a.tar", "\"rm\""),
            ("sort --compress-program=rm f", "\"rm\""),
            ("sed ':x e rm -fr d'", "\"rm\""),
            ("awk 'BEGIN{system(\"rm x\")}'", "cannot name"),
            ("sed 's/x/rm/e' f", "cannot name"),
            ("timeout 5 rm x", "\"timeout\""),
            ("git difftool -x rm", "cannot account"),
        ] {
            let got = refused(command).unwrap_or_default();
            assert!(got.contains(why), "{command}: {got}");
        }
    }
}
