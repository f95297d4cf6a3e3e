//! One oracle at work: policy as it judges with no rules, a sandbox to run in, and what
//! each command checked so far did. [`Checker::check`] asks policy first; what it judges
//! safe (approved without a human, step 8), and what it asks about only because it
//! reads files it names (a reads-only verdict: `cat notes.txt`, `find src -type f`), is
//! run for real and judged against what execgate said of it: the helpers its profile
//! names, and the files its profile says it reads (its operands, and the configuration
//! files it looks for).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use execgate::model::{CommandRef, Risk};
use execgate::policy::programs::{self, Effect, Place};

use super::judge::{Claim, Disagreement, judge};
use super::sandbox::Sandbox;
use super::trace;

/// Whether `verdict` asks a human only because the command reads files it names, all
/// of them said: every finding a read, nothing started, plain, and every reason one of
/// its reads or why they are not vouched for as inside a project, none of them a secret
/// named as such (a human asked about a secret was told of it) but one in a tree it
/// reads.
fn reads_only(verdict: &execgate::policy::Verdict, understood: &programs::Understanding) -> bool {
    let prefix = format!("`{}` reads ", understood.program);
    // Why its reads are not vouched for as inside a project (outside it, no project).
    let why_not_inside = format!("`{}`: ", understood.program);
    verdict.plain
        && understood.understood()
        && understood.runs.is_empty()
        && !understood.findings.is_empty()
        && understood
            .findings
            .iter()
            .all(|f| matches!(f.effect, Effect::Reads(_) | Effect::ReadsTree(_)))
        && verdict.risk_reasons.iter().all(|r| {
            // A secret in a tree it reads is in what it said it reads.
            let in_tree = r.contains("which a recursive read would show");
            (r.starts_with(&prefix) && !r.contains("secret"))
                || (r.starts_with(&why_not_inside) && (in_tree || !r.contains("secret")))
        })
}

/// How long a command that runs until stopped (`tail -f`) is watched.
const ENDLESS_WATCH: Duration = Duration::from_secs(2);

/// What one program's commands came to.
#[derive(Debug, Default, Clone, Copy)]
pub struct Count {
    /// Commands generated for it.
    pub generated: usize,
    /// Of those, judged safe, or reads-only, and run.
    pub run: usize,
    /// Of those run, the reads-only verdicts.
    pub reads_only: usize,
    /// Of those, disagreed.
    pub disagreed: usize,
    /// The time its runs took, the tracer's included.
    pub seconds: f64,
}

pub struct Checker {
    sandbox: Sandbox,
    _home: tempfile::TempDir,
    policy: execgate::policy::Policy,
    cwd: PathBuf,
    netns: bool,
    /// Each program's table, by every name it answers to.
    tables: std::collections::HashMap<&'static str, std::sync::Arc<programs::OptionTable>>,
    /// Per program and subcommand (`git log`), in name order.
    pub counts: BTreeMap<String, Count>,
    /// Every disagreement: the command as a shell line, and what it did.
    pub found: Vec<String>,
}

impl Checker {
    /// A fresh sandbox and policy with no rules. Needs what [`Sandbox::new`] needs.
    pub fn new() -> std::io::Result<Checker> {
        let sandbox = Sandbox::new()?;
        let home = tempfile::tempdir()?;
        let config = std::sync::Arc::new(crate::corpus::config(home.path()));
        let policy = execgate::policy::Policy::new(config).expect("policy compiles");
        let cwd = sandbox.root().canonicalize()?;
        let tables = programs::option_tables()
            .into_iter()
            .filter(|t| t.words.is_empty())
            .flat_map(|t| {
                let t = std::sync::Arc::new(t);
                t.names.iter().map(move |n| (*n, t.clone()))
            })
            .collect();
        Ok(Checker {
            sandbox,
            _home: home,
            policy,
            cwd,
            netns: trace::can_unshare_net(),
            tables,
            counts: BTreeMap::new(),
            found: Vec::new(),
        })
    }

    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Commands judged safe or reads-only, and run, so far.
    pub fn checked(&self) -> usize {
        self.counts.values().map(|c| c.run).sum()
    }

    /// Runs `argv` for real in the sandbox, within `limit`, if policy with no rules
    /// judges it safe there, or reads-only, and keeps every way it disagrees. `None`
    /// when it was judged otherwise; else what it did that the verdict rules out.
    pub async fn check(&mut self, argv: &[String], limit: Duration) -> Option<Vec<Disagreement>> {
        self.check_in(argv, Path::new("."), limit).await
    }

    /// [`Checker::check`] with `dir`, a directory of the sandbox (`repo` for git's
    /// subcommands), as the working directory.
    pub async fn check_in(
        &mut self,
        argv: &[String],
        dir: &Path,
        limit: Duration,
    ) -> Option<Vec<Disagreement>> {
        let cwd = self.cwd.join(dir);
        let cwd = cwd.canonicalize().unwrap_or(cwd);
        let line = execgate::model::shell_join(argv);
        let program = argv.first().map(String::as_str).unwrap_or_default();
        let understood = programs::understand(argv, false);
        // Counted by program and subcommand, as execgate read them (`git log`).
        let key = std::iter::once(program)
            .chain(understood.subcommand.iter().copied())
            .collect::<Vec<_>>()
            .join(" ");
        self.counts.entry(key.clone()).or_default().generated += 1;
        let subject = execgate::policy::Subject {
            agent: "agent",
            session: None,
            command: CommandRef::Line(&line),
            cwd: Some(&cwd),
            run: false,
            shell: None,
            uid: None,
        };
        let verdict = self.policy.evaluate(subject, chrono::Utc::now());
        let asked = match verdict.risk {
            Risk::Safe => false,
            Risk::NeedsReview if reads_only(&verdict, &understood) => true,
            _ => return None,
        };
        let table = self.tables.get(program);
        let endless = understood.endless;
        let claim = Claim {
            asked,
            helpers: table.map(|t| t.helpers).unwrap_or_default(),
            reads: Some(self.said_reads(argv, &understood, &cwd)),
            lists: vec![cwd.clone()],
            keeps: table
                .map(|t| t.keeps.iter().map(|k| self.cwd.join(k)).collect())
                .unwrap_or_default(),
            sockets: table.map(|t| t.sockets).unwrap_or_default(),
            phones_home: table.is_some_and(|t| t.phones_home),
            endless,
        };
        // What runs until stopped is watched for a while, not for the whole limit.
        let limit = if endless {
            limit.min(ENDLESS_WATCH)
        } else {
            limit
        };
        let started = std::time::Instant::now();
        let t = trace::run_in(&self.sandbox, &cwd, argv, limit, self.netns).await;
        let seconds = started.elapsed().as_secs_f64();
        let d = judge(&t, &self.sandbox, &claim);
        let count = self.counts.entry(key).or_default();
        count.run += 1;
        count.reads_only += usize::from(asked);
        count.seconds += seconds;
        if !d.is_empty() {
            count.disagreed += 1;
            let said: Vec<String> = d.iter().map(ToString::to_string).collect();
            self.found.push(format!("{line:?}: {}", said.join("; ")));
        }
        Some(d)
    }

    /// What execgate says `argv` reads of the user's files, as real paths: what its
    /// profile finds it reads in its words, the configuration files its profile says it
    /// looks for (in the working directory and above it, and in `HOME`), and for git
    /// the repository, whose configuration execgate reads before it approves.
    fn said_reads(
        &self,
        argv: &[String],
        understood: &programs::Understanding,
        cwd: &Path,
    ) -> Vec<PathBuf> {
        let real = |p: &Path| {
            let p = cwd.join(p);
            p.canonicalize().unwrap_or(p)
        };
        let mut out: Vec<PathBuf> = understood
            .findings
            .iter()
            .filter_map(|f| match &f.effect {
                Effect::Reads(p) | Effect::ReadsTree(p) if p != "-" => Some(real(Path::new(p))),
                _ => None,
            })
            .collect();
        for config in programs::configs(&argv[0], understood) {
            for file in config.files {
                match file.place {
                    Place::Home => out.push(self.cwd.join(file.name)),
                    Place::Up => out.extend(cwd.ancestors().map(|d| d.join(file.name))),
                }
            }
        }
        if understood.program == "git" {
            out.push(self.sandbox.repository());
        }
        out
    }

    /// Says what was checked, per program and in all, and every disagreement.
    pub fn report(&self, what: &str) -> String {
        let per: Vec<String> = self
            .counts
            .iter()
            .filter(|(_, c)| c.run > 0)
            .map(|(p, c)| match c.disagreed {
                0 => format!("{p} {}", c.run),
                d => format!("{p} {} ({d} disagreed)", c.run),
            })
            .collect();
        let generated: usize = self.counts.values().map(|c| c.generated).sum();
        let reads_only: usize = self.counts.values().map(|c| c.reads_only).sum();
        let mut out = format!(
            "the oracle ({what}): {generated} commands, {} run ({} judged safe, {reads_only} \
             reads-only), {} disagreed\nrun, per program: {}\n",
            self.checked(),
            self.checked() - reads_only,
            self.found.len(),
            per.join(", ")
        );
        for f in &self.found {
            out.push_str(f);
            out.push('\n');
        }
        out
    }
}

/// The profiled programs `.ci/run` installs (Debian's packages): under CI the sample
/// checks each of them.
pub const CI_INSTALLS: &[&str] = &[
    "cat", "ls", "grep", "sed", "gawk", "mawk", "jq", "find", "git", "tar", "gzip", "xz", "curl",
    "wget",
];

/// Whether `program` is a program installed on the sandbox's `PATH` (a shell's builtin,
/// such as `type`, is not: the oracle runs programs).
pub fn installed(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    ["/usr/local/bin", "/usr/bin", "/bin"].iter().any(|dir| {
        std::fs::metadata(Path::new(dir).join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}
