//! When each request is meant to start, and who hands requests out.
//!
//! Open loop: one global schedule, request i intended at `i / rate` (or at Poisson arrival
//! times). The dispatcher releases each request when its time comes, never skips one and
//! never drops one; a request that waits for a free in-flight slot keeps its intended start,
//! so the wait is part of its response time. Closed loop: each worker sends its next request
//! when the previous one answers; the intended start is the send.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use super::clock::Clock;

/// How intended starts are spaced in an open-loop run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
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
    next_seq: u64,
    poisson_t: f64,
    rng: SmallRng,
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
        }
    }
}

impl Iterator for Arrivals {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let seq = self.next_seq;
        self.next_seq += 1;
        Some(match self.kind {
            // Computed from i, not accumulated, so rounding never drifts.
            ArrivalKind::Fixed => (seq as f64 * self.period_ns) as u64,
            ArrivalKind::Poisson => {
                let t = self.poisson_t;
                let u: f64 = self.rng.random::<f64>().max(f64::MIN_POSITIVE);
                self.poisson_t += -u.ln() * self.period_ns;
                t as u64
            }
        })
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
        self.duration_ns.is_some_and(|d| t_ns >= self.warmup_ns + d)
            || self.ops.is_some_and(|n| measured >= n)
    }
}

/// Counters shared by whoever releases requests and the workers that take them.
#[derive(Debug, Default)]
pub struct Progress {
    /// Requests released by the schedule so far.
    pub released: AtomicU64,
    /// Requests workers have started sending.
    pub sent: AtomicU64,
    /// Requests in the measured part released so far.
    pub measured: AtomicU64,
    /// Set to end the run early (Ctrl-C, SIGTERM, every request failing).
    pub stop: AtomicBool,
}

impl Progress {
    /// Requests released but not yet sent: the client's backlog.
    pub fn backlog(&self) -> u64 {
        self.released
            .load(Ordering::Relaxed)
            .saturating_sub(self.sent.load(Ordering::Relaxed))
    }
}

/// Releases open-loop requests at their intended times into `queue`, until the end or a stop.
/// A full queue (every worker busy and the queue at capacity) delays the release but never
/// changes the intended start of the requests behind it.
pub async fn dispatch<C: Clock>(
    clock: C,
    arrivals: Arrivals,
    end: End,
    progress: Arc<Progress>,
    queue: async_channel::Sender<Ticket>,
) {
    let mut measured = 0u64;
    for (seq, intended_ns) in arrivals.enumerate() {
        if end.is_past(intended_ns, measured) || progress.stop.load(Ordering::Relaxed) {
            break;
        }
        if intended_ns > clock.now_ns() {
            clock.sleep_until_ns(intended_ns).await;
        }
        if intended_ns >= end.warmup_ns {
            measured += 1;
            progress.measured.store(measured, Ordering::Relaxed);
        }
        progress.released.fetch_add(1, Ordering::Relaxed);
        if queue
            .send(Ticket {
                seq: seq as u64,
                intended_ns,
            })
            .await
            .is_err()
        {
            break;
        }
    }
}

/// Where a worker gets its next request.
#[derive(Debug, Clone)]
pub enum TicketSource<C: Clock> {
    /// From the open-loop dispatcher.
    Open(async_channel::Receiver<Ticket>),
    /// Closed loop: a new request whenever asked, intended now.
    Closed {
        /// The run's clock.
        clock: C,
        /// The end of the run.
        end: End,
        /// Shared counters; `released` numbers the requests.
        progress: Arc<Progress>,
    },
}

impl<C: Clock> TicketSource<C> {
    /// The next request, or `None` when the run is over.
    pub async fn next(&self) -> Option<Ticket> {
        match self {
            TicketSource::Open(queue) => queue.recv().await.ok(),
            TicketSource::Closed {
                clock,
                end,
                progress,
            } => {
                if progress.stop.load(Ordering::Relaxed) {
                    return None;
                }
                let now = clock.now_ns();
                let measured = progress.measured.load(Ordering::Relaxed);
                if end.is_past(now, measured) {
                    return None;
                }
                if now >= end.warmup_ns {
                    let before = progress.measured.fetch_add(1, Ordering::Relaxed);
                    if end.ops.is_some_and(|n| before >= n) {
                        return None;
                    }
                }
                let seq = progress.released.fetch_add(1, Ordering::Relaxed);
                Some(Ticket {
                    seq,
                    intended_ns: now,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::clock::TokioClock;

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

    /// The schedule under tokio's paused clock: every request released exactly at its
    /// intended time, none skipped, and a stalled consumer delays releases without moving
    /// any intended start.
    #[tokio::test(start_paused = true)]
    async fn dispatch_releases_on_time_and_never_skips() {
        let clock = TokioClock::start_now();
        let progress = Arc::new(Progress::default());
        let (tx, rx) = async_channel::bounded(4);
        let end = End {
            warmup_ns: 0,
            duration_ns: Some(1_000_000_000),
            ops: None,
        };
        let arrivals = Arrivals::new(ArrivalKind::Fixed, 100.0, 0);
        let dispatcher = tokio::spawn(dispatch(clock, arrivals, end, progress.clone(), tx));
        let mut received = Vec::new();
        while let Ok(ticket) = rx.recv().await {
            received.push((ticket, clock.now_ns()));
            if ticket.seq == 10 {
                // The consumer stalls for 300 ms: the queue fills, releases wait.
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            }
        }
        dispatcher.await.unwrap();
        assert_eq!(received.len(), 100, "a 1 s run at 100/s has 100 requests");
        for (i, (ticket, _)) in received.iter().enumerate() {
            assert_eq!(ticket.seq, i as u64);
            assert_eq!(
                ticket.intended_ns,
                i as u64 * 10_000_000,
                "intended starts never move"
            );
        }
        for (ticket, got_at) in &received[..=10] {
            assert_eq!(*got_at, ticket.intended_ns, "released exactly on time");
        }
        // After the stall, the backlog is handed out at once, then the schedule resumes.
        let late: Vec<u64> = received[11..16]
            .iter()
            .map(|(t, at)| at - t.intended_ns)
            .collect();
        assert!(late[0] > 250_000_000, "{late:?}");
        let last = received.last().unwrap();
        assert_eq!(last.1, last.0.intended_ns, "caught up by the end");
        assert_eq!(progress.released.load(Ordering::Relaxed), 100);
    }

    #[tokio::test(start_paused = true)]
    async fn closed_loop_tickets_are_intended_when_taken_and_stop_at_the_count() {
        let clock = TokioClock::start_now();
        let progress = Arc::new(Progress::default());
        let end = End {
            warmup_ns: 0,
            duration_ns: None,
            ops: Some(5),
        };
        let source = TicketSource::Closed {
            clock,
            end,
            progress: progress.clone(),
        };
        let mut seqs = Vec::new();
        while let Some(ticket) = source.next().await {
            assert_eq!(ticket.intended_ns, clock.now_ns());
            seqs.push(ticket.seq);
            tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        }
        assert_eq!(seqs, [0, 1, 2, 3, 4]);
    }
}
