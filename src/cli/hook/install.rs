//! `execgate hook install|uninstall AGENT [--project DIR] [--print]`: puts execgate's one
//! entry into a coding agent's hook settings, or takes it out, and leaves every other
//! byte of the file as it was.
//!
//! What differs per agent is its [`Settings`](super::agents::Settings), in the agent's
//! own file under `agents`, with the handler it writes: the file, the event, whether
//! handlers sit in `{matcher, hooks: […]}` groups, the handler's fields, the fail-closed
//! switch. The rest is shared: find execgate's handlers (any that runs `execgate … hook
//! AGENT`), edit the text through the format-preserving editor until the file holds
//! exactly one entry as it should be (install) or none (uninstall), keep a copy of the
//! file as it was, and replace it atomically. docs/hooks.md#installing-and-removing-the-hook
//! describes the result for each agent.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::HookAgent;
use super::agents::codex::{self, Trust};
use super::agents::{J, Settings as Spec};
use super::json_edit::{Dialect, Doc, Kind, Node};
use crate::config::{Config, Overrides};

/// What the installed hook's timeout adds to `approval.timeout_secs`: the hook must
/// outlive the longest wait for a human, or the agent gives up on it first.
const TIMEOUT_MARGIN_SECS: u64 = 30;

/// Larger than this, a file is not settings, and is not read.
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// More handlers of execgate's than this in one file is not a slip to tidy up (each
/// removal reads the file again): the file is refused.
const MAX_HANDLERS: usize = 100;

/// More edits than this on one file means a bug, not a large file.
const MAX_EDITS: usize = 1_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Install,
    Uninstall,
}

/// What the command line asked for.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    pub action: Action,
    pub agent: HookAgent,
    /// Edit DIR's project settings instead of the user's.
    pub project: Option<&'a Path>,
    /// Print the file as it would be; write nothing.
    pub print: bool,
    /// The entry's timeout, when not the default ([`entry_timeout`]).
    pub timeout: Option<u64>,
}

/// The agent's hook settings, from its file in `agents`.
fn spec(agent: HookAgent) -> &'static Spec {
    &agent.knowledge().settings
}

/// What the command does to the file, and the line that says so.
struct Plan {
    change: Change,
    /// "installed execgate's PreToolUse hook in FILE", …
    headline: String,
    /// Said after the headline, in parentheses: the timeout, what else was removed, and
    /// once written, the backup.
    details: Vec<String>,
}

enum Change {
    /// Nothing to do: the file is as it should be.
    Nothing,
    Write(String),
    /// Delete the file: execgate's own, and left with nothing in it.
    Delete,
}

impl Plan {
    fn line(&self) -> String {
        match &self.details[..] {
            [] => self.headline.clone(),
            details => format!("{} ({})", self.headline, details.join("; ")),
        }
    }
}

/// Runs `execgate hook install|uninstall`; the error is the message to print.
pub fn run(config: &Config, overrides: &Overrides, options: Options) -> Result<(), String> {
    let agent = options.agent;
    let spec = spec(agent);
    let path = settings_path(spec, agent, options.project)?;
    let found = read_settings(&path)?;
    let shown = match &found {
        Some(f) if f.real != path => format!("{} (a link to {})", path.display(), f.real.display()),
        _ => path.display().to_string(),
    };
    let original = found.as_ref().map(|f| f.text.as_str());
    // Codex's trust entries of execgate's handlers as they are now: uninstall takes
    // them out with the handlers.
    let codex_files = (agent == HookAgent::Codex)
        .then(|| CodexFiles::find(options.project))
        .transpose()?;
    let trusted_before = match &codex_files {
        Some(files) => codex_trusts(original.unwrap_or("{}"), spec, agent, &files.source),
        None => vec![],
    };
    let mut plan = match options.action {
        Action::Install => {
            let timeout = options.timeout.unwrap_or_else(|| entry_timeout(config));
            let words = hook_words(agent, overrides, timeout)?;
            plan_install(spec, agent, original, &words, timeout, &shown)?
        }
        Action::Uninstall => plan_uninstall(spec, agent, original, &shown)?,
    };
    if options.print {
        // Standard output is the file as it would be, and nothing else.
        match (&plan.change, original) {
            (Change::Write(text), _) => print!("{text}"),
            (Change::Nothing, Some(text)) => print!("{text}"),
            (Change::Delete, _) | (Change::Nothing, None) => {}
        }
        match plan.change {
            Change::Nothing => {
                eprintln!("execgate: --print: {}; nothing would change", plan.line())
            }
            _ => eprintln!(
                "execgate: --print: nothing was written; without --print: {}",
                plan.line()
            ),
        }
        if let Some(files) = &codex_files {
            eprintln!(
                "execgate: --print: Codex's trust of the entry (in {}) is not shown",
                files.config.display()
            );
        }
        return Ok(());
    }
    let written = match (&plan.change, &found) {
        (Change::Nothing, _) => None,
        (Change::Write(text), None) => {
            write_new(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Some("new file".to_string())
        }
        (Change::Delete, None) => unreachable!("only a file that is there is deleted"),
        (Change::Write(text), Some(f)) => {
            Some(format!("backup: {}", replace(f, Some(text))?.display()))
        }
        (Change::Delete, Some(f)) => Some(format!("backup: {}", replace(f, None)?.display())),
    };
    let changed = written.is_some();
    plan.details.extend(written);
    println!("{}", plan.line());
    if changed
        && options.action == Action::Install
        && let Some(note) = spec.note
    {
        eprintln!("note: {note}");
    }
    if let Some(files) = &codex_files {
        let now = match &plan.change {
            Change::Write(text) => text.as_str(),
            Change::Nothing => original.unwrap_or("{}"),
            Change::Delete => "{}",
        };
        match options.action {
            Action::Install => {
                let trusts = codex_trusts(now, spec, agent, &files.source);
                println!("{}", trust_codex(files, &trusts)?);
                if options.project.is_some() {
                    eprintln!(
                        "note: Codex reads a project's hooks only in a project it trusts ([projects.\"DIR\"] trust_level = \"trusted\" in {})",
                        files.config.display()
                    );
                }
            }
            Action::Uninstall => {
                if let Some(line) = untrust_codex(files, &trusted_before)? {
                    println!("{line}");
                }
            }
        }
    }
    Ok(())
}

/// Codex's files for a scope ([`codex::Files`]), the `hooks.json` path as the text the
/// trust keys hold.
struct CodexFiles {
    config: PathBuf,
    source: String,
}

impl CodexFiles {
    fn find(project: Option<&Path>) -> Result<CodexFiles, String> {
        let files = codex::Files::find(project)?;
        Ok(CodexFiles {
            source: utf8(&files.source)?,
            config: files.config,
        })
    }
}

/// The trust entries Codex needs for execgate's handlers in `text` (a `hooks.json`).
fn codex_trusts(text: &str, spec: &Spec, agent: HookAgent, source: &str) -> Vec<Trust> {
    let Ok(doc) = parse(text, spec) else {
        return vec![];
    };
    let Some(event) = doc.root.get("hooks").and_then(|h| h.get(spec.event)) else {
        return vec![];
    };
    let mut trusts = Vec::new();
    for (g, group) in event.elements().unwrap_or_default().iter().enumerate() {
        let matcher = group.get("matcher").and_then(Node::as_str);
        let handlers = group
            .get("hooks")
            .and_then(Node::elements)
            .unwrap_or_default();
        for (h, handler) in handlers.iter().enumerate() {
            if !runs_execgate(handler, spec, agent) {
                continue;
            }
            if let Some(hash) = codex::hash(matcher, &handler.to_value()) {
                trusts.push(Trust {
                    key: codex::key(source, g, h),
                    hash,
                });
            }
        }
    }
    trusts
}

/// Records Codex's trust of execgate's entry in its `config.toml`, keeping every other
/// byte (and a backup). Fails when the hook would still not run.
fn trust_codex(files: &CodexFiles, trusts: &[Trust]) -> Result<String, String> {
    let path = &files.config;
    let shown = path.display();
    let not_active = |why: String| {
        format!(
            "{why}; execgate's hook is in Codex's hooks.json but NOT ACTIVE: Codex skips it, and runs every tool ungated. Trust it in Codex's /hooks screen, or fix {shown} and run `execgate hook install codex` again"
        )
    };
    if trusts.is_empty() {
        return Err(not_active(
            "execgate's entry is not a command hook Codex would trust".into(),
        ));
    }
    let found = read_settings(path).map_err(not_active)?;
    let original = found.as_ref().map_or("", |f| f.text.as_str());
    let text = codex::trust(original, trusts).map_err(|e| not_active(format!("{shown}: {e}")))?;
    let keys: Vec<&str> = trusts.iter().map(|t| t.key.as_str()).collect();
    let state = codex::state(&text, &keys).map_err(not_active)?;
    if state.hooks_off {
        return Err(not_active(format!(
            "{shown} switches Codex's hooks off ([features] hooks = false)"
        )));
    }
    let entries = keys
        .iter()
        .map(|k| format!("hooks.state.\"{k}\""))
        .collect::<Vec<_>>()
        .join(", ");
    if text == original {
        return Ok(format!("Codex already trusts it ({entries} in {shown})"));
    }
    let written = match &found {
        None => {
            write_new(path, &text).map_err(|e| not_active(format!("cannot write {shown}: {e}")))?;
            "new file".to_string()
        }
        Some(f) => format!(
            "backup: {}",
            replace(f, Some(&text)).map_err(not_active)?.display()
        ),
    };
    Ok(format!(
        "Codex trusts it: wrote {entries} in {shown} ({written})"
    ))
}

/// Takes out of Codex's `config.toml` the trust of execgate's entries that were
/// removed; None when there was none.
fn untrust_codex(files: &CodexFiles, trusts: &[Trust]) -> Result<Option<String>, String> {
    let path = &files.config;
    let Some(found) = read_settings(path)? else {
        return Ok(None);
    };
    let (text, removed) = codex::untrust(&found.text, trusts).map_err(|e| {
        format!(
            "{}: {e}; its trust of execgate's hook was left",
            path.display()
        )
    })?;
    if removed == 0 {
        return Ok(None);
    }
    let backup = replace(&found, Some(&text))?;
    Ok(Some(format!(
        "removed Codex's trust of execgate's hook from {} (backup: {})",
        path.display(),
        backup.display()
    )))
}

/// What `execgate hook status` found for one agent.
pub struct Status {
    /// One line that says it.
    pub line: String,
    /// execgate's entry is there at all.
    pub present: bool,
    /// It is there, as install would write it now, and the agent runs it.
    pub good: bool,
}

/// What `serve` and `reload` warn of: execgate's hooks in the daemon's own user's
/// settings whose timeout is not longer than `approval.timeout_secs`. Such a hook tells
/// its agent that a request still waits before the owner may answer it (the agent gets
/// the answer by asking again); a hook installed before `--timeout` was written into its
/// words waits its whole timeout, and there the agent may run the tool unasked.
pub fn short_timeouts(config: &Config) -> Vec<String> {
    use clap::ValueEnum;
    let approval = config.approval.timeout_secs;
    HookAgent::value_variants()
        .iter()
        .filter_map(|&agent| {
            let spec = spec(agent);
            let path = settings_path(spec, agent, None).ok()?;
            let text = read_settings(&path).ok()??.text;
            let doc = parse(editable(Some(&text)), spec).ok()?;
            let event = containers(&doc, spec).ok()?.event?;
            if find(event, spec, agent).ok()?.is_empty() {
                return None;
            }
            let word = agent.word();
            match installed_timeout(event, spec, agent) {
                Some(secs) if secs <= approval => Some(format!(
                    "{word}'s hook in {} has a timeout of {secs} s, not longer than approval.timeout_secs ({approval} s): the agent is told a request still waits before the owner may answer (it gets the answer by asking again); `execgate hook install {word}` sets {} s",
                    path.display(),
                    entry_timeout(config)
                )),
                Some(_) => None,
                None => Some(format!(
                    "{word}'s hook in {} was installed by an execgate that did not tell it the agent's timeout: it may wait past it, and {word} may then run the tool unasked; run `execgate hook install {word}` again",
                    path.display()
                )),
            }
        })
        .collect()
}

/// `execgate hook status AGENT`: whether execgate's entry is in the agent's settings
/// (present), as `install` would write it now (current), and run by the agent
/// (active: for Codex, trusted with the hash of the entry as it is; for the others,
/// which run every hook in their settings, present). Reads only.
pub fn status(
    config: &Config,
    overrides: &Overrides,
    agent: HookAgent,
    project: Option<&Path>,
) -> Status {
    let spec = spec(agent);
    let who = agent.word();
    let failed = |why: String| Status {
        line: format!("{who}: cannot tell: {why}"),
        present: false,
        good: false,
    };
    let path = match settings_path(spec, agent, project) {
        Ok(p) => p,
        Err(why) => return failed(why),
    };
    let shown = path.display();
    let what = format!("execgate's {} hook", spec.event);
    let text = match read_settings(&path) {
        Ok(Some(found)) => found.text,
        Ok(None) => {
            return Status {
                line: format!("{who}: {what} is not installed: {shown} does not exist"),
                present: false,
                good: false,
            };
        }
        Err(why) => return failed(why),
    };
    let (handlers, installed) = match parse(editable(Some(&text)), spec).and_then(|doc| {
        let c = containers(&doc, spec)?;
        Ok(match c.event {
            Some(e) => (
                find(e, spec, agent)?.len(),
                installed_timeout(e, spec, agent),
            ),
            None => (0, None),
        })
    }) {
        Ok(found) => found,
        Err(why) => return failed(format!("{shown}: {why}")),
    };
    if handlers == 0 {
        return Status {
            line: format!("{who}: {what} is not installed in {shown}"),
            present: false,
            good: false,
        };
    }
    // Current: as install writes it, for the timeout it was installed with.
    let timeout = installed.unwrap_or_else(|| entry_timeout(config));
    let current = hook_words(agent, overrides, timeout)
        .and_then(|words| plan_install(spec, agent, Some(&text), &words, timeout, "-"))
        .is_ok_and(|plan| matches!(plan.change, Change::Nothing));
    let mut said = vec!["present".to_string()];
    said.push(if current {
        "current".into()
    } else {
        format!("NOT CURRENT (`execgate hook install {who}` would rewrite it)")
    });
    let active = match agent {
        HookAgent::Codex => codex_active(spec, &text, project),
        _ => Ok(()),
    };
    said.push(match &active {
        Ok(()) => "active".into(),
        Err(why) => format!("NOT ACTIVE ({why})"),
    });
    if let Some(secs) = installed.filter(|&t| t <= config.approval.timeout_secs) {
        said.push(format!(
            "answers before the owner may: its timeout, {secs} s, is not longer than approval.timeout_secs, {} s (the agent is told the request still waits; the same call made again gets the owner's answer)",
            config.approval.timeout_secs
        ));
    }
    Status {
        line: format!("{who}: {what} in {shown}: {}", said.join(", ")),
        present: true,
        good: current && active.is_ok(),
    }
}

/// Whether Codex runs execgate's handlers in `text`: hooks on, each trusted with the
/// hash of the handler as it is, none switched off. The error says why not.
fn codex_active(spec: &Spec, text: &str, project: Option<&Path>) -> Result<(), String> {
    let files = CodexFiles::find(project)?;
    let trusts = codex_trusts(text, spec, HookAgent::Codex, &files.source);
    if trusts.is_empty() {
        return Err("not a command hook Codex would run".into());
    }
    let shown = files.config.display();
    let config = read_settings(&files.config)?.map_or(String::new(), |f| f.text);
    let keys: Vec<&str> = trusts.iter().map(|t| t.key.as_str()).collect();
    let state = codex::state(&config, &keys).map_err(|e| format!("{shown}: {e}"))?;
    if state.hooks_off {
        return Err(format!("{shown} switches Codex's hooks off"));
    }
    for (t, (hash, disabled)) in trusts.iter().zip(&state.entries) {
        if *disabled {
            return Err(format!(
                "switched off in Codex's /hooks (hooks.state.\"{}\" in {shown})",
                t.key
            ));
        }
        if hash.as_deref() != Some(t.hash.as_str()) {
            let how = if hash.is_some() {
                "changed since Codex trusted it"
            } else {
                "Codex has not trusted it"
            };
            return Err(format!(
                "{how}: run `execgate hook install codex`, or trust it in Codex's /hooks"
            ));
        }
    }
    Ok(())
}

fn plan_install(
    spec: &Spec,
    agent: HookAgent,
    original: Option<&str>,
    words: &[String],
    timeout: u64,
    shown: &str,
) -> Result<Plan, String> {
    let entry = entry(spec, (agent.knowledge().handler)(words, timeout));
    let (text, report) = install(editable(original), spec, agent, &entry)
        .map_err(|why| format!("{shown}: {why}; nothing was changed"))?;
    let what = format!("execgate's {} hook", spec.event);
    let mut details = vec![(agent.knowledge().terms)(timeout)];
    if original == Some(text.as_str()) {
        return Ok(Plan {
            change: Change::Nothing,
            headline: format!("{what} is already installed in {shown}"),
            details,
        });
    }
    if report.removed > 0 {
        let n = report.removed;
        details.push(format!("{n} other execgate handler{} removed", plural(n)));
    }
    let verb = if report.replaced {
        "updated"
    } else {
        "installed"
    };
    Ok(Plan {
        change: Change::Write(text),
        headline: format!("{verb} {what} in {shown}"),
        details,
    })
}

fn plan_uninstall(
    spec: &Spec,
    agent: HookAgent,
    original: Option<&str>,
    shown: &str,
) -> Result<Plan, String> {
    let what = format!("execgate's {} hook", spec.event);
    let Some(original) = original else {
        return Ok(Plan {
            change: Change::Nothing,
            headline: format!("{what} is not installed: {shown} does not exist"),
            details: vec![],
        });
    };
    let (text, removed) = uninstall(editable(Some(original)), spec, agent)
        .map_err(|why| format!("{shown}: {why}; nothing was changed"))?;
    let mut details = vec![];
    if removed > 1 {
        details.push(format!("{removed} execgate handlers"));
    }
    Ok(match removed {
        0 => Plan {
            change: Change::Nothing,
            headline: format!("{what} is not installed in {shown}"),
            details,
        },
        _ if spec.own_file && holds_nothing_else(&text, spec) => Plan {
            change: Change::Delete,
            headline: format!("removed {what}: deleted {shown}, which held nothing else"),
            details,
        },
        _ => Plan {
            change: Change::Write(text),
            headline: format!("removed {what} from {shown}"),
            details,
        },
    })
}

/// The text to edit: a file with nothing in it holds no settings to keep, and is
/// edited as `{}`, as is a file that is not there.
fn editable(original: Option<&str>) -> &str {
    match original {
        Some(text) if !text.trim().is_empty() => text,
        _ => "{}\n",
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The settings file for this agent and scope. A project's directory must exist.
fn settings_path(spec: &Spec, agent: HookAgent, project: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = project {
        let dir = dir
            .canonicalize()
            .map_err(|e| format!("--project {}: {e}", dir.display()))?;
        if !dir.is_dir() {
            return Err(format!("--project {}: not a directory", dir.display()));
        }
        return Ok(dir.join(spec.project_file));
    }
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let home = match spec.user_home.0.and_then(var) {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = var("HOME").ok_or_else(|| {
                format!(
                    "HOME is not set, so the user's {} settings cannot be found; name a project with --project DIR",
                    agent.word()
                )
            })?;
            Path::new(&home).join(spec.user_home.1)
        }
    };
    let home = std::path::absolute(&home).map_err(|e| format!("{}: {e}", home.display()))?;
    Ok(home.join(spec.user_file))
}

/// The timeout execgate's entry gives its hook, in seconds.
fn entry_timeout(config: &Config) -> u64 {
    config
        .approval
        .timeout_secs
        .saturating_add(TIMEOUT_MARGIN_SECS)
}

/// The hook's command line: this binary, `hook AGENT`, the global flags given to the
/// installer that say which configuration and socket to use, so that the hook reaches
/// the same daemon, and the entry's `timeout`, which the hook answers before (an agent
/// may run the tool when it kills a hook at its timeout). Paths are made absolute: the
/// agent runs the hook from wherever it is.
fn hook_words(
    agent: HookAgent,
    overrides: &Overrides,
    timeout: u64,
) -> Result<Vec<String>, String> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the execgate binary's own path: {e}"))?;
    let mut words = vec![utf8(&exe)?, "hook".into(), agent.word().into()];
    for (flag, path) in [
        ("--config", &overrides.config_file),
        ("--socket", &overrides.socket),
        ("--env-file", &overrides.env_file),
    ] {
        if let Some(path) = path {
            let absolute =
                std::path::absolute(path).map_err(|e| format!("{flag} {}: {e}", path.display()))?;
            words.push(flag.into());
            words.push(utf8(&absolute)?);
        }
    }
    words.extend(["--timeout".to_string(), timeout.to_string()]);
    Ok(words)
}

fn utf8(path: &Path) -> Result<String, String> {
    path.to_str().map(String::from).ok_or_else(|| {
        format!(
            "{} is not UTF-8, and a settings file (JSON) can only hold UTF-8",
            path.display()
        )
    })
}

/// The element execgate's entry is in the event's array: the handler, in a group of
/// its own where the agent groups them.
fn entry(spec: &Spec, handler: J) -> J {
    match spec.matcher {
        Some(matcher) => J::Object(vec![
            ("matcher", J::Str(matcher.into())),
            ("hooks", J::Array(vec![handler])),
        ]),
        None => handler,
    }
}

/// Whether `handler` runs `execgate … hook AGENT`: a word that names execgate
/// ([`names_execgate`]: a path or a bare name, however quoted), then, anywhere after it, the words `hook`
/// and AGENT side by side. The words are the shell line's, or, in Claude Code's exec
/// form (`args` present), the program and its `args` as they are.
fn runs_execgate(handler: &Node, spec: &Spec, agent: HookAgent) -> bool {
    execgate_words(handler, spec).is_some_and(|words| {
        words
            .windows(2)
            .any(|pair| pair[0] == "hook" && pair[1] == agent.word())
    })
}

/// The words after the execgate binary in `handler`'s command line, if it runs one.
fn execgate_words(handler: &Node, spec: &Spec) -> Option<Vec<String>> {
    let command = handler.get(spec.command_field).and_then(Node::as_str)?;
    let words: Vec<String> = match handler.get("args").and_then(Node::elements) {
        Some(args) => std::iter::once(command.to_string())
            .chain(args.iter().filter_map(|a| a.as_str().map(String::from)))
            .collect(),
        None => split_words(command),
    };
    let exe = words.iter().position(|w| names_execgate(w))?;
    Some(words[exe + 1..].to_vec())
}

/// The `--timeout` execgate's (first) handler under `event` was installed with.
fn installed_timeout(event: &Node, spec: &Spec, agent: HookAgent) -> Option<u64> {
    let elements = event.elements()?;
    let words = match places(event, spec, agent).into_iter().next()? {
        Place::Alone(i) if spec.matcher.is_none() => execgate_words(elements.get(i)?, spec),
        Place::Alone(i) => {
            execgate_words(elements.get(i)?.get("hooks")?.elements()?.first()?, spec)
        }
        Place::Shared { group, handler } => execgate_words(
            elements
                .get(group)?
                .get("hooks")?
                .elements()?
                .get(handler)?,
            spec,
        ),
    }?;
    words
        .windows(2)
        .find(|pair| pair[0] == "--timeout")
        .and_then(|pair| pair[1].parse().ok())
}

/// Whether `word` names an execgate binary: its file name is `execgate`, or the name
/// of the binary running now (installed under another name, it still finds the entry it
/// wrote).
fn names_execgate(word: &str) -> bool {
    let name = Path::new(word).file_name();
    name.is_some_and(|n| n == "execgate")
        || std::env::current_exe()
            .ok()
            .is_some_and(|own| own.file_name().is_some() && own.file_name() == name)
}

/// A shell line's words as a POSIX shell splits them (quotes and backslashes; no
/// expansions): enough to recognise a command line, not to run one. A line with an
/// unclosed quote has no words: it is not execgate's entry.
fn split_words(line: &str) -> Vec<String> {
    shlex::split(line).unwrap_or_default()
}

/// Where one of execgate's handlers is in the event's array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Element `i` is execgate's entry: the handler itself, or a group holding only it.
    Alone(usize),
    /// A handler that shares element `group`'s `hooks` with others (at `handler`).
    Shared { group: usize, handler: usize },
}

fn find(event: &Node, spec: &Spec, agent: HookAgent) -> Result<Vec<Place>, String> {
    let places = places(event, spec, agent);
    if places.len() > MAX_HANDLERS {
        return Err(format!(
            "{} handlers run `execgate hook {}`; more than {MAX_HANDLERS} are not edited, remove them by hand",
            places.len(),
            agent.word()
        ));
    }
    Ok(places)
}

fn places(event: &Node, spec: &Spec, agent: HookAgent) -> Vec<Place> {
    let mut places = Vec::new();
    for (i, element) in event.elements().unwrap_or_default().iter().enumerate() {
        if spec.matcher.is_none() {
            if runs_execgate(element, spec, agent) {
                places.push(Place::Alone(i));
            }
            continue;
        }
        let handlers = element
            .get("hooks")
            .and_then(Node::elements)
            .unwrap_or_default();
        let ours: Vec<usize> = (0..handlers.len())
            .filter(|&h| runs_execgate(&handlers[h], spec, agent))
            .collect();
        if ours.len() == 1 && handlers.len() == 1 {
            places.push(Place::Alone(i));
        } else {
            places.extend(
                ours.into_iter()
                    .map(|handler| Place::Shared { group: i, handler }),
            );
        }
    }
    places
}

/// The text without the handler at `place`: its whole element when it stands alone,
/// else only the handler, the rest of its group kept.
fn remove_place(doc: &Doc, event: &Node, place: Place) -> String {
    let elements = event.elements().unwrap_or_default();
    match place {
        Place::Alone(i) => doc.remove(event, i),
        Place::Shared { group, handler } => {
            let hooks = elements[group].get("hooks").expect("found in it");
            doc.remove(hooks, handler)
        }
    }
}

/// The containers on the way to execgate's entry, checked for their types.
struct Containers<'d> {
    root: &'d Node,
    hooks: Option<&'d Node>,
    event: Option<&'d Node>,
}

fn containers<'d>(doc: &'d Doc, spec: &Spec) -> Result<Containers<'d>, String> {
    let root = &doc.root;
    if !matches!(root.kind, Kind::Object(_)) {
        return Err(format!("the file holds {}, not an object", kind_name(root)));
    }
    let hooks = root.get("hooks");
    if let Some(h) = hooks.filter(|h| !matches!(h.kind, Kind::Object(_))) {
        return Err(format!("`hooks` is {}, not an object", kind_name(h)));
    }
    let event = hooks.and_then(|h| h.get(spec.event));
    if let Some(e) = event.filter(|e| !matches!(e.kind, Kind::Array(_))) {
        return Err(format!(
            "`hooks.{}` is {}, not an array",
            spec.event,
            kind_name(e)
        ));
    }
    Ok(Containers { root, hooks, event })
}

fn kind_name(node: &Node) -> &'static str {
    match node.kind {
        Kind::Object(_) => "an object",
        Kind::Array(_) => "an array",
        Kind::String(_) => "a string",
        Kind::Number(_) => "a number",
        Kind::Bool(_) => "a boolean",
        Kind::Null => "null",
    }
}

fn dialect(spec: &Spec) -> Dialect {
    if spec.comments {
        Dialect::JsonWithComments
    } else {
        Dialect::Json
    }
}

fn parse<'t>(text: &'t str, spec: &Spec) -> Result<Doc<'t>, String> {
    Doc::parse(text, dialect(spec)).map_err(|e| {
        let reads = match dialect(spec) {
            Dialect::Json => "JSON",
            Dialect::JsonWithComments => "JSON with comments",
        };
        format!("not {reads} as {} reads it: {e}", spec.name)
    })
}

/// What an install did beside adding or keeping the entry.
#[derive(Debug, Default, PartialEq, Eq)]
struct Installed {
    /// An entry of execgate's was there and was rewritten in place.
    replaced: bool,
    /// Other handlers of execgate's removed.
    removed: usize,
}

/// The text with exactly one handler of execgate's, in `entry` as given: the first
/// entry that stands alone is kept (rewritten where it differs), every other handler
/// that runs `execgate … hook AGENT` is removed, and with none the entry is added last.
/// Missing containers (`hooks`, the event's array, Cursor's and Copilot's `version`) are
/// created. An error says why the file cannot be edited.
fn install(
    text: &str,
    spec: &Spec,
    agent: HookAgent,
    entry: &J,
) -> Result<(String, Installed), String> {
    let mut text = text.to_string();
    let mut report = Installed::default();
    let wanted = entry.to_value();
    for _ in 0..MAX_EDITS {
        let doc = parse(&text, spec)?;
        let c = containers(&doc, spec)?;
        if spec.versioned && c.root.get("version").is_none() {
            text = doc.insert_member(c.root, "version", &J::Num(1));
            continue;
        }
        let Some(hooks) = c.hooks else {
            text = doc.insert_member(c.root, "hooks", &J::Object(vec![]));
            continue;
        };
        let Some(event) = c.event else {
            text = doc.insert_member(hooks, spec.event, &J::Array(vec![]));
            continue;
        };
        let places = find(event, spec, agent)?;
        let keep = places.iter().position(|p| matches!(p, Place::Alone(_)));
        // The others go first, last one first; the kept one is never among them.
        if let Some((_, &extra)) = places
            .iter()
            .enumerate()
            .rev()
            .find(|(i, _)| Some(*i) != keep)
        {
            text = remove_place(&doc, event, extra);
            report.removed += 1;
            continue;
        }
        let elements = event.elements().unwrap_or_default();
        match keep.map(|k| places[k]) {
            Some(Place::Alone(i)) if elements[i].to_value() == wanted => return Ok((text, report)),
            Some(Place::Alone(i)) => {
                text = doc.replace(&elements[i], entry);
                report.replaced = true;
            }
            _ => text = doc.push_element(event, entry),
        }
    }
    Err("too many edits: this is a bug in execgate".into())
}

/// The text without any handler that runs `execgate … hook AGENT`, and how many there
/// were. An event array left empty by that goes, and so does a `hooks` object left
/// empty by that; what was empty before stays.
fn uninstall(text: &str, spec: &Spec, agent: HookAgent) -> Result<(String, usize), String> {
    let mut text = text.to_string();
    let mut removed = 0;
    for _ in 0..MAX_EDITS {
        let doc = parse(&text, spec)?;
        let c = containers(&doc, spec)?;
        let Some(hooks) = c.hooks else {
            return Ok((text, removed));
        };
        if let Some(event) = c.event {
            if let Some(&last) = find(event, spec, agent)?.last() {
                text = remove_place(&doc, event, last);
                removed += 1;
                continue;
            }
            if removed > 0 && event.len() == 0 {
                let at = hooks.position(spec.event).expect("the event is in hooks");
                text = doc.remove(hooks, at);
                continue;
            }
        }
        if removed > 0 && hooks.len() == 0 {
            let at = c.root.position("hooks").expect("hooks is in the root");
            text = doc.remove(c.root, at);
        }
        return Ok((text, removed));
    }
    Err("too many edits: this is a bug in execgate".into())
}

/// Whether an uninstalled file of execgate's own holds nothing but its `version`.
fn holds_nothing_else(text: &str, spec: &Spec) -> bool {
    Doc::parse(text, dialect(spec)).is_ok_and(|doc| {
        doc.root
            .members()
            .is_some_and(|m| m.iter().all(|m| m.key == "version"))
    })
}

/// The settings file as it was found.
struct Found {
    /// The file edited: the path itself, or where its symbolic link leads.
    real: PathBuf,
    text: String,
    metadata: Metadata,
}

/// The file at `path`, following a symbolic link; None when there is none.
fn read_settings(path: &Path) -> Result<Option<Found>, String> {
    let shown = path.display();
    let real = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{shown}: {e}")),
        Ok(m) if m.file_type().is_symlink() => path.canonicalize().map_err(|e| {
            let target = fs::read_link(path)
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            format!("{shown} is a symbolic link to {target}, which cannot be followed: {e}")
        })?,
        Ok(_) => path.to_path_buf(),
    };
    let metadata = fs::metadata(&real).map_err(|e| format!("{}: {e}", real.display()))?;
    if !metadata.is_file() {
        return Err(format!("{}: not a regular file", real.display()));
    }
    if metadata.len() > MAX_BYTES {
        return Err(format!(
            "{}: {} bytes is too large for a settings file",
            real.display(),
            metadata.len()
        ));
    }
    let text = read_text(&real)?;
    Ok(Some(Found {
        real,
        text,
        metadata,
    }))
}

fn read_text(path: &Path) -> Result<String, String> {
    let bytes = fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes)
        .map_err(|_| format!("{}: not UTF-8 text; nothing was changed", path.display()))
}

/// A file that was not there: its directories are made, and it is written whole.
fn write_new(path: &Path, text: &str) -> io::Result<()> {
    let dir = path.parent().expect("a settings path has a directory");
    fs::create_dir_all(dir)?;
    write_atomically(path, text, None)
}

/// Keeps a copy of `found`, then puts `text` in its place (None: deletes it). Returns
/// the copy's path. A file that changed since it was read is left alone: someone else
/// (the agent itself, maybe) is writing it, and their change would be lost.
fn replace(found: &Found, text: Option<&str>) -> Result<PathBuf, String> {
    let real = &found.real;
    if read_text(real)? != found.text {
        return Err(format!(
            "{} changed while execgate was editing it; nothing was changed, run the command again",
            real.display()
        ));
    }
    let backup = backup(real, &found.text, &found.metadata).map_err(|e| {
        format!(
            "cannot back up {}: {e}; nothing was changed",
            real.display()
        )
    })?;
    let result = match text {
        Some(text) => write_atomically(real, text, Some(&found.metadata)),
        None => fs::remove_file(real).and_then(|()| sync_dir(real)),
    };
    result.map_err(|e| {
        format!(
            "cannot write {}: {e}; it is as it was (backup: {})",
            real.display(),
            backup.display()
        )
    })?;
    Ok(backup)
}

/// Copies the file's text to `FILE.execgate-backup-YYYYmmddTHHMMSSZ` (UTC; `-2`, `-3`, …
/// when that name is taken), with the file's mode and owner. The name does not end in
/// `.json`: agents that read every `*.json` of a directory do not read the copy.
fn backup(real: &Path, text: &str, metadata: &Metadata) -> io::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let base = format!("{}.execgate-backup-{stamp}", real.display());
    for n in 1.. {
        let path = PathBuf::from(if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        let mut file = match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            other => other?,
        };
        let done = file
            .write_all(text.as_bytes())
            .and_then(|()| keep_mode_and_owner(&file, metadata))
            .and_then(|()| file.sync_all());
        if let Err(e) = done {
            let _ = fs::remove_file(&path);
            return Err(e);
        }
        return Ok(path);
    }
    unreachable!("some backup name is free")
}

/// Writes `text` to a temporary file beside `path`, flushes it to disk and renames it
/// over `path`: a reader sees the old file or the new one, never half of one. The new
/// file keeps `keep`'s mode and owner. Where there was no file (`keep` None) it is put
/// in place without replacing one that appeared meanwhile, and gets 0644 less the umask.
fn write_atomically(path: &Path, text: &str, keep: Option<&Metadata>) -> io::Result<()> {
    let dir = path.parent().expect("a settings path has a directory");
    let name = path
        .file_name()
        .expect("a settings path names a file")
        .to_string_lossy();
    let mode = if keep.is_some() { 0o600 } else { 0o644 };
    // Not `*.json`, so that no agent reads it as settings meanwhile; removed if
    // anything below fails.
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{name}.execgate-"))
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(mode))
        .tempfile_in(dir)?;
    temp.write_all(text.as_bytes())?;
    if let Some(m) = keep {
        keep_mode_and_owner(temp.as_file(), m)?;
    }
    temp.as_file().sync_all()?;
    match keep {
        Some(_) => temp.persist(path).map(drop).map_err(|e| e.error)?,
        None => temp
            .persist_noclobber(path)
            .map(drop)
            .map_err(|e| match e.error.kind() {
                io::ErrorKind::AlreadyExists => io::Error::new(
                    e.error.kind(),
                    "someone else created it meanwhile; run the command again",
                ),
                _ => e.error,
            })?,
    }
    sync_dir(path)
}

fn keep_mode_and_owner(file: &File, metadata: &Metadata) -> io::Result<()> {
    file.set_permissions(fs::Permissions::from_mode(metadata.mode() & 0o7777))?;
    let own = file.metadata()?;
    if (own.uid(), own.gid()) != (metadata.uid(), metadata.gid()) {
        std::os::unix::fs::fchown(file, Some(metadata.uid()), Some(metadata.gid()))?;
        // Changing the owner may clear set-id bits: set the mode again.
        file.set_permissions(fs::Permissions::from_mode(metadata.mode() & 0o7777))?;
    }
    Ok(())
}

/// Flushes the directory entry of `path`, so that a rename or removal survives a crash.
fn sync_dir(path: &Path) -> io::Result<()> {
    File::open(path.parent().expect("a settings path has a directory"))?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::shell_join;
    use serde_json::{Value, json};

    const EXE: &str = "/opt/exec gate/bin/execgate";

    fn words(agent: HookAgent) -> Vec<String> {
        vec![EXE.into(), "hook".into(), agent.word().into()]
    }

    fn entry_of(agent: HookAgent, timeout: u64) -> J {
        entry(
            spec(agent),
            (agent.knowledge().handler)(&words(agent), timeout),
        )
    }

    fn installed(agent: HookAgent, text: &str) -> (String, Installed) {
        install(text, spec(agent), agent, &entry_of(agent, 150)).unwrap()
    }

    fn removed(agent: HookAgent, text: &str) -> (String, usize) {
        uninstall(text, spec(agent), agent).unwrap()
    }

    fn value(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn each_agent_gets_its_own_entry() {
        let quoted = "'/opt/exec gate/bin/execgate' hook";
        let cases = [
            (
                HookAgent::ClaudeCode,
                json!({"matcher": "*", "hooks": [{
                    "type": "command", "command": EXE, "args": ["hook", "claude-code"],
                    "timeout": 150, "onFailure": "block",
                    "statusMessage": "execgate: waiting for approval"}]}),
            ),
            (
                HookAgent::Codex,
                json!({"matcher": "*", "hooks": [{
                    "type": "command", "command": format!("{quoted} codex"), "timeout": 150,
                    "statusMessage": "execgate: waiting for approval"}]}),
            ),
            (
                HookAgent::Gemini,
                json!({"matcher": ".*", "hooks": [{
                    "type": "command", "command": format!("{quoted} gemini"), "timeout": 150000}]}),
            ),
            (
                HookAgent::Cursor,
                json!({"command": format!("{quoted} cursor"), "timeout": 150, "failClosed": true}),
            ),
            (
                HookAgent::Copilot,
                json!({"type": "command", "bash": format!("{quoted} copilot"), "timeoutSec": 150}),
            ),
        ];
        for (agent, expected) in cases {
            assert_eq!(entry_of(agent, 150).to_value(), expected, "{agent:?}");
        }
    }

    #[test]
    fn an_absent_file_becomes_one_entry_in_its_containers() {
        let (text, report) = installed(HookAgent::Cursor, "{}\n");
        assert_eq!(report, Installed::default());
        assert_eq!(
            value(&text),
            json!({"version": 1, "hooks": {"beforeShellExecution": [entry_of(HookAgent::Cursor, 150).to_value()]}})
        );
        // Members are written in the order the agent's documentation shows them.
        let at = |s: &str| text.find(s).unwrap();
        assert!(at("\"version\"") < at("\"hooks\""));
        assert!(at("\"command\"") < at("\"timeout\"") && at("\"timeout\"") < at("\"failClosed\""));
        assert!(text.ends_with("}\n"));
    }

    #[test]
    fn an_installed_entry_is_recognised_and_left_alone() {
        for agent in [
            HookAgent::ClaudeCode,
            HookAgent::Codex,
            HookAgent::Gemini,
            HookAgent::Cursor,
            HookAgent::Copilot,
        ] {
            let (once, _) = installed(agent, "{}");
            let (twice, report) = installed(agent, &once);
            assert_eq!(twice, once, "{agent:?}");
            assert_eq!(report, Installed::default());
        }
    }

    #[test]
    fn an_entry_that_differs_is_rewritten_in_place() {
        let old = entry_of(HookAgent::Codex, 60).to_value();
        let other = json!({"matcher": "Write", "hooks": [{"type": "command", "command": "lint"}]});
        let text =
            serde_json::to_string_pretty(&json!({"hooks": {"PreToolUse": [old, other]}})).unwrap();
        let (text, report) = installed(HookAgent::Codex, &text);
        assert_eq!(
            report,
            Installed {
                replaced: true,
                removed: 0
            }
        );
        assert_eq!(
            value(&text)["hooks"]["PreToolUse"],
            json!([entry_of(HookAgent::Codex, 150).to_value(), other])
        );
    }

    #[test]
    fn duplicates_are_removed_and_the_first_lone_entry_kept() {
        let ours = |timeout| entry_of(HookAgent::ClaudeCode, timeout).to_value();
        let handler = |timeout: u64| ours(timeout)["hooks"][0].clone();
        let lint = json!({"type": "command", "command": "lint"});
        let text = json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [lint, handler(10)]},
            ours(20),
            {"matcher": "Bash", "hooks": [handler(30), handler(40)]},
            ours(50),
        ]}});
        let (text, report) = installed(HookAgent::ClaudeCode, &text.to_string());
        assert_eq!(
            report,
            Installed {
                replaced: true,
                removed: 4
            }
        );
        assert_eq!(
            value(&text)["hooks"]["PreToolUse"],
            json!([{"matcher": "Bash", "hooks": [lint]}, ours(150)])
        );
    }

    #[test]
    fn other_agents_and_other_programs_are_not_execgates_entry() {
        let spec = spec(HookAgent::Codex);
        let handler = |command: &str| {
            Doc::parse(&json!({"command": command}).to_string(), Dialect::Json)
                .unwrap()
                .root
        };
        let ours = [
            "execgate hook codex",
            "/usr/local/bin/execgate hook codex",
            "'/opt/exec gate/execgate' hook codex --config /etc/x.toml",
            "EXECGATE_AGENT=me \"/opt/a b/execgate\" --socket /run/s hook codex",
            "cd /tmp && execgate hook codex",
        ];
        for command in ours {
            assert!(
                runs_execgate(&handler(command), spec, HookAgent::Codex),
                "{command}"
            );
        }
        let not_ours = [
            "execgate hook claude-code",
            "execgate hook install codex",
            "execgate-wrapper hook codex",
            "/usr/bin/other hook codex",
            "echo execgate hook; codex",
            "",
        ];
        for command in not_ours {
            assert!(
                !runs_execgate(&handler(command), spec, HookAgent::Codex),
                "{command}"
            );
        }
        // Claude Code's exec form: the program is one word, spaces and all.
        let exec_form =
            json!({"command": "/opt/exec gate/execgate", "args": ["hook", "claude-code"]});
        let node = Doc::parse(&exec_form.to_string(), Dialect::Json)
            .unwrap()
            .root;
        assert!(runs_execgate(
            &node,
            super::spec(HookAgent::ClaudeCode),
            HookAgent::ClaudeCode
        ));
    }

    #[test]
    fn words_split_as_a_shell_splits_them() {
        let cases: [(&str, &[&str]); 5] = [
            ("a  b\tc", &["a", "b", "c"]),
            ("'a b'c \"d \\\" e\" f\\ g", &["a bc", "d \" e", "f g"]),
            ("'it'\\''s'", &["it's"]),
            ("\"\\x\" ''", &["\\x", ""]),
            ("", &[]),
        ];
        for (line, expected) in cases {
            assert_eq!(split_words(line), expected, "{line:?}");
        }
        let words = ["/a b/execgate", "it's", "x\"y", "$HOME", "plain-1.0"].map(String::from);
        assert_eq!(split_words(&shell_join(&words)), words);
    }

    #[test]
    fn uninstall_takes_out_only_execgates_handlers() {
        let ours = entry_of(HookAgent::Gemini, 150).to_value();
        let handler = ours["hooks"][0].clone();
        let lint = json!({"type": "command", "command": "lint"});
        let text = json!({"ui": {"theme": "x"}, "hooks": {
            "BeforeTool": [{"matcher": "*", "hooks": [handler, lint]}, ours],
            "AfterTool": [],
        }});
        let (text, n) = removed(HookAgent::Gemini, &text.to_string());
        assert_eq!(n, 2);
        assert_eq!(
            value(&text),
            json!({"ui": {"theme": "x"}, "hooks": {
                "BeforeTool": [{"matcher": "*", "hooks": [lint]}], "AfterTool": []}})
        );
    }

    #[test]
    fn uninstall_removes_the_containers_it_emptied_and_no_others() {
        let (text, _) = installed(HookAgent::ClaudeCode, "{\n  \"model\": \"x\"\n}\n");
        let (text, n) = removed(HookAgent::ClaudeCode, &text);
        assert_eq!((text.as_str(), n), ("{\n  \"model\": \"x\"\n}\n", 1));
        // An object written on one line comes back spread over lines.
        let (text, _) = installed(HookAgent::ClaudeCode, r#"{"model": "x"}"#);
        let (text, n) = removed(HookAgent::ClaudeCode, &text);
        assert_eq!((text.as_str(), n), ("{\n  \"model\": \"x\"\n}", 1));
        let kept = r#"{"hooks": {"PreToolUse": [], "Stop": []}}"#;
        assert_eq!(removed(HookAgent::ClaudeCode, kept), (kept.to_string(), 0));
        let (text, _) = installed(HookAgent::ClaudeCode, r#"{"hooks": {"Stop": []}}"#);
        let (text, _) = removed(HookAgent::ClaudeCode, &text);
        assert_eq!(value(&text), json!({"hooks": {"Stop": []}}));
    }

    #[test]
    fn copilots_own_file_is_empty_once_uninstalled() {
        let spec = spec(HookAgent::Copilot);
        let (text, _) = installed(HookAgent::Copilot, "{}");
        let (text, _) = removed(HookAgent::Copilot, &text);
        assert!(holds_nothing_else(&text, spec), "{text}");
        let (text, _) = installed(HookAgent::Copilot, r#"{"hooks": {"sessionStart": []}}"#);
        let (text, _) = removed(HookAgent::Copilot, &text);
        assert!(!holds_nothing_else(&text, spec), "{text}");
    }

    #[test]
    fn containers_of_the_wrong_type_are_refused() {
        let agent = HookAgent::ClaudeCode;
        let cases = [
            ("[]", "the file holds an array, not an object"),
            (r#"{"hooks": []}"#, "`hooks` is an array, not an object"),
            (
                r#"{"hooks": {"PreToolUse": {}}}"#,
                "`hooks.PreToolUse` is an object, not an array",
            ),
            (
                r#"{"hooks": {"PreToolUse": "x"}}"#,
                "`hooks.PreToolUse` is a string, not an array",
            ),
        ];
        for (text, why) in cases {
            let e = entry_of(agent, 150);
            assert_eq!(install(text, spec(agent), agent, &e).unwrap_err(), why);
            assert_eq!(uninstall(text, spec(agent), agent).unwrap_err(), why);
        }
    }

    #[test]
    fn a_file_full_of_execgate_handlers_is_refused() {
        let agent = HookAgent::Cursor;
        let many = |n: usize| {
            let entries = vec![entry_of(agent, 1).to_value(); n];
            json!({"hooks": {"beforeShellExecution": entries}}).to_string()
        };
        let (text, report) = installed(agent, &many(MAX_HANDLERS));
        assert_eq!(report.removed, MAX_HANDLERS - 1);
        assert_eq!(
            value(&text)["hooks"]["beforeShellExecution"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        let e = entry_of(agent, 150);
        let err = install(&many(MAX_HANDLERS + 1), spec(agent), agent, &e).unwrap_err();
        assert!(
            err.contains("101 handlers run `execgate hook cursor`"),
            "{err}"
        );
        assert!(uninstall(&many(MAX_HANDLERS + 1), spec(agent), agent).is_err());
    }

    #[test]
    fn gemini_settings_may_have_comments_and_the_others_may_not() {
        let text = "{\n  // mine\n  \"ui\": {} /* keep */\n}\n";
        let (out, _) = installed(HookAgent::Gemini, text);
        assert!(
            out.starts_with("{\n  // mine\n  \"ui\": {}, /* keep */\n  \"hooks\": {"),
            "{out}"
        );
        let e = entry_of(HookAgent::ClaudeCode, 150);
        let err =
            install(text, spec(HookAgent::ClaudeCode), HookAgent::ClaudeCode, &e).unwrap_err();
        assert_eq!(
            err,
            "not JSON as Claude Code reads it: line 2, column 3: a comment, which JSON does not allow"
        );
    }

    #[test]
    fn the_user_and_project_files() {
        let cases = [
            (HookAgent::ClaudeCode, "/p/.claude/settings.json"),
            (HookAgent::Codex, "/p/.codex/hooks.json"),
            (HookAgent::Gemini, "/p/.gemini/settings.json"),
            (HookAgent::Cursor, "/p/.cursor/hooks.json"),
            (HookAgent::Copilot, "/p/.github/hooks/execgate.json"),
        ];
        for (agent, expected) in cases {
            assert_eq!(
                Path::new("/p").join(spec(agent).project_file),
                Path::new(expected)
            );
        }
    }
}
