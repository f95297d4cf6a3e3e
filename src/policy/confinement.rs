//! What the kernel holds a command to, for each [`Confine`] (docs/decisions.md#confinement):
//! the [`confine::Plan`] of what it may read, write, execute and connect to, drawn from
//! where it runs (its project), what it runs (its programs, for a harmless command) and
//! execgate's own files (never reachable).

use std::path::{Path, PathBuf};

use super::{Policy, Settings, Subject, parse, programs, project_of};
use crate::confine::{self, Exec, Plan};
use crate::model::{CommandRef, Confine, Shell};

/// A project's entries that decide what a later command does, or what guards the agent:
/// git's directory, the coding agents' settings, hooks and MCP declarations. Never
/// written by a confined command, whether or not they exist yet (docs/decisions.md,
/// "The guard stays out of reach").
pub const GUARDED: &[&str] = &[
    ".claude",
    ".claude.json",
    ".codex",
    ".gemini",
    ".cursor",
    ".copilot",
    ".github/hooks",
    ".mcp.json",
];

/// git's directory: guarded from project work (docs/decisions.md#the-guard-stays-out-of-reach).
pub const GIT_DIR: &str = ".git";

/// The user's own configuration of the programs a harmless command runs, read from the
/// home: git's (user name, `safe.directory`), which git warns it cannot read otherwise.
/// Judged by the git gate like the repository's (`gitrepo`).
const HOME_CONFIG: &[&str] = &[".gitconfig", ".config/git"];

/// The credentials kept inside the toolchains' directories, which project work may read
/// otherwise: never readable by it.
const TOOLCHAIN_SECRETS: &[&str] = &[
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".cache/huggingface/token",
    ".cache/huggingface/stored_tokens",
    ".local/share/uv/credentials",
];

/// The most entries of a project looked at for its secrets; a bigger project cannot run
/// as project work (its secrets could not all be hidden).
const MAX_PROJECT_ENTRIES: usize = 200_000;

/// Directories of other people's code and of build output, not searched for the
/// project's secrets (docs/decisions.md#project-work says what that leaves).
const NOT_SEARCHED: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".git",
];

/// Every file under `root` the path policy takes for a secret (`.env`, keys, tokens),
/// by name, symlinks not followed (a link's target is outside the grant, or found where
/// it lies). Fails when the project is too big to look at whole.
fn secrets_within(paths: &super::paths::Paths, root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = todo.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| format!("cannot look for secrets in {}: {e}", dir.display()))?;
        for entry in entries {
            let entry =
                entry.map_err(|e| format!("cannot look for secrets in {}: {e}", dir.display()))?;
            seen += 1;
            if seen > MAX_PROJECT_ENTRIES {
                return Err(format!(
                    "the project holds more than {MAX_PROJECT_ENTRIES} entries: too many to find its secrets and hide them"
                ));
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let secret = paths
                .refusal(&path.to_string_lossy(), super::paths::Access::Read, None)
                .is_some_and(|r| r.kind == super::paths::Kind::Secret);
            if secret {
                found.push(path);
            } else if kind.is_dir() && !NOT_SEARCHED.iter().any(|n| entry.file_name() == **n) {
                todo.push(path);
            }
        }
    }
    Ok(found)
}

/// Where a confined run happens, beyond what policy judged.
pub struct Place<'a> {
    /// The run's `PATH`: where its programs are found, as the shell would.
    pub path: &'a str,
    /// The run's private temporary directory, written freely (`TMPDIR`).
    pub tmp: Option<&'a Path>,
    /// The daemon's home: where `~/` in `exec.toolchains` points.
    pub home: Option<&'a Path>,
}

impl Policy {
    /// The plan that holds `subject` to `confine` where it runs; None for
    /// [`Confine::None`]. An error names what cannot be planned (no working directory).
    pub fn confinement_plan(
        &self,
        settings: &Settings,
        subject: Subject<'_>,
        confine: Confine,
        place: &Place<'_>,
    ) -> Result<Option<Plan>, String> {
        let config = &settings.config;
        let Some(cwd) = subject.cwd else {
            return Err("a confined command needs a working directory".into());
        };
        let project = project_of(config, &settings.paths, subject);
        // Where writes may go: the project, else the working directory, unless that is
        // a home, what holds one, or the root (never written whole).
        let writable = project.clone().or_else(|| {
            let homes = settings.paths.homes();
            let holds_home = homes.iter().any(|h| h.starts_with(cwd));
            (!holds_home && cwd != Path::new("/")).then(|| cwd.to_path_buf())
        });
        let toolchains: Vec<PathBuf> = config
            .exec
            .toolchains
            .iter()
            .filter_map(|t| match t.strip_prefix("~/") {
                Some(rest) => place.home.map(|h| h.join(rest)),
                None => Some(PathBuf::from(t)),
            })
            // Those installed here: what is not cannot be granted.
            .filter(|t| t.exists())
            .collect();
        let mut plan = match confine {
            Confine::None => return Ok(None),
            Confine::Harmless => {
                let mut programs = own_programs(subject, cwd, place.path);
                programs.extend(toolchains.iter().cloned());
                let mut plan = Plan::base(Exec::Only(programs), false);
                plan.read
                    .push(project.clone().unwrap_or_else(|| cwd.to_path_buf()));
                plan.read.extend(toolchains);
                plan.read.extend(
                    place
                        .home
                        .into_iter()
                        .flat_map(|h| HOME_CONFIG.iter().map(move |c| h.join(c))),
                );
                plan
            }
            Confine::ReadOnly | Confine::ReadOnlyNetwork => {
                let mut plan = Plan::base(Exec::Any, confine.network());
                plan.read.push("/".into());
                plan
            }
            Confine::Workspace | Confine::WorkspaceNetwork => {
                let mut plan = Plan::base(Exec::Any, confine.network());
                plan.read.push("/".into());
                plan.write.extend(writable.clone());
                plan
            }
            Confine::ProjectWork => {
                let Some(root) = &project else {
                    return Err("project work runs only in a project".into());
                };
                let mut plan = Plan::base(Exec::Any, false);
                plan.read.push(root.clone());
                plan.read.extend(toolchains);
                plan.write.push(root.clone());
                // Its secrets are not read (UDP is not held: what it can read, it could
                // send), nor the toolchains' credentials.
                plan.hidden.extend(secrets_within(&settings.paths, root)?);
                plan.hidden.extend(
                    place
                        .home
                        .into_iter()
                        .flat_map(|h| TOOLCHAIN_SECRETS.iter().map(move |s| h.join(s))),
                );
                plan
            }
        };
        plan.write.extend(place.tmp.map(Path::to_path_buf));
        if let Some(root) = &writable {
            plan.guarded = GUARDED.iter().map(|g| root.join(g)).collect();
            // git's directory too, for project work, which nobody approved. A command
            // a human or a rule approved may do git's own work (`git add`, `git
            // commit`); what it could plant there (hooks, program-valued settings) the
            // git gate reads before any git the agent runs itself, and every run
            // neutralises.
            if confine == Confine::ProjectWork {
                plan.guarded.push(root.join(GIT_DIR));
            }
        }
        // execgate's own files are neither read nor written; its program only not
        // written (it is no secret, and hiding it would split its directory, often a
        // big one, into a grant per entry).
        let exe = std::env::current_exe().ok();
        for own in settings.paths.own_paths() {
            if exe.as_ref() == Some(own) {
                plan.guarded.push(own.clone());
            } else {
                plan.hidden.push(own.clone());
            }
        }
        Ok(Some(plan))
    }
}

/// The programs a harmless command may execute: the shell that runs a line, each simple
/// command's program found as the shell finds it (in `path`, or relative to `cwd`), and
/// the helpers its profile names (`git-*`: git's own commands, in its exec path).
fn own_programs(subject: Subject<'_>, cwd: &Path, path: &str) -> Vec<PathBuf> {
    let mut names: Vec<String> = Vec::new();
    match subject.command {
        CommandRef::Line(line) => {
            names.push("/bin/sh".into());
            let analysis = parse::analyse_for(line, &[Shell::Sh, Shell::Bash]);
            names.extend(
                analysis
                    .commands
                    .iter()
                    .filter_map(|c| c.words.first().cloned()),
            );
        }
        CommandRef::Argv(argv) => names.extend(argv.first().cloned()),
        CommandRef::Tool(_) => {}
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < names.len() {
        let name = names[i].clone();
        i += 1;
        let program = name.rsplit('/').next().unwrap_or(&name).to_owned();
        for helper in programs::helpers(&program) {
            match helper.strip_suffix('*') {
                // A family of programs: wherever the program keeps them.
                Some(prefix) => found.extend(exec_dirs(&program, prefix, path)),
                None if !names.iter().any(|n| n == helper) => names.push((*helper).to_owned()),
                None => {}
            }
        }
        found.extend(locate(&name, cwd, path));
    }
    found.sort();
    found.dedup();
    found
}

/// Where the shell finds `name`: itself when it has a `/` (relative to `cwd`), else the
/// first executable of that name in `path`'s absolute entries. None when it is nowhere
/// (a builtin such as `cd`).
fn locate(name: &str, cwd: &Path, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if name.contains('/') {
        return Some(cwd.join(name));
    }
    path.split(':')
        .filter(|d| d.starts_with('/'))
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The directories holding `prefix*` programs of `program` (`git-*`: `git --exec-path`,
/// `/usr/lib/git-core` on Debian): its libexec directory beside where it is installed,
/// and the entries of `path` that hold any.
fn exec_dirs(program: &str, prefix: &str, path: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [
        "/usr/lib",
        "/usr/libexec",
        "/usr/local/lib",
        "/usr/local/libexec",
    ] {
        let d = Path::new(dir).join(format!("{program}-core"));
        if d.is_dir() {
            out.push(d);
        }
    }
    for dir in path.split(':').filter(|d| d.starts_with('/')) {
        out.extend(named_in(Path::new(dir), prefix));
    }
    out
}

/// The entries of `dir` whose names start with `prefix`: listed again only when the
/// directory changed (its inode, mtime or ctime), since `/usr/bin` holds thousands and
/// every harmless run asks.
fn named_in(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    use std::collections::HashMap;
    type Listing = (confine::Seen, Vec<PathBuf>);
    static LISTED: std::sync::Mutex<Option<HashMap<(PathBuf, String), Listing>>> =
        std::sync::Mutex::new(None);
    let Some(stamp) = confine::seen(dir, true) else {
        return Vec::new();
    };
    let key = (dir.to_path_buf(), prefix.to_owned());
    if let Some((seen, names)) = LISTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(&key)
        && *seen == stamp
    {
        return names.clone();
    }
    let names: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.path())
        .collect();
    LISTED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(key, (stamp, names.clone()));
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::paths;

    #[test]
    fn every_guarded_entry_is_a_guard_setting_or_gits_directory() {
        for g in GUARDED {
            let inside = format!("/p/{g}/x");
            assert!(
                paths::guard_settings(&format!("/p/{g}")).is_some()
                    || paths::guard_settings(&inside).is_some(),
                "{g} is no guard setting"
            );
        }
    }
}
