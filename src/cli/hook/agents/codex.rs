//! OpenAI Codex CLI: `PreToolUse` for every tool in `~/.codex/hooks.json`, answered in
//! Claude's shape (but allow is silence); and Codex's hook trust: what makes Codex run
//! execgate's hook, and the text edits of Codex's `config.toml` that record it.
//!
//! Codex (0.171.0) runs a command hook from a user's or a project's `hooks.json` only
//! when the user's `config.toml` says it is trusted:
//!
//! ```toml
//! [hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]
//! trusted_hash = "sha256:…"
//! ```
//!
//! The key is the `hooks.json` path as Codex names it, the event's label, the group's
//! index in the event's array and the handler's in the group (codex-rs
//! `hooks/src/lib.rs` `hook_key`). The hash is SHA-256 of the hook's normalised
//! definition as compact JSON with every object's keys sorted (`hooks/src/engine/
//! discovery.rs` `command_hook_hash`, `config/src/fingerprint.rs` `version_for_toml`):
//! `{"event_name": "pre_tool_use", "matcher": M, "hooks": [HANDLER]}` where HANDLER is
//! `{"type": "command", "command", "timeout" (600 when absent, at least 1), "async",
//! "statusMessage"}`, absent fields left out. Any change to the entry changes the hash,
//! and Codex then skips the hook without a word. The interactive `/hooks` screen writes
//! the same entry; there is no other way for a user's own hook (issue openai/codex#21615).
//! Codex reads hook state only from the user's own configuration, so a project's hook
//! is trusted there too.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use toml_edit::{DocumentMut, Item, Table};

use super::{Agent, Answer, Ask, J, Reply, Settings, Shell, Type, claude_code, claude_like};
use crate::cli::hook::own_mcp::{self, Mcp};
use crate::model::{Command, shell_join};

pub static AGENT: Agent = Agent {
    default_event: "PreToolUse",
    default_timeout: DEFAULT_TIMEOUT,
    read,
    answer,
    settings: Settings {
        name: "Codex",
        user_home: (Some("CODEX_HOME"), ".codex"),
        user_file: "hooks.json",
        project_file: ".codex/hooks.json",
        event: "PreToolUse",
        // Every tool: its shell (`Bash`), its file edits (`apply_patch`), MCP tools, and
        // whatever tool a later Codex adds (`*` is Codex's match-all).
        matcher: Some("*"),
        command_field: "command",
        versioned: false,
        comments: false,
        own_file: false,
        // Codex's trust step is taken by the installer itself (below).
        note: None,
    },
    handler,
    terms: |timeout| format!("timeout {timeout} s"),
    mcp: Some(Mcp {
        prefix: "mcp__",
        separator: "__",
        own_servers,
    }),
};

/// Codex's files for a scope: the user's `config.toml`, where Codex keeps hook trust
/// for every scope, and the `hooks.json` whose handlers it trusts (the user's, or the
/// project's in `project`), by the path Codex names it in the trust keys.
pub struct Files {
    pub config: PathBuf,
    pub source: PathBuf,
}

impl Files {
    pub fn find(project: Option<&Path>) -> Result<Files, String> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        // Codex resolves `CODEX_HOME` to its real path, and takes `~/.codex` as it is.
        let home = match var("CODEX_HOME") {
            Some(dir) => {
                let dir = PathBuf::from(dir);
                dir.canonicalize().or_else(|_| std::path::absolute(&dir))
            }
            None => {
                let home = var("HOME").ok_or_else(|| {
                    "HOME is not set, so Codex's config.toml (where it keeps hook trust) cannot be found".to_string()
                })?;
                std::path::absolute(Path::new(&home).join(".codex"))
            }
        }
        .map_err(|e| format!("Codex's home: {e}"))?;
        let settings = &AGENT.settings;
        let source = match project {
            Some(dir) => dir
                .canonicalize()
                .map_err(|e| format!("--project {}: {e}", dir.display()))?
                .join(settings.project_file),
            None => home.join(settings.user_file),
        };
        Ok(Files {
            config: home.join("config.toml"),
            source,
        })
    }
}

/// Like Claude's, its shell tool reported as `Bash`; its file edits come as
/// `apply_patch` with the patch text in `tool_input.command`, read into a tool request
/// whose input is `{"patch": TEXT}`, the shape every agent's patch tool is given, so
/// that the tool judgement reads the files it touches.
fn read(obj: &Map<String, Value>) -> Result<Ask, String> {
    // Codex reports its `exec_command` as `Bash` with the command alone; a
    // `PermissionRequest` adds why Codex would ask (`network-access DOMAIN` for a
    // network approval).
    const BASH: Shell = Shell {
        tool: "Bash",
        fields: &[("command", Type::Any), ("description", Type::Str)],
    };
    let mut ask = claude_like(obj, &[BASH])?;
    if let Command::Tool(tool) = &mut ask.what
        && tool.name == "apply_patch"
    {
        let patch = tool
            .input
            .get("command")
            .and_then(Value::as_str)
            .filter(|p| !p.trim().is_empty())
            .ok_or(
                "Codex's `apply_patch` input has no `command` (the patch, a non-empty string)",
            )?;
        tool.input = json!({ "patch": patch });
    }
    Ok(ask)
}

fn answer(reply: &Reply<'_>) -> Answer {
    if reply.event == "PermissionRequest" {
        return claude_code::permission_request(reply);
    }
    if reply.failed {
        return reply.blocked(None);
    }
    if reply.allow() {
        // Codex's PreToolUse cannot allow (only with a rewrite): silence lets the call
        // go on to Codex's own approval policy.
        return Answer {
            stdout: None,
            stderr: None,
            code: 0,
        };
    }
    reply.said(claude_code::pre_tool_use(reply))
}

fn handler(words: &[String], timeout: u64) -> J {
    J::Object(vec![
        ("type", J::Str("command".into())),
        ("command", J::Str(shell_join(words))),
        ("timeout", J::Num(timeout)),
        ("statusMessage", J::Str(super::WAITING.into())),
    ])
}

/// The label of the event execgate's entry is under, in Codex's keys and hashes.
const EVENT_LABEL: &str = "pre_tool_use";

/// Codex's default hook timeout, in seconds.
const DEFAULT_TIMEOUT: u64 = 600;

/// One handler's trust entry: where Codex looks, and what it must hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trust {
    /// `PATH:pre_tool_use:GROUP:HANDLER`.
    pub key: String,
    /// `sha256:HEX` of the handler as it is in the file.
    pub hash: String,
}

/// The key of handler `handler` of group `group` of `PreToolUse` in the `hooks.json`
/// that Codex knows as `source`.
pub fn key(source: &str, group: usize, handler: usize) -> String {
    format!("{source}:{EVENT_LABEL}:{group}:{handler}")
}

/// The hash Codex gives a command handler of a `PreToolUse` group with `matcher`; None
/// for a handler that is not a command hook Codex would run.
pub fn hash(matcher: Option<&str>, handler: &Value) -> Option<String> {
    if handler.get("type").and_then(Value::as_str) != Some("command") {
        return None;
    }
    let command = handler.get("command").and_then(Value::as_str)?;
    if command.trim().is_empty() {
        return None;
    }
    let timeout = match handler.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT,
        Some(t) => t.as_u64()?,
    }
    .max(1);
    let is_async = match handler.get("async") {
        None | Some(Value::Null) => false,
        Some(a) => a.as_bool()?,
    };
    let mut normal = Map::new();
    normal.insert("async".into(), json!(is_async));
    normal.insert("command".into(), json!(command));
    match handler.get("statusMessage") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            normal.insert("statusMessage".into(), json!(s));
        }
        Some(_) => return None,
    }
    normal.insert("timeout".into(), json!(timeout));
    normal.insert("type".into(), json!("command"));
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(EVENT_LABEL));
    identity.insert("hooks".into(), Value::Array(vec![Value::Object(normal)]));
    if let Some(m) = matcher {
        identity.insert("matcher".into(), json!(m));
    }
    let canonical = sorted(&Value::Object(identity));
    let bytes = serde_json::to_vec(&canonical).expect("JSON values serialise");
    let digest = Sha256::digest(&bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("sha256:{hex}"))
}

/// `value` with every object's members in key order, whatever order serde_json keeps.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// What `config.toml` says about one trust entry and about hooks at all.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct State {
    /// `[features] hooks = false` (or its old name `codex_hooks`): no hook runs.
    pub hooks_off: bool,
    /// Per entry asked about: its `trusted_hash`, and whether `enabled = false`.
    pub entries: Vec<(Option<String>, bool)>,
}

/// Reads what `config.toml` says about `keys`.
pub fn state(config: &str, keys: &[&str]) -> Result<State, String> {
    let doc = parse(config)?;
    let feature_off = |name: &str| {
        doc.get("features")
            .and_then(|f| f.get(name))
            .and_then(Item::as_bool)
            == Some(false)
    };
    let hooks_off = feature_off("hooks") || feature_off("codex_hooks");
    let states = doc.get("hooks").and_then(|h| h.get("state"));
    let entries = keys
        .iter()
        .map(|key| {
            let entry = states.and_then(|s| s.get(key));
            let hash = entry
                .and_then(|e| e.get("trusted_hash"))
                .and_then(Item::as_str)
                .map(String::from);
            let disabled =
                entry.and_then(|e| e.get("enabled")).and_then(Item::as_bool) == Some(false);
            (hash, disabled)
        })
        .collect();
    Ok(State { hooks_off, entries })
}

/// The text with each entry trusted (its `trusted_hash` set, an `enabled = false` taken
/// out: the user asked for the hook to run), every other byte as it was.
pub fn trust(config: &str, trusts: &[Trust]) -> Result<String, String> {
    let mut doc = parse(config)?;
    let state = table(doc.as_table_mut(), "hooks")?;
    let state = table(state, "state")?;
    for t in trusts {
        let entry = table(state, &t.key)?;
        entry.set_implicit(false);
        entry.remove("enabled");
        entry.insert("trusted_hash", toml_edit::value(t.hash.as_str()));
    }
    Ok(doc.to_string())
}

/// The text without the trust of each entry that holds exactly it (a hash that differs
/// is someone else's trust, and stays), and without the tables that leaves empty.
pub fn untrust(config: &str, trusts: &[Trust]) -> Result<(String, usize), String> {
    let mut doc = parse(config)?;
    let mut removed = 0;
    let Some(state) = doc
        .get_mut("hooks")
        .and_then(|h| h.get_mut("state"))
        .and_then(Item::as_table_like_mut)
    else {
        return Ok((config.to_string(), 0));
    };
    for t in trusts {
        let Some(entry) = state.get_mut(&t.key).and_then(Item::as_table_like_mut) else {
            continue;
        };
        if entry.get("trusted_hash").and_then(Item::as_str) != Some(t.hash.as_str()) {
            continue;
        }
        entry.remove("trusted_hash");
        removed += 1;
        if entry.is_empty() {
            state.remove(&t.key);
        }
    }
    if removed == 0 {
        return Ok((config.to_string(), 0));
    }
    if state.is_empty() {
        let hooks = doc["hooks"].as_table_like_mut().expect("found above");
        hooks.remove("state");
        if hooks.is_empty() {
            doc.remove("hooks");
        }
    }
    Ok((doc.to_string(), removed))
}

fn parse(config: &str) -> Result<DocumentMut, String> {
    config
        .parse::<DocumentMut>()
        .map_err(|e| format!("not TOML as Codex reads it: {}", e.message()))
}

/// The table `key` of `parent`, made (implicit: no header of its own) when absent.
fn table<'t>(parent: &'t mut Table, key: &str) -> Result<&'t mut Table, String> {
    let item = parent.entry(key).or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    item.as_table_mut()
        .ok_or_else(|| format!("`{key}` is not a table in Codex's config.toml"))
}

/// `codex mcp add` keeps servers in `$CODEX_HOME/config.toml` (else `~/.codex`), under
/// `mcp_servers.NAME`.
fn own_servers(home: &Path, _cwd: Option<&Path>) -> Vec<String> {
    let dir = std::env::var_os("CODEX_HOME")
        .filter(|d| !d.is_empty())
        .map_or_else(|| home.join(".codex"), PathBuf::from);
    let Some(servers) = own_mcp::read(&dir.join("config.toml"))
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("mcp_servers").and_then(|s| s.as_table()).cloned())
    else {
        return Vec::new();
    };
    servers
        .into_iter()
        .filter(|(_, server)| {
            let args: Vec<&str> = server
                .get("args")
                .and_then(|a| a.as_array())
                .map(|a| a.iter().filter_map(|w| w.as_str()).collect())
                .unwrap_or_default();
            let env: Vec<&str> = server
                .get("env")
                .and_then(|e| e.as_table())
                .map(|e| e.keys().map(String::as_str).collect())
                .unwrap_or_default();
            server
                .get("command")
                .and_then(|c| c.as_str())
                .is_some_and(|c| own_mcp::runs_execgate_mcp(c, &args, &env))
        })
        .map(|(name, _)| name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_the_one_codex_0_171_computes() {
        // Read from `codex app-server`'s hooks/list (currentHash) for this entry.
        let handler = json!({"type": "command", "command": "/tmp/cxp/record.sh", "timeout": 150,
            "statusMessage": "execgate: waiting for approval"});
        assert_eq!(
            hash(Some("*"), &handler).unwrap(),
            "sha256:74360640708295540b938b0d3ad7b3ccec8fd7627c480f22519358f0f5791d20"
        );
        // Defaults are filled in before hashing; anything else changes it.
        let bare = json!({"type": "command", "command": "x"});
        assert_eq!(
            hash(None, &bare),
            hash(
                None,
                &json!({"type": "command", "command": "x", "timeout": 600, "async": false})
            )
        );
        assert_ne!(hash(None, &bare), hash(Some("*"), &bare));
        assert_ne!(
            hash(None, &bare),
            hash(None, &json!({"type": "command", "command": "y"}))
        );
        for not_run in [
            json!({"type": "prompt"}),
            json!({"type": "command", "command": " "}),
        ] {
            assert_eq!(hash(None, &not_run), None);
        }
    }

    #[test]
    fn trust_adds_one_table_and_untrust_gives_the_text_back() {
        let config = "# mine\nmodel = \"gpt-5.5\"\n\n[features]\nweb = true # keep\n";
        let t = Trust {
            key: key("/h/.codex/hooks.json", 1, 0),
            hash: "sha256:ab".into(),
        };
        let trusted = trust(config, std::slice::from_ref(&t)).unwrap();
        assert_eq!(
            trusted,
            format!(
                "{config}\n[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:1:0\"]\ntrusted_hash = \"sha256:ab\"\n"
            )
        );
        assert_eq!(
            state(&trusted, &[&t.key]).unwrap(),
            State {
                hooks_off: false,
                entries: vec![(Some("sha256:ab".into()), false)]
            }
        );
        assert_eq!(trust(&trusted, std::slice::from_ref(&t)).unwrap(), trusted);
        assert_eq!(
            untrust(&trusted, std::slice::from_ref(&t)).unwrap(),
            (config.to_string(), 1)
        );
        // Someone else's trust of that key, or an entry with more in it, stays.
        let other = Trust {
            hash: "sha256:cd".into(),
            ..t.clone()
        };
        assert_eq!(untrust(&trusted, &[other]).unwrap().1, 0);
        let disabled = "[hooks.state.\"k\"]\nenabled = false\n";
        let k = Trust {
            key: "k".into(),
            hash: "sha256:ef".into(),
        };
        let on = trust(disabled, std::slice::from_ref(&k)).unwrap();
        assert_eq!(on, "[hooks.state.\"k\"]\ntrusted_hash = \"sha256:ef\"\n");
    }

    #[test]
    fn hooks_switched_off_and_bad_text_are_seen() {
        for off in [
            "[features]\nhooks = false\n",
            "features.codex_hooks = false\n",
        ] {
            assert!(state(off, &[]).unwrap().hooks_off, "{off}");
        }
        assert!(!state("[features]\nhooks = true\n", &[]).unwrap().hooks_off);
        assert!(state("[features\n", &[]).is_err());
        assert!(trust("hooks = 1\n", &[]).is_err());
    }
}
