//! What a request asks for: a command to run, or a tool call the agent wants to make.
//! Exactly one kind per request: the choice is a type, so no code past the API's
//! validation ever meets "neither" or "both".

use std::borrow::Cow;

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// A shell line (the request's `command`): run with `/bin/sh -c` in run mode, or by
    /// the agent's own shell.
    Line(String),
    /// A program and its arguments (the request's `argv`), run without any shell. Never
    /// empty: the API refuses an argv without a program.
    Argv(Vec<String>),
    /// A non-shell tool call (the request's `tool`): a file write, an MCP tool. The agent
    /// makes it; execgate only decides (a tool request is never run).
    Tool(ToolCall),
}

/// A tool call as the agent's tool layer names it: `Write` with `{"file_path": …}`,
/// `mcp__github__create_issue` with its arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    /// The tool's input, as the agent sent it (any JSON; usually an object).
    pub input: serde_json::Value,
}

impl ToolCall {
    /// The longest tool name accepted.
    pub const MAX_NAME: usize = 128;

    /// Whether `name` is a tool name: `[A-Za-z0-9._:-]{1,128}` (MCP tools arrive as
    /// `mcp__server__tool`). Nothing else can reach a rule, a log or a chat message.
    pub fn valid_name(name: &str) -> bool {
        (1..=Self::MAX_NAME).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
    }

    /// One line: the name and the input as compact JSON (`Write {"file_path":"/x"}`).
    /// Displays escape and clip it like any agent text.
    pub fn display(&self) -> String {
        format!("{} {}", self.name, self.input)
    }
}

/// A borrowed [`Command`]: what policy judges, without copying the words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandRef<'a> {
    Line(&'a str),
    Argv(&'a [String]),
    Tool(&'a ToolCall),
}

impl Command {
    pub fn as_ref(&self) -> CommandRef<'_> {
        match self {
            Command::Line(line) => CommandRef::Line(line),
            Command::Argv(argv) => CommandRef::Argv(argv),
            Command::Tool(tool) => CommandRef::Tool(tool),
        }
    }

    /// The command as it is shown, matched and stored in rules: the shell line, or the
    /// argv joined with shell quoting; for a tool call, its name and compact input.
    pub fn display(&self) -> Cow<'_, str> {
        self.as_ref().display()
    }

    /// The shell line, for a `command` request.
    pub fn line(&self) -> Option<&str> {
        self.as_ref().line()
    }

    /// The words, for an `argv` request.
    pub fn argv(&self) -> Option<&[String]> {
        self.as_ref().argv()
    }

    /// The tool call, for a `tool` request.
    pub fn tool(&self) -> Option<&ToolCall> {
        self.as_ref().tool()
    }
}

impl<'a> CommandRef<'a> {
    /// See [`Command::display`].
    pub fn display(self) -> Cow<'a, str> {
        match self {
            CommandRef::Line(line) => Cow::Borrowed(line),
            CommandRef::Argv(argv) => Cow::Owned(shell_join(argv)),
            CommandRef::Tool(tool) => Cow::Owned(tool.display()),
        }
    }

    pub fn line(self) -> Option<&'a str> {
        match self {
            CommandRef::Line(line) => Some(line),
            _ => None,
        }
    }

    pub fn argv(self) -> Option<&'a [String]> {
        match self {
            CommandRef::Argv(argv) => Some(argv),
            _ => None,
        }
    }

    pub fn tool(self) -> Option<&'a ToolCall> {
        match self {
            CommandRef::Tool(tool) => Some(tool),
            _ => None,
        }
    }

    pub fn to_owned(self) -> Command {
        match self {
            CommandRef::Line(line) => Command::Line(line.to_string()),
            CommandRef::Argv(argv) => Command::Argv(argv.to_vec()),
            CommandRef::Tool(tool) => Command::Tool(tool.clone()),
        }
    }
}

/// Joins argv into one shell line that means the same words: the form argv requests are
/// shown, matched and stored in.
pub fn shell_join(argv: &[String]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

fn quote(word: &str) -> Cow<'_, str> {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

/// As the record's three fields, `command`, `argv` and `tool`, two of them null: the
/// JSON every client reads (the record flattens it in place).
impl Serialize for Command {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("command", &self.line())?;
        map.serialize_entry("argv", &self.argv())?;
        map.serialize_entry("tool", &self.tool())?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for Command {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Fields {
            #[serde(default)]
            command: Option<String>,
            #[serde(default)]
            argv: Option<Vec<String>>,
            #[serde(default)]
            tool: Option<ToolCall>,
        }
        match Fields::deserialize(d)? {
            Fields {
                command: Some(line),
                argv: None,
                tool: None,
            } => Ok(Command::Line(line)),
            Fields {
                command: None,
                argv: Some(argv),
                tool: None,
            } => Ok(Command::Argv(argv)),
            Fields {
                command: None,
                argv: None,
                tool: Some(tool),
            } => Ok(Command::Tool(tool)),
            _ => Err(D::Error::custom(
                "a record has exactly one of `command`, `argv` and `tool`",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_join_round_trips_words() {
        let argv: Vec<String> = ["ls", "-la", "my file", "it's", "", "*.txt"]
            .map(String::from)
            .to_vec();
        let joined = shell_join(&argv);
        assert_eq!(joined, r"ls -la 'my file' 'it'\''s' '' '*.txt'");
    }

    #[test]
    fn serialises_as_two_fields_one_null() {
        let line = serde_json::to_value(Command::Line("ls".into())).unwrap();
        assert_eq!(
            line,
            serde_json::json!({"command": "ls", "argv": null, "tool": null})
        );
        let argv = serde_json::to_value(Command::Argv(vec!["ls".into()])).unwrap();
        assert_eq!(
            argv,
            serde_json::json!({"command": null, "argv": ["ls"], "tool": null})
        );
        let tool = Command::Tool(ToolCall {
            name: "Write".into(),
            input: serde_json::json!({"file_path": "/x"}),
        });
        assert_eq!(
            serde_json::to_value(&tool).unwrap(),
            serde_json::json!({"command": null, "argv": null,
                "tool": {"name": "Write", "input": {"file_path": "/x"}}})
        );
        assert_eq!(tool.display(), r#"Write {"file_path":"/x"}"#);
        for c in [
            Command::Line("ls".into()),
            Command::Argv(vec!["ls".into()]),
            tool,
        ] {
            let back: Command = serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
            assert_eq!(back, c);
        }
        let neither = serde_json::from_value::<Command>(serde_json::json!({"command": null}));
        assert!(neither.is_err());
        let both = serde_json::json!({"command": "ls", "tool": {"name": "Read", "input": {}}});
        assert!(serde_json::from_value::<Command>(both).is_err());
    }

    #[test]
    fn tool_names_are_a_closed_alphabet() {
        for good in [
            "Write",
            "mcp__github__get_issue",
            "a.b:c-d",
            &"x".repeat(128),
        ] {
            assert!(ToolCall::valid_name(good), "{good}");
        }
        for bad in [
            "",
            "Write file",
            "Wr\u{202e}ite",
            "a/b",
            "ä",
            &"x".repeat(129),
        ] {
            assert!(!ToolCall::valid_name(bad), "{bad}");
        }
    }
}
