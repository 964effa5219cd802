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
use super::terminal::{stop_on_ctrl_c_or_term, write_report, Terminal};

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
    crate::output_dir::claim(&out, args.output.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
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
