//! The notation profiles are written in, one line per option as a program's own `--help`
//! shows it, and its compiled form.
//!
//! ```text
//! "-a, --all"                        short and long, no value
//! "-n, --lines=NUM"                  a required value: attached or the next word
//! "--color[=WHEN]"                   an optional value: only ever attached (`--color=auto`)
//! "-t SEP"                           a short option with a required value
//! "-j[N]"                            a short option with an optional, attached value
//! "-j, --jobs [N]"                   GNU make: attached, or the next word if it is a number
//! "--arg NAME VALUE"                 two values (`jq --arg name value`)
//! "-NUM"                             `-5`: a number in place of an option (`head -5`)
//! "-name PATTERN"                    a long option with one dash (`find`)
//! "-o, --output=FILE  writes"        what it does, after two spaces
//! ```
//!
//! What an option does: nothing (the default: it changes only what is printed), `reads`
//! or `writes` (its value is a path, `-` included: only `reads (- is stdin)` and `writes
//! (- is stdout)` say that `-` is a standard stream), `recurses` (the operands, or the working directory,
//! are read as whole trees), `follows` (it runs until stopped, printing what its input
//! gains or printing again: harmless, and never ends by itself), `code: WHY` (it runs other code), `runs: WHY` (it starts
//! the command its value names, which execgate then judges too), `config: WHY` (it changes
//! configuration or what the program is), `project: WHY` (it runs the project's own
//! code: a Makefile's recipe, a package script), `repo: WHY` (it changes the repository it
//! works on: a commit, a branch, the files it tracks), `net: WHY`, `env: WHY` (it reads the
//! environment), `danger: WHY` (it destroys or discards data), `unknown` (it exists, but
//! execgate does not vouch for it: a human decides).

/// How an option takes its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// None.
    No,
    /// Required: attached (`-n5`, `--lines=5`) or the next word (`-n 5`, `--lines 5`).
    Req,
    /// Optional: only when attached (`--color=always`, `-j4`), never the next word. This
    /// is what GNU getopt_long does, and the class of mistake that reads `uniq --group -
    /// OUT` as a value where the program sees an operand.
    Opt,
    /// GNU make's `-j`/`-l`: attached, or the next word when it starts with a digit.
    OptDigits,
    /// Two words (`jq --arg NAME VALUE`).
    Two,
}

/// What an option (or its value) does, as its profile says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Does {
    Nothing,
    /// Its value is a path read; `-` too is a path (`sort -o-` writes a file named `-`).
    Reads,
    Writes,
    /// Its value is a path read, or standard input when it is `-` (`grep -f -`).
    ReadsOrStdin,
    /// Its value is a path written, or standard output when it is `-` (`curl -o -`).
    WritesOrStdout,
    Recurses,
    /// Runs until it is stopped, printing what its input gains (`tail -f`) or printing
    /// again and again (`free -s 2`): harmless, and endless by design.
    Follows,
    Code(&'static str),
    /// Starts the command its value names (a shell command line, or a program that gets
    /// its arguments from this one): `--to-command=CMD`, `--pre=PROG`. Execgate names what
    /// runs, so the deny list and `policy.allowed_binaries` judge it too.
    Runs(&'static str),
    /// Runs the project's own code (a Makefile's recipe, a package's script, its tests).
    Project(&'static str),
    /// Changes the repository it works on (a commit, a branch, the index, files it tracks).
    Repo(&'static str),
    Config(&'static str),
    Net(&'static str),
    Env(&'static str),
    Danger(&'static str),
    Unknown,
}

/// One name an option answers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Name {
    /// `-x`.
    Short(char),
    /// `--long`, stored without its dashes.
    Long(&'static str),
    /// `-long` (one dash: `find -name`), stored without its dash.
    DashLong(&'static str),
    /// `-5`: any number.
    Number,
}

/// One option, compiled from its line.
#[derive(Clone, Debug)]
pub struct Opt {
    pub names: Vec<Name>,
    /// The name a program's own checks use for it: the line's first long name, else its
    /// short letter (`"regexp"`, `"e"`).
    pub key: &'static str,
    pub arg: Arg,
    pub does: Does,
    /// The options end after this one (and its value): later words are all operands.
    pub ends: bool,
    /// The line it came from, for messages and tests.
    pub line: &'static str,
}

impl Opt {
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// How the option is written, for messages: `--hard`, `-e`.
    pub fn display(&self) -> String {
        match self.names.iter().find(|n| matches!(n, Name::Long(_))) {
            Some(Name::Long(l)) => format!("--{l}"),
            _ => match self.names.first() {
                Some(Name::Short(c)) => format!("-{c}"),
                Some(Name::DashLong(l)) => format!("-{l}"),
                _ => "-NUM".into(),
            },
        }
    }
}

/// Single letters as `&'static str`, so a short-only option has a key without allocating.
fn short_key(c: char) -> &'static str {
    const LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789?@#%+.";
    match LETTERS.find(c) {
        Some(i) => &LETTERS[i..i + c.len_utf8()],
        None => "?",
    }
}

/// Compiles one option line into its options: one, or more when its names take their
/// values differently. A required value (`=V`, or a placeholder word) belongs to every
/// name on the line (`-n, --lines=NUM`); an optional one (`[=V]`, `-x[V]`) only to the
/// name written with it, as GNU `--help` means it (`-F, --classify[=WHEN]`: `-F` takes
/// none). Errors name the line: a profile that does not compile is a bug that a test
/// catches, and at run time the program is treated as unknown.
pub fn compile(line: &'static str) -> Result<Vec<Opt>, String> {
    let (names_part, does_part) = match line.find("  ") {
        Some(i) => (&line[..i], line[i..].trim()),
        None => (line, ""),
    };
    let mut names: Vec<(Name, Option<Arg>)> = Vec::new();
    let mut line_arg: Option<Arg> = None;
    let mut values = 0;
    let mut ends = false;
    for token in names_part.split([' ', ',']).filter(|t| !t.is_empty()) {
        if token == "..." {
            ends = true;
        } else if let Some(rest) = token.strip_prefix("--") {
            let (name, a) = split_value(rest)?;
            if name.is_empty() {
                return Err(format!("{line:?}: empty long option name"));
            }
            names.push((Name::Long(name), explicit(a)));
        } else if token == "-NUM" {
            names.push((Name::Number, None));
        } else if let Some(rest) = token.strip_prefix('-') {
            let mut chars = rest.chars();
            let Some(c) = chars.next() else {
                return Err(format!("{line:?}: a lone `-`"));
            };
            let after = chars.as_str();
            if after.is_empty() {
                names.push((Name::Short(c), None));
            } else if after.starts_with('[') && after.ends_with(']') && !after.contains('=') {
                names.push((Name::Short(c), Some(Arg::Opt)));
            } else if after.starts_with("[=") {
                return Err(format!("{line:?}: write a short optional value as `-x[V]`"));
            } else {
                // A one-dash long name (`-name`, `-files0-from`).
                let (name, a) = split_value(rest)?;
                names.push((Name::DashLong(name), explicit(a)));
            }
        } else if token == "[N]" {
            line_arg = Some(Arg::OptDigits);
        } else if is_placeholder(token) {
            values += 1;
        } else {
            return Err(format!("{line:?}: cannot read {token:?}"));
        }
    }
    if names.is_empty() {
        return Err(format!("{line:?}: no option name"));
    }
    let required = names.iter().any(|(_, a)| *a == Some(Arg::Req));
    let shared = match (values, line_arg, required) {
        (0, None, false) => Arg::No,
        (0, None, true) | (1, None, _) => Arg::Req,
        (2, None, _) => Arg::Two,
        (0, Some(a), false) => a,
        _ => return Err(format!("{line:?}: conflicting value forms")),
    };
    let does = does(line, does_part)?;
    let key = names
        .iter()
        .find_map(|(n, _)| match n {
            Name::Long(l) | Name::DashLong(l) => Some(*l),
            _ => None,
        })
        .unwrap_or_else(|| match names[0].0 {
            Name::Short(c) => short_key(c),
            _ => "NUM",
        });
    let mut opts: Vec<Opt> = Vec::new();
    for (name, explicit) in names {
        let arg = match explicit {
            Some(Arg::Opt) => Arg::Opt,
            _ => shared,
        };
        match opts.iter_mut().find(|o| o.arg == arg) {
            Some(o) => o.names.push(name),
            None => opts.push(Opt {
                names: vec![name],
                arg,
                does,
                ends,
                key,
                line,
            }),
        }
    }
    Ok(opts)
}

/// A value form written on a name, if any.
fn explicit(a: Arg) -> Option<Arg> {
    (a != Arg::No).then_some(a)
}

fn split_value(rest: &'static str) -> Result<(&'static str, Arg), String> {
    if let Some(i) = rest.find("[=") {
        if !rest.ends_with(']') {
            return Err(format!("{rest:?}: unclosed `[=`"));
        }
        return Ok((&rest[..i], Arg::Opt));
    }
    if let Some(i) = rest.find('=') {
        return Ok((&rest[..i], Arg::Req));
    }
    Ok((rest, Arg::No))
}

fn is_placeholder(token: &str) -> bool {
    token
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "_-.:/|[]".contains(c))
        && token.chars().any(|c| c.is_ascii_uppercase())
}

fn does(line: &str, text: &'static str) -> Result<Does, String> {
    let (word, why) = match text.split_once(':') {
        Some((w, why)) => (w.trim(), why.trim()),
        None => (text.trim(), ""),
    };
    let needs_why = |d: fn(&'static str) -> Does| {
        if why.is_empty() {
            Err(format!("{line:?}: `{word}` needs a reason after `:`"))
        } else {
            Ok(d(why))
        }
    };
    match word {
        "" => Ok(Does::Nothing),
        "reads" => Ok(Does::Reads),
        "writes" => Ok(Does::Writes),
        "reads (- is stdin)" => Ok(Does::ReadsOrStdin),
        "writes (- is stdout)" => Ok(Does::WritesOrStdout),
        "recurses" => Ok(Does::Recurses),
        "follows" => Ok(Does::Follows),
        "unknown" => Ok(Does::Unknown),
        "code" => needs_why(Does::Code),
        "runs" => needs_why(Does::Runs),
        "project" => needs_why(Does::Project),
        "repo" => needs_why(Does::Repo),
        "config" => needs_why(Does::Config),
        "net" => needs_why(Does::Net),
        "env" => needs_why(Does::Env),
        "danger" => needs_why(Does::Danger),
        other => Err(format!("{line:?}: unknown effect {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(line: &'static str) -> Arg {
        let opts = compile(line).unwrap();
        assert_eq!(opts.len(), 1, "{line}");
        opts[0].arg
    }

    fn one(line: &'static str) -> Opt {
        compile(line).unwrap().remove(0)
    }

    #[test]
    fn value_forms() {
        assert_eq!(arg("-a, --all"), Arg::No);
        assert_eq!(arg("-n, --lines=NUM"), Arg::Req);
        assert_eq!(arg("--color[=WHEN]"), Arg::Opt);
        assert_eq!(arg("-t SEP"), Arg::Req);
        assert_eq!(arg("-j[N]"), Arg::Opt);
        assert_eq!(arg("-j, --jobs [N]"), Arg::OptDigits);
        assert_eq!(arg("--arg NAME VALUE"), Arg::Two);
        assert_eq!(arg("-name PATTERN"), Arg::Req);
        let o = one("-name PATTERN");
        assert_eq!(o.names, [Name::DashLong("name")]);
    }

    #[test]
    fn an_optional_value_belongs_to_its_own_name() {
        let opts = compile("-F, --classify[=WHEN]").unwrap();
        assert_eq!(opts.len(), 2);
        assert_eq!((opts[0].arg, opts[0].key), (Arg::No, "classify"));
        assert_eq!(opts[0].names, [Name::Short('F')]);
        assert_eq!(opts[1].arg, Arg::Opt);
        let opts = compile("-C NUM, --context[=NUM]").unwrap();
        assert_eq!((opts[0].arg, opts[1].arg), (Arg::Req, Arg::Opt));
        let opts = compile("-I[FMT], --iso-8601[=FMT]").unwrap();
        assert_eq!(opts.len(), 1);
        assert_eq!(opts[0].arg, Arg::Opt);
        let o = one("-m MODULE ...  code: runs MODULE");
        assert!(o.ends && o.arg == Arg::Req);
    }

    #[test]
    fn effects_and_keys() {
        let o = one("-o, --output=FILE  writes");
        assert_eq!(o.does, Does::Writes);
        assert_eq!(o.key(), "output");
        assert_eq!(o.display(), "--output");
        let o = one("--pre=COMMAND  code: runs COMMAND on every file");
        assert_eq!(o.does, Does::Code("runs COMMAND on every file"));
        assert_eq!(one("-e PATTERN").key(), "e");
        assert!(compile("--x  code").is_err(), "a reason is required");
        assert!(compile("--x  frobs").is_err());
        assert!(compile("--x[=V").is_err());
        assert!(compile("lower").is_err());
    }
}
