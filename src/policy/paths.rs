//! What a path names, judged from its text alone: a path at all, a secret, a file whose
//! change runs code or grants access. The command's words are all execgate has (in
//! decide-only mode the agent's filesystem may not even be readable), so these work on
//! components and names, and err towards "sensitive".

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

/// What an agent's guard settings file is, when `path` names one (or lies inside one of
/// their directories): the coding agents' hook and permission settings, which switch
/// execgate's hook off, and a repository's `.git/config` and `.git/hooks/`, which decide
/// what a later git command runs. An agent that may write these may undo its guard, so
/// writing them is never approved without a human. Judged on components: the path may be
/// relative, and the agent's filesystem may not be readable here.
pub fn guard_settings(path: &str) -> Option<&'static str> {
    // `..` taken back as the kernel would through real directories: `.git/x/../config`.
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let n = parts.len();
    let name = *parts.last()?;
    let parent = |i: usize| (n > i).then(|| parts[n - 1 - i]);
    // Inside a directory whose every file is guard settings.
    for w in parts.windows(2) {
        match w {
            [".git", "hooks"] => return Some("a repository's git hooks"),
            [".github", "hooks"] => return Some("GitHub Copilot's hook settings"),
            [".codex", "rules"] => return Some("Codex's command rules"),
            [".copilot", "hooks"] => return Some("GitHub Copilot's hook settings"),
            _ => {}
        }
    }
    let json = |stem: &str| name.starts_with(stem) && name.ends_with(".json");
    if name == ".gitconfig" || (parent(1) == Some("git") && parent(2) == Some(".config")) {
        return Some("git's user configuration");
    }
    match (parent(1), name) {
        (Some(".git"), "config" | "config.worktree") => Some("a repository's git configuration"),
        (Some(".claude"), _) if json("settings") => Some("Claude Code's settings (its hooks)"),
        (Some(".codex"), "hooks.json" | "config.toml") => Some("Codex's settings (its hooks)"),
        (Some(".gemini"), "settings.json") => Some("Gemini CLI's settings (its hooks)"),
        (Some(".cursor"), "hooks.json") => Some("Cursor's hook settings"),
        (Some(".copilot"), _) if name.ends_with(".json") => Some("GitHub Copilot's settings"),
        _ => None,
    }
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
        ] {
            assert!(guard_settings(p).is_some(), "{p} is guard settings");
        }
        for p in [
            "config",
            "src/config.rs",
            ".claude/commands/x.md",
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
}
