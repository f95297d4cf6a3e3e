//! A small format-preserving JSON editor: it reads a document into a tree that knows
//! the byte span of every value and member, and edits the text by splicing (insert a
//! member or an element, replace a value, remove one), so that every byte it does not
//! touch stays as it was: other keys, their order, comments, indentation, line ends.
//! Re-serialising the whole file would lose all of that, and the files edited here are
//! people's hand-kept settings.
//!
//! The reader is strict RFC 8259 JSON (no comments, no trailing commas, no BOM),
//! optionally with `//` and `/* */` comments counted as whitespace ([`Dialect`]). Errors
//! name a line and a column. An edit returns the new text; read it again before the next
//! edit, since every span after the edit has moved.
//!
//! New text follows the file's layout. A document whose root sits on one line is
//! compact, and what is added to it is written compact too; otherwise values are written
//! pretty, indented with the file's own unit (the first indented child found: two
//! spaces, four, a tab; two spaces when there is none), at the depth they are put.

use std::ops::Range;

use serde::Serialize;
use serde_json::Value;

/// How deep arrays and objects may nest: far beyond any settings file, and far short of
/// the reader's stack.
const MAX_DEPTH: usize = 256;

/// What counts as whitespace between tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// RFC 8259: space, tab, CR and LF only.
    Json,
    /// JSON plus `// line` and `/* block */` comments (what strip-json-comments accepts;
    /// trailing commas are still errors).
    JsonWithComments,
}

/// A value in the document and the bytes it occupies.
#[derive(Debug)]
pub struct Node {
    pub span: Range<usize>,
    pub kind: Kind,
}

#[derive(Debug)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    String(String),
    /// The number as serde_json reads it (null when it cannot: out of range).
    Number(Value),
    Bool(bool),
    Null,
}

/// One `"key": value` of an object.
#[derive(Debug)]
pub struct Member {
    pub key: String,
    /// Where the key's opening quote is: the member runs from here to its value's end.
    pub start: usize,
    pub value: Node,
}

/// Why a text is not a document; `line` and `column` count from 1, columns in
/// characters.
#[derive(Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl Node {
    /// The value of the member named `key` (the last one, as JSON readers take it, when
    /// the key repeats); None when absent or when this is not an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Object(members) => members
                .iter()
                .rev()
                .find(|m| m.key == key)
                .map(|m| &m.value),
            _ => None,
        }
    }

    /// The position of the member named `key` (the last one).
    pub fn position(&self, key: &str) -> Option<usize> {
        match &self.kind {
            Kind::Object(members) => members.iter().rposition(|m| m.key == key),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn elements(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// How many members or elements it has (0 for a scalar).
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Object(m) => m.len(),
            Kind::Array(e) => e.len(),
            _ => 0,
        }
    }

    /// The value as serde_json sees it, for comparing with a value to be written.
    pub fn to_value(&self) -> Value {
        match &self.kind {
            Kind::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|m| (m.key.clone(), m.value.to_value()))
                    .collect(),
            ),
            Kind::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Kind::String(s) => Value::String(s.clone()),
            Kind::Number(n) => n.clone(),
            Kind::Bool(b) => Value::Bool(*b),
            Kind::Null => Value::Null,
        }
    }

    /// The spans of its children: members from the key's quote, elements as they are.
    fn child_spans(&self) -> Vec<Range<usize>> {
        match &self.kind {
            Kind::Object(members) => members.iter().map(|m| m.start..m.value.span.end).collect(),
            Kind::Array(items) => items.iter().map(|n| n.span.clone()).collect(),
            _ => Vec::new(),
        }
    }
}

/// A document read from `text`.
pub struct Doc<'a> {
    pub text: &'a str,
    pub root: Node,
    layout: Layout,
}

/// How added text is laid out, as the file already is.
struct Layout {
    /// Whether the document spreads over lines (else it is written compact).
    pretty: bool,
    /// One level of indentation.
    unit: String,
}

impl<'a> Doc<'a> {
    pub fn parse(text: &'a str, dialect: Dialect) -> Result<Doc<'a>, ParseError> {
        let mut reader = Reader {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            dialect,
            depth: 0,
        };
        let root = reader.value()?;
        reader.skip_space()?;
        if reader.pos < text.len() {
            return Err(reader.error_at(reader.pos, "more text after the JSON value"));
        }
        let layout = Layout::of(text, &root);
        Ok(Doc { text, root, layout })
    }

    /// The text with `"key": value` added as `object`'s last member.
    pub fn insert_member<T: Serialize>(&self, object: &Node, key: &str, value: &T) -> String {
        debug_assert!(matches!(object.kind, Kind::Object(_)));
        let key = serde_json::to_string(key).expect("a string serialises");
        self.insert(
            object,
            |v| format!("{key}:{}{v}", self.colon_space()),
            value,
        )
    }

    /// The text with `value` added as `array`'s last element.
    pub fn push_element<T: Serialize>(&self, array: &Node, value: &T) -> String {
        debug_assert!(matches!(array.kind, Kind::Array(_)));
        self.insert(array, |v| v, value)
    }

    /// The text with `node` replaced by `value`.
    pub fn replace<T: Serialize>(&self, node: &Node, value: &T) -> String {
        let written = self.render(value, indent_of_line(self.text, node.span.start));
        splice(self.text, &[(node.span.clone(), &written)])
    }

    /// The text without `container`'s child number `index` (a member or an element), and
    /// without one comma that separated it from its neighbours: its own for all but the
    /// last child (with comments between it and that comma), the one before for the
    /// last (with the line break and indentation before the child, so that removing
    /// what [`insert_member`](Self::insert_member) or
    /// [`push_element`](Self::push_element) added gives back the same bytes). Other
    /// comments stay.
    pub fn remove(&self, container: &Node, index: usize) -> String {
        let text = self.text;
        let spans = container.child_spans();
        let (open, close) = (container.span.start + 1, container.span.end - 1);
        let child = &spans[index];
        if spans.len() == 1 {
            // The only child: what is left is `{}` or `[]`.
            return splice(text, &[(open..close, "")]);
        }
        if index + 1 < spans.len() {
            // Up to what follows its comma.
            let comma = after_space(text, child.end).0;
            let rest = &text[comma + 1..];
            let next = comma + 1 + (rest.len() - rest.trim_start_matches(JSON_SPACE).len());
            return splice(text, &[(child.start..next, "")]);
        }
        let comma = after_space(text, spans[index - 1].end).0;
        let (mut from, line_comment) = after_space(text, comma + 1);
        from = end_of_content(text, comma + 1, from.min(child.start));
        let rest_of_line = text[child.end..].split('\n').next().unwrap_or_default();
        if line_comment && !rest_of_line.trim_matches(JSON_SPACE).is_empty() {
            // A line comment ends where the child's line starts; something after the
            // child on that line must not join the comment.
            from += 1;
        }
        splice(text, &[(comma..comma + 1, ""), (from..child.end, "")])
    }

    /// Adds `value` (shaped into a member or an element by `child`) after `container`'s
    /// last child, before any whitespace and comments that lead to its closing bracket.
    fn insert<T: Serialize>(
        &self,
        container: &Node,
        child: impl Fn(String) -> String,
        value: &T,
    ) -> String {
        let text = self.text;
        let spans = container.child_spans();
        let (open, close) = (container.span.start + 1, container.span.end - 1);
        let tail = end_of_content(text, open, close);
        let one_line = !text[container.span.clone()].contains('\n');
        if !self.layout.pretty || (one_line && !spans.is_empty()) {
            // On one line: `[a]` → `[a,b]`, `{}` → `{"k":v}`; after the comma a space
            // when the container (or, with one child, the file) has one there.
            let comma = match &spans[..] {
                [a, b, ..] if text[a.end..b.start].contains(", ") => ", ",
                [_] if self.layout.pretty => ", ",
                _ => ",",
            };
            let added = child(self.render_compact(value));
            return match spans.last() {
                None => splice(text, &[(tail..tail, &added)]),
                Some(last) => splice(text, &[(last.end..last.end, comma), (tail..tail, &added)]),
            };
        }
        let outer = indent_of_line(text, container.span.start);
        let inner = match spans.first() {
            Some(first) if on_own_line(text, first.start) => {
                indent_of_line(text, first.start).to_string()
            }
            _ => format!("{outer}{}", self.layout.unit),
        };
        let added = format!("\n{inner}{}", child(self.render(value, &inner)));
        match spans.last() {
            Some(last) => splice(text, &[(last.end..last.end, ","), (tail..tail, &added)]),
            None if tail == open => {
                // Empty (whitespace at most): the child on its own line, the bracket on
                // the next.
                splice(text, &[(open..close, &format!("{added}\n{outer}"))])
            }
            None if text[tail..close].contains('\n') => {
                // Empty but for comments: after them.
                splice(text, &[(tail..tail, &added)])
            }
            None => {
                // The same, and the bracket, which shared the comments' line, on one of
                // its own.
                splice(text, &[(tail..close, &format!("{added}\n{outer}"))])
            }
        }
    }

    fn colon_space(&self) -> &'static str {
        if self.layout.pretty { " " } else { "" }
    }

    /// `value` as the file would have it, its lines after the first indented by `base`.
    fn render<T: Serialize>(&self, value: &T, base: &str) -> String {
        if !self.layout.pretty {
            return self.render_compact(value);
        }
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.layout.unit.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        value
            .serialize(&mut serializer)
            .expect("JSON values serialise");
        // serde_json escapes newlines inside strings, so every newline is between tokens.
        String::from_utf8(out)
            .expect("serde_json writes UTF-8")
            .replace('\n', &format!("\n{base}"))
    }

    fn render_compact<T: Serialize>(&self, value: &T) -> String {
        serde_json::to_string(value).expect("JSON values serialise")
    }
}

impl Layout {
    fn of(text: &str, root: &Node) -> Layout {
        let pretty = root.len() == 0 || text[root.span.clone()].contains('\n');
        Layout {
            pretty,
            unit: indent_unit(text, root).unwrap_or_else(|| "  ".into()),
        }
    }
}

/// The indentation one level adds in this file: what the first child found on a line of
/// its own has beyond the line its container opens on.
fn indent_unit(text: &str, node: &Node) -> Option<String> {
    let spans = node.child_spans();
    if let Some(first) = spans.first()
        && on_own_line(text, first.start)
    {
        let outer = indent_of_line(text, node.span.start);
        let inner = indent_of_line(text, first.start);
        if let Some(unit) = inner.strip_prefix(outer).filter(|u| !u.is_empty()) {
            return Some(unit.to_string());
        }
    }
    let children: Vec<&Node> = match &node.kind {
        Kind::Object(members) => members.iter().map(|m| &m.value).collect(),
        Kind::Array(items) => items.iter().collect(),
        _ => Vec::new(),
    };
    children.into_iter().find_map(|c| indent_unit(text, c))
}

/// The spaces and tabs that start the line `pos` is on.
fn indent_of_line(text: &str, pos: usize) -> &str {
    let start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    let width = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..width]
}

/// Whether only spaces and tabs come before `pos` on its line.
fn on_own_line(text: &str, pos: usize) -> bool {
    let start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    text[start..pos].bytes().all(|b| b == b' ' || b == b'\t')
}

/// Where the content between `open` and `close` ends: after its last byte that is not
/// whitespace (a value or a comment); `open` when there is none.
fn end_of_content(text: &str, open: usize, close: usize) -> usize {
    open + text[open..close].trim_end_matches(JSON_SPACE).len()
}

/// What JSON counts as whitespace.
const JSON_SPACE: [char; 4] = [' ', '\t', '\n', '\r'];

/// Where the next token after `pos` is: past whitespace and comments (the text is a
/// document already read, so a `/` there starts a comment); and whether the last thing
/// passed was a line comment.
fn after_space(text: &str, mut pos: usize) -> (usize, bool) {
    let bytes = text.as_bytes();
    let mut line_comment = false;
    loop {
        match bytes.get(pos) {
            Some(b' ' | b'\t' | b'\n' | b'\r') => pos += 1,
            Some(b'/') if bytes.get(pos + 1) == Some(&b'/') => {
                pos = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
                line_comment = true;
            }
            Some(b'/') => {
                pos = text[pos + 2..]
                    .find("*/")
                    .map_or(text.len(), |i| pos + 2 + i + 2);
                line_comment = false;
            }
            _ => return (pos, line_comment),
        }
    }
}

/// `text` with each range replaced by its string; the ranges are in order and do not
/// overlap (two may start at the same place: both insertions happen, in order).
fn splice(text: &str, edits: &[(Range<usize>, &str)]) -> String {
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.1.len()).sum::<usize>());
    let mut at = 0;
    for (range, with) in edits {
        out.push_str(&text[at..range.start]);
        out.push_str(with);
        at = range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The recursive-descent reader; `pos` is a byte offset into `text`.
struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    dialect: Dialect,
    depth: usize,
}

impl Reader<'_> {
    fn error_at(&self, pos: usize, message: &str) -> ParseError {
        let before = &self.text[..pos];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        ParseError {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Skips whitespace, and comments where the dialect allows them.
    fn skip_space(&mut self) -> Result<(), ParseError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') if matches!(self.bytes.get(self.pos + 1), Some(b'/' | b'*')) => {
                    if self.dialect == Dialect::Json {
                        return Err(self.error_at(self.pos, "a comment, which JSON does not allow"));
                    }
                    let start = self.pos;
                    if self.bytes[self.pos + 1] == b'/' {
                        self.pos = self.text[start..]
                            .find('\n')
                            .map_or(self.text.len(), |i| start + i);
                    } else {
                        match self.text[start + 2..].find("*/") {
                            Some(i) => self.pos = start + 2 + i + 2,
                            None => return Err(self.error_at(start, "a comment that never ends")),
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Node, ParseError> {
        self.skip_space()?;
        let start = self.pos;
        let kind = match self.peek() {
            None => return Err(self.error_at(start, "the text ends where a value should be")),
            Some(b'{') => self.nested(Self::object)?,
            Some(b'[') => self.nested(Self::array)?,
            Some(b'"') => Kind::String(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') => self.literal("true", Kind::Bool(true))?,
            Some(b'f') => self.literal("false", Kind::Bool(false))?,
            Some(b'n') => self.literal("null", Kind::Null)?,
            Some(_) => return Err(self.unexpected("a value")),
        };
        Ok(Node {
            span: start..self.pos,
            kind,
        })
    }

    fn nested(
        &mut self,
        read: fn(&mut Self) -> Result<Kind, ParseError>,
    ) -> Result<Kind, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error_at(self.pos, "arrays and objects nested too deeply"));
        }
        let kind = read(self)?;
        self.depth -= 1;
        Ok(kind)
    }

    /// "unexpected X where WANTED should be", X shown as the character it is.
    fn unexpected(&self, wanted: &str) -> ParseError {
        let found = match self.text[self.pos..].chars().next() {
            None => {
                return self.error_at(self.pos, &format!("the text ends where {wanted} should be"));
            }
            Some(c) if c.is_control() || c == '\u{feff}' => format!("{:?}", c),
            Some(c) => format!("`{c}`"),
        };
        self.error_at(self.pos, &format!("{found} where {wanted} should be"))
    }

    fn object(&mut self) -> Result<Kind, ParseError> {
        self.pos += 1;
        let mut members = Vec::new();
        self.skip_space()?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Kind::Object(members));
        }
        loop {
            self.skip_space()?;
            if self.peek() != Some(b'"') {
                let wanted = if members.is_empty() {
                    "a member name in double quotes"
                } else {
                    "a member name in double quotes (a trailing comma?)"
                };
                return Err(self.unexpected(wanted));
            }
            let start = self.pos;
            let key = self.string()?;
            self.skip_space()?;
            if self.peek() != Some(b':') {
                return Err(self.unexpected("`:`"));
            }
            self.pos += 1;
            let value = self.value()?;
            members.push(Member { key, start, value });
            self.skip_space()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Kind::Object(members));
                }
                _ => return Err(self.unexpected("`,` or `}`")),
            }
        }
    }

    fn array(&mut self) -> Result<Kind, ParseError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_space()?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Kind::Array(items));
        }
        loop {
            self.skip_space()?;
            if self.peek() == Some(b']') {
                return Err(self.unexpected("a value (a trailing comma?)"));
            }
            items.push(self.value()?);
            self.skip_space()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Kind::Array(items));
                }
                _ => return Err(self.unexpected("`,` or `]`")),
            }
        }
    }

    /// A string from its opening quote; returns it decoded.
    fn string(&mut self) -> Result<String, ParseError> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        let mut run = self.pos;
        loop {
            match self.peek() {
                None => return Err(self.error_at(open, "a string that never ends")),
                Some(b'"') => {
                    out.push_str(&self.text[run..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    out.push_str(&self.text[run..self.pos]);
                    self.escape(&mut out)?;
                    run = self.pos;
                }
                Some(b) if b < 0x20 => {
                    return Err(self.error_at(
                        self.pos,
                        "a control character inside a string (write it as an escape)",
                    ));
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// One escape, from its backslash.
    fn escape(&mut self, out: &mut String) -> Result<(), ParseError> {
        let at = self.pos;
        let c = match self.bytes.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let high = self.hex4(at + 2)?;
                self.pos = at + 6;
                let code = if (0xD800..0xDC00).contains(&high)
                    && self.text[self.pos..].starts_with("\\u")
                    && let Ok(low) = self.hex4(self.pos + 2)
                    && (0xDC00..0xE000).contains(&low)
                {
                    self.pos += 6;
                    0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    high
                };
                // A lone surrogate is not a character (JavaScript keeps it, serde_json
                // refuses it): it stands for itself here as U+FFFD, and its bytes in the
                // file stay as they are.
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                return Ok(());
            }
            _ => return Err(self.error_at(at, "an escape JSON does not have")),
        };
        out.push(c);
        self.pos = at + 2;
        Ok(())
    }

    fn hex4(&self, at: usize) -> Result<u32, ParseError> {
        self.bytes
            .get(at..at + 4)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())
            .ok_or_else(|| self.error_at(at.saturating_sub(2), "`\\u` needs four hex digits"))
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<Kind, ParseError> {
        let start = self.pos;
        let digits = |r: &mut Self| {
            let from = r.pos;
            while r.peek().is_some_and(|b| b.is_ascii_digit()) {
                r.pos += 1;
            }
            r.pos > from
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.error_at(start, "a number with no digits after `-`")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !digits(self) {
                return Err(self.error_at(start, "a number with no digits after `.`"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if !digits(self) {
                return Err(self.error_at(start, "a number with no digits in its exponent"));
            }
        }
        if self.peek().is_some_and(|b| b.is_ascii_digit()) {
            return Err(self.error_at(start, "a number with a leading zero"));
        }
        let text = &self.text[start..self.pos];
        Ok(Kind::Number(
            serde_json::from_str(text).unwrap_or(Value::Null),
        ))
    }

    fn literal(&mut self, word: &str, kind: Kind) -> Result<Kind, ParseError> {
        if !self.text[self.pos..].starts_with(word) {
            return Err(self.unexpected("a value"));
        }
        self.pos += word.len();
        Ok(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(text: &str) -> Doc<'_> {
        Doc::parse(text, Dialect::Json).unwrap_or_else(|e| panic!("{e} in {text:?}"))
    }

    fn jsonc(text: &str) -> Doc<'_> {
        Doc::parse(text, Dialect::JsonWithComments).unwrap_or_else(|e| panic!("{e} in {text:?}"))
    }

    /// The error for `text`, as "line L, column C: message".
    fn error(text: &str) -> String {
        match Doc::parse(text, Dialect::Json) {
            Ok(_) => panic!("{text:?} was read"),
            Err(e) => e.to_string(),
        }
    }

    /// The text after an edit is a document whose value is `expected`.
    fn reads_as(text: &str, expected: Value) {
        assert_eq!(doc(text).root.to_value(), expected, "{text}");
    }

    #[test]
    fn values_are_read_with_their_spans() {
        let text = r#" {"a": [1, -2.5e3, true, null], "b": {"c": "d"}} "#;
        let d = doc(text);
        assert_eq!(&text[d.root.span.clone()], text.trim());
        let a = d.root.get("a").unwrap();
        assert_eq!(&text[a.span.clone()], "[1, -2.5e3, true, null]");
        let items = a.elements().unwrap();
        assert_eq!(&text[items[1].span.clone()], "-2.5e3");
        assert_eq!(items[1].to_value(), json!(-2500.0));
        let members = d.root.members().unwrap();
        assert_eq!(
            &text[members[1].start..members[1].value.span.end],
            r#""b": {"c": "d"}"#
        );
        assert_eq!(
            d.root.get("b").unwrap().get("c").unwrap().as_str(),
            Some("d")
        );
        reads_as(
            text,
            json!({"a": [1, -2500.0, true, null], "b": {"c": "d"}}),
        );
    }

    #[test]
    fn strings_are_decoded() {
        let text = r#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "é😀", "{[,]}:", "\ud800x"]"#;
        let d = doc(text);
        let s: Vec<&str> = d
            .root
            .elements()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert_eq!(
            s,
            [
                "a\"b\\c/d\u{8}\u{c}\n\r\t",
                "é€",
                "😀",
                "é😀",
                "{[,]}:",
                "\u{fffd}x"
            ]
        );
    }

    #[test]
    fn a_repeated_key_is_read_as_its_last_value() {
        let d = doc(r#"{"a": 1, "a": 2}"#);
        assert_eq!(d.root.get("a").unwrap().to_value(), json!(2));
        assert_eq!(d.root.position("a"), Some(1));
    }

    #[test]
    fn what_is_not_json_is_refused_with_its_place() {
        let cases = [
            (
                "",
                "line 1, column 1: the text ends where a value should be",
            ),
            (
                "{",
                "line 1, column 2: the text ends where a member name in double quotes should be",
            ),
            (
                "{\"a\": 1,}",
                "line 1, column 9: `}` where a member name in double quotes (a trailing comma?) should be",
            ),
            (
                "[1,\n 2,\n]",
                "line 3, column 1: `]` where a value (a trailing comma?) should be",
            ),
            (
                "{\n  // note\n  \"a\": 1\n}",
                "line 2, column 3: a comment, which JSON does not allow",
            ),
            (
                "[1] [2]",
                "line 1, column 5: more text after the JSON value",
            ),
            ("{\"a\" 1}", "line 1, column 6: `1` where `:` should be"),
            (
                "{\"a\": 1 \"b\": 2}",
                "line 1, column 9: `\"` where `,` or `}` should be",
            ),
            ("[01]", "line 1, column 2: a number with a leading zero"),
            (
                "[1.]",
                "line 1, column 2: a number with no digits after `.`",
            ),
            (
                "[1e+]",
                "line 1, column 2: a number with no digits in its exponent",
            ),
            ("[-]", "line 1, column 2: a number with no digits after `-`"),
            (
                "[\"a\\x\"]",
                "line 1, column 4: an escape JSON does not have",
            ),
            (
                "[\"\\u12\"]",
                "line 1, column 3: `\\u` needs four hex digits",
            ),
            (
                "[\"a\tb\"]",
                "line 1, column 4: a control character inside a string (write it as an escape)",
            ),
            ("[\"abc", "line 1, column 2: a string that never ends"),
            (
                "\u{feff}{}",
                "line 1, column 1: '\\u{feff}' where a value should be",
            ),
            (
                "{'a': 1}",
                "line 1, column 2: `'` where a member name in double quotes should be",
            ),
            ("[tru]", "line 1, column 2: `t` where a value should be"),
            ("[NaN]", "line 1, column 2: `N` where a value should be"),
            (
                "{\"é\": [1,\n  2 x]}",
                "line 2, column 5: `x` where `,` or `]` should be",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(error(text), expected, "{text:?}");
        }
    }

    #[test]
    fn nesting_has_a_limit() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(error(&deep).contains("nested too deeply"));
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        doc(&fine);
    }

    #[test]
    fn comments_are_whitespace_in_the_comment_dialect() {
        let text =
            "// head\n{ /* a */ \"a\": 1, // one\n  \"b\": \"//not a comment\" /* b */ }\n// tail";
        let d = jsonc(text);
        assert_eq!(d.root.to_value(), json!({"a": 1, "b": "//not a comment"}));
        let never = Doc::parse("{} /* open", Dialect::JsonWithComments)
            .err()
            .unwrap();
        assert_eq!(
            never.to_string(),
            "line 1, column 4: a comment that never ends"
        );
        // Trailing commas stay errors.
        assert!(Doc::parse("[1,]", Dialect::JsonWithComments).is_err());
    }

    #[test]
    fn a_member_goes_into_an_empty_object_on_lines_of_its_own() {
        let d = doc("{}");
        assert_eq!(d.insert_member(&d.root, "a", &json!(1)), "{\n  \"a\": 1\n}");
        let d = doc("{ \n }\n");
        assert_eq!(
            d.insert_member(&d.root, "a", &json!([1])),
            "{\n  \"a\": [\n    1\n  ]\n}\n"
        );
    }

    #[test]
    fn a_member_goes_last_with_the_files_indentation() {
        for unit in ["  ", "    ", "\t"] {
            let text = format!("{{\n{unit}\"x\": {{\n{unit}{unit}\"y\": true\n{unit}}}\n}}\n");
            let d = doc(&text);
            let x = d.root.get("x").unwrap();
            let out = d.insert_member(x, "z", &json!({"k": [1, 2]}));
            let u = unit;
            assert_eq!(
                out,
                format!(
                    "{{\n{u}\"x\": {{\n{u}{u}\"y\": true,\n{u}{u}\"z\": {{\n{u}{u}{u}\"k\": [\n{u}{u}{u}{u}1,\n{u}{u}{u}{u}2\n{u}{u}{u}]\n{u}{u}}}\n{u}}}\n}}\n"
                ),
                "unit {unit:?}"
            );
            reads_as(&out, json!({"x": {"y": true, "z": {"k": [1, 2]}}}));
        }
    }

    #[test]
    fn an_empty_container_inside_takes_the_depth_it_is_at() {
        let text = "{\n    \"hooks\": {\n        \"E\": []\n    }\n}";
        let d = doc(text);
        let e = d.root.get("hooks").unwrap().get("E").unwrap();
        let out = d.push_element(e, &json!({"m": "x"}));
        assert_eq!(
            out,
            "{\n    \"hooks\": {\n        \"E\": [\n            {\n                \"m\": \"x\"\n            }\n        ]\n    }\n}"
        );
    }

    #[test]
    fn an_element_goes_last_in_a_non_empty_array() {
        let text = "{\n  \"a\": [\n    {\"b\": \"}]\"},\n    2\n  ],\n  \"z\": \"é😀\"\n}";
        let d = doc(text);
        let a = d.root.get("a").unwrap();
        let out = d.push_element(a, &json!("new"));
        assert_eq!(
            out,
            "{\n  \"a\": [\n    {\"b\": \"}]\"},\n    2,\n    \"new\"\n  ],\n  \"z\": \"é😀\"\n}"
        );
    }

    #[test]
    fn a_one_line_container_or_file_stays_on_one_line() {
        let d = doc(r#"{"a":[1,2],"b":{}}"#);
        let a = d.root.get("a").unwrap();
        assert_eq!(
            d.push_element(a, &json!({"x": 1})),
            r#"{"a":[1,2,{"x":1}],"b":{}}"#
        );
        let b = d.root.get("b").unwrap();
        assert_eq!(
            d.insert_member(b, "k", &json!([true])),
            r#"{"a":[1,2],"b":{"k":[true]}}"#
        );
        assert_eq!(
            d.insert_member(&d.root, "c", &json!(null)),
            r#"{"a":[1,2],"b":{},"c":null}"#
        );
        // In a file spread over lines, an inline array keeps its own comma style.
        let d = doc("{\n  \"a\": [1, 2]\n}");
        let a = d.root.get("a").unwrap();
        assert_eq!(d.push_element(a, &json!(3)), "{\n  \"a\": [1, 2, 3]\n}");
    }

    #[test]
    fn a_value_is_replaced_at_its_own_indentation() {
        let text = "{\n  \"hooks\": [\n    {\"old\": 1},\n    \"keep\"\n  ]\n}";
        let d = doc(text);
        let first = &d.root.get("hooks").unwrap().elements().unwrap()[0];
        let out = d.replace(first, &json!({"new": [1]}));
        assert_eq!(
            out,
            "{\n  \"hooks\": [\n    {\n      \"new\": [\n        1\n      ]\n    },\n    \"keep\"\n  ]\n}"
        );
    }

    #[test]
    fn removing_takes_one_comma_with_it() {
        let text = "[\n  1,\n  2,\n  3\n]";
        let d = doc(text);
        assert_eq!(d.remove(&d.root, 0), "[\n  2,\n  3\n]");
        assert_eq!(d.remove(&d.root, 1), "[\n  1,\n  3\n]");
        assert_eq!(d.remove(&d.root, 2), "[\n  1,\n  2\n]");
        let d = doc("[\n  \"only\"\n]");
        assert_eq!(d.remove(&d.root, 0), "[]");
        let text = r#"{"a": 1, "b": {"c": ","}, "d": [3]}"#;
        let d = doc(text);
        assert_eq!(d.remove(&d.root, 0), r#"{"b": {"c": ","}, "d": [3]}"#);
        assert_eq!(d.remove(&d.root, 1), r#"{"a": 1, "d": [3]}"#);
        assert_eq!(d.remove(&d.root, 2), r#"{"a": 1, "b": {"c": ","}}"#);
    }

    /// Adding to a non-empty container and removing what was added gives back the same
    /// bytes; every byte outside the added text is the original's.
    #[test]
    fn an_insertion_undone_gives_back_every_byte() {
        let texts = [
            "{\n  \"x\": 1\n}\n",
            "{\r\n\t\"x\": [\"{\", \"]\"],\r\n\t\"y\": \"\\u00e9 é\"\r\n}",
            "{\"x\":1}",
            "  {\n      \"x\" :   1  ,   \"y\":{ }\n}  \n",
        ];
        for text in texts {
            let d = doc(text);
            let value = json!({"k": ["v", {"w": 2}]});
            let out = d.insert_member(&d.root, "new", &value);
            let after = doc(&out);
            let n = after.root.len();
            assert_eq!(after.root.get("new").unwrap().to_value(), value);
            assert_eq!(after.remove(&after.root, n - 1), text, "{out:?}");
            // And the added text is all that differs.
            let added = out.len() - text.len();
            let at = common_prefix(text, &out);
            assert_eq!(format!("{}{}", &out[..at], &out[at + added..]), text);
        }
    }

    /// How many leading bytes `a` and `b` share.
    fn common_prefix(a: &str, b: &str) -> usize {
        a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
    }

    #[test]
    fn removing_keeps_the_comments_around() {
        let text = "[\n  1, // one\n  2 /* two */,\n  3 /* , */ , 4\n]";
        let d = jsonc(text);
        let cases = [
            "[\n  // one\n  2 /* two */,\n  3 /* , */ , 4\n]",
            "[\n  1, // one\n  3 /* , */ , 4\n]",
            "[\n  1, // one\n  2 /* two */,\n  4\n]",
            "[\n  1, // one\n  2 /* two */,\n  3 /* , */ \n]",
        ];
        for (i, expected) in cases.into_iter().enumerate() {
            assert_eq!(d.remove(&d.root, i), expected, "child {i}");
        }
        // The last child after a line comment: the comment keeps its line end.
        let cases = [
            ("[1, // one\n  2]", "[1 // one\n]"),
            ("[1, // one\n  2 // two\n]", "[1 // one\n // two\n]"),
            ("[1, // one\n  2\n]", "[1 // one\n]"),
        ];
        for (text, expected) in cases {
            let d = jsonc(text);
            assert_eq!(d.remove(&d.root, 1), expected, "{text:?}");
        }
        // Whichever child goes, what is left is read.
        for text in [
            "[1, // one\n  2]",
            "[1, // one\n  2 // two\n]",
            "[1 /* a */ , /* b */ 2 /* c */ , 3]",
        ] {
            for i in 0..jsonc(text).root.len() {
                let d = jsonc(text);
                jsonc(&d.remove(&d.root, i));
            }
        }
        // An insertion after a trailing comment, undone.
        let text = "{\n  \"a\": [1] /* keep */\n}";
        let d = jsonc(text);
        let out = d.insert_member(&d.root, "b", &json!(1));
        assert_eq!(out, "{\n  \"a\": [1], /* keep */\n  \"b\": 1\n}");
        let d = jsonc(&out);
        assert_eq!(d.remove(&d.root, 1), text);
        // And after a line comment.
        let text = "[\n  1 // one\n]";
        let d = jsonc(text);
        let out = d.push_element(&d.root, &json!(2));
        assert_eq!(out, "[\n  1, // one\n  2\n]");
        let d = jsonc(&out);
        assert_eq!(d.remove(&d.root, 1), text);
    }

    #[test]
    fn comments_stay_where_they_are() {
        let text = "{\n  \"a\": 1 // about a\n}";
        let d = jsonc(text);
        let out = d.insert_member(&d.root, "b", &json!(2));
        assert_eq!(out, "{\n  \"a\": 1, // about a\n  \"b\": 2\n}");
        let text = "{\n  \"e\": [ /* none yet */ ]\n}";
        let d = jsonc(text);
        let e = d.root.get("e").unwrap();
        let out = d.push_element(e, &json!(1));
        assert_eq!(out, "{\n  \"e\": [ /* none yet */\n    1\n  ]\n}");
        jsonc(&out);
    }

    mod random {
        use super::*;
        use proptest::prelude::*;

        fn values() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i32>().prop_map(|n| json!(n)),
                // Fractions exact in binary and short in decimal: serde_json (without its
                // float_roundtrip feature) may read other floats back a unit off.
                any::<i32>().prop_map(|n| json!(f64::from(n) / 8.0)),
                "[a-z{}\\[\\],:\"\\\\/ \u{1}é😀]{0,6}".prop_map(Value::String),
            ];
            leaf.prop_recursive(4, 40, 5, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                    prop::collection::btree_map("[a-z]{1,3}", inner, 0..5)
                        .prop_map(|m| Value::Object(m.into_iter().collect())),
                ]
            })
        }

        /// The document as a person or a program might have laid it out.
        fn layouts(value: &Value) -> Vec<String> {
            let mut out = vec![serde_json::to_string(value).unwrap()];
            for unit in [&b"  "[..], b"    ", b"\t"] {
                let mut text = Vec::new();
                let formatter = serde_json::ser::PrettyFormatter::with_indent(unit);
                let mut ser = serde_json::Serializer::with_formatter(&mut text, formatter);
                value.serialize(&mut ser).unwrap();
                out.push(String::from_utf8(text).unwrap() + "\n");
            }
            out
        }

        /// Every container's path from the root: the positions of its children in the
        /// text, one per level.
        fn containers(node: &Node, path: Vec<usize>, out: &mut Vec<Vec<usize>>) {
            let children: Vec<&Node> = match &node.kind {
                Kind::Object(m) => m.iter().map(|m| &m.value).collect(),
                Kind::Array(e) => e.iter().collect(),
                _ => return,
            };
            out.push(path.clone());
            for (i, child) in children.into_iter().enumerate() {
                let mut p = path.clone();
                p.push(i);
                containers(child, p, out);
            }
        }

        fn node_at<'n>(node: &'n Node, path: &[usize]) -> &'n Node {
            match (path.split_first(), &node.kind) {
                (None, _) => node,
                (Some((&i, rest)), Kind::Object(m)) => node_at(&m[i].value, rest),
                (Some((&i, rest)), Kind::Array(e)) => node_at(&e[i], rest),
                _ => unreachable!("paths lead through containers"),
            }
        }

        /// `value` with `edit` applied to the container at `path` (positions as in the
        /// text, which serde_json's map keeps, sorted or in order, as it was written).
        fn edited(value: &Value, path: &[usize], edit: &dyn Fn(&mut Value)) -> Value {
            let mut value = value.clone();
            let mut at = &mut value;
            for &i in path {
                at = match at {
                    Value::Object(m) => m.values_mut().nth(i).unwrap(),
                    Value::Array(a) => &mut a[i],
                    _ => unreachable!(),
                };
            }
            edit(at);
            value
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

            /// The reader agrees with serde_json on what a document is, and on what is
            /// not one once a character is gone.
            #[test]
            fn reads_as_serde_json_does(value in values(), cut in any::<prop::sample::Index>()) {
                for text in layouts(&value) {
                    let d = Doc::parse(&text, Dialect::Json).unwrap();
                    prop_assert_eq!(d.root.to_value(), value.clone());
                    let chars: Vec<char> = text.chars().collect();
                    let i = cut.index(chars.len());
                    let shorter: String = chars[..i].iter().chain(&chars[i + 1..]).collect();
                    prop_assert_eq!(
                        Doc::parse(&shorter, Dialect::Json).is_ok(),
                        serde_json::from_str::<Value>(&shorter).is_ok(),
                        "{:?}", shorter
                    );
                }
            }

            /// Any child of any container removed, and a member or element added, the
            /// text reads as the value edited alike; adding then removing gives back
            /// the same bytes.
            #[test]
            fn edits_do_what_they_say(value in values(), added in values()) {
                for text in layouts(&value) {
                    let d = Doc::parse(&text, Dialect::Json).unwrap();
                    let mut paths = Vec::new();
                    containers(&d.root, vec![], &mut paths);
                    for path in &paths {
                        let container = node_at(&d.root, path);
                        for i in 0..container.len() {
                            let out = d.remove(container, i);
                            let expected = edited(&value, path, &|v| match v {
                                Value::Object(m) => {
                                    let key = m.keys().nth(i).unwrap().clone();
                                    m.remove(&key);
                                }
                                Value::Array(a) => {
                                    a.remove(i);
                                }
                                _ => unreachable!(),
                            });
                            prop_assert_eq!(doc(&out).root.to_value(), expected, "{:?}", out);
                        }
                        let (out, expected) = match container.kind {
                            Kind::Object(_) => (
                                d.insert_member(container, "new_key", &added),
                                edited(&value, path, &|v| {
                                    v.as_object_mut().unwrap().insert("new_key".into(), added.clone());
                                }),
                            ),
                            _ => (
                                d.push_element(container, &added),
                                edited(&value, path, &|v| v.as_array_mut().unwrap().push(added.clone())),
                            ),
                        };
                        let again = doc(&out);
                        prop_assert_eq!(again.root.to_value(), expected, "{:?}", out);
                        if container.len() > 0 {
                            let grown = node_at(&again.root, path);
                            prop_assert_eq!(again.remove(grown, grown.len() - 1), text.clone());
                        }
                    }
                }
            }
        }
    }
}
