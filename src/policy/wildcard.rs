//! What a glob's wildcard may cover of a program execgate has no profile for
//! (docs/decisions.md, "Globs over programs execgate does not know"). Without a profile
//! execgate cannot say what a word means to the program, so the wildcard is the owner's,
//! except for words that, whatever the program makes of them, could hand it code to run,
//! a program to start, a secret or the agent's guard: those are left to a human.

use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::paths::{Access, Paths};
use super::risk::{self, Runner};
use super::{parse, programs, shell};

/// Options that hand a program code inline, by their short letter: `-c CODE`, `-e CODE`,
/// `-x CMD`, also glued (`-cid`) and last in a short cluster (`-lc CODE`).
const INLINE_SHORT: &[char] = &['c', 'e', 'x'];

/// Long options that hand a program code, a command or a program to run, and any
/// abbreviation of them (getopt_long takes `--comm` for `--command`).
const INLINE_LONG: &[&str] = &[
    "cmd",
    "code",
    "command",
    "editor",
    "eval",
    "exec",
    "execute",
    "expr",
    "expression",
    "filter",
    "hook",
    "import",
    "interpreter",
    "load",
    "pager",
    "plugin",
    "preload",
    "require",
    "rsh",
    "run",
    "script",
    "shell",
    "wrapper",
];

/// Parts of a long option's name that say it runs something (`--sh-exec`,
/// `--password-command`, `--dhcp-script`, `--pre-hook`).
const INLINE_PARTS: &[&str] = &["exec", "eval", "command", "cmd", "shell", "script", "hook"];

/// Characters a shell acts on: a word holding one is a command line if the program
/// hands it to a shell (tmux and screen do), so the wildcard never covers it.
const SHELL_SYNTAX: &[char] = &[';', '|', '&', '<', '>', '(', ')', '$', '`', '\n', '\\'];

/// Characters that change a word once a shell reads it (quotes, patterns, braces, `~`):
/// in a runner's words, `s''h` and `{sh,}` are `sh` to the shell it hands them to.
const SHELL_QUOTING: &[char] = &['\'', '"', '*', '?', '[', ']', '{', '}', '~'];

/// Extensions of files a program runs as code (`java -jar x.jar`, `guile x.scm`).
const CODE_EXTENSIONS: &[&str] = &[
    "bash", "class", "cjs", "el", "elv", "jar", "jl", "js", "lua", "mjs", "php", "pl", "pm", "ps1",
    "py", "pyc", "r", "rb", "scm", "sh", "so", "tcl", "ts", "war", "zsh",
];

/// System directories searched for a bare word whatever `PATH` says: a program there is
/// on nearly every user's `PATH`.
const SYSTEM_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// Directories under a home that users commonly put on their `PATH`.
const USER_BIN_DIRS: &[&str] = &[
    ".local/bin",
    "bin",
    ".cargo/bin",
    "go/bin",
    ".npm-global/bin",
    ".bun/bin",
    ".deno/bin",
];

/// Where a word is looked up as the shell would: a word with a `/` relative to the
/// request's working directory, a bare word in the `PATH` the command runs with.
pub struct Lookup<'a> {
    pub cwd: Option<&'a Path>,
    /// The `PATH` directories searched for a bare word. In run mode that is the run's
    /// `PATH`; in decide-only mode the agent's is not known, so the daemon's is used,
    /// with the system directories added either way, and the working directory (where
    /// `.` on the agent's `PATH` would find a program).
    dirs: Vec<PathBuf>,
    /// The path policy words are judged by (`None`: by their text alone).
    paths: Option<&'a Paths>,
}

impl<'a> Lookup<'a> {
    /// Words judged by `paths`, where the command runs, by the file each reaches.
    pub fn with_paths(mut self, paths: &'a Paths) -> Lookup<'a> {
        self.paths = Some(paths);
        self
    }

    /// `path`: the `PATH` the command would run with, as best known.
    pub fn new(cwd: Option<&'a Path>, path: &str) -> Lookup<'a> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        let all = path
            .split(':')
            .filter(|d| d.starts_with('/'))
            .chain(SYSTEM_DIRS.iter().copied());
        for dir in all {
            let dir = PathBuf::from(dir);
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        dirs.extend(cwd.map(Path::to_path_buf));
        Lookup {
            cwd,
            dirs,
            paths: None,
        }
    }

    /// Also searches the directories under `home` that users put on their own `PATH`
    /// (`~/.local/bin`, `~/bin`, …): in decide-only mode the agent runs the command with
    /// its own `PATH`, which execgate does not see, and an agent can write its home.
    pub fn with_home(mut self, home: &Path) -> Lookup<'a> {
        for dir in USER_BIN_DIRS {
            let dir = home.join(dir);
            if !self.dirs.contains(&dir) {
                self.dirs.push(dir);
            }
        }
        self
    }

    /// The executable file a bare word names in one of the directories, if any.
    fn on_path(&self, word: &str) -> Option<PathBuf> {
        if word.is_empty() || word == "." || word == ".." {
            return None;
        }
        self.dirs.iter().map(|d| d.join(word)).find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    }
}

/// A word the wildcard must not cover: its index among the command's words, and why.
/// [`WHOLE`] stands for the command as a whole (what its standard input is).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uncovered {
    pub at: usize,
    pub why: String,
}

/// The most words of one command judged: a word that names a program is judged with
/// every word after it, so the work grows with the square of the words.
const MAX_WORDS: usize = 64;

/// The index of an [`Uncovered`] about the whole command: past every rule's written-out
/// words.
pub const WHOLE: usize = usize::MAX;

/// The words of a command whose program has no profile that a glob's wildcard may not
/// cover, each with why. The program word itself is the rule's (it is written out).
/// `piped`: its standard input comes from a pipe.
pub fn uncovered(words: &[String], piped: bool, at: &Lookup<'_>) -> Vec<Uncovered> {
    let mut out = Vec::new();
    let Some(program) = words.first() else {
        return out;
    };
    let kind = risk::runner(program);
    let name = program.rsplit('/').next().unwrap_or(program);
    if piped && matches!(kind, Some(Runner::Code | Runner::Escapes)) {
        out.push(Uncovered {
            at: WHOLE,
            why: format!("`{name}` may read commands from its standard input, a pipe here"),
        });
    }
    if words.len() > MAX_WORDS {
        out.push(Uncovered {
            at: WHOLE,
            why: format!("more than {MAX_WORDS} words to judge"),
        });
        return out;
    }
    let mut options = true;
    for (i, word) in words.iter().enumerate().skip(1) {
        let mut refuse = |why: String| out.push(Uncovered { at: i, why });
        if options && word == "--" {
            options = false;
            continue;
        }
        let option = options && word.starts_with('-') && word.len() > 1;
        if option && let Some(why) = inline_option(word) {
            refuse(why);
            continue;
        }
        if !option && kind == Some(Runner::Code) {
            refuse(format!("`{name}` runs its operands as code"));
            continue;
        }
        // What an option carries after `=` is judged as a word of its own; so is the
        // value of an operand `NAME=VALUE` (`make SHELL=/bin/sh` sets a program).
        let value = match word.split_once('=') {
            Some((_, value)) if option => Some(value),
            // `-agentpath:/tmp/x.so`, `-javaagent:x.jar`: a value glued with `:`.
            None if option => match word.split_once(':') {
                Some((_, value)) if !value.is_empty() => Some(value),
                _ => continue,
            },
            Some((_, value)) if shell::is_assignment(word) => Some(value),
            _ => None,
        };
        let value = value.map(|v| [v.to_string()]);
        // The word with what follows it (the command it starts, if it starts one), or
        // the value alone.
        let judged: &[String] = match &value {
            Some(v) => v,
            None => &words[i..],
        };
        let why = protected_path(&judged[0], at)
            .or_else(|| (!option).then(|| protected_path(word, at)).flatten())
            .or_else(|| program_word(judged, kind, at));
        if let Some(why) = why {
            refuse(why);
        }
    }
    out
}

/// Why `word` hands the program inline code, if it is an option that may.
fn inline_option(word: &str) -> Option<String> {
    if let Some(long) = word.strip_prefix("--") {
        let name = long.split('=').next().unwrap_or(long).to_ascii_lowercase();
        let listed = !name.is_empty() && INLINE_LONG.iter().any(|l| l.starts_with(&name));
        let named = INLINE_PARTS.iter().any(|p| name.contains(p));
        return (listed || named).then(|| format!("`--{name}` may hand it code to run"));
    }
    let cluster = word.strip_prefix('-')?;
    let first = cluster.chars().next()?;
    // `-c CODE`, `-cCODE`; and the last letter of a short cluster (`-lc CODE`).
    let last = cluster.chars().last()?;
    let short_cluster =
        (2..=3).contains(&cluster.len()) && cluster.chars().all(|c| c.is_ascii_alphabetic());
    if INLINE_SHORT.contains(&first) {
        return Some(format!("`-{first}` may hand it code to run"));
    }
    (short_cluster && INLINE_SHORT.contains(&last))
        .then(|| format!("`-{last}` may hand it code to run"))
}

/// Why a word names a path no wildcard covers, by the path policy: what it names may
/// be read or written (execgate cannot tell which without a profile), so anything the
/// policy refuses to a write, judged by the file the word reaches where the command runs.
fn protected_path(word: &str, at: &Lookup<'_>) -> Option<String> {
    let text_alone = Paths::default();
    let (paths, cwd) = match at.paths {
        Some(paths) => (paths, at.cwd),
        None => (&text_alone, None),
    };
    paths
        .refusal(word, Access::Write, cwd)
        .map(|refusal| format!("`{word}` names {}", refusal.what))
}

/// Why a word (or what it names) could be a program the command starts, if it could;
/// `words`: the word and what follows it. `kind`: the command's program is one of the
/// runners.
fn program_word(words: &[String], kind: Option<Runner>, at: &Lookup<'_>) -> Option<String> {
    let word = words.first()?;
    if word.contains(SHELL_SYNTAX) || (kind.is_some() && word.contains(SHELL_QUOTING)) {
        return Some(format!(
            "`{word}` holds shell syntax, a command line if it is handed to a shell"
        ));
    }
    if word.contains(char::is_whitespace) {
        // A command line, if the program hands it to a shell (`tmux new 'rm -rf ~'`):
        // its commands are judged as words that start programs, strictly.
        let analysis = parse::analyse(word);
        if !analysis.plain() {
            return Some(format!("`{word}` is not a plain command line"));
        }
        return analysis
            .commands
            .iter()
            .find_map(|c| starts(&c.words, true, kind, at));
    }
    starts(words, false, kind, at)
}

/// Why `words` (a program and what follows it) could start a program execgate does not
/// let a wildcard start. `strict`: a program found on `PATH` must also be one whose
/// profile finds the words harmless enough for a wildcard (as for a runner).
fn starts(words: &[String], strict: bool, kind: Option<Runner>, at: &Lookup<'_>) -> Option<String> {
    let word = words.first()?;
    if risk::is_wrapper_or_interpreter(word) || risk::runner(word).is_some() {
        return Some(format!(
            "`{word}` names a shell, an interpreter or a program that runs others"
        ));
    }
    if word.contains('/') {
        if kind == Some(Runner::Starts) {
            return Some(format!(
                "`{word}` is a path, which it may start (whatever is there when it runs)"
            ));
        }
        return code_file(word, at.cwd);
    }
    // A bare word names a file in the working directory too: for a runner that starts
    // programs, anything there may be started or read as its commands (`run-parts
    // hooks`, `tmux -f evil.conf`); for any program, a file of code (`x.jar`).
    if kind == Some(Runner::Starts)
        && let Some(cwd) = at.cwd
        && std::fs::symlink_metadata(cwd.join(word)).is_ok()
    {
        return Some(format!(
            "`{word}` names a file here, which it may start or read commands from"
        ));
    }
    if let Some(why) = code_file(word, at.cwd) {
        return Some(why);
    }
    let found = at.on_path(word)?;
    // `/usr/bin/sh` is often `dash`: the file's own name counts too.
    if let Some(real) = std::fs::canonicalize(&found)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        && (risk::is_wrapper_or_interpreter(&real) || risk::runner(&real).is_some())
    {
        return Some(format!(
            "`{word}` is `{}`, a shell, an interpreter or a program that runs others",
            found.display()
        ));
    }
    // A bare word that is also a program is often a subcommand's name (`gh pr`, `brew
    // install`): only a runner, or a command line, is taken to start it.
    if !(strict || kind.is_some()) {
        return None;
    }
    let u = programs::understand(words, false);
    if !u.profiled {
        return Some(format!(
            "`{word}` is a program (`{}`) execgate does not know, which it may start",
            found.display()
        ));
    }
    if super::risk::runs_other_code(words) {
        return Some(format!("`{}` runs other programs", words.join(" ")));
    }
    u.glob_refusal(1, &[])
        .or_else(|| u.dangers().next().map(str::to_string))
        .map(|why| format!("it may start {why}"))
}

/// Why the file a word names could be code, if it could: a file of code by its
/// extension (whether or not it exists yet), or an executable, a script, a compiled
/// program or an archive of code by its mode or first bytes. A word with a `/` is a path
/// relative to the `cwd` (without one, a relative path is not looked at: judged as
/// code); a bare word names a file in the `cwd`, if there is one. What cannot be looked
/// at is judged as code; a special file is never opened.
fn code_file(word: &str, cwd: Option<&Path>) -> Option<String> {
    let by_name = Path::new(word)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| CODE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
    if by_name {
        return Some(format!("`{word}` names a file of code"));
    }
    let path = match cwd {
        _ if word.starts_with('/') => PathBuf::from(word),
        Some(cwd) => cwd.join(word),
        None if word.contains('/') => {
            return Some(format!(
                "`{word}` is a relative path and the request names no working directory"
            ));
        }
        None => return None,
    };
    let meta = match std::fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(format!("`{word}` cannot be looked at ({e})")),
    };
    if meta.is_dir() {
        return None;
    }
    if !meta.is_file() {
        return Some(format!("`{word}` names a special file"));
    }
    if meta.permissions().mode() & 0o111 != 0 {
        return Some(format!("`{word}` names an executable file"));
    }
    let mut head = [0u8; 4];
    let read = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path)
        .and_then(|mut f| {
            if !f.metadata()?.is_file() {
                return Err(std::io::Error::other("not a regular file"));
            }
            let mut n = 0;
            while n < head.len() {
                match f.read(&mut head[n..])? {
                    0 => break,
                    k => n += k,
                }
            }
            Ok(n)
        });
    match read {
        Err(e) => Some(format!("`{word}` cannot be looked at ({e})")),
        Ok(n) => {
            let head = &head[..n];
            let code = head.starts_with(b"#!")
                || head.starts_with(b"\x7fELF")
                || head.starts_with(b"PK\x03\x04")
                || head.starts_with(&[0xca, 0xfe, 0xba, 0xbe]);
            code.then(|| format!("`{word}` names a script or a program"))
        }
    }
}

/// What `allow add` tells the owner of a glob whose wildcard covers the words of
/// `program`, which execgate has no profile for: the wildcard is theirs, and what it
/// still never covers. None for a shell, interpreter or wrapper, which a glob never
/// approves at all.
pub fn warning(program: &str) -> Option<String> {
    if programs::is_profiled(program) || risk::is_wrapper_or_interpreter(program) {
        return None;
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    let mut text =
        format!("execgate does not know what `{name}` does with its words: the wildcard is yours");
    let kind = risk::runner(program);
    if kind.is_some() {
        text.push_str(&format!(
            " (GTFOBins lists `{name}` among the programs that can start a shell or run commands)"
        ));
    }
    let inline: Vec<String> = INLINE_SHORT.iter().map(|c| format!("`-{c}`")).collect();
    text.push_str(&format!(
        ". It still never covers a word that names a shell, an interpreter or a program that runs others (`sh`, `python`, `env`, …), an executable file or script, a secret or an agent's guard settings, an option that may hand it code ({}, `--eval`, `--exec`, `--command` and their kin), shell syntax, or a redirection",
        inline.join(", ")
    ));
    match kind {
        Some(Runner::Code) => text.push_str(&format!(
            "; nor any operand (`{name}` runs its operands as code), nor input from a pipe"
        )),
        Some(Runner::Starts) => text.push_str(&format!(
            "; nor any path (`{name}` may start it), nor a program it finds on PATH unless execgate's profile of it allows the words"
        )),
        Some(Runner::Escapes) => text.push_str(
            "; nor input from a pipe, nor a program it finds on PATH unless execgate's profile of it allows the words"
        ),
        None => {}
    }
    text.push('.');
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(command: &str, cwd: Option<&Path>) -> Vec<Uncovered> {
        let a = parse::analyse(command);
        let c = &a.commands[0];
        uncovered(&c.words, c.piped, &Lookup::new(cwd, "/usr/bin:/bin"))
    }

    #[test]
    fn inline_options_and_their_kin() {
        for word in [
            "-c",
            "-cid",
            "-e",
            "-x",
            "-lc",
            "-ne",
            "--eval",
            "--ev",
            "--command=id",
            "--comm",
            "--exec",
            "--sh-exec",
            "--ssh-cmd",
            "--pre-hook",
            "-exec",
        ] {
            assert!(inline_option(word).is_some(), "{word}");
        }
        for word in [
            "-version",
            "-ls",
            "-dmS",
            "-l",
            "--verbose",
            "--color",
            "-Logfile",
        ] {
            assert_eq!(inline_option(word), None, "{word}");
        }
    }

    #[test]
    fn what_a_wildcard_over_an_unknown_program_leaves_to_a_human() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = Some(dir.path());
        std::fs::write(dir.path().join("run.sh"), "id\n").unwrap();
        std::fs::write(dir.path().join("x"), "#!/bin/sh\nid\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
        for (command, at) in [
            ("tmux new sh", 2),
            ("tmux new-window 'rm -rf /srv'", 2),
            ("tmux new ./anything", 2),
            ("tmux new rm -rf /srv", 2),
            ("screen -dm /bin/sh", 2),
            ("setarch x86_64 bash", 2),
            ("guile -c x", 1),
            ("java Main", 1),
            ("frobnicate ./run.sh", 1),
            ("frobnicate ./x", 1),
            ("frobnicate --in=/home/u/.ssh/id_rsa", 1),
            ("frobnicate .git/hooks/pre-commit", 1),
            ("frobnicate 'a;b'", 1),
            ("frobnicate 'vim x'", 1),
            ("frobnicate python3", 1),
            ("frobnicate SHELL=/bin/sh", 1),
            ("frobnicate --with=/bin/sh", 1),
            ("frobnicate x", 1),
            ("frobnicate build.py", 1),
            ("java -javaagent:agent.jar -version", 1),
            ("tmux new \"s''h\"", 2),
            ("tmux new '{sh,}'", 2),
            ("tmux -f notes.txt", 2),
        ] {
            let found = why(command, cwd);
            assert!(found.iter().any(|u| u.at == at), "{command}: {found:?}");
        }
        let piped = parse::analyse("cat notes.txt | less");
        let less = &piped.commands[1];
        let found = uncovered(&less.words, less.piped, &Lookup::new(cwd, ""));
        assert_eq!(found[0].at, WHOLE, "{found:?}");
        let long = parse::analyse(&format!("tmux{}", " ls".repeat(MAX_WORDS)));
        let found = uncovered(&long.commands[0].words, false, &Lookup::new(cwd, ""));
        assert_eq!(found[0].at, WHOLE, "{found:?}");
        for command in [
            "tmux ls",
            "tmux kill-server",
            "screen -ls",
            "java -version",
            "frobnicate notes.txt",
            "frobnicate ./notes.txt dir/",
            "frobnicate install left-pad",
            "frobnicate list 'a title'",
        ] {
            assert_eq!(why(command, cwd), vec![], "{command}");
        }
    }

    #[test]
    fn a_program_in_the_agents_own_bin_is_found_in_decide_only_mode() {
        let home = tempfile::tempdir().unwrap();
        let bin = home.path().join(".local/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("helper-x"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(bin.join("helper-x"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let a = parse::analyse("tmux new helper-x");
        let words = &a.commands[0].words;
        assert!(uncovered(words, false, &Lookup::new(None, "/usr/bin")).is_empty());
        let agents = Lookup::new(None, "/usr/bin").with_home(home.path());
        assert_eq!(uncovered(words, false, &agents)[0].at, 2);
    }

    #[test]
    fn a_relative_path_without_a_working_directory_is_not_covered() {
        assert!(!why("frobnicate ./x", None).is_empty());
        assert!(why("frobnicate /nonexistent/x", None).is_empty());
    }

    #[test]
    fn the_warning_names_the_program_and_what_stays_refused() {
        let w = warning("screen").unwrap();
        assert!(w.starts_with(
            "execgate does not know what `screen` does with its words: the wildcard is yours"
        ));
        assert!(w.contains("GTFOBins") && w.contains("`-c`") && w.contains("nor any path"));
        assert!(
            warning("frobnicate")
                .unwrap()
                .contains("the wildcard is yours")
        );
        for quiet in ["cat", "git", "sh", "timeout"] {
            assert_eq!(warning(quiet), None, "{quiet}");
        }
    }
}
