//! How a chat transport lives through its service's outages, the same for every chat: an
//! outage logged once, not once per call; a backoff with jitter for failures that say
//! nothing of when to come back, the service's own word (`retry_after`) waited out in
//! full; and every waiting call retried at once when another gets through.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

use crate::metrics::ChatCounters;

/// One chat service's health, as its calls find it.
pub struct Health {
    /// The service, as a log line names it ("Telegram", "Matrix").
    service: &'static str,
    /// The service once it answers again ("the Telegram Bot API").
    peer: &'static str,
    /// True while calls fail.
    failing: AtomicBool,
    /// Woken when a call succeeds after failures: whoever waits out a backoff retries at
    /// once instead of sleeping through the service's return.
    recovered: Notify,
    /// This chat's deliveries, failures and retries, for `/metrics`.
    counters: ChatCounters,
}

impl Health {
    pub fn new(service: &'static str, peer: &'static str) -> Health {
        Health {
            service,
            peer,
            failing: AtomicBool::new(false),
            recovered: Notify::new(),
            counters: ChatCounters::default(),
        }
    }

    /// The same, counting into `counters` (`Metrics::chat`).
    pub fn counted(self, counters: ChatCounters) -> Health {
        Health { counters, ..self }
    }

    /// A request's message reached the chat.
    pub fn delivered(&self) {
        self.counters.delivered();
    }

    /// Logs a failed call (`what`: the call): the first failure of an outage as a
    /// warning, the rest quietly.
    pub fn failed(&self, what: &str, error: &dyn std::fmt::Display) {
        self.counters.failed();
        let service = self.service;
        if self.failing.swap(true, Ordering::Relaxed) {
            tracing::debug!(error = %error, "{service} {what} failed");
        } else {
            tracing::warn!(
                error = %error,
                "{service} {what} failed; retrying with backoff. Requests that need a human wait and expire as usual"
            );
        }
    }

    /// Notes a call that got through: ends an outage, and wakes whoever waits one out.
    pub fn succeeded(&self) {
        if self.failing.swap(false, Ordering::Relaxed) {
            tracing::info!("{} answers again", self.peer);
            self.recovered.notify_waiters();
        }
    }
}

/// Exponential backoff with jitter, for failures that say nothing of when to come back.
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new()
    }
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(500);
    const MAX: Duration = Duration::from_secs(30);

    pub fn new() -> Backoff {
        Backoff { next: Self::FIRST }
    }

    /// The next step: twice the last, at most 30 s, give or take a fifth.
    pub fn step(&mut self) -> Duration {
        let step = self.next;
        self.next = (self.next * 2).min(Self::MAX);
        step.mul_f64(rand::random_range(0.8..1.2))
    }

    /// Waits out a failed call: `told` (how long the service said to wait) in full;
    /// else the next step, or until another call gets through.
    pub async fn wait(&mut self, told: Option<Duration>, health: &Health) {
        // Counted before the wait: whoever waits tries again after it.
        health.counters.retried();
        if let Some(wait) = told {
            return tokio::time::sleep(wait).await;
        }
        let wait = self.step();
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = health.recovered.notified() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_double_up_to_thirty_seconds_with_jitter() {
        let mut b = Backoff::new();
        let first = b.step();
        assert!(first >= Duration::from_millis(400) && first <= Duration::from_millis(600));
        let second = b.step();
        assert!(second >= Duration::from_millis(800) && second <= Duration::from_millis(1200));
        for _ in 0..20 {
            b.step();
        }
        assert!(b.step() <= Duration::from_secs(36));
    }

    #[tokio::test(start_paused = true)]
    async fn the_services_word_is_waited_in_full_a_step_ends_when_a_call_gets_through() {
        let health = Health::new("Chat", "the chat");
        let start = tokio::time::Instant::now();
        Backoff::new()
            .wait(Some(Duration::from_secs(7)), &health)
            .await;
        assert_eq!(start.elapsed(), Duration::from_secs(7));
        // A failure, then a success elsewhere, while a step of up to 36 s is waited out.
        health.failed("call", &"down");
        let mut b = Backoff::new();
        for _ in 0..10 {
            b.step();
        }
        let start = tokio::time::Instant::now();
        let waiting = b.wait(None, &health);
        let recovering = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            health.succeeded();
        };
        tokio::join!(waiting, recovering);
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }
}
