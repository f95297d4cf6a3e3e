//! The patch format of the coding agents' `apply_patch` tools (Codex's, and Copilot
//! CLI's freeform one with GPT-5 models): which files a patch touches, so that a patch
//! is judged by the path policy as a write of each. Applying a patch is the agent's
//! business; execgate only reads where it writes.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: PATH        then lines that start with `+`
//! *** Delete File: PATH
//! *** Update File: PATH     then an optional `*** Move to: PATH`, then chunks:
//!                           `@@ context`, lines that start with ` `, `-` or `+`,
//!                           `*** End of File`
//! *** End Patch
//! ```
//!
//! Codex reads the text leniently: it trims it, trims each header line, and also takes
//! the patch wrapped in a heredoc (`<<'EOF'` … `EOF`). So does this reader, and it
//! takes no less: every line that, trimmed, starts with a file header names a path
//! touched, wherever it stands. What the reader cannot follow is an error, and the
//! caller puts it to a human.

/// The line that opens a patch.
pub const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// What one header says is done to a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Touch {
    Add(String),
    Delete(String),
    Update(String),
    /// The new name of the file updated before it: written too.
    MoveTo(String),
}

impl Touch {
    pub fn path(&self) -> &str {
        match self {
            Touch::Add(p) | Touch::Delete(p) | Touch::Update(p) | Touch::MoveTo(p) => p,
        }
    }
}

/// Whether `text` is meant as a patch: it opens with `*** Begin Patch`, bare or inside a
/// heredoc. What the agent would apply as a patch always is.
pub fn looks_like(text: &str) -> bool {
    let mut lines = text.trim().lines();
    match lines.next().map(str::trim) {
        Some(BEGIN) => true,
        Some(first) if is_heredoc_start(first) => lines.next().is_some_and(|l| l.trim() == BEGIN),
        _ => false,
    }
}

fn is_heredoc_start(line: &str) -> bool {
    matches!(line, "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
}

/// What the patch does to which files, in order; an error says where it could not be
/// read.
pub fn touches(text: &str) -> Result<Vec<Touch>, String> {
    let all: Vec<&str> = text.trim().lines().collect();
    let lines = match &all[..] {
        [first, inner @ .., last]
            if is_heredoc_start(first.trim()) && last.trim_end().ends_with("EOF") =>
        {
            inner
        }
        _ => &all[..],
    };
    let body = match lines {
        [first, body @ .., last] if first.trim() == BEGIN && last.trim() == END => body,
        [first, ..] if first.trim() == BEGIN => {
            return Err("the patch does not end with `*** End Patch`".into());
        }
        _ => return Err("the patch does not begin with `*** Begin Patch`".into()),
    };
    let mut touched = Vec::new();
    let mut i = 0;
    let at = |i: usize| format!("line {}", i + 2);
    while i < body.len() {
        let header = body[i].trim();
        i += 1;
        if header.is_empty() {
            continue;
        }
        if let Some(path) = header.strip_prefix(ADD) {
            touched.push(Touch::Add(named(path, &at(i - 1))?));
            while i < body.len() && body[i].starts_with('+') {
                i += 1;
            }
        } else if let Some(path) = header.strip_prefix(DELETE) {
            touched.push(Touch::Delete(named(path, &at(i - 1))?));
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            touched.push(Touch::Update(named(path, &at(i - 1))?));
            if let Some(to) = body.get(i).and_then(|l| l.trim().strip_prefix(MOVE_TO)) {
                touched.push(Touch::MoveTo(named(to, &at(i))?));
                i += 1;
            }
            let start = i;
            while i < body.len() && !body[i].starts_with('*') {
                let line = body[i];
                let change = line.is_empty()
                    || line.trim().is_empty()
                    || line.starts_with("@@")
                    || line.starts_with([' ', '+', '-']);
                if !change {
                    return Err(format!("{}: `{line}` is not a line of a change", at(i)));
                }
                i += 1;
            }
            if body.get(i).is_some_and(|l| l.trim() == END_OF_FILE) {
                i += 1;
            }
            if i == start {
                return Err(format!(
                    "{}: the update of `{path}` changes nothing",
                    at(start - 1)
                ));
            }
        } else {
            return Err(format!(
                "{}: `{header}` is not a file header (Add File, Delete File, Update File)",
                at(i - 1)
            ));
        }
    }
    if touched.is_empty() {
        return Err("the patch touches no file".into());
    }
    // Headers where the reader above saw content (a line the agent's own reader might
    // still take for one) name paths too: more paths judged is never less safe.
    for line in body {
        let line = line.trim();
        for (marker, touch) in [
            (ADD, Touch::Add as fn(String) -> Touch),
            (DELETE, Touch::Delete),
            (UPDATE, Touch::Update),
            (MOVE_TO, Touch::MoveTo),
        ] {
            if let Some(path) = line.strip_prefix(marker).filter(|p| !p.trim().is_empty()) {
                let t = touch(path.to_string());
                if !touched.contains(&t) {
                    touched.push(t);
                }
            }
        }
    }
    Ok(touched)
}

fn named(path: &str, at: &str) -> Result<String, String> {
    if path.trim().is_empty() {
        return Err(format!("{at}: a file header names no file"));
    }
    Ok(path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<String> {
        touches(text)
            .unwrap_or_else(|e| panic!("{e}: {text}"))
            .iter()
            .map(|t| t.path().to_string())
            .collect()
    }

    #[test]
    fn every_kind_of_hunk_names_its_file() {
        let patch = "*** Begin Patch\n\
            *** Add File: new.txt\n+one\n+two\n\
            *** Delete File: old.txt\n\
            *** Update File: src/a.rs\n@@ fn main\n-a\n+b\n c\n\
            *** Update File: src/b.rs\n*** Move to: src/c.rs\n@@\n-x\n+y\n*** End of File\n\
            *** End Patch\n";
        assert_eq!(
            touches(patch).unwrap(),
            vec![
                Touch::Add("new.txt".into()),
                Touch::Delete("old.txt".into()),
                Touch::Update("src/a.rs".into()),
                Touch::Update("src/b.rs".into()),
                Touch::MoveTo("src/c.rs".into()),
            ]
        );
    }

    #[test]
    fn codex_leniency_is_read_as_codex_reads_it() {
        // Padding around the text and its markers, and a heredoc around it.
        let padded = "\n  *** Begin Patch  \n  *** Add File: a b.txt\n+x\n *** End Patch \n\n";
        assert_eq!(paths(padded), ["a b.txt"]);
        let heredoc = "<<'EOF'\n*** Begin Patch\n*** Delete File: gone\n*** End Patch\nEOF\n";
        assert!(looks_like(heredoc));
        assert_eq!(paths(heredoc), ["gone"]);
        // Windows line ends.
        assert_eq!(
            paths("*** Begin Patch\r\n*** Add File: w.txt\r\n+x\r\n*** End Patch\r\n"),
            ["w.txt"]
        );
        // Blank lines between chunks of an update.
        assert_eq!(
            paths("*** Begin Patch\n*** Update File: u\n@@\n-a\n+b\n\n@@\n-c\n+d\n*** End Patch"),
            ["u"]
        );
    }

    #[test]
    fn a_header_hidden_where_content_goes_is_still_a_path() {
        // After an Add hunk's `+` lines, Codex trims the next line and reads it as a
        // header: so must execgate.
        let patch =
            "*** Begin Patch\n*** Add File: a\n+x\n   *** Add File: .env\n+K=1\n*** End Patch";
        assert_eq!(paths(patch), ["a", ".env"]);
        // Inside an update's context lines, a header-like line is content to Codex; it
        // is judged anyway.
        let patch = "*** Begin Patch\n*** Update File: a\n@@\n *** Delete File: .ssh/id_rsa\n-x\n+y\n*** End Patch";
        assert_eq!(paths(patch), ["a", ".ssh/id_rsa"]);
    }

    #[test]
    fn what_cannot_be_read_is_an_error() {
        for bad in [
            "",
            "hello",
            "*** Begin Patch",
            "*** Begin Patch\n*** End Patch",
            "*** Begin Patch\n*** Add File: a\n+x\n",
            "*** Add File: a\n+x\n*** End Patch",
            "*** Begin Patch\n*** Rename File: a\n*** End Patch",
            "*** Begin Patch\n*** Add File: \n+x\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\n*** End Patch",
            "*** Begin Patch\n*** Update File: a\nplain text\n*** End Patch",
        ] {
            assert!(touches(bad).is_err(), "{bad:?}");
        }
        assert!(!looks_like("hello\n*** Begin Patch"));
        assert!(looks_like(" *** Begin Patch\n"));
    }
}
