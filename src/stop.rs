//! Ending work early: Ctrl-C, SIGTERM, or a caller's decision. Kept apart from what obeys it,
//! so that a search or a sweep holds one signal for all its runs, maintenance during a run
//! watches the same one, and what listens for signals (the command line) is not what obeys
//! them (the library).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

/// A stop request, given once, seen by every run watching it.
#[derive(Debug, Default)]
pub struct StopSignal {
    set: AtomicBool,
    notify: Notify,
}

impl StopSignal {
    /// A signal not yet given.
    pub fn new() -> Arc<StopSignal> {
        Arc::new(StopSignal::default())
    }

    /// Gives the signal: every run watching it sends no new requests and ends.
    pub fn trigger(&self) {
        self.set.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Whether the signal was given.
    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    /// Returns once the signal is given.
    pub async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

/// Returns on Ctrl-C (SIGINT) or SIGTERM; never when the signals cannot be listened for.
pub async fn ctrl_c_or_term() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_signal_reaches_every_waiter_and_stays_given() {
        let stop = StopSignal::new();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let stop = stop.clone();
                tokio::spawn(async move { stop.wait().await })
            })
            .collect();
        assert!(!stop.is_set());
        stop.trigger();
        for waiter in waiters {
            waiter.await.unwrap();
        }
        // Given once, it stays given.
        stop.wait().await;
        assert!(stop.is_set());
    }
}
