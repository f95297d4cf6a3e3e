//! execgate's reader for jq filters: the program operand of `jq FILTER files…`.
//!
//! execgate tokenises the filter with jq's own lexical rules and reports every place where
//! it reaches beyond its input: the environment (which may hold secrets) and jq code or
//! data loaded from files. jq 1.6, 1.7.1 and 1.8 lex differently in a few places, so the
//! filter is tokenised once per version and the reaches of all readings are joined; where
//! every version rejects the filter, execgate refuses it (a human decides).
//!
//! Lexical rules (jq's `src/lexer.l`), and where the versions differ:
//! * Blanks: space, tab, newline; jq 1.8 also carriage return (earlier it is an invalid
//!   character).
//! * Comments: `#` to the end of the line. jq 1.6 and 1.7.0 end a comment at CR or LF (the
//!   CR then is an invalid character); jq 1.7.1 ends it at LF only; jq 1.8 ends it at LF or
//!   CR LF, except that a backslash pair is skipped as a unit and a backslash before the line
//!   break continues the comment onto the next line. A line that is code in one version and
//!   comment in another is read as code (union of readings). A comment is not recognised
//!   inside a string.
//! * Identifiers: `[a-zA-Z_][a-zA-Z_0-9]*` segments joined by `::` with no blanks; nothing
//!   else (not `:`, not `.`) joins them. Keywords (`as def if then elif else end and or
//!   reduce foreach try catch label break import include module`, and `__loc__` in jq 1.6)
//!   win over identifiers of the same length; longer words are identifiers.
//! * Fields: `.name` with no blank is one token and never a call; `."name"` and `.[…]` are
//!   index expressions. `. name` with a blank is a syntax error in 1.6, 1.7 and 1.8
//!   ("try .["field"] instead"), so jq rejects it; execgate still reports the name.
//! * Variables: jq 1.6 lexes `$` alone and the grammar takes `'$' IDENT`, so blanks and
//!   comments may stand between them (`$ ENV`, `$ # c⏎ENV`). jq 1.7+ lexes `$name` (with
//!   `::`) as one token and `$__loc__` as its own token; `$ ENV` is a syntax error there.
//!   jq 1.7+ also has the private `$$$$name` form. Any variable whose last segment is `ENV`
//!   is reported, including binding sites such as `as $ENV`, which shadow it.
//! * Numbers: jq 1.6 `[0-9.]+([eE][+-]?[0-9]+)?` (so `.e1` is a broken number there and
//!   `1.5.x` swallows the second dot); jq 1.7+ `([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?`.
//! * Strings: `"…"` with JSON escapes (`\" \\ \/ \b \f \n \r \t \uXXXX`, surrogate pairs
//!   checked as jq's JSON parser does) and `\( … )` interpolation, which is code at any
//!   depth and may hold strings of its own. `@name "…"` is a format string; `@name` alone
//!   is a format filter.
//! * Operators: `!= == // //= |= += -= *= /= %= <= >= .. ?//` and single characters
//!   `. ? = ; , : | + - * / % $ < >`; brackets `( ) [ ] { }`, which jq's lexer itself
//!   matches (a stray or mismatched closer is an invalid character). Anything else outside
//!   strings and comments, including non-ASCII, is an invalid character.
//!
//! Object construction: `{name: …}` and `{name}` use `name` as a key (`{name}` means
//! `{name: .name}` in 1.6, 1.7 and 1.8), so `{env}` and `{env: 1}` read no environment,
//! while `{a: env}`, `{"a": env}`, `{(env|tostring): 1}` and `{$ENV}` do. A name counts as
//! a key only when the innermost open bracket is `{`, the token before is `{` or `,` and
//! the token after is `:`, `,` or `}`; jq 1.8 allows `if … then a, b … end` as an object
//! value, so execgate tracks `if … end` as a bracket of its own.
//!
//! Builtins that reach beyond the input, in any of jq 1.6, 1.7 and 1.8:
//! * Environment: `env` and `$ENV` (every variable). (`strftime`, `strflocaltime` and
//!   `localtime` read `TZ` too, which names a time zone and holds no secret: harmless.)
//!   reveals its offset.
//! * Modules: `import`, `include` (load jq code or JSON data from the search path),
//!   `module` (module metadata directive), `modulemeta` (reads a module file and reports
//!   its metadata), `get_search_list`, `get_jq_origin`, `get_prog_origin` (the module
//!   search path and the directories it is anchored to).
//!
//! Counted harmless: `input_filename` (a file name already on the command line),
//! `$__loc__` (file and line of the filter), `$ARGS` and `$JQ_BUILD_CONFIGURATION`
//! (command-line arguments and build constants), `getpath`, `paths`, `splits`, `ltrimstr`
//! and the other pure functions of their input, `input`/`inputs` (jq's own inputs),
//! `debug`, `stderr`, `halt_error`, `error`, `builtins`, `now`, `gmtime`, `mktime`,
//! `strptime`, `todate` (UTC with a fixed format). There is no `$__prog_args` in any of
//! these versions. A user definition may shadow a builtin (`def env: 1; env`); execgate
//! still reports the call.
//!
//! Outside this reader: jq options such as `-L`, `-f`, `--rawfile`, `--slurpfile` and
//! jq's automatic loading of `~/.jq` also reach files.

/// What a jq filter reaches beyond its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Reads the environment: `env`, `$ENV`, and anything else that does (say what you found).
    Environment(String),
    /// Loads jq code or data from files: `import`, `include`, module metadata and search-path builtins.
    Modules(String),
}

/// Tokenises the filter as jq does (1.6, 1.7 and 1.8: where versions differ, the union of
/// their readings), and reports every reach. Err: jq would reject it lexically, or this
/// reader cannot follow it exactly — a human decides.
pub fn read(filter: &str) -> Result<Vec<Reach>, String> {
    let mut reaches = Vec::new();
    let mut errors = Vec::new();
    for version in [Version::V1_6, Version::V1_7, Version::V1_8] {
        let lexed = lex(filter.as_bytes(), version);
        // Even a reading that fails part-way is searched: its reaches up to the failure
        // only ever add to what execgate reports.
        analyse(&lexed.tokens, &mut reaches);
        if let Some(e) = lexed.error {
            errors.push(format!("jq {}: {e}", version.name()));
        }
    }
    if errors.len() == 3 {
        return Err(errors.join("; "));
    }
    Ok(reaches)
}

/// Builtins that read the environment, with why.
const ENV_BUILTINS: &[(&str, &str)] = &[("env", "builtin that returns every environment variable")];

/// Builtins that reach module files or the module search path, with why.
const MODULE_BUILTINS: &[(&str, &str)] = &[
    ("modulemeta", "reads a module file from the search path"),
    ("get_search_list", "returns the module search path"),
    (
        "get_jq_origin",
        "returns the directory the module search path is anchored to",
    ),
    (
        "get_prog_origin",
        "returns the directory the module search path is anchored to",
    ),
];

/// The lexers execgate models. `V1_7` is jq 1.7.1; jq 1.7.0 differs only in ending a
/// comment at CR, which then is an invalid character, so it accepts a subset of 1.7.1's
/// filters with the same tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    V1_6,
    V1_7,
    V1_8,
}

impl Version {
    fn name(self) -> &'static str {
        match self {
            Version::V1_6 => "1.6",
            Version::V1_7 => "1.7",
            Version::V1_8 => "1.8",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    /// A name, possibly `a::b`: a call, a key, a definition or (jq 1.6 after `$`) a variable.
    Ident(String),
    Keyword(&'static str),
    /// `.name`: always an index, never a call.
    Field,
    /// jq 1.7+ `$name` as one token (the name without `$`).
    Var(String),
    /// jq 1.7+ `$__loc__`.
    Loc,
    /// A lone `$`.
    Dollar,
    Format,
    Number,
    StrStart,
    InterpStart,
    InterpEnd,
    StrEnd,
    Punct(&'static str),
    Open(u8),
    Close(u8),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    at: usize,
}

struct Lexed {
    tokens: Vec<Token>,
    error: Option<String>,
}

/// jq's lexer states that matter here: open brackets, interpolations and strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Paren,
    Bracket,
    Brace,
    Interp,
    Str,
}

const KEYWORDS: &[&str] = &[
    "as", "import", "include", "module", "def", "if", "then", "else", "elif", "and", "or", "end",
    "reduce", "foreach", "try", "catch", "label", "break",
];

const OPERATORS: &[&str] = &[
    "!=", "==", "//", "|=", "+=", "-=", "*=", "/=", "%=", "//=", "<=", ">=", "..", "?//", ".", "?",
    "=", ";", ",", ":", "|", "+", "-", "*", "/", "%", "$", "<", ">",
];

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Length of `[a-zA-Z_][a-zA-Z_0-9]*` at `i`, 0 if none.
fn word_len(b: &[u8], i: usize) -> usize {
    if i >= b.len() || !is_ident_start(b[i]) {
        return 0;
    }
    let mut j = i + 1;
    while j < b.len() && is_ident_char(b[j]) {
        j += 1;
    }
    j - i
}

/// Length of a `::`-joined identifier at `i`, 0 if none.
fn ident_len(b: &[u8], i: usize) -> usize {
    let mut j = i + word_len(b, i);
    if j == i {
        return 0;
    }
    while j + 2 < b.len() && b[j] == b':' && b[j + 1] == b':' && word_len(b, j + 2) > 0 {
        j = j + 2 + word_len(b, j + 2);
    }
    j - i
}

fn digits(b: &[u8], mut j: usize) -> usize {
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    j
}

/// Length of a number at `i` under `v`'s rule, 0 if none.
fn number_len(b: &[u8], i: usize, v: Version) -> usize {
    let mut j = i;
    if v == Version::V1_6 {
        while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
            j += 1;
        }
    } else if j < b.len() && b[j].is_ascii_digit() {
        j = digits(b, j);
        if j < b.len() && b[j] == b'.' {
            j = digits(b, j + 1);
        }
    } else if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
        j = digits(b, j + 1);
    }
    if j == i {
        return 0;
    }
    if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
        let mut k = j + 1;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            k += 1;
        }
        let end = digits(b, k);
        if end > k {
            j = end;
        }
    }
    j - i
}

fn hex4(b: &[u8]) -> Option<u32> {
    if b.len() != 4 || !b.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(b).ok()?, 16).ok()
}

/// Checks one run of escapes as jq's JSON parser does; returns the run's end.
fn escape_run(b: &[u8], i: usize) -> Result<usize, String> {
    // The run: (\\[^u(] | \\u[a-zA-Z0-9]{0,4})+
    let mut j = i;
    let mut units: Vec<(usize, Option<u32>)> = Vec::new();
    while j + 1 < b.len() && b[j] == b'\\' && b[j + 1] != b'(' {
        let c = b[j + 1];
        if c == b'u' {
            let mut k = j + 2;
            while k < b.len() && k < j + 6 && b[k].is_ascii_alphanumeric() {
                k += 1;
            }
            units.push((j, hex4(&b[j + 2..k]).or(Some(u32::MAX))));
            j = k;
        } else {
            if !b"\"\\/bfnrt".contains(&c) {
                return Err(format!("invalid escape at byte {j}"));
            }
            units.push((j, None));
            j += 2;
        }
    }
    let mut n = 0;
    while n < units.len() {
        if let (at, Some(u)) = units[n] {
            if u == u32::MAX {
                return Err(format!("invalid \\uXXXX escape at byte {at}"));
            }
            if (0xD800..=0xDBFF).contains(&u) {
                match units.get(n + 1) {
                    Some((_, Some(low))) if (0xDC00..=0xDFFF).contains(low) => n += 1,
                    _ => return Err(format!("invalid surrogate pair escape at byte {at}")),
                }
            }
        }
        n += 1;
    }
    Ok(j)
}

/// Tokenises `b` with `v`'s rules, up to the first lexical error.
fn lex(b: &[u8], v: Version) -> Lexed {
    let mut tokens = Vec::new();
    let mut stack: Vec<State> = Vec::new();
    let mut i = 0;
    let fail = |tokens: Vec<Token>, msg: String| Lexed {
        tokens,
        error: Some(msg),
    };
    loop {
        if stack.last() == Some(&State::Str) {
            if i >= b.len() {
                return fail(tokens, "unterminated string".into());
            }
            match b[i] {
                b'"' => {
                    stack.pop();
                    tokens.push(Token {
                        tok: Tok::StrEnd,
                        at: i,
                    });
                    i += 1;
                }
                b'\\' if i + 1 >= b.len() => {
                    return fail(tokens, format!("backslash at end of input, byte {i}"));
                }
                b'\\' if b[i + 1] == b'(' => {
                    tokens.push(Token {
                        tok: Tok::InterpStart,
                        at: i,
                    });
                    stack.push(State::Interp);
                    i += 2;
                }
                b'\\' => match escape_run(b, i) {
                    Ok(end) => i = end,
                    Err(e) => return fail(tokens, e),
                },
                _ => {
                    while i < b.len() && b[i] != b'"' && b[i] != b'\\' {
                        i += 1;
                    }
                }
            }
            continue;
        }
        if i >= b.len() {
            break;
        }
        let c = b[i];
        if c == b'#' {
            i = comment_end(b, i + 1, v);
            continue;
        }
        if c == b' ' || c == b'\t' || c == b'\n' || (c == b'\r' && v == Version::V1_8) {
            i += 1;
            continue;
        }
        // Longest match; on a tie the rule listed first in jq's lexer wins.
        let mut best: (usize, u8) = (0, u8::MAX);
        let mut offer = |len: usize, rule: u8| {
            if len > best.0 {
                best = (len, rule);
            }
        };
        let mut fixed: Option<&'static str> = None;
        let loc_word: &'static str = if v == Version::V1_6 {
            "__loc__"
        } else {
            "$__loc__"
        };
        for s in KEYWORDS
            .iter()
            .chain(OPERATORS)
            .chain(std::iter::once(&loc_word))
        {
            if b[i..].starts_with(s.as_bytes()) && s.len() > fixed.map_or(0, str::len) {
                fixed = Some(s);
            }
        }
        offer(fixed.map_or(0, str::len), 0);
        if b"[{()}]".contains(&c) {
            offer(1, 1);
        }
        if c == b'@' {
            let mut j = i + 1;
            while j < b.len() && is_ident_char(b[j]) {
                j += 1;
            }
            if j > i + 1 {
                offer(j - i, 2);
            }
        }
        offer(number_len(b, i, v), 3);
        if c == b'"' {
            offer(1, 4);
        }
        offer(ident_len(b, i), 5);
        if c == b'.' && word_len(b, i + 1) > 0 {
            offer(1 + word_len(b, i + 1), 6);
        }
        if c == b'$' && v != Version::V1_6 && ident_len(b, i + 1) > 0 {
            offer(1 + ident_len(b, i + 1), 7);
        }
        let (len, rule) = best;
        if len == 0 {
            return fail(tokens, format!("invalid character at byte {i}"));
        }
        let text = &b[i..i + len];
        let tok = match rule {
            0 => {
                let s = fixed.unwrap_or_default();
                if s == "$__loc__" {
                    Tok::Loc
                } else if s == "$" {
                    Tok::Dollar
                } else if KEYWORDS.contains(&s) || s == "__loc__" {
                    Tok::Keyword(s)
                } else {
                    Tok::Punct(s)
                }
            }
            1 => match c {
                b'(' | b'[' | b'{' => {
                    stack.push(match c {
                        b'(' => State::Paren,
                        b'[' => State::Bracket,
                        _ => State::Brace,
                    });
                    Tok::Open(c)
                }
                _ => {
                    let want = match c {
                        b')' => [State::Paren, State::Interp],
                        b']' => [State::Bracket, State::Bracket],
                        _ => [State::Brace, State::Brace],
                    };
                    match stack.last() {
                        Some(s) if want.contains(s) => {
                            let s = *s;
                            stack.pop();
                            if s == State::Interp {
                                Tok::InterpEnd
                            } else {
                                Tok::Close(c)
                            }
                        }
                        _ => {
                            return fail(tokens, format!("unbalanced `{}` at byte {i}", c as char));
                        }
                    }
                }
            },
            2 => Tok::Format,
            3 => Tok::Number,
            4 => {
                stack.push(State::Str);
                Tok::StrStart
            }
            5 => Tok::Ident(String::from_utf8_lossy(text).into_owned()),
            6 => Tok::Field,
            _ => Tok::Var(String::from_utf8_lossy(&text[1..]).into_owned()),
        };
        tokens.push(Token { tok, at: i });
        i += len;
    }
    if !stack.is_empty() {
        return fail(tokens, "unclosed bracket or string at end of input".into());
    }
    Lexed {
        tokens,
        error: None,
    }
}

/// Where the comment whose text starts at `i` ends (the line break itself is a blank).
fn comment_end(b: &[u8], mut i: usize, v: Version) -> usize {
    match v {
        Version::V1_6 => {
            while i < b.len() && b[i] != b'\n' && b[i] != b'\r' {
                i += 1;
            }
            i
        }
        Version::V1_7 => {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            i
        }
        Version::V1_8 => {
            while i < b.len() {
                match b[i] {
                    b'\\' if b.get(i + 1) == Some(&b'\\') || b.get(i + 1) == Some(&b'\n') => i += 2,
                    b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') => i += 3,
                    b'\n' => return i,
                    b'\r' if b.get(i + 1) == Some(&b'\n') => return i,
                    _ => i += 1,
                }
            }
            i
        }
    }
}

/// execgate's own bracket tracking: jq's lexical brackets, `if … end`, and the rest of a
/// bracket after `as`, `label` or `def` (which jq does not take as an object value; should
/// it ever, a comma there would belong to the pipe, not to the object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Paren,
    Bracket,
    Brace,
    Interp,
    If,
    Pipe,
}

fn last_segment(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

fn add(out: &mut Vec<Reach>, r: Reach) {
    if !out.contains(&r) {
        out.push(r);
    }
}

fn variable(name: &str, at: usize, out: &mut Vec<Reach>) {
    if last_segment(name) == "ENV" {
        add(
            out,
            Reach::Environment(format!(
                "`${name}` at byte {at}: every environment variable"
            )),
        );
    }
}

/// Searches one reading's tokens for reaches.
fn analyse(tokens: &[Token], out: &mut Vec<Reach>) {
    let mut frames: Vec<Frame> = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| &tokens[p].tok);
        let next = tokens.get(k + 1).map(|n| &n.tok);
        // An object key or `{name}` shorthand: a name, not a call.
        let key_slot = frames.last() == Some(&Frame::Brace)
            && matches!(prev, Some(Tok::Open(b'{') | Tok::Punct(",")))
            && matches!(next, Some(Tok::Punct(":" | ",") | Tok::Close(b'}')));
        match &t.tok {
            Tok::Open(c) => frames.push(match c {
                b'(' => Frame::Paren,
                b'[' => Frame::Bracket,
                _ => Frame::Brace,
            }),
            Tok::InterpStart => frames.push(Frame::Interp),
            Tok::Close(_) | Tok::InterpEnd => {
                while matches!(frames.last(), Some(Frame::If | Frame::Pipe)) {
                    frames.pop();
                }
                frames.pop();
            }
            Tok::Keyword(_) if key_slot => {}
            Tok::Keyword("if") => frames.push(Frame::If),
            Tok::Keyword("end") => {
                // Closes the innermost `if`, and any pipe opened inside it.
                let open = frames.iter().rposition(|f| !matches!(f, Frame::Pipe));
                if let Some(n) = open.filter(|n| frames[*n] == Frame::If) {
                    frames.truncate(n);
                }
            }
            Tok::Keyword("as" | "label" | "def") if frames.last() == Some(&Frame::Brace) => {
                frames.push(Frame::Pipe)
            }
            Tok::Keyword(kw @ ("import" | "include")) => add(
                out,
                Reach::Modules(format!(
                    "`{kw}` at byte {}: loads jq code or data from a file",
                    t.at
                )),
            ),
            Tok::Keyword("module") => add(
                out,
                Reach::Modules(format!(
                    "`module` at byte {}: module metadata directive",
                    t.at
                )),
            ),
            Tok::Ident(name) if matches!(prev, Some(Tok::Dollar)) => variable(name, t.at, out),
            Tok::Ident(_) if matches!(prev, Some(Tok::Keyword("def"))) || key_slot => {}
            Tok::Ident(name) => {
                let last = last_segment(name);
                for (b, why) in ENV_BUILTINS {
                    if *b == last {
                        add(
                            out,
                            Reach::Environment(format!("`{name}` at byte {}: {why}", t.at)),
                        );
                    }
                }
                for (b, why) in MODULE_BUILTINS {
                    if *b == last {
                        add(
                            out,
                            Reach::Modules(format!("`{name}` at byte {}: {why}", t.at)),
                        );
                    }
                }
            }
            Tok::Var(name) => variable(name, t.at, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_reached(f: &str) -> bool {
        matches!(read(f), Ok(r) if r.iter().any(|x| matches!(x, Reach::Environment(_))))
    }

    fn modules_reached(f: &str) -> bool {
        matches!(read(f), Ok(r) if r.iter().any(|x| matches!(x, Reach::Modules(_))))
    }

    // `{env}` is `{env: .env}` in jq 1.6-1.8; `$ env` is the variable `$env` (1.6) or a
    // syntax error (1.7+); in `# x\renv` jq 1.6 and 1.7.0 reject the CR and jq 1.7.1 and
    // 1.8 read one comment; jq takes neither `as` nor `label` nor `def` as an object value.
    #[rustfmt::skip]
    const HARMLESS: &[&str] = &[
        ".", ".name", ".env.HOME", ".\"env\"", ".[\"env\"]", "keys", "map(.a) | add", "\"env\"",
        "{a: .b}", ".[] | select(.x > 1)", "\"\\(.a)\"", "@base64 \"\\(.a)\"", "# env", "# env\n.",
        "{env}", "{env: 1}", "{a: 1, env}", "{env, a: .b}", "{if: 1}", "{import: 1, end: 2}",
        "$__loc__", "$__loc__.file", "input_filename", "getpath([\"a\"])", "\"#\\(.a)\\\"env\"",
        "\"\\\\(env)\"", "{a: if . then 1 else 2 end, env}", "def env: 1; 2", "$ARGS",
        ".a as $env | $env", "env_x", "xenv", ".e1", "todate", "\"\\ud800\\udc00\"",
        "{\"env\": 1}", "\"a\" | @sh", "[.[] | {name, env}]", "$ env",
        "# x\renv", "{a: if . then . as $x | 1 else 2 end, env}", "{a: try 1, env}",
        "{a: 1?, env}", "{a: 1 and 2, env}", "{a: -1, env}",
    ];

    // `$ ENV` and `$ # c⏎ENV` print the environment in jq 1.6; `# x \⏎env` is code in jq
    // 1.6 and 1.7 and comment in 1.8; `if … then 1, env, 2 …` is an object value in jq 1.8;
    // `. env`, `1.5.env` and `a::env` are rejected by jq but still reported.
    #[rustfmt::skip]
    const ENVIRONMENT: &[&str] = &[
        "env", "$ENV", "$ ENV", "$ # c\nENV", "{a:env}", "{a: env}", "[env]", "\"\\(env)\"",
        "\"\\(\"\\(env)\")\"", "env.PATH", "$__loc__ | env", "a::env", "{$ENV}", "{\"a\": env}",
        "{(env|tostring): 1}", "{a: 1 | env}", ".a:env", "{a: if . then 1, env, 2 else 3 end}",
        "def env: 1; env", "@base64 \"\\(env)\"", "$ENV.HOME", "$$$$ENV", "{$ ENV}",
        "# x \\\nenv", "# x \\\\\nenv", "1.5.env", "..env", ". env", "try env catch .", "# x\r\nenv",
        "{a: (1, env)}", "{(.a): env}",
        "\"\\(1 + \"\\(\"\\(\"x\" | env)\")\")\"", "{a: .[env:1]}", ". as $ENV | 1",
        "reduce env as $x (0; .)", "{env: env}", "{a: 1, env: env}", "$a::ENV",
        "{a: 1 as $x | 2, env}", "{a: label $f | 1, env}", "{a: def f: 1; f, env}",
        "{a: if . then . as $x | 1, env else 2 end}",
    ];

    #[rustfmt::skip]
    const MODULES: &[&str] = &[
        "import \"a\" as a; .", "include \"x\"; .", "import \"d\" as $d; $d", "modulemeta",
        "get_search_list", "get_jq_origin", "get_prog_origin", "module {a: 1}; .",
        "\"\\(\"x\" | modulemeta)\"",
    ];

    #[rustfmt::skip]
    const REJECTED: &[&str] = &[
        "\"abc", "(", ")", "{a: 1", "\"\\q\"", "\"\\u00\"", "\"\\ud800\"", "`", "a & b", "[)",
        "\"\\(1]\"", "\\", "\"\\", "é",
    ];

    #[test]
    fn harmless_filters_reach_nothing() {
        for f in HARMLESS {
            assert_eq!(read(f), Ok(vec![]), "filter {f:?}");
        }
    }

    #[test]
    fn environment_is_reported() {
        for f in ENVIRONMENT {
            assert!(env_reached(f), "filter {f:?}: {:?}", read(f));
        }
    }

    #[test]
    fn modules_are_reported() {
        for f in MODULES {
            assert!(modules_reached(f), "filter {f:?}: {:?}", read(f));
        }
    }

    #[test]
    fn lexical_errors_are_refused() {
        for f in REJECTED {
            assert!(read(f).is_err(), "filter {f:?}: {:?}", read(f));
        }
    }

    #[test]
    fn versions_are_joined() {
        // A CR is an invalid character in jq 1.6 and 1.7, a blank in jq 1.8.
        assert_eq!(read("env\r"), read("env"));
        // A CR inside a comment: jq 1.6 rejects, jq 1.7.1 and 1.8 read one comment.
        assert_eq!(read("# x\r env\n."), Ok(vec![]));
        // Comment continuation (1.8) hides the next line only there: code elsewhere.
        assert!(env_reached("1 # \\\n, env"));
        // `$ ENV` is read only by jq 1.6, but counts.
        assert!(env_reached("$ ENV"));
        assert!(lex(b"$ ENV", Version::V1_8).tokens.len() == 2);
    }

    // ---- differential test against the installed jq ----

    const CANARY: &str = "c4n4ry";

    use crate::policy::programs::testing::Rng;

    /// What may stand between two tokens.
    fn gap(r: &mut Rng) -> String {
        r.pick(&[
            "",
            " ",
            " ",
            "\n",
            "\t",
            " # note\n",
            " # \"q\" \\\n",
            " #\\\\\n",
            " # (env\n",
            " # a\\\n",
        ])
        .to_string()
    }

    /// A filter built from tricky pieces, well-formed for jq 1.6 but for rare atoms.
    fn filter(r: &mut Rng, depth: usize) -> String {
        const ATOMS: &[&str] = &[
            ".",
            ".a",
            ".env",
            ".\"env\"",
            ".[\"env\"]",
            "1",
            ".5",
            "1e2",
            "null",
            "\"s\"",
            "\"#x\"",
            "\"\\\"\"",
            "\"a\\\\b\"",
            "\"\\u0041\"",
            "$__loc__",
            "{}",
            "[]",
            "env",
            "$ENV",
            "$ ENV",
            "$ # c\nENV",
            "{env}",
            "{$ENV}",
            "{$ ENV}",
            "input_filename",
            "get_search_list",
            "{if: 1}",
            "env.execgate_k3y",
            "$ENV.execgate_k3y",
            "{a: env}",
            "{a:env}",
            "@base64 \"x\"",
            "@text",
            "getpath([\"a\"])",
            "$ARGS",
            "env|keys",
            "{\"env\": 1}",
            "$__loc__|env",
            "[env][0]",
            "{env: 2}",
            "{a: 1, env}",
            ".env_x",
            "builtins|length",
            "{(env|tostring): 1}",
            "{\"a\": env}",
            "{a: 1 | env}",
            "{env: env}",
            ". as $ENV | 1",
            "$__loc__ as $x | $x",
            "{a: .[\"env\"]}",
        ];
        // Rejected by jq 1.6 (some accepted by later versions): used sparingly, since one
        // of them makes a whole batch fall back to bisection.
        const REJECTED_BY_1_6: &[&str] = &[
            "{$__loc__}",
            ".e1",
            "1.5.env",
            ". env",
            "a::env",
            "$$$$ENV",
            "{end}",
            "..env",
            "{a: if . then 1, env, 2 else 3 end}",
        ];
        if depth == 0 || r.below(3) == 0 {
            return if r.below(60) == 0 {
                r.pick(REJECTED_BY_1_6).to_string()
            } else {
                r.pick(ATOMS).to_string()
            };
        }
        let mut x = || filter(r, depth - 1);
        let (a, b, c) = (x(), x(), x());
        let g = gap(r);
        // jq 1.6 takes only a term or a pipe of terms as an object value: parenthesise.
        match r.below(23) {
            0 => format!("({g}{a})"),
            1 => format!("[{a}{g}]"),
            2 => format!("{{a:{g}({a})}}"),
            3 => format!("{{\"k\": ({a})}}"),
            4 => format!("{{({a}|tostring):{g}1}}"),
            5 => format!("{{a: 1,{g}b: ({a})}}"),
            6 => format!("\"pre # \\({a}) post\""),
            7 => format!("@base64 \"\\({a})\""),
            8 => format!("@json \"a\\(\"\\({a})\")\""),
            9 => format!("{a}{g}|{b}"),
            10 => format!("{a},{g}{b}"),
            11 => format!("({a}) // ({b})"),
            12 => format!("if {a} then {b}{g} else {c} end"),
            13 => format!("try ({a}) catch ({b})"),
            14 => format!("({a}) as $v{g}| {b}"),
            15 => format!("reduce ({a}) as $x (null; {b})"),
            16 => format!("(def f: {a}; f)"),
            17 => format!("(def env: \"shadow\";{g}{b})"),
            18 => format!("label $out | {a}"),
            19 => format!("({a})?"),
            20 => format!("({a}).\"env\""),
            21 => format!(". as {{env: $e}} | {a}"),
            _ => format!("{{a: (1,{g}{a}), \"b\": (if . then ({b}) else 2 end)}}"),
        }
    }

    /// Loose concatenations of lexically tricky pieces, mostly rejected by jq.
    fn raw(r: &mut Rng) -> String {
        const PIECES: &[&str] = &[
            "env",
            "$",
            "ENV",
            "$ENV",
            "{",
            "}",
            "(",
            ")",
            "[",
            "]",
            "\"",
            "\\(",
            "\\\"",
            "#",
            "\\",
            "\n",
            " ",
            ":",
            "::",
            "a",
            ".",
            "..",
            "?//",
            ",",
            "|",
            "1",
            ".e1",
            "@base64",
            "if",
            "then",
            "else",
            "end",
            "def",
            "import",
            "\"#\"",
            "\"\\(env)\"",
            "\"\\(\"\\(",
            ")\")\"",
            "# c \\\n",
            "# c\n",
            "$__loc__",
            "__loc__",
            "{a:",
            "{env",
            "env}",
            "\r",
            "\t",
            "\"\\u00",
            "e1",
            "$ # x\n",
        ];
        let n = 1 + r.below(8);
        (0..n).map(|_| r.pick(PIECES)).collect()
    }

    /// A well-formed filter with a few bytes inserted, deleted or replaced.
    fn mutated(r: &mut Rng) -> String {
        const BYTES: &[u8] = b"\\\"#\n\r()[]{}$ :.,|?@e";
        let mut b = filter(r, 2).into_bytes();
        for _ in 0..1 + r.below(3) {
            let at = r.below(b.len() + 1);
            let c = BYTES[r.below(BYTES.len())];
            match r.below(3) {
                0 => b.insert(at, c),
                1 if at < b.len() => {
                    b.remove(at);
                }
                _ if at < b.len() => b[at] = c,
                _ => b.push(c),
            }
        }
        String::from_utf8_lossy(&b).into_owned()
    }

    fn find_jq() -> std::path::PathBuf {
        let path = std::env::var_os("PATH").unwrap_or_default();
        for dir in std::env::split_paths(&path) {
            let p = dir.join("jq");
            if p.is_file() {
                return p;
            }
        }
        panic!("differential test needs the real `jq` on PATH, and none was found: install jq");
    }

    struct Run {
        compiled: bool,
        stdout: String,
        stderr: String,
    }

    /// Runs `jq -n PROGRAM` with only the canary in its environment.
    fn run_jq(jq: &std::path::Path, program: &str) -> Option<Run> {
        use std::io::Read;
        use std::process::{Command, Stdio};
        let mut child = Command::new(jq)
            .arg("-nc")
            .arg(program)
            .env_clear()
            // The canary is a value under a name filters use, and a name of its own (for
            // `env | keys`); no filter's text holds it, since jq echoes filters in errors.
            .env("execgate_k3y", CANARY)
            .env(format!("{CANARY}_name"), "x")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn jq");
        let mut so = child.stdout.take().expect("stdout");
        let mut se = child.stderr.take().expect("stderr");
        let t1 = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = so.by_ref().take(1 << 20).read_to_end(&mut s);
            s
        });
        let t2 = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = se.by_ref().take(1 << 20).read_to_end(&mut s);
            s
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait jq") {
                break Some(s);
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        let stdout = String::from_utf8_lossy(&t1.join().unwrap_or_default()).into_owned();
        let stderr = String::from_utf8_lossy(&t2.join().unwrap_or_default()).into_owned();
        // jq exits 3 on a compile error, 2 on a usage error.
        let status = status?;
        Some(Run {
            compiled: !matches!(status.code(), Some(2) | Some(3)),
            stdout,
            stderr,
        })
    }

    #[derive(Default)]
    struct Tally {
        runs: usize,
        filters: usize,
        accepted: usize,
        leaked: usize,
        jq_accepts_reader_rejects: Vec<String>,
        reported_without_leak: usize,
        timeouts: usize,
        misses: Vec<String>,
    }

    /// Checks one filter against one jq run of it alone.
    fn judge(f: &str, run: &Run, t: &mut Tally) {
        t.filters += 1;
        if !run.compiled && std::env::var_os("EXECGATE_JQ_DEBUG").is_some() {
            eprintln!("REJ {f:?} {}", run.stderr.lines().next().unwrap_or(""));
        }
        let verdict = read(f);
        let leaked = run.stdout.contains(CANARY) || run.stderr.contains(CANARY);
        if run.compiled {
            t.accepted += 1;
            if verdict.is_err() {
                t.jq_accepts_reader_rejects.push(f.to_string());
            }
        }
        if leaked {
            t.leaked += 1;
            if verdict.is_ok() && !env_reached(f) {
                t.misses.push(format!("{f:?} => {verdict:?}"));
            }
        } else if env_reached(f) {
            t.reported_without_leak += 1;
        }
    }

    fn differential(jq: &std::path::Path, seed: u64, structured: usize, loose: usize) -> Tally {
        let mut r = Rng::new(seed ^ 0x9E37_79B9_7F4A_7C15);
        let mut batches: Vec<Vec<String>> = Vec::new();
        for chunk in (0..structured).collect::<Vec<_>>().chunks(40) {
            batches.push(chunk.iter().map(|_| filter(&mut r, 3)).collect());
        }
        let singles: Vec<String> = (0..loose)
            .map(|n| {
                if n % 2 == 0 {
                    raw(&mut r)
                } else {
                    mutated(&mut r)
                }
            })
            .collect();
        let tally = std::sync::Mutex::new(Tally::default());
        let work = std::sync::Mutex::new((batches, singles));
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    loop {
                        let job = {
                            let mut w = work.lock().unwrap();
                            match w.0.pop() {
                                Some(b) => Some(b),
                                None => w.1.pop().map(|f| vec![f]),
                            }
                        };
                        let Some(job) = job else { break };
                        let mut local = Tally::default();
                        run_job(jq, &job, &mut local);
                        let mut t = tally.lock().unwrap();
                        t.runs += local.runs;
                        t.filters += local.filters;
                        t.accepted += local.accepted;
                        t.leaked += local.leaked;
                        t.reported_without_leak += local.reported_without_leak;
                        t.timeouts += local.timeouts;
                        t.misses.extend(local.misses);
                        t.jq_accepts_reader_rejects
                            .extend(local.jq_accepts_reader_rejects);
                    }
                });
            }
        });
        tally.into_inner().unwrap()
    }

    /// Runs a batch as one jq program, each filter in its own marked, error-catching
    /// slot; a batch that does not compile, or leaks where it cannot be attributed,
    /// is halved until each filter runs alone.
    fn run_job(jq: &std::path::Path, job: &[String], t: &mut Tally) {
        let alone = |f: &str, t: &mut Tally| {
            t.runs += 1;
            match run_jq(jq, f) {
                Some(run) => judge(f, &run, t),
                None => {
                    eprintln!("jq timed out on {f:?}");
                    t.timeouts += 1
                }
            }
        };
        if job.len() == 1 {
            return alone(&job[0], t);
        }
        let program: String = job
            .iter()
            .enumerate()
            .map(|(n, f)| format!("\"@@{n}\", try ({f}\n) catch (\"@@err \" + tostring)"))
            .collect::<Vec<_>>()
            .join(",\n");
        t.runs += 1;
        let ran = run_jq(jq, &program);
        let Some(run) = ran else {
            let (left, right) = job.split_at(job.len() / 2);
            run_job(jq, left, t);
            return run_job(jq, right, t);
        };
        let leaked = run.stdout.contains(CANARY) || run.stderr.contains(CANARY);
        if leaked && !env_reached(&program) {
            t.misses.push(format!("batch {program:?}"));
        }
        if !run.compiled || !run.stdout.starts_with("\"@@0\"") || run.stderr.contains(CANARY) {
            let (left, right) = job.split_at(job.len() / 2);
            run_job(jq, left, t);
            return run_job(jq, right, t);
        }
        // Split stdout by markers.
        let mut parts = vec![String::new(); job.len()];
        let mut cur = None;
        for line in run.stdout.lines() {
            if let Some(n) = line
                .strip_prefix("\"@@")
                .and_then(|x| x.strip_suffix('"'))
                .and_then(|x| x.parse::<usize>().ok())
            {
                cur = Some(n);
            } else if let Some(n) = cur.filter(|n| *n < job.len()) {
                parts[n].push_str(line);
                parts[n].push('\n');
            }
        }
        for (f, stdout) in job.iter().zip(parts) {
            let run = Run {
                compiled: true,
                stdout,
                stderr: String::new(),
            };
            judge(f, &run, t);
        }
    }

    /// Runs the differential test against the jq on PATH (required) and against any
    /// further jq binaries listed, colon-separated, in EXECGATE_JQ_EXTRA (say, jq 1.7.1
    /// and 1.8 built from source). EXECGATE_JQ_SEED and EXECGATE_JQ_N change the seed and
    /// the number of structured filters.
    #[test]
    fn differential_against_real_jq() {
        let seed = std::env::var("EXECGATE_JQ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_1234_abcd_0001u64);
        let n = std::env::var("EXECGATE_JQ_N")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(2000);
        let mut binaries = vec![find_jq()];
        if let Some(extra) = std::env::var_os("EXECGATE_JQ_EXTRA") {
            binaries.extend(std::env::split_paths(&extra));
        }
        for jq in &binaries {
            let start = std::time::Instant::now();
            let t = differential(jq, seed, n, 300);
            eprintln!(
                "jq differential ({}, seed {seed}): {} filters in {} jq runs, {:.1}s; jq \
                 accepted {}, canary leaked {}; reader reported Environment without a leak {}; \
                 jq accepted but reader refused {}; timeouts {}",
                jq.display(),
                t.filters,
                t.runs,
                start.elapsed().as_secs_f64(),
                t.accepted,
                t.leaked,
                t.reported_without_leak,
                t.jq_accepts_reader_rejects.len(),
                t.timeouts
            );
            for f in t.jq_accepts_reader_rejects.iter().take(20) {
                eprintln!("  jq accepts, reader refuses: {f:?} => {:?}", read(f));
            }
            assert!(
                t.leaked > 0,
                "seed {seed}: nothing leaked the canary; is the test broken?"
            );
            assert!(
                t.misses.is_empty(),
                "seed {seed}, {}: jq printed the canary but the reader reported no \
                 Environment:\n{}",
                jq.display(),
                t.misses.join("\n")
            );
        }
    }
}
