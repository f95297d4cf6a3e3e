//! Project work (docs/decisions.md#project-work): running the project's own code and
//! writing inside the project, which judgement alone cannot approve, approved without a
//! human when execgate runs it confined to the project with no network
//! ([`Confine::ProjectWork`](crate::model::Confine)). What this module decides is only
//! whether the command's *words* keep to the project: every program a project tool, a
//! project script or a profiled program that only reads and writes inside it; every
//! path it names and every redirection inside it; no network, no
//! secret, no guard setting, nothing execgate's own. The kernel holds the rest.

use std::path::Path;

use super::parse::Analysis;
use super::paths::{self, Paths, Refusal};
use super::programs::{Effect, Understanding};

/// What a request's command is, as policy read it, for the project-work check.
pub(super) struct Reading<'a> {
    pub analysis: &'a Analysis,
    pub understood: &'a [Understanding],
    pub judged: &'a [Vec<Option<Refusal>>],
}

/// Why the command is not project work in `root` (run from `cwd`), if it is not.
/// `tools`: `policy.project_tools`.
pub(super) fn why_not(
    paths: &Paths,
    reading: Reading<'_>,
    tools: &[String],
    cwd: &Path,
    root: &Path,
) -> Option<String> {
    let inside = |text: &str| keeps_inside(paths, text, cwd, root);
    let mut ran_code = false;
    for ((c, u), judged) in reading
        .analysis
        .commands
        .iter()
        .zip(reading.understood)
        .zip(reading.judged)
    {
        let Some(program) = c.words.first() else {
            continue;
        };
        if let Some(refusal) = judged.iter().flatten().next() {
            return Some(format!("`{}` names {}", u.program, refusal.what));
        }
        if !u.if_present.is_empty() {
            return Some(format!("`{}` may destroy what it names", u.program));
        }
        let script = program.contains('/');
        let tool = !script && tools.iter().any(|t| t == program);
        if script && let Some(why) = inside(program) {
            return Some(format!("the script {why}"));
        }
        if script || tool {
            // Whether its profile reads them or not, no word of a program that runs
            // code may name a path outside the project (`python3 /tmp/x.py`).
            if let Some(why) = c.words[1..].iter().find_map(|w| word(w, &inside)) {
                return Some(why);
            }
            if script || !u.profiled {
                ran_code = true;
                continue;
            }
        }
        if !u.profiled {
            return Some(format!(
                "`{}` is neither a project tool (policy.project_tools) nor a script of the project",
                u.program
            ));
        }
        for f in &u.findings {
            match &f.effect {
                Effect::Reads(p) | Effect::ReadsTree(p) | Effect::Writes(p) => {
                    if p != "-"
                        && let Some(why) = inside(p)
                    {
                        return Some(why);
                    }
                }
                Effect::Code(_) | Effect::Project(_) | Effect::Config(_) | Effect::Env(_)
                    if tool =>
                {
                    ran_code = true;
                }
                Effect::Net(what) => {
                    return Some(format!("`{}` reaches the network: {what}", u.program));
                }
                other => {
                    return Some(format!(
                        "`{}` does more than project work: {}",
                        u.program, other
                    ));
                }
            }
        }
        if !u.runs.is_empty() && !tool {
            return Some(format!("`{}` runs another program", u.program));
        }
        ran_code |= tool;
    }
    for r in &reading.analysis.redirects {
        if !(r.writes() || r.reads()) || fd_dup(&r.target) || r.target == "/dev/null" {
            continue;
        }
        if r.target.contains(['$', '`', '~', '*', '?', '[', '{']) {
            return Some(format!("the shell expands `{}` when it runs", r.target));
        }
        if let Some(why) = inside(&r.target) {
            return Some(format!("the shell's redirection: {why}"));
        }
        let access = if r.writes() {
            paths::Access::Write
        } else {
            paths::Access::Read
        };
        if let Some(refusal) = paths.refusal(&r.target, access, Some(cwd)) {
            return Some(format!("the shell's redirection reaches {}", refusal.what));
        }
    }
    // A command that only reads and writes is judged as such (steps 7, 8); a write the
    // judgement left to a human, through a program or a redirection, is project work.
    let writes = reading.analysis.redirects.iter().any(|r| r.writes())
        || reading
            .understood
            .iter()
            .flat_map(|u| &u.findings)
            .any(|f| matches!(f.effect, Effect::Writes(_)));
    (!ran_code && !writes).then(|| "it neither runs the project's code nor writes in it".into())
}

/// Whether the command was read whole, so that every program it runs and every file
/// its shell opens is known: plain (an assignment before a program, `LD_PRELOAD=…`, is
/// not), or not plain only for redirections to files,
/// heredocs (whose substitutions are read as commands, and are not plain) and the
/// newlines that hold them (`cat > notes.md <<'EOF' … EOF`, as agents write files).
pub(super) fn read_whole(analysis: &Analysis) -> bool {
    !analysis.partial
        && analysis.not_plain.iter().all(|reason| {
            [
                "redirect `",
                "heredoc `<<`",
                "newline or carriage return",
                "shell syntax `heredoc_",
            ]
            .iter()
            .any(|tolerated| reason.starts_with(tolerated))
        })
}

/// Why `text`, a path as the command names it, does not keep to the project.
fn keeps_inside(paths: &Paths, text: &str, cwd: &Path, root: &Path) -> Option<String> {
    let project = paths::Project {
        root,
        over_secrets: false,
    };
    paths.outside(text, paths::Access::Read, cwd, project)
}

/// `>&2`, `2>&1`, `>&-`: a descriptor, not a file.
fn fd_dup(target: &str) -> bool {
    target == "-" || (!target.is_empty() && target.bytes().all(|b| b.is_ascii_digit()))
}

/// Why a word execgate cannot read (an argument of a project tool without a profile, or
/// of a script) may name something outside the project: an expansion, or a path (or an
/// option's value that is one) that leads outside it.
fn word(text: &str, inside: &impl Fn(&str) -> Option<String>) -> Option<String> {
    if text.contains('$') || text.contains('`') {
        return Some(format!("`{text}` is expanded when it runs"));
    }
    let value = match text.split_once('=') {
        Some((option, value)) if option.starts_with('-') => value,
        _ => text,
    };
    // Every word is judged by what it names where the command runs, not by its
    // spelling: `outlink/x` may lead out through a link. A word that names nothing
    // there is inside as written (`-k`, `test_x`).
    if let Some(why) = inside(value) {
        return Some(why);
    }
    // `a/b:c/d` (a search path): each part too.
    if value.contains(':') {
        return value.split(':').filter(|p| !p.is_empty()).find_map(inside);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outside_tmp(text: &str) -> Option<String> {
        (text.starts_with('/') || text.starts_with('~') || text.contains(".."))
            .then(|| format!("`{text}` lies outside the project"))
    }

    #[test]
    fn words_that_name_a_path_outside_are_found() {
        assert_eq!(word("tests/test_x.py", &outside_tmp), None);
        assert_eq!(word("-k", &outside_tmp), None);
        assert!(word("/etc/passwd", &outside_tmp).is_some());
        assert!(word("--config=../x.toml", &outside_tmp).is_some());
        assert!(word("--out=~/x", &outside_tmp).is_some());
        assert!(word("src:/usr/lib/x", &outside_tmp).is_some());
        assert!(word("$HOME/x", &outside_tmp).is_some());
        assert!(word("`id`", &outside_tmp).is_some());
        assert_eq!(word("--flag=value", &outside_tmp), None);
    }

    #[test]
    fn descriptors_are_not_files() {
        assert!(fd_dup("1"));
        assert!(fd_dup("-"));
        assert!(!fd_dup("out.txt"));
        assert!(!fd_dup(""));
    }
}
