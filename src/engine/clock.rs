//! Time as the engine sees it: nanoseconds since the run's start, and timers that wake a
//! worker at a given one.
//!
//! The real timer is a Linux timerfd registered with tokio's I/O driver: it wakes the worker
//! within microseconds of the intended start, from the same epoll wait that delivers the
//! answers, so precise sends cost no extra thread and no cross-thread wake-up. tokio's own
//! timer would round every wait up to a whole millisecond — up to a millisecond of client lag
//! added to each response time. Tests use tokio's clock, which they can pause and advance.
//!
//! A timer also says how late each wake-up it slept for came: the engine's measure of the
//! client's hiccups.

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
    ///
    /// Gives how late the wake-up came (ns after `t_ns`) when the timer was set for `t_ns`
    /// while it lay ahead ([`Timer::set`], or an earlier call cancelled before the moment
    /// came); `None` when `t_ns` had passed before the timer was first asked for it, or was
    /// handed back once already.
    fn sleep_until_ns(&mut self, t_ns: u64) -> impl Future<Output = Option<u64>> + Send + '_;

    /// Sets the timer for `t_ns` if it lies ahead, without waiting: a caller that then works
    /// until past `t_ns` learns from [`Timer::sleep_until_ns`] how late it came to it.
    fn set(&mut self, t_ns: u64);
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

    /// A clock whose zero is `t0` (past or to come: a fleet's agreed start).
    pub fn starting_at(t0: Instant) -> Self {
        RealClock { t0 }
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
    async fn sleep_until_ns(&mut self, t_ns: u64) -> Option<u64> {
        loop {
            let now = self.clock.now_ns();
            if now >= t_ns {
                let slept = self.armed_for == Some(t_ns);
                if slept {
                    self.armed_for = None;
                }
                return slept.then(|| now - t_ns);
            }
            if self.armed_for != Some(t_ns) && !self.arm(t_ns, now) {
                // Cannot arm (should not happen): fall back to tokio's coarser timer.
                tokio::time::sleep(Duration::from_nanos(t_ns - now)).await;
                return None;
            }
            let Ok(mut ready) = self.fd.readable().await else {
                tokio::time::sleep(Duration::from_nanos(
                    t_ns.saturating_sub(self.clock.now_ns()),
                ))
                .await;
                self.armed_for = None;
                return None;
            };
            // No read of the expiration count: the next arming (timerfd_settime) resets it,
            // which saves a system call per wake-up. The timer fired, yet the clock says the
            // moment has not come: a stale readiness (from an expiry before the last arming),
            // or a clock whose zero lies ahead (a fleet's start, before which it reads 0 while
            // the timerfd's relative wait runs out). Armed again for what is left, so that the
            // loop does not wait for some other wake-up (seen: a fleet worker's first interval
            // stalled for the 250 ms of the engine's hand-over tick).
            ready.clear_ready();
            let now = self.clock.now_ns();
            if now < t_ns {
                self.arm(t_ns, now);
            }
        }
    }

    fn set(&mut self, t_ns: u64) {
        if self.armed_for != Some(t_ns) {
            let now = self.clock.now_ns();
            if now < t_ns {
                self.arm(t_ns, now);
            }
        }
    }
}

impl RealTimer {
    /// Arms the timerfd for `t_ns`, which lies ahead of `now`; false if it cannot.
    fn arm(&mut self, t_ns: u64, now: u64) -> bool {
        // Relative arming: a zero value would disarm, and `now < t_ns` here.
        let wait = TimeSpec::from_duration(Duration::from_nanos(t_ns - now));
        let armed = self
            .fd
            .get_ref()
            .0
            .set(Expiration::OneShot(wait), TimerSetTimeFlags::empty())
            .is_ok();
        self.armed_for = armed.then_some(t_ns);
        armed
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
    type Timer = TokioTimer;

    fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    fn timer(&self) -> std::io::Result<TokioTimer> {
        Ok(TokioTimer {
            clock: *self,
            slept_for: None,
        })
    }
}

/// A timer of tokio's clock.
#[derive(Debug)]
pub struct TokioTimer {
    clock: TokioClock,
    /// The moment a call slept for and that has not been handed back as passed yet.
    slept_for: Option<u64>,
}

impl Timer for TokioTimer {
    async fn sleep_until_ns(&mut self, t_ns: u64) -> Option<u64> {
        if self.clock.now_ns() < t_ns {
            self.slept_for = Some(t_ns);
            tokio::time::sleep_until(self.clock.t0 + Duration::from_nanos(t_ns)).await;
        }
        let slept = self.slept_for == Some(t_ns);
        if slept {
            self.slept_for = None;
        }
        slept.then(|| self.clock.now_ns() - t_ns)
    }

    fn set(&mut self, t_ns: u64) {
        if self.clock.now_ns() < t_ns {
            self.slept_for = Some(t_ns);
        }
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
            let late = timer.sleep_until_ns(target).await;
            let now = clock.now_ns();
            assert!(now >= target, "never early");
            // (On a busy host a 250 µs step may pass before it is asked for: no lateness.)
            if let Some(late) = late {
                assert!(
                    late <= now - target,
                    "late by at most the time since the moment"
                );
            }
        }
        // Waiting for a moment that has passed returns at once, with no lateness: the timer
        // did not sleep for it.
        assert_eq!(timer.sleep_until_ns(0).await, None);
    }

    /// A clock whose zero lies ahead reads 0 until then; a wait for a moment after its zero
    /// still ends at that moment, though the timerfd's first relative wait runs out before
    /// the zero.
    #[tokio::test(flavor = "current_thread")]
    async fn a_clock_whose_zero_lies_ahead_wakes_at_the_moment() {
        let zero = Instant::now() + Duration::from_millis(30);
        let clock = RealClock::starting_at(zero);
        let mut timer = clock.timer().unwrap();
        assert_eq!(clock.now_ns(), 0);
        let asked = Instant::now();
        // Without a hand-over tick or an answer to wake it, the loop waits on the timer alone.
        let woke =
            tokio::time::timeout(Duration::from_secs(5), timer.sleep_until_ns(1_000_000)).await;
        assert!(woke.is_ok(), "the timer never woke after the clock's zero");
        assert!(
            Instant::now() >= zero + Duration::from_millis(1),
            "never early"
        );
        assert!(asked.elapsed() < Duration::from_secs(5));
    }

    /// A wait cancelled before its moment, asked again after the moment, still counts as a
    /// sleep: the engine drops its timer's future whenever an answer comes first.
    #[tokio::test(flavor = "current_thread")]
    async fn a_cancelled_wait_is_still_a_sleep_for_its_moment() {
        let clock = RealClock::start_now();
        let mut timer = clock.timer().unwrap();
        // Far enough away that a busy machine cannot reach it before the first wait ends.
        let target = clock.now_ns() + 200_000_000;
        let first = tokio::time::timeout(Duration::from_millis(1), timer.sleep_until_ns(target));
        assert!(first.await.is_err(), "the moment is 200 ms away");
        std::thread::sleep(Duration::from_millis(250));
        let late = timer.sleep_until_ns(target).await.expect("slept for it");
        assert!(
            late >= 40_000_000,
            "came at least 40 ms late, came {late} ns late"
        );
        // Handed back once only.
        assert_eq!(timer.sleep_until_ns(target).await, None);
        // Set ahead of a moment, then held up past it: the wake-up comes late by as much.
        let target = clock.now_ns() + 2_000_000;
        timer.set(target);
        std::thread::sleep(Duration::from_millis(10));
        let late = timer.sleep_until_ns(target).await.expect("set for it");
        assert!(
            late >= 8_000_000,
            "came at least 8 ms late, came {late} ns late"
        );
    }
}
