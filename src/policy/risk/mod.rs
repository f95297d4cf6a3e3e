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
//! `safe` is what the program profiles (`policy::programs`) account for word by word with
//! nothing but harmless words: no path operand, no recursion, nothing run, written or
//! reached. `dangerous` is a list of patterns, each with its own reason, joined by what
//! the profiles call a danger (so `git reset --har`, which git reads as `--hard`, is
//! one). Everything else needs review.
//!
//! The parts, one job each:
//! - `code`: which programs run other code: shells, interpreters, wrappers and their
//!   options ([`runs_other_code`], [`is_wrapper_or_interpreter`]).
//! - `through`: looking through wrappers and scripts to the commands they run
//!   ([`looked_through`]).
//! - `runners`: the programs without a profile that can start a shell or run commands
//!   (from GTFOBins), so a glob's wildcard over one refuses what it could run
//!   ([`runner`]).
//! - `dangerous`: the dangerous patterns and their reasons, and execgate's own files
//!   (what a path is, secret or sensitive, is the path policy's: `policy::paths`).
//!
//! [`parse::analyse`]: super::parse::analyse

mod code;
mod dangerous;
mod runners;
mod through;

use std::path::{Path, PathBuf};

use super::parse::Analysis;
use super::programs::{self, Understanding};
use crate::model::Risk;

pub use code::{is_wrapper_or_interpreter, keeps_place};
pub use runners::{Runner, runner};
pub use through::{looked_through, looked_through_command, runs_other_code};

use dangerous::{Reasons, dangerous_analysis};

/// Paths that belong to execgate itself: commands that touch them are dangerous.
#[derive(Clone, Debug, Default)]
pub struct OwnFiles {
    /// Each path as text, and its file name where that names execgate: what a word is
    /// searched for (made once here, not for every word judged).
    needles: Vec<String>,
}

impl OwnFiles {
    pub fn new(paths: &[PathBuf]) -> OwnFiles {
        let mut needles = Vec::new();
        for path in paths {
            let full = path.to_string_lossy().into_owned();
            if !full.is_empty() {
                needles.push(full);
            }
            if let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned())
                && name.contains("execgate")
            {
                needles.push(name);
            }
        }
        OwnFiles { needles }
    }
}

/// Where a command is judged: execgate's own files, and the working directory.
pub(super) struct Context<'a> {
    pub(super) own: &'a OwnFiles,
    pub(super) cwd: Option<&'a Path>,
}

/// Among the other commands of a line that runs a program whose configuration is read
/// from its cwd (git, npm, …), each with whether it is already known to be harmless
/// where it stands, the first that could move that program elsewhere or change its
/// environment: one execgate neither profiles nor knows to keep it in place (a builtin
/// like `cd`, `export` or `pushd`). Its program's name, if there is one.
pub fn first_mover(others: &[(Vec<String>, bool)]) -> Option<&str> {
    others.iter().find_map(|(words, known)| {
        let stays = *known || keeps_place(words) || programs::understand(words, false).profiled;
        (!stays).then(|| words.first().map(String::as_str).unwrap_or(""))
    })
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

/// Classifies a command from its analysis: `dangerous` if any command in it, nested or
/// looked through, matches a dangerous pattern (or its program's profile names a danger);
/// `safe` if it is plain and every command is understood by its program's profile with
/// nothing but harmless words (step 8: no path operands, no recursion, nothing run,
/// written or reached); else `needs-review`, with what stood in the way.
pub fn assess(analysis: &Analysis, own: &OwnFiles) -> (Risk, Vec<String>) {
    let understood: Vec<Understanding> = analysis
        .commands
        .iter()
        .map(|c| programs::understand(&c.words, c.piped))
        .collect();
    let harmless: Vec<bool> = understood.iter().map(Understanding::harmless).collect();
    assess_understood(analysis, &understood, &harmless, own, None)
}

/// [`assess`], with each command's understanding already at hand (policy reads each
/// command once, for risk and for the allowlist), whether each is harmless where it
/// runs (`harmless`: its profile finds nothing, or it only reads inside the request's
/// project), and the working directory the command runs in, where dangers that depend
/// on it are judged (`git checkout NAME`).
pub fn assess_understood(
    analysis: &Analysis,
    understood: &[Understanding],
    harmless: &[bool],
    own: &OwnFiles,
    cwd: Option<&Path>,
) -> (Risk, Vec<String>) {
    let mut r = Reasons(Vec::new());
    dangerous_analysis(analysis, &Context { own, cwd }, &mut r, 0);
    if !r.0.is_empty() {
        return (Risk::Dangerous, r.0);
    }
    if !analysis.plain() || !analysis.redirects.is_empty() {
        return (
            Risk::NeedsReview,
            vec!["not a plain command: a human must look at it".into()],
        );
    }
    let mut reasons = Vec::new();
    for ((c, u), harmless) in analysis.commands.iter().zip(understood).zip(harmless) {
        if !c.assignments.is_empty() || c.heredoc.is_some() {
            reasons.push("not a plain command: a human must look at it".to_string());
        } else if !u.profiled {
            reasons.push(format!("`{}` is not a program execgate knows", u.program));
        } else if !harmless {
            reasons.extend(u.reasons(3));
        }
    }
    if reasons.is_empty() && !analysis.commands.is_empty() {
        let why = if understood.iter().all(Understanding::harmless) {
            "read-only: every word understood, no path operands"
        } else {
            "read-only: every word understood, and it reads only inside the project"
        };
        return (Risk::Safe, vec![why.into()]);
    }
    reasons.dedup();
    if reasons.is_empty() {
        reasons.push("nothing to run".into());
    }
    (Risk::NeedsReview, reasons)
}

#[cfg(test)]
mod tests;
