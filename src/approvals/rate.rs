//! How often one uid may put a request to a human (`limits.asks_per_minute_per_uid`).
//!
//! Asks are what reach the owner's chat and what use up short ids (docs/lifecycle.md#limits-on-asking), so they
//! are counted when a request is registered for a human, whether or not its agent then
//! waits for the answer: an agent that asks and hangs up pays like one that waits.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The window the limit is counted over.
const WINDOW: Duration = Duration::from_secs(60);

/// Past this many uids in the table, idle ones are forgotten on the next ask.
const PRUNE_ABOVE: usize = 256;

/// Each uid's asks in the last minute. At most `limit` instants per uid are kept.
#[derive(Default)]
pub struct AskRate {
    asks: HashMap<Option<u32>, VecDeque<Instant>>,
}

impl AskRate {
    /// Counts an ask from `uid` at `now` if it is within `limit` asks in the last
    /// minute, and says whether it was.
    pub fn try_ask(&mut self, uid: Option<u32>, limit: usize, now: Instant) -> bool {
        if self.asks.len() > PRUNE_ABOVE {
            self.asks.retain(|_, times| {
                forget_old(times, now);
                !times.is_empty()
            });
        }
        let times = self.asks.entry(uid).or_default();
        forget_old(times, now);
        if times.len() >= limit {
            return false;
        }
        times.push_back(now);
        true
    }
}

fn forget_old(times: &mut VecDeque<Instant>, now: Instant) {
    while times
        .front()
        .is_some_and(|t| now.saturating_duration_since(*t) >= WINDOW)
    {
        times.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_uid_over_a_sliding_minute() {
        let mut rate = AskRate::default();
        let t0 = Instant::now();
        for i in 0..3 {
            assert!(rate.try_ask(Some(1), 3, t0 + Duration::from_secs(i)));
        }
        assert!(!rate.try_ask(Some(1), 3, t0 + Duration::from_secs(10)));
        assert!(
            rate.try_ask(Some(2), 3, t0 + Duration::from_secs(10)),
            "another uid"
        );
        // The first ask leaves the window a minute after it was made; the refused one
        // was never counted.
        assert!(!rate.try_ask(Some(1), 3, t0 + Duration::from_millis(59_999)));
        assert!(rate.try_ask(Some(1), 3, t0 + Duration::from_secs(60)));
        assert!(!rate.try_ask(Some(1), 3, t0 + Duration::from_secs(60)));
    }

    #[test]
    fn idle_uids_are_forgotten() {
        let mut rate = AskRate::default();
        let t0 = Instant::now();
        for uid in 0..=PRUNE_ABOVE as u32 {
            assert!(rate.try_ask(Some(uid), 1, t0));
        }
        assert!(rate.try_ask(Some(99_999), 1, t0 + WINDOW));
        assert_eq!(rate.asks.len(), 1);
    }
}
