//! Pacing for everything execgate writes into a chat, so that a burst of requests never
//! trips the service's rate limit, and so that one `429 retry_after` pauses every sender
//! rather than each of them finding out on its own.
//!
//! Telegram asks bots to stay near one message a second in a chat (twenty a minute in a
//! group), Slack near one a second in a channel; both tolerate short bursts. A token
//! bucket says exactly that: a few messages at once, then the sustained rate.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Messages that may go out at once before the sustained rate applies.
const BURST: f64 = 4.0;

pub struct Limiter {
    /// Tokens per second.
    rate: f64,
    state: Mutex<State>,
}

struct State {
    tokens: f64,
    refilled_at: Instant,
    /// Set by a 429: nothing is sent before this instant.
    paused_until: Option<Instant>,
}

impl Limiter {
    pub fn new(per_second: f64) -> Limiter {
        Limiter {
            rate: per_second,
            state: Mutex::new(State {
                tokens: BURST,
                refilled_at: Instant::now(),
                paused_until: None,
            }),
        }
    }

    /// Waits until one more message may be sent, and takes the slot. Cancel-safe: a
    /// caller that stops waiting has taken nothing.
    pub async fn acquire(&self) {
        while let Err(wait) = self.take() {
            tokio::time::sleep(wait).await;
        }
    }

    /// Takes a slot if one is free now, without waiting; false (nothing taken) if not.
    pub fn try_acquire(&self) -> bool {
        self.take().is_ok()
    }

    /// Takes a slot, or says how long until one may be free.
    fn take(&self) -> Result<(), Duration> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if let Some(until) = s.paused_until.filter(|&until| until > now) {
            return Err(until - now);
        }
        s.paused_until = None;
        let elapsed = now.duration_since(s.refilled_at).as_secs_f64();
        s.tokens = (s.tokens + elapsed * self.rate).min(BURST);
        s.refilled_at = now;
        if s.tokens >= 1.0 {
            s.tokens -= 1.0;
            return Ok(());
        }
        Err(Duration::from_secs_f64((1.0 - s.tokens) / self.rate))
    }

    /// The service said "retry after `wait`": hold every sender until then. A shorter
    /// pause never cuts a longer one short.
    pub fn pause(&self, wait: Duration) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let until = Instant::now() + wait;
        if s.paused_until.is_none_or(|u| u < until) {
            s.paused_until = Some(until);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn bursts_then_keeps_the_rate() {
        let limiter = Limiter::new(1.0);
        let start = Instant::now();
        for _ in 0..4 {
            limiter.acquire().await;
        }
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "a short burst goes at once"
        );
        limiter.acquire().await;
        limiter.acquire().await;
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(1990) && took < Duration::from_millis(2100),
            "then one a second: {took:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_slower_rate_spaces_the_rest() {
        let limiter = Limiter::new(20.0 / 60.0);
        let start = Instant::now();
        for _ in 0..5 {
            limiter.acquire().await;
        }
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(2990) && took < Duration::from_millis(3100),
            "{took:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_free_slot_is_taken_without_waiting_and_none_is_made_up() {
        let limiter = Limiter::new(1.0);
        for _ in 0..4 {
            assert!(limiter.try_acquire());
        }
        assert!(!limiter.try_acquire(), "the burst is spent");
        tokio::time::advance(Duration::from_millis(1000)).await;
        assert!(limiter.try_acquire());
        limiter.pause(Duration::from_secs(3));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(!limiter.try_acquire(), "paused by a 429");
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_holds_everyone() {
        let limiter = Limiter::new(1.0);
        limiter.pause(Duration::from_secs(7));
        limiter.pause(Duration::from_secs(2));
        let start = Instant::now();
        limiter.acquire().await;
        assert!(
            start.elapsed() >= Duration::from_secs(7),
            "the longer pause wins"
        );
    }
}
