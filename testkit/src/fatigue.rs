//! The fatigue benchmark: how often an owner would be asked about the shell commands real
//! coding agents ran (`testkit/data/fatigue/commands.jsonl`, its sources and classes in
//! the README beside it), judged by execgate's policy in process, in a fixture project.
//!
//! Each corpus command names its own project as `{project}`; [`Bench::new`] makes a
//! throwaway git repository with a few ordinary files (and a `.env` holding a fake
//! secret), creates the directories the commands `cd` into and the parents of the files
//! they name under `{project}`, and puts its path in place of `{project}`. Every command
//! is then evaluated as the agent `agent` in that directory, under no rules and under a
//! typical owner's rules ([`RuleSet`]).
//!
//! [`Bench::figures`] gives the figures `benches/fatigue.rs` prints (prompts per 100
//! commands, the share of reads asked, the share of rule-named tests approved) and the
//! safety ones `tests/fatigue.rs` asserts (no `outside` command approved);
//! [`Bench::verdicts`] lists one class's commands with the reasons of their verdicts.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use chrono::Utc;
use execgate::model::{CommandRef, Rule, RuleKind};
use execgate::policy::{Outcome, Policy, Subject};

use crate::corpus;

/// The corpus: one JSON object a line, `{"agent", "source", "class", "command"}`.
pub const CORPUS: &str = include_str!("../data/fatigue/commands.jsonl");

/// What the project's own root is spelled as in the corpus.
pub const PROJECT: &str = "{project}";

/// A command's class, by `build.py`'s rules (riskiest last).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Reads inside the project.
    Read,
    /// Runs the project's own code: tests, builds, linters, its scripts.
    Code,
    /// Writes or deletes inside the project.
    Write,
    /// Reaches the network or installs.
    Net,
    /// Outside the project, or dangerous.
    Outside,
}

impl Class {
    pub const ALL: [Class; 5] = [
        Class::Read,
        Class::Code,
        Class::Write,
        Class::Net,
        Class::Outside,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Read => "read",
            Class::Code => "code",
            Class::Write => "write",
            Class::Net => "net",
            Class::Outside => "outside",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// One corpus command.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its line in `commands.jsonl`.
    pub line: usize,
    pub agent: String,
    pub source: String,
    pub class: Class,
    /// As the corpus has it (`{project}` for the project's root).
    pub command: String,
}

/// The corpus, parsed; an error names the line that is wrong (a class not one of the
/// five included).
pub fn load() -> Result<Vec<Entry>, String> {
    CORPUS
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let line = i + 1;
            let v: serde_json::Value =
                serde_json::from_str(l).map_err(|e| format!("commands.jsonl:{line}: {e}"))?;
            let field = |name: &str| {
                v.get(name)
                    .and_then(|f| f.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| format!("commands.jsonl:{line}: no string {name:?}"))
            };
            let class = field("class")?;
            Ok(Entry {
                line,
                agent: field("agent")?,
                source: field("source")?,
                class: Class::parse(&class)
                    .ok_or_else(|| format!("commands.jsonl:{line}: class {class:?}"))?,
                command: field("command")?,
            })
        })
        .collect()
}

/// The rules an owner has given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleSet {
    /// None at all.
    NoRules,
    /// A typical owner's: globs `git *`, `pytest *`, `python -m pytest *`, `npm test *`,
    /// `cargo test *`; exact `make test`.
    Typical,
    /// The typical rules, with every command run by execgate (run mode) in a project
    /// inside `exec.allowed_cwd_roots`: where project work is approved, confined
    /// (docs/decisions.md#project-work).
    TypicalRun,
}

impl RuleSet {
    pub const ALL: [RuleSet; 3] = [RuleSet::NoRules, RuleSet::Typical, RuleSet::TypicalRun];

    pub fn name(self) -> &'static str {
        match self {
            RuleSet::NoRules => "no rules",
            RuleSet::Typical => "typical rules",
            RuleSet::TypicalRun => "typical, run",
        }
    }

    /// Whether execgate runs the commands (run mode) rather than the agent.
    pub fn run(self) -> bool {
        self == RuleSet::TypicalRun
    }

    /// `(pattern, kind)` of every rule of the set.
    pub fn patterns(self) -> Vec<(&'static str, RuleKind)> {
        match self {
            RuleSet::NoRules => vec![],
            RuleSet::Typical | RuleSet::TypicalRun => TYPICAL.to_vec(),
        }
    }

    /// The set as the allowlist's rules (every one global, for every agent), given to
    /// `Policy::set_rules` directly, past the CLI's checks.
    pub fn rules(self) -> Vec<Rule> {
        self.patterns()
            .into_iter()
            .enumerate()
            .map(|(i, (pattern, kind))| Rule {
                id: i as i64 + 1,
                agent: None,
                session: None,
                pattern: pattern.to_string(),
                kind,
                created_at: Utc::now(),
                created_by: "fatigue".into(),
                expires_at: None,
                last_used_at: None,
                last_command: None,
                use_count: 0,
                source_request: None,
                memory: false,
            })
            .collect()
    }
}

const TYPICAL: [(&str, RuleKind); 6] = [
    ("git *", RuleKind::Glob),
    ("pytest *", RuleKind::Glob),
    ("python -m pytest *", RuleKind::Glob),
    ("npm test *", RuleKind::Glob),
    ("cargo test *", RuleKind::Glob),
    ("make test", RuleKind::Exact),
];

/// What policy decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Approved,
    /// Put to the owner: a prompt.
    Asked,
    /// Refused without asking anyone.
    Denied(String),
}

/// One command's verdict.
#[derive(Clone, Debug)]
pub struct Judged {
    pub entry: Entry,
    pub decision: Decision,
    /// The verdict's risk reasons, the fixture's path put back to `{project}`.
    pub reasons: Vec<String>,
}

impl Judged {
    /// The reason a prompt would show first (`"(no reason given)"` when there is none).
    pub fn first_reason(&self) -> &str {
        self.reasons
            .first()
            .map_or("(no reason given)", String::as_str)
    }
}

/// Counts over some commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub commands: usize,
    pub approved: usize,
    pub asked: usize,
    pub denied: usize,
}

impl Tally {
    fn add(&mut self, d: &Decision) {
        self.commands += 1;
        match d {
            Decision::Approved => self.approved += 1,
            Decision::Asked => self.asked += 1,
            Decision::Denied(_) => self.denied += 1,
        }
    }

    /// Prompts per 100 of these commands.
    pub fn prompts_per_100(&self) -> f64 {
        percent(self.asked, self.commands)
    }

    /// The share asked, in percent.
    pub fn asked_pct(&self) -> f64 {
        percent(self.asked, self.commands)
    }

    /// The share approved, in percent.
    pub fn approved_pct(&self) -> f64 {
        percent(self.approved, self.commands)
    }
}

fn percent(n: usize, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 * 100.0 / of as f64
    }
}

/// The benchmark's figures under one rule set.
#[derive(Clone, Debug)]
pub struct Figures {
    pub rules: RuleSet,
    pub all: Tally,
    /// In [`Class::ALL`]'s order.
    pub by_class: Vec<(Class, Tally)>,
    /// The `code` commands one of the typical rules names (its words are a command of the
    /// line): how many of them are approved.
    pub code_named: Tally,
    /// `outside` commands approved (as the corpus spells them): must be none.
    pub outside_approved: Vec<String>,
    /// `net` commands approved.
    pub net_approved: Vec<String>,
}

impl Figures {
    pub fn class(&self, class: Class) -> Tally {
        self.by_class
            .iter()
            .find(|(c, _)| *c == class)
            .map_or_else(Tally::default, |(_, t)| *t)
    }
}

/// The fixture project, the corpus, and a policy per rule set.
pub struct Bench {
    _dir: tempfile::TempDir,
    /// The fixture project (a git repository): `{project}`.
    pub project: PathBuf,
    pub entries: Vec<Entry>,
    policies: Vec<(RuleSet, Policy)>,
    judged: [OnceLock<Vec<Judged>>; 3],
}

impl Bench {
    /// Loads the corpus and makes the fixture project (`git` must be on PATH).
    pub fn new() -> Result<Bench, String> {
        let entries = load()?;
        // Beside the running executable (in cargo's target directory), not in /tmp: a
        // project lies where no other user may write above it, as a real checkout does,
        // else the configuration gate refuses every program that reads configuration
        // from above the project (docs/decisions.md#configuration-gates).
        let exe = std::env::current_exe().map_err(|e| format!("the running executable: {e}"))?;
        let dir = tempfile::tempdir_in(exe.parent().unwrap_or(Path::new(".")))
            .map_err(|e| format!("temp dir: {e}"))?;
        let project = make_project(dir.path(), &entries)?;
        let config = Arc::new(corpus::config(dir.path()));
        let mut in_roots = corpus::config(dir.path());
        in_roots.exec.allowed_cwd_roots = vec![dir.path().to_path_buf()];
        let in_roots = Arc::new(in_roots);
        let policies = RuleSet::ALL
            .iter()
            .map(|&set| {
                let config = if set.run() { &in_roots } else { &config };
                let policy = Policy::new(config.clone()).map_err(|e| format!("policy: {e}"))?;
                policy.set_rules(&set.rules());
                Ok((set, policy))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Bench {
            _dir: dir,
            project,
            entries,
            policies,
            judged: [OnceLock::new(), OnceLock::new(), OnceLock::new()],
        })
    }

    fn policy(&self, set: RuleSet) -> &Policy {
        &self
            .policies
            .iter()
            .find(|(s, _)| *s == set)
            .expect("a policy for every rule set")
            .1
    }

    /// A corpus command as it is judged: `{project}` made the fixture's path.
    pub fn command_line(&self, command: &str) -> String {
        command.replace(PROJECT, &self.project.to_string_lossy())
    }

    /// One command (as the corpus spells it) judged under `set`.
    pub fn judge(&self, set: RuleSet, entry: &Entry) -> Judged {
        let line = self.command_line(&entry.command);
        let subject = Subject {
            agent: "agent",
            session: None,
            command: CommandRef::Line(&line),
            cwd: Some(&self.project),
            run: set.run(),
            shell: None,
            uid: None,
        };
        let verdict = self.policy(set).evaluate(subject, Utc::now());
        let decision = match verdict.outcome {
            Outcome::Approve { .. } => Decision::Approved,
            Outcome::Ask => Decision::Asked,
            Outcome::Deny { reason } => Decision::Denied(reason),
        };
        let root = self.project.to_string_lossy().into_owned();
        Judged {
            entry: entry.clone(),
            decision,
            reasons: verdict
                .risk_reasons
                .iter()
                .map(|r| r.replace(&root, PROJECT))
                .collect(),
        }
    }

    /// Every corpus command judged under `set` (once; kept).
    pub fn judged(&self, set: RuleSet) -> &[Judged] {
        let slot = match set {
            RuleSet::NoRules => &self.judged[0],
            RuleSet::Typical => &self.judged[1],
            RuleSet::TypicalRun => &self.judged[2],
        };
        slot.get_or_init(|| self.entries.iter().map(|e| self.judge(set, e)).collect())
    }

    /// The figures under `set`.
    pub fn figures(&self, set: RuleSet) -> Figures {
        let judged = self.judged(set);
        let mut all = Tally::default();
        let mut by_class: Vec<(Class, Tally)> =
            Class::ALL.iter().map(|&c| (c, Tally::default())).collect();
        let mut code_named = Tally::default();
        let mut outside_approved = Vec::new();
        let mut net_approved = Vec::new();
        for j in judged {
            all.add(&j.decision);
            if let Some((_, t)) = by_class.iter_mut().find(|(c, _)| *c == j.entry.class) {
                t.add(&j.decision);
            }
            if j.entry.class == Class::Code && named_by_typical_rule(&j.entry.command) {
                code_named.add(&j.decision);
            }
            if j.decision == Decision::Approved {
                match j.entry.class {
                    Class::Outside => outside_approved.push(j.entry.command.clone()),
                    Class::Net => net_approved.push(j.entry.command.clone()),
                    _ => {}
                }
            }
        }
        Figures {
            rules: set,
            all,
            by_class,
            code_named,
            outside_approved,
            net_approved,
        }
    }

    /// The commands of `class` with their verdicts under `set`, in corpus order: what to
    /// read when looking for what to fix.
    pub fn verdicts(&self, set: RuleSet, class: Class) -> Vec<Judged> {
        self.judged(set)
            .iter()
            .filter(|j| j.entry.class == class)
            .cloned()
            .collect()
    }

    /// The `n` most common first reasons of the prompts among `class`'s commands under
    /// `set`, most common first, with their counts.
    pub fn top_prompt_reasons(&self, set: RuleSet, class: Class, n: usize) -> Vec<(String, usize)> {
        let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for j in self.judged(set) {
            if j.entry.class == class && j.decision == Decision::Asked {
                *counts.entry(j.first_reason()).or_default() += 1;
            }
        }
        let mut v: Vec<(String, usize)> = counts
            .into_iter()
            .map(|(r, c)| (r.to_string(), c))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }
}

// ── The fixture project ───────────────────────────────────────────────────────────────

const FILES: &[(&str, &str)] = &[
    (
        "README.md",
        "# fixture\n\nA project the fatigue benchmark's commands run in.\n",
    ),
    (
        "package.json",
        "{\n  \"name\": \"fixture\",\n  \"version\": \"0.1.0\",\n  \"scripts\": {\n    \"test\": \"node tests/index.test.js\",\n    \"build\": \"node src/index.js\"\n  }\n}\n",
    ),
    (
        "pyproject.toml",
        "[project]\nname = \"fixture\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    ),
    ("src/index.js", "console.log(\"fixture\");\n"),
    ("src/app.py", "def add(a, b):\n    return a + b\n"),
    ("tests/index.test.js", "console.log(\"ok\");\n"),
    (
        "tests/test_app.py",
        "from src.app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    ),
    (".gitignore", ".env\nnode_modules/\n"),
    (
        ".env",
        "API_KEY=fatigue-bench-fake-secret-0000\nDATABASE_URL=postgres://fixture:fake@localhost/fixture\n",
    ),
];

fn make_project(dir: &Path, entries: &[Entry]) -> Result<PathBuf, String> {
    let project = dir.join("project");
    std::fs::create_dir_all(&project).map_err(|e| format!("create the project: {e}"))?;
    let project = project
        .canonicalize()
        .map_err(|e| format!("canonicalize the project: {e}"))?;
    for (path, text) in FILES {
        let file = project.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let git = |args: &[&str]| -> Result<(), String> {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.email=fatigue@example.org",
                "-c",
                "user.name=fatigue",
            ])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&project)
            .env("HOME", dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .map_err(|e| format!("git (is it installed?): {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    git(&["init", "-q", "-b", "main"])?;
    git(&["add", "-A"])?;
    git(&["commit", "-q", "-m", "fixture"])?;
    let mut dirs = BTreeSet::new();
    for e in entries {
        dirs.extend(directories_named(&e.command));
    }
    for rel in dirs {
        // A name that is a file of the fixture stays a file.
        let path = project.join(&rel);
        if !path.is_file() {
            let _ = std::fs::create_dir_all(&path);
        }
    }
    Ok(project)
}

/// The directories (relative to the project) a command needs to exist: where a leading
/// `cd DIR &&` / `cd DIR;` goes (DIR relative or under `{project}`), and the parent of
/// every path it names under `{project}`.
pub fn directories_named(command: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(dir) = leading_cd(command) {
        let rel = dir
            .strip_prefix(PROJECT)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(&dir);
        if !dir.starts_with('/') && !dir.starts_with('~') && !dir.starts_with('$') {
            out.extend(inside(rel));
        }
    }
    let mut rest = command;
    while let Some(at) = rest.find(PROJECT) {
        let after = &rest[at + PROJECT.len()..];
        let end = after
            .find(|c: char| c.is_whitespace() || "\"'`;|&()<>$,:=".contains(c))
            .unwrap_or(after.len());
        let path = &after[..end];
        if let Some(rel) = path.strip_prefix('/') {
            // up to a glob, then the parent of what is named
            let rel = rel.split(['*', '?', '[', '{']).next().unwrap_or("");
            let rel = rel.trim_end_matches('/');
            if let Some(parent) = Path::new(rel).parent() {
                out.extend(inside(&parent.to_string_lossy()));
            }
        }
        rest = after;
    }
    out
}

/// `rel` as a path inside the project (no root, no `..`, not empty), if it is one.
fn inside(rel: &str) -> Option<PathBuf> {
    let rel = rel.replace("\\ ", " ");
    let p = Path::new(rel.trim());
    if p.as_os_str().is_empty()
        || !p
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return None;
    }
    let p: PathBuf = p
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    (!p.as_os_str().is_empty()).then_some(p)
}

/// DIR of a leading `cd DIR &&` or `cd DIR;` (quotes removed).
fn leading_cd(command: &str) -> Option<String> {
    let rest = command.trim_start().strip_prefix("cd ")?.trim_start();
    let (dir, after) = match rest.chars().next()? {
        q @ ('"' | '\'') => {
            let end = rest[1..].find(q)? + 1;
            (rest[1..end].to_string(), &rest[end + 1..])
        }
        _ => {
            let end = rest
                .find(|c: char| c.is_whitespace() || c == ';' || c == '&')
                .unwrap_or(rest.len());
            (rest[..end].to_string(), &rest[end..])
        }
    };
    let after = after.trim_start();
    (after.starts_with("&&") || after.starts_with(';')).then_some(dir)
}

// ── Which commands a typical rule names ─────────────────────────────────────────────────

/// Whether one of the typical rules' words are a command of the line: a glob's words
/// begin a simple command, or an exact rule's words are one (redirections aside), as in
/// `cd web && npm test 2>&1 | tail -30` for `npm test *`.
pub fn named_by_typical_rule(command: &str) -> bool {
    simple_commands(command).iter().any(|words| {
        TYPICAL.iter().any(|(pattern, kind)| {
            let rule: Vec<&str> = pattern.trim_end_matches(" *").split(' ').collect();
            match kind {
                RuleKind::Exact => words.iter().map(String::as_str).eq(rule.iter().copied()),
                _ => words.len() >= rule.len() && words.iter().zip(&rule).all(|(w, r)| w == r),
            }
        })
    })
}

/// The words of each simple command of a line (split at unquoted `;`, `&`, `|`, `(`,
/// `)` and newlines; quotes removed; leading `VAR=value` words and redirections dropped).
/// A rough split, enough to tell which commands a rule's words name.
fn simple_commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {
                if c == '\\' && quote == Some('"') {
                    if let Some(n) = chars.next() {
                        word.push(n);
                    }
                } else {
                    word.push(c);
                }
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    in_word = true;
                }
                '\\' => {
                    if let Some(n) = chars.next()
                        && n != '\n'
                    {
                        word.push(n);
                        in_word = true;
                    }
                }
                ';' | '&' | '|' | '(' | ')' | '\n' => {
                    // `2>&1`, `>&2`: a redirection, not a separator
                    if c == '&' && word.ends_with('>') {
                        word.push(c);
                        continue;
                    }
                    end_word(&mut word, &mut in_word, &mut words);
                    if !words.is_empty() {
                        commands.push(std::mem::take(&mut words));
                    }
                }
                c if c.is_whitespace() => end_word(&mut word, &mut in_word, &mut words),
                _ => {
                    word.push(c);
                    in_word = true;
                }
            },
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        commands.push(words);
    }
    commands
        .into_iter()
        .map(|ws| {
            let mut ws: Vec<String> = ws
                .into_iter()
                .skip_while(|w| execgate::policy::shell::is_assignment(w))
                .collect();
            // redirections and their targets
            let mut out = Vec::new();
            let mut skip = false;
            for w in ws.drain(..) {
                if skip {
                    skip = false;
                    continue;
                }
                let t = w.trim_start_matches(|c: char| c.is_ascii_digit());
                if t.starts_with('>') || t.starts_with('<') {
                    // `2>&1`, `>/dev/null` carry their target; `>` alone is followed by it
                    skip = matches!(t, ">" | ">>" | "<" | "&>");
                    continue;
                }
                out.push(w);
            }
            out
        })
        .filter(|ws| !ws.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_name_commands_of_the_line() {
        assert!(named_by_typical_rule("cd web && npm test 2>&1 | tail -30"));
        assert!(named_by_typical_rule("make test"));
        assert!(named_by_typical_rule("make test 2>&1 | tail"));
        assert!(!named_by_typical_rule("make test-all"));
        assert!(named_by_typical_rule("CI=1 python -m pytest tests -q"));
        assert!(!named_by_typical_rule("python3 -m pytest tests"));
        assert!(!named_by_typical_rule("npm run test"));
        assert!(!named_by_typical_rule("echo 'npm test'"));
        assert!(named_by_typical_rule("cargo test --release"));
    }

    #[test]
    fn directories_of_cd_and_named_files() {
        assert_eq!(
            directories_named("cd frontend && npm test"),
            vec![PathBuf::from("frontend")]
        );
        assert!(
            directories_named("cd \"{project}/.cursor/hooks\" && ls")
                .contains(&PathBuf::from(".cursor/hooks"))
        );
        assert_eq!(
            directories_named("cat {project}/docs/a/b.md"),
            vec![PathBuf::from("docs/a")]
        );
        assert!(directories_named("cd ../x && ls").is_empty());
        assert!(directories_named("cd /tmp && ls").is_empty());
        assert!(directories_named("cat {project}/../x/y").is_empty());
    }
}
