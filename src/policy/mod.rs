//! Policy: decides, from configuration and the allowlist alone, whether a request is
//! approved, denied, or must be put to a human (docs/decisions.md, steps 3–10).
//!
//! `parse` analyses a command line with tree-sitter (is it plain, which commands does it
//! run), `shell` holds the lexical helpers (normalising, quoting, a blunt splitter),
//! `programs` is execgate's knowledge of each program (what every word of a command
//! means, read as the program reads it), `paths` is the one path policy (secrets,
//! sensitive files, agents' guard settings, execgate's own files, judged by the file a
//! path reaches), `gitrepo` reads what a git repository would make git run,
//! `progconfig` what other programs' configuration files would make them do, `rules`
//! the compiled deny list, allowed binaries and allowlist, `risk` judges how
//! much harm a command could do, `tools` judges tool calls (their names, and the
//! paths their input names), and `wildcard` what a glob's wildcard may cover of a
//! program execgate has no profile for.

pub mod confinement;
pub mod gitrepo;
pub mod habits;
pub mod parse;
pub mod patch;
pub mod paths;
pub mod progconfig;
pub mod programs;
pub mod project;
mod project_work;
pub mod risk;
pub mod rules;
pub mod shell;
pub mod suggest;
pub mod tools;
pub mod wildcard;

use std::path::Path;
use std::sync::{Arc, RwLock};

use chrono::{DateTime, Utc};

use crate::config::Config;
use crate::model::{
    Ask, AskFallback, CommandRef, Confine, ConfineDefault, RequestSpec, Risk, Rule, RuleKind,
    Security, Shell, ToolCall, shell_join,
};
use programs::Understanding;

/// What is being asked for, as policy sees it.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    pub agent: &'a str,
    /// The session the request named: session rules apply to it alone.
    pub session: Option<&'a str>,
    pub command: CommandRef<'a>,
    /// The canonical working directory, when the request gave one (run mode always has
    /// one): where git's repository configuration is read from.
    pub cwd: Option<&'a Path>,
    /// Run mode: execgate itself will run the command, as its own user.
    pub run: bool,
    /// Decide-only: the shell the agent said it will run `command` with.
    pub shell: Option<Shell>,
    /// The uid the agent runs as (the socket peer's), if known: in decide-only mode the
    /// agent runs the command as this uid.
    pub uid: Option<u32>,
}

impl<'a> Subject<'a> {
    /// Who asks, as the allowlist matches rules.
    pub fn who(&self) -> rules::Who<'a> {
        rules::Who {
            agent: self.agent,
            session: self.session,
        }
    }

    /// What policy judges of a request.
    pub fn of(spec: &'a RequestSpec) -> Subject<'a> {
        Subject {
            agent: spec.agent.as_str(),
            session: spec.session.as_deref(),
            command: spec.command.as_ref(),
            cwd: spec.cwd.as_deref().map(Path::new),
            run: spec.run,
            shell: spec.shell,
            uid: spec.peer_uid,
        }
    }

    /// The shells `command` must be plain under: in run mode, `/bin/sh` (which may be
    /// dash or bash); else the one the agent named; else all three, since the agent may
    /// run it with any (zsh expands `=cmd`, bash expands `a=~`).
    pub fn shells(&self) -> &'static [Shell] {
        match (self.run, self.shell) {
            (true, _) => &[Shell::Sh, Shell::Bash],
            (false, Some(Shell::Sh)) => &[Shell::Sh],
            (false, Some(Shell::Bash)) => &[Shell::Bash],
            (false, Some(Shell::Zsh)) => &[Shell::Zsh],
            (false, None) => &Shell::ALL,
        }
    }
}

/// How many habits (`cd DIR &&`, `bash -lc`) one line is followed through.
const MAX_HABITS: usize = 4;

/// What policy concluded before any human is involved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Approved by the allowlist (`rules` non-empty) or by policy (security `full`, safe bins).
    Approve {
        by_allowlist: bool,
    },
    Deny {
        reason: String,
    },
    Ask,
}

#[derive(Clone, Debug)]
pub struct Verdict {
    pub outcome: Outcome,
    pub risk: Risk,
    pub risk_reasons: Vec<String>,
    /// Plain commands may be auto-approved and saved as "always" rules; others never.
    pub plain: bool,
    /// The normalized command: what exact rules store and compare. For a tool call, its
    /// name: what a tool rule stores.
    pub normalized: String,
    /// The kind of rule "allow always" stores for this request: `exact` for a command,
    /// `tool` for a tool call.
    pub always_kind: RuleKind,
    /// Allowlist rules that matched (step 7), even when a human is asked anyway.
    pub rules_matched: Vec<i64>,
    /// What a timeout turns this request into, per `approval.ask_fallback`.
    pub fallback_approves: bool,
    /// Whether a program of the command reaches the network by what its profile says,
    /// runs code its profile cannot read (the project's, an install's), or has no
    /// profile to say it does not: what a confinement that follows the command's
    /// profile allows.
    pub network: bool,
    /// How the kernel holds the command if execgate runs it (docs/decisions.md#confinement).
    pub confine: Confine,
    /// Approved as project work: only because execgate runs it confined to the project
    /// with no network (docs/decisions.md#project-work).
    pub project_work: bool,
}

/// Everything policy needs, compiled once. The configuration (with what is compiled from
/// it) and the allowlist are each swapped whole on change: a request sees one version of
/// each, never a mix.
#[derive(Debug)]
pub struct Policy {
    current: RwLock<Arc<Settings>>,
    allowlist: RwLock<Arc<rules::Allowlist>>,
}

/// The configuration in force and what is compiled from it: one request is judged, asked
/// and run by one of these from start to end (see [`Policy::settings`]), so a reload
/// in the middle of a request cannot mix two configurations.
#[derive(Debug)]
pub struct Settings {
    config: Arc<Config>,
    deny: rules::DenyList,
    binaries: rules::AllowedBinaries,
    own_files: risk::OwnFiles,
    tool_deny: tools::ToolDeny,
    paths: paths::Paths,
}

impl Settings {
    /// The configuration these settings were compiled from.
    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    fn new(config: Arc<Config>) -> Result<Settings, globset::Error> {
        let mut own = vec![
            config.socket.clone(),
            config.admin_socket.clone(),
            config.database.clone(),
        ];
        own.extend(config.source_file.clone());
        own.extend(config.env_file.clone());
        own.extend(std::env::current_exe().ok());
        Ok(Settings {
            deny: rules::DenyList::new(&config.policy.deny)?,
            binaries: rules::AllowedBinaries::new(&config.policy.allowed_binaries),
            own_files: risk::OwnFiles::new(&own),
            tool_deny: tools::ToolDeny::new(&config.policy.tools.deny)?,
            paths: paths::Paths::new(&config, &programs::config_files()),
            config,
        })
    }
}

impl Policy {
    pub fn new(config: Arc<Config>) -> Result<Policy, globset::Error> {
        Ok(Policy {
            current: RwLock::new(Arc::new(Settings::new(config)?)),
            allowlist: RwLock::new(Arc::new(rules::Allowlist::default())),
        })
    }

    /// The settings in force now: take them once per request and judge it by them.
    pub fn settings(&self) -> Arc<Settings> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<Config> {
        self.settings().config.clone()
    }

    /// Puts a new configuration in force (a reload), with the allowlist re-read for it
    /// (None keeps the current one). Both are compiled first and swapped together, so no
    /// request is judged by the new configuration and the old allowlist. On error
    /// nothing changes.
    pub fn reconfigure(
        &self,
        config: Arc<Config>,
        rules: Option<&[Rule]>,
    ) -> Result<(), globset::Error> {
        let compiled = Arc::new(Settings::new(config)?);
        let allowlist = rules.map(|r| Arc::new(rules::Allowlist::compile(r)));
        // Always taken in this order; readers hold one lock at a time.
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        let mut rules_in_force = self.allowlist.write().unwrap_or_else(|e| e.into_inner());
        *current = compiled;
        if let Some(allowlist) = allowlist {
            *rules_in_force = allowlist;
        }
        Ok(())
    }

    /// These settings with `rules` as the whole allowlist: a policy to try rules on.
    pub fn with_rules(&self, rules: &[Rule]) -> Policy {
        Policy {
            current: RwLock::new(self.settings()),
            allowlist: RwLock::new(Arc::new(rules::Allowlist::compile(rules))),
        }
    }

    /// Replaces the compiled allowlist (after any rule is added, removed or saved).
    pub fn set_rules(&self, rules: &[Rule]) {
        let compiled = Arc::new(rules::Allowlist::compile(rules));
        *self.allowlist.write().unwrap_or_else(|e| e.into_inner()) = compiled;
    }

    fn allowlist(&self) -> Arc<rules::Allowlist> {
        self.allowlist
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Runs steps 3–10 of the decision pipeline. Never fails: anything it cannot
    /// judge is at worst asked, never approved.
    ///
    /// All its parsing shares one budget (`parse::MAX_TOKENS_IN_ALL`). A command whose
    /// scripts it could not all read is not plain: no rule and no safe-binary step
    /// approves it, and a timeout never does either; a human decides.
    pub fn evaluate(&self, subject: Subject<'_>, now: DateTime<Utc>) -> Verdict {
        self.evaluate_by(&self.settings(), subject, now)
    }

    /// [`Policy::evaluate`] by `settings` taken earlier for the same request.
    pub fn evaluate_by(
        &self,
        settings: &Settings,
        subject: Subject<'_>,
        now: DateTime<Utc>,
    ) -> Verdict {
        let (mut verdict, overspent) =
            parse::budgeted(|| self.evaluate_within(settings, subject, now));
        if overspent {
            verdict.plain = false;
            verdict.rules_matched.clear();
            verdict.fallback_approves = false;
            if verdict.risk == Risk::Safe {
                verdict.risk = Risk::NeedsReview;
            }
            let why = format!("not plain: {}", parse::overspent_reason());
            if !verdict.risk_reasons.contains(&why) {
                verdict.risk_reasons.push(why);
            }
            // The owner's blanket `full` still approves; nothing else does.
            let config = &settings.config;
            if matches!(verdict.outcome, Outcome::Approve { .. })
                && config.security_for(subject.agent) != Security::Full
            {
                verdict.outcome = match config.approval.ask {
                    Ask::Off => Outcome::Deny {
                        reason: "too much to analyse, and approval.ask is `off`".into(),
                    },
                    _ => Outcome::Ask,
                };
            }
        }
        verdict.confine = confinement(&verdict, &settings.config, subject);
        verdict
    }

    /// The command as written, then, if that is not approved, what runs inside an
    /// agent's habit (`cd DIR &&`, `bash -lc 'SCRIPT'`) where it runs.
    fn evaluate_within(
        &self,
        settings: &Settings,
        subject: Subject<'_>,
        now: DateTime<Utc>,
    ) -> Verdict {
        self.evaluate_habits(settings, subject, now, 0)
    }

    /// [`Policy::evaluate_within`], `depth` habits deep.
    fn evaluate_habits(
        &self,
        settings: &Settings,
        subject: Subject<'_>,
        now: DateTime<Utc>,
        depth: usize,
    ) -> Verdict {
        let written = self.evaluate_written(settings, subject, now);
        // Run mode judges the line as written: the run is checked again just before it
        // starts, and its repository neutralised, where the request says it runs.
        let CommandRef::Line(line) = subject.command else {
            return written;
        };
        // What is approved, refused or dangerous as written stays so.
        if subject.run
            || depth >= MAX_HABITS
            || !matches!(written.outcome, Outcome::Ask)
            || written.risk == Risk::Dangerous
        {
            return written;
        }
        self.in_context(settings, subject, line, written, now, depth)
    }

    /// `line` judged by what runs inside its habit, if it has one execgate understands
    /// (`habits`): the rest of the line after `cd DIR &&` in DIR, the script a shell is
    /// started for. What matched the line as written (an exact rule) was tried first;
    /// the verdict keeps the line as written, what "always" stores and a human sees.
    fn in_context(
        &self,
        settings: &Settings,
        subject: Subject<'_>,
        line: &str,
        mut written: Verdict,
        now: DateTime<Utc>,
        depth: usize,
    ) -> Verdict {
        let project = project_of(&settings.config, &settings.paths, subject);
        let inner = match habits::inner(line, subject.shells(), subject.cwd, project.as_deref()) {
            Ok(Some(inner)) => inner,
            Ok(None) => return written,
            Err(why) => {
                written.risk_reasons.push(why);
                return written;
            }
        };
        let moved = Subject {
            command: CommandRef::Line(&inner.line),
            cwd: inner.cwd.as_deref().or(subject.cwd),
            ..subject
        };
        let mut verdict = self.evaluate_habits(settings, moved, now, depth + 1);
        // If `cd` can fail and the rest still run, the rest must pass where it started.
        if inner.also_where_it_started && matches!(verdict.outcome, Outcome::Approve { .. }) {
            let stayed = Subject {
                command: CommandRef::Line(&inner.line),
                ..subject
            };
            let there = self.evaluate_habits(settings, stayed, now, depth + 1);
            if !matches!(there.outcome, Outcome::Approve { .. }) {
                verdict = there;
                verdict.risk_reasons.insert(
                    0,
                    "if `cd` fails, the rest runs where the line started, and is judged there too"
                        .into(),
                );
            }
        }
        verdict.risk_reasons.insert(0, inner.taken);
        if matches!(verdict.outcome, Outcome::Approve { .. }) {
            verdict.normalized = written.normalized;
            verdict.plain &= written.plain;
            verdict.always_kind = written.always_kind;
            return verdict;
        }
        // Not approved inside either: the line as written, with what the inside showed
        // (a secret reached from DIR, a refusal of the deny list), at its worst.
        if let Outcome::Deny { .. } = verdict.outcome {
            written.outcome = verdict.outcome;
        }
        let rank = |r: Risk| Risk::ALL.iter().position(|x| *x == r);
        if rank(verdict.risk) > rank(written.risk) {
            written.risk = verdict.risk;
        }
        for why in verdict.risk_reasons {
            if !written.risk_reasons.contains(&why) {
                written.risk_reasons.push(why);
            }
        }
        if written.risk == Risk::Dangerous {
            written.risk_reasons.retain(|r| !r.starts_with("read-only"));
        }
        written
    }

    /// Steps 3–10 for the command as written.
    fn evaluate_written(
        &self,
        settings: &Settings,
        subject: Subject<'_>,
        now: DateTime<Utc>,
    ) -> Verdict {
        let Settings {
            config,
            deny: deny_list,
            binaries,
            own_files,
            paths,
            ..
        } = settings;
        let (line, analysis, lexical) = match subject.command {
            CommandRef::Tool(tool) => return self.evaluate_tool(settings, tool, subject, now),
            // argv runs no shell: its words are literal, so it is plain by construction.
            CommandRef::Argv(argv) => {
                let joined = shell_join(argv);
                let analysis = parse::Analysis::of_argv(argv, &joined);
                (joined, analysis, Vec::new())
            }
            CommandRef::Line(c) => (
                shell::normalize(c),
                parse::analyse_for(c, subject.shells()),
                shell::segments(c),
            ),
        };
        let plain = analysis.plain();
        // What rules are matched against: each simple command as written.
        let segments: Vec<String> = analysis.commands.iter().map(|c| c.text.clone()).collect();
        // What the hard limits screen: those, and every piece a blunt lexical cut finds,
        // in case the parser and the shell disagree about where a command starts.
        let mut screened = segments.clone();
        screened.extend(lexical);
        // Each command read once against its program's profile, for risk and rules.
        let understood: Vec<Understanding> = analysis
            .commands
            .iter()
            .map(|c| programs::understand(&c.words, c.piped))
            .collect();
        // Every path the command reads or writes, judged by the one path policy where
        // the command runs: through the symlinks an earlier command made, by the file
        // it reaches. A write it refuses is dangerous; a read it refuses (a secret, a
        // guard setting) is put to a human, and no wildcard covers it.
        let judged: Vec<Vec<Option<paths::Refusal>>> = understood
            .iter()
            .map(|u| judge_paths(paths, u, subject.cwd))
            .collect();
        // A command that only reads, and only inside the request's project, is harmless
        // where it runs (step 8).
        // Found only for a command that reads: finding it walks up the directories.
        let project = std::cell::OnceCell::new();
        let inside: Vec<Option<Result<(), String>>> = understood
            .iter()
            .zip(&judged)
            .map(|(u, judged)| {
                reads_only(u).then(|| {
                    let project = project.get_or_init(|| project_of(config, paths, subject));
                    reads_inside(paths, judged, u, subject.cwd, project.as_deref(), config)
                })
            })
            .collect();
        let harmless: Vec<bool> = understood
            .iter()
            .zip(&inside)
            .map(|(u, inside)| u.harmless() || matches!(inside, Some(Ok(()))))
            .collect();
        // Which reads lie outside the project, where the request has one: no glob's
        // wildcard covers them (`git *` does not cover `git add ../../x`).
        let outside: Vec<Vec<bool>> = understood
            .iter()
            .zip(&inside)
            .map(|(u, inside)| {
                // Every read of a command found to read only inside is inside: not again.
                if matches!(inside, Some(Ok(()))) {
                    return vec![false; u.findings.len()];
                }
                u.findings
                    .iter()
                    .map(|f| {
                        // A tree's walk was judged above; here, where a file lies.
                        let programs::Effect::Reads(p) = &f.effect else {
                            return false;
                        };
                        let access = paths::Access::Read;
                        let Some(cwd) = subject.cwd else {
                            return false;
                        };
                        let project = project.get_or_init(|| project_of(config, paths, subject));
                        project.as_deref().is_some_and(|root| {
                            let project = paths::Project {
                                root,
                                over_secrets: config.policy.tree_reads_over_secrets,
                            };
                            p != "-" && paths.outside(p, access, cwd, project).is_some()
                        })
                    })
                    .collect()
            })
            .collect();
        let (mut risk, mut risk_reasons) =
            risk::assess_understood(&analysis, &understood, &harmless, own_files, subject.cwd);
        let add = |reasons: &mut Vec<String>, why: String| {
            if !reasons.contains(&why) {
                reasons.push(why);
            }
        };
        for (u, inside) in understood.iter().zip(&inside) {
            if let Some(Err(why)) = inside {
                add(&mut risk_reasons, format!("`{}`: {why}", u.program));
            }
        }
        for (u, judged) in understood.iter().zip(&judged) {
            let net = u
                .findings
                .iter()
                .any(|f| matches!(f.effect, programs::Effect::Net(_)));
            for (f, refusal) in u.findings.iter().zip(judged) {
                let Some(refusal) = refusal else { continue };
                match &f.effect {
                    programs::Effect::Writes(_) => {
                        risk = Risk::Dangerous;
                        add(&mut risk_reasons, written_reason(refusal));
                    }
                    _ if net && refusal.kind == paths::Kind::Secret => {
                        risk = Risk::Dangerous;
                        add(
                            &mut risk_reasons,
                            format!("sends {} over the network", refusal.what),
                        );
                    }
                    _ if matches!(refusal.kind, paths::Kind::Own) => {
                        risk = Risk::Dangerous;
                        add(&mut risk_reasons, format!("reads {}", refusal.what));
                    }
                    _ => add(
                        &mut risk_reasons,
                        format!("`{}` reads {}", u.program, refusal.what),
                    ),
                }
            }
        }
        for r in &analysis.redirects {
            let access = match () {
                _ if r.writes() => paths::Access::Write,
                _ if r.reads() => paths::Access::Read,
                _ => continue,
            };
            match paths.refusal(&r.target, access, subject.cwd) {
                Some(refusal) if access == paths::Access::Write => {
                    risk = Risk::Dangerous;
                    add(&mut risk_reasons, written_reason(&refusal));
                }
                Some(refusal) => add(
                    &mut risk_reasons,
                    format!("the shell reads {}", refusal.what),
                ),
                None => {}
            }
        }
        if risk == Risk::Dangerous {
            risk_reasons.retain(|r| !r.starts_with("read-only"));
        }
        if !plain {
            risk_reasons.extend(analysis.not_plain.iter().map(|r| format!("not plain: {r}")));
        }
        // What no glob's wildcard covers of a program without a profile (only a plain
        // command is ever approved by a rule), shown to the human who is asked instead.
        let allowlist = self.allowlist();
        let uncovered = if plain {
            uncovered_words(paths, &analysis, &understood, &allowlist, &subject)
        } else {
            vec![Vec::new(); analysis.commands.len()]
        };
        for (u, words) in understood.iter().zip(&uncovered) {
            for w in words.iter().take(3) {
                let why = format!("`{}`: no wildcard covers this: {}", u.program, w.why);
                if !risk_reasons.contains(&why) {
                    risk_reasons.push(why);
                }
            }
        }
        // Code a profile cannot read (the project's tests, an install's scripts, a
        // script) may reach the network as a matter of course (a test server on
        // loopback, the registry): what a human or a rule approves to run keeps it.
        let network = understood.iter().any(|u| {
            !u.profiled
                || u.findings.iter().any(|f| {
                    matches!(
                        f.effect,
                        programs::Effect::Net(_)
                            | programs::Effect::Project(_)
                            | programs::Effect::Code(_)
                    )
                })
        });
        let mut verdict = Verdict {
            outcome: Outcome::Ask,
            risk,
            risk_reasons,
            plain,
            normalized: line.clone(),
            always_kind: RuleKind::Exact,
            rules_matched: Vec::new(),
            fallback_approves: false,
            network,
            confine: Confine::None,
            project_work: false,
        };
        let deny = |v: &mut Verdict, reason: String| {
            v.outcome = Outcome::Deny { reason };
        };

        // Step 3 (deny), then the hard limits that bind every mode: steps 4 and 5.
        let security = config.security_for(subject.agent);
        if security == Security::Deny {
            deny(
                &mut verdict,
                format!("agent {:?} has security mode `deny`", subject.agent),
            );
            return verdict;
        }
        if let Some(pattern) = deny_list.matches(&line, &screened) {
            // The agent learns that the deny list matched, not which pattern: no map of
            // what to rephrase. The owner finds the pattern in the log.
            tracing::info!(agent = subject.agent, pattern, "deny list matched");
            deny(&mut verdict, "matches the deny list".into());
            return verdict;
        }
        if let Some(why) = binaries.first_refused(&screened) {
            deny(&mut verdict, why);
            return verdict;
        }
        if security == Security::Full {
            verdict.outcome = Outcome::Approve {
                by_allowlist: false,
            };
            return verdict;
        }

        // Step 7: only plain commands are ever approved by a rule.
        if plain {
            let segments: Vec<rules::Segment<'_>> = analysis
                .commands
                .iter()
                .zip(&understood)
                .zip(&judged)
                .zip(&uncovered)
                .zip(&harmless)
                .zip(&outside)
                .map(
                    |(((((c, u), judged), uncovered), harmless), outside)| rules::Segment {
                        text: &c.text,
                        understanding: u,
                        paths: judged,
                        uncovered,
                        harmless: *harmless,
                        outside,
                    },
                )
                .collect();
            let harmless_ok = config.policy.safe_bins
                && (!subject.run || inside_roots(subject.cwd, &config.exec.allowed_cwd_roots));
            verdict.rules_matched = allowlist.approve(
                &subject.who(),
                &line,
                &segments,
                risk == Risk::Dangerous,
                harmless_ok,
                now,
            );
        }
        // Step 8.
        let mut safe = plain && risk == Risk::Safe && config.policy.safe_bins;
        if safe && subject.run && !inside_roots(subject.cwd, &config.exec.allowed_cwd_roots) {
            safe = false;
            verdict.risk_reasons.push(
                "run mode: execgate runs safe commands without a human only inside exec.allowed_cwd_roots"
                    .into(),
            );
        }
        // Neither step approves git without reading what its repository would make it run.
        if (safe || !verdict.rules_matched.is_empty())
            && let Some(why) = git_gate(&analysis, &understood, subject, None)
        {
            safe = false;
            verdict.rules_matched.clear();
            verdict.risk_reasons.push(why);
        }
        // Nor any program that reads configuration an agent may write (npm's `.npmrc`,
        // cargo's `.cargo/config.toml`, …) without reading it. Read for every plain
        // command: a human asked anyway is told what the configuration sets.
        let mut gated = false;
        if plain && let Some(why) = progconfig::gate(&analysis, &understood, subject) {
            safe = false;
            gated = true;
            verdict.rules_matched.clear();
            verdict.risk_reasons.push(why);
        }
        let allowlisted = !verdict.rules_matched.is_empty();
        // Project work: what neither step approves, run by execgate confined to the
        // project with no network, when its words keep to the project; never past the
        // configuration gate (its refusal stands), and git's gate applies to it too.
        if !safe
            && !allowlisted
            && !gated
            && subject.run
            && risk != Risk::Dangerous
            && project_work::read_whole(&analysis)
            && (plain || progconfig::gate(&analysis, &understood, subject).is_none())
        {
            let reading = project_work::Reading {
                analysis: &analysis,
                understood: &understood,
                judged: &judged,
            };
            match project_work(settings, reading, subject) {
                Ok(()) => match git_gate(&analysis, &understood, subject, None) {
                    None => {
                        verdict.project_work = true;
                        safe = true;
                    }
                    Some(why) => verdict.risk_reasons.push(why),
                },
                Err(why) => verdict
                    .risk_reasons
                    .push(format!("not project work: {why}")),
            }
        }

        conclude(&mut verdict, config, allowlisted, safe, "allowlist rule");
        if !matches!(
            verdict.outcome,
            Outcome::Approve {
                by_allowlist: false
            }
        ) {
            verdict.project_work = false;
        }
        verdict
    }

    /// The tool pipeline: security mode, `policy.tools.deny`, protected paths, tool
    /// rules, `policy.tools.safe`, ask (docs/decisions.md, "Tool requests").
    fn evaluate_tool(
        &self,
        settings: &Settings,
        tool: &ToolCall,
        subject: Subject<'_>,
        now: DateTime<Utc>,
    ) -> Verdict {
        let config = &settings.config;
        let safe_tool = config.policy.tools.safe.contains(&tool.name);
        let mut check = tools::in_input(
            &settings.paths,
            &tool.name,
            &tool.input,
            safe_tool,
            subject.cwd,
        );
        let reads_secrets = !check.secrets.is_empty();
        let (risk, mut risk_reasons) = if !check.protected.is_empty() {
            (Risk::Dangerous, check.protected)
        } else if !check.secrets.is_empty() {
            (Risk::NeedsReview, std::mem::take(&mut check.secrets))
        } else if safe_tool && check.unchecked.is_none() {
            (
                Risk::Safe,
                vec![format!(
                    "`{}` is a read-only tool (policy.tools.safe), and its input names no secret nor protected path",
                    tool.name
                )],
            )
        } else {
            (
                Risk::NeedsReview,
                vec![format!(
                    "tool `{}`: execgate does not know what it does with its input",
                    tool.name
                )],
            )
        };
        risk_reasons.extend(check.unchecked.clone());
        let mut verdict = Verdict {
            outcome: Outcome::Ask,
            risk,
            risk_reasons,
            plain: check.unchecked.is_none(),
            normalized: tool.name.clone(),
            always_kind: RuleKind::Tool,
            rules_matched: Vec::new(),
            fallback_approves: false,
            network: false,
            confine: Confine::None,
            project_work: false,
        };
        let security = config.security_for(subject.agent);
        if security == Security::Deny {
            verdict.outcome = Outcome::Deny {
                reason: format!("agent {:?} has security mode `deny`", subject.agent),
            };
            return verdict;
        }
        if settings.tool_deny.matches(&tool.name) {
            tracing::info!(agent = subject.agent, tool = %tool.name, "policy.tools.deny matched");
            verdict.outcome = Outcome::Deny {
                reason: "the tool matches policy.tools.deny".into(),
            };
            return verdict;
        }
        if security == Security::Full {
            verdict.outcome = Outcome::Approve {
                by_allowlist: false,
            };
            return verdict;
        }
        // Nothing a machine may approve: a protected path, a secret, or input not
        // checked whole.
        let understood = risk != Risk::Dangerous && !reads_secrets && check.unchecked.is_none();
        if understood
            && let Some(rule) = self
                .allowlist()
                .approve_tool(&subject.who(), &tool.name, now)
        {
            verdict.rules_matched.push(rule);
        }
        let allowlisted = !verdict.rules_matched.is_empty();
        let safe = understood && risk == Risk::Safe;
        conclude(&mut verdict, config, allowlisted, safe, "tool rule");
        verdict
    }

    /// Why "allow always" must not be granted for this request, if it must not. The rule
    /// it would store is exact, but an exact rule for a wrapper, a shell or inline code
    /// would still approve whatever that code says next time the agent sends it.
    pub fn always_refusal(&self, verdict: &Verdict, subject: Subject<'_>) -> Option<String> {
        if verdict.risk == Risk::Dangerous {
            return Some("the command is dangerous: approve it once, or deny it".into());
        }
        if let CommandRef::Tool(tool) = subject.command {
            // A tool rule approves the tool by name; input execgate could not check
            // whole is shown once, never trusted for good.
            return (!verdict.plain).then(|| {
                format!(
                    "`{}`'s input is too big to check: approve it once, or deny it",
                    tool.name
                )
            });
        }
        if !verdict.plain {
            return Some(
                "the command is not plain (it uses shell syntax): approve it once, or deny it"
                    .into(),
            );
        }
        let analysis = analysed(subject);
        for command in &analysis.commands {
            let commands = risk::looked_through(&command.words);
            let Some(words) = commands.first() else {
                continue;
            };
            let understood = programs::understand(words, command.piped);
            let runs_code = understood
                .findings
                .iter()
                .any(|f| matches!(f.effect, programs::Effect::Code(_)));
            if commands.len() > 1
                || runs_code
                || risk::runs_other_code(words)
                || risk::is_wrapper_or_interpreter(&words[0])
            {
                return Some(format!(
                    "`{}` runs other programs or code: approve it once, or deny it",
                    words[0]
                ));
            }
        }
        None
    }

    /// Why this command must not run on policy's word, if it must not: the git gate and
    /// the path policy that steps 7 and 8 passed, applied again just before a run, since
    /// the repository, or a link among the command's paths, may have changed since the
    /// request was approved (an agent re-points `keylink` at a key once `cat keylink` is
    /// approved). `repo` is the subject's repository as just read (`gitrepo::inspect` of
    /// its `cwd`, as execgate's user): the run reads it once, for this and for what it
    /// neutralises.
    pub fn run_refusal(
        &self,
        subject: Subject<'_>,
        repo: &Result<Option<gitrepo::Repo>, String>,
    ) -> Option<String> {
        let (refusal, overspent) = parse::budgeted(|| {
            let analysis = analysed(subject);
            let understood: Vec<Understanding> = analysis
                .commands
                .iter()
                .map(|c| programs::understand(&c.words, c.piped))
                .collect();
            let paths = &self.settings().paths;
            let refused = understood.iter().find_map(|u| {
                let judged = judge_paths(paths, u, subject.cwd);
                let refusal = judged.into_iter().flatten().next()?;
                Some(format!(
                    "`{}`: {} (judged again where it runs)",
                    u.program, refusal.what
                ))
            });
            let redirected = analysis
                .redirects
                .iter()
                .filter(|r| r.writes())
                .find_map(|r| {
                    paths
                        .refusal(&r.target, paths::Access::Write, subject.cwd)
                        .map(|refusal| written_reason(&refusal))
                });
            (
                refused.or(redirected),
                git_gate(&analysis, &understood, subject, Some(repo)),
            )
        });
        let (paths_refusal, git_refusal) = refusal;
        // A path the policy refuses may have been the owner's to approve (an exact rule
        // that names it): only the whole judgement, made again now, says whether the
        // approval still holds.
        let refusal = paths_refusal
            .filter(|_| {
                let now = self.evaluate(subject, Utc::now());
                !matches!(now.outcome, Outcome::Approve { .. }) && !now.fallback_approves
            })
            .or(git_refusal);
        match refusal {
            // Policy approved it within the budget; the same words cost the same again.
            None if overspent => Some(parse::overspent_reason()),
            refusal => refusal,
        }
    }
}

/// The path policy's refusal of each of a command's findings that names a path, read
/// or written, in the order of its findings (`None`: no path, or nothing refused).
fn judge_paths(
    paths: &paths::Paths,
    u: &Understanding,
    cwd: Option<&Path>,
) -> Vec<Option<paths::Refusal>> {
    u.findings
        .iter()
        .map(|f| {
            let (p, access) = match &f.effect {
                programs::Effect::Reads(p) => (p, paths::Access::Read),
                programs::Effect::ReadsTree(p) => (p, paths::Access::ReadTree),
                programs::Effect::Writes(p) => (p, paths::Access::Write),
                _ => return None,
            };
            // `-` is standard input or output, not a file.
            (p != "-").then(|| paths.refusal(p, access, cwd)).flatten()
        })
        .collect()
}

/// The request's project (`policy::project`): found from its cwd, as the uid git would
/// run as there sees it.
fn project_of(
    config: &Config,
    paths: &paths::Paths,
    subject: Subject<'_>,
) -> Option<std::path::PathBuf> {
    let roots: Vec<std::path::PathBuf> = config
        .exec
        .allowed_cwd_roots
        .iter()
        .chain(&config.policy.project_roots)
        .cloned()
        .collect();
    let uid = if subject.run {
        Some(crate::sys::effective_uid())
    } else {
        subject.uid
    };
    project::of(subject.cwd, &roots, paths.homes(), uid)
}

/// Why `subject`, which execgate would run, is not project work, if it is not: its words
/// must keep to its project (`project_work::why_not`), and execgate must be able to hold
/// it there (docs/decisions.md#project-work).
fn project_work(
    settings: &Settings,
    reading: project_work::Reading<'_>,
    subject: Subject<'_>,
) -> Result<(), String> {
    let config = &settings.config;
    if config.policy.project_tools.is_empty() {
        return Err("policy.project_tools is empty".into());
    }
    if config.exec.confine == ConfineDefault::None {
        return Err("exec.confine is `none`: nothing would hold it to the project".into());
    }
    if crate::confine::abi().is_none_or(|abi| abi < 4) {
        return Err("this kernel cannot hold it to the project (Landlock ABI 4 or later)".into());
    }
    let Some(cwd) = subject.cwd else {
        return Err("it has no working directory".into());
    };
    if !inside_roots(subject.cwd, &config.exec.allowed_cwd_roots) {
        return Err("its working directory is not inside exec.allowed_cwd_roots".into());
    }
    let Some(root) = project_of(config, &settings.paths, subject) else {
        return Err("it runs in no project".into());
    };
    match project_work::why_not(
        &settings.paths,
        reading,
        &config.policy.project_tools,
        cwd,
        &root,
    ) {
        None => Ok(()),
        Some(why) => Err(why),
    }
}

/// How the kernel holds a command with this verdict if execgate runs it: a command
/// approved as harmless (step 8) to what a harmless command does; anything else (a rule,
/// a human, the owner's `full`) to `exec.confine`, with the network where the command's
/// profiles say it reaches it or a program has no profile to say it does not.
/// `exec.confine = "none"` confines nothing.
fn confinement(verdict: &Verdict, config: &Config, subject: Subject<'_>) -> Confine {
    if matches!(subject.command, CommandRef::Tool(_)) {
        return Confine::None;
    }
    let harmless = verdict.outcome
        == Outcome::Approve {
            by_allowlist: false,
        }
        && verdict.risk == Risk::Safe
        && config.security_for(subject.agent) != Security::Full;
    match config.exec.confine {
        ConfineDefault::None => Confine::None,
        _ if verdict.project_work => Confine::ProjectWork,
        _ if harmless => Confine::Harmless,
        ConfineDefault::Workspace if verdict.network => Confine::WorkspaceNetwork,
        ConfineDefault::Workspace => Confine::Workspace,
        ConfineDefault::ReadOnly if verdict.network => Confine::ReadOnlyNetwork,
        ConfineDefault::ReadOnly => Confine::ReadOnly,
    }
}

/// Whether a command does nothing but read paths (and reads at least one).
fn reads_only(u: &Understanding) -> bool {
    u.profiled
        && !u.findings.is_empty()
        && u.findings.iter().all(|f| {
            matches!(
                f.effect,
                programs::Effect::Reads(_) | programs::Effect::ReadsTree(_)
            )
        })
}

/// Whether a command that only reads ([`reads_only`]) reads only inside `project`:
/// every path it reads, resolved, lies inside the project, is no secret nor anything
/// else the path policy refuses (`judged`), and is a regular file or a directory whose
/// tree holds nothing refused. `Err`: why not.
fn reads_inside(
    paths: &paths::Paths,
    judged: &[Option<paths::Refusal>],
    u: &Understanding,
    cwd: Option<&Path>,
    project: Option<&Path>,
    config: &Config,
) -> Result<(), String> {
    if judged.iter().any(Option::is_some) {
        // The path policy's refusal is already a reason of its own.
        return Err("it reads what the path policy refuses".into());
    }
    let (Some(cwd), Some(root)) = (cwd, project) else {
        return Err(
            "its reads are judged only inside a project (a git work tree, or a directory under policy.project_roots), and this request has none"
                .into(),
        );
    };
    let project = paths::Project {
        root,
        over_secrets: config.policy.tree_reads_over_secrets,
    };
    for f in &u.findings {
        let (text, access) = match &f.effect {
            programs::Effect::Reads(p) => (p, paths::Access::Read),
            programs::Effect::ReadsTree(p) => (p, paths::Access::ReadTree),
            _ => unreachable!("only reads are left"),
        };
        // A `-` that is a read path (not standard input) is a file named `-`.
        if let Some(why) = paths.outside(text, access, cwd, project) {
            return Err(why);
        }
    }
    Ok(())
}

/// Why writing what the path policy refused is dangerous.
fn written_reason(refusal: &paths::Refusal) -> String {
    match refusal.kind {
        paths::Kind::Guard | paths::Kind::Own => format!(
            "writes {}, which an agent could use to switch its guard off",
            refusal.what
        ),
        paths::Kind::Secret | paths::Kind::Sensitive => {
            format!("writes or copies a sensitive file: {}", refusal.what)
        }
    }
}

/// Steps 9 and 10, for commands and tool calls alike: what `approval.ask` makes of a
/// request a rule (`allowlisted`) or the safe list (`safe`) did or did not approve, and
/// what a timeout would make of it (`approval.ask_fallback`). `rule` names the kind of
/// rule that missed, for the deny's reason.
fn conclude(verdict: &mut Verdict, config: &Config, allowlisted: bool, safe: bool, rule: &str) {
    verdict.fallback_approves = match config.approval.ask_fallback {
        AskFallback::Deny => false,
        AskFallback::Allowlist => allowlisted,
        AskFallback::Full => true,
    };
    verdict.outcome = match config.approval.ask {
        Ask::Always => Outcome::Ask,
        _ if allowlisted => Outcome::Approve { by_allowlist: true },
        _ if safe => Outcome::Approve {
            by_allowlist: false,
        },
        Ask::OnMiss => Outcome::Ask,
        Ask::Off => Outcome::Deny {
            reason: format!("no {rule} matched and approval.ask is `off`"),
        },
    };
}

/// The subject's command, parsed for the shells it will run under.
fn analysed(subject: Subject<'_>) -> parse::Analysis {
    match subject.command {
        CommandRef::Argv(argv) => parse::Analysis::of_argv(argv, &shell_join(argv)),
        CommandRef::Line(line) => parse::analyse_for(line, subject.shells()),
        // A tool call runs no program execgate could read.
        CommandRef::Tool(_) => parse::Analysis::default(),
    }
}

/// For each command of a plain analysis, the words a glob's wildcard may not cover when
/// its program has no profile ([`wildcard::uncovered`]), judged only where a glob
/// matches it: a profiled program's own profile decides, and a command no glob matches
/// is not approved by one. Bare words are looked up in the `PATH` runs get (the
/// daemon's, its absolute entries), the system directories and the `cwd`, and in
/// decide-only mode in the agent's own usual directories (`~/.local/bin`, …).
fn uncovered_words(
    paths: &paths::Paths,
    analysis: &parse::Analysis,
    understood: &[Understanding],
    allowlist: &rules::Allowlist,
    subject: &Subject<'_>,
) -> Vec<Vec<wildcard::Uncovered>> {
    let mut lookup = None;
    analysis
        .commands
        .iter()
        .zip(understood)
        .map(|(c, u)| {
            if u.profiled || !allowlist.any_glob_matches(&c.text) {
                return Vec::new();
            }
            let lookup = lookup.get_or_insert_with(|| {
                let path = std::env::var("PATH").unwrap_or_default();
                let lookup = wildcard::Lookup::new(subject.cwd, &path).with_paths(paths);
                // Decide-only: the agent runs it with its own `PATH`, which may name
                // directories in its home.
                match subject
                    .uid
                    .filter(|_| !subject.run)
                    .and_then(crate::sys::home_of)
                {
                    Some(home) => lookup.with_home(&home),
                    None => lookup,
                }
            });
            wildcard::uncovered(&c.words, c.piped, lookup)
        })
        .collect()
}

/// Whether `cwd` lies inside one of `roots` (both canonical: roots are made canonical
/// here, the request's cwd was at validation). No roots, or none that resolves: no.
fn inside_roots(cwd: Option<&Path>, roots: &[std::path::PathBuf]) -> bool {
    let Some(cwd) = cwd else {
        return false;
    };
    roots
        .iter()
        .filter_map(|r| r.canonicalize().ok())
        .any(|r| cwd.starts_with(r))
}

/// Why git in this command must not be approved without a human, if it must not: git
/// runs programs its repository's configuration names (`core.fsmonitor` on `status`,
/// `diff.external` and textconv drivers on `diff`, filters, aliases) and hooks from
/// `.git/hooks`, which an agent can often write, and so do the submodules git enters.
/// In decide-only mode the agent runs git itself, so no repository it can enter may set
/// a program-valued key or hold a hook the command could run; in run mode execgate
/// neutralises them (`gitrepo::neutralising_env`), so the configuration need only be
/// readable, every key neutralisable, and nothing git reads writable by another uid (else
/// it could change between execgate's reading and git's). Without a repository, only
/// commands that need none pass. All of it is about the `cwd`'s repository, so git
/// pointed elsewhere (`-C`, `-c`, `cd` before it) never passes.
fn git_gate(
    analysis: &parse::Analysis,
    understood: &[Understanding],
    subject: Subject<'_>,
    read: Option<&Result<Option<gitrepo::Repo>, String>>,
) -> Option<String> {
    // Every git invocation, looked through wrappers, `sh -c` scripts and heredocs:
    // `timeout 5 git status` or `bash -lc 'git status'` under an exact rule runs git too.
    let mut subs: Vec<Option<&'static str>> = Vec::new();
    let mut wrapped = false;
    // What else runs in the line, to see that nothing moves git elsewhere first.
    let mut others: Vec<(Vec<String>, bool)> = Vec::new();
    let mut elsewhere: Option<String> = None;
    for (c, u) in analysis.commands.iter().zip(understood) {
        for (i, words) in risk::looked_through_command(c).into_iter().enumerate() {
            if !words
                .first()
                .is_some_and(|p| p == "git" || p.ends_with("/git"))
            {
                others.push((words, i == 0 && u.profiled));
                continue;
            }
            // The command as written has its reading at hand; inner ones are read here.
            let inner;
            let reading = if i == 0 {
                u
            } else {
                inner = programs::understand(&words, false);
                &inner
            };
            if i == 0 && u.profiled && u.program == "git" {
                subs.push(u.subcommand.first().copied());
            } else {
                wrapped = true;
            }
            // `-C`, `--git-dir`, `--work-tree`, `-c include.path=…`: another repository
            // or configuration than the one read below.
            if elsewhere.is_none()
                && let Some(f) = reading
                    .findings
                    .iter()
                    .find(|f| matches!(f.effect, programs::Effect::Config(_)))
            {
                elsewhere = Some(format!(
                    "git {}, and execgate reads only the configuration of the cwd's repository",
                    f.effect
                ));
            }
        }
    }
    if subs.is_empty() && !wrapped {
        return None;
    }
    if elsewhere.is_some() {
        return elsewhere;
    }
    // Only what execgate knows keeps git where it stands: a program it has a profile for,
    // a shell whose script it read, a wrapper that changes neither directory nor
    // environment. A builtin (`cd`, `export`, `pushd`) moves the git after it elsewhere.
    if let Some(mover) = risk::first_mover(&others) {
        return Some(format!(
            "git runs alongside `{mover}`, which execgate does not know (a builtin like `cd` or `export` moves git elsewhere), and execgate reads only the configuration of the cwd's repository"
        ));
    }
    let Some(cwd) = subject.cwd else {
        return Some(
            "git: the request gives no cwd, so execgate cannot read the repository's configuration (which can make git run programs)"
                .into(),
        );
    };
    // In run mode git runs as execgate's own user; otherwise as the agent.
    let git_uid = if subject.run {
        Some(crate::sys::effective_uid())
    } else {
        subject.uid
    };
    let inspected;
    let read = match read {
        Some(read) => read,
        None => {
            inspected = gitrepo::inspect(cwd, git_uid);
            &inspected
        }
    };
    let repo = match read {
        Err(e) => return Some(format!("git: cannot read the repository fully: {e}")),
        Ok(repo) => repo.as_ref(),
    };
    let Some(repo) = repo else {
        let repoless = |s: &Option<&str>| {
            matches!(
                s,
                None | Some("clone" | "init" | "version" | "help" | "ls-remote")
            )
        };
        if wrapped || !subs.iter().all(repoless) {
            return Some(format!(
                "git: {} is not in a repository, where `git diff` compares any two files",
                cwd.display()
            ));
        }
        return None;
    };
    if subject.run {
        // What execgate read must be what git reads when it runs: nobody else may be
        // able to change it in between.
        if let Some(why) = &repo.writable {
            return Some(format!(
                "git: {why}, so the repository could change between execgate's reading and git's; execgate runs git on its own word only in repositories no other user can write"
            ));
        }
        return gitrepo::neutralising_env(Some(repo), &[])
            .1
            .into_iter()
            .next()
            .map(|why| format!("git: {why}"));
    }
    if let Some(key) = repo.program_keys.first() {
        return Some(format!("git: {} sets a key that {}", key.shown(), key.why));
    }
    if !repo.hooks.is_empty() {
        use programs::git::{Hooks, hooks_run_by};
        let runs_hook = wrapped
            || subs.iter().any(|s| match hooks_run_by(*s) {
                Hooks::None => false,
                Hooks::IndexOnly => repo.hooks.iter().any(|h| h == "post-index-change"),
                Hooks::Any => true,
            });
        if runs_hook {
            return Some(format!(
                "git: the repository has hooks git would run ({})",
                repo.hooks.join(", ")
            ));
        }
    }
    None
}
