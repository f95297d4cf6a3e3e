//! Pacing for everything execgate writes into a chat, so that a burst of requests never
//! trips the service's rate limits, and so that one `429 retry_after` pauses every sender
//! rather than each of them finding out on its own.
//!
//! Chat services say their limits in one of two ways, and a limiter keeps either: a
//! sustained rate per chat with short bursts tolerated (a token bucket: a few messages
//! at once, then the rate; Telegram, `telegram::pace`, and Slack), or at most so many
//! messages in any window of time (Discord's five per five seconds, `discord::pace`).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

pub struct Limiter {
    pace: Pace,
    state: Mutex<State>,
}

enum Pace {
    /// `burst` messages at once, then `rate` a second.
    Bucket { rate: f64, burst: f64 },
    /// At most `n` messages in any `period`.
    Window { n: usize, period: Duration },
}

struct State {
    tokens: f64,
    refilled_at: Instant,
    /// When the last messages went out (`Pace::Window`), oldest first.
    sent: VecDeque<Instant>,
    /// Set by a 429: nothing is sent before this instant.
    paused_until: Option<Instant>,
}

impl Limiter {
    /// `burst` messages at once, then `per_second`.
    pub fn new(per_second: f64, burst: u32) -> Limiter {
        let burst = f64::from(burst.max(1));
        Limiter::with(Pace::Bucket {
            rate: per_second,
            burst,
        })
    }

    /// At most `n` messages in any `period`.
    pub fn window(n: usize, period: Duration) -> Limiter {
        Limiter::with(Pace::Window {
            n: n.max(1),
            period,
        })
    }

    fn with(pace: Pace) -> Limiter {
        let tokens = match pace {
            Pace::Bucket { burst, .. } => burst,
            Pace::Window { .. } => 0.0,
        };
        Limiter {
            pace,
            state: Mutex::new(State {
                tokens,
                refilled_at: Instant::now(),
                sent: VecDeque::new(),
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
        match self.pace {
            Pace::Bucket { rate, burst } => {
                let elapsed = now.duration_since(s.refilled_at).as_secs_f64();
                s.tokens = (s.tokens + elapsed * rate).min(burst);
                s.refilled_at = now;
                if s.tokens >= 1.0 {
                    s.tokens -= 1.0;
                    return Ok(());
                }
                Err(Duration::from_secs_f64((1.0 - s.tokens) / rate))
            }
            Pace::Window { n, period } => {
                while s.sent.front().is_some_and(|&t| now - t >= period) {
                    s.sent.pop_front();
                }
                match s.sent.front() {
                    Some(&oldest) if s.sent.len() >= n => Err(period - (now - oldest)),
                    _ => {
                        s.sent.push_back(now);
                        Ok(())
                    }
                }
            }
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
    async fn a_window_lets_n_through_then_waits_for_the_oldest() {
        let limiter = Limiter::window(5, Duration::from_secs(5));
        let start = Instant::now();
        for _ in 0..5 {
            limiter.acquire().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
        tokio::time::sleep(Duration::from_secs(2)).await;
        limiter.acquire().await;
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(5),
            "the sixth when the first is 5 s old"
        );
        for _ in 0..4 {
            limiter.acquire().await;
        }
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(5),
            "the first five are all gone by then"
        );
        limiter.acquire().await;
        assert_eq!(start.elapsed(), Duration::from_secs(10));
    }

    #[tokio::test(start_paused = true)]
    async fn a_free_slot_is_taken_without_waiting_and_none_is_made_up() {
        let limiter = Limiter::new(1.0, 4);
        for _ in 0..4 {
            assert!(limiter.try_acquire());
        }
        assert!(!limiter.try_acquire(), "the burst is spent");
        tokio::time::advance(Duration::from_millis(1000)).await;
        assert!(limiter.try_acquire());
        limiter.pause(Duration::from_secs(3));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(!limiter.try_acquire(), "paused by a 429");

        let window = Limiter::window(2, Duration::from_secs(5));
        assert!(window.try_acquire() && window.try_acquire());
        assert!(!window.try_acquire(), "two in five seconds");
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
