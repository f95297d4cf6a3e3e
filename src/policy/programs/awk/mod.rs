//! awk (mawk, gawk, busybox awk, onetrueawk): its portable options, and its program read
//! by `program`, which follows every reading the implementations may take of it (is
//! this `/` a division or a regex?) and reports what any of them reaches: commands
//! (`system`, pipes), files read or written, the environment, `ARGV`. A program no
//! reading accounts for is not understood.

mod program;

use super::profile::Role::Read;
use super::profile::{BASE, Config, Effect, Profile, Reading, Role, Span};

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
    config: Some(&AWK_CONFIG),
    ..BASE
};

/// awk reads no configuration file; gawk's environment says where `-f` and `@include`
/// find program files.
const AWK_CONFIG: Config = Config {
    files: &[],
    env: "`AWKPATH`, `AWKLIBPATH` (gawk: where program files and extensions are found)",
    run_env: &[],
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
pub(in crate::policy::programs) mod tests {
    use super::super::testing::{Table, read};

    fn reasons(command: &str) -> Vec<String> {
        read(command)
            .findings
            .iter()
            .map(|f| f.effect.to_string())
            .collect()
    }

    /// Programs that reach nothing in any reading: harmless.
    const HARMLESS: &[&str] = &[
        "awk '{print $1}'",
        "awk '$3 > 10'",
        "awk '/\"/ {print}'",
        "awk NR==1",
    ];

    /// A program, and a phrase its first finding must contain.
    const FIRST_FINDING: &[(&str, &str)] = &[
        // A `"` inside a regex literal does not start a string.
        (
            r#"awk 'BEGIN { if (/"/) {} ; system("id") } /"/ {}'"#,
            "runs a command",
        ),
        ("awk '{print > \"out\"}'", "writes"),
        ("awk 'BEGIN{print ENVIRON[\"HOME\"]}'", "environment"),
        (
            "awk -f prog.awk data.txt",
            "`awk -f` runs the awk program in that file",
        ),
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[&HARMLESS, &FIRST_FINDING];

    #[test]
    fn programs_are_read_in_every_reading() {
        for &c in HARMLESS {
            assert_eq!(reasons(c), Vec::<String>::new(), "{c}");
        }
        for &(c, what) in FIRST_FINDING {
            let found = reasons(c);
            assert!(
                found[0].contains(what),
                "{c:?}: expected {what:?} in {found:?}"
            );
        }
    }
}
