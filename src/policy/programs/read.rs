//! The reader: a command's words, read against a profile the way the program's own
//! option parser reads them, word by word, into options given, operands and findings.

use super::compiled::Compiled;
use super::profile::{
    Effect, Finding, IfPresent, Reading, Role, Runs, Span, Syntax, Understanding,
};
use super::spec::{Arg, Does, Opt};
use crate::policy::paths;

/// Reads `words` (program first) against a compiled profile: the findings, and the
/// subcommands selected (`["stash", "list"]`).
pub(super) fn read(
    top: &'static Compiled,
    words: &[String],
    piped: bool,
    reread: fn(&[String], bool) -> Understanding,
) -> Outcome {
    let program = words[0].rsplit('/').next().unwrap_or(&words[0]);
    let mut r = Reading {
        words,
        piped,
        reread,
        program,
        path: Vec::new(),
        typed: Vec::new(),
        given: Vec::new(),
        operands: Vec::new(),
        dashdash: None,
        findings: Vec::new(),
        runs: Vec::new(),
        if_present: Vec::new(),
        stopped: false,
        endless: false,
        roles: None,
    };
    let mut level = top;
    let mut level_at = 0;
    let mut scope: Vec<&'static Compiled> = vec![top];
    let mut checks = Vec::new();
    let mut i = 1;
    while let Next::Sub(sub, at) = read_level(level, &scope, &mut r, i) {
        checks.extend(level.profile.check.map(|c| (c, level)));
        level_at = at;
        r.path.push(sub.profile.names[0]);
        r.typed.push(words[at].as_str());
        if !sub.profile.inherit {
            scope.clear();
        }
        scope.push(sub);
        level = sub;
        i = at + 1;
    }
    // What running it does is the innermost subcommand's (`git stash` stashes, `git
    // stash list` lists).
    r.does(level.profile.does, level_at);
    checks.extend(level.profile.check.map(|c| (c, level)));
    for (check, _level) in checks {
        #[cfg(test)]
        super::testing::coverage::checked(_level);
        check(&mut r);
    }
    let (first, rest) = r
        .roles
        .unwrap_or((level.profile.operands, level.profile.rest));
    finish(&mut r, first, rest);
    let endless = r.endless || r.given.iter().any(|g| g.opt.does == Does::Follows);
    Outcome {
        findings: r.findings,
        path: r.path,
        runs: r.runs,
        if_present: r.if_present,
        endless,
    }
}

/// What reading found: the parts of an [`Understanding`] the reader makes.
pub(super) struct Outcome {
    pub(super) findings: Vec<Finding>,
    pub(super) path: Vec<&'static str>,
    pub(super) runs: Vec<Runs>,
    pub(super) if_present: Vec<IfPresent>,
    pub(super) endless: bool,
}

enum Next {
    Sub(&'static Compiled, usize),
    Done,
}

fn read_level(
    level: &'static Compiled,
    scope: &[&'static Compiled],
    r: &mut Reading<'_>,
    mut i: usize,
) -> Next {
    let syntax = level.profile.syntax;
    let has_subs = !level.subs.is_empty();
    let mut only_operands = false;
    if level.profile.old_style
        && let Some(w) = r.words.get(i)
        && !w.starts_with('-')
        && !w.is_empty()
        && w.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        match read_bundle(scope, r, i) {
            Some(next) => i = next,
            None => {
                r.stopped = true;
                return Next::Done;
            }
        }
    }
    while i < r.words.len() {
        let w = r.words[i].as_str();
        if !only_operands && w == "--" && syntax != Syntax::Operands {
            r.dashdash = Some(i);
            only_operands = true;
            i += 1;
            continue;
        }
        let option_like =
            !only_operands && syntax != Syntax::Operands && w.len() > 1 && w.starts_with('-');
        if !option_like {
            if has_subs && r.operands.is_empty() {
                if let Some(sub) = level.sub(w) {
                    if r.dashdash.is_some() {
                        r.unknown(i, format!("`{w}` after `--` is not a subcommand"));
                        r.stopped = true;
                        return Next::Done;
                    }
                    return Next::Sub(sub, i);
                }
                if level.profile.operands.is_empty() && level.profile.rest == Role::Nothing {
                    r.unknown(
                        i,
                        format!(
                            "`{w}` is not a `{}` subcommand execgate knows",
                            r.words[..i].join(" ")
                        ),
                    );
                    r.stopped = true;
                    return Next::Done;
                }
            }
            r.operands.push((i, w));
            i += 1;
            if syntax == Syntax::GnuInOrder {
                only_operands = true;
            }
            continue;
        }
        match read_option(scope, syntax, r, i) {
            Some(next) => {
                i = next;
                if r.given.last().is_some_and(|g| g.opt.ends) {
                    only_operands = true;
                }
            }
            None => {
                r.stopped = true;
                return Next::Done;
            }
        }
    }
    Next::Done
}

fn find_long(scope: &[&'static Compiled], name: &str) -> Option<&'static Opt> {
    scope.iter().rev().find_map(|c| {
        c.longs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, i)| &c.opts[i])
    })
}

fn find_dash_long(scope: &[&'static Compiled], name: &str) -> Option<&'static Opt> {
    scope.iter().rev().find_map(|c| {
        c.dash_longs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, i)| &c.opts[i])
    })
}

fn find_short(scope: &[&'static Compiled], c: char) -> Option<&'static Opt> {
    scope
        .iter()
        .rev()
        .find_map(|p| p.shorts.get(&c).map(|&i| &p.opts[i]))
}

fn find_number(scope: &[&'static Compiled]) -> Option<&'static Opt> {
    scope
        .iter()
        .rev()
        .find_map(|p| p.number.map(|i| &p.opts[i]))
}

/// Every option a long name abbreviates (distinct options, in table order).
fn abbreviated(scope: &[&'static Compiled], name: &str) -> Vec<&'static Opt> {
    let mut out: Vec<&'static Opt> = Vec::new();
    for c in scope {
        for (long, i) in &c.longs {
            let opt = &c.opts[*i];
            if long.starts_with(name) && !out.iter().any(|o| std::ptr::eq(*o, opt)) {
                out.push(opt);
            }
        }
    }
    out
}

/// Reads the option at word `i`; the index of the next word, or None when reading
/// cannot go on (the option is unknown, so where its value ends is unknown too).
fn read_option<'w>(
    scope: &[&'static Compiled],
    syntax: Syntax,
    r: &mut Reading<'w>,
    i: usize,
) -> Option<usize> {
    let words: &'w [String] = r.words;
    let w = words[i].as_str();
    let program = r.program;
    if let Some(long) = w.strip_prefix("--") {
        let (name, attached) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (long, None),
        };
        if let Some(opt) = find_long(scope, name) {
            return take(opt, attached, r, i);
        }
        if syntax == Syntax::Npm {
            r.add(
                Effect::Config(format!(
                    "npm reads `{w}` as a configuration setting (any `--name=value` is one)"
                )),
                Span::one(i),
            );
            return None;
        }
        if matches!(syntax, Syntax::Gnu | Syntax::GnuInOrder | Syntax::Git) {
            let candidates = abbreviated(scope, name);
            if !candidates.is_empty() {
                let names: Vec<String> = candidates
                    .iter()
                    .map(|o| format!("`{}`", o.display()))
                    .collect();
                r.unknown(
                    i,
                    format!(
                        "`--{name}` abbreviates {} ({program} accepts abbreviations); execgate approves only options written out in full",
                        names.join(" or ")
                    ),
                );
                for opt in &candidates {
                    if let Does::Danger(why) = opt.does {
                        r.add(
                            Effect::Danger(format!(
                                "`--{name}` (read as `{}`) {why}",
                                opt.display()
                            )),
                            Span::one(i),
                        );
                    }
                }
                // One candidate: the program reads it as that option, so go on reading
                // as it does; more: the program refuses the word.
                return match candidates.as_slice() {
                    [only] => take(only, attached, r, i),
                    _ => None,
                };
            }
        }
        r.unknown(
            i,
            format!("`--{name}` is not an option execgate knows for `{program}`"),
        );
        return None;
    }

    let body = &w[1..];
    if let Some(opt) = find_dash_long(scope, body) {
        return take(opt, None, r, i);
    }
    if body.bytes().all(|b| b.is_ascii_digit())
        && let Some(opt) = find_number(scope)
    {
        r.give(opt, Some(body), None, Span::one(i));
        return Some(i + 1);
    }
    for (j, c) in body.char_indices() {
        let Some(opt) = find_short(scope, c) else {
            let what = if body.len() == c.len_utf8() {
                format!("`-{c}`")
            } else {
                format!("`-{c}` (in `{w}`)")
            };
            r.unknown(
                i,
                format!("{what} is not an option execgate knows for `{program}`"),
            );
            return None;
        };
        let rest = &body[j + c.len_utf8()..];
        if opt.arg == Arg::No {
            if syntax == Syntax::Exact && !rest.is_empty() {
                r.unknown(
                    i,
                    format!("`{w}`: `{program}` does not read clustered options here"),
                );
                return None;
            }
            r.give(opt, None, None, Span::one(i));
            continue;
        }
        let attached = match rest {
            "" => None,
            // clap reads `-o=value` as the value `value`.
            _ if syntax == Syntax::Clap => Some(rest.strip_prefix('=').unwrap_or(rest)),
            _ => Some(rest),
        };
        return take(opt, attached, r, i);
    }
    Some(i + 1)
}

/// tar's old-style bundle at word `i`: each letter an option, each value the next
/// unused word after the bundle (`tar cfb a.tar 20`). The index of the next word.
fn read_bundle(scope: &[&'static Compiled], r: &mut Reading<'_>, i: usize) -> Option<usize> {
    let words = r.words;
    let mut next = i + 1;
    for c in words[i].chars() {
        let Some(opt) = find_short(scope, c) else {
            r.unknown(
                i,
                format!(
                    "`{c}` (in `{}`) is not an option execgate knows for `{}`",
                    words[i], r.program
                ),
            );
            return None;
        };
        match opt.arg {
            Arg::No | Arg::Opt | Arg::OptDigits => r.give(opt, None, None, Span::one(i)),
            Arg::Req => {
                let Some(v) = words.get(next) else {
                    r.unknown(i, format!("`{c}` (in `{}`) needs a value", words[i]));
                    return None;
                };
                r.give(
                    opt,
                    Some(v.as_str()),
                    None,
                    Span {
                        first: i,
                        last: next,
                    },
                );
                next += 1;
            }
            Arg::Two => {
                r.unknown(i, format!("`{c}` (in `{}`) takes two values", words[i]));
                return None;
            }
        }
    }
    Some(next)
}

/// Takes an option's value as its arity says; the index of the next word.
fn take<'w>(
    opt: &'static Opt,
    attached: Option<&'w str>,
    r: &mut Reading<'w>,
    i: usize,
) -> Option<usize> {
    let words: &'w [String] = r.words;
    let next = words.get(i + 1).map(String::as_str);
    match opt.arg {
        Arg::No => {
            if attached.is_some() {
                r.unknown(
                    i,
                    format!(
                        "`{}` takes no value, so `{}` is an error",
                        opt.display(),
                        words[i]
                    ),
                );
                return None;
            }
            r.give(opt, None, None, Span::one(i));
            Some(i + 1)
        }
        Arg::Opt => {
            r.give(opt, attached, None, Span::one(i));
            Some(i + 1)
        }
        Arg::OptDigits => match (attached, next) {
            (Some(v), _) => {
                r.give(opt, Some(v), None, Span::one(i));
                Some(i + 1)
            }
            (None, Some(v)) if v.starts_with(|c: char| c.is_ascii_digit()) => {
                r.give(
                    opt,
                    Some(v),
                    None,
                    Span {
                        first: i,
                        last: i + 1,
                    },
                );
                Some(i + 2)
            }
            (None, _) => {
                r.give(opt, None, None, Span::one(i));
                Some(i + 1)
            }
        },
        Arg::Req => match (attached, next) {
            (Some(v), _) => {
                r.give(opt, Some(v), None, Span::one(i));
                Some(i + 1)
            }
            (None, Some(v)) => {
                r.give(
                    opt,
                    Some(v),
                    None,
                    Span {
                        first: i,
                        last: i + 1,
                    },
                );
                Some(i + 2)
            }
            (None, None) => {
                r.unknown(i, format!("`{}` needs a value", opt.display()));
                None
            }
        },
        Arg::Two => {
            let (first, at) = match attached {
                Some(v) => (Some(v), i),
                None => (next, i + 1),
            };
            let second = words.get(at + 1).map(String::as_str);
            match (first, second) {
                (Some(a), Some(b)) => {
                    r.give(
                        opt,
                        Some(a),
                        Some(b),
                        Span {
                            first: i,
                            last: at + 1,
                        },
                    );
                    Some(at + 2)
                }
                _ => {
                    r.unknown(i, format!("`{}` needs two values", opt.display()));
                    None
                }
            }
        }
    }
}

/// A git revision rather than a path: `HEAD~1`, `main..HEAD`, `origin/main`, `v1.2`. A
/// word that starts like a path, climbs out with `..`, or names a blob (`HEAD:x`) is not.
pub fn is_revision(w: &str) -> bool {
    !w.is_empty()
        && !w.starts_with(['-', '.', '/', '~', ':'])
        && !w.contains(':')
        && !w
            .split('/')
            .any(|part| part == ".." || part == "." || part.is_empty())
}

/// Gives the operands their roles, and makes recursion read whole trees.
fn finish(r: &mut Reading<'_>, first: &'static [Role], rest: Role) {
    let recursing = r
        .given
        .iter()
        .find(|g| g.opt.does == Does::Recurses)
        .map(|g| g.at);
    let mut read_any = false;
    let operands = std::mem::take(&mut r.operands);
    for (n, &(i, w)) in operands.iter().enumerate() {
        let role = first.get(n).copied().unwrap_or(rest);
        let at = Span::one(i);
        // A command it starts takes this operand and the rest.
        if let Role::Runs(why) | Role::RunsScript(why) = role {
            let words: Vec<String> = operands[n..].iter().map(|(_, w)| w.to_string()).collect();
            let command = words.join(" ");
            let what = match role {
                Role::Runs(_) => Runs::Words(words),
                _ => Runs::Script(command.clone()),
            };
            let at = r.to_end(i);
            r.starts(
                format!("`{}` {why} `{command}`", r.command_path(None)),
                at,
                what,
            );
            break;
        }
        let effect = match role {
            Role::Text | Role::Passthrough => None,
            Role::Name if paths::is_path(w) => Some(Effect::Reads(w.to_string())),
            Role::Name => None,
            Role::Input | Role::Output if w == "-" => None,
            Role::Read | Role::Input => {
                read_any = true;
                Some(match recursing {
                    Some(_) => Effect::ReadsTree(w.to_string()),
                    None => Effect::Reads(w.to_string()),
                })
            }
            Role::Tree => {
                read_any = true;
                Some(Effect::ReadsTree(w.to_string()))
            }
            Role::Write | Role::Output => Some(Effect::Writes(w.to_string())),
            // After `--`, git reads every operand as a path; before it, a word git would
            // take for a path if no revision has its name is read as the path too when
            // its name is a secret's or a guard setting's (`git diff .env`, `git log -p
            // apps/api/.env`): judged by the path policy, not assumed a branch.
            Role::Revision
                if is_revision(w)
                    && r.dashdash.is_none_or(|d| i < d)
                    && !paths::is_secret(w)
                    && paths::guard_settings(w).is_none() =>
            {
                None
            }
            Role::Revision => Some(Effect::Reads(w.to_string())),
            Role::Code(why) => Some(Effect::Code(format!("{why} `{w}`"))),
            Role::Runs(_) | Role::RunsScript(_) => unreachable!("taken above"),
            Role::Project(why) => Some(Effect::Project(format!("{why} `{w}`"))),
            Role::Repo(why) => Some(Effect::Repo(format!("{why} `{w}`"))),
            Role::Config(why) => Some(Effect::Config(format!("`{w}` {why}"))),
            Role::Danger(why) => Some(Effect::Danger(format!("`{w}` {why}"))),
            Role::Nothing => Some(Effect::Unknown(format!(
                "`{w}`: execgate does not know what this operand is to `{}`",
                r.program
            ))),
        };
        if let Some(effect) = effect {
            r.add(effect, at);
        }
    }
    r.operands = operands;
    if let Some(at) = recursing
        && !read_any
        && !r.stopped
    {
        r.add(Effect::ReadsTree(".".into()), at);
    }
}
