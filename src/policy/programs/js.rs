//! The JavaScript package managers: npm (11), npx, yarn (1 "classic" and 2+ "berry") and
//! pnpm (8–10).
//!
//! npm parses with nopt (read in npm's own node_modules/nopt/lib/nopt-lib.js): every
//! `--name[=value]` is configuration, known or not, abbreviations of known names
//! included, and options may come anywhere before `--`; the first operand names the
//! command, which may itself be abbreviated (`npm uninst` is `uninstall`: lib/utils/
//! cmd-list.js). `Syntax::Npm` reads exactly that; the check adds nopt's quirks: a switch
//! takes a following `true`, `false` or `null` as its value; a string option does not take
//! a next word that looks like an option; and a one-dash word of several letters is a long
//! option, a shorthand or a bundle of letters depending on npm's keys (`-ws`, `-reg`,
//! `-prefix`), so only single letters are approved. Option lines follow `npm help
//! config` (@npmcli/config's definitions).
//!
//! npx is `npm exec` with its own pre-reading (npm's bin/npx-cli.js): options only
//! before the package; the first operand is the package, and every later word is the
//! package's own.
//!
//! yarn is not installed here: read from its sources and docs. Yarn 1 (yarnpkg/yarn
//! src/cli/index.js) parses with commander 2 (exact names, `-abc` split into letters,
//! unknown options silently dropped with the word after them); Yarn 2+ with clipanion
//! (exact names, <https://yarnpkg.com/cli>). Both read the first operand as the command and,
//! if it is none of theirs, run the package script or dependency binary of that name with
//! every later word passed on (`yarn build --prod`). Both run the Yarn release the
//! project's `.yarnrc`/`.yarnrc.yml` names (`yarn-path`/`yarnPath`), for every command,
//! `--version` included: nothing yarn does is harmless on its own.
//!
//! pnpm is not installed here: read from its docs (<https://pnpm.io/cli/>) and sources
//! (pnpm/pnpm cli/parse-cli-args): nopt again, with `--config.KEY=VALUE` settings, an
//! unknown command running the package script of that name, and the words after `run
//! SCRIPT`, `exec`, `dlx PKG` and `create` handed on. pnpm switches to the pnpm version
//! package.json's `packageManager` names (downloading it), so nothing it does is
//! harmless on its own either.
//!
//! Effects: a package script, or installing what package.json declares, is the
//! project's code (`project`); a package named on the command line (`npm install x`,
//! `npx x`, `yarn dlx x`) runs code from outside it (`code`); options that choose a shell,
//! node's options or where npm works are `code` or `config`; removing packages
//! (`uninstall`, `remove`, `prune`, `unpublish`) is a danger.

use super::profile::Role::{Name, Passthrough, Text};
use super::profile::{
    BASE, Config, ConfigFile, Effect, Judge, Place, Profile, Reading, Role, Span, Syntax, join,
};
use super::spec::{Arg, Does};

pub const PROFILES: &[&Profile] = &[&NPM, &NPX, &YARN, &PNPM];

// ── nopt's quirks (npm, npx, pnpm) ───────────────────────────────────────────────────

/// What nopt reads differently from the profile's reading, as unknowns.
/// `shorthands`: one-dash words nopt takes whole, as one of its shorthands (they are no
/// configuration key, so nopt reads them so whatever the keys), that the profile reads
/// to the same effect letter by letter.
fn nopt_check(r: &mut Reading<'_>, program: &str, shorthands: &[&str]) {
    let mut unknown: Vec<(usize, String)> = Vec::new();
    for g in &r.given {
        let word = r.words[g.at.first].as_str();
        if word.starts_with('-')
            && !word.starts_with("--")
            && word.len() > 2
            && !shorthands.contains(&word)
        {
            unknown.push((
                g.at.first,
                format!(
                    "`{word}`: {program} reads a one-dash word as a long option, a shorthand or single letters, depending on its configuration keys; execgate approves one letter at a time"
                ),
            ));
        }
        if g.at.last > g.at.first
            && let Some(v) = g.value
            && v.starts_with('-')
        {
            unknown.push((
                g.at.last,
                format!(
                    "`{v}` after `{}`: {program} may read it as an option rather than the value",
                    g.opt.display()
                ),
            ));
        }
        if g.opt.arg == Arg::No
            && !word.contains('=')
            && let Some(next) = r.words.get(g.at.first + 1)
            && matches!(next.as_str(), "true" | "false" | "null")
            && r.dashdash.is_none_or(|d| g.at.first + 1 < d)
        {
            unknown.push((
                g.at.first + 1,
                format!(
                    "`{word} {next}`: {program} takes `{next}` as the value of `{}`",
                    g.opt.display()
                ),
            ));
        }
    }
    unknown.sort();
    unknown.dedup_by_key(|(i, _)| *i);
    for (i, why) in unknown {
        r.unknown(i, why);
    }
}

/// The first word the reader could not take as a subcommand, when no subcommand was
/// selected.
fn unknown_command<'w>(r: &Reading<'w>) -> Option<(usize, &'w str)> {
    if !r.path.is_empty() {
        return None;
    }
    r.findings.iter().find_map(|f| match f.effect {
        Effect::Unknown(_) if !r.words[f.at.first].starts_with('-') => {
            Some((f.at.first, r.words[f.at.first].as_str()))
        }
        _ => None,
    })
}

/// The index of a subcommand's word (for findings about it).
fn word_of(r: &Reading<'_>, names: &[&str]) -> usize {
    r.words
        .iter()
        .position(|w| names.contains(&w.as_str()))
        .unwrap_or(0)
}

// ── npm ──────────────────────────────────────────────────────────────────────────────

/// npm's configuration as command-line options (any of them anywhere). Keys not listed
/// here are read by `Syntax::Npm` as configuration.
const NPM_OPTIONS: &[&str] = &[
    // What is printed, and how.
    "-v, --version",
    "--versions",
    "-h, -H, -?, --help, --usage",
    "-l, --long",
    "-p, --parseable, --porcelain",
    "--json",
    "-a, --all",
    "--depth=DEPTH",
    "--loglevel=LEVEL",
    "-s, --silent",
    "-q, --quiet",
    "-d",
    "--verbose",
    "--progress",
    "--no-progress",
    "--no-color",
    "--unicode",
    "--no-unicode",
    "--update-notifier",
    "--no-update-notifier",
    // How packages are installed.
    "-S, --save",
    "--no-save",
    "-D, --save-dev",
    "-O, --save-optional",
    "-E, --save-exact",
    "-P, --save-prod",
    "--save-peer",
    "-B, --save-bundle",
    "--save-prefix=PREFIX",
    "--omit=TYPE",
    "--include=TYPE",
    "--production",
    "--audit",
    "--no-audit",
    "--fund",
    "--no-fund",
    "--ignore-scripts",
    "--foreground-scripts",
    "--if-present",
    "--legacy-peer-deps",
    "--strict-peer-deps",
    "--prefer-dedupe",
    "--prefer-offline",
    "--prefer-online",
    "--offline",
    "--package-lock",
    "--no-package-lock",
    "--package-lock-only",
    "--engine-strict",
    "--install-links",
    "--no-bin-links",
    "--install-strategy=STRATEGY",
    "--global-style",
    "--legacy-bundling",
    "--lockfile-version=VERSION",
    "--before=DATE",
    "--cpu=CPU",
    "--os=OS",
    "--libc=LIBC",
    "--dry-run",
    "-f, --force",
    "-y, --yes",
    "-w, --workspace=NAME",
    "--workspaces",
    "--no-workspaces",
    "--include-workspace-root",
    "--audit-level=LEVEL",
    "--searchlimit=N",
    "--searchopts=OPTS",
    "--searchexclude=TEXT",
    // Publishing and versions.
    "--tag=TAG",
    "--access=ACCESS",
    "--otp=CODE",
    "--provenance",
    "-m, --message=MESSAGE",
    "--preid=ID",
    "--allow-same-version",
    "--git-tag-version",
    "--no-git-tag-version",
    "--commit-hooks",
    "--no-commit-hooks",
    "--tag-version-prefix=PREFIX",
    "--sign-git-tag  code: runs gpg to sign the tag",
    "--sign-git-commit  code: runs gpg to sign the commit",
    // Paths written.
    "--cache=DIR  writes",
    "--logs-dir=DIR  writes",
    "--pack-destination=DIR  writes",
    // Programs run.
    "-c, --call=COMMAND  runs: runs COMMAND in a shell",
    "--package=PACKAGE  code: installs and runs PACKAGE",
    "--script-shell=SHELL  runs: runs package scripts with SHELL",
    "--shell=SHELL  runs: runs SHELL",
    "--node-options=OPTIONS  code: passes options to node (`--require` loads any file)",
    "--node-gyp=PATH  runs: builds native modules with PATH",
    "--git=PATH  runs: runs PATH as git",
    "--editor=EDITOR  runs: runs EDITOR",
    "--viewer=VIEWER  runs: shows help with VIEWER",
    // Where npm works and what it trusts.
    "-C, --prefix=DIR  config: works in another directory (or global prefix)",
    "-g, --global  config: works on the global packages (on PATH) instead of the project",
    "-L, --location=LOCATION  config: chooses which configuration (and packages) npm works on",
    "--userconfig=FILE  config: reads another user configuration",
    "--globalconfig=FILE  config: reads another global configuration",
    "--registry=URL  config: uses another registry",
    "--scope=SCOPE  config: uses a scope's registry",
    "--no-strict-ssl  config: stops verifying the registry's certificate",
    "--proxy=URL  config: sends requests through a proxy",
    "--https-proxy=URL  config: sends requests through a proxy",
    "--noproxy=HOSTS  config: changes which hosts bypass the proxy",
    "--cafile=FILE  config: trusts other certificate authorities",
];

/// npm's shorthands of several letters that the profile reads letter by letter to the
/// same effect: `-ws` (`--workspaces`; read as `-w s`, which changes nothing), `-dd` and
/// `-ddd` (more logging).
const NPM_WORD_SHORTHANDS: &[&str] = &["-ws", "-dd", "-ddd"];

/// npm's commands and aliases (lib/utils/cmd-list.js), for what an abbreviation means.
const NPM_COMMANDS: &[&str] = &[
    "access",
    "adduser",
    "approve-scripts",
    "audit",
    "bugs",
    "cache",
    "ci",
    "completion",
    "config",
    "dedupe",
    "deny-scripts",
    "deprecate",
    "diff",
    "dist-tag",
    "docs",
    "doctor",
    "edit",
    "exec",
    "explain",
    "explore",
    "find-dupes",
    "fund",
    "get",
    "help",
    "help-search",
    "init",
    "install",
    "install-ci-test",
    "install-scripts",
    "install-test",
    "link",
    "ll",
    "login",
    "logout",
    "ls",
    "org",
    "outdated",
    "owner",
    "pack",
    "ping",
    "pkg",
    "prefix",
    "profile",
    "prune",
    "publish",
    "query",
    "rebuild",
    "repo",
    "restart",
    "root",
    "run",
    "sbom",
    "search",
    "set",
    "shrinkwrap",
    "stage",
    "star",
    "stars",
    "start",
    "stop",
    "team",
    "test",
    "token",
    "trust",
    "undeprecate",
    "uninstall",
    "unpublish",
    "unstar",
    "update",
    "version",
    "view",
    "whoami",
];

const NPM_ALIASES: &[(&str, &str)] = &[
    ("author", "owner"),
    ("home", "docs"),
    ("issues", "bugs"),
    ("info", "view"),
    ("show", "view"),
    ("find", "search"),
    ("add", "install"),
    ("unlink", "uninstall"),
    ("remove", "uninstall"),
    ("rm", "uninstall"),
    ("r", "uninstall"),
    ("un", "uninstall"),
    ("rb", "rebuild"),
    ("list", "ls"),
    ("ln", "link"),
    ("create", "init"),
    ("i", "install"),
    ("it", "install-test"),
    ("cit", "install-ci-test"),
    ("u", "update"),
    ("up", "update"),
    ("c", "config"),
    ("s", "search"),
    ("se", "search"),
    ("tst", "test"),
    ("t", "test"),
    ("ddp", "dedupe"),
    ("v", "view"),
    ("run-script", "run"),
    ("clean-install", "ci"),
    ("clean-install-test", "install-ci-test"),
    ("x", "exec"),
    ("why", "explain"),
    ("la", "ll"),
    ("verison", "version"),
    ("ic", "ci"),
    ("innit", "init"),
    ("in", "install"),
    ("ins", "install"),
    ("inst", "install"),
    ("insta", "install"),
    ("instal", "install"),
    ("isnt", "install"),
    ("isnta", "install"),
    ("isntal", "install"),
    ("isntall", "install"),
    ("install-clean", "ci"),
    ("isntall-clean", "ci"),
    ("hlep", "help"),
    ("dist-tags", "dist-tag"),
    ("upgrade", "update"),
    ("udpate", "update"),
    ("rum", "run"),
    ("sit", "install-ci-test"),
    ("urn", "run"),
    ("ogr", "org"),
    ("add-user", "adduser"),
];

/// The command npm runs for a command word, as lib/utils/cmd-list.js's `deref` finds it:
/// camelCase to kebab-case, exact names, aliases, then any unambiguous prefix of a name
/// or alias.
fn npm_deref(word: &str) -> Option<&'static str> {
    let mut c = String::new();
    for ch in word.chars() {
        if ch.is_ascii_uppercase() {
            c.push('-');
            c.push(ch.to_ascii_lowercase());
        } else {
            c.push(ch);
        }
    }
    let alias = |a: &str| NPM_ALIASES.iter().find(|(k, _)| *k == a).map(|(_, v)| *v);
    if let Some(cmd) = NPM_COMMANDS.iter().find(|k| **k == c) {
        return Some(cmd);
    }
    if let Some(cmd) = alias(&c) {
        return Some(cmd);
    }
    let mut names = NPM_COMMANDS
        .iter()
        .copied()
        .chain(NPM_ALIASES.iter().map(|(k, _)| *k))
        .filter(|n| n.starts_with(c.as_str()));
    match (names.next(), names.next()) {
        (Some(only), None) => Some(alias(only).unwrap_or(only)),
        _ => None,
    }
}

/// npm's subcommands keep its configuration options (`inherit`).
const NPM_SUB: Profile = Profile {
    syntax: Syntax::Npm,
    inherit: true,
    ..BASE
};

/// `publish FOLDER`: another folder's files made public, and its publish scripts run.
const PUBLISHES_OTHER: Role = Role::Code(
    "publishes (running its publish scripts, making its files public) the folder or tarball",
);

// ── configuration files (the configuration gate, `policy::progconfig`) ───────────────

/// The `.npmrc` settings that change neither what npm (or pnpm, or yarn 1) runs, nor
/// which files it reads, nor where it writes: how dependencies are saved and resolved,
/// what is printed, and the registry and its credentials (`npm ls` and `npm prefix`
/// reach no registry; a command that does is never harmless). Everything else is asked
/// about: `userconfig` and `globalconfig` (another file read), `cache`, `logs-dir`,
/// `prefix`, `tmp` (where it writes), `viewer`, `browser`, `editor`, `shell`,
/// `script-shell`, `node-options`, `init-module` (programs it runs), `cafile`,
/// `//host/:certfile` and `keyfile` (files read), and any key execgate does not know.
const NPMRC_HARMLESS: &[&str] = &[
    "save",
    "save-exact",
    "save-prefix",
    "save-dev",
    "save-optional",
    "save-peer",
    "save-prod",
    "package-lock",
    "lockfile-version",
    "omit-lockfile-registry-resolved",
    "engine-strict",
    "legacy-peer-deps",
    "strict-peer-deps",
    "install-strategy",
    "omit",
    "include",
    "fund",
    "audit",
    "audit-level",
    "update-notifier",
    "loglevel",
    "progress",
    "color",
    "unicode",
    "long",
    "parseable",
    "json",
    "depth",
    "offline",
    "prefer-offline",
    "prefer-online",
    "fetch-retries",
    "fetch-retry-factor",
    "fetch-retry-mintimeout",
    "fetch-retry-maxtimeout",
    "fetch-timeout",
    "maxsockets",
    "registry",
    "@*:registry",
    "always-auth",
    "email",
    "//*:_authToken",
    "//*:_auth",
    "//*:_password",
    "//*:username",
    "//*:email",
    "//*:always-auth",
    "init-author-name",
    "init-author-email",
    "init-author-url",
    "init-license",
    "init-version",
    "message",
    "workspaces-update",
    "include-workspace-root",
    "ignore-scripts",
];

/// pnpm's own `.npmrc` settings of the same kind: how the dependency tree is laid out
/// and resolved (`node-linker`, hoisting, peers). Not `global-dir`, `store-dir`,
/// `virtual-store-dir`, `modules-dir` (where it writes), `pnpmfile` or
/// `global-pnpmfile` (code it loads), `enable-pre-post-scripts`.
const PNPMRC_HARMLESS: &[&str] = &[
    "auto-install-peers",
    "strict-peer-dependencies",
    "shamefully-hoist",
    "hoist",
    "hoist-pattern",
    "public-hoist-pattern",
    "node-linker",
    "link-workspace-packages",
    "prefer-workspace-packages",
    "shared-workspace-lockfile",
    "save-workspace-protocol",
    "dedupe-peer-dependents",
    "resolve-peers-from-workspace-root",
    "resolution-mode",
    "lockfile",
    "prefer-frozen-lockfile",
    "recursive-install",
    "use-lockfile-v6",
];

const NPMRC_WHY: &str = "npm's configuration names files it reads (`userconfig`, `cafile`), where it writes (`cache`, `logs-dir`, `prefix`) and programs it runs (`viewer`, `script-shell`, `node-options`)";

const NPM_RC: ConfigFile = ConfigFile {
    name: ".npmrc",
    place: Place::Up,
    judge: Judge::NpmIni(NPMRC_HARMLESS),
    why: NPMRC_WHY,
    neutralised: false,
};

/// `~/.npmrc`, the user configuration (`$HOME` for npm: the directories above a project
/// under the home directory include it, as a project's).
const NPM_USER_RC: ConfigFile = ConfigFile {
    name: ".npmrc",
    place: Place::Home,
    judge: Judge::NpmIni(NPMRC_HARMLESS),
    why: NPMRC_WHY,
    neutralised: true,
};

/// npm reads the `.npmrc` of the project root (the nearest directory above the cwd with
/// a package.json or node_modules, else the cwd; execgate reads every one up to `/`),
/// `~/.npmrc`, the global `$PREFIX/etc/npmrc` (the system's) and npm's own builtin one.
const NPM_CONFIG: Config = Config {
    files: &[NPM_RC, NPM_USER_RC],
    env: "`npm_config_*` and `NPM_CONFIG_*` (any setting, above the files)",
    // Checked with npm 11 (tests/program_config.rs): a path that cannot exist reads as
    // an empty file; `/dev/null` for both is refused ("double-loading config").
    run_env: &[
        (
            "npm_config_userconfig",
            "/dev/null/npmrc",
            "npm (and npx) reads no user configuration; the variable is above any `.npmrc`, which cannot name another",
        ),
        (
            "npm_config_globalconfig",
            "/dev/null/global-npmrc",
            "npm reads no global configuration",
        ),
    ],
};

const YARN_CONFIG: Config = Config {
    files: &[
        ConfigFile {
            name: ".yarnrc.yml",
            place: Place::Up,
            judge: Judge::Exists,
            why: "Yarn 2+ runs the release its `yarnPath` names and loads its `plugins`, for every command",
            neutralised: false,
        },
        ConfigFile {
            name: ".yarnrc",
            place: Place::Up,
            judge: Judge::Exists,
            why: "Yarn 1 runs the release its `yarn-path` names, for every command",
            neutralised: false,
        },
        NPM_RC,
        ConfigFile {
            name: ".yarnrc.yml",
            place: Place::Home,
            judge: Judge::Exists,
            why: "Yarn 2+ runs the release its `yarnPath` names and loads its `plugins`",
            neutralised: false,
        },
        ConfigFile {
            name: ".yarnrc",
            place: Place::Home,
            judge: Judge::Exists,
            why: "Yarn 1 runs the release its `yarn-path` names",
            neutralised: false,
        },
        // Yarn 1 reads `~/.npmrc` itself, not through npm's `userconfig`.
        ConfigFile {
            neutralised: false,
            ..NPM_USER_RC
        },
    ],
    env: "`YARN_*` (any Yarn setting, `YARN_YARN_PATH` too), `npm_config_*` (Yarn 1)",
    run_env: &[],
};

const PNPM_RC: ConfigFile = ConfigFile {
    judge: Judge::NpmIni(&join::<{ NPMRC_HARMLESS.len() + PNPMRC_HARMLESS.len() }>(
        &[NPMRC_HARMLESS, PNPMRC_HARMLESS],
    )),
    ..NPM_RC
};

const PNPM_CONFIG: Config = Config {
    files: &[
        PNPM_RC,
        ConfigFile {
            name: ".pnpmfile.cjs",
            place: Place::Up,
            judge: Judge::Exists,
            why: "pnpm loads it as code (its hooks) when it reads the dependency tree",
            neutralised: false,
        },
        ConfigFile {
            name: "pnpm-workspace.yaml",
            place: Place::Up,
            judge: Judge::YamlTop(&[
                "packages",
                "catalog",
                "catalogs",
                "onlyBuiltDependencies",
                "ignoredBuiltDependencies",
                "overrides",
                "patchedDependencies",
                "peerDependencyRules",
            ]),
            why: "pnpm 10 reads settings from it, among them where it writes (`storeDir`, `modulesDir`) and code it loads (`pnpmfile`)",
            neutralised: false,
        },
        PNPM_USER_RC,
        ConfigFile {
            name: ".config/pnpm/rc",
            place: Place::Home,
            judge: PNPM_RC.judge,
            why: NPMRC_WHY,
            neutralised: false,
        },
    ],
    env: "`npm_config_*`, `pnpm_config_*`",
    run_env: &[],
};

/// pnpm reads `~/.npmrc` itself, not through npm's `userconfig` variable.
const PNPM_USER_RC: ConfigFile = ConfigFile {
    judge: PNPM_RC.judge,
    neutralised: false,
    ..NPM_USER_RC
};

const INSTALLS_DECLARED: &str = "installs the dependencies package.json declares, running their install scripts and the project's";
const INSTALLS_NAMED: Role =
    Role::Code("installs (and runs the install scripts of) the package, not declared yet,");

const NPM: Profile = Profile {
    names: &["npm"],
    syntax: Syntax::Npm,
    options: NPM_OPTIONS,
    subcommands: &[
        &Profile {
            names: &["test", "tst", "t"],
            rest: Passthrough,
            does: Does::Project("runs the package's test script"),
            ..NPM_SUB
        },
        &Profile {
            names: &["start"],
            rest: Passthrough,
            does: Does::Project("runs the package's start script"),
            ..NPM_SUB
        },
        &Profile {
            names: &["stop"],
            rest: Passthrough,
            does: Does::Project("runs the package's stop script"),
            ..NPM_SUB
        },
        &Profile {
            names: &["restart"],
            rest: Passthrough,
            does: Does::Project("runs the package's restart scripts"),
            ..NPM_SUB
        },
        &Profile {
            names: &["run", "run-script", "rum", "urn"],
            operands: &[Role::Project("runs the package script")],
            rest: Passthrough,
            ..NPM_SUB
        },
        &Profile {
            names: &[
                "install", "i", "add", "in", "ins", "inst", "insta", "instal", "isnt", "isnta",
                "isntal", "isntall",
            ],
            rest: INSTALLS_NAMED,
            does: Does::Project(INSTALLS_DECLARED),
            ..NPM_SUB
        },
        &Profile {
            names: &[
                "ci",
                "clean-install",
                "ic",
                "install-clean",
                "isntall-clean",
            ],
            does: Does::Project(INSTALLS_DECLARED),
            ..NPM_SUB
        },
        &Profile {
            names: &["install-test", "it"],
            rest: INSTALLS_NAMED,
            does: Does::Project("installs the declared dependencies and runs the test script"),
            ..NPM_SUB
        },
        &Profile {
            names: &["install-ci-test", "cit", "clean-install-test", "sit"],
            does: Does::Project("installs the declared dependencies and runs the test script"),
            ..NPM_SUB
        },
        &Profile {
            names: &["uninstall", "unlink", "remove", "rm", "r", "un"],
            rest: Text,
            does: Does::Danger("removes packages from node_modules and package.json"),
            ..NPM_SUB
        },
        &Profile {
            names: &["prune"],
            rest: Text,
            does: Does::Danger("removes installed packages package.json does not list"),
            ..NPM_SUB
        },
        &Profile {
            names: &["unpublish"],
            rest: Text,
            does: Does::Danger("removes a published package from the registry"),
            ..NPM_SUB
        },
        &Profile {
            names: &["update", "u", "up", "upgrade", "udpate"],
            rest: Text,
            does: Does::Project("updates the declared dependencies, running their install scripts"),
            ..NPM_SUB
        },
        &Profile {
            names: &["dedupe", "ddp"],
            rest: Text,
            does: Does::Project(
                "reinstalls the declared dependencies, running their install scripts",
            ),
            ..NPM_SUB
        },
        &Profile {
            names: &["rebuild", "rb"],
            rest: Text,
            does: Does::Project("reruns the installed packages' install scripts"),
            ..NPM_SUB
        },
        &Profile {
            names: &["ls", "list", "la", "ll"],
            rest: Text,
            ..NPM_SUB
        },
        &Profile {
            names: &["explain", "why"],
            rest: Name,
            ..NPM_SUB
        },
        &Profile {
            names: &["query"],
            operands: &[Text],
            ..NPM_SUB
        },
        &Profile {
            names: &["prefix", "root", "help-search", "completion"],
            rest: Text,
            ..NPM_SUB
        },
        &Profile {
            names: &["help", "hlep"],
            rest: Text,
            ..NPM_SUB
        },
        &Profile {
            names: &["sbom"],
            options: &["--sbom-format=FORMAT", "--sbom-type=TYPE"],
            ..NPM_SUB
        },
        &Profile {
            names: &["fund"],
            options: &["--which=N"],
            operands: &[Role::Code("opens the funding page in a web browser for")],
            ..NPM_SUB
        },
        &Profile {
            names: &["outdated"],
            rest: Text,
            does: Does::Net("asks the registry for newer versions"),
            ..NPM_SUB
        },
        &Profile {
            names: &["view", "info", "show", "v"],
            rest: Text,
            does: Does::Net("asks the registry about a package"),
            ..NPM_SUB
        },
        &Profile {
            names: &["search", "find", "s", "se"],
            rest: Text,
            does: Does::Net("searches the registry"),
            ..NPM_SUB
        },
        &Profile {
            names: &["ping"],
            does: Does::Net("contacts the registry"),
            ..NPM_SUB
        },
        &Profile {
            names: &["whoami"],
            does: Does::Net("asks the registry whom the token belongs to"),
            ..NPM_SUB
        },
        &Profile {
            names: &["doctor"],
            rest: Text,
            does: Does::Net(
                "contacts the registry, runs git and node, and verifies (prunes) the cache",
            ),
            ..NPM_SUB
        },
        &Profile {
            names: &["audit"],
            does: Does::Net("sends the dependency tree to the registry"),
            subcommands: &[
                &Profile {
                    names: &["fix"],
                    does: Does::Project(
                        "installs fixed versions of the dependencies, running their install scripts",
                    ),
                    ..NPM_SUB
                },
                &Profile {
                    names: &["signatures"],
                    does: Does::Net("checks the packages' signatures with the registry"),
                    ..NPM_SUB
                },
            ],
            ..NPM_SUB
        },
        &Profile {
            names: &["exec", "x"],
            operands: &[Role::Code("runs (installing it if missing) the package")],
            rest: Passthrough,
            check: Some(exec_check),
            ..NPM_SUB
        },
        &Profile {
            names: &["init", "create", "innit"],
            options: &[
                "--init-author-name=NAME",
                "--init-license=LICENSE",
                "--init-version=VERSION",
                "--init-private",
            ],
            operands: &[Role::Code("runs the initializer package (`create-…`) for")],
            rest: Passthrough,
            does: Does::Repo("writes package.json"),
            ..NPM_SUB
        },
        &Profile {
            names: &["publish"],
            operands: &[PUBLISHES_OTHER],
            does: Does::Net(
                "publishes the package to the registry (running its prepublish and prepack scripts)",
            ),
            ..NPM_SUB
        },
        &Profile {
            names: &["pack"],
            rest: Role::Code("packs (running its prepack scripts if it is a folder)"),
            does: Does::Project("packs the package, running its prepack and prepare scripts"),
            ..NPM_SUB
        },
        &Profile {
            names: &["version", "verison"],
            operands: &[Role::Project(
                "bumps the version (running the version scripts, then committing and tagging) to",
            )],
            ..NPM_SUB
        },
        &Profile {
            names: &["shrinkwrap"],
            does: Does::Repo("writes npm-shrinkwrap.json"),
            ..NPM_SUB
        },
        &Profile {
            names: &["link", "ln"],
            rest: Role::Code("links (installing it globally if missing) the package"),
            does: Does::Config(
                "links packages through the global folder (changes the commands on PATH)",
            ),
            ..NPM_SUB
        },
        &Profile {
            names: &["pkg"],
            subcommands: &[
                &Profile {
                    names: &["get"],
                    rest: Text,
                    ..NPM_SUB
                },
                &Profile {
                    names: &["set", "delete", "fix"],
                    rest: Text,
                    does: Does::Repo("changes package.json"),
                    ..NPM_SUB
                },
            ],
            ..NPM_SUB
        },
        &Profile {
            names: &["config", "c"],
            subcommands: &[
                &Profile {
                    names: &["get"],
                    rest: Text,
                    does: Does::Env("prints configuration, which may hold registry tokens"),
                    ..NPM_SUB
                },
                &Profile {
                    names: &["list", "ls"],
                    does: Does::Env("prints configuration, which may hold registry tokens"),
                    ..NPM_SUB
                },
                &Profile {
                    names: &["set", "delete", "rm", "del", "fix"],
                    rest: Text,
                    does: Does::Config("changes npm's configuration"),
                    ..NPM_SUB
                },
                &Profile {
                    names: &["edit"],
                    does: Does::Code("runs an editor on npm's configuration"),
                    ..NPM_SUB
                },
            ],
            ..NPM_SUB
        },
        &Profile {
            names: &["get"],
            rest: Text,
            does: Does::Env("prints configuration, which may hold registry tokens"),
            ..NPM_SUB
        },
        &Profile {
            names: &["set"],
            rest: Text,
            does: Does::Config("changes npm's configuration"),
            ..NPM_SUB
        },
        &Profile {
            names: &["token"],
            rest: Text,
            does: Does::Env("lists or creates registry tokens"),
            ..NPM_SUB
        },
        &Profile {
            names: &["login", "adduser", "add-user"],
            does: Does::Config("logs in to the registry and stores the token in .npmrc"),
            ..NPM_SUB
        },
        &Profile {
            names: &["logout"],
            does: Does::Config("removes the registry token from .npmrc"),
            ..NPM_SUB
        },
        &Profile {
            names: &["cache"],
            subcommands: &[
                &Profile {
                    names: &["ls"],
                    rest: Text,
                    ..NPM_SUB
                },
                &Profile {
                    names: &["add"],
                    rest: Text,
                    does: Does::Net("fetches packages into the cache"),
                    ..NPM_SUB
                },
                &Profile {
                    names: &["clean", "clear", "rm", "verify"],
                    rest: Text,
                    check: Some(npm_cache_check),
                    ..NPM_SUB
                },
            ],
            ..NPM_SUB
        },
        &Profile {
            names: &["edit", "explore"],
            rest: Text,
            does: Does::Code("runs an editor or shell in an installed package"),
            ..NPM_SUB
        },
        &Profile {
            names: &["docs", "home", "bugs", "issues", "repo"],
            rest: Text,
            does: Does::Code("opens a web browser"),
            ..NPM_SUB
        },
    ],
    check: Some(npm_check),
    config: Some(&NPM_CONFIG),
    helpers: NPM_HELPERS,
    keeps: NPM_KEEPS,
    phones_home: Some(
        "once a week, after starting any command, npm asks its registry (the default one, or the user's configured one: a project's `.npmrc` may not name another) whether a newer npm exists, and notes when in `~/.npm/_update-notifier-last-checked`; `update-notifier=false` or `CI` in the environment stops it",
    ),
    ..BASE
};

/// npm and npx are node scripts (`#!/usr/bin/env node`): node runs them.
const NPM_HELPERS: &[&str] = &["node"];

/// Every npm command but `--version` writes its debug log under `~/.npm/_logs/` (and
/// removes the oldest beyond `logs-max`), `npm ls` and `npx -h` included. Where it goes
/// is npm's configuration (`logs-dir`), which the configuration gate judges.
const NPM_KEEPS: &[&str] = &[".npm/_logs", ".npm/_update-notifier-last-checked"];

/// nopt's quirks, and what an abbreviated command would remove.
fn npm_check(r: &mut Reading<'_>) {
    nopt_check(r, "npm", NPM_WORD_SHORTHANDS);
    if let Some((i, word)) = unknown_command(r)
        && let Some(cmd) = npm_deref(word)
    {
        let effect = match cmd {
            "uninstall" | "prune" | "unpublish" => Effect::Danger(format!(
                "`{word}` is npm's `{cmd}` (npm accepts abbreviated commands), which removes packages"
            )),
            _ => Effect::Unknown(format!(
                "`{word}` is npm's `{cmd}`; execgate reads commands only written out"
            )),
        };
        r.add(effect, Span::one(i));
    }
}

/// `npm exec` (and `npx`) without a package or `--call` starts an interactive shell.
fn exec_check(r: &mut Reading<'_>) {
    if r.operands.is_empty()
        && !r.has("call")
        && !r.has("package")
        && !r.has("version")
        && !r.has("usage")
    {
        // To the end: a rule's wildcard must not cover what decides that no package is named.
        let at = r.to_end(word_of(r, &["exec", "x"]));
        r.add(
            Effect::Code("`exec` without a package starts an interactive shell".into()),
            at,
        );
    }
}

/// `npm cache clean --force` and `verify` delete from npm's cache: regenerated on
/// demand, so a write of the cache rather than a danger.
fn npm_cache_check(r: &mut Reading<'_>) {
    let dir = r.value("cache").unwrap_or("~/.npm/_cacache").to_string();
    let at = word_of(r, &["clean", "clear", "rm", "verify"]);
    r.add(Effect::Writes(dir), Span::one(at));
}

// ── npx ──────────────────────────────────────────────────────────────────────────────

const NPX: Profile = Profile {
    names: &["npx"],
    syntax: Syntax::GnuInOrder,
    options: &[
        "-v, --version",
        "-h, --help",
        "-y, --yes",
        "--no-install",
        "-q, --quiet",
        "-s, --silent",
        "--loglevel=LEVEL",
        "-p, --package=PACKAGE  code: installs and runs PACKAGE",
        "-c, --call=COMMAND  runs: runs COMMAND in a shell",
        "--shell=SHELL  runs: runs SHELL",
        "--script-shell=SHELL  runs: runs SHELL",
        "--node-options=OPTIONS  code: passes options to node (`--require` loads any file)",
        "-w, --workspace=NAME",
        "--workspaces",
        "--include-workspace-root",
        "--prefer-offline",
        "--prefer-online",
        "--offline",
        "--cache=DIR  writes",
        "-C, --prefix=DIR  config: works in another directory",
        "--registry=URL  config: uses another registry",
        "--userconfig=FILE  config: reads another user configuration",
    ],
    operands: &[Role::Code("runs (installing it if missing) the package")],
    rest: Passthrough,
    check: Some(npx_check),
    config: Some(&NPM_CONFIG),
    helpers: NPM_HELPERS,
    keeps: NPM_KEEPS,
    ..BASE
};

fn npx_check(r: &mut Reading<'_>) {
    nopt_check(r, "npx", NPM_WORD_SHORTHANDS);
    if r.operands.is_empty()
        && !["call", "package", "version", "help"]
            .iter()
            .any(|k| r.has(k))
    {
        let at = r.to_end(0);
        r.add(
            Effect::Code("`npx` without a package starts an interactive shell".into()),
            at,
        );
    }
}

// ── yarn ─────────────────────────────────────────────────────────────────────────────

/// Yarn 1's and Yarn 2+'s commands: a word that is one of them is not a script name.
const YARN_COMMANDS: &[&str] = &[
    "access",
    "add",
    "audit",
    "autoclean",
    "bin",
    "cache",
    "check",
    "config",
    "constraints",
    "create",
    "dedupe",
    "dlx",
    "exec",
    "explain",
    "generate-lock-entry",
    "generateLockEntry",
    "global",
    "help",
    "import",
    "info",
    "init",
    "install",
    "licenses",
    "link",
    "list",
    "lockfile",
    "login",
    "logout",
    "node",
    "npm",
    "outdated",
    "owner",
    "pack",
    "patch",
    "patch-commit",
    "plugin",
    "policies",
    "prune",
    "publish",
    "rebuild",
    "remove",
    "run",
    "search",
    "set",
    "stage",
    "tag",
    "team",
    "unlink",
    "unplug",
    "up",
    "upgrade",
    "upgrade-interactive",
    "upgradeInteractive",
    "version",
    "versions",
    "why",
    "workspace",
    "workspaces",
];

/// yarn's subcommands keep its global options (`inherit`).
const YARN_SUB: Profile = Profile {
    syntax: Syntax::Clap,
    inherit: true,
    ..BASE
};

const YARN: Profile = Profile {
    names: &["yarn", "yarnpkg"],
    syntax: Syntax::GnuInOrder,
    options: &[
        "-v, --version",
        "-h, --help",
        "--cwd=DIR  config: works in another directory",
        "-s, --silent",
        "--verbose",
        "--json",
        "--no-progress",
        "--non-interactive",
        "--offline",
        "--prefer-offline",
        "--ignore-scripts",
        "--ignore-engines",
        "--ignore-optional",
        "--ignore-platform",
        "--frozen-lockfile",
        "--pure-lockfile",
        "--no-lockfile",
        "--force",
        "--check-files",
        "--skip-integrity-check",
        "--network-timeout=MS",
        "--network-concurrency=N",
        "--registry=URL  config: uses another registry",
        "--use-yarnrc=FILE  config: reads another yarnrc",
        "--no-default-rc  config: ignores the yarnrc and npmrc files",
        "--modules-folder=DIR  writes",
        "--cache-folder=DIR  writes",
        "--preferred-cache-folder=DIR  writes",
        "--global-folder=DIR  writes",
        "--link-folder=DIR  writes",
        "--mutex=MUTEX  config: coordinates with other yarn processes through a file or port",
        "--proxy=URL  config: sends requests through a proxy",
        "--https-proxy=URL  config: sends requests through a proxy",
        "--otp=CODE",
    ],
    operands: &[Role::Project(
        "runs the package script or dependency binary",
    )],
    rest: Passthrough,
    subcommands: &[
        &Profile {
            names: &["install"],
            options: &[
                "--immutable",
                "--immutable-cache",
                "--check-cache",
                "--refresh-lockfile",
                "--inline-builds",
                "--mode=MODE",
            ],
            does: Does::Project(INSTALLS_DECLARED),
            ..YARN_SUB
        },
        &Profile {
            names: &["add"],
            options: &[
                "-D, --dev",
                "-P, --peer",
                "-O, --optional",
                "-E, --exact",
                "-T, --tilde",
                "-C, --caret",
                "-W, --ignore-workspace-root-check",
                "--cached",
                "--prefer-dev",
                "--mode=MODE",
            ],
            rest: INSTALLS_NAMED,
            ..YARN_SUB
        },
        &Profile {
            names: &["remove"],
            options: &[
                "-W, --ignore-workspace-root-check",
                "-A, --all",
                "--mode=MODE",
            ],
            rest: Text,
            does: Does::Danger("removes packages from package.json and node_modules"),
            ..YARN_SUB
        },
        &Profile {
            names: &["run"],
            syntax: Syntax::GnuInOrder,
            options: &["-T, --top-level", "-B, --binaries-only"],
            operands: &[Role::Project(
                "runs the package script or dependency binary",
            )],
            rest: Passthrough,
            ..YARN_SUB
        },
        &Profile {
            names: &["exec"],
            syntax: Syntax::Operands,
            operands: &[Role::Code("runs the command")],
            rest: Passthrough,
            ..YARN_SUB
        },
        &Profile {
            names: &["node"],
            syntax: Syntax::Operands,
            rest: Passthrough,
            does: Does::Code("runs node with the words that follow"),
            ..YARN_SUB
        },
        &Profile {
            names: &["dlx"],
            syntax: Syntax::GnuInOrder,
            options: &[
                "-p, --package=PACKAGE  code: installs and runs PACKAGE",
                "-q, --quiet",
            ],
            operands: &[Role::Code("installs and runs the package")],
            rest: Passthrough,
            ..YARN_SUB
        },
        &Profile {
            names: &["create"],
            syntax: Syntax::GnuInOrder,
            operands: &[Role::Code(
                "installs and runs the initializer package (`create-…`) for",
            )],
            rest: Passthrough,
            ..YARN_SUB
        },
        &Profile {
            names: &["why"],
            options: &["-R, --recursive", "--peers"],
            rest: Text,
            ..YARN_SUB
        },
        &Profile {
            names: &["list"],
            options: &["--depth=N", "--pattern=PATTERN"],
            ..YARN_SUB
        },
        &Profile {
            names: &["info"],
            rest: Text,
            does: Does::Net("asks the registry about a package"),
            ..YARN_SUB
        },
        &Profile {
            names: &["outdated", "audit"],
            rest: Text,
            does: Does::Net("asks the registry about the dependencies"),
            ..YARN_SUB
        },
        &Profile {
            names: &["upgrade", "up"],
            options: &[
                "-L, --latest",
                "-E, --exact",
                "-T, --tilde",
                "-C, --caret",
                "--mode=MODE",
            ],
            rest: Text,
            does: Does::Project("updates the declared dependencies, running their install scripts"),
            ..YARN_SUB
        },
        &Profile {
            names: &["init"],
            options: &["-y, --yes", "-p, --private"],
            does: Does::Repo("writes package.json"),
            ..YARN_SUB
        },
        &Profile {
            names: &["pack"],
            options: &[
                "-f, --filename=FILE  writes",
                "-o, --out=FILE  writes",
                "-n, --dry-run",
            ],
            does: Does::Project("packs the package, running its prepack scripts"),
            ..YARN_SUB
        },
        &Profile {
            names: &["publish"],
            rest: PUBLISHES_OTHER,
            does: Does::Net(
                "publishes the package to the registry (running its prepublish scripts)",
            ),
            ..YARN_SUB
        },
        &Profile {
            names: &["link", "unlink"],
            rest: Text,
            does: Does::Config("links packages through yarn's global link folder"),
            ..YARN_SUB
        },
        &Profile {
            names: &["cache"],
            subcommands: &[
                &Profile {
                    names: &["dir", "list", "ls"],
                    options: &["--pattern=PATTERN"],
                    ..YARN_SUB
                },
                &Profile {
                    names: &["clean"],
                    options: &["--all", "--mirror"],
                    rest: Text,
                    does: Does::Config("deletes yarn's package cache"),
                    ..YARN_SUB
                },
            ],
            ..YARN_SUB
        },
        &Profile {
            names: &["config"],
            subcommands: &[
                &Profile {
                    names: &["get", "list"],
                    rest: Text,
                    does: Does::Env("prints configuration, which may hold registry tokens"),
                    ..YARN_SUB
                },
                &Profile {
                    names: &["set", "delete", "unset"],
                    options: &["-g, --global  config: changes the user's configuration"],
                    rest: Text,
                    does: Does::Config("changes yarn's configuration"),
                    ..YARN_SUB
                },
            ],
            ..YARN_SUB
        },
        &Profile {
            names: &["global"],
            subcommands: &[
                &Profile {
                    names: &["add", "upgrade"],
                    rest: Role::Code(
                        "installs globally (running its install scripts, adding its commands to PATH) the package",
                    ),
                    ..YARN_SUB
                },
                &Profile {
                    names: &["remove"],
                    rest: Text,
                    does: Does::Danger("removes globally installed packages"),
                    ..YARN_SUB
                },
                &Profile {
                    names: &["list", "ls", "bin", "dir"],
                    ..YARN_SUB
                },
            ],
            ..YARN_SUB
        },
    ],
    check: Some(yarn_check),
    config: Some(&YARN_CONFIG),
    ..BASE
};

/// yarn: the release the project pins, bare `yarn` installing, and command words that
/// are not script names.
fn yarn_check(r: &mut Reading<'_>) {
    r.add(
        Effect::Project(
            "yarn runs the Yarn release the project's .yarnrc or .yarnrc.yml names (yarnPath), for every command"
                .into(),
        ),
        Span::one(0),
    );
    if r.path.is_empty() {
        match r.operands.first() {
            Some(&(i, w)) if YARN_COMMANDS.contains(&w) => {
                r.unknown(
                    i,
                    format!("`yarn {w}` is a yarn command execgate does not profile"),
                );
                r.set_roles(&[], Passthrough);
            }
            Some(_) => {}
            None if !r.has("version") && !r.has("help") && !r.stopped => r.add(
                Effect::Project(format!("`yarn` alone {INSTALLS_DECLARED}")),
                Span::one(0),
            ),
            None => {}
        }
    }
}

// ── pnpm ─────────────────────────────────────────────────────────────────────────────

/// pnpm's commands, its aliases and the npm commands it hands to npm: a word that is
/// one of them is not a script name.
const PNPM_COMMANDS: &[&str] = &[
    "access",
    "add",
    "adduser",
    "approve-builds",
    "audit",
    "bin",
    "bugs",
    "c",
    "cache",
    "cat-file",
    "cat-index",
    "catalog",
    "completion",
    "config",
    "create",
    "dedupe",
    "deploy",
    "deprecate",
    "dist-tag",
    "dlx",
    "docs",
    "doctor",
    "edit",
    "env",
    "exec",
    "fetch",
    "find-hash",
    "get",
    "help",
    "i",
    "ignored-builds",
    "import",
    "info",
    "init",
    "install",
    "install-test",
    "it",
    "la",
    "licenses",
    "link",
    "list",
    "ll",
    "ln",
    "login",
    "logout",
    "ls",
    "m",
    "multi",
    "outdated",
    "owner",
    "pack",
    "patch",
    "patch-commit",
    "patch-remove",
    "ping",
    "pkg",
    "pm",
    "prefix",
    "profile",
    "prune",
    "publish",
    "rb",
    "rebuild",
    "recursive",
    "remove",
    "repo",
    "restart",
    "rm",
    "root",
    "run",
    "run-script",
    "runtime",
    "s",
    "sbom",
    "search",
    "self-update",
    "server",
    "set",
    "set-script",
    "setup",
    "show",
    "star",
    "stars",
    "start",
    "stop",
    "store",
    "t",
    "team",
    "test",
    "token",
    "tst",
    "un",
    "uninstall",
    "unlink",
    "unpublish",
    "unstar",
    "up",
    "update",
    "upgrade",
    "version",
    "view",
    "whoami",
    "why",
    "xmas",
];

/// pnpm's subcommands keep its options (`inherit`) and read their own as nopt does.
const PNPM_SUB: Profile = Profile {
    syntax: Syntax::Npm,
    inherit: true,
    ..BASE
};

const PNPM: Profile = Profile {
    names: &["pnpm"],
    syntax: Syntax::GnuInOrder,
    options: &[
        "-v, --version",
        "-h, --help",
        "-C, --dir=DIR  config: works in another directory",
        "-w, --workspace-root  config: works in the workspace's root",
        "-r, --recursive",
        "--filter=SELECTOR",
        "--filter-prod=SELECTOR",
        "-g, --global  config: works on the global packages (on PATH) instead of the project",
        "--registry=URL  config: uses another registry",
        "-s, --silent",
        "--reporter=NAME",
        "--loglevel=LEVEL",
        "--no-color",
        "--stream",
        "--aggregate-output",
        "--parallel",
        "--workspace-concurrency=N",
        "--if-present",
        "--offline",
        "--prefer-offline",
        "--frozen-lockfile",
        "--no-frozen-lockfile",
        "--lockfile-only",
        "--fix-lockfile",
        "--ignore-scripts",
        "--force",
        "--no-optional",
        "--ignore-workspace",
        "--store-dir=DIR  writes",
        "--virtual-store-dir=DIR  writes",
        "--modules-dir=DIR  writes",
        "--lockfile-dir=DIR  config: uses the lockfile of another directory",
        "--pnpmfile=FILE  code: runs FILE's hooks",
        "--global-pnpmfile=FILE  code: runs FILE's hooks",
        "--ignore-pnpmfile",
    ],
    operands: &[Role::Project("runs the package script")],
    rest: Passthrough,
    subcommands: &[
        &Profile {
            names: &["install", "i"],
            options: &["-P, --prod", "-D, --dev"],
            rest: INSTALLS_NAMED,
            does: Does::Project(INSTALLS_DECLARED),
            ..PNPM_SUB
        },
        &Profile {
            names: &["add"],
            options: PNPM_SAVE,
            rest: INSTALLS_NAMED,
            ..PNPM_SUB
        },
        &Profile {
            names: &["remove", "rm", "uninstall", "un"],
            options: PNPM_SAVE,
            rest: Text,
            does: Does::Danger("removes packages from node_modules and package.json"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["prune"],
            options: &["--prod", "--no-optional"],
            does: Does::Danger("removes installed packages package.json does not list"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["update", "up", "upgrade"],
            options: &["-L, --latest", "-P, --prod", "-D, --dev", "--depth=N"],
            rest: Text,
            does: Does::Project("updates the declared dependencies, running their install scripts"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["run", "run-script"],
            syntax: Syntax::GnuInOrder,
            options: &[
                "--no-bail",
                "--sequential",
                "--resume-from=PACKAGE",
                "--report-summary",
            ],
            operands: &[Role::Project("runs the package script")],
            rest: Passthrough,
            ..PNPM_SUB
        },
        &Profile {
            names: &["test", "t", "tst"],
            rest: Passthrough,
            does: Does::Project("runs the package's test script"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["start"],
            rest: Passthrough,
            does: Does::Project("runs the package's start script"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["install-test", "it"],
            does: Does::Project("installs the declared dependencies and runs the test script"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["rebuild", "rb"],
            rest: Text,
            does: Does::Project("reruns the installed packages' build scripts"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["dedupe"],
            does: Does::Project(
                "reinstalls the declared dependencies, running their install scripts",
            ),
            ..PNPM_SUB
        },
        &Profile {
            names: &["exec"],
            syntax: Syntax::Operands,
            operands: &[Role::Code("runs the command")],
            rest: Passthrough,
            ..PNPM_SUB
        },
        &Profile {
            names: &["dlx"],
            syntax: Syntax::GnuInOrder,
            options: &[
                "--package=PACKAGE  code: installs and runs PACKAGE",
                "-c, --shell-mode  code: runs the command in a shell",
                "--allow-build=PACKAGE",
            ],
            operands: &[Role::Code("installs and runs the package")],
            rest: Passthrough,
            ..PNPM_SUB
        },
        &Profile {
            names: &["create"],
            syntax: Syntax::Operands,
            operands: &[Role::Code(
                "installs and runs the initializer package (`create-…`) for",
            )],
            rest: Passthrough,
            ..PNPM_SUB
        },
        &Profile {
            names: &["list", "ls", "ll", "la"],
            options: &[
                "--depth=N",
                "--long",
                "--json",
                "--parseable",
                "-P, --prod",
                "-D, --dev",
            ],
            rest: Text,
            ..PNPM_SUB
        },
        &Profile {
            names: &["why"],
            options: &["--json", "--long", "--parseable", "-P, --prod", "-D, --dev"],
            rest: Text,
            ..PNPM_SUB
        },
        &Profile {
            names: &["root", "bin"],
            ..PNPM_SUB
        },
        &Profile {
            names: &["help"],
            rest: Text,
            ..PNPM_SUB
        },
        &Profile {
            names: &["outdated"],
            options: &["--long", "--json", "-P, --prod", "-D, --dev"],
            rest: Text,
            does: Does::Net("asks the registry for newer versions"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["audit"],
            options: &[
                "--fix  repo: writes overrides into package.json",
                "--json",
                "--audit-level=LEVEL",
                "-P, --prod",
                "-D, --dev",
                "--ignore-registry-errors",
            ],
            does: Does::Net("sends the dependency tree to the registry"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["fetch"],
            options: &["-P, --prod", "-D, --dev"],
            does: Does::Net("fetches the lockfile's packages into the store"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["pack"],
            options: &["--pack-destination=DIR  writes"],
            does: Does::Project("packs the package, running its prepack scripts"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["publish"],
            options: &[
                "--tag=TAG",
                "--access=ACCESS",
                "--no-git-checks",
                "--dry-run",
                "--otp=CODE",
            ],
            rest: PUBLISHES_OTHER,
            does: Does::Net(
                "publishes the package to the registry (running its prepublish scripts)",
            ),
            ..PNPM_SUB
        },
        &Profile {
            names: &["init"],
            does: Does::Repo("writes package.json"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["link", "ln", "unlink"],
            rest: Text,
            does: Does::Config("links packages through the global folder"),
            ..PNPM_SUB
        },
        &Profile {
            names: &["config", "c"],
            options: &[
                "--json",
                "--location=LOCATION  config: chooses which configuration file",
            ],
            subcommands: &[
                &Profile {
                    names: &["get", "list"],
                    rest: Text,
                    does: Does::Env("prints configuration, which may hold registry tokens"),
                    ..PNPM_SUB
                },
                &Profile {
                    names: &["set", "delete"],
                    rest: Text,
                    does: Does::Config("changes pnpm's configuration"),
                    ..PNPM_SUB
                },
            ],
            ..PNPM_SUB
        },
        &Profile {
            names: &["store"],
            subcommands: &[
                &Profile {
                    names: &["path", "status"],
                    ..PNPM_SUB
                },
                &Profile {
                    names: &["add"],
                    rest: Text,
                    does: Does::Net("fetches packages into the store"),
                    ..PNPM_SUB
                },
                &Profile {
                    names: &["prune"],
                    does: Does::Config("deletes unreferenced packages from pnpm's store"),
                    ..PNPM_SUB
                },
            ],
            ..PNPM_SUB
        },
    ],
    check: Some(pnpm_check),
    config: Some(&PNPM_CONFIG),
    ..BASE
};

const PNPM_SAVE: &[&str] = &[
    "-D, --save-dev",
    "-P, --save-prod",
    "-O, --save-optional",
    "-E, --save-exact",
    "--save-peer",
    "--global-dir=DIR  writes",
];

/// pnpm: the version package.json pins, nopt's quirks, and command words that are not
/// script names.
fn pnpm_check(r: &mut Reading<'_>) {
    r.add(
        Effect::Project(
            "pnpm switches to (downloading) the pnpm version package.json's packageManager names"
                .into(),
        ),
        Span::one(0),
    );
    nopt_check(r, "pnpm", &[]);
    if r.path.is_empty()
        && let Some(&(i, w)) = r.operands.first()
        && PNPM_COMMANDS.contains(&w)
    {
        r.unknown(
            i,
            format!("`pnpm {w}` is a pnpm command execgate does not profile"),
        );
        r.set_roles(&[], Passthrough);
    }
}

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::testing::{Table, assert_refused, covered, dangerous, read, said};

    use super::npm_deref;

    /// Harmless.
    const HARMLESS: &[&str] = &[
        "npm ls",
        "npm ls --all --json",
        "npm list -a",
        "npm ls react",
        "npm --version",
        "npm -v",
        "npm",
        "npm help install",
        "npm explain react",
        "npm why react",
        "npm prefix",
        "npm root",
        "npm cache ls",
        "npm pkg get name",
        "npm run",
        "npx --version",
    ];

    /// Not harmless.
    const NOT_HARMLESS: &[&str] = &[
        "npm test",
        "npm ci",
        "npm outdated",
        "npm view react",
        "npm config list",
        "npm config get //registry.npmjs.org/:_authToken",
        "npm token list",
        "npm ls -g",
        "yarn --version",
        "yarn why react",
        "pnpm --version",
        "pnpm ls",
    ];

    /// Approved by a glob whose first so many words are written out.
    const COVERED: &[(&str, usize)] = &[
        ("npm test", 1),
        ("npm t", 1),
        ("npm run build", 1),
        ("npm run build -- --prod", 1),
        ("npm test -- --watch", 1),
        ("npm ci", 1),
        ("npm install", 1),
        ("npm i --no-audit --no-fund", 1),
        ("npm run lint --if-present", 1),
        ("npm -w packages/a test", 1),
        ("npm test --silent", 1),
        ("npm test -ws", 1),
        ("npm run build -ws --if-present", 1),
        ("npm outdated", 1),
        ("npx prettier --write .", 2),
        ("npx -y prettier --check src", 3),
        ("yarn", 1),
        ("yarn install --frozen-lockfile", 1),
        ("yarn build", 1),
        ("yarn build --prod --out-dir /tmp", 1),
        ("yarn test --watch", 1),
        ("yarn run lint --fix", 1),
        ("yarn --cwd . build", 3),
        ("pnpm install", 1),
        ("pnpm i --frozen-lockfile", 1),
        ("pnpm run build --prod", 1),
        ("pnpm build", 1),
        ("pnpm -r test", 1),
        ("pnpm test -- --watch", 1),
        ("pnpm --filter web build", 1),
    ];

    /// Refused under a glob naming only the program, and a phrase the reasons must contain.
    const REFUSED: &[(&str, &str)] = &[
        ("npm --prefix /tmp/x test", "works in another directory"),
        ("npm -C /tmp/x test", "works in another directory"),
        (
            "npm test --script-shell=/tmp/sh",
            "runs package scripts with SHELL",
        ),
        (
            "npm test --node-options=--require=/tmp/x.js",
            "passes options to node",
        ),
        (
            "npm --userconfig /tmp/rc install",
            "reads another user configuration",
        ),
        ("npm test --foo=bar", "configuration setting"),
        ("npm test --watch", "configuration setting"),
        ("npm install --ignore-scr", "configuration setting"),
        ("npm install left-pad", "not declared yet, `left-pad`"),
        ("npm i -D left-pad", "`left-pad`"),
        (
            "npm exec x",
            "runs (installing it if missing) the package `x`",
        ),
        ("npm x -- eslint .", "`eslint`"),
        ("npm exec", "interactive shell"),
        ("npm -g ls", "global packages"),
        ("npm --global install x", "global packages"),
        ("npm install --registry https://evil x", "another registry"),
        ("npm cache clean --force", "writes `~/.npm/_cacache`"),
        ("npm init vite", "initializer package"),
        ("npm publish /tmp/x", "making its files public"),
        ("npm -gf test", "one letter at a time"),
        ("npm -reg x test", "`-r` (in `-reg`)"),
        ("npm install --save-dev false", "takes `false` as the value"),
        ("npm --workspace --prefix=/x test", "rather than the value"),
        ("npm frobnicate", "not a `npm` subcommand"),
        ("npm instal left-pad", "`left-pad`"),
        ("npm config set registry x", "changes npm's configuration"),
        ("npx x", "runs (installing it if missing) the package `x`"),
        ("npx -y", "interactive shell"),
        ("npx -p x y", "installs and runs PACKAGE"),
        ("npx -c 'rm -rf ~'", "runs COMMAND in a shell"),
        ("npx --registry https://evil x", "another registry"),
        ("npx -yq x", "one letter at a time"),
        ("npx --foo x", "not an option"),
        ("yarn add left-pad", "`left-pad`"),
        ("yarn dlx create-x", "installs and runs the package"),
        ("yarn exec rm -rf /", "runs the command `rm`"),
        ("yarn --cwd /tmp/x build", "works in another directory"),
        (
            "yarn workspace a remove x",
            "yarn command execgate does not profile",
        ),
        ("yarn --modules-folder /x build", "writes `/x`"),
        ("pnpm add left-pad", "`left-pad`"),
        ("pnpm install left-pad", "`left-pad`"),
        ("pnpm dlx cowsay", "installs and runs the package `cowsay`"),
        ("pnpm exec eslint", "runs the command `eslint`"),
        ("pnpm -C /tmp/x build", "works in another directory"),
        (
            "pnpm install --config.node-linker=hoisted",
            "configuration setting",
        ),
        ("pnpm m rm x", "pnpm command execgate does not profile"),
        ("pnpm --pnpmfile /tmp/p.cjs install", "hooks"),
        (
            "npm version patch --sign-git-tag",
            "`npm version --sign-git-tag` runs gpg to sign the tag",
        ),
        (
            "npm version patch --sign-git-commit",
            "`npm version --sign-git-commit` runs gpg to sign the commit",
        ),
        (
            "npm exec -c 'eslint .'",
            "`npm exec --call` runs COMMAND in a shell",
        ),
        (
            "npm exec --package=cowsay -- cowsay hi",
            "`npm exec --package` installs and runs PACKAGE",
        ),
        (
            "npm explore react --shell=/tmp/sh",
            "`npm explore --shell` runs SHELL",
        ),
        (
            "npm install --node-gyp=/tmp/gyp",
            "`npm install --node-gyp` builds native modules with PATH",
        ),
        (
            "npm install --git=/tmp/git",
            "`npm install --git` runs PATH as git",
        ),
        (
            "npm edit react --editor=/tmp/ed",
            "`npm edit --editor` runs EDITOR",
        ),
        (
            "npm help install --viewer=browser",
            "`npm help --viewer` shows help with VIEWER",
        ),
        (
            "npx --node-options=--require=/tmp/x.js eslint",
            "`npx --node-options` passes options to node",
        ),
        (
            "npx --script-shell=/tmp/sh eslint",
            "`npx --script-shell` runs SHELL",
        ),
        ("npx --shell=/tmp/sh eslint", "`npx --shell` runs SHELL"),
        (
            "yarn dlx -p typescript tsc",
            "`yarn dlx --package` installs and runs PACKAGE",
        ),
        (
            "pnpm dlx --package=typescript tsc",
            "`pnpm dlx --package` installs and runs PACKAGE",
        ),
        (
            "pnpm dlx -c 'echo hi | cowsay'",
            "`pnpm dlx --shell-mode` runs the command in a shell",
        ),
        (
            "pnpm --global-pnpmfile /tmp/p.cjs install",
            "`pnpm --global-pnpmfile` runs FILE's hooks",
        ),
    ];

    /// Dangerous, however the command is spelled.
    const DANGEROUS: &[&str] = &[
        "npm uninstall x",
        "npm un x",
        "npm unlink x",
        "npm remove x",
        "npm rm x",
        "npm r x",
        "npm --prefix . rm x",
        "npm -g un x",
        "npm --json uninstall x",
        "npm uninst x",
        "npm unins x",
        "npm prune",
        "npm unpublish x@1.0.0",
        "yarn remove x",
        "yarn --silent remove x",
        "yarn global remove x",
        "pnpm rm x",
        "pnpm remove x",
        "pnpm un x",
        "pnpm uninstall x",
        "pnpm -r remove x",
        "pnpm prune",
    ];

    /// Not dangerous.
    const NOT_DANGEROUS: &[&str] = &[
        "npm install",
        "npm cache clean --force",
        "npm run rm",
        "yarn rm",
        "pnpm test",
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[
        &HARMLESS,
        &NOT_HARMLESS,
        &COVERED,
        &REFUSED,
        &DANGEROUS,
        &NOT_DANGEROUS,
    ];

    #[test]
    fn npm_listing_is_harmless() {
        for &c in HARMLESS {
            assert!(read(c).harmless(), "{c:?} should be harmless: {}", said(c));
        }
        for &c in NOT_HARMLESS {
            assert!(!read(c).harmless(), "{c:?} must not be harmless");
        }
    }

    #[test]
    fn globs_cover_the_projects_scripts_and_declared_dependencies() {
        for &(c, literal) in COVERED {
            assert!(
                covered(c, literal),
                "{c:?} under {literal} literal words: {}",
                said(c)
            );
        }
    }

    #[test]
    fn globs_refuse_code_and_configuration() {
        for &(c, what) in REFUSED {
            assert_refused(c, what);
        }
        // Under a rule that names the package, its own words are the package's.
        assert!(covered("npx prettier --write --config /tmp/x .", 2));
        assert!(!covered("npx prettier --write .", 1));
    }

    #[test]
    fn removing_packages_is_dangerous_whatever_comes_first() {
        for &c in DANGEROUS {
            assert!(dangerous(c), "{c:?}: {}", said(c));
        }
        for &c in NOT_DANGEROUS {
            assert!(!dangerous(c), "{c:?}: {}", said(c));
        }
    }

    #[test]
    fn npm_reads_commands_as_npm_does() {
        assert_eq!(npm_deref("uninst"), Some("uninstall"));
        assert_eq!(npm_deref("rm"), Some("uninstall"));
        assert_eq!(npm_deref("unl"), Some("uninstall"));
        assert_eq!(npm_deref("installTest"), Some("install-test"));
        assert_eq!(npm_deref("inst"), Some("install"), "a manual alias");
        assert_eq!(npm_deref("un"), Some("uninstall"));
        assert_eq!(npm_deref("ex"), None, "exec, explain, explore");
        assert_eq!(npm_deref("frobnicate"), None);
    }
}
