//! `docs/profiles.md`, written from the profiles themselves: for every known program,
//! how it reads its options and what each option and operand does. A test keeps the file
//! equal to what this renders, so the document is the data.

use std::fmt::Write;

use super::profile::{Config, Judge, Place, Profile, Role, Syntax};
use super::spec::{self, Does, Name, Opt};

/// The whole document.
pub fn render(mut profiles: Vec<&'static Profile>) -> String {
    let mut out = String::new();
    out.push_str(HEADER);
    profiles.sort_by_key(|p| p.names[0]);
    out.push_str("## Programs\n\n");
    let names: Vec<String> = profiles
        .iter()
        .map(|p| format!("`{}`", p.names[0]))
        .collect();
    let _ = writeln!(out, "{}\n", names.join(", "));
    for p in profiles {
        program(&mut out, p, &[], 3);
    }
    out
}

const HEADER: &str = "# What execgate knows about each program

This file is generated from execgate's program profiles (`src/policy/programs/`) by
`cargo test --lib profiles_doc` (set `EXECGATE_BLESS=1` to rewrite it); do not edit it by
hand.

A command is approved without a human only when every word of it is accounted for here,
read as the program itself reads it (README, \"How a request is decided\"). For each
program: how it reads options, every option execgate knows and what it does, and what its
operands are. An option not listed is unknown: a human decides. So is an abbreviation of a
listed long option (the program would accept it; execgate names the option it stands for,
and calls it dangerous if that one is). Options marked **harmless** change only what is
printed: step 8 may approve them, and a glob's wildcard may cover them. The marks:

- **reads** / **writes**: the option's value is a path read or written; `-` too is a path
  (`sort -o-` writes a file named `-`) unless the mark says it is standard input or
  output;
- **recurses**: the operands (or the working directory) are read as whole trees;
- **follows**: it runs until stopped, printing what its input gains (`tail -f`) or
  printing again and again (`free -s 2`): harmless, and it never ends by itself;
- **runs code**: it runs other code, so only a rule that names it approves it;
- **runs a command it names**: it starts the command its value names, which the deny list
  and `policy.allowed_binaries` judge as a command of its own;
- **runs the project's code**: a Makefile's recipes, a package's scripts, its tests (a glob
  the owner wrote may cover it; step 8 never does);
- **changes the repository**: a commit, a branch, the index (the same);
- **network**: it reaches the network (the same);
- **changes configuration** or what the program is, **environment** (prints what may be a
  secret), **danger** (destroys or discards data: never approved by a glob), **unknown**
  (it exists; execgate does not vouch for it).

Many programs also have rules that span several words (a check): they are described in
the profile's source. Some read a language of their own with a reader that follows the
program's grammar (a sed script, an awk program, a jq filter, a find expression: see
\"Embedded languages\" in docs/decisions.md); a script one of them cannot follow exactly
is unknown.

";

fn syntax(s: Syntax) -> &'static str {
    match s {
        Syntax::Gnu => {
            "GNU `getopt_long`: clustered short options, `--long=value` or `--long value`, options anywhere until `--`; optional values only attached"
        }
        Syntax::GnuInOrder => "`getopt_long` in POSIX order: the first operand ends the options",
        Syntax::Git => "git's parse-options: like `getopt_long` (abbreviations accepted by git)",
        Syntax::Exact => "exact words only: no clustering, no abbreviations",
        Syntax::Clap => {
            "clustered short options, exact long options (no abbreviations), options anywhere"
        }
        Syntax::Npm => {
            "npm's parser: exact names; any other `--name=value` is a configuration setting"
        }
        Syntax::Operands => {
            "no options: every word is an operand (the program's own rules read them)"
        }
    }
}

/// A line `- WHAT: a, b.`, unless there is nothing to list.
fn listed(out: &mut String, what: &str, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    if !items.is_empty() {
        let _ = writeln!(out, "- {what}: {}.", items.join(", "));
    }
}

fn mark(d: Does) -> String {
    match d {
        Does::Nothing => "harmless".into(),
        Does::Reads => "reads".into(),
        Does::Writes => "writes".into(),
        Does::ReadsOrStdin => "reads (`-`: standard input)".into(),
        Does::WritesOrStdout => "writes (`-`: standard output)".into(),
        Does::Recurses => "recurses".into(),
        Does::Follows => "harmless, runs until stopped".into(),
        Does::Code(w) => format!("runs code: {w}"),
        Does::Runs(w) => format!("runs a command it names: {w}"),
        Does::Project(w) => format!("runs the project's code: {w}"),
        Does::Repo(w) => format!("changes the repository: {w}"),
        Does::Config(w) => format!("changes configuration: {w}"),
        Does::Net(w) => format!("network: {w}"),
        Does::Env(w) => format!("environment: {w}"),
        Does::Danger(w) => format!("**danger**: {w}"),
        Does::Unknown => "unknown".into(),
    }
}

fn role(r: Role) -> String {
    match r {
        Role::Text => "text".into(),
        Role::Name => "a name (a path is read)".into(),
        Role::Read => "a path read".into(),
        Role::Input => "a path read (`-`: standard input)".into(),
        Role::Output => "a path written (`-`: standard output)".into(),
        Role::Write => "a path written".into(),
        Role::Tree => "a directory read as a whole tree".into(),
        Role::Revision => "a revision, or a path in the repository".into(),
        Role::Code(w) => format!("code run ({w})"),
        Role::Runs(w) => format!("a command started, with its arguments ({w})"),
        Role::RunsScript(w) => format!("a shell command started ({w})"),
        Role::Project(w) => format!("the project's code ({w})"),
        Role::Repo(w) => format!("changes the repository ({w})"),
        Role::Passthrough => "handed on to other code".into(),
        Role::Config(w) => format!("configuration ({w})"),
        Role::Danger(w) => format!("**danger** ({w})"),
        Role::Nothing => "none".into(),
    }
}

fn names(o: &Opt) -> String {
    let value = match o.arg {
        spec::Arg::No => "",
        spec::Arg::Req => " V",
        spec::Arg::Opt => "[=V]",
        spec::Arg::OptDigits => " [N]",
        spec::Arg::Two => " V1 V2",
    };
    let all: Vec<String> = o
        .names
        .iter()
        .map(|n| match n {
            Name::Short(c) => format!("-{c}"),
            Name::Long(l) => format!("--{l}"),
            Name::DashLong(l) => format!("-{l}"),
            Name::Number => "-NUM".into(),
        })
        .collect();
    format!("`{}{value}`", all.join(", "))
}

/// The configuration a program reads, and how execgate treats it (the configuration
/// gate: docs/decisions.md, "Configuration gates").
fn config(out: &mut String, c: &Config) {
    if c.files.is_empty() {
        let _ = writeln!(
            out,
            "- Configuration: no file an agent writes; environment: {} (the agent's own in decide-only mode; a run gets execgate's minimal environment).",
            c.env
        );
        return;
    }
    let _ = writeln!(
        out,
        "- Configuration it reads, judged before any approval without a human:"
    );
    // Files judged alike are one line: (where, what is judged) → names.
    let mut lines: Vec<(String, Vec<String>)> = Vec::new();
    for f in c.files {
        let list = |keys: &[&str]| {
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let judged = match f.judge {
            Judge::Exists => "asked about whenever it is there".to_string(),
            Judge::NpmIni(keys) | Judge::PythonIni(keys) | Judge::Toml(keys) => {
                format!("asked about unless every key is one of {}", list(keys))
            }
            Judge::YamlTop(keys) | Judge::JsonTop(keys) => format!(
                "asked about unless every top-level key is one of {}",
                list(keys)
            ),
            Judge::YamlRefuses(keys) => format!("asked about if any key is {}", list(keys)),
            Judge::DotenvRefuses(keys) => format!("asked about if it sets any of {}", list(keys)),
        };
        let place = match f.place {
            Place::Up => " in the working directory and every directory above it",
            Place::Home => " in the home directory",
        };
        let run = if f.neutralised {
            "; in run mode not read (see below)"
        } else {
            ""
        };
        let rest = format!("{place}: {}; {judged}{run}.", f.why);
        let name = format!("`{}`", f.name);
        match lines.iter_mut().find(|(r, _)| *r == rest) {
            Some((_, names)) => names.push(name),
            None => lines.push((rest, vec![name])),
        }
    }
    for (rest, names) in lines {
        let _ = writeln!(out, "  - {}{rest}", names.join(", "));
    }
    let _ = writeln!(
        out,
        "  - Environment: {} (the agent's own in decide-only mode; a run gets execgate's minimal environment).",
        c.env
    );
    for (k, v, why) in c.run_env {
        let _ = writeln!(out, "  - Every run gets `{k}={v}`: {why}.");
    }
}

fn program(out: &mut String, p: &Profile, path: &[&str], depth: usize) {
    let title: Vec<String> = p.names.iter().map(|n| format!("`{n}`")).collect();
    let heading = if path.is_empty() {
        title.join(", ")
    } else {
        format!("`{}` {}", path.join(" "), title.join(", "))
    };
    let _ = writeln!(out, "{} {heading}\n", "#".repeat(depth.min(6)));
    let _ = writeln!(out, "- Options: {}.", syntax(p.syntax));
    if p.does != Does::Nothing {
        let _ = writeln!(out, "- Running it: {}.", mark(p.does));
    }
    // What it does as part of being what it is, whatever its words.
    listed(
        out,
        "Starts, as part of what it is (not judged as a command)",
        p.helpers.iter().map(|h| format!("`{h}`")),
    );
    listed(
        out,
        "Keeps for itself on every run, whatever its words",
        p.keeps.iter().map(|k| format!("`~/{k}`")),
    );
    if let Some(why) = p.phones_home {
        let _ = writeln!(
            out,
            "- Asks the network by itself, whatever its words: {why}."
        );
    }
    listed(
        out,
        "Asks its service, through its local socket",
        p.sockets.iter().map(|s| format!("`{s}`")),
    );
    let mut harmless = Vec::new();
    let mut marked = Vec::new();
    for line in p.options {
        match spec::compile(line) {
            Ok(opts) => {
                for o in opts {
                    match o.does {
                        Does::Nothing => harmless.push(names(&o)),
                        d => marked.push(format!("{} ({})", names(&o), mark(d))),
                    }
                }
            }
            Err(e) => marked.push(format!("(does not compile: {e})")),
        }
    }
    if !harmless.is_empty() {
        let _ = writeln!(out, "- Harmless: {}.", harmless.join(", "));
    }
    if !marked.is_empty() {
        let _ = writeln!(out, "- Other options: {}.", marked.join("; "));
    }
    if !p.operands.is_empty() || p.rest != Role::Nothing {
        let mut parts: Vec<String> = p
            .operands
            .iter()
            .enumerate()
            .map(|(i, r)| format!("{}: {}", i + 1, role(*r)))
            .collect();
        if p.rest != Role::Nothing {
            parts.push(format!("then each: {}", role(p.rest)));
        }
        let _ = writeln!(out, "- Operands: {}.", parts.join("; "));
    } else if p.subcommands.is_empty() {
        let _ = writeln!(out, "- Operands: none.");
    }
    if p.check.is_some() {
        let _ = writeln!(out, "- Has rules spanning several words (see its source).");
    }
    if p.old_style {
        let _ = writeln!(
            out,
            "- Reads an old-style first word as bundled options (`tar xzf a.tgz`)."
        );
    }
    if p.decides_code {
        let _ = writeln!(
            out,
            "- Its profile accounts for the code it runs, so a rule that names the code approves it."
        );
    }
    if p.inherit {
        let _ = writeln!(out, "- Its parent's options stay valid here.");
    }
    if let Some(c) = p.config {
        config(out, c);
    }
    out.push('\n');
    if !p.subcommands.is_empty() {
        let subs: Vec<String> = p
            .subcommands
            .iter()
            .map(|s| format!("`{}`", s.names[0]))
            .collect();
        let _ = writeln!(
            out,
            "Subcommands (any other is unknown): {}.\n",
            subs.join(", ")
        );
        let mut here: Vec<&str> = path.to_vec();
        here.push(p.names[0]);
        for s in p.subcommands {
            program(out, s, &here, depth + 1);
        }
    }
}

#[cfg(test)]
mod tests {
    /// `docs/profiles.md` is what the profiles say: regenerate it with
    /// `EXECGATE_BLESS=1 cargo test --lib profiles_doc` after changing a profile.
    #[test]
    fn profiles_doc_is_up_to_date() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/profiles.md");
        let want = super::super::docs();
        if std::env::var_os("EXECGATE_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/profiles.md is out of date with the program profiles: run `EXECGATE_BLESS=1 cargo test --lib profiles_doc` and commit it"
        );
    }
}
