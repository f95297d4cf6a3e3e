//! A profile compiled once: its option lines parsed and indexed, its subcommands too.

use std::collections::HashMap;

use super::profile::{Profile, Syntax};
use super::spec::{self, Name, Opt};

/// A profile, compiled.
#[derive(Debug)]
pub struct Compiled {
    pub profile: &'static Profile,
    pub opts: Vec<Opt>,
    pub shorts: HashMap<char, usize>,
    /// Long names (two dashes), for exact lookup and prefix search.
    pub longs: Vec<(&'static str, usize)>,
    /// One-dash long names (`-name`).
    pub dash_longs: Vec<(&'static str, usize)>,
    pub number: Option<usize>,
    pub subs: Vec<Compiled>,
    /// Why the profile does not compile, if it does not (a bug; fails closed).
    pub broken: Option<String>,
    /// Whether it or any of its subcommands is broken (worked out once, when compiled).
    pub broken_anywhere: bool,
}

impl Compiled {
    pub fn new(profile: &'static Profile) -> Compiled {
        let mut c = Compiled {
            profile,
            opts: Vec::new(),
            shorts: HashMap::new(),
            longs: Vec::new(),
            dash_longs: Vec::new(),
            number: None,
            subs: profile
                .subcommands
                .iter()
                .map(|s| Compiled::new(s))
                .collect(),
            broken: None,
            broken_anywhere: false,
        };
        let implicit: &[&'static str] = match profile.syntax {
            Syntax::Gnu | Syntax::GnuInOrder | Syntax::Git | Syntax::Clap => {
                &["--help", "--version"]
            }
            _ => &[],
        };
        let lines = profile.options.iter().chain(
            implicit
                .iter()
                .filter(|l| !profile.options.iter().any(|o| o.contains(**l))),
        );
        for opt in lines.flat_map(|line| match spec::compile(line) {
            Ok(opts) => opts.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        }) {
            match opt {
                Ok(opt) => {
                    let line = opt.line;
                    let i = c.opts.len();
                    for name in &opt.names {
                        let clash = match *name {
                            Name::Short(ch) => c.shorts.insert(ch, i).is_some(),
                            Name::Long(l) => {
                                let dup = c.longs.iter().any(|(n, _)| *n == l);
                                c.longs.push((l, i));
                                dup
                            }
                            Name::DashLong(l) => {
                                let dup = c.dash_longs.iter().any(|(n, _)| *n == l);
                                c.dash_longs.push((l, i));
                                dup
                            }
                            Name::Number => c.number.replace(i).is_some(),
                        };
                        if clash {
                            c.broken = Some(format!("{line:?}: a name listed twice"));
                        }
                    }
                    c.opts.push(opt);
                }
                Err(e) => c.broken = Some(e),
            }
        }
        c.broken_anywhere = c.broken.is_some() || c.subs.iter().any(|s| s.broken_anywhere);
        c
    }

    pub fn sub(&self, word: &str) -> Option<&Compiled> {
        self.subs.iter().find(|s| s.profile.names.contains(&word))
    }

    /// Every compile error in this profile and its subcommands.
    pub fn errors(&self, out: &mut Vec<String>) {
        if let Some(e) = &self.broken {
            out.push(format!("{:?}: {e}", self.profile.names));
        }
        for s in &self.subs {
            s.errors(out);
        }
    }
}
