//! GNU find (findutils 4.9). find does not use getopt: its words are leading options
//! (`-H`, `-L`, `-P`, `-D DEBUGOPTS`, `-OLEVEL`, `--`), then starting points, then an
//! expression of primaries, each taking a fixed number of words (`-name PATTERN`,
//! `-fprintf FILE FORMAT`), or for `-exec` and its kin every word up to a `;` (or a
//! `+` right after a `{}`). So the profile reads every word as an operand and
//! [`find_check`] reads them the way find's own parser does (`parser.c`, `ftsfind.c`):
//!
//! - a starting point is any word before the first one that "looks like an
//!   expression": `-` followed by anything, or exactly `(` or `!` (a leading `)` or `,`
//!   is a file name, as is `-` alone); each is read as a whole tree, and with none find
//!   walks `.`, so find is never harmless by itself;
//! - a primary is looked up after stripping one leading `-` (so `-!` is `!` and
//!   `--help` is `-help`); `-newerXY` is matched by its shape; anything else is refused by
//!   find ("unknown predicate") and by execgate (unknown);
//! - a primary's values are the next words, whatever they look like (`-name -delete`
//!   matches files named `-delete`);
//! - a word that does not look like an expression after the expression has started is
//!   an error to find ("paths must precede expression"): unknown.
//!
//! What the expression does: `-delete` destroys, `-exec`/`-execdir`/`-ok`/`-okdir` run a
//! command on every file found, `-fprint FILE` and its kin write a file (find opens it
//! while parsing, even if the action never runs), `-newer FILE` and its kin read a
//! file's metadata, `-files0-from FILE` takes the starting points from a file (execgate
//! cannot see them: unknown).

use super::profile::{BASE, Effect, Profile, Reading, Role, Runs, Span, Syntax};

pub const PROFILES: &[&Profile] = &[&FIND];

const FIND: Profile = Profile {
    names: &["find"],
    syntax: Syntax::Operands,
    rest: Role::Text,
    check: Some(find_check),
    ..BASE
};

/// What a primary is and how many words it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// No value: a test, option, action or operator that only decides what is printed.
    Flag,
    /// One value that is only matched or computed with (`-name PATTERN`, `-mtime N`).
    Text,
    /// One value: a file whose metadata is read (`-newer FILE`).
    Reads,
    /// One value: a file written (`-fprint FILE`).
    Writes,
    /// Two values: a file written, then a format (`-fprintf FILE FORMAT`).
    WritesFormat,
    /// A command run on every file, up to `;` (or `{} +` when `plus`).
    Exec { plus: bool, how: &'static str },
    /// Deletes what matches.
    Delete,
    /// Starting points read from a file.
    FilesFrom,
    /// Prints help or the version and exits while parsing: nothing is walked.
    Exits,
}

use Kind::*;

/// Every primary of find 4.9, by the name find's parser looks up (one leading `-`
/// stripped).
const PRIMARIES: &[(&str, Kind)] = &[
    // Operators.
    ("(", Flag),
    (")", Flag),
    ("!", Flag),
    (",", Flag),
    ("not", Flag),
    ("a", Flag),
    ("and", Flag),
    ("o", Flag),
    ("or", Flag),
    // Tests.
    ("name", Text),
    ("iname", Text),
    ("path", Text),
    ("ipath", Text),
    ("wholename", Text),
    ("iwholename", Text),
    ("regex", Text),
    ("iregex", Text),
    ("lname", Text),
    ("ilname", Text),
    ("type", Text),
    ("xtype", Text),
    ("user", Text),
    ("group", Text),
    ("uid", Text),
    ("gid", Text),
    ("perm", Text),
    ("size", Text),
    ("mtime", Text),
    ("atime", Text),
    ("ctime", Text),
    ("mmin", Text),
    ("amin", Text),
    ("cmin", Text),
    ("used", Text),
    ("inum", Text),
    ("links", Text),
    ("fstype", Text),
    ("context", Text),
    ("newer", Reads),
    ("anewer", Reads),
    ("cnewer", Reads),
    ("samefile", Reads),
    ("empty", Flag),
    ("executable", Flag),
    ("readable", Flag),
    ("writable", Flag),
    ("nouser", Flag),
    ("nogroup", Flag),
    ("true", Flag),
    ("false", Flag),
    // Options, positional options.
    ("maxdepth", Text),
    ("mindepth", Text),
    ("regextype", Text),
    ("depth", Flag),
    ("d", Flag),
    ("mount", Flag),
    ("xdev", Flag),
    ("noleaf", Flag),
    ("ignore_readdir_race", Flag),
    ("noignore_readdir_race", Flag),
    ("daystart", Flag),
    ("follow", Flag),
    ("warn", Flag),
    ("nowarn", Flag),
    ("files0-from", FilesFrom),
    ("help", Exits),
    ("-help", Exits),
    ("version", Exits),
    ("-version", Exits),
    // Actions.
    ("print", Flag),
    ("print0", Flag),
    ("printf", Text),
    ("ls", Flag),
    ("prune", Flag),
    ("quit", Flag),
    ("delete", Delete),
    ("fprint", Writes),
    ("fprint0", Writes),
    ("fls", Writes),
    ("fprintf", WritesFormat),
    (
        "exec",
        Exec {
            plus: true,
            how: "on every file found",
        },
    ),
    (
        "execdir",
        Exec {
            plus: true,
            how: "in the directory of every file found",
        },
    ),
    (
        "ok",
        Exec {
            plus: false,
            how: "on every file found, after asking on the terminal",
        },
    ),
    (
        "okdir",
        Exec {
            plus: false,
            how: "in the directory of every file found, after asking on the terminal",
        },
    ),
];

/// The primary a word names, as find's `find_parser` finds it.
fn primary(word: &str) -> Option<Kind> {
    // `-newerXY REFERENCE`: X one of `aBcm`, Y one of `aBcm` (a file's time) or `t` (the
    // reference is a date).
    if word.len() == 8
        && let Some(xy) = word.strip_prefix("-newer")
    {
        let b = xy.as_bytes();
        return match (b[0], b[1]) {
            (b'a' | b'B' | b'c' | b'm', b't') => Some(Text),
            (b'a' | b'B' | b'c' | b'm', b'a' | b'B' | b'c' | b'm') => Some(Reads),
            _ => None,
        };
    }
    let name = word.strip_prefix('-').unwrap_or(word);
    PRIMARIES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, kind)| kind)
}

/// find's `looks_like_expression`: `-` followed by anything, `(` and `!`; in the
/// expression also `)` and `,` (which are file names among the starting points).
fn looks_like_expression(word: &str, leading: bool) -> bool {
    match word.as_bytes() {
        [b'-', _, ..] | [b'(' | b'!'] => true,
        [b')' | b','] => !leading,
        _ => false,
    }
}

/// Where find's leading options end: `-H`, `-L`, `-P`, `-D DEBUGOPTS`, `-OLEVEL`, each a
/// word of its own, up to `--` or the first other word. None when find refuses them.
fn leading_options(r: &mut Reading<'_>) -> Option<usize> {
    let mut i = 1;
    while let Some(w) = r.words.get(i) {
        match w.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "--" => return Some(i + 1),
            "-D" => {
                if r.words.get(i + 1).is_none() {
                    r.unknown(i, "`-D` needs a value".into());
                    return None;
                }
                i += 2;
            }
            _ if w.starts_with("-O") => {
                let level = &w[2..];
                if level.is_empty() || !level.bytes().all(|b| b.is_ascii_digit()) {
                    r.unknown(
                        i,
                        format!("`{w}`: find needs a number right after `-O`, and refuses this"),
                    );
                    return None;
                }
                i += 1;
            }
            _ => return Some(i),
        }
    }
    Some(i)
}

/// Reads find's words: its leading options, starting points and expression.
fn find_check(r: &mut Reading<'_>) {
    // Every word is read here; the generic reader's operands are nothing more.
    r.set_roles(&[], Role::Text);
    let Some(mut i) = leading_options(r) else {
        r.stopped = true;
        return;
    };
    let mut starts: Vec<usize> = Vec::new();
    while i < r.words.len() && !looks_like_expression(&r.words[i], true) {
        starts.push(i);
        i += 1;
    }
    let mut exits = false;
    while i < r.words.len() {
        let w = r.words[i].as_str();
        if !looks_like_expression(w, false) {
            r.unknown(
                i,
                format!(
                    "`{w}`: find takes no starting point once the expression has begun (it refuses the command)"
                ),
            );
            r.stopped = true;
            break;
        }
        let Some(kind) = primary(w) else {
            r.unknown(i, format!("`{w}` is not a `find` primary execgate knows"));
            r.stopped = true;
            break;
        };
        let needs = match kind {
            Text | Reads | Writes | FilesFrom => 1,
            WritesFormat => 2,
            _ => 0,
        };
        if i + needs >= r.words.len() {
            r.unknown(i, format!("`{w}` needs a value"));
            r.stopped = true;
            break;
        }
        let at = Span {
            first: i,
            last: i + needs,
        };
        let value = r.words.get(i + 1).cloned().unwrap_or_default();
        match kind {
            Flag | Text => {}
            Reads => r.add(Effect::Reads(value), at),
            Writes | WritesFormat => {
                // find writes to its own standard output or error for these two names.
                if !matches!(value.as_str(), "/dev/stdout" | "/dev/stderr") {
                    r.add(Effect::Writes(value), at);
                }
            }
            Delete => r.add(
                Effect::Danger(format!(
                    "`{w}` deletes every file and directory the expression matches"
                )),
                at,
            ),
            FilesFrom => r.unknown(
                i,
                format!("`{w} {value}` takes the starting points from a file execgate cannot see"),
            ),
            Exits => exits = true,
            Exec { plus, how } => match exec_end(r.words, i + 1, plus) {
                Some(end) => {
                    let words: Vec<String> = r.words[i + 1..end].to_vec();
                    let command = words.join(" ");
                    r.starts(
                        format!("`{w}` runs `{command}` {how}"),
                        Span {
                            first: i,
                            last: end,
                        },
                        Runs::Words(words),
                    );
                    i = end + 1;
                    continue;
                }
                None => {
                    // Every later word may be the command's: judged as one.
                    let words: Vec<String> = r.words[i + 1..].to_vec();
                    let command = words.join(" ");
                    let ends = if plus { "`;` (or `{} +`)" } else { "`;`" };
                    let at = r.to_end(i);
                    r.starts(
                        format!("`{w}` runs `{command}` {how}"),
                        at,
                        Runs::Words(words),
                    );
                    r.unknown(
                        i,
                        format!(
                            "`{w}` has no command ended by {ends}: find refuses it, and execgate cannot tell where the command ends"
                        ),
                    );
                    r.stopped = true;
                    break;
                }
            },
        }
        i += 1 + needs;
    }
    if exits {
        // `-help` or `-version`: find prints and exits while parsing, walking nothing.
        return;
    }
    if starts.is_empty() {
        r.add(Effect::ReadsTree(".".into()), Span::one(0));
    }
    for at in starts {
        let start = r.words[at].clone();
        r.add(Effect::ReadsTree(start), Span::one(at));
    }
}

/// The index of the word that ends `-exec`'s command begun at `start`: the first `;`, or
/// (for `-exec` and `-execdir`) a `+` right after a word holding `{}`. None when there is
/// none or the command is empty (find refuses both).
fn exec_end(words: &[String], start: usize, plus: bool) -> Option<usize> {
    let mut braces = false;
    for (end, w) in words.iter().enumerate().skip(start) {
        if w == ";" || (plus && w == "+" && braces) {
            return (end > start).then_some(end);
        }
        braces = w.contains("{}");
    }
    None
}

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::Effect;
    use super::super::testing::{Table, read, said};

    /// Plain searches: understood, never harmless, for `find *`.
    const SEARCHES: &[&str] = &[
        "find",
        "find .",
        "find . -name '*.rs'",
        "find src tests -type f -name '*.rs' -newer Cargo.toml",
        "find -L . -maxdepth 2 -type d -print0",
        "find . -path ./target -prune -o -name '*.toml' -print",
        "find . ( -name a -o -name b ) -printf '%p %s\\n'",
        "find . ! -name '*.o' -not -empty -mtime -7",
        "find . -name -delete",
        "find -H -D tree -O3 -- src -iname x -ls",
        "find . -size +1M -perm -u+x -user root -regextype posix-extended -regex '.*x'",
        "find . -newermt 2024-01-01 -fprint /dev/stdout",
        "find ) ,",
    ];

    /// find that walks nothing: harmless.
    const HARMLESS: &[&str] = &[
        "find --help",
        "find -help",
        "find -version",
        "find --version",
    ];

    /// Refused under `find *`.
    const REFUSED: &[&str] = &[
        "find . -delete",
        "find . -exec rm {} ;",
        "find . -fprint out",
        "find . -fprintf out %p",
    ];

    /// What find refuses, or execgate cannot follow, and a phrase the reasons must contain.
    const NOT_UNDERSTOOD: &[(&str, &str)] = &[
        (
            "find . -frobnicate",
            "`-frobnicate` is not a `find` primary",
        ),
        ("find . --name x", "`--name` is not a `find` primary"),
        ("find -HL .", "`-HL` is not a `find` primary"),
        ("find -Dtree .", "`-Dtree` is not"),
        ("find -O .", "needs a number right after `-O`"),
        ("find -D", "`-D` needs a value"),
        ("find . -name", "`-name` needs a value"),
        ("find . -fprintf out", "`-fprintf` needs a value"),
        ("find . -name a x", "`x`: find takes no starting point"),
        ("find . -print -", "`-`: find takes no starting point"),
        ("find . -newerXa y", "`-newerXa` is not"),
        ("find . -newertm y", "`-newertm` is not"),
        ("find . ---noop", "is not a `find` primary"),
        (
            "find -files0-from list",
            "takes the starting points from a file",
        ),
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] =
        &[&SEARCHES, &HARMLESS, &REFUSED, &NOT_UNDERSTOOD];

    fn has(command: &str, pick: fn(&Effect) -> bool) -> bool {
        read(command).findings.iter().any(|f| pick(&f.effect))
    }

    #[test]
    fn find_is_never_harmless_but_a_glob_covers_plain_searches() {
        for &c in SEARCHES {
            let u = read(c);
            assert!(u.understood(), "{c:?}: {:?}", u.findings);
            assert!(!u.harmless(), "{c:?} walks a tree");
            assert_eq!(u.glob_refusal(1, &[]), None, "{c:?} is for `find *`");
        }
        let s = said("find");
        assert_eq!(s, "reads everything under `.`");
        let s = said("find src tests -name x");
        assert_eq!(
            s,
            "reads everything under `src` | reads everything under `tests`"
        );
        // Starting points: `-` alone, a leading `)` or `,` are file names.
        assert!(said("find - ) , -name x").contains("under `-` | reads everything under `)`"));
    }

    #[test]
    fn help_and_version_walk_nothing() {
        for &c in HARMLESS {
            assert!(read(c).harmless(), "{c:?}: {}", said(c));
        }
    }

    #[test]
    fn find_secrets_and_metadata() {
        let u = read("find ~/.ssh -name 'id_*'");
        assert_eq!(
            u.glob_refusal(1, &[]).as_deref(),
            Some("find: reads secrets under `~/.ssh`")
        );
        assert!(said("find . -newer ~/.aws/credentials").contains("reads a secret"));
        assert!(said("find . -samefile x -anewer y").contains("reads `x` | reads `y`"));
        assert!(said("find . -newerma ref").contains("reads `ref`"));
    }

    #[test]
    fn find_runs_writes_and_deletes() {
        let s = said("find . -exec echo {} + -exec cat /home/u/.ssh/id_rsa +");
        assert!(
            s.contains("`-exec` runs `echo {}` on every file found"),
            "{s}"
        );
        assert!(
            s.contains("`-exec` runs `cat /home/u/.ssh/id_rsa +` on every file found"),
            "{s}"
        );
        assert!(s.contains("no command ended by `;` (or `{} +`)"), "{s}");
        let s = said("find . -exec echo {} ; -exec cat {} +");
        assert_eq!(
            s,
            "`-exec` runs `echo {}` on every file found | `-exec` runs `cat {}` on every file found | reads everything under `.`"
        );
        // `+` ends the command only right after `{}`; `-ok` takes `;` only.
        assert!(said("find . -exec echo {} x + ;").contains("runs `echo {} x +`"));
        assert!(said("find -ok rm {} +").contains("no command ended by `;`:"));
        assert!(said("find . -execdir make {} ;").contains("in the directory of every file"));
        assert!(said("find . -okdir rm {} ;").contains("after asking on the terminal"));
        assert!(said("find . -exec ;").contains("no command"));
        assert!(said("find . -exec").contains("no command"));
        let s = said("find . -name x -fprint /etc/passwd");
        assert!(s.contains("writes `/etc/passwd`"), "{s}");
        assert!(
            said("find . -fprintf out '%p' -fls l -fprint0 z")
                .contains("writes `out` | writes `l` | writes `z`")
        );
        assert_eq!(
            said("find . -name '*.tmp' -delete"),
            "`-delete` deletes every file and directory the expression matches | reads everything under `.`"
        );
        for &c in REFUSED {
            assert!(read(c).glob_refusal(1, &[]).is_some(), "{c:?}");
        }
        assert!(has("find . -delete", |e| matches!(e, Effect::Danger(_))));
        assert!(has("find . -exec ls ;", |e| matches!(e, Effect::Code(_))));
    }

    #[test]
    fn find_refuses_what_find_refuses() {
        for &(c, what) in NOT_UNDERSTOOD {
            let u = read(c);
            assert!(!u.understood(), "{c:?}");
            let s = said(c);
            assert!(s.contains(what), "{c:?}: expected {what:?} in {s:?}");
            assert!(u.glob_refusal(1, &[]).is_some(), "{c:?}");
        }
        // One dash is stripped, as find's parser does: `-!` is `!`.
        assert!(read("find . -! -name x -( -true -)").understood());
    }
}
