//! `headroom run`: flags into settings ([`super::settings`]), the library run
//! ([`crate::run::execute`]) with the terminal watching it ([`terminal`]), the report, and
//! the exit code.

pub mod terminal;

use std::path::Path;
use std::process::ExitCode;

use crate::commands::exit::{EXIT_INTERRUPTED, EXIT_NO_VERDICT, EXIT_SLA_FAILED};
use std::sync::Arc;
use std::time::Duration;

use crate::cli::RunArgs;
use crate::engine::StopReason;
use crate::metrics::server_pauses::PauseSource;
use crate::results::summary::RunSummary;
use crate::run::{self, RunContext, RunOutcome};
use crate::sla::Judgement;
use crate::stop::StopSignal;

use super::settings;

pub use terminal::Terminal;

/// Runs `headroom run`.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let cluster_dir = args
        .cluster_dir
        .clone()
        .unwrap_or_else(crate::cluster::default_dir);
    let mut config = match &args.fleet.config {
        Some(file) => settings::from_config_file(file, args.phase)?,
        None => {
            let mut config =
                settings::with_maintenance(settings::run_settings(&args)?, &args.maintenance)?;
            config.sla =
                settings::sla_settings(args.sla.terms.as_deref(), args.sla.window, &config)?;
            settings::with_cluster_tls(&mut config, &cluster_dir);
            config
        }
    };
    settings::with_worker(&mut config, &args.fleet)?;
    let credentials = settings::run_credentials(&args.connection, &cluster_dir, &config.hosts)?;
    let pauses = PauseSource::Discover(cluster_dir);
    if let Some(maintenance) = &config.maintenance {
        // The nodes --during acts on are known before anything connects: a plan that has
        // none is the user's to mend, with nothing written.
        crate::maintenance::targets_for(maintenance, &pauses, &config.hosts)?;
    }
    let out = args
        .output
        .out
        .clone()
        .unwrap_or_else(|| crate::output_dir::default_out_dir(&config.workload.name));
    crate::output_dir::claim(&out, args.output.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
    let runtime = run::runtime(config.control_threads())?;
    let stop = StopSignal::new();
    stop_on_ctrl_c_or_term(&runtime, &stop);
    let context = RunContext {
        out: &out,
        credentials,
        stop: stop.clone(),
        populate: true,
        pauses: &pauses,
    };
    let result = runtime.block_on(run::execute(&config, &context, &mut Terminal::new()));
    // A worker may still wait towards a request that will never be sent.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(match result? {
        RunOutcome::StoppedDuringPopulate => ExitCode::from(EXIT_INTERRUPTED),
        RunOutcome::LoadedOnly => ExitCode::SUCCESS,
        RunOutcome::Finished(summary) => {
            write_report(&out);
            exit_code_of(&summary)
        }
    })
}

/// Gives `stop` on Ctrl-C or SIGTERM, saying so, from a task of `runtime`.
pub fn stop_on_ctrl_c_or_term(runtime: &tokio::runtime::Runtime, stop: &Arc<StopSignal>) {
    let stop = stop.clone();
    runtime.spawn(async move {
        crate::stop::ctrl_c_or_term().await;
        eprintln!("\nStopping: no new requests; waiting for those in flight...");
        stop.trigger();
    });
}

/// Writes DIR/report.html for a run or search directory; a failure is reported, not fatal:
/// the run's own files are complete without it.
pub fn write_report(dir: &Path) {
    let path = dir.join("report.html");
    match crate::report::write_report(&[dir.to_path_buf()], &path) {
        Ok(()) => println!("Report: {}", path.display()),
        Err(e) => eprintln!("Warning: could not write {}: {e:#}", path.display()),
    }
}

/// The exit code for a run that ended this way.
pub fn exit_code(stop: StopReason) -> ExitCode {
    match stop {
        StopReason::Completed => ExitCode::SUCCESS,
        StopReason::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
        StopReason::AllRequestsFailing => ExitCode::from(1),
    }
}

/// The exit code of a finished run: [`exit_code`] of how it stopped; for a completed run,
/// [`EXIT_NO_VERDICT`] without a valid measurement or without anything to judge its SLA by,
/// [`EXIT_SLA_FAILED`] when its SLA failed, 0 otherwise.
pub fn exit_code_of(summary: &RunSummary) -> ExitCode {
    if summary.stop != StopReason::Completed {
        return exit_code(summary.stop);
    }
    if !summary.is_valid() {
        return ExitCode::from(EXIT_NO_VERDICT);
    }
    match summary.sla.as_ref().map(|s| s.verdict.judgement()) {
        Some(Judgement::Fail) => ExitCode::from(EXIT_SLA_FAILED),
        Some(Judgement::NoVerdict(_)) => ExitCode::from(EXIT_NO_VERDICT),
        Some(Judgement::Pass) | None => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sla::{ClientFigures, Validity};

    #[test]
    fn the_exit_code_says_pass_fail_or_no_verdict() {
        let text =
            std::fs::read_to_string(crate::fixtures::run_fixture().join("summary.json")).unwrap();
        let mut summary: RunSummary = serde_json::from_str(&text).unwrap();
        let code = |s: &RunSummary| format!("{:?}", exit_code_of(s));
        assert!(summary.sla.is_some(), "the fixture has an SLA");
        let verdict = &mut summary.sla.as_mut().unwrap().verdict;
        verdict.failing.clear();
        verdict.windows = verdict.windows.max(1);
        summary.validity = None;
        assert_eq!(code(&summary), format!("{:?}", ExitCode::SUCCESS));
        // A term that covered no request: nothing to judge it by.
        let verdict = &mut summary.sla.as_mut().unwrap().verdict;
        verdict.worst[0].requests = Some(0);
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_NO_VERDICT))
        );
        let verdict = &mut summary.sla.as_mut().unwrap().verdict;
        verdict.worst[0].requests = None;
        verdict.failing.push(crate::sla::WindowVerdict {
            index: 0,
            start_ns: 0,
            length_ns: 1_000_000_000,
            pass: false,
            outcomes: Vec::new(),
        });
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_SLA_FAILED))
        );
        let figures = ClientFigures {
            threads: 1,
            cpu_share_of_threads: 1.0,
            wait_p99_ms: 900.0,
            wait_p999_ms: 900.0,
            wait_max_ms: 900.0,
            lag_limit_ms: 10.0,
            hiccup_p999_ms: 0.0,
            hiccup_max_ms: 0.0,
            max_backlog: 0,
            unsent: 10.0,
            unsent_held: false,
            limit_waits: 0,
            late_sends: 0,
            measured_requests: 100,
            client_decided_windows: 0,
        };
        summary.validity = Some(Validity::decide(figures, true));
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_NO_VERDICT))
        );
        summary.stop = StopReason::Interrupted;
        assert_eq!(
            code(&summary),
            format!("{:?}", ExitCode::from(EXIT_INTERRUPTED))
        );
    }
}
