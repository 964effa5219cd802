//! `headroom run`: flags into settings ([`super::settings`]), the library run
//! ([`crate::run::execute`]) with the terminal watching it ([`super::terminal`]), the report, and
//! the exit code.

use std::process::ExitCode;

use crate::commands::exit::EXIT_INTERRUPTED;
use std::time::Duration;

use crate::cli::RunArgs;
use crate::cluster::NodeSource;
use crate::run::{self, RunContext, RunOutcome};
use crate::stop::StopSignal;

use super::settings;

use super::exit::exit_code_of;
use super::terminal::{ended_in_words, live_labels, start_live, stop_on_ctrl_c_or_term, write_report, Terminal};

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
            settings::with_client_cores(&mut config, args.client.client_cpus.as_ref(), &cluster_dir)?;
            config
        }
    };
    settings::with_worker(&mut config, &args.fleet)?;
    let credentials = settings::run_credentials(&args.connection, &cluster_dir, &config.hosts)?;
    let local_nodes = NodeSource::Recorded(cluster_dir);
    if let Some(maintenance) = &config.maintenance {
        // The nodes --during acts on are known before anything connects: a plan that has
        // none is the user's to mend, with nothing written.
        let local = local_nodes.resolve(&config.hosts);
        crate::maintenance::targets_for(maintenance, &local, &config.hosts)?;
    }
    let out = args
        .output
        .out
        .clone()
        .unwrap_or_else(|| crate::output_dir::default_out_dir(&config.workload.name));
    let labels = live_labels(args.label.as_deref(), &out, &config);
    let live = settings::live_settings(&args.live, &labels, 0)?;
    crate::output_dir::claim(&out, args.output.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
    let live = start_live(live, labels, false)?;
    // Before the runtime starts its threads: they inherit the binding.
    settings::bind_client(&config)?;
    let runtime = run::runtime(run::policy::control_threads(&config))?;
    let stop = StopSignal::new();
    stop_on_ctrl_c_or_term(&runtime, &stop);
    let context = RunContext {
        out: &out,
        credentials,
        stop: stop.clone(),
        populate: true,
        local_nodes: &local_nodes,
    };
    let mut terminal = Terminal::new();
    let result = match &live {
        Some(live) => runtime.block_on(run::execute(&config, &context, &mut live.watch(&mut terminal))),
        None => runtime.block_on(run::execute(&config, &context, &mut terminal)),
    };
    // A worker may still wait towards a request that will never be sent.
    runtime.shutdown_timeout(Duration::from_secs(1));
    let (code, sentence, report) = match &result {
        Err(e) => (None, format!("The run failed: {e:#}"), None),
        Ok(RunOutcome::StoppedDuringPopulate) => (
            Some(ExitCode::from(EXIT_INTERRUPTED)),
            "The run was stopped during its populate.".to_string(),
            None,
        ),
        Ok(RunOutcome::LoadedOnly) => (Some(ExitCode::SUCCESS), "The data is loaded (--phase load).".to_string(), None),
        Ok(RunOutcome::Finished(summary)) => {
            write_report(&out);
            (
                Some(exit_code_of(summary)),
                format!("The run has ended: {}.", ended_in_words(summary)),
                Some(out.join(crate::catalogue::REPORT_HTML)),
            )
        }
    };
    if let Some(live) = &live {
        live.end(sentence, report.as_deref(), stop.is_set(), result.is_err());
    }
    result?;
    Ok(code.expect("an outcome when the run did not fail"))
}
