//! git's configuration files as git reads them: the syntax (`parse`), and a file with
//! everything it includes (`read`).

use std::path::{Path, PathBuf};

use super::files::Reader;

/// How deep includes may nest (git's own limit).
const MAX_INCLUDE_DEPTH: usize = 10;
/// Config files larger than this are not read: a human decides.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// One setting, as git names it (section and key lowercased), with its value (`None`
/// for a bare key, which is true) and the file it is in.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) name: String,
    pub(super) value: Option<String>,
    pub(super) file: PathBuf,
}

/// Reads one config file and, in order, what it includes (`include.path` and every
/// `includeIf.*.path`, whatever the condition: execgate does not evaluate them, so it
/// reads them all). A missing file is no error when `must_exist` is false, nor is a
/// missing included one (git skips both).
pub(super) fn read(
    r: &mut Reader,
    path: &Path,
    must_exist: bool,
    out: &mut Vec<Entry>,
) -> Result<(), String> {
    read_at(r, path, 0, must_exist, out)
}

fn read_at(
    r: &mut Reader,
    path: &Path,
    depth: usize,
    must_exist: bool,
    out: &mut Vec<Entry>,
) -> Result<(), String> {
    if depth > MAX_INCLUDE_DEPTH {
        return Err(format!(
            "includes nest deeper than {MAX_INCLUDE_DEPTH} at {}",
            path.display()
        ));
    }
    let Some(text) = r.text(path, MAX_CONFIG_BYTES)? else {
        if must_exist {
            return Err(format!("{} is missing", path.display()));
        }
        return Ok(());
    };
    let entries = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    for (name, value) in entries {
        if name == "include.path" || (name.starts_with("includeif.") && name.ends_with(".path")) {
            let Some(v) = value else {
                return Err(format!("{}: `{name}` without a value", path.display()));
            };
            if v.starts_with('~') || v.contains('$') {
                return Err(format!(
                    "{}: cannot resolve the include `{v}` (it depends on the home of whoever runs git)",
                    path.display()
                ));
            }
            let target = path
                .parent()
                .map_or_else(|| PathBuf::from(&v), |dir| dir.join(&v));
            read_at(r, &target, depth + 1, false, out)?;
            continue;
        }
        out.push(Entry {
            name,
            value,
            file: path.to_path_buf(),
        });
    }
    Ok(())
}

/// git's config syntax, read into `(name, value)` pairs in order: `[section]`, `[section
/// "subsection"]`, the old `[section.subsection]`, `key = value` and a bare `key`
/// (true), comments after `#` or `;`, quoted values with escapes, and lines continued
/// by a trailing backslash. Names come back as git spells them: section and key
/// lowercased, subsection as written.
pub fn parse(text: &str) -> Result<Vec<(String, Option<String>)>, String> {
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    let mut chars = text.chars().peekable();
    let mut line = 1;
    loop {
        // Skip blanks and empty lines.
        while let Some(&c) = chars.peek() {
            if c == '\n' {
                line += 1;
                chars.next();
            } else if c.is_whitespace() {
                chars.next();
            } else {
                break;
            }
        }
        let Some(&c) = chars.peek() else {
            return Ok(out);
        };
        match c {
            '#' | ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        line += 1;
                        break;
                    }
                }
            }
            '[' => {
                chars.next();
                let mut name = String::new();
                let mut sub: Option<String> = None;
                loop {
                    match chars.next() {
                        Some(']') => break,
                        Some('"') => {
                            let mut s = String::new();
                            loop {
                                match chars.next() {
                                    Some('\\') => s.extend(chars.next()),
                                    Some('"') => break,
                                    Some('\n') | None => {
                                        return Err(format!("line {line}: unclosed subsection"));
                                    }
                                    Some(c) => s.push(c),
                                }
                            }
                            sub = Some(s);
                        }
                        Some(c) if c == ' ' || c == '\t' => {}
                        Some(c)
                            if sub.is_none()
                                && (c.is_ascii_alphanumeric() || c == '-' || c == '.') =>
                        {
                            name.push(c)
                        }
                        _ => return Err(format!("line {line}: malformed section header")),
                    }
                }
                if name.is_empty() {
                    return Err(format!("line {line}: empty section name"));
                }
                let name = match (name.split_once('.'), sub) {
                    (_, Some(s)) => format!("{}.{s}", name.to_ascii_lowercase()),
                    // `[section.sub]` (deprecated) lowercases the subsection.
                    (Some(_), None) => name.to_ascii_lowercase(),
                    (None, None) => name.to_ascii_lowercase(),
                };
                section = Some(name);
            }
            c if c.is_ascii_alphabetic() => {
                let Some(sec) = &section else {
                    return Err(format!("line {line}: a key outside any section"));
                };
                let mut key = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        key.push(c.to_ascii_lowercase());
                        chars.next();
                    } else {
                        break;
                    }
                }
                while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
                    chars.next();
                }
                let value = match chars.peek() {
                    Some('=') => {
                        chars.next();
                        Some(value(&mut chars, &mut line)?)
                    }
                    Some('\n') | Some('#') | Some(';') | None => None,
                    Some(_) => return Err(format!("line {line}: expected `=` after `{key}`")),
                };
                if value.is_none() {
                    // The rest of the line is a comment or nothing.
                    for c in chars.by_ref() {
                        if c == '\n' {
                            line += 1;
                            break;
                        }
                    }
                }
                out.push((format!("{sec}.{key}"), value));
            }
            _ => return Err(format!("line {line}: unexpected `{c}`")),
        }
    }
}

/// A value to the end of its line: quotes group, `\"` `\\` `\n` `\t` `\b` escape, a
/// trailing backslash continues the line, `#` and `;` outside quotes start a comment.
fn value(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    line: &mut usize,
) -> Result<String, String> {
    let mut out = String::new();
    let mut quoted = false;
    let mut pending_space = String::new();
    let mut started = false;
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                *line += 1;
                if quoted {
                    return Err(format!("line {line}: unclosed quote"));
                }
                return Ok(out);
            }
            '"' => {
                quoted = !quoted;
                out.push_str(&pending_space);
                pending_space.clear();
                started = true;
            }
            '\\' => {
                let e = match chars.next() {
                    Some('\n') => {
                        *line += 1;
                        continue;
                    }
                    Some('"') => '"',
                    Some('\\') => '\\',
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some('b') => '\u{8}',
                    _ => return Err(format!("line {line}: bad escape in a value")),
                };
                out.push_str(&pending_space);
                pending_space.clear();
                out.push(e);
                started = true;
            }
            '#' | ';' if !quoted => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        *line += 1;
                        break;
                    }
                }
                return Ok(out);
            }
            c if (c == ' ' || c == '\t') && !quoted => {
                if started {
                    pending_space.push(c);
                }
            }
            c => {
                out.push_str(&pending_space);
                pending_space.clear();
                out.push(c);
                started = true;
            }
        }
    }
    if quoted {
        return Err(format!("line {line}: unclosed quote"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        parse(text).unwrap().into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn parses_git_config_syntax() {
        let text = "# c\n[core]\n\trepositoryformatversion = 0\n\tbare = false ; c\n\tfsmonitor\n[remote \"Origin\"]\n\turl = \"a b\" # x\n[Diff.Ev]\n\tTextConv = x\\\n y\n";
        let parsed = parse(text).unwrap();
        assert_eq!(
            parsed,
            [
                ("core.repositoryformatversion".into(), Some("0".into())),
                ("core.bare".into(), Some("false".into())),
                ("core.fsmonitor".into(), None),
                ("remote.Origin.url".into(), Some("a b".into())),
                ("diff.ev.textconv".into(), Some("x y".into())),
            ]
        );
        assert!(parse("[core\n").is_err());
        assert!(parse("key = 1\n").is_err());
        assert!(parse("[a]\nk = \"open\n").is_err());
        assert_eq!(names("[a \"b.c\"]\nk=1"), ["a.b.c.k"]);
    }
}
