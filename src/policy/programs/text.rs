//! The search tools: `grep` and `rg`. Each takes a pattern as its first operand unless
//! an option gave it, so each has a check that finds it.

use super::profile::Role::{Input, Text};
use super::profile::{BASE, Config, Effect, Profile, Reading, Role, Span, Syntax};

pub const PROFILES: &[&Profile] = &[&GREP, &RG];

/// GNU grep 3.8.
const GREP: Profile = Profile {
    names: &["grep", "egrep", "fgrep"],
    options: &[
        "-E, --extended-regexp",
        "-F, --fixed-strings",
        "-G, --basic-regexp",
        "-P, --perl-regexp",
        "-e, --regexp=PATTERNS",
        "-f, --file=FILE  reads (- is stdin)",
        "-i, -y, --ignore-case",
        "--no-ignore-case",
        "-w, --word-regexp",
        "-x, --line-regexp",
        "-z, --null-data",
        "-s, --no-messages",
        "-v, --invert-match",
        "-V",
        "-m, --max-count=NUM",
        "-b, --byte-offset",
        "-n, --line-number",
        "--line-buffered",
        "-H, --with-filename",
        "-h, --no-filename",
        "--label=LABEL",
        "-o, --only-matching",
        "-q, --quiet, --silent",
        "--binary-files=TYPE",
        "-a, --text",
        "-I",
        "-d, --directories=ACTION",
        "-D, --devices=ACTION",
        "-r, --recursive  recurses",
        "-R, --dereference-recursive  recurses",
        "--include=GLOB",
        "--exclude=GLOB",
        "--exclude-from=FILE  reads",
        "--exclude-dir=GLOB",
        "-L, --files-without-match",
        "-l, --files-with-matches",
        "-c, --count",
        "-T, --initial-tab",
        "-Z, --null",
        "-B, --before-context=NUM",
        "-A, --after-context=NUM",
        "-C, --context=NUM",
        "-NUM",
        "--group-separator=SEP",
        "--no-group-separator",
        "--color[=WHEN], --colour[=WHEN]",
        "-U, --binary",
    ],
    rest: Input,
    check: Some(grep_check),
    ..BASE
};

/// The pattern is the first operand unless `-e` or `-f` gave it; `-d recurse` recurses.
fn grep_check(r: &mut Reading<'_>) {
    if r.has("regexp") || r.has("file") {
        r.set_roles(&[], Input);
    } else {
        r.set_roles(&[Text], Input);
    }
    if let Some(g) = r.given_of("directories")
        && g.value == Some("recurse")
    {
        let at = g.at;
        let files: Vec<String> = r
            .operands
            .iter()
            .skip(usize::from(!(r.has("regexp") || r.has("file"))))
            .map(|(_, w)| w.to_string())
            .collect();
        if files.is_empty() {
            r.add(Effect::ReadsTree(".".into()), at);
        }
        for f in files {
            r.add(Effect::ReadsTree(f), at);
        }
    }
}

/// ripgrep 14. It searches the working directory, recursively, when given no path and
/// its standard input is not a pipe.
const RG: Profile = Profile {
    names: &["rg"],
    syntax: Syntax::Clap,
    options: &[
        "-e, --regexp=PATTERN",
        "-f, --file=PATTERNFILE  reads (- is stdin)",
        "--pre=COMMAND  runs: runs COMMAND on every file searched",
        "--pre-glob=GLOB",
        "-z, --search-zip  code: runs decompression programs on compressed files",
        "--no-search-zip",
        "-E, --encoding=ENCODING",
        "--engine=ENGINE",
        "-F, --fixed-strings",
        "--no-fixed-strings",
        "-i, --ignore-case",
        "-S, --smart-case",
        "-s, --case-sensitive",
        "-v, --invert-match",
        "-w, --word-regexp",
        "-x, --line-regexp",
        "-U, --multiline",
        "--no-multiline",
        "--multiline-dotall",
        "-P, --pcre2",
        "--no-pcre2",
        "--auto-hybrid-regex",
        "--crlf",
        "--null-data",
        "--no-unicode",
        "--mmap",
        "--no-mmap",
        "--stop-on-nonmatch",
        "-m, --max-count=NUM",
        "-j, --threads=NUM",
        "-g, --glob=GLOB",
        "--iglob=GLOB",
        "--glob-case-insensitive",
        "-., --hidden",
        "--no-hidden",
        "--ignore-file=PATH  reads",
        "--ignore-file-case-insensitive",
        "-d, --max-depth=NUM",
        "--max-filesize=NUM",
        "--no-ignore",
        "--no-ignore-dot",
        "--no-ignore-exclude",
        "--no-ignore-files",
        "--no-ignore-global",
        "--no-ignore-parent",
        "--no-ignore-vcs",
        "--no-require-git",
        "--one-file-system",
        "-t, --type=TYPE",
        "-T, --type-not=TYPE",
        "--type-add=TYPESPEC",
        "--type-clear=TYPE",
        "-u, --unrestricted",
        "-L, --follow",
        "--no-follow",
        "--binary",
        "-a, --text",
        "--no-text",
        "-A, --after-context=NUM",
        "-B, --before-context=NUM",
        "-C, --context=NUM",
        "--block-buffered",
        "--line-buffered",
        "-b, --byte-offset",
        "--color=WHEN",
        "--colors=SPEC",
        "--column",
        "--no-column",
        "--context-separator=SEP",
        "--no-context-separator",
        "--field-context-separator=SEP",
        "--field-match-separator=SEP",
        "--heading",
        "--no-heading",
        "-H, --with-filename",
        "-I, --no-filename",
        "--hostname-bin=COMMAND  runs: runs COMMAND to find the host name",
        "--hyperlink-format=FORMAT",
        "--include-zero",
        "-n, --line-number",
        "-N, --no-line-number",
        "-M, --max-columns=NUM",
        "--max-columns-preview",
        "-0, --null",
        "-o, --only-matching",
        "--path-separator=SEP",
        "--passthru",
        "-p, --pretty",
        "-q, --quiet",
        "-r, --replace=REPLACEMENT",
        "--sort=SORTBY",
        "--sortr=SORTBY",
        "--trim",
        "--no-trim",
        "--vimgrep",
        "--json",
        "--no-json",
        "-c, --count",
        "--count-matches",
        "-l, --files-with-matches",
        "--files-without-match",
        "--stats",
        "--debug",
        "--trace",
        "--files",
        "--type-list",
        "--no-config",
        "--no-messages",
        "--no-ignore-messages",
        "-h",
        "-V",
    ],
    rest: Role::Tree,
    check: Some(rg_check),
    config: Some(&RG_CONFIG),
    ..BASE
};

/// ripgrep reads no file unless its environment names one.
const RG_CONFIG: Config = Config {
    files: &[],
    env: "`RIPGREP_CONFIG_PATH`: a file of extra arguments, read before the command's (`--pre` there runs a program)",
    run_env: &[],
};

fn rg_check(r: &mut Reading<'_>) {
    let pattern_given = r.has("regexp") || r.has("file") || r.has("files") || r.has("type-list");
    if pattern_given {
        r.set_roles(&[], Role::Tree);
    } else {
        r.set_roles(&[Text], Role::Tree);
    }
    let paths = r.operands.len().saturating_sub(usize::from(!pattern_given));
    let listing_only = r.has("type-list") || r.has("help") || r.has("version") || r.has("h");
    if paths == 0 && !r.piped && !listing_only && !r.stopped {
        r.add(Effect::ReadsTree(".".into()), Span::one(0));
    }
}

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::testing::{Table, read, said};

    /// Harmless: a pattern, and standard input or nothing walked.
    const HARMLESS: &[&str] = &[
        "grep foo",
        "grep -e foo -e bar",
        "grep -f - -i",
        "rg --type-list",
        "rg --version",
    ];

    /// Not harmless, and a phrase the reasons must contain.
    const NOT_HARMLESS: &[(&str, &str)] = &[
        ("grep foo a.txt", "reads `a.txt`"),
        ("grep -e foo a.txt", "reads `a.txt`"),
        ("grep -r foo src", "reads everything under `src`"),
        ("grep -d recurse foo", "reads everything under `.`"),
        (
            "grep --directories=recurse foo src",
            "reads everything under `src`",
        ),
        // ripgrep walks the working directory when given no path.
        ("rg foo", "reads everything under `.`"),
        ("rg --files", "reads everything under `.`"),
        ("rg -e foo src", "reads everything under `src`"),
        (
            "rg --pre ./unzip.sh foo",
            "runs COMMAND on every file searched",
        ),
        ("rg -z foo logs", "runs decompression programs"),
        (
            "rg --hostname-bin=./h foo",
            "runs COMMAND to find the host name",
        ),
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[&HARMLESS, &NOT_HARMLESS];

    #[test]
    fn harmless() {
        for &c in HARMLESS {
            assert!(read(c).harmless(), "{c:?} should be harmless: {}", said(c));
        }
    }

    #[test]
    fn what_is_not_harmless_and_why() {
        for &(c, what) in NOT_HARMLESS {
            let s = said(c);
            assert!(s.contains(what), "{c:?}: expected {what:?} in {s:?}");
            assert!(!read(c).harmless(), "{c:?} must not be harmless");
        }
    }
}
