//! Telling every long-running task that the daemon is stopping.
//!
//! The daemon holds the one [`Notifier`]; every task that must stop with it (the socket
//! servers, the transports and their pollers) holds a [`Shutdown`], cloned from the
//! first. `Shutdown::recv` resolves once the daemon stops, however many times it is
//! awaited, so a task can `select!` on it in every loop.

use tokio::sync::watch;

/// A new notifier and the first listener; clone the listener for each task.
pub fn channel() -> (Notifier, Shutdown) {
    let (tx, rx) = watch::channel(false);
    (Notifier(tx), Shutdown(rx))
}

/// The daemon's side: says once that everything must stop.
#[derive(Debug)]
pub struct Notifier(watch::Sender<bool>);

impl Notifier {
    /// Tells every [`Shutdown`] that the daemon is stopping.
    pub fn notify(&self) {
        self.0.send_replace(true);
    }
}

/// A task's side: learns that the daemon is stopping.
#[derive(Clone, Debug)]
pub struct Shutdown(watch::Receiver<bool>);

impl Shutdown {
    /// Whether the daemon has been told to stop.
    pub fn is_shutdown(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once the daemon is stopping (at once if it already is). The guard
    /// `wait_for` returns is not `Send`, so it is dropped here, not held across an await.
    pub async fn recv(&mut self) {
        let _ = self.0.wait_for(|stopped| *stopped).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_listener_hears_it_and_keeps_hearing_it() {
        let (notifier, mut first) = channel();
        let mut second = first.clone();
        assert!(!first.is_shutdown());
        notifier.notify();
        first.recv().await;
        second.recv().await;
        // A second wait returns at once: loops can select on it every time round.
        first.recv().await;
        assert!(first.is_shutdown() && second.is_shutdown());
    }

    #[tokio::test]
    async fn a_listener_whose_notifier_is_gone_does_not_hang() {
        let (notifier, mut listener) = channel();
        drop(notifier);
        listener.recv().await;
    }
}
