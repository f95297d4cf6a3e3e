//! Risk: which commands are known read-only (`safe`), which are known destructive
//! (`dangerous`), and which programs run other programs (wrappers, shells, interpreters),
//! so "always" can refuse them.
//!
//! Everything here works on [`parse::analyse`]'s simple commands, nested ones included,
//! and looks through wrappers (`sudo`, `env`, `timeout`, `xargs`, …) and the scripts of
//! `sh -c`, heredocs fed to a shell and `ssh host 'cmd'`, recursively and depth-limited.
//! Looking through over-reads where it is unsure (an unknown wrapper option may take a
//! value, so every later word is tried as the inner program): that only makes the deny
//! list and risk stricter.
//!
//! `safe` is a whitelist: every command a known read-only binary, used with flags only
//! (their values recognised per binary), no forbidden flag, no path operands, and the
//! whole command plain without redirections. `dangerous` is a list of patterns, each
//! with its own reason. Everything else needs review.
//!
//! The parts, one job each:
//! - `code`: which programs run other code: shells, interpreters, wrappers and their
//!   options ([`runs_other_code`], [`is_wrapper_or_interpreter`]).
//! - `through`: looking through wrappers and scripts to the commands they run
//!   ([`looked_through`]).
//! - `safe`: the known read-only binaries and git subcommands, and the `safe` check.
//! - `dangerous`: the dangerous patterns and their reasons, sensitive paths, and
//!   execgate's own files.
//!
//! [`parse::analyse`]: super::parse::analyse

mod code;
mod dangerous;
mod safe;
mod through;

use std::path::PathBuf;

use super::parse::Analysis;
use crate::model::Risk;

pub use code::{is_wrapper_or_interpreter, runs_other_code};
pub use through::looked_through;

use dangerous::{Reasons, dangerous_analysis};
use safe::is_safe_command;

/// Paths that belong to execgate itself: commands that touch them are dangerous.
#[derive(Clone, Debug, Default)]
pub struct OwnFiles {
    pub paths: Vec<PathBuf>,
}

/// How deep wrappers and scripts are looked through (`sudo env nice sh -c '…'`).
const MAX_DEPTH: usize = 8;

/// At most this many commands are collected from one command: a bound on the work
/// however the wrappers are stacked.
const MAX_FOUND: usize = 256;

fn base(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// `python3.12` → `python`: the interpreter family.
fn family(program: &str) -> &str {
    program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-')
}

/// A word the shell or program would read as a file path.
fn is_path(word: &str) -> bool {
    word.contains('/') || word.starts_with('.') || word.starts_with('~')
}

/// Classifies a command from its analysis: `dangerous` if any command in it, nested or
/// looked through, matches a dangerous pattern; `safe` if it is plain, without
/// redirections, and every command is a known read-only one; else `needs-review`.
pub fn assess(analysis: &Analysis, own: &OwnFiles) -> (Risk, Vec<String>) {
    let mut r = Reasons(Vec::new());
    dangerous_analysis(analysis, own, &mut r, 0);
    if !r.0.is_empty() {
        return (Risk::Dangerous, r.0);
    }
    if analysis.plain()
        && analysis.redirects.is_empty()
        && !analysis.commands.is_empty()
        && analysis
            .commands
            .iter()
            .all(|c| c.assignments.is_empty() && c.heredoc.is_none() && is_safe_command(&c.words))
    {
        return (
            Risk::Safe,
            vec!["read-only command without path arguments".into()],
        );
    }
    let why = if analysis.plain() {
        "not a known read-only command"
    } else {
        "not a plain command: a human must look at it"
    };
    (Risk::NeedsReview, vec![why.into()])
}

#[cfg(test)]
mod tests;
