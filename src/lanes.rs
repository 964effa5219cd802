//! The load's threads: a lane is one OS thread running a tokio runtime of its own
//! (current-thread), so that everything one worker needs per request stays on one thread.
//!
//! A worker of the engine, the native sender's connections it writes to (their reader and
//! writer tasks) and its timer all live on the same lane: a request is framed, written, read
//! back and recorded without waking another thread. On tokio's multi-thread runtime the
//! same tasks were spread over its workers as the scheduler saw fit, and every answer could
//! wake a parked thread (a futex call) to run the task that waited for it; with two threads
//! that doubled the client's system time per request (docs/PERFORMANCE.md, "One runtime per
//! thread"). Nothing is shared between lanes on the hot path; the run's control (the
//! driver's session, the collector, files) stays on the caller's runtime.
//!
//! A lane knows its index ([`current`]) so that a library called from it (the native
//! sender) can pick what belongs to that lane without a shared counter.

use std::cell::Cell;
use std::future::Future;
use std::sync::Mutex;

use tokio::runtime::Handle;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

thread_local! {
    static CURRENT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The index of the lane this thread is, if it is one.
pub fn current() -> Option<usize> {
    CURRENT.with(Cell::get)
}

/// A set of lanes; stopped by [`Lanes::stop`] or when dropped.
pub struct Lanes {
    handles: Vec<Handle>,
    /// Ends each lane's thread: its runtime is dropped with the tasks still on it.
    stops: Mutex<Vec<oneshot::Sender<()>>>,
}

impl Lanes {
    /// Starts `count` lanes (at least one).
    pub fn start(count: usize) -> std::io::Result<Lanes> {
        let mut handles = Vec::new();
        let mut stops = Vec::new();
        for index in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            handles.push(runtime.handle().clone());
            let (stop, stopped) = oneshot::channel::<()>();
            stops.push(stop);
            std::thread::Builder::new()
                .name(format!("headroom-lane-{index}"))
                .spawn(move || {
                    CURRENT.with(|c| c.set(Some(index)));
                    let _ = runtime.block_on(stopped);
                    // Tasks left (a connection's reader) end with the runtime.
                    runtime.shutdown_background();
                })?;
        }
        Ok(Lanes {
            handles,
            stops: Mutex::new(stops),
        })
    }

    /// How many lanes there are.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Whether there is none (never, once started).
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// Runs `future` on lane `index` (modulo their number).
    pub fn spawn<F>(&self, index: usize, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handles[index % self.handles.len()].spawn(future)
    }

    /// Ends every lane: their threads drop their runtimes and what still runs on them.
    /// Does not wait for them (a lane may be the caller).
    pub fn stop(&self) {
        let stops = std::mem::take(&mut *self.stops.lock().unwrap_or_else(|e| e.into_inner()));
        for stop in stops {
            let _ = stop.send(());
        }
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        self.stop();
    }
}

impl std::fmt::Debug for Lanes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lanes").field("count", &self.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_lane_runs_its_tasks_on_its_own_thread() {
        let lanes = Lanes::start(2).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let seen = runtime.block_on(async {
            let a = lanes.spawn(0, async { (current(), std::thread::current().id()) });
            let b = lanes.spawn(1, async { (current(), std::thread::current().id()) });
            (a.await.unwrap(), b.await.unwrap())
        });
        assert_eq!(seen.0 .0, Some(0));
        assert_eq!(seen.1 .0, Some(1));
        assert_ne!(seen.0 .1, seen.1 .1);
        assert_eq!(current(), None);
        lanes.stop();
    }
}
