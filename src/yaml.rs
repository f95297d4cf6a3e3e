//! The YAML rendering of a run's result that tool fronts hand to a model (seed 002's
//! `execute_command` output): `exit_code`, `stdout`, `stderr`, then `timed_out` and
//! `error` when set.
//!
//! Strings are always double-quoted with escapes, never plain or block scalars: command
//! output can hold anything (`: `, leading spaces, `#`, control bytes), and a quoted
//! scalar is the one form no content can break out of.

use crate::model::ExecResult;

/// The result as a YAML mapping, one key per line.
pub fn result(r: &ExecResult) -> String {
    let mut out = String::new();
    match r.exit_code {
        Some(code) => out.push_str(&format!("exit_code: {code}\n")),
        None => out.push_str("exit_code: null\n"),
    }
    out.push_str(&format!("stdout: {}\n", quote(&r.stdout)));
    out.push_str(&format!("stderr: {}\n", quote(&r.stderr)));
    if let Some(signal) = r.signal {
        out.push_str(&format!("signal: {signal}\n"));
    }
    if r.timed_out {
        out.push_str("timed_out: true\n");
    }
    if r.stdout_truncated {
        out.push_str("stdout_truncated: true\n");
    }
    if r.stderr_truncated {
        out.push_str("stderr_truncated: true\n");
    }
    if let Some(error) = &r.error {
        out.push_str(&format!("error: {}\n", quote(error)));
    }
    out
}

/// A YAML double-quoted scalar.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            // YAML allows printable characters only; everything else is escaped.
            c if c.is_control() || matches!(c, '\u{FEFF}' | '\u{2028}' | '\u{2029}') => {
                let n = c as u32;
                if n <= 0xFF {
                    out.push_str(&format!("\\x{n:02x}"));
                } else {
                    out.push_str(&format!("\\u{n:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_seed_002_asks_for_and_nothing_breaks_out() {
        let r = ExecResult {
            exit_code: Some(0),
            stdout: "a: b\n  # not a comment\n\"quoted\" \\ \u{1b}[2J".into(),
            stderr: String::new(),
            ..ExecResult::default()
        };
        assert_eq!(
            result(&r),
            "exit_code: 0\nstdout: \"a: b\\n  # not a comment\\n\\\"quoted\\\" \\\\ \\x1b[2J\"\nstderr: \"\"\n"
        );
        let r = ExecResult {
            exit_code: None,
            signal: Some(15),
            timed_out: true,
            error: Some("timed out after 100 ms".into()),
            ..ExecResult::default()
        };
        let y = result(&r);
        assert!(
            y.starts_with(
                "exit_code: null\nstdout: \"\"\nstderr: \"\"\nsignal: 15\ntimed_out: true\n"
            ),
            "{y}"
        );
        assert!(y.ends_with("error: \"timed out after 100 ms\"\n"));
    }
}
