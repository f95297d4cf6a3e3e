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

/// The deny list. A match on the whole command or any segment denies.
#[derive(Debug)]
pub struct DenyList {
    set: GlobSet,
    patterns: Vec<String>,
}

impl DenyList {
    pub fn new(patterns: &[String]) -> Result<DenyList, globset::Error> {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(crate::config::compile_deny_glob(p)?);
        }
        Ok(DenyList {
            set: b.build()?,
            patterns: patterns.to_vec(),
        })
    }

    /// The first deny pattern that matches, checking the whole command, each segment,
    /// and each segment with its program's directory stripped (`/bin/rm` is `rm`).
    pub fn matches(&self, normalized: &str, segments: &[String]) -> Option<&str> {
        if self.patterns.is_empty() {
            return None;
        }
        let mut candidates = vec![normalized.to_string()];
        for seg in segments {
            candidates.push(seg.clone());
            // What the segment runs, unquoted and looked through wrappers, also with
            // the program's directory stripped (`/bin/rm` is `rm`).
            for words in super::risk::looked_through(&shell::command_words(seg)) {
                candidates.push(words.join(" "));
                if let Some(base) = words[0].rsplit('/').next().filter(|b| *b != words[0]) {
                    let mut stripped = vec![base.to_string()];
                    stripped.extend(words[1..].iter().cloned());
                    candidates.push(stripped.join(" "));
                }
            }
        }
        candidates.iter().find_map(|c| {
            self.set
                .matches(c)
                .first()
                .map(|&i| self.patterns[i].as_str())
        })
    }
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

    /// The first segment whose program is not listed (`Some("")` when a segment has no
    /// recognisable program at all).
    pub fn first_refused(&self, segments: &[String]) -> Option<String> {
        let names = self.names.as_ref()?;
        if segments.is_empty() {
            return Some(String::new());
        }
        segments.iter().find_map(|s| match shell::program(s) {
            Some(p) if names.contains(&p) => None,
            Some(p) => Some(p),
            None => Some(String::new()),
        })
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
    /// (docs/decisions.md step 7): operands and harmless options, never code it did not name, a write, a
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
                // interpreter (`timeout *` would approve `timeout 5 rm -rf ~`), unless
                // the program's profile accounts for the code it runs itself.
                let u = seg.understanding;
                if dangerous || (!(u.profiled && u.decides_code) && runs_other_programs(seg.text)) {
                    return None;
                }
                self.first_live(
                    self.globs
                        .matches(seg.text)
                        .into_iter()
                        .map(|hit| self.glob_rule[hit]),
                    who,
                    now,
                    |r| u.glob_refusal(r.literal).is_none(),
                )
            });
            match hit {
                Some(id) => used.push(id),
                None if harmless_ok && seg.understanding.harmless() => {}
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
                && rest.iter().any(|w| w.contains('*')) =>
        {
            Some(format!(
                "`{first}` runs other programs, so `{pattern}` would approve anything"
            ))
        }
        _ => None,
    }
}
