//! The populate: rows written before the measured run, as fast as the cluster takes them
//! (a closed loop), reported on their own.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::clock::RealClock;
use crate::engine::schedule::{End, Progress};
use crate::engine::{self, EngineConfig, Interval, IntervalSink, LoadMode};
use crate::metrics::Phase;
use crate::results::config::RunSettings;
use crate::results::summary::PopulateSummary;
use crate::workload::{AnyWorkload, Workload};

use super::observer::RunObserver;

/// Requests in flight while populating: enough to keep a node busy without a rate.
pub const POPULATE_CONCURRENCY: usize = 128;

/// Writes the workload's `populate` rows with its populate operation.
pub(crate) async fn populate_rows(
    workload: &Arc<AnyWorkload>,
    settings: &RunSettings,
    lanes: Arc<crate::lanes::Lanes>,
    progress: Arc<Progress>,
    observer: &mut dyn RunObserver,
) -> PopulateSummary {
    // A fleet's worker writes its share of the rows: those whose numbers are its residue.
    let share = settings.share();
    let rows = crate::engine::schedule::share_of(settings.workload.populate, share);
    observer.populating(rows, POPULATE_CONCURRENCY);
    let engine_config = EngineConfig {
        mode: LoadMode::Closed {
            concurrency: POPULATE_CONCURRENCY,
        },
        end: End {
            warmup_ns: 0,
            duration_ns: None,
            ops: Some(rows),
        },
        interval: Duration::from_secs(5),
        workers: lanes.len(),
        lanes: Some(lanes),
        first_seq: 0,
        only_op: Some(workload.populate_op()),
        seed: settings.workload.seed,
        share,
        hiccups: false,
        send_resolution: Duration::ZERO,
        request_timeout: Some(Duration::from_secs_f64(settings.request_timeout_s)),
        lag_limit: None,
    };
    /// Counts the rows and tells the observer, once an interval.
    struct Rows<'a> {
        written: u64,
        observer: &'a mut dyn RunObserver,
    }
    impl IntervalSink for Rows<'_> {
        fn interval(&mut self, interval: &Interval) {
            let done: u64 = interval.ops.iter().flatten().map(|s| s.total()).sum();
            self.written += done;
            self.observer.populate_interval(
                (interval.start_ns + interval.length_ns) as f64 / 1e9,
                self.written,
                done as f64 / (interval.length_ns as f64 / 1e9),
            );
        }
    }
    let started = Instant::now();
    let outcome = engine::run(
        workload.clone(),
        RealClock::start_now(),
        &engine_config,
        progress,
        &mut Rows {
            written: 0,
            observer,
        },
    )
    .await;
    let seconds = started.elapsed().as_secs_f64();
    let stats = &outcome.totals[workload.populate_op()][Phase::Measure.index()];
    let summary = PopulateSummary {
        rows,
        written: stats.ok,
        errors: stats.error_count(),
        seconds,
        rate_per_s: stats.ok as f64 / seconds.max(1e-9),
    };
    observer.populated(&summary);
    summary
}
