//! The chat grammar the owner answers approval requests in, shared by every transport.
//!
//! One parser here means console, Telegram and Matrix can never drift apart on what
//! `/approve a1b2 always` or a 👍 reaction means.

use crate::config::ReactionMap;
use crate::model::{Answer, Decision, looks_like_duration, parse_duration};

/// One parsed chat command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatCommand {
    /// Resolve a request. `short_id` is None for the reply form (the transport finds the
    /// request from the message being replied to).
    Resolve {
        short_id: Option<String>,
        answer: Answer,
    },
    Pending,
    Allowlist,
    Help,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GrammarError(pub String);

const APPROVE_USAGE: &str = "usage: /approve ID [once|always|session|deny] [DURATION like 30m, 2h, 7d], or reply to the request with /approve [once|always|session|deny] [DURATION]";
const DENY_USAGE: &str = "usage: /deny ID, or reply to the request with /deny";

/// Parses one chat message. None: not addressed to us (ignore silently).
pub fn parse(text: &str) -> Option<Result<ChatCommand, GrammarError>> {
    let text = text.trim();
    let rest = text.strip_prefix('/')?;
    // The command word must touch the slash; "/ approve" is prose, not a command.
    if rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut words = rest.split_whitespace();
    let head = words.next()?;
    // Telegram appends `@botname` in groups so several bots can share one chat.
    let name = head.split_once('@').map_or(head, |(name, _)| name);
    let args: Vec<&str> = words.collect();
    let command = match name.to_ascii_lowercase().as_str() {
        "approve" => approve(&args),
        "deny" => deny(&args),
        "pending" => no_args("pending", &args, ChatCommand::Pending),
        "allowlist" => no_args("allowlist", &args, ChatCommand::Allowlist),
        "help" => no_args("help", &args, ChatCommand::Help),
        // Telegram sends `/start` (possibly with a deep-link payload we do not use) when a
        // chat with the bot opens; answering with help is the friendliest first reply.
        "start" => Ok(ChatCommand::Help),
        // Other bots' commands share the chat; they are not errors, just not ours.
        _ => return None,
    };
    Some(command)
}

/// True when `s` is a well-formed short id (4 hex chars, any case).
pub fn is_short_id(s: &str) -> bool {
    s.len() == 4 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn mode(word: &str) -> Option<Decision> {
    match word.to_ascii_lowercase().as_str() {
        "once" => Some(Decision::AllowOnce),
        "always" => Some(Decision::AllowAlways),
        "session" => Some(Decision::AllowSession),
        "deny" => Some(Decision::Deny),
        _ => None,
    }
}

fn resolve(short_id: Option<&str>, answer: Answer) -> ChatCommand {
    ChatCommand::Resolve {
        short_id: short_id.map(str::to_ascii_lowercase),
        answer,
    }
}

fn bad_id(word: &str, usage: &str) -> GrammarError {
    GrammarError(format!(
        "{word:?} is not a request id (an id is 4 hex characters, like a1b2); {usage}"
    ))
}

/// `/approve [ID] [MODE] [DURATION]`. A duration alone means "always" for that long
/// (`/approve a1b2 30m`); with a mode, it must be always or session.
fn approve(args: &[&str]) -> Result<ChatCommand, GrammarError> {
    if args.len() > 3 {
        return Err(GrammarError(format!(
            "/approve takes at most an id, a mode and a duration, got {} words; {APPROVE_USAGE}",
            args.len()
        )));
    }
    // A mode word is never an id (none is 4 hex characters), and a word that reads as a
    // duration (`100d`) is never issued as one (`looks_like_duration`), so the first
    // word says which form this is. Alone, `100d` is a grant of 100 days in reply.
    let (id, rest) = match args {
        [first, rest @ ..] if is_short_id(first) && !looks_like_duration(first) => {
            (Some(*first), rest)
        }
        _ => (None, args),
    };
    let answer = match *rest {
        [] => Answer::plain(Decision::AllowOnce),
        [word] => match (mode(word), parse_duration(word)) {
            (Some(decision), _) => Answer::plain(decision),
            (None, Some(secs)) => timed(Decision::AllowAlways, secs)?,
            (None, None) if id.is_none() => return Err(bad_id(word, APPROVE_USAGE)),
            (None, None) => {
                return Err(GrammarError(format!(
                    "{word:?} is not a mode or a duration (expected once, always, session, deny, or a duration like 30m); {APPROVE_USAGE}"
                )));
            }
        },
        [first, second] => {
            let Some(decision) = mode(first) else {
                return Err(match id {
                    None if looks_like_duration(first) => GrammarError(format!(
                        "{first:?} is a duration, not a request id (no id is three digits and a d); a duration comes last: /approve always {first}; {APPROVE_USAGE}"
                    )),
                    None => bad_id(first, APPROVE_USAGE),
                    Some(_) => GrammarError(format!(
                        "{first:?} is not a mode (expected once, always, session or deny); {APPROVE_USAGE}"
                    )),
                });
            };
            match parse_duration(second) {
                Some(secs) => timed(decision, secs)?,
                None if id.is_none() && is_short_id(second) => {
                    return Err(GrammarError(format!(
                        "the id comes before the mode: /approve {second} {first}; {APPROVE_USAGE}"
                    )));
                }
                None => {
                    return Err(GrammarError(format!(
                        "{second:?} is not a duration (a number and s, m, h, d or w, like 30m or 7d, at most 366d); {APPROVE_USAGE}"
                    )));
                }
            }
        }
        _ => {
            return Err(GrammarError(format!(
                "{:?} is not a request id (an id is 4 hex characters, like a1b2); {APPROVE_USAGE}",
                rest[0]
            )));
        }
    };
    Ok(resolve(id, answer))
}

/// `decision` for `secs`, refused where a duration means nothing (once, deny).
fn timed(decision: Decision, secs: u64) -> Result<Answer, GrammarError> {
    Answer::new(decision, Some(secs)).map_err(|e| GrammarError(format!("{e}; {APPROVE_USAGE}")))
}

fn deny(args: &[&str]) -> Result<ChatCommand, GrammarError> {
    match *args {
        [] => Ok(resolve(None, Decision::Deny.into())),
        [id] if is_short_id(id) => Ok(resolve(Some(id), Decision::Deny.into())),
        [word] => Err(bad_id(word, DENY_USAGE)),
        _ => Err(GrammarError(format!(
            "/deny takes at most an id, got {} words; {DENY_USAGE}",
            args.len()
        ))),
    }
}

fn no_args(name: &str, args: &[&str], command: ChatCommand) -> Result<ChatCommand, GrammarError> {
    if args.is_empty() {
        Ok(command)
    } else {
        Err(GrammarError(format!(
            "/{name} takes no arguments, got {:?}; usage: /{name}",
            args.join(" ")
        )))
    }
}

/// The /help text: every command of the grammar, the reactions of `map`, one per line. Plain text (no HTML/markdown markup), so each transport can escape it as it needs.
pub fn help_text(map: &ReactionMap) -> String {
    let mut lines = vec![
        "Commands (ID is the 4-character id shown on the request):".to_owned(),
        "/approve ID - allow once".to_owned(),
        "/approve ID once - allow once".to_owned(),
        "/approve ID always - allow and add an exact rule for the agent".to_owned(),
        "/approve ID session - allow and add the rule for this session of the agent only"
            .to_owned(),
        "/approve ID 30m - allow and add the rule for 30 minutes (also s, h, d, w)".to_owned(),
        "/approve ID always 7d, /approve ID session 2h - a rule that expires".to_owned(),
        "/approve ID deny - deny".to_owned(),
        "/deny ID - deny".to_owned(),
        "Replying to a request, the ID can be left out:".to_owned(),
        "/approve - allow once".to_owned(),
        "/approve once - allow once".to_owned(),
        "/approve always - allow and add an exact rule for the agent".to_owned(),
        "/approve session - allow and add the rule for this session only".to_owned(),
        "/approve 30m - allow and add the rule for 30 minutes".to_owned(),
        "/approve deny - deny".to_owned(),
        "/deny - deny".to_owned(),
        "/pending - list requests waiting for an answer".to_owned(),
        "/allowlist - show the allowlist".to_owned(),
        "/help - show this help".to_owned(),
    ];
    if !map.entries().is_empty() {
        lines.push("Reactions on a request:".to_owned());
        lines.extend(map.entries().iter().map(|(e, d)| format!("{e} {d}")));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use Decision::{AllowAlways, AllowOnce, AllowSession, Deny};

    fn id(short_id: &str, decision: Decision) -> ChatCommand {
        ChatCommand::Resolve {
            short_id: Some(short_id.to_owned()),
            answer: Answer::plain(decision),
        }
    }

    fn reply(decision: Decision) -> ChatCommand {
        ChatCommand::Resolve {
            short_id: None,
            answer: Answer::plain(decision),
        }
    }

    fn timed(short_id: Option<&str>, decision: Decision, secs: u64) -> ChatCommand {
        ChatCommand::Resolve {
            short_id: short_id.map(str::to_owned),
            answer: Answer::new(decision, Some(secs)).unwrap(),
        }
    }

    macro_rules! ok {
        ($name:ident, $text:expr, $want:expr) => {
            #[test]
            fn $name() {
                assert_eq!(parse($text), Some(Ok($want)));
            }
        };
    }

    macro_rules! ignored {
        ($name:ident, $text:expr) => {
            #[test]
            fn $name() {
                assert_eq!(parse($text), None);
            }
        };
    }

    macro_rules! err {
        ($name:ident, $text:expr, $($needle:expr),+) => {
            #[test]
            fn $name() {
                let err = match parse($text) {
                    Some(Err(err)) => err.0,
                    other => panic!("{:?}: expected an error, got {other:?}", $text),
                };
                $(assert!(err.contains($needle), "{err:?} lacks {:?}", $needle);)+
                assert!(err.contains("usage: /"), "{err:?} shows no usage");
            }
        };
    }

    ok!(approve_id, "/approve a1b2", id("a1b2", AllowOnce));
    ok!(approve_id_once, "/approve a1b2 once", id("a1b2", AllowOnce));
    ok!(
        approve_id_always,
        "/approve a1b2 always",
        id("a1b2", AllowAlways)
    );
    ok!(approve_id_deny, "/approve a1b2 deny", id("a1b2", Deny));
    ok!(deny_id, "/deny a1b2", id("a1b2", Deny));
    ok!(approve_reply, "/approve", reply(AllowOnce));
    ok!(approve_reply_once, "/approve once", reply(AllowOnce));
    ok!(approve_reply_always, "/approve always", reply(AllowAlways));
    ok!(approve_reply_deny, "/approve deny", reply(Deny));
    ok!(deny_reply, "/deny", reply(Deny));
    ok!(
        approve_id_session,
        "/approve a1b2 session",
        id("a1b2", AllowSession)
    );
    ok!(
        approve_reply_session,
        "/approve session",
        reply(AllowSession)
    );
    ok!(
        approve_id_duration,
        "/approve a1b2 30m",
        timed(Some("a1b2"), AllowAlways, 1800)
    );
    ok!(
        approve_id_always_duration,
        "/approve a1b2 always 7d",
        timed(Some("a1b2"), AllowAlways, 7 * 86_400)
    );
    ok!(
        approve_id_session_duration,
        "/approve a1b2 session 2h",
        timed(Some("a1b2"), AllowSession, 7200)
    );
    ok!(
        approve_reply_duration,
        "/approve 2h",
        timed(None, AllowAlways, 7200)
    );
    ok!(
        approve_reply_session_duration,
        "/approve session 45s",
        timed(None, AllowSession, 45)
    );
    ok!(
        a_word_that_reads_as_a_duration_is_one,
        "/approve 100d",
        timed(None, AllowAlways, 100 * 86_400)
    );
    ok!(
        duration_like_id_as_duration,
        "/approve always 100d",
        timed(None, AllowAlways, 100 * 86_400)
    );
    ok!(pending, "/pending", ChatCommand::Pending);
    ok!(allowlist, "/allowlist", ChatCommand::Allowlist);
    ok!(help, "/help", ChatCommand::Help);
    ok!(start_is_help, "/start", ChatCommand::Help);
    ok!(start_payload_is_help, "/start xyz", ChatCommand::Help);
    ok!(hex_word_dead_is_id, "/approve dead", id("dead", AllowOnce));
    ok!(hex_word_beef_is_id, "/deny beef", id("beef", Deny));
    ok!(id_lowercased, "/approve A1B2", id("a1b2", AllowOnce));
    ok!(
        command_case,
        "/APPROVE A1B2 ALWAYS",
        id("a1b2", AllowAlways)
    );
    ok!(mode_case, "/Approve Deny", reply(Deny));
    ok!(list_case, "/PENDING", ChatCommand::Pending);
    ok!(bot_approve, "/approve@my_bot a1b2", id("a1b2", AllowOnce));
    ok!(bot_deny_reply, "/deny@my_bot", reply(Deny));
    ok!(bot_help, "/HELP@My_Bot", ChatCommand::Help);
    ok!(bot_start, "/start@my_bot", ChatCommand::Help);
    ok!(
        whitespace,
        "  \t/approve \t  a1b2   always \n",
        id("a1b2", AllowAlways)
    );
    ok!(whitespace_list, " /allowlist ", ChatCommand::Allowlist);

    ignored!(chatter, "approve a1b2");
    ignored!(empty, "");
    ignored!(blank, "   ");
    ignored!(bare_slash, "/");
    ignored!(slash_space, "/ approve a1b2");
    ignored!(foreign_command, "/foo a1b2");
    ignored!(foreign_bot_command, "/stats@other_bot");
    ignored!(prefix_not_command, "/approved a1b2");

    err!(bad_id_letters, "/approve zzzz", "\"zzzz\"", "4 hex");
    err!(bad_id_long, "/approve a1b2c", "\"a1b2c\"", "4 hex");
    err!(bad_id_short, "/approve a1b", "\"a1b\"", "4 hex");
    err!(
        bad_id_with_mode,
        "/approve zzzz always",
        "\"zzzz\"",
        "4 hex"
    );
    err!(bad_id_deny, "/deny zzzz", "\"zzzz\"", "4 hex");
    err!(
        mode_before_id,
        "/approve always a1b2",
        "/approve a1b2 always"
    );
    err!(
        bad_mode,
        "/approve a1b2 sometimes",
        "\"sometimes\"",
        "once, always, session, deny"
    );
    err!(
        too_many_approve,
        "/approve a1b2 always 2h extra",
        "at most",
        "4 words"
    );
    err!(
        once_takes_no_duration,
        "/approve a1b2 once 2h",
        "a duration goes with",
        "always or session"
    );
    err!(
        deny_takes_no_duration,
        "/approve a1b2 deny 2h",
        "not with deny"
    );
    err!(
        not_a_duration,
        "/approve a1b2 always soon",
        "\"soon\" is not a duration"
    );
    err!(
        too_long,
        "/approve a1b2 always 400d",
        "\"400d\" is not a duration",
        "366d"
    );
    err!(
        zero_duration,
        "/approve a1b2 0m",
        "\"0m\" is not a mode or a duration"
    );

    err!(
        bad_reply_mode,
        "/approve sometimes 2h",
        "\"sometimes\" is not a request id"
    );
    err!(too_many_deny, "/deny a1b2 x", "at most", "2 words");
    err!(
        args_pending,
        "/pending now",
        "/pending takes no arguments",
        "\"now\""
    );
    err!(
        args_allowlist,
        "/allowlist a b",
        "/allowlist takes no arguments"
    );
    err!(args_help, "/help@my_bot me", "/help takes no arguments");

    #[test]
    fn short_ids() {
        for good in ["a1b2", "A1B2", "dead", "0000", "fFfF"] {
            assert!(is_short_id(good), "{good}");
        }
        for bad in ["", "a1b", "a1b2c", "zzzz", "once", "deny", " a1b", "a1é"] {
            assert!(!is_short_id(bad), "{bad}");
        }
    }

    #[test]
    fn help_lists_every_command_and_reaction() {
        let text = help_text(&ReactionMap::default());
        for needle in [
            "/approve ID -",
            "/approve ID once",
            "/approve ID always",
            "/approve ID deny",
            "/deny ID",
            "/approve -",
            "/approve once",
            "/approve always",
            "/approve deny",
            "/deny -",
            "/pending",
            "/allowlist",
            "/help",
            "👍 allow-once",
            "✅ allow-always",
            "👌 allow-always",
            "❌ deny",
            "👎 deny",
        ] {
            assert!(
                text.lines().any(|l| l.starts_with(needle)),
                "help lacks {needle:?}:\n{text}"
            );
        }
        assert!(!text.contains('<') && !text.contains('*') && !text.contains('`'));
        let custom = help_text(&ReactionMap::from_pairs([("🔥", "allow-once")]).unwrap());
        assert!(custom.lines().any(|l| l == "🔥 allow-once") && !custom.contains("👍"));
    }
}
