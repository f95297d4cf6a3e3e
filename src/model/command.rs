//! What a request asks to run. Exactly one kind per request: the choice is a type, so
//! no code past the API's validation ever meets "neither" or "both".

use std::borrow::Cow;

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a request asks to run. (Tool calls will be the third kind.)
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// A shell line (the request's `command`): run with `/bin/sh -c` in run mode, or by
    /// the agent's own shell.
    Line(String),
    /// A program and its arguments (the request's `argv`), run without any shell. Never
    /// empty: the API refuses an argv without a program.
    Argv(Vec<String>),
}

/// A borrowed [`Command`]: what policy judges, without copying the words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandRef<'a> {
    Line(&'a str),
    Argv(&'a [String]),
}

impl Command {
    pub fn as_ref(&self) -> CommandRef<'_> {
        match self {
            Command::Line(line) => CommandRef::Line(line),
            Command::Argv(argv) => CommandRef::Argv(argv),
        }
    }

    /// The command as it is shown, matched and stored in rules: the shell line, or the
    /// argv joined with shell quoting.
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
}

impl<'a> CommandRef<'a> {
    /// See [`Command::display`].
    pub fn display(self) -> Cow<'a, str> {
        match self {
            CommandRef::Line(line) => Cow::Borrowed(line),
            CommandRef::Argv(argv) => Cow::Owned(shell_join(argv)),
        }
    }

    pub fn line(self) -> Option<&'a str> {
        match self {
            CommandRef::Line(line) => Some(line),
            CommandRef::Argv(_) => None,
        }
    }

    pub fn argv(self) -> Option<&'a [String]> {
        match self {
            CommandRef::Argv(argv) => Some(argv),
            CommandRef::Line(_) => None,
        }
    }

    pub fn to_owned(self) -> Command {
        match self {
            CommandRef::Line(line) => Command::Line(line.to_string()),
            CommandRef::Argv(argv) => Command::Argv(argv.to_vec()),
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

/// As the record's two fields, `command` and `argv`, one of them null: the JSON every
/// client reads (the record flattens it in place).
impl Serialize for Command {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("command", &self.line())?;
        map.serialize_entry("argv", &self.argv())?;
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
        }
        match Fields::deserialize(d)? {
            Fields {
                command: Some(line),
                argv: None,
            } => Ok(Command::Line(line)),
            Fields {
                command: None,
                argv: Some(argv),
            } => Ok(Command::Argv(argv)),
            _ => Err(D::Error::custom(
                "a record has exactly one of `command` and `argv`",
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
        assert_eq!(line, serde_json::json!({"command": "ls", "argv": null}));
        let argv = serde_json::to_value(Command::Argv(vec!["ls".into()])).unwrap();
        assert_eq!(argv, serde_json::json!({"command": null, "argv": ["ls"]}));
        for c in [Command::Line("ls".into()), Command::Argv(vec!["ls".into()])] {
            let back: Command = serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
            assert_eq!(back, c);
        }
        let neither = serde_json::from_value::<Command>(serde_json::json!({"command": null}));
        assert!(neither.is_err());
    }
}
