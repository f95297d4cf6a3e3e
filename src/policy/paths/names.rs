//! What a path's text names: a path at all, a secret, a file whose change runs code or
//! grants access, an agent's guard settings. The policy (`paths`) applies these to a
//! path as written and to the file it resolves to; where nothing exists yet, the text
//! is all there is. They work on components and names, and err towards "sensitive".

/// A word a program would read as a file path rather than a name.
pub fn is_path(word: &str) -> bool {
    word.contains('/') || word.starts_with('.') || word.starts_with('~')
}

/// Directories whose whole content is credentials or keys.
const SECRET_DIRS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".password-store",
    ".kube",
    ".docker",
    ".terraform.d",
    "gcloud",
    "keyrings",
    ".vault",
];

/// File names that hold credentials.
const SECRET_NAMES: &[&str] = &[
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".envrc",
    ".vault-token",
    ".dockercfg",
    ".boto",
    ".s3cfg",
    ".htpasswd",
    "credentials",
    "credentials.json",
    "credentials.toml",
    "credentials.db",
    "access_tokens.db",
    "hosts.yml",
    "rclone.conf",
    "master.key",
    "shadow",
    "gshadow",
    "shadow-",
    "gshadow-",
    "sudoers",
    "environ",
    "terraform.tfstate",
    "terraform.tfstate.backup",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".node_repl_history",
    "cookies",
    "cookies.sqlite",
    "login data",
    "logins.json",
    "key4.db",
];

/// Extensions of key and certificate stores.
const SECRET_EXTENSIONS: &[&str] = &[
    "pem", "key", "p12", "pfx", "jks", "keystore", "ppk", "kdbx", "gpg", "asc", "tfvars",
];

/// A path that holds secrets: keys, tokens, passwords, shell history, the environment of
/// a process, a dotenv file. Reading one is never approved by a wildcard.
pub fn is_secret(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let parts: Vec<&str> = lower
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let Some(name) = parts.last().copied() else {
        return false;
    };
    if parts.iter().any(|p| SECRET_DIRS.contains(p)) {
        return true;
    }
    if SECRET_NAMES.contains(&name) || is_dotenv(name) {
        return true;
    }
    if name.starts_with("id_rsa")
        || name.starts_with("id_dsa")
        || name.starts_with("id_ecdsa")
        || name.starts_with("id_ed25519")
        || name.starts_with("secrets.")
        || name.starts_with("service-account")
    {
        return true;
    }
    if name
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && SECRET_EXTENSIONS.contains(&ext))
    {
        return true;
    }
    // A repository's config may hold a token in a remote URL or an extra header.
    if parts.ends_with(&[".git", "config"]) || parts.ends_with(&[".git", "config.worktree"]) {
        return true;
    }
    // /proc/PID/environ, /proc/PID/mem and friends; /dev/mem.
    if parts.first() == Some(&"proc") && matches!(name, "environ" | "mem" | "auxv" | "maps") {
        return true;
    }
    matches!(lower.as_str(), "/dev/mem" | "/dev/kmem" | "/dev/port")
}

/// The components of `path` as the kernel takes `..` back through real directories
/// (`.git/x/../config`), lowercased: on a case-insensitive file system (vfat, a
/// casefolded ext4 directory, macOS) `.Claude/Settings.json` is `.claude/settings.json`,
/// and judging every path as if it were one errs towards asking.
pub(super) fn components(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| p != "..") => {
                parts.pop();
            }
            other => parts.push(other.to_lowercase()),
        }
    }
    parts
}

/// What an agent's guard settings file is, when `path` names one (or lies inside one of
/// their directories): the coding agents' settings, hooks, plugins, extensions and the
/// MCP servers they start at launch (outside every hook), and a repository's git
/// configuration, hooks, submodules' repositories and the links between a worktree and
/// its repository, which decide what a later git command runs. An agent that may touch
/// these may undo its guard, so no access is approved without a human. Judged on
/// components: the path may be relative, and the agent's filesystem may not be
/// readable here.
pub fn guard_settings(path: &str) -> Option<&'static str> {
    let parts = components(path);
    let n = parts.len();
    let name = parts.last()?.as_str();
    let parent = |i: usize| (n > i).then(|| parts[n - 1 - i].as_str());
    // Inside a directory whose every file is guard settings: the agents' own
    // directories, a repository's hooks and its submodules' repositories.
    // (The directory itself is a sensitive file, `sensitive`: writing it in place
    // replaces all of it, while a word that names it, `--exclude-dir=.claude`, is none
    // of its files.)
    for (i, part) in parts.iter().enumerate() {
        let next = parts.get(i + 1).map(String::as_str);
        match (part.as_str(), next) {
            (".claude", Some(_)) => return Some("Claude Code's settings, hooks and plugins"),
            (".codex", Some(_)) => return Some("Codex's settings and command rules"),
            (".gemini", Some(_)) => return Some("Gemini CLI's settings and extensions"),
            (".cursor", Some(_)) => return Some("Cursor's settings, hooks and MCP servers"),
            (".copilot", Some(_)) => return Some("GitHub Copilot's settings and hooks"),
            (".github", Some("hooks")) => return Some("GitHub Copilot's hook settings"),
            (".git", Some("hooks")) => return Some("a repository's git hooks"),
            (".git", Some("modules")) => return Some("a submodule's repository"),
            _ => {}
        }
    }
    if name == ".gitconfig" || (parent(1) == Some("git") && parent(2) == Some(".config")) {
        return Some("git's user configuration");
    }
    if parts.iter().rev().skip(1).any(|p| p == ".git") {
        // A worktree's or a linked repository's pointer to where its repository lies.
        if matches!(name, "commondir" | "gitdir") {
            return Some("a repository's link to its git directory");
        }
        if matches!(name, "config" | "config.worktree") {
            return Some("a repository's git configuration");
        }
    }
    match name {
        ".claude.json" => Some("Claude Code's settings (its MCP servers)"),
        ".mcp.json" => Some("a project's MCP servers, which an agent starts at launch"),
        _ => None,
    }
}

/// Files whose change gives code execution or lasting access, and what each is: shell
/// start-up files, ssh's authorized keys, system directories, crontabs, and the rc files
/// that profiled programs read from the working directory or the home (what `npm ls`
/// or `curl` reads before it does anything). Writing one is never approved by a wildcard.
pub fn sensitive(path: &str) -> Option<&'static str> {
    const PREFIXES: &[&str] = &[
        "/etc/",
        "/boot/",
        "/usr/",
        "/bin/",
        "/sbin/",
        "/lib/",
        "/lib64/",
        "/lib32/",
        "/var/spool/cron",
        "/root/",
        "/sys/",
        "/proc/sys/",
    ];
    let trimmed = path.trim_end_matches('/');
    if matches!(
        trimmed,
        "/etc" | "/boot" | "/usr" | "/bin" | "/sbin" | "/root"
    ) || PREFIXES.iter().any(|p| path.starts_with(p))
    {
        return Some("a system file");
    }
    let parts = components(trimmed);
    let name = parts.last()?.as_str();
    let within = |a: &str, b: &str| parts.windows(2).any(|w| w[0] == a && w[1] == b);
    if parts.iter().any(|p| p == ".ssh") {
        return Some("ssh's keys and settings");
    }
    if within(".git", "hooks") {
        return Some("a repository's git hooks");
    }
    if within(".config", "autostart") || within(".config", "systemd") {
        return Some("a program started at login");
    }
    if within(".config", "fish") || parent_is(&parts, "profile.d") {
        return Some("a shell's start-up file");
    }
    if within(".cargo", "config") || within(".cargo", "config.toml") {
        return Some("cargo's configuration (`.cargo/config.toml`)");
    }
    if within(".config", "pip") || within(".pip", "pip.conf") {
        return Some("pip's configuration");
    }
    match name {
        ".bashrc" | ".bash_profile" | ".bash_login" | ".bash_logout" | ".profile" | ".zshrc"
        | ".zprofile" | ".zshenv" | ".zlogin" | ".zlogout" | ".kshrc" | ".mkshrc" | ".cshrc"
        | ".tcshrc" | ".login" | ".inputrc" | ".xprofile" | ".xinitrc" | ".xsessionrc"
        | ".pam_environment" | "bash.bashrc" => Some("a shell's start-up file"),
        "authorized_keys" | "authorized_keys2" => Some("ssh's authorized keys"),
        // A `.git` file says which repository git uses; creating one moves it.
        ".git" => Some("a worktree's git directory or its pointer"),
        ".claude" | ".codex" | ".gemini" | ".cursor" | ".copilot" => {
            Some("an agent's settings directory")
        }
        "sudoers" => Some("sudo's rules"),
        "crontab" => Some("a crontab"),
        ".gitconfig" => Some("git's user configuration"),
        ".netrc" => Some("the network logins (`.netrc`)"),
        ".npmrc" => Some("npm's configuration (`.npmrc`)"),
        ".yarnrc" | ".yarnrc.yml" => Some("yarn's configuration"),
        ".curlrc" | "_curlrc" => Some("curl's configuration (`.curlrc`)"),
        ".wgetrc" => Some("wget's configuration (`.wgetrc`)"),
        ".jq" => Some("jq's start-up definitions (`~/.jq`)"),
        "pip.conf" | "pip.ini" | ".pydistutils.cfg" => Some("pip's configuration"),
        ".pypirc" => Some("the package index logins (`.pypirc`)"),
        ".envrc" => Some("direnv's start-up script (`.envrc`)"),
        _ if is_dotenv(name) => Some("a dotenv file"),
        _ => None,
    }
}

fn parent_is(parts: &[String], dir: &str) -> bool {
    parts.len() >= 2 && parts[parts.len() - 2] == dir
}

/// `.env`, `.env.local`, `.env.production`, `prod.env`; not `.env.example` and its kind.
pub fn is_dotenv(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let template = name.rsplit_once('.').is_some_and(|(_, ext)| {
        matches!(ext, "example" | "sample" | "template" | "dist" | "defaults")
    });
    !template && (name == ".env" || name.starts_with(".env.") || name.ends_with(".env"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets() {
        for p in [
            "/home/u/.ssh/id_rsa",
            ".ssh/config",
            "../../.aws/credentials",
            ".env",
            "app/.env.local",
            "prod.env",
            "/etc/shadow",
            "/proc/self/environ",
            "/proc/1/environ",
            "server.key",
            "certs/tls.PEM",
            ".git/config",
            "/root/.bash_history",
            "/home/u/.kube/config",
            "/home/u/.docker/config.json",
            "/home/u/.config/gcloud/application_default_credentials.json",
            "/home/u/.netrc",
            "secrets.yaml",
            "terraform.tfstate",
        ] {
            assert!(is_secret(p), "{p} is a secret");
        }
        for p in [
            "README.md",
            "src/main.rs",
            ".env.example",
            ".environment.md",
            "/etc/passwd",
            "/etc/hosts",
            "keys.rs",
            ".gitignore",
            "monkey",
            ".",
            "/",
            "Cargo.toml",
        ] {
            assert!(!is_secret(p), "{p} is not a secret");
        }
    }

    #[test]
    fn guard_settings_files() {
        for p in [
            ".git/config",
            "/srv/repo/.git/hooks/pre-commit",
            ".git/hooks",
            "./.git//config",
            "repo/.git/x/../config",
            ".git/hooks/../hooks/pre-push",
            "/home/u/.claude/settings.json",
            ".claude/settings.local.json",
            "/home/u/.codex/hooks.json",
            "/home/u/.codex/config.toml",
            "/home/u/.codex/rules/default.rules",
            ".gemini/settings.json",
            ".cursor/hooks.json",
            ".github/hooks/execgate.json",
            "/home/u/.copilot/config.json",
            "/home/u/.copilot/hooks/execgate.json",
            "/home/u/.gitconfig",
            "/home/u/.config/git/config",
            ".claude/commands/x.md",
            "/home/u/.claude.json",
            ".mcp.json",
            "/home/u/.claude/plugins/p/hooks/hooks.json",
            "/home/u/.gemini/extensions/e/gemini-extension.json",
            ".git/modules/sub/config",
            ".git/modules/sub/hooks/post-checkout",
            ".git/commondir",
            ".git/worktrees/w/gitdir",
            "/home/u/.Claude/settings.json",
            ".GIT/HOOKS/pre-commit",
        ] {
            assert!(guard_settings(p).is_some(), "{p} is guard settings");
        }
        for p in [
            "config",
            "src/config.rs",
            "gitdir",
            "docs/.git-notes",
            ".git",
            ".claude",
            ".gitconfig.bak",
            ".github/workflows/ci.yml",
            "settings.json",
            ".gitignore",
            "",
            "/",
        ] {
            assert!(guard_settings(p).is_none(), "{p} is not guard settings");
        }
    }

    #[test]
    fn sensitive_files() {
        for p in [
            "/home/u/.bashrc",
            ".profile",
            "/home/u/.ssh/authorized_keys",
            "/etc/profile.d/x.sh",
            ".npmrc",
            "/home/u/.config/fish/config.fish",
            ".cargo/config.toml",
            "/home/u/.cargo/config",
            ".curlrc",
            ".wgetrc",
            "/home/u/.jq",
            "/home/u/.config/pip/pip.conf",
            ".yarnrc.yml",
            ".BashRC",
            "app/.env",
            "sub/.git",
            ".claude",
        ] {
            assert!(sensitive(p).is_some(), "{p} is sensitive");
        }
        for p in [
            "src/main.rs",
            "npmrc.md",
            ".cargo/registry/x",
            "Cargo.toml",
            "",
        ] {
            assert!(sensitive(p).is_none(), "{p} is not sensitive");
        }
    }
}
