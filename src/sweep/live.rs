//! A sweep against a real cluster: each step a full closed-loop run
//! ([`crate::run::execute`]) in its own directory, ended once its throughput is stable, and
//! sweep.json rewritten after every step. The rules are [`super`]'s.

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use hdrhistogram::Histogram;

use super::settings::SweepSettings;
use super::{
    stop_rule, Stability, StabilityRule, StepEnd, StepRecord, SweepFile, SweepStatus, SweepStop,
};
use crate::catalogue::STEPS;
use crate::cluster::NodeSource;
use crate::engine::{Interval, LoadMode, StopReason};
use crate::metrics::Phase;
use crate::results::summary::{Latency, PopulateSummary, RunSummary};
use crate::run::template::Load;
use crate::run::{
    self, Control, Finished, Measuring, RunContext, RunObserver, RunOutcome, StopSignal,
};
use crate::sla::Judged;
use crate::stats::new_histogram;

/// Hears a sweep as it goes: a [`RunObserver`] for every step's run, and the sweep's own
/// events.
pub trait SweepObserver {
    /// The observer of the steps' runs.
    fn runs(&mut self) -> &mut dyn RunObserver;

    /// Step `index` (from 0) of at most `total` starts, at `concurrency`.
    fn step(&mut self, _index: usize, _total: usize, _concurrency: usize) {}

    /// A step ended; `earlier` are the steps before it.
    fn step_done(&mut self, _earlier: &[StepRecord], _step: &StepRecord) {}
}

/// What a sweep needs besides its settings and directory.
pub struct SweepContext<'a> {
    /// The runtime every step runs on.
    pub runtime: &'a tokio::runtime::Runtime,
    /// Ends the sweep early (the step in progress ends, kept as interrupted).
    pub stop: Arc<StopSignal>,
    /// User name and password, for a cluster that asks.
    pub credentials: Option<(String, String)>,
    /// Whether an error that kept the first step from starting is the user's (an
    /// unreachable contact point, a table with other columns): then the sweep ends with it,
    /// as a run would, instead of recording a failed step.
    pub is_usage: &'a dyn Fn(&anyhow::Error) -> bool,
}

/// Runs a whole sweep into `out` (which it creates), rewriting sweep.json after every step;
/// returns sweep.json as written last, or the first step's error when it is the user's.
pub fn sweep(
    config: &SweepSettings,
    out: &Path,
    context: SweepContext,
    observer: &mut dyn SweepObserver,
) -> anyhow::Result<SweepFile> {
    fs::create_dir_all(out)?;
    let mut file = SweepFile {
        headroom_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: config.run.workload.name.clone(),
        latency_kind: LoadMode::Closed { concurrency: 1 }
            .latency_kind()
            .to_string(),
        settings: config.clone(),
        status: SweepStatus::Running,
        stop: None,
        steps: Vec::new(),
    };
    file.write(out)?;

    let SweepContext {
        runtime,
        stop,
        credentials,
        is_usage,
    } = context;
    let total = config.concurrencies.len();
    for (i, &concurrency) in config.concurrencies.iter().enumerate() {
        if stop.is_set() {
            file.stop = Some(SweepStop::Interrupted);
            break;
        }
        observer.step(i, total, concurrency);
        let (step, error) = run_step(
            config,
            out,
            runtime,
            &stop,
            credentials.clone(),
            concurrency,
            i == 0,
            observer.runs(),
        );
        if let Some(error) = error.filter(|e| i == 0 && is_usage(e)) {
            // The first step could not start because of the command line: say so as `run`
            // does.
            file.steps.push(step);
            file.status = SweepStatus::Failed;
            file.stop = Some(SweepStop::StepFailed {
                concurrency,
                error: format!("{error:#}"),
            });
            file.write(out)?;
            return Err(error);
        }
        observer.step_done(&file.steps, &step);
        file.steps.push(step.clone());
        file.stop = match step.end {
            StepEnd::Interrupted => Some(SweepStop::Interrupted),
            StepEnd::Failed => Some(SweepStop::StepFailed {
                concurrency,
                error: step.error.clone().unwrap_or_default(),
            }),
            _ => {
                let rates: Vec<f64> = file.complete_steps().map(|s| s.achieved_per_s).collect();
                stop_rule(&rates, config.stable_error)
            }
        };
        if file.stop.is_some() {
            break;
        }
        file.write(out)?;
    }
    let stopped = file.stop.get_or_insert(SweepStop::LastConcurrency {
        concurrency: *config
            .concurrencies
            .last()
            .expect("a ladder is never empty"),
    });
    file.status = match stopped {
        SweepStop::Interrupted => SweepStatus::Interrupted,
        SweepStop::StepFailed { .. } => SweepStatus::Failed,
        _ => SweepStatus::Completed,
    };
    file.write(out)?;
    Ok(file)
}

/// Runs one step and makes its record; a step that cannot run is a failed record (with the
/// error beside it), so that the sweep keeps what it has.
#[allow(clippy::too_many_arguments)]
fn run_step(
    config: &SweepSettings,
    out: &Path,
    runtime: &tokio::runtime::Runtime,
    stop: &Arc<StopSignal>,
    credentials: Option<(String, String)>,
    concurrency: usize,
    populate: bool,
    observer: &mut dyn RunObserver,
) -> (StepRecord, Option<anyhow::Error>) {
    let run_config = config.run.run(
        Load::Concurrency(concurrency),
        config.warmup_s,
        config.step_duration_s.unwrap_or(config.step_max_s),
        None,
    );
    let relative = format!("{STEPS}/concurrency-{concurrency}");
    let dir = out.join(&relative);
    let mut watch = StepWatch {
        inner: observer,
        rule: config.stability(),
        until_stable: config.step_duration_s.is_none(),
        interval_ns: (config.run.interval_s * 1e9).round() as u64,
        warmup_ns: (config.warmup_s * 1e9).round() as u64,
        rates_per_s: Vec::new(),
        service_ns: new_histogram(),
        last: None,
        stable: false,
    };
    let started = Instant::now();
    let local_nodes = NodeSource::recorded_default();
    let context = RunContext {
        out: &dir,
        credentials,
        stop: stop.clone(),
        populate,
        local_nodes: &local_nodes,
    };
    let executed = runtime.block_on(run::execute(&run_config, &context, &mut watch));
    let mut record = StepRecord {
        concurrency,
        end: StepEnd::Failed,
        achieved_per_s: 0.0,
        requests: 0,
        errors: 0,
        measured_s: 0.0,
        intervals: watch.rates_per_s.len(),
        relative_error: watch.last.and_then(|s| s.relative_error),
        drift: watch.last.and_then(|s| s.drift),
        service_time: Latency::of(&watch.service_ns),
        dir: relative,
        wall_s: started.elapsed().as_secs_f64(),
        error: None,
    };
    match executed {
        Err(e) => {
            record.error = Some(format!("{e:#}"));
            return (record, Some(e));
        }
        Ok(RunOutcome::StoppedDuringPopulate) => record.end = StepEnd::Interrupted,
        Ok(RunOutcome::LoadedOnly) => record.error = Some("no measured run".into()),
        Ok(RunOutcome::Finished(summary)) => fill(&mut record, &summary, &watch, config),
    }
    (record, None)
}

/// The record of a step that ran, from its summary and what its watch saw.
fn fill(record: &mut StepRecord, summary: &RunSummary, watch: &StepWatch, config: &SweepSettings) {
    record.achieved_per_s = summary.achieved_rate_per_s;
    record.requests = summary.ops.iter().map(|o| o.requests).sum();
    record.errors = summary.ops.iter().map(|o| o.requests - o.ok).sum();
    record.measured_s = summary.measured_s;
    record.end = match summary.stop {
        StopReason::Interrupted => StepEnd::Interrupted,
        StopReason::AllRequestsFailing => {
            record.error = Some(format!(
                "every request failed for {} s",
                crate::engine::ALL_FAILING_LIMIT.as_secs()
            ));
            StepEnd::Failed
        }
        StopReason::Completed if watch.stable => StepEnd::Stable,
        StopReason::Completed if config.step_duration_s.is_some() => StepEnd::Fixed,
        StopReason::Completed => StepEnd::Longest,
    };
    if record.end.is_complete() && record.requests == record.errors {
        record.end = StepEnd::Failed;
        record.error = Some(if record.requests == 0 {
            "no request was answered in the measured part".to_string()
        } else {
            let example = summary
                .ops
                .iter()
                .flat_map(|o| o.error_examples.values())
                .next()
                .cloned()
                .unwrap_or_default();
            format!("every request of the measured part failed, e.g. {example}")
        });
    }
}

/// Watches a step's intervals for the sweep: adds up the service time of every measured
/// request, keeps the throughput of each whole measured interval, and ends the step once it
/// is stable; hands every event on to the sweep's own observer.
struct StepWatch<'o> {
    inner: &'o mut dyn RunObserver,
    rule: StabilityRule,
    /// Whether stability ends the step (else it runs its fixed length).
    until_stable: bool,
    interval_ns: u64,
    warmup_ns: u64,
    rates_per_s: Vec<f64>,
    service_ns: Histogram<u64>,
    last: Option<Stability>,
    stable: bool,
}

impl RunObserver for StepWatch<'_> {
    fn note(&mut self, line: &str) {
        self.inner.note(line);
    }

    fn problem(&mut self, line: &str) {
        self.inner.problem(line);
    }

    fn prepared(&mut self, out: &Path, native: bool) {
        self.inner.prepared(out, native);
    }

    fn populating(&mut self, rows: u64, in_flight: usize) {
        self.inner.populating(rows, in_flight);
    }

    fn populate_interval(&mut self, at_s: f64, rows: u64, rate_per_s: f64) {
        self.inner.populate_interval(at_s, rows, rate_per_s);
    }

    fn populated(&mut self, summary: &PopulateSummary) {
        self.inner.populated(summary);
    }

    fn measuring(&mut self, start: &Measuring) {
        self.inner.measuring(start);
    }

    fn window(&mut self, judged: &Judged) {
        self.inner.window(judged);
    }

    fn finished(&mut self, run: &Finished) {
        self.inner.finished(run);
    }

    fn interval(&mut self, interval: &Interval) -> Control {
        let _ = self.inner.interval(interval);
        if self.watch(interval) {
            Control::End
        } else {
            Control::Go
        }
    }
}

impl StepWatch<'_> {
    /// Takes one interval; true once the step is stable (and runs until stable).
    fn watch(&mut self, interval: &Interval) -> bool {
        let mut requests = 0;
        for op in &interval.ops {
            let measured = &op[Phase::Measure.index()];
            requests += measured.total();
            // Both histograms resize as needed: adding cannot fail.
            let _ = self.service_ns.add(&measured.service_ns);
        }
        // An interval that began in the warmup holds part of it; the last one is shorter.
        let whole = interval.start_ns >= self.warmup_ns && interval.length_ns == self.interval_ns;
        if !whole || self.stable {
            return false;
        }
        self.rates_per_s
            .push(requests as f64 / (interval.length_ns as f64 / 1e9));
        let judged = self.rule.judge(&self.rates_per_s);
        self.last = Some(judged);
        if self.until_stable && judged.stable {
            self.stable = true;
            self.inner.note(&format!(
                "  stable after {} intervals: throughput ±{:.2}% (standard error of the mean), \
                 drift {:+.2}%; ending the step",
                self.rates_per_s.len(),
                judged.relative_error.unwrap_or(0.0) * 100.0,
                judged.drift.unwrap_or(0.0) * 100.0
            ));
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interval(index: u64, requests: u64) -> Interval {
        let mut stats = crate::metrics::OpHistograms::default();
        for _ in 0..requests {
            stats.record_ok(1_000_000, 1_000_000);
        }
        Interval {
            index,
            start_ns: index * 1_000_000_000,
            length_ns: 1_000_000_000,
            ops: vec![[crate::metrics::OpHistograms::default(), stats]],
            hiccups: None,
            backlog: 0,
            in_flight: 0,
        }
    }

    #[test]
    fn the_watch_ends_a_step_once_stable_and_skips_the_warmup() {
        let mut quiet = crate::run::Quiet;
        let mut watch = StepWatch {
            inner: &mut quiet,
            rule: StabilityRule {
                target: 0.02,
                min_intervals: 4,
            },
            until_stable: true,
            interval_ns: 1_000_000_000,
            warmup_ns: 1_500_000_000,
            rates_per_s: Vec::new(),
            service_ns: new_histogram(),
            last: None,
            stable: false,
        };
        // Intervals 0 and 1 began in the warmup.
        assert!(!watch.watch(&interval(0, 5)));
        assert!(!watch.watch(&interval(1, 50)));
        assert!(watch.rates_per_s.is_empty());
        for i in 2..5 {
            assert!(!watch.watch(&interval(i, 100 + i)));
        }
        assert!(watch.watch(&interval(5, 101)));
        assert_eq!(watch.rates_per_s, [102.0, 103.0, 104.0, 101.0]);
        // Answers after the end still count in the latencies, but not as intervals.
        assert!(!watch.watch(&interval(6, 10)));
        assert_eq!(watch.rates_per_s.len(), 4);
        assert_eq!(watch.service_ns.len(), 5 + 50 + 102 + 103 + 104 + 101 + 10);
    }
}
