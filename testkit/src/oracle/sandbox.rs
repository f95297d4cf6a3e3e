//! The throwaway directory a program runs in: its working directory and `HOME`, with
//! decoys a program must not touch when execgate calls it harmless (secrets, a FIFO
//! that hangs a reader, links out of the tree, a git repository with a submodule).
//!
//! Everything is owned by the uid the program runs as (so git trusts the repository)
//! and read-only (files 0444, directories 0555): a write fails, and is still seen by
//! the tracer, which records the attempt. The tree is the same for every run.

use std::os::unix::fs::{PermissionsExt, chown, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// The uid and gid programs run as: `nobody`, as on Debian.
pub const RUN_UID: u32 = 65534;
pub const RUN_GID: u32 = 65534;
/// Their user's name, as strace's `-u` takes it.
pub const RUN_USER: &str = "nobody";

/// Paths of the decoys, relative to the sandbox: what a harmless command must not read.
pub const SECRETS: &[&str] = &[".env", ".ssh/id_rsa", ".aws/credentials", "repo/.env"];

/// Files anyone may read: a harmless command may read them when it names them.
pub const PLAIN_FILES: &[(&str, &str)] = &[
    ("notes.txt", "alpha\nbeta\n--gamma\n-n\n"),
    ("data.csv", "id,name\n1,a\n2,b\n"),
    (
        "data.json",
        "{\"a\": [1, \"two\", {\"b\": null}], \"a b\": \"#\"}\n",
    ),
    ("src/main.rs", "fn main() {}\n"),
    ("README.md", "# sandbox\n"),
    ("-n", "a file named like an option\n"),
];

pub struct Sandbox {
    dir: TempDir,
}

impl Sandbox {
    /// Makes the tree. Needs root (to hand it to [`RUN_UID`]) and `git`, `mkfifo`.
    pub fn new() -> std::io::Result<Sandbox> {
        let dir = tempfile::Builder::new().prefix("oracle-").tempdir()?;
        let root = dir.path();
        for (path, text) in PLAIN_FILES {
            write(root, path, text)?;
        }
        for secret in SECRETS {
            write(root, secret, "SECRET=decoy-do-not-read\n")?;
        }
        // A reader of the FIFO waits for a writer that never comes: the time limit ends it.
        run(Command::new("mkfifo").arg(root.join("fifo")))?;
        symlink(".env", root.join("link-to-secret"))?;
        symlink("/etc/hostname", root.join("link-out"))?;
        repository(root)?;
        hand_over(root)?;
        Ok(Sandbox { dir })
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `repo/`, the git repository, as a real path.
    pub fn repository(&self) -> PathBuf {
        let repo = self.root().join("repo");
        repo.canonicalize().unwrap_or(repo)
    }

    /// The decoy secrets, as absolute paths.
    pub fn secrets(&self) -> Vec<PathBuf> {
        SECRETS.iter().map(|s| self.root().join(s)).collect()
    }
}

fn write(root: &Path, path: &str, text: &str) -> std::io::Result<()> {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a file in the tree"))?;
    std::fs::write(path, text)
}

fn run(command: &mut Command) -> std::io::Result<()> {
    let out = command.output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(std::io::Error::other(format!(
            "{command:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        )))
    }
}

/// `repo/`: a git repository with one commit and a submodule `sub` (from `sub-origin/`),
/// made with the system's own git and no configuration of the machine's.
fn repository(root: &Path) -> std::io::Result<()> {
    let git = |dir: &Path, args: &[&str]| {
        run(Command::new("git")
            .args(["-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "oracle")
            .env("GIT_AUTHOR_EMAIL", "oracle@example.invalid")
            .env("GIT_COMMITTER_NAME", "oracle")
            .env("GIT_COMMITTER_EMAIL", "oracle@example.invalid"))
    };
    let origin = root.join("sub-origin");
    let repo = root.join("repo");
    for dir in [&origin, &repo] {
        std::fs::create_dir_all(dir)?;
        git(dir, &["init", "-q", "-b", "main"])?;
    }
    write(&origin, "lib.txt", "from the submodule\n")?;
    git(&origin, &["add", "lib.txt"])?;
    git(&origin, &["commit", "-q", "-m", "sub"])?;
    write(&repo, "tracked.txt", "tracked\n")?;
    git(&repo, &["add", "tracked.txt"])?;
    git(&repo, &["commit", "-q", "-m", "first"])?;
    let origin = origin.to_string_lossy().into_owned();
    git(&repo, &["submodule", "add", "-q", &origin, "sub"])?;
    git(&repo, &["commit", "-q", "-m", "with a submodule"])?;
    Ok(())
}

/// Hands the tree to [`RUN_UID`], read-only. Links are left as they are.
fn hand_over(path: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            hand_over(&entry?.path())?;
        }
    }
    chown(path, Some(RUN_UID), Some(RUN_GID))?;
    let mode = if meta.is_dir() {
        0o555
    } else if meta.file_type().is_file() {
        0o444
    } else {
        0o644 // the FIFO: a reader opens it and waits
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

impl Drop for Sandbox {
    /// The tree is read-only: give its directories their write bit back so that the
    /// temporary directory can remove it.
    fn drop(&mut self) {
        fn writable(path: &Path) {
            if let Ok(meta) = std::fs::symlink_metadata(path)
                && meta.is_dir()
            {
                let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
                if let Ok(entries) = std::fs::read_dir(path) {
                    for entry in entries.flatten() {
                        writable(&entry.path());
                    }
                }
            }
        }
        writable(self.dir.path());
    }
}
