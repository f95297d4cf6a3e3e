//! Shell analysis with tree-sitter-bash: is a command *plain* (nothing but words joined
//! by `&&`, `||`, `;` and `|`), and which simple commands does it contain?
//!
//! Plain is a whitelist: every node of the syntax tree must be a word, a quoted string
//! without expansions, or a number, and every operator one of the four. Anything else —
//! substitutions, redirections, expansions, globs, subshells, assignments, comments,
//! parse errors — makes the command not plain, with a reason naming what and where. A
//! command that is not plain is never approved by a rule.
//!
//! The commands are collected from the whole tree, including those nested in
//! substitutions, subshells and compound statements, so that the deny list and risk see
//! every program that might run even when the command is not plain. Words come back
//! with their quotes removed.
//!
//! tree-sitter parses what bash would mostly agree with, not exactly: a few character
//! checks run before it (newlines, control, bidirectional and look-alike characters,
//! backslashes), and plain commands are simple enough that the two cannot disagree on
//! where one command ends.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

/// What analysis found in one command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Why the command is not plain; empty when it is.
    pub not_plain: Vec<String>,
    /// Every simple command, in source order, nested ones included.
    pub commands: Vec<SimpleCommand>,
    /// Every redirection, in source order.
    pub redirects: Vec<Redirect>,
}

/// One simple command: a program and its arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The program and its arguments, quotes removed. Parts that are expansions or
    /// substitutions are kept as their source text.
    pub words: Vec<String>,
    /// `NAME=value` assignments before the program.
    pub assignments: Vec<String>,
    /// The command's words as written, joined by single spaces: what allowlist rules
    /// are compared with.
    pub text: String,
    /// True when its standard input comes from a pipe (`b` in `a | b`).
    pub piped: bool,
    /// What a heredoc or here-string feeds it, if anything (`sh <<EOF … EOF`).
    pub heredoc: Option<String>,
}

/// A redirection: its operator (`>`, `>>`, `<`, `&>`, `<<`, `<<<`, …) and its target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    pub op: String,
    pub target: String,
}

impl Analysis {
    pub fn plain(&self) -> bool {
        self.not_plain.is_empty()
    }

    /// The analysis of an argv request: one command, its words exactly as given. No
    /// shell reads argv, so it is plain by construction.
    pub fn of_argv(argv: &[String], joined: &str) -> Analysis {
        let mut not_plain = Vec::new();
        if argv.is_empty() || argv[0].is_empty() {
            not_plain.push("empty command".into());
        }
        Analysis {
            not_plain,
            commands: vec![SimpleCommand {
                words: argv.to_vec(),
                text: joined.to_string(),
                ..SimpleCommand::default()
            }],
            redirects: Vec::new(),
        }
    }
}

thread_local! {
    /// Parsers are not `Sync` and cost a little to build: one per thread, reused.
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut p = Parser::new();
        p.set_language(&tree_sitter_bash::LANGUAGE.into())
            .expect("the bundled bash grammar matches tree-sitter's ABI");
        p
    });
}

/// Commands longer than this are not parsed: they are not plain. (The agent API caps
/// bodies at 64 KiB anyway; this bounds the work per request.)
const MAX_LEN: usize = 64 * 1024;

/// Analyses one command line.
pub fn analyse(command: &str) -> Analysis {
    let mut a = Analysis::default();
    if command.trim().is_empty() {
        a.not_plain.push("empty command".into());
        return a;
    }
    if command.len() > MAX_LEN {
        a.not_plain
            .push(format!("too long to analyse ({} bytes)", command.len()));
        return a;
    }
    characters(command, &mut a.not_plain);
    let tree = PARSER.with(|p| p.borrow_mut().parse(command, None));
    let Some(tree) = tree else {
        a.not_plain.push("parse error: the parser gave up".into());
        return a;
    };
    let root = tree.root_node();
    let mut walk = Walk {
        src: command,
        out: &mut a,
    };
    if root.has_error() {
        let at = first_error(root).map_or(0, |n| n.start_byte());
        walk.not_plain(format!("parse error at offset {at}"));
    }
    walk.node(root, false);
    dedup_reasons(&mut a.not_plain);
    a
}

/// One reason per kind of finding: the first place it occurs is enough to see it.
fn dedup_reasons(reasons: &mut Vec<String>) {
    let mut seen: Vec<String> = Vec::new();
    reasons.retain(|r| {
        let what = r.split(" at offset").next().unwrap_or(r).to_string();
        if seen.contains(&what) {
            false
        } else {
            seen.push(what);
            true
        }
    });
}

/// Removes backslash escapes as bash does: outside quotes a backslash quotes the next
/// character; inside double quotes only before `$`, `` ` ``, `"`, `\` and newline. (A
/// backslash already makes the command not plain; this keeps the words the deny list and
/// risk see the words bash would run.)
fn unescape(text: &str, in_double_quotes: bool) -> String {
    if !text.contains('\\') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('\n') => {
                chars.next();
            }
            Some(n) if !in_double_quotes || matches!(n, '$' | '`' | '"' | '\\') => {
                out.push(n);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .filter(|c| c.has_error())
        .find_map(first_error)
}

/// Characters that decide plainness before any parsing: what bash reads differently
/// from a human, or from tree-sitter.
fn characters(command: &str, out: &mut Vec<String>) {
    let mut single = false;
    for (i, c) in command.char_indices() {
        let why = match c {
            '\'' => {
                single = !single;
                None
            }
            '\n' | '\r' => Some("newline or carriage return".to_string()),
            '\\' if !single => Some("backslash escape".to_string()),
            c if c.is_control() && c != '\t' => {
                Some(format!("control character U+{:04X}", c as u32))
            }
            c if is_bidi_or_invisible(c) => Some(format!(
                "invisible or bidirectional character U+{:04X}",
                c as u32
            )),
            c if is_look_alike(c) => Some(format!(
                "look-alike of shell syntax U+{:04X} `{c}`",
                c as u32
            )),
            _ => None,
        };
        if let Some(why) = why {
            out.push(format!("{why} at offset {i}"));
        }
    }
}

/// Bidirectional controls and characters that render as nothing.
pub fn is_bidi_or_invisible(c: char) -> bool {
    matches!(c as u32,
        0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069 | 0xFEFF | 0x00AD
        | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180E | 0x3164 | 0xFFA0)
}

/// Characters a human reads as shell syntax or a blank that bash reads as a word
/// character: fullwidth punctuation (`；` `｜` `＆`) and non-ASCII spaces.
fn is_look_alike(c: char) -> bool {
    matches!(c as u32,
        0xFF01..=0xFF5E | 0x00A0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F
        | 0x205F | 0x3000 | 0xFE50..=0xFE6B | 0x2024 | 0x2039 | 0x203A | 0x2E28 | 0x2E29)
}

struct Walk<'s, 'a> {
    src: &'s str,
    out: &'a mut Analysis,
}

impl Walk<'_, '_> {
    fn not_plain(&mut self, why: String) {
        self.out.not_plain.push(why);
    }

    fn text(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.src.as_bytes()).unwrap_or("")
    }

    fn at(&mut self, node: Node<'_>, what: &str) {
        self.not_plain(format!("{what} at offset {}", node.start_byte()));
    }

    fn children<'t>(&self, node: Node<'t>) -> Vec<Node<'t>> {
        let mut cursor = node.walk();
        node.children(&mut cursor).collect()
    }

    /// Visits `node`. `piped`: the statement's input comes from a pipe.
    fn node(&mut self, node: Node<'_>, piped: bool) {
        match node.kind() {
            "program" | "list" => {
                for child in self.children(node) {
                    if child.is_named() {
                        self.node(child, false);
                    } else {
                        self.operator(child);
                    }
                }
            }
            "pipeline" => {
                let mut first = true;
                for child in self.children(node) {
                    if child.is_named() {
                        self.node(child, piped || !first);
                        first = false;
                    } else {
                        self.operator(child);
                    }
                }
            }
            "command" => self.command(node, piped),
            "redirected_statement" => {
                let children = self.children(node);
                let index = self.out.commands.len();
                for child in &children {
                    if child.kind().ends_with("redirect") {
                        continue;
                    }
                    self.node(*child, piped);
                }
                for child in children {
                    if child.kind().ends_with("redirect") {
                        self.redirect(child, index);
                    }
                }
            }
            "comment" => self.at(node, "comment `#`"),
            "ERROR" => self.nested(node),
            other => {
                let what = match other {
                    "subshell" => "subshell `( … )`",
                    "compound_statement" => "brace group `{ …; }`",
                    "negated_command" => "`!` negation",
                    "variable_assignment" | "variable_assignments" => {
                        "variable assignment without a command"
                    }
                    "function_definition" => "not a simple command: a function definition",
                    "if_statement"
                    | "while_statement"
                    | "for_statement"
                    | "c_style_for_statement"
                    | "case_statement" => {
                        "not a simple command: a compound statement (if/while/for/case)"
                    }
                    "test_command" => "not a simple command: a `[[ … ]]` test",
                    "declaration_command" => {
                        "not a simple command: a declaration (export, declare, local, readonly)"
                    }
                    "unset_command" => "not a simple command: `unset`",
                    _ => "not a simple command",
                };
                let what = if what == "not a simple command" {
                    format!("not a simple command: `{other}`")
                } else {
                    what.to_string()
                };
                self.at(node, &what);
                self.nested(node);
            }
        }
    }

    /// Collects what runs inside a node that is itself not plain.
    fn nested(&mut self, node: Node<'_>) {
        for child in self.children(node) {
            if child.is_named() {
                self.node_or_part(child);
            }
        }
    }

    /// A named node in any position: statements are visited, word parts searched for
    /// substitutions.
    fn node_or_part(&mut self, node: Node<'_>) {
        match node.kind() {
            "command"
            | "pipeline"
            | "list"
            | "redirected_statement"
            | "subshell"
            | "compound_statement"
            | "negated_command"
            | "if_statement"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "case_statement"
            | "function_definition"
            | "test_command"
            | "declaration_command"
            | "unset_command"
            | "variable_assignment"
            | "variable_assignments"
            | "comment"
            | "ERROR" => self.node(node, false),
            _ => {
                let _ = self.value(node, true);
            }
        }
    }

    /// An anonymous node between statements: only `&&`, `||`, `;` and `|` are plain.
    fn operator(&mut self, node: Node<'_>) {
        match node.kind() {
            "&&" | "||" | ";" | "|" => {}
            "&" => self.at(node, "background job `&`"),
            "|&" => self.at(node, "`|&` pipe of stderr"),
            "\n" => {}
            other => {
                let what = format!("operator `{other}`");
                self.at(node, &what)
            }
        }
    }

    fn command(&mut self, node: Node<'_>, piped: bool) {
        let mut cmd = SimpleCommand {
            piped,
            ..SimpleCommand::default()
        };
        let mut raw = Vec::new();
        let index = self.out.commands.len();
        // Reserve the slot first so nested commands (in substitutions) come after it.
        self.out.commands.push(SimpleCommand::default());
        for child in self.children(node) {
            match child.kind() {
                "variable_assignment" => {
                    let text = self.text(child).to_string();
                    let name = text.split('=').next().unwrap_or("").to_string();
                    self.at(
                        child,
                        &format!("variable assignment `{name}=` before the program"),
                    );
                    let value = self.value(child, false);
                    cmd.assignments.push(value);
                }
                "command_name" => {
                    let inner = self.children(child);
                    let word = match inner.first() {
                        Some(w) => self.word(*w, true),
                        None => self.text(child).to_string(),
                    };
                    raw.push(self.text(child).to_string());
                    cmd.words.push(word);
                }
                k if k.ends_with("redirect") => self.redirect(child, index),
                "comment" => self.at(child, "comment `#`"),
                _ if child.is_named() => {
                    raw.push(self.text(child).to_string());
                    let word = self.word(child, true);
                    cmd.words.push(word);
                }
                _ => {}
            }
        }
        cmd.text = raw.join(" ");
        let heredoc = self.out.commands[index].heredoc.take();
        cmd.heredoc = heredoc;
        self.out.commands[index] = cmd;
    }

    /// One argument: its value with quotes removed. Checks what makes it not plain:
    /// unquoted glob characters, brace expansion, a leading tilde.
    fn word(&mut self, node: Node<'_>, first_part: bool) -> String {
        if node.kind() == "word" {
            let text = self.text(node).to_string();
            self.unquoted(node, &text, first_part);
            return unescape(&text, false);
        }
        self.value(node, first_part)
    }

    /// Checks the unquoted text of a word for expansion the shell would do.
    fn unquoted(&mut self, node: Node<'_>, text: &str, first_part: bool) {
        if text.contains(['*', '?', '[']) {
            self.at(node, "unquoted glob character (`*`, `?` or `[`)");
        }
        if text.contains(['{', '}']) {
            self.at(node, "brace expansion `{…}`");
        }
        if first_part && text.starts_with('~') {
            self.at(node, "tilde expansion `~` at the start of a word");
        }
        if text.starts_with('#') {
            self.at(node, "comment `#`");
        }
    }

    /// The value of any word-like node, flagging every part that is not plain and
    /// collecting commands nested in substitutions.
    fn value(&mut self, node: Node<'_>, first_part: bool) -> String {
        match node.kind() {
            "word" => self.word(node, first_part),
            "number" => self.text(node).to_string(),
            "raw_string" => {
                let t = self.text(node);
                t.strip_prefix('\'')
                    .and_then(|t| t.strip_suffix('\''))
                    .unwrap_or(t)
                    .to_string()
            }
            "string" => {
                let mut value = String::new();
                let mut last = node.start_byte() + 1;
                for child in self.children(node) {
                    if !child.is_named() {
                        continue;
                    }
                    // Text between named parts is literal string content.
                    if child.start_byte() > last {
                        value.push_str(&self.src[last..child.start_byte()]);
                    }
                    last = child.end_byte();
                    if child.kind() == "string_content" {
                        value.push_str(&unescape(self.text(child), true));
                    } else {
                        value.push_str(&self.value(child, false));
                    }
                }
                let end = node.end_byte().saturating_sub(1);
                if end > last {
                    value.push_str(&self.src[last..end]);
                }
                value
            }
            "concatenation" => {
                let mut value = String::new();
                for (i, child) in self.children(node).into_iter().enumerate() {
                    if child.is_named() {
                        value.push_str(&self.value(child, first_part && i == 0));
                    } else {
                        let t = self.text(child).to_string();
                        self.unquoted(child, &t, first_part && i == 0);
                        value.push_str(&unescape(&t, false));
                    }
                }
                value
            }
            "string_content" => unescape(self.text(node), true),
            kind => {
                let what = match kind {
                    "command_substitution" if self.text(node).starts_with('`') => {
                        "backtick command substitution"
                    }
                    "command_substitution" => "command substitution `$(…)`",
                    "process_substitution" => "process substitution `<(…)`/`>(…)`",
                    "simple_expansion" => "variable expansion `$NAME`",
                    "expansion" => "parameter expansion `${…}`",
                    "arithmetic_expansion" => "arithmetic expansion `$((…))`",
                    "brace_expression" => "brace expansion `{…}`",
                    "ansi_c_string" => "ANSI-C quoting `$'…'`",
                    "translated_string" => "translated string `$\"…\"`",
                    "variable_assignment" => "variable assignment",
                    "extglob_pattern" | "regex" => "pattern matching",
                    "array" => "array",
                    _ => "shell syntax",
                };
                let what = if what == "shell syntax" {
                    format!("shell syntax `{kind}`")
                } else {
                    what.to_string()
                };
                self.at(node, &what);
                self.nested(node);
                self.text(node).to_string()
            }
        }
    }

    /// Records a redirection on the command at `index` (if any): always not plain.
    fn redirect(&mut self, node: Node<'_>, index: usize) {
        let children = self.children(node);
        let op = children
            .iter()
            .find(|c| !c.is_named())
            .map(|c| self.text(*c).to_string())
            .unwrap_or_default();
        match node.kind() {
            "heredoc_redirect" => {
                self.at(node, "heredoc `<<`");
                let mut body = String::new();
                for child in &children {
                    if child.kind() == "heredoc_body" {
                        body.push_str(self.text(*child));
                        self.nested(*child);
                    } else if child.is_named() && child.kind() != "heredoc_start" {
                        // A pipeline or list after the heredoc start: more commands.
                        self.node_or_part(*child);
                    }
                }
                self.set_heredoc(index, body);
                self.out.redirects.push(Redirect {
                    op: "<<".into(),
                    target: String::new(),
                });
            }
            "herestring_redirect" => {
                self.at(node, "here-string `<<<`");
                let value = children
                    .iter()
                    .filter(|c| c.is_named())
                    .map(|c| self.value(*c, false))
                    .collect::<Vec<_>>()
                    .join(" ");
                self.set_heredoc(index, value.clone());
                self.out.redirects.push(Redirect {
                    op: "<<<".into(),
                    target: value,
                });
            }
            _ => {
                let what = format!("redirect `{op}`");
                self.at(node, &what);
                let target = children
                    .iter()
                    .filter(|c| c.is_named() && c.kind() != "file_descriptor")
                    .map(|c| self.value(*c, false))
                    .collect::<Vec<_>>()
                    .join(" ");
                self.out.redirects.push(Redirect { op, target });
            }
        }
    }

    fn set_heredoc(&mut self, index: usize, body: String) {
        if let Some(cmd) = self.out.commands.get_mut(index) {
            cmd.heredoc = Some(body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<Vec<String>> {
        analyse(command)
            .commands
            .into_iter()
            .map(|c| c.words)
            .collect()
    }

    fn reasons(command: &str) -> String {
        analyse(command).not_plain.join("; ")
    }

    #[test]
    fn plain_commands_and_their_words() {
        for plain in [
            "git status",
            "git log --oneline -3",
            "make test && cargo test",
            "git status | head -5",
            "a; b || c",
            "echo 'a;b|c$(x)`y`' \"quoted words\"",
            "git show HEAD~1",
            "cargo build --features=a,b",
            "ls -la /tmp/x.txt",
        ] {
            assert_eq!(reasons(plain), "", "{plain}");
        }
        assert_eq!(
            words("echo 'a;b' \"c d\" e"),
            [vec!["echo", "a;b", "c d", "e"]]
        );
        assert_eq!(
            words("make test && cargo test | tee"),
            [vec!["make", "test"], vec!["cargo", "test"], vec!["tee"]]
        );
        let a = analyse("a | b");
        assert!(!a.commands[0].piped && a.commands[1].piped);
        assert_eq!(
            analyse("git   status  -s").commands[0].text,
            "git status -s"
        );
    }

    #[test]
    fn everything_else_is_not_plain_and_says_why() {
        for (command, why) in [
            ("echo $(id)", "command substitution"),
            ("echo `id`", "backtick"),
            ("echo \"$(id)\"", "command substitution"),
            ("echo \"`id`\"", "backtick"),
            ("cat <(ls)", "process substitution"),
            ("ls > out", "redirect `>`"),
            ("ls >> out", "redirect `>>`"),
            ("ls 2>&1", "redirect"),
            ("cat <<EOF\nhi\nEOF", "heredoc"),
            ("cat <<< hi", "here-string"),
            ("(ls)", "subshell"),
            ("{ ls; }", "brace group"),
            ("ls &", "background"),
            ("ls |& cat", "|&"),
            ("FOO=bar ls", "assignment `FOO=`"),
            ("echo $HOME", "variable expansion"),
            ("echo ${HOME}", "parameter expansion"),
            ("echo \"$HOME\"", "variable expansion"),
            ("echo $((1+1))", "arithmetic"),
            ("ls *.rs", "glob"),
            ("ls file?", "glob"),
            ("ls [ab]", "glob"),
            ("echo {a,b}", "brace expansion"),
            ("echo {1..3}", "brace expansion"),
            ("cat ~/x", "tilde"),
            ("ls # hi", "comment"),
            ("ls\nrm -rf /", "newline"),
            ("ls\rrm", "newline"),
            ("ls \u{1b}[2J", "control character"),
            ("ls \u{202e}x", "bidirectional"),
            ("git status；rm -rf x", "look-alike"),
            ("git status\u{a0}x", "look-alike"),
            ("echo a\\;b", "backslash"),
            ("echo 'unbalanced", "parse error"),
            ("if true; then ls; fi", "compound statement"),
            ("! ls", "negation"),
            ("f() { ls; }", "function definition"),
            ("export A=1", "declaration"),
            ("echo $'\\x41'", "ANSI-C"),
            ("", "empty"),
        ] {
            let r = reasons(command);
            assert!(
                r.to_lowercase().contains(&why.to_lowercase()),
                "{command:?}: expected {why:?} in {r:?}"
            );
        }
    }

    #[test]
    fn nested_commands_are_found_even_when_not_plain() {
        let programs = |c: &str| -> Vec<String> {
            analyse(c)
                .commands
                .into_iter()
                .filter_map(|c| c.words.first().cloned())
                .collect()
        };
        assert_eq!(programs("echo $(rm -rf /)"), ["echo", "rm"]);
        assert_eq!(programs("echo \"`shutdown now`\""), ["echo", "shutdown"]);
        assert_eq!(programs("(cd x && rm -rf y) > log"), ["cd", "rm"]);
        assert_eq!(programs("if true; then reboot; fi"), ["true", "reboot"]);
        assert_eq!(programs("diff <(ls) <(curl x)"), ["diff", "ls", "curl"]);
        assert_eq!(programs("X=$(id) ls"), ["ls", "id"]);
        let a = analyse("sh <<EOF\nrm -rf /\nEOF");
        assert_eq!(a.commands[0].heredoc.as_deref(), Some("rm -rf /\n"));
        let a = analyse("bash <<< 'rm -rf /'");
        assert_eq!(a.commands[0].heredoc.as_deref(), Some("rm -rf /"));
        let a = analyse("echo hi > /etc/passwd 2>> ~/.bashrc");
        assert_eq!(
            a.redirects,
            [
                Redirect {
                    op: ">".into(),
                    target: "/etc/passwd".into()
                },
                Redirect {
                    op: ">>".into(),
                    target: "~/.bashrc".into()
                }
            ]
        );
    }

    #[test]
    fn backslashes_are_removed_as_bash_would() {
        assert_eq!(words("\\rm -rf a\\ b"), [vec!["rm", "-rf", "a b"]]);
        assert_eq!(words("echo \"a\\\"b\\$x\\n\""), [vec!["echo", "a\"b$x\\n"]]);
        assert_eq!(words("echo 'a\\b'"), [vec!["echo", "a\\b"]]);
    }

    #[test]
    fn argv_is_plain_by_construction() {
        let argv = vec!["ls".to_string(), "a;b".to_string()];
        let a = Analysis::of_argv(&argv, "ls 'a;b'");
        assert!(a.plain());
        assert_eq!(a.commands[0].words, argv);
    }
}
