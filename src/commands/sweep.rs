//! `headroom sweep`: closed-loop steps at a growing concurrency until the throughput stops
//! improving. The rules (ladder, stability, stop) are [`crate::sweep`]; this file runs each
//! step as a full `run` in its own directory, in one async runtime, ends a step once its
//! throughput is stable, and rewrites sweep.json after every step and on Ctrl-C.

use std::fs;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::capacity::parse_fraction;
use super::run::{self, Executed, IntervalWatch, RunConfig, StopSignal};
use crate::cli::SweepArgs;
use crate::engine::{Interval, LoadMode, StopReason};
use crate::metrics::{new_histogram, Phase};
use crate::report::summary::{Latency, RunSummary};
use crate::sweep::{
    stop_rule, table, Ladder, Stability, StabilityRule, StepEnd, StepRecord, SweepFile,
    SweepStatus, SweepStop,
};
use crate::workload::builtin::WorkloadError;

/// Everything that decides what a sweep does, stored in sweep.json as its settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepConfig {
    /// Each step's run configuration; the concurrency, warmup and duration are set per step.
    pub run: RunConfig,
    /// `--concurrency` as given.
    pub concurrency: String,
    /// The concurrencies it gives, in order.
    pub concurrencies: Vec<usize>,
    /// `--step-duration`: each step's fixed measured seconds, instead of until stable.
    pub step_duration_s: Option<f64>,
    /// `--stable-error`, as a fraction.
    pub stable_error: f64,
    /// The shortest measured part of a step run until stable, seconds.
    pub step_min_s: f64,
    /// The longest measured part of a step run until stable, seconds.
    pub step_max_s: f64,
    /// Warmup of each step, seconds.
    pub warmup_s: f64,
}

impl SweepConfig {
    /// Resolves and checks the flags of `headroom sweep`; every error here is the user's.
    pub fn from_args(args: &SweepArgs) -> Result<SweepConfig, WorkloadError> {
        let ladder = Ladder::parse(&args.concurrency)
            .map_err(|e| WorkloadError::Invalid(format!("--concurrency: {e}")))?;
        let stable_error = parse_fraction("--stable-error", &args.stable_error)?;
        let fmt = |d: Duration| humantime::format_duration(d).to_string();
        if args.step_min > args.step_max {
            return Err(WorkloadError::Invalid(format!(
                "--step-min {} is longer than --step-max {}",
                fmt(args.step_min),
                fmt(args.step_max)
            )));
        }
        // The stability rule needs a few whole intervals to judge.
        let shortest = args.client.interval * 2;
        let measured = args.step_duration.unwrap_or(args.step_min);
        let flag = if args.step_duration.is_some() {
            "--step-duration"
        } else {
            "--step-min"
        };
        if measured < shortest {
            return Err(WorkloadError::Invalid(format!(
                "{flag} {} is too short: a step needs at least two intervals of {} ({})",
                fmt(measured),
                fmt(args.client.interval),
                fmt(shortest)
            )));
        }
        let duration = args.step_duration.unwrap_or(args.step_max);
        let mut workload = args.workload.clone();
        workload.op_mix = args.ops.clone().map(|m| m.0);
        let mut run = RunConfig::new(
            &workload,
            &args.client,
            LoadMode::Closed {
                concurrency: ladder.0[0],
            },
            args.warmup,
            Some(duration),
            None,
        )?;
        // Steps are many: Cassandra's histograms over CQL only, no nodetool JVM per step.
        run.nodetool_figures = false;
        Ok(SweepConfig {
            run,
            concurrency: args.concurrency.clone(),
            concurrencies: ladder.0,
            step_duration_s: args.step_duration.map(|d| d.as_secs_f64()),
            stable_error,
            step_min_s: args.step_min.as_secs_f64(),
            step_max_s: args.step_max.as_secs_f64(),
            warmup_s: args.warmup.as_secs_f64(),
        })
    }

    /// The stability rule of steps run until stable.
    pub fn stability(&self) -> StabilityRule {
        StabilityRule {
            target: self.stable_error,
            min_intervals: (self.step_min_s / self.run.interval_s).round() as usize,
        }
    }

    /// How each step is measured, in words.
    fn describe_steps(&self) -> String {
        match self.step_duration_s {
            Some(d) => format!("{} s warmup + {d} s each", self.warmup_s),
            None => format!(
                "{} s warmup + until the throughput is stable to ±{:.1}% ({}-{} s)",
                self.warmup_s,
                self.stable_error * 100.0,
                self.step_min_s,
                self.step_max_s
            ),
        }
    }
}

/// Runs `headroom sweep`.
pub fn run(args: SweepArgs) -> anyhow::Result<ExitCode> {
    let config = SweepConfig::from_args(&args)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| run::default_out_dir(&format!("sweep-{}", config.run.workload.name)));
    crate::output_dir::claim(&out, args.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
    let file = sweep(&config, &out, run::credentials(&args.client))?;
    Ok(match file.status {
        SweepStatus::Interrupted => ExitCode::from(130),
        SweepStatus::Failed => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

/// Runs a whole sweep into `out`, printing each step's line as it finishes; returns
/// sweep.json as written last.
pub fn sweep(
    config: &SweepConfig,
    out: &Path,
    credentials: Option<(String, String)>,
) -> anyhow::Result<SweepFile> {
    fs::create_dir_all(out)?;
    let list: Vec<String> = config.concurrencies.iter().map(|c| c.to_string()).collect();
    println!(
        "Concurrency sweep of {} (closed loop): {} requests in flight, steps of {}.",
        config.run.workload.name,
        list.join(", "),
        config.describe_steps()
    );
    println!(
        "It stops when the throughput stops improving (average over the last 3 steps ≤ 0%, \
         or over the last 5 below {:.1}%). Results: {}",
        config.stable_error * 100.0,
        out.display()
    );
    let mut file = SweepFile {
        headroom_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: config.run.workload.name.clone(),
        latency_kind: LoadMode::Closed { concurrency: 1 }
            .latency_kind()
            .to_string(),
        settings: serde_json::to_value(config)?,
        status: SweepStatus::Running,
        stop: None,
        steps: Vec::new(),
    };
    file.write(out)?;

    let runtime = run::runtime(config.run.threads)?;
    let stop = StopSignal::new();
    runtime.spawn(stop.clone().on_ctrl_c_or_term());
    let total = config.concurrencies.len();
    for (i, &concurrency) in config.concurrencies.iter().enumerate() {
        if stop.is_set() {
            file.stop = Some(SweepStop::Interrupted);
            break;
        }
        println!(
            "\n== Step {} of at most {total}: {concurrency} requests in flight ==",
            i + 1
        );
        let (step, error) = run_step(
            config,
            out,
            &runtime,
            &stop,
            credentials.clone(),
            concurrency,
            i == 0,
        );
        if let Some(error) = error.filter(|e| i == 0 && crate::exit_code_for(e) == 2) {
            // The first step could not start because of the command line (an unreachable
            // contact point, a table with other columns): say so as `run` does.
            runtime.shutdown_timeout(Duration::from_secs(1));
            file.steps.push(step);
            file.status = SweepStatus::Failed;
            file.stop = Some(SweepStop::StepFailed {
                concurrency,
                error: format!("{error:#}"),
            });
            file.write(out)?;
            return Err(error);
        }
        println!("\n{}", table::render(&file.steps));
        file.steps.push(step.clone());
        println!("{}", table::row(&step));
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
    runtime.shutdown_timeout(Duration::from_secs(1));
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

    println!(
        "\nSweep of {}, {} steps; stopped: {}.\n",
        file.workload,
        file.steps.len(),
        file.stop
            .as_ref()
            .map(SweepStop::describe)
            .unwrap_or_default()
    );
    println!("{}", table::render(&file.steps));
    if let Some(best) = file
        .complete_steps()
        .max_by(|a, b| a.achieved_per_s.total_cmp(&b.achieved_per_s))
    {
        println!(
            "\nHighest throughput: {}/s with {} requests in flight.",
            crate::capacity::table::format_rate(best.achieved_per_s),
            best.concurrency
        );
    }
    run::write_report(out);
    println!(
        "Files: {} (sweep.json, one run directory per step under steps/)",
        out.display()
    );
    Ok(file)
}

/// Runs one step and makes its record; a step that cannot run is a failed record (with the
/// error beside it), so that the sweep keeps what it has.
fn run_step(
    config: &SweepConfig,
    out: &Path,
    runtime: &tokio::runtime::Runtime,
    stop: &Arc<StopSignal>,
    credentials: Option<(String, String)>,
    concurrency: usize,
    populate: bool,
) -> (StepRecord, Option<anyhow::Error>) {
    let mut run_config = config.run.clone();
    run_config.mode = LoadMode::Closed { concurrency };
    run_config.warmup_s = config.warmup_s;
    run_config.duration_s = Some(config.step_duration_s.unwrap_or(config.step_max_s));
    run_config.sla = None;
    let relative = format!("steps/concurrency-{concurrency}");
    let dir = out.join(&relative);
    let mut watch = StepWatch {
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
    let executed = runtime.block_on(run::execute_watched(
        &run_config,
        &dir,
        credentials,
        stop,
        populate,
        Some(&mut watch),
    ));
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
        Ok(Executed::StoppedDuringPopulate) => record.end = StepEnd::Interrupted,
        Ok(Executed::LoadedOnly) => record.error = Some("no measured run".into()),
        Ok(Executed::Finished(summary)) => fill(&mut record, &summary, &watch, config),
    }
    (record, None)
}

/// The record of a step that ran, from its summary and what its watch saw.
fn fill(record: &mut StepRecord, summary: &RunSummary, watch: &StepWatch, config: &SweepConfig) {
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

/// Watches a step's intervals: adds up the service time of every measured request, keeps
/// the throughput of each whole measured interval, and ends the step once it is stable.
struct StepWatch {
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

impl IntervalWatch for StepWatch {
    fn interval(&mut self, interval: &Interval) -> bool {
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
            println!(
                "  stable after {} intervals: throughput ±{:.2}% (standard error of the mean), \
                 drift {:+.2}%; ending the step",
                self.rates_per_s.len(),
                judged.relative_error.unwrap_or(0.0) * 100.0,
                judged.drift.unwrap_or(0.0) * 100.0
            );
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn config(args: &[&str]) -> Result<SweepConfig, String> {
        let mut argv = vec!["headroom", "sweep", "keyvalue"];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        let Command::Sweep(args) = cli.command else {
            panic!("not sweep")
        };
        SweepConfig::from_args(&args).map_err(|e| e.to_string())
    }

    #[test]
    fn flags_become_a_checked_configuration() {
        let c = config(&[]).unwrap();
        assert_eq!(c.concurrencies[0], 4);
        assert_eq!(*c.concurrencies.last().unwrap(), 778);
        assert_eq!(c.stable_error, 0.02);
        assert_eq!(c.stability().min_intervals, 30);
        assert_eq!(c.run.duration_s, Some(200.0));
        let c = config(&["--concurrency", "2,4", "--step-duration", "4s"]).unwrap();
        assert_eq!(c.concurrencies, [2, 4]);
        assert_eq!(c.run.duration_s, Some(4.0));
        assert_eq!(c.step_duration_s, Some(4.0));

        let err = config(&["--concurrency", "64..8"]).unwrap_err();
        assert!(
            err.starts_with("--concurrency: '64..8': the range goes down"),
            "{err}"
        );
        let err = config(&["--stable-error", "200%"]).unwrap_err();
        assert!(err.contains("--stable-error"), "{err}");
        let err = config(&["--step-min", "5m"]).unwrap_err();
        assert!(
            err.contains("--step-min 5m is longer than --step-max"),
            "{err}"
        );
        let err = config(&["--step-duration", "1s"]).unwrap_err();
        assert!(err.contains("--step-duration 1s is too short"), "{err}");
    }

    fn interval(index: u64, requests: u64) -> Interval {
        let mut stats = crate::metrics::OpStats::default();
        for _ in 0..requests {
            stats.record_ok(1_000_000, 1_000_000);
        }
        Interval {
            index,
            start_ns: index * 1_000_000_000,
            length_ns: 1_000_000_000,
            ops: vec![[crate::metrics::OpStats::default(), stats]],
            hiccups: None,
            backlog: 0,
        }
    }

    #[test]
    fn the_watch_ends_a_step_once_stable_and_skips_the_warmup() {
        let mut watch = StepWatch {
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
        assert!(!watch.interval(&interval(0, 5)));
        assert!(!watch.interval(&interval(1, 50)));
        assert!(watch.rates_per_s.is_empty());
        for i in 2..5 {
            assert!(!watch.interval(&interval(i, 100 + i)));
        }
        assert!(watch.interval(&interval(5, 101)));
        assert_eq!(watch.rates_per_s, [102.0, 103.0, 104.0, 101.0]);
        // Answers after the end still count in the latencies, but not as intervals.
        assert!(!watch.interval(&interval(6, 10)));
        assert_eq!(watch.rates_per_s.len(), 4);
        assert_eq!(watch.service_ns.len(), 5 + 50 + 102 + 103 + 104 + 101 + 10);
    }
}
