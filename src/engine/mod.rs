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
//! Workers are tokio tasks, one per runtime thread, each keeping many requests in flight and
//! recording into histograms of its own: no lock on the hot path. At each interval end a
//! worker hands its histograms to the collector, which merges them and passes the interval to
//! an [`IntervalSink`] (files, live output).
//!
//! The client's hiccups (METHOD.md §6) are measured by the workers' own loops: every time a
//! worker's timer wakes it, the worker records how much later than asked the wake-up came,
//! and the first worker never sleeps longer than [`HICCUP_TICK`], so that a stall of the
//! client shows within a millisecond even when nothing is due
//! (docs/decisions/0005-client-hiccups-from-the-workers-own-wake-ups.md).
//!
//! The engine times requests out itself ([`EngineConfig::request_timeout`]): the same timer
//! that wakes a worker for its next send also wakes it for the earliest deadline among its
//! requests in flight, and the overdue ones end as timeout errors (see `in_flight`).

pub mod clock;
mod in_flight;
pub mod schedule;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::metrics::{new_histogram, ErrorClass, OpStats, Phase};
use crate::workload::{Parts, Workload};
use clock::Clock;
use clock::Timer;
use in_flight::{InFlight, NEVER};
use schedule::{take_closed, Arrivals, End, Progress, Ticket, WorkerSchedule};

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
    /// Number of workers (one per runtime thread).
    pub workers: usize,
    /// Sequence numbers start here (after the rows a populate wrote).
    pub first_seq: u64,
    /// Send only this operation type (populate), instead of the workload's mix.
    pub only_op: Option<usize>,
    /// Seed of the Poisson schedule.
    pub seed: u64,
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
    /// Per operation type, per phase ([`Phase::index`]).
    pub ops: Vec<[OpStats; 2]>,
    /// The client's hiccups in this interval, ns.
    pub hiccups: Option<Histogram<u64>>,
    /// Requests released but not yet sent at the interval's end.
    pub backlog: u64,
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
    pub totals: Vec<[OpStats; 2]>,
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
    /// The period as `config` schedules it; none for a closed loop.
    fn scheduled(config: &EngineConfig) -> Option<MeasuredPeriod> {
        let LoadMode::Open { rate_per_s, .. } = config.mode else {
            return None;
        };
        let from_ns = config.end.warmup_ns;
        let length_ns = match (config.end.duration_ns, config.end.ops) {
            (Some(d), _) => d,
            (None, Some(n)) => (n as f64 * 1e9 / rate_per_s) as u64,
            (None, None) => return None,
        };
        Some(MeasuredPeriod {
            from_ns,
            to_ns: from_ns + length_ns.max(1),
            ok: 0,
            failed: 0,
        })
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

/// Messages from workers to the collector.
enum Message {
    /// A worker's records for one interval; `complete` is false for the worker's last, partial
    /// interval, which may still be open for the other workers.
    Part {
        worker: usize,
        index: u64,
        records: Records,
        complete: bool,
    },
    WorkerDone {
        worker: usize,
        end_ns: u64,
        tally: Tally,
    },
}

/// What a worker counted over its whole run, added up over the workers by the collector.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    /// Successful answers within the measured period.
    ok_in_period: u64,
    /// Failed requests within the measured period.
    failed_in_period: u64,
    /// Requests recorded as unsent.
    unsent: u64,
    /// Whether the unsent count stopped at [`UNSENT_COUNTED`] with requests left.
    unsent_capped: bool,
    /// Whether it stopped sending, with requests left, while waiting for a free slot.
    unsent_held: bool,
    /// Measured requests that waited for a free in-flight slot.
    limit_waits: u64,
    /// Measured requests late by the client's doing.
    client_late: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.ok_in_period += other.ok_in_period;
        self.failed_in_period += other.failed_in_period;
        self.unsent += other.unsent;
        self.unsent_capped |= other.unsent_capped;
        self.unsent_held |= other.unsent_held;
        self.limit_waits += other.limit_waits;
        self.client_late += other.client_late;
    }
}

/// What one worker recorded in one interval.
struct Records {
    /// Per operation type, per phase.
    ops: Vec<[OpStats; 2]>,
    /// How late the worker's timer wake-ups came, ns (when hiccups are recorded).
    hiccups: Option<Histogram<u64>>,
}

impl Records {
    fn empty(n_ops: usize, hiccups: bool) -> Self {
        Records {
            ops: empty_ops(n_ops),
            hiccups: hiccups.then(new_histogram),
        }
    }
}

fn empty_ops(n: usize) -> Vec<[OpStats; 2]> {
    (0..n)
        .map(|_| [OpStats::default(), OpStats::default()])
        .collect()
}

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
    let interval_ns = config.interval.as_nanos().max(1) as u64;
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
            } => Source::Open(WorkerSchedule::new(
                Arrivals::new(arrivals, rate_per_s, config.seed),
                active.iter().position(|&w| w == worker).expect("active"),
                active.len(),
                config.end,
            )),
            LoadMode::Closed { .. } => Source::Closed,
        };
        let ctx = WorkerContext {
            worker,
            workload: workload.clone(),
            clock: clock.clone(),
            end: config.end,
            limit: limits[worker],
            per_worker_rate: rate_per_s.map(|r| r / active.len() as f64),
            send_resolution_ns: config.send_resolution.as_nanos() as u64,
            timeout_ns: config
                .request_timeout
                .map_or(0, |t| (t.as_nanos() as u64).max(1)),
            interval_ns,
            hiccups: config.hiccups,
            ticks: config.hiccups && worker == active[0],
            first_seq: config.first_seq,
            only_op: config.only_op,
            progress: progress.clone(),
            period: MeasuredPeriod::scheduled(config),
            send_deadline_ns: MeasuredPeriod::scheduled(config).map_or(NEVER, |p| {
                p.to_ns.saturating_add(SEND_GRACE.as_nanos() as u64)
            }),
            lag_limit_ns: config.lag_limit.map_or(NEVER, |l| l.as_nanos() as u64),
            tx: tx.clone(),
        };
        handles.push(tokio::spawn(ctx.drive(source)));
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
        let accounted: u64 = collector.totals.iter().flatten().map(OpStats::total).sum();
        (scheduled_requests(config) - accounted as f64).max(tally.unsent as f64)
    } else {
        tally.unsent as f64
    };
    Outcome {
        totals: collector.totals,
        hiccups: collector.hiccup_total,
        elapsed_ns: collector.end_ns,
        measured_period: MeasuredPeriod::scheduled(config).map(|p| MeasuredPeriod {
            ok: tally.ok_in_period,
            failed: tally.failed_in_period,
            ..p
        }),
        sent: progress.sent.load(Ordering::Relaxed),
        max_backlog: collector.max_backlog,
        unsent,
        limit_waits: tally.limit_waits,
        client_late: tally.client_late,
        unsent_held: tally.unsent_held,
        stop,
    }
}

/// Open loop: how many requests the whole schedule holds, warmup included (for Poisson
/// arrivals, the expected number); 0 for a closed loop.
fn scheduled_requests(config: &EngineConfig) -> f64 {
    let LoadMode::Open { rate_per_s, .. } = config.mode else {
        return 0.0;
    };
    let warmup = rate_per_s * config.end.warmup_ns as f64 / 1e9;
    match (config.end.duration_ns, config.end.ops) {
        (Some(d), _) => warmup + rate_per_s * d as f64 / 1e9,
        (None, Some(n)) => warmup + n as f64,
        (None, None) => 0.0,
    }
}

/// Divides `total` slots among `workers` as evenly as whole numbers allow.
fn split(total: usize, workers: usize) -> Vec<usize> {
    (0..workers)
        .map(|w| total / workers + usize::from(w < total % workers))
        .collect()
}

/// Where a worker's requests come from.
enum Source {
    /// Its share of the open-loop schedule.
    Open(WorkerSchedule),
    /// Closed loop: a new request whenever a slot is free.
    Closed,
}

struct WorkerContext<W, C: Clock> {
    worker: usize,
    workload: Arc<W>,
    clock: C,
    end: End,
    limit: usize,
    /// Open loop: this worker's share of the rate, for its backlog estimate.
    per_worker_rate: Option<f64>,
    send_resolution_ns: u64,
    /// The request timeout (0: none).
    timeout_ns: u64,
    interval_ns: u64,
    /// Record how late the timer's wake-ups come.
    hiccups: bool,
    /// Never sleep longer than [`HICCUP_TICK`] (the first worker, when hiccups are recorded).
    ticks: bool,
    first_seq: u64,
    only_op: Option<usize>,
    progress: Arc<Progress>,
    /// Open loop: the measured period whose answers this worker counts.
    period: Option<MeasuredPeriod>,
    /// Open loop: the end of the measured period plus [`SEND_GRACE`]: what is unsent by
    /// then stays unsent ([`NEVER`] for a closed loop).
    send_deadline_ns: u64,
    /// [`EngineConfig::lag_limit`] in ns, [`NEVER`] for none.
    lag_limit_ns: u64,
    tx: mpsc::UnboundedSender<Message>,
}

/// At most this many requests are sent in one turn of a worker's loop, so that answers
/// waiting to be recorded (and so their response times) are not held up by a long backlog.
const MAX_BURST: usize = 32;

/// What the workload's execution of a request gives back.
struct Answer {
    done_ns: u64,
    error: Option<(ErrorClass, String)>,
    /// The steps of a compound request.
    parts: Parts,
}

/// One request's life.
struct Completion {
    op: usize,
    phase: Phase,
    intended_ns: u64,
    send_ns: u64,
    done_ns: u64,
    error: Option<(ErrorClass, String)>,
    /// The steps of a compound request, each also recorded under its own op type.
    parts: Parts,
}

impl<W: Workload, C: Clock> WorkerContext<W, C> {
    async fn drive(self, mut source: Source) {
        let n_ops = self.workload.op_names().len();
        let mut timer = match self.clock.timer() {
            Ok(timer) => timer,
            Err(e) => panic!("cannot create a timer for the schedule: {e}"),
        };
        // The earliest deadline among the requests in flight (maybe one already answered).
        // The send timer wakes for it too: one timer, polled once per turn.
        let mut next_expiry = NEVER;
        let mut in_flight: FuturesUnordered<InFlight<_>> = FuturesUnordered::new();
        let mut current = 0u64;
        let mut records = Records::empty(n_ops, self.hiccups);
        let tick_ns = HICCUP_TICK.as_nanos() as u64;
        // When the loop must wake at the latest, to measure the client's hiccups.
        let mut next_tick = if self.ticks {
            self.clock.now_ns() + tick_ns
        } else {
            NEVER
        };
        // The next request to send, once its intended start comes and a slot is free.
        let mut pending: Option<Ticket> = None;
        // When to wake for it: its intended start, or that of the last request within the
        // send resolution, so that they leave together.
        let mut due = 0u64;
        let mut exhausted = false;
        let mut tally = Tally::default();
        // The pending request was drawn while every slot was taken: if it falls due before
        // one frees, it waits for the server (a limit wait), not for the client.
        let mut pending_held = false;
        // ...and it did: its lateness is the server's.
        let mut pending_waited_for_slot = false;
        // Wakes the worker to hand over finished intervals even when no answer arrives.
        let mut tick = tokio::time::interval(
            Duration::from_nanos(self.interval_ns / 4).max(Duration::from_millis(1)),
        );
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            if self.progress.stop.load(Ordering::Relaxed) {
                exhausted = true;
                pending = None;
            }
            if pending.is_none() && !exhausted {
                pending = match &mut source {
                    Source::Open(schedule) => schedule.next_ticket(),
                    // Taken only when a slot is free, so that its intended start is its send.
                    Source::Closed if in_flight.len() < self.limit => {
                        take_closed(&self.clock, &self.end, &self.progress)
                    }
                    Source::Closed => None,
                };
                exhausted = pending.is_none()
                    && (matches!(source, Source::Open(_)) || in_flight.len() < self.limit);
                due = match (&mut source, pending) {
                    (Source::Open(schedule), Some(t)) => {
                        self.wake_for(schedule, t, || self.clock.now_ns())
                    }
                    (_, Some(t)) => t.intended_ns,
                    (_, None) => 0,
                };
                pending_held = pending.is_some_and(|t| t.intended_ns >= self.end.warmup_ns)
                    && in_flight.len() >= self.limit;
            }
            if exhausted && pending.is_none() && in_flight.is_empty() {
                break;
            }
            let may_send = pending.is_some() && in_flight.len() < self.limit;
            let wake_at = if may_send {
                due.min(next_expiry)
            } else {
                next_expiry
            }
            .min(next_tick);
            // Set before the answers are taken: however long they keep the loop, the next
            // wake-up's lateness counts from the moment the loop asked for.
            if wake_at != NEVER {
                timer.set(wake_at);
            }
            tokio::select! {
                biased;
                Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                    let done: Completion = done;
                    if self.period.is_some_and(|p| p.contains(done.done_ns)) {
                        if done.error.is_none() {
                            tally.ok_in_period += 1;
                        } else {
                            tally.failed_in_period += 1;
                        }
                    }
                    if pending_held {
                        // A slot is free now; the pending request waited for it if it was
                        // due before.
                        pending_held = false;
                        pending_waited_for_slot = due <= done.done_ns;
                        tally.limit_waits += u64::from(pending_waited_for_slot);
                    }
                    self.hand_over(&mut current, &mut records, done.done_ns / self.interval_ns);
                    record(&mut records.ops, done);
                }
                late = timer.sleep_until_ns(wake_at), if wake_at != NEVER => {
                    let now = self.clock.now_ns();
                    // A wake-up the loop slept for: how late it came is a hiccup. (A moment
                    // that had passed before the loop could sleep for it, such as a request
                    // that waited for a slot, is not.)
                    if let Some(late) = late {
                        self.hand_over(&mut current, &mut records, now / self.interval_ns);
                        if let Some(hiccups) = &mut records.hiccups {
                            let _ = hiccups.record(late.max(1));
                        }
                    }
                    // The next tick comes a millisecond after the last sleep, or after the
                    // last tick the loop was too busy to sleep for.
                    if next_tick != NEVER && (late.is_some() || next_tick <= now) {
                        next_tick = now + tick_ns;
                    }
                    if next_expiry <= now {
                        next_expiry = NEVER;
                        for request in in_flight.iter_mut() {
                            if request.deadline_ns <= now {
                                request.expire(now);
                            } else {
                                next_expiry = next_expiry.min(request.deadline_ns);
                            }
                        }
                    }
                    if now >= self.send_deadline_ns && !exhausted {
                        tally.unsent_held = pending.is_some()
                            && (pending_held || pending_waited_for_slot || in_flight.len() >= self.limit);
                        (tally.unsent, tally.unsent_capped) = self.stop_sending(&mut source, pending.take(), &mut records, &mut current, now);
                        exhausted = true;
                        continue;
                    }
                    if !may_send || due > now {
                        continue;
                    }
                    let ticket = pending.take().expect("may_send");
                    if !std::mem::take(&mut pending_waited_for_slot) {
                        tally.client_late += u64::from(self.late(ticket, now));
                    }
                    let request = self.start(ticket);
                    // Requests leave in order with one timeout: the first deadline stands.
                    next_expiry = next_expiry.min(request.deadline_ns);
                    in_flight.push(request);
                    // The other requests due by now join it: the burst takes one wake-up,
                    // one look at the clock and one poll of the new requests, not one each.
                    if let Source::Open(schedule) = &mut source {
                        for _ in 1..MAX_BURST {
                            if in_flight.len() >= self.limit {
                                break;
                            }
                            match schedule.next_ticket() {
                                Some(t) if t.intended_ns <= now => {
                                    tally.client_late += u64::from(self.late(t, now));
                                    in_flight.push(self.start(t));
                                }
                                next => {
                                    pending = next;
                                    exhausted = next.is_none();
                                    if let Some(t) = next {
                                        due = self.wake_for(schedule, t, || now);
                                    }
                                    break;
                                }
                            }
                        }
                    }
                }
                _ = tick.tick() => {
                    let now = self.clock.now_ns();
                    if now >= self.send_deadline_ns && !exhausted {
                        // Held by the in-flight limit past the deadline: the send branch
                        // may not come again.
                        tally.unsent_held = pending.is_some()
                            && (pending_held || pending_waited_for_slot || in_flight.len() >= self.limit);
                        (tally.unsent, tally.unsent_capped) = self.stop_sending(&mut source, pending.take(), &mut records, &mut current, now);
                        exhausted = true;
                    }
                    let overdue = match (pending, self.per_worker_rate) {
                        // Saturating: a rate no client could keep overflows the count.
                        (Some(t), Some(rate)) if t.intended_ns <= now => {
                            ((now - t.intended_ns) as f64 * rate / 1e9) as u64
                        }
                        .saturating_add(1),
                        _ => 0,
                    };
                    self.progress.set_overdue(self.worker, overdue);
                    self.hand_over(&mut current, &mut records, now / self.interval_ns);
                }
            }
        }
        self.progress.set_overdue(self.worker, 0);
        let end_ns = self.clock.now_ns();
        let _ = self.tx.send(Message::Part {
            worker: self.worker,
            index: current,
            records,
            complete: false,
        });
        let _ = self.tx.send(Message::WorkerDone {
            worker: self.worker,
            end_ns,
            tally,
        });
    }

    /// Whether a measured request sent at `now_ns` leaves later than the lag limit.
    fn late(&self, ticket: Ticket, now_ns: u64) -> bool {
        ticket.intended_ns >= self.end.warmup_ns
            && now_ns.saturating_sub(ticket.intended_ns) > self.lag_limit_ns
    }

    /// Stops sending at the deadline: the pending request and the rest of this worker's
    /// schedule are recorded as unsent, in the interval of `now_ns`, each under its op type
    /// and phase, up to [`UNSENT_COUNTED`]. Returns how many were recorded and whether the
    /// count stopped there with requests left.
    fn stop_sending(
        &self,
        source: &mut Source,
        pending: Option<Ticket>,
        records: &mut Records,
        current: &mut u64,
        now_ns: u64,
    ) -> (u64, bool) {
        self.hand_over(current, records, now_ns / self.interval_ns);
        let Source::Open(schedule) = source else {
            return (0, false);
        };
        let mut counted = 0u64;
        let mut next = pending.or_else(|| schedule.next_ticket());
        while let Some(ticket) = next {
            if counted == UNSENT_COUNTED {
                return (counted, true);
            }
            let seq = self.first_seq + ticket.seq;
            let op = self.only_op.unwrap_or_else(|| self.workload.op_for(seq));
            let phase = if ticket.intended_ns < self.end.warmup_ns {
                Phase::Warmup
            } else {
                Phase::Measure
            };
            records.ops[op][phase.index()].record_error(ErrorClass::Unsent, || {
                format!(
                    "never sent: the client was still {:.3} s behind its schedule {} s after \
                     the last intended start",
                    now_ns.saturating_sub(ticket.intended_ns) as f64 / 1e9,
                    SEND_GRACE.as_secs()
                )
            });
            counted += 1;
            next = schedule.next_ticket();
        }
        (counted, false)
    }

    /// When to wake for `ticket`: its intended start, or, when that is still ahead and
    /// requests within the send resolution follow it, the intended start of the last of
    /// them, so that they leave together.
    fn wake_for(
        &self,
        schedule: &mut WorkerSchedule,
        ticket: Ticket,
        now: impl FnOnce() -> u64,
    ) -> u64 {
        if self.send_resolution_ns > 0 && ticket.intended_ns > now() {
            schedule.last_within(ticket.intended_ns, self.send_resolution_ns)
        } else {
            ticket.intended_ns
        }
    }

    /// Hands every interval before `index` to the collector.
    fn hand_over(&self, current: &mut u64, records: &mut Records, index: u64) {
        while *current < index {
            let finished =
                std::mem::replace(records, Records::empty(records.ops.len(), self.hiccups));
            let _ = self.tx.send(Message::Part {
                worker: self.worker,
                index: *current,
                records: finished,
                complete: true,
            });
            *current += 1;
        }
    }

    /// Sends the ticket's request. Its future is boxed: with the driver's inside it, it is
    /// over 4 kB, and the set of requests in flight would copy it twice on its way in; a box
    /// is copied once and the set then moves a pointer (bench/instructions.py: 2 000 fewer
    /// instructions of memcpy per request).
    fn start(&self, ticket: Ticket) -> InFlight<impl Future<Output = Answer> + '_> {
        let seq = self.first_seq + ticket.seq;
        let op = self.only_op.unwrap_or_else(|| self.workload.op_for(seq));
        let phase = if ticket.intended_ns < self.end.warmup_ns {
            Phase::Warmup
        } else {
            Phase::Measure
        };
        self.progress.sent.fetch_add(1, Ordering::Relaxed);
        let send_ns = self.clock.now_ns();
        InFlight::new(
            self.send(op, seq),
            op,
            phase,
            ticket.intended_ns,
            send_ns,
            self.timeout_ns,
        )
    }

    async fn send(&self, op: usize, seq: u64) -> Answer {
        let mut parts = Parts::default();
        let result = self.workload.execute(op, seq, &mut parts).await;
        Answer {
            done_ns: self.clock.now_ns(),
            error: result.err().map(|e| (ErrorClass::of(&e), e.to_string())),
            parts,
        }
    }
}

/// Records one finished request in its interval's statistics, and each of its steps under
/// their own op types.
fn record(ops: &mut [[OpStats; 2]], done: Completion) {
    let phase = done.phase.index();
    let wait_ns = done.send_ns.saturating_sub(done.intended_ns);
    for (i, part) in done.parts.iter().enumerate() {
        let stats = &mut ops[part.op][phase];
        // Only the first step waited to be sent; the others follow the step before.
        let lead_ns = if i == 0 { wait_ns } else { 0 };
        if i == 0 {
            stats.record_wait(wait_ns);
        }
        match &done.error {
            Some((class, message)) if part.failed => stats.record_error(*class, || message.clone()),
            _ => stats.record_ok(lead_ns + part.elapsed_ns, part.elapsed_ns),
        }
    }
    let stats = &mut ops[done.op][phase];
    stats.record_wait(wait_ns);
    match done.error {
        None => stats.record_ok(
            done.done_ns.saturating_sub(done.intended_ns),
            done.done_ns.saturating_sub(done.send_ns),
        ),
        Some((class, message)) => stats.record_error(class, || message),
    }
}

/// Adds up the workers' parts, interval by interval, and releases each interval once every
/// worker has handed it over.
struct Collector {
    interval_ns: u64,
    /// Per worker: every interval before this has been handed over (MAX once done).
    marks: BTreeMap<usize, u64>,
    pending: BTreeMap<u64, Interval>,
    end_ns: u64,
    totals: Vec<[OpStats; 2]>,
    hiccup_total: Histogram<u64>,
    max_backlog: u64,
    all_failing_ns: u64,
    tally: Tally,
}

impl Collector {
    fn new(workers: &[usize], n_ops: usize, interval_ns: u64) -> Self {
        Collector {
            interval_ns,
            marks: workers.iter().map(|&w| (w, 0)).collect(),
            pending: BTreeMap::new(),
            end_ns: 0,
            totals: empty_ops(n_ops),
            hiccup_total: new_histogram(),
            max_backlog: 0,
            all_failing_ns: 0,
            tally: Tally::default(),
        }
    }

    fn workers_done(&self) -> bool {
        self.marks.values().all(|&m| m == u64::MAX)
    }

    fn slot(&mut self, index: u64) -> &mut Interval {
        let interval_ns = self.interval_ns;
        self.pending.entry(index).or_insert_with(|| Interval {
            index,
            start_ns: index * interval_ns,
            length_ns: interval_ns,
            // Filled by the first worker's part, or with empty statistics when released.
            ops: Vec::new(),
            hiccups: None,
            backlog: 0,
        })
    }

    /// Takes one message; says whether every worker is now done.
    fn take(&mut self, message: Message) -> bool {
        match message {
            Message::Part {
                worker,
                index,
                records: Records { ops, hiccups },
                complete,
            } => {
                let slot = self.slot(index);
                match (&mut slot.hiccups, hiccups) {
                    (Some(into), Some(from)) => into
                        .add(&from)
                        .expect("auto-resizing histograms always add"),
                    (into @ None, from) => *into = from,
                    (Some(_), None) => {}
                }
                if slot.ops.is_empty() {
                    // The interval's first part (the only one with one worker): taken as it
                    // is rather than added into empty histograms.
                    slot.ops = ops;
                } else {
                    for (into, from) in slot.ops.iter_mut().zip(&ops) {
                        into[0].add(&from[0]);
                        into[1].add(&from[1]);
                    }
                }
                if complete {
                    self.marks.insert(worker, index + 1);
                }
            }
            Message::WorkerDone {
                worker,
                end_ns,
                tally,
            } => {
                self.marks.insert(worker, u64::MAX);
                self.end_ns = self.end_ns.max(end_ns);
                self.tally.add(&tally);
            }
        }
        self.workers_done()
    }

    /// Releases every interval all sources have handed over.
    fn flush<S: IntervalSink>(&mut self, sink: &mut S, progress: &Progress, now_ns: u64) {
        let ready = self.marks.values().copied().min().unwrap_or(u64::MAX);
        let all_done = ready == u64::MAX;
        if all_done && self.end_ns == 0 {
            self.end_ns = now_ns;
        }
        while let Some((&index, _)) = self.pending.first_key_value() {
            if index >= ready {
                break;
            }
            let mut interval = self.pending.pop_first().expect("checked above").1;
            if all_done && self.pending.is_empty() {
                // The last interval ends with the run.
                interval.length_ns = self
                    .end_ns
                    .saturating_sub(interval.start_ns)
                    .clamp(1, self.interval_ns);
            }
            interval.backlog = progress.backlog();
            self.max_backlog = self.max_backlog.max(interval.backlog);
            let (ok, failed) = interval
                .ops
                .iter()
                .flatten()
                .fold((0, 0), |(o, f), s| (o + s.ok, f + s.error_count()));
            if ok == 0 && failed > 0 {
                self.all_failing_ns += interval.length_ns;
            } else if ok > 0 {
                self.all_failing_ns = 0;
            }
            for (total, part) in self.totals.iter_mut().zip(&interval.ops) {
                total[0].add(&part[0]);
                total[1].add(&part[1]);
            }
            if let Some(h) = &interval.hiccups {
                self.hiccup_total
                    .add(h)
                    .expect("auto-resizing histograms always add");
            }
            sink.interval(&interval);
        }
    }
}

#[cfg(test)]
mod tests;
