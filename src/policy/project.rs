//! The project: the directory an agent's ordinary work lies in, found from where a
//! request runs. Reads inside it are harmless (docs/decisions.md, "The project").
//!
//! It is the git working tree that holds the request's cwd, found as git finds it; else,
//! when the cwd lies inside one of the owner's roots (`exec.allowed_cwd_roots`,
//! `policy.project_roots`), the cwd itself. The cwd is the agent's to choose, so what it
//! may make its project is bounded here: never `/`, a home directory itself, a directory
//! that holds a home (`/home`), a system directory (`/usr`, `/var`, `/tmp`, …), nor
//! anything inside the directories that hold the system's secrets and devices (`/etc`,
//! `/proc`, `/sys`, `/dev`, `/boot`, `/run`): a repository at `/etc` (etckeeper) is no
//! project, nor is a `git init` in a home.

use std::path::{Path, PathBuf};

use super::gitrepo;

/// Directories that are never a project themselves: the system's own.
const SYSTEM: &[&str] = &[
    "/",
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/media",
    "/mnt",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/snap",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/usr/local",
    "/usr/share",
    "/usr/src",
    "/var",
    "/var/lib",
    "/var/tmp",
    "/var/log",
    "/nix",
];

/// Directories nothing inside of which is a project: they hold the system's
/// configuration, secrets, devices and processes.
const NEVER_INSIDE: &[&str] = &["/etc", "/proc", "/sys", "/dev", "/boot", "/run"];

/// The project of a request that runs in `cwd` (canonical, as the request's cwd is once
/// checked), if it has one. `roots`: the owner's directories whose insides are
/// projects; `homes`: every home on the machine; `git_uid`: the uid git would run as.
pub fn of(
    cwd: Option<&Path>,
    roots: &[PathBuf],
    homes: &[PathBuf],
    git_uid: Option<u32>,
) -> Option<PathBuf> {
    let cwd = cwd?;
    let found = gitrepo::work_tree(cwd, git_uid).or_else(|| {
        roots
            .iter()
            .filter_map(|r| r.canonicalize().ok())
            .any(|r| cwd.starts_with(r))
            .then(|| cwd.to_path_buf())
    })?;
    allowed(&found, homes).then_some(found)
}

/// Whether `dir` may be a project: not a system directory, nor inside one that holds the
/// system's secrets, not a home, and holding none.
fn allowed(dir: &Path, homes: &[PathBuf]) -> bool {
    if !dir.is_absolute() || SYSTEM.iter().any(|s| dir == Path::new(s)) {
        return false;
    }
    if NEVER_INSIDE.iter().any(|s| dir.starts_with(s)) {
        return false;
    }
    !homes.iter().any(|h| h.starts_with(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_a_work_tree_or_a_cwd_under_the_owners_roots_and_never_a_system_place() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home/u");
        let repo = home.join("code/app");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(&repo)
            .status();
        if !git.is_ok_and(|s| s.success()) {
            panic!("git is needed to make a repository for this test");
        }
        std::fs::create_dir_all(root.join("scratch/job")).unwrap();
        let homes = vec![home.clone()];
        let none: &[PathBuf] = &[];
        // The work tree holds the cwd, however deep.
        assert_eq!(
            of(Some(&repo.join("src")), none, &homes, None),
            Some(repo.clone())
        );
        assert_eq!(of(Some(&repo), none, &homes, None), Some(repo.clone()));
        // Outside any repository: only inside the owner's roots, and then the cwd.
        let job = root.join("scratch/job");
        assert_eq!(of(Some(&job), none, &homes, None), None);
        let roots = vec![root.join("scratch")];
        assert_eq!(of(Some(&job), &roots, &homes, None), Some(job.clone()));
        // A home is never a project, nor what holds one, even made a repository.
        let git = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(&home)
            .status()
            .unwrap();
        assert!(git.success());
        std::fs::create_dir_all(home.join("notes")).unwrap();
        assert_eq!(of(Some(&home.join("notes")), none, &homes, None), None);
        assert_eq!(
            of(Some(&home), std::slice::from_ref(&root), &homes, None),
            None
        );
        assert_eq!(
            of(
                Some(&root.join("home")),
                std::slice::from_ref(&root),
                &homes,
                None
            ),
            None
        );
        // The system's places are never one.
        for system in ["/", "/etc", "/usr", "/tmp", "/var/lib"] {
            assert!(!allowed(Path::new(system), &[]), "{system}");
        }
        assert!(!allowed(Path::new("/etc/nginx"), &[]));
        assert!(!allowed(Path::new("/proc/1"), &[]));
        assert!(allowed(Path::new("/srv/app"), &[]));
        assert!(allowed(Path::new("/tmp/build"), &[]));
        assert_eq!(of(None, &roots, &homes, None), None);
    }
}
