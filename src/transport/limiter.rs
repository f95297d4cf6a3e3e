//! Pacing for everything execgate writes into a chat, so that a burst of requests never
//! trips the service's rate limits, and so that one `429 retry_after` pauses every sender
//! rather than each of them finding out on its own.
//!
//! Chat services ask bots to stay near a sustained rate per chat and tolerate short
//! bursts. A token bucket says exactly that: a few messages at once, then the sustained
//! rate. Each chat picks both (Telegram: `telegram::pace`; Discord: `discord::pace`).

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

pub struct Limiter {
    /// Tokens per second.
    rate: f64,
    /// Messages that may go out at once before the sustained rate applies.
    burst: f64,
    state: Mutex<State>,
}

struct State {
    tokens: f64,
    refilled_at: Instant,
    /// Set by a 429: nothing is sent before this instant.
    paused_until: Option<Instant>,
}

impl Limiter {
    /// `burst` messages at once, then `per_second`.
    pub fn new(per_second: f64, burst: u32) -> Limiter {
        let burst = f64::from(burst.max(1));
        Limiter {
            rate: per_second,
            burst,
            state: Mutex::new(State {
                tokens: burst,
                refilled_at: Instant::now(),
                paused_until: None,
            }),
        }
    }

    /// Waits until one more message may be sent, and takes the slot. Cancel-safe: a
    /// caller that stops waiting has taken nothing.
    pub async fn acquire(&self) {
        loop {
            let wait = {
                let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
                let now = Instant::now();
                match s.paused_until {
                    Some(until) if until > now => until - now,
                    _ => {
                        s.paused_until = None;
                        let elapsed = now.duration_since(s.refilled_at).as_secs_f64();
                        s.tokens = (s.tokens + elapsed * self.rate).min(self.burst);
                        s.refilled_at = now;
                        if s.tokens >= 1.0 {
                            s.tokens -= 1.0;
                            return;
                        }
                        Duration::from_secs_f64((1.0 - s.tokens) / self.rate)
                    }
                }
            };
            tokio::time::sleep(wait).await;
        }
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
        let limiter = Limiter::new(1.0, 4);
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
    async fn retry_after_holds_everyone() {
        let limiter = Limiter::new(1.0, 4);
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
