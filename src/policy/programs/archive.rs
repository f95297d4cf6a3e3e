//! GNU tar (1.34). tar parses with argp, which is `getopt_long` (any unambiguous prefix of
//! a long option: `tar --verb` is refused as ambiguous, `--verbo` is `--verbose`), and in
//! its old style a first word without a dash is a bundle of short options whose values
//! are the following words (`tar xzf a.tgz`). Its file names and `-C DIR` are taken in
//! order, so a name is relative to the `-C` options before it.
//!
//! What tar does depends on its one operation ([`tar_check`]): `-c`, `-r`, `-u` read
//! their operands as whole trees and write the archive; `-A` reads archives and writes
//! one; `--delete` rewrites the archive; `-t` and `--test-label` only read it; `-d` reads
//! it and the files it compares against; `-x` reads it and writes into the working
//! directory (or `-C DIR`), unless it extracts to standard output (`-O`) or to a
//! command. The archive (`-f`) is `-` (standard input or output) when not given; a name
//! with a `:` before any `/` is a remote archive that tar reaches by running `rsh`
//! (unless `--force-local`). Options that run programs (`-I`, `--to-command`, `-F`,
//! `--rsh-command`, `--checkpoint-action=exec=…`) are code; what destroys (`--remove-files`,
//! `--recursive-unlink`) or writes outside the target (`-P` when extracting,
//! `--overwrite` and `--keep-directory-symlink`, which write through symbolic links
//! already there) is danger.
//!
//! gzip (1.12) and xz (5.4) are `getopt_long` programs that turn each FILE into its
//! compressed (or decompressed) form in place: the file is written (replaced, its
//! original deleted unless `-k`); with `-c` (and as `zcat`, `xzcat`), `-l` or `-t` the
//! files are only read; with no file they filter standard input to standard output.

use super::profile::{BASE, Config, Effect, Profile, Reading, Role, Runs, Span, Syntax};

pub const PROFILES: &[&Profile] = &[
    &TAR, &GZIP, &GUNZIP, &ZCAT, &XZ, &UNXZ, &XZCAT, &LZMA, &UNLZMA, &LZCAT,
];

const TAR: Profile = Profile {
    names: &["tar", "gtar"],
    syntax: Syntax::Gnu,
    old_style: true,
    options: &[
        // Main operation mode.
        "-A, --catenate, --concatenate",
        "-c, --create",
        "--delete",
        "-d, --diff, --compare",
        "-r, --append",
        "--test-label",
        "-t, --list",
        "-u, --update",
        "-x, --extract, --get",
        // Operation modifiers.
        "--check-device",
        "-g, --listed-incremental=FILE  writes",
        "-G, --incremental",
        "--hole-detection=TYPE",
        "--ignore-failed-read",
        "--level=NUMBER",
        "--no-check-device",
        "--no-seek",
        "-n, --seek",
        "--occurrence[=NUMBER]",
        "--sparse-version=MAJOR[.MINOR]",
        "-S, --sparse",
        // Local file name selection.
        "--add-file=FILE",
        "-C, --directory=DIR",
        "--exclude=PATTERN",
        "--exclude-backups",
        "--exclude-caches",
        "--exclude-caches-all",
        "--exclude-caches-under",
        "--exclude-ignore=FILE",
        "--exclude-ignore-recursive=FILE",
        "--exclude-tag=FILE",
        "--exclude-tag-all=FILE",
        "--exclude-tag-under=FILE",
        "--exclude-vcs",
        "--exclude-vcs-ignores",
        "--no-null",
        "--no-recursion",
        "--no-unquote",
        "--no-verbatim-files-from",
        "--null",
        "--recursion",
        "-T, --files-from=FILE",
        "--unquote",
        "--verbatim-files-from",
        "-X, --exclude-from=FILE  reads",
        // File name matching.
        "--anchored",
        "--ignore-case",
        "--no-anchored",
        "--no-ignore-case",
        "--no-wildcards",
        "--no-wildcards-match-slash",
        "--wildcards",
        "--wildcards-match-slash",
        // Overwrite control.
        "--keep-directory-symlink  danger: extracts through symbolic links to directories already there, which can point anywhere",
        "--keep-newer-files",
        "-k, --keep-old-files",
        "--no-overwrite-dir",
        "--one-top-level[=DIR]",
        "--overwrite  danger: extracts into existing files, through symbolic links already there, which can point anywhere",
        "--overwrite-dir",
        "--recursive-unlink  danger: deletes whole existing directory trees before extracting over them",
        "--remove-files  danger: deletes the files it archives",
        "--skip-old-files",
        "-U, --unlink-first",
        "-W, --verify",
        // Output stream.
        "--ignore-command-error",
        "--no-ignore-command-error",
        "-O, --to-stdout",
        "--to-command=COMMAND  runs: runs COMMAND for every file extracted",
        // File attributes.
        "--atime-preserve[=METHOD]",
        "--clamp-mtime",
        "--delay-directory-restore",
        "--group=NAME",
        "--group-map=FILE  reads",
        "--mode=CHANGES",
        "--mtime=DATE_OR_FILE",
        "-m, --touch",
        "--no-delay-directory-restore",
        "--no-same-owner",
        "--no-same-permissions",
        "--numeric-owner",
        "--owner=NAME",
        "--owner-map=FILE  reads",
        "-p, --preserve-permissions, --same-permissions",
        "--same-owner",
        "--sort=ORDER",
        "-s, --preserve-order, --same-order",
        // Extended attributes.
        "--acls",
        "--no-acls",
        "--no-selinux",
        "--no-xattrs",
        "--selinux",
        "--xattrs",
        "--xattrs-exclude=MASK",
        "--xattrs-include=MASK",
        // Device selection and switching.
        "--force-local",
        "-f, --file=ARCHIVE",
        "-F, --info-script=NAME, --new-volume-script=NAME  runs: runs the script at the end of every volume",
        "-L, --tape-length=NUMBER",
        "-M, --multi-volume",
        "--rmt-command=COMMAND  code: runs COMMAND on the remote host for a remote archive",
        "--rsh-command=COMMAND  runs: runs COMMAND to reach a remote archive",
        "--volno-file=FILE  writes",
        // Device blocking.
        "-b, --blocking-factor=BLOCKS",
        "-B, --read-full-records",
        "-i, --ignore-zeros",
        "--record-size=NUMBER",
        // Archive format.
        "-H, --format=FORMAT",
        "--old-archive, --portability",
        "--pax-option=KEYWORDS",
        "--posix",
        "-V, --label=TEXT",
        // Compression: the standard compressors are harmless filters.
        "-a, --auto-compress",
        "-I, --use-compress-program=PROG  runs: runs PROG as the compressor",
        "-j, --bzip2",
        "-J, --xz",
        "--lzip",
        "--lzma",
        "--lzop",
        "--no-auto-compress",
        "--zstd",
        "-z, --gzip, --gunzip, --ungzip",
        "-Z, --compress, --uncompress",
        // Local file selection.
        "--backup[=CONTROL]",
        "--hard-dereference",
        "-h, --dereference",
        "-K, --starting-file=MEMBER_NAME",
        "--newer-mtime=DATE",
        "-N, --newer=DATE_OR_FILE, --after-date=DATE_OR_FILE",
        "--one-file-system",
        "-P, --absolute-names",
        "--suffix=STRING",
        // File name transformations.
        "--strip-components=NUMBER",
        "--transform=EXPRESSION, --xform=EXPRESSION",
        // Informative output.
        "--checkpoint[=NUMBER]",
        "--checkpoint-action=ACTION",
        "--full-time",
        "--index-file=FILE  writes",
        "-l, --check-links",
        "--no-quote-chars=STRING",
        "--quote-chars=STRING",
        "--quoting-style=STYLE",
        "-R, --block-number",
        "--show-defaults",
        "--show-omitted-dirs",
        "--show-snapshot-field-ranges",
        "--show-transformed-names, --show-stored-names",
        "--totals[=SIGNAL]",
        "--utc",
        "-v, --verbose",
        "--warning=KEYWORD",
        "-w, --interactive, --confirmation",
        // Compatibility, other.
        "-o",
        "-?, --help",
        "--restrict",
        "--usage",
        "--version",
    ],
    rest: Role::Text,
    check: Some(tar_check),
    config: Some(&TAR_CONFIG),
    ..BASE
};

/// GNU tar reads no file of its own; its environment adds options.
const TAR_CONFIG: Config = Config {
    files: &[],
    env: "`TAR_OPTIONS`: options read before the command's (`--to-command` there runs a program)",
    run_env: &[],
};

/// The operations, by their options' keys.
const OPERATIONS: &[&str] = &[
    "catenate",
    "create",
    "delete",
    "diff",
    "append",
    "test-label",
    "list",
    "update",
    "extract",
];

/// What prints and exits without an operation.
const INFORMATIVE: &[&str] = &[
    "help",
    "usage",
    "version",
    "show-defaults",
    "show-snapshot-field-ranges",
];

/// `DIR` after `-C` options so far: relative to the previous one unless absolute.
fn join(dir: &str, name: &str) -> String {
    if dir == "." || name.starts_with(['/', '~']) {
        name.to_string()
    } else {
        format!("{}/{name}", dir.trim_end_matches('/'))
    }
}

/// A remote archive, as tar's `_remdev` decides: a `:` that is not first, with no `/`
/// before it.
fn remote(archive: &str) -> bool {
    archive
        .find(':')
        .is_some_and(|i| i > 0 && !archive[..i].contains('/'))
}

/// A `--newer`/`--mtime` value names a file when it starts with `/` or `.`.
fn date_file(v: &str) -> bool {
    v.starts_with(['/', '.'])
}

fn tar_check(r: &mut Reading<'_>) {
    r.set_roles(&[], Role::Text);
    let mut found: Vec<(Effect, Span)> = Vec::new();
    // `--checkpoint-action=exec=COMMAND`: a shell command tar starts.
    let mut starts: Vec<(String, Span)> = Vec::new();
    // `-C` options in order: the word where each takes effect and the directory then.
    let mut dirs: Vec<(usize, String)> = Vec::new();
    let mut cur = ".".to_string();
    for g in r.given.iter().filter(|g| g.opt.key() == "directory") {
        if let Some(v) = g.value {
            cur = join(&cur, v);
            dirs.push((g.at.first, cur.clone()));
        }
    }
    let dir_at = |i: usize| -> String {
        dirs.iter()
            .rev()
            .find(|(at, _)| *at < i)
            .map_or_else(|| ".".to_string(), |(_, d)| d.clone())
    };

    for g in &r.given {
        let Some(v) = g.value else { continue };
        match g.opt.key() {
            "files-from" => found.push((
                Effect::Unknown(format!(
                    "`-T {v}` takes the names to archive or extract from a file execgate cannot see"
                )),
                g.at,
            )),
            "checkpoint-action" => {
                if let Some(command) = v.strip_prefix("exec=") {
                    starts.push((command.to_string(), g.at));
                } else if !(matches!(v, "." | "dot" | "bell" | "echo" | "totals")
                    || ["echo=", "ttyout=", "sleep=", "wait="]
                        .iter()
                        .any(|p| v.starts_with(p)))
                {
                    found.push((
                        Effect::Unknown(format!(
                            "`--checkpoint-action={v}` is not a checkpoint action execgate knows"
                        )),
                        g.at,
                    ));
                }
            }
            "newer" | "mtime" if date_file(v) => found.push((Effect::Reads(v.to_string()), g.at)),
            _ => {}
        }
    }
    for (command, at) in starts {
        r.starts(
            format!("`--checkpoint-action=exec` runs `{command}` at every checkpoint"),
            at,
            Runs::Script(command),
        );
    }

    if INFORMATIVE.iter().any(|k| r.has(k)) {
        for (e, at) in found {
            r.add(e, at);
        }
        return;
    }
    let modes: Vec<(&'static str, Span)> = r
        .given
        .iter()
        .filter(|g| OPERATIONS.contains(&g.opt.key()))
        .map(|g| (g.opt.key(), g.at))
        .collect();
    let mut distinct: Vec<&str> = modes.iter().map(|(k, _)| *k).collect();
    distinct.dedup();
    distinct.sort_unstable();
    distinct.dedup();
    let (mode, mode_at) = match (distinct.as_slice(), modes.first()) {
        ([one], Some(&(_, at))) => (*one, at),
        ([], _) => {
            if !r.stopped {
                let all = r.to_end(0);
                r.add(
                    Effect::Unknown(
                        "tar needs one operation (`-c`, `-x`, `-t`, …) and refuses the command without one"
                            .into(),
                    ),
                    all,
                );
            }
            for (e, at) in found {
                r.add(e, at);
            }
            return;
        }
        _ => {
            r.unknown(
                modes[1].1.first,
                "tar refuses more than one operation (`-c`, `-x`, `-t`, …)".into(),
            );
            for (e, at) in found {
                r.add(e, at);
            }
            return;
        }
    };

    // The archives: `-f` values, else standard input or output.
    let archives: Vec<(&str, Span)> = r
        .given
        .iter()
        .filter(|g| g.opt.key() == "file")
        .filter_map(|g| g.value.map(|v| (v, g.at)))
        .collect();
    let force_local = r.has("force-local");
    for &(archive, at) in &archives {
        if archive == "-" {
            continue;
        }
        if remote(archive) && !force_local {
            found.push((
                Effect::Code(format!(
                    "`-f {archive}` is a remote archive, which tar reaches by running `rsh` (or `--rsh-command`)"
                )),
                at,
            ));
            continue;
        }
        let effect = match mode {
            "create" | "append" | "update" | "catenate" | "delete" => {
                Effect::Writes(archive.to_string())
            }
            _ => Effect::Reads(archive.to_string()),
        };
        found.push((effect, at));
    }

    let operands: Vec<(usize, &str)> = r.operands.clone();
    match mode {
        "create" | "append" | "update" => {
            let added = r
                .given
                .iter()
                .filter(|g| g.opt.key() == "add-file")
                .filter_map(|g| g.value.map(|v| (g.at.first, v, g.at)));
            let named = operands.iter().map(|&(i, w)| (i, w, Span::one(i)));
            for (i, name, at) in named.chain(added) {
                found.push((Effect::ReadsTree(join(&dir_at(i), name)), at));
            }
        }
        "catenate" => {
            for &(i, name) in &operands {
                if name != "-" {
                    found.push((Effect::Reads(join(&dir_at(i), name)), Span::one(i)));
                }
            }
        }
        "extract" => {
            if r.has("absolute-names") {
                let at = r.given_of("absolute-names").map_or(mode_at, |g| g.at);
                found.push((
                    Effect::Danger(
                        "`-P` extracts members to the absolute paths they name, anywhere on the machine"
                            .into(),
                    ),
                    at,
                ));
            }
            if !r.has("to-stdout") && !r.has("to-command") {
                let first_dir = dirs.first().map(|(at, _)| *at);
                let before_any_dir = (operands.is_empty() && dirs.is_empty())
                    || operands
                        .iter()
                        .any(|&(i, _)| first_dir.is_none_or(|d| i < d));
                if before_any_dir {
                    found.push((Effect::Writes(".".into()), mode_at));
                }
                let at_of = |at: usize| {
                    r.given
                        .iter()
                        .find(|g| g.opt.key() == "directory" && g.at.first == at)
                        .map_or(mode_at, |g| g.at)
                };
                for (at, dir) in &dirs {
                    found.push((Effect::Writes(dir.clone()), at_of(*at)));
                }
                // `--one-top-level=DIR`: into DIR, under the last `-C`.
                if let Some(g) = r.given_of("one-top-level")
                    && let Some(v) = g.value
                {
                    let last = dirs.last().map_or(".", |(_, d)| d.as_str());
                    found.push((Effect::Writes(join(last, v)), g.at));
                }
            }
        }
        "diff" => {
            // Compares the members with the files they name under the directory.
            let mut seen: Vec<String> = Vec::new();
            if dirs.is_empty() {
                seen.push(".".into());
            }
            seen.extend(dirs.iter().map(|(_, d)| d.clone()));
            for d in seen {
                found.push((Effect::ReadsTree(d), mode_at));
            }
        }
        _ => {}
    }
    for (e, at) in found {
        r.add(e, at);
    }
}

const GZIP_OPTIONS: &[&str] = &[
    "-a, --ascii",
    "-c, --stdout, --to-stdout",
    "-d, --decompress, --uncompress",
    "-f, --force",
    "-h, --help",
    "-k, --keep",
    "-l, --list",
    "-L, --license",
    "-n, --no-name",
    "-N, --name",
    "-q, --quiet, --silent",
    "-r, --recursive",
    "--rsyncable",
    "-S, --suffix=SUF",
    "--synchronous",
    "-t, --test",
    "-v, --verbose",
    "-V, --version",
    "-1, --fast",
    "-2",
    "-3",
    "-4",
    "-5",
    "-6",
    "-7",
    "-8",
    "-9, --best",
];

const fn compressor(
    names: &'static [&'static str],
    options: &'static [&'static str],
    check: fn(&mut Reading<'_>),
) -> Profile {
    Profile {
        names,
        syntax: Syntax::Gnu,
        options,
        rest: Role::Text,
        check: Some(check),
        ..BASE
    }
}

const GZIP: Profile = Profile {
    config: Some(&GZIP_CONFIG),
    ..compressor(&["gzip"], GZIP_OPTIONS, compresses_in_place)
};
/// gunzip and zcat are gzip's scripts: `exec gzip -d "$@"`, `exec gzip -cd "$@"`.
const GUNZIP: Profile = Profile {
    config: Some(&GZIP_CONFIG),
    helpers: &["gzip"],
    ..compressor(&["gunzip"], GZIP_OPTIONS, compresses_in_place)
};
const ZCAT: Profile = Profile {
    config: Some(&GZIP_CONFIG),
    helpers: &["gzip"],
    ..compressor(&["zcat"], GZIP_OPTIONS, compresses_to_stdout)
};

/// gzip reads no configuration file; its environment adds options.
const GZIP_CONFIG: Config = Config {
    files: &[],
    env: "`GZIP` (options read before the command's; deprecated by gzip)",
    run_env: &[],
};

const XZ_OPTIONS: &[&str] = &[
    "-z, --compress",
    "-d, --decompress, --uncompress",
    "-t, --test",
    "-l, --list",
    "-k, --keep",
    "-f, --force",
    "-c, --stdout, --to-stdout",
    "--single-stream",
    "--no-sparse",
    "-S, --suffix=SUF",
    "--files[=FILE]  unknown",
    "--files0[=FILE]  unknown",
    "-F, --format=FMT",
    "-C, --check=CHECK",
    "--ignore-check",
    "-0",
    "-1",
    "-2",
    "-3",
    "-4",
    "-5",
    "-6",
    "-7",
    "-8",
    "-9",
    "--fast",
    "--best",
    "-e, --extreme",
    "-T, --threads=NUM",
    "--block-size=SIZE",
    "--block-list=SIZES",
    "--flush-timeout=TIMEOUT",
    "--memlimit-compress=LIMIT",
    "--memlimit-decompress=LIMIT",
    "--memlimit-mt-decompress=LIMIT",
    "-M, --memlimit=LIMIT, --memory=LIMIT",
    "--no-adjust",
    "--lzma1[=OPTS]",
    "--lzma2[=OPTS]",
    "--x86[=OPTS]",
    "--arm[=OPTS]",
    "--armthumb[=OPTS]",
    "--arm64[=OPTS]",
    "--powerpc[=OPTS]",
    "--ia64[=OPTS]",
    "--sparc[=OPTS]",
    "--delta[=OPTS]",
    "-q, --quiet",
    "-v, --verbose",
    "-Q, --no-warn",
    "--robot",
    "--info-memory",
    "-h, --help",
    "-H, --long-help",
    "-V, --version",
];

const XZ: Profile = Profile {
    config: Some(&XZ_CONFIG),
    ..compressor(&["xz"], XZ_OPTIONS, compresses_in_place)
};
const UNXZ: Profile = Profile {
    config: Some(&XZ_CONFIG),
    ..compressor(&["unxz"], XZ_OPTIONS, compresses_in_place)
};
const XZCAT: Profile = Profile {
    config: Some(&XZ_CONFIG),
    ..compressor(&["xzcat"], XZ_OPTIONS, compresses_to_stdout)
};

/// xz reads no configuration file; its environment adds options.
const XZ_CONFIG: Config = Config {
    files: &[],
    env: "`XZ_DEFAULTS`, `XZ_OPT` (options read before the command's)",
    run_env: &[],
};
const LZMA: Profile = Profile {
    config: Some(&XZ_CONFIG),
    ..compressor(&["lzma"], XZ_OPTIONS, compresses_in_place)
};
const UNLZMA: Profile = Profile {
    config: Some(&XZ_CONFIG),
    ..compressor(&["unlzma"], XZ_OPTIONS, compresses_in_place)
};
const LZCAT: Profile = Profile {
    config: Some(&XZ_CONFIG),
    ..compressor(&["lzcat"], XZ_OPTIONS, compresses_to_stdout)
};

/// gzip's and xz's files: replaced by their (de)compressed form, unless the output goes
/// to standard output or the files are only listed or tested.
fn compresses_in_place(r: &mut Reading<'_>) {
    let only_reads = [
        "stdout",
        "list",
        "test",
        "help",
        "long-help",
        "version",
        "license",
        "info-memory",
    ]
    .iter()
    .any(|k| r.has(k));
    compressed_files(r, only_reads);
}

/// `zcat`, `xzcat`, `lzcat`: always to standard output.
fn compresses_to_stdout(r: &mut Reading<'_>) {
    compressed_files(r, true);
}

fn compressed_files(r: &mut Reading<'_>, only_reads: bool) {
    let tree = r.has("recursive");
    let mut found: Vec<(Effect, Span)> = Vec::new();
    for &(i, file) in &r.operands {
        if file == "-" {
            continue;
        }
        let effect = match (only_reads, tree) {
            (true, false) => Effect::Reads(file.to_string()),
            (true, true) => Effect::ReadsTree(file.to_string()),
            (false, _) => Effect::Writes(file.to_string()),
        };
        found.push((effect, Span::one(i)));
    }
    for (e, at) in found {
        r.add(e, at);
    }
}

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::Effect;
    use super::super::testing::{Table, dangerous, read, said};

    /// tar that only informs: harmless.
    const TAR_INFORMS: &[&str] = &[
        "tar --help",
        "tar --version",
        "tar --usage",
        "tar --show-defaults",
    ];

    /// tar that lists or prints an archive: understood, for `tar *`, and exactly what it says.
    const TAR_LISTS: &[(&str, &str)] = &[
        ("tar -tzf a.tgz", "reads `a.tgz`"),
        ("tar tzf a.tgz", "reads `a.tgz`"),
        ("tar -tvf a.tar member/x", "reads `a.tar`"),
        ("tar --list --file=a.tar", "reads `a.tar`"),
        ("tar -xOf a.tar f", "reads `a.tar`"),
        ("tar -xzf a.tgz --to-stdout", "reads `a.tgz`"),
    ];

    /// tar that extracts: exactly what it says, and refused under `tar *`.
    const TAR_EXTRACTS: &[(&str, &str)] = &[
        ("tar -xzf a.tgz", "reads `a.tgz` | writes `.`"),
        ("tar xf a.tar", "reads `a.tar` | writes `.`"),
        ("tar xf a.tar -C out", "reads `a.tar` | writes `out`"),
        (
            "tar -C /tmp -x -f a.tar -C x",
            "reads `a.tar` | writes `/tmp` | writes `/tmp/x`",
        ),
        ("tar --extract --file a.tar", "reads `a.tar` | writes `.`"),
        ("tar --get -f a.tar", "reads `a.tar` | writes `.`"),
        (
            "tar -xf a.tar -C out --one-top-level=/etc",
            "reads `a.tar` | writes `out` | writes `/etc`",
        ),
    ];

    /// tar that runs code, and a phrase its reasons must contain.
    const TAR_RUNS: &[(&str, &str)] = &[
        (
            "tar --checkpoint=1 --checkpoint-action=exec=sh x.tar",
            "runs `sh` at every checkpoint",
        ),
        (
            "tar -I 'zstd -19' -cf a.tar.zst src",
            "runs PROG as the compressor",
        ),
        ("tar --use-compress-program=./evil -xf a", "runs PROG"),
        (
            "tar -xf a.tar --to-command='sh -c x'",
            "runs COMMAND for every file extracted",
        ),
        ("tar -F ./next.sh -cMf a.tar src", "runs the script"),
        ("tar -xf host:/a.tar", "remote archive"),
        ("tar -xf user@host:a.tar", "remote archive"),
        (
            "tar -xf a.tar --rsh-command=/tmp/x",
            "runs COMMAND to reach",
        ),
        (
            "tar -xf host:/a.tar --rmt-command=/tmp/x",
            "`tar --rmt-command` runs COMMAND on the remote host for a remote archive",
        ),
    ];

    /// tar that destroys.
    const TAR_DANGEROUS: &[&str] = &[
        "tar -xPf a.tar",
        "tar -x --absolute-names -f a.tar",
        "tar -czf a.tgz --remove-files src",
        "tar -xf a.tar --recursive-unlink",
        "tar -xf a.tar --overwrite",
        "tar -xf a.tar --keep-directory-symlink",
        "tar --remove-f -cf a.tar x",
    ];

    /// tar that does not.
    const TAR_NOT_DANGEROUS: &[&str] = &[
        "tar -cPf a.tar /etc/hosts",
        "tar -xkf a.tar",
        "tar -xUf a.tar",
    ];

    /// What tar refuses, or execgate cannot follow, and a phrase its reasons must contain.
    const TAR_REFUSED: &[(&str, &str)] = &[
        (
            "tar -czf a.tgz -T list",
            "takes the names to archive or extract from a file",
        ),
        ("tar -cxf a.tar", "more than one operation"),
        ("tar -f a.tar", "needs one operation"),
        ("tar --verb -cf a x", "abbreviates"),
        ("tar -cf a --frob x", "not an option"),
        ("tar qf a", "not an option"),
    ];

    /// Compressors on standard streams: harmless.
    const COMPRESSORS_HARMLESS: &[&str] = &[
        "gzip",
        "gzip -c",
        "gzip -dc -",
        "zcat",
        "xz -T0",
        "xzcat",
        "gzip --help",
        "xz -V",
    ];

    /// Compressors that only read files: exactly what they say, for `gzip *`.
    const COMPRESSORS_READ: &[(&str, &str)] = &[
        ("gzip -c big.log", "reads `big.log`"),
        ("zcat a.gz b.gz", "reads `a.gz` | reads `b.gz`"),
        ("gunzip -l a.gz", "reads `a.gz`"),
        ("xz -t a.xz", "reads `a.xz`"),
        ("xzcat a.xz", "reads `a.xz`"),
        ("gzip -rc dir", "reads everything under `dir`"),
        ("lzcat a.lzma", "reads `a.lzma`"),
    ];

    /// Compressors that write files, and a phrase their reasons must contain.
    const COMPRESSORS_WRITE: &[(&str, &str)] = &[
        ("gzip big.log", "writes `big.log`"),
        ("gunzip a.gz", "writes `a.gz`"),
        ("gzip -d -k a.gz", "writes `a.gz`"),
        ("xz -9e dump.sql", "writes `dump.sql`"),
        ("unxz a.xz", "writes `a.xz`"),
        ("gzip -r logs", "writes `logs`"),
        ("lzma dump.sql", "writes `dump.sql`"),
        ("unlzma a.lzma", "writes `a.lzma`"),
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[
        &TAR_INFORMS,
        &TAR_LISTS,
        &TAR_EXTRACTS,
        &TAR_RUNS,
        &TAR_DANGEROUS,
        &TAR_NOT_DANGEROUS,
        &TAR_REFUSED,
        &COMPRESSORS_HARMLESS,
        &COMPRESSORS_READ,
        &COMPRESSORS_WRITE,
    ];

    #[test]
    fn tar_informs_harmlessly() {
        for &c in TAR_INFORMS {
            assert!(read(c).harmless(), "{c:?}: {}", said(c));
        }
    }

    #[test]
    fn tar_listing_reads_the_archive_only() {
        for &(c, s) in TAR_LISTS {
            let u = read(c);
            assert!(u.understood() && !u.harmless(), "{c:?}: {}", said(c));
            assert_eq!(said(c), s, "{c:?}");
            assert_eq!(u.glob_refusal(1, &[]), None, "{c:?} is for `tar *`");
        }
        // Reading standard input is harmless.
        assert!(read("tar -tz").harmless(), "{}", said("tar -tz"));
        assert!(read("tar -t -f -").harmless());
        // A secret archive is refused by a wildcard.
        assert!(
            read("tar -tf ~/.ssh/keys.tar")
                .glob_refusal(1, &[])
                .is_some()
        );
    }

    #[test]
    fn tar_create_reads_trees_and_writes_the_archive() {
        assert_eq!(
            said("tar -czf out.tgz src README.md"),
            "writes `out.tgz` | reads everything under `src` | reads everything under `README.md`"
        );
        assert_eq!(
            said("tar czf out.tgz -C /home/u .ssh"),
            "writes `out.tgz` | reads secrets under `/home/u/.ssh`"
        );
        assert_eq!(
            said("tar -c -f - -C /home/u/.ssh . -C /etc passwd"),
            "reads secrets under `/home/u/.ssh/.` | reads everything under `/etc/passwd`"
        );
        // To standard output: only the reading is left, for `tar *` to cover.
        let u = read("tar -cz src");
        assert_eq!(said("tar -cz src"), "reads everything under `src`");
        assert_eq!(u.glob_refusal(1, &[]), None);
        assert!(read("tar -czf out.tgz src").glob_refusal(1, &[]).is_some());
        assert!(
            said("tar -rf a.tar new").contains("writes `a.tar` | reads everything under `new`")
        );
        assert!(said("tar -Af a.tar b.tar").contains("writes `a.tar` | reads `b.tar`"));
        assert!(said("tar --delete -f a.tar x").contains("writes `a.tar`"));
        assert!(said("tar -cf a.tar --add-file=-x").contains("reads everything under `-x`"));
    }

    #[test]
    fn tar_extract_writes_where_it_extracts() {
        for &(c, s) in TAR_EXTRACTS {
            assert_eq!(said(c), s, "{c:?}");
            assert!(read(c).glob_refusal(1, &[]).is_some(), "{c:?}");
        }
        // The rule's own words: `tar -xzf *` names the extraction.
        assert_eq!(read("tar -xzf a.tgz").glob_refusal(2, &[]), None);
        assert!(said("tar -df a.tar").contains("reads everything under `.`"));
    }

    #[test]
    fn tar_runs_code() {
        for &(c, what) in TAR_RUNS {
            let s = said(c);
            assert!(s.contains(what), "{c:?}: expected {what:?} in {s:?}");
            assert!(
                read(c)
                    .findings
                    .iter()
                    .any(|f| matches!(f.effect, Effect::Code(_))),
                "{c:?}"
            );
            assert!(read(c).glob_refusal(1, &[]).is_some(), "{c:?}");
        }
        // A colon after a slash, or with `--force-local`, is a local file.
        assert_eq!(said("tar -tf ./a:b"), "reads `./a:b`");
        assert_eq!(said("tar -tf a:b --force-local"), "reads `a:b`");
        assert!(!read("tar --checkpoint-action=frob -cf a.tar x").understood());
        assert!(read("tar --checkpoint=10 --checkpoint-action=dot -cf - x").understood());
    }

    #[test]
    fn tar_dangers() {
        for &c in TAR_DANGEROUS {
            assert!(dangerous(c), "{c:?}: {}", said(c));
        }
        assert!(said("tar -xPf a.tar").contains("absolute paths"));
        for &c in TAR_NOT_DANGEROUS {
            assert!(!dangerous(c), "{c:?}: {}", said(c));
        }
    }

    #[test]
    fn tar_refuses_what_tar_refuses() {
        for &(c, what) in TAR_REFUSED {
            let s = said(c);
            assert!(s.contains(what), "{c:?}: expected {what:?} in {s:?}");
            assert!(!read(c).understood(), "{c:?}");
            assert!(read(c).glob_refusal(1, &[]).is_some(), "{c:?}");
        }
        assert!(said("tar -X ex.txt -cf - src").contains("reads `ex.txt`"));
        assert!(said("tar -N ./stamp -cf - src").contains("reads `./stamp`"));
        assert!(!said("tar -N 2024-01-01 -cf - src").contains("2024"));
    }

    #[test]
    fn compressors() {
        for &c in COMPRESSORS_HARMLESS {
            assert!(read(c).harmless(), "{c:?}: {}", said(c));
        }
        for &(c, s) in COMPRESSORS_READ {
            assert_eq!(said(c), s, "{c:?}");
            assert_eq!(read(c).glob_refusal(1, &[]), None, "{c:?}");
        }
        for &(c, s) in COMPRESSORS_WRITE {
            assert!(said(c).contains(s), "{c:?}: {}", said(c));
            assert!(read(c).glob_refusal(1, &[]).is_some(), "{c:?}");
        }
        assert!(!read("xz --files=list").understood());
        assert!(said("gzip --std x").contains("abbreviates `--stdout`"));
        assert!(!read("gzip --frob x").understood());
    }
}
