//! The text tools: `grep`, `rg`, `sed`, `awk` and `jq`. Each takes a program or pattern
//! as its first operand, so each has a check that finds it, and for `sed`, `awk` and
//! `jq`, reads it: a sed script can write (`w`), read (`r`) and run (`e`) files, an awk
//! program can run commands and write files, a jq filter can read the environment.

use super::profile::Role::{Read, Text};
use super::profile::{BASE, Effect, Profile, Reading, Role, Span, Syntax};

pub const PROFILES: &[&Profile] = &[&GREP, &RG, &SED, &AWK, &JQ];

/// GNU grep 3.8.
const GREP: Profile = Profile {
    names: &["grep", "egrep", "fgrep"],
    options: &[
        "-E, --extended-regexp",
        "-F, --fixed-strings",
        "-G, --basic-regexp",
        "-P, --perl-regexp",
        "-e, --regexp=PATTERNS",
        "-f, --file=FILE  reads",
        "-i, -y, --ignore-case",
        "--no-ignore-case",
        "-w, --word-regexp",
        "-x, --line-regexp",
        "-z, --null-data",
        "-s, --no-messages",
        "-v, --invert-match",
        "-V",
        "-m, --max-count=NUM",
        "-b, --byte-offset",
        "-n, --line-number",
        "--line-buffered",
        "-H, --with-filename",
        "-h, --no-filename",
        "--label=LABEL",
        "-o, --only-matching",
        "-q, --quiet, --silent",
        "--binary-files=TYPE",
        "-a, --text",
        "-I",
        "-d, --directories=ACTION",
        "-D, --devices=ACTION",
        "-r, --recursive  recurses",
        "-R, --dereference-recursive  recurses",
        "--include=GLOB",
        "--exclude=GLOB",
        "--exclude-from=FILE  reads",
        "--exclude-dir=GLOB",
        "-L, --files-without-match",
        "-l, --files-with-matches",
        "-c, --count",
        "-T, --initial-tab",
        "-Z, --null",
        "-B, --before-context=NUM",
        "-A, --after-context=NUM",
        "-C, --context=NUM",
        "-NUM",
        "--group-separator=SEP",
        "--no-group-separator",
        "--color[=WHEN], --colour[=WHEN]",
        "-U, --binary",
    ],
    rest: Read,
    check: Some(grep_check),
    ..BASE
};

/// The pattern is the first operand unless `-e` or `-f` gave it; `-d recurse` recurses.
fn grep_check(r: &mut Reading<'_>) {
    if r.has("regexp") || r.has("file") {
        r.set_roles(&[], Read);
    } else {
        r.set_roles(&[Text], Read);
    }
    if let Some(g) = r.given_of("directories")
        && g.value == Some("recurse")
    {
        let at = g.at;
        let files: Vec<String> = r
            .operands
            .iter()
            .skip(usize::from(!(r.has("regexp") || r.has("file"))))
            .map(|(_, w)| w.to_string())
            .collect();
        if files.is_empty() {
            r.add(Effect::ReadsTree(".".into()), at);
        }
        for f in files {
            r.add(Effect::ReadsTree(f), at);
        }
    }
}

/// ripgrep 14. It searches the working directory, recursively, when given no path and
/// its standard input is not a pipe.
const RG: Profile = Profile {
    names: &["rg"],
    syntax: Syntax::Clap,
    options: &[
        "-e, --regexp=PATTERN",
        "-f, --file=PATTERNFILE  reads",
        "--pre=COMMAND  code: runs COMMAND on every file searched",
        "--pre-glob=GLOB",
        "-z, --search-zip  code: runs decompression programs on compressed files",
        "--no-search-zip",
        "-E, --encoding=ENCODING",
        "--engine=ENGINE",
        "-F, --fixed-strings",
        "--no-fixed-strings",
        "-i, --ignore-case",
        "-S, --smart-case",
        "-s, --case-sensitive",
        "-v, --invert-match",
        "-w, --word-regexp",
        "-x, --line-regexp",
        "-U, --multiline",
        "--no-multiline",
        "--multiline-dotall",
        "-P, --pcre2",
        "--no-pcre2",
        "--auto-hybrid-regex",
        "--crlf",
        "--null-data",
        "--no-unicode",
        "--mmap",
        "--no-mmap",
        "--stop-on-nonmatch",
        "-m, --max-count=NUM",
        "-j, --threads=NUM",
        "-g, --glob=GLOB",
        "--iglob=GLOB",
        "--glob-case-insensitive",
        "-., --hidden",
        "--no-hidden",
        "--ignore-file=PATH  reads",
        "--ignore-file-case-insensitive",
        "-d, --max-depth=NUM",
        "--max-filesize=NUM",
        "--no-ignore",
        "--no-ignore-dot",
        "--no-ignore-exclude",
        "--no-ignore-files",
        "--no-ignore-global",
        "--no-ignore-parent",
        "--no-ignore-vcs",
        "--no-require-git",
        "--one-file-system",
        "-t, --type=TYPE",
        "-T, --type-not=TYPE",
        "--type-add=TYPESPEC",
        "--type-clear=TYPE",
        "-u, --unrestricted",
        "-L, --follow",
        "--no-follow",
        "--binary",
        "-a, --text",
        "--no-text",
        "-A, --after-context=NUM",
        "-B, --before-context=NUM",
        "-C, --context=NUM",
        "--block-buffered",
        "--line-buffered",
        "-b, --byte-offset",
        "--color=WHEN",
        "--colors=SPEC",
        "--column",
        "--no-column",
        "--context-separator=SEP",
        "--no-context-separator",
        "--field-context-separator=SEP",
        "--field-match-separator=SEP",
        "--heading",
        "--no-heading",
        "-H, --with-filename",
        "-I, --no-filename",
        "--hostname-bin=COMMAND  code: runs COMMAND to find the host name",
        "--hyperlink-format=FORMAT",
        "--include-zero",
        "-n, --line-number",
        "-N, --no-line-number",
        "-M, --max-columns=NUM",
        "--max-columns-preview",
        "-0, --null",
        "-o, --only-matching",
        "--path-separator=SEP",
        "--passthru",
        "-p, --pretty",
        "-q, --quiet",
        "-r, --replace=REPLACEMENT",
        "--sort=SORTBY",
        "--sortr=SORTBY",
        "--trim",
        "--no-trim",
        "--vimgrep",
        "--json",
        "--no-json",
        "-c, --count",
        "--count-matches",
        "-l, --files-with-matches",
        "--files-without-match",
        "--stats",
        "--debug",
        "--trace",
        "--files",
        "--type-list",
        "--no-config",
        "--no-messages",
        "--no-ignore-messages",
        "-h",
        "-V",
    ],
    rest: Role::Tree,
    check: Some(rg_check),
    ..BASE
};

fn rg_check(r: &mut Reading<'_>) {
    let pattern_given = r.has("regexp") || r.has("file") || r.has("files") || r.has("type-list");
    if pattern_given {
        r.set_roles(&[], Role::Tree);
    } else {
        r.set_roles(&[Text], Role::Tree);
    }
    let paths = r.operands.len().saturating_sub(usize::from(!pattern_given));
    let listing_only = r.has("type-list") || r.has("help") || r.has("version") || r.has("h");
    if paths == 0 && !r.piped && !listing_only && !r.stopped {
        r.add(Effect::ReadsTree(".".into()), Span::one(0));
    }
}

/// GNU sed 4.9.
const SED: Profile = Profile {
    names: &["sed", "gsed"],
    options: &[
        "-n, --quiet, --silent",
        "--debug",
        "-e, --expression=SCRIPT",
        "-f, --file=SCRIPT_FILE  code: runs the sed script in that file",
        "--follow-symlinks",
        "-i[SUFFIX], --in-place[=SUFFIX]",
        "-l, --line-length=N",
        "--posix",
        "-E, -r, --regexp-extended",
        "-s, --separate",
        "--sandbox",
        "-u, --unbuffered",
        "-z, --null-data",
    ],
    rest: Read,
    check: Some(sed_check),
    ..BASE
};

fn sed_check(r: &mut Reading<'_>) {
    let explicit = r.has("expression") || r.has("file");
    let mut scripts: Vec<(&str, Span)> = r
        .given
        .iter()
        .filter(|g| g.opt.key() == "expression")
        .filter_map(|g| g.value.map(|v| (v, g.at)))
        .collect();
    if !explicit && let Some(&(i, w)) = r.operands.first() {
        scripts.push((w, Span::one(i)));
    }
    let in_place = r.has("in-place");
    let file_role = if in_place { Role::Write } else { Read };
    if explicit {
        r.set_roles(&[], file_role);
    } else if in_place {
        r.set_roles(&[Text], Role::Write);
    } else {
        r.set_roles(&[Text], Read);
    }
    // With `--sandbox`, sed itself refuses `e`, `r` and `w`.
    let sandbox = r.has("sandbox");
    for (script, at) in scripts {
        match sed::effects(script) {
            Ok(effects) => {
                for e in effects {
                    if !sandbox {
                        r.add(e, at);
                    }
                }
            }
            Err(why) => r.add(Effect::Unknown(format!("sed script {script:?}: {why}")), at),
        }
    }
}

/// awk's portable options; gawk and mawk have more, which a human reads.
const AWK: Profile = Profile {
    names: &["awk", "mawk", "gawk", "nawk"],
    options: &[
        "-F FS",
        "-v ASSIGNMENT",
        "-f PROGFILE  code: runs the awk program in that file",
    ],
    rest: Read,
    check: Some(awk_check),
    ..BASE
};

fn awk_check(r: &mut Reading<'_>) {
    let has_file = r.has("f");
    let operands = r.operands.clone();
    let mut files = operands.as_slice();
    if !has_file && let Some(&(i, program)) = operands.first() {
        if let Some(why) = awk_program_risk(program) {
            r.add(Effect::Code(format!("the awk program {why}")), Span::one(i));
        }
        files = &operands[1..];
    }
    // `name=value` operands are assignments, not files.
    let is_assignment = |w: &str| {
        w.split_once('=').is_some_and(|(n, _)| {
            !n.is_empty()
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !n.starts_with(|c: char| c.is_ascii_digit())
        })
    };
    for &(i, w) in files {
        if !is_assignment(w) && w != "-" {
            r.add(Effect::Reads(w.to_string()), Span::one(i));
        }
    }
    r.set_roles(&[], Role::Passthrough);
}

/// What makes an awk program more than a filter on its input, if anything: running
/// commands, reading or writing other files, the environment, or `ARGV`. Read
/// conservatively, outside string literals: `>` and `<` may be comparisons, and are
/// still refused, since `print > "file"` writes.
fn awk_program_risk(program: &str) -> Option<String> {
    let mut code = String::with_capacity(program.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in program.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
            code.push(' ');
            continue;
        }
        code.push(c);
    }
    if in_string {
        return Some("has an unterminated string".into());
    }
    for (what, why) in [
        ("|", "pipes to or from a command"),
        (">", "may write a file (`>`)"),
        ("<", "may read a file (`<`)"),
        ("@", "calls a function indirectly (`@`)"),
    ] {
        if code.contains(what) {
            return Some(why.into());
        }
    }
    let words = code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
    for word in words {
        let why = match word {
            "system" => "runs a command (`system`)",
            "getline" => "reads input or a command's output (`getline`)",
            "ENVIRON" => "reads the environment (`ENVIRON`)",
            "PROCINFO" => "reads the process's information (`PROCINFO`)",
            "ARGV" | "ARGC" => "changes which files it reads (`ARGV`)",
            "close" | "fflush" => "closes or flushes files and commands",
            _ => continue,
        };
        return Some(why.into());
    }
    None
}

/// jq 1.6/1.7. Options are exact; short ones cluster (`-rc`).
const JQ: Profile = Profile {
    names: &["jq", "gojq"],
    syntax: Syntax::Clap,
    options: &[
        "-c, --compact-output",
        "-n, --null-input",
        "-e, --exit-status",
        "-s, --slurp",
        "-r, --raw-output",
        "--raw-output0",
        "-j, --join-output",
        "-a, --ascii-output",
        "-R, --raw-input",
        "-C, --color-output",
        "-M, --monochrome-output",
        "-S, --sort-keys",
        "--tab",
        "--indent=N",
        "--unbuffered",
        "--stream",
        "--stream-errors",
        "--seq",
        "--arg NAME VALUE",
        "--argjson NAME TEXT",
        "--slurpfile NAME FILE",
        "--rawfile NAME FILE",
        "--argfile NAME FILE",
        "--args",
        "--jsonargs",
        "-f, --from-file=FILE  code: runs the jq program in that file",
        "-L DIRECTORY  code: loads jq modules from DIRECTORY",
        "-h",
        "-V",
    ],
    rest: Read,
    check: Some(jq_check),
    ..BASE
};

fn jq_check(r: &mut Reading<'_>) {
    for key in ["slurpfile", "rawfile", "argfile"] {
        let files: Vec<(String, Span)> = r
            .given
            .iter()
            .filter(|g| g.opt.key() == key)
            .filter_map(|g| g.value2.map(|f| (f.to_string(), g.at)))
            .collect();
        for (f, at) in files {
            r.add(Effect::Reads(f), at);
        }
    }
    let from_file = r.has("from-file");
    let operands = r.operands.clone();
    let mut rest = operands.as_slice();
    if !from_file && let Some(&(i, filter)) = operands.first() {
        if let Some(why) = jq_filter_risk(filter) {
            r.add(why, Span::one(i));
        }
        rest = &operands[1..];
    }
    // After `--args` or `--jsonargs`, operands are values, not files.
    let args_at = r
        .given
        .iter()
        .filter(|g| matches!(g.opt.key(), "args" | "jsonargs"))
        .map(|g| g.at.first)
        .min();
    for &(i, w) in rest {
        if args_at.is_some_and(|a| i > a) || w == "-" {
            continue;
        }
        r.add(Effect::Reads(w.to_string()), Span::one(i));
    }
    r.set_roles(&[], Role::Passthrough);
}

/// What a jq filter reaches beyond its input: the environment (`env`, `$ENV`) or module
/// files (`import`, `include`). Identifiers are read outside string literals, and a
/// name after `.` is a field (`.env` is not `env`); code inside `\( … )` in a string is
/// read too.
fn jq_filter_risk(filter: &str) -> Option<Effect> {
    let mut idents: Vec<(bool, String)> = Vec::new(); // (after a dot, name with `$`)
    let chars: Vec<char> = filter.chars().collect();
    let mut i = 0;
    // Depth of `\(` interpolations inside strings: 0 is code.
    let mut stack: Vec<usize> = Vec::new(); // paren depth at which each interpolation opened
    let mut in_string = false;
    let mut parens = 0usize;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            match c {
                '\\' if chars.get(i + 1) == Some(&'(') => {
                    stack.push(parens);
                    parens += 1;
                    in_string = false;
                    i += 2;
                    continue;
                }
                '\\' => i += 1,
                '"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            '"' => in_string = true,
            '(' => parens += 1,
            ')' => {
                parens = parens.saturating_sub(1);
                if stack.last() == Some(&parens) {
                    stack.pop();
                    in_string = true;
                }
            }
            '#' => {
                // A comment runs to the end of the line.
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            c if c == '$' || c.is_ascii_alphabetic() || c == '_' => {
                let after_dot = i > 0 && chars[i - 1] == '.';
                let start = i;
                i += 1;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
                {
                    i += 1;
                }
                idents.push((after_dot, chars[start..i].iter().collect()));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if in_string {
        return Some(Effect::Unknown(
            "the jq filter has an unterminated string".into(),
        ));
    }
    for (after_dot, name) in idents {
        if after_dot {
            continue;
        }
        match name.as_str() {
            "env" | "$ENV" | "$__prog_env" => {
                return Some(Effect::Env(format!(
                    "the jq filter reads the environment (`{name}`), which may hold secrets"
                )));
            }
            "import" | "include" | "modulemeta" | "get_search_list" => {
                return Some(Effect::Code(format!(
                    "the jq filter loads modules from files (`{name}`)"
                )));
            }
            _ => {}
        }
    }
    None
}

/// GNU sed's script language, read far enough to find every command that writes (`w`,
/// `W`, `s///w`), reads (`r`, `R`) or runs (`e`, `s///e`) something. A script it cannot
/// read through is not understood.
mod sed {
    use super::Effect;

    pub fn effects(script: &str) -> Result<Vec<Effect>, String> {
        let mut p = Parser {
            s: script.chars().collect(),
            i: 0,
            out: Vec::new(),
        };
        p.script()?;
        Ok(p.out)
    }

    struct Parser {
        s: Vec<char>,
        i: usize,
        out: Vec<Effect>,
    }

    impl Parser {
        fn peek(&self) -> Option<char> {
            self.s.get(self.i).copied()
        }

        fn bump(&mut self) -> Option<char> {
            let c = self.peek();
            self.i += 1;
            c
        }

        fn blanks(&mut self) {
            while matches!(self.peek(), Some(' ' | '\t')) {
                self.i += 1;
            }
        }

        /// The rest of the line (a file name, a label, text).
        fn rest_of_line(&mut self) -> String {
            let mut out = String::new();
            while let Some(c) = self.peek() {
                if c == '\n' {
                    break;
                }
                out.push(c);
                self.i += 1;
            }
            out
        }

        fn script(&mut self) -> Result<(), String> {
            loop {
                while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                    self.i += 1;
                }
                if self.peek().is_none() {
                    return Ok(());
                }
                self.command()?;
            }
        }

        fn address(&mut self) -> Result<bool, String> {
            match self.peek() {
                Some(c) if c.is_ascii_digit() => {
                    while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '~') {
                        self.i += 1;
                    }
                    Ok(true)
                }
                Some('$') => {
                    self.i += 1;
                    Ok(true)
                }
                Some('/') => {
                    self.i += 1;
                    self.delimited('/')?;
                    self.regex_flags();
                    Ok(true)
                }
                Some('\\') => {
                    self.i += 1;
                    let d = self.bump().ok_or("an address ends early")?;
                    self.delimited(d)?;
                    self.regex_flags();
                    Ok(true)
                }
                _ => Ok(false),
            }
        }

        fn regex_flags(&mut self) {
            while matches!(self.peek(), Some('I' | 'M')) {
                self.i += 1;
            }
        }

        /// Skips to the unescaped delimiter `d` and past it.
        fn delimited(&mut self, d: char) -> Result<(), String> {
            while let Some(c) = self.bump() {
                if c == '\\' {
                    self.i += 1;
                } else if c == d {
                    return Ok(());
                } else if c == '\n' && d != '\n' {
                    return Err("a newline inside a regular expression".into());
                }
            }
            Err(format!("no closing `{d}`"))
        }

        fn command(&mut self) -> Result<(), String> {
            if self.address()? {
                self.blanks();
                if self.peek() == Some(',') {
                    self.i += 1;
                    self.blanks();
                    if matches!(self.peek(), Some('+' | '~')) {
                        self.i += 1;
                    }
                    if !self.address()? {
                        return Err("an address range without its end".into());
                    }
                }
            }
            self.blanks();
            while self.peek() == Some('!') {
                self.i += 1;
                self.blanks();
            }
            let c = self.bump().ok_or("an address without a command")?;
            match c {
                '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P'
                | 'x' | 'z' | 'F' => Ok(()),
                'l' | 'L' | 'q' | 'Q' => {
                    self.blanks();
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                    }
                    Ok(())
                }
                '#' => {
                    self.rest_of_line();
                    Ok(())
                }
                ':' | 'b' | 't' | 'T' | 'v' => {
                    // A label (or version), up to `;` or the end of the line.
                    while let Some(c) = self.peek() {
                        if c == '\n' || c == ';' || c == '}' {
                            break;
                        }
                        self.i += 1;
                    }
                    Ok(())
                }
                'a' | 'i' | 'c' => {
                    // Text to the end of the line, continued by a trailing backslash.
                    loop {
                        let line = self.rest_of_line();
                        if line.ends_with('\\') && self.peek() == Some('\n') {
                            self.i += 1;
                            continue;
                        }
                        return Ok(());
                    }
                }
                'r' | 'R' => {
                    self.blanks();
                    let file = self.rest_of_line();
                    self.out.push(Effect::Reads(file));
                    Ok(())
                }
                'w' | 'W' => {
                    self.blanks();
                    let file = self.rest_of_line();
                    self.out.push(Effect::Writes(file));
                    Ok(())
                }
                'e' => {
                    self.blanks();
                    let command = self.rest_of_line();
                    self.out.push(Effect::Code(format!(
                        "the sed script runs a command (`e {command}`)"
                    )));
                    Ok(())
                }
                's' => self.substitute(),
                'y' => {
                    let d = self.bump().ok_or("`y` without a delimiter")?;
                    self.delimited(d)?;
                    self.delimited(d)
                }
                other => Err(format!("`{other}` is not a sed command execgate knows")),
            }
        }

        fn substitute(&mut self) -> Result<(), String> {
            let d = self.bump().ok_or("`s` without a delimiter")?;
            if d == '\n' || d == '\\' {
                return Err("`s` with a newline or backslash delimiter".into());
            }
            self.delimited(d)?;
            // The replacement may hold escaped newlines; it still ends at `d`.
            while let Some(c) = self.bump() {
                if c == '\\' {
                    self.i += 1;
                } else if c == d {
                    break;
                } else if self.peek().is_none() && c != d {
                    return Err(format!("no closing `{d}`"));
                }
            }
            loop {
                match self.peek() {
                    Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.i += 1,
                    Some(c) if c.is_ascii_digit() => self.i += 1,
                    Some('e') => {
                        self.i += 1;
                        self.out.push(Effect::Code(
                            "the sed script runs the pattern space as a command (`s///e`)".into(),
                        ));
                    }
                    Some('w') => {
                        self.i += 1;
                        self.blanks();
                        let file = self.rest_of_line();
                        self.out.push(Effect::Writes(file));
                        return Ok(());
                    }
                    _ => return Ok(()),
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn harmless_scripts() {
            for s in [
                "s/a/b/g",
                "s|a|b|",
                "1,5p",
                "/x/d",
                "$!N;P;D",
                "s/x/w/",
                "s/a\\/b/c/",
                "y/abc/xyz/",
                "1~2d",
                "s/x/y/2g",
                "/start/,/end/{s/a/b/;p}",
                "2q",
                "a hello",
                ":a;N;$!ba;s/\\n/ /g",
                "10,+3!d",
                "0,/x/s//y/",
            ] {
                assert_eq!(effects(s), Ok(vec![]), "{s}");
            }
        }

        #[test]
        fn scripts_that_reach_out() {
            let e = |s: &str| effects(s).unwrap();
            assert_eq!(e("w out"), [Effect::Writes("out".into())]);
            assert_eq!(e("s/a/b/w /etc/x"), [Effect::Writes("/etc/x".into())]);
            assert_eq!(e("1r /etc/shadow"), [Effect::Reads("/etc/shadow".into())]);
            assert!(matches!(e("s/.*/id/e")[0], Effect::Code(_)));
            assert!(matches!(e("1e id")[0], Effect::Code(_)));
            assert!(matches!(e("/x/{e id\n}")[0], Effect::Code(_)));
            assert!(effects("s/a/b").is_err());
            assert!(effects("k").is_err());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn awk_programs() {
        for p in [
            "{print $1}",
            "NR==1",
            "{ sum += $2 } END { print sum }",
            "{print \"a > b\"}",
        ] {
            assert_eq!(awk_program_risk(p), None, "{p}");
        }
        for p in [
            "BEGIN{system(\"id\")}",
            "{print > \"/tmp/x\"}",
            "{print | \"sh\"}",
            "BEGIN{while ((getline l < \"/etc/shadow\") > 0) print l}",
            "BEGIN{print ENVIRON[\"HOME\"]}",
            "BEGIN{ARGV[1]=\"/etc/shadow\"; ARGC=2}",
            "{f=\"system\"; @f(\"id\")}",
            "$3 > 10",
        ] {
            assert!(awk_program_risk(p).is_some(), "{p}");
        }
    }

    #[test]
    fn jq_filters() {
        for f in [
            ".",
            ".name",
            ".env.HOME",
            "keys",
            "map(.a) | add",
            "\"env\"",
            "{a: .b}",
        ] {
            assert_eq!(jq_filter_risk(f), None, "{f}");
        }
        for f in [
            "env",
            "$ENV.HOME",
            "env.PATH",
            "[env]",
            "\"\\(env)\"",
            "import \"a\" as a; .",
            "include \"x\"; .",
        ] {
            assert!(jq_filter_risk(f).is_some(), "{f}");
        }
    }
}
