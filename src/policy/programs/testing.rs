//! What the profiles' tests share: reading a command line as the tests write it, asking
//! what execgate made of it, and a seeded generator for the readers' differential tests.

use super::{Effect, Understanding, understand};

/// The command's words as the shell would pass them, read against its profile.
pub fn read(command: &str) -> Understanding {
    understand(&crate::policy::shell::words(command), false)
}

/// Every finding as a human reads it, joined by ` | `.
pub fn said(command: &str) -> String {
    read(command)
        .findings
        .iter()
        .map(|f| f.effect.to_string())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Some finding is a danger.
pub fn dangerous(command: &str) -> bool {
    read(command)
        .findings
        .iter()
        .any(|f| matches!(f.effect, Effect::Danger(_)))
}

/// A glob whose first `literal` words are written out approves this command.
pub fn covered(command: &str, literal: usize) -> bool {
    let u = read(command);
    u.understood() && u.glob_refusal(literal, &[]).is_none()
}

/// A glob that names only the program does not approve `command`, and what execgate
/// says about it contains `what`.
#[track_caller]
pub fn assert_refused(command: &str, what: &str) {
    let s = said(command);
    assert!(
        read(command).glob_refusal(1, &[]).is_some(),
        "{command:?} must be refused under a wildcard: {s}"
    );
    assert!(s.contains(what), "{command:?}: expected {what:?} in {s}");
}

/// A table of cases, whatever else each row says about its command: the commands, for
/// the tests that run every family's cases.
pub trait Table {
    fn commands(&self) -> Vec<&'static str>;
}

impl Table for &'static [&'static str] {
    fn commands(&self) -> Vec<&'static str> {
        self.to_vec()
    }
}

impl<T> Table for &'static [(&'static str, T)] {
    fn commands(&self) -> Vec<&'static str> {
        self.iter().map(|(c, _)| *c).collect()
    }
}

/// What reading exercised, recorded on this thread while [`coverage::start`] is on: how
/// the test that every option and check has a case knows which were reached.
pub mod coverage {
    use std::cell::RefCell;
    use std::collections::HashSet;

    use super::super::compiled::Compiled;
    use super::super::spec::Opt;

    /// Options and checks by address: both live in the registry's compiled profiles,
    /// which are built once and never move, so an address names one option of one
    /// compiled profile or subcommand exactly (the same line text elsewhere is another).
    #[derive(Debug, Default)]
    pub struct Seen {
        /// Every option given (`Reading::give`).
        pub options: HashSet<*const Opt>,
        /// Every compiled profile or subcommand whose `check` ran.
        pub checks: HashSet<*const Compiled>,
    }

    thread_local! {
        static SEEN: RefCell<Option<Seen>> = const { RefCell::new(None) };
    }

    /// Starts recording on this thread, from nothing.
    pub fn start() {
        SEEN.with(|s| *s.borrow_mut() = Some(Seen::default()));
    }

    /// Stops recording on this thread: what was seen since [`start`].
    pub fn take() -> Seen {
        SEEN.with(|s| s.borrow_mut().take()).unwrap_or_default()
    }

    pub(in crate::policy::programs) fn gave(opt: &Opt) {
        SEEN.with(|s| {
            if let Some(seen) = s.borrow_mut().as_mut() {
                seen.options.insert(opt);
            }
        });
    }

    pub(in crate::policy::programs) fn checked(level: &Compiled) {
        SEEN.with(|s| {
            if let Some(seen) = s.borrow_mut().as_mut() {
                seen.checks.insert(level);
            }
        });
    }
}

/// A small seeded generator (xorshift64) for the readers' differential tests: the same
/// seed makes the same scripts, so a failure names its seed and can be run again.
pub struct Rng(u64);

impl Rng {
    /// Any seed; zero, which xorshift never leaves, is moved off.
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `num` times in `den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next() % den < num
    }

    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}
