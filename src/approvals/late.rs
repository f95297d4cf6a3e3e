//! Late answers. A hook must answer before its agent's own timer runs out: Codex, Gemini
//! CLI and Copilot CLI run the tool when they kill a hook at its timeout. So a hook asks
//! without waiting (`"wait": false`), gives up just before that timer with a deny naming
//! the request, and leaves the request pending for the owner. The owner's answer is not
//! lost: the same call asked again — same uid, agent and session, the same command, cwd,
//! shell and stdin — gets that request instead of a new one, where policy would ask the
//! owner again: still pending, it is waited on again (the owner is not asked twice);
//! answered, its answer is given once. Where policy decides by itself (a rule the owner
//! saved meanwhile), its decision is the answer.
//!
//! Kept in this node's memory only: a retry that reaches another node, or comes after a
//! restart, is a new request, which asks again (never the other way round).

use std::collections::HashMap;
use std::time::Instant;

use sha2::{Digest, Sha256};

use crate::model::{Command, RequestSpec};

/// What identifies "the same call": a digest of everything the owner was shown and
/// execgate judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    /// The key of a request that may be answered late: one with a session, decided only
    /// (a run is execgate's own and has a waiter to the end), from a known uid.
    pub fn of(spec: &RequestSpec) -> Option<Key> {
        let (Some(session), Some(uid), false) = (&spec.session, spec.peer_uid, spec.run) else {
            return None;
        };
        let mut h = Sha256::new();
        // Each field length-prefixed: no two different requests feed the same bytes.
        let mut field = |bytes: &[u8]| {
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(&uid.to_le_bytes());
        field(spec.agent.as_str().as_bytes());
        field(session.as_bytes());
        match &spec.command {
            Command::Line(line) => {
                field(b"line");
                field(line.as_bytes());
            }
            Command::Argv(argv) => {
                field(b"argv");
                field(&(argv.len() as u64).to_le_bytes());
                for word in argv {
                    field(word.as_bytes());
                }
            }
            Command::Tool(tool) => {
                field(b"tool");
                field(tool.name.as_bytes());
                field(tool.input.to_string().as_bytes());
            }
        }
        field(spec.cwd.as_deref().unwrap_or("\0none").as_bytes());
        field(format!("{:?}", spec.shell).as_bytes());
        field(
            spec.input
                .as_ref()
                .map_or(String::new(), |i| format!("{}:{}", i.sha256, i.bytes))
                .as_bytes(),
        );
        Some(Key(h.finalize().into()))
    }
}

struct Entry {
    id: String,
    /// After this, the request's answer is not given to a retry: a new request is made.
    until: Instant,
}

/// Requests whose waiter left before their end, by the call that made them.
#[derive(Default)]
pub struct Late {
    by_key: HashMap<Key, Entry>,
    by_id: HashMap<String, Key>,
}

/// More entries than this, and expired ones are swept on the next insert.
const SWEEP_AT: usize = 1024;

impl Late {
    /// Remembers `id` as the request for `key` until `until`; a newer request for the
    /// same call replaces an older one.
    pub fn remember(&mut self, key: Key, id: &str, until: Instant) {
        if self.by_key.len() >= SWEEP_AT {
            let now = Instant::now();
            self.by_key.retain(|_, e| e.until > now);
            let by_key = &self.by_key;
            self.by_id.retain(|_, k| by_key.contains_key(k));
        }
        if let Some(old) = self.by_key.insert(
            key,
            Entry {
                id: id.to_string(),
                until,
            },
        ) {
            self.by_id.remove(&old.id);
        }
        self.by_id.insert(id.to_string(), key);
    }

    /// The request remembered for `key`, if it is still to be answered to a retry.
    pub fn find(&mut self, key: &Key, now: Instant) -> Option<String> {
        let entry = self.by_key.get(key)?;
        if entry.until <= now {
            let id = entry.id.clone();
            self.forget(&id);
            return None;
        }
        Some(entry.id.clone())
    }

    /// `id`'s answer has reached its agent (or is no longer to be given): no retry gets
    /// it again.
    pub fn forget(&mut self, id: &str) {
        if let Some(key) = self.by_id.remove(id) {
            self.by_key.remove(&key);
        }
    }

    /// The call has had an answer of policy's own: what was kept for it is not given.
    pub fn forget_key(&mut self, key: &Key) {
        if let Some(entry) = self.by_key.remove(key) {
            self.by_id.remove(&entry.id);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_key.len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::{AgentName, ToolCall};

    fn spec(command: Command) -> RequestSpec {
        RequestSpec {
            agent: AgentName::new("codex".into()).unwrap(),
            session: Some("s1".into()),
            command,
            cwd: Some("/srv/p".into()),
            reason: Some("shown, but not part of the call".into()),
            front: Some("hook:codex".into()),
            run: false,
            shell: None,
            input: None,
            peer_uid: Some(1000),
            peer_pid: Some(7),
        }
    }

    #[test]
    fn the_same_call_has_the_same_key_and_any_difference_another() {
        let base = spec(Command::Line("touch a".into()));
        let key = Key::of(&base).unwrap();
        let mut again = base.clone();
        again.reason = Some("other words".into());
        again.peer_pid = Some(8);
        again.front = Some("api".into());
        assert_eq!(Key::of(&again), Some(key), "who shows it or which pid asks");

        let variants: [fn(&mut RequestSpec); 9] = [
            |s| s.command = Command::Line("touch b".into()),
            |s| s.command = Command::Argv(vec!["touch".into(), "a".into()]),
            |s| {
                s.command = Command::Tool(ToolCall {
                    name: "touch a".into(),
                    input: serde_json::json!({}),
                })
            },
            |s| s.cwd = Some("/srv/q".into()),
            |s| s.cwd = None,
            |s| s.session = Some("s2".into()),
            |s| s.peer_uid = Some(1001),
            |s| s.agent = AgentName::new("claude".into()).unwrap(),
            |s| s.shell = Some(crate::model::Shell::Bash),
        ];
        for change in variants {
            let mut other = base.clone();
            change(&mut other);
            assert_ne!(Key::of(&other), Some(key), "{other:?}");
        }
    }

    #[test]
    fn no_session_no_uid_or_a_run_is_never_answered_late() {
        for change in [
            (|s: &mut RequestSpec| s.session = None) as fn(&mut RequestSpec),
            |s| s.peer_uid = None,
            |s| s.run = true,
        ] {
            let mut s = spec(Command::Line("ls".into()));
            change(&mut s);
            assert_eq!(Key::of(&s), None);
        }
    }

    #[test]
    fn an_answer_is_given_once_and_not_after_its_time() {
        let key = Key::of(&spec(Command::Line("ls".into()))).unwrap();
        let now = Instant::now();
        let mut late = Late::default();
        late.remember(key, "r1", now + Duration::from_secs(60));
        assert_eq!(late.find(&key, now).as_deref(), Some("r1"));
        late.forget("r1");
        assert_eq!(late.find(&key, now), None);

        late.remember(key, "r2", now + Duration::from_secs(60));
        assert_eq!(late.find(&key, now + Duration::from_secs(61)), None);
        assert_eq!(late.len(), 0);

        late.remember(key, "r3", now + Duration::from_secs(60));
        late.remember(key, "r4", now + Duration::from_secs(60));
        late.forget("r3");
        assert_eq!(late.find(&key, now).as_deref(), Some("r4"));
    }
}
