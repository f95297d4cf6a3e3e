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
//!
//! Plain depends a little on the shell: zsh replaces a word starting with `=` by a
//! command's path, bash expands `~` after the `=` of a word that looks like an
//! assignment, and a few words at the start of a command are keywords in one shell and
//! programs in another. [`analyse_for`] calls a command plain only if it is plain in every
//! shell it is given; [`analyse`] asks for all three.
//!
//! The work is bounded whatever the input: commands longer than 64 KiB or with too many
//! tokens are not parsed, the parse has a time budget, the walk stops descending past
//! [`MAX_NESTING`] levels of nested syntax and collecting past [`MAX_COMMANDS`] simple
//! commands. Each bound makes the command not plain, with a reason: a human decides.
//! Where there is no syntax tree to walk, the commands come from a blunt lexical cut
//! ([`super::shell::segments`]), so that risk still sees the programs.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, ParseState, Parser, Tree};

use super::shell;
use crate::model::Shell;
use crate::text::hidden;

/// What analysis found in one command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Why the command is not plain; empty when it is.
    pub not_plain: Vec<String>,
    /// Every simple command, in source order, nested ones included.
    pub commands: Vec<SimpleCommand>,
    /// Every redirection, in source order.
    pub redirects: Vec<Redirect>,
    /// `commands` may not be every program the line runs, or their words may be
    /// approximations: the parse failed, or a bound stopped the walk (the reasons say
    /// which). Never set without a reason in `not_plain`.
    pub partial: bool,
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

impl Redirect {
    /// Whether the shell opens the target for writing (`>`, `>>`, `&>`, `<>`, …).
    pub fn writes(&self) -> bool {
        matches!(
            self.op.as_str(),
            ">" | ">>" | "&>" | ">|" | "&>>" | ">&" | "<>" | "&>|"
        )
    }

    /// Whether the shell opens the target as a file to read (`<`); a heredoc's target is
    /// its delimiter and a here-string's is text, neither a file.
    pub fn reads(&self) -> bool {
        self.op == "<"
    }
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
            partial: false,
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

/// Commands with more tokens than this (see `tokens`) are not parsed: they are not
/// plain. tree-sitter's error recovery can take time and memory quadratic in the
/// tokens of a broken command, inside a single step that no time budget interrupts
/// (when it accepts the end of input): in a release build up to about 75 ms and 40 MB
/// at 1,000 tokens, but 10 s and 1.9 GB at 8,000 (a backtick, `>` and `}`, repeated
/// over 8 KB). A single-quoted string is one token, so long messages still parse.
pub const MAX_TOKENS: usize = 1_000;

/// How long the parse may take. tree-sitter checks it every hundred or so parse steps
/// and gives up past it; the command is then not plain.
pub const PARSE_BUDGET: Duration = Duration::from_millis(100);

/// Syntax nested deeper than this (substitutions, subshells, brace groups, compound
/// statements, quotes around substitutions, …) is not walked: the command is not
/// plain, and the commands inside are collected without recursion.
pub const MAX_NESTING: usize = 32;

/// The walk's recursion however it nests: a backstop for tree shapes that deepen
/// without a nesting construct (a few calls per level of nesting is normal).
const MAX_FRAMES: usize = 8 * MAX_NESTING;

/// Simple commands collected past this are dropped: the command is not plain.
pub const MAX_COMMANDS: usize = 1_000;

/// What one analysis may cost. Fixed in production; tests lift a bound to reach the
/// next one.
#[derive(Clone, Copy, Debug)]
struct Limits {
    max_len: usize,
    max_tokens: usize,
    budget: Duration,
}

const LIMITS: Limits = Limits {
    max_len: MAX_LEN,
    max_tokens: MAX_TOKENS,
    budget: PARSE_BUDGET,
};

/// Tokens one evaluation may parse in all: the command and every script inside it that
/// is read (`bash -c '…'`, a heredoc fed to a shell), each script once however many
/// times it is asked for. A single-quoted script is one token of the command carrying
/// it, so [`MAX_TOKENS`] alone lets a 64 KiB request of many `bash -c '…'` cost dozens
/// of full parses. Past this, what is left is not parsed: the command is not plain, and
/// [`budgeted`] says so.
pub const MAX_TOKENS_IN_ALL: usize = 4 * MAX_TOKENS;

/// One evaluation's parsing: tokens spent, whether the budget ran out, and the inner
/// scripts analysed so far (risk and the git gate each read them, in several passes).
#[derive(Default)]
struct Budget {
    spent: usize,
    overspent: bool,
    seen: HashMap<String, Analysis>,
}

thread_local! {
    /// The budget of the evaluation running on this thread, if one is.
    static BUDGET: RefCell<Option<Budget>> = const { RefCell::new(None) };
}

/// Runs `f` with a budget of [`MAX_TOKENS_IN_ALL`] for every analysis it makes on this
/// thread, and says whether the budget ran out (some script was then left unread).
pub fn budgeted<T>(f: impl FnOnce() -> T) -> (T, bool) {
    /// Puts back the budget in force before (none, usually), also if `f` panics.
    struct Scope(Option<Option<Budget>>);
    impl Drop for Scope {
        fn drop(&mut self) {
            if let Some(outer) = self.0.take() {
                BUDGET.with(|b| b.replace(outer));
            }
        }
    }
    let scope = Scope(Some(BUDGET.with(|b| b.replace(Some(Budget::default())))));
    let out = f();
    let overspent = BUDGET.with(|b| b.borrow().as_ref().is_some_and(|b| b.overspent));
    drop(scope);
    (out, overspent)
}

/// Why a command is not plain when the budget ran out.
pub fn overspent_reason() -> String {
    format!(
        "too much to analyse in all: the command and the scripts inside it come to more than {MAX_TOKENS_IN_ALL} tokens"
    )
}

/// Takes `tokens` from the running budget; false when they are not there (and the
/// budget is then spent). Outside [`budgeted`], everything is affordable.
fn spend(tokens: usize) -> bool {
    BUDGET.with(|b| match b.borrow_mut().as_mut() {
        Some(budget) if budget.spent + tokens > MAX_TOKENS_IN_ALL => {
            budget.overspent = true;
            false
        }
        Some(budget) => {
            budget.spent += tokens;
            true
        }
        None => true,
    })
}

/// Analyses one command line for every shell: plain only if plain in sh, bash and zsh.
/// This is how the scripts inside a command are read (`bash -c '…'`, a heredoc fed to a
/// shell); inside [`budgeted`], each is analysed once however many passes ask for it.
pub fn analyse(command: &str) -> Analysis {
    let cached = BUDGET.with(|b| b.borrow().as_ref()?.seen.get(command).cloned());
    if let Some(a) = cached {
        return a;
    }
    let a = analyse_for(command, &Shell::ALL);
    BUDGET.with(|b| {
        if let Some(budget) = b.borrow_mut().as_mut() {
            budget.seen.insert(command.to_owned(), a.clone());
        }
    });
    a
}

/// Analyses one command line for the shells given: plain only if plain in every one of
/// them, each with its default options for `SHELL -c COMMAND`. No shells means all.
/// Parses once, whatever the number of shells.
pub fn analyse_for(command: &str, shells: &[Shell]) -> Analysis {
    analyse_within(command, shells, LIMITS)
}

fn analyse_within(command: &str, shells: &[Shell], limits: Limits) -> Analysis {
    let shells = if shells.is_empty() {
        &Shell::ALL[..]
    } else {
        shells
    };
    let mut a = Analysis::default();
    if command.trim().is_empty() {
        a.not_plain.push("empty command".into());
        return a;
    }
    if command.len() > limits.max_len {
        a.not_plain
            .push(format!("too long to analyse ({} bytes)", command.len()));
        lexical(command, &mut a);
        return a;
    }
    characters(command, &mut a.not_plain);
    let tokens = tokens(command);
    let tree = if tokens > limits.max_tokens {
        a.not_plain.push(format!(
            "too complex to analyse ({tokens} tokens, more than {})",
            limits.max_tokens
        ));
        None
    } else if !spend(tokens) {
        a.not_plain.push(overspent_reason());
        None
    } else {
        let tree = parse(command, limits.budget);
        if tree.is_none() {
            a.not_plain.push(format!(
                "too complex to analyse within the time budget ({} ms)",
                limits.budget.as_millis()
            ));
        }
        tree
    };
    let Some(tree) = tree else {
        lexical(command, &mut a);
        dedup_reasons(&mut a.not_plain);
        return a;
    };
    let root = tree.root_node();
    let mut walk = Walk {
        src: command,
        out: &mut a,
        sh: shells.contains(&Shell::Sh),
        bash: shells.contains(&Shell::Bash),
        zsh: shells.contains(&Shell::Zsh),
        nesting: 0,
        frames: 0,
        too_many: false,
    };
    if root.has_error() {
        let at = first_error(root).start_byte();
        walk.not_plain(format!("parse error at offset {at}"));
        walk.out.partial = true;
    }
    walk.node(root, false);
    dedup_reasons(&mut a.not_plain);
    a
}

/// What tree-sitter reads instead of the command: every byte of a non-ASCII character
/// becomes `x`, so that offsets are the same and the parser only ever sees ASCII.
///
/// tree-sitter-bash's scanner calls C's `isdigit()` on the character after a `{`, which
/// is undefined past 255: with U+F0000 or U+10FFFF it read out of bounds and the process
/// died of SIGSEGV (`echo {` and one such character). For bash, dash and zsh every
/// non-ASCII character is a word character, as `x` is; an `x` is also a name character,
/// so a word like `é=1` now looks like an assignment to the parser: less plain, never
/// more. No shell keyword contains `xx`, and a non-ASCII character is at least two bytes.
fn ascii(command: &str) -> Vec<u8> {
    command
        .bytes()
        .map(|b| if b.is_ascii() { b } else { b'x' })
        .collect()
}

/// Parses within `budget`, or gives up (`None`).
fn parse(command: &str, budget: Duration) -> Option<Tree> {
    let bytes = ascii(command);
    let bytes = bytes.as_slice();
    let start = Instant::now();
    let mut progress = |_: &ParseState| {
        if start.elapsed() > budget {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    PARSER.with(|p| {
        let mut p = p.borrow_mut();
        let tree = p.parse_with_options(
            &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        );
        if tree.is_none() {
            // A cancelled parse is kept for resuming: the next command must not be
            // parsed as the rest of this one.
            p.reset();
        }
        tree
    })
}

/// Roughly the tokens tree-sitter will see, counted high: each run of word characters
/// and each shell metacharacter outside single quotes (inside double quotes too, since a
/// substitution there is code again). A single-quoted string is one.
fn tokens(command: &str) -> usize {
    let (mut n, mut in_word, mut single) = (0, false, false);
    for c in command.chars() {
        if single {
            single = c != '\'';
            continue;
        }
        match c {
            '\'' => {
                single = true;
                in_word = false;
                n += 1;
            }
            c if c.is_whitespace() => in_word = false,
            '|' | '&' | ';' | '(' | ')' | '<' | '>' | '{' | '}' | '[' | ']' | '$' | '`' | '"'
            | '\\' | '!' | '#' | '*' | '?' | '~' | '=' => {
                in_word = false;
                n += 1;
            }
            _ if !in_word => {
                in_word = true;
                n += 1;
            }
            _ => {}
        }
    }
    n
}

/// The commands of a command line that has no syntax tree to walk: the pieces a blunt
/// lexical cut finds, so that risk still sees the programs. The caller has said why it
/// is not plain.
fn lexical(command: &str, out: &mut Analysis) {
    out.partial = true;
    for segment in shell::segments(command) {
        if out.commands.len() >= MAX_COMMANDS {
            out.not_plain.push(too_many_commands());
            break;
        }
        let words = shell::command_words(&segment);
        if !words.is_empty() {
            out.commands.push(SimpleCommand {
                words,
                text: segment,
                ..SimpleCommand::default()
            });
        }
    }
}

fn too_many_commands() -> String {
    format!("more than {MAX_COMMANDS} simple commands: too many to analyse")
}

/// One reason per kind of finding: the first place it occurs is enough to see it.
fn dedup_reasons(reasons: &mut Vec<String>) {
    let mut seen: HashSet<String> = HashSet::new();
    reasons.retain(|r| {
        let what = r.split(" at offset").next().unwrap_or(r);
        seen.insert(what.to_string())
    });
}

/// Removes backslash escapes as bash does: outside quotes a backslash quotes the next
/// character; inside double quotes only before `$`, `` ` ``, `"`, `\` and newline. (A
/// backslash outside quotes already makes the command not plain; this keeps the words
/// the deny list and risk see the words bash would run.)
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

/// The first error or missing node under `root` (which has an error), found without
/// recursion: down the first child that has an error, to the node that is one.
/// Braces every shell leaves as written: each unquoted `{` closed by an unquoted `}`
/// later in the word, nothing nested, and no `,` or `..` between them (`{}`, `{x}`,
/// `a{b}c`). Anything else with an unquoted brace — `{a,b}`, `x{1..3}`, a lone `{` or
/// `}` (zsh reads `'{'}`'s `}` as syntax) — may expand or be read as a group, so it is not
/// plain. Between a pair, quoted text counts too: `{a','b}` errs strict.
fn inert_braces(word: &str) -> bool {
    let mut open: Option<usize> = None;
    let (mut single, mut double) = (false, false);
    let mut escaped = false;
    for (i, c) in word.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            _ if single || double => {}
            '{' if open.is_none() => open = Some(i),
            '{' => return false,
            '}' => match open.take() {
                Some(start) => {
                    let inside = &word[start + 1..i];
                    if inside.contains(',') || inside.contains("..") {
                        return false;
                    }
                }
                None => return false,
            },
            _ => {}
        }
    }
    open.is_none()
}

fn first_error(root: Node<'_>) -> Node<'_> {
    let mut node = root;
    loop {
        if node.is_error() || node.is_missing() {
            return node;
        }
        let mut cursor = node.walk();
        let next = node.children(&mut cursor).find(|c| c.has_error());
        match next {
            Some(child) => node = child,
            None => return node,
        }
    }
}

/// Characters that decide plainness before any parsing: what bash reads differently
/// from a human, or from tree-sitter.
///
/// A backslash inside double quotes is read alike by every shell (it escapes `$`, `` ` ``,
/// `"`, `\` and a newline, and is itself before anything else: `grep "a\|b"`), and
/// [`unescape`] reads it so; elsewhere outside single quotes it is not plain.
fn characters(command: &str, out: &mut Vec<String>) {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut quote = Quote::None;
    let mut escaped = false;
    for (i, c) in command.char_indices() {
        let was_escaped = std::mem::take(&mut escaped);
        let why = match c {
            '\'' if quote == Quote::None && !was_escaped => {
                quote = Quote::Single;
                None
            }
            '\'' if quote == Quote::Single => {
                quote = Quote::None;
                None
            }
            '"' if quote == Quote::None && !was_escaped => {
                quote = Quote::Double;
                None
            }
            '"' if quote == Quote::Double && !was_escaped => {
                quote = Quote::None;
                None
            }
            '\n' | '\r' => Some("newline or carriage return".to_string()),
            '\\' if quote == Quote::Double => {
                escaped = !was_escaped;
                None
            }
            '\\' if quote == Quote::None => {
                escaped = !was_escaped;
                Some("backslash escape".to_string())
            }
            // A blank to bash as to a reader (shown escaped all the same).
            '\t' => None,
            c if is_look_alike(c) => Some(format!(
                "look-alike of shell syntax U+{:04X} `{c}`",
                c as u32
            )),
            // What the owner cannot see, by the one classification every front escapes.
            c => hidden(c).map(|kind| format!("{kind} U+{:04X}", c as u32)),
        };
        if let Some(why) = why {
            out.push(format!("{why} at offset {i}"));
        }
    }
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
    /// sh may be dash, which reads `&>` as `&` (a background job) and `>`.
    sh: bool,
    /// Check what bash, and zsh, read differently from sh.
    bash: bool,
    zsh: bool,
    /// Levels of nested syntax around the node being walked.
    nesting: usize,
    /// Calls of `node` and `value` on the stack.
    frames: usize,
    /// `MAX_COMMANDS` was reached (and said).
    too_many: bool,
}

/// Words that start a command in one shell and are a program (or nothing) in another:
/// the shells they are syntax in, and what they do there.
const KEYWORDS: &[(&str, &[Shell], &str)] = &[
    (
        "coproc",
        &[Shell::Bash, Shell::Zsh],
        "runs the rest as a background coprocess",
    ),
    (
        "repeat",
        &[Shell::Zsh],
        "runs the rest of the command repeatedly",
    ),
    ("nocorrect", &[Shell::Zsh], "runs the rest as the command"),
    ("noglob", &[Shell::Zsh], "runs the rest as the command"),
    ("-", &[Shell::Zsh], "runs the rest as the command"),
];

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

    /// Says that `node` is nested too deep to walk, and collects the commands under it
    /// without recursion.
    fn too_deep(&mut self, node: Node<'_>) {
        let what = format!("syntax nested more than {MAX_NESTING} deep: too deep to analyse");
        self.at(node, &what);
        self.out.partial = true;
        self.flat_commands(node);
    }

    /// Says once that there are too many commands; true if there are.
    fn too_many(&mut self) -> bool {
        if self.out.commands.len() < MAX_COMMANDS {
            return false;
        }
        if !self.too_many {
            self.too_many = true;
            self.out.partial = true;
            self.not_plain(too_many_commands());
        }
        true
    }

    /// Visits `node`. `piped`: the statement's input comes from a pipe.
    fn node(&mut self, node: Node<'_>, piped: bool) {
        if self.frames >= MAX_FRAMES {
            return self.too_deep(node);
        }
        self.frames += 1;
        self.statement(node, piped);
        self.frames -= 1;
    }

    /// The children of a `program` or `list` as one sequence of statements and
    /// operators: `a && b || c` nests a list per operator, so they are unnested here,
    /// without recursion.
    fn sequence<'t>(&self, node: Node<'t>) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        let mut todo: Vec<Node<'t>> = self.children(node);
        todo.reverse();
        while let Some(n) = todo.pop() {
            if n.kind() == "list" {
                todo.extend(self.children(n).into_iter().rev());
            } else {
                out.push(n);
            }
        }
        out
    }

    fn statement(&mut self, node: Node<'_>, piped: bool) {
        match node.kind() {
            "program" | "list" => {
                for child in self.sequence(node) {
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

    /// Collects what runs inside a node that is itself not plain: one level deeper.
    fn nested(&mut self, node: Node<'_>) {
        if self.nesting >= MAX_NESTING {
            return self.too_deep(node);
        }
        self.nesting += 1;
        for child in self.children(node) {
            if child.is_named() {
                self.node_or_part(child);
            }
        }
        self.nesting -= 1;
    }

    /// The simple commands under `node` (itself included), collected without
    /// recursion, their words approximated: what runs in syntax nested too deep to walk.
    fn flat_commands(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        'walk: loop {
            let n = cursor.node();
            if n.kind() == "command" {
                if self.too_many() {
                    return;
                }
                self.flat_command(n);
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
    }

    fn flat_command(&mut self, node: Node<'_>) {
        let mut cmd = SimpleCommand::default();
        let mut raw = Vec::new();
        for child in self.children(node) {
            match child.kind() {
                "variable_assignment" => cmd.assignments.push(self.text(child).to_string()),
                k if k.ends_with("redirect") || k == "comment" => {}
                "command_name" => {
                    let word = child.named_child(0).unwrap_or(child);
                    raw.push(self.text(child).to_string());
                    cmd.words.push(self.flat_value(word));
                }
                _ if child.is_named() => {
                    raw.push(self.text(child).to_string());
                    cmd.words.push(self.flat_value(child));
                }
                _ => {}
            }
        }
        cmd.text = raw.join(" ");
        self.out.commands.push(cmd);
    }

    /// A word's value without recursion: quotes removed from its literal parts, the
    /// rest kept as written.
    fn flat_value(&self, node: Node<'_>) -> String {
        if node.kind() != "concatenation" {
            return self.flat_part(node);
        }
        self.children(node)
            .into_iter()
            .map(|part| self.flat_part(part))
            .collect()
    }

    fn flat_part(&self, node: Node<'_>) -> String {
        let text = self.text(node);
        match node.kind() {
            "word" => unescape(text, false),
            "raw_string" => text
                .strip_prefix('\'')
                .and_then(|t| t.strip_suffix('\''))
                .unwrap_or(text)
                .to_string(),
            "string"
                if self
                    .children(node)
                    .iter()
                    .all(|c| !c.is_named() || c.kind() == "string_content") =>
            {
                let inner = text
                    .strip_prefix('"')
                    .and_then(|t| t.strip_suffix('"'))
                    .unwrap_or(text);
                unescape(inner, true)
            }
            _ => text.to_string(),
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
                let _ = self.value(node, true, node.start_byte());
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
        if self.too_many() {
            return;
        }
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
                    let value = self.value(child, false, child.start_byte());
                    cmd.assignments.push(value);
                }
                "command_name" => {
                    self.keyword(child);
                    let inner = self.children(child);
                    let word = match inner.first() {
                        Some(w) => self.word(*w, true, w.start_byte()),
                        None => self.text(child).to_string(),
                    };
                    raw.push(self.text(child).to_string());
                    cmd.words.push(word);
                }
                k if k.ends_with("redirect") => self.redirect(child, index),
                "comment" => self.at(child, "comment `#`"),
                _ if child.is_named() => {
                    raw.push(self.text(child).to_string());
                    let word = self.word(child, true, child.start_byte());
                    cmd.words.push(word);
                }
                // A token that is no word (`==`, `=~` read as test operators): the
                // shells read it as part of a word, which the words would miss.
                _ => {
                    let what = format!(
                        "`{}` read as an operator inside a command",
                        self.text(child)
                    );
                    self.at(child, &what);
                }
            }
        }
        cmd.text = raw.join(" ");
        let heredoc = self.out.commands[index].heredoc.take();
        cmd.heredoc = heredoc;
        self.out.commands[index] = cmd;
    }

    /// A command's first word that is a keyword in one of the shells: the command that
    /// runs is not the one it names.
    fn keyword(&mut self, name: Node<'_>) {
        let text = self.text(name);
        let Some((word, shells, what)) = KEYWORDS.iter().find(|(w, _, _)| *w == text) else {
            return;
        };
        let (bash, zsh) = (shells.contains(&Shell::Bash), shells.contains(&Shell::Zsh));
        let shell = match (bash && self.bash, zsh && self.zsh) {
            (true, true) => "bash and zsh",
            (true, false) => "bash",
            (false, true) => "zsh",
            (false, false) => return,
        };
        let why = format!("`{word}` at the start of a command is a {shell} keyword: it {what}");
        self.at(name, &why);
    }

    /// One argument: its value with quotes removed. Checks what makes it not plain:
    /// unquoted glob characters, brace expansion, a leading tilde. `word_start`: where
    /// the whole word starts (this may be one part of it).
    fn word(&mut self, node: Node<'_>, first_part: bool, word_start: usize) -> String {
        if node.kind() == "word" {
            let text = self.text(node).to_string();
            self.unquoted(node, &text, first_part, word_start);
            return unescape(&text, false);
        }
        self.value(node, first_part, word_start)
    }

    /// Checks the unquoted text of a word (or of the part of one at `node`) for
    /// expansion the shell would do.
    fn unquoted(&mut self, node: Node<'_>, text: &str, first_part: bool, word_start: usize) {
        if text.contains(['*', '?', '[']) {
            self.at(node, "unquoted glob character (`*`, `?` or `[`)");
        }
        // Brace expansion needs a `,` or `..` between braces (`{a,b}`, `x{1..3}`); `{}`
        // and `{x}` stay as written in every shell (`find -exec … {} +`). The whole
        // word is read, quoted parts too, so `{a','b}` still counts: strict, not loose.
        if text.contains(['{', '}']) && !inert_braces(self.whole_word(node)) {
            self.at(node, "brace expansion `{…}`");
        }
        // The shell splits words at blanks outside quotes: a word the parser found with
        // one inside means the two disagree about the words.
        if text.contains([' ', '\t']) {
            self.at(
                node,
                "a word the parser and the shell would split differently",
            );
        }
        if first_part && text.starts_with('~') {
            self.at(node, "tilde expansion `~` at the start of a word");
        }
        if text.starts_with('#') {
            self.at(node, "comment `#`");
        }
        // zsh's EQUALS option (on by default): `=name` becomes the path of command
        // `name`, or fails the command. A lone `=` stays.
        let lone = text == "=" && self.word_ends(node);
        if self.zsh && first_part && text.starts_with('=') && !lone {
            self.at(
                node,
                "zsh `=` expansion: an unquoted word starting with `=` becomes a command's path",
            );
        }
        if self.bash && self.tilde_after_equals(node, text, word_start) {
            self.at(
                node,
                "bash tilde expansion: `~` after `=` or `:` in a word that looks like an assignment",
            );
        }
    }

    /// The whole shell word `node` is part of, as written (a concatenation of quoted
    /// and unquoted parts is one word).
    fn whole_word(&self, node: Node<'_>) -> &str {
        let mut word = node;
        while let Some(parent) = word.parent() {
            if parent.kind() != "concatenation" {
                break;
            }
            word = parent;
        }
        self.src.get(word.byte_range()).unwrap_or("")
    }

    /// True if the word ends where `node` does (no quoted part follows it).
    fn word_ends(&self, node: Node<'_>) -> bool {
        self.src
            .get(node.end_byte()..)
            .unwrap_or("")
            .chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || matches!(c, ';' | '&' | '|' | ')' | '<' | '>'))
    }

    /// bash (unless in POSIX mode) expands a `~` that follows the first `=`, or a `:`
    /// after it, in any word that looks like an assignment, arguments included:
    /// `echo a=~/x a=x:~/y` prints home directories; sh and zsh print them as written.
    /// Counted high: any unquoted `~` right after `=`, or after `:` with an `=` earlier
    /// in the word (`--prefix=~/x` too, whatever bash's version decides for it).
    fn tilde_after_equals(&self, node: Node<'_>, text: &str, word_start: usize) -> bool {
        let start = node.start_byte();
        text.match_indices('~').any(|(i, _)| {
            let before = self
                .src
                .get(word_start.min(start + i)..start + i)
                .unwrap_or("");
            match before.chars().last() {
                Some('=') => true,
                Some(':') => before.contains('='),
                _ => false,
            }
        })
    }

    /// The value of any word-like node, flagging every part that is not plain and
    /// collecting commands nested in substitutions. `word_start`: where the whole word
    /// starts.
    fn value(&mut self, node: Node<'_>, first_part: bool, word_start: usize) -> String {
        if self.frames >= MAX_FRAMES {
            self.too_deep(node);
            return self.text(node).to_string();
        }
        self.frames += 1;
        let value = self.part(node, first_part, word_start);
        self.frames -= 1;
        value
    }

    fn part(&mut self, node: Node<'_>, first_part: bool, word_start: usize) -> String {
        match node.kind() {
            "word" => self.word(node, first_part, word_start),
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
                        value.push_str(self.src.get(last..child.start_byte()).unwrap_or(""));
                    }
                    last = child.end_byte();
                    if child.kind() == "string_content" {
                        value.push_str(&unescape(self.text(child), true));
                    } else {
                        value.push_str(&self.value(child, false, child.start_byte()));
                    }
                }
                let end = node.end_byte().saturating_sub(1);
                if end > last {
                    value.push_str(self.src.get(last..end).unwrap_or(""));
                }
                value
            }
            "concatenation" => {
                let mut value = String::new();
                for (i, child) in self.children(node).into_iter().enumerate() {
                    if child.is_named() {
                        value.push_str(&self.value(child, first_part && i == 0, word_start));
                    } else {
                        let t = self.text(child).to_string();
                        self.unquoted(child, &t, first_part && i == 0, word_start);
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
                    .map(|c| self.value(*c, false, c.start_byte()))
                    .collect::<Vec<_>>()
                    .join(" ");
                self.set_heredoc(index, value.clone());
                self.out.redirects.push(Redirect {
                    op: "<<<".into(),
                    target: value,
                });
            }
            _ if self.harmless_redirect(&children, &op) => {}
            _ => {
                let what = format!("redirect `{op}`");
                self.at(node, &what);
                let target = children
                    .iter()
                    .filter(|c| c.is_named() && c.kind() != "file_descriptor")
                    .map(|c| self.value(*c, false, c.start_byte()))
                    .collect::<Vec<_>>()
                    .join(" ");
                self.out.redirects.push(Redirect { op, target });
            }
        }
    }

    /// Whether a redirection only moves a standard stream: to or from the null device
    /// (`2>/dev/null`, `>/dev/null`, `&>/dev/null`, `</dev/null`) or onto another
    /// standard stream (`2>&1`, `1>&2`, `>&2`). It opens no file a program could use and
    /// writes nowhere, so it leaves the command plain. Only the literal forms count: a
    /// quoted or expanded target, another descriptor (`3>&1`), `>&FILE` (bash writes both
    /// streams to FILE) or `>|` stay redirections; `&>` is plain only where sh is not
    /// asked for, since dash reads it as `&` and `>`.
    fn harmless_redirect(&self, children: &[Node<'_>], op: &str) -> bool {
        let mut descriptor = None;
        let mut target = None;
        for child in children.iter().filter(|c| c.is_named()) {
            match child.kind() {
                "file_descriptor" if descriptor.is_none() => descriptor = Some(self.text(*child)),
                _ if target.is_none() => target = Some((child.kind(), self.text(*child))),
                _ => return false,
            }
        }
        let standard = |fd: &str| matches!(fd, "0" | "1" | "2");
        if descriptor.is_some_and(|fd| !standard(fd)) {
            return false;
        }
        match (op, target) {
            (">" | ">>" | "<", Some(("word", "/dev/null"))) => true,
            ("&>" | "&>>", Some(("word", "/dev/null"))) => !self.sh && descriptor.is_none(),
            (">&", Some(("number" | "word", fd))) => standard(fd) && fd != "0",
            ("<&", Some(("number" | "word", "0"))) => true,
            _ => false,
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
            "find . -name x -exec cat {} +",
            "echo {} {x} a{b}c",
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
            ("ls 2>/tmp/x", "redirect `>`"),
            ("ls 3>&1", "redirect"),
            ("ls >&out", "redirect"),
            ("ls 2>\"/dev/null\"", "redirect"),
            ("ls >|/dev/null", "redirect"),
            ("ls 2>&-", "redirect"),
            ("ls >/dev/null/x", "redirect"),
            ("echo a\"b\\\\\"c\\d", "backslash"),
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
            ("echo x{a,b}y", "brace expansion"),
            ("echo {a','b}", "brace expansion"),
            ("echo '{'}", "brace expansion"),
            ("echo {'}'", "brace expansion"),
            ("cat ~/x", "tilde"),
            ("ls # hi", "comment"),
            ("ls\nrm -rf /", "newline"),
            ("ls\rrm", "newline"),
            ("ls \u{1b}[2J", "control character"),
            ("ls \u{202e}x", "invisible format character U+202E"),
            (
                "head -n 5 notes.txt\u{E0041}",
                "invisible format character U+E0041",
            ),
            ("ls x\u{FE0F}", "default-ignorable"),
            ("ls x\u{E0100}", "default-ignorable"),
            ("ls x\u{206A}", "invisible format"),
            ("ls x\u{1D173}", "invisible format"),
            ("ls x\u{2800}", "blank-looking"),
            ("ls x\u{E000}", "private-use"),
            ("ls x\u{378}", "unassigned"),
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

    /// What agents write around a command without meaning anything by it: the standard
    /// streams sent to the null device or to each other, a backslash inside double
    /// quotes. Plain, with no redirection recorded (issue 33).
    #[test]
    fn harmless_plumbing_is_plain() {
        for command in [
            "cargo test 2>&1 | tail -30",
            "ls src 2>/dev/null",
            "git status >/dev/null",
            "make >/dev/null 2>&1",
            "cat README.md 1>&2",
            "ls >&2",
            "ls 2>>/dev/null",
            "ls </dev/null",
            "grep -n \"a\\|b\" src/main.rs",
            "grep -n \"fn \\w\\+\" src/lib.rs",
            "echo \"a\\\"b\"",
        ] {
            let a = analyse(command);
            assert_eq!(a.not_plain, Vec::<String>::new(), "{command}");
            assert_eq!(a.redirects, Vec::new(), "{command}");
        }
        assert_eq!(
            words("grep -n \"a\\|b\" f"),
            [vec!["grep", "-n", "a\\|b", "f"]]
        );
        // dash reads `&>` as a background job and a redirection.
        assert!(analyse_for("ls &>/dev/null", &[Shell::Bash, Shell::Zsh]).plain());
        assert!(!analyse_for("ls &>/dev/null", &[Shell::Sh]).plain());
    }

    #[test]
    fn backslashes_are_removed_as_bash_would() {
        assert_eq!(words("\\rm -rf a\\ b"), [vec!["rm", "-rf", "a b"]]);
        assert_eq!(words("echo \"a\\\"b\\$x\\n\""), [vec!["echo", "a\"b$x\\n"]]);
        assert_eq!(words("echo 'a\\b'"), [vec!["echo", "a\\b"]]);
    }

    /// Commands nested `n` deep in each shape the walk recurses through, with the levels
    /// of nesting each repetition adds.
    fn nested_shapes(n: usize) -> Vec<(&'static str, usize, String)> {
        vec![
            ("$(", 1, format!("echo {}{}", "$(".repeat(n), ")".repeat(n))),
            (
                "backticks in $(",
                2,
                format!("echo {}x{}", "$(`".repeat(n / 2), "`)".repeat(n / 2)),
            ),
            (
                "( subshells",
                1,
                format!("{}ls{}", "( ".repeat(n), " )".repeat(n)),
            ),
            (
                "{ groups",
                1,
                format!("{}ls{}", "{ ".repeat(n), "; }".repeat(n)),
            ),
            (
                "\"$( in quotes",
                1,
                format!("echo {}ls{}", "\"$(".repeat(n), ")\"".repeat(n)),
            ),
            (
                "if",
                1,
                format!("{}ls{}", "if true; then ".repeat(n), "; fi".repeat(n)),
            ),
            (
                "for",
                2,
                format!(
                    "{}ls{}",
                    "for x in a; do ".repeat(n / 2),
                    "; done".repeat(n / 2)
                ),
            ),
        ]
    }

    /// No bound but the walk's: what the tests below need to reach it.
    const LIFTED: Limits = Limits {
        max_len: usize::MAX,
        max_tokens: usize::MAX,
        budget: Duration::from_secs(60),
    };

    fn deep_reason(a: &Analysis) -> bool {
        a.not_plain
            .iter()
            .any(|r| r.contains("nested") && r.contains("deep"))
    }

    #[test]
    fn deep_nesting_returns_not_plain() {
        for (shape, _, command) in nested_shapes(10_000) {
            // Too long, or too many tokens, to parse at all.
            let a = analyse(&command);
            assert!(!a.plain(), "{shape}");
            assert!(
                a.not_plain.iter().any(|r| r.starts_with("too ")),
                "{shape}: {:?}",
                a.not_plain
            );
            // Parsed anyway: the walk stops descending.
            let a = analyse_within(&command, &Shell::ALL, LIFTED);
            assert!(!a.plain(), "{shape}");
            assert!(deep_reason(&a), "{shape}: {:?}", a.not_plain);
            assert!(a.commands.len() <= MAX_COMMANDS, "{shape}");
        }
    }

    #[test]
    fn deep_arithmetic_in_few_tokens_returns_not_plain() {
        // 32 KB that count as a handful of tokens (`1+1+…` is one word to the count),
        // parsed into 16,000 nested binary expressions.
        for command in [
            format!("echo $(({}1))", "1+".repeat(16_000)),
            format!("(({}1))", "1+".repeat(16_000)),
            format!("echo $(({}", "1+".repeat(16_000)),
        ] {
            // Under the default limits it is not plain either way (nested too deep, or,
            // on a loaded machine, over the time budget first).
            let a = analyse(&command);
            assert!(
                deep_reason(&a) || a.not_plain.iter().any(|r| r.contains("time budget")),
                "{:?}",
                a.not_plain
            );
            // With the budget lifted, the depth limit is what stops the walk.
            let a = analyse_within(&command, &Shell::ALL, LIFTED);
            assert!(deep_reason(&a), "{:?}", a.not_plain);
        }
    }

    #[test]
    fn nesting_is_walked_up_to_the_limit_and_no_further() {
        for (shape, levels, command) in nested_shapes(MAX_NESTING) {
            let a = analyse(&command);
            assert!(!deep_reason(&a), "{shape}: {:?}", a.not_plain);
            let (_, _, deeper) = nested_shapes(MAX_NESTING + levels)
                .into_iter()
                .find(|(s, _, _)| *s == shape)
                .unwrap();
            let a = analyse(&deeper);
            assert!(deep_reason(&a), "{shape}: {:?}", a.not_plain);
        }
    }

    #[test]
    fn commands_nested_too_deep_are_still_found() {
        let command = format!("{}rm -rf '/x'{}", "( ".repeat(100), " )".repeat(100));
        let a = analyse(&command);
        assert!(deep_reason(&a), "{:?}", a.not_plain);
        assert_eq!(words(&command), [vec!["rm", "-rf", "/x"]]);
        let command = format!(
            "echo {}shutdown \"now\"{}",
            "\"$(".repeat(40),
            ")\"".repeat(40)
        );
        let programs: Vec<Vec<String>> = words(&command);
        assert_eq!(programs[0][0], "echo");
        assert!(programs.contains(&vec!["shutdown".to_string(), "now".to_string()]));
    }

    #[test]
    fn the_walk_at_its_limit_fits_in_a_small_stack() {
        // Debug builds use the most stack; the daemon's threads have 2 MiB.
        let shapes = nested_shapes(MAX_NESTING);
        std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn(move || {
                for (_, _, command) in shapes {
                    let _ = analyse(&command);
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn long_lists_are_walked_without_recursion() {
        let command = vec!["true"; 900].join(" && ");
        let a = analyse_within(&command, &Shell::ALL, LIFTED);
        assert!(a.plain(), "{:?}", a.not_plain);
        assert_eq!(a.commands.len(), 900);
    }

    #[test]
    fn too_many_commands_are_not_plain() {
        let command = vec!["true"; 1_200].join(";");
        let a = analyse_within(&command, &Shell::ALL, LIFTED);
        assert!(!a.plain());
        assert_eq!(a.commands.len(), MAX_COMMANDS);
        assert!(
            a.not_plain.iter().any(|r| r.contains("too many")),
            "{:?}",
            a.not_plain
        );
        assert!(a.partial);
    }

    #[test]
    fn partial_says_when_the_commands_may_not_be_all() {
        // Whole: not plain, yet every program is known.
        for whole in ["ls | cat", "ls $(id) > f", "(a; b) && { c; }", "x=1 y"] {
            assert!(!analyse(whole).partial, "{whole}");
        }
        let deep = format!(
            "{}x{}",
            "$(".repeat(MAX_NESTING + 2),
            ")".repeat(MAX_NESTING + 2)
        );
        let long = format!("echo {}", "a ".repeat(MAX_TOKENS + 1));
        for partial in [
            "ls '",
            "ls; $(rm",
            "if then fi",
            deep.as_str(),
            long.as_str(),
        ] {
            let a = analyse(partial);
            assert!(a.partial && !a.plain(), "{partial}: {a:?}");
        }
    }

    #[test]
    fn plainness_depends_on_the_shells() {
        use Shell::{Bash, Sh, Zsh};
        // Command, plain in sh, in bash, in zsh; what the reason says where it is not.
        // Each checked with the real shells (`printf '<%s>' …` with HOME=/h): zsh
        // prints `=sh` as /usr/bin/sh and runs `repeat`/`nocorrect`/`noglob`/`-` as
        // keywords; bash prints `a=~/x` as a=/h/x; sh (dash) prints all as written.
        for (command, sh, bash, zsh, why) in [
            ("echo =sh", true, true, false, "zsh `=`"),
            ("=ls -l", true, true, false, "zsh `=`"),
            ("ls =/bin/ls", true, true, false, "zsh `=`"),
            ("echo =\"sh\"", true, true, false, "zsh `=`"),
            ("echo '=sh' \"=sh\" a=b x==y", true, true, true, ""),
            ("echo = && ls", true, true, true, ""),
            ("echo a=~/x", true, false, true, "bash tilde"),
            ("echo _=~", true, false, true, "bash tilde"),
            ("echo a+=~", true, false, true, "bash tilde"),
            ("echo PATH=/bin:~/bin", true, false, true, "bash tilde"),
            ("echo a='x':~/y", true, false, true, "bash tilde"),
            // bash 5.2 leaves this one alone; counted high (other versions).
            ("./configure --prefix=~/x", true, false, true, "bash tilde"),
            ("scp host:~/x .", true, true, true, ""),
            ("echo a='~' a=\"~\" a=b~ a~b", true, true, true, ""),
            ("coproc ls", true, false, false, "coproc"),
            ("ls && coproc ls", true, false, false, "coproc"),
            ("repeat 3 ls", true, true, false, "repeat"),
            ("nocorrect ls", true, true, false, "nocorrect"),
            ("noglob ls", true, true, false, "noglob"),
            ("- ls", true, true, false, "keyword"),
            (
                "'noglob' ls; echo noglob coproc repeat -",
                true,
                true,
                true,
                "",
            ),
            // tree-sitter reads `==` here as a test operator, not a word: the shells
            // pass `==]`, the words would say `]` (found by tests/shell_words.rs).
            ("printf x ==]", false, false, false, "`==`"),
            ("printf x ==", false, false, false, "parse error"),
            ("ls a =~ b", false, false, false, "`=~`"),
            // Literal in all three by default (zsh's EXTENDED_GLOB is off, history
            // expansion is off in `-c`).
            (
                "echo a^b ^a a#b %1 a!b a~b x@y a,b a]b",
                true,
                true,
                true,
                "",
            ),
        ] {
            let plain = |shells: &[Shell]| analyse_for(command, shells).plain();
            let expected = [
                (&[Sh][..], sh),
                (&[Bash][..], bash),
                (&[Zsh][..], zsh),
                (&[Sh, Bash][..], sh && bash),
                (&[Sh, Zsh][..], sh && zsh),
                (&[Bash, Zsh][..], bash && zsh),
                (&Shell::ALL[..], sh && bash && zsh),
                (&[][..], sh && bash && zsh),
            ];
            for (shells, want) in expected {
                assert_eq!(plain(shells), want, "{command:?} in {shells:?}");
            }
            assert_eq!(analyse(command), analyse_for(command, &Shell::ALL));
            if !why.is_empty() {
                let r = reasons(command);
                assert!(r.contains(why), "{command:?}: {why:?} not in {r:?}");
            }
        }
    }

    #[test]
    fn analyse_for_parses_once_whatever_the_shells() {
        // Words and commands do not depend on the shells, only the verdict.
        let command = "echo =sh a=~/x && coproc ls";
        let all = analyse_for(command, &Shell::ALL);
        for shells in [&[Shell::Sh][..], &[Shell::Bash], &[Shell::Zsh]] {
            assert_eq!(analyse_for(command, shells).commands, all.commands);
        }
    }

    #[test]
    fn a_cancelled_parse_leaves_nothing_behind() {
        let slow = Limits {
            budget: Duration::ZERO,
            ..LIMITS
        };
        let long = vec!["a | b"; 150].join(" | ");
        let a = analyse_within(&long, &Shell::ALL, slow);
        assert!(
            a.not_plain.iter().any(|r| r.contains("time budget")),
            "{:?}",
            a.not_plain
        );
        // The lexical fallback still names the programs.
        assert_eq!(a.commands.len(), 300);
        // The next parse starts afresh, not where the cancelled one stopped.
        assert_eq!(words("git status"), [vec!["git", "status"]]);
        assert!(analyse("git status").plain());
    }

    #[test]
    fn too_many_tokens_are_not_parsed() {
        let command = format!("echo {}", "a=b ".repeat(MAX_TOKENS / 3 + 1));
        let a = analyse(&command);
        assert!(
            a.not_plain.iter().any(|r| r.contains("tokens")),
            "{:?}",
            a.not_plain
        );
        // A long single-quoted message is one token.
        let message = format!("git commit -m '{}'", "word, and more; ".repeat(2_000));
        assert!(analyse(&message).plain());
    }

    #[test]
    fn any_character_is_safe_to_parse() {
        // tree-sitter-bash's scanner calls isdigit() on the character after `{`: with a
        // code point past the C library's table (U+F0000, U+10FFFF) that read out of
        // bounds and killed the process with SIGSEGV.
        for c in [
            '\u{10FFFF}',
            '\u{F0000}',
            '\u{41E20}',
            '\u{FFFF}',
            'é',
            '日',
        ] {
            for command in [
                format!("echo {{{c}"),
                format!("echo x{{{c}"),
                format!("echo {{1..{c}"),
                format!("{{{c}"),
            ] {
                assert!(!analyse(&command).plain(), "{command:?}");
            }
        }
        // Words keep their characters.
        assert_eq!(
            words("git commit -m '修复 bug' 日本 é=1"),
            [vec!["git", "commit", "-m", "修复 bug", "日本", "é=1"]]
        );
        assert!(analyse("git commit -m '修复 bug' 日本 é=1").plain());
    }

    #[test]
    fn argv_is_plain_by_construction() {
        let argv = vec!["ls".to_string(), "a;b".to_string()];
        let a = Analysis::of_argv(&argv, "ls 'a;b'");
        assert!(a.plain());
        assert_eq!(a.commands[0].words, argv);
    }
}
