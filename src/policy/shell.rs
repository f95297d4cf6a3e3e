//! Lexical helpers for shell command lines: normalisation, segments, words, quoting, and
//! the conservative "is this plain?" test.
//!
//! The plainness test here is deliberately blunt: any character that could start shell
//! syntax beyond simple words (`; & | $ \` < > ( ) { } * ? [ ~ # \`, newlines, control
//! and bidi characters) makes a command not plain, so it is never auto-approved. The
//! splitter below errs the other way: it cuts at anything that might start a new command,
//! so deny rules and the allowed-binaries check see every program that might run.

/// Characters that make a command not plain, each with the reason shown to the approver.
const NOT_PLAIN: &[(char, &str)] = &[
    (';', "command separator `;`"),
    ('&', "`&` (background job or `&&` chain)"),
    ('|', "pipe or `||` chain"),
    ('$', "`$` expansion or substitution"),
    ('`', "backtick command substitution"),
    ('<', "input redirection or process substitution"),
    ('>', "output redirection"),
    ('(', "subshell or substitution `(`"),
    (')', "subshell or substitution `)`"),
    ('{', "brace group or brace expansion `{`"),
    ('}', "brace group or brace expansion `}`"),
    ('*', "glob character `*`"),
    ('?', "glob character `?`"),
    ('[', "glob character `[`"),
    ('~', "tilde `~`"),
    ('#', "`#` (comment)"),
    ('\\', "backslash escape"),
    ('!', "`!` (negation or history expansion)"),
];

/// Why `command` is not plain, or an empty list when it is.
pub fn not_plain_reasons(command: &str) -> Vec<String> {
    let mut reasons = Vec::new();
    for (i, c) in command.char_indices() {
        let why = if c == '\n' || c == '\r' {
            Some("newline or carriage return".to_string())
        } else if c.is_control() && c != '\t' {
            Some(format!("control character U+{:04X}", c as u32))
        } else if is_bidi_or_invisible(c) {
            Some(format!(
                "invisible or bidirectional character U+{:04X}",
                c as u32
            ))
        } else {
            NOT_PLAIN
                .iter()
                .find(|(n, _)| *n == c)
                .map(|(_, why)| why.to_string())
        };
        if let Some(why) = why {
            let entry = format!("{why} at offset {i}");
            if !reasons.iter().any(|r: &String| r.starts_with(&why)) {
                reasons.push(entry);
            }
        }
    }
    let quotes_balanced = {
        let (mut single, mut double) = (false, false);
        for c in command.chars() {
            match c {
                '\'' if !double => single = !single,
                '"' if !single => double = !double,
                _ => {}
            }
        }
        !single && !double
    };
    if !quotes_balanced {
        reasons.push("unbalanced quotes".into());
    }
    if command.trim().is_empty() {
        reasons.push("empty command".into());
    }
    for segment in segments(command) {
        if let Some(a) = leading_assignment(&segment) {
            let name = a.split('=').next().unwrap_or_default();
            reasons.push(format!("variable assignment `{name}=` before the program"));
        }
    }
    reasons
}

/// Characters that change how text displays without being visible: an approver could be
/// shown one command while another runs.
fn is_bidi_or_invisible(c: char) -> bool {
    matches!(c as u32,
        0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069 | 0xFEFF | 0x00AD)
}

/// Trims and collapses runs of blanks outside quotes to one space.
pub fn normalize(command: &str) -> String {
    let mut out = String::with_capacity(command.len());
    let (mut single, mut double, mut blank) = (false, false, false);
    for c in command.trim_matches([' ', '\t']).chars() {
        if !single && !double && (c == ' ' || c == '\t') {
            blank = true;
            continue;
        }
        if blank {
            out.push(' ');
            blank = false;
        }
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Cuts a command line wherever another command could begin (`; & | ( )`, newlines,
/// backticks, `$(`), outside single quotes. Over-cutting is safe: every piece is checked.
pub fn segments(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut single, mut double) = (false, false);
    let mut chars = command.chars().peekable();
    let mut cut = |cur: &mut String| {
        let s = normalize(cur);
        if !s.is_empty() {
            out.push(s);
        }
        cur.clear();
    };
    while let Some(c) = chars.next() {
        if single {
            if c == '\'' {
                single = false;
            }
            cur.push(c);
            continue;
        }
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '\'' if !double => {
                single = true;
                cur.push(c);
            }
            '"' => {
                double = !double;
                cur.push(c);
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                cut(&mut cur);
                double = false;
            }
            '`' => {
                cut(&mut cur);
                double = false;
            }
            ';' | '&' | '|' | '(' | ')' | '\n' | '\r' if !double => cut(&mut cur),
            _ => cur.push(c),
        }
    }
    cut(&mut cur);
    out
}

/// Splits a segment into words the way the shell would for plain text: blanks separate
/// words, quotes group and are removed, a backslash escapes the next character.
pub fn words(segment: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let (mut single, mut double) = (false, false);
    let mut chars = segment.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                in_word = true;
            }
            '"' if !single => {
                double = !double;
                in_word = true;
            }
            '\\' if !single => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                in_word = true;
            }
            ' ' | '\t' if !single && !double => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            _ => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// Words that may precede the program in a segment without being the program.
const PREFIX_WORDS: &[&str] = &[
    "{", "}", "!", "if", "then", "else", "elif", "do", "while", "until", "time", "fi", "done",
];

/// The words of a segment from its program on: shell keywords and `NAME=value`
/// prefixes dropped.
pub fn command_words(segment: &str) -> Vec<String> {
    let mut w = words(segment);
    let start = w
        .iter()
        .position(|w| !PREFIX_WORDS.contains(&w.as_str()) && !is_assignment(w))
        .unwrap_or(w.len());
    w.drain(..start);
    w
}

/// The program a segment runs, after shell keywords and `NAME=value` assignments.
pub fn program(segment: &str) -> Option<String> {
    command_words(segment).into_iter().next()
}

/// The first `NAME=value` word that comes before a segment's program, if any: an
/// assignment can change what the program does (`LD_PRELOAD=…`, `PATH=…`).
pub fn leading_assignment(segment: &str) -> Option<String> {
    words(segment)
        .into_iter()
        .take_while(|w| is_assignment(w) || PREFIX_WORDS.contains(&w.as_str()))
        .find(|w| is_assignment(w))
}

pub fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Joins argv into one shell line that means the same words: the form argv requests are
/// shown, matched and stored in.
pub fn shell_join(argv: &[String]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! plain {
        ($name:ident, $cmd:expr, $plain:expr) => {
            #[test]
            fn $name() {
                assert_eq!(
                    not_plain_reasons($cmd).is_empty(),
                    $plain,
                    "{:?}",
                    not_plain_reasons($cmd)
                );
            }
        };
    }

    plain!(simple_is_plain, "git status", true);
    plain!(quoted_is_plain, "git commit -m 'fix: a thing'", true);
    plain!(
        head_tilde_is_plain_word_but_blunt_here,
        "git show HEAD~1",
        false
    );
    plain!(semicolon, "git status; rm -rf /", false);
    plain!(and_chain, "a && b", false);
    plain!(pipe, "a | b", false);
    plain!(subst, "echo $(id)", false);
    plain!(backtick_in_quotes, "echo \"`id`\"", false);
    plain!(glob, "ls *.txt", false);
    plain!(brace, "echo {a,b}", false);
    plain!(newline, "ls\nrm -rf /", false);
    plain!(bidi, "ls \u{202E}txt", false);
    plain!(nul_like_control, "ls \u{7}", false);
    plain!(unbalanced, "echo 'oops", false);
    plain!(empty, "   ", false);
    plain!(assignment, "LD_PRELOAD=/tmp/x.so git status", false);
    plain!(assignment_quoted_value, "X='1' rm -r build", false);
    plain!(equals_in_argument_is_fine, "git log --format=oneline", true);

    #[test]
    fn normalize_collapses_outside_quotes_only() {
        assert_eq!(normalize("  git   status\t-s "), "git status -s");
        assert_eq!(normalize("echo 'a   b'  c"), "echo 'a   b' c");
        assert_eq!(normalize("echo \"a  'b\"   c"), "echo \"a  'b\" c");
    }

    #[test]
    fn segments_cut_at_every_possible_command_start() {
        assert_eq!(
            segments("git status; rm -rf /"),
            vec!["git status", "rm -rf /"]
        );
        assert_eq!(
            segments("a && b || c | d & e"),
            vec!["a", "b", "c", "d", "e"]
        );
        assert_eq!(
            segments("echo \"$(rm -rf /)\""),
            vec!["echo \"", "rm -rf /", "\""]
        );
        assert_eq!(segments("echo 'a; b'"), vec!["echo 'a; b'"]);
        assert_eq!(segments("echo `id`"), vec!["echo", "id"]);
        assert_eq!(segments("ls\nreboot"), vec!["ls", "reboot"]);
    }

    #[test]
    fn program_skips_keywords_and_assignments() {
        assert_eq!(program("FOO=1 BAR=2 rm -rf /").as_deref(), Some("rm"));
        assert_eq!(program("{ reboot").as_deref(), Some("reboot"));
        assert_eq!(program("'l''s' -la").as_deref(), Some("ls"));
        assert_eq!(program("   "), None);
    }

    #[test]
    fn shell_join_round_trips_words() {
        let argv: Vec<String> = ["ls", "-la", "my file", "it's", "", "*.txt"]
            .map(String::from)
            .to_vec();
        let joined = shell_join(&argv);
        assert_eq!(joined, r"ls -la 'my file' 'it'\''s' '' '*.txt'");
        assert_eq!(words(&joined), argv);
    }
}
