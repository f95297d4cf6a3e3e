//! An agent's name, checked once where it enters (the API, the configuration).

use std::fmt;

use serde::Serialize;

/// A name matching `[A-Za-z0-9._-]{1,64}`: what the configuration's `agents.NAME`
/// sections, rules and records use to say which agent.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct AgentName(String);

impl AgentName {
    /// The rule, as messages state it.
    pub const PATTERN: &'static str = "[A-Za-z0-9._-]{1,64}";

    /// Whether `name` is a valid agent name.
    pub fn is_valid(name: &str) -> bool {
        (1..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    }

    /// The name, if it is valid.
    pub fn new(name: String) -> Option<AgentName> {
        Self::is_valid(&name).then_some(AgentName(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for AgentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for AgentName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_words_of_a_small_alphabet() {
        for ok in ["a", "builder-2", "ci.bot_1", &"x".repeat(64)] {
            assert!(AgentName::is_valid(ok), "{ok}");
        }
        for bad in ["", "a b", "a/b", "é", &"x".repeat(65)] {
            assert!(AgentName::new(bad.to_string()).is_none(), "{bad}");
        }
    }
}
