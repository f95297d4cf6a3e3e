//! Runs a real program under `strace` in a [`Sandbox`] and reads back what it did.
//!
//! The program runs as `nobody`, [`RUN_UID`](super::RUN_UID) (strace's `-u`), in its own network namespace when
//! one can be made (`unshare --net`), with every `connect`, `sendto` and `sendmsg` failed
//! by strace besides (`-e inject=…:error=ENETUNREACH`), with `/dev/null` as its stdin,
//! its output thrown away, the sandbox as cwd and `HOME`, and a time limit. `-yy` makes
//! strace print the path behind every descriptor, `AT_FDCWD` included, so each path is
//! read as the program meant it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::sandbox::{RUN_USER, Sandbox};

/// The system calls traced: every way to run a program, open, change or remove a file,
/// and reach the network.
const TRACED: &str = "trace=execve,execveat,open,openat,openat2,creat,truncate,unlink,unlinkat,\
rename,renameat,renameat2,chmod,fchmodat,?fchmodat2,chown,lchown,fchownat,link,linkat,symlink,\
symlinkat,mkdir,mkdirat,rmdir,mknod,mknodat,connect,sendto,sendmsg,bind,chdir,fchdir";

/// strace's flags: follow children; stop the program only at the calls traced, not at
/// every one (`--seccomp-bpf`: a third faster here); no messages of its own; name what
/// is behind each descriptor, sockets' kinds too; strings whole.
const FLAGS: &[&str] = &["-f", "--seccomp-bpf", "-qq", "-yy", "-s", "4096"];

/// What one run did.
#[derive(Debug, Default)]
pub struct Trace {
    /// Every `execve`: the program's path and its words.
    pub execs: Vec<(PathBuf, Vec<String>)>,
    /// Files opened for reading (successfully), by the path they resolved to.
    pub reads: Vec<PathBuf>,
    /// Attempts to write, create, remove, rename, link or change a file, whether or not
    /// they succeeded: `(system call, path)`.
    pub writes: Vec<(String, PathBuf)>,
    /// Attempts to reach the network (or any socket), as strace printed them.
    pub net: Vec<String>,
    /// The program was killed at the time limit.
    pub timed_out: bool,
    /// Its exit code, when it exited.
    pub exit: Option<i32>,
    /// What strace itself said on stderr when it could not run the program.
    pub trouble: Option<String>,
}

/// Whether a network namespace can be made here (root, or unprivileged user namespaces).
pub fn can_unshare_net() -> bool {
    std::process::Command::new("unshare")
        .args(["--net", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `argv` in `sandbox` under strace, for at most `limit`.
pub async fn run(sandbox: &Sandbox, argv: &[String], limit: Duration, netns: bool) -> Trace {
    run_in(sandbox, sandbox.root(), argv, limit, netns).await
}

/// Runs `argv` under strace with `dir`, a directory of `sandbox`, as its working
/// directory, for at most `limit`.
pub async fn run_in(
    sandbox: &Sandbox,
    dir: &Path,
    argv: &[String],
    limit: Duration,
    netns: bool,
) -> Trace {
    let out = tempfile::NamedTempFile::new().expect("a temporary file for the trace");
    let mut cmd = if netns {
        let mut c = tokio::process::Command::new("unshare");
        c.args(["--net", "--", "strace"]);
        c
    } else {
        tokio::process::Command::new("strace")
    };
    cmd.args(FLAGS)
        .args(["-e", TRACED])
        .args(["-e", "inject=connect,sendto,sendmsg:error=ENETUNREACH"])
        // strace 6.1 takes a user's name, not a number: `nobody` is uid 65534.
        .args(["-u", RUN_USER])
        .arg("-o")
        .arg(out.path())
        .arg("--")
        .args(argv)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", sandbox.root())
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Trace {
                trouble: Some(format!("strace does not start: {e}")),
                ..Trace::default()
            };
        }
    };
    let pid = child.id();
    let mut stderr = child.stderr.take().expect("piped");
    let waited = tokio::time::timeout(limit, async {
        let mut said = Vec::new();
        let _ = tokio::io::AsyncReadExt::read_to_end(&mut stderr, &mut said).await;
        (child.wait().await, said)
    })
    .await;
    let (timed_out, exit, said) = match waited {
        Ok((status, said)) => (false, status.ok().and_then(|s| s.code()), said),
        Err(_) => {
            // The whole group: strace and everything it traces.
            if let Some(pid) = pid {
                // SAFETY: kill(2) on a process group this test started.
                unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
            }
            (true, None, Vec::new())
        }
    };
    let text = std::fs::read_to_string(out.path()).unwrap_or_default();
    let mut trace = parse(&text, &dir.canonicalize().unwrap_or(dir.into()));
    trace.timed_out = timed_out;
    trace.exit = exit;
    let said = String::from_utf8_lossy(&said);
    if trace.execs.is_empty() && !timed_out {
        trace.trouble = Some(said.trim().to_string());
    }
    trace
}

/// Reads strace's output (`-f -yy`): one system call a line, `PID name(args) = result`,
/// a call split by another process's line (`<unfinished ...>`, `<... name resumed>`)
/// joined again. A relative path given to a call without a directory descriptor
/// (`mkdir("x")`) is read against the process's working directory: `cwd` at the start,
/// then wherever its `chdir` or `fchdir` took it.
pub fn parse(text: &str, cwd: &Path) -> Trace {
    let mut trace = Trace::default();
    let mut cwds: std::collections::HashMap<String, PathBuf> = Default::default();
    let mut unfinished: std::collections::HashMap<String, String> = Default::default();
    for line in text.lines() {
        let Some((pid, rest)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        let rest = rest.trim_start();
        let call = if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            unfinished.insert(pid.to_string(), head.to_string());
            continue;
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            let Some(head) = unfinished.remove(pid) else {
                continue;
            };
            let Some((_, tail)) = tail.split_once(" resumed>") else {
                continue;
            };
            format!("{head}{tail}")
        } else {
            rest.to_string()
        };
        let here = cwds
            .entry(pid.to_string())
            .or_insert_with(|| cwd.to_path_buf());
        read_call(&call, here, &mut trace);
    }
    trace
}

/// One whole call, `name(args) = result`, made in `cwd` (which `chdir` moves).
fn read_call(call: &str, cwd: &mut PathBuf, trace: &mut Trace) {
    let Some((name, args)) = call.split_once('(') else {
        return; // a signal, an exit: `--- SIGCHLD …`, `+++ exited with 0 +++`
    };
    // strace pads a short call's result to a column: `unlink("/tmp/x")         = 0`.
    let Some((args, result)) = args.rsplit_once(" = ") else {
        return;
    };
    let Some(args) = args.trim_end().strip_suffix(')') else {
        return;
    };
    let failed = result.starts_with('-');
    let strings = quoted(args);
    let dirs = descriptors(args);
    // A path as the program meant it: absolute, or under the directory its descriptor
    // (`AT_FDCWD</cwd>`, `3</dir>`) names.
    let resolve = |path: &str, dir: Option<&String>| -> PathBuf {
        match dir {
            _ if path.starts_with('/') => PathBuf::from(path),
            Some(d) => Path::new(d).join(path),
            None => cwd.join(path),
        }
    };
    match name {
        "chdir" | "fchdir" => {
            if !failed {
                let to = match name {
                    "chdir" => strings.first().map(|p| resolve(p, None)),
                    _ => dirs.first().map(PathBuf::from),
                };
                if let Some(to) = to {
                    *cwd = to;
                }
            }
        }
        "execve" | "execveat" => {
            // A failed attempt (a `PATH` search's) ran nothing.
            if failed {
                return;
            }
            if let Some(path) = strings.first() {
                let words = args
                    .split_once('[')
                    .and_then(|(_, rest)| rest.split_once(']'))
                    .map(|(list, _)| quoted(list))
                    .unwrap_or_default();
                trace.execs.push((resolve(path, dirs.first()), words));
            }
        }
        "open" | "openat" | "openat2" => {
            let Some(path) = strings.first() else { return };
            let dir = if name == "open" { None } else { dirs.first() };
            let path = resolve(path, dir);
            let writes = [
                "O_WRONLY",
                "O_RDWR",
                "O_CREAT",
                "O_TRUNC",
                "O_APPEND",
                "O_TMPFILE",
            ]
            .iter()
            .any(|flag| args.contains(flag));
            // `O_PATH` names a file to reach it, and cannot read it (systemd's tools walk
            // paths so).
            let path_only = args.contains("O_PATH");
            if writes {
                trace.writes.push((name.to_string(), path));
            } else if !failed && !path_only {
                // The path the descriptor it returned names: links followed.
                let opened = descriptors(result).into_iter().next().map(PathBuf::from);
                trace.reads.push(opened.unwrap_or(path));
            }
        }
        "connect" | "sendto" | "sendmsg" | "bind" => trace.net.push(call.to_string()),
        // A link's target is text, not a file opened: only the link made is a write.
        "symlink" | "symlinkat" => {
            if let Some(link) = strings.last() {
                let dir = if name == "symlinkat" {
                    dirs.first()
                } else {
                    None
                };
                trace.writes.push((name.to_string(), resolve(link, dir)));
            }
        }
        _ => {
            // Everything else traced changes the file system: each path it names.
            for (i, path) in strings.iter().enumerate() {
                let dir = if name.ends_with("at") || name.ends_with("at2") {
                    dirs.get(i)
                } else {
                    None
                };
                trace.writes.push((name.to_string(), resolve(path, dir)));
            }
        }
    }
}

/// The double-quoted strings of strace's arguments, unescaped.
fn quoted(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = args.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some('x') => {
                        let hex: String = chars.by_ref().take(2).collect();
                        if let Ok(b) = u8::from_str_radix(&hex, 16) {
                            s.push(b as char);
                        }
                    }
                    Some(other) => s.push(other),
                    None => {}
                },
                other => s.push(other),
            }
        }
        out.push(s);
    }
    out
}

/// The paths strace printed behind descriptors (`3</dir>`, `AT_FDCWD</cwd>`), in order.
fn descriptors(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = args;
    while let Some(at) = rest.find("</") {
        let after = &rest[at + 2..];
        let Some(end) = after.find('>') else { break };
        out.push(format!("/{}", &after[..end]));
        rest = &after[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straces_lines_are_read_as_the_program_meant_them() {
        let text = r#"10  execve("/usr/bin/sh", ["sh", "-c", "cat a"], 0x7ffc /* 3 vars */) = 0
10  openat(AT_FDCWD</tmp/sb>, "notes.txt", O_RDONLY) = 3</tmp/sb/notes.txt>
10  openat(AT_FDCWD</tmp/sb>, "missing", O_RDONLY) = -1 ENOENT (No such file or directory)
10  openat(AT_FDCWD</tmp/sb>, "/tmp", O_RDONLY|O_CLOEXEC|O_PATH|O_DIRECTORY) = 4</tmp>
10  openat(AT_FDCWD</tmp/sb>, "link", O_RDONLY|O_CLOEXEC) = 3</tmp/sb/.env>
11  openat(3</tmp/sb/dir>, "out", O_WRONLY|O_CREAT|O_TRUNC, 0666 <unfinished ...>
10  connect(4<socket:[1]>, {sa_family=AF_INET, sin_port=htons(80)}, 16) = -1 ENETUNREACH (Network is unreachable)
11  <... openat resumed>) = -1 EACCES (Permission denied)
11  unlinkat(AT_FDCWD</tmp/sb>, "gone", 0) = -1 EACCES (Permission denied)
11  renameat2(AT_FDCWD</tmp/sb>, "a", 5</tmp/other>, "b", RENAME_NOREPLACE) = -1 EACCES (Permission denied)
10  --- SIGCHLD {si_signo=SIGCHLD} ---
11  unlink("/tmp/sortAbc123")         = 0
12  chdir("src")                      = 0
12  mkdir("x", 0777)                  = -1 EACCES (Permission denied)
10  mkdir("y", 0777)                  = -1 EACCES (Permission denied)
10  +++ exited with 0 +++"#;
        let t = parse(text, Path::new("/tmp/sb"));
        assert_eq!(
            t.execs,
            [(
                PathBuf::from("/usr/bin/sh"),
                vec!["sh".into(), "-c".into(), "cat a".into()]
            )]
        );
        assert_eq!(
            t.reads,
            [
                PathBuf::from("/tmp/sb/notes.txt"),
                PathBuf::from("/tmp/sb/.env")
            ]
        );
        assert_eq!(
            t.writes,
            [
                ("openat".to_string(), PathBuf::from("/tmp/sb/dir/out")),
                ("unlinkat".to_string(), PathBuf::from("/tmp/sb/gone")),
                ("renameat2".to_string(), PathBuf::from("/tmp/sb/a")),
                ("renameat2".to_string(), PathBuf::from("/tmp/other/b")),
                ("unlink".to_string(), PathBuf::from("/tmp/sortAbc123")),
                ("mkdir".to_string(), PathBuf::from("/tmp/sb/src/x")),
                ("mkdir".to_string(), PathBuf::from("/tmp/sb/y")),
            ]
        );
        assert_eq!(t.net.len(), 1);
    }
}
