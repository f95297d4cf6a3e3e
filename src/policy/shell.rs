//! Lexical helpers for shell command lines: normalisation, words, quoting, and a blunt
//! splitter. Whether a command is plain is `parse`'s job; the splitter here errs the
//! other way: it cuts at anything that might start a new command, so the deny list and
//! the allowed-binaries check see every program that might run, even if the parser and
//! the shell were ever to disagree.

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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn words_split_a_joined_argv_back() {
        let argv: Vec<String> = ["ls", "-la", "my file", "it's", "", "*.txt"]
            .map(String::from)
            .to_vec();
        assert_eq!(words(&crate::model::shell_join(&argv)), argv);
    }
}
