//! Commands drawn from execgate's own tables (`policy::programs::option_tables`): for a
//! program, the options its profile calls harmless, alone and in pairs, with values
//! that look like options, every unambiguous abbreviation of a long one (where the
//! program accepts them), `--`, and operands that look like options. Seeded: the same
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

    /// Up to `n` commands for this program, drawn with `rng`: each harmless option in
    /// every spelling, then random pairs, `--`, with option-like operands or none.
    pub fn commands(&self, rng: &mut Rng, n: usize) -> Vec<Vec<String>> {
        let harmless = self.harmless();
        let mut out: Vec<Vec<String>> = Vec::new();
        // An operand two times in three, else none: the program reads standard input
        // (`/dev/null`), or prints its help, which is what step 8 approves for most.
        let with = |words: Vec<String>, rng: &mut Rng| {
            let mut argv = vec![self.0.program.to_string()];
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
                // Near-valid: one character dropped, doubled or swapped for another.
                let chars: Vec<char> = script.chars().collect();
                if !chars.is_empty() {
                    let at = rng.below(chars.len());
                    let mut out: String = chars[..at].iter().collect();
                    match rng.below(3) {
                        0 => {}
                        1 => {
                            out.push(chars[at]);
                            out.push(chars[at]);
                        }
                        _ => out.push(*rng.pick(&['}', '/', '\\', ';', '\n', ']', 'e', 'w'])),
                    }
                    out.extend(&chars[at + 1..]);
                    script = out;
                }
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
