//! The build tools: `cargo` (1.95) and GNU `make` (4.3). Option lines follow the
//! installed programs' own `cargo SUB --help` and `make --help`.
//!
//! cargo parses with clap: clustered short options, exact long options (no
//! abbreviations), options anywhere until `--`, a value attached (`-j4`, `-j=4`,
//! `--jobs=4`) or the next word, but never a next word that starts with `-` (clap refuses
//! it). An optional value (`-p, --package [<SPEC>]`) takes the next word when it does not
//! start with `-`: it is written as a required value here, and the check refuses the
//! one case where the two differ. Global options (`-v`, `--config`, `-Z`, `--locked`, …)
//! are valid after every subcommand. `cargo run` passes everything after its first
//! operand to the program (clap's `trailing_var_arg`); `cargo test` and `cargo bench`
//! take one test-name filter and, after `--`, the test binary's arguments. `cargo fmt`
//! and `cargo clippy` are separate programs (`cargo-fmt`, `cargo-clippy`): clippy hands
//! its options to `cargo check` and the words after `--` to rustc, which are read here as
//! lint flags only (`-D warnings`); fmt's words after `--` go to rustfmt.
//!
//! Two things make no cargo command harmless on its own (step 8), found by trying them:
//! cargo is usually rustup's proxy, which runs the toolchain the project's
//! `rust-toolchain.toml` names, and its `path` key may name any program (even for `cargo
//! --version`); and every command that resolves the workspace (`tree`, `metadata`,
//! `update`, `fetch`, `add`, `clean`, …) runs `rustc -vV` through the `build.rustc` and
//! `build.rustc-wrapper` the project's `.cargo/config.toml` names. Both are the project's
//! code (`project`), which a rule like `cargo *` covers; neither is ever approved without
//! one. `cargo +toolchain`, `--config`, `-Z`, `-C` and `--manifest-path` change what cargo
//! is or where it works (`config`); `cargo install` runs code from outside the project;
//! `cargo uninstall` and `cargo remove` remove packages (`danger`).
//!
//! GNU make parses with getopt_long (abbreviations accepted, options anywhere); `-j` and
//! `-l` take the next word only when it starts with a digit. Every run reads a makefile
//! and runs its recipes and `$(shell …)` (even `-n` and `-q` expand it), so it is
//! `project`, except `--version` and `--help`. `VAR=value` operands set make variables,
//! which may name programs make runs (`SHELL=`, `CC=`): `config`; with `$` or `!=` the
//! value is expanded or run: `code`.

use super::profile::Role::{Nothing, Passthrough, Text, Write};
use super::profile::{
    BASE, Config, ConfigFile, Effect, Judge, Place, Profile, Reading, Role, Span, Syntax, join,
    total,
};
use super::spec::Does;

pub const PROFILES: &[&Profile] = &[&CARGO, &MAKE];

// ── cargo ────────────────────────────────────────────────────────────────────────────

/// clap's global options: valid before and after every subcommand.
const GLOBAL: &[&str] = &[
    "-v, --verbose",
    "-q, --quiet",
    "--color=WHEN",
    "--config=KEY_VALUE  config: overrides cargo's configuration (which names the programs it runs: build.rustc-wrapper, target.*.runner)",
    "-Z FLAG  config: turns on an unstable cargo feature",
    "-h, --help",
    "--locked",
    "--offline",
    "--frozen",
];

const MANIFEST: &[&str] = &[
    "--manifest-path=PATH  config: works on another package (its build scripts and configuration)",
    "--ignore-rust-version",
];

const PACKAGES: &[&str] = &[
    "-p, --package=SPEC",
    "--workspace",
    "--exclude=SPEC",
    "--all",
];

const TARGETS: &[&str] = &[
    "--lib",
    "--bins",
    "--bin=NAME",
    "--examples",
    "--example=NAME",
    "--tests",
    "--test=NAME",
    "--benches",
    "--bench=NAME",
    "--all-targets",
];

const FEATURES: &[&str] = &[
    "-F, --features=FEATURES",
    "--all-features",
    "--no-default-features",
];

const COMPILE: &[&str] = &[
    "-j, --jobs=N",
    "--keep-going",
    "-r, --release",
    "--profile=PROFILE_NAME",
    "--target=TRIPLE",
    "--target-dir=DIRECTORY  writes",
    "--artifact-dir=PATH  writes",
    "--unit-graph",
    "--timings",
    "--message-format=FMT",
    "--future-incompat-report",
];

const BUILD_PARTS: &[&[&str]] = &[GLOBAL, MANIFEST, PACKAGES, TARGETS, FEATURES, COMPILE];
/// `build`, `check`, `clippy`, `fix`, `doc`: what building takes.
const BUILD_OPTIONS: &[&str] = &join::<{ total(BUILD_PARTS) }>(BUILD_PARTS);

const TEST_PARTS: &[&[&str]] = &[BUILD_OPTIONS, &["--no-run", "--no-fail-fast", "--doc"]];
const TEST_OPTIONS: &[&str] = &join::<{ total(TEST_PARTS) }>(TEST_PARTS);

const CLIPPY_PARTS: &[&[&str]] = &[
    BUILD_OPTIONS,
    &[
        "-V, --version",
        "--no-deps",
        "--fix  repo: applies lint suggestions to the source files",
        "--allow-dirty",
        "--allow-staged",
        "--allow-no-vcs",
        "--broken-code",
    ],
];
const CLIPPY_OPTIONS: &[&str] = &join::<{ total(CLIPPY_PARTS) }>(CLIPPY_PARTS);

const FIX_PARTS: &[&[&str]] = &[
    BUILD_OPTIONS,
    &[
        "--edition",
        "--edition-idioms",
        "--broken-code",
        "--allow-no-vcs",
        "--allow-dirty",
        "--allow-staged",
    ],
];
const FIX_OPTIONS: &[&str] = &join::<{ total(FIX_PARTS) }>(FIX_PARTS);

const DOC_PARTS: &[&[&str]] = &[
    BUILD_OPTIONS,
    &[
        "--open  code: opens the documentation in a web browser",
        "--no-deps",
        "--document-private-items",
    ],
];
const DOC_OPTIONS: &[&str] = &join::<{ total(DOC_PARTS) }>(DOC_PARTS);

const RUN_PARTS: &[&[&str]] = &[GLOBAL, MANIFEST, PACKAGES, TARGETS, FEATURES, COMPILE];
const RUN_OPTIONS: &[&str] = &join::<{ total(RUN_PARTS) }>(RUN_PARTS);

/// What building runs, said once.
const BUILDS: &str = "builds the project, running its build scripts and procedural macros";

/// What resolving the workspace runs (found by trying it: `rustc -vV` and `rustc -
/// --print=…` run through the configured wrapper).
const RESOLVES: &str = "resolves the workspace, running `rustc` through the `build.rustc` or `build.rustc-wrapper` the project's .cargo/config.toml may name";

const CARGO: Profile = Profile {
    names: &["cargo"],
    syntax: Syntax::Clap,
    options: &join::<{ GLOBAL.len() + 4 }>(&[
        GLOBAL,
        &[
            "-V, --version",
            "--list",
            "--explain=CODE",
            "-C DIRECTORY  config: runs cargo in another directory",
        ],
    ]),
    subcommands: &[
        &Profile {
            names: &["build", "b"],
            options: BUILD_OPTIONS,
            does: Does::Project(BUILDS),
            ..CARGO_SUB
        },
        &Profile {
            names: &["check", "c"],
            options: BUILD_OPTIONS,
            does: Does::Project(BUILDS),
            ..CARGO_SUB
        },
        &Profile {
            names: &["test", "t"],
            options: TEST_OPTIONS,
            does: Does::Project("builds and runs the project's tests"),
            check: Some(test_check),
            ..CARGO_SUB
        },
        &Profile {
            names: &["bench"],
            options: TEST_OPTIONS,
            does: Does::Project("builds and runs the project's benchmarks"),
            check: Some(test_check),
            ..CARGO_SUB
        },
        &Profile {
            names: &["run", "r"],
            // clap's `trailing_var_arg`: the first operand and every word after it are
            // the program's.
            syntax: Syntax::GnuInOrder,
            options: RUN_OPTIONS,
            rest: Passthrough,
            does: Does::Project("builds and runs the project's program"),
            ..CARGO_SUB
        },
        &Profile {
            names: &["clippy"],
            options: CLIPPY_OPTIONS,
            does: Does::Project(BUILDS),
            check: Some(clippy_check),
            ..CARGO_SUB
        },
        &Profile {
            names: &["fmt"],
            options: &[
                "-q, --quiet",
                "-v, --verbose",
                "--version",
                "-p, --package=PACKAGE",
                "--manifest-path=PATH  config: formats another package",
                "--message-format=FORMAT",
                "--all",
                "--check",
                "-h, --help",
            ],
            does: Does::Project(
                "runs rustfmt on the project (a project's cargo alias named `fmt` runs instead)",
            ),
            check: Some(fmt_check),
            ..CARGO_SUB
        },
        &Profile {
            names: &["doc", "d"],
            options: DOC_OPTIONS,
            does: Does::Project(BUILDS),
            ..CARGO_SUB
        },
        &Profile {
            names: &["fix"],
            options: FIX_OPTIONS,
            does: Does::Repo(
                "applies the compiler's suggestions to the source files (building the project, running its build scripts)",
            ),
            ..CARGO_SUB
        },
        &Profile {
            names: &["clean"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + 8 }>(&[
                GLOBAL,
                MANIFEST,
                &[
                    "--doc",
                    "-n, --dry-run",
                    "-p, --package=SPEC",
                    "--workspace",
                    "-r, --release",
                    "--profile=PROFILE_NAME",
                    "--target=TRIPLE",
                    "--target-dir=DIRECTORY  writes",
                ],
            ]),
            does: Does::Project(
                "removes the project's build directory (after resolving the workspace, which runs the `rustc` the project's configuration may name)",
            ),
            ..CARGO_SUB
        },
        &Profile {
            names: &["update"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + 6 }>(&[
                GLOBAL,
                MANIFEST,
                &[
                    "-n, --dry-run",
                    "--recursive",
                    "--precise=PRECISE",
                    "-b, --breaking",
                    "-w, --workspace",
                    "-p, --package=SPEC",
                ],
            ]),
            rest: Text,
            does: Does::Project(
                "updates Cargo.lock from the registry (and resolves the workspace, running the `rustc` the project's configuration may name)",
            ),
            ..CARGO_SUB
        },
        &Profile {
            names: &["fetch"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + 1 }>(&[
                GLOBAL,
                MANIFEST,
                &["--target=TRIPLE"],
            ]),
            does: Does::Project(RESOLVES),
            ..CARGO_SUB
        },
        &Profile {
            names: &["generate-lockfile"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + 1 }>(&[
                GLOBAL,
                MANIFEST,
                &["--publish-time=TIME"],
            ]),
            does: Does::Project(RESOLVES),
            ..CARGO_SUB
        },
        &Profile {
            names: &["tree"],
            options: &join::<
                { GLOBAL.len() + MANIFEST.len() + PACKAGES.len() + FEATURES.len() + 10 },
            >(&[
                GLOBAL,
                MANIFEST,
                PACKAGES,
                FEATURES,
                &[
                    "-e, --edges=KINDS",
                    "-i, --invert=SPEC",
                    "--prune=SPEC",
                    "--depth=DEPTH",
                    "--prefix=PREFIX",
                    "--no-dedupe",
                    "-d, --duplicates",
                    "--charset=CHARSET",
                    "-f, --format=FORMAT",
                    "--target=TRIPLE",
                ],
            ]),
            does: Does::Project(RESOLVES),
            ..CARGO_SUB
        },
        &Profile {
            names: &["metadata"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + FEATURES.len() + 3 }>(&[
                GLOBAL,
                MANIFEST,
                FEATURES,
                &[
                    "--filter-platform=TRIPLE",
                    "--no-deps",
                    "--format-version=VERSION",
                ],
            ]),
            check: Some(metadata_check),
            ..CARGO_SUB
        },
        &Profile {
            names: &["new"],
            options: &join::<{ GLOBAL.len() + 6 }>(&[
                GLOBAL,
                &[
                    "--vcs=VCS",
                    "--bin",
                    "--lib",
                    "--edition=YEAR",
                    "--name=NAME",
                    "--registry=REGISTRY",
                ],
            ]),
            operands: &[Write],
            ..CARGO_SUB
        },
        &Profile {
            names: &["init"],
            options: &join::<{ GLOBAL.len() + 6 }>(&[
                GLOBAL,
                &[
                    "--vcs=VCS",
                    "--bin",
                    "--lib",
                    "--edition=YEAR",
                    "--name=NAME",
                    "--registry=REGISTRY",
                ],
            ]),
            operands: &[Write],
            does: Does::Repo("creates a Cargo package (Cargo.toml, src/) in the directory"),
            ..CARGO_SUB
        },
        &Profile {
            names: &["add"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + 20 }>(&[
                GLOBAL,
                MANIFEST,
                &[
                    "--no-default-features",
                    "--default-features",
                    "-F, --features=FEATURES",
                    "--optional",
                    "--no-optional",
                    "--public",
                    "--no-public",
                    "--rename=NAME",
                    "-n, --dry-run",
                    "-p, --package=SPEC",
                    "--path=PATH",
                    "--base=BASE",
                    "--git=URI",
                    "--branch=BRANCH",
                    "--tag=TAG",
                    "--rev=REV",
                    "--registry=NAME",
                    "--dev",
                    "--build",
                    "--target=TARGET",
                ],
            ]),
            rest: Role::Repo("adds the dependency to Cargo.toml"),
            does: Does::Project(RESOLVES),
            ..CARGO_SUB
        },
        &Profile {
            names: &["remove", "rm"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + 5 }>(&[
                GLOBAL,
                MANIFEST,
                &[
                    "-n, --dry-run",
                    "--dev",
                    "--build",
                    "--target=TARGET",
                    "-p, --package=SPEC",
                ],
            ]),
            rest: Text,
            does: Does::Danger("removes dependencies from Cargo.toml"),
            ..CARGO_SUB
        },
        &Profile {
            names: &["install"],
            options: &join::<{ GLOBAL.len() + FEATURES.len() + 26 }>(&[
                GLOBAL,
                FEATURES,
                &[
                    "--version=VERSION",
                    "--index=INDEX  config: installs from another registry index",
                    "--registry=REGISTRY  config: installs from another registry",
                    "--git=URL  code: builds and installs the crate at URL",
                    "--branch=BRANCH",
                    "--tag=TAG",
                    "--rev=SHA",
                    "--path=PATH  code: builds and installs the crate at PATH",
                    "--root=DIR  writes",
                    "-f, --force",
                    "-n, --dry-run",
                    "--no-track",
                    "--list",
                    "--message-format=FMT",
                    "--debug",
                    "--ignore-rust-version",
                    "--bin=NAME",
                    "--bins",
                    "--example=NAME",
                    "--examples",
                    "-j, --jobs=N",
                    "--keep-going",
                    "--profile=PROFILE_NAME",
                    "--target=TRIPLE",
                    "--target-dir=DIRECTORY  writes",
                    "--timings",
                ],
            ]),
            rest: Role::Code("builds and installs (running its build script) the crate"),
            check: Some(install_check),
            ..CARGO_SUB
        },
        &Profile {
            names: &["uninstall"],
            options: &join::<{ GLOBAL.len() + 3 }>(&[
                GLOBAL,
                &["--root=DIR", "-p, --package=SPEC", "--bin=NAME"],
            ]),
            rest: Text,
            does: Does::Danger("removes installed binaries"),
            ..CARGO_SUB
        },
        &Profile {
            names: &["publish"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + PACKAGES.len() + FEATURES.len() + 9 }>(
                &[
                    GLOBAL,
                    MANIFEST,
                    PACKAGES,
                    FEATURES,
                    &[
                        "-n, --dry-run",
                        "--index=INDEX  config: publishes to another registry index",
                        "--registry=REGISTRY  config: publishes to another registry",
                        "--no-verify",
                        "--allow-dirty",
                        "-j, --jobs=N",
                        "--keep-going",
                        "--target=TRIPLE",
                        "--target-dir=DIRECTORY  writes",
                    ],
                ],
            ),
            does: Does::Net(
                "uploads the package to the registry (building it first, which runs its build scripts)",
            ),
            ..CARGO_SUB
        },
        &Profile {
            names: &["package"],
            options: &join::<
                { GLOBAL.len() + MANIFEST.len() + PACKAGES.len() + FEATURES.len() + 12 },
            >(&[
                GLOBAL,
                MANIFEST,
                PACKAGES,
                FEATURES,
                &[
                    "--index=INDEX",
                    "--registry=REGISTRY",
                    "-l, --list",
                    "--no-verify",
                    "--no-metadata",
                    "--allow-dirty",
                    "--exclude-lockfile",
                    "--message-format=FMT",
                    "--target=TRIPLE",
                    "--target-dir=DIRECTORY  writes",
                    "-j, --jobs=N",
                    "--keep-going",
                ],
            ]),
            does: Does::Project(
                "packages the project (building it to verify, which runs its build scripts)",
            ),
            ..CARGO_SUB
        },
        &Profile {
            names: &["vendor"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + 4 }>(&[
                GLOBAL,
                MANIFEST,
                &[
                    "--no-delete",
                    "-s, --sync=TOML  reads",
                    "--respect-source-config",
                    "--versioned-dirs",
                ],
            ]),
            operands: &[Write],
            does: Does::Project(RESOLVES),
            ..CARGO_SUB
        },
        &Profile {
            names: &["search"],
            options: &join::<{ GLOBAL.len() + 3 }>(&[
                GLOBAL,
                &["--limit=LIMIT", "--index=INDEX", "--registry=REGISTRY"],
            ]),
            rest: Text,
            does: Does::Net("searches the registry"),
            ..CARGO_SUB
        },
        &Profile {
            names: &["locate-project"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + 2 }>(&[
                GLOBAL,
                MANIFEST,
                &["--workspace", "--message-format=FMT"],
            ]),
            ..CARGO_SUB
        },
        &Profile {
            names: &["pkgid"],
            options: &join::<{ GLOBAL.len() + MANIFEST.len() + 1 }>(&[
                GLOBAL,
                MANIFEST,
                &["-p, --package=SPEC"],
            ]),
            operands: &[Text],
            ..CARGO_SUB
        },
        &Profile {
            names: &["version"],
            options: GLOBAL,
            ..CARGO_SUB
        },
        &Profile {
            names: &["help"],
            options: GLOBAL,
            operands: &[Text],
            ..CARGO_SUB
        },
        &Profile {
            names: &["login"],
            options: &join::<{ GLOBAL.len() + 1 }>(&[GLOBAL, &["--registry=REGISTRY"]]),
            rest: Passthrough,
            does: Does::Config("stores a registry token in cargo's credentials"),
            ..CARGO_SUB
        },
        &Profile {
            names: &["logout"],
            options: &join::<{ GLOBAL.len() + 1 }>(&[GLOBAL, &["--registry=REGISTRY"]]),
            does: Does::Config("removes a registry token from cargo's credentials"),
            ..CARGO_SUB
        },
        &Profile {
            names: &["owner"],
            options: &join::<{ GLOBAL.len() + 6 }>(&[
                GLOBAL,
                &[
                    "-a, --add=LOGIN",
                    "-r, --remove=LOGIN",
                    "-l, --list",
                    "--index=INDEX",
                    "--registry=REGISTRY",
                    "--token=TOKEN",
                ],
            ]),
            operands: &[Text],
            does: Does::Net("lists or changes a crate's owners on the registry"),
            ..CARGO_SUB
        },
        &Profile {
            names: &["yank"],
            options: &join::<{ GLOBAL.len() + 5 }>(&[
                GLOBAL,
                &[
                    "--version=VERSION",
                    "--undo",
                    "--index=INDEX",
                    "--registry=REGISTRY",
                    "--token=TOKEN",
                ],
            ]),
            operands: &[Text],
            does: Does::Net("yanks (or restores) a published version on the registry"),
            ..CARGO_SUB
        },
    ],
    check: Some(cargo_check),
    config: Some(&CARGO_CONFIG),
    ..BASE
};

/// The cargo settings that change neither what cargo runs, nor what it reads, nor where
/// it writes: terminal output, new packages' defaults, parallelism, the profiles' code
/// generation, network retries. Not `build.rustc`, `build.rustc-wrapper`,
/// `build.rustflags`, `target.*.runner` or `linker` (programs it runs), `build.target-dir`
/// (where it writes), `[env]`, `[source]`, `registries` (credential providers), `paths`,
/// `[unstable]`, nor `[alias]`: a user alias replaces a built-in one (`[alias] b =
/// "run"` makes `cargo b` run; tried with cargo 1.95).
const CARGO_HARMLESS: &[&str] = &[
    "term.*",
    "cargo-new.*",
    "build.jobs",
    "build.incremental",
    "build.pipelining",
    "future-incompat-report.*",
    "resolver.*",
    "profile.*.opt-level",
    "profile.*.debug",
    "profile.*.debug-assertions",
    "profile.*.overflow-checks",
    "profile.*.lto",
    "profile.*.panic",
    "profile.*.incremental",
    "profile.*.codegen-units",
    "profile.*.split-debuginfo",
    "profile.*.strip",
    "profile.*.inherits",
    "net.retry",
    "net.offline",
    "http.timeout",
    "http.multiplexing",
    "http.low-speed-limit",
];

const CARGO_CONFIG_WHY: &str = "cargo's configuration names programs it runs even to resolve the workspace (`build.rustc-wrapper`: `rustc -vV` on `cargo metadata`), runners, linkers and where it writes";

const TOOLCHAIN_WHY: &str = "rustup's proxy runs the toolchain it names, and a `path` toolchain is any program (`cargo version` ran `/tmp/x/bin/cargo`, tried with rustup 1.29)";

/// cargo reads `.cargo/config.toml` (or the older `.cargo/config`) in the working
/// directory and every directory above it, then `$CARGO_HOME`'s (`~/.cargo`); rustup's
/// proxy, which `cargo` usually is, reads `rust-toolchain.toml` (or `rust-toolchain`)
/// from the working directory up.
const CARGO_CONFIG: Config = Config {
    files: &[
        ConfigFile {
            name: ".cargo/config.toml",
            place: Place::Up,
            judge: Judge::Toml(CARGO_HARMLESS),
            why: CARGO_CONFIG_WHY,
            neutralised: false,
        },
        ConfigFile {
            name: ".cargo/config",
            place: Place::Up,
            judge: Judge::Toml(CARGO_HARMLESS),
            why: CARGO_CONFIG_WHY,
            neutralised: false,
        },
        ConfigFile {
            name: ".cargo/config.toml",
            place: Place::Home,
            judge: Judge::Toml(CARGO_HARMLESS),
            why: CARGO_CONFIG_WHY,
            neutralised: false,
        },
        ConfigFile {
            name: ".cargo/config",
            place: Place::Home,
            judge: Judge::Toml(CARGO_HARMLESS),
            why: CARGO_CONFIG_WHY,
            neutralised: false,
        },
        ConfigFile {
            name: "rust-toolchain.toml",
            place: Place::Up,
            judge: Judge::Toml(TOOLCHAIN_HARMLESS),
            why: TOOLCHAIN_WHY,
            neutralised: false,
        },
        // The older name may hold a bare channel name, which is no TOML: asked about.
        ConfigFile {
            name: "rust-toolchain",
            place: Place::Up,
            judge: Judge::Toml(TOOLCHAIN_HARMLESS),
            why: TOOLCHAIN_WHY,
            neutralised: false,
        },
    ],
    env: "`CARGO_*` (any setting, `CARGO_HOME`, `CARGO_BUILD_RUSTC_WRAPPER`), `RUSTC`, `RUSTC_WRAPPER`, `RUSTFLAGS`, `RUSTUP_TOOLCHAIN`, `RUSTUP_HOME`",
    run_env: &[],
};

const TOOLCHAIN_HARMLESS: &[&str] = &[
    "toolchain.channel",
    "toolchain.components",
    "toolchain.targets",
    "toolchain.profile",
];

/// The defaults of a cargo subcommand.
const CARGO_SUB: Profile = Profile {
    syntax: Syntax::Clap,
    rest: Nothing,
    ..BASE
};

/// For every cargo command: the toolchain the project may pick (rustup), `+toolchain`,
/// and option values clap would not have taken.
fn cargo_check(r: &mut Reading<'_>) {
    r.add(
        Effect::Project(
            "`cargo` is rustup's proxy, which runs the toolchain the project's rust-toolchain.toml names (its `path` may name any program)"
                .into(),
        ),
        Span::one(0),
    );
    // clap never takes a next word that starts with `-` as a value (it refuses it, or
    // for an optional value, leaves it an option).
    let refused: Vec<(usize, String)> = r
        .given
        .iter()
        .filter(|g| g.at.last > g.at.first && g.value.is_some_and(|v| v.starts_with('-')))
        .map(|g| (g.at.last, g.opt.display()))
        .collect();
    for (at, opt) in refused {
        r.unknown(
            at,
            format!(
                "`{}` after `{opt}`: cargo does not take a word starting with `-` as a value",
                r.words[at]
            ),
        );
    }
    // A target that is a file is a target specification, which names the linker rustc
    // runs (`"linker": "…"`). (`cargo add --target` only writes a cfg into Cargo.toml.)
    if !r.path.iter().any(|p| matches!(*p, "add" | "remove")) {
        let specs: Vec<(Span, String)> = r
            .given
            .iter()
            .filter(|g| g.opt.key() == "target")
            .filter_map(|g| g.value.map(|v| (g.at, v)))
            .filter(|(_, v)| v.ends_with(".json") || v.contains('/'))
            .map(|(at, v)| (at, v.to_string()))
            .collect();
        for (at, v) in specs {
            r.add(
                Effect::Code(format!(
                    "`--target {v}` is a target specification file, which names the linker rustc runs"
                )),
                at,
            );
        }
    }
    // rustup's `cargo +TOOLCHAIN …`: the rest is cargo's.
    if let Some(first) = r.words.get(1)
        && first.starts_with('+')
        && first.len() > 1
    {
        r.findings
            .retain(|f| !(f.at.first == 1 && matches!(f.effect, Effect::Unknown(_))));
        r.add(
            Effect::Config(format!("`{first}` runs another rustup toolchain")),
            Span::one(1),
        );
        let mut rest = vec!["cargo".to_string()];
        rest.extend(r.words[2..].iter().cloned());
        let inner = r.understand_other(&rest);
        for f in inner.findings {
            if f.at.first == 0 && f.at.last == 0 && matches!(f.effect, Effect::Project(_)) {
                continue; // The toolchain finding, already made.
            }
            // `+toolchain` stands between `cargo` and the words read.
            r.add(f.effect, f.at.moved(|i| if i == 0 { 0 } else { i + 1 }));
        }
    }
}

/// The operands before `--`, with their word indices.
fn before_dashdash<'w>(r: &Reading<'w>) -> Vec<(usize, &'w str)> {
    r.operands
        .iter()
        .copied()
        .filter(|&(i, _)| r.dashdash.is_none_or(|d| i < d))
        .collect()
}

/// The operands after `--`, with their word indices.
fn after_dashdash<'w>(r: &Reading<'w>) -> Vec<(usize, &'w str)> {
    r.operands
        .iter()
        .copied()
        .filter(|&(i, _)| r.dashdash.is_some_and(|d| i > d))
        .collect()
}

/// `cargo test [TESTNAME] [-- ARGS…]`: one filter, then the test binary's arguments.
fn test_check(r: &mut Reading<'_>) {
    let before = before_dashdash(r);
    for &(i, w) in before.iter().skip(1) {
        r.unknown(
            i,
            format!("`{w}`: cargo takes one test-name filter before `--`"),
        );
    }
    r.set_roles(&[], Passthrough);
}

/// `cargo clippy [OPTIONS] [-- LINT FLAGS]`: the options are `cargo check`'s, the words
/// after `--` are rustc's, read here as lint levels only (`-D warnings`, `-Aclippy::x`,
/// `--cap-lints warn`); any other rustc flag (`-C linker=…`) is unknown.
fn clippy_check(r: &mut Reading<'_>) {
    for (i, w) in before_dashdash(r) {
        r.unknown(
            i,
            format!("`{w}`: `cargo clippy` takes no operands before `--`"),
        );
    }
    let after = after_dashdash(r);
    let mut k = 0;
    while k < after.len() {
        let (i, w) = after[k];
        let (flag, attached) = split_lint_flag(w);
        let lint_flag = matches!(
            flag,
            "-D" | "-W"
                | "-A"
                | "-F"
                | "--deny"
                | "--warn"
                | "--allow"
                | "--forbid"
                | "--force-warn"
                | "--cap-lints"
        );
        if !lint_flag {
            r.unknown(
                i,
                format!("`{w}`: execgate reads only lint levels (`-D LINT`, `-W`, `-A`, `-F`, `--cap-lints`) after `cargo clippy --`"),
            );
            k += 1;
            continue;
        }
        let (value, next) = match attached {
            Some(v) => (Some(v), k + 1),
            None => (after.get(k + 1).map(|&(_, v)| v), k + 2),
        };
        match value {
            Some(v) if is_lint_name(v) => {}
            Some(v) => r.unknown(i, format!("`{v}` is not a lint name (after `{flag}`)")),
            None => r.unknown(i, format!("`{flag}` needs a lint name")),
        }
        k = next;
    }
    r.set_roles(&[], Passthrough);
}

/// `-Dwarnings` → (`-D`, `warnings`); `--deny=x` → (`--deny`, `x`); `-D` → (`-D`, none).
fn split_lint_flag(w: &str) -> (&str, Option<&str>) {
    if let Some(long) = w.strip_prefix("--") {
        return match long.split_once('=') {
            Some((name, v)) => (&w[..2 + name.len()], Some(v)),
            None => (w, None),
        };
    }
    if w.len() > 2 && w.starts_with('-') && w.is_char_boundary(2) {
        return (&w[..2], Some(&w[2..]));
    }
    (w, None)
}

fn is_lint_name(v: &str) -> bool {
    !v.is_empty()
        && !v.starts_with('-')
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-'))
}

/// `cargo fmt`: `-p` takes several package names; after `--`, rustfmt's options (a few
/// known ones only); without `--check` it rewrites the source files.
fn fmt_check(r: &mut Reading<'_>) {
    let packages = r.has("package");
    for (i, w) in before_dashdash(r) {
        if !packages {
            r.unknown(
                i,
                format!("`{w}`: `cargo fmt` takes no operands before `--`"),
            );
        }
    }
    let after = after_dashdash(r);
    let mut check = r.has("check");
    let mut files = Vec::new();
    let mut k = 0;
    while k < after.len() {
        let (i, w) = after[k];
        match w {
            "--check" => check = true,
            "-l" | "--files-with-diff" | "-q" | "--quiet" | "-v" | "--verbose" => {}
            "--edition" if after.get(k + 1).is_some_and(|&(_, v)| is_edition(v)) => k += 1,
            _ if w.strip_prefix("--edition=").is_some_and(is_edition) => {}
            // A file rustfmt formats too (in place, unless checking).
            _ if !w.starts_with('-') => files.push((i, w)),
            _ => r.unknown(
                i,
                format!("`{w}` is not a rustfmt option execgate knows (after `cargo fmt --`)"),
            ),
        }
        k += 1;
    }
    for (i, w) in files {
        let effect = if check {
            Effect::Reads(w.to_string())
        } else {
            Effect::Writes(w.to_string())
        };
        r.add(effect, Span::one(i));
    }
    if !check {
        let at = r.words.iter().position(|w| w == "fmt").unwrap_or(0);
        r.add(
            Effect::Repo("`cargo fmt` rewrites the project's source files".into()),
            Span::one(at),
        );
    }
    r.set_roles(&[], Passthrough);
}

fn is_edition(v: &str) -> bool {
    v.len() == 4 && v.bytes().all(|b| b.is_ascii_digit())
}

/// `cargo metadata` resolves the workspace (running rustc) unless `--no-deps`.
fn metadata_check(r: &mut Reading<'_>) {
    if !r.has("no-deps") {
        let at = r.words.iter().position(|w| w == "metadata").unwrap_or(0);
        r.add(
            Effect::Project(format!("`cargo metadata` {RESOLVES}")),
            Span::one(at),
        );
    }
}

/// `cargo install --list` lists; anything else installs binaries where they are run.
fn install_check(r: &mut Reading<'_>) {
    if r.has("list") && r.operands.is_empty() {
        return;
    }
    let at = r.words.iter().position(|w| w == "install").unwrap_or(0);
    r.add(
        Effect::Config("`cargo install` puts programs into cargo's bin directory, on PATH".into()),
        Span::one(at),
    );
}

// ── GNU make ─────────────────────────────────────────────────────────────────────────

const MAKE: Profile = Profile {
    names: &["make", "gmake"],
    syntax: Syntax::Gnu,
    options: &[
        "-b, -m",
        "-B, --always-make",
        "-C DIRECTORY, --directory=DIRECTORY  config: runs make in another directory (with its makefile)",
        "-d",
        "--debug[=FLAGS]",
        "-e, --environment-overrides  config: lets environment variables override the makefile's",
        "-E STRING, --eval=STRING  code: evaluates STRING as a makefile statement",
        "-f FILE, --file=FILE, --makefile=FILE  code: reads FILE as the makefile",
        "-h, --help",
        "-i, --ignore-errors",
        "-I DIRECTORY, --include-dir=DIRECTORY  code: searches DIRECTORY for included makefiles",
        "-j, --jobs [N]",
        "-k, --keep-going",
        "-l, --load-average, --max-load [N]",
        "-L, --check-symlink-times",
        "-n, --just-print, --dry-run, --recon",
        "-o FILE, --old-file=FILE, --assume-old=FILE",
        "-O[TYPE], --output-sync[=TYPE]",
        "-p, --print-data-base",
        "-q, --question",
        "-r, --no-builtin-rules",
        "-R, --no-builtin-variables",
        "-s, --silent, --quiet",
        "--no-silent",
        "-S, --no-keep-going, --stop",
        "-t, --touch",
        "--trace",
        "-v, --version",
        "-w, --print-directory",
        "--no-print-directory",
        "-W FILE, --what-if=FILE, --new-file=FILE, --assume-new=FILE",
        "--warn-undefined-variables",
    ],
    rest: Passthrough,
    check: Some(make_check),
    ..BASE
};

/// Targets run the makefile's recipes; `NAME=value` operands set variables.
fn make_check(r: &mut Reading<'_>) {
    let query = r.has("version") || r.has("help");
    let operands = r.operands.clone();
    let mut targets = 0;
    for (i, w) in operands {
        if let Some((name, _)) = w.split_once('=') {
            let effect = if w.contains('$') || name.ends_with('!') {
                Effect::Code(format!(
                    "`{w}`: make expands or runs this variable's value (`$(shell …)`, `!=`)"
                ))
            } else {
                Effect::Config(format!(
                    "`{w}` sets a make variable, which may name a program make runs (SHELL, CC, …)"
                ))
            };
            r.add(effect, Span::one(i));
        } else if !query {
            targets += 1;
            r.add(
                Effect::Project(format!("runs the makefile's recipe for `{w}`")),
                Span::one(i),
            );
        }
    }
    if targets == 0 && !query {
        r.add(
            Effect::Project("`make` runs the makefile's default goal".into()),
            Span::one(0),
        );
    }
    r.set_roles(&[], Passthrough);
}

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::testing::{Table, assert_refused, covered, dangerous, read, said};

    /// make that only informs: harmless.
    const MAKE_HARMLESS: &[&str] = &["make --version", "make -v", "make --help", "make -h"];

    /// make that reads the makefile, whose `$(shell …)` runs: never harmless.
    const MAKE_RUNS_THE_MAKEFILE: &[&str] =
        &["make", "make test", "make -n all", "make -q", "make -p"];

    /// cargo that only informs: understood, but rustup runs the toolchain the project names.
    const CARGO_INFORMS: &[&str] = &[
        "cargo --version",
        "cargo -V",
        "cargo version",
        "cargo tree",
        "cargo metadata --format-version 1",
        "cargo metadata --no-deps --format-version 1",
        "cargo pkgid",
        "cargo locate-project",
        "cargo help build",
    ];

    /// Approved by a glob whose first so many words are written out.
    const COVERED: &[(&str, usize)] = &[
        ("cargo test", 2),
        ("cargo test --release -- --nocapture", 2),
        ("cargo test", 1),
        ("cargo test --release -- --nocapture", 1),
        ("cargo build --release", 1),
        ("cargo clippy -- -D warnings", 1),
        ("cargo clippy --all-targets -- -Dwarnings -A clippy::x", 1),
        ("cargo fmt --check", 1),
        ("cargo fmt", 1),
        ("cargo test -p execgate policy::", 1),
        ("cargo test --lib policy::programs", 2),
        ("cargo fmt --check -- src/main.rs", 1),
        ("cargo test --test api -- --test-threads 1", 1),
        ("cargo build -j4 --features=a,b", 1),
        ("cargo build --target x86_64-unknown-linux-musl", 1),
        ("cargo add --target 'cfg(unix)' libc", 1),
        ("cargo run --release -- --port 1", 1),
        ("cargo run --bin x foo --target-dir /tmp", 1),
        ("cargo check --workspace --all-targets", 1),
        ("cargo doc --no-deps", 1),
        ("cargo tree", 1),
        ("cargo --version", 1),
        ("cargo -q build", 1),
        ("cargo build -q --locked", 1),
        ("cargo publish --dry-run", 1),
        ("make test", 1),
        ("make -j4 all", 1),
        ("make -j 4", 1),
        ("make", 1),
        ("make -k -s check", 1),
    ];

    /// Refused under a glob naming only the program, and a phrase the reasons must contain.
    const REFUSED: &[(&str, &str)] = &[
        ("cargo +nightly build", "another rustup toolchain"),
        (
            "cargo --config build.rustc-wrapper=sh build",
            "overrides cargo's configuration",
        ),
        ("cargo build --config x", "overrides cargo's configuration"),
        ("cargo -Zunstable-options build", "unstable"),
        (
            "cargo build --manifest-path /tmp/x/Cargo.toml",
            "another package",
        ),
        ("cargo build --target-dir /tmp/out", "writes `/tmp/out`"),
        (
            "cargo install evil",
            "builds and installs (running its build script) the crate `evil`",
        ),
        (
            "cargo install --path /tmp/x",
            "builds and installs the crate at PATH",
        ),
        ("cargo clippy -- -C linker=/tmp/x", "lint levels"),
        ("cargo clippy -- -D -Clinker=x", "not a lint name"),
        ("cargo -C /tmp build", "another directory"),
        ("cargo build --target /tmp/evil.json", "names the linker"),
        ("cargo test --target=x.json", "names the linker"),
        ("cargo new /tmp/x", "writes `/tmp/x`"),
        ("cargo test a b", "one test-name filter"),
        ("cargo build extra", "does not know what this operand is"),
        (
            "cargo build -p --release",
            "does not take a word starting with `-`",
        ),
        ("cargo fmt -- --config-path /tmp/x", "not a rustfmt option"),
        ("cargo fmt -- src/main.rs", "writes `src/main.rs`"),
        ("cargo doc --open", "web browser"),
        ("cargo frobnicate", "not a `cargo` subcommand"),
        ("cargo build --relase", "not an option"),
        ("make -f /tmp/Makefile", "reads FILE as the makefile"),
        ("make -f -", "reads FILE as the makefile"),
        ("make --eval='$(shell id)'", "evaluates STRING"),
        ("make SHELL=/tmp/sh test", "sets a make variable"),
        ("make CC=sh", "sets a make variable"),
        ("make 'X!=id'", "expands or runs"),
        ("make 'X:=$(shell id)'", "expands or runs"),
        ("make -C /tmp/x", "another directory"),
        ("make --eva=x", "abbreviates `--eval`"),
        ("make --dir=/tmp", "abbreviates `--directory`"),
        ("make -I /tmp/inc", "included makefiles"),
        ("make -e", "environment variables"),
        ("cargo bench a b", "one test-name filter"),
        (
            "cargo install --git https://x/y",
            "`cargo install --git` builds and installs the crate at URL",
        ),
    ];

    /// Dangerous.
    const DANGEROUS: &[&str] = &[
        "cargo uninstall x",
        "cargo remove serde",
        "cargo rm serde",
        "cargo -q uninstall x",
    ];

    /// Not dangerous.
    const NOT_DANGEROUS: &[&str] = &["cargo add serde", "cargo build", "cargo clean"];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[
        &MAKE_HARMLESS,
        &MAKE_RUNS_THE_MAKEFILE,
        &CARGO_INFORMS,
        &COVERED,
        &REFUSED,
        &DANGEROUS,
        &NOT_DANGEROUS,
    ];

    #[test]
    fn only_make_queries_are_harmless() {
        for &c in MAKE_HARMLESS {
            assert!(read(c).harmless(), "{c:?}: {}", said(c));
        }
        for &c in MAKE_RUNS_THE_MAKEFILE {
            assert!(!read(c).harmless(), "{c:?} runs the makefile");
        }
    }

    #[test]
    fn no_cargo_command_is_harmless() {
        // rustup runs the toolchain rust-toolchain.toml names, even for `--version`.
        for &c in CARGO_INFORMS {
            let u = read(c);
            assert!(u.understood(), "{c:?}: {}", said(c));
            assert!(!u.harmless(), "{c:?} must not be harmless");
            assert!(
                said(c).contains("rust-toolchain.toml"),
                "{c:?}: {}",
                said(c)
            );
        }
        // What they do beyond that: only the workspace resolvers run rustc.
        assert!(said("cargo tree").contains("rustc-wrapper"));
        assert!(said("cargo metadata --format-version 1").contains("rustc-wrapper"));
        assert!(!said("cargo metadata --no-deps --format-version 1").contains("rustc-wrapper"));
        assert!(!said("cargo --version").contains("rustc-wrapper"));
    }

    #[test]
    fn globs_cover_the_projects_own_builds() {
        for &(c, literal) in COVERED {
            assert!(
                covered(c, literal),
                "{c:?} under {literal} literal words: {}",
                said(c)
            );
        }
    }

    #[test]
    fn globs_refuse_what_changes_cargo_or_make() {
        for &(c, what) in REFUSED {
            assert_refused(c, what);
        }
    }

    #[test]
    fn removing_packages_is_dangerous() {
        for &c in DANGEROUS {
            assert!(dangerous(c), "{c:?}: {}", said(c));
        }
        for &c in NOT_DANGEROUS {
            assert!(!dangerous(c), "{c:?}: {}", said(c));
        }
    }

    #[test]
    fn run_passes_everything_after_its_first_operand() {
        // clap's trailing_var_arg: `--release` here is the program's.
        assert!(covered("cargo run foo --manifest-path /x", 1));
        assert!(!covered("cargo run --manifest-path /x foo", 1));
    }

    #[test]
    fn toolchain_words_read_the_rest_as_cargo() {
        let s = said("cargo +nightly uninstall x");
        assert!(
            s.contains("another rustup toolchain") && s.contains("removes installed binaries"),
            "{s}"
        );
        let u = read("cargo +stable test -- --nocapture");
        assert!(
            u.understood(),
            "{}",
            said("cargo +stable test -- --nocapture")
        );
        assert!(
            u.glob_refusal(2, &[]).is_none(),
            "the rule named `cargo +stable`"
        );
    }

    #[test]
    fn install_list_only_lists() {
        assert!(!said("cargo install --list").contains("bin directory"));
        assert!(said("cargo install ripgrep").contains("bin directory"));
    }
}
