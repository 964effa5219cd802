//! The load engine: workers send requests on a schedule and record what happened; a
//! collector adds the workers' records up at every interval end.
//!
//! - Open loop ([`LoadMode::Open`]): one global schedule of intended starts (see
//!   [`schedule`]), dealt round-robin to the workers; each worker wakes for its requests on a
//!   precise timer ([`clock`]); at most `max_in_flight` requests are in flight; a request
//!   waiting for a slot keeps its intended start, so its response time includes the wait.
//! - Closed loop ([`LoadMode::Closed`]): a fixed number of requests in flight; response time
//!   equals service time (and hides stalls: coordinated omission).
//!
//! Workers are tokio tasks, one per lane ([`crate::lanes`]: a thread with a runtime of its
//! own), each keeping many requests in flight and recording into histograms and counters of
//! its own: no lock and no shared counter on the hot path, so the cost of a request does not
//! grow with the number of threads. What workers share is read-only per request (the stop
//! flag) or written a few times a second (each worker's backlog, its interval's records sent
//! to the collector). At each interval end a worker hands its histograms to the collector,
//! which merges them and passes the interval to an [`IntervalSink`] (files, live output).
//! The closed loop's workers number their requests and count the measured ones each on
//! its own ([`schedule::ClosedSchedule`]).
//!
//! The client's hiccups (METHOD.md §6) are measured by the workers' own loops: every time a
//! worker's timer wakes it, the worker records how much later than asked the wake-up came,
//! and the first worker never sleeps longer than [`HICCUP_TICK`], so that a stall of the
//! client shows within a millisecond even when nothing is due
//! (docs/decisions/0005-client-hiccups-from-the-workers-own-wake-ups.md). When the open loop
//! is dealt by slots of the send resolution to W workers, each never sleeps longer than W
//! ticks instead, their ticks a tick apart (docs/decisions/0008-one-runtime-per-client-thread.md).
//!
//! The engine times requests out itself ([`EngineConfig::request_timeout`]): the same timer
//! that wakes a worker for its next send also wakes it for the earliest deadline among its
//! requests in flight, and the overdue ones end as timeout errors (see `in_flight`).
//!
//! This file holds the public types and [`run`]; the worker's loop is in `worker`, the
//! collector and the messages the workers send it in `collector`, and a request in flight
//! (with what its execution gives back) in `in_flight`.

pub mod clock;
mod collector;
mod in_flight;
pub mod schedule;
mod worker;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::metrics::OpHistograms;
use crate::workload::Workload;
use clock::Clock;
use collector::{Collector, Message};
use in_flight::NEVER;
use schedule::{Arrivals, ClosedSchedule, End, Progress, WorkerSchedule};

pub use schedule::Share;
use worker::{Source, WorkerContext};

pub use schedule::ArrivalKind;

/// Open or closed loop.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "loop", rename_all = "lowercase")]
pub enum LoadMode {
    /// Fixed rate: requests at intended times, latency from the intended start.
    Open {
        /// Requests per second.
        rate_per_s: f64,
        /// Fixed or Poisson spacing.
        arrivals: ArrivalKind,
        /// At most this many requests in flight; more wait in the client.
        max_in_flight: usize,
    },
    /// Fixed concurrency: each slot sends its next request when the previous one answers.
    Closed {
        /// Requests in flight at all times.
        concurrency: usize,
    },
}

impl LoadMode {
    /// What the latencies of this mode measure, said plainly.
    pub fn latency_kind(&self) -> &'static str {
        match self {
            LoadMode::Open { .. } => "response time (open loop: from each request's intended start, waits included)",
            LoadMode::Closed { .. } => "service time (closed loop: from the actual send; stalls are under-counted — coordinated omission)",
        }
    }
}

/// Everything the engine needs to know about one run.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Open or closed loop.
    pub mode: LoadMode,
    /// Warmup length and the measured part's length or count.
    pub end: End,
    /// Length of one interval (the live-output and histogram-log period).
    pub interval: Duration,
    /// Number of workers (one per lane, or per runtime thread without lanes).
    pub workers: usize,
    /// The threads the workers run on, worker K on lane K: each worker with the native
    /// sender's connections of its lane, nothing shared per request (see [`crate::lanes`]).
    /// None: the workers are tasks of the caller's runtime (tests, tokio's paused clock).
    pub lanes: Option<Arc<crate::lanes::Lanes>>,
    /// Sequence numbers start here (after the rows a populate wrote).
    pub first_seq: u64,
    /// Send only this operation type (populate), instead of the workload's mix.
    pub only_op: Option<usize>,
    /// Seed of the Poisson schedule.
    pub seed: u64,
    /// The share of the schedule's sequence numbers this process sends (a fleet's worker
    /// sends one residue of N; [`Share::WHOLE`] otherwise). Open loop: of the schedule at
    /// `rate_per_s`; closed loop: numbered `share.nth(0)`, `share.nth(1)`, ...
    pub share: Share,
    /// Record the client's hiccups (the lateness of the workers' wake-ups).
    pub hiccups: bool,
    /// Open loop: requests whose intended starts lie within this span are sent together,
    /// when the last of them is due (0: each at its own moment).
    pub send_resolution: Duration,
    /// A request without an answer this long after its send ends as a timeout error (the
    /// engine's own timer; the workload's statements have no driver timeout). `None`: no
    /// limit.
    pub request_timeout: Option<Duration>,
    /// Open loop: a measured request sent later than this after its intended start, without
    /// having waited for a free in-flight slot, counts as late by the client's own doing
    /// ([`Outcome::client_late`]). `None`: none is counted.
    pub lag_limit: Option<Duration>,
}

/// One finished interval: what every operation type did in it, and the client's hiccups.
#[derive(Debug, Clone)]
pub struct Interval {
    /// 0 for the first interval.
    pub index: u64,
    /// Start, ns since the run's start.
    pub start_ns: u64,
    /// Length in ns (the last interval may be shorter).
    pub length_ns: u64,
    /// Per operation type, per phase ([`Phase::index`](crate::metrics::Phase::index)).
    pub ops: Vec<[OpHistograms; 2]>,
    /// The client's hiccups in this interval, ns.
    pub hiccups: Option<Histogram<u64>>,
    /// Requests released but not yet sent at the interval's end (`u64::MAX` when the count
    /// overflowed: see [`Outcome::overflowed`]).
    pub backlog: u64,
    /// Requests sent and not yet answered at the interval's end (as the workers last
    /// looked, a quarter of an interval at most before).
    pub in_flight: u64,
}

/// Receives every interval, in order, as soon as it is complete.
pub trait IntervalSink {
    /// One finished interval.
    fn interval(&mut self, interval: &Interval);
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The measured part reached its duration or request count.
    Completed,
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// Every request failed for [`ALL_FAILING_LIMIT`].
    AllRequestsFailing,
}

/// How long every request may fail before the run gives up.
pub const ALL_FAILING_LIMIT: Duration = Duration::from_secs(10);

/// What a whole run did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Per operation type, per phase, over the whole run.
    pub totals: Vec<[OpHistograms; 2]>,
    /// The client's hiccups over the whole run.
    pub hiccups: Histogram<u64>,
    /// From the start to the last answer, ns.
    pub elapsed_ns: u64,
    /// Open loop: the measured period as scheduled and the requests answered within it
    /// (whatever their phase); see [`MeasuredPeriod`].
    pub measured_period: Option<MeasuredPeriod>,
    /// Requests sent.
    pub sent: u64,
    /// The largest backlog seen at an interval end.
    pub max_backlog: u64,
    /// Open loop: requests of the schedule that were never sent, because the client was
    /// still behind its schedule [`SEND_GRACE`] after the last intended start. Each is
    /// recorded as an `unsent` error of its op type and phase, up to [`UNSENT_COUNTED`] per
    /// worker; beyond that (a schedule no client could keep, such as `--rate 1e99`) the rest
    /// is estimated from the rate, so this is a count, or an estimate when it exceeds what
    /// the totals hold.
    pub unsent: f64,
    /// Open loop: measured requests that became due while every in-flight slot was taken,
    /// and so waited for the server to answer an earlier request.
    pub limit_waits: u64,
    /// Open loop: measured requests sent later than [`EngineConfig::lag_limit`] after their
    /// intended start without having waited for a slot: late by the client's doing.
    pub client_late: u64,
    /// Open loop: whether a worker that stopped sending with requests left was waiting for a
    /// free in-flight slot for the next of them: then the server, not the client, held those
    /// back.
    pub unsent_held: bool,
    /// Whether a count or time of the schedule went beyond what u64 holds and saturated at
    /// `u64::MAX` (the backlog at a rate no client keeps, an intended start or the end beyond
    /// 584 years, a sequence number): the figures that did are not the run's, and the
    /// measurement is not valid.
    pub overflowed: bool,
    /// Why the run ended.
    pub stop: StopReason,
}

/// Open loop: the measured part as the schedule lays it out, from the end of the warmup to
/// the intended end of the last request, and how many answers arrived within it.
///
/// Successful answers per second within this period is the achieved rate; failed requests
/// carry nothing and are reported beside it. Dividing the measured
/// requests by the time until the last answer instead would charge the last requests'
/// response time (already judged by the SLA) to throughput a second time: a 4 s trial whose
/// last answers take 45 ms would show 1.1% less than it carried. Counted this way, a client
/// or server that keeps up achieves the attempted rate within one request, and one that falls
/// behind shows its growing backlog as the shortfall.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredPeriod {
    /// Start, ns since the run's start.
    pub from_ns: u64,
    /// End, ns since the run's start.
    pub to_ns: u64,
    /// Successful answers that arrived in `[from_ns, to_ns)`.
    pub ok: u64,
    /// Failed requests that ended in `[from_ns, to_ns)`.
    pub failed: u64,
}

impl MeasuredPeriod {
    /// The period as `config` schedules it; none for a closed loop. An end beyond u64 ns
    /// saturates at `u64::MAX` (see [`MeasuredPeriod::overflows`]).
    fn scheduled(config: &EngineConfig) -> Option<MeasuredPeriod> {
        let LoadMode::Open { rate_per_s, .. } = config.mode else {
            return None;
        };
        let from_ns = config.end.warmup_ns;
        let length_ns = match (config.end.duration_ns, config.end.ops) {
            (Some(d), _) => d,
            (None, Some(n)) => schedule::to_u64(n as f64 * 1e9 / rate_per_s).unwrap_or(u64::MAX),
            (None, None) => return None,
        };
        Some(MeasuredPeriod {
            from_ns,
            to_ns: from_ns.saturating_add(length_ns.max(1)),
            ok: 0,
            failed: 0,
        })
    }

    /// Whether the period's end saturated at `u64::MAX` ns: it lies beyond 584 years (so
    /// many requests at so low a rate), and the schedule cannot say when it ends.
    fn overflows(&self) -> bool {
        self.to_ns == u64::MAX
    }

    fn contains(&self, t_ns: u64) -> bool {
        (self.from_ns..self.to_ns).contains(&t_ns)
    }

    /// Successful answers per second within the period.
    pub fn achieved_per_s(&self) -> f64 {
        self.ok as f64 * 1e9 / (self.to_ns - self.from_ns) as f64
    }

    /// Failed requests per second within the period.
    pub fn failed_per_s(&self) -> f64 {
        self.failed as f64 * 1e9 / (self.to_ns - self.from_ns) as f64
    }

    /// The period's length in seconds.
    pub fn seconds(&self) -> f64 {
        (self.to_ns - self.from_ns) as f64 / 1e9
    }
}

/// The longest the first worker sleeps when hiccups are recorded: jHiccup's 1 ms resolution.
pub const HICCUP_TICK: Duration = Duration::from_millis(1);

/// Open loop: how long after the last intended start of the measured part a client that is
/// behind its schedule goes on sending. A client a few requests behind (a burst, a hiccup)
/// sends them and they are measured; what is still unsent then is recorded as `unsent`
/// rather than sent ever later, so that a schedule the client cannot keep ends on time.
pub const SEND_GRACE: Duration = Duration::from_secs(1);

/// Unsent requests counted one by one (each as an error of its op type) per worker; past
/// this the rest is estimated from the rate (see [`Outcome::unsent`]).
pub const UNSENT_COUNTED: u64 = 1_000_000;

/// Runs the load described by `config` with `workload`, timing with `clock`, and hands each
/// finished interval to `sink`. Setting `progress.stop` ends the run early; requests in
/// flight are still awaited and recorded.
pub async fn run<W: Workload, C: Clock, S: IntervalSink>(
    workload: Arc<W>,
    clock: C,
    config: &EngineConfig,
    progress: Arc<Progress>,
    sink: &mut S,
) -> Outcome {
    let n_ops = workload.op_names().len();
    let interval_ns = nanos(config.interval).max(1);
    let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
    let workers = config.workers.max(1);

    let (limit_total, rate_per_s) = match config.mode {
        LoadMode::Open {
            rate_per_s,
            max_in_flight,
            ..
        } => (max_in_flight.max(1), Some(rate_per_s)),
        LoadMode::Closed { concurrency } => (concurrency.max(1), None),
    };
    let limits = split(limit_total, workers);

    // Every worker keeps its share of the schedule, even one with no in-flight slot of its
    // own would never send: so the open loop needs at least one slot per worker.
    let active: Vec<usize> = (0..workers).filter(|w| limits[*w] > 0).collect();
    let mut handles = Vec::new();
    for &worker in &active {
        let source = match config.mode {
            LoadMode::Open {
                rate_per_s,
                arrivals,
                ..
            } => Source::Open(
                WorkerSchedule::new(
                    Arrivals::new(arrivals, rate_per_s, config.seed),
                    config.share,
                    active.iter().position(|&w| w == worker).expect("active"),
                    active.len(),
                    config.end,
                )
                .by_slots(nanos(config.send_resolution)),
            ),
            LoadMode::Closed { .. } => Source::Closed(ClosedSchedule::new(
                config.share,
                active.iter().position(|&w| w == worker).expect("active"),
                active.len(),
                config.end,
            )),
        };
        // The hiccup meter's ticks (decision 0005): the first worker wakes at least every
        // millisecond; when the open loop is dealt by slots, every worker sends only every
        // W-th slot, so each ticks every W milliseconds, a millisecond after the one before:
        // together they still wake every millisecond, and no worker wakes in the slots
        // between its own only to tick (decision 0008).
        let tick = HICCUP_TICK.as_nanos() as u64;
        let position = active.iter().position(|&w| w == worker).expect("active") as u64;
        let by_slots =
            matches!(config.mode, LoadMode::Open { .. }) && !config.send_resolution.is_zero();
        let (tick_ns, first_tick_ns) = match (config.hiccups, by_slots) {
            (false, _) => (0, 0),
            (true, true) => (tick * active.len() as u64, tick * (position + 1)),
            (true, false) if position == 0 => (tick, tick),
            (true, false) => (0, 0),
        };
        let ctx = WorkerContext {
            worker,
            workload: workload.clone(),
            clock: clock.clone(),
            end: config.end,
            limit: limits[worker],
            per_worker_rate: rate_per_s.map(|r| config.share.per_lane(r, active.len())),
            send_resolution_ns: nanos(config.send_resolution),
            timeout_ns: config.request_timeout.map_or(0, |t| nanos(t).max(1)),
            interval_ns,
            hiccups: config.hiccups,
            tick_ns,
            first_tick_ns,
            first_seq: config.first_seq,
            only_op: config.only_op,
            progress: progress.clone(),
            period: MeasuredPeriod::scheduled(config),
            send_deadline_ns: MeasuredPeriod::scheduled(config).map_or(NEVER, |p| {
                p.to_ns.saturating_add(SEND_GRACE.as_nanos() as u64)
            }),
            lag_limit_ns: config.lag_limit.map_or(NEVER, nanos),
            tx: tx.clone(),
        };
        handles.push(match &config.lanes {
            Some(lanes) => lanes.spawn(worker, ctx.drive(source)),
            None => tokio::spawn(ctx.drive(source)),
        });
    }

    let mut collector = Collector::new(&active, n_ops, interval_ns);
    let mut stop = StopReason::Completed;
    while let Some(message) = rx.recv().await {
        if collector.take(message) {
            break;
        }
        collector.flush(sink, &progress, clock.now_ns());
        if collector.all_failing_ns >= ALL_FAILING_LIMIT.as_nanos() as u64
            && !progress.stop.load(Ordering::Relaxed)
        {
            stop = StopReason::AllRequestsFailing;
            progress.stop.store(true, Ordering::Relaxed);
        }
    }
    collector.flush(sink, &progress, clock.now_ns());
    for handle in handles {
        let _ = handle.await;
    }
    if stop == StopReason::Completed && progress.stop.load(Ordering::Relaxed) {
        stop = StopReason::Interrupted;
    }
    let tally = collector.tally;
    let unsent = if tally.unsent_capped {
        // Estimated: the schedule's requests that no total accounts for.
        let accounted: f64 = collector
            .totals
            .iter()
            .flatten()
            .map(|stats| stats.total() as f64)
            .sum();
        (scheduled_requests(config) - accounted).max(tally.unsent as f64)
    } else {
        tally.unsent as f64
    };
    let period = MeasuredPeriod::scheduled(config);
    let overflowed = tally.overflowed
        || collector.backlog_overflowed
        || config.end.overflows()
        || period.is_some_and(|p| p.overflows());
    Outcome {
        totals: collector.totals,
        hiccups: collector.hiccup_total,
        elapsed_ns: collector.end_ns,
        measured_period: period.map(|p| MeasuredPeriod {
            ok: tally.ok_in_period,
            failed: tally.failed_in_period,
            ..p
        }),
        sent: tally.sent,
        max_backlog: collector.max_backlog,
        unsent,
        limit_waits: tally.limit_waits,
        client_late: tally.client_late,
        unsent_held: tally.unsent_held,
        overflowed,
        stop,
    }
}

/// A duration in ns, saturating at `u64::MAX` (584 years) where `as u64` would drop its
/// high bits.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Open loop: how many requests the whole schedule holds, warmup included (for Poisson
/// arrivals, the expected number); 0 for a closed loop.
fn scheduled_requests(config: &EngineConfig) -> f64 {
    let LoadMode::Open { rate_per_s, .. } = config.mode else {
        return 0.0;
    };
    let warmup = rate_per_s * config.end.warmup_ns as f64 / 1e9;
    let all = match (config.end.duration_ns, config.end.ops) {
        (Some(d), _) => warmup + rate_per_s * d as f64 / 1e9,
        (None, Some(n)) => warmup + n as f64,
        (None, None) => 0.0,
    };
    config.share.of(all)
}

/// Divides `total` slots among `workers` as evenly as whole numbers allow.
fn split(total: usize, workers: usize) -> Vec<usize> {
    (0..workers)
        .map(|w| total / workers + usize::from(w < total % workers))
        .collect()
}

#[cfg(test)]
mod tests;
