//! The reader, case by case: each line a command and what execgate must make of it.

use super::*;

use std::collections::HashMap;

use super::testing::{read, said};

macro_rules! harmless {
    ($($cmd:expr),* $(,)?) => {$(
        let u = read($cmd);
        assert!(u.harmless(), "{:?} should be harmless: {:?}", $cmd, u.findings);
    )*};
}

macro_rules! finds {
    ($($cmd:expr => $what:expr),* $(,)?) => {$(
        let s = said($cmd);
        assert!(
            s.to_lowercase().contains(&$what.to_lowercase()),
            "{:?}: expected {:?} in {:?}", $cmd, $what, s
        );
        assert!(!read($cmd).harmless(), "{:?} must not be harmless", $cmd);
    )*};
}

#[test]
fn every_profile_compiles() {
    assert_eq!(profile_errors(), Vec::<String>::new());
}

#[test]
fn optional_values_are_only_ever_attached() {
    // `--group` takes its value only with `=`: `-` and FILE are uniq's INPUT and OUTPUT.
    finds!("uniq --group - --group FILE" => "writes `FILE`");
    harmless!("uniq --group=separate", "uniq -c");
    finds!("uniq in out" => "writes `out`");
    // `--color` likewise: FILE is grep's file operand, not the colour.
    finds!("grep '' --color FILE" => "reads `FILE`");
    harmless!("grep --color=always x");
    // `-F` takes no value even though `--classify` may.
    harmless!("ls -F", "ls --classify=auto");
    finds!("ls -F x" => "reads `x`");
    finds!("sort -cr x" => "reads `x`");
}

#[test]
fn attached_short_values() {
    // `-e.`: the pattern is `.`, FILE is an operand.
    finds!("grep -e. FILE" => "reads `FILE`");
    harmless!(
        "grep -e.",
        "head -n5",
        "head -5",
        "cut -d, -f1",
        "sort -k2 -t:"
    );
    finds!("sort -ofile" => "writes `file`");
    finds!("sort -o file" => "writes `file`");
    finds!("sort -rofile" => "writes `file`");
}

#[test]
fn abbreviations_are_recognised_and_never_harmless() {
    finds!("sort --compress-prog=sh" => "abbreviates `--compress-program`");
    finds!("sort --outp=x" => "abbreviates `--output`");
    finds!("rm --recur x" => "read as `--recursive`");
    finds!("ls --al" => "abbreviates");
    // Ambiguous: `--s` could be several; the program refuses it, execgate asks.
    finds!("sort --s" => "abbreviates");
    // Exact names win over prefixes.
    harmless!("ls --all", "sort --stable");
}

#[test]
fn unknown_options_and_operands() {
    finds!("sort --totally-unknown=1" => "not an option execgate knows");
    finds!("tr -S a b" => "`-S` is not an option");
    finds!("uname x" => "does not know what this operand is");
    finds!("ls -Q9" => "`-9` (in `-Q9`)");
    finds!("head -n" => "needs a value");
    finds!("ls --all=x" => "takes no value");
}

#[test]
fn paths_recursion_and_stdin() {
    harmless!(
        "cat",
        "cat -",
        "sort -n",
        "wc -l",
        "head -c 10",
        "tail -n 3"
    );
    finds!("cat README.md" => "reads `README.md`");
    finds!("ls -R" => "reads everything under `.`");
    finds!("ls -R src" => "reads everything under `src`");
    finds!("du" => "everything under `.`");
    finds!("du -sh" => "everything under `.`");
    finds!("tree -L 2" => "everything under `.`");
    harmless!("base64", "base64 -d", "base64 -w0");
    finds!("base64 secret.bin" => "reads `secret.bin`");
    finds!("date -r F" => "reads `F`");
    finds!("cat /home/u/.ssh/id_rsa" => "reads a secret");
    finds!("wc --files0-from=list" => "does not vouch");
    // An option that writes without a value names its own file.
    finds!("file -C" => "writes");
    finds!("file --compile" => "writes");
}

#[test]
fn text_operands_are_text() {
    harmless!(
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
    );
    finds!("date 010112002020" => "sets the system clock");
    finds!("printf -v x hi" => "sets a shell variable");
    finds!("hostname evil" => "sets the host name");
    finds!("printenv" => "prints the environment");
    finds!("printenv HOME" => "prints the environment");
}

#[test]
fn names_are_not_paths() {
    harmless!("which cargo", "type -a ls", "id -u", "id root", "locale -a");
    finds!("which ./x" => "reads `./x`");
}

#[test]
fn writers() {
    finds!("cp a b" => "writes `b`");
    finds!("cp -t dir a b" => "writes `dir`");
    finds!("cp -r src dst" => "reads everything under `src`");
    finds!("mv a b" => "writes `a`");
    finds!("tee -a log" => "writes `log`");
    finds!("install -D a /usr/local/bin/a" => "writes `/usr/local/bin/a`");
    finds!("install -d x" => "writes `x`");
    finds!("install -s a b" => "runs `strip`");
    finds!("chmod 644 f" => "writes `f`");
    finds!("chmod --reference=a b" => "reads `a`");
    finds!("chown -R u dir" => "whole trees");
    finds!("rm -rf x" => "whole directory trees");
    finds!("rm -fr x" => "without asking");
    finds!("dd if=a of=b bs=1M" => "writes `b`");
    finds!("dd if=a of=b frob=1" => "`frob=1` is not a `dd` operand");
    finds!("touch -r ref f" => "reads `ref`");
    // Even without operands (an error), the file tools are never step-8 safe.
    finds!("rm" => "changes files");
    finds!("cp" => "changes files");
}

#[test]
fn programs_in_system_directories_only() {
    assert!(read("/usr/bin/ls").harmless());
    assert!(read("/bin/cat").harmless());
    assert!(!read("./ls").profiled);
    assert!(!read("/tmp/ls").profiled);
    assert!(!read("/usr/bin/x/ls").profiled);
    assert!(!read("frobnicate").profiled);
}

#[test]
fn glob_refusal_by_span() {
    // `sort -o *`: the file written is the wildcard's.
    let u = read("sort -o out");
    assert!(u.glob_refusal(1).is_some());
    assert!(
        u.glob_refusal(2).is_some(),
        "the value is past the literal words"
    );
    assert!(u.glob_refusal(3).is_none(), "the rule named `-o out`");
    // `cat *` covers a file read, but not a secret.
    assert!(read("cat README.md").glob_refusal(1).is_none());
    assert!(read("cat /root/.ssh/id_ed25519").glob_refusal(1).is_some());
    // Unknown words under a wildcard are refused; unprofiled programs are the rule's.
    assert!(read("ls --frob").glob_refusal(1).is_some());
    assert!(read("mytool --frob").glob_refusal(1).is_none());
}

#[test]
fn moving_a_span_keeps_unseen_unseen() {
    assert_eq!(Span::one(2).moved(|i| i + 3), Span { first: 5, last: 5 });
    assert_eq!(Span::UNSEEN.moved(|i| i + 1).last, usize::MAX);
    // Still refused by any rule, however many words it writes out.
    let u = Understanding {
        program: "x".into(),
        profiled: true,
        findings: vec![Finding {
            effect: Effect::Unknown("stdin".into()),
            at: Span::UNSEEN.moved(|i| i + 1),
        }],
        ..Understanding::default()
    };
    assert!(u.glob_refusal(usize::MAX - 1).is_some());
}

/// A program name in two profiles is read by whichever the registry took last; a
/// subcommand name twice under one profile, by whichever comes first.
#[test]
fn no_program_or_subcommand_name_is_listed_twice() {
    fn subcommands(p: &Profile, path: &str, twice: &mut Vec<String>) {
        let mut owner: HashMap<&str, &[&str]> = HashMap::new();
        for s in p.subcommands {
            for name in s.names {
                if let Some(other) = owner.insert(name, s.names) {
                    twice.push(format!(
                        "`{path} {name}` selects both {other:?} and {:?}",
                        s.names
                    ));
                }
            }
            subcommands(s, &format!("{path} {}", s.names[0]), twice);
        }
    }
    let mut twice = Vec::new();
    let mut owner: HashMap<&str, &[&str]> = HashMap::new();
    for p in all() {
        for name in p.names {
            if let Some(other) = owner.insert(name, p.names) {
                twice.push(format!(
                    "`{name}` is a name of both {other:?} and {:?}",
                    p.names
                ));
            }
        }
        subcommands(p, p.names[0], &mut twice);
    }
    assert!(
        twice.is_empty(),
        "names listed twice:\n{}",
        twice.join("\n")
    );
}
