//! awk (mawk, gawk, busybox awk, onetrueawk): its portable options, and its program read
//! by `program`, which follows every reading the implementations may take of it (is
//! this `/` a division or a regex?) and reports what any of them reaches: commands
//! (`system`, pipes), files read or written, the environment, `ARGV`. A program no
//! reading accounts for is not understood.

mod program;

use super::profile::Role::Read;
use super::profile::{BASE, Effect, Profile, Reading, Role, Span};

pub const PROFILES: &[&Profile] = &[&AWK];

/// awk's portable options; gawk and mawk have more, which a human reads.
const AWK: Profile = Profile {
    names: &["awk", "mawk", "gawk", "nawk"],
    options: &[
        "-F FS",
        "-v ASSIGNMENT",
        "-f PROGFILE  code: runs the awk program in that file",
    ],
    rest: Read,
    check: Some(awk_check),
    ..BASE
};

/// The program is the first operand unless `-f` named a file; the rest are files to
/// read (`-` is standard input) or `NAME=value` assignments.
fn awk_check(r: &mut Reading<'_>) {
    let has_file = r.has("f");
    let operands = r.operands.clone();
    let mut files = operands.as_slice();
    if !has_file && let Some(&(i, text)) = operands.first() {
        match program::read(text) {
            Ok(reaches) => {
                for reach in reaches {
                    r.add(effect(reach), Span::one(i));
                }
            }
            Err(why) => r.unknown(i, format!("the awk program cannot be read exactly: {why}")),
        }
        files = &operands[1..];
    }
    let is_assignment = |w: &str| {
        w.split_once('=').is_some_and(|(n, _)| {
            !n.is_empty()
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !n.starts_with(|c: char| c.is_ascii_digit())
        })
    };
    for &(i, w) in files {
        if !is_assignment(w) && w != "-" {
            r.add(Effect::Reads(w.to_string()), Span::one(i));
        }
    }
    r.set_roles(&[], Role::Passthrough);
}

/// What one reach of the program is, as a finding. The files it reads or writes are
/// named by expressions execgate does not evaluate.
fn effect(reach: program::Reach) -> Effect {
    match reach {
        program::Reach::Runs(why) | program::Reach::Code(why) => {
            Effect::Code(format!("the awk program {why}"))
        }
        program::Reach::Reads(why) | program::Reach::Arguments(why) => {
            Effect::Reads(format!("the files the awk program names ({why})"))
        }
        program::Reach::Writes(why) => {
            Effect::Writes(format!("the files the awk program names ({why})"))
        }
        program::Reach::Environment(why) => Effect::Env(format!("the awk program {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::understand;

    fn reasons(program: &str) -> Vec<String> {
        let words = ["awk".to_string(), program.to_string()];
        understand(&words, false)
            .findings
            .iter()
            .map(|f| f.effect.to_string())
            .collect()
    }

    #[test]
    fn programs_are_read_in_every_reading() {
        for harmless in ["{print $1}", "$3 > 10", "/\"/ {print}", "NR==1"] {
            assert_eq!(reasons(harmless), Vec::<String>::new(), "{harmless}");
        }
        // A `"` inside a regex literal does not start a string.
        let hidden = reasons(r#"BEGIN { if (/"/) {} ; system("id") } /"/ {}"#);
        assert!(hidden[0].contains("runs a command"), "{hidden:?}");
        assert!(reasons("{print > \"out\"}")[0].contains("writes"));
        assert!(reasons("BEGIN{print ENVIRON[\"HOME\"]}")[0].contains("environment"));
    }
}
