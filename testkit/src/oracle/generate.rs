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
    /// The options whose profile says they change only what is printed.
    fn harmless(&self) -> Vec<&Opt> {
        self.0
            .options
            .iter()
            .filter(|o| o.does == Does::Nothing)
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
    /// every spelling with an operand, then random pairs, `--` and option-like operands.
    pub fn commands(&self, rng: &mut Rng, n: usize) -> Vec<Vec<String>> {
        let harmless = self.harmless();
        let mut out: Vec<Vec<String>> = Vec::new();
        let with = |words: Vec<String>, rng: &mut Rng| {
            let mut argv = vec![self.0.program.to_string()];
            argv.extend(words);
            argv.push(rng.pick(OPERANDS).to_string());
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
