//! Program knowledge: what the words of a known program mean, read exactly as the
//! program's own parser reads them (DESIGN.md §4: approve without a human only what
//! execgate fully understands).
//!
//! Each known program has a [`Profile`]: its option syntax (GNU `getopt_long`, git's
//! parse-options, git's exact revision options, clap, npm), one line per option in the
//! notation of [`spec`] saying how it takes a value and what it does, what its operands
//! are, its subcommands, and a few program-specific rules. [`understand`] reads a
//! command's words against its profile and reports every [`Finding`]: a path read or
//! written, code run, configuration changed, the network reached, something destroyed,
//! or a word it cannot account for. A command with no findings at all is harmless; an
//! `Unknown` finding means a human must decide.
//!
//! The reader is deliberately unforgiving where programs are forgiving: an abbreviated
//! long option (`git reset --har`, which git reads as `--hard`) is recognised, and if it
//! could abbreviate something dangerous it is reported as that danger, but it is never
//! approved without a human; an option whose value is optional takes it only when
//! attached with `=` (`uniq --group - OUT` writes OUT); an unknown option stops the
//! reading, since its value could be the next word.
//!
//! The profiles, one file per family:
//! - `coreutils`: the read-only tools (`ls`, `cat`, `head`, `sort`, `uniq`, `tr`, `date`, …)
//!   and the file tools (`rm`, `cp`, `mv`, `install`, `tee`, `chmod`, `chown`, …).
//! - `text`: `grep`, `rg`, `sed`, `awk`, `jq`.
//! - `find`: `find`'s expression language.
//! - `git`: git, its global options and subcommands.
//! - `build`: `cargo`, `make`.
//! - `js`: `npm`, `npx`, `yarn`, `pnpm`.
//! - `python`: `python -m`, `pip`.
//! - `net`: `curl`, `wget`.
//! - `archive`: `tar`.
//! - `ops`: `docker`, `kubectl`, `systemctl`.

mod archive;
mod build;
mod coreutils;
pub mod doc;
mod find;
pub mod git;
mod js;
mod net;
mod ops;
mod python;
mod read;
pub mod spec;
mod text;

use std::collections::HashMap;
use std::sync::LazyLock;

pub use read::Reading;
pub use spec::{Arg, Does};
use spec::{Name, Opt};

use super::paths;

/// How a program reads its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// GNU `getopt_long`: clustered short options, `--long[=value]`, any unambiguous
    /// prefix of a long option, options anywhere (permuted) until `--`.
    Gnu,
    /// `getopt_long` in POSIX order (`+` in the option string): the first operand ends
    /// the options (`env`, `xargs`, `timeout`).
    GnuInOrder,
    /// git's parse-options: as `Gnu` (abbreviations accepted, permuted).
    Git,
    /// git's revision and diff options (`log`, `show`, `diff`): exact words only, no
    /// clustering, no abbreviations; a short option may carry its value attached.
    Exact,
    /// clap and parsers like it: clustered short options, exact long options, no
    /// abbreviations, permuted.
    Clap,
    /// npm's option parser: exact names, and any other `--name[=value]` is taken as a
    /// configuration setting (abbreviations of known names too).
    Npm,
    /// No options at all: every word is an operand (`echo`, `true`, `dd`).
    Operands,
}

/// What an operand is, by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Text the program only prints or computes with.
    Text,
    /// A name that is not a path (`which ls`): a path here is read as one.
    Name,
    /// A path the program reads (`-` is standard input).
    Read,
    /// A path the program writes (`-` is standard output).
    Write,
    /// A directory read as a whole tree.
    Tree,
    /// A git revision, or failing that a path in the repository.
    Revision,
    /// Code the program runs.
    Code(&'static str),
    /// A target, script or test of the project in the working directory, which runs its code.
    Project(&'static str),
    /// Something the program changes in the repository it works on (a branch created).
    Repo(&'static str),
    /// Words handed on to other code (the project's test binary, a script's arguments).
    Passthrough,
    /// A setting that changes configuration or what the program does.
    Config(&'static str),
    /// Something destroyed.
    Danger(&'static str),
    /// No operand belongs here.
    Nothing,
}

/// A program (or one of its subcommands) as execgate knows it.
#[derive(Debug)]
pub struct Profile {
    /// The program's names, or for a subcommand, the words that select it (aliases too).
    pub names: &'static [&'static str],
    pub syntax: Syntax,
    /// One line per option, in the notation of [`spec`].
    pub options: &'static [&'static str],
    /// The roles of the first operands, in order.
    pub operands: &'static [Role],
    /// The role of every further operand.
    pub rest: Role,
    /// What running it at all does (`cargo test` runs the project's tests).
    pub does: Does,
    pub subcommands: &'static [&'static Profile],
    /// Whether the parent's options stay valid after this subcommand (clap's global
    /// options, cobra's persistent flags, npm's configuration).
    pub inherit: bool,
    /// Whether this profile accounts for every way the program runs other code, so the
    /// blanket refusal of interpreters does not apply (`python -m pytest` under the rule
    /// `python -m pytest *`).
    pub decides_code: bool,
    /// Rules that need more than one word at a time, run after reading.
    pub check: Option<fn(&mut Reading<'_>)>,
    /// tar's old style: a first word without a dash is a bundle of short options whose
    /// values are the following words, in order (`tar xzf a.tgz`).
    pub old_style: bool,
}

/// `a` then `b`, at compile time: option lists that share lines (`docker create` is
/// `docker run` without its three detach options).
pub(super) const fn concat<const N: usize>(
    a: &[&'static str],
    b: &[&'static str],
) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < a.len() {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < b.len() {
        out[i + j] = b[j];
        j += 1;
    }
    out
}

/// The defaults a profile is written against: `..BASE`.
pub const BASE: Profile = Profile {
    names: &[],
    syntax: Syntax::Gnu,
    options: &[],
    operands: &[],
    rest: Role::Nothing,
    does: Does::Nothing,
    subcommands: &[],
    inherit: false,
    decides_code: false,
    check: None,
    old_style: false,
};

/// What one word (or a run of words) does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    Reads(String),
    ReadsTree(String),
    Writes(String),
    Code(String),
    Project(String),
    Repo(String),
    Net(String),
    Config(String),
    Env(String),
    Danger(String),
    /// Something execgate cannot account for: a human decides.
    Unknown(String),
}

/// The words a finding is about: indices into the command's words, inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub first: usize,
    pub last: usize,
}

impl Span {
    pub fn one(at: usize) -> Span {
        Span {
            first: at,
            last: at,
        }
    }

    /// About what no word shows — standard input, an editor the program starts — so no
    /// rule's written-out words ever name it.
    pub const UNSEEN: Span = Span {
        first: 0,
        last: usize::MAX,
    };
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub effect: Effect,
    pub at: Span,
}

impl std::fmt::Display for Effect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Effect::Reads(p) if paths::is_secret(p) => write!(f, "reads a secret (`{p}`)"),
            Effect::Reads(p) => write!(f, "reads `{p}`"),
            Effect::ReadsTree(p) if paths::is_secret(p) => {
                write!(f, "reads secrets under `{p}`")
            }
            Effect::ReadsTree(p) => write!(f, "reads everything under `{p}`"),
            Effect::Writes(p) => write!(f, "writes `{p}`"),
            Effect::Code(s)
            | Effect::Project(s)
            | Effect::Repo(s)
            | Effect::Net(s)
            | Effect::Config(s)
            | Effect::Env(s)
            | Effect::Danger(s)
            | Effect::Unknown(s) => f.write_str(s),
        }
    }
}

/// What execgate makes of one simple command's words.
#[derive(Clone, Debug, Default)]
pub struct Understanding {
    /// The program, without its directory.
    pub program: String,
    /// Whether execgate has a profile for it.
    pub profiled: bool,
    pub decides_code: bool,
    /// The subcommands selected, outermost first (`git stash list`: `["stash", "list"]`).
    pub subcommand: Vec<&'static str>,
    pub findings: Vec<Finding>,
}

impl Understanding {
    /// Every word accounted for: a profile exists and nothing is unknown.
    pub fn understood(&self) -> bool {
        self.profiled
            && !self
                .findings
                .iter()
                .any(|f| matches!(f.effect, Effect::Unknown(_)))
    }

    /// Step 8: understood, and it neither reads nor writes a named path, recurses, runs
    /// code, reaches the network, changes configuration, reads the environment nor
    /// destroys anything.
    pub fn harmless(&self) -> bool {
        self.profiled && self.findings.is_empty()
    }

    pub fn dangers(&self) -> impl Iterator<Item = &str> {
        self.findings.iter().filter_map(|f| match &f.effect {
            Effect::Danger(s) => Some(s.as_str()),
            _ => None,
        })
    }

    /// Why a glob rule whose first `literal` words are written out (the rest matched by
    /// a wildcard) must not approve these words, if it must not (step 7): the wildcard
    /// covers operands and harmless options, never code the rule did not name, a write,
    /// a change of configuration, the environment, a secret, or a word execgate cannot
    /// account for.
    pub fn glob_refusal(&self, literal: usize) -> Option<String> {
        if !self.profiled {
            return None;
        }
        self.findings.iter().find_map(|f| {
            if f.at.last < literal {
                return None; // The rule's author wrote these words out.
            }
            let refused = match &f.effect {
                Effect::Reads(p) | Effect::ReadsTree(p) => paths::is_secret(p),
                Effect::Net(_) | Effect::Project(_) | Effect::Repo(_) => false,
                Effect::Writes(_)
                | Effect::Code(_)
                | Effect::Config(_)
                | Effect::Env(_)
                | Effect::Danger(_)
                | Effect::Unknown(_) => true,
            };
            refused.then(|| format!("{}: {}", self.program, f.effect))
        })
    }

    /// The findings as reasons a human reads, at most `max`.
    pub fn reasons(&self, max: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for f in &self.findings {
            let text = f.effect.to_string();
            // Reasons that already name the program (`git reset --hard` discards …) are
            // shown as they are; the others get it in front (`cat` reads `README.md`).
            let named = text
                .strip_prefix('`')
                .and_then(|t| t.strip_prefix(self.program.as_str()))
                .is_some_and(|t| t.starts_with(['`', ' ']));
            let r = if named {
                text
            } else {
                format!("`{}` {text}", self.program)
            };
            if !out.contains(&r) {
                out.push(r);
            }
            if out.len() == max {
                break;
            }
        }
        out
    }
}

/// A profile compiled once: its option lines parsed and indexed, its subcommands too.
#[derive(Debug)]
struct Compiled {
    profile: &'static Profile,
    opts: Vec<Opt>,
    shorts: HashMap<char, usize>,
    /// Long names (two dashes), for exact lookup and prefix search.
    longs: Vec<(&'static str, usize)>,
    /// One-dash long names (`-name`).
    dash_longs: Vec<(&'static str, usize)>,
    number: Option<usize>,
    subs: Vec<Compiled>,
    /// Why the profile does not compile, if it does not (a bug; fails closed).
    broken: Option<String>,
}

impl Compiled {
    fn new(profile: &'static Profile) -> Compiled {
        let mut c = Compiled {
            profile,
            opts: Vec::new(),
            shorts: HashMap::new(),
            longs: Vec::new(),
            dash_longs: Vec::new(),
            number: None,
            subs: profile
                .subcommands
                .iter()
                .map(|s| Compiled::new(s))
                .collect(),
            broken: None,
        };
        let implicit: &[&'static str] = match profile.syntax {
            Syntax::Gnu | Syntax::GnuInOrder | Syntax::Git | Syntax::Clap => {
                &["--help", "--version"]
            }
            _ => &[],
        };
        let lines = profile.options.iter().chain(
            implicit
                .iter()
                .filter(|l| !profile.options.iter().any(|o| o.contains(**l))),
        );
        for opt in lines.flat_map(|line| match spec::compile(line) {
            Ok(opts) => opts.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        }) {
            match opt {
                Ok(opt) => {
                    let line = opt.line;
                    let i = c.opts.len();
                    for name in &opt.names {
                        let clash = match *name {
                            Name::Short(ch) => c.shorts.insert(ch, i).is_some(),
                            Name::Long(l) => {
                                let dup = c.longs.iter().any(|(n, _)| *n == l);
                                c.longs.push((l, i));
                                dup
                            }
                            Name::DashLong(l) => {
                                let dup = c.dash_longs.iter().any(|(n, _)| *n == l);
                                c.dash_longs.push((l, i));
                                dup
                            }
                            Name::Number => c.number.replace(i).is_some(),
                        };
                        if clash {
                            c.broken = Some(format!("{line:?}: a name listed twice"));
                        }
                    }
                    c.opts.push(opt);
                }
                Err(e) => c.broken = Some(e),
            }
        }
        c
    }

    fn sub(&self, word: &str) -> Option<&Compiled> {
        self.subs.iter().find(|s| s.profile.names.contains(&word))
    }

    /// Every compile error in this profile and its subcommands.
    fn errors(&self, out: &mut Vec<String>) {
        if let Some(e) = &self.broken {
            out.push(format!("{:?}: {e}", self.profile.names));
        }
        for s in &self.subs {
            s.errors(out);
        }
    }
}

/// Every profile, by program name.
fn all() -> Vec<&'static Profile> {
    let mut v: Vec<&'static Profile> = Vec::new();
    v.extend_from_slice(coreutils::PROFILES);
    v.extend_from_slice(text::PROFILES);
    v.extend_from_slice(find::PROFILES);
    v.extend_from_slice(git::PROFILES);
    v.extend_from_slice(build::PROFILES);
    v.extend_from_slice(js::PROFILES);
    v.extend_from_slice(python::PROFILES);
    v.extend_from_slice(net::PROFILES);
    v.extend_from_slice(archive::PROFILES);
    v.extend_from_slice(ops::PROFILES);
    v
}

static REGISTRY: LazyLock<HashMap<&'static str, Compiled>> = LazyLock::new(|| {
    let mut map = HashMap::new();
    for p in all() {
        for name in p.names {
            map.insert(*name, Compiled::new(p));
        }
    }
    map
});

/// Directories whose programs are the system's own: `/usr/bin/git` is git, `./git` is not.
const SYSTEM_DIRS: &[&str] = &[
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/usr/local/sbin/",
];

/// The profile a program word selects: a bare name, or a system directory's program.
fn lookup(program: &str) -> Option<&'static Compiled> {
    let name = if program.contains('/') {
        let dir = SYSTEM_DIRS.iter().find(|d| program.starts_with(**d))?;
        let rest = &program[dir.len()..];
        if rest.contains('/') {
            return None;
        }
        rest
    } else {
        program
    };
    REGISTRY.get(name)
}

/// `python`, `python3`, `python3.12`, `pypy3`: a Python interpreter by its name.
pub fn is_python(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    let family = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(family, "python" | "pypy")
}

/// Whether execgate has a profile for this program word.
pub fn is_profiled(program: &str) -> bool {
    lookup(program).is_some()
}

/// Reads one simple command's words (program first) against the program's profile.
/// `piped`: its standard input comes from a pipe.
pub fn understand(words: &[String], piped: bool) -> Understanding {
    let Some(program) = words.first() else {
        return Understanding::default();
    };
    let base = program.rsplit('/').next().unwrap_or(program).to_string();
    let Some(compiled) = lookup(program) else {
        return Understanding {
            program: base,
            ..Understanding::default()
        };
    };
    let mut errors = Vec::new();
    compiled.errors(&mut errors);
    let mut u = Understanding {
        program: base,
        profiled: true,
        decides_code: compiled.profile.decides_code,
        subcommand: Vec::new(),
        findings: Vec::new(),
    };
    if !errors.is_empty() {
        tracing::error!(errors = ?errors, "a program profile does not compile");
        u.findings.push(Finding {
            effect: Effect::Unknown(format!("execgate's profile of `{}` is broken", u.program)),
            // A broken profile is a bug: no rule may cover it.
            at: Span::UNSEEN,
        });
        return u;
    }
    (u.findings, u.subcommand) = read::read(compiled, words, piped);
    u
}

/// Every profile's compile errors, for the test that keeps them at none.
pub fn profile_errors() -> Vec<String> {
    let mut out = Vec::new();
    for c in REGISTRY.values() {
        c.errors(&mut out);
    }
    out.sort();
    out.dedup();
    out
}

/// The names of every profiled program, sorted (for the README's list and tests).
pub fn profiled_programs() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = REGISTRY.keys().copied().collect();
    v.sort_unstable();
    v
}

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
