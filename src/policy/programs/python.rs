//! Python (CPython 3.11's own command line) and pip (23.2). Option lines follow the
//! installed `python3 --help` and `pip SUB --help`.
//!
//! CPython reads its options with its own getopt (Python/getopt.c): clustered short
//! options (`-Bc CODE`, `-cCODE`), a handful of long options matched exactly (`--vers`
//! is an error), and the options end at `-c CMD`, at `-m MODULE` and at the first operand
//! (the script, or `-` for standard input): every later word is the program's
//! (`sys.argv`). So the profile reads in POSIX order, and `-c`/`-m` end the options. What
//! runs is code named on the command line (`-c`, a script, a module, standard input),
//! except the project's own tests (`-m pytest`, `-m unittest`). `-m` looks the module up
//! in the working directory first (unless `-P` or `-I`): `python -m pip` runs a `pip.py`
//! there. `python -m pip …` is read with pip's own profile.
//!
//! pip parses with Python's optparse: the general options before the subcommand (the
//! first operand names it), then the subcommand's options and the general ones again,
//! anywhere (permuted), with any unambiguous abbreviation of a long option accepted
//! (`pip install --upg` is `--upgrade`): read as getopt_long, so abbreviations are found
//! and never approved. Installing the project (`pip install -e .`) or the requirements
//! file it keeps (`-r requirements.txt`) is the project's code; installing a package
//! named on the command line runs that package's build and install code. Removal
//! (`uninstall`) is a danger.

use super::profile::Role::{Passthrough, Read, Text};
use super::profile::{
    BASE, Config, ConfigFile, Effect, Judge, Place, Profile, Reading, Span, Syntax, join, total,
};
use super::spec::Does;

pub const PROFILES: &[&Profile] = &[&PYTHON, &PIP];

// ── python ───────────────────────────────────────────────────────────────────────────

const PYTHON: Profile = Profile {
    names: &[
        "python",
        "python3",
        "python3.6",
        "python3.7",
        "python3.8",
        "python3.9",
        "python3.10",
        "python3.11",
        "python3.12",
        "python3.13",
        "python3.14",
    ],
    syntax: Syntax::GnuInOrder,
    options: &[
        "-b",
        "-B",
        "-c CMD ...  code: runs the program given as CMD",
        "-d",
        "-E",
        "-h, -?, --help",
        "-i  code: reads further code from standard input (interactive)",
        "-I",
        "-m MODULE ...",
        "-O",
        "-P",
        "-q",
        "-s",
        "-S",
        "-u",
        "-v",
        "-V, --version",
        "-W ARG",
        "-x",
        "-X OPT",
        "--check-hash-based-pycs=MODE",
        "--help-env",
        "--help-xoptions",
        "--help-all",
    ],
    rest: Passthrough,
    decides_code: true,
    check: Some(python_check),
    config: Some(&PYTHON_CONFIG),
    ..BASE
};

/// Python reads no configuration file of its own that an agent writes (the working
/// directory it imports from is its profile's: `-m`, `-P`); its environment adds code.
const PYTHON_CONFIG: Config = Config {
    files: &[],
    env: "`PYTHONPATH` (modules imported before the standard library's), `PYTHONHOME`, `PYTHONSTARTUP` (run by an interactive interpreter), `PYTHONSAFEPATH`",
    run_env: &[],
};

/// Modules that run the project's own tests.
const TEST_RUNNERS: &[&str] = &["pytest", "py.test", "unittest"];

/// Whether `words` (a glob's written-out words) fix what Python runs: `python -m
/// pytest` (or another of the project's test runners), and nothing a later word could
/// change into other code (`python -m pip` installs, `python -c` runs anything).
pub(super) fn runs_a_test_runner(words: &[String]) -> bool {
    match words {
        [python, m, module] => {
            super::is_python(python) && m == "-m" && TEST_RUNNERS.contains(&module.as_str())
        }
        _ => false,
    }
}

/// What a word of pytest's own command line does beyond running the project's tests, if
/// anything: `--basetemp DIR` empties DIR first; `-c`/`--config-file`, `--rootdir`,
/// `--confcutdir`, `-o`/`--override-ini` and `--inifile` change which configuration (and
/// so which files and options) it takes. pytest's argparse takes an unambiguous prefix
/// of a long option, so any prefix of those is read as it (`--basete=/home/u`).
fn pytest_option(word: &str) -> Option<Effect> {
    const DELETES: &[&str] = &["--basetemp"];
    const CONFIG: &[&str] = &[
        "--config-file",
        "--rootdir",
        "--confcutdir",
        "--override-ini",
        "--inifile",
    ];
    let name = word.split('=').next().unwrap_or(word);
    let abbreviates = |long: &&str| name.len() > 3 && long.starts_with(name);
    if name.starts_with("--") {
        if DELETES.iter().any(abbreviates) {
            return Some(Effect::Danger(format!(
                "`{word}`: pytest removes the directory `--basetemp` names before the run"
            )));
        }
        if CONFIG.iter().any(abbreviates) {
            return Some(Effect::Config(format!(
                "`{word}` gives pytest another configuration or root"
            )));
        }
    } else if word.starts_with("-c") || word.starts_with("-o") {
        return Some(Effect::Config(format!(
            "`{word}` gives pytest another configuration file or setting"
        )));
    }
    None
}

/// `-X` options CPython knows that only change how it runs.
const X_OPTIONS: &[&str] = &[
    "faulthandler",
    "showrefcount",
    "tracemalloc",
    "importtime",
    "dev",
    "utf8",
    "warn_default_encoding",
    "no_debug_ranges",
    "frozen_modules",
    "int_max_str_digits",
    "perf",
    "cpu_count",
];

/// What runs: `-c`, `-m`, a script, or standard input; and `-W`/`-X` values.
fn python_check(r: &mut Reading<'_>) {
    // CPython matches its few long options exactly: a prefix is an error, not an
    // abbreviation (the reader, reading in POSIX order as getopt_long, calls it one).
    for f in &mut r.findings {
        if let Effect::Unknown(why) = &f.effect
            && why.contains("abbreviates")
        {
            let word = r.words[f.at.first].clone();
            f.effect = Effect::Unknown(format!(
                "`{word}` is not an option CPython knows (it takes long options only written out in full)"
            ));
        }
    }
    let mut found: Vec<(Effect, Span)> = Vec::new();
    for g in &r.given {
        let v = g.value.unwrap_or("");
        match g.opt.key() {
            // action:message:category:module:lineno; a dotted category is imported.
            "W" if v.split(':').nth(2).is_some_and(|c| c.contains('.')) => found.push((
                Effect::Code(format!(
                    "`-W {v}` imports the module its warning category names"
                )),
                g.at,
            )),
            "X" => {
                let (name, value) = v.split_once('=').unwrap_or((v, ""));
                if name == "pycache_prefix" {
                    found.push((Effect::Writes(value.to_string()), g.at));
                } else if !X_OPTIONS.contains(&name) {
                    found.push((
                        Effect::Unknown(format!("`-X {v}` is not an -X option execgate knows")),
                        g.at,
                    ));
                }
            }
            _ => {}
        }
    }
    for (effect, at) in found {
        r.add(effect, at);
    }
    let safe_path = r.has("P") || r.has("I");
    if let Some(g) = r.given_of("m").cloned() {
        let module = g.value.unwrap_or("");
        if TEST_RUNNERS.contains(&module) {
            r.add(
                Effect::Project(format!("`-m {module}` runs the project's tests")),
                g.at,
            );
            if module != "unittest" {
                let at = g.at.last;
                for (i, word) in r.words[at + 1..].to_vec().iter().enumerate() {
                    if let Some(effect) = pytest_option(word) {
                        r.add(effect, Span::one(at + 1 + i));
                    }
                }
            }
        } else if module == "pip" {
            if !safe_path {
                r.add(
                    Effect::Project(
                        "`-m pip` imports `pip` from the working directory first (a `pip` there would run)"
                            .into(),
                    ),
                    g.at,
                );
            }
            // The rest is pip's: read it with pip's profile, word 0 being `pip`.
            let at = g.at.last;
            let mut words = vec!["pip".to_string()];
            words.extend(r.words[at + 1..].iter().cloned());
            let pip = r.understand_other(&words);
            for f in pip.findings {
                r.add(f.effect, f.at.moved(|i| i + at));
            }
        } else {
            r.add(
                Effect::Code(format!("`-m {module}` runs the module `{module}`")),
                g.at,
            );
        }
    } else if r.has("c") {
        // The option line says it.
    } else if let Some(&(i, w)) = r.operands.first() {
        let what = if w == "-" {
            "`python -` reads its program from standard input".to_string()
        } else {
            format!("runs the script `{w}`")
        };
        r.add(Effect::Code(what), Span::one(i));
    } else if !["version", "help", "help-env", "help-xoptions", "help-all"]
        .iter()
        .any(|k| r.has(k))
    {
        // To the end: a rule's wildcard must not cover the options that leave no program.
        let at = r.to_end(0);
        r.add(
            Effect::Code(
                "`python` without a program reads one from standard input (the interactive interpreter)"
                    .into(),
            ),
            at,
        );
    }
    r.set_roles(&[], Passthrough);
}

// ── pip ──────────────────────────────────────────────────────────────────────────────

/// pip's general options: before the subcommand, and again among its options.
const GENERAL: &[&str] = &[
    "-h, --help",
    "--debug",
    "--isolated",
    "--require-virtualenv",
    "--python=PYTHON  runs: runs pip with the Python interpreter PYTHON",
    "-v, --verbose",
    "-V, --version",
    "-q, --quiet",
    "--log=PATH  writes",
    "--no-input",
    "--keyring-provider=PROVIDER  code: looks credentials up with the keyring library or program",
    "--proxy=PROXY  config: sends pip's requests through a proxy",
    "--retries=RETRIES",
    "--timeout=SEC",
    "--exists-action=ACTION  config: decides what pip does with paths that exist (w: wipes them)",
    "--trusted-host=HOSTNAME  config: trusts a host without valid HTTPS",
    "--cert=PATH  config: trusts another CA bundle",
    "--client-cert=PATH  reads",
    "--cache-dir=DIR  writes",
    "--no-cache-dir",
    "--disable-pip-version-check",
    "--no-color",
    "--no-python-version-warning",
    "--use-feature=FEATURE  config: turns on new pip behaviour",
    "--use-deprecated=FEATURE  config: turns on deprecated pip behaviour",
];

/// Where packages come from.
const INDEX: &[&str] = &[
    "-i, --index-url=URL  config: uses another package index",
    "--extra-index-url=URL  config: adds a package index",
    "--no-index",
    "-f, --find-links=URL  config: looks for packages at URL",
];

/// What selects and builds distributions (`install`, `download`, `wheel`).
const BUILDING: &[&str] = &[
    "-r, --requirement=FILE  reads",
    "-c, --constraint=FILE  reads",
    "--no-deps",
    "--pre",
    "-e, --editable=PATH_URL",
    "--src=DIR  writes",
    "--ignore-requires-python",
    "--no-build-isolation",
    "--use-pep517",
    "--no-use-pep517",
    "--check-build-dependencies",
    "-C, --config-settings=SETTINGS  config: passes settings to the build backend",
    "--global-option=OPTIONS  code: passes options to setup.py",
    "--no-binary=FORMAT",
    "--only-binary=FORMAT",
    "--prefer-binary",
    "--require-hashes",
    "--progress-bar=BAR",
    "--no-clean",
];

/// The target platform (`install`, `download`, `index`, `debug`).
const PLATFORM: &[&str] = &[
    "--platform=PLATFORM",
    "--python-version=VERSION",
    "--implementation=IMPL",
    "--abi=ABI",
];

const INSTALL_PARTS: &[&[&str]] = &[
    INDEX,
    BUILDING,
    PLATFORM,
    &[
        "--dry-run",
        "-t, --target=DIR  writes",
        "--user",
        "--root=DIR  writes",
        "--prefix=DIR  writes",
        "-U, --upgrade",
        "--upgrade-strategy=STRATEGY",
        "--force-reinstall",
        "-I, --ignore-installed",
        "--break-system-packages  config: lets pip change an externally managed (system) Python",
        "--compile",
        "--no-compile",
        "--no-warn-script-location",
        "--no-warn-conflicts",
        "--root-user-action=ACTION",
        "--report=FILE  writes",
    ],
];
const INSTALL_OPTIONS: &[&str] = &join::<{ total(INSTALL_PARTS) }>(INSTALL_PARTS);

const DOWNLOAD_PARTS: &[&[&str]] = &[INDEX, BUILDING, PLATFORM, &["-d, --dest=DIR  writes"]];
const DOWNLOAD_OPTIONS: &[&str] = &join::<{ total(DOWNLOAD_PARTS) }>(DOWNLOAD_PARTS);

const WHEEL_PARTS: &[&[&str]] = &[
    INDEX,
    BUILDING,
    &[
        "-w, --wheel-dir=DIR  writes",
        "--no-verify",
        "--build-option=OPTIONS  code: passes options to setup.py",
    ],
];
const WHEEL_OPTIONS: &[&str] = &join::<{ total(WHEEL_PARTS) }>(WHEEL_PARTS);

const LIST_PARTS: &[&[&str]] = &[
    INDEX,
    &[
        "-o, --outdated  net: asks the package index for newer versions",
        "-u, --uptodate  net: asks the package index for newer versions",
        "-e, --editable",
        "-l, --local",
        "--user",
        "--path=PATH  reads",
        "--pre",
        "--format=FORMAT",
        "--not-required",
        "--exclude-editable",
        "--include-editable",
        "--exclude=PACKAGE",
    ],
];
const LIST_OPTIONS: &[&str] = &join::<{ total(LIST_PARTS) }>(LIST_PARTS);

const INDEX_PARTS: &[&[&str]] = &[
    INDEX,
    PLATFORM,
    &[
        "--ignore-requires-python",
        "--pre",
        "--no-binary=FORMAT",
        "--only-binary=FORMAT",
    ],
];
const INDEX_OPTIONS: &[&str] = &join::<{ total(INDEX_PARTS) }>(INDEX_PARTS);

/// pip's subcommands keep the general options (`inherit`).
const PIP_SUB: Profile = Profile {
    syntax: Syntax::Gnu,
    inherit: true,
    ..BASE
};

const PIP_CONFIG_FILES: &[&str] = &[
    "--editor=EDITOR  runs: runs EDITOR",
    "--global",
    "--user",
    "--site",
];

const PIP: Profile = Profile {
    names: &[
        "pip", "pip3", "pip3.8", "pip3.9", "pip3.10", "pip3.11", "pip3.12", "pip3.13", "pip3.14",
    ],
    syntax: Syntax::Gnu,
    options: GENERAL,
    subcommands: &[
        &Profile {
            names: &["install"],
            options: INSTALL_OPTIONS,
            rest: Passthrough,
            check: Some(packages_check),
            ..PIP_SUB
        },
        &Profile {
            names: &["download"],
            options: DOWNLOAD_OPTIONS,
            rest: Passthrough,
            does: Does::Net("downloads packages from the package index"),
            check: Some(packages_check),
            ..PIP_SUB
        },
        &Profile {
            names: &["wheel"],
            options: WHEEL_OPTIONS,
            rest: Passthrough,
            check: Some(packages_check),
            ..PIP_SUB
        },
        &Profile {
            names: &["uninstall"],
            options: &[
                "-r, --requirement=FILE  reads",
                "-y, --yes",
                "--root-user-action=ACTION",
                "--break-system-packages  config: lets pip change an externally managed (system) Python",
            ],
            rest: Text,
            does: Does::Danger("removes installed packages"),
            ..PIP_SUB
        },
        &Profile {
            names: &["list"],
            options: LIST_OPTIONS,
            ..PIP_SUB
        },
        &Profile {
            names: &["show"],
            options: &["-f, --files"],
            rest: Text,
            ..PIP_SUB
        },
        &Profile {
            names: &["freeze"],
            options: &[
                "-r, --requirement=FILE  reads",
                "-l, --local",
                "--user",
                "--path=PATH  reads",
                "--all",
                "--exclude-editable",
                "--exclude=PACKAGE",
            ],
            ..PIP_SUB
        },
        &Profile {
            names: &["check"],
            ..PIP_SUB
        },
        &Profile {
            names: &["inspect"],
            options: &["--local", "--user", "--path=PATH  reads"],
            ..PIP_SUB
        },
        &Profile {
            names: &["debug"],
            options: PLATFORM,
            ..PIP_SUB
        },
        &Profile {
            names: &["hash"],
            options: &["-a, --algorithm=ALGORITHM"],
            rest: Read,
            ..PIP_SUB
        },
        &Profile {
            names: &["help"],
            rest: Text,
            ..PIP_SUB
        },
        &Profile {
            names: &["search"],
            options: &["-i, --index=URL  config: searches another package index"],
            rest: Text,
            does: Does::Net("searches the package index"),
            ..PIP_SUB
        },
        &Profile {
            names: &["index"],
            options: INDEX_OPTIONS,
            subcommands: &[&Profile {
                names: &["versions"],
                options: INDEX_OPTIONS,
                operands: &[Text],
                does: Does::Net("asks the package index for a package's versions"),
                ..PIP_SUB
            }],
            ..PIP_SUB
        },
        &Profile {
            names: &["cache"],
            options: &["--format=FORMAT"],
            subcommands: &[
                &Profile {
                    names: &["dir", "info"],
                    ..PIP_SUB
                },
                &Profile {
                    names: &["list"],
                    options: &["--format=FORMAT"],
                    operands: &[Text],
                    ..PIP_SUB
                },
                &Profile {
                    names: &["remove", "purge"],
                    rest: Text,
                    check: Some(cache_check),
                    ..PIP_SUB
                },
            ],
            ..PIP_SUB
        },
        &Profile {
            names: &["config"],
            options: PIP_CONFIG_FILES,
            subcommands: &[
                &Profile {
                    names: &["list", "debug"],
                    options: PIP_CONFIG_FILES,
                    does: Does::Env("prints pip's configuration, which may hold index credentials"),
                    ..PIP_SUB
                },
                &Profile {
                    names: &["get"],
                    options: PIP_CONFIG_FILES,
                    operands: &[Text],
                    does: Does::Env("prints a setting, which may hold index credentials"),
                    ..PIP_SUB
                },
                &Profile {
                    names: &["set", "unset"],
                    options: PIP_CONFIG_FILES,
                    operands: &[Text, Text],
                    does: Does::Config("changes pip's configuration"),
                    ..PIP_SUB
                },
                &Profile {
                    names: &["edit"],
                    options: PIP_CONFIG_FILES,
                    does: Does::Code("runs an editor on pip's configuration"),
                    ..PIP_SUB
                },
            ],
            ..PIP_SUB
        },
    ],
    check: Some(pip_check),
    config: Some(&PIP_CONFIG),
    ..BASE
};

/// The pip settings that change neither what pip runs, nor what it reads, nor where it
/// writes: timeouts, output, the index it asks (`pip list` asks none), which
/// distributions it prefers. Not `log`, `cache-dir`, `target`, `prefix`, `root`, `src`
/// (where it writes), `cert`, `client-cert`, `find-links`, `requirement`, `constraint`
/// (what it reads), `keyring-provider` (a program it runs), `python`.
const PIP_HARMLESS: &[&str] = &[
    "timeout",
    "default-timeout",
    "retries",
    "disable-pip-version-check",
    "no-input",
    "no-color",
    "progress-bar",
    "quiet",
    "verbose",
    "require-virtualenv",
    "index-url",
    "extra-index-url",
    "trusted-host",
    "no-cache-dir",
    "prefer-binary",
    "only-binary",
    "no-binary",
    "pre",
    "format",
    "root-user-action",
];

const PIP_CONF_WHY: &str = "pip's configuration names where it writes (`log`, `cache-dir`, `target`), what it reads (`find-links`, `cert`) and programs it runs (`keyring-provider`)";

/// pip reads `/etc/pip.conf` (the system's), `~/.config/pip/pip.conf`, `~/.pip/pip.conf`,
/// the environment's `sys.prefix/pip.conf`, and `$PIP_CONFIG_FILE`. A run gets
/// `PIP_CONFIG_FILE=/dev/null`, with which pip reads no file at all.
const PIP_CONFIG: Config = Config {
    files: &[
        ConfigFile {
            name: ".config/pip/pip.conf",
            place: Place::Home,
            judge: Judge::PythonIni(PIP_HARMLESS),
            why: PIP_CONF_WHY,
            neutralised: true,
        },
        ConfigFile {
            name: ".pip/pip.conf",
            place: Place::Home,
            judge: Judge::PythonIni(PIP_HARMLESS),
            why: PIP_CONF_WHY,
            neutralised: true,
        },
    ],
    env: "`PIP_*` (any option, `PIP_CONFIG_FILE` too), `VIRTUAL_ENV`",
    // pip's documented rule, checked with pip 25 (tests/program_config.rs): "if the
    // file is os.devnull, no configuration files are loaded".
    run_env: &[(
        "PIP_CONFIG_FILE",
        "/dev/null",
        "pip reads no configuration file (the system's, the user's, the environment's)",
    )],
};

/// `--exists-action w` wipes what is in the way.
fn pip_check(r: &mut Reading<'_>) {
    let wipes: Vec<Span> = r
        .given
        .iter()
        .filter(|g| g.opt.key() == "exists-action" && g.value.is_some_and(|v| v.starts_with('w')))
        .map(|g| g.at)
        .collect();
    for at in wipes {
        r.add(
            Effect::Danger("`--exists-action w` wipes existing paths".into()),
            at,
        );
    }
}

/// The project itself (`.`, `./sub`, with extras `.[dev]`), as pip names a local path.
fn is_project(w: &str) -> bool {
    let path = w.split('[').next().unwrap_or(w);
    (path == "." || path.starts_with("./")) && is_inside(path)
}

/// A relative path that stays in the working directory.
fn is_inside(path: &str) -> bool {
    !path.is_empty() && !path.starts_with(['/', '~']) && !path.split('/').any(|p| p == "..")
}

/// `pip install`/`download`/`wheel`: the project and its requirements files are the
/// project's; anything named on the command line (a package, a URL, a path elsewhere) is
/// built by running its own code.
fn packages_check(r: &mut Reading<'_>) {
    let verb = match r.path.last().copied() {
        Some("download") => "downloads (building its metadata, which runs its code)",
        Some("wheel") => "builds (running its build code)",
        _ => "installs (running its build and install code)",
    };
    let mut found: Vec<(Effect, Span)> = Vec::new();
    let named = |w: &str| {
        if is_project(w) {
            Effect::Project(format!("{verb} the project at `{w}`"))
        } else {
            Effect::Code(format!("{verb} `{w}`"))
        }
    };
    for &(i, w) in &r.operands {
        found.push((named(w), Span::one(i)));
    }
    for g in &r.given {
        match (g.opt.key(), g.value) {
            ("editable", Some(v)) => found.push((named(v), g.at)),
            ("requirement", Some(v)) if is_inside(v) => found.push((
                Effect::Project(format!(
                    "{verb} the requirements `{v}` lists (the project's declared dependencies)"
                )),
                g.at,
            )),
            ("requirement", Some(v)) => found.push((
                Effect::Code(format!("{verb} the packages `{v}` lists")),
                g.at,
            )),
            _ => {}
        }
    }
    if found.is_empty() {
        // pip refuses to run without requirements, unless its configuration (which an
        // agent may write) names some.
        let at = r.to_end(r.words.iter().position(|w| w == verb_word(r)).unwrap_or(0));
        found.push((
            Effect::Code(format!(
                "without requirements pip {verb} whatever its configuration names, if anything"
            )),
            at,
        ));
    }
    for (effect, at) in found {
        r.add(effect, at);
    }
    r.set_roles(&[], Passthrough);
}

/// The subcommand's word (`install`, `download`, `wheel`).
fn verb_word(r: &Reading<'_>) -> &'static str {
    r.path.last().copied().unwrap_or("install")
}

/// `pip cache remove`/`purge` deletes from pip's cache.
fn cache_check(r: &mut Reading<'_>) {
    let dir = r.value("cache-dir").unwrap_or("~/.cache/pip").to_string();
    let at = r
        .words
        .iter()
        .position(|w| w == "remove" || w == "purge")
        .unwrap_or(0);
    r.add(Effect::Writes(dir), Span::one(at));
}

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::Effect;
    use super::super::testing::{Table, assert_refused, covered, dangerous, read, said};

    /// Harmless.
    const HARMLESS: &[&str] = &[
        "python3 --version",
        "python3 -V",
        "python -VV",
        "python3.12 --help",
        "pip list",
        "pip list --format=json",
        "pip3 list -l --not-required",
        "pip show requests",
        "pip show -f requests",
        "pip freeze",
        "pip freeze --all",
        "pip --version",
        "pip check",
        "pip inspect",
        "pip cache dir",
        "pip help install",
    ];

    /// Not harmless.
    const NOT_HARMLESS: &[&str] = &[
        "python3",
        "python3 -",
        "python3 -i",
        "python -m pip list",
        "pip list --outdated",
        "pip cache purge",
        "pip config list",
        "pip hash x.whl",
    ];

    /// Approved by a glob whose first so many words are written out.
    const COVERED: &[(&str, usize)] = &[
        ("python -m pytest -x", 3),
        ("python -m pytest -x tests/ -k 'not slow'", 3),
        ("python3 -m unittest discover -v", 3),
        ("python -m pytest", 1),
        ("pip install -r requirements.txt", 2),
        ("pip install -r requirements/dev.txt --no-deps", 2),
        ("pip install -e .", 1),
        ("pip install -e '.[dev]'", 1),
        ("pip install .", 1),
        ("pip install --upgrade -r requirements.txt", 1),
        ("python -m pip install -r requirements.txt", 1),
        ("pip list", 1),
        ("pip -q list", 1),
        ("pip download -r requirements.txt --no-deps", 1),
    ];

    /// Refused under a glob naming only the program, and a phrase the reasons must contain.
    const REFUSED: &[(&str, &str)] = &[
        (
            "pip install evil",
            "installs (running its build and install code) `evil`",
        ),
        ("pip install -e /tmp/x", "`/tmp/x`"),
        ("pip install ../elsewhere", "`../elsewhere`"),
        (
            "pip install -r /tmp/req.txt",
            "the packages `/tmp/req.txt` lists",
        ),
        ("pip install git+https://x/y", "`git+https://x/y`"),
        ("pip --python /tmp/py list", "Python interpreter"),
        ("pip install --upgrade", "whatever its configuration names"),
        (
            "pip install -i https://evil/simple -r requirements.txt",
            "another package index",
        ),
        (
            "pip install --extra-index-url https://x -r requirements.txt",
            "adds a package index",
        ),
        (
            "pip install -f /tmp/wheels -r requirements.txt",
            "looks for packages",
        ),
        (
            "pip install --target /tmp/t -r requirements.txt",
            "writes `/tmp/t`",
        ),
        (
            "pip install --upg -r requirements.txt",
            "abbreviates `--upgrade`",
        ),
        ("pip install --in=x y", "abbreviates"),
        (
            "pip config set global.index-url x",
            "changes pip's configuration",
        ),
        ("pip config edit", "editor"),
        ("pip frobnicate", "not a `pip` subcommand"),
        ("python -c 'print(1)'", "runs the program given as CMD"),
        ("python -Bc 'print(1)'", "runs the program given as CMD"),
        ("python x.py", "runs the script `x.py`"),
        ("python -u x.py --flag", "runs the script `x.py`"),
        ("python -m http.server", "runs the module `http.server`"),
        (
            "python3 -mhttp.server 8000",
            "runs the module `http.server`",
        ),
        (
            "python3 -W error::evil.Warn -m pytest",
            "imports the module",
        ),
        (
            "python3 -X pycache_prefix=/tmp/c -m pytest",
            "writes `/tmp/c`",
        ),
        ("python3 -X importx -m pytest", "not an -X option"),
        ("python3 --vers", "not an option CPython knows"),
        ("python3 -q", "reads one from standard input"),
        ("python3 -u -B", "reads one from standard input"),
        (
            "python3 -m pip install evil",
            "installs (running its build and install code) `evil`",
        ),
        ("python3 -m pip --python /tmp/py list", "Python interpreter"),
        (
            "pip --keyring-provider=subprocess install -r requirements.txt",
            "`pip --keyring-provider` looks credentials up with the keyring library or program",
        ),
        (
            "pip config edit --editor=vim",
            "`pip config edit --editor` runs EDITOR",
        ),
        (
            "pip install --global-option=--x -r requirements.txt",
            "`pip install --global-option` passes options to setup.py",
        ),
        (
            "pip download --global-option=--x -r requirements.txt",
            "`pip download --global-option` passes options to setup.py",
        ),
        (
            "pip wheel --global-option=--x .",
            "`pip wheel --global-option` passes options to setup.py",
        ),
        (
            "pip wheel --build-option=--x .",
            "`pip wheel --build-option` passes options to setup.py",
        ),
        ("pip wheel evil", "builds (running its build code) `evil`"),
    ];

    /// Dangerous.
    const DANGEROUS: &[&str] = &[
        "pip uninstall -y x",
        "pip -q uninstall x",
        "pip3 uninstall -r requirements.txt",
        "python -m pip uninstall x",
        "python3 -I -m pip uninstall -y x",
        "pip install --exists-action w -e .",
    ];

    /// Not dangerous.
    const NOT_DANGEROUS: &[&str] = &[
        "pip install -r requirements.txt",
        "pip list",
        "python -m pytest",
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
    fn listing_and_versions_are_harmless() {
        for &c in HARMLESS {
            let u = read(c);
            assert!(u.harmless(), "{c:?} should be harmless: {}", said(c));
        }
        for &c in NOT_HARMLESS {
            assert!(!read(c).harmless(), "{c:?} must not be harmless");
        }
        // With `-P`, `-m pip` no longer looks in the working directory.
        assert!(
            read("python3 -P -m pip list").harmless(),
            "{}",
            said("python3 -P -m pip list")
        );
    }

    #[test]
    fn globs_cover_tests_and_declared_requirements() {
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
        // Words after the script, `-c` or `-m` are the program's: nothing read into them.
        assert!(!said("python x.py --target-dir /tmp").contains("writes"));
        assert!(!said("python -c pass -m http.server").contains("http.server"));
    }

    #[test]
    fn uninstalling_is_dangerous() {
        for &c in DANGEROUS {
            assert!(dangerous(c), "{c:?}: {}", said(c));
        }
        for &c in NOT_DANGEROUS {
            assert!(!dangerous(c), "{c:?}: {}", said(c));
        }
    }

    #[test]
    fn delegated_pip_findings_point_at_their_words() {
        let u = read("python -m pip uninstall x");
        let danger = u
            .findings
            .iter()
            .find(|f| matches!(f.effect, Effect::Danger(_)))
            .unwrap();
        assert_eq!(
            (danger.at.first, danger.at.last),
            (3, 3),
            "`uninstall` is word 3"
        );
        // A rule naming `python -m pip install` literally covers the declared requirements.
        assert!(covered("python -m pip install -r requirements.txt", 4));
        assert!(!covered("python -m pip install evil", 4));
    }
}
