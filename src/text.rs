//! Text an agent wrote, made fit for a human to read: what cannot be seen made visible,
//! and long text clipped with a note of how much was left out.
//!
//! The command comes from the agent and may carry escape sequences or invisible
//! characters meant to make the approver see something other than what would run; every
//! front (console, chat, CLI) passes what it shows through [`visible`]. Policy uses
//! [`is_bidi_or_invisible`] too: a character the approver cannot see makes a command
//! not plain.

/// Bidirectional controls and characters that render as nothing.
pub fn is_bidi_or_invisible(c: char) -> bool {
    matches!(c as u32,
        0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069 | 0xFEFF | 0x00AD
        | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180E | 0x3164 | 0xFFA0)
}

/// Replaces control, bidirectional and invisible characters with visible `\u{…}` escapes
/// (newlines and tabs too: one request, one honest block of text).
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        // The same set that makes a command not plain: what the approver cannot see.
        if c.is_control() || is_bidi_or_invisible(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Cuts `s` to about `max` characters, on a character boundary, and says how many it
/// left out: nothing is cut without the reader knowing how much.
pub fn clip_chars(s: &str, max: usize) -> String {
    let total = s.chars().count();
    if total <= max {
        return s.to_string();
    }
    let kept = max.saturating_sub(1);
    let mut out: String = s.chars().take(kept).collect();
    out.push_str(&format!("… (+{} more characters)", total - kept));
    out
}

/// How long `s` is in UTF-16 code units: how Telegram counts a message's length.
pub fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// Cuts `s` on a character boundary to at most `max` UTF-16 units, marking a cut with
/// `…`: for limits counted the way Telegram counts (the caller says elsewhere what was
/// cut, e.g. the full command's length and hash).
pub fn clip_utf16(s: &str, max: usize) -> String {
    if utf16_len(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 1; // the ellipsis
    for c in s.chars() {
        used += c.len_utf16();
        if used > max {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_hide_nothing() {
        assert_eq!(visible("ls\u{1b}[2J"), "ls\\u{1b}[2J");
        assert_eq!(visible("a\nb"), "a\\u{a}b");
        assert_eq!(visible("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(visible("git status"), "git status");
    }

    #[test]
    fn clip_cuts_on_char_boundaries_and_says_how_much() {
        assert_eq!(clip_chars("ééééé", 3), "éé… (+3 more characters)");
        assert_eq!(clip_chars("abc", 3), "abc");
    }
}
