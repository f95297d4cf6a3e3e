//! A human's answer to a request: the decision, and for a decision that saves a rule,
//! how long the rule lasts. Every front (chat, console, CLI, admin API, web page) builds
//! one here, so a time-boxed grant means the same wherever it was given.

use super::Decision;

/// The longest a time-boxed grant may last: a year. Longer is "always".
pub const MAX_GRANT_SECS: u64 = 366 * 24 * 3600;

/// A decision and, for `allow-always` or `allow-session`, the life of the rule it saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub decision: Decision,
    /// `Some(n)`: the rule expires `n` seconds after the decision. `None`: it lasts
    /// until removed (a session rule: as long as its session is named).
    pub for_secs: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("a duration goes with a grant that saves a rule (always or session), not with {0}")]
    DurationWithoutRule(Decision),
    #[error("a grant lasts between 1 second and 366 days, not {0} seconds")]
    DurationOutOfRange(u64),
}

impl Answer {
    /// An answer that saves no rule, or a rule that lasts until removed.
    pub fn plain(decision: Decision) -> Answer {
        Answer {
            decision,
            for_secs: None,
        }
    }

    /// Checks that a duration, if any, goes with a decision that saves a rule and is
    /// within bounds.
    pub fn new(decision: Decision, for_secs: Option<u64>) -> Result<Answer, AnswerError> {
        if let Some(secs) = for_secs {
            if !decision.saves_rule() {
                return Err(AnswerError::DurationWithoutRule(decision));
            }
            if secs == 0 || secs > MAX_GRANT_SECS {
                return Err(AnswerError::DurationOutOfRange(secs));
            }
        }
        Ok(Answer { decision, for_secs })
    }
}

impl From<Decision> for Answer {
    fn from(decision: Decision) -> Answer {
        Answer::plain(decision)
    }
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.for_secs {
            Some(secs) => write!(f, "{} for {}", self.decision, say_duration(secs)),
            None => write!(f, "{}", self.decision),
        }
    }
}

/// A duration as the owner types it: a whole number and one unit, `s`, `m`, `h`, `d` or
/// `w` (`45s`, `30m`, `2h`, `7d`, `2w`), within [`MAX_GRANT_SECS`]. None for anything
/// else: no fractions, no sums, no bare numbers (is `30` seconds or minutes?).
pub fn parse_duration(word: &str) -> Option<u64> {
    let unit = word.chars().last()?;
    let number = &word[..word.len() - unit.len_utf8()];
    if number.is_empty() || number.len() > 9 || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = number.parse().ok()?;
    let scale = match unit.to_ascii_lowercase() {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return None,
    };
    let secs = n.checked_mul(scale)?;
    (1..=MAX_GRANT_SECS).contains(&secs).then_some(secs)
}

/// Whether a 4-hex short id also reads as a duration word: three digits and `d`
/// (`120d`). Such ids are never issued, so the word means the duration.
pub fn looks_like_duration(short_id: &str) -> bool {
    let b = short_id.as_bytes();
    b.len() == 4 && b[..3].iter().all(u8::is_ascii_digit) && b[3].eq_ignore_ascii_case(&b'd')
}

/// `secs` in the largest unit that divides it: `1800` → "30m", `90` → "90s".
pub fn say_duration(secs: u64) -> String {
    for (unit, scale) in [("w", 7 * 86_400), ("d", 86_400), ("h", 3600), ("m", 60)] {
        if secs >= scale && secs.is_multiple_of(scale) {
            return format!("{}{unit}", secs / scale);
        }
    }
    format!("{secs}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_a_number_and_a_unit() {
        assert_eq!(parse_duration("30m"), Some(1800));
        assert_eq!(parse_duration("2h"), Some(7200));
        assert_eq!(parse_duration("1d"), Some(86_400));
        assert_eq!(parse_duration("7D"), Some(7 * 86_400));
        assert_eq!(parse_duration("45s"), Some(45));
        assert_eq!(parse_duration("2w"), Some(14 * 86_400));
        for bad in [
            "",
            "m",
            "30",
            "0m",
            "1.5h",
            "-1h",
            "+1h",
            "1h30m",
            "30x",
            "366d1",
            "367d",
            "9999999999s",
            "٣m",
            " 1h",
            "1h ",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad:?}");
        }
        assert_eq!(parse_duration("366d"), Some(MAX_GRANT_SECS));
    }

    #[test]
    fn ids_that_read_as_durations_are_recognised() {
        for id in ["120d", "000d", "999D", "366d"] {
            assert!(looks_like_duration(id), "{id}");
        }
        for id in ["a1b2", "12dd", "d120", "1200", "12d"] {
            assert!(!looks_like_duration(id), "{id}");
        }
        // Every id a duration could be mistaken for is among them.
        for n in 0..=0xffff_u32 {
            let id = format!("{n:04x}");
            if parse_duration(&id).is_some() {
                assert!(looks_like_duration(&id), "{id}");
            }
        }
    }

    #[test]
    fn durations_are_said_back_in_their_largest_unit() {
        for (secs, said) in [
            (1800, "30m"),
            (90, "90s"),
            (7200, "2h"),
            (604_800, "1w"),
            (86_400, "1d"),
        ] {
            assert_eq!(say_duration(secs), said);
            assert_eq!(parse_duration(said), Some(secs));
        }
    }

    #[test]
    fn only_grants_that_save_a_rule_take_a_duration() {
        assert!(Answer::new(Decision::AllowAlways, Some(60)).is_ok());
        assert!(Answer::new(Decision::AllowSession, Some(60)).is_ok());
        assert!(Answer::new(Decision::AllowSession, None).is_ok());
        assert_eq!(
            Answer::new(Decision::AllowOnce, Some(60)),
            Err(AnswerError::DurationWithoutRule(Decision::AllowOnce))
        );
        assert_eq!(
            Answer::new(Decision::Deny, Some(60)),
            Err(AnswerError::DurationWithoutRule(Decision::Deny))
        );
        assert_eq!(
            Answer::new(Decision::AllowAlways, Some(0)),
            Err(AnswerError::DurationOutOfRange(0))
        );
        assert!(Answer::new(Decision::AllowAlways, Some(MAX_GRANT_SECS + 1)).is_err());
    }
}
