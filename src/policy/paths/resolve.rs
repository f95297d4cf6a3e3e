//! Where a path leads, asked of the filesystem without opening anything: symlinks
//! followed as the kernel follows them (by `realpath`, which reads links and never opens
//! the file at the end), a dangling link followed to the file writing through it would
//! create, and what lies at the end identified by device and inode. A FIFO, a device or
//! a file on a hung mount is never opened for a check.

use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The longest path the kernel opens (PATH_MAX). A longer one cannot be opened, so the
/// filesystem is not asked about it and its text is all that is judged.
pub const MAX_PATH_LEN: usize = 4096;

/// How many dangling symlinks are followed in a row (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// A file as the kernel identifies it: hard links and case-insensitive aliases of one
/// file share these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

/// What is at the end of a resolved path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    pub id: FileId,
    pub dir: bool,
}

/// `path` with `.` dropped and `..` taken back a component, without the filesystem: as
/// a tool's own path handling (Node's `path.resolve`, Python's `normpath`) reads it.
pub fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` (absolute) as the filesystem resolves it: its longest existing ancestor made
/// canonical (symlinks followed, `..` taken through real directories), the rest
/// appended. A dangling symlink is followed too: writing through it creates its target.
/// None when nothing of it resolves, or it is too long to be opened.
pub fn real(path: &Path) -> Option<PathBuf> {
    if path.as_os_str().len() > MAX_PATH_LEN {
        return None;
    }
    resolve_within(path, 0)
}

fn resolve_within(path: &Path, links: usize) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    loop {
        // A link that loops, a directory execgate may not search, an I/O error: the
        // part that could be resolved is kept, the rest taken as written.
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return Some(lexically_normal(&out));
        }
        if links < MAX_LINKS
            && let Ok(target) = std::fs::read_link(existing)
        {
            let mut next = existing.parent()?.join(target);
            for part in rest.iter().rev() {
                next.push(part);
            }
            return resolve_within(&lexically_normal(&next), links + 1);
        }
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?;
    }
}

/// What is at `path` (already resolved), by `lstat`: nothing is opened.
pub fn found(path: &Path) -> Option<Found> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(Found {
        id: FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        },
        dir: meta.is_dir(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_are_followed_as_the_kernel_follows_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f"), "x").unwrap();
        symlink(root.join("a/b"), root.join("l")).unwrap();
        symlink("nowhere/new", root.join("dangling")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        // `..` after a link is the link target's parent, as the kernel takes it.
        assert_eq!(real(&root.join("l/../b/f")), Some(root.join("a/b/f")));
        assert_eq!(real(&root.join("l/f")), Some(root.join("a/b/f")));
        assert_eq!(real(&root.join("dangling")), Some(root.join("nowhere/new")));
        assert_eq!(real(&root.join("loop")), Some(root.join("loop")));
        let long = root.join("x/".repeat(MAX_PATH_LEN));
        assert_eq!(real(&long), None);
        assert!(found(&root.join("l")).is_some_and(|f| !f.dir));
        assert!(found(&root.join("a")).is_some_and(|f| f.dir));
        assert_eq!(found(&root.join("none")), None);
    }
}
