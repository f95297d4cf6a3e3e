//! Text an agent wrote, made fit for a human to read: what cannot be seen made visible,
//! and long text clipped with a note of how much was left out.
//!
//! The command comes from the agent and may carry escape sequences or invisible
//! characters meant to make the approver see something other than what would run. One
//! function, [`hidden`], says which characters those are, by their Unicode properties
//! (the tables are ICU4X's, `icu_properties`, kept by the Unicode Consortium): every
//! front (console, chats, the CLI, the approvals page, which gets its text from the
//! daemon) shows what [`visible`] makes of a text, and policy makes a command that holds
//! any of them not plain.

use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
use icu_properties::{CodePointMapData, CodePointSetData};

/// Why a character is not shown as itself: what a human would not see, or would see as
/// something it is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hidden {
    /// General_Category Cc: C0 and C1 controls (terminal escapes, newlines, tabs).
    Control,
    /// Cf: format characters (bidirectional controls, zero-width joiners, tags, U+206A–206F,
    /// the musical beam controls U+1D173–1D17A).
    Format,
    /// Co: private use, drawn as whatever a font chooses.
    PrivateUse,
    /// Cn: unassigned code points and noncharacters, drawn as nothing or a box.
    Unassigned,
    /// Zl and Zp: U+2028 and U+2029, line breaks to some renderers and not to others.
    Separator,
    /// Default_Ignorable_Code_Point outside the categories above: variation selectors,
    /// Hangul fillers, U+034F and their kin, which renderers skip.
    Ignorable,
    /// A symbol, letter or space that draws as a blank: every space but U+0020
    /// (General_Category Zs) and the blank glyphs of [`BLANKS`].
    Blank,
}

impl std::fmt::Display for Hidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Hidden::Control => "control character",
            Hidden::Format => "invisible format character",
            Hidden::PrivateUse => "private-use character",
            Hidden::Unassigned => "unassigned code point",
            Hidden::Separator => "line or paragraph separator",
            Hidden::Ignorable => "invisible (default-ignorable) character",
            Hidden::Blank => "blank-looking character",
        })
    }
}

/// Characters whose glyph is empty but whose properties say "symbol" or "letter", so no
/// property finds them: U+2800 BRAILLE PATTERN BLANK and U+1D159 MUSICAL SYMBOL NULL
/// NOTEHEAD (So), U+3164, U+115F, U+1160 and U+FFA0, the Hangul fillers (Lo; also
/// Default_Ignorable, kept here so that the list of blanks is whole).
pub const BLANKS: &[char] = &[
    '\u{115F}',
    '\u{1160}',
    '\u{2800}',
    '\u{3164}',
    '\u{FFA0}',
    '\u{1D159}',
];

/// Whether, and why, `c` is not shown as itself: General_Category Cc, Cf, Co, Cn, Zl or
/// Zp; Default_Ignorable_Code_Point; a space other than U+0020; or one of [`BLANKS`].
pub fn hidden(c: char) -> Option<Hidden> {
    if c.is_ascii() {
        // The common case, without a table: only the C0 controls and DEL.
        return c.is_ascii_control().then_some(Hidden::Control);
    }
    let category = match CodePointMapData::<GeneralCategory>::new().get(c) {
        GeneralCategory::Control => Some(Hidden::Control),
        GeneralCategory::Format => Some(Hidden::Format),
        GeneralCategory::PrivateUse => Some(Hidden::PrivateUse),
        // Surrogates cannot be a `char`; the arm is for completeness.
        GeneralCategory::Unassigned | GeneralCategory::Surrogate => Some(Hidden::Unassigned),
        GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator => {
            Some(Hidden::Separator)
        }
        GeneralCategory::SpaceSeparator => Some(Hidden::Blank),
        _ => None,
    };
    category
        .or_else(|| BLANKS.contains(&c).then_some(Hidden::Blank))
        .or_else(|| {
            CodePointSetData::new::<DefaultIgnorableCodePoint>()
                .contains(c)
                .then_some(Hidden::Ignorable)
        })
}

/// Whether `c` is one of the characters [`visible`] escapes.
pub fn is_hidden(c: char) -> bool {
    hidden(c).is_some()
}

/// `s` with every [`hidden`] character replaced by a visible `\u{…}` escape (newlines and
/// tabs too: one request, one honest block of text).
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_hidden(c) {
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
        assert_eq!(
            visible("head -n 5 notes.txt\u{E0041}"),
            "head -n 5 notes.txt\\u{e0041}"
        );
    }

    /// The characters of issue 30 that no front escaped and policy judged plain, each
    /// range whole.
    #[test]
    fn every_invisible_range_is_hidden() {
        let ranges = [
            (0xE0000, 0xE007F), // tags
            (0xFE00, 0xFE0F),   // variation selectors
            (0xE0100, 0xE01EF), // variation selectors supplement
            (0x206A, 0x206F),   // deprecated format characters
            (0x1D173, 0x1D17A), // musical symbol beam and phrase controls
            (0x2800, 0x2800),   // braille blank
            (0x3164, 0x3164),   // Hangul filler
            (0x115F, 0x1160),   // Hangul choseong and jungseong fillers
            (0xFFA0, 0xFFA0),   // halfwidth Hangul filler
            (0x200B, 0x200F),   // zero widths and marks
            (0x202A, 0x202E),   // bidirectional embeddings and overrides
            (0x2066, 0x2069),   // bidirectional isolates
            (0x0080, 0x009F),   // C1 controls
            (0xE000, 0xE000),   // private use
            (0xF0000, 0xF0000), // supplementary private use
            (0x0378, 0x0378),   // unassigned
            (0xFFFF, 0xFFFF),   // noncharacter
            (0x2028, 0x2029),   // line and paragraph separators
            (0x00A0, 0x00A0),   // no-break space
            (0x3000, 0x3000),   // ideographic space
            (0x180E, 0x180E),   // Mongolian vowel separator
        ];
        for (first, last) in ranges {
            for u in first..=last {
                let c = char::from_u32(u).unwrap();
                assert!(is_hidden(c), "U+{u:04X} is not hidden");
                assert_eq!(visible(&c.to_string()), format!("\\u{{{u:x}}}"));
            }
        }
    }

    #[test]
    fn what_people_read_stays_as_it_is() {
        for text in [
            "git status -- 'a b.txt'",
            "café naïve Ωmega 日本語 한국어 ñ",
            "emoji 🔒✅",
            "~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./",
        ] {
            assert_eq!(visible(text), text);
        }
        assert_eq!(hidden('\u{e0041}'), Some(Hidden::Format));
        assert_eq!(hidden('\u{fe0f}'), Some(Hidden::Ignorable));
        assert_eq!(hidden('\u{2800}'), Some(Hidden::Blank));
    }

    #[test]
    fn clip_cuts_on_char_boundaries_and_says_how_much() {
        assert_eq!(clip_chars("ééééé", 3), "éé… (+3 more characters)");
        assert_eq!(clip_chars("abc", 3), "abc");
    }
}
