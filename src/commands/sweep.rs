//! `headroom sweep`: flags into a sweep's settings, the sweep itself
//! ([`crate::sweep::live::sweep`]) with the terminal watching every step, its table as steps
//! finish, and the report.

use crate::run::template::RunTemplate;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use super::settings;
use super::terminal::{live_labels, start_live, stop_on_ctrl_c_or_term, write_report, Terminal};
use crate::cli::SweepArgs;
use crate::engine::LoadMode;
use crate::live::Live;
use crate::run::RunObserver;
use crate::stop::StopSignal;
use crate::sweep::live::{SweepContext, SweepObserver};
use crate::sweep::settings::SweepSettings;
use crate::sweep::{table, Ladder, StepRecord, SweepFile, SweepStatus, SweepStop};
use crate::usage::{usage_error, UsageError};

/// Resolves and checks the flags of `headroom sweep`; every error here is the user's.
pub fn sweep_settings(args: &SweepArgs) -> anyhow::Result<SweepSettings> {
    let ladder = Ladder::parse(&args.concurrency)
        .map_err(|e| UsageError::new(format!("--concurrency: {e}")))?;
    let stable_error = args.stable_error;
    let fmt = |d: Duration| humantime::format_duration(d).to_string();
    if args.step_min > args.step_max {
        return Err(usage_error(format!(
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
        return Err(usage_error(format!(
            "{flag} {} is too short: a step needs at least two intervals of {} ({})",
            fmt(measured),
            fmt(args.client.interval),
            fmt(shortest)
        )));
    }
    let duration = args.step_duration.unwrap_or(args.step_max);
    let mut workload = args.workload.clone();
    workload.op_mix = args.ops.clone().map(|m| m.0);
    let mut run = settings::settings(
        &workload,
        &args.connection,
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
    if let Some(&most) = ladder.0.iter().max() {
        // Every step is a run of its own; the one with the most in flight decides.
        let mut largest = run.clone();
        largest.mode = LoadMode::Closed { concurrency: most };
        settings::check_in_flight(&largest)?;
    }
    Ok(SweepSettings {
        run: RunTemplate::new(run),
        concurrency: args.concurrency.clone(),
        concurrencies: ladder.0,
        step_duration_s: args.step_duration.map(|d| d.as_secs_f64()),
        stable_error,
        step_min_s: args.step_min.as_secs_f64(),
        step_max_s: args.step_max.as_secs_f64(),
        warmup_s: args.warmup.as_secs_f64(),
    })
}

/// Runs `headroom sweep`.
pub fn run(args: SweepArgs) -> anyhow::Result<ExitCode> {
    let mut config = sweep_settings(&args)?;
    let cluster_dir = settings::local_cluster_dir();
    let credentials = settings::run_credentials(&args.connection, &cluster_dir, &config.run.hosts)?;
    settings::with_cluster_tls(&mut config.run, &cluster_dir);
    settings::with_client_cores(
        &mut config.run,
        args.client.client_cpus.as_ref(),
        &cluster_dir,
    )?;
    let out = args.output.out.clone().unwrap_or_else(|| {
        crate::output_dir::default_out_dir(&format!("sweep-{}", config.run.workload.name))
    });
    let labels = live_labels(None, &out, &config.run);
    let live = settings::live_settings(&args.live, &labels, 0)?;
    crate::output_dir::claim(&out, args.output.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
    let live = start_live(live, labels, true)?;
    let file = sweep(&config, &out, credentials, live.as_ref());
    if let Some(live) = &live {
        let (sentence, report) = match &file {
            Ok(_) => (
                "The sweep has ended.".to_string(),
                Some(out.join(crate::catalogue::REPORT_HTML)),
            ),
            Err(e) => (format!("The sweep failed: {e:#}"), None),
        };
        let interrupted = matches!(&file, Ok(f) if f.status == SweepStatus::Interrupted);
        live.end(sentence, report.as_deref(), interrupted, file.is_err());
    }
    let file = file.inspect_err(|e| {
        // Refused before its first step finished: nothing of it stays to lock --out.
        let finished = crate::sweep::record::SweepFile::read(&out).is_ok_and(|f| {
            f.steps
                .iter()
                .any(|s| s.end != crate::sweep::record::StepEnd::Failed)
        });
        if !finished {
            crate::output_dir::withdraw(&out, &format!("The sweep did not start: {e:#}"));
        }
    })?;
    Ok(match file.status {
        SweepStatus::Interrupted => ExitCode::from(crate::commands::exit::EXIT_INTERRUPTED),
        SweepStatus::Failed => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

/// The terminal, for a sweep: its steps' runs, a header per step and the table as steps
/// finish.
struct SweepTerminal<'a>(&'a mut dyn RunObserver);

impl SweepObserver for SweepTerminal<'_> {
    fn runs(&mut self) -> &mut dyn RunObserver {
        &mut *self.0
    }

    fn step(&mut self, index: usize, total: usize, concurrency: usize) {
        println!(
            "\n== Step {} of at most {total}: {concurrency} requests in flight ==",
            index + 1
        );
    }

    fn step_done(&mut self, earlier: &[StepRecord], step: &StepRecord) {
        println!("\n{}", table::render(earlier));
        println!("{}", table::row(step));
    }
}

/// Runs a whole sweep into `out`, printing each step's line as it finishes; returns
/// sweep.json as written last.
pub fn sweep(
    config: &SweepSettings,
    out: &Path,
    credentials: Option<(String, String)>,
    live: Option<&Live>,
) -> anyhow::Result<SweepFile> {
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
    // Before the runtime starts its threads: they inherit the binding.
    settings::bind_client(&config.run)?;
    let runtime = crate::run::runtime(crate::run::policy::control_threads(&config.run))?;
    let stop = StopSignal::new();
    stop_on_ctrl_c_or_term(&runtime, &stop);
    let is_usage = |e: &anyhow::Error| super::exit::exit_code_for(e) == super::exit::EXIT_USAGE;
    let context = SweepContext {
        runtime: &runtime,
        stop,
        credentials,
        is_usage: &is_usage,
    };
    let mut terminal = Terminal::new();
    let mut watched;
    let runs: &mut dyn RunObserver = match live {
        Some(live) => {
            watched = live.watch(&mut terminal);
            &mut watched
        }
        None => &mut terminal,
    };
    let file = crate::sweep::live::sweep(config, out, context, &mut SweepTerminal(runs));
    runtime.shutdown_timeout(Duration::from_secs(1));
    let file = file?;
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
            crate::format::format_rate(best.achieved_per_s),
            best.concurrency
        );
    }
    write_report(out);
    println!(
        "Files: {} (sweep.json, one run directory per step under steps/)",
        out.display()
    );
    Ok(file)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    fn config(args: &[&str]) -> Result<SweepSettings, String> {
        let mut argv = vec!["headroom", "sweep", "keyvalue"];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        let Command::Sweep(args) = cli.command else {
            panic!("not sweep")
        };
        sweep_settings(&args).map_err(|e| e.to_string())
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
}
