//! Waiting, bounded, for something a test expects to happen.

use std::time::Duration;

/// Polls `check` every 20 ms for up to 10 s; true once it holds.
pub async fn eventually<F, Fut>(mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..500 {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
