//! GNU coreutils and the other small tools: the read-only ones step 8 may approve (used
//! without path operands, on standard input), and the file tools (`rm`, `cp`, `mv`,
//! `install`, `tee`, `chmod`, `chown`, …) whose every operand is a path written.
//!
//! Option lines follow each program's own `--help` (coreutils 9.1, procps, util-linux,
//! debianutils); `--help` and `--version` are known to every GNU-style program.

use super::profile::Role::{Input, Name, Nothing, Output, Read, Text, Tree, Write};
use super::profile::{BASE, Effect, Profile, Reading, Role, Span, Syntax};
use super::spec::Does;

pub const PROFILES: &[&Profile] = &[
    &LS,
    &CAT,
    &HEAD,
    &TAIL,
    &WC,
    &SORT,
    &UNIQ,
    &CUT,
    &TR,
    &NL,
    &TAC,
    &REV,
    &ECHO,
    &PRINTF,
    &TRUE,
    &EXPR,
    &DATE,
    &UNAME,
    &ID,
    &GROUPS,
    &WHOAMI,
    &HOSTNAME,
    &UPTIME,
    &NPROC,
    &FREE,
    &DF,
    &DU,
    &TTY,
    &PWD,
    &ARCH,
    &LOCALE,
    &LSB_RELEASE,
    &WHICH,
    &WHEREIS,
    &TYPE,
    &FILE,
    &STAT,
    &REALPATH,
    &READLINK,
    &BASENAME,
    &DIRNAME,
    &SEQ,
    &SLEEP,
    &PRINTENV,
    &SUMS,
    &B2SUM,
    &CMP,
    &DIFF,
    &COLUMN,
    &BASE64,
    &TREE,
    &RM,
    &CP,
    &MV,
    &INSTALL,
    &TEE,
    &CHMOD,
    &CHOWN,
    &LN,
    &MKDIR,
    &TOUCH,
    &RMDIR,
    &DD,
];

const LS: Profile = Profile {
    names: &["ls", "dir", "vdir"],
    options: &[
        "-a, --all",
        "-A, --almost-all",
        "--author",
        "-b, --escape",
        "--block-size=SIZE",
        "-B, --ignore-backups",
        "-c",
        "-C",
        "--color[=WHEN], --colour[=WHEN]",
        "-d, --directory",
        "-D, --dired",
        "-f",
        "-F, --classify[=WHEN]",
        "--file-type",
        "--format=WORD",
        "--full-time",
        "-g",
        "--group-directories-first",
        "-G, --no-group",
        "-h, --human-readable",
        "--si",
        "-H, --dereference-command-line",
        "--dereference-command-line-symlink-to-dir",
        "--hide=PATTERN",
        "--hyperlink[=WHEN]",
        "--indicator-style=WORD",
        "-i, --inode",
        "-I, --ignore=PATTERN",
        "-k, --kibibytes",
        "-l",
        "-L, --dereference",
        "-m",
        "-n, --numeric-uid-gid",
        "-N, --literal",
        "-o",
        "-p",
        "-q, --hide-control-chars",
        "--show-control-chars",
        "-Q, --quote-name",
        "--quoting-style=WORD",
        "-r, --reverse",
        "-R, --recursive  recurses",
        "-s, --size",
        "-S",
        "--sort=WORD",
        "--time=WORD",
        "--time-style=TIME_STYLE",
        "-t",
        "-T, --tabsize=COLS",
        "-u",
        "-U",
        "-v",
        "-w, --width=COLS",
        "-x",
        "-X",
        "-Z, --context",
        "--zero",
        "-1",
    ],
    rest: Read,
    ..BASE
};

const CAT: Profile = Profile {
    names: &["cat"],
    options: &[
        "-A, --show-all",
        "-b, --number-nonblank",
        "-e",
        "-E, --show-ends",
        "-n, --number",
        "-s, --squeeze-blank",
        "-t",
        "-T, --show-tabs",
        "-u",
        "-v, --show-nonprinting",
    ],
    rest: Input,
    ..BASE
};

const HEAD: Profile = Profile {
    names: &["head"],
    options: &[
        "-c, --bytes=NUM",
        "-n, --lines=NUM",
        "-q, --quiet, --silent",
        "-v, --verbose",
        "-z, --zero-terminated",
        "-NUM",
    ],
    rest: Input,
    ..BASE
};

const TAIL: Profile = Profile {
    names: &["tail"],
    options: &[
        "-c, --bytes=NUM",
        "-f, --follow[=HOW]  follows",
        "-F  follows",
        "-n, --lines=NUM",
        "--max-unchanged-stats=N",
        "--pid=PID",
        "-q, --quiet, --silent",
        "--retry",
        "-s, --sleep-interval=N",
        "-v, --verbose",
        "-z, --zero-terminated",
        "-NUM",
    ],
    rest: Input,
    ..BASE
};

const WC: Profile = Profile {
    names: &["wc"],
    options: &[
        "-c, --bytes",
        "-m, --chars",
        "-l, --lines",
        "--files0-from=F  unknown",
        "-L, --max-line-length",
        "-w, --words",
        "--total=WHEN",
    ],
    rest: Input,
    ..BASE
};

const SORT: Profile = Profile {
    names: &["sort"],
    options: &[
        "-b, --ignore-leading-blanks",
        "-d, --dictionary-order",
        "-f, --ignore-case",
        "-g, --general-numeric-sort",
        "-i, --ignore-nonprinting",
        "-M, --month-sort",
        "-h, --human-numeric-sort",
        "-n, --numeric-sort",
        "-R, --random-sort",
        "--random-source=FILE  reads",
        "-r, --reverse",
        "--sort=WORD",
        "-V, --version-sort",
        "--batch-size=NMERGE",
        "-c, --check[=WORD]",
        "-C",
        "--compress-program=PROG  runs: runs PROG to compress temporary files",
        "--debug",
        "--files0-from=F  unknown",
        "-k, --key=KEYDEF",
        "-m, --merge",
        "-o, --output=FILE  writes",
        "-s, --stable",
        "-S, --buffer-size=SIZE",
        "-t, --field-separator=SEP",
        "-T, --temporary-directory=DIR  writes",
        "--parallel=N",
        "-u, --unique",
        "-z, --zero-terminated",
    ],
    rest: Input,
    ..BASE
};

/// `uniq [INPUT [OUTPUT]]`: the second operand is written. `--group` and
/// `--all-repeated` take their value only with `=`.
const UNIQ: Profile = Profile {
    names: &["uniq"],
    options: &[
        "-c, --count",
        "-d, --repeated",
        "-D",
        "--all-repeated[=METHOD]",
        "-f, --skip-fields=N",
        "--group[=METHOD]",
        "-i, --ignore-case",
        "-s, --skip-chars=N",
        "-u, --unique",
        "-z, --zero-terminated",
        "-w, --check-chars=N",
    ],
    operands: &[Input, Output],
    rest: Nothing,
    ..BASE
};

const CUT: Profile = Profile {
    names: &["cut"],
    options: &[
        "-b, --bytes=LIST",
        "-c, --characters=LIST",
        "-d, --delimiter=DELIM",
        "-f, --fields=LIST",
        "-n",
        "--complement",
        "-s, --only-delimited",
        "--output-delimiter=STRING",
        "-z, --zero-terminated",
    ],
    rest: Input,
    ..BASE
};

const TR: Profile = Profile {
    names: &["tr"],
    options: &[
        "-c, -C, --complement",
        "-d, --delete",
        "-s, --squeeze-repeats",
        "-t, --truncate-set1",
    ],
    operands: &[Text, Text],
    rest: Nothing,
    ..BASE
};

const NL: Profile = Profile {
    names: &["nl"],
    options: &[
        "-b, --body-numbering=STYLE",
        "-d, --section-delimiter=CC",
        "-f, --footer-numbering=STYLE",
        "-h, --header-numbering=STYLE",
        "-i, --line-increment=NUMBER",
        "-l, --join-blank-lines=NUMBER",
        "-n, --number-format=FORMAT",
        "-p, --no-renumber",
        "-s, --number-separator=STRING",
        "-v, --starting-line-number=NUMBER",
        "-w, --number-width=NUMBER",
    ],
    rest: Input,
    ..BASE
};

const TAC: Profile = Profile {
    names: &["tac"],
    options: &["-b, --before", "-r, --regex", "-s, --separator=STRING"],
    rest: Input,
    ..BASE
};

const REV: Profile = Profile {
    names: &["rev"],
    options: &["-0, --zero", "-h, --help", "-V, --version"],
    rest: Read,
    ..BASE
};

/// The shell's `echo` reads no options but `-n`, `-e`, `-E` (each alone or together),
/// and prints every other word: every word is text.
const ECHO: Profile = Profile {
    names: &["echo"],
    syntax: Syntax::Operands,
    rest: Text,
    ..BASE
};

/// The shell's `printf FORMAT [ARGUMENT…]`; `-v VAR` assigns a shell variable, which
/// changes what later commands in the same line see.
const PRINTF: Profile = Profile {
    names: &["printf"],
    syntax: Syntax::Operands,
    rest: Text,
    check: Some(printf_check),
    ..BASE
};

fn printf_check(r: &mut Reading<'_>) {
    if r.words.get(1).is_some_and(|w| w.starts_with("-v")) {
        r.add(
            Effect::Config("`printf -v` sets a shell variable that later commands see".into()),
            Span::one(1),
        );
    }
}

/// `true` and `false` ignore their arguments.
const TRUE: Profile = Profile {
    names: &["true", "false", ":"],
    syntax: Syntax::Operands,
    rest: Text,
    ..BASE
};

const EXPR: Profile = Profile {
    names: &["expr"],
    syntax: Syntax::Operands,
    rest: Text,
    ..BASE
};

/// `date [+FORMAT]`; any other operand sets the clock.
const DATE: Profile = Profile {
    names: &["date"],
    options: &[
        "-d, --date=STRING",
        "--debug",
        "-f, --file=DATEFILE  reads",
        "-I[FMT], --iso-8601[=FMT]",
        "--resolution",
        "-R, --rfc-email",
        "--rfc-3339=FMT",
        "-r, --reference=FILE  reads",
        "-s, --set=STRING  config: sets the system clock",
        "-u, --utc, --universal",
    ],
    rest: Text,
    check: Some(date_check),
    ..BASE
};

fn date_check(r: &mut Reading<'_>) {
    let setters: Vec<(usize, &str)> = r
        .operands
        .iter()
        .filter(|(_, w)| !w.starts_with('+'))
        .copied()
        .collect();
    for (i, w) in setters {
        r.add(
            Effect::Config(format!("`date {w}` sets the system clock")),
            Span::one(i),
        );
    }
}

const UNAME: Profile = Profile {
    names: &["uname"],
    options: &[
        "-a, --all",
        "-s, --kernel-name",
        "-n, --nodename",
        "-r, --kernel-release",
        "-v, --kernel-version",
        "-m, --machine",
        "-p, --processor",
        "-i, --hardware-platform",
        "-o, --operating-system",
    ],
    ..BASE
};

const ID: Profile = Profile {
    names: &["id"],
    options: &[
        "-a",
        "-Z, --context",
        "-g, --group",
        "-G, --groups",
        "-n, --name",
        "-r, --real",
        "-u, --user",
        "-z, --zero",
    ],
    rest: Name,
    ..BASE
};

const GROUPS: Profile = Profile {
    names: &["groups"],
    rest: Name,
    ..BASE
};

const WHOAMI: Profile = Profile {
    names: &["whoami", "logname"],
    ..BASE
};

/// `hostname NAME` and `-F FILE` set the host name.
const HOSTNAME: Profile = Profile {
    names: &["hostname"],
    options: &[
        "-a, --alias",
        "-A, --all-fqdns",
        "-b, --boot  config: sets the host name",
        "-d, --domain",
        "-f, --fqdn, --long",
        "-F, --file=FILE  config: sets the host name from FILE",
        "-i, --ip-address",
        "-I, --all-ip-addresses",
        "-s, --short",
        "-y, --yp, --nis",
        "-V",
        "-h",
    ],
    rest: Role::Config("sets the host name"),
    ..BASE
};

const UPTIME: Profile = Profile {
    names: &["uptime"],
    options: &["-p, --pretty", "-s, --since", "-h", "-V"],
    ..BASE
};

const NPROC: Profile = Profile {
    names: &["nproc"],
    options: &["--all", "--ignore=N"],
    ..BASE
};

const FREE: Profile = Profile {
    names: &["free"],
    options: &[
        "-b, --bytes",
        "--kilo",
        "--mega",
        "--giga",
        "--tera",
        "--peta",
        "-k, --kibi",
        "-m, --mebi",
        "-g, --gibi",
        "--tebi",
        "--pebi",
        "-h, --human",
        "--si",
        "-l, --lohi",
        "-L, --line",
        "-t, --total",
        "-v, --committed",
        "-s, --seconds N  follows",
        "-c, --count N",
        "-w, --wide",
        "-V",
    ],
    ..BASE
};

/// `df [FILE…]`: a file names the filesystem it is on.
const DF: Profile = Profile {
    names: &["df"],
    options: &[
        "-a, --all",
        "-B, --block-size=SIZE",
        "-h, --human-readable",
        "-H, --si",
        "-i, --inodes",
        "-k",
        "-l, --local",
        "--no-sync",
        "--output[=FIELD_LIST]",
        "-P, --portability",
        "--sync",
        "--total",
        "-t, --type=TYPE",
        "-T, --print-type",
        "-x, --exclude-type=TYPE",
        "-v",
    ],
    rest: Read,
    ..BASE
};

/// `du` walks its operands, or the working directory, as whole trees.
const DU: Profile = Profile {
    names: &["du"],
    options: &[
        "-0, --null",
        "-a, --all",
        "--apparent-size",
        "-B, --block-size=SIZE",
        "-b, --bytes",
        "-c, --total",
        "-D, --dereference-args",
        "-d, --max-depth=N",
        "--files0-from=F  unknown",
        "-H",
        "-h, --human-readable",
        "--inodes",
        "-k",
        "-L, --dereference",
        "-l, --count-links",
        "-m",
        "-P, --no-dereference",
        "-S, --separate-dirs",
        "--si",
        "-s, --summarize",
        "-t, --threshold=SIZE",
        "--time[=WORD]",
        "--time-style=STYLE",
        "-X, --exclude-from=FILE  reads",
        "--exclude=PATTERN",
        "-x, --one-file-system",
    ],
    rest: Tree,
    check: Some(du_check),
    ..BASE
};

fn du_check(r: &mut Reading<'_>) {
    if r.operands.is_empty() && !r.stopped {
        r.add(Effect::ReadsTree(".".into()), Span::one(0));
    }
}

const TTY: Profile = Profile {
    names: &["tty"],
    options: &["-s, --silent, --quiet"],
    ..BASE
};

const PWD: Profile = Profile {
    names: &["pwd"],
    options: &["-L", "-P"],
    ..BASE
};

const ARCH: Profile = Profile {
    names: &["arch"],
    ..BASE
};

const LOCALE: Profile = Profile {
    names: &["locale"],
    options: &[
        "-a, --all-locales",
        "-m, --charmaps",
        "-c, --category-name",
        "-k, --keyword-name",
        "-v, --verbose",
        "-?",
        "--usage",
        "-V",
    ],
    rest: Name,
    // `-m` lists the character maps, reading the compressed ones through `gzip -dc`.
    helpers: &["gzip"],
    ..BASE
};

const LSB_RELEASE: Profile = Profile {
    names: &["lsb_release"],
    options: &[
        "-v, --version",
        "-i, --id",
        "-d, --description",
        "-r, --release",
        "-c, --codename",
        "-a, --all",
        "-s, --short",
        "-h",
    ],
    // Debian's is a shell script: it reads its options with `getopt` and formats
    // /etc/os-release's fields with `cut` and `tr` (and `cat` for its version).
    helpers: &["getopt", "cut", "tr", "cat"],
    ..BASE
};

/// `which NAME…` (debianutils): names are looked up in `PATH`.
const WHICH: Profile = Profile {
    names: &["which"],
    options: &["-a", "-s"],
    rest: Name,
    ..BASE
};

/// `whereis`: `-B`, `-M` and `-S` take lists of directories up to `-f`: not read here.
const WHEREIS: Profile = Profile {
    names: &["whereis"],
    options: &["-b", "-m", "-s", "-u", "-l", "-g", "-V"],
    rest: Name,
    ..BASE
};

/// The shell's `type NAME…`.
const TYPE: Profile = Profile {
    names: &["type"],
    options: &["-a", "-f", "-P", "-p", "-t"],
    rest: Name,
    ..BASE
};

const FILE: Profile = Profile {
    names: &["file"],
    options: &[
        "-v, --version",
        "-m, --magic-file=LIST  reads",
        "-z, --uncompress  code: runs decompression programs on the files",
        "-Z, --uncompress-noreport  code: runs decompression programs on the files",
        "-b, --brief",
        "-c, --checking-printout",
        "-e, --exclude=TEST",
        "--exclude-quiet=TEST",
        "-f, --files-from=FILE  unknown",
        "-F, --separator=STRING",
        "-i, --mime",
        "--apple",
        "--extension",
        "--mime-type",
        "--mime-encoding",
        "-k, --keep-going",
        "-l, --list",
        "-L, --dereference",
        "-h, --no-dereference",
        "-n, --no-buffer",
        "-N, --no-pad",
        "-0, --print0",
        "-p, --preserve-date",
        "-P, --parameter=NAME",
        "-r, --raw",
        "-s, --special-files",
        "-S, --no-sandbox",
        "-C, --compile  writes",
        "-d, --debug",
    ],
    rest: Input,
    ..BASE
};

const STAT: Profile = Profile {
    names: &["stat"],
    options: &[
        "-L, --dereference",
        "-f, --file-system",
        "--cached=MODE",
        "-c, --format=FORMAT",
        "--printf=FORMAT",
        "-t, --terse",
    ],
    rest: Read,
    ..BASE
};

const REALPATH: Profile = Profile {
    names: &["realpath"],
    options: &[
        "-e, --canonicalize-existing",
        "-m, --canonicalize-missing",
        "-L, --logical",
        "-P, --physical",
        "-q, --quiet",
        "--relative-to=DIR  reads",
        "--relative-base=DIR  reads",
        "-s, --strip, --no-symlinks",
        "-z, --zero",
    ],
    rest: Read,
    ..BASE
};

const READLINK: Profile = Profile {
    names: &["readlink"],
    options: &[
        "-f, --canonicalize",
        "-e, --canonicalize-existing",
        "-m, --canonicalize-missing",
        "-n, --no-newline",
        "-q, --quiet",
        "-s, --silent",
        "-v, --verbose",
        "-z, --zero",
    ],
    rest: Read,
    ..BASE
};

/// `basename` and `dirname` only compute with their text; they read no file.
const BASENAME: Profile = Profile {
    names: &["basename"],
    options: &["-a, --multiple", "-s, --suffix=SUFFIX", "-z, --zero"],
    rest: Text,
    ..BASE
};

const DIRNAME: Profile = Profile {
    names: &["dirname"],
    options: &["-z, --zero"],
    rest: Text,
    ..BASE
};

const SEQ: Profile = Profile {
    names: &["seq"],
    syntax: Syntax::GnuInOrder,
    options: &[
        "-f, --format=FORMAT",
        "-s, --separator=STRING",
        "-w, --equal-width",
        "-NUM",
    ],
    rest: Text,
    ..BASE
};

const SLEEP: Profile = Profile {
    names: &["sleep"],
    rest: Text,
    ..BASE
};

/// `printenv` prints the environment, which may hold secrets.
const PRINTENV: Profile = Profile {
    names: &["printenv", "env-print"],
    options: &["-0, --null"],
    rest: Name,
    does: Does::Env("prints the environment, which may hold secrets"),
    ..BASE
};

/// Checksums. `--check` reads the files named inside its operands.
const SUMS: Profile = Profile {
    names: &[
        "md5sum",
        "sha1sum",
        "sha224sum",
        "sha256sum",
        "sha384sum",
        "sha512sum",
        "cksum",
    ],
    options: &[
        "-b, --binary",
        "-c, --check  unknown",
        "--tag",
        "-t, --text",
        "-z, --zero",
        "--ignore-missing",
        "--quiet",
        "--status",
        "--strict",
        "-w, --warn",
    ],
    rest: Input,
    ..BASE
};

const B2SUM: Profile = Profile {
    names: &["b2sum"],
    options: &[
        "-b, --binary",
        "-c, --check  unknown",
        "-l, --length=BITS",
        "--tag",
        "-t, --text",
        "-z, --zero",
        "--ignore-missing",
        "--quiet",
        "--status",
        "--strict",
        "-w, --warn",
    ],
    rest: Input,
    ..BASE
};

const CMP: Profile = Profile {
    names: &["cmp"],
    options: &[
        "-b, --print-bytes",
        "-i, --ignore-initial=SKIP",
        "-l, --verbose",
        "-n, --bytes=LIMIT",
        "-s, --quiet, --silent",
        "-v",
    ],
    operands: &[Input, Input, Text, Text],
    rest: Nothing,
    ..BASE
};

const DIFF: Profile = Profile {
    names: &["diff"],
    options: &[
        "--normal",
        "-q, --brief",
        "-s, --report-identical-files",
        "-c",
        "-C NUM, --context[=NUM]",
        "-u",
        "-U NUM, --unified[=NUM]",
        "-e, --ed",
        "-n, --rcs",
        "-y, --side-by-side",
        "-W, --width=NUM",
        "--left-column",
        "--suppress-common-lines",
        "-p, --show-c-function",
        "-F, --show-function-line=RE",
        "--label=LABEL",
        "-t, --expand-tabs",
        "-T, --initial-tab",
        "--tabsize=NUM",
        "--suppress-blank-empty",
        "-l, --paginate  code: runs `pr` on the output",
        "-r, --recursive  recurses",
        "--no-dereference",
        "-N, --new-file",
        "--unidirectional-new-file",
        "--ignore-file-name-case",
        "--no-ignore-file-name-case",
        "-x, --exclude=PAT",
        "-X, --exclude-from=FILE  reads",
        "-S, --starting-file=FILE",
        "--from-file=FILE1  reads",
        "--to-file=FILE2  reads",
        "-i, --ignore-case",
        "-E, --ignore-tab-expansion",
        "-Z, --ignore-trailing-space",
        "-b, --ignore-space-change",
        "-w, --ignore-all-space",
        "-B, --ignore-blank-lines",
        "-I, --ignore-matching-lines=RE",
        "-a, --text",
        "--strip-trailing-cr",
        "-D, --ifdef=NAME",
        "--line-format=LFMT",
        "--old-line-format=LFMT",
        "--new-line-format=LFMT",
        "--unchanged-line-format=LFMT",
        "--old-group-format=GFMT",
        "--new-group-format=GFMT",
        "--unchanged-group-format=GFMT",
        "--changed-group-format=GFMT",
        "-d, --minimal",
        "--horizon-lines=NUM",
        "--speed-large-files",
        "--color[=WHEN]",
        "--palette=PALETTE",
        "-v",
    ],
    rest: Input,
    ..BASE
};

const COLUMN: Profile = Profile {
    names: &["column"],
    options: &[
        "-J, --json",
        "-c, --output-width=WIDTH",
        "-d, --table-noheadings",
        "-e, --table-header-repeat",
        "-E, --table-noextreme=COLUMNS",
        "-H, --table-hide=COLUMNS",
        "-i, --tree-id=COLUMN",
        "-l, --table-columns-limit=NUM",
        "-L, --keep-empty-lines",
        "-n, --table-name=NAME",
        "-N, --table-columns=NAMES",
        "-o, --output-separator=STRING",
        "-O, --table-order=COLUMNS",
        "-p, --tree-parent=COLUMN",
        "-r, --tree=COLUMN",
        "-R, --table-right=COLUMNS",
        "-s, --separator=STRING",
        "-t, --table",
        "-T, --table-truncate=COLUMNS",
        "-W, --table-wrap=COLUMNS",
        "-x, --fillrows",
        "-V",
    ],
    rest: Read,
    ..BASE
};

/// `base64`, `base32`, `basenc`: encode or decode standard input (or a file).
const BASE64: Profile = Profile {
    names: &["base64", "base32", "basenc"],
    options: &[
        "-d, --decode",
        "-i, --ignore-garbage",
        "-w, --wrap=COLS",
        "--base64",
        "--base64url",
        "--base58",
        "--base32",
        "--base32hex",
        "--base16",
        "--base2msbf",
        "--base2lsbf",
        "-z",
        "--z85",
    ],
    rest: Input,
    ..BASE
};

/// `tree` lists the working directory (or its operands) as whole trees.
const TREE: Profile = Profile {
    names: &["tree"],
    options: &[
        "-a",
        "-d",
        "-l",
        "-f",
        "-x",
        "-L LEVEL",
        "-R",
        "-P PATTERN",
        "-I PATTERN",
        "--gitignore",
        "--ignore-case",
        "--matchdirs",
        "--metafirst",
        "--prune",
        "--info",
        "--infofile=FILE  reads",
        "--noreport",
        "--charset=CHARSET",
        "--filelimit=N",
        "-o FILENAME  writes",
        "-q",
        "-N",
        "-Q",
        "-p",
        "-u",
        "-g",
        "-s",
        "-h",
        "--si",
        "--du",
        "-D",
        "--timefmt=FORMAT",
        "--inodes",
        "--device",
        "-F",
        "-v",
        "-t",
        "-c",
        "-U",
        "-r",
        "--dirsfirst",
        "--filesfirst",
        "--sort=TYPE",
        "-i",
        "-A",
        "-S",
        "-n",
        "-C",
        "-X",
        "-J",
        "-H BASEHREF",
        "-T TITLE",
        "--nolinks",
        "--fromfile  unknown",
        "--fromtabfile  unknown",
    ],
    rest: Tree,
    check: Some(du_check),
    ..BASE
};

// ── The file tools: every operand is a path written (or read, for sources) ───────────

/// `rm`: every operand is deleted.
const RM: Profile = Profile {
    names: &["rm", "unlink"],
    options: &[
        "-f, --force  danger: deletes without asking, ignoring missing files",
        "-i",
        "-I",
        "--interactive[=WHEN]",
        "--one-file-system",
        "--no-preserve-root  danger: deletes without protecting `/`",
        "--preserve-root[=all]",
        "-r, -R, --recursive  danger: deletes whole directory trees",
        "-d, --dir",
        "-v, --verbose",
    ],
    rest: Write,
    does: Does::Repo("changes files"),
    ..BASE
};

const CP_OPTIONS: &[&str] = &[
    "-a, --archive  recurses",
    "--attributes-only",
    "-b",
    "--backup[=CONTROL]",
    "--copy-contents",
    "-d",
    "--debug",
    "-f, --force",
    "-i, --interactive",
    "-H",
    "-l, --link",
    "-L, --dereference",
    "-n, --no-clobber",
    "-P, --no-dereference",
    "-p",
    "--preserve[=ATTR_LIST]",
    "--no-preserve=ATTR_LIST",
    "--parents",
    "-R, -r, --recursive  recurses",
    "--reflink[=WHEN]",
    "--remove-destination",
    "--sparse=WHEN",
    "--strip-trailing-slashes",
    "-s, --symbolic-link",
    "-S, --suffix=SUFFIX",
    "-t, --target-directory=DIRECTORY  writes",
    "-T, --no-target-directory",
    "-u, --update[=UPDATE]",
    "-v, --verbose",
    "-x, --one-file-system",
    "-Z",
    "--context[=CTX]",
];

/// `cp SOURCE… DEST` or `cp -t DIR SOURCE…`.
const CP: Profile = Profile {
    names: &["cp"],
    options: CP_OPTIONS,
    rest: Read,
    check: Some(last_is_written),
    does: Does::Repo("changes files"),
    ..BASE
};

/// `mv` deletes its sources and writes its destination.
const MV: Profile = Profile {
    names: &["mv"],
    options: &[
        "-b",
        "--backup[=CONTROL]",
        "--debug",
        "-f, --force",
        "-i, --interactive",
        "-n, --no-clobber",
        "--no-copy",
        "--strip-trailing-slashes",
        "-S, --suffix=SUFFIX",
        "-t, --target-directory=DIRECTORY  writes",
        "-T, --no-target-directory",
        "-u, --update[=UPDATE]",
        "-v, --verbose",
        "-Z, --context",
    ],
    rest: Write,
    does: Does::Repo("changes files"),
    ..BASE
};

const INSTALL: Profile = Profile {
    names: &["install"],
    options: &[
        "--backup[=CONTROL]",
        "-b",
        "-c",
        "-C, --compare",
        "-d, --directory",
        "-D",
        "--debug",
        "-g, --group=GROUP",
        "-m, --mode=MODE",
        "-o, --owner=OWNER",
        "-p, --preserve-timestamps",
        "-s, --strip  code: runs `strip` on the files",
        "--strip-program=PROGRAM  runs: runs PROGRAM on the files",
        "-S, --suffix=SUFFIX",
        "-t, --target-directory=DIRECTORY  writes",
        "-T, --no-target-directory",
        "-v, --verbose",
        "--preserve-context",
        "-Z",
        "--context[=CTX]",
    ],
    rest: Read,
    check: Some(install_check),
    does: Does::Repo("changes files"),
    ..BASE
};

/// Sources are read and the last operand written, unless `-t DIR` names the target.
fn last_is_written(r: &mut Reading<'_>) {
    if !r.has("target-directory") {
        r.set_roles(&[], Read);
        if let Some(&(i, w)) = r.operands.last()
            && r.operands.len() > 1
        {
            r.add(Effect::Writes(w.to_string()), Span::one(i));
            r.operands.pop();
        }
    }
}

fn install_check(r: &mut Reading<'_>) {
    if r.has("directory") {
        r.set_roles(&[], Write);
    } else {
        last_is_written(r);
    }
}

const TEE: Profile = Profile {
    names: &["tee"],
    options: &[
        "-a, --append",
        "-i, --ignore-interrupts",
        "-p",
        "--output-error[=MODE]",
    ],
    rest: Write,
    does: Does::Repo("changes files"),
    ..BASE
};

/// `chmod MODE FILE…`: a mode written like an option (`-x`) is not read here.
const CHMOD: Profile = Profile {
    names: &["chmod"],
    options: &[
        "-c, --changes",
        "-f, --silent, --quiet",
        "-v, --verbose",
        "--no-preserve-root  danger: changes `/` recursively",
        "--preserve-root",
        "--reference=RFILE  reads",
        "-R, --recursive  danger: changes permissions of whole trees",
    ],
    operands: &[Text],
    rest: Write,
    check: Some(mode_from_reference),
    does: Does::Repo("changes files"),
    ..BASE
};

const CHOWN: Profile = Profile {
    names: &["chown", "chgrp"],
    options: &[
        "-c, --changes",
        "-f, --silent, --quiet",
        "-v, --verbose",
        "--dereference",
        "-h, --no-dereference",
        "--from=CURRENT_OWNER:CURRENT_GROUP",
        "--no-preserve-root  danger: changes `/` recursively",
        "--preserve-root",
        "--reference=RFILE  reads",
        "-R, --recursive  danger: changes ownership of whole trees",
        "-H",
        "-L",
        "-P",
    ],
    operands: &[Text],
    rest: Write,
    check: Some(mode_from_reference),
    does: Does::Repo("changes files"),
    ..BASE
};

/// With `--reference`, there is no MODE or OWNER operand: every operand is a file.
fn mode_from_reference(r: &mut Reading<'_>) {
    if r.has("reference") {
        r.set_roles(&[], Write);
    }
}

const LN: Profile = Profile {
    names: &["ln"],
    options: &[
        "--backup[=CONTROL]",
        "-b",
        "-d, -F, --directory",
        "-f, --force",
        "-i, --interactive",
        "-L, --logical",
        "-n, --no-dereference",
        "-P, --physical",
        "-r, --relative",
        "-s, --symbolic",
        "-S, --suffix=SUFFIX",
        "-t, --target-directory=DIRECTORY  writes",
        "-T, --no-target-directory",
        "-v, --verbose",
    ],
    rest: Read,
    check: Some(last_is_written),
    does: Does::Repo("changes files"),
    ..BASE
};

const MKDIR: Profile = Profile {
    names: &["mkdir"],
    options: &[
        "-m, --mode=MODE",
        "-p, --parents",
        "-v, --verbose",
        "-Z",
        "--context[=CTX]",
    ],
    rest: Write,
    does: Does::Repo("changes files"),
    ..BASE
};

const TOUCH: Profile = Profile {
    names: &["touch"],
    options: &[
        "-a",
        "-c, --no-create",
        "-d, --date=STRING",
        "-f",
        "-h, --no-dereference",
        "-m",
        "-r, --reference=FILE  reads",
        "-t STAMP",
        "--time=WORD",
    ],
    rest: Write,
    does: Does::Repo("changes files"),
    ..BASE
};

const RMDIR: Profile = Profile {
    names: &["rmdir"],
    options: &[
        "--ignore-fail-on-non-empty",
        "-p, --parents",
        "-v, --verbose",
    ],
    rest: Write,
    does: Does::Repo("changes files"),
    ..BASE
};

/// `dd` reads `if=` and writes `of=`; its other operands are numbers and flags.
const DD: Profile = Profile {
    names: &["dd"],
    syntax: Syntax::Operands,
    rest: Text,
    check: Some(dd_check),
    does: Does::Repo("changes files"),
    ..BASE
};

fn dd_check(r: &mut Reading<'_>) {
    const KEYS: &[&str] = &[
        "bs", "cbs", "conv", "count", "ibs", "iflag", "obs", "oflag", "seek", "oseek", "skip",
        "iseek", "status",
    ];
    let operands = r.operands.clone();
    for (i, w) in operands {
        match w.split_once('=') {
            Some(("if", path)) => r.add(Effect::Reads(path.into()), Span::one(i)),
            Some(("of", path)) => r.add(Effect::Writes(path.into()), Span::one(i)),
            Some((key, _)) if KEYS.contains(&key) => {}
            _ => r.unknown(i, format!("`{w}` is not a `dd` operand execgate knows")),
        }
    }
    r.operands.clear();
}

#[cfg(test)]
pub(in crate::policy::programs) mod tests {
    use super::super::testing::{Table, read, said};

    /// Harmless: standard streams, text operands, names that are not paths.
    const HARMLESS: &[&str] = &[
        "cat",
        "cat -",
        "sort -n",
        "wc -l",
        "head -c 10",
        "tail -n 3",
        "base64",
        "base64 -d",
        "base64 -w0",
        "echo hello /etc/passwd --weird -x",
        "printf '%s\\n' a b",
        "basename /a/b/c.txt .txt",
        "dirname /a/b",
        "date +%Y-%m-%d",
        "date -u",
        "seq 1 10",
        "seq -w 1 10",
        "expr 1 + 2",
        "true --anything",
        "sleep 1",
        "tr a-z A-Z",
        "tr -d '\\r'",
        "which cargo",
        "type -a ls",
        "id -u",
        "id root",
        "locale -a",
    ];

    /// Not harmless, and a phrase the reasons must contain (in any case).
    const NOT_HARMLESS: &[(&str, &str)] = &[
        ("cat README.md", "reads `README.md`"),
        ("ls -R", "reads everything under `.`"),
        ("ls -R src", "reads everything under `src`"),
        ("du", "everything under `.`"),
        ("du -sh", "everything under `.`"),
        ("tree -L 2", "everything under `.`"),
        ("base64 secret.bin", "reads `secret.bin`"),
        ("date -r F", "reads `F`"),
        ("cat /home/u/.ssh/id_rsa", "reads a secret"),
        ("wc --files0-from=list", "does not vouch"),
        // An option that writes without a value names its own file.
        ("file -C", "writes"),
        ("file --compile", "writes"),
        ("date 010112002020", "sets the system clock"),
        ("printf -v x hi", "sets a shell variable"),
        ("hostname evil", "sets the host name"),
        ("printenv", "prints the environment"),
        ("printenv HOME", "prints the environment"),
        ("which ./x", "reads `./x`"),
        ("cp a b", "writes `b`"),
        ("cp -t dir a b", "writes `dir`"),
        ("cp -r src dst", "reads everything under `src`"),
        ("mv a b", "writes `a`"),
        ("tee -a log", "writes `log`"),
        ("install -D a /usr/local/bin/a", "writes `/usr/local/bin/a`"),
        ("install -d x", "writes `x`"),
        ("install -s a b", "runs `strip`"),
        ("chmod 644 f", "writes `f`"),
        ("chmod --reference=a b", "reads `a`"),
        ("chown -R u dir", "whole trees"),
        ("rm -rf x", "whole directory trees"),
        ("rm -fr x", "without asking"),
        ("dd if=a of=b bs=1M", "writes `b`"),
        ("dd if=a of=b frob=1", "`frob=1` is not a `dd` operand"),
        ("touch -r ref f", "reads `ref`"),
        // Even without operands (an error), the file tools are never step-8 safe.
        ("rm", "changes files"),
        ("cp", "changes files"),
        (
            "rm -rf --no-preserve-root /",
            "`rm --no-preserve-root` deletes without protecting `/`",
        ),
        (
            "chmod -R 755 dir",
            "`chmod --recursive` changes permissions of whole trees",
        ),
        (
            "chmod -R --no-preserve-root 755 /",
            "`chmod --no-preserve-root` changes `/` recursively",
        ),
        (
            "chown -R --no-preserve-root u /",
            "`chown --no-preserve-root` changes `/` recursively",
        ),
        ("diff -l a b", "`diff --paginate` runs `pr` on the output"),
        (
            "file -z a.gz",
            "`file --uncompress` runs decompression programs on the files",
        ),
        (
            "file -Z a.gz",
            "`file --uncompress-noreport` runs decompression programs on the files",
        ),
        (
            "install -s --strip-program=./strip.sh a b",
            "`install --strip-program` runs PROGRAM on the files",
        ),
        ("ln -s target link", "writes `link`"),
        (
            "sort --compress-program=gzip big.txt",
            "`sort --compress-program` runs PROG to compress temporary files",
        ),
    ];

    /// Every table above, for the test that every option and check has a case
    /// (`programs::tests`).
    pub(in crate::policy::programs) const TABLES: &[&dyn Table] = &[&HARMLESS, &NOT_HARMLESS];

    #[test]
    fn harmless() {
        for &c in HARMLESS {
            let u = read(c);
            assert!(u.harmless(), "{c:?} should be harmless: {:?}", u.findings);
        }
    }

    #[test]
    fn what_is_not_harmless_and_why() {
        for &(c, what) in NOT_HARMLESS {
            let s = said(c);
            assert!(
                s.to_lowercase().contains(&what.to_lowercase()),
                "{c:?}: expected {what:?} in {s:?}"
            );
            assert!(!read(c).harmless(), "{c:?} must not be harmless");
        }
    }
}
