//! `headroom capacity`: one search ([`search`]), a search resumed, or a configuration
//! matrix ([`matrix`]: one search per configuration, then their comparison).

pub mod matrix;

use std::process::ExitCode;

use super::settings;
use super::terminal::start_live;
use crate::capacity::settings::SearchSettings;
use crate::capacity::Store;
use crate::catalogue::{CAPACITY_JSONL, MATRIX_JSON, REPORT_HTML, SEARCH_JSON};
use crate::cli::CapacityArgs;
use crate::live::{Labels, Live};

use super::settings::search_settings;
use super::terminal::search;

/// Runs `headroom capacity`.
pub fn run(args: CapacityArgs) -> anyhow::Result<ExitCode> {
    let credentials = settings::credentials(&args.connection)?;
    let live = watch_live(&args)?;
    let live = live.as_ref();
    if let Some(dir) = args
        .resume
        .as_deref()
        .filter(|d| d.join(MATRIX_JSON).exists())
    {
        let code = matrix::resume(dir, credentials, live);
        return end_live(live, code);
    }
    if !args.matrix.is_empty() {
        let code = matrix::run(&args, credentials, live);
        return end_live(live, code);
    }
    // What a single search's cost is checked and priced by (a matrix prices its own).
    let price = single_search_price(&args)?;
    // A new search's directory, taken back should the search not start.
    let mut fresh_out = None;
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
            settings::with_client_cores(
                &mut config.run,
                args.client.client_cpus.as_ref(),
                &cluster_dir,
            )?;
            let out = args.output.out.clone().unwrap_or_else(|| {
                crate::output_dir::default_out_dir(&format!(
                    "capacity-{}",
                    config.run.workload.name
                ))
            });
            crate::output_dir::claim(&out, args.output.force, crate::output_dir::A_RUNS_LEFTOVERS)?;
            let store = Store::create(&out, serde_json::to_value(&config)?)?;
            fresh_out = Some(out);
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
    let result = search(&config, store, credentials, None, live).inspect_err(|e| {
        // Refused (the user's to mend: no cluster there, a schema it cannot take) before its
        // probe or first trial finished: nothing of it stays to lock --out, as with a run
        // refused before it started. A failure of ours keeps its capacity.json, which says
        // what failed.
        let refused = crate::commands::exit::exit_code_for(e) == crate::commands::exit::EXIT_USAGE;
        if let Some(out) = fresh_out.as_ref().filter(|_| refused) {
            let records = out.join(CAPACITY_JSONL);
            if std::fs::metadata(&records).map_or(true, |m| m.len() == 0) {
                crate::output_dir::withdraw(out, &format!("The search did not start: {e:#}"));
            }
        }
    });
    let code = result.map(|(status, outcome, _)| {
        if let Some((per_hour, target)) = price {
            print_cost(
                config.nodes.unwrap_or(1),
                per_hour,
                outcome.capacity_per_s,
                target,
            );
        }
        crate::commands::exit::of_search(status, outcome.capacity_per_s, outcome.data.as_ref())
    });
    end_live(live, code)
}

/// Starts the live view `--metrics-listen`, `--metrics-push` and `--live` ask for, bound
/// before anything is written: its name is `--label`, else the directory's.
fn watch_live(args: &CapacityArgs) -> anyhow::Result<Option<Live>> {
    let out = args.resume.clone().or_else(|| args.output.out.clone());
    let run = args
        .label
        .clone()
        .or_else(|| {
            out.as_ref()
                .and_then(|o| o.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "capacity".to_string());
    let labels = Labels {
        run,
        workload: args
            .workload
            .name
            .clone()
            .unwrap_or_else(|| "search".to_string()),
        worker: "single".to_string(),
    };
    let live = settings::live_settings(&args.live, &labels, 0)?;
    start_live(live, labels, true)
}

/// Tells the live view how the command ended, then lets it go.
fn end_live(live: Option<&Live>, code: anyhow::Result<ExitCode>) -> anyhow::Result<ExitCode> {
    if let Some(live) = live {
        let sentence = match &code {
            Ok(_) => "The search has ended.".to_string(),
            Err(e) => format!("The search failed: {e:#}"),
        };
        let report = live.state().runs.first().and_then(|r| r.dir.clone());
        let report = report.as_deref().and_then(search_report);
        live.end(sentence, report.as_deref(), false, code.is_err());
    }
    code
}

/// The report of the matrix or search a trial directory belongs to
/// (`SEARCH/trials/rate-.../`).
fn search_report(trial: &std::path::Path) -> Option<std::path::PathBuf> {
    let with = |file: &str| {
        trial
            .ancestors()
            .find(|d| d.join(REPORT_HTML).is_file() && d.join(file).is_file())
            .map(|d| d.join(REPORT_HTML))
    };
    with(MATRIX_JSON).or_else(|| with(SEARCH_JSON))
}

/// A single search's `--node-price` and `--target-load`, checked: one price for its one
/// configuration (a price per configuration label is for `--matrix`).
fn single_search_price(args: &CapacityArgs) -> anyhow::Result<Option<(f64, Option<f64>)>> {
    let options = crate::commands::settings::compare_options(&args.cost)?;
    if options.size_for == crate::compare::cost::SizeFor::Degraded {
        return Err(crate::usage::usage_error(
            "--size-for degraded prices a configuration by its twin searched with a node down: \
             a single search has none. Search both with --matrix degraded=0,1, or price the \
             degraded search itself (--degraded 1 --node-price ...), or compare the two searches \
             with `headroom compare HEALTHY DEGRADED --size-for degraded`",
        ));
    }
    if let Some(labelled) = options.prices.iter().find(|p| p.label.is_some()) {
        return Err(crate::usage::usage_error(format!(
            "--node-price {}={}/h prices one configuration of a --matrix by its label; a single \
             search takes one price, e.g. --node-price 0.576/h",
            labelled.label.as_deref().unwrap_or_default(),
            labelled.per_hour
        )));
    }
    if options.prices.len() > 1 {
        return Err(crate::usage::usage_error(
            "--node-price is given twice: a single search takes one price",
        ));
    }
    Ok(options
        .prices
        .first()
        .map(|p| (p.per_hour, options.target_per_s)))
}

/// The search's cost, as `compare` would price it: the tested cluster per hour, capacity
/// per dollar-hour and, with a target load, the nodes and the yearly cost it takes.
fn print_cost(nodes: u32, per_hour: f64, capacity_per_s: Option<f64>, target: Option<f64>) {
    let cost = crate::compare::cost::cost(nodes, per_hour, capacity_per_s, target);
    let per_dollar_hour =
        cost.capacity_per_dollar_hour
            .map_or("no capacity to price".to_string(), |c| {
                format!(
                    "{} requests/s per dollar-hour",
                    crate::format::format_rate(c)
                )
            });
    println!(
        "Cost: {} node(s) at ${:.3}/h each, ${:.3}/h for the cluster; {per_dollar_hour}.",
        cost.nodes, cost.node_price_per_hour, cost.cluster_per_hour
    );
    if let Some(target) = &cost.target {
        match (target.nodes, target.per_year) {
            (Some(n), Some(per_year)) => println!(
                "To carry {}/s at the SLA: {n} node(s), ${per_year:.0} a year. {}",
                crate::format::format_rate(target.load_per_s),
                crate::compare::cost::ASSUMPTIONS
            ),
            _ => println!(
                "To carry {}/s: no capacity was found to size it by.",
                crate::format::format_rate(target.load_per_s)
            ),
        }
    }
}
