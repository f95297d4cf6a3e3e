//! What the profiles' tests share: reading a command line as the tests write it, and
//! asking what execgate made of it.

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
    u.understood() && u.glob_refusal(literal).is_none()
}

/// A glob that names only the program does not approve `command`, and what execgate
/// says about it contains `what`.
#[track_caller]
pub fn assert_refused(command: &str, what: &str) {
    let s = said(command);
    assert!(
        read(command).glob_refusal(1).is_some(),
        "{command:?} must be refused under a wildcard: {s}"
    );
    assert!(s.contains(what), "{command:?}: expected {what:?} in {s}");
}
