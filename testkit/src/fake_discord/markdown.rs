//! Message content as a Discord client shows it: markdown read the way Discord reads it
//! for the forms a bot's message uses — a backslash before any character that is not a
//! letter, a digit or a space shows that character alone; `**bold**`, `_italics_` and
//! `*italics*`; code spans (one or two backticks) and code blocks (three, with an
//! optional language line) show their inside as it is, backslashes included. Zero-width
//! spaces are dropped, as they show nothing.

/// `content` as the owner reads it.
pub fn plain(content: &str) -> String {
    let chars: Vec<char> = content.chars().collect();
    let mut out = String::with_capacity(content.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\\' && next.is_some_and(|n| !n.is_alphanumeric() && !n.is_whitespace()) {
            out.extend(next);
            i += 2;
        } else if starts(&chars, i, "```") {
            // A block: to the next fence; a first line that is one word is its language.
            let body_start = i + 3;
            let end = find(&chars, body_start, "```").unwrap_or(chars.len());
            let body: String = chars[body_start..end].iter().collect();
            let body = match body.split_once('\n') {
                Some((lang, rest)) if !lang.contains(' ') => rest.to_string(),
                _ => body,
            };
            out.push_str(&body.replace('\u{200B}', ""));
            i = (end + 3).min(chars.len());
        } else if c == '`' {
            let ticks = if next == Some('`') { 2 } else { 1 };
            let fence: String = "`".repeat(ticks);
            let body_start = i + ticks;
            match find(&chars, body_start, &fence) {
                Some(end) => {
                    let body: String = chars[body_start..end].iter().collect();
                    // Double-backtick spans lose one space at each end.
                    let body = if ticks == 2 {
                        body.strip_prefix(' ')
                            .unwrap_or(&body)
                            .strip_suffix(' ')
                            .map(str::to_string)
                            .unwrap_or_else(|| body.clone())
                    } else {
                        body
                    };
                    out.push_str(&body.replace('\u{200B}', ""));
                    i = end + ticks;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else if starts(&chars, i, "**") {
            i += 2;
        } else if matches!(c, '_' | '*' | '\u{200B}') {
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn starts(chars: &[char], at: usize, pat: &str) -> bool {
    let pat: Vec<char> = pat.chars().collect();
    chars.get(at..at + pat.len()) == Some(&pat[..])
}

fn find(chars: &[char], from: usize, pat: &str) -> Option<usize> {
    (from..chars.len()).find(|&i| starts(chars, i, pat))
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn reads_what_a_client_shows() {
        assert_eq!(plain("**Title**\nID\\: `` a1b2 ``"), "Title\nID: a1b2");
        assert_eq!(
            plain("```\nrm -rf `\u{200B}x`\u{200B}\n```"),
            "rm -rf `x`\n"
        );
        assert_eq!(
            plain("\\@everyone \\<\\@1\\> _by x_"),
            "@everyone <@1> by x"
        );
        assert_eq!(plain("a\\b `c\\d`"), "a\\b c\\d");
    }
}
