//! execgate's reader of awk programs.
//!
//! Given the program text of `awk 'PROGRAM' files…`, execgate lists everything
//! the program can do beyond reading its input files and writing standard
//! output. awk's lexer cannot be read alone: whether `/` divides or starts a
//! regex literal is decided by gawk's and onetrueawk's grammars, by mawk's
//! previous token and by busybox's expected-token set, and the four disagree
//! on a few spots (a `/` inside a bracket expression of a regex, `/` after
//! `)` of `if`, after `++`, after `length`, …). Wherever they may disagree,
//! execgate follows every reading, drops readings that every implementation
//! rejects at lexing (unterminated or multi-line string or regex, stray
//! characters), and reports the union of what the remaining readings reach.
//! If none remains, or there are too many, it refuses with `Err`.

/// What an awk program does beyond reading its input files and printing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Runs a command: `system(…)`, `print | cmd`, `cmd | getline`, `|&`.
    Runs(&'static str),
    /// Reads a file or stream other than its input: `getline < f`. A bare
    /// `getline` or `getline var` reads the next input record and is not
    /// reported.
    Reads(&'static str),
    /// Writes a file: `print > f`, `print >> f`, `printf … > f`.
    Writes(&'static str),
    /// Reads the environment or process information: `ENVIRON`, `PROCINFO`, `SYMTAB`, `FUNCTAB`.
    Environment(&'static str),
    /// Changes which files it reads: `ARGV`, `ARGC` (any use is reported).
    Arguments(&'static str),
    /// Calls a function by name (`@f()`), loads code or an extension
    /// (`@include`, `@load`), or anything else gawk-specific that execgate
    /// does not follow.
    Code(&'static str),
}

/// How many readings execgate follows before it gives up on a program.
const MAX_READINGS: usize = 256;

/// Every reach of every plausible reading, deduplicated, in first-found
/// order. Err: no reading is valid, or too many readings to explore — a human
/// decides.
pub fn read(program: &str) -> Result<Vec<Reach>, String> {
    let readings = lex_all(program)?;
    if readings.is_empty() {
        return Err(
            "no awk implementation can lex this program (unterminated string or regex, or a stray character)"
                .to_string(),
        );
    }
    let mut out = Vec::new();
    for toks in &readings {
        reaches(toks, &mut out);
    }
    Ok(out)
}

// ---------------------------------------------------------------- tokens

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Close {
    /// Closes a grouping or call parenthesis: `/` after it divides.
    Group,
    /// Closes the head of `if`, `while`, `for`, `switch` or a function: mawk
    /// divides after it, the others start a regex.
    Control,
    /// No matching `(`.
    Unmatched,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Name,
    Number,
    Str,
    Regex,
    Op,
    Newline,
    At,
    RParen(Close),
}

#[derive(Clone, Copy, Debug)]
struct Tok<'a> {
    kind: Kind,
    text: &'a str,
}

impl Tok<'_> {
    fn is_name(&self, s: &str) -> bool {
        self.kind == Kind::Name && self.text == s
    }
}

const KEYWORDS: &[&str] = &[
    "BEGIN",
    "END",
    "BEGINFILE",
    "ENDFILE",
    "function",
    "func",
    "if",
    "else",
    "while",
    "for",
    "do",
    "break",
    "continue",
    "next",
    "nextfile",
    "exit",
    "return",
    "delete",
    "getline",
    "print",
    "printf",
    "in",
    "switch",
    "case",
    "default",
];

/// Built-in functions of any of the implementations. After one of these a
/// `/` is read both ways: mawk starts a regex after `length`, gawk divides.
const BUILTINS: &[&str] = &[
    "length",
    "substr",
    "index",
    "split",
    "sub",
    "gsub",
    "match",
    "sprintf",
    "sin",
    "cos",
    "atan2",
    "exp",
    "log",
    "sqrt",
    "int",
    "rand",
    "srand",
    "tolower",
    "toupper",
    "system",
    "close",
    "fflush",
    "gensub",
    "strftime",
    "systime",
    "mktime",
    "and",
    "or",
    "xor",
    "lshift",
    "rshift",
    "compl",
    "asort",
    "asorti",
    "patsplit",
    "isarray",
    "typeof",
    "strtonum",
    "dcgettext",
    "dcngettext",
    "bindtextdomain",
    "mkbool",
];

// ---------------------------------------------------------------- lexing

/// One reading in progress.
#[derive(Clone)]
struct Reading<'a> {
    pos: usize,
    toks: Vec<Tok<'a>>,
    /// For each open `(`: whether it opened a control head.
    opens: Vec<bool>,
}

enum Step<'a> {
    Done,
    Invalid,
    Fork(Vec<Reading<'a>>),
}

/// How a `/` may be read at this point.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slash {
    Regex,
    Divide,
    /// Either; `/=` after an operand is also both (gawk reads `1 /=/` as a
    /// regex where `/=` cannot assign).
    Either,
    /// After `++`/`--`: either, and mawk also drops the character after the
    /// `/` before it starts the regex.
    EitherIncDec,
}

fn lex_all(src: &str) -> Result<Vec<Vec<Tok<'_>>>, String> {
    let mut stack = vec![Reading {
        pos: 0,
        toks: Vec::new(),
        opens: Vec::new(),
    }];
    let mut started = 1usize;
    let mut done = Vec::new();
    while let Some(mut r) = stack.pop() {
        match lex_until_fork(src, &mut r) {
            Step::Done => done.push(r.toks),
            Step::Invalid => {}
            Step::Fork(alts) => {
                started += alts.len().saturating_sub(1);
                if started > MAX_READINGS {
                    return Err(format!(
                        "more than {MAX_READINGS} plausible readings of this awk program"
                    ));
                }
                stack.extend(alts);
            }
        }
    }
    Ok(done)
}

fn push<'a>(r: &mut Reading<'a>, src: &'a str, kind: Kind, start: usize, end: usize) {
    r.toks.push(Tok {
        kind,
        text: &src[start..end],
    });
    r.pos = end;
}

fn lex_until_fork<'a>(src: &'a str, r: &mut Reading<'a>) -> Step<'a> {
    let b = src.as_bytes();
    loop {
        let i = r.pos;
        let Some(&c) = b.get(i) else {
            return Step::Done;
        };
        match c {
            // \r, \f and \v: whitespace to some implementations, an error to
            // others; whitespace is the only reading that can run.
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => r.pos += 1,
            b'\n' => push(r, src, Kind::Newline, i, i + 1),
            b'#' => {
                let mut j = i;
                while j < b.len() && b[j] != b'\n' {
                    j += 1;
                }
                r.pos = j;
            }
            b'\\' => {
                // Continuation; mawk also lets blanks stand between the
                // backslash and the newline. Anything else is an error
                // everywhere.
                let mut j = i + 1;
                while j < b.len() && matches!(b[j], b' ' | b'\t' | b'\r') {
                    j += 1;
                }
                match b.get(j) {
                    Some(b'\n') => r.pos = j + 1,
                    None => r.pos = j,
                    Some(_) => return Step::Invalid,
                }
            }
            b'"' => match string_end(b, i + 1) {
                Some(e) => push(r, src, Kind::Str, i, e),
                None => return Step::Invalid,
            },
            b'/' => return slash(src, r),
            b'0'..=b'9' | b'.' if c != b'.' || b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                    j += 1;
                }
                if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
                    let mut k = j + 1;
                    if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
                        k += 1;
                    }
                    if k < b.len() && b[k].is_ascii_digit() {
                        while k < b.len() && b[k].is_ascii_digit() {
                            k += 1;
                        }
                        j = k;
                    }
                }
                push(r, src, Kind::Number, i, j);
            }
            b'A'..=b'Z' | b'a'..=b'z' | b'_' => {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                push(r, src, Kind::Name, i, j);
            }
            b'@' => push(r, src, Kind::At, i, i + 1),
            b'(' => {
                let control = opens_control(&r.toks);
                r.opens.push(control);
                push(r, src, Kind::Op, i, i + 1);
            }
            b')' => {
                let close = match r.opens.pop() {
                    Some(true) => Close::Control,
                    Some(false) => Close::Group,
                    None => Close::Unmatched,
                };
                push(r, src, Kind::RParen(close), i, i + 1);
            }
            _ => {
                let two = b.get(i + 1).copied();
                let len = match (c, two) {
                    (b'&', Some(b'&'))
                    | (b'|', Some(b'|'))
                    | (b'|', Some(b'&'))
                    | (b'>', Some(b'>'))
                    | (b'>', Some(b'='))
                    | (b'<', Some(b'='))
                    | (b'=', Some(b'='))
                    | (b'!', Some(b'='))
                    | (b'!', Some(b'~'))
                    | (b'+', Some(b'+'))
                    | (b'-', Some(b'-'))
                    | (b'+', Some(b'='))
                    | (b'-', Some(b'='))
                    | (b'*', Some(b'='))
                    | (b'%', Some(b'='))
                    | (b'^', Some(b'='))
                    | (b'*', Some(b'*')) => 2,
                    (
                        b'&' | b'|' | b'>' | b'<' | b'=' | b'!' | b'~' | b'+' | b'-' | b'*' | b'%'
                        | b'^' | b'?' | b':' | b'$' | b',' | b';' | b'{' | b'}' | b'[' | b']',
                        _,
                    ) => 1,
                    // Backquote, quote, control and non-ASCII characters are
                    // rejected by every implementation outside strings,
                    // regexes and comments.
                    _ => return Step::Invalid,
                };
                push(r, src, Kind::Op, i, i + len);
            }
        }
    }
}

/// Whether a `(` about to be pushed opens the head of a control statement or
/// of a function definition.
fn opens_control(toks: &[Tok]) -> bool {
    let n = toks.len();
    match toks.last() {
        Some(t) if t.kind == Kind::Name => {
            matches!(t.text, "if" | "while" | "for" | "switch")
                || (n >= 2 && (toks[n - 2].is_name("function") || toks[n - 2].is_name("func")))
        }
        _ => false,
    }
}

/// End (one past the closing quote) of a string whose body starts at `i`.
/// Every implementation lets a backslash escape any character, including a
/// newline, and rejects a bare newline or the end of the program.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => return Some(i + 1),
            b'\n' => return None,
            b'\\' => {
                b.get(i + 1)?;
                i += 2;
            }
            _ => i += 1,
        }
    }
    None
}

/// Every place a regex literal whose body starts at `i` may end (one past the
/// closing `/`). onetrueawk and busybox end it at the first unescaped `/`;
/// gawk and mawk not while they count it inside a bracket expression, and
/// they count brackets slightly differently, so both counts are kept and a
/// `/` that either calls bracketed gives one end and goes on. A bare newline
/// or the end of the program is an error everywhere.
fn regex_ends(b: &[u8], mut i: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    // gawk's count: brackets, index of the opening `[`, text collected.
    let mut g_in: i64 = 0;
    let mut g_first: i64 = -1;
    let mut g_buf: Vec<u8> = Vec::new();
    // mawk's count: brackets, index just past the opening `[`, text.
    let mut m_in: i64 = 0;
    let mut m_first: Option<usize> = None;
    let mut m_buf: Vec<u8> = Vec::new();
    while let Some(&c) = b.get(i) {
        match c {
            b'\n' => return ends,
            b'\\' => {
                match b.get(i + 1) {
                    None => return ends,
                    Some(b'\n') => {}
                    Some(b'/') => {
                        g_buf.extend_from_slice(b"\\/");
                        m_buf.push(b'/');
                    }
                    Some(&d) => {
                        g_buf.extend_from_slice(&[b'\\', d]);
                        m_buf.extend_from_slice(&[b'\\', d]);
                    }
                }
                i += 2;
                continue;
            }
            b'/' => {
                ends.push(i + 1);
                if g_in <= 0 && m_in <= 0 {
                    return ends;
                }
            }
            b'[' => {
                let colon = b.get(i + 1) == Some(&b':');
                if colon || g_in == 0 {
                    g_in += 1;
                    if g_in == 1 {
                        g_first = g_buf.len() as i64;
                    }
                }
                if m_in == 0 {
                    m_first = Some(m_buf.len() + 1);
                    m_in += 1;
                } else if colon {
                    m_in += 1;
                }
            }
            b']' => {
                let cur = g_buf.len() as i64;
                let keep = g_in > 0
                    && (cur == g_first + 1 || (cur == g_first + 2 && g_buf.last() == Some(&b'^')));
                if !keep {
                    g_in -= 1;
                    if g_in == 0 {
                        g_first = -1;
                    }
                }
                if m_in > 0 && Some(m_buf.len()) != m_first {
                    m_in -= 1;
                }
            }
            b'^' => {
                let k = m_buf.len();
                if m_first == Some(k) && k >= 1 && m_buf[k - 1] == b'[' {
                    m_first = Some(k + 1);
                }
            }
            _ => {}
        }
        g_buf.push(c);
        m_buf.push(c);
        i += 1;
    }
    ends
}

/// How a `/` is read after these tokens.
fn slash_mode(toks: &[Tok]) -> Slash {
    let Some(last) = toks.last() else {
        return Slash::Regex;
    };
    match last.kind {
        Kind::Newline => {
            // mawk skips newlines after the head of a control statement and
            // still divides there.
            match toks.iter().rev().find(|t| t.kind != Kind::Newline) {
                Some(t) if t.kind == Kind::RParen(Close::Control) => Slash::Either,
                _ => Slash::Regex,
            }
        }
        Kind::Number | Kind::Str | Kind::Regex | Kind::RParen(Close::Group) => Slash::Divide,
        Kind::RParen(_) => Slash::Either,
        Kind::Op if last.text == "]" => Slash::Divide,
        Kind::Op if last.text == "++" || last.text == "--" => Slash::EitherIncDec,
        Kind::Name if last.text == "getline" => Slash::Either,
        Kind::Name if KEYWORDS.contains(&last.text) => Slash::Regex,
        Kind::Name if BUILTINS.contains(&last.text) => Slash::Either,
        Kind::Name => Slash::Divide,
        _ => Slash::Regex,
    }
}

/// Reads the `/` at `r.pos`: continues the reading if there is one way,
/// otherwise returns every way as a fork.
fn slash<'a>(src: &'a str, r: &mut Reading<'a>) -> Step<'a> {
    let b = src.as_bytes();
    let i = r.pos;
    let mut mode = slash_mode(&r.toks);
    let assign = b.get(i + 1) == Some(&b'=');
    if mode == Slash::Divide && assign {
        mode = Slash::Either;
    }
    let mut alts = Vec::new();
    if mode != Slash::Regex {
        let mut d = r.clone();
        push(&mut d, src, Kind::Op, i, i + if assign { 2 } else { 1 });
        alts.push(d);
    }
    if mode != Slash::Divide {
        let mut starts = vec![i + 1];
        if mode == Slash::EitherIncDec && !assign && i + 1 < b.len() {
            starts.push(i + 2);
        }
        for s in starts {
            for e in regex_ends(b, s) {
                let mut g = r.clone();
                push(&mut g, src, Kind::Regex, i, e);
                alts.push(g);
            }
        }
    }
    match alts.len() {
        0 => Step::Invalid,
        1 => {
            *r = alts.pop().expect("one alternative");
            lex_until_fork(src, r)
        }
        _ => Step::Fork(alts),
    }
}

// ---------------------------------------------------------------- reaches

fn add(out: &mut Vec<Reach>, r: Reach) {
    if !out.contains(&r) {
        out.push(r);
    }
}

/// Whether a statement may end at a newline after this token: only after a
/// complete operand. Elsewhere (after `,`, `>`, an operator…) some
/// implementation reads on past the newline.
fn ends_operand(t: &Tok) -> bool {
    match t.kind {
        Kind::Number | Kind::Str | Kind::Regex | Kind::RParen(_) => true,
        Kind::Name => !KEYWORDS.contains(&t.text) || t.text == "getline",
        Kind::Op => matches!(t.text, "]" | "++" | "--"),
        _ => false,
    }
}

fn reaches(toks: &[Tok], out: &mut Vec<Reach>) {
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Kind::Name => match t.text {
                "system" => add(out, Reach::Runs("runs a command (`system`)")),
                "ENVIRON" => add(out, Reach::Environment("reads the environment (`ENVIRON`)")),
                "PROCINFO" => add(
                    out,
                    Reach::Environment("reads process information (`PROCINFO`)"),
                ),
                "SYMTAB" => add(
                    out,
                    Reach::Environment("reaches variables by name (`SYMTAB`)"),
                ),
                "FUNCTAB" => add(
                    out,
                    Reach::Environment("reaches functions by name (`FUNCTAB`)"),
                ),
                "ARGV" => add(
                    out,
                    Reach::Arguments("uses the list of files to read (`ARGV`)"),
                ),
                "ARGC" => add(
                    out,
                    Reach::Arguments("uses the count of files to read (`ARGC`)"),
                ),
                "getline" if getline_redirects(&toks[i + 1..]) => {
                    add(out, Reach::Reads("reads a file (`getline <`)"));
                }
                "print" | "printf" => {
                    if let Some(op) = print_redirect(&toks[i + 1..]) {
                        let r = match (t.text, op) {
                            ("print", ">") => "writes a file (`print >`)",
                            ("print", _) => "appends to a file (`print >>`)",
                            (_, ">") => "writes a file (`printf >`)",
                            _ => "appends to a file (`printf >>`)",
                        };
                        add(out, Reach::Writes(r));
                    }
                }
                _ => {}
            },
            Kind::Op if t.text == "|" => {
                add(out, Reach::Runs("runs a command through a pipe (`|`)"))
            }
            Kind::Op if t.text == "|&" => add(out, Reach::Runs("runs a coprocess (`|&`)")),
            Kind::At => match toks.get(i + 1) {
                // A typed regex constant `@/re/` is only a value.
                Some(n) if n.kind == Kind::Regex => {}
                Some(n) if n.is_name("include") => {
                    add(out, Reach::Code("includes awk source (`@include`)"))
                }
                Some(n) if n.is_name("load") => {
                    add(out, Reach::Code("loads an extension (`@load`)"))
                }
                Some(n) if n.is_name("namespace") => {
                    add(out, Reach::Code("switches namespace (`@namespace`)"))
                }
                _ => add(out, Reach::Code("calls a function by name (`@f()`)")),
            },
            _ => {}
        }
    }
}

/// Whether the `getline` before `rest` reads from `< file`: a `<` before its
/// operand can have ended. Conservative: anything but a clear end of the
/// operand keeps looking.
fn getline_redirects(rest: &[Tok]) -> bool {
    let mut depth = 0i64;
    for t in rest {
        match t.kind {
            Kind::Newline => return false,
            Kind::RParen(_) => {
                if depth == 0 {
                    return false;
                }
                depth -= 1;
            }
            Kind::Op => match t.text {
                "(" | "[" => depth += 1,
                "]" => {
                    if depth == 0 {
                        return false;
                    }
                    depth -= 1;
                }
                "<" if depth == 0 => return true,
                ";" | "{" | "}" => return false,
                "," | "&&" | "||" | "?" | ":" | "==" | "!=" | ">" | ">=" | "<=" | "~" | "!~"
                | "|" | "|&"
                    if depth == 0 =>
                {
                    return false;
                }
                _ => {}
            },
            Kind::Name if depth == 0 && t.text == "in" => return false,
            _ => {}
        }
    }
    false
}

/// The output redirection of the print or printf statement whose arguments
/// start `rest`: a `>` or `>>` outside every parenthesis and bracket.
/// (`|` and `|&` are reported wherever they stand.) The statement is taken to
/// run on until `;`, a brace, or a newline after a complete operand, so it
/// may run on too far but never stops too early.
fn print_redirect(rest: &[Tok]) -> Option<&'static str> {
    let mut depth = 0i64;
    let mut prev: Option<&Tok> = None;
    for t in rest {
        match t.kind {
            Kind::Newline if depth <= 0 && prev.is_none_or(ends_operand) => return None,
            Kind::Newline => {}
            Kind::RParen(_) => {
                depth -= 1;
            }
            Kind::Op => match t.text {
                "(" | "[" => depth += 1,
                "]" => depth -= 1,
                ";" | "{" | "}" => return None,
                ">" if depth <= 0 => return Some(">"),
                ">>" if depth <= 0 => return Some(">>"),
                _ => {}
            },
            _ => {}
        }
        if t.kind != Kind::Newline {
            prev = Some(t);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds of reach, without their wording.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum K {
        Runs,
        Reads,
        Writes,
        Env,
        Args,
        Code,
    }

    fn kind(r: &Reach) -> K {
        match r {
            Reach::Runs(_) => K::Runs,
            Reach::Reads(_) => K::Reads,
            Reach::Writes(_) => K::Writes,
            Reach::Environment(_) => K::Env,
            Reach::Arguments(_) => K::Args,
            Reach::Code(_) => K::Code,
        }
    }

    fn kinds(p: &str) -> Result<Vec<K>, String> {
        read(p).map(|v| v.iter().map(kind).collect())
    }

    #[test]
    fn harmless() {
        for p in [
            "{print $1}",
            "NR==1",
            "$3 > 10",
            "{ s += $2 } END { print s }",
            r"/a\/b/",
            r#"/"/ {print}"#,
            r#"{print "a > b"}"#,
            "length($0) > 80",
            r#"BEGIN{FS=":"} {print $1}"#,
            "{print ($1 > 2)}",
            "{ print $1 / 2 }",
            "{ x = a / b / c }",
            "{ print (a)/2, a[1]/3, NR/4 }",
            "/[/]/ {print}",
            "{ if ($3 > 10) print $1 }",
            "{ print (length($0) > 80 ? \"long\" : \"short\") }",
            "# a comment with system(\"x\") and \"\n{ print }",
            r##"{ print "#" ; print "/" }"##,
            "{ getline; print }",
            "{ getline line; print line }",
            "{ while ((getline line) > 0) n++ }",
            "{ print $1,\n $2 }",
            "{ print a\n}\n$2 < 3 { print }",
            "BEGIN { x = 1 } \\\n END { print x }",
            "@/re/ { print }",
            "{ print $1 }\r\n",
        ] {
            assert_eq!(kinds(p), Ok(vec![]), "{p:?}");
        }
    }

    #[test]
    fn reaches_table() {
        use K::*;
        let cases: &[(&str, &[K])] = &[
            // The old hole: a `"` inside a regex literal.
            (r#"BEGIN { if (/"/) {} ; system("id") } /"/ {}"#, &[Runs]),
            (r#"{ a / system("id") / 1 }"#, &[Runs]),
            (r#"{ x = NR / system("id") / 2 }"#, &[Runs]),
            (r#"{ x = $1 / system("id") / 2 }"#, &[Runs]),
            (r#"{ x = (a) / system("id") / 2 }"#, &[Runs]),
            (r#"{ x = a[1] / system("id") / 2 }"#, &[Runs]),
            (r#"{ x = NR++ / system("id") / 2 }"#, &[Runs]),
            (r#"/[/]/ ; system("x")"#, &[Runs]),
            (r#"/[/]/ { system("x") }"#, &[Runs]),
            (r#"{ if (x) /"/ ; system("x") ; y = "/" }"#, &[Runs]),
            (r#"{ while (x) /"/ ; system("x") ; y = "/" }"#, &[Runs]),
            (r#"{ for (;;) /"/ ; system("x") ; y = "/" }"#, &[Runs]),
            (r#"{ if (x) / 2 ; system("x") ; y = 1 / 2 }"#, &[Runs]),
            (r#"{ x = /#/ ; system("x") }"#, &[Runs]),
            (r##"{ x = "#" ; system("x") }"##, &[Runs]),
            ("{ x = 1 \\\n ; system(\"x\") }", &[Runs]),
            ("{ x = \"a\\\nb\" ; system(\"x\") }", &[Runs]),
            (r#"{ print > "f" }"#, &[Writes]),
            (r#"{ print >> "f" }"#, &[Writes]),
            (r#"{ printf("%s", $1) > "f" }"#, &[Writes]),
            (r#"{ printf "%s", $1 > "f" }"#, &[Writes]),
            (r#"{ print $1, ($2 > 1) > "f" }"#, &[Writes]),
            ("{ print $1,\n $2 > \"f\" }", &[Writes]),
            ("{ print $1 >\n \"f\" }", &[Writes]),
            (r#"{ print | "sh" }"#, &[Runs]),
            (r#"{ print |& "sh" }"#, &[Runs]),
            (r#"{ "date" | getline d }"#, &[Runs]),
            (r#"{ "date" |& getline d }"#, &[Runs]),
            (r#"{ getline line < "/etc/passwd" }"#, &[Reads]),
            (r#"{ getline < "/etc/passwd" }"#, &[Reads]),
            (r#"{ while ((getline line < f) > 0) n++ }"#, &[Reads]),
            (r#"{ getline a[1] < "f" }"#, &[Reads]),
            (r#"BEGIN { print ENVIRON["HOME"] }"#, &[Env]),
            (r#"BEGIN { print PROCINFO["pid"] }"#, &[Env]),
            (r#"BEGIN { print SYMTAB["x"] }"#, &[Env]),
            (r#"BEGIN { ARGV[1]="x" }"#, &[Args]),
            (r#"BEGIN { ARGC = 1 }"#, &[Args]),
            (r#"BEGIN { f = "system"; @f("id") }"#, &[Code]),
            (r#"BEGIN { @f() }"#, &[Code]),
            (r#"@include "x""#, &[Code]),
            (r#"@load "x""#, &[Code]),
            (r#"@namespace "x""#, &[Code]),
            // mawk reads `length / …` and `x++ / …` as a regex.
            (r#"{ x = length /"/ ; system("x") ; y = "/" }"#, &[Runs]),
            (r#"{ x = length / system("x") / 1 }"#, &[Runs]),
            // mawk drops the character after `++ /`.
            (r#"{ x++ /\/; system("x"); y = 1 / 2 }"#, &[Runs]),
            // gawk reads `/=` after a non-lvalue as a regex.
            (r#"{ print 1 /=/ 2; system("x") }"#, &[Runs]),
            // mawk divides after the head of an `if`, even across a newline.
            ("{ if (x)\n / system(\"x\") / 1 }", &[Runs]),
        ];
        for (p, want) in cases {
            let got = kinds(p);
            assert_eq!(got.as_deref(), Ok(*want), "{p:?}: {:?}", read(p));
        }
    }

    #[test]
    fn refusals() {
        for p in [
            "{ print \"abc }",
            "{ x = /abc }",
            "{ print \"a\nb\" }",
            "{ x = 1 ` }",
            "{ x = 4 é }",
        ] {
            assert!(read(p).is_err(), "{p:?}: {:?}", read(p));
        }
        let many = "/[/]/ {}\n".repeat(12);
        assert!(read(&many).is_err());
    }

    #[test]
    fn messages() {
        assert_eq!(
            read(r#"{ system("x"); system("y"); print | "z" }"#),
            Ok(vec![
                Reach::Runs("runs a command (`system`)"),
                Reach::Runs("runs a command through a pipe (`|`)"),
            ])
        );
    }

    // ------------------------------------------------------ differential

    use std::io::Write as _;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use crate::policy::programs::testing::Rng;

    // Commands only `touch` a marker in the scratch directory and file names
    // are plain relative names, so running a generated program (busybox,
    // onetrueawk) can only create files there. No string starts with `/`.
    const REACH: &[&str] = &[
        r#"system("touch c1")"#,
        r#"print "x" | "touch c2""#,
        r#""touch c3" | getline"#,
        r#""touch c4" | getline v"#,
        r#"print "x" > "w1""#,
        r#"print "x" >> "w2""#,
        r#"printf("%s", "y") > "w3""#,
        r#"printf "z" > "w4""#,
        r#"getline v < "rf""#,
        r#"getline < "rf""#,
        r#"x = ENVIRON["EGX"]"#,
        r#"ARGV[1] = "q""#,
        r#"close("w1")"#,
    ];
    const CALL: &[&str] = &[
        r#"system("touch c5")"#,
        r#"("touch c6" | getline)"#,
        r#"(getline v < "rf")"#,
        r#"ENVIRON["EGX"]"#,
        r#"length(ENVIRON)"#,
    ];
    const REGEX: &[&str] = &[
        r#"/"/"#,
        r"/#/",
        r"/[/]/",
        r"/a\/b/",
        r#"/[/"]/"#,
        r"/=/",
        r"/[]/]/",
        r"/[^/]/",
        r"/[[:alpha:]/]/",
        r"/x/",
        r#"/\"/"#,
        r"/[\/]/",
        r#"/]"/"#,
    ];
    const ATOM: &[&str] = &[
        "a",
        "NR",
        "$1",
        "(a)",
        "a[1]",
        "NR++",
        "x--",
        "length",
        "4",
        "$NF",
        r#""a/b""#,
        r##""#""##,
        r#"">""#,
        r#""a > b""#,
        r##""x\"#""##,
        "getline",
        "getline z",
        "length($0)",
    ];
    const OP: &[&str] = &[
        " / ", "/", " /= ", " > ", " < ", " >= ", " == ", " ~ ", " + ", " ", " && ", "/ ",
    ];
    const RAW: &[&str] = &["\"", "/", "#", "[", "]", "\\\n", "(", ")", "\n", " /\"/ "];
    const COND: &[&str] = &["x", "1", "$3 > 10", "a < b", "NR == 1", "/\"/", "(a)", "0"];

    fn atom(g: &mut Rng) -> String {
        match g.below(10) {
            0..=2 => g.pick(REGEX).to_string(),
            3 => g.pick(CALL).to_string(),
            _ => g.pick(ATOM).to_string(),
        }
    }

    fn expr(g: &mut Rng, depth: usize) -> String {
        let mut s = atom(g);
        let n = g.below(3);
        for _ in 0..n {
            s.push_str(g.pick(OP));
            if depth > 0 && g.chance(20, 100) {
                s.push('(');
                s.push_str(&expr(g, depth - 1));
                s.push(')');
            } else {
                s.push_str(&atom(g));
            }
        }
        s
    }

    fn stmt(g: &mut Rng, depth: usize) -> String {
        let mut s = String::new();
        if g.chance(8, 100) {
            s.push_str(g.pick(RAW));
        }
        match g.below(12) {
            0..=2 => s.push_str(g.pick(REACH)),
            3 | 4 => {
                let head = g.pick(&["if (", "while (0 && ", "for (;0 && "]);
                s.push_str(head);
                s.push_str(g.pick(COND));
                s.push_str(if head.starts_with("for") { ";)" } else { ")" });
                s.push_str(g.pick(&[" ", "\n", ""]));
                if depth > 0 && g.chance(50, 100) {
                    s.push_str(&stmt(g, depth - 1));
                } else if g.chance(50, 100) {
                    s.push_str(g.pick(REGEX));
                } else {
                    s.push_str("{}");
                }
            }
            5 => {
                s.push_str("print ");
                s.push_str(&expr(g, 1));
                if g.chance(30, 100) {
                    s.push_str(" > \"w5\"");
                }
            }
            6 => {
                s.push_str("print (");
                s.push_str(&expr(g, 1));
                s.push(')');
            }
            7 | 8 => {
                s.push_str("v = ");
                s.push_str(&expr(g, 2));
            }
            _ => s.push_str(&expr(g, 2)),
        }
        if g.chance(8, 100) {
            s.push_str(g.pick(RAW));
        }
        s
    }

    fn program(g: &mut Rng) -> String {
        let mut p = String::new();
        for _ in 0..1 + g.below(3) {
            if !p.is_empty() {
                p.push_str(g.pick(&["\n", " ", " ; "]));
            }
            match g.below(5) {
                0 => p.push_str("BEGIN "),
                1 => p.push_str("END "),
                2 => {
                    p.push_str(&expr(g, 1));
                    if g.chance(30, 100) {
                        continue;
                    }
                    p.push(' ');
                }
                _ => {}
            }
            p.push_str("{ ");
            for k in 0..1 + g.below(4) {
                if k > 0 {
                    p.push_str(g.pick(&["; ", "\n", " ; "]));
                }
                p.push_str(&stmt(g, 2));
            }
            p.push_str(" }");
        }
        p
    }

    /// What an oracle found in a program it accepted.
    type Found = Vec<K>;

    fn scratch() -> PathBuf {
        let d = std::env::temp_dir().join(format!("execgate-awk-diff-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch directory");
        d
    }

    fn have(cmd: &str, args: &[&str]) -> bool {
        Command::new(cmd)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    }

    /// mawk's compiled code: `None` if mawk rejects the program.
    fn mawk(prog: &Path) -> Option<Found> {
        let out = Command::new("mawk")
            .args(["-W", "dump", "-f"])
            .arg(prog)
            .stdin(Stdio::null())
            .output()
            .expect("run mawk");
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut found = Vec::new();
        let mut redir = 0i64;
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 3 || f[1] != "." {
                continue;
            }
            let (op, arg) = (f[2], f.get(3).copied().unwrap_or(""));
            match op {
                "system" => found.push(K::Runs),
                "print" | "printf" | "getline" => match redir {
                    -1 | -2 => found.push(K::Writes),
                    -3 | -4 => found.push(K::Runs),
                    -5 => found.push(K::Reads),
                    _ => {}
                },
                _ => {}
            }
            match arg {
                "ENVIRON" => found.push(K::Env),
                "ARGV" | "ARGC" => found.push(K::Args),
                _ => {}
            }
            redir = if op == "pushint" {
                arg.parse().unwrap_or(0)
            } else {
                0
            };
        }
        Some(found)
    }

    /// gawk's byte code from its debugger's `dump`: `None` if gawk rejects
    /// the program. The debugger quits before running anything.
    fn gawk(prog: &Path, cmds: &Path) -> Option<Found> {
        let out = Command::new("gawk")
            .arg(format!("--debug={}", cmds.display()))
            .arg("-f")
            .arg(prog)
            .stdin(Stdio::null())
            .output()
            .expect("run gawk");
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut found = Vec::new();
        for line in text.lines() {
            let Some(body) = line.split_once("] ").map(|x| x.1) else {
                continue;
            };
            let Some((op, rest)) = body.split_once(':') else {
                continue;
            };
            let (op, rest) = (op.trim(), rest.trim());
            let first = rest.split_whitespace().next().unwrap_or("");
            if op == "Op_builtin" && first == "system" {
                found.push(K::Runs);
            }
            if op.starts_with("Op_K_print") || op.starts_with("Op_K_getline") {
                if rest.contains("redir_type = \" | \"") || rest.contains("redir_type = \" |& \"") {
                    found.push(K::Runs);
                } else if rest.contains("redir_type = \" > \"")
                    || rest.contains("redir_type = \" >> \"")
                {
                    found.push(K::Writes);
                } else if rest.contains("redir_type = \" < \"") {
                    found.push(K::Reads);
                }
            }
            match first {
                "ENVIRON" | "PROCINFO" | "SYMTAB" | "FUNCTAB" => found.push(K::Env),
                "ARGV" | "ARGC" => found.push(K::Args),
                _ => {}
            }
            if op == "Op_indirect_func_call" {
                found.push(K::Code);
            }
        }
        Some(found)
    }

    /// Runs the program with an awk that has no dump (busybox, onetrueawk)
    /// inside an empty scratch directory, with no input and no environment.
    /// Returns whether it left a file there: it ran a command or wrote a file.
    fn run_leaves_file(awk: &[&str], prog: &Path, dir: &Path) -> bool {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).expect("run directory");
        let mut child = Command::new(awk[0])
            .args(&awk[1..])
            .arg("-f")
            .arg(prog)
            .current_dir(dir)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run awk");
        let start = Instant::now();
        loop {
            if child.try_wait().expect("wait").is_some() {
                break;
            }
            if start.elapsed() > Duration::from_secs(2) {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        // awk waits for its commands (`system`, and `pclose` of its pipes at
        // exit), so their markers are there once it has exited.
        std::fs::read_dir(dir)
            .map(|d| d.count() > 0)
            .unwrap_or(false)
    }

    #[derive(Default)]
    struct Tally {
        programs: usize,
        accepted: usize,
        refused: usize,
        refused_accepted: usize,
        refused_examples: Vec<String>,
        over: usize,
        over_examples: Vec<String>,
        ran: usize,
        failures: Vec<String>,
    }

    fn check(seed: u64, count: usize, worker: usize, tools: (bool, bool, bool)) -> Tally {
        let (have_gawk, have_bb, have_bwk) = tools;
        let dir = scratch().join(format!("w{worker}"));
        std::fs::create_dir_all(&dir).expect("worker directory");
        let prog = dir.join("prog.awk");
        let cmds = dir.join("gawk-cmds");
        std::fs::write(&cmds, "dump\nquit\n").expect("gawk commands");
        let run = dir.join("run");
        let mut g = Rng::new(seed);
        let mut t = Tally::default();
        for _ in 0..count {
            let p = program(&mut g);
            t.programs += 1;
            let mut f = std::fs::File::create(&prog).expect("program file");
            f.write_all(p.as_bytes()).expect("write program");
            drop(f);
            let mine = read(&p);
            let mut oracle: Vec<(&str, Found)> = Vec::new();
            if let Some(found) = mawk(&prog) {
                oracle.push(("mawk", found));
            }
            if have_gawk && let Some(found) = gawk(&prog, &cmds) {
                oracle.push(("gawk", found));
            }
            if !oracle.is_empty() {
                t.accepted += 1;
            }
            let Ok(mine) = mine else {
                t.refused += 1;
                if !oracle.is_empty() {
                    t.refused_accepted += 1;
                    if t.refused_examples.len() < 5 {
                        t.refused_examples.push(p.clone());
                    }
                }
                continue;
            };
            let mine: Vec<K> = mine.iter().map(kind).collect();
            for (name, found) in &oracle {
                for k in found {
                    if !mine.contains(k) {
                        t.failures.push(format!(
                            "{name} finds {k:?} that execgate misses in {p:?} (execgate: {mine:?})"
                        ));
                    }
                }
            }
            if !oracle.is_empty()
                && mine
                    .iter()
                    .any(|k| !oracle.iter().any(|(_, f)| f.contains(k)))
            {
                t.over += 1;
                if t.over_examples.len() < 5 {
                    t.over_examples
                        .push(format!("{p:?} execgate {mine:?} oracle {oracle:?}"));
                }
            }
            let mut runners: Vec<&[&str]> = Vec::new();
            if have_bb {
                runners.push(&["busybox", "awk"]);
            }
            if have_bwk {
                runners.push(&["original-awk"]);
            }
            for awk in runners {
                if run_leaves_file(awk, &prog, &run) {
                    t.ran += 1;
                    if !mine.contains(&K::Runs) && !mine.contains(&K::Writes) {
                        t.failures.push(format!(
                            "{} ran a command or wrote a file that execgate misses in {p:?} (execgate: {mine:?})",
                            awk.join(" ")
                        ));
                    }
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        t
    }

    /// Builds programs from tricky fragments and checks that whenever mawk
    /// (required), gawk or busybox/onetrueawk (when present) accept a program
    /// that runs a command, reads or writes a file or reads the environment,
    /// execgate reports it. EXECGATE_AWK_DIFF_N and EXECGATE_AWK_DIFF_SEED
    /// choose the size and the seed.
    #[test]
    fn differential_against_real_awks() {
        assert!(
            have("mawk", &["-W", "version"]),
            "the differential test needs mawk (apt-get install mawk)"
        );
        let have_gawk = have("gawk", &["--version"]);
        let have_bb = have("busybox", &["awk", "BEGIN{}"]);
        let have_bwk = have("original-awk", &["BEGIN{}"]);
        for (ok, name) in [
            (have_gawk, "gawk"),
            (have_bb, "busybox"),
            (have_bwk, "original-awk"),
        ] {
            // CI installs them all (.ci/run): there, a missing one is a failure.
            assert!(
                ok || std::env::var_os("CI").is_none(),
                "the differential test needs {name} under CI (apt-get install gawk busybox original-awk)"
            );
            if !ok {
                println!("note: {name} is not installed; the differential test skips it");
            }
        }
        let n: usize = std::env::var("EXECGATE_AWK_DIFF_N")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(400);
        let seed: u64 = std::env::var("EXECGATE_AWK_DIFF_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0x9e37_79b9_7f4a_7c15);
        let start = Instant::now();
        let workers = 2;
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let s = seed ^ (w as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d);
                std::thread::spawn(move || check(s, n / workers, w, (have_gawk, have_bb, have_bwk)))
            })
            .collect();
        let mut all = Tally::default();
        for h in handles {
            let t = h.join().expect("worker");
            all.programs += t.programs;
            all.accepted += t.accepted;
            all.refused += t.refused;
            all.refused_accepted += t.refused_accepted;
            all.refused_examples.extend(t.refused_examples);
            all.over += t.over;
            all.over_examples.extend(t.over_examples);
            all.ran += t.ran;
            all.failures.extend(t.failures);
        }
        let _ = std::fs::remove_dir_all(scratch());
        println!(
            "differential: {} programs, {} accepted by mawk or gawk, execgate refused {} ({} of them accepted), over-reported {} (a kind no dumping awk found), {} runs left a file; {:.1}s",
            all.programs,
            all.accepted,
            all.refused,
            all.refused_accepted,
            all.over,
            all.ran,
            start.elapsed().as_secs_f64()
        );
        if std::env::var_os("EXECGATE_AWK_DIFF_VERBOSE").is_some() {
            for e in all.refused_examples.iter().chain(&all.over_examples) {
                println!("  {e}");
            }
        }
        assert!(
            all.failures.is_empty(),
            "seed {seed}: {} misses, first ones:\n{}",
            all.failures.len(),
            all.failures[..all.failures.len().min(20)].join("\n")
        );
    }
}
