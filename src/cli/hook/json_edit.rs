//! Reading and editing people's settings files without disturbing them. The text is
//! kept as `jsonc-parser`'s concrete syntax tree, so an edit (add a member or an
//! element, replace a value, remove one) leaves every other byte as it was: other keys,
//! their order, comments, indentation, line ends. Re-serialising the whole file would
//! lose all of that, and these are hand-kept files.
//!
//! The reader is strict RFC 8259 JSON (no comments, no trailing commas, no BOM),
//! optionally with `//` and `/* */` comments ([`Dialect`]), as the agents' own readers
//! take their files. Errors name a line and a column.
//!
//! New text is laid out by the crate: in the file's own indentation unit and line ends,
//! each member of an object on its own line. An object that had all its members on one
//! line is spread over lines when a member is added to it.
//!
//! [`Doc::parse`] reads the text into a plain tree of [`Node`]s for install.rs to walk;
//! each node remembers the child positions leading to it, so an edit reads the text
//! again, walks to the same place in a fresh tree and changes it there. An edit returns
//! the new text; read it again before the next edit.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstNode, CstRootNode};
use jsonc_parser::errors::ParseErrorKind;
use serde_json::Value;

use super::agents::J;

/// What counts as whitespace between tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// RFC 8259.
    Json,
    /// JSON plus `// line` and `/* block */` comments (what strip-json-comments accepts;
    /// trailing commas are still errors).
    JsonWithComments,
}

/// A value in the document.
#[derive(Debug)]
pub struct Node {
    /// The child indices from the root to here (members and elements alike).
    path: Vec<usize>,
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
        self.members()?
            .iter()
            .rev()
            .find(|m| m.key == key)
            .map(|m| &m.value)
    }

    /// The position of the member named `key` (the last one).
    pub fn position(&self, key: &str) -> Option<usize> {
        self.members()?.iter().rposition(|m| m.key == key)
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
}

/// A document read from `text`.
pub struct Doc<'a> {
    pub text: &'a str,
    pub root: Node,
    options: ParseOptions,
}

impl<'a> Doc<'a> {
    pub fn parse(text: &'a str, dialect: Dialect) -> Result<Doc<'a>, ParseError> {
        let options = strict(dialect);
        let refuse = |e: jsonc_parser::errors::ParseError| {
            let (at, message) = match e.kind() {
                ParseErrorKind::CommentsNotAllowed => (
                    e.range().start,
                    "a comment, which JSON does not allow".to_string(),
                ),
                // The crate points at the opening bracket; the reader found the text
                // ended there, which is what to look at.
                kind @ (ParseErrorKind::UnterminatedObject | ParseErrorKind::UnterminatedArray) => {
                    (text.len(), kind.to_string())
                }
                // The crate points at the comma; the bracket after it is what a JSON
                // reader refuses, and where execgate has always pointed.
                kind @ ParseErrorKind::TrailingCommasNotAllowed => {
                    (next_token(text, e.range().end), kind.to_string())
                }
                kind => (e.range().start, kind.to_string()),
            };
            error_at(text, at, message)
        };
        // The CST keeps comments as tokens whatever the options say, so the plain
        // reader checks the dialect first.
        jsonc_parser::parse_to_value(text, &options).map_err(refuse)?;
        let cst = CstRootNode::parse(text, &options).map_err(refuse)?;
        let Some(value) = cst.value() else {
            return Err(error_at(text, text.len(), "no JSON value".into()));
        };
        as_json_reads_it(&cst)?;
        let root = node(&value, Vec::new());
        Ok(Doc {
            text,
            root,
            options,
        })
    }

    /// The text with `"key": value` added as `object`'s last member.
    pub fn insert_member(&self, object: &Node, key: &str, value: &impl Written) -> String {
        self.edit(object, Some(value as &dyn Written), |cst, value| {
            if let Some(object) = cst.as_object() {
                object.append(key, value);
            }
        })
    }

    /// The text with `value` added as `array`'s last element.
    pub fn push_element(&self, array: &Node, value: &impl Written) -> String {
        self.edit(array, Some(value as &dyn Written), |cst, value| {
            if let Some(array) = cst.as_array() {
                array.append(value);
            }
        })
    }

    /// The text with `node` replaced by `value`.
    pub fn replace(&self, node: &Node, value: &impl Written) -> String {
        self.edit(node, Some(value as &dyn Written), |cst, value| {
            // A member's value is replaced through the member, which keeps its key; an
            // element by a new one in its place, which the crate indents as it indents
            // any element (its own replacement keeps the old value's first line only).
            let parent = cst.parent();
            if let Some(prop) = parent.as_ref().and_then(|p| p.as_object_prop()) {
                prop.set_value(value);
            } else if let Some(array) = parent.as_ref().and_then(|p| p.as_array()) {
                let at = *node.path.last().expect("an element has a place");
                remove(cst);
                array.insert(at, value);
            } else {
                replace_with(cst, value);
            }
        })
    }

    /// The text without `container`'s child number `index` (a member or an element), and
    /// the comma that separated it from its neighbours.
    pub fn remove(&self, container: &Node, index: usize) -> String {
        self.edit(container, None, |cst, _| {
            if let Some(child) = children(&cst).into_iter().nth(index) {
                child.remove();
            }
        })
    }

    /// Reads the text again, changes the value `at` leads to with `change` (given
    /// `value` as the CST takes it), and gives back the whole text. A fresh tree each
    /// time keeps `self` as it was read.
    fn edit(
        &self,
        at: &Node,
        value: Option<&dyn Written>,
        change: impl FnOnce(CstNode, CstInputValue),
    ) -> String {
        let root = CstRootNode::parse(self.text, &self.options).expect("read before");
        let top = root.value().expect("read before");
        let mut cst = top.clone();
        for &i in &at.path {
            cst = child_value(&children(&cst)[i]).expect("read before");
        }
        change(cst, value.map_or(CstInputValue::Null, Written::input));
        root.to_string()
    }
}

/// Refuses what the crate takes and the agents' JSON readers do not (a raw control
/// character inside a string): the text, its comments blanked, read by serde_json.
fn as_json_reads_it(cst: &CstRootNode) -> Result<(), ParseError> {
    fn blank(node: &CstNode, out: &mut String) {
        if node.is_comment() {
            // Same length and the same lines, so serde_json's place is the file's.
            out.extend(node.to_string().chars().map(|c| match c {
                '\n' | '\r' => c,
                _ => ' ',
            }));
        } else if let CstNode::Container(container) = node {
            for child in container.children() {
                blank(&child, out);
            }
        } else {
            out.push_str(&node.to_string());
        }
    }
    let mut text = String::new();
    for child in cst.children() {
        blank(&child, &mut text);
    }
    serde_json::from_str::<serde::de::IgnoredAny>(&text)
        .map(drop)
        .map_err(|e| {
            let message = e.to_string();
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(m, _)| m);
            ParseError {
                line: e.line(),
                column: e.column(),
                message: message.to_string(),
            }
        })
}

/// The error `message` at byte `at` of `text`, with its line and column.
fn error_at(text: &str, at: usize, message: String) -> ParseError {
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    ParseError {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
        message,
    }
}

/// Where the next token at or after byte `pos` starts: past whitespace and comments.
fn next_token(text: &str, mut pos: usize) -> usize {
    loop {
        let rest = &text[pos..];
        let trimmed = rest.trim_start_matches([' ', '\t', '\n', '\r']);
        pos += rest.len() - trimmed.len();
        if trimmed.starts_with("//") {
            pos += trimmed.find('\n').unwrap_or(trimmed.len());
        } else if let Some(body) = trimmed.strip_prefix("/*") {
            pos += body.find("*/").map_or(trimmed.len(), |i| i + 4);
        } else {
            return pos;
        }
    }
}

/// What the agents' own readers accept: JSON, with comments in `dialect`'s case only.
fn strict(dialect: Dialect) -> ParseOptions {
    ParseOptions {
        allow_comments: dialect == Dialect::JsonWithComments,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The members (as properties) or elements of a container; nothing for a scalar.
fn children(cst: &CstNode) -> Vec<CstNode> {
    if let Some(object) = cst.as_object() {
        object
            .properties()
            .into_iter()
            .map(|p| CstNode::Container(p.into()))
            .collect()
    } else if let Some(array) = cst.as_array() {
        array.elements()
    } else {
        Vec::new()
    }
}

/// A child's value: a property's value, or the element itself.
fn child_value(child: &CstNode) -> Option<CstNode> {
    match child.as_object_prop() {
        Some(prop) => prop.value(),
        None => Some(child.clone()),
    }
}

/// Takes the value `cst` out of its container, with the comma before or after it.
fn remove(cst: CstNode) {
    if let Some(o) = cst.as_object() {
        o.remove();
    } else if let Some(a) = cst.as_array() {
        a.remove();
    } else if let Some(s) = cst.as_string_lit() {
        s.remove();
    } else if let Some(n) = cst.as_number_lit() {
        n.remove();
    } else if let Some(b) = cst.as_boolean_lit() {
        b.remove();
    } else if let Some(n) = cst.as_null_keyword() {
        n.remove();
    }
}

fn replace_with(cst: CstNode, value: CstInputValue) {
    if let Some(o) = cst.as_object() {
        o.replace_with(value);
    } else if let Some(a) = cst.as_array() {
        a.replace_with(value);
    } else if let Some(s) = cst.as_string_lit() {
        s.replace_with(value);
    } else if let Some(n) = cst.as_number_lit() {
        n.replace_with(value);
    } else if let Some(b) = cst.as_boolean_lit() {
        b.replace_with(value);
    } else if let Some(n) = cst.as_null_keyword() {
        n.replace_with(value);
    }
}

/// The plain tree of the value `cst`, found at `path`.
fn node(cst: &CstNode, path: Vec<usize>) -> Node {
    let kind = if let Some(object) = cst.as_object() {
        Kind::Object(
            object
                .properties()
                .into_iter()
                .enumerate()
                .map(|(i, p)| Member {
                    key: p
                        .name()
                        .and_then(|n| n.decoded_value().ok())
                        .unwrap_or_default(),
                    value: node(
                        &p.value().expect("a read member has a value"),
                        [&path[..], &[i]].concat(),
                    ),
                })
                .collect(),
        )
    } else if let Some(array) = cst.as_array() {
        Kind::Array(
            array
                .elements()
                .iter()
                .enumerate()
                .map(|(i, e)| node(e, [&path[..], &[i]].concat()))
                .collect(),
        )
    } else {
        match cst.to_serde_value() {
            Some(Value::String(s)) => Kind::String(s),
            Some(Value::Bool(b)) => Kind::Bool(b),
            Some(n @ Value::Number(_)) => Kind::Number(n),
            Some(Value::Null) if cst.as_null_keyword().is_some() => Kind::Null,
            // A number serde_json cannot hold.
            _ => Kind::Number(Value::Null),
        }
    };
    Node { path, kind }
}

/// A value to write into a document, as the CST takes it.
pub trait Written {
    fn input(&self) -> CstInputValue;
}

/// Hook entries: their members in the order they are given.
impl Written for J {
    fn input(&self) -> CstInputValue {
        match self {
            J::Object(members) => CstInputValue::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.input()))
                    .collect(),
            ),
            J::Array(items) => CstInputValue::Array(items.iter().map(J::input).collect()),
            J::Str(s) => CstInputValue::String(s.clone()),
            J::Num(n) => CstInputValue::Number(n.to_string()),
            J::Bool(b) => CstInputValue::Bool(*b),
        }
    }
}

impl Written for Value {
    fn input(&self) -> CstInputValue {
        match self {
            Value::Null => CstInputValue::Null,
            Value::Bool(b) => CstInputValue::Bool(*b),
            Value::Number(n) => CstInputValue::Number(n.to_string()),
            // The crate writes a string's characters as they are, escaping nothing.
            Value::String(s) => CstInputValue::String(s.clone()),
            Value::Array(items) => CstInputValue::Array(items.iter().map(Value::input).collect()),
            Value::Object(members) => CstInputValue::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.input()))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
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
    fn values_are_read() {
        let text = r#" {"a": [1, -2.5e3, true, null], "b": {"c": "d"}} "#;
        let d = doc(text);
        let items = d.root.get("a").unwrap().elements().unwrap();
        assert_eq!(items[1].to_value(), json!(-2500.0));
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
        let text = r#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "é😀", "{[,]}:"]"#;
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
            ["a\"b\\c/d\u{8}\u{c}\n\r\t", "é€", "😀", "é😀", "{[,]}:"]
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
            ("", "line 1, column 1: no JSON value"),
            ("{", "line 1, column 2: Unterminated object"),
            (
                "{\"a\": 1,}",
                "line 1, column 9: Trailing commas are not allowed",
            ),
            (
                "[1,\n 2,\n]",
                "line 3, column 1: Trailing commas are not allowed",
            ),
            (
                "{\n  // note\n  \"a\": 1\n}",
                "line 2, column 3: a comment, which JSON does not allow",
            ),
            (
                "[1] [2]",
                "line 1, column 5: Text cannot contain more than one JSON value",
            ),
            (
                "{\"a\" 1}",
                "line 1, column 6: Expected colon after the string or word in object property",
            ),
            ("{\"a\": 1 \"b\": 2}", "line 1, column 8: Expected comma"),
            ("[01]", "line 1, column 3: Expected comma"),
            (
                "[1.]",
                "line 1, column 2: Leading or trailing decimal points on numbers are not allowed",
            ),
            ("[1e+]", "line 1, column 5: Expected digit"),
            (
                "[-]",
                "line 1, column 3: Expected digit following negative sign",
            ),
            ("[\"a\\x\"]", "line 1, column 4: Invalid escape"),
            ("[\"\\u12\"]", "line 1, column 3: Expected four hex digits"),
            // The crate takes a raw control character in a string; JSON readers do not.
            (
                "[\"a\tb\"]",
                "line 1, column 3: control character (\\u0000-\\u001F) found while parsing a string",
            ),
            ("[\"abc", "line 1, column 2: Unterminated string literal"),
            ("\u{feff}{}", "line 1, column 1: Unexpected token"),
            (
                "{'a': 1}",
                "line 1, column 2: Single-quoted strings are not allowed",
            ),
            ("[tru]", "line 1, column 2: Unexpected token"),
            ("[NaN]", "line 1, column 2: Unexpected token"),
            ("{\"é\": [1,\n  2 x]}", "line 2, column 5: Unexpected token"),
            // JSON.parse would take a lone surrogate; refusing it is the careful side.
            (
                "[\"\\ud800x\"]",
                "line 1, column 3: Invalid unicode escape sequence. 'd800 (unpaired high surrogate)' is not a valid UTF8 character",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(error(text), expected, "{text:?}");
        }
    }

    #[test]
    fn nesting_has_a_limit() {
        // The crate's limit: far beyond any settings file, far short of the stack.
        let deep = format!("{}{}", "[".repeat(513), "]".repeat(513));
        assert_eq!(
            error(&deep),
            "line 1, column 513: Maximum nesting depth exceeded"
        );
        let fine = format!("{}{}", "[".repeat(512), "]".repeat(512));
        let d = doc(&fine);
        d.push_element(&d.root, &json!(1));
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
            "line 1, column 4: Unterminated comment block"
        );
        // Comment-like text in a string is the string's; a comment is whitespace even
        // where a control character would not be.
        jsonc("[\"/* a */\", /* \t\u{1} */ 1]");
        assert!(Doc::parse("[\"a\tb\"] // x", Dialect::JsonWithComments).is_err());
        // Trailing commas stay errors.
        assert!(Doc::parse("[1,]", Dialect::JsonWithComments).is_err());
    }

    #[test]
    fn a_member_goes_into_an_empty_object_on_lines_of_its_own() {
        let d = doc("{}");
        assert_eq!(d.insert_member(&d.root, "a", &json!(1)), "{\n  \"a\": 1\n}");
        let d = doc("{}\n");
        assert_eq!(
            d.insert_member(&d.root, "a", &json!({"b": [1]})),
            "{\n  \"a\": {\n    \"b\": [1]\n  }\n}\n"
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
                    "{{\n{u}\"x\": {{\n{u}{u}\"y\": true,\n{u}{u}\"z\": {{\n{u}{u}{u}\"k\": [1, 2]\n{u}{u}}}\n{u}}}\n}}\n"
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
    fn an_object_on_one_line_is_spread_over_lines_when_it_grows() {
        let d = doc(r#"{"a":[1,2],"b":{}}"#);
        assert_eq!(
            d.insert_member(&d.root, "c", &json!(null)),
            "{\n  \"a\":[1,2],\n  \"b\":{},\n  \"c\": null\n}"
        );
        let b = d.root.get("b").unwrap();
        assert_eq!(
            d.insert_member(b, "k", &json!([true])),
            "{\"a\":[1,2],\"b\":{\n    \"k\": [true]\n  }}"
        );
        // An array of plain values stays on its line.
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
            "{\n  \"hooks\": [\n    {\n      \"new\": [1]\n    },\n    \"keep\"\n  ]\n}"
        );
        let out = d.replace(d.root.get("hooks").unwrap(), &json!({"k": "v"}));
        assert_eq!(out, "{\n  \"hooks\": {\n    \"k\": \"v\"\n  }\n}");
        let last = &d.root.get("hooks").unwrap().elements().unwrap()[1];
        let out = d.replace(last, &json!(2));
        assert_eq!(out, "{\n  \"hooks\": [\n    {\"old\": 1},\n    2\n  ]\n}");
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
        assert_eq!(d.remove(&d.root, 0), r#"{ "b": {"c": ","}, "d": [3]}"#);
        assert_eq!(d.remove(&d.root, 1), r#"{"a": 1, "d": [3]}"#);
        assert_eq!(d.remove(&d.root, 2), r#"{"a": 1, "b": {"c": ","}}"#);
    }

    /// Adding to a non-empty container spread over lines, and removing what was added,
    /// gives back the same bytes; every byte outside the added text is the original's.
    /// (An object on one line comes back spread over lines.)
    #[test]
    fn an_insertion_undone_gives_back_every_byte() {
        let texts = [
            "{\n  \"x\": 1\n}\n",
            "{\r\n\t\"x\": [\"{\", \"]\"],\r\n\t\"y\": \"\\u00e9 é\"\r\n}",
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
        let d = doc("{\"x\":1}");
        let out = d.insert_member(&d.root, "new", &json!(1));
        let after = doc(&out);
        assert_eq!(after.remove(&after.root, 1), "{\n  \"x\":1\n}");
    }

    /// How many leading bytes `a` and `b` share.
    fn common_prefix(a: &str, b: &str) -> usize {
        a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
    }

    #[test]
    fn removing_keeps_the_comments_around() {
        let text = "[\n  1, // one\n  2 /* two */,\n  3 /* , */ , 4\n]";
        let d = jsonc(text);
        // A comment on a child's own line goes with it.
        let cases = [
            "[\n  2 /* two */,\n  3 /* , */ , 4\n]",
            "[\n  1, // one\n  3 /* , */ , 4\n]",
            "[\n  1, // one\n  2 /* two */,\n 4\n]",
            "[\n  1, // one\n  2 /* two */,\n  3 /* , */ ]",
        ];
        for (i, expected) in cases.into_iter().enumerate() {
            assert_eq!(d.remove(&d.root, i), expected, "child {i}");
        }
        // The last child after a line comment: the comment keeps its line end.
        let cases = [
            ("[1, // one\n  2]", "[1 // one\n]"),
            ("[1, // one\n  2 // two\n]", "[1 // one\n]"),
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
        assert_eq!(out, "{\n  \"e\": [ /* none yet */1 ]\n}");
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
                        if container.len() > 0 && text.contains('\n') {
                            let grown = node_at(&again.root, path);
                            prop_assert_eq!(again.remove(grown, grown.len() - 1), text.clone());
                        }
                    }
                }
            }
        }
    }
}
