//! The kernel's hold on a command execgate runs (docs/decisions.md#confinement): a
//! [`Plan`] of what the command may read, write, execute and connect to, built into a
//! Landlock ruleset in the daemon ([`Plan::prepare`]) and put on the child between `fork`
//! and `exec` ([`Prepared::restrict`]), so the daemon itself is never confined.
//!
//! Landlock only grants: a ruleset names the trees where each access is allowed, and
//! everything the ruleset handles is refused elsewhere. So a plan is a list of grants,
//! and one that cannot be granted exactly (a root that cannot be opened, a kernel whose
//! ABI cannot enforce what the plan needs) is an error, never a looser ruleset.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};

/// The newest ABI execgate's plans are written and tested for. A newer kernel is held to
/// this one's rights: a right execgate does not know (UDP from ABI 8, pathname sockets
/// from ABI 9) would refuse what no plan grants, and break commands nobody meant to stop.
const NEWEST: i32 = 7;

/// The Landlock ABI this kernel offers (capped at [`NEWEST`]), or None without Landlock.
/// Asked once: the kernel's answer does not change while it runs.
pub fn abi() -> Option<u8> {
    static ABI: OnceLock<Option<u8>> = OnceLock::new();
    *ABI.get_or_init(|| {
        // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the VERSION
        // flag only returns the ABI version (or an error); it touches no memory of ours.
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                1u32, // LANDLOCK_CREATE_RULESET_VERSION
            )
        };
        (version > 0).then(|| version.min(i64::from(NEWEST)) as u8)
    })
}

/// What a confined command may execute.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Exec {
    /// Any program it can read.
    Any,
    /// Only these files, and what lies beneath these directories.
    Only(Vec<PathBuf>),
}

/// Everything a confined command may do to files and the network. Paths are granted with
/// what lies beneath them; a grant on a file is on that file alone. A grant that holds a
/// path it must not reach is split into grants on its entries, around that path
/// (Landlock cannot take a subdirectory back from a grant).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Plan {
    /// Read files and list directories. Missing ones are skipped.
    pub read: Vec<PathBuf>,
    /// Every file access but execute (unless `exec` is `Any`): create, write, truncate,
    /// remove, rename within. Each must exist.
    pub write: Vec<PathBuf>,
    pub exec: Exec,
    /// TCP connect and bind. Without, both are refused (ABI 4 and later); UDP is never
    /// restricted by this kernel's Landlock.
    pub network: bool,
    /// Neither read nor written, wherever a grant would reach them (execgate's own
    /// database, configuration and tokens).
    pub hidden: Vec<PathBuf>,
    /// Read, but never written, created nor removed (a project's guard settings: `.git`,
    /// `.claude`, …).
    pub guarded: Vec<PathBuf>,
}

/// The system directories every program needs to start and to find its libraries, its
/// locale and its configuration: granted for reading to every confined command (those
/// that exist).
pub const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys",
];

/// Devices a command reads from or writes to as part of running at all.
const DEVICES_RW: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];
const DEVICES_R: &[&str] = &["/dev/urandom", "/dev/random", "/dev/fd", "/dev/stdin"];

/// A ruleset built for one run, ready to be put on the child.
#[derive(Clone, Debug)]
pub struct Prepared {
    fd: Arc<OwnedFd>,
}

impl Plan {
    /// The grants every confined command has: the system's directories to read, the
    /// devices a program opens by habit.
    pub fn base(exec: Exec, network: bool) -> Plan {
        Plan {
            read: SYSTEM.iter().map(PathBuf::from).collect(),
            write: Vec::new(),
            exec,
            network,
            hidden: Vec::new(),
            guarded: Vec::new(),
        }
    }

    /// The ruleset for this plan, under this kernel's ABI. Fails, naming the missing
    /// piece, when the kernel has no Landlock, when its ABI cannot enforce the plan, or
    /// when a path the plan names cannot be opened.
    pub fn prepare(&self) -> Result<Prepared, String> {
        self.build().map(|(prepared, _)| prepared)
    }

    /// [`Plan::prepare`], taken from the rulesets built before for the same plan when
    /// what they were built from is unchanged: every directory split around a path the
    /// plan avoids (listed then: its inode, mtime and ctime, which an entry added,
    /// removed or renamed in it changes), every path it grants (the same inode), and
    /// where each avoided path leads. A ruleset is grants on inodes, so what changed
    /// since in a directory it grants whole changes nothing. Only for plans that do not
    /// depend on what lies in a granted directory beyond those listings (not project
    /// work, whose secrets are looked for each run). The kernel stamps a directory's
    /// times with a clock that may tick every few milliseconds: a change within the same
    /// tick as the listing may go unseen, and then the old grants stand, which grant
    /// nothing the new entry is (a grant on an entry follows its inode, and what was not
    /// listed is not granted).
    pub fn prepare_cached(&self) -> Result<Prepared, String> {
        static CACHE: std::sync::Mutex<Vec<(Plan, Prepared, Vec<Stamp>)>> =
            std::sync::Mutex::new(Vec::new());
        let hit = {
            let cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
            cache
                .iter()
                .find(|(plan, _, _)| plan == self)
                .map(|(_, prepared, stamps)| (prepared.clone(), stamps.clone()))
        };
        if let Some((prepared, stamps)) = hit
            && stamps.iter().all(Stamp::holds)
        {
            return Ok(prepared);
        }
        let (prepared, stamps) = self.build()?;
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        cache.retain(|(plan, _, _)| plan != self);
        if cache.len() >= CACHED_PLANS {
            cache.remove(0);
        }
        cache.push((self.clone(), prepared.clone(), stamps));
        Ok(prepared)
    }

    /// The ruleset, and what it was built from ([`Plan::prepare_cached`]).
    fn build(&self) -> Result<(Prepared, Vec<Stamp>), String> {
        let Some(abi) = abi() else {
            return Err("this kernel has no Landlock (or it is not enabled at boot)".into());
        };
        if !self.network && abi < 4 {
            return Err(format!(
                "this kernel's Landlock (ABI {abi}) cannot refuse TCP connections, which this command may not make: ABI 4 (Linux 6.7) is needed"
            ));
        }
        let landlock_abi = ABI::from(i32::from(abi));
        let all = AccessFs::from_all(landlock_abi);
        let read = AccessFs::ReadFile | AccessFs::ReadDir;
        let write = all & !(BitFlags::from(AccessFs::Execute) | read);
        let failed = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(all)
            .map_err(|e| failed("cannot handle file access", &e))?;
        if !self.network {
            ruleset = ruleset
                .handle_access(AccessNet::ConnectTcp | AccessNet::BindTcp)
                .map_err(|e| failed("cannot handle TCP", &e))?;
        }
        if abi >= 6 {
            // Signals only to its own processes; abstract sockets only its own, when it
            // may not reach the network (they are how X11 and some daemons listen).
            let mut scopes: BitFlags<Scope> = Scope::Signal.into();
            if !self.network {
                scopes |= Scope::AbstractUnixSocket;
            }
            ruleset = ruleset
                .scope(scopes)
                .map_err(|e| failed("cannot scope signals", &e))?;
        }
        let mut created = ruleset
            .create()
            .map_err(|e| failed("cannot create the ruleset", &e))?;
        // `may_vanish`: an entry found by listing a directory, which may be gone by now
        // (another program's temporary file): nothing to grant then.
        let mut grant = |path: &Path, access: BitFlags<AccessFs>, may_vanish: bool| {
            let fd = match PathFd::new(path) {
                Ok(fd) => fd,
                Err(_) if may_vanish && std::fs::symlink_metadata(path).is_err() => {
                    return Ok(());
                }
                Err(e) => return Err(format!("cannot open {}: {e}", path.display())),
            };
            // A file takes only the rights a file can have.
            let access = if path.is_dir() {
                access
            } else {
                access & AccessFs::from_file(landlock_abi)
            };
            if access.is_empty() {
                return Ok(());
            }
            (&mut created)
                .add_rule(PathBeneath::new(fd, access))
                .map(|_| ())
                .map_err(|e| format!("cannot grant {}: {e}", path.display()))
        };
        let exec_anywhere = match &self.exec {
            Exec::Any => AccessFs::Execute.into(),
            Exec::Only(_) => BitFlags::EMPTY,
        };
        // Reads are split only around hidden paths that exist: what is not there cannot
        // be read, and a directory split for nothing costs a grant per entry. Writes
        // keep clear of those not made yet too (they must stay unmade).
        let hidden: Vec<PathBuf> = self
            .hidden
            .iter()
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        let mut unwritable = canonical(&self.hidden);
        unwritable.extend(canonical(&self.guarded));
        let mut stamps: Vec<Stamp> = self
            .hidden
            .iter()
            .chain(&self.guarded)
            .map(|p| Stamp::leads(p))
            .collect();
        for p in &self.read {
            stamps.push(Stamp::leads(p));
            // What does not exist cannot be read: nothing to grant.
            let Ok(p) = p.canonicalize() else { continue };
            stamps.push(Stamp::of(&p));
            for (g, whole) in around(&p, &hidden).map_err(|e| failed("cannot plan reads", &e))? {
                if !whole {
                    stamps.push(Stamp::of(&g));
                }
                // A directory on the way to a hidden path may be listed, not read.
                let access = if whole {
                    read | exec_anywhere
                } else {
                    AccessFs::ReadDir.into()
                };
                grant(&g, access, g != p)?;
            }
        }
        for p in &self.write {
            stamps.push(Stamp::leads(p));
            let p = p
                .canonicalize()
                .map_err(|e| format!("cannot open {}: {e}", p.display()))?;
            stamps.push(Stamp::of(&p));
            for (g, whole) in
                around(&p, &unwritable).map_err(|e| failed("cannot plan writes", &e))?
            {
                if !whole {
                    stamps.push(Stamp::of(&g));
                }
                if whole {
                    grant(&g, read | write | exec_anywhere, g != p)?;
                }
            }
        }
        for dev in DEVICES_RW {
            if Path::new(dev).exists() {
                let rights = read | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
                grant(Path::new(dev), rights & all, true)?;
            }
        }
        for dev in DEVICES_R {
            if let Ok(dev) = Path::new(dev).canonicalize() {
                grant(&dev, read, true)?;
            }
        }
        if let Exec::Only(programs) = &self.exec {
            for p in programs {
                grant(p, AccessFs::Execute | AccessFs::ReadFile, false)?;
            }
            // The kernel opens a program's ELF interpreter as it opens the program, and
            // asks the same right of it.
            for loader in loaders() {
                grant(&loader, AccessFs::Execute | AccessFs::ReadFile, true)?;
            }
        }
        let fd: Option<OwnedFd> = created.into();
        let fd = fd.ok_or("the kernel did not create the ruleset")?;
        Ok((Prepared { fd: Arc::new(fd) }, stamps))
    }
}

/// How many prepared rulesets [`Plan::prepare_cached`] keeps.
const CACHED_PLANS: usize = 32;

/// An inode as last seen: device, inode, mtime and ctime (seconds, nanoseconds). A
/// directory's change whenever an entry is added, removed or renamed in it.
pub type Seen = (u64, u64, i64, i64, i64, i64);

/// How the inode at `path` is now (`follow`: through a final symlink); None when there
/// is none.
pub fn seen(path: &Path, follow: bool) -> Option<Seen> {
    use std::os::unix::fs::MetadataExt;
    let m = if follow {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    }
    .ok()?;
    Some((
        m.dev(),
        m.ino(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

/// What a ruleset was built from, at one path: where the path led, or the inode there
/// with its times ([`Plan::prepare_cached`]).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Stamp {
    /// Where `path` resolved (None: it did not).
    Leads(PathBuf, Option<PathBuf>),
    /// The inode at `path` (not followed), with its mtime and ctime in nanoseconds.
    At(PathBuf, Option<Seen>),
}

impl Stamp {
    fn leads(path: &Path) -> Stamp {
        Stamp::Leads(path.to_path_buf(), path.canonicalize().ok())
    }

    fn of(path: &Path) -> Stamp {
        Stamp::At(path.to_path_buf(), seen(path, false))
    }

    /// Whether the path is as it was.
    fn holds(&self) -> bool {
        let now = match self {
            Stamp::Leads(path, _) => Stamp::leads(path),
            Stamp::At(path, _) => Stamp::of(path),
        };
        now == *self
    }
}

impl Prepared {
    /// The raw descriptor, for [`restrict`] in the child.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// The canonical form of each path: resolved where it exists, else its directory
/// resolved and its name kept (a guard setting not made yet must stay unmade). Paths
/// whose directory does not exist either are left out: no grant can reach them.
fn canonical(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .filter_map(|p| {
            p.canonicalize().ok().or_else(|| {
                let dir = p.parent()?.canonicalize().ok()?;
                Some(dir.join(p.file_name()?))
            })
        })
        .collect()
}

/// The dynamic loaders a program may name as its interpreter, where the system keeps
/// them (`/lib64/ld-linux-x86-64.so.2` and the multiarch directories).
fn loaders() -> Vec<PathBuf> {
    // Listed once: /usr/lib holds thousands of entries, and the loaders do not move
    // while the daemon runs (one gone since is skipped when granted).
    static LOADERS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    LOADERS.get_or_init(find_loaders).clone()
}

fn find_loaders() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["/lib", "/lib64", "/lib32", "/usr/lib", "/usr/lib64"] {
        let mut dirs = vec![PathBuf::from(dir)];
        if let Ok(entries) = std::fs::read_dir(dir) {
            // The multiarch directories (`/lib/x86_64-linux-gnu`).
            dirs.extend(
                entries
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().contains("-linux-"))
                    .map(|e| e.path()),
            );
        }
        for d in dirs {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if (name.starts_with("ld-linux") || name.starts_with("ld-musl") || name == "ld.so")
                    && let Ok(real) = e.path().canonicalize()
                {
                    out.push(real);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The grants that cover `root` without reaching any of `avoid` (canonical paths): `root`
/// itself when nothing to avoid lies beneath it, else each of its entries in turn, split
/// the same way, and `root` marked as a way through (`false`). An avoided path itself is
/// left out.
fn around(root: &Path, avoid: &[PathBuf]) -> io::Result<Vec<(PathBuf, bool)>> {
    let mut out = Vec::new();
    split(root, avoid, &mut out, 0)?;
    Ok(out)
}

fn split(
    root: &Path,
    avoid: &[PathBuf],
    out: &mut Vec<(PathBuf, bool)>,
    depth: usize,
) -> io::Result<()> {
    if avoid.iter().any(|a| a == root) {
        return Ok(());
    }
    if !avoid.iter().any(|a| a.starts_with(root)) {
        out.push((root.to_path_buf(), true));
        return Ok(());
    }
    if depth > 32 {
        return Err(io::Error::other(format!(
            "{} is too deep to split",
            root.display()
        )));
    }
    out.push((root.to_path_buf(), false));
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        // Gone since its parent was listed: nothing left to grant.
        Err(e) if depth > 0 && e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let Ok(entry) = entry else { continue };
        // A link is not followed: a grant on it would be a grant on what it names,
        // wherever that is. Reached through the link, a file is judged where it lies.
        if entry.file_type().map_or(true, |t| t.is_symlink()) {
            continue;
        }
        split(&entry.path(), avoid, out, depth + 1)?;
    }
    Ok(())
}

/// Puts the ruleset `fd` on the calling process, for good: `no_new_privs` first (Landlock
/// requires it of an unprivileged process, and a set-uid program must not escape it),
/// then `landlock_restrict_self`. Async-signal-safe (two system calls, no allocation), so
/// it may run between `fork` and `exec`.
pub fn restrict(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain integer arguments; neither call touches memory of ours.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The lines of a confined command's error output that say an operation was refused:
/// what the program reports when the kernel refuses it (`EACCES`, `EPERM`, a read-only
/// file system). Landlock's own audit records go to the kernel's audit log, which an
/// unprivileged daemon cannot read; the program's words are what is left to show.
pub fn refusals(stderr: &str) -> Vec<String> {
    const SIGNS: &[&str] = &[
        "Permission denied",
        "Operation not permitted",
        "permission denied",
        "operation not permitted",
        "EACCES",
        "EPERM",
    ];
    stderr
        .lines()
        .filter(|l| SIGNS.iter().any(|s| l.contains(s)))
        .take(5)
        .map(|l| crate::text::clip_chars(l.trim(), 200))
        .collect()
}
