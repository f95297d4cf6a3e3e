//! git (2.47): its global options (read exactly: git.c takes no abbreviations there),
//! and its subcommands. Most subcommands parse with parse-options, which accepts any
//! unambiguous abbreviation (`git reset --har` is `--hard`); `log`, `show`, `diff` and
//! the other revision walkers take exact words only. Option lines follow `git SUB -h`.
//!
//! Effects: a subcommand that changes the repository is `repo` (fine under a `git *`
//! rule, never step 8); one that reaches a remote is `net`; options that run programs
//! (`--exec`, `--upload-pack`, `--ext-diff`, an editor) are `code`; options that move
//! git elsewhere or reconfigure it (`-C`, `-c`, `--git-dir`, `--config`) are `config`;
//! and what loses work (`reset --hard`, `push --force`, `branch -D`, `clean -f`) is
//! `danger`. Which hooks each subcommand can run is [`hooks_run_by`].

use super::profile::Role::{Nothing, Read, Revision, Text, Write};
use super::profile::{BASE, Effect, Profile, Reading, Role, Runs, Span, Syntax, concat};
use super::spec::Does;

pub mod keys;

pub const PROFILES: &[&Profile] = &[&GIT];

/// Which hooks a subcommand can run: none, only `post-index-change` (it may refresh
/// the index), or any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hooks {
    None,
    IndexOnly,
    Any,
}

/// Which hooks `git SUB` can run (by the subcommand's first name).
pub fn hooks_run_by(sub: Option<&str>) -> Hooks {
    match sub {
        None => Hooks::None,
        Some(
            "log" | "show" | "diff" | "shortlog" | "describe" | "rev-parse" | "ls-files"
            | "ls-tree" | "cat-file" | "rev-list" | "blame" | "grep" | "show-ref" | "for-each-ref"
            | "config" | "remote" | "branch" | "tag" | "version" | "help" | "reflog" | "merge-base"
            | "name-rev" | "show-branch" | "count-objects" | "check-ignore" | "cherry"
            | "whatchanged" | "var" | "ls-remote",
        ) => Hooks::None,
        Some("status") => Hooks::IndexOnly,
        Some(_) => Hooks::Any,
    }
}

const GIT: Profile = Profile {
    names: &["git"],
    syntax: Syntax::Exact,
    options: &[
        "-v, --version",
        "-h, --help",
        "-C PATH  config: runs git in another directory",
        "-c NAME_VALUE  config: sets git configuration for this command",
        "--config-env=NAME_ENVVAR  config: sets git configuration from the environment",
        "--exec-path[=PATH]",
        "--html-path",
        "--man-path",
        "--info-path",
        "-p, --paginate  code: runs a pager",
        "-P, --no-pager",
        "--no-replace-objects",
        "--no-lazy-fetch",
        "--no-optional-locks",
        "--no-advice",
        "--bare  config: treats the directory as a bare repository",
        "--git-dir=PATH  config: uses another repository",
        "--work-tree=PATH  config: uses another working tree",
        "--namespace=NAME  config: uses another namespace",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--list-cmds=GROUPS",
        "--attr-source=TREE_ISH  config: reads attributes (which choose drivers) from another tree",
    ],
    subcommands: &[
        &STATUS,
        &LOG,
        &SHOW,
        &DIFF,
        &WHATCHANGED,
        &SHORTLOG,
        &DESCRIBE,
        &REV_PARSE,
        &REV_LIST,
        &LS_FILES,
        &LS_TREE,
        &CAT_FILE,
        &BLAME,
        &GREP,
        &SHOW_REF,
        &FOR_EACH_REF,
        &MERGE_BASE,
        &NAME_REV,
        &COUNT_OBJECTS,
        &CHECK_IGNORE,
        &CHERRY,
        &VERSION,
        &HELP,
        &BRANCH,
        &TAG,
        &REMOTE,
        &STASH,
        &CONFIG,
        &REFLOG,
        &ADD,
        &COMMIT,
        &PUSH,
        &FETCH,
        &PULL,
        &CHECKOUT,
        &SWITCH,
        &RESTORE,
        &RESET,
        &CLEAN,
        &REBASE,
        &MERGE,
        &CHERRY_PICK,
        &REVERT,
        &CLONE,
        &INIT,
        &RM,
        &MV,
        &WORKTREE,
        &BISECT,
        &APPLY,
        &AM,
        &ARCHIVE,
        &FORMAT_PATCH,
        &GC,
        &UPDATE_REF,
        &SUBMODULE,
        &NOTES,
        &FILTER_BRANCH,
        &FILTER_REPO,
    ],
    check: Some(git_check),
    // Its own commands, from its exec path: `git status` asks each submodule with
    // `git status --porcelain=2`, under the configuration execgate judged; `git
    // submodule` is a shell script of git's (`git-submodule`) that runs `sed`,
    // `basename` and `uname` on words of its own, and `git-sh-i18n--envsubst`.
    helpers: &["git", "git-*", "sed", "basename", "uname"],
    ..BASE
};

/// `-c NAME=VALUE` that names a program git runs is code, not just configuration.
fn git_check(r: &mut Reading<'_>) {
    let found: Vec<(String, Span, bool)> = r
        .given
        .iter()
        .filter(|g| matches!(g.opt.key(), "c" | "config-env"))
        .filter_map(|g| {
            g.value
                .map(|v| (v.to_string(), g.at, g.opt.key() == "config-env"))
        })
        .collect();
    for (setting, at, from_env) in found {
        // `-c NAME` alone is `NAME=true`; `--config-env` takes its value from a variable
        // execgate does not see.
        let (name, value) = match setting.split_once('=') {
            Some((name, _)) if from_env => (name, None),
            Some((name, value)) => (name, Some(Some(value))),
            None => (setting.as_str(), Some(None)),
        };
        let Some(key) = keys::program_key(name, value) else {
            continue;
        };
        let why = format!("`git -c {}=…` {}", name.to_ascii_lowercase(), key.why);
        // A program set for one command is one the owner never saw configured.
        if key.runs_program() {
            r.add(
                Effect::Danger(format!(
                    "runs a program set with `git -c` (`{}`)",
                    name.to_ascii_lowercase()
                )),
                at,
            );
        }
        // What it runs, where the value names it: an alias is a git command, or with `!`
        // a shell command; a program-valued key is a shell command. Other keys move git
        // elsewhere and start nothing themselves.
        let alias = name.to_ascii_lowercase().starts_with("alias.");
        match value.flatten() {
            Some(v) if alias && !v.trim_start().starts_with('!') => {
                let mut words = vec!["git".to_string()];
                words.extend(v.split_whitespace().map(str::to_string));
                r.starts(why, at, Runs::Words(words));
            }
            Some(v) if key.runs_program() => {
                let script = v.trim_start().trim_start_matches('!').to_string();
                r.starts(why, at, Runs::Script(script));
            }
            _ => r.add(Effect::Code(why), at),
        }
    }
    if let Some(g) = r.given_of("exec-path")
        && g.value.is_some()
    {
        let at = g.at;
        r.add(
            Effect::Code("`--exec-path=…` runs git's programs from another directory".into()),
            at,
        );
        r.add(
            Effect::Danger("runs git programs from another directory (`git --exec-path`)".into()),
            at,
        );
    }
}

// ── The revision walkers: exact words ────────────────────────────────────────────────

/// Options of git's revision walk (`git log`, `show`, `rev-list`, …).
const REVISION_OPTIONS: &[&str] = &[
    "-NUM",
    "-n, --max-count=NUM",
    "--skip=NUM",
    "--since, --after=DATE",
    "--since-as-filter=DATE",
    "--until, --before=DATE",
    "--max-age=TIME",
    "--min-age=TIME",
    "--author=PATTERN",
    "--committer=PATTERN",
    "--grep-reflog=PATTERN",
    "--grep=PATTERN",
    "--all-match",
    "--invert-grep",
    "-i, --regexp-ignore-case",
    "--basic-regexp",
    "-E, --extended-regexp",
    "-F, --fixed-strings",
    "-P, --perl-regexp",
    "--remove-empty",
    "--merges",
    "--no-merges",
    "--min-parents=N",
    "--max-parents=N",
    "--no-min-parents",
    "--no-max-parents",
    "--first-parent",
    "--exclude-first-parent-only",
    "--not",
    "--all",
    "--branches[=PATTERN]",
    "--tags[=PATTERN]",
    "--remotes[=PATTERN]",
    "--glob=PATTERN",
    "--exclude=PATTERN",
    "--exclude-hidden=KIND",
    "--reflog",
    "--alternate-refs",
    "--single-worktree",
    "--ignore-missing",
    "--bisect",
    "--stdin",
    "--cherry-mark",
    "--cherry-pick",
    "--left-only",
    "--right-only",
    "--cherry",
    "-g, --walk-reflogs",
    "--merge",
    "--boundary",
    "--simplify-by-decoration",
    "--show-pulls",
    "--full-history",
    "--dense",
    "--sparse",
    "--simplify-merges",
    "--ancestry-path[=COMMIT]",
    "--date-order",
    "--author-date-order",
    "--topo-order",
    "--reverse",
    "--no-walk[=HOW]",
    "--do-walk",
    "--format=FORMAT",
    "--pretty[=FORMAT]",
    "--abbrev-commit",
    "--no-abbrev-commit",
    "--oneline",
    "--encoding=ENCODING",
    "--expand-tabs[=N]",
    "--no-expand-tabs",
    "--notes[=REF]",
    "--no-notes",
    "--show-notes[=REF]",
    "--show-notes-by-default",
    "--standard-notes",
    "--no-standard-notes",
    "--show-signature  code: runs the signature program (gpg) on every commit",
    "--relative-date",
    "--date=FORMAT",
    "--parents",
    "--children",
    "--left-right",
    "--graph",
    "--show-linear-break[=BARRIER]",
    "--count",
    "--timestamp",
    "--objects",
    "--objects-edge",
    "--decorate[=HOW]",
    "--no-decorate",
    "--decorate-refs=PATTERN",
    "--decorate-refs-exclude=PATTERN",
    "--clear-decorations",
    "--source",
    "--mailmap, --use-mailmap",
    "--no-mailmap, --no-use-mailmap",
    "--full-diff",
    "--log-size",
    "--follow",
    "--no-follow",
];

/// Options of git's diff machinery (`git diff`, `log -p`, `show`, …).
const DIFF_OPTIONS: &[&str] = &[
    "-p, -u, --patch",
    "-s, --no-patch",
    "-U, --unified=N",
    "--output=FILE  writes",
    "--output-indicator-new=CHAR",
    "--output-indicator-old=CHAR",
    "--output-indicator-context=CHAR",
    "--raw",
    "--patch-with-raw",
    "-t",
    "--indent-heuristic",
    "--no-indent-heuristic",
    "--minimal",
    "--patience",
    "--histogram",
    "--anchored=TEXT",
    "--diff-algorithm=ALGORITHM",
    "--stat[=WIDTH]",
    "--stat-width=N",
    "--stat-name-width=N",
    "--stat-graph-width=N",
    "--stat-count=N",
    "--compact-summary",
    "--numstat",
    "--shortstat",
    "-X[PARAMS], --dirstat[=PARAMS]",
    "--cumulative",
    "--dirstat-by-file[=PARAMS]",
    "--summary",
    "--patch-with-stat",
    "-z",
    "--name-only",
    "--name-status",
    "--submodule[=FORMAT]",
    "--color[=WHEN]",
    "--no-color",
    "--color-moved[=MODE]",
    "--no-color-moved",
    "--color-moved-ws=MODES",
    "--no-color-moved-ws",
    "--word-diff[=MODE]",
    "--word-diff-regex=REGEX",
    "--color-words[=REGEX]",
    "--no-renames",
    "--rename-empty",
    "--no-rename-empty",
    "--check",
    "--ws-error-highlight=KIND",
    "--full-index",
    "--binary",
    "--abbrev[=N]",
    "--no-abbrev",
    "-B[N], --break-rewrites[=N]",
    "-M[N], --find-renames[=N]",
    "-C[N], --find-copies[=N]",
    "--find-copies-harder",
    "-D, --irreversible-delete",
    "-l NUM",
    "--diff-filter=FILTER",
    "-S STRING",
    "-G REGEX",
    "--find-object=OBJECT",
    "--pickaxe-all",
    "--pickaxe-regex",
    "-O ORDERFILE  reads",
    "--skip-to=FILE",
    "--rotate-to=FILE",
    "-R",
    "--relative[=PATH]",
    "--no-relative",
    "-a, --text",
    "--ignore-cr-at-eol",
    "--ignore-space-at-eol",
    "-b, --ignore-space-change",
    "-w, --ignore-all-space",
    "--ignore-blank-lines",
    "-I, --ignore-matching-lines=REGEX",
    "--inter-hunk-context=N",
    "-W, --function-context",
    "--no-function-context",
    "--exit-code",
    "--quiet",
    "--ext-diff  code: runs the configured external diff program",
    "--no-ext-diff",
    "--textconv  code: runs the configured text-conversion programs",
    "--no-textconv",
    "--ignore-submodules[=WHEN]",
    "--src-prefix=PREFIX",
    "--dst-prefix=PREFIX",
    "--no-prefix",
    "--default-prefix",
    "--line-prefix=PREFIX",
    "--ita-invisible-in-index",
    "--ita-visible-in-index",
    "-m",
    "-c",
    "--cc",
    "--dd",
    "--remerge-diff",
    "--diff-merges=FORMAT",
    "--no-diff-merges",
    "--combined-all-paths",
];

/// Both lists, for `log`, `show` and `whatchanged`.
const LOG_OPTIONS: &[&str] =
    &concat::<{ REVISION_OPTIONS.len() + DIFF_OPTIONS.len() }>(REVISION_OPTIONS, DIFF_OPTIONS);

/// `-c` and `-m` mean one thing to the revision walk's diff and nothing else; `-i`,
/// `-E`, `-F`, `-P` and `-t` appear once; the lists do not share a name.
const LOG: Profile = Profile {
    names: &["log"],
    syntax: Syntax::Exact,
    options: LOG_OPTIONS,
    rest: Revision,
    ..BASE
};

const SHOW: Profile = Profile {
    names: &["show"],
    ..LOG
};

const WHATCHANGED: Profile = Profile {
    names: &["whatchanged"],
    ..LOG
};

const REV_LIST: Profile = Profile {
    names: &["rev-list"],
    syntax: Syntax::Exact,
    options: REVISION_OPTIONS,
    rest: Revision,
    ..BASE
};

const DIFF_ONLY: &[&str] = &[
    "--cached, --staged",
    "--merge-base",
    "--no-index",
    "-1, --base",
    "-2, --ours",
    "-3, --theirs",
];

const DIFF_ALL: &[&str] =
    &concat::<{ DIFF_OPTIONS.len() + DIFF_ONLY.len() }>(DIFF_OPTIONS, DIFF_ONLY);

/// `git diff`: revisions, or paths; `--no-index` compares any two files.
const DIFF: Profile = Profile {
    names: &["diff"],
    syntax: Syntax::Exact,
    options: DIFF_ALL,
    rest: Revision,
    check: Some(diff_check),
    ..BASE
};

fn diff_check(r: &mut Reading<'_>) {
    if r.has("no-index") {
        r.set_roles(&[], Read);
    }
}

/// Its own options are parse-options (`-sn`); the rest go to the revision walk.
const SHORTLOG: Profile = Profile {
    names: &["shortlog"],
    syntax: Syntax::Git,
    options: &concat::<{ REVISION_OPTIONS.len() + 5 }>(
        REVISION_OPTIONS,
        &[
            "-s, --summary",
            "-e, --email",
            "--numbered",
            "--group=TYPE",
            "-w[WIDTH]",
        ],
    ),
    rest: Revision,
    ..BASE
};

// ── Read-only subcommands with parse-options ─────────────────────────────────────────

const STATUS: Profile = Profile {
    names: &["status"],
    syntax: Syntax::Git,
    options: &[
        "-v, --verbose",
        "--no-verbose",
        "-s, --short",
        "--no-short",
        "-b, --branch",
        "--no-branch",
        "--show-stash",
        "--no-show-stash",
        "--ahead-behind",
        "--no-ahead-behind",
        "--porcelain[=VERSION]",
        "--no-porcelain",
        "--long",
        "--no-long",
        "-z, --null",
        "--no-null",
        "-u[MODE], --untracked-files[=MODE]",
        "--no-untracked-files",
        "--ignored[=MODE]",
        "--no-ignored",
        "--ignore-submodules[=WHEN]",
        "--no-ignore-submodules",
        "--column[=STYLE]",
        "--no-column",
        "--no-renames",
        "--renames",
        "-M[N], --find-renames[=N]",
    ],
    rest: Revision,
    ..BASE
};

const DESCRIBE: Profile = Profile {
    names: &["describe"],
    syntax: Syntax::Git,
    options: &[
        "--contains",
        "--debug",
        "--all",
        "--tags",
        "--long",
        "--first-parent",
        "--abbrev[=N]",
        "--exact-match",
        "--candidates=N",
        "--match=PATTERN",
        "--exclude=PATTERN",
        "--always",
        "--dirty[=MARK]",
        "--broken[=MARK]",
    ],
    rest: Revision,
    ..BASE
};

const REV_PARSE: Profile = Profile {
    names: &["rev-parse"],
    syntax: Syntax::Exact,
    options: &[
        "--abbrev-ref[=MODE]",
        "--short[=N]",
        "--verify",
        "-q, --quiet",
        "--show-toplevel",
        "--show-superproject-working-tree",
        "--git-dir",
        "--absolute-git-dir",
        "--git-common-dir",
        "--is-inside-work-tree",
        "--is-inside-git-dir",
        "--is-bare-repository",
        "--is-shallow-repository",
        "--show-prefix",
        "--show-cdup",
        "--symbolic",
        "--symbolic-full-name",
        "--all",
        "--branches[=PATTERN]",
        "--tags[=PATTERN]",
        "--remotes[=PATTERN]",
        "--glob=PATTERN",
        "--exclude=PATTERN",
        "--local-env-vars",
        "--since, --after=DATE",
        "--until, --before=DATE",
        "--show-object-format[=WHICH]",
        "--show-ref-format",
        "--path-format=FORMAT",
        "--git-path=PATH",
        "--shared-index-path",
        "--sq",
        "--not",
        "--flags",
        "--no-flags",
        "--revs-only",
        "--no-revs",
        "--default=ARG",
    ],
    rest: Revision,
    ..BASE
};

const LS_FILES: Profile = Profile {
    names: &["ls-files"],
    syntax: Syntax::Git,
    options: &[
        "-z",
        "-t",
        "-v",
        "-f",
        "-c, --cached",
        "-d, --deleted",
        "-m, --modified",
        "-o, --others",
        "-i, --ignored",
        "-s, --stage",
        "-k, --killed",
        "--directory",
        "--eol",
        "--empty-directory",
        "--no-empty-directory",
        "-u, --unmerged",
        "--resolve-undo",
        "-x, --exclude=PATTERN",
        "-X, --exclude-from=FILE  reads",
        "--exclude-per-directory=FILE",
        "--exclude-standard",
        "--full-name",
        "--recurse-submodules",
        "--error-unmatch",
        "--with-tree=TREE_ISH",
        "--abbrev[=N]",
        "--debug",
        "--deduplicate",
        "--sparse",
        "--format=FORMAT",
    ],
    rest: Revision,
    ..BASE
};

const LS_TREE: Profile = Profile {
    names: &["ls-tree"],
    syntax: Syntax::Git,
    options: &[
        "-d",
        "-r",
        "-t",
        "-z",
        "-l, --long",
        "--name-only, --name-status",
        "--object-only",
        "--full-name",
        "--full-tree",
        "--format=FORMAT",
        "--abbrev[=N]",
    ],
    rest: Text,
    ..BASE
};

/// Objects are read from the repository only: `HEAD:README.md` is text to git, not a path.
const CAT_FILE: Profile = Profile {
    names: &["cat-file"],
    syntax: Syntax::Git,
    options: &[
        "-t",
        "-s",
        "-e",
        "-p",
        "--textconv  code: runs the configured text-conversion program",
        "--filters  code: runs the configured filter programs",
        "--path=PATH",
        "--batch[=FORMAT]",
        "--batch-check[=FORMAT]",
        "--batch-command[=FORMAT]",
        "--batch-all-objects",
        "--buffer",
        "--follow-symlinks",
        "--unordered",
        "-Z",
        "--allow-unknown-type",
        "--use-mailmap, --mailmap",
        "--no-use-mailmap, --no-mailmap",
    ],
    rest: Text,
    ..BASE
};

const BLAME: Profile = Profile {
    names: &["blame", "annotate"],
    syntax: Syntax::Git,
    options: &[
        "-L RANGE",
        "-l",
        "-t",
        "-S REVS_FILE  reads",
        "--reverse",
        "--first-parent",
        "-p, --porcelain",
        "--line-porcelain",
        "--incremental",
        "--encoding=ENCODING",
        "--contents=FILE  reads",
        "--date=FORMAT",
        "--progress",
        "--no-progress",
        "-M[N]",
        "-C[N]",
        "--ignore-rev=REV",
        "--ignore-revs-file=FILE  reads",
        "--color-lines",
        "--color-by-age",
        "-e, --show-email",
        "-w",
        "--abbrev[=N]",
        "-c",
        "-f, --show-name",
        "-n, --show-number",
        "-s",
        "--root",
        "--show-stats",
        "--score-debug",
        "--minimal",
    ],
    rest: Revision,
    ..BASE
};

/// `git grep` searches every tracked file (or, with `--no-index`, the directory).
const GREP: Profile = Profile {
    names: &["grep"],
    syntax: Syntax::Git,
    options: &[
        "--cached",
        "--no-index",
        "--untracked",
        "--exclude-standard",
        "--no-exclude-standard",
        "--recurse-submodules",
        "-v, --invert-match",
        "-i, --ignore-case",
        "-w, --word-regexp",
        "-a, --text",
        "-I",
        "--textconv  code: runs the configured text-conversion programs",
        "--no-textconv",
        "-r, --recursive",
        "--no-recursive",
        "--max-depth=DEPTH",
        "-E, --extended-regexp",
        "-G, --basic-regexp",
        "-F, --fixed-strings",
        "-P, --perl-regexp",
        "-n, --line-number",
        "--column",
        "--full-name",
        "-h",
        "-H",
        "-l, --files-with-matches, --name-only",
        "-L, --files-without-match",
        "-z, --null",
        "-o, --only-matching",
        "-c, --count",
        "--color[=WHEN]",
        "--no-color",
        "--break",
        "--heading",
        "-C, --context=N",
        "-B, --before-context=N",
        "-A, --after-context=N",
        "-NUM",
        "--threads=N",
        "-p, --show-function",
        "-W, --function-context",
        "-f FILE  reads",
        "-e PATTERN",
        "--and",
        "--or",
        "--not",
        "-q, --quiet",
        "--all-match",
        "-O[PAGER], --open-files-in-pager[=PAGER]  runs: opens the matching files in a program",
        "-m, --max-count=NUM",
    ],
    rest: Revision,
    check: Some(grep_check),
    ..BASE
};

fn grep_check(r: &mut Reading<'_>) {
    let by_option = r.has("e") || r.has("f");
    r.set_roles(if by_option { &[] } else { &[Text] }, Revision);
    // Every tracked file (with `--no-index` or `--untracked`, the directory itself).
    r.add(Effect::ReadsTree(".".into()), Span::one(0));
}

const SHOW_REF: Profile = Profile {
    names: &["show-ref"],
    syntax: Syntax::Git,
    options: &[
        "--tags",
        "--branches, --heads",
        "--exists",
        "--verify",
        "--head",
        "-d, --dereference",
        "-s, --hash[=N]",
        "--abbrev[=N]",
        "-q, --quiet",
        "--exclude-existing[=PATTERN]",
    ],
    rest: Text,
    ..BASE
};

const FOR_EACH_REF: Profile = Profile {
    names: &["for-each-ref"],
    syntax: Syntax::Git,
    options: &[
        "-s, --shell",
        "-p, --perl",
        "--python",
        "--tcl",
        "--omit-empty",
        "--count=N",
        "--format=FORMAT",
        "--color[=WHEN]",
        "--exclude=PATTERN",
        "--sort=KEY",
        "--points-at=OBJECT",
        "--merged[=COMMIT]",
        "--no-merged[=COMMIT]",
        "--contains[=COMMIT]",
        "--no-contains[=COMMIT]",
        "--ignore-case",
        "--stdin",
        "--include-root-refs",
    ],
    rest: Text,
    ..BASE
};

const MERGE_BASE: Profile = Profile {
    names: &["merge-base"],
    syntax: Syntax::Git,
    options: &[
        "-a, --all",
        "--octopus",
        "--independent",
        "--is-ancestor",
        "--fork-point",
    ],
    rest: Revision,
    ..BASE
};

const NAME_REV: Profile = Profile {
    names: &["name-rev"],
    syntax: Syntax::Git,
    options: &[
        "--name-only",
        "--tags",
        "--refs=PATTERN",
        "--exclude=PATTERN",
        "--all",
        "--annotate-stdin",
        "--undefined",
        "--no-undefined",
        "--always",
    ],
    rest: Revision,
    ..BASE
};

const COUNT_OBJECTS: Profile = Profile {
    names: &["count-objects"],
    syntax: Syntax::Git,
    options: &["-v, --verbose", "-H, --human-readable"],
    ..BASE
};

const CHECK_IGNORE: Profile = Profile {
    names: &["check-ignore"],
    syntax: Syntax::Git,
    options: &[
        "-q, --quiet",
        "-v, --verbose",
        "--stdin",
        "-z",
        "-n, --non-matching",
        "--no-index",
    ],
    rest: Revision,
    ..BASE
};

const CHERRY: Profile = Profile {
    names: &["cherry"],
    syntax: Syntax::Git,
    options: &["-v", "--abbrev[=N]"],
    rest: Revision,
    ..BASE
};

const VERSION: Profile = Profile {
    names: &["version"],
    syntax: Syntax::Git,
    options: &["--build-options"],
    ..BASE
};

/// `git help` alone, and its lists (`-a`, `-g`, `-c`), print; a manual (`git help log`,
/// `git help --man`) is shown by `man`, `info` or a browser, or whatever viewer git's
/// configuration names (`help.format`, `man.viewer`, `man.<tool>.cmd`).
const HELP: Profile = Profile {
    names: &["help"],
    syntax: Syntax::Git,
    options: &[
        "-a, --all",
        "--external-commands",
        "--aliases",
        "--verbose",
        "-c, --config",
        "-g, --guides",
        "--user-interfaces",
        "--developer-interfaces",
        "-i, --info",
        "-m, --man",
        "-w, --web  code: starts a web browser",
    ],
    rest: Text,
    check: Some(help_check),
    ..BASE
};

/// A manual asked for by name or by format runs its viewer (the oracle saw `git help
/// --man` run `man`).
fn help_check(r: &mut Reading<'_>) {
    let viewer = ["info", "man"]
        .iter()
        .find_map(|k| r.given_of(k).map(|g| g.at));
    let page = r.operands.first().map(|&(i, _)| Span::one(i));
    if r.has("web") {
        return; // Said already: it starts a browser.
    }
    if let Some(at) = page.or(viewer) {
        r.add(
            Effect::Code(
                "`git help` shows a manual through `man`, `info` or a browser, or the viewer git's configuration names (`help.format`, `man.viewer`)".into(),
            ),
            at,
        );
    }
}

// ── Subcommands that list, or change refs ────────────────────────────────────────────

/// `git branch` lists, unless given a name (creates), `-d`/`-D` (deletes), `-m`/`-c`.
const BRANCH: Profile = Profile {
    names: &["branch"],
    syntax: Syntax::Git,
    options: &[
        "-v, --verbose",
        "-q, --quiet",
        "-t, --track[=MODE]",
        "--no-track",
        "-u, --set-upstream-to=UPSTREAM  repo: changes a branch's upstream",
        "--unset-upstream  repo: changes a branch's upstream",
        "--color[=WHEN]",
        "--no-color",
        "-r, --remotes",
        "--contains=COMMIT",
        "--no-contains=COMMIT",
        "--abbrev[=N]",
        "--no-abbrev",
        "-a, --all",
        "-d, --delete  repo: deletes a branch",
        "-D  danger: deletes a branch even if it is not merged",
        "-m, --move  repo: renames a branch",
        "-M  danger: renames a branch over an existing one",
        "--omit-empty",
        "-c, --copy  repo: copies a branch",
        "-C  danger: copies a branch over an existing one",
        "-l, --list",
        "--show-current",
        "--create-reflog",
        "--edit-description  code: runs an editor",
        "-f, --force  danger: deletes unmerged branches or overwrites an existing branch",
        "--merged=COMMIT",
        "--no-merged=COMMIT",
        "--column[=STYLE]",
        "--no-column",
        "--sort=KEY",
        "--points-at=OBJECT",
        "-i, --ignore-case",
        "--recurse-submodules",
        "--format=FORMAT",
    ],
    rest: Text,
    check: Some(branch_check),
    ..BASE
};

/// Listing takes patterns; otherwise a name creates (or sets) a branch.
fn branch_check(r: &mut Reading<'_>) {
    let listing = r.has("list") || r.operands.is_empty();
    let modifying = [
        "delete",
        "D",
        "move",
        "M",
        "copy",
        "C",
        "set-upstream-to",
        "unset-upstream",
        "edit-description",
    ]
    .iter()
    .any(|k| r.has(k));
    if !listing && !modifying {
        r.set_roles(&[Role::Repo("creates or moves the branch")], Text);
    }
}

const TAG: Profile = Profile {
    names: &["tag"],
    syntax: Syntax::Git,
    options: &[
        "-l, --list",
        "-n[N]",
        "-d, --delete  repo: deletes a tag",
        "-v, --verify  code: runs the signature program (gpg)",
        "-a, --annotate",
        "-m, --message=MESSAGE",
        "-F, --file=FILE  reads",
        "--trailer=TRAILER",
        "-e, --edit  code: runs an editor",
        "-s, --sign",
        "--cleanup=MODE",
        "-u, --local-user=KEY_ID",
        "-f, --force  danger: replaces an existing tag",
        "--create-reflog",
        "--column[=STYLE]",
        "--no-column",
        "--contains=COMMIT",
        "--no-contains=COMMIT",
        "--merged=COMMIT",
        "--no-merged=COMMIT",
        "--omit-empty",
        "--sort=KEY",
        "--points-at=OBJECT",
        "--format=FORMAT",
        "--color[=WHEN]",
        "-i, --ignore-case",
    ],
    rest: Text,
    check: Some(tag_check),
    ..BASE
};

fn tag_check(r: &mut Reading<'_>) {
    let listing = r.has("list") || r.has("n") || r.operands.is_empty();
    let modifying = r.has("delete") || r.has("verify");
    if !listing && !modifying {
        r.set_roles(&[Role::Repo("creates the tag")], Revision);
    }
}

/// `git remote` lists; its subcommands change or reach remotes.
const REMOTE: Profile = Profile {
    names: &["remote"],
    syntax: Syntax::Git,
    options: &["-v, --verbose  env: prints the remotes' URLs, which may hold tokens"],
    subcommands: &[
        &Profile {
            names: &["add"],
            syntax: Syntax::Git,
            options: &[
                "-f  net: fetches from the new remote",
                "--tags",
                "--no-tags",
                "-t BRANCH",
                "-m MASTER",
                "--mirror[=HOW]",
            ],
            operands: &[Text, Role::Config("becomes a remote's URL")],
            does: Does::Repo("adds a remote"),
            ..BASE
        },
        &Profile {
            names: &[
                "rename",
                "remove",
                "rm",
                "set-head",
                "set-branches",
                "prune",
            ],
            syntax: Syntax::Git,
            options: &[
                "-a, --auto",
                "-d, --delete",
                "--add",
                "--progress",
                "--no-progress",
                "-n, --dry-run",
            ],
            rest: Text,
            does: Does::Repo("changes remotes"),
            ..BASE
        },
        &Profile {
            names: &["set-url"],
            syntax: Syntax::Git,
            options: &["--push", "--add", "--delete"],
            operands: &[Text, Role::Config("becomes a remote's URL")],
            rest: Text,
            does: Does::Repo("changes a remote's URL"),
            ..BASE
        },
        &Profile {
            names: &["get-url"],
            syntax: Syntax::Git,
            options: &["--push", "--all"],
            operands: &[Text],
            does: Does::Env("prints a remote's URL, which may hold a token"),
            ..BASE
        },
        &Profile {
            names: &["show"],
            syntax: Syntax::Git,
            options: &["-n", "-p, --prune"],
            rest: Text,
            does: Does::Env("contacts the remote and prints its URLs, which may hold tokens"),
            ..BASE
        },
        &Profile {
            names: &["update"],
            syntax: Syntax::Git,
            options: &["-p, --prune"],
            rest: Text,
            does: Does::Net("contacts the remote"),
            ..BASE
        },
    ],
    ..BASE
};

/// `git stash` (alone: `push`).
const STASH: Profile = Profile {
    names: &["stash"],
    syntax: Syntax::Git,
    options: STASH_PUSH_OPTIONS,
    rest: Revision,
    does: Does::Repo("stashes changes away"),
    subcommands: &[
        &Profile {
            names: &["list"],
            syntax: Syntax::Exact,
            options: LOG_OPTIONS,
            ..BASE
        },
        &Profile {
            names: &["show"],
            syntax: Syntax::Exact,
            options: &concat::<{ DIFF_OPTIONS.len() + 3 }>(
                DIFF_OPTIONS,
                &[
                    "--include-untracked",
                    "--only-untracked",
                    "--no-include-untracked",
                ],
            ),
            rest: Text,
            ..BASE
        },
        &Profile {
            names: &["push", "save"],
            syntax: Syntax::Git,
            options: STASH_PUSH_OPTIONS,
            rest: Revision,
            does: Does::Repo("stashes changes away"),
            ..BASE
        },
        &Profile {
            names: &["pop", "apply", "branch", "store", "create"],
            syntax: Syntax::Git,
            options: &["--index", "-q, --quiet", "-m, --message=MESSAGE"],
            rest: Text,
            does: Does::Repo("applies stashed changes"),
            ..BASE
        },
        &Profile {
            names: &["drop", "clear"],
            syntax: Syntax::Git,
            options: &["-q, --quiet"],
            rest: Text,
            does: Does::Danger("drops stashed work"),
            ..BASE
        },
    ],
    ..BASE
};

const STASH_PUSH_OPTIONS: &[&str] = &[
    "-p, --patch",
    "-S, --staged",
    "-k, --keep-index",
    "--no-keep-index",
    "-u, --include-untracked",
    "-a, --all",
    "-q, --quiet",
    "-m, --message=MESSAGE",
    "--pathspec-from-file=FILE  reads",
    "--pathspec-file-nul",
];

/// `git config`: reading a key is harmless unless the key may hold a token; setting one
/// changes git, and setting a program-valued one makes git run that program later.
const CONFIG: Profile = Profile {
    names: &["config"],
    syntax: Syntax::Git,
    options: CONFIG_OPTIONS,
    rest: Text,
    check: Some(config_check),
    subcommands: &[
        &Profile {
            names: &["get"],
            syntax: Syntax::Git,
            options: CONFIG_OPTIONS,
            operands: &[Text],
            check: Some(config_get_check),
            ..BASE
        },
        &Profile {
            names: &["list"],
            syntax: Syntax::Git,
            options: CONFIG_OPTIONS,
            does: Does::Env(
                "prints every setting, which may hold tokens (remote URLs, http.extraHeader)",
            ),
            ..BASE
        },
        &Profile {
            names: &["set", "unset", "rename-section", "remove-section"],
            syntax: Syntax::Git,
            options: CONFIG_OPTIONS,
            rest: Text,
            check: Some(config_set_check),
            ..BASE
        },
        &Profile {
            names: &["edit"],
            syntax: Syntax::Git,
            options: CONFIG_OPTIONS,
            does: Does::Code("runs an editor on the configuration"),
            ..BASE
        },
    ],
    ..BASE
};

const CONFIG_OPTIONS: &[&str] = &[
    "--global",
    "--system",
    "--local",
    "--worktree",
    "-f, --file=FILE  config: reads or writes another configuration file",
    "--blob=BLOB",
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--replace-all",
    "--add",
    "--unset",
    "--unset-all",
    "--rename-section",
    "--remove-section",
    "-l, --list",
    "-e, --edit  code: runs an editor on the configuration",
    "--get-color",
    "--get-colorbool",
    "--type=TYPE",
    "--bool",
    "--int",
    "--bool-or-int",
    "--bool-or-str",
    "--path",
    "--expiry-date",
    "-z, --null",
    "--name-only",
    "--show-origin",
    "--show-scope",
    "--default=VALUE",
    "--includes",
    "--no-includes",
    "--fixed-value",
    "--all",
    "--regexp",
    "--url=URL",
    "--value=VALUE",
    "--comment=TEXT",
];

/// The old `git config [--get…|--list|NAME [VALUE]]` forms.
fn config_check(r: &mut Reading<'_>) {
    // `git config get …` and its kin are judged by their own checks.
    if r.path.len() > 1 {
        return;
    }
    if r.has("list") || r.has("get-regexp") || r.has("get-urlmatch") {
        let at = r
            .given
            .iter()
            .find(|g| matches!(g.opt.key(), "list" | "get-regexp" | "get-urlmatch"))
            .map(|g| g.at)
            .unwrap_or(Span::one(1));
        r.add(
            Effect::Env("`git config` prints settings, which may hold tokens (remote URLs, http.extraHeader)".into()),
            at,
        );
        return;
    }
    let reading = ["get", "get-all", "get-color", "get-colorbool"]
        .iter()
        .any(|k| r.has(k));
    let writing = [
        "replace-all",
        "add",
        "unset",
        "unset-all",
        "rename-section",
        "remove-section",
    ]
    .iter()
    .any(|k| r.has(k))
        || (!reading && r.operands.len() >= 2);
    if writing {
        config_set_check(r);
    } else {
        config_get_check(r);
    }
}

fn config_get_check(r: &mut Reading<'_>) {
    // `--global` and `--system` read the user's and the machine's configuration, outside
    // the project: the files, judged by the path policy (the user's is a guard setting).
    for (scope, file) in [("global", "~/.gitconfig"), ("system", "/etc/gitconfig")] {
        if let Some(g) = r.given_of(scope) {
            let at = g.at;
            r.add(Effect::Reads(file.into()), at);
        }
    }
    // A pattern or a URL picks the keys: any of them may hold a token.
    for option in ["regexp", "url"] {
        if let Some(g) = r.given_of(option) {
            let at = g.at;
            r.add(
                Effect::Env(format!(
                    "`git config get --{option}` prints every setting it matches, which may hold tokens (remote URLs, http.extraHeader)"
                )),
                at,
            );
            return;
        }
    }
    if let Some(&(i, key)) = r.operands.first()
        && keys::may_hold_token(key)
    {
        r.add(
            Effect::Env(format!("`{key}` may hold a token")),
            Span::one(i),
        );
    }
}

fn config_set_check(r: &mut Reading<'_>) {
    let Some(&(i, key)) = r.operands.first() else {
        return;
    };
    let at = r.to_end(i);
    if let Some(row) = keys::program_key(key, None) {
        r.add(
            Effect::Code(format!(
                "`git config {key}` sets a program-valued key, which {}",
                row.why
            )),
            at,
        );
    } else {
        r.add(
            Effect::Config(format!("`git config {key}` changes git's configuration")),
            at,
        );
    }
}

const REFLOG: Profile = Profile {
    names: &["reflog"],
    syntax: Syntax::Exact,
    options: LOG_OPTIONS,
    rest: Revision,
    subcommands: &[
        &Profile {
            names: &["show"],
            syntax: Syntax::Exact,
            options: LOG_OPTIONS,
            rest: Revision,
            ..BASE
        },
        &Profile {
            names: &["list", "exists"],
            syntax: Syntax::Git,
            rest: Text,
            ..BASE
        },
        &Profile {
            names: &["expire", "delete"],
            syntax: Syntax::Git,
            options: &[
                "--expire=TIME",
                "--expire-unreachable=TIME",
                "--rewrite",
                "--updateref",
                "--stale-fix",
                "-n, --dry-run",
                "--verbose",
                "--all",
                "--single-worktree",
            ],
            rest: Text,
            does: Does::Danger("destroys the reflog, which is how lost commits are found"),
            ..BASE
        },
    ],
    ..BASE
};

// ── Subcommands that change the working tree, the index or history ──────────────────

const ADD: Profile = Profile {
    names: &["add", "stage"],
    syntax: Syntax::Git,
    options: &[
        "-n, --dry-run",
        "-v, --verbose",
        "-i, --interactive",
        "-p, --patch",
        "-e, --edit  code: runs an editor",
        "-f, --force",
        "-u, --update",
        "--renormalize",
        "-N, --intent-to-add",
        "-A, --all",
        "--no-all",
        "--ignore-removal",
        "--no-ignore-removal",
        "--refresh",
        "--ignore-errors",
        "--ignore-missing",
        "--sparse",
        "--chmod=MODE",
        "--warn-embedded-repo",
        "--no-warn-embedded-repo",
        "--pathspec-from-file=FILE  reads",
        "--pathspec-file-nul",
    ],
    rest: Revision,
    does: Does::Repo("stages changes"),
    ..BASE
};

const COMMIT: Profile = Profile {
    names: &["commit"],
    syntax: Syntax::Git,
    options: &[
        "-q, --quiet",
        "-v, --verbose",
        "-F, --file=FILE  reads",
        "--author=AUTHOR",
        "--date=DATE",
        "-m, --message=MESSAGE",
        "-c, --reedit-message=COMMIT  code: runs an editor",
        "-C, --reuse-message=COMMIT",
        "--fixup=COMMIT",
        "--squash=COMMIT",
        "--reset-author",
        "--trailer=TRAILER",
        "-s, --signoff",
        "--no-signoff",
        "-t, --template=FILE  reads",
        "-e, --edit  code: runs an editor",
        "--no-edit",
        "--cleanup=MODE",
        "--status",
        "--no-status",
        "-S[KEY_ID], --gpg-sign[=KEY_ID]",
        "--no-gpg-sign",
        "-a, --all",
        "-i, --include",
        "--interactive",
        "-p, --patch",
        "-o, --only",
        "-n, --no-verify",
        "--verify",
        "--dry-run",
        "--short",
        "--branch",
        "--ahead-behind",
        "--porcelain",
        "--long",
        "-z, --null",
        "--amend",
        "--no-post-rewrite",
        "-u[MODE], --untracked-files[=MODE]",
        "--pathspec-from-file=FILE  reads",
        "--pathspec-file-nul",
        "--allow-empty",
        "--allow-empty-message",
    ],
    rest: Revision,
    does: Does::Repo("records a commit"),
    check: Some(commit_check),
    ..BASE
};

/// Without a message given, `git commit` opens an editor.
fn commit_check(r: &mut Reading<'_>) {
    let message = [
        "message",
        "file",
        "reuse-message",
        "no-edit",
        "fixup",
        "dry-run",
    ]
    .iter()
    .any(|k| r.has(k));
    if !message && !r.stopped {
        r.add(
            Effect::Code("`git commit` without `-m` runs an editor for the message".into()),
            Span::UNSEEN,
        );
    }
}

const PUSH: Profile = Profile {
    names: &["push"],
    syntax: Syntax::Git,
    options: &[
        "-v, --verbose",
        "-q, --quiet",
        "--repo=REPOSITORY",
        "--all, --branches",
        "--mirror  danger: overwrites and deletes remote refs to match local ones",
        "-d, --delete  danger: deletes remote refs",
        "--tags",
        "-n, --dry-run",
        "--porcelain",
        "-f, --force  danger: overwrites remote history (force-push)",
        "--force-with-lease[=REFNAME]  danger: overwrites remote history (force-push)",
        "--no-force-with-lease",
        "--force-if-includes",
        "--no-force-if-includes",
        "--recurse-submodules=CHECK",
        "--no-recurse-submodules",
        "--thin",
        "--no-thin",
        "--receive-pack, --exec=PROGRAM  runs: runs PROGRAM on the remote side (here, for a local repository)",
        "-u, --set-upstream",
        "--progress",
        "--no-progress",
        "--prune  danger: deletes remote refs that have no local counterpart",
        "--no-verify",
        "--verify",
        "--follow-tags",
        "--no-follow-tags",
        "--signed[=HOW]",
        "--no-signed",
        "--atomic",
        "--no-atomic",
        "-o, --push-option=OPTION",
        "-4, --ipv4",
        "-6, --ipv6",
    ],
    rest: Text,
    does: Does::Net("pushes to a remote"),
    check: Some(push_check),
    ..BASE
};

/// `+ref` force-pushes that ref; `:ref` deletes it.
fn push_check(r: &mut Reading<'_>) {
    let refspecs: Vec<(usize, &str)> = r.operands.iter().skip(1).copied().collect();
    for (i, spec) in refspecs {
        if spec.starts_with('+') {
            r.add(
                Effect::Danger(format!("`{spec}` force-pushes (overwrites remote history)")),
                Span::one(i),
            );
        } else if spec.starts_with(':') {
            r.add(
                Effect::Danger(format!("`{spec}` deletes a remote ref")),
                Span::one(i),
            );
        }
    }
}

const FETCH_OPTIONS: &[&str] = &[
    "-v, --verbose",
    "-q, --quiet",
    "--all",
    "--set-upstream",
    "-a, --append",
    "--atomic",
    "--upload-pack=PROGRAM  runs: runs PROGRAM on the remote side (here, for a local repository)",
    "-f, --force",
    "-m, --multiple",
    "-t, --tags",
    "-n, --no-tags",
    "-j, --jobs=N",
    "--prefetch",
    "-p, --prune",
    "-P, --prune-tags",
    "--recurse-submodules[=WHEN]",
    "--no-recurse-submodules",
    "--dry-run",
    "--porcelain",
    "--write-fetch-head",
    "--no-write-fetch-head",
    "-k, --keep",
    "-u, --update-head-ok",
    "--progress",
    "--no-progress",
    "--depth=DEPTH",
    "--shallow-since=TIME",
    "--shallow-exclude=REVISION",
    "--deepen=N",
    "--unshallow",
    "--refetch",
    "--update-shallow",
    "--refmap=REFMAP",
    "-o, --server-option=OPTION",
    "-4, --ipv4",
    "-6, --ipv6",
    "--negotiation-tip=REVISION",
    "--negotiate-only",
    "--filter=SPEC",
    "--auto-maintenance, --auto-gc",
    "--no-auto-maintenance, --no-auto-gc",
    "--show-forced-updates",
    "--no-show-forced-updates",
    "--write-commit-graph",
    "--no-write-commit-graph",
    "--stdin",
];

const FETCH: Profile = Profile {
    names: &["fetch"],
    syntax: Syntax::Git,
    options: FETCH_OPTIONS,
    rest: Text,
    does: Does::Net("fetches from a remote"),
    ..BASE
};

const PULL: Profile = Profile {
    names: &["pull"],
    syntax: Syntax::Git,
    options: &[
        "-v, --verbose",
        "-q, --quiet",
        "--progress",
        "--no-progress",
        "--recurse-submodules[=WHEN]",
        "--no-recurse-submodules",
        "-r, --rebase[=HOW]",
        "--no-rebase",
        "-n, --no-stat",
        "--stat",
        "--log[=N]",
        "--no-log",
        "--signoff",
        "--no-signoff",
        "--squash",
        "--no-squash",
        "--commit",
        "--no-commit",
        "--edit  code: runs an editor",
        "--no-edit",
        "--cleanup=MODE",
        "--ff",
        "--no-ff",
        "--ff-only",
        "--verify",
        "--no-verify",
        "--verify-signatures  code: runs the signature program (gpg)",
        "--no-verify-signatures",
        "--autostash",
        "--no-autostash",
        "-s, --strategy=STRATEGY",
        "-X, --strategy-option=OPTION",
        "-S[KEY_ID], --gpg-sign[=KEY_ID]",
        "--no-gpg-sign",
        "--allow-unrelated-histories",
        "--all",
        "-a, --append",
        "--upload-pack=PROGRAM  runs: runs PROGRAM on the remote side (here, for a local repository)",
        "-f, --force",
        "-t, --tags",
        "--no-tags",
        "-p, --prune",
        "-j, --jobs[=N]",
        "--dry-run",
        "-k, --keep",
        "--depth=DEPTH",
        "--shallow-since=TIME",
        "--shallow-exclude=REVISION",
        "--deepen=N",
        "--unshallow",
        "--update-shallow",
        "--refmap=REFMAP",
        "-o, --server-option=OPTION",
        "-4, --ipv4",
        "-6, --ipv6",
        "--negotiation-tip=REVISION",
        "--show-forced-updates",
        "--no-show-forced-updates",
        "--set-upstream",
    ],
    rest: Text,
    does: Does::Net("fetches from a remote and merges"),
    ..BASE
};

const CHECKOUT_COMMON: &[&str] = &[
    "-q, --quiet",
    "--recurse-submodules[=WHEN]",
    "--no-recurse-submodules",
    "--progress",
    "--no-progress",
    "-m, --merge",
    "--conflict=STYLE",
    "-d, --detach",
    "-t, --track[=MODE]",
    "--no-track",
    "-f, --force  danger: discards uncommitted changes",
    "--orphan=NEW_BRANCH",
    "--overwrite-ignore",
    "--no-overwrite-ignore",
    "--ignore-other-worktrees",
    "--guess",
    "--no-guess",
];

const CHECKOUT: Profile = Profile {
    names: &["checkout"],
    syntax: Syntax::Git,
    options: &concat::<{ CHECKOUT_COMMON.len() + 11 }>(
        CHECKOUT_COMMON,
        &[
            "-b NEW_BRANCH",
            "-B NEW_BRANCH  danger: resets an existing branch",
            "-l",
            "--overlay",
            "--no-overlay",
            "-2, --ours",
            "-3, --theirs",
            "-p, --patch",
            "--ignore-skip-worktree-bits",
            "--pathspec-from-file=FILE  reads",
            "--pathspec-file-nul",
        ],
    ),
    rest: Revision,
    does: Does::Repo("switches branches or restores files"),
    check: Some(checkout_check),
    ..BASE
};

/// Restoring files from the index or a commit (`git checkout -- PATH`, `git checkout
/// REF PATH…`) throws away their uncommitted changes. A single operand is a branch to
/// switch to, or, when no revision has that name, a path whose changes git discards
/// (git's own guess; a name that is both stops git): a danger where a file of that name
/// is in the working directory, which policy judges there.
fn checkout_check(r: &mut Reading<'_>) {
    let switching = ["b", "B", "orphan", "detach", "patch"]
        .iter()
        .any(|k| r.has(k));
    if r.dashdash.is_none()
        && !switching
        && let [(_, name)] = r.operands.as_slice()
        && !matches!(*name, "." | ":/" | "./" | ":/." | "*" | "-")
    {
        let name = *name;
        r.danger_if_present(
            name,
            format!(
                "`git checkout {name}` discards uncommitted changes to the file `{name}` (git reads it as a path when no branch has that name)"
            ),
        );
    }
    let operands: Vec<(usize, &str)> = r.operands.clone();
    let paths: Vec<(usize, &str)> = match r.dashdash {
        Some(d) => operands.iter().filter(|(i, _)| *i > d).copied().collect(),
        None if operands.len() >= 2 => operands[1..].to_vec(),
        None => operands
            .iter()
            .filter(|(_, w)| matches!(*w, "." | ":/" | "./" | ":/." | "*"))
            .copied()
            .collect(),
    };
    discards(r, "checkout", &paths);
}

/// Adds the danger of overwriting `paths` in the working tree, if there are any.
fn discards(r: &mut Reading<'_>, sub: &str, paths: &[(usize, &str)]) {
    let from_file = r.given_of("pathspec-from-file").map(|g| g.at);
    let at = match (paths.first(), from_file) {
        (Some(&(i, _)), _) => Span::one(i),
        (None, Some(at)) => at,
        (None, None) => return,
    };
    let named = if paths.is_empty() {
        "the files listed in a file".to_string()
    } else {
        paths
            .iter()
            .map(|(_, w)| format!("`{w}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    r.add(
        Effect::Danger(format!(
            "discards uncommitted changes to {named} (`git {sub}` overwrites them)"
        )),
        at,
    );
}

const SWITCH: Profile = Profile {
    names: &["switch"],
    syntax: Syntax::Git,
    options: &concat::<{ CHECKOUT_COMMON.len() + 3 }>(
        CHECKOUT_COMMON,
        &[
            "-c, --create=NEW_BRANCH",
            "-C, --force-create=NEW_BRANCH  danger: resets an existing branch",
            "--discard-changes  danger: discards uncommitted changes",
        ],
    ),
    rest: Revision,
    does: Does::Repo("switches branches"),
    ..BASE
};

const RESTORE: Profile = Profile {
    names: &["restore"],
    syntax: Syntax::Git,
    options: &[
        "-s, --source=TREE_ISH",
        "-S, --staged",
        "-W, --worktree",
        "--ignore-unmerged",
        "--overlay",
        "--no-overlay",
        "-q, --quiet",
        "--recurse-submodules[=WHEN]",
        "--no-recurse-submodules",
        "--progress",
        "--no-progress",
        "-m, --merge",
        "--conflict=STYLE",
        "-2, --ours",
        "-3, --theirs",
        "-p, --patch",
        "--ignore-skip-worktree-bits",
        "--pathspec-from-file=FILE  reads",
        "--pathspec-file-nul",
    ],
    rest: Revision,
    does: Does::Repo("restores files"),
    check: Some(restore_check),
    ..BASE
};

/// `git restore PATH` overwrites the working tree's copy (unless only `--staged`).
fn restore_check(r: &mut Reading<'_>) {
    let staged_only = r.has("staged") && !r.has("worktree");
    if !staged_only {
        let paths = r.operands.clone();
        discards(r, "restore", &paths);
    }
}

const RESET: Profile = Profile {
    names: &["reset"],
    syntax: Syntax::Git,
    options: &[
        "-q, --quiet",
        "--refresh",
        "--no-refresh",
        "--mixed",
        "--soft",
        "--hard  danger: discards uncommitted work",
        "--merge  danger: discards uncommitted work",
        "--keep  danger: moves the branch, discarding commits",
        "--recurse-submodules[=WHEN]",
        "--no-recurse-submodules",
        "-p, --patch",
        "-N, --intent-to-add",
        "--pathspec-from-file=FILE  reads",
        "--pathspec-file-nul",
    ],
    rest: Revision,
    does: Does::Repo("moves the branch or unstages changes"),
    ..BASE
};

const CLEAN: Profile = Profile {
    names: &["clean"],
    syntax: Syntax::Git,
    options: &[
        "-q, --quiet",
        "-n, --dry-run",
        "-f, --force  danger: deletes untracked files",
        "-i, --interactive",
        "-d",
        "-e, --exclude=PATTERN",
        "-x",
        "-X",
    ],
    rest: Revision,
    does: Does::Repo("deletes untracked files"),
    ..BASE
};

const REBASE: Profile = Profile {
    names: &["rebase"],
    syntax: Syntax::Git,
    options: &[
        "--onto=REVISION",
        "--keep-base",
        "--no-verify",
        "--verify",
        "-q, --quiet",
        "-v, --verbose",
        "-n, --no-stat",
        "--stat",
        "--signoff",
        "--committer-date-is-author-date",
        "--reset-author-date",
        "--ignore-date",
        "--ignore-whitespace",
        "--whitespace=ACTION",
        "-f, --force-rebase",
        "--no-ff",
        "--continue",
        "--skip",
        "--abort",
        "--quit",
        "--edit-todo  code: runs an editor",
        "--show-current-patch",
        "--apply",
        "-m, --merge",
        "-i, --interactive  code: runs an editor on the list of commits",
        "--rerere-autoupdate",
        "--no-rerere-autoupdate",
        "--empty=HOW",
        "--keep-empty",
        "--autosquash",
        "--no-autosquash",
        "--update-refs",
        "--no-update-refs",
        "-S[KEY_ID], --gpg-sign[=KEY_ID]",
        "--no-gpg-sign",
        "--autostash",
        "--no-autostash",
        "-x, --exec=COMMAND  runs: runs COMMAND after every commit",
        "--allow-empty-message",
        "-r, --rebase-merges[=MODE]",
        "--no-rebase-merges",
        "--fork-point",
        "--no-fork-point",
        "-s, --strategy=STRATEGY",
        "-X, --strategy-option=OPTION",
        "--root",
        "--reschedule-failed-exec",
        "--no-reschedule-failed-exec",
        "--reapply-cherry-picks",
        "--no-reapply-cherry-picks",
    ],
    rest: Revision,
    does: Does::Repo("rewrites commits"),
    ..BASE
};

const MERGE: Profile = Profile {
    names: &["merge"],
    syntax: Syntax::Git,
    options: &[
        "-n, --no-stat",
        "--stat, --summary",
        "--log[=N]",
        "--no-log",
        "--squash",
        "--no-squash",
        "--commit",
        "--no-commit",
        "-e, --edit  code: runs an editor",
        "--no-edit",
        "--cleanup=MODE",
        "--ff",
        "--no-ff",
        "--ff-only",
        "--rerere-autoupdate",
        "--no-rerere-autoupdate",
        "--verify-signatures  code: runs the signature program (gpg)",
        "--no-verify-signatures",
        "-s, --strategy=STRATEGY",
        "-X, --strategy-option=OPTION",
        "-m, --message=MESSAGE",
        "-F, --file=FILE  reads",
        "--into-name=BRANCH",
        "-v, --verbose",
        "-q, --quiet",
        "--abort",
        "--quit",
        "--continue",
        "--allow-unrelated-histories",
        "--progress",
        "--no-progress",
        "-S[KEY_ID], --gpg-sign[=KEY_ID]",
        "--no-gpg-sign",
        "--autostash",
        "--no-autostash",
        "--overwrite-ignore",
        "--no-overwrite-ignore",
        "--signoff",
        "--no-signoff",
        "--no-verify",
        "--verify",
    ],
    rest: Revision,
    does: Does::Repo("merges"),
    ..BASE
};

const PICK_OPTIONS: &[&str] = &[
    "--quit",
    "--continue",
    "--abort",
    "--skip",
    "--cleanup=MODE",
    "-n, --no-commit",
    "-e, --edit  code: runs an editor",
    "--no-edit",
    "-s, --signoff",
    "-m, --mainline=PARENT",
    "--rerere-autoupdate",
    "--no-rerere-autoupdate",
    "--strategy=STRATEGY",
    "-X, --strategy-option=OPTION",
    "-S[KEY_ID], --gpg-sign[=KEY_ID]",
    "--no-gpg-sign",
    "-x",
    "--ff",
    "--allow-empty",
    "--allow-empty-message",
    "--keep-redundant-commits",
    "--empty=HOW",
    "--reference",
];

const CHERRY_PICK: Profile = Profile {
    names: &["cherry-pick"],
    syntax: Syntax::Git,
    options: PICK_OPTIONS,
    rest: Revision,
    does: Does::Repo("applies commits"),
    ..BASE
};

const REVERT: Profile = Profile {
    names: &["revert"],
    syntax: Syntax::Git,
    options: PICK_OPTIONS,
    rest: Revision,
    does: Does::Repo("reverts commits"),
    ..BASE
};

/// `git clone URL [DIR]`: the URL is fetched, the directory written. `--template` and
/// `--config` decide what the new repository runs.
const CLONE: Profile = Profile {
    names: &["clone"],
    syntax: Syntax::Git,
    options: &[
        "-v, --verbose",
        "-q, --quiet",
        "--progress",
        "--no-progress",
        "--reject-shallow",
        "--no-reject-shallow",
        "-n, --no-checkout",
        "--checkout",
        "--bare",
        "--mirror",
        "-l, --local",
        "--no-local",
        "--no-hardlinks",
        "-s, --shared",
        "--recurse-submodules[=PATHSPEC]",
        "--recursive[=PATHSPEC]",
        "-j, --jobs=N",
        "--template=DIRECTORY  code: copies hooks (programs git runs) from DIRECTORY",
        "--reference=REPO  reads",
        "--reference-if-able=REPO  reads",
        "--dissociate",
        "-o, --origin=NAME",
        "-b, --branch=BRANCH",
        "-u, --upload-pack=PROGRAM  runs: runs PROGRAM on the remote side (here, for a local repository)",
        "--depth=DEPTH",
        "--shallow-since=TIME",
        "--shallow-exclude=REVISION",
        "--single-branch",
        "--no-single-branch",
        "--no-tags",
        "--tags",
        "--shallow-submodules",
        "--no-shallow-submodules",
        "--separate-git-dir=GITDIR  writes",
        "--ref-format=FORMAT",
        "-c, --config=KEY_VALUE  config: sets configuration in the new repository",
        "--server-option=OPTION",
        "-4, --ipv4",
        "-6, --ipv6",
        "--filter=SPEC",
        "--also-filter-submodules",
        "--remote-submodules",
        "--no-remote-submodules",
        "--sparse",
        "--bundle-uri=URI",
    ],
    operands: &[Role::Text, Role::Write],
    rest: Nothing,
    does: Does::Net("clones a repository"),
    check: Some(clone_check),
    ..BASE
};

/// `ext::` URLs run a command; a local path is read.
fn clone_check(r: &mut Reading<'_>) {
    if let Some(&(i, url)) = r.operands.first() {
        if url.starts_with("ext::") {
            r.add(
                Effect::Code(format!("`{url}` is a transport that runs a command")),
                Span::one(i),
            );
        } else if !url.contains("://") && !url.contains('@') {
            r.add(Effect::Reads(url.to_string()), Span::one(i));
        }
    }
}

const INIT: Profile = Profile {
    names: &["init"],
    syntax: Syntax::Git,
    options: &[
        "--template=DIRECTORY  code: copies hooks (programs git runs) from DIRECTORY",
        "--bare",
        "--shared[=PERMISSIONS]",
        "-q, --quiet",
        "--separate-git-dir=GITDIR  writes",
        "-b, --initial-branch=NAME",
        "--object-format=HASH",
        "--ref-format=FORMAT",
    ],
    operands: &[Role::Write],
    rest: Nothing,
    does: Does::Repo("creates a repository"),
    ..BASE
};

const RM: Profile = Profile {
    names: &["rm"],
    syntax: Syntax::Git,
    options: &[
        "-n, --dry-run",
        "-q, --quiet",
        "--cached",
        "-f, --force  danger: deletes files even with uncommitted changes",
        "-r",
        "--ignore-unmatch",
        "--sparse",
        "--pathspec-from-file=FILE  reads",
        "--pathspec-file-nul",
    ],
    rest: Revision,
    does: Does::Repo("deletes tracked files"),
    ..BASE
};

const MV: Profile = Profile {
    names: &["mv"],
    syntax: Syntax::Git,
    options: &[
        "-v, --verbose",
        "-n, --dry-run",
        "-f, --force",
        "-k",
        "--sparse",
    ],
    rest: Revision,
    does: Does::Repo("moves tracked files"),
    ..BASE
};

const WORKTREE: Profile = Profile {
    names: &["worktree"],
    syntax: Syntax::Git,
    subcommands: &[
        &Profile {
            names: &["list"],
            syntax: Syntax::Git,
            options: &["--porcelain", "-v, --verbose", "--expire=TIME", "-z"],
            ..BASE
        },
        &Profile {
            names: &["add"],
            syntax: Syntax::Git,
            options: &[
                "-f, --force",
                "-b NEW_BRANCH",
                "-B NEW_BRANCH  danger: resets an existing branch",
                "-d, --detach",
                "--checkout",
                "--no-checkout",
                "--guess-remote",
                "--no-guess-remote",
                "--track",
                "--no-track",
                "--lock",
                "--reason=STRING",
                "--orphan",
                "-q, --quiet",
                "--relative-paths",
            ],
            operands: &[Role::Write],
            rest: Revision,
            does: Does::Repo("adds a working tree"),
            ..BASE
        },
        &Profile {
            names: &["lock", "unlock", "prune", "repair", "move"],
            syntax: Syntax::Git,
            options: &[
                "--reason=STRING",
                "-n, --dry-run",
                "-v, --verbose",
                "--expire=TIME",
                "-f, --force",
            ],
            rest: Text,
            does: Does::Repo("changes working trees"),
            ..BASE
        },
        &Profile {
            names: &["remove"],
            syntax: Syntax::Git,
            options: &["-f, --force  danger: deletes a working tree with uncommitted changes"],
            // The working tree's directory is deleted: a write, judged where it lies.
            rest: Write,
            does: Does::Repo("deletes a working tree"),
            ..BASE
        },
    ],
    ..BASE
};

/// `git bisect run CMD…` runs CMD; the rest moves HEAD about.
const BISECT: Profile = Profile {
    names: &["bisect"],
    syntax: Syntax::Git,
    subcommands: &[
        &Profile {
            names: &["run"],
            syntax: Syntax::Operands,
            operands: &[Role::Runs("runs")],
            does: Does::Repo("checks out commits"),
            ..BASE
        },
        &Profile {
            names: &["log", "terms", "visualize", "view"],
            syntax: Syntax::Git,
            options: &["--term-good", "--term-bad", "--term-old", "--term-new"],
            ..BASE
        },
        &Profile {
            names: &["replay"],
            syntax: Syntax::Git,
            operands: &[Read],
            does: Does::Repo("checks out commits"),
            ..BASE
        },
        &Profile {
            names: &["start", "bad", "good", "new", "old", "skip", "reset"],
            syntax: Syntax::Git,
            options: &[
                "--term-new, --term-bad=TERM",
                "--term-old, --term-good=TERM",
                "--no-checkout",
                "--first-parent",
            ],
            rest: Revision,
            does: Does::Repo("checks out commits"),
            ..BASE
        },
    ],
    ..BASE
};

/// `git apply` changes files as its patch says: a patch on standard input was not
/// shown to anyone.
const APPLY: Profile = Profile {
    names: &["apply"],
    syntax: Syntax::Git,
    options: &[
        "--exclude=PATH",
        "--include=PATH",
        "-p NUM",
        "--no-add",
        "--stat",
        "--numstat",
        "--summary",
        "--check",
        "--index",
        "-N, --intent-to-add",
        "--cached",
        "--unsafe-paths  danger: writes outside the working tree",
        "--apply",
        "-3, --3way",
        "--ours",
        "--theirs",
        "--union",
        "--build-fake-ancestor=FILE  writes",
        "-z",
        "-C NUM",
        "--whitespace=ACTION",
        "--ignore-space-change, --ignore-whitespace",
        "-R, --reverse",
        "--unidiff-zero",
        "--reject",
        "--allow-overlap",
        "-v, --verbose",
        "-q, --quiet",
        "--inaccurate-eof",
        "--recount",
        "--directory=ROOT",
        "--allow-empty",
        "--allow-binary-replacement, --binary",
    ],
    rest: Role::Input,
    check: Some(patch_check),
    ..BASE
};

fn patch_check(r: &mut Reading<'_>) {
    let preview = ["stat", "numstat", "summary", "check"]
        .iter()
        .any(|k| r.has(k))
        && !r.has("apply");
    if !preview {
        r.add(
            Effect::Repo(format!(
                "`git {}` changes files as the patch says",
                r.path.join(" ")
            )),
            Span::one(0),
        );
    }
    let from_stdin = r.operands.is_empty() || r.operands.iter().any(|(_, w)| *w == "-");
    if from_stdin && !r.stopped {
        r.add(
            Effect::Unknown("the patch comes from standard input, which no one has seen".into()),
            Span::UNSEEN,
        );
    }
}

const AM: Profile = Profile {
    names: &["am"],
    syntax: Syntax::Git,
    options: &[
        "-i, --interactive",
        "-n, --no-verify",
        "--verify",
        "-3, --3way",
        "--no-3way",
        "-q, --quiet",
        "-s, --signoff",
        "-u, --utf8",
        "--no-utf8",
        "-k, --keep",
        "--keep-non-patch",
        "-m, --message-id",
        "--no-message-id",
        "--keep-cr",
        "--no-keep-cr",
        "-c, --scissors",
        "--no-scissors",
        "--whitespace=ACTION",
        "--ignore-space-change, --ignore-whitespace",
        "--directory=ROOT",
        "--exclude=PATH",
        "--include=PATH",
        "--patch-format=FORMAT",
        "--reject",
        "--continue, -r, --resolved",
        "--skip",
        "--abort",
        "--quit",
        "--allow-empty",
        "--committer-date-is-author-date",
        "--ignore-date",
        "-S[KEY_ID], --gpg-sign[=KEY_ID]",
        "--no-gpg-sign",
    ],
    rest: Read,
    does: Does::Repo("records commits from patches"),
    check: Some(am_check),
    ..BASE
};

fn am_check(r: &mut Reading<'_>) {
    let resuming = ["continue", "skip", "abort", "quit"]
        .iter()
        .any(|k| r.has(k));
    if !resuming
        && (r.operands.is_empty() || r.operands.iter().any(|(_, w)| *w == "-"))
        && !r.stopped
    {
        r.add(
            Effect::Unknown("the patches come from standard input, which no one has seen".into()),
            Span::UNSEEN,
        );
    }
}

const ARCHIVE: Profile = Profile {
    names: &["archive"],
    syntax: Syntax::Git,
    options: &[
        "--format=FORMAT",
        "-l, --list",
        "-v, --verbose",
        "--prefix=PREFIX",
        "-o, --output=FILE  writes",
        "--add-file=FILE  reads",
        "--add-virtual-file=PATH_CONTENT",
        "--mtime=TIME",
        "--worktree-attributes",
        "--remote=REPOSITORY  net: reads an archive from a remote",
        "--exec=PROGRAM  runs: runs PROGRAM on the remote side (here, for a local repository)",
        "-NUM",
    ],
    rest: Revision,
    ..BASE
};

const FORMAT_PATCH: Profile = Profile {
    names: &["format-patch"],
    syntax: Syntax::Exact,
    options: &concat::<{ DIFF_OPTIONS.len() + 37 }>(
        DIFF_OPTIONS,
        &[
            "-NUM",
            "-n, --numbered",
            "-N, --no-numbered",
            "--signoff",
            "--stdout",
            "--cover-letter",
            "--no-cover-letter",
            "--numbered-files",
            "--suffix=SFX",
            "--start-number=N",
            "-v, --reroll-count=N",
            "--filename-max-length=N",
            "--rfc[=RFC]",
            "--cover-from-description=MODE",
            "--description-file=FILE  reads",
            "--subject-prefix=PREFIX",
            "-o, --output-directory=DIR  writes",
            "-k, --keep-subject",
            "--zero-commit",
            "--ignore-if-in-upstream",
            "--add-header=HEADER",
            "--to=EMAIL",
            "--from[=IDENT]",
            "--in-reply-to=ID",
            "--attach[=BOUNDARY]",
            "--inline[=BOUNDARY]",
            "--thread[=STYLE]",
            "--no-thread",
            "--signature=SIGNATURE",
            "--no-signature",
            "--base=COMMIT",
            "--signature-file=FILE  reads",
            "-q",
            "--progress",
            "--interdiff=REV",
            "--range-diff=REV",
            "--creation-factor=PERCENT",
        ],
    ),
    rest: Revision,
    check: Some(format_patch_check),
    ..BASE
};

fn format_patch_check(r: &mut Reading<'_>) {
    if !r.has("stdout") && !r.has("output-directory") {
        r.add(
            Effect::Repo("`git format-patch` writes patch files into the working directory".into()),
            Span::one(0),
        );
    }
}

const GC: Profile = Profile {
    names: &["gc"],
    syntax: Syntax::Git,
    options: &[
        "-q, --quiet",
        "--prune[=DATE]",
        "--no-prune",
        "--cruft",
        "--no-cruft",
        "--max-cruft-size=SIZE",
        "--aggressive",
        "--auto",
        "--detach",
        "--no-detach",
        "--force",
        "--keep-largest-pack",
    ],
    does: Does::Repo("repacks the repository and prunes unreachable objects"),
    check: Some(gc_check),
    ..BASE
};

/// Pruning now deletes unreachable commits at once, which loses what a reflog lost.
fn gc_check(r: &mut Reading<'_>) {
    if let Some(g) = r.given_of("prune")
        && matches!(g.value, Some("now" | "all"))
    {
        let at = g.at;
        r.add(
            Effect::Danger("`git gc --prune=now` deletes unreachable commits at once".into()),
            at,
        );
    }
}

/// `git update-ref REF NEW [OLD]`; with `--stdin` its work is in the input.
const UPDATE_REF: Profile = Profile {
    names: &["update-ref"],
    syntax: Syntax::Git,
    options: &[
        "-m MESSAGE",
        "-d  danger: deletes a ref",
        "--no-deref",
        "--create-reflog",
        "-z",
        "--stdin  unknown",
        "--batch-updates",
    ],
    rest: Text,
    does: Does::Repo("moves a ref"),
    ..BASE
};

/// `git submodule`: `foreach` runs a command in every submodule; `update` may run a
/// command the configuration names.
const SUBMODULE: Profile = Profile {
    names: &["submodule"],
    syntax: Syntax::Git,
    options: &["-q, --quiet", "--cached"],
    subcommands: &[
        &Profile {
            names: &["status", "summary"],
            syntax: Syntax::Git,
            options: &[
                "--cached",
                "--recursive",
                "--files",
                "-n, --summary-limit=N",
                "--for-status",
            ],
            rest: Revision,
            ..BASE
        },
        &Profile {
            names: &["foreach"],
            syntax: Syntax::GnuInOrder,
            options: &["--recursive", "-q, --quiet"],
            operands: &[Role::RunsScript("runs in every submodule")],
            ..BASE
        },
        &Profile {
            names: &["init", "sync", "absorbgitdirs", "set-branch", "set-url"],
            syntax: Syntax::Git,
            options: &["--recursive", "-b, --branch=BRANCH", "-d, --default"],
            rest: Text,
            does: Does::Repo("changes submodules"),
            ..BASE
        },
        &Profile {
            names: &["update"],
            syntax: Syntax::Git,
            options: &[
                "--init",
                "--remote",
                "-N, --no-fetch",
                "--recursive",
                "--force",
                "--checkout",
                "--merge",
                "--rebase",
                "--recommend-shallow",
                "--no-recommend-shallow",
                "--depth=DEPTH",
                "-j, --jobs=N",
                "--filter=SPEC",
                "--single-branch",
                "--no-single-branch",
                "--progress",
            ],
            rest: Revision,
            does: Does::Net("fetches submodules"),
            ..BASE
        },
    ],
    ..BASE
};

/// `git filter-branch` rewrites every commit it walks; its filters are shell commands.
const FILTER_BRANCH: Profile = Profile {
    names: &["filter-branch"],
    syntax: Syntax::Exact,
    options: &[
        "--setup COMMAND  runs: runs COMMAND before the filters",
        "--env-filter COMMAND  runs: runs COMMAND for every commit",
        "--tree-filter COMMAND  runs: runs COMMAND in every commit's tree",
        "--index-filter COMMAND  runs: runs COMMAND on every commit's index",
        "--parent-filter COMMAND  runs: runs COMMAND on every commit's parents",
        "--msg-filter COMMAND  runs: runs COMMAND on every commit message",
        "--commit-filter COMMAND  runs: runs COMMAND to make every commit",
        "--tag-name-filter COMMAND  runs: runs COMMAND on every tag name",
        "--subdirectory-filter DIRECTORY",
        "--prune-empty",
        "--original NAMESPACE",
        "-d DIRECTORY  writes",
        "-f, --force",
        "--state-branch BRANCH",
    ],
    rest: Revision,
    does: Does::Danger("rewrites history"),
    ..BASE
};

/// `git filter-repo` (a separate tool git runs as a subcommand) rewrites history.
const FILTER_REPO: Profile = Profile {
    names: &["filter-repo"],
    syntax: Syntax::Exact,
    rest: Text,
    does: Does::Danger("rewrites history"),
    ..BASE
};

const NOTES: Profile = Profile {
    names: &["notes"],
    syntax: Syntax::Git,
    options: &["--ref=REF"],
    subcommands: &[
        &Profile {
            names: &["list", "show", "get-ref"],
            syntax: Syntax::Git,
            rest: Revision,
            ..BASE
        },
        &Profile {
            names: &["add", "append", "copy", "remove", "prune"],
            syntax: Syntax::Git,
            options: &[
                "-m, --message=MESSAGE",
                "-F, --file=FILE  reads",
                "-C, --reuse-message=OBJECT",
                "-f, --force",
                "--allow-empty",
                "--ignore-missing",
                "--stdin",
                "-n, --dry-run",
                "-v, --verbose",
            ],
            rest: Revision,
            does: Does::Repo("changes notes"),
            ..BASE
        },
    ],
    ..BASE
};

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::testing::Table;
    use super::super::{Effect, understand};

    /// Everyday reading: harmless.
    const HARMLESS: &[&str] = &[
        "git help",
        "git help -a",
        "git help -g",
        "git help --config",
        "git status",
        "git status --short",
        "git status -sb",
        "git status --porcelain=v1 -uno",
        "git log --oneline -5",
        "git log --oneline -n 5",
        "git log -n5 --stat",
        "git log --oneline main..HEAD",
        "git log origin/main --graph --decorate",
        "git log --since=2.weeks --author=me",
        "git show HEAD~1 --stat",
        "git show --name-only HEAD",
        "git diff",
        "git diff --stat",
        "git diff --cached",
        "git diff HEAD~3..HEAD",
        "git diff -U3 main",
        "git branch",
        "git branch -vv",
        "git branch -a --list 'feat*'",
        "git branch --show-current",
        "git tag -l",
        "git tag -l 'v1.*'",
        "git remote",
        "git stash list",
        "git config --get user.name",
        "git config get user.email",
        "git describe --tags --always",
        "git rev-parse --abbrev-ref HEAD",
        "git rev-parse --show-toplevel",
        "git ls-files",
        "git shortlog -sn HEAD",
        "git cat-file -p HEAD:README.md",
        "git --version",
        "git version",
        "git -P log -1",
        "git --no-pager diff",
        "git merge-base main HEAD",
    ];

    /// Not harmless, and a phrase the reasons must contain.
    const NOT_HARMLESS: &[(&str, &str)] = &[
        ("git status --porc", "abbreviates `--porcelain`"),
        ("git log --onel", "not an option"),
        ("git diff --out=x", "not an option"),
        ("git log --output=x", "writes `x`"),
        ("git diff a/../../etc b", "reads"),
        ("git -C /tmp status", "another directory"),
        ("git -c core.pager=sh log", "runs a pager program"),
        ("git -c user.name=x log", "sets git configuration"),
        ("git --git-dir=/x status", "another repository"),
        ("git --work-tree=/ status", "another working tree"),
        ("git --attr-source=HEAD diff", "reads attributes"),
        ("git --exec-path=/tmp log", "runs git's programs"),
        ("git frobnicate", "not a `git` subcommand"),
        ("git branch feature", "creates or moves the branch"),
        ("git tag v1", "creates the tag"),
        ("git config user.name x", "changes git's configuration"),
        ("git config core.fsmonitor /tmp/x", "sets a program"),
        ("git config alias.x '!sh'", "sets a program"),
        ("git config --list", "may hold tokens"),
        ("git config http.extraheader", "may hold a token"),
        ("git log --show-signature", "signature program"),
        ("git diff --ext-diff", "external diff"),
        ("git grep -O foo", "opens the matching files"),
        ("git grep foo", "reads everything under `.`"),
        ("git rebase --exe=make", "abbreviates `--exec`"),
        ("git rebase -x make main", "runs COMMAND"),
        (
            "git clone --config core.fsmonitor=x u d",
            "sets configuration",
        ),
        ("git clone --template=/tmp/t u", "copies hooks"),
        ("git clone ext::sh u", "transport that runs"),
        ("git apply", "standard input"),
        ("git apply -", "standard input"),
        ("git update-ref --stdin", "does not vouch"),
        ("git commit", "runs an editor"),
        ("git commit -m wip", "records a commit"),
        ("git fetch --all", "fetches"),
        ("git bisect run make test", "runs `make test`"),
        ("git filter-branch --setup 'x=1' HEAD", "before the filters"),
        (
            "git filter-branch --env-filter 'export A=b' HEAD",
            "for every commit",
        ),
        (
            "git filter-branch --tree-filter 'rm -f x' HEAD",
            "in every commit's tree",
        ),
        (
            "git filter-branch --index-filter 'git rm -q x' HEAD",
            "every commit's index",
        ),
        (
            "git filter-branch --parent-filter cat HEAD",
            "every commit's parents",
        ),
        (
            "git filter-branch --msg-filter cat HEAD",
            "every commit message",
        ),
        (
            "git filter-branch --commit-filter 'git commit-tree \"$@\"' HEAD",
            "to make every commit",
        ),
        (
            "git filter-branch --tag-name-filter cat -- --all",
            "every tag name",
        ),
        ("git filter-repo --path src", "rewrites history"),
        ("git remote -v", "may hold tokens"),
        ("git remote get-url origin", "may hold a token"),
        ("git remote show origin", "may hold tokens"),
        ("git config get --all --regexp .", "may hold tokens"),
        (
            "git config get --url=https://x http.extraheader",
            "may hold tokens",
        ),
        ("git config --get-regexp .", "may hold tokens"),
        (
            "git submodule foreach 'rm -rf x'",
            "runs in every submodule",
        ),
        ("git -p log", "`git --paginate` runs a pager"),
        ("git add -e", "`git add --edit` runs an editor"),
        ("git am", "the patches come from standard input"),
        (
            "git archive --exec=/tmp/x --remote=. HEAD",
            "`git archive --exec` runs PROGRAM on the remote side",
        ),
        (
            "git branch --edit-description",
            "`git branch --edit-description` runs an editor",
        ),
        (
            "git cat-file --filters HEAD:README.md",
            "`git cat-file --filters` runs the configured filter programs",
        ),
        (
            "git cat-file --textconv HEAD:README.md",
            "`git cat-file --textconv` runs the configured text-conversion program",
        ),
        (
            "git cherry-pick -e main",
            "`git cherry-pick --edit` runs an editor",
        ),
        (
            "git clone -u /tmp/x u d",
            "`git clone --upload-pack` runs PROGRAM on the remote side",
        ),
        (
            "git commit -c HEAD",
            "`git commit --reedit-message` runs an editor",
        ),
        ("git commit -e -m wip", "`git commit --edit` runs an editor"),
        (
            "git config -e",
            "`git config --edit` runs an editor on the configuration",
        ),
        (
            "git config set user.name x",
            "`git config user.name` changes git's configuration",
        ),
        (
            "git diff --textconv",
            "`git diff --textconv` runs the configured text-conversion programs",
        ),
        (
            "git fetch --upload-pack=/tmp/x origin",
            "`git fetch --upload-pack` runs PROGRAM on the remote side",
        ),
        (
            "git format-patch -1",
            "`git format-patch` writes patch files into the working directory",
        ),
        (
            "git format-patch --ext-diff --stdout -1",
            "`git format-patch --ext-diff` runs the configured external diff program",
        ),
        (
            "git format-patch --textconv --stdout -1",
            "`git format-patch --textconv` runs the configured text-conversion programs",
        ),
        (
            "git grep --textconv foo",
            "`git grep --textconv` runs the configured text-conversion programs",
        ),
        ("git help -w log", "`git help --web` starts a web browser"),
        // The oracle saw `git help --man` run `man`: a manual is shown by a program
        // git's configuration may name (`help.format`, `man.viewer`).
        ("git help log", "`git help` shows a manual"),
        ("git help --man", "`git help` shows a manual"),
        ("git help -i config", "`git help` shows a manual"),
        (
            "git init --template=/tmp/t",
            "`git init --template` copies hooks",
        ),
        (
            "git log --ext-diff -p",
            "`git log --ext-diff` runs the configured external diff program",
        ),
        (
            "git log --textconv -p",
            "`git log --textconv` runs the configured text-conversion programs",
        ),
        (
            "git merge --verify-signatures main",
            "`git merge --verify-signatures` runs the signature program (gpg)",
        ),
        ("git merge -e main", "`git merge --edit` runs an editor"),
        ("git pull --edit", "`git pull --edit` runs an editor"),
        (
            "git pull --upload-pack=/tmp/x",
            "`git pull --upload-pack` runs PROGRAM on the remote side",
        ),
        (
            "git pull --verify-signatures",
            "`git pull --verify-signatures` runs the signature program (gpg)",
        ),
        (
            "git push --receive-pack=/tmp/x origin main",
            "`git push --receive-pack` runs PROGRAM on the remote side",
        ),
        (
            "git rebase --edit-todo",
            "`git rebase --edit-todo` runs an editor",
        ),
        (
            "git rebase -i main",
            "`git rebase --interactive` runs an editor on the list of commits",
        ),
        (
            "git rev-list --show-signature HEAD",
            "`git rev-list --show-signature` runs the signature program (gpg) on every commit",
        ),
        (
            "git shortlog --show-signature HEAD",
            "`git shortlog --show-signature` runs the signature program (gpg) on every commit",
        ),
        (
            "git stash show --ext-diff",
            "`git stash show --ext-diff` runs the configured external diff program",
        ),
        (
            "git stash show --textconv",
            "`git stash show --textconv` runs the configured text-conversion programs",
        ),
        ("git tag -e -a v1", "`git tag --edit` runs an editor"),
        (
            "git tag -v v1",
            "`git tag --verify` runs the signature program (gpg)",
        ),
    ];

    /// Dangerous, abbreviated or not.
    const DANGEROUS: &[&str] = &[
        "git reset --hard",
        "git reset --har",
        "git reset --ha HEAD~1",
        "git push --force",
        "git push -f origin main",
        "git push --forc",
        "git push --force-with-lease",
        "git push --dele origin x",
        "git push origin --delete main",
        "git push origin +main",
        "git push origin :main",
        "git push --mirror",
        "git push --mir",
        "git clean -fdx",
        "git clean --forc",
        "git clean -f",
        "git branch -D x",
        "git branch --delete --force x",
        "git branch -d -f x",
        "git branch -df x",
        "git -C /repo branch -D x",
        "git checkout -- .",
        "git checkout .",
        "git checkout -f main",
        "git restore .",
        "git restore file.txt",
        "git restore --worktree --staged a.txt",
        "git checkout -- file.txt",
        "git checkout HEAD file.txt",
        "git checkout HEAD --pathspec-from-file=paths.txt",
        "git switch --discard-changes main",
        "git stash drop",
        "git stash clear",
        "git reflog expire --all",
        "git gc --prune=now",
        "git update-ref -d refs/heads/x",
    ];

    /// Not dangerous.
    const NOT_DANGEROUS: &[&str] = &[
        "git reset HEAD~1",
        "git reset --soft HEAD~1",
        "git push",
        "git restore --staged .",
        "git branch -d x",
        "git clean -n",
    ];

    /// Dangerous, and a phrase the reasons must contain.
    const DANGEROUS_AND_WHY: &[(&str, &str)] = &[
        (
            "git apply --unsafe-paths x.patch",
            "`git apply --unsafe-paths` writes outside the working tree",
        ),
        (
            "git branch -C main old",
            "`git branch -C` copies a branch over an existing one",
        ),
        (
            "git branch -M main old",
            "`git branch -M` renames a branch over an existing one",
        ),
        (
            "git checkout -B main",
            "`git checkout -B` resets an existing branch",
        ),
        (
            "git push --prune origin",
            "`git push --prune` deletes remote refs that have no local counterpart",
        ),
        (
            "git reset --keep HEAD~1",
            "`git reset --keep` moves the branch, discarding commits",
        ),
        (
            "git reset --merge",
            "`git reset --merge` discards uncommitted work",
        ),
        (
            "git rm -f x",
            "`git rm --force` deletes files even with uncommitted changes",
        ),
        (
            "git switch -C main",
            "`git switch --force-create` resets an existing branch",
        ),
        (
            "git switch -f main",
            "`git switch --force` discards uncommitted changes",
        ),
        (
            "git tag -f v1",
            "`git tag --force` replaces an existing tag",
        ),
        (
            "git worktree add -B wip ../wip",
            "`git worktree add -B` resets an existing branch",
        ),
        (
            "git worktree remove -f ../wip",
            "`git worktree remove --force` deletes a working tree with uncommitted changes",
        ),
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[
        &HARMLESS,
        &NOT_HARMLESS,
        &DANGEROUS,
        &DANGEROUS_AND_WHY,
        &NOT_DANGEROUS,
    ];

    fn said(command: &str) -> (bool, String) {
        let u = understand(&crate::policy::shell::words(command), false);
        let text = u
            .findings
            .iter()
            .map(|f| f.effect.to_string())
            .collect::<Vec<_>>()
            .join(" | ");
        (u.harmless(), text)
    }

    fn dangerous(command: &str) -> bool {
        let u = understand(&crate::policy::shell::words(command), false);
        u.findings
            .iter()
            .any(|f| matches!(f.effect, Effect::Danger(_)))
    }

    #[test]
    fn everyday_reading_is_harmless() {
        for &c in HARMLESS {
            let (ok, why) = said(c);
            assert!(ok, "{c:?} should be harmless: {why}");
        }
    }

    #[test]
    fn what_is_not_harmless_and_why() {
        for &(c, what) in NOT_HARMLESS {
            let (ok, why) = said(c);
            assert!(!ok, "{c:?} must not be harmless");
            assert!(why.contains(what), "{c:?}: expected {what:?} in {why:?}");
        }
    }

    #[test]
    fn dangers_including_abbreviated_ones() {
        for &c in DANGEROUS {
            assert!(dangerous(c), "{c:?} must be dangerous: {:?}", said(c).1);
        }
        for &(c, what) in DANGEROUS_AND_WHY {
            let (_, why) = said(c);
            assert!(dangerous(c), "{c:?} must be dangerous: {why:?}");
            assert!(why.contains(what), "{c:?}: expected {what:?} in {why:?}");
        }
        for &c in NOT_DANGEROUS {
            assert!(!dangerous(c), "{c:?} is not dangerous: {:?}", said(c).1);
        }
    }
}
