//! The populate: rows written before the measured run, as fast as the cluster takes them
//! (a closed loop), reported on their own.
//!
//! Its writes are measured like the measured run's requests, but kept apart from them so
//! that the measured run's figures do not change: populate.hlog (the populate's intervals,
//! tagged `<op>.rt`, `<op>.st` and `<op>.wt` as histograms.hlog), populate.hgrm and
//! populate.service.hgrm (the whole populate's response and service times), and the
//! `writes` of the populate's summary. A closed loop has no schedule: a write's response
//! time starts when a slot in flight frees, and adds only the client's own wait to its
//! service time.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;

use crate::catalogue::{POPULATE_HGRM, POPULATE_HLOG, POPULATE_SERVICE_HGRM};
use crate::engine::clock::RealClock;
use crate::engine::schedule::{End, Progress};
use crate::engine::{self, EngineConfig, Interval, IntervalSink, LoadMode};
use crate::metrics::Phase;
use crate::results::config::RunSettings;
use crate::results::hgrm;
use crate::results::hlog::HlogWriter;
use crate::results::summary::{OpSummary, PopulateSummary};
use crate::workload::{AnyWorkload, Workload};

use super::observer::RunObserver;

/// Requests in flight while populating: enough to keep a node busy without a rate.
pub const POPULATE_CONCURRENCY: usize = 128;

/// Writes the workload's `populate` rows with its populate operation, and their latencies
/// into `out` (see the module's doc).
pub(crate) async fn populate_rows(
    workload: &Arc<AnyWorkload>,
    settings: &RunSettings,
    lanes: Arc<crate::lanes::Lanes>,
    progress: Arc<Progress>,
    observer: &mut dyn RunObserver,
    out: &Path,
) -> anyhow::Result<PopulateSummary> {
    // A fleet's worker writes its share of the rows: those whose numbers are its residue.
    let share = settings.share();
    let rows = crate::engine::schedule::share_of(settings.workload.populate, share);
    let concurrency = workload
        .populate_concurrency()
        .unwrap_or(POPULATE_CONCURRENCY);
    observer.populating(rows, concurrency);
    let engine_config = EngineConfig {
        mode: LoadMode::Closed {
            concurrency,
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
    let op = workload.populate_op();
    let op_name = workload.op_names()[op].clone();
    let hlog_path = out.join(POPULATE_HLOG);
    let hlog = HlogWriter::create(&hlog_path, SystemTime::now())
        .with_context(|| format!("creating {}", hlog_path.display()))?;
    let mut sink = Rows {
        written: 0,
        observer,
        log: Log {
            hlog,
            op,
            tags: ["rt", "st", "wt"].map(|t| format!("{op_name}.{t}")),
            error: None,
        },
    };
    let started = Instant::now();
    let outcome = engine::run(
        workload.clone(),
        RealClock::start_now(),
        &engine_config,
        progress,
        &mut sink,
    )
    .await;
    let seconds = started.elapsed().as_secs_f64();
    let Rows { observer, log, .. } = sink;
    if let Some(e) = log.error {
        return Err(e.context(format!("writing {}", hlog_path.display())));
    }
    let stats = &outcome.totals[op][Phase::Measure.index()];
    if stats.ok > 0 {
        for (name, histogram) in [POPULATE_HGRM, POPULATE_SERVICE_HGRM]
            .iter()
            .zip([&stats.response_ns, &stats.service_ns])
        {
            hgrm::write_file(&out.join(name), histogram)?;
        }
    }
    let summary = PopulateSummary {
        rows,
        written: stats.ok,
        errors: stats.error_count(),
        seconds,
        rate_per_s: stats.ok as f64 / seconds.max(1e-9),
        writes: Some(OpSummary::of(&op_name, stats, seconds)),
    };
    observer.populated(&summary);
    Ok(summary)
}

/// Counts the rows and tells the observer, once an interval; logs the interval's writes.
struct Rows<'a> {
    written: u64,
    observer: &'a mut dyn RunObserver,
    log: Log,
}

/// populate.hlog, as the intervals come.
struct Log {
    hlog: HlogWriter<BufWriter<File>>,
    /// The populate's operation type.
    op: usize,
    /// Its response, service and wait time tags.
    tags: [String; 3],
    /// The first write that failed; the populate goes on without its log.
    error: Option<anyhow::Error>,
}

impl Log {
    fn write(&mut self, interval: &Interval) -> anyhow::Result<()> {
        let stats = &interval.ops[self.op][Phase::Measure.index()];
        if stats.total() == 0 {
            return Ok(());
        }
        let offset = Duration::from_nanos(interval.start_ns);
        let length = Duration::from_nanos(interval.length_ns);
        for (tag, histogram) in
            self.tags
                .iter()
                .zip([&stats.response_ns, &stats.service_ns, &stats.wait_ns])
        {
            self.hlog
                .write_interval(Some(tag), offset, length, histogram)?;
        }
        Ok(())
    }
}

impl IntervalSink for Rows<'_> {
    fn interval(&mut self, interval: &Interval) {
        let done: u64 = interval.ops.iter().flatten().map(|s| s.total()).sum();
        self.written += done;
        if self.log.error.is_none() {
            if let Err(e) = self.log.write(interval) {
                self.log.error = Some(e);
            }
        }
        self.observer.populate_interval(
            (interval.start_ns + interval.length_ns) as f64 / 1e9,
            self.written,
            done as f64 / (interval.length_ns as f64 / 1e9),
        );
    }
}
