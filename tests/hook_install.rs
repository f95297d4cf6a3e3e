//! `execgate hook install|uninstall AGENT`, run as a user runs it: the real binary with
//! `HOME` in a temporary directory and a config file that sets `approval.timeout_secs`,
//! against settings files that are absent, hand-kept (other hooks, other keys, comments
//! where the agent allows them, their own indentation), malformed, or already holding
//! execgate's entry. What must hold: one entry of execgate's, as each agent needs it;
//! every other byte of the file as it was; a backup with the original bytes; nothing
//! written when nothing changes, with `--print`, or when the file is refused.

use execgate_testkit as common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{execgate_binary, stderr, stdout};
use execgate::model::shell_join;
use serde_json::{Value, json};

/// `approval.timeout_secs` in the tests' config: the hook's timeout must be 30 s more.
const APPROVAL_SECS: u64 = 75;

/// What the tests know about each agent's settings, independently of the code.
struct Agent {
    word: &'static str,
    /// Under `HOME`.
    user_file: &'static str,
    /// Under `--project DIR`.
    project_file: &'static str,
    event: &'static str,
    /// The matcher of execgate's group, for the agents that group handlers.
    matcher: Option<&'static str>,
    command_key: &'static str,
    timeout_key: &'static str,
    /// The timeout's unit, in seconds per unit's thousandth: 1000 for seconds, 1 for ms.
    per_second: u64,
    fail_closed: Option<(&'static str, Value)>,
    /// A settings file someone keeps by hand: other settings, other hooks in the same
    /// event's array and in other events, strings with brackets and non-ASCII text,
    /// the agent's own indentation.
    kept: &'static str,
}

const CLAUDE_KEPT: &str = r#"{
    "model": "opus",
    "env": {
        "NOTE": "brackets { [ \" ] } and é 😀 in a string"
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Write",
                "hooks": [
                    {"type": "command", "command": "prettier --check \"$FILE\""}
                ]
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    },
    "permissions": {"allow": ["Bash(ls:*)"], "deny": []}
}
"#;

const CODEX_KEPT: &str = "{\n\t\"hooks\": {\n\t\t\"SessionStart\": [],\n\t\t\"PreToolUse\": [\n\t\t\t{\n\t\t\t\t\"matcher\": \"^apply_patch$\",\n\t\t\t\t\"hooks\": [{\"type\": \"command\", \"command\": \"/usr/bin/audit '{x}'\", \"timeout\": 5}]\n\t\t\t}\n\t\t]\n\t}\n}";

const GEMINI_KEPT: &str = r#"// Gemini reads its settings with comments allowed.
{
  "ui": { /* my theme */ "theme": "GitHub" },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "read_file",
        "hooks": [{"type": "command", "command": "log-read", "timeout": 5000}]
      }
    ],
    "AfterAgent": []
  }
}
"#;

const CURSOR_KEPT: &str = r#"{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{"command": "./format.sh"}],
    "beforeShellExecution": [
      {"command": "./audit.sh", "timeout": 10}
    ]
  }
}
"#;

const COPILOT_KEPT: &str = r#"{
  "version": 1,
  "hooks": {
    "preToolUse": [
      {"type": "command", "bash": "./scripts/log.sh", "timeoutSec": 5}
    ]
  }
}
"#;

fn agents() -> [Agent; 5] {
    [
        Agent {
            word: "claude-code",
            user_file: ".claude/settings.json",
            project_file: ".claude/settings.json",
            event: "PreToolUse",
            // Every tool: `*` is Claude Code's match-all.
            matcher: Some("*"),
            command_key: "command",
            timeout_key: "timeout",
            per_second: 1,
            fail_closed: Some(("onFailure", json!("block"))),
            kept: CLAUDE_KEPT,
        },
        Agent {
            word: "codex",
            user_file: ".codex/hooks.json",
            project_file: ".codex/hooks.json",
            event: "PreToolUse",
            matcher: Some("*"),
            command_key: "command",
            timeout_key: "timeout",
            per_second: 1,
            fail_closed: None,
            kept: CODEX_KEPT,
        },
        Agent {
            word: "gemini",
            user_file: ".gemini/settings.json",
            project_file: ".gemini/settings.json",
            event: "BeforeTool",
            // Every tool: Gemini CLI's matcher is a regular expression.
            matcher: Some(".*"),
            command_key: "command",
            timeout_key: "timeout",
            per_second: 1000,
            fail_closed: None,
            kept: GEMINI_KEPT,
        },
        Agent {
            word: "cursor",
            user_file: ".cursor/hooks.json",
            project_file: ".cursor/hooks.json",
            event: "beforeShellExecution",
            matcher: None,
            command_key: "command",
            timeout_key: "timeout",
            per_second: 1,
            fail_closed: Some(("failClosed", json!(true))),
            kept: CURSOR_KEPT,
        },
        Agent {
            word: "copilot",
            user_file: ".copilot/hooks/execgate.json",
            project_file: ".github/hooks/execgate.json",
            event: "preToolUse",
            matcher: None,
            command_key: "bash",
            timeout_key: "timeoutSec",
            per_second: 1,
            fail_closed: None,
            kept: COPILOT_KEPT,
        },
    ]
}

/// A user's home in a temporary directory, with an execgate config file in it.
struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    config: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let config = dir.path().join("execgate.toml");
        write_config(&config, APPROVAL_SECS);
        Home {
            _dir: dir,
            home,
            config,
        }
    }

    /// `execgate --config CONFIG ARGS` in `HOME`, with only `PATH`, `HOME` and `env`.
    fn execgate(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut cmd = Command::new(execgate_binary());
        cmd.current_dir(&self.home)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .arg("--config")
            .arg(&self.config)
            .args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// `execgate hook ACTION AGENT EXTRA…`, which must exit 0.
    fn hook(&self, action: &str, agent: &Agent, extra: &[&str]) -> Output {
        let mut args = vec!["hook", action, agent.word];
        args.extend(extra);
        let out = self.execgate(&args, &[]);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        out
    }

    fn user_file(&self, agent: &Agent) -> PathBuf {
        self.home.join(agent.user_file)
    }

    /// The command line the hook must run, the global flags excepted: the agent's
    /// timeout for it (`approval_secs` and the margin) comes last.
    fn hook_words(&self, agent: &Agent) -> Vec<String> {
        let binary = execgate_binary().canonicalize().unwrap();
        [
            binary.to_str().unwrap(),
            "hook",
            agent.word,
            "--config",
            self.config.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    }

    /// [`Home::hook_words`], whole.
    fn hook_line(&self, agent: &Agent, approval_secs: u64) -> Vec<String> {
        let mut words = self.hook_words(agent);
        words.extend(["--timeout".into(), (approval_secs + 30).to_string()]);
        words
    }
}

fn write_config(path: &Path, approval_secs: u64) {
    std::fs::write(
        path,
        format!("[approval]\ntimeout_secs = {approval_secs}\n"),
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// The settings as JSON; Gemini's comments, where there are any, are taken out first
/// by reading the file with serde_json after blanking them (only the fixtures have
/// them, in known places).
fn settings(text: &str) -> Value {
    let stripped: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
        .replace("/* my theme */", "");
    serde_json::from_str(&stripped).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The handlers in the event's array that run `execgate … hook AGENT`.
fn execgate_handlers(agent: &Agent, settings: &Value) -> Vec<Value> {
    let elements = settings["hooks"][agent.event]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let handlers: Vec<Value> = match agent.matcher {
        Some(_) => elements
            .iter()
            .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
            .collect(),
        None => elements,
    };
    let needle = format!("hook {}", agent.word);
    handlers
        .into_iter()
        .filter(|h| {
            let line = format!(
                "{} {}",
                h[agent.command_key].as_str().unwrap_or_default(),
                h["args"]
                    .as_array()
                    .map(|a| a
                        .iter()
                        .map(|w| w.as_str().unwrap())
                        .collect::<Vec<_>>()
                        .join(" "))
                    .unwrap_or_default()
            );
            line.contains("execgate") && line.contains(&needle)
        })
        .collect()
}

/// The one entry of execgate's in `text`, checked field by field.
fn check_entry(home: &Home, agent: &Agent, text: &str, approval_secs: u64) {
    let value = settings(text);
    let handlers = execgate_handlers(agent, &value);
    assert_eq!(handlers.len(), 1, "{}: {text}", agent.word);
    let handler = &handlers[0];
    let words = home.hook_line(agent, approval_secs);
    if agent.word == "claude-code" {
        // The exec form: the binary, and its arguments as a list.
        assert_eq!(handler["command"], json!(words[0]));
        assert_eq!(handler["args"], json!(words[1..]));
    } else {
        assert_eq!(
            handler[agent.command_key],
            json!(shell_join(&words)),
            "{}",
            agent.word
        );
    }
    let timeout = (approval_secs + 30) * agent.per_second;
    assert_eq!(handler[agent.timeout_key], json!(timeout), "{}", agent.word);
    if let Some((key, on)) = &agent.fail_closed {
        assert_eq!(&handler[*key], on, "{}", agent.word);
    }
    if let Some(matcher) = agent.matcher {
        let groups = value["hooks"][agent.event].as_array().unwrap();
        let ours: Vec<&Value> = groups
            .iter()
            .filter(|g| g["hooks"].as_array().is_some_and(|h| h.contains(handler)))
            .collect();
        assert_eq!(ours.len(), 1);
        assert_eq!(ours[0]["matcher"], json!(matcher), "{}", agent.word);
        assert_eq!(ours[0]["hooks"].as_array().unwrap().len(), 1);
    }
    if matches!(agent.word, "cursor" | "copilot") {
        assert_eq!(value["version"], json!(1));
    }
}

/// `after` is `before` with one piece of text put in: every byte of `before` is there,
/// in order, around a single insertion. Returns the piece.
fn one_insertion(before: &str, after: &str) -> String {
    let (b, a) = (before.as_bytes(), after.as_bytes());
    let prefix = b.iter().zip(a).take_while(|(x, y)| x == y).count();
    let suffix = b[prefix..]
        .iter()
        .rev()
        .zip(a[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    assert_eq!(
        prefix + suffix,
        b.len(),
        "more than one place differs:\n--- before\n{before}\n--- after\n{after}"
    );
    String::from_utf8(a[prefix..a.len() - suffix].to_vec()).unwrap()
}

/// The backups beside `file`.
fn backups(file: &Path) -> Vec<PathBuf> {
    let name = file.file_name().unwrap().to_str().unwrap();
    let prefix = format!("{name}.execgate-backup-");
    let Ok(entries) = std::fs::read_dir(file.parent().unwrap()) else {
        return vec![];
    };
    let mut found: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(&prefix)
        })
        .collect();
    found.sort();
    found
}

/// What says a file was not rewritten: its bytes, inode and modification time.
fn fingerprint(file: &Path) -> (Vec<u8>, u64, std::time::SystemTime) {
    let m = std::fs::metadata(file).unwrap();
    (std::fs::read(file).unwrap(), m.ino(), m.modified().unwrap())
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap()
}

fn put(file: &Path, text: &str, mode: u32) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn install_on_an_absent_file_writes_one_entry_with_the_timeout_and_the_switch() {
    let home = Home::new();
    for agent in agents() {
        let file = home.user_file(&agent);
        let out = home.hook("install", &agent, &[]);
        let said = stdout(&out);
        assert!(
            said.starts_with(&format!(
                "installed execgate's {} hook in {} (",
                agent.event,
                file.display()
            )) && said.contains("new file"),
            "{said}"
        );
        let text = read(&file);
        check_entry(&home, &agent, &text, APPROVAL_SECS);
        // Nothing else is in it.
        let value = settings(&text);
        assert_eq!(value["hooks"].as_object().unwrap().len(), 1, "{text}");
        assert_eq!(value["hooks"][agent.event].as_array().unwrap().len(), 1);
        assert!(backups(&file).is_empty());
        // New settings are not secret; nobody but the user may change them.
        let mode = std::fs::metadata(&file).unwrap().mode() & 0o777;
        assert_eq!(mode & 0o022, 0, "{mode:o}");
    }
}

#[test]
fn install_into_a_kept_file_adds_the_entry_and_keeps_every_other_byte() {
    let home = Home::new();
    for agent in agents() {
        let file = home.user_file(&agent);
        put(&file, agent.kept, 0o600);
        let out = home.hook("install", &agent, &[]);
        let installed = read(&file);
        check_entry(&home, &agent, &installed, APPROVAL_SECS);
        // Exactly one piece was added, after the hooks already there.
        let added = one_insertion(agent.kept, &installed);
        assert!(added.starts_with(','), "{}: {added:?}", agent.word);
        // The agent reads the hooks that were there, then execgate's.
        let before = settings(agent.kept);
        let after = settings(&installed);
        let kept = before["hooks"][agent.event].as_array().unwrap();
        let now = after["hooks"][agent.event].as_array().unwrap();
        assert_eq!(now.len(), kept.len() + 1);
        assert_eq!(&now[..kept.len()], &kept[..]);
        // The backup holds the original bytes, with the original's mode; so does the
        // file keep its mode.
        let saved = backups(&file);
        assert_eq!(saved.len(), 1, "{}", agent.word);
        assert_eq!(read(&saved[0]), agent.kept);
        assert!(
            stdout(&out).contains(&format!("backup: {}", saved[0].display())),
            "{}",
            stdout(&out)
        );
        for f in [&file, &saved[0]] {
            assert_eq!(std::fs::metadata(f).unwrap().mode() & 0o7777, 0o600);
        }
        // Uninstalling gives back the file byte for byte.
        let out = home.hook("uninstall", &agent, &[]);
        assert!(
            stdout(&out).starts_with(&format!(
                "removed execgate's {} hook from {} (backup: ",
                agent.event,
                file.display()
            )),
            "{}",
            stdout(&out)
        );
        assert_eq!(read(&file), agent.kept, "{}", agent.word);
        let saved = backups(&file);
        assert_eq!(saved.len(), 2);
        assert!(saved.iter().any(|b| read(b) == installed));
    }
}

#[test]
fn installing_again_writes_nothing() {
    let home = Home::new();
    for agent in agents() {
        let file = home.user_file(&agent);
        put(&file, agent.kept, 0o644);
        home.hook("install", &agent, &[]);
        let before = fingerprint(&file);
        let saved = backups(&file);
        let out = home.hook("install", &agent, &[]);
        assert!(
            stdout(&out).starts_with(&format!(
                "execgate's {} hook is already installed in {}",
                agent.event,
                file.display()
            )),
            "{}",
            stdout(&out)
        );
        assert_eq!(fingerprint(&file), before, "{}", agent.word);
        assert_eq!(backups(&file), saved);
        check_entry(&home, &agent, &read(&file), APPROVAL_SECS);
    }
}

#[test]
fn an_entry_out_of_date_is_updated_in_place() {
    let home = Home::new();
    for agent in agents() {
        let file = home.user_file(&agent);
        put(&file, agent.kept, 0o644);
        home.hook("install", &agent, &[]);
        // Someone moved the binary; and the approval timeout changed.
        let binary = execgate_binary().canonicalize().unwrap();
        let moved = read(&file).replace(binary.to_str().unwrap(), "/old/bin/execgate");
        put(&file, &moved, 0o644);
        assert!(moved.contains("/old/bin/execgate"));
        write_config(&home.config, 200);
        let out = home.hook("install", &agent, &[]);
        assert!(
            stdout(&out).starts_with(&format!("updated execgate's {} hook", agent.event)),
            "{}",
            stdout(&out)
        );
        let text = read(&file);
        check_entry(&home, &agent, &text, 200);
        assert!(!text.contains("/old/bin"));
        // Still the same file around it: uninstalling gives back what was kept.
        home.hook("uninstall", &agent, &[]);
        assert_eq!(read(&file), agent.kept, "{}", agent.word);
        write_config(&home.config, APPROVAL_SECS);
    }
}

#[test]
fn a_malformed_file_is_refused_and_left_alone() {
    let home = Home::new();
    for agent in agents() {
        let file = home.user_file(&agent);
        let wrong_event = format!(r#"{{"hooks": {{"{}": {{}}}}}}"#, agent.event);
        let mut cases = vec![
            (r#"{"hooks": {},}"#.to_string(), "line 1, column 14"),
            ("{\n  \"a\": [1, 2\n}".to_string(), "line 3, column 1"),
            (
                r#"{"hooks": []}"#.to_string(),
                "`hooks` is an array, not an object",
            ),
            ("[]".to_string(), "the file holds an array, not an object"),
            (wrong_event, "not an array"),
            ("{\"a\": \"\u{fffd}\" ".to_string(), "line 1, column 11"),
        ];
        if agent.word != "gemini" {
            cases.push((
                "{\n  // a comment\n}".to_string(),
                "line 2, column 3: a comment, which JSON does not allow",
            ));
        }
        for (text, why) in cases {
            put(&file, &text, 0o644);
            let before = fingerprint(&file);
            for action in ["install", "uninstall"] {
                let out = home.execgate(&["hook", action, agent.word], &[]);
                assert_eq!(
                    out.status.code(),
                    Some(2),
                    "{} {action} {text:?}",
                    agent.word
                );
                let err = stderr(&out);
                assert!(
                    err.contains(&file.display().to_string())
                        && err.contains(why)
                        && err.contains("nothing was changed"),
                    "{} {action} {text:?}: {err}",
                    agent.word
                );
                assert_eq!(fingerprint(&file), before);
                assert!(backups(&file).is_empty());
            }
        }
        // Not UTF-8: refused too.
        std::fs::write(&file, b"{\"a\": \"\xff\"}").unwrap();
        let out = home.execgate(&["hook", "install", agent.word], &[]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("not UTF-8"), "{}", stderr(&out));
        assert_eq!(std::fs::read(&file).unwrap(), b"{\"a\": \"\xff\"}");
    }
}

#[test]
fn print_shows_the_file_and_writes_nothing() {
    let home = Home::new();
    for agent in agents() {
        let file = home.user_file(&agent);
        // Absent: nothing is created, not even the directory.
        let out = home.hook("install", &agent, &["--print"]);
        check_entry(&home, &agent, &stdout(&out), APPROVAL_SECS);
        assert!(!file.parent().unwrap().exists(), "{}", agent.word);
        assert!(
            stderr(&out).contains("nothing was written"),
            "{}",
            stderr(&out)
        );
        // Kept: the file and the backups stay as they are, and what is printed is what
        // the install then writes.
        put(&file, agent.kept, 0o644);
        let before = fingerprint(&file);
        let printed = stdout(&home.hook("install", &agent, &["--print"]));
        assert_eq!(fingerprint(&file), before);
        assert!(backups(&file).is_empty());
        home.hook("install", &agent, &[]);
        assert_eq!(read(&file), printed, "{}", agent.word);
        // Uninstalling, printed: the kept file again; nothing written.
        let before = fingerprint(&file);
        let printed = stdout(&home.hook("uninstall", &agent, &["--print"]));
        assert_eq!(printed, agent.kept);
        assert_eq!(fingerprint(&file), before);
        assert_eq!(backups(&file).len(), 1);
    }
}

#[test]
fn project_scope_writes_under_the_project() {
    let home = Home::new();
    std::fs::create_dir(home.home.join("repo")).unwrap();
    for agent in agents() {
        // Relative: against the directory the command runs in.
        let out = home.hook("install", &agent, &["--project", "repo"]);
        let file = home.home.join("repo").join(agent.project_file);
        assert!(
            stdout(&out).contains(&file.display().to_string()),
            "{}",
            stdout(&out)
        );
        check_entry(&home, &agent, &read(&file), APPROVAL_SECS);
        assert!(!home.user_file(&agent).exists());
    }
    let out = home.execgate(&["hook", "install", "codex", "--project", "nowhere"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--project nowhere"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn uninstall_without_an_entry_changes_nothing() {
    let home = Home::new();
    for agent in agents() {
        let file = home.user_file(&agent);
        let out = home.hook("uninstall", &agent, &[]);
        assert!(
            stdout(&out).contains("is not installed"),
            "{}",
            stdout(&out)
        );
        assert!(!file.exists() && !file.parent().unwrap().exists());
        put(&file, agent.kept, 0o644);
        let before = fingerprint(&file);
        let out = home.hook("uninstall", &agent, &[]);
        assert_eq!(
            stdout(&out).trim(),
            format!(
                "execgate's {} hook is not installed in {}",
                agent.event,
                file.display()
            )
        );
        assert_eq!(fingerprint(&file), before);
        assert!(backups(&file).is_empty());
    }
}

#[test]
fn uninstall_takes_out_only_execgates_handler_and_the_containers_it_emptied() {
    let home = Home::new();
    let agent = &agents()[0];
    let file = home.user_file(agent);
    // Someone put execgate's handler into a group of theirs, and a second copy of the
    // entry below it.
    home.hook("install", agent, &[]);
    let ours = settings(&read(&file))["hooks"]["PreToolUse"][0].clone();
    let theirs = json!({"matcher": "Bash", "hooks": [
        {"type": "command", "command": "lint"}, ours["hooks"][0].clone()]});
    let text = serde_json::to_string_pretty(&json!({
        "model": "x", "hooks": {"PreToolUse": [theirs, ours], "Stop": []}}))
    .unwrap();
    put(&file, &text, 0o644);
    let out = home.hook("uninstall", agent, &[]);
    assert!(
        stdout(&out).contains("2 execgate handlers"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        settings(&read(&file)),
        json!({"model": "x", "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
            "Stop": []}})
    );
    // Install on that: one entry of its own again, the group of theirs as it is.
    put(&file, &text, 0o644);
    let out = home.hook("install", agent, &[]);
    assert!(
        stdout(&out).contains("1 other execgate handler removed"),
        "{}",
        stdout(&out)
    );
    let value = settings(&read(&file));
    assert_eq!(
        value["hooks"]["PreToolUse"][0],
        json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]})
    );
    check_entry(&home, agent, &read(&file), APPROVAL_SECS);
    // With only execgate's entry in them, the event's array and `hooks` go too.
    put(&file, "{\n  \"model\": \"x\"\n}\n", 0o644);
    home.hook("install", agent, &[]);
    home.hook("uninstall", agent, &[]);
    assert_eq!(read(&file), "{\n  \"model\": \"x\"\n}\n");
}

#[test]
fn copilots_own_file_is_deleted_once_empty() {
    let home = Home::new();
    let agent = &agents()[4];
    let file = home.user_file(agent);
    home.hook("install", agent, &[]);
    let installed = read(&file);
    let out = home.hook("uninstall", agent, &[]);
    assert!(stdout(&out).contains("deleted"), "{}", stdout(&out));
    assert!(!file.exists());
    let saved = backups(&file);
    assert_eq!(saved.len(), 1);
    assert_eq!(read(&saved[0]), installed);
    // Backups do not end in `.json`: Copilot reads every `*.json` of the directory.
    assert!(saved[0].extension().is_none_or(|e| e != "json"));
}

#[test]
fn a_linked_settings_file_is_edited_where_the_link_points() {
    let home = Home::new();
    let agent = &agents()[0];
    let real = home.home.join("dotfiles/claude-settings.json");
    put(&real, agent.kept, 0o644);
    let link = home.user_file(agent);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = home.hook("install", agent, &[]);
    assert!(stdout(&out).contains("a link to"), "{}", stdout(&out));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    check_entry(&home, agent, &read(&real), APPROVAL_SECS);
    assert_eq!(backups(&real).len(), 1);
    assert!(backups(&link).is_empty());
}

#[test]
fn the_hook_gets_the_flags_that_say_where_the_daemon_is() {
    let home = Home::new();
    let agent = &agents()[1];
    let env_file = home.home.join("execgate.env");
    put(&env_file, "", 0o600);
    let out = home.execgate(
        &[
            "--socket",
            "run/agent.sock",
            "--env-file",
            "execgate.env",
            "hook",
            "install",
            "codex",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let value = settings(&read(&home.user_file(agent)));
    let command = value["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    let mut words = home.hook_words(agent);
    words.extend(
        [
            "--socket",
            home.home.join("run/agent.sock").to_str().unwrap(),
            "--env-file",
            env_file.to_str().unwrap(),
            "--timeout",
            &(APPROVAL_SECS + 30).to_string(),
        ]
        .map(String::from),
    );
    assert_eq!(command, shell_join(&words));
}

#[test]
fn an_agents_own_home_variable_is_followed() {
    let home = Home::new();
    let codex_home = home.home.join("elsewhere/codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let out = home.execgate(
        &["hook", "install", "codex"],
        &[("CODEX_HOME", &codex_home)],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(codex_home.join("hooks.json").exists());
    assert!(!home.home.join(".codex").exists());
}

/// A binary installed under another name than `execgate` finds the entry it wrote: a
/// second install changes nothing, and uninstall removes it.
#[test]
fn a_binary_under_another_name_recognises_its_own_entry() {
    let home = Home::new();
    let renamed = home.home.join("eg-renamed");
    std::fs::copy(execgate_binary(), &renamed).unwrap();
    let run = |args: &[&str]| {
        Command::new(&renamed)
            .current_dir(&home.home)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home.home)
            .arg("--config")
            .arg(&home.config)
            .args(args)
            .output()
            .unwrap()
    };
    for agent in agents() {
        let file = home.user_file(&agent);
        for round in 0..2 {
            let out = run(&["hook", "install", agent.word]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{} {round}: {}",
                agent.word,
                stderr(&out)
            );
        }
        assert_eq!(
            execgate_handlers_named(&read(&file), "eg-renamed"),
            1,
            "{}",
            agent.word
        );
        let out = run(&["hook", "uninstall", agent.word]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            agent.word,
            stderr(&out)
        );
        let left = if file.exists() {
            read(&file)
        } else {
            String::new()
        };
        assert_eq!(
            execgate_handlers_named(&left, "eg-renamed"),
            0,
            "{}: {left}",
            agent.word
        );
    }
}

/// How often the settings text names the binary `name`.
fn execgate_handlers_named(text: &str, name: &str) -> usize {
    text.matches(&format!("/{name}")).count()
}

/// Codex's trust of a handler, computed here from what Codex 0.171.0 does (see
/// src/cli/hook/codex.rs): SHA-256 of the group with only that handler, defaults filled
/// in, as compact JSON with sorted keys, under `event_name`.
fn codex_hash(group: &Value, handler: usize) -> String {
    use sha2::Digest;
    let h = &group["hooks"][handler];
    let mut normal = json!({"type": "command", "command": h["command"],
        "timeout": h["timeout"].as_u64().unwrap_or(600), "async": h["async"].as_bool().unwrap_or(false)});
    if let Some(m) = h["statusMessage"].as_str() {
        normal["statusMessage"] = json!(m);
    }
    let mut identity = json!({"event_name": "pre_tool_use", "hooks": [normal]});
    if let Some(m) = group["matcher"].as_str() {
        identity["matcher"] = json!(m);
    }
    // serde_json's map keeps keys sorted unless its `preserve_order` is on; sort anyway.
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<_> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let identity = sorted(&identity);
    let digest = sha2::Sha256::digest(serde_json::to_vec(&identity).unwrap());
    format!(
        "sha256:{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

fn codex() -> Agent {
    agents().into_iter().find(|a| a.word == "codex").unwrap()
}

#[test]
fn codex_install_trusts_its_entry_and_status_tells_whether_codex_runs_it() {
    let home = Home::new();
    let agent = codex();
    let hooks = home.user_file(&agent);
    put(&hooks, agent.kept, 0o600);
    let config = home.home.join(".codex/config.toml");
    let kept = "# mine\nmodel = \"o3\"\n\n[features]\nweb_search = true # on\n";
    put(&config, kept, 0o600);
    let out = home.hook("install", &agent, &[]);
    // execgate's group is the second of PreToolUse: Codex keys its trust by position.
    let installed = settings(&read(&hooks));
    let key = format!("{}:pre_tool_use:1:0", hooks.display());
    let hash = codex_hash(&installed["hooks"]["PreToolUse"][1], 0);
    assert_eq!(
        one_insertion(kept, &read(&config)),
        format!("\n[hooks.state.\"{key}\"]\ntrusted_hash = \"{hash}\"\n")
    );
    assert!(stdout(&out).contains("Codex trusts it"), "{}", stdout(&out));
    assert_eq!(backups(&config).len(), 1);

    let status = |args: &[&str]| {
        let mut all = vec!["hook", "status"];
        all.extend(args);
        let out = home.execgate(&all, &[]);
        (out.status.code(), stdout(&out))
    };
    let (code, said) = status(&["codex"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("present, current, active"), "{said}");
    // Every agent: the others have no entry, which is no failure.
    let (code, said) = status(&[]);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("claude-code: execgate's PreToolUse hook is not installed"),
        "{said}"
    );

    // Any change to the entry, and Codex no longer runs it: status says so.
    let changed = read(&hooks).replace(
        &format!("\"timeout\": {}", APPROVAL_SECS + 30),
        "\"timeout\": 9",
    );
    put(&hooks, &changed, 0o600);
    let (code, said) = status(&["codex"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("NOT CURRENT") && said.contains("NOT ACTIVE (changed since Codex trusted it"),
        "{said}"
    );
    // Installing again puts both right.
    home.hook("install", &agent, &[]);
    assert_eq!(status(&["codex"]).0, Some(0));

    // Uninstalling gives both files back byte for byte.
    let out = home.hook("uninstall", &agent, &[]);
    assert!(
        stdout(&out).contains("removed Codex's trust"),
        "{}",
        stdout(&out)
    );
    assert_eq!(read(&hooks), agent.kept);
    assert_eq!(read(&config), kept);
    let (code, said) = status(&["codex"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("is not installed in"), "{said}");
}

#[test]
fn codex_trust_is_keyed_by_codex_homes_real_path_and_made_when_there_is_no_config() {
    let home = Home::new();
    let real = home.home.join("real-codex");
    std::fs::create_dir(&real).unwrap();
    let link = home.home.join("codex-link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = home.execgate(&["hook", "install", "codex"], &[("CODEX_HOME", &link)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config = read(&real.join("config.toml"));
    let key = format!(
        "{}:pre_tool_use:0:0",
        real.canonicalize().unwrap().join("hooks.json").display()
    );
    assert!(
        config.starts_with(&format!(
            "[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:"
        )),
        "{config}"
    );
    let out = home.execgate(&["hook", "status", "codex"], &[("CODEX_HOME", &link)]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn codex_install_fails_loudly_when_codex_would_not_run_the_hook() {
    let home = Home::new();
    let config = home.home.join(".codex/config.toml");
    put(&config, "[features]\nhooks = false\n", 0o600);
    let out = home.execgate(&["hook", "install", "codex"], &[]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("NOT ACTIVE"), "{}", stderr(&out));
    let out = home.execgate(&["hook", "status", "codex"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("switches Codex's hooks off"),
        "{}",
        stdout(&out)
    );
    // A config.toml that is not TOML is not edited.
    put(&config, "[features\n", 0o600);
    let out = home.execgate(&["hook", "install", "codex"], &[]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("NOT ACTIVE"), "{}", stderr(&out));
    assert_eq!(read(&config), "[features\n");
}
