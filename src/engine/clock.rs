//! Time as the engine sees it: nanoseconds since the run's start, and timers that wake a
//! worker at a given one.
//!
//! The real timer is a Linux timerfd registered with tokio's I/O driver: it wakes the worker
//! within microseconds of the intended start, from the same epoll wait that delivers the
//! answers, so precise sends cost no extra thread and no cross-thread wake-up. tokio's own
//! timer would round every wait up to a whole millisecond — up to a millisecond of client lag
//! added to each response time. Tests use tokio's clock, which they can pause and advance.

use std::future::Future;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::{Duration, Instant};

use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use tokio::io::unix::AsyncFd;

/// Nanoseconds since the start of a run, and timers in that time.
pub trait Clock: Clone + Send + Sync + 'static {
    /// A timer of this clock, owned by one worker.
    type Timer: Timer;

    /// Nanoseconds since the run started.
    fn now_ns(&self) -> u64;

    /// A new timer. Needs a tokio runtime with I/O and time enabled.
    fn timer(&self) -> std::io::Result<Self::Timer>;
}

/// Waits for moments of its clock.
pub trait Timer: Send {
    /// Waits until `t_ns` (returns at once if it has passed). Cancel-safe: dropping the
    /// future and calling again with the same moment loses nothing.
    fn sleep_until_ns(&mut self, t_ns: u64) -> impl Future<Output = ()> + Send + '_;
}

/// The machine's monotonic clock.
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
    type Timer = RealTimer;

    #[inline]
    fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn timer(&self) -> std::io::Result<RealTimer> {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        // SAFETY: `register` asks that the descriptor stay open while it is registered. The
        // AsyncFd owns the TimerHandle, which owns the TimerFd: the descriptor closes only
        // when the AsyncFd (and with it the registration) is dropped.
        #[allow(unsafe_code)]
        let fd = unsafe { AsyncFd::register(TimerHandle(fd)) }.map_err(std::io::Error::from)?;
        Ok(RealTimer {
            clock: *self,
            fd,
            armed_for: None,
        })
    }
}

/// A timerfd, for tokio's AsyncFd (which asks for `AsRawFd`).
struct TimerHandle(TimerFd);

impl AsRawFd for TimerHandle {
    fn as_raw_fd(&self) -> RawFd {
        self.0.as_fd().as_raw_fd()
    }
}

/// A timer on a Linux timerfd.
pub struct RealTimer {
    clock: RealClock,
    fd: AsyncFd<TimerHandle>,
    /// The moment the timerfd is armed for, if any.
    armed_for: Option<u64>,
}

impl std::fmt::Debug for RealTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealTimer")
            .field("armed_for", &self.armed_for)
            .finish()
    }
}

impl Timer for RealTimer {
    async fn sleep_until_ns(&mut self, t_ns: u64) {
        loop {
            let now = self.clock.now_ns();
            if now >= t_ns {
                return;
            }
            if self.armed_for != Some(t_ns) {
                // Relative arming: a zero value would disarm, and `now < t_ns` here.
                let wait = TimeSpec::from_duration(Duration::from_nanos(t_ns - now));
                if self
                    .fd
                    .get_ref()
                    .0
                    .set(Expiration::OneShot(wait), TimerSetTimeFlags::empty())
                    .is_err()
                {
                    // Cannot arm (should not happen): fall back to tokio's coarser timer.
                    tokio::time::sleep(Duration::from_nanos(t_ns - now)).await;
                    return;
                }
                self.armed_for = Some(t_ns);
            }
            let Ok(mut ready) = self.fd.readable().await else {
                tokio::time::sleep(Duration::from_nanos(
                    t_ns.saturating_sub(self.clock.now_ns()),
                ))
                .await;
                return;
            };
            // No read of the expiration count: the next arming (timerfd_settime) resets it,
            // which saves a system call per wake-up. A stale readiness only makes the loop
            // check the time once more.
            ready.clear_ready();
            self.armed_for = None;
        }
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
    type Timer = TokioClock;

    fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn timer(&self) -> std::io::Result<TokioClock> {
        Ok(*self)
    }
}

impl Timer for TokioClock {
    fn sleep_until_ns(&mut self, t_ns: u64) -> impl Future<Output = ()> + Send + '_ {
        tokio::time::sleep_until(self.t0 + Duration::from_nanos(t_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timerfd never wakes before the asked moment. How close after it wakes is a
    /// figure of the benchmark (wait before send, docs/PERFORMANCE.md), not of a unit test:
    /// on a loaded machine any lateness bound here would fail for the machine's sake.
    #[tokio::test(flavor = "current_thread")]
    async fn the_real_timer_never_wakes_early() {
        let clock = RealClock::start_now();
        let mut timer = clock.timer().unwrap();
        for i in 1..=50u64 {
            let target = i * 250_000;
            timer.sleep_until_ns(target).await;
            assert!(clock.now_ns() >= target, "never early");
        }
        // Waiting for a moment that has passed returns at once.
        timer.sleep_until_ns(0).await;
    }
}
