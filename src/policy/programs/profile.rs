//! What a profile is — a program's options, operands and subcommands — and what reading
//! a command against one finds: effects, the words they are about, and the verdict on
//! the whole (`Understanding`), and the `Reading` a profile's own checks work on. The
//! leaf of `programs`: every profile file builds on it.

use super::spec::{Does, Opt};
use crate::policy::paths;

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
    /// A path the program reads; `-` is a path too (`rev -` reads a file named `-`).
    Read,
    /// A path the program reads, or standard input when it is `-` (`cat -`).
    Input,
    /// A path the program writes; `-` is a path too (`tee -` writes a file named `-`).
    Write,
    /// A path the program writes, or standard output when it is `-` (`uniq IN -`).
    Output,
    /// A directory read as a whole tree.
    Tree,
    /// A git revision, or failing that a path in the repository.
    Revision,
    /// Code the program runs.
    Code(&'static str),
    /// A command it starts: this operand is the program, every later one an argument
    /// (`git bisect run CMD ARG…`).
    Runs(&'static str),
    /// A shell command line it starts: this operand and every later one, joined by
    /// blanks (`git submodule foreach CMD…`).
    RunsScript(&'static str),
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
    /// One line per option, in the notation of [`super::spec`].
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
    /// The configuration it reads from where it runs or from its environment, which an
    /// agent may write: judged before it is approved without a human (the
    /// configuration gate, `policy::progconfig`). A subcommand's adds to its parent's.
    pub config: Option<&'static Config>,
    /// Programs it starts itself, with words of its own, as part of being what it is
    /// (`gunzip` is a script that runs `gzip -d`; `locale -m` reads its compressed
    /// character maps through `gzip -dc`): not commands the agent chose, and so not
    /// judged as such. The oracle (testkit's `oracle`) holds a program to these. A name
    /// ending in `*` names every program it begins (`git-*`: git's own commands).
    pub helpers: &'static [&'static str],
    /// What it keeps for itself under its user's home, written on every run whatever
    /// the words (npm's debug log in `.npm/_logs/`): its own housekeeping, which no word
    /// of the command steers. The oracle accepts writes there, and only there.
    pub keeps: &'static [&'static str],
    /// The local sockets of the service it is the client of (docker's daemon): it asks
    /// that service even to print its help. Whether what it asks is harmless is the
    /// profile's judgement of its words; the oracle accepts a connection to these.
    pub sockets: &'static [&'static str],
    /// What it asks of the network by itself, on every run whatever its words (npm asks
    /// its registry whether a newer npm exists): nothing of the user's is sent and no
    /// word of the command steers it, and the owner reads it here. The oracle accepts
    /// name lookups and HTTPS connections from such a program, and nothing else.
    pub phones_home: Option<&'static str>,
}

/// Configuration a program reads from the directory it runs in (or those above it), the
/// home directory of the user it runs as, or its environment (docs/decisions.md,
/// "Configuration gates").
#[derive(Debug)]
pub struct Config {
    /// The files, each with how execgate judges it.
    pub files: &'static [ConfigFile],
    /// The environment variables it takes configuration from, for the owner to read. In
    /// decide-only mode they are the agent's own (execgate never sees them, and an agent
    /// changes them only with commands execgate judges); a run gets execgate's minimal
    /// environment and `run_env`.
    pub env: &'static str,
    /// Variables every run of any command gets (run mode), with why: what the
    /// environment can neutralise exactly, checked with the real program
    /// (tests/program_config.rs). The approved argv is never changed.
    pub run_env: &'static [(&'static str, &'static str, &'static str)],
}

/// One configuration file a program reads.
#[derive(Clone, Copy, Debug)]
pub struct ConfigFile {
    /// Its path relative to where it is looked for (`.npmrc`, `.cargo/config.toml`).
    pub name: &'static str,
    pub place: Place,
    pub judge: Judge,
    /// What the file can make the program do, for the owner.
    pub why: &'static str,
    /// Whether `Config::run_env` keeps the program from reading it: in run mode it is
    /// then not judged.
    pub neutralised: bool,
}

/// Where a configuration file is looked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The working directory and every directory above it (npm's project root, cargo's
    /// hierarchy, compose's project directory).
    Up,
    /// The home directory of the user the program runs as.
    Home,
}

/// How execgate judges a configuration file it finds.
#[derive(Clone, Copy, Debug)]
pub enum Judge {
    /// Its presence is enough to ask: its format is not worth reading exactly (a yarnrc
    /// names the Yarn release that runs; `~/.jq` defines functions every filter sees).
    Exists,
    /// `key = value` lines in npm's ini (no sections; every line a key): only keys
    /// matching a harmless pattern pass (`*`: any run of characters).
    NpmIni(&'static [&'static str]),
    /// Python's configparser (pip.conf): `[section]` headers, `key = value`, indented
    /// continuation lines; only keys matching a harmless pattern pass.
    PythonIni(&'static [&'static str]),
    /// TOML: every key's dotted path (`build.rustc-wrapper`, `profile.*.lto`) must match
    /// a harmless pattern.
    Toml(&'static [&'static str]),
    /// YAML whose top-level keys must match a harmless pattern (what they hold is
    /// theirs).
    YamlTop(&'static [&'static str]),
    /// YAML in which no mapping key anywhere may match a refused pattern (a compose
    /// file's `env_file`: what else it says is the services').
    YamlRefuses(&'static [&'static str]),
    /// `NAME=value` lines (a `.env` file): no name may match a refused pattern.
    DotenvRefuses(&'static [&'static str]),
    /// A JSON object whose top-level keys must match a harmless pattern.
    JsonTop(&'static [&'static str]),
}

/// `a` then `b`, at compile time: option lists that share lines (`docker create` is
/// `docker run` without its three detach options).
pub const fn concat<const N: usize>(a: &[&'static str], b: &[&'static str]) -> [&'static str; N] {
    join(&[a, b])
}

/// The total length of several option lists: the `N` of [`join`].
pub const fn total(parts: &[&[&str]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

/// Several option lists as one, at compile time (`cargo test` is cargo's build options
/// and its own).
pub const fn join<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut k = 0;
    let mut i = 0;
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[k] = parts[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
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
    config: None,
    helpers: &[],
    keeps: &[],
    sockets: &[],
    phones_home: None,
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

/// A program a command starts, as its profile finds it in the words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Runs {
    /// A program and its arguments, started directly (`find -exec rm {} +`).
    Words(Vec<String>),
    /// A shell command line (`git -c alias.x='!rm …'`, sed's `e rm …`, `tar
    /// --to-command=…`): parsed in turn for the commands it runs.
    Script(String),
    /// Something execgate cannot name: an editor, awk's `system(…)`, a script in a file.
    Unnamed,
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

    /// The span moved to where its words stand in a longer command (a profile reading a
    /// tail with another: `python -m pip …`). `UNSEEN` stays unseen: its end never moves
    /// (moving it would wrap, and make what no rule names look named).
    pub fn moved(self, place: impl Fn(usize) -> usize) -> Span {
        let end = |i: usize| if i == usize::MAX { i } else { place(i) };
        Span {
            first: end(self.first),
            last: end(self.last),
        }
    }
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
    /// Every program it starts beyond itself, named where its words name it: one for
    /// each finding of code run (a profile that accounts for the code it runs itself,
    /// `decides_code`, keeps only the named ones).
    pub runs: Vec<Runs>,
    /// Dangers that depend on the working directory: a word that is a path if a file of
    /// that name is there, and destroys something then (`git checkout NAME` switches to
    /// the branch NAME, or else overwrites the file NAME's changes). Policy judges them
    /// where the command will run; without a working directory each is a danger.
    pub if_present: Vec<IfPresent>,
    /// It may run until stopped: an option that follows its input was given (`tail
    /// -f`), or its script may loop for ever (sed's jump back to a label).
    pub endless: bool,
}

/// A danger if `path` names something in the working directory (or is a pattern that
/// may): see [`Understanding::if_present`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IfPresent {
    pub path: String,
    pub danger: String,
}

impl IfPresent {
    /// Whether the danger holds where the command runs: `cwd` holds `path`, `path` is a
    /// pattern or magic pathspec git may expand to files, or there is no `cwd` to look in.
    /// Only a path known to be absent lifts it: one execgate cannot look at (no search
    /// permission, an I/O error) may be there.
    pub fn holds(&self, cwd: Option<&std::path::Path>) -> bool {
        let Some(cwd) = cwd else {
            return true;
        };
        if self.path.starts_with(':') || self.path.contains(['*', '?', '[']) {
            return true;
        }
        match std::fs::symlink_metadata(cwd.join(&self.path)) {
            Ok(_) => true,
            Err(e) => !matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ),
        }
    }
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
    ///
    /// `judged` is the path policy's refusal of each finding, in order, made where the
    /// command runs (a link to a key is a key); a finding it does not cover is judged
    /// by its text.
    pub fn glob_refusal(
        &self,
        literal: usize,
        judged: &[Option<paths::Refusal>],
    ) -> Option<String> {
        if !self.profiled {
            return None;
        }
        self.findings.iter().enumerate().find_map(|(i, f)| {
            if f.at.last < literal {
                return None; // The rule's author wrote these words out.
            }
            let refused = match &f.effect {
                Effect::Reads(p) | Effect::ReadsTree(p) => match judged.get(i) {
                    Some(Some(refusal)) => {
                        return Some(format!("{}: reads {}", self.program, refusal.what));
                    }
                    Some(None) => false,
                    None => paths::is_secret(p) || paths::guard_settings(p).is_some(),
                },
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

/// One option as given on the command line.
#[derive(Clone, Debug)]
pub struct Given<'w> {
    pub opt: &'static Opt,
    pub value: Option<&'w str>,
    /// The second value of a two-value option.
    pub value2: Option<&'w str>,
    pub at: Span,
}

/// What has been read so far; program-specific checks read and extend it.
pub struct Reading<'w> {
    pub words: &'w [String],
    /// Standard input comes from a pipe.
    pub piped: bool,
    /// Reads other words against their own profile (`python -m pip …` is pip's): handed
    /// in, so a profile never reaches up to the registry.
    pub(super) reread: fn(&[String], bool) -> Understanding,
    pub program: &'w str,
    /// The subcommands selected, by their first name (`["stash", "list"]`).
    pub path: Vec<&'static str>,
    /// The same, as typed (`npm r` is `uninstall` in `path`, `r` here): for reasons.
    pub(super) typed: Vec<&'w str>,
    pub given: Vec<Given<'w>>,
    /// The operands of the innermost subcommand, with their word indices.
    pub operands: Vec<(usize, &'w str)>,
    /// Where `--` ended the options, if it did.
    pub dashdash: Option<usize>,
    pub findings: Vec<Finding>,
    /// What it starts (see [`Understanding::runs`]).
    pub(super) runs: Vec<Runs>,
    /// See [`Understanding::if_present`].
    pub(super) if_present: Vec<IfPresent>,
    /// Reading stopped at a word it could not account for.
    pub stopped: bool,
    /// A check found that it may run until stopped (sed's jump back to a label).
    pub endless: bool,
    /// The operands' roles, when a check decides them (else the profile's).
    pub(super) roles: Option<(&'static [Role], Role)>,
}

impl<'w> Reading<'w> {
    pub fn has(&self, key: &str) -> bool {
        self.given.iter().any(|g| g.opt.key() == key)
    }

    /// The last value given to an option (options given twice: the last wins).
    pub fn value(&self, key: &str) -> Option<&'w str> {
        self.given
            .iter()
            .rev()
            .find(|g| g.opt.key() == key)
            .and_then(|g| g.value)
    }

    pub fn given_of(&self, key: &str) -> Option<&Given<'w>> {
        self.given.iter().find(|g| g.opt.key() == key)
    }

    /// Adds a finding. Code run that the finding does not name counts as a program
    /// execgate cannot name (`Runs::Unnamed`); [`Reading::starts`] names one.
    pub fn add(&mut self, effect: Effect, at: Span) {
        if matches!(effect, Effect::Code(_)) {
            self.runs.push(Runs::Unnamed);
        }
        self.findings.push(Finding { effect, at });
    }

    /// Adds the finding that the command starts `what`, named: `why` says so for a
    /// human.
    pub fn starts(&mut self, why: String, at: Span, what: Runs) {
        let what = match what {
            Runs::Words(w) if w.first().is_none_or(|p| p.is_empty()) => Runs::Unnamed,
            Runs::Script(s) if s.trim().is_empty() => Runs::Unnamed,
            named => named,
        };
        self.runs.push(what);
        self.findings.push(Finding {
            effect: Effect::Code(why),
            at,
        });
    }

    pub fn unknown(&mut self, at: usize, why: String) {
        self.add(Effect::Unknown(why), Span::one(at));
    }

    /// Reads `words` (program first) against that program's own profile, with this
    /// command's standard input.
    pub fn understand_other(&self, words: &[String]) -> Understanding {
        (self.reread)(words, self.piped)
    }

    /// Adds a danger that holds if `path` names a file in the working directory.
    pub fn danger_if_present(&mut self, path: &str, danger: String) {
        self.if_present.push(IfPresent {
            path: path.to_string(),
            danger,
        });
    }

    /// Decides the operands' roles instead of the profile.
    pub fn set_roles(&mut self, first: &'static [Role], rest: Role) {
        self.roles = Some((first, rest));
    }

    /// The span from a word to the end of the command.
    pub fn to_end(&self, from: usize) -> Span {
        Span {
            first: from,
            last: self.words.len().saturating_sub(1).max(from),
        }
    }

    /// The effect of running the (sub)command at word `at`.
    pub(super) fn does(&mut self, does: Does, at: usize) {
        if does == Does::Nothing {
            return;
        }
        let shown = format!("`{}`", self.command_path(None));
        if let Some(effect) = effect_of(does, &shown, None) {
            self.add(effect, Span::one(at));
        }
    }

    /// The program and the subcommands selected so far, and an option if given, as a
    /// human reads them in a reason: `git reset --hard`, `cargo build`.
    pub(super) fn command_path(&self, option: Option<&str>) -> String {
        let mut parts: Vec<&str> = vec![self.program];
        parts.extend(self.typed.iter().copied());
        parts.extend(option);
        parts.join(" ")
    }

    pub(super) fn give(
        &mut self,
        opt: &'static Opt,
        value: Option<&'w str>,
        value2: Option<&'w str>,
        at: Span,
    ) {
        #[cfg(test)]
        super::testing::coverage::gave(opt);
        // Most options do nothing: their reason text is never made.
        if !matches!(opt.does, Does::Nothing | Does::Recurses | Does::Follows) {
            let shown = format!("`{}`", self.command_path(Some(&opt.display())));
            match (opt.does, value) {
                (Does::Runs(why), Some(command)) => {
                    self.starts(
                        format!("{shown} {why}"),
                        at,
                        Runs::Script(command.to_string()),
                    );
                }
                _ => {
                    if let Some(effect) = effect_of(opt.does, &shown, value) {
                        self.add(effect, at);
                    }
                }
            }
        }
        self.given.push(Given {
            opt,
            value,
            value2,
            at,
        });
    }
}

/// The finding an option or subcommand's declared effect makes, if any.
fn effect_of(does: Does, shown: &str, value: Option<&str>) -> Option<Effect> {
    Some(match does {
        Does::Nothing | Does::Recurses | Does::Follows => return None,
        // `-` is standard input or output only where the option says so. An option that
        // reads or writes without a value names its file itself (`file -C` writes
        // `magic.mgc`).
        Does::ReadsOrStdin | Does::WritesOrStdout if value == Some("-") => return None,
        Does::Reads | Does::ReadsOrStdin => match value {
            Some(v) => Effect::Reads(v.to_string()),
            None => Effect::Reads(format!("the file {shown} names")),
        },
        Does::Writes | Does::WritesOrStdout => match value {
            Some(v) => Effect::Writes(v.to_string()),
            None => Effect::Writes(format!("the file {shown} names")),
        },
        Does::Code(why) | Does::Runs(why) => Effect::Code(format!("{shown} {why}")),
        Does::Project(why) => Effect::Project(format!("{shown} {why}")),
        Does::Repo(why) => Effect::Repo(format!("{shown} {why}")),
        Does::Config(why) => Effect::Config(format!("{shown} {why}")),
        Does::Net(why) => Effect::Net(format!("{shown} {why}")),
        Does::Env(why) => Effect::Env(format!("{shown} {why}")),
        Does::Danger(why) => Effect::Danger(format!("{shown} {why}")),
        Does::Unknown => {
            Effect::Unknown(format!("{shown} is an option execgate does not vouch for"))
        }
    })
}
