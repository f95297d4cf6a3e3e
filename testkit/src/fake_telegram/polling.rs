//! getUpdates: long polling with offsets that confirm updates for good, `allowed_updates`
//! that sticks, and a newer poll that terminates an older one, as in Telegram.

use std::time::Duration;

use serde_json::Value;

use super::methods::int_field;
use super::reply::{ApiFailure, Reply, bad};
use super::server::Shared;
use super::state::FakeState;

/// Update types Telegram withholds unless `allowed_updates` asks for them.
const NOT_DELIVERED_BY_DEFAULT: [&str; 3] =
    ["message_reaction", "message_reaction_count", "chat_member"];

/// Long polling: answers at once if updates are waiting, else holds the request until one
/// is queued or `timeout` seconds pass.
pub(super) async fn get_updates(shared: &Shared, body: &Value) -> Reply {
    let offset = int_field(body, "offset")?.unwrap_or(0);
    let limit = int_field(body, "limit")?.unwrap_or(100).clamp(1, 100) as usize;
    let timeout = int_field(body, "timeout")?.unwrap_or(0).clamp(0, 3600) as u64;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout);

    let generation = {
        let mut state = shared.lock();
        match body.get("allowed_updates") {
            None | Some(Value::Null) => {}
            Some(Value::Array(kinds)) => {
                let kinds: Vec<String> = kinds
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect();
                // An empty list means "the default" again; the setting sticks until changed.
                state.allowed_updates = (!kinds.is_empty()).then_some(kinds);
            }
            Some(_) => return Err(bad("can't parse allowed updates")),
        }
        state.confirm(offset);
        state.poll_generation += 1;
        state.poll_generation
    };
    // Wake any older held poll so it can see it has been superseded.
    shared.updates_changed.notify_waiters();

    loop {
        let changed = shared.updates_changed.notified();
        tokio::pin!(changed);
        // Register before looking at the queue, so an update queued in between still wakes us.
        changed.as_mut().enable();
        {
            let state = shared.lock();
            if state.poll_generation != generation {
                return Err(ApiFailure {
                    code: 409,
                    description: "Conflict: terminated by other getUpdates request; make sure \
                                  that only one bot instance is running"
                        .to_string(),
                    retry_after: None,
                });
            }
            let updates = state.deliverable(limit);
            if !updates.is_empty() || tokio::time::Instant::now() >= deadline {
                return Ok(Value::Array(updates));
            }
        }
        let _ = tokio::time::timeout_at(deadline, changed).await;
    }
}

impl FakeState {
    /// Applies a getUpdates `offset`: Telegram forgets confirmed updates for good.
    fn confirm(&mut self, offset: i64) {
        if offset > 0 {
            self.queue.retain(|u| {
                u.get("update_id")
                    .and_then(Value::as_i64)
                    .unwrap_or(i64::MAX)
                    >= offset
            });
            self.acked_offset = self.acked_offset.max(offset);
        } else if offset < 0 {
            // A negative offset keeps only the last -offset updates.
            let keep = offset.unsigned_abs() as usize;
            while self.queue.len() > keep {
                self.queue.pop_front();
            }
        }
    }

    fn deliverable(&self, limit: usize) -> Vec<Value> {
        self.queue
            .iter()
            .filter(|update| self.allowed(update_kind(update)))
            .take(limit)
            .cloned()
            .collect()
    }

    fn allowed(&self, kind: &str) -> bool {
        match &self.allowed_updates {
            Some(list) => list.iter().any(|k| k == kind),
            None => !NOT_DELIVERED_BY_DEFAULT.contains(&kind),
        }
    }
}

/// The update's type: its one key besides `update_id`.
fn update_kind(update: &Value) -> &str {
    update
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "update_id"))
        .map(String::as_str)
        .unwrap_or("")
}
