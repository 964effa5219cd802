//! How a run ends: at its duration or request count, when the client cannot keep its
//! schedule (however far behind, however impossible the rate), when every request fails,
//! when answers do not come before their timeout, and on a stop.

use std::sync::Arc;
use std::time::Duration;

use scylla::errors::ExecutionError;

use super::*;
use crate::engine::clock::{RealClock, TokioClock};
use crate::engine::schedule::{End, Progress};
use crate::metrics::{ErrorClass, Phase};
use crate::workload::{Parts, Workload};

/// Answers at once, but each request holds its client's thread for 2 ms as it is sent: a
/// client that keeps at most 500 requests a second going, whatever the server.
struct SlowClient {
    operations: Operations,
}

impl Workload for SlowClient {
    fn operations(&self) -> &Operations {
        &self.operations
    }
    async fn execute(&self, _: usize, _: u64, _: &mut Parts) -> Result<(), ExecutionError> {
        std::thread::sleep(Duration::from_millis(2));
        Ok(())
    }
}

/// A client slower than its schedule, with in-flight slots to spare: it falls behind, stops
/// sending a second after the schedule's end, and no request waited for a slot (the client,
/// not the server, held them back). Real clock: 2000 requests in 1 s, 500 a second sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_client_slower_than_its_schedule_stops_on_time_with_its_shortfall() {
    let clock = RealClock::start_now();
    let workload = Arc::new(SlowClient {
        operations: writes(),
    });
    let mut cfg = config(open(2000.0, 1000), 1);
    cfg.workers = 1;
    let (out, _) = run_kept(workload, clock, &cfg).await;
    assert_eq!(out.stop, StopReason::Completed);
    assert_eq!(out.limit_waits, 0);
    assert!(!out.unsent_held);
    // Nearly every request that left, left late (all but the first 10 ms' worth).
    assert!(
        out.client_late as f64 > out.sent as f64 * 0.9,
        "{} of {}",
        out.client_late,
        out.sent
    );
    let all = measured_total(&out);
    assert_eq!(all.total(), 2_000, "every scheduled request accounted for");
    assert_eq!(all.ok as f64 + out.unsent, 2_000.0);
    // At most 500/s over the second of the schedule and the second of grace.
    assert!(out.unsent >= 1_000.0, "{}", out.unsent);
    let elapsed = seconds(out.elapsed_ns);
    assert!((2.0..2.5).contains(&elapsed), "ended at {elapsed} s");
}

/// A schedule no client could keep (`--rate 1e99`) ends at its duration plus the grace like
/// any other: what was not sent is counted up to the cap and estimated beyond it.
#[tokio::test(start_paused = true)]
async fn an_impossible_rate_stops_at_the_end_of_its_duration() {
    let (out, _) = simulate(open(1e99, 100), 2, 1, None).await;
    assert_eq!(out.stop, StopReason::Completed);
    let elapsed = seconds(out.elapsed_ns);
    assert!((3.0..3.1).contains(&elapsed), "ended at {elapsed} s");
    assert!(out.unsent > 1e98, "{}", out.unsent);
    assert!(out.unsent.is_finite());
    let all = measured_total(&out);
    // Each worker counted the first UNSENT_COUNTED one by one.
    assert_eq!(all.errors[&ErrorClass::Unsent], 2 * UNSENT_COUNTED);
    assert!(out.limit_waits > 0, "the 100 slots were always taken");
    assert!(out.unsent_held);
    // A second behind at this rate is more requests than u64 counts: the backlog saturates
    // instead of reading as a figure, and the run is marked.
    assert_eq!(out.max_backlog, u64::MAX);
    assert!(out.overflowed);
}

/// A measured period of so many requests at so low a rate that it ends beyond 2^64 ns (584
/// years): its end saturates instead of overflowing past the warmup, and is marked.
#[test]
fn a_measured_period_beyond_u64_saturates_and_is_marked() {
    let mut cfg = config(open(1.0, 100), 0);
    cfg.end = End {
        warmup_ns: 10_000_000_000,
        duration_ns: None,
        ops: Some(100_000_000_000),
    };
    let period = MeasuredPeriod::scheduled(&cfg).unwrap();
    assert_eq!((period.from_ns, period.to_ns), (10_000_000_000, u64::MAX));
    assert!(period.overflows());
    assert!(period.seconds() > 5e8);
    cfg.end.ops = Some(1_000_000);
    let period = MeasuredPeriod::scheduled(&cfg).unwrap();
    assert_eq!(period.to_ns, 1_000_010_000_000_000);
    assert!(!period.overflows());
}

/// Sequence numbers start after the populate's rows; one beyond u64 saturates and marks the
/// run, which still sends its requests and ends.
#[tokio::test(start_paused = true)]
async fn sequence_numbers_beyond_u64_saturate_and_mark_the_run() {
    for (first_seq, overflows) in [(u64::MAX - 2, true), (u64::MAX - 5, false)] {
        let clock = TokioClock::start_now();
        let workload = Arc::new(Simulated::writes_only(clock, None));
        let mut cfg = config(LoadMode::Closed { concurrency: 2 }, 0);
        cfg.end = End {
            warmup_ns: 0,
            duration_ns: None,
            ops: Some(5),
        };
        cfg.first_seq = first_seq;
        let (out, _) = run_kept(workload, clock, &cfg).await;
        assert_eq!(out.stop, StopReason::Completed);
        assert_eq!(out.sent, 5);
        assert_eq!(out.overflowed, overflows, "first_seq {first_seq}");
    }
}

/// The same schedule dealt by slots (the default send resolution), evenly or as a Poisson
/// process: every request is intended at the same nanosecond, so one slot, one worker's,
/// holds the whole run. The other worker owns none of it and still ends on time: its draw
/// pauses instead of skipping the other's requests for ever.
#[tokio::test(start_paused = true)]
async fn an_impossible_rate_dealt_by_slots_stops_at_the_end_of_its_duration() {
    for arrivals in [ArrivalKind::Fixed, ArrivalKind::Poisson] {
        let clock = TokioClock::start_now();
        let workload = Arc::new(Simulated {
            clock,
            service: Duration::from_millis(1),
            stall: None,
            operations: mixed(&[0.8, 0.2]),
            fail_from: None,
        });
        let mut config = config(
            LoadMode::Open {
                rate_per_s: 1e99,
                arrivals,
                max_in_flight: 100,
            },
            2,
        );
        config.send_resolution = Duration::from_millis(1);
        let (out, _) = run_kept(workload, clock, &config).await;
        assert_eq!(out.stop, StopReason::Completed, "{arrivals:?}");
        let elapsed = seconds(out.elapsed_ns);
        assert!(
            (3.0..3.1).contains(&elapsed),
            "{arrivals:?}: ended at {elapsed} s"
        );
        let all = measured_total(&out);
        // The owner of the one slot counted its unsent requests up to the cap.
        assert_eq!(
            all.errors[&ErrorClass::Unsent],
            UNSENT_COUNTED,
            "{arrivals:?}"
        );
        assert!(out.unsent > 1e6, "{arrivals:?}: {}", out.unsent);
    }
}

/// A stop ends a worker whose schedule holds nothing of its own for a long way.
#[tokio::test(start_paused = true)]
async fn a_stop_reaches_a_worker_that_owns_no_request_yet() {
    let clock = TokioClock::start_now();
    let workload = Arc::new(Simulated {
        clock,
        service: Duration::from_millis(1),
        stall: None,
        operations: mixed(&[0.8, 0.2]),
        fail_from: None,
    });
    let mut config = config(open(1e99, 100), 600);
    config.send_resolution = Duration::from_millis(1);
    let progress = Arc::new(Progress::default());
    let stopper = {
        let progress = progress.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            progress
                .stop
                .store(true, std::sync::atomic::Ordering::Relaxed);
        })
    };
    let mut kept = Kept::default();
    let out = run(workload, clock, &config, progress, &mut kept).await;
    stopper.await.unwrap();
    let elapsed = seconds(out.elapsed_ns);
    assert!(
        elapsed < 1.0,
        "stopped at {elapsed} s, not at the end of 600 s"
    );
}

/// A run bounded by a request count, after a warmup by time.
#[tokio::test(start_paused = true)]
async fn warmup_and_op_count() {
    let clock = TokioClock::start_now();
    let workload = Arc::new(Simulated::writes_only(clock, None));
    let mut cfg = config(open(1000.0, 100), 0);
    cfg.end = End {
        warmup_ns: 2_000_000_000,
        duration_ns: None,
        ops: Some(3_000),
    };
    let (out, _) = run_kept(workload, clock, &cfg).await;
    assert_eq!(out.totals[0][Phase::Warmup.index()].ok, 2_000);
    assert_eq!(out.totals[0][Phase::Measure.index()].ok, 3_000);
    assert_eq!(out.stop, StopReason::Completed);
}

/// When every request fails for ALL_FAILING_LIMIT, the run stops by itself and says why;
/// the failures are counted by class with an example message.
#[tokio::test(start_paused = true)]
async fn a_run_where_everything_fails_stops_by_itself() {
    let clock = TokioClock::start_now();
    let workload = Arc::new(Simulated::writes_only(clock, Some(3_000_000_000)));
    let (out, _) = run_kept(workload, clock, &config(open(100.0, 100), 600)).await;
    assert_eq!(out.stop, StopReason::AllRequestsFailing);
    let elapsed_s = out.elapsed_ns as f64 / 1e9;
    assert!(
        (13.0..15.0).contains(&elapsed_s),
        "stopped {elapsed_s} s in, ~10 s after the failures began"
    );
    let writes = &out.totals[0][Phase::Measure.index()];
    assert_eq!(writes.ok, 300);
    assert!(writes.errors[&crate::metrics::ErrorClass::Connection] >= 1000);
    assert!(writes.error_examples[&crate::metrics::ErrorClass::Connection].contains("empty plan"));
}

/// A server that keeps up achieves the attempted rate, however slow its last answers (the
/// drain after the schedule ends is not charged to throughput); one that falls behind shows
/// its backlog as the shortfall.
#[tokio::test(start_paused = true)]
async fn the_achieved_rate_counts_answers_within_the_scheduled_period() {
    // 50 ms answers at 1000/s for 4 s: the last answers arrive 50 ms after the schedule ends.
    let (out, _) = simulate(open(1000.0, 1000), 4, 50, None).await;
    let period = out.measured_period.expect("open loop");
    assert_eq!((period.from_ns, period.to_ns), (0, 4_000_000_000));
    assert!(out.elapsed_ns >= 4_049_000_000, "{}", out.elapsed_ns);
    // The first 50 ms had no answers yet: 4000 sent, 3950 answered within the period.
    assert!((3945..=3955).contains(&period.ok), "{}", period.ok);
    assert!((period.achieved_per_s() - 987.5).abs() < 2.0);

    // With a warmup, the answers to the warmup's last requests count, and steady flow gives
    // the attempted rate to within a request.
    let clock = TokioClock::start_now();
    let workload = Arc::new(Simulated {
        clock,
        service: Duration::from_millis(50),
        stall: None,
        operations: mixed(&[1.0, 0.0]),
        fail_from: None,
    });
    let mut cfg = config(open(1000.0, 1000), 4);
    cfg.end.warmup_ns = 1_000_000_000;
    let (out, _) = run_kept(workload, clock, &cfg).await;
    let period = out.measured_period.expect("open loop");
    assert_eq!(
        (period.from_ns, period.to_ns),
        (1_000_000_000, 5_000_000_000)
    );
    assert!((3999..=4001).contains(&period.ok), "{}", period.ok);

    // Frozen for the last second: the backlog is the shortfall.
    let (out, _) = simulate(
        open(1000.0, 1000),
        4,
        1,
        Some((3_000_000_000, 5_000_000_000)),
    )
    .await;
    let period = out.measured_period.expect("open loop");
    assert!(
        period.achieved_per_s() < 760.0,
        "{}",
        period.achieved_per_s()
    );

    // A closed loop has no scheduled period.
    let (out, _) = simulate(LoadMode::Closed { concurrency: 4 }, 2, 1, None).await;
    assert!(out.measured_period.is_none());
}

/// A 6 s freeze with a 1 s request timeout: every request sent from the freeze's start until
/// 1 s before its end times out exactly 1 s after its send, in the interval where that
/// falls; the others are answered, none later than the timeout.
#[tokio::test(start_paused = true)]
async fn requests_without_an_answer_time_out_at_their_deadline() {
    let clock = TokioClock::start_now();
    let workload = Arc::new(Simulated {
        stall: Some((2_000_000_000, 8_000_000_000)),
        ..Simulated::writes_only(clock, None)
    });
    let mut config = config(open(100.0, 10_000), 10);
    config.workers = 1;
    config.request_timeout = Some(Duration::from_secs(1));
    let (out, kept) = run_kept(workload, clock, &config).await;
    let all = measured(&out);
    // Sent at 2.00, 2.01, ..., 7.00 s: 501 requests; the one sent at 7.00 would be answered
    // at 8.001 s, after its deadline.
    assert_eq!(
        all.errors.get(&ErrorClass::Timeout),
        Some(&501),
        "{:?}",
        all.errors
    );
    assert_eq!(all.ok, 1000 - 501);
    assert!(
        all.response_ns.max() <= 1_000_000_000,
        "{}",
        all.response_ns.max()
    );
    let timeouts: Vec<u64> = kept
        .iter()
        .map(|i| {
            i.ops[0][Phase::Measure.index()]
                .errors
                .get(&ErrorClass::Timeout)
                .copied()
                .unwrap_or(0)
        })
        .collect();
    assert_eq!(
        timeouts[..9],
        [0, 0, 0, 100, 100, 100, 100, 100, 1],
        "{timeouts:?}"
    );
    let example = &out.totals[0][Phase::Measure.index()].error_examples[&ErrorClass::Timeout];
    assert!(example.contains("--timeout"), "{example}");
}
