//! Configuration gates for the profiled programs other than git: the files a program
//! reads from the directory it runs in (and those above it) and from its user's home,
//! which an agent can often write (docs/decisions.md, "Configuration gates").
//!
//! `npm ls` is harmless by its words, but npm reads the project's `.npmrc`, where
//! `userconfig=` names another file to read, `logs-dir=` where to write, and
//! `viewer=browser` a program `npm help` starts; cargo runs the `build.rustc-wrapper` of
//! any `.cargo/config.toml` above it, rustup's proxy the toolchain `rust-toolchain.toml`
//! names; docker compose takes `DOCKER_HOST` from `.env`. What each program reads, and
//! how each file is judged, is that program's profile's (`Profile::config`): this
//! module only finds the files and applies the judgement. A command is approved without
//! a human (step 8, or a rule) only where every file found passes; the reason names the
//! file and the key. What cannot be read whole is not vouched for.
//!
//! In run mode, what the environment can neutralise exactly is neutralised for every
//! run (`Config::run_env`: npm's user and global configuration, pip's files), so those
//! files are not judged; the rest is judged again just before the run, and, since the
//! program reads it after execgate, only where no other uid could change it in between.
//!
//! Files are read with the repository reader (`gitrepo::files`): regular files only,
//! without blocking, within one budget of files, bytes and time.

mod judge;

use std::path::{Path, PathBuf};

use super::gitrepo::files::Reader;
use super::programs::{self, Config, ConfigFile, Judge, Place, Understanding};
use super::{Subject, parse, risk};

/// The largest configuration file execgate reads.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Why the programs in this command must not be approved without a human, if they must
/// not: a configuration file any of them would read could change what runs, what is read
/// or where it writes (or execgate cannot tell). `None` when no program in the command
/// reads configuration execgate knows of, or all of it passes.
pub(super) fn gate(
    analysis: &parse::Analysis,
    understood: &[Understanding],
    subject: Subject<'_>,
) -> Option<String> {
    // Every program, looked through wrappers and `sh -c` scripts: `timeout 5 npm ls` is
    // npm too.
    let mut readers: Vec<(String, Vec<&'static Config>)> = Vec::new();
    let mut others: Vec<(Vec<String>, bool)> = Vec::new();
    for (c, u) in analysis.commands.iter().zip(understood) {
        for (i, words) in risk::looked_through_command(c).into_iter().enumerate() {
            let Some(program) = words.first() else {
                continue;
            };
            let inner;
            let reading = if i == 0 {
                u
            } else {
                inner = programs::understand(&words, false);
                &inner
            };
            // A program whose configuration is its environment alone reads no file here.
            let mut configs = programs::configs(program, reading);
            configs.retain(|c| !c.files.is_empty());
            if configs.is_empty() {
                others.push((words, i == 0 && u.profiled));
            } else {
                readers.push((reading.program.clone(), configs));
            }
        }
    }
    let (first, _) = readers.first()?;
    // Only what execgate knows keeps the program where it stands: a builtin (`cd`,
    // `export`) before it moves it, or changes its environment.
    if let Some(mover) = risk::first_mover(&others) {
        return Some(format!(
            "{first} runs alongside `{mover}`, which execgate does not know (a builtin like `cd` or `export` moves it elsewhere), and execgate reads only the configuration {first} finds from the cwd"
        ));
    }
    let Some(cwd) = subject.cwd else {
        return Some(format!(
            "{first}: the request gives no cwd, so execgate cannot read the configuration {first} would read there"
        ));
    };
    // In run mode the program runs as execgate's own user, with execgate's `HOME`;
    // otherwise as the agent.
    let uid = if subject.run {
        Some(crate::sys::effective_uid())
    } else {
        subject.uid
    };
    let home = home_of(uid);
    let mut r = Reader::new(uid);
    for (program, configs) in &readers {
        for file in configs.iter().flat_map(|c| c.files) {
            if subject.run && file.neutralised {
                continue;
            }
            match judge_file(&mut r, file, cwd, &home, subject.uid) {
                Ok(None) => {}
                Ok(Some(why)) => return Some(format!("{program}: {why}")),
                Err(e) => {
                    return Some(format!(
                        "{program}: cannot read its configuration fully: {e}"
                    ));
                }
            }
        }
    }
    if subject.run
        && let Some(why) = r.writable
    {
        return Some(format!(
            "{first}: {why}, so its configuration could change between execgate's reading and {first}'s; execgate runs it on its own word only where no other user can write what it reads"
        ));
    }
    None
}

/// [`gate`] for a request about to run: the files may have changed since policy
/// approved it.
pub fn refusal(subject: Subject<'_>) -> Option<String> {
    let (refusal, overspent) = parse::budgeted(|| {
        let analysis = super::analysed(subject);
        let understood: Vec<Understanding> = analysis
            .commands
            .iter()
            .map(|c| programs::understand(&c.words, c.piped))
            .collect();
        gate(&analysis, &understood, subject)
    });
    match refusal {
        None if overspent => Some(parse::overspent_reason()),
        refusal => refusal,
    }
}

/// The variables every run gets (`Config::run_env` of every profile), except those the
/// owner passes through (`exec.env_passthrough`, already in `env`).
pub fn neutralising_env_for(env: &[(String, String)]) -> Vec<(String, String)> {
    neutralising_env()
        .into_iter()
        .filter(|(k, _)| !env.iter().any(|(have, _)| have == k))
        .collect()
}

/// The variables every run gets: each profile's `Config::run_env`.
pub fn neutralising_env() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for config in programs::all_configs() {
        for (k, v, _) in config.run_env {
            if !out.iter().any(|(have, _)| have == k) {
                out.push((k.to_string(), v.to_string()));
            }
        }
    }
    out
}

/// Why `file` makes the program unsafe to approve, as found from `cwd` (and `home`), if
/// it does, in words fit for `agent` to read. `Err`: it, or where it would be, cannot be
/// read.
fn judge_file(
    r: &mut Reader,
    file: &ConfigFile,
    cwd: &Path,
    home: &Home,
    agent: Option<u32>,
) -> Result<Option<String>, String> {
    let places: Vec<PathBuf> = match file.place {
        Place::Up => {
            let mut dirs = Vec::new();
            for dir in cwd.ancestors() {
                // Someone who could write the directory could add the file.
                r.dir(dir)?;
                dirs.push(dir.join(file.name));
            }
            dirs
        }
        Place::Home => match home {
            Home::At(home) => vec![home.join(file.name)],
            Home::NoAgent => Vec::new(),
            Home::Unknown => {
                return Err(format!(
                    "the home directory of the user it runs as is unknown, and ~/{} may be there",
                    file.name
                ));
            }
        },
    };
    for path in places {
        if let Some(why) = judge_one(r, file, &path, agent)? {
            return Ok(Some(why));
        }
    }
    Ok(None)
}

fn judge_one(
    r: &mut Reader,
    file: &ConfigFile,
    path: &Path,
    agent: Option<u32>,
) -> Result<Option<String>, String> {
    if let Judge::Exists = file.judge {
        return Ok(r
            .stat(path)?
            .map(|_| format!("{} is there ({})", path.display(), file.why)));
    }
    let Some((bytes, meta)) = r.read_with_meta(path, MAX_FILE_BYTES)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    let verdict = judge::first_refused(file.judge, &text);
    // The reason reaches the agent: what execgate read as root through a symlink the
    // agent made (`.npmrc -> /etc/shadow`) must not come back to it as a key's name.
    if !agent_may_read(&meta, agent) && !matches!(verdict, Ok(None)) {
        return Ok(Some(format!(
            "{} is a file the agent may not read, and execgate does not vouch for what it sets ({})",
            path.display(),
            file.why
        )));
    }
    Ok(match verdict {
        Ok(None) => None,
        Ok(Some(key)) => Some(format!(
            "{} sets `{key}`, which execgate does not know to be harmless ({})",
            path.display(),
            file.why
        )),
        Err(e) => Some(format!(
            "{} is not read whole by execgate ({e}; {})",
            path.display(),
            file.why
        )),
    })
}

/// Whether the agent (`uid`, if known) may read a file with `meta`: root, its owner with
/// the owner's read bit, anyone when others may. A group's read bit does not count:
/// execgate does not know the agent's groups.
fn agent_may_read(meta: &std::fs::Metadata, uid: Option<u32>) -> bool {
    use std::os::unix::fs::MetadataExt;
    match uid {
        Some(0) => true,
        Some(uid) if uid == meta.uid() => meta.mode() & 0o400 != 0,
        _ => meta.mode() & 0o004 != 0,
    }
}

/// The home directory whose files the program reads.
#[derive(Debug)]
enum Home {
    At(PathBuf),
    /// The request came from no agent: agents reach execgate over its Unix socket, whose
    /// peer uid the kernel gives; only a TCP client (the owner's page) has none, and no
    /// agent's home is involved.
    NoAgent,
    /// The uid has no home execgate can find: files there cannot be judged.
    Unknown,
}

/// The home directory the program will use: in run mode (or when the agent is execgate's
/// own user) execgate's `HOME`, which a run gets; otherwise the agent's from the
/// password database.
fn home_of(uid: Option<u32>) -> Home {
    let Some(uid) = uid else {
        return Home::NoAgent;
    };
    if uid == crate::sys::effective_uid()
        && let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty())
    {
        return Home::At(PathBuf::from(home));
    }
    passwd_home(uid).map_or(Home::Unknown, Home::At)
}

/// `uid`'s home directory from the password database.
fn passwd_home(uid: u32) -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids).
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: the buffers are valid for their lengths; getpwuid_r writes only into them.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() || pwd.pw_dir.is_null() {
        return None;
    }
    // SAFETY: getpwuid_r succeeded: `pw_dir` points at a NUL-terminated string in `buf`.
    let dir = unsafe { CStr::from_ptr(pwd.pw_dir) };
    let dir = std::ffi::OsStr::from_bytes(dir.to_bytes());
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const NPMRC: ConfigFile = ConfigFile {
        name: ".npmrc",
        place: Place::Up,
        judge: Judge::NpmIni(&["save-exact"]),
        why: "test",
        neutralised: false,
    };
    const RC: ConfigFile = ConfigFile {
        name: ".rc",
        place: Place::Home,
        judge: Judge::Exists,
        why: "test",
        neutralised: false,
    };

    #[test]
    fn files_are_found_up_the_tree_and_in_the_home() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b");
        fs::create_dir_all(&deep).unwrap();
        let mut r = Reader::new(None);
        let none = Home::NoAgent;
        assert_eq!(
            judge_file(&mut r, &NPMRC, &deep, &none, Some(0)).unwrap(),
            None
        );
        fs::write(dir.path().join("a/.npmrc"), "save-exact=true\nviewer=x\n").unwrap();
        let why = judge_file(&mut r, &NPMRC, &deep, &none, Some(0))
            .unwrap()
            .unwrap();
        assert!(why.contains("a/.npmrc sets `viewer`"), "{why}");

        assert!(judge_file(&mut r, &RC, &deep, &Home::Unknown, Some(0)).is_err());
        let home = Home::At(deep.clone());
        assert_eq!(
            judge_file(&mut r, &RC, &deep, &home, Some(0)).unwrap(),
            None
        );
        fs::write(deep.join(".rc"), "").unwrap();
        let why = judge_file(&mut r, &RC, &deep, &home, Some(0))
            .unwrap()
            .unwrap();
        assert!(why.contains(".rc is there"), "{why}");
    }

    /// What execgate read through a symlink the agent made to a file it may not read
    /// is not echoed back to it.
    #[test]
    fn keys_of_files_the_agent_may_not_read_are_not_named() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        fs::write(&secret, "root-password-hash=x\n").unwrap();
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join(".npmrc")).unwrap();
        let mut r = Reader::new(None);
        let agent = Some(4_000_000_000);
        let why = judge_file(&mut r, &NPMRC, dir.path(), &Home::NoAgent, agent)
            .unwrap()
            .unwrap();
        assert!(!why.contains("root-password-hash"), "{why}");
        assert!(why.contains("may not read"), "{why}");
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o644)).unwrap();
        let why = judge_file(&mut r, &NPMRC, dir.path(), &Home::NoAgent, agent)
            .unwrap()
            .unwrap();
        assert!(why.contains("root-password-hash"), "{why}");
    }

    #[test]
    fn the_password_database_names_homes() {
        assert_eq!(passwd_home(0), Some(PathBuf::from("/root")));
        assert_eq!(passwd_home(4_000_000_000), None);
    }

    /// A file is skipped in run mode only where its program's `run_env` is what keeps
    /// the program from reading it; names are relative to where they are looked for.
    #[test]
    fn the_profiles_configuration_is_consistent() {
        for config in programs::all_configs() {
            for f in config.files {
                let relative = !f.name.starts_with(['/', '~'])
                    && !f.name.split('/').any(|c| matches!(c, "" | "." | ".."));
                assert!(relative, "{}", f.name);
                assert!(
                    !f.neutralised || !config.run_env.is_empty(),
                    "{} is skipped in run mode, but nothing neutralises it",
                    f.name
                );
                assert!(!f.why.is_empty() && !f.why.ends_with('.'), "{}", f.name);
            }
            assert!(!config.env.is_empty());
        }
    }

    #[test]
    fn every_run_gets_each_variable_once() {
        let env = neutralising_env();
        assert!(env.iter().any(|(k, _)| k == "npm_config_userconfig"));
        let mut names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), env.len());
        let kept = neutralising_env_for(&[("PIP_CONFIG_FILE".into(), "/x".into())]);
        assert!(!kept.iter().any(|(k, _)| k == "PIP_CONFIG_FILE"));
    }
}
