//! `headroom capacity`: one search ([`search`]), a search resumed, or a configuration
//! matrix ([`matrix`]: one search per configuration, then their comparison).

pub mod matrix;
pub mod search;

use std::process::ExitCode;

use super::settings;
use crate::capacity::settings::SearchSettings;
use crate::capacity::Store;
use crate::cli::CapacityArgs;
use crate::compare::matrix::MATRIX_FILE;

pub use search::{search, search_settings};

/// Runs `headroom capacity`.
pub fn run(args: CapacityArgs) -> anyhow::Result<ExitCode> {
    let credentials = settings::credentials(&args.connection)?;
    if let Some(dir) = args
        .resume
        .as_deref()
        .filter(|d| d.join(MATRIX_FILE).exists())
    {
        return matrix::resume(dir, credentials);
    }
    if !args.matrix.is_empty() {
        return matrix::run(&args, credentials);
    }
    let (config, store) = match &args.resume {
        Some(dir) => {
            // The directory given is the user's input: one that holds no search to resume
            // is a usage error.
            let (store, stored) = Store::resume(dir)
                .map_err(|e| crate::usage::UsageError::new(format!("--resume: {e:#}")))?;
            let config: SearchSettings = serde_json::from_value(stored).map_err(|e| {
                crate::usage::UsageError::new(format!(
                    "--resume: the search's settings in {} cannot be read: {}",
                    dir.display(),
                    crate::usage::cut(&e.to_string(), 200)
                ))
            })?;
            println!(
                "Resuming the search in {}: {} trials done.",
                dir.display(),
                store.records().len()
            );
            (config, store)
        }
        None => {
            let mut config = search_settings(&args)?;
            let cluster_dir = args
                .cluster_dir
                .clone()
                .unwrap_or_else(settings::local_cluster_dir);
            settings::with_cluster_tls(&mut config.run, &cluster_dir);
            let out = args.output.out.clone().unwrap_or_else(|| {
                crate::output_dir::default_out_dir(&format!(
                    "capacity-{}",
                    config.run.workload.name
                ))
            });
            crate::output_dir::claim(&out, args.output.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
            let store = Store::create(&out, serde_json::to_value(&config)?)?;
            (config, store)
        }
    };
    let credentials = credentials.or_else(|| {
        let dir = config.cluster_dir.clone();
        settings::cluster_credentials(
            &dir.unwrap_or_else(settings::local_cluster_dir),
            &config.run.hosts,
        )
    });
    let (status, outcome) = search(&config, store, credentials, None)?;
    Ok(crate::commands::exit::of_search(
        status,
        outcome.capacity_per_s,
    ))
}
