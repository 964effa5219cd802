//! Time as the engine sees it: nanoseconds since the run's start, and a way to wait until a
//! given one. The real clock waits with the operating system's high-resolution sleep on a
//! thread of its own; tests use tokio's clock, which they can pause and advance.

use std::future::Future;
use std::time::{Duration, Instant};

/// Nanoseconds since the start of a run, and waiting for a moment in that time.
pub trait Clock: Clone + Send + Sync + 'static {
    /// Nanoseconds since the run started.
    fn now_ns(&self) -> u64;

    /// Waits until `t_ns` (returns at once if it has passed).
    fn sleep_until_ns(&self, t_ns: u64) -> impl Future<Output = ()> + Send;

    /// Runs the open-loop dispatcher where this clock's sleep works best.
    fn run_dispatcher(dispatcher: impl Future<Output = ()> + Send + 'static);
}

/// The machine's monotonic clock. `sleep_until_ns` blocks the calling thread, so it is only
/// used on the dispatcher's own thread: a blocking `nanosleep` wakes within tens of
/// microseconds, where tokio's timer wheel rounds up to whole milliseconds — a millisecond of
/// late sends would be added to every response time.
#[derive(Debug, Clone, Copy)]
pub struct RealClock {
    t0: Instant,
}

impl RealClock {
    /// A clock whose zero is now.
    pub fn start_now() -> Self {
        RealClock { t0: Instant::now() }
    }

    /// The instant of the run's start.
    pub fn t0(&self) -> Instant {
        self.t0
    }
}

impl Clock for RealClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn sleep_until_ns(&self, t_ns: u64) -> impl Future<Output = ()> + Send {
        let now = self.now_ns();
        if t_ns > now {
            std::thread::sleep(Duration::from_nanos(t_ns - now));
        }
        std::future::ready(())
    }

    /// On a thread of its own, where a blocking sleep holds up nothing else.
    fn run_dispatcher(dispatcher: impl Future<Output = ()> + Send + 'static) {
        std::thread::Builder::new()
            .name("dispatcher".into())
            .spawn(move || futures::executor::block_on(dispatcher))
            .expect("the dispatcher thread starts");
    }
}

/// tokio's clock: pausable in tests (`#[tokio::test(start_paused = true)]`).
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    t0: tokio::time::Instant,
}

impl TokioClock {
    /// A clock whose zero is now.
    pub fn start_now() -> Self {
        TokioClock {
            t0: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn sleep_until_ns(&self, t_ns: u64) -> impl Future<Output = ()> + Send {
        tokio::time::sleep_until(self.t0 + Duration::from_nanos(t_ns))
    }

    fn run_dispatcher(dispatcher: impl Future<Output = ()> + Send + 'static) {
        tokio::spawn(dispatcher);
    }
}
