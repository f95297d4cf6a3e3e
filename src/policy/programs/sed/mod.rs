//! sed (GNU sed 4.9): its options, and its scripts read by `script`, which follows GNU
//! sed's own script reader exactly (labels end at a blank, a bracket expression hides
//! the delimiter, each `-e` is compiled as sed meets it). A script can read (`r`, `R`),
//! write (`w`, `W`, `s///w`) and run commands (`e`, `s///e`); one the reader cannot
//! follow exactly is not understood.

mod script;

use super::profile::Role::{Input, Text};
use super::profile::{BASE, Effect, Profile, Reading, Role, Runs, Span};

pub const PROFILES: &[&Profile] = &[&SED];

/// GNU sed 4.9.
const SED: Profile = Profile {
    names: &["sed", "gsed"],
    options: &[
        "-n, --quiet, --silent",
        "--debug",
        "-e, --expression=SCRIPT",
        "-f, --file=SCRIPT_FILE  code: runs the sed script in that file",
        "--follow-symlinks",
        "-i[SUFFIX], --in-place[=SUFFIX]",
        "-l, --line-length=N",
        "--posix",
        "-E, -r, --regexp-extended",
        "-s, --separate",
        "--sandbox",
        "-u, --unbuffered",
        "-z, --null-data",
    ],
    rest: Input,
    check: Some(sed_check),
    ..BASE
};

/// The script is every `-e` in order (and `-f`'s files, unread), or else the first
/// operand. GNU sed compiles each `-e` as it reads its options, so `--sandbox` covers
/// only the scripts after it; the operand script is compiled after every option.
fn sed_check(r: &mut Reading<'_>) {
    let explicit = r.has("expression") || r.has("file");
    let mut sandboxed = false;
    let mut chunks: Vec<(script::Chunk<'_>, Span)> = Vec::new();
    for g in &r.given {
        match g.opt.key() {
            "sandbox" => sandboxed = true,
            "expression" => {
                if let Some(text) = g.value {
                    chunks.push((script::Chunk { text, sandboxed }, g.at));
                }
            }
            _ => {}
        }
    }
    if !explicit && let Some(&(i, text)) = r.operands.first() {
        let sandboxed = r.has("sandbox");
        chunks.push((script::Chunk { text, sandboxed }, Span::one(i)));
    }
    let in_place = r.has("in-place");
    match (explicit, in_place) {
        (true, true) => r.set_roles(&[], Role::Write),
        (true, false) => r.set_roles(&[], Input),
        (false, true) => r.set_roles(&[Text], Role::Write),
        (false, false) => r.set_roles(&[Text], Input),
    }
    if chunks.is_empty() {
        return;
    }
    // What the script does is about all of its words: from the first script to the last.
    let at = Span {
        first: chunks.iter().map(|(_, s)| s.first).min().unwrap_or(0),
        last: chunks.iter().map(|(_, s)| s.last).max().unwrap_or(0),
    };
    let texts: Vec<script::Chunk<'_>> = chunks
        .iter()
        .map(|(c, _)| script::Chunk {
            text: c.text,
            sandboxed: c.sandboxed,
        })
        .collect();
    match script::read(&texts) {
        Ok(reaches) => {
            for reach in reaches {
                match reach {
                    // sed runs `e COMMAND` with the shell: execgate judges COMMAND too.
                    script::Reach::Runs(Some(command)) => r.starts(
                        format!("the sed script runs a command (`e {}`)", command.trim()),
                        at,
                        Runs::Script(command),
                    ),
                    script::Reach::Loops => r.endless = true,
                    reach => {
                        if let Some(effect) = effect(reach) {
                            r.add(effect, at);
                        }
                    }
                }
            }
        }
        Err(why) => r.add(
            Effect::Unknown(format!("the sed script cannot be read exactly: {why}")),
            at,
        ),
    }
}

/// What one reach of a script is, as a finding. sed itself reads `/dev/stdin` and
/// writes `/dev/stdout` and `/dev/stderr` as its own streams.
fn effect(reach: script::Reach) -> Option<Effect> {
    Some(match reach {
        script::Reach::Reads(file) if file == "/dev/stdin" => return None,
        script::Reach::Reads(file) => Effect::Reads(file),
        script::Reach::Writes(file) if file == "/dev/stdout" || file == "/dev/stderr" => {
            return None;
        }
        script::Reach::Writes(file) => Effect::Writes(file),
        script::Reach::Runs(Some(command)) => Effect::Code(format!(
            "the sed script runs a command (`e {}`)",
            command.trim()
        )),
        script::Reach::Runs(None) => {
            Effect::Code("the sed script runs its pattern space as a command (`e`, `s///e`)".into())
        }
        // No effect: the reading is marked endless instead.
        script::Reach::Loops => return None,
    })
}

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::testing::{Table, read};

    /// A jump back to a label may loop for ever without reading more input (the
    /// oracle's long run saw `:loop ; /a/bloop` spin on `data.csv`): the command may
    /// not end, which the oracle then expects. A forward jump cannot loop.
    #[test]
    fn a_jump_back_to_a_label_may_loop_for_ever() {
        for cmd in [
            "sed -e ':loop ; /a/bloop ; :a' data.csv",
            "sed ':x; tx' f",
            "sed -n ':a;N;$!ba;p' f",
        ] {
            let u = read(cmd);
            assert!(u.endless, "{cmd}: may loop");
            assert!(u.understood(), "{cmd}: understood: {:?}", u.findings);
        }
        for cmd in ["sed '/a/bx; p; :x' f", "sed -n p f", "sed 'b; :x'"] {
            assert!(!read(cmd).endless, "{cmd}: ends");
        }
    }

    fn findings(command: &str) -> Vec<String> {
        read(command)
            .findings
            .iter()
            .map(|f| f.effect.to_string())
            .collect()
    }

    /// A script, and a phrase its first finding must contain.
    const FIRST_FINDING: &[(&str, &str)] = &[
        // A label ends at a blank: `e id` is a command.
        ("sed ':x e id'", "runs a command (`e id`)"),
        // A bracket expression hides the delimiter.
        ("sed 's/[/]/ id/e'", "pattern space"),
        // `--sandbox` covers only what follows it.
        ("sed --sandbox -e 'w out'", "cannot be read exactly"),
        ("sed --sandbox 'w out'", "cannot be read"),
        (
            "sed -f script.sed in.txt",
            "`sed --file` runs the sed script in that file",
        ),
    ];

    /// A script, and every finding, exactly.
    const FINDINGS: &[(&str, &[&str])] = &[
        ("sed -n 's/[/]/#/w out'", &["writes `out`"]),
        ("sed -e 'w out' --sandbox", &["writes `out`"]),
        ("sed -n 1,20p", &[]),
        ("sed -n -e p -e 'w /dev/stdout'", &[]),
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[&FIRST_FINDING, &FINDINGS];

    #[test]
    fn scripts_are_read_as_sed_reads_them() {
        for &(c, what) in FIRST_FINDING {
            let found = findings(c);
            assert!(
                found[0].contains(what),
                "{c:?}: expected {what:?} in {found:?}"
            );
        }
        for &(c, said) in FINDINGS {
            assert_eq!(findings(c), said, "{c:?}");
        }
    }
}
