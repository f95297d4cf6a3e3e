//! Commands drawn from execgate's own tables (`policy::programs::option_tables`): for a
//! program, the options its profile calls harmless, alone and in pairs, with values
//! that look like options, every unambiguous abbreviation of a long one (where the
//! program accepts them), `--`, and operands that look like options; and from the
//! languages execgate reads inside words: sed scripts, awk programs, jq filters and find
//! expressions, valid and a character (or a word) away from valid. Seeded: the same
//! seed gives the same commands, so a disagreement can be replayed.

use execgate::policy::programs::spec::{Arg, Does, Name, Opt};
use execgate::policy::programs::{OptionTable, Syntax, option_tables};

/// A small, fast, seeded generator (SplitMix64): enough to pick words, and the same on
/// every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Values for an option's value: a number, words that look like options, files of the
/// sandbox, the standard streams' `-`.
const VALUES: &[&str] = &["1", "3", "-n", "--", "notes.txt", "-", "x", ",", "%s"];

/// Operands: files of the sandbox (one named like an option), the working directory.
const OPERANDS: &[&str] = &["notes.txt", "data.csv", "src", "-n", ".", "README.md"];

/// One program's table, as execgate's profile has it.
pub struct Table(pub OptionTable);

/// Every profiled program's table.
pub fn tables() -> Vec<Table> {
    option_tables().into_iter().map(Table).collect()
}

impl Table {
    /// The options whose profile says they change only what is printed (or that it
    /// prints until stopped: `tail -f`).
    fn harmless(&self) -> Vec<&Opt> {
        self.0
            .options
            .iter()
            .filter(|o| matches!(o.does, Does::Nothing | Does::Follows))
            .collect()
    }

    /// The ways `opt` may be written, its value (if any) drawn from `rng`: each name
    /// alone, a long name's unambiguous abbreviations where the program accepts them,
    /// a value attached or as the next word as its argument form allows.
    fn spellings(&self, opt: &Opt, rng: &mut Rng) -> Vec<Vec<String>> {
        let value = rng.pick(VALUES).to_string();
        let mut out = Vec::new();
        for name in &opt.names {
            let written: Vec<String> = match name {
                Name::Short(c) => vec![format!("-{c}")],
                Name::DashLong(l) => vec![format!("-{l}")],
                Name::Number => vec![format!("-{}", 1 + rng.below(9))],
                Name::Long(l) => {
                    let mut forms = vec![format!("--{l}")];
                    if matches!(
                        self.0.syntax,
                        Syntax::Gnu | Syntax::GnuInOrder | Syntax::Git
                    ) {
                        forms.extend(self.abbreviations(l).into_iter().map(|a| format!("--{a}")));
                    }
                    forms
                }
            };
            for w in written {
                let long = w.starts_with("--");
                match opt.arg {
                    Arg::No => out.push(vec![w]),
                    Arg::Req => {
                        out.push(vec![w.clone(), value.clone()]);
                        if long {
                            out.push(vec![format!("{w}={value}")]);
                        } else {
                            out.push(vec![format!("{w}{value}")]);
                        }
                    }
                    Arg::Opt | Arg::OptDigits => {
                        out.push(vec![w.clone()]);
                        if long {
                            out.push(vec![format!("{w}={value}")]);
                        } else {
                            out.push(vec![format!("{w}{value}")]);
                        }
                    }
                    Arg::Two => out.push(vec![w, value.clone(), rng.pick(VALUES).to_string()]),
                }
            }
        }
        out
    }

    /// The prefixes of long option `long` that name no other long option of the table:
    /// what GNU getopt_long and git accept for it.
    fn abbreviations(&self, long: &str) -> Vec<String> {
        let longs: Vec<&str> = self
            .0
            .options
            .iter()
            .flat_map(|o| o.names.iter())
            .filter_map(|n| match n {
                Name::Long(l) => Some(*l),
                _ => None,
            })
            .collect();
        (2..long.len())
            .map(|n| &long[..n])
            .filter(|p| longs.iter().filter(|l| l.starts_with(p)).count() == 1)
            .map(String::from)
            .collect()
    }

    /// The sandbox directory its commands run in: git's subcommands in the repository,
    /// where they have something to work on; the rest at the top.
    pub fn dir(&self) -> &'static str {
        if self.0.program == "git" && !self.0.words.is_empty() {
            "repo"
        } else {
            "."
        }
    }

    /// The name to run it by: the first of its names installed here (`python3` where
    /// there is no `python`), else its first.
    pub fn program(&self) -> &'static str {
        self.0
            .names
            .iter()
            .copied()
            .find(|n| super::installed(n))
            .unwrap_or(self.0.program)
    }

    /// `git log`, `npm`: the program and the words that select the subcommand.
    pub fn name(&self) -> String {
        std::iter::once(self.0.program)
            .chain(self.0.words.iter().copied())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Up to `n` commands for this program (or subcommand), drawn with `rng`: each
    /// harmless option in every spelling, then random pairs, `--`, with option-like
    /// operands or none.
    pub fn commands(&self, rng: &mut Rng, n: usize) -> Vec<Vec<String>> {
        let harmless = self.harmless();
        let program = self.program();
        let mut out: Vec<Vec<String>> = Vec::new();
        // An operand two times in three, else none: the program reads standard input
        // (`/dev/null`), or prints its help, which is what step 8 approves for most.
        let with = |words: Vec<String>, rng: &mut Rng| {
            let mut argv = vec![program.to_string()];
            argv.extend(self.0.words.iter().map(|w| w.to_string()));
            argv.extend(words);
            if rng.below(3) != 0 {
                argv.push(rng.pick(OPERANDS).to_string());
            }
            argv
        };
        for opt in &harmless {
            for spelling in self.spellings(opt, rng) {
                out.push(with(spelling, rng));
            }
        }
        while out.len() < n && !harmless.is_empty() {
            let first = *rng.pick(&harmless);
            let second = *rng.pick(&harmless);
            let a = self.spellings(first, rng);
            let b = self.spellings(second, rng);
            let mut words: Vec<String> = rng.pick(&a).clone();
            words.extend(rng.pick(&b).clone());
            if rng.below(4) == 0 {
                words.push("--".into());
            }
            out.push(with(words, rng));
        }
        // Shuffled, then cut: a sample of every kind when `n` is small.
        for i in (1..out.len()).rev() {
            out.swap(i, rng.below(i + 1));
        }
        out.truncate(n);
        out
    }
}

/// sed scripts from sed's grammar (POSIX and GNU): addresses, every command letter, `s`
/// with its flags and any delimiter, `y`, labels and branches, blocks, comments, regular
/// expressions with bracket expressions, escapes and the delimiter inside, valid and a
/// character away from valid. Each as `sed [-n] [-E] -e SCRIPT FILE` or `sed [-n]
/// SCRIPT FILE`.
pub fn sed_commands(rng: &mut Rng, n: usize) -> Vec<Vec<String>> {
    (0..n)
        .map(|_| {
            let mut script = sed_script(rng);
            if rng.below(5) == 0 {
                script = near(rng, &script, &['}', '/', '\\', ';', '\n', ']', 'e', 'w']);
            }
            let mut argv = vec!["sed".to_string()];
            if rng.below(2) == 0 {
                argv.push("-n".into());
            }
            if rng.below(4) == 0 {
                argv.push("-E".into());
            }
            if rng.below(2) == 0 {
                argv.push("-e".into());
            }
            argv.push(script);
            argv.push(rng.pick(&["notes.txt", "data.csv", "-n"]).to_string());
            argv
        })
        .collect()
}

fn sed_script(rng: &mut Rng) -> String {
    let count = 1 + rng.below(3);
    let parts: Vec<String> = (0..count).map(|_| sed_command(rng, 0)).collect();
    let sep = *rng.pick(&[";", "\n", " ; "]);
    parts.join(sep)
}

fn sed_regex(rng: &mut Rng, delim: char) -> String {
    let pieces = [
        "a".to_string(),
        "^al".into(),
        "ta$".into(),
        "[/]".into(),
        "[]/]".into(),
        "[^/e]".into(),
        "[[:alpha:]]".into(),
        "\\/".into(),
        format!("\\{delim}"),
        "x\\|y".into(),
        "\\(a\\)\\1".into(),
        "(a|b)".into(),
        ".*".into(),
        "\\n".into(),
        "#".into(),
        ";".into(),
        "}".into(),
        "e".into(),
        "w x".into(),
    ];
    let n = 1 + rng.below(2);
    (0..n).map(|_| rng.pick(&pieces).clone()).collect()
}

fn sed_address(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 | 1 => String::new(),
        2 => "1".into(),
        3 => "$".into(),
        4 => format!("/{}/", sed_regex(rng, '/')),
        5 => format!("\\,{},", sed_regex(rng, ',')),
        6 => format!("1,/{}/", sed_regex(rng, '/')),
        _ => format!("2~3{}", if rng.below(2) == 0 { "!" } else { "" }),
    }
}

fn sed_command(rng: &mut Rng, depth: usize) -> String {
    let address = sed_address(rng);
    let body = match rng.below(if depth < 2 { 17 } else { 16 }) {
        0 => "p".into(),
        1 => "d".into(),
        2 => "=".into(),
        3 => "l".into(),
        4 => "n".into(),
        5 => "N".into(),
        6 => "q".into(),
        7 => {
            let delim = *rng.pick(&['/', '|', ',', '#', 'e', ';', ' ']);
            let flags = *rng.pick(&["", "g", "p", "2", "I", "gp", "e", "w /dev/null", "m"]);
            let re = sed_regex(rng, delim);
            let with = *rng.pick(&["b", "&", "\\1", "x\\ny", "\\/", ""]);
            format!("s{delim}{re}{delim}{with}{delim}{flags}")
        }
        8 => "y/abc/xyz/".into(),
        9 => format!(":{}", rng.pick(&["a", "loop", "e", "x;p", "b }"])),
        10 => format!("b{}", rng.pick(&["", " a", "loop", " e"])),
        11 => format!("t{}", rng.pick(&["", " a", "x"])),
        12 => "# a comment; w x".into(),
        13 => "h;G".into(),
        14 => "x".into(),
        15 => "z".into(),
        _ => format!("{{{}}}", sed_command(rng, depth + 1)),
    };
    format!("{address}{body}")
}

/// awk programs from awk's grammar: patterns and actions, regular expression literals
/// (with `/` in bracket expressions, escapes, and where a `/` is a division), strings
/// with quotes and escapes, comments, and the words that run or write something
/// (`system`, `|`, `>`, `getline`) inside strings, regexes and comments where they do
/// not. Each run by `awk`, `gawk` or `mawk` on a sandbox file.
pub fn awk_commands(rng: &mut Rng, n: usize) -> Vec<Vec<String>> {
    (0..n)
        .map(|_| {
            let count = 1 + rng.below(2);
            let rules: Vec<String> = (0..count).map(|_| awk_rule(rng)).collect();
            let program = rules.join(*rng.pick(&["\n", " ", ";", " ", ";"]));
            let mut argv = vec![rng.pick(&["awk", "gawk", "mawk"]).to_string(), program];
            // Mostly on standard input (`/dev/null`): a program that reads no file is
            // what step 8 may approve, and its BEGIN and END rules still run.
            if rng.below(3) == 0 {
                argv.push(rng.pick(&["notes.txt", "data.csv"]).to_string());
            }
            argv
        })
        .collect()
}

fn awk_regex(rng: &mut Rng) -> String {
    let pieces = [
        "a",
        "[/]",
        "[]/]",
        "\\/",
        "x|y",
        "^-",
        "[[:digit:]]+",
        "system(",
        "\"",
        "#",
        ";",
        "}",
        "/ 2 /",
    ];
    let n = 1 + rng.below(2);
    let inner: String = (0..n).map(|_| *rng.pick(&pieces)).collect();
    format!("/{inner}/")
}

fn awk_expr(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => "$1".into(),
        1 => "NR / 2 / 1".into(),
        2 => format!(
            "\"{}\"",
            rng.pick(&["a", "\\\"", "system(\\\"id\\\")", "/x/", "# c", "\\\\"])
        ),
        3 => format!("$0 ~ {}", awk_regex(rng)),
        4 => "length($0)".into(),
        5 => "substr($0, 2)".into(),
        6 => "NF".into(),
        7 => "toupper($1)".into(),
        8 => "a[$1]++".into(),
        _ => "x = 1".into(),
    }
}

fn awk_rule(rng: &mut Rng) -> String {
    let pattern = match rng.below(6) {
        0 => "BEGIN".to_string(),
        1 => "END".to_string(),
        2 => awk_regex(rng),
        3 => "NR == 1".to_string(),
        4 => format!("{} && !{}", awk_regex(rng), awk_regex(rng)),
        _ => String::new(),
    };
    let count = 1 + rng.below(2);
    let stmts: Vec<String> = (0..count)
        .map(|_| match rng.below(6) {
            0 => format!("print {}", awk_expr(rng)),
            1 => format!("printf \"%s\\n\", {}", awk_expr(rng)),
            2 => format!("if ({}) print", awk_expr(rng)),
            3 if rng.below(3) == 0 => "# system(\"id\") | getline\n".to_string(),
            4 => format!("y = {}", awk_expr(rng)),
            _ => "next".to_string(),
        })
        .collect();
    format!("{pattern} {{ {} }}", stmts.join("; "))
}

/// One character of `text` dropped, doubled or swapped for one of `swaps`: a near-valid
/// script, where a reader and its program are likeliest to part ways.
fn near(rng: &mut Rng, text: &str, swaps: &[char]) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let at = rng.below(chars.len());
    let mut out: String = chars[..at].iter().collect();
    match rng.below(3) {
        0 => {}
        1 => {
            out.push(chars[at]);
            out.push(chars[at]);
        }
        _ => out.push(*rng.pick(swaps)),
    }
    out.extend(&chars[at + 1..]);
    out
}

/// jq filters from jq's grammar: paths (`.a`, `.[0]`, `.[]?`, `."a b"`, `..`), literals
/// and string interpolation (`"\(.a)"`, with `#`, quotes and escapes inside), objects
/// and arrays, formats (`@sh`, `@base64`), pipes, `,`, `//`, `?`, `if`, `try`,
/// `reduce`, `foreach`, `def`, `label`, `as $x`, comments, and the builtins that read
/// or reach beyond the input (`env`, `$ENV`, `input`, `input_filename`, `debug`,
/// `stderr`, `import`, `include`, `modulemeta`, `get_search_list`, `$__loc__`). One in
/// five is near-valid. Each as `jq [OPTIONS] FILTER [data.json]`.
pub fn jq_commands(rng: &mut Rng, n: usize) -> Vec<Vec<String>> {
    (0..n)
        .map(|_| {
            let mut filter = jq_filter(rng, 0);
            if rng.below(5) == 0 {
                filter = near(
                    rng,
                    &filter,
                    &['"', '(', ')', '|', '#', '\\', '$', '.', ';', '@'],
                );
            }
            let mut argv = vec!["jq".to_string()];
            for _ in 0..rng.below(3) {
                match rng.below(8) {
                    0 => argv.push("-r".into()),
                    1 => argv.push("-c".into()),
                    2 => argv.push("-n".into()),
                    3 => argv.push("-S".into()),
                    4 => argv.push("-e".into()),
                    5 => argv.push("-s".into()),
                    6 => argv.extend(["--arg".into(), "x".into(), "-n".into()]),
                    _ => argv.extend(["--argjson".into(), "x".into(), "1".into()]),
                }
            }
            argv.push(filter);
            if rng.below(3) != 0 {
                argv.push(rng.pick(&["data.json", "notes.txt", "-n"]).to_string());
            }
            argv
        })
        .collect()
}

fn jq_term(rng: &mut Rng, depth: usize) -> String {
    let simple = [
        ".",
        ".a",
        ".a.b",
        ".[0]",
        ".[]",
        ".[]?",
        ".\"a b\"",
        ".a[1:2]",
        "..",
        "$x",
        "$__loc__",
        "$ENV.HOME",
        "env.HOME",
        "env",
        "1",
        "null",
        "\"s\"",
        "\"#x\"",
        "\"\\\"\"",
        "\"\\(.a)\"",
        "\"\\(1 + 2) #\"",
        "@base64",
        "@sh",
        "@csv",
        "@json",
        "@uri",
        "@sh \"echo \\(.a)\"",
        "length",
        "keys",
        "to_entries",
        "tostring",
        "tojson",
        "ascii_downcase",
        "input",
        "inputs",
        "debug",
        "stderr",
        "input_filename",
        "input_line_number",
        "builtins",
        "paths",
        "now",
        "halt",
        "get_search_list",
        "modulemeta",
        "$__prog_args",
        "error(\"x\")",
        "not",
        "splits(\",\")",
        "test(\"a\")",
        "sub(\"a\"; \"b\")",
        "ltrimstr(\"#\")",
        "getpath([\"a\"])",
        "range(3)",
        "first(.[])",
        "limit(1; .[])",
        "empty",
        "input_filename | debug",
        "{a: .b}",
        "{\"k\": 1}",
        "{$x}",
        "{(.a): 1}",
        "[.[]]",
        "[]",
        "{}",
    ];
    if depth >= 2 {
        return rng.pick(&simple).to_string();
    }
    match rng.below(14) {
        0 => format!("map({})", jq_filter(rng, depth + 1)),
        1 => format!("select({})", jq_filter(rng, depth + 1)),
        2 => format!("[{}]", jq_filter(rng, depth + 1)),
        3 => format!(
            "if {} then {} else {} end",
            jq_filter(rng, depth + 1),
            jq_term(rng, depth + 1),
            jq_term(rng, depth + 1)
        ),
        4 => format!("try {} catch .", jq_term(rng, depth + 1)),
        5 => format!("reduce .[] as $i (0; . + {})", jq_term(rng, depth + 1)),
        6 => format!("def f: {}; f", jq_filter(rng, depth + 1)),
        7 => format!("label $out | {}", jq_term(rng, depth + 1)),
        8 => format!(
            "{} as $x | {}",
            jq_term(rng, depth + 1),
            jq_term(rng, depth + 1)
        ),
        9 => format!("# a comment: input_filename\n{}", jq_term(rng, depth + 1)),
        10 => format!(
            "{}; {}",
            rng.pick(&["import \"a\" as a", "include \"a\"", "import \"a\" as $a"]),
            jq_term(rng, depth + 1)
        ),
        11 => format!("({})?", jq_filter(rng, depth + 1)),
        _ => rng.pick(&simple).to_string(),
    }
}

fn jq_filter(rng: &mut Rng, depth: usize) -> String {
    let first = jq_term(rng, depth);
    match rng.below(6) {
        0 => format!("{first} | {}", jq_term(rng, depth)),
        1 => format!("{first}, {}", jq_term(rng, depth)),
        2 => format!("{first} // {}", jq_term(rng, depth)),
        3 => format!("{first} == {}", jq_term(rng, depth)),
        _ => first,
    }
}

/// find commands from find's grammar: starting points (none, files, directories, links
/// out, names like options), global options (`-L`, `-H`, `-maxdepth`), tests with
/// values that look like operators or actions (`-name -delete`, `-path '('`), every
/// operator (`!`, `-not`, `-a`, `-o`, `,`, parentheses), and actions, the harmless
/// (`-print`, `-printf`, `-ls`, `-prune`, `-quit`) and those that run, write or remove
/// (`-exec`, `-execdir`, `-ok`, `-delete`, `-fprint`, `-fls`). One in five has a word
/// dropped, doubled or swapped.
pub fn find_commands(rng: &mut Rng, n: usize) -> Vec<Vec<String>> {
    const VALUES: &[&str] = &[
        "*.rs", "notes*", "-delete", "(", ")", "!", "-exec", ";", "{}", "-n", "src", "*",
    ];
    (0..n)
        .map(|_| {
            let mut argv = vec!["find".to_string()];
            if rng.below(4) == 0 {
                argv.push(rng.pick(&["-L", "-H", "-P", "-O1"]).to_string());
            }
            for _ in 0..rng.below(3) {
                argv.push(
                    rng.pick(&[
                        ".",
                        "src",
                        "repo",
                        "notes.txt",
                        "link-out",
                        "link-to-secret",
                    ])
                    .to_string(),
                );
            }
            let mut expr: Vec<String> = Vec::new();
            for i in 0..1 + rng.below(4) {
                if i > 0 {
                    match rng.below(6) {
                        0 => expr.push("-o".into()),
                        1 => expr.push("-a".into()),
                        2 => expr.push(",".into()),
                        _ => {}
                    }
                }
                if rng.below(6) == 0 {
                    expr.push(rng.pick(&["!", "-not"]).to_string());
                }
                let mut primary: Vec<String> = match rng.below(16) {
                    0 => vec![
                        rng.pick(&["-name", "-iname", "-path", "-ipath", "-regex", "-lname"])
                            .to_string(),
                        rng.pick(VALUES).to_string(),
                    ],
                    1 => vec![
                        "-type".into(),
                        rng.pick(&["f", "d", "l", "f,d"]).to_string(),
                    ],
                    2 => vec![
                        rng.pick(&["-maxdepth", "-mindepth"]).to_string(),
                        rng.pick(&["1", "2", "0"]).to_string(),
                    ],
                    3 => vec![
                        rng.pick(&[
                            "-empty",
                            "-readable",
                            "-executable",
                            "-true",
                            "-false",
                            "-prune",
                            "-quit",
                        ])
                        .to_string(),
                    ],
                    4 => vec![
                        rng.pick(&["-size", "-mtime", "-mmin", "-links"])
                            .to_string(),
                        rng.pick(&["-1", "+0", "1k"]).to_string(),
                    ],
                    5 => vec![
                        rng.pick(&["-newer", "-samefile", "-anewer"]).to_string(),
                        rng.pick(&["notes.txt", ".env", "-n"]).to_string(),
                    ],
                    6 => vec![
                        "-perm".into(),
                        rng.pick(&["-u+r", "/111", "644"]).to_string(),
                    ],
                    7 => vec![rng.pick(&["-user", "-group"]).to_string(), "nobody".into()],
                    8 => vec![
                        "-printf".into(),
                        rng.pick(&["%p\\n", "%f %s\\n", "%%", "-delete"])
                            .to_string(),
                    ],
                    9 => vec![rng.pick(&["-print", "-print0", "-ls"]).to_string()],
                    10 => vec![
                        rng.pick(&["-exec", "-execdir", "-ok"]).to_string(),
                        "echo".into(),
                        "{}".into(),
                        rng.pick(&[";", "+"]).to_string(),
                    ],
                    11 => vec!["-delete".into()],
                    12 => vec![
                        rng.pick(&["-fprint", "-fls"]).to_string(),
                        rng.pick(&["/dev/null", "out.txt"]).to_string(),
                    ],
                    13 => vec!["-fprintf".into(), "out.txt".into(), "%p".into()],
                    _ => {
                        let inner = vec!["-name".to_string(), rng.pick(VALUES).to_string()];
                        let mut p = vec!["(".to_string()];
                        p.extend(inner);
                        p.push(")".into());
                        p
                    }
                };
                expr.append(&mut primary);
            }
            if rng.below(5) == 0 && !expr.is_empty() {
                let at = rng.below(expr.len());
                match rng.below(3) {
                    0 => {
                        expr.remove(at);
                    }
                    1 => expr.insert(at, expr[at].clone()),
                    _ => {
                        expr[at] = rng
                            .pick(&["(", ")", "-exec", ";", "{}", "+", "-delete", "-o"])
                            .to_string()
                    }
                }
            }
            argv.extend(expr);
            argv
        })
        .collect()
}
