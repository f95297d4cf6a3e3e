//! jq (1.6, 1.7, 1.8): its options, and its filter, read by `filter` with jq's own
//! lexical rules (in each version's reading) for what reaches beyond the input: the
//! environment (`env`, `$ENV`) and modules loaded from files.

mod filter;

use super::profile::Role::Input;
use super::profile::{
    BASE, Config, ConfigFile, Effect, Judge, Place, Profile, Reading, Role, Span, Syntax,
};

pub const PROFILES: &[&Profile] = &[&JQ];

/// jq 1.6/1.7. Options are exact; short ones cluster (`-rc`).
const JQ: Profile = Profile {
    names: &["jq", "gojq"],
    syntax: Syntax::Clap,
    options: &[
        "-c, --compact-output",
        "-n, --null-input",
        "-e, --exit-status",
        "-s, --slurp",
        "-r, --raw-output",
        "--raw-output0",
        "-j, --join-output",
        "-a, --ascii-output",
        "-R, --raw-input",
        "-C, --color-output",
        "-M, --monochrome-output",
        "-S, --sort-keys",
        "--tab",
        "--indent=N",
        "--unbuffered",
        "--stream",
        "--stream-errors",
        "--seq",
        "--arg NAME VALUE",
        "--argjson NAME TEXT",
        "--slurpfile NAME FILE",
        "--rawfile NAME FILE",
        "--argfile NAME FILE",
        "--args",
        "--jsonargs",
        "-f, --from-file=FILE  code: runs the jq program in that file",
        "-L DIRECTORY  code: loads jq modules from DIRECTORY",
        "-h",
        "-V",
    ],
    rest: Input,
    check: Some(jq_check),
    config: Some(&JQ_CONFIG),
    ..BASE
};

/// jq loads `~/.jq`, when it is a file, before every filter: its definitions replace
/// builtins the filter uses (`def length: $ENV;`), so the filter execgate read is not the
/// one that runs. (As a directory it is a module path, which only `import` reaches, and
/// the filter's reader refuses imports.)
const JQ_CONFIG: Config = Config {
    files: &[ConfigFile {
        name: ".jq",
        place: Place::Home,
        judge: Judge::Exists,
        why: "jq loads its definitions before every filter, replacing builtins the filter uses",
        neutralised: false,
    }],
    env: "`JQ_COLORS` (colours only); `$ENV` and `env` in a filter read the environment (a finding of the filter)",
    run_env: &[],
};

fn jq_check(r: &mut Reading<'_>) {
    for key in ["slurpfile", "rawfile", "argfile"] {
        let files: Vec<(String, Span)> = r
            .given
            .iter()
            .filter(|g| g.opt.key() == key)
            .filter_map(|g| g.value2.map(|f| (f.to_string(), g.at)))
            .collect();
        for (f, at) in files {
            r.add(Effect::Reads(f), at);
        }
    }
    let from_file = r.has("from-file");
    let operands = r.operands.clone();
    let mut rest = operands.as_slice();
    if !from_file && let Some(&(i, filter)) = operands.first() {
        if let Some(why) = jq_filter_risk(filter) {
            r.add(why, Span::one(i));
        }
        rest = &operands[1..];
    }
    // After `--args` or `--jsonargs`, operands are values, not files.
    let args_at = r
        .given
        .iter()
        .filter(|g| matches!(g.opt.key(), "args" | "jsonargs"))
        .map(|g| g.at.first)
        .min();
    for &(i, w) in rest {
        if args_at.is_some_and(|a| i > a) || w == "-" {
            continue;
        }
        r.add(Effect::Reads(w.to_string()), Span::one(i));
    }
    r.set_roles(&[], Role::Passthrough);
}

/// What a jq filter reaches, as findings: jq's own reader accounts for every token of it.
fn jq_filter_risk(filter: &str) -> Option<Effect> {
    match filter::read(filter) {
        Err(why) => Some(Effect::Unknown(format!(
            "the jq filter cannot be read exactly: {why}"
        ))),
        Ok(reaches) => reaches.into_iter().next().map(|reach| match reach {
            filter::Reach::Environment(why) => Effect::Env(format!(
                "the jq filter reads the environment ({why}), which may hold secrets"
            )),
            filter::Reach::Modules(why) => {
                Effect::Code(format!("the jq filter loads modules from files ({why})"))
            }
        }),
    }
}

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::testing::{Table, read, said};
    use super::*;

    /// Filters on standard input: harmless.
    const HARMLESS: &[&str] = &["jq .", "jq -r .name", "jq -n --arg x 1 '$x'"];

    /// Not harmless, and a phrase the reasons must contain.
    const NOT_HARMLESS: &[(&str, &str)] = &[
        ("jq . data.json", "reads `data.json`"),
        ("jq env", "reads the environment"),
        ("jq --rawfile t notes.txt -n '$t'", "reads `notes.txt`"),
        (
            "jq -f prog.jq data.json",
            "`jq --from-file` runs the jq program in that file",
        ),
        (
            "jq -L lib 'import \"a\" as a; .'",
            "`jq -L` loads jq modules from DIRECTORY",
        ),
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[&HARMLESS, &NOT_HARMLESS];

    #[test]
    fn jq_commands() {
        for &c in HARMLESS {
            assert!(read(c).harmless(), "{c:?} should be harmless: {}", said(c));
        }
        for &(c, what) in NOT_HARMLESS {
            let s = said(c);
            assert!(s.contains(what), "{c:?}: expected {what:?} in {s:?}");
            assert!(!read(c).harmless(), "{c:?} must not be harmless");
        }
    }

    #[test]
    fn jq_filters() {
        for f in [
            ".",
            ".name",
            ".env.HOME",
            "keys",
            "map(.a) | add",
            "\"env\"",
            "{a: .b}",
            "{env}",
        ] {
            assert_eq!(jq_filter_risk(f), None, "{f}");
        }
        for f in [
            "env",
            "$ENV.HOME",
            "env.PATH",
            "[env]",
            "\"\\(env)\"",
            "import \"a\" as a; .",
            "include \"x\"; .",
            "$ ENV",
            "{a:env}",
        ] {
            assert!(jq_filter_risk(f).is_some(), "{f}");
        }
    }
}
