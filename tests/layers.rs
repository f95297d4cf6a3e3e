//! The shape of the code, checked: every `crate::`, `super::` and `self::` path in `src/`
//! points downward through the layers, and no two sibling modules import each other,
//! directly or around a circle.
//!
//! The layers, from the bottom: the model and leaf helpers; configuration; policy and
//! the store; running; approvals and the run queue; the fronts (API, transports, CLI,
//! the web page), which never import each other (but for the one import `ACROSS`
//! names); the daemon, which wires them together. `docs/` and `src/lib.rs` describe
//! each.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module's layer: a module imports only from lower layers.
const LAYERS: &[(&str, u32)] = &[
    ("model", 0),
    ("text", 0),
    ("sys", 0),
    ("shutdown", 0),
    ("metrics", 0),
    ("trusted_file", 1),
    ("web_token", 1),
    ("workdir", 1),
    ("confine", 1),
    ("systemd", 1),
    ("yaml", 1),
    ("render", 1),
    ("config", 2),
    ("policy", 3),
    ("store", 3),
    ("exec", 4),
    ("approvals", 5),
    ("runs", 5),
    ("client", 5),
    // The fronts share a layer, so none imports another.
    ("api", 6),
    ("transport", 6),
    ("cli", 6),
    ("web", 6),
    // Beside the fronts: it drives approvals from other nodes' changes.
    ("cluster", 6),
    ("daemon", 7),
];

/// Imports across one layer that are allowed, each for its reason. The approvals page
/// is a front that serves the admin API's own routes, through the API's server loop;
/// the API knows nothing of it (the circle check below would catch it).
const ACROSS: &[(&str, &str)] = &[("web", "api")];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file of the library as its module path (`policy::risk::code`), with its
/// code up to its first `#[cfg(test)]` (tests may reach anywhere).
fn modules() -> BTreeMap<Vec<String>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&src(), &mut files);
    let mut modules = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src()).unwrap().with_extension("");
        let mut path: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if path.last().is_some_and(|l| l == "mod") {
            path.pop();
        }
        if path == ["lib"] || path == ["main"] || path.last().is_some_and(|l| l == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        modules.insert(path, code.to_string());
    }
    modules
}

/// The modules `code` (of module `at`) names by path.
fn imports(at: &[String], code: &str, known: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    for line in code.lines() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find(['c', 's']) {
            let tail = &rest[i..];
            let preceded_by_word = rest[..i]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            let start = ["crate::", "super::", "self::"]
                .into_iter()
                .find(|p| tail.starts_with(p))
                .filter(|_| !preceded_by_word);
            let Some(start) = start else {
                rest = &tail[1..];
                continue;
            };
            let words: Vec<&str> = tail
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or_default()
                .split("::")
                .filter(|w| !w.is_empty())
                .collect();
            // The module a file's `self` is, and its parent, `super`.
            let here: Vec<String> = at.to_vec();
            let mut path: Vec<String> = match start {
                "crate::" => Vec::new(),
                "self::" => here.clone(),
                _ => {
                    let mut p = here.clone();
                    p.pop();
                    p
                }
            };
            for w in &words[1..] {
                match *w {
                    "super" => {
                        path.pop();
                    }
                    "self" => {}
                    w => path.push(w.to_string()),
                }
            }
            // `use super::{a, b::c}`: each first word inside the braces is a path too.
            let mut paths = vec![path.clone()];
            let after = &tail[tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len())..];
            if tail[..tail.len() - after.len()].ends_with("::") && after.starts_with('{') {
                let inside = after[1..].split('}').next().unwrap_or_default();
                for item in inside.split(',') {
                    let first = item.trim().split("::").next().unwrap_or_default();
                    if !first.is_empty() && first != "self" {
                        let mut p = path.clone();
                        p.push(first.to_string());
                        paths.push(p);
                    }
                }
            }
            for mut path in paths {
                // The longest prefix that is a module: the rest are items in it.
                while !path.is_empty() && !known.contains(&path) {
                    path.pop();
                }
                if !path.is_empty() && path != at {
                    found.insert(path);
                }
            }
            rest = &tail[start.len()..];
        }
    }
    found
}

fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules = modules();
    let known: BTreeSet<Vec<String>> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(at, code)| (at.clone(), imports(at, code, &known)))
        .collect()
}

#[test]
fn every_import_points_down_the_layers() {
    let layer = |m: &str| {
        LAYERS
            .iter()
            .find(|(name, _)| *name == m)
            .map(|&(_, l)| l)
            .unwrap_or_else(|| panic!("module `{m}` has no layer in tests/layers.rs"))
    };
    let mut upward = Vec::new();
    for (from, to) in graph() {
        for target in to {
            let (a, b) = (&from[0], &target[0]);
            let allowed = ACROSS.contains(&(a.as_str(), b.as_str()));
            if a != b && layer(a) <= layer(b) && !allowed {
                upward.push(format!("{} -> {}", from.join("::"), target.join("::")));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that do not point down:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_sibling_modules_import_each_other_around_a_circle() {
    // Edges between the children of each parent (an import of a parent's own items,
    // `super::x` from a child, is not one).
    let mut siblings: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    for (from, to) in graph() {
        for target in to {
            let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < target.len() {
                siblings
                    .entry(from[..common].to_vec())
                    .or_default()
                    .insert((from[common].clone(), target[common].clone()));
            }
        }
    }
    let mut circles = Vec::new();
    for (parent, edges) in &siblings {
        // A circle exists when some module reaches itself.
        for (start, _) in edges {
            let mut seen = BTreeSet::new();
            let mut stack: Vec<&String> = vec![start];
            while let Some(m) = stack.pop() {
                for (a, b) in edges.iter().filter(|(a, _)| a == m) {
                    let _ = a;
                    if b == start {
                        circles.push(format!("{}: {start} reaches itself", parent.join("::")));
                    }
                    if seen.insert(b.clone()) {
                        stack.push(b);
                    }
                }
            }
        }
    }
    circles.dedup();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}
