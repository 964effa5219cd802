//! The link from a [`StopSignal`] to the engine run it ends.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::engine::schedule::Progress;
use crate::stop::StopSignal;

/// Ends the engine run behind `progress` when `stop` is given.
pub(crate) fn watch(
    stop: &Arc<StopSignal>,
    progress: &Arc<Progress>,
) -> tokio::task::JoinHandle<()> {
    let (stop, progress) = (stop.clone(), progress.clone());
    tokio::spawn(async move {
        stop.wait().await;
        progress.stop.store(true, Ordering::Relaxed);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_given_signal_stops_the_engine_run() {
        let stop = StopSignal::new();
        let progress = Arc::new(Progress::default());
        let watcher = watch(&stop, &progress);
        assert!(!progress.stop.load(Ordering::Relaxed));
        stop.trigger();
        watcher.await.unwrap();
        assert!(progress.stop.load(Ordering::Relaxed));
    }
}
