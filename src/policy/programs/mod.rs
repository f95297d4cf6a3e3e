//! Program knowledge: what the words of a known program mean, read exactly as the
//! program's own parser reads them (docs/decisions.md#the-principle: approve without a human only what
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
//! The machinery, bottom up: `spec` (the option-line notation), `profile` (what a
//! profile is, what reading finds, and the `Reading` a profile's checks work on),
//! `compiled` (a profile with its lines parsed and indexed), `read` (the reader), this
//! file (the registry, and [`understand`]), and `doc` (`docs/profiles.md`, written from
//! the profiles).
//!
//! Each family's tests keep their cases as tables (its `tests::TABLES`); `tests` runs them
//! all to show that every `code`, `runs` and `danger` option, and every check, is
//! exercised by some case.
//!
//! The profiles, one file per family:
//! - `coreutils`: the read-only tools (`ls`, `cat`, `head`, `sort`, `uniq`, `tr`, `date`, …)
//!   and the file tools (`rm`, `cp`, `mv`, `install`, `tee`, `chmod`, `chown`, …).
//! - `text`: `grep`, `rg`.
//! - `sed`, `awk`, `jq`: each with the reader of its language (a sed script, an awk
//!   program, a jq filter), which follows the program's own grammar.
//! - `find`: `find`'s expression language.
//! - `git`: git, its global options and subcommands.
//! - `build`: `cargo`, `make`.
//! - `js`: `npm`, `npx`, `yarn`, `pnpm`.
//! - `python`: `python -m`, `pip`.
//! - `net`: `curl`, `wget`.
//! - `archive`: `tar`, `gzip`, `xz`.
//! - `ops`: `docker` (and `docker compose`), `kubectl`, `systemctl`.

mod archive;
mod awk;
mod build;
mod compiled;
mod coreutils;
pub mod doc;
mod find;
pub mod git;
mod jq;
mod js;
mod net;
mod ops;
mod profile;
mod python;
mod read;
mod sed;
pub mod spec;
mod text;

use std::collections::HashMap;
use std::sync::LazyLock;

use compiled::Compiled;
pub use profile::{
    BASE, Config, ConfigFile, Effect, Finding, IfPresent, Judge, Place, Profile, Role, Runs, Span,
    Syntax, Understanding, concat,
};

pub use spec::{Arg, Does};

/// Every profile, by program name.
fn all() -> Vec<&'static Profile> {
    let mut v: Vec<&'static Profile> = Vec::new();
    v.extend_from_slice(coreutils::PROFILES);
    v.extend_from_slice(text::PROFILES);
    v.extend_from_slice(sed::PROFILES);
    v.extend_from_slice(awk::PROFILES);
    v.extend_from_slice(jq::PROFILES);
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

/// The programs a program starts itself as part of being what it is
/// ([`Profile::helpers`]); none for a program without a profile.
pub fn helpers(program: &str) -> &'static [&'static str] {
    lookup(program).map_or(&[], |c| c.profile.helpers)
}

/// `python`, `python3`, `python3.12`, `pypy3`: a Python interpreter by its name.
pub fn is_python(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    let family = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(family, "python" | "pypy")
}

/// Whether `words`, the words a glob writes out before its wildcard, fix what an
/// interpreter runs (`python -m pytest`): the wildcard then covers the runner's
/// arguments, which its profile reads, not other code.
pub fn fixes_what_runs(words: &[String]) -> bool {
    python::runs_a_test_runner(words)
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
    let errors = if compiled.broken_anywhere {
        let mut errors = Vec::new();
        compiled.errors(&mut errors);
        errors
    } else {
        Vec::new()
    };
    let mut u = Understanding {
        program: base,
        profiled: true,
        decides_code: compiled.profile.decides_code,
        subcommand: Vec::new(),
        findings: Vec::new(),
        runs: Vec::new(),
        if_present: Vec::new(),
        endless: false,
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
    let read = read::read(compiled, words, piped, understand);
    (u.findings, u.subcommand, u.runs, u.if_present, u.endless) = (
        read.findings,
        read.path,
        read.runs,
        read.if_present,
        read.endless,
    );
    // A profile that accounts for the code it runs itself (`python -m pytest`) starts
    // no program it does not name.
    if u.decides_code {
        u.runs.retain(|r| *r != Runs::Unnamed);
    }
    u
}

/// The options without a value that `word` spells for `program`, each by the first short
/// letter of its option (`rm -Rf`: `f`, `r`; `rm --recursive`: `r`), if it spells only
/// such options: how the deny list reads options however they are spelled. Without a
/// profile, a cluster of letters is read letter by letter as written.
pub fn option_letters(program: &str, word: &str) -> Option<Vec<char>> {
    use spec::{Arg, Name};
    let first_short = |opt: &spec::Opt| {
        opt.names.iter().find_map(|n| match n {
            Name::Short(c) => Some(*c),
            _ => None,
        })
    };
    let compiled = lookup(program);
    if let Some(long) = word.strip_prefix("--") {
        let c = compiled?;
        let &(_, i) = c.longs.iter().find(|(n, _)| *n == long)?;
        let opt = &c.opts[i];
        return (opt.arg == Arg::No)
            .then(|| first_short(opt))
            .flatten()
            .map(|c| vec![c]);
    }
    let cluster = word.strip_prefix('-')?;
    if cluster.is_empty() || !cluster.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let Some(c) = compiled else {
        return Some(cluster.chars().collect());
    };
    cluster
        .chars()
        .map(|ch| {
            let opt = &c.opts[*c.shorts.get(&ch)?];
            (opt.arg == Arg::No).then(|| first_short(opt)).flatten()
        })
        .collect()
}

/// The configuration a command's program reads (`Profile::config`): its own profile's,
/// then each selected subcommand's (`docker`'s, then `docker compose`'s).
pub fn configs(program: &str, understood: &Understanding) -> Vec<&'static Config> {
    let Some(compiled) = lookup(program) else {
        return Vec::new();
    };
    let mut profile = compiled.profile;
    let mut out: Vec<&'static Config> = profile.config.into_iter().collect();
    for name in &understood.subcommand {
        let Some(sub) = profile.subcommands.iter().find(|s| s.names.contains(name)) else {
            break;
        };
        profile = sub;
        out.extend(profile.config);
    }
    out
}

/// Every profile's configuration (`Profile::config`), subcommands' included.
pub fn all_configs() -> Vec<&'static Config> {
    fn walk(p: &'static Profile, out: &mut Vec<&'static Config>) {
        out.extend(p.config);
        for s in p.subcommands {
            walk(s, out);
        }
    }
    let mut out = Vec::new();
    for p in all() {
        walk(p, &mut out);
    }
    out
}

/// Every configuration file the profiles name, once each, with what it can make its
/// program do: what the path policy guards against a write (`policy::paths`).
pub fn config_files() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    for config in all_configs() {
        for file in config.files {
            if !out.iter().any(|(name, _)| *name == file.name) {
                out.push((file.name, file.why));
            }
        }
    }
    out
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

/// `docs/profiles.md`, rendered from every profile.
pub fn docs() -> String {
    doc::render(all())
}

/// Every profiled program and subcommand: its name (and the words that select the
/// subcommand), how it reads its options, and the options valid there (a subcommand's
/// own, and its parent's where they stay valid, `Profile::inherit`): what the oracle's
/// generators (testkit's `oracle`) draw commands from. Lines that do not compile are
/// left out (a test keeps them at none).
pub fn option_tables() -> Vec<OptionTable> {
    fn compiled(p: &Profile) -> Vec<spec::Opt> {
        p.options
            .iter()
            .filter_map(|line| spec::compile(line).ok())
            .flatten()
            .collect()
    }
    fn walk(
        top: &'static Profile,
        p: &'static Profile,
        words: Vec<&'static str>,
        inherited: Vec<spec::Opt>,
        out: &mut Vec<OptionTable>,
    ) {
        let mut options = if words.is_empty() || p.inherit {
            inherited
        } else {
            Vec::new()
        };
        options.extend(compiled(p));
        for sub in p.subcommands {
            let mut path = words.clone();
            path.push(sub.names[0]);
            walk(top, sub, path, options.clone(), out);
        }
        out.push(OptionTable {
            program: top.names[0],
            names: top.names,
            words,
            syntax: p.syntax,
            options,
            helpers: top.helpers,
            keeps: top.keeps,
            sockets: top.sockets,
            phones_home: top.phones_home.is_some(),
        });
    }
    let mut out = Vec::new();
    for p in all() {
        walk(p, p, Vec::new(), Vec::new(), &mut out);
    }
    out.sort_by(|a, b| (a.program, &a.words).cmp(&(b.program, &b.words)));
    out
}

/// One program's options as its profile lists them ([`option_tables`]).
pub struct OptionTable {
    pub program: &'static str,
    /// Every name the program answers to (`python`, `python3`, …).
    pub names: &'static [&'static str],
    /// The words that select a subcommand (`["stash", "list"]`); none for the program.
    pub words: Vec<&'static str>,
    pub syntax: Syntax,
    pub options: Vec<spec::Opt>,
    /// The programs it starts itself ([`Profile::helpers`]).
    pub helpers: &'static [&'static str],
    /// What it keeps for itself under its home ([`Profile::keeps`]).
    pub keeps: &'static [&'static str],
    /// Its service's local sockets ([`Profile::sockets`]).
    pub sockets: &'static [&'static str],
    /// Whether it asks the network by itself ([`Profile::phones_home`]).
    pub phones_home: bool,
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
