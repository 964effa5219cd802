//! When each request is meant to start, and which worker sends it.
//!
//! Open loop: one global schedule, request i intended at `i / rate` (or at Poisson arrival
//! times), dealt round-robin to the workers (request i to worker i mod W), each of which sends
//! its requests at their intended times. Nothing is skipped or dropped; a request that waits
//! for a free in-flight slot keeps its intended start, so its response time includes the
//! wait. Closed loop: a worker takes a new request whenever it has a free slot; the intended
//! start is the send.
//!
//! Times are u64 nanoseconds since the run's start (584 years) and counts u64. What would go
//! beyond them (a schedule's time, the number of requests due at a rate no client keeps)
//! saturates at `u64::MAX` instead of wrapping, and says so ([`Arrivals::overflowed`],
//! [`overdue`], [`Progress::backlog`], [`End::overflows`]): the run is then not valid.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// How intended starts are spaced in an open-loop run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrivalKind {
    /// Evenly: request i at i / rate.
    Fixed,
    /// A Poisson process of the same mean rate: exponential gaps, seeded.
    Poisson,
}

/// Intended start times of an open-loop schedule, in order, in ns since the run's start.
#[derive(Debug)]
pub struct Arrivals {
    kind: ArrivalKind,
    period_ns: f64,
    /// The sequence number of the next arrival.
    pub next_seq: u64,
    poisson_t: f64,
    rng: SmallRng,
    /// An intended start or a sequence number went beyond u64 and saturated.
    overflowed: bool,
}

impl Arrivals {
    /// The schedule at `rate` requests per second.
    pub fn new(kind: ArrivalKind, rate_per_s: f64, seed: u64) -> Self {
        Arrivals {
            kind,
            period_ns: 1e9 / rate_per_s,
            next_seq: 0,
            poisson_t: 0.0,
            rng: SmallRng::seed_from_u64(seed ^ 0xA221_7A15),
            overflowed: false,
        }
    }

    /// Whether an intended start (or a sequence number) went beyond u64 and saturated at
    /// `u64::MAX`: the schedule no longer says when its requests are due.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }
}

/// `x` rounded down to a whole u64, or `None` when it is beyond u64 (or not a number): `as u64`
/// would quietly give `u64::MAX` (or 0).
pub fn to_u64(x: f64) -> Option<u64> {
    // `u64::MAX as f64` is 2^64 itself, the first value beyond.
    (x >= 0.0 && x < u64::MAX as f64).then_some(x as u64)
}

/// Requests due in the `late_ns` since the intended start of the first of them, that one
/// included, at `rate_per_s`; `None` when they are more than u64 counts (a rate no client
/// keeps).
pub fn overdue(late_ns: u64, rate_per_s: f64) -> Option<u64> {
    to_u64(late_ns as f64 * rate_per_s / 1e9)?.checked_add(1)
}

impl Iterator for Arrivals {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let seq = self.next_seq;
        match seq.checked_add(1) {
            Some(next) => self.next_seq = next,
            None => self.overflowed = true,
        }
        let t = match self.kind {
            // Computed from i, not accumulated, so rounding never drifts.
            ArrivalKind::Fixed => seq as f64 * self.period_ns,
            ArrivalKind::Poisson => {
                let t = self.poisson_t;
                let u: f64 = self.rng.random::<f64>().max(f64::MIN_POSITIVE);
                self.poisson_t += -u.ln() * self.period_ns;
                t
            }
        };
        Some(to_u64(t).unwrap_or_else(|| {
            self.overflowed = true;
            u64::MAX
        }))
    }
}

/// One request handed to a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    /// The request's sequence number in this run (values derive from it).
    pub seq: u64,
    /// When it was meant to start, ns since the run's start.
    pub intended_ns: u64,
}

/// When a run ends: the measured part lasts `duration_ns`, or has `ops` requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    /// Requests intended before this belong to the warmup.
    pub warmup_ns: u64,
    /// Length of the measured part, if bounded by time.
    pub duration_ns: Option<u64>,
    /// Requests in the measured part, if bounded by count.
    pub ops: Option<u64>,
}

impl End {
    /// Whether a request intended at `t_ns`, after `measured` measured requests, is past the end.
    pub fn is_past(&self, t_ns: u64, measured: u64) -> bool {
        if t_ns < self.warmup_ns {
            return false;
        }
        self.duration_ns
            .is_some_and(|d| t_ns >= self.warmup_ns.saturating_add(d))
            || self.ops.is_some_and(|n| measured >= n)
    }

    /// Whether the end by time lies at or beyond `u64::MAX` ns (584 years): the warmup, the
    /// duration (see [`ns_from_s`]) or their sum saturated, and the schedule cannot say when
    /// it ends.
    pub fn overflows(&self) -> bool {
        let end = match self.duration_ns {
            Some(d) => self.warmup_ns.checked_add(d),
            None => Some(self.warmup_ns),
        };
        end.is_none_or(|end| end == u64::MAX)
    }
}

/// Seconds as the schedule's nanoseconds, rounded down; `u64::MAX` (which [`End::overflows`]
/// reads as overflowed) when they are beyond u64, 0 below zero.
pub fn ns_from_s(seconds: f64) -> u64 {
    to_u64(seconds * 1e9).unwrap_or(if seconds > 0.0 { u64::MAX } else { 0 })
}

/// How many workers' overdue counts [`Progress`] keeps: the most workers a run has.
pub const MAX_WORKERS: usize = 256;

/// Counters shared by the workers and the collector.
#[derive(Debug)]
pub struct Progress {
    /// Set to end the run early (Ctrl-C, SIGTERM, every request failing).
    pub stop: AtomicBool,
    /// Per worker: requests past their intended start and not yet sent, as of its last look.
    overdue: Vec<AtomicU64>,
    /// Per worker: requests sent and not yet answered, as of its last look.
    in_flight: Vec<AtomicU64>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            stop: AtomicBool::new(false),
            overdue: (0..MAX_WORKERS).map(|_| AtomicU64::new(0)).collect(),
            in_flight: (0..MAX_WORKERS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl Progress {
    /// Requests due but not yet sent, summed over the workers: the client's backlog; `None`
    /// when the sum is more than u64 counts (a worker's own count that overflowed is
    /// `u64::MAX`, and its worker says so).
    pub fn backlog(&self) -> Option<u64> {
        self.overdue
            .iter()
            .map(|o| o.load(Ordering::Relaxed))
            .try_fold(0, u64::checked_add)
    }

    /// A worker's latest count of overdue requests (`u64::MAX` when it overflowed).
    pub fn set_overdue(&self, worker: usize, count: u64) {
        self.overdue[worker % MAX_WORKERS].store(count, Ordering::Relaxed);
    }

    /// Requests sent and not yet answered, summed over the workers as of their last looks.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
            .iter()
            .map(|o| o.load(Ordering::Relaxed))
            .fold(0, u64::saturating_add)
    }

    /// A worker's latest count of requests in flight: set with its overdue count, a few
    /// times an interval, never per request.
    pub fn set_in_flight(&self, worker: usize, count: u64) {
        self.in_flight[worker % MAX_WORKERS].store(count, Ordering::Relaxed);
    }
}

/// The share of a run's sequence numbers a process sends: those ≡ `index` (mod `count`).
/// A single process sends them all ([`Share::WHOLE`]); worker K of a fleet of N sends
/// `index` K − 1 of `count` N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// From 0.
    pub index: u64,
    /// At least 1.
    pub count: u64,
}

impl Share {
    /// Every request.
    pub const WHOLE: Share = Share { index: 0, count: 1 };

    /// The `n`-th (from 0) sequence number of this share.
    pub fn nth(self, n: u64) -> u64 {
        self.index + self.count * n
    }

    /// This share's part of `whole`, a quantity of the whole schedule (its rate per second,
    /// its number of requests): one `count`-th of it, every residue sending as many. The one
    /// place a process's part of a fleet's load is worked out.
    pub fn of(self, whole: f64) -> f64 {
        whole / self.count.max(1) as f64
    }

    /// One lane's part of `whole` when this share is dealt over `lanes` lanes (a process's
    /// worker threads): [`Share::of`], divided evenly among them.
    pub fn per_lane(self, whole: f64, lanes: usize) -> f64 {
        self.of(whole) / lanes.max(1) as f64
    }
}

/// How many of the sequence numbers `0..total` belong to `share`.
pub fn share_of(total: u64, share: Share) -> u64 {
    let count = share.count.max(1);
    if share.index >= total {
        return 0;
    }
    (total - share.index).div_ceil(count)
}

/// The most requests of other workers (or other processes) one draw skips before it
/// returns without a ticket of its own, so that the worker can look at the clock and the
/// stop signal. Only a schedule no client can keep comes near it: with a rate so high that
/// every request is intended at the same nanosecond, one slot holds the whole run, and a
/// worker that owns none of it would otherwise skip for ever.
pub const SKIP_BUDGET: u64 = 1 << 16;

/// One worker's share of the open-loop schedule: every W-th request of the global sequence.
#[derive(Debug)]
pub struct WorkerSchedule {
    arrivals: Arrivals,
    /// The process's share of the sequence numbers (a fleet's worker's residue).
    process: Share,
    /// This worker's number among the process's, and how many it has.
    thread: u64,
    threads: u64,
    /// Deal the schedule by slots of this length (0: request by request).
    slot_ns: u64,
    end: End,
    /// Requests of the measured part before the next arrival, over all workers.
    measured_before: u64,
    done: bool,
    /// Tickets drawn ahead by [`WorkerSchedule::last_within`], in order.
    ahead: std::collections::VecDeque<Ticket>,
}

impl WorkerSchedule {
    /// Worker `thread` of the `threads` of a process that sends the share `process` of the
    /// sequence numbers. Every worker walks the same global sequence (the same seed for
    /// Poisson arrivals) and keeps its own requests: those of its process's share, and of
    /// these its own (by request, or by slot with [`WorkerSchedule::by_slots`]), so that
    /// together they send it all.
    pub fn new(
        arrivals: Arrivals,
        process: Share,
        thread: usize,
        threads: usize,
        end: End,
    ) -> Self {
        WorkerSchedule {
            arrivals,
            process,
            thread: thread as u64,
            threads: threads.max(1) as u64,
            slot_ns: 0,
            end,
            measured_before: 0,
            done: false,
            ahead: std::collections::VecDeque::new(),
        }
    }

    /// Deals the process's share by slots of `slot_ns` (the send resolution): its requests
    /// intended in slot S go to worker S mod W, instead of its I-th request to worker I mod W. A worker then
    /// sends a whole slot's requests in one burst, one wake-up, one write, as a single worker
    /// would, and W workers together wake as often as one: with the requests dealt one by one
    /// each worker would wake for every slot, with a W-th of its requests, and the wake-ups,
    /// timer settings and writes per request would grow with W.
    pub fn by_slots(mut self, slot_ns: u64) -> Self {
        self.slot_ns = slot_ns;
        self
    }

    /// This worker's next request; `None` once the run's end is reached
    /// ([`WorkerSchedule::is_over`]), or for now, when [`SKIP_BUDGET`] requests of others
    /// were skipped without one of its own: ask again.
    pub fn next_ticket(&mut self) -> Option<Ticket> {
        self.ahead.pop_front().or_else(|| self.draw())
    }

    /// Whether an intended start or a sequence number of the schedule saturated (see
    /// [`Arrivals::overflowed`]).
    pub fn overflowed(&self) -> bool {
        self.arrivals.overflowed()
    }

    /// Whether this worker's share is all drawn: [`WorkerSchedule::next_ticket`] returns
    /// `None` from now on.
    pub fn is_over(&self) -> bool {
        self.done && self.ahead.is_empty()
    }

    /// The latest intended start of this worker's requests in `[from, from + span]`, looking
    /// ahead without consuming them (`from` itself when there is none).
    pub fn last_within(&mut self, from: u64, span: u64) -> u64 {
        let limit = from.saturating_add(span);
        loop {
            match self.ahead.back() {
                Some(t) if t.intended_ns > limit => break,
                _ if self.ahead.len() >= 1024 => break,
                _ => match self.draw() {
                    Some(t) => self.ahead.push_back(t),
                    None => break,
                },
            }
        }
        self.ahead
            .iter()
            .map(|t| t.intended_ns)
            .filter(|&t| t <= limit)
            .max()
            .unwrap_or(from)
            .max(from)
    }

    fn draw(&mut self) -> Option<Ticket> {
        let mut skipped = 0u64;
        while !self.done {
            if skipped == SKIP_BUDGET {
                return None;
            }
            skipped += 1;
            let seq = self.arrivals.next_seq;
            let intended_ns = self.arrivals.next()?;
            if self.end.is_past(intended_ns, self.measured_before) {
                self.done = true;
                break;
            }
            if intended_ns >= self.end.warmup_ns {
                self.measured_before += 1;
            }
            if seq % self.process.count != self.process.index {
                // Another process's (a fleet's other worker).
                continue;
            }
            let owner = intended_ns
                .checked_div(self.slot_ns)
                .unwrap_or(seq / self.process.count);
            if owner % self.threads == self.thread {
                return Some(Ticket { seq, intended_ns });
            }
        }
        None
    }
}

/// Closed loop: one worker's requests, each intended when taken (a slot is free).
///
/// Worker K of W numbers its requests K, K + W, K + 2W, ... of the process's share of the
/// sequence numbers and, when the measured part is a count of requests (the process's),
/// takes its share of it (W shares as even as whole numbers allow): with no warmup the
/// workers together send exactly the process's sequence numbers below the count, as a
/// populate needs, and no counter is shared between them.
#[derive(Debug)]
pub struct ClosedSchedule {
    process: Share,
    worker: u64,
    workers: u64,
    end: End,
    /// Requests taken so far.
    taken: u64,
    /// Requests of the measured part taken so far.
    measured: u64,
}

impl ClosedSchedule {
    /// Worker `worker` of `workers` of a process that sends the share `process`.
    pub fn new(process: Share, worker: usize, workers: usize, end: End) -> ClosedSchedule {
        let workers = workers.max(1) as u64;
        let worker = worker as u64 % workers;
        let end = End {
            ops: end
                .ops
                .map(|n| n / workers + u64::from(worker < n % workers)),
            ..end
        };
        ClosedSchedule {
            process,
            worker,
            workers,
            end,
            taken: 0,
            measured: 0,
        }
    }

    /// The next request, intended now; None when the run is over (or stopped).
    pub fn take<C: super::clock::Clock>(
        &mut self,
        clock: &C,
        progress: &Progress,
    ) -> Option<Ticket> {
        if progress.stop.load(Ordering::Relaxed) {
            return None;
        }
        let now = clock.now_ns();
        if self.end.is_past(now, self.measured) {
            return None;
        }
        if now >= self.end.warmup_ns {
            self.measured += 1;
        }
        let seq = self.process.nth(self.worker + self.taken * self.workers);
        self.taken += 1;
        Some(Ticket {
            seq,
            intended_ns: now,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::{Clock, TokioClock};

    #[test]
    fn fixed_arrivals_are_exact_and_poisson_has_the_mean_rate() {
        let fixed: Vec<u64> = Arrivals::new(ArrivalKind::Fixed, 3.0, 1).take(4).collect();
        assert_eq!(fixed, [0, 333_333_333, 666_666_666, 1_000_000_000]);
        let far = Arrivals::new(ArrivalKind::Fixed, 20_000.0, 1)
            .nth(20_000_000)
            .unwrap();
        assert_eq!(far, 1_000_000_000_000, "no drift after 20M requests");
        let n = 100_000;
        let last = Arrivals::new(ArrivalKind::Poisson, 1000.0, 7)
            .nth(n)
            .unwrap();
        let mean_gap_ms = last as f64 / n as f64 / 1e6;
        assert!((mean_gap_ms - 1.0).abs() < 0.01, "{mean_gap_ms}");
        let a: Vec<u64> = Arrivals::new(ArrivalKind::Poisson, 1000.0, 7)
            .take(5)
            .collect();
        let b: Vec<u64> = Arrivals::new(ArrivalKind::Poisson, 1000.0, 7)
            .take(5)
            .collect();
        assert_eq!(a, b, "seeded");
    }

    /// Past 2^64 ns (584 years) an intended start saturates and the schedule says so; the
    /// requests before it keep their exact times.
    #[test]
    fn an_intended_start_beyond_u64_saturates_and_is_marked() {
        // One request in 128 s: request 144 115 189 is the first past 2^64 ns.
        let mut arrivals = Arrivals::new(ArrivalKind::Fixed, 1.0 / 128.0, 0);
        arrivals.next_seq = 144_115_188;
        assert_eq!(arrivals.next(), Some(144_115_188 * 128_000_000_000));
        assert!(!arrivals.overflowed());
        assert_eq!(arrivals.next(), Some(u64::MAX));
        assert!(arrivals.overflowed());
        let mut arrivals = Arrivals::new(ArrivalKind::Fixed, 1e9, 0);
        arrivals.next_seq = u64::MAX;
        arrivals.next();
        assert!(
            arrivals.overflowed(),
            "the last sequence number has no next"
        );
    }

    #[test]
    fn figures_beyond_u64_are_none_not_u64_max() {
        assert_eq!(to_u64(0.0), Some(0));
        assert_eq!(to_u64(2.9), Some(2));
        assert_eq!(to_u64(18_446_744_073_709_549_568.0), Some(u64::MAX - 2047));
        for beyond in [u64::MAX as f64, 1e99, f64::INFINITY, f64::NAN, -1.0] {
            assert_eq!(to_u64(beyond), None, "{beyond}");
        }
        // The overdue count: the first unsent request and those due since.
        assert_eq!(overdue(0, 1000.0), Some(1));
        assert_eq!(overdue(1_000_000_000, 1000.0), Some(1001));
        assert_eq!(overdue(3_600_000_000_000, 1e9), Some(3_600_000_000_001));
        // `--rate 1e99` a second behind: once u64::MAX, and judged valid.
        assert_eq!(overdue(1_000_000_000, 1e99), None);
        assert_eq!(ns_from_s(1.5), 1_500_000_000);
        assert_eq!(ns_from_s(700.0 * 365.0 * 86_400.0), u64::MAX);
        assert_eq!(ns_from_s(-1.0), 0);
    }

    #[test]
    fn a_backlog_beyond_u64_is_none_not_wrapped() {
        let progress = Progress::default();
        progress.set_overdue(0, 5);
        progress.set_overdue(3, 7);
        assert_eq!(progress.backlog(), Some(12));
        progress.set_overdue(1, u64::MAX - 12);
        assert_eq!(progress.backlog(), Some(u64::MAX));
        progress.set_overdue(2, 1);
        assert_eq!(progress.backlog(), None);
    }

    /// An end beyond 584 years saturates: it neither wraps to the start (ending the run at
    /// once) nor panics, and it is marked.
    #[test]
    fn an_end_beyond_u64_saturates_and_is_marked() {
        let far = End {
            warmup_ns: 10_000_000_000,
            duration_ns: Some(ns_from_s(700.0 * 365.0 * 86_400.0)),
            ops: None,
        };
        assert!(!far.is_past(20_000_000_000, 5));
        assert!(!far.is_past(u64::MAX - 1, 5));
        assert!(far.overflows());
        let near = End {
            warmup_ns: 10_000_000_000,
            duration_ns: Some(ns_from_s(100.0 * 365.0 * 86_400.0)),
            ops: None,
        };
        assert!(!near.overflows());
        let by_ops = End {
            warmup_ns: 0,
            duration_ns: None,
            ops: Some(u64::MAX),
        };
        assert!(!by_ops.overflows(), "a count has no end in time");
    }

    #[test]
    fn the_end_counts_time_or_measured_requests_after_warmup() {
        let by_time = End {
            warmup_ns: 10,
            duration_ns: Some(100),
            ops: None,
        };
        assert!(!by_time.is_past(5, 0));
        assert!(!by_time.is_past(109, 1000));
        assert!(by_time.is_past(110, 0));
        let by_ops = End {
            warmup_ns: 10,
            duration_ns: None,
            ops: Some(3),
        };
        assert!(!by_ops.is_past(5, 3), "warmup requests do not count");
        assert!(!by_ops.is_past(50, 2));
        assert!(by_ops.is_past(50, 3));
    }

    #[test]
    fn workers_share_the_global_schedule_exactly() {
        let end = End {
            warmup_ns: 0,
            duration_ns: Some(1_000_000_000),
            ops: None,
        };
        let mut all = Vec::new();
        for worker in 0..3 {
            let mut schedule = WorkerSchedule::new(
                Arrivals::new(ArrivalKind::Fixed, 100.0, 0),
                Share::WHOLE,
                worker,
                3,
                end,
            );
            while let Some(t) = schedule.next_ticket() {
                assert_eq!(t.seq % 3, worker as u64);
                all.push(t);
            }
        }
        all.sort_by_key(|t| t.seq);
        assert_eq!(
            all.len(),
            100,
            "a 1 s run at 100/s has 100 requests, none skipped"
        );
        for (i, t) in all.iter().enumerate() {
            assert_eq!((t.seq, t.intended_ns), (i as u64, i as u64 * 10_000_000));
        }
    }

    #[test]
    fn processes_of_a_fleet_and_their_threads_share_one_poisson_schedule() {
        let end = End {
            warmup_ns: 100_000_000,
            duration_ns: Some(1_000_000_000),
            ops: None,
        };
        let one: Vec<Ticket> = {
            let mut s = WorkerSchedule::new(
                Arrivals::new(ArrivalKind::Poisson, 500.0, 3),
                Share::WHOLE,
                0,
                1,
                end,
            );
            std::iter::from_fn(|| s.next_ticket()).collect()
        };
        // Three processes, of 2, 1 and 4 threads, the last dealing its share by 1 ms slots.
        let mut fleet = Vec::new();
        for (process, threads, slot_ns) in [(0, 2, 0), (1, 1, 0), (2, 4, 1_000_000)] {
            let share = Share {
                index: process,
                count: 3,
            };
            for thread in 0..threads {
                let mut s = WorkerSchedule::new(
                    Arrivals::new(ArrivalKind::Poisson, 500.0, 3),
                    share,
                    thread,
                    threads,
                    end,
                )
                .by_slots(slot_ns);
                while let Some(t) = s.next_ticket() {
                    assert_eq!(t.seq % 3, process, "a process sends only its residue");
                    fleet.push(t);
                }
            }
        }
        fleet.sort_by_key(|t| t.seq);
        assert!(one.len() > 500);
        assert_eq!(
            fleet, one,
            "the fleet sends the single process's schedule, each once"
        );
    }

    #[test]
    fn looking_ahead_does_not_consume() {
        let end = End {
            warmup_ns: 0,
            duration_ns: Some(1_000_000_000),
            ops: None,
        };
        let mut schedule = WorkerSchedule::new(
            Arrivals::new(ArrivalKind::Fixed, 1000.0, 0),
            Share::WHOLE,
            0,
            1,
            end,
        );
        let first = schedule.next_ticket().unwrap();
        assert_eq!(
            schedule.last_within(first.intended_ns, 2_500_000),
            2_000_000
        );
        assert_eq!(schedule.last_within(first.intended_ns, 0), 0);
        let rest: Vec<u64> = std::iter::from_fn(|| schedule.next_ticket())
            .map(|t| t.seq)
            .collect();
        assert_eq!(rest, (1..1000).collect::<Vec<_>>());
    }

    #[test]
    fn an_op_count_ends_the_schedule_after_the_warmup() {
        let end = End {
            warmup_ns: 50_000_000,
            duration_ns: None,
            ops: Some(7),
        };
        let mut count = 0;
        for worker in 0..2 {
            let mut schedule = WorkerSchedule::new(
                Arrivals::new(ArrivalKind::Poisson, 100.0, 9),
                Share::WHOLE,
                worker,
                2,
                end,
            );
            while schedule.next_ticket().is_some() {
                count += 1;
            }
        }
        let warmup = Arrivals::new(ArrivalKind::Poisson, 100.0, 9)
            .take_while(|&t| t < 50_000_000)
            .count();
        assert_eq!(count, warmup + 7);
    }

    #[tokio::test(start_paused = true)]
    async fn closed_loop_tickets_are_intended_when_taken_and_stop_at_the_count() {
        let clock = TokioClock::start_now();
        let progress = Progress::default();
        let end = End {
            warmup_ns: 0,
            duration_ns: None,
            ops: Some(5),
        };
        let mut seqs = Vec::new();
        let mut schedule = ClosedSchedule::new(Share::WHOLE, 0, 1, end);
        while let Some(ticket) = schedule.take(&clock, &progress) {
            assert_eq!(ticket.intended_ns, clock.now_ns());
            seqs.push(ticket.seq);
            tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        }
        assert_eq!(seqs, [0, 1, 2, 3, 4]);
        // Worker 2 of a fleet of 3, its share of 5 rows over two threads.
        let share = Share { index: 1, count: 3 };
        let mut seqs = Vec::new();
        for thread in 0..2 {
            let mut closed = ClosedSchedule::new(share, thread, 2, end);
            while let Some(ticket) = closed.take(&clock, &progress) {
                seqs.push(ticket.seq);
            }
        }
        seqs.sort();
        assert_eq!(
            seqs,
            [1, 4, 7, 10, 13],
            "a fleet worker's rows: its residue only"
        );
    }

    #[test]
    fn shares_add_up_to_the_total() {
        for total in [0u64, 1, 2, 7, 10, 1001] {
            for count in 1..=5u64 {
                let share = |index| Share { index, count };
                let sum: u64 = (0..count).map(|k| share_of(total, share(k))).sum();
                assert_eq!(sum, total, "{total} over {count}");
                for k in 0..count {
                    let direct = (0..total).filter(|i| i % count == k).count() as u64;
                    assert_eq!(share_of(total, share(k)), direct);
                }
            }
        }
    }

    /// A fleet's residues each send a count-th of the rate, together the whole, and the
    /// lanes of one residue a lane-th of its part; a count of 0 (a hand-edited file) is one.
    #[test]
    fn a_share_of_a_rate_is_a_count_th_of_it_and_a_lane_a_lane_th_of_that() {
        let share = |index, count| Share { index, count };
        assert_eq!(Share::WHOLE.of(9000.0), 9000.0);
        assert_eq!(share(1, 3).of(9000.0), 3000.0);
        let parts: f64 = (0..4).map(|k| share(k, 4).of(1000.0)).sum();
        assert_eq!(parts, 1000.0);
        assert_eq!(share(0, 0).of(500.0), 500.0);
        assert_eq!(share(2, 3).per_lane(9000.0, 4), 750.0);
        assert_eq!(Share::WHOLE.per_lane(100.0, 0), 100.0);
    }

    #[tokio::test(start_paused = true)]
    async fn closed_loop_workers_share_the_count_without_a_shared_counter() {
        let clock = TokioClock::start_now();
        let progress = Progress::default();
        let end = End {
            warmup_ns: 0,
            duration_ns: None,
            ops: Some(11),
        };
        let mut seqs = Vec::new();
        for worker in 0..3 {
            let mut schedule = ClosedSchedule::new(Share::WHOLE, worker, 3, end);
            while let Some(ticket) = schedule.take(&clock, &progress) {
                seqs.push(ticket.seq);
            }
        }
        seqs.sort();
        assert_eq!(seqs, (0..11).collect::<Vec<_>>());
    }
}
