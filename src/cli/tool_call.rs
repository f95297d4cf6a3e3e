//! What a coding agent's tool call asks execgate for, shared by the hooks and the MCP
//! server's `approval_prompt`: a shell tool's call is a command (a line, or an argv
//! array as some builds send it); any other tool's is a tool request. And the request
//! body's field for either.

use serde_json::{Value, json};

use crate::model::{Command, ToolCall};

/// Tool `name` called with `input`: a command when `name` is one of `shells` (its
/// `command` field), else a tool request.
pub fn read(name: &str, input: &Value, shells: &[&str]) -> Result<Command, String> {
    if shells.contains(&name) {
        shell_command(input, "command")
    } else {
        Ok(Command::Tool(ToolCall {
            name: name.to_string(),
            input: input.clone(),
        }))
    }
}

/// A shell tool's command, from `input[key]`: a string, or an argv array.
pub fn shell_command(input: &Value, key: &str) -> Result<Command, String> {
    match input.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Command::Line(s.clone())),
        Some(Value::Array(words)) if !words.is_empty() => words
            .iter()
            .map(|w| w.as_str().map(String::from))
            .collect::<Option<Vec<_>>>()
            .map(Command::Argv)
            .ok_or_else(|| format!("the shell tool's `{key}` array holds something not a string")),
        _ => Err(format!(
            "the shell tool's input has no `{key}` (a non-empty string)"
        )),
    }
}

/// Puts `command` in a request body: its one field of `command`, `argv` and `tool`.
pub fn set_command(body: &mut Value, command: &Command) {
    match command {
        Command::Line(line) => body["command"] = json!(line),
        Command::Argv(argv) => body["argv"] = json!(argv),
        Command::Tool(tool) => body["tool"] = json!({"name": tool.name, "input": tool.input}),
    }
}
