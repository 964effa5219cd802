//! The engine under tokio's paused clock, against a simulated server whose latency is known:
//! the schedule, the in-flight limit, interval accounting and the stall test of METHOD.md §2.

use std::sync::Arc;
use std::time::Duration;

use scylla::errors::ExecutionError;

use super::clock::{Clock, RealClock, Timer, TokioClock};
use super::schedule::{End, Progress};
use super::*;
use crate::metrics::{ErrorClass, Phase};
use crate::workload::common::mix::Operations;
use crate::workload::{OpMix, Parts, Workload};

mod ends;
mod recall;

/// A simulated server: answers after `service`, except that it is frozen from `stall.0` to
/// `stall.1` (ns since start): requests arriving in or before the freeze are answered after it.
struct Simulated {
    clock: TokioClock,
    service: Duration,
    stall: Option<(u64, u64)>,
    /// write, read, and a compound read-then-write, dealt by a mix of the first two or three.
    operations: Operations,
    /// Every request fails from this moment on (ns since start).
    fail_from: Option<u64>,
}

const RMW: usize = 2;

/// write, read and rmw, dealt by a mix of `weights`, each shown.
pub(super) fn mixed(weights: &[f64]) -> Operations {
    let names: Vec<String> = ["write", "read", "rmw"].map(String::from).to_vec();
    let shares = vec![1.0; names.len()];
    Operations::with_mix(names, shares, OpMix::new(weights), 0)
}

/// One operation type, `write`.
pub(super) fn writes() -> Operations {
    Operations::new(vec!["write".into()], vec![1.0], 0)
}

impl Simulated {
    /// Writes only, answered in 1 ms, failing from `fail_from` on when given.
    fn writes_only(clock: TokioClock, fail_from: Option<u64>) -> Self {
        Simulated {
            clock,
            service: Duration::from_millis(1),
            stall: None,
            operations: mixed(&[1.0, 0.0]),
            fail_from,
        }
    }
}

impl Workload for Simulated {
    fn operations(&self) -> &Operations {
        &self.operations
    }
    async fn execute(&self, op: usize, _seq: u64, parts: &mut Parts) -> Result<(), ExecutionError> {
        if op == RMW {
            // A read taking the service time, then a write taking twice that; the write fails
            // from `fail_from` on.
            tokio::time::sleep(self.service).await;
            parts.push(1, self.service, false);
            tokio::time::sleep(self.service * 2).await;
            let failed = self
                .fail_from
                .is_some_and(|from| self.clock.now_ns() >= from);
            parts.push(0, self.service * 2, failed);
            return if failed {
                Err(ExecutionError::EmptyPlan)
            } else {
                Ok(())
            };
        }
        let now = self.clock.now_ns();
        if let Some((from, to)) = self.stall {
            if now >= from && now < to {
                self.clock
                    .timer()
                    .expect("tokio timers always exist")
                    .sleep_until_ns(to)
                    .await;
            }
        }
        tokio::time::sleep(self.service).await;
        if self.fail_from.is_some_and(|from| now >= from) {
            return Err(ExecutionError::EmptyPlan);
        }
        Ok(())
    }
}

#[derive(Default)]
struct Kept(Vec<Interval>);

impl IntervalSink for Kept {
    fn interval(&mut self, interval: &Interval) {
        self.0.push(interval.clone());
    }
}

/// Runs the engine with a fresh `Progress`, keeping every interval.
async fn run_kept<W: Workload, C: Clock>(
    workload: Arc<W>,
    clock: C,
    config: &EngineConfig,
) -> (Outcome, Vec<Interval>) {
    let mut kept = Kept::default();
    let outcome = run(
        workload,
        clock,
        config,
        Arc::new(Progress::default()),
        &mut kept,
    )
    .await;
    (outcome, kept.0)
}

fn config(mode: LoadMode, seconds: u64) -> EngineConfig {
    EngineConfig {
        mode,
        end: End {
            warmup_ns: 0,
            duration_ns: Some(seconds * 1_000_000_000),
            ops: None,
        },
        interval: Duration::from_secs(1),
        workers: 2,
        first_seq: 0,
        only_op: None,
        seed: 1,
        share: super::Share::WHOLE,
        hiccups: false,
        send_resolution: Duration::ZERO,
        request_timeout: None,
        lag_limit: Some(Duration::from_millis(10)),
        lanes: None,
    }
}

async fn simulate(
    mode: LoadMode,
    seconds: u64,
    service_ms: u64,
    stall: Option<(u64, u64)>,
) -> (Outcome, Vec<Interval>) {
    let clock = TokioClock::start_now();
    let workload = Arc::new(Simulated {
        clock,
        service: Duration::from_millis(service_ms),
        stall,
        operations: mixed(&[0.8, 0.2]),
        fail_from: None,
    });
    run_kept(workload, clock, &config(mode, seconds)).await
}

/// Every operation type's measured statistics, added up.
fn measured(out: &Outcome) -> OpHistograms {
    let mut all = OpHistograms::default();
    for op in &out.totals {
        all.add(&op[Phase::Measure.index()]);
    }
    all
}

fn open(rate: f64, max_in_flight: usize) -> LoadMode {
    LoadMode::Open {
        rate_per_s: rate,
        arrivals: ArrivalKind::Fixed,
        max_in_flight,
    }
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// METHOD.md §2: a 2 s freeze in a 20 s open-loop run at any rate gives
/// p(q) = S − (1 − q)·T: p99 = 1.8 s, p99.9 = 1.98 s, max ≈ 2 s.
#[tokio::test(start_paused = true)]
async fn open_loop_reports_a_freeze_as_the_stall_formula_says() {
    let (out, intervals) = simulate(
        open(1000.0, 10_000),
        20,
        1,
        Some((8_000_000_000, 10_000_000_000)),
    )
    .await;
    let all = measured(&out);
    assert_eq!(all.ok, 20_000, "no request skipped or dropped");
    let h = &all.response_ns;
    let (p99, p999, max) = (
        seconds(h.value_at_quantile(0.99)),
        seconds(h.value_at_quantile(0.999)),
        seconds(h.max()),
    );
    assert!((p99 - 1.801).abs() < 0.01, "p99 {p99}");
    assert!((p999 - 1.981).abs() < 0.01, "p99.9 {p999}");
    assert!((max - 2.001).abs() < 0.01, "max {max}");
    // Service time hides the freeze for all but the requests sent during it.
    assert!(seconds(all.service_ns.value_at_quantile(0.5)) < 0.002);
    // The window holding the freeze sees it too: by completion time, the 2000 delayed
    // answers all land in the interval starting at 10 s.
    // Twenty whole intervals, and a short last one for the answers to the final requests.
    assert_eq!(intervals.len(), 21);
    assert!(
        intervals[20].length_ns < 10_000_000,
        "{}",
        intervals[20].length_ns
    );
    let counts: u64 = intervals
        .iter()
        .map(|i| i.ops.iter().map(|o| o[1].ok).sum::<u64>())
        .sum();
    assert_eq!(counts, 20_000, "intervals add up to the totals");
    let at_10 = &intervals[10];
    let answered: u64 = at_10.ops.iter().map(|o| o[1].ok).sum();
    assert!(
        answered >= 2_900,
        "the backlog answered at 10 s: {answered}"
    );
}

/// The same freeze in a closed loop: its few stalled requests barely touch p99 —
/// coordinated omission, which is why the closed loop is labelled service time.
#[tokio::test(start_paused = true)]
async fn closed_loop_hides_the_same_freeze() {
    let (out, _) = simulate(
        LoadMode::Closed { concurrency: 4 },
        20,
        1,
        Some((8_000_000_000, 10_000_000_000)),
    )
    .await;
    let all = measured(&out);
    let p99 = seconds(all.response_ns.value_at_quantile(0.99));
    assert!(
        p99 < 0.01,
        "p99 {p99}: the closed loop did not see the freeze"
    );
    assert!(
        seconds(all.response_ns.max()) > 1.9,
        "only the max shows it"
    );
}

/// The mix follows the ratios exactly, whatever the workers' interleaving.
#[tokio::test(start_paused = true)]
async fn the_op_mix_is_exact() {
    let (out, _) = simulate(open(500.0, 100), 10, 1, None).await;
    let writes = out.totals[0][1].ok;
    let reads = out.totals[1][1].ok;
    assert_eq!(writes + reads, 5_000);
    assert_eq!(reads, 1_000);
}

/// When the server cannot keep up (10 ms answers, 5 in flight: 500/s at most), requests wait
/// in the client for a free slot, the wait shows in response time, the backlog says so, and
/// each wait for a slot is counted. A second after the schedule's end the client stops
/// sending: the requests it still held are recorded as unsent, so every scheduled request
/// is accounted for and the run ends on time.
#[tokio::test(start_paused = true)]
async fn a_client_that_falls_behind_says_so() {
    let (out, intervals) = simulate(open(1000.0, 5), 4, 10, None).await;
    let measured = &out.totals[0][1];
    assert!(out.max_backlog > 1_000, "backlog {}", out.max_backlog);
    let service_p50 = seconds(measured.service_ns.value_at_quantile(0.5));
    let response_p50 = seconds(measured.response_ns.value_at_quantile(0.5));
    assert!((service_p50 - 0.010).abs() < 0.002, "service {service_p50}");
    assert!(
        response_p50 > 1.0,
        "waiting counts: response p50 {response_p50}"
    );
    let first: u64 = intervals[0].ops.iter().map(|o| o[1].ok).sum();
    assert!(
        (first as i64 - 500).abs() <= 10,
        "at most 500/s get through: {first}"
    );
    // 500/s for the 4 s of the schedule and the second of grace; the rest never left.
    assert!((2_490..=2_510).contains(&out.sent), "sent {}", out.sent);
    let all = measured_total(&out);
    assert_eq!(all.total(), 4_000, "every scheduled request accounted for");
    assert_eq!(out.unsent, (4_000 - out.sent) as f64);
    assert_eq!(all.errors[&ErrorClass::Unsent], 4_000 - out.sent);
    assert!(all.error_examples[&ErrorClass::Unsent].starts_with("never sent"));
    let elapsed = seconds(out.elapsed_ns);
    assert!((5.0..5.1).contains(&elapsed), "ended at {elapsed} s");
    // Nearly every request waited for one of the 5 slots, so none is late by the client's
    // doing, and the slots were full when sending stopped.
    assert!(out.limit_waits > 2_000, "{}", out.limit_waits);
    assert!(out.client_late <= 5, "{}", out.client_late);
    assert!(out.unsent_held);
    assert!(!out.overflowed, "behind, but every count holds");
    // Failed and unsent requests carry nothing: achieved is what was answered.
    let period = out.measured_period.unwrap();
    assert_eq!(period.failed, 0, "unsent requests are not answers");
    assert!(period.achieved_per_s() < 510.0);
}

/// A freeze that fills the in-flight limit: when the server answers, it frees every slot at
/// once, and the burst that fills them again sends requests that waited for the server, not
/// for the client. None of them is late by the client's doing, however overdue (a cold node
/// answering in batches made a server-bound run look client-bound).
#[tokio::test(start_paused = true)]
async fn a_burst_after_a_full_limit_is_the_servers_lateness() {
    let (out, _) = simulate(
        open(1000.0, 100),
        6,
        1,
        Some((2_000_000_000, 3_000_000_000)),
    )
    .await;
    assert!(out.limit_waits > 800, "{}", out.limit_waits);
    assert_eq!(out.client_late, 0);
    assert_eq!(measured(&out).ok, 6_000, "every request answered");
}

/// Every operation type's measured statistics over both phases' totals of `out`.
fn measured_total(out: &Outcome) -> OpHistograms {
    let mut all = OpHistograms::default();
    for op in &out.totals {
        all.add(&op[Phase::Measure.index()]);
    }
    all
}

/// Below capacity, every request leaves exactly at its intended start (the schedule's own
/// lag is zero under the paused clock), so response time equals service time. (tokio's timer
/// counts whole milliseconds, so the rate keeps every intended start on one.)
#[tokio::test(start_paused = true)]
async fn requests_leave_on_schedule() {
    let (out, _) = simulate(open(1000.0, 1000), 6, 2, None).await;
    let writes = &out.totals[0][Phase::Measure.index()];
    assert_eq!(
        writes.wait_ns.max(),
        1,
        "no request waited (0 is recorded as the lowest value)"
    );
    assert_eq!(writes.response_ns.max(), writes.service_ns.max());
    assert_eq!(out.sent, 6_000);
}

/// With a send resolution, the requests due within it leave together when the last of them
/// is due, in one turn of the worker: at 1000/s and 2 ms they leave in threes, having waited
/// 2, 1 and 0 ms. The wait is part of each response time.
#[tokio::test(start_paused = true)]
async fn requests_within_the_send_resolution_leave_together() {
    let clock = TokioClock::start_now();
    let workload = Arc::new(Simulated::writes_only(clock, None));
    let mut config = config(open(1000.0, 1000), 3);
    config.workers = 1;
    config.send_resolution = Duration::from_millis(2);
    let (out, _) = run_kept(workload, clock, &config).await;
    assert_eq!(out.sent, 3_000);
    let writes = &out.totals[0][Phase::Measure.index()];
    assert_eq!(writes.ok, 3_000);
    let ms = 1_000_000;
    let waited = |from: u64, to: u64| writes.wait_ns.count_between(from, to);
    let (none, one, two) = (
        waited(0, 1),
        waited(ms - 1000, ms + 1000),
        waited(2 * ms - 2000, 2 * ms + 2000),
    );
    assert_eq!(none + one + two, 3_000, "every wait is 0, 1 or 2 ms");
    for (count, what) in [(none, "0 ms"), (one, "1 ms"), (two, "2 ms")] {
        assert!(
            (999..=1001).contains(&count),
            "{count} requests waited {what}"
        );
    }
    assert!(
        writes.response_ns.max() >= 3 * ms,
        "2 ms of wait and 1 ms of service"
    );
    assert!(writes.service_ns.max() < ms + ms / 100);
}

/// A compound request is recorded as itself and as each of its steps: the first step's
/// response time includes the wait before sending, the steps add up to the whole, and an
/// error counts against the step it happened in.
#[tokio::test(start_paused = true)]
async fn compound_requests_are_recorded_with_their_steps() {
    let clock = TokioClock::start_now();
    let workload = Arc::new(Simulated {
        clock,
        service: Duration::from_millis(2),
        stall: None,
        operations: mixed(&[0.0, 0.0, 1.0]),
        fail_from: Some(5_000_000_000),
    });
    let (out, _) = run_kept(workload, clock, &config(open(100.0, 100), 10)).await;
    let [write, read, rmw] = [0, 1, 2].map(|op| out.totals[op][Phase::Measure.index()].clone());
    assert_eq!(rmw.ok + rmw.error_count(), 1000);
    assert_eq!(read.ok, 1000, "every read step succeeded");
    assert_eq!(read.error_count(), 0);
    // Writes fail from 5 s on: the compound request's error is the write step's.
    assert_eq!(write.ok, rmw.ok);
    assert_eq!(write.error_count(), rmw.error_count());
    assert!(
        (450..=550).contains(&write.error_count()),
        "{}",
        write.error_count()
    );
    let ms = |ns: u64| ns as f64 / 1e6;
    assert!(
        (ms(read.service_ns.max()) - 2.0).abs() < 0.1,
        "{}",
        ms(read.service_ns.max())
    );
    assert!((ms(write.service_ns.max()) - 4.0).abs() < 0.1);
    assert!((ms(rmw.response_ns.value_at_quantile(0.5)) - 6.0).abs() < 0.1);
    // Under the paused clock nothing waits before sending: read + write = the whole.
    assert!(
        (ms(read.response_ns.value_at_quantile(0.5))
            + ms(write.response_ns.value_at_quantile(0.5))
            - ms(rmw.response_ns.value_at_quantile(0.5)))
        .abs()
            < 0.1
    );
    assert_eq!(read.wait_ns.len(), 1000, "the first step records the wait");
    assert_eq!(write.wait_ns.len(), 0, "later steps record none");
}

/// With hiccups recorded, the first worker's loop wakes at least every millisecond, whatever
/// the load: jHiccup's 1 ms resolution, in open and closed loop. (Under the paused clock
/// every wake-up comes on time, so each is a sample of lateness below a millisecond.)
#[tokio::test(start_paused = true)]
async fn the_first_worker_wakes_every_millisecond_to_measure_hiccups() {
    for mode in [open(10.0, 100), LoadMode::Closed { concurrency: 2 }] {
        let clock = TokioClock::start_now();
        let workload = Arc::new(Simulated {
            service: Duration::from_millis(5),
            ..Simulated::writes_only(clock, None)
        });
        let config = EngineConfig {
            hiccups: true,
            workers: 1,
            ..config(mode, 2)
        };
        let (out, kept) = run_kept(workload, clock, &config).await;
        // The samples each stand for a sleep of a millisecond (plus its lateness, none here)
        // and together cover the run, up to its last answer.
        let (count, max) = (out.hiccups.len(), out.hiccups.max());
        let covered_ns = count as f64 * 1e6 + out.hiccups.mean() * count as f64;
        let elapsed_ns = out.elapsed_ns as f64;
        assert!(
            covered_ns >= elapsed_ns * 0.995 && covered_ns <= elapsed_ns * 1.01,
            "{mode:?}: {count} wake-ups, up to {max} ns late, cover {covered_ns} ns of {elapsed_ns}"
        );
        assert!(max <= 1_000, "{mode:?}: on time, up to {max} ns late");
        for interval in &kept[..2] {
            let n = interval.hiccups.as_ref().expect("recorded").len();
            assert!(n >= 500, "{mode:?}: {n} in a second");
        }
    }
    // Without hiccups, no worker ticks and none are recorded.
    let (out, intervals) = simulate(open(10.0, 100), 2, 5, None).await;
    assert_eq!(out.hiccups.len(), 0);
    assert!(intervals.iter().all(|i| i.hiccups.is_none()));
}

/// Answers in 1 ms; the request numbered `block_at` holds its worker's thread for `block`
/// before it goes, as a client stall would (a page fault storm, a descheduled thread).
struct Blocking {
    block_at: u64,
    block: Duration,
    operations: Operations,
}

impl Workload for Blocking {
    fn operations(&self) -> &Operations {
        &self.operations
    }
    async fn execute(
        &self,
        _op: usize,
        seq: u64,
        _parts: &mut Parts,
    ) -> Result<(), ExecutionError> {
        if seq == self.block_at {
            std::thread::sleep(self.block);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        Ok(())
    }
}

/// A stall of the worker's own thread shows as a hiccup of its length (a meter on a thread
/// of its own, on another core, would not see it), in the interval where it ended. Real
/// clock: the lower bounds hold however late the host runs the thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_stall_of_the_workers_thread_is_a_hiccup() {
    let clock = RealClock::start_now();
    let workload = Arc::new(Blocking {
        block_at: 24,
        block: Duration::from_millis(40),
        operations: writes(),
    });
    let config = EngineConfig {
        interval: Duration::from_millis(100),
        workers: 1,
        hiccups: true,
        send_resolution: Duration::from_millis(1),
        end: End {
            warmup_ns: 0,
            duration_ns: Some(400_000_000),
            ops: None,
        },
        ..config(open(200.0, 100), 1)
    };
    let (out, kept) = run_kept(workload, clock, &config).await;
    let max = out.hiccups.max();
    assert!(max >= 39_000_000, "largest hiccup {max} ns");
    assert!(out.hiccups.len() >= 20, "{} samples", out.hiccups.len());
    // The request numbered 24 leaves at 120 ms: its stall ends in the second interval.
    let worst = kept
        .iter()
        .max_by_key(|i| i.hiccups.as_ref().map_or(0, |h| h.max()))
        .expect("intervals");
    assert_eq!(worst.index, 1, "ended between 100 and 200 ms");
}

/// A workload whose choice of operation blocks the worker's thread once: a stall of the loop
/// between one wake-up and the arming of the next, where no timer is armed to measure it.
struct BlockingChoice(Blocking);

impl Workload for BlockingChoice {
    fn operations(&self) -> &Operations {
        self.0.operations()
    }
    fn op_for(&self, seq: u64) -> usize {
        if seq == self.0.block_at {
            std::thread::sleep(self.0.block);
        }
        self.0.operations().op_for(seq)
    }
    async fn execute(&self, op: usize, seq: u64, parts: &mut Parts) -> Result<(), ExecutionError> {
        self.0.execute(op, seq, parts).await
    }
}

/// A stall of the worker's thread while it sends (after one wake-up, before the next is
/// armed) is a hiccup of its length too: the tick it passed without sleeping is measured.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_stall_between_wake_ups_is_a_hiccup() {
    let clock = RealClock::start_now();
    let workload = Arc::new(BlockingChoice(Blocking {
        block_at: 24,
        block: Duration::from_millis(300),
        operations: writes(),
    }));
    let config = EngineConfig {
        interval: Duration::from_millis(100),
        workers: 1,
        hiccups: true,
        send_resolution: Duration::from_millis(1),
        end: End {
            warmup_ns: 0,
            duration_ns: Some(500_000_000),
            ops: None,
        },
        ..config(open(200.0, 100), 1)
    };
    let (out, _) = run_kept(workload, clock, &config).await;
    let max = out.hiccups.max();
    assert!(max >= 295_000_000, "largest hiccup {max} ns");
}

/// Workers on lanes (threads of their own) keep the whole schedule between them, each its
/// share, and still measure hiccups on the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn workers_on_lanes_send_the_whole_schedule() {
    let clock = RealClock::start_now();
    let workload = Arc::new(Blocking {
        block_at: u64::MAX,
        block: Duration::ZERO,
        operations: writes(),
    });
    let config = EngineConfig {
        interval: Duration::from_millis(100),
        workers: 2,
        hiccups: true,
        send_resolution: Duration::from_millis(1),
        end: End {
            warmup_ns: 0,
            duration_ns: Some(300_000_000),
            ops: None,
        },
        lanes: Some(Arc::new(crate::lanes::Lanes::start(2).unwrap())),
        ..config(open(1000.0, 100), 1)
    };
    let (out, _) = run_kept(workload, clock, &config).await;
    assert_eq!(out.sent, 300);
    let all = &out.totals[0][Phase::Measure.index()];
    assert_eq!(all.ok, 300);
    assert!(out.hiccups.len() >= 200, "{} samples", out.hiccups.len());
    config.lanes.as_ref().unwrap().stop();
}
