//! Tool calls: a request's `tool` (`Write`, `Edit`, `mcp__github__create_issue`), judged
//! by name and by the paths its input names (docs/decisions.md, "Tool requests").
//!
//! The pipeline: security mode → `policy.tools.deny` → protected paths → tool rules →
//! `policy.tools.safe` → ask. A tool's input is the tool's own business, so execgate
//! understands a tool call no better than its name: it is approved without a human only
//! by a rule the owner wrote for that name, or as one of the read-only tools the owner
//! listed, and never when a path in its input is one the path policy (`policy::paths`,
//! the same one a command's operands meet) refuses: a read-only tool is refused what
//! `cat` or `grep -r` of the path would be; any other tool, what writing it would be.

use std::path::Path;

use globset::{GlobSet, GlobSetBuilder};
use serde_json::Value;

use super::patch;
use super::paths::{self, Access, Kind, MAX_PATH_LEN, Paths};
use crate::config::compile_deny_glob;

/// At most this many strings of a tool's input are checked against the protected
/// paths; an input with more is not understood, and a human decides.
pub const MAX_STRINGS: usize = 4096;

/// How deep a tool's input is walked; deeper is not understood.
pub const MAX_DEPTH: usize = 32;

/// `policy.tools.deny`, compiled.
#[derive(Debug)]
pub struct ToolDeny(GlobSet);

impl ToolDeny {
    pub fn new(patterns: &[String]) -> Result<ToolDeny, globset::Error> {
        let mut set = GlobSetBuilder::new();
        for p in patterns {
            set.add(compile_deny_glob(p)?);
        }
        Ok(ToolDeny(set.build()?))
    }

    pub fn matches(&self, name: &str) -> bool {
        self.0.is_match(name)
    }
}

/// What a tool's input names that a machine may not approve, and whether it could be
/// checked whole (too many strings, too deep, or a patch that cannot be read is not
/// understood, and a human decides).
///
/// Every string that could be a path (it looks like one, or names a file in `cwd`) is
/// judged by the one path policy: read by a read-only tool (`policy.tools.safe`, whose
/// every path is read as a search tool reads it, tree and all), written by any other
/// tool, which may do anything with it. A string that is content, not a path, at worst
/// puts the call to a human. A string that is a patch (`policy::patch`: Codex's
/// `apply_patch`, whatever the tool is called) is judged by the files it touches, each
/// written; and a tool called `apply_patch` whose input holds no patch is not understood.
pub fn in_input(
    paths: &Paths,
    name: &str,
    input: &Value,
    read_only: bool,
    cwd: Option<&Path>,
) -> InputCheck {
    let mut strings = Vec::new();
    let mut unchecked = None;
    collect_strings(input, 0, &mut strings, &mut unchecked);
    let access = if read_only {
        Access::ReadTree
    } else {
        Access::Write
    };
    let mut check = InputCheck {
        unchecked,
        ..InputCheck::default()
    };
    let mut written: Vec<String> = Vec::new();
    let mut patches = 0;
    for s in &strings {
        if !patch::looks_like(s) {
            continue;
        }
        patches += 1;
        match patch::touches(s) {
            Ok(touched) => written.extend(touched.iter().map(|t| t.path().to_string())),
            Err(why) => {
                check.unchecked.get_or_insert_with(|| {
                    format!(
                        "the patch in the tool's input cannot be read ({why}): execgate did not check which files it touches"
                    )
                });
            }
        }
    }
    if patches == 0 && name.eq_ignore_ascii_case("apply_patch") {
        check.unchecked.get_or_insert_with(|| {
            format!("`{name}`'s input holds no patch that execgate can read")
        });
    }
    // The input's strings as the tool uses them, then the patches' files: paths for
    // sure, and written.
    let candidates = strings
        .iter()
        .map(|s| (*s, access, read_only, false))
        .chain(
            written
                .iter()
                .map(|p| (p.as_str(), Access::Write, false, true)),
        );
    for (s, access, read_only, a_path) in candidates {
        let path_like = a_path
            || paths::is_path(s)
            || cwd.is_some_and(|c| s.len() < MAX_PATH_LEN && c.join(s).symlink_metadata().is_ok());
        if !path_like {
            continue;
        }
        let Some(refusal) = paths.refusal(s, access, cwd) else {
            continue;
        };
        let (list, why) = match (refusal.kind, read_only) {
            (Kind::Secret, true) => (
                &mut check.secrets,
                format!(
                    "reads {}, which `cat` of it would not be approved for",
                    refusal.what
                ),
            ),
            (Kind::Guard | Kind::Own, _) => (
                &mut check.protected,
                format!(
                    "names {}, which an agent could use to switch its guard off or change what execgate allows",
                    refusal.what
                ),
            ),
            (Kind::Secret | Kind::Sensitive, _) => (
                &mut check.protected,
                format!(
                    "names {}, which a tool that writes could change",
                    refusal.what
                ),
            ),
        };
        if !list.contains(&why) {
            list.push(why);
        }
    }
    check
}

/// What [`in_input`] found.
#[derive(Debug, Default)]
pub struct InputCheck {
    /// Why the input names protected paths (empty: it names none): dangerous.
    pub protected: Vec<String>,
    /// The secrets a read-only tool would read: put to a human, as `cat` of them is.
    pub secrets: Vec<String>,
    /// Why not all of the input was checked, if it was not.
    pub unchecked: Option<String>,
}

/// The strings in `value` (values and keys), depth-first, up to the limits; `overflow`
/// says what was left unchecked.
fn collect_strings<'a>(
    value: &'a Value,
    depth: usize,
    out: &mut Vec<&'a str>,
    overflow: &mut Option<String>,
) {
    if overflow.is_some() {
        return;
    }
    if depth > MAX_DEPTH {
        *overflow = Some(format!(
            "the tool's input is nested deeper than {MAX_DEPTH} levels: execgate did not check it all"
        ));
        return;
    }
    match value {
        Value::String(s) => push_string(s, out, overflow),
        Value::Array(items) => {
            for item in items {
                collect_strings(item, depth + 1, out, overflow);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                push_string(key, out, overflow);
                collect_strings(item, depth + 1, out, overflow);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn push_string<'a>(s: &'a str, out: &mut Vec<&'a str>, overflow: &mut Option<String>) {
    if overflow.is_some() {
        return;
    }
    if out.len() >= MAX_STRINGS {
        *overflow = Some(format!(
            "the tool's input has more than {MAX_STRINGS} strings: execgate did not check them all"
        ));
    } else {
        out.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_of_the_input_is_checked_and_too_much_is_not_understood() {
        let dir = tempfile::tempdir().unwrap();
        let p = Paths::default();
        let cwd = dir.path().join("repo");
        let input = serde_json::json!({
            "edits": [{"file_path": "src/a.rs"}, {"file_path": ".git/hooks/pre-commit"}],
            "content": "x",
        });
        let check = in_input(&p, "Edit", &input, false, Some(&cwd));
        assert_eq!(check.protected.len(), 1, "{check:?}");
        assert!(check.protected[0].contains("git hooks"), "{check:?}");
        assert!(check.unchecked.is_none());
        let many: Vec<String> = (0..MAX_STRINGS + 1).map(|i| format!("f{i}")).collect();
        let check = in_input(
            &p,
            "Edit",
            &serde_json::json!({ "paths": many }),
            false,
            Some(&cwd),
        );
        assert!(check.unchecked.unwrap().contains("did not check"));
        let mut deep = serde_json::json!("x");
        for _ in 0..MAX_DEPTH + 2 {
            deep = serde_json::json!([deep]);
        }
        let check = in_input(&p, "Edit", &deep, false, Some(&cwd));
        assert!(check.unchecked.unwrap().contains("deeper"));
        let plain = in_input(
            &p,
            "Edit",
            &serde_json::json!({"file_path": "a.txt"}),
            false,
            Some(&cwd),
        );
        assert!(plain.protected.is_empty() && plain.unchecked.is_none());
    }

    #[test]
    fn a_read_only_tool_is_refused_the_secrets_cat_is_refused_and_no_more() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        std::fs::write(cwd.join("credentials"), "x").unwrap();
        let p = Paths::default();
        let read = |v: serde_json::Value| in_input(&p, "Read", &v, true, Some(&cwd));
        for input in [
            serde_json::json!({"file_path": ".env"}),
            serde_json::json!({"file_path": "/home/u/.ssh/id_ed25519"}),
            serde_json::json!({"pattern": "**/*.pem"}),
            serde_json::json!({"file_path": "credentials"}),
        ] {
            let check = read(input.clone());
            assert!(!check.secrets.is_empty(), "{input}: {check:?}");
            assert!(check.protected.is_empty(), "{input}: {check:?}");
        }
        // Reading a start-up file is harmless; writing it is not. A word that is no path
        // and names no file here is content.
        assert!(
            read(serde_json::json!({"file_path": "/home/u/.bashrc"}))
                .secrets
                .is_empty()
        );
        let write = in_input(
            &p,
            "Write",
            &serde_json::json!({"file_path": "/home/u/.bashrc"}),
            false,
            Some(&cwd),
        );
        assert_eq!(write.protected.len(), 1, "{write:?}");
        let grep = read(serde_json::json!({"pattern": "secrets", "output_mode": "content"}));
        assert!(
            grep.secrets.is_empty() && grep.protected.is_empty(),
            "{grep:?}"
        );
    }

    #[test]
    fn a_patch_is_judged_by_the_files_it_touches() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("repo");
        let p = Paths::default();
        let check = |name: &str, patch: &str| {
            in_input(
                &p,
                name,
                &serde_json::json!({ "patch": patch }),
                false,
                Some(&cwd),
            )
        };
        let plain = check(
            "apply_patch",
            "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** End Patch",
        );
        assert!(
            plain.protected.is_empty() && plain.unchecked.is_none(),
            "{plain:?}"
        );
        for (touched, what) in [
            ("*** Add File: .env\n+X=1", "secret"),
            ("*** Update File: .codex/config.toml\n@@\n-a\n+b", "guard"),
            ("*** Delete File: /home/u/.ssh/id_ed25519", "secret"),
            (
                "*** Update File: notes.txt\n*** Move to: .git/hooks/pre-commit\n@@\n-a\n+b",
                "git hooks",
            ),
        ] {
            let patch =
                format!("*** Begin Patch\n*** Add File: ok.txt\n+x\n{touched}\n*** End Patch\n");
            let found = check("apply_patch", &patch);
            assert!(!found.protected.is_empty(), "{what}: {touched}: {found:?}");
            // Whatever the tool is called: a patch in its input is read.
            assert!(!check("Edit", &patch).protected.is_empty(), "{touched}");
        }
        // What execgate cannot read, a human decides.
        for bad in [
            "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch",
            "*** Begin Patch\n*** Add File: a\n+x\n",
            "not a patch at all",
        ] {
            let found = check("apply_patch", bad);
            assert!(found.unchecked.is_some(), "{bad:?}: {found:?}");
        }
    }

    #[test]
    fn tool_deny_globs_ignore_case() {
        let deny = ToolDeny::new(&["mcp__shell__*".into(), "Bash".into()]).unwrap();
        assert!(deny.matches("mcp__shell__exec"));
        assert!(deny.matches("bash"));
        assert!(!deny.matches("mcp__github__get_issue"));
    }
}
